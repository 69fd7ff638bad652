"""The compiled-program cross-check without JAX: HLO parsing, the backend mapping and the runtime rules.

Runtime rules are fed hand-made typed planner collectives, so these tests pin down that the rules
select by ``tensor`` / ``phase`` / ``scope`` / ``replicas`` (a misleading ``purpose`` changes
nothing) and check their numbers by hand (tiny-llama: 2 layers, h = 64, kv_dim = 32, SwiGLU,
vocabulary 256; seq_len 32, global batch 16, fp32).
"""

import subprocess
import sys
from pathlib import Path

from shardplan.cost.collective import Collective
from shardplan.crosscheck.compare import runtime_training
from shardplan.crosscheck.deltas import MEMORY_RULES, RULES, memory_deltas, not_covered, rules_table, runtime_deltas
from shardplan.crosscheck.hlo import axes_of_groups, hlo_collectives, parse_replica_groups
from shardplan.crosscheck.logical import logical_collectives, raw_bytes_per_device
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

ROOT = Path(__file__).resolve().parents[1]
TINY = MODELS["tiny-llama"]
PLAN = TrainingSpec(seq_len=32, global_batch_size=16)  # the layouts are validated for this
TR = runtime_training(PLAN, "float32")  # what the runtime compiles: fp32 (4-byte activations), naive attention


