"""Ring attention: the attention core under context parallelism (``cp > 1``).

Ring attention (Liu et al. 2023, "Ring Attention with Blockwise Transformers for Near-Infinite
Context", arXiv 2310.01889, Sec. 3): every cp rank keeps its block of queries and passes its K/V
block around the ring of cp ranks with ``jax.lax.ppermute``; at each of the ``cp - 1`` steps a rank
attends to the block in hand and combines the partial results by the online softmax
(log-sum-exp rescaling of Milakov & Gimelshein 2018 / FlashAttention, Dao et al. 2022). No rank
ever holds more than two K/V blocks (the one in hand and the one arriving), so attention memory
is that of the local sequence, and each send overlaps with the attention of the block in hand.

The backward (a ``jax.custom_vjp``, the FlashAttention backward per block) runs the ring again:
the K/V blocks travel ``cp - 1`` steps a second time, and with each block a ``dK/dV`` accumulator
(sent in the compute dtype) that collects every rank's contribution and arrives at the block's
owner after ``cp - 1`` sends -- the rank's own (diagonal) contribution stays home. Per layer and
microbatch: ``cp - 1`` sends of the K+V block forward and ``2 (cp - 1)`` backward, the planner's
model (:mod:`shardplan.cost.axes.cp`).

Load balance for causal attention: the sequence is cut into ``2 cp`` chunks and rank ``i`` holds
chunks ``i`` and ``2 cp - 1 - i`` (the "zig-zag" layout of Megatron-core context parallelism and of
Llama 3, Dubey et al. 2024, arXiv 2407.21783, Sec. 3.3.2; Brandon et al. 2023, "Striped Attention",
arXiv 2311.09431, reach the same balance by striping single tokens). Then at every ring step after
the first a rank needs exactly half of the block product: all its queries against the early chunk
of the arriving block (the block comes from a lower rank) or its late chunk of queries against
the whole block (from a higher rank); the other half is masked out and not computed. Which half is
decided from the token positions (:func:`_step_kind`), so the kernel is exact for any layout and
only efficient for the zig-zag one. The trainer feeds the sequence in this order
(:func:`sequence_order`): the tokens, the targets and the RoPE / learned positions are permuted
alike (as Megatron's ``get_batch_on_this_cp_rank``), and the loss, a mean over tokens, is
unchanged.

The all-gather variant (``cp_attention="allgather"``, :attr:`shardplan.jax.rules.ShardingRules.
cp_attention`) is the model's plain attention with K/V constrained to the whole sequence, which
GSPMD all-gathers over cp (dK/dV reduce-scattered) -- the variant Llama 3 (Sec. 3.3.2) uses.

Features: grouped-query K/V (``g`` KV heads, ``r = h / g`` queries per KV head), attention sinks
(applied after the ring from its log-sum-exp: the sink only adds ``exp(sink)`` to each softmax
denominator), sliding windows (a mask; like Transformer Engine's ring, all ``cp - 1`` steps run),
and MLA's wider K than V (``dk != dv``). The ring runs in ``jax.shard_map`` manual over ``cp`` only:
batch and heads (tp) stay automatic. Not inside the pipeline (``pp > 1``): there the runtime
all-gathers K/V instead (:func:`runtime_cp_attention`).

Shapes: ``b`` batch, ``s`` sequence (``n = s / cp`` per rank, ``c = n / 2`` per chunk), ``g`` KV
heads, ``r`` queries per KV head, ``dk`` / ``dv`` K and V widths.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.rules import active_context, context_mesh

#: The score of a masked (query, key) pair.
NEG = float(np.finfo(np.float32).min)
#: Mesh axis of the ring.
AXIS = "cp"
_F32 = jnp.float32


class RingConfig(NamedTuple):
    """Static settings of one ring.

    Attributes:
        cp: ranks in the ring.
        dk: K width (the first ``dk`` columns of the concatenated K/V block; the rest is V).
        scale: score scale, ``1 / sqrt(dk)`` usually.
        window: sliding window (a query sees its last ``window`` keys, itself included) or None.
    """

    cp: int
    dk: int
    scale: float
    window: int | None = None


def zigzag_order(s: int, cp: int) -> np.ndarray:
    """The token position at each index of the zig-zag layout: ``2 cp`` chunks of ``c = s / (2 cp)``
    tokens, rank ``i`` (indices ``i n .. (i + 1) n - 1``, ``n = s / cp``) holds chunks ``i`` and
    ``2 cp - 1 - i``.

    Example: ``zigzag_order(8, 2)`` is ``[0, 1, 6, 7, 2, 3, 4, 5]``.

    Raises:
        ConfigError: ``s`` not a multiple of ``2 cp``.
    """
    if s % (2 * cp):
        raise ConfigError(f"seq_len={s}: ring attention with cp={cp} cuts the sequence into 2*cp = {2 * cp} "
                          f"equal chunks (zig-zag load balancing); use a multiple of {2 * cp}",
                          field="seq_len", value=s, legal=[f"multiples of {2 * cp}"])
    chunks = np.arange(s, dtype=np.int32).reshape(2 * cp, s // (2 * cp))
    return np.concatenate([np.concatenate([chunks[i], chunks[2 * cp - 1 - i]]) for i in range(cp)])


def runtime_cp_attention(requested: str, pp: int, cp: int, cp_comm: str = "ring") -> tuple[str, str | None]:
    """The attention variant the runtime executes under context parallelism, and a note when it
    differs from the one requested: a plan with ``cp_comm='a2a'`` runs DeepSpeed-Ulysses (``"a2a"``) whatever
    was requested; ``"ring"`` inside the pipeline (``pp > 1``) runs as ``"allgather"`` -- the ring's partially
    manual ``shard_map`` nested in the pipeline's, inside its ``scan``, does not lower (jax 0.10.2 / Shardy:
    "manual axes must come before free axes"); ``"a2a"`` requested for a ring plan runs the plan's ring.
    """
    if cp > 1 and cp_comm == "a2a":
        return "a2a", (None if requested in ("ring", "a2a") else
                       f"cp_attention={requested!r} with the plan's cp_comm='a2a': Ulysses' AllToAlls run instead")
    if requested == "a2a":
        return runtime_cp_attention("ring", pp, cp)[0], ("cp_attention='a2a' needs a plan with cp_comm='a2a' (the "
                                                         "planner prices that exchange); the plan's ring runs")
    if requested == "ring" and pp > 1 and cp > 1:
        return "allgather", (f"cp_attention='ring' with pp={pp}: ring attention does not run inside the pipeline's "
                             f"shard_map yet; K/V are all-gathered over cp={cp} instead")
    return requested, None


def _cp_degree(mode: str) -> int:
    """The cp degree when the attention of the code being traced runs as ``mode`` (inside
    :func:`shardplan.jax.rules.activation_sharding` with ``cp > 1`` and that ``cp_attention``), else 0."""
    ctx = active_context()
    if ctx is None:
        return 0
    _, rules = ctx
    cp = rules.sizes.get(AXIS, 1)
    return cp if cp > 1 and rules.cp_attention == mode else 0


def ring_degree() -> int:
    """The cp degree when the attention of the code being traced runs as a ring (``cp_attention="ring"``), else 0."""
    return _cp_degree("ring")


def ulysses_degree() -> int:
    """The cp degree when the attention of the code being traced runs as DeepSpeed-Ulysses (``cp_attention="a2a"``),
    else 0."""
    return _cp_degree("a2a")


def ulysses_kv_copies(kv_heads: int) -> int:
    """How many copies of each KV head the traced DeepSpeed-Ulysses attention makes: a tp rank holding fewer KV heads
    than cp (``kv_heads / tp < cp``, which then divides cp) repeats each ``cp / (kv_heads / tp)`` times before the
    AllToAll, so that every rank of the cp group receives one whole head (DeepSpeed UlyssesSPAttentionHF: "KV heads
    replicated" when ``num_key_value_heads < sp_world_size``; Jacobs et al. 2023 Sec. 3); else 1 (no Ulysses, or
    enough heads). ``kv_heads``: the model's KV heads (``tp`` divides them)."""
    cp = ulysses_degree()
    ctx = active_context()
    if not cp or ctx is None:
        return 1
    per_rank = kv_heads // ctx[1].sizes.get("tp", 1)
    return cp // per_rank if 0 < per_rank < cp else 1


