"""Write shardplan/data/heldout_errors.json: how far the planner's tokens/s has been from public runs it was never
fitted on, per framework profile and chip architecture (what ``shardplan estimate`` prints as the 80% band).

The runs are those docs/accuracy.md lists as held out or scouted after every fit (``benchmarks/scouted_sections.yaml``
sets, ``HELD_OUT_CHECKS``, the llm-foundry A100 40GB and H100 FP8 tables, NeMo AutoModel's H100 table), each priced as
``benchmarks/accuracy.py`` prices it (the row's framework profile and hardware, nothing per row). For every group it
stores the 10th, 50th and 90th percentiles of predicted / measured tokens/s/GPU (numpy.percentile, linear
interpolation) and the median |error|.

Usage: ``python benchmarks/error_bands.py`` (about 30 s; rerun after a change of the cost model or of the sets, as
``benchmarks/accuracy.py`` is).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import public_runs  # noqa: E402
from public_runs import (AUTOMODEL_H100, HELD_OUT_CHECKS, LLM_FOUNDRY_A100_40GB, LLM_FOUNDRY_H100_FP8,  # noqa: E402
                         check_inputs)

from shardplan.accuracy_band import BAND_FILE, MIN_RUNS  # noqa: E402
from shardplan.cost.step import estimate  # noqa: E402
from shardplan.cli.common import progress_bar  # noqa: E402

SCOUTED = Path(__file__).resolve().parent / "scouted_sections.yaml"


def held_out_sets() -> list[tuple[str, tuple]]:
    """(name, rows) of every set of held-out / scouted public runs of docs/accuracy.md: the scouted_sections.yaml
    sets, HELD_OUT_CHECKS, the llm-foundry A100 40GB and H100 FP8 tables and NeMo AutoModel's H100 table."""
    scouted = [(s["set"], getattr(public_runs, s["set"])) for s in yaml.safe_load(SCOUTED.read_text())]
    return [*scouted, ("HELD_OUT_CHECKS", HELD_OUT_CHECKS), ("LLM_FOUNDRY_A100_40GB", LLM_FOUNDRY_A100_40GB),
            ("LLM_FOUNDRY_H100_FP8", LLM_FOUNDRY_H100_FP8), ("AUTOMODEL_H100", AUTOMODEL_H100)]


def held_out_rows() -> list[tuple]:
    """Every row of :func:`held_out_sets` (a row appears once even if two sets name it)."""
    rows, seen = [], set()
    for row in (r for _, group in held_out_sets() for r in group):
        if row[0] not in seen:
            seen.add(row[0])
            rows.append(row)
    return rows


def ratios(rows: list[tuple], measured: list | None = None, scope: list | None = None
           ) -> list[tuple[str, str, str, float]]:
    """(framework profile, compute architecture, model class 'moe' | 'dense', predicted / measured tokens/s/GPU) of
    each row; ``measured`` (a list) gets each run's (bf16 peak FLOP/s, fp8 compute, measured MFU, label, MoE model;
    fp4 runs left out), the
    MFU in the planner's definition (the predicted MFU x measured / predicted tokens/s, as
    ``shardplan.calibration.published_mfu_table`` does for the shared rows); ``scope`` (a list) each run's
    (parameters, measured step time in seconds)."""
    out = []
    with progress_bar("pricing held-out runs") as update:
        for i, row in enumerate(rows):
            update(i, len(rows), row[0][:40])
            model, hw, training, parallel, n = check_inputs(row)
            e = estimate(model, hw, training, parallel, n)
            ratio = e.tokens_per_s / n / row[9]
            out.append((row[3].split("+")[0], hw.compute_arch or hw.kind, "moe" if model.is_moe else "dense", ratio))
            if scope is not None:
                scope.append((model.n_params, e.step_s * ratio))
            if measured is not None and training.precision.compute_dtype != "fp4":  # fp4: no ceiling (optimism_note)
                measured.append((hw.peak_flops_bf16, training.precision.compute_dtype == "fp8", e.mfu / ratio, row[0],
                                 model.is_moe))
    return out


