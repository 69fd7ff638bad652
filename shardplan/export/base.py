"""What every exporter shares: the :class:`Exporter` record, the comment header with the planner's
numbers, the refusal of a plan a framework cannot express, and the :class:`Imported` result of
reading a framework's config back.

Conventions (the planner's, :mod:`shardplan.parallel`): ``devices = dp * tp * pp * cp``; ``ep`` is
carved from ``dp * cp``; the ZeRO shard group is ``dp_shard`` (HSDP: ``dp / dp_shard`` replicas);
``microbatch_size`` is sequences per microbatch per data-parallel rank and
``microbatches = global_batch / (dp * microbatch_size)``.

Fields of :class:`~shardplan.parallel.ParallelConfig` are of three kinds for an exporter:

* *expressed*: written to the config and read back by the importer;
* *behaviour* (:data:`BEHAVIOUR_FIELDS`): how the runtime schedules work the planner had to assume
  (ZeRO-3 gather unit and timing, gradient-reduce overlap where the framework has no switch); not
  written, named in the header, read back as the field's default;
* anything else set away from its default and not expressed: refused with a
  :class:`~shardplan.errors.ConfigError` that names what is missing and which frameworks can.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shardplan.errors import ConfigError, fmt_legal, short_repr
from shardplan.limits import MAX_BATCH_TOKENS
from shardplan.parallel import ParallelConfig
from shardplan.units import fmt_seconds

#: ParallelConfig fields that describe how a runtime schedules the work, not what the config says
BEHAVIOUR_FIELDS = ("fsdp_unit", "zero3_gather", "overlap_grad_reduce", "hsdp_reduce")
def behaviour_applies(field: str, p: ParallelConfig) -> bool:
    """Whether a :data:`BEHAVIOUR_FIELDS` field changes anything for ``p``: the FSDP unit and gather schedule only with
    ZeRO-3, the HSDP reduction only with ZeRO-3 sharded in groups smaller than dp, the gradient-reduction overlap
    only with dp > 1 (a new user's ZeRO-1 Megatron script was headed by "fsdp_unit=block, zero3_gather=..."). The
    header names only these; the machine-readable line keeps every non-default one."""
    if field in ("fsdp_unit", "zero3_gather"):
        return p.zero_stage == 3
    if field == "hsdp_reduce":
        return p.zero_stage == 3 and p.dp_shard not in (None, p.dp)
    return p.dp > 1


#: the structural fields every exporter must express (checked by the tests)
DEGREE_FIELDS = ("dp", "dp_shard", "zero_stage", "tp", "sp", "cp", "pp", "schedule", "virtual_stages",
                 "pp_layers", "ep", "recompute", "microbatch_size")
#: the tag of the machine-readable line of the header
META_TAG = "shardplan-meta:"
_DEFAULTS = {name: f.default for name, f in ParallelConfig.model_fields.items()}


@dataclass(frozen=True)
class Imported:
    """A framework config read back (:func:`shardplan.export.import_config`).

    Attributes:
        parallel: the layout, dp and dp_shard filled in (as :func:`shardplan.parallel.validate` fills them).
        devices: world size the config describes (``None`` where the file does not say).
        seq_len: tokens per sequence, where the config says.
        global_batch: sequences per optimizer step, where the config says.
        framework: the framework's registry name.
        precision, optimizer_dtype, moe_capacity_factor: the precision policy, optimizer state and MoE capacity
            factor the config sets, where the importer reads them (Megatron-LM's flags), else None.
        dropout: whether the config trains with dropout (Megatron-LM: --attention-dropout / --hidden-dropout above 0,
            both 0.1 by default), where the importer reads it, else None.
        notes: what the importer read as the closest planner equivalent (printed by ``shardplan import``).
        model_shape: the ModelSpec fields the config's own model settings give (Megatron-LM's --num-layers,
            --hidden-size, ...: :func:`shardplan.export.megatron.model_shape`), written to the plan JSON so that
            ``estimate --plan`` can name where --model differs; empty where the importer reads none.
        attention: 'naive' where the config runs an unfused attention core (Megatron-LM ``--attention-backend
            unfused`` / ``local``), applied by ``estimate --plan`` as --attention naive; else None.
    """

    parallel: ParallelConfig
    devices: int | None = None
    seq_len: int | None = None
    global_batch: int | None = None
    framework: str = ""
    precision: str | None = None
    optimizer_dtype: str | None = None
    moe_capacity_factor: float | None = None
    dropout: bool | None = None
    notes: tuple[str, ...] = ()
    model_shape: dict[str, int] = field(default_factory=dict)
    attention: str | None = None

    def to_plan(self) -> dict[str, Any]:
        """The plan JSON object that ``--plan`` reads (:func:`shardplan.loaders.read_plan_file`):
        ``{"parallel": {...}, "devices": N, "training": {...}, "imported_from": name}``, plus ``"model_shape": {...}``
        where the config gives the model's shape."""
        training = {"seq_len": self.seq_len, "global_batch_size": self.global_batch}
        training.update({k: v for k, v in (("precision", self.precision), ("optimizer_dtype", self.optimizer_dtype),
                                           ("moe_capacity_factor", self.moe_capacity_factor),
                                           ("dropout", self.dropout), ("attention", self.attention)) if v is not None})
        plan = {"parallel": self.parallel.model_dump(mode="json"), "devices": self.devices, "training": training,
                "imported_from": self.framework}
        return {**plan, "model_shape": dict(self.model_shape)} if self.model_shape else plan


@dataclass(frozen=True)
class ExportContext:
    """Everything an exporter reads.

    Attributes:
        estimate: the planner's :class:`~shardplan.cost.step.Estimate` of the layout (validated
            parallel config, model, hardware, training, step time, MFU, memory).
        command: the ``shardplan`` command line that reproduces the export.
    """

    estimate: Any
    command: str = ""

    @property
    def p(self) -> ParallelConfig:
        """The validated layout (dp and dp_shard filled in)."""
        return self.estimate.parallel

    @property
    def layout(self) -> Any:
        """The :class:`~shardplan.parallel.Layout` (microbatches, stage_layers, n_devices)."""
        return self.estimate.layout

    @property
    def training(self) -> Any:
        """The :class:`~shardplan.specs.training.TrainingSpec`."""
        return self.estimate.training


@dataclass(frozen=True)
class Exporter:
    """One framework: how to write a plan and how to read its config back.

    Attributes:
        name: registry key (``--to NAME``).
        title: the framework's name as its docs write it.
        source: version and file the option names come from (cited in every file written).
        suffix: the default file suffix.
        expresses: ParallelConfig fields beyond :data:`DEGREE_FIELDS` that the config writes.
        write: ``ExportContext -> str`` (raises ConfigError where the framework cannot express the plan).
        read: ``(text, devices) -> Imported`` (raises ConfigError on a config it cannot read).
        comment: the line-comment prefix of the format (``""``: JSON, numbers under ``_shardplan``).
        precisions: the precision policies (:data:`shardplan.specs.training.PRECISION_POLICIES`) the
            written config runs; another one is refused (:func:`check_training`).
        optimizer_dtypes: the ``TrainingSpec.optimizer_dtype`` values the config writes; another one is
            refused (:func:`check_training`).
        moe_capacity: whether the config sets MoE token dropping at a capacity factor
            (``TrainingSpec.moe_capacity_factor``; Megatron-LM ``--moe-expert-capacity-factor``); a plan priced
            with one is refused by the others (their MoE layers run dropless).
        dropout: whether the config sets the model's dropout (Megatron-LM: ``--attention-dropout`` /
            ``--hidden-dropout``, whose defaults are 0.1, so it writes both either way); a plan priced with
            dropout is refused by the others (:func:`check_training`).
        seq_key: the config's own name of the sequence length (``max_target_length``, ``--seq-length``), for the
            messages of :func:`shardplan.export.import_config`.
        search_pins: layout fields pinned for ``plan --export``'s last search, when no plan of its rankings can
            be written: values the config can write (EasyDeL: pp 1, no pipeline axis; ep 1, its ep axis is not
            the plan's; sp off, no Megatron sequence parallelism; ZeRO-3, what its fsdp axis runs).
    """

    name: str
    title: str
    source: str
    suffix: str
    expresses: tuple[str, ...]
    write: Callable[[ExportContext], str]
    read: Callable[[str, int | None], Imported]
    comment: str = "#"
    precisions: tuple[str, ...] = ("bf16-mixed",)
    optimizer_dtypes: tuple[str, ...] = ("fp32",)
    dropout: bool = False
    moe_capacity: bool = False
    seq_key: str = "seq_len"
    search_pins: Mapping[str, Any] = field(default_factory=dict)


def check_kv_replication(ctx: ExportContext, exporter: Exporter) -> None:
    """Refuse a layout that replicates KV heads (tp does not divide n_kv_heads): none of the frameworks
    has an option for it (their attention splits the KV projection over tp). ``kv_replication=True``
    with a tp that divides n_kv_heads changes nothing and is not refused.

    Raises:
        ConfigError: naming tp and n_kv_heads.
    """
    p, kv = ctx.p, ctx.estimate.model.kv_heads
    if p.kv_replication and kv % p.tp:
        raise refuse(exporter.title, f"tp={p.tp} > n_kv_heads={kv} with replicated KV heads (no option for it)",
                     f"no exporter; a tp dividing {kv}")


#: exporters whose config cannot select an unfused attention core (the planner's attention='naive'), and why
NO_NAIVE_ATTENTION = {
    "torchtitan": "torchtitan's models call PyTorch scaled_dot_product_attention (or FlexAttention), fused kernels",
    "nanotron": "nanotron's Llama calls FlashAttention-2"}


def check_training(training, exporter: Exporter, moe: bool = True, hardware=None) -> None:
    """Refuse a precision policy or optimizer-state dtype the exporter does not write (the config would
    run another one). Independent of the layout: no other ranked plan can fix it, so ``plan --export``
    checks it before trying the ranking. With ``hardware`` (a HardwareSpec) the precision the message suggests is one
    the hardware runs (V100: no bf16), or the message says that none of the exporter's does.

    Raises:
        ConfigError: naming the value, what the exporter writes and who writes the value.
    """
    def refuse_setting(field: str, value: str, written: tuple[str, ...], who: str) -> ConfigError:
        where = f"{who} write{'' if ', ' in who else 's'} it" if who else "no exporter writes it"
        use = f"use --{field.replace('_', '-')} {written[0]}"
        if field == "precision" and hardware is not None:
            from shardplan.specs.training import PRECISION_POLICIES
            runs = [w for w in written if hardware.runs_dtype(PRECISION_POLICIES[w].compute_dtype)]
            use = f"use --precision {runs[0]}" if runs else f"none of them runs on {hardware.name}"
        return ConfigError(f"{exporter.title} cannot express {field}={value!r}: it writes "
                           f"{field} {fmt_legal(written)} ({use}); {where}",
                           field=field, value=value, legal=list(written))
    if training.dropout and not exporter.dropout:
        from shardplan.export import EXPORTERS  # the registry imports this module
        writers = ", ".join(e.title for e in EXPORTERS.values() if e.dropout) or "no exporter"
        raise ConfigError(f"{exporter.title} cannot express dropout: its config does not set the model's dropout "
                          f"(use --no-dropout); {writers} writes it", field="dropout", value=True, legal=[False])
    if moe and training.moe_capacity_factor is not None and not exporter.moe_capacity:
        from shardplan.export import EXPORTERS  # the registry imports this module
        writers = ", ".join(e.title for e in EXPORTERS.values() if e.moe_capacity) or "no exporter"
        raise ConfigError(f"{exporter.title} cannot express moe_capacity_factor={training.moe_capacity_factor:g}: its "
                          f"config runs the experts dropless (leave --moe-capacity-factor out); {writers} writes it",
                          field="moe_capacity_factor", value=training.moe_capacity_factor, legal=[None])
    opt = training.optimizer_dtype
    if opt not in exporter.optimizer_dtypes:
        who = {"bf16-moments": "Megatron-LM (--use-precision-aware-optimizer --exp-avg-dtype bf16)",
               "bf16": "MaxText (weight_dtype bfloat16, with --precision bf16-mixed)"}
        err = refuse_setting("optimizer_dtype", opt, exporter.optimizer_dtypes, who.get(opt, ""))
        if training.framework.optimizer_dtype == opt:  # not asked for: say where it came from
            err = ConfigError(f"{err} ({opt} is the {training.framework.label} profile's optimizer state)",
                              field=err.field, value=err.value, legal=err.legal)
        raise err
    name = training.precision.name
    if name not in exporter.precisions:
        who = {"fp8-mixed": "Megatron-LM (--fp8-format)", "fp8-params": "Megatron-LM (--fp8-param-gather)",
               "nvfp4-mixed": "Megatron-LM (--fp4-format e2m1 --fp4-recipe nvfp4)",
               "fp32": "DeepSpeed (bf16 off)",
               "bf16-mixed-fp32-grads": "Megatron-LM (--accumulate-allreduce-grads-in-fp32)"}
        from shardplan.export import EXPORTERS  # the registry imports this module
        writers = ", ".join(e.title for e in EXPORTERS.values() if name in e.precisions)
        raise refuse_setting("precision", name, exporter.precisions, who.get(name, writers))
    _check_program(training, exporter)


def _check_program(training, exporter: Exporter) -> None:
    """The parts of the program a config must say for its run to be the one priced: a chunked loss (MaxText only), an
    in-place cross-entropy (Megatron-LM only), an unfused attention core (:data:`NO_NAIVE_ATTENTION`).

    Raises:
        ConfigError: naming the setting, why the exporter cannot write it and who can.
    """
    if training.framework.loss_chunks > 1 and exporter.name != "maxtext":
        raise ConfigError(f"{exporter.title} cannot express loss_chunks={training.framework.loss_chunks}: its config has "
                          "no chunked loss, so the file would run the whole microbatch's logits at once (use a profile "
                          "without loss_chunks); MaxText writes it (num_vocab_tiling)", field="loss_chunks",
                          value=training.framework.loss_chunks, legal=[1])
    if training.framework.loss == "in_place" and exporter.name != "megatron":
        raise ConfigError(f"{exporter.title} cannot express loss='in_place' (the {training.framework.label} profile's): "
                          "its config has no in-place cross-entropy, so the file would keep the logits' gradient beside "
                          "the logits (use a profile without loss=in_place); Megatron-LM writes it "
                          "(--cross-entropy-loss-fusion --cross-entropy-fusion-impl te)", field="loss", value="in_place",
                          legal=["fused", "eager"])
    if training.attention == "naive" and exporter.name in NO_NAIVE_ATTENTION:
        raise ConfigError(f"{exporter.title} cannot express attention='naive': {NO_NAIVE_ATTENTION[exporter.name]}, so "
                          "the file would run a fused kernel the plan was not priced with (use --attention flash); "
                          "Megatron-LM writes it (--attention-backend unfused), and a DeepSpeed / Accelerate run takes "
                          "the model code's attention (Hugging Face attn_implementation='eager' is the unfused core)",
                          field="attention", value="naive", legal=["flash"])


def refuse(framework: str, missing: str, alternatives: str) -> ConfigError:
    """The error of a plan a framework cannot express: what is missing and which frameworks can.

    Returns the :class:`~shardplan.errors.ConfigError` to raise (exit code 2 in the CLI)."""
    return ConfigError(f"{framework} cannot express this plan: {missing}; {alternatives} can express that part "
                       f"(or change the layout: shardplan plan --fix ...)", field="export", value=framework)


def refuse_first(framework: str, checks: list[tuple[bool, str, str]]) -> None:
    """Raise :func:`refuse` for the first ``(bad, missing, alternatives)`` check that holds.

    Raises:
        ConfigError: the first failing check's message (exit code 2 in the CLI).
    """
    for bad, missing, who in checks:
        if bad:
            raise refuse(framework, missing, who)


def check_unexpressed(p: ParallelConfig, exporter: Exporter, alternatives: Mapping[str, str]) -> None:
    """Refuse a field set away from its default that the exporter neither writes nor treats as runtime
    behaviour (``etp`` equal to tp is its default: the experts split as the dense layers).

    Raises:
        ConfigError: naming the field, its value and the frameworks in ``alternatives`` (field -> text).
    """
    skip = set(DEGREE_FIELDS) | set(BEHAVIOUR_FIELDS) | set(exporter.expresses) | {"kv_replication"}
    for name, default in _DEFAULTS.items():
        if name in skip:
            continue
        value = getattr(p, name)
        if name == "etp" and value == p.tp:  # the experts' tp equal to tp: what leaving etp out means
            continue
        if value != default:
            shown = ",".join(map(str, value)) if isinstance(value, tuple) else repr(value)
            raise refuse(exporter.title, f"{name}={shown} has no option in its config",
                         alternatives.get(name) or _who_expresses(name))


def _who_expresses(name: str) -> str:
    """The titles of the exporters that write field ``name`` (``Exporter.expresses``), or 'another framework'."""
    from shardplan.export import EXPORTERS
    titles = [e.title for e in EXPORTERS.values() if name in e.expresses]
    return " or ".join(titles) if titles else "another framework"


def _host_memory_text(e) -> str:
    """``"; host memory per host: 850.5 GiB of 2,048 GiB"`` for a layout that offloads state to the host
    (:attr:`~shardplan.cost.step.Estimate.host_memory_per_host`, bytes; "not checked" where the hardware gives no
    host memory, "(does NOT fit)" above it), else ``""``."""
    per_host = e.host_memory_per_host
    if not per_host:
        return ""
    limit = e.hardware.host_memory_bytes
    of = f" of {limit / 2**30:,.0f} GiB" + (" (does NOT fit)" if per_host > limit else "") if limit else " (not checked)"
    return f"; host memory per host: {per_host / 2**30:,.1f} GiB{of}"


def _band_lines(e) -> list[str]:
    """The held-out 80% band of the prediction (:func:`shardplan.accuracy_band.estimate_band`), as ``estimate``
    prints it, and whether the prediction lies above it ([] without a band): new-user pass 57b found TPU exports headed
    by MFUs above the planner's own band, with nothing said."""
    from shardplan.accuracy_band import band_text, estimate_band
    band = estimate_band(e)
    if band is None:
        return []
    per_device = e.tokens_per_s / e.layout.n_devices
    high = band.measured_range(per_device)[1]
    above = (f"; the prediction ({per_device:,.0f}) is above the whole band: the planner has been fast on at least 90% "
             "of such runs" if per_device > high else "")
    return [f"80% band of measured tokens/s for such a prediction: {band_text(band, per_device)}{above}"]


def header_lines(ctx: ExportContext, exporter: Exporter) -> list[str]:
    """The comment block every exported file opens with (without comment markers): model, hardware,
    layout, predicted step time, MFU and memory per device, the framework's source, the runtime
    behaviour the planner assumed, and the command that reproduces the file."""
    e, p = ctx.estimate, ctx.p
    gib = 2**30
    lines = [
        f"shardplan export --to {exporter.name}: {exporter.title} config written from a shardplan plan",
        f"option names: {exporter.source}",
        f"model: {e.model.name} ({e.model.n_params / 1e9:.2f}B parameters)",
        f"hardware: {ctx.layout.n_devices} x {e.hardware.name} (scale-up domain {e.hardware.scale_up_size})",
        f"training: seq_len {e.training.seq_len}, global batch {e.training.global_batch_size} sequences, "
        f"{ctx.layout.microbatches} microbatch{'' if ctx.layout.microbatches == 1 else 'es'} per step, precision {e.training.precision.name}, "
        f"optimizer state {e.training.optimizer_dtype}",
        f"layout: {p.short()}",
        f"predicted step time ({e.training.framework.label} profile): {fmt_seconds(e.step_s)}; MFU: {e.mfu:.1%}"
        # a low-precision plan's MFU is of its own peak; published tables quote the bf16 peak's (twice as large)
        + (f" of the {e.training.precision.compute_dtype} peak ({e.mfu_of_bf16_peak:.1%} of the bf16 peak)"
           if e.training.precision.quantized else "") + "; "
        f"memory per device: "
        f"{e.memory.total / gib:.1f} GiB of {e.hardware.hbm_bytes / gib:.0f} GiB"
        f"{'' if e.fits else ' (does NOT fit)'}{_host_memory_text(e)}; bound by {e.bound_by}",
        *_band_lines(e),
    ]
    assumed = [f"{f}={getattr(p, f)}" for f in BEHAVIOUR_FIELDS if f not in exporter.expresses
               and behaviour_applies(f, p)]
    # the routing the MoE costs were priced with is the run's data, not a config option (breaker pass 2)
    assumed += [f"moe_routing={e.training.moe_routing}"] if e.model.is_moe else []
    if assumed:
        lines.append("runtime behaviour assumed (not a config option here): " + ", ".join(assumed))
    if ctx.command:
        lines.append(f"reproduce: {ctx.command}")
    meta = {"n_layers": e.model.n_layers, "devices": ctx.layout.n_devices}
    behaviour = {f: getattr(p, f) for f in BEHAVIOUR_FIELDS
                 if f not in exporter.expresses and getattr(p, f) != _DEFAULTS[f]}
    if behaviour:  # what the config cannot say, read back by import_config (a lossless round trip)
        meta["behaviour"] = behaviour
    lines.append(f"{META_TAG} {json.dumps(meta)}")
    return lines


def read_meta(text: str) -> dict[str, Any]:
    """The ``shardplan-meta: {...}`` line of an exported file (n_layers, devices, and ``behaviour``: the
    :data:`BEHAVIOUR_FIELDS` the plan set away from their defaults), or ``{}``: what a
    framework's config leaves to its model code but an importer needs (e.g. the stages per rank of an
    interleaved schedule)."""
    m = re.search(re.escape(META_TAG) + r" (\{[^\n]*\})", text)  # to the line's last brace: the object may nest
    if not m:
        return {}
    try:
        return json.loads(m.group(1).replace('\\"', '"'))
    except json.JSONDecodeError:
        return {}


def model_features(model: Any) -> list[str]:
    """The architecture features of ``model`` (a ModelSpec) a framework's model code must implement beyond a plain
    Llama block (pre-norm RMSNorm, SwiGLU, grouped-query RoPE attention, no biases), as short names: 'MoE', 'MLA',
    'QK-norm', 'qkv bias', 'linear biases', 'LayerNorm', 'a 2-matrix MLP', 'sandwich norms', 'sliding-window
    attention', 'chunked attention', 'logit softcapping', 'learned positions', 'ALiBi'."""
    checks = [(model.is_moe, "MoE"), (model.is_mla, "MLA"), (model.qk_norm != "none", "QK-norm"),
              (model.qkv_bias and not model.linear_bias, "qkv bias"), (model.linear_bias, "linear biases"),
              (model.norm == "layernorm", "LayerNorm"), (model.mlp != "swiglu", "a 2-matrix MLP"),
              (model.norms_per_layer > 2, "sandwich norms"),
              (model.sliding_window is not None and model.local_attention == "sliding", "sliding-window attention"),
              (model.sliding_window is not None and model.local_attention == "chunked", "chunked attention"),
              (model.attention_softcap is not None or model.final_logit_softcap is not None, "logit softcapping"),
              (model.position == "learned", "learned positions"), (model.position == "alibi", "ALiBi")]
    return [name for cond, name in checks if cond]


def model_support_line(model: Any, framework: str, supported: Sequence[str], models: str) -> str | None:
    """A header line when ``model`` has features (:func:`model_features`) none of ``framework``'s shipped models
    implements (``supported``; ``models`` names them with the commit read): the file carries the layout, the model
    code is the user's. New-user pass 57: Gemma 2 written for torchtitan and nanotron without a word."""
    missing = [f for f in model_features(model) if f not in supported]
    if not missing:
        return None
    return (f"note: {framework} ships no model with {', '.join(missing)} ({models}): this file carries the layout; "
            f"{model.name}'s model code is yours to bring")


def comment_block(ctx: ExportContext, exporter: Exporter, extra: list[str] | None = None) -> str:
    """:func:`header_lines` (plus ``extra`` lines) as comment lines ending in a blank line."""
    lines = header_lines(ctx, exporter) + list(extra or [])
    return "\n".join(f"{exporter.comment} {line}".rstrip() for line in lines) + "\n\n"


def header_dict(ctx: ExportContext, exporter: Exporter, extra: list[str] | None = None) -> dict[str, Any]:
    """The header as a JSON value (JSON has no comments): the ``_shardplan`` key of a JSON export (``extra`` lines
    after :func:`header_lines`)."""
    e = ctx.estimate
    return {"note": "written by shardplan; JSON has no comments, so the planner's numbers are here",
            "lines": header_lines(ctx, exporter) + list(extra or []), "model": e.model.name, "hardware": e.hardware.name,
            "devices": ctx.layout.n_devices, "seq_len": e.training.seq_len, "step_s": e.step_s, "mfu": e.mfu,
            "memory_per_device_bytes": e.memory.total, "framework": e.training.framework.label, "command": ctx.command,
            "source": exporter.source}


def stage_split(ctx: ExportContext) -> tuple[int, ...]:
    """Transformer layers on each pipeline stage (:attr:`shardplan.parallel.Layout.stage_layers`)."""
    return ctx.layout.stage_layers


def even_layers_per_virtual_stage(ctx: ExportContext, framework: str, alternatives: str) -> int:
    """Layers per (virtual) pipeline stage when every stage holds the same number.

    Raises:
        ConfigError: an uneven split (``pp_layers`` or a balanced uneven split), which ``framework``
            cannot write.
    """
    split, v = stage_split(ctx), ctx.p.virtual_stages
    if len(set(split)) > 1:
        raise refuse(framework, f"an uneven pipeline split {list(split)} (one layer count per stage only)",
                     alternatives)
    return split[0] // v


def parallel_from(values: dict[str, Any]) -> ParallelConfig:
    """A ParallelConfig from imported values, dp_shard filled as :func:`shardplan.parallel.validate`
    fills it (1 without ZeRO, dp when not given).

    Raises:
        ConfigError: a value the field rejects.
    """
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    values = dict(values)
    for name, value in values.items():  # a config's true is not a degree of 1 (a plan file refuses it too)
        if isinstance(value, bool) and ParallelConfig.model_fields[name].annotation in (int, int | None):
            raise ConfigError(f"imported config: {name}={value!r} is not a whole number; legal: an integer >= 1",
                              field=name, value=value)
    if values.get("zero_stage", 0) == 0:
        values["dp_shard"] = 1
    elif values.get("dp_shard") is None:
        values["dp_shard"] = values.get("dp")
    try:
        return ParallelConfig(**values)
    except ValidationError as e:
        raise config_error(e, "imported config") from None


def require(mapping: Mapping[str, Any], key: str, framework: str) -> Any:
    """``mapping[key]``, or a ConfigError naming the missing key of the framework's config."""
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise ConfigError(f"{framework} config has no {key!r}: cannot read the layout back",
                          field="import", value=key)
    return mapping[key]


#: what a section of each format is called in messages (a TOML table, a JSON object, a YAML mapping)
_SECTION_WORDS = {"torchtitan": "table", "deepspeed": "JSON object"}


def section(cfg: Mapping[str, Any], key: str, framework: str, where: str = "", required: bool = False) -> dict:
    """The section ``cfg[key]`` of a framework config (a YAML mapping, TOML table, JSON object): ``{}`` where the key
    is absent or null, unless ``required``. ``where`` prefixes the key in messages (``"zero_optimization."``).

    Raises:
        ConfigError: a required section missing, or a value that is not a mapping (``parallelism = 3``,
            ``"zero_optimization": []``), naming the key, the value and what is expected.
    """
    noun = _SECTION_WORDS.get(framework.lower(), "mapping")
    value = cfg.get(key) if isinstance(cfg, Mapping) else None
    if value is None:
        if required:
            require(cfg, key, framework)  # the usual "has no 'key'" message
            raise ConfigError(f"{framework} {where}{key} is null; legal: a {noun} of its settings", field=key,
                              value=None)
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{framework} {where}{key}={short_repr(value)} is not a {noun}; legal: a {noun} of "
                          f"{key} settings (key = value entries)", field=key, value=short_repr(value))
    return dict(value)


