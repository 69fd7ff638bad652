"""Measure a real accelerator where the planner's shape models make claims, and compare.

For sessions that are lent a GPU (CI never has one; ``--smoke`` exercises every code path on CPU
in seconds, numbers meaningless there). One call measures, each written to ``--out`` as JSON:

* **GEMM grid** (``gemm_torch``: PyTorch -> cuBLAS, as Megatron-LM / torchtitan / DeepSpeed run
  their linear layers; ``gemm_jax``: XLA): the forward, input-gradient and weight-gradient GEMMs
  of Llama-3.2-1B and Llama-3-8B linear layers sharded over tp = 1, 2, 4, 8, for 8,192 tokens per
  microbatch, plus square GEMMs. Against :func:`shardplan.cost.gemm.gemm_time` (tile and wave
  quantization, split-K) by ``benchmarks/device_report.py``.
* **fp8 GEMMs** (``gemm_fp8_torch``: ``torch._scaled_mm``, e4m3 inputs, bf16 output) over the forward
  shapes: the isolated fp8 rate beside the presets' fitted ``fp8_matmul_efficiency``.
* **Attention kernels** (PyTorch SDPA's FlashAttention-2 and cuDNN backends, JAX's cuDNN
  ``dot_product_attention``): forward and backward seconds for head_dim 64 / 128, sequence
  512-16,384, causal and not, batch x sequence = 16,384 tokens and 2,048 hidden (the setup of the
  FlashAttention-3 paper's Fig. 5-6, to which :data:`shardplan.cost.gemm.ATTENTION_KERNELS` was
  fitted). FLOPs: forward ``4 b s^2 h d`` (halved when causal), backward 2.5 x forward (the
  FlashAttention benchmark convention).
* **HBM**: a device-to-device copy of a large bf16 buffer (bytes read + written over time).
* **Training step**: shardplan's own JAX runtime (``shardplan.jax.train.Trainer``) on one device
  for a Llama-3.2-1B-shaped model (8 of its 16 layers, full width and vocabulary), median step
  time after warm-up and the allocator's peak, beside the planner's prediction for the same run.
* ``shardplan bench`` (the product's command) on the same device, writing a cluster YAML.
* **Eager PyTorch model step** (``hf_step``; ``hf_compile`` under ``torch.compile``): Hugging Face
  transformers' ``LlamaForCausalLM`` in bf16 (Llama-3-8B with 4 of its 32 layers at seq 8,192; Llama-3.2-1B
  at seq 4,096 x 2; the 8B slice with activation checkpointing), forward + backward per microbatch, the
  allocator's static and peak bytes, and one profiled step split into GEMM / attention / other kernels:
  what the eager profiles' element-wise factor (``elementwise_traffic``, fitted on A100 rows) claims on Hopper.
* **Sustained GEMM** (``sustained``): 20 s of back-to-back 8192^3 GEMMs, TFLOP/s per half second beside
  nvidia-smi's SM clock, power and temperature: does a GEMM-only load hit the power limit?

Timing: CUDA events around ``reps`` back-to-back calls on random data (never zeros: they run
faster), median over ``trials``, inputs rotated over several buffers so that small GEMMs do not
run out of L2. Usage::

    python benchmarks/device_check.py --out DIR            # on the GPU machine
    python benchmarks/device_check.py --out DIR --smoke    # CPU, seconds
    python benchmarks/device_report.py DIR --doc docs/device.md   # here, no GPU needed
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

#: Llama linear layers (name, in_features, out_features): Llama-3.2-1B and Llama-3-8B configs
#: (hidden 2048 / 4096, 32 heads, 8 KV heads, head_dim 64 / 128, intermediate 8192 / 14336)
LAYERS = {"1b": [("qkv", 2048, 3072), ("o", 2048, 2048), ("gate_up", 2048, 16384), ("down", 8192, 2048)],
          "8b": [("qkv", 4096, 6144), ("o", 4096, 4096), ("gate_up", 4096, 28672), ("down", 14336, 4096)]}
SQUARES = [1024, 2048, 4096, 8192, 16384]


def gemm_shapes(tokens: int, smoke: bool) -> list[dict]:
    """Every (m, n, k) to time: forward ``[tokens, K] x [K, N/tp]``, input gradient ``[tokens, N/tp] x
    [N/tp, K]``, weight gradient ``[K, tokens] x [tokens, N/tp]`` (column-parallel layers: qkv,
    gate_up; row-parallel layers (o, down) split K instead of N), and squares."""
    if smoke:
        return [{"model": "smoke", "layer": "x", "tp": 1, "pass": "fwd", "m": 64, "n": 48, "k": 32}]
    out = []
    for model, layers in LAYERS.items():
        for name, k_in, n_out in layers:
            for tp in (1, 2, 4, 8):
                k, n = (k_in, n_out // tp) if name in ("qkv", "gate_up") else (k_in // tp, n_out)
                base = {"model": model, "layer": name, "tp": tp}
                out += [{**base, "pass": "fwd", "m": tokens, "n": n, "k": k},
                        {**base, "pass": "dgrad", "m": tokens, "n": k, "k": n},
                        {**base, "pass": "wgrad", "m": k, "n": n, "k": tokens}]
    out += [{"model": "square", "layer": "square", "tp": 1, "pass": "fwd", "m": s, "n": s, "k": s} for s in SQUARES]
    return out


def attention_shapes(smoke: bool) -> list[dict]:
    """FlashAttention-3 Fig. 5-6 grid: hidden 2048, batch x seq = 16,384, head_dim 64 / 128."""
    if smoke:
        return [{"b": 1, "s": 64, "h": 2, "d": 32, "causal": True}]
    return [{"b": 16384 // s, "s": s, "h": 2048 // d, "d": d, "causal": c}
            for d in (64, 128) for c in (True, False) for s in (512, 1024, 2048, 4096, 8192, 16384)]


def attention_flops(b: int, s: int, h: int, d: int, causal: bool) -> float:
    """Forward FLOPs ``4 b s^2 h d`` (QK^T and PV), halved when causal (FlashAttention benchmarks)."""
    return 4.0 * b * s * s * h * d / (2 if causal else 1)


# ------------------------------------------------------------------ PyTorch
def torch_timer(fn, reps: int, trials: int) -> float:
    """Median seconds of one ``fn()`` call: CUDA events around ``reps`` calls, ``trials`` times."""
    import torch
    fn()
    if not torch.cuda.is_available():
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps
    torch.cuda.synchronize()
    out = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) / 1e3 / reps)
    return statistics.median(out)


def reps_for(flops: float, smoke: bool) -> int:
    """Calls per timed trial: :func:`shardplan.jax.bench.calls_for` at ~700 TFLOP/s, at least 3 (2 on CPU)."""
    from shardplan.jax.bench import calls_for
    return 2 if smoke else max(3, calls_for(flops / 7e14))


def gemm_torch(shapes: list[dict], smoke: bool) -> list[dict]:
    """bf16 ``a @ b`` through PyTorch (cuBLAS), weight-gradient shapes as ``x.T @ dy`` (the transposed
    read a training backward does)."""
    import torch
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    out = []
    for sh in shapes:
        m, n, k = sh["m"], sh["n"], sh["k"]
        nbuf = 4
        if sh["pass"] == "wgrad":  # [K_in, tokens] stored as x[tokens, K_in] transposed
            a = [torch.randn(k, m, device=dev, dtype=torch.bfloat16).t() for _ in range(nbuf)]
        else:
            a = [torch.randn(m, k, device=dev, dtype=torch.bfloat16) for _ in range(nbuf)]
        b = [torch.randn(k, n, device=dev, dtype=torch.bfloat16) for _ in range(nbuf)]
        i = [0]

        def run():
            j = i[0] = (i[0] + 1) % nbuf
            return a[j] @ b[j]
        flops = 2.0 * m * n * k
        t = torch_timer(run, reps_for(flops, smoke), 5)
        out.append({**sh, "seconds": t, "tflops": flops / t / 1e12})
        del a, b
    if dev == "cuda":
        torch.cuda.empty_cache()
    return out


def gemm_fp8_torch(shapes: list[dict], smoke: bool) -> list[dict]:
    """fp8 (e4m3) ``a @ b`` with bf16 output through ``torch._scaled_mm`` (cuBLASLt's fp8 GEMM, the one
    Transformer Engine's and torchao's fp8 linears call; per-tensor scales of 1), forward shapes and
    squares; needs a GPU with fp8 tensor cores (compute capability >= 8.9), else one error row."""
    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (8, 9):
        return [{"error": "no fp8 tensor cores (needs CUDA compute capability >= 8.9)"}]
    one = torch.ones((), device="cuda", dtype=torch.float32)
    out = []
    for sh in (s for s in shapes if s["pass"] == "fwd"):
        m, n, k = sh["m"], sh["n"], sh["k"]
        a = [torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn) for _ in range(2)]
        b = [torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t() for _ in range(2)]  # column-major
        i = [0]

        def run():
            j = i[0] = (i[0] + 1) % 2
            return torch._scaled_mm(a[j], b[j], scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        flops = 2.0 * m * n * k
        t = torch_timer(run, reps_for(flops / 2, smoke), 5)
        out.append({**sh, "seconds": t, "tflops": flops / t / 1e12})
    torch.cuda.empty_cache()
    return out


def attention_torch(shapes: list[dict], smoke: bool) -> list[dict]:
    """PyTorch SDPA with one backend at a time (FLASH_ATTENTION = FlashAttention-2, CUDNN_ATTENTION),
    forward and forward + backward; backward = the difference."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    backends = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION} if dev == "cuda" \
        else {"math": SDPBackend.MATH}
    out = []
    for name, backend in backends.items():
        for sh in shapes:
            q, k, v = (torch.randn(sh["b"], sh["h"], sh["s"], sh["d"], device=dev, dtype=torch.bfloat16,
                                   requires_grad=True) for _ in range(3))
            g = torch.randn_like(q)
            flops = attention_flops(**sh)
            try:
                with sdpa_kernel(backend):
                    fwd = torch_timer(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=sh["causal"]),
                                      reps_for(flops, smoke), 5)
                    both = torch_timer(lambda: torch.autograd.grad(F.scaled_dot_product_attention(
                        q, k, v, is_causal=sh["causal"]), (q, k, v), g), reps_for(3.5 * flops, smoke), 5)
            except RuntimeError as e:  # backend refuses the shape
                out.append({**sh, "kernel": name, "error": str(e)[:200]})
                continue
            bwd = max(both - fwd, 1e-9)
            out.append({**sh, "kernel": name, "fwd_s": fwd, "bwd_s": bwd, "fwd_tflops": flops / fwd / 1e12,
                        "bwd_tflops": 2.5 * flops / bwd / 1e12})
    return out