def best_mfu(measured: list[tuple[float, bool, float, str, bool]], moe_only: bool = False) -> list[dict]:
    """The highest measured MFU per (bf16 peak, precision class) of every run or (``moe_only``) of the MoE runs: what
    ``shardplan.calibration.best_published_mfu`` adds to the shared rows' ceiling and
    ``shardplan.calibration.best_published_moe_mfu`` reads (issue 9: no prediction above the best published MFU for
    that hardware, precision and model class without a reason). Every run's record counts the runs whose label carries
    no [B] tier where a chip has any, else its dense [B] runs (v5e and TPU7x have only those: a new user's 80% MFU plan on
    v5e-256 had no note). The MoE record counts [B]
    runs too: a run's MFU depends on the model, the sequence and the measured tokens/s alone, not on the layout a [B]
    tier assumes, and with [A] runs only the H100 MoE record was one GPT-OSS-20B run the planner over-predicts by 44%
    (30.3%), which flagged Megatron-LM's own Mixtral layouts, measured at 46-48% MFU, as optimistic."""
    best: dict[tuple[float, bool], tuple[float, str]] = {}  # every run's record (dense: [A] runs only)
    fallback: dict[tuple[float, bool], tuple[float, str]] = {}  # dense: with the [B] runs, for chips without [A] ones
    for peak, low, mfu, label, moe in measured:
        if mfu <= 0 or (moe_only and not moe):
            continue
        tiered = label.startswith("[B") and not moe_only
        # the fallback is dense runs: a chip with a few MoE runs alone would get a ceiling far below what it does
        for table in (() if tiered and moe else (fallback,) if tiered else (best,) if moe and not moe_only
                      else (best, fallback)):
            if (peak, low) not in table or mfu > table[(peak, low)][0]:
                table[(peak, low)] = (mfu, label)
    best = {**fallback, **best}  # a chip with no run but [B] ones (v5e, TPU7x) keeps a record: theirs
    return [{"peak_flops_bf16": peak, "fp8": low, "mfu": round(mfu, 4), "run": label}
            for (peak, low), (mfu, label) in sorted(best.items())]


def summary(values: list[float]) -> dict:
    """Percentiles of predicted / measured and the median |error| of one group."""
    p10, p50, p90 = (float(x) for x in np.percentile(values, [10, 50, 90]))
    return {"runs": len(values), "ratio_p10": round(p10, 4), "ratio_p50": round(p50, 4), "ratio_p90": round(p90, 4),
            "median_abs_error": round(statistics.median(abs(v - 1) for v in values), 4)}


def bands(data: list[tuple[str, str, str, float]], measured: list | None = None, scope: list | None = None) -> dict:
    """The JSON document: groups by (framework, architecture), by framework, by architecture, by (framework,
    architecture, model class), by model class and over all runs; groups of fewer than MIN_RUNS runs are left out
    (the lookup falls back to a wider one)."""
    by_pair, by_fw, by_arch = defaultdict(list), defaultdict(list), defaultdict(list)
    by_triple, by_class = defaultdict(list), defaultdict(list)
    for fw, arch, cls, r in data:
        by_pair[(fw, arch)].append(r)
        by_fw[fw].append(r)
        by_arch[arch].append(r)
        by_triple[(fw, arch, cls)].append(r)
        by_class[cls].append(r)
    keep = lambda d: {k: summary(v) for k, v in sorted(d.items()) if len(v) >= MIN_RUNS}  # noqa: E731
    return {"generated_by": "python benchmarks/error_bands.py", "date": date.today().isoformat(),
            "what": "predicted / measured tokens/s/GPU on public runs never fitted on (docs/accuracy.md held-out and "
                    "scouted sections), priced with each run's framework profile and hardware preset",
            "min_runs": MIN_RUNS,
            "framework_arch": [{"framework": f, "arch": a, **s} for (f, a), s in keep(by_pair).items()],
            "framework": [{"framework": f, **s} for f, s in keep(by_fw).items()],
            "arch": [{"arch": a, **s} for a, s in keep(by_arch).items()],
            "framework_arch_class": [{"framework": f, "arch": a, "class": c, **s}
                                     for (f, a, c), s in keep(by_triple).items()],
            "class": [{"class": c, **s} for c, s in keep(by_class).items()],
            "all": summary([r for *_, r in data]),
            "best_mfu": best_mfu(measured or []),
            "best_mfu_moe": best_mfu(measured or [], moe_only=True),
            "scope": ({"params": [min(p for p, _ in scope), max(p for p, _ in scope)],
                       "step_s": [round(min(t for _, t in scope), 6), round(max(t for _, t in scope), 3)]}
                      if scope else None)}


def write_bands(out: Path = BAND_FILE) -> dict:
    """Price the held-out runs, write the band document to ``out`` and return it (``benchmarks/accuracy.py`` calls
    this before it prints the table)."""
    measured: list = []
    scope: list = []
    doc = bands(ratios(held_out_rows(), measured, scope), measured, scope)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return doc


def main() -> None:
    """Price the held-out runs and write the band file (``-o`` to write elsewhere)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=BAND_FILE, help="where to write the JSON (default: %(default)s)")
    args = ap.parse_args()
    doc = write_bands(args.out)
    a = doc["all"]
    print(f"{a['runs']} held-out runs: predicted / measured p10 {a['ratio_p10']:.2f}, median {a['ratio_p50']:.2f}, "
          f"p90 {a['ratio_p90']:.2f}; {len(doc['framework_arch'])} framework x architecture groups -> {args.out}")


if __name__ == "__main__":
    main()
