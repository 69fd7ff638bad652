"""Data parallelism and ZeRO / FSDP / HSDP: gradient reduction and parameter gathers over the
data-parallel group (dp x cp ranks hold distinct tokens of the same weights).

* ZeRO-0 (DDP): one AllReduce of the gradients per step (Li et al. 2020, PyTorch DDP).
* ZeRO-1/2: ReduceScatter of the gradients onto the shard group and AllGather of the updated
  parameters, once per step (Rajbhandari et al. 2020, Sec. 5.1-5.2; Megatron-LM distributed
  optimizer, which shards over dp x cp). With gradient accumulation (m > 1 microbatches) ZeRO-2 keeps
  no full gradient buffer to accumulate into, so it reduce-scatters after every microbatch's backward
  (m calls, each behind its own backward): DeepSpeed's engine refuses ``no_sync`` under ZeRO-2
  ("no_sync context manager is incompatible with gradient partitioning logic of ZeRO stage 2",
  deepspeed/runtime/engine.py) and reduces every micro-step into the partition (runtime/zero/stage_1_and_2.py);
  PyTorch FSDP SHARD_GRAD_OP and FSDP2 ``reshard_after_forward=False`` reduce-scatter after every backward
  unless ``no_sync`` / ``set_requires_gradient_sync(False)`` keeps unsharded gradients (ZeRO-1's memory);
  Megatron-FSDP ``fully_shard(sync_model_each_microbatch=True)`` by default. ZeRO-1 accumulates into its full
  gradient buffer and reduces once, and so does ZeRO-2 under a profile whose ``zero2_accumulation`` is
  'full_buffer' (Megatron-LM: it then holds ZeRO-1's gradient memory, :mod:`shardplan.cost.memory`).
* ZeRO-3 (FSDP): parameters gathered before each layer's forward and again before its backward,
  gradients reduce-scattered after its backward, per microbatch (Zhao et al. 2023, PyTorch FSDP,
  Sec. 3.2); or, with ``zero3_gather='per_step'``, gathered once per step and kept (XLA/GSPMD).
  The gather unit (``ParallelConfig.fsdp_unit``): one AllGather per layer ('block': FSDP wraps
  each transformer block as one flat parameter, Zhao et al. 2023 Sec. 3.2.1) or one per parameter
  tensor ('tensor': DeepSpeed ZeRO-3 all-gathers each partitioned parameter of a submodule with its
  own call, deepspeed/runtime/zero/partition_parameters.py ``_all_gather`` of v0.3-0.5, the version
  of the ZeRO-3 runs in Narayanan et al. 2021 Table 2). Every call pays the ring's latency, (n-1)
  network steps across nodes (:mod:`shardplan.cost.comm`): at 1,536 ranks and ~20 us a step that
  is ~30 ms a call, which is what makes those runs communication-bound.
* HSDP: the shard group's gradient shard is then all-reduced across the dp / dp_shard replicas.
* Expert weights are sharded over the expert-data-parallel group (``Layout.expert_zero_shard``).

Overlap: gradient reduction hides behind the backward of the last microbatch except the last
bucket (Li et al. 2020, Sec. 3.2.3), one bucket per layer; the ZeRO-1/2 parameter AllGather behind
the next forward likewise (Megatron-LM ``--overlap-param-gather``), or not at all where the framework
gathers after the optimizer step in one blocking call (``FrameworkProfile.param_gather_overlap``: nanotron); ZeRO-3 prefetches the next
layer's parameters during the current layer (Zhao et al. 2023, Sec. 3.3.2) so only the first
layer's gather and each layer's excess over its compute are exposed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shardplan.cost.collective import Collective
from shardplan.cost.context import StepContext, require_host_link
from shardplan.cost.memory import bf16_optimizer, grad_reduce_bytes, offloaded_shard_bytes, zero3_gather_bytes
from shardplan.parallel import recompute_share
from shardplan.specs.model import ModelSpec


@dataclass(frozen=True)
class WeightGroup:
    """Weights reduced together: ``kind`` 'dense' or 'expert', ``params`` elements per device on the
    slowest stage, sharded over ``shard`` ranks, whose members are ``stride`` ranks apart."""

    kind: str
    params: float
    shard: int
    stride: int


@dataclass(frozen=True)
class DataParallelCost:
    """The dp collectives and their exposed seconds: ``per_microbatch`` (ZeRO-3 traffic, on the
    critical path of every microbatch, so it also lengthens the bubble) and ``per_step``; and
    ``host_copy_per_microbatch``, the exposed seconds of offloaded parameter shards' copies to the
    device (:func:`host_copy_s`), per microbatch.""" 

    collectives: list[Collective]
    per_microbatch: float
    per_step: float
    host_copy_per_microbatch: float = 0.0


def weight_groups(ctx: StepContext) -> list[WeightGroup]:
    """Dense (incl. replicated norms / router) and expert weights of the slowest stage."""
    sp_, p = ctx.stage.params, ctx.p
    return [WeightGroup("dense", sp_.dense + sp_.replicated, ctx.layout.zero_shard, p.tp),
            WeightGroup("expert", sp_.expert, ctx.layout.expert_zero_shard, p.expert_tp * p.ep)]


def _windows(ctx: StepContext) -> tuple[float, float, int]:
    """(forward seconds of one layer, backward (+ recompute) seconds of one layer, buckets)."""
    fwd = ctx.dense_t.fwd
    bwd = 2 * fwd + fwd * recompute_share(ctx.p, ctx.layers)
    return fwd, bwd, max(1, ctx.layers)


def grad_buckets(ctx: StepContext, params: float) -> int:
    """Gradient buckets of a ZeRO-0/1/2 reduction of ``params`` local weights (elements): one per
    layer of the stage (PyTorch DDP buckets of ~25 MB hold about a layer of these models; Li et al.
    2020 Sec. 3.2.3), or, where the framework sizes its buckets by the data-parallel size
    (``FrameworkProfile.dp_bucket_min_params`` / ``dp_bucket_params_per_rank``: Megatron-Core
    ``distributed_data_parallel.py``, ``bucket_size = max(40,000,000, 1,000,000 x dp_size)``
    parameters, dp_size counting the context-parallel ranks, "larger DP sizes need larger buckets
    to ensure collectives do not become latency-bound"), ``ceil(params / bucket_size)``. Each
    bucket is one collective call with its own ring latency."""
    fw = ctx.training.framework
    if fw.dp_bucket_min_params <= 0 and fw.dp_bucket_params_per_rank <= 0:
        return max(1, ctx.layers)
    size = max(fw.dp_bucket_min_params, fw.dp_bucket_params_per_rank * ctx.p.dp * ctx.p.cp)
    return max(1, math.ceil(params / size))


def _bucket_rule(ctx: StepContext) -> str:
    """'buckets' when the reduction overlaps compute (``overlap_grad_reduce``), else 'exposed'."""
    return "buckets" if ctx.p.overlap_grad_reduce else "exposed"


def _bucketed(ctx: StepContext, t: float, window: float, buckets: int) -> float:
    """Exposed part of a per-step collective of ``t`` seconds split in per-layer buckets behind a
    compute window of ``window`` seconds: the last bucket plus what exceeds the window (Li et al.
    2020 Sec. 3.2.3). The framework's ``dp_overlap`` is the fraction of the other buckets that can
    overlap at all (1: DDP / Megatron-LM; 0: reduced after the backward)."""
    if not ctx.p.overlap_grad_reduce:
        return t
    hideable = ctx.training.framework.dp_overlap * t * (1 - 1 / buckets)
    return t - min(hideable, window)


def _replicas(ctx: StepContext, g: WeightGroup) -> list[Collective]:
    """HSDP: AllReduce of the gradient shard across the dp / dp_shard replicas, bucketed behind
    the backward like DDP: once per step, or after every microbatch's backward with
    ``hsdp_reduce='per_microbatch'`` (m times the traffic, each hidden behind its own backward)."""
    p = ctx.p
    replicas = p.dp // (p.dp_shard or 1)
    if replicas <= 1:
        return []
    size = grad_reduce_bytes(ctx.training) * g.params / g.shard
    stride = g.stride * g.shard
    _, bwd, b = _windows(ctx)
    t = ctx.bucketed_time("AllReduce", size, replicas, stride, b)
    e = _bucketed(ctx, t, ctx.layers * bwd, b)
    n, phase = (ctx.m, "bwd") if p.hsdp_reduce == "per_microbatch" else (1, "step")
    return [ctx.collective("AllReduce", "dp", "grads", phase, g.kind, size, replicas, stride, n,
                           f"{g.kind} gradients across replicas", overlap=_bucket_rule(ctx), exposed_s=e * n,
                           replicas=True, buckets=b)]


def _zero012(ctx: StepContext, g: WeightGroup) -> list[Collective]:
    """ZeRO-0: AllReduce of the gradients (and, under DeepSpeed's BF16_Optimizer, at ZeRO-0 or ZeRO-1, an AllGather
    of the updated parameters: :func:`shardplan.cost.memory.bf16_optimizer`); ZeRO-1/2: ReduceScatter + AllGather
    after the update."""
    prec, L = ctx.prec, ctx.layers
    fwd, bwd, _ = _windows(ctx)
    b = grad_buckets(ctx, g.params)
    grads = grad_reduce_bytes(ctx.training) * g.params
    bf16 = bf16_optimizer(ctx.training, ctx.layout)
    if ctx.p.zero_stage == 0 or bf16:
        n = ctx.p.dp * ctx.p.cp if g.kind == "dense" else ctx.layout.expert_dp
        t = ctx.bucketed_time("AllReduce", grads, n, g.stride, b)
        out = [ctx.collective("AllReduce", "dp", "grads", "step", g.kind, grads, n, g.stride, 1,
                              f"{g.kind} gradients", overlap=_bucket_rule(ctx), exposed_s=_bucketed(ctx, t, L * bwd, b),
                              buckets=b)]
        if bf16 and n > 1:
            # DeepSpeed BF16_Optimizer: each rank updates its dp partition, then update_lp_params all-gathers the
            # bf16 parameters inside the optimizer step (FrameworkProfile.zero0_bf16_optimizer): exposed
            params = prec.param_bytes * g.params
            ag = ctx.bucketed_time("AllGather", params, n, g.stride, b)
            out.append(ctx.collective("AllGather", "dp", "params", "step", g.kind, params, n, g.stride, 1,
                                      f"{g.kind} parameters after the BF16_Optimizer step", overlap="exposed",
                                      exposed_s=ag, buckets=b))
        return out
    rs = ctx.bucketed_time("ReduceScatter", grads, g.shard, g.stride, b)
    params = prec.param_bytes * g.params
    ag = ctx.bucketed_time("AllGather", params, g.shard, g.stride, b)
    # the parameter gather hides behind the next forward only where the framework issues it per bucket
    # (FrameworkProfile.param_gather_overlap); nanotron gathers every shard in one blocking call
    hide_ag = ctx.training.framework.param_gather_overlap
    # ZeRO-2 keeps only its gradient shard, so each microbatch's gradients are reduce-scattered after its backward
    # (module docstring); ZeRO-1 accumulates into a full buffer and reduces once per step
    n_rs = ctx.m if ctx.p.zero_stage == 2 and ctx.training.framework.zero2_accumulation == "per_microbatch" else 1
    # FSDP2's ZeRO-2 (FrameworkProfile.zero2_param_gather 'per_microbatch') reshards after each backward: every
    # microbatch's forward gathers the parameters again, hidden behind that forward as the step's one gather is
    # (not in a pipeline: torch's PipelineStage turns FSDP's reshard-after-backward off until the last microbatch)
    n_ag = (ctx.m if ctx.p.zero_stage == 2 and ctx.p.pp == 1
            and ctx.training.framework.zero2_param_gather == "per_microbatch" else 1)
    return [ctx.collective("ReduceScatter", "dp", "grads", "bwd" if n_rs > 1 else "step", g.kind, grads, g.shard,
                           g.stride, n_rs, f"{g.kind} gradients" + (" (ZeRO-2: every microbatch)" if n_rs > 1 else ""),
                           overlap=_bucket_rule(ctx), exposed_s=_bucketed(ctx, rs, L * bwd, b) * n_rs, buckets=b),
            ctx.collective("AllGather", "dp", "params", "fwd" if n_ag > 1 else "step", g.kind, params, g.shard,
                           g.stride, n_ag, f"{g.kind} parameters " + ("every microbatch's forward (FSDP2 reshards after "
                           "backward)" if n_ag > 1 else "after update"),
                           overlap=_bucket_rule(ctx) if hide_ag else "exposed",
                           exposed_s=(_bucketed(ctx, ag, L * fwd, b) if hide_ag else ag) * n_ag, buckets=b)] + _replicas(
        ctx, g)


def layer_tensors(model: ModelSpec) -> int:
    """Parameter tensors of one transformer block (count): the q, k, v and output projections and
    the MLP's matrices (``ModelSpec.mlp_matrices``), their biases (``linear_bias``: all of them;
    ``qkv_bias``: q, k, v), and two norms of one (RMSNorm) or two (LayerNorm: gain and bias)
    tensors each -- the per-tensor call count of DeepSpeed ZeRO-3 (module docstring). GPT-3 style
    block: 6 matrices + 6 biases + 4 norm tensors = 16."""
    linear = 4 + model.mlp_matrices
    biases = linear if model.linear_bias else (3 if model.qkv_bias else 0)
    return linear + biases + 2 * (1 if model.norm == "rmsnorm" else 2)


def gather_calls_per_layer(ctx: StepContext) -> int:
    """ZeRO-3 AllGather calls per layer: 1 for ``fsdp_unit='block'``, :func:`layer_tensors` for
    ``'tensor'``."""
    return layer_tensors(ctx.model) if ctx.p.fsdp_unit == "tensor" else 1


def host_copy_s(ctx: StepContext, g: WeightGroup, buckets: int) -> float:
    """Seconds to copy one gather unit's offloaded parameter shard from host memory to the device
    (``ParallelConfig.offload_params``; 0 otherwise): each rank copies its own 1/shard of the unit
    over its own host link (ZeRO-Infinity's bandwidth-centric partitioning, Rajbhandari et al. 2021 Sec. 6.1;
    FSDP2's H2D copy before the all-gather, pytorch/pytorch pull 120256), then the AllGather runs.
    E.g. a 200M-parameter layer, fp32 shards (FSDP) over 8 ranks, 25 GB/s: 4 B x 2e8 / 8 / 25e9 = 4 ms."""
    if not ctx.p.offload_params:
        return 0.0
    shard = offloaded_shard_bytes(ctx.training) * g.params / g.shard / buckets
    return shard / require_host_link(ctx.hw, "offload_params", True)


def _zero3_exposed(ctx: StepContext, ag: float, rs: float) -> tuple[float, float, float, float]:
    """Exposed seconds of one microbatch's ZeRO-3 gathers and reductions for a gather of ``ag`` and a reduction of
    ``rs`` seconds per unit (module docstring): (forward gathers, backward gathers, backward reductions, the
    once-per-step gather of ``zero3_gather='per_step'``, per flush)."""
    fwd, bwd, buckets = _windows(ctx)
    # forward: the first layer's gather is exposed; the prefetchable share of each later one hides behind the
    # previous layer's forward (FrameworkProfile.zero3_prefetch)
    pre = ctx.training.framework.zero3_prefetch
    # one gather buffer (FrameworkProfile.zero3_gather_buffers = 1): a gather waits for the previous unit's
    # weights to be freed, so none hides behind compute; the gradients' ReduceScatter still does
    serial = ctx.training.framework.zero3_gather_buffers == 1 and ctx.p.zero3_gather != "per_step"
    exp_ag = buckets * ag if serial else ag + (buckets - 1) * (ag - pre * min(ag, fwd))
    if ctx.p.zero3_gather == "per_step":
        return 0.0, 0.0, buckets * (rs - pre * min(rs, bwd)), exp_ag
    # backward: gather + reduce-scatter of a layer behind its backward
    # the exposed backward split between the two in proportion to their times (serialized: the gathers whole)
    if serial:
        return exp_ag, buckets * ag, buckets * (rs - pre * min(rs, bwd)), 0.0
    exp_bwd = buckets * (ag + rs - pre * min(ag + rs, bwd))
    ag_share = ag / (ag + rs) if ag + rs > 0 else 0.0
    return exp_ag, exp_bwd * ag_share, exp_bwd * (1 - ag_share), 0.0


def _zero3(ctx: StepContext, g: WeightGroup) -> tuple[list[Collective], float, float, float]:
    """ZeRO-3 collectives and their exposed seconds (per microbatch, per step), and the exposed seconds per
    microbatch of the offloaded shards' host copies (:func:`host_copy_s`: each runs before its unit's AllGather on
    the same stream, so it is priced as the gather lengthened by the copy, less the gather alone)."""
    m = ctx.m
    _, _, buckets = _windows(ctx)
    params, grads = zero3_gather_bytes(ctx.training) * g.params, grad_reduce_bytes(ctx.training) * g.params
    # one call per gather unit (a layer, or each of its tensors), each with its own latency
    calls = gather_calls_per_layer(ctx)
    share = ctx.training.framework.zero3_nic_share
    ag = calls * ctx.call_time("AllGather", params / buckets / calls, g.shard, g.stride, share) if g.shard > 1 else 0.0
    rs = ctx.call_time("ReduceScatter", grads / buckets, g.shard, g.stride, share) if g.shard > 1 else 0.0
    exp_ag, exp_bwd_ag, exp_bwd_rs, exp_step = _zero3_exposed(ctx, ag, rs)
    copy = host_copy_s(ctx, g, buckets)
    with_copy = sum(_zero3_exposed(ctx, ag + copy, rs)) - (exp_ag + exp_bwd_ag + exp_bwd_rs + exp_step) if copy else 0.0
    # each pipeline flush reshards after its last backward and gathers again (pipeline_flushes)
    f = ctx.p.pipeline_flushes if ctx.p.pp > 1 else 1
    if ctx.p.zero3_gather == "per_step":  # the copy lengthens the once-per-flush gather: spread over the microbatches
        with_copy *= f / m
    if g.shard == 1:  # offloaded but unsharded: no gather; the replicas' AllReduce stays
        return _replicas(ctx, g), 0.0, 0.0, with_copy
    args = (g.kind, params, g.shard, g.stride)
    kw = {"overlap": "prefetch", "buckets": buckets * calls, "link_share": share}
    kw_rs = {"overlap": "prefetch", "buckets": buckets, "link_share": share}
    if ctx.p.zero3_gather == "per_step":
        when = "once per step" if f == 1 else f"once per pipeline flush, {f} per step"
        out = [ctx.collective("AllGather", "dp", "params", "step", *args, f,
                              f"{g.kind} parameters (ZeRO-3, {when})", exposed_s=exp_step * f, **kw),
               ctx.collective("ReduceScatter", "dp", "grads", "bwd", g.kind, grads, g.shard, g.stride, m,
                              f"{g.kind} gradients", exposed_s=exp_bwd_rs * m, **kw_rs)]
        return out + _replicas(ctx, g), exp_bwd_rs, exp_step * f, with_copy
    out = [ctx.collective("AllGather", "dp", "params", "fwd", *args, m, f"{g.kind} parameters (ZeRO-3 forward)",
                          exposed_s=exp_ag * m, **kw),
           ctx.collective("AllGather", "dp", "params", "bwd", *args, m, f"{g.kind} parameters (ZeRO-3 backward)",
                          exposed_s=exp_bwd_ag * m, **kw),
           ctx.collective("ReduceScatter", "dp", "grads", "bwd", g.kind, grads, g.shard, g.stride, m,
                          f"{g.kind} gradients", exposed_s=exp_bwd_rs * m, **kw_rs)]
    return out + _replicas(ctx, g), exp_ag + exp_bwd_ag + exp_bwd_rs, 0.0, with_copy


def embedding_group(ctx: StepContext) -> list[Collective]:
    """Tied embeddings with pp > 1: the first stage (embedding) and the last (LM head) each hold a
    copy of the word embedding, and after the data-parallel reduction the two copies' gradients are
    all-reduced over the *embedding group* (those two ranks, ``(pp - 1) tp cp dp`` apart) once per
    step, exposed, so that both apply the same update (Megatron-LM
    ``megatron/core/distributed/finalize_model_grads.py`` ``_allreduce_word_embedding_grads``;
    Narayanan et al. 2021 keep the shared embedding on both stages). Size: the fp32 gradient of
    the ``V / t`` x h table shard."""
    p, model = ctx.p, ctx.model
    if p.pp == 1 or not model.tied_embeddings:
        return []
    size = ctx.prec.grad_bytes * ctx.layout.vocab_per_rank(model.vocab_size) * model.d_model
    stride = (p.pp - 1) * p.tp * p.cp * p.dp
    return [ctx.collective("AllReduce", "pp", "grads", "step", "embedding_head", size, 2, stride, 1,
                           "tied embedding gradients over the embedding group (first + last stage)")]


def collectives(ctx: StepContext) -> DataParallelCost:
    """All dp collectives of one step and their exposed seconds (module docstring), and the tied
    embedding's all-reduce over the embedding group (:func:`embedding_group`, per step)."""
    out: list[Collective] = embedding_group(ctx)
    per_mb, per_step, copies = 0.0, sum(c.exposed_s for c in out), 0.0
    for g in weight_groups(ctx):
        if g.params == 0:
            continue
        if ctx.p.zero_stage == 3 and g.shard == 1 and not ctx.p.offload_params:
            # nothing sharded to gather, but the replicas still all-reduce the gradients (HSDP with dp_shard = ep
            # leaves the experts whole on each rank; new-user pass 55b: the 31.5 GiB expert AllReduce was dropped)
            cs = _replicas(ctx, g)
            per_step += sum(c.exposed_s for c in cs)
            out += cs
            continue
        if ctx.p.zero_stage <= 2:
            cs = _zero012(ctx, g)
            per_step += sum(c.exposed_s for c in cs)
        else:
            cs, mb, st, copy = _zero3(ctx, g)
            per_mb += mb
            copies += copy
            per_step += st + sum(c.exposed_s for c in cs if c.replicas)
        out += cs
    return DataParallelCost(out, per_mb, per_step, copies)
