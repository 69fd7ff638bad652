"""Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) with optional sequence parallelism
(Korthikanti et al. 2022): the collectives of one step over the tp group.

Per transformer layer (tables below, one row per collective): without sequence parallelism the
``g`` operator all-reduces the outputs of the two row-parallel projections in the forward and the
``f`` operator the input gradients of the two column-parallel ones in the backward (Shoeybi et
al. 2019 Fig. 3); with sequence parallelism each AllReduce becomes an AllGather before the
column-parallel projection and a ReduceScatter after the row-parallel one, and the backward also
re-gathers the two block inputs for the weight gradients (Korthikanti et al. 2022 Sec. 4.2.2,
Fig. 5). Full recompute repeats the forward collectives in the backward. Each carries the local
activations ``beta u h`` (u = local tokens per microbatch).

Per microbatch: the vocab-parallel embedding's output and the LM head's input (one of them per
stage with pp > 1; Megatron-LM VocabParallelEmbedding / ColumnParallelLinear) and the
vocab-parallel cross-entropy's three fp32 all-reduces per token (max logit, target logit, sum of
exponentials; Megatron-LM ``_VocabParallelCrossEntropy``). Per step, with sequence parallelism,
the AllReduce of the norm-weight gradients (Megatron-LM ``_allreduce_layernorm_grads``).

``tp_overlap`` (Transformer Engine userbuffers, Megatron-LM ``--tp-comm-overlap``; Wang et al.
2023) hides the per-layer activation collectives behind the stage's matmuls: only the part longer
than the matmul time stays exposed.

An MoE layer keeps the attention rows of the tables over tp, but in place of its MLP rows the token
dispatcher gathers the tokens before the experts and reduce-scatters their outputs (``MOE_DISPATCH``:
two calls per pass, no weight-gradient re-gather, as the grouped GEMMs keep the gathered tokens), over the expert tensor-parallel group (``etp``, Megatron-LM
``--expert-tensor-parallel-size``, tp by default; Liu et al. 2025, "MoE Parallel Folding", Sec. 3) on
the dispatched tokens, ``beta (u / tp) etp top_k load h`` bytes each (each tp rank dispatches its
sequence shard, top_k copies per token, ``load`` = ``TrainingSpec.moe_load``, the busiest rank's
share as the AllToAll's). Megatron-Core's ``MoEAlltoAllTokenDispatcher`` issues them itself after the
AllToAll (``gather_from_sequence_parallel_region`` over the expert-tp group before the experts,
``reduce_scatter_to_sequence_parallel_region`` after them, megatron/core/transformer/moe/
token_dispatcher.py ``dispatch_postprocess`` / ``combine_preprocess``), in line on the compute stream,
not through the Transformer Engine linears whose userbuffers ``tp_overlap`` chunks (MindSpeed's
"alltoall dispatcher" note calls this gather serial and adds ``--moe-permutation-async-comm`` to
overlap it), so they stay exposed with ``tp_overlap`` on. With etp = 1 they vanish (every expert is
whole on its rank); with ``moe_dispatcher='allgather'`` the ep module gathers the tokens over the etp x
ep group in their place, and with 'deepep' the flex dispatcher sends each token to every expert-tp rank of
its experts over that group (:mod:`shardplan.cost.axes.ep`).
"""

from __future__ import annotations

from dataclasses import replace

from shardplan.cost.axes import LayerCall, recomputed, tally
from shardplan.cost.collective import Collective
from shardplan.cost.comm import group_split
from shardplan.cost.context import StepContext
from shardplan.parallel import recompute_share

#: per layer, without sequence parallelism (Shoeybi et al. 2019 Fig. 3)
MEGATRON: tuple[LayerCall, ...] = (
    LayerCall("AllReduce", "fwd", "attention output after the row-parallel output projection (g)"),
    LayerCall("AllReduce", "fwd", "MLP output after the row-parallel down projection (g)"),
    LayerCall("AllReduce", "bwd", "input gradient of the column-parallel QKV projection (f)"),
    LayerCall("AllReduce", "bwd", "input gradient of the column-parallel gate/up projection (f)"),
)
#: per layer, with sequence parallelism (Korthikanti et al. 2022 Sec. 4.2.2, Fig. 5)
SEQUENCE_PARALLEL: tuple[LayerCall, ...] = (
    LayerCall("AllGather", "fwd", "attention block input before QKV (g)"),
    LayerCall("ReduceScatter", "fwd", "attention output after the output projection (g-bar)"),
    LayerCall("AllGather", "fwd", "MLP block input before gate/up (g)"),
    LayerCall("ReduceScatter", "fwd", "MLP output after the down projection (g-bar)"),
    LayerCall("AllGather", "bwd", "gradient of the attention output (transpose of g-bar)"),
    LayerCall("AllGather", "bwd", "gradient of the MLP output (transpose of g-bar)"),
    LayerCall("ReduceScatter", "bwd", "input gradient of QKV (transpose of g)"),
    LayerCall("ReduceScatter", "bwd", "input gradient of gate/up (transpose of g)"),
    LayerCall("AllGather", "bwd", "attention block input re-gathered for the QKV weight gradient"),
    LayerCall("AllGather", "bwd", "MLP block input re-gathered for the gate/up weight gradient"),
)
#: per MoE layer with etp > 1: the token dispatcher's own collectives over the expert-tp group (module
#: docstring; megatron/core/transformer/moe/token_dispatcher.py MoEAlltoAllTokenDispatcher: the backward of an
#: AllGather is a ReduceScatter and the reverse; the grouped GEMMs keep the gathered tokens for their weight
#: gradients, so there is no re-gather as the sequence-parallel linears have)
MOE_DISPATCH: tuple[LayerCall, ...] = (
    LayerCall("AllGather", "fwd", "dispatched tokens gathered over the expert-tp group before the experts"),
    LayerCall("ReduceScatter", "fwd", "expert outputs reduce-scattered back after the experts"),
    LayerCall("ReduceScatter", "bwd", "gradient of the dispatched-token gather"),
    LayerCall("AllGather", "bwd", "gradient of the expert-output reduce-scatter"),
)
#: per microbatch on the first stage: the vocab-parallel embedding's output
EMBEDDING = {False: (LayerCall("AllReduce", "fwd", "embedding output (vocab-parallel lookup)"),),
             True: (LayerCall("ReduceScatter", "fwd", "embedding output to sequence shards"),
                    LayerCall("AllGather", "bwd", "embedding output gradient")),}
