"""``shardplan train``: train the plan's model with the plan's layout (JAX runtime).

JAX is imported only inside the command, after ``XLA_FLAGS`` has been given the host device count
on CPU (:func:`shardplan.cli.runtime.configure_host_devices`).
"""

import contextlib
import math
import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from shardplan.cli.common import check_output_path, BatchOpt, BatchTokOpt, ModelOpt, MoeCapOpt, PlanOpt, SeqOpt, app, config_errors, console, \
    err_console, layout_flags, need_jax_extra, print_notes, runtime_notes
from shardplan.cli.runtime import (CpAttnOpt, PlanDevOpt, runtime_devices, DModelOpt, LayersOpt, PRuleOpt, PSpecOpt, RuleOpt, ScaleOpt,
                                   check_compiled_memory, check_host_memory, configure_host_devices, is_out_of_memory,
                                   parse_param_overrides, parse_rule_overrides, runtime_inputs)
from shardplan.errors import ConfigError, short_repr

StepsOpt = Annotated[int, typer.Option(help="optimizer steps")]
LrOpt = Annotated[float, typer.Option("--lr", help="peak AdamW learning rate")]
WarmupOpt = Annotated[int, typer.Option(help="linear warm-up steps")]
SeedOpt = Annotated[int, typer.Option(help="init and data seed")]


def _short_dtype(value: str) -> str:
    """``--compute-dtype`` by its short name (bfloat16 -> bf16, float32 -> fp32: the record's precision and a resume's
    comparison read it; breaker pass 54b); another value as given (TrainConfig refuses it, naming the legal ones)."""
    return {"bfloat16": "bf16", "float32": "fp32"}.get(value, value)


DtypeOpt = Annotated[str, typer.Option("--compute-dtype", callback=_short_dtype,
                                       help="bf16 (default; fp32 master params) | fp32")]
DataOpt = Annotated[Optional[list[Path]], typer.Option("--data", help="text files or directories "
                                                       "(default: Python stdlib sources)")]
MetricsOpt = Annotated[Optional[Path], typer.Option("--metrics", help="write JSON lines here")]
CoordOpt = Annotated[Optional[str], typer.Option("--coordinator-address",
                                                 help="host:port of process 0 (or JAX_COORDINATOR_ADDRESS)")]
NProcOpt = Annotated[Optional[int], typer.Option("--num-processes", help="processes in the run (or JAX_NUM_PROCESSES)")]
PidOpt = Annotated[Optional[int], typer.Option("--process-id", help="this process's index (or JAX_PROCESS_ID)")]
CkptOpt = Annotated[Optional[Path], typer.Option("--checkpoint-dir", help="save Orbax checkpoints here (params, "
                                                 "optimizer state, step, plan/model JSON)")]
SaveEveryOpt = Annotated[Optional[int], typer.Option("--save-every", help="also checkpoint every N steps (default: "
                                                     "only after the last step)")]
RecordOpt = Annotated[Optional[Path], typer.Option("--record", help="append a run record (JSON Lines, "
                                                  "docs/calibration.md) of this run for `shardplan calibrate`")]
ResumeOpt = Annotated[bool, typer.Option("--resume", help="continue from the latest checkpoint in --checkpoint-dir, "
                                         "on this run's layout (any mesh); --steps is the total step to reach")]


def _check_record(record: Path | None, metrics: Path | None, plan: Path | None, steps: int) -> None:
    """Refuse a ``--record`` that cannot hold the run's record, before the run: the --metrics or --plan file, a file
    of something other than run records (:func:`shardplan.records.check_records_target`), or one step (the record's
    step time is the median after the compiling step).

    Raises:
        ConfigError: naming the option, the value and what is legal.
    """
    check_output_path("--record", record, inputs={"--metrics": metrics, "--plan": plan})
    if record is None:
        return
    from shardplan.records import check_records_target
    check_records_target("--record", record)
    if steps < 2:
        raise ConfigError(f"--record with --steps {steps}: the record's step time is the median after the first "
                          "(compiling) step, so a run of one step has none; legal: --steps 2 or more",
                          field="steps", value=steps, legal=["2 or more"])


