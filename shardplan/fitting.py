"""Fit a few physical constants of a hardware spec and a framework profile to measured runs.

The cost model stays the same physics; only named constants (per-call overheads, efficiencies,
overlap fractions...) move, each inside bounds that keep it physical. The fit is a robust
nonlinear least-squares on the log ratio of predicted to measured throughput
(``scipy.optimize.least_squares`` with the ``soft_l1`` loss, Branch et al. 1999 trust-region
reflective), so a few odd runs (stragglers, failed kernels) do not drag the constants. Cross-validation
by groups (:func:`cross_validate`: leave one model or one node count out) is how the docs report
how well a fit predicts runs it has not seen.

Units: whatever the fitted field's unit is (seconds, fractions).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np

from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec

Run = TypeVar("Run")
#: predict(run, hardware, profile) -> predicted throughput (any unit the measurement shares), or None
#: when the planner refuses the run
Predictor = Callable[[Run, HardwareSpec, FrameworkProfile], "float | None"]


@dataclass(frozen=True)
class Parameter:
    """One fitted field: ``target`` 'framework' or 'hardware', the field name, its bounds and the unit
    its value is in (for display: 'fraction', 's', 'B', ...)."""

    target: Literal["framework", "hardware"]
    field: str
    lower: float
    upper: float
    unit: str = ""

    def at_bound(self, value: float, rel: float = 1e-3) -> str | None:
        """'lower' or 'upper' when ``value`` sits on that bound (within ``rel`` of the range), else None:
        the records push the parameter past what the bounds allow, so it is not identified there."""
        tol = rel * (self.upper - self.lower)
        if value <= self.lower + tol:
            return "lower"
        if value >= self.upper - tol:
            return "upper"
        return None

    def given(self, hw: HardwareSpec, profile: FrameworkProfile) -> float | None:
        """The field's value in ``hw`` / ``profile`` as given (None: a derived default), not clipped."""
        v = getattr(profile if self.target == "framework" else hw, self.field)
        if v is None and self.field == "fp4_matmul_efficiency":  # None: the rate HardwareSpec derives for it
            v = hw.matmul_efficiency_of("fp4")
        return v

    def initial(self, hw: HardwareSpec, profile: FrameworkProfile) -> float:
        """The field's current value (:meth:`given`), clipped into the bounds."""
        v = self.given(hw, profile)
        if v is None:  # a derived default (e.g. overlap_slowdown): start mid-range
            v = (self.lower + self.upper) / 2
        return min(max(float(v), self.lower), self.upper)


def scaled_isolated(hw: HardwareSpec, matmul_efficiency: float) -> float | None:
    """``HardwareSpec.isolated_matmul_efficiency`` scaled with a fitted ``matmul_efficiency``: ``isolated x fitted /
    base``, at most 1 (None when ``hw`` has none). A fit moves the cluster's GEMM rate, and the isolated GEMM of
    the same chips moves with it: an eager profile's rate is ``min(gpu_matmul_scale x matmul_efficiency,
    isolated)`` (:func:`shardplan.cost.compute.gemm_device`), flat in ``matmul_efficiency`` above ``isolated /
    gpu_matmul_scale`` (torchtitan on an H100: 0.73 / 1.32 = 0.553 < the preset's 0.59), so with the ceiling held a
    torchtitan fit could not move it (new-user pass 57: 30 % slower records left it at 0.59)."""
    iso = hw.isolated_matmul_efficiency
    return None if iso is None else min(1.0, iso * matmul_efficiency / hw.matmul_efficiency)


def apply(params: Sequence[Parameter], values: Sequence[float], hw: HardwareSpec,
          profile: FrameworkProfile) -> tuple[HardwareSpec, FrameworkProfile]:
    """``hw`` and ``profile`` with the fitted fields replaced by ``values``; a fitted ``matmul_efficiency`` scales
    the isolated-GEMM ceiling with it (:func:`scaled_isolated`)."""
    fw = {p.field: float(v) for p, v in zip(params, values) if p.target == "framework"}
    hv = {p.field: float(v) for p, v in zip(params, values) if p.target == "hardware"}
    if "matmul_efficiency" in hv and "isolated_matmul_efficiency" not in hv:
        iso = scaled_isolated(hw, hv["matmul_efficiency"])
        if iso is not None:
            hv["isolated_matmul_efficiency"] = iso
    return hw.model_copy(update=hv), profile.model_copy(update=fw)


@dataclass
class FitResult(Generic[Run]):
    """Fitted values (same order as the parameters) and the log-ratio residual of every run used."""

    params: list[Parameter]
    values: list[float]
    residuals: list[float]
    success: bool
    message: str

    def as_dict(self) -> dict[str, float]:
        """``{target.field: value}``."""
        return {f"{p.target}.{p.field}": v for p, v in zip(self.params, self.values)}


