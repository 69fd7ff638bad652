"""What the grid-fitted nanotron profile predicts for the cluster's other model sizes, before any of
their runs is seen: for each model and node count, the fastest layout predicted to fit among the
layouts the Ultra-Scale Playbook's grid generator tries (tp 1-64, pp 1-32, ZeRO 0 / 1, microbatch
1-8 sequences, 256 sequences of 4,096 tokens; dp = GPUs / (tp x pp); the batch must split into whole
microbatches).

Usage: python benchmarks/usp_forecast.py [--hardware FILE] [--models 3B,80B] [--doc docs/calibration.md]

``--doc`` rewrites only the block between ``<!-- usp-forecast:start -->`` and ``<!-- usp-forecast:end -->``.
Exit 2 on a model the grid map does not define.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import track

from usp_grid import DEFAULT_HW, GRID_MODELS, GridRun, check_marked_doc, predict, replace_marked_block
from shardplan.cost.step import Estimate
from shardplan.errors import ConfigError
from shardplan.inputs import default_framework
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile

NODES = (1, 2, 4, 8, 16, 32, 64)
#: the grid's global batch in sequences (shared/calibration/README.md: gbs 256)
GLOBAL_BATCH = 256
DOC_BEGIN, DOC_END = "<!-- usp-forecast:start -->", "<!-- usp-forecast:end -->"


def layouts(gpus: int) -> list[ParallelConfig]:
    """Every layout of the grid's generator on ``gpus`` devices: powers of two tp <= 64 and pp <= 32
    with tp x pp dividing ``gpus``, ZeRO 0 or 1, microbatch 1-8 sequences dividing the batch per
    data-parallel rank; sequence parallelism with tp (the grid's runs use it)."""
    out = []
    for tp in (1, 2, 4, 8, 16, 32, 64):
        for pp in (1, 2, 4, 8, 16, 32):
            if gpus % (tp * pp):
                continue
            dp = gpus // (tp * pp)
            for mbs in (1, 2, 4, 8):
                if GLOBAL_BATCH % (dp * mbs):
                    continue
                for zero in (0, 1):
                    out.append(ParallelConfig(dp=dp, tp=tp, pp=pp, zero_stage=zero, microbatch_size=mbs,
                                              sp=tp > 1, tp_overlap=tp > 1))
    return out


def best(model: str, nodes: int, hw, profile) -> Estimate | str | None:
    """The fastest layout predicted to run (to fit, and not to fail otherwise: ``Estimate.runs``) for
    ``model`` on ``nodes`` 8-GPU nodes; None when every layout is priced and none runs; the first refusal message when the profile or model refuses
    every layout (nothing was priced)."""
    top, refusal, priced = None, None, False
    for pc in layouts(8 * nodes):
        e = predict(GridRun(model, nodes, pc, GLOBAL_BATCH, None, None), hw, profile)
        if isinstance(e, str):
            refusal = refusal or e
            continue
        priced = True
        if e.runs and (top is None or e.tokens_per_s > top.tokens_per_s):
            top = e
    return top if priced else refusal


def table(models: list[str], hw, profile) -> str:
    """Markdown table: model, nodes, predicted fastest layout, tokens/s/GPU, MFU; node counts where
    nothing is predicted to fit are merged into one row per run of such counts."""
    lines = ["| model | nodes | predicted fastest layout | tokens/s/GPU | MFU |", "|---|---|---|---|---|"]
    progress = Console(stderr=True)
    for model in models:
        empty: list[int] = []
        for nodes in track(NODES, description=f"forecast {model}", console=progress):
            e = best(model, nodes, hw, profile)
            if isinstance(e, str):
                raise ConfigError(f"{model} on {nodes} node(s): every layout of the grid is refused, e.g. {e}",
                                  field="--models", value=model)
            if e is None:
                empty.append(nodes)
                continue
            lines += _empty_row(model, empty)
            empty = []
            p = e.parallel
            lines.append(f"| {model} | {nodes} | dp={p.dp} tp={p.tp} pp={p.pp} mbs={p.microbatch_size} "
                         f"ZeRO-{p.zero_stage} | {e.tokens_per_s / (8 * nodes):,.0f} | {e.mfu:.0%} |")
        lines += _empty_row(model, empty)
    return "\n".join(lines)


def _empty_row(model: str, empty: list[int]) -> list[str]:
    """One row for consecutive node counts where no layout is predicted to fit (none if ``empty`` is)."""
    if not empty:
        return []
    span = str(empty[0]) if len(empty) == 1 else f"{empty[0]}-{empty[-1]}"
    return [f"| {model} | {span} | none predicted to fit (no recomputation on the grid) | - | - |"]


def write_doc(path: Path, text: str) -> None:
    """Put ``text`` between the forecast markers of ``path`` (:func:`usp_grid.replace_marked_block`).

    Raises:
        ConfigError: the file lacks a marker or has them in the wrong order (exit 2)."""
    doc = check_doc(path)
    path.write_text(replace_marked_block(doc, text, DOC_BEGIN, DOC_END, path))  # type: ignore[arg-type]


def check_doc(path: Path) -> str:
    """The text of ``path`` if it is a readable file with both forecast markers in order
    (:func:`usp_grid.check_marked_doc`).

    Raises:
        ConfigError: a missing file, a folder, or a file without the marked block (exit 2)."""
    return check_marked_doc(path, DOC_BEGIN, DOC_END)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hardware", default=str(DEFAULT_HW))
    ap.add_argument("--models", default="3B,80B", help="grid-map model names, comma-separated")
    ap.add_argument("--doc", type=Path, default=None)
    args = ap.parse_args()
    try:
        models = list(dict.fromkeys(m.strip() for m in args.models.split(",") if m.strip()))
        unknown = [m for m in models if m not in GRID_MODELS]
        if unknown or not models:
            raise ConfigError(f"--models {args.models!r}: unknown {', '.join(unknown) or '(none given)'}; legal: "
                              f"{', '.join(GRID_MODELS)}", field="--models", value=args.models)
        if args.doc is not None:
            check_doc(args.doc)
        hw = load_hardware(args.hardware)
        profile = default_framework(args.hardware) or framework_profile("nanotron-usp")
        text = table(models, hw, profile)
        print(text)
        if args.doc is not None:
            write_doc(args.doc, text)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
