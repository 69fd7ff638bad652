"""Reference decoder in Flax NNX, built from a :class:`~shardplan.specs.model.ModelSpec`.

Llama-style by default (RoPE, grouped-query attention, SwiGLU, RMSNorm, tied or untied embeddings);
the GPT variants of the spec are honoured too (learned positions, GeLU MLP, LayerNorm, biases).
MoE layers (``model.is_moe``) route each token to ``top_k`` experts. Dropless (the default) is a
dense dispatch: every expert processes every token and the outputs are mixed with the (sparse) gate
weights -- simple, exact and shardable over ``ep`` (compute is ``n_experts / top_k`` times a
capacity-based dispatch; the tokens are gathered over ``ep``, no AllToAll). Inside
:func:`moe_capacity` (a capacity factor, ``TrainingSpec.moe_capacity_factor``) the dispatch is
GShard's: each expert takes at most ``C`` tokens per sequence into a fixed buffer, and the buffers move
between the batch-sharded and the expert-sharded layout by an AllToAll over ``ep``.
ALiBi positions are not implemented (ConfigError).

Architecture features of the spec (each as :class:`ModelSpec` defines and counts it, so the runtime's
parameter count equals ``ModelSpec.n_params``): QK-norm per head (Qwen3) or over the whole projection
(OLMo 2), attention sinks (GPT-OSS), a sliding window on every layer (Mistral v0.1) or interleaved
with full-attention layers (Gemma 2/3, GPT-OSS; ``ModelSpec.is_sliding_layer``), sandwich norms
(Gemma 2/3), an embedding norm (BLOOM), biases on Q/K/V, the output projection, the MLP / experts
(Llama ``mlp_bias``, GPT-OSS) or the router (GPT-OSS). Element-wise details that carry no parameter
and no sharding (Gemma's ``1 + w`` RMSNorm gain, GeGLU, embedding scaling and logit soft-capping,
OLMo 2's post-norm placement, GPT-OSS's clamped GLU) are not modelled: the blocks keep the pre-norm
SwiGLU / GeLU form, with the same parameters and layouts.

Every parameter is an ``nnx.Param`` whose ``out_sharding`` metadata holds its *logical* axes
(e.g. ``("embed", "heads", "head_dim")``), created with ``eager_sharding=False`` so that Flax does
not interpret them: :mod:`shardplan.jax.rules` resolves them (Flax NNX's own rules would pass
unknown names through as mesh axes). Activations are constrained at block boundaries, attention
inputs/outputs, MLP hidden states and logits through :func:`shardplan.jax.rules.constrain`. Under
context parallelism the attention core runs as a K/V ring (:mod:`shardplan.jax.ring`) on a sequence
in zig-zag order, whose token positions the caller passes (:meth:`Transformer.__call__`).

Shapes: ``b`` batch, ``s`` sequence, ``d`` d_model, ``h`` query heads, ``g`` KV heads,
``r = h / g``, ``k`` head_dim, ``f`` MLP width, ``e`` experts, ``v`` vocab.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.ring import ring_attention, ring_degree, ulysses_degree, ulysses_kv_copies
from shardplan.jax.rules import (active_context, constrain, context_mesh, kv_replicated, local_sizes, manual_axes,
                                 resolve)
from shardplan.specs.model import ModelSpec

#: jax.checkpoint policies per recompute setting (None = no rematerialisation).
REMAT_POLICIES = ("none", "selective", "full")
ROPE_THETA = 10000.0

_normal = jax.nn.initializers.normal


def _param(rngs: nnx.Rngs, init: Any, shape: tuple[int, ...], logical: tuple[str | None, ...]) -> nnx.Param:
    """An fp32 parameter carrying its logical axes in ``out_sharding`` metadata."""
    assert len(shape) == len(logical), (shape, logical)
    return nnx.Param(init(rngs.params(), shape, jnp.float32), out_sharding=logical, eager_sharding=False)


def _fan_in(in_axis: Any, out_axis: Any, batch_axis: Any = ()) -> Any:
    return jax.nn.initializers.variance_scaling(1.0, "fan_in", "normal", in_axis=in_axis, out_axis=out_axis,
                                                batch_axis=batch_axis)


def _var(value: jax.Array, logical: tuple[str | None, ...]) -> nnx.Param:
    """A parameter from a given value (fp32), carrying its logical axes."""
    assert value.ndim == len(logical), (value.shape, logical)
    return nnx.Param(value, out_sharding=logical, eager_sharding=False)


#: Logical axes of the last three dims of a fused Q/K/V tensor (g, r + 2, k): the KV group, then
#: its r query heads, key and value (``qkv``, never sharded), then the head width.
QKV_LOGICAL = ("kv_heads", "qkv", "head_dim")


def split_qkv(y: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Split a fused Q/K/V tensor (..., g, r + 2, k) into q (..., g r, k), k (..., g, k), v (..., g, k).

    Query head ``j r + i`` is ``y[..., j, i, :]`` (the heads of KV group j are consecutive, as in
    grouped-query attention, Ainslie et al. 2023); works on weights (d, g, r + 2, k), biases
    (g, r + 2, k) and projections (b, s, g, r + 2, k).
    """
    *lead, g, r2, k = y.shape
    return y[..., :r2 - 2, :].reshape(*lead, g * (r2 - 2), k), y[..., r2 - 2, :], y[..., r2 - 1, :]


