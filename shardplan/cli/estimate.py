"""``shardplan estimate``: memory, step time, MFU and the bottleneck of one layout."""

import contextlib
import contextvars
import json
import math
from typing import Any, Callable

from rich.markup import escape
from rich.table import Table

from shardplan.cli.common import (OptimizerDtypeOpt,
                                  AttnOpt, BatchOpt, BatchTokOpt, PlanDevicesOpt, DropoutOpt, FrameworkOpt, MoeCapOpt,
                                  MoeImbOpt, MoeRoutingOpt,
                                  HardwareOpt, JsonOpt,
                                  ModelOpt, PlanOpt, PlanSeqOpt, PrecisionOpt, ScaleUpOpt, app, config_errors, console,
                                  err_console, layout_flags, negative)
from shardplan.errors import ConfigError
from shardplan.explain import fit_limit_text, headroom
from shardplan.units import fmt_rate, fmt_seconds


def _gib(x: float) -> str:
    return f"{x / 2**30:,.2f}"


def _headroom_text(x: float) -> str:
    """Headroom in GiB, or in MiB where GiB's two decimals would round it to 0.00 or -0.00 (a fit pinned at the HBM
    edge by one OOM record read "80.00 of 80.00 GiB; headroom -0.00")."""
    return f"{x / 2**30:,.2f} GiB" if abs(x) >= 0.005 * 2**30 else f"{x / 2**20:,.1f} MiB"


#: the flags a plan file can give (``shardplan import`` / ``plan --json`` record them) -> the file's key
PLAN_RUN_VALUES = {"devices": "devices", "seq_len": "seq_len", "global_batch": "global_batch_size"}


def run_values_from_plan(specs: dict[str, Any]) -> dict[str, Any]:
    """``specs`` with --devices, --seq-len and --global-batch that were left out taken from the ``--plan`` file
    where it records them (:func:`shardplan.loaders.read_plan_context`; the batch only when neither --global-batch
    nor --global-batch-tokens is given), and --framework (:func:`_profile_from_plan`), with a note naming them.

    Raises:
        ConfigError: --devices or --seq-len neither given nor in the plan file (exit code 2), naming the flag; a plan
            file that cannot be read or holds a value of the wrong type (:func:`shardplan.loaders.read_plan_file`,
            checked first: a broken file is not a missing flag).
    """
    out = dict(specs)
    made = {}
    if out.get("plan") is not None:
        from shardplan.loaders import read_plan_context, read_plan_file
        read_plan_file(out["plan"])
        made = read_plan_context(out["plan"])
    taken = []
    for flag, key in PLAN_RUN_VALUES.items():
        if out.get(flag) is not None or (flag == "global_batch" and out.get("global_batch_tokens") is not None):
            continue
        if isinstance(made.get(key), int) and not isinstance(made.get(key), bool):
            out[flag] = made[key]
            taken.append(f"--{flag.replace('_', '-')} {made[key]}")
        elif flag != "global_batch":
            where = f"--plan {out['plan']} records none" if out.get("plan") is not None else "or --plan with a file that records it"
            raise ConfigError(f"--{flag.replace('_', '-')} is missing; legal: --{flag.replace('_', '-')} N ({where})",
                              field=flag, value=None)
    taken += _profile_from_plan(out, made)
    taken += _precision_from_plan(out, made)
    cap = made.get("moe_capacity_factor")
    if out.get("moe_capacity_factor") is None and isinstance(cap, (int, float)) and not isinstance(cap, bool):
        # an imported Megatron-LM script's --moe-expert-capacity-factor (token dropping, inputs padded to it): the
        # flag's default (dropless) would price another program (breaker pass 2: 3.021 s exported, 2.976 s re-read)
        out["moe_capacity_factor"] = float(cap)
        taken.append(f"--moe-capacity-factor {cap:g}")
    if made.get("attention") == "naive" and out.get("attention") is None:
        # an imported Megatron-LM script's --attention-backend unfused (a breaker's round trip lost it: 461 ms /
        # 45.6 GiB exported, 429 ms / 43.5 GiB re-read)
        out["attention"] = "naive"
        taken.append("--attention naive")
    if made.get("dropout") is True and not out.get("dropout"):
        # an imported Megatron-LM script's dropout (0.1 unless it sets 0): the flag's default (off) would price
        # another program (a breaker's round trip lost it: 58.93 GiB / 1.576 s against 59.97 / 1.600 exported)
        out["dropout"] = True
        taken.append("--dropout")
    if taken:
        err_console.print(f"[yellow]note:[/] {', '.join(taken)} from --plan {out['plan']} (give a flag to override one)",
                          highlight=False, soft_wrap=True)
    return out


def _precision_from_plan(out: dict[str, Any], made: dict[str, Any]) -> list[str]:
    """Set in ``out`` the --precision and --optimizer-dtype left out from what the plan file records where they differ
    from the profile's defaults (an imported Megatron-LM script with ``--fp8-format hybrid --fp8-param-gather`` is
    priced as fp8-params, not the profile's bf16), unless the hardware given cannot run the plan's compute dtype (an
    fp8 plan on an A100: :meth:`shardplan.specs.hardware.HardwareSpec.runs_dtype`), where the flags' default stays and
    :func:`plan_context_note` names the difference. A name that is not a policy is left to the flags too. Returns the
    flags taken, for the note."""
    from shardplan.inputs import hardware_spec
    from shardplan.presets.frameworks import framework_profile
    try:
        fw = framework_profile(out["framework"]) if out.get("framework") else None
        if fw is None and out.get("hardware") is not None:  # the hardware's default (maxtext on TPUs: fp32-params)
            from shardplan.inputs import default_framework
            fw = default_framework(out["hardware"])
        fw = fw or framework_profile("megatron")
        defaults = (fw.default_precision or "bf16-mixed", fw.optimizer_dtype or "fp32")
    except ConfigError:  # a profile or hardware file the later checks report
        defaults = ("bf16-mixed", "fp32")
    taken = []
    name, dtype = made.get("precision"), made.get("optimizer_dtype")
    if out.get("precision") is None and isinstance(name, str) and name != defaults[0]:
        try:
            hw = hardware_spec(out["hardware"], out.get("scale_up_size")) if out.get("hardware") is not None else None
        except ConfigError:  # a bad --hardware: its own error comes later
            hw = None
        if _runs(hw, name):
            out["precision"] = name
            taken.append(f"--precision {name}")
    if (out.get("optimizer_dtype") is None and isinstance(dtype, str) and dtype != defaults[1]
            and (out.get("precision") or defaults[0]) == name):
        out["optimizer_dtype"] = dtype
        taken.append(f"--optimizer-dtype {dtype}")
    return taken


def _profile_from_plan(out: dict[str, Any], made: dict[str, Any]) -> list[str]:
    """Set in ``out`` the --framework left out from what the plan file records (a profile preset, with or without
    ``+field=value`` overrides; not where a hardware file brings its own framework section): the same layout is then
    priced with the software it was planned for or imported from (an imported DeepSpeed config with the deepspeed
    profile, not the default megatron one); the precision: :func:`_precision_from_plan`. Returns the flags taken, for
    the note."""
    from shardplan.loaders import hardware_framework
    from shardplan.presets.frameworks import FRAMEWORKS
    taken = []
    fw = made.get("framework")
    if (out.get("framework") is None and isinstance(fw, str) and fw.split("+")[0] in FRAMEWORKS
            and (out.get("hardware") is None or hardware_framework(out["hardware"]) is None)):
        out["framework"] = fw
        taken.append(f"--framework {fw}")
    return taken


def estimate_layout(specs: dict[str, Any], layout: dict[str, Any]):
    """:func:`shardplan.cost.step.estimate` for the values of the flags of ``estimate`` / ``report``.

    Args:
        specs: the spec flags (model, hardware, devices, seq_len, global_batch, global_batch_tokens,
            precision, attention, framework, scale_up_size, plan), as
            :func:`shardplan.inputs.build_inputs` takes them.
        layout: the layout flags given.

    Raises:
        ConfigError: as :func:`shardplan.inputs.build_inputs` and the estimate do.
    """
    from shardplan.cost.step import estimate as run_estimate
    from shardplan.inputs import build_inputs
    from shardplan.cli.common import (attention_note, fitted_precision_note, framework_note, precision_note,
                                      scale_up_size_note)
    specs = run_values_from_plan(specs)
    try:
        m, hw, tr, pc = build_inputs(**specs, **layout)
        framework_note(specs.get("hardware"), specs.get("framework"), tr.framework)
        precision_note(specs.get("precision"), tr.framework, hardware=hw, chosen=tr.precision.name)
        fitted_precision_note(specs.get("hardware"), tr.precision.name)
        scale_up_size_note(specs.get("scale_up_size"), hw)
        layout_defaults_note(tr.framework, layout, specs.get("plan"), specs.get("seq_len"))
        attention_note(specs.get("attention"), tr, hw)
        e = run_estimate(m, hw, tr, pc, specs["devices"])
    except ConfigError as err:
        if specs.get("plan"):  # a plan made for another model or device count often fails here: say so first
            plan_context_note(specs["plan"], None, specs)
        tokens, seq = specs.get("global_batch_tokens"), specs.get("seq_len")
        if tokens is not None and err.field == "global_batch_size" and isinstance(seq, int):  # a count not given
            n = f"global_batch_size={tokens // seq}"
            raise ConfigError(str(err).replace(n, f"{n} (--global-batch-tokens {tokens} / seq_len {seq})", 1),
                              field=err.field, value=err.value, legal=err.legal) from None
        raise
    if specs.get("plan"):
        plan_context_note(specs["plan"], e)
    given_flags_note(layout, e)
    from shardplan.cli.common import fitted_overlap_note
    fitted_overlap_note(specs.get("hardware"), e.parallel)
    return e


def given_flags_note(layout: dict[str, Any], e) -> None:
    """Say on stderr where a layout flag the user gave was dropped or implied another: ``--tp-overlap`` at tp=1
    (nothing to overlap: ignored) and ``--pp-layers`` without ``--pp`` (pp is the number of stages it lists)."""
    if layout.get("tp_overlap") and e.parallel.tp == 1:
        err_console.print("[yellow]note:[/] --tp-overlap changes nothing at tp=1 (there are no tp collectives to "
                          "overlap); it is ignored", highlight=False, soft_wrap=True)
    if layout.get("pp_layers") is not None and layout.get("pp") is None and e.parallel.pp > 1:
        err_console.print(f"[yellow]note:[/] pp={e.parallel.pp}: the number of stages --pp-layers lists",
                          highlight=False, soft_wrap=True)


def _runs(hw, precision: Any) -> bool:
    """Whether ``precision`` names a precision policy whose compute dtype the HardwareSpec ``hw`` runs
    (:meth:`shardplan.specs.hardware.HardwareSpec.runs_dtype`; ``hw`` None: any policy runs)."""
    from shardplan.specs.training import precision_policy
    try:
        dtype = precision_policy(str(precision)).compute_dtype
    except ConfigError:
        return False
    return hw is None or hw.runs_dtype(dtype)


