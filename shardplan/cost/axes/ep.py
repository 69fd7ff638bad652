"""Expert parallelism (GShard, Lepikhin et al. 2021; Switch, Fedus et al. 2022 Sec. 2.2): the
AllToAll token dispatch and combine of every MoE layer over the ep group.

Per MoE layer and microbatch: dispatch and combine in the forward, their transposes in the
backward (and the forward pair again with full recompute, or Megatron-LM's ``--recompute-modules
moe``). Each device sends its local tokens' ``top_k`` copies: ``beta (u / tp) top_k h`` bytes (tp ranks split the tokens among them before
dispatch, Megatron-LM's MoE token dispatcher), times ``TrainingSpec.moe_load``: the capacity
factor with token dropping (fixed-size buffers per expert, Switch Transformer Sec. 2.2) or the
dropless imbalance (the busiest rank receives that much more). Exposed (not overlapped), unless
``moe_a2a_overlap`` (Megatron-Core's Combined 1F1B, :func:`combined_1f1b`) pairs microbatches.

With ``moe_dispatcher='allgather'`` (Megatron-LM's default token dispatcher) every rank's tokens are gathered over
the expert tensor x expert parallel group and the expert outputs reduce-scattered back: an AllGather and a
ReduceScatter of the group's tokens per MoE layer and direction, whatever the routing (``MOE_LAYER_ALLGATHER``).

With ``moe_dispatcher='deepep'`` (DeepEP; DeepSeek-V3 technical report, Liu et al. 2024, Sec. 3.2.2:
tokens cross the scale-out network once per destination node and are forwarded to that node's
experts over NVLink; inside a node once per destination rank) the bytes shrink from one copy per
remote expert to one per remote node, or per remote rank when the group sits in one node
(:func:`deepep_copy_share`; how many a token hits depends on the routing, ``TrainingSpec.moe_routing``).
"""

from __future__ import annotations

import math
from dataclasses import replace

from shardplan.cost.axes import LayerCall, recomputed, tally
from shardplan.cost.collective import Collective
from shardplan.cost.comm import group_split
from shardplan.cost.context import StepContext
from shardplan.parallel import named_remat, recompute_share

#: per MoE layer
MOE_LAYER: tuple[LayerCall, ...] = (
    LayerCall("AllToAll", "fwd", "dispatch tokens to their experts"),
    LayerCall("AllToAll", "fwd", "combine expert outputs"),
    LayerCall("AllToAll", "bwd", "gradient of the combine"),
    LayerCall("AllToAll", "bwd", "gradient of the dispatch"),
)


#: per MoE layer under Megatron-LM's all-gather dispatcher (megatron/core/transformer/moe/token_dispatcher.py
#: MoEAllGatherTokenDispatcher: gather_from_sequence_parallel_region over the tp x ep group before the local
#: permutation, reduce_scatter_to_sequence_parallel_region after the experts; the backward of an AllGather is a
#: ReduceScatter and the reverse)
MOE_LAYER_ALLGATHER: tuple[LayerCall, ...] = (
    LayerCall("AllGather", "fwd", "gather every token for the local experts"),
    LayerCall("ReduceScatter", "fwd", "reduce-scatter the expert outputs"),
    LayerCall("AllGather", "bwd", "gradient of the combine"),
    LayerCall("ReduceScatter", "bwd", "gradient of the dispatch"),
)


