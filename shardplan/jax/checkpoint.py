"""Checkpoint and resume training with Orbax, onto any mesh.

A checkpoint is one Orbax step directory (``<dir>/<step>/``, step = optimizer steps completed)
written by :class:`orbax.checkpoint.CheckpointManager` with two items:

``state``
    ``{"params": ..., "opt_state": ...}`` saved with ``ocp.args.StandardSave``: every leaf is a
    *global* ``jax.Array`` (each process writes the shards it owns; the stored array has the global
    shape whatever the layout was).
``meta``
    a small JSON (``ocp.args.JsonSave``, see :func:`checkpoint_meta`): format version, step, the
    plan (``ParallelConfig`` dict, stage split, the layer in each stacked slot ``slot_layers``,
    microbatches), the mesh and strategy it ran on, the
    model spec (name and every field), seq_len / global batch, the data position and seed, the
    optimizer settings and, per parameter leaf, its global shape, dtype and **logical axes** (not
    PartitionSpecs: a PartitionSpec only means something on the mesh it was written for).

Resume (:meth:`Checkpointer.restore`) computes the target ``NamedSharding`` of every leaf from the
*current* plan and rules (:class:`~shardplan.jax.train.Trainer`'s ``state_shardings``) and has
Orbax read straight into them (``StandardRestore`` with ``jax.ShapeDtypeStruct(shape, dtype,
sharding=...)`` targets), so a checkpoint written under ``fsdp=8`` restores onto ``dp=4 x tp=2``
without a host gather. A mesh change is allowed and logged.

Pipeline layout changes: with ``pp > 1`` the blocks are stacked under ``stages/...`` with shape
``(pp, S, ...)`` (:mod:`shardplan.jax.pipeline`; the layer in each slot is the checkpoint's
``slot_layers``: contiguous per stage, or interleaved over the virtual stages), with ``pp = 1`` they
are ``layers/<i>/...``. When the saved and current stacking differ (a pp change, another
``pp_layers`` split, or interleaving switched on or off), the
checkpoint is read in its own structure -- each leaf sharded like its current counterpart minus the
stacking dimensions -- and then converted (unstacked with the saved split, restacked with
:func:`~shardplan.jax.pipeline.stack_params` for the current one) by one jitted function whose
``out_shardings`` are the current layout. Parameters and both Adam moments are converted; the
zero padding slots of uneven splits are dropped / re-created as zeros (exact: they never change).

Q/K/V layout changes: the runtime holds each attention's Q/K/V projection fused (``attn/wqkv``)
except under KV-head replication (tp > n_kv_heads: ``wq``/``wk``/``wv``, see
:func:`~shardplan.jax.model.fuses_qkv`). A checkpoint written in the other layout is read in its own
and converted in the same jitted function (:func:`convert_qkv`; parameters and Adam moments, exact).

Data position: the data pipeline (:class:`~shardplan.jax.data.PackedBatches`) is a deterministic
function of (seed, seq_len, global batch, step) that every process evaluates for the *global*
batch, so there is no per-dp-rank state: resuming at step ``n`` reads batch ``n`` on any dp degree.
Changing the seed, seq_len or global batch on resume is refused (ConfigError) because the
position would then mean another place in the data.

Errors are :class:`~shardplan.errors.ConfigError` naming the field, the value and the legal values:
a missing/empty checkpoint directory, a different model shape (listing the differing fields), a
changed data setting, or a checkpoint without the expected leaves.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import jax
import numpy as np
import optax
import orbax.checkpoint as ocp
from jax.sharding import NamedSharding, PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.mesh import describe
from shardplan.jax.model import abstract_model, fuse_qkv, logical_axes, param_dict, split_qkv
from shardplan.jax.pipeline import (BOUNDARY, STAGES, Placement, decay_mask, slot_layers, stack_logical, stack_params,
                                    unstack_boundary)
from shardplan.jax.rules import LeafSharding, param_shardings, path_str
from shardplan.specs.model import ModelSpec

log = logging.getLogger("shardplan.jax")

#: Version of the checkpoint layout: 2 holds Q/K/V and SwiGLU gate/up fused (``attn/wqkv``,
#: ``mlp/w_gate_up``; format 1 had ``wq``/``wk``/``wv`` and ``w_gate``/``w_up`` everywhere).
FORMAT = 2
#: ModelSpec fields that do not change any parameter shape (ignored by :func:`check_model`).
NON_SHAPE_FIELDS = ("name", "source")
#: Settings that fix what "data position n" means (must match on resume).
DATA_FIELDS = ("seed", "seq_len", "global_batch_size")


# ----- metadata ------------------------------------------------------------------------------------
def checkpoint_meta(trainer: Any, step: int, data_sources: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON saved next to the arrays.

    Args:
        trainer: the :class:`~shardplan.jax.train.Trainer` that produced the state.
        step: optimizer steps completed (= batches consumed, the data position).
        data_sources: the ``--data`` paths (informational; ``None`` = the default corpus).

    Returns:
        A JSON-serialisable dict (see the module docstring for the keys).
    """
    cfg = trainer.cfg
    opt = {k: v for k, v in asdict(cfg).items() if k not in ("rule_overrides", "param_overrides", "seed")}
    return {
        "format": FORMAT,
        "step": int(step),
        "model": trainer.model_spec.model_dump(mode="json"),
        "plan": trainer.layout.parallel.model_dump(mode="json"),
        "stage_layers": [int(n) for n in trainer.layout.stage_layers],
        "slot_layers": (slot_layers(trainer.pipeline.placement).tolist() if trainer.pipeline is not None else None),
        "stacked": trainer.pipeline is not None,
        "boundary": trainer.pipeline is not None and trainer.pipeline.boundary,
        "microbatches": int(trainer.layout.microbatches),
        "mesh": {a: int(n) for a, n in trainer.mesh.shape.items()},
        "mesh_description": describe(trainer.mesh),
        "strategy": trainer.rules.strategy,
        "rule_overrides": {k: list(v) for k, v in cfg.rule_overrides.items()},
        "param_overrides": [repr(o) for o in cfg.param_overrides],
        "data": {"position": int(step), "seed": int(cfg.seed), "seq_len": int(trainer.training.seq_len),
                 "global_batch_size": int(trainer.training.global_batch_size),
                 "sources": [str(Path(s).resolve()) for s in data_sources] if data_sources else None},
        "optimizer": opt,
        "leaves": {path: {"shape": list(leaf.shape), "dtype": str(leaf.dtype),
                          "logical": list(leaf.logical) if leaf.logical else None}
                   for path, leaf in trainer.leaves.items()},
        "versions": {"jax": jax.__version__, "orbax-checkpoint": getattr(ocp, "__version__", "?")},
    }