def hbm_torch(n_bytes: int) -> dict:
    """Device-to-device copy of ``n_bytes`` of bf16: (read + write) bytes / s."""
    import torch
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(n_bytes // 2, device=dev, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    t = torch_timer(lambda: y.copy_(x), 2 if n_bytes < 1 << 24 else 20, 5)
    return {"bytes": n_bytes, "seconds": t, "bytes_per_s": 2 * n_bytes / t}


def sustained_gemm(seconds: float, smoke: bool) -> dict:
    """Back-to-back bf16 8192^3 GEMMs for ``seconds`` on random data, the achieved TFLOP/s per half-second window
    beside the SM clock and board power nvidia-smi samples meanwhile: whether a GEMM-only load runs into the power
    limit (the isolated grid's 0.71 of peak against 0.78 inside a training step, docs/device.md)."""
    import torch
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    n = 64 if smoke else 8192
    a, b = (torch.randn(n, n, device=dev, dtype=torch.bfloat16) for _ in range(2))
    smi = None
    if dev == "cuda":
        query = ["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu", "--format=csv,noheader,nounits"]
        smi = subprocess.Popen(query + ["-lms", "500"], stdout=subprocess.PIPE, text=True)
    windows, t_end = [], time.perf_counter() + (0.5 if smoke else seconds)
    while time.perf_counter() < t_end:
        t0, calls = time.perf_counter(), 0
        while time.perf_counter() - t0 < 0.5:
            for _ in range(8):
                a @ b
            calls += 8
            if dev == "cuda":
                torch.cuda.synchronize()
        windows.append(2.0 * n ** 3 * calls / (time.perf_counter() - t0) / 1e12)
    samples = []
    if smi is not None:
        smi.terminate()
        samples = [line.strip() for line in smi.communicate(timeout=10)[0].splitlines() if line.strip()]
    return {"n": n, "window_s": 0.5, "tflops": windows, "smi_clock_mhz_power_w_temp_c": samples}


# ------------------------------------------------------------------ JAX
def jax_timer(f, args: list, reps: int, trials: int) -> float:
    """Median seconds of one call: :func:`shardplan.jax.bench.median_seconds` (``reps`` calls back to
    back rotating over the argument tuples ``args``, then one wait; ``trials`` times)."""
    from shardplan.jax.bench import median_seconds
    return median_seconds(f, *args[0], repeat=trials, calls=reps, alternates=tuple(args[1:]))


def gemm_jax(shapes: list[dict], smoke: bool) -> list[dict]:
    """bf16 ``a @ b`` through XLA for the forward-pass shapes and the squares."""
    import jax
    import jax.numpy as jnp
    f = jax.jit(lambda a, b: a @ b)
    out = []
    for sh in (s for s in shapes if s["pass"] == "fwd"):
        m, n, k = sh["m"], sh["n"], sh["k"]
        keys = jax.random.split(jax.random.key(0), 8)
        args = [(jax.random.normal(keys[2 * i], (m, k), jnp.bfloat16),
                 jax.random.normal(keys[2 * i + 1], (k, n), jnp.bfloat16)) for i in range(4)]
        flops = 2.0 * m * n * k
        t = jax_timer(f, args, reps_for(flops, smoke), 5)
        out.append({**sh, "seconds": t, "tflops": flops / t / 1e12})
    return out


def attention_jax(shapes: list[dict], smoke: bool) -> list[dict]:
    """``jax.nn.dot_product_attention`` with ``implementation='cudnn'`` (None on CPU): forward and
    forward + backward (``jax.vjp``)."""
    import jax
    import jax.numpy as jnp
    impl = "cudnn" if jax.default_backend() == "gpu" else None
    out = []
    for sh in (s for s in shapes if s["d"] == 128 or len(shapes) == 1):  # head_dim 128: compile time
        shape = (sh["b"], sh["s"], sh["h"], sh["d"])
        q, k, v, g = (jax.random.normal(jax.random.key(i), shape, jnp.bfloat16) for i in range(4))

        def attn(q, k, v):
            return jax.nn.dot_product_attention(q, k, v, is_causal=sh["causal"], implementation=impl)
        fwd_f = jax.jit(attn)
        both_f = jax.jit(lambda q, k, v, g: jax.vjp(attn, q, k, v)[1](g))
        flops = attention_flops(**sh)
        try:
            fwd = jax_timer(fwd_f, [(q, k, v)], reps_for(flops, smoke), 5)
            both = jax_timer(both_f, [(q, k, v, g)], reps_for(3.5 * flops, smoke), 5)
        except Exception as e:  # noqa: BLE001 - a backend that refuses a shape is a result
            out.append({**sh, "kernel": "jax-cudnn", "error": str(e)[:200]})
            continue
        # vjp re-runs the forward inside (no residuals kept between the two jits)
        bwd = max(both - fwd, 1e-9)
        out.append({**sh, "kernel": "jax-cudnn", "fwd_s": fwd, "bwd_s": bwd, "fwd_tflops": flops / fwd / 1e12,
                    "bwd_tflops": 2.5 * flops / bwd / 1e12})
    return out


def train_step(smoke: bool, hardware: str) -> dict:
    """shardplan's JAX runtime on one device: Llama-3.2-1B with 8 of 16 layers (smoke: scaled down),
    seq 2048, 8 sequences in microbatches of 4; measured vs the planner (JAX runtime profile)."""
    import jax
    from shardplan.cost.step import estimate
    from shardplan.jax.data import PackedBatches, load_tokens, shard_batch
    from shardplan.jax.model import scale_down
    from shardplan.jax.train import TrainConfig, Trainer
    from shardplan.loaders import load_hardware, load_model
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import JAX_RUNTIME
    from shardplan.specs.training import TrainingSpec

    base = load_model("llama-3.2-1b")
    model = scale_down(base, d_model=64, n_layers=2) if smoke else base.model_copy(update={"n_layers": 8})
    seq, gbs, mbs = (32, 4, 2) if smoke else (2048, 8, 4)
    out = {"model": model.name, "n_layers": model.n_layers, "n_params": model.n_params, "seq_len": seq,
           "global_batch": gbs, "microbatch_size": mbs, "steps": []}
    pc = ParallelConfig(microbatch_size=mbs)
    for attention in ("naive", "flash"):
        tr = TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=JAX_RUNTIME, attention=attention)
        est = estimate(model, load_hardware(hardware), tr, pc, 1)
        out[f"predicted_step_s_{attention}"] = est.step_s
        out[f"predicted_peak_bytes_{attention}"] = est.memory.total
    tr = TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=JAX_RUNTIME, attention="naive")
    trainer = Trainer(model, validate(pc, model, tr, 1), tr, TrainConfig(steps=8, compute_dtype="bfloat16"))
    batches = PackedBatches(load_tokens(max_bytes=4 << 20), seq, gbs, seed=0)
    state = trainer.init_state()
    for i in range(3 if smoke else 6):
        batch = shard_batch(batches.batch(i), trainer.mesh)
        t0 = time.perf_counter()
        state, met = trainer.step(state, batch)
        loss = float(met["loss"])
        out["steps"].append({"seconds": time.perf_counter() - t0, "loss": loss})
    out["measured_step_s"] = statistics.median(s["seconds"] for s in out["steps"][2:])
    stats = jax.devices()[0].memory_stats() or {}
    out["measured_peak_bytes"] = stats.get("peak_bytes_in_use")
    return out


