"""Context parallelism as ring attention (Liu et al. 2023, "Ring Attention with Blockwise
Transformers", Sec. 3): the collectives of one step over the cp group.

Each of the cp - 1 ring steps of a layer's attention passes the local K and V block
(``2 beta u kv_r`` bytes, ``kv_r = max(g / tp, 1) d_h`` the K width a tp rank
holds, :meth:`~shardplan.specs.model.ModelSpec.kv_dim_per_rank`) to the next rank with a send/recv, overlapped with the attention
core of the block in hand. Forward: cp - 1 steps; backward: 2 (cp - 1) (K/V and their gradients
travel, Liu et al. 2023 Sec. 3 / Megatron-LM context parallelism), plus cp - 1 again when full
recompute re-runs the forward. A step is exposed only for the part longer than the attention
compute it hides behind (1 x forward attention in the forward, 2 x in the backward).
"""

from __future__ import annotations

from shardplan.cost.axes import LayerCall
from shardplan.cost.collective import Collective
from shardplan.cost.context import StepContext

#: one ring step of one layer (repeated cp - 1 times per pass)
RING_STEP: tuple[LayerCall, ...] = (
    LayerCall("SendRecv", "fwd", "local K and V block to the next rank"),
    LayerCall("SendRecv", "bwd", "K and V block to the next rank"),
    LayerCall("SendRecv", "bwd", "dK and dV block to the next rank"),
)


def collectives(ctx: StepContext) -> list[Collective]:
    """The K/V ring's send/recvs of one step (module docstring); [] for cp = 1."""
    p, m, L = ctx.p, ctx.m, ctx.layers
    if p.cp == 1:
        return []
    kv_bytes = 2 * ctx.prec.activation_bytes * ctx.layout.local_tokens * ctx.model.kv_dim_per_rank(p.tp)
    t_step = ctx.call_time("SendRecv", kv_bytes, 2, p.tp)
    attn = ctx.dense_t.fwd_attn
    exp_fwd = max(0.0, (p.cp - 1) * t_step - attn)
    exp_bwd = max(0.0, 2 * (p.cp - 1) * t_step - 2 * attn)
    full = p.recompute == "full"
    fwd_steps = sum(c.phase == "fwd" for c in RING_STEP) * (p.cp - 1)
    bwd_steps = sum(c.phase == "bwd" for c in RING_STEP) * (p.cp - 1) + (fwd_steps if full else 0)
    label = "K/V ring (context parallel)"
    return [
        ctx.collective("SendRecv", "cp", "kv", "fwd", "layers", kv_bytes, 2, p.tp, fwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=exp_fwd * L * m),
        ctx.collective("SendRecv", "cp", "kv", "bwd", "layers", kv_bytes, 2, p.tp, bwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=(exp_bwd + (exp_fwd if full else 0.0)) * L * m),
    ]
