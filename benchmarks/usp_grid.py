"""The planner against a grid of measured runs on one cluster and framework (the Ultra-Scale
Playbook's nanotron runs on 8x H100 nodes with EFA; ``shared/calibration/usp_h100_grid_1b_8b.csv``).

For every run: is the layout accepted, is it predicted to fit, predicted vs measured tokens/s per GPU
and peak memory. Metrics: median |error| of tokens/s/GPU, Spearman rank
correlation of predicted vs measured throughput within each (model, nodes) group, fit/OOM
classification accuracy over all rows, median |error| of peak memory, layouts that ran but were
refused. ``--fit`` fits the profile's free parameters (``shardplan.fitting``) and reports
leave-one-model-out figures (fit on one model, score on the other).

Usage: python benchmarks/usp_grid.py [--csv PATH] [--hardware FILE] [--framework nanotron]
       [--fit [-o cluster.yaml] [--profile-out profile.yaml]] [--doc docs/accuracy.md] [--out FILE]
       [--to-records runs.jsonl]

``--doc`` rewrites only the block between ``<!-- usp-grid:start -->`` and ``<!-- usp-grid:end -->``;
``--to-records`` writes the runs as :class:`shardplan.records.RunRecord` JSON Lines and exits.
"""

from __future__ import annotations

import argparse
import datetime
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

import numpy as np
import yaml
from scipy.stats import spearmanr

from shardplan.cost.comm import group_split
from shardplan.cost.memory import fit_allocator_terms, memory_for_stage
from shardplan.cost.pipeline import boundary_message_bytes
from shardplan.cost.step import Estimate, estimate
from shardplan.errors import ConfigError
from shardplan.fitting import Parameter, apply, choose_usable_hbm_fraction, fit, usage_point
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.record_import import import_csv, parse_map_items
from shardplan.records import RunRecord, write_records
from shardplan.specs.framework import PP_STALL_TRIGGERS, FrameworkProfile
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

ROOT = Path(__file__).resolve().parents[1]
SHARED_CSV = ROOT.parent / "shared" / "calibration" / "usp_h100_grid_1b_8b.csv"
DEFAULT_CSV = SHARED_CSV if SHARED_CSV.exists() else ROOT / "shardplan" / "data" / "usp_h100_grid_1b_8b.csv"
DEFAULT_HW = ROOT / "shardplan" / "data" / "clusters" / "usp-h100-efa.yaml"
SEQ_LEN = 4096

#: how the CSV becomes run records (``shardplan record import --map``); its ``values.model`` holds the
#: grid's model shapes (1B and 8B, plus 3B and 70B as the playbook lists them), the one place they live
GRID_MAP = ROOT / "shardplan" / "data" / "usp_grid_map.yaml"
GRID_MODELS = {k: ModelSpec(**v) for k, v in yaml.safe_load(GRID_MAP.read_text())["values"]["model"].items()}


@dataclass(frozen=True)
class GridRun:
    """One measured run: its layout and outcome (``tok_s_gpu`` / ``mem_bytes`` None if it failed)."""

    model: str
    nodes: int
    parallel: ParallelConfig
    global_batch_size: int
    tok_s_gpu: float | None
    mem_bytes: float | None

    @property
    def ran(self) -> bool:
        """The run finished (the CSV has numbers, not nan)."""
        return self.tok_s_gpu is not None

    @property
    def devices(self) -> int:
        """GPUs: 8 per node."""
        return 8 * self.nodes

    @property
    def group(self) -> tuple[str, int]:
        """(the plot's model label, nodes): the ranking group. A variant's label is the plot's with a suffix
        ("80B-gqa8", a run of the playbook's "80B" plot with 8 KV heads) and ranks with its plot's runs."""
        return self.model.split("-")[0], self.nodes


def load_grid(path: Path) -> list[GridRun]:
    """The CSV's rows as runs, read by the generic CSV import with :data:`GRID_MAP` (:func:`to_records`):
    nanotron's settings (shared README: TP always with sequence parallelism and asynchronous TP
    communication, 1F1B, no recompute) and the batch each run used, dp x mbs x grad_acc (20 rows
    have a ``gbs`` column that disagrees with it)."""
    key = {spec.name: k for k, spec in GRID_MODELS.items()}
    records = to_records(path)
    for i, r in enumerate(records):
        p = r.parallel
        if r.devices % 8 or p.dp * p.tp * p.pp * p.cp != r.devices:
            raise ConfigError(f"{path} row {i + 1}: nodes x 8 = {r.devices} GPUs, dp x tp x pp = "
                              f"{p.dp * p.tp * p.pp * p.cp}; legal: a whole number of 8-GPU nodes equal to dp x tp x pp",
                              field="nodes", value=r.devices / 8)
    return [GridRun(key[r.model.name], r.devices // 8, r.parallel, r.global_batch_size,  # type: ignore[union-attr]
                    r.tokens_per_s_per_device, r.peak_memory_bytes) for r in records]


def training_for(run: GridRun, profile: FrameworkProfile) -> TrainingSpec:
    """bf16 with fp32 gradient accumulation (the profile's buffer), flash attention, seq 4096."""
    return TrainingSpec(seq_len=SEQ_LEN, global_batch_size=run.global_batch_size,
                        precision=PRECISION_POLICIES["bf16-mixed"], framework=profile)


def predict(run: GridRun, hw: HardwareSpec, profile: FrameworkProfile) -> Estimate | str:
    """The planner's estimate for one run, or the refusal message."""
    if run.model not in GRID_MODELS:
        raise SystemExit(f"model {run.model!r} is not in GRID_MODELS ({', '.join(GRID_MODELS)}); add its shapes")
    try:
        return estimate(GRID_MODELS[run.model], hw, training_for(run, profile), run.parallel, run.devices)
    except ConfigError as e:
        return str(e)


def measured_peak(e: Estimate) -> float:
    """The predicted counterpart of the CSV's ``gpu_mem_gb``: the caching allocator's peak
    (``torch.cuda.max_memory_reserved``) of pipeline rank 0 (nanotron logs world rank 0), bytes."""
    return memory_for_stage(e.model, e.training, e.layout, 0).allocator_peak


