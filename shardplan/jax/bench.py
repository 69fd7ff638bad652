"""Microbenchmarks of the devices JAX sees: the measured inputs of a calibration (issue 10).

What is measured, each beside the planner's own prediction for the same work on the base preset:

* **GEMM**: bf16 ``[m, k] @ [k, n]`` over a grid of shapes -> achieved FLOP/s, fraction of the
  preset's dense peak, and the planner's predicted fraction (:func:`shardplan.cost.gemm.gemm_time`:
  tile and wave quantization), so a user sees where the GEMM model is off on their chip.
* **HBM**: ``y = 2 x`` over a large bf16 buffer (one read + one write) -> bytes/s.
* **Attention**: ``jax.nn.dot_product_attention`` (causal, bf16) forward -> FLOP/s with the causal
  FLOPs ``2 x 2 b s^2 a d / 2`` (FlashAttention-2 paper's accounting, Dao 2023 Sec. 4).
* **Collectives**: AllReduce (``psum``), AllGather, ReduceScatter (``psum_scatter``), AllToAll and a
  ring ``ppermute`` inside ``jax.shard_map`` over a 1-D mesh of ``n`` devices, for message sizes
  from ``min_bytes`` to ``max_bytes``; bus bandwidth the nccl-tests way (NVIDIA/nccl-tests
  doc/PERFORMANCE.md): ``busbw = algbw x 2(n-1)/n`` for AllReduce, ``x (n-1)/n`` for AllGather,
  ReduceScatter and AllToAll, ``x 1`` for send/recv, with ``algbw = S / t`` and ``S`` the full buffer
  (AllGather's output, ReduceScatter's and AllReduce's input; AllToAll's per-device payload).

Timing (:func:`median_seconds`): after one warm-up (compile) call, ~20 ms of calls dispatched back to
back and then waited for, divided by their number; the median of ``repeat`` such runs, on normal
random data (never constants, which run faster).
On CPU the numbers describe the host, not an accelerator: ``smoke`` sizes keep the run to seconds
and exist to exercise the code path (tests, CI).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

from shardplan.cost.gemm import GemmShape, gemm_time
from shardplan.specs.hardware import HardwareSpec

#: nccl-tests bus-bandwidth factor per operation (PERFORMANCE.md), as a function of the group size n
BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "AllReduce": lambda n: 2 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n,
    "ReduceScatter": lambda n: (n - 1) / n, "AllToAll": lambda n: (n - 1) / n, "SendRecv": lambda n: 1.0}


@dataclass(frozen=True)
class Measurement:
    """One microbenchmark result.

    Attributes:
        kind: 'gemm', 'hbm', 'attention' or a collective name ('AllReduce', ...).
        shape: what was run (GEMM m, n, k; bytes; attention b, s, a, d; collective group size n, bytes S).
        seconds: median seconds of one call.
        achieved: FLOP/s (gemm, attention) or bytes/s (hbm: read + write; collectives: bus bandwidth).
        fraction: ``achieved`` over the preset's peak (FLOP/s, HBM bandwidth), when there is one.
        predicted_fraction: the planner's predicted fraction for the same work (gemm), when modelled.
    """

    kind: str
    shape: dict[str, int]
    seconds: float
    achieved: float
    fraction: float | None = None
    predicted_fraction: float | None = None


def _random(shape: tuple[int, ...], seed: int) -> jax.Array:
    """Normal bf16 data: constant inputs (zeros, ones) let tensor cores draw less power and run
    faster than training data does (seen: +13% on an H200 for a bf16 GEMM on zeros)."""
    return jax.random.normal(jax.random.key(seed), shape, jnp.bfloat16)


def median_seconds(fn: Callable, *args: Any, repeat: int = 5, calls: int = 1,
                   alternates: tuple[tuple[Any, ...], ...] = ()) -> float:
    """Median seconds of one ``fn`` call: ``calls`` calls dispatched back to back (rotating over
    ``args`` and ``alternates``, so that a small operand does not stay in L2) and then waited for,
    ``repeat`` times, after one warm-up (compile) call. Timing one call with a wait after it counts the
    host's dispatch and synchronization (~0.1-0.4 ms) as device time, which dominates millisecond work."""
    sets = (args, *alternates)
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = None
        for i in range(calls):
            out = fn(*sets[i % len(sets)])
        jax.block_until_ready(out)
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


def calls_for(work_s: float) -> int:
    """Back-to-back calls per timed repeat: about 20 ms of device work at the estimate ``work_s``
    seconds per call (between 1 and 200)."""
    return int(min(200, max(1, 20e-3 / max(work_s, 1e-7))))


