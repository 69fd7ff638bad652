"""``shardplan validate``: the planner's predictions beside the program XLA compiles for the plan.

JAX is imported only inside the command, after ``XLA_FLAGS`` has been given the host device count
(:func:`shardplan.cli_jax.configure_host_devices`), so ``import shardplan.cli`` stays JAX-free.
"""

# no `from __future__ import annotations`: typer evaluates the locally defined option types

import json
from typing import Annotated, Any, Optional

import typer

from shardplan.errors import ConfigError


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:+.1%}"


def _kib(x: float) -> str:
    return f"{x / 1024:,.1f}"


def print_validation(v: Any, console: Any) -> None:
    """Rich tables: collectives per kind and axis, memory, runtime deltas and backend notes."""
    from rich.table import Table

    from shardplan.jax.validate import BYTES_TOLERANCE

    mesh = " ".join(f"{a}={n}" for a, n in v.mesh_shape.items())
    t = Table(title=f"{v.model.name}: {v.strategy} on mesh {mesh}, {v.layout.microbatches} microbatch(es), "
                    f"precision {v.training.precision.name} -- collectives per step, KiB sent per device")
    for col in ("op", "axis", "planner n", "planner KiB", "runtime delta KiB", "expected KiB", "compiled n",
                "compiled KiB", "raw HLO n", "raw KiB", "error", "planner error", "rules / backend mapping"):
        t.add_column(col, justify="left" if col in ("op", "axis", "rules / backend mapping") else "right")
    for r in v.rows:
        err = _pct(r.error) if r.scored else "negligible"
        style = "" if not r.scored or (r.error is not None and abs(r.error) <= BYTES_TOLERANCE) else "red"
        t.add_row(r.op, r.axis, f"{r.planner_count:g}", _kib(r.planner_bytes), _kib(r.delta_bytes),
                  _kib(r.expected_bytes), f"{r.compiled_count:g}", _kib(r.compiled_bytes), f"{r.raw_count:g}",
                  _kib(r.raw_bytes), err, _pct(r.planner_error), ", ".join(r.rules + r.mappings), style=style)
    console.print(t)
    mt = Table(title="memory per device (bytes)")
    for col in ("component", "predicted", "compiled", "error", "tolerance", "ok", "compiled side"):
        mt.add_column(col, justify="right" if col in ("predicted", "compiled", "error") else "left")
    for m in v.memory:
        mt.add_row(m.name, f"{m.predicted:,.0f}", f"{m.compiled:,.0f}", _pct(m.error), m.tolerance,
                   "[green]yes[/]" if m.within else "[red]no[/]", m.note)
    console.print(mt)
    if v.deltas:
        dt = Table(title="runtime model: where this runtime differs from Megatron-LM / PyTorch FSDP")
        for col in ("rule", "op", "axis", "calls", "KiB", "why"):
            dt.add_column(col)
        for d in v.deltas:
            dt.add_row(d.rule, d.op, d.axis, f"{d.count:+g}", f"{d.bytes_per_device / 1024:+,.1f}", d.why)
        console.print(dt)
    for n in v.notes:
        console.print(f"[dim]backend:[/] {n}", highlight=False)
    console.print(f"compile {v.compile_s:.1f} s; result: " + ("[green]within tolerance[/]" if v.ok
                                                              else "[red]outside tolerance[/]"))


def register(app: typer.Typer) -> None:
    """Add the ``validate`` command to ``app``."""
    from shardplan.cli import (BatchOpt, BatchTokOpt, CpOpt, DpOpt, DpShardOpt, EpOpt, JsonOpt, MbsOpt, ModelOpt,
                               PlanOpt, PpOpt, RecOpt, SeqOpt, SpOpt, TpOpt, ZeroOpt, build_inputs, config_errors,
                               console)

    ScaleOpt = Annotated[bool, typer.Option("--scale-down/--no-scale-down",
                                            help="shrink layers/widths for CPU, keeping n_heads/n_kv_heads")]
    DModelOpt = Annotated[int, typer.Option("--scale-d-model", help="d_model after --scale-down")]
    LayersOpt = Annotated[int, typer.Option("--scale-layers", help="layers after --scale-down")]
    DevOpt = Annotated[int, typer.Option("--devices", "-n", help="devices; on CPU this many host devices are "
                                         "simulated")]

    @app.command()
    @config_errors
    def validate(model: ModelOpt, devices: DevOpt = 8, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
                 global_batch_tokens: BatchTokOpt = None, dp: DpOpt = None, tp: TpOpt = 1, pp: PpOpt = 1,
                 cp: CpOpt = 1, ep: EpOpt = 1, zero_stage: ZeroOpt = 0, dp_shard: DpShardOpt = None,
                 sp: SpOpt = False, microbatch_size: MbsOpt = 1, recompute: RecOpt = "none",
                 plan: PlanOpt = None, scale_down: ScaleOpt = False, scale_d_model: DModelOpt = 64,
                 scale_layers: LayersOpt = 2,
                 compute_dtype: Annotated[str, typer.Option("--compute-dtype", help="fp32 (default; compared "
                                                            "with precision 'fp32') | bf16")] = "fp32",
                 json_out: JsonOpt = False) -> None:
        """Compile the plan's training step (no step is run) and compare every collective and the
        per-device memory with the planner's prediction for the same model, batch and layout."""
        from shardplan.cli_jax import configure_host_devices

        if devices < 1:
            raise ConfigError(f"devices={devices} must be >= 1", field="devices", value=devices)
        if compute_dtype not in ("fp32", "float32", "bf16", "bfloat16"):
            raise ConfigError(f"compute_dtype={compute_dtype!r} is unknown; legal: fp32, bf16",
                              field="compute_dtype", value=compute_dtype, legal=["fp32", "bf16"])
        if global_batch is None and global_batch_tokens is None:
            d = dp or max(1, devices // (tp * pp * cp))
            global_batch = d * microbatch_size
        m, _, tr, pc = build_inputs(model=model, hardware=None, devices=devices, seq_len=seq_len,
                                    global_batch=global_batch, global_batch_tokens=global_batch_tokens, plan=plan,
                                    dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero_stage=zero_stage, dp_shard=dp_shard,
                                    sp=sp, microbatch_size=microbatch_size, recompute=recompute)
        if scale_down:
            from shardplan.jax.model import scale_down as shrink
            m = shrink(m, d_model=scale_d_model, n_layers=scale_layers, min_kv_heads=pc.tp)
        from shardplan.parallel import validate as validate_layout
        layout = validate_layout(pc, m, tr, devices)
        configure_host_devices(devices)
        import jax  # noqa: F401  (after XLA_FLAGS)

        from shardplan.jax.train import TrainConfig
        from shardplan.jax.validate import validate_plan
        cfg = TrainConfig(compute_dtype="float32" if compute_dtype in ("fp32", "float32") else "bfloat16")
        v = validate_plan(m, layout, tr, cfg)
        if json_out:
            print(json.dumps(v.to_dict(), indent=1, default=str))
        else:
            print_validation(v, console)


__all__ = ["print_validation", "register"]
