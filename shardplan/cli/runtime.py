"""What the JAX-runtime commands (``train``, ``shardings``, ``validate``) share: the host device count
for the CPU backend, the scale-down options, their inputs, and the rule/spec overrides.

JAX is never imported at module level: ``XLA_FLAGS`` must be set before it loads, and ``import
shardplan.cli`` stays JAX-free.
"""

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from shardplan.errors import ConfigError

_HOST_FLAG = "xla_force_host_platform_device_count"
#: simulated CPU devices per process at most (XLA's host platform; more take minutes to start)
MAX_HOST_DEVICES = 1024

ScaleOpt = Annotated[bool, typer.Option("--scale-down/--no-scale-down",
                                        help="shrink the model for CPU devices: layers, d_model, heads (at most 8, "
                                             "the n_heads / n_kv_heads ratio kept), vocabulary (256) and routed "
                                             "experts (at most 4, top-k scaled to keep the routed share, at least 1 "
                                             "and fewer than the experts); the architecture (MLP, norms, QK-norm, "
                                             "windows, softcaps, MoE mix) is kept")]
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
PlanDevOpt = Annotated[Optional[int], typer.Option("--devices", "-n", help="total devices (all processes); on CPU "
                                                  "this many host devices are simulated (default: the --plan file's "
                                                  "device count, else 8)")]


def runtime_devices(devices: int | None, plan: Path | None) -> int:
    """The device count of a runtime command: ``--devices`` where given, else the one the ``--plan`` file records
    (:func:`shardplan.loaders.read_plan_context`, with a note: a 16-device plan runs on 16, as ``estimate`` reads it),
    else 8 (the simulated CPU devices of a laptop run)."""
    if devices is not None:
        return devices
    if plan is not None:
        from shardplan.loaders import read_plan_context
        made = read_plan_context(plan).get("devices")
        if isinstance(made, int) and made >= 1:
            from shardplan.cli.common import err_console
            err_console.print(f"[yellow]note:[/] --devices {made} from --plan {plan} (give --devices to override it)",
                              highlight=False, soft_wrap=True)
            return made
    return 8


CpAttnOpt = Annotated[str, typer.Option("--cp-attention", help="attention with cp > 1: ring (K/V blocks passed "
                                        "around the cp ring, zig-zag sequence) | allgather (K/V all-gathered); a plan "
                                        "with --cp-comm a2a runs DeepSpeed-Ulysses (AllToAlls) whatever this says")]


def _accelerator_present() -> bool:
    """True when JAX would pick a GPU/TPU (JAX_PLATFORMS, or an installed CUDA/ROCm/TPU plugin)."""
    plats = os.environ.get("JAX_PLATFORMS", "").lower()
    if plats:
        return any(p in plats for p in ("cuda", "gpu", "tpu", "rocm"))
    return any(importlib.util.find_spec(m) is not None
               for m in ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "libtpu", "jax_plugins"))


def configure_host_devices(devices: int, num_processes: int | None = None) -> bool:
    """Give the CPU backend ``devices / num_processes`` devices through ``XLA_FLAGS`` before JAX loads (and, unless
    the environment names one, JAX's persistent compilation cache at ``~/.cache/shardplan/jax``).

    Only when JAX is not imported yet, the flag is not already set and no accelerator is present.

    Returns:
        True when the flag was set.

    Raises:
        ConfigError: ``devices`` < 1 or not divisible by ``num_processes``.
    """
    from shardplan import limits
    limits.check_range("devices", devices, 1, limits.MAX_DEVICES)
    n_proc = num_processes or 1
    if devices % n_proc:
        raise ConfigError(f"devices={devices} is not divisible by num_processes={n_proc}; every process must hold "
                          f"the same number of devices", field="devices", value=devices)
    flags = os.environ.get("XLA_FLAGS", "")
    if "jax" not in sys.modules:
        # JAX's persistent compilation cache (read when JAX loads): a layout compiled once loads in a fraction of its
        # compile time the next run; JAX_COMPILATION_CACHE_DIR set by the user (or to "" for none) wins
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(Path.home() / ".cache" / "shardplan" / "jax"))
    if "jax" in sys.modules or _HOST_FLAG in flags or _accelerator_present():
        return False
    if devices // n_proc > MAX_HOST_DEVICES:
        raise ConfigError(f"devices={devices}: {devices // n_proc:,} simulated CPU devices per process; legal: at most "
                          f"{MAX_HOST_DEVICES:,} (run on accelerators, or split over --num-processes)", field="devices",
                          value=devices)
    os.environ["XLA_FLAGS"] = f"{flags} --{_HOST_FLAG}={devices // n_proc}".strip()
    return True