#: per microbatch on the last stage: the column-parallel LM head's input
HEAD = {False: (LayerCall("AllReduce", "bwd", "LM head input gradient (f)"),),
        True: (LayerCall("AllGather", "fwd", "LM head input from sequence shards"),
               LayerCall("ReduceScatter", "bwd", "LM head input gradient to sequence shards"))}
#: fp32 statistics per token of the vocab-parallel cross-entropy (Megatron-LM)
CROSS_ENTROPY_ALLREDUCES = 3


def layer_schedule(sp: bool, recompute: str) -> tuple[LayerCall, ...]:
    """The tp collectives of one transformer layer, forward then backward (recompute included)."""
    base = SEQUENCE_PARALLEL if sp else MEGATRON
    return base + (recomputed(base) if recompute == "full" else ())


def embedding_head_schedule(sp: bool, pp: int, stage: int) -> tuple[LayerCall, ...]:
    """Per-microbatch embedding / LM-head collectives of ``stage``: both without pipeline
    parallelism; with pp > 1 the first stage's embedding or else the last stage's head (a middle
    stage is charged the head's, as the stage that sets the pace is the first or the last)."""
    if pp == 1:
        return EMBEDDING[sp] + HEAD[sp]
    return EMBEDDING[sp] if stage == 0 else HEAD[sp]


def collectives(ctx: StepContext) -> list[Collective]:
    """All tp collectives of one step on the slowest stage (module docstring); [] for tp = 1."""
    p, m, L = ctx.p, ctx.m, ctx.layers
    if p.tp == 1:
        return []
    act = ctx.prec.activation_bytes * ctx.layout.local_tokens * ctx.model.d_model
    out = _overlap_with_matmuls(ctx, _layer_calls(ctx, act)) if p.tp_overlap else _layer_calls(ctx, act)
    out += [ctx.collective(op, "tp", "activations", ph, "embedding_head", act, p.tp, 1, n * m, "LM head / embedding")
            for op, ph, n in tally(embedding_head_schedule(p.sp, p.pp, ctx.stage.stage))]
    out.append(ctx.collective("AllReduce", "tp", "loss", "fwd", "embedding_head", 4.0 * ctx.layout.local_tokens,
                              p.tp, 1, CROSS_ENTROPY_ALLREDUCES * m, "cross-entropy (vocab parallel)"))
    if p.sp:
        # norm weights are replicated over tp but see 1/tp of the sequence: their gradients are
        # all-reduced over tp once per step (Korthikanti et al. 2022 Sec. 4.2.2)
        norm_bytes = ctx.prec.grad_bytes * ctx.stage.params.replicated
        out.append(ctx.collective("AllReduce", "tp", "norm_grads", "step", "layers", norm_bytes, p.tp, 1, 1,
                                  "norm gradients (sequence parallel)"))
    return out


def _is_mlp(call: LayerCall) -> bool:
    return "MLP" in call.what or "gate/up" in call.what


def _layer_calls(ctx: StepContext, act: float) -> list[Collective]:
    """The per-layer rows of every layer; with etp != tp the MoE layers' MLP rows over etp
    (module docstring). Full recompute repeats the forward calls of the recomputed layers
    (:func:`~shardplan.parallel.recompute_share`: all, or ``recompute_layers`` per chunk)."""
    p = ctx.p
    base = SEQUENCE_PARALLEL if p.sp else MEGATRON
    share = recompute_share(p, ctx.layers)
    if share in (0.0, 1.0):  # every layer alike: one row per op and phase
        return _rows(ctx, act, layer_schedule(p.sp, p.recompute), 1.0)
    return _rows(ctx, act, base, 1.0) + _rows(ctx, act, recomputed(base), share)


