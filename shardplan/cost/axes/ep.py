"""Expert parallelism (GShard, Lepikhin et al. 2021; Switch, Fedus et al. 2022 Sec. 2.2): the
AllToAll token dispatch and combine of every MoE layer over the ep group.

Per MoE layer and microbatch: dispatch and combine in the forward, their transposes in the
backward (and the forward pair again with full recompute, or Megatron-LM's ``--recompute-modules
moe``). Each device sends its local tokens' ``top_k`` copies: ``beta (u / tp) top_k h`` bytes (tp ranks split the tokens among them before
dispatch, Megatron-LM's MoE token dispatcher), times ``TrainingSpec.moe_load``: the capacity
factor with token dropping (fixed-size buffers per expert, Switch Transformer Sec. 2.2) or the
dropless imbalance (the busiest rank receives that much more). Exposed (not overlapped).

With ``moe_dispatcher='deepep'`` (DeepEP; DeepSeek-V3 technical report, Liu et al. 2024, Sec. 3.2.2:
tokens cross the scale-out network once per destination node and are forwarded to that node's
experts over NVLink) the scale-out bytes shrink from one copy per remote expert to one per remote
node (:func:`deepep_scale_out_share`).
"""

from __future__ import annotations

import math

from shardplan.cost.axes import LayerCall, recomputed, tally
from shardplan.cost.collective import Collective
from shardplan.cost.comm import group_split
from shardplan.cost.context import StepContext

#: per MoE layer
MOE_LAYER: tuple[LayerCall, ...] = (
    LayerCall("AllToAll", "fwd", "dispatch tokens to their experts"),
    LayerCall("AllToAll", "fwd", "combine expert outputs"),
    LayerCall("AllToAll", "bwd", "gradient of the combine"),
    LayerCall("AllToAll", "bwd", "gradient of the dispatch"),
)


def deepep_scale_out_share(n_experts: int, top_k: int, ep: int, per_node: int) -> float:
    """Scale-out bytes of a DeepEP dispatch as a fraction of an AllToAll's (1 when the ep group sits in
    one node).

    The group's ``ep`` ranks fill ``ep / per_node`` nodes holding ``n_experts / nodes`` experts each.
    A token routed to ``top_k`` distinct experts chosen uniformly (balanced routing) misses a given node
    with probability ``C(E - E/nodes, k) / C(E, k)``; DeepEP sends it once to each other node it hits,
    ``(nodes - 1)(1 - that)`` copies, where an AllToAll sends one per expert on another node,
    ``k (ep - per_node) / ep``. Example: Qwen3-235B-A22B, 128 experts, top 8, ep = 32 over 4 nodes:
    ``C(96, 8) / C(128, 8) = 0.0928``, ``3 x 0.907 = 2.72`` copies against ``8 x 24/32 = 6``: 0.454.
    """
    nodes = max(1, ep // max(1, per_node))
    if nodes == 1 or n_experts < nodes:
        return 1.0
    miss = math.comb(n_experts - n_experts // nodes, top_k) / math.comb(n_experts, top_k)
    return min(1.0, (nodes - 1) * (1 - miss) / (top_k * (ep - per_node) / ep))


def collectives(ctx: StepContext) -> list[Collective]:
    """The dispatch / combine AllToAlls of one step (module docstring); [] for ep = 1 or a stage
    without MoE layers."""
    p, m = ctx.p, ctx.m
    if p.ep == 1 or not ctx.moe_layers:
        return []
    # the busiest rank's payload: capacity-padded buffers, or the dropless imbalance (TrainingSpec.moe_load)
    payload = (ctx.prec.activation_bytes * (ctx.layout.local_tokens / p.tp) * ctx.model.top_k * ctx.model.d_model
               * ctx.training.moe_load)
    again = p.recompute == "full" or (p.recompute == "selective" and "moe" in (p.recompute_modules or ()))
    calls = MOE_LAYER + (recomputed(MOE_LAYER) if again else ())
    # the ep group's ranks are etp apart (tp apart by default; Megatron-LM folds ep over tp ranks when etp < tp)
    purpose = "token dispatch / combine"
    if p.moe_dispatcher == "deepep":
        # the AllToAll's payload scaled to the copies DeepEP sends: its time is set by the scale-out part
        # (the NVLink forwarding inside the destination node runs beside it at ~9x the bandwidth)
        per_node = group_split(p.ep, p.expert_tp, ctx.hw.scale_up_size)[0]
        payload *= deepep_scale_out_share(ctx.model.n_experts, ctx.model.top_k, p.ep, per_node)
        purpose = "token dispatch / combine (DeepEP: one copy per remote node)"
    phase = {"fwd": "forward", "bwd": "backward: their gradients"}
    return [ctx.collective(op, "ep", "tokens", ph, "layers", payload, p.ep, p.expert_tp, n * ctx.moe_layers * m,
                           f"{purpose} ({phase.get(ph, ph)})") for op, ph, n in tally(calls)]
