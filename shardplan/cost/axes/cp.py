"""Context parallelism over the cp group: ring attention (``cp_comm`` 'ring', Liu et al. 2023, "Ring
Attention with Blockwise Transformers", Sec. 3) or DeepSpeed-Ulysses (``cp_comm`` 'a2a', Jacobs et al. 2023,
"DeepSpeed Ulysses", Sec. 3): the collectives of one step.

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

DeepSpeed-Ulysses (Jacobs et al. 2023, Sec. 3 and Fig. 2): before the attention core an AllToAll over the cp group
turns each of Q, K and V from a sequence shard of all the rank's heads into the whole sequence of 1 / cp of them,
and after it one AllToAll turns the output back; the backward runs the same four on the gradients (dO in, dQ, dK,
dV out). Per layer and microbatch the payload per device is ``beta u`` times the width: Q ``(a / tp) d_h``, K and V
``g_a d_h`` and ``g_a d_v`` (``g_a`` = :func:`shardplan.parallel.a2a_kv_heads`: the rank's KV heads, replicated up
to cp when fewer, as DeepSpeed does), the output ``(a / tp) d_v``. The AllToAlls sit between the projections and
the attention core that needs their result, and neither DeepSpeed's DistributedAttention nor Transformer Engine's
a2a path overlaps them: all exposed. Recompute of the attention core (full, or selective that re-runs the core,
as for the ring) runs the forward's four again in the backward.

**Where the ring crosses nodes.** The cp ranks of a ring sit ``tp`` ranks apart (Megatron-LM's tp-cp-ep-dp-pp rank
order), so the ring spans ``tp x cp`` consecutive ranks; when that is more than one scale-up domain, some of its hops
cross the scale-out network. Every rank sends its block and waits for its neighbour's before the next step (Liu et al.
2023, Sec. 3: the ring advances in lock step), so each step takes as long as its slowest, node-crossing hop: priced
as a send/recv between domains (each crossing hop leaves through its own GPU's NIC share), whatever ``tp`` is
(:func:`ring_hop_stride`). Inside one domain the hops run over NVLink / ICI.
"""

from __future__ import annotations

from shardplan.cost.axes import LayerCall
from shardplan.cost.collective import Collective
from shardplan.cost.context import StepContext
from shardplan.parallel import a2a_kv_heads

#: one ring step of one layer (repeated cp - 1 times per pass)
RING_STEP: tuple[LayerCall, ...] = (
    LayerCall("SendRecv", "fwd", "local K and V block to the next rank"),
    LayerCall("SendRecv", "bwd", "K and V block to the next rank"),
    LayerCall("SendRecv", "bwd", "dK and dV block to the next rank"),
)


#: one layer's DeepSpeed-Ulysses AllToAlls (cp_comm='a2a')
ULYSSES: tuple[LayerCall, ...] = (
    LayerCall("AllToAll", "fwd", "Q: sequence shard -> head shard"),
    LayerCall("AllToAll", "fwd", "K: sequence shard -> head shard"),
    LayerCall("AllToAll", "fwd", "V: sequence shard -> head shard"),
    LayerCall("AllToAll", "fwd", "attention output: head shard -> sequence shard"),
    LayerCall("AllToAll", "bwd", "d(output): sequence shard -> head shard"),
    LayerCall("AllToAll", "bwd", "dQ: head shard -> sequence shard"),
    LayerCall("AllToAll", "bwd", "dK: head shard -> sequence shard"),
    LayerCall("AllToAll", "bwd", "dV: head shard -> sequence shard"),
)


def ulysses_widths(ctx: StepContext) -> dict[str, float]:
    """Elements per token of one tp rank's Ulysses AllToAlls (module docstring), per tensor: Q ``(a / tp) d_h``, K
    ``g_a d_h``, V ``g_a d_v``, the output ``(a / tp) d_v``."""
    m, tp = ctx.model, ctx.p.tp
    q_heads, kv_heads = m.n_heads / tp, a2a_kv_heads(m, tp, ctx.p.cp)
    return {"q": q_heads * m.dim_head, "k": kv_heads * m.dim_head, "v": kv_heads * m.dim_head_v,
            "out": q_heads * m.dim_head_v}


