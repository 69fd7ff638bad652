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
