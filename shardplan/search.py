"""Search every valid layout for a model, hardware, device count and batch, and rank them.

Three parts, each in its own section below:

1. **Candidates.** The space is a product of named option lists (:class:`Space`): the degrees tp,
   cp, pp, ep (dp is what is left of the device count; ep is carved from dp x cp for MoE), then per
   set of degrees the ZeRO stage, the HSDP shard group (``dp_shard``, node-local, ZeRO-3 only), when
   ZeRO-3 gathers (``zero3_gather``), sequence parallelism, the pipeline schedule with its virtual
   stages, and last the microbatch size and the recompute policy. :func:`degree_candidates` and
   :func:`group_candidates` walk the products in a fixed order (ties in the ranking keep it).
   Invalid layouts are dropped by :func:`shardplan.parallel.validate`; layouts that do not fit in
   HBM are kept aside (``SearchResult.infeasible``) instead of silently dropped.
2. **Dominance.** Options that the cost model says are *dominated* are not tried unless pinned with
   ``fix`` or ``exhaustive=True``; each rule is a named function below whose docstring says why
   pruning it cannot lose the best layout (every ZeRO stage the framework has is searched: ZeRO-2
   reduce-scatters every microbatch, ZeRO-1 once, so neither dominates):
   :func:`schedule_dominated` (1F1B by ZB-H1; GPipe is searched only when asked for),
   :func:`recompute_dominated` (selective by none under a flash kernel),
   :func:`walk_pipelined` (a slower recompute policy once one fits) and :func:`walk_unpipelined`
   (a smaller microbatch once a larger one fits).
3. **Evaluation and ranking.** Memory decides which layouts fit; it is exact and cheap because
   its two halves are cached separately (:class:`_Evaluator`: the model state depends only on
   where the weights live, the activations only on how the tokens are split). Step time is
   estimated in full (:func:`shardplan.cost.step.estimate_layout`) only for layouts that can still
   enter the top ``top_k``: branch and bound (:func:`_rank`) on two lower bounds of the step time,
   compute plus bubble (:meth:`_Evaluator.compute_bound`), then that plus the exposed ep / pp / cp /
   tp communication, axis by axis, and the dp one (:meth:`_Evaluator.comm_bounds`), each proved
   ``<=`` the estimated step time in its docstring. Bounding never changes the result: the
   returned plans, their order and ``n_equivalent`` are those of evaluating every layout
   (``tests/test_search.py`` checks this).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, NamedTuple, get_args

from shardplan.cost.axes import cp as cp_axis
from shardplan.cost.axes import dp as dp_axis
from shardplan.cost.axes import ep as ep_axis
from shardplan.cost.axes import pp as pp_axis
from shardplan.cost.axes import tp as tp_axis
from shardplan.cost.compute import layer_times, slowest_stage
from shardplan.cost.context import StepContext
from shardplan.cost.memory import (activation_terms, empty_breakdown, hbm_limit, host_memory_per_host,
                                   lazy_grads_apply, model_state_and_temp)
from shardplan.cost.pipeline import bubble_s
from shardplan.cost.step import Estimate, estimate_layout, host_memory_failure, optimizer_s, serialized_gathers
from shardplan.errors import ConfigError, divisors, short_repr
from shardplan.loaders import check_document, config_error
from shardplan.parallel import (MAX_DEVICES, MAXTEXT_SAVED_POLICIES, Layout, ParallelConfig, Schedule,
                                balanced_split, blockless_ranks,
                                check_positions,
                                legal_tp, max_virtual_stages, quiet_legal_values, seq_len_divisor, validate)
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

#: recompute policies, cheapest (least recompute, most memory) first: the order the walks try them
RECOMPUTE_ORDER = ("none", "selective", "full")
#: under a profile with named remat policies (``FrameworkProfile.named_remat``, MaxText), the full recomputes
#: keeping named matmul outputs that the search tries between selective ('minimal': every named dot kept) and
#: full, each keeping a subset of the one before, so that memory falls and time rises along the order (the walks'
#: premise): MaxText's save_dot_except_mlpwi, save_dot_except_mlp and save_qkv_proj
#: (:data:`shardplan.parallel.MAXTEXT_SAVED_POLICIES`). Searched as 'full:<saved,...>' (:func:`recompute_fields`).
NAMED_REMAT_ORDER = tuple("full:" + ",".join(MAXTEXT_SAVED_POLICIES[k])
                          for k in ("save_dot_except_mlpwi", "save_dot_except_mlp", "save_qkv_proj"))
#: schedules searched unless ``schedules`` or a pinned schedule says otherwise (GPipe: see
#: :func:`schedule_dominated`)
DEFAULT_SCHEDULES = ("1f1b", "interleaved", "zero-bubble")
#: every schedule, the defaults first
SCHEDULES = DEFAULT_SCHEDULES + tuple(s for s in get_args(Schedule) if s not in DEFAULT_SCHEDULES)
_FIELDS = set(ParallelConfig.model_fields)
#: pinned fields handed to every candidate as they are (they are not searched)
_PASSTHROUGH = ("kv_replication", "fsdp_unit", "offload_optimizer", "offload_params", "nvme_offload", "overlap_grad_reduce",
                "hsdp_reduce",
                "moe_dispatcher", "recompute_modules", "offload_activation_layers", "tp_overlap", "moe_a2a_overlap",
                "pipeline_flushes", "recompute_layers", "remat_saved", "offload_modules")
#: interleaved schedules: at most this many virtual-stage counts (the smallest ones above 1)
MAX_VIRTUAL_STAGE_OPTIONS = 4
#: the ranking's tie step: tokens/s rounded to powers of this factor (round(log(tokens/s) / log(1.002))); layouts in
#: the same step are a tie, broken by the simpler layout (two layouts less than 0.2% apart may straddle a step)
TIE_FACTOR = 1.002
#: branch and bound on/off (off: every feasible layout is timed; the tests compare both)
BRANCH_AND_BOUND = True
#: relative safety margin taken off every lower bound: the bounds add the same nonnegative terms as
#: ``estimate_layout`` but not always in the same floating-point order (a few ulps, ~1e-15)
_BOUND_MARGIN = 1e-9
#: the axes whose exposed communication tightens the step-time bound, cheapest to compute first
_BOUND_AXES = (ep_axis, pp_axis, cp_axis, tp_axis)


@dataclass
class SearchResult:
    """Ranked feasible plans, layouts that did not fit, and search statistics.

    Attributes:
        plans: feasible estimates, best first.
        infeasible: the lowest-memory variant of each option combination that did not fit.
        n_layouts: layouts tried (valid ones whose memory was computed; dominated options are not tried).
        n_evaluated: layouts whose memory was computed (the same as ``n_layouts``).
        n_timed: layouts whose step time was estimated in full (branch and bound skips the others).
        n_invalid: candidate combinations rejected by validation.
        n_equivalent: feasible layouts left out of ``plans`` because an earlier plan predicts exactly the
            same throughput and memory.
        seconds: wall time of the search.
        host_memory_failure: why a layout tried was refused for offloaded state beyond a host's memory
            (:func:`shardplan.cost.step.host_memory_failure`, the last one met), or None.
        n_host_refused: layouts tried (of ``n_layouts``) refused for that reason.
    """

    plans: list[Estimate]
    infeasible: list[Estimate] = field(default_factory=list)
    n_layouts: int = 0
    n_evaluated: int = 0
    n_invalid: int = 0
    n_equivalent: int = 0
    seconds: float = 0.0
    n_timed: int = 0
    host_memory_failure: str | None = None
    n_host_refused: int = 0


def parse_fix(items: Iterable[str]) -> dict[str, Any]:
    """Parse ``["tp=8", "sp=true", "schedule=1f1b"]`` into ParallelConfig field values.

    Raises:
        ConfigError: unknown field (lists the legal ones) or a malformed item.
    """
    import yaml

    from shardplan.loaders import load_yaml_value

    out: dict[str, Any] = {}
    parts = [p for item in items for p in _split_fix(item)]
    for item in parts:
        if "=" not in item:
            raise ConfigError(f"--fix {short_repr(item)} must look like field=value (e.g. tp=8)", field="fix", value=item)
        k, v = (x.strip() for x in item.split("=", 1))
        k = k.replace("-", "_")
        if k not in _FIELDS:
            raise ConfigError(f"--fix {short_repr(k)} is not a layout field; legal: {', '.join(sorted(_FIELDS))}",
                              field="fix", value=k, legal=sorted(_FIELDS))
        if k in out:
            raise ConfigError(f"--fix {k} is given twice", field="fix", value=k)
        if v == "":
            raise ConfigError(f"--fix {k}= has no value", field="fix", value=k)
        try:
            val = load_yaml_value(v)
        except (yaml.YAMLError, ValueError, TypeError, RecursionError):
            val = v
        check_document(val, f"--fix {k}")
        if k == "pp_layers" and isinstance(val, list):
            val = tuple(val)
        elif k == "pp_layers" and isinstance(val, (str, int)):  # pp_layers=10,22 as --pp-layers writes it
            from shardplan.inputs import LAYOUT_OPTIONS_BY_NAME
            val = LAYOUT_OPTIONS_BY_NAME["pp_layers"].parse(str(val))
        elif k in ("remat_saved", "recompute_modules") and isinstance(val, str):  # qkv_proj,mlpwo as the flags take it
            val = tuple(x.strip() for x in val.split(",") if x.strip())
        annotation = str(ParallelConfig.model_fields[k].annotation)
        if isinstance(val, bool) and "int" in annotation:
            raise ConfigError(f"--fix {k}={v}; legal: a whole number, not a boolean", field=k, value=v)
        if isinstance(val, bool) and "bool" not in annotation:  # recompute=on: the text, not True, is what was meant
            val = v
        out[k] = val
    if out:  # type-check the pinned values with the layout's own validation
        from pydantic import ValidationError
        try:
            pc = ParallelConfig(**out)
        except ValidationError as e:
            raise config_error(e, "--fix") from None
        out = {k: getattr(pc, k) for k in out}  # the validated values ("3" -> 3)
    return out


def _split_fix(item: str) -> list[str]:
    """Split ``"tp=8,pp=2"`` on commas that start a new ``field=`` (keeps ``pp_layers=[8,8]`` whole)."""
    out: list[str] = []
    for piece in item.split(","):
        if out and ("=" not in piece or out[-1].count("[") > out[-1].count("]")):
            out[-1] += "," + piece
        else:
            out.append(piece)
    return [p.strip() for p in out if p.strip()]


# ---------------------------------------------------------------------------------------------
# 1. Candidates: named option lists and their products
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Space:
    """The option lists of one search (each already restricted by ``fix``, ``max_tp``, ``max_cp``).

    Attributes:
        n_devices: accelerators; batch: global batch (sequences); n_layers: transformer layers.
        tp, cp, pp, ep: degrees to combine (ascending); dp is n_devices / (tp cp pp).
        dp: the pinned dp, or None.
        zero_stages: ZeRO stages (without dominated ones); recomputes: policies, cheapest first.
        schedules: pipeline schedules asked for (``--schedule``, a pinned one, or the default three).
        prune: dominance rules on (throughput objective, not exhaustive).
        max_microbatch_size: largest microbatch (sequences).
        scale_up_size: devices per scale-up domain (bounds the node-local HSDP shard group).
        fix: the pinned ParallelConfig fields.
        etp: expert tensor-parallel degrees: the pinned one, else None (= tp) and 1 for an MoE model.
        pipeline_split: the framework profile's automatic layer split ('balanced' or 'cost_greedy').
        sp_default: the profile's ``layout_defaults['sp']`` (the only sp tried with tp > 1 unless sp is
            pinned), or None (both tried).
        mtp_modules: the model's multi-token-prediction modules, counted as layers of the last stage
            in an uneven split (:func:`~shardplan.parallel.balanced_split`).
        cp_comms: the context-parallel exchanges tried with cp > 1: the pinned ``cp_comm``, else every one the
            framework implements (``FrameworkProfile.cp_comms``: ring and Ulysses under megatron).
    """

    n_devices: int
    batch: int
    n_layers: int
    tp: tuple[int, ...]
    cp: tuple[int, ...]
    pp: tuple[int, ...]
    ep: tuple[int, ...]
    dp: int | None
    zero_stages: tuple[int, ...]
    recomputes: tuple[str, ...]
    schedules: tuple[str, ...]
    prune: bool
    max_microbatch_size: int
    scale_up_size: int
    fix: dict = field(default_factory=dict)
    etp: tuple[int | None, ...] = (None,)
    pipeline_split: str = "balanced"
    sp_default: bool | None = None
    mtp_modules: int = 0
    cp_comms: tuple[str, ...] = ("ring",)

    def microbatch_sizes(self, dp: int) -> list[int]:
        """Microbatch sizes to try for data-parallel degree ``dp``, largest first: the divisors of the
        per-rank batch up to ``max_microbatch_size``, or the pinned one."""
        if "microbatch_size" in self.fix:
            return [self.fix["microbatch_size"]]
        return sorted((m for m in divisors(self.batch // dp) if m <= self.max_microbatch_size), reverse=True)

    def virtual_stages(self, pp: int) -> list[int]:
        """Virtual-stage counts of the interleaved schedule for ``pp`` even stages: the pinned one, or
        the smallest divisors > 1 of the layers per stage (at most MAX_VIRTUAL_STAGE_OPTIONS)."""
        if "virtual_stages" in self.fix:
            return [self.fix["virtual_stages"]]
        return [v for v in divisors(self.n_layers // pp) if v > 1][:MAX_VIRTUAL_STAGE_OPTIONS]


def searched_cp_comms(fw: FrameworkProfile, fix: dict) -> tuple[str, ...]:
    """The context-parallel exchanges a search tries with cp > 1: the pinned ``cp_comm``, else every one the
    framework implements (``FrameworkProfile.cp_comms``: ring attention and DeepSpeed-Ulysses' AllToAll under the
    megatron profiles, Ulysses only under the deepspeed ones)."""
    return (fix["cp_comm"],) if fix.get("cp_comm") else tuple(fw.cp_comms)


def searched_schedules(fw: FrameworkProfile, asked: tuple[str, ...]) -> tuple[str, ...]:
    """The schedules a search tries: those ``asked`` for, else the defaults (:data:`DEFAULT_SCHEDULES`) the
    framework's released code runs (``FrameworkProfile.released_schedules``; a profile that releases none of
    them: its released ones), within what it implements (``schedules``).

    Raises:
        ConfigError: an asked-for schedule the framework does not implement, or not one of :data:`SCHEDULES`.
    """
    released = fw.released_schedules
    scheds = asked or (tuple(sc for sc in DEFAULT_SCHEDULES if released is None or sc in released) or tuple(released))
    if fw.schedules is not None:  # only what the framework implements
        missing = [sc for sc in asked if sc not in fw.schedules]
        if missing:
            raise ConfigError(f"schedule={', '.join(missing)} is not implemented by the {fw.label} framework; legal "
                              f"schedule: {', '.join(fw.schedules)}", field="schedule", value=missing[0],
                              legal=list(fw.schedules))
        scheds = tuple(sc for sc in scheds if sc in fw.schedules) or tuple(fw.schedules)
    for sc in scheds:
        if sc not in SCHEDULES:
            raise ConfigError(f"schedule={sc!r}; legal: {', '.join(SCHEDULES)}", field="schedule", value=sc,
                              legal=SCHEDULES)
    return scheds


def build_space(model: ModelSpec, hardware: HardwareSpec, training: TrainingSpec, n_devices: int, fix: dict,
                max_tp: int | None, max_cp: int, schedules: Iterable[str] | None, max_microbatch_size: int,
                prune: bool) -> Space:
    """The option lists for one search (see :class:`Space`).

    Raises:
        ConfigError: for a schedule that is not one of :data:`SCHEDULES`.
    """
    def pinned(name: str, options: Iterable) -> tuple:
        return tuple(o for o in options if name not in fix or fix[name] == o)

    asked = tuple(schedules) if schedules else ((fix["schedule"],) if "schedule" in fix else ())
    scheds = searched_schedules(training.framework, asked)
    n, s = n_devices, training.seq_len
    tps = [t for t in legal_tp(model, fix.get("kv_replication", False)) if n % t == 0 and model.ffn_dim % t == 0
           and (not max_tp or t <= max_tp)]
    comms = searched_cp_comms(training.framework, fix)
    cps = [c for c in divisors(n) if c <= max_cp and any(s % seq_len_divisor(c, training.causal,
                                                                             training.framework.cp_load_balance,
                                                                             comm) == 0 for comm in comms)
           and (c == 1 or training.framework.context_parallel)]
    allowed = training.framework.zero_stages or (0, 1, 2, 3)  # what the framework implements
    # no stage dominates another (module docstring): every one the framework has is searched
    zero_stages = [fix["zero_stage"]] if "zero_stage" in fix else list(allowed)
    offload_stages = training.framework.offload_zero_stages
    if fix.get("offload_optimizer") and offload_stages is not None and "zero_stage" not in fix:
        # an offloaded optimizer runs at the stages the framework offloads with (DeepSpeed / Megatron-LM: not ZeRO-0,
        # as estimate's default stage becomes 1 with the flag)
        zero_stages = [z for z in zero_stages if z in offload_stages] or list(offload_stages)
    greedy = training.framework.pipeline_split == "cost_greedy" and "pp_layers" not in fix
    # a pp the framework's split leaves a rank without any block is predicted to fail (Layout.failure)
    pps = [p for p in divisors(n) if p <= model.n_layers and not (greedy and p > 1 and blockless_ranks(model, p))
           and (p == 1 or training.framework.pipeline_parallel)]
    if "pp" in fix and fix["pp"] not in pps and greedy and fix["pp"] in divisors(n) and fix["pp"] <= model.n_layers:
        legal = [p for p in pps if n % (p * fix.get("tp", 1) * fix.get("cp", 1)) == 0]
        raise ConfigError(f"pp={fix['pp']}: the framework's cost-greedy pipeline split leaves pipeline rank(s) "
                          f"{', '.join(map(str, blockless_ranks(model, fix['pp'])))} without any block, which is "
                          f"predicted to fail; legal pp: {', '.join(map(str, legal))}",
                          field="pp", value=fix["pp"], legal=legal)
    return Space(
        n_devices=n, batch=training.global_batch_size, n_layers=model.n_layers, mtp_modules=model.mtp_modules,
        tp=pinned("tp", tps),
        cp=pinned("cp", cps), pp=pinned("pp", pps),
        ep=pinned("ep", divisors(model.n_experts) if model.is_moe and training.framework.expert_parallel else [1]),
        dp=fix.get("dp"),
        etp=(fix["etp"],) if "etp" in fix else ((None, 1) if model.is_moe else (None,)),
        zero_stages=tuple(zero_stages), recomputes=recompute_options(training, fix, prune),
        schedules=scheds, prune=prune, max_microbatch_size=max_microbatch_size,
        scale_up_size=hardware.scale_up_size, fix=fix, pipeline_split=training.framework.pipeline_split,
        sp_default=(training.framework.layout_defaults.get("sp") if training.framework.sequence_parallel
                    else False), cp_comms=comms)


class Degrees(NamedTuple):
    """Parallel degrees of one candidate: tp x cp x pp x dp = devices, ep x etp divides tp x dp x cp
    (etp None = tp: ep divides dp x cp)."""

    tp: int
    cp: int
    pp: int
    dp: int
    ep: int
    etp: int | None


class Group(NamedTuple):
    """Every option of a candidate except microbatch size and recompute (the innermost walk)."""

    tp: int
    cp: int
    pp: int
    dp: int
    ep: int
    etp: int | None
    zero_stage: int
    dp_shard: int | None
    zero3_gather: str
    sp: bool
    schedule: str
    virtual_stages: int
    pp_layers: tuple[int, ...] | None
    cp_comm: str = "ring"

    def token_split(self) -> tuple:
        """How the tokens are split: (tp, cp, pp, dp, sp, schedule, virtual_stages, pp_layers, cp_comm)."""
        return (self.tp, self.cp, self.pp, self.dp, self.sp, self.schedule, self.virtual_stages, self.pp_layers,
                self.cp_comm)

    def weight_placement(self) -> tuple:
        """Where the weights live: (tp, cp, pp, dp, ep, etp, zero_stage, dp_shard, zero3_gather, pp_layers),
        and sp when etp is set (its validity rule reads sp: ``parallel._check_etp``)."""
        return (self.tp, self.cp, self.pp, self.dp, self.ep, self.etp, self.zero_stage, self.dp_shard,
                self.zero3_gather, self.pp_layers, self.sp if self.etp is not None else None)


def degree_candidates(space: Space) -> Iterator[Degrees]:
    """Every (tp, cp, pp, ep, etp) of the option lists whose product leaves an integer dp (pinned dp
    honoured) and whose ep x etp divides tp x dp x cp (ep divides dp x cp when etp = tp), in
    ascending (tp, cp, pp, ep) order, etp None (= tp) before 1. An unpinned etp = 1 is tried only
    with tp > 1 (with tp = 1 it is the default) and ep > 1 (Megatron-LM's MoE parallel folding:
    whole experts on the ep ranks, the expert grid folded over tp x dp x cp)."""
    n = space.n_devices
    for tp, cp, pp, ep, etp in itertools.product(space.tp, space.cp, space.pp, space.ep, space.etp):
        if n % (tp * cp * pp):
            continue
        if etp is not None and "etp" not in space.fix and (etp == tp or ep == 1):
            continue
        dp = n // (tp * cp * pp)
        if (tp * dp * cp) % (ep * (etp or tp)) or (space.dp is not None and dp != space.dp):
            continue
        yield Degrees(tp, cp, pp, dp, ep, etp)


def stage_split(space: Space, pp: int) -> tuple[bool, tuple[int, ...] | None]:
    """(usable, pp_layers) for ``pp`` stages: None when pp divides the layers, else the balanced
    split (:func:`balanced_split`); a pinned ``pp_layers`` is used as given and is unusable (the
    degrees are skipped) when its length is not pp; None under a cost-greedy framework split (the
    layout's validation applies it)."""
    pinned = space.fix.get("pp_layers")
    if pinned is not None:
        return len(pinned) == pp, tuple(pinned)
    if space.pipeline_split == "cost_greedy":
        return True, None
    return True, (balanced_split(space.n_layers, pp, space.mtp_modules) if space.n_layers % pp else None)


def schedule_options(space: Space, pp: int, split: tuple[int, ...] | None) -> list[tuple[str, int]]:
    """(schedule, virtual_stages) pairs for ``pp`` stages: only ('1f1b', 1) without pipelining (none when
    virtual_stages > 1 is pinned); interleaved with the divisors of the layers per stage (even split) or
    of the heaviest stage, up to :func:`~shardplan.parallel.max_virtual_stages` (uneven split); dominated
    schedules dropped (:func:`schedule_dominated`), and every non-interleaved one when ``moe_a2a_overlap``
    is pinned (:func:`shardplan.parallel._check_a2a_overlap`)."""
    if pp == 1:
        return [] if space.fix.get("virtual_stages", 1) > 1 else [("1f1b", 1)]
    out: list[tuple[str, int]] = []
    for sc in space.schedules:
        if sc == "interleaved":
            if split is None:
                out += [("interleaved", v) for v in space.virtual_stages(pp)]
            else:  # uneven split: chunks of unequal size, up to what max_virtual_stages allows
                top = max_virtual_stages(split)
                vs = ([space.fix["virtual_stages"]] if "virtual_stages" in space.fix else
                      sorted({v for v in divisors(max(split)) if 1 < v <= top} | ({top} if top > 1 else set())))
                out += [("interleaved", v) for v in vs[:MAX_VIRTUAL_STAGE_OPTIONS] if 1 < v <= top]
        elif not schedule_dominated(sc, space) and not space.fix.get("moe_a2a_overlap"):
            out.append((sc, 1))  # Combined 1F1B pipelines only with the interleaved schedule
    return out


def group_candidates(space: Space, d: Degrees, split: tuple[int, ...] | None) -> Iterator[Group]:
    """Every option combination of degrees ``d``: product of zero stage, HSDP shard group, ZeRO-3
    gather, sp, (schedule, virtual stages) and, with cp > 1, the context-parallel exchange, in that order. ``dp_shard`` and ``zero3_gather``
    other than their defaults only go with ZeRO-3 (unless pinned); the node-local shard group is
    the scale-up domain's share of the dp ranks (tp x cp ranks per dp rank), used when it divides
    dp and is neither 1 nor dp. ZeRO needs a dp x cp group of more than one device: without one only
    ZeRO-0 is tried, unless the stage is pinned (it then behaves as ZeRO-0, as ``estimate`` accepts it), or the
    least stage searched where ZeRO-0 is not (a pinned optimizer offload, :func:`build_space`)."""
    fix = space.fix
    zeros = space.zero_stages if d.dp * d.cp > 1 or "zero_stage" in fix else (
        (0,) if 0 in space.zero_stages else space.zero_stages[:1])  # an offload's least stage: ZeRO-0 in effect
    local = space.scale_up_size // (d.tp * d.cp)
    shards = [fix["dp_shard"]] if "dp_shard" in fix else (
        [None, local] if 1 < local < d.dp and d.dp % local == 0 else [None])
    gathers = [fix["zero3_gather"]] if "zero3_gather" in fix else ["per_microbatch", "per_step"]
    # etp != tp needs sequence parallelism (parallel._check_etp: each tp rank dispatches its sequence shard)
    sps = [fix["sp"]] if "sp" in fix else ([True] if d.etp is not None and d.etp != d.tp else
                                           [space.sp_default] if d.tp > 1 and space.sp_default is not None else
                                           [False, True] if d.tp > 1 else [False])
    scheds = schedule_options(space, d.pp, split)
    comms = space.cp_comms if d.cp > 1 else ("ring",)
    for z, shard, gather, sp, (sched, v), comm in itertools.product(zeros, shards, gathers, sps, scheds, comms):
        if z != 3 and ((shard is not None and "dp_shard" not in fix)
                       or (gather != "per_microbatch" and "zero3_gather" not in fix)):
            continue
        yield Group(*d, z, shard, gather, sp, sched, v, split, comm)


# ---------------------------------------------------------------------------------------------
# 2. Dominance rules (exact for this cost model: the best layout is never among the pruned)
# ---------------------------------------------------------------------------------------------


def recompute_options(training: TrainingSpec, fix: dict[str, Any], prune: bool) -> tuple[str, ...]:
    """The recompute options the search walks, cheapest first: the pinned one, else :data:`RECOMPUTE_ORDER`
    without dominated policies or policies the framework lacks (``FrameworkProfile.recomputes``), with
    :data:`NAMED_REMAT_ORDER` before 'full' where the profile has named remat policies and neither
    ``recompute`` nor ``remat_saved`` is pinned."""
    if "recompute" in fix:
        return (fix["recompute"],)
    fw = training.framework
    out = []
    for rc in RECOMPUTE_ORDER:
        if recompute_dominated(rc, training, prune) or (fw.recomputes is not None and rc not in fw.recomputes):
            continue
        if rc == "full" and fw.named_remat and "remat_saved" not in fix:
            out.extend(NAMED_REMAT_ORDER)
        out.append(rc)
    return tuple(out)


def recompute_fields(rc: str, pinned_saved: Any = None) -> dict[str, Any]:
    """ParallelConfig fields of a searched recompute option: 'none' / 'selective' / 'full' (with the pinned
    ``remat_saved``, if any), or 'full:<a,b>' = full recompute keeping ``remat_saved`` (a, b)."""
    kind, _, saved = rc.partition(":")
    return {"recompute": kind, "remat_saved": tuple(saved.split(",")) if saved else pinned_saved}


def recompute_dominated(recompute: str, training: TrainingSpec, prune: bool) -> bool:
    """Selective recompute is dominated by none under a fused (flash) attention kernel (pruned when
    ``prune``).

    Why: selective recompute saves the attention core's stored scores, softmax and dropout mask
    (the ``5 a s / t`` bytes per token of Korthikanti et al. 2022 Sec. 4.1 / Table 2); a flash
    kernel never stores them (Dao et al. 2022 Sec. 3.1), so the memory model gives both policies
    the same bytes (:func:`shardplan.cost.memory.stage_activation_bytes` subtracts them only for
    ``attention='naive'``) while selective adds one forward of the attention core
    (:func:`shardplan.cost.compute.stage_compute`) and nothing else differs: every selective layout
    has a no-recompute twin that fits exactly when it does and is at least as fast. Not under
    op-level selective checkpointing (``FrameworkProfile.selective_recompute='every_other_matmul'``,
    torchtitan), which stores less than no recompute.
    """
    return (prune and recompute == "selective" and training.attention != "naive"
            and training.framework.selective_recompute == "attention")


def schedule_dominated(schedule: str, space: Space) -> bool:
    """1F1B is dominated by zero-bubble ZB-H1 when ZB-H1 is searched and no schedule is pinned.

    Why: ZB-H1 keeps 1F1B's peak of in-flight microbatches (same activation memory) with a third
    of its bubble (Qi et al. 2023 Sec. 3), and nothing else in the step differs: every 1F1B layout
    has a ZB-H1 twin that fits as well and is faster. GPipe (1F1B's bubble, all m microbatches in
    flight: Narayanan et al. 2021 Sec. 2.2) is dominated by 1F1B; it is left out of the default
    schedule list (:data:`DEFAULT_SCHEDULES`) and searched only when asked for, so it is never pruned here.
    """
    return (space.prune and schedule == "1f1b" and "zero-bubble" in space.schedules
            and "schedule" not in space.fix)


#: what a probe returns for a layout that fits only with one ZeRO-3 gather buffer (a memory-limited schedule,
#: :func:`~shardplan.cost.step.serialized_gathers`): truthy (it is feasible) but slower than a prefetching layout,
#: so the walks do not let it prune smaller microbatches or stronger recompute policies
SERIAL = "serial"
#: a probe tries one (microbatch size, recompute) of a group: True fits, :data:`SERIAL` fits with serialized gathers
#: only, False does not fit, None invalid (counted by the evaluator)
Probe = Callable[[int, str], "bool | str | None"]


def walk_pipelined(mbs_opts: list[int], recomputes: tuple[str, ...], probe: Probe, prune: bool) -> None:
    """Per microbatch size (largest first), try the recompute policies cheapest first and stop at
    the first that fits (every combination when not ``prune``).

    Why pruning loses nothing: recompute only adds work (none < selective < full in time, the
    reverse in activation memory), so at a given microbatch size a policy after the first one that
    fits is slower and holds no feature the faster one lacks. A fit with serialized ZeRO-3 gathers
    (:data:`SERIAL`) is slower than a prefetching one, so it does not stop the stronger policies.
    """
    for mbs in mbs_opts:
        for rc in recomputes:
            if probe(mbs, rc) is True and prune:
                break


def walk_unpipelined(mbs_opts: list[int], recomputes: tuple[str, ...], probe: Probe) -> None:
    """Without pipelining: per recompute policy (cheapest first), the largest microbatch that fits;
    a stronger policy is tried only for microbatches larger than the best so far, and not at all
    once the largest microbatch fits.

    Why pruning loses nothing: with pp = 1 the step time does not grow with the microbatch size
    (same tokens, fewer and larger matmuls, no bubble) while memory does, so the largest microbatch
    that fits is the fastest for its policy; a stronger policy only pays if it lets a larger
    microbatch fit (:func:`walk_pipelined` for why a weaker policy wins otherwise). Neither holds for a
    fit with serialized ZeRO-3 gathers (:data:`SERIAL`: slower than the prefetching smaller microbatch), which
    is kept and passed over.
    """
    prev = 0
    for rc in recomputes:
        fitted = next((mbs for mbs in mbs_opts if mbs > prev and probe(mbs, rc) is True), None)
        prev = fitted or prev
        if mbs_opts and prev == mbs_opts[0]:
            break


# ---------------------------------------------------------------------------------------------
# 3. Evaluation: validity, exact memory from cached halves, lower bounds, full estimates
# ---------------------------------------------------------------------------------------------

_INVALID = "invalid"
#: a weight placement that no validation rule rejects: validates a token split on its own
_NEUTRAL_WEIGHTS: dict[str, Any] = {"ep": 1, "etp": None, "zero_stage": 0, "dp_shard": None,
                                    "zero3_gather": "per_microbatch", "moe_a2a_overlap": False,
                                    "moe_dispatcher": "alltoall", "offload_optimizer": False, "offload_params": False,
                                    "nvme_offload": False}


def neutral_weights(framework: FrameworkProfile) -> dict[str, Any]:
    """:data:`_NEUTRAL_WEIGHTS` for a profile: ZeRO-0 places the weights so that no rule rejects a token split,
    except under a profile that shards the weights over cp too (``FrameworkProfile.weight_sharding_axes``: MaxText,
    torchtitan, NeMo AutoModel refuse cp > 1 below ZeRO-2), where the largest ZeRO stage it implements does
    (none of those profiles restricts the ZeRO stage of a pipeline, ``pipeline_zero_stages``)."""
    if not framework.weight_sharding_axes:
        return _NEUTRAL_WEIGHTS
    stage = max(framework.zero_stages or (0, 1, 2, 3))
    return {**_NEUTRAL_WEIGHTS, "zero_stage": stage}


class Candidate(NamedTuple):
    """A layout that was tried: its options, its memory (bytes, ``memory_estimate(...).total``), its
    position among the feasible ones in enumeration order (``index``, the ranking's last
    tie-breaker) and its validated token split (microbatches, local tokens, schedule)."""

    group: Group
    microbatch_size: int
    recompute: str
    memory: float
    index: int
    split: _TokenSplit


@dataclass
class _TokenSplit:
    """A validated token split at one microbatch size: its layout (neutral weight placement), the
    key of its activation memory (tp, sp, local tokens, microbatches, pp, schedule, virtual stages,
    split), whether it honours the pinned token-split fields and, per recompute policy, the
    (activations, logits, communication buffers) bytes of each candidate stage (keyed also by etp and ep, the
    weight-placement fields they read: the MoE matmul outputs a named remat policy keeps are split over etp, and
    torchtitan's op-SAC keeps the expert AllToAll outputs when ep > 1); per
    (ep, recompute) the compute bound
    (:meth:`_Evaluator.compute_bound`)."""

    layout: Layout
    act_key: tuple
    honoured: bool
    acts: dict[tuple[str, int | None, int], list[tuple[float, float, float]]] = field(default_factory=dict)
    compute_bounds: dict[tuple[int, str], float] = field(default_factory=dict)


class _Evaluator:
    """Validity, exact memory, step-time lower bounds and estimates of one search's candidates,
    cached per half of a layout: *how the tokens are split* (tp, cp, pp, dp, sp, schedule, virtual
    stages, split; then microbatch size and recompute) and *where the weights live* (tp, cp, pp, dp,
    ep, ZeRO stage, dp_shard, zero3_gather, split).

    * Validity: every rule of :func:`~shardplan.parallel.validate` reads the degrees and the fields
      of one half only (zero_stage, dp_shard, zero3_gather and ep on one side; sp, the split, the
      schedule, the virtual stages and the microbatch count on the other), so a candidate is valid
      iff its token split is (validated per microbatch size with a neutral weight placement,
      :data:`_NEUTRAL_WEIGHTS`) and its weight placement is (validated once, with the first valid
      token split that needs it). Recompute is not validated at all. Pinned fields are checked on
      the half they belong to.
    * Memory is :func:`~shardplan.cost.memory.memory_estimate`'s, bit for bit: the maximum over
      ``Layout.stages_to_price`` of a :class:`~shardplan.cost.memory.MemoryBreakdown` total whose
      model-state fields (params, grads, optimizer, zero3_buffers) come from
      :func:`~shardplan.cost.memory.model_state_terms` on a layout with the same weight placement
      (they read nothing else) and whose activation fields (activations, logits, communication
      buffers) from :func:`~shardplan.cost.memory.activation_terms` on the token split's layout
      (they read tp, sp, local tokens, microbatches, pp, schedule, virtual stages, split and
      recompute, and of the weight placement only etp, which is set on that layout); both are the functions
      ``memory_for_stage`` itself calls.
    * Lower bounds read the candidate's layout assembled from its two halves (:meth:`composed`),
      full estimates its validated layout (:meth:`layout`); the compute of a microbatch (layer
      times per what they read) and the tp / cp / ep / pp collectives are cached on what they read.

    ``tests/test_search.py`` checks validity and memory against ``validate`` and ``memory_estimate``
    on every candidate of several searches, and the bounds against ``estimate_layout``.
    """

    def __init__(self, model: ModelSpec, hw: HardwareSpec, training: TrainingSpec, n_devices: int,
                 fix: dict, min_headroom_bytes: float = 0.0) -> None:
        self.model, self.hw, self.training, self.n_devices = model, hw, training, n_devices
        # the profile's layout defaults (nanotron: asynchronous TP communication) unless pinned; tp_overlap has no
        # effect at tp = 1, so it passes through for every layout
        defaults = {k: v for k, v in training.framework.layout_defaults.items() if k == "tp_overlap"
                    and fix.get("sp") is not False}  # the asynchronous TP mode goes with sp (inputs.applied_layout_defaults)
        self.extra = {**defaults, **{k: fix[k] for k in _PASSTHROUGH if k in fix}}
        self.pinned = {k: v for k, v in fix.items() if k in _FIELDS and k != "dp" and v is not None}
        self.neutral = neutral_weights(training.framework)
        self.reserve = hw.hbm_bytes - hw.usable_hbm_bytes()
        # a layout fits up to this device usage, less the headroom the user asks every plan to keep
        self.limit = hbm_limit(hw.hbm_bytes, training.framework) - min_headroom_bytes
        self.tokens = training.global_batch_tokens
        self.splits: dict[tuple, _TokenSplit | str] = {}
        self._weights: dict[tuple, tuple[Layout | str, bool]] = {}
        self._layouts: dict[tuple, Layout] = {}
        self._state: dict[tuple, tuple[float, tuple]] = {}
        self._acts: dict[tuple, tuple[float, float, float]] = {}
        self._compute: dict[tuple, tuple] = {}
        self._layer_t: dict[tuple, Any] = {}
        self._composed: dict[tuple, Layout] = {}
        self._offload: dict[tuple, float] = {}  # offload_bound per (group, mbs, recompute)
        self._comm: dict[tuple, list[float]] = {}
        self._scratch = empty_breakdown(training.framework, self.reserve)
        self.n_timed = 0

    def _validate(self, g: Group, mbs: int, rc: str, **override: Any) -> Layout | None:
        """``validate`` of ``g`` at (mbs, rc) with ``override`` fields, or None if it is invalid.

        Raises:
            pydantic.ValidationError: a pinned value of the wrong type (as ``ParallelConfig`` does).
        """
        fields = dict(dp=g.dp, tp=g.tp, pp=g.pp, cp=g.cp, ep=g.ep, etp=g.etp, zero_stage=g.zero_stage,
                      dp_shard=g.dp_shard,
                      sp=g.sp, microbatch_size=mbs, schedule=g.schedule, virtual_stages=g.virtual_stages,
                      pp_layers=g.pp_layers, zero3_gather=g.zero3_gather, cp_comm=g.cp_comm, **self.extra)
        fields.update(recompute_fields(rc, self.extra.get("remat_saved")))
        if g.pp == 1:
            fields["pipeline_flushes"] = 1  # without a pipeline there is nothing to flush (pinned for the pipelined ones)
        try:
            with quiet_legal_values():  # only whether it is valid: no legal list is tried
                return validate(ParallelConfig(**{**fields, **override}), self.model, self.training, self.n_devices)
        except ConfigError:
            return None

    def token_split(self, key: tuple, g: Group, mbs: int, rc: str) -> _TokenSplit | str:
        """The validated token split of ``g`` at ``mbs`` (``key`` = (g.token_split(), mbs)), or
        _INVALID; cached."""
        hit = self.splits.get(key)
        if hit is None:
            lay = self._validate(g, mbs, rc, **self.neutral)
            hit = _INVALID if lay is None else _TokenSplit(
                lay, (g.tp, g.sp, lay.local_tokens, lay.microbatches, g.pp, g.schedule, g.virtual_stages, g.pp_layers),
                all(getattr(lay.parallel, k) == v for k, v in self.pinned.items()
                    if k not in _NEUTRAL_WEIGHTS
                    and not (k in ("schedule", "pipeline_flushes") and g.pp == 1)))  # no pipeline, no schedule to flush
            self.splits[key] = hit
        return hit

    def weights(self, key: tuple, g: Group, mbs: int, rc: str) -> tuple[Layout | str, bool]:
        """(validated layout of ``g`` at a microbatch size whose token split is valid, or _INVALID;
        whether it honours the pinned weight-placement fields, e.g. the resolved dp_shard or a zero
        stage the degrees force), cached per weight placement ``key`` (= g.weight_placement())."""
        hit = self._weights.get(key)
        if hit is None:
            lay = self._validate(g, mbs, rc)
            hit = self._weights[key] = (_INVALID, False) if lay is None else (lay, all(
                getattr(lay.parallel, k) == v for k, v in self.pinned.items() if k in _NEUTRAL_WEIGHTS))
        return hit

    def layout(self, c: Candidate) -> Layout:
        """The validated layout of candidate ``c`` (cached).

        Raises:
            RuntimeError: if ``validate`` rejects a candidate whose two halves it accepted (a rule
                reading both halves was added to it: the class docstring's premise no longer holds).
        """
        key = c[:3]
        lay = self._layouts.get(key)
        if lay is None:
            lay = self._validate(*key)
            if lay is None:
                raise RuntimeError(f"{key} is valid by its halves but not as a whole (see search._Evaluator)")
            self._layouts[key] = lay
        return lay

    def memory(self, trials: _Trials, split: _TokenSplit, rc: str, serial: bool = False) -> float:
        """Bytes on the most loaded device (``memory_estimate(...).total``, see the class docstring)
        of the candidate (trials.group, split's microbatch size, rc); ``serial``: with one ZeRO-3 gather buffer
        instead of two (:func:`~shardplan.cost.step.serialized_gathers`; half the buffer term, exactly, since
        halving a float is exact)."""
        state = trials.state or self._state_halves(trials)
        # the expert tensor-parallel and expert-parallel degrees are weight-placement fields that the activations
        # read (the MoE intermediates a named remat policy keeps are split over etp; torchtitan's op-SAC save list
        # holds the dispatch / combine AllToAll outputs when ep > 1): part of the key
        etp, ep = trials.group.etp, trials.group.ep
        acts = split.acts.get((rc, etp, ep)) or self._act_halves(split, rc, etp, ep)
        # MemoryBreakdown.total written out in the same order of additions (allocated, + fragmentation
        # = allocator_overhead x allocated, + context, + reserve), so the result is bit for bit the
        # property's (tests/test_search.py checks it against memory_estimate) without building objects
        f, c, r = self.training.framework.allocator_overhead, self._scratch.context, self._scratch.reserve
        w = self._scratch.workspace  # the allocator base, last term of MemoryBreakdown.allocated
        # token split: microbatch count; weight placement: ZeRO stage, dp, offload (pp and dp are the group's in both)
        lazy = lazy_grads_apply(self.training.framework, split.layout.microbatches,
                                trials.placement_layout.parallel)  # type: ignore[union-attr]
        worst = -math.inf
        for i, (s4, (ac, lo, cb)) in enumerate(zip(state, acts)):
            pa, gr, op, z3, tmp = trials.terms[i]
            if serial:
                z3 = z3 / 2
                s4 = pa + gr + op + z3  # as _state_halves adds them
            if lazy and gr > 0:  # MemoryBreakdown.allocated under lazy_grads, the same additions in the same order
                a = max(pa + op + z3 + ac + lo + cb + w, pa + gr + op + tmp + w)
            else:
                a = s4 + ac + lo + cb + w  # = params + grads + optimizer + zero3_buffers + ..., left to right
            total = a + f * a + c + r
            if total > worst:
                worst = total
        return worst

    def _state_halves(self, trials: _Trials) -> list[float]:
        """``params + grads + optimizer + zero3_buffers`` bytes (added left to right, as
        ``MemoryBreakdown.allocated`` does) per candidate stage of the trials' weight placement
        (cached per placement and stage)."""
        for st in trials.stages:
            half = self._state.get((trials.placement, st))
            if half is None:
                lay = trials.placement_layout
                terms = model_state_and_temp(self.model, self.training, lay, st)  # type: ignore[arg-type]
                pa, gr, op, z3, _ = terms
                half = self._state[(trials.placement, st)] = (pa + gr + op + z3, terms)
            trials.state.append(half[0])
            trials.terms.append(half[1])
        return trials.state

    def _act_halves(self, split: _TokenSplit, rc: str, etp: int | None = None, ep: int = 1
                    ) -> list[tuple[float, float, float]]:
        """(activations, logits, communication buffers) bytes per candidate stage of a token split under recompute ``rc``
        with expert tensor-parallel degree ``etp`` (None: tp) and expert-parallel degree ``ep``, cached per activation
        key, policy, etp, ep and stage."""
        lay = split.layout
        out = split.acts[(rc, etp, ep)] = []
        for st in lay.stages_to_price(self.model):
            half = self._acts.get((split.act_key, rc, etp, ep, st))
            if half is None:
                want = {**recompute_fields(rc, self.extra.get("remat_saved")), "etp": etp, "ep": ep}
                if (lay.parallel.recompute, lay.parallel.remat_saved, lay.parallel.etp, lay.parallel.ep) != (
                        want["recompute"], want["remat_saved"], etp, ep):
                    lay = replace(lay, parallel=lay.parallel.model_copy(update=want))
                half = self._acts[(split.act_key, rc, etp, ep, st)] = activation_terms(self.model, self.training, lay,
                                                                                        st)
            out.append(half)
        return out

    def composed(self, c: Candidate) -> Layout:
        """The layout of candidate ``c`` assembled from its two validated halves without validating
        it again: the weight placement's config (dp, dp_shard, ep, etp, ZeRO fields, pinned
        pass-through fields) with the token split's sp, schedule, virtual stages, cp_comm and microbatch size
        and ``c``'s recompute, and the split's microbatches, stage layers and padded vocabulary. Equal
        to :meth:`layout` (``tests/test_search.py`` checks it on every feasible candidate of several
        searches); the bounds read it, the full estimates read :meth:`layout`."""
        hit = self._composed.get(c[:3])
        if hit is not None:
            return hit
        wl = self._weights[c.group.weight_placement()][0]
        sl = c.split.layout
        sp_ = sl.parallel
        par = ParallelConfig.model_construct(**{**wl.parallel.__dict__, "sp": sp_.sp, "schedule": sp_.schedule,  # type: ignore[union-attr]
                                                "virtual_stages": sp_.virtual_stages, "cp_comm": sp_.cp_comm,
                                                "microbatch_size": sp_.microbatch_size,
                                                **recompute_fields(c.recompute, self.extra.get("remat_saved"))})
        hit = self._composed[c[:3]] = Layout(parallel=par, n_devices=sl.n_devices, microbatches=sl.microbatches,
                                             stage_layers=sl.stage_layers, seq_len=sl.seq_len, causal=sl.causal,
                                             padded_vocab=sl.padded_vocab, split_rule=sl.split_rule,
                                             mtp_modules=sl.mtp_modules,
                                             offload_params_implied=wl.offload_params_implied)  # type: ignore[union-attr]
        return hit

    def _stage_compute(self, c: Candidate) -> tuple:
        """(dense layer times, MoE layer times, slowest stage compute) of candidate ``c``, cached per
        (tp, sp, cp, ep, etp, local tokens, recompute, pp, split): what
        :func:`~shardplan.cost.compute.layer_times` and :func:`~shardplan.cost.compute.slowest_stage`
        read of a layout."""
        g, u = c.group, c.split.layout.local_tokens
        key = (g.tp, g.sp, g.cp, g.cp_comm, g.ep, g.etp, u, c.recompute, g.pp, g.pp_layers, g.schedule == "dualpipe")
        hit = self._compute.get(key)
        if hit is None:
            m, tr, hw, lay = self.model, self.training, self.hw, self.composed(c)
            dense_t = self._layer_times(c, lay, False)
            moe_t = self._layer_times(c, lay, True) if m.is_moe else dense_t
            hit = self._compute[key] = (dense_t, moe_t, slowest_stage(m, tr, hw, lay, dense_t, moe_t))
        return hit

    def _layer_times(self, c: Candidate, lay: Layout, moe: bool) -> Any:
        """:func:`~shardplan.cost.compute.layer_times` of one dense or MoE layer of ``c``, cached per
        what it reads of a layout (tp, sp, cp, ep, expert tp, local tokens): not the recompute
        policy, pp or the stage split, which only :func:`~shardplan.cost.compute.slowest_stage` reads."""
        g = c.group
        key = (g.tp, g.sp, g.cp, g.cp_comm, g.ep, g.etp, c.split.layout.local_tokens, moe)
        hit = self._layer_t.get(key)
        if hit is None:
            hit = self._layer_t[key] = layer_times(self.model, self.training, self.hw, lay.parallel,
                                                   lay.local_tokens, moe)
        return hit

    def compute_bound(self, c: Candidate) -> float:
        """Lower bound on the step time (seconds): ``m S + bubble(S)`` with S the slowest stage's
        compute of one microbatch (:class:`~shardplan.cost.compute.StageCompute` ``total_s``).

        Proof that it is <= ``estimate_layout(...).step_s``: the step is ``m T_mb + bubble(T_mb) +
        T_dp_step + T_optimizer + step overheads`` (:mod:`shardplan.cost.step`) with ``T_mb = S +
        exposed per-microbatch communication + microbatch overheads + overlap slowdown >= S`` (each
        term a sum of seconds >= 0); ``bubble_s`` is a nonnegative factor times its argument (it reads
        only pp, schedule and virtual stages) and the other step terms are >= 0. The margin covers
        floating-point order. Cached per token split, ep, etp and recompute (what S, m and the bubble read); an
        offloaded optimizer's host time (:meth:`offload_bound`, the same T_optimizer) is added on top.
        """
        key = (c.group.ep, c.group.etp, c.recompute)
        hit = c.split.compute_bounds.get(key)
        if hit is None:
            s, base = self._stage_compute(c)[2].total_s, c.split.layout
            hit = (base.microbatches * s + bubble_s(base.parallel, s, base.stage_layers)) * (1 - _BOUND_MARGIN)
            c.split.compute_bounds[key] = hit
        return hit + self.offload_bound(c)

    def offload_bound(self, c: Candidate) -> float:
        """The offloaded optimizer's seconds per step (:func:`~shardplan.cost.step.optimizer_s`: the host copies and
        the host's update), which the step adds to everything else, less the margin; 0 without offload. Without it
        in the bounds a host update of tens of seconds left every candidate's bound far below its step, and branch
        and bound timed 25,814 layouts where 349 decide (the fuzzer's 20 s plan with --offload-optimizer)."""
        if not self.composed(c).parallel.offload_optimizer:
            return 0.0
        hit = self._offload.get(c[:3])
        if hit is None:
            hit = self._offload[c[:3]] = optimizer_s(self._context(c)) * (1 - _BOUND_MARGIN)
        return hit

    def comm_bounds(self, c: Candidate) -> Iterator[float]:
        """Successively tighter lower bounds on the step time (seconds), each computed only when the
        caller asks for the next: :meth:`compute_bound` with ``T = S + (exposed seconds of the ep,
        pp, cp and tp collectives) / m`` in place of S, adding one axis at a time (cheapest first),
        then ``m T + bubble(T) + T_dp_step`` with the dp axis's per-microbatch exposure added to T.

        Proof: ``estimate_layout``'s ``T_mb`` is S + the sum of these same collectives' exposed
        seconds (:mod:`shardplan.cost.axes`) / m + the dp axis's per-microbatch exposure + overheads
        and overlap slowdown (>= 0), and its step adds the dp axis's per-step exposure, the optimizer
        and overheads (>= 0); so T <= T_mb and the argument of :meth:`compute_bound` applies. The tp,
        cp, ep and pp collectives do not read the ZeRO options or the schedule (only
        ``virtual_stages``), so their sums are cached without them.
        """
        g, mbs, rc = c[:3]
        # DualPipe hides ep and pp traffic its own way: its sums are kept apart
        exposed = self._comm.setdefault((g.tp, g.cp, g.cp_comm, g.pp, g.dp, g.ep, g.etp, g.sp, g.virtual_stages,
                                         g.pp_layers, mbs, rc, g.schedule == "dualpipe"), [])
        s, m, base, total = self._stage_compute(c)[2].total_s, c.split.layout.microbatches, c.split.layout, 0.0
        offload = self.offload_bound(c)
        for i, axis in enumerate(_BOUND_AXES):
            if i == len(exposed):
                exposed.append(sum(x.exposed_s for x in axis.collectives(self._context(c))))
            if exposed[i] > 0:  # an axis that adds nothing would repeat the previous bound
                total += exposed[i]
                t = s + total / m
                yield (m * t + bubble_s(base.parallel, t, base.stage_layers)) * (1 - _BOUND_MARGIN) + offload
        dp = dp_axis.collectives(self._context(c))
        t = s + dp.per_microbatch + total / m
        yield (m * t + bubble_s(base.parallel, t, base.stage_layers) + dp.per_step) * (1 - _BOUND_MARGIN) + offload

    def _context(self, c: Candidate) -> StepContext:
        """What the axis modules read of candidate ``c`` (:func:`shardplan.cost.context.step_context`,
        from the cached layer times and slowest stage)."""
        dense_t, moe_t, stage = self._stage_compute(c)
        return StepContext(self.model, self.hw, self.training, self.composed(c), dense_t, moe_t, stage)

    def estimate(self, c: Candidate) -> Estimate:
        """The full step-time estimate of ``c`` (:func:`~shardplan.cost.step.estimate_layout`)."""
        self.n_timed += 1
        return estimate_layout(self.model, self.hw, self.training, self.layout(c), detail=False)


class _Trials:
    """The tries of one group (its microbatch sizes x recompute policies, as the walks ask): counts
    them into the search result, collects the ones that fit and the lowest-memory one that does not.
    """

    def __init__(self, ev: _Evaluator, g: Group, res: SearchResult, feasible: list[Candidate]) -> None:
        self.ev, self.group, self.res, self.feasible = ev, g, res, feasible
        self.token_key, self.placement = g.token_split(), g.weight_placement()
        self.placement_layout: Layout | str | None = None  # a validated layout with this weight placement
        self.honoured = False
        self.stages: tuple[int, ...] = ()
        self.state: list[float] = []  # model-state bytes per candidate stage
        self.terms: list[tuple[float, float, float, float, float]] = []  # (params, grads, optimizer, ZeRO-3, temp)
        self.splits: dict[int, _TokenSplit | str] = {}  # token split per microbatch size
        self.lowest: tuple[float, Candidate] | None = None
        self.host_failure: str | None = None  # why the placement's offloaded state exceeds host memory ('' fits)

    def probe(self, mbs: int, rc: str) -> bool | str | None:
        """Try (mbs, rc): True fits, :data:`SERIAL` fits with serialized ZeRO-3 gathers only, False does not fit,
        None invalid or not honouring ``fix``."""
        ev, g = self.ev, self.group
        split = self.splits.get(mbs)
        if split is None:
            split = self.splits[mbs] = ev.token_split((self.token_key, mbs), g, mbs, rc)
        if split is _INVALID:
            self.res.n_invalid += 1
            return None
        if self.placement_layout is None:
            self.placement_layout, self.honoured = ev.weights(self.placement, g, mbs, rc)
            self.stages = split.layout.stages_to_price(ev.model)  # type: ignore[union-attr]
        if self.placement_layout is _INVALID:
            self.res.n_invalid += 1
            return None
        if not (self.honoured and split.honoured):  # type: ignore[union-attr]
            return None
        self.res.n_layouts += 1
        if self.host_failure is None:  # offloaded state beyond a host's memory (Estimate.failure): per placement
            lay = self.placement_layout
            per_host = host_memory_per_host(ev.model, ev.training, lay, ev.hw.host_devices, activations=False)
            self.host_failure = host_memory_failure(ev.hw, lay.n_devices, per_host) or ""
        total = ev.memory(self, split, rc)  # type: ignore[arg-type]
        if self.host_failure:  # kept as a near miss too: --show-infeasible lists it with its host memory
            self.res.host_memory_failure = self.host_failure
            self.res.n_host_refused += 1
            self._keep_lowest(total, g, mbs, rc, split)
            return False
        fit: bool | str = True
        if total > ev.limit and serialized_gathers(ev.training, self.placement_layout) is not None:  # type: ignore[arg-type]
            # a memory-limited schedule gathers one ZeRO-3 unit at a time when two do not fit (estimate_layout)
            total, fit = min(total, ev.memory(self, split, rc, serial=True)), SERIAL  # type: ignore[arg-type]
        if total > ev.limit:
            self._keep_lowest(total, g, mbs, rc, split)
            return False
        self.feasible.append(Candidate(g, mbs, rc, total, len(self.feasible), split))  # type: ignore[arg-type]
        return fit

    def _keep_lowest(self, total: float, g: Group, mbs: int, rc: str, split) -> None:
        """Keep (mbs, rc) as the group's closest miss (``lowest``) when its device memory ``total`` (bytes) is the
        smallest met so far."""
        if self.lowest is None or total < self.lowest[0]:
            self.lowest = (total, Candidate(g, mbs, rc, total, -1, split))


def _enumerate(space: Space, ev: _Evaluator, res: SearchResult, keep_infeasible: bool,
               progress: Callable[[int, int, str], None] | None = None
               ) -> tuple[list[Candidate], list[tuple[float, Candidate]]]:
    """Try every candidate the dominance rules leave: count them into ``res`` and return the ones
    that fit (enumeration order) and, per group, the lowest-memory one that does not fit;
    ``progress(done, total, label)`` once per degree set."""
    feasible: list[Candidate] = []
    infeasible: list[tuple[float, Candidate]] = []
    degrees = list(degree_candidates(space))
    for i, d in enumerate(degrees):
        if progress is not None:
            progress(i, len(degrees), "enumerating degree sets")
        if space.batch % d.dp:
            res.n_invalid += 1
            continue
        usable, split = stage_split(space, d.pp)
        if not usable:
            continue
        mbs_opts = space.microbatch_sizes(d.dp)
        for g in group_candidates(space, d, split):
            trials = _Trials(ev, g, res, feasible)
            if space.prune and d.pp == 1:
                walk_unpipelined(mbs_opts, space.recomputes, trials.probe)
            else:
                walk_pipelined(mbs_opts, space.recomputes, trials.probe, space.prune)
            if trials.lowest is not None and keep_infeasible:
                infeasible.append(trials.lowest)
    res.n_evaluated = res.n_layouts
    return feasible, infeasible


# ---------------------------------------------------------------------------------------------
# Ranking: branch and bound over the feasible candidates
# ---------------------------------------------------------------------------------------------


def _complexity(p: Group, recompute: str) -> int:
    """Parallel dimensions a layout uses beyond plain data parallelism (tie-breaker)."""
    return ((p.tp > 1) + (p.pp > 1) + (p.cp > 1) + (p.ep > 1) + (p.etp is not None) + (p.zero_stage == 3)
            + (recompute != "none"))


def _rank_key(objective: str, c: Candidate, tokens_per_s: float) -> tuple:
    """Sort key of a candidate with throughput ``tokens_per_s``: 'throughput' ranks by tokens/s
    (within TIE_FACTOR a tie), then the simpler layout, memory, cp, tp, pp; 'memory' by memory, then
    tokens/s; enumeration order last. Non-increasing in tokens/s for the same candidate, so an
    upper bound on tokens/s gives a key <= the true key."""
    return _order_key(objective, c.group, c.recompute, c.memory, tokens_per_s, c.index)


def tie_step(tokens_per_s: float) -> int:
    """The ranking's throughput step of ``tokens_per_s`` (tokens/s > 0): round(log(tokens/s) / log(TIE_FACTOR)); two
    layouts in one step are a tie, ordered by the simpler layout and then memory."""
    return round(math.log(tokens_per_s) / math.log(TIE_FACTOR))


def _order_key(objective: str, p: Any, recompute: str, memory: float, tokens_per_s: float, index: int,
               extra_dims: int = 0) -> tuple:
    """:func:`_rank_key` of a layout ``p`` (a Group or a ParallelConfig) of ``memory`` bytes per device and
    ``tokens_per_s``; ``extra_dims`` adds to its :func:`_complexity` (tensor-parallel overlap in :func:`_merge`)."""
    if objective == "memory":
        return (memory, -tokens_per_s, index)
    bucket = -tie_step(tokens_per_s)
    return (bucket, _complexity(p, recompute) + extra_dims, memory, p.cp, p.tp, p.pp, index)


class _TopK:
    """Estimates in rank order and the key of the ``top_k``-th distinct one (layouts with the same
    tokens/s and memory as a better-ranked one are equivalent and do not count)."""

    def __init__(self, top_k: int) -> None:
        self.top_k = top_k
        self.ranked: list[tuple[tuple, Estimate]] = []  # (rank key, estimate), keys unique

    def add(self, key: tuple, e: Estimate) -> None:
        """Insert ``e`` with sort key ``key``."""
        bisect.insort(self.ranked, (key, e))

    def kept(self) -> tuple[list[Estimate], int, tuple | None]:
        """(the first top_k distinct estimates, equivalents skipped before the last of them, the
        key of the last of them or None while fewer than top_k)."""
        kept: list[Estimate] = []
        seen: set[tuple[float, float]] = set()
        skipped = 0
        for key, e in self.ranked:
            tag = (round(e.tokens_per_s, 6), round(e.memory.total))
            if tag in seen:
                skipped += 1
                continue
            seen.add(tag)
            kept.append(e)
            if len(kept) == self.top_k:
                return kept, skipped, key
        return kept, skipped, None


def _rank(ev: _Evaluator, feasible: list[Candidate], top_k: int, objective: str, bound: bool,
          progress: Callable[[int, int, str], None] | None = None) -> tuple[list[Estimate], int]:
    """The top_k distinct plans of ``feasible`` and the equivalents skipped, as if every candidate
    were estimated, sorted by :func:`_rank_key` and deduplicated.

    Branch and bound (``bound``): candidates are taken in increasing order of their compute bound
    (for the memory objective: of memory, then the bound), so the first component of their bound
    keys never decreases. One whose bound key (:meth:`_Evaluator.compute_bound`, then each of
    :meth:`_Evaluator.comm_bounds`) is above the current top_k-th kept key cannot be ranked before
    it: its true key is at least its bound key (:func:`_rank_key`), and estimating more candidates
    only moves the top_k-th kept key forward. Such a candidate is neither kept nor counted as
    equivalent in the full ranking either; once the first component is above the top_k-th's, no
    candidate left can enter. Without ``bound`` every candidate is estimated.
    """
    top = _TopK(top_k)
    if not bound:  # every candidate estimated (progress once per 1% of them)
        every = max(1, len(feasible) // 100)

        def timed(i: int, c: Candidate) -> Estimate:
            if progress is not None and i % every == 0:
                progress(i, len(feasible), "estimating every layout that fits")
            return ev.estimate(c)
        top.ranked = sorted(((_rank_key(objective, c, e.tokens_per_s), e) for i, c in enumerate(feasible)
                             for e in (timed(i, c),)), key=lambda ke: ke[0])
        kept, skipped, _ = top.kept()
        return kept, skipped
    # in increasing order of the rank key's first component (memory, or the step-time bound that
    # decides the throughput bucket): once it passes the top_k-th's, nothing left can enter
    first = (lambda c: (c.memory, ev.compute_bound(c), c.index)) if objective == "memory" else (
        lambda c: (ev.compute_bound(c), c.index))
    heap = [(*first(c), c) for c in feasible]
    heapq.heapify(heap)
    last = None
    while heap:
        c = heapq.heappop(heap)[-1]
        if last is not None:
            lb_key = _rank_key(objective, c, ev.tokens / ev.compute_bound(c))
            if lb_key[0] > last[0]:
                break
            if lb_key > last or any(_rank_key(objective, c, ev.tokens / b) > last for b in ev.comm_bounds(c)):
                continue
        e = ev.estimate(c)
        key = _rank_key(objective, c, e.tokens_per_s)
        top.add(key, e)
        if last is None or key <= last:  # an entry ranked after the top_k-th distinct one cannot move it
            last = top.kept()[2]
    kept, skipped, _ = top.kept()
    return kept, skipped


def search(model: ModelSpec, hardware: HardwareSpec, training: TrainingSpec, n_devices: int, *,
           top_k: int = 10, objective: str = "throughput", fix: dict[str, Any] | None = None,
           max_tp: int | None = None, max_cp: int | None = None, schedules: Iterable[str] | None = None,
           max_microbatch_size: int = 16, exhaustive: bool = False, keep_infeasible: bool = False,
           progress: Callable[[int, int, str], None] | None = None, min_headroom_bytes: float = 0.0) -> SearchResult:
    """Enumerate valid layouts, estimate them and rank by tokens/s (ties: memory headroom). Under a profile that
    searches tensor-parallel communication overlap (``FrameworkProfile.searched_tp_overlap``: Megatron-LM's
    ``--tp-comm-overlap``) and with ``tp_overlap`` not pinned, the layouts are searched without and with it and the
    two rankings merged (:func:`_merge`); arguments, result and errors as :func:`_search_once`'s."""
    base = dict(fix or {})
    kw = dict(top_k=top_k, objective=objective, max_tp=max_tp, max_cp=max_cp, schedules=schedules,
              max_microbatch_size=max_microbatch_size, exhaustive=exhaustive, keep_infeasible=keep_infeasible,
              min_headroom_bytes=min_headroom_bytes)
    if (not training.framework.searched_tp_overlap or "tp_overlap" in base or base.get("tp") == 1
            or (max_tp is not None and max_tp < 2) or objective != "throughput"):  # the overlap moves no memory
        return _search_once(model, hardware, training, n_devices, fix=base, progress=progress, **kw)
    t0 = time.perf_counter()
    off = _search_once(model, hardware, training, n_devices, fix={**base, "tp_overlap": False}, progress=progress, **kw)
    try:
        on = _search_once(model, hardware, training, n_devices, fix={**base, "tp_overlap": True}, **kw)
    except ConfigError:  # no tp > 1 layout with sequence parallelism is valid: the ranking without the overlap stands
        return off
    return _merge(off, on, top_k, objective, keep_infeasible, time.perf_counter() - t0)


def _merge(a: SearchResult, b: SearchResult, top_k: int, objective: str, keep_infeasible: bool,
           seconds: float) -> SearchResult:
    """One ranking of two searches' plans (``a`` first on equal keys): the order of :func:`_rank_key` on the
    estimates (tokens/s within :data:`TIE_FACTOR` a tie, then the simpler layout, one using tp overlap counted one
    dimension more, memory, cp, tp, pp), layouts both found kept once; statistics added."""
    def key(e: Estimate, i: int) -> tuple:
        p = e.parallel
        return _order_key(objective, p, p.recompute, e.memory.total, e.tokens_per_s, i, int(p.tp_overlap))

    def merged(xs: list[Estimate], ys: list[Estimate], by) -> list[Estimate]:
        seen, out = set(), []
        for e in sorted([*xs, *ys], key=by):
            k = e.parallel.model_dump_json()
            if k not in seen:
                seen.add(k)
                out.append(e)
        return out[:top_k]

    order = {id(e): i for i, e in enumerate([*a.plans, *b.plans, *a.infeasible, *b.infeasible])}
    res = SearchResult(plans=merged(a.plans, b.plans, lambda e: key(e, order[id(e)])))
    if keep_infeasible:
        res.infeasible = merged(a.infeasible, b.infeasible, lambda e: (e.memory.total, order[id(e)]))
    for f in ("n_layouts", "n_evaluated", "n_invalid", "n_equivalent", "n_timed", "n_host_refused"):
        setattr(res, f, getattr(a, f) + getattr(b, f))
    res.host_memory_failure = a.host_memory_failure or b.host_memory_failure
    res.seconds = seconds
    return res


def _implied_pins(fix: dict, framework: FrameworkProfile) -> None:
    """Pins another pin implies, set in ``fix`` unless given: full recompute for recompute_layers / remat_saved (both
    describe one), ZeRO-3 for offload_params (parameters are offloaded as ZeRO-3 shards), pp 1 and the framework's
    recompute for offload_activation_layers (Megatron-core offloads with pp 1 and no recompute, MaxText under full)."""
    if fix.get("tp") == 1:  # no tp collectives to overlap (validate drops the flag at tp = 1 likewise)
        fix.pop("tp_overlap", None)
    if fix.get("recompute_layers") or fix.get("remat_saved"):
        fix.setdefault("recompute", "full")
    if fix.get("offload_params"):
        fix.setdefault("zero_stage", 3)
    if fix.get("offload_activation_layers"):
        fix.setdefault("pp", 1)
        fix.setdefault("recompute", "full" if framework.activation_offload == "remat_inputs" else "none")


def _search_once(model: ModelSpec, hardware: HardwareSpec, training: TrainingSpec, n_devices: int, *,
                 top_k: int = 10, objective: str = "throughput", fix: dict[str, Any] | None = None,
                 max_tp: int | None = None, max_cp: int | None = None, schedules: Iterable[str] | None = None,
                 max_microbatch_size: int = 16, exhaustive: bool = False, keep_infeasible: bool = False,
                 progress: Callable[[int, int, str], None] | None = None,
                 min_headroom_bytes: float = 0.0) -> SearchResult:
    """Enumerate valid layouts, estimate them and rank by tokens/s (ties: memory headroom).

    Args:
        model, hardware, training: the specs.
        n_devices: accelerators.
        top_k: plans to return.
        objective: 'throughput' (tokens/s, then lower memory) or 'memory' (lowest memory, then tokens/s).
        fix: ParallelConfig fields pinned to a value (e.g. ``{"tp": 8}``).
        max_tp: largest tensor-parallel degree considered.
        max_cp: largest context-parallel degree (default: up to seq_len / 1024 tokens per device, or the pinned cp).
        schedules: pipeline schedules allowed (default: all; GPipe is dominated unless asked for).
        max_microbatch_size: largest microbatch considered (sequences).
        exhaustive: try dominated options too and time every feasible layout (no branch and bound).
        keep_infeasible: also return the layouts that do not fit (lowest-memory variant each).
        progress: called as ``progress(done, total, label)`` while the degree sets are enumerated and, without
            branch and bound, while every feasible layout is estimated (a progress bar's updates).
        min_headroom_bytes: HBM every ranked plan keeps free below the fit limit (bytes; ``plan --min-headroom``:
            the fastest plan with room for what the model does not price, a cluster operator's margin).

    Returns:
        :class:`SearchResult`.

    Raises:
        ConfigError: for a bad objective, schedule, or fix that leaves no valid layout (the message
            says which constraint removed everything).
    """
    t0 = time.perf_counter()
    _check_arguments(n_devices, max_tp, objective)
    check_positions(model, training)  # no layout helps a sequence past a learned position table: say that
    fix = dict(fix or {})
    _implied_pins(fix, training.framework)
    default_cp, max_cp = max_cp is None, max_cp or max(1, training.seq_len // 1024, int(fix.get("cp") or 1))
    prune = not exhaustive and objective == "throughput"
    space = build_space(model, hardware, training, n_devices, fix, max_tp, max_cp, schedules,
                        max_microbatch_size, prune)
    ev = _Evaluator(model, hardware, training, n_devices, fix, min_headroom_bytes)
    res = SearchResult(plans=[])
    feasible, infeasible = _enumerate(space, ev, res, keep_infeasible, progress)
    if res.n_layouts == 0 and default_cp and training.seq_len // WIDE_CP_TOKENS > max_cp:
        # nothing within the default cp cap takes the batch (breaker pass 57): split to WIDE_CP_TOKENS per device
        space = build_space(model, hardware, training, n_devices, fix, max_tp, training.seq_len // WIDE_CP_TOKENS,
                            schedules, max_microbatch_size, prune)
        feasible, infeasible = _enumerate(space, ev, res, keep_infeasible, progress)
    if res.n_layouts == 0:
        # one asked-for schedule counts as pinned for the error (--schedule X is --fix schedule=X)
        _raise_no_layout(model, training, n_devices,
                         {**fix, "schedule": space.schedules[0]} if schedules and len(space.schedules) == 1 else fix)
    kept, res.n_equivalent = _rank(ev, feasible, top_k, objective, BRANCH_AND_BOUND and not exhaustive, progress)
    res.plans = [estimate_layout(model, hardware, training, e.layout) for e in kept]
    if keep_infeasible:
        res.infeasible = [estimate_layout(model, hardware, training, ev.layout(c))
                          for _, c in sorted(infeasible, key=lambda x: x[0])[:top_k]]
    res.n_timed, res.seconds = ev.n_timed, time.perf_counter() - t0
    return res


#: the fewest tokens per device the search splits a sequence to when no layout within its default cp cap (1,024 tokens
#: per device) is valid: a wording of "cp only when nothing else can take the batch", not a cost constant
WIDE_CP_TOKENS = 256


def _check_arguments(n_devices: int, max_tp: int | None, objective: str) -> None:
    """Reject a device count outside 1..MAX_DEVICES, max_tp < 1 and an unknown objective.

    Raises:
        ConfigError: naming the argument, its value and the legal range or values.
    """
    if not 1 <= n_devices <= MAX_DEVICES:
        raise ConfigError(f"devices={n_devices} must be between 1 and {MAX_DEVICES:,}", field="devices",
                          value=n_devices)
    if max_tp is not None and max_tp < 1:
        raise ConfigError(f"max_tp={max_tp} must be >= 1", field="max_tp", value=max_tp)
    if objective not in ("throughput", "memory"):
        raise ConfigError(f"objective={short_repr(objective)}; legal: throughput, memory", field="objective", value=objective,
                          legal=["throughput", "memory"])


def _profile_fill(fw: FrameworkProfile, pinned: dict) -> dict[str, Any]:
    """Values the search would choose for fields the user did not pin, so that the error for a search with no
    valid layout names what is wrong with the pins (e.g. degrees that do not divide the devices), not a profile rule
    the unpinned defaults break: sp under a profile whose tp shards the activations, a weight-sharding ZeRO stage
    under a profile that shards weights over cp / ep, the profile's first pipeline schedule and its first
    context-parallel exchange."""
    fill: dict[str, Any] = {}
    if int(pinned.get("tp", 1)) > 1 and (fw.tp_requires_sp or fw.layout_defaults.get("sp")):
        fill["sp"] = True
    if fw.weight_sharding_axes and any(int(pinned.get(a, 1)) > 1 for a in fw.weight_sharding_axes):
        fill["zero_stage"] = max(fw.zero_stages or (0, 1, 2, 3))
    if int(pinned.get("pp", 1)) > 1 and fw.schedules:
        fill["schedule"] = fw.schedules[0]
    if int(pinned.get("cp", 1)) > 1:
        fill["cp_comm"] = fw.cp_comms[0]
    return fill


def _raise_no_layout(model: ModelSpec, training: TrainingSpec, n_devices: int, fix: dict) -> None:
    """Raise the error for a search that found no valid layout: the specific rule the pinned values
    break (as ``estimate`` would report it), else a generic one.

    Raises:
        ConfigError: always.
    """
    if fix:
        pinned = {k: v for k, v in fix.items() if k in _FIELDS}
        if "dp_shard" in pinned:
            pinned.setdefault("zero_stage", 3)
        stages = training.framework.offload_zero_stages
        if pinned.get("offload_optimizer") and stages:  # the search tried only these (build_space)
            pinned.setdefault("zero_stage", min(stages))
        if int(pinned.get("virtual_stages", 1)) > 1:
            pinned.setdefault("schedule", "interleaved")  # the only schedule the search pairs them with
        pc = ParallelConfig(**{**_profile_fill(training.framework, pinned), **pinned})
        try:
            validate(pc, model, training, n_devices)
        except ConfigError as e:
            if "none with the other settings as given" not in str(e):
                raise
            # the legal values were tried with the unpinned fields at their defaults (tp 1, dp = the rest), which the
            # search would not keep: list them as the rule gives them instead
            with quiet_legal_values():
                validate(pc, model, training, n_devices)
            raise
    raise ConfigError(f"no valid layout for {model.name} on {n_devices} devices with seq_len={training.seq_len}, "
                      f"global_batch_size={training.global_batch_size} and fix={fix or {}}; relax --fix / "
                      f"--max-tp or change the batch", field="fix", value=fix)
