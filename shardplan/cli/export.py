"""``shardplan export`` (a plan -> a training framework's config) and ``shardplan import`` (a framework's
config -> a plan JSON that ``--plan`` reads). The frameworks and the mapping: :mod:`shardplan.export`,
docs/export.md."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from shardplan.errors import ConfigError
from shardplan.export import EXPORTERS
from shardplan.cli.common import (check_output_path, AttnOpt, BatchOpt, BatchTokOpt, PlanDevicesOpt, DropoutOpt, FrameworkOpt, HardwareOpt,
                                  ModelOpt, MoeCapOpt, MoeImbOpt, MoeRoutingOpt, OptimizerDtypeOpt, PlanOpt,
                                  PlanSeqOpt, PrecisionOpt, ScaleUpOpt, app, config_errors,
                                  err_console, layout_flags)

_NAMES = " | ".join(EXPORTERS)
ToOpt = Annotated[str, typer.Option("--to", help=f"{_NAMES}: the framework whose config to write")]
OutOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="file to write (default, or -: stdout); EasyDeL "
                                                "writes JSON for a .json name, Python otherwise")]
FromOpt = Annotated[str, typer.Option("--from", help=f"{_NAMES}: the framework the file is a config of (nemo, an "
                                      "alias of megatron, also reads NeMo 1.x and Megatron-Bridge training YAMLs)")]
FileArg = Annotated[Path, typer.Argument(help="the framework's config file")]
ImportDevicesOpt = Annotated[Optional[int], typer.Option("--devices", "-n", help=(
    "world size, for a config that does not say it (Megatron-LM flags without a torchrun line, -1 degrees)"))]
ImportOutOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="write the plan JSON here "
                                                      "(default: stdout)")]


#: the export targets that run on TPUs (JAX frameworks)
TPU_EXPORTS = ("maxtext", "easydel")


def render_export(framework: str, estimate, output: Optional[Path], inputs: Optional[dict] = None) -> tuple[str, str]:
    """(exporter name, config text) of an estimated layout for a framework, with the reproducing command
    in its header (``inputs``: the model / hardware / framework arguments as typed, for that command).

    Raises:
        ConfigError: unknown framework or a plan it cannot express (exit code 2).
    """
    from shardplan.errors import ConfigError
    from shardplan.export import export_text, exporter, reproduce_command
    name = exporter(framework).name
    if estimate.hardware.kind == "tpu" and name not in TPU_EXPORTS:
        raise ConfigError(f"--to {name} writes a config for a GPU framework, but hardware {estimate.hardware.name} is a "
                          f"TPU; legal --to for TPUs: {', '.join(TPU_EXPORTS)}", field="to", value=name,
                          legal=list(TPU_EXPORTS))
    text = export_text(name, estimate, reproduce_command(name, estimate, output, inputs), output)
    band_warning(estimate)
    if name == "maxtext" and "\nmodel_name:" not in text:  # the file carries the layout only (the header names it)
        from shardplan.export.maxtext import NO_MODEL_NAME
        err_console.print(f"note: {NO_MODEL_NAME}", highlight=False, soft_wrap=True)
    if name == "torchtitan":
        from shardplan.export.torchtitan import MOE_FP8_PIPELINE_NOTE
        if MOE_FP8_PIPELINE_NOTE in text:
            err_console.print(f"note: {MOE_FP8_PIPELINE_NOTE}", highlight=False, soft_wrap=True)
    if name == "deepspeed":  # the file's _shardplan lines, on stderr
        import json as _json

        from shardplan.export.deepspeed import HF_RECOMPUTE_NOTE, trainer_note
        args = _json.loads(text)["_shardplan"]["trainer"]
        err_console.print(f"note: {trainer_note(args, estimate.training.framework.name)}", highlight=False,
                          soft_wrap=True)
        from shardplan.cli.estimate import eager_code_note
        eager = eager_code_note(estimate)
        if eager and "does not fit" in eager:  # the Trainer flags above would run a model that does not fit
            err_console.print(f"[yellow]warning:[/] with a Hugging Face model: {eager}", highlight=False,
                              soft_wrap=True)
        if estimate.parallel.recompute == "full":
            err_console.print(f"note: {HF_RECOMPUTE_NOTE}", highlight=False, soft_wrap=True)
    return name, text


def expressible(name: str, estimate) -> bool:
    """Whether exporter ``name`` writes the layout of ``estimate`` (its config renders without a ConfigError), so that
    an export's does-not-fit hints name only changes that target expresses."""
    from shardplan.errors import ConfigError
    from shardplan.export import export_text
    if estimate.hardware.kind == "tpu" and name not in TPU_EXPORTS:
        return False
    try:
        export_text(name, estimate)
    except ConfigError:
        return False
    return True