def _check_args(steps: int, lr: float, warmup: int, n_proc: int | None, metrics: Path | None,
                save_every: int | None, checkpoint_dir: Path | None, resume: bool) -> None:
    """Reject bad ``train`` options before anything is loaded.

    Raises:
        ConfigError: naming the option, the value and what is legal.
    """
    if not 1 <= steps <= 10**9:
        raise ConfigError(f"--steps {short_repr(steps)}; legal: 1 to 1,000,000,000", field="steps", value=steps)
    if not (math.isfinite(lr) and lr > 0):
        raise ConfigError(f"--lr {lr} must be a positive finite number", field="lr", value=lr)
    if not 0 <= warmup <= 10**9:
        raise ConfigError(f"--warmup {short_repr(warmup)}; legal: 0 to 1,000,000,000", field="warmup", value=warmup)
    if n_proc is not None and not 1 <= n_proc <= 2**20:
        raise ConfigError(f"--num-processes {short_repr(n_proc)}; legal: 1 to 1,048,576", field="num_processes", value=n_proc)
    check_output_path("--metrics", metrics)
    if save_every is not None and save_every < 1:
        raise ConfigError(f"--save-every {save_every} must be >= 1 (omit it to save after the last step only)",
                          field="save_every", value=save_every)
    if (resume or save_every is not None) and checkpoint_dir is None:
        flag = "--resume" if resume else "--save-every"
        raise ConfigError(f"{flag} needs --checkpoint-dir PATH", field="checkpoint_dir", value=None,
                          legal=["a directory path"])
    if checkpoint_dir is not None and str(checkpoint_dir) in ("-", "", "."):
        raise ConfigError(f"--checkpoint-dir {str(checkpoint_dir)!r}: not a folder to save checkpoints in; legal: a "
                          "folder path (made if missing, in an existing folder)", field="checkpoint_dir",
                          value=str(checkpoint_dir))
    if checkpoint_dir is not None and not checkpoint_dir.exists() and not checkpoint_dir.parent.is_dir():
        # the checkpointer makes the folder itself, not the folders above it (as every other output path)
        raise ConfigError(f"--checkpoint-dir {checkpoint_dir}: folder {checkpoint_dir.parent} does not exist; legal: a "
                          "folder in an existing folder", field="checkpoint_dir", value=str(checkpoint_dir))
    if checkpoint_dir is not None and checkpoint_dir.exists() and not checkpoint_dir.is_dir():
        raise ConfigError(f"--checkpoint-dir {checkpoint_dir}: exists and is not a directory",
                          field="checkpoint_dir", value=str(checkpoint_dir))
    if resume and not checkpoint_dir.is_dir():
        raise ConfigError(f"--resume: --checkpoint-dir {checkpoint_dir} does not exist, nothing to resume from",
                          field="checkpoint_dir", value=str(checkpoint_dir),
                          legal=["a directory written by `shardplan train --checkpoint-dir`"])


def _num_processes(flag: int | None) -> int | None:
    """``--num-processes`` or ``JAX_NUM_PROCESSES`` (None: neither); 0 is kept, so that it is refused.

    Raises:
        ConfigError: ``JAX_NUM_PROCESSES`` is not a whole number.
    """
    if flag is not None:
        return flag
    env = os.environ.get("JAX_NUM_PROCESSES")
    if not env:
        return None
    try:
        return int(env)
    except ValueError:
        raise ConfigError(f"JAX_NUM_PROCESSES={short_repr(env)}; legal: a whole number >= 1",
                          field="num_processes", value=env) from None


def _resume_point(checkpoint_dir: Path, m: Any, seed: int, tr: Any, steps: int,
                  data: list[Path] | None = None) -> tuple[int, dict[str, Any]]:
    """Step and metadata of the latest checkpoint; refuses an empty directory or another model / data
    setting before anything is compiled.

    Raises:
        ConfigError: no checkpoint, another model or data setting, or the checkpoint already at ``steps``.
    """
    from shardplan.jax.checkpoint import Checkpointer, check_data, check_data_sources, check_model
    reader = Checkpointer(checkpoint_dir)
    try:
        meta = reader.read_meta()
    finally:
        reader.close()
    check_model(meta, m)
    check_data(meta, seed, tr.seq_len, tr.global_batch_size)
    check_data_sources(meta, [str(p) for p in data] if data else None)
    start = int(meta["step"])
    if start >= steps:
        raise ConfigError(f"--steps {steps}: the checkpoint in {checkpoint_dir} is already at step {start}; "
                          f"--steps is the total step to reach, so pass --steps > {start}", field="steps",
                          value=steps, legal=[f"> {start}"])
    return start, meta