def check_model(meta: Mapping[str, Any], model: ModelSpec) -> None:
    """Refuse a checkpoint of another model shape.

    Raises:
        ConfigError: a field of the saved model spec that changes parameter shapes (every field but
            ``name`` and ``source``) differs from ``model``'s; the message lists each differing field
            as ``field: saved -> current``.
    """
    saved, cur = meta["model"], model.model_dump(mode="json")
    diff = {k: (saved.get(k), cur.get(k)) for k in sorted(set(saved) | set(cur))
            if k not in NON_SHAPE_FIELDS and saved.get(k) != cur.get(k)}
    if diff:
        fields = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in diff.items())
        raise ConfigError(f"the checkpoint at step {meta['step']} holds model {saved.get('name')!r} whose shapes "
                          f"differ from the current model {model.name!r} ({fields}); resume with the same model "
                          f"(and the same --scale-down settings)", field=next(iter(diff)),
                          value={k: b for k, (a, b) in diff.items()}, legal=[{k: a for k, (a, b) in diff.items()}])
    if saved.get("name") != cur.get("name"):
        log.warning("checkpoint model %r resumed as %r (same shapes)", saved.get("name"), cur.get("name"))


def check_data(meta: Mapping[str, Any], seed: int, seq_len: int, global_batch_size: int) -> None:
    """Refuse a resume whose data position would point elsewhere in the data.

    Raises:
        ConfigError: seed, seq_len or global_batch_size differ from the saved ones (legal: the saved
            value).
    """
    saved = meta["data"]
    for name, cur in zip(DATA_FIELDS, (seed, seq_len, global_batch_size)):
        if saved[name] != cur:
            raise ConfigError(f"{name}={cur} differs from the checkpoint's {name}={saved[name]}: the data position "
                              f"(step {saved['position']} of the packed, seeded stream) would not continue the run; "
                              f"resume with {name}={saved[name]}", field=name, value=cur, legal=[saved[name]])


