"""The pipeline-schedule simulator: which pass of which microbatch runs on which rank, and when.

Pure Python (no plotting): the guide's Gantt chart (:func:`shardplan.web.charts.pipeline_figure`),
the PNG report and the tests read the same :class:`PipelineBlock` list.

Time unit: one microbatch's forward through one whole pipeline stage (all of a rank's layers);
a backward takes 2 units (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training
on GPU Clusters Using Megatron-LM", Sec. 2.2: t_b = 2 t_f). With ``interleaved`` each of the
``v = virtual_stages`` model chunks of a rank takes 1/v (forward) and 2/v (backward).
``zero-bubble`` (ZB-H1, Qi et al. 2023, "Zero Bubble Pipeline Parallelism") splits the backward
into B (input gradient, 1 unit) and W (weight gradient, 1 unit).

How the simulation works:

1. :func:`rank_orders` fixes each rank's sequence of F / B passes (the schedule's policy);
2. :func:`_input_of` names the pass each pass waits for (the previous rank's forward, the next
   rank's backward of the same microbatch and chunk, or the chunk boundary for interleaved);
3. :class:`_Simulation` repeatedly starts the earliest-startable next pass over all ranks (a pass
   starts when its rank is free and its input is done); for ZB-H1 a pending W fills any idle gap
   at least as long as itself, and the remaining ones run at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import get_args

from shardplan.errors import ConfigError
from shardplan.parallel import Schedule

#: the schedules the simulator knows (the same names as ``ParallelConfig.schedule``)
SCHEDULES: tuple[str, ...] = get_args(Schedule)

#: one pass in a rank's order: (kind ``F`` / ``B`` / ``W``, microbatch, chunk)
Pass = tuple[str, int, int]
#: a finished pass: (kind, rank, microbatch, chunk)
PassKey = tuple[str, int, int, int]

_EPS = 1e-9  # time comparison tolerance (schedule units)


@dataclass(frozen=True)
class PipelineBlock:
    """One forward (F), backward (B) or weight-gradient (W, zero-bubble only) pass of a microbatch.

    Attributes:
        stage: pipeline rank (0 = first).
        microbatch: microbatch index.
        chunk: model chunk on this rank (interleaved schedule; else 0).
        kind: ``F``, ``B`` or ``W``.
        start: start time, in units of one microbatch's forward through a whole stage.
        duration: same units.
    """

    stage: int
    microbatch: int
    chunk: int
    kind: str
    start: float
    duration: float

    @property
    def end(self) -> float:
        """start + duration (schedule units)."""
        return self.start + self.duration


# ---- per-rank orders ----------------------------------------------------------------------------

def _warmup_then_alternate(total: int, warm: int, op: Callable[[str, int], Pass]) -> list[Pass]:
    """``warm`` forwards, then one forward / one backward until the forwards run out, then the
    remaining backwards (the 1F1B pattern; ``op(kind, k)`` names the k-th pass of that kind)."""
    seq = [op("F", k) for k in range(warm)]
    for i in range(total - warm):
        seq += [op("F", warm + i), op("B", i)]
    seq += [op("B", k) for k in range(total - warm, total)]
    return seq


def _gpipe_order(m: int) -> list[Pass]:
    """GPipe (Huang et al. 2019): every forward, then every backward."""
    return [("F", i, 0) for i in range(m)] + [("B", i, 0) for i in range(m)]


def _one_f_one_b_order(pp: int, s: int, m: int) -> list[Pass]:
    """1F1B (PipeDream-Flush, Narayanan et al. 2021) and ZB-H1, which keeps its F / B order:
    ``p - s - 1`` warm-up forwards on rank ``s``, then one forward / one backward."""
    return _warmup_then_alternate(m, min(pp - s - 1, m), lambda kind, k: (kind, k, 0))


def _interleaved_order(pp: int, s: int, m: int, v: int) -> list[Pass]:
    """Megatron-LM's interleaved 1F1B (Narayanan et al. 2021 Sec. 2.2.2): ``(p - s - 1) * 2 +
    (v - 1) * p`` warm-up passes on rank ``s``; the k-th forward is chunk ``(k mod p v) // p`` of
    microbatch ``(k // p v) * p + k mod p`` (groups of p microbatches go through chunk 0, then
    chunk 1, ...); backwards visit the chunks in reverse."""

    def op(kind: str, k: int) -> Pass:
        chunk = (k % (pp * v)) // pp
        return kind, (k // (pp * v)) * pp + k % pp, chunk if kind == "F" else v - 1 - chunk

    total = m * v
    return _warmup_then_alternate(total, min((pp - s - 1) * 2 + (v - 1) * pp, total), op)


def rank_orders(pp: int, microbatches: int, schedule: str, virtual_stages: int = 1) -> list[list[Pass]]:
    """Per pipeline rank, the order of its F / B passes as ``(kind, microbatch, chunk)``.

    Args:
        pp: pipeline ranks.
        microbatches: microbatches per step.
        schedule: one of :data:`SCHEDULES` (already checked by :func:`pipeline_schedule`).
        virtual_stages: model chunks per rank (used by ``interleaved`` only).

    Returns:
        ``pp`` lists of ``2 * microbatches * v`` passes (v = virtual_stages for interleaved, else
        1). W passes of zero-bubble are not listed: the simulator inserts them.
    """
    if schedule == "gpipe":
        return [_gpipe_order(microbatches) for _ in range(pp)]
    if schedule == "interleaved":
        return [_interleaved_order(pp, s, microbatches, virtual_stages) for s in range(pp)]
    return [_one_f_one_b_order(pp, s, microbatches) for s in range(pp)]


def _input_of(kind: str, s: int, mb: int, c: int, pp: int, v: int) -> PassKey | None:
    """The pass whose output pass ``(kind, s, mb, c)`` consumes, or None for the first forward.

    Forward of chunk c on rank s: the forward of rank s - 1 (rank 0: the last rank's forward of
    chunk c - 1). Backward: the backward of rank s + 1 (last rank: rank 0's backward of chunk
    c + 1, or for the last chunk this rank's own forward).
    """
    if kind == "F":
        if s > 0:
            return ("F", s - 1, mb, c)
        return ("F", pp - 1, mb, c - 1) if c > 0 else None
    if s < pp - 1:
        return ("B", s + 1, mb, c)
    return ("B", 0, mb, c + 1) if c < v - 1 else ("F", s, mb, c)


# ---- the simulation -----------------------------------------------------------------------------

@dataclass
class _Simulation:
    """Event-driven list scheduling of the per-rank orders (see the module docstring).

    Attributes:
        orders: :func:`rank_orders`.
        dur: duration of an F, B and W pass (schedule units).
        v: model chunks per rank.
        zero_bubble: insert a W (weight gradient) after each B and run it in idle gaps.
        done: end time of every finished F / B pass.
        nxt: per rank, the index of its next pass in ``orders``.
        free: per rank, when it becomes free.
        pending_w: per rank, microbatches whose W has not run yet.
        blocks: the scheduled passes, in scheduling order.
    """

    orders: list[list[Pass]]
    dur: dict[str, float]
    v: int
    zero_bubble: bool
    done: dict[PassKey, float] = field(default_factory=dict)
    nxt: list[int] = field(init=False)
    free: list[float] = field(init=False)
    pending_w: list[list[int]] = field(init=False)
    blocks: list[PipelineBlock] = field(default_factory=list)

    def __post_init__(self) -> None:
        pp = len(self.orders)
        self.nxt, self.free, self.pending_w = [0] * pp, [0.0] * pp, [[] for _ in range(pp)]

    def _candidate(self, s: int) -> tuple[float, int, Pass] | None:
        """Rank ``s``'s next pass and its earliest start, or None when it must wait for an input.

        A pending W goes first if the next F / B could not start before the W would end.
        """
        free, pending = self.free[s], self.pending_w[s]
        if self.nxt[s] >= len(self.orders[s]):
            return (free, s, ("W", pending[0], 0)) if pending else None
        kind, mb, c = self.orders[s][self.nxt[s]]
        d = _input_of(kind, s, mb, c, len(self.orders), self.v)
        if d is not None and d not in self.done:
            return None
        ready = max(free, self.done.get(d, 0.0))
        if pending and ready >= free + self.dur["W"] - _EPS:
            return (free, s, ("W", pending[0], 0))
        return (ready, s, (kind, mb, c))

    def _earliest(self) -> tuple[float, int, Pass]:
        """The candidate that starts first (ties: the lowest rank)."""
        best: tuple[float, int, Pass] | None = None
        for s in range(len(self.orders)):
            cand = self._candidate(s)
            if cand is not None and (best is None or cand[0] < best[0] - _EPS):
                best = cand
        if best is None:  # pragma: no cover - the orders are feasible for validated layouts
            raise RuntimeError(f"pipeline schedule deadlocked (pp={len(self.orders)}, v={self.v})")
        return best

    def _start(self, start: float, s: int, p: Pass) -> None:
        """Record pass ``p`` on rank ``s`` starting at ``start`` and advance the rank."""
        kind, mb, c = p
        self.blocks.append(PipelineBlock(s, mb, c, kind, start, self.dur[kind]))
        self.free[s] = start + self.dur[kind]
        if kind == "W":
            self.pending_w[s].pop(0)
            return
        self.done[(kind, s, mb, c)] = self.free[s]
        self.nxt[s] += 1
        if kind == "B" and self.zero_bubble:
            self.pending_w[s].append(mb)

    def run(self) -> list[PipelineBlock]:
        """Schedule every pass (F and B of every order, plus one W per B with zero-bubble)."""
        total = sum(len(o) for o in self.orders)
        if self.zero_bubble:
            total += total // 2  # one W per B
        while len(self.blocks) < total:
            self._start(*self._earliest())
        return self.blocks


def _check_schedule(pp: int, microbatches: int, schedule: str, virtual_stages: int) -> None:
    """Raise ConfigError for inputs :func:`pipeline_schedule` cannot simulate (see there)."""
    if schedule not in SCHEDULES:
        raise ConfigError(f"schedule={schedule!r} is unknown; legal: {', '.join(SCHEDULES)}", field="schedule",
                          value=schedule, legal=SCHEDULES)
    if pp < 1 or microbatches < 1 or virtual_stages < 1:
        raise ConfigError(f"pp={pp}, microbatches={microbatches} and virtual_stages={virtual_stages} must be >= 1",
                          field="pp", value=pp)
    if virtual_stages > 1 and schedule != "interleaved":
        raise ConfigError(f"virtual_stages={virtual_stages} needs schedule='interleaved'", field="virtual_stages",
                          value=virtual_stages, legal=[1])
    if schedule == "interleaved" and pp > 1 and microbatches % pp:
        raise ConfigError(f"interleaved schedule needs microbatches ({microbatches}) divisible by pp={pp}",
                          field="schedule", value=schedule)


def pipeline_schedule(pp: int, microbatches: int, schedule: str = "1f1b",
                      virtual_stages: int = 1) -> list[PipelineBlock]:
    """Simulate a pipeline schedule and return its passes with start times.

    Time unit: one microbatch's forward through a stage's layers; backward takes 2 units
    (Narayanan et al. 2021). With ``interleaved`` each of the ``virtual_stages`` chunks takes
    1/v (forward) and 2/v (backward). ``zero-bubble`` (ZB-H1, Qi et al. 2023) splits the backward
    into B (input gradient, 1 unit) and W (weight gradient, 1 unit); a W runs whenever the rank
    would otherwise idle for at least its length, and the remaining ones at the end.

    Per-rank order (:func:`rank_orders`): GPipe runs every forward, then every backward; 1F1B and
    ZB-H1 run p - s - 1 warm-up forwards on rank s then alternate one forward / one backward;
    interleaved uses Megatron-LM's order ((p - s - 1) * 2 + (v - 1) * p warm-up passes, chunk k of
    microbatch group g in turn). Each pass starts when its rank is free and its input is ready (the
    previous rank's forward / the next rank's backward of the same microbatch and chunk).

    Blocks per rank: 2 m v (F and B for every microbatch and chunk), or 3 m for zero-bubble.
    The makespan minus a rank's busy time is the bubble: (p - 1) * 3 for GPipe and 1F1B,
    (p - 1) * 3 / v interleaved, (p - 1) for ZB-H1 -- the planner's bubble in units of T_F.

    Args:
        pp: pipeline stages (>= 1).
        microbatches: microbatches per step (>= 1).
        schedule: ``gpipe``, ``1f1b``, ``interleaved``, ``zero-bubble`` or ``dualpipe``, which is drawn as
            ZB-H1 (one of its two directions, with the same split of the weight gradients; the planner prices
            its own bubble, (p/2 - 1) x 2/3 microbatch times, :func:`shardplan.cost.pipeline.bubble_fraction`).
        virtual_stages: model chunks per rank (> 1 only with ``interleaved``).

    Returns:
        The blocks, in the order they were scheduled.

    Raises:
        ConfigError: unknown schedule, a degree < 1, virtual_stages > 1 without ``interleaved``, or
            interleaved with microbatches not divisible by pp.
    """
    _check_schedule(pp, microbatches, schedule, virtual_stages)
    if schedule == "dualpipe":  # drawn as ZB-H1: one direction of its bidirectional schedule (docstring)
        schedule = "zero-bubble"
    v = virtual_stages if schedule == "interleaved" else 1
    zb = schedule == "zero-bubble"
    dur = {"F": 1.0 / v, "B": (1.0 if zb else 2.0) / v, "W": 1.0}
    return _Simulation(rank_orders(pp, microbatches, schedule, v), dur, v, zb).run()


def pipeline_bubble_units(blocks: Sequence[PipelineBlock]) -> float:
    """Idle time of the least busy rank: makespan minus that rank's busy time (schedule units).

    Every rank runs the same passes, so this is each rank's idle time; divided by the makespan it
    is the bubble fraction (p - 1) / (m + p - 1) of GPipe / 1F1B (Narayanan et al. 2021 Sec. 2.2.1).
    """
    if not blocks:
        return 0.0
    makespan = max(b.end for b in blocks)
    busy: dict[int, float] = {}
    for b in blocks:
        busy[b.stage] = busy.get(b.stage, 0.0) + b.duration
    return makespan - min(busy.values())


__all__ = ["SCHEDULES", "PipelineBlock", "pipeline_schedule", "pipeline_bubble_units", "rank_orders"]
