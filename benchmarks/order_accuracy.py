"""Write shardplan/data/order_accuracy.json: how often the planner orders two layouts right, by predicted gap.

A ranking is only as good as its ordering of close candidates. Two sets of pairs with a measured answer:

* ``public``: the held-out and scouted public runs of docs/accuracy.md (``benchmarks/error_bands.py``
  ``held_out_sets``), every pair from the same set with the same model, hardware, framework profile, precision,
  device count and sequence length (layouts, schedules, micro-batches or recompute differ), priced as
  ``benchmarks/accuracy.py`` prices them (never fitted on);
* ``grid``: the measured H100 grid (the Ultra-Scale Playbook's nanotron runs,
  ``shared/calibration/usp_h100_grid_1b_8b.csv``), every pair of layouts that ran in the same (model, node count)
  group, predicted leave-one-model-out (the nanotron profile fitted on the other model by
  ``benchmarks/usp_grid.py``'s ``fit_on``: what a user with another model size on that cluster gets);
* ``grid_heldout``: the same cluster's 3B and 80B runs (``benchmarks/usp_h100_grid_3b_80b.csv``, never fitted on),
  pairs within a (model, node count) group, predicted with the cluster file fitted on the shared grid (docs only:
  ``shardplan plan`` reads the first two).

Pairs are binned by their predicted gap |ln(a / b)| of tokens/s/GPU, and each bin stores the fraction of pairs whose
predicted order matches the measured one (measured ties left out). ``shardplan plan`` prints the bin of each
runner-up's gap (:mod:`shardplan.accuracy_band`).

Usage: ``python benchmarks/order_accuracy.py [--doc docs/search.md]`` (about 40 s: two fits of the grid).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import public_runs  # noqa: E402
import usp_grid  # noqa: E402
from error_bands import held_out_sets  # noqa: E402

from shardplan.accuracy_band import ORDER_FILE  # noqa: E402
from shardplan.cost.step import estimate  # noqa: E402
from shardplan.inputs import default_framework  # noqa: E402
from shardplan.loaders import load_hardware  # noqa: E402

#: predicted-gap bin edges, |ln(tokens_a / tokens_b)|
EDGES = (0.0, 0.025, 0.05, 0.1, 0.2, 0.5)


def lomo_predictions(runs: list) -> dict[int, float]:
    """tokens/s/GPU of every run that ran, predicted with the profile fitted on the other model (index -> value)."""
    hw = load_hardware(str(usp_grid.DEFAULT_HW))
    profile = default_framework(str(usp_grid.DEFAULT_HW))
    out = {}
    for held in dict.fromkeys(r.model for r in runs):
        _, h, f = usp_grid.fit_on([r for r in runs if r.model != held], hw, profile)
        for i, r in enumerate(runs):
            if r.model == held and r.ran:
                e = usp_grid.predict(r, h, f)
                if not isinstance(e, str):
                    out[i] = e.tokens_per_s / e.layout.n_devices
    return out


def heldout_grid_pairs() -> tuple[dict, dict[int, float], dict[int, float]]:
    """The same cluster's 3B and 80B runs that ran (``benchmarks/usp_h100_grid_3b_80b.csv``, never fitted on), grouped
    by (model, nodes), predicted with the cluster file fitted on the shared grid (``usp-h100-efa``)."""
    from usp_heldout import HELDOUT_CSV
    hw = load_hardware(str(usp_grid.DEFAULT_HW))
    profile = default_framework(str(usp_grid.DEFAULT_HW))
    groups, predicted, measured = defaultdict(list), {}, {}
    for i, r in enumerate(usp_grid.load_grid(HELDOUT_CSV)):
        e = usp_grid.predict(r, hw, profile) if r.ran else None
        if e is not None and not isinstance(e, str):
            predicted[i], measured[i] = e.tokens_per_s / e.layout.n_devices, r.tok_s_gpu
            groups[r.group].append(i)
    return groups, predicted, measured


def public_pairs() -> tuple[dict, dict[int, float], dict[int, float]]:
    """Groups of held-out public rows (same set, model, hardware, framework text, precision text, devices and
    sequence length), with each row's predicted and reported tokens/s/GPU, by a running index."""
    groups, predicted, measured = defaultdict(list), {}, {}
    for name, rows in held_out_sets():
        for row in rows:
            model, hw, training, parallel, n = public_runs.check_inputs(row)
            i = len(predicted)
            predicted[i] = estimate(model, hw, training, parallel, n).tokens_per_s / n
            measured[i] = row[9]
            groups[(name, *row[1:7])].append(i)
    return groups, predicted, measured


