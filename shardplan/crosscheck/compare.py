"""Line up the planner's prediction with an already compiled program (no JAX needed).

:func:`compare` takes the compiled program's HLO text and ``memory_analysis()`` numbers (produced by
:func:`shardplan.jax.validate.validate_plan`, or saved from any other run), runs the planner
(:func:`shardplan.cost.step.estimate_layout`) on the same model, batch, precision and layout, and
compares the two per collective kind and planner axis, and per memory component.

Three layers keep backend and runtime effects visible instead of hiding them in a tolerance:

1. **Backend mapping** (compiled side, :mod:`shardplan.crosscheck.logical`): raw HLO collectives
   mapped to the logical collectives the planner speaks of; both are reported.
2. **Runtime model** (predicted side, :mod:`shardplan.crosscheck.deltas`): named rules for what the
   runtime / XLA's SPMD partitioner does differently from Megatron-LM / PyTorch FSDP;
   ``expected = planner + deltas``.
3. **Negligible rows**: collectives of a kind/axis the planner does not model whose bytes are below
   :data:`NEGLIGIBLE_SHARE` of the step's compiled collective bytes (loss/grad-norm scalars, the
   mask positions, the one-token target shift of context parallelism) are listed but not scored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shardplan.crosscheck.deltas import RuntimeDelta, memory_deltas, not_covered, runtime_deltas
from shardplan.crosscheck.hlo import HloCollective, hlo_collectives
from shardplan.crosscheck.logical import (OP_NAMES, LogicalCollective, logical_collectives, planner_axis,
                                          raw_bytes_per_device)
from shardplan.parallel import Layout
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

#: Rows (op, axis) absent from the prediction and below this share of all compiled collective bytes
#: per step are reported as negligible and not scored.
NEGLIGIBLE_SHARE = 0.02
#: Relative tolerance on collective bytes and on model-state memory.
BYTES_TOLERANCE = 0.05
#: Compiled temp memory must lie within [1/TEMP_FACTOR, TEMP_FACTOR] x the planner's transient
#: memory (see docs/validation.md for why this is a factor, not a percentage).
TEMP_FACTOR = 2.0



@dataclass
class CollectiveRow:
    """Predicted vs compiled for one (op, planner axis). Counts per step; bytes per device per step.

    ``expected = planner + runtime deltas``; ``compiled`` after the backend mapping, ``raw`` the
    HLO ops taken literally (by their own kind, so raw rows may sit under another op name).
    ``error`` = expected / compiled - 1 (None when compiled is 0); ``planner_error`` likewise for
    the unadjusted planner. ``scored``: False for negligible rows.
    """

    op: str
    axis: str
    planner_count: float = 0.0
    planner_bytes: float = 0.0
    delta_count: float = 0.0
    delta_bytes: float = 0.0
    compiled_count: float = 0.0
    compiled_bytes: float = 0.0
    raw_count: float = 0.0
    raw_bytes: float = 0.0
    rules: list[str] = field(default_factory=list)
    mappings: list[str] = field(default_factory=list)
    scored: bool = True

    @property
    def expected_count(self) -> float:
        """Calls per step expected: planner + runtime deltas."""
        return self.planner_count + self.delta_count

    @property
    def expected_bytes(self) -> float:
        """Bytes per device per step expected: planner + runtime deltas."""
        return self.planner_bytes + self.delta_bytes

    @property
    def error(self) -> float | None:
        """Relative error of the expected bytes vs compiled (None if nothing compiled)."""
        return _rel(self.expected_bytes, self.compiled_bytes)

    @property
    def planner_error(self) -> float | None:
        """Relative error of the raw planner bytes vs compiled (None if nothing compiled)."""
        return _rel(self.planner_bytes, self.compiled_bytes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly row (bytes, counts, relative errors)."""
        d = asdict(self)
        d.update(expected_count=self.expected_count, expected_bytes=self.expected_bytes, error=self.error,
                 planner_error=self.planner_error)
        return d


