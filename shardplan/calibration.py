"""Reproduce published training runs (``shardplan/data/published_runs.csv``) with the planner.

Each CSV row is turned into a model, hardware, training and parallel spec; the planner predicts
tokens/s per device and the predicted figure is expressed in the *source's own metric* (MFU, HFU
or TFLOP/s per device under the source's FLOP-counting convention), so that conventions cancel:

``predicted_metric = reported_metric * predicted_throughput / reported_throughput``.

Reported throughput comes, in order of preference, from the step time, the tokens/s, or the
reported metric divided by the source's FLOPs per token:

* Narayanan et al. 2021 Eq. 3 (also BLOOM, GPT-NeoX): ``96 L h^2 (1 + s/6h + V/16Lh)`` FLOPs per
  token, recompute included, bidirectional attention counted.
* PaLM-style MFU (Korthikanti et al. 2022, MaxText, torchtitan, llm-foundry): model FLOPs with
  attention counted without causal halving, :func:`shardplan.cost.flops.model_flops_per_token`
  with ``causal=False``.
"""

from __future__ import annotations

import csv
import functools
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from shardplan.cost.flops import model_flops_per_token
from shardplan.cost.step import Estimate, estimate
from shardplan.errors import ConfigError
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.models import MODELS
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

#: CSV ``model`` column -> preset
MODEL_MAP = {
    "GPT-1.7B": "gpt-1.7b", "GPT-3.6B": "gpt-3.6b", "GPT-7.5B": "gpt-7.5b", "GPT-18.4B": "gpt-18.4b",
    "GPT-39.1B": "gpt-39.1b", "GPT-76.1B": "gpt-76.1b", "GPT-145.6B": "gpt-145.6b", "GPT-310.1B": "gpt-310.1b",
    "GPT-529.6B": "gpt-529.6b", "GPT-1008.0B": "gpt-1008b", "GPT-174.6B": "gpt-175b", "GPT-22B": "gpt-22b",
    "GPT-175B": "gpt-175b", "GPT-530B": "gpt-530b", "GPT-1T": "gpt-1t", "GPT-530B (MT-NLG shape)": "gpt-530b",
    "BLOOM-176B": "bloom-176b", "GPT-NeoX-20B": "gpt-neox-20b", "GLM-130B": "glm-130b",
    "GPT-175B (MegaScale config)": "gpt-175b-megascale", "GPT3-175B": "gpt3-175b", "LLAMA2-70B": "llama-2-70b",
    "LLAMA3-70B": "llama-3-70b", "LLAMA3-8B": "llama-3-8b", "Nemotron-340B": "nemotron-4-340b",
    "Llama 3 8B": "llama-3-8b", "Llama 3 70B": "llama-3-70b", "Llama 2 13B": "llama-2-13b",
    "MaxText synthetic 32B (global_parameter_scale=32)": "maxtext-32b",
    "MaxText synthetic 64B (global_parameter_scale=64)": "maxtext-64b",
    "MPT-70B": "mpt-70b", "MPT-30B": "mpt-30b", "MPT-13B": "mpt-13b", "MPT-7B": "mpt-7b",
}


@dataclass
class RowResult:
    """One CSV row reproduced: the metric the source reports, its value, the prediction, the error."""

    id: str
    covered: bool
    reason: str = ""
    metric: str = ""
    reported: float = math.nan
    predicted: float = math.nan
    layout: str = ""
    bound: str = ""
    fits: bool = True

    @property
    def error(self) -> float:
        """Relative error predicted / reported - 1."""
        return self.predicted / self.reported - 1.0


def _f(x: str) -> float | None:
    x = (x or "").strip()
    try:
        return float(x)
    except ValueError:
        return None


#: scale-out bandwidth per GPU of clusters that differ from the DGX reference (one-way, bytes/s)
CLUSTER_SCALE_OUT = {
    "bloom_176b": (6.25e9, "Jean Zay: 4x Omni-Path 100 Gb/s per 8-GPU node (BLOOM tr11 README)"),
    "gptneox_20b": (12.5e9, "4x ConnectX-6 HDR 200 Gb/s per 8-GPU node (Black et al. 2022, Sec. 3.2)"),
}


def _hardware(row: dict):
    hw = row["hardware"]
    if row["id"] in CLUSTER_SCALE_OUT:
        base = "a100-40gb" if "40GB" in hw else "a100-80gb"
        return load_hardware(base, scale_out_bandwidth=CLUSTER_SCALE_OUT[row["id"]][0])
    if hw.startswith("A100-80GB") or hw.startswith("A100 ("):
        return load_hardware("a100-80gb")
    if hw.startswith("A100-40GB"):
        return load_hardware("a100-40gb")
    if hw.startswith("H100"):
        return load_hardware("h100-sxm")
    if hw.startswith("TPU v5p"):
        # "v5p-128" is a 64-chip slice; several slices talk over DCN
        return load_hardware("tpu-v5p", scale_up_size=64)
    raise ConfigError(f"hardware {hw!r} has no preset mapping", field="hardware", value=hw)