def band_warning(e) -> None:
    """Say on stderr when the written layout fits on the central memory figure only
    (:func:`shardplan.explain.tight_fit`: its peak band's high end passes the usable HBM, or, without a band, less
    headroom than the planner's memory error): the run may need the allocator's retries (slower steps) or fail, so a
    little headroom (a larger ZeRO stage, recompute, a smaller micro batch) is the safer file."""
    from shardplan.explain import tight_fit_text
    why = tight_fit_text(e)
    if why:
        err_console.print(f"[yellow]warning:[/] the written layout fits on the central figure "
                          f"({e.memory.total / 2**30:.1f} of {e.hbm_fit_limit / 2**30:.1f} GiB) but {why}: it may need "
                          "the allocator's retries or fail; `shardplan plan` marks such layouts with * in its free "
                          "column and lists ones with headroom", highlight=False, soft_wrap=True)


def emit_export(name: str, text: str, output: Optional[Path]) -> None:
    """Print a rendered config (``output`` None) or write it to ``output``.

    Raises:
        OSError: an unwritable output path (exit code 2 through ``config_errors``).
    """
    if not text.endswith("\n"):  # every file ends its last line (a new user's `cat` ran the next prompt onto it)
        text += "\n"
    if output is None:
        print(text, end="")
    else:
        try:
            output.write_text(text)
        except OSError as e:  # a write that fails after opening (/proc/version: EIO) carries no file name
            if e.filename is None:
                e.filename = str(output)
            raise
        err_console.print(f"wrote {output} ({name})", highlight=False)


def write_export(framework: str, estimate, output: Optional[Path], inputs: Optional[dict] = None) -> None:
    """Write (or print) the config of an estimated layout for a framework (:func:`render_export`, then
    :func:`emit_export`).

    Raises:
        ConfigError: unknown framework or a plan it cannot express (exit code 2).
        OSError: an unwritable output path (exit code 2 through ``config_errors``).
    """
    emit_export(*render_export(framework, estimate, output, inputs), output)


