"""Fit a cluster's constants to its own measured runs (``shardplan calibrate``, issue 10).

The cost model stays the same physics; the fit moves a few named constants of the hardware spec
(and optionally the framework profile) inside physical bounds, with
:func:`shardplan.fitting.fit` (scipy ``least_squares``, soft-L1 loss on ``log(predicted /
measured)``). Residuals, one per record:

* throughput of each run that ran: ``log(predicted / measured tokens/s per device)``;
* memory, when a memory parameter is fitted: ``log(predicted allocator peak / measured peak)`` of
  each run with a recorded peak (a recorded peak is the allocator's or XLA's, without the runtime
  outside it), and for each run that ran out of memory ``max(0, log(HBM / predicted total))``
  (a prediction that it fits is a miss, one that it does not costs nothing).

A parameter the records cannot identify (moving it does not change any residual, e.g. the network
constants when every run stays inside one node) is held at the base value and reported.
Cross-validation: leave one model out and leave one node count out, when the records hold at
least two of each.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from shardplan.cost.memory import hbm_limit
from shardplan.cost.step import Estimate, estimate
from shardplan.errors import ConfigError
from shardplan.fitting import Parameter, apply, scaled_isolated
from shardplan.inputs import build_inputs
from shardplan.records import MIN_PEAK_BYTES, RunRecord
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec

#: default fitted constants with physical bounds: the large-GEMM efficiency, HBM efficiency, the
#: scale-out link's efficiency and per-step latency, the per-call collective base latency
DEFAULT_PARAMS = (Parameter("hardware", "matmul_efficiency", 0.2, 1.0, "fraction of peak FLOP/s"),
                  Parameter("hardware", "hbm_efficiency", 0.2, 1.0, "fraction of HBM bandwidth"),
                  Parameter("hardware", "scale_up_efficiency", 0.05, 1.0, "fraction of NVLink / scale-up bandwidth"),
                  Parameter("hardware", "scale_out_efficiency", 0.05, 1.0, "fraction of NIC bandwidth"),
                  Parameter("hardware", "scale_out_latency", 1e-6, 2e-4, "s per ring step"),
                  Parameter("framework", "microbatch_overhead_s", 0.0, 0.1, "s per microbatch"))
#: the GEMM rate each compute dtype runs at (HardwareSpec.achieved_matmul_flops): the default fit replaces
#: DEFAULT_PARAMS' matmul_efficiency by the rates of the dtypes the records that ran compute in, so fp8 or NVFP4
#: records move fp8_matmul_efficiency / fp4_matmul_efficiency, not the bf16 asymptote
RATE_PARAMS = {"bf16": DEFAULT_PARAMS[0], "fp16": DEFAULT_PARAMS[0], "fp32": DEFAULT_PARAMS[0],
               "fp8": Parameter("hardware", "fp8_matmul_efficiency", 0.2, 1.0, "fraction of fp8 peak FLOP/s"),
               "fp4": Parameter("hardware", "fp4_matmul_efficiency", 0.2, 1.0, "fraction of fp4 peak FLOP/s")}


def rate_params(cs: Sequence["Case"]) -> list[Parameter]:
    """The GEMM-rate parameters (:data:`RATE_PARAMS`) of the compute dtypes of the cases that ran, bf16's first."""
    dtypes = {c.training.precision.compute_dtype for c in cs if c.record.measured_tokens_per_s_per_device()}
    out: list[Parameter] = []
    for d in ("bf16", "fp16", "fp32", "fp8", "fp4"):
        if d in dtypes and RATE_PARAMS[d] not in out:
            out.append(RATE_PARAMS[d])
    return out


#: MoE constants (fitted when a record trains an MoE model): the per-local-expert cost of an MoE layer
MOE_PARAMS = (Parameter("framework", "moe_expert_overhead_s", 0.0, 0.005, "s per local expert per layer"),)
#: memory constants (fitted when records carry peaks or OOMs)
MEMORY_PARAMS = (Parameter("framework", "allocator_overhead", 0.0, 0.5, "fraction of allocated bytes"),
                 Parameter("framework", "context_bytes", 0.0, 8 * 2**30, "B"),
                 Parameter("framework", "lm_head_stage_bytes", 0.0, 1000.0, "B per token per d_model"))


def catalog() -> dict[str, Parameter]:
    """Every parameter a fit can take, by field name (:data:`DEFAULT_PARAMS`, :data:`RATE_PARAMS`,
    :data:`MOE_PARAMS`, :data:`MEMORY_PARAMS`), in that order."""
    out: dict[str, Parameter] = {}
    for p in (*DEFAULT_PARAMS, *RATE_PARAMS.values(), *MOE_PARAMS, *MEMORY_PARAMS):
        out.setdefault(p.field, p)
    return out


def params_named(names: Sequence[str]) -> list[Parameter]:
    """The parameters ``names`` name (``calibrate --params``; a name may hold several, comma-separated), each once,
    in the order given: what a fit on a handful of records can pin (new-user pass 56: two records, nine default
    parameters, no way to fit fewer).

    Raises:
        ConfigError: a name that is no parameter (field ``params``, the legal names listed), or none given.
    """
    known = catalog()
    wanted = [n.strip() for name in names for n in str(name).split(",") if n.strip()]
    bad = [n for n in wanted if n not in known]
    if bad or not wanted:
        raise ConfigError(f"--params {', '.join(bad) or '(empty)'}: not a fitted parameter; legal: {', '.join(known)}",
                          field="params", value=", ".join(bad) or None, legal=list(known))
    return [known[n] for n in dict.fromkeys(wanted)]


