"""The project's compiled train step against a hand-written ``jax.jit`` of the same model (issue 14).

Both programs train the same scaled-down Llama on the same mesh with the same parameter and
optimizer-state ``NamedSharding``s (the plan's), the same AdamW and the same batch sharding. The
hand-written one is what a user writes without shardplan: ``value_and_grad`` of the loss, the
optimizer update, ``jax.jit`` with in/out shardings, no activation sharding hints and no gradient
accumulation loop (one microbatch per step, as the plans timed here use). It measures, per layout:
compile time, median step time over ``--steps`` steps after one warm-up step, and the collective
bytes per device of each compiled program (``shardplan.crosscheck.hlo``), and prints one Markdown
table for docs/runtime.md.

Usage: XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/runtime_overhead.py
       [--repeat 3] [--steps 5] [--layouts fsdp,dp,tp,fsdp+tp]
(the script sets the flag itself when it is not set; 8 simulated CPU devices).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import defaultdict

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

from shardplan.crosscheck.hlo import hlo_collectives  # noqa: E402
from shardplan.jax.model import scale_down  # noqa: E402
from shardplan.jax.train import TrainConfig, Trainer  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

LAYOUTS = {
    "dp": ParallelConfig(dp=8),
    "fsdp": ParallelConfig(dp=8, zero_stage=3),
    "tp": ParallelConfig(dp=4, tp=2),
    "fsdp+tp": ParallelConfig(dp=4, tp=2, zero_stage=3),
}


def naive_step(tr: Trainer):
    """The hand-written step: loss, gradients, AdamW update, jitted with the plan's shardings."""
    graphdef, tx, vocab = tr.graphdef, tr.tx, tr.model_spec.vocab_size

    def step(state, batch):
        params, opt_state = state

        def loss_fn(p):
            logits = nnx.merge(graphdef, p)(batch[:, :-1]).astype(jnp.float32)[..., :vocab]
            logz = jax.nn.logsumexp(logits, -1)
            gold = jnp.take_along_axis(logits, batch[:, 1:, None], -1)[..., 0]
            return jnp.mean(logz - gold)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), loss

    return jax.jit(step, in_shardings=(tr.state_shardings, tr.batch_sharding),
                   out_shardings=(tr.state_shardings, NamedSharding(tr.mesh, P())), donate_argnums=(0,))


def collective_bytes(compiled, mesh) -> dict[str, float]:
    """Operand bytes per device per step of each collective kind of a compiled program."""
    out: dict[str, float] = defaultdict(float)
    for c in hlo_collectives(compiled.as_text(), dict(mesh.shape)):
        out[c.kind] += c.operand_bytes * c.per_step
    return dict(out)


def time_steps(fn, state, batch, steps: int) -> tuple[float, object]:
    """Median seconds of ``steps`` calls after one warm-up call; returns it and the final state."""
    state, loss = fn(state, batch)
    jax.block_until_ready(loss)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        state, loss = fn(state, batch)
        jax.block_until_ready(loss)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), state


def measure(name: str, steps: int) -> dict:
    """Compile and time both programs for one layout."""
    model = scale_down(MODELS["llama-3-8b"], d_model=256, n_layers=4, max_heads=8)
    training = TrainingSpec(seq_len=256, global_batch_size=16)
    layout = validate(LAYOUTS[name], model, training, 8)
    t0 = time.perf_counter()
    tr = Trainer(model, layout, training, TrainConfig())
    ours_compile = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive = naive_step(tr)
    batch_sds = jax.ShapeDtypeStruct((training.global_batch_size, training.seq_len + 1), jnp.int32,
                                     sharding=tr.batch_sharding)
    naive_compiled = naive.lower(tr._abstract_state(), batch_sds).compile()
    naive_compile = time.perf_counter() - t0
    key = jax.random.key(0)
    batch = jax.device_put(jax.random.randint(key, batch_sds.shape, 0, model.vocab_size, jnp.int32),
                           tr.batch_sharding)
    ours_step, _ = time_steps(lambda s, b: (lambda o: (o[0], o[1]["loss"]))(tr.step(s, b)),
                              tr.init_state(), batch, steps)
    naive_step_s, _ = time_steps(naive_compiled, tr.init_state(), batch, steps)
    return dict(layout=name, ours_compile=ours_compile, naive_compile=naive_compile, ours_step=ours_step,
                naive_step=naive_step_s, ours_bytes=collective_bytes(tr.compiled, tr.mesh),
                naive_bytes=collective_bytes(naive_compiled, tr.mesh))


def _bytes(d: dict[str, float]) -> str:
    return ", ".join(f"{k} {v / 2**20:.2f} MiB" for k, v in sorted(d.items())) or "none"


def main() -> None:
    """Measure every layout ``--repeat`` times (medians) and print the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    args = ap.parse_args()
    print(f"JAX {jax.__version__}, {jax.device_count()} x {jax.devices()[0].platform}; scaled-down llama-3-8b "
          f"(d_model 256, 4 layers), seq 256, 16 sequences per step\n")
    print("| layout | compile ours / naive (s) | step ours / naive (ms) | step ratio naive/ours | "
          "collectives ours | collectives naive |")
    print("|---|---|---|---|---|---|")
    for name in args.layouts.split(","):
        runs = [measure(name, args.steps) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("ours_compile", "naive_compile", "ours_step",
                                                                    "naive_step")}
        print(f"| {name} | {med['ours_compile']:.1f} / {med['naive_compile']:.1f} | "
              f"{1e3 * med['ours_step']:.1f} / {1e3 * med['naive_step']:.1f} | "
              f"{med['naive_step'] / med['ours_step']:.2f} | {_bytes(runs[0]['ours_bytes'])} | "
              f"{_bytes(runs[0]['naive_bytes'])} |", flush=True)


if __name__ == "__main__":
    main()