#: source -> framework the run used (papers' Sec. "software"); DeepSpeed for the ZeRO-3 rows of
#: Narayanan et al. 2021 Table 2 and for the Megatron-DeepSpeed / GPT-NeoX / GLM runs
FRAMEWORK_OF_SOURCE = (("Narayanan21 Table 2", "zero3", "deepspeed"), ("Narayanan21", "", "megatron"),
                       ("Korthikanti22", "", "megatron"), ("MegaScale", "", "megatron"), ("NeMo", "", "megatron"),
                       ("BLOOM", "", "deepspeed"), ("GPT-NeoX", "", "deepspeed"), ("GLM-130B", "", "deepspeed"),
                       ("MaxText", "", "maxtext"), ("torchtitan", "", "torchtitan"),
                       ("llm-foundry", "", "pytorch-fsdp"))


def framework_of(row: dict) -> str:
    """The framework a published row ran (:data:`FRAMEWORK_OF_SOURCE`); 'megatron' if unknown."""
    for source, id_part, name in FRAMEWORK_OF_SOURCE:
        if source in row["source"] and id_part in row["id"]:
            return name
    return "megatron"


def _zero(text: str) -> tuple[int, bool]:
    t = text.lower()
    if "zero-3" in t or "fsdp" in t:
        return 3, True
    if "zero-2" in t:
        return 2, True
    if "zero-1" in t or "distributed optimizer" in t or "zero stage not verified" in t:
        return 1, True
    return 0, "no grad overlap" not in t


def _recompute(text: str) -> str:
    t = (text or "").lower()
    if t.startswith("full") or t.startswith("yes"):
        return "full"
    if "selective" in t or "minimal" in t:
        return "selective"
    return "none"


def row_inputs(row: dict) -> tuple[ModelSpec, object, TrainingSpec, ParallelConfig, int]:
    """Specs for one CSV row.

    Raises:
        ConfigError: when the row lacks what the planner needs (the message says what).
    """
    name = row["model"]
    if name not in MODEL_MAP:
        raise ConfigError(f"no preset for model {name!r}", field="model", value=name)
    model = MODELS[MODEL_MAP[name]]
    hw = _hardware(row)
    n = int(row["n_devices"])
    seq = int(row["seq_len"])
    gbs = int(_f(row["global_batch_sequences"]) or int(row["global_batch_tokens"]) // seq)
    prec = row["precision"].lower()
    if "fp8" in prec:
        policy = PRECISION_POLICIES["fp8-mixed"]
    elif "fp32 weights" in prec:
        policy = PRECISION_POLICIES["fp32-params"]
    elif "amp_bf16" in prec or "torchtitan" in row["source"]:
        # torch FSDP "mixed" policy: bf16 parameters and compute, gradients reduced in fp32
        policy = PRECISION_POLICIES["bf16-mixed-fp32-grads"]
    else:
        policy = PRECISION_POLICIES["bf16-mixed"]
    src = row["source"]
    old_megatron = any(k in src for k in ("Narayanan21", "Korthikanti22", "BLOOM", "GPT-NeoX", "GLM-130B"))
    training = TrainingSpec(seq_len=seq, global_batch_size=gbs, precision=policy,
                            framework=framework_profile(framework_of(row)),
                            attention="naive" if old_megatron else "flash",
                            dropout=any(k in src for k in ("Narayanan21", "Korthikanti22", "GPT-NeoX", "GLM")))
    zero, overlap = _zero(row["zero_stage_or_fsdp"])
    tp, pp, dp = int(row["TP"]), int(row["PP"]), int(row["DP"])
    cp = int(_f(row["CP"]) or 1)
    vp = int(_f(row["virtual_pipeline_stages"]) or 1)
    mbs = int(_f(row["microbatch_size"]) or 1)
    pp_layers = None
    if model.n_layers % pp:
        # Megatron-DeepSpeed / GLM split uneven layer counts; the heavier stages sit in the middle
        base, extra = divmod(model.n_layers, pp)
        pp_layers = tuple(base + (1 if 0 < i <= extra else 0) for i in range(pp))
        if extra == pp - 1:
            pp_layers = tuple(base + (1 if i < extra else 0) for i in range(pp))
    if gbs % (dp * mbs):
        gbs = gbs // (dp * mbs) * (dp * mbs)  # GPT-NeoX: 1538 in the paper, mbs 4 x GA 32 x DP 12 = 1536 in config
        training = training.model_copy(update={"global_batch_size": gbs})
    dp_shard = None
    if "DCN slice" in row["zero_stage_or_fsdp"]:
        dp_shard = dp // max(1, n // hw.scale_up_size)
    nemo = "NeMo" in src  # NeMo performance recipes: SP and TP communication overlap on whenever tp > 1
    parallel = ParallelConfig(dp=dp, tp=tp, pp=pp, cp=cp, zero_stage=zero, dp_shard=dp_shard,
                              sp="sequence parallel" in row["recompute"] or (nemo and tp > 1),
                              tp_overlap=nemo and tp > 1, microbatch_size=mbs,
                              schedule="interleaved" if vp > 1 else "1f1b", virtual_stages=vp,
                              recompute=_recompute(row["recompute"]), overlap_grad_reduce=overlap,
                              pp_layers=pp_layers,
                              fsdp_unit="tensor" if "ZeRO-3 (DeepSpeed)" in row["zero_stage_or_fsdp"] else "block")
    return model, hw, training, parallel, n


def _source_flops_per_token(row: dict, model: ModelSpec, seq: int) -> float:
    d = row["tflops_definition"]
    if "Eq.3" in d or "incl. recompute" in d or d == "unspecified":
        L, h, V = model.n_layers, model.d_model, model.vocab_size
        return 96.0 * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h))
    return model_flops_per_token(model, seq, causal=False)


