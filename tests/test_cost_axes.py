"""Typed collectives per axis: counts from the labelled schedules, derived by hand."""

from pathlib import Path

import pytest

from shardplan.cost.axes.tables import replace_block
from shardplan.cost.collective import bytes_sent
from shardplan.cost.step import estimate
from shardplan.parallel import ParallelConfig
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

DOC = Path(__file__).resolve().parents[1] / "docs" / "cost_model.md"


def _colls(parallel, devices=8, model="llama-3-8b", seq=4096, batch=16):
    tr = TrainingSpec(seq_len=seq, global_batch_size=batch)
    return estimate(MODELS[model], HARDWARE["h100-sxm"], tr, parallel, devices).collectives


def _count(colls, **kw):
    return sum(c.count for c in colls if all(getattr(c, k) == v for k, v in kw.items()))


def test_doc_schedules_match_code():
    # docs/cost_model.md carries the tables generated from cost/axes (python benchmarks/cost_tables.py)
    text = DOC.read_text()
    assert replace_block(text) == text


def test_tp_sequence_parallel_counts_by_phase():
    # llama-3-8b, 32 layers, tp=8+sp on 8 devices: dp=1, batch 16 at mbs 1 -> m = 16 microbatches.
    # Korthikanti et al. 2022: forward 2 AllGather + 2 ReduceScatter per layer, backward 4 AG + 2 RS;
    # with pp=1 the stage also holds the embedding (RS fwd, AG bwd) and LM head (AG fwd, RS bwd).
    c = _colls(ParallelConfig(tp=8, sp=True))
    L, m = 32, 16
    assert _count(c, axis="tp", tensor="activations", scope="layers", op="AllGather", phase="fwd") == 2 * L * m
    assert _count(c, axis="tp", tensor="activations", scope="layers", op="AllGather", phase="bwd") == 4 * L * m
    assert _count(c, axis="tp", tensor="activations", scope="layers", op="ReduceScatter", phase="bwd") == 2 * L * m
    assert _count(c, axis="tp", scope="embedding_head", op="AllGather") == 2 * m  # head fwd + embedding bwd
    assert _count(c, axis="tp", tensor="loss") == 3 * m  # vocab-parallel cross-entropy
    assert _count(c, axis="tp", tensor="norm_grads", phase="step") == 1


def test_tp_full_recompute_repeats_forward_in_backward():
    # no SP: 2 AllReduce fwd + 2 bwd per layer; full recompute re-runs the 2 forward ones in the backward
    c = _colls(ParallelConfig(tp=8, recompute="full"))
    assert _count(c, axis="tp", scope="layers", phase="fwd") == 2 * 32 * 16
    assert _count(c, axis="tp", scope="layers", phase="bwd") == 4 * 32 * 16


def test_zero3_phases_and_bytes():
    # llama-3-8b ZeRO-3 on 8 devices, per-microbatch gathers: params AllGather fwd and bwd, grads RS bwd,
    # m = 16 / 8 = 2 microbatches each. Bytes: the stage's dense params x 2 B x (8-1)/8 per call.
    c = _colls(ParallelConfig(zero_stage=3))
    ag_f = [x for x in c if x.axis == "dp" and x.tensor == "params" and x.phase == "fwd"]
    assert len(ag_f) == 1 and ag_f[0].count == 2 and ag_f[0].scope == "dense"
    n = MODELS["llama-3-8b"].n_params  # one stage holds every parameter
    assert ag_f[0].bytes_per_device == 2 * bytes_sent("AllGather", 2.0 * n, 8)
    assert _count(c, axis="dp", tensor="grads", phase="bwd", op="ReduceScatter") == 2


def test_hsdp_replicas_flagged():
    c = _colls(ParallelConfig(zero_stage=3, dp_shard=4))
    rep = [x for x in c if x.replicas]
    assert len(rep) == 1 and rep[0].op == "AllReduce" and rep[0].group_size == 2  # 8 / 4 replicas


