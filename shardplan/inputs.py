"""Inputs without a user interface: names, paths and flag values -> specs.

One place used by the CLI (:mod:`shardplan.cli`), the web app (:mod:`shardplan.web.app`) and the
library:

* :func:`model_spec` -- preset name, Hugging Face ``config.json`` (file or directory) or a YAML/JSON
  file of :class:`~shardplan.specs.model.ModelSpec` fields -> ``ModelSpec``;
* :func:`hardware_spec` -- preset name or YAML/JSON file -> ``HardwareSpec``;
* :func:`training_spec` -- seq_len, global batch in sequences *or* tokens, precision, attention,
  framework profile name -> ``TrainingSpec``;
* :func:`parallel_config` -- layout values (flags, form fields) and/or a plan JSON -> ``ParallelConfig``;
* :data:`LAYOUT_OPTIONS` -- every :class:`~shardplan.parallel.ParallelConfig` field as a
  :class:`LayoutOption` (name, kind, Literal choices, bounds, default, description), read from the
  pydantic fields. The CLI's layout flags and the web form's layout controls are generated from it,
  so a new ParallelConfig field appears in every command and in the form at once.

File formats are parsed by :mod:`shardplan.loaders`. Every error is a
:class:`~shardplan.errors.ConfigError` naming the field, the value and the legal values.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import annotated_types
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from shardplan.errors import ConfigError, fmt_legal, short_repr
from shardplan.loaders import config_error, load_hardware, load_model, read_plan_file
from shardplan.parallel import ParallelConfig
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec, with_fields
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import OPTIMIZER_DTYPES, TrainingSpec, precision_policy

OptionKind = Literal["int", "bool", "choice", "ints", "names"]


@dataclass(frozen=True)
class LayoutOption:
    """One :class:`ParallelConfig` field as a user-facing option (CLI flag, web control).

    Attributes:
        name: the field name, e.g. ``"zero_stage"``.
        kind: ``"int"``, ``"bool"``, ``"choice"`` (a ``Literal``), ``"ints"`` (a tuple of ints,
            written ``9,7``) or ``"names"`` (a tuple of ``Literal`` values, written ``layernorm,moe_act``).
        default: the field's default (``None``: derived, e.g. dp from the device count).
        description: the field's pydantic ``description``.
        choices: the ``Literal`` values of a ``"choice"`` or ``"names"`` field, in declaration order.
        minimum, maximum: inclusive integer bounds from the field's ``gt``/``ge``/``lt``/``le``.
        optional: ``None`` is a legal value (empty means "derive it").
    """

    name: str
    kind: OptionKind
    default: Any
    description: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    optional: bool = False

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``--zero-stage``."""
        return "--" + self.name.replace("_", "-")

    @property
    def default_text(self) -> str | None:
        """The default as shown to a user (``on``/``off`` for a switch), or None (derived)."""
        if self.default is None:
            return None
        return {True: "on", False: "off"}[self.default] if self.kind == "bool" else str(self.default)

    def parse(self, value: Any) -> Any:
        """Check a choice against its Literal values (case-insensitively: ``"1F1B"`` is 1f1b), read
        ``"9,7"`` (or a list) as a tuple of ints and ``"layernorm,moe_act"`` (or a list) as a tuple
        of names; other values are left to pydantic.

        Raises:
            ConfigError: an unknown choice or name (lists the legal ones), an empty entry, or a
                malformed list of ints.
        """
        if value is None:
            return None
        if self.kind == "choice":
            return self._choice(value)
        if self.kind in ("ints", "names") and isinstance(value, str):
            cells = [x.strip() for x in value.split(",")]
            if not value.strip():
                return None
            if "" in cells:  # "16,,16" or a trailing comma: an entry is missing
                example = "9,7" if self.kind == "ints" else ",".join(self.choices[:2])
                raise ConfigError(f"{self.name}={short_repr(value)} has an empty entry; give entries separated by "
                                  f"commas, e.g. {example}", field=self.name, value=value)
            if self.kind == "ints":
                # "1 0", "1_0", "٨" are refused; a negative entry is read, for the check that names it
                if any(not x.isascii() or not x.removeprefix("-").isdigit() for x in cells):
                    raise ConfigError(f"{self.name}={short_repr(value)} must be whole numbers separated by commas, "
                                      "e.g. 9,7", field=self.name, value=value)
                return tuple(int(x) for x in cells)
            value = cells
        if self.kind in ("ints", "names") and isinstance(value, (list, tuple)):
            return tuple(self._choice(x) for x in value) if self.kind == "names" else tuple(value)
        return value  # pydantic names the type

    def _choice(self, value: Any) -> Any:
        """One of :attr:`choices`, matched case-insensitively for text.

        Raises:
            ConfigError: a value that is none of them (lists the legal ones)."""
        if isinstance(value, str):
            value = next((c for c in self.choices if isinstance(c, str) and c.lower() == value.strip().lower()), value)
        if value not in self.choices:
            raise ConfigError(f"{self.name}={short_repr(value)} is unknown; legal: {fmt_legal(self.choices)}",
                              field=self.name, value=value, legal=self.choices)
        return value