def _cannot_run(e, precision: Any) -> str:
    """``": HARDWARE has no DTYPE tensor cores"`` where the estimate's hardware cannot run the plan file's precision
    policy (why :func:`_precision_from_plan` kept the flags' one), else ``""``."""
    from shardplan.specs.training import precision_policy
    if e is None or _runs(e.hardware, precision) or not _runs(None, precision):
        return ""
    return f": {e.hardware.name} has no {precision_policy(str(precision)).compute_dtype} tensor cores"


def plan_context_note(plan, e, specs: dict[str, Any] | None = None) -> None:
    """Say on stderr where the command's setup differs from what the ``--plan`` file was made for (model,
    hardware, devices, sequence, batch, precision, optimizer state, MoE routing, framework:
    :func:`shardplan.loaders.read_plan_context`): the file gives only the layout, the flags give the rest.
    Without an estimate ``e`` (the command failed) the flags' values ``specs`` are compared."""
    from shardplan.loaders import read_plan_context
    made = read_plan_context(plan)
    if e is not None:
        tr = e.training
        here = {"model": e.model.name, "hardware": e.hardware.name, "devices": e.layout.n_devices,
                "seq_len": tr.seq_len, "global_batch_size": tr.global_batch_size, "precision": tr.precision.name,
                "optimizer_dtype": tr.optimizer_dtype, "moe_routing": tr.moe_routing, "framework": tr.framework.spec,
                "moe_capacity_factor": tr.moe_capacity_factor, "attention": tr.attention}
    else:
        given = specs or {}
        here = {k: given.get(k) for k in ("model", "hardware", "devices", "seq_len")}
        here["global_batch_size"] = given.get("global_batch")
        hw_file = isinstance(given.get("hardware"), str) and given["hardware"].lower().endswith((".yaml", ".yml", ".json"))
        if not hw_file:  # a hardware file may name its own framework; otherwise the default profile is megatron's
            here["framework"] = given.get("framework") or "megatron"
        # preset names only: a file path names no spec until it is read
        here = {k: v for k, v in here.items() if (isinstance(v, int) and not isinstance(v, bool))
                or (isinstance(v, str) and "/" not in v and not v.lower().endswith((".json", ".yaml", ".yml")))}
    differ = [f"{k} {made[k]} (here {here[k]}{_cannot_run(e, made[k]) if k == 'precision' else ''})"
              for k in here if k in made and str(made[k]) != str(here[k])]
    if differ:
        split = ""
        if e is not None and "framework" in made and made["framework"] != here.get("framework") and e.parallel.pp > 1:
            from shardplan.inputs import plan_file_values, plan_framework_split
            own = plan_framework_split(plan, e.model, e.parallel.pp)
            if (own is not None and plan_file_values(plan).get("pp_layers") is None
                    and tuple(e.parallel.pp_layers or ()) == own):  # inputs._file_framework_split kept it
                split = (f" (its pipeline split is the one {made['framework']} runs: layers per rank "
                         f"{','.join(map(str, e.parallel.pp_layers))})")
        if e is not None and "devices" in made and str(made["devices"]) != str(here.get("devices")):
            from shardplan.inputs import plan_file_values
            dp_file = plan_file_values(plan).get("dp")  # the file's dp, else the one its devices implied
            if dp_file is not None and dp_file != e.parallel.dp:
                split += f"; dp {dp_file} in the file becomes {e.parallel.dp} on {e.layout.n_devices:,} devices"
        err_console.print(f"[yellow]note:[/] --plan {escape(str(plan))} was made for {escape(', '.join(differ))}: "
                          f"only its layout is read{split}; the flags give the rest", highlight=False, soft_wrap=True)
    if e is not None and made.get("model_shape"):
        _model_shape_note(plan, made["model_shape"], e.model)


def _model_shape_note(plan, shape: dict[str, int], model) -> None:
    """Say on stderr where the model flags an imported config records (``model_shape``: Megatron-LM's --num-layers,
    --hidden-size, ...) differ from the ModelSpec priced (--model): the layout comes from the file, the model from
    --model (a breaker read a 70B script's layout with --model llama-3-8b and was told nothing)."""
    def value(field: str) -> int:
        if field == "n_kv_heads":
            return model.n_kv_heads or model.n_heads
        if field == "expert_ffn_dim":  # Megatron-LM's --moe-ffn-hidden-size defaults to --ffn-hidden-size
            return model.expert_ffn_dim or model.ffn_dim
        return getattr(model, field)
    # a position table's rows matter to a learned table only (a RoPE model's max_position_embeddings prices nothing)
    differ = [f"{k} {v} (--model {value(k)})" for k, v in shape.items()
              if k in type(model).model_fields and value(k) != v
              and (k != "max_position_embeddings" or model.position == "learned")]
    if differ:
        err_console.print(f"[yellow]note:[/] --plan {escape(str(plan))} was imported from a config whose model flags "
                          f"give {escape(', '.join(differ))}: the model priced is --model {escape(model.name)}; give "
                          "--model the config's model (a preset or its config.json) to price the run the config "
                          "describes", highlight=False, soft_wrap=True)


def layout_defaults_note(framework, layout: dict[str, Any], plan=None, seq_len=None) -> None:
    """Say on stderr which of the profile's ``layout_defaults`` the layout took (fields not given on
    the command line or in the plan file, :func:`shardplan.inputs.applied_layout_defaults`) and how
    to turn them off."""
    from shardplan.inputs import applied_layout_defaults, parallel_config
    taken = applied_layout_defaults(framework, parallel_config(layout, plan), layout, plan, seq_len)
    if "recompute" in taken:  # not how the framework's runs are set up: the only policies it has
        policies = ", ".join(framework.recomputes or ())
        err_console.print(f"[yellow]note:[/] recompute={taken.pop('recompute')}: the cheapest recompute policy the "
                          f"{escape(framework.label)} profile implements (its recomputes: {policies}); --recompute NAME "
                          "for another of them", highlight=False, soft_wrap=True)
    if "cp_comm" in taken:  # the framework's only context-parallel exchange (DeepSpeed: Ulysses' AllToAll)
        comms = ", ".join(framework.cp_comms)
        err_console.print(f"[yellow]note:[/] cp_comm={taken.pop('cp_comm')}: the context-parallel exchange the "
                          f"{escape(framework.label)} profile implements (its cp_comms: {comms})",
                          highlight=False, soft_wrap=True)
    if taken:
        # a default the framework cannot run without (torchtitan / MaxText: sp with every tp > 1) has no off switch
        required = {"sp"} if framework.tp_requires_sp else set()
        optional = [k for k in taken if k not in required]
        switches = [k for k in optional if k not in ("zero_stage", "schedule")]
        flags = " / ".join("--no-" + k.replace("_", "-") for k in switches)
        how = f"; {flags} to turn {'it' if len(switches) == 1 else 'them'} off" if switches else ""
        how += "; --zero-stage N for another ZeRO stage" if "zero_stage" in optional else ""
        how += "; --schedule NAME for another schedule it runs" if "schedule" in optional else ""
        if taken.get("zero_stage") == 3 and framework.default_zero_stage != 3:
            how += (" (ZeRO-3 because parameter offload offloads ZeRO-3 shards)" if layout.get("offload_params")
                    else " (ZeRO-3 because --zero3-gather / --dp-shard shard the parameters)")
        elif taken.get("zero_stage") == 1 and framework.default_zero_stage == 0 and layout.get("offload_optimizer"):
            how += " (ZeRO-1 because an offloaded optimizer needs a ZeRO stage)"
        fixed = f" ({', '.join(sorted(required & set(taken)))} required by the framework)" if required & set(taken) else ""
        err_console.print(f"[yellow]note:[/] {', '.join(f'{k}={v}' for k, v in taken.items())}: the "
                          f"{escape(framework.label)} profile's layout defaults (what that framework does unless told "
                          f"otherwise){fixed}{how}", highlight=False, soft_wrap=True)


def offload_hint(e) -> str | None:
    """For a layout that does not fit: the fewest activation-offloaded layers
    (``--offload-activation-layers``, Megatron-core CPU offloading) with which it fits, its peak and
    the step time it costs, or None when the profile or hardware cannot offload, the layout cannot
    (pp > 1 or recompute), or no count below ``n_layers`` fits. Offloading more layers only lowers
    the peak (:func:`shardplan.cost.memory.layer_activation_bytes` per layer moves to the host), so
    the count is found by bisection over 1..n_layers-1."""
    from shardplan.cost.step import estimate
    p, fw = e.parallel, e.training.framework
    if fw.activation_offload == "remat_inputs":
        return _remat_offload_hint(e)
    if (e.fits or not fw.activation_offload or not e.hardware.host_bandwidth or p.pp > 1
            or p.recompute != "none" or e.model.n_layers < 2 or p.offload_modules):
        return None  # fine-grained offloading (offload_modules) and whole layers are one mechanism or the other

    def with_layers(n: int):
        return estimate(e.model, e.hardware, e.training, p.model_copy(update={"offload_activation_layers": n}),
                        e.layout.n_devices)
    found = _fewest_fitting(p.offload_activation_layers + 1, e.model.n_layers - 1, with_layers)
    if found is None:
        return None
    lo, best = found
    change = (f"step {fmt_seconds(best.step_s)} against {fmt_seconds(e.step_s)}" if best.step_s > e.step_s * 1.0005
              else f"step unchanged at {fmt_seconds(best.step_s)}: the copies hide behind compute")
    return (f"it fits with --offload-activation-layers {lo} ({_gib(best.memory.total)} GiB; {change}; host link "
            f"{e.hardware.host_bandwidth / 1e9:.0f} GB/s)")


def fp8_moe_cache_hint(e) -> str | None:
    """For an fp8 MoE layout that does not fit under a built-in profile that keeps the experts' SwiGLU inputs at the
    activation dtype (``FrameworkProfile.moe_act_input_bytes`` None): the same layout with those inputs cached in fp8,
    1 byte (DeepSeek-V3 Technical Report, arXiv 2412.19437, Sec. 3.3.3 "Low-Precision Activation": DeepSeek's
    framework does), as the inline ``--framework NAME+moe_act_input_bytes=1`` a user of such a framework gives, when
    it fits (its peak and step time); None otherwise. A breaker's DeepSeek-V3 layout on 2,048 H800 was told only to
    recompute in full, which DeepSeek did not."""
    from shardplan.cost.step import estimate
    from shardplan.presets.frameworks import framework_profile
    fw = e.training.framework
    if (e.fits or not e.model.is_moe or e.training.precision.compute_dtype != "fp8" or fw.moe_act_input_bytes is not None
            or (fw.origin and not fw.inline)):
        return None
    spec = f"{fw.origin or fw.name}+moe_act_input_bytes=1"
    try:
        other = estimate(e.model, e.hardware, e.training.model_copy(update={"framework": framework_profile(spec)}),
                         e.parallel, e.layout.n_devices)
    except ConfigError:
        return None
    if not _offered(other):
        return None
    return (f"it fits with --framework {spec} (the experts' SwiGLU inputs cached in fp8, as DeepSeek-V3's framework "
            f"does; {_gib(other.memory.total)} GiB; step {fmt_seconds(other.step_s)} against {fmt_seconds(e.step_s)})")