def test_bytes_sent_convention():
    # nccl-tests bus-bandwidth factors: AG/RS (n-1)/n, AR 2(n-1)/n, SendRecv S
    assert bytes_sent("AllGather", 800.0, 8) == 700.0
    assert bytes_sent("AllReduce", 800.0, 8) == 1400.0
    assert bytes_sent("SendRecv", 800.0, 2) == 800.0
    assert bytes_sent("ReduceScatter", 800.0, 1) == 0.0


def test_cp_ring_message_with_kv_replication():
    # Llama-3-70B (8 KV heads of 128), tp=16 with KV replication, cp=2, seq 32768: each tp rank holds one whole
    # replicated KV head, so one ring message is K + V of the local 16,384 tokens: 2 x 2 B x 16,384 x 128 =
    # 8,388,608 B (not 4,194,304 B from kv_dim / tp = 64).
    tr = TrainingSpec(seq_len=32768, global_batch_size=2)
    e = estimate(MODELS["llama-3-70b"], HARDWARE["h100-sxm"], tr, ParallelConfig(tp=16, cp=2, kv_replication=True), 64)
    ring = [c for c in e.collectives if c.axis == "cp" and c.phase == "fwd"][0]
    assert ring.bytes_per_device / ring.count == 2 * 2 * 16384 * 128 == 8_388_608


@pytest.mark.parametrize("recompute, rerun", [("none", 0), ("selective", 1), ("full", 1)])
def test_cp_ring_steps_and_recompute(recompute, rerun):
    # llama-3-8b cp=4 on 8 devices (dp=2), m = 16 / 2 = 8, 32 layers: cp - 1 = 3 K/V sends per layer forward,
    # 2 x 3 backward (K/V again and dK/dV), plus 3 when recompute re-runs the attention core's forward --
    # selective recompute re-runs the core attention, ring included (Megatron checkpoint_core_attention)
    c = _colls(ParallelConfig(cp=4, recompute=recompute))
    assert _count(c, axis="cp", tensor="kv", phase="fwd") == 3 * 32 * 8
    assert _count(c, axis="cp", tensor="kv", phase="bwd") == (6 + 3 * rerun) * 32 * 8


