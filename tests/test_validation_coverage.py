"""`validate` on plans users run beyond the documented table (issue 14, item 8): bf16 compute on
XLA:CPU, and explicit "not covered" reasons instead of a red table."""

import pytest

jax = pytest.importorskip("jax")

from shardplan.jax.train import TrainConfig  # noqa: E402
from shardplan.jax.validate import validate_plan  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

TINY = MODELS["tiny-llama"]
TR = TrainingSpec(seq_len=32, global_batch_size=16)
BF16 = TrainConfig(compute_dtype="bfloat16")


def test_bf16_tp_counts_promoted_all_reduces_at_bf16():
    # tiny-llama, dp=4 tp=2, microbatch 4 (one microbatch), bf16 compute: XLA:CPU reduces the tp
    # activations in f32 ('*_promoted' reducers); counted at bf16 they are the planner's 2-byte
    # activations; the dp gradient AllReduce runs in bf16 too (rule grads-reduced-in-compute-dtype:
    # the planner's fp32 gradient bytes x 2 / 4)
    v = validate_plan(TINY, validate(ParallelConfig(tp=2, microbatch_size=4), TINY, TR, 8), TR, BF16)
    assert v.training.precision.name == "fp32-params" and v.not_covered is None
    assert any(c.promoted for c in v.hlo) and all(e.dtype == "bf16" for c in v.hlo if c.promoted for e in c.elements)
    tp, dp = v.row("AllReduce", "tp"), v.row("AllReduce", "dp")
    assert abs(tp.planner_error) < 0.01 and tp.rules == []
    assert dp.rules == ["grads-reduced-in-compute-dtype"] and dp.expected_bytes == dp.planner_bytes / 2
    assert abs(dp.error) < 0.01 and v.ok


@pytest.mark.parametrize("kw,cfg,reason", [
    (dict(zero_stage=3, pp=2, dp=4, microbatch_size=1, schedule="gpipe"), None,
     "GPipe scan gathers each stage's weights"),
    (dict(pp=2, tp=2, dp=2, microbatch_size=1), None, "and tp=2: the runtime executes 1F1B"),
    (dict(zero_stage=2, microbatch_size=2), BF16, "ZeRO-2 with bf16 compute"),
    (dict(tp=2, sp=True, microbatch_size=4), BF16, "sequence parallelism with bf16 compute"),
    (dict(cp=2, pp=2, dp=2, microbatch_size=2, schedule="gpipe"), None, "cp > 1 with pp > 1"),
])
def test_plans_outside_the_rules_say_why(kw, cfg, reason):
    """A reason the plan alone gives is raised before the compile (NotCovered); the executed 1F1B's is known
    from the compiled program's local axes (Validation.not_covered). Priced with the jax-runtime profile, as the CLI
    does (the megatron profile refuses ZeRO-3 with pp > 1: Megatron-FSDP does not pipeline)."""
    from shardplan.errors import NotCovered
    from shardplan.presets.frameworks import JAX_RUNTIME
    tr = TR.model_copy(update={"framework": JAX_RUNTIME})  # as `shardplan validate` prices the runtime's plans
    layout = validate(ParallelConfig(**kw), TINY, tr, 8)
    try:
        v = validate_plan(TINY, layout, tr, cfg)
    except NotCovered as err:
        assert reason in str(err) and "1F1B" not in reason
    else:
        assert v.not_covered is not None and reason in v.not_covered


def test_bf16_dp_with_accumulation_reduces_fp32_once_per_step():
    # 2 microbatches: the per-step shard_map sums the fp32 gradients and all-reduces them once, at 4
    # bytes: no compute-dtype delta; bf16 working copies of weights and gradient in the temp memory
    v = validate_plan(TINY, validate(ParallelConfig(microbatch_size=1), TINY, TR, 8), TR, BF16)
    assert v.layout.microbatches == 2 and v.row("AllReduce", "dp").rules == []
    assert abs(v.row("AllReduce", "dp").error) < 0.01 and v.ok


def _xla(tr: TrainingSpec, gather: str) -> TrainingSpec:
    """``tr`` priced with the jax-runtime profile for the once-per-step gather (XLA hoists it out of the accumulation
    loop; the default megatron profile refuses it: Megatron-FSDP re-gathers every microbatch)."""
    from shardplan.presets.frameworks import JAX_RUNTIME
    return tr.model_copy(update={"framework": JAX_RUNTIME}) if gather == "per_step" else tr


@pytest.mark.parametrize("gather", ["per_microbatch", "per_step"])
def test_zero3_with_recompute_gathers_as_planned(gather):
    # FSDP over 8 ranks, 2 microbatches, full recompute: the runtime obeys zero3_gather with the
    # blocks rematerialised too (the backward's recompute reads the weights gathered for it:
    # re-gathered per microbatch, or kept from the once-per-step gather), so the plan is covered and
    # the planner's own rows are within 5 % of the compiled program
    tr = _xla(TR, gather)
    layout = validate(ParallelConfig(zero_stage=3, recompute="full", microbatch_size=1, zero3_gather=gather),
                      TINY, tr, 8)
    v = validate_plan(TINY, layout, tr)
    assert layout.microbatches == 2 and v.not_covered is None and not v.deltas
    assert all(abs(r.planner_error) <= 0.05 for r in v.rows if r.scored) and v.ok