@app.command()
@config_errors
@layout_flags
def export(model: ModelOpt, hardware: HardwareOpt, to: ToOpt, devices: PlanDevicesOpt = None, seq_len: PlanSeqOpt = None,
           global_batch: BatchOpt = None, global_batch_tokens: BatchTokOpt = None,
           precision: PrecisionOpt = None, attention: AttnOpt = None, framework: FrameworkOpt = None,
           dropout: DropoutOpt = False, optimizer_dtype: OptimizerDtypeOpt = None,
           moe_capacity_factor: MoeCapOpt = None, moe_imbalance: MoeImbOpt = 1.0, moe_routing: MoeRoutingOpt = "uniform",
           scale_up_size: ScaleUpOpt = None, plan: PlanOpt = None,
           output: OutOpt = None, layout: dict = None) -> None:
    """Write one layout as a training framework's config (MaxText YAML, EasyDeL, torchtitan TOML,
    Megatron-LM flags, DeepSpeed JSON, nanotron YAML, Hugging Face Accelerate YAML), headed by the planner's numbers.

    Without --framework the layout is priced with the target framework's own profile (maxtext, torchtitan, nanotron; deepspeed
    and accelerate: hf-deepspeed and hf-fsdp, a Hugging Face model under the Trainer), so
    the header's numbers are that framework's. A layout the framework cannot express is refused (exit code 2) with
    what is missing and which framework can; one predicted not to fit or to fail is not written (exit code 1)."""
    from shardplan.cli.estimate import raise_if_negative
    from shardplan.cli.common import check_output_path
    from shardplan.export import exporter
    if output is not None and str(output) == "-":  # the usual spelling of stdout
        output = None
    check_output_path("-o/--output", output, inputs={"--plan": plan})  # bad input first, before the estimate
    typed = framework  # the reproduce line names what was typed: the target's default below applies again
    if framework is None and plan is None:
        framework = target_profile(exporter(to).name, hardware, note=False)  # the note once the estimate stands
    ranked_with = None  # a plan file ranked with another framework's profile: priced with the target's (new user 56)
    if framework is None and plan is not None:
        framework, ranked_with = plan_target_profile(exporter(to).name, hardware, plan)
    if framework is None and plan is None:
        layout = target_layout_defaults(exporter(to).name, layout, seq_len)
    precision = precision if plan is not None else target_precision(exporter(to).name, precision)
    specs = dict(model=model, hardware=hardware, devices=devices, seq_len=seq_len, global_batch=global_batch,
                 global_batch_tokens=global_batch_tokens, precision=precision, attention=attention, framework=framework,
                 dropout=dropout, optimizer_dtype=optimizer_dtype, moe_capacity_factor=moe_capacity_factor,
                 moe_imbalance=moe_imbalance, moe_routing=moe_routing, scale_up_size=scale_up_size, plan=plan)
    defaulted = typed is None and framework is not None and (plan is None or ranked_with is not None)
    e = _priced(specs, layout, exporter(to).title, defaulted, easydel=exporter(to).name == "easydel")
    if ranked_with is not None:
        err_console.print(f"[yellow]note:[/] --to {exporter(to).name} prices the layout of --plan {plan} with the "
                          f"{framework} profile (the plan records {ranked_with}), so the header's numbers are that "
                          f"framework's; --framework {ranked_with} keeps the plan's", highlight=False, soft_wrap=True)
    elif defaulted:
        profile_note("--to", exporter(to).name, framework)
    from shardplan.cli.estimate import print_estimate_notes
    print_estimate_notes(e)
    # the reproduce line names what was typed, so that the same defaults apply again; a plan file priced without
    # --framework names its profile, since the line writes the plan's layout as flags (the target's default there)
    shown = typed
    if shown is None and plan is not None and exporter(to).name in TARGET_PROFILES:
        from shardplan.loaders import hardware_framework
        shown = None if hardware_framework(hardware) is not None else e.training.framework.name
    # bad input first (exit 2: a layout or precision the framework cannot express), then the negative
    # result (exit 1: predicted not to fit or to fail)
    name, text = render_export(to, e, output, dict(model=model, hardware=hardware, framework=shown,
                                                   scale_up_size=scale_up_size))
    from shardplan.cli.estimate import hints_expressible_by
    with hints_expressible_by(lambda other: expressible(name, other)):  # hints only of what the target writes
        raise_if_negative(e, "not exported: ", f"`shardplan plan` with the same flags and --export {to} -o FILE writes "
                                              "the best layout that fits and that framework runs")
    emit_export(name, text, output)


