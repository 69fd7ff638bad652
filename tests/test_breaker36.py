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