def reproduce_row(row: dict) -> RowResult:
    """Predict one published run and express it in the source's metric."""
    rid = row["id"]
    try:
        model, hw, training, parallel, n = row_inputs(row)
    except ConfigError as e:
        return RowResult(rid, False, reason=str(e))
    try:
        est = estimate(model, hw, training, parallel, n)
    except ConfigError as e:
        return RowResult(rid, False, reason=f"layout rejected: {e}")
    tokens = training.global_batch_tokens
    pred_tps = est.tokens_per_s / n
    peak = float(row["peak_tflops_basis"].split()[0]) * 1e12
    fpt = _source_flops_per_token(row, model, training.seq_len)
    if _f(row["reported_MFU"]) is not None:
        metric, value = "MFU %", _f(row["reported_MFU"])
    elif _f(row["reported_HFU"]) is not None:
        metric, value = "HFU %", _f(row["reported_HFU"])
    else:
        metric, value = "TFLOP/s per device", _f(row["reported_TFLOPs_per_device"])
    if _f(row["step_time_s"]):
        rep_tps = tokens / _f(row["step_time_s"]) / n
    elif _f(row["reported_tokens_per_sec"]):
        rep_tps = _f(row["reported_tokens_per_sec"]) / (n if row["tokens_per_sec_scope"] == "total" else 1)
    elif metric == "TFLOP/s per device":
        rep_tps = value * 1e12 / fpt
    else:
        rep_tps = value / 100 * peak / fpt
    return RowResult(rid, True, metric=metric, reported=value, predicted=value * pred_tps / rep_tps,
                     layout=est.parallel.short(), bound=est.bound, fits=est.fits)


#: the calibration set shipped with the package (a copy of shared/calibration/published_runs.csv)
DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "published_runs.csv"


def load_rows(path: Path = DEFAULT_CSV) -> list[dict]:
    """Rows of ``published_runs.csv``.

    Raises:
        ConfigError: if the file cannot be read.
    """
    if not Path(path).exists():
        raise ConfigError(f"calibration file {path} not found", field="csv", value=str(path))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(results: list[RowResult]) -> dict:
    """Median and max absolute relative error over covered rows."""
    errs = [abs(r.error) for r in results if r.covered]
    return {"covered": len(errs), "rows": len(results),
            "median_abs_error": statistics.median(errs) if errs else math.nan,
            "max_abs_error": max(errs) if errs else math.nan,
            "within_25pct": sum(e <= 0.25 for e in errs)}


@functools.lru_cache(maxsize=1)
def published_mfu_table() -> tuple[tuple[float, bool, float, str], ...]:
    """Every covered published row as (bf16 peak FLOP/s of its chip, fp8 run?, measured MFU, row id).

    The MFU is in the planner's own definition (:attr:`shardplan.cost.step.Estimate.mfu`: model
    FLOPs incl. attention over the precision's peak, PaLM Appendix B) scaled by the row's measured
    over predicted throughput, so rows that report HFU, TFLOP/s or tokens/s compare alike.
    """
    out = []
    for row in load_rows():
        try:
            model, hw, training, parallel, n = row_inputs(row)
            est = estimate(model, hw, training, parallel, n)
        except ConfigError:
            continue
        r = reproduce_row(row)
        if r.covered and r.predicted:
            out.append((hw.peak_flops_bf16, training.precision.compute_dtype == "fp8",
                        est.mfu * r.reported / r.predicted, row["id"]))
    return tuple(out)


def best_published_mfu(peak_flops_bf16: float, fp8: bool) -> tuple[float, str] | None:
    """(highest measured MFU, its row id) among the published runs on a chip of the same bf16 peak
    (FLOP/s) and precision class, or None when the shared set has none."""
    rows = [(m, rid) for peak, f8, m, rid in published_mfu_table() if peak == peak_flops_bf16 and f8 == fp8]
    return max(rows) if rows else None


def optimism_note(est: Estimate) -> str | None:
    """A warning when ``est.mfu`` exceeds the best MFU published on this chip and precision
    (issue 9: no prediction above it without a stated reason), else None."""
    best = best_published_mfu(est.hardware.peak_flops_bf16, est.training.precision.compute_dtype == "fp8")
    if best is None or est.mfu <= best[0]:
        return None
    return (f"predicted MFU {est.mfu:.1%} is above the best published run on this chip and precision "
            f"({best[0]:.1%}, {best[1]} in shardplan/data/published_runs.csv): the prediction assumes "
            "communication fully hidden behind tuned kernels; treat it as an upper bound")
