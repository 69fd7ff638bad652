"""What every command shares: the typer ``app``, the consoles, the error handling (exit code 2), the
options of the specs, and :func:`layout_flags`, which adds one option per
:class:`~shardplan.parallel.ParallelConfig` field to a command.

No ``from __future__ import annotations`` in the command modules: typer reads the option types from
the signatures.
"""

import contextlib
import logging
import functools
import inspect
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.markup import escape
from rich.console import Console

from shardplan.errors import ConfigError, short_repr
from shardplan.records import POOR_FIT_SOURCE, UNCHECKED_SOURCE  # the sources keys of a calibrated file
from shardplan.inputs import LAYOUT_OPTIONS, LayoutOption
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.specs.training import OPTIMIZER_DTYPES, PRECISION_POLICIES, TrainingSpec

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Plan, run and validate the parallel layout of transformer training.")


def _version(value: bool) -> None:
    """``--version``: print the installed version and exit 0."""
    if value:
        from shardplan import __version__
        typer.echo(f"shardplan {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def main(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="print the version and exit")] = False) -> None:
    """Plan, run and validate the parallel layout of transformer training.

    Exit codes: 0 ok; 1 a negative result (no layout fits, a layout that does not fit, validation
    outside tolerance); 2 bad input."""


# piped output (CI logs, files) gets wide tables instead of rich's 80-column default
def _plain_type_labels() -> None:
    """``--help`` without typer's ``<bool>`` tags on switches, and ``N`` / ``TEXT`` / ``PATH`` instead of
    ``<int>`` / ``<str>`` / ``<path>`` (issue 15: a newcomer's first reading)."""
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_shardplan", False):
        return
    words = {"int": "N", "str": "TEXT", "float": "X", "path": "PATH", "bool": "BOOL"}

    def display_type_rich(self: Any, ctx: Any) -> Optional[str]:
        if getattr(self, "is_flag", False) or getattr(self, "is_bool_flag", False):
            return None
        label = original(self, ctx)
        if isinstance(label, str) and label.startswith("<") and label.endswith(">"):
            inner = label[1:-1]
            many = inner.startswith("list[")
            inner = inner[5:-1] if many else inner
            return words.get(inner, inner.upper()) + ("..." if many else "")
        return label
    display_type_rich._shardplan = True
    TyperOption.display_type_rich = display_type_rich


_plain_type_labels()


def _one_line_usage_errors() -> None:
    """Typer's own argument errors (a flag that does not parse, an unknown option, a missing one) on one
    line of stderr, as every other bad input here, instead of its usage block and boxed panel; the
    exit code stays 2. The value given is quoted when it can be read back from the command line."""
    try:
        from typer import rich_utils
    except ImportError:  # pragma: no cover
        return
    if getattr(rich_utils.rich_format_error, "_shardplan", False):
        return

    def one_line(self: Any) -> None:
        if self.__class__.__name__ == "NoArgsIsHelpError":
            return
        msg = " ".join(str(self.format_message()).split()).rstrip(".")
        param = getattr(self, "param", None)
        given = ""
        if param is not None and "valid" in msg:
            args = sys.argv[1:]
            for i, a in enumerate(args):
                for opt in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
                    if a == opt and i + 1 < len(args):
                        given = f" (given: {args[i + 1]!r})"
                    elif a.startswith(opt + "="):
                        given = f" (given: {a[len(opt) + 1:]!r})"
        ctx = getattr(self, "ctx", None)
        hint = f"; see '{ctx.command_path} --help'" if ctx is not None else ""
        if "valid integer" in msg:  # "1e1", "8.5", "eight": name what is legal, as every other refusal does
            hint = "; legal: a whole number written in digits, e.g. 8" + hint
        elif "valid number" in msg:
            hint = "; legal: a number, e.g. 0.5 or 1e9" + hint
        sys.stderr.write(f"error: {msg}{given}{hint}\n")
    one_line._shardplan = True  # type: ignore[attr-defined]
    rich_utils.rich_format_error = one_line


_one_line_usage_errors()


class _Console(Console):
    """A rich Console whose closed pipe raises BrokenPipeError (rich exits 1, which means "negative
    result" here); :func:`config_errors` turns it into a quiet exit 0."""

    def on_broken_pipe(self) -> None:
        """Silence the console and hand the closed pipe to the command's error handling."""
        self.quiet = True
        raise BrokenPipeError

    def print(self, *args: Any, **kwargs: Any) -> None:
        """rich's print; on the stderr console stdout is flushed first, so that with both streams on one pipe
        (``2>&1``) a note starts on a line of its own, not inside stdout's buffered last line (a new user saw
        "FLOPs/bytenote: ...")."""
        if self.stderr:
            try:
                sys.stdout.flush()
            except (OSError, ValueError):  # a closed or broken stdout: the note still goes out
                pass
        super().print(*args, **kwargs)


console = _Console(width=None if sys.stdout.isatty() else 200)
err_console = _Console(stderr=True)

#: exit codes: 0 ok, 1 a negative result (no layout fits, a layout that does not fit, outside tolerance),
#: 2 bad input (documented in README.md, "Exit codes")
EXIT_OK, EXIT_NEGATIVE, EXIT_BAD_INPUT = 0, 1, 2


@contextlib.contextmanager
def progress_bar(title: str):
    """A rich progress bar on stderr for work that takes seconds; yields ``update(done, total, label)`` (total None:
    not known yet). Transient: it disappears when the command prints its result; where stderr is not a terminal
    nothing is drawn (not even a blank line)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    if not err_console.is_terminal:
        yield lambda done, total, label: None
        return
    with Progress(TextColumn(f"[bold]{escape(title)}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task("", total=None)
        yield lambda done, total, label: bar.update(task, completed=done, total=total, description=escape(label))
        bar.update(task, completed=bar.tasks[0].total or 0)  # the work is done: the last step shows full


@contextlib.contextmanager
def stages(title: str, total: int):
    """:func:`progress_bar` over ``total`` named stages of a command that takes seconds (loading JAX, compiling,
    rendering charts); yields ``step(label)``, called as each stage starts."""
    with progress_bar(title) as update:
        done = [-1]

        def step(label: str) -> None:
            done[0] += 1
            update(done[0], total, label)
        yield step


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on stderr (the message as written: brackets are not Rich markup);
    returns the ``typer.Exit(2)`` to raise."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_BAD_INPUT)


def negative(message: str) -> typer.Exit:
    """Print ``result: message`` on stderr (the output was printed or written); returns the
    ``typer.Exit(1)`` to raise: the input was fine, the answer is no."""
    err_console.print(f"[bold yellow]result:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(EXIT_NEGATIVE)


def need_jax_extra(command: str) -> None:
    """Exit with a one-line message when JAX, which ``command`` runs on, is not installed.

    Raises:
        typer.Exit: code 2 (bad input: the ``jax`` extra is missing), after printing which package.
    """
    import importlib.util
    missing = [m for m in ("jax", "flax", "optax") if importlib.util.find_spec(m) is None]
    if missing:
        raise fail(f"shardplan {command} runs on JAX: {', '.join(missing)} not installed; "
                   "pip install 'shardplan[jax]'")


def _quiet_stdout() -> None:
    """After a closed pipe (``shardplan estimate --json | head``): point stdout at /dev/null so that the
    interpreter's final flush does not print "Exception ignored ... BrokenPipeError"."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation: no descriptor (CliRunner)
        pass


class _NoteHandler(logging.Handler):
    """Prints the JAX runtime's log records (logger ``shardplan.jax``: a resume onto another layout, a layout field
    the runtime does not execute) as ``note:`` lines on stderr, like every other note."""

    def emit(self, record: logging.LogRecord) -> None:
        err_console.print(f"[yellow]note:[/] {escape(record.getMessage())}", highlight=False, soft_wrap=True)


def runtime_notes() -> None:
    """Route the ``shardplan.jax`` logger to :class:`_NoteHandler` (once; warnings and above), not to Python's
    default ``WARNING:name:`` format."""
    log = logging.getLogger("shardplan.jax")
    if not any(isinstance(h, _NoteHandler) for h in log.handlers):
        log.addHandler(_NoteHandler(logging.WARNING))
        log.propagate = False


def print_notes(layout: Any) -> None:
    """Print the warnings of a legal but unusual layout (:attr:`shardplan.parallel.Layout.notes`) on stderr."""
    for note in layout.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)