def log_residuals(runs: Sequence[Run], measured: Sequence[float], predict: Predictor, hw: HardwareSpec,
                  profile: FrameworkProfile, refused: float = 3.0) -> np.ndarray:
    """``log(predicted / measured)`` per run; a refused run counts as ``refused`` (a large miss)."""
    out = np.empty(len(runs))
    for i, (run, y) in enumerate(zip(runs, measured)):
        pred = predict(run, hw, profile)
        out[i] = refused if pred is None or pred <= 0 else math.log(pred / y)
    return out


def fit(runs: Sequence[Run], measured: Sequence[float], predict: Predictor, params: Sequence[Parameter],
        hw: HardwareSpec, profile: FrameworkProfile, max_nfev: int = 60) -> FitResult:
    """Robust least-squares fit of ``params`` to the throughput log ratios (module docstring).

    Raises:
        ValueError: if there are no runs, or fewer runs than parameters.
    """
    if len(runs) < max(1, len(params)):
        raise ValueError(f"{len(runs)} runs cannot identify {len(params)} parameters")
    return fit_residuals(lambda h, f: log_residuals(runs, measured, predict, h, f), params, hw, profile, max_nfev)


def fit_residuals(residual: Callable[[HardwareSpec, FrameworkProfile], np.ndarray], params: Sequence[Parameter],
                  hw: HardwareSpec, profile: FrameworkProfile, max_nfev: int = 60) -> FitResult:
    """Robust least-squares fit of ``params`` minimizing ``residual(hardware, profile)`` (any
    dimensionless residual vector, e.g. log ratios of throughput and memory): parameters scaled to
    [0, 1] inside their bounds, soft-L1 loss with scale 0.1 (module docstring)."""
    from scipy.optimize import least_squares

    params = list(params)
    x0 = np.array([p.initial(hw, profile) for p in params])
    lo, hi = np.array([p.lower for p in params]), np.array([p.upper for p in params])
    scale = np.maximum(hi - lo, 1e-12)
    # start strictly inside the bounds: from a corner the trust-region method stops at once
    # (its first projected step is zero), e.g. every overhead at its default 0
    z0 = np.clip((x0 - lo) / scale, 0.05, 0.95)

    def scaled(z: np.ndarray) -> np.ndarray:
        h, f = apply(params, lo + z * scale, hw, profile)
        return residual(h, f)

    sol = least_squares(scaled, z0, bounds=(0.0, 1.0), loss="soft_l1", f_scale=0.1, diff_step=1e-3,
                        max_nfev=max_nfev)
    values = list(lo + sol.x * scale)
    return FitResult(params, values, list(sol.fun), bool(sol.success), str(sol.message))


def cross_validate(runs: Sequence[Run], measured: Sequence[float], groups: Sequence[Hashable], predict: Predictor,
                   params: Sequence[Parameter], hw: HardwareSpec, profile: FrameworkProfile, max_nfev: int = 60
                   ) -> dict[Hashable, tuple[FitResult, list[int]]]:
    """Leave one group out: for each group, fit on the other groups and return the fit with the
    indices of the held-out runs (score them with :func:`log_residuals` under the fitted values)."""
    out = {}
    for g in dict.fromkeys(groups):
        train = [i for i, k in enumerate(groups) if k != g]
        test = [i for i, k in enumerate(groups) if k == g]
        res = fit([runs[i] for i in train], [measured[i] for i in train], predict, params, hw, profile, max_nfev)
        out[g] = (res, test)
    return out


#: candidate values of ``FrameworkProfile.usable_hbm_fraction`` (:func:`choose_usable_hbm_fraction`): 0.70 ... 1.00
USABLE_HBM_FRACTIONS = tuple(round(0.70 + 0.01 * i, 2) for i in range(31))


def usage_point(estimate, hbm_bytes: float, ran: bool) -> tuple[float | None, bool]:
    """One point of :func:`choose_usable_hbm_fraction`: the run's predicted device usage as a fraction of
    ``hbm_bytes`` (an :class:`~shardplan.cost.step.Estimate` priced with the whole HBM usable), or None when
    the planner refuses the layout (``estimate`` None or a refusal message) or predicts it to fail for
    another reason; and whether the run ran."""
    if estimate is None or isinstance(estimate, str) or estimate.failure is not None:
        return None, ran
    return estimate.memory.total / hbm_bytes, ran


