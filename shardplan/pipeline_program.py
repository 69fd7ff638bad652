"""The pipeline schedules the JAX runtime executes, as static programs (pure Python / numpy, no JAX).

:mod:`shardplan.jax.pipeline` runs them; :mod:`shardplan.crosscheck.deltas` counts their
collectives from the same functions. Sources: Narayanan et al. 2021 ("Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM"), Sec. 2.2.1 (1F1B, PipeDream-Flush)
and Sec. 2.2.2 (interleaved 1F1B); the per-rank orders are the planner's
(:func:`shardplan.cost.pipeline_schedule.rank_orders`).

Both are lock-steps of *slots*: in a slot every rank runs at most one pass (one forward or one
backward of one microbatch through one stage, or through one model chunk when interleaved), then
the outputs move by ``ppermute``; a pass may start once its input was produced in an earlier slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from shardplan.cost.pipeline_schedule import Pass, rank_orders


def one_f_one_b_slots(pp: int, m: int) -> int:
    """Half-tick slots of the executed 1F1B schedule, ``2 (m + pp - 1)`` (one forward or one
    backward of one microbatch through one stage per slot, t_b = t_f in the lock-step)."""
    return 2 * (m + pp - 1)


def one_f_one_b_work(pp: int, m: int, stage: Any, t: Any) -> tuple[Any, Any, Any, Any]:
    """What stage ``stage`` does in slot ``t`` of the executed 1F1B schedule.

    The forward of microbatch ``i`` on stage ``k`` runs in slot ``k + 2 i`` and its backward in
    slot ``2 pp - 1 - k + 2 i``: forwards and backwards of a stage alternate on the two slot
    parities, so each stage does ``pp - k - 1`` warm-up forwards, then one forward / one backward,
    then the cool-down backwards -- PipeDream-Flush's 1F1B order (Narayanan et al. 2021,
    "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", Sec. 2.2.1;
    :func:`shardplan.cost.pipeline_schedule.rank_orders` '1f1b'), with at most ``min(m, pp - k)``
    microbatches in flight on stage ``k``.

    Args:
        pp, m: stages and microbatches.
        stage, t: ints or int32 arrays (stage index, slot in ``0 .. 2 (m + pp - 1) - 1``).

    Returns:
        ``(is_forward, forward_microbatch, is_backward, backward_microbatch)``; a microbatch index
        is meaningful only where its flag is True (neither: a bubble slot).
    """
    f, b = t - stage, t - (2 * pp - 1 - stage)
    fi, bi = f // 2, b // 2
    return (f % 2 == 0) & (fi >= 0) & (fi < m), fi, (b % 2 == 0) & (bi >= 0) & (bi < m), bi


def one_f_one_b_permutation(pp: int, parity: int) -> list[tuple[int, int]]:
    """The ``ppermute`` pairs after a slot of parity ``parity``: stages ``k = parity (mod 2)``
    ran a forward and send their output to ``k + 1``, the others ran a backward and send the
    input cotangent to ``k - 1`` (one send per stage and slot; the first and last stage's
    outward sends are dropped)."""
    fwd = [(k, k + 1) for k in range(pp - 1) if k % 2 == parity]
    bwd = [(k, k - 1) for k in range(1, pp) if k % 2 != parity]
    return fwd + bwd


#: ``ppermute`` pairs ``(source, target)`` of one slot.
Pairs = tuple[tuple[int, int], ...]


def one_f_one_b_sends(pp: int, m: int, t: int) -> Pairs:
    """The sends after slot ``t`` of the executed 1F1B: ``(k, k + 1)`` for every stage ``k < pp - 1``
    that ran a forward in slot ``t``, ``(k, k - 1)`` for every stage ``k > 0`` that ran a backward
    (:func:`one_f_one_b_work`); bubble slots send nothing. A subset of
    :func:`one_f_one_b_permutation` of the slot's parity."""
    out = []
    for k in range(pp):
        is_f, _, is_b, _ = one_f_one_b_work(pp, m, k, t)
        if is_f and k < pp - 1:
            out.append((k, k + 1))
        if is_b and k > 0:
            out.append((k, k - 1))
    return tuple(out)


