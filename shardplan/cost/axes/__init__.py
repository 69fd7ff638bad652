"""Communication of each parallel axis, one module per axis (tp, cp, ep, pp, dp).

Each module's ``collectives(ctx)`` returns the typed
:class:`~shardplan.cost.collective.Collective` records of its axis for one step of the slowest
pipeline stage (:class:`~shardplan.cost.context.StepContext`); the per-layer ones come from a
schedule written as labelled data (:class:`LayerCall`: which collective, which pass, which tensor),
so their counts are the length of that table and ``docs/cost_model.md`` prints the table itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class LayerCall:
    """One collective of a per-layer (or per-microbatch) schedule.

    Attributes:
        op: AllReduce / AllGather / ReduceScatter / AllToAll / SendRecv.
        phase: 'fwd' or 'bwd' (the pass it belongs to).
        what: which tensor, at which point of the layer (documentation).
    """

    op: str
    phase: str
    what: str


def recomputed(calls: tuple[LayerCall, ...]) -> tuple[LayerCall, ...]:
    """The forward calls of ``calls`` again, run in the backward pass by full recompute
    (Korthikanti et al. 2022 Sec. 5: recomputing a layer repeats its forward collectives)."""
    return tuple(LayerCall(c.op, "bwd", f"{c.what} (recomputed)") for c in calls if c.phase == "fwd")


def tally(calls: tuple[LayerCall, ...]) -> list[tuple[str, str, int]]:
    """``(op, phase, calls)`` per distinct op and phase of a schedule, in first-seen order."""
    counts = Counter((c.op, c.phase) for c in calls)
    return [(op, phase, n) for (op, phase), n in counts.items()]


def markdown_table(calls: tuple[LayerCall, ...]) -> str:
    """A schedule as a Markdown table (op, pass, tensor), for docs/cost_model.md."""
    rows = ["| op | pass | tensor |", "|---|---|---|"]
    rows += [f"| {c.op} | {c.phase} | {c.what} |" for c in calls]
    return "\n".join(rows)