def framework_note(hardware: str | None, framework: str | None, profile: Any) -> None:
    """Say on stderr which profile (a FrameworkProfile) a hardware file chose when ``--framework``
    was not given (:func:`shardplan.inputs.default_framework`; with the file's inline overrides, and for a
    megatron section that changes fields), and, when it was given, which of the file's own framework values it
    replaces; then :func:`idle_stall_note` on the profile in force. Raises nothing (the hardware file was read
    before)."""
    from shardplan.loaders import hardware_framework
    if framework is None and hardware is not None and profile.name != "megatron" and hardware_framework(hardware) is None:
        err_console.print(f"[yellow]note:[/] framework profile {escape(repr(profile.name))}, the default on TPUs (JAX / "
                          "XLA programs; --framework chooses another)", highlight=False, soft_wrap=True)
    elif framework is None and hardware is not None and (profile.name != "megatron" or profile.inline or profile.origin):
        # inline overrides (framework: nanotron-usp+pp_stall_min_nodes=16) are named with the profile
        named = profile.label if profile.inline else profile.name
        err_console.print(f"[yellow]note:[/] framework profile {escape(repr(named))} from the hardware file "
                          f"{escape(hardware)} (it was calibrated with it; --framework overrides)",
                          highlight=False, soft_wrap=True)
    elif framework is not None and hardware is not None:
        from shardplan.inputs import default_framework

        # only a hardware file's own framework section is replaced (a TPU preset's default profile is not a file's)
        raw = hardware_framework(hardware)
        from_file = default_framework(hardware) if raw is not None else None
        skip = {"origin", "sources"}
        theirs = from_file.model_dump(exclude=skip) if from_file is not None else {}
        ours = profile.model_dump(exclude=skip)
        # the values the file itself sets (a mapping's fields beside base), not those of the profile it bases them on
        own = set(raw) - {"base"} if isinstance(raw, dict) else set(theirs)
        changed = sorted(k for k, v in theirs.items() if ours.get(k) != v and k in own)
        if changed:
            err_console.print(f"[yellow]note:[/] --framework {escape(framework)} replaces the framework section of the "
                              f"hardware file {escape(hardware)} (its own values of {escape(', '.join(changed))} are "
                              "not used; leave --framework out to keep them)", highlight=False, soft_wrap=True)
    hardware_file_notes(hardware)
    idle_stall_note(profile)




