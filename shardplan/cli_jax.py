"""CLI commands of the JAX runtime: ``shardplan train`` and ``shardplan shardings``.

:func:`register` attaches them to the main typer app (``shardplan.cli.app``). JAX is imported only
inside the command functions, after ``XLA_FLAGS`` has been given the host device count on CPU, so
``import shardplan`` and the planner commands work without JAX installed.

Run directly with ``python -m shardplan.cli_jax train ...`` (same commands).
"""

# no `from __future__ import annotations`: typer evaluates the locally defined option types

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from shardplan.errors import ConfigError

_HOST_FLAG = "xla_force_host_platform_device_count"


def _accelerator_present() -> bool:
    """True when JAX would pick a GPU/TPU (JAX_PLATFORMS, or an installed CUDA/ROCm/TPU plugin)."""
    plats = os.environ.get("JAX_PLATFORMS", "").lower()
    if plats:
        return any(p in plats for p in ("cuda", "gpu", "tpu", "rocm"))
    return any(importlib.util.find_spec(m) is not None
               for m in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu", "jax_plugins"))


def configure_host_devices(devices: int, num_processes: int | None = None) -> bool:
    """Give the CPU backend ``devices / num_processes`` devices through ``XLA_FLAGS`` before JAX loads.

    Only when JAX is not imported yet, the flag is not already set and no accelerator is present.

    Returns:
        True when the flag was set.

    Raises:
        ConfigError: ``devices`` not divisible by ``num_processes``.
    """
    n_proc = num_processes or 1
    if devices % n_proc:
        raise ConfigError(f"devices={devices} is not divisible by num_processes={n_proc}; every process must hold "
                          f"the same number of devices", field="devices", value=devices)
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" in sys.modules or _HOST_FLAG in flags or _accelerator_present():
        return False
    os.environ["XLA_FLAGS"] = f"{flags} --{_HOST_FLAG}={devices // n_proc}".strip()
    return True


def parse_rule_overrides(items: list[str] | None) -> dict[str, list[str]]:
    """``["mlp=tp", "embed=fsdp,cp", "vocab="]`` -> ``{"mlp": ["tp"], "embed": ["fsdp", "cp"], "vocab": []}``.

    Raises:
        ConfigError: an item without ``=``.
    """
    out: dict[str, list[str]] = {}
    for it in items or []:
        if "=" not in it:
            raise ConfigError(f"--rule {it!r} must look like LOGICAL=AXIS[,AXIS...] (e.g. mlp=tp)", field="rule",
                              value=it)
        k, v = it.split("=", 1)
        out[k.strip()] = [a.strip() for a in v.split(",") if a.strip()]
    return out


def parse_param_overrides(logical: list[str] | None, specs: list[str] | None) -> list[tuple[str, Any]]:
    """``--param-rule 'REGEX=embed,None'`` (logical names; None = replicated dim) and
    ``--param-spec 'REGEX=fsdp+cp,None'`` (mesh axes per dim, ``+`` joins axes) into overrides.

    Raises:
        ConfigError: an item without ``=``.
    """
    from jax.sharding import PartitionSpec as P

    out: list[tuple[str, Any]] = []
    for kind, items in (("rule", logical), ("spec", specs)):
        for it in items or []:
            if "=" not in it:
                raise ConfigError(f"--param-{kind} {it!r} must look like REGEX=DIM,DIM,...", field=f"param_{kind}",
                                  value=it)
            rx, v = it.rsplit("=", 1)
            dims = [d.strip() for d in v.split(",")] if v.strip() else []
            if kind == "rule":
                out.append((rx, tuple(None if d in ("None", "-", "") else d for d in dims)))
            else:
                entries = [None if d in ("None", "-", "") else (tuple(d.split("+")) if "+" in d else d) for d in dims]
                out.append((rx, P(*entries)))
    return out


def register(app: typer.Typer) -> None:
    """Add the ``train`` and ``shardings`` commands to ``app``."""
    from shardplan.cli import (BatchOpt, BatchTokOpt, CpOpt, DpOpt, DpShardOpt, EpOpt, MbsOpt, ModelOpt, PlanOpt,
                               PpOpt, RecOpt, SeqOpt, SpOpt, TpOpt, ZeroOpt, build_inputs, config_errors, console)

    ScaleOpt = Annotated[bool, typer.Option("--scale-down/--no-scale-down",
                                            help="shrink layers/widths for CPU, keeping n_heads/n_kv_heads")]
    DModelOpt = Annotated[int, typer.Option("--scale-d-model", help="d_model after --scale-down")]
    LayersOpt = Annotated[int, typer.Option("--scale-layers", help="layers after --scale-down")]
    RuleOpt = Annotated[Optional[list[str]], typer.Option("--rule", help="override a logical rule: LOGICAL=AXES, "
                                                          "e.g. mlp=tp or embed=fsdp,cp (repeatable)")]
    PRuleOpt = Annotated[Optional[list[str]], typer.Option("--param-rule", help="REGEX=LOGICAL,... logical axes "
                                                           "for matching parameter paths (None = replicated dim)")]
    PSpecOpt = Annotated[Optional[list[str]], typer.Option("--param-spec", help="REGEX=AXES,... raw "
                                                           "PartitionSpec for matching paths (fsdp+cp joins axes)")]
    DevOpt = Annotated[int, typer.Option("--devices", "-n", help="total devices (all processes); on CPU this many "
                                         "host devices are simulated")]

    def _inputs(model: str, devices: int, seq_len: int, global_batch: int | None, global_batch_tokens: int | None,
                plan: Path | None, scale_down: bool, scale_d_model: int, scale_layers: int, **par: Any):
        m, _, tr, pc = build_inputs(model=model, hardware=None, devices=devices, seq_len=seq_len,
                                    global_batch=global_batch, global_batch_tokens=global_batch_tokens, plan=plan,
                                    **par)
        if scale_down:
            from shardplan.jax.model import scale_down as shrink
            m = shrink(m, d_model=scale_d_model, n_layers=scale_layers, min_kv_heads=pc.tp)
        return m, tr, pc

    @app.command()
    @config_errors
    def shardings(model: ModelOpt, devices: DevOpt = 8, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
                  global_batch_tokens: BatchTokOpt = None, dp: DpOpt = None, tp: TpOpt = None, pp: PpOpt = None,
                  cp: CpOpt = None, ep: EpOpt = None, zero_stage: ZeroOpt = None, dp_shard: DpShardOpt = None,
                  sp: SpOpt = None, microbatch_size: MbsOpt = None, recompute: RecOpt = None,
                  plan: PlanOpt = None, scale_down: ScaleOpt = False, scale_d_model: DModelOpt = 64,
                  scale_layers: LayersOpt = 2, rule: RuleOpt = None, param_rule: PRuleOpt = None,
                  param_spec: PSpecOpt = None) -> None:
        """Print the sharding table of a plan: path, shape, logical axes, PartitionSpec, bytes/device.

        Needs no devices: the mesh sizes come from the plan. The global batch defaults to the data
        ranks (one sequence each).
        """
        from rich.table import Table

        from shardplan.parallel import validate
        m, tr, pc = _shardings_inputs(_inputs, model, devices, seq_len, global_batch, global_batch_tokens, plan,
                                      scale_down, scale_d_model, scale_layers,
                                      dict(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero_stage=zero_stage,
                                           dp_shard=dp_shard, sp=sp, microbatch_size=microbatch_size,
                                           recompute=recompute))
        layout = validate(pc, m, tr, devices)
        from shardplan.jax.pipeline import layout_params
        from shardplan.jax.rules import make_rules, param_shardings, sharding_rows
        rules = make_rules(layout, m, parse_rule_overrides(rule), parse_param_overrides(param_rule, param_spec))
        params, logical = layout_params(m, layout)  # pp > 1: blocks stacked under "stages" (pp, L_max, ...)
        leaves = param_shardings(params, logical, rules)
        rows = sharding_rows(leaves, rules.sizes)
        mesh = " ".join(f"{a}={n}" for a, n in rules.sizes.items())
        t = Table(title=f"{m.name}: {rules.strategy} on mesh {mesh}")
        for col in ("path", "shape", "logical axes", "PartitionSpec", "bytes/device", "opt-state spec",
                    "opt bytes/device"):
            t.add_column(col, justify="right" if "bytes" in col else "left", no_wrap=col == "path")
        for r in rows:
            t.add_row(r["path"], "x".join(map(str, r["shape"])), ",".join(str(x) for x in r["logical"]) or "-",
                      r["spec"], f"{r['bytes_per_device']:,}", r["opt_spec"], f"{r['opt_bytes_per_device']:,}")
        t.add_row("[bold]total[/]", "", "", "", f"{sum(r['bytes_per_device'] for r in rows):,}", "",
                  f"{sum(r['opt_bytes_per_device'] for r in rows):,}")
        console.print(t)

    @app.command()
    @config_errors
    def train(model: ModelOpt, devices: DevOpt = 8, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
              global_batch_tokens: BatchTokOpt = None, dp: DpOpt = None, tp: TpOpt = None, pp: PpOpt = None,
              cp: CpOpt = None, ep: EpOpt = None, zero_stage: ZeroOpt = None, dp_shard: DpShardOpt = None,
              sp: SpOpt = None, microbatch_size: MbsOpt = None, recompute: RecOpt = None, plan: PlanOpt = None,
              scale_down: ScaleOpt = False, scale_d_model: DModelOpt = 64, scale_layers: LayersOpt = 2,
              steps: Annotated[int, typer.Option(help="optimizer steps")] = 20,
              lr: Annotated[float, typer.Option("--lr", help="peak AdamW learning rate")] = 3e-3,
              warmup: Annotated[int, typer.Option(help="linear warm-up steps")] = 0,
              seed: Annotated[int, typer.Option(help="init and data seed")] = 0,
              compute_dtype: Annotated[str, typer.Option("--compute-dtype",
                                                         help="bf16 (default; fp32 master params) | fp32")] = "bf16",
              data: Annotated[Optional[list[Path]], typer.Option("--data", help="text files or directories "
                                                                 "(default: Python stdlib sources)")] = None,
              metrics: Annotated[Optional[Path], typer.Option("--metrics", help="write JSON lines here")] = None,
              rule: RuleOpt = None, param_rule: PRuleOpt = None, param_spec: PSpecOpt = None,
              coordinator_address: Annotated[Optional[str], typer.Option(
                  "--coordinator-address", help="host:port of process 0 (or JAX_COORDINATOR_ADDRESS)")] = None,
              num_processes: Annotated[Optional[int], typer.Option(
                  "--num-processes", help="processes in the run (or JAX_NUM_PROCESSES)")] = None,
              process_id: Annotated[Optional[int], typer.Option(
                  "--process-id", help="this process's index (or JAX_PROCESS_ID)")] = None,
              checkpoint_dir: Annotated[Optional[Path], typer.Option(
                  "--checkpoint-dir", help="save Orbax checkpoints here (params, optimizer state, step, "
                  "plan/model JSON)")] = None,
              save_every: Annotated[Optional[int], typer.Option(
                  "--save-every", help="also checkpoint every N steps (default: only after the last step)")] = None,
              resume: Annotated[bool, typer.Option(
                  "--resume", help="continue from the latest checkpoint in --checkpoint-dir, on this run's "
                  "layout (any mesh); --steps is the total step to reach")] = False) -> None:
        """Train the plan's model on byte-level text with the plan's layout (JAX, any device count).

        With --checkpoint-dir the state is saved with Orbax after the last step (and every
        --save-every steps); --resume restores the latest checkpoint into the current layout and
        continues the step counter and the data position until step --steps.
        """
        n_proc = num_processes or (int(os.environ["JAX_NUM_PROCESSES"]) if os.environ.get("JAX_NUM_PROCESSES")
                                   else None)
        import math
        if devices < 1:
            raise ConfigError(f"devices={devices} must be >= 1", field="devices", value=devices)
        if steps < 1:
            raise ConfigError(f"--steps {steps} must be >= 1", field="steps", value=steps)
        if not (math.isfinite(lr) and lr > 0):
            raise ConfigError(f"--lr {lr} must be a positive finite number", field="lr", value=lr)
        if warmup < 0:
            raise ConfigError(f"--warmup {warmup} must be >= 0", field="warmup", value=warmup)
        if n_proc is not None and n_proc < 1:
            raise ConfigError(f"--num-processes {n_proc} must be >= 1", field="num_processes", value=n_proc)
        if metrics is not None:
            if metrics.is_dir() or not metrics.parent.exists():
                raise ConfigError(f"--metrics {metrics}: not a writable file path", field="metrics", value=str(metrics))
        if save_every is not None and save_every < 1:
            raise ConfigError(f"--save-every {save_every} must be >= 1 (omit it to save after the last step only)",
                              field="save_every", value=save_every)
        if (resume or save_every is not None) and checkpoint_dir is None:
            flag = "--resume" if resume else "--save-every"
            raise ConfigError(f"{flag} needs --checkpoint-dir PATH", field="checkpoint_dir", value=None,
                              legal=["a directory path"])
        if checkpoint_dir is not None and checkpoint_dir.exists() and not checkpoint_dir.is_dir():
            raise ConfigError(f"--checkpoint-dir {checkpoint_dir}: exists and is not a directory",
                              field="checkpoint_dir", value=str(checkpoint_dir))
        if resume and not checkpoint_dir.is_dir():
            raise ConfigError(f"--resume: --checkpoint-dir {checkpoint_dir} does not exist, nothing to resume from",
                              field="checkpoint_dir", value=str(checkpoint_dir),
                              legal=["a directory written by `shardplan train --checkpoint-dir`"])
        configure_host_devices(devices, n_proc)
        m, tr, pc = _inputs(model, devices, seq_len, global_batch, global_batch_tokens, plan, scale_down,
                            scale_d_model, scale_layers, dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero_stage=zero_stage,
                            dp_shard=dp_shard, sp=sp, microbatch_size=microbatch_size, recompute=recompute)
        from shardplan.parallel import validate
        layout = validate(pc, m, tr, devices)  # config-time errors before JAX starts

        import jax  # noqa: F401  (after XLA_FLAGS)
        from shardplan.jax.train import TrainConfig, Trainer, initialize_distributed
        from shardplan.jax.train import train as run_train
        from shardplan.jax.mesh import describe
        initialize_distributed(coordinator_address, num_processes, process_id)
        cfg = TrainConfig(steps=steps, learning_rate=lr, warmup_steps=warmup, seed=seed, compute_dtype=compute_dtype,
                          rule_overrides=parse_rule_overrides(rule),
                          param_overrides=parse_param_overrides(param_rule, param_spec))
        main = jax.process_index() == 0
        start = 0
        if resume:  # refuse an empty directory or another model / data setting before compiling
            from shardplan.jax.checkpoint import Checkpointer, check_data, check_model
            reader = Checkpointer(checkpoint_dir)
            try:
                meta = reader.read_meta()
            finally:
                reader.close()
            check_model(meta, m)
            check_data(meta, seed, tr.seq_len, tr.global_batch_size)
            start = int(meta["step"])
            if start >= steps:
                raise ConfigError(f"--steps {steps}: the checkpoint in {checkpoint_dir} is already at step {start}; "
                                  f"--steps is the total step to reach, so pass --steps > {start}", field="steps",
                                  value=steps, legal=[f"> {start}"])
        trainer = Trainer(m, layout, tr, cfg)
        if main:
            console.print(f"[bold]{m.name}[/] ({m.n_params:,} params) | {trainer.rules.strategy} | "
                          f"{describe(trainer.mesh)} | {layout.microbatches} microbatch(es) | "
                          f"compute {compute_dtype}")
            if trainer.pipeline is not None:
                console.print(trainer.pipeline.note)
        ckpt = dict(checkpoint_dir=checkpoint_dir, save_every=save_every, resume=resume, start=start)
        if resume and main:
            console.print(f"resuming from step {start} of {checkpoint_dir} (saved with {meta['strategy']} on "
                          f"{meta['mesh_description']})")
        _train_with_progress(run_train, trainer, m, layout, tr, cfg, data, metrics, main, console, ckpt)


def _shardings_inputs(inputs: Any, model: str, devices: int, seq_len: int, global_batch: int | None,
                      global_batch_tokens: int | None, plan: Path | None, scale_down: bool, scale_d_model: int,
                      scale_layers: int, par: dict[str, Any]) -> Any:
    """Inputs for ``shardings``: without a batch flag the global batch is one sequence per data rank
    (the table does not depend on the batch)."""
    if global_batch is None and global_batch_tokens is None:
        m, tr, pc = inputs(model, devices, seq_len, 1, None, plan, scale_down, scale_d_model, scale_layers, **par)
        dp = pc.dp or max(1, devices // (pc.tp * pc.pp * pc.cp))
        global_batch = dp * pc.microbatch_size * max(1, pc.pp)
    return inputs(model, devices, seq_len, global_batch, global_batch_tokens, plan, scale_down, scale_d_model,
                  scale_layers, **par)


def _train_with_progress(run_train: Any, trainer: Any, m: Any, layout: Any, tr: Any, cfg: Any,
                         data: list[Path] | None, metrics: Path | None, main: bool, console: Any,
                         ckpt: dict[str, Any] | None = None) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    mem = trainer.device_memory()
    mem_txt = (f"{mem['bytes'] / 2**20:,.2f} MiB/device (compiled memory_analysis)"
               if mem["source"] == "memory_analysis"
               else ", ".join(f"dev{k}: {v / 2**20:,.1f} MiB" for k, v in mem["bytes"].items()))
    if main:
        console.print(f"memory: {mem_txt}")
    with Progress(TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[info]}"), console=console, disable=not main) as prog:
        ckpt = dict(ckpt or {})
        start = ckpt.pop("start", 0)
        task = prog.add_task("train", total=cfg.steps, completed=start, info="compiling...")

        def on_step(rec: dict[str, Any]) -> None:
            prog.update(task, advance=1, info=f"loss {rec['loss']:.4f} | {rec['tokens_per_s']:,.0f} tok/s")

        hist = run_train(m, layout, tr, cfg, data=[str(p) for p in data] if data else None,
                         metrics_path=metrics, on_step=on_step, trainer=trainer, **ckpt)
    if main and ckpt.get("checkpoint_dir") is not None:
        console.print(f"checkpoint: step {cfg.steps} saved in {ckpt['checkpoint_dir']}")
    if main and hist:
        t = Table(title="training summary")
        for col in ("steps", "first loss", "last loss", "tokens/s (median)", "memory/device"):
            t.add_column(col, justify="right")
        tps = sorted(h["tokens_per_s"] for h in hist[1:] or hist)
        t.add_row(str(len(hist)), f"{hist[0]['loss']:.4f}", f"{hist[-1]['loss']:.4f}", f"{tps[len(tps) // 2]:,.0f}",
                  mem_txt)
        console.print(t)


if __name__ == "__main__":  # pragma: no cover
    from shardplan.cli import app as _app
    sys.exit(_app())