def sequence_order(s: int) -> np.ndarray | None:
    """The order in which the traced model must receive a sequence of ``s`` tokens: the zig-zag
    positions (:func:`zigzag_order`) when attention runs as a ring, else None (natural order).

    Raises:
        ConfigError: ``s`` not a multiple of ``2 cp``.
    """
    cp = ring_degree()
    return zigzag_order(s, cp) if cp else None


def ring_attention(q: jax.Array, k: jax.Array, v: jax.Array, positions: jax.Array, *, window: int | None = None,
                   sinks: jax.Array | None = None, scale: float | None = None) -> jax.Array:
    """Causal attention with the sequence sharded over ``cp``, as a K/V ring (module docstring).

    Args:
        q: (b, s, g, r, dk) queries, RoPE applied, sequence in the layout ``positions`` describes.
        k: (b, s, g, dk) keys (RoPE applied); v: (b, s, g, dv) values.
        positions: (s,) int token position at each sequence index (for the causal / window mask).
        window: sliding window or None.
        sinks: (g * r,) attention-sink logits (GPT-OSS) or None.
        scale: score scale (default ``1 / sqrt(dk)``).

    Returns:
        (b, s, g, r, dv) in ``q.dtype``, sequence-sharded over cp like ``q``.

    Raises:
        ConfigError: outside a ring context (:func:`ring_degree` is 0) or ``s`` not a multiple of
            ``2 cp``.
    """
    cp = ring_degree()
    if not cp:
        raise ConfigError("ring_attention needs an activation_sharding context with cp > 1 and "
                          "cp_attention='ring'", field="cp_attention", value=None, legal=["ring"])
    zigzag_order(q.shape[1], cp)  # the chunking must be even
    mesh, _ = active_context()
    dk = q.shape[-1]
    cfg = RingConfig(cp, dk, float(scale if scale is not None else 1.0 / math.sqrt(dk)), window)
    kv = jnp.concatenate([k, v.astype(k.dtype)], axis=-1)  # one K+V block per send
    out, lse = _ring_op(context_mesh(mesh), cfg)(q, kv, positions.astype(jnp.int32))
    if sinks is not None:  # the sink adds exp(sink) to every denominator: rescale by exp(lse - lse')
        g, r = q.shape[2], q.shape[3]
        lse_all = jnp.logaddexp(lse, sinks.astype(_F32).reshape(g, r))
        out = out.astype(_F32) * jnp.exp(lse - lse_all)[..., None]
    return out.astype(q.dtype)


