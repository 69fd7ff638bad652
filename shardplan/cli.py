"""Command-line interface: ``shardplan estimate | plan | guide | models | hardware | ...``.

Built on typer (arguments) and rich (tables). Every command turns a
:class:`~shardplan.errors.ConfigError` into a one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.console import Console
from rich.table import Table

from shardplan.errors import ConfigError
from shardplan.units import fmt_seconds

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Plan, run and validate the parallel layout of transformer training.")
# piped output (CI logs, files) gets wide tables instead of rich's 80-column default
console = Console(width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True)


def config_errors(fn: Callable) -> Callable:
    """Decorator: print ConfigError (and pydantic ValidationError) as one line and exit with code 2."""
    from pydantic import ValidationError

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ConfigError as e:
            err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except ValidationError as e:
            first = e.errors()[0]
            inner = (first.get("ctx") or {}).get("error")
            if isinstance(inner, ConfigError):
                msg = str(inner)
            else:
                loc = ".".join(str(x) for x in first["loc"])
                msg = f"{loc}: {first['msg']} (got {first.get('input')!r})"
            err_console.print(f"[bold red]error:[/] {msg}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except OSError as e:  # unwritable output path, full disk, ...
            where = f" {e.filename}" if e.filename else ""
            err_console.print(f"[bold red]error:[/] cannot access{where}: {e.strerror or e}", highlight=False,
                              soft_wrap=True)
            raise typer.Exit(2) from None
    return wrapper


# ---- shared options -------------------------------------------------------------------------------
ModelOpt = Annotated[str, typer.Option("--model", "-m", help="preset name, HF config.json path, or YAML/JSON spec")]
HardwareOpt = Annotated[str, typer.Option("--hardware", "-H", help="preset name or YAML/JSON spec file")]
DevicesOpt = Annotated[int, typer.Option("--devices", "-n", help="number of accelerators")]
SeqOpt = Annotated[int, typer.Option("--seq-len", "-s", help="tokens per sequence")]
BatchOpt = Annotated[Optional[int], typer.Option("--global-batch", "-b", help="sequences per optimizer step")]
BatchTokOpt = Annotated[Optional[int], typer.Option("--global-batch-tokens", help="tokens per optimizer step")]
PrecisionOpt = Annotated[str, typer.Option(help="bf16-mixed | bf16-mixed-fp32-grads | fp32-params | fp8-mixed | fp32")]
ScaleUpOpt = Annotated[Optional[int], typer.Option("--scale-up-size",
                                                   help="devices per NVLink domain / TPU slice (overrides preset)")]
AttnOpt = Annotated[str, typer.Option(help="flash | naive attention kernel")]
DpOpt = Annotated[Optional[int], typer.Option(help="data-parallel degree (default: devices / (tp*pp*cp))")]
TpOpt = Annotated[Optional[int], typer.Option(help="tensor-parallel degree [default: 1]")]
PpOpt = Annotated[Optional[int], typer.Option(help="pipeline-parallel degree [default: 1]")]
CpOpt = Annotated[Optional[int], typer.Option(help="context-parallel degree [default: 1]")]
EpOpt = Annotated[Optional[int], typer.Option(help="expert-parallel degree (MoE) [default: 1]")]
ZeroOpt = Annotated[Optional[int], typer.Option("--zero-stage", help="0 DDP, 1 optimizer, 2 +grads, 3 +params (FSDP) [default: 0]")]
DpShardOpt = Annotated[Optional[int], typer.Option("--dp-shard", help="ZeRO shard group size (HSDP); default dp")]
SpOpt = Annotated[Optional[bool], typer.Option("--sp/--no-sp", help="Megatron sequence parallelism (needs tp > 1) [default: off]")]
MbsOpt = Annotated[Optional[int], typer.Option("--microbatch-size", help="sequences per microbatch per data-parallel rank [default: 1]")]
SchedOpt = Annotated[Optional[str], typer.Option(help="gpipe | 1f1b | interleaved | zero-bubble [default: 1f1b]")]
VsOpt = Annotated[Optional[int], typer.Option("--virtual-stages", help="model chunks per pipeline rank (interleaved) [default: 1]")]
RecOpt = Annotated[Optional[str], typer.Option(help="none | selective | full [default: none]")]
PlanOpt = Annotated[Optional[Path], typer.Option("--plan", help="plan JSON (from `shardplan plan --json`)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]


def read_plan_file(path: Path) -> dict:
    """The ``parallel`` object of a plan JSON file: ``{"parallel": {...}}``, ``{"plans": [{...}]}``
    (first plan) or a bare ParallelConfig mapping.

    Raises:
        ConfigError: unreadable file, invalid JSON, or no parallel object.
    """
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigError(f"cannot read --plan {path}: {e.strerror}", field="plan", value=str(path)) from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"--plan {path} is not valid JSON: {e}", field="plan", value=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"--plan {path} is not UTF-8 text", field="plan", value=str(path)) from None
    if isinstance(data, dict) and "plans" in data:
        if not isinstance(data["plans"], list) or not all(isinstance(x, dict) for x in data["plans"]):
            raise ConfigError(f"--plan {path}: 'plans' must be a list of plan objects", field="plan", value=str(path))
        if not data["plans"]:
            raise ConfigError(f"--plan {path} has an empty 'plans' list", field="plan", value=str(path))
        data = data["plans"][0]
    if isinstance(data, dict) and "parallel" in data:
        data = data["parallel"]
    if not isinstance(data, dict):
        raise ConfigError(f"--plan {path} holds no parallel object", field="plan", value=str(path))
    return data


def build_inputs(*, model: str, hardware: str | None, devices: int, seq_len: int, global_batch: int | None,
                 global_batch_tokens: int | None, precision: str = "bf16-mixed", attention: str = "flash",
                 scale_up_size: int | None = None, plan: Path | None = None, **parallel: Any):
    """Resolve CLI flags into ``(ModelSpec, HardwareSpec | None, TrainingSpec, ParallelConfig)``.

    ``parallel`` holds the ParallelConfig fields given on the command line; with ``plan`` the plan
    file's values are used and command-line degrees that differ from their defaults override them.

    Raises:
        ConfigError: on any invalid input (the message names the field and legal values).
    """
    from shardplan.loaders import load_hardware, load_model
    from shardplan.parallel import ParallelConfig
    from shardplan.specs.training import TrainingSpec, precision_policy

    m = load_model(model)
    hw = load_hardware(hardware, scale_up_size=scale_up_size) if hardware else None
    if (global_batch is None) == (global_batch_tokens is None):
        raise ConfigError("give exactly one of --global-batch (sequences) or --global-batch-tokens",
                          field="global_batch", value=global_batch)
    if attention not in ("flash", "naive"):
        raise ConfigError(f"attention={attention!r}; legal: flash, naive", field="attention", value=attention)
    common = dict(precision=precision_policy(precision), attention=attention)
    if global_batch_tokens is not None:
        tr = TrainingSpec.from_tokens(seq_len, global_batch_tokens, **common)
    else:
        tr = TrainingSpec(seq_len=seq_len, global_batch_size=global_batch, **common)
    given = {k: v for k, v in parallel.items() if v is not None}  # None = flag not given
    if plan is not None:
        base = read_plan_file(plan)
        base.update(given)  # flags given on the command line override the plan file
        given = base
    for key in ("schedule", "recompute"):
        legal = {"schedule": ["gpipe", "1f1b", "interleaved", "zero-bubble"],
                 "recompute": ["none", "selective", "full"]}[key]
        if key in given and given[key] not in legal:
            raise ConfigError(f"{key}={given[key]!r} is unknown; legal: {', '.join(legal)}", field=key,
                              value=given[key], legal=legal)
    if devices < 1:
        raise ConfigError(f"devices={devices} must be >= 1", field="devices", value=devices)
    return m, hw, tr, ParallelConfig(**given)


#: the flags shared by every command that evaluates one layout (estimate, report)
LAYOUT_FLAGS = ("model", "hardware", "devices", "seq_len", "global_batch", "global_batch_tokens", "precision",
                "attention", "scale_up_size", "plan", "dp", "tp", "pp", "cp", "ep", "zero_stage", "dp_shard", "sp",
                "microbatch_size", "schedule", "virtual_stages", "recompute")


def estimate_from_flags(flags: dict):
    """Run :func:`shardplan.cost.step.estimate` on a command's flag values (``locals()``).

    Returns the Estimate. Raises ConfigError as :func:`build_inputs` and the estimate do.
    """
    from shardplan.cost.step import estimate as run_estimate
    m, hw, tr, pc = build_inputs(**{k: flags[k] for k in LAYOUT_FLAGS})
    return run_estimate(m, hw, tr, pc, flags["devices"])


def _gib(x: float) -> str:
    return f"{x / 2**30:,.2f}"


_fmt_s = fmt_seconds


def print_estimate(e) -> None:
    """Rich tables: summary, memory, time, collectives, thresholds."""
    d = e.to_dict()
    p = e.parallel
    head = Table(title=f"{e.model.name} on {e.layout.n_devices} x {e.hardware.name}: {p.short()}", show_header=False)
    head.add_row("parameters", f"{e.model.n_params:,}")
    head.add_row("tokens / step", f"{e.training.global_batch_tokens:,} ({e.layout.microbatches} microbatches)")
    head.add_row("step time", _fmt_s(e.step_s))
    head.add_row("tokens / s", f"{e.tokens_per_s:,.0f} ({e.tokens_per_s / e.layout.n_devices:,.0f} per device)")
    head.add_row("MFU / HFU", f"{e.mfu:.1%} / {e.hfu:.1%}")
    head.add_row("bound by", e.bound)
    head.add_row("fits", ("[green]yes[/]" if e.fits else "[red]no[/]") +
                 f" ({_gib(e.memory.total)} of {_gib(e.hardware.hbm_bytes)} GiB)")
    console.print(head)
    mem = Table(title="memory per device (most loaded stage)")
    mem.add_column("part")
    mem.add_column("GiB", justify="right")
    for k, v in d["memory_bytes"].items():
        if k in ("stage",) or (k == "host_offload" and not v):
            continue
        mem.add_row(k, _gib(v))
    tt = Table(title="step time")
    tt.add_column("part")
    tt.add_column("time", justify="right")
    tt.add_column("share", justify="right")
    for k in ("matmul", "elementwise", "recompute", "exposed_comm", "bubble", "optimizer"):
        v = d["time_s"][k]
        tt.add_row(k, _fmt_s(v), f"{v / e.step_s:.1%}")
    tt.add_row("[bold]step[/]", _fmt_s(e.step_s), "100%")
    console.print(mem, tt)
    if e.collectives:
        ct = Table(title="collectives per step (per device)")
        for col in ("op", "axis", "purpose", "group", "level", "calls", "GiB sent", "time", "exposed"):
            ct.add_column(col, justify="right" if col in ("calls", "GiB sent", "time", "exposed", "group") else "left")
        for c in e.collectives:
            ct.add_row(c.op, c.axis, c.purpose, str(c.group_size), c.level, f"{c.count:,.0f}",
                       _gib(c.bytes_per_device), _fmt_s(c.time_s), _fmt_s(c.exposed_s))
        console.print(ct)
    th = e.thresholds
    group = p.dp * p.cp
    dp_txt = (f"data-parallel group of {group} on {th['dp_level']}: {th['tokens_per_dp_rank']:,.0f} tokens per rank vs "
              f"critical {th['critical_tokens_per_dp_rank']:,.0f} "
              f"({'compute' if th['dp_compute_bound'] else 'bandwidth'}-bound)") if group > 1 else "no data parallelism"
    tp_txt = (f"largest compute-bound tp ~{th['max_compute_bound_tp']:.1f}" if th['max_compute_bound_tp'] >= 1
              else "tp is bandwidth-bound at any degree for this ffn_dim")
    console.print(f"roofline: {dp_txt}; {tp_txt}; HBM ridge {th['hbm_critical_intensity']:.0f} FLOPs/byte")


@app.command()
@config_errors
def estimate(model: ModelOpt, hardware: HardwareOpt, devices: DevicesOpt, seq_len: SeqOpt,
             global_batch: BatchOpt = None, global_batch_tokens: BatchTokOpt = None,
             dp: DpOpt = None, tp: TpOpt = None, pp: PpOpt = None, cp: CpOpt = None, ep: EpOpt = None,
             zero_stage: ZeroOpt = None, dp_shard: DpShardOpt = None, sp: SpOpt = None,
             microbatch_size: MbsOpt = None, schedule: SchedOpt = None, virtual_stages: VsOpt = None,
             recompute: RecOpt = None, precision: PrecisionOpt = "bf16-mixed", attention: AttnOpt = "flash",
             scale_up_size: ScaleUpOpt = None, plan: PlanOpt = None, json_out: JsonOpt = False) -> None:
    """Predict memory, step time, MFU and the bottleneck of one layout."""
    e = estimate_from_flags(locals())
    if json_out:
        print(json.dumps(e.to_dict(), indent=1))
    else:
        print_estimate(e)


@app.command()
def models(json_out: JsonOpt = False) -> None:
    """List the model presets with their exact parameter counts."""
    from shardplan.presets.models import MODELS
    if json_out:
        print(json.dumps({k: v.summary() for k, v in MODELS.items()}, indent=1))
        return
    t = Table(title="model presets")
    for c in ("name", "params", "layers", "d_model", "heads", "kv", "ffn", "vocab", "mlp", "experts", "source"):
        t.add_column(c, justify="right" if c not in ("name", "mlp", "source") else "left")
    for k, m in MODELS.items():
        t.add_row(k, f"{m.n_params:,}", str(m.n_layers), str(m.d_model), str(m.n_heads), str(m.kv_heads),
                  str(m.ffn_dim), str(m.vocab_size), m.mlp, f"{m.n_experts}/top{m.top_k}" if m.is_moe else "-",
                  m.source)
    console.print(t)


@app.command()
def hardware(json_out: JsonOpt = False) -> None:
    """List the hardware presets (dense FLOP/s, HBM, scale-up and scale-out bandwidth); --json adds sources."""
    from shardplan.presets.hardware import HARDWARE
    if json_out:
        print(json.dumps({k: v.model_dump() for k, v in HARDWARE.items()}, indent=1))
        return
    t = Table(title="hardware presets (bandwidths per device; GPU one-way, TPU ICI per link bidirectional)")
    for c in ("name", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GiB", "HBM TB/s", "scale-up", "scale-up GB/s",
              "scale-out GB/s", "matmul eff."):
        t.add_column(c, justify="left" if c == "name" else "right")
    for k, h in HARDWARE.items():
        t.add_row(k, f"{h.peak_flops_bf16 / 1e12:,.0f}",
                  f"{h.peak_flops_fp8 / 1e12:,.0f}" if h.peak_flops_fp8 else "-",
                  f"{h.hbm_bytes / 2**30:,.0f}", f"{h.hbm_bandwidth / 1e12:.2f}", str(h.scale_up_size),
                  f"{h.scale_up_bandwidth / 1e9:,.0f}", f"{h.scale_out_bandwidth / 1e9:,.2f}",
                  f"{h.matmul_efficiency:.2f}")
    console.print(t)


def _register_optional() -> None:
    """Attach the commands that live in other modules (search, JAX runtime, validation, web)."""
    import importlib
    for mod in ("shardplan.cli_plan", "shardplan.cli_jax", "shardplan.cli_validate", "shardplan.cli_web"):
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name == mod:
                continue
            raise
        module.register(app)


if __name__ == "__main__":  # pragma: no cover - `python -m shardplan.cli`: use the package module
    from shardplan.cli import app as _app
    sys.exit(_app())
else:
    _register_optional()
