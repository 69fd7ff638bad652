"""``shardplan bench``: microbenchmarks of the devices JAX sees, written as a cluster YAML.

JAX is imported only inside the command, after ``XLA_FLAGS`` has been given the host device count
on CPU (:func:`shardplan.cli.runtime.configure_host_devices`).
"""

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
import yaml
from rich.progress import Progress
from rich.table import Table

from shardplan.cli.common import HardwareOpt, app, check_output_path, config_errors, console, need_jax_extra
from shardplan.cli.runtime import DevOpt, configure_host_devices

SmokeOpt = Annotated[bool, typer.Option("--smoke", help="tiny sizes: exercises the code path in seconds "
                                        "(CPU, tests); numbers meaningless")]
YamlOut = Annotated[Optional[Path], typer.Option("--output", "-o", help="write a cluster YAML (base + measured fields)")]
JsonOut = Annotated[Optional[Path], typer.Option("--json", help="write every measurement as JSON")]


def _plan(smoke: bool) -> dict:
    """Sizes of each benchmark (bytes, GEMM shapes, attention shape)."""
    if smoke:
        return {"gemm": [(64, 64, 64), (128, 64, 128)], "hbm": 1 << 20, "attention": (1, 64, 2, 32),
                "sizes": [1 << 12, 1 << 16]}
    # long-K GEMMs (the asymptote), short K (the per-tile fill: a 1B model's row-parallel layers at tp 4-8),
    # few tiles (partial waves: Stream-K or not), small N (column-parallel shards)
    return {"gemm": [(8192, 8192, 8192), (16384, 8192, 8192), (8192, 4096, 14336), (8192, 28672, 4096),
                     (8192, 2048, 256), (8192, 2048, 512), (8192, 2048, 1024), (8192, 4096, 2048),
                     (2048, 1536, 8192), (4096, 768, 8192), (8192, 384, 2048), (8192, 1024, 8192)],
            "hbm": 4 << 30, "attention": (1, 8192, 32, 128), "sizes": [1 << p for p in range(10, 31, 4)]}


@app.command()
@config_errors
def bench(hardware: HardwareOpt = "h100-sxm", devices: DevOpt = 8, smoke: SmokeOpt = False,
          output: YamlOut = None, json_out: JsonOut = None) -> None:
    """Measure GEMM, HBM, attention and collective bandwidth on the devices JAX sees; compare with
    the preset and write a cluster YAML that every command takes via --hardware."""
    need_jax_extra("bench")
    check_output_path("-o/--output", output)  # before the measurements, which take minutes on an accelerator
    check_output_path("--json", json_out)
    configure_host_devices(devices)
    import jax

    from shardplan.jax import bench as B
    from shardplan.loaders import load_hardware

    hw = load_hardware(hardware)
    n = min(devices, jax.device_count()) if jax.default_backend() == "cpu" else jax.device_count()
    if jax.default_backend() == "cpu" and not smoke:  # the accelerator-sized grid on host devices runs for minutes
        from shardplan.cli.common import err_console
        err_console.print("[yellow]note:[/] JAX sees only CPU devices: the full grid (GEMMs of 8,192 and wider, messages up "
                          "to 1 GiB) takes many minutes here and measures the host, not the accelerator the preset "
                          "describes; --smoke runs a small grid in seconds", highlight=False, soft_wrap=True)
    sizes = _plan(smoke)
    ops = ["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv"]
    groups = B.group_sizes(n)
    results: list = []
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("benchmarking", total=len(sizes["gemm"]) + 2 + len(ops) * len(groups) * len(sizes["sizes"]))
        for r in B.gemm(sizes["gemm"], hw):
            results.append(r)
            bar.advance(task)
        results.append(B.hbm(sizes["hbm"], hw))
        bar.advance(task)
        results.append(B.attention(*sizes["attention"], hw))
        bar.advance(task)
        for op in ops:
            for g in groups:
                for s in sizes["sizes"]:
                    results.append(B.collective(op, g, s))
                    bar.advance(task)
    _print(results, hw.name, jax.default_backend())
    fields = B.fitted_fields(results, hw, n, jax.default_backend())
    if output:
        # a cluster file's own fields are kept; a --smoke file says in its name and sources that it measured nothing
        doc = bench_document(hardware, hw, fields, smoke)
        if smoke:
            doc["sources"]["smoke"] = ("shardplan bench --smoke: tiny sizes that exercise the code path; the fields "
                                       "above are not measurements of the device")
        output.write_text(yaml.safe_dump(doc, sort_keys=False))
        console.print(f"wrote {output} (use it as --hardware {output})")
    if json_out:
        json_out.write_text(json.dumps({"backend": jax.default_backend(), "devices": n, "preset": hw.name,
                                        "measurements": B.as_dicts(results)}, indent=1))


def bench_document(hardware: str, hw, fields: dict, smoke: bool) -> dict:
    """The hardware YAML ``bench -o`` writes: the source's own document (:func:`shardplan.loaders.hardware_document`:
    a cluster file's NIC kept) with the measured ``fields`` over it. A ``measured_busbw`` table is merged per
    collective and node count (the node counts this bench did not measure keep the source's rows, to which its
    ``scale_out_latency`` was fitted), and the source file's ``framework:`` stays (its efficiencies were fitted under
    that profile; without it every command would price with megatron: +49% on usp-h100-efa; breaker pass 54)."""
    from shardplan.loaders import hardware_document, hardware_framework
    doc = hardware_document(hardware, hw, f"{hw.name}-{'smoke-not-a-measurement' if smoke else 'measured'}")
    old_table, old_bytes = doc.get("measured_busbw") or {}, doc.get("measured_busbw_bytes")
    doc.update({k: v for k, v in fields.items() if k not in ("sources", "measured_busbw")})
    doc["sources"].update(fields.get("sources") or {})
    if fields.get("measured_busbw") is not None:
        same_size = old_bytes is None or old_bytes == fields.get("measured_busbw_bytes")
        # the table has one message size (measured_busbw_bytes): rows measured at another size cannot stay under it
        # (breaker pass 54b: 256 MiB rows stamped with a 64 KiB bench priced collectives 23% faster)
        keep = old_table if same_size else {}
        doc["measured_busbw"] = {op: {**(keep.get(op) or {}), **rows}
                                 for op, rows in {**{o: {} for o in keep}, **fields["measured_busbw"]}.items()}
        if old_table and not same_size:
            doc["sources"]["measured_busbw"] = (
                f"{doc['sources'].get('measured_busbw', '')} The source file's rows (measured at {old_bytes:,} "
                f"bytes) are left out: this bench measured at {fields.get('measured_busbw_bytes'):,} bytes, and one "
                "table has one message size").strip()
    framework = hardware_framework(hardware) if hardware else None
    if framework is not None:
        doc["framework"] = framework
    return doc


def _print(results: list, preset: str, backend: str) -> None:
    """Rich table: each measurement, its achieved rate, and its fraction of the preset's peak."""
    t = Table(title=f"shardplan bench on {backend} (preset {preset})")
    for col in ("kind", "shape", "time", "achieved", "of preset peak", "planner predicts"):
        t.add_column(col, justify="right" if col != "kind" else "left")
    for r in results:
        unit = "FLOP/s" if r.kind in ("gemm", "attention") else "B/s"
        t.add_row(r.kind, " ".join(f"{k}={v}" for k, v in r.shape.items()), f"{r.seconds * 1e3:.3f} ms",
                  f"{r.achieved:.3g} {unit}", f"{r.fraction:.1%}" if r.fraction else "",
                  f"{r.predicted_fraction:.1%}" if r.predicted_fraction else "")
    console.print(t)