def _ring_op(mesh: Any, cfg: RingConfig) -> Any:
    """``op(q, kv, positions) -> (out, lse)`` on global arrays (sequence sharded over cp): a
    ``jax.custom_vjp`` whose forward and backward are each one ``jax.shard_map`` manual over cp
    (:func:`_ring_fwd`, :func:`_ring_bwd`). The VJP sits outside the shard_maps, so the residuals
    are plain sequence-sharded arrays (this rank's Q and K/V blocks, out, lse), not shard_map
    residuals. (Nested in the pipeline's shard_map over pp, inside its scan, it still does not lower
    with jax 0.10.2 -- Shardy: "manual axes must come before free axes" -- see
    :func:`runtime_cp_attention`.)

    Shapes: q (b, s, g, r, dk), kv (b, s, g, dk + dv), positions (s,) int32; out (b, s, g, r, dv)
    in ``kv.dtype``, lse (b, s, g, r) fp32.
    """
    seq, rank = P(None, AXIS), P(AXIS)
    # each rank's index arrives as data (jnp.arange(cp) sharded over cp: one entry per rank), not as
    # jax.lax.axis_index: in a shard_map manual over cp only, axis_index lowers to a PartitionId that XLA's SPMD
    # partitioner refuses when the other mesh axes stay automatic ("PartitionId instruction is not supported
    # for SPMD partitioning"; a breaker's `validate --cp 2` of every scaled-down model)
    fwd_map = jax.shard_map(lambda q, kv, pos, r: _ring_fwd(q, kv, _positions(pos, cfg.cp, r[0]), cfg), mesh=mesh,
                            in_specs=(seq, seq, P(), rank), out_specs=(seq, seq), axis_names={AXIS})
    bwd_map = jax.shard_map(lambda q, kv, pos, r, *rest: _ring_bwd(q, kv, _positions(pos, cfg.cp, r[0]), *rest,
                                                                   cfg=cfg),
                            mesh=mesh, in_specs=(seq, seq, P(), rank, seq, seq, seq, seq), out_specs=(seq, seq),
                            axis_names={AXIS})

    def ranks() -> jax.Array:
        return jnp.arange(cfg.cp, dtype=jnp.int32)

    @jax.custom_vjp
    def op(q: jax.Array, kv: jax.Array, positions: jax.Array) -> tuple[jax.Array, jax.Array]:
        return fwd_map(q, kv, positions, ranks())

    def fwd(q: jax.Array, kv: jax.Array, positions: jax.Array) -> Any:
        out, lse = fwd_map(q, kv, positions, ranks())
        return (out, lse), (q, kv, positions, out, lse)

    def bwd(res: tuple[jax.Array, ...], cts: tuple[jax.Array, jax.Array]) -> Any:
        q, kv, positions, out, lse = res
        dq, dkv = bwd_map(q, kv, positions, ranks(), out, lse, *cts)
        return dq, dkv, None

    op.defvjp(fwd, bwd)
    return op