def file_sources(hardware: str | None) -> dict | None:
    """The ``sources`` of a hardware *file* (``--hardware`` naming a .yaml / .yml / .json or an existing path), None
    for a preset or a file the loader refuses (the command's own load reports it). Raises nothing."""
    from shardplan.loaders import load_hardware
    if hardware is None or not (hardware.lower().endswith((".yaml", ".yml", ".json")) or Path(hardware).is_file()):
        return None
    try:
        return load_hardware(hardware).sources
    except Exception:  # noqa: BLE001 -- the command's own load reports a bad file
        return None


def hardware_file_notes(hardware: str | None) -> None:
    """Say on stderr that a hardware file written by ``shardplan bench --smoke`` (its ``sources`` carry ``smoke``) holds
    no measurement of a device: its rates come from a grid of tiny shapes on whatever JAX saw (breaker finding: such a
    file was taken as hardware without a word); likewise a file ``calibrate --force`` wrote from a poor fit (its
    ``sources`` carry :data:`POOR_FIT_SOURCE`). Raises nothing (an unreadable file was refused before)."""
    sources = file_sources(hardware)
    if sources is None:
        return
    from shardplan.cost.comm import implausible_network
    from shardplan.loaders import load_hardware
    odd = implausible_network(load_hardware(hardware))  # file_sources read it: it loads
    if odd:
        err_console.print(f"[yellow]warning:[/] the hardware file {escape(hardware)}: {escape(odd)}", highlight=False,
                          soft_wrap=True)
    smoke = any(key.lower() == "smoke" for key in sources)
    if smoke:
        err_console.print(f"[yellow]note:[/] the hardware file {escape(hardware)} was written by `shardplan bench "
                          "--smoke`: tiny shapes that exercise the code path, not measurements of a device; the "
                          "predictions below rest on them (run `shardplan bench` without --smoke on the accelerator)",
                          highlight=False, soft_wrap=True)
    if any(str(k).lower() == UNCHECKED_SOURCE for k in sources):
        err_console.print(f"[yellow]note:[/] the hardware file {escape(hardware)} was written by `shardplan calibrate "
                          "--no-cross-validation`: its constants were never scored on records they were not fitted "
                          "on; the predictions below rest on them", highlight=False, soft_wrap=True)
    poor = next((v for k, v in sources.items() if str(k).lower() == POOR_FIT_SOURCE), None)
    if poor:
        # the file's own text: printable characters only (no terminal escapes), at most 300 of them
        shown = "".join(ch if ch.isprintable() else " " for ch in str(poor))[:300]
        err_console.print(f"[yellow]note:[/] the hardware file {escape(hardware)} was written by `shardplan calibrate "
                          f"--force` from a poor fit ({escape(shown)}); the predictions below rest on it",
                          highlight=False, soft_wrap=True)