def fuse_qkv(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
    """Inverse of :func:`split_qkv`: q (..., h, k), k and v (..., g, k) -> (..., g, h / g + 2, k).

    Raises:
        ValueError: g does not divide h.
    """
    *lead, h, kd = q.shape
    g = k.shape[-2]
    if h % g:
        raise ValueError(f"{g} KV heads do not divide {h} query heads")
    qg = q.reshape(*lead, g, h // g, kd)
    return jnp.concatenate([qg, k[..., None, :], v[..., None, :]], axis=-2)


class Norm(nnx.Module):
    """RMSNorm (Zhang & Sennrich 2019) or LayerNorm over the last dim; computed in fp32.

    Params: ``scale`` (d,) [+ ``bias`` (d,) for LayerNorm], logical ``("norm",)``.
    """

    def __init__(self, d: int, kind: str, rngs: nnx.Rngs, eps: float = 1e-5, gain_axis: str = "norm"):
        self.kind, self.eps = kind, eps
        self.scale = _param(rngs, jax.nn.initializers.ones, (d,), (gain_axis,))
        self.bias = _param(rngs, jax.nn.initializers.zeros, (d,), ("norm",)) if kind == "layernorm" else None

    def __call__(self, x: jax.Array) -> jax.Array:
        """x: (..., d) -> (..., d), same dtype."""
        xf = x.astype(jnp.float32)
        if self.kind == "layernorm":
            xf = xf - xf.mean(-1, keepdims=True)
        y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + self.eps)
        y = y * self.scale[...].astype(jnp.float32)
        if self.bias is not None:
            y = y + self.bias[...].astype(jnp.float32)
        return y.astype(x.dtype)


def _softmax_with_sinks(scores: jax.Array, sinks: Any, g: int, r: int) -> jax.Array:
    """Softmax over the keys (last axis) of scores (b, g, r, q, s); with ``sinks`` (h = g r
    logits) each head's denominator also holds ``exp(sink)`` (a learned "attend to nothing",
    GPT-OSS), whose probability is dropped."""
    if sinks is None:
        return jax.nn.softmax(scores, axis=-1)
    sink = sinks[...].astype(scores.dtype).reshape(1, g, r, 1, 1)
    sink = jnp.broadcast_to(sink, scores.shape[:-1] + (1,))
    return jax.nn.softmax(jnp.concatenate([scores, sink], axis=-1), axis=-1)[..., :-1]


def rope(x: jax.Array, positions: jax.Array) -> jax.Array:
    """Rotary position embedding (Su et al. 2021), rotate-half convention.

    Args:
        x: (b, s, heads, k) with even k.
        positions: (s,) integer positions.
    """
    k = x.shape[-1]
    inv = 1.0 / (ROPE_THETA ** (jnp.arange(0, k, 2, dtype=jnp.float32) / k))
    ang = positions.astype(jnp.float32)[:, None] * inv[None, :]  # (s, k/2)
    cos, sin = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]
    xf = x.astype(jnp.float32)
    x1, x2 = xf[..., : k // 2], xf[..., k // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).astype(x.dtype)


def sequence_parallel() -> bool:
    """Whether the enclosing :func:`~shardplan.jax.rules.activation_sharding` splits the residual
    stream over an automatic ``tp`` axis (Megatron sequence parallelism: ``act_seq_norm -> tp``)."""
    ctx = active_context()
    if ctx is None:
        return False
    _, rules = ctx
    return local_sizes(rules).get("tp", 1) > 1 and "tp" in rules.act.get("act_seq_norm", ())


@jax.custom_vjp
def sp_gather(x: jax.Array) -> jax.Array:
    """Sequence parallelism's all-gather of a block input over tp: ``x`` (b, s, d) constrained to the
    whole sequence; the backward constrains the cotangent back onto the sequence shard (the
    reduce-scatter of Megatron-LM's ``gather_from_sequence_parallel_region``, Korthikanti et al. 2022
    Sec. 4.2.2). A ``custom_vjp`` so that a ``jax.checkpoint`` policy can tell this gather from other
    values (:func:`is_sp_gather`): ZeRO-3's re-gather policy, which saves everything else, would
    otherwise keep the gathered input for the backward instead of gathering it again."""
    return constrain(x, ("act_batch", "act_seq", "act_embed"))


def _sp_gather_fwd(x: jax.Array) -> tuple[jax.Array, None]:
    return sp_gather(x), None


def _sp_gather_bwd(_: None, ct: jax.Array) -> tuple[jax.Array]:
    return (constrain(ct, ("act_batch", "act_seq_norm", "act_embed")),)


sp_gather.defvjp(_sp_gather_fwd, _sp_gather_bwd)


def is_sp_gather(prim: Any, params: dict[str, Any]) -> bool:
    """Whether a ``jax.checkpoint`` policy's ``(prim, params)`` is a call of :func:`sp_gather` (its
    ``custom_vjp_call``, recognised by its backward rule)."""
    return prim.name == "custom_vjp_call" and getattr(params.get("bwd"), "f", None) is _sp_gather_bwd


def column_parallel(x: jax.Array, weights: tuple[jax.Array, ...], equations: tuple[str, ...]
                    ) -> tuple[jax.Array, ...]:
    """The column-parallel projections of a block input: ``x`` (b, s, d) constrained to the whole
    sequence over tp, then ``jnp.einsum(eq, x, w)`` for each pair of ``equations`` and ``weights``.

    With sequence parallelism this is Megatron's all-gather of the block input before the
    column-parallel projections, and the projections run under ``jax.checkpoint`` (nothing
    saved), so the backward keeps the *sharded* input and all-gathers it again for the weight
    gradients, as Megatron-LM's ``LinearWithGradAccumulationAndAsyncCommunication`` does with
    ``sequence_parallel`` (Korthikanti et al. 2022 Sec. 4.2.2, Fig. 5); left to itself XLA keeps
    the gathered input alive from the forward instead (``tp`` times the memory of the input). The
    recomputed projections themselves are dead code in the backward and dropped.

    Returns:
        One array per equation, in the order given.
    """
    def project(inp: jax.Array, *ws: jax.Array) -> tuple[jax.Array, ...]:
        inp = sp_gather(inp) if sequence_parallel() else constrain(inp, ("act_batch", "act_seq", "act_embed"))
        return tuple(jnp.einsum(eq, inp, w) for eq, w in zip(equations, ws))

    if not sequence_parallel():
        return project(x, *weights)
    x = constrain(x, ("act_batch", "act_seq_norm", "act_embed"))  # what the backward keeps
    return jax.checkpoint(project, policy=jax.checkpoint_policies.nothing_saveable)(x, *weights)


class Attention(nnx.Module):
    """Causal multi-head attention with grouped-query K/V and RoPE.

    Params: ``wqkv`` (d, g, r + 2, k) ``("embed","kv_heads","qkv","head_dim")``, the fused Q/K/V
    projection: for KV group ``j``, ``wqkv[:, j, :r]`` are its r query heads (heads ``j r .. j r +
    r - 1``), ``wqkv[:, j, r]`` its key and ``wqkv[:, j, r + 1]`` its value head (Megatron-LM's
    per-group interleaving, so a tp shard of the ``kv_heads`` axis holds its own Q, K and V heads
    and the backward reduces one input gradient, not three); ``wo`` (h, k, d)
    ``("heads","head_dim","embed")``; optional ``bqkv`` (g, r + 2, k) in the same layout; ``q_norm``
    / ``k_norm`` gains (k,) ``("head_dim",)`` with ``qk_norm='head'`` (Qwen3: RMSNorm of each head's
    Q and K before RoPE), or (h k,) ``("heads",)`` and (g k,) ``("kv_heads",)`` with
    ``qk_norm='full'`` (OLMo 2, HF ``Olmo2Attention``: RMSNorm over the whole Q and K projections,
    split by heads over tp like the projections, the mean square reduced over tp); ``sinks`` (h,)
    ``("heads",)`` with ``attention_sinks`` (GPT-OSS: a learned logit per head in every softmax
    denominator); ``bo`` (d,) ``("norm",)`` with ``linear_bias`` or ``attn_out_bias`` (Llama
    ``attention_bias``, GPT-OSS ``o_proj.bias``). With ``clip_qkv`` c the projected Q, K and V (biases
    included) are clamped to [-c, c] (DBRX: HF ``DbrxAttention`` clamps the ``Wqkv`` output). With a
    window w (this layer's, see ``window``) every query attends to its last w keys (Mistral v0.1,
    Beltagy et al. 2020). Under context parallelism Q stays sequence-sharded over ``cp``; the attention
    core either passes K/V blocks around the cp ring (``cp_attention="ring"``, the default:
    :mod:`shardplan.jax.ring`, sequence in zig-zag order) or constrains K and V to the full sequence,
    which GSPMD all-gathers over ``cp`` (``cp_attention="allgather"``).

    With ``fused=False`` (KV-head replication, tp > g: a tp shard of the query heads is not a
    shard of the fused tensor) the same values are held unfused, ``wq`` (d, h, k)
    ``("embed","heads","head_dim")`` and ``wk`` / ``wv`` (d, g, k) ``("embed","kv_heads","head_dim")``
    (+ ``bq`` / ``bk`` / ``bv``), split from the same draw (:func:`split_qkv`), so both layouts
    compute the same function from the same seed.

    Args:
        m: the shapes.
        rngs: parameter RNG stream.
        fused: hold Q/K/V fused (see above).
        window: this layer's sliding window in tokens (None: full attention); a per-layer static
            value, ``sliding_window`` on the spec's sliding layers (:meth:`ModelSpec.is_sliding_layer`).
    """

    def __init__(self, m: ModelSpec, rngs: nnx.Rngs, fused: bool = True, window: int | None = None):
        d, h, g, k = m.d_model, m.n_heads, m.kv_heads, m.dim_head
        self.h, self.g, self.k, self.rope = h, g, k, m.position == "rope"
        self._init_qkv(m, rngs, fused)
        self.wo = _param(rngs, _fan_in((0, 1), 2), (h, k, d), ("heads", "head_dim", "embed"))
        zeros = jax.nn.initializers.zeros
        self.bo = _param(rngs, zeros, (d,), ("norm",)) if (m.linear_bias or m.attn_out_bias) else None
        # QK-norm over each head's width, one gain of head_dim shared by the heads (Qwen3 q_norm / k_norm),
        # or over the whole projection, one gain per Q / K feature (OLMo 2)
        self.qk_full = m.qk_norm == "full"
        if m.qk_norm == "head":
            self.q_norm = Norm(k, "rmsnorm", rngs, gain_axis="head_dim")
            self.k_norm = Norm(k, "rmsnorm", rngs, gain_axis="head_dim")
        elif self.qk_full:
            self.q_norm = Norm(h * k, "rmsnorm", rngs, gain_axis="heads")
            self.k_norm = Norm(g * k, "rmsnorm", rngs, gain_axis="kv_heads")
        else:
            self.q_norm = self.k_norm = None
        # attention sinks: one learned logit per head in every softmax denominator (GPT-OSS)
        self.sinks = _param(rngs, zeros, (h,), ("heads",)) if m.attention_sinks else None
        self.window, self.clip, self.softcap = window, m.clip_qkv, m.attention_softcap

    def _init_qkv(self, m: ModelSpec, rngs: nnx.Rngs, fused: bool) -> None:
        """The Q/K/V projection: one fan-in (d) draw of shape (d, g, r + 2, k), kept fused or split."""
        d, g, k, r = m.d_model, self.g, self.k, self.h // self.g
        w = _fan_in(0, (1, 2, 3))(rngs.params(), (d, g, r + 2, k), jnp.float32)
        b = jnp.zeros((g, r + 2, k), jnp.float32) if (m.qkv_bias or m.linear_bias) else None
        if fused:
            self.wqkv = _var(w, ("embed",) + QKV_LOGICAL)
            self.bqkv = None if b is None else _var(b, QKV_LOGICAL)
            self.wq = self.wk = self.wv = self.bq = self.bk = self.bv = None
            return
        self.wqkv = self.bqkv = None
        wq, wk, wv = split_qkv(w)
        self.wq, self.wk, self.wv = (_var(wq, ("embed", "heads", "head_dim")),
                                     _var(wk, ("embed", "kv_heads", "head_dim")),
                                     _var(wv, ("embed", "kv_heads", "head_dim")))
        if b is None:
            self.bq = self.bk = self.bv = None
        else:
            bq, bk, bv = split_qkv(b)
            self.bq, self.bk, self.bv = (_var(bq, ("heads", "head_dim")), _var(bk, ("kv_heads", "head_dim")),
                                         _var(bv, ("kv_heads", "head_dim")))

    def project(self, x: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The Q/K/V projection (with biases): x (b, s, d) -> q (b, s, h, k), k and v (b, s, g, k).

        Fused: one einsum into (b, s, g, r + 2, k), then split (:func:`split_qkv`). The input is
        first constrained to the whole sequence over tp (with SP, Megatron's all-gather of the norm
        output before the column-parallel projection): without it XLA may all-gather the fused
        weight instead and all-to-all the projection to head sharding.
        """
        if self.wqkv is not None:
            (y,) = column_parallel(x, (self.wqkv[...],), ("bsd,dgjk->bsgjk",))
            if self.bqkv is not None:
                y = y + self.bqkv[...]
            return split_qkv(y)
        q, kk, v = column_parallel(x, (self.wq[...], self.wk[...], self.wv[...]),
                                   ("bsd,dhk->bshk", "bsd,dgk->bsgk", "bsd,dgk->bsgk"))
        if self.bq is not None:
            q, kk, v = q + self.bq[...], kk + self.bk[...], v + self.bv[...]
        return q, kk, v

    def qk_normalise(self, q: jax.Array, kk: jax.Array) -> tuple[jax.Array, jax.Array]:
        """QK-norm before RoPE: q (b, s, h, k), kk (b, s, g, k), same shapes out; per head (Qwen3
        ``q_norm`` / ``k_norm`` of head_dim) or over the whole projection (OLMo 2: the (b, s, h k)
        query and (b, s, g k) key are normalised, HF ``Olmo2Attention``); identity without QK-norm."""
        if self.q_norm is None:
            return q, kk
        if not self.qk_full:
            return self.q_norm(q), self.k_norm(kk)
        b, s = q.shape[:2]
        return (self.q_norm(q.reshape(b, s, -1)).reshape(q.shape),
                self.k_norm(kk.reshape(b, s, -1)).reshape(kk.shape))

    def __call__(self, x: jax.Array, positions: jax.Array, window: Any = None) -> jax.Array:
        """x: (b, s, d) -> (b, s, d).

        ``window`` overrides this layer's own window (``self.window``): an int32 scalar, possibly
        traced -- the pipeline scans stacked layers with one block definition and passes each
        layer's window as data (a full-attention layer gets a window longer than any sequence).
        """
        b, s, _ = x.shape
        window = self.window if window is None else window
        q, kk, v = self.project(x)
        if self.clip is not None:  # DBRX: the Wqkv output clamped to [-clip_qkv, clip_qkv]
            q, kk, v = (jnp.clip(t, -self.clip, self.clip) for t in (q, kk, v))
        q, kk = self.qk_normalise(q, kk)
        q = constrain(q, ("act_batch", "act_seq", "act_heads", None))
        if self.rope:
            q, kk = rope(q, positions), rope(kk, positions)
        qg = q.reshape(b, s, self.g, self.h // self.g, self.k)
        core = self._ring_core if ring_degree() else self._ulysses_core if ulysses_degree() else self._gathered_core
        out = core(qg, kk, v, positions, window).reshape(b, s, self.h, self.k)
        out = constrain(out, ("act_batch", "act_seq", "act_heads", None))
        y = jnp.einsum("bshk,hkd->bsd", out, self.wo[...])
        if self.bo is not None:
            y = y + self.bo[...]
        return y

    def _gathered_core(self, qg: jax.Array, kk: jax.Array, v: jax.Array, positions: jax.Array,
                       window: Any = None, groups: str = "act_kv_heads", queries: str | None = "act_seq") -> jax.Array:
        """Attention core with K/V over the whole sequence (all-gathered over cp by GSPMD): qg
        (b, s, g, r, k), kk / v (b, s, g, k), positions (s,) -> (b, s, g, r, k); ``window`` the
        layer's sliding window (None: full attention; may be traced, see :meth:`__call__`). ``groups`` /
        ``queries``: the logical names of the KV-group and query dimensions of the scores (:meth:`_ulysses_core`
        passes its own)."""
        # K/V over the whole sequence (gathered over cp), heads still split over tp
        kk = constrain(kk, ("act_batch", None, groups, None))
        v = constrain(v, ("act_batch", None, groups, None))
        scores = jnp.einsum("bqgrk,bsgk->bgrqs", qg, kk).astype(jnp.float32) / math.sqrt(self.k)
        if self.softcap is not None:  # Gemma 2: c tanh(scores / c) before the mask (Gemma2Attention)
            scores = self.softcap * jnp.tanh(scores / self.softcap)
        scores = constrain(scores, ("act_batch", groups, None, queries, None))
        mask = positions[:, None] >= positions[None, :]
        if window is not None:  # Mistral v0.1: a query sees its last `window` keys (itself included)
            mask = mask & (positions[:, None] - positions[None, :] < window)
        scores = jnp.where(mask[None, None, None], scores, jnp.finfo(jnp.float32).min)
        probs = _softmax_with_sinks(scores, self.sinks, qg.shape[2], qg.shape[3]).astype(qg.dtype)
        return jnp.einsum("bgrqs,bsgk->bqgrk", probs, v)

    def _ulysses_core(self, qg: jax.Array, kk: jax.Array, v: jax.Array, positions: jax.Array,
                      window: Any = None) -> jax.Array:
        """Attention core as DeepSpeed-Ulysses (Jacobs et al. 2023, Sec. 3; the plan's ``cp_comm='a2a'``): Q, K
        and V constrained from sequence shards to KV-group shards over tp x cp (``act_kv_heads_cp``), which GSPMD
        re-shards with one AllToAll each, the attention of :meth:`_gathered_core` over the whole sequence, and the
        output constrained back to its group shard (the caller's sequence constraint re-shards it with a fourth
        AllToAll; the backward transposes the four). A tp rank with fewer KV heads than cp repeats each
        (:func:`~shardplan.jax.ring.ulysses_kv_copies` = f copies) on its sequence shard before the AllToAll, and its
        query groups split into f groups of r / f heads, as DeepSpeed replicates them: the K and V AllToAlls then
        carry cp heads per tp rank, the planner's payload (``parallel.a2a_kv_heads``). Same shapes as
        :meth:`_gathered_core`."""
        b, s, g, r, k = qg.shape
        f = ulysses_kv_copies(g)
        # pinned as sequence shards first (as the ring's), so that the re-shard to group shards happens here
        qg = constrain(qg, ("act_batch", "act_seq", "act_kv_heads", None, None))
        kk = constrain(kk, ("act_batch", "act_seq", "act_kv_heads", None))
        v = constrain(v, ("act_batch", "act_seq", "act_kv_heads", None))
        if f > 1:  # head h = (group, query) keeps its flat index: group x r + query = (group x f + copy) x r / f + rest
            qg = constrain(qg.reshape(b, s, g * f, r // f, k), ("act_batch", "act_seq", "act_kv_heads", None, None))
            kk = constrain(jnp.repeat(kk, f, axis=2), ("act_batch", "act_seq", "act_kv_heads", None))
            v = constrain(jnp.repeat(v, f, axis=2), ("act_batch", "act_seq", "act_kv_heads", None))
        qg = constrain(qg, ("act_batch", None, "act_kv_heads_cp", None, None))
        positions = constrain(positions, (None,))  # whole: each rank masks the whole sequence itself
        out = self._gathered_core(qg, kk, v, positions, window, groups="act_kv_heads_cp", queries=None)
        out = constrain(out, ("act_batch", None, "act_kv_heads_cp", None, None))
        return out.reshape(b, s, g, r, out.shape[-1]) if f > 1 else out

    def _ring_core(self, qg: jax.Array, kk: jax.Array, v: jax.Array, positions: jax.Array,
                   window: Any = None) -> jax.Array:
        """Attention core as a K/V ring over cp (:func:`shardplan.jax.ring.ring_attention`; the
        sequence in the trainer's zig-zag order, ``positions`` the matching token positions): same
        shapes as :meth:`_gathered_core`."""
        if self.softcap is not None:  # the ring's blockwise kernel has no softcap: refuse rather than drop it
            raise ConfigError("attention softcapping (attention_softcap) with ring attention: the ring's blockwise "
                              "kernel does not cap the scores; legal: --cp-attention allgather, or cp_comm a2a",
                              field="cp_attention", value="ring", legal=["allgather", "a2a"])
        kk = constrain(kk, ("act_batch", "act_seq", "act_kv_heads", None))
        v = constrain(v, ("act_batch", "act_seq", "act_kv_heads", None))
        sinks = None if self.sinks is None else self.sinks[...]
        return ring_attention(qg, kk, v, positions, window=window, sinks=sinks)


class LatentAttention(nnx.Module):
    """Multi-head latent attention (DeepSeek-V2, Liu et al. 2024 Sec. 2.1, Eqs. 9-19), causal.

    Params (the Hugging Face ``DeepseekV2Attention`` layout, so the count equals the planner's):
    ``wq_a`` (d, d_c') ``("embed","latent")`` + ``q_norm`` (d_c') + ``wq_b`` (d_c', h, d_q)
    ``("latent","heads","head_dim")`` with a query latent, else ``wq`` (d, h, d_q); ``wkv_a``
    (d, d_c + d_rope) ``("embed","latent")`` (the K/V latent and the decoupled RoPE key shared by
    the heads); ``kv_norm`` (d_c); ``wkv_b`` (d_c, h, d_nope + d_v); ``wo`` (h, d_v, d). The down
    projections and latent norms are whole on every tp rank (no ``heads`` axis), as Megatron-LM's
    ``MLASelfAttention`` builds them; d_q = d_nope + d_rope.
    """

    def __init__(self, m: ModelSpec, rngs: nnx.Rngs):
        d, h = m.d_model, m.n_heads
        c, cq, nope, rp, dv = m.kv_lora_rank, m.q_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim
        self.h, self.c, self.nope, self.rp, self.dv = h, c, nope, rp, dv
        dq = nope + rp
        if cq:
            self.wq_a = _param(rngs, _fan_in(0, 1), (d, cq), ("embed", "latent"))
            self.q_norm = Norm(cq, "rmsnorm", rngs, gain_axis="latent")
            self.wq_b = _param(rngs, _fan_in(0, (1, 2)), (cq, h, dq), ("latent", "heads", "head_dim"))
            self.wq = None
        else:
            self.wq_a = self.q_norm = self.wq_b = None
            self.wq = _param(rngs, _fan_in(0, (1, 2)), (d, h, dq), ("embed", "heads", "head_dim"))
        self.wkv_a = _param(rngs, _fan_in(0, 1), (d, c + rp), ("embed", "latent"))
        self.kv_norm = Norm(c, "rmsnorm", rngs, gain_axis="latent")
        self.wkv_b = _param(rngs, _fan_in(0, (1, 2)), (c, h, nope + dv), ("latent", "heads", "head_dim"))
        self.wo = _param(rngs, _fan_in((0, 1), 2), (h, dv, d), ("heads", "head_dim", "embed"))

    def __call__(self, x: jax.Array, positions: jax.Array) -> jax.Array:
        """x: (b, s, d) -> (b, s, d)."""
        if self.wq is not None:
            q = jnp.einsum("bsd,dhk->bshk", x, self.wq[...])
        else:
            q = jnp.einsum("bsc,chk->bshk", self.q_norm(jnp.einsum("bsd,dc->bsc", x, self.wq_a[...])), self.wq_b[...])
        q = constrain(q, ("act_batch", "act_seq", "act_heads", None))
        ckv = jnp.einsum("bsd,dc->bsc", x, self.wkv_a[...])
        kv = jnp.einsum("bsc,chk->bshk", self.kv_norm(ckv[..., :self.c]), self.wkv_b[...])
        ring = ring_degree() > 0  # K/V passed around the cp ring, else the whole sequence (gathered over cp)
        kv_seq = "act_seq" if ring else None
        kv = constrain(kv, ("act_batch", kv_seq, "act_heads", None))
        k_rope = rope(ckv[..., None, self.c:], positions)  # (b, s, 1, d_rope), shared by the heads
        q = jnp.concatenate([q[..., :self.nope], rope(q[..., self.nope:], positions)], -1)
        k = jnp.concatenate([kv[..., :self.nope], jnp.broadcast_to(k_rope, kv.shape[:-1] + (self.rp,))], -1)
        k = constrain(k, ("act_batch", kv_seq, "act_heads", None))
        scale = 1.0 / math.sqrt(self.nope + self.rp)
        if ring:  # every head its own K/V head (g = h, r = 1)
            out = ring_attention(q[:, :, :, None], k, kv[..., self.nope:], positions, scale=scale)[:, :, :, 0]
        else:
            scores = jnp.einsum("bqhk,bshk->bhqs", q, k).astype(jnp.float32) * scale
            mask = positions[:, None] >= positions[None, :]
            scores = jnp.where(mask[None, None], scores, jnp.finfo(jnp.float32).min)
            probs = jax.nn.softmax(scores, axis=-1).astype(x.dtype)
            out = jnp.einsum("bhqs,bshv->bqhv", probs, kv[..., self.nope:])
        out = constrain(out, ("act_batch", "act_seq", "act_heads", None))
        return jnp.einsum("bqhv,hvd->bqd", out, self.wo[...])


def _hidden(swiglu: bool, gate: jax.Array | None, up: jax.Array, b_gate: Any, b_up: Any,
            expand: Any = lambda b: b) -> jax.Array:
    """An MLP's hidden activations from its projections: SwiGLU ``silu(gate + b_gate) * (up + b_up)``
    (Shazeer 2020, "GLU Variants Improve Transformer", Eq. 6 with Swish_1 = SiLU) or GeLU
    ``gelu(up + b_up)`` (Hendrycks & Gimpel 2016). ``gate`` / ``up``: (..., f); ``b_gate`` /
    ``b_up``: bias parameters or None, ``expand`` maps a bias value to a shape that broadcasts
    against the projections (e.g. per-expert biases (e, f) onto (b, e, C, f) buffers)."""
    if b_up is not None:
        up = up + expand(b_up[...])
    if b_gate is not None:
        gate = gate + expand(b_gate[...])
    return jax.nn.silu(gate) * up if swiglu else jax.nn.gelu(up)


class MLP(nnx.Module):
    """SwiGLU (Shazeer 2020) or GeLU MLP, Megatron column/row parallel over ``mlp``.

    Params: SwiGLU ``w_gate_up`` (d, 2, f) ``("embed","gate_up","mlp")``, the fused gate
    (``[:, 0]``) and up (``[:, 1]``) projections, so a tp shard of ``mlp`` holds its own gate and
    up columns and the backward reduces one input gradient; GeLU ``w_up`` (d, f)
    ``("embed","mlp")``; ``w_down`` (f, d) ``("mlp","embed")``; with ``linear_bias`` or ``mlp_bias``
    biases ``b_up`` (f,) ``("mlp",)``, ``b_down`` (d,) ``("norm",)`` and for SwiGLU ``b_gate`` (f,)
    (HF ``LlamaMLP`` with ``mlp_bias``: gate, up and down projections all biased; the planner's
    ``ModelSpec.mlp_params`` counts ``(phi - 1) f + d``). The biases are vectors, held unfused.
    """

    def __init__(self, m: ModelSpec, width: int, rngs: nnx.Rngs):
        d = m.d_model
        self.swiglu = m.mlp == "swiglu"
        if self.swiglu:
            self.w_gate_up = _param(rngs, _fan_in(0, (1, 2)), (d, 2, width), ("embed", "gate_up", "mlp"))
            self.w_up = None
        else:
            self.w_gate_up = None
            self.w_up = _param(rngs, _fan_in(0, 1), (d, width), ("embed", "mlp"))
        self.w_down = _param(rngs, _fan_in(0, 1), (width, d), ("mlp", "embed"))
        zeros = jax.nn.initializers.zeros
        bias = m.linear_bias or m.mlp_bias
        self.b_up = _param(rngs, zeros, (width,), ("mlp",)) if bias else None
        self.b_down = _param(rngs, zeros, (d,), ("norm",)) if bias else None
        self.b_gate = _param(rngs, zeros, (width,), ("mlp",)) if bias and self.swiglu else None

    def __call__(self, x: jax.Array) -> jax.Array:
        """x: (b, s, d) -> (b, s, d); x is constrained to the whole sequence over tp first (see
        :meth:`Attention.project`)."""
        if self.swiglu:
            (gu,) = column_parallel(x, (self.w_gate_up[...],), ("bsd,dcf->bscf",))
            gate, u = gu[:, :, 0], gu[:, :, 1]
        else:
            gate, (u,) = None, column_parallel(x, (self.w_up[...],), ("bsd,df->bsf",))
        hdn = constrain(_hidden(self.swiglu, gate, u, self.b_gate, self.b_up), ("act_batch", "act_seq", "act_mlp"))
        y = jnp.einsum("bsf,fd->bsd", hdn, self.w_down[...])
        if self.b_down is not None:
            y = y + self.b_down[...]
        return y


def top_k_last(x: jax.Array, k: int) -> tuple[jax.Array, jax.Array]:
    """The k largest entries of the last axis and their indices, largest first, the lower index first
    on ties (what ``jax.lax.top_k`` returns), by k rounds of argmax: element-wise work along the
    last axis that GSPMD keeps sharded over the leading axes (XLA's TopK is gathered over the batch
    on CPU, an AllGather the plan does not have). x: (..., e) -> ((..., k), (..., k) int32)."""
    vals, idxs = [], []
    for _ in range(k):
        i = jnp.argmax(x, -1)
        vals.append(jnp.take_along_axis(x, i[..., None], -1)[..., 0])
        idxs.append(i.astype(jnp.int32))
        x = jnp.where(jax.nn.one_hot(i, x.shape[-1], dtype=jnp.bool_), -jnp.inf, x)
    return jnp.stack(vals, -1), jnp.stack(idxs, -1)


_CAPACITY: contextvars.ContextVar[float | None] = contextvars.ContextVar("shardplan_moe_capacity", default=None)


@contextlib.contextmanager
def moe_capacity(capacity_factor: float | None) -> Iterator[None]:
    """While tracing inside this context, :class:`MoE` layers drop tokens beyond an expert capacity of
    ``ceil(capacity_factor x s x top_k / n_experts)`` per sequence and exchange fixed buffers by
    AllToAll (:func:`capacity_dispatch`); None keeps the dense dropless dispatch."""
    token = _CAPACITY.set(capacity_factor)
    try:
        yield
    finally:
        _CAPACITY.reset(token)


_LOCAL_LOOKUP: contextvars.ContextVar[bool] = contextvars.ContextVar("shardplan_local_lookup", default=False)


@contextlib.contextmanager
def local_lookup_gradients(enabled: bool = True) -> Iterator[None]:
    """While tracing inside this context (``enabled``), :func:`embedding_lookup` computes the
    table's gradient on each device from its own tokens (a ``jax.shard_map`` manual over the mesh
    axes that shard the tokens, :func:`_lookup_plan`) and sums the per-device tables once under
    GSPMD: the FSDP pattern, one reduction of the whole table gradient (a ReduceScatter onto a
    ZeRO-2/3 shard). Outside it (the default) a lookup with a vocab-parallel table does the same
    (:func:`vocab_parallel_lookup`); any other lookup is ``jnp.take`` and its backward is left to
    XLA."""
    token = _LOCAL_LOOKUP.set(enabled)
    try:
        yield
    finally:
        _LOCAL_LOOKUP.reset(token)


class LookupPlan(NamedTuple):
    """How :func:`embedding_lookup` runs under a mesh (hashable: a ``custom_vjp`` static argument).

    Attributes:
        mesh: the mesh to name in the ``jax.shard_map`` (:func:`~shardplan.jax.rules.context_mesh`).
        batch: mesh axes (manual in the map) sharding the tokens' batch dimension.
        seq: mesh axes (manual) sharding the tokens' sequence dimension (``cp``).
        tp: ``"tp"`` when the table's vocabulary is split over tp (Megatron's vocab-parallel
            embedding), else None.
        sp: with ``tp``: the output is reduce-scattered along the sequence (sequence parallelism)
            instead of all-reduced.
        rows: the table rows on one tp rank (``v / t``; ``v`` without tp).
        manual: the map's manual axes: every mesh axis not already manual in the enclosing context
            (a map with automatic axes left fails to compile bf16 all-reduces on XLA:CPU, "Invalid
            binary instruction opcode copy", jax 0.10.2; the axes beyond ``batch``, ``seq`` and
            ``tp`` only replicate the lookup).
    """

    mesh: Any
    batch: tuple[str, ...]
    seq: tuple[str, ...]
    tp: str | None
    sp: bool
    rows: int
    manual: tuple[str, ...]


def _lookup_plan(table: jax.Array, tokens: jax.Array) -> LookupPlan | None:
    """The :class:`LookupPlan` of one lookup under the enclosing :func:`activation_sharding`, or
    None for a plain ``jnp.take``: outside a mesh context, or when the table is not vocab-parallel
    (``vocab -> tp``, tp > 1) and :func:`local_lookup_gradients` is off. The token axes come from
    the activation rules (``act_batch``, ``act_seq``) without the mesh axes already manual in the
    enclosing context (the per-step accumulation, the pipeline); sequence parallelism from
    ``act_seq_norm`` holding ``tp``.

    Raises:
        ConfigError: tokens not divisible by their mesh axes (:func:`~shardplan.jax.rules.resolve`).
    """
    ctx = active_context()
    if ctx is None:
        return None
    mesh, rules = ctx
    sizes = local_sizes(rules)
    tp = "tp" if sizes.get("tp", 1) > 1 and "tp" in rules.param.get("vocab", ()) else None
    if tp is None and not _LOCAL_LOOKUP.get():
        return None
    spec = resolve(("act_batch", "act_seq"), tokens.shape, rules.act, sizes, "tokens")
    batch, seq = (tuple(a for a in _spec_axes(e) if a != "tp") for e in spec)
    if tp is None and not (batch or seq):
        return None
    sp = tp is not None and "tp" in rules.act.get("act_seq_norm", ())
    rows = table.shape[0] // (sizes["tp"] if tp else 1)
    manual = manual_axes()
    free = tuple(a for a in mesh.axis_names if a not in manual)
    return LookupPlan(context_mesh(mesh), batch, seq, tp, sp, rows, free)


def _spec_axes(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one PartitionSpec entry (None, a name or a tuple of names)."""
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def embedding_lookup(table: jax.Array, tokens: jax.Array) -> jax.Array:
    """The rows of ``table`` (v, d) at ``tokens`` (b, s) int32 -> (b, s, d).

    A vocab-parallel table (``vocab -> tp``, tp > 1) is looked up as Megatron-LM's
    ``VocabParallelEmbedding`` does (:func:`vocab_parallel_lookup`); inside
    :func:`local_lookup_gradients` the table gradient is built per device and reduced once. Left
    to itself XLA all-gathers a vocab-sharded table under sequence parallelism (and all-reduces
    its gradient over tp and then, in full, over dp), all-to-alls the lookup's cotangent to a
    ZeRO-sharded table's layout, or inside a partially manual ``jax.shard_map`` all-gathers the
    cotangent and the token ids over the shard group -- none of which Megatron-LM or FSDP (nor
    the planner) send. Otherwise (no mesh context, or neither case) ``jnp.take``.
    """
    plan = _lookup_plan(table, tokens)
    if plan is None:
        return jnp.take(table, tokens, axis=0)
    return vocab_parallel_lookup(table, tokens, plan)


def _masked_rows(tokens: jax.Array, rows: int, tp: str | None) -> tuple[jax.Array, jax.Array]:
    """Inside the lookup's map: ``(index, valid)``, each token's row in this rank's vocabulary
    range ``[r rows, (r + 1) rows)`` (r = tp rank; the whole table without tp), clipped, and
    whether it lies in the range."""
    if tp is None:
        return tokens, jnp.ones(tokens.shape, bool)
    idx = tokens - jax.lax.axis_index(tp) * rows
    valid = (idx >= 0) & (idx < rows)
    return jnp.where(valid, idx, 0), valid


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def vocab_parallel_lookup(table: jax.Array, tokens: jax.Array, plan: LookupPlan) -> jax.Array:
    """Megatron-LM's vocab-parallel embedding under a ``jax.shard_map`` manual over tp and the
    token axes of ``plan`` (the other mesh axes stay automatic).

    Forward (Megatron-LM ``VocabParallelEmbedding``): each tp rank looks up the tokens of its own
    vocabulary range in its ``(v / t, d)`` shard, the others masked to zero, and the partial
    results are summed over tp: ``jax.lax.psum_scatter`` along the sequence with sequence
    parallelism (the ``reduce_scatter_to_sequence_parallel_region`` of Korthikanti et al. 2022,
    Sec. 4.2.2: the output leaves split over ``(cp, tp)`` like the residual stream), ``psum``
    without. Backward: the cotangent is all-gathered over tp along the sequence (SP; without SP
    it is already whole), each device scatter-adds its tokens' rows into its own ``(v / t, d)``
    table gradient, and the per-device tables (stacked along a leading dimension over the token
    axes) are summed once under GSPMD -- one AllReduce, or a ReduceScatter onto a ZeRO shard, of
    the local table shard, as Megatron-LM / FSDP reduce it.

    Args:
        table: (v, d), ``v`` divisible by tp (the runtime pads the vocabulary,
            :func:`shardplan.parallel.padded_vocab`); any float dtype.
        tokens: (b, s) int32 ids < v.
        plan: from :func:`_lookup_plan`.

    Returns:
        (b, s, d) in the table's dtype.
    """
    return _vp_forward(table, tokens, plan)


def _vp_specs(plan: LookupPlan) -> tuple[P, P, P]:
    """(table, tokens, output) specs of the lookup's map over ``plan``'s manual axes."""
    b, s = plan.batch or None, plan.seq or None
    out_seq = (plan.seq + (plan.tp,)) if plan.sp else s
    return P(plan.tp, None), P(b, s), P(b, out_seq, None)


def _vp_forward(table: jax.Array, tokens: jax.Array, plan: LookupPlan) -> jax.Array:
    """The forward of :func:`vocab_parallel_lookup`; without tp a plain ``jnp.take`` under GSPMD
    (local on every device: the table is whole there; a map would only add a copy of it)."""
    if plan.tp is None:
        return jnp.take(table, tokens, axis=0)
    t_spec, tok_spec, out_spec = _vp_specs(plan)

    def local(w: jax.Array, tok: jax.Array) -> jax.Array:
        idx, valid = _masked_rows(tok, plan.rows, plan.tp)
        y = jnp.where(valid[..., None], jnp.take(w, idx, axis=0), jnp.zeros((), w.dtype))
        if plan.sp:
            return jax.lax.psum_scatter(y, plan.tp, scatter_dimension=1, tiled=True)
        return jax.lax.psum(y, plan.tp)

    return jax.shard_map(local, mesh=plan.mesh, in_specs=(t_spec, tok_spec), out_specs=out_spec,
                         axis_names=set(plan.manual))(table, tokens)


def _vp_fwd(table: jax.Array, tokens: jax.Array, plan: LookupPlan) -> tuple[jax.Array, Any]:
    return _vp_forward(table, tokens, plan), tokens


def _vp_bwd(plan: LookupPlan, res: Any, dy: jax.Array) -> tuple[jax.Array, None]:
    _, tok_spec, out_spec = _vp_specs(plan)
    tokens, data = res, plan.batch + plan.seq

    def local(tok: jax.Array, g: jax.Array) -> jax.Array:  # this device's tokens and cotangents
        if plan.sp:
            g = jax.lax.all_gather(g, plan.tp, axis=1, tiled=True)
        idx, valid = _masked_rows(tok, plan.rows, plan.tp)
        g = jnp.where(valid[..., None], g, jnp.zeros((), g.dtype))
        d = jnp.zeros((plan.rows, g.shape[-1]), g.dtype).at[idx.reshape(-1)].add(g.reshape(-1, g.shape[-1]))
        return d[None]

    stacked = jax.shard_map(local, mesh=plan.mesh, in_specs=(tok_spec, out_spec),
                            out_specs=P(data or None, plan.tp, None), axis_names=set(plan.manual))(tokens, dy)
    return jnp.sum(stacked, 0), None


vocab_parallel_lookup.defvjp(_vp_fwd, _vp_bwd)


def expert_capacity(capacity_factor: float, seq_len: int, top_k: int, n_experts: int) -> int:
    """Tokens one expert takes from one sequence (the group): ``ceil(cf s k / e)``, at least 1
    (GShard, Lepikhin et al. 2021 Sec. 2.2, with a group = one sequence; Switch Transformer, Fedus
    et al. 2022 Sec. 2.2, eq. 3 for the capacity factor)."""
    return max(1, math.ceil(capacity_factor * seq_len * top_k / n_experts))


def capacity_dispatch(idx: jax.Array, gates: jax.Array, n_experts: int, capacity: int) -> tuple[jax.Array, jax.Array]:
    """GShard's dispatch and combine tensors (Lepikhin et al. 2021, Algorithm 1 / Sec. 2.2).

    Args:
        idx: (b, s, k) int expert of each token's k choices.
        gates: (b, s, k) gate weight of each choice.
        n_experts: e.
        capacity: C, buffer slots per expert and sequence.

    Returns:
        (dispatch, combine), each (b, s, e, C): dispatch is 1 where a token's choice takes slot c of
        expert e; combine is that times the gate. Slots are given in priority order: every token's
        first choice before any second choice (GShard's top-2 order), tokens in sequence order;
        choices beyond the capacity are dropped (zero rows: the residual stream carries the token).
    """
    b, s, k = idx.shape
    choice = jax.nn.one_hot(idx, n_experts, dtype=jnp.int32)  # (b, s, k, e)
    ordered = jnp.swapaxes(choice, 1, 2).reshape(b, k * s, n_experts)  # first choices first
    slot = (jnp.cumsum(ordered, axis=1) - 1).reshape(b, k, s, n_experts)
    slot = jnp.swapaxes(jnp.sum(slot * jnp.swapaxes(choice, 1, 2), -1), 1, 2)  # (b, s, k)
    keep = (slot < capacity).astype(gates.dtype)
    slots = jax.nn.one_hot(slot, capacity, dtype=gates.dtype) * keep[..., None]  # (b, s, k, C)
    choice_f = choice.astype(gates.dtype)
    dispatch = jnp.einsum("bske,bskc->bsec", choice_f, slots)
    combine = jnp.einsum("bske,bskc,bsk->bsec", choice_f, slots, gates)
    return dispatch, combine


class MoE(nnx.Module):
    """Top-k routed experts with dense dispatch, experts sharded over ``ep``.

    Params: ``router`` (d, e) ``("embed", None)`` (replicated over experts); SwiGLU ``w_gate_up``
    (e, d, 2, f) ``("experts","embed","gate_up","mlp")`` (gate ``[:, :, 0]``, up ``[:, :, 1]``, fused
    as in :class:`MLP`), GeLU ``w_up`` (e, d, f) ``("experts","embed","mlp")``; ``w_down`` (e, f, d)
    ``("experts","mlp","embed")``;
    ``shared`` dense MLP of width ``n_shared_experts * expert_ffn`` when present.
    With ``router_bias``: ``router_bias`` (e,) ``(None,)`` added to the router logits (GPT-OSS
    ``GptOssTopKRouter``). With ``mlp_bias`` or ``linear_bias``, per-expert biases ``b_up`` (e, f) and
    for SwiGLU ``b_gate`` (e, f) ``("experts","mlp")``, ``b_down`` (e, d) ``("experts","norm")``
    (GPT-OSS ``GptOssExperts`` ``gate_up_proj_bias`` (e, 2f) and ``down_proj_bias`` (e, d)).
    Gates: softmax over all experts, top-k kept and renormalised (Mixtral; equal to GPT-OSS's softmax
    over the top-k logits).
    """

    def __init__(self, m: ModelSpec, rngs: nnx.Rngs):
        d, e, f = m.d_model, m.n_experts, m.expert_ffn
        self.top_k, self.n_experts, self.swiglu = m.top_k, e, m.mlp == "swiglu"
        self.router = _param(rngs, _normal(0.02), (d, e), ("embed", None))
        init = _fan_in(1, 2, batch_axis=0)
        if self.swiglu:
            self.w_gate_up = _param(rngs, _fan_in(1, (2, 3), batch_axis=0), (e, d, 2, f),
                                    ("experts", "embed", "gate_up", "mlp"))
            self.w_up = None
        else:
            self.w_gate_up = None
            self.w_up = _param(rngs, init, (e, d, f), ("experts", "embed", "mlp"))
        self.w_down = _param(rngs, init, (e, f, d), ("experts", "mlp", "embed"))
        self.shared = MLP(m, m.n_shared_experts * f, rngs) if m.n_shared_experts else None
        zeros, bias = jax.nn.initializers.zeros, m.linear_bias or m.mlp_bias
        self.router_bias = _param(rngs, zeros, (e,), (None,)) if m.router_bias else None
        self.b_up = _param(rngs, zeros, (e, f), ("experts", "mlp")) if bias else None
        self.b_gate = _param(rngs, zeros, (e, f), ("experts", "mlp")) if bias and self.swiglu else None
        self.b_down = _param(rngs, zeros, (e, d), ("experts", "norm")) if bias else None

    def _route(self, x: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(top-k gate weights (b, s, k) float32, expert indices (b, s, k)): softmax over all experts,
        top-k kept and renormalised (Mixtral)."""
        logits = jnp.einsum("bsd,de->bse", x, self.router[...]).astype(jnp.float32)
        if self.router_bias is not None:  # GPT-OSS router.bias
            logits = logits + self.router_bias[...].astype(jnp.float32)
        top, idx = top_k_last(jax.nn.softmax(logits, -1), self.top_k)
        return top / top.sum(-1, keepdims=True), idx

    def _buffer_experts(self, xe: jax.Array) -> jax.Array:
        """Expert MLPs on the capacity buffers ``xe`` (b, e, C, d) -> (b, e, C, d); the hidden
        (b, e, C, f) is constrained to the buffers' layout (experts over ep, f over tp)."""
        hidden = ("act_exp_batch", "act_experts", None, "act_mlp")
        per_expert = lambda b: b[None, :, None, :]  # noqa: E731  (e, w) -> (1, e, 1, w)
        if self.swiglu:  # one einsum on the fused weight (its slices would be what the backward keeps)
            gu = jnp.einsum("becd,edgf->becgf", xe, self.w_gate_up[...])
            gate, up = constrain(gu[:, :, :, 0], hidden), constrain(gu[:, :, :, 1], hidden)
        else:
            gate, up = None, constrain(jnp.einsum("becd,edf->becf", xe, self.w_up[...]), hidden)
        hdn = _hidden(self.swiglu, gate, up, self.b_gate, self.b_up, per_expert)
        ye = jnp.einsum("becf,efd->becd", hdn, self.w_down[...])
        if self.b_down is not None:
            ye = ye + per_expert(self.b_down[...])
        return constrain(ye, ("act_exp_batch", "act_experts", None, "act_embed"))

    def _capacity_call(self, x: jax.Array, capacity_factor: float) -> jax.Array:
        """GShard dispatch (:func:`capacity_dispatch`): tokens stay sharded over the batch axes
        (``ep`` included); the (b, e, C, d) buffers are resharded from the batch to the expert axis
        (the AllToAll over ep of the dispatch) and back (the combine's)."""
        top, idx = self._route(x)
        cap = expert_capacity(capacity_factor, x.shape[1], self.top_k, self.n_experts)
        dispatch, combine = capacity_dispatch(idx, top, self.n_experts, cap)
        xe = jnp.einsum("bsd,bsec->becd", x, dispatch.astype(x.dtype))
        xe = constrain(xe, ("act_exp_batch", "act_experts", None, "act_embed"))  # AllToAll: batch -> experts
        ye = self._buffer_experts(xe)
        ye = constrain(ye, ("act_batch", None, None, "act_embed"))  # AllToAll: experts -> batch
        return jnp.einsum("becd,bsec->bsd", ye, combine.astype(x.dtype))

    def __call__(self, x: jax.Array) -> jax.Array:
        """x: (b, s, d) -> (b, s, d)."""
        capacity_factor = _CAPACITY.get()
        if capacity_factor is not None:
            y = self._capacity_call(x, capacity_factor)
            return y + self.shared(x) if self.shared is not None else y
        # gather the tokens over ep (ep shards the experts here, not the batch)
        x = constrain(x, ("act_exp_batch", "act_seq", "act_embed"))
        top, idx = self._route(x)
        gates = jnp.sum(jax.nn.one_hot(idx, self.n_experts, dtype=jnp.float32) * top[..., None], -2)
        gates = gates.astype(x.dtype)  # (b, s, e), zero outside the top-k
        hdn = constrain(self.expert_hidden(x), ("act_exp_batch", "act_seq", "act_experts", "act_mlp"))
        ye = jnp.einsum("bsef,efd->bsed", hdn, self.w_down[...])
        if self.b_down is not None:
            ye = ye + self.b_down[...]
        ye = constrain(ye, ("act_exp_batch", "act_seq", "act_experts", None))
        y = jnp.einsum("bsed,bse->bsd", ye, gates)
        if self.shared is not None:
            y = y + self.shared(x)
        return y

    def expert_hidden(self, x: jax.Array) -> jax.Array:
        """Every expert's hidden activations (dense dispatch): x (b, s, d) -> (b, s, e, f), SwiGLU
        ``silu(gate) * up`` or GeLU ``gelu(up)``, with the expert biases when present."""
        if self.swiglu:
            gu = jnp.einsum("bsd,edcf->bsecf", x, self.w_gate_up[...])
            gate, up = gu[:, :, :, 0], gu[:, :, :, 1]
        else:
            gate, up = None, jnp.einsum("bsd,edf->bsef", x, self.w_up[...])
        return _hidden(self.swiglu, gate, up, self.b_gate, self.b_up)


class Block(nnx.Module):
    """Pre-norm transformer block: ``x + attn(norm(x))`` then ``+ mlp(norm(.))`` (MLP or MoE).

    With ``norms_per_layer=1`` it is the parallel block of GPT-J / Falcon-7B (HF ``FalconDecoderLayer``
    with ``parallel_attn``): ``x + attn(norm(x)) + mlp(norm(x))``, one ``attn_norm`` and no ``mlp_norm``.
    With ``norms_per_layer=4`` (sandwich norms, Gemma 2 Team 2024 Sec. 2; HF ``Gemma2DecoderLayer``)
    the sub-layer outputs are normalised too: ``x + post_attn_norm(attn(attn_norm(x)))`` then
    ``+ post_mlp_norm(mlp(mlp_norm(.)))``; params ``attn_norm``, ``mlp_norm`` (+ ``post_attn_norm``,
    ``post_mlp_norm``), each (d,) ``("norm",)``.

    Args:
        m: the shapes (``norms_per_layer`` 1, 2 or 4; 3 is refused by :func:`check_runtime_support`).
        moe: this block's MLP is a mixture of experts.
        rngs: parameter RNG stream.
        fused_qkv: as :class:`Attention`'s ``fused``.
        layer: 0-based layer index; picks the attention window (:meth:`ModelSpec.is_sliding_layer`).
    """

    def __init__(self, m: ModelSpec, moe: bool, rngs: nnx.Rngs, fused_qkv: bool = True, layer: int = 0):
        self.attn_norm = Norm(m.d_model, m.norm, rngs)
        window = m.sliding_window if m.is_sliding_layer(layer) else None
        self.attn = LatentAttention(m, rngs) if m.is_mla else Attention(m, rngs, fused_qkv, window)
        # one norm: Falcon-7B's parallel block (attention and MLP read the same normalised input)
        self.mlp_norm = Norm(m.d_model, m.norm, rngs) if m.norms_per_layer != 1 else None
        self.mlp = MoE(m, rngs) if moe else MLP(m, m.ffn_dim, rngs)
        sandwich = m.norms_per_layer == 4
        self.post_attn_norm = Norm(m.d_model, m.norm, rngs) if sandwich else None
        self.post_mlp_norm = Norm(m.d_model, m.norm, rngs) if sandwich else None

    def __call__(self, x: jax.Array, positions: jax.Array, window: Any = None) -> jax.Array:
        """x: (b, s, d) -> (b, s, d); the residual stream is constrained to ``act_seq_norm``.
        ``window``: overrides the attention window (see :meth:`Attention.__call__`)."""
        res = ("act_batch", "act_seq_norm", "act_embed")
        h = self.attn_norm(x)
        y = self.attn(h, positions) if window is None else self.attn(h, positions, window)
        if self.mlp_norm is None:  # parallel block: x + attn(norm(x)) + mlp(norm(x))
            return constrain(x + y + self.mlp(h), res)
        if self.post_attn_norm is not None:
            y = self.post_attn_norm(y)
        x = constrain(x + y, res)
        y = self.mlp(self.mlp_norm(x))
        if self.post_mlp_norm is not None:
            y = self.post_mlp_norm(y)
        return constrain(x + y, res)


def unsupported_features(model: ModelSpec) -> list[str]:
    """Architecture features the planner costs but this reference model does not implement (the
    runtime refuses them rather than train a different network than the plan describes): three
    norms per block, DeepSeek-V3's multi-token prediction, ``moe_layer_step`` != 1, Qwen2-MoE's
    shared-expert gate, Llama 4's chunked local attention, an LM-head bias (``lm_head_bias``: GPT-J,
    Phi-2, Phi-3.5-MoE), and the attention variants of :class:`Attention` combined with multi-head
    latent attention (:class:`LatentAttention` has none of them).

    Returns:
        One phrase per unsupported feature (empty when the runtime trains the model as specified).
    """
    attn_extras = (("qk_norm", model.qk_norm != "none"), ("attention_sinks", model.attention_sinks),
                   ("attention_softcap", model.attention_softcap is not None),
                   ("sliding_window", model.sliding_window is not None),
                   ("qkv_bias", model.qkv_bias or model.linear_bias), ("attn_out_bias", model.attn_out_bias),
                   ("clip_qkv", model.clip_qkv is not None))
    mla_extras = [name for name, on in attn_extras if on]
    checks = [(model.norms_per_layer == 3, "norms_per_layer=3 (legal: 1 parallel block, 2 pre-norms, "
               "4 sandwich norms)"),
              (model.mtp_modules > 0, "multi-token prediction modules"),
              (model.moe_layer_step != 1, f"moe_layer_step={model.moe_layer_step}"),
              (model.shared_expert_gate, "shared_expert_gate (Qwen2-MoE's sigmoid gate on the shared experts)"),
              (model.lm_head_bias, "lm_head_bias (a bias on the LM head: GPT-J, Phi-2, Phi-3.5-MoE)"),
              (model.local_attention == "chunked", "chunked local attention (Llama 4 attention_chunk_size; the "
               "reference model's local layers slide)"),
              (model.is_mla and bool(mla_extras), f"{', '.join(mla_extras)} with multi-head latent attention")]
    return [what for bad, what in checks if bad]


def check_runtime_support(model: ModelSpec, expert_tp: int, tp: int) -> None:
    """Refuse a model or layout the JAX runtime would silently train differently.

    Raises:
        ConfigError: naming the unsupported features (the planner still estimates them).
    """
    bad = unsupported_features(model)
    if expert_tp != tp:
        bad.append(f"etp={expert_tp} different from tp={tp} (expert tensor parallelism)")
    if bad:
        raise ConfigError(f"the JAX runtime does not implement {'; '.join(bad)} for model {model.name!r}; "
                          "`shardplan estimate` / `plan` cost it, `train` / `validate` cannot run it yet",
                          field="model", value=model.name)


class Transformer(nnx.Module):
    """Decoder-only language model built from a :class:`ModelSpec`.

    Params: ``embed`` (v, d) ``("vocab","embed")``; ``pos_embed`` (max_pos, d) for learned
    positions; ``embed_norm`` (d,) with ``embedding_norm`` (BLOOM); ``layers/<i>/...``; ``final_norm``;
    ``lm_head`` (d, v) ``("embed","vocab")`` when untied.

    Args:
        model: the shapes.
        rngs: parameter RNG stream.
        remat: 'none', 'selective' (save matmul outputs without batch dims, i.e. the projections,
            recompute the attention core) or 'full' (save only block inputs).
        fused_qkv: hold each attention's Q/K/V projection fused (``wqkv``); False for KV-head
            replication (:func:`fuses_qkv`; see :class:`Attention`). The values are the same.

    Raises:
        ConfigError: position='alibi' (not implemented) or an unknown remat policy.
    """

    def __init__(self, model: ModelSpec, rngs: nnx.Rngs, remat: str = "none", fused_qkv: bool = True):
        if model.position == "alibi":
            raise ConfigError(f"position='alibi' ({model.name}) is not implemented in the JAX reference model; "
                              f"legal: rope, learned", field="position", value="alibi", legal=["rope", "learned"])
        if remat not in REMAT_POLICIES:
            raise ConfigError(f"recompute={remat!r} is unknown; legal: {', '.join(REMAT_POLICIES)}",
                              field="recompute", value=remat, legal=REMAT_POLICIES)
        self.remat = remat
        self.tied, self.final_softcap = model.tied_embeddings, model.final_logit_softcap
        d, v = model.d_model, model.vocab_size
        self.embed = _param(rngs, _normal(0.02), (v, d), ("vocab", "embed"))
        self.pos_embed = (_param(rngs, _normal(0.02), (model.max_position_embeddings, d), ("position", "embed"))
                          if model.position == "learned" else None)
        self.layers = nnx.List([Block(model, model.is_moe and i >= model.n_dense_layers, rngs, fused_qkv, i)
                                for i in range(model.n_layers)])
        self.embed_norm = Norm(d, model.norm, rngs) if model.embedding_norm else None
        self.final_norm = Norm(d, model.norm, rngs)
        self.lm_head = None if self.tied else _param(rngs, _fan_in(0, 1), (d, v), ("embed", "vocab"))

    def __call__(self, tokens: jax.Array, positions: jax.Array | None = None) -> jax.Array:
        """tokens: (b, s) int32 -> logits (b, s, v) in the parameters' dtype.

        ``positions`` (s,): the token position at each sequence index (default ``0 .. s-1``); a
        permuted sequence (ring attention's zig-zag layout, :func:`shardplan.jax.ring.sequence_order`)
        passes its positions, and the logits come in the same order.
        """
        if positions is None:
            positions = jnp.arange(tokens.shape[1], dtype=jnp.int32)
        x = self.embed_tokens(tokens, positions)
        for layer in self.layers:
            if self.remat == "none":
                x = layer(x, positions)
            else:
                x = nnx.remat(lambda blk, y, pos: blk(y, pos), policy=remat_policy(self.remat))(layer, x, positions)
        return self.head(x)

    def embed_tokens(self, tokens: jax.Array, positions: jax.Array | None = None) -> jax.Array:
        """tokens: (b, s) int32 -> residual stream (b, s, d) (token [+ learned position] embedding
        [-> embedding norm, BLOOM's ``word_embeddings_layernorm``]); ``positions`` (s,) as in
        :meth:`__call__` (default ``0 .. s-1``)."""
        s = tokens.shape[1]
        x = embedding_lookup(self.embed[...], tokens)
        if self.pos_embed is not None:
            pos = self.pos_embed[...][:s] if positions is None else jnp.take(self.pos_embed[...], positions, axis=0)
            x = x + pos[None]
        if self.embed_norm is not None:
            x = self.embed_norm(x)
        return constrain(x, ("act_batch", "act_seq_norm", "act_embed"))

    def head(self, x: jax.Array) -> jax.Array:
        """Final norm and LM head: (b, s, d) -> logits (b, s, v) in the parameters' dtype."""
        x = self.final_norm(x)
        if self.tied:
            logits = jnp.einsum("bsd,vd->bsv", x, self.embed[...])
        else:
            logits = jnp.einsum("bsd,dv->bsv", x, self.lm_head[...])
        if self.final_softcap is not None:  # Gemma 2: c tanh(logits / c) (Gemma2ForCausalLM final_logit_softcapping)
            logits = self.final_softcap * jnp.tanh(logits / self.final_softcap)
        return constrain(logits, ("act_batch", "act_seq", "act_vocab"))


def token_nll(logits: jax.Array, targets: jax.Array, real_vocab: int | None = None, gather: bool = True
              ) -> jax.Array:
    """Next-token cross-entropy per token (nats): ``logsumexp(logits) - logits[target]``.

    Args:
        logits: (b, s, v) fp32.
        targets: (b, s) int32 token ids < ``real_vocab``.
        real_vocab: the model's own vocabulary when the network's ``v`` is padded (the padded
            logits are masked to -1e30, so they never win the softmax); None: no padding.
        gather: pick the target logit with ``take_along_axis`` (True) or as the sum of the logits
            where the vocabulary index equals the target (False; the same value, and what the
            pipeline's loss on the last stage uses: XLA's SPMD partitioner aborts on the gather of a
            tp-sharded vocabulary inside the pp-manual ``shard_map`` when dp > 1, jax 0.10.2,
            "Check failed: partition_group_list.num_replica_groups() ...").

    Returns:
        (b, s) fp32.
    """
    ids = jax.lax.broadcasted_iota(jnp.int32, logits.shape, logits.ndim - 1)
    if real_vocab is not None and real_vocab != logits.shape[-1]:
        logits = jnp.where(ids < real_vocab, logits, -1e30)
    logz = jax.nn.logsumexp(logits, -1)
    if gather:
        gold = jnp.take_along_axis(logits, targets[..., None], -1)[..., 0]
    else:
        gold = jnp.sum(jnp.where(ids == targets[..., None], logits, 0.0), -1)
    return logz - gold


def remat_policy(remat: str) -> Any:
    """The ``jax.checkpoint`` policy of a recompute setting ('selective' saves the projections,
    'full' saves nothing inside a block; 'none' is not rematerialised and returns None too)."""
    return jax.checkpoint_policies.dots_with_no_batch_dims_saveable if remat == "selective" else None


def abstract_model(model: ModelSpec, remat: str = "none", fused_qkv: bool = True) -> Transformer:
    """The model with ``ShapeDtypeStruct`` parameters (no memory allocated); arguments as
    :class:`Transformer`."""
    return nnx.eval_shape(lambda: Transformer(model, nnx.Rngs(0), remat, fused_qkv))


def fuses_qkv(model: ModelSpec, tp: int) -> bool:
    """Whether the runtime holds the Q/K/V projections fused for this tp: always, except with
    KV-head replication (tp > 1 not dividing ``n_kv_heads``), where a tp shard of the query heads
    is not a shard of the fused (d, g, r + 2, k) tensor (Megatron-LM requires tp | n_query_groups
    for the same reason). MLA has no Q/K/V projection to fuse (True, unused)."""
    return not kv_replicated(model, tp)


def param_dict(module: nnx.Module) -> dict:
    """The parameters as a nested dict of arrays (or ShapeDtypeStructs), keyed by attribute name /
    layer index, e.g. ``d["layers"][0]["attn"]["wqkv"]``."""
    return nnx.to_pure_dict(nnx.state(module, nnx.Param))


def logical_axes(module: nnx.Module) -> dict:
    """Nested dict (same structure as :func:`param_dict`) whose leaves are the parameters'
    logical-axis tuples."""
    out: dict = {}
    for path, var in nnx.to_flat_state(nnx.state(module, nnx.Param)):
        node = out
        for k in path[:-1]:
            node = node.setdefault(k, {})
        node[path[-1]] = tuple(var.get_metadata()["out_sharding"])
    return out


def _round_to(x: float, m: int) -> int:
    return max(m, int(round(x / m)) * m)


def _scaled_top_k(model: ModelSpec, e: int) -> int:
    """Top-k of a scaled-down MoE with ``e`` experts: the routed share k / E kept (Qwen3-30B-A3B's top 8 of 128 became
    top 4 of 4, every expert on every token: new-user pass 57b), at least 1 and fewer than ``e`` where the model routes
    (k < E); k itself where every expert already runs."""
    if model.top_k >= model.n_experts or e <= 1:
        return min(model.top_k, e)
    return min(e - 1, max(1, round(e * model.top_k / model.n_experts)))


def scale_down(model: ModelSpec, d_model: int = 64, n_layers: int = 2, max_heads: int = 8,
               min_kv_heads: int = 1, vocab_size: int = 256, max_experts: int = 4,
               width_multiple: int = 16) -> ModelSpec:
    """A CPU-sized copy of a model with the same architecture and head ratio.

    Keeps: n_heads / n_kv_heads, the MLP kind, norm, biases, tying, positions, ffn_dim / d_model (rounded to
    ``width_multiple``), MoE routed share (:func:`_scaled_top_k`) and the dense/MoE layer mix, QK-norm, sinks, the
    Q/K/V clamp, softcaps, the sliding window (in tokens) and its full-attention interval, the norm count and the
    embedding norm. Shrinks: layers, d_model, heads (to at most ``max_heads`` unless the ratio alone is larger),
    vocabulary (byte-level data needs >= 256), experts.

    Args:
        model: the full-size spec.
        d_model: target hidden size (head_dim = d_model / n_heads, at least 8).
        n_layers: target layers (at most the original count).
        max_heads: cap on query heads.
        min_kv_heads: at least this many KV heads when the original has that many (pass tp so that
            tp still divides the KV heads).
        vocab_size: target vocabulary (256 for the byte tokenizer).
        max_experts: cap on routed experts.
        width_multiple: MLP widths are rounded to a multiple of this.

    Returns:
        A new :class:`ModelSpec` named ``"<name>-scaled"``.

    Raises:
        ConfigError: a model with features the runtime does not implement (:func:`unsupported_features`).
    """
    bad = unsupported_features(model)
    if bad:  # a scaled copy without them would train another architecture than the plan's
        raise ConfigError(f"--scale-down: the JAX runtime does not implement {'; '.join(bad)} of "
                          f"{model.name!r}, so no scaled-down copy of it can be trained yet", field="model",
                          value=model.name)
    ratio = model.n_heads // model.kv_heads
    kv = max(1, min(model.kv_heads, max(max_heads // ratio, 1)))
    kv = max(kv, min_kv_heads) if model.kv_heads >= min_kv_heads else kv
    heads = ratio * kv
    head_dim = max(8, d_model // heads)
    layers = min(model.n_layers, n_layers)
    kw: dict[str, Any] = dict(
        name=f"{model.name}-scaled", n_layers=layers, d_model=d_model, n_heads=heads, n_kv_heads=kv,
        head_dim=head_dim, ffn_dim=_round_to(model.ffn_dim / model.d_model * d_model, width_multiple),
        vocab_size=max(vocab_size, 256), mlp=model.mlp, norm=model.norm, qkv_bias=model.qkv_bias,
        linear_bias=model.linear_bias, tied_embeddings=model.tied_embeddings, position=model.position,
        max_position_embeddings=min(model.max_position_embeddings, 4096) if model.position == "learned" else 0,
        qk_norm=model.qk_norm, attention_sinks=model.attention_sinks, clip_qkv=model.clip_qkv,
        sliding_window=model.sliding_window, full_attention_interval=model.full_attention_interval,
        norms_per_layer=model.norms_per_layer, embedding_norm=model.embedding_norm, attn_out_bias=model.attn_out_bias,
        attention_softcap=model.attention_softcap, final_logit_softcap=model.final_logit_softcap, mlp_bias=model.mlp_bias,
        lm_head_bias=model.lm_head_bias, source=f"scale_down({model.name})")
    if model.is_mla:  # latents half the width, per-head widths as the scaled head_dim (rope half, even)
        kw.update(head_dim=None, kv_lora_rank=d_model // 2, q_lora_rank=d_model // 2 if model.q_lora_rank else None,
                  qk_nope_head_dim=head_dim, qk_rope_head_dim=max(2, head_dim // 4 * 2), v_head_dim=head_dim)
    if model.is_moe:
        e = min(model.n_experts, max_experts)
        kw.update(n_experts=e, top_k=_scaled_top_k(model, e), router_bias=model.router_bias,
                  expert_ffn_dim=_round_to(model.expert_ffn / model.d_model * d_model, width_multiple),
                  n_shared_experts=min(model.n_shared_experts, 1),
                  n_dense_layers=min(model.n_dense_layers, layers - 1))
    return ModelSpec(**kw)