@app.command()
@config_errors
@layout_flags(profile_defaults=False)
def train(model: ModelOpt, devices: PlanDevOpt = None, seq_len: SeqOpt = 64, global_batch: BatchOpt = None,
          global_batch_tokens: BatchTokOpt = None, plan: PlanOpt = None, scale_down: ScaleOpt = False,
          scale_d_model: DModelOpt = 64, scale_layers: LayersOpt = 2, steps: StepsOpt = 20, lr: LrOpt = 3e-3,
          warmup: WarmupOpt = 0, seed: SeedOpt = 0, compute_dtype: DtypeOpt = "bf16", data: DataOpt = None,
          metrics: MetricsOpt = None, rule: RuleOpt = None, param_rule: PRuleOpt = None, param_spec: PSpecOpt = None,
          coordinator_address: CoordOpt = None, num_processes: NProcOpt = None, process_id: PidOpt = None,
          checkpoint_dir: CkptOpt = None, save_every: SaveEveryOpt = None, resume: ResumeOpt = False,
          record: RecordOpt = None, moe_capacity_factor: MoeCapOpt = None, cp_attention: CpAttnOpt = "ring",
          layout: dict = None) -> None:
    """Train the plan's model on byte-level text with the plan's layout (JAX, any device count).

    With --checkpoint-dir the state is saved with Orbax after the last step (and every
    --save-every steps); --resume restores the latest checkpoint into the current layout and
    continues the step counter and the data position until step --steps.
    """
    n_proc = _num_processes(num_processes)
    devices = runtime_devices(devices, plan)
    if not 0 <= seed < 2**32:
        raise ConfigError(f"--seed {short_repr(seed)}; legal: 0 to {2**32 - 1:,}", field="seed", value=seed)
    _check_args(steps, lr, warmup, n_proc, metrics, save_every, checkpoint_dir, resume)
    _check_record(record, metrics, plan, steps)
    _warmup_note(warmup, steps, lr)
    if process_id is not None and not 0 <= process_id < (n_proc or 1):
        raise ConfigError(f"--process-id {short_repr(process_id)}; legal: 0 to {(n_proc or 1) - 1} (--num-processes "
                          f"{n_proc or 1})", field="process_id", value=process_id)
    need_jax_extra("train")
    configure_host_devices(devices, n_proc)
    m, tr, pc = runtime_inputs(model, devices, seq_len, global_batch, global_batch_tokens, plan, layout,
                               (scale_down, scale_d_model, scale_layers), default_batch="note",
                               moe_capacity_factor=moe_capacity_factor)
    from shardplan.cli.runtime import validate_runtime
    # config-time errors before JAX starts
    layout_ = validate_runtime(pc, m, tr, devices, global_batch is None and global_batch_tokens is None)
    check_host_memory(m, devices, layout_, tr)
    _plan_setup_note(plan, m, layout_, tr)

    import jax  # noqa: F401  (after XLA_FLAGS)

    from shardplan.jax.train import TrainConfig, Trainer, initialize_distributed
    initialize_distributed(coordinator_address, num_processes, process_id)
    cfg = TrainConfig(steps=steps, learning_rate=lr, warmup_steps=warmup, seed=seed, compute_dtype=compute_dtype,
                      rule_overrides=parse_rule_overrides(rule),
                      param_overrides=parse_param_overrides(param_rule, param_spec), cp_attention=cp_attention)
    _before_compile(data, tr, cfg)
    main = jax.process_index() == 0
    start, meta = _resume_point(checkpoint_dir, m, seed, tr, steps, data) if resume else (0, None)
    with console.status("building the mesh, sharding the model and compiling the training step (the first build "
                        "of a layout takes seconds)") if main else contextlib.nullcontext():
        trainer = Trainer(m, layout_, tr, cfg)
    if main:
        _print_header(trainer, m, layout_, compute_dtype)
        if resume:
            _resume_lines(checkpoint_dir, start, meta, cfg)
    ckpt = dict(checkpoint_dir=checkpoint_dir, save_every=save_every, resume=resume, start=start)
    hist, mem = _checked_run(trainer, m, layout_, tr, cfg, data, metrics, main, ckpt)
    _diverged(hist, record if main else None)
    if main and record is not None and hist:
        _write_record(record, m, layout_, tr, devices, hist, mem, compute_dtype)


