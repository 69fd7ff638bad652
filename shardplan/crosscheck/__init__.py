"""Cross-check of the planner against the program XLA compiles for the same plan, without JAX.

Modules:

* :mod:`shardplan.crosscheck.hlo` -- parse ``compiled.as_text()``: every collective, its device
  groups (all replica-group syntaxes), bytes and executions per step (loop trip counts).
* :mod:`shardplan.crosscheck.logical` -- the backend mapping from HLO collectives to the logical
  collectives the planner names (XLA:CPU's all-reduce + dynamic-slice -> ReduceScatter, chained
  data-axis all-reduces -> one), and mesh axes -> planner axes.
* :mod:`shardplan.crosscheck.deltas` -- the runtime model: a registry of named rules for where the
  JAX runtime / XLA differs from Megatron-LM / PyTorch FSDP (``expected = planner + deltas``).
* :mod:`shardplan.crosscheck.compare` -- :func:`compare`: rows per (op, axis) and per memory
  component, tolerances, :class:`Validation`.

Compiling the program (``lower().compile()``, ``memory_analysis()``) is JAX's part and lives in
:mod:`shardplan.jax.validate`; importing this package loads no JAX.
"""

from __future__ import annotations

from shardplan.crosscheck.compare import (BACKEND_NOTES, BYTES_TOLERANCE, NEGLIGIBLE_SHARE, TEMP_FACTOR,
                                          CollectiveRow, MemoryRow, Validation, compare, runtime_training)
from shardplan.crosscheck.deltas import MEMORY_RULES, RULES, RuntimeDelta, runtime_deltas, rules_table
from shardplan.crosscheck.hlo import HloCollective, HloParseError, hlo_collectives
from shardplan.crosscheck.logical import LogicalCollective, logical_collectives, planner_axis

__all__ = ["BACKEND_NOTES", "BYTES_TOLERANCE", "CollectiveRow", "HloCollective", "HloParseError",
           "LogicalCollective", "MEMORY_RULES", "MemoryRow", "NEGLIGIBLE_SHARE", "RULES", "RuntimeDelta",
           "TEMP_FACTOR", "Validation", "compare", "hlo_collectives", "logical_collectives", "planner_axis",
           "rules_table", "runtime_deltas", "runtime_training"]