def idle_stall_note(profile: Any) -> None:
    """Say on stderr that a profile's (a FrameworkProfile) pipeline-stall triggers set away from their defaults do
    nothing while its ``pp_message_stall_s`` is 0 (e.g. ``nanotron+pp_stall_min_nodes=2``: the nanotron preset, the
    current build, prices no stall; the playbook campaign's ``nanotron-usp`` carries one). Raises nothing."""
    from shardplan.specs.framework import PP_STALL_TRIGGERS
    fields = type(profile).model_fields
    moved = [f for f in PP_STALL_TRIGGERS if getattr(profile, f) != fields[f].default]
    if profile.pp_message_stall_s == 0 and moved:
        verb = "has" if len(moved) == 1 else "have"
        err_console.print(f"[yellow]note:[/] {escape(', '.join(moved))} of the {escape(profile.label)} profile {verb} no "
                          "effect while its pp_message_stall_s is 0 (no pipeline stall is priced); set "
                          "pp_message_stall_s (seconds per stalled message) too, or start from nanotron-usp",
                          highlight=False, soft_wrap=True)


def attention_note(attention: str | None, training: Any, hardware: Any) -> None:
    """Say on stderr how the attention core is priced on Volta (``hardware.compute_arch``; FlashAttention runs on
    Ampere and newer, FlashAttention-2 README): ``naive`` by default (``attention`` None: no ``--attention``), or a
    fused kernel the user asked for with ``--attention flash`` (xFormers' memory-efficient attention runs there)."""
    if hardware is None or hardware.compute_arch != "volta":
        return
    if attention is None:
        err_console.print(f"[yellow]note:[/] attention naive: FlashAttention runs on Ampere and newer GPUs "
                          f"(FlashAttention-2 README), not on {escape(hardware.name)}, so the attention core is priced "
                          "unfused (its s x s scores stored; no context parallelism); --attention flash prices a fused "
                          "kernel such as xFormers' memory-efficient attention", highlight=False, soft_wrap=True)
    elif training.attention == "flash":
        err_console.print(f"[yellow]note:[/] --attention flash on {escape(hardware.name)}: FlashAttention itself needs "
                          "Ampere or newer; this prices a fused kernel that runs on Volta (xFormers' memory-efficient "
                          "attention) at the GEMM rate", highlight=False, soft_wrap=True)


def scale_up_size_note(scale_up_size: int | None, hw: Any) -> None:
    """Say on stderr that ``--scale-up-size`` changes only how many devices share the scale-up level of ``hw`` (a
    HardwareSpec), not its bandwidth: on a GPU preset a smaller domain keeps the NVLink (or Infinity Fabric) rate
    per device (new-user pass 55: ``a100-40gb --scale-up-size 4`` for 4-GPU PCIe nodes priced PCIe at 300 GB/s and
    came out 40% fast), so nodes whose GPUs talk over PCIe need a hardware file with ``scale_up_bandwidth``
    (``base: a100-40gb``, ``scale_up_size: 4``, ``scale_up_bandwidth: 20.0e9``). Raises nothing."""
    from shardplan.cost.comm import PCIE_MAX_BANDWIDTH, level_names
    if scale_up_size is None or hw is None or hw.kind != "gpu" or hw.scale_up_bandwidth <= PCIE_MAX_BANDWIDTH:
        return  # a hardware that already gives a PCIe rate needs no word (breaker pass 55b)
    from shardplan.presets.hardware import HARDWARE
    base = f"'base: {escape(hw.name)}', " if hw.name in HARDWARE else ""
    err_console.print(f"[yellow]note:[/] --scale-up-size {scale_up_size} sets how many GPUs share the scale-up level; "
                      f"its bandwidth stays {hw.scale_up_bandwidth / 1e9:.0f} GB/s per GPU ({escape(level_names(hw)[0])} "
                      "of the hardware given): for GPUs that talk over PCIe give the PCIe rate in a hardware file, e.g. "
                      f"{base}'scale_up_size: {scale_up_size}', 'scale_up_bandwidth: 20.0e9' "
                      "(docs/cost_model.md, 'PCIe nodes')", highlight=False, soft_wrap=True)