def test_deepspeed_zero3_gathers_each_tensor_and_prefetch_hides_a_share():
    from shardplan.cost.axes.dp import layer_tensors
    from shardplan.specs.framework import FrameworkProfile
    from shardplan.specs.model import ModelSpec

    # GPT-3 style block (LayerNorm, biases on every linear, GELU MLP of 2 matrices): q, k, v, out + fc1, fc2
    # = 6 matrices, 6 biases, 2 LayerNorms x (gain, bias) = 16 tensors; Llama (RMSNorm, SwiGLU, no bias): 4 + 3 + 2 = 9
    gpt = ModelSpec(name="g", n_layers=2, d_model=256, n_heads=4, ffn_dim=1024, vocab_size=1000, mlp="gelu",
                    norm="layernorm", linear_bias=True)
    assert layer_tensors(gpt) == 16 and layer_tensors(MODELS["llama-3-8b"]) == 9
    # llama-3-8b on 64 A100s (8 nodes), ZeRO-3: per-tensor gathers pay 9x the calls of per-layer ones; the
    # bytes are the same
    m, hw = MODELS["llama-3-8b"], HARDWARE["a100-80gb"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    block, tensor = (estimate(m, hw, tr, ParallelConfig(dp=64, zero_stage=3, fsdp_unit=u), 64) for u in ("block", "tensor"))
    ag = [[c for c in e.collectives if c.op == "AllGather" and c.phase == "fwd"][0] for e in (block, tensor)]
    assert ag[0].bytes_per_device == ag[1].bytes_per_device and ag[1].time_s > ag[0].time_s
    # without prefetch every gather is exposed: the forward AllGather's exposed time equals its time
    none = tr.model_copy(update={"framework": FrameworkProfile(name="x", zero3_prefetch=0.0)})
    e = estimate(m, hw, none, ParallelConfig(dp=64, zero_stage=3), 64)
    fwd = [c for c in e.collectives if c.op == "AllGather" and c.phase == "fwd"][0]
    assert fwd.exposed_s == fwd.time_s and e.exposed_comm_s > block.exposed_comm_s


def test_moe_capacity_factor_and_imbalance_scale_the_busiest_rank():
    # Mixtral 8x7B on 16 H100s, ep=8: the AllToAll payload per device is beta x (u / tp) x top_k x h; with token
    # dropping at capacity factor 1.25 every expert exchanges 1.25x buffers (Switch Transformer Sec. 2.2), and
    # dropless routing with the busiest rank at 2x the mean sends 2x
    m, hw = MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"]
    p = ParallelConfig(ep=8, zero_stage=1)
    base = TrainingSpec(seq_len=4096, global_batch_size=64)
    runs = {k: estimate(m, hw, base.model_copy(update=kw), p, 16)
            for k, kw in (("balanced", {}), ("capacity", {"moe_capacity_factor": 1.25}), ("skewed", {"moe_imbalance": 2.0}))}
    a2a = {k: sum(c.bytes_per_device for c in e.collectives if c.op == "AllToAll") for k, e in runs.items()}
    assert a2a["capacity"] == pytest.approx(1.25 * a2a["balanced"]) and a2a["skewed"] == pytest.approx(2 * a2a["balanced"])
    # per device: u = 4096 tokens (mbs 1), beta 2, top_k 2, h 4096: 2 x 4096 x 2 x 4096 B = 64 MiB per call, sent
    # (ep-1)/ep of it, 4 calls per MoE layer, 32 layers, dp = 16 -> m = 64 / 16 = 4 microbatches
    assert a2a["balanced"] == pytest.approx(2 * 4096 * 2 * 4096 * 7 / 8 * 4 * 32 * 4)
    assert runs["skewed"].matmul_s > runs["capacity"].matmul_s > runs["balanced"].matmul_s
    assert runs["skewed"].memory.activations > runs["balanced"].memory.activations


def test_hsdp_replica_reduce_per_step_or_per_microbatch():
    # llama-3-8b on 64 H100s, HSDP: 8 shards x 8 replicas, 256 sequences of 4096, mbs 1 -> m = 256 / 64 = 4
    # microbatches; the replica AllReduce moves the bf16 gradient shard once per step, or 4 times with
    # hsdp_reduce='per_microbatch' (PyTorch FSDP HYBRID_SHARD without no_sync)
    m, hw = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=256)
    ar = {}
    for mode in ("per_step", "per_microbatch"):
        e = estimate(m, hw, tr, ParallelConfig(dp=64, zero_stage=3, dp_shard=8, hsdp_reduce=mode), 64)
        ar[mode] = [c for c in e.collectives if c.replicas][0]
    assert ar["per_step"].count == 1 and ar["per_microbatch"].count == 4
    assert ar["per_microbatch"].bytes_per_device == pytest.approx(4 * ar["per_step"].bytes_per_device)


def test_pipeline_sends_of_the_busiest_rank():
    """Stage-boundary SendRecv per step (llama-3-8b, seq 4096, batch 16 on 8 devices): pp=2 x dp=4, microbatch
    1 -> m = 4: rank 0 sends 4 activations and no gradient, rank 1 the reverse: 4 sends; interleaved v=2, m=4:
    chunk 0 of rank 0 sends no gradient, chunk 1 of rank 1 no activation: 2 x 4 + 1 x 4 = 12; pp=4 x dp=2, m=8:
    a middle rank sends 8 + 8 = 16."""
    two = _colls(ParallelConfig(pp=2, dp=4, microbatch_size=1))
    assert _count(two, op="SendRecv", axis="pp", phase="fwd") == 4
    assert _count(two, op="SendRecv", axis="pp", phase="bwd") == 0
    inter = _colls(ParallelConfig(pp=2, dp=4, microbatch_size=1, schedule="interleaved", virtual_stages=2))
    assert _count(inter, op="SendRecv", axis="pp") == 12
    four = _colls(ParallelConfig(pp=4, dp=2, microbatch_size=1))
    assert _count(four, op="SendRecv", axis="pp", phase="fwd") == 8 == _count(four, op="SendRecv", axis="pp",
                                                                              phase="bwd")


