"""Pipeline parallelism (``pp > 1``): stacked stage parameters; executed 1F1B, interleaved 1F1B and GPipe.

Parameter layout
    With ``pp > 1`` the transformer blocks' parameters are stacked into one pytree under the key
    ``"stages"``: every leaf of a block of shape ``S`` becomes ``(pp, L_max, *S)``, where
    ``L_max = max(layout.stage_layers)``; stage ``k`` holds its ``stage_layers[k]`` consecutive
    layers in slots ``0 .. stage_layers[k]-1``. With the executed interleaved schedule the layers
    are placed as Megatron does (:func:`interleaved_placement`): rank ``k``'s ``v`` chunks are
    virtual stages ``k, pp + k, ...``, each chunk padded to the largest (``L_max = v Lc``); e.g. 4
    layers, pp=2, v=2: rank 0 holds layers 0 and 2. :func:`layout_placement` gives the slot table
    (:func:`slot_layers`), checkpoints record it. The leading dimension has the logical name
    ``"layers"`` (rule ``layers -> pp``), the slot dimension is replicated, and the remaining
    dimensions keep the block's own logical axes (so ZeRO/FSDP and TP shard them as for ``pp = 1``),
    e.g. ``stages/attn/wqkv`` of tiny-llama with pp=2, fsdp=2, tp=2 is ``(2, 2, 64, 2, 4, 16)`` with spec
    ``P('pp', None, 'fsdp', 'tp', None, None)``. Paths are ``stages/attn/wqkv`` instead of
    ``layers/<i>/attn/wqkv``.

    Uneven splits (``pp_layers``, e.g. ``(3, 1)``) are padded: a stage with fewer than ``L_max``
    layers gets zero-filled slots that are skipped by a mask (``where(valid, block(x), x)``), so
    their gradients and AdamW updates are exactly zero and the model is unchanged. Cost: the
    padded slots take parameter + optimizer memory (``(pp * L_max - n_layers)`` blocks spread over
    the stages) and the masked blocks are still computed (every stage runs ``L_max`` blocks per
    tick, so an uneven split is as slow as ``pp * L_max`` layers evenly split).

    Executed 1F1B and interleaved 1F1B (:func:`boundary_tables`): the embedding and the LM head
    live where Megatron-LM puts them (Narayanan et al. 2021 Sec. 2.2), the embedding on the first
    stage and the (untied) head + final norm on the last. An SPMD program runs the same code on
    every rank, so they are one stacked *boundary table* sharded over pp (:data:`BOUNDARY`,
    :func:`stack_boundary`): ``boundary/table`` (pp, V, d) with logical axes
    ``("layers", "vocab", "embed")`` -- rank 0's slice is the embedding, rank pp-1's the LM head
    (stored transposed, (V, d)) -- and ``boundary/final_norm`` (pp, d), rank pp-1's slice the
    final norm. Each rank therefore holds and dp-reduces exactly one V x d table (the planner's
    stage: its layers + one table). The middle ranks of pp > 2 hold an unused zero slice: memory
    cost per middle rank ``(V d / t + d) * 4 bytes * 3`` (parameter + two Adam moments, divided by
    ZeRO/TP as usual), and its zero gradient is reduced over dp with the others. Tied embeddings
    keep a copy on the first and the last stage (both slices hold the table) and, as Megatron-LM's
    ``_allreduce_word_embedding_grads``, all-reduce the two copies' gradients over the embedding
    group (first + last stage) once per step after the dp reduction (:func:`_embedding_group_sum`:
    a psum over pp for pp = 2, a swap of the two for pp > 2), so both take the same update. Learned
    positions and BLOOM's embedding norm stay replicated over pp (their stage-0 gradients are
    psum-med over pp, with the loss). Checkpoints store the stacked layout and convert it to and
    from the replicated one (:mod:`shardplan.jax.checkpoint`).

    GPipe (and the trainer's :meth:`Pipeline.logits` forward for the 1F1B layouts, which reads the
    two slices by GSPMD): the embedding, learned positions, final norm and LM head are *replicated
    over pp* (and laid out by the other rules as for ``pp = 1``): every pipeline rank holds them and
    computes the embedding and the LM head / loss of the whole batch redundantly. Memory cost per
    device: ``(vocab * d [* 2 if untied] + d) * 4 bytes * 3`` instead of only on the first / last
    stage.

Schedules (:class:`Pipeline`; ``Pipeline.executed`` names the one that runs)
    '1f1b' -- executed 1F1B (PipeDream-Flush; Narayanan et al. 2021, "Efficient Large-Scale
    Language Model Training on GPU Clusters Using Megatron-LM", Sec. 2.2.1), in
    :meth:`Pipeline.value_and_grad`: the backward is done by explicit per-stage ``jax.vjp`` calls
    inside the schedule, not by ``jax.grad`` of the pipeline. A ``lax.scan`` over ``m + pp - 1``
    ticks of two *slots* each (``2 (m + pp - 1)`` slots, :func:`one_f_one_b_work`) runs inside
    ``jax.shard_map`` manual over ``pp``; in slot ``t`` stage ``k`` runs the forward of microbatch
    ``(t - k) / 2`` or the backward of microbatch ``(t - 2 pp + 1 + k) / 2`` (whichever is an
    integer in ``0 .. m-1``), which is Megatron's per-rank order: ``pp - k - 1`` warm-up forwards,
    one forward / one backward, cool-down backwards (the planner's
    :func:`shardplan.cost.pipeline_schedule.rank_orders`; a lock-step with t_b = t_f, so the bubble is
    the same ``(pp - 1)`` slots of forward and of backward as GPipe's). After each slot one
    ``ppermute`` sends the stages' outputs: a forward's activations to ``k + 1``, a backward's
    input cotangent to ``k - 1`` (stages of one parity do forwards, the others backwards, so one
    permutation per slot covers both directions). Only real work is sent, as Megatron does: the
    ticks are scanned in runs with the same senders
    (:func:`shardplan.pipeline_program.one_f_one_b_runs`), so a warm-up or cool-down slot's
    permutation holds only the stages that produced something; per step a stage sends ``m``
    activations (``k < pp - 1``) and ``m`` cotangents (``k > 0``), e.g. pp = 2, m = 4: 4 per device
    in 5 collective-permutes.

    * No computation in bubble slots: each slot's work is a ``lax.switch`` whose index is computed
      per device (idle / forward / backward / last-stage backward). The branches hold GSPMD
      collectives of the automatic axes (tp all-reduces, fsdp gathers and reduce-scatters; the dp
      gradient reduction when it cannot be taken out, see below): all devices of one pipeline
      stage take the same branch, so these collectives have all their participants -- this
      compiles and runs on XLA:CPU (jax 0.10.2; tested with dp, tp, fsdp, HSDP, ep, cp, sp). Outside
      the branches run the ``ppermute`` and, after the schedule, the gradient ``psum``-s.
    * Stage-granular recomputation: a stage keeps the *inputs* ``(b, s, d)`` of its in-flight
      microbatches in a ring buffer of ``min(m, pp)`` rows (at most ``min(m, pp - k)`` are live on
      stage ``k``), and a backward re-runs the stage's forward under ``jax.vjp`` from the stored
      input. Activation memory: ``min(m, pp)`` stage inputs + one stage's residuals (only while a
      backward runs), against GPipe's residuals of all ``m + pp - 1`` ticks; the price is one extra
      forward of every stage (as ``recompute='full'`` at stage granularity; the plan's
      ``recompute`` still applies to the blocks inside).
    * The loss runs inside the pipeline: the last stage's backward branch is ``jax.vjp`` of its
      blocks + final norm + LM head + cross-entropy of one microbatch (its forward slot only stores
      the input), so the backward starts right after the forward. The target logit is picked by a
      vocabulary-index select (``token_nll(gather=False)``): the ``take_along_axis`` gather of a
      tp-sharded vocabulary makes XLA's SPMD partitioner abort inside the pp-manual region when
      dp > 1 (jax 0.10.2, "Check failed: partition_group_list.num_replica_groups() ...").
    * Gradients accumulate in fp32 in the scan carry. The embedding runs inside the map, before
      the schedule, under ``jax.vjp`` by each rank's own table slice (only stage 0's output is
      read; the others' lookups are discarded); after the schedule that vjp turns the input
      cotangents (written by stage 0, zero elsewhere) into the table gradient, added to the head's
      (last stage). Nothing of the boundary crosses pp: the table and norm gradients leave the map
      stacked (``P("pp")``); only the loss (and the replicated positions' gradients) is
      ``psum``-med over pp (a scalar for a RoPE model; the optimizer's global gradient norm adds
      one scalar all-reduce over pp per pp-sharded leaf, 68 bytes for tiny-llama).
    * Data-parallel gradient reduction once per step: the ``shard_map`` is also manual over the
      data axes along which every parameter is replicated (``Trainer.local_axes``: dp for ZeRO-0/1/2,
      the HSDP replica axis), each device differentiates per-device copies of the parameters
      (``pcast`` to varying), and the fp32 gradients are ``psum``-med over those axes once, after the
      schedule (one all-reduce of the stage gradients, the rank's table and norm slices and the loss).
      Axes that shard parameters (fsdp) stay automatic: ZeRO-3's gathers and reduce-scatters run
      inside the branches, per microbatch, as FSDP does (the table is gathered over fsdp once,
      before the embedding lookup).

    'interleaved' -- executed interleaved 1F1B (Narayanan et al. 2021 Sec. 2.2.2; Megatron-LM's
    ``forward_backward_pipelining_with_interleaving``), :meth:`Pipeline._interleaved_program`: each
    rank holds ``v = virtual_stages`` model chunks; a static lock-step table
    (:func:`shardplan.pipeline_program.interleaved_table`) gives every rank Megatron's interleaved
    order (the planner's ``rank_orders``), one chunk pass per slot, a pass starting once its input
    was produced in an earlier slot: ``2 (m v + pp - 1)`` chunk slots, the interleaved bubble
    ``(pp - 1) / v`` of a stage's forward + backward. Per slot one ``lax.switch`` (idle / chunk
    forward / chunk backward under ``jax.vjp`` / last chunk's backward with the loss) and two
    cyclic ``ppermute``-s (forward ``k -> k + 1``, backward ``k -> k - 1``: the last rank's chunk
    ``c`` feeds rank 0's chunk ``c + 1``) holding only the ranks that produced a chunk output /
    cotangent in the slot (:func:`shardplan.pipeline_program.interleaved_runs`: one ``lax.scan``
    per run of slots with the same senders; the lock-step is irregular, so most runs are one slot
    and the program is nearly unrolled, e.g. 17 runs of 18 slots for pp = 2, m = 4, v = 2: compile
    time grows with ``m v``); the embedding and head are the stacked boundary table as for 1F1B;
    received chunk inputs and output cotangents wait in
    buffers whose rows the table assigns (interval colouring), at most ``pp v + pp - 1`` chunk
    inputs on rank 0 (Megatron's ``pp (1 + (pp - 1) / (pp v))`` stages' worth). Requires
    ``m % pp == 0`` (as Megatron; checked by :func:`shardplan.parallel.validate`).

    'zero-bubble' (ZB-H1) is executed as 1F1B (same gradients; 1F1B's order and peak memory, which
    ZB-H1 keeps): zero-bubble is planner-only -- the runtime does not split the backward into
    input-gradient (B) and weight-gradient (W) passes, so its smaller bubble is a planner figure
    only. :attr:`Pipeline.note` says so and the trainer logs it.

    'gpipe' -- GPipe (Huang et al. 2019): the ``m`` microbatches flow through the stages in a
    ``lax.scan`` over ``m + pp - 1`` ticks inside the same pp-manual ``shard_map``
    (:meth:`Pipeline.logits`). At tick ``t`` stage 0 reads microbatch ``t``, every stage applies
    its blocks, the last stage stores microbatch ``t - pp + 1``, and ``jax.lax.ppermute`` shifts
    the activations ``(b, s, d)`` from stage ``k`` to ``k + 1``. ``jax.grad`` of the scan is the
    all-forward-then-all-backward GPipe backward (the transposed ppermute sends cotangents from
    ``k + 1`` to ``k``). Bubble ticks compute on zeros/stale data whose results are discarded.
    Activation memory: the scan keeps the residuals of all ``m + pp - 1`` ticks, modulo
    ``recompute``. The stage gradients are reduced over the data axes on every tick (GSPMD).
    :meth:`Pipeline.logits` (the trainer's ``loss``) is this forward for every schedule; with the
    interleaved placement it runs the ``v`` chunks' pipelines one after the other.

    Mixed precision: the stages compute in the compute dtype, but every all-reduce over ``pp`` (the
    output ``psum`` and the transpose of making the pp-invariant input varying) runs in fp32. Both
    only add zeros, so this is exact -- and XLA:CPU (jax 0.10.2) aborts on a bf16 all-reduce inside
    the partially manual region ("Invalid binary instruction opcode copy").

    Gradient accumulation is the pipeline itself: the ``m`` microbatches of a step are summed by
    the schedule, so there is no separate accumulation loop (for ZeRO-2 the gradient is
    reduce-scattered once per step instead of once per microbatch; the result is the same).

Interleaved sliding / full attention layers (Gemma 2/3, GPT-OSS: ``full_attention_interval > 0``)
have the same parameters in every block but a different mask: the one block definition the stages
scan gets each layer's window as data, a ``(pp, L_max)`` int32 array scanned with the layers
(:func:`layer_windows`; a full-attention layer's window is longer than any sequence).

Not supported with ``pp > 1`` (ConfigError): models whose blocks differ in structure (MoE models
with leading dense layers, ``n_dense_layers > 0``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.model import (Transformer, abstract_model, fuses_qkv, logical_axes, param_dict, remat_policy,
                                 token_nll)
from shardplan.jax.rules import constrain
from shardplan.parallel import RUNTIME_SCHEDULE, Layout, chunk_layers
from shardplan.pipeline_program import (InterleavedTable, Pairs, interleaved_runs, interleaved_table,
                                        one_f_one_b_permutation, one_f_one_b_runs, one_f_one_b_slots,
                                        one_f_one_b_work)
from shardplan.specs.model import ModelSpec

#: Key of the stacked block parameters in the parameter dict when ``pp > 1``.
STAGES = "stages"
#: Key of the stacked boundary parameters (executed 1F1B / interleaved, :func:`boundary_tables`):
#: ``table`` (pp, V, d), rank 0's slice the embedding, rank pp - 1's the LM head (transposed; with
#: tied embeddings a copy of the embedding), and ``final_norm`` (pp, ...), rank pp - 1's slice the
#: final norm; the other slices are zero and unused.
BOUNDARY = "boundary"
#: The parameter-dict entries that :data:`BOUNDARY` replaces.
BOUNDARY_KEYS = ("embed", "lm_head", "final_norm")
#: Logical names of the two leading dimensions of a stacked leaf: (stage -> pp, slot in the stage).
STACK_LOGICAL: tuple[str | None, ...] = ("layers", None)
#: ``block(layer_params, h) -> h``: one transformer block on a (b, s, d) residual stream.
BlockFn = Callable[[Any, jax.Array], jax.Array]


def check_pipeline(model: ModelSpec, layout: Layout) -> None:
    """Refuse pipeline layouts the runtime cannot execute.

    Raises:
        ConfigError: ``pp > 1`` with blocks of different structure (an MoE model with
            ``n_dense_layers > 0``: dense and MoE blocks cannot be stacked), naming the legal pp.
    """
    p = layout.parallel
    if p.pp > 1 and model.is_moe and 0 < model.n_dense_layers < model.n_layers:
        raise ConfigError(
            f"pp={p.pp}: the JAX runtime stacks identical transformer blocks over the pipeline stages, but "
            f"{model.name} mixes {model.n_dense_layers} dense and {model.n_layers - model.n_dense_layers} MoE "
            f"blocks (n_dense_layers={model.n_dense_layers}); legal pp for this model: 1",
            field="pp", value=p.pp, legal=[1])


#: Where the model's layers sit: per pipeline rank, the model layer index held in each block slot
#: (-1: a padding slot); or, for the contiguous split, just the layers per rank (``stage_layers``).
Placement = tuple[tuple[int, ...], ...] | tuple[int, ...]


def slot_layers(placement: Placement) -> np.ndarray:
    """``(pp, S)`` int: the model layer in slot ``j`` of rank ``k`` (-1 for padding). A tuple of ints
    (``stage_layers``) is the contiguous split: rank ``k`` holds its ``stage_layers[k]`` consecutive
    layers in slots ``0 .. stage_layers[k]-1`` (``S = L_max``)."""
    if placement and isinstance(placement[0], (tuple, list, np.ndarray)):
        return np.asarray(placement, dtype=np.int64)
    out = np.full((len(placement), max(placement)), -1, np.int64)
    start = 0
    for k, n in enumerate(placement):
        out[k, :n] = np.arange(start, start + n)
        start += n
    return out


def interleaved_placement(stage_layers: tuple[int, ...], v: int) -> tuple[tuple[int, ...], ...]:
    """Megatron's interleaved layer placement: virtual stage ``j = c pp + k`` (chunk ``c`` of rank
    ``k``) holds the ``j``-th run of consecutive layers, of the size
    :func:`shardplan.parallel.chunk_layers` gives; rank ``k``'s chunk ``c`` fills its slots
    ``c Lc .. c Lc + size - 1`` (``Lc`` the largest chunk, the rest padding). E.g. 4 layers, pp=2,
    v=2: rank 0 holds layers (0, 2), rank 1 (1, 3) (Narayanan et al. 2021 Sec. 2.2.2)."""
    pp, chunks = len(stage_layers), chunk_layers(stage_layers, v)
    lc = max(max(c) for c in chunks)
    out = np.full((pp, v * lc), -1, np.int64)
    start = 0
    for j in range(v * pp):
        k, c = j % pp, j // pp
        n = chunks[k][c]
        out[k, c * lc:c * lc + n] = np.arange(start, start + n)
        start += n
    return tuple(tuple(int(x) for x in row) for row in out)


def layout_placement(layout: Layout) -> Placement:
    """The runtime's placement for a layout: :func:`interleaved_placement` when the interleaved
    schedule is executed (:data:`shardplan.parallel.RUNTIME_SCHEDULE`), else the contiguous
    ``stage_layers``."""
    p = layout.parallel
    if p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] == "interleaved":
        return interleaved_placement(tuple(layout.stage_layers), p.virtual_stages)
    return tuple(layout.stage_layers)


def slot_mask(placement: Placement) -> np.ndarray:
    """``(pp, S)`` bool: True where slot ``j`` of rank ``k`` holds a real layer (:func:`slot_layers`)."""
    return slot_layers(placement) >= 0


#: The window of a full-attention layer in :func:`layer_windows`: longer than any sequence.
FULL_WINDOW = np.iinfo(np.int32).max


def layer_windows(model: ModelSpec, placement: Placement) -> np.ndarray | None:
    """``(pp, S)`` int32: the attention window of the layer in slot ``j`` of rank ``k``
    (``sliding_window`` on sliding layers, :data:`FULL_WINDOW` on full-attention layers and padding
    slots), or None when every layer has the same window (the block definition's own static one).
    """
    if model.sliding_window is None or model.full_attention_interval == 0:
        return None
    slots = slot_layers(placement)
    out = np.full(slots.shape, FULL_WINDOW, np.int32)
    for (k, j), layer in np.ndenumerate(slots):
        if layer >= 0 and model.is_sliding_layer(int(layer)):
            out[k, j] = model.sliding_window
    return out


def boundary_tables(layout: Layout) -> bool:
    """Whether the runtime holds the embedding / LM head as the pp-stacked :data:`BOUNDARY` (the
    executed 1F1B and interleaved 1F1B, :data:`shardplan.parallel.RUNTIME_SCHEDULE`), not replicated
    on every pipeline rank (GPipe, ``pp = 1``)."""
    p = layout.parallel
    return p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] != "gpipe"


def stack_boundary(params: Mapping[str, Any], pp: int) -> dict[str, Any]:
    """Replace ``embed`` (V, d), ``lm_head`` (d, V; absent when tied) and ``final_norm`` by
    :data:`BOUNDARY`: ``table`` (pp, V, d) = [embed, 0, ..., 0, lm_head^T (tied: embed)] and
    ``final_norm`` (pp, ...) = [0, ..., 0, final_norm]. Megatron-LM's placement (Narayanan et al.
    2021 Sec. 2.2: the embedding on the first stage, the head on the last; tied embeddings keep a
    copy on both, ``megatron/core/models/common/language_module``'s shared embedding)."""
    head = params["lm_head"].T if "lm_head" in params else params["embed"]
    zeros = jnp.zeros_like(params["embed"])
    table = jnp.stack([params["embed"]] + [zeros] * (pp - 2) + [head])
    norm = jax.tree.map(lambda a: jnp.concatenate([jnp.zeros((pp - 1, *a.shape), a.dtype), a[None]]),
                        params["final_norm"])
    out = {k: v for k, v in params.items() if k not in BOUNDARY_KEYS}
    out[BOUNDARY] = {"table": table, "final_norm": norm}
    return out


def unstack_boundary(params: Mapping[str, Any], tied: bool) -> dict[str, Any]:
    """Inverse of :func:`stack_boundary`: ``embed`` = rank 0's table, ``lm_head`` = rank pp - 1's
    transposed (unless ``tied``), ``final_norm`` = rank pp - 1's; other entries kept."""
    b = params[BOUNDARY]
    out = {k: v for k, v in params.items() if k != BOUNDARY}
    out["embed"] = b["table"][0]
    if not tied:
        out["lm_head"] = b["table"][-1].T
    out["final_norm"] = jax.tree.map(lambda a: a[-1], b["final_norm"])
    return out


def stack_params(params: Mapping[str, Any], placement: Placement, boundary: bool = False) -> dict[str, Any]:
    """Stack ``params["layers"][i]`` (i = 0..n_layers-1) into ``params["stages"]`` of shape
    ``(pp, S, ...)`` by ``placement`` (zeros in padding slots); other entries are kept, or with
    ``boundary`` the embedding, LM head and final norm stacked by :func:`stack_boundary`.

    Args:
        params: the model's parameter dict (:func:`~shardplan.jax.model.param_dict`), arrays.
        placement: layers per stage (contiguous split, sums to n_layers) or a slot table
            (:func:`slot_layers`, e.g. :func:`interleaved_placement`).
        boundary: :func:`boundary_tables` of the layout.

    Returns:
        A new dict without ``"layers"`` and with ``"stages"`` (and :data:`BOUNDARY`).
    """
    layers = params["layers"]
    slots = slot_layers(placement)
    assert sorted(int(i) for i in slots.ravel() if i >= 0) == list(range(len(layers))), (slots, len(layers))
    zeros = jax.tree.map(jnp.zeros_like, layers[0])
    rows = [jax.tree.map(lambda *xs: jnp.stack(xs), *[layers[int(i)] if i >= 0 else zeros for i in row])
            for row in slots]
    out = {key: v for key, v in params.items() if key != "layers"}
    out[STAGES] = jax.tree.map(lambda *xs: jnp.stack(xs), *rows)
    return stack_boundary(out, len(slots)) if boundary else out


def stack_logical(logical: Mapping[str, Any], boundary: bool = False) -> dict[str, Any]:
    """Logical axes of :func:`stack_params`'s output: block leaves get ``("layers", None)``
    prepended, the :data:`BOUNDARY` leaves ``("layers",)`` (the embedding's axes for the table)."""
    tup = lambda x: isinstance(x, tuple)  # noqa: E731
    out = {k: v for k, v in logical.items() if k != "layers"}
    out[STAGES] = jax.tree.map(lambda t: STACK_LOGICAL + tuple(t), logical["layers"][0], is_leaf=tup)
    if boundary:
        out = {k: v for k, v in out.items() if k not in BOUNDARY_KEYS}
        out[BOUNDARY] = {"table": ("layers", *logical["embed"]),
                         "final_norm": jax.tree.map(lambda t: ("layers", *t), logical["final_norm"], is_leaf=tup)}
    return out


def layout_params(model: ModelSpec, layout: Layout, remat: str = "none") -> tuple[dict, dict]:
    """Abstract parameters (``ShapeDtypeStruct``) and their logical axes in the runtime's layout:
    the model's own dict for ``pp = 1``, the stacked one (:func:`stack_params`) for ``pp > 1``.

    Raises:
        ConfigError: see :func:`check_pipeline`.
    """
    abstract = abstract_model(model, remat, fuses_qkv(model, layout.parallel.tp))
    params, logical = param_dict(abstract), logical_axes(abstract)
    if layout.parallel.pp == 1:
        return params, logical
    check_pipeline(model, layout)
    bnd = boundary_tables(layout)
    return (jax.eval_shape(lambda p: stack_params(p, layout_placement(layout), bnd), params),
            stack_logical(logical, bnd))


def decay_mask(params: Mapping[str, Any]) -> Any:
    """AdamW weight-decay mask for stacked parameters: a leaf is decayed when its *per-layer* rank
    (its rank minus the 2 stacking dimensions under ``"stages"``, the 1 under :data:`BOUNDARY`) is
    >= 2, as for ``pp = 1``."""
    def leaf(path: Any, x: Any) -> bool:
        key = getattr(path[0], "key", None) if path else None
        return x.ndim - {STAGES: 2, BOUNDARY: 1}.get(key, 0) >= 2
    return jax.tree_util.tree_map_with_path(leaf, params)


class Pipeline:
    """The stacked model over the mesh's ``pp`` axis: the executed 1F1B schedule
    (:meth:`value_and_grad`) and the GPipe forward (:meth:`logits`, differentiated by ``jax.grad``
    for ``schedule='gpipe'``); see the module docstring.

    Args:
        model: model shapes.
        layout: validated layout with ``pp > 1`` (``stage_layers``, ``microbatches``, ``schedule``).
        mesh: the runtime mesh (axis ``pp`` of size ``layout.parallel.pp``).

    Attributes:
        note: one line describing the executed schedule (e.g. that 'zero-bubble' runs as 1F1B).
        executed: 'gpipe', '1f1b' or 'interleaved' (:data:`shardplan.parallel.RUNTIME_SCHEDULE` of
            ``layout.parallel.schedule``).
        placement: the model layer in each stacked block slot (:func:`layout_placement`).
        chunks: model chunks per rank (``virtual_stages`` when 'interleaved' is executed, else 1).

    Raises:
        ConfigError: see :func:`check_pipeline`.
    """

    def __init__(self, model: ModelSpec, layout: Layout, mesh: Mesh):
        check_pipeline(model, layout)
        p = layout.parallel
        self.pp, self.microbatches, self.mesh = p.pp, layout.microbatches, mesh
        self.stage_layers = tuple(layout.stage_layers)
        #: the layer in each block slot of each rank (:func:`layout_placement`, :func:`slot_layers`)
        self.placement = layout_placement(layout)
        self.mask = slot_mask(self.placement)
        self.windows = layer_windows(model, self.placement)
        self.remat = p.recompute
        self.tied = model.tied_embeddings
        #: the schedule executed: 'gpipe', '1f1b' or 'interleaved' (:data:`shardplan.parallel.RUNTIME_SCHEDULE`)
        self.executed = RUNTIME_SCHEDULE[p.schedule]
        #: embedding / LM head / final norm stacked over pp (:func:`boundary_tables`), else replicated
        self.boundary = boundary_tables(layout)
        #: model chunks per rank: ``virtual_stages`` when interleaving is executed, else 1
        self.chunks = p.virtual_stages if self.executed == "interleaved" else 1
        abstract = abstract_model(model, p.recompute, fuses_qkv(model, p.tp))
        self.block_graphdef = nnx.split(abstract.layers[0], nnx.Param)[0]
        abstract.layers = nnx.List([])
        self.outer_graphdef = nnx.split(abstract, nnx.Param)[0]
        self.note = self._describe(p.schedule)

    def _describe(self, schedule: str) -> str:
        """The one-line :attr:`note`: executed schedule, layer split, microbatches, ticks / slots and,
        for a planner schedule executed as another, which one."""
        split = "x".join(map(str, self.stage_layers))
        pad = int(self.mask.size - self.mask.sum())
        m, pp = self.microbatches, self.pp
        if self.executed == "gpipe":
            what, steps = f"GPipe over pp={pp} stages", f"{m + pp - 1} ticks"
        elif self.executed == "interleaved":
            tbl = interleaved_table(pp, m, self.chunks)
            what = (f"interleaved 1F1B (Megatron, {self.chunks} chunks per rank, explicit per-chunk vjp) "
                    f"over pp={pp} stages")
            steps = f"{tbl.kind.shape[0]} chunk slots, at most {tbl.rows_in} chunk inputs in flight per rank"
        else:
            what = f"1F1B (PipeDream-Flush, explicit per-stage vjp) over pp={pp} stages"
            steps = f"{one_f_one_b_slots(pp, m)} slots, at most {min(m, pp)} stage inputs in flight"
        note = (f"pipeline: {what} (layers {split}{f', {pad} masked padding slot(s)' if pad else ''}), "
                f"{m} microbatches, {steps}")
        if schedule != self.executed:
            note += (f"; schedule {schedule!r} is executed as 1F1B (same gradients; the planner's bubble "
                     f"figures are for {schedule})")
        return note

    def logits(self, params: Mapping[str, Any], tokens: jax.Array, compute_dtype: Any = jnp.float32,
               positions: jax.Array | None = None) -> jax.Array:
        """Forward pass, equal to the ``pp = 1`` model's: the GPipe forward scan (differentiated by
        ``jax.grad`` for ``schedule='gpipe'``; the trainer's ``loss`` for every schedule).

        Args:
            params: the stacked parameter dict (fp32 master copy).
            tokens: (B, s) int32, B divisible by ``microbatches``.
            compute_dtype: dtype of the forward/backward (the embedding/head parameters are cast
                outside the pipeline, the stage parameters inside it, see :meth:`blocks`).
            positions: (s,) token position at each index (default ``0 .. s-1``; ring attention's
                zig-zag layout passes its own, see :meth:`shardplan.jax.model.Transformer.__call__`).

        Returns:
            logits (B, s, v) in ``compute_dtype``.
        """
        if BOUNDARY in params:  # the stacked embedding / head: GSPMD moves the two slices to every rank
            params = unstack_boundary(params, self.tied)
        outer_p = {k: v.astype(compute_dtype) if hasattr(v, "astype") else jax.tree.map(
            lambda a: a.astype(compute_dtype), v) for k, v in params.items() if k != STAGES}
        outer: Transformer = nnx.merge(self.outer_graphdef, outer_p)
        if positions is None:
            positions = jnp.arange(tokens.shape[1], dtype=jnp.int32)
        x = outer.embed_tokens(tokens, positions)
        return outer.head(self.blocks(params[STAGES], x, positions))

    def blocks(self, stages: Any, x: jax.Array, positions: jax.Array | None = None) -> jax.Array:
        """All transformer blocks, pipelined in GPipe order (with the interleaved placement, the
        ``v`` chunks' pipelines one after the other: virtual stages ``0 .. pp v - 1`` in order).

        Args:
            stages: stacked block parameters ``(pp, L_max, ...)`` sharded over pp, in any float
                dtype (the fp32 master copy): they are cast to ``x.dtype`` inside the pipeline.
            x: (B, s, d) residual stream in the compute dtype.
            positions: (s,) token positions (default ``0 .. s-1``).

        Returns:
            (B, s, d) after all blocks, in ``x.dtype``.
        """
        B, s, d = x.shape
        m = self.microbatches
        # microbatch i = rows a*m + i: each microbatch keeps its rows on their data-parallel device
        xm = x.reshape(B // m, m, s, d).swapaxes(0, 1)
        xm = constrain(xm, (None, "act_batch", "act_seq_norm", "act_embed"))
        positions = jnp.arange(s, dtype=jnp.int32) if positions is None else positions
        # the pp-replicated input and output cross the shard_map boundary in fp32: their all-reduces
        # over pp (the output psum and the input's cotangent) only add zeros, so this is exact, and
        # XLA:CPU fails to compile bf16 all-reduces inside a partially manual computation
        # ("Invalid binary instruction opcode copy", jax 0.10.2)
        ym = xm.astype(jnp.float32)
        v, lc = self.chunks, self.mask.shape[1] // self.chunks
        for c in range(v):  # interleaved placement: the chunks' pipelines one after the other
            tables = [None if t is None else t.reshape(self.pp, v, lc)[:, c] for t in (self.mask, self.windows)]
            body = self._stage_program(self._block_fn(positions), x.dtype, *tables)
            run = jax.shard_map(body, mesh=self.mesh, in_specs=(P("pp"), P()), out_specs=P(), axis_names={"pp"})
            ym = run(jax.tree.map(lambda a: a[:, c * lc:(c + 1) * lc], stages), ym)
        ym = ym.astype(x.dtype)
        ym = constrain(ym, (None, "act_batch", "act_seq_norm", "act_embed"))
        return ym.swapaxes(0, 1).reshape(B, s, d)

    def _block_fn(self, positions: jax.Array) -> BlockFn:
        """``block(layer_params, h, window) -> h``: one transformer block (with the plan's recompute
        policy) at token positions ``positions`` (s,); ``window`` is the layer's attention window
        (int32 scalar, see :func:`layer_windows`) or None for the block definition's own."""
        block_graphdef = self.block_graphdef

        def block(lw: Any, h: jax.Array, window: Any = None) -> jax.Array:
            return nnx.merge(block_graphdef, lw)(h, positions, window)

        if self.remat != "none":
            block = jax.checkpoint(block, policy=remat_policy(self.remat))
        return block

    def value_and_grad(self, params: Mapping[str, Any], inputs: jax.Array, targets: jax.Array,
                       compute_dtype: Any = jnp.float32, positions: jax.Array | None = None,
                       real_vocab: int | None = None, data_axes: tuple[str, ...] = ()
                       ) -> tuple[jax.Array, dict[str, Any]]:
        """Mean next-token loss and its gradients by the executed 1F1B schedule (module docstring).

        The embedding runs before the pipeline under ``jax.vjp``; the pipeline returns the loss,
        the stage and head gradients and the cotangent of its input, through which the embedding's
        vjp gives the embedding gradients (summed with the head's for tied embeddings).

        Args:
            params: the stacked fp32 parameter dict.
            inputs, targets: (B, s) int32 token ids, B divisible by ``microbatches``.
            compute_dtype: dtype of the forward/backward (gradients accumulate in fp32).
            positions: (s,) token positions (default ``0 .. s-1``).
            real_vocab: the model's vocabulary when the network's is padded (see
                :func:`~shardplan.jax.model.token_nll`).
            data_axes: batch mesh axes along which every parameter is replicated
                (``Trainer.local_axes``): the ``shard_map`` is manual over them too, each device
                accumulates its local gradient and it is all-reduced once per step (fp32); ``()``:
                GSPMD reduces the stage gradients in every backward slot.

        Returns:
            ``(loss, grads)``: fp32 scalar (mean over the ``B s`` tokens, nats) and fp32
            gradients with the structure of ``params``.
        """
        m = self.microbatches
        positions = jnp.arange(inputs.shape[1], dtype=jnp.int32) if positions is None else positions
        rest = {k: jax.tree.map(lambda a: a.astype(compute_dtype), v) for k, v in params.items()
                if k not in (STAGES, BOUNDARY)}
        im, tm = (constrain(_microbatched(t, m), (None, "act_batch", None)) for t in (inputs, targets))
        program = self._interleaved_program if self.executed == "interleaved" else self._one_f_one_b_program
        body = program(self._block_fn(positions), compute_dtype, self._loss_fn(inputs.size, real_vocab),
                       self._embed_fn(positions), tuple(data_axes))
        rows = P(None, tuple(data_axes) or None)  # (m, b, ...) with the batch split over data_axes
        run = jax.shard_map(body, mesh=self.mesh, in_specs=(P("pp"), P("pp"), P(), rows, rows),
                            out_specs=(P("pp"), P("pp"), P(), P()), axis_names={"pp", *data_axes})
        g_stages, g_boundary, g_rest, loss = run(params[STAGES], params[BOUNDARY], rest, im, tm)
        return loss, {**g_rest, STAGES: g_stages, BOUNDARY: g_boundary}

    def _merged(self, table: jax.Array, norm: Any, rest: Mapping[str, Any]) -> Transformer:
        """The outer model (embedding, positions, final norm, head) on one pipeline rank: ``table``
        (V, d) its :data:`BOUNDARY` slice as the embedding and (transposed) the untied LM head,
        ``norm`` its final-norm slice, ``rest`` the pp-replicated outer parameters."""
        p = {**rest, "embed": table, "final_norm": norm}
        if not self.tied:
            p["lm_head"] = table.T
        return nnx.merge(self.outer_graphdef, p)

    def _embed_fn(self, positions: jax.Array) -> Callable[..., jax.Array]:
        """``embed(table, norm, rest, tokens) -> xs``: the token (+ position) embedding of the
        ``(m, b, s)`` int32 microbatches by this rank's table (:meth:`_merged`), ``(m, b, s, d)``."""
        def embed(table: jax.Array, norm: Any, rest: Any, tokens: jax.Array) -> jax.Array:
            m, b, s_ = tokens.shape
            # the whole model width before the lookup (ZeRO-3 gathers the table over fsdp here): XLA's
            # partitioner aborts on a gather from a table sharded over both tp (vocab) and fsdp (width)
            # inside the pp-manual region (jax 0.10.2, "Check failed: partition_group_list...")
            table = constrain(table, ("act_vocab", None))
            x = self._merged(table, norm, rest).embed_tokens(tokens.reshape(m * b, s_), positions)
            return x.reshape(m, b, s_, x.shape[-1])
        return embed

    @staticmethod
    def _boundary_in(embed: Callable, bnd: Any, rest: Any, toks: jax.Array, dtype: Any,
                     data_axes: tuple[str, ...]) -> tuple[Any, Any, jax.Array, Callable]:
        """Start of a 1F1B program on one rank (``embed`` of :meth:`_embed_fn`): its
        :data:`BOUNDARY` slice ``head`` (``table`` (V, d)
        and ``final_norm`` in ``dtype``, per-device copies over ``data_axes``), ``rest`` made varying,
        and the embedding ``xs`` (m, b, s, d) of the local microbatches ``toks`` (m, b, s) with its
        ``vjp``. Every rank embeds by its own table; only stage 0's ``xs`` is read (Megatron runs
        the embedding on the first stage; the other ranks' lookups are discarded)."""
        head = jax.tree.map(lambda a: a[0].astype(dtype), bnd)
        head = jax.lax.pcast(head, data_axes, to="varying") if data_axes else head
        rest = jax.lax.pcast(rest, ("pp", *data_axes), to="varying") if rest else rest
        xs, vjp = jax.vjp(lambda t, r: embed(t, head["final_norm"], r, _varying(toks)), head["table"], rest)
        return head, rest, xs, vjp

    def _boundary_out(self, g_head: Any, dxs: jax.Array, vjp: Callable, grads: Any, loss: jax.Array,
                      data_axes: tuple[str, ...]) -> tuple[Any, Any, Any, jax.Array]:
        """End of a 1F1B program: the embedding gradient from the input cotangents ``dxs`` (non-zero
        on stage 0 only) added to the head's ``g_head`` (last stage), one data-parallel all-reduce
        (fp32) of ``grads`` (the stage gradients), the boundary and ``rest`` gradients and the loss;
        with tied embeddings the first and last stage's table gradients summed (Megatron-LM's
        ``_allreduce_word_embedding_grads`` over the embedding group); ``rest`` and the loss summed
        over pp. Returns ``(grads, g_boundary (1, ...), g_rest, loss)``."""
        f32 = jnp.float32
        g_table, g_rest = vjp(dxs)
        g_b = {"table": g_head["table"] + g_table.astype(f32), "final_norm": g_head["final_norm"]}
        g_rest = jax.tree.map(lambda g: g.astype(f32), g_rest)
        if data_axes:
            grads, g_b, g_rest, loss = jax.lax.psum((grads, g_b, g_rest, loss), data_axes)
        if self.tied:
            g_b["table"] = _embedding_group_sum(g_b["table"], self.pp)
        g_rest, loss = jax.lax.psum((g_rest, loss), "pp")
        return grads, jax.tree.map(lambda g: g[None], g_b), g_rest, loss

    def _loss_fn(self, n_tokens: int, real_vocab: int | None) -> Callable[..., jax.Array]:
        """``loss(h, head, rest, targets)``: final norm + LM head on the last stage's output ``h``
        (b, s, d) with the rank's :data:`BOUNDARY` slice ``head`` (``table`` (V, d), ``final_norm``)
        and the other outer parameters ``rest`` (:meth:`_merged`), then the summed token
        cross-entropy divided by ``n_tokens`` (the step's tokens),
        an fp32 scalar."""
        def loss(h: jax.Array, head: Any, rest: Any, targets: jax.Array) -> jax.Array:
            logits = self._merged(head["table"], head["final_norm"], rest).head(h).astype(jnp.float32)
            return jnp.sum(token_nll(logits, targets, real_vocab, gather=False)) / n_tokens

        return loss

    def _one_f_one_b_program(self, block: BlockFn, dtype: Any, loss_fn: Callable[..., jax.Array],
                             embed: Callable[..., jax.Array], data_axes: tuple[str, ...] = ()) -> Callable:
        """The per-stage program of :meth:`value_and_grad` under ``shard_map`` (manual over ``pp``).

        Returns:
            ``body(stage_w, bnd, rest, toks, ts) -> (g_stage, g_boundary, g_rest, loss)``: ``stage_w``
            this stage's ``(1, L_max, ...)`` parameters, ``bnd`` its ``(1, ...)`` :data:`BOUNDARY`
            slice, ``rest`` the other outer parameters (compute dtype, pp-invariant), ``toks`` /
            ``ts`` the (m, b, s) input and target ids (pp-invariant). ``g_stage`` (1, L_max, ...) and
            ``g_boundary`` (1, ...) are this rank's fp32 gradients; ``g_rest`` and ``loss`` are
            summed over pp (fp32, exact: only stage 0 (``rest``) or the last stage (loss) is
            non-zero). The ticks (two slots each, :func:`one_f_one_b_work`) run as one ``lax.scan``
            per run of ticks with the same sends (:func:`shardplan.pipeline_program.one_f_one_b_runs`:
            the warm-up and cool-down ticks send only what their stages produced). With
            ``data_axes`` (manual too) ``toks`` / ``ts`` are the local rows, the parameters are
            differentiated as per-device copies, and the gradients and the loss are ``psum``-med over
            ``data_axes`` once, after the schedule (:meth:`_boundary_out`).
        """
        m, pp = self.microbatches, self.pp
        run_stage = self._stage_runner(block)
        f32 = jnp.float32

        def body(stage_w: Any, bnd: Any, rest: Any, toks: jax.Array, ts: jax.Array) -> tuple:
            stage = jax.lax.axis_index("pp")
            # per-device copies (pcast to varying): their vjp is the local gradient, no collective
            w = jax.tree.map(lambda a: a[0].astype(dtype), stage_w)
            w = jax.lax.pcast(w, data_axes, to="varying") if data_axes else w
            head, rest, xs, embed_vjp = self._boundary_in(embed, bnd, rest, toks, dtype, data_axes)
            ts = _varying(ts)
            branches = _slot_branches(lambda w_, x: run_stage(stage, w_, x),
                                      lambda w_, h_, x, tg: loss_fn(run_stage(stage, w_, x), h_, rest, tg), w, head)
            slot = _slot_fn(pp, m, stage, xs, ts, branches)
            zeros32 = lambda t: jax.tree.map(lambda a: jnp.zeros(a.shape, f32), t)  # noqa: E731
            carry = jax.lax.pcast((jnp.zeros(xs.shape[1:], dtype), jnp.zeros((min(m, pp), *xs.shape[1:]), dtype),
                                   zeros32(w), zeros32(head), jnp.zeros((), f32), jnp.zeros(xs.shape, dtype)),
                                  ("pp", *data_axes), to="varying")
            for start, stop, even, odd in one_f_one_b_runs(pp, m):
                def tick(c: tuple, j: jax.Array, even: Any = even, odd: Any = odd) -> tuple[tuple, None]:
                    return slot(slot(c, 2 * j, list(even)), 2 * j + 1, list(odd)), None
                carry, _ = jax.lax.scan(tick, carry, jnp.arange(start, stop))
            _, _, g_w, g_head, loss, dxs = carry
            g_w, g_b, g_rest, loss = self._boundary_out(g_head, dxs, embed_vjp, g_w, loss, data_axes)
            return jax.tree.map(lambda g: g[None], g_w), g_b, g_rest, loss

        return body

    def _interleaved_program(self, block: BlockFn, dtype: Any, loss_fn: Callable[..., jax.Array],
                             embed: Callable[..., jax.Array], data_axes: tuple[str, ...] = ()) -> Callable:
        """The per-rank program of the executed interleaved 1F1B: as :meth:`_one_f_one_b_program`
        (same arguments and outputs), but each rank holds ``v`` model chunks (its ``(1, S, ...)``
        slots viewed as ``(v, Lc, ...)``, :func:`interleaved_placement`) and a ``lax.scan`` runs the
        ``T`` slots of :func:`interleaved_table` (one scan per run of slots with the same sends,
        :func:`shardplan.pipeline_program.interleaved_runs`); per slot one ``lax.switch`` (idle /
        chunk forward / chunk backward / last chunk's backward with the loss) and two cyclic
        ``ppermute``-s of the ranks that send (forward ``k -> k + 1``, backward ``k -> k - 1``; rank
        ``pp - 1``'s chunk ``c`` feeds rank 0's chunk ``c + 1``)."""
        pp, v = self.pp, self.chunks
        lc = self.mask.shape[1] // v
        tables = [None if t is None else t.reshape(pp, v, lc) for t in (self.mask, self.windows)]
        run_chunk = self._stage_runner(block, *tables)
        tbl = interleaved_table(pp, self.microbatches, v)
        f32 = jnp.float32

        def body(stage_w: Any, bnd: Any, rest: Any, toks: jax.Array, ts: jax.Array) -> tuple:
            stage = jax.lax.axis_index("pp")
            w = jax.tree.map(lambda a: a[0].astype(dtype).reshape(v, lc, *a.shape[2:]), stage_w)
            w = jax.lax.pcast(w, data_axes, to="varying") if data_axes else w
            head, rest, xs, embed_vjp = self._boundary_in(embed, bnd, rest, toks, dtype, data_axes)
            ts = _varying(ts)
            chunk_fn = lambda c, w_, x: run_chunk((stage, c), w_, x)  # noqa: E731
            last_fn = lambda c, w_, h_, x, tg: loss_fn(chunk_fn(c, w_, x), h_, rest, tg)  # noqa: E731
            branches = _interleaved_branches(chunk_fn, last_fn, w, head)
            slot = _interleaved_slot_fn(tbl, pp, v, stage, xs, ts, branches)
            zeros32 = lambda t: jax.tree.map(lambda a: jnp.zeros(a.shape, f32), t)  # noqa: E731
            b_s_d = xs.shape[1:]
            init = jax.lax.pcast((jnp.zeros((tbl.rows_in, *b_s_d), dtype), jnp.zeros((tbl.rows_cot, *b_s_d), dtype),
                                  zeros32(w), zeros32(head), jnp.zeros((), f32), jnp.zeros(xs.shape, dtype)),
                                 ("pp", *data_axes), to="varying")
            for start, stop, fwd, bwd in interleaved_runs(tbl, v):
                init, _ = jax.lax.scan(lambda c, t, f=fwd, b=bwd: (slot(c, t, f, b), None), init,
                                       jnp.arange(start, stop))
            _, _, g_w, g_head, loss, dxs = init
            g_w, g_b, g_rest, loss = self._boundary_out(g_head, dxs, embed_vjp, g_w, loss, data_axes)
            return jax.tree.map(lambda g: g.reshape(1, v * lc, *g.shape[2:]), g_w), g_b, g_rest, loss

        return body

    def _stage_runner(self, block: BlockFn, mask: np.ndarray | None = None,
                      windows: np.ndarray | None = None) -> Callable[[Any, Any, jax.Array], jax.Array]:
        """``run(index, w, h) -> h``: the block slots ``mask[index]`` (``w`` their ``(L, ...)``
        parameters, ``index`` the int32 pp index, or (pp index, chunk) for tables shaped
        ``(pp, v, Lc)``) applied to ``h`` (b, s, d) in a ``lax.scan``; padding slots
        (:func:`slot_mask`) pass ``h`` through. Default tables: :attr:`mask`, :attr:`windows`."""
        if mask is None:
            mask, windows = self.mask, self.windows
        padded = not bool(mask.all())

        def run(stage: Any, w: Any, h: jax.Array) -> jax.Array:
            valid = jnp.asarray(mask)[stage]  # (L,)
            win = None if windows is None else jnp.asarray(windows)[stage]  # (L,) per-layer windows

            def layer(h: jax.Array, lw_v: Any) -> tuple[jax.Array, None]:
                lw, v, wn = lw_v
                y = block(lw, h, wn)
                return (jnp.where(v, y, h) if padded else y), None

            return jax.lax.scan(layer, h, (w, valid, win))[0]

        return run

    def _stage_program(self, block: BlockFn, dtype: Any, mask: np.ndarray | None = None,
                       windows: np.ndarray | None = None) -> Callable[[Any, jax.Array], jax.Array]:
        """The per-stage program run under ``shard_map`` (manual over ``pp``): the GPipe scan.

        Returns:
            ``body(stage_w, xs) -> ys``: ``stage_w`` this stage's ``(1, L_max, ...)`` slice of the
            stacked parameters, ``xs`` the ``(m, b, s, d)`` fp32 microbatches (pp-invariant); ``ys``
            the ``(m, b, s, d)`` fp32 outputs of the last stage, summed over pp (the other stages
            contribute zeros). Each of the ``m + pp - 1`` ticks runs this stage's blocks on its
            current microbatch and ``ppermute``-s the result to the next stage.
        """
        m, pp = self.microbatches, self.pp
        run_stage = self._stage_runner(block, mask, windows)

        def body(stage_w: Any, xs: jax.Array) -> jax.Array:
            stage = jax.lax.axis_index("pp")
            w = jax.tree.map(lambda a: a[0].astype(dtype), stage_w)  # (L_max, ...) this stage's layers

            def tick(carry: Any, t: jax.Array) -> tuple[Any, None]:
                state, outs = carry
                # xs is pp-invariant (fp32): make the slice varying *before* the cast, so that the
                # transpose of this pcast (a psum of the cotangent over pp) runs in fp32
                x0 = jax.lax.pcast(xs[jnp.minimum(t, m - 1)], ("pp",), to="varying").astype(dtype)
                h = run_stage(stage, w, jnp.where(stage == 0, x0, state))
                j = t - (pp - 1)  # microbatch leaving the last stage at this tick
                jc = jnp.clip(j, 0, m - 1)
                keep = (stage == pp - 1) & (j >= 0)
                outs = jax.lax.dynamic_update_index_in_dim(outs, jnp.where(keep, h, outs[jc]), jc, 0)
                state = jax.lax.ppermute(h, "pp", [(k, k + 1) for k in range(pp - 1)])
                return (state, outs), None

            init = jax.lax.pcast((jnp.zeros(xs.shape[1:], dtype), jnp.zeros(xs.shape, dtype)), ("pp",), to="varying")
            (_, outs), _ = jax.lax.scan(tick, init, jnp.arange(m + pp - 1))
            # only the last stage holds the outputs: adding the other stages' zeros is exact
            return jax.lax.psum(jnp.where(stage == pp - 1, outs, jnp.zeros_like(outs)).astype(jnp.float32), "pp")

        return body


# ----- 1F1B (PipeDream-Flush) -------------------------------------------------------------------

def _embedding_group_sum(g: jax.Array, pp: int) -> jax.Array:
    """Tied embeddings: the sum of the first and the last stage's table gradients on both, the
    other ranks' ``g`` (zero) unchanged -- Megatron-LM's all-reduce over the *embedding group*
    (first + last stage; ``megatron/core/distributed/finalize_model_grads.py``
    ``_allreduce_word_embedding_grads``). pp = 2: one ``psum`` over pp (that group); pp > 2: the two
    ranks swap their gradients (one ``ppermute``, the same bytes as a 2-rank all-reduce)."""
    if pp == 2:
        return jax.lax.psum(g, "pp")
    return g + jax.lax.ppermute(g, "pp", [(0, pp - 1), (pp - 1, 0)])


def _varying(x: Any) -> Any:
    """``x`` (a pytree, pp-invariant) cast to pp-varying inside the pp-manual ``shard_map``."""
    return jax.lax.pcast(x, ("pp",), to="varying")


def _add_f32(acc: Any, g: Any) -> Any:
    """``acc + g`` leaf by leaf, ``g`` cast to the accumulator's fp32."""
    return jax.tree.map(lambda a, b: a + b.astype(a.dtype), acc, g)


def _microbatched(x: jax.Array, m: int) -> jax.Array:
    """(B, ...) -> (m, B/m, ...): microbatch i = rows a*m + i (each keeps its rows on its data device)."""
    return x.reshape(x.shape[0] // m, m, *x.shape[1:]).swapaxes(0, 1)


def _unmicrobatched(x: jax.Array) -> jax.Array:
    """Inverse of :func:`_microbatched`: (m, b, ...) -> (b m, ...)."""
    return x.swapaxes(0, 1).reshape(x.shape[0] * x.shape[1], *x.shape[2:])


# ----- interleaved 1F1B (Megatron's virtual stages) ----------------------------------------------

def _add_at(acc: Any, c: Any, g: Any) -> Any:
    """``acc[c] += g`` leaf by leaf (``acc`` (v, ...) fp32, ``g`` one chunk's gradient)."""
    return jax.tree.map(lambda a, b: a.at[c].add(b.astype(a.dtype)), acc, g)


def _interleaved_branches(chunk_fn: Callable, loss_fn: Callable, w: Any, head: Any) -> list[Callable]:
    """The ``lax.switch`` branches of an interleaved slot, as :func:`_slot_branches` but for model
    chunk ``c`` of the rank: ``(c, x, cot, target, g_w, g_head, loss) -> (send, g_w, g_head, loss)``
    with ``x`` the chunk input, ``cot`` its output cotangent, ``w`` the rank's ``(v, Lc, ...)``
    parameters and ``g_w`` their fp32 gradient (chunk ``c`` updated)."""
    def idle(c, x, cot, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        return jnp.zeros_like(x), g_w, g_head, loss

    def forward(c, x, cot, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        return chunk_fn(c, jax.tree.map(lambda a: a[c], w), x), g_w, g_head, loss

    def backward(c, x, cot, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        _, vjp = jax.vjp(lambda w_, x_: chunk_fn(c, w_, x_), jax.tree.map(lambda a: a[c], w), x)
        dw, dx = vjp(cot)
        return dx, _add_at(g_w, c, dw), g_head, loss

    def backward_last(c, x, cot, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        value, vjp = jax.vjp(lambda w_, h_, x_: loss_fn(c, w_, h_, x_, tgt), jax.tree.map(lambda a: a[c], w), head, x)
        dw, dh, dx = vjp(jnp.ones_like(value))
        return dx.astype(x.dtype), _add_at(g_w, c, dw), _add_f32(g_head, dh), loss + value

    return [idle, forward, backward, backward_last]


def _interleaved_slot_fn(tbl: InterleavedTable, pp: int, v: int, stage: Any, xs: jax.Array, ts: jax.Array,
                         branches: list[Callable]) -> Callable:
    """``slot(carry, t, fwd, bwd) -> carry``: slot ``t`` of the executed interleaved 1F1B on this
    rank, ``fwd`` / ``bwd`` the static ``ppermute`` pairs of the slot's run
    (:func:`shardplan.pipeline_program.interleaved_runs`; empty: nothing sent).

    ``carry = (inp, cot, g_w, g_head, loss, dxs)``: the chunk-input buffer ``(rows_in, b, s, d)``,
    the output-cotangent buffer ``(rows_cot, b, s, d)``, the fp32 accumulators and the input
    cotangents ``dxs`` (m, b, s, d) of virtual stage 0. The pass (:class:`InterleavedTable`) reads its
    rows, runs one of :func:`_interleaved_branches`, and the two cyclic ``ppermute``-s' payloads are
    stored where the table says.
    """
    at = {name: jnp.asarray(getattr(tbl, name)) for name in
          ("kind", "mb", "chunk", "in_row", "cot_row", "recv_f", "recv_f_row", "recv_b", "recv_b_row")}
    upd = jax.lax.dynamic_update_index_in_dim
    send = lambda x, pairs: jax.lax.ppermute(x, "pp", list(pairs)) if pairs else jnp.zeros_like(x)  # noqa: E731

    def slot(carry: tuple, t: jax.Array, fwd: Pairs, bwd: Pairs) -> tuple:
        inp, cot, g_w, g_head, loss, dxs = carry
        kind, i, c, r, rc = (at[n][t, stage] for n in ("kind", "mb", "chunk", "in_row", "cot_row"))
        j = c * pp + stage
        is_f, is_b, first, last = kind == 1, kind == 2, j == 0, j == v * pp - 1
        inp = upd(inp, jnp.where(is_f & first, xs[i], inp[r]), r, 0)
        idx = jnp.where(is_f & ~last, 1, jnp.where(is_b, jnp.where(last, 3, 2), 0))
        out, g_w, g_head, loss = jax.lax.switch(idx, branches, c, inp[r], cot[rc], ts[i], g_w, g_head, loss)
        dxs = upd(dxs, jnp.where(is_b & first, out, dxs[i]), i, 0)
        got_f, got_b = send(out, fwd), send(out, bwd)
        rf, rb = at["recv_f_row"][t, stage], at["recv_b_row"][t, stage]
        inp = upd(inp, jnp.where(at["recv_f"][t, stage], got_f, inp[rf]), rf, 0)
        cot = upd(cot, jnp.where(at["recv_b"][t, stage], got_b, cot[rb]), rb, 0)
        return inp, cot, g_w, g_head, loss, dxs

    return slot


def _slot_branches(stage_fn: Callable, loss_fn: Callable, w: Any, head: Any) -> list[Callable]:
    """The ``lax.switch`` branches of a 1F1B slot: 0 idle (bubble: nothing computed), 1 forward,
    2 backward of a middle / first stage, 3 backward of the last stage (forward + loss + backward).

    Each branch maps ``(x_in, x_b, recv, target, g_w, g_head, loss)`` -- the forward input, the
    stored input of the microbatch to differentiate, the received cotangent, its targets (b, s) and
    the fp32 accumulators -- to ``(send, g_w, g_head, loss)``, ``send`` the (b, s, d) output (forward)
    or input cotangent (backward). A backward re-runs the stage's forward under ``jax.vjp`` from
    the stored input (stage-granular recomputation).
    """
    def idle(x_in, x_b, recv, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        return jnp.zeros_like(x_in), g_w, g_head, loss

    def forward(x_in, x_b, recv, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        return stage_fn(w, x_in), g_w, g_head, loss

    def backward(x_in, x_b, recv, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        _, vjp = jax.vjp(stage_fn, w, x_b)
        dw, dx = vjp(recv)
        return dx, _add_f32(g_w, dw), g_head, loss

    def backward_last(x_in, x_b, recv, tgt, g_w, g_head, loss):  # noqa: ANN001, ANN202
        value, vjp = jax.vjp(lambda w_, h_, x: loss_fn(w_, h_, x, tgt), w, head, x_b)
        dw, dh, dx = vjp(jnp.ones_like(value))
        return dx.astype(x_in.dtype), _add_f32(g_w, dw), _add_f32(g_head, dh), loss + value

    return [idle, forward, backward, backward_last]


def _slot_fn(pp: int, m: int, stage: Any, xs: jax.Array, ts: jax.Array, branches: list[Callable]) -> Callable:
    """``slot(carry, t, perm) -> carry``: slot ``t`` of the executed 1F1B schedule on this stage.

    ``carry = (recv, ring, g_w, g_head, loss, dxs)``: the (b, s, d) tensor received after the last
    slot, the ring buffer of stage inputs ``(min(m, pp), b, s, d)`` (microbatch ``i`` in row
    ``i mod min(m, pp)``; at most ``pp - stage`` are in flight), the fp32 gradient and loss
    accumulators and the input cotangents ``dxs`` (m, b, s, d) (written by stage 0). The slot
    stores its forward input, runs one of :func:`_slot_branches` (chosen per device by
    :func:`one_f_one_b_work`) and ``ppermute``-s its output by ``perm``.
    """
    last, first, rows = stage == pp - 1, stage == 0, min(m, pp)

    def slot(carry: tuple, t: jax.Array, perm: list[tuple[int, int]]) -> tuple:
        recv, ring, g_w, g_head, loss, dxs = carry
        is_f, fi, is_b, bi = one_f_one_b_work(pp, m, stage, t)
        fi, bi = jnp.clip(fi, 0, m - 1), jnp.clip(bi, 0, m - 1)
        x_in = jnp.where(first, xs[fi], recv)
        ring = jax.lax.dynamic_update_index_in_dim(ring, jnp.where(is_f, x_in, ring[fi % rows]), fi % rows, 0)
        idx = jnp.where(is_f & ~last, 1, jnp.where(is_b, jnp.where(last, 3, 2), 0))
        out, g_w, g_head, loss = jax.lax.switch(idx, branches, x_in, ring[bi % rows], recv, ts[bi], g_w, g_head, loss)
        dxs = jax.lax.dynamic_update_index_in_dim(dxs, jnp.where(is_b & first, out, dxs[bi]), bi, 0)
        # pp = 2, odd slots: the last stage's forward and the first stage's backward send nothing
        recv = jax.lax.ppermute(out, "pp", perm) if perm else jnp.zeros_like(out)
        return recv, ring, g_w, g_head, loss, dxs

    return slot


__all__ = ["Pipeline", "check_pipeline", "stack_params", "stack_logical", "layout_params", "decay_mask",
           "BOUNDARY", "BOUNDARY_KEYS", "boundary_tables", "stack_boundary", "unstack_boundary",
           "slot_mask", "layer_windows", "STAGES", "one_f_one_b_slots",
           "one_f_one_b_work", "one_f_one_b_permutation"]