def fitted_precision_note(hardware_arg: str | None, chosen: str) -> None:
    """Say on stderr that a hardware file written by ``shardplan calibrate`` was fitted on records of other precision
    policies (its ``sources.fitted_precision``, :data:`shardplan.calibrate.FITTED_PRECISION_SOURCE`) than ``chosen``,
    the policy this command prices: the GEMM rates are fitted per compute dtype, but the memory terms (allocator
    overhead, context bytes) absorb whatever the fitted policy's buffers were. Raises nothing."""
    from shardplan.calibrate import FITTED_PRECISION_SOURCE
    sources = file_sources(hardware_arg)
    if sources is None:
        return
    fitted = str(next((v for k, v in sources.items() if str(k).lower() == FITTED_PRECISION_SOURCE), "") or "")
    names = {part.split(" (")[0].strip() for part in fitted.split(",") if part.strip()}
    if names and chosen not in names:
        err_console.print(f"[yellow]note:[/] the hardware file {escape(hardware_arg)} was calibrated on records in "
                          f"{escape(fitted[:200])}; this prices {escape(chosen)}: its GEMM rates are per compute dtype, "
                          "but its memory terms (allocator_overhead, context_bytes) were fitted with the other policy's "
                          "buffers (--precision chooses the policy)", highlight=False, soft_wrap=True)


def fitted_overlap_note(hardware_arg: str | None, parallel: Any, what: str = "this layout") -> None:
    """Say on stderr that ``parallel`` (a ParallelConfig) runs tensor-parallel communication overlap while none of the
    tp > 1 records a ``shardplan calibrate`` file was fitted on did (its ``sources.fitted_tp_overlap``, "0 of N
    records with tp > 1"): the overlap's gain is the base profile's model, not measured on that cluster (new-user
    pass 58: the winner's tp_overlap was worth 15% and decided the ranking). Raises nothing."""
    from shardplan.calibrate import FITTED_TP_OVERLAP_SOURCE
    sources = file_sources(hardware_arg)
    if sources is None or parallel is None or not (parallel.tp_overlap and parallel.tp > 1):
        return
    fitted = str(next((v for k, v in sources.items() if str(k).lower() == FITTED_TP_OVERLAP_SOURCE), "") or "")
    if fitted.startswith("0 of "):
        err_console.print(f"[yellow]note:[/] {what} uses tp_overlap (Megatron-LM's --tp-comm-overlap), which none of "
                          f"the records the hardware file {escape(hardware_arg)} was calibrated on ran ({escape(fitted)}): "
                          "its gain is the base profile's model, not measured on this cluster (--no-tp-overlap prices "
                          "the layout without it)", highlight=False, soft_wrap=True)


def precision_note(precision: str | None, framework: Any, overridable: bool = True, hardware: Any = None,
                   chosen: str | None = None) -> None:
    """Say on stderr that the framework profile (a FrameworkProfile) chose the precision policy
    (``FrameworkProfile.default_precision``) when ``precision`` (``--precision``) was not given; ``overridable``:
    the command has a ``--precision`` flag to say so. With ``hardware`` (a HardwareSpec) and ``chosen`` (the policy
    the inputs resolved to): say so when an fp16 policy replaced the default because the hardware has no bf16
    (:func:`shardplan.inputs.fp16_counterpart`)."""
    if precision is None and hardware is not None and chosen and chosen.startswith("fp16") \
            and not hardware.runs_dtype("bf16"):
        err_console.print(f"[yellow]note:[/] precision {chosen}: {escape(hardware.name)} has no bf16 tensor cores, so "
                          "the default bf16 policy runs as its fp16 counterpart (the same bytes; loss-scaled fp16, "
                          "Megatron-LM --fp16" + (" --accumulate-allreduce-grads-in-fp32" if "fp32-grads" in chosen
                                                  else "") + ")" + ("; --precision overrides" if overridable else ""),
                          highlight=False, soft_wrap=True)
        return
    chosen = framework.default_precision
    if precision is None and chosen is not None:
        err_console.print(f"[yellow]note:[/] precision {chosen}: the {escape(framework.label)} profile's "
                          f"default (what its default configuration runs)"
                          + ("; --precision overrides" if overridable else ""),
                          highlight=False, soft_wrap=True)


