"""``shardplan models`` and ``shardplan hardware``: the presets."""

import json

from rich.table import Table

from shardplan.cli.common import JsonOpt, app, config_errors, console


@app.command()
@config_errors
def models(json_out: JsonOpt = False) -> None:
    """List the model presets with their exact parameter counts."""
    from shardplan.presets.models import MODELS
    if json_out:
        print(json.dumps({k: v.summary() for k, v in MODELS.items()}, indent=1))
        return
    t = Table(title="model presets")
    # mlp: ModelSpec.mlp, gated (three matrices: SwiGLU, GeGLU) or not (two: GeLU, squared ReLU), what the cost reads
    # window: local attention (ModelSpec.sliding_window; 'chunk' for chunked attention) on how many of the layers
    # (new-user pass 57: mistral-7b and mistral-7b-v0.1 showed the same row, one with v0.1's 4096 window)
    for c in ("name", "params", "layers", "d_model", "heads", "kv", "ffn", "vocab", "mlp", "experts", "window",
              "source"):
        t.add_column(c, justify="right" if c not in ("name", "mlp", "source") else "left")
    for k, m in MODELS.items():
        t.add_row(k, f"{m.n_params:,}", str(m.n_layers), str(m.d_model), str(m.n_heads), str(m.kv_heads),
                  str(m.ffn_dim), str(m.vocab_size), "gated" if m.mlp == "swiglu" else "2-matrix",
                  f"{m.n_experts}/top{m.top_k}" if m.is_moe else "-", _window(m), m.source)
    console.print(t)


def _window(m) -> str:
    """The ``models`` table's window cell: '-' without local attention, else the window (or chunk) in tokens and,
    when not every layer is local, on how many layers (``ModelSpec.n_sliding_layers``)."""
    if m.sliding_window is None:
        return "-"
    kind = "chunk " if m.local_attention == "chunked" else ""
    share = "" if m.n_sliding_layers == m.n_layers else f" ({m.n_sliding_layers}/{m.n_layers})"
    return f"{kind}{m.sliding_window}{share}"


@app.command()
@config_errors
def hardware(json_out: JsonOpt = False) -> None:
    """List the hardware presets (dense FLOP/s, HBM, scale-up, scale-out and host-link bandwidth, host memory and
    the devices it serves); --json adds sources."""
    from shardplan.presets.hardware import HARDWARE
    if json_out:
        print(json.dumps({k: v.model_dump() for k, v in HARDWARE.items()}, indent=1))
        return
    t = Table(title="hardware presets (bandwidths per device; GPU one-way, TPU ICI per link bidirectional)")
    for c in ("name", "16-bit TFLOP/s", "fp8 TFLOP/s", "fp4 TFLOP/s", "HBM GiB", "HBM TB/s", "scale-up", "scale-up GB/s",
              "scale-out GB/s (Gb/s)", "host GB/s", "host GiB (devices)", "matmul eff."):
        t.add_column(c, justify="left" if c == "name" else "right")
    # GPUs first, then TPUs, each by 16-bit peak (bf16; fp16 on V100, which has no bf16; the presets' definition order
    # mixes them)
    for k, h in sorted(HARDWARE.items(), key=lambda kv: (kv[1].kind == "tpu", kv[1].peak_flops_bf16, kv[0])):
        sixteen = f"{h.peak_flops_bf16 / 1e12:,.0f}" + ("" if h.bf16_tensor_cores else " (fp16 only)")
        t.add_row(k, sixteen,
                  f"{h.peak_flops_fp8 / 1e12:,.0f}" if h.peak_flops_fp8 else "-",
                  f"{h.peak_flops_fp4 / 1e12:,.0f}" if h.peak_flops_fp4 else "-",
                  f"{h.hbm_bytes / 2**30:,.0f}", f"{h.hbm_bandwidth / 1e12:.2f}", str(h.scale_up_size),
                  f"{h.scale_up_bandwidth / 1e9:,.0f}",
                  f"{h.scale_out_bandwidth / 1e9:,.2f} ({h.scale_out_bandwidth * 8 / 1e9:,.0f})",
                  f"{h.host_bandwidth / 1e9:,.0f}" if h.host_bandwidth else "-",
                  f"{h.host_memory_bytes / 2**30:,.0f} ({h.host_devices})" if h.host_memory_bytes else "-",
                  f"{h.matmul_efficiency:.2f}")
    console.print(t)
    from shardplan.calibration import CLUSTERS_DIR
    clusters = sorted(f.stem for f in CLUSTERS_DIR.glob("*.yaml"))
    console.print(f"cluster files (a preset with a real cluster's network and hosts, --hardware PATH): "
                  f"{', '.join(clusters)} in {CLUSTERS_DIR}", highlight=False, soft_wrap=True)