def test_tied_embeddings_all_reduce_over_the_embedding_group():
    """Tied embeddings with pp > 1: the first and last stage each hold the table and all-reduce its gradient
    over the two of them once per step (Megatron-LM ``_allreduce_word_embedding_grads``). tiny-llama tied,
    V = 256, h = 64, tp = 1, fp32 gradients: S = 256 x 64 x 4 = 65,536 B, 2 ranks: bytes sent 2 x 1/2 x S =
    65,536 B per device, exposed. Untied or pp = 1: none."""
    from shardplan.specs.training import PRECISION_POLICIES

    tied = MODELS["tiny-llama"].model_copy(update={"tied_embeddings": True})
    tr = TrainingSpec(seq_len=32, global_batch_size=16, precision=PRECISION_POLICIES["fp32"])
    h100 = HARDWARE["h100-sxm"]

    def group(model, **kw):
        return [c for c in estimate(model, h100, tr, ParallelConfig(**kw), 8).collectives
                if c.axis == "pp" and c.tensor == "grads"]

    (c,) = group(tied, pp=2, dp=4, microbatch_size=1)
    assert (c.op, c.phase, c.count, c.group_size, c.scope) == ("AllReduce", "step", 1, 2, "embedding_head")
    assert c.bytes_per_device == 65_536 == bytes_sent("AllReduce", 256 * 64 * 4, 2)
    assert c.exposed_s == c.time_s > 0
    assert not group(MODELS["tiny-llama"], pp=2, dp=4, microbatch_size=1) and not group(tied, dp=8)