def check_output_path(flag: str, path: Optional[Path], stdout: str | None = None,
                      inputs: dict[str, Optional[Path]] | None = None) -> None:
    """Refuse, before any work, an output path that cannot be written: a folder, a file in a folder
    that does not exist (nothing is created), a place the process cannot create or open a file in (tried: ``/proc``,
    a read-only folder; a file the try creates is removed again), ``-`` (stdout: only ``export -o -`` writes there,
    and reads it before this check), or the same file as one of ``inputs`` (flag -> path: the output would replace
    what the command reads). None passes. ``stdout``: what the command does instead when the option is left out
    (said in the error for ``-``).

    Raises:
        ConfigError: naming the option, the path and what is legal (exit code 2).
    """
    if path is None:
        return
    if str(path) in ("", "."):  # typer reads an empty value as Path(""), which is "."
        raise ConfigError(f"{flag} is empty (or the current folder); legal: a file path", field=flag, value=str(path))
    if str(path) == "-":
        instead = f" ({stdout} without {flag})" if stdout else ""
        raise ConfigError(f"{flag} -: this option writes a file, not stdout{instead}; legal: a file path",
                          field=flag, value="-")
    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a folder; legal: a file path", field=flag, value=str(path))
    if not path.parent.is_dir():
        what = "is a file, not a folder" if path.parent.exists() else "does not exist"  # breaker pass 56
        raise ConfigError(f"{flag} {path}: folder {path.parent} {what}; legal: a file in an existing folder",
                          field=flag, value=str(path))
    for other_flag, other in (inputs or {}).items():
        if other is not None and path.resolve() == Path(other).resolve():
            raise ConfigError(f"{flag} {path} is the {other_flag} file the command reads: it would be replaced; legal: "
                              "another path", field=flag, value=str(path))
    _check_writable(flag, path)


def _check_writable(flag: str, path: Path) -> None:
    """Open ``path`` for appending (nothing written) to see that a file can be made or written there; a file the try
    created is removed again.

    Raises:
        ConfigError: naming the option, the path and the system's reason.
    """
    import stat as stat_mod
    existed = path.exists()
    if existed and stat_mod.S_ISFIFO(path.stat().st_mode):  # opening a FIFO for writing waits for a reader
        raise ConfigError(f"{flag} {path} is a FIFO; legal: a regular file path", field=flag, value=str(path))
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise ConfigError(f"{flag} {path} cannot be written ({e.strerror or e}); legal: a file in a folder this user "
                          "can write", field=flag, value=str(path)) from None
    if not existed:
        path.unlink(missing_ok=True)


def config_errors(fn: Callable) -> Callable:
    """Decorator: print a ConfigError, pydantic ValidationError or OSError (unwritable output path,
    full disk) as one line on stderr and exit with code 2, without a traceback."""
    from pydantic import ValidationError

    from shardplan.loaders import config_error

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            out = fn(*args, **kwargs)
            sys.stdout.flush()  # a closed pipe shows here, not in click's handler (which exits 1)
            return out
        except BrokenPipeError:  # the reader went away (| head): not an error of the input
            _quiet_stdout()
            raise typer.Exit(EXIT_OK) from None
        except ConfigError as e:
            raise fail(str(e)) from None
        except ValidationError as e:
            raise fail(str(config_error(e))) from None
        except OSError as e:
            if e.filename:
                raise fail(f"cannot access {short_repr(str(e.filename)).strip(chr(39))}: {e.strerror or e}") from None
            # a write that failed after the open (ENOSPC on /dev/full, a full disk): the call names no file
            outputs = [f"{k}={v}" for k, v in kwargs.items() if k in ("output", "profile_out", "record") and v]
            raise fail(f"writing an output failed: {e.strerror or e}"
                       f"{' (' + ', '.join(outputs) + ')' if outputs else ''}; legal: a writable path on a disk with "
                       "free space") from None
    return wrapper


# ---- options of the specs (model, hardware, batch) ------------------------------------------------
_ATTENTION = typing.get_args(TrainingSpec.model_fields["attention"].annotation)

ModelOpt = Annotated[str, typer.Option("--model", "-m", help="preset name, HF config.json path, or YAML/JSON spec")]
def shipped_cluster(value: str | None) -> str | None:
    """``--hardware``'s value, or the path of the cluster file shardplan ships under that name
    (``shardplan/data/clusters/NAME.yaml``: usp-h100-efa, the cluster the run records of ``benchmarks/usp_grid.py``
    name; aws-p4de, gcp-a3-high, gcp-a3-mega, jean-zay-a100) where the value is neither a preset nor a file."""
    if not value:
        return value
    from shardplan.presets.hardware import hardware_preset_name
    from shardplan.calibration import CLUSTERS_DIR
    shipped = CLUSTERS_DIR / f"{value}.yaml"
    if hardware_preset_name(value) is None and not Path(value).exists() and "/" not in value and shipped.is_file():
        return str(shipped)
    return value


