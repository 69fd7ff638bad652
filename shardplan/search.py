"""Search every valid layout for a model, hardware, device count and batch, and rank them.

The space: factorisations of the device count into dp x tp x pp x cp (ep carved from dp x cp for
MoE), ZeRO stage 0-3 (and node-local HSDP sharding and gather-once-per-step for stage 3), sequence parallelism on/off,
recompute policy, microbatch size, pipeline schedule and virtual stages. Invalid layouts are
dropped by :func:`shardplan.parallel.validate`; layouts that do not fit in HBM are kept aside
(``SearchResult.infeasible``) instead of silently dropped.

To stay fast, options that the cost model says are *dominated* are not evaluated unless pinned
with ``fix`` or ``exhaustive=True`` (each rule is exact for this cost model, so the best layout
found is the best of the full space):

* ZeRO-1 and ZeRO-2 issue the same collectives (ReduceScatter + AllGather = one AllReduce, ZeRO
  paper Sec. 7) and ZeRO-2 holds less memory: ZeRO-2 dominates ZeRO-1; it also dominates ZeRO-0
  (same bytes, part of it overlapped with the forward, and a sharded optimizer update).
* Recompute only adds work (none < selective < full in time, the reverse in memory): per layout the
  first policy that fits is the fastest.
* Without pipelining, step time does not grow with the microbatch size while memory does: the
  largest microbatch that fits is the fastest.
* GPipe has 1F1B's bubble with more activation memory (Narayanan et al. 2021 Sec. 2.2), and ZB-H1
  has 1F1B's memory with a third of its bubble (Qi et al. 2023 Sec. 3): both dominated when
  zero-bubble is allowed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from shardplan.cost.memory import memory_estimate
from shardplan.cost.step import Estimate, estimate_layout
from shardplan.errors import ConfigError, divisors
from shardplan.parallel import ParallelConfig, legal_tp, validate
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

RECOMPUTE_ORDER = ("none", "selective", "full")
SCHEDULES = ("1f1b", "interleaved", "zero-bubble", "gpipe")
_FIELDS = set(ParallelConfig.model_fields)


@dataclass
class SearchResult:
    """Ranked feasible plans, layouts that did not fit, and search statistics.

    Attributes:
        plans: feasible estimates, best first.
        infeasible: the lowest-memory variant of each degree combination that did not fit.
        n_layouts: layouts considered (after validation, before dominance pruning).
        n_evaluated: layouts whose memory or time was computed.
        n_invalid: candidate combinations rejected by validation.
        n_equivalent: feasible layouts left out of ``plans`` because an earlier plan predicts exactly the
            same throughput and memory.
        seconds: wall time of the search.
    """

    plans: list[Estimate]
    infeasible: list[Estimate] = field(default_factory=list)
    n_layouts: int = 0
    n_evaluated: int = 0
    n_invalid: int = 0
    n_equivalent: int = 0
    seconds: float = 0.0


def _complexity(e: Estimate) -> int:
    """Parallel dimensions a layout uses beyond plain data parallelism (tie-breaker)."""
    p = e.parallel
    return (p.tp > 1) + (p.pp > 1) + (p.cp > 1) + (p.ep > 1) + (p.zero_stage == 3) + (p.recompute != "none")


def balanced_split(n_layers: int, pp: int) -> tuple[int, ...]:
    """Layers per stage when pp does not divide n_layers: the extra layers go to the middle stages,
    since the first stage also holds the embedding and the last the LM head (bug case C: the split
    always covers every layer)."""
    base, extra = divmod(n_layers, pp)
    order = sorted(range(pp), key=lambda i: (i in (0, pp - 1), abs(i - (pp - 1) / 2)))
    plus = set(order[:extra])
    return tuple(base + (1 if i in plus else 0) for i in range(pp))


def parse_fix(items: Iterable[str]) -> dict[str, Any]:
    """Parse ``["tp=8", "sp=true", "schedule=1f1b"]`` into ParallelConfig field values.

    Raises:
        ConfigError: unknown field (lists the legal ones) or a malformed item.
    """
    import yaml

    out: dict[str, Any] = {}
    parts = [p for item in items for p in _split_fix(item)]
    for item in parts:
        if "=" not in item:
            raise ConfigError(f"--fix {item!r} must look like field=value (e.g. tp=8)", field="fix", value=item)
        k, v = (x.strip() for x in item.split("=", 1))
        k = k.replace("-", "_")
        if k not in _FIELDS:
            raise ConfigError(f"--fix {k!r} is not a layout field; legal: {', '.join(sorted(_FIELDS))}",
                              field="fix", value=k, legal=sorted(_FIELDS))
        if k in out:
            raise ConfigError(f"--fix {k} is given twice", field="fix", value=k)
        if v == "":
            raise ConfigError(f"--fix {k}= has no value", field="fix", value=k)
        try:
            val = yaml.safe_load(v)
        except yaml.YAMLError:
            val = v
        if k == "pp_layers" and isinstance(val, list):
            val = tuple(val)
        out[k] = val
    if out:  # type-check the pinned values with the layout's own validation
        from pydantic import ValidationError
        try:
            ParallelConfig(**out)
        except ValidationError as e:
            first = e.errors()[0]
            loc = ".".join(str(x) for x in first["loc"])
            raise ConfigError(f"--fix {loc}={first.get('input')!r}: {first['msg']}", field=loc,
                              value=first.get("input")) from None
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


def _degree_combos(model: ModelSpec, training: TrainingSpec, n: int, fix: dict, max_tp: int | None,
                   max_cp: int) -> Iterable[tuple[int, int, int, int, int]]:
    s = training.seq_len
    tps = [t for t in legal_tp(model, fix.get("kv_replication", False)) if n % t == 0 and model.ffn_dim % t == 0]
    if max_tp:
        tps = [t for t in tps if t <= max_tp]
    for tp in tps:
        if "tp" in fix and fix["tp"] != tp:
            continue
        rest = n // tp
        for cp in divisors(rest):
            if cp > max_cp or ("cp" in fix and fix["cp"] != cp):
                continue
            if cp > 1 and s % (2 * cp if training.causal else cp):
                continue
            for pp in divisors(rest // cp):
                if "pp" in fix and fix["pp"] != pp:
                    continue
                if pp > model.n_layers:
                    continue
                dp = rest // cp // pp
                if "dp" in fix and fix["dp"] is not None and fix["dp"] != dp:
                    continue
                eps = [1]
                if model.is_moe:
                    eps = [e for e in divisors(model.n_experts) if (dp * cp) % e == 0]
                for ep in eps:
                    if "ep" in fix and fix["ep"] != ep:
                        continue
                    yield tp, cp, pp, dp, ep


def search(model: ModelSpec, hardware: HardwareSpec, training: TrainingSpec, n_devices: int, *,
           top_k: int = 10, objective: str = "throughput", fix: dict[str, Any] | None = None,
           max_tp: int | None = None, max_cp: int | None = None, schedules: Iterable[str] | None = None,
           max_microbatch_size: int = 16, exhaustive: bool = False, keep_infeasible: bool = False) -> SearchResult:
    """Enumerate valid layouts, estimate them and rank by tokens/s (ties: memory headroom).

    Args:
        model, hardware, training: the specs.
        n_devices: accelerators.
        top_k: plans to return.
        objective: 'throughput' (tokens/s, then lower memory) or 'memory' (lowest memory, then tokens/s).
        fix: ParallelConfig fields pinned to a value (e.g. ``{"tp": 8}``).
        max_tp: largest tensor-parallel degree considered.
        max_cp: largest context-parallel degree (default: up to seq_len / 1024 tokens per device).
        schedules: pipeline schedules allowed (default: all; GPipe is dominated unless asked for).
        max_microbatch_size: largest microbatch considered (sequences).
        exhaustive: evaluate dominated options too.
        keep_infeasible: also return the layouts that do not fit (lowest-memory variant each).

    Returns:
        :class:`SearchResult`.

    Raises:
        ConfigError: for a bad objective, schedule, or fix that leaves no valid layout (the message
            says which constraint removed everything).
    """
    t0 = time.perf_counter()
    from shardplan.parallel import MAX_DEVICES
    if not 1 <= n_devices <= MAX_DEVICES:
        raise ConfigError(f"devices={n_devices} must be between 1 and {MAX_DEVICES:,}", field="devices",
                          value=n_devices)
    if max_tp is not None and max_tp < 1:
        raise ConfigError(f"max_tp={max_tp} must be >= 1", field="max_tp", value=max_tp)
    if objective not in ("throughput", "memory"):
        raise ConfigError(f"objective={objective!r}; legal: throughput, memory", field="objective", value=objective,
                          legal=["throughput", "memory"])
    fix = dict(fix or {})
    scheds = list(schedules) if schedules else ([fix["schedule"]] if "schedule" in fix else list(SCHEDULES[:3]))
    for sc in scheds:
        if sc not in SCHEDULES:
            raise ConfigError(f"schedule={sc!r}; legal: {', '.join(SCHEDULES)}", field="schedule", value=sc,
                              legal=SCHEDULES)
    if max_cp is None:
        max_cp = max(1, training.seq_len // 1024)
    prune = not exhaustive and objective == "throughput"
    zero_opts = [fix["zero_stage"]] if "zero_stage" in fix else ([2, 3] if prune else [0, 1, 2, 3])
    rec_opts = [fix["recompute"]] if "recompute" in fix else list(RECOMPUTE_ORDER)
    B = training.global_batch_size
    usable = hardware.usable_hbm_bytes()
    reserve = hardware.hbm_bytes - usable
    res = SearchResult(plans=[])
    feasible: list[Estimate] = []
    infeasible: list[tuple[float, Estimate | None, Any]] = []
    for tp, cp, pp, dp, ep in _degree_combos(model, training, n_devices, fix, max_tp, max_cp):
        if B % dp:
            res.n_invalid += 1
            continue
        zs = [0] if dp * cp == 1 else zero_opts
        sps = [fix["sp"]] if "sp" in fix else ([False, True] if tp > 1 else [False])
        mbs_all = [m for m in divisors(B // dp) if m <= max_microbatch_size]
        if "microbatch_size" in fix:
            mbs_all = [fix["microbatch_size"]]
        mbs_opts = sorted(mbs_all, reverse=True)
        sched_opts: list[tuple[str, int]] = [("1f1b", 1)]
        pp_split = balanced_split(model.n_layers, pp) if model.n_layers % pp else None
        if "pp_layers" in fix and fix["pp_layers"] is not None:
            if len(fix["pp_layers"]) != pp:
                continue
            pp_split = tuple(fix["pp_layers"])
        if pp > 1:
            sched_opts = []
            for sc in scheds:
                if sc == "interleaved":
                    if pp_split is not None:
                        continue
                    vs = [fix["virtual_stages"]] if "virtual_stages" in fix else [
                        v for v in divisors(model.n_layers // pp) if v > 1][:4]
                    sched_opts += [("interleaved", v) for v in vs]
                elif sc == "gpipe" and prune and "gpipe" not in (schedules or []) and fix.get("schedule") != "gpipe":
                    continue  # same bubble as 1F1B, more memory
                elif sc == "1f1b" and prune and "zero-bubble" in scheds and "schedule" not in fix:
                    continue  # ZB-H1 keeps 1F1B's memory with a third of its bubble (Qi et al. 2023)
                else:
                    sched_opts.append((sc, 1))
        for z in zs:
            shards = [None]
            if z == 3 and "dp_shard" not in fix:
                local = hardware.scale_up_size // (tp * cp)
                if 1 < local < dp and dp % local == 0:
                    shards.append(local)  # HSDP: shard inside the scale-up domain, replicate across
            elif "dp_shard" in fix:
                shards = [fix["dp_shard"]]
            gathers = ([fix["zero3_gather"]] if "zero3_gather" in fix else
                       ["per_microbatch", "per_step"] if z == 3 else ["per_microbatch"])
            for shard, gather in ((sh, g) for sh in shards for g in gathers):
                for sp in sps:
                    for sched, v in sched_opts:
                        best_low_mem: tuple[float, Any] | None = None
                        extra = {k: fix[k] for k in ("kv_replication", "fsdp_unit", "offload_optimizer",
                                                     "overlap_grad_reduce") if k in fix}

                        def try_one(mbs: int, rc: str) -> bool | None:
                            """Evaluate one layout: True fits, False does not, None invalid."""
                            nonlocal best_low_mem
                            try:
                                pc = ParallelConfig(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero_stage=z, dp_shard=shard,
                                                    sp=sp, microbatch_size=mbs, schedule=sched, virtual_stages=v,
                                                    recompute=rc, pp_layers=pp_split, zero3_gather=gather,
                                                    **extra)
                                lay = validate(pc, model, training, n_devices)
                            except ConfigError:
                                res.n_invalid += 1
                                return None
                            if any(getattr(lay.parallel, k) != v for k, v in fix.items()
                                   if k in _FIELDS and k not in ("dp",) and v is not None):
                                return None  # a pinned field the candidate cannot honour
                            res.n_layouts += 1
                            res.n_evaluated += 1
                            mem = memory_estimate(model, training, lay, reserve)
                            if mem.total > hardware.hbm_bytes:
                                if best_low_mem is None or mem.total < best_low_mem[0]:
                                    best_low_mem = (mem.total, lay)
                                return False
                            feasible.append(estimate_layout(model, hardware, training, lay, detail=False))
                            return True

                        if prune and pp == 1:
                            # per recompute policy, the largest microbatch that fits; a stronger policy
                            # only helps if it lets a larger microbatch fit
                            prev = 0
                            for rc in rec_opts:
                                fitted = next((mbs for mbs in mbs_opts if mbs > prev and try_one(mbs, rc)), None)
                                prev = fitted or prev
                                if prev == mbs_opts[0]:
                                    break
                        else:
                            for mbs in mbs_opts:
                                for rc in rec_opts:
                                    if try_one(mbs, rc) and prune:
                                        break  # slower recompute policies are dominated
                        if best_low_mem is not None and keep_infeasible:
                            infeasible.append((best_low_mem[0], None, best_low_mem[1]))
    if not feasible and not infeasible and res.n_layouts == 0:
        if fix:  # report the specific rule the pinned values break, as `estimate` would
            pinned = {k: v for k, v in fix.items() if k in _FIELDS}
            if "dp_shard" in pinned:
                pinned.setdefault("zero_stage", 3)
            validate(ParallelConfig(**pinned), model, training, n_devices)
        raise ConfigError(f"no valid layout for {model.name} on {n_devices} devices with seq_len={training.seq_len}, "
                          f"global_batch_size={B} and fix={fix or {}}; relax --fix / --max-tp or change the batch",
                          field="fix", value=fix)
    if objective == "throughput":
        # throughput within 0.2% counts as a tie, broken by the simpler layout (fewer parallel
        # dimensions in use), then by memory headroom
        feasible.sort(key=lambda e: (-round(math.log(e.tokens_per_s) / math.log(1.002)), _complexity(e),
                                     e.memory.total, e.parallel.cp, e.parallel.tp, e.parallel.pp))
    else:
        feasible.sort(key=lambda e: (e.memory.total, -e.tokens_per_s))
    # layouts whose predictions are identical to a better-ranked one (e.g. dp=128 cp=4 mbs=1 vs dp=64
    # cp=8 mbs=2) add nothing to the ranking: keep the first (simplest) of each
    kept: list[Estimate] = []
    seen: set[tuple[float, float]] = set()
    for e in feasible:
        key = (round(e.tokens_per_s, 6), round(e.memory.total))
        if key in seen:
            res.n_equivalent += 1
            continue
        seen.add(key)
        kept.append(e)
        if len(kept) == top_k:
            break
    res.plans = [estimate_layout(model, hardware, training, e.layout) for e in kept]
    if keep_infeasible:
        infeasible.sort(key=lambda x: x[0])
        res.infeasible = [estimate_layout(model, hardware, training, lay) for _, _, lay in infeasible[:top_k]]
    res.seconds = time.perf_counter() - t0
    return res