def _priced(specs: dict, layout: dict, title: str, defaulted: bool, easydel: bool = False):
    """The estimate of an export (:func:`shardplan.cli.estimate.estimate_layout`). ``defaulted``: the target's own
    profile was chosen for it (:func:`target_profile`); a refusal that the default pricing does not make is then the
    target framework's, and says so; any other input error is raised as it is. ``easydel``: a pricing profile whose
    tensor parallelism always shards the activations (``FrameworkProfile.tp_requires_sp``: maxtext, the TPU default)
    refuses tp without sp: the message says EasyDeL's tp shards them as well, so --sp prices what it runs.

    Raises:
        ConfigError: bad input (exit code 2)."""
    from shardplan.cli.estimate import estimate_layout
    try:
        return estimate_layout(specs, layout)
    except ConfigError as err:
        if easydel and err.field == "sp" and err.value is False:
            raise ConfigError(f"{err.args[0].split(';')[0]}; EasyDeL's tp shards them too (PartitionAxis "
                              "hidden_state_axis 'tp', the file's default): legal: --sp (what EasyDeL runs), or tp=1 "
                              "(its fsdp axis, ZeRO-3)", field="sp", value=False, legal=[True]) from None
        if easydel and specs.get("framework") is None and specs.get("plan") is None and "framework" in str(err):
            from shardplan.inputs import default_framework
            profile = default_framework(specs["hardware"])
            name = profile.name if profile is not None else "megatron"  # the GPU default
            raise ConfigError(f"--to easydel prices with the hardware's default {name} profile (EasyDeL has none of "
                              f"its own; --framework chooses another): {err}", field=err.field, value=err.value,
                              legal=err.legal) from None
        if not defaulted:
            raise
        try:
            with err_console.capture():  # the same inputs under the default pricing, notes not shown
                estimate_layout({**specs, "framework": None}, layout)
        except ConfigError:
            raise err from None
        raise ConfigError(f"{title} cannot run this layout as its profile prices it: {err}", field=err.field,
                          value=err.value, legal=err.legal) from None


#: the framework profile an export target's config is priced with when neither --framework, a plan nor a hardware
#: file's framework section says otherwise: the header's numbers are then those of the program that config runs
#: (the same framework's profile; torchtitan's eager one, as the config compiles nothing unless priced compiled;
#: DeepSpeed's ds_config as the Hugging Face integration runs it, whose AutoTP / Ulysses keys the file writes).
#: EasyDeL has no profile of its own and keeps the hardware's default pricing (megatron on GPUs, maxtext on TPUs) with
#: its layout defaults and bf16-mixed, the one precision its config writes.
TARGET_PROFILES = {"maxtext": "maxtext", "torchtitan": "torchtitan", "deepspeed": "hf-deepspeed", "nanotron": "nanotron",
                   "accelerate": "hf-fsdp"}
_TARGET_NOTES = {"maxtext": " (precision fp32-params unless --precision: MaxText's default weight_dtype float32)"}


def target_profile(name: str, hardware: str, flag: str = "--to", note: bool = True) -> str | None:
    """The profile ``export --to NAME`` prices with (``plan --export NAME``: ranks with; ``flag`` names the option in
    the note) when ``--framework`` is not given (:data:`TARGET_PROFILES`), with a note on stderr; None for a target
    without one (megatron: the default profile anyway; easydel) or when the hardware file has its own framework
    section (a calibrated cluster file's fitted values win). ``note`` False: the caller prints it
    (:func:`profile_note`) once the estimate stands."""
    from shardplan.loaders import hardware_framework
    profile = TARGET_PROFILES.get(name)
    if profile is None or hardware_framework(hardware) is not None:
        return None
    if note:
        profile_note(flag, name, profile)
    return profile


def target_precision(name: str, precision: str | None, flag: str = "--to") -> str | None:
    """``precision`` as given, or for EasyDeL (no profile of its own) without one bf16-mixed, the one precision its
    config writes, with a note (on TPUs the default maxtext pricing would take fp32-params, which it cannot write)."""
    if precision is not None or name != "easydel":
        return precision
    from shardplan.export import exporter
    precision = exporter(name).precisions[0]
    err_console.print(f"[yellow]note:[/] {flag} {name}: precision {precision}, the one its config writes (--precision "
                      "to choose)", highlight=False, soft_wrap=True)
    return precision