def check_host_memory(model: Any, devices: int, layout: Any = None, training: Any = None) -> None:
    """Refuse a CPU run that cannot fit in this host's memory, before anything compiles: the weights, gradients and
    Adam state take at least 16 bytes per parameter in all (ZeRO paper, Sec. 3.1), however they are sharded over the
    simulated devices; with the validated ``layout`` and ``training``, the planner's allocated bytes per device
    (:func:`shardplan.cost.memory.memory_estimate`, activations included) times the simulated devices, which all
    live in the host's memory. Nothing is checked when an accelerator is present.

    Raises:
        ConfigError: with the memory needed, the host's, and the ``--scale-down`` flags that fit.
    """
    if _accelerator_present():
        return
    need = model.n_params * 16
    if layout is not None and training is not None:
        from shardplan.cost.memory import memory_estimate
        need = max(need, memory_estimate(model, training, layout).allocated * devices)
    host = host_memory_bytes()
    if host is None:
        return
    if need > host:
        gpus = int(-(-need // (80 * 2**30)))
        raise ConfigError(f"{model.name} ({model.n_params:,} parameters) needs about {need / 2**30:,.0f} GiB (model state "
                          f"and activations) on the {devices} simulated CPU devices, but this host has "
                          f"{host / 2**30:,.0f} GiB; add "
                          f"--scale-down (e.g. --scale-down --scale-d-model 64 --scale-layers 2) or run on at least "
                          f"{gpus:,} accelerators of 80 GiB", field="model", value=model.name)


#: the files a Linux container's memory limit is read from (cgroup v2, then v1)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def host_memory_bytes() -> int | None:
    """The memory this process may use (bytes): the host's physical memory, lowered to a container's cgroup limit
    and to the address-space limit (``ulimit -v``, RLIMIT_AS) where they are set (breaker pass 54b: under an 8 GB
    ulimit an 11 GiB step passed the check and XLA aborted after 107 s); None when the host's memory is unknown."""
    import resource
    try:
        limits = [os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")]
    except (ValueError, OSError, AttributeError):
        return None
    for path in CGROUP_LIMITS:
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            limits.append(int(text))
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
        limits.append(soft)
    return min(limits)


def check_compiled_memory(peak_bytes: float, local_devices: int, seq_len: int) -> None:
    """Refuse a CPU run whose compiled step needs more than the host's memory, before the first step runs: the
    compiled per-device peak (XLA ``memory_analysis``, activations as the JAX runtime computes them: its attention
    materializes the ``seq_len x seq_len`` scores, which the planner's flash-attention estimate in
    :func:`check_host_memory` does not count) times the simulated devices, which all live in the host's memory.
    Nothing is checked when an accelerator is present or the host's memory is unknown.

    Raises:
        ConfigError: with the memory the compiled step needs, the host's, and the flags that shrink it.
    """
    if _accelerator_present() or not peak_bytes:
        return
    host = host_memory_bytes()
    if host is None:
        return
    need = peak_bytes * max(1, local_devices)
    if need > host:
        raise ConfigError(f"the compiled training step needs {peak_bytes / 2**30:,.1f} GiB per device x {local_devices} "
                          f"simulated CPU devices = {need / 2**30:,.0f} GiB, but this process may use "
                          f"{host / 2**30:,.0f} GiB (the runtime's attention keeps seq_len^2 scores: "
                          f"seq_len={seq_len:,}); legal: a smaller --seq-len or --global-batch, more pipeline / tensor "
                          "sharding, or --scale-down",
                          field="seq_len", value=seq_len)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is XLA's allocation failure (``RESOURCE_EXHAUSTED`` from the JAX runtime)."""
    return type(error).__name__ in ("JaxRuntimeError", "XlaRuntimeError") and "RESOURCE_EXHAUSTED" in str(error)


def check_runtime_layout(pc, from_flags: frozenset[str] | None = None) -> None:
    """Refuse the layout fields the JAX runtime does not run before any pricing (the planner's own messages would
    name the maxtext profile the runtime is priced with, and a ``--framework`` option these commands lack). The
    message says to drop the flag, or, for a field a plan file set (not in ``from_flags``, the fields given as
    flags; None: all were), that the plan file sets it.

    Raises:
        ConfigError: ``schedule='dualpipe'`` (legal: gpipe, 1f1b, interleaved, zero-bubble), ``recompute_layers``
            (legal none), ``offload_activation_layers`` (legal 0), ``pipeline_flushes`` (legal 1) or
            ``recompute_modules``, ``remat_saved`` or ``offload_modules`` (legal none), ``offload_params`` (legal
            false).
    """
    if pc.schedule == "dualpipe" and pc.pp > 1:
        raise ConfigError("schedule='dualpipe' is not implemented by shardplan's JAX runtime (DeepSeek-V3's "
                          "bidirectional pipeline is priced by estimate / plan only); legal schedule: gpipe, 1f1b, "
                          "interleaved, zero-bubble", field="schedule", value="dualpipe",
                          legal=["gpipe", "1f1b", "interleaved", "zero-bubble"])
    fields = {"offload_activation_layers": (pc.offload_activation_layers, 0),
              "pipeline_flushes": (pc.pipeline_flushes, 1), "recompute_modules": (pc.recompute_modules, None),
              "recompute_layers": (pc.recompute_layers, None), "remat_saved": (pc.remat_saved, None),
              "offload_modules": (pc.offload_modules, None), "offload_params": (pc.offload_params, False)}
    for name, (value, default) in fields.items():
        if value != default:
            shown = ",".join(value) if isinstance(value, tuple) else value
            flag = name.replace("_", "-")
            fix = (f"drop --{flag}" if from_flags is None or name in from_flags else
                   "the plan file sets it: " + (f"give --no-{flag}, " if default is False else "edit the file, ")
                   + "or plan with --framework jax-runtime")
            raise ConfigError(f"{name}={shown} is not implemented by shardplan's JAX runtime; legal {name}: "
                              f"{default if default is not None else 'none'} ({fix})",
                              field=name, value=value, legal=[default])


def runtime_inputs(model: str, devices: int, seq_len: int, global_batch: int | None, global_batch_tokens: int | None,
                   plan: Path | None, layout: dict[str, Any], scale: tuple[bool, int, int],
                   default_batch: bool | str = False, moe_capacity_factor: float | None = None) -> tuple[Any, Any, Any]:
    """``(ModelSpec, TrainingSpec, ParallelConfig)`` of a runtime command (no hardware; precision
    bf16-mixed).

    Args:
        scale: ``(scale_down, d_model, n_layers)``: shrink the model for CPU runs
            (:func:`shardplan.jax.model.scale_down`, keeping the head counts, at least tp KV heads).
        default_batch: without a batch flag use :func:`shardplan.inputs.default_global_batch` ("note": and say so on
            stderr, as ``train`` does).
        moe_capacity_factor: MoE token dropping (the runtime then dispatches GShard-style with an
            AllToAll over ep); None: dropless (dense dispatch).

    Raises:
        ConfigError: as :mod:`shardplan.inputs`; devices < 1.
    """
    from shardplan.inputs import default_global_batch, model_spec, parallel_config, training_spec
    if devices < 1:
        raise ConfigError(f"devices={devices} must be >= 1", field="devices", value=devices)
    m = model_spec(model)
    pc = parallel_config(layout, plan)
    check_runtime_layout(pc, None if plan is None else frozenset(k for k, v in layout.items() if v is not None))
    if default_batch and global_batch is None and global_batch_tokens is None:
        global_batch = default_global_batch(pc, devices)
        if default_batch == "note" or plan is not None:  # train, and a plan's run: say which batch it runs (new-user
            from shardplan.cli.common import err_console  # pass 56b: validate --plan ran 2 sequences, unsaid)
            from shardplan.loaders import read_plan_context
            made = read_plan_context(plan).get("global_batch_size") if plan is not None else None
            theirs = (f"; the plan's {made} is not used: --global-batch {made} runs it"
                      if made and made != global_batch else "")
            err_console.print(f"[yellow]note:[/] --global-batch {global_batch} (no batch given: one sequence per data "
                              f"rank and microbatch, pp microbatches{theirs})", highlight=False, soft_wrap=True)
    # the JAX runtime is an XLA/GSPMD program: MaxText's profile (no vocabulary padding beyond tp)
    from shardplan.presets.frameworks import JAX_RUNTIME
    tr = training_spec(seq_len, global_batch, global_batch_tokens, framework=JAX_RUNTIME,
                       moe_capacity_factor=moe_capacity_factor)
    scale_down, d_model, n_layers = scale
    if scale_down:
        from shardplan import limits
        limits.check_range("--scale-d-model", d_model, 1, 2**16)
        limits.check_range("--scale-layers", n_layers, 1, 2**10)
        from shardplan.jax.model import scale_down as shrink
        m = shrink(m, d_model=d_model, n_layers=n_layers, min_kv_heads=pc.tp)
    if m.position == "rope" and m.dim_head % 2:
        raise ConfigError(f"head_dim={m.dim_head} (d_model={m.d_model} / n_heads={m.n_heads}) is odd; RoPE rotates "
                          f"pairs of features, so the runtime needs an even head_dim; legal: d_model a multiple of "
                          f"{2 * m.n_heads} (or an even head_dim)", field="head_dim", value=m.dim_head)
    return m, tr, pc


def validate_runtime(pc: Any, m: Any, tr: Any, devices: int, batch_defaulted: bool) -> Any:
    """:func:`shardplan.parallel.validate` of a runtime command's layout. Where the batch was defaulted from the
    layout (:func:`shardplan.inputs.default_global_batch`: dp x microbatch x pp microbatches) a refusal is
    raised as the same check makes it with a batch every layout on ``devices`` divides (devices x microbatch x pp),
    so that its legal values are not limited by a batch derived from the value refused (a breaker's ``--tp 8`` on a
    4-head model derived batch 1 and was told "legal tp: none"; tp 1 and 2 run).

    Raises:
        ConfigError: the layout's refusal (:func:`shardplan.parallel.validate`).
    """
    from shardplan.parallel import validate
    try:
        return validate(pc, m, tr, devices)
    except ConfigError:
        if not batch_defaulted:
            raise
        generous = tr.model_copy(update={"global_batch_size": devices * pc.microbatch_size * max(pc.pp, 1)})
        validate(pc, m, generous, devices)  # raises the refusal with the legal values of any defaulted batch
        raise


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
