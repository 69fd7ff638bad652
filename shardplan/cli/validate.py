"""``shardplan validate``: the planner's predictions beside the program XLA compiles for the plan.

JAX is imported only inside the command, after ``XLA_FLAGS`` has been given the host device count
(:func:`shardplan.cli.runtime.configure_host_devices`), so ``import shardplan.cli`` stays JAX-free.
"""

import json
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from shardplan.cli.common import BatchOpt, BatchTokOpt, JsonOpt, ModelOpt, MoeCapOpt, PlanOpt, SeqOpt, app, \
    config_errors, console, layout_flags, need_jax_extra, negative, print_notes, stages
from shardplan.cli.runtime import (CpAttnOpt, DModelOpt, LayersOpt, PlanDevOpt, ScaleOpt, configure_host_devices,
                                   runtime_devices, runtime_inputs)
from shardplan.errors import ConfigError, NotCovered


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:+.1%}"


def _kib(x: float) -> str:
    return f"{x / 1024:,.1f}"


def _collectives_table(v: Any) -> Table:
    from shardplan.crosscheck.compare import BYTES_TOLERANCE

    mesh = " ".join(f"{a}={n}" for a, n in v.mesh_shape.items())
    t = Table(title=f"{v.model.name}: {v.strategy} on mesh {mesh}, {v.layout.microbatches} microbatch(es), "
                    f"precision {v.training.precision.name} -- collectives per step, KiB sent per device")
    for col in ("op", "axis", "planner n", "planner KiB", "runtime delta KiB", "expected KiB", "compiled n",
                "compiled KiB", "raw HLO n", "raw KiB", "error", "ok", "planner error", "rules / backend mapping"):
        t.add_column(col, justify="left" if col in ("op", "axis", "rules / backend mapping") else "right")
    for r in v.rows:
        err = _pct(r.error) if r.scored else "negligible"
        within = not r.scored or (r.error is not None and abs(r.error) <= BYTES_TOLERANCE)
        ok = "-" if not r.scored else "yes" if within else f"no (±{BYTES_TOLERANCE:.0%})"
        t.add_row(r.op, r.axis, f"{r.planner_count:g}", _kib(r.planner_bytes), _kib(r.delta_bytes),
                  _kib(r.expected_bytes), f"{r.compiled_count:g}", _kib(r.compiled_bytes), f"{r.raw_count:g}",
                  _kib(r.raw_bytes), err, ok, _pct(r.planner_error), ", ".join(r.rules + r.mappings),
                  style="" if within else "red")
    return t


def print_validation(v: Any) -> None:
    """Rich tables of a validation: collectives per kind and axis, memory, runtime deltas, backend notes;
    for a plan the comparison does not cover, one line saying why instead."""
    if v.not_covered:
        console.print(f"[yellow]not covered:[/] {v.not_covered}", highlight=False)
        return
    console.print(_collectives_table(v))
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
    # a pass says "validated" and what that means (new-user pass 56b: a pass never said so, and the columns had no key)
    console.print("columns: planner = the cost model's collectives; runtime delta = where this JAX runtime differs "
                  "from Megatron-LM / PyTorch FSDP (rules above); expected = planner + delta; compiled = the XLA "
                  "program after the backend mapping (raw HLO: before it); error = expected / compiled - 1; planner "
                  "error = planner / compiled - 1", highlight=False)
    console.print(f"compile {v.compile_s:.1f} s; result: " + (
        "[green]within tolerance[/] (validated: every collective's bytes and the memory within the tolerance "
        "column)" if v.ok else "[red]outside tolerance[/]"))


#: the result line of a plan the comparison cannot score (exit code 1: not validated, which is not a pass)
NOT_COVERED = ("not validated: the comparison does not cover this plan (the reason above); the runtime still runs "
               "it (shardplan train)")


DtypeOpt = Annotated[str, typer.Option("--compute-dtype", help="fp32 (default; compared with precision 'fp32') "
                                       "| bf16")]
_DTYPES = {"fp32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16"}


@app.command()
@config_errors
@layout_flags(profile_defaults=False)
def validate(model: ModelOpt, devices: PlanDevOpt = None, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
             global_batch_tokens: BatchTokOpt = None, plan: PlanOpt = None, scale_down: ScaleOpt = False,
             scale_d_model: DModelOpt = 64, scale_layers: LayersOpt = 2, compute_dtype: DtypeOpt = "fp32",
             json_out: JsonOpt = False, moe_capacity_factor: MoeCapOpt = None, cp_attention: CpAttnOpt = "ring",
             layout: dict = None) -> None:
    """Compile the plan's training step (no step is run) and compare every collective and the
    per-device memory with the planner's prediction for the same model, batch and layout.

    The global batch defaults to one sequence per data rank and microbatch, pp microbatches."""
    if compute_dtype not in _DTYPES:
        raise ConfigError(f"compute_dtype={compute_dtype!r} is unknown; legal: fp32, bf16",
                          field="compute_dtype", value=compute_dtype, legal=["fp32", "bf16"])
    need_jax_extra("validate")
    devices = runtime_devices(devices, plan)
    configure_host_devices(devices)  # before anything imports JAX (--scale-down does)
    m, tr, pc = runtime_inputs(model, devices, seq_len, global_batch, global_batch_tokens, plan, layout,
                               (scale_down, scale_d_model, scale_layers), default_batch=True, moe_capacity_factor=moe_capacity_factor)
    # ZeRO-3: the runtime gathers the weights as the plan's zero3_gather says (pp == 1), so the plan
    # is compared as given
    from shardplan.cli.runtime import validate_runtime
    lay = validate_runtime(pc, m, tr, devices, global_batch is None and global_batch_tokens is None)
    print_notes(lay)
    with stages("validate", 2) as step:
        step("loading JAX")
        import jax  # noqa: F401  (after XLA_FLAGS)

        from shardplan.jax.train import TrainConfig
        from shardplan.jax.validate import validate_plan
        step("compiling the training step and reading its collectives")
        try:
            v = validate_plan(m, lay, tr, TrainConfig(compute_dtype=_DTYPES[compute_dtype], cp_attention=cp_attention))
        except NotCovered as err:  # known before compiling: the same negative result as a plan not_covered below
            if json_out:
                print(json.dumps({"result": "not covered", "ok": False, "not_covered": str(err)}, indent=1))
            else:
                console.print(f"[yellow]not covered:[/] {err}", highlight=False)
            raise negative(NOT_COVERED) from None
    if json_out:
        print(json.dumps(v.to_dict(), indent=1, default=str))
    else:
        print_validation(v)
    if v.not_covered:
        raise negative(NOT_COVERED)
    if not v.ok:
        raise negative("the compiled program is outside the planner's tolerance (rows with ok = no)")