def plan_target_profile(name: str, hardware: str, plan: str) -> tuple[str | None, str | None]:
    """(profile to price with, profile the plan was ranked with) for ``export --plan FILE --to NAME`` without
    ``--framework``: the target's own profile (:data:`TARGET_PROFILES`) when the plan file records a profile of
    another framework (a layout ranked under megatron exported to torchtitan was headed by Megatron's step time, 54%
    faster than torchtitan's own profile prices it: new-user pass 56); (None, None) otherwise, so that the plan's
    profile applies (:func:`shardplan.cli.estimate._profile_from_plan`): the plan's profile is the target's, a variant
    of it (``torchtitan-compile``, ``deepspeed-zero3``, ``NAME+field=value``), the target has no profile of its own,
    or a hardware file brings its framework section. Raises nothing (the plan file is read again, with its errors,
    by the estimate)."""
    from shardplan.loaders import hardware_framework, read_plan_context
    target = TARGET_PROFILES.get(name)
    recorded = read_plan_context(plan).get("framework")
    if target is None or not isinstance(recorded, str) or hardware_framework(hardware) is not None:
        return None, None
    base, family = recorded.split("+")[0], target.removeprefix("hf-")  # hf-deepspeed: deepspeed*, hf-fsdp: *fsdp*
    if family in base:
        return None, None
    return target, recorded


def profile_note(flag: str, name: str, profile: str) -> None:
    """The stderr note that ``flag`` (``--to`` / ``--export``) ``name`` is priced with framework ``profile``."""
    what = "prices" if flag == "--to" else "ranks and prices"
    err_console.print(f"[yellow]note:[/] {flag} {name} {what} with the {profile} framework profile"
                      f"{_TARGET_NOTES.get(name, '')}, so the header's numbers are that framework's; --framework "
                      "chooses another", highlight=False, soft_wrap=True)


#: the layout fields EasyDeL's runs take unless given: its default sharding_axis_dims (1, -1, 1, 1, 1) shards
#: over fsdp (ZeRO-3), and with tp > 1 its models shard the residual stream's hidden dimension over tp
#: (PartitionAxis hidden_state_axis 'tp'), the planner's sp (shardplan/export/easydel.py)
_EASYDEL_DEFAULTS = {"zero_stage": 3, "sp": True, "tp_overlap": False}


def target_layout_defaults(name: str, layout: dict, seq_len: int | None = None) -> dict:
    """``layout`` with the export target's own defaults for the fields it does not give (``None``), so that
    ``export --to NAME`` without ``--framework`` writes what that framework runs by default rather than the
    pricing profile's defaults: the target profile's :func:`shardplan.inputs.applied_layout_defaults` (ZeRO
    stage, sp / tp_overlap with tp > 1, schedule), and the ParallelConfig value for the other ones among
    zero_stage / sp / tp_overlap, set explicitly so that the pricing profile adds none of its own. EasyDeL (no
    profile): :data:`_EASYDEL_DEFAULTS`. A layout that does not parse is returned as given (its error comes from
    the estimate). A note lists the values that differ from ParallelConfig's defaults."""
    from shardplan.cli.common import err_console
    from shardplan.errors import ConfigError
    from shardplan.inputs import applied_layout_defaults, parallel_config
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import FRAMEWORKS
    profile = FRAMEWORKS.get(name)
    if profile is None and name != "easydel":
        return layout
    try:
        pc = parallel_config(layout)
    except ConfigError:
        return layout
    applied = {**_EASYDEL_DEFAULTS, "sp": pc.tp > 1} if profile is None else applied_layout_defaults(profile, pc, layout, None,
                                                                                        seq_len)
    keys = ("zero_stage",) if pc.tp == 1 else ("zero_stage", "sp", "tp_overlap")
    taken = {k: applied.get(k, getattr(pc, k)) for k in keys if layout.get(k) is None}
    taken.update({k: v for k, v in applied.items() if k not in keys and layout.get(k) is None})
    shown = {k: v for k, v in taken.items() if v != ParallelConfig.model_fields[k].default}
    if shown:
        err_console.print(f"[yellow]note:[/] --to {name}: {', '.join(f'{k}={v}' for k, v in shown.items())}, the "
                          f"framework's own defaults where the flags are not given (--zero-stage / --sp / --schedule "
                          "override them)", highlight=False, soft_wrap=True)
    return {**layout, **taken}


