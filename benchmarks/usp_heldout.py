"""The grid-fitted nanotron profile on the same cluster's runs of two other model sizes, which no fit sees.

The Ultra-Scale Playbook's measured runs of its 3B and 80B models (``benchmarks/usp_h100_grid_3b_80b.csv``, 1,663
rows, 731 that ran) were transcribed from the hover text of the playbook's interactive benchmark plot
(``assets/data/benchmarks/benchmarks_interactive.html`` in the mirror ``vinjn/nanotron-ultrascale-playbook``, commit
e3bcfc5c0b177d5f259a65465ddf0f880c71577f; subplots "3B" and "80B"). The same file's 1B and 8B subplots reproduce the
1,641 rows of ``shared/calibration/usp_h100_grid_1b_8b.csv`` exactly (two more failed rows), which is how the
transcription was checked. Columns as in the shared CSV; a failed run has ``nan`` (the plot does not say why). The
14 runs of the "80B" plot that the playbook's raw table names ``80G_..._gqa8`` (8 KV heads) have the model label
``80B-gqa8`` (``benchmarks/usp_versions.py``; they rank with the 80B runs).

Nothing here is fitted on these runs: they are scored with the cluster file fitted on the shared 1B / 8B grid (what
``benchmarks/usp_grid.py --fit -o`` writes; the shipped ``usp-h100-efa`` holds that fit) and, with ``--refit``, with
fits made here on the shared grid (all of it, 1B alone, 8B alone), beside the uncalibrated presets.

Usage: python benchmarks/usp_heldout.py [--csv PATH] [--hardware FILE] [--refit] [--doc docs/calibration.md]

``--doc`` rewrites only the block between ``<!-- usp-heldout:start -->`` and ``<!-- usp-heldout:end -->``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from usp_grid import (DEFAULT_CSV, DEFAULT_HW, GridRun, baseline_rows, check_marked_doc, fit_on, load_grid, pick_report,
                      predict, publish, report, run_script, score, side_by_side)
from shardplan.errors import ConfigError
from shardplan.inputs import default_framework
from shardplan.loaders import load_hardware
from shardplan.presets.frameworks import framework_profile

HELDOUT_CSV = Path(__file__).resolve().parent / "usp_h100_grid_3b_80b.csv"
DOC_BEGIN, DOC_END = "<!-- usp-heldout:start -->", "<!-- usp-heldout:end -->"


def refit_rows(held: list[GridRun], shared: list[GridRun], hw, profile) -> list[tuple[str, dict]]:
    """The held-out runs scored with profiles fitted here (``usp_grid.fit_on``) on the shared grid: all of it, its
    1B runs alone and its 8B runs alone (what a user with one model size measured would get)."""
    rows = []
    for label, train in (("all of the shared grid", shared), ("the shared 1B runs alone", [r for r in shared if r.model == "1B"]),
                         ("the shared 8B runs alone", [r for r in shared if r.model == "8B"])):
        _, h, f = fit_on(train, hw, profile)
        rows.append((f"`{hw.name}`, `{profile.name}` fitted here on {label}", score(held, [predict(r, h, f) for r in held])))
    return rows


def heldout_text(held: list[GridRun], hw, profile, refit: bool) -> str:
    """The Markdown block: the metrics with the shipped fit, the per-group Spearman, the layout each group's
    ranking picks, and the side-by-side table (uncalibrated presets, the shipped fit, optional refits)."""
    preds = [predict(r, hw, profile) for r in held]
    text = report(f"{profile.label} profile on {hw.name} (fitted on the shared 1B / 8B grid), 3B and 80B runs", score(held, preds))
    text += ("\n\nThe layout the ranking picks, within each group's measured layouts:\n\n" + pick_report(held, preds))
    rows = baseline_rows(held, hw, profile, in_sample=False)
    if refit:
        rows += refit_rows(held, load_grid(DEFAULT_CSV), hw, profile)
    return text + "\n\nSide by side, the 3B and 80B runs:\n\n" + side_by_side(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", type=Path, default=HELDOUT_CSV)
    ap.add_argument("--hardware", default=str(DEFAULT_HW))
    ap.add_argument("--refit", action="store_true", help="also fit on the shared grid here (all, 1B, 8B; ~1 min)")
    ap.add_argument("--doc", type=Path, default=None, help="write the block between the usp-heldout markers of this file")
    args = ap.parse_args()
    if not args.csv.is_file():
        raise ConfigError(f"--csv {args.csv}: no such file; legal: an existing file", field="csv", value=str(args.csv))
    doc = check_marked_doc(args.doc, DOC_BEGIN, DOC_END) if args.doc is not None else None  # before the work, as usp_forecast does
    hw = load_hardware(args.hardware)
    profile = default_framework(args.hardware) or framework_profile("nanotron-usp")
    publish(heldout_text(load_grid(args.csv), hw, profile, args.refit), args.doc, doc, DOC_BEGIN, DOC_END)


if __name__ == "__main__":
    run_script(main)