def ulysses_collectives(ctx: StepContext) -> list[Collective]:
    """The Ulysses AllToAlls of one step (module docstring): per layer and microbatch, forward Q, K, V and the
    output, backward their four gradients, plus the forward's four again under recompute; all exposed. Example:
    Llama-3-8B (32 heads, 8 KV heads, d_h 128) at tp 1, cp 4, seq 8192, mbs 1, bf16: u = 2,048 local tokens; Q and
    the output 32 x 128 = 4,096, K and V 8 x 128 = 1,024 elements per token; forward payloads 2 B x 2,048 x
    (2 x 4,096 + 2 x 1,024) = 41,943,040 B per layer over four calls."""
    p, m, L = ctx.p, ctx.m, ctx.layers
    beta, u = ctx.prec.activation_bytes, ctx.layout.local_tokens
    widths = ulysses_widths(ctx)
    rerun = p.recompute in ("full", "selective")
    out = []
    for phase, count in (("fwd", L * m), ("bwd", L * m * (2 if rerun else 1))):
        for tensor in ("q", "k", "v", "out"):
            out.append(ctx.collective("AllToAll", "cp", tensor, phase, "layers", beta * u * widths[tensor], p.cp,
                                      p.tp, count, _ULYSSES_LABELS[tensor, phase]
                                      + (" + the recomputed forward's" if phase == "bwd" and rerun else "")))
    return out


#: the purpose column of each Ulysses AllToAll (tensor, pass): its :data:`ULYSSES` row
_ULYSSES_LABELS = {key: f"Ulysses {call.what}" for key, call in zip(
    [(t, "fwd") for t in ("q", "k", "v", "out")] + [(t, "bwd") for t in ("out", "q", "k", "v")], ULYSSES)}


def ring_hop_stride(tp: int, cp: int, scale_up_size: int) -> int:
    """The rank distance to price one K/V ring step with (module docstring, "Where the ring crosses nodes"): ``tp`` for
    a ring inside one scale-up domain (``tp x cp <= scale_up_size``), else at least ``scale_up_size``, which
    :func:`shardplan.cost.comm.price_collective` prices as a send/recv between domains. E.g. tp 2, cp 8 on 8-GPU
    nodes: the ring spans 16 ranks over two nodes, so every step waits for a node-crossing hop (stride 8); tp 2, cp 4:
    8 ranks in one node, NVLink (stride 2)."""
    return tp if tp * cp <= scale_up_size else max(tp, scale_up_size)


def collectives(ctx: StepContext) -> list[Collective]:
    """The context-parallel collectives of one step (module docstring): the K/V ring's send/recvs, or with
    ``cp_comm`` 'a2a' the Ulysses AllToAlls (:func:`ulysses_collectives`); [] for cp = 1."""
    p, m, L = ctx.p, ctx.m, ctx.layers
    if p.cp == 1:
        return []
    if p.cp_comm == "a2a":
        return ulysses_collectives(ctx)
    kv_bytes = ctx.prec.activation_bytes * ctx.layout.local_tokens * ctx.model.kv_ring_width_per_rank(p.tp)
    hop = ring_hop_stride(p.tp, p.cp, ctx.hw.scale_up_size)
    t_step = ctx.call_time("SendRecv", kv_bytes, 2, hop)
    attn = ctx.dense_t.fwd_attn
    exp_fwd = max(0.0, (p.cp - 1) * t_step - attn)
    exp_bwd = max(0.0, 2 * (p.cp - 1) * t_step - 2 * attn)
    rerun = p.recompute in ("full", "selective")  # the attention core's forward (the ring) runs again
    fwd_steps = sum(c.phase == "fwd" for c in RING_STEP) * (p.cp - 1)
    bwd_steps = sum(c.phase == "bwd" for c in RING_STEP) * (p.cp - 1) + (fwd_steps if rerun else 0)
    label = "K/V ring (context parallel)"
    return [
        ctx.collective("SendRecv", "cp", "kv", "fwd", "layers", kv_bytes, 2, hop, fwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=exp_fwd * L * m),
        ctx.collective("SendRecv", "cp", "kv", "bwd", "layers", kv_bytes, 2, hop, bwd_steps * L * m, label,
                       overlap="ring_attention", exposed_s=(exp_bwd + (exp_fwd if rerun else 0.0)) * L * m),
    ]