def _remat_offload_hint(e) -> str | None:
    """:func:`offload_hint` under MaxText's layer-input offload (``FrameworkProfile.activation_offload``
    'remat_inputs'): with full recompute and pp = 1, whether offloading every layer's input makes it fit."""
    from shardplan.cost.step import estimate
    from shardplan.errors import ConfigError
    p = e.parallel
    if e.fits or p.offload_activation_layers or not e.hardware.host_bandwidth or p.pp > 1 or p.recompute != "full":
        return None
    try:
        best = estimate(e.model, e.hardware, e.training, p.model_copy(
            update={"offload_activation_layers": e.model.n_layers}), e.layout.n_devices)
    except ConfigError:
        return None
    if not _offered(best):
        return None
    return (f"it fits with --offload-activation-layers {e.model.n_layers} (MaxText decoder_layer_input: offload; "
            f"{_gib(best.memory.total)} GiB; step {fmt_seconds(best.step_s)}; host link "
            f"{e.hardware.host_bandwidth / 1e9:.0f} GB/s)")


#: while set (:func:`hints_expressible_by`), a hint is offered only for a layout this callable accepts (an
#: Estimate -> bool): ``export --to X`` names only changes X's config can write
HINT_FILTER: contextvars.ContextVar[Callable[[Any], bool] | None] = contextvars.ContextVar("hint_filter",
                                                                                            default=None)


@contextlib.contextmanager
def hints_expressible_by(accepts: Callable[[Any], bool]):
    """Within the block, the does-not-fit hints offer only layouts ``accepts`` (an Estimate -> bool) takes: an export
    names only what its target writes (a breaker followed `export --to torchtitan`'s --offload-optimizer hint into a
    refusal)."""
    token = HINT_FILTER.set(accepts)
    try:
        yield
    finally:
        HINT_FILTER.reset(token)


def _offered(other) -> bool:
    """``other`` (an Estimate) runs (it fits and no failure is predicted: e.g. an offloaded state within a host's
    memory) and the active :data:`HINT_FILTER`, if any, accepts it."""
    accepts = HINT_FILTER.get()
    return other.runs and (accepts is None or accepts(other))


def _first_fitting(e, changes: list[tuple[str, dict]]) -> str | None:
    """The hint for the first of ``changes`` (the command-line flags, the layout fields they change) with which
    ``e``'s layout fits (and the active :data:`HINT_FILTER` accepts it), its peak and step time; None when none fits
    or is valid."""
    from shardplan.cost.step import estimate
    from shardplan.errors import ConfigError
    for flags, update in changes:
        try:
            other = estimate(e.model, e.hardware, e.training, e.parallel.model_copy(update=update),
                             e.layout.n_devices)
        except ConfigError:  # a value the profile does not run, or one the layout's other fields rule out
            continue
        if _offered(other):
            return (f"it fits with {flags} ({_gib(other.memory.total)} GiB; step "
                    f"{fmt_seconds(other.step_s)} against {fmt_seconds(e.step_s)})")
    return None


def _higher_zero(e, sharding: bool = True) -> list[tuple[str, dict]]:
    """The ZeRO stages above the layout's that the framework profile runs (``FrameworkProfile.zero_stages``), as
    (flag, layout fields) pairs; with ``sharding``, [] without a data-parallel x context-parallel group of two or more
    ranks to shard over (an offloaded optimizer needs a stage even on one rank: DeepSpeed's ZeRO-Offload)."""
    p = e.parallel
    if sharding and p.dp * p.cp < 2:
        return []
    # ZeRO-0's resolved dp_shard (1) would keep the new stage from sharding: re-derived (validate)
    shard = None if p.zero_stage == 0 else p.dp_shard
    return [(f"--zero-stage {z}", {"zero_stage": z, "dp_shard": shard})
            for z in (e.training.framework.zero_stages or (0, 1, 2, 3)) if z > p.zero_stage]


def _later_recompute(e) -> list[tuple[str, dict]]:
    """Selective and full activation recompute beyond the layout's own (``search.RECOMPUTE_ORDER``) as (flag, layout
    fields) pairs. A layout that recomputes less than its policy says gets the policy in full first: a module list
    (``recompute_modules``) or a partial full recompute (``recompute_layers``) or saved matmuls (``remat_saved``) are
    dropped, the flag saying so (a breaker found no hint for them, and that appending --recompute full to a module list
    is refused)."""
    from shardplan.search import RECOMPUTE_ORDER
    p = e.parallel
    if p.recompute not in RECOMPUTE_ORDER:
        return []
    partial = {"recompute_modules": "--recompute-modules", "recompute_layers": "--recompute-layers",
               "remat_saved": "--remat-saved"}
    given = [f for f in partial if getattr(p, f) is not None]
    drop = {f: None for f in given}
    without = f" (without {', '.join(partial[f] for f in given)})" if given else ""
    later = RECOMPUTE_ORDER[RECOMPUTE_ORDER.index(p.recompute) + (0 if given else 1):]
    return [(f"--recompute {r}{without}", {"recompute": r, **drop}) for r in later
            if not (r == p.recompute == "selective" and "recompute_modules" not in given)]


def _smaller_microbatch(e) -> list[tuple[str, dict]]:
    """The divisors of the layout's microbatch size below it, largest first, as (flag, layout fields) pairs."""
    mbs = e.parallel.microbatch_size
    return [(f"--microbatch-size {d}", {"microbatch_size": d}) for d in range(mbs - 1, 0, -1) if mbs % d == 0]


def microbatch_hint(e) -> str | None:
    """For a layout that does not fit: the largest smaller microbatch (sequences per microbatch per data-parallel
    rank, a divisor of the layout's) with which it fits, its peak and step time, or None. Activations scale with the
    microbatch (Korthikanti et al. 2022, Eq. 2: s b h per tensor), so a smaller one is the first lever a pinned
    --microbatch-size leaves (a breaker's --microbatch-size 16 got a pointer to `plan`, which found nothing either)."""
    return None if e.fits else _first_fitting(e, _smaller_microbatch(e))


def _fewest_fitting(lo: int, hi: int, probe: Callable[[int], Any]) -> tuple[int, Any] | None:
    """The smallest n in [lo, hi] whose ``probe(n)`` (an Estimate, or None when invalid) is :func:`_offered`, and its
    estimate, by bisection: for counts where more only lowers the peak (layers offloaded or recomputed); None when
    even ``hi`` is not."""
    def ok(n: int):
        other = probe(n)
        return other if other is not None and _offered(other) else None
    if lo > hi or ok(hi) is None:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) is not None else (mid + 1, hi)
    return lo, ok(lo)


def recompute_layers_hint(e) -> str | None:
    """For a layout with a partial full recompute (``recompute_layers`` N of each stage's layers) that does not fit:
    the fewest recomputed layers with which it fits, found by bisection (more recomputed layers only lower the peak:
    each keeps its input alone, :func:`shardplan.cost.memory.layer_activation_bytes`), its peak and step time; None
    when none below recomputing every layer fits or is valid."""
    from shardplan.cost.step import estimate
    from shardplan.errors import ConfigError
    p = e.parallel
    if e.fits or p.recompute != "full" or p.recompute_layers is None:
        return None
    top = math.ceil(max(e.layout.stage_layers) / max(1, p.virtual_stages))

    def probe(n: int):
        try:
            return estimate(e.model, e.hardware, e.training, p.model_copy(update={"recompute_layers": n}),
                            e.layout.n_devices)
        except ConfigError:
            return None
    found = _fewest_fitting(p.recompute_layers + 1, top, probe)
    if found is None:
        return None
    n, best = found
    return (f"it fits with --recompute-layers {n} ({_gib(best.memory.total)} GiB; step {fmt_seconds(best.step_s)} "
            f"against {fmt_seconds(e.step_s)})")


def combined_hint(e) -> str | None:
    """For a layout that no single change fits (:func:`zero_hint`, :func:`recompute_hint`): the first pair of a higher
    ZeRO stage and more recompute with which it fits (lowest stage first, then the lighter recompute), else of a
    smaller microbatch and more recompute (largest microbatch first), else an
    offloaded optimizer (``--offload-optimizer``; alone, then with a stage, more recompute or both) where the host
    link is known; None when nothing of these fits. Each candidate is an :func:`shardplan.cost.step.estimate` of the
    changed layout, so a value the profile does not run is skipped, not suggested."""
    if e.fits:
        return None

    def pairs(zero: list) -> list[tuple[str, dict]]:
        return [(f"{zf} {rf}", {**zu, **ru}) for zf, zu in zero for rf, ru in _later_recompute(e)]
    # a smaller microbatch with more recompute (a pinned --microbatch-size 8)
    changes = pairs(_higher_zero(e)) + [(f"{mf} {rf}", {**mu, **ru}) for mf, mu in _smaller_microbatch(e)
                                        for rf, ru in _later_recompute(e)]
    if not e.parallel.offload_optimizer and e.hardware.host_bandwidth:
        staged = _higher_zero(e, sharding=False)
        changes += [(f"--offload-optimizer {flags}".strip(), {**update, "offload_optimizer": True})
                    for flags, update in [("", {}), *staged, *_later_recompute(e), *pairs(staged)]]
    return _first_fitting(e, changes)


def zero_hint(e) -> str | None:
    """For a layout that does not fit: the lowest higher ZeRO stage the framework profile runs with the layout's
    other fields (``FrameworkProfile.zero_stages``; a data-parallel x context-parallel group of more than one rank
    to shard over) with which it fits, its peak and step time, or None (it fits, no group, no stage fits or is
    valid)."""
    return None if e.fits else _first_fitting(e, _higher_zero(e))


def recompute_hint(e) -> str | None:
    """For a layout that does not fit: the first of selective and full activation recompute (of those the framework
    profile runs, ``FrameworkProfile.recomputes``) beyond the layout's own with which it fits, its peak and step time,
    or None (it fits, it already recomputes in full, or neither fits or is valid)."""
    return None if e.fits else _first_fitting(e, _later_recompute(e))


#: what :func:`does_not_fit` suggests; ``export`` names its own ``plan --export`` instead (:func:`raise_if_negative`)
PLAN_HINT = "try `shardplan plan` with the same flags for layouts that fit"


