"""Plans out to the training frameworks people run, and their configs back in (``shardplan export`` /
``shardplan import``; issue 12).

One module per framework, each with an :class:`~shardplan.export.base.Exporter` named ``EXPORTER``:

* :mod:`~shardplan.export.maxtext` -- MaxText ``base.yml`` overrides (YAML);
* :mod:`~shardplan.export.easydel` -- EasyDeL ``sharding_axis_dims`` / ``partition_axis`` (Python or JSON);
* :mod:`~shardplan.export.torchtitan` -- torchtitan job config (TOML);
* :mod:`~shardplan.export.megatron` -- Megatron-LM / NeMo command-line arguments (bash);
* :mod:`~shardplan.export.deepspeed` -- DeepSpeed ``ds_config.json``;
* :mod:`~shardplan.export.nanotron` -- nanotron ``parallelism`` / ``tokens`` blocks (YAML);
* :mod:`~shardplan.export.accelerate` -- Hugging Face Accelerate config file (YAML: FSDP / DeepSpeed / DDP).

Every file opens with the planner's numbers (model, hardware, step time, MFU, memory per device) and
the command that reproduces it. A plan that a framework cannot express raises
:class:`~shardplan.errors.ConfigError` naming what is missing and which framework can. Pure Python:
no JAX. The mapping table with sources is docs/export.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from shardplan.errors import ConfigError, fmt_legal, short_repr
from shardplan.export import accelerate, deepspeed, easydel, maxtext, megatron, nanotron, torchtitan
from shardplan.export.base import ExportContext, Exporter, Imported, check_kv_replication, check_training

#: registry: framework name -> exporter (``--to NAME`` / ``--from NAME``)
EXPORTERS: dict[str, Exporter] = {m.EXPORTER.name: m.EXPORTER
                                  for m in (maxtext, easydel, torchtitan, megatron, deepspeed, nanotron, accelerate)}

__all__ = ["EXPORTERS", "ExportContext", "Exporter", "Imported", "exporter", "export_text", "import_config",
           "reproduce_command"]


def exporter(name: str, field: str = "to") -> Exporter:
    """The exporter of a framework name (case-insensitive; ``nemo`` is Megatron-LM's); ``field`` names the option
    that gave it (``to`` for export, ``from`` for import, ``export`` for ``plan --export``).

    Raises:
        ConfigError: an unknown framework (lists the known ones).
    """
    key = {"nemo": "megatron", "megatron-lm": "megatron"}.get(name.lower(), name.lower())
    if key not in EXPORTERS:
        what = "config importer" if field == "from" else "config exporter"
        raise ConfigError(f"--{field} {name!r}: no {what} for that framework; legal: {fmt_legal(EXPORTERS)}",
                          field=field, value=name, legal=list(EXPORTERS))
    return EXPORTERS[key]


def export_text(framework: str, estimate, command: str = "", path: str | Path | None = None) -> str:
    """The config text of a planned layout for a framework.

    Args:
        framework: a name of :data:`EXPORTERS`.
        estimate: :func:`shardplan.cost.step.estimate` of the layout (its numbers go in the header).
        command: the shardplan command that reproduces the file (header line).
        path: the output path; EasyDeL writes JSON for a ``.json`` suffix, Python otherwise.

    Raises:
        ConfigError: an unknown framework, a precision it does not write, or a plan it cannot express.
    """
    ex = exporter(framework)
    try:
        return _write(ex, estimate, command, path)
    except ConfigError as err:
        if err.field != "export":
            raise
        takers = writers_of(estimate, exclude=ex.name)
        said = (f"of the exporters, {', '.join(takers)} write{'s' if len(takers) == 1 else ''} this whole plan"
                if takers else "no exporter writes this whole plan as priced")
        raise ConfigError(f"{err} [checked: {said}]", field=err.field, value=err.value, legal=err.legal) from None


def _write(ex: Exporter, estimate, command: str = "", path: str | Path | None = None) -> str:
    """The config text of ``estimate`` by exporter ``ex`` (:func:`export_text` without the alternatives check)."""
    ctx = ExportContext(estimate=estimate, command=command)
    check_training(ctx.training, ex, ctx.estimate.model.is_moe, ctx.estimate.hardware)
    check_kv_replication(ctx, ex)
    if ex.name == "easydel" and path is not None and Path(path).suffix == ".json":
        return easydel.write(ctx, fmt="json")
    return ex.write(ctx)


def writers_of(estimate, exclude: str = "") -> list[str]:
    """The titles of the exporters (other than ``exclude``) that write ``estimate``'s whole plan as priced: its
    layout and its training settings (a refusal names what one exporter lacks; this checks the others on
    everything). Hardware checks count too: a GPU framework does not write a TPU plan."""
    titles = []
    for name, ex in EXPORTERS.items():
        if name == exclude:
            continue
        try:
            _write(ex, estimate)
        except ConfigError:
            continue
        titles.append(ex.title)
    return titles


def import_config(framework: str, text: str, devices: int | None = None) -> Imported:
    """Read a framework's config back into a layout.

    Args:
        framework: a name of :data:`EXPORTERS`.
        text: the config file's text.
        devices: the world size, for configs that do not say it (Megatron-LM without a torchrun line,
            an auto (-1) degree).

    Raises:
        ConfigError: an unknown framework, an unreadable config, or values the planner cannot represent.
    """
    reader = exporter(framework, "from")
    if len(text) > 2**20:
        raise ConfigError(f"the {framework} config is larger than 1 MiB; a config is a few KiB", field="file",
                          value=len(text))
    if devices is not None and not 1 <= devices <= 2**20:
        raise ConfigError(f"devices={short_repr(devices)}; legal: 1 to 1,048,576", field="devices", value=devices)
    try:
        imported = reader.read(text, devices)
    except ConfigError:
        raise
    except RecursionError:
        raise ConfigError(f"the {framework} config is nested too deeply", field="file", value=None) from None
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError, ZeroDivisionError,
            yaml.YAMLError) as e:
        first = " ".join(str(e).split())  # the parser's message on one line
        first = first if len(first) <= 160 else first[:157] + "..."
        raise ConfigError(f"the {framework} config cannot be read ({type(e).__name__}: {first}); is "
                          f"it a {reader.title} file? legal --from: {', '.join(EXPORTERS)}", field="file",
                          value=None, legal=list(EXPORTERS)) from None
    _check_imported_sizes(imported, framework, reader.seq_key)
    _check_imported_split(imported, framework)
    if devices is not None and imported.devices is not None and imported.devices != devices:
        # the file's own degrees give its world size: a different --devices is a contradiction, not an override
        raise ConfigError(f"--devices {devices} disagrees with the {framework} config's own world size "
                          f"{imported.devices}; legal: leave --devices out, or give {imported.devices}",
                          field="devices", value=devices, legal=[imported.devices])
    return _with_behaviour(imported, text)


def _check_imported_split(imported: Imported, framework: str) -> None:
    """What a config says must be a layout the framework runs without the model: virtual stages need a pipeline,
    and the global batch must split into whole microbatches on every data-parallel rank (the checks
    :func:`shardplan.parallel.validate` makes again with the model, caught here at import).

    Raises:
        ConfigError: naming the field, the value and the legal values.
    """
    p, B = imported.parallel, imported.global_batch
    if p.virtual_stages > 1 and p.pp == 1:
        raise ConfigError(f"the {framework} config gives virtual_stages={p.virtual_stages} with pp=1 (interleaving "
                          "splits pipeline stages); legal virtual_stages with pp=1: 1", field="virtual_stages",
                          value=p.virtual_stages, legal=[1])
    per = (p.dp or 1) * p.microbatch_size
    if B is not None and B % per:
        raise ConfigError(f"the {framework} config gives global_batch_size={B}, not divisible by dp x microbatch_size "
                          f"= {p.dp} x {p.microbatch_size} = {per}; legal global_batch_size: multiples of {per} "
                          f"({' or '.join(str(per * k) for k in (B // per, B // per + 1) if k)})",
                          field="global_batch_size", value=B)


def _check_imported_sizes(imported: Imported, framework: str, seq_key: str = "seq_len") -> None:
    """The world size, sequence length and global batch a config gives must be whole numbers (or absent) in the
    physical ranges every other input has (:mod:`shardplan.limits`: devices <= 2^20, seq_len <= 2^24, global batch and
    tokens per step <= 2^40), and an MoE capacity factor must be finite (``--moe-expert-capacity-factor nan`` would
    write a plan file that is not JSON). ``seq_key`` is the config's own name of the sequence length.

    Raises:
        ConfigError: naming the value, the framework's key and the legal range.
    """
    from shardplan import limits
    for name, value, most in (("devices", imported.devices, limits.MAX_DEVICES),
                              ("seq_len", imported.seq_len, limits.MAX_SEQ_LEN),
                              ("global_batch_size", imported.global_batch, limits.MAX_BATCH_TOKENS)):
        key = f" ({seq_key})" if name == "seq_len" and seq_key != name else ""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most):
            shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else short_repr(value)
            raise ConfigError(f"the {framework} config gives {name}={shown}{key}; legal: a whole number from 1 to "
                              f"{most:,} (shardplan's range for {name})", field=name, value=value)
    B, s = imported.global_batch, imported.seq_len
    if B is not None and s is not None and B * s > limits.MAX_BATCH_TOKENS:
        raise ConfigError(f"the {framework} config gives global_batch_size={B:,} x seq_len={s:,} = {B * s:,} tokens per "
                          f"step; legal: at most 2^40 = {limits.MAX_BATCH_TOKENS:,}", field="global_batch_size", value=B)
    cf = imported.moe_capacity_factor
    if cf is not None and not math.isfinite(cf):
        raise ConfigError(f"the {framework} config gives moe_capacity_factor={cf}; legal: a finite number",
                          field="moe_capacity_factor", value=cf)


def _with_behaviour(imported: Imported, text: str) -> Imported:
    """``imported`` with the runtime behaviour fields an exported file's meta line records (``zero3_gather``,
    ``hsdp_reduce``, ...: what a framework config cannot say), those the file's own options left at their
    defaults; unknown or invalid entries are ignored (the meta line is a comment a user may have edited)."""
    from dataclasses import replace

    from pydantic import ValidationError

    from shardplan.export.base import BEHAVIOUR_FIELDS, read_meta
    from shardplan.parallel import ParallelConfig
    saved = read_meta(text).get("behaviour")
    if not isinstance(saved, dict):
        return imported
    p = imported.parallel
    update = {k: v for k, v in saved.items() if k in BEHAVIOUR_FIELDS
              and getattr(p, k) == ParallelConfig.model_fields[k].default}
    try:
        return replace(imported, parallel=ParallelConfig(**{**p.model_dump(), **update})) if update else imported
    except (ValidationError, ConfigError):
        return imported


def _training_flags(e) -> list[str]:
    """The ``estimate`` flags of an estimate's training setup that differ from their defaults."""
    tr, parts = e.training, []
    if tr.precision.name != (tr.framework.default_precision or "bf16-mixed"):  # the profile's own default is implied
        parts.append(f"--precision {tr.precision.name}")
    if tr.attention != "flash":
        parts.append(f"--attention {tr.attention}")
    if tr.dropout:
        parts.append("--dropout")
    if tr.optimizer_dtype != (tr.framework.optimizer_dtype or "fp32"):
        parts.append(f"--optimizer-dtype {tr.optimizer_dtype}")
    if e.model.is_moe:  # the MoE setup prices the dispatch (TrainingSpec)
        if tr.moe_capacity_factor is not None:  # repr: the shortest text that reads back as the same float
            parts.append(f"--moe-capacity-factor {tr.moe_capacity_factor!r}")
        if tr.moe_imbalance != 1.0:
            parts.append(f"--moe-imbalance {tr.moe_imbalance!r}")
        if tr.moe_routing != "uniform":
            parts.append(f"--moe-routing {tr.moe_routing}")
    return parts