def test_deepep_sends_one_copy_per_remote_node():
    """DeepEP (DeepSeek-V3 report Sec. 3.2.2): scale-out copies per token = remote nodes hit, not remote experts."""
    from shardplan.cost.axes.ep import deepep_copy_share as deepep_scale_out_share
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    # 128 experts over 4 nodes (ep = 32, 8 per node), top 8: a node is missed with C(96,8)/C(128,8) = 0.09275,
    # so 3 x (1 - 0.09275) = 2.722 remote nodes against 8 x 24/32 = 6 remote experts: 0.4536
    miss = 1.0
    for i in range(8):
        miss *= (96 - i) / (128 - i)
    assert deepep_scale_out_share(128, 8, 32, 8) == pytest.approx(3 * (1 - miss) / 6, rel=1e-12)
    assert deepep_scale_out_share(128, 8, 32, 8) == pytest.approx(0.4536, abs=1e-4)
    # one node (ep = 8): one copy per remote rank. A rank (16 experts) is missed with C(112,8)/C(128,8) = 0.3326,
    # so 8 x 0.6674 = 5.339 ranks hit, 7/8 of them remote: 4.672 copies against 8 x 7/8 = 7 experts: 0.6674
    miss_rank = 1.0
    for i in range(8):
        miss_rank *= (112 - i) / (128 - i)
    assert deepep_scale_out_share(128, 8, 8, 8) == pytest.approx(8 * (1 - miss_rank) * 7 / 8 / 7, rel=1e-12)
    assert deepep_scale_out_share(128, 8, 8, 8) == pytest.approx(0.6674, abs=1e-4)
    # in the estimate: the AllToAll payload shrinks by that share (Qwen3-235B, tp 2, ep 32 over 4 nodes)
    m, hw = MODELS["qwen3-235b-a22b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=256)
    base = dict(tp=2, sp=True, ep=32, etp=1, pp=8, zero_stage=1)
    a2a = {d: [c for c in estimate(m, hw, tr, ParallelConfig(**base, moe_dispatcher=d), 256).collectives
               if c.axis == "ep"] for d in ("alltoall", "deepep")}
    for x, y in zip(a2a["alltoall"], a2a["deepep"]):
        assert y.bytes_per_device == pytest.approx(x.bytes_per_device * deepep_scale_out_share(128, 8, 32, 8))
        assert y.time_s < 0.6 * x.time_s


def test_deepep_round_robin_routing_hits_contiguous_experts():
    """NeMo AutoModel's FakeBalancedGate sends token i to experts i*k .. i*k+k-1: contiguous, so few ranks."""
    from shardplan.cost.axes.ep import deepep_copy_share, expected_hits
    # Qwen3-30B-A3B, 128 experts, top 8, ep 8 (16 per rank): windows start at multiples of 8 and never straddle
    # a 16-expert block: 1 rank per token, 7/8 remote, against 8 x 7/8 = 7 AllToAll copies: 1/8
    assert expected_hits(128, 8, 8, "round_robin") == 1.0
    assert deepep_copy_share(128, 8, 8, 8, "round_robin") == pytest.approx(0.125)
    # DeepSeek-V3, 256 experts, top 8, ep 64 over 8 nodes (4 per rank, 32 per node): a window spans 2 ranks of
    # one node: 1 node, 7/8 remote, against 8 x 56/64 = 7 copies across nodes: 1/8
    assert expected_hits(256, 8, 64, "round_robin") == 2.0
    assert deepep_copy_share(256, 8, 64, 8, "round_robin") == pytest.approx(0.125)
    # a window that straddles: 6 experts, top 4, 3 ranks of 2: starts 0, 2, 4 (gcd 2) span 2 blocks each: 2
    assert expected_hits(6, 4, 3, "round_robin") == 2.0
    # uniform routing, same case: 3 (1 - C(4,4)/C(6,4)) = 3 x 14/15 = 2.8
    assert expected_hits(6, 4, 3) == pytest.approx(2.8)


def test_combined_1f1b_hides_expert_alltoalls_but_the_unpaired_passes():
    # Megatron-Core Combined 1F1B (--overlap-moe-expert-parallel-comm): without pipelining the first forward and the
    # last backward are unpaired, 1/m of each direction: m = 64 / (8 x 1) = 8 -> 1/8 exposed when the partner's
    # compute covers the rest; interleaved pp=8 v=4, m=128: rank 0 warms up 2 x 7 + 3 x 8 + 1 (the extra forward
    # Combined 1F1B schedules) = 39 of 512 chunk passes
    from shardplan.cost.axes.ep import unpaired_fraction
    from shardplan.cost.context import step_context
    from shardplan.errors import ConfigError
    from shardplan.parallel import validate
    m, hw = MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    base = dict(ep=8, zero_stage=1, microbatch_size=1)
    e0 = estimate(m, hw, tr, ParallelConfig(**base), 8)
    e1 = estimate(m, hw, tr, ParallelConfig(**base, moe_a2a_overlap=True), 8)
    a0 = [c for c in e0.collectives if c.axis == "ep"]
    a1 = [c for c in e1.collectives if c.axis == "ep"]
    assert [c.time_s for c in a0] == [c.time_s for c in a1]  # the same traffic, hidden
    ctx = step_context(m, hw, tr, e1.layout)
    share = tr.framework.a2a_overlap_share  # 0.5 of what the schedule could hide is hidden
    for c in a1:
        window = (2 / 3 if c.phase == "fwd" else 1 / 3) * ctx.stage.total_s * 8 * 7 / 8
        bound = c.time_s / 8 + max(0.0, 7 / 8 * c.time_s - window)
        assert c.exposed_s == pytest.approx(c.time_s - share * (c.time_s - bound))
        assert c.overlap == "combined_1f1b"
    assert e1.step_s < e0.step_s
    big = TrainingSpec(seq_len=4096, global_batch_size=8192)
    lay = validate(ParallelConfig(pp=8, schedule="interleaved", virtual_stages=4, ep=8, moe_a2a_overlap=True), m,
                   big, 512)
    assert unpaired_fraction(step_context(m, hw, big, lay)) == pytest.approx(39 / 512)
    # memory: one microbatch's forward runs beside another's backward, so two sets of activations are held (pp=1)
    assert e1.memory.activations == pytest.approx(2 * e0.memory.activations)
    with pytest.raises(ConfigError, match="ep=1 has none"):
        validate(ParallelConfig(moe_a2a_overlap=True), m, tr, 8)
    with pytest.raises(ConfigError, match="needs schedule='interleaved'"):
        validate(ParallelConfig(pp=2, ep=4, moe_a2a_overlap=True), m, tr, 8)
    with pytest.raises(ConfigError, match="recompute='full'"):  # Megatron-Core asserts it away
        validate(ParallelConfig(ep=8, recompute="full", moe_a2a_overlap=True), m, tr, 8)
    with pytest.raises(ConfigError, match="16-bit base precision"):
        validate(ParallelConfig(ep=8, moe_a2a_overlap=True), m,
                 tr.model_copy(update={"precision": tr.precision.model_copy(update={"name": "fp32"})}), 8)


def test_round_robin_routing_in_the_estimate_and_the_automodel_profile():
    """Qwen3-30B-A3B on 8 GPUs, ep 8, DeepEP: round-robin routing sends 1/8 of the AllToAll's bytes
    (deepep_copy_share(128, 8, 8, 8, 'round_robin') = (1 x 7/8) / (8 x 7/8)), uniform routing 0.6674."""
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, hw = MODELS["qwen3-30b-a3b"], HARDWARE["h100-sxm"]
    fw = framework_profile("automodel")
    # the profile is torchtitan's FSDP2 with Transformer Engine kernels and a bf16 loss, each with its source
    titan = framework_profile("torchtitan")
    changed = {k for k in type(fw).model_fields if k not in ("name", "sources") and getattr(fw, k) != getattr(titan, k)}
    assert changed == {"elementwise_traffic", "loss", "logit_bytes", "attention_kernel", "optimizer_dtype",
                       "moe_tensor_parallel", "fp16_training", "gpu_matmul_scale", "zero3_per_step",
                       "sp_seq_dim_copies"}
    assert all(k in fw.sources for k in changed)
    assert (fw.elementwise_traffic, fw.loss, fw.logit_bytes, fw.attention_kernel) == (1.0, "fused", 4.0, "cudnn")
    layout = dict(ep=8, zero_stage=3, microbatch_size=4, recompute="full")
    bytes_ = {}
    for dispatcher, routing in (("alltoall", "uniform"), ("deepep", "uniform"), ("deepep", "round_robin")):
        tr = TrainingSpec(seq_len=4096, global_batch_size=512, framework=fw, moe_routing=routing)
        e = estimate(m, hw, tr, ParallelConfig(**layout, moe_dispatcher=dispatcher), 8)
        bytes_[dispatcher, routing] = sum(c.bytes_per_device for c in e.collectives if c.axis == "ep")
    assert bytes_["deepep", "round_robin"] == pytest.approx(bytes_["alltoall", "uniform"] / 8, rel=1e-12)
    assert bytes_["deepep", "uniform"] == pytest.approx(bytes_["alltoall", "uniform"] * 0.66742, rel=1e-4)


def test_search_keeps_a_pinned_deepep_dispatcher():
    # --moe-dispatcher deepep is handed to every candidate; the search's ep-free token-split check must not
    # carry it to ep = 1 (where it is refused), or no layout survives. Mixtral-8x7B (8 experts) on 16 H100, ep 8
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.search import search
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    res = search(MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"], tr, 16, top_k=3, fix={"moe_dispatcher": "deepep", "ep": 8})
    assert res.plans and all(p.parallel.moe_dispatcher == "deepep" and p.parallel.ep == 8 for p in res.plans)


def test_choice_flags_take_any_case():
    # --moe-routing ROUND_ROBIN and --optimizer-dtype FP32 read as their lower-case names (as --framework does);
    # an unknown one still names the field and the legal values
    from shardplan.errors import ConfigError
    from shardplan.inputs import training_spec
    tr = training_spec(4096, 8, moe_routing="ROUND_ROBIN", optimizer_dtype="BF16-Moments")
    assert (tr.moe_routing, tr.optimizer_dtype) == ("round_robin", "bf16-moments")
    with pytest.raises(ConfigError, match=r"moe_routing='round-robin' is unknown; legal: uniform, round_robin"):
        training_spec(4096, 8, moe_routing="round-robin")


def test_automodel_moe_runs_without_tensor_parallelism():
    # NeMo AutoModel's MoE parallelizer asserts tp = 1: validation refuses tp > 1 for MoE models under the profile
    # (dense models keep it), and the search offers none
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.search import search
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("automodel"))
    with pytest.raises(ConfigError, match=r"tp=2: the automodel framework runs no tensor parallelism in MoE models"):
        validate(ParallelConfig(tp=2, sp=True, ep=4, zero_stage=3), MODELS["qwen3-30b-a3b"], tr, 8)
    validate(ParallelConfig(tp=2, sp=True, zero_stage=3), MODELS["llama-3-8b"], tr, 8)
    res = search(MODELS["qwen3-30b-a3b"], HARDWARE["h100-sxm"], tr, 8, top_k=50)
    assert res.plans and all(p.parallel.tp == 1 for p in res.plans)


def test_a2a_overlap_share_is_the_measured_mean():
    # the share of the hideable AllToAll time Combined 1F1B hides, implied by the MoE zoo's A/B pair (19.7 s -> 17.6 s)
    # and the Megatron-Bridge 25.11 Qwen3-235B H100 row: 0.43 and 0.52, mean 0.48, the preset's 0.5 (one decimal)
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from public_runs import a2a_overlap_shares
    from shardplan.presets.frameworks import framework_profile
    shares = a2a_overlap_shares()
    assert shares["zoo A/B"] == pytest.approx(0.43, abs=0.02)
    assert shares["Megatron-Bridge 25.11 H100 Qwen3-235B"] == pytest.approx(0.52, abs=0.02)
    assert framework_profile("megatron").a2a_overlap_share == round(sum(shares.values()) / len(shares), 1)


@pytest.mark.parametrize("devices, buckets", [(128, 26), (512, 16)])
def test_megatron_gradient_buckets_grow_with_dp(devices, buckets):
    # llama-3-8b (8,030,261,248 weights) at tp=8: ~1.004e9 local weights. Megatron-Core's bucket is
    # max(40e6, 1e6 x dp) weights: dp=16 -> 40e6 -> ceil(1.004e9 / 40e6) = 26 calls; dp=64 -> 64e6 -> 16 calls.
    # Each call is one ReduceScatter of a bucket's share of the buffer, with its own ring latency.
    from shardplan.cost.comm import collective_cost
    dp = devices // 8
    c = _colls(ParallelConfig(tp=8, sp=True, zero_stage=1), devices=devices, batch=4 * dp)
    rs = next(x for x in c if x.axis == "dp" and x.op == "ReduceScatter")
    size = rs.bytes_per_device * dp / (dp - 1)  # the full fp32 gradient buffer of one device
    per_call = collective_cost("ReduceScatter", size / buckets, dp, 8, HARDWARE["h100-sxm"]).time_s
    assert rs.time_s == pytest.approx(buckets * per_call, rel=1e-9)
    # a profile without the rule keeps one bucket per layer (32)
    from shardplan.presets.frameworks import FRAMEWORKS
    tr = TrainingSpec(seq_len=4096, global_batch_size=4 * dp,
                      framework=FRAMEWORKS["megatron"].model_copy(update=dict(dp_bucket_min_params=0,
                                                                              dp_bucket_params_per_rank=0)))
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, ParallelConfig(tp=8, sp=True, zero_stage=1), devices)
    rs0 = next(x for x in e.collectives if x.axis == "dp" and x.op == "ReduceScatter")
    per_layer = collective_cost("ReduceScatter", size / 32, dp, 8, HARDWARE["h100-sxm"]).time_s
    assert rs0.time_s == pytest.approx(32 * per_layer, rel=1e-9)


