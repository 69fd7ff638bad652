"""Time the full search at seq 8192 and 16M-token batches: llama-3.1-405b on 16,384 H100s,
llama-3-70b on 1,024 and mixtral-8x7b on 64 (issue 13's target: under 0.5 s each for 405b and mixtral).

Usage: python benchmarks/search_speed.py [--repeat 5] [--top-k 5]
Prints, per case, the median wall time (seconds, one core), the layouts tried (validated, memory
computed), those rejected by validation, those whose step time was estimated in full (the rest are
cut by branch and bound) and the best layout; the figures are recorded in docs/search.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import search
from shardplan.specs.training import TrainingSpec

CASES = (("llama-3.1-405b", 16384), ("llama-3-70b", 1024), ("mixtral-8x7b", 64))


def main() -> None:
    """Run every case ``--repeat`` times and print one line each."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--top-k", type=int, default=5)
    args = ap.parse_args()
    tr = TrainingSpec.from_tokens(8192, 16 * 2**20)
    for name, n in CASES:
        times, res = [], None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = search(MODELS[name], HARDWARE["h100-sxm"], tr, n, top_k=args.top_k)
            times.append(time.perf_counter() - t0)
        best = res.plans[0]
        print(f"{name} on {n} x h100-sxm, seq 8192, 16M tokens: median {statistics.median(times):.3f} s over "
              f"{args.repeat} runs; {res.n_layouts:,} layouts tried ({res.n_invalid:,} rejected by validation), "
              f"{res.n_timed:,} timed in full; best: {best.parallel.short()} at {best.mfu:.1%} MFU")


if __name__ == "__main__":
    main()