def _send(x: jax.Array, cp: int) -> jax.Array:
    """Pass a block to the next rank of the ring (rank j -> j + 1 mod cp)."""
    return jax.lax.ppermute(x, AXIS, [(j, (j + 1) % cp) for j in range(cp)])


def _positions(positions: jax.Array, cp: int, i: jax.Array) -> tuple[jax.Array, jax.Array]:
    """From the whole sequence's positions (s,) and this rank's index ``i`` on the cp axis (a scalar): this rank's
    query positions (n,) and those of the block in hand at each ring step (cp, n) -- at step j, rank ``i - j``'s
    block."""
    table = positions.reshape(cp, -1)  # (cp, n): positions of each rank's tokens
    return table[i], table[(i - jnp.arange(cp)) % cp]


# ----- one block: scores, forward, backward --------------------------------------------------

def _scores(q: jax.Array, k: jax.Array, qpos: jax.Array, kpos: jax.Array,
            cfg: RingConfig) -> tuple[jax.Array, jax.Array]:
    """Scaled scores (b, g, r, q, t) fp32 of queries q (b, q, g, r, dk) against keys k (b, t, g, dk),
    and the (q, t) mask: causal, and within the window."""
    s = jnp.einsum("bqgrk,btgk->bgrqt", q, k).astype(_F32) * cfg.scale
    mask = qpos[:, None] >= kpos[None, :]
    if cfg.window is not None:
        mask = mask & (qpos[:, None] - kpos[None, :] < cfg.window)
    return s, mask


def _block_fwd(q: jax.Array, kv: jax.Array, qpos: jax.Array, kpos: jax.Array,
               cfg: RingConfig) -> tuple[jax.Array, jax.Array, jax.Array]:
    """One block's unnormalised softmax state: ``acc`` (b, q, g, r, dv) = sum_t p_t v_t, row max ``m``
    and row sum ``l`` (b, g, r, q) of ``p_t = exp(s_t - m)`` (``m = NEG``, ``l = 0`` for fully
    masked rows)."""
    s, mask = _scores(q, kv[..., :cfg.dk], qpos, kpos, cfg)
    s = jnp.where(mask, s, NEG)
    m = s.max(-1)
    p = jnp.where(mask, jnp.exp(s - m[..., None]), 0.0)
    acc = jnp.einsum("bgrqt,btgv->bqgrv", p.astype(kv.dtype), kv[..., cfg.dk:]).astype(_F32)
    return acc, m, p.sum(-1)


