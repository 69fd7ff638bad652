"""docs/device.md from a stored ``benchmarks/device_check.py`` run: measured vs the planner's models.

No accelerator needed: reads the JSON a lent GPU wrote (``benchmarks/device_runs/``) and prices the same
work with the shipped presets (``shardplan.cost.gemm``: GEMM tiles / waves and the attention kernels),
then fits the GEMM model's constants to the measurements (``shardplan.fitting.fit_gemm_constants``).

Usage: python benchmarks/device_report.py [RUN.json ...] --doc docs/device.md (default: every run stored, oldest first;
the preset of each run from the GPU name nvidia-smi gave)
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from shardplan.cost.gemm import ATTENTION_KERNELS, GemmShape, gemm_time
from shardplan.fitting import GEMM_FIT_FLOOR_S, fit_gemm_constants
from shardplan.presets.hardware import HARDWARE

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "benchmarks" / "device_runs"
DEFAULT_RUNS = [RUNS / "h200_2026-12-04.json", RUNS / "h100_2026-12-05.json"]
#: GPU name as nvidia-smi prints it -> the preset the report prices with
PRESET_OF = {"NVIDIA H200": "h200", "NVIDIA H100 80GB HBM3": "h100-sxm"}
KERNEL = {"fa2": "fa2", "cudnn": "cudnn", "jax-cudnn": "cudnn"}


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def gemm_section(run: dict, preset: str) -> list[str]:
    """Per-shape GEMM table (PyTorch / cuBLAS), the fitted constants of both libraries and error summaries."""
    hw = HARDWARE[preset]
    peak = hw.peak_flops_bf16
    fits = {lib: fit_gemm_constants([(r["m"], r["n"], r["k"], r["seconds"]) for r in run[lib]], hw)
            for lib in ("gemm_torch", "gemm_jax") if isinstance(run.get(lib), list)}
    torch_fit = fits["gemm_torch"]
    fitted = hw.model_copy(update={"matmul_efficiency": torch_fit.asymptote, "gemm_fill_steps": torch_fit.fill_steps,
                                   "gemm_stream_k": torch_fit.stream_k})
    # the shipped model at the measured long-GEMM rate: only its shape terms are compared
    rows = [r for r in run["gemm_torch"] if r["seconds"] >= GEMM_FIT_FLOOR_S]
    big = statistics.median(r["tflops"] * 1e12 / peak for r in rows if r["k"] >= 4096 and r["m"] >= 4096
                            and r["n"] >= 4096)
    shipped = hw.model_copy(update={"matmul_efficiency": big})
    lines = ["## GEMMs", "",
             f"bf16 `[m, k] x [k, n]` on random data, {len(run['gemm_torch'])} shapes through PyTorch (cuBLAS) and "
             f"{len(run.get('gemm_jax') or [])} through XLA: the forward, input-gradient and weight-gradient GEMMs of "
             "Llama-3.2-1B and Llama-3-8B linear layers at tp = 1, 2, 4, 8 with 8,192 tokens, and squares. "
             f"GEMMs under {GEMM_FIT_FLOOR_S * 1e6:.0f} us (host-launch bound) are left out of the fits and errors.", "",
             "Fitted GEMM-model constants (`shardplan.fitting.fit_gemm_constants`; the asymptote is the rate at "
             "infinite K, a fraction of the 989.4 TFLOP/s bf16 peak):", "",
             "| library | asymptote | gemm_fill_steps | Stream-K | median \\|error\\| | GEMMs |", "|---|---|---|---|---|---|"]
    for lib, f in fits.items():
        name = {"gemm_torch": "PyTorch (cuBLAS)", "gemm_jax": "XLA"}[lib]
        lines.append(f"| {name} | {f.asymptote:.3f} | {f.fill_steps:.2f} | {'yes' if f.stream_k else 'no'} | "
                     f"{f.median_abs_error:.1%} | {f.used} |")
    err_shipped, err_fit = [], []
    table = ["", f"Per shape (PyTorch): measured TFLOP/s; the shipped `{preset}` GEMM model (tile and wave "
             f"quantization, split-K, no fill, no Stream-K) at the measured long-GEMM rate ({big:.3f} of peak), "
             "and the model with the fitted constants; error = predicted / measured speed - 1.", "",
             "| model | layer | tp | pass | m | n | k | TFLOP/s | shipped model | fitted model |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        shape = GemmShape(r["m"], r["n"], r["k"])
        e0 = r["seconds"] / gemm_time(shape, shipped).seconds - 1
        e1 = r["seconds"] / gemm_time(shape, fitted).seconds - 1
        err_shipped.append(abs(e0))
        err_fit.append(abs(e1))
        table.append(f"| {r['model']} | {r['layer']} | {r['tp']} | {r['pass']} | {r['m']} | {r['n']} | {r['k']} | "
                     f"{r['tflops']:.0f} | {_pct(e0)} | {_pct(e1)} |")
    lines += ["", f"Shipped model: median |error| {statistics.median(err_shipped):.1%}, max {max(err_shipped):.0%}; "
              f"with the fitted fill and Stream-K: median {statistics.median(err_fit):.1%}, max {max(err_fit):.0%}."]
    return lines + table


def preset_of(run: dict) -> str:
    """The preset of the GPU the run was measured on (``PRESET_OF``; nvidia-smi's first field)."""
    name = (run["environment"].get("nvidia_smi") or "").split(",")[0].strip()
    if name not in PRESET_OF:
        raise SystemExit(f"device_report: no preset for GPU {name!r}; known: {', '.join(PRESET_OF)}")
    return PRESET_OF[name]


def fp8_section(run: dict, preset: str) -> list[str]:
    """fp8 forward GEMMs (``torch._scaled_mm``) beside the bf16 GEMM of the same shape and the preset's
    ``fp8_matmul_efficiency``."""
    rows = [r for r in run.get("gemm_fp8_torch") or [] if "error" not in r and r["seconds"] >= GEMM_FIT_FLOOR_S]
    if not rows:
        return []
    hw = HARDWARE[preset]
    bf16 = {(r["m"], r["n"], r["k"]): r["tflops"] for r in run.get("gemm_torch") or []}
    lines = ["## fp8 GEMMs", "",
             f"`torch._scaled_mm` (e4m3 inputs, per-tensor scales, bf16 output) on the forward shapes; fraction of the "
             f"{hw.peak_flops_fp8 / 1e12:.0f} TFLOP/s fp8 peak, beside the preset's end-to-end `fp8_matmul_efficiency` "
             f"{hw.fp8_matmul_efficiency} (fitted on NeMo FP8 runs) and the bf16 GEMM of the same shape.", "",
             "| model | layer | tp | m | n | k | fp8 TFLOP/s | of fp8 peak | over bf16 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = bf16.get((r["m"], r["n"], r["k"]))
        speedup = f"{r['tflops'] / b:.2f}x" if b else "-"
        lines.append(f"| {r['model']} | {r['layer']} | {r['tp']} | {r['m']} | {r['n']} | {r['k']} | {r['tflops']:.0f} | "
                     f"{r['tflops'] * 1e12 / hw.peak_flops_fp8:.2f} | {speedup} |")
    big = [r["tflops"] * 1e12 / hw.peak_flops_fp8 for r in rows if min(r["m"], r["n"], r["k"]) >= 4096]
    if big:
        lines += ["", f"Long fp8 GEMMs (every dimension >= 4,096): median {statistics.median(big):.2f} of the fp8 peak."]
    return lines


def _hf_estimate(r: dict, hw):
    """The planner's estimate of one ``hf_step`` run: one device, one microbatch, no ZeRO, the hf-fsdp profile
    (eager transformers code) or torchtitan-compile for the compiled run."""
    from shardplan.cost.step import estimate
    from shardplan.loaders import load_model
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.specs.training import TrainingSpec
    model = load_model(r["preset"]).model_copy(update={"n_layers": r["n_layers"]})
    tr = TrainingSpec(seq_len=r["seq_len"], global_batch_size=r["microbatch_size"],
                      framework=framework_profile("torchtitan-compile" if r["compiled"] else "hf-fsdp"))
    pc = ParallelConfig(microbatch_size=r["microbatch_size"], zero_stage=0, recompute="full" if r["recompute"] else "none")
    return estimate(model, hw, tr, pc, 1)


def hf_section(run: dict, preset: str) -> list[str]:
    """Eager (and compiled) transformers Llama forward + backward against the planner: time by kernel family, and
    the allocator's activation peak (peak - parameters and gradients) against the activation and logit terms."""
    runs = [r for r in (run.get("hf_step") or []) + (run.get("hf_compile") or []) if "measured_step_s" in r]
    if not runs:
        return []
    hw = HARDWARE[preset]
    fit = fit_gemm_constants([(r["m"], r["n"], r["k"], r["seconds"]) for r in run["gemm_torch"]], hw)
    hw_fit = hw.model_copy(update={"matmul_efficiency": fit.asymptote, "gemm_fill_steps": fit.fill_steps,
                                   "gemm_stream_k": fit.stream_k})
    lines = ["## One-device eager PyTorch step (Hugging Face transformers Llama)", "",
             "`LlamaForCausalLM` in bf16 with SDPA attention and the library's cross-entropy, forward + backward of one "
             "microbatch (no optimizer), wall time with a device sync, median of 6 after 2 warm-ups; kernel families "
             "from one `torch.profiler` step (GEMM: cuBLAS nvjet / CUTLASS kernels; attention: cuDNN / flash; other: "
             "element-wise, copies, softmax, reductions). Planner: `hf-fsdp` profile (eager transformers code, "
             "`elementwise_traffic` 5.31 fitted on A100 torchtitan rows), `torchtitan-compile` for the compiled run, "
             "zero_stage 0, one device; its step less the optimizer. The last column prices the GEMMs with the "
             f"constants fitted to this run's cuBLAS GEMMs above (asymptote {fit.asymptote:.3f}, fill "
             f"{fit.fill_steps:.2f}, Stream-K) instead of the preset's end-to-end {hw.matmul_efficiency}.", "",
             "| run | layers | seq x mbs | measured (ms) | GEMM / attention / other (ms) | planner matmul / element-wise (ms) "
             "| planner (ms) | with measured GEMM rate (ms) |", "|---|---|---|---|---|---|---|---|"]
    mem = ["", "Memory: the allocator's `memory_allocated` before the forward (bf16 parameters and accumulated gradients) "
           "and the peak above it (activations, logits and the loss), against the planner's `params` + `grads` and "
           "`activations` + `logits` terms.", "",
           "| run | static measured / planner (GB) | activation peak measured (GB) | planner (GB) | error |",
           "|---|---|---|---|---|"]
    for r in runs:
        est, est_fit = _hf_estimate(r, hw), _hf_estimate(r, hw_fit)
        meas = r["measured_step_s"]
        pred, pred_fit = est.step_s - est.optimizer_s, est_fit.step_s - est_fit.optimizer_s
        k = (r.get("kernels") or {}).get("seconds")
        split = f"{k['gemm'] * 1e3:.1f} / {k['attention'] * 1e3:.1f} / {k['other'] * 1e3:.1f}" if k else "-"
        lines.append(f"| {r['name']} | {r['n_layers']} of {r['preset']} | {r['seq_len']} x {r['microbatch_size']} | "
                     f"{meas * 1e3:.1f} | {split} | {est.matmul_s * 1e3:.1f} / {est.elementwise_s * 1e3:.1f} | "
                     f"{pred * 1e3:.1f} ({_pct(pred / meas - 1)}) | {pred_fit * 1e3:.1f} ({_pct(pred_fit / meas - 1)}) |")
        m = est.memory
        act, act_pred = r["peak_bytes"] - r["static_bytes"], m.activations + m.logits
        mem.append(f"| {r['name']} | {r['static_bytes'] / 1e9:.2f} / {(m.params + m.grads) / 1e9:.2f} | {act / 1e9:.2f} | "
                   f"{act_pred / 1e9:.2f} ({m.activations / 1e9:.2f} + {m.logits / 1e9:.2f}) | {_pct(act_pred / act - 1)} |")
    return lines + mem


def attention_section(run: dict, preset: str) -> list[str]:
    """Measured fused-attention speed against :data:`ATTENTION_KERNELS` (FA3-paper fit) per shape."""
    peak = HARDWARE[preset].peak_flops_bf16
    lines = ["## Attention kernels", "",
             "PyTorch SDPA with one backend (FLASH_ATTENTION: FlashAttention-2; CUDNN_ATTENTION) and JAX "
             "`dot_product_attention(implementation='cudnn')`; hidden 2048, batch x sequence = 16,384 (the "
             "FlashAttention-3 paper's Fig. 5-6 setup the shipped kernel tables were fitted to). Backward = "
             "(forward + backward) - forward, FLOPs 2.5 x forward. Error = predicted / measured TFLOP/s - 1.", "",
             "| kernel | head_dim | seq | causal | fwd TFLOP/s | model | bwd TFLOP/s | model |",
             "|---|---|---|---|---|---|---|---|"]
    summary: dict[tuple[str, str], list[float]] = {}
    for r in (run.get("attention_torch") or []) + (run.get("attention_jax") or []):
        if "error" in r:
            lines.append(f"| {r['kernel']} | {r['d']} | {r['s']} | {r['causal']} | refused | | | |")
            continue
        k = ATTENTION_KERNELS[(KERNEL[r["kernel"]], "hopper")]
        ef = k.efficiency(r["d"], r["s"], r["causal"], "fwd") * peak / 1e12 / r["fwd_tflops"] - 1
        eb = k.efficiency(r["d"], r["s"], r["causal"], "bwd") * peak / 1e12 / r["bwd_tflops"] - 1
        summary.setdefault((r["kernel"], "fwd"), []).append(abs(ef))
        summary.setdefault((r["kernel"], "bwd"), []).append(abs(eb))
        lines.append(f"| {r['kernel']} | {r['d']} | {r['s']} | {'yes' if r['causal'] else 'no'} | {r['fwd_tflops']:.0f} | "
                     f"{_pct(ef)} | {r['bwd_tflops']:.0f} | {_pct(eb)} |")
    lines += ["", "| kernel | pass | median \\|error\\| | max |", "|---|---|---|---|"]
    lines += [f"| {k} | {p} | {statistics.median(v):.1%} | {max(v):.0%} |" for (k, p), v in summary.items()]
    return lines


def other_sections(run: dict, preset: str) -> list[str]:
    """HBM copy and the one-device JAX training step against the planner."""
    hw = HARDWARE[preset]
    hbm = run["hbm"]
    ts = run.get("train_step") or {}
    lines = ["## HBM", "",
             f"Device-to-device copy of {hbm['bytes'] / 2**30:.0f} GiB of bf16: {hbm['bytes_per_s'] / 1e12:.2f} TB/s "
             f"(read + write) = {hbm['bytes_per_s'] / hw.hbm_bandwidth:.3f} of the datasheet's "
             f"{hw.hbm_bandwidth / 1e12:.1f} TB/s; the presets' `hbm_efficiency` is {hw.hbm_efficiency} (element-wise "
             "framework kernels run below a pure copy).", ""]
    if "measured_step_s" in ts:
        lines += ["## One-device training step (shardplan's JAX runtime)", "",
                  f"{ts['model']} with {ts['n_layers']} layers ({ts['n_params'] / 1e6:.0f} M parameters, full width and "
                  f"vocabulary), seq {ts['seq_len']}, {ts['global_batch']} sequences in microbatches of "
                  f"{ts['microbatch_size']}, bf16, AdamW; the runtime's attention materializes the scores (naive).", "",
                  "| | step (s) | peak memory (GB) |", "|---|---|---|",
                  f"| measured (median of steps 3-6; allocator peak) | {ts['measured_step_s']:.3f} | "
                  f"{ts['measured_peak_bytes'] / 1e9:.1f} |",
                  f"| planner, `attention=naive` (the runtime's) | {ts['predicted_step_s_naive']:.3f} "
                  f"({ts['predicted_step_s_naive'] / ts['measured_step_s'] - 1:+.0%}) | "
                  f"{ts['predicted_peak_bytes_naive'] / 1e9:.1f} "
                  f"({ts['predicted_peak_bytes_naive'] / ts['measured_peak_bytes'] - 1:+.1%}) |",
                  f"| planner, `attention=flash` | {ts['predicted_step_s_flash']:.3f} | "
                  f"{ts['predicted_peak_bytes_flash'] / 1e9:.1f} |", ""]
        bench = bench_calibrated_step(run, preset)
        if bench is not None:
            step, hw_fit = bench
            lines[-1:] = [f"| planner, `attention=naive`, with the XLA GEMM constants fitted above (what `shardplan "
                          f"bench` writes: `matmul_efficiency` {hw_fit.matmul_efficiency:.3f}, `gemm_fill_steps` "
                          f"{hw_fit.gemm_fill_steps:.2f}, whole waves) | {step:.3f} "
                          f"({step / ts['measured_step_s'] - 1:+.0%}) | - |", "",
                          "The runtime is an XLA program, so its GEMMs are XLA's: with the constants `shardplan bench` "
                          "fits to XLA's GEMMs the step prediction moves from "
                          f"{ts['predicted_step_s_naive'] / ts['measured_step_s'] - 1:+.0%} to "
                          f"{step / ts['measured_step_s'] - 1:+.0%}: the naive attention's batched GEMMs have a 64-wide "
                          "contraction (QK^T) or output (PV), where the fill term costs most. The rest is not broken "
                          "down.", ""]
    return lines


def bench_calibrated_step(run: dict, preset: str):
    """(predicted step seconds of the stored one-device runtime step, hardware) with the GEMM constants fitted to the
    run's XLA GEMMs, as ``shardplan bench`` writes them (``matmul_efficiency`` = fitted asymptote / the JAX runtime
    profile's ``gpu_matmul_scale``, so that the profile's XLA rate is the fitted one; fill steps; Stream-K); None
    without XLA GEMMs or a training step in the run."""
    from shardplan.cost.step import estimate
    from shardplan.loaders import load_model
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import JAX_RUNTIME
    from shardplan.specs.training import TrainingSpec
    ts, rows = run.get("train_step") or {}, run.get("gemm_jax")
    if "measured_step_s" not in ts or not isinstance(rows, list):
        return None
    hw = HARDWARE[preset]
    fit = fit_gemm_constants([(r["m"], r["n"], r["k"], r["seconds"]) for r in rows], hw)
    hw_fit = hw.model_copy(update={"matmul_efficiency": fit.asymptote / JAX_RUNTIME.gpu_matmul_scale,
                                   "gemm_fill_steps": fit.fill_steps, "gemm_stream_k": fit.stream_k})
    model = load_model(ts["model"]).model_copy(update={"n_layers": ts["n_layers"]})
    tr = TrainingSpec(seq_len=ts["seq_len"], global_batch_size=ts["global_batch"], framework=JAX_RUNTIME,
                      attention="naive")
    return estimate(model, hw_fit, tr, ParallelConfig(microbatch_size=ts["microbatch_size"]), 1).step_s, hw_fit


def _shown(path: Path) -> str:
    """``path`` relative to the repository where it is inside it, else as given."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def load_run(path: Path) -> dict:
    """A stored ``device_check.py`` run (a JSON object with an ``environment`` section).

    Raises:
        SystemExit: an unreadable file or one that is not such a run (the message says which).
    """
    try:
        run = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SystemExit(f"device_report: {path}: not a readable device_check.py run ({type(e).__name__}: {e})")
    if not isinstance(run, dict) or not isinstance(run.get("environment"), dict):
        raise SystemExit(f"device_report: {path}: not a device_check.py run (no 'environment' section; the run file is "
                         "device_check.json, not the bench .json / .yaml beside it)")
    return run


def run_text(path: Path) -> list[str]:
    """The generated part of docs/device.md for one stored run (its sections one heading level down).

    Raises:
        SystemExit: as :func:`load_run`, or a section the run lacks or holds malformed (named)."""
    run = load_run(path)
    preset, env = preset_of(run), run["environment"]
    try:
        return _run_text(path, run, preset, env)
    except (KeyError, TypeError, ValueError, ZeroDivisionError, statistics.StatisticsError) as e:
        raise SystemExit(f"device_report: {path}: a section is missing or malformed ({type(e).__name__}: {e})")


def _run_text(path: Path, run: dict, preset: str, env: dict) -> list[str]:
    """:func:`run_text` of a loaded run."""
    head = [f"## Run `{_shown(path)}`: {env.get('nvidia_smi')} (priced with `{preset}`)", "",
            f"Python {env['python']}, PyTorch {env['torch']}, JAX {env['jax']}, Flax {env['flax']}. Section times (s): "
            f"{run.get('section_seconds')}.", ""]
    body = (gemm_section(run, preset) + [""] + fp8_section(run, preset) + [""] + attention_section(run, preset) + [""]
            + other_sections(run, preset) + [""] + hf_section(run, preset))
    return head + [("#" + line if line.startswith("## ") else line) for line in body]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", type=Path, nargs="*", default=DEFAULT_RUNS)
    ap.add_argument("--doc", type=Path, default=None, help="write the generated part into this markdown file")
    args = ap.parse_args()
    paths = [p.resolve() for p in args.runs]
    text = [f"<!-- generated by python benchmarks/device_report.py {' '.join(_shown(p) for p in paths)} -->"]
    for p in paths:
        text += run_text(p)
    text = "\n".join(text)
    if args.doc:
        doc = args.doc.read_text() if args.doc.exists() else ""
        marker = "<!-- generated"
        keep = doc[:doc.index(marker)] if marker in doc else doc
        args.doc.write_text(keep + text + "\n")
    else:
        print(text)

if __name__ == "__main__":
    main()