def expected_hits(n_experts: int, top_k: int, units: int, routing: str = "uniform") -> float:
    """Expected number of ``units`` equal contiguous blocks of experts (the ep ranks, or the nodes, each
    holding ``n_experts / units`` experts in order: expert parallelism shards the expert dimension in
    contiguous slices, Megatron-Core ``moe_layer`` local expert indices, PyTorch ``Shard(0)``) that
    one token's ``top_k`` experts fall in.

    ``routing`` (:attr:`~shardplan.specs.training.TrainingSpec.moe_routing`): 'uniform', top_k distinct
    experts uniformly at random: a block is missed with probability ``C(E - E/units, k) / C(E, k)``, so
    ``units (1 - that)``; 'round_robin', token i takes experts ``i k .. i k + k - 1`` (mod E): the mean,
    over the start offsets ``i k mod E`` (the multiples of gcd(k, E), equally often), of the blocks the
    window of k experts spans. Examples: E = 128, k = 8, 8 blocks of 16: uniform
    ``8 (1 - C(112, 8) / C(128, 8)) = 5.34``, round-robin 1 (every window sits in one block);
    E = 256, k = 8, 64 blocks of 4: round-robin 2.
    """
    if units <= 1 or n_experts < units:
        return 1.0
    size = n_experts // units
    if routing == "round_robin":
        starts = range(0, n_experts, math.gcd(n_experts, top_k))
        return sum(len({((s + j) % n_experts) // size for j in range(top_k)}) for s in starts) / len(starts)
    return units * (1 - math.comb(n_experts - size, top_k) / math.comb(n_experts, top_k))


def deepep_copy_share(n_experts: int, top_k: int, ep: int, per_node: int, routing: str = "uniform") -> float:
    """Bytes of a DeepEP dispatch as a fraction of an AllToAll's, on the link that sets its time.

    An AllToAll sends a token once per routed expert held elsewhere: ``k (ep - 1) / ep`` copies inside one
    node, ``k (ep - per_node) / ep`` across the network when the group spans nodes. DeepEP sends it once
    per destination rank inside a node (its dispatch layout marks ``is_token_in_rank``, one row per token
    and rank; deepseek-ai/DeepEP ``Buffer.get_dispatch_layout``) and once per destination node across
    nodes, forwarded to that node's ranks over NVLink (DeepSeek-V3 technical report, Liu et al. 2024,
    Sec. 3.2.2). With the ``ep / per_node`` nodes (or the ep ranks, in one node) hit
    :func:`expected_hits` times by a token, and a token's source as likely any of them, DeepEP's copies are
    ``hits (units - 1) / units``. Example: Qwen3-235B-A22B, 128 experts, top 8, ep = 32 over 4 nodes,
    uniform routing: ``C(96, 8) / C(128, 8) = 0.0928``, ``3 x 0.907 = 2.72`` copies against
    ``8 x 24/32 = 6``: 0.454; in one node (ep = 8) ``5.34 x 7/8 = 4.67`` against 7: 0.667;
    round-robin routing in one node: ``1 x 7/8`` against 7: 0.125.
    """
    nodes = max(1, ep // max(1, per_node))
    units, base = (nodes, top_k * (ep - per_node) / ep) if nodes > 1 else (ep, top_k * (ep - 1) / ep)
    if units <= 1 or n_experts < units or base <= 0:
        return 1.0
    return min(1.0, expected_hits(n_experts, top_k, units, routing) * (units - 1) / units / base)


def collectives(ctx: StepContext) -> list[Collective]:
    """The dispatch / combine AllToAlls of one step (module docstring); [] for ep = 1 or a stage
    without MoE layers."""
    p, m = ctx.p, ctx.m
    if p.ep == 1 or not ctx.moe_layers:
        return []
    # the busiest rank's payload: capacity-padded buffers, or the dropless imbalance (TrainingSpec.moe_load)
    payload = (ctx.prec.activation_bytes * (ctx.layout.local_tokens / p.tp) * ctx.model.top_k * ctx.model.d_model
               * ctx.training.moe_load)
    # full recompute repeats the forward AllToAlls of the recomputed layers (all, or recompute_layers per chunk: their
    # share of the stage's MoE layers taken as of its layers), selective with 'moe' those of every MoE layer
    # (MaxText's 'minimal', a full remat keeping named outputs, repeats every MoE layer's)
    again = (named_remat(p, ctx.training.framework.selective_recompute) is not None
             or (p.recompute == "selective" and "moe" in (p.recompute_modules or ())))
    share = recompute_share(p, ctx.layers) if p.recompute == "full" else float(again)
    layer = MOE_LAYER_ALLGATHER if p.moe_dispatcher == "allgather" else MOE_LAYER
    calls = layer + (recomputed(layer) if share == 1.0 else ())
    # the ep group's ranks are etp apart (tp apart by default; Megatron-LM folds ep over tp ranks when etp < tp)
    purpose, n, stride = "token dispatch / combine", p.ep, p.expert_tp
    if p.moe_dispatcher == "allgather":
        # every rank's tokens (local / tp) gathered over the etp x ep group, whatever the routing: the full buffer
        # is the group's tokens, one copy each (no top_k, no load imbalance; each rank keeps the rows for its experts)
        n, stride = p.ep * p.expert_tp, 1
        payload = ctx.prec.activation_bytes * (ctx.layout.local_tokens / p.tp) * ctx.model.d_model * n
        purpose = "token all-gather / reduce-scatter (Megatron-LM's allgather dispatcher)"
    if p.moe_dispatcher == "deepep":
        # the AllToAll's payload scaled to the copies DeepEP sends: its time is set by the scale-out part
        # (the NVLink forwarding inside the destination node runs beside it at ~9x the bandwidth). With etp > 1 the
        # flex dispatcher runs over the etp x ep group and sends each token to every expert-tp rank of its experts
        # (Megatron-Core MoEFlexTokenDispatcher: _DeepepManager(group=tp_ep_group, router_topk=tp_size x top_k,
        # num_experts=tp_size x E)), no separate expert-tp gather: over etp x ep ranks (an expert's etp ranks
        # adjacent, in one node) it sends a token once per node hit across nodes, as with etp = 1, and inside one
        # node once per rank hit, etp x the ranks of the experts hit
        etp, mdl = p.expert_tp, ctx.model
        n, stride = p.ep * etp, 1
        per_node = group_split(n, 1, ctx.hw.scale_up_size)[0]
        if per_node < n:
            payload *= deepep_copy_share(mdl.n_experts, mdl.top_k, n, per_node, ctx.training.moe_routing)
        else:
            payload *= etp * deepep_copy_share(mdl.n_experts, mdl.top_k, p.ep, p.ep, ctx.training.moe_routing)
        purpose = "token dispatch / combine (DeepEP: one copy per remote rank, or node across nodes)"
    phase = {"fwd": "forward", "bwd": "backward: their gradients" + (", and the recomputed forward's"
                                                                     if share == 1.0 else "")}
    out = [ctx.collective(op, "ep", "tokens", ph, "layers", payload, n, stride, k * ctx.moe_layers * m,
                          f"{purpose} ({phase.get(ph, ph)})") for op, ph, k in tally(calls)]
    if 0 < share < 1:
        out += [ctx.collective(op, "ep", "tokens", ph, "layers", payload, n, stride,
                               k * ctx.moe_layers * m * share, f"{purpose} (the recomputed layers' forward)")
                for op, ph, k in tally(recomputed(layer))]
    return combined_1f1b(ctx, out) if p.moe_a2a_overlap or (p.pp > 1 and p.schedule == "dualpipe") else out


def unpaired_fraction(ctx: StepContext) -> float:
    """Share of the step's microbatch passes that Combined 1F1B leaves unpaired on the busiest rank
    (pipeline rank 0): without pipelining the first forward and the last backward, 1 / m of each
    direction; under DualPipe ``(1.5 pp - 1) / m`` (the warm-up and cool-down chunks it runs alone);
    with the interleaved schedule the warm-up forwards and the cool-down backwards,
    ``2 (pp - 1) + (v - 1) pp + 1`` of the ``m v`` chunk passes (Megatron-Core schedules.py
    ``get_pp_rank_microbatches``: rank 0's warm-up count, one more with the overlap on), at most all of them."""
    p, m = ctx.p, ctx.m
    if p.pp == 1:
        return 1.0 / m
    if p.schedule == "dualpipe":
        # deepseek-ai/DualPipe dualpipe.py step(): rank 0 overlaps 2 (m/2 - pp + 1) forward-backward pairs in its
        # main step and pp/2 - 1 more after it, m - 1.5 pp + 1 of its m forward passes (per flush)
        mf = m / p.pipeline_flushes
        return min(1.0, (1.5 * p.pp - 1) / mf)
    v = p.virtual_stages
    # + 1: Combined 1F1B schedules one extra warm-up forward (Megatron-Core schedules.py)
    return min(1.0, (2 * (p.pp - 1) + (v - 1) * p.pp + 1) / (m * v))


def combined_1f1b(ctx: StepContext, colls: list[Collective]) -> list[Collective]:
    """``moe_a2a_overlap``: Megatron-Core's Combined 1F1B co-schedules the forward of one microbatch with
    the backward of another, layer by layer, so that "EP A2A in forward step is hidden by the
    attention/mlp computation in the backward step, and vice versa" (Megatron-Core
    pipeline_parallel/combined_1f1b.py ``combined_1f1b_schedule_for_no_pipelining``). A forward AllToAll
    of a paired pass hides behind the partner's backward compute (2/3 of a microbatch's stage compute,
    Narayanan et al. 2021 Sec. 5.1) and a backward one behind the partner's forward (1/3); the unpaired
    passes (:func:`unpaired_fraction`) and whatever exceeds the partner's compute stay exposed. The
    hidden part still slows the compute beside it (``overlap_slowdown``, :mod:`shardplan.cost.step`).

    That much is the schedule's upper bound; the framework hides ``FrameworkProfile.a2a_overlap_share`` of it
    (measured: about half, the source of the megatron preset's value). The search never turns it on by itself."""
    u, m = unpaired_fraction(ctx), ctx.m
    # DualPipe's own overlapped forward-backward chunks hide all of it: "both all-to-all and PP communication can be
    # fully hidden during execution" (DeepSeek-V3 report Sec. 3.2.1, with its custom dispatch/combine kernels)
    share = 1.0 if ctx.p.schedule == "dualpipe" and ctx.p.pp > 1 else ctx.training.framework.a2a_overlap_share
    window = {"fwd": 2 / 3 * ctx.stage.total_s * m, "bwd": 1 / 3 * ctx.stage.total_s * m}
    out = []
    for c in colls:
        paired = (1 - u) * c.time_s
        bound = u * c.time_s + max(0.0, paired - (1 - u) * window.get(c.phase, 0.0))  # all the hideable hidden
        out.append(replace(c, exposed_s=c.time_s - share * (c.time_s - bound),
                           overlap="dualpipe" if ctx.p.schedule == "dualpipe" and ctx.p.pp > 1 else "combined_1f1b"))
    return out