def _bounds(info: FieldInfo) -> tuple[int | None, int | None]:
    """Inclusive integer bounds of a field from its annotated_types metadata (gt=0 -> minimum 1)."""
    lo = hi = None
    for m in info.metadata:
        if isinstance(m, annotated_types.Gt):
            lo = m.gt + 1
        elif isinstance(m, annotated_types.Ge):
            lo = m.ge
        elif isinstance(m, annotated_types.Lt):
            hi = m.lt - 1
        elif isinstance(m, annotated_types.Le):
            hi = m.le
    return lo, hi


def _option(name: str, info: FieldInfo) -> LayoutOption:
    """The :class:`LayoutOption` of one pydantic field.

    Raises:
        TypeError: a field without a description or of a type with no option kind (at import, so
            that adding such a field to ParallelConfig fails every test at once).
    """
    ann = info.annotation
    args = typing.get_args(ann)
    optional = typing.get_origin(ann) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        (ann,) = [a for a in args if a is not type(None)]
    if typing.get_origin(ann) is Literal:
        kind, choices = "choice", tuple(typing.get_args(ann))
    elif ann is bool or ann is int:
        kind, choices = ann.__name__, ()
    elif typing.get_origin(ann) is tuple and typing.get_args(ann) == (int, Ellipsis):
        kind, choices = "ints", ()
    elif (typing.get_origin(ann) is tuple and len(typing.get_args(ann)) == 2 and typing.get_args(ann)[1] is Ellipsis
          and typing.get_origin(typing.get_args(ann)[0]) is Literal):
        kind, choices = "names", tuple(typing.get_args(typing.get_args(ann)[0]))
    else:
        raise TypeError(f"ParallelConfig.{name}: type {info.annotation} has no option kind; add one in "
                        f"shardplan/inputs.py:_option")
    if not info.description:
        raise TypeError(f"ParallelConfig.{name} needs Field(description=...): it is the option's help text")
    lo, hi = _bounds(info)
    return LayoutOption(name=name, kind=kind, default=info.default, description=info.description, choices=choices,
                        minimum=lo, maximum=hi, optional=optional)


#: every ParallelConfig field as an option, in declaration order
LAYOUT_OPTIONS: tuple[LayoutOption, ...] = tuple(_option(n, f) for n, f in ParallelConfig.model_fields.items())
#: the same options by field name
LAYOUT_OPTIONS_BY_NAME: dict[str, LayoutOption] = {o.name: o for o in LAYOUT_OPTIONS}


def model_spec(model: str | ModelSpec) -> ModelSpec:
    """A model from a preset name, a Hugging Face ``config.json`` (file or directory) or a YAML/JSON
    file of ModelSpec fields (:func:`shardplan.loaders.load_model`); a ModelSpec is returned as is.

    Raises:
        ConfigError: unknown preset (lists them), unreadable file, unsupported architecture, bad field.
    """
    return model if isinstance(model, ModelSpec) else load_model(model)


def hardware_spec(hardware: str | HardwareSpec, scale_up_size: int | None = None) -> HardwareSpec:
    """Hardware from a preset name or a YAML/JSON file (:func:`shardplan.loaders.load_hardware`),
    with ``scale_up_size`` (devices per NVLink domain / TPU slice) overriding the preset's.

    Raises:
        ConfigError: unknown preset (lists them), unreadable file or invalid field.
    """
    if not isinstance(hardware, HardwareSpec):
        return load_hardware(hardware, scale_up_size=scale_up_size)
    if scale_up_size is None:
        return hardware
    try:
        return HardwareSpec(**with_fields(hardware, {"scale_up_size": scale_up_size}))
    except ValidationError as e:
        raise config_error(e, f"hardware {hardware.name}") from None


def _lower(value):
    """A choice name in lower case (the names are; any case is accepted, as --framework and --moe-dispatcher do);
    anything else as given."""
    return value.lower() if isinstance(value, str) else value