def one_f_one_b_runs(pp: int, m: int) -> list[tuple[int, int, Pairs, Pairs]]:
    """The ``m + pp - 1`` ticks (two slots each) of the executed 1F1B grouped into runs of
    consecutive ticks with the same sends: ``(start, stop, even, odd)``, ticks ``start .. stop - 1``
    sending :func:`one_f_one_b_sends` ``even`` after slot ``2 j`` and ``odd`` after slot ``2 j + 1``.

    Every stage sends only real work, as Megatron-LM's 1F1B does (``send_forward`` is skipped on the
    last stage and ``send_backward`` on the first, ``megatron/core/pipeline_parallel/schedules.py``):
    per step a stage sends ``m`` activations forward (``k < pp - 1``) and ``m`` cotangents backward
    (``k > 0``). E.g. pp = 2, m = 4: ``[(0, 1, ((0, 1),), ()), (1, 4, ((0, 1), (1, 0)), ()),
    (4, 5, ((1, 0),), ())]`` (the warm-up forward, the steady state, the last backward).
    """
    runs: list[tuple[int, int, Pairs, Pairs]] = []
    for j in range(m + pp - 1):
        sends = (one_f_one_b_sends(pp, m, 2 * j), one_f_one_b_sends(pp, m, 2 * j + 1))
        if runs and runs[-1][2:] == sends:
            runs[-1] = (runs[-1][0], j + 1, *sends)
        else:
            runs.append((j, j + 1, *sends))
    return runs


@dataclass(frozen=True)
class InterleavedTable:
    """The static lock-step program of the executed interleaved 1F1B (:func:`interleaved_table`).

    Attributes:
        kind, mb, chunk: ``(T, pp)`` int32: what rank ``k`` does in slot ``t`` -- 0 idle, 1 the
            forward, 2 the backward of microbatch ``mb`` through its model chunk ``chunk`` (virtual
            stage ``chunk * pp + k``).
        in_row, cot_row: ``(T, pp)`` int32: the row of the rank's input buffer holding that pass's
            chunk input (a forward reads it, a backward recomputes from it) and of its cotangent
            buffer holding the output cotangent (backwards below the last virtual stage).
        recv_f, recv_f_row: ``(T, pp)``: whether rank ``k`` keeps what the forward (``k - 1 -> k``,
            cyclic) ``ppermute`` delivers after slot ``t`` (the input of one of its chunks), and the
            input-buffer row it goes to.
        recv_b, recv_b_row: the same for the backward ``ppermute`` (``k + 1 -> k``, an output
            cotangent) and the cotangent buffer.
        rows_in, rows_cot: rows of the two buffers: the most chunk inputs / cotangents a rank holds
            at once (rows are reused as soon as their pass has read them).
    """

    kind: np.ndarray
    mb: np.ndarray
    chunk: np.ndarray
    in_row: np.ndarray
    cot_row: np.ndarray
    recv_f: np.ndarray
    recv_f_row: np.ndarray
    recv_b: np.ndarray
    recv_b_row: np.ndarray
    rows_in: int
    rows_cot: int


def _lockstep(pp: int, m: int, v: int) -> list[list[Pass | None]]:
    """Per slot and rank the pass run (``(kind, microbatch, chunk)`` or None): each rank takes the
    next pass of Megatron's interleaved order (:func:`shardplan.cost.pipeline_schedule.rank_orders`)
    as soon as its input was produced in an earlier slot (one slot per pass, t_b = t_f)."""
    orders, nv = rank_orders(pp, m, "interleaved", v), pp * v
    done: dict[tuple[str, int, int], int] = {}
    pos, slots = [0] * pp, []
    while any(pos[k] < len(orders[k]) for k in range(pp)):
        t, row = len(slots), []
        for k in range(pp):
            work = orders[k][pos[k]] if pos[k] < len(orders[k]) else None
            if work is not None:
                kind, i, c = work
                j = c * pp + k
                need = (("F", j - 1, i) if j > 0 else None) if kind == "F" else (
                    ("B", j + 1, i) if j < nv - 1 else ("F", j, i))
                work = work if need is None or done.get(need, t) < t else None
            row.append(work)
        for k, work in enumerate(row):
            if work is not None:
                done[(work[0], work[2] * pp + k, work[1])] = t
                pos[k] += 1
        slots.append(row)
        assert t < 4 * (m * v + pp) * 2, "interleaved lock-step did not finish"
    return slots


def _assign_rows(intervals: dict[int, list[tuple[float, float, Any]]]
                 ) -> tuple[dict[tuple[int, Any], int], int]:
    """Buffer rows by interval colouring: per rank, ``(written, read, key)`` intervals sorted by
    write time each take the lowest row free again (its last occupant read before this write).
    Returns ``({(rank, key): row}, rows)``, rows = the most intervals live at once on a rank."""
    rows: dict[tuple[int, Any], int] = {}
    most = 1
    for k, ivs in intervals.items():
        free_at: list[float] = []  # per row, the read time of its last occupant
        for start, end, key in sorted(ivs, key=lambda x: x[0]):
            row = next((r for r, f in enumerate(free_at) if f < start), len(free_at))
            free_at[row:row + 1] = [end]
            rows[(k, key)] = row
        most = max(most, len(free_at))
    return rows, most


