"""Time the full search for llama-3.1-405b on 16,384 H100s at seq 8192 and 16M-token batches.

Usage: python benchmarks/search_speed.py [--repeat 5]
Prints the median wall time (seconds, one core) and the number of layouts evaluated; the figure is
recorded in docs/search.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import search
from shardplan.specs.training import TrainingSpec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tr = TrainingSpec.from_tokens(8192, 16 * 2**20)
    cases = [("llama-3.1-405b", 16384), ("llama-3-70b", 1024), ("mixtral-8x7b", 64)]
    for name, n in cases:
        times, res = [], None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = search(MODELS[name], HARDWARE["h100-sxm"], tr, n, top_k=5)
            times.append(time.perf_counter() - t0)
        best = res.plans[0]
        print(f"{name} on {n} x h100-sxm, seq 8192, 16M tokens: median {statistics.median(times):.3f} s over "
              f"{args.repeat} runs; {res.n_layouts:,} layouts evaluated ({res.n_invalid:,} rejected by validation); "
              f"best: {best.parallel.short()} at {best.mfu:.1%} MFU")


if __name__ == "__main__":
    main()