def training_spec(seq_len: int, global_batch: int | None = None, global_batch_tokens: int | None = None,
                  precision: str | None = None, attention: str = "flash", framework: str | FrameworkProfile | None = None,
                  dropout: bool = False, moe_capacity_factor: float | None = None, moe_imbalance: float = 1.0,
                  optimizer_dtype: str | None = None, moe_routing: str = "uniform",
                  sequences_multiple: int = 1) -> TrainingSpec:
    """What one optimizer step processes.

    Args:
        seq_len: tokens per sequence.
        global_batch: sequences per optimizer step; or
        global_batch_tokens: tokens per optimizer step (a multiple of seq_len). Give exactly one.
        precision: a name of :data:`shardplan.specs.training.PRECISION_POLICIES`; None: the framework
            profile's ``default_precision`` (MaxText: fp32-params), else bf16-mixed.
        attention: one of TrainingSpec.attention's Literal values ('flash', 'naive').
        framework: a name of :data:`shardplan.presets.frameworks.FRAMEWORKS` or a profile
            (None: TrainingSpec's default, Megatron-LM).
        dropout: dropout layers on (their masks stored and their element-wise traffic counted).
        moe_capacity_factor, moe_imbalance: MoE token dropping / dropless load (TrainingSpec).
        optimizer_dtype: 'fp32', 'bf16-moments' or 'bf16' (TrainingSpec.optimizer_dtype); None: the
            framework profile's, else 'fp32'.
        moe_routing: 'uniform' or 'round_robin' (TrainingSpec.moe_routing).
        sequences_multiple: the layout's dp x microbatch_size (:meth:`TrainingSpec.from_tokens`).

    Raises:
        ConfigError: both or neither batch given, unknown precision / attention / framework / optimizer_dtype /
            moe_routing, values < 1.
    """
    from shardplan.presets.frameworks import framework_profile
    if (global_batch is None) == (global_batch_tokens is None):
        raise ConfigError("give exactly one of --global-batch (sequences) or --global-batch-tokens",
                          field="global_batch", value=global_batch)
    legal, attention = typing.get_args(TrainingSpec.model_fields["attention"].annotation), _lower(attention)
    if attention not in legal:
        raise ConfigError(f"attention={short_repr(attention)} is unknown; legal: {fmt_legal(legal)}", field="attention",
                          value=attention, legal=legal)
    optimizer_dtype, moe_routing = _lower(optimizer_dtype), _lower(moe_routing)
    if optimizer_dtype is not None and optimizer_dtype not in OPTIMIZER_DTYPES:
        raise ConfigError(f"optimizer_dtype={short_repr(optimizer_dtype)} is unknown; legal: "
                          f"{fmt_legal(OPTIMIZER_DTYPES)}", field="optimizer_dtype", value=optimizer_dtype,
                          legal=OPTIMIZER_DTYPES)
    legal = typing.get_args(TrainingSpec.model_fields["moe_routing"].annotation)
    if moe_routing not in legal:
        raise ConfigError(f"moe_routing={short_repr(moe_routing)} is unknown; legal: {fmt_legal(legal)}",
                          field="moe_routing", value=moe_routing, legal=legal)
    profile = framework_profile(framework) if isinstance(framework, str) else framework
    if precision is None:
        precision = (profile.default_precision if profile is not None else None) or "bf16-mixed"
    common = dict(precision=precision_policy(precision), attention=attention, dropout=dropout,
                  moe_capacity_factor=moe_capacity_factor, moe_imbalance=moe_imbalance,
                  optimizer_dtype=optimizer_dtype, moe_routing=moe_routing)
    if profile is not None:
        common["framework"] = profile
    try:
        if global_batch_tokens is not None:
            return TrainingSpec.from_tokens(seq_len, global_batch_tokens, sequences_multiple, **common)
        return TrainingSpec(seq_len=seq_len, global_batch_size=global_batch, **common)
    except ValidationError as e:
        raise config_error(e) from None