def interleaved_table(pp: int, m: int, v: int) -> InterleavedTable:
    """The executed interleaved 1F1B (Narayanan et al. 2021 Sec. 2.2.2; Megatron-LM's
    ``forward_backward_pipelining_with_interleaving``) as a static table: :func:`_lockstep` slots,
    what each rank keeps of the two ``ppermute``-s after each slot, and the buffer rows.

    Args:
        pp, m, v: ranks, microbatches (a multiple of pp), model chunks per rank.
    """
    slots, nv = _lockstep(pp, m, v), pp * v
    when = {(w[0], w[2] * pp + k, w[1]): t for t, row in enumerate(slots) for k, w in enumerate(row) if w}
    live_in: dict[int, list] = {}
    live_cot: dict[int, list] = {}
    for (kd, j, i), t in when.items():  # (written, read) of every chunk input and output cotangent
        if kd == "F" and j < nv - 1:
            live_in.setdefault((j + 1) % pp, []).append((t + 0.5, when[("B", j + 1, i)], (j + 1, i)))
        if kd == "F" and j == 0:
            live_in.setdefault(0, []).append((t - 0.5, when[("B", 0, i)], (0, i)))
        if kd == "B" and j > 0:
            live_cot.setdefault((j - 1) % pp, []).append((t + 0.5, when[("B", j - 1, i)], (j - 1, i)))
    in_rows, n_in = _assign_rows(live_in)
    cot_rows, n_cot = _assign_rows(live_cot)
    T = len(slots)
    kind, mb, chunk, in_row, cot_row, rf, rfr, rb, rbr = (np.zeros((T, pp), np.int32) for _ in range(9))
    for t, row in enumerate(slots):
        for k, w in enumerate(row):
            if w is None:
                continue
            (kd, i, c), j = w, w[2] * pp + k
            kind[t, k], mb[t, k], chunk[t, k] = (1 if kd == "F" else 2), i, c
            in_row[t, k] = in_rows[(k, (j, i))]
            cot_row[t, k] = cot_rows.get((k, (j, i)), 0)
            if kd == "F" and j < nv - 1:
                dst = (k + 1) % pp
                rf[t, dst], rfr[t, dst] = 1, in_rows[(dst, (j + 1, i))]
            if kd == "B" and j > 0:
                dst = (k - 1) % pp
                rb[t, dst], rbr[t, dst] = 1, cot_rows[(dst, (j - 1, i))]
    return InterleavedTable(kind, mb, chunk, in_row, cot_row, rf.astype(bool), rfr, rb.astype(bool), rbr,
                            n_in, n_cot)


def interleaved_runs(tbl: InterleavedTable, v: int) -> list[tuple[int, int, Pairs, Pairs]]:
    """The slots of an :func:`interleaved_table` grouped into runs of consecutive slots with the
    same sends: ``(start, stop, forward, backward)``; ``forward`` holds ``(k, k + 1 mod pp)`` for
    every rank whose forward pass in the slot is not of the last virtual stage, ``backward``
    ``(k, k - 1 mod pp)`` for every rank whose backward pass is not of virtual stage 0 (bubble
    slots send nothing, as in Megatron-LM's interleaved schedule)."""
    T, pp = tbl.kind.shape
    runs: list[tuple[int, int, Pairs, Pairs]] = []
    for t in range(T):
        j = tbl.chunk[t] * pp + np.arange(pp)
        fwd = tuple((k, (k + 1) % pp) for k in range(pp) if tbl.kind[t, k] == 1 and j[k] < v * pp - 1)
        bwd = tuple((k, (k - 1) % pp) for k in range(pp) if tbl.kind[t, k] == 2 and j[k] > 0)
        if runs and runs[-1][2:] == (fwd, bwd):
            runs[-1] = (runs[-1][0], t + 1, fwd, bwd)
        else:
            runs.append((t, t + 1, fwd, bwd))
    return runs


__all__ = ["InterleavedTable", "Pairs", "interleaved_runs", "interleaved_table", "one_f_one_b_permutation",
           "one_f_one_b_runs", "one_f_one_b_sends", "one_f_one_b_slots", "one_f_one_b_work"]