def score(runs: list[GridRun], preds: list[Estimate | str]) -> dict:
    """Issue 9's metrics over ``runs`` (see module docstring)."""
    err, mem_err, correct, refused = [], [], 0, 0
    groups: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for run, e in zip(runs, preds):
        if isinstance(e, str):
            refused += run.ran
            correct += not run.ran
            continue
        correct += run.ran == e.runs
        if run.ran:
            pred = e.tokens_per_s / e.layout.n_devices
            err.append(pred / run.tok_s_gpu - 1)
            if run.mem_bytes:  # a run may report throughput without its peak
                mem_err.append(measured_peak(e) / run.mem_bytes - 1)
            groups[run.group].append((pred, run.tok_s_gpu))
    rho = {k: spearman(*zip(*v)) for k, v in sorted(groups.items()) if len(v) >= 3}
    ranked = [r for r in rho.values() if not math.isnan(r)]  # identical runs give no ranking

    med = _median_or_nan
    return {"runs": len(runs), "ran": sum(r.ran for r in runs), "refused": refused,
            "median_abs_err": med([abs(x) for x in err]), "median_err": med(err),
            "within_15": sum(abs(x) <= 0.15 for x in err) / len(err) if err else math.nan,
            "spearman": rho, "spearman_min": min(ranked, default=math.nan),
            "spearman_median": med(ranked),
            "fit_accuracy": correct / len(runs) if runs else math.nan,
            "mem_median_abs_err": med([abs(x) for x in mem_err]), "mem_median_err": med(mem_err)}


#: a run whose measured step exceeds the prediction by more than this per microbatch (seconds) is
#: counted as stalled: the excess per microbatch is bimodal on the grid (624 of 1,027 runs within
#: +-0.1 s, a second mode at 0.9-1.3 s with 85 runs, few between 0.1 and 0.3 s)
STALL_S_PER_MICROBATCH = 0.3


def stalled(run: GridRun, free: Estimate) -> bool:
    """The run's measured step exceeds ``free``, its prediction without the message stall
    (:func:`stall_free`), by more than :data:`STALL_S_PER_MICROBATCH` per microbatch."""
    measured = run.global_batch_size * SEQ_LEN / (run.tok_s_gpu * run.devices)
    return (measured - free.step_s) / free.layout.microbatches > STALL_S_PER_MICROBATCH


def stall_free(profile: FrameworkProfile) -> FrameworkProfile:
    """``profile`` without the pipeline message stall."""
    return profile.model_copy(update={"pp_message_stall_s": 0.0})


def _labelled(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, keep) -> list[tuple[GridRun, Estimate, bool]]:
    """The pipelined runs that ran and pass ``keep``, each with its stall-free estimate and whether it
    is :func:`stalled` against it."""
    free = stall_free(profile)
    out = []
    for r in runs:
        if r.ran and r.parallel.pp > 1 and keep(r):
            e = predict(r, hw, free)
            if not isinstance(e, str):
                out.append((r, e, stalled(r, e)))
    return out


def _majority_threshold(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, key, keep) -> int | None:
    """The smallest value of ``key(run)`` from which, at every larger value too, more than half of the
    pipelined runs that ran (and pass ``keep``) are :func:`stalled` against the stall-free
    prediction; None if no value qualifies. The stall is then predicted where it is the likelier
    outcome."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for r, _, s in _labelled(runs, hw, profile, keep):
        counts[key(r)][0] += s
        counts[key(r)][1] += 1
    threshold = None
    for k in sorted(counts, reverse=True):
        if 2 * counts[k][0] <= counts[k][1]:
            break
        threshold = k
    return threshold


def _stump(points: list[tuple[int, bool]]) -> int | None:
    """A decision stump: the threshold ``t`` for which "stalled if and only if value >= t" misclassifies
    the fewest of ``points`` (value, stalled); None when predicting no stall at all does as well."""
    best, best_err = None, sum(s for _, s in points)
    for t in sorted({v for v, _ in points}):
        err = sum((v >= t) != s for v, s in points)
        if err < best_err:
            best, best_err = t, err
    return best


def _zero0_dp(run: GridRun) -> bool:
    """ZeRO-0 with data parallelism: nanotron wraps the model in PyTorch DDP and replicates the optimizer."""
    return run.parallel.zero_stage == 0 and run.parallel.dp > 1


def stall_zero0(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> tuple[int | None, int]:
    """``pp_stall_zero0_min_microbatches`` and ``pp_stall_zero0_min_nodes`` by decision stumps
    (:func:`_stump`) over the pipelined ZeRO-0 runs with dp > 1 on two nodes or more: first the
    microbatch count, then the node count among the runs at or above it; (None, 1) when the runs show
    no such stall (the node-count rule then covers them)."""
    rows = _labelled(runs, hw, profile, lambda r: _zero0_dp(r) and r.nodes >= 2)
    m_min = _stump([(e.layout.microbatches, s) for _, e, s in rows])
    if m_min is None:
        return None, 1
    n_min = _stump([(r.nodes, s) for r, e, s in rows if e.layout.microbatches >= m_min])
    return (None, 1) if n_min is None else (m_min, n_min)


def stall_nodes(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> int:
    """``pp_stall_min_nodes`` by majority over the job's node count (:func:`_majority_threshold`),
    leaving out the ZeRO-0 runs with dp > 1 when ``profile`` has their own rule
    (``pp_stall_zero0_min_microbatches``); the largest node count + 1 if none qualifies."""
    own = profile.pp_stall_zero0_min_microbatches is not None
    found = _majority_threshold(runs, hw, profile, lambda r: r.nodes, lambda r: not (own and _zero0_dp(r)))
    return found if found is not None else max((r.nodes for r in runs), default=0) + 1


def stall_tp_nodes(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> int | None:
    """``pp_stall_min_tp_nodes`` by majority over the nodes the tp group spans (``group_split`` of tp
    at stride 1, as the planner counts it), among the runs below ``profile.pp_stall_min_nodes`` nodes;
    None if no span qualifies."""
    return _majority_threshold(runs, hw, profile, lambda r: group_split(r.parallel.tp, 1, hw.scale_up_size)[1],
                               lambda r: r.nodes < profile.pp_stall_min_nodes)


def _message_bytes(e: Estimate) -> float:
    """The run's stage-boundary message as the stall rule sees it (:func:`boundary_message_bytes`), 0 for a
    microbatch of fewer sequences than the profile's ``pp_stall_min_sequences`` (not fitted: the grid cannot
    tell it from the message size, FrameworkProfile's docstring)."""
    if e.layout.parallel.microbatch_size < (e.training.framework.pp_stall_min_sequences or 1):
        return 0.0
    return boundary_message_bytes(e.layout, e.model.d_model, e.training.precision.activation_bytes)


#: the profile's stall triggers and OOM fraction (:func:`oom_fraction`) that :func:`fit_on` chooses on the training
#: runs (and ``--profile-out`` writes)
STALL_FIELDS = (*PP_STALL_TRIGGERS, "usable_hbm_fraction")