def parallel_config(layout: Mapping[str, Any] | None = None, plan: str | Path | None = None) -> ParallelConfig:
    """A layout from field values (flags, form controls; ``None`` = not given) over a plan JSON file.

    Args:
        layout: ParallelConfig field -> value; choices are checked against their Literal values and
            ``pp_layers`` may be written ``"9,7"``.
        plan: a plan JSON (:func:`shardplan.loaders.read_plan_file`); the values given in
            ``layout`` override the file's.

    Raises:
        ConfigError: an unknown field (lists the legal ones), an unknown choice, or a value the
            field rejects (named with the value given).
    """
    given = {k: v for k, v in (layout or {}).items() if v is not None}
    base = plan_file_values(plan) if plan is not None else {}
    if given.get("recompute", "selective") != "selective" and "recompute_modules" not in given:
        base.pop("recompute_modules", None)  # the file's modules belonged to its selective recompute
    for derived, source in (("dp_shard", ("zero_stage", "dp", "tp", "pp", "cp")), ("dp", ("tp", "pp", "cp")),
                            ("pp_layers", ("pp",)), ("cp_comm", ("cp",))):
        # a plan file's dp_shard (dp) was resolved for its own ZeRO stage and degrees: a flag that changes them
        # re-derives it (ZeRO-0's dp_shard=1 would otherwise keep a new --zero-stage 1 from sharding); its
        # pp_layers split its own pp, so a --pp that differs takes the automatic split of the new pp; its cp_comm
        # went with its own cp (the cp = 1 default 'ring'), so a --cp that differs takes the profile's exchange
        if derived not in given and any(k in given and given[k] != base.get(k) for k in source):
            base.pop(derived, None)
    values = {**base, **given}
    if "schedule" not in values and isinstance(values.get("virtual_stages"), int) and values["virtual_stages"] > 1:
        # virtual stages are model chunks of the interleaved schedule (Narayanan et al. 2021 Sec. 2.2.2): asking
        # for them without a schedule means that schedule, as `plan` reads it
        values["schedule"] = "interleaved"
    if values.get("remat_saved") and "recompute" not in values:
        # the named matmul outputs a full recompute keeps: asking for them without a recompute means full, as `plan`
        # reads it
        values["recompute"] = "full"
    try:
        return ParallelConfig(**with_pipeline_depth(layout_values(values)))
    except ValidationError as e:
        raise config_error(e) from None


def plan_file_values(plan: str | Path) -> dict[str, Any]:
    """The ParallelConfig fields of a plan JSON file, checked strictly: JSON types must match the fields
    (``"tp": true`` and ``"zero_stage": "3"`` are refused, not coerced); every message names the file.

    Raises:
        ConfigError: unreadable or malformed file, an unknown key (lists the legal ones), a wrong type.
    """
    values = read_plan_file(plan)
    for key, value in values.items():  # the flags' text form of a list ("16,16") is not a JSON list
        option = LAYOUT_OPTIONS_BY_NAME.get(key)
        if option is not None and option.kind in ("ints", "names") and isinstance(value, str):
            example = "[16, 16]" if option.kind == "ints" else f'["{option.choices[0]}"]'
            raise ConfigError(f"--plan {plan}: {key}={short_repr(value)} is a text value; legal: a JSON list, e.g. "
                              f"{example} (plan files are typed strictly; the comma-separated form is the flag's)",
                              field=key, value=value)
    try:
        parsed = layout_values(values)
        ParallelConfig.model_validate(parsed, strict=True)  # types first: pp is taken from a valid pp_layers only
        ParallelConfig.model_validate(with_pipeline_depth(parsed), strict=True)
    except ConfigError as e:
        raise ConfigError(f"--plan {plan}: {e}", field=e.field, value=e.value, legal=e.legal) from None
    except ValidationError as e:
        raise config_error(e, f"--plan {plan}") from None
    return parsed