def check_data_sources(meta: Mapping[str, Any], data_sources: Sequence[str] | None) -> None:
    """Refuse a resume on another corpus: the data position counts batches of the packed stream of the ``--data``
    files (or the default corpus), so other files put step n elsewhere (breaker pass 54: a resume with another
    ``--data`` ran on with exit 0 while seed, seq_len and batch changes were refused). Paths compare resolved.

    Raises:
        ConfigError: the files differ from the saved ones (legal: the saved list, or no --data for the default).
    """
    saved = meta["data"].get("sources")
    saved_set = [str(Path(s).resolve()) for s in saved] if saved else None
    cur = [str(Path(s).resolve()) for s in data_sources] if data_sources else None
    if saved_set != cur:
        shown = ", ".join(saved) if saved else "the default corpus, no --data"
        raise ConfigError(f"--data {', '.join(cur) if cur else '(none: the default corpus)'} differs from the "
                          f"checkpoint's data ({shown}): the data position (step {meta['data']['position']} of the "
                          f"packed stream) would not continue the run; resume with the same --data files",
                          field="data", value=cur, legal=[saved])


# ----- pipeline stacking -------------------------------------------------------------------------
def unstack_params(params: Mapping[str, Any], placement: Placement, tied: bool = False) -> dict[str, Any]:
    """Inverse of :func:`~shardplan.jax.pipeline.stack_params`: ``stages`` ``(pp, S, ...)`` back to
    ``layers/<i>`` by ``placement`` (stage_layers or a slot table; padding slots dropped), the
    stacked embedding / LM head / final norm (``boundary``, present under the executed 1F1B) back to
    ``embed``, ``lm_head`` (unless ``tied``) and ``final_norm``
    (:func:`~shardplan.jax.pipeline.unstack_boundary`); other entries kept."""
    if BOUNDARY in params:
        params = unstack_boundary(params, tied)
    stages = params[STAGES]
    layers = {int(i): jax.tree.map(lambda a, k=k, j=j: a[k, j], stages)
              for (k, j), i in np.ndenumerate(slot_layers(placement)) if i >= 0}
    out = {key: v for key, v in params.items() if key != STAGES}
    out["layers"] = dict(sorted(layers.items()))
    return out


def saved_placement(meta: Mapping[str, Any]) -> Placement:
    """The layer placement of a stacked checkpoint: its ``slot_layers`` table, or (checkpoints
    written before it was recorded) the contiguous ``stage_layers``."""
    if meta.get("slot_layers"):
        return tuple(tuple(int(i) for i in row) for row in meta["slot_layers"])
    return tuple(int(n) for n in meta["stage_layers"])


def saved_boundary(meta: Mapping[str, Any]) -> bool:
    """Whether a checkpoint holds the embedding / LM head / final norm stacked over pp
    (``boundary/...``, written under the executed 1F1B or interleaved schedule)."""
    return any(path.startswith(f"{BOUNDARY}/") for path in meta["leaves"])


def saved_fused_qkv(meta: Mapping[str, Any]) -> bool:
    """Whether a checkpoint holds each attention's Q/K/V fused: False when it has separate K
    weights (``attn/wk``, written under KV-head replication), else True (MLA has neither)."""
    return not any(path.endswith("attn/wk") for path in meta["leaves"])