HardwareOpt = Annotated[str, typer.Option("--hardware", "-H", callback=shipped_cluster,
                                          help="preset name, YAML/JSON spec file, or a cluster file shardplan ships "
                                               "(usp-h100-efa, aws-p4de, gcp-a3-high, gcp-a3-mega, jean-zay-a100)")]
DevicesOpt = Annotated[int, typer.Option("--devices", "-n", help="number of accelerators")]
SeqOpt = Annotated[int, typer.Option("--seq-len", "-s", help="tokens per sequence")]
#: --devices / --seq-len of the commands that take --plan: a plan file that records them gives them when the flag is
#: left out (:func:`shardplan.cli.estimate.run_values_from_plan`)
PlanDevicesOpt = Annotated[Optional[int], typer.Option("--devices", "-n", help="number of accelerators (with --plan: "
                                                       "the file's, where it records them)")]
PlanSeqOpt = Annotated[Optional[int], typer.Option("--seq-len", "-s", help="tokens per sequence (with --plan: the "
                                                   "file's, where it records them)")]
BatchOpt = Annotated[Optional[int], typer.Option("--global-batch", "-b", help="sequences per optimizer step")]
BatchTokOpt = Annotated[Optional[int], typer.Option("--global-batch-tokens", help="tokens per optimizer step")]
PrecisionOpt = Annotated[Optional[str], typer.Option(
    help=" | ".join(PRECISION_POLICIES) + " (default: the framework profile's, fp32-params for maxtext; else bf16-mixed)")]
ScaleUpOpt = Annotated[Optional[int], typer.Option("--scale-up-size",
                                                   help="devices per NVLink domain / TPU slice (overrides preset)")]
AttnOpt = Annotated[Optional[str], typer.Option(
    help=" | ".join(_ATTENTION) + " attention kernel [default: flash; naive on Volta (V100), which FlashAttention does "
         "not run on]")]
FrameworkOpt = Annotated[Optional[str], typer.Option(help=" | ".join(FRAMEWORKS) + " or a profile file, each with "
                                                     "optional +field=value overrides (megatron+loss=in_place): the "
                                                     "training framework's profile (overheads, overlap, loss, allocator); "
                                                     "default: the one a --hardware file was calibrated with "
                                                     "(its framework: key), else megatron on GPUs and maxtext on "
                                                     "TPUs; export --to / plan --export: the target framework's own "
                                                     "profile where it has one")]
MoeCapOpt = Annotated[Optional[float], typer.Option("--moe-capacity-factor", help="MoE token dropping: every expert "
                                                    "computes and exchanges capacity = factor x its balanced share "
                                                    "(empty: dropless)")]
MoeImbOpt = Annotated[float, typer.Option("--moe-imbalance", help="dropless MoE: tokens on the busiest expert rank "
                                          "over the balanced share (1 = balanced)")]
MoeRoutingOpt = Annotated[str, typer.Option("--moe-routing", help="uniform | round_robin: which experts a token's "
                                            "top-k picks, for DeepEP's per-rank / per-node copies (only with "
                                            "--moe-dispatcher deepep and ep > 1); round_robin = contiguous experts, "
                                            "NeMo AutoModel's fake_balanced_gate")]
DropoutOpt = Annotated[bool, typer.Option("--dropout/--no-dropout", help="dropout on (masks stored, extra "
                                          "element-wise traffic; Korthikanti et al. 2022 Table 2)")]
OptimizerDtypeOpt = Annotated[Optional[str], typer.Option("--optimizer-dtype", help=" | ".join(OPTIMIZER_DTYPES) +
                                                ": optimizer state (default: the framework profile's, else fp32); "
                                                "bf16-moments: bf16 Adam moments beside fp32 master weights "
                                                "(DeepSeek-V3); bf16: bf16 moments, no master copy (NeMo "
                                                "distributed_fused_adam dtype: bf16)")]
PlanOpt = Annotated[Optional[Path], typer.Option("--plan", help="plan JSON (from `shardplan plan --json` or "
                                                 "`import`): its layout, which layout flags given override; a note "
                                                 "says where the other flags differ from the setup it was made for; "
                                                 "FILE#N takes plan N of a `plan --json` ranking (default #1)",
                                                 rich_help_panel="Layout")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]