def flag(cfg: Mapping[str, Any], key: str, framework: str, default: bool = False, where: str = "") -> bool:
    """The boolean ``cfg[key]`` (``default`` where absent or null). A string such as ``"false"`` is refused, not read
    by its truthiness (``bool("false")`` is True), and so are 0 / 1: the frameworks type these keys as booleans.

    Raises:
        ConfigError: naming the key, its value and the legal true / false.
    """
    value = cfg.get(key) if isinstance(cfg, Mapping) else None
    if value is None:
        return default
    if not isinstance(value, bool):
        kind = ("a string" if isinstance(value, str) else "a number" if isinstance(value, (int, float))
                else "a list or mapping")
        raise ConfigError(f"{framework} {where}{key}={short_repr(value)}; legal: true, false (a boolean, not {kind})",
                          field=key, value=value, legal=[True, False])
    return value


def whole(cfg: Mapping[str, Any], key: str, framework: str, default: int | None = None, least: int = 1,
          most: int = MAX_BATCH_TOKENS, where: str = "") -> int | None:
    """The whole-number ``cfg[key]`` from ``least`` to ``most`` (by default the largest count the planner takes,
    :data:`shardplan.limits.MAX_BATCH_TOKENS`; ``default`` where absent; None stays None when the
    default is None: the config does not say it).

    Raises:
        ConfigError: a string (``max_target_length: x``), a float, a boolean or a number out of range, naming the
            key, the value and the legal range.
    """
    value = cfg.get(key, default) if isinstance(cfg, Mapping) else default
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise ConfigError(f"{framework} {where}{key}={short_repr(value)}; legal: a whole number from {least:,} to "
                          f"{most:,}", field=key, value=short_repr(value))
    return value