@dataclass
class MemoryRow:
    """Predicted vs compiled per-device memory for one component (bytes)."""

    name: str
    predicted: float
    compiled: float
    tolerance: str
    note: str
    within: bool

    @property
    def error(self) -> float | None:
        """Relative error predicted vs compiled (None if compiled is 0)."""
        return _rel(self.predicted, self.compiled)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly row (bytes and relative error)."""
        d = asdict(self)
        d["error"] = self.error
        return d


def _rel(pred: float, actual: float) -> float | None:
    if actual == 0:
        return 0.0 if abs(pred) < 1e-9 else None
    return pred / actual - 1.0


@dataclass
class Validation:
    """The result of :func:`compare` (and :func:`shardplan.jax.validate.validate_plan`).

    Attributes:
        strategy: e.g. ``"FSDP(ZeRO-3)+TP"``.
        model, training, layout: what was compiled and predicted.
        mesh_shape: runtime mesh axis sizes.
        rows: per (op, axis) comparison.
        memory: per memory component comparison.
        deltas: the runtime-model deltas applied.
        hlo: the raw HLO collectives.
        logical: the mapped collectives.
        memory_analysis: ``compiled.memory_analysis()`` in bytes.
        compile_s: seconds to lower and compile.
        notes: backend notes.
        not_covered: why the comparison cannot score this plan (see
            :func:`~shardplan.crosscheck.deltas.not_covered`), or None; the rows are still filled.
        cp_attention: the runtime's attention under context parallelism (``"ring"``,
            ``"allgather"`` or ``"a2a"``).
    """

    strategy: str
    model: ModelSpec
    training: TrainingSpec
    layout: Layout
    mesh_shape: dict[str, int]
    rows: list[CollectiveRow]
    memory: list[MemoryRow]
    deltas: list[RuntimeDelta]
    hlo: list[HloCollective]
    logical: list[LogicalCollective]
    memory_analysis: dict[str, int]
    compile_s: float
    notes: list[str]
    not_covered: str | None = None
    cp_attention: str = "ring"

    @property
    def ok(self) -> bool:
        """Every scored collective row within :data:`BYTES_TOLERANCE` and every memory row within its
        tolerance (also computed for a plan that is :attr:`not_covered`)."""
        rows_ok = all(r.error is not None and abs(r.error) <= BYTES_TOLERANCE for r in self.rows if r.scored)
        return rows_ok and all(m.within for m in self.memory)

    @property
    def result(self) -> str:
        """``"not covered"`` (:attr:`not_covered`: not validated, which ``shardplan validate`` reports
        as a negative result), ``"within tolerance"`` or ``"outside tolerance"``."""
        return "not covered" if self.not_covered else "within tolerance" if self.ok else "outside tolerance"

    def row(self, op: str, axis: str) -> CollectiveRow | None:
        """The row of one collective kind and planner axis, if any."""
        return next((r for r in self.rows if r.op == op and r.axis == axis), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``shardplan validate --json``."""
        return {
            "strategy": self.strategy, "model": self.model.name,
            "parallel": self.layout.parallel.model_dump(mode="json"),
            "microbatches": self.layout.microbatches, "mesh": self.mesh_shape, "cp_attention": self.cp_attention,
            "training": {"seq_len": self.training.seq_len, "global_batch_size": self.training.global_batch_size,
                         "precision": self.training.precision.name, "attention": self.training.attention},
            "ok": self.ok and not self.not_covered, "result": self.result,
            "tolerances": {"collective_bytes": BYTES_TOLERANCE, "model_state": BYTES_TOLERANCE,
                           "temp_factor": TEMP_FACTOR, "negligible_share": NEGLIGIBLE_SHARE},
            "collectives": [{**r.to_dict(), "scored": r.scored and not self.not_covered} for r in self.rows],
            "memory": [m.to_dict() for m in self.memory],
            "runtime_deltas": [asdict(d) for d in self.deltas],
            "memory_analysis": self.memory_analysis,
            "hlo_collectives": [c.to_dict() for c in self.hlo],
            "compile_s": self.compile_s, "notes": self.notes, "not_covered": self.not_covered,
        }