# ---- layout options, generated from ParallelConfig ------------------------------------------------
_PY_TYPE = {"int": int, "bool": bool, "choice": str, "ints": str, "names": str}


#: the short names a layout is printed with (``ParallelConfig.short``: ``zero=3 ... mbs=2``), accepted as flags too,
#: so that a layout copied from ``plan`` can be pasted back into ``estimate``
LAYOUT_ALIASES: dict[str, list[str]] = {"microbatch_size": ["--mbs"], "zero_stage": ["--zero"]}


#: ``--help``'s default of the fields a framework profile sets when a command does not
#: (:func:`shardplan.inputs.applied_layout_defaults`; the profiles' sources say why)
PROFILE_DEFAULTS: dict[str, str] = {
    "zero_stage": "the framework's: " + "; ".join(
        f"{', '.join(n for n, f in FRAMEWORKS.items() if f.default_zero_stage == z)} {z}" for z in (1, 2, 3)
        if any(f.default_zero_stage == z for f in FRAMEWORKS.values())) + "; others 0",
    **{k: f"the framework's: on with tp > 1 for {', '.join(n for n, f in FRAMEWORKS.items() if f.layout_defaults.get(k))}"
          "; else off" for k in ("sp", "tp_overlap")}}


def layout_parameter(option: LayoutOption, repeatable: bool = False,
                     show_default: bool = True, profile_defaults: bool = True) -> inspect.Parameter:
    """A keyword-only typer option for one ParallelConfig field: ``--zero-stage N``, ``--sp/--no-sp``,
    ``--schedule [gpipe|1f1b|...]``, ``--pp-layers 9,7``; default ``None`` (= not given, so a plan
    file's value or the field's default applies). ``repeatable``: a list of values; ``show_default``:
    show the field's default in ``--help``; ``profile_defaults``: the help names the framework profiles' defaults
    (:data:`PROFILE_DEFAULTS`) where they apply (estimate, export, report), the field's own default otherwise
    (the JAX runtime's commands)."""
    py = _PY_TYPE[option.kind]
    decls = [f"{option.flag}/--no-{option.flag[2:]}"] if option.kind == "bool" else [option.flag]
    decls += LAYOUT_ALIASES.get(option.name, [])
    metavar = ("NAME,NAME,..." if option.kind == "names" else "[" + "|".join(option.choices) + "]" if option.choices
               else "N,N,..." if option.kind == "ints" else None)
    help_text = option.description + (" (repeatable)" if repeatable else "")
    profile = PROFILE_DEFAULTS.get(option.name) if profile_defaults else None
    default = (profile or option.default_text or False) if show_default else False
    opt = typer.Option(*decls, help=help_text, metavar=metavar, show_default=default, rich_help_panel="Layout")
    annotation = Annotated[Optional[list[py]] if repeatable else Optional[py], opt]
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)


def layout_flags(fn: Optional[Callable] = None, *, repeatable: tuple[str, ...] = (),
                 show_defaults: bool = True, profile_defaults: bool = True) -> Callable:
    """Decorator: replace a command's ``layout`` parameter by one option per ParallelConfig field
    (:data:`shardplan.inputs.LAYOUT_OPTIONS`); the command receives ``layout``, a dict of the fields
    given on the command line.

    Args:
        fn: the command function; it must have a parameter named ``layout``.
        repeatable: fields that take a list (``plan --schedule 1f1b --schedule interleaved``).
        show_defaults: show each field's default in ``--help`` (``plan``: a flag not given is searched).
        profile_defaults: the framework profiles apply their layout defaults (``--help`` says so); False for the
            JAX runtime's commands, whose layout takes the ParallelConfig defaults.

    Raises:
        TypeError: ``fn`` has no ``layout`` parameter (at import).
    """
    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        if "layout" not in sig.parameters:
            raise TypeError(f"{fn.__name__} needs a 'layout' parameter for @layout_flags")
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in sig.parameters.values()
                  if p.name != "layout"]
        params += [layout_parameter(o, o.name in repeatable, show_defaults, profile_defaults) for o in LAYOUT_OPTIONS]

        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            given = {o.name: kwargs.pop(o.name) for o in LAYOUT_OPTIONS}
            return fn(**kwargs, layout={k: v for k, v in given.items() if v not in (None, [])})

        wrapper.__signature__ = sig.replace(parameters=params)
        return wrapper
    return decorate(fn) if fn is not None else decorate
