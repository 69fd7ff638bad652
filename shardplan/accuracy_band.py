"""How far the planner's throughput has been from measured runs it was never fitted on: an 80% band.

A point prediction says nothing about how much to trust it. The planner's record on public runs read after every
fit (docs/accuracy.md: the held-out and scouted sections, over 500 runs on A100 to GB300, MI300X and TPU v4 to v6e) is the
honest measure, so ``estimate`` prints beside its tokens/s the range that held 80% of those runs priced with the
same framework profile on the same chip architecture: if 10% of them were predicted at or above 1.25x what they
measured and 10% at or below 0.95x, a prediction P stands for a measurement between P / 1.25 and P / 0.95. Where a
model class (dense or Mixture-of-Experts) has enough runs of its own in that group, the class's runs give the band,
and an MoE model without such a group gets the pair's band widened by every held-out MoE run
(:func:`class_lookup`): MoE runs have been priced less well than dense ones.

Data: ``shardplan/data/heldout_errors.json``, written by ``python benchmarks/error_bands.py`` (percentiles by
numpy.percentile, linear interpolation). Nothing here changes a prediction. The band describes the built-in
profiles and presets; a profile or cluster file fitted with ``shardplan calibrate`` has its own cross-validated
errors (docs/calibration.md), and the CLI says so beside the band. When p10 is above 1 the whole band lies below
the prediction: the planner has been fast on at least 90% of such runs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

#: the band file (written by benchmarks/error_bands.py)
BAND_FILE = Path(__file__).resolve().parent / "data" / "heldout_errors.json"
#: the fewest runs a group needs before its own percentiles are used (else a wider group's)
MIN_RUNS = 8
#: how often two layouts predicted a given gap apart were ordered right on the measured H100 grid
#: (written by benchmarks/order_accuracy.py)
ORDER_FILE = Path(__file__).resolve().parent / "data" / "order_accuracy.json"


@dataclass(frozen=True)
class ThroughputBand:
    """Predicted / measured tokens/s on the held-out runs of one group.

    Attributes:
        group: the runs it summarizes, e.g. ``"megatron profile on hopper"`` or ``"all held-out runs"``.
        runs: how many runs.
        ratio_p10, ratio_p50, ratio_p90: 10th / 50th / 90th percentile of predicted / measured tokens/s
            (dimensionless; above 1: the planner was fast).
        median_abs_error: median of |predicted / measured - 1|.
    """

    group: str
    runs: int
    ratio_p10: float
    ratio_p50: float
    ratio_p90: float
    median_abs_error: float
    #: what ``runs`` counts, for :func:`band_text`
    what: str = "unseen public runs"

    def measured_range(self, predicted: float) -> tuple[float, float]:
        """The range (same unit as ``predicted``, e.g. tokens/s) that held 80% of the group's measurements:
        ``(predicted / ratio_p90, predicted / ratio_p10)``. Example: predicted 1,000 with p10 0.95 and p90 1.25
        gives (800, 1,052.6)."""
        return predicted / self.ratio_p90, predicted / self.ratio_p10

    def to_dict(self, predicted: float) -> dict:
        """JSON form: the group, its percentiles and the measured range for ``predicted`` (tokens/s)."""
        low, high = self.measured_range(predicted)
        return {"group": self.group, "runs": self.runs, "ratio_p10": self.ratio_p10, "ratio_p50": self.ratio_p50,
                "ratio_p90": self.ratio_p90, "median_abs_error": self.median_abs_error,
                "tokens_per_s_low": low, "tokens_per_s_high": high}


@lru_cache(maxsize=1)
def _load(path: Path = BAND_FILE) -> dict:
    return json.loads(path.read_text())


def best_public_mfu(peak_flops_bf16: float, fp8: bool, moe: bool = False) -> tuple[float, str] | None:
    """(measured MFU, run label) of the best public held-out run on a chip of this bf16 peak (FLOP/s) and precision
    class (the band file's ``best_mfu``: runs without a [B] tier, or on a chip with none of those its dense [B] runs;
    or with ``moe`` its ``best_mfu_moe``, every MoE run's; MFU in the planner's definition), or None (no such run, or a
    band file written before the entry existed). ``benchmarks/error_bands.py`` (``best_mfu``) writes both."""
    for entry in _load().get("best_mfu_moe" if moe else "best_mfu", []):
        if entry["peak_flops_bf16"] == peak_flops_bf16 and bool(entry["fp8"]) == fp8:
            return float(entry["mfu"]), str(entry["run"])
    return None


def _band(entry: dict, group: str) -> ThroughputBand:
    return ThroughputBand(group, int(entry["runs"]), float(entry["ratio_p10"]), float(entry["ratio_p50"]),
                          float(entry["ratio_p90"]), float(entry["median_abs_error"]))


def lookup(doc: dict, framework: str, arch: str | None) -> ThroughputBand:
    """The group of ``doc`` (the band file's JSON; groups have at least its ``min_runs`` runs) that describes a
    prediction of ``framework`` on ``arch``: the pair's own group; without one, the framework on any chip and the
    architecture under any framework together (the union of their ranges, p10 the smaller and p90 the larger; the
    median and median |error| the framework's; runs the two counts added: :func:`_widened`), as neither alone says
    how the pair behaves (a profile's record elsewhere can hide a chip's, e.g. the MI300X runs measured 1.4-2.6x below
    prediction); else the one that exists; else every held-out run."""
    for e in doc["framework_arch"]:
        if e["framework"] == framework and e["arch"] == arch:
            return _band(e, f"{framework} profile on {arch}")
    fw = next((e for e in doc["framework"] if e["framework"] == framework), None)
    ar = next((e for e in doc["arch"] if e["arch"] == arch), None)
    if fw and ar:
        return _widened(_band(fw, f"{framework} profile on any chip"), ar, f"any framework on {arch}")
    if fw:
        return _band(fw, f"{framework} profile on any chip")
    if ar:
        return _band(ar, f"any framework on {arch}")
    return _band(doc["all"], "all held-out runs")


def _widened(base: ThroughputBand, other: dict, what: str) -> ThroughputBand:
    """``base`` widened by the group ``other`` (a band-file entry): p10 the smaller, p90 the larger, runs added (a
    run in both counts twice), the median and median |error| ``base``'s; the group text says so."""
    return ThroughputBand(f"{base.group}, widened by {what}", base.runs + int(other["runs"]),
                          min(base.ratio_p10, float(other["ratio_p10"])), base.ratio_p50,
                          max(base.ratio_p90, float(other["ratio_p90"])), base.median_abs_error)


def class_lookup(doc: dict, framework: str, arch: str | None, moe: bool) -> ThroughputBand:
    """:func:`lookup` for a model of one class (``moe``: a Mixture-of-Experts model, else dense): the (framework,
    architecture, class) group of ``doc`` when it has one; else :func:`lookup`'s group, for an MoE model widened by
    every held-out MoE run (the wider p10 and p90; runs added), since MoE runs have been priced less well than dense
    ones (docs/accuracy.md: median |error| about 2.5x the dense runs') and a framework's mostly dense record would
    understate that."""
    cls = "moe" if moe else "dense"
    for e in doc.get("framework_arch_class", []):
        if e["framework"] == framework and e["arch"] == arch and e["class"] == cls:
            return _band(e, f"{framework} profile on {arch}, {'MoE' if moe else 'dense'} models")
    base = lookup(doc, framework, arch)
    every = next((e for e in doc.get("class", []) if e["class"] == "moe"), None) if moe else None
    return _widened(base, every, "every MoE run") if every else base


def throughput_band(framework: str, arch: str | None, moe: bool | None = None) -> ThroughputBand | None:
    """:func:`lookup` in the shipped band file for a framework profile name (``FrameworkProfile.name``) and a
    ``HardwareSpec.compute_arch`` (or ``kind`` when it has none); with ``moe`` (True / False: the model's class)
    :func:`class_lookup`. None if the file is missing or unreadable (a source checkout without it: the estimate is
    printed without a band)."""
    try:
        doc = _load()
        return lookup(doc, framework, arch) if moe is None else class_lookup(doc, framework, arch, moe)
    except (OSError, ValueError, KeyError):
        return None


def band_for(framework, hardware, moe: bool | None = None) -> ThroughputBand | None:
    """:func:`throughput_band` of a ``FrameworkProfile`` on a ``HardwareSpec`` (its ``compute_arch``, else its
    ``kind``) for a model of class ``moe`` (None: any), the group text saying when the profile or the hardware is a
    file rather than a built-in (the record is the built-ins'; a fitted file has its own cross-validated errors:
    ``shardplan calibrate``); None without a band file."""
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    band = throughput_band(framework.name, hardware.compute_arch or hardware.kind, moe)
    files = [what for what, is_file in (("profile", bool(framework.origin) and not framework.inline),
                                        ("hardware", hardware.name not in HARDWARE)) if is_file]
    # inline overrides that restate the built-in's values change nothing (a new user's 1.6e+9 on deepspeed)
    skip = {"origin", "sources"}
    overrides = framework.inline and (framework.name not in FRAMEWORKS or framework.model_dump(exclude=skip)
                                      != FRAMEWORKS[framework.name].model_dump(exclude=skip))
    if band is None or not (files or overrides):
        return band
    mine = ([f"your {' and '.join(files)} {'come from files' if len(files) > 1 else 'comes from a file'}"]
            if files else []) + \
        ([f"your profile overrides {framework.spec.split('+', 1)[1]}"] if overrides else [])
    # a file `shardplan calibrate` wrote says how well it fits its own records (cluster_yaml's sources note): the
    # better figure for that file (a new user's calibrated estimate showed only the built-ins' record)
    from shardplan.records import POOR_FIT_SOURCE
    sources = hardware.sources or {}
    fitted = next((v for v in sources.values() if str(v).startswith("shardplan calibrate on")), None)
    if fitted is not None and any(str(k).lower() == POOR_FIT_SOURCE for k in sources):
        # a --force file's in-sample error says nothing (an underdetermined fit reads 0.0%: new-user pass 56); the
        # poor-fit note every command prints says why
        mine.append("the file's own fit is poor (see its poor-fit note): its in-sample error is not a record")
    elif fitted is not None:
        own = heldout_band(sources)
        if own is not None:  # the file's own held-out band leads; the built-ins' is named after it
            return replace(own, group=f"{own.group}; the built-ins' band on {band.group}: "
                                      f"{band.ratio_p10:.2f}-{band.ratio_p90:.2f} of measured")
        mine.append(f"the file's own fit: {fitted.removeprefix('shardplan calibrate on ')}")
    return replace(band, group=f"{band.group}; the built-ins' record, {'; '.join(mine)}")


def heldout_band(sources: dict) -> ThroughputBand | None:
    """The band a calibrated hardware file carries of its own (``sources.heldout_band``, written by
    :func:`shardplan.calibrate.heldout_band_text`: percentiles of predicted / measured over the records its
    cross-validation held out), or None when it has none or it does not parse."""
    import re

    from shardplan.calibrate import HELDOUT_BAND_SOURCE  # the key the writer uses: one source of truth
    text = str(sources.get(HELDOUT_BAND_SOURCE, ""))
    num = r"([\d.e+-]+)"
    m = re.fullmatch(rf"p10 {num} p50 {num} p90 {num} median_abs_error {num} over (\d+) held-out predictions", text)
    if not m:
        return None
    try:
        p10, p50, p90, mae = (float(m.group(i)) for i in (1, 2, 3, 4))
    except ValueError:
        return None
    if not 0 < p10 <= p50 <= p90:
        return None
    return ThroughputBand(group="your calibrated file's cross-validation, each record predicted by a fit without its "
                                "model or node count", runs=int(m.group(5)), ratio_p10=p10, ratio_p50=p50,
                          ratio_p90=p90, median_abs_error=mae, what="held-out predictions of your records")


#: how far outside the held-out runs' range (parameters, step time) a prediction may lie and still get their band
SCOPE_FACTOR = 10.0


def out_of_scope(n_params: float, step_s: float, doc: dict | None = None) -> str | None:
    """Why the held-out runs' band says nothing about a prediction, or None: a model with fewer than a tenth of the
    smallest run's parameters or more than ten times the largest's, or a step shorter than a tenth of the shortest
    measured step (the band file's ``scope``; a 20 us tiny-model step was given a band from 7B-scale runs).
    ``n_params``: parameters; ``step_s``: the predicted step time in seconds."""
    doc = _load() if doc is None else doc
    scope = doc.get("scope")
    if not scope:
        return None
    (p_lo, p_hi), (t_lo, _) = scope["params"], scope["step_s"]
    if p_lo / SCOPE_FACTOR <= n_params <= p_hi * SCOPE_FACTOR and step_s >= t_lo / SCOPE_FACTOR:
        return None
    from shardplan.units import fmt_seconds
    return (f"none: the public runs behind it have {p_lo / 1e6:,.0f}M-{p_hi / 1e9:,.0f}B parameters and steps of "
            f"{fmt_seconds(t_lo)} or more; this prediction, {n_params / 1e6:,.3g}M parameters and a "
            f"{fmt_seconds(step_s)} step, lies outside them")


def estimate_band(e) -> ThroughputBand | None:
    """:func:`band_for` of an Estimate's framework profile, hardware and model class (MoE or dense); None for a
    layout predicted not to run (its throughput is not a claim), one outside the runs' scope (:func:`out_of_scope`)
    or without a band file."""
    if not e.runs or (BAND_FILE.exists() and out_of_scope(e.model.n_params, e.step_s)):
        return None
    return band_for(e.training.framework, e.hardware, e.model.is_moe)


def band_text(band: ThroughputBand, per_device: float) -> str:
    """One line for people: the measured range for a prediction of ``per_device`` tokens/s per device and the
    runs it comes from, e.g. ``"7,379-10,317 per device (52 unseen public runs: megatron profile on hopper)"``."""
    low, high = band.measured_range(per_device)
    from shardplan.units import fmt_rate
    return f"{fmt_rate(low)}-{fmt_rate(high)} per device ({band.runs} {band.what}: {band.group})"


@dataclass(frozen=True)
class OrderReliability:
    """How often the planner ordered two layouts right when it predicted them this far apart, on two sets of
    measured pairs (``benchmarks/order_accuracy.py``): held-out public runs from one source with one model, chip,
    framework, precision, device count and sequence length (``public``), and layouts of one (model, node count)
    group of the measured H100 grid predicted leave-one-model-out (``grid``).

    Attributes:
        predicted_gap: the two predictions' gap it was looked up for, |ln(tokens/s ratio)|.
        gap_low, gap_high: the bin of predicted gaps holding it (``gap_high`` None: unbounded).
        public_pairs, public_fraction_right: pairs in the bin and the share ordered as measured (0.5: a coin flip).
        grid_pairs, grid_fraction_right: the same on the measured grid.
    """

    predicted_gap: float
    gap_low: float
    gap_high: float | None
    public_pairs: int
    public_fraction_right: float
    grid_pairs: int
    grid_fraction_right: float

    def text(self) -> str:
        """E.g. ``"layouts predicted 2.5%-5.1% apart were ordered right in 79% of 39 public held-out pairs and 59%
        of 762 pairs of the measured H100 grid"``."""
        low = f"{math.expm1(self.gap_low):.1%}"
        span = f"{low}-{math.expm1(self.gap_high):.1%}" if self.gap_high is not None else f"{low} or more"
        return (f"layouts predicted {span} apart were ordered right in {self.public_fraction_right:.0%} of "
                f"{self.public_pairs:,} public held-out pairs and {self.grid_fraction_right:.0%} of {self.grid_pairs:,} "
                "pairs of the measured H100 grid")

    def to_dict(self) -> dict:
        """JSON form (the fields)."""
        return {"predicted_gap": self.predicted_gap, "gap_low": self.gap_low, "gap_high": self.gap_high,
                "public_pairs": self.public_pairs, "public_fraction_right": self.public_fraction_right,
                "grid_pairs": self.grid_pairs, "grid_fraction_right": self.grid_fraction_right}


def _bin(bins: list[dict], gap: float) -> dict | None:
    return next((b for b in bins if b["gap_low"] <= gap and (b["gap_high"] is None or gap < b["gap_high"])), None)


def order_lookup(doc: dict, gap: float) -> OrderReliability | None:
    """The bin of ``doc`` (the order file's JSON) holding ``gap`` = |ln(tokens_a / tokens_b)| in both sets of
    pairs, or None where either set has no pair that far apart."""
    pub, grid = _bin(doc["public"]["bins"], gap), _bin(doc["grid"]["bins"], gap)
    if pub is None or grid is None:
        return None
    high = None if grid["gap_high"] is None else float(grid["gap_high"])
    return OrderReliability(gap, float(grid["gap_low"]), high, int(pub["pairs"]), float(pub["fraction_right"]),
                            int(grid["pairs"]), float(grid["fraction_right"]))


@lru_cache(maxsize=1)
def _load_order() -> dict:
    return json.loads(ORDER_FILE.read_text())


def order_reliability(tokens_a: float, tokens_b: float) -> OrderReliability | None:
    """:func:`order_lookup` in the shipped order file for two predicted throughputs (tokens/s, any common unit);
    None if the file is missing or either value is not positive."""
    if tokens_a <= 0 or tokens_b <= 0:
        return None
    try:
        return order_lookup(_load_order(), abs(math.log(tokens_a / tokens_b)))
    except (OSError, ValueError, KeyError):
        return None