def _warmup_note(warmup: int, steps: int, lr: float) -> None:
    """A note on stderr when --warmup >= --steps: legal (a short smoke run), but the learning rate never reaches
    --lr."""
    if warmup >= steps:
        err_console.print(f"[yellow]note:[/] --warmup {warmup} >= --steps {steps}: the learning rate is still warming "
                          f"up at the last step and never reaches --lr {lr}", highlight=False, soft_wrap=True)


def _diverged(hist: list, record: Path | None) -> None:
    """Exit 1 (a negative result) when the loss of a step is not finite: the run diverged (breaker pass 55: ``--lr
    1e30`` printed ``loss nan``, exited 0 and appended a record with status ok); no record is written for it.

    Raises:
        typer.Exit: code 1 when a step's loss is NaN or infinite."""
    bad = next((r for r in hist if not math.isfinite(float(r["loss"]))), None)
    if bad is None:
        return
    err_console.print(f"[red]diverged:[/] the loss is {bad['loss']} from step {bad['step']} (a learning rate too large "
                      "for the model, e.g. --lr; or an fp16 overflow)" + (f"; no record appended to {record}" if record
                                                                           else ""), highlight=False, soft_wrap=True)
    raise typer.Exit(1)


def _checked_run(trainer: Any, m: Any, layout: Any, tr: Any, cfg: Any, data: list[Path] | None, metrics: Path | None,
                 main: bool, ckpt: dict[str, Any]) -> tuple[list, dict]:
    """:func:`_train_with_progress` after the compiled step's memory is checked against the host's
    (:func:`~shardplan.cli.runtime.check_compiled_memory`), with XLA's allocation failure as a message.

    Raises:
        ConfigError: the compiled step does not fit the host, or the step ran out of device memory.
    """
    import jax
    compiled = trainer.device_memory()
    if compiled["source"] == "memory_analysis":
        check_compiled_memory(compiled["bytes"], jax.local_device_count(), tr.seq_len)
    try:
        return _train_with_progress(trainer, m, layout, tr, cfg, data, metrics, main, ckpt)
    except Exception as e:  # XLA's allocation failure: a message, not a traceback
        if not is_out_of_memory(e):
            raise
        raise ConfigError(f"the training step ran out of device memory ({str(e).splitlines()[0][:200]}); legal: a "
                          "smaller --seq-len, --global-batch or --microbatch-size, more sharding (--zero-stage, --tp, "
                          "--pp), --recompute full, or --scale-down", field="memory", value=tr.seq_len) from None


def _plan_setup_note(plan: Path | None, m: Any, layout: Any, tr: Any) -> None:
    """With ``--plan``: a note naming what differs from the setup the plan file was made for (model, devices,
    sequence length, global batch; :func:`shardplan.loaders.read_plan_context`) and a dp the run derives anew (the
    file's layout is kept, the flags give the rest), as ``--plan``'s help says."""
    if plan is None:
        return
    from shardplan.inputs import plan_file_values
    from shardplan.loaders import read_plan_context
    made = read_plan_context(plan)
    here = {"model": m.name, "devices": layout.n_devices, "seq_len": tr.seq_len,
            "global_batch_size": tr.global_batch_size}
    differ = [f"{k} {made[k]} (here {here[k]})" for k in here if k in made and str(made[k]) != str(here[k])]
    dp = plan_file_values(plan).get("dp")
    if dp is not None and dp != layout.parallel.dp:
        differ.append(f"dp {dp} (here {layout.parallel.dp})")
    if differ:
        err_console.print(f"[yellow]note:[/] --plan {plan} was made for {', '.join(differ)}: the run takes the file's "
                          "layout (less the layout flags given) and the rest from the flags", highlight=False,
                          soft_wrap=True)


def _before_compile(data: list[Path] | None, tr: Any, cfg: Any) -> None:
    """Before the compile: route the runtime's log to ``note:`` lines (:func:`runtime_notes`), say what XLA may print
    about custom parameter layouts, and refuse a ``--data`` corpus too small for one global batch (it was refused
    after the compile).

    Raises:
        ConfigError: from :class:`shardplan.jax.data.PackedBatches` (fewer sequences than the global batch)."""
    runtime_notes()
    if cfg.param_overrides:
        err_console.print("[yellow]note:[/] a --param-rule / --param-spec layout that differs from the activations' "
                          "makes XLA reshard the weight where it is used; XLA may print 'Involuntary full "
                          "rematerialization' for it (the run is correct, the resharding costs memory and time)",
                          highlight=False, soft_wrap=True)
    if data:
        from shardplan.jax.data import PackedBatches, load_tokens
        PackedBatches(load_tokens(data), tr.seq_len, tr.global_batch_size)