@dataclass
class Degrees:
    """Mesh-axis degrees of a mesh framework (MaxText, EasyDeL): ``data`` replicas x ``fsdp`` shards
    x ``expert`` = dp; see :func:`dp_axes`."""

    data: int = 1
    fsdp: int = 1
    expert: int = 1
    extra: dict[str, int] = field(default_factory=dict)


def dp_axes(p: ParallelConfig, framework: str, alternatives: str) -> Degrees:
    """Split dp over the mesh axes data (replicas), fsdp (ZeRO-3 shards) and expert of a framework
    whose logical rules shard the dense weights over the expert axis too (MaxText's ``embed`` rule,
    EasyDeL's fsdp+ep): ep is carved from the ZeRO-3 shard group, so ep > 1 needs zero_stage 3 and
    ep dividing dp_shard.

    Raises:
        ConfigError: ep > 1 without ZeRO-3, or ep not dividing dp_shard (ep carved from cp).
    """
    if p.ep > 1 and p.zero_stage != 3:
        raise refuse(framework, f"ep={p.ep} with zero_stage={p.zero_stage}: its expert mesh axis also shards the "
                     f"dense weights (ZeRO-3 over ep)", alternatives)
    if p.zero_stage != 3:
        return Degrees(data=p.dp)
    if p.dp_shard % p.ep:
        raise refuse(framework, f"ep={p.ep} that does not divide the ZeRO-3 group dp_shard={p.dp_shard} "
                     f"(expert parallelism carved from cp)", alternatives)
    return Degrees(data=p.dp // p.dp_shard, fsdp=p.dp_shard // p.ep, expert=p.ep)


#: a shell variable use: ``${NAME}``, ``${NAME:-default}`` / ``${NAME-default}`` (groups 1-3) or ``$NAME`` (group 4)
_VAR = re.compile(r"\$\{([A-Za-z_]\w*)(?:(:?)([-=])([^}]*))?\}|\$([A-Za-z_]\w*)")
#: ``${NAME:-"default"}`` / ``${NAME-'default'}``: a default in quotes (Megatron-LM's examples/mixtral script:
#: ``NNODES=${SLURM_NNODES:-"1"}``), read as the unquoted default
_QUOTED_DEFAULT = re.compile(r"\$\{([A-Za-z_]\w*)(:?[-=])([\"'])([^\"'}]*)\3\}")
#: ``NAME=value`` at the start of a statement: a bare word, or a quoted string (which may span lines)
_ASSIGN = re.compile(r"(?:^|(?<=[;\n]))[ \t]*(?:export[ \t]+)?(?P<name>[A-Za-z_]\w*)(?P<plus>\+?)="
                     r"(?:(?P<computed>\$\(|`)|(?P<value>\"[^\"]*\"|'[^']*'|[^\s;#\"'()]*)(?=[ \t]*(?:[;\n#]|$)))")


#: the key of an expansion's variables (``env``) under which the names whose value bash computes and the importer
#: does not (``$(...)``, a loop variable, ``read``, ``unset``) are listed, space-separated: not a shell name
COMPUTED = "\0computed"
#: ``$(( expression ))``: bash integer arithmetic (one level of parentheses inside)
_ARITH = re.compile(r"\$\(\(((?:[^()]|\([^()]*\))*)\)\)")
#: what an arithmetic expression may hold once its names are replaced by their integer values
_ARITH_TEXT = re.compile(r"^[\d\s+\-*/%()]*$")


def arithmetic(expression: str, env: dict[str, str]) -> str | None:
    """The value of a bash ``$(( expression ))`` (bash manual, "Shell Arithmetic": integers; ``/`` truncates toward
    zero, ``%`` takes the dividend's sign) whose names (``MBS``, ``$MBS``, ``${MBS}``) all hold integers in ``env``,
    as a decimal string; None where a name is unset or not an integer, or the expression uses an operator other than
    ``+ - * / %`` and parentheses (a launch script computes a batch or a node count, nothing more)."""
    import ast

    def value(m: re.Match) -> str:
        v = env.get(m.group(1) or m.group(2) or m.group(3), "")
        return v if re.fullmatch(r"-?\d+", v.strip()) else "x"
    text = re.sub(r"\$\{(\w+)\}|\$(\w+)|\b([A-Za-z_]\w*)\b", value, expression)
    if not _ARITH_TEXT.match(text) or not text.strip():
        return None

    def ev(node):  # the integer arithmetic of the five operators, bash's rounding
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and b == 0:
                raise ZeroDivisionError
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: int(a / b) if abs(a) < 2**52 else a // b,
                   ast.Mod: lambda: int(math.fmod(a, b))}
            if type(node.op) in ops:
                return ops[type(node.op)]()
        raise ValueError(node)
    try:
        result = ev(ast.parse(text.strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None
    return str(result) if abs(result) < 2**63 else None


#: a statement that only assigns: an optional ``export`` / ``local`` / ``declare`` / ``typeset`` / ``readonly`` (with
#: options such as ``-i``), then one or more ``NAME=value`` words (a bare word or a quoted string on the line)
_ASSIGN_WORD = r"[A-Za-z_]\w*\+?=(?:\"[^\"]*\"|'[^']*'|[^\s;#\"'()]*)"
_ASSIGN_LINE = re.compile(rf"^(?P<indent>[ \t]*)(?:(?:export|local|declare|typeset|readonly)(?:[ \t]+-\w+)*[ \t]+)?"
                          rf"(?P<words>{_ASSIGN_WORD}(?:[ \t]+{_ASSIGN_WORD})*)[ \t]*(?P<rest>(?:[;#].*)?)$")
#: statements after which a variable holds a value the importer does not know: ``unset NAME...``, ``read [-r] NAME...``,
#: ``for NAME in ...`` (after the loop it holds the last word, inside it each in turn)
_UNKNOWN_AFTER = re.compile(r"^[ \t]*(?:unset(?:[ \t]+-[vf])?|read(?:[ \t]+-[A-Za-z]+)*|for)[ \t]+"
                            r"(?P<names>[A-Za-z_]\w*(?:[ \t]+[A-Za-z_]\w*)*)(?=[ \t]*(?:$|;|\bin\b|<))")


def _normalize_shell(text: str) -> str:
    """``text`` with the statements :func:`expand_variables` reads rewritten to the one-assignment-per-statement form
    its scan knows, line by line outside multi-line quotes: ``TP=4 PP=2``, ``export TP=4 PP=2``, ``local TP=8``,
    ``declare -i TP=4``, ``readonly PP=2`` and ``typeset CP=2`` assign each name (bash); ``read NAME`` and ``for NAME
    in ...`` make the name's value unknown from there (``NAME=$(unknown)``: a value the shell computes, which no
    ``${NAME:-default}`` replaces), ``unset NAME`` unsets it (``NAME=$(unset)``: a default applies again)."""
    out, quote = [], ""
    for line in text.split("\n"):
        m = None if quote else _ASSIGN_LINE.match(line)
        keyword = m is not None and not re.match(r"[ \t]*[A-Za-z_]\w*\+?=", line)
        words = re.findall(_ASSIGN_WORD, m.group("words")) if m else []
        if m and (keyword or len(words) > 1):
            out.extend(m.group("indent") + w for w in words)
            rest = m.group("rest").lstrip()
            if rest.startswith(";") and rest[1:].strip():
                out.append(m.group("indent") + rest[1:].lstrip())
        else:
            u = None if quote else _UNKNOWN_AFTER.match(line)
            if u:
                how = "unset" if line.lstrip().startswith("unset") else "unknown"
                out.extend(f"{n}=$({how})" for n in u.group("names").split() if n != "in")
            out.append(line)
        quote = _open_quote(line, quote)
    return "\n".join(out)


#: the first line of a shell function definition: ``name() {``, ``function name {`` (the brace may be on the next
#: line), with what follows the brace on that line
_FUNCTION = re.compile(r"^(?P<indent>[ \t]*)(?:function[ \t]+(?P<kw>[A-Za-z_][\w-]*)(?:[ \t]*\(\))?|"
                       r"(?P<name>[A-Za-z_][\w-]*)[ \t]*\(\))[ \t]*(?P<brace>\{)?(?P<rest>.*)$")


def _function_end(lines: list[str], i: int, indent: str, rest: str) -> int | None:
    """The index of the line closing the function whose body starts after ``lines[i]`` (``rest``: the header line's text
    after its brace): the same line where it ends in ``}`` (``f() { TP=2; }``), else the first later line that is
    ``}`` (or ``};``) at the header's indentation or less; None where none is (the text is then read whole)."""
    if re.search(r"(?:^|[;\s])\}[ \t]*(?:#.*)?$", rest):
        return i
    for j in range(i + 1, len(lines)):
        stripped = lines[j].strip()
        lead = lines[j][:len(lines[j]) - len(lines[j].lstrip())]
        if stripped in ("}", "};") and len(lead) <= len(indent.expandtabs()):
            return j
    return None


def drop_uncalled_functions(text: str) -> str:
    """``text`` without the shell functions it defines and never calls (bash runs a function's body only where it is
    called: a breaker's ``llama2_70b() { TP=8; PP=4; ... }`` beside the called ``llama2_7b`` priced the 70B layout);
    a called function's body stays where it is written, read as the assignments and commands it holds. A function
    counts as called where its name begins a statement elsewhere (or follows ``$(``, ``then``, ``do``, ``&&``, ...)."""
    lines = text.split("\n")
    spans, i = [], 0
    while i < len(lines):
        m = _FUNCTION.match(lines[i])
        if m and (m.group("brace") or (i + 1 < len(lines) and lines[i + 1].strip().startswith("{"))):
            rest = m.group("rest") if m.group("brace") else lines[i + 1].strip()[1:]
            start = i if m.group("brace") else i + 1
            end = _function_end(lines, start, m.group("indent"), rest)
            if end is None:
                return text
            spans.append((m.group("kw") or m.group("name"), i, end))
            i = end + 1
            continue
        i += 1
    if not spans:
        return text
    keep = [True] * len(lines)
    for name, a, b in spans:
        outside = "\n".join(line for k, line in enumerate(lines) if not a <= k <= b)
        if not re.search(rf"(?:^|[;&|({{`]|\bthen|\bdo|\belse)[ \t]*{re.escape(name)}(?![\w-])(?![ \t]*\(\))",
                         outside, re.M):
            keep[a:b + 1] = [False] * (b + 1 - a)
    return "\n".join(line if k else "" for line, k in zip(lines, keep))


#: ``NAME=(`` / ``NAME+=(`` opening a bash array, or a use ``${NAME[@]}`` / ``${NAME[*]}``, quoted or not
_ARRAY = re.compile(r"(?:(?:^|(?<=[;\n]))[ \t]*(?:(?:export|local|declare|typeset|readonly)(?:[ \t]+-\w+)*[ \t]+)?"
                    r"(?P<name>[A-Za-z_]\w*)(?P<plus>\+?)=\()|(?P<q>\"?)\$\{(?P<use>[A-Za-z_]\w*)\[(?P<index>[@*]|\d+)\]\}(?P=q)")


def _array_body(text: str, start: int) -> int:
    """The index of the ``)`` closing the array whose ``(`` ends just before ``start`` (quotes and nested
    parentheses skipped; a ``#`` comment runs to the line's end); ``len(text)`` where it is not closed."""
    depth, quote, i = 1, "", start
    while i < len(text):
        c = text[i]
        if quote:
            i += 2 if (quote == '"' and c == "\\") else 1
            quote = "" if c == quote else quote
            continue
        if c in "\"'":
            quote = c
        elif c == "#" and (i == start or text[i - 1] in " \t\n("):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def expand_arrays(text: str) -> str:
    """``text`` with each use of a bash array the script fills itself (``ARGS=( --a 1 --b 2 )``, ``ARGS+=( ... )``,
    possibly over several lines) replaced by its elements as written, in order as bash reads them: ``"${ARGS[@]}"``
    and ``${ARGS[*]}`` become the words ``--a 1 --b 2`` (each element keeps its own quotes, so a quoted element stays
    one word under ``"${ARGS[@]}"``, as bash expands it). Comments inside the parentheses are left out; an array the
    script does not fill stays as written."""
    arrays: dict[str, str] = {}
    out, pos = [], 0
    for m in _ARRAY.finditer(text):
        if m.start() < pos:
            continue
        if m.group("name"):
            end = _array_body(text, m.end())
            body = " ".join(re.sub(r"(?:^|(?<=[ \t]))#.*$", "", line).strip()
                            for line in text[m.end():end].split("\n")).strip()
            body = _ARRAY.sub(lambda u: _array_use(u, arrays), body)  # ALL=("${PAR[@]}" ...): PAR's words now
            arrays[m.group("name")] = f"{arrays.get(m.group('name'), '')} {body}".strip() if m.group("plus") else body
            out.append(text[pos:end + 1])
            pos = end + 1
        elif m.group("use") in arrays:
            out.append(text[pos:m.start()] + _array_use(m, arrays))
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _array_use(m: re.Match, arrays: dict[str, str]) -> str:
    """The words an array use of :data:`_ARRAY` expands to: every element (``[@]`` / ``[*]``) or the one at a whole
    index (``${A[1]}``, empty past the end, as bash gives); the use as written for an array the script does not fill
    or whose elements do not split (an open quote)."""
    if not m.group("use") or m.group("use") not in arrays:
        return m.group(0)
    body = arrays[m.group("use")]
    if m.group("index") in ("@", "*"):
        return body
    try:
        elements = shlex.split(body)
    except ValueError:
        return m.group(0)
    i = int(m.group("index"))
    return shlex.quote(elements[i]) if i < len(elements) else ""


def shell_pieces(text: str, comments: bool = False) -> Iterator[tuple[str, bool]]:
    """``text`` as bash's quoting reads it: (piece, quoted) where a piece is one character or a backslash escape (two
    characters, outside quotes or inside double quotes) and ``quoted`` says whether it lies inside a quoted string
    (the quote characters themselves count as quoted; bash manual, "Quoting"). With ``comments``, a ``#`` that begins
    a word outside quotes and the rest of its line are left out (bash manual, "Comments"; the newline is kept)."""
    quote, i = "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and quote != "'":
            yield text[i:i + 2], bool(quote)
            i += 2
            continue
        if comments and not quote and c == "#" and (i == 0 or text[i - 1] in " \t\n;|&()"):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        was = bool(quote) or c in "\"'"
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        yield c, was
        i += 1


def strip_comments(text: str) -> str:
    """``text`` without its bash comments (:func:`shell_pieces`): a ``#`` that begins a word outside quotes runs to
    the end of its line; a ``#`` inside a word (``--log-dir /tmp/run#1``), a quoted one, ``$#`` and ``${#A[@]}`` do
    not. Newlines are kept."""
    return "".join(piece for piece, _ in shell_pieces(text, comments=True))


#: a statement that names an entry point without running it: an assignment (its uses are substituted already), text
#: printed or tested, a file listed, copied or edited (``[ -f .../pretrain_gpt.py ]``, ``cp pretrain_gpt.py ...``)
NOT_A_RUN = re.compile(r"\s*(?:[A-Za-z_]\w*\+?=|(?:echo|printf|cat|ls|cp|mv|rm|ln|test|\[\[?|grep|sed|awk|head|tail|"
                        r"wget|curl|git|chmod|touch|mkdir|readlink|realpath|cd|source|\.)(?=\s|$))")
#: a heredoc's start (``<<WORD``, ``<<-WORD``, ``<<'WORD'``)
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_]\w*)\2")