#: a partial stall rule replaces the whole node-count trigger only if it classifies this many more runs
#: right (out of ~640 pipelined runs; a threshold that moves a handful of runs is not kept)
MIN_STALL_GAIN = 5


def stall_partial(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile
                  ) -> tuple[int, int | None, int | None, float | None]:
    """``pp_stall_min_nodes`` again, with ``pp_stall_all_nodes``, ``pp_stall_min_dp`` and
    ``pp_stall_min_message_bytes``: over the pipelined runs the node-count trigger covers (neither
    under the ZeRO-0 rule nor the tp-span one), the thresholds of "stalls if nodes >= min_nodes and
    (nodes >= all_nodes, or dp >= min_dp, or message >= min_message)" (the last three may be absent)
    that misclassify the fewest runs, by exhaustive search over the values the runs take. The
    profile's own ``pp_stall_min_nodes`` (:func:`stall_nodes`) with the whole trigger stays unless
    a rule misclassifies more than :data:`MIN_STALL_GAIN` fewer runs; among rules within that margin
    of each other the first found, with the fewest conditions, is kept."""
    own = profile.pp_stall_zero0_min_microbatches is not None
    span = profile.pp_stall_min_tp_nodes

    def covered(r: GridRun) -> bool:
        tp_nodes = group_split(r.parallel.tp, 1, hw.scale_up_size)[1]
        return not (own and _zero0_dp(r)) and not (span is not None and tp_nodes >= span)

    rows = [(r.nodes, r.parallel.dp, _message_bytes(e), s) for r, e, s in _labelled(runs, hw, profile, covered)]
    if not rows:
        return profile.pp_stall_min_nodes, None, None, None
    n, dp, msg, stalled_ = (np.array(col) for col in zip(*rows))
    best = (profile.pp_stall_min_nodes, None, None, None)
    best_err = int(((n >= best[0]) != stalled_).sum())
    cand = [sorted(set(col.tolist())) for col in (n, dp, msg)]
    options = [(n0, a, b, c) for n0 in cand[0] for a in cand[0] if a > n0
               for b in [None] + cand[1] for c in [None] + cand[2]]
    for n0, a, b, c in sorted(options, key=lambda o: sum(x is not None for x in o)):
        cond = n >= a
        if b is not None:
            cond |= dp >= b
        if c is not None:
            cond |= msg >= c
        err = int(((n >= n0) & cond != stalled_).sum())
        if err < best_err - MIN_STALL_GAIN:
            best, best_err = (n0, a, b, c), err
    return best


def pick_report(runs: list[GridRun], preds: list[Estimate | str]) -> str:
    """What following the ranking would have given, per (model, nodes) group: the measured throughput
    of the layout predicted fastest (among those predicted to run) as a share of the group's best
    measured run, and the best of the three predicted fastest ('failed' when the pick did not run)."""
    groups: dict[tuple, list[tuple[float, GridRun]]] = defaultdict(list)
    best: dict[tuple, float] = defaultdict(float)
    for run, e in zip(runs, preds):
        if run.ran:
            best[run.group] = max(best[run.group], run.tok_s_gpu)
        if not isinstance(e, str) and e.runs:
            groups[run.group].append((e.tokens_per_s / e.layout.n_devices, run))
    lines = ["| model | nodes | predicted fastest: measured / best measured | best of the top 3 |", "|---|---|---|---|"]
    for key in sorted(groups):
        if not best[key]:
            continue
        top = [r for _, r in sorted(groups[key], key=lambda x: -x[0])[:3]]
        share = (lambda r: f"{r.tok_s_gpu / best[key]:.0%}" if r.ran else "failed")
        top3 = max((r.tok_s_gpu for r in top if r.ran), default=0.0) / best[key]
        lines.append(f"| {key[0]} | {key[1]} | {share(top[0])} | {top3:.0%} |")
    return "\n".join(lines)


