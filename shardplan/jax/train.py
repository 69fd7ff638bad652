"""Training on the plan's mesh: AdamW, gradient accumulation, ZeRO stages, recompute, metrics.

How the ZeRO stages are expressed under GSPMD (``rules.param`` / ``rules.opt`` tables):

* ZeRO-0 (DP): parameters, gradients and optimizer state replicated over the data axes; one
  gradient all-reduce per step.
* ZeRO-1: optimizer state sharded over the ZeRO axes (``fsdp``, ``ep``, ``cp``); parameters
  replicated. The gradients are reduce-scattered onto the optimizer-state layout, the update runs
  there (each device updates its slice of the parameters) and the new parameters are constrained
  back to the replicated layout, which is the parameter all-gather after the update.
* ZeRO-2: as ZeRO-1 (the gradient reduction is a reduce-scatter onto the optimizer-state shard;
  on CPU XLA lowers it as all-reduce + slice); the embedding table's gradient is built on each
  device and reduce-scattered as a whole (:func:`shardplan.jax.model.local_lookup_gradients`).
  With one reduction per step (below) the accumulation buffer holds the whole local gradient, as
  for ZeRO-1; with
  ``grad_sync='per_microbatch'`` every microbatch's gradient is reduce-scattered into a sharded
  buffer.
* ZeRO-3 (FSDP): parameters live in the sharded layout too and are all-gathered explicitly for
  use (:meth:`Trainer.gather_weights`: each weight constrained to its layout without the ZeRO
  axes, the embedding table included), when the plan's ``ParallelConfig.zero3_gather`` says, as
  the planner prices it (``shardplan.cost.axes.dp``): ``'per_microbatch'`` (PyTorch FSDP's
  default, reshard after forward) gathers every weight inside each microbatch's forward and again
  for its backward -- the accumulation loop ties the weights to the microbatch with
  ``jax.lax.optimization_barrier`` so XLA cannot hoist the gather out of the loop, and the loss
  runs under ``jax.checkpoint`` with a policy that saves everything but the gathered weights
  (:func:`gather_weight`), so the backward re-gathers them instead of keeping them;
  ``'per_step'`` gathers every weight once, before the loop, and keeps it for all microbatches.
  Either way the gradients are reduce-scattered onto the shard once per microbatch (what FSDP
  does), the embedding table's from one sum over every device's tokens
  (:func:`shardplan.jax.model.embedding_lookup`). With ``pp > 1`` the pipeline keeps XLA's own
  gathers (ZeRO-3 with pp is not validated).

Gradient accumulation (``layout.microbatches = m >= 2``, ``pp == 1``): with ``TrainConfig.grad_sync =
'per_step'`` (the default, and what the planner prices) the microbatch gradients are summed
*unreduced* on each device and the data-parallel reduction runs once per step, after the scan
(:meth:`Trainer._grads_reduced_per_step`: ``jax.shard_map`` manual over the data axes along which the
gradients are replicated reductions, :func:`local_grad_axes` -- all of them for ZeRO-0/1/2, the HSDP
replica axis for ZeRO-3). ``'per_microbatch'`` keeps the plain GSPMD accumulation, where XLA reduces
inside the loop, once per microbatch (also used for ``cp > 1``).

Pipeline parallelism (``pp > 1``): the blocks are stacked per stage and the schedule of
:class:`shardplan.jax.pipeline.Pipeline` runs the ``layout.microbatches`` microbatches, which also
takes over gradient accumulation: the executed 1F1B or interleaved 1F1B computes the loss and the
gradients with explicit per-stage vjps (:meth:`Trainer._grads_pipeline`, manual over
:attr:`Trainer.local_axes` too, so the dp reduction runs once per step), GPipe
(``schedule='gpipe'``) by one ``value_and_grad`` of its forward scan.

Precision: parameters (the master copy) and optimizer moments are fp32; the forward/backward runs
in ``compute_dtype`` (bf16 by default, the plan's ``bf16-mixed`` policy; fp32 for exact
comparisons). Logits and the loss are computed in fp32.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from shardplan.errors import ConfigError, divisors
from shardplan.jax.data import PackedBatches, batch_sharding, load_tokens, shard_batch
from shardplan.jax.mesh import BATCH_AXES, build_mesh
from shardplan.jax.model import (Transformer, abstract_model, check_runtime_support, fuses_qkv,
                                 is_sp_gather, local_lookup_gradients, moe_capacity, param_dict, token_nll)
from shardplan.jax.pipeline import Pipeline, decay_mask, layout_params, stack_params
from shardplan.jax.ring import runtime_cp_attention, sequence_order
from shardplan.jax.rules import (LeafSharding, ParamOverride, ShardingRules, activation_sharding, context_mesh,
                                 make_rules, manual_axes, param_shardings, sharding_rows)
from shardplan.parallel import RUNTIME_SCHEDULE, Layout, ParallelConfig, padded_vocab
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

log = logging.getLogger("shardplan.jax")

COMPUTE_DTYPES = {"bfloat16": jnp.bfloat16, "bf16": jnp.bfloat16, "float32": jnp.float32, "fp32": jnp.float32}


@dataclass
class TrainConfig:
    """Optimizer and run settings (the layout comes from the plan).

    Attributes:
        steps: optimizer steps.
        learning_rate: peak AdamW learning rate.
        warmup_steps: linear warm-up steps (then cosine decay to 10 % of the peak).
        weight_decay: decoupled weight decay on matrices (ndim >= 2) only.
        b1, b2, eps: AdamW moments.
        grad_clip: global gradient-norm clip (0 disables).
        seed: parameter-init and data-shuffle seed.
        compute_dtype: 'bfloat16' (default) or 'float32'.
        rule_overrides: ``{logical: [mesh axes]}`` (see :func:`shardplan.jax.rules.make_rules`).
        param_overrides: ``[(regex, logical axes | PartitionSpec)]``.
        grad_sync: when the data-parallel gradients are reduced with gradient accumulation
            (``microbatches >= 2``, ``pp == 1``): 'per_step' (default; local gradients are summed
            over the microbatches and reduced once, as DDP ``no_sync`` / Megatron-LM / FSDP2 HSDP
            do and as the planner assumes, see :data:`GRAD_SYNC`) or 'per_microbatch' (every
            microbatch's gradient is reduced inside the accumulation loop: m times the traffic).
        cp_attention: attention under context parallelism: ``"ring"`` (default; K/V blocks passed
            around the cp ring, :mod:`shardplan.jax.ring`) or ``"allgather"`` (K/V all-gathered); a plan with
            ``cp_comm='a2a'`` runs DeepSpeed-Ulysses (``"a2a"``, :func:`check_ulysses`) instead.
    """

    steps: int = 20
    learning_rate: float = 3e-3
    warmup_steps: int = 0
    weight_decay: float = 0.1
    b1: float = 0.9
    b2: float = 0.95
    eps: float = 1e-8
    grad_clip: float = 1.0
    seed: int = 0
    compute_dtype: str = "bfloat16"
    rule_overrides: dict[str, list[str]] = field(default_factory=dict)
    param_overrides: list[ParamOverride] = field(default_factory=list)
    grad_sync: str = "per_step"
    cp_attention: str = "ring"


#: Legal ``TrainConfig.grad_sync`` values. The planner (``shardplan.cost.axes.dp``) prices
#: 'per_step': one gradient AllReduce (ZeRO-0) or ReduceScatter (ZeRO-1/2) per step, the HSDP
#: replica AllReduce once per step (``hsdp_reduce='per_step'``), ZeRO-3's shard-group
#: ReduceScatter per microbatch.
GRAD_SYNC: tuple[str, ...] = ("per_step", "per_microbatch")


def make_optimizer(cfg: TrainConfig, decay_mask: Any = None) -> optax.GradientTransformation:
    """Global-norm clipping then AdamW with warm-up + cosine decay; no decay on vectors (norms, biases).

    Args:
        cfg: optimizer settings.
        decay_mask: pytree of bools (or a callable) selecting the decayed leaves; default: leaves
            with ``ndim >= 2``. Stacked pipeline parameters pass
            :func:`shardplan.jax.pipeline.decay_mask` (ranks counted without the stacking dims).
    """
    sched = optax.warmup_cosine_decay_schedule(0.0 if cfg.warmup_steps else cfg.learning_rate, cfg.learning_rate,
                                               cfg.warmup_steps, max(cfg.steps, cfg.warmup_steps + 1),
                                               end_value=0.1 * cfg.learning_rate)
    mask = decay_mask if decay_mask is not None else (lambda params: jax.tree.map(lambda x: x.ndim >= 2, params))
    adam = optax.adamw(sched, b1=cfg.b1, b2=cfg.b2, eps=cfg.eps, weight_decay=cfg.weight_decay, mask=mask)
    return optax.chain(optax.clip_by_global_norm(cfg.grad_clip), adam) if cfg.grad_clip > 0 else adam


def _unflatten_like(tree: Any, values: Iterable[Any]) -> Any:
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(tree), list(values))


def _is_named(x: Any) -> bool:
    return isinstance(x, NamedSharding)


def _spec_axes(entry: Any) -> tuple[str, ...]:
    """The mesh axes of one PartitionSpec entry (None, a name or a tuple of names)."""
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _strip(spec: P, axes: Sequence[str]) -> P:
    """``spec`` without the mesh axes ``axes`` (the layout of a per-device block inside a
    ``shard_map`` manual over them)."""
    out = [tuple(a for a in _spec_axes(e) if a not in axes) for e in spec]
    return P(*[None if not e else e[0] if len(e) == 1 else e for e in out])


#: Top-level parameters used only by a lookup (the input embedding, learned positions): their
#: backward needs the token ids, not the table, so only :func:`gather_table` makes the
#: per-microbatch ZeRO-3 backward gather them as FSDP does.
LOOKUP_TABLES: tuple[str, ...] = ("embed", "pos_embed")


def _gathered(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> jax.Array:
    """``x`` constrained to ``shard``, then to ``full``: one AllGather (GSPMD)."""
    return jax.lax.with_sharding_constraint(jax.lax.with_sharding_constraint(x, shard), full)


@partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def gather_weight(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> jax.Array:
    """All-gather a ZeRO-3 weight ``x`` from its layout ``shard`` to ``full`` (sharding constraints:
    first pinned to ``shard``, so sharding propagation cannot move the gather across an
    optimization barrier before it); the backward constrains the gradient straight onto ``shard``
    -- the reduce-scatter, which XLA then places itself -- instead of the constraint's own
    transpose, which would first all-reduce the whole gradient onto ``full`` (over several ZeRO
    axes, e.g. fsdp and ep, as two chained all-reduces). x: any shape and dtype; same shape out."""
    return _gathered(x, shard, full)


def _gather_weight_fwd(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> tuple[jax.Array, None]:
    return gather_weight(x, shard, full), None


def _gather_weight_bwd(shard: NamedSharding, full: NamedSharding, _: None, ct: jax.Array) -> tuple[jax.Array]:
    return (jax.lax.with_sharding_constraint(ct, shard),)


gather_weight.defvjp(_gather_weight_fwd, _gather_weight_bwd)


@partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _gather_table(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> jax.Array:
    return _gathered(x, shard, full)


def _gather_table_fwd(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> tuple[jax.Array, Any]:
    return _gather_table(x, shard, full), x


def _gather_table_bwd(shard: NamedSharding, full: NamedSharding, x: jax.Array, ct: jax.Array) -> tuple[jax.Array]:
    w = _gathered(jax.lax.optimization_barrier(x), shard, full)  # the backward's own gather
    dx = jax.lax.with_sharding_constraint(ct, shard)  # the reduce-scatter (of model.embedding_lookup's sum)
    return (dx + jnp.zeros((), dx.dtype) * jnp.sum(w).astype(dx.dtype),)


_gather_table.defvjp(_gather_table_fwd, _gather_table_bwd)


def gather_table(x: jax.Array, shard: NamedSharding, full: NamedSharding) -> jax.Array:
    """All-gather a ZeRO-3 lookup table ``x`` (layout ``shard``) to ``full``, and again in the backward.

    Under ``zero3_gather='per_microbatch'`` (:meth:`Trainer.gather_weights`) the lookup tables
    (:data:`LOOKUP_TABLES`) are gathered like every other weight in the forward, and their
    backward gathers them again although the lookup's gradient needs only the token ids: PyTorch
    FSDP unshards a module's parameters in its pre-backward hook, because autograd writes the
    gradient into the unsharded parameter before it is reduce-scattered (Zhao et al. 2023,
    Sec. 3.2), and the planner prices that gather (``shardplan.cost.axes.dp``). The gradient is
    reduce-scattered onto ``shard`` and then reads the gathered table through ``+ 0 * sum(table)``
    (one reduction over the table, which XLA keeps: ``0 * x`` is not ``0`` for a non-finite ``x``),
    so the gather is not dead code. x: any shape and float dtype; same shape out.
    """
    return _gather_table(x, shard, full)


def local_grad_axes(sizes: dict[str, int], leaves: dict[str, LeafSharding], layout: Layout,
                    grad_sync: str) -> tuple[str, ...]:
    """The data axes over which :class:`Trainer` accumulates local, unreduced gradients and reduces
    them once per step; ``()`` selects the GSPMD accumulation (one reduction per microbatch).

    The axes are the leading batch axes (:data:`~shardplan.jax.mesh.BATCH_AXES`, size > 1) over
    which no parameter is sharded -- along them every device holds the whole parameter, so its
    gradient is a replicated reduction: all data axes for ZeRO-0/1/2, the HSDP replica axis
    ``dp`` for ZeRO-3 (``fsdp`` shards the parameters: FSDP reduce-scatters per microbatch), not
    ``ep`` when it shards the experts.

    Args:
        sizes: mesh axis sizes.
        leaves: the resolved parameter layouts.
        layout: the plan (``microbatches``, ``pp``).
        grad_sync: 'per_step' or 'per_microbatch' (:data:`GRAD_SYNC`).

    Returns:
        The axes, in mesh order; ``()`` when ``grad_sync='per_microbatch'``, ``microbatches == 1``
        (one reduction anyway), ``pp > 1`` run as GPipe (its scan runs the microbatches under
        GSPMD; the executed 1F1B is manual over these axes too and reduces once per step), ``cp > 1``
        (the gradient is also a partial sum over ``cp``, which must stay automatic for the
        attention's K/V gathers, so XLA would reduce over ``cp`` inside the loop anyway; the
        planner's dp x cp group is then reduced per microbatch) or no axis qualifies.
    """
    p = layout.parallel
    gpipe = p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] == "gpipe"
    if grad_sync != "per_step" or layout.microbatches == 1 or gpipe or p.cp > 1:
        return ()
    sharding = {a for leaf in leaves.values() for e in leaf.param_spec for a in _spec_axes(e)}
    out: list[str] = []
    for a in BATCH_AXES:
        if sizes[a] == 1:
            continue
        if a in sharding:
            break  # a prefix of the batch axes, so the local rows are a contiguous block
        out.append(a)
    return tuple(out)


def executed_zero3_gather(layout: Layout, leaves: dict[str, LeafSharding]) -> str | None:
    """The plan's ``zero3_gather`` ('per_microbatch' or 'per_step') when :class:`Trainer` executes
    it with explicit gathers (:meth:`Trainer.gather_weights`): ZeRO-3, ``pp == 1`` and at least one
    weight whose layout differs from its gathered layout; else None (no ZeRO-3 gathers, or the
    pipeline, which leaves them to XLA)."""
    p = layout.parallel
    sharded = any(leaf.gathered_spec != leaf.param_spec for leaf in leaves.values())
    return p.zero3_gather if p.zero_stage == 3 and p.pp == 1 and sharded else None


#: the layout fields the planner prices but the JAX runtime does not execute: the value it runs instead, and what
#: happens there (:func:`_warn_unexecuted` warns, :func:`as_executed` records what ran)
UNEXECUTED = {
    "offload_optimizer": (False, "the optimizer state stays in device memory"),
    "offload_activation_layers": (0, "saved activations stay in device memory"),
    "moe_dispatcher": ("alltoall", "tokens are dispatched with XLA's AllToAll"),
    "recompute_modules": (None, "its selective recompute follows its own checkpoint policy"),
}


def _warn_unexecuted(p: ParallelConfig) -> None:
    """Warn (logger ``shardplan.jax``; the CLI prints it as a note) about layout fields the planner prices but the
    JAX runtime does not execute (:data:`UNEXECUTED`)."""
    for field, (ran, what) in UNEXECUTED.items():
        value = getattr(p, field)
        if value != ran:
            shown = ",".join(value) if isinstance(value, tuple) else repr(value) if isinstance(value, str) else value
            log.warning(f"{field}={shown} is not executed by the JAX runtime: {what}")


def as_executed(p: ParallelConfig) -> ParallelConfig:
    """``p`` as the JAX runtime runs it: the fields of :data:`UNEXECUTED` at the values it runs (a run record of
    ``train --record`` must not claim an optimizer offload the run did not do: ``calibrate`` would fit its measured
    peak against a prediction without the optimizer state; breaker pass 54)."""
    return type(p).model_validate({**p.model_dump(), **{f: ran for f, (ran, _) in UNEXECUTED.items()}})


def _cp_attention(model: ModelSpec, p: ParallelConfig, requested: str) -> str:
    """The attention variant the trainer runs under cp (:func:`shardplan.jax.ring.runtime_cp_attention`; its note
    logged), checked with :func:`check_ulysses` when it is DeepSpeed-Ulysses."""
    mode, note = runtime_cp_attention(requested, p.pp, p.cp, p.cp_comm)
    if mode == "a2a":
        check_ulysses(model, p)
    if note:
        log.warning(note)
    return mode


def check_ulysses(model: ModelSpec, p: ParallelConfig) -> None:
    """The runtime's DeepSpeed-Ulysses (``cp_attention="a2a"``) shards the attention core's KV groups over tp x cp
    (:data:`shardplan.jax.rules.LOGICAL_AXIS_RULES` ``act_kv_heads_cp``), repeating a tp rank's KV heads up to cp when
    it has fewer (:func:`shardplan.jax.ring.ulysses_kv_copies`, as DeepSpeed does): it needs standard attention (not
    MLA), tp dividing the KV heads (no replication over tp) and a cp that divides each tp rank's query heads and
    divides or is divided by its KV heads (:func:`shardplan.parallel.a2a_cp_options` with KV replication).

    Raises:
        ConfigError: naming the field and the legal values.
    """
    from shardplan.parallel import a2a_cp_options
    if model.is_mla:
        raise ConfigError("cp_comm='a2a' with multi-head latent attention is not implemented by the JAX runtime (its "
                          "MLA attention gathers K/V or runs the ring); legal: cp_comm='ring'", field="cp_comm",
                          value="a2a", legal=["ring"])
    if model.kv_heads % p.tp:
        legal = divisors(model.kv_heads)
        raise ConfigError(f"tp={p.tp} with cp_comm='a2a': the JAX runtime's Ulysses needs tp dividing the "
                          f"{model.kv_heads} KV heads (it repeats KV heads over cp, not over tp); legal tp: "
                          f"{', '.join(map(str, legal))} (or cp_comm='ring')", field="tp", value=p.tp, legal=legal)
    legal = [c for c in a2a_cp_options(model, p.tp, replicates_kv=True) if c > 1]
    if p.cp not in legal:
        raise ConfigError(f"cp={p.cp} with cp_comm='a2a': the JAX runtime splits the {model.n_heads} query heads over "
                          f"tp x cp = {p.tp * p.cp}; legal cp with tp={p.tp}: {', '.join(map(str, legal)) or 'none'} "
                          f"(or cp_comm='ring')", field="cp", value=p.cp, legal=legal)


def check_expert_mesh(model: ModelSpec, p) -> None:
    """Refuse the MoE layouts XLA's SPMD partitioner aborts on (a CHECK failure that kills the process, not an
    exception): tp > 1 with 1 < ep < dp replicas under ZeRO 0-2, where the experts' ep axis is a strict
    sub-group of the replicated data axis (seen with jax 0.10 on CPU: spmd_partitioner_util.cc "Check failed:
    partition_group_list.num_replica_groups() * ..."; tests/test_jax_moe.py). ZeRO-3, ep = dp or tp = 1 compile.

    Raises:
        ConfigError: naming the layout and the ones that run.
    """
    if not model.is_moe or p.tp == 1 or p.ep == 1 or p.zero_stage == 3 or p.dp is None or p.ep >= p.dp:
        return
    raise ConfigError(f"the JAX runtime cannot compile ep={p.ep} < dp={p.dp} with tp={p.tp} under "
                      f"zero_stage={p.zero_stage} (XLA's SPMD partitioner aborts on the experts' sub-group of the "
                      f"replicated data axis); legal: ep={p.dp} (= dp), zero_stage=3, or tp=1; `shardplan estimate` "
                      "prices the layout as given", field="ep", value=p.ep, legal=[p.dp])


class Trainer:
    """A compiled training step for one (model, layout) on one mesh.

    Args:
        model: model shapes.
        layout: validated layout (degrees, ZeRO stage, microbatches, recompute).
        training: seq_len and global batch (sequences).
        cfg: optimizer and run settings.
        mesh: a mesh to use (default: :func:`~shardplan.jax.mesh.build_mesh` over all devices).
        devices: devices for the default mesh (only to deliberately use a subset).

    Attributes:
        mesh, rules, leaves (``{path: LeafSharding}``), param_shardings, opt_shardings (pytrees of
        NamedSharding), compiled (the AOT-compiled step), memory (per-device bytes from
        ``memory_analysis``), pipeline (the :class:`~shardplan.jax.pipeline.Pipeline` when
        ``pp > 1``, else None; its ``note`` describes the executed schedule), local_axes (the data
        mesh axes whose gradient reduction runs once per step, :func:`local_grad_axes`; ``()``: the
        GSPMD accumulation), zero3_gather (the plan's ``zero3_gather`` the step executes with explicit
        gathers, :meth:`gather_weights`: ZeRO-3 with ``pp == 1`` and a ZeRO-sharded weight; else
        None).

    Raises:
        ConfigError: an unexecutable plan for these devices (or a ``mesh`` of another shape), bad overrides,
            indivisible shapes
            (see :mod:`shardplan.jax.mesh` and :mod:`shardplan.jax.rules`), an unknown compute dtype or
            ``grad_sync``,
            or a vocabulary smaller than the byte tokenizer's 256 (only checked by :func:`train`).
    """

    def __init__(self, model: ModelSpec, layout: Layout, training: TrainingSpec, cfg: TrainConfig | None = None,
                 mesh: Mesh | None = None, devices: Sequence[Any] | None = None):
        check_runtime_support(model, layout.parallel.expert_tp, layout.parallel.tp)
        check_expert_mesh(model, layout.parallel)
        self.model_spec, self.layout, self.training = model, layout, training
        # the network's vocabulary: padded to the next multiple of tp, the least that splits the
        # vocab-parallel embedding and LM head evenly (shardplan.parallel.padded_vocab with
        # divisible_by=1, the planner's figure under the maxtext profile the runtime commands use);
        # the loss masks the padded logits, so the model is the same function of its first rows
        runtime_vocab = padded_vocab(model.vocab_size, layout.parallel.tp, 1)
        if runtime_vocab != model.vocab_size:
            model = model.model_copy(update={"vocab_size": runtime_vocab})
        self.net_spec = model
        _warn_unexecuted(layout.parallel)
        self.cfg = cfg = cfg or TrainConfig()
        if cfg.compute_dtype not in COMPUTE_DTYPES:
            raise ConfigError(f"compute_dtype={cfg.compute_dtype!r} is unknown; legal: {', '.join(COMPUTE_DTYPES)}",
                              field="compute_dtype", value=cfg.compute_dtype, legal=COMPUTE_DTYPES)
        self.compute_dtype = COMPUTE_DTYPES[cfg.compute_dtype]
        if cfg.grad_sync not in GRAD_SYNC:
            raise ConfigError(f"grad_sync={cfg.grad_sync!r} is unknown; legal: {', '.join(GRAD_SYNC)}",
                              field="grad_sync", value=cfg.grad_sync, legal=GRAD_SYNC)
        cp_attention = _cp_attention(model, layout.parallel, cfg.cp_attention)
        self.rules: ShardingRules = make_rules(layout, model, cfg.rule_overrides, cfg.param_overrides, cp_attention)
        self.mesh = mesh if mesh is not None else build_mesh(layout, devices)
        if dict(self.mesh.shape) != self.rules.sizes:
            raise ConfigError(f"the given mesh {dict(self.mesh.shape)} does not match the layout's mesh "
                              f"{self.rules.sizes}", field="mesh", value=dict(self.mesh.shape))
        # Q/K/V fused (one tp input-gradient reduction) unless K/V heads are replicated over tp
        self.fused_qkv = fuses_qkv(model, layout.parallel.tp)
        abstract = abstract_model(model, layout.parallel.recompute, self.fused_qkv)
        self.graphdef = nnx.split(abstract, nnx.Param)[0]
        # pp > 1: blocks stacked under "stages" (pp, L_max, ...) and run by a pipeline schedule
        self.pipeline: Pipeline | None = None
        if layout.parallel.pp > 1:
            self.pipeline = Pipeline(model, layout, self.mesh)
            log.info(self.pipeline.note)
        self.abstract_params, logical = layout_params(model, layout, layout.parallel.recompute)
        self.leaves: dict[str, LeafSharding] = param_shardings(self.abstract_params, logical, self.rules)
        ns = lambda spec: NamedSharding(self.mesh, spec)  # noqa: E731
        self.param_shardings = _unflatten_like(self.abstract_params, (ns(l.param_spec) for l in self.leaves.values()))
        self.opt_param_shardings = _unflatten_like(self.abstract_params,
                                                   (ns(l.opt_spec) for l in self.leaves.values()))
        self.tx = make_optimizer(cfg, decay_mask(self.abstract_params) if self.pipeline else None)
        abs_opt = jax.eval_shape(self.tx.init, self.abstract_params)
        self.opt_shardings = optax.tree_utils.tree_map_params(
            self.tx, lambda _, s: s, abs_opt, self.opt_param_shardings,
            transform_non_params=lambda _: ns(P()), is_leaf=_is_named)
        self.state_shardings = (self.param_shardings, self.opt_shardings)
        self.batch_sharding = batch_sharding(self.mesh)
        self.local_axes = local_grad_axes(self.rules.sizes, self.leaves, layout, cfg.grad_sync)
        self.zero3_gather = executed_zero3_gather(layout, self.leaves)
        self.replicated = ns(P())
        self._init = jax.jit(self._init_fn, out_shardings=self.state_shardings)
        self.compiled = self._compile()
        self.memory = self._memory()

    # ----- init --------------------------------------------------------------------------------
    def _init_fn(self, key: jax.Array) -> tuple[Any, Any]:
        model = Transformer(self.net_spec, nnx.Rngs(key), self.layout.parallel.recompute, self.fused_qkv)
        params = param_dict(model)
        if self.pipeline is not None:  # same values as pp = 1, stacked per stage
            params = stack_params(params, self.pipeline.placement, self.pipeline.boundary)
        return params, self.tx.init(params)

    def init_state(self, seed: int | None = None) -> tuple[Any, Any]:
        """Parameters and optimizer state, created directly in their shardings.

        The values depend only on the seed, not on the mesh (partitionable threefry RNG).
        """
        return self._init(jax.random.key(self.cfg.seed if seed is None else seed))

    # ----- step --------------------------------------------------------------------------------
    def loss(self, params: Any, tokens: jax.Array) -> jax.Array:
        """Mean next-token cross-entropy (nats/token) of tokens (b, s+1) under fp32 master params.

        With ``pp > 1`` the whole batch goes through the pipeline's forward (``layout.microbatches``
        microbatches, GPipe order); params are then the stacked dict. With ring attention (cp > 1)
        the inputs, the targets and the positions are permuted alike into the zig-zag layout
        (:func:`shardplan.jax.ring.sequence_order`); the mean over tokens is unchanged.
        """
        inputs, targets, positions = self._loss_inputs(tokens)
        if self.pipeline is not None:
            logits = self.pipeline.logits(params, inputs, self.compute_dtype, positions).astype(jnp.float32)
        else:
            p = jax.tree.map(lambda x: x.astype(self.compute_dtype), params)
            logits = nnx.merge(self.graphdef, p)(inputs, positions).astype(jnp.float32)
        return jnp.mean(token_nll(logits, targets, self._real_vocab()))

    def _real_vocab(self) -> int | None:
        """The model's vocabulary when the network's is padded to a multiple of tp, else None."""
        return self.model_spec.vocab_size if self.net_spec.vocab_size != self.model_spec.vocab_size else None

    def _loss_inputs(self, tokens: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array | None]:
        """``(inputs, targets, positions)`` of tokens (b, s+1): (b, s) each and the (s,) positions,
        permuted into ring attention's zig-zag order under cp > 1 (positions None otherwise)."""
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        order = sequence_order(inputs.shape[1])
        if order is None:
            return inputs, targets, None
        return inputs[:, order], targets[:, order], jnp.asarray(order)

    def _step_fn(self, state: tuple[Any, Any], batch: jax.Array) -> tuple[tuple[Any, Any], dict[str, jax.Array]]:
        params, opt_state = state
        zero = self.rules.zero_stage
        wsc = jax.lax.with_sharding_constraint
        if self.pipeline is not None and self.pipeline.executed != "gpipe":
            loss, grads = self._grads_pipeline(params, batch)
        elif self.local_axes:
            loss, grads = self._grads_reduced_per_step(params, batch)
        else:
            loss, grads = self._grads_gspmd(params, batch)
        if zero in (1, 2):
            # update in the optimizer-state layout: each device updates its slice
            params_u = wsc(params, self.opt_param_shardings)
            grads = wsc(grads, self.opt_param_shardings)
        else:
            params_u = params
        gnorm = optax.tree.norm(grads)
        updates, opt_state = self.tx.update(grads, opt_state, params_u)
        new_params = optax.apply_updates(params_u, updates)
        new_params = wsc(new_params, self.param_shardings)  # ZeRO-1/2: the param all-gather
        return (new_params, opt_state), {"loss": loss, "grad_norm": gnorm}

    def _microbatches(self, batch: jax.Array) -> jax.Array:
        """(B, s+1) -> (m, B/m, s+1); microbatch i = rows a*m+i, so each stays on its data device."""
        B, s1 = batch.shape
        m = self.layout.microbatches
        mb = batch.reshape(B // m, m, s1).swapaxes(0, 1)
        axes = tuple(a for a in BATCH_AXES if self.mesh.shape[a] > 1) or None
        return jax.lax.with_sharding_constraint(mb, NamedSharding(self.mesh, P(None, axes, None)))

    def _grads_pipeline(self, params: Any, batch: jax.Array) -> tuple[jax.Array, Any]:
        """Mean loss and gradients (in the gradient layout) by the executed 1F1B schedule
        (:meth:`shardplan.jax.pipeline.Pipeline.value_and_grad`, explicit per-stage vjp); the stage
        gradients are reduced over :attr:`local_axes` once per step inside the pipeline."""
        grad_sh = self.opt_param_shardings if self.rules.zero_stage >= 2 else self.param_shardings
        inputs, targets, positions = self._loss_inputs(batch)
        loss, grads = self.pipeline.value_and_grad(params, inputs, targets, self.compute_dtype, positions,
                                                   self._real_vocab(), self.local_axes)
        return loss, jax.lax.with_sharding_constraint(grads, grad_sh)

    def _grads_gspmd(self, params: Any, batch: jax.Array) -> tuple[jax.Array, Any]:
        """Mean loss and gradients under GSPMD. With ``m >= 2`` (and ``pp == 1``) every microbatch's
        gradient is constrained to the gradient layout inside the accumulation scan, so XLA reduces
        the data-parallel gradients once per microbatch (``grad_sync='per_microbatch'``, and ZeRO-3's
        shard-group ReduceScatter without HSDP replicas, which is what FSDP does)."""
        zero, m = self.rules.zero_stage, self.layout.microbatches
        grad_sh = self.opt_param_shardings if zero >= 2 else self.param_shardings
        wsc = jax.lax.with_sharding_constraint
        vg = jax.value_and_grad(self._microbatch_loss())
        weights = self._step_weights(params)
        if m == 1 or self.pipeline is not None:  # pp > 1 (GPipe): the pipeline's scan runs the microbatches
            loss, grads = vg(weights, batch)
            return loss, wsc(grads, grad_sh)

        def body(carry, tok):
            loss_acc, g_acc = carry
            loss, g = vg(*self._pin(weights, tok))
            g = wsc(g, grad_sh)
            g_acc = jax.tree.map(lambda a, b: a + b, g_acc, g)
            return (loss_acc + loss, wsc(g_acc, grad_sh)), None

        zeros = wsc(jax.tree.map(jnp.zeros_like, params), grad_sh)
        (loss, grads), _ = jax.lax.scan(body, (jnp.zeros((), jnp.float32), zeros), self._microbatches(batch))
        return loss / m, jax.tree.map(lambda g: g / m, grads)

    def _grads_reduced_per_step(self, params: Any, batch: jax.Array) -> tuple[jax.Array, Any]:
        """Mean loss and gradients with one data-parallel reduction per step (``grad_sync='per_step'``).

        ``jax.shard_map`` manual over :attr:`local_axes` only (the other mesh axes stay automatic)
        runs the accumulation scan on each device's rows: every device differentiates w.r.t. a
        *varying* copy of the parameters (``jax.lax.pcast``, a free cast whose transpose, the
        ``psum``, is never taken), so each microbatch's gradient stays a local partial sum and the
        scan has no collective (JAX docs, "Autodiff and sharding", manual mode: the reduction is
        placed by hand, once, after the accumulation). The per-device sums leave the map stacked
        along leading dimensions, one per manual axis (``(*manual sizes, *shape)``), and are summed
        under GSPMD by :meth:`_sum_stacked`. (A ``psum_scatter`` inside the map would make XLA
        all-gather the tp-sharded operands first, jax 0.10.2.)

        Returns:
            (loss, grads): the global mean loss (scalar, fp32) and mean gradients in the gradient
            layout (the optimizer-state layout for ZeRO >= 1, the parameter layout for ZeRO-0).
        """
        axes = self.local_axes
        n = math.prod(self.mesh.shape[a] for a in axes) * self.layout.microbatches
        stacked = _unflatten_like(self.abstract_params, (P(*axes) for _ in self.leaves))
        run = jax.shard_map(self._local_accumulation(n), mesh=self.mesh, in_specs=(P(), P(None, axes, None)),
                            out_specs=(P(), stacked), axis_names=set(axes))
        loss, local = run(params, self._microbatches(batch))
        return loss, self._sum_stacked(local)

    def _local_accumulation(self, n: int) -> Callable[[Any, jax.Array], tuple[jax.Array, Any]]:
        """The per-device program of :meth:`_grads_reduced_per_step`: ``body(params, mb)`` with
        ``mb`` the local ``(m, b, s+1)`` microbatches. Returns the global mean loss (one scalar
        ``psum``) and this device's gradient sum divided by ``n`` (microbatches x manual devices),
        each leaf with one leading size-1 dimension per manual axis."""
        axes, zero = self.local_axes, self.rules.zero_stage
        vg = jax.value_and_grad(self._microbatch_loss())
        inner = [_strip(leaf.opt_spec if zero == 3 else leaf.param_spec, axes) for leaf in self.leaves.values()]

        def body(params: Any, mb: jax.Array) -> tuple[jax.Array, Any]:
            ambient = jax.sharding.get_abstract_mesh()
            grad_sh = _unflatten_like(params, (NamedSharding(ambient, s) for s in inner))
            wsc = jax.lax.with_sharding_constraint
            # differentiate w.r.t. the local copy (ZeRO-3 per_step: of the gathered weights)
            local = jax.lax.pcast(self._step_weights(params), axes, to="varying")

            def step(carry, tok):
                loss_acc, g_acc = carry
                loss, g = vg(*self._pin(local, tok))
                g_acc = jax.tree.map(lambda a, b: a + b, g_acc, wsc(g, grad_sh))
                return (loss_acc + loss, wsc(g_acc, grad_sh)), None

            init = (jax.lax.pcast(jnp.zeros((), jnp.float32), axes, to="varying"),
                    wsc(jax.tree.map(jnp.zeros_like, local), grad_sh))
            (loss, grads), _ = jax.lax.scan(step, init, mb)
            lead = (None,) * len(axes)
            return jax.lax.psum(loss, axes) / n, jax.tree.map(lambda g: (g / n)[lead], grads)

        return body

    # ----- ZeRO-3 gathers (pp == 1) -----------------------------------------------------------------
    def gather_weights(self, params: Any) -> Any:
        """ZeRO-3: every weight constrained to its gathered layout (``LeafSharding.gathered_spec``:
        the ZeRO axes dropped, the model-parallel ones kept), which GSPMD executes as one AllGather
        per weight at this point -- the embedding table included, as FSDP gathers it (left to
        itself XLA all-to-alls the token ids to the sharded table instead). Inside a partially
        manual ``jax.shard_map`` the manual axes are left out. Each weight goes through
        :func:`gather_weight`, with ``'per_microbatch'`` the lookup tables (:data:`LOOKUP_TABLES`)
        through :func:`gather_table`, so their backward gathers them too. The identity when
        :attr:`zero3_gather` is None. params: the parameter pytree (any dtype, tree order of
        :attr:`leaves`), same shapes out."""
        if self.zero3_gather is None:
            return params
        manual = manual_axes()
        mesh = context_mesh(self.mesh)
        out = []
        for x, leaf in zip(jax.tree_util.tree_leaves(params), self.leaves.values()):
            shard, full = (NamedSharding(mesh, _strip(spec, manual)) for spec in (leaf.param_spec, leaf.gathered_spec))
            if self.zero3_gather == "per_microbatch" and leaf.path in LOOKUP_TABLES:
                out.append(gather_table(x, shard, full))  # the backward reads no table: gather it anyway
            else:
                out.append(gather_weight(x, shard, full))
        return _unflatten_like(params, out)

    def _step_weights(self, params: Any) -> Any:
        """The weights the accumulation loop differentiates: gathered once, before the loop, for
        ``zero3_gather='per_step'``; else ``params`` (``'per_microbatch'`` gathers inside
        :meth:`_microbatch_loss`)."""
        return self.gather_weights(params) if self.zero3_gather == "per_step" else params

    def _pin(self, params: Any, tok: jax.Array) -> tuple[Any, jax.Array]:
        """``(params, tok)`` for one microbatch; for ``zero3_gather='per_microbatch'`` passed
        through one ``jax.lax.optimization_barrier``, so the weights depend on the microbatch and
        XLA cannot hoist their gathers out of the accumulation loop (loop-invariant code motion)."""
        if self.zero3_gather == "per_microbatch":
            return jax.lax.optimization_barrier((params, tok))
        return params, tok

    def _microbatch_loss(self) -> Callable[[Any, jax.Array], jax.Array]:
        """The loss the accumulation differentiates per microbatch: :meth:`loss`, or for
        ``zero3_gather='per_microbatch'`` the loss of the gathered weights under ``jax.checkpoint``
        with :meth:`_regather_policy`: the forward gathers every weight, the backward gathers it
        again (FSDP's reshard-after-forward), nothing else is recomputed. ``prevent_cse=False``:
        XLA does not merge the backward's gathers with the forward's anyway (collectives carry
        distinct channel ids; checked by tests/test_validation_xla.py), and JAX's CSE barrier over
        every saved activation would hide their shardings from sharding propagation, which then
        re-lays them out (e.g. MoE dispatch buffers all-gathered over ep in the backward instead of
        the planned all-to-all)."""
        if self.zero3_gather != "per_microbatch":
            return self.loss

        def loss(params: Any, tokens: jax.Array) -> jax.Array:
            return self.loss(self.gather_weights(params), tokens)

        return jax.checkpoint(loss, policy=self._regather_policy, prevent_cse=False)

    @staticmethod
    def _regather_policy(prim: Any, *_: Any, **params: Any) -> bool:
        """``jax.checkpoint`` policy: every value may be saved for the backward except the outputs
        of :func:`gather_weight` (a ``custom_vjp_call`` recognised by its backward rule), which the
        backward recomputes -- gathers again -- from the saved shards.
        (``jax.checkpoint_policies.save_anything_except_these_names`` cannot express it: it saves
        everything in jax 0.10.2, and a ``checkpoint_name`` would only move the save to the
        gather's input.)"""
        if is_sp_gather(prim, params):
            return False  # sequence parallelism's gathered block input: gathered again too (column_parallel)
        return not (prim.name == "custom_vjp_call" and getattr(params.get("bwd"), "f", None) is _gather_weight_bwd)

    def _sum_stacked(self, stacked: Any) -> Any:
        """Sum the per-device gradients ``(*manual sizes, *shape)`` over their leading dimensions,
        under GSPMD: first over the manual axes that shard the leaf's optimizer state (ZeRO-1/2:
        a ReduceScatter onto the ZeRO shard), then over the rest (ZeRO-0, HSDP replicas: an
        AllReduce, of the shard when it follows a ReduceScatter)."""
        axes, zero = self.local_axes, self.rules.zero_stage
        wsc = jax.lax.with_sharding_constraint
        out = []
        for g, leaf in zip(jax.tree_util.tree_leaves(stacked), self.leaves.values()):
            target = leaf.opt_spec if zero >= 1 else leaf.param_spec
            used = {a for e in target for a in _spec_axes(e)}
            scatter = tuple(i for i, a in enumerate(axes) if a in used)
            if scatter:
                rest = [a for a in axes if a not in used]
                g = wsc(jnp.sum(g, axis=scatter), NamedSharding(self.mesh, P(*rest, *target)))
            g = jnp.sum(g, axis=tuple(range(g.ndim - len(leaf.shape))))
            out.append(wsc(g, NamedSharding(self.mesh, target)))
        return _unflatten_like(stacked, out)

    def _abstract_state(self) -> tuple[Any, Any]:
        abs_opt = jax.eval_shape(self.tx.init, self.abstract_params)
        to_sds = lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s)  # noqa: E731
        return (jax.tree.map(to_sds, self.abstract_params, self.param_shardings),
                jax.tree.map(to_sds, abs_opt, self.opt_shardings))

    def _compile(self) -> Any:
        jitted = jax.jit(self._step_fn, in_shardings=(self.state_shardings, self.batch_sharding),
                         out_shardings=(self.state_shardings, self.replicated), donate_argnums=(0,))
        batch = jax.ShapeDtypeStruct((self.training.global_batch_size, self.training.seq_len + 1), jnp.int32,
                                     sharding=self.batch_sharding)
        # MoE with a capacity factor: GShard dispatch with an AllToAll over ep (dropless: dense dispatch)
        # ZeRO-2/3: the embedding gradient built per device and reduce-scattered once, as FSDP does
        # (model.embedding_lookup; a vocab-parallel table always is)
        local_lookup = self.zero3_gather is not None or self.rules.zero_stage == 2
        with activation_sharding(self.mesh, self.rules), moe_capacity(self.training.moe_capacity_factor), \
                local_lookup_gradients(local_lookup):
            return jitted.lower(self._abstract_state(), batch).compile()

    def _memory(self) -> dict[str, int]:
        try:
            ma = self.compiled.memory_analysis()
        except Exception:  # backend without memory analysis
            return {}
        if ma is None:
            return {}
        out = {k: int(getattr(ma, f"{k}_size_in_bytes", 0)) for k in ("argument", "output", "temp", "alias")}
        out["peak"] = out["argument"] + out["output"] + out["temp"] - out["alias"]
        return out

    def step(self, state: tuple[Any, Any], batch: jax.Array) -> tuple[tuple[Any, Any], dict[str, jax.Array]]:
        """One optimizer step; ``state`` is donated. batch: (B, seq_len+1) int32 on :attr:`batch_sharding`."""
        return self.compiled(state, batch)

    def device_memory(self) -> dict[str, Any]:
        """Per-device memory: ``device.memory_stats()`` when the backend has it (bytes in use / peak),
        else the compiled step's ``memory_analysis`` (same for every device)."""
        stats = {}
        for d in self.mesh.local_devices:
            try:
                ms = d.memory_stats()
            except Exception:
                ms = None
            if ms:
                stats[str(d.id)] = int(ms.get("peak_bytes_in_use", ms.get("bytes_in_use", 0)))
        if stats:
            return {"source": "memory_stats", "bytes": stats}
        return {"source": "memory_analysis", "bytes": self.memory.get("peak", 0), "breakdown": self.memory}

    def sharding_rows(self) -> list[dict[str, Any]]:
        """The sharding table (see :func:`shardplan.jax.rules.sharding_rows`)."""
        return sharding_rows(self.leaves, self.rules.sizes)


def _scalar(x: jax.Array) -> float:
    return float(np.asarray(x.addressable_data(0)))


def train(model: ModelSpec, layout: Layout, training: TrainingSpec, cfg: TrainConfig | None = None,
          data: Sequence[str | os.PathLike] | PackedBatches | None = None, mesh: Mesh | None = None,
          devices: Sequence[Any] | None = None, metrics_path: str | os.PathLike | None = None,
          on_step: Callable[[dict[str, Any]], None] | None = None, trainer: Trainer | None = None,
          checkpoint_dir: str | os.PathLike | None = None, save_every: int | None = None, resume: bool = False
          ) -> list[dict[str, Any]]:
    """Train until step ``cfg.steps`` and return the per-step metrics.

    Args:
        model, layout, training, cfg, mesh, devices: as :class:`Trainer`.
        data: text files/directories, a :class:`PackedBatches`, or ``None`` for the stdlib corpus.
        metrics_path: write one JSON object per step (process 0 only). On resume the records of
            steps after the checkpoint are dropped and the new ones appended.
        on_step: called with each step's metrics (e.g. a progress bar).
        trainer: reuse an already compiled trainer.
        checkpoint_dir: save checkpoints here with Orbax (:mod:`shardplan.jax.checkpoint`):
            parameters, optimizer state, step / data position and a JSON with the plan, model and
            per-leaf logical axes.
        save_every: also save after every ``save_every`` steps (default: only after the last step).
        resume: continue from the latest checkpoint in ``checkpoint_dir``, restored into this
            layout's shardings (any mesh; the step counter and data position continue, the
            learning-rate schedule is evaluated at the restored step with this run's ``cfg.steps``).

    Returns:
        ``[{"step", "loss", "grad_norm", "tokens_per_s", "step_time_s", "memory"}, ...]`` for the
        steps run by this call (``step`` counts from the start of training, so a resumed run starts
        at the checkpoint's step + 1); ``loss`` in nats/token, ``tokens_per_s`` global (all
        devices), ``memory`` as :meth:`Trainer.device_memory`.

    Raises:
        ConfigError: see :class:`Trainer`; a vocabulary below 256 (byte tokens); ``resume`` without
            ``checkpoint_dir`` or with no checkpoint in it; a checkpoint of another model shape or
            data setting (seed, seq_len, global batch); a checkpoint already at or past
            ``cfg.steps``; ``save_every < 1``; a fresh run into a directory that already holds
            checkpoints.
    """
    _check_train_args(model, save_every)
    run_cfg = trainer.cfg if trainer is not None else (cfg or TrainConfig())
    ckpt, start = _open_checkpoints(checkpoint_dir, resume, model, training, run_cfg)
    try:
        tr = trainer or Trainer(model, layout, training, cfg, mesh, devices)
        batches = data if isinstance(data, PackedBatches) else PackedBatches(
            load_tokens(data), training.seq_len, training.global_batch_size, tr.cfg.seed)
        sources = None if data is None or isinstance(data, PackedBatches) else [str(d) for d in data]
        state = _initial_state(tr, ckpt, start, resume)
    except BaseException:
        if ckpt is not None:
            ckpt.close()
        raise
    mem = tr.device_memory()
    fh = _open_metrics(metrics_path, start) if metrics_path and jax.process_index() == 0 else None
    sinks = _StepSinks(fh, ckpt, save_every, sources, on_step)
    try:
        return _run_steps(tr, state, batches, range(start, tr.cfg.steps), training, mem, sinks)
    finally:
        sinks.close()


def _check_train_args(model: ModelSpec, save_every: int | None) -> None:
    """Raise ConfigError for a vocabulary below the byte tokenizer's 256 or ``save_every < 1``."""
    if model.vocab_size < 256:
        raise ConfigError(f"vocab_size={model.vocab_size} is smaller than the byte tokenizer's 256 tokens; "
                          f"use --scale-down or a model with vocab_size >= 256", field="vocab_size",
                          value=model.vocab_size)
    if save_every is not None and save_every < 1:
        raise ConfigError(f"save_every={save_every} must be >= 1 (or unset: save after the last step)",
                          field="save_every", value=save_every)


def _initial_state(tr: Trainer, ckpt: Any, start: int, resume: bool) -> tuple[Any, Any]:
    """The (parameters, optimizer state) to start from: restored from step ``start`` of ``ckpt``
    when resuming, else freshly initialised."""
    if ckpt is not None and resume:
        state, _ = ckpt.restore(tr, start)
        log.info("resumed from step %d of %s", start, ckpt.directory)
        return state
    return tr.init_state()


@dataclass
class _StepSinks:
    """Where each step's record goes: the JSONL metrics file (process 0), checkpoints, a callback.

    Attributes:
        fh: open metrics file or None.
        ckpt: :class:`~shardplan.jax.checkpoint.Checkpointer` or None.
        save_every: also save every ``save_every`` steps (None: only after the last step).
        sources: the data paths recorded in the checkpoint (None for packed / default data).
        on_step: called with each record.
    """

    fh: Any
    ckpt: Any
    save_every: int | None
    sources: list[str] | None
    on_step: Callable[[dict[str, Any]], None] | None

    def emit(self, rec: dict[str, Any], state: tuple[Any, Any], tr: Trainer, last: bool) -> None:
        """Write ``rec``, save ``state`` when due (``last`` step or every ``save_every``), call back."""
        if self.fh:
            self.fh.write(json.dumps(rec) + "\n")
            self.fh.flush()
        step = rec["step"]
        if self.ckpt is not None and (last or (self.save_every and step % self.save_every == 0)):
            self.ckpt.save(step, state, tr, self.sources)  # before the next step donates the state
        if self.on_step:
            self.on_step(rec)

    def close(self) -> None:
        """Close the metrics file and the checkpointer (which waits for pending asynchronous saves,
        also when a step failed)."""
        if self.fh:
            self.fh.close()
        if self.ckpt is not None:
            self.ckpt.close()


def _run_steps(tr: Trainer, state: tuple[Any, Any], batches: PackedBatches, steps: range, training: TrainingSpec,
               mem: dict[str, Any], sinks: _StepSinks) -> list[dict[str, Any]]:
    """Run the 0-based steps ``steps`` (the last one is step ``tr.cfg.steps``), emitting each record
    to ``sinks``. Returns the records (see :func:`train`)."""
    tokens = training.global_batch_size * training.seq_len
    out: list[dict[str, Any]] = []
    for i in steps:
        batch = shard_batch(batches.batch(i), tr.mesh)
        t0 = time.perf_counter()
        state, met = tr.step(state, batch)
        loss = _scalar(met["loss"])
        dt = time.perf_counter() - t0
        rec = {"step": i + 1, "loss": loss, "grad_norm": _scalar(met["grad_norm"]),
               "tokens_per_s": tokens / dt if dt > 0 else math.inf, "step_time_s": dt, "memory": mem}
        out.append(rec)
        sinks.emit(rec, state, tr, last=i + 1 == tr.cfg.steps)
    return out


def _open_checkpoints(checkpoint_dir: str | os.PathLike | None, resume: bool, model: ModelSpec,
                      training: TrainingSpec, cfg: TrainConfig) -> tuple[Any, int]:
    """The :class:`~shardplan.jax.checkpoint.Checkpointer` (or None) and the step to start from,
    checked before anything is compiled (see :func:`train` for the errors)."""
    if checkpoint_dir is None:
        if resume:
            raise ConfigError("resume needs a checkpoint directory (--checkpoint-dir PATH)", field="checkpoint_dir",
                              value=None, legal=["a directory written by a run with --checkpoint-dir"])
        return None, 0
    from shardplan.jax.checkpoint import Checkpointer, check_data, check_model

    if resume and not os.path.isdir(checkpoint_dir):
        raise ConfigError(f"checkpoint_dir={str(checkpoint_dir)!r} does not exist: nothing to resume from",
                          field="checkpoint_dir", value=str(checkpoint_dir),
                          legal=["a directory written by a run with --checkpoint-dir"])
    ckpt = Checkpointer(checkpoint_dir)
    if not resume:
        if ckpt.steps():
            ckpt.close()
            raise ConfigError(f"checkpoint_dir={str(checkpoint_dir)!r} already holds checkpoints (steps "
                              f"{ckpt.steps()}); pass --resume to continue from step "
                              f"{ckpt.latest_step()} or use an empty directory", field="checkpoint_dir",
                              value=str(checkpoint_dir))
        return ckpt, 0
    try:
        meta = ckpt.read_meta()  # ConfigError when the directory holds no checkpoint
        check_model(meta, model)
        check_data(meta, cfg.seed, training.seq_len, training.global_batch_size)
    except BaseException:
        ckpt.close()
        raise
    start = int(meta["step"])
    if start >= cfg.steps:
        ckpt.close()
        raise ConfigError(f"steps={cfg.steps}: the checkpoint in {checkpoint_dir} is already at step {start}; "
                          f"steps is the total to reach, so pass steps > {start}", field="steps", value=cfg.steps,
                          legal=[f"> {start}"])
    return ckpt, start


def _open_metrics(path: str | os.PathLike, start: int) -> Any:
    """Open the JSONL metrics file: truncated for a fresh run; on resume (start > 0) the records of
    steps <= start are kept and new ones appended."""
    if start == 0 or not os.path.exists(path):
        return open(path, "w")
    with open(path) as f:
        keep = [line for line in f if line.strip() and json.loads(line).get("step", 0) <= start]
    fh = open(path, "w")
    fh.writelines(line if line.endswith("\n") else line + "\n" for line in keep)
    fh.flush()
    return fh


def initialize_distributed(coordinator_address: str | None = None, num_processes: int | None = None,
                           process_id: int | None = None) -> bool:
    """Join a multi-process run through :func:`jax.distributed.initialize` (no home-made layer).

    Arguments default to the environment variables ``JAX_COORDINATOR_ADDRESS``,
    ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID``; with none of them set and ``num_processes`` unset
    nothing happens (single process). On CPU, cross-process collectives use gloo.

    Returns:
        True when a distributed runtime was initialised.

    Raises:
        ConfigError: an incomplete set of arguments (names the missing one).
    """
    addr = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    n = num_processes if num_processes is not None else (
        int(os.environ["JAX_NUM_PROCESSES"]) if os.environ.get("JAX_NUM_PROCESSES") else None)
    pid = process_id if process_id is not None else (
        int(os.environ["JAX_PROCESS_ID"]) if os.environ.get("JAX_PROCESS_ID") else None)
    if addr is None and n is None and pid is None:
        return False
    if n is not None and n <= 1 and addr is None:
        return False
    missing = [k for k, v in (("coordinator_address", addr), ("num_processes", n), ("process_id", pid)) if v is None]
    if missing:
        raise ConfigError(f"multi-process run needs --coordinator-address, --num-processes and --process-id "
                          f"(or JAX_COORDINATOR_ADDRESS/JAX_NUM_PROCESSES/JAX_PROCESS_ID); missing: "
                          f"{', '.join(missing)}", field=missing[0], value=None)
    if pid < 0 or pid >= n:
        raise ConfigError(f"process_id={pid} must be in 0..{n - 1} for num_processes={n}", field="process_id",
                          value=pid, legal=range(n))
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except Exception:  # option removed/renamed in a future JAX
        pass
    jax.distributed.initialize(coordinator_address=addr, num_processes=n, process_id=pid)
    return True


__all__ = ["GRAD_SYNC", "LOOKUP_TABLES", "TrainConfig", "Trainer", "train", "make_optimizer", "initialize_distributed",
           "executed_zero3_gather", "gather_table", "gather_weight", "local_grad_axes"]