BACKEND_NOTES = [
    "XLA:CPU lowers reduce-scatter as all-reduce + dynamic-slice: such all-reduces are reported raw and "
    "mapped to ReduceScatter.",
    "An all-reduce over n devices whose result is only used as 1/k slices (1 < k < n; HSDP's embedding "
    "gradient) is mapped to a reduce-scatter over k and an all-reduce of the slice over n / k, as XLA:GPU's "
    "all-reduce splitter pass rewrites it.",
    "All-reduces of the same buffers chained over disjoint data axes (e.g. cp then dp) are mapped to one "
    "all-reduce over the product group (the planner's dp x cp gradient group), a reduce-scatter over it where "
    "each device keeps 1/(dp x cp) (ZeRO-1 + CP); tp then dp stays two.",
    "An all-reduce over tp and data axes together (the sequence-parallel norm gradients under CP) is mapped to an "
    "all-reduce over tp and one over the data axes, the planner's tp norm-gradient reduction and its gradient group.",
    "Counts are executions per step; XLA combines many gradients into one tuple all-reduce and gathers "
    "weights one by one, so counts are reported but only bytes are scored.",
    "Ops inside while loops (gradient accumulation) are multiplied by the loop trip count "
    "(known_trip_count in the backend config, else the loop condition).",
    "XLA:CPU widens bf16 all-reduces to f32 (their reducer is a '*_promoted' clone): they are counted at "
    "bf16, the bytes the program's bf16 reduction moves on GPU / TPU.",
]


#: Display order of planner axes and collective kinds in the rows.
_AXIS_ORDER = {"tp": 0, "cp": 1, "ep": 2, "dp": 3, "pp": 4}
_OP_ORDER = {"AllReduce": 0, "AllGather": 1, "ReduceScatter": 2, "AllToAll": 3, "SendRecv": 4}


def collective_rows(planner: list[Any], deltas: list[RuntimeDelta], logical: list[LogicalCollective],
                    hlo: list[HloCollective]) -> list[CollectiveRow]:
    """One :class:`CollectiveRow` per (op, planner axis) seen on either side, sorted by axis and op.

    Args:
        planner: the planner's collectives (``Estimate.collectives``; zero-byte ones are skipped).
        deltas: :func:`~shardplan.crosscheck.deltas.runtime_deltas` of the plan.
        logical: the compiled collectives after the backend mapping.
        hlo: the raw compiled collectives.

    Returns:
        The rows (a SendRecv row's compiled bytes are the busiest device's: each device's sends
        summed over the row's collective-permutes, the largest taken); a row is not scored when
        nothing is expected and its compiled bytes are below
        :data:`NEGLIGIBLE_SHARE` of all compiled collective bytes, or when its group spans no mesh
        axis (``"-"``).
    """
    rows: dict[tuple[str, str], CollectiveRow] = {}

    def row(op: str, axis: str) -> CollectiveRow:
        return rows.setdefault((op, axis), CollectiveRow(op, axis))

    for c in planner:
        if c.bytes_per_device > 0:
            r = row(c.op, c.axis)
            r.planner_count += c.count
            r.planner_bytes += c.bytes_per_device
    for d in deltas:
        r = row(d.op, d.axis)
        r.delta_count += d.count
        r.delta_bytes += d.bytes_per_device
        if d.rule not in r.rules:
            r.rules.append(d.rule)
    counted: set[tuple[str, str, str]] = set()
    sends: dict[tuple[str, str], dict[int, float]] = {}  # SendRecv: bytes each sending device sends per step
    for lc in logical:
        r = row(lc.op, lc.axis)
        if (lc.source, lc.op, lc.axis) not in counted:  # a tuple-shaped op counts once
            counted.add((lc.source, lc.op, lc.axis))
            r.compiled_count += lc.count
        if lc.senders:
            per_dev = sends.setdefault((lc.op, lc.axis), {})
            for d in lc.senders:
                per_dev[d] = per_dev.get(d, 0.0) + lc.bytes_per_device
        else:
            r.compiled_bytes += lc.bytes_per_device
        if lc.mapping and lc.mapping not in r.mappings:
            r.mappings.append(lc.mapping)
    for key, per_dev in sends.items():  # the busiest device's sends (module docstring of crosscheck.logical)
        rows[key].compiled_bytes += max(per_dev.values())
    for c in hlo:
        r = row(OP_NAMES[c.kind], planner_axis(c.mesh_axes, OP_NAMES[c.kind]))
        r.raw_count += c.per_step
        r.raw_bytes += raw_bytes_per_device(c)
    total = sum(lc.bytes_per_device for lc in logical) or 1.0
    for r in rows.values():
        if (abs(r.expected_bytes) < 1e-9 and r.compiled_bytes < NEGLIGIBLE_SHARE * total) or r.axis == "-":
            r.scored = False
    return sorted(rows.values(), key=lambda r: (_AXIS_ORDER.get(r.axis, 9), _OP_ORDER.get(r.op, 9)))