@dataclass
class Case:
    """A record with its specs (the hardware and profile replaced by the fit's at each evaluation)."""

    record: RunRecord
    model: object
    training: object
    parallel: object
    #: the record's number among the records given (1-based), for messages
    number: int = 0

    @property
    def nodes(self) -> int:
        """Node count at 8 devices per node (for leave-one-node-count-out)."""
        return max(1, self.record.devices // 8)


@dataclass
class Calibration:
    """The fit: values per parameter, errors, identifiability."""

    params: list[Parameter]
    values: list[float]
    base_values: list[float]
    held: list[str] = field(default_factory=list)
    #: records left out of the fit because the planner refuses their layout ("record N (source): why")
    excluded: list[str] = field(default_factory=list)
    #: records left out of the fit because their own bus-bandwidth measurement shows degraded hardware
    #: (:func:`degraded_cases`: "record N (source): what it measured")
    degraded: list[str] = field(default_factory=list)
    #: notes on the runs with a low bus-bandwidth measurement that stay in the fit (:func:`degraded_cases`)
    kept_low: list[str] = field(default_factory=list)
    in_sample: dict[str, float] = field(default_factory=dict)
    cross_validated: dict[str, dict[str, float]] = field(default_factory=dict)
    #: one line per held-out group of each cross-validation split: the group, its records, the fit's and the base's
    #: median throughput |error| on them (new-user pass 54b: one median hid a model group the fit missed by 0.7x)
    cross_validated_groups: list[str] = field(default_factory=list)
    #: (split, held-out group, the fit's, the base's median throughput |error|) of each group of
    #: :attr:`cross_validated_groups`, for the per-group worse-than-base check (shardplan.cli.calibrate)
    group_errors: list[tuple[str, str, float, float]] = field(default_factory=list)
    #: predicted / measured throughput of every record a cross-validation fold held out, predicted by the fit
    #: without it (each split's folds; the file's own band: :func:`heldout_band_text`)
    heldout_ratios: list[float] = field(default_factory=list)
    #: every record that ran: (where, model name, nodes, layout, measured, base-predicted, fitted-predicted
    #: tokens/s per device; a prediction None where the layout does not run), :func:`record_predictions`
    per_record: list[tuple[str, str, int, str, float, float | None, float | None]] = field(default_factory=list)
    base_error: dict[str, float] = field(default_factory=dict)
    #: the fit limit chosen on the records' ok / oom outcomes (:func:`oom_fraction`); None without oom records
    usable_hbm_fraction: float | None = None
    #: fewer measurements than free parameters: the fit is underdetermined (its in-sample error says nothing)
    underdetermined: str = ""
    #: parameters the fit put on a bound (field -> 'lower' / 'upper', :func:`unpinned_side`), then held at the base
    #: value and the others refitted without them; they are in :attr:`held` too (no file writes them)
    at_bound: dict[str, str] = field(default_factory=dict)
    #: records that ran out of memory (the only evidence for context_bytes: a recorded peak leaves it out)
    n_oom: int = 0
    #: the largest recorded peak of a record that ran, as a fraction of HBM (None: no record gives a peak);
    #: :func:`unmeasured_pressure` reads it
    peak_share: float | None = None
    #: records whose outcome (ran / out of memory) the fitted constants call wrong (:func:`misjudged_line`)
    misjudged: list[str] = field(default_factory=list)
    #: records the fitted constants miss by more than :data:`OUTLIER_RATIO` either way (:func:`outlier_line`)
    outliers: list[str] = field(default_factory=list)
    #: fitted parameters the records trade against the others (:func:`traded_pairs`), as sentences
    traded: list[str] = field(default_factory=list)
    #: the one model every record trains, where they all train one (:func:`one_model`: the fit extrapolates to others)
    one_model: str = ""
    #: the precision policies the fitted records were priced in (policy name -> records), e.g. {'bf16-mixed': 12}:
    #: memory terms fitted on one policy absorb its buffers (a bf16-gradient fit of fp32-gradient runs put the
    #: gradient buffer into allocator_overhead), so the file says which (:func:`cluster_yaml`, sources.fitted_precision)
    precisions: dict[str, int] = field(default_factory=dict)
    #: records that ran with Megatron-LM's tensor-parallel communication overlap (``tp_overlap``) and records in all
    #: (the file says so: a plan with the overlap rests on the base profile's overlap model when none did)
    tp_overlap_records: tuple[int, int] = (0, 0)


#: the share of HBM above which the planner's memory-pressure terms act (the caching allocator's retries near
#: full memory, ``FrameworkProfile.allocator_retry_s`` from ``allocator_pressure_start``, 0.81 on the shared H100
#: grid; the out-of-memory edge, ``usable_hbm_fraction``, 0.84 there): records whose peaks all stay below it
#: measure neither (docs/calibration.md: on the grid no 1B run reserves more than 68.3 of 80 GiB, and a fit on
#: them alone learns no retries)
PRESSURE_SHARE = 0.8


def peak_share(records: Sequence[RunRecord], hw: HardwareSpec) -> float | None:
    """The largest ``peak_memory_bytes`` of the records that ran, over ``hw.hbm_bytes`` (a fraction); None when
    none of them gives a peak."""
    peaks = [r.peak_memory_bytes for r in records if r.status == "ok" and r.peak_memory_bytes]
    return max(peaks) / hw.hbm_bytes if peaks else None


def unmeasured_pressure(cal: Calibration, hw: HardwareSpec) -> str:
    """A note when every recorded peak stays below :data:`PRESSURE_SHARE` of HBM and no record ran out of
    memory: the records say nothing about how runs near full memory behave (allocator retries, the
    out-of-memory edge), so predictions for layouts above the highest recorded peak extrapolate the base
    profile's behaviour there. Example: peaks up to 68.3 GiB of 80 GiB (85.4%) give no note; up to 60 GiB (75%)
    give one. '' otherwise (no peak recorded: the fit measured no memory at all, which the summary says)."""
    if cal.peak_share is None or cal.peak_share >= PRESSURE_SHARE or cal.n_oom:
        return ""
    share = f"{math.floor(cal.peak_share * 1000) / 10:.1f}%"  # rounded down: 79.99...% is not "80%", the rule's edge
    peak = cal.peak_share * hw.hbm_bytes
    # a CPU smoke run's peaks are MiB: "0.0 GiB" read as no peak at all
    size = f"{peak / 2**30:.1f} GiB" if peak >= 2**30 else f"{peak / 2**20:.1f} MiB"
    return (f"the records' highest peak is {size}, {share} of "
            f"HBM, and none ran out of memory: nothing in them measures runs near full memory (allocator retries, "
            f"the out-of-memory edge), so layouts predicted above {share} of HBM rest on the base "
            "profile's behaviour there; records of runs closer to the HBM (that ran or ran out of memory) measure it")


def _where(record: RunRecord, i: int) -> str:
    """``FILE:LINE: record i`` for a record read from a file (:meth:`RunRecord.at`), else ``record i``."""
    return f"{record.origin}: record {i}" if record.origin else f"record {i}"


def cases(records: Sequence[RunRecord], framework: FrameworkProfile | None = None) -> list[Case]:
    """Specs of every record (model, training with its framework, layout); a record without a framework takes
    ``framework`` (calibrate's profile: its default precision and optimizer state).

    Raises:
        ConfigError: a record whose model, precision, framework or layout is invalid (names it).
    """
    out = []
    for i, r in enumerate(records):
        try:
            inp = build_inputs(model=r.model, hardware=None, devices=r.devices, seq_len=r.seq_len,
                               global_batch=r.global_batch_size, global_batch_tokens=None, precision=r.precision,
                               optimizer_dtype=r.optimizer_dtype, moe_routing=r.moe_routing,
                               moe_capacity_factor=r.moe_capacity_factor, framework=r.framework or framework,
                               dropout=r.dropout)
        except ConfigError as e:
            raise ConfigError(f"{_where(r, i + 1)}: {e}", field=e.field, value=e.value, legal=e.legal) from None
        out.append(Case(r, inp.model, inp.training, r.parallel, i + 1))
    return out


#: a run whose own bus-bandwidth measurement (``RunRecord.busbw``) is below this fraction of the median of the
#: records' measurements of the same collective over the same group size ran on degraded hardware. On the
#: Ultra-Scale Playbook's H100 campaign (``benchmarks/usp_raw``, each job's start-of-run measurement) the regimes
#: are far apart: within a node AllReduce measured 391-461 GB/s or 44.9-46.0 GB/s (0.11 of the median), across
#: 16+ nodes 135-225 GB/s or 12-50 GB/s; the pipelined runs of the low regime ran a median 1.74x slower than
#: predicted, the others 1.02x (docs/calibration.md, "Which hardware the job had"). A third keeps the normal
#: spread (its lowest, 135 of a ~180 GB/s median, is 0.75) and catches every low one.
DEGRADED_BUSBW_FRACTION = 1 / 3
#: fewest records that measure one (collective, group size) for their median to be a reference
MIN_BUSBW_RECORDS = 3


def busbw_reference(measured: Iterable[dict | None]) -> dict[tuple[str, int], float]:
    """The median bus bandwidth (bytes/s) per (collective, group size) over ``measured`` (each a
    ``RunRecord.busbw``-shaped ``{op: {group size: bytes/s}}`` or None), where :data:`MIN_BUSBW_RECORDS` or more
    measured it: the upper median (``statistics.median_high``), a value some run measured. Raises nothing."""
    seen: dict[tuple[str, int], list[float]] = {}
    for busbw in measured:
        for op, sizes in (busbw or {}).items():
            for n, bw in sizes.items():
                seen.setdefault((op, n), []).append(bw)
    return {k: statistics.median_high(v) for k, v in seen.items() if len(v) >= MIN_BUSBW_RECORDS}


def _lowest(busbw: dict | None, reference: dict[tuple[str, int], float]) -> tuple[tuple[str, int], str] | None:
    """The (collective, group size) of a run's lowest measurement relative to ``reference`` and why it shows degraded
    hardware ("AllReduce over 8 devices measured 46.0 GB/s, 0.11 of the records' median 423.7 GB/s"), when it is
    below :data:`DEGRADED_BUSBW_FRACTION` of the reference; else None. Raises nothing."""
    low = [(op, n, bw, reference[(op, n)]) for op, sizes in (busbw or {}).items() for n, bw in sizes.items()
           if (op, n) in reference and bw < DEGRADED_BUSBW_FRACTION * reference[(op, n)]]
    if not low:
        return None
    op, n, bw, med = min(low, key=lambda x: x[2] / x[3])
    return (op, n), (f"{op} over {n} devices measured {bw / 1e9:.1f} GB/s, {bw / med:.2f} of the records' median "
                     f"{med / 1e9:.1f} GB/s")


def near_full(peak_bytes: float | None, hbm_bytes: float | None) -> bool:
    """Whether a recorded peak (bytes; None: not recorded) is at or above :data:`PRESSURE_SHARE` of ``hbm_bytes``
    (bytes; None: no device to compare with). Raises nothing."""
    return bool(hbm_bytes and peak_bytes and peak_bytes >= PRESSURE_SHARE * hbm_bytes)


#: the largest share of the runs measuring one (collective, group size) that the rule leaves out: more than this below
#: a third of the median is two regimes of the cluster (the playbook grid's job-wide AllReduce on 64 nodes: 129 of 149
#: runs at 13 GB/s, the rest at 170-200), not a few sick nodes, and nothing of that group is left out (a note says so)
MAX_DEGRADED_SHARE = 0.25


def degraded_cases(cs: Sequence[Case], hbm_bytes: float | None = None) -> tuple[list[Case], list[str], list[str]]:
    """The cases without those that ran on degraded hardware, one line per case left out (``record N (source):
    AllReduce over 8 devices measured 46.0 GB/s, 0.11 of the records' median 423.7 GB/s``) and notes on the low runs
    kept.

    A run that ran (status ``ok``) whose own ``busbw`` measurement of some collective and group size is below
    :data:`DEGRADED_BUSBW_FRACTION` x the median of the records' measurements of the same (:func:`busbw_reference`,
    failed runs' measurements included: their jobs measured before they failed) measures a sick node or a congested
    network, not the layout: its throughput would bend the fitted constants toward a slowness no layout has, so it is
    left out (its memory with it). Kept, with a note: a run whose recorded peak is near full memory (:func:`near_full`
    with ``hbm_bytes``, the device's HBM in bytes), where the low measurement goes with the memory the layout decides
    (on the playbook grid all 19 runs that reserved 70 GiB or more of 80 measured about a tenth of the others'
    AllReduce bandwidth within their node; below 68 GiB 4 runs did, three of them 3-50x slower than predicted;
    docs/calibration.md) and its slowness is evidence for the memory-pressure terms; and the low runs of a
    (collective, group size) where more than :data:`MAX_DEGRADED_SHARE` of the runs that ran are low (two regimes).
    Records without ``busbw`` are kept. Raises nothing."""
    reference = busbw_reference(c.record.busbw for c in cs)
    low = {i: _lowest(c.record.busbw, reference) for i, c in enumerate(cs) if c.record.status == "ok"}
    low = {i: v for i, v in low.items() if v is not None}
    ran = {}
    for c in cs:
        for op, sizes in (c.record.busbw or {}).items():
            for n in sizes:
                ran[(op, n)] = ran.get((op, n), 0) + (c.record.status == "ok")
    counts: dict[tuple[str, int], int] = {}
    for key, _ in low.values():
        counts[key] = counts.get(key, 0) + 1
    regimes = {k for k, m in counts.items() if m > MAX_DEGRADED_SHARE * ran[k]}
    notes = [f"{counts[k]} of the {ran[k]} runs that ran measured {k[0]} over {k[1]} devices below a third of the "
             "records' median: two regimes of the cluster, not a few sick nodes; none of them left out"
             for k in sorted(regimes)]
    keep, out = [], []
    for i, c in enumerate(cs):
        if i not in low or low[i][0] in regimes:
            keep.append(c)
        elif near_full(c.record.peak_memory_bytes, hbm_bytes):
            keep.append(c)
            notes.append(f"{_where(c.record, c.number)}: {low[i][1]}, kept: its peak is near full memory, where the "
                         "low measurement goes with the memory its layout needs")
        else:
            out.append(f"{_where(c.record, c.number)} ({c.record.source or 'no source'}): {low[i][1]}")
    return keep, out, notes


def _fp16_default(c: Case, hw: HardwareSpec) -> Case:
    """``c`` with the fp16 counterpart of its default precision on hardware without bf16 (a record that names no
    precision, on a V100), as ``estimate`` prices it (:func:`shardplan.inputs.with_fp16_counterpart`)."""
    from shardplan.inputs import with_fp16_counterpart
    return c if c.record.precision is not None else replace(c, training=with_fp16_counterpart(hw, c.training))


#: the fields of a run record that say which run it is (model, hardware, scale, layout, precision, framework), not
def run_key(case: Case) -> str:
    """The configuration a record measured, as the planner prices it (JSON of the resolved model, training spec,
    layout with the profile's defaults applied, devices and the hardware label in lower case): repeated runs of one
    layout, or one record pasted twice, share it and pin the same residual of the fit, so the identifiability count
    (:func:`underdetermined`) counts configurations, not records. Records written differently for one run share it
    too (breaker pass 53d: a framework left out or named 'MaxText', a hardware label's case, a capacity factor on a
    dense model, which prices nothing, made six copies of one run six configurations and a 0.0% fit). Example: ten
    copies of one llama-3-8b dp 8 record are one configuration, 2 measurements (throughput, memory) against 5
    parameters."""
    training = case.training
    if not case.model.is_moe:  # the MoE fields price nothing on a dense model
        training = training.model_copy(update={"moe_capacity_factor": None, "moe_imbalance": 1.0,
                                               "moe_routing": "uniform"})
    r = case.record
    return json.dumps({"model": case.model.model_dump(mode="json", exclude={"name", "source"}),
                       "training": training.model_dump(mode="json"), "parallel": case.parallel.model_dump(mode="json"),
                       "devices": r.devices, "hardware": r.hardware.strip().lower()}, sort_keys=True)


def underdetermined(cs: Sequence[Case], memory: bool, n_free: int) -> str:
    """Why a fit of ``n_free`` parameters on ``cs`` says nothing, or "": every run configuration gives one throughput
    residual and at most one memory residual (``memory``: the records measure it), repeats of a configuration the same
    ones (:func:`run_key`), and fewer measurements than free parameters leave the fit underdetermined, its in-sample
    error reading as perfect. Example: ten copies of one record with a peak are 2 measurements for 5 parameters."""
    keys = [run_key(c) for c in cs]
    n_measured = (len({k for k, c in zip(keys, cs) if c.record.measured_tokens_per_s_per_device()})
                  + len({k for k, c in zip(keys, cs) if memory and (c.record.peak_memory_bytes
                                                                    or c.record.status == "oom")}))
    if n_measured >= n_free:
        return ""
    distinct = len(set(keys))
    of = f" of {distinct} distinct run configuration(s)" if distinct < len(cs) else ""
    return (f"{len(cs)} record(s){of} give {n_measured} measurement(s) for {n_free} fitted parameters: the fit is "
            "underdetermined, so its in-sample error says nothing; more runs (other layouts, node counts, models) "
            f"pin it, or fit at most {n_measured} parameter(s) (--params, e.g. --params matmul_efficiency)")


def valid_cases(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile) -> tuple[list[Case], list[str]]:
    """The cases to fit and score under ``hw`` / ``profile``, and one line per case left out
    (``record N (source): reason``). A run that ran (status ``ok``) whose layout the planner refuses
    says nothing about the parameters, so it is left out and named, not counted as a miss; a run that
    did not run (``oom``, ``failed``) with a refused layout stays: the planner predicts it not to run.

    Raises:
        ConfigError: every record is refused (the first reason is given); a record whose precision the base
            hardware cannot run (e.g. nvfp4-mixed on a GPU without fp4 peak), as ``estimate`` refuses it; a
            physically impossible record (:func:`check_physical`), naming its file and line.
    """
    from shardplan.parallel import validate
    keep, excluded, reasons = [], [], []
    for i, c in enumerate(cs, 1):
        i = c.number or i  # the record's own number (records left out before this one do not shift it)
        c = _fp16_default(c, hw)
        try:  # a precision the hardware has no peak for is bad input, not a layout the planner refuses
            hw.peak_flops(c.training.precision.compute_dtype)
            check_physical(c, hw)
        except ConfigError as e:
            raise ConfigError(f"{_where(c.record, i)} ({c.record.source or 'no source'}): {e}", field=e.field,
                              value=e.value, legal=e.legal) from None
        c = with_layout_defaults(c, profile)
        try:
            training = c.training.with_framework(profile, c.record.optimizer_dtype)
            validate(c.parallel, c.model, training, c.record.devices)
        except ConfigError as e:
            reasons.append(f"{_where(c.record, i)} ({c.record.source or 'no source'}): {e}")
            if c.record.status == "ok":
                excluded.append(reasons[-1])
                continue
        keep.append(c)
    if len(reasons) == len(cs):
        raise ConfigError(f"the planner refuses the layout of every record; {reasons[0]}", field="records",
                          value=len(cs))
    return keep, excluded


def with_layout_defaults(case: Case, profile: FrameworkProfile) -> Case:
    """``case`` with the layout fields its record does not give set as ``shardplan estimate`` sets them under
    ``profile`` (:func:`shardplan.inputs.applied_layout_defaults`: its ZeRO stage, sp with tp > 1, schedule), so
    that a record is fitted as the layout the fitted profile's estimates will price."""
    from shardplan.inputs import applied_layout_defaults
    p = case.record.parallel
    given = {k: getattr(p, k) for k in p.model_fields_set}
    applied = applied_layout_defaults(profile, p, given, None, case.record.seq_len)
    return replace(case, parallel=p.model_copy(update=applied)) if applied else case


def check_physical(case: Case, hw: HardwareSpec) -> None:
    """A record the hardware it is fitted on cannot have produced: a peak memory above the device's HBM capacity
    (whatever the status: an allocator's peak, an out-of-memory run's included, never exceeds the memory it
    allocates from), or a throughput whose model FLOP/s per device
    (:func:`shardplan.cost.flops.model_flops_per_token` x tokens/s per device) is above the dense peak of the
    record's compute dtype (over 100% MFU). Such a record is a typo or a unit mix-up, and a fit to it moves the
    constants to their bounds. The bound a message gives is rounded toward the legal side, so a record at it passes.

    Raises:
        ConfigError: naming the field, its value and the physical bound.
    """
    from shardplan.cost.flops import model_flops_per_token
    r = case.record
    if r.peak_memory_bytes is not None and r.peak_memory_bytes > hw.hbm_bytes:
        cap = math.floor(hw.hbm_bytes)
        raise ConfigError(f"peak_memory_bytes={_exact(r.peak_memory_bytes)} is above the {cap:,} B "
                          f"({hw.hbm_bytes / 2**30:,.1f} GiB) HBM capacity of {hw.name} (no run, one that ran out of "
                          f"memory included, peaks above its device's memory); legal: at most {cap:,} B (bytes, not "
                          "KiB or bits), or --hardware the device it ran on",
                          field="peak_memory_bytes", value=r.peak_memory_bytes, legal=[MIN_PEAK_BYTES, cap])
    tps = r.measured_tokens_per_s_per_device()
    if not tps:
        return
    dtype = case.training.precision.compute_dtype
    peak = hw.peak_flops(dtype)
    per_token = model_flops_per_token(case.model, r.seq_len, case.training.causal)
    if tps * per_token > peak:
        field, value = (("tokens_per_s_per_device", r.tokens_per_s_per_device) if r.tokens_per_s_per_device is not None
                        else ("step_time_s", r.step_time_s))
        top = peak / per_token
        tokens = r.seq_len * r.global_batch_size / r.devices
        if field == "tokens_per_s_per_device":
            bound = f"at most {legal_bound(top, False, lambda x: x * per_token <= peak)} tokens/s per device"
        else:
            bound = f"a step of at least {legal_bound(tokens / top, True, lambda x: tokens / x * per_token <= peak)} s"
        raise ConfigError(f"{field}={_exact(value)} means {tps:,.0f} tokens/s per device, {tps * per_token:.3g} model "
                          f"FLOP/s ({per_token:.3g} FLOPs per token), above the {peak:.3g} FLOP/s dense {dtype} peak "
                          f"of {hw.name} ({tps * per_token / peak:.0%} MFU); legal: {bound}, or --hardware the device "
                          "it ran on", field=field, value=value)


def _exact(x: float) -> str:
    """A recorded number as given (up to 12 significant digits), with thousands separators when whole."""
    return f"{x:,.0f}" if x == int(x) and abs(x) < 1e18 else f"{x:.12g}"


def legal_bound(x: float, minimum: bool, legal) -> str:
    """``x``, a maximum (``minimum`` False) or a minimum, printed rounded toward its legal side (down for a maximum,
    up for a minimum) to at least 4 significant digits and every integer digit, so that the printed number itself
    passes ``legal`` (a predicate on a number; a rounding that still fails it, by floating point, is moved one more
    unit inward). Example: a maximum of 21,586.95 prints ``21,586``, a minimum of 0.85571 prints ``0.8558``."""
    magnitude = math.floor(math.log10(abs(x))) if x else 0
    exp = min(0, magnitude - 3)  # the unit of the last printed digit: 1, or the 4th significant digit's
    steps = (math.ceil if minimum else math.floor)(x / 10.0 ** exp)
    for _ in range(4):
        text = f"{steps:,}" if exp >= 0 else f"{steps * 10.0 ** exp:.{-exp}f}"  # exp >= 0: x has 4+ integer digits
        if legal(float(text.replace(",", ""))):
            break
        steps += 1 if minimum else -1
    return text


def predict(case: Case, hw: HardwareSpec, profile: FrameworkProfile) -> Estimate | None:
    """The planner's estimate of one case under ``hw`` and ``profile`` (None if it refuses it)."""
    training = case.training.with_framework(profile, case.record.optimizer_dtype)
    try:
        return estimate(case.model, hw, training, case.parallel, case.record.devices)
    except ConfigError:
        return None


def residuals(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, memory: bool) -> np.ndarray:
    """The module docstring's residuals (throughput, then memory when ``memory``); a refused run
    that ran counts as a miss of 3 (log units)."""
    out = []
    for c in cs:
        e = predict(c, hw, profile)
        meas = c.record.measured_tokens_per_s_per_device()
        if meas is not None:
            out.append(3.0 if e is None else math.log(e.tokens_per_s / c.record.devices / meas))
        if not memory or e is None:
            continue
        if c.record.peak_memory_bytes:
            out.append(math.log(e.memory.allocator_peak / c.record.peak_memory_bytes))
        elif c.record.status == "oom":
            out.append(max(0.0, math.log(hbm_limit(hw.hbm_bytes, profile) / e.memory.total)))
    return np.asarray(out)


def base_error_of(records: Sequence[RunRecord], hw: HardwareSpec, profile: FrameworkProfile) -> float | None:
    """Median |relative error| of the base ``hw`` / ``profile``'s throughput on ``records`` alone (a subset: the
    records that name other hardware, :func:`shardplan.cli.calibrate.poor_fit`); None when none of them can be
    priced (an invalid record, every layout refused, or none ran). Raises nothing: the fit on every record has
    already refused invalid ones. It prices the subset again: the fit keeps no per-record base errors."""
    try:
        cs, _ = valid_cases(cases(records, profile), hw, profile)
    except ConfigError:  # every layout of the subset refused: nothing to score
        return None
    median = errors(cs, hw, profile).get("throughput_median")
    return None if median is None or math.isnan(median) else median


def errors(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile,
           misses: list[str] | None = None, outliers: list[str] | None = None,
           memory_outliers: list[str] | None = None, ratios: list[float] | None = None) -> dict[str, float]:
    """Median |relative error| of throughput and of peak memory (the predicted allocator peak of the
    most loaded device, :attr:`~shardplan.cost.memory.MemoryBreakdown.allocator_peak`, against the
    recorded peak, which a framework's allocator or XLA reports without the runtime outside it), and
    the fit/OOM classification accuracy: the fraction of records whose outcome the planner calls
    right, ``ok`` = predicted to run, ``oom`` and ``failed`` = predicted not to (a failure the record
    does not explain counts as a miss where the planner predicts the run, as the grid benchmark
    counts it). ``misses`` (a list) gets one line per record called wrong (:func:`misjudged_line`), ``outliers``
    one per record whose throughput is missed by more than :data:`OUTLIER_RATIO` (:func:`outlier_line`),
    ``memory_outliers`` one per record whose peak memory is (:func:`memory_outlier_line`; judged on the base
    constants, since a fit on a wrong peak moves toward it: breaker pass 55b, a peak 10x low was 6.2x off after it).
    ``ratios`` (a list) gets each predicted / measured throughput."""
    tput, mem, right, judged = [], [], 0, 0
    for c in cs:
        e = predict(c, hw, profile)
        meas = c.record.measured_tokens_per_s_per_device()
        if meas is not None and e is not None:
            pred = e.tokens_per_s / c.record.devices
            tput.append(abs(pred / meas - 1))
            if ratios is not None:
                ratios.append(pred / meas)
            if outliers is not None and not 1 / OUTLIER_RATIO <= pred / meas <= OUTLIER_RATIO:
                outliers.append(outlier_line(c, pred, meas))
        if e is not None and c.record.peak_memory_bytes:
            ratio = e.memory.allocator_peak / c.record.peak_memory_bytes
            mem.append(abs(ratio - 1))
            # or below half the model state the layout holds (weights, gradients, optimizer state on the device):
            # no allocator reports less (half: a precision policy the record does not state)
            below_state = c.record.peak_memory_bytes < 0.5 * e.memory.model_state
            if memory_outliers is not None and (below_state or not 1 / OUTLIER_RATIO <= ratio <= OUTLIER_RATIO):
                memory_outliers.append(memory_outlier_line(c, e.memory.allocator_peak, e.memory.model_state))
        judged += 1
        called = (e is not None and e.runs) == (c.record.status == "ok")
        right += called
        if not called and misses is not None:
            misses.append(misjudged_line(c, e))
    out = {"throughput_median": statistics.median(tput) if tput else math.nan, "runs": float(len(tput))}
    if mem:
        out["memory_median"] = statistics.median(mem)
    if judged:
        out["fit_oom_accuracy"] = right / judged
    return out


#: a record the fitted constants predict more than this many times faster or slower than it measured is named in a
#: warning: the planner's unseen public runs fall within 0.88x-1.51x (p10-p90, docs/accuracy.md), so a 10x miss is
#: no model error but a record to check (a step time in ms read as s, a per-node rate as per device; breaker pass 54:
#: a record 5,000,000x below its layout's moved matmul_efficiency 0.375 -> 0.305 without a word)
OUTLIER_RATIO = 10.0


def outlier_line(c: Case, predicted: float, measured: float) -> str:
    """One line for a record whose measured tokens/s/device the fitted constants miss by more than
    :data:`OUTLIER_RATIO` (``predicted`` and ``measured`` in tokens/s/device)."""
    src = f" ({c.record.source})" if c.record.source else ""
    return (f"{_where(c.record, c.number)}{src}: measured {measured:,.4g} tokens/s/device, the fitted constants "
            f"predict {predicted:,.4g} ({predicted / measured:,.3g}x): check its units (ms vs s, per node vs per "
            "device) or leave it out")


def memory_outlier_line(c: Case, predicted: float, state: float = 0.0) -> str:
    """One line for a record whose peak memory the base constants miss by more than :data:`OUTLIER_RATIO`, or that
    is below half the model state the layout holds (``state``, bytes; ``predicted``: the allocator peak, bytes).
    Breaker pass 55: a 2 MB peak for Llama-3-8B was fitted as a 807,469% memory error and drove allocator_overhead
    to 0 without a word."""
    src = f" ({c.record.source})" if c.record.source else ""
    meas = c.record.peak_memory_bytes
    held = f", below the {state / 2**30:,.3g} GiB of weights, gradients and optimizer state it holds" \
        if meas < 0.5 * state else ""
    return (f"{_where(c.record, c.number)}{src}: recorded peak {meas:,.4g} B ({meas / 2**30:,.3g} GiB{held}), the base "
            f"constants predict {predicted / 2**30:,.3g} GiB ({predicted / meas:,.3g}x): peak_memory_bytes is in bytes "
            "(not MiB or GiB) per device; check it or leave it out")


def misjudged_line(c: Case, e: Estimate | None) -> str:
    """One line for a record whose outcome :func:`errors`' fit/OOM classification calls wrong (``e``: its estimate,
    None where the planner refuses the layout): ``record N (source): ran, predicted not to fit (P of L GiB)`` or
    ``... ran out of memory, predicted to run (P of L GiB)`` (a new user's three-run fit dropped fit/OOM to 66.7%
    without naming the run)."""
    src = f" ({c.record.source})" if c.record.source else ""
    if e is None:
        why = "the planner refuses its layout"
    elif c.record.status == "ok":
        why = (f"ran, predicted not to fit ({e.memory.total / 2**30:.1f} of {e.hbm_fit_limit / 2**30:.1f} GiB)"
               if not e.fits else f"ran, predicted not to run ({e.failure})")
    else:
        why = (f"{'ran out of memory' if c.record.status == 'oom' else 'failed'}, predicted to run "
               f"({e.memory.total / 2**30:.1f} of {e.hbm_fit_limit / 2**30:.1f} GiB)")
    return f"{_where(c.record, c.number)}{src}: {why}"


def identifiable(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, params: Sequence[Parameter],
                 memory: bool) -> list[bool]:
    """Whether moving each parameter from its base value by a quarter of its range changes any
    residual (else the records say nothing about it)."""
    base = residuals(cs, hw, profile, memory)
    out = []
    for p in params:
        x = p.initial(hw, profile)
        moved = x + 0.25 * (p.upper - p.lower) if x + 0.25 * (p.upper - p.lower) <= p.upper else x - 0.25 * (p.upper - p.lower)
        h, f = apply([p], [moved], hw, profile)
        r = residuals(cs, h, f, memory)
        out.append(r.shape == base.shape and bool(np.max(np.abs(r - base), initial=0.0) > 1e-9))
    return out


#: how close to a bound (a share of the parameter's range) a fitted value counts as put there by the fit: the
#: records push it to the limit the bounds allow, so they do not pin it (a new user's 17 records drove
#: scale_out_latency to its 2e-4 upper bound and scale_out_efficiency to 0.997 together, a degenerate pair)
BOUND_HOLD_SHARE = 0.02


def unpinned_side(p: Parameter, value: float) -> str | None:
    """'lower' / 'upper' where the fitted ``value`` lies within :data:`BOUND_HOLD_SHARE` of the range from that
    bound, else None. A lower bound of 0 is not counted: an additive cost of 0 (no per-microbatch overhead, no
    fragmentation) is a physical answer, not a limit the fit pressed against."""
    side = p.at_bound(value, BOUND_HOLD_SHARE)
    return None if side == "lower" and p.lower == 0 else side


def fit_pinned(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, free: Sequence[Parameter],
               memory: bool, rounds: int = 3) -> tuple[list[Parameter], dict[str, float], dict[str, str]]:
    """Fit ``free``; a parameter the fit puts on a bound (:func:`unpinned_side`) is held at its base value and the
    rest fitted again, up to ``rounds`` fits (docs/calibration.md: a parameter the records do not identify is held
    at the base value and named). Returns (the parameters fitted in the end, field -> fitted value, field -> the
    bound side of each one held)."""
    free, fitted, at_bound = list(free), {}, {}
    for _ in range(rounds):
        if not free:
            return free, {}, at_bound
        fitted = dict(zip((p.field for p in free), fit_residuals_for(cs, hw, profile, free, memory)))
        stuck = {p.field: side for p in free if (side := unpinned_side(p, fitted[p.field]))}
        if not stuck:
            break
        at_bound.update(stuck)
        free = [p for p in free if p.field not in stuck]
        fitted = {}
    if not fitted and free:  # the last round held some: fit what is left once more
        fitted = dict(zip((p.field for p in free), fit_residuals_for(cs, hw, profile, free, memory)))
    return free, fitted, at_bound


def snap_to_zero(p: Parameter, value: float) -> float:
    """``value`` with a residue of the optimizer on a zero lower bound (2e-13 for allocator_overhead: a new user saw
    "peak band 45.16-45.16") set to 0: within 1e-6 of the range from it."""
    return 0.0 if p.lower == 0 and value - p.lower < 1e-6 * (p.upper - p.lower) else value


def calibrate(records: Sequence[RunRecord], hw: HardwareSpec, profile: FrameworkProfile,
              params: Sequence[Parameter] | None = None, cross_validate: bool = True,
              progress: Callable[[int, int, str], None] | None = None) -> Calibration:
    """Fit ``params`` (default :data:`DEFAULT_PARAMS` with the GEMM rates of the records' compute dtypes,
    :func:`rate_params`, plus :data:`MOE_PARAMS` when a record trains an MoE
    model and :data:`MEMORY_PARAMS` when a record has a peak or an OOM) to ``records`` on ``hw`` /
    ``profile`` (module docstring). ``progress(done, total, label)`` is called as each fit starts (the fit on
    every record, then one per cross-validation fold: :func:`fold_count`).

    Raises:
        ConfigError: no record that ran, an invalid record, or every layout refused
            (:func:`valid_cases`; refused layouts among valid ones are left out and listed in
            :attr:`Calibration.excluded`; runs on degraded hardware, at most a quarter of those that ran, are
            left out and listed in :attr:`Calibration.degraded`: :func:`degraded_cases`).
    """
    cs, excluded = valid_cases(cases(records, profile), hw, profile)  # an impossible record is bad input, not a sick node
    cs, degraded, kept_low = degraded_cases(cs, hw.hbm_bytes)
    if not any(c.record.measured_tokens_per_s_per_device() for c in cs):
        raise ConfigError("no record ran (status 'ok' with a throughput): nothing to fit", field="records",
                          value=len(cs))
    memory = any(c.record.peak_memory_bytes or c.record.status == "oom" for c in cs)
    moe = any(getattr(c.model, "is_moe", False) for c in cs)
    params = list(params or (*rate_params(cs), *DEFAULT_PARAMS[1:], *(MOE_PARAMS if moe else ()),
                             *(MEMORY_PARAMS if memory else ())))
    ok = identifiable(cs, hw, profile, params, memory)
    free = [p for p, k in zip(params, ok) if k]
    under = underdetermined(cs, memory, len(free))
    base_values = [p.initial(hw, profile) for p in params]
    values = list(base_values)
    total = 1 + (fold_count(cs) if cross_validate and free else 0)
    if progress is not None:
        progress(0, total, f"fitting {len(free)} parameters on {len(cs)} records")
    free, fitted, at_bound = fit_pinned(cs, hw, profile, free, memory)
    values = [snap_to_zero(p, fitted[p.field]) if p.field in fitted else v for p, v in zip(params, base_values)]
    h, f = apply(params, values, hw, profile)
    fraction = oom_fraction(cs, h, f)
    if fraction is not None:
        f = f.model_copy(update={"usable_hbm_fraction": fraction})
    held = [p.field for p, k in zip(params, ok) if not k] + list(at_bound)
    misses: list[str] = []
    outliers: list[str] = []
    out = Calibration(params, values, base_values, held=held, excluded=excluded, degraded=degraded, kept_low=kept_low,
                      in_sample=errors(cs, h, f, misses, outliers),
                      base_error=errors(cs, hw, profile, memory_outliers=outliers),
                      underdetermined=under,
                      usable_hbm_fraction=fraction, at_bound=at_bound,
                      n_oom=sum(c.record.status == "oom" for c in cs),
                      peak_share=peak_share([c.record for c in cs], hw),  # the fitted records' peaks
                      misjudged=misses, outliers=outliers)
    out.traded = traded_pairs(cs, h, f, free, memory)
    _describe_records(out, cs, (hw, profile), (h, f))
    if cross_validate:
        out.cross_validated = _cross_validated(cs, hw, profile, free, memory, progress, total,
                                               out.cross_validated_groups, out.group_errors, out.heldout_ratios)
    if progress is not None:
        progress(total, total, "done")
    return out


def _describe_records(out: Calibration, cs: Sequence[Case], base: tuple[HardwareSpec, FrameworkProfile],
                      fitted: tuple[HardwareSpec, FrameworkProfile]) -> None:
    """Fill ``out``'s descriptions of the records: each one's predictions (:func:`record_predictions`), the one model
    they train (:func:`one_model`), their precision policies and how many tp > 1 records ran tp_overlap."""
    out.per_record = record_predictions(cs, base, fitted)
    out.one_model = one_model(cs)
    for c in cs:
        out.precisions[c.training.precision.name] = out.precisions.get(c.training.precision.name, 0) + 1
    out.tp_overlap_records = (sum(bool(c.parallel.tp_overlap) and c.parallel.tp > 1 for c in cs),
                              sum(c.parallel.tp > 1 for c in cs))


def record_predictions(cs: Sequence[Case], base: tuple[HardwareSpec, FrameworkProfile],
                       fitted: tuple[HardwareSpec, FrameworkProfile]) -> list[tuple]:
    """(where, model, nodes, layout, measured, base-predicted, fitted-predicted tokens/s per device) of each case that
    ran (:attr:`Calibration.per_record`): what a user checks the fit against run by run (new-user pass 58: the medians
    hid that the fitted constants ordered two measured 70B layouts the other way round)."""
    out = []
    for c in cs:
        meas = c.record.measured_tokens_per_s_per_device()
        if meas is None:
            continue
        preds = [predict(c, *pair) for pair in (base, fitted)]
        base_p, fit_p = (e.tokens_per_s / c.record.devices if e is not None else None for e in preds)
        out.append((_where(c.record, c.number), getattr(c.model, "name", "?"), c.nodes, c.parallel.short(), meas,
                    base_p, fit_p))
    return out


#: the variance inflation factor above which :func:`traded_pairs` names a fitted parameter: the other parameters
#: account for all but 1/20 of its effect on the residuals (a new user's six Qwen3-30B-A3B records fitted
#: matmul_efficiency 0.59 -> 0.79 and hbm_efficiency 0.80 -> 0.34 at a 0.4% in-sample error, VIF 55 and 65, and the
#: file then priced a dense 70B run 13% faster)
TRADED_VIF = 20.0
#: the standard error (a share of the parameter's range) below which a collinear parameter is pinned all the same
TRADED_SE = 0.02


def traded_pairs(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, free: Sequence[Parameter],
                 memory: bool) -> list[str]:
    """The fitted parameters whose estimates the records cannot separate from the others': from the residuals'
    Jacobian J at the fitted values (forward differences of 1% of each parameter's range, in units of the range), the
    variance inflation factor [(J^T J)^-1]_ii (J^T J)_ii of each parameter (the linear approximation of Bates & Watts,
    "Nonlinear Regression Analysis and Its Applications", 1988, Sec. 2.3; VIF as in Marquardt 1970) above
    :data:`TRADED_VIF` whose standard error, sqrt([(J^T J)^-1]_ii s^2) with s^2 the residuals' sum of squares per degree
    of freedom, exceeds :data:`TRADED_SE` of its range (records without noise pin even collinear parameters), named
    with the parameter it correlates with most. Empty with fewer than two parameters or a singular J^T J (a parameter
    the records do not move is held already: :func:`identifiable`)."""
    if len(free) < 2:
        return []
    x = [getattr(hw, p.field) if p.target == "hardware" else getattr(profile, p.field) for p in free]
    base = residuals(cs, hw, profile, memory)
    cols = []
    for i, p in enumerate(free):
        step = 0.01 * (p.upper - p.lower) * (1 if x[i] + 0.01 * (p.upper - p.lower) <= p.upper else -1)
        h, f = apply([p], [x[i] + step], hw, profile)
        r = residuals(cs, h, f, memory)
        if r.shape != base.shape:
            return []
        cols.append((r - base) / (step / (p.upper - p.lower)))
    jtj = np.stack(cols, axis=1).T @ np.stack(cols, axis=1)
    if np.linalg.matrix_rank(jtj) < len(free):  # fewer independent residuals than parameters: the inverse is noise
        return []  # (breaker pass 56: one record printed "correlation +3.8e155"); the underdetermined refusal says so
    try:
        cov = np.linalg.inv(jtj)
    except np.linalg.LinAlgError:
        return []
    sd = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        corr = np.clip(np.nan_to_num(cov / np.outer(sd, sd)), -1.0, 1.0)
    # the residual variance per degree of freedom: collinear parameters the records still pin (a small standard error,
    # e.g. records without noise) are no warning (a breaker's seven exact records, VIF 30, recovered 0.5 / 0.6 exactly)
    s2 = float(base @ base) / max(len(base) - len(free), 1)
    out = []
    for i, vif in enumerate(np.diag(cov) * np.diag(jtj)):
        if vif > TRADED_VIF and np.sqrt(cov[i, i] * s2) > TRADED_SE:
            j = max((k for k in range(len(free)) if k != i), key=lambda k: abs(corr[i, k]))
            out.append(f"{free[i].field} is not separated from the other fitted parameters (variance inflation "
                       f"{vif:.0f}, standard error {np.sqrt(cov[i, i] * s2):.0%} of its range; most with "
                       f"{free[j].field}, correlation {corr[i, j]:+.2f}): the records move them together, so its fitted "
                       "value trades against theirs and a run unlike these may be priced off")
    return out


def one_model(cs: Sequence[Case]) -> str:
    """The model every case trains (its name), where all train one; else ``""``. A fit on one model's runs leaves its
    GEMM shapes, element-wise bytes and expert count the same in every record: the constants fitted to them need not
    hold for another model (and a dense model has no expert costs to check an MoE fit against)."""
    names = {str(getattr(c.model, "name", c.model)) for c in cs}
    return next(iter(names)) if len(names) == 1 else ""


#: the cross-validation splits: a fold per model, a fold per node count (each with two or more groups)
CV_SPLITS = (("leave-one-model-out", lambda c: str(getattr(c.model, "name", c.model))),
             ("leave-one-node-count-out", lambda c: c.nodes))


def fold_count(cs: Sequence[Case]) -> int:
    """Cross-validation fits :func:`_cross_validated` runs on the cases ``cs``: one per group of each split in
    :data:`CV_SPLITS` that has two or more groups."""
    return sum(n for n in (len({key(c) for c in cs}) for _, key in CV_SPLITS) if n >= 2)


def oom_fraction(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile) -> float | None:
    """``usable_hbm_fraction`` chosen on the records that ran (``ok``) and those that ran out of memory
    (``oom``; a ``failed`` record does not say why) by
    :func:`shardplan.fitting.choose_usable_hbm_fraction`, keeping the profile's own fraction unless another
    classifies more records right; None without an ``oom`` record (nothing to choose on)."""
    from shardplan.fitting import choose_usable_hbm_fraction, usage_point
    if not any(c.record.status == "oom" for c in cs):
        return None
    whole = profile.model_copy(update={"usable_hbm_fraction": 1.0})
    points = [usage_point(predict(c, hw, whole), hw.hbm_bytes, c.record.status == "ok")
              for c in cs if c.record.status in ("ok", "oom")]
    return choose_usable_hbm_fraction(points, keep=profile.usable_hbm_fraction)


def fit_residuals_for(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, params: Sequence[Parameter],
                      memory: bool) -> list[float]:
    """Fitted values of ``params`` on the cases ``cs`` (:func:`shardplan.fitting.fit_residuals`)."""
    from shardplan.fitting import fit_residuals
    return fit_residuals(lambda h, f: residuals(cs, h, f, memory), params, hw, profile).values


def _cross_validated(cs: Sequence[Case], hw: HardwareSpec, profile: FrameworkProfile, params: Sequence[Parameter],
                     memory: bool, progress: Callable[[int, int, str], None] | None = None,
                     total: int = 0, lines: list[str] | None = None,
                     group_errors: list[tuple[str, str, float, float]] | None = None,
                     ratios: list[float] | None = None) -> dict[str, dict[str, float]]:
    """Held-out errors: leave one model out and leave one node count out (each needs >= 2 groups), with the base
    hardware's error on the same held-out groups (``base_median_of_groups``: what the fit has to beat);
    ``progress(done, total, label)`` before each fold's fit (the main fit counted as the first); ``lines`` (a list)
    gets one line per held-out group (:attr:`Calibration.cross_validated_groups`), ``group_errors`` its figures
    (:attr:`Calibration.group_errors`), ``ratios`` each held-out record's predicted / measured throughput
    (:attr:`Calibration.heldout_ratios`)."""
    out: dict[str, dict[str, float]] = {}
    done = 1
    for name, key in CV_SPLITS:
        groups = sorted({key(c) for c in cs}, key=str)
        if len(groups) < 2 or not params:
            continue
        held: list[float] = []
        base: list[float] = []
        for g in groups:
            if progress is not None:
                progress(done, total, f"{name}: {g} held out")
            done += 1
            train = [c for c in cs if key(c) != g]
            test = [c for c in cs if key(c) == g]
            if not any(c.record.measured_tokens_per_s_per_device() for c in train):
                continue
            h, f = apply(params, fit_residuals_for(train, hw, profile, params, memory), hw, profile)
            e, b = errors(test, h, f, ratios=ratios), errors(test, hw, profile)
            if not math.isnan(e["throughput_median"]):
                held.append(e["throughput_median"])
                base.append(b["throughput_median"])
                what = f"{g} node{'s' if g != 1 else ''}" if "node" in name else str(g)
                if group_errors is not None:
                    group_errors.append((name, what, e["throughput_median"], b["throughput_median"]))
                if lines is not None:
                    lines.append(f"{name}: {what} held out ({len(test)} record{'s' if len(test) != 1 else ''}): "
                                 f"fitted {e['throughput_median']:.1%}, base {b['throughput_median']:.1%}")
        if held:
            out[name] = {"throughput_median_of_groups": statistics.median(held), "groups": float(len(held)),
                         "base_median_of_groups": statistics.median(base)}
    return out


#: the ``sources`` key of a calibrated hardware file naming the precision policies its records were priced in
#: (``bf16-mixed (12 records)``); :func:`shardplan.cli.common.fitted_precision_note` reads it
FITTED_PRECISION_SOURCE = "fitted_precision"


#: the ``sources`` key of a calibrated hardware file counting its tp > 1 records that ran tp_overlap
#: (:func:`shardplan.cli.common.fitted_overlap_note`)
FITTED_TP_OVERLAP_SOURCE = "fitted_tp_overlap"
#: the ``sources`` key of a calibrated hardware file holding its own held-out band (:func:`heldout_band_text`)
HELDOUT_BAND_SOURCE = "heldout_band"
#: fewest held-out predictions the file's own band is written from
MIN_HELDOUT_BAND = 3


def heldout_band_text(cal: Calibration) -> str | None:
    """The file's own band: the 10th, 50th and 90th percentiles (numpy.percentile, linear) of the predicted /
    measured throughput of the records its cross-validation folds held out and their median |ratio - 1|, e.g.
    ``"p10 0.874 p50 1.02 p90 1.31 median_abs_error 0.12 over 12 held-out predictions"``; None with fewer than :data:`MIN_HELDOUT_BAND` (new-user pass 58: a calibrated
    plan was headed by the built-ins' 80% band from public runs, three times narrower than the file's own held-out
    error)."""
    r = cal.heldout_ratios
    if len(r) < MIN_HELDOUT_BAND:
        return None
    p10, p50, p90 = (float(np.percentile(r, q)) for q in (10, 50, 90))
    mae = statistics.median(abs(x - 1) for x in r)
    return f"p10 {p10:.4g} p50 {p50:.4g} p90 {p90:.4g} median_abs_error {mae:.4g} over {len(r)} held-out predictions"


def cluster_yaml(cal: Calibration, hw: HardwareSpec, n_records: int, date: str,
                 profile: FrameworkProfile | None = None, source: str | None = None) -> dict:
    """The hardware document ``--hardware`` reads: ``base`` + the fitted hardware fields, with a
    source note per field (records, date, in-sample and cross-validated error), and with
    ``profile`` a ``framework`` section (:func:`profile_yaml`: the profile the fit used, with its
    fitted fields), which ``--hardware`` applies when ``--framework`` is not given. When the base
    hardware came from a file (``source``), the document starts from that file's fields (its own
    ``base`` preset, measured tables, sources) instead of naming it as a preset.

    Raises:
        ConfigError: ``source`` is unreadable.
    """
    from shardplan.loaders import hardware_document
    name = hw.name if hw.name.endswith("-calibrated") else f"{hw.name}-calibrated"  # a re-calibration keeps its name
    doc = hardware_document(source, hw, name)
    note = "; ".join([f"shardplan calibrate on {n_records} record{'s' if n_records != 1 else ''} ({date}): in-sample "
                      f"throughput median |error| {cal.in_sample.get('throughput_median', math.nan):.1%}",
                      *(f"{k} {v['throughput_median_of_groups']:.1%}" for k, v in cal.cross_validated.items()),
                      *([f"{len(cal.degraded)} run(s) on degraded hardware by their own bus-bandwidth measurement left "
                         "out"] if cal.degraded else [])])
    sources = dict(doc.get("sources") or {})
    for p, v in zip(cal.params, cal.values):
        if p.target == "hardware" and p.field not in cal.held:
            doc[p.field] = written(v)
            sources[p.field] = note
            iso = scaled_isolated(hw, v) if p.field == "matmul_efficiency" else None
            if iso is not None:  # the isolated-GEMM ceiling moves with the fitted rate (fitting.apply)
                doc["isolated_matmul_efficiency"] = written(iso)
                sources["isolated_matmul_efficiency"] = (f"the base's {hw.isolated_matmul_efficiency:g} x the fitted / "
                                                         f"base matmul_efficiency ({written(v):g} / "
                                                         f"{hw.matmul_efficiency:g}); " + note)
    band = heldout_band_text(cal)
    if band:  # the file's own held-out band, what estimate / plan show for it (accuracy_band.band_for)
        sources[HELDOUT_BAND_SOURCE] = band
    with_overlap, with_tp = cal.tp_overlap_records
    if with_tp:  # how many tp records ran the overlap (estimate / plan note a layout that uses it when none did)
        sources[FITTED_TP_OVERLAP_SOURCE] = f"{with_overlap} of {with_tp} records with tp > 1"
    if cal.precisions:  # which precision policy the fitted constants hold for (estimate notes another one)
        sources[FITTED_PRECISION_SOURCE] = ", ".join(f"{k} ({v} record{'s' if v != 1 else ''})"
                                                     for k, v in sorted(cal.precisions.items()))
    doc["sources"] = sources
    if profile is not None:
        doc["framework"] = profile_yaml(cal, profile)
    return doc


def written(value: float) -> float:
    """A fitted value as the files hold it: four significant digits (0.00019999996568955734 -> 0.0002; the fit's
    own precision is far coarser than the optimizer's last digits)."""
    return float(f"{float(value):.4g}")


def profile_yaml(cal: Calibration, profile: FrameworkProfile) -> dict:
    """The profile the fit used, with its fitted fields, as a profile document: ``base`` a preset
    (the profile's own name, or the preset it differs least from), every other field where it
    differs from that preset (so a profile read from a file keeps its own values), then the
    fitted fields."""
    from shardplan.presets.frameworks import FRAMEWORKS
    mine = profile.model_dump(exclude={"sources", "origin"})

    def differing(base: FrameworkProfile) -> dict:
        theirs = base.model_dump(exclude={"sources", "origin"})
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in mine.items() if v != theirs[k]}

    base = FRAMEWORKS.get(profile.name) or min(FRAMEWORKS.values(), key=lambda b: len(differing(b)))
    doc: dict = {"base": base.name, **differing(base)}
    for p, v in zip(cal.params, cal.values):
        if p.target == "framework" and p.field not in cal.held:
            doc[p.field] = written(v)
    if cal.usable_hbm_fraction is not None and cal.usable_hbm_fraction != profile.usable_hbm_fraction:
        doc["usable_hbm_fraction"] = cal.usable_hbm_fraction  # only a changed limit (new-user pass 57: 1.0 written over 1.0)
    return doc