def test_recompute_layers_recomputes_the_first_n_of_each_stage():
    # llama-3-70b, pp=4: 20 layers a stage; --recompute-layers 5 (Megatron's block method) recomputes 5 of them
    from shardplan.cost.memory import stage_activation_bytes
    from shardplan.parallel import validate
    tr = TrainingSpec(seq_len=8192, global_batch_size=32)
    m, h = MODELS["llama-3-70b"], HARDWARE["h100-sxm"]
    base = dict(tp=8, sp=True, pp=4, microbatch_size=1)
    full, five, none = (estimate(m, h, tr, ParallelConfig(**base, **kw), 64) for kw in (
        dict(recompute="full"), dict(recompute="full", recompute_layers=5), dict(recompute="none")))
    assert five.layout.parallel.recompute_layers == 5
    # compute: a quarter of full recompute's extra forward (5 / 20)
    assert five.recompute_s == pytest.approx(full.recompute_s / 4)
    # memory of stage 1 (3 microbatches in flight): 5 layers keep their input (full's share), 15 keep everything
    # (no recompute's share), plus the one layer being recomputed: F = one layer's full bytes = none / (20 x 3)
    act = {k: stage_activation_bytes(m, tr, e.layout, 1) for k, e in (("full", full), ("five", five), ("none", none))}
    F = act["none"] / (20 * 3)
    assert act["five"] == pytest.approx(0.25 * (act["full"] - F) + 0.75 * act["none"] + F)
    # HFU counts the recomputed share only
    assert five.hfu / five.mfu == pytest.approx(1 + 0.25 * (full.hfu / full.mfu - 1), rel=1e-6)
    with pytest.raises(Exception, match="needs recompute='full'"):
        validate(ParallelConfig(**base, recompute="selective", recompute_layers=5), m, tr, 64)