def _resume_lines(checkpoint_dir: Path, start: int, meta: dict[str, Any], cfg: Any) -> None:
    """What ``train --resume`` prints before its first step: where it resumes from, and :func:`_schedule_note`."""
    console.print(f"resuming from step {start} of {checkpoint_dir} (saved with {meta['strategy']}, "
                  f"{meta['mesh_description']})")
    _schedule_note(meta, cfg)


def _schedule_note(meta: dict[str, Any], cfg: Any) -> None:
    """A note when a resumed run's learning-rate schedule (``--steps``, ``--warmup``, ``--lr``) is not the one the
    checkpoint's run was started with: its first steps followed the old schedule, the rest follows the new one, so
    the run matches neither an uninterrupted run of the old nor of the new settings (a new user saw steps 11-20 of a
    resumed ``--steps 20`` run differ from an uninterrupted one by up to 7.8% with no message)."""
    saved = meta.get("optimizer") or {}
    changed = [f"{flag} {saved[key]:g} -> {getattr(cfg, key):g}" for flag, key in
               (("--steps", "steps"), ("--warmup", "warmup_steps"), ("--lr", "learning_rate"))
               if key in saved and saved[key] != getattr(cfg, key)]
    if changed:
        err_console.print(f"[yellow]note:[/] the learning-rate schedule changes ({', '.join(changed)}): steps 1-"
                          f"{meta['step']} followed the saved run's, the rest follows this one's, so the losses differ "
                          "from an uninterrupted run (docs/runtime.md, checkpoints: learning-rate schedule)",
                          highlight=False, soft_wrap=True)
    was = _short_dtype(saved["compute_dtype"]) if saved.get("compute_dtype") else None  # bfloat16 = bf16
    if was not in (None, _short_dtype(cfg.compute_dtype)):  # breaker 54: a silent change of numerics
        err_console.print(f"[yellow]note:[/] --compute-dtype {was} -> {cfg.compute_dtype}: steps 1-"
                          f"{meta['step']} ran in the saved run's dtype, the rest runs in this one's (the fp32 master "
                          "weights carry over; the losses differ from an uninterrupted run of either)",
                          highlight=False, soft_wrap=True)


def _print_header(trainer: Any, m: Any, layout: Any, compute_dtype: str) -> None:
    """The lines ``train`` prints before its first step: model, strategy, mesh, microbatches and compute dtype; how
    cp attention runs (:func:`_cp_attention_line`); the layout's notes; the pipeline schedule's note."""
    from shardplan.jax.mesh import describe
    console.print(f"[bold]{m.name}[/] ({m.n_params:,} params) | {trainer.rules.strategy} | "
                  f"{describe(trainer.mesh)} | {layout.microbatches} microbatch(es) | compute {compute_dtype}")
    cp_line = _cp_attention_line(m, layout.parallel, trainer.rules.cp_attention)
    if cp_line:
        console.print(cp_line)
    print_notes(layout)
    if trainer.pipeline is not None:
        console.print(trainer.pipeline.note)


def _cp_attention_line(m: Any, p: Any, mode: str) -> str | None:
    """The line saying how the attention core runs over cp (None at cp = 1): the K/V ring, K/V gathered, or
    DeepSpeed-Ulysses with the KV-head copies it makes when a tp rank holds fewer KV heads than cp
    (:func:`shardplan.jax.ring.ulysses_kv_copies`)."""
    if p.cp == 1:
        return None
    if mode != "a2a":
        return f"context parallelism: cp={p.cp}, attention as {'a K/V ring' if mode == 'ring' else 'K/V gathered'}"
    per_rank = m.kv_heads // p.tp
    copies = p.cp // per_rank if 0 < per_rank < p.cp else 1
    kv = f"; each of a tp rank's {per_rank} KV heads copied {copies}x to one per cp rank" if copies > 1 else ""
    return (f"context parallelism: cp={p.cp}, attention as DeepSpeed-Ulysses (AllToAll to head shards over tp x "
            f"cp){kv}")