def does_not_fit(e, plan_hint: str = PLAN_HINT) -> str:
    """The message of an estimate whose layout does not fit in HBM (exit code 1), with :func:`zero_hint` when a
    higher ZeRO stage, :func:`recompute_hint` when recomputing activations or :func:`offload_hint` when offloading
    them would make it fit (:func:`combined_hint` when neither a ZeRO stage nor recompute alone does), ending in
    ``plan_hint``."""
    single = [h for h in (zero_hint(e), recompute_layers_hint(e), recompute_hint(e), microbatch_hint(e)) if h]
    hints = [h for h in (*single, None if single else combined_hint(e), offload_hint(e), fp8_moe_cache_hint(e)) if h]
    limit = fit_limit_text(e.hardware.hbm_bytes, e.training.framework)
    return (f"the layout does not fit: {_gib(e.memory.total)} GiB per device of {limit}; "
            + "".join(f"{h}; " for h in hints) + plan_hint)


def raise_if_negative(e, prefix: str = "", plan_hint: str = PLAN_HINT) -> None:
    """Exit 1 (:func:`shardplan.cli.common.negative`) when the estimate's layout does not fit or is
    predicted to fail (:attr:`shardplan.cost.step.Estimate.runs`), naming every reason after
    ``prefix`` (e.g. ``"not exported: "``); ``plan_hint`` replaces the suggestion to run ``shardplan plan``.

    Raises:
        typer.Exit: code 1, after printing the reasons on stderr.
    """
    reasons = negative_reasons(e, plan_hint)
    if reasons:
        raise negative(prefix + "; ".join(reasons))


def negative_reasons(e, plan_hint: str = PLAN_HINT) -> list[str]:
    """Why the estimate's layout is a negative result (exit code 1): it does not fit (:func:`does_not_fit`, with
    ``plan_hint``), or it is predicted to fail; [] when it runs. ``estimate --json`` writes them as
    ``negative_reasons``, the message on stderr joins them."""
    return ([does_not_fit(e, plan_hint)] if not e.fits else []) + (
        [f"the layout is predicted to fail: {e.failure}"] if e.failure else [])


def _count(n: int, noun: str) -> str:
    """``1 local expert``, ``16 local experts``, ``2 microbatches``."""
    return f"{n} {noun}" + ("" if n == 1 else "es" if noun.endswith("ch") else "s")


def _builtin_values(fw, *fields: str) -> bool:
    """Whether ``fw`` carries the built-in profile's own values of ``fields`` (so a note may call them
    measured or fitted, as the preset's sources say), rather than values a profile file set."""
    from shardplan.presets.frameworks import FRAMEWORKS
    builtin = FRAMEWORKS.get(fw.name)
    return (builtin is not None and all(getattr(builtin, f) == getattr(fw, f) for f in fields)
            and all(f in fw.sources for f in fields))


