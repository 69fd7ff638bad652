"""Steady-state rates of the Lucie-Training parallelism sweep (thirty-fourth scouting pass, SCOUTED_2026_12AH).

``sps.txt`` holds the ``samples_per_seconds`` column (global samples/s) of OpenLLM-France/Lucie-Training
``chronicles/parallelism/all_iters_w_dp.csv`` @ b0f24fbc, transcribed one block per run in file order; a block's
header line ``@ ngpus tp pp batch stage gbs last_consumed [missing=N]`` names the run. Each run's rate is the median
over iterations 6 onwards (the first 5 dropped as warm-up); tokens/s/GPU = samples/s x 2048 (the sweep's sequence
length) / GPUs. The check compares each block's row count with the samples the run consumed: (last - gbs) / gbs + 1
iterations, less the rows the CSV lacks.

Usage: python benchmarks/lucie_sweep/medians.py
"""

from __future__ import annotations

import statistics
from pathlib import Path

SPS = Path(__file__).resolve().parent / "sps.txt"
SEQ_LEN = 2048
WARMUP = 5


def load(path: Path = SPS) -> list[tuple[list[str], list[float]]]:
    """The blocks of ``path``: (header fields after '@', samples/s per iteration); '#' lines are comments."""
    blocks: list[tuple[list[str], list[float]]] = []
    for line in path.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("@"):
            blocks.append((line[1:].split(), []))
        else:
            blocks[-1][1].extend(float(x) for x in line.split())
    return blocks


def main() -> None:
    """Print each run's row check and its median rate (samples/s and tokens/s/GPU)."""
    for head, values in load():
        gpus, tp, pp, batch, stage, gbs, last, *extra = head
        missing = int(extra[0].split("=")[1]) if extra else 0
        expected = (int(last) - int(gbs)) // int(gbs) + 1 - missing if last != "?" else None
        med = statistics.median(values[WARMUP:])
        check = "OK" if expected == len(values) else f"rows {len(values)}, expected {expected}"
        print(f"{int(gpus):4d} tp{tp} pp{pp} {batch} {stage} gbs{gbs} iterations={len(values):3d} [{check}] "
              f"median samples/s={med:.4f} tokens/s/GPU={med * SEQ_LEN / int(gpus):.1f}")


if __name__ == "__main__":
    main()