def median_step_s(hist: list[dict[str, Any]], tokens: int) -> float:
    """Median step time (s) after the first, compiling step (all steps when there is one): ``tokens`` per step over
    each step's tokens/s. The figure the run record stores and the training summary prints."""
    import statistics
    return statistics.median(tokens / h["tokens_per_s"] for h in (hist[1:] or hist))


def _write_record(path: Path, m: Any, layout: Any, tr: Any, devices: int, hist: list[dict[str, Any]],
                  mem: dict[str, Any], compute_dtype: str) -> None:
    """Append the run's record: median step time after the first (compiling) step, the compiled
    (or measured) peak memory per device, the device kind as hardware."""
    import jax

    from shardplan.jax.train import as_executed
    from shardplan.records import RunRecord, write_records
    tokens = tr.seq_len * tr.global_batch_size
    step_s = median_step_s(hist, tokens)
    peak = mem["bytes"] if mem["source"] == "memory_analysis" else max(mem["bytes"].values())
    rec = RunRecord(model=m, hardware=jax.devices()[0].device_kind, devices=devices, seq_len=tr.seq_len,
                    global_batch_size=tr.global_batch_size,
                    # every layout field given: the layout the runtime ran, whole (records.write_records writes the
                    # fields a record was given), without the fields it does not execute (an optimizer offload)
                    parallel=as_executed(layout.parallel),
                    precision="fp32-params" if compute_dtype == "bf16" else "fp32", framework="jax-runtime",
                    step_time_s=step_s, peak_memory_bytes=float(peak) if peak and peak >= 2**20 else None,
                    source=f"shardplan train ({jax.default_backend()}, {len(hist)} steps)")
    write_records(path, [rec], append=True)
    console.print(f"record appended to {path}")


def _train_with_progress(trainer: Any, m: Any, layout: Any, tr: Any, cfg: Any, data: list[Path] | None,
                         metrics: Path | None, main: bool, ckpt: dict[str, Any]) -> tuple[list, dict]:
    """Run :func:`shardplan.jax.train.train` under a rich progress bar (process 0 only), print the
    memory per device and a summary table; return the step history and the memory report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from shardplan.jax.train import train as run_train
    mem = trainer.device_memory()
    mem_txt = (f"{mem['bytes'] / 2**20:,.2f} MiB/device (compiled memory_analysis)"
               if mem["source"] == "memory_analysis"
               else ", ".join(f"dev{k}: {v / 2**20:,.1f} MiB" for k, v in mem["bytes"].items()))
    if main:
        console.print(f"memory: {mem_txt}")
    with Progress(TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[info]}"), console=console, disable=not main) as prog:
        ckpt = dict(ckpt)
        start = ckpt.pop("start", 0)
        task = prog.add_task("train", total=cfg.steps, completed=start, info="initialising and compiling (first step)...")

        every = max(1, cfg.steps // 10)

        def on_step(rec: dict[str, Any]) -> None:
            info = f"loss {rec['loss']:.4f} | {rec['tokens_per_s']:,.0f} tok/s"
            prog.update(task, advance=1, info=info)
            if main and not console.is_terminal and (rec["step"] % every == 0 or rec["step"] == cfg.steps):
                console.print(f"step {rec['step']}/{cfg.steps}: {info}", highlight=False)  # a log, not a bar

        hist = run_train(m, layout, tr, cfg, data=[str(p) for p in data] if data else None,
                         metrics_path=metrics, on_step=on_step, trainer=trainer, **ckpt)
    if main and ckpt.get("checkpoint_dir") is not None:
        console.print(f"checkpoint: step {cfg.steps} saved in {ckpt['checkpoint_dir']}")
    if main and hist:
        t = Table(title="training summary")
        for col in ("steps", "first loss", "last loss", "tokens/s (median)", "memory/device"):
            t.add_column(col, justify="right")
        tokens = tr.global_batch_size * tr.seq_len
        tps = tokens / median_step_s(hist, tokens)  # the record's figure (a new user saw the two 4.6% apart)
        t.add_row(str(len(hist)), f"{hist[0]['loss']:.4f}", f"{hist[-1]['loss']:.4f}", f"{tps:,.0f}", mem_txt)
        console.print(t)
    return hist, mem