def moe_overhead_note(e) -> str | None:
    """A sentence on the framework profile's fixed MoE costs when they are over a tenth of the step
    (:func:`shardplan.cost.compute.moe_expert_cost_s` on the MoE layers of the priced stage,
    ``Estimate.priced_stage``, x microbatches: the per-expert host work beyond the expert GEMMs plus the
    per-layer constant), with the levers this layout still has, or None."""
    from shardplan.cost.compute import layer_times, moe_expert_cost_s, routed_expert_gemm_s
    from shardplan.cost.memory import stage_params
    fw, p = e.training.framework, e.parallel
    if not e.model.is_moe or not (fw.moe_expert_overhead_s or fw.moe_layer_overhead_s):
        return None
    local = max(1, e.model.n_experts // p.ep)
    layers = stage_params(e.model, e.layout, e.priced_stage).moe_layers
    m = e.layout.microbatches
    moe_t = layer_times(e.model, e.training, e.hardware, p, e.layout.local_tokens, True)
    cost = moe_expert_cost_s(e.model, e.training, p, layers, moe_t) * m
    if cost < 0.1 * e.step_s:
        return None
    hidden = routed_expert_gemm_s(moe_t)
    origin = ("fitted on public Megatron-Core MoE runs, docs/accuracy.md"
              if _builtin_values(fw, "moe_expert_overhead_s", "moe_layer_overhead_s")
              else "the profile's moe_expert_overhead_s and moe_layer_overhead_s")
    wider_ep = local > 1 and p.ep < min(e.model.n_experts, p.dp * p.cp)  # ep folds over the data-parallel ranks
    levers = (["fewer local experts (larger ep)"] if wider_ep else []) + ["fewer MoE layers per stage (larger pp)"]
    levers += ["fewer, larger microbatches"] if m > 1 else []
    return (f"framework overhead includes {fmt_seconds(cost)} of the {fw.label} profile's fixed MoE costs: "
            f"(max(0, {fmt_seconds(fw.moe_expert_overhead_s)} x {_count(local, 'local expert')} - "
            f"{fmt_seconds(hidden)} of expert GEMMs) + {fmt_seconds(fw.moe_layer_overhead_s)}) x "
            f"{_count(layers, 'MoE layer')} x {_count(m, 'microbatch')} "
            f"({origin}); {', '.join(levers[:-1]) + ' or ' + levers[-1] if len(levers) > 1 else levers[0]} "
            "shrink it")


def layer_overhead_note(e) -> str | None:
    """A sentence on the framework profile's per-layer cost (``FrameworkProfile.layer_overhead_s`` x the priced
    stage's charged layers x microbatches, part of ``Estimate.fixed_overhead_s``) when it is over a tenth of the
    step, naming which layers pay it (every layer, or only recomputed ones:
    ``FrameworkProfile.layer_overhead_recomputed_only``) and the lever that removes it, or None."""
    from shardplan.cost.compute import charged_layers
    from shardplan.cost.memory import stage_params
    fw, p = e.training.framework, e.parallel
    if not fw.layer_overhead_s:
        return None
    layers = stage_params(e.model, e.layout, e.priced_stage).layers
    cost = e.layout.microbatches * charged_layers(p, fw, layers) * fw.layer_overhead_s
    if cost < 0.1 * e.step_s:
        return None
    origin = ("fitted on the shared rows of that framework, docs/accuracy.md"
              if _builtin_values(fw, "layer_overhead_s") else "the profile's layer_overhead_s")
    fewer = " or fewer recomputed layers (--recompute-layers)" if fw.module_recompute else ""
    who = (f"only checkpointed (recomputed) layers pay it, so recompute=none{fewer} avoids it; "
           "whether it also holds without recomputation is not identified by the rows it was fitted on"
           if fw.layer_overhead_recomputed_only else "every layer pays it; fewer layers per stage (larger pp) or "
           "fewer, larger microbatches shrink it")
    return (f"framework overhead includes {fmt_seconds(cost)} of the {fw.label} profile's per-layer cost "
            f"({fmt_seconds(fw.layer_overhead_s)} per layer per microbatch, {origin}): {who}")


def attention_kernel_note(e) -> str | None:
    """A sentence naming the attention kernel when the framework profile prices a slower one than
    FlashAttention-2 (llm-foundry's Triton FlashAttention, ``shardplan.cost.gemm.TRITON_FLASH_SPEED``), or the TPU
    padding of narrow heads (:func:`shardplan.cost.compute.mxu_head_padding`), or None."""
    from shardplan.cost.compute import TPU_LANE_WIDTH, mxu_head_padding
    from shardplan.cost.gemm import TRITON_FLASH_SPEED, attention_kernel
    fw = e.training.framework
    kern = attention_kernel(e.hardware, fw.name, fw.attention_kernel)
    pad = mxu_head_padding(e.hardware, e.model.dim_head)
    if kern is None and pad > 1 and e.training.attention == "flash":
        return (f"{e.model.dim_head}-wide heads are padded to the TPU's {TPU_LANE_WIDTH} lanes in the attention "
                f"core: it costs {pad:.3g} x its FLOPs (Cloud TPU performance guide, tensor dimensions)")
    if kern is None or kern.name != "triton" or e.training.attention != "flash":
        return None
    return (f"the {fw.label} profile prices the attention core as llm-foundry's Triton FlashAttention (attn_impl: "
            f"triton) at {TRITON_FLASH_SPEED:g} x FlashAttention-2's speed (fitted, docs/accuracy.md); a profile with "
            "attention_kernel: fa2 (e.g. --framework pytorch-fsdp) prices FlashAttention-2")


def softcap_note(e) -> str | None:
    """A sentence when the model caps its attention scores (``ModelSpec.attention_softcap``, Gemma 2) and the price
    is a flash kernel's: only kernels with a softcap run it fused (FlashAttention >= 2.6.0 ``softcap``, FlexAttention
    ``score_mod``); PyTorch's SDPA kernels have none, and transformers' Gemma 2 falls back to eager attention, which
    materialises the scores (``--attention naive`` prices that). New-user pass 57: the price moved 2.5x between the two
    and nothing said which one it was."""
    cap = e.model.attention_softcap
    if cap is None or e.training.attention != "flash":
        return None
    naive = e.training.model_copy(update={"attention": "naive"})
    from shardplan.cost.step import estimate as estimate_
    alt = estimate_(e.model, e.hardware, naive, e.parallel, e.layout.n_devices)
    n = e.layout.n_devices
    return (f"{e.model.name} caps its attention scores (softcap {cap:g}): priced with a flash kernel that applies it "
            f"(FlashAttention >= 2.6 softcap, FlexAttention); PyTorch SDPA has no softcap and transformers then runs "
            f"eager attention, which keeps the scores: --attention naive prices that ({alt.tokens_per_s / n:,.0f} "
            f"tokens/s per device, {alt.memory.total / 2**30:,.1f} GiB{'' if alt.fits else ', does not fit'})")


def _mib(x: float) -> str:
    """Bytes as MiB for a note: ``64 MiB``, ``0.5 MiB``, ``1,000 B`` below a tenth of a MiB."""
    return f"{x:,.0f} B" if x < 0.1 * 2**20 else f"{x / 2**20:,.4g} MiB"


def stall_note(e) -> str | None:
    """A sentence on the framework profile's pipeline message stall (``Estimate.stall_s``, part of the
    framework overhead; :func:`shardplan.cost.pipeline.message_stall_s`) when it is over a tenth of
    the step, naming the trigger that applied it (``Estimate.stall_rule``), this layout's values that
    met it, and what avoids it, or None."""
    from shardplan.cost.pipeline import boundary_message_bytes
    from shardplan.cost.step import job_nodes
    fw, p = e.training.framework, e.layout.parallel
    if e.stall_s < 0.1 * e.step_s or e.stall_rule is None:
        return None
    nodes = job_nodes(e.layout.n_devices, e.hardware)
    zero1 = "zero_stage 1 or " if nodes < fw.pp_stall_min_nodes else ""
    if e.stall_rule == "nodes" and fw.pp_stall_all_nodes is not None and nodes < fw.pp_stall_all_nodes:
        msg = boundary_message_bytes(e.layout, e.model.d_model, e.training.precision.activation_bytes)
        met, avoid = [], []
        if fw.pp_stall_min_dp is not None:
            avoid.append(f"dp < {fw.pp_stall_min_dp}")
            if p.dp >= fw.pp_stall_min_dp:
                met.append(f"dp={p.dp} >= {fw.pp_stall_min_dp}")
        if fw.pp_stall_min_message_bytes is not None:
            seqs = fw.pp_stall_min_sequences or 1
            fewer = f" or of fewer than {seqs} sequences" if seqs > 1 else ""
            avoid.append(f"a microbatch message (microbatch_size x seq_len x d_model x activation bytes) under "
                         f"{_mib(fw.pp_stall_min_message_bytes)}{fewer}")
            if msg >= fw.pp_stall_min_message_bytes and p.microbatch_size >= seqs:
                met.append(f"its microbatch message {_mib(msg)} >= {_mib(fw.pp_stall_min_message_bytes)}"
                           + (f" of {p.microbatch_size} sequences" if seqs > 1 else ""))
        why = (f"on jobs of {fw.pp_stall_min_nodes}-{fw.pp_stall_all_nodes - 1} nodes a pipeline stalls when "
               f"{' or '.join(met)} (this job: {_count(nodes, 'node')}; every pipeline stalls "
               f"from {_count(fw.pp_stall_all_nodes, 'node')}); {' and '.join(avoid)}, or pp=1, avoid it")
    elif e.stall_rule == "nodes":
        first = fw.pp_stall_all_nodes or fw.pp_stall_min_nodes
        why = (f"every pipeline stalls on jobs of {_count(first, 'node')} or more (this job: {_count(nodes, 'node')}); "
               "pp=1 avoids it")
    elif e.stall_rule == "tp_span":
        span = fw.pp_stall_min_tp_nodes or 0
        fix = f"a tp group within {_count(span - 1, 'node')}, or pp=1, avoids it" if span > 1 else "pp=1 avoids it"
        why = f"pipelines whose tp group spans {_count(span, 'node')} or more stall; {fix}"
    else:
        upto = f" to {_count(fw.pp_stall_zero0_max_nodes - 1, 'node')}" if fw.pp_stall_zero0_max_nodes else ""
        why = (f"ZeRO-0 pipelines with dp > 1 stall from {_count(fw.pp_stall_zero0_min_nodes, 'node')}{upto} with "
               f"{fw.pp_stall_zero0_min_microbatches}+ microbatches (this layout: {e.layout.microbatches}); "
               f"{zero1}fewer microbatches avoid it")
    messages = round(e.stall_s / fw.pp_message_stall_s)
    origin = ("measured on the cluster the profile was fitted to, in the runs made before nanotron's pipeline fix: "
              "docs/calibration.md" if _builtin_values(fw, "pp_message_stall_s") else "the profile's pp_message_stall_s")
    return (f"framework overhead includes {fmt_seconds(e.stall_s)} of the {fw.label} profile's pipeline message "
            f"stall ({messages} point-to-point messages on the busiest stage's path x "
            f"{fmt_seconds(fw.pp_message_stall_s)}, {origin}): {why}")


def allocator_note(e) -> str | None:
    """A sentence on the profile's allocator retries (``Estimate.allocator_retry_s``, part of the framework
    overhead; :func:`shardplan.cost.step.allocator_retry_s`) when they are over a tenth of the step, or None."""
    fw = e.training.framework
    if e.allocator_retry_s < 0.1 * e.step_s or not e.fits:  # a layout that does not fit has a bigger problem
        return None
    usage = e.memory.total / e.hardware.hbm_bytes
    origin = ("measured on the cluster the profile was fitted to, docs/accuracy.md"
              if _builtin_values(fw, "allocator_retry_s", "allocator_pressure_start")
              else "the profile's allocator_retry_s and allocator_pressure_start")
    return (f"framework overhead includes {fmt_seconds(e.allocator_retry_s)} of allocator retries: the {fw.label} "
            f"profile's caching allocator frees and retries every microbatch once usage passes "
            f"{fw.allocator_pressure_start:.0%} of HBM (this layout: {usage:.0%}; {origin}); a layout with more "
            "headroom avoids it")


def routing_note(e) -> str | None:
    """A sentence when an MoE load setting was given but prices nothing, or None: on a dense model
    ``--moe-capacity-factor`` and ``--moe-imbalance`` (the experts' load) change nothing; ``--moe-routing`` only sets
    how many copies DeepEP sends (:func:`shardplan.cost.axes.ep.deepep_copy_share`), so it needs an MoE model, ep > 1
    and ``--moe-dispatcher deepep``. Notes, not errors: Megatron-LM takes a capacity factor on a dense model and
    ignores it, and an imported script keeps it."""
    p, tr = e.parallel, e.training
    if not e.model.is_moe:
        given = [f"--moe-capacity-factor {tr.moe_capacity_factor:g}"] if tr.moe_capacity_factor is not None else []
        given += [f"--moe-imbalance {tr.moe_imbalance:g}"] if tr.moe_imbalance != 1.0 else []
        if given:
            return (f"{' and '.join(given)} change{'s' if len(given) == 1 else ''} nothing here: {e.model.name} is "
                    "dense (no experts to load)")
    if tr.moe_routing == "uniform" or (e.model.is_moe and p.ep > 1 and p.moe_dispatcher == "deepep"):
        return None
    return (f"--moe-routing {tr.moe_routing} changes nothing here: it sets the copies DeepEP sends, which "
            "needs an MoE model, ep > 1 and --moe-dispatcher deepep")


def tp_overlap_note(e) -> str | None:
    """A sentence when tensor parallelism runs without ``--tp-overlap`` under a profile whose search tries it
    (``FrameworkProfile.searched_tp_overlap``: Megatron-LM's ``--tp-comm-overlap``), or None: a layout copied from a
    ``plan`` row marked ``+overlap`` without the flag prices its TP collectives exposed (a new user's 70B TP 8 step
    read 74.2 s against the row's 58.0 s)."""
    p = e.parallel
    if p.tp == 1 or p.tp_overlap or not e.training.framework.searched_tp_overlap:
        return None
    exposed = sum(c.exposed_s for c in e.collectives if c.axis == "tp")
    return (f"tp_overlap is off: the TP collectives are priced exposed ({fmt_seconds(exposed)} per step); plan rows "
            "marked '+overlap' run them under the GEMMs (--tp-overlap, Megatron-LM's --tp-comm-overlap)")


#: a selective recompute that saves under this share of the memory of the same layout without recompute saves nothing
#: worth its time, and one that costs under this share of the step is not worth a note (:func:`selective_recompute_note`)
SELECTIVE_SAVING_MIN = 0.01


def selective_recompute_note(e) -> str | None:
    """A sentence when ``recompute=selective`` saves under :data:`SELECTIVE_SAVING_MIN` of the memory of the same
    layout without recompute but costs time (new-user pass 54: a 70B 128k import, 40.2 s against 34.7 s at the same
    42.4 GiB), or None. Selective recompute (Korthikanti et al. 2022, Sec. 4.2) re-runs the attention core to drop its
    ``s x s`` scores and softmax; a flash-attention kernel keeps none of them, so the re-run buys no memory."""
    p = e.parallel
    if p.recompute != "selective" or e.recompute_s <= SELECTIVE_SAVING_MIN * e.step_s:  # nothing worth a note
        return None
    plain = _without_recompute(e)
    if plain is None:
        return None
    saved = plain.memory.total - e.memory.total
    if saved > SELECTIVE_SAVING_MIN * plain.memory.total or not plain.fits:
        return None
    return (f"recompute=selective saves {max(saved, 0) / 2**30:.2f} GiB here and costs "
            f"{fmt_seconds(e.step_s - plain.step_s)} per step ({(e.step_s - plain.step_s) / e.step_s:.0%}): with "
            f"{e.training.attention} attention the re-run attention core frees no s x s scores; --recompute none fits "
            f"the same ({plain.memory.total / 2**30:.1f} GiB) and runs faster")


def _without_recompute(e):
    """The estimate of ``e``'s layout without recompute (recompute 'none', no recomputed modules, layers or saved
    tensors), or None for a layout valid only with recompute."""
    from shardplan.cost.step import estimate
    from shardplan.errors import ConfigError
    try:
        return estimate(e.model, e.hardware, e.training, e.parallel.model_copy(update={
            "recompute": "none", "recompute_layers": None, "recompute_modules": None, "remat_saved": None}),
            e.layout.n_devices)
    except ConfigError:
        return None


def full_recompute_note(e) -> str | None:
    """A sentence when ``recompute=full`` costs over :data:`SELECTIVE_SAVING_MIN` of the step and the same layout
    without recompute fits (new-user pass 56b: TP 8 CP 4 at 128k with full recompute, 62.1 s and 13.9 GiB of 80;
    without it 47.8 s and 29.8 GiB, unsaid), or None. Full recompute re-runs each layer's forward in the backward
    (Korthikanti et al. 2022, Sec. 4.1: one more forward, ~33% more FLOPs); it buys memory, not speed."""
    if e.parallel.recompute != "full" or not e.fits or e.recompute_s <= SELECTIVE_SAVING_MIN * e.step_s:
        return None
    plain = _without_recompute(e)
    if plain is None or not plain.fits or plain.step_s >= e.step_s:
        return None
    return (f"recompute=full costs {fmt_seconds(e.step_s - plain.step_s)} per step "
            f"({(e.step_s - plain.step_s) / e.step_s:.0%}) and the same layout fits without it "
            f"({plain.memory.total / 2**30:.1f} GiB, {headroom(plain) / 2**30:.1f} GiB free): --recompute none runs "
            f"faster")


def cp_balance_note(e) -> str | None:
    """A sentence when context parallelism runs under a profile that prices contiguous, unbalanced sequence chunks
    (``FrameworkProfile.cp_load_balance`` False: torchtitan's, fitted on its published CP tables), or None: current
    torchtitan balances the causal work by default (``[parallelism] context_parallel_load_balancer = "headtail"``), so
    a run of today's torchtitan is priced by ``--framework torchtitan+cp_load_balance=true`` (new-user pass 54)."""
    fw = e.training.framework
    if e.parallel.cp == 1 or fw.cp_load_balance or e.parallel.cp_comm == "a2a":  # Ulysses shards heads: no imbalance
        return None
    how = (f"--framework {fw.origin}+cp_load_balance=true" if fw.inline else
           f"cp_load_balance: true in {fw.origin}" if fw.origin else f"--framework {fw.name}+cp_load_balance=true")
    return (f"the {fw.label} profile prices cp={e.parallel.cp} as contiguous sequence chunks, each rank's causal "
            "attention unbalanced (as its published CP runs ran); a run with a load balancer (torchtitan's "
            f"context_parallel_load_balancer = \"headtail\", its current default) is priced by {how}")


def unreleased_schedule_note(fw, schedules) -> str | None:
    """A sentence for the pipeline ``schedules`` (names) that ``fw`` (a FrameworkProfile) prices but its
    released code does not run (``FrameworkProfile.released_schedules``), or None."""
    off = [s for s in dict.fromkeys(schedules) if fw.released_schedules is not None and s not in fw.released_schedules]
    if not off:
        return None
    why = fw.sources.get("released_schedules")
    return (f"schedule={', '.join(off)} is priced as asked, but the {fw.name} framework's released code runs "
            f"{', '.join(fw.released_schedules)}" + (f" ({why})" if why else " (its profile's sources: released_schedules)"))


def estimate_json(e) -> dict:
    """The JSON document of ``estimate --json``: :meth:`Estimate.to_dict`, the reasons of a negative result, the
    held-out throughput band per device (``throughput_band``, None without one; :mod:`shardplan.accuracy_band`) and
    the notes ``estimate`` prints on stderr (``notes``: :func:`estimate_notes`, a list of strings)."""
    from shardplan.accuracy_band import estimate_band
    band = estimate_band(e)
    return {**e.to_dict(), "negative_reasons": negative_reasons(e),
            "throughput_band": band.to_dict(e.tokens_per_s / e.layout.n_devices) if band else None,
            "notes": estimate_notes(e)}


def peak_band_text(e) -> str:
    """The peak band of the "fits" row (``MemoryBreakdown.peak_low`` - ``peak_high``: no to twice the fitted allocator
    fragmentation), or, for a profile that prices none (``FrameworkProfile.allocator_overhead`` 0), that it has no
    band rather than a zero-width one read as certainty (breaker finding)."""
    from shardplan.explain import has_peak_band, tight_fit_text
    mem, fw = e.memory, e.training.framework
    if has_peak_band(e):
        return f"peak band {_gib(mem.peak_low)}-{_gib(mem.peak_high)}"
    tight = tight_fit_text(e)
    return (f"no peak band: the {escape(fw.label)} profile prices no allocator fragmentation (allocator_overhead 0)"
            + (f"; {tight}" if tight else ""))


def bound_text(e) -> str:
    """The "bound by" row: "memory" for a layout that does not fit (with the bound the step would have); else
    :attr:`Estimate.bound`, and for a compute bound either its share when the matmuls are under half the step (a new
    user read "bound by compute" as "the matmuls fill the step" at 40%) or the runner-up (:func:`_runner_up`) when it
    is within a quarter of the matmuls. Thresholds are wording choices, not cost-model constants."""
    if not e.fits:  # memory binds first (a new user read "bound by compute" beside "fits: no")
        return f"memory: the layout does not fit (were it to run: {e.bound})"
    share = e.matmul_s / e.step_s if e.step_s > 0 else 0.0
    if not e.bound.startswith("compute"):
        return e.bound
    if share < 0.5:
        return f"{e.bound}: the largest part, {share:.0%} of the step (no part is half of it; step time table below)"
    name, seconds = _runner_up(e)
    if seconds >= 0.75 * e.matmul_s:  # a new user's tp=16 across nodes: matmuls 51%, tp communication 46%
        return f"{e.bound}, {share:.0%} of the step, with {name} close behind at {seconds / e.step_s:.0%}"
    return e.bound


def _runner_up(e) -> tuple[str, float]:
    """The largest step-time part besides the matmuls (seconds per step): element-wise, recompute, bubble, optimizer,
    framework overhead, overlap slowdown, or one axis's exposed communication (all its collectives, named with the
    network level)."""
    parts = {"element-wise (HBM) time": e.elementwise_s, "recompute": e.recompute_s, "the pipeline bubble": e.bubble_s,
             "the optimizer step": e.optimizer_s, "framework overhead": e.overhead_s,
             "the overlap slowdown": e.overlap_slowdown_s}
    for c in e.collectives:
        key = f"exposed {c.label} communication ({c.level})"
        parts[key] = parts.get(key, 0.0) + c.exposed_s
    name = max(parts, key=parts.get)  # type: ignore[arg-type]
    return name, parts[name]


def _summary_table(e) -> Table:
    head = Table(title=f"{escape(e.model.name)} on {e.layout.n_devices} x {escape(e.hardware.name)}: {e.parallel.short()}",
                 show_header=False)
    active = f" ({e.model.n_active_params:,} active per token, embeddings included)" if e.model.is_moe else ""
    head.add_row("parameters", f"{e.model.n_params:,}{active}")
    head.add_row("tokens / step", f"{e.training.global_batch_tokens:,} ({_count(e.layout.microbatches, 'microbatch')})")
    head.add_row("step time", fmt_seconds(e.step_s))
    per_device = fmt_rate(e.tokens_per_s / e.layout.n_devices)
    head.add_row("tokens / s", f"{fmt_rate(e.tokens_per_s)} ({per_device} per device)")
    from shardplan.accuracy_band import band_text, estimate_band, out_of_scope
    band = estimate_band(e)
    if band:
        head.add_row("80% band", escape(band_text(band, e.tokens_per_s / e.layout.n_devices)))
    elif e.runs and (why := out_of_scope(e.model.n_params, e.step_s)):
        head.add_row("80% band", escape(why))
    low = e.training.precision.compute_dtype if e.training.precision.quantized else None
    head.add_row("MFU / HFU" + (f" (of the {low} peak)" if low else ""), f"{e.mfu:.1%} / {e.hfu:.1%}"
                 + (f" (MFU of the bf16 peak: {e.mfu_of_bf16_peak:.1%})" if low else ""))
    head.add_row("bound by", escape(bound_text(e)))
    mem = e.memory
    fw = e.training.framework
    routing = f"; MoE routing {e.training.moe_routing}" if e.model.is_moe else ""
    opt = e.training.optimizer_dtype
    state = (f"; optimizer state {opt}" + (" (the profile's)" if fw.optimizer_dtype == opt else "")
             if opt != "fp32" else "")
    head.add_row("framework", f"{escape(fw.label)} profile{routing}{state}")
    limit = (f", the {escape(fw.label)} profile's runs fail above {100 * fw.usable_hbm_fraction:g}% of it, "
             f"{_gib(e.hbm_fit_limit)} GiB" if fw.usable_hbm_fraction < 1 else "")
    # the headroom is to that limit: say so where the limit is not the HBM printed beside it (a new user read
    # "headroom -23.84 GiB" beside "91.04 of 80.00 GiB")
    to = f" to {_gib(e.hbm_fit_limit)} GiB" if fw.usable_hbm_fraction < 1 else ""
    from shardplan.explain import tight_fit
    head.add_row("fits", ("[yellow]yes, tightly[/]" if tight_fit(e) else "[green]yes[/]" if e.fits else "[red]no[/]") +
                 f" ({_gib(mem.total)} of {_gib(e.hardware.hbm_bytes)} GiB{limit}; headroom "
                 f"{_headroom_text(headroom(e))}{to}; {peak_band_text(e)})")
    if e.failure:
        head.add_row("runs", f"[red]no[/]: {e.failure}")
    return head


#: the memory parts the allocated peak adds up (``MemoryBreakdown.to_dict`` keys), in the table's order
PEAK_PARTS = ("params", "grads", "optimizer", "zero3_buffers", "activations", "logits", "comm_buffers", "workspace",
              "optimizer_temp")
#: after which part the table prints a subtotal: part -> (label, ``MemoryBreakdown.to_dict`` key of the sum)
SUBTOTAL_AFTER = {"optimizer_temp": ("allocated: the parts above at once", "allocated"),
                  "fragmentation": ("allocator_peak: allocated + fragmentation", "allocator_peak"),
                  "runtime_reserve": ("total: allocator peak + context + reserve", "total")}


def _memory_and_time_tables(e, d: dict) -> tuple[Table, Table]:
    pp = e.parallel.pp
    stage = d["memory_bytes"].get("stage", 0)
    # the most loaded pipeline stage, named so a pipelined layout says which stage it shows (stage indices are
    # 0-based everywhere else, JSON included: say so beside the count)
    mem = Table(title=f"memory, stage {stage} (of 0-{pp - 1})" if pp > 1 else "memory per device")
    mem.add_column("part")
    mem.add_column("GiB", justify="right")
    m = d["memory_bytes"]
    for k in (*PEAK_PARTS, "fragmentation", "runtime_context", "runtime_reserve"):
        mem.add_row(k, _gib(m[k]))
        if k in SUBTOTAL_AFTER:  # the sums in their own section, each saying what it adds up
            mem.rows[-1].end_section = True
            label, key = SUBTOTAL_AFTER[k]
            if key == "allocated" and e.memory.peak_phase != "all terms":
                label = f"allocated: the {e.memory.peak_phase} peak (not every part above at once)"
            mem.add_row(f"[bold]{label}[/]" if key == "total" else label, _gib(m[key]), end_section=True)
    if m["peak_high"] > m["peak_low"]:  # a profile without fragmentation has no band (the fits row says so)
        mem.add_row("peak band (low-high)", f"{_gib(m['peak_low'])}-{_gib(m['peak_high'])}")
    if m.get("host_offload"):
        where = "host memory or NVMe" if e.parallel.nvme_offload else "host memory"
        mem.add_row(f"host_offload ({where} per device, not in total)", _gib(m["host_offload"]))
        # what the busiest host's memory holds for the devices it drives (each stage's)
        share, cap = min(e.layout.n_devices, e.hardware.host_devices), e.hardware.host_memory_bytes
        share_text = f"{share} device{'s' if share != 1 else ''}" + (", NVMe state not counted"
                                                                     if e.parallel.nvme_offload else "")
        mem.add_row(f"  host memory per host ({share_text}"
                    + (f", of {_gib(cap)} GiB)" if cap else ", host memory unknown: not checked)"),
                    _gib(e.host_memory_per_host))
    tt = Table(title="step time")
    tt.add_column("part")
    tt.add_column("time", justify="right")
    tt.add_column("share", justify="right")
    optional = ("framework_overhead", "overlap_slowdown", "activation_offload", "parameter_offload")
    for k in ("matmul", "elementwise", "recompute", "exposed_comm", "bubble", "optimizer", *optional):
        v = d["time_s"][k]
        if v or k not in optional:  # only where they apply
            tt.add_row(k, fmt_seconds(v), f"{v / e.step_s:.1%}")
        if k == "matmul" and e.attention_s:  # the part that grows with the sequence (not added again to the step)
            tt.add_row("  of which attention core", fmt_seconds(e.attention_s), f"{e.attention_s / e.step_s:.1%}")
    tt.add_row("[bold]step[/]", fmt_seconds(e.step_s), "100%")
    return mem, tt


def shown_collectives(e) -> list:
    """The collectives the table shows: all but those over a group of one device that move no bytes."""
    return [c for c in e.collectives if c.group_size > 1 or c.bytes_per_device > 0]


def _collectives_table(e) -> Table:
    """The collectives of one step, one row each, leaving out those over a group of one device that move nothing
    (e.g. the expert-gradient reduction where expert_dp = 1; ``--json`` keeps them). A SendRecv's group reads
    '2 (peer)': one sender and one receiver, whatever the ring's size."""
    ct = Table(title="collectives per step (per device)")
    for col in ("op", "axis", "purpose", "phase", "group", "bounded by", "calls", "GiB sent", "time", "exposed"):
        ct.add_column(col, justify="right" if col in ("calls", "GiB sent", "time", "exposed", "group") else "left")
    for c in shown_collectives(e):
        # a SendRecv's group is its sender and receiver: say so (a cp = 4 ring read "2" as a bug)
        group = f"{c.group_size} (peer)" if c.op == "SendRecv" else str(c.group_size)
        ct.add_row(c.op, c.label, c.purpose, c.phase, group, c.level, f"{c.calls:,.0f}",
                   _gib(c.bytes_per_device), fmt_seconds(c.time_s), fmt_seconds(c.exposed_s))
    return ct


def _roofline_line(e) -> str:
    th, p = e.thresholds, e.parallel
    group = p.dp * p.cp
    dp_txt = (f"data-parallel group of {group} on {th['dp_level']}: {th['tokens_per_dp_rank']:,.0f} tokens per rank vs "
              f"critical {th['critical_tokens_per_dp_rank']:,.0f} "
              f"({'compute' if th['dp_compute_bound'] else 'bandwidth'}-bound)") if group > 1 else "no data parallelism"
    tp_txt = (f"largest compute-bound tp ~{th['max_compute_bound_tp']:.1f}" if th['max_compute_bound_tp'] >= 1
              else "tp is bandwidth-bound at any degree for this ffn_dim")
    return (f"roofline: {dp_txt}; {tp_txt}{_ep_roofline_text(e)}; HBM ridge {th['hbm_critical_intensity']:.0f} "
            "FLOPs/byte")


def _ep_roofline_text(e) -> str:
    """The expert-parallel AllToAll on the roofline line ("" without one): the step's FLOPs per device over the bytes
    all its AllToAll passes send (1 / the sum of the passes' inverse intensities, :func:`shardplan.cost.step._roofline`)
    against the ridge C / W of the level it crosses, and whether it is exposed (new-user pass 56: the line named only
    the data-parallel group while 62% of an ep 32 step was AllToAll over the network)."""
    rows = [r for r in e.roofline if r["name"].startswith("AllToAll ep") and r["intensity"] > 0]
    if not rows:
        return ""
    intensity = 1.0 / sum(1.0 / r["intensity"] for r in rows)
    ridge = rows[0]["ridge"]
    exposed = sum(c.exposed_s for c in e.collectives if c.op == "AllToAll" and c.axis == "ep")
    share = f", {exposed / e.step_s:.0%} of the step exposed" if exposed > 0 and e.step_s > 0 else ""
    return (f"; ep AllToAll on {rows[0]['resource']}: {intensity:,.0f} FLOPs per byte vs ridge {ridge:,.0f} "
            f"({'compute' if intensity > ridge else 'bandwidth'}-bound{share})")


def compile_note(e) -> str | None:
    """Under the built-in eager ``torchtitan`` profile: the same layout priced with ``torchtitan-compile`` (torch.compile's
    fused element-wise kernels and compiled loss), its tokens/s per device and memory, or None (another profile, or
    the compiled estimate does not fit)."""
    from shardplan.cost.step import estimate
    from shardplan.presets.frameworks import FRAMEWORKS
    fw = e.training.framework
    if fw != FRAMEWORKS["torchtitan"]:
        return None
    c = estimate(e.model, e.hardware, e.training.model_copy(update={"framework": FRAMEWORKS["torchtitan-compile"]}),
                 e.parallel, e.layout.n_devices)
    if not c.fits:
        return None
    n = e.layout.n_devices
    return (f"with torch.compile (--framework torchtitan-compile, torchtitan's [compile] enable) the same layout is "
            f"predicted at {c.tokens_per_s / n:,.0f} tokens/s per device ({c.tokens_per_s / e.tokens_per_s - 1:+.0%}) "
            f"and {c.memory.total / 2**30:,.1f} GiB: fused element-wise kernels and a compiled loss (torchtitan's "
            f"Dec 2024 benchmark measured 1.16x for this switch on Llama 3.1 8B FSDP; docs/accuracy.md)")


#: the built-in profiles that price fused element-wise kernels and the profile for the same sharding under eager
#: Hugging Face model code (:data:`shardplan.presets.frameworks.FRAMEWORKS` 'hf-fsdp' / 'hf-deepspeed')
EAGER_TWIN = {"pytorch-fsdp": "hf-fsdp", "deepspeed": "hf-deepspeed"}


def eager_code_note(e) -> str | None:
    """Under the built-in ``pytorch-fsdp`` or ``deepspeed`` profile (fused element-wise kernels; Megatron-DeepSpeed's
    eager RoPE and SwiGLU where the profile has ``eager_ops``): the same layout
    priced with the profile for stock Hugging Face / eager model code (:data:`EAGER_TWIN`), its tokens/s per device,
    or None (another profile, a layout the eager profile does not run, or an eager estimate that does not fit)."""
    from shardplan.cost.step import estimate
    from shardplan.presets.frameworks import FRAMEWORKS
    fw = e.training.framework
    twin = next((t for name, t in EAGER_TWIN.items() if fw == FRAMEWORKS[name]), None)
    if twin is None:
        return None
    try:  # the twin may not run this layout (hf-deepspeed: no pipeline)
        c = estimate(e.model, e.hardware, e.training.model_copy(update={"framework": FRAMEWORKS[twin]}),
                     e.parallel, e.layout.n_devices)
    except ConfigError:
        return None
    n = e.layout.n_devices
    kernels = ("Megatron-DeepSpeed's kernels (fused norms and loss, eager RoPE and SwiGLU)" if fw.eager_ops
               else "fused element-wise kernels")
    head = (f"the {fw.label} profile prices {kernels}; stock Hugging Face model code (eager RMSNorm, "
            f"RoPE, SwiGLU and fp32 loss) under the same sharding (--framework {twin}) ")
    if not c.fits:
        return head + (f"needs {c.memory.total / 2**30:,.1f} GiB per device (the fp32 logits and unfused "
                       f"intermediates) and does not fit")
    change = c.tokens_per_s / e.tokens_per_s - 1
    why = ("; IBM's fms-acceleration benchmark measured fused kernels 10-13% faster on the same runs, docs/accuracy.md"
           if c.tokens_per_s <= e.tokens_per_s else
           f"; faster here because {twin} also drops the {fw.label} profile's per-layer checkpointing cost "
           "(Hugging Face checkpoints with torch.utils.checkpoint)")
    # a difference that rounds to 0% is "the same", not a signed 0% beside a reason for a difference
    diff = "the same to within 0.5%" if abs(change) < 0.005 else f"{change:+.0%}{why}"
    return head + f"is predicted at {c.tokens_per_s / n:,.0f} tokens/s per device ({diff})"


#: profiles whose frameworks run NVIDIA Transformer Engine's NVFP4 recipe (Megatron-LM --fp4-recipe nvfp4; NeMo
#: AutoModel's TE layers); elsewhere nvfp4-mixed is priced as that recipe all the same, with a note
NVFP4_FRAMEWORKS = ("megatron", "megatron-legacy", "automodel")


def fp4_note(e) -> str | None:
    """Under ``nvfp4-mixed`` with a profile outside :data:`NVFP4_FRAMEWORKS`: that the price is Transformer Engine's
    NVFP4 recipe, which that framework does not run as configured (the exporters refuse it); else None."""
    fw = e.training.framework
    if e.training.precision.compute_dtype != "fp4" or fw.name in NVFP4_FRAMEWORKS:
        return None
    return (f"precision nvfp4-mixed is priced as Transformer Engine's NVFP4 recipe (Megatron-LM --fp4-format e2m1 "
            f"--fp4-recipe nvfp4); the {fw.label} profile's framework has no such recipe the exporters write, so "
            "this is what the layout would reach with it, not a run of that framework")


def bf16_optimizer_note(e) -> str | None:
    """DeepSpeed's BF16_Optimizer (:func:`shardplan.cost.memory.bf16_optimizer`; profiles with
    ``zero0_bf16_optimizer``): where the job runs it, what it shards and keeps; at ZeRO-0 with bf16 accumulation and
    no pipeline (DDP_BFLOAT16 here), that DeepSpeed's default ds_config accumulates in fp32 instead, with the memory
    that prices (``--precision bf16-mixed-fp32-grads``); else None."""
    from shardplan.cost.memory import bf16_optimizer
    tr, p = e.training, e.parallel
    if not tr.framework.zero0_bf16_optimizer or tr.precision.compute_dtype != "bf16":
        return None
    if bf16_optimizer(tr, e.layout):
        dtype = "fp32" if tr.precision.grad_bytes > tr.precision.param_bytes else "bf16"
        return (f"{tr.framework.label} runs ZeRO-{p.zero_stage} with {tr.precision.name} through DeepSpeed's "
                f"BF16_Optimizer: the fp32 master weights and Adam moments are split over the {p.dp * p.cp} "
                f"data-parallel ranks ({e.memory.optimizer / 2**30:,.2f} GiB), the bf16 gradients stay beside its "
                f"{dtype} accumulation buffer, and the updated parameters are all-gathered after each step "
                "(FrameworkProfile.zero0_bf16_optimizer)")
    if p.zero_stage != 0 or p.pp > 1 or tr.precision.name != "bf16-mixed":
        return None
    from shardplan.cost.step import estimate
    from shardplan.specs.training import PRECISION_POLICIES
    try:
        alt = estimate(e.model, e.hardware, tr.model_copy(update={"precision": PRECISION_POLICIES["bf16-mixed-fp32-grads"]}),
                       p, e.layout.n_devices)
    except ConfigError:
        return None
    return (f"bf16-mixed at ZeRO-0 prices DeepSpeed with data_types.grad_accum_dtype bf16 (DDP_BFLOAT16: the whole "
            f"master copy and moments on every rank); a ds_config without data_types accumulates in fp32 at ZeRO-0 and "
            f"runs BF16_Optimizer, which --precision bf16-mixed-fp32-grads prices: {alt.memory.total / 2**30:,.2f} GiB "
            f"per device ({'fits' if alt.fits else 'does not fit'}), {alt.tokens_per_s / alt.layout.n_devices:,.0f} "
            "tokens/s per device (engine.py get_data_types)")


def lazy_grads_note(e) -> str | None:
    """With ``MemoryBreakdown.lazy_grads`` (one microbatch per step under a PyTorch loop, ``FrameworkProfile.lazy_grads``):
    which phase sets the allocated peak, since the memory table's parts are then not all alive at once; else None."""
    m = e.memory
    if not m.lazy_grads:
        return None
    phase = {"optimizer step": "the optimizer step's",
             "forward/backward": "the forward / backward's, without gradients"}[m.peak_phase]
    return (f"one microbatch per step under {e.training.framework.label}: the gradients exist from the backward to the "
            f"optimizer step, so the memory table's parts are not all alive at once; the allocated peak "
            f"({m.allocated / 2**30:,.2f} GiB) is {phase} (the step holds parameters, gradients, optimizer state and "
            f"torch.optim's foreach temporary: {m.step_peak / 2**30:,.2f} GiB)")


def serialized_gather_note(e) -> str | None:
    """With one ZeRO-3 gather buffer (the profile's memory-limited schedule chose it: two did not fit,
    :func:`shardplan.cost.step.serialized_gathers`): what the compiler gives up to fit; else None."""
    fw = e.training.framework
    if not (fw.zero3_gather_buffers == 1 and e.parallel.zero_stage == 3 and e.memory.zero3_buffers > 0):
        return None
    one = e.memory.zero3_buffers
    from shardplan.cost.memory import hbm_limit
    if not fw.memory_limited_schedule or e.memory.total + one <= hbm_limit(e.hardware.hbm_bytes, fw):
        # the profile asked for it (a profile file's zero3_gather_buffers: 1), not the memory limit
        return (f"the {fw.label} profile gathers one ZeRO-3 unit at a time ({one / 2**30:,.2f} GiB; zero3_gather_buffers "
                "1): no gather prefetch, every AllGather exposed (priced in the step)")
    return (f"two gathered ZeRO-3 units ({2 * one / 2**30:,.2f} GiB) do not fit; the {fw.label} profile's compiler "
            f"schedules under the memory limit (XLA's latency-hiding scheduler), so one unit is gathered at a time "
            f"({one / 2**30:,.2f} GiB): no gather prefetch, every AllGather exposed (priced in the step)")


def xla_gpu_gather_note(e) -> str | None:
    """An XLA profile (``memory_limited_schedule``: MaxText, Paxml) on GPUs with ZeRO-3 whose FSDP AllGathers are
    priced hidden behind the layer before (``zero3_gather_buffers`` 2): that takes XLA's pipelined all-gather, which
    XLA:GPU leaves off by default (OpenXLA debug_options_flags.cc; NVIDIA's tuned MaxText recipes set it). Held-out
    runs under default flags (amd-agi/maxtext-slurm, docs/accuracy.md) came out 39% fast priced this way, 23% with
    the gathers exposed. None elsewhere."""
    fw = e.training.framework
    if not (e.hardware.kind == "gpu" and fw.memory_limited_schedule and fw.zero3_gather_buffers == 2
            and e.parallel.zero_stage == 3 and any(c.axis == "dp" and c.op == "AllGather" for c in e.collectives)):
        return None
    from shardplan.export.maxtext import XLA_GPU_OVERLAP_FLAGS
    return (f"the FSDP AllGathers are priced hidden behind the layer before, as XLA pipelines them with "
            f"XLA_FLAGS=\"{XLA_GPU_OVERLAP_FLAGS}\" (NVIDIA's MaxText recipes); XLA:GPU's defaults pipeline the "
            f"reduce-scatters but not the all-gathers, so every layer's gather waits: --framework "
            f"{fw.name}+zero3_gather_buffers=1 prices that")


def zero3_share_note(e) -> str | None:
    """A profile whose ZeRO-3 collectives use a fitted share of the NICs (``FrameworkProfile.zero3_nic_share`` < 1:
    the deepspeed profiles, fitted on DeepSpeed 0.3-0.5's per-parameter gathers of 2021) on a ZeRO-3 layout whose
    data-parallel group crosses nodes: the share, the prefetch and where they come from, since they decide ZeRO-3
    against ZeRO-1/2 there (new-user pass 55: 1.08 GB/s for ZeRO-3 beside 4.97 for ZeRO-2 on one network, unsaid).
    None elsewhere."""
    fw = e.training.framework
    crosses = e.layout.n_devices > e.hardware.scale_up_size
    if fw.zero3_nic_share >= 1 or e.parallel.zero_stage != 3 or not crosses:
        return None
    return (f"the {fw.label} profile prices ZeRO-3's gathers and reduce-scatters at {fw.zero3_nic_share:.1%} of the "
            f"node's network and hides {fw.zero3_prefetch:.1%} of each behind the layer before, fitted on DeepSpeed "
            "0.3-0.5's per-parameter calls (Narayanan et al. 2021 Table 2, 175B / 530B on 384-2,240 A100s); a newer "
            f"release that coalesces them may do better: --framework {fw.name}+zero3_nic_share=1+zero3_prefetch=1 "
            "prices NCCL's full use")


def partial_node_note(e) -> str | None:
    """A device count above one scale-up domain (node) that does not fill the last: how many nodes are full, how
    many devices the last one holds, and how the estimate places each parallel group that spans nodes (equal parts
    per node, :func:`shardplan.cost.comm.group_split`); else None."""
    from shardplan.cost.comm import group_split, level_names
    n, g = e.layout.n_devices, e.hardware.scale_up_size
    if n <= g or n % g == 0:
        return None
    p = e.parallel
    axes = (("tensor-parallel", p.tp, 1), ("context-parallel", p.cp, p.tp), ("data-parallel", p.dp, p.tp * p.cp),
            ("pipeline", p.pp, p.tp * p.cp * p.dp))
    spans = []
    for name, k, stride in axes:
        per, domains = group_split(k, stride, g)
        if k > 1 and domains > 1:
            spans.append(f"the {name} group of {k} as {per} per node on {domains} nodes")
    placed = ("; the estimate prices " + ", ".join(spans) + " (equal parts per node), which a launcher filling "
              "the nodes in order does not give exactly") if spans else ""
    return (f"{n} devices do not fill nodes of {g} ({level_names(e.hardware)[0]} domain, scale_up_size): {n // g} full "
            f"node(s) and {n % g} device(s) of one more, which is partly used ({-(-n // g)} nodes in all){placed}")


def straddle_note(e) -> str | None:
    """Parallel groups that cross a scale-up domain boundary because their span does not divide the domain size
    (tp=2 on domains of 3 devices: ranks 2 and 3 sit in two domains): the estimate prices every group of the axis
    as if aligned inside one domain (:func:`shardplan.cost.comm.group_split`), so such a layout's communication is
    priced too fast; else None."""
    from shardplan.cost.comm import level_names
    n, g, p = e.layout.n_devices, e.hardware.scale_up_size, e.parallel
    if n <= g:
        return None
    crossing = [f"{name}={k} (ranks {stride} apart, a span of {k * stride})"
                for name, k, stride in (("tp", p.tp, 1), ("cp", p.cp, p.tp), ("ep", p.ep, p.expert_tp))
                if k > 1 and k * stride < g and g % (k * stride)]
    if not crossing:
        return None
    return (f"{', '.join(crossing)} {'does' if len(crossing) == 1 else 'do'} not divide the {g}-device {level_names(e.hardware)[0]} domain "
            "(scale_up_size): some groups cross a domain boundary, and the estimate prices every group as if "
            "inside one domain (too fast for those); a size that divides the domain avoids it")


def model_note(model, seq_len: int | None = None) -> str | None:
    """What a ModelSpec's config.json holds that its count leaves out (the vision tower of a multimodal model,
    multi-token-prediction modules, a quantized checkpoint's format, dropout: :func:`shardplan.hf_config.caveats`) and,
    with ``seq_len`` (tokens), a sequence longer than the context the config declares (``ModelSpec.context_length``),
    or None."""
    from shardplan.loaders import SOURCE_NOTE
    parts = [model.source.split(SOURCE_NOTE, 1)[1]] if SOURCE_NOTE in model.source else []
    if seq_len and model.context_length and seq_len > model.context_length:
        parts.append(f"seq_len {seq_len:,} is longer than the context its config declares (max_position_embeddings "
                     f"{model.context_length:,}): priced as given; running it is a context extension (RoPE scaling)")
    return f"model {model.name}: {'; '.join(parts)}" if parts else None


def estimate_notes(e) -> list[str]:
    """Every note on an estimate, in the order ``estimate`` prints them: the layout's (split, warnings:
    :attr:`shardplan.parallel.Layout.notes`), then an optimistic prediction, a routing that prices nothing, an
    unreleased schedule, the attention kernel, the MoE overheads, pipeline stalls, allocator pressure, the compiler
    flags a profile assumes (XLA's pipelined all-gather) and the rest below. Plain text (no markup); the same list
    goes to stderr (:func:`print_estimate_notes`), into ``--json`` (``notes``) and into the HTML report."""
    from shardplan.calibration import optimism_note
    scheduled = [e.parallel.schedule] if e.parallel.pp > 1 else []
    notes = (model_note(e.model, e.training.seq_len), optimism_note(e), routing_note(e), tp_overlap_note(e),
             unreleased_schedule_note(e.training.framework, scheduled),
             attention_kernel_note(e), softcap_note(e), moe_overhead_note(e), layer_overhead_note(e), stall_note(e),
             allocator_note(e), compile_note(e), eager_code_note(e), fp4_note(e), lazy_grads_note(e),
             bf16_optimizer_note(e),
             partial_node_note(e), serialized_gather_note(e), straddle_note(e), selective_recompute_note(e),
             full_recompute_note(e), cp_balance_note(e), xla_gpu_gather_note(e), zero3_share_note(e))
    return [*e.layout.notes, *(n for n in notes if n)]


def print_estimate_notes(e) -> None:
    """Print :func:`estimate_notes` on stderr (``estimate``, ``export``, ``report``), one "note:" line each."""
    for note in estimate_notes(e):
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)