def gemm(shapes: list[tuple[int, int, int]], hw: HardwareSpec, repeat: int = 5) -> Iterator[Measurement]:
    """bf16 GEMMs ``[m, k] @ [k, n]`` (2 m n k FLOPs each) against the GEMM model's prediction."""
    f = jax.jit(lambda a, b: a @ b)
    for i, (m, n, k) in enumerate(shapes):
        a, b = _random((m, k), 2 * i), _random((k, n), 2 * i + 1)
        alt = ((_random((m, k), 2 * i + 7), _random((k, n), 2 * i + 8)),)
        flops = 2.0 * m * n * k
        pred = gemm_time(GemmShape(m, n, k), hw)
        t = median_seconds(f, a, b, repeat=repeat, calls=calls_for(pred.seconds), alternates=alt)
        yield Measurement("gemm", {"m": m, "n": n, "k": k}, t, flops / t, flops / t / hw.peak_flops_bf16,
                          flops / pred.seconds / hw.peak_flops_bf16)


def hbm(n_bytes: int, hw: HardwareSpec, repeat: int = 5) -> Measurement:
    """Bytes/s of ``y = 2 x`` over ``n_bytes`` of bf16 (reads and writes ``n_bytes`` each)."""
    x = _random((n_bytes // 2,), 2)
    t = median_seconds(jax.jit(lambda v: v * 2), x, repeat=repeat, calls=calls_for(2 * n_bytes / hw.hbm_bandwidth))
    return Measurement("hbm", {"bytes": n_bytes}, t, 2 * n_bytes / t, 2 * n_bytes / t / hw.hbm_bandwidth)


def attention(batch: int, seq: int, heads: int, head_dim: int, hw: HardwareSpec, repeat: int = 5) -> Measurement:
    """Causal bf16 attention forward (``jax.nn.dot_product_attention``, cuDNN's fused kernel on GPUs,
    XLA's otherwise): FLOP/s counting the causal half of ``4 b s^2 a d``."""
    q = _random((batch, seq, heads, head_dim), 3)
    flops = 4.0 * batch * seq * seq * heads * head_dim / 2
    calls = calls_for(flops / (0.4 * hw.peak_flops_bf16))  # work estimate: 40% of the peak
    gpu = jax.default_backend() == "gpu"

    def timed(impl: str | None) -> float:
        f = jax.jit(lambda x: jax.nn.dot_product_attention(x, x, x, is_causal=True, implementation=impl))
        return median_seconds(f, q, repeat=repeat, calls=calls)
    try:
        t = timed("cudnn" if gpu else None)
    except Exception:  # noqa: BLE001 - cuDNN refuses the shape or is missing: XLA's own attention
        if not gpu:
            raise
        t = timed(None)
    return Measurement("attention", {"b": batch, "s": seq, "a": heads, "d": head_dim}, t, flops / t,
                       flops / t / hw.peak_flops_bf16)


def _collective_fn(op: str, mesh: Mesh) -> Callable:
    """A jitted ``shard_map`` running ``op`` over the mesh's one axis 'x' on a sharded f32 buffer."""
    n = mesh.devices.size
    body = {
        "AllReduce": lambda v: jax.lax.psum(v, "x"),
        "AllGather": lambda v: jax.lax.all_gather(v, "x", tiled=True),
        "ReduceScatter": lambda v: jax.lax.psum_scatter(v, "x", tiled=True),
        "AllToAll": lambda v: jax.lax.all_to_all(v, "x", 0, 0, tiled=True),
        "SendRecv": lambda v: jax.lax.ppermute(v, "x", [(i, (i + 1) % n) for i in range(n)]),
    }[op]
    out = P() if op == "AllGather" else P("x")
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=out, check_vma=False))


def collective(op: str, n: int, size_bytes: int, repeat: int = 5) -> Measurement:
    """Bus bandwidth of ``op`` over the first ``n`` devices for a buffer of ``size_bytes`` (module
    docstring: which buffer ``S`` is for each op)."""
    mesh = Mesh(np.array(jax.devices()[:n]), ("x",))
    # per-device input elements (f32): AllGather's input is S/n, the others' (local) input is S, except
    # send/recv and AllToAll, whose per-device payload is S
    per_device = size_bytes // 4 // (n if op == "AllGather" else 1)
    per_device = max(n, per_device - per_device % n)
    x = jax.device_put(jnp.ones((per_device * n,), jnp.float32), jax.NamedSharding(mesh, P("x")))
    t = median_seconds(_collective_fn(op, mesh), x, repeat=repeat)
    s = per_device * 4 * (n if op == "AllGather" else 1)
    return Measurement(op, {"n": n, "bytes": s}, t, s / t * BUS_FACTOR[op](n))


def group_sizes(n_devices: int) -> list[int]:
    """Powers of two from 2 up to the device count (and the count itself)."""
    out = sorted({1 << i for i in range(1, n_devices.bit_length()) if 1 << i <= n_devices} | {n_devices})
    return [n for n in out if n >= 2]