def _named_ds_config(err: ConfigError, file: Path, text: str, devices: int | None):
    """An Accelerate DeepSpeed launch that names its ds_config (``deepspeed_config.deepspeed_config_file``, which
    Accelerate then reads instead of its own keys): that file imported with ``--from deepspeed`` and the launch's
    ``num_processes`` (Accelerate's count over all machines) or ``devices`` as the world size, with a note; None when
    ``err`` is another refusal or the named file is not found beside the launch file or from the working directory."""
    if err.field != "deepspeed_config_file":
        return None
    import yaml

    from shardplan.export import import_config as read_config
    from shardplan.loaders import read_text_capped
    cfg = yaml.safe_load(text)
    name = str(cfg["deepspeed_config"]["deepspeed_config_file"])
    path = next((p for p in (file.parent / name, Path(name)) if p.is_file()), None)
    if path is None:
        return None
    procs = cfg.get("num_processes")
    world = devices if devices is not None else procs if isinstance(procs, int) and procs >= 1 else None
    ds_text = read_text_capped(path, "import")
    imported = read_config("deepspeed", ds_text, world)
    note = (f"Accelerate's deepspeed_config_file {name}: its ds_config imported (--from deepspeed, {world or 'its own'} "
            "devices), as Accelerate reads that file instead of its own keys")
    return _accelerate_over_ds_config(replace(imported, notes=(note, *imported.notes)), cfg, ds_text)


def _accelerate_over_ds_config(imported, cfg: dict, ds_text: str):
    """What an Accelerate launch sets over the ds_config it names: a Hugging Face model's code (the hf-deepspeed
    profile, as for Accelerate's inline DeepSpeed keys, where the ds_config alone gave the deepspeed one) and its
    ``mixed_precision`` where the ds_config has no bf16 / fp16 section (Accelerate's DeepSpeedPlugin adds the one
    ``mixed_precision`` names, accelerate/utils/dataclasses.py ``set_mixed_precision``; fp8 runs its fp8 recipe beside
    them), each with a note."""
    import json

    from shardplan.export.accelerate import PRECISIONS
    notes = [n for n in imported.notes if not n.startswith("the model code is not in a ds_config")]
    framework = imported.framework
    if framework == "deepspeed":
        framework = "hf-deepspeed"
        notes.append("an Accelerate launch runs a Hugging Face model: priced with the hf-deepspeed profile (Transformers "
                     "model code, eager element-wise ops)")
    try:
        ds = json.loads(ds_text)
    except ValueError:
        ds = {}
    mp = str(cfg.get("mixed_precision", "no")).lower()
    precision = imported.precision
    unset = precision is None or not ({"bf16", "fp16"} & set(ds if isinstance(ds, dict) else {}))  # or 'auto'
    if PRECISIONS.get(mp) and mp != "no" and (mp == "fp8" or unset) and precision != PRECISIONS[mp]:
        precision = PRECISIONS[mp]
        notes.append(f"mixed_precision: {mp} (Accelerate fills the ds_config's bf16 / fp16 from it where they are "
                     f"absent or 'auto'{'; fp8 runs its recipe beside them' if mp == 'fp8' else ''}): precision "
                     f"{precision}")
    return replace(imported, framework=framework, precision=precision, notes=tuple(notes))


@app.command("import")
@config_errors
def import_config(file: FileArg, from_: FromOpt, devices: ImportDevicesOpt = None,
                  output: ImportOutOpt = None) -> None:
    """Read a framework's config back into a plan JSON (the format `--plan` reads), to check the layout
    you already run: `shardplan estimate --plan plan.json ...`."""
    from shardplan.export import import_config as read_config
    from shardplan.loaders import read_text_capped
    check_output_path("-o/--output", output, stdout="the plan JSON is printed", inputs={"config": file})
    text = read_text_capped(file, "import")
    try:
        imported = read_config(from_, text, devices)
    except ConfigError as e:
        named = _named_ds_config(e, file, text, devices)  # an Accelerate launch naming its ds_config
        if named is None:
            raise
        imported = named
    for note in imported.notes:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    text = json.dumps(imported.to_plan(), indent=1)
    if output is None:
        print(text)
    else:
        output.write_text(text + "\n")
        err_console.print(f"wrote {output}: {imported.parallel.short()}", highlight=False, soft_wrap=True)