def print_estimate(e) -> None:
    """Rich tables of an Estimate: summary, memory, time, collectives, roofline thresholds."""
    console.print(_summary_table(e))
    console.print(*_memory_and_time_tables(e, e.to_dict()))
    if shown_collectives(e):
        console.print(_collectives_table(e))
    console.print(_roofline_line(e))


@app.command()
@config_errors
@layout_flags
def estimate(model: ModelOpt, hardware: HardwareOpt, devices: PlanDevicesOpt = None, seq_len: PlanSeqOpt = None,
             global_batch: BatchOpt = None, global_batch_tokens: BatchTokOpt = None,
             precision: PrecisionOpt = None, attention: AttnOpt = None,
             framework: FrameworkOpt = None, dropout: DropoutOpt = False,
             optimizer_dtype: OptimizerDtypeOpt = None,
             moe_capacity_factor: MoeCapOpt = None, moe_imbalance: MoeImbOpt = 1.0,
             moe_routing: MoeRoutingOpt = "uniform",
             scale_up_size: ScaleUpOpt = None, plan: PlanOpt = None, json_out: JsonOpt = False,
             layout: dict = None) -> None:
    """Predict memory, step time, MFU and the bottleneck of one layout."""
    e = estimate_layout(dict(model=model, hardware=hardware, devices=devices, seq_len=seq_len,
                             global_batch=global_batch, global_batch_tokens=global_batch_tokens, precision=precision,
                             attention=attention, framework=framework, dropout=dropout,
                             optimizer_dtype=optimizer_dtype,
                             moe_capacity_factor=moe_capacity_factor, moe_imbalance=moe_imbalance,
                             moe_routing=moe_routing,
                             scale_up_size=scale_up_size, plan=plan),
                        layout)
    print_estimate_notes(e)
    if json_out:  # the reasons of a negative result (exit 1) in the document too, for scripts reading it
        print(json.dumps(estimate_json(e), indent=1))
    else:
        print_estimate(e)
    raise_if_negative(e)