def compare(model: ModelSpec, training: TrainingSpec, layout: Layout, hlo_text: str, memory: dict[str, int],
            mesh_shape: dict[str, int], hardware: HardwareSpec | None = None, strategy: str = "",
            compile_s: float = 0.0, batch_bytes: float | None = None,
            local_axes: tuple[str, ...] = (), cp_attention: str = "ring") -> Validation:
    """Compare the planner with an already compiled program (no JAX needed).

    Args:
        model, training, layout: the plan (``training.precision`` should describe the runtime's
            dtypes, e.g. ``fp32`` for an fp32 run; see :func:`runtime_training`).
        hlo_text: ``compiled.as_text()``.
        memory: :func:`shardplan.jax.validate.memory_breakdown` of the compiled step (bytes).
        mesh_shape: runtime mesh axis sizes (mesh order).
        hardware: for the planner's times (bytes do not depend on it); default ``h100-sxm``.
        strategy: label.
        compile_s: reported only.
        batch_bytes: per-device bytes of the non-state arguments (the token batch), subtracted from
            the argument size; default ``4 * local sequences * (seq_len + 1)``.
        local_axes: the mesh axes the runtime reduced the gradients over once per step
            (``Trainer.local_axes``); ``()`` for the GSPMD accumulation
            (``grad_sync='per_microbatch'``).
        cp_attention: the compiled program's attention under cp, ``"ring"`` (the planner's K/V
            ring) or ``"allgather"`` (runtime delta ``cp-allgather-kv``).

    Returns:
        :class:`Validation`.

    Raises:
        shardplan.crosscheck.hlo.HloParseError: HLO text this parser does not understand.
    """
    from shardplan.cost.step import estimate_layout
    from shardplan.presets.hardware import HARDWARE

    est = estimate_layout(model, hardware or HARDWARE["h100-sxm"], training, layout)
    hlo = hlo_collectives(hlo_text, mesh_shape)
    logical = logical_collectives(hlo, hlo_text, mesh_shape)
    deltas = runtime_deltas(model, training, layout, est.collectives, local_axes, cp_attention)
    rows = collective_rows(est.collectives, deltas, logical, hlo)
    mem_rows = _memory_rows(est, model, training, layout, memory, batch_bytes, local_axes, cp_attention)
    notes = list(BACKEND_NOTES)
    unknown = [c.name for c in hlo if not c.trip_count_known]
    if unknown:
        notes.append(f"trip count unknown for {len(unknown)} collective(s) in loops (counted once): {unknown[:5]}")
    return Validation(strategy=strategy, model=model, training=training, layout=layout, mesh_shape=dict(mesh_shape),
                      rows=rows, memory=mem_rows, deltas=deltas, hlo=hlo, logical=logical,
                      memory_analysis=dict(memory), compile_s=compile_s, notes=notes,
                      not_covered=not_covered(layout, local_axes, training, model), cp_attention=cp_attention)


def _delta_note(planner: float, per_rule: dict[str, dict[str, float]], keys: tuple[str, ...]) -> str:
    """``"; expected = planner 1,234 + rule +56"`` for the memory rules that change ``keys``, else ``""``."""
    parts = [f"{name} {sum(d.get(k, 0.0) for k in keys):+,.0f}" for name, d in per_rule.items()
             if any(d.get(k, 0.0) for k in keys)]
    return f"; expected = planner {planner:,.0f} + " + " + ".join(parts) if parts else ""


