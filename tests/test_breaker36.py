"""Breaker pass 36: DeepSpeed's BF16_Optimizer (FrameworkProfile.zero0_bf16_optimizer) under ZeRO-0."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.memory import memory_for_stage
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.models import MODELS
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

runner = CliRunner()
LLAMA2_7B = 6_738_415_616


def _state(precision: str, pp: int = 1):
    """Model-state bytes (params, grads, optimizer) of llama-2-7b, tp=2 dp=4 (pp=1) or tp=1 dp=4 pp=2, ZeRO-0 under
    the deepspeed profile, and the parameters of the rank (elements)."""
    m = MODELS["llama-2-7b"]
    tp = 2 if pp == 1 else 1
    pc = ParallelConfig(tp=tp, dp=4, pp=pp, sp=False, zero_stage=0, microbatch_size=4, recompute="none")
    tr = TrainingSpec(seq_len=2048, global_batch_size=192, framework=framework_profile("deepspeed"),
                      precision=PRECISION_POLICIES[precision])
    mb = memory_for_stage(m, tr, validate(pc, m, tr, 8), 0)
    return mb, mb.params / 2  # bf16 weights: 2 B per parameter of the rank


def test_bf16_accumulation_without_a_pipeline_is_not_the_bf16_optimizer():
    # DeepSpeed engine.py _do_optimizer_sanity_check: bf16 weights with bf16 gradient accumulation and no pipeline
    # engine are not wrapped in BF16_Optimizer (older engines raise "Bfloat16 wrapper must use a gradient accumulation
    # type of fp32", newer ones return DDP_BFLOAT16: FP16_Optimizer in bf16 mode, fp32 master + moments unsharded).
    # Before the fix bf16-mixed (2 B gradients) was priced as a BF16_Optimizer with a 2 B buffer: 2 + 2 + 2 + 12 / 4
    # = 9 B per parameter, a configuration no DeepSpeed runs. Plain ZeRO-0: 2 (bf16) + 2 (grads) + 12 (master + Adam).
    mb, n = _state("bf16-mixed")
    assert mb.grads == pytest.approx(2 * n, rel=1e-12)
    assert mb.optimizer == pytest.approx(12 * n, rel=1e-12)
    # fp32 accumulation is BF16_Optimizer: 4 (fp32 buffer) + 2 (bf16 grads) = 6 B, 12 / dp = 3 B of state
    mb, n = _state("bf16-mixed-fp32-grads")
    assert mb.grads == pytest.approx(6 * n, rel=1e-12)
    assert mb.optimizer == pytest.approx(12 * n / 4, rel=1e-12)
    # under the pipeline engine bf16 accumulation still runs BF16_Optimizer (with a warning): 2 + 2 B of gradients,
    # the 12 B of state sharded over dp = 4
    mb, n = _state("bf16-mixed", pp=2)
    assert mb.grads == pytest.approx(4 * n, rel=1e-12)
    assert mb.optimizer == pytest.approx(12 * n / 4, rel=1e-12)


def test_cli_bf16_mixed_zero0_deepspeed_has_no_bf16_optimizer_gather():
    # the same through the CLI: no AllGather of the parameters after the step, the optimizer state unsharded
    args = ["estimate", "-m", "llama-2-7b", "-H", "a100-80gb", "-n", "8", "-s", "2048", "-b", "192", "--framework",
            "deepspeed", "--zero-stage", "0", "--tp", "2", "--mbs", "4", "--json"]
    r = runner.invoke(app, [*args, "--precision", "bf16-mixed"])
    d = json.loads(r.stdout)
    assert not [c for c in d["collectives"] if c["axis"] == "dp" and c["op"] == "AllGather"]
    rank = d["memory_bytes"]["params"] / 2
    assert d["memory_bytes"]["optimizer"] == pytest.approx(12 * rank, rel=1e-12)
    r = runner.invoke(app, [*args, "--precision", "bf16-mixed-fp32-grads"])
    d = json.loads(r.stdout)
    gathers = [c for c in d["collectives"] if c["axis"] == "dp" and c["op"] == "AllGather"]
    # 3/4 of the rank's 2 B bf16 parameters leave each of the 4 replicas
    assert [c["bytes_per_device"] for c in gathers] == [pytest.approx(0.75 * 2 * rank, rel=1e-3)]
    assert d["memory_bytes"]["params"] / 2 == pytest.approx(LLAMA2_7B / 2, rel=1e-3)


def test_deepspeed_export_writes_the_accumulation_dtype_it_was_priced_with(tmp_path):
    # engine.py get_data_types: bf16 without ZeRO accumulates in fp32 unless data_types.grad_accum_dtype says
    # otherwise. Before the fix a ZeRO-0 export wrote only "bf16": {"enabled": true}, so DeepSpeed ran fp32
    # accumulation (BF16_Optimizer) under a header priced for bf16 gradients, and bf16-mixed-fp32-grads (what that
    # file runs) was refused. Now each ZeRO-0 export says its dtype and reads back as the policy it came from.
    from shardplan.export import import_config
    base = ["export", "--to", "deepspeed", "-m", "llama-2-7b", "-H", "a100-80gb", "-n", "8", "-s", "2048", "-b", "192",
            "--tp", "2", "--mbs", "2", "--zero-stage", "0"]
    for precision, dtype in (("bf16-mixed", "bf16"), ("bf16-mixed-fp32-grads", "fp32")):
        out = tmp_path / f"{precision}.json"
        r = runner.invoke(app, [*base, "--precision", precision, "-o", str(out)])
        assert r.exit_code == 0, r.output
        cfg = json.loads(out.read_text())
        assert cfg["data_types"] == {"grad_accum_dtype": dtype} and cfg["bf16"] == {"enabled": True}
        assert import_config("deepspeed", out.read_text()).precision == precision
    # ZeRO-1 with fp32 accumulation is BF16_Optimizer too (engine.py _do_optimizer_sanity_check), priced as such: the
    # file says fp32 and reads back
    out = tmp_path / "z1.json"
    r = runner.invoke(app, [*base[:-1], "1", "--precision", "bf16-mixed-fp32-grads", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["data_types"] == {"grad_accum_dtype": "fp32"}
    assert import_config("deepspeed", out.read_text()).precision == "bf16-mixed-fp32-grads"
    # ZeRO-2 with fp32 accumulation is DeepSpeed's ZeRO optimizer with fp32 gradients: written as such, read back
    out = tmp_path / "z2.json"
    r = runner.invoke(app, [*base[:-1], "2", "--precision", "bf16-mixed-fp32-grads", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["data_types"] == {"grad_accum_dtype": "fp32"}
    assert import_config("deepspeed", out.read_text()).precision == "bf16-mixed-fp32-grads"


def test_deepspeed_import_reads_the_default_and_given_accumulation_dtype():
    # a hand-written ZeRO-0 bf16 ds_config without data_types runs DeepSpeed's default fp32 accumulation (before the
    # fix it was read as bf16-mixed); with ZeRO the default is the model's bf16; a bad dtype is exit-2 material
    from shardplan.errors import ConfigError
    from shardplan.export import import_config
    cfg = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
           "bf16": {"enabled": True}}
    zero0 = {**cfg, "zero_optimization": {"stage": 0}}
    assert import_config("deepspeed", json.dumps(zero0), 8).precision == "bf16-mixed-fp32-grads"
    assert import_config("deepspeed", json.dumps({**cfg, "zero_optimization": {"stage": 1}}), 8).precision == "bf16-mixed"
    assert import_config("deepspeed", json.dumps({**zero0, "data_types": {"grad_accum_dtype": "bf16"}}), 8
                         ).precision == "bf16-mixed"
    assert import_config("deepspeed", json.dumps({**cfg, "zero_optimization": {"stage": 2},
                                                  "data_types": {"grad_accum_dtype": "fp32"}}), 8
                         ).precision == "bf16-mixed-fp32-grads"
    for bad in ("fp16", ["fp32"], 3):
        with pytest.raises(ConfigError, match="grad_accum_dtype=.*legal: 'fp32'") as err:
            import_config("deepspeed", json.dumps({**zero0, "data_types": {"grad_accum_dtype": bad}}), 8)
        assert err.value.field == "grad_accum_dtype"
    # fp32 runs ignore the accumulation dtype as before
    assert import_config("deepspeed", json.dumps({**zero0, "bf16": {"enabled": False}}), 8).precision == "fp32"


def test_deepspeed_offloads_the_optimizer_only_with_zero():
    # DeepSpeed runtime/zero/config.py: offload_optimizer is "valid for ZeRO stage 1, 2, 3"; at ZeRO-0 the deepspeed
    # profile refuses it (exit 2 naming the legal stages) instead of pricing a host offload DeepSpeed cannot run
    base = ["estimate", "-m", "llama-2-7b", "-H", "a100-80gb", "-n", "8", "-s", "2048", "-b", "64", "--framework",
            "deepspeed", "--offload-optimizer"]
    r = runner.invoke(app, [*base, "--zero-stage", "0"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "offload_optimizer with zero_stage=0" in r.output and "1, 2, 3" in r.output
    assert runner.invoke(app, [*base, "--zero-stage", "1"]).exit_code in (0, 1)


def test_deepspeed_import_takes_the_sequence_from_the_exported_header(tmp_path):
    # a ds_config has no sequence length (the model code sets it); an exported one records the plan's in its
    # _shardplan header, and import reads it back, so `estimate --plan` of the imported plan needs no --seq-len
    out, plan = tmp_path / "ds.json", tmp_path / "plan.json"
    r = runner.invoke(app, ["export", "--to", "deepspeed", "-m", "llama-2-7b", "-H", "a100-80gb", "-n", "8", "-s", "4096",
                            "-b", "64", "--zero-stage", "1", "--recompute", "full", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["_shardplan"]["seq_len"] == 4096
    assert runner.invoke(app, ["import", str(out), "--from", "deepspeed", "-o", str(plan)]).exit_code == 0
    assert json.loads(plan.read_text())["training"]["seq_len"] == 4096
    r = runner.invoke(app, ["estimate", "-m", "llama-2-7b", "-H", "a100-80gb", "--plan", str(plan)])
    assert r.exit_code in (0, 1), r.output