def without_heredocs(text: str) -> str:
    """``text`` with the bodies of its heredocs blanked (the lines up to the delimiter: text a command reads, not
    statements bash runs: a usage message naming ``torchrun pretrain_gpt.py --tensor-model-parallel-size 8``)."""
    lines, out, end = text.split("\n"), [], None
    for line in lines:
        if end is not None:
            out.append("")
            if (line.strip() if end[1] else line) == end[0]:
                end = None
            continue
        out.append(line)
        m = _HEREDOC.search(line)
        if m:
            end = (m.group(3), m.group(1) == "-")
    return "\n".join(out)


#: ``#SBATCH`` options of a Slurm batch script that set the job's environment: ``--nodes=N`` / ``-N N`` (Slurm sets
#: SLURM_NNODES and SLURM_JOB_NUM_NODES) and ``--export=ALL,NAME=value,...`` (sbatch manual)
_SBATCH_NODES = re.compile(r"^#SBATCH[ \t]+(?:--nodes[= ]|-N[ \t]*)(\d+)\b", re.M)
_SBATCH_EXPORT = re.compile(r"^#SBATCH[ \t]+--export[= ](\S+)", re.M)
_SBATCH_TASKS = re.compile(r"^#SBATCH[ \t]+--ntasks-per-node[= ](\d+)\b", re.M)