def reproduce_command(framework: str, estimate, output: str | Path | None = None,
                      inputs: dict | None = None, command: str | None = None) -> str:
    """``shardplan export --to NAME`` with the model, hardware, batch and every layout field that
    differs from its default (dp included), so that the file can be regenerated. ``inputs`` holds what
    the user typed (``model`` / ``hardware`` preset or file path, ``framework`` name or profile file,
    ``scale_up_size``): a file path is kept as given, since the spec's name alone would not find the
    file; without it the spec names are used. ``command`` replaces ``shardplan export --to NAME`` (the report's
    ``shardplan report``: the same flags reproduce the same layout)."""
    import shlex

    from shardplan.parallel import ParallelConfig
    e, p, given = estimate, estimate.parallel, inputs or {}

    def q(text: str) -> str:
        """A shell word for ``text``: shlex quoting, or bash's $'...' with escapes when it holds a
        newline or another control character (the line must stay one comment line)."""
        if text.isprintable():
            return shlex.quote(text)
        return "$'" + text.encode("unicode_escape").decode("ascii").replace("'", "\\'") + "'"
    parts = [*([command] if command else ["shardplan export", f"--to {framework}"]), f"--model {q(str(given.get('model') or e.model.name))}",
             f"--hardware {q(str(given.get('hardware') or e.hardware.name))}",
             f"--devices {e.layout.n_devices}", f"--seq-len {e.training.seq_len}",
             f"--global-batch {e.training.global_batch_size}"]
    # the profile as typed; when none was typed it came from the default or from the hardware file's
    # framework: key, which the same --hardware gives again (naming it would replace a fitted profile)
    if given.get("framework"):
        parts.append(f"--framework {q(str(given['framework']))}")
    elif inputs is None and e.training.framework.spec != "megatron":
        parts.append(f"--framework {q(e.training.framework.spec)}")
    if given.get("scale_up_size"):
        parts.append(f"--scale-up-size {given['scale_up_size']}")
    parts += _training_flags(e)
    # fields whose command-line default is the framework's, not ParallelConfig's (the profile's default ZeRO stage,
    # its layout defaults such as nanotron's sp): always written, as dp is; with tp > 1 sp and tp_overlap too, since the
    # export target's own defaults apply on a re-run where the pricing profile came from a hardware file
    always = {"dp", "zero_stage", *e.training.framework.layout_defaults, *(("sp", "tp_overlap") if p.tp > 1 else ())}
    for name, f in ParallelConfig.model_fields.items():
        value = getattr(p, name)
        if name == "dp_shard" and p.dp_shard in (None, p.dp):  # None and dp both mean one shard group
            continue
        if value == f.default and name not in always:
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{flag[2:]}")
        elif isinstance(value, tuple):
            parts.append(f"{flag} {','.join(map(str, value))}")
        else:
            parts.append(f"{flag} {value}")
    if output is not None:
        parts.append(f"-o {q(str(output))}")
    return " ".join(parts)