def as_dicts(results: list[Measurement]) -> list[dict]:
    """JSON-friendly results."""
    return [asdict(r) for r in results]


def _gemm_fit(gemms: list[Measurement], hw: HardwareSpec) -> dict[str, Any] | None:
    """Fields from :func:`shardplan.fitting.fit_gemm_constants` on a GPU preset with a known isolated
    rate (None otherwise, or with fewer than 3 GEMMs above the launch floor)."""
    from shardplan.fitting import fit_gemm_constants
    if hw.sm_count is None or hw.isolated_matmul_efficiency is None:
        return None
    try:
        g = fit_gemm_constants([(r.shape["m"], r.shape["n"], r.shape["k"], r.seconds) for r in gemms], hw)
    except ValueError:
        return None
    keep = hw.matmul_efficiency / hw.isolated_matmul_efficiency
    return {"matmul_efficiency": round(min(1.0, max(0.01, g.asymptote * keep)), 4),
            "isolated_matmul_efficiency": round(min(1.0, max(0.01, g.asymptote)), 4),
            "gemm_fill_steps": round(g.fill_steps, 2), "gemm_stream_k": g.stream_k}


def fitted_fields(results: list[Measurement], hw: HardwareSpec, n_devices: int, backend: str) -> dict[str, Any]:
    """Hardware fields a cluster YAML takes from the measurements (``base:`` + these, as
    :func:`shardplan.loaders.load_hardware` reads them):

    * on a GPU preset with an ``isolated_matmul_efficiency``, with 3 or more GEMMs of at least 30 us:
      ``isolated_matmul_efficiency``, ``gemm_fill_steps`` and ``gemm_stream_k`` fitted to the grid
      (:func:`shardplan.fitting.fit_gemm_constants`), and ``matmul_efficiency`` = the preset's
      end-to-end value x fitted / preset isolated rate (an isolated GEMM is not a training step:
      the preset's ratio of the two, fitted on published runs, is kept);
    * otherwise ``matmul_efficiency``: the preset's value x the median of measured / predicted GEMM
      fraction over the measured shapes (tile and wave quantization unchanged);
    * ``hbm_efficiency``: the measured fraction of ``hbm_bandwidth``;
    * ``measured_busbw`` (+ ``measured_busbw_bytes``): the bus bandwidth at the largest message of
      each collective over all devices, as the one-node entry, only when those devices are one
      scale-up domain (``n_devices == scale_up_size``: the table's meaning, :mod:`shardplan.cost.comm`).
    * ``sources``: what was measured, where (backend), and the rule above.
    """
    gemms = [r for r in results if r.kind == "gemm" and r.predicted_fraction]
    out: dict[str, Any] = {}
    gemm_fit = _gemm_fit(gemms, hw)
    if gemm_fit is not None:
        out.update(gemm_fit)
    elif gemms:
        ratio = statistics.median(r.fraction / r.predicted_fraction for r in gemms)
        out["matmul_efficiency"] = round(min(1.0, max(0.01, hw.matmul_efficiency * ratio)), 4)
    mem = [r for r in results if r.kind == "hbm"]
    if mem:
        out["hbm_efficiency"] = round(min(1.0, max(0.01, mem[-1].fraction or 0.01)), 4)
    if n_devices == hw.scale_up_size:
        table, size = {}, 0
        for op in ("AllReduce", "AllGather", "ReduceScatter"):
            full = [r for r in results if r.kind == op and r.shape["n"] == n_devices]
            if full:
                best = max(full, key=lambda r: r.shape["bytes"])
                table[op] = {1: float(best.achieved)}
                size = max(size, best.shape["bytes"])
        if table:
            out["measured_busbw"], out["measured_busbw_bytes"] = table, size
    where = f"shardplan bench on {n_devices} {backend} device(s)"
    rules = {"matmul_efficiency": "GEMM grid: the preset's value x median(measured / predicted GEMM fraction)"
             if gemm_fit is None else "GEMM grid: the preset's end-to-end value x (fitted isolated asymptote / the "
             "preset's isolated_matmul_efficiency): a training program keeps the same share of an isolated GEMM",
             "isolated_matmul_efficiency": "GEMM grid: the fitted asymptote of the GEMM model (fitting.fit_gemm_constants)",
             "gemm_fill_steps": "GEMM grid: fitted fixed K steps per output tile (fitting.fit_gemm_constants)",
             "gemm_stream_k": "GEMM grid: whichever of Stream-K and whole waves fitted the grid better (smaller "
             "mean |log error|, fitting.fit_gemm_constants)",
             "hbm_efficiency": "HBM copy: the measured fraction of hbm_bandwidth at the largest size",
             "measured_busbw": "collectives over all devices, nccl-tests busbw accounting, at the largest message",
             "measured_busbw_bytes": "the message size of measured_busbw"}
    out["sources"] = {k: f"{where}: {rules[k]}" for k in out}
    return out