def stall_report(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> str:
    """Where the runs that lose a near-constant time per microbatch are (measured against the
    stall-free prediction): counts per (nodes, ZeRO-0 or not, pipelined or not), and the median
    |error| of tokens/s/GPU of the full profile without them. The profile's message stall
    (``pp_message_stall_s`` from ``pp_stall_min_nodes`` on) models the pipelined ones where they are
    the majority; the others show as over-predictions."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    kept, every = [], []
    free = stall_free(profile)
    for run in runs:
        e0, e = (predict(run, hw, free), predict(run, hw, profile)) if run.ran else (None, None)
        if e0 is None or isinstance(e0, str) or isinstance(e, str):
            continue
        s = stalled(run, e0)
        key = (run.nodes, "0" if run.parallel.zero_stage == 0 else ">=1", "yes" if run.parallel.pp > 1 else "no")
        counts[key][0] += s
        counts[key][1] += 1
        err = abs(e.tokens_per_s / e.layout.n_devices / run.tok_s_gpu - 1)
        every.append(err)
        if not s:
            kept.append(err)
    n_stalled = len(every) - len(kept)
    lines = [f"Stalled runs (measured step > stall-free prediction + {STALL_S_PER_MICROBATCH} s per microbatch): "
             f"{n_stalled} of {len(every)} that ran. tokens/s/GPU median |error| without them "
             f"{_f(_median_or_nan(kept), '.1%')} (with them {_f(_median_or_nan(every), '.1%')}).", "",
             "| nodes | ZeRO stage | pp > 1 | stalled / ran |", "|---|---|---|---|"]
    lines += [f"| {k[0]} | {k[1]} | {k[2]} | {v[0]} / {v[1]} |" for k, v in sorted(counts.items())]
    return "\n".join(lines)


#: the nanotron profile's constants fitted on the grid (bounds keep them physical; FrameworkProfile documents each)
FIT_PARAMS = [
    Parameter("framework", "layer_host_s", 0.0, 0.02),
    Parameter("framework", "pp_tp_host_step_s", 0.0, 2e-3),
    Parameter("framework", "pp_message_stall_s", 0.0, 2.0),
    Parameter("framework", "overlap_slowdown", 0.0, 1.0),
    Parameter("framework", "tp_overlap_slowdown", 0.0, 1.0),
    Parameter("framework", "allocator_retry_s", 0.0, 5.0),
    Parameter("framework", "allocator_pressure_start", 0.7, 0.98),
    Parameter("hardware", "matmul_efficiency", 0.3, 0.9),
]
#: least-squares function evaluations per fit (each predicts every run once, ~0.3 s; the fits converge in fewer)
MAX_NFEV = 100


def throughput(run: GridRun, hw: HardwareSpec, profile: FrameworkProfile) -> float | None:
    """Predicted tokens/s per GPU (None if refused) -- the fitting predictor."""
    e = predict(run, hw, profile)
    return None if isinstance(e, str) else e.tokens_per_s / e.layout.n_devices


def oom_fraction(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> float:
    """``usable_hbm_fraction`` chosen on ``runs`` (those that ran and those that failed) by
    :func:`shardplan.fitting.choose_usable_hbm_fraction`: the fraction of HBM up to which predicting
    "runs" classifies the most runs right; 1 unless a smaller fraction classifies more than
    :data:`MIN_STALL_GAIN` more runs right."""
    whole = profile.model_copy(update={"usable_hbm_fraction": 1.0})
    points = [usage_point(predict(r, hw, whole), hw.hbm_bytes, r.ran) for r in runs]
    return choose_usable_hbm_fraction(points, MIN_STALL_GAIN)


def fit_on(train: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile
           ) -> tuple[list[float], HardwareSpec, FrameworkProfile]:
    """Fit :data:`FIT_PARAMS` on the runs of ``train`` that ran, after choosing the stall triggers on
    them (:func:`stall_zero0`, :func:`stall_nodes`, :func:`stall_tp_nodes`, :func:`stall_partial`):
    the fitted values and the fitted hardware and profile."""
    ran = [r for r in train if r.ran]
    if len(ran) < 2 * len(FIT_PARAMS):
        raise ConfigError(f"--fit: {len(ran)} runs that ran cannot identify the {len(FIT_PARAMS)} fitted constants "
                          f"({', '.join(p.field for p in FIT_PARAMS)}); legal: at least {2 * len(FIT_PARAMS)} runs "
                          "that ran", field="fit", value=len(ran))
    profile = profile.model_copy(update={"pp_stall_all_nodes": None, "pp_stall_min_dp": None,
                                         "pp_stall_min_message_bytes": None,  # chosen again below
                                         **memory_terms(train, hw, profile)})  # the memory pressure depends on them
    m_min, n_min = stall_zero0(ran, hw, profile)
    top = profile.pp_stall_zero0_max_nodes  # set, not fitted; dropped if the fitted start reaches it (no range left)
    profile = profile.model_copy(update={"pp_stall_zero0_min_microbatches": m_min, "pp_stall_zero0_min_nodes": n_min,
                                         "pp_stall_zero0_max_nodes": top if top is None or top > n_min else None})
    profile = profile.model_copy(update={"pp_stall_min_nodes": stall_nodes(ran, hw, profile)})
    profile = profile.model_copy(update={"pp_stall_min_tp_nodes": stall_tp_nodes(ran, hw, profile)})
    n0, a, b, c = stall_partial(ran, hw, profile)
    profile = profile.model_copy(update={"pp_stall_min_nodes": n0, "pp_stall_all_nodes": a, "pp_stall_min_dp": b,
                                         "pp_stall_min_message_bytes": c})
    profile = profile.model_copy(update={"usable_hbm_fraction": oom_fraction(train, hw, profile)})
    res = fit(ran, [r.tok_s_gpu for r in ran], throughput, FIT_PARAMS, hw, profile, max_nfev=MAX_NFEV)
    h, f = apply(FIT_PARAMS, res.values, hw, profile)
    return list(res.values), h, f


def fit_report(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, by_nodes: bool = False
               ) -> tuple[str, list[float], FrameworkProfile, list[tuple[str, dict]]]:
    """Fit on all runs that ran, leave-one-model-out and (``by_nodes``) leave-one-node-count-out:
    the table of fitted values and the held-out runs' metrics (the fit, the stall threshold
    included, never sees the runs it is scored on), the values fitted on all runs (FIT_PARAMS
    order), the profile fitted on all runs and the leave-one-model-out scores (label, score)."""
    lines = ["| fitted on | " + " | ".join(f"`{p.field}`" for p in FIT_PARAMS) + " | `pp_stall_min_nodes` | `pp_stall_min_tp_nodes` | ZeRO-0 stall | partial node trigger | `usable_hbm_fraction` | scored on | result |",
             "|---|" + "---|" * len(FIT_PARAMS) + "---|---|---|---|---|---|---|"]
    values, h, full = fit_on(runs, hw, profile)
    lines.append(_fit_row("all", values, full, "all", score(runs, [predict(r, h, full) for r in runs])))
    keys = [("model", lambda r: r.model)] + ([("nodes", lambda r: r.nodes)] if by_nodes else [])
    held_out = []
    for name, key in keys:
        for g in dict.fromkeys(key(r) for r in runs):
            held = [r for r in runs if key(r) == g]
            label = f"{g}" if name == "model" else f"{g} nodes"
            try:
                vals, h, f = fit_on([r for r in runs if key(r) != g], hw, profile)
            except ConfigError as e:  # too few runs left once the group is held out: say so in the table
                lines.append(f"| all but {label} | " + " | ".join("-" for _ in FIT_PARAMS) + f" | - | - | - | - | "
                             f"{label} | not fitted: {str(e).split(': ', 1)[-1].split(';')[0]} |")
                continue
            s = score(held, [predict(r, h, f) for r in held])
            lines.append(_fit_row(f"all but {label}", vals, f, label, s))
            if name == "model":
                held_out.append((f"`{hw.name}`, `{profile.name}` fitted on the other model, scored on {g} (held out)", s))
    return "\n".join(lines), values, full, held_out


def profile_overrides(profile: FrameworkProfile) -> dict:
    """The fields of ``profile`` that differ from its base preset (a profile file's own settings, e.g.
    ``allocator_base_bytes``), in YAML-safe form, so a written profile is the one that was fitted."""
    try:
        base = framework_profile(profile.name).model_dump(mode="json")
    except ConfigError:
        return {}
    own = profile.model_dump(mode="json")
    return {k: v for k, v in own.items() if k not in ("name", "sources") and base.get(k) != v}


def _sig(x: float) -> float:
    """``x`` to 6 significant digits: a fitted value without float noise (1.0, not 0.9999999999999998)."""
    return float(f"{float(x):.6g}")


def write_fitted(profile_out: Path | None, hardware_out: Path | None, values: list[float], hw: HardwareSpec,
                 profile: FrameworkProfile) -> None:
    """Write the fitted framework fields as a profile file (``--framework FILE``: ``base`` + fields)
    and the fitted hardware fields over the cluster file's own (``--hardware FILE``), with the
    fitted profile as its ``framework`` section (``--hardware FILE`` alone predicts with it)."""
    fitted = dict(zip((p.field for p in FIT_PARAMS), values))
    note = f"benchmarks/usp_grid.py --fit on {DEFAULT_CSV.name} ({datetime.date.today().isoformat()})"
    doc = {"base": profile.name, **profile_overrides(profile),
           **{p.field: _sig(fitted[p.field]) for p in FIT_PARAMS if p.target == "framework"},
           **{f: getattr(profile, f) for f in STALL_FIELDS},
           **{f: _sig(getattr(profile, f)) for f in MEMORY_FIELDS}}
    if profile_out:
        profile_out.write_text(yaml.safe_dump(doc, sort_keys=False))
        print(f"wrote {profile_out} (--framework {profile_out})")
    if hardware_out:
        base = yaml.safe_load(Path(DEFAULT_HW).read_text())
        for p in FIT_PARAMS:
            if p.target == "hardware":
                base[p.field] = _sig(fitted[p.field])
                base.setdefault("sources", {})[p.field] = note
        base["framework"] = doc  # the fitted profile: --hardware alone then predicts with it
        hardware_out.write_text(yaml.safe_dump(base, sort_keys=False))
        print(f"wrote {hardware_out} (--hardware {hardware_out})")


def spearman_ceiling(runs: list[GridRun]) -> dict[tuple, float]:
    """Per (model, nodes) group, the Spearman correlation reached by a predictor that gives every run the mean
    measured throughput of the runs with its layout apart from the ZeRO stage (dp, tp, pp, microbatch size,
    batch): the most a cost model can reach on this grid if ZeRO-0 and ZeRO-1 cost about the same there
    (their difference is an optimizer-state shard and one parameter all-gather per step; some of these pairs
    differ up to 5x). Groups with fewer than 3 runs are left out."""
    groups: dict[tuple, list[tuple[tuple, float]]] = defaultdict(list)
    for r in runs:
        if r.ran:
            p = r.parallel
            groups[r.group].append(((p.dp, p.tp, p.pp, p.microbatch_size, r.global_batch_size), r.tok_s_gpu))
    out = {}
    for g, v in sorted(groups.items()):
        if len(v) < 3:
            continue
        by: dict[tuple, list[float]] = defaultdict(list)
        for k, t in v:
            by[k].append(t)
        out[g] = spearman([statistics.mean(by[k]) for k, _ in v], [t for _, t in v])
    return out


def stall_consistent_spearman(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile
                              ) -> dict[tuple, tuple[float, int, int]]:
    """Per (model, nodes) group: the planner's Spearman over the runs whose stall it classifies right
    (predicted to stall, i.e. its step exceeds the stall-free one, exactly when the run
    :func:`stalled`), with how many runs that keeps of how many ran."""
    free = stall_free(profile)
    groups: dict[tuple, list[tuple[float, float, bool]]] = defaultdict(list)
    for r in runs:
        if not r.ran:
            continue
        e, e0 = predict(r, hw, profile), predict(r, hw, free)
        if isinstance(e, str) or isinstance(e0, str):
            continue
        right = stalled(r, e0) == (e.step_s > e0.step_s * 1.001)
        groups[r.group].append((e.tokens_per_s / e.layout.n_devices, r.tok_s_gpu, right))
    out = {}
    for k, v in sorted(groups.items()):
        kept = [(p, m) for p, m, ok in v if ok]
        if len(kept) >= 3:
            out[k] = (spearman(*zip(*kept)), len(kept), len(v))
    return out


def ceiling_report(runs: list[GridRun], s: dict, hw: HardwareSpec, profile: FrameworkProfile) -> str:
    """Markdown: the planner's Spearman per group beside :func:`spearman_ceiling` and
    :func:`stall_consistent_spearman`."""
    ceil = spearman_ceiling(runs)
    cons = stall_consistent_spearman(runs, hw, profile)
    lines = ["| model | nodes | planner | ceiling (ZeRO-0 = ZeRO-1) | planner, runs with the stall classified right |",
             "|---|---|---|---|---|"]
    lines += [f"| {m} | {n} | {_f(s['spearman'].get((m, n), float('nan')), '.2f')} | {_f(c, '.2f')} | "
              + (f"{_f(cons[(m, n)][0], '.2f')} ({cons[(m, n)][1]} of {cons[(m, n)][2]})" if (m, n) in cons else "-")
              + " |" for (m, n), c in ceil.items()]
    ceil_ok = [v for v in ceil.values() if not math.isnan(v)]
    cons_ok = [v[0] for v in cons.values() if not math.isnan(v[0])]
    if not ceil_ok or not cons_ok:  # no group with 3+ distinct runs that ran: nothing to rank
        return "\n".join(lines) + "\n\nNo (model, nodes) group has 3 or more distinct runs that ran: no ranking to score."
    return "\n".join(lines) + (f"\n\nCeiling min {min(ceil_ok):.2f}, median {statistics.median(ceil_ok):.2f}: "
                               "a model that prices ZeRO-0 and ZeRO-1 alike cannot rank the groups better than this; "
                               "the profile's ZeRO-0 stall rule (`pp_stall_zero0_min_microbatches`) is what can take a "
                               "group past it. Over the runs whose stall the profile classifies right, the planner's "
                               f"Spearman is at least {min(cons_ok):.2f} in every group: what ranking still misses is "
                               "which runs stall.")


#: the profile's memory constants :func:`fit_allocator_terms` fits (order of its result)
MEMORY_FIELDS = ("allocator_overhead", "lm_head_stage_bytes", "allocator_base_bytes")
#: fewest runs with a measured peak that the three memory constants are fitted on (:func:`fit_memory`)
MIN_MEMORY_RUNS = 6


def memory_fit_inputs(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile
                      ) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[float]]]:
    """Per model, for the runs that ran with a peak: rank 0's allocated bytes without the fitted memory
    terms, the bytes one unit of ``lm_head_stage_bytes`` adds there, and the measured peak (bytes) --
    the inputs of :func:`~shardplan.cost.memory.fit_allocator_terms`."""
    bare = profile.model_copy(update={"lm_head_stage_bytes": 0.0, "allocator_base_bytes": 0.0})
    unit = bare.model_copy(update={"lm_head_stage_bytes": 1.0})
    alloc: dict[str, list[float]] = defaultdict(list)
    basis: dict[str, list[float]] = defaultdict(list)
    meas: dict[str, list[float]] = defaultdict(list)
    for r in runs:
        e = predict(r, hw, bare)
        if r.ran and r.mem_bytes and not isinstance(e, str):
            a = memory_for_stage(e.model, e.training, e.layout, 0).allocated
            alloc[r.model].append(a)
            # what one byte per token x d_model adds on stage 0 (nothing unless it holds the LM head)
            with_unit = e.training.model_copy(update={"framework": unit})
            basis[r.model].append(memory_for_stage(e.model, with_unit, e.layout, 0).allocated - a)
            meas[r.model].append(r.mem_bytes)
    return alloc, basis, meas


def fit_memory(alloc: dict[str, list[float]], basis: dict[str, list[float]], meas: dict[str, list[float]],
               models: list[str]) -> tuple[float, float, float] | None:
    """:func:`~shardplan.cost.memory.fit_allocator_terms` on the runs of ``models`` (inputs from
    :func:`memory_fit_inputs`), or None with fewer than :data:`MIN_MEMORY_RUNS` runs (three constants
    fitted on fewer would be fitted exactly, not measured)."""
    if sum(len(alloc[m]) for m in models) < MIN_MEMORY_RUNS:
        return None
    return fit_allocator_terms(*(sum((d[m] for m in models), []) for d in (alloc, basis, meas)))


def memory_terms(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> dict[str, float]:
    """:data:`MEMORY_FIELDS` fitted on ``runs`` (all models together, :func:`fit_memory`), or {} when there
    are too few runs with a peak (the profile's own values then stay)."""
    alloc, basis, meas = memory_fit_inputs(runs, hw, profile)
    fitted = fit_memory(alloc, basis, meas, sorted(alloc))
    return {} if fitted is None else dict(zip(MEMORY_FIELDS, fitted))


def memory_lomo_report(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile) -> str:
    """Peak memory with the profile's three allocator-peak constants refitted
    (:func:`~shardplan.cost.memory.fit_allocator_terms`: ``allocator_overhead``, ``lm_head_stage_bytes``
    and ``allocator_base_bytes``) on all runs and on each model alone, scored on every model: median
    |error| of rank 0's allocator peak."""
    alloc, basis, meas = memory_fit_inputs(runs, hw, profile)
    models = sorted(alloc)
    if not models:
        return "No run that ran reports its peak memory: nothing to fit."
    groups = {"all": models, **{m: [m] for m in models}}
    lines = ["| fitted on | allocator overhead | LM-head stage B / token / d_model | allocator base GB | "
             + " | ".join(f"{m} median \\|error\\|" for m in models) + " |",
             "|---|---|---|---|" + "---|" * len(models)]
    fits = {}
    for k, ms in groups.items():
        fitted = fit_memory(alloc, basis, meas, ms)
        if fitted is None:
            n = sum(len(alloc[m]) for m in ms)
            lines.append(f"| {k} | not fitted ({n} run{'s' if n != 1 else ''} with a peak; {MIN_MEMORY_RUNS} needed) "
                         "| - | - | " + " | ".join("-" for _ in models) + " |")
        else:
            fits[k] = fitted
    for k, (f, u, c) in fits.items():
        errs = [statistics.median(abs((a + u * b + c) * (1 + f) / y - 1)
                                  for a, b, y in zip(alloc[m], basis[m], meas[m])) for m in models]
        lines.append(f"| {k} | {f:.3f} | {u:.0f} | {c / 1e9:.2f} | " + " | ".join(f"{x:.1%}" for x in errs) + " |")
    return "\n".join(lines)


def _partial(profile: FrameworkProfile) -> str:
    """The partial node-count trigger in words (``pp_stall_all_nodes`` and its two conditions)."""
    if profile.pp_stall_all_nodes is None:
        return "-"
    cond = [f"dp >= {profile.pp_stall_min_dp}"] if profile.pp_stall_min_dp is not None else []
    if profile.pp_stall_min_message_bytes is not None:
        seqs = f" of {profile.pp_stall_min_sequences}+ sequences" if (profile.pp_stall_min_sequences or 1) > 1 else ""
        cond.append(f"message >= {profile.pp_stall_min_message_bytes / 2**20:g} MiB{seqs}")
    return f"below {profile.pp_stall_all_nodes} nodes: {' or '.join(cond) or 'none'}"


def _fit_row(train: str, values: list[float], profile: FrameworkProfile, test: str, s: dict) -> str:
    below = f" (below {profile.pp_stall_zero0_max_nodes})" if profile.pp_stall_zero0_max_nodes else ""
    z0 = (f"m >= {profile.pp_stall_zero0_min_microbatches}, nodes >= {profile.pp_stall_zero0_min_nodes}{below}"
          if profile.pp_stall_zero0_min_microbatches is not None else "-")
    vals = (" | ".join(f"{v:.3g}" for v in values)
            + f" | {profile.pp_stall_min_nodes} | {profile.pp_stall_min_tp_nodes or '-'} | {z0} | {_partial(profile)}"
            + f" | {profile.usable_hbm_fraction:g}")
    return (f"| {train} | {vals} | {test} | median \\|error\\| {_f(s['median_abs_err'], '.1%')}, Spearman min "
            f"{_f(s['spearman_min'], '.2f')} / median {_f(s['spearman_median'], '.2f')}, fit/OOM {_f(s['fit_accuracy'], '.1%')} |")


def _median_or_nan(xs: list[float]) -> float:
    """The median of ``xs``, or nan when it is empty (no run both ran and was priced; shown as n/a)."""
    return statistics.median(xs) if xs else math.nan


def spearman(a, b) -> float:
    """Spearman rank correlation of ``a`` and ``b`` (scipy), nan without a warning when either is constant
    (identical runs: no ranking to score)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(a, b).statistic)


def _f(x: float, spec: str) -> str:
    """``x`` formatted with ``spec``, or 'n/a' for nan (no run to score)."""
    return "n/a" if isinstance(x, float) and math.isnan(x) else format(x, spec)


def report(name: str, s: dict) -> str:
    """One Markdown block of metrics."""
    lines = [f"**{name}**: {s['runs']} runs ({s['ran']} ran). tokens/s/GPU median |error| "
             f"{_f(s['median_abs_err'], '.1%')} (median signed {_f(s['median_err'], '+.1%')}; {_f(s['within_15'], '.0%')} within 15%); "
             f"Spearman within (model, nodes) groups: min {_f(s['spearman_min'], '.2f')}, median {_f(s['spearman_median'], '.2f')}; "
             f"fit/OOM classification {_f(s['fit_accuracy'], '.1%')}; peak memory median |error| "
             f"{_f(s['mem_median_abs_err'], '.1%')} (signed {_f(s['mem_median_err'], '+.1%')}); ran but refused: {s['refused']}.", "",
             "| model | nodes | Spearman |", "|---|---|---|"]
    lines += [f"| {m} | {n} | {_f(r, '.2f')} |" for (m, n), r in s["spearman"].items()]
    return "\n".join(lines)


def baseline_rows(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, in_sample: bool = True
                  ) -> list[tuple[str, dict]]:
    """The grid scored without calibration, beside the shipped profile:
    the ``h100-sxm`` preset with the default ``megatron`` profile; ``h100-sxm`` with the ``nanotron``
    profile's framework behaviour (loss, layer split, gradient buffer, allocator overhead) but its
    fitted time constants at 0; and the cluster file with the profile as fitted on all runs."""
    from shardplan.presets.hardware import HARDWARE
    h100 = HARDWARE["h100-sxm"]
    timeless = profile.model_copy(update={p.field: 0.0 for p in FIT_PARAMS if p.target == "framework"}
                                  | {"overlap_slowdown": None, "tp_overlap_slowdown": None})
    cases = [("`h100-sxm`, `megatron` profile (no calibration)", h100, framework_profile("megatron")),
             ("`h100-sxm`, `nanotron` behaviour, time constants 0 (uncalibrated)", h100, timeless),
             (f"`{hw.name}`, `{profile.name}` as shipped (fitted on all runs, rounded; in sample)" if in_sample else
              f"`{hw.name}`, `{profile.name}` as the cluster file gives it (fitted on other runs)", hw, profile)]
    return [(label, score(runs, [predict(r, h, f) for r in runs])) for label, h, f in cases]


def side_by_side(rows: list[tuple[str, dict]]) -> str:
    """Markdown table of the grid's metrics, one row per (label, :func:`score` result)."""
    lines = ["| predicted with | tokens/s/GPU median \\|error\\| | Spearman min / median | fit/OOM | "
             "peak memory median \\|error\\| | ran but refused |", "|---|---|---|---|---|---|"]
    lines += [f"| {label} | {_f(s['median_abs_err'], '.1%')} | {_f(s['spearman_min'], '.2f')} / {_f(s['spearman_median'], '.2f')} | "
              f"{_f(s['fit_accuracy'], '.1%')} | {_f(s['mem_median_abs_err'], '.1%')} | {s['refused']} |" for label, s in rows]
    return "\n".join(lines)


def to_records(csv_path: Path, hardware: str | None = None) -> list[RunRecord]:
    """The grid's runs as :class:`~shardplan.records.RunRecord` (issue 10's worked example), through
    the generic CSV import with the mapping :data:`GRID_MAP` (what ``shardplan record import CSV
    --map shardplan/data/usp_grid_map.yaml`` does): status 'ok' with tokens/s/GPU and peak memory
    (GB x 1e9), else 'failed' (the CSV does not say whether a failed run ran out of memory)."""
    sets = [f"hardware={hardware}"] if hardware else []
    return import_csv(csv_path, parse_map_items([str(GRID_MAP)], sets))


DOC_BEGIN, DOC_END = "<!-- usp-grid:start -->", "<!-- usp-grid:end -->"


def replace_marked_block(doc: str, text: str, begin: str, end: str, path: Path) -> str | None:
    """``doc`` with the block between ``begin`` and ``end`` replaced by ``text`` (markers kept), or None
    when ``doc`` has neither marker.

    Raises:
        ConfigError: only one of the markers, or the end marker before the start (exit 2; nothing is
            written, so no hand-written text around a broken block is lost).
    """
    has_begin, has_end = begin in doc, end in doc
    if not (has_begin or has_end):
        return None
    if has_begin != has_end or doc.index(end) < doc.index(begin):
        problem = "the end marker comes before the start marker" if has_begin and has_end else \
            f"it has {begin if has_begin else end} without {end if has_begin else begin}"
        raise ConfigError(f"{path}: {problem}; legal: a file with {begin} followed by {end}, or neither",
                          field="--doc", value=str(path))
    head, rest = doc.split(begin, 1)
    return head + f"{begin}\n{text}\n{end}" + rest.split(end, 1)[1]


def read_doc(path: Path, legal: str) -> str:
    """The text of a ``--doc`` file read as UTF-8.

    Raises:
        ConfigError: the file cannot be read or is not UTF-8 text, with ``legal`` (what the option takes; exit 2)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"--doc {str(path)!r} cannot be read as text ({e}); {legal}",
                          field="--doc", value=str(path)) from None


def check_marked_doc(path: Path, begin: str, end: str) -> str:
    """The text of ``path`` if it is a readable file with both markers in order (checked before a script's work, so
    a bad ``--doc`` costs nothing).

    Raises:
        ConfigError: a missing file, a folder, a file that is not UTF-8 text, or a file without the marked block
            (none, one marker, or the two in the wrong order; exit 2)."""
    legal = f"legal: a UTF-8 Markdown file with {begin} followed by {end} (docs/calibration.md)"
    if not path.is_file():
        raise ConfigError(f"--doc {str(path)!r} is not an existing file; {legal}", field="--doc", value=str(path))
    doc = read_doc(path, legal)
    has_begin, has_end = begin in doc, end in doc
    if not (has_begin and has_end) or doc.index(end) < doc.index(begin):
        problem = (f"has no {begin} ... {end} block" if not (has_begin or has_end) else
                   "has the end marker before the start marker" if has_begin and has_end else
                   f"has {begin if has_begin else end} without {end if has_begin else begin}")
        raise ConfigError(f"{path} {problem}; {legal}", field="--doc", value=str(path))
    return doc


def publish(text: str, path: Path | None, doc: str | None, begin: str, end: str) -> None:
    """Print ``text`` and, given ``path`` and its content ``doc`` (read and checked before the work:
    :func:`check_marked_doc`), write ``text`` between the ``begin`` / ``end`` markers of ``path``."""
    print(text)
    if path is not None and doc is not None:
        path.write_text(replace_marked_block(doc, text, begin, end, path))  # type: ignore[arg-type]


def run_script(main: Callable[[], None]) -> None:
    """Run a benchmark script's ``main``; a :class:`~shardplan.errors.ConfigError` (bad input) prints
    ``error: ...`` on stderr and exits 2, the project's bad-input code."""
    try:
        main()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


def write_doc_section(path: Path, text: str) -> None:
    """Put ``text`` between the usp-grid markers of ``path`` (docs/accuracy.md), leaving the rest of
    the file as it is; the markers and a heading are appended when the file has none.

    Raises:
        ConfigError: a file with only one marker or with the two in the wrong order
            (:func:`replace_marked_block`)."""
    doc = path.read_text() if path.exists() else ""
    new = replace_marked_block(doc, text, DOC_BEGIN, DOC_END, path)
    if new is None:
        new = (doc.rstrip("\n") + "\n\n## The measured H100 grid (nanotron, `benchmarks/usp_grid.py`)\n\n"
               + f"{DOC_BEGIN}\n{text}\n{DOC_END}\n")
    path.write_text(new)


DOC_INTRO = """Regenerated by `python benchmarks/usp_grid.py --fit --by-nodes --doc docs/accuracy.md` from
`shared/calibration/usp_h100_grid_1b_8b.csv` (the Ultra-Scale Playbook's nanotron runs on AWS p5 nodes,
hardware `shardplan/data/clusters/usp-h100-efa.yaml`, framework profile `nanotron-usp`). Memory compares the
caching allocator's peak of pipeline rank 0 under nanotron's cost-greedy layer split with `gpu_mem_gb`
read as GB = 1e9 B (nanotron logs GiB: docs/calibration.md). The profile's time constants are fitted by `shardplan.fitting` (robust least squares on
log(predicted / measured) tokens/s/GPU, bounds in `FIT_PARAMS`); the leave-one-model-out rows refit them
on one model and score the other, which is what a user with other model sizes on this cluster would get.
The same cluster's 3B and 80B runs, which no fit sees, are scored in docs/calibration.md ("The 3B and 80B runs":
`python benchmarks/usp_heldout.py --refit --doc docs/calibration.md`)."""


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse, before any work, options that need ``--fit`` without it and output paths that cannot be
    written (a folder, or a file in a folder that does not exist).

    Raises:
        ConfigError: the option and why, e.g. a ``--doc`` that is not UTF-8 text (exit 2).
    """
    if not args.fit:
        for flag, value in (("--profile-out", args.profile_out), ("-o/--hardware-out", args.hardware_out),
                            ("--by-nodes", args.by_nodes or None)):
            if value is not None:
                raise ConfigError(f"{flag} needs --fit (it writes or reports the fitted constants); legal: add --fit "
                                  f"or drop {flag}", field=flag, value=value)
    from shardplan.cli.common import check_output_path
    for flag, path in (("--out", args.out), ("--doc", args.doc), ("--to-records", args.to_records),
                       ("--profile-out", args.profile_out), ("-o/--hardware-out", args.hardware_out)):
        check_output_path(flag, path)
    if args.doc is not None and args.doc.exists():
        doc = read_doc(args.doc, "legal: a UTF-8 Markdown file (docs/accuracy.md) or a new one")
        replace_marked_block(doc, "", DOC_BEGIN, DOC_END, args.doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    ap.add_argument("--hardware", default=str(DEFAULT_HW))
    ap.add_argument("--framework", default=None,
                    help="profile name or file (default: the --hardware file's framework section, else nanotron-usp, the campaign's profile)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--fit", action="store_true", help="fit the profile's constants, with leave-one-model-out")
    ap.add_argument("--by-nodes", action="store_true", help="with --fit: also leave one node count out (7 more fits)")
    ap.add_argument("--doc", type=Path, default=None,
                    help="write the tables between the usp-grid markers of this file (docs/accuracy.md)")
    ap.add_argument("--to-records", type=Path, default=None, help="write the runs as JSON Lines run records")
    ap.add_argument("--profile-out", type=Path, default=None, help="with --fit: write the fitted profile file")
    ap.add_argument("-o", "--hardware-out", type=Path, default=None,
                    help="with --fit: write the fitted cluster file (use it with --hardware alone: its framework section "
                         "holds the fitted profile, which --framework nanotron would replace)")
    args = ap.parse_args()
    check_arguments(args)
    runs = load_grid(args.csv)
    if args.to_records:
        load_hardware(args.hardware)  # a name or file that resolves (ConfigError -> exit 2)
        from usp_versions import with_busbw  # the raw table's start-of-run bandwidths, where a run matches one row
        n = write_records(args.to_records, with_busbw(to_records(args.csv, Path(args.hardware).stem), runs))
        print(f"wrote {n} run records to {args.to_records}")
        return
    from shardplan.inputs import default_framework
    hw = load_hardware(args.hardware)
    profile = (framework_profile(args.framework) if args.framework is not None
               else default_framework(args.hardware) or framework_profile("nanotron-usp"))
    preds = [predict(r, hw, profile) for r in runs]
    if not any(r.ran and not isinstance(e, str) for r, e in zip(runs, preds)):
        raise ConfigError(f"--csv {args.csv}: no run both ran (has tok_s_gpu) and has a layout the planner prices: "
                          "nothing to score; legal: a CSV with at least one such run", field="csv", value=str(args.csv))
    scored = score(runs, preds)
    text = report(f"{profile.label} profile on {hw.name}", scored)
    text += ("\n\nThe layout the ranking picks, within each group's measured layouts (does the planner choose "
             "well?):\n\n" + pick_report(runs, preds))
    text += ("\n\nHow far ranking can go on this grid: the planner's Spearman beside the best a model reaches that "
             "prices runs differing only in the ZeRO stage alike, and over the runs whose stall it classifies "
             "right:\n\n" + ceiling_report(runs, scored, hw, profile))
    text += "\n\n" + stall_report(runs, hw, profile)
    text += "\n\nPeak memory, leave-one-model-out:\n\n" + memory_lomo_report(runs, hw, profile)
    compared = baseline_rows(runs, hw, profile, in_sample=args.csv.read_bytes() == DEFAULT_CSV.read_bytes())
    if args.fit:
        table, values, fitted, held_out = fit_report(runs, hw, profile, args.by_nodes)
        text += "\n\nThroughput constants, fitted on all runs and leave-one-group-out:\n\n" + table
        write_fitted(args.profile_out, args.hardware_out, values, hw, fitted)
        compared += held_out
    text += "\n\nSide by side, every run of the grid unless marked held out:\n\n" + side_by_side(compared)
    print(text)
    if args.doc:
        write_doc_section(args.doc, DOC_INTRO + "\n\n" + text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:
        hint = (f"; add the model's shapes under values.model of {GRID_MAP.relative_to(ROOT)}"
                if "values.model" in str(e) else "")
        print(f"error: {e}{hint}", file=sys.stderr)
        raise SystemExit(2) from None
