"""Expert parallelism (GShard, Lepikhin et al. 2021; Switch, Fedus et al. 2022 Sec. 2.2): the
AllToAll token dispatch and combine of every MoE layer over the ep group.

Per MoE layer and microbatch: dispatch and combine in the forward, their transposes in the
backward (and the forward pair again with full recompute). Each device sends its local tokens'
``top_k`` copies: ``beta (u / tp) top_k h`` bytes (tp ranks split the tokens among them before
dispatch, Megatron-LM's MoE token dispatcher), times ``TrainingSpec.moe_load``: the capacity
factor with token dropping (fixed-size buffers per expert, Switch Transformer Sec. 2.2) or the
dropless imbalance (the busiest rank receives that much more). Exposed (not overlapped).
"""

from __future__ import annotations

from shardplan.cost.axes import LayerCall, recomputed, tally
from shardplan.cost.collective import Collective
from shardplan.cost.context import StepContext

#: per MoE layer
MOE_LAYER: tuple[LayerCall, ...] = (
    LayerCall("AllToAll", "fwd", "dispatch tokens to their experts"),
    LayerCall("AllToAll", "fwd", "combine expert outputs"),
    LayerCall("AllToAll", "bwd", "gradient of the combine"),
    LayerCall("AllToAll", "bwd", "gradient of the dispatch"),
)


def collectives(ctx: StepContext) -> list[Collective]:
    """The dispatch / combine AllToAlls of one step (module docstring); [] for ep = 1 or a stage
    without MoE layers."""
    p, m = ctx.p, ctx.m
    if p.ep == 1 or not ctx.moe_layers:
        return []
    # the busiest rank's payload: capacity-padded buffers, or the dropless imbalance (TrainingSpec.moe_load)
    payload = (ctx.prec.activation_bytes * (ctx.layout.local_tokens / p.tp) * ctx.model.top_k * ctx.model.d_model
               * ctx.training.moe_load)
    calls = MOE_LAYER + (recomputed(MOE_LAYER) if p.recompute == "full" else ())
    # the ep group's ranks are etp apart (tp apart by default; Megatron-LM folds ep over tp ranks when etp < tp)
    return [ctx.collective(op, "ep", "tokens", ph, "layers", payload, p.ep, p.expert_tp, n * ctx.moe_layers * m,
                           "token dispatch / combine") for op, ph, n in tally(calls)]