def convert_qkv(params: Mapping[str, Any], fused: bool) -> dict[str, Any]:
    """Unstacked parameters (``layers/<i>/attn/...``) with Q/K/V fused (``wqkv``, ``bqkv``) or
    split (``wq``/``wk``/``wv``, ``bq``/``bk``/``bv``), whichever they hold now; values unchanged
    (:func:`~shardplan.jax.model.fuse_qkv` / :func:`~shardplan.jax.model.split_qkv`)."""
    out = dict(params)
    out["layers"] = {}
    for i, layer in params["layers"].items():
        attn = dict(layer["attn"])
        for w, names in (("wqkv", ("wq", "wk", "wv")), ("bqkv", ("bq", "bk", "bv"))):
            if fused and names[0] in attn:
                attn[w] = fuse_qkv(*(attn.pop(n) for n in names))
            elif not fused and w in attn:
                attn.update(zip(names, split_qkv(attn.pop(w))))
        out["layers"][i] = {**layer, "attn": attn}
    return out


def _abstract_params(model: ModelSpec, placement: Placement | None,
                     fused_qkv: bool = True, boundary: bool = False) -> tuple[dict, dict]:
    """Abstract params and logical axes, stacked by ``placement`` (or not, when None), with the
    embedding / head stacked too when ``boundary``."""
    abstract = abstract_model(model, fused_qkv=fused_qkv)
    params, logical = param_dict(abstract), logical_axes(abstract)
    if placement is None:
        return params, logical
    return (jax.eval_shape(lambda p: stack_params(p, placement, boundary), params),
            stack_logical(logical, boundary))


def _boundary_spec(path: str, cur: Mapping[str, P]) -> P | None:
    """The current spec for a saved embedding / LM head / final-norm leaf (stacked ``boundary/...``
    or not) without its stacking dim, or None for other leaves. The current leaf is
    ``boundary/table`` (V, d) or ``embed`` (V, d) / ``lm_head`` (d, V), likewise the norm."""
    if path.startswith(f"{BOUNDARY}/"):
        rest = path.split("/", 1)[1]
        if f"{BOUNDARY}/{rest}" in cur:
            return P(None, *tuple(cur[f"{BOUNDARY}/{rest}"])[1:])
        return P(None, *tuple(cur["embed" if rest == "table" else rest]))
    if f"{BOUNDARY}/table" not in cur or path.split("/")[0] not in ("embed", "lm_head", "final_norm"):
        return None
    if path == "embed":
        return P(*tuple(cur[f"{BOUNDARY}/table"])[1:])
    if path == "lm_head":
        return P(*reversed(tuple(cur[f"{BOUNDARY}/table"])[1:]))
    return P(*tuple(cur[f"{BOUNDARY}/{path}"])[1:])


def _spec_in_saved_structure(path: str, cur: Mapping[str, P], saved_stacked: bool, cur_stacked: bool) -> P:
    """PartitionSpec on the current mesh for a leaf of the *saved* structure: the current counterpart's
    spec without the stacking dims (a stacked -> stacked change drops the pp dim, whose size changes)."""
    bspec = _boundary_spec(path, cur)
    if bspec is not None:
        return bspec
    parts = path.split("/")
    if saved_stacked and parts[0] == STAGES:
        rest = "/".join(parts[1:])
        if cur_stacked:
            return P(None, None, *tuple(cur[f"{STAGES}/{rest}"])[2:])
        return P(None, None, *tuple(cur[f"layers/0/{rest}"]))
    if not saved_stacked and parts[0] == "layers" and cur_stacked:
        return P(*tuple(cur[f"{STAGES}/{'/'.join(parts[2:])}"])[2:])
    return cur[path]