def _memory_rows(est: Any, model: ModelSpec, training: TrainingSpec, layout: Layout, memory: dict[str, int],
                 batch_bytes: float | None, local_axes: tuple[str, ...] = (), cp_attention: str = "ring"
                 ) -> list[MemoryRow]:
    """Memory rows (bytes per device): persistent state vs compiled arguments, transient vs compiled
    temp, each with the deltas of :func:`~shardplan.crosscheck.deltas.memory_deltas` (the pipeline's
    replicated embedding/head and tick residuals, ZeRO-2's whole local gradient); none when the
    backend has no memory analysis."""
    if not memory:
        return []
    mb = est.memory
    p = layout.parallel
    if batch_bytes is None:
        local_seqs = training.global_batch_size // p.dp
        batch_bytes = 4.0 * local_seqs * (training.seq_len + 1)
    per_rule = memory_deltas(model, training, layout, mb, local_axes, cp_attention)
    dm = {k: sum(d.get(k, 0.0) for d in per_rule.values()) for k in ("state", "grads", "activations", "logits")}
    state_note = _delta_note(mb.params + mb.optimizer, per_rule, ("state",))
    state_pred = mb.params + mb.optimizer + dm["state"]
    state_comp = memory["argument"] - batch_bytes
    err = _rel(state_pred, state_comp)
    rows = [MemoryRow("params + optimizer state (step arguments)", state_pred, state_comp,
                      f"±{BYTES_TOLERANCE:.0%}",
                      "compiled: argument bytes minus the token batch (params, Adam moments, step counters)"
                      + state_note, err is not None and abs(err) <= BYTES_TOLERANCE)]
    out_comp = memory["output"] - 4.0 * 2  # loss and grad-norm scalars
    err = _rel(state_pred, out_comp)
    rows.append(MemoryRow("params + optimizer state (step outputs, donated)", state_pred, out_comp,
                          f"±{BYTES_TOLERANCE:.0%}", "compiled: output bytes minus the two metric scalars" + state_note,
                          err is not None and abs(err) <= BYTES_TOLERANCE))
    transient = mb.grads + mb.activations + mb.logits + mb.zero3_buffers
    t_delta = dm["grads"] + dm["activations"] + dm["logits"]
    comp = memory["temp"]
    ratio = (transient + t_delta) / comp if comp else float("inf")
    t_note = _delta_note(transient, per_rule, ("grads", "activations", "logits"))
    rows.append(MemoryRow("grads + activations + logits + ZeRO-3 buffers (temp)", transient + t_delta, comp,
                          f"x{TEMP_FACTOR:g}", "compiled: temp bytes (XLA buffer assignment, live-range packed)"
                          + t_note, 1 / TEMP_FACTOR <= ratio <= TEMP_FACTOR))
    ms_pred = mb.model_state + dm["state"] + dm["grads"]
    ms_comp = state_comp + mb.grads + dm["grads"]
    rows.append(MemoryRow("model state: params + grads + optimizer", ms_pred, ms_comp, f"±{BYTES_TOLERANCE:.0%}",
                          "compiled: state arguments + the expected gradient bytes (gradients are temp "
                          "buffers in the compiled step, not arguments)" + state_note,
                          abs(_rel(ms_pred, ms_comp) or 0) <= BYTES_TOLERANCE))
    return rows


def runtime_training(training: TrainingSpec, compute_dtype: str) -> TrainingSpec:
    """The TrainingSpec the planner should use for the runtime: precision ``fp32`` when the runtime
    computes in fp32 (params, grads, moments and activations all 4 bytes), ``fp32-params`` when it
    computes in bf16 (the runtime keeps fp32 parameters, casts them to bf16 where they are used and
    differentiates the fp32 copy: 4-byte parameters and gradients, no separate master, 8-byte
    moments, 2-byte activations), and naive attention (the runtime materialises the score matrix)."""
    prec = "fp32" if compute_dtype in ("float32", "fp32") else "fp32-params"
    return training.model_copy(update={"precision": PRECISION_POLICIES[prec], "attention": "naive",
                                       "dropout": False})


__all__ = ["BACKEND_NOTES", "BYTES_TOLERANCE", "CollectiveRow", "MemoryRow", "NEGLIGIBLE_SHARE", "TEMP_FACTOR",
           "Validation", "collective_rows", "compare", "runtime_training"]