def _rows(ctx: StepContext, act: float, sched: tuple[LayerCall, ...], share: float) -> list[Collective]:
    """:func:`_layer_calls`' rows of ``sched`` on ``share`` of the stage's layers."""
    p, m, L = ctx.p, ctx.m, ctx.layers
    label = "activations (sequence parallel)" if p.sp else "activations (Megatron f/g)"
    overlap = "tp_overlap" if p.tp_overlap else "exposed"
    etp, moe_l = p.expert_tp, ctx.moe_layers
    if not moe_l:
        return [ctx.collective(op, "tp", "activations", ph, "layers", act, p.tp, 1, n * L * m * share, label,
                               overlap=overlap) for op, ph, n in tally(sched)]
    attn = tuple(c for c in sched if not _is_mlp(c))
    mlp = tuple(c for c in sched if _is_mlp(c))
    out = [ctx.collective(op, "tp", "activations", ph, "layers", act, p.tp, 1, n * L * m * share, label,
                          overlap=overlap) for op, ph, n in tally(attn)]
    out += [ctx.collective(op, "tp", "activations", ph, "layers", act, p.tp, 1, n * (L - moe_l) * m * share, label,
                           overlap=overlap) for op, ph, n in tally(mlp) if L > moe_l]
    if etp > 1 and p.moe_dispatcher == "alltoall":
        # the dispatcher's own gather / scatter of the dispatched tokens: exposed (module docstring); ``sched`` is
        # the layer's calls, their recomputed forward, or both, and the dispatcher's follow it
        again = recomputed(MOE_DISPATCH) if any(c.what.endswith("(recomputed)") for c in sched) else ()
        calls = (MOE_DISPATCH if any(c.phase == "fwd" for c in sched) else ()) + again
        out += [ctx.collective(op, "tp", "tokens", ph, "layers", dispatched_bytes(ctx), etp, 1, n * moe_l * m * share,
                               "dispatched tokens (expert tensor parallel, MoE token dispatcher)")
                for op, ph, n in tally(calls)]
    return out


def dispatched_bytes(ctx: StepContext) -> float:
    """Bytes of one expert-tp gather (or scatter) of an MoE layer's dispatched tokens on the busiest rank:
    ``beta (u / tp) etp top_k load h`` (module docstring). Example: Mixtral-8x22B (h 6,144, top 2), 4,096
    local tokens, bf16, tp = etp = 2, balanced routing: 2 x 2,048 x 2 x 2 x 6,144 = 100,663,296 B, twice the
    block input's 50,331,648 B that a dense layer's gather moves."""
    p, mdl = ctx.p, ctx.model
    return (ctx.prec.activation_bytes * ctx.layout.local_tokens / p.tp * p.expert_tp * mdl.top_k
            * ctx.training.moe_load * mdl.d_model)


def _overlap_with_matmuls(ctx: StepContext, layer_calls: list[Collective]) -> list[Collective]:
    """``tp_overlap``: the per-layer activation collectives run concurrently with the stage's
    matmuls (3 x forward matmul time per layer and microbatch); only what exceeds them is exposed,
    shared pro rata over the collectives. The MoE dispatcher's rows (overlap 'exposed') stay as they are."""
    total = sum(c.time_s for c in layer_calls if c.overlap == "tp_overlap")
    mm = ctx.dense_t.fwd_mm if ctx.moe_layers < ctx.layers else ctx.moe_t.fwd_mm
    hide = ctx.m * ctx.layers * 3 * mm
    if total <= 0:
        return layer_calls
    keep = max(0.0, total - hide) / total
    return [replace(c, exposed_s=c.time_s * keep) if c.overlap == "tp_overlap" else c for c in layer_calls]


def host_seconds_per_layer(ctx: StepContext) -> float:
    """Host (CPU) seconds to issue one layer's forward + backward on one microbatch: the
    framework's ``layer_host_s``, plus, when the pipeline crosses nodes (pp > 1,
    :func:`pipeline_crosses_domains`), ``pp_tp_host_step_s`` x (tp - 1) ring steps x the
    layer's tp collectives (:func:`layer_schedule`; 10 with sequence parallelism). Example: tp=8
    with SP, pp=2, 0.3 ms per step: 10 x 7 x 0.3 ms = 21 ms per layer on top of ``layer_host_s``.
    Source of the pp term: :class:`~shardplan.specs.framework.FrameworkProfile` (nanotron p2p)."""
    fw, p = ctx.training.framework, ctx.p
    host = fw.layer_host_s
    if p.pp > 1 and p.tp > 1 and pipeline_crosses_domains(ctx):
        host += fw.pp_tp_host_step_s * (p.tp - 1) * len(layer_schedule(p.sp, p.recompute))
    return host


def pipeline_crosses_domains(ctx: StepContext) -> bool:
    """The pipeline group (ranks tp x cp x dp apart, pp the outermost axis) spans more than one
    scale-up domain, so some stage boundary's messages go over the scale-out network."""
    p = ctx.p
    return group_split(p.pp, p.tp * p.cp * p.dp, ctx.hw.scale_up_size)[1] > 1