def _other_qkv_leaves(trainer: Any, meta: Mapping[str, Any]) -> dict[str, LeafSharding]:
    """Where the leaves of the checkpoint's Q/K/V layout would live in the trainer's layout, when
    it differs from the trainer's (their logical axes under its rules, its stacking; the rules'
    ``param_overrides`` are left out, they name the trainer's paths); else ``{}``."""
    fused = saved_fused_qkv(meta)
    if fused == trainer.fused_qkv:
        return {}
    split = trainer.pipeline.placement if trainer.pipeline is not None else None
    abstract, logical = _abstract_params(trainer.model_spec, split, fused,
                                         trainer.pipeline is not None and trainer.pipeline.boundary)
    return param_shardings(abstract, logical, replace(trainer.rules, param_overrides=()))


# ----- the manager ----------------------------------------------------------------------------------
class Checkpointer:
    """Save and restore training state in ``directory`` (an Orbax ``CheckpointManager``).

    Args:
        directory: checkpoint root (created on the first save); one sub-directory per step.
        max_to_keep: keep at most this many checkpoints (oldest deleted); None keeps all.
        async_save: write in a background thread (the device -> host copy is still done in
            :meth:`save`, so the state may be donated to the next step right away).

    Every process of a multi-process run must call :meth:`save` / :meth:`restore` together.
    """

    def __init__(self, directory: str | os.PathLike, max_to_keep: int | None = None, async_save: bool = True):
        self.directory = Path(directory).absolute()
        if self.directory.exists() and not self.directory.is_dir():
            raise ConfigError(f"checkpoint_dir={str(directory)!r} exists and is not a directory",
                              field="checkpoint_dir", value=str(directory))
        options = ocp.CheckpointManagerOptions(max_to_keep=max_to_keep, create=True,
                                               enable_async_checkpointing=async_save)
        self.manager = ocp.CheckpointManager(self.directory, options=options, item_names=("state", "meta"))

    # -- queries
    def steps(self) -> list[int]:
        """Steps with a complete checkpoint, increasing."""
        return sorted(self.manager.all_steps())

    def latest_step(self) -> int | None:
        """The newest complete checkpoint's step, or None."""
        return self.manager.latest_step()

    def _require_step(self, step: int | None) -> int:
        steps = self.steps()
        partial = sorted(p.name for p in self.directory.glob("*.orbax-checkpoint-tmp*")) if not steps else []
        if partial:
            raise ConfigError(f"checkpoint {partial[-1].split('.')[0]} in {self.directory} is incomplete (interrupted "
                              f"save), nothing to resume; remove {partial[-1]} or train without --resume",
                              field="checkpoint_dir", value=str(self.directory))
        if not steps:
            raise ConfigError(f"checkpoint_dir={str(self.directory)!r} holds no checkpoint to resume from "
                              f"(missing or empty directory)", field="checkpoint_dir", value=str(self.directory),
                              legal=["a directory written by `shardplan train --checkpoint-dir`"])
        if step is None:
            return steps[-1]
        if step not in steps:
            raise ConfigError(f"no checkpoint for step {step} in {self.directory}", field="step", value=step,
                              legal=steps)
        return step

    def read_meta(self, step: int | None = None) -> dict[str, Any]:
        """The ``meta`` JSON of ``step`` (default: the latest).

        Raises:
            ConfigError: no checkpoint in the directory, or no checkpoint for ``step``.
        """
        step = self._require_step(step)
        meta = self.manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]
        if meta.get("format") != FORMAT:
            raise ConfigError(f"checkpoint format {meta.get('format')!r} in {self.directory} is not supported "
                              f"(format {FORMAT} holds Q/K/V and gate/up fused; see docs/runtime.md)",
                              field="format", value=meta.get("format"), legal=[FORMAT])
        return meta

    # -- save
    def save(self, step: int, state: tuple[Any, Any], trainer: Any,
             data_sources: Sequence[str] | None = None) -> None:
        """Write ``state = (params, opt_state)`` (global arrays) and the JSON metadata as ``step``.

        Args:
            step: optimizer steps completed (>= 0).
            state: the trainer's state (not consumed; donate it to the next step only after this
                returns).
            trainer: the :class:`~shardplan.jax.train.Trainer` that produced it.
            data_sources: the ``--data`` paths, recorded in the metadata.
        """
        params, opt_state = state
        meta = checkpoint_meta(trainer, step, data_sources)
        self.manager.save(step, args=ocp.args.Composite(
            state=ocp.args.StandardSave({"params": params, "opt_state": opt_state}),
            meta=ocp.args.JsonSave(meta)), force=True)

    def wait(self) -> None:
        """Block until asynchronous saves are on disk."""
        self.manager.wait_until_finished()

    def close(self) -> None:
        """Wait for pending saves and release the manager."""
        self.manager.wait_until_finished()
        self.manager.close()

    # -- restore
    def restore(self, trainer: Any, step: int | None = None) -> tuple[tuple[Any, Any], dict[str, Any]]:
        """Read a checkpoint into ``trainer``'s current layout.

        Args:
            trainer: the :class:`~shardplan.jax.train.Trainer` to resume (its mesh, plan and rules
                give the target shardings).
            step: checkpoint step (default: the latest).

        Returns:
            ``((params, opt_state), meta)`` with every leaf on ``trainer.state_shardings``;
            ``meta["step"]`` is the step to continue from.

        Raises:
            ConfigError: no checkpoint (see :meth:`read_meta`), another model shape
                (:func:`check_model`), or a saved leaf whose shape differs from the expected one.
        """
        meta = self.read_meta(step)
        step = meta["step"]
        check_model(meta, trainer.model_spec)
        if meta["mesh"] != {a: int(n) for a, n in trainer.mesh.shape.items()} or \
                meta["plan"] != trainer.layout.parallel.model_dump(mode="json"):
            log.warning("resuming step %d saved with %s (%s) onto %s (%s)", step, meta["strategy"],
                        meta["mesh_description"], trainer.rules.strategy, describe(trainer.mesh))
        saved_stacked = bool(meta["stacked"])
        cur_stacked = trainer.pipeline is not None
        same = saved_stacked == cur_stacked and saved_fused_qkv(meta) == trainer.fused_qkv and (
            not cur_stacked or (slot_layers(saved_placement(meta)).tolist()
                                == slot_layers(trainer.pipeline.placement).tolist()
                                and saved_boundary(meta) == trainer.pipeline.boundary))
        if same:
            target = trainer._abstract_state()
            self._check_leaves(meta, {path: leaf.shape for path, leaf in trainer.leaves.items()})
            restored = self._read(step, target)
            return (restored["params"], restored["opt_state"]), meta
        return self._restore_converted(trainer, meta, saved_stacked, cur_stacked), meta

    def _read(self, step: int, target: tuple[Any, Any]) -> dict[str, Any]:
        params, opt_state = target
        return self.manager.restore(step, args=ocp.args.Composite(
            state=ocp.args.StandardRestore({"params": params, "opt_state": opt_state})))["state"]

    def _check_leaves(self, meta: Mapping[str, Any], expected: Mapping[str, Sequence[int]]) -> None:
        saved = {p: tuple(v["shape"]) for p, v in meta["leaves"].items()}
        exp = {p: tuple(s) for p, s in expected.items()}
        if saved != exp:
            bad = sorted(p for p in set(saved) | set(exp) if saved.get(p) != exp.get(p))[:5]
            raise ConfigError(f"checkpoint step {meta['step']}: parameter leaves differ from the expected layout "
                              f"({', '.join(f'{p}: {saved.get(p)} -> {exp.get(p)}' for p in bad)})",
                              field="leaves", value=bad)

    def _restore_converted(self, trainer: Any, meta: Mapping[str, Any], saved_stacked: bool,
                           cur_stacked: bool) -> tuple[Any, Any]:
        from shardplan.jax.train import make_optimizer

        saved_split = saved_placement(meta) if saved_stacked else None
        cur_split = trainer.pipeline.placement if cur_stacked else None
        model, mesh = trainer.model_spec, trainer.mesh
        saved_abs, _ = _abstract_params(model, saved_split, saved_fused_qkv(meta), saved_boundary(meta))
        flat_abs = jax.tree_util.tree_flatten_with_path(saved_abs)[0]
        self._check_leaves(meta, {path_str(kp): x.shape for kp, x in flat_abs})
        leaves = {**_other_qkv_leaves(trainer, meta), **trainer.leaves}
        cur_p = {p: leaf.param_spec for p, leaf in leaves.items()}
        cur_o = {p: leaf.opt_spec for p, leaf in leaves.items()}
        ns = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
        sh = lambda table: jax.tree_util.tree_unflatten(  # noqa: E731
            jax.tree_util.tree_structure(saved_abs),
            [ns(_spec_in_saved_structure(path_str(kp), table, saved_stacked, cur_stacked)) for kp, _ in flat_abs])
        p_sh, o_p_sh = sh(cur_p), sh(cur_o)
        tx = make_optimizer(trainer.cfg, decay_mask(saved_abs) if saved_stacked else None)
        abs_opt = jax.eval_shape(tx.init, saved_abs)
        o_sh = optax.tree_utils.tree_map_params(tx, lambda _, s: s, abs_opt, o_p_sh,
                                                transform_non_params=lambda _: ns(P()),
                                                is_leaf=lambda x: isinstance(x, NamedSharding))
        sds = lambda x, s: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=s)  # noqa: E731
        target = (jax.tree.map(sds, saved_abs, p_sh), jax.tree.map(sds, abs_opt, o_sh))
        restored = self._read(meta["step"], target)
        keys = set(saved_abs)

        def is_params(x: Any) -> bool:
            return isinstance(x, dict) and set(x) == keys

        def convert(p: Any) -> Any:
            if not is_params(p):
                return p
            if saved_stacked:
                p = unstack_params(p, saved_split, model.tied_embeddings)
            p = convert_qkv(p, trainer.fused_qkv)
            return stack_params(p, cur_split, trainer.pipeline.boundary) if cur_stacked else p

        def conv(state: dict[str, Any]) -> tuple[Any, Any]:
            params = convert(state["params"])
            opt = jax.tree.map(convert, state["opt_state"], is_leaf=is_params)
            return params, opt

        cur_abs = trainer._abstract_state()
        out_struct = jax.eval_shape(conv, restored)
        if jax.tree_util.tree_structure(out_struct) != jax.tree_util.tree_structure(cur_abs):
            raise ConfigError(f"checkpoint step {meta['step']} (pp={meta['plan']['pp']}, stages "
                              f"{meta['stage_layers']}) cannot be converted to pp={trainer.layout.parallel.pp} "
                              f"(stages {list(trainer.layout.stage_layers)}): the optimizer state structures differ",
                              field="pp", value=trainer.layout.parallel.pp, legal=[meta["plan"]["pp"]])
        log.warning("converting checkpoint step %d: stages %s -> %s, Q/K/V %s -> %s", meta["step"],
                    meta["stage_layers"] if saved_stacked else "unstacked",
                    list(trainer.layout.stage_layers) if cur_stacked else "unstacked",
                    "fused" if saved_fused_qkv(meta) else "split", "fused" if trainer.fused_qkv else "split")
        return jax.jit(conv, out_shardings=trainer.state_shardings)(restored)


def leaf_specs(tree: Any) -> dict[str, P]:
    """``{path: PartitionSpec}`` of a pytree of NamedSharding-placed arrays (for checks and tests)."""
    return {path_str(kp): x.sharding.spec for kp, x in jax.tree_util.tree_flatten_with_path(tree)[0]}


def to_numpy(tree: Any) -> dict[str, np.ndarray]:
    """``{path: host array}`` of a pytree of fully addressable arrays (single process; for tests)."""
    return {path_str(kp): np.asarray(x) for kp, x in jax.tree_util.tree_flatten_with_path(tree)[0]}


__all__ = ["Checkpointer", "checkpoint_meta", "check_model", "check_data", "convert_qkv", "unstack_params",
           "leaf_specs", "saved_boundary", "saved_fused_qkv", "to_numpy", "FORMAT"]
