"""Measure the efficiency factors of the accelerator this runs on and compare with the preset.

For sessions that are lent a GPU/TPU (CI never has one). Measures, with JAX on the default backend:

* achieved bf16 matmul FLOP/s on square GEMMs (n = 4096, 8192, 16384) -> fraction of the preset's
  dense peak (compare with ``matmul_efficiency``);
* achieved HBM bandwidth of a large elementwise copy (read + write) -> fraction of the preset's
  ``hbm_bandwidth`` (compare with ``hbm_efficiency``);
* the step time of a single-device training step of a scaled-down Llama, against the planner's
  prediction for the same model, batch and hardware preset.

The GEMM / HBM / attention / collective microbenchmarks with a cluster YAML as output are
``shardplan bench`` (shardplan/jax/bench.py); this script adds the one-device training step.

Usage: python benchmarks/device_check.py --hardware h200 [--out result.json] [--smoke]
``--smoke`` uses tiny sizes so the script can be exercised on CPU (numbers meaningless there).
Record the figures in docs/accuracy.md when run on a real accelerator.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path


def train_step(hardware: str, smoke: bool) -> dict:
    """Measured vs predicted step time of one device training a scaled-down Llama-3-8B."""
    from shardplan.cost.step import estimate
    from shardplan.jax.model import scale_down
    from shardplan.jax.train import TrainConfig, Trainer
    from shardplan.jax.data import PackedBatches, load_tokens, shard_batch
    from shardplan.loaders import load_hardware, load_model
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.training import TrainingSpec

    base = load_model("llama-3-8b")
    model = scale_down(base, d_model=128 if smoke else 2048, n_layers=2 if smoke else 8)
    tr = TrainingSpec(seq_len=64 if smoke else 2048, global_batch_size=2 if smoke else 8)
    layout = validate(ParallelConfig(), model, tr, 1)
    trainer = Trainer(model, layout, tr, TrainConfig(steps=3, compute_dtype="bfloat16"))
    batches = PackedBatches(load_tokens(max_bytes=1 << 20), tr.seq_len, tr.global_batch_size, seed=0)
    state = trainer.init_state()
    times = []
    for i in range(4):
        batch = shard_batch(batches.batch(i), trainer.mesh)
        t0 = time.perf_counter()
        state, met = trainer.step(state, batch)
        float(met["loss"])
        times.append(time.perf_counter() - t0)
    measured = sorted(times[1:])[1]
    pred = estimate(model, load_hardware(hardware), tr, ParallelConfig(), 1)
    return {"model_params": model.n_params, "measured_step_s": measured, "predicted_step_s": pred.step_s,
            "error": pred.step_s / measured - 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hardware", default="h200", help="preset to compare with")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CPU)")
    args = ap.parse_args()
    import jax

    from shardplan.loaders import load_hardware

    hw = load_hardware(args.hardware)
    res = {"backend": jax.default_backend(), "device": str(jax.devices()[0]), "preset": hw.name}
    from shardplan.jax.bench import gemm, hbm

    sizes = [256, 512] if args.smoke else [4096, 8192, 16384]
    res["matmul"] = [asdict(r) for r in gemm([(n, n, n) for n in sizes], hw)]
    res["hbm"] = asdict(hbm(1 << 22 if args.smoke else 4 << 30, hw))
    res["preset_efficiency"] = {"matmul_efficiency": hw.matmul_efficiency, "hbm_efficiency": hw.hbm_efficiency}
    res["train_step"] = train_step(hw.name, args.smoke)
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
