"""`shardplan bench --smoke` on the 8 simulated CPU devices (issue 10 section 3)."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.loaders import load_hardware

runner = CliRunner()


@pytest.mark.slow
def test_bench_smoke_writes_a_cluster_yaml_every_command_takes(tmp_path):
    out, js = tmp_path / "cluster.yaml", tmp_path / "bench.json"
    r = runner.invoke(app, ["bench", "--hardware", "h100-sxm", "--smoke", "-o", str(out), "--json", str(js)])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["base"] == "h100-sxm" and 0.01 <= doc["matmul_efficiency"] <= 1
    hw = load_hardware(str(out))
    assert hw.peak_flops_bf16 == load_hardware("h100-sxm").peak_flops_bf16  # inherited from the base
    meas = json.loads(js.read_text())["measurements"]
    ag = [m for m in meas if m["kind"] == "AllGather" and m["shape"] == {"n": 4, "bytes": 4096}][0]
    # nccl-tests accounting: S = 4096 B gathered over 4 devices, busbw = S / t x (4 - 1) / 4
    assert ag["achieved"] == pytest.approx(4096 / ag["seconds"] * 3 / 4)
    ar = [m for m in meas if m["kind"] == "AllReduce" and m["shape"]["n"] == 8][0]
    assert ar["achieved"] == pytest.approx(ar["shape"]["bytes"] / ar["seconds"] * 2 * 7 / 8)
    # 8 devices = the preset's scale-up domain: the one-node entry of the measured table
    assert set(doc["measured_busbw"]) == {"AllReduce", "AllGather", "ReduceScatter"}
    r = runner.invoke(app, ["estimate", "--model", "llama-3-8b", "--hardware", str(out), "--devices", "8",
                            "--seq-len", "1024", "--global-batch", "8", "--zero-stage", "3", "--json"])
    assert r.exit_code == 0, r.output


def test_fitted_fields_name_each_fields_own_rule():
    # each fitted field's source says how that field was measured (not the GEMM rule for every field):
    # a GEMM at 0.5 of peak where 0.6 was predicted -> matmul_efficiency = preset x 0.5 / 0.6; HBM copy at 0.8
    from shardplan.jax.bench import Measurement, fitted_fields
    from shardplan.presets.hardware import HARDWARE
    hw = HARDWARE["h100-sxm"]
    res = [Measurement("gemm", {"m": 4096, "n": 4096, "k": 4096}, 1e-3, 1e14, fraction=0.5, predicted_fraction=0.6),
           Measurement("hbm", {"bytes": 2**30}, 1e-3, 1e12, fraction=0.8)]
    out = fitted_fields(res, hw, 1, "cpu")
    assert out["matmul_efficiency"] == round(hw.matmul_efficiency * 0.5 / 0.6, 4) and out["hbm_efficiency"] == 0.8
    assert "GEMM grid" in out["sources"]["matmul_efficiency"] and "HBM copy" in out["sources"]["hbm_efficiency"]
    assert "GEMM" not in out["sources"]["hbm_efficiency"]


def test_fitted_fields_fit_the_gemm_model_on_a_gpu_preset():
    # GEMM timings made by the GEMM model itself with a known chip (isolated asymptote 0.72, 3 fill steps per tile,
    # Stream-K): the YAML gets those three back, and matmul_efficiency keeps the preset's end-to-end share of the
    # isolated rate: 0.59 x 0.72 / 0.73 = 0.5819
    from shardplan.cost.gemm import GemmShape, gemm_time
    from shardplan.jax.bench import Measurement, fitted_fields
    from shardplan.presets.hardware import HARDWARE
    hw = HARDWARE["h100-sxm"]
    truth = hw.model_copy(update={"matmul_efficiency": 0.72, "gemm_fill_steps": 3.0, "gemm_stream_k": True})
    shapes = [(8192, 8192, 8192), (8192, 4096, 14336), (8192, 2048, 512), (8192, 2048, 1024), (2048, 1536, 8192),
              (4096, 768, 8192), (8192, 1024, 8192), (16384, 4096, 2048)]
    res = []
    for m, n, k in shapes:
        t = gemm_time(GemmShape(m, n, k), truth).seconds
        res.append(Measurement("gemm", {"m": m, "n": n, "k": k}, t, 2 * m * n * k / t, 0.5, 0.5))
    out = fitted_fields(res, hw, 1, "gpu")
    assert out["isolated_matmul_efficiency"] == pytest.approx(0.72, abs=0.002)
    assert out["gemm_fill_steps"] == pytest.approx(3.0, abs=0.05) and out["gemm_stream_k"] is True
    assert out["matmul_efficiency"] == pytest.approx(0.59 * 0.72 / 0.73, abs=0.002)
    assert "isolated" in out["sources"]["matmul_efficiency"] and "Stream-K" in out["sources"]["gemm_stream_k"]


def test_a_smoke_file_taken_as_hardware_says_it_measured_nothing(tmp_path):
    # breaker: a `bench --smoke` YAML (sources.smoke, as bench writes it) was taken as hardware without a word;
    # a file without the mark gets no note
    smoke, real = tmp_path / "smoke.yaml", tmp_path / "real.yaml"
    smoke.write_text("base: h100-sxm\nname: h100-sxm-smoke-not-a-measurement\nsources:\n  smoke: tiny sizes\n")
    real.write_text("base: h100-sxm\nname: mine\n")
    args = ["estimate", "-m", "llama-3-8b", "-n", "8", "-s", "1024", "-b", "8", "--hardware"]
    r = runner.invoke(app, [*args, str(smoke)])
    assert r.exit_code == 0 and "written by `shardplan bench --smoke`" in " ".join(r.output.split()), r.output
    r = runner.invoke(app, [*args, str(real)])
    assert r.exit_code == 0 and "bench --smoke" not in r.output, r.output


def test_smoke_mark_in_any_case_and_for_guide(tmp_path):
    # breaker: a 'Smoke' key was not recognised and `guide` printed no note; an empty hardware name was accepted
    # ("llama-3-8b on 8 x :")
    f = tmp_path / "s.yaml"
    f.write_text("base: h100-sxm\nname: s\nsources:\n  Smoke: x\n")
    r = runner.invoke(app, ["guide", "-H", str(f), "-n", "8", "-m", "llama-3.2-1b"])
    assert r.exit_code == 0 and "written by `shardplan bench --smoke`" in " ".join(r.output.split())
    f.write_text("base: h100-sxm\nname: ''\n")
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-n", "8", "-s", "1024", "-b", "8", "-H", str(f)])
    assert r.exit_code == 2 and "name=''" in r.output