@pytest.mark.parametrize("gather", ["per_microbatch", "per_step"])
def test_zero3_with_expert_parallelism_gathers_as_planned(gather):
    # tiny-moe with 8 experts, ep=2 x fsdp=4, GShard dispatch (capacity 1.25), one microbatch: the
    # expert weights are gathered over fsdp only (ep shards them) and the ZeRO group of the other
    # weights is fsdp x ep. Both policies compile to the planner's own dp rows and the planned
    # all-to-all over ep (no extra ep gathers from re-laid-out MoE residuals in the backward)
    moe = MODELS["tiny-moe"].model_copy(update={"n_experts": 8, "name": "tiny-moe-8"})
    tr = _xla(TrainingSpec(seq_len=64, global_batch_size=8, moe_capacity_factor=1.25), gather)
    v = validate_plan(moe, validate(ParallelConfig(dp=8, ep=2, zero_stage=3, zero3_gather=gather), moe, tr, 8), tr)
    assert not v.deltas and v.not_covered is None and v.ok
    assert all(abs(r.planner_error) <= 0.01 for r in v.rows if r.scored)
    assert v.row("AllToAll", "ep").planner_error == pytest.approx(0, abs=1e-3)
    assert not [c for c in v.hlo if c.kind == "all-gather" and c.mesh_axes == ("ep",)]


@pytest.mark.parametrize("gather", ["per_microbatch", "per_step"])
def test_zero3_with_context_parallelism_reduces_the_embedding_once(gather):
    # FSDP x CP (fsdp=4, cp=2, ring attention), 2 microbatches: the ZeRO group is fsdp x cp; the
    # embedding gradient is summed from every device's tokens once (model.embedding_lookup), so it
    # is one reduce-scatter over the group, not chained all-reduces over fsdp and cp
    tr = _xla(TR, gather)
    layout = validate(ParallelConfig(cp=2, zero_stage=3, microbatch_size=2, zero3_gather=gather), TINY, tr, 8)
    v = validate_plan(TINY, layout, tr)
    assert layout.microbatches == 2 and not v.deltas and v.ok
    assert all(abs(r.planner_error) <= 0.01 for r in v.rows if r.scored)
    assert v.row("AllReduce", "dp") is None or not v.row("AllReduce", "dp").scored



@pytest.mark.parametrize("recompute, calls, sent, cp", [("none", 16, 98_304, 2), ("full", 24, 147_456, 2),
                                                     ("none", 16, 98_304, 4)])
def test_ulysses_alltoalls_match_the_planner(recompute, calls, sent, cp):
    # cp_comm='a2a' runs as DeepSpeed-Ulysses in the runtime: GSPMD re-shards Q, K, V to KV-group shards and the
    # output back with one AllToAll each. tiny-llama (2 layers, 4 heads, 2 KV heads, head_dim 16), cp 2, seq 32,
    # micro batch 4 (one microbatch), fp32 (4 B): u = 32 x 4 / 2 = 64 local tokens; payloads Q and output
    # 4 x 64 x 64 = 16,384 B, K and V 4 x 64 x 32 = 8,192 B, of which an AllToAll over 2 ranks sends half:
    # 8,192 + 4,096 + 4,096 + 8,192 = 24,576 B per layer forward, as much backward (the gradients):
    # 2 layers x 2 x 24,576 = 98,304 B in 16 calls; full recompute runs the forward's again: 147,456 B, 24 calls.
    # cp 4 (the 2 KV heads repeated to 4, one per rank, as DeepSpeed replicates them): u = 32 x 4 / 4 = 32 tokens;
    # Q, K, V and output each 4 x 32 x 4 x 16 = 8,192 B, of which an AllToAll over 4 ranks sends 3/4 = 6,144 B:
    # 24,576 B per layer forward as at cp 2, 98,304 B in 16 calls
    from shardplan.presets.frameworks import JAX_RUNTIME  # the runtime's profile: it replicates KV heads (cp 4)
    tr = TR.model_copy(update={"framework": JAX_RUNTIME, "global_batch_size": 32 // cp})  # one microbatch of 4
    layout = validate(ParallelConfig(cp=cp, cp_comm="a2a", microbatch_size=4, recompute=recompute), TINY, tr, 8)
    v = validate_plan(TINY, layout, tr)
    row = v.row("AllToAll", "cp")
    assert v.cp_attention == "a2a"
    assert (row.planner_count, row.planner_bytes) == (calls, sent)
    assert (row.compiled_count, row.compiled_bytes) == (calls, sent)
    assert v.ok
