"""Explain a ranked search: what bounds each plan, what each runner-up loses and where, and how the
result compares with the seeds' rules of thumb.

Rules of thumb (a parallelism decision guide in the style of the Hugging Face Ultra-Scale Playbook,
and EasyDeL's TPU/GPU sharding notes -- the project's seed documents 001 and 000) are encoded in
:func:`rules_of_thumb` as layout constraints so the planner can evaluate exactly what the rule
recommends and report the difference in predicted tokens/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardplan.cost.comm import level_names
from shardplan.cost.memory import hbm_limit
from shardplan.cost.step import Estimate
from shardplan.units import fmt_gib, fmt_seconds

GiB = 2**30

#: where the rules come from (the project's seed documents)
PLAYBOOK = "parallelism decision guide (Ultra-Scale Playbook style)"
EASYDEL = "EasyDeL TPU/GPU sharding notes"


def _components(e: Estimate) -> dict[str, float]:
    """Step-time components (seconds): the linear layers' GEMMs and the attention core apart (the kernel that grows
    with the sequence; a part of ``Estimate.matmul_s``), communication split by axis and network level."""
    out = {"matmul compute": e.matmul_s - e.attention_s, "attention core": e.attention_s,
           "element-wise (HBM)": e.elementwise_s, "recompute": e.recompute_s,
           "pipeline bubble": e.bubble_s, "optimizer update": e.optimizer_s,
           "framework overhead": e.overhead_s, "overlap slowdown": e.overlap_slowdown_s,
           "activation offload (host link)": e.offload_s, "parameter offload (host link)": e.param_offload_s}
    for c in e.collectives:
        key = f"{c.label} {c.op} on {c.level}"
        out[key] = out.get(key, 0.0) + c.exposed_s
    return out


def headroom(e: Estimate) -> float:
    """Bytes left on the most loaded device below the fit limit (the HBM capacity, or the framework
    profile's ``usable_hbm_fraction`` of it: :func:`shardplan.cost.memory.hbm_limit`); negative: does
    not fit."""
    return hbm_limit(e.hardware.hbm_bytes, e.training.framework) - e.memory.total


#: the least headroom, as a share of the usable HBM, that a layout priced without a peak band (a profile with no
#: allocator fragmentation, ``allocator_overhead`` 0: XLA's static allocation, MaxText) needs to be called a safe fit:
#: the planner's peak-memory median |error| on the measured H100 grid (5.7%, docs/accuracy.md, nanotron-usp profile
#: on usp-h100-efa, 1,027 runs that ran). Less headroom than the planner's typical memory error is a fit on the
#: central figure only, as a band reaching past the HBM is for the other profiles.
TIGHT_HEADROOM_SHARE = 0.057


def has_peak_band(e: Estimate) -> bool:
    """Whether the estimate's peak has a band (``MemoryBreakdown.peak_low`` < ``peak_high``): a profile that prices
    allocator fragmentation has one; one that prices none (``allocator_overhead`` 0) has a single figure."""
    return e.memory.peak_high > e.memory.peak_low


def tight_fit(e: Estimate) -> bool:
    """A layout that fits on the planner's central memory figure only: its peak band's high end
    (``MemoryBreakdown.peak_high``, twice the fitted allocator fragmentation) passes the usable HBM, or, for a profile
    that prices no fragmentation (no band), its headroom is under :data:`TIGHT_HEADROOM_SHARE` of the usable HBM
    (a new user found a MaxText v5p pick 0.8 GiB below 95 GiB unmarked while banded profiles' picks were marked).
    False for a layout that does not fit."""
    if not e.fits:
        return False
    if has_peak_band(e):
        return e.memory.peak_high > e.hbm_fit_limit
    return headroom(e) < TIGHT_HEADROOM_SHARE * e.hbm_fit_limit


def tight_fit_text(e: Estimate) -> str:
    """Why :func:`tight_fit` holds, in words ("" where it does not)."""
    if not tight_fit(e):
        return ""
    gib = fmt_gib(headroom(e))
    if has_peak_band(e):
        return (f"its peak band reaches {fmt_gib(e.memory.peak_high)} of "
                f"{fit_limit_text(e.hardware.hbm_bytes, e.training.framework)} ({gib} headroom on the central figure)")
    return (f"{gib} headroom is under {TIGHT_HEADROOM_SHARE:.1%} of the usable "
            f"{fit_limit_text(e.hardware.hbm_bytes, e.training.framework)}, the planner's "
            "median peak-memory error on measured runs")


def fit_limit_text(hbm_bytes: float, framework) -> str:
    """The memory a layout must fit in, in words: "80.00 GiB HBM", or with a framework profile whose runs
    fail before the cap (``usable_hbm_fraction`` < 1) "67.20 GiB (84% of 80.00 GiB HBM: the nanotron
    profile's usable_hbm_fraction)". ``hbm_bytes``: the HBM capacity (bytes)."""
    cap = f"{fmt_gib(hbm_bytes)} HBM"
    if framework.usable_hbm_fraction >= 1:
        return cap
    return (f"{fmt_gib(hbm_limit(hbm_bytes, framework))} ({100 * framework.usable_hbm_fraction:g}% of {cap}: the "
            f"{framework.label} profile's usable_hbm_fraction)")


def describe(e: Estimate) -> str:
    """One sentence: what bounds the plan and its memory headroom."""
    comp = _components(e)
    top = sorted(comp.items(), key=lambda kv: -kv[1])[:3]
    parts = ", ".join(f"{k} {v / e.step_s:.0%}" for k, v in top if v > 0)
    th = e.thresholds
    extra = ""
    if th:
        if not th.get("dp_compute_bound", True):
            # the roofline compares per-step traffic with per-step compute, ignoring overlap and buckets: say how much
            # of the step the dp collectives really leave exposed (a new user read "bound by compute" and
            # "bandwidth-bound DP" in one sentence)
            dp_exposed = sum(c.exposed_s for c in e.collectives if c.axis == "dp") / e.step_s if e.step_s else 0.0
            extra = (f"; {th['tokens_per_dp_rank']:,.0f} tokens per data-parallel rank is below the critical "
                     f"{th['critical_tokens_per_dp_rank']:,.0f} for the {th['dp_level']} link (by the roofline, "
                     f"bandwidth-bound DP; exposed dp communication is {dp_exposed:.0%} of the step)")
        if not th.get("tp_compute_bound", True):
            extra += f"; tp={e.parallel.tp} exceeds the largest compute-bound tp ~{th['max_compute_bound_tp']:.1f}"
    p = e.parallel
    if p.zero_stage == 3 and p.dp * p.cp * p.tp > e.hardware.scale_up_size and \
            e.training.framework.zero3_prefetch == 1:
        tpu = e.hardware.kind == "tpu"
        xla = tpu or e.training.framework.name in ("maxtext", "paxml", "jax-runtime")
        who = "XLA's scheduled gathers" if xla else "PyTorch FSDP"
        extra += (f"; ZeRO-3 across {'slices' if tpu else 'nodes'} assumes prefetch fully overlapped with compute "
                  f"({who}) -- DeepSpeed's 2021 ZeRO-3 ran 1.5-5x slower than that at 384-2240 GPUs (--framework "
                  "deepspeed, docs/accuracy.md)")
    if e.model.is_moe and p.ep == 1 and e.model.n_experts > 1:
        # new-user pass 56: a 128-expert model's winner under torchtitan had ep 1 and nothing said what that runs
        held = "sharded by ZeRO-3 and gathered per layer" if p.zero_stage == 3 else "held whole on every rank"
        fixed = e.training.framework.moe_expert_overhead_s
        cost = (f"; the {e.training.framework.label} profile charges {fixed * 1e6:,.0f} us per local expert per MoE "
                f"layer per microbatch" if fixed > 0 else
                f"; the {e.training.framework.label} profile prices no per-expert cost (a grouped GEMM over the "
                f"{e.model.n_experts} experts)")
        extra += (f"; ep=1: every rank runs all {e.model.n_experts} experts on its own tokens (the same expert FLOPs "
                  f"as any ep, no AllToAll), their weights {held}{cost}")
    from shardplan.calibration import optimism_note  # late: calibration reads the published runs
    note = optimism_note(e)
    if note:
        extra += "; " + note
    tight = tight_fit_text(e)
    host = ""
    if e.memory.host_offload:  # the offloaded state's host memory (Estimate.host_memory_per_host), checked or not
        cap = e.hardware.host_memory_bytes
        host = (f"; host memory {e.host_memory_per_host / GiB:,.1f} GiB per host"
                + (f" of {cap / GiB:,.0f}" if cap else " (host memory unknown: not checked)"))
    return (f"bound by {e.bound}; step = {parts}; MFU {e.mfu:.1%}; "
            f"{headroom(e) / GiB:,.1f} GiB HBM headroom{' (a tight fit: ' + tight + ')' if tight else ''}{host}{extra}")


def compare(winner: Estimate, other: Estimate, objective: str = "throughput") -> str:
    """Why ``other`` ranks below ``winner``: under the throughput objective the step-time component that grows
    most, with its network level; under the memory objective (ranked by device memory) the extra bytes, with the
    step time beside them."""
    if objective == "memory":
        extra = other.memory.total - winner.memory.total
        more = (f"{extra / GiB:+,.2f} GiB per device" if extra >= 0.005 * GiB
                else "the same memory per device (ranked after it by throughput)")
        return (f"{more}, {other.step_s / winner.step_s - 1:+.1%} step time; "
                f"{headroom(other) / GiB:,.1f} GiB headroom")
    if other.step_s <= winner.step_s * (1 + 1e-9) and other.tokens_per_s >= winner.tokens_per_s:
        faster = (f"{other.step_s / winner.step_s - 1:+.1%} step time, a tie (within 0.2% the simpler layout ranks "
                  "first, docs/search.md)" if other.step_s < winner.step_s * (1 - 1e-6) else "same predicted throughput")
        return f"{faster}; {headroom(other) / GiB:,.1f} GiB headroom"
    (a, named_a), (b, named_b) = _same_groups(_components(winner)), _same_groups(_components(other))
    named = {**named_a, **named_b}  # each part shown under the other layout's own group name where it has it
    deltas = {named[k]: b.get(k, 0.0) - a.get(k, 0.0) for k in set(a) | set(b)}
    worst = max(deltas, key=deltas.get)
    best = min(deltas, key=deltas.get)
    slower = other.step_s / winner.step_s - 1
    offset = ""
    if deltas[best] < 0 and deltas[worst] > 1.5 * (other.step_s - winner.step_s):
        # the largest increase exceeds the whole difference: name what it is traded against
        # a part that shrinks is named as the winner has it (less "pipeline bubble of pp=2" than #1, not "of pp=1")
        offset = f", partly offset by less {_why(best, winner)} (-{fmt_seconds(-deltas[best])})"
    return (f"{slower:+.1%} step time, mostly {_why(worst, other)} (+{fmt_seconds(deltas[worst])}){offset}; "
            f"{headroom(other) / GiB:,.1f} GiB headroom")


def _same_groups(components: dict[str, float]) -> tuple[dict[str, float], dict[str, str]]:
    """:func:`_components` with a ZeRO / gradient collective keyed ``dp ...`` whether its group is named dp or dp-cp
    (``Collective.axis_label``): the same weights' reduction, so two layouts differing in cp compare it as one part (a
    new user read "+1.93 s dp-cp ReduceScatter, offset by -1.93 s dp ReduceScatter" instead of the real cause); and
    each key's name as the layout gives it."""
    out: dict[str, float] = {}
    names: dict[str, str] = {}
    for name, seconds in components.items():
        key = "dp " + name[len("dp-cp "):] if name.startswith("dp-cp ") else name
        out[key] = out.get(key, 0.0) + seconds
        names[key] = name
    return out, names


def _why(component: str, e: Estimate) -> str:
    """The reason behind a step-time component of :func:`_components` (e.g. ``"dp AllGather on DCN"``).

    A collective's key reads ``"<axis> <op> on <level>"``; only a ``dp`` collective on the
    scale-out level (``scale-out`` for GPUs, ``DCN`` for TPUs) is called data-parallel; a tp, cp,
    ep or pp collective there is named by its own axis.
    """
    p, hw = e.parallel, e.hardware
    axis = component.split(" ", 1)[0]
    scale_out = level_names(hw)[1]
    if axis == "tp" and p.tp > hw.scale_up_size:
        return f"tp={p.tp} crosses the {hw.scale_up_size}-device scale-up domain: {component}"
    if component.endswith(f" on {scale_out}"):
        if axis in ("dp", "dp-cp"):
            return f"data-parallel {component} (group of {p.dp * p.cp} crosses the scale-up domain)"
        return f"{axis} communication crossing the {hw.scale_up_size}-device scale-up domain: {component}"
    if component == "pipeline bubble":
        return f"pipeline bubble of pp={p.pp} with {e.layout.microbatches} microbatch{'es' if e.layout.microbatches != 1 else ''} ({p.schedule})"
    if component == "recompute":
        return f"recompute (the re-run forward; here recompute={p.recompute})"
    if component == "overlap slowdown":
        return "overlapped communication slowing the matmuls it hides behind"
    if component == "framework overhead":
        return f"framework overhead ({e.training.framework.name} profile: host, allocator, pipeline stalls)"
    return component


@dataclass
class Rule:
    """A rule of thumb: its source text and the layout constraints it implies."""

    source: str
    text: str
    fix: dict


def _zero_with_pp(framework: Any) -> tuple[int, str]:
    """(ZeRO stage, text) for the decision guide's "ZeRO-2 and PP" under ``framework``: 2 where it runs ZeRO-2 with
    pipelining (``FrameworkProfile.pipeline_zero_stages`` None or holding 2), else its highest allowed stage below 2
    with the reason (the megatron profile: ZeRO-1, Megatron-LM's distributed optimizer, whose gradient
    reduce-scatter is ZeRO-2's communication; its ZeRO-2 is Megatron-FSDP, which does not pipeline)."""
    allowed = getattr(framework, "pipeline_zero_stages", None)
    if allowed is None or 2 in allowed:
        return 2, ""
    z = max(s for s in allowed if s <= 2)
    return z, f" (ZeRO-{z} here: the {framework.label} profile runs no ZeRO-2 with PP)"


def rules_of_thumb(n_params: float, n_devices: int, seq_len: int, is_moe: bool, kind: str,
                   framework: Any = None, node_size: int = 8) -> list[Rule]:
    """The seed rules that apply to this model size, device count and hardware kind.

    The decision guide (model size / GPU count) and EasyDeL's notes (TPU: prefer TP for throughput,
    FSDP for memory, SP for long context; GPU: combine FSDP and TP). ``framework`` (a FrameworkProfile): the
    "> 1024 GPUs: ZeRO-2 and PP" rule takes the highest ZeRO stage up to 2 that the framework runs with pipelining
    (:func:`_zero_with_pp`), as a team on that framework would. The playbook's "TP=8" is tensor parallelism over
    one 8-GPU node (its clusters' NVLink domain): on GPUs it reads as ``tp = min(8, node_size)``, the scale-up
    domain (``HardwareSpec.scale_up_size``; new-user pass 55: on 4-GPU PCIe nodes "TP=8" put half of every
    tensor-parallel group across 25 GbE and the rule read -89%).
    """
    rules: list[Rule] = []
    B = n_params / 1e9
    t = max(1, min(8, node_size))
    tp_text = "TP=8" if t == 8 else f"TP={t} (the node; the playbook's TP=8 on 8-GPU nodes)"
    if kind == "gpu":
        if B < 10 and n_devices <= 8:
            rules.append(Rule(PLAYBOOK, f"< 10B on 8 GPUs: {tp_text}", {"tp": t}))
            rules.append(Rule(PLAYBOOK, "< 10B on 8 GPUs: ZeRO-3 with DP and full recompute",
                              {"zero_stage": 3, "recompute": "full", "tp": 1}))
        elif n_devices > 1024:
            z, why = _zero_with_pp(framework)
            rules.append(Rule(PLAYBOOK, f"> 1024 GPUs: {tp_text} with ZeRO-2 and PP" + why, {"tp": t, "zero_stage": z}))
        elif n_devices <= 512 and n_devices > 8:
            rules.append(Rule(PLAYBOOK, f"up to 512 GPUs: DP with {tp_text} or PP (ZeRO-3 is inefficient)",
                              {"tp": t, "zero_stage": 0}))
            if B <= 100:
                rules.append(Rule(PLAYBOOK, f"up to 100B: {tp_text} with DP + ZeRO-3", {"tp": t, "zero_stage": 3}))
                rules.append(Rule(PLAYBOOK, "up to 100B: only ZeRO-3", {"tp": 1, "pp": 1, "zero_stage": 3}))
        else:
            rules.append(Rule(PLAYBOOK, f"{tp_text} with PP", {"tp": t}))
    else:
        rules.append(Rule(EASYDEL, "TPU: prefer TP for throughput", {"tp": 4}))
        rules.append(Rule(EASYDEL, "TPU: FSDP for memory-intensive models", {"zero_stage": 3, "tp": 1}))
        if seq_len >= 32768:
            rules.append(Rule(EASYDEL, "TPU: SP for long sequences", {"tp": 4, "sp": True}))
    if seq_len >= 131072:
        rules.append(Rule(PLAYBOOK, "very long sequences: add CP", {"cp": 8}))
    if is_moe:
        rules.append(Rule(PLAYBOOK, "MoE: add EP", {"ep": 8}))
    return rules