def sbatch_env(text: str) -> dict[str, str]:
    """The environment a Slurm batch script's ``#SBATCH`` header gives the job (sbatch manual: ``--nodes`` sets
    ``SLURM_NNODES`` and ``SLURM_JOB_NUM_NODES``, ``--ntasks-per-node`` ``SLURM_NTASKS_PER_NODE``;
    ``--export=ALL,NAME=value`` exports each NAME), which a script reads as ``NNODES=${SLURM_NNODES:-1}``; {} without
    a header."""
    env: dict[str, str] = {}
    nodes = _SBATCH_NODES.findall(text)
    if nodes:
        env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = nodes[-1]
    tasks = _SBATCH_TASKS.findall(text)
    if tasks:  # sbatch: --ntasks-per-node sets SLURM_NTASKS_PER_NODE, the tasks srun starts on each node
        env["SLURM_NTASKS_PER_NODE"] = tasks[-1]
    for spec in _SBATCH_EXPORT.findall(text):
        for item in spec.split(","):
            name, eq, value = item.partition("=")
            if eq and re.fullmatch(r"[A-Za-z_]\w*", name):
                env[name] = value.strip("\"'")
    return env


#: characters a variable's value (and four times that, the whole script) may reach once substituted: a config is a
#: few KiB, the importers refuse files over 1 MiB
MAX_EXPANDED = 2**20