def test_crosscheck_imports_no_jax():
    code = ("import sys, shardplan.crosscheck, shardplan.crosscheck.compare; "
            "bad = [m for m in sys.modules if m.startswith('jax')]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# ----- HLO parsing ------------------------------------------------------------------------------

def test_replica_group_syntaxes():
    prg = parse_replica_groups
    assert prg("replica_groups={{0,1},{2,3}}, to_apply=%a", 4) == [[0, 1], [2, 3]]
    assert prg("replica_groups={}, to_apply=%a", 4) == [[0, 1, 2, 3]]
    assert prg("replica_groups=[4,2]<=[8], use_global_device_ids=true", 8) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert prg("replica_groups=[2,4]<=[4,2]T(1,0), x", 8) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert prg("replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_0'}, x", 8) == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert prg("replica_groups=mesh['a'=2,'b'=4], device_ids=([4,2]T(1,0)) {'a'}, x", 8) == \
        [[0, 1], [2, 3], [4, 5], [6, 7]]
    # sub-axis 'a':(1)2 of a=4: the major half of a
    assert prg("replica_groups=mesh['a'=4,'b'=2] {'a':(1)2}, x", 8) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert prg("source_target_pairs={{0,1},{1,0}}, x", 2) == [[0, 1], [1, 0]]
    mesh = {"pp": 1, "dp": 2, "fsdp": 2, "ep": 1, "cp": 1, "tp": 2}
    assert axes_of_groups([[0, 1], [2, 3], [4, 5], [6, 7]], mesh) == (("tp",), True)
    assert axes_of_groups([[0, 2, 4, 6], [1, 3, 5, 7]], mesh) == (("dp", "fsdp"), True)
    assert axes_of_groups([[0, 4], [1, 5]], mesh) == (("dp",), True)
    assert axes_of_groups([[0, 3]], mesh) == (("fsdp", "tp"), False)


HLO_LOOP = """HloModule m, num_partitions=4

%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8]{0} get-tuple-element(%p), index=1
  %ag = f32[8]{0} all-gather-start(%x), replica_groups={{0,1},{2,3}}, dimensions={0}
  %ar = f32[8]{0} all-reduce(%x), replica_groups=[2,2]<=[4], to_apply=%add
  ROOT %t = (s32[], f32[8]{0}) tuple(%i, %ar)
}

%cond (p: (s32[], f32[8])) -> pred[] {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %c = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %c), direction=LT
}

ENTRY %main (a: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[8]{0}) tuple(%z, %a)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body
  %cp = f32[8]{0} collective-permute(%a), source_target_pairs={{0,1},{1,0},{2,2}}
  %self = f32[8]{0} collective-permute(%a), source_target_pairs={{0,0},{1,1}}
  ROOT %r = f32[8]{0} get-tuple-element(%w), index=1
}
"""


def test_hlo_collectives_loop_trip_count_and_async():
    cols = {c.name: c for c in hlo_collectives(HLO_LOOP, {"dp": 2, "tp": 2})}
    assert cols["ar"].per_step == 3 and cols["ar"].trip_count_known  # from the loop condition
    assert cols["ar"].mesh_axes == ("tp",) and cols["ar"].group_size == 2
    assert cols["ag"].kind == "all-gather" and cols["ag"].is_async and cols["ag"].per_step == 3
    assert cols["cp"].kind == "collective-permute" and cols["cp"].per_step == 1
    assert cols["cp"].mesh_axes == ("tp",)
    assert cols["self"].group_size == 1 and cols["self"].mesh_axes == ()
    with_config = HLO_LOOP.replace("body=%body", 'body=%body, backend_config={"known_trip_count":{"n":"5"}}')
    assert {c.name: c for c in hlo_collectives(with_config)}["ar"].per_step == 5


def test_logical_bytes_follow_the_planner_convention():
    """f32[8] = 32 bytes per buffer, groups of 2: AllReduce 2 S (n-1)/n = 32 per call x 3 loop trips;
    AllGather of the 32-byte result S (n-1)/n = 16 x 3; SendRecv the 32-byte message once; the
    permute onto the device itself moves nothing and is not a SendRecv."""
    cols = hlo_collectives(HLO_LOOP, {"dp": 2, "tp": 2})
    got = {(lc.op, lc.source): lc.bytes_per_device for lc in logical_collectives(cols, HLO_LOOP)}
    assert got == {("AllReduce", "ar"): 96.0, ("AllGather", "ag"): 48.0, ("SendRecv", "cp"): 32.0}
    raw = {c.name: raw_bytes_per_device(c) for c in cols}
    assert raw == {"ag": 48.0, "ar": 96.0, "cp": 32.0, "self": 0.0}


HLO_SPLIT = """HloModule m, num_partitions=8

ENTRY %main (x: f32[32]) -> f32[8] {
  %x = f32[32]{0} parameter(0)
  %ar = f32[32]{0} all-reduce(%x), replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=%add
  %p = u32[] partition-id()
  %c = u32[] constant(8)
  %o = u32[] multiply(%p, %c)
  ROOT %ds = f32[8]{0} dynamic-slice(%ar, %o), dynamic_slice_sizes={8}
}
"""


def test_all_reduce_kept_as_quarter_slices_is_a_reduce_scatter_then_an_all_reduce():
    """The HSDP pattern (XLA's all-reduce splitter example): f32[32] = 128 bytes all-reduced over 8
    devices, every consumer keeps 8 of its 32 elements (1/4). As XLA:GPU rewrites it: ReduceScatter
    over 4 sends 128 x 3/4 = 96 bytes, then AllReduce of the 32-byte slice over 2 sends
    2 x 32 x 1/2 = 32 bytes (128 in all); taken literally the all-reduce over 8 would be
    2 x 128 x 7/8 = 224 bytes."""
    (c,) = hlo_collectives(HLO_SPLIT, {"dp": 2, "fsdp": 4})
    assert c.mesh_axes == ("dp", "fsdp") and c.elements[0].split == 4 and not c.elements[0].scattered
    got = [(lc.op, lc.axis, lc.group_size, lc.bytes_per_device) for lc in logical_collectives([c], HLO_SPLIT)]
    assert got == [("ReduceScatter", "dp", 4, 96.0), ("AllReduce", "dp", 2, 32.0)]
    assert raw_bytes_per_device(c) == 224.0
    # a 1/8 slice is the plain XLA:CPU reduce-scatter (no split)
    whole = HLO_SPLIT.replace("f32[8]{0} dynamic-slice", "f32[4]{0} dynamic-slice").replace("sizes={8}", "sizes={4}")
    (c8,) = hlo_collectives(whole, {"dp": 2, "fsdp": 4})
    assert c8.elements[0].scattered and c8.elements[0].split == 0


HLO_TIED = """HloModule m, num_partitions=2

%sum (a: f32[8], b: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  %b = f32[8]{0} parameter(1)
  ROOT %s = f32[8]{0} add(%a, %b)
}

ENTRY %main (x: f32[8], y: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %y = f32[8]{0} parameter(1)
  %ar = (f32[8]{0}, f32[8]{0}) all-reduce(%x, %y), replica_groups={{0,1}}, to_apply=%add
  %g0 = f32[8]{0} get-tuple-element(%ar), index=0
  %g1 = f32[8]{0} get-tuple-element(%ar), index=1
  ROOT %t = f32[8]{0} fusion(%g0, %g1), kind=kLoop, calls=%sum
}
"""


def test_all_reduces_only_added_together_are_one_all_reduce_of_the_sum():
    """A tied table's two gradients, each all-reduced and then added (XLA:CPU): XLA's all-reduce
    reassociation makes it one all-reduce of the sum. f32[8] = 32 bytes over 2 devices: one AllReduce
    2 x 32 x 1/2 = 32 bytes, not 64; with a second use of one of them, both stay."""
    cols = hlo_collectives(HLO_TIED, {"dp": 2})
    got = [(lc.op, lc.bytes_per_device, lc.mapping) for lc in logical_collectives(cols, HLO_TIED)]
    assert got == [("AllReduce", 32.0, "all-reduce(x) + all-reduce(y) -> all-reduce(x + y)")]
    used_twice = HLO_TIED.replace("ROOT %t = f32[8]{0} fusion(%g0, %g1), kind=kLoop, calls=%sum",
                                  "%t = f32[8]{0} fusion(%g0, %g1), kind=kLoop, calls=%sum\n"
                                  "  ROOT %u = f32[8]{0} multiply(%t, %g1)")
    cols = hlo_collectives(used_twice, {"dp": 2})
    assert [lc.bytes_per_device for lc in logical_collectives(cols, used_twice)] == [32.0, 32.0]


# ----- runtime rules ----------------------------------------------------------------------------

def _c(op, axis, tensor, phase, scope, count, nbytes, n=2, replicas=False, purpose="misleading gradients ZeRO-3"):
    """A typed planner record; the default purpose would fool any text-based classification."""
    return Collective(op=op, axis=axis, tensor=tensor, phase=phase, scope=scope, count=count,
                      bytes_per_device=nbytes, time_s=0.0, exposed_s=0.0, level="NVLink", group_size=n,
                      overlap="exposed", purpose=purpose, replicas=replicas)


def _by_rule(deltas, rule):
    ds = [d for d in deltas if d.rule == rule]
    return sum(d.count for d in ds), sum(d.bytes_per_device for d in ds), {(d.op, d.axis) for d in ds}


def test_one_f_one_b_rules_count_slot_sends_and_one_boundary_psum():
    """Executed 1F1B on tiny-llama with 4 layers, pp=4 x dp=2, m=8 (u = 32 tokens, h = 64, fp32): of the
    2 x (m + pp - 1) = 22 slots all but the last send something (slot 21 is stage 0's last backward, which
    sends nothing), so 21 collective-permutes against the planner's 16 calls; each device sends only its own
    work, so the bytes are the planner's (no byte delta). The embedding / head are stacked over pp: no
    boundary psum for a RoPE model; with learned positions (1024 x 64) one fp32 all-reduce over pp of
    1024 x 64 + 1 floats (the loss), x 2 (pp-1)/pp."""
    tiny4 = TINY.model_copy(update={"n_layers": 4})
    layout = validate(ParallelConfig(pp=4), tiny4, PLAN, 8)
    assert layout.microbatches == 8 and layout.parallel.microbatch_size == 1
    planner = [_c("SendRecv", "pp", "stage_io", "fwd", "pipeline", 16, 16 * 8192.0)]
    deltas = runtime_deltas(tiny4, TR, layout, planner)
    assert _by_rule(deltas, "1f1b-slot-sends") == (21 - 16, 0.0, {("SendRecv", "pp")})
    assert not [d for d in deltas if d.rule.startswith("gpipe-") or "psum" in d.rule]
    learned = tiny4.model_copy(update={"position": "learned", "max_position_embeddings": 1024})
    count, nbytes, rows = _by_rule(runtime_deltas(learned, TR, layout, planner), "1f1b-boundary-psum")
    assert (count, rows) == (1, {("AllReduce", "pp")}) and abs(nbytes - 2 * 3 / 4 * 4 * (1024 * 64 + 1)) < 1e-6
    # pp = 2, m = 4: the warm-up forward, 3 steady ticks sending both ways, the last backward: 5 calls
    two = runtime_deltas(tiny4, TR, validate(ParallelConfig(pp=2), tiny4, PLAN, 8), [])
    assert _by_rule(two, "1f1b-slot-sends")[:2] == (5, 0.0)
    # GPipe: its own rules only; 2 permutes per tick (22 calls), a middle stage sending 2 x 11 messages
    gp = runtime_deltas(tiny4, TR, validate(ParallelConfig(pp=4, schedule="gpipe"), tiny4, PLAN, 8), planner)
    assert not [d for d in gp if d.rule.startswith("1f1b-")]
    assert _by_rule(gp, "gpipe-tick-sends")[:2] == (22 - 16, (22 - 16) * 8192.0)


def test_one_f_one_b_runs_send_each_stage_s_own_work():
    """pp=2, m=4: tick 0 sends stage 0's first activation, ticks 1-3 both directions, tick 4 stage 1's
    last gradient (odd slots send nothing: stage 1's forwards only store their input, stage 0's backwards
    have no one to send to); every device sends m = 4 messages, the planner's count for pp = 2."""
    from shardplan.cost.axes.pp import sends_per_step
    from shardplan.pipeline_program import one_f_one_b_runs

    runs = one_f_one_b_runs(2, 4)
    assert runs == [(0, 1, ((0, 1),), ()), (1, 4, ((0, 1), (1, 0)), ()), (4, 5, ((1, 0),), ())]
    for pp, m in [(2, 4), (3, 5), (4, 8)]:
        sent = {}
        for start, stop, even, odd in one_f_one_b_runs(pp, m):
            for src, _ in even + odd:
                sent[src] = sent.get(src, 0) + stop - start
        # first / last stage m messages, a middle one 2 m: the busiest is the planner's count
        assert sent == {k: (m if k in (0, pp - 1) else 2 * m) for k in range(pp)}, (pp, m)
        assert max(sent.values()) == sends_per_step(pp, m, 1, "fwd") + sends_per_step(pp, m, 1, "bwd")


def test_one_f_one_b_memory_rule_counts_stage_inputs_not_in_flight_activations():
    """PP (tiny-llama, pp=2 x dp=4, m=4, u=32, h=64, fp32) under 1F1B: one stage's residuals
    (a_tok x 1 layer x u), min(m, pp) = 2 stage inputs, the embedding output and its cotangent 2 x 4 m u h, in place
    of the planner's activations; gradients + 4 x (one block + V h + h). GPipe: the tick rule instead."""
    from types import SimpleNamespace

    from shardplan.cost.memory import activation_bytes_per_token

    layout = validate(ParallelConfig(pp=2, dp=4, microbatch_size=1), TINY, PLAN, 8)
    mb = SimpleNamespace(activations=1000.0, params=1.0, optimizer=1.0, grads=1.0, logits=0.0, stage=0)
    d = memory_deltas(TINY, TR, layout, mb)["1f1b-stage-inputs"]
    # the runtime's naive attention keeps 8 B per score where the planner counts 4 (fp32): (8 - 4) x 4 heads x 32 keys
    a_tok = activation_bytes_per_token(TINY, TR, layout, False) + 4 * 4 * 32
    assert d["activations"] == a_tok * 32 + 4 * 32 * 64 * 2 + 2 * 4 * 4 * 32 * 64 - 1000.0
    block = 64 * 8 * 16 + 64 * 64 + 64 * 2 * 128 + 128 * 64 + 2 * 64  # wqkv, wo, w_gate_up, w_down, 2 norms
    assert d["grads"] == 4.0 * (block + 256 * 64 + 64)
    gp = memory_deltas(TINY, TR, validate(ParallelConfig(pp=2, dp=4, microbatch_size=1, schedule="gpipe"),
                                          TINY, PLAN, 8), mb)
    assert "1f1b-stage-inputs" not in gp and "gpipe-tick-residuals" in gp


def test_grad_sync_per_microbatch_reads_typed_fields():
    """DP with m = 16 / (8 x 1) = 2: only the shard-group gradient reduction repeats per microbatch
    ((m - 1) x its count and bytes); the HSDP replica AllReduce and the parameter gather do not."""
    layout = validate(ParallelConfig(microbatch_size=1), TINY, PLAN, 8)
    assert layout.microbatches == 2
    planner = [_c("AllReduce", "dp", "grads", "step", "dense", 1, 1000.0, n=8),
               _c("AllReduce", "dp", "grads", "step", "dense", 1, 500.0, n=8, replicas=True),
               _c("AllGather", "dp", "params", "step", "dense", 1, 700.0, n=8, purpose="dense gradients")]
    assert _by_rule(runtime_deltas(TINY, TR, layout, planner), "grad-sync-per-microbatch") == \
        (1, 1000.0, {("AllReduce", "dp")})


def test_grad_sync_per_microbatch_only_under_the_gspmd_accumulation():
    """The runtime's default reduces once per step (``local_axes`` non-empty): no delta, for DP and
    ZeRO-2 alike. ZeRO-2's embedding needs no rule in either mode: the runtime builds each
    device's table gradient and reduce-scatters it once (shardplan.jax.model.local_lookup_gradients)."""
    dp = validate(ParallelConfig(microbatch_size=1), TINY, PLAN, 8)
    planner = [_c("AllReduce", "dp", "grads", "step", "dense", 1, 1000.0, n=8)]
    assert _by_rule(runtime_deltas(TINY, TR, dp, planner, ("dp",)), "grad-sync-per-microbatch") == (0, 0, set())
    z2 = validate(ParallelConfig(zero_stage=2, microbatch_size=1), TINY, PLAN, 8)
    planner = [_c("ReduceScatter", "dp", "grads", "step", "dense", 1, 1000.0, n=8)]
    per_step = runtime_deltas(TINY, TR, z2, planner, ("fsdp",))
    assert not per_step
    gspmd = runtime_deltas(TINY, TR, z2, planner)
    assert _by_rule(gspmd, "grad-sync-per-microbatch") == (1, 1000.0, {("ReduceScatter", "dp")})
    assert {d.rule for d in gspmd} == {"grad-sync-per-microbatch"}


def test_not_covered_names_the_gspmd_accumulation_cases():
    """ZeRO-1 and HSDP with m = 2 are scored with the per-step reduction and 'not covered' under
    the GSPMD accumulation; DP / ZeRO-2 / FSDP and m = 1 always covered."""
    z1 = validate(ParallelConfig(zero_stage=1, microbatch_size=1), TINY, PLAN, 8)
    hsdp = validate(ParallelConfig(zero_stage=3, dp_shard=4, microbatch_size=1), TINY, PLAN, 8)
    assert not_covered(z1, ("fsdp",)) is None and not_covered(hsdp, ("dp",)) is None
    assert "ZeRO-1 with 2 microbatches" in not_covered(z1)
    assert "HSDP (2 replicas)" in not_covered(hsdp) and "grad_sync='per_microbatch'" in not_covered(hsdp)
    for kw in (dict(microbatch_size=1), dict(zero_stage=2, microbatch_size=1), dict(zero_stage=3, microbatch_size=1),
               dict(zero_stage=1, microbatch_size=2)):
        assert not_covered(validate(ParallelConfig(**kw), TINY, PLAN, 8)) is None, kw


def test_zero2_memory_counts_the_whole_local_gradient():
    """ZeRO-2 over 8 ranks under a profile that shards the gradients (torchtitan: 'per_microbatch'): the planner's
    gradient bytes are G / 8; the runtime holds G, so the rule adds 7 x the planner's figure (nothing for ZeRO-1,
    which already counts G, nor under the megatron profile, whose 'full_buffer' ZeRO-2 already counts G). With
    16 sequences over 8 ranks at micro batch 1 (m = 2) the accumulation loop holds a second whole local gradient
    beside the running sum: + G = 8 x 1000 for the sharded count, + 1000 where the planner counts G."""
    from shardplan.presets.frameworks import framework_profile

    class MB:  # the one field the rule reads
        grads = 1000.0

    def grads(*args):  # the gradient rules (the attention rule, jax-softmax-residuals, changes activations only)
        return {k: v for k, v in memory_deltas(*args).items() if k != "jax-softmax-residuals"}

    sharded = TR.model_copy(update={"framework": framework_profile("torchtitan")})
    z2 = validate(ParallelConfig(zero_stage=2, microbatch_size=1), TINY, PLAN, 8)
    assert grads(TINY, sharded, z2, MB, ("fsdp",)) == {"zero2-full-local-gradient": {"grads": 7000.0},
                                                         "gradient-accumulator": {"grads": 8000.0}}
    acc = {"gradient-accumulator": {"grads": 1000.0}}
    assert grads(TINY, TR, z2, MB, ("fsdp",)) == acc  # megatron, the default profile
    z1 = validate(ParallelConfig(zero_stage=1, microbatch_size=1), TINY, PLAN, 8)
    assert grads(TINY, sharded, z1, MB, ("fsdp",)) == acc
    z1_one = validate(ParallelConfig(zero_stage=1, microbatch_size=2), TINY, PLAN, 8)  # m = 1: no accumulator
    assert grads(TINY, sharded, z1_one, MB, ("fsdp",)) == {}
    assert set(memory_deltas(TINY, sharded, z1_one, MB, ("fsdp",))) == {"jax-softmax-residuals"}


def test_zero3_has_no_gather_or_embedding_delta():
    """ZeRO-3, m = 2, both zero3_gather policies, FSDP and HSDP: the runtime gathers the weights (the
    embedding table included) as the plan prices them, so no rule changes a data-parallel row;
    ZeRO-2 under the GSPMD accumulation only reduces per microbatch (no embedding rule: its table
    gradient is reduce-scattered as a whole too)."""
    planner = [_c("AllGather", "dp", "params", "fwd", "dense", 2, 200.0, n=8),
               _c("AllGather", "dp", "params", "bwd", "dense", 2, 200.0, n=8),
               _c("ReduceScatter", "dp", "grads", "bwd", "dense", 2, 300.0, n=8)]
    from shardplan.presets.frameworks import JAX_RUNTIME
    xla = PLAN.model_copy(update={"framework": JAX_RUNTIME})  # the per-step gather: XLA's (megatron refuses it)
    for kw in (dict(zero_stage=3), dict(zero_stage=3, zero3_gather="per_step"), dict(zero_stage=3, dp_shard=4),
               dict(zero_stage=3, recompute="full")):
        layout = validate(ParallelConfig(microbatch_size=1, **kw), TINY, xla if "zero3_gather" in kw else PLAN, 8)
        local = ("dp",) if kw.get("dp_shard") else ()
        assert [d for d in runtime_deltas(TINY, TR, layout, planner, local) if d.axis == "dp"] == [], kw
        assert not_covered(layout, local) is None, kw
    z2 = validate(ParallelConfig(zero_stage=2, microbatch_size=1), TINY, PLAN, 8)
    assert [d.rule for d in runtime_deltas(TINY, TR, z2, planner)] == ["grad-sync-per-microbatch"]


def test_cp_allgather_kv_numbers():
    """cp = 2, microbatch 4, dp = 4, m = 1, u = 32 x 4 / 2 = 64 tokens, fp32, cp_attention='allgather':
    the ring (tensor 'kv') is removed; AG of V and the rotated K 4 x 64 x 2 x 2 x 32 = 32768 B sends
    16384 B, x L m = 2 -> 32768; RS of dK, dV 4 x 64 x 2 x 2 x 32 = 32768 B sends 16384 B, x 2 -> 32768.
    The default ring attention sends the planner's ring: no delta."""
    layout = validate(ParallelConfig(cp=2, microbatch_size=4), TINY, PLAN, 8)
    planner = [_c("SendRecv", "cp", "kv", "fwd", "layers", 6, 6000.0),
               _c("SendRecv", "cp", "stage_io", "fwd", "layers", 1, 123.0, purpose="K/V ring (context parallel)")]
    d = [x for x in runtime_deltas(TINY, TR, layout, planner, cp_attention="allgather") if x.rule == "cp-allgather-kv"]
    assert [(x.op, x.axis, x.count, x.bytes_per_device) for x in d] == [
        ("SendRecv", "cp", -6, -6000.0), ("AllGather", "cp", 2, 32768.0), ("ReduceScatter", "cp", 2, 32768.0)]
    assert not [x for x in runtime_deltas(TINY, TR, layout, planner) if x.axis == "cp"]


def test_gpipe_bubble_ticks_counts_layer_activations_only():
    """PP+TP (pp = tp = dp = 2, m = 8, one layer per stage): bubble ticks add (pp - 1) / m = 1/8 of
    the per-layer tp rows, forward and backward records alike (1/8 x 3200 = 400 B), not of the
    embedding/head row. No projection delta: the runtime fuses QKV and gate/up like Megatron."""
    layout = validate(ParallelConfig(pp=2, tp=2, dp=2, schedule="gpipe"), TINY, PLAN, 8)
    assert layout.microbatches == 8
    planner = [_c("AllReduce", "tp", "activations", "fwd", "layers", 16, 1600.0),
               _c("AllReduce", "tp", "activations", "bwd", "layers", 16, 1600.0),
               _c("AllReduce", "tp", "activations", "fwd", "embedding_head", 8, 800.0, purpose="activations")]
    deltas = runtime_deltas(TINY, TR, layout, planner)
    assert not [d for d in deltas if d.rule == "tp-bwd-per-projection"]
    assert _by_rule(deltas, "gpipe-bubble-ticks") == (4, 400.0, {("AllReduce", "tp")})
    # the executed 1F1B computes nothing on bubble slots: no GPipe rule applies
    one_f = runtime_deltas(TINY, TR, validate(ParallelConfig(pp=2, tp=2, dp=2), TINY, PLAN, 8), planner)
    assert not [d for d in one_f if d.rule.startswith("gpipe-") or d.rule == "pp-boundary-psum"]


def test_no_embedding_or_sp_gather_rule_for_tp_sp_and_zero2():
    """TP+SP (dp=4, tp=2) and ZeRO-2 (fsdp=8), one microbatch: the runtime looks the tokens up as
    Megatron's VocabParallelEmbedding, re-gathers the SP block inputs in the backward and
    reduce-scatters ZeRO-2's whole table gradient, so no rule changes any of their rows. PP+TP
    (GPipe, no SP): the embedding runs once on the whole batch before the pipeline, one tp
    all-reduce of beta m u h = 4 x 8 x 32 x 64 = 65536 B, sending 2 x 65536 x 1/2 = 65536 B."""
    sp = validate(ParallelConfig(tp=2, sp=True, microbatch_size=4), TINY, PLAN, 8)
    planner = [_c("AllGather", "tp", "activations", "fwd", "layers", 4, 4000.0),
               _c("ReduceScatter", "tp", "activations", "fwd", "embedding_head", 1, 1000.0),
               _c("AllReduce", "dp", "grads", "step", "dense", 1, 1000.0, n=4)]
    assert runtime_deltas(TINY, TR, sp, planner) == []
    z2 = validate(ParallelConfig(zero_stage=2, microbatch_size=2), TINY, PLAN, 8)
    assert runtime_deltas(TINY, TR, z2, [_c("ReduceScatter", "dp", "grads", "step", "dense", 1, 1000.0, n=8)]) == []
    pptp = validate(ParallelConfig(pp=2, tp=2, dp=2, schedule="gpipe"), TINY, PLAN, 8)
    d = [x for x in runtime_deltas(TINY, TR, pptp, []) if x.rule == "pp-embedding-lookup"]
    assert [(x.op, x.axis, x.count, x.bytes_per_device) for x in d] == [("AllReduce", "tp", 1, 65536.0)]


def test_rules_are_documented_and_the_docs_table_is_current():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names)) and len(RULES) >= 12 and len(MEMORY_RULES) == 7
    for r in RULES + MEMORY_RULES:
        assert len(r.reason) > 40 and r.applies and r.delta, r.name
    doc = (ROOT / "docs" / "validation.md").read_text()
    for line in rules_table():
        assert line in doc, f"docs/validation.md is stale (python benchmarks/validation.py): {line[:80]}"


def test_no_rule_reads_purpose():
    for name in ("deltas.py", "compare.py", "logical.py"):
        assert "purpose" not in (ROOT / "shardplan" / "crosscheck" / name).read_text(), name
