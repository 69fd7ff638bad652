"""Compile the JAX runtime's training step for a plan and cross-check it against the planner.

:func:`validate_plan` builds the runtime's training step for a layout (``Trainer``: AOT
``lower().compile()`` on the plan's mesh, no step is run), reads the compiled HLO text and
``memory_analysis()`` (:func:`memory_breakdown`) and hands them to
:func:`shardplan.crosscheck.compare.compare`, which parses the collectives, applies the backend
mapping and the runtime model and lines them up with the planner. Only this compiling part needs
JAX; the parser and the comparison live in :mod:`shardplan.crosscheck` (importable without JAX).
The names re-exported below keep ``from shardplan.jax.validate import ...`` working.
"""

from __future__ import annotations

import time
from typing import Any

from shardplan.crosscheck.compare import (BACKEND_NOTES, BYTES_TOLERANCE, NEGLIGIBLE_SHARE, TEMP_FACTOR,
                                          CollectiveRow, MemoryRow, Validation, compare, runtime_training)
from shardplan.crosscheck.deltas import RuntimeDelta, runtime_deltas, static_not_covered
from shardplan.errors import ConfigError, NotCovered
from shardplan.parallel import Layout, ParallelConfig
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec


def memory_breakdown(compiled: Any) -> dict[str, int]:
    """Per-device bytes from ``compiled.memory_analysis()`` of a ``jax.stages.Compiled``.

    Returns:
        ``{"argument", "output", "temp", "alias", "generated_code", "peak"}`` in bytes, where
        ``peak = argument + output + temp - alias`` (donated state is aliased to the outputs, so
        it is counted once), or ``{}`` when the backend has no memory analysis.
    """
    try:
        ma = compiled.memory_analysis()
    except Exception:  # backend without memory analysis
        return {}
    if ma is None:
        return {}
    keys = ("argument", "output", "temp", "alias", "generated_code")
    out = {k: int(getattr(ma, f"{k}_size_in_bytes", 0) or 0) for k in keys}
    out["peak"] = out["argument"] + out["output"] + out["temp"] - out["alias"]
    return out


def _check_covered(p: ParallelConfig, training: TrainingSpec) -> None:
    """Refuse the layout fields the JAX runtime does not execute the way the planner prices them (see
    :func:`validate_plan`'s Raises).

    Raises:
        ConfigError: naming the field and its legal values.
    """
    if p.ep > 1 and training.moe_capacity_factor is None:
        raise NotCovered(f"ep={p.ep} with dropless routing: the JAX runtime's dropless MoE is a "
                          f"dense dispatch (tokens gathered over ep, no AllToAll); give a capacity factor "
                          f"(--moe-capacity-factor, GShard dispatch with the AllToAll the planner costs) or ep=1",
                          field="moe_capacity_factor", value=None)
    if p.recompute_modules is not None:
        raise ConfigError(f"recompute_modules={','.join(p.recompute_modules)} is not implemented by the JAX runtime "
                          "(its selective recompute saves the matmul outputs, jax.checkpoint_policies); legal: not given (leave "
                          "--recompute-modules out)",
                          field="recompute_modules", value=list(p.recompute_modules), legal=[None])
    if p.moe_dispatcher != "alltoall":
        raise ConfigError(f"moe_dispatcher={p.moe_dispatcher!r} is not implemented by the JAX runtime (it dispatches "
                          "with XLA's AllToAll); legal: 'alltoall'", field="moe_dispatcher", value=p.moe_dispatcher,
                          legal=["alltoall"])
    if p.offload_optimizer:
        raise ConfigError("offload_optimizer=True is not implemented by the JAX runtime; legal: False",
                          field="offload_optimizer", value=True, legal=[False])
    if p.offload_params:
        raise ConfigError("offload_params=True is not implemented by the JAX runtime; legal: False",
                          field="offload_params", value=True, legal=[False])
    if p.offload_activation_layers:
        raise ConfigError(f"offload_activation_layers={p.offload_activation_layers} is not implemented by the JAX "
                          "runtime; legal: 0", field="offload_activation_layers", value=p.offload_activation_layers,
                          legal=[0])


def validate_plan(model: ModelSpec, layout: Layout, training: TrainingSpec, cfg: Any = None,
                  hardware: HardwareSpec | None = None, devices: Any = None) -> Validation:
    """Compile the runtime's training step for a plan and compare it with the planner.

    Args:
        model: model shapes (scale it down first for CPU).
        layout: validated layout.
        training: seq_len / batch (precision and attention are set by :func:`runtime_training`).
        cfg: :class:`shardplan.jax.train.TrainConfig` (default: fp32 compute, ``grad_sync='per_step'``,
            ring attention under cp; the runtime's ``local_axes`` select the gradient-accumulation
            rules, ``cp_attention`` the context-parallel ones).
        hardware: for the planner's times only.
        devices: devices for the mesh (default all).

    Returns:
        :class:`Validation` (``not_covered`` says why a plan cannot be scored, e.g. ZeRO-1 with
        ``grad_sync='per_microbatch'``).

    Raises:
        ConfigError: a plan the runtime cannot compile (indivisible shapes, wrong device count; see
            :class:`shardplan.jax.train.Trainer`).
        NotCovered: a plan the comparison cannot score that the plan alone shows
            (:func:`shardplan.crosscheck.deltas.static_not_covered`), or ``ep > 1`` without a capacity factor (dropless
            routing is a dense dispatch in the runtime, so it has no AllToAll to compare).
    """
    from shardplan.jax.train import TrainConfig, Trainer

    _check_covered(layout.parallel, training)
    cfg = cfg or TrainConfig(compute_dtype="float32")
    tr = runtime_training(training, cfg.compute_dtype)
    why = static_not_covered(layout, tr, model)
    if why:  # known from the plan: refused before a compile of many seconds
        raise NotCovered(why)
    t0 = time.perf_counter()
    trainer = Trainer(model, layout, tr, cfg, devices=devices)
    compile_s = time.perf_counter() - t0
    text = trainer.compiled.as_text()
    memory = memory_breakdown(trainer.compiled)
    mesh_shape = {a: int(trainer.mesh.shape[a]) for a in trainer.mesh.axis_names}
    return compare(model, tr, layout, text, memory, mesh_shape, hardware, trainer.rules.strategy, compile_s,
                   local_axes=trainer.local_axes, cp_attention=trainer.rules.cp_attention)


__all__ = ["BACKEND_NOTES", "BYTES_TOLERANCE", "CollectiveRow", "MemoryRow", "NEGLIGIBLE_SHARE", "RuntimeDelta",
           "TEMP_FACTOR", "Validation", "compare", "memory_breakdown", "runtime_deltas", "runtime_training",
           "validate_plan"]