def expand_variables(text: str, env: dict[str, str] | None = None) -> str:
    """``text`` with the shell variables a launch script sets itself substituted, in order as bash
    reads them: ``NAME=value``, ``NAME="a quoted value"`` (which may span lines, as Megatron-LM's example
    scripts keep their flags: ``GPT_ARGS="--tensor-model-parallel-size 2 ..."``) or ``export NAME=value``
    define them, also after ``;`` and before a ``# comment`` (a value computed by a command is not known and stays
    unset, but for a quoted list of words around it); ``$NAME``, ``${NAME}``, ``${NAME:-default}``
    (the default where the name is unset or empty) and ``${NAME-default}`` (where unset) use them. Variables
    set elsewhere (the environment, ``$(...)``) stay as written. An ``if`` / ``elif`` / ``else`` / ``fi`` chain whose
    tests the script's own values decide (:func:`shell_condition`) keeps the branch bash runs and drops the others
    (``PR=${PR:-bf16}`` then ``if [ $PR = fp16 ]; then ... elif [ $PR = bf16 ]; then ...``: the bf16 branch), and so
    does a ``case $MODEL_SIZE in 7B) ...;; 13B) ...;; esac`` whose word is known; where a test is undecided every
    branch is read, the last assignment winning.

    Raises:
        ConfigError: a variable or the script expanding past :data:`MAX_EXPANDED` (four times that for the script).
    """
    env = {} if env is None else env
    text = drop_uncalled_functions(text.replace("\r\n", "\n"))
    text = _QUOTED_DEFAULT.sub(r"${\1\2\4}", _normalize_shell(text))  # ${NNODES:-"1"}: bash drops the quotes
    blocks = _if_blocks(text.split("\n"))
    result = _expand_blocks(blocks, env, top=True) if blocks is not None else _expand_chunk(text, env)
    result = expand_arrays(result)
    if len(result) > 4 * MAX_EXPANDED:  # many uses of a large variable
        raise ConfigError(f"the script expands past {4 * MAX_EXPANDED:,} characters once its variables are substituted; "
                          "legal: a launch script a few KiB long", field="import", value=len(result))
    return result


def _substitute(text: str, env: dict[str, str], unknown: list | None = None) -> str:
    """``text`` with the ``$NAME`` forms :func:`expand_variables` reads substituted from ``env`` (a name not set stays as
    written, or its default; each such name is appended to ``unknown`` when it is given)."""
    def sub(m: re.Match) -> str:
        name = m.group(1) or m.group(5)
        value = env.get(name)
        if value is None and name in env.get(COMPUTED, "").split():  # set to a value the shell computes: no default
            if unknown is not None:
                unknown.append(name)
            return m.group(0)
        if m.group(4) is not None and (value is None or (m.group(2) == ":" and value == "")):
            if m.group(3) == "=":  # ${NAME:=default} assigns the default as well (bash)
                env[name] = m.group(4)
            return m.group(4)
        if value is None and unknown is not None:
            unknown.append(name)
        # an unquoted use word-splits on newlines too (bash IFS): a multi-line GPT_ARGS="..." stays on its command
        return value.replace("\n", " ") if value is not None else m.group(0)
    return _ARITH.sub(lambda m: arithmetic(m.group(1), env) or m.group(0), _VAR.sub(sub, text))