# ------------------------------------------------------------------ eager PyTorch model step
#: Hugging Face transformers Llama steps: (name, preset, n_layers, seq_len, microbatch_size, recompute, compiled)
HF_RUNS = [("8b-4l", "llama-3-8b", 4, 8192, 1, False, False),
           ("1b", "llama-3.2-1b", 16, 4096, 2, False, False),
           ("8b-4l-recompute", "llama-3-8b", 4, 8192, 1, True, False)]
#: the same under ``torch.compile`` (its own section, last: compilation can take minutes)
HF_COMPILED = [("8b-4l-compiled", "llama-3-8b", 4, 8192, 1, False, True)]


def hf_llama(spec, device: str):
    """A bf16 ``transformers.LlamaForCausalLM`` with the preset's shape, SDPA attention (FlashAttention-2 on
    Hopper), the library's own cross-entropy (fp32 upcast of the logits: the hf / torchtitan ``loss: eager``)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=spec.d_model, intermediate_size=spec.ffn_dim, num_hidden_layers=spec.n_layers,
                      num_attention_heads=spec.n_heads, num_key_value_heads=spec.n_kv_heads,
                      vocab_size=spec.vocab_size, tie_word_embeddings=spec.tied_embeddings,
                      max_position_embeddings=8192, rope_theta=500000.0, use_cache=False)
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(device):
        return LlamaForCausalLM(cfg).to(torch.bfloat16)


def kernel_split(prof) -> dict:
    """Device seconds of one profiled step by kernel family (GEMM, attention, the rest = element-wise and
    copies), and the 25 kernels that took longest, from a ``torch.profiler`` trace."""
    fam = {"gemm": 0.0, "attention": 0.0, "other": 0.0}
    rows = []
    for ev in prof.key_averages():
        t = getattr(ev, "device_time_total", getattr(ev, "cuda_time_total", 0.0)) / 1e6
        if t <= 0 or ev.key.startswith(("aten::", "autograd::", "Optimizer", "cudaLaunch", "ProfilerStep")):
            continue
        name = ev.key.lower()
        kind = ("attention" if any(w in name for w in ("flash", "fmha", "attention", "attn")) else
                "gemm" if any(w in name for w in ("gemm", "nvjet", "cutlass", "xmma", "sm90_", "cublas")) else "other")
        fam[kind] += t
        rows.append((t, ev.count, ev.key[:120], kind))
    rows.sort(reverse=True)
    return {"seconds": fam, "top": [{"s": t, "calls": c, "kernel": k, "family": f} for t, c, k, f in rows[:25]]}


def hf_run(run: tuple, smoke: bool) -> dict:
    """One HF Llama forward + backward per microbatch (gradients accumulate, no optimizer): wall seconds with
    a device sync (eager launch gaps count, as in training), the allocator's static bytes (bf16 parameters +
    gradients) and peak, and one profiled step split by kernel family."""
    import torch
    from shardplan.loaders import load_model
    name, preset, layers, seq, mbs, recompute, compiled = run
    spec = load_model(preset).model_copy(update={"n_layers": layers})
    if smoke:
        spec = spec.model_copy(update={"d_model": 64, "n_heads": 4, "n_kv_heads": 2, "ffn_dim": 128,
                                       "vocab_size": 512, "n_layers": 2})
        seq, mbs = 64, 1
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = hf_llama(spec, dev)
    if recompute:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    fwd = torch.compile(model) if compiled else model
    ids = torch.randint(0, spec.vocab_size, (mbs, seq), device=dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def step() -> float:
        t0 = time.perf_counter()
        fwd(input_ids=ids, labels=ids).loss.backward()
        sync()
        return time.perf_counter() - t0

    first = step()
    step()
    out = {"name": name, "preset": preset, "n_layers": spec.n_layers, "seq_len": seq, "microbatch_size": mbs,
           "recompute": recompute, "compiled": compiled, "n_params": sum(p.numel() for p in model.parameters()),
           "first_step_s": first}
    if dev == "cuda":
        out["static_bytes"] = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    out["steps_s"] = [step() for _ in range(1 if smoke else 6)]
    out["measured_step_s"] = statistics.median(out["steps_s"])
    if dev == "cuda":
        out["peak_bytes"] = torch.cuda.max_memory_allocated()
        out["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
        out["kernels"] = kernel_split(prof)
    return out


def hf_step(smoke: bool, runs: list[tuple]) -> list[dict]:
    """Every entry of ``runs`` (smoke: the first, tiny); a failing run is recorded, the next runs."""
    import torch
    out = []
    for run in runs[:1] if smoke else runs:
        try:
            out.append(hf_run(run, smoke))
        except Exception:  # noqa: BLE001 - reported, the next run goes on
            out.append({"name": run[0], "error": traceback.format_exc()[-2000:]})
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        print(f"  hf {run[0]}: {out[-1].get('measured_step_s', 'error')}", flush=True)
    return out


def bench_cli(out_dir: Path, smoke: bool, hardware: str) -> dict:
    """``shardplan bench`` as a user runs it, on the one device; its YAML and JSON under ``out_dir``."""
    cmd = [sys.executable, "-m", "shardplan", "bench", "--hardware", hardware, "--devices", "1",
           "-o", str(out_dir / f"bench_{hardware}.yaml"), "--json", str(out_dir / "bench.json")] + (["--smoke"] if smoke else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    return {"rc": r.returncode, "stdout_tail": r.stdout[-3000:], "stderr_tail": r.stderr[-2000:]}


def environment() -> dict:
    """Library versions and the device, as the report prints them."""
    env = {"python": sys.version.split()[0]}
    for mod in ("torch", "jax", "jaxlib", "flax", "optax"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception as e:  # noqa: BLE001
            env[mod] = f"missing: {e}"
    try:
        env["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                                            "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        env["nvidia_smi"] = None
    return env


SECTIONS = ["environment", "hbm", "gemm_torch", "gemm_fp8_torch", "attention_torch", "gemm_jax", "attention_jax",
            "train_step", "bench", "hf_step", "hf_compile",
            "sustained"]


def run_section(name: str, out_dir: Path, smoke: bool, hardware: str = "h100-sxm") -> object:
    """One section's measurements (exceptions become ``{"error": traceback}`` so the others still run)."""
    tokens = 8192
    calls = {"environment": environment, "hbm": lambda: hbm_torch(1 << 20 if smoke else 4 << 30),
             "gemm_torch": lambda: gemm_torch(gemm_shapes(tokens, smoke), smoke),
             "gemm_jax": lambda: gemm_jax(gemm_shapes(tokens, smoke), smoke),
             "gemm_fp8_torch": lambda: gemm_fp8_torch(gemm_shapes(tokens, smoke), smoke),
             "attention_torch": lambda: attention_torch(attention_shapes(smoke), smoke),
             "attention_jax": lambda: attention_jax(attention_shapes(smoke), smoke),
             "train_step": lambda: train_step(smoke, hardware), "bench": lambda: bench_cli(out_dir, smoke, hardware),
             "hf_step": lambda: hf_step(smoke, HF_RUNS), "hf_compile": lambda: hf_step(smoke, HF_COMPILED),
             "sustained": lambda: sustained_gemm(20.0, smoke)}
    try:
        return calls[name]()
    except Exception:  # noqa: BLE001 - reported, the next section runs
        return {"error": traceback.format_exc()[-3000:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="directory for device_check.json")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CPU)")
    ap.add_argument("--only", nargs="*", choices=SECTIONS, default=SECTIONS)
    ap.add_argument("--hardware", default="h100-sxm", help="the preset of the device (train_step's prediction, bench)")
    args = ap.parse_args()
    # PyTorch sections hold memory in their caching allocator: JAX allocates as it goes, not 75% up front
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    args.out.mkdir(parents=True, exist_ok=True)
    res: dict = {}
    for name in args.only:
        t0 = time.perf_counter()
        res[name] = run_section(name, args.out, args.smoke, args.hardware)
        res.setdefault("section_seconds", {})[name] = round(time.perf_counter() - t0, 1)
        (args.out / "device_check.json").write_text(json.dumps(res, indent=1, default=str))
        bad = isinstance(res[name], dict) and "error" in res[name]
        print(f"{name}: {res['section_seconds'][name]} s{' ERROR' if bad else ''}", flush=True)
        if bad:
            print(res[name]["error"][-1500:], flush=True)
    print(json.dumps({k: v for k, v in res.items() if k in ("environment", "hbm", "section_seconds")}, default=str))
    ts = res.get("train_step")
    if isinstance(ts, dict) and "measured_step_s" in ts:
        print({k: v for k, v in ts.items() if k != "steps"})


if __name__ == "__main__":
    main()
