"""Breaker pass 52 (docs/reliability.md): each case was accepted with exit 0 and a wrong or meaningless number before
the fix; each test fails on the old behaviour."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.calibrate import calibrate, run_key
from shardplan.cli import app
from shardplan.cli.calibrate import other_class, poor_fit
from shardplan.errors import ConfigError
from shardplan.inputs import build_inputs
from shardplan.loaders import load_hardware, load_model
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.records import RunRecord
from tests.test_calibrate import H100

runner = CliRunner()
BASE = dict(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=32, global_batch_tokens=None)


def _record() -> RunRecord:
    return RunRecord(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=32,
                     parallel={"dp": 8, "zero_stage": 1}, status="ok", tokens_per_s_per_device=9000.0,
                     peak_memory_bytes=60e9, source="t")


def test_repeated_records_count_as_one_configuration():
    from shardplan.calibrate import cases
    recs = [_record() for _ in range(10)]
    assert len({run_key(c) for c in cases(recs)}) == 1
    # a repeat that measured another rate is still the same configuration
    again = recs[0].model_copy(update={"tokens_per_s_per_device": 8000.0})
    assert run_key(cases([again])[0]) == run_key(cases([recs[0]])[0])
    cal = calibrate(recs, H100, framework_profile("megatron"), cross_validate=False)
    # one configuration: 1 throughput + 1 memory measurement, against the default fit's free parameters (>= 3); the
    # ten copies counted 20 measurements before, and the fit was written as a 0.0% calibration
    assert "10 record(s) of 1 distinct run configuration(s) give 2 measurement(s)" in cal.underdetermined
    assert poor_fit(cal, []) is not None


def test_megatron_flags_spelled_with_underscores_are_refused(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                      "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                      "--global-batch-size 32 --tensor_model_parallel_size 2 --bf16\n")
    r = runner.invoke(app, ["import", str(script), "--from", "megatron"])
    # read as tp = 1 (the flag dropped) before; Megatron-LM's argparse stops on it
    assert r.exit_code == 2 and "legal: --tensor-model-parallel-size" in r.output


def test_a_plan_files_unknown_training_key_or_a_near_miss_top_key_is_refused(tmp_path):
    plan = tmp_path / "q.json"
    plan.write_text(json.dumps({"parallel": {"dp": 8}, "devices": 8,
                                "training": {"seq_len": 4096, "global_batch_size": 64, "precison": "fp8-mixed"}}))
    with pytest.raises(ConfigError, match=r"training.precison is not a training field \(did you mean precision\?\)"):
        build_inputs(**{**BASE, "global_batch": 64}, plan=str(plan))  # priced in bf16, exit 0, before
    plan.write_text(json.dumps({"parallel": {"dp": 8}, "device": 16}))
    with pytest.raises(ConfigError, match=r"key 'device' is not read \(did you mean devices\?\)"):
        build_inputs(**BASE, plan=str(plan))


def test_a_measured_bus_bandwidth_above_what_the_wires_carry_is_refused(tmp_path):
    f = tmp_path / "c1.yaml"
    f.write_text(yaml.safe_dump({"base": "h100-sxm", "measured_busbw": {"AllGather": {2: 1.0e15}}}))
    # 2 nodes of 8 H100: the ring bound is min(NVLink 450 GB/s, 8 x 50 GB/s NICs) = 400 GB/s; twice that is legal
    with pytest.raises(ConfigError, match=r"legal: at most 8e\+11"):
        load_hardware(str(f))
    f.write_text(yaml.safe_dump({"base": "h100-sxm", "measured_busbw": {"AllGather": {2: 7.0e11}}}))
    from shardplan.cost.comm import table_bandwidth
    # accepted (NVLink SHARP may beat the ring), but the bandwidth priced is held at the wire bound, 400 GB/s
    assert table_bandwidth(load_hardware(str(f)), "AllGather", 2) == pytest.approx(4.0e11)


def test_a_fp32_peak_above_the_16_bit_peak_is_refused(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text(yaml.safe_dump({"base": "h100-sxm", "peak_flops_fp32": 1.0e16}))
    with pytest.raises(ConfigError, match=r"peak_flops_fp32=1e\+16 is above peak_flops_bf16=9.894e\+14"):
        load_hardware(str(f))


@pytest.mark.parametrize("framework", ["megatron", "deepspeed", "torchtitan", "nanotron"])
def test_gpu_only_frameworks_are_refused_on_a_tpu(framework):
    with pytest.raises(ConfigError, match="legal there: maxtext, paxml, jax-runtime"):
        build_inputs(**{**BASE, "hardware": "tpu-v5p"}, framework=framework)
    build_inputs(**{**BASE, "hardware": "tpu-v5p"}, framework="maxtext")  # an XLA program runs there


def test_deepep_is_refused_on_a_tpu():
    with pytest.raises(ConfigError, match="moe_dispatcher='deepep' runs on NVIDIA GPUs"):
        build_inputs(**{**BASE, "model": "mixtral-8x7b", "hardware": "tpu-v5p"}, ep=8, moe_dispatcher="deepep")


def test_a_config_whose_model_type_contradicts_its_architectures_is_refused(tmp_path):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2}
    f = tmp_path / "config.json"
    f.write_text(json.dumps(cfg))
    # priced as a 7.24B dense Llama before; transformers builds the 46.7B Mixtral from model_type
    with pytest.raises(ConfigError, match=r"model_type='mixtral' is the MixtralForCausalLM network"):
        load_model(str(f))
    f.write_text(json.dumps({**cfg, "architectures": ["MixtralForCausalLM"]}))
    assert load_model(str(f)).n_experts == 8


def test_moe_only_settings_on_a_dense_model_are_refused(tmp_path):
    f = tmp_path / "m.yaml"
    for field, value in (("expert_ffn_dim", 1024), ("n_dense_layers", 5)):
        f.write_text(yaml.safe_dump({"base": "llama-3-8b", field: value}))  # ignored silently before
        with pytest.raises(ConfigError, match=f"{field}={value} needs n_experts > 0"):
            load_model(str(f))
    # the load flags on a dense model: priced as before (Megatron-LM ignores a capacity factor there), but said
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "32",
                            "--moe-imbalance", "5", "--moe-capacity-factor", "1.25"], terminal_width=300)
    out = " ".join(r.output.split())
    assert r.exit_code == 0 and ("--moe-capacity-factor 1.25 and --moe-imbalance 5 change nothing here: llama-3-8b "
                                 "is dense") in out


def test_records_of_another_device_class_make_a_poor_fit():
    hw = HARDWARE["h100-sxm"]
    # an A100 and a TPU record against an H100 base; a CPU (no preset) is judged by the error rule instead
    assert other_class(["a100-80gb", "tpu-v5p", "cpu", "h800"], hw) == ["a100-80gb (ampere)", "tpu-v5p (tpu)"]


def test_maxtext_import_names_fp8_and_refuses_an_unknown_dtype_or_a_repeated_key(tmp_path):
    f = tmp_path / "mt.yaml"
    f.write_text("ici_fsdp_parallelism: 8\nper_device_batch_size: 2\nquantization: fp8\nmax_target_length: 2048\n")
    r = runner.invoke(app, ["import", str(f), "--from", "maxtext", "--devices", "8"])
    assert r.exit_code == 0 and "quantization='fp8': fp8 matmuls" in r.output and "int8" not in r.output
    f.write_text("ici_fsdp_parallelism: 8\nper_device_batch_size: 2\ndtype: float8\n")
    r = runner.invoke(app, ["import", str(f), "--from", "maxtext", "--devices", "8"])
    assert r.exit_code == 2 and "legal: bfloat16, float32, float16" in r.output
    f.write_text("ici_fsdp_parallelism: 4\nici_fsdp_parallelism: 8\nper_device_batch_size: 2\n")
    r = runner.invoke(app, ["import", str(f), "--from", "maxtext", "--devices", "8"])
    assert r.exit_code == 2 and "'ici_fsdp_parallelism' is given twice (line 2)" in r.output