def _expand_chunk(text: str, env: dict[str, str]) -> str:
    """:func:`expand_variables` on a stretch of script without a decided conditional, reading and extending ``env``
    (the names whose value bash computes and the importer does not are listed under :data:`COMPUTED`)."""
    out, pos = [], 0
    for m in _ASSIGN.finditer(text):
        out.append(_substitute(text[pos:m.start()], env))
        name, append = m.group("name"), m.group("plus") == "+"
        if m.group("computed"):
            # a value bash computes ($(...), `...`) replaces the earlier one, so the name is unknown from here
            # (NNODES=1 then NNODES=$(scontrol ... | wc -l) was read as 1 node); integer arithmetic on known values
            # ($((MBS * 64)), $((TP*2))) is evaluated as bash does (:func:`arithmetic`)
            arith = _ARITH.match(text, m.start("computed"))
            value = arithmetic(arith.group(1), env) if arith else None
            end = arith.end() if arith else m.end()
            unset = text.startswith("$(unset)", m.start("computed"))  # _normalize_shell's form of ``unset NAME``
            names = [n for n in env.get(COMPUTED, "").split() if n != name]
            env[COMPUTED] = " ".join(names + ([name] if value is None and not unset else []))
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
            out.append(text[m.start():end])
            pos = end
            continue
        value = _substitute(m.group("value"), env)
        quoted = value[:1] in "\"'" and len(value) > 1
        # a value computed by a command ($(...), `...`) is unknown, unless it is a quoted string that only holds one
        # among other words (CMD=" `pwd`/pretrain_gpt.py --tensor-model-parallel-size 4 ..."): kept, the command
        # substitution left as written
        if len(value) > MAX_EXPANDED:  # A="$A$A" forty times: 2**40 characters
            raise ConfigError(f"the script's variable {name} expands past {MAX_EXPANDED:,} characters (a value "
                              "that doubles itself); legal: a launch script whose variables hold its flags",
                              field="import", value=name)
        if ("$(" not in value and "`" not in value) or (quoted and " " in value.strip()):
            value = value[1:-1] if quoted else value
            # NAME+=" --flag" appends to the string (bash); a NAME+=(...) array append is a parenthesis, not read here
            env[name] = env.get(name, "") + value if append else value
        else:  # a quoted string holding a command among other words: unknown as a whole
            env.pop(name, None)
        out.append(text[m.start():m.end()] if m.group("value")[:1] in "\"'" else _substitute(text[m.start():m.end()],
                                                                                          env))
        pos = m.end()
    out.append(_substitute(text[pos:], env))
    return "".join(out)


#: an ``if`` / ``elif`` line of a launch script: the test, then ``then`` on the line (or alone on the next one)
_IF_LINE = re.compile(r"^\s*(if|elif)\s+(.+?)(?:\s*;\s*then)?\s*$")
#: the most conditional blocks :func:`_if_blocks` reads (a launch script has a few dozen)
MAX_IF_BLOCKS = 2000


@dataclass
class _IfChain:
    """One ``if ... fi`` of a script: (test or None for ``else``, header lines, body blocks) per branch, and the
    ``fi`` line; or one ``case ... esac`` (``case_word`` set): (patterns, None, body lines) per branch and its lines
    as written (``raw``)."""

    branches: list = field(default_factory=list)
    fi: str = "fi"
    case_word: str | None = None
    raw: list = field(default_factory=list)


#: ``case WORD in`` and one ``PATTERN)`` / ``(PATTERN)`` branch head of it (the rest of the line is the branch's)
_CASE_LINE = re.compile(r"^\s*case\s+(.+?)\s+in\s*$")
_CASE_PATTERN = re.compile(r"^\s*\(?\s*([^()]+?)\s*\)(.*)$")


def _case_block(lines: list[str], i: int, word: str) -> tuple[_IfChain, int] | None:
    """The ``case`` whose ``case WORD in`` line is ``lines[i - 1]``: its branches (patterns split at ``|``, bodies up to
    ``;;``) and the index after ``esac``; None for a nested ``case`` / ``if`` or a missing ``esac`` (then the script is
    read whole, as before)."""
    chain = _IfChain(case_word=word, raw=[lines[i - 1]])
    body: list[str] | None = None
    while i < len(lines):
        line, i = lines[i], i + 1
        chain.raw.append(line)
        if line.strip() == "esac":
            return chain, i
        if _CASE_LINE.match(line) or _IF_LINE.match(line):
            return None
        if body is None:
            m = _CASE_PATTERN.match(line)
            if m is None:
                if line.strip():
                    return None
                continue
            body = []
            chain.branches.append(([p.strip().strip("\"'") for p in m.group(1).split("|")], None, body))
            line = m.group(2)
        if ";;" in line:
            body.append(line.split(";;")[0])
            body = None
        else:
            body.append(line)
    return None


def _if_blocks(lines: list[str]) -> list | None:
    """The script's lines as plain text and :class:`_IfChain` blocks (nested), or None where its ``if`` / ``fi`` do
    not pair up or a quote is left open (then the script is read as before, every branch at once). An ``if`` counts
    only with its ``then`` (a Python ``if x:`` inside an echoed string does not), outside quotes."""
    stack: list[list] = [[]]  # the body being read at each depth: len(stack) == len(chains) + 1
    chains: list[_IfChain] = []
    quote, count, i = "", 0, 0
    while i < len(lines):
        line, i = lines[i], i + 1
        case = None if quote else _CASE_LINE.match(line)
        if case:
            found = _case_block(lines, i, case.group(1))
            if found is None:
                return None
            stack[-1].append(found[0])
            i = found[1]
            continue
        m = None if quote else _IF_LINE.match(line)
        inline = m is not None and re.search(r";\s*then\s*$", line) is not None
        if m and (inline or (i < len(lines) and lines[i].strip() == "then")):
            header = line if inline else f"{line}\n{lines[i]}"
            i += 0 if inline else 1
            if m.group(1) == "if":
                chains.append(_IfChain())
                stack[-1].append(chains[-1])
            elif not chains:
                return None
            else:
                stack.pop()
            stack.append([])
            chains[-1].branches.append((m.group(2), header, stack[-1]))
            count += 1
        elif not quote and line.strip() in ("else", "fi"):
            if not chains:
                return None
            stack.pop()
            if line.strip() == "else":
                stack.append([])
                chains[-1].branches.append((None, line, stack[-1]))
            else:
                chains.pop().fi = line
        else:
            stack[-1].append(line)
            quote = _open_quote(line, quote)
        if count > MAX_IF_BLOCKS:
            return None
    return stack[0] if not chains and not quote else None


def _open_quote(line: str, quote: str) -> str:
    """The quote character left open at the end of ``line`` when ``quote`` was open at its start ('' for none):
    single quotes take everything literally, double quotes honour backslash escapes, a ``#`` outside quotes ends the
    line."""
    i = 0
    while i < len(line):
        c = line[i]
        if quote == '"' and c == "\\":
            i += 2
            continue
        if not quote and c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        if c in "\"'" and (not quote or quote == c):
            quote = "" if quote else c
        i += 1
    return quote


def _expand_blocks(blocks: list, env: dict[str, str], top: bool = False) -> str:
    """Expand :func:`_if_blocks`' blocks in order: text as :func:`_expand_chunk`; an ``if`` chain by the branch its
    tests choose (:func:`_expand_chain`). Every line keeps its newline but the script's last (``top``)."""
    out: list[str] = []
    text: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            text.append(block)
            continue
        if text:
            out.append(_expand_chunk("\n".join(text) + "\n", env))
            text = []
        out.append(_expand_chain(block, env))
    if text:
        out.append(_expand_chunk("\n".join(text) + ("" if top else "\n"), env))
    return "".join(out)


def _expand_chain(chain: _IfChain, env: dict[str, str]) -> str:
    """One ``if`` chain: the first branch whose test holds (``else`` when none does) where every test before it is
    decided, expanded alone; otherwise every branch, headers included, as a script read whole. A ``case``: the first
    branch a pattern of which matches the word (:func:`fnmatch.fnmatchcase`, bash's glob), where the word is known."""
    if chain.case_word is not None:
        return _expand_case(chain, env)
    for test, _, body in chain.branches:
        held = True if test is None else shell_condition(test, env)
        if held is None:
            break
        if held:
            return _expand_blocks(body, env)
    else:
        return ""  # no branch runs
    parts = []
    for _, header, body in chain.branches:
        parts += [_expand_chunk(header + "\n", env), _expand_blocks(body, env)]
    return "".join(parts) + _expand_chunk(chain.fi + "\n", env)


def _expand_case(chain: _IfChain, env: dict[str, str]) -> str:
    """A ``case`` (:func:`_expand_chain`): the matching branch's lines, nothing when none matches, the lines as written
    where the word holds a variable the script never sets."""
    import fnmatch
    unknown: list[str] = []
    word = _substitute(chain.case_word or "", env, unknown).strip("\"'")
    if unknown:
        return _expand_chunk("\n".join(chain.raw) + "\n", env)
    for patterns, _, body in chain.branches:
        if any(fnmatch.fnmatchcase(word, _substitute(p, env)) for p in patterns):
            return _expand_chunk("\n".join(body) + "\n", env)
    return ""


#: the binary tests of ``[ ... ]`` / ``[[ ... ]]`` / ``test`` that :func:`shell_condition` decides
_STRING_TESTS = {"=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_NUMBER_TESTS = {"-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-gt": lambda a, b: a > b,
                 "-ge": lambda a, b: a >= b, "-lt": lambda a, b: a < b, "-le": lambda a, b: a <= b}


