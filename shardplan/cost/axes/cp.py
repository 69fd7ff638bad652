"""Context parallelism as ring attention (Liu et al. 2023, "Ring Attention with Blockwise
Transformers", Sec. 3): the collectives of one step over the cp group.

Each of the cp - 1 ring steps of a layer's attention passes the local K and V block
(``2 beta u kv_r`` bytes, ``kv_r = max(g / tp, 1) d_h`` the K width a tp rank
holds, :meth:`~shardplan.specs.model.ModelSpec.kv_dim_per_rank`; in general ``beta u w_r`` with
``w_r`` = :meth:`~shardplan.specs.model.ModelSpec.kv_ring_width_per_rank`, K plus V widths) to the
next rank with a send/recv, overlapped with the attention
core of the block in hand. Forward: cp - 1 steps; backward: 2 (cp - 1) (K/V and their gradients
travel, Liu et al. 2023 Sec. 3 / Megatron-LM context parallelism), plus cp - 1 again when
recompute re-runs the forward of the attention core: full recompute, and selective recompute,
which re-runs the core attention (Megatron-LM's ``checkpoint_core_attention`` wraps Transformer
Engine's context-parallel attention, ring included; :mod:`shardplan.cost.compute` counts the
same re-run forward of the core). The JAX runtime's ring (``shardplan/jax/ring.py``) sends exactly
these blocks.

Per architecture: MLA (DeepSeek-V2 Sec. 2.1.2) sends the up-projected K (a/tp heads of
d_nope + d_rope) and V (d_v), not the latent c_KV (d_c + d_rope per token, what an inference KV
cache keeps): the ring attention kernel (Megatron-LM MLA over Transformer Engine's context-parallel
attention) takes ordinary per-head K/V, so DeepSeek-V3 at tp = 1 sends 128 x (192 + 128) = 40,960
elements per token and layer against 2 x 8 x 128 = 2,048 for a GQA model with 8 KV heads.
Sliding-window layers still run all cp - 1 steps (Transformer Engine's ring does not skip blocks
outside the window), and attention sinks add no traffic (the per-head sink logit is a weight). A step is exposed only for the part longer than the attention
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
    kv_bytes = ctx.prec.activation_bytes * ctx.layout.local_tokens * ctx.model.kv_ring_width_per_rank(p.tp)
    t_step = ctx.call_time("SendRecv", kv_bytes, 2, p.tp)
    attn = ctx.dense_t.fwd_attn
    exp_fwd = max(0.0, (p.cp - 1) * t_step - attn)
    exp_bwd = max(0.0, 2 * (p.cp - 1) * t_step - 2 * attn)
    rerun = p.recompute in ("full", "selective")  # the attention core's forward (the ring) runs again
    fwd_steps = sum(c.phase == "fwd" for c in RING_STEP) * (p.cp - 1)
    bwd_steps = sum(c.phase == "bwd" for c in RING_STEP) * (p.cp - 1) + (fwd_steps if rerun else 0)
    label = "K/V ring (context parallel)"
    return [
        ctx.collective("SendRecv", "cp", "kv", "fwd", "layers", kv_bytes, 2, p.tp, fwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=exp_fwd * L * m),
        ctx.collective("SendRecv", "cp", "kv", "bwd", "layers", kv_bytes, 2, p.tp, bwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=(exp_bwd + (exp_fwd if rerun else 0.0)) * L * m),
    ]