def order_bins(groups: dict, predicted: dict[int, float], measured: dict[int, float]) -> list[dict]:
    """Per bin of :data:`EDGES`: pairs within each group of run indices, and how many the prediction ordered as
    measured (pairs with equal measurements are left out)."""
    right, total = defaultdict(int), defaultdict(int)
    for idx in groups.values():
        for a, b in itertools.combinations(idx, 2):
            if measured[a] == measured[b]:
                continue
            gap = abs(math.log(predicted[a] / predicted[b]))
            k = sum(gap >= e for e in EDGES) - 1
            total[k] += 1
            right[k] += (predicted[a] > predicted[b]) == (measured[a] > measured[b])
    edges = (*EDGES, None)
    return [{"gap_low": edges[k], "gap_high": edges[k + 1], "pairs": total[k], "right": right[k],
             "fraction_right": round(right[k] / total[k], 4)} for k in sorted(total)]


def doc_table(doc: dict) -> str:
    """Markdown table of the bins (predicted gap as a % difference of tokens/s), both sets of pairs side by side."""
    lines = ["| predicted gap | public held-out pairs | ordered right | H100 grid pairs | ordered right | "
             "3B / 80B pairs (held out) | ordered right |", "|---|---|---|---|---|---|---|"]
    public = {b["gap_low"]: b for b in doc["public"]["bins"]}
    held = {b["gap_low"]: b for b in doc.get("grid_heldout", {}).get("bins", [])}
    empty = {"pairs": 0, "fraction_right": float("nan")}
    for grid in doc["grid"]["bins"]:
        pub, other = public.get(grid["gap_low"], empty), held.get(grid["gap_low"], empty)
        low = f"{math.expm1(grid['gap_low']):.1%}"
        span = f"{low} - {math.expm1(grid['gap_high']):.1%}" if grid["gap_high"] is not None else f"{low} or more"
        lines.append(f"| {span} | {pub['pairs']:,} | {pub['fraction_right']:.0%} | {grid['pairs']:,} | "
                     f"{grid['fraction_right']:.0%} | {other['pairs']:,} | {other['fraction_right']:.0%} |")
    return "\n".join(lines)


def main() -> None:
    """Fit, predict, bin, write the JSON (and the table into ``--doc`` between its markers)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", type=Path, help="a Markdown file with <!-- order-accuracy:start/end --> markers")
    args = ap.parse_args()
    runs = usp_grid.load_grid(usp_grid.DEFAULT_CSV)
    predicted = lomo_predictions(runs)
    groups = defaultdict(list)
    for i in predicted:
        groups[(runs[i].model, runs[i].nodes)].append(i)
    doc = {"generated_by": "python benchmarks/order_accuracy.py", "date": date.today().isoformat(),
           "gap": "|ln(predicted tokens/s ratio)| of the two layouts",
           "public": {"what": "held-out public runs of docs/accuracy.md: pairs from the same set with the same model, "
                              "hardware, framework, precision, devices and sequence length",
                      "bins": order_bins(*public_pairs())},
           "grid": {"what": "pairs of layouts that ran in the same (model, nodes) group of the measured H100 grid "
                            "(shared/calibration/usp_h100_grid_1b_8b.csv), predicted leave-one-model-out with the "
                            "nanotron profile on usp-h100-efa",
                    "bins": order_bins(groups, predicted, {i: runs[i].tok_s_gpu for i in predicted})},
           "grid_heldout": {"what": "pairs of layouts that ran in the same (model, nodes) group of the same cluster's 3B "
                                    "and 80B runs (benchmarks/usp_h100_grid_3b_80b.csv, never fitted on), predicted with "
                                    "the nanotron profile fitted on the shared grid (usp-h100-efa as shipped)",
                            "bins": order_bins(*heldout_grid_pairs())}}
    ORDER_FILE.write_text(json.dumps(doc, indent=1) + "\n")
    table = doc_table(doc)
    print(table)
    if args.doc:
        text = args.doc.read_text()
        start, end = "<!-- order-accuracy:start -->", "<!-- order-accuracy:end -->"
        if start not in text or end not in text:
            raise SystemExit(f"{args.doc} has no {start} ... {end} markers")
        head, rest = text.split(start, 1)
        args.doc.write_text(head + start + "\n" + table + "\n" + end + rest.split(end, 1)[1])


if __name__ == "__main__":
    main()