def shell_condition(test: str, env: dict[str, str]) -> bool | None:
    """Whether an ``if`` test of a launch script holds, with the script's own variables ``env``, or None where it
    cannot be told: ``[ A op B ]``, ``[[ A op B ]]`` and ``test A op B`` with =, ==, != (``[[ ]]``'s glob patterns
    read literally) and -eq, -ne, -gt, -ge, -lt, -le on integers; ``-z A`` / ``-n A``; ``!``; several joined by
    ``&&`` / ``||`` (left to right, as bash groups them). A variable the script never sets is unset (empty) in every
    test, the script's default run (reading every branch merged layouts no branch runs: a breaker's tp 4 and pp 2 of
    two branches), and listed for a note (:data:`UNSET_IN_TESTS`); one the shell computes leaves the test undecided. E.g.
    with PR=bf16: ``[ $PR = fp16 ]`` False; ``[ "$USE_PP" = "1" ]`` False while USE_PP is unset; ``[ "$TP" -gt 1 ]``
    None (an empty operand is no integer)."""
    parts = re.split(r"\s*(&&|\|\|)\s*", test.strip())
    held = _atom(parts[0], env)
    for op, atom in zip(parts[1::2], parts[2::2]):
        right = _atom(atom, env)
        if op == "&&":
            held = False if held is False or right is False else None if None in (held, right) else True
        else:
            held = True if held is True or right is True else None if None in (held, right) else False
    return held


#: the key of an expansion's variables (``env``) under which the names a test read as unset are listed (space-
#: separated: :func:`_atom`), for the importer's note
UNSET_IN_TESTS = "\0unset_in_tests"


def _atom(text: str, env: dict[str, str]) -> bool | None:
    """One bracketed test of :func:`shell_condition`. A variable the script never sets is read as unset (empty), as
    bash runs the script without it in the environment, and listed under :data:`UNSET_IN_TESTS` (the importer says
    so); one whose value the shell computes (:data:`COMPUTED`) leaves the test undecided."""
    unknown: list[str] = []
    _substitute(text, env, unknown)
    if set(unknown) & set(env.get(COMPUTED, "").split()):
        return None
    if unknown:
        env[UNSET_IN_TESTS] = " ".join(dict.fromkeys([*env.get(UNSET_IN_TESTS, "").split(), *unknown]))
    try:
        words = shlex.split(_substitute(text, {**env, **{n: "" for n in unknown}}))
    except ValueError:
        return None
    negate = bool(words) and words[0] == "!"
    words = words[1:] if negate else words
    if words[:1] in (["["], ["[["]) and words[-1:] in (["]"], ["]]"]):
        words = words[1:-1]
    elif words[:1] == ["test"]:
        words = words[1:]
    else:
        return None
    held: bool | None = None
    if len(words) == 2 and words[0] in ("-z", "-n"):
        held = (words[1] == "") == (words[0] == "-z")
    elif len(words) == 1:  # [ STRING ]: true when non-empty (bash; [ -z $UNSET ] is [ -z ], true)
        held = words[0] != ""
    elif len(words) != 3:
        return None
    elif words[1] in _STRING_TESTS:
        held = _STRING_TESTS[words[1]](words[0], words[2])
    elif words[1] in _NUMBER_TESTS and all(re.fullmatch(r"-?\d+", w) for w in (words[0], words[2])):
        held = _NUMBER_TESTS[words[1]](int(words[0]), int(words[2]))
    return None if held is None else held != negate


def is_quoted_command(word: str) -> bool:
    """A word bash read from quotes that holds a command line of its own: whitespace inside and a ``--flag`` or a
    ``.yml`` / ``.yaml`` path (:func:`shell_words`)."""
    return bool(re.search(r"\s", word.strip()) and re.search(r"(?:^|\s)--[A-Za-z]|\.ya?ml(?:\s|$)", word))


def shell_words(line: str, depth: int = 0) -> list[str]:
    """The words bash reads from one (continuation-joined, variable-expanded) script line (``shlex``; ``[]`` for an
    unbalanced quote), with a quoted word that is itself a command line split into its words in turn: the flags
    inside ``srun bash -c "$LAUNCHER $CMD"`` (the BLOOM / Megatron-DeepSpeed launchers) and the overrides inside
    ``xpk workload create --command="python3 -m MaxText.train base.yml ${MAXTEXT_ARGS}"`` (AI-Hypercomputer
    tpu-recipes run_recipe.sh) are what those programs receive. A word is split again when it holds whitespace and
    a ``--flag`` or a ``.yml`` / ``.yaml`` path (:func:`is_quoted_command`) and is run as a command
    (:func:`runs_command`: after ``-c`` or as ``--command=``), not an assignment's value (``GPT_ARGS="--num-layers
    $NLAYERS ..."``: its value is what the variable's uses expand to) nor text an ``echo`` prints; at most four
    quoting levels."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:  # an unbalanced quote: not a command line
        return []
    out: list[str] = []
    for i, w in enumerate(words):
        if depth < 4 and is_quoted_command(w) and runs_command(words, i):
            out.extend(shell_words(w, depth + 1))
        else:
            out.append(w)
    return out


def runs_command(words: list[str], i: int) -> bool:
    """``words[i]`` is a command another program runs: the argument of a shell's ``-c`` (``srun bash -c "..."``), of
    ``eval`` (``eval "${run_cmd}"``, Pai-Megatron-Patch's launchers) or of a ``--command`` option (``xpk workload create --command="..."``, Cluster Toolkit's ``gcluster job submit
    --command "..."`` in tpu-recipes), not text an ``echo`` prints or an assignment's value."""
    return (i > 0 and words[i - 1] in ("-c", "--command", "eval")) or words[i].startswith("--command=")


def near_miss(word: str, known: str, separator: str) -> bool:
    """Whether ``word`` (a flag or key a config gives) that ``difflib`` finds close to ``known`` (one the importer
    reads) is a typo of it rather than another option of the framework: not when one extends the other by more
    than two characters or by a ``separator``-joined word (``--tp-comm-overlap-cfg`` beside ``--tp-comm-overlap``,
    ``pipeline_parallel_schedule_csv`` beside ``pipeline_parallel_schedule``: real options); yes for a letter or two
    added or dropped at the end (``--tensor-model-parallel-sizes``, ``tensor_parallel_degre``; breaker pass 55: these
    were skipped without a note) and for any other close spelling."""
    if word.startswith(known) or known.startswith(word):
        diff = word[len(known):] if word.startswith(known) else known[len(word):]
        return len(diff) <= 2 and separator not in diff
    return True


def check_near_misses(keys: Any, read: Any, layout: Any, separator: str, framework: str, stops: bool,
                      where: str = "") -> list[str]:
    """Notes for the ``keys`` of a config (or section ``where``) that are a typo of one in the importer's ``read`` set
    (``difflib`` ratio 0.9 and :func:`near_miss`); a typo of one of ``layout`` (keys that set the layout or the model's
    shape) is refused, since read without it the layout would take the key's default and the import exit 0
    (breaker pass 55: MaxText ``ici_tensor_paralelism: 4`` and DeepSpeed ``"zero_optimisation"`` priced tp = 1 and
    ZeRO-0). ``stops``: the framework's own parser refuses an unknown key (MaxText's pyconfig); otherwise it ignores
    it and runs the default (DeepSpeed's top level, NeMo's open model config), which the message says.

    Raises:
        ConfigError: a near miss of a ``layout`` key, naming the key, the one it is close to and what the framework
            does with it."""
    import difflib
    known = [str(k) for k in read]
    notes = []
    for key in keys:
        word = str(key)
        if word in known:
            continue
        # the same key in another case or with the other separator (``ICI_TENSOR_PARALLELISM``, ``ici-tensor_...``,
        # ``Zero_Optimization``, ``BF16``: breaker pass 55b) is a typo too; the rest by difflib on that spelling
        plain = word.lower().replace("-" if separator == "_" else "_", separator)
        # ... or its letters swapped (``mdoe`` for ``mode``: difflib scores a transposition low in a short word)
        same = [k for k in known if k.lower() == plain] or [k for k in known if len(k) == len(plain) and
                                                             sorted(k) == sorted(plain) and len(plain) >= 4]
        # a short key (``stge`` for ``stage``: 0.89) cannot reach 0.9 with one letter off: 0.8 up to 6 letters
        cutoff = 0.8 if len(plain) <= 6 else 0.9
        close = same or [k for k in difflib.get_close_matches(plain, known, n=1, cutoff=cutoff)
                         if near_miss(plain, k, separator)]
        if not close:
            continue
        does = "its parser stops on it" if stops else f"{framework} ignores it and runs {close[0]}'s default"
        if close[0] in layout:
            raise ConfigError(f"{where}{word} is not a {framework} key ({does}); did you mean {close[0]}? legal: "
                              f"{close[0]}", field=word, value=word, legal=[close[0]])
        notes.append(f"{where}{word} is not read (did you mean {close[0]}? {does}); the layout is read without it")
    return notes