def with_pipeline_depth(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with ``pp`` set to the length of ``pp_layers`` when a layer split is given without
    a pipeline depth (``--pp-layers 10,22`` alone means pp=2); other values unchanged."""
    layers = values.get("pp_layers")
    if isinstance(layers, (list, tuple)) and layers and values.get("pp") is None:
        return {**values, "pp": len(layers)}
    return values


def layout_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check the names of ParallelConfig field values and parse them (:meth:`LayoutOption.parse`).

    Raises:
        ConfigError: an unknown field (lists the legal ones), an unknown choice or malformed list.
    """
    out = {}
    for key, value in values.items():
        option = LAYOUT_OPTIONS_BY_NAME.get(key)
        if option is None:
            legal = list(LAYOUT_OPTIONS_BY_NAME)
            raise ConfigError(f"{short_repr(key)} is not a layout field; legal: {fmt_legal(legal)}", field=key, value=value,
                              legal=legal)
        out[key] = option.parse(value)
    return out


def default_global_batch(parallel: ParallelConfig, n_devices: int) -> int:
    """A global batch (sequences) that every layout accepts: one sequence per data-parallel rank and
    microbatch, and pp microbatches so that every pipeline stage is busy (``dp * microbatch_size * pp``;
    dp = devices / (tp pp cp) when not given). For the commands whose output does not depend on the
    batch (``shardings``, ``validate`` without a batch flag)."""
    p = parallel
    dp = p.dp or max(1, n_devices // (p.tp * p.pp * p.cp))
    return dp * p.microbatch_size * p.pp


class Inputs(NamedTuple):
    """The four specs of one evaluation (unpacks as ``model, hardware, training, parallel``)."""

    model: ModelSpec
    hardware: HardwareSpec | None
    training: TrainingSpec
    parallel: ParallelConfig


def default_framework(hardware: str) -> FrameworkProfile | None:
    """The profile a hardware file was calibrated with (its ``framework:`` key,
    :func:`shardplan.loaders.hardware_framework`), used when ``--framework`` is not given; on a TPU
    without one the ``maxtext`` profile; None for GPU presets and GPU files without it (the caller's
    default, megatron).

    Raises:
        ConfigError: an invalid ``framework`` value (names the file and the field).
    """
    from shardplan.loaders import hardware_framework, load_hardware
    from shardplan.presets.frameworks import framework_profile, profile_from_mapping
    value = hardware_framework(hardware)
    if value is None:
        # TPUs: the maxtext profile (JAX / XLA programs: XLA's collectives and fusion, MaxText's fp32 weights);
        # the megatron default is a PyTorch GPU stack whose kernels and offload options TPUs do not run
        return framework_profile("maxtext") if load_hardware(hardware).kind == "tpu" else None
    where = f"framework of hardware file {hardware}"
    try:
        if isinstance(value, dict):
            return profile_from_mapping(value, where, Path(hardware).parent)
        if value.lower().endswith((".yaml", ".yml", ".json")) and not Path(value).is_absolute():
            value = str(Path(hardware).parent / value)  # a profile file next to the hardware file
        return framework_profile(value)
    except ConfigError as e:
        if str(e).startswith(where):
            raise
        raise ConfigError(f"{where}: {e}", field=e.field, value=e.value, legal=e.legal) from None


def build_inputs(*, model: str | ModelSpec, hardware: str | HardwareSpec | None, devices: int, seq_len: int,
                 global_batch: int | None, global_batch_tokens: int | None, precision: str | None = None,
                 attention: str | None = "flash", framework: str | FrameworkProfile | None = None, dropout: bool = False,
                 scale_up_size: int | None = None, plan: str | Path | None = None,
                 moe_capacity_factor: float | None = None, moe_imbalance: float = 1.0,
                 optimizer_dtype: str | None = None, moe_routing: str = "uniform", search: bool = False,
                 **layout: Any) -> Inputs:
    """All specs from the values of ``shardplan estimate``'s flags (``hardware=None``: no hardware).

    ``layout`` holds ParallelConfig fields (``None`` = not given); with ``plan`` the plan file's values
    are used and the given fields override them. ``search``: the inputs of a search over layouts (``shardplan
    plan``), whose batch in tokens need only be whole sequences (the search picks dp). ``attention`` None (not given): 'naive' on Volta hardware
    (FlashAttention runs on Ampere and newer, FlashAttention-2 README), else 'flash'. ``precision`` None: the
    profile's default, or its fp16 counterpart on hardware without bf16 (:func:`fp16_counterpart`).

    Raises:
        ConfigError: on any invalid input (the message names the field and legal values).
    """
    from shardplan import limits
    limits.check_range("devices", devices, 1, limits.MAX_DEVICES)
    m = model_spec(model)
    hw = hardware_spec(hardware, scale_up_size) if hardware is not None else None
    if isinstance(hardware, str):  # a hardware file's framework section is checked even when --framework replaces it
        from_file = default_framework(hardware)
        framework = from_file if framework is None else framework
    # a search (``plan``) picks dp itself: a batch in tokens need only be whole sequences there
    unit = batch_unit(layout, plan, devices) if global_batch_tokens is not None and not search else 1
    if attention is None:  # not given: what the hardware runs (FlashAttention needs Ampere or newer)
        attention = "naive" if hw is not None and hw.compute_arch == "volta" else "flash"
    try:
        tr = training_spec(seq_len, global_batch, global_batch_tokens, precision, attention, framework, dropout,
                           moe_capacity_factor, moe_imbalance, optimizer_dtype, moe_routing, unit)
    except ConfigError as err:
        if err.field == "global_batch_tokens" and unit == 1:  # the layout's own error first: its degrees set the unit
            _raise_degree_error(m, layout, plan, devices, seq_len, global_batch_tokens, framework)
        raise
    if precision is None and hw is not None:
        tr = with_fp16_counterpart(hw, tr)
        check_profile_precision(hw, tr)
    if hw is not None:
        from shardplan.parallel import fp16_framework_error
        err = fp16_framework_error(tr, hw)
        if err is not None:
            raise err
    pc = parallel_config(layout, plan)
    if hw is not None:
        _check_device_kind(tr.framework, hw, pc)
    if not search:
        from shardplan.parallel import check_moe_imbalance
        check_moe_imbalance(pc, m, tr)
    applied = applied_layout_defaults(tr.framework, pc, layout, plan, seq_len)
    if applied:
        pc = parallel_config({**layout, **applied}, plan)
    return Inputs(m, hw, tr, _file_framework_split(_rescaled_dp(pc, plan, devices, layout), plan, layout, m,
                                                   tr.framework))


def _check_device_kind(framework: FrameworkProfile, hw: HardwareSpec, pc: ParallelConfig) -> None:
    """Refuse a framework profile on an accelerator kind it does not run on (``FrameworkProfile.device_kinds``):
    Megatron-LM, DeepSpeed, torchtitan and the other PyTorch stacks have no TPU backend; and DeepEP off NVIDIA GPUs
    (its kernels use NVLink and NVSHMEM).

    Raises:
        ConfigError: naming the framework (or moe_dispatcher), the hardware and the legal values.
    """
    if hw.kind != "gpu" and pc.moe_dispatcher == "deepep":
        raise ConfigError(f"moe_dispatcher='deepep' runs on NVIDIA GPUs (DeepEP's kernels use NVLink and NVSHMEM); "
                          f"{hw.name} is a {hw.kind.upper()}; legal: 'alltoall', 'allgather'", field="moe_dispatcher",
                          value="deepep", legal=["alltoall", "allgather"])
    check_framework_device(framework, hw)


def check_framework_device(framework: FrameworkProfile, hw: HardwareSpec) -> None:
    """Refuse a framework profile on an accelerator kind outside its ``device_kinds`` (Megatron-LM on a TPU), as
    every command pricing a layout does (``guide`` too: breaker pass 56 got a megatron table on tpu-v5p, exit 0).

    Raises:
        ConfigError: naming the framework, the hardware and the frameworks that run there.
    """
    if hw.kind in framework.device_kinds:
        return
    from shardplan.presets.frameworks import FRAMEWORKS
    legal = [k for k, f in FRAMEWORKS.items() if hw.kind in f.device_kinds]
    kinds = " and ".join(k.upper() + "s" for k in framework.device_kinds) or "no accelerator (device_kinds is empty)"
    raise ConfigError(f"framework={framework.label} runs on {kinds} only; {hw.name} is a {hw.kind.upper()}; legal "
                      f"there: {', '.join(legal)}", field="framework", value=framework.label, legal=legal)


#: the layout fields whose errors come before a batch-size error (they decide dp, and so the batch unit)
_DEGREE_FIELDS = ("tp", "pp", "cp", "ep", "etp", "dp", "dp_shard", "devices")


def _raise_degree_error(m: ModelSpec, layout: Mapping[str, Any], plan: str | Path | None, devices: int, seq_len: int,
                        tokens: int, framework: str | FrameworkProfile | None) -> None:
    """Raise the layout's own error about its parallel degrees (:data:`_DEGREE_FIELDS`), if it has one, for a
    ``global_batch_tokens`` the batch check refused: with degrees that do not divide the devices the batch unit
    (:func:`batch_unit`) is unknown, so the token counts suggested would fail on the degrees. Returns otherwise.

    Raises:
        ConfigError: the layout's degree error (names the field and its legal values).
    """
    from shardplan.parallel import validate
    try:
        # a batch every degree divides (devices x microbatch x pp x flushes sequences): only the degrees are judged
        extra = [layout.get(k) or 1 for k in ("microbatch_size", "pp", "pipeline_flushes")]
        tr = training_spec(seq_len, devices * 64 * math.prod(extra), None, None, "flash", framework)
        pc = parallel_config(layout, plan)
        pc = parallel_config({**layout, **applied_layout_defaults(tr.framework, pc, layout, plan, seq_len)}, plan)
        validate(_rescaled_dp(pc, plan, devices, layout), m, tr, devices)
    except ConfigError as err:
        if err.field in _DEGREE_FIELDS:
            raise
    except ValueError:
        return


#: bf16 policy -> the fp16 policy with the same bytes (specs/training.py), what runs on GPUs without bf16 units
FP16_COUNTERPART = {"bf16-mixed": "fp16-mixed", "bf16-mixed-fp32-grads": "fp16-mixed-fp32-grads"}


def fp16_counterpart(hw: HardwareSpec, precision: str) -> str | None:
    """The fp16 policy that replaces a default bf16 ``precision`` (no ``--precision`` given) on hardware whose
    matrix units have no bf16 but fp16 (V100: Megatron-LM and DeepSpeed runs there use ``--fp16`` /
    ``fp16.enabled``), or None when ``precision`` runs on ``hw`` or has no fp16 counterpart."""
    if hw.runs_dtype("bf16") or not hw.runs_dtype("fp16"):
        return None
    return FP16_COUNTERPART.get(precision)


def with_fp16_counterpart(hw: HardwareSpec, training: TrainingSpec) -> TrainingSpec:
    """``training`` with the fp16 counterpart of its (default) bf16 policy on hardware without bf16
    (:func:`fp16_counterpart`), else ``training`` itself. The counterpart has the same bytes per element
    (specs/training.py), so the resolved policy keeps its bytes (optimizer state, framework buffers) and only its name
    and compute dtype change."""
    alt = fp16_counterpart(hw, training.precision.name)
    if alt is None:
        return training
    precision = training.precision.model_copy(update={"name": alt, "compute_dtype": "fp16"})
    return training.model_copy(update={"precision": precision})


def check_profile_precision(hw: HardwareSpec, training: TrainingSpec) -> None:
    """The precision the framework profile chose (``FrameworkProfile.default_precision``; no ``--precision``
    given) must run on ``hw``.

    Raises:
        ConfigError: the hardware has no peak for its compute dtype; the message says the precision came from the
            profile and how to override it.
    """
    fw = training.framework
    if fw.default_precision is None:
        return
    try:
        hw.peak_flops(training.precision.compute_dtype)
    except ConfigError as e:
        legal = e.legal or []
        raise ConfigError(f"precision {training.precision.name} comes from the default_precision of the framework "
                          f"profile {fw.label} (no --precision was given), and {e}; give --precision "
                          f"{legal[0] if legal else 'bf16-mixed'} (or another legal one) to override the profile's",
                          field="precision", value=training.precision.name, legal=legal) from None


def batch_unit(layout: Mapping[str, Any], plan: str | Path | None, devices: int) -> int:
    """Sequences the global batch must be a multiple of for the layout given (flags over ``plan``) on ``devices``:
    dp x microbatch_size, times pp under the interleaved schedule and times pipeline_flushes with pp > 1 (as
    :func:`shardplan.parallel.validate` checks it); 1 where the layout does not determine dp (a bad layout, whose
    own error comes later)."""
    try:
        pc = _rescaled_dp(parallel_config(layout, plan), plan, devices, layout)
    except ConfigError:
        return 1
    model_par = pc.tp * pc.pp * pc.cp
    dp = pc.dp or (devices // model_par if devices % model_par == 0 else None)
    if dp is None:
        return 1
    pipeline = (pc.pp if pc.schedule == "interleaved" else 1) * pc.pipeline_flushes if pc.pp > 1 else 1
    return dp * pc.microbatch_size * pipeline


def plan_framework_split(plan: str | Path, model: ModelSpec, pp: int) -> tuple[int, ...] | None:
    """The layers per pipeline rank that the framework a plan file was made for places itself, or None when
    it does not (only nanotron's cost-greedy split, :func:`shardplan.parallel.cost_greedy_split`, is placed by
    the framework; ``shardplan import --from nanotron`` writes no ``pp_layers``), when ``pp`` is 1 or above
    the layer count, or when that split has an empty inner stage (which only the cost-greedy rule accepts)."""
    from shardplan.loaders import read_plan_context
    from shardplan.parallel import cost_greedy_split
    from shardplan.presets.frameworks import FRAMEWORKS
    made = FRAMEWORKS.get(str(read_plan_context(plan).get("framework", "")).lower())
    if made is None or made.pipeline_split != "cost_greedy" or not 1 < pp <= model.n_layers:
        return None
    split = cost_greedy_split(model, pp)
    return None if min(split[1:-1], default=1) < 1 or split[0] + split[-1] < 1 else split


def _file_framework_split(pc: ParallelConfig, plan: str | Path | None, layout: Mapping[str, Any], model: ModelSpec,
                          framework: FrameworkProfile) -> ParallelConfig:
    """A plan file's layout with the pipeline split its own framework runs (:func:`plan_framework_split`) when
    another profile prices it; unchanged when the file or a flag gives ``pp_layers``, a flag changes ``pp``
    or the pricing profile splits the same way."""
    if (plan is None or pc.pp_layers is not None or layout.get("pp_layers") is not None
            or framework.pipeline_split == "cost_greedy" or layout.get("pp") not in (None, pc.pp)):
        return pc
    split = plan_framework_split(plan, model, pc.pp)
    return pc if split is None else pc.model_copy(update={"pp_layers": split})


def _rescaled_dp(pc: ParallelConfig, plan: str | Path | None, devices: int, layout: Mapping[str, Any]) -> ParallelConfig:
    """A plan file's layout on another device count: its dp (and a dp_shard that sharded over all of dp) is
    derived again from ``devices``, as a changed degree flag re-derives it (:func:`parallel_config`), unless
    ``--dp`` is given."""
    if plan is None or layout.get("dp") is not None or pc.dp is None:
        return pc
    from shardplan.loaders import read_plan_context
    made = read_plan_context(plan).get("devices")
    if not isinstance(made, int) or made == devices:
        return pc
    full = pc.dp_shard in (None, pc.dp) and layout.get("dp_shard") is None
    return pc.model_copy(update={"dp": None, **({"dp_shard": None} if full else {})})


#: recomputation policies from the least to the most recomputed work: none, then selective (Korthikanti et al.
#: 2022 Sec. 5: attention's softmax and dropout only), then full (every layer's forward again)
RECOMPUTE_COST = ("none", "selective", "full")


def applied_layout_defaults(framework: FrameworkProfile, parallel: ParallelConfig, layout: Mapping[str, Any],
                            plan: str | Path | None = None, seq_len: int | None = None) -> dict[str, bool | int]:
    """The profile's ``layout_defaults`` and ``default_zero_stage`` that apply to ``parallel``: the fields
    neither given in ``layout`` (flags; ``None`` = not given) nor set by the ``plan`` file; {} when none.
    ``sp`` / ``tp_overlap`` only with tp > 1 (both describe the tensor-parallel group): a default ``sp`` is left
    off where the sequence (``seq_len`` / cp) does not split over tp, and a default ``tp_overlap`` where sp ends
    up off (the asynchronous TP communication these defaults describe, nanotron's
    ``tp_linear_async_communication``, runs only in its sequence-parallel mode). ``zero_stage`` only where the
    profile allows that stage with the layout's pp (``FrameworkProfile.zero_stages`` / ``pipeline_zero_stages``;
    :func:`_default_zero_stage`); ``schedule`` (the profile's first) where pp > 1 and the ParallelConfig default
    is not one the profile runs (``FrameworkProfile.schedules``: MaxText's GPipe order); ``cp_comm`` (the profile's
    first) where cp > 1 and the default ring is not one the profile runs (``FrameworkProfile.cp_comms``: DeepSpeed's
    Ulysses); ``recompute``, the
    cheapest policy of :data:`RECOMPUTE_COST` the profile implements, where it lacks the default (a profile with
    ``recomputes: [selective, full]`` takes selective)."""
    set_already = {k for k, v in layout.items() if v is not None} | (set(plan_file_values(plan)) if plan else set())
    out: dict[str, bool | int] = {}
    if framework.layout_defaults and parallel.tp > 1:
        out = {k: v for k, v in framework.layout_defaults.items() if k not in set_already and getattr(parallel, k) != v}
    if out.get("sp") and seq_len is not None and (seq_len // parallel.cp) % parallel.tp and not framework.tp_requires_sp:
        del out["sp"]  # (a framework that cannot run tp without sp keeps it: the error is then about tp)
    if out.get("tp_overlap") and not out.get("sp", parallel.sp):
        del out["tp_overlap"]
    zero = _default_zero_stage(framework, parallel, layout, set_already)
    allowed = (framework.pipeline_zero_stages if parallel.pp > 1 else None) or framework.zero_stages or (0, 1, 2, 3)
    if "zero_stage" not in set_already and zero != parallel.zero_stage and zero in allowed:
        out["zero_stage"] = zero
    runs = framework.schedules
    if (parallel.pp > 1 and not {"schedule", "virtual_stages"} & set_already and runs
            and parallel.schedule not in runs):
        out["schedule"] = runs[0]  # MaxText's pipeline is GPipe-ordered: its runs never ask for 1F1B
    if parallel.cp > 1 and "cp_comm" not in set_already and parallel.cp_comm not in framework.cp_comms:
        out["cp_comm"] = framework.cp_comms[0]  # DeepSpeed's sequence parallelism is Ulysses' AllToAll, not a ring
    policies = framework.recomputes
    if "recompute" not in set_already and policies and parallel.recompute not in policies:
        out["recompute"] = min(policies, key=RECOMPUTE_COST.index)  # the cheapest policy the framework has
    return out


def _default_zero_stage(framework: FrameworkProfile, parallel: ParallelConfig, layout: Mapping[str, Any],
                        set_already: set[str]) -> int:
    """The ZeRO stage a layout without ``zero_stage`` takes: 3 where it gives an option only sharded parameters
    have (``zero3_gather`` other than per-microbatch; ``dp_shard``, the FSDP shard group of HSDP, under a profile
    whose runs do not shard; ``offload_params``, DeepSpeed's offload_param "valid only with stage 3"), 1 for an
    offloaded optimizer under a profile whose default is ZeRO-0 (DeepSpeed's ZeRO-Offload needs a ZeRO stage, "valid
    for ZeRO stage 1, 2, 3": the lowest), else the profile's ``default_zero_stage``."""
    if "zero3_gather" in set_already and parallel.zero3_gather != "per_microbatch":
        return 3
    if "dp_shard" in set_already and parallel.dp_shard not in (None, 1) and framework.default_zero_stage == 0:
        return 3
    if "offload_params" in set_already and parallel.offload_params:
        return 3
    if "offload_optimizer" in set_already and parallel.offload_optimizer and framework.default_zero_stage == 0:
        return 1
    return framework.default_zero_stage