def _merge(state: tuple[jax.Array, ...], blk: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
    """Online-softmax combination of two ``(acc, m, l)`` states over the same rows (log-sum-exp
    rescaling to the larger maximum)."""
    acc, m, l = state
    acc_b, m_b, l_b = blk
    m_new = jnp.maximum(m, m_b)
    a, b = jnp.exp(m - m_new), jnp.exp(m_b - m_new)
    rows = lambda x: jnp.moveaxis(x, -1, 1)[..., None]  # noqa: E731  (b, g, r, q) -> (b, q, g, r, 1)
    return acc * rows(a) + acc_b * rows(b), m_new, l * a + l_b * b


def _block_bwd(q: jax.Array, kv: jax.Array, qpos: jax.Array, kpos: jax.Array, rows: tuple[jax.Array, ...],
               cfg: RingConfig) -> tuple[jax.Array, jax.Array]:
    """FlashAttention backward of one block: ``rows = (lse, D, dout)`` of the queries (``lse``, ``D =
    rowsum(dout * out) - dlse`` as (b, g, r, q), ``dout`` (b, q, g, r, dv)). Returns fp32 ``dq``
    (b, q, g, r, dk) and ``dkv`` (b, t, g, dk + dv)."""
    lse, dd, dout = rows
    k, v = kv[..., :cfg.dk], kv[..., cfg.dk:]
    s, mask = _scores(q, k, qpos, kpos, cfg)
    p = jnp.where(mask, jnp.exp(s - lse[..., None]), 0.0)  # (b, g, r, q, t)
    dt = kv.dtype
    dv = jnp.einsum("bgrqt,bqgrv->btgv", p.astype(dt), dout.astype(dt)).astype(_F32)
    dp = jnp.einsum("bqgrv,btgv->bgrqt", dout.astype(dt), v).astype(_F32)
    ds = (p * (dp - dd[..., None]) * cfg.scale).astype(dt)
    dq = jnp.einsum("bgrqt,btgk->bqgrk", ds, k).astype(_F32)
    dk = jnp.einsum("bgrqt,bqgrk->btgk", ds, q.astype(dt)).astype(_F32)
    return dq, jnp.concatenate([dk, dv], axis=-1)


# ----- which half of a ring step is needed ----------------------------------------------------

#: ring-step kinds: the whole block, all queries x the early K/V chunk, the late query chunk x the
#: whole block, nothing (every pair masked)
FULL, EARLY_KEYS, LATE_QUERIES, NOTHING = range(4)


def _step_kind(qpos: jax.Array, kpos: jax.Array) -> jax.Array:
    """Which part of the (queries, block) product has unmasked pairs (traced int, one of
    ``FULL, EARLY_KEYS, LATE_QUERIES, NOTHING``), from the positions alone: a part is skipped only
    when causality masks all of it, so every layout stays exact; with the zig-zag layout every
    step after the first is ``EARLY_KEYS`` (block from a lower rank) or ``LATE_QUERIES``."""
    c = qpos.shape[0] // 2
    none = kpos.min() > qpos.max()
    early = kpos[c:].min() > qpos.max()  # the block's late chunk is in every query's future
    late = kpos.min() > qpos[:c].max()  # the early queries precede the whole block
    return jnp.where(none, NOTHING, jnp.where(early, EARLY_KEYS, jnp.where(late, LATE_QUERIES, FULL)))


def _step_fwd(state: tuple[jax.Array, ...], q: jax.Array, kv: jax.Array, qpos: jax.Array, kpos: jax.Array,
              cfg: RingConfig) -> tuple[jax.Array, ...]:
    """Merge the block ``kv`` (positions ``kpos``) into the state of all queries, computing only the
    part :func:`_step_kind` selects."""
    c = q.shape[1] // 2

    def full(st):
        return _merge(st, _block_fwd(q, kv, qpos, kpos, cfg))

    def early_keys(st):
        return _merge(st, _block_fwd(q, kv[:, :c], qpos, kpos[:c], cfg))

    def late_queries(st):
        acc, m, l = st
        late = _merge((acc[:, c:], m[..., c:], l[..., c:]), _block_fwd(q[:, c:], kv, qpos[c:], kpos, cfg))
        return (jnp.concatenate([acc[:, :c], late[0]], 1), jnp.concatenate([m[..., :c], late[1]], -1),
                jnp.concatenate([l[..., :c], late[2]], -1))

    return jax.lax.switch(_step_kind(qpos, kpos), [full, early_keys, late_queries, lambda st: st], state)


def _step_bwd(q: jax.Array, kv: jax.Array, qpos: jax.Array, kpos: jax.Array, rows: tuple[jax.Array, ...],
              zeros: tuple[jax.Array, jax.Array], cfg: RingConfig) -> tuple[jax.Array, jax.Array]:
    """``(dq, dkv)`` (fp32, full shapes) of one ring step, computing only the part
    :func:`_step_kind` selects; ``zeros`` (fp32 zeros shaped as dq and dkv, varying over the same
    manual axes as a computed block) elsewhere."""
    c = q.shape[1] // 2
    lse, dd, dout = rows
    zq, zkv = zeros

    def full():
        return _block_bwd(q, kv, qpos, kpos, rows, cfg)

    def early_keys():
        dq, dkv = _block_bwd(q, kv[:, :c], qpos, kpos[:c], rows, cfg)
        return dq, jnp.concatenate([dkv, zkv[:, c:]], 1)

    def late_queries():
        late_rows = (lse[..., c:], dd[..., c:], dout[:, c:])
        dq, dkv = _block_bwd(q[:, c:], kv, qpos[c:], kpos, late_rows, cfg)
        return jnp.concatenate([zq[:, :c], dq], 1), dkv

    return jax.lax.switch(_step_kind(qpos, kpos), [full, early_keys, late_queries, lambda: (zq, zkv)])


# ----- the ring: forward and backward of one rank ------------------------------------------------

def _ring_fwd(q: jax.Array, kv: jax.Array, pos: tuple[jax.Array, jax.Array], cfg: RingConfig) -> Any:
    """Forward ring of one rank: q (b, n, g, r, dk), kv (b, n, g, dk + dv) its own K/V block, pos
    (:func:`_positions`) -> out (b, n, g, r, dv) in ``kv.dtype``, lse (b, n, g, r) fp32. The
    diagonal block, then ``cp - 1`` received blocks, each send issued before the block in hand is
    used so that it can overlap."""
    qpos, kvpos = pos
    nxt = _send(kv, cfg.cp)
    state = _block_fwd(q, kv, qpos, qpos, cfg)  # own block: every row sees itself, so l > 0 after it
    for j in range(1, cfg.cp):
        cur = nxt
        if j < cfg.cp - 1:
            nxt = _send(cur, cfg.cp)
        state = _step_fwd(state, q, cur, qpos, kvpos[j], cfg)
    acc, m, l = state
    lse = jnp.moveaxis(m + jnp.log(l), -1, 1)  # (b, n, g, r)
    return (acc / jnp.moveaxis(l, -1, 1)[..., None]).astype(kv.dtype), lse


def _swap_chunks(x: jax.Array) -> jax.Array:
    """The block with its two sequence chunks (axis 1) swapped (an involution)."""
    c = x.shape[1] // 2
    return jnp.concatenate([x[:, c:], x[:, :c]], axis=1)


def _ring_bwd(q: jax.Array, kv: jax.Array, pos: tuple[jax.Array, jax.Array], out: jax.Array, lse: jax.Array,
              dout: jax.Array, dlse: jax.Array, cfg: RingConfig) -> tuple[jax.Array, jax.Array]:
    """Backward ring of one rank (shapes as :func:`_ring_fwd`; ``dout``, ``dlse`` the cotangents)
    -> (dq, dkv). The K/V blocks travel ``cp - 1`` steps again; the dK/dV of the block in hand is
    added to an accumulator that travels with it (in the compute dtype) and reaches the block's
    owner after ``cp - 1`` sends, where the owner's own contribution is added.

    The K/V blocks travel with their two chunks swapped (undone at each use): the same bytes as
    the forward's sends but another value, else XLA (CPU, which drops optimization barriers early)
    merges them with the forward's identical sends and keeps every received block alive from the
    forward to the backward -- the memory of an all-gather."""
    qpos, kvpos = pos
    dd = (dout.astype(_F32) * out.astype(_F32)).sum(-1) - dlse  # D = rowsum(dO * O) - dlse
    rows = (jnp.moveaxis(lse, 1, -1), jnp.moveaxis(dd, 1, -1), dout)
    nxt = _send(_swap_chunks(kv), cfg.cp)
    dq, dkv_own = _block_bwd(q, kv, qpos, qpos, rows, cfg)
    zeros = (jnp.zeros_like(dq), jnp.zeros_like(dkv_own))
    travel = None
    for j in range(1, cfg.cp):
        cur = nxt
        if j < cfg.cp - 1:
            nxt = _send(cur, cfg.cp)
        dq_j, dkv_j = _step_bwd(q, _swap_chunks(cur), qpos, kvpos[j], rows, zeros, cfg)
        dq = dq + dq_j
        acc = dkv_j if travel is None else travel.astype(_F32) + dkv_j
        travel = _send(acc.astype(kv.dtype), cfg.cp)  # with the block (after the last step: to its owner)
    dkv = dkv_own + travel.astype(_F32)
    return dq.astype(q.dtype), dkv.astype(kv.dtype)


__all__ = ["RingConfig", "NEG", "ring_attention", "ring_degree", "runtime_cp_attention", "sequence_order", "ulysses_degree",
           "zigzag_order"]