def test_deepspeed_layer_cost_is_paid_by_checkpointed_layers_only():
    # the deepspeed profile's 12.2 ms per layer and microbatch is its CheckpointFunction's: llama-3-8b, 32 layers,
    # ZeRO-3 on 8 GPUs, 2 microbatches: 32 x 2 x 12.2 ms = 0.7808 s with full recompute, nothing without
    from shardplan.presets.frameworks import FRAMEWORKS
    ds = FRAMEWORKS["deepspeed"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=16, framework=ds)
    off = tr.model_copy(update={"framework": ds.model_copy(update={"layer_overhead_s": 0.0})})
    m, h = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]
    for recompute, expected in (("full", 32 * 2 * 0.0122), ("none", 0.0)):
        p = ParallelConfig(zero_stage=3, recompute=recompute)
        assert estimate(m, h, tr, p, 8).overhead_s - estimate(m, h, off, p, 8).overhead_s == \
            pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_collectives_record_their_bucket_calls():
    # llama-3-8b at tp=8 on 128 GPUs (dp 16): Megatron's 40e6-weight buckets, ceil(1.004e9 / 40e6) = 26 calls
    c = _colls(ParallelConfig(tp=8, sp=True, zero_stage=1), devices=128, batch=64)
    rs = next(x for x in c if x.axis == "dp" and x.op == "ReduceScatter")
    assert (rs.count, rs.buckets, rs.to_dict()["buckets"]) == (1, 26, 26)