def choose_usable_hbm_fraction(points: Sequence[tuple[float | None, bool]], min_gain: int = 0,
                               keep: float = 1.0) -> float:
    """``FrameworkProfile.usable_hbm_fraction`` chosen on measured outcomes: ``points`` holds, per run,
    its predicted device usage as a fraction of HBM (None when the planner predicts it to fail for
    another reason) and whether it ran. The fraction among :data:`USABLE_HBM_FRACTIONS` up to which
    "runs" classifies the most runs right (ties: the largest); ``keep`` (the fraction in force, 1 by
    default) unless the best classifies more than ``min_gain`` more runs right than ``keep`` does, so
    outcomes that say nothing about the range keep it. A decision stump on one feature, the same rule
    :func:`shardplan.cost.memory.hbm_limit` applies."""
    def right(t: float) -> int:
        return sum((p is not None and p <= t) == ran for p, ran in points)

    best = max(USABLE_HBM_FRACTIONS, key=lambda t: (right(t), t))
    return best if right(best) > right(keep) + min_gain else keep


@dataclass(frozen=True)
class GemmFit:
    """The GEMM model's constants fitted to measured isolated GEMMs (:func:`fit_gemm_constants`).

    Attributes:
        asymptote: per-SM rate inside a full wave at infinite K, as a fraction of the bf16 peak
            (the isolated large-GEMM rate; compare ``HardwareSpec.isolated_matmul_efficiency``).
        fill_steps: ``HardwareSpec.gemm_fill_steps`` (K main-loop steps of fixed cost per tile).
        stream_k: whether the fit with a Stream-K decomposition (``HardwareSpec.gemm_stream_k``)
            explained the measurements better than whole waves (smaller mean |log error|: the
            decomposition shows on the few GEMMs with a partial last wave, which a median ignores).
        mean_abs_log_error: mean |log(predicted / measured seconds)| at the fitted values.
        median_abs_error: median |predicted / measured - 1| of the seconds at the fitted values.
        used: measurements fitted (those above the launch floor).
    """

    asymptote: float
    fill_steps: float
    stream_k: bool
    mean_abs_log_error: float
    median_abs_error: float
    used: int


#: GEMMs shorter than this are timed as host launches, not tensor-core work (a CUDA kernel launch
#: and framework dispatch cost ~5-20 us: NVIDIA CUDA C++ Best Practices Guide, "kernel launch overhead")
GEMM_FIT_FLOOR_S = 30e-6


def fit_gemm_constants(gemms: Sequence[tuple[int, int, int, float]], hw: HardwareSpec) -> GemmFit:
    """Fit the asymptote and ``gemm_fill_steps`` of :func:`shardplan.cost.gemm.gemm_time` to measured
    bf16 GEMMs ``(m, n, k, seconds)`` on ``hw`` (its SM count, tiles and K step kept), once with whole
    waves and once with Stream-K; the better of the two (mean |log error|) is returned. Robust
    least squares on ``log(predicted / measured seconds)`` (:func:`fit_residuals`), asymptote in
    [0.05, 1], fill in [0, 16] steps; GEMMs under :data:`GEMM_FIT_FLOOR_S` are left out.

    Raises:
        ValueError: fewer than 3 GEMMs above the floor, or ``hw`` without ``sm_count`` (TPU: no
            tiles-and-waves model to fit).
    """
    from shardplan.cost.gemm import GemmShape, gemm_time

    runs = [g for g in gemms if g[3] >= GEMM_FIT_FLOOR_S]
    if hw.sm_count is None or len(runs) < 3:
        raise ValueError(f"{len(runs)} GEMMs of at least {GEMM_FIT_FLOOR_S * 1e6:.0f} us on {hw.name} "
                         f"(sm_count={hw.sm_count}): need 3 or more on a GPU preset to fit the GEMM model")
    params = [Parameter("hardware", "matmul_efficiency", 0.05, 1.0), Parameter("hardware", "gemm_fill_steps", 0.0, 16.0)]
    profile = FrameworkProfile(name="gemm-fit")

    def residual(h: HardwareSpec, _f: FrameworkProfile) -> np.ndarray:
        return np.array([math.log(gemm_time(GemmShape(m, n, k), h).seconds / s) for m, n, k, s in runs])
    best: GemmFit | None = None
    for stream_k in (False, True):
        base = hw.model_copy(update={"gemm_stream_k": stream_k, "matmul_efficiency": 0.7, "gemm_fill_steps": 2.0})
        res = fit_residuals(residual, params, base, profile, max_nfev=200)
        h, _ = apply(params, res.values, base, profile)
        r = residual(h, profile)
        cand = GemmFit(float(res.values[0]), float(res.values[1]), stream_k, float(np.mean(np.abs(r))),
                       float(np.median(np.abs(np.exp(r) - 1))), len(runs))
        if best is None or cand.mean_abs_log_error < best.mean_abs_log_error - 1e-4:
            best = cand
    assert best is not None
    return best
