"""``shardplan plan`` (ranked search with explanations) and ``shardplan guide`` (rules of thumb,
quantified)."""

import json
import math
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.markup import escape
from rich.table import Table

from shardplan.cli.common import (check_output_path, OptimizerDtypeOpt,
                                  AttnOpt, BatchOpt, BatchTokOpt, DevicesOpt, DropoutOpt, FrameworkOpt, MoeCapOpt,
                                  MoeImbOpt, MoeRoutingOpt,
                                  HardwareOpt, JsonOpt,
                                  ModelOpt, PrecisionOpt, ScaleUpOpt, SeqOpt, app, config_errors, console, err_console,
                                  layout_flags, negative)
from shardplan.errors import ConfigError
from shardplan.export import EXPORTERS
from shardplan.explain import fit_limit_text, headroom
from shardplan.units import fmt_seconds

TopOpt = Annotated[int, typer.Option("--top", help="plans to show")]
DistinctOpt = Annotated[bool, typer.Option("--distinct", help="show the best plan of each distinct set of degrees "
                                           "(dp, tp, pp, cp, ep, ZeRO stage) only, so that --top compares real "
                                           "alternatives rather than variants of one layout (schedule, virtual stages, "
                                           "microbatch size, recompute)")]
ObjectiveOpt = Annotated[str, typer.Option(help="throughput | memory")]
FixOpt = Annotated[Optional[list[str]], typer.Option("--fix", help="pin a field, e.g. --fix tp=8 (same as --tp 8); "
                                                     "several: --fix tp=8,pp=2 or --fix again (--fix tp=8 --fix pp=2)")]
MaxTpOpt = Annotated[Optional[int], typer.Option("--max-tp", help="largest tp to consider")]
InfeasibleOpt = Annotated[bool, typer.Option("--show-infeasible", help="also list the closest layouts that do not fit")]
MinHeadroomOpt = Annotated[float, typer.Option(
    "--min-headroom", help="GiB of HBM every ranked plan keeps free below the fit limit (a margin for what the "
                           "model does not price); 0: every layout that fits")]
ExhaustiveOpt = Annotated[bool, typer.Option(help="also evaluate dominated options")]
ExportOpt = Annotated[Optional[str], typer.Option("--export", help="also write the best ranked plan this framework "
                                                  "expresses as its config "
                                                  f"({' | '.join(EXPORTERS)})")]
ExportOutOpt = Annotated[Optional[Path], typer.Option("--output", "-o", help="file for --export")]
ExportRankOpt = Annotated[Optional[int], typer.Option("--export-rank", min=1, help="with --export: write the plan of "
                                                      "this rank (1 = the winner even when it is a tight fit and a "
                                                      "close runner-up is the safer pick, which --export writes "
                                                      "otherwise)")]


def _rule_results(model, hw, training, n: int, best, user_fix: dict[str, Any]) -> list[dict[str, Any]]:
    """Evaluate each applicable rule of thumb as a constrained search; one dict per rule."""
    from shardplan.explain import rules_of_thumb
    from shardplan.search import TIE_FACTOR, search

    out = []
    for rule in rules_of_thumb(model.n_params, n, training.seq_len, model.is_moe, hw.kind, training.framework,
                               hw.scale_up_size):
        # a rule's zero_stage 0 stands for "not ZeRO-3" (e.g. "ZeRO-3 is inefficient"): a pinned 1 or 2 keeps to it
        clash = sorted(k for k in rule.fix.keys() & user_fix.keys() if rule.fix[k] != user_fix[k]
                       and not (k == "zero_stage" and rule.fix[k] != 3 and user_fix[k] != 3))
        if clash:  # the user's pin contradicts what the rule prescribes: the rule cannot be tried here
            k = clash[0]
            out.append({"source": rule.source, "rule": rule.text, "plan": None,
                        "note": f"not tried: the rule needs {k}={rule.fix[k]}, the pinned {k}={user_fix[k]}"})
            continue
        fix = {**rule.fix, **user_fix}
        try:
            r = search(model, hw, training, n, top_k=1, fix=fix)
        except ConfigError as e:
            out.append({"source": rule.source, "rule": rule.text, "plan": None, "note": f"not valid here: {e}"})
            continue
        if not r.plans:
            out.append({"source": rule.source, "rule": rule.text, "plan": None, "note": "no layout under it fits"})
            continue
        e = r.plans[0]
        delta = e.tokens_per_s / best.tokens_per_s - 1 if best else 0.0
        out.append({"source": rule.source, "rule": rule.text, "plan": e.parallel.short(),
                    "tokens_per_s": e.tokens_per_s, "vs_best": delta,
                    "note": ("agrees with the best plan" if best is None or e.parallel == best.parallel
                             else f"{delta:+.1%} tokens/s vs best" + (" (a tie in the ranking)"
                                                                     if abs(delta) <= TIE_FACTOR - 1 else ""))})
    return out


def search_pins(fix: list[str] | None, layout: dict[str, Any]) -> tuple[dict[str, Any], list[str] | None]:
    """The fields the search must keep (``--fix tp=8`` and the layout flags, e.g. ``--tp 8``) and the
    allowed schedules (``--schedule``, repeatable).

    Raises:
        ConfigError: a field pinned twice, an unknown field or choice, or a value the field rejects.
    """
    from shardplan.inputs import layout_values, parallel_config, with_pipeline_depth
    from shardplan.search import parse_fix

    fixed = parse_fix(fix or [])
    layout = dict(layout)
    schedules = [layout_values({"schedule": s})["schedule"] for s in layout.pop("schedule", [])]
    pins = layout_values(layout)
    twice = sorted(pins.keys() & fixed.keys())
    if twice:
        key = twice[0]
        raise ConfigError(f"{key} is given twice (--{key.replace('_', '-')} and --fix {key}=...)", field=key,
                          value=pins[key])
    merged = with_pipeline_depth({**fixed, **pins})
    interleave = int(merged.get("virtual_stages", 1)) > 1 and "schedule" not in merged
    if interleave and not schedules:
        schedules = ["interleaved"]  # virtual stages pinned, no schedule given: they imply the interleaved one
    parallel_config({**merged, "schedule": "interleaved"} if interleave else merged)  # type-check the pinned values
    return merged, schedules or None


def _check_rows_valid(rows: list[dict]) -> None:
    """Refuse a guide table whose every row is bad input (gpt2 at seq 8192: exit 2, as estimate; breaker pass 56).

    Raises:
        ConfigError: the first row's reason."""
    invalid = [r["best"] for r in rows if str(r["best"]).startswith("invalid: ")]
    if rows and len(invalid) == len(rows):
        raise ConfigError(f"no guide row is valid: {invalid[0].removeprefix('invalid: ')}", field="guide",
                          value=len(rows))


def winner_notes(plans: list, objective: str = "throughput") -> list[str]:
    """The notes on the ranked winner ``plans[0]`` that ``plan`` prints (and ``--json`` stores as its ``notes``): the
    profile terms that shape its step (MoE and per-layer overheads, pipeline stalls, allocator pressure, compile),
    the compiler flags and the DeepSpeed ZeRO-3 share its price rests on (new-user pass 55b: only ``estimate`` and the
    export said them), and a safer pick when the winner fits only on the central figure. [] for no plans."""
    if not plans:
        return []
    from shardplan.cli.estimate import (allocator_note, compile_note, layer_overhead_note, moe_overhead_note,
                                        serialized_gather_note, stall_note, straddle_note, xla_gpu_gather_note,
                                        zero3_share_note)
    best = plans[0]
    notes = (moe_overhead_note(best), layer_overhead_note(best), stall_note(best), allocator_note(best),
             compile_note(best), serialized_gather_note(best), straddle_note(best), xla_gpu_gather_note(best),
             zero3_share_note(best), safer_pick_note(plans, objective))
    return [n for n in notes if n]


def _plan_json(res, best, rules: list[dict[str, Any]], show_infeasible: bool, objective: str = "throughput"
               ) -> dict[str, Any]:
    from shardplan.accuracy_band import estimate_band, order_reliability
    from shardplan.explain import compare, describe
    plans = []
    for i, e in enumerate(res.plans):
        d = e.to_dict()
        d["rank"] = i + 1
        d["explanation"] = describe(e) if i == 0 else compare(best, e, objective)
        if i == 0:
            band = estimate_band(e)
            d["throughput_band"] = band.to_dict(e.tokens_per_s / e.layout.n_devices) if band else None
            d["notes"] = winner_notes(res.plans, objective)
        elif objective == "throughput":
            order = order_reliability(best.tokens_per_s, e.tokens_per_s)
            d["order_reliability"] = order.to_dict() if order else None
        plans.append(d)
    out = {"plans": plans, "search": {"layouts": res.n_layouts, "invalid": res.n_invalid,
                                      "equivalent_not_shown": res.n_equivalent, "seconds": res.seconds,
                                      # layouts refused because their offloaded state exceeds a host's memory
                                      "host_memory_refused": res.n_host_refused,
                                      "host_memory_failure": res.host_memory_failure},
           "rules_of_thumb": rules}
    if show_infeasible:
        out["infeasible"] = [dict(e.to_dict(), explanation=describe(e)) for e in res.infeasible]
    return out


def _order_text(best, other, objective: str) -> str:
    """``" (layouts predicted 2.5%-5.1% apart were ordered right in 79% of 39 public held-out pairs and ...)"`` for a runner-up
    under the throughput objective (:func:`shardplan.accuracy_band.order_reliability`), else ``""``."""
    from shardplan.accuracy_band import order_reliability
    order = order_reliability(best.tokens_per_s, other.tokens_per_s) if objective == "throughput" else None
    return f" ({order.text()})" if order else ""


#: below this share of pairs ordered right (public held-out pairs), a ranking between two layouts is too close to call
#: (one in three or more ordered wrong), and a tight-fitting #1 is worth less than a roomier runner-up. 0.70 since the
#: 1,041-run held-out set (session 54: pairs under 2.5% apart ordered right in 66% of 208, 60% of 119 before; at 0.65
#: a 2%-faster #1 whose peak band passes the HBM would have been written over a runner-up with 23 GiB free)
SAFER_PICK_RIGHT_SHARE = 0.70


def first_roomy(plans: list) -> tuple[int, Any] | None:
    """(rank, estimate) of the fastest runner-up that fits with headroom (not :func:`shardplan.explain.tight_fit`),
    or None."""
    from shardplan.explain import tight_fit
    return next(((i, e) for i, e in enumerate(plans[1:], start=2) if e.fits and not tight_fit(e)), None)


def safer_pick(plans: list, objective: str = "throughput") -> tuple[int, str] | None:
    """(rank, note) when #1 is a tight fit (:func:`shardplan.explain.tight_fit`) and a shown runner-up that is not is
    so close that the planner's order of the two has been right in under :data:`SAFER_PICK_RIGHT_SHARE` of public
    pairs (:func:`shardplan.accuracy_band.order_reliability`): that runner-up's rank (1-based) and a note saying it is
    the safer pick (a breaker's torchtitan 8B plan ranked a pp=2 layout whose peak band passes the HBM over a tp=2 one
    0.4% slower with 23 GiB free); None otherwise."""
    from shardplan.accuracy_band import order_reliability
    from shardplan.explain import headroom, tight_fit
    if objective != "throughput" or not plans or not tight_fit(plans[0]):
        return None
    best, roomy = plans[0], first_roomy(plans)
    if roomy is None:
        return None
    i, e = roomy
    order = order_reliability(best.tokens_per_s, e.tokens_per_s)
    if order is None or order.public_fraction_right >= SAFER_PICK_RIGHT_SHARE:
        return None
    return i, (f"#1 is a tight fit; #{i} is {best.tokens_per_s / e.tokens_per_s - 1:.1%} slower with "
               f"{headroom(e) / 2**30:.1f} GiB headroom, and layouts predicted this close were ordered right in "
               f"{order.public_fraction_right:.0%} of public held-out pairs: #{i} is the safer pick")


def safer_pick_note(plans: list, objective: str = "throughput") -> str:
    """The note of :func:`safer_pick`; where #1 is a tight fit without a safer pick close enough, the fastest shown plan
    with headroom and its gap, or (none shown) that every shown plan is tight (a new user's DeepSeek-V3 top 5 were all
    tight fits, with no pointer to one that is not); ``""`` otherwise."""
    from shardplan.explain import headroom, tight_fit
    pick = safer_pick(plans, objective)
    if pick:
        return pick[1]
    if objective != "throughput" or not plans or not tight_fit(plans[0]):
        return ""
    roomy = first_roomy(plans)
    if roomy is None:
        return (f"#1 is a tight fit, as is every plan shown: a larger --top shows the fastest one with headroom "
                f"(or --fix a smaller microbatch / more recompute)" if len(plans) > 1 else "")
    i, e = roomy
    return (f"#1 is a tight fit; the fastest plan with headroom is #{i}, {plans[0].tokens_per_s / e.tokens_per_s - 1:.1%}"
            f" slower with {headroom(e) / 2**30:.1f} GiB free")


def _tied(res, objective: str) -> list[bool]:
    """For each ranked plan, whether it ties with the plan above it under the throughput objective: the same
    :func:`shardplan.search.tie_step` of tokens/s, where the search orders by the simpler layout and then memory
    (so a tied row may show a little more tokens/s than the one above; a new user took that for a wrong order)."""
    from shardplan.search import tie_step
    if objective != "throughput":
        return [False] * len(res.plans)
    steps = [tie_step(e.tokens_per_s) if e.tokens_per_s > 0 else None for e in res.plans]
    return [i > 0 and steps[i] is not None and steps[i] == steps[i - 1] for i in range(len(steps))]


def _plans_table(res, m, hw, tr, devices: int, objective: str = "throughput") -> Table:
    t = Table(title=f"{escape(m.name)} on {devices} x {escape(hw.name)}, seq {tr.seq_len}, batch {tr.global_batch_size} "
                    f"sequences: {res.n_layouts:,} layout{'' if res.n_layouts == 1 else 's'} in {res.seconds:.2f} s"
                    + (f" ({res.n_equivalent:,} with identical predictions not shown)" if res.n_equivalent else ""))
    # the layout column folds instead of ending in "..." (rows may differ only at its end, issue 15)
    from shardplan.explain import headroom, tight_fit
    # GiB: the predicted peak per device; free: the headroom to the usable HBM (a "*" where the peak band's high end,
    # twice the fitted fragmentation, passes the usable HBM: the layout fits on the central figure only)
    for col in ("#", "layout", "tok/s/dev", "MFU", "step", "GiB", "free", "bound"):
        t.add_column(col, justify="left" if col in ("layout", "bound") else "right", overflow="fold",
                     no_wrap=col not in ("layout", "bound"), min_width={"layout": 22, "bound": 8}.get(col))
    tied = _tied(res, objective)
    for i, e in enumerate(res.plans):
        tight = "*" if tight_fit(e) else ""
        t.add_row(f"{i + 1}{'=' if tied[i] else ''}", e.parallel.short(), f"{e.tokens_per_s / devices:,.0f}", f"{e.mfu:.1%}",
                  fmt_seconds(e.step_s), f"{e.memory.total / 2**30:,.1f}", f"{headroom(e) / 2**30:,.1f}{tight}",
                  e.bound.split(" (")[0])
    return t


def _print_plans(res, m, hw, tr, devices: int, rules: list[dict[str, Any]], show_infeasible: bool,
                 objective: str = "throughput") -> None:
    from shardplan.accuracy_band import band_text, estimate_band
    from shardplan.explain import compare, describe
    if res.plans:
        console.print(_plans_table(res, m, hw, tr, devices, objective))
        if any(_tied(res, objective)):
            console.print("=: ties with the row above (tokens/s within 0.2%, one step of the ranking): ordered by the "
                          "simpler layout, then memory, so a tied row may show a little more tokens/s than the one "
                          "above it (docs/search.md)", highlight=False)
        from shardplan.explain import TIGHT_HEADROOM_SHARE, tight_fit
        if any(tight_fit(e) for e in res.plans):
            console.print("free: GiB left below the usable HBM; * the peak band's high end (twice the fitted allocator "
                          f"fragmentation) passes it, or, for a profile without a band, under {TIGHT_HEADROOM_SHARE:.1%} "
                          "of it is left (the planner's median peak-memory error): such a layout fits on the central "
                          "figure only (README, 'fits / peak band')", highlight=False)
    best = res.plans[0] if res.plans else None
    for i, e in enumerate(res.plans):
        console.print(f"[bold]#{i + 1}[/] " + (describe(e) if i == 0 else compare(best, e, objective)
                                              + _order_text(best, e, objective)), highlight=False)
    if best is not None:  # the profile terms that shape the winner's step, as `estimate` names them
        from rich.markup import escape
        for note in winner_notes(res.plans, objective):
            console.print(f"[yellow]note (#1):[/] {escape(note)}", highlight=False, soft_wrap=True)
        band = estimate_band(best)
        if band:
            console.print(f"#1's 80% band: {escape(band_text(band, best.tokens_per_s / devices))}; docs/accuracy.md",
                          highlight=False)
    if rules:
        rt = Table(title="rules of thumb evaluated by the planner")
        for col in ("source", "rule", "best layout under the rule", "verdict"):
            rt.add_column(col)
        for r in rules:
            rt.add_row(r["source"], r["rule"], r["plan"] or "-", r["note"])
        console.print(rt)
    if show_infeasible and res.infeasible:
        console.print(_infeasible_table(res.infeasible))


def _infeasible_table(estimates: list) -> Table:
    """``--show-infeasible``'s table: each closest layout that does not run, its device memory and how far over the
    HBM it is (GiB; negative: under it), and, where it offloads, its host memory per host against the host's (a
    layout refused for host memory alone fits the HBM)."""
    it = Table(title="closest layouts that do not fit")
    host = any(e.host_memory_per_host > 0 for e in estimates)
    for col in ("layout", "memory GiB", "HBM over by GiB", *(("host GiB per host", ) if host else ())):
        it.add_column(col)
    for e in estimates:
        limit = e.hardware.host_memory_bytes
        of = f" of {limit / 2**30:,.0f}" if limit else " (not checked)"
        it.add_row(e.parallel.short(), f"{e.memory.total / 2**30:,.1f}", f"{-headroom(e) / 2**30:,.1f}",
                   *((f"{e.host_memory_per_host / 2**30:,.1f}{of}" if e.host_memory_per_host else "-",) if host else ()))
    return it


def _export_chosen(framework: str, plans: list, output: Optional[Path], inputs: Optional[dict],
                   rank: Optional[int]) -> bool:
    """``plan --export``'s choice before the ranking order: the plan of ``--export-rank`` (written or refused), else
    the safer pick when #1 is a tight fit (:func:`safer_pick`; a new user's torchtitan export of Qwen3-30B-A3B on 16
    H200 wrote a #1 with 0.4 GiB free beside a #2 0.05% slower with 8.9 GiB). True when a plan was written.

    Raises:
        ConfigError: ``--export-rank`` past the ranking, or a ranked plan the framework cannot write."""
    from shardplan.cli.export import write_export
    if rank is not None:
        if rank > len(plans):
            raise ConfigError(f"--export-rank {rank}: the ranking holds {len(plans)} plan(s); legal: 1 to {len(plans)} "
                              "(or --top N for a longer ranking)", field="export_rank", value=rank,
                              legal=[1, len(plans)])
        write_export(framework, plans[rank - 1], output, inputs)
        return True
    pick = safer_pick(plans)
    if pick is None:
        _roomy_alternative_note(framework, plans)
        return False
    k, _ = pick
    try:
        write_export(framework, plans[k - 1], output, inputs)
    except ConfigError:  # the framework cannot write it: the ranking order decides (#1 first)
        return False
    err_console.print(f"note: --export {framework}: #1 is a tight fit; wrote the safer pick #{k}, "
                      f"{plans[k - 1].parallel.short()} (note below); --export-rank 1 writes #1", highlight=False,
                      soft_wrap=True)
    return True


def _roomy_alternative_note(framework: str, plans: list) -> None:
    """When ``plan --export`` writes a tight #1 (:func:`shardplan.explain.tight_fit`) with no safer pick close enough
    to take instead (:func:`safer_pick`), name the fastest shown plan with headroom and its rank on stderr (a new
    user's Qwen3-30B-A3B torchtitan export on 16 H200 wrote a #1 with 0.4 GiB free while #4, 3.7% slower, had 29 GiB).
    """
    from shardplan.explain import headroom, tight_fit
    roomy = first_roomy(plans) if plans and tight_fit(plans[0]) else None
    if roomy is not None:
        i, e = roomy
        err_console.print(f"note: --export {framework}: #1 is a tight fit; the fastest plan with headroom is #{i}, "
                          f"{plans[0].tokens_per_s / e.tokens_per_s - 1:.1%} slower with {headroom(e) / 2**30:.1f} GiB "
                          f"free: --export-rank {i} writes it", highlight=False, soft_wrap=True)


def _export_winner(framework: str, plans: list, output: Optional[Path], inputs: Optional[dict] = None,
                   deeper: Optional[Callable[..., list]] = None, pins: Optional[dict] = None,
                   rank: Optional[int] = None) -> None:
    """``plan --export``: write the best ranked plan the framework can express as its config (before the
    ranking is printed, so that a refusal exits early); a note names the better plan it could not
    write. When none of the shown plans can be written, ``deeper()`` (a longer ranking) is tried, then
    ``deeper(exporter.search_pins)`` (a search with the fields the config writes at one value only pinned, where
    the user's ``pins`` leave them free: an MoE model's longer ranking can hold thousands of ep > 1 plans that
    EasyDeL cannot write).

    The request itself (framework, precision, -o) was checked before the search (:func:`_check_export_request`).

    Raises:
        ConfigError: no ranked plan expressible (the best plan's reason, exit code 2).
    """
    from shardplan.cli.export import write_export
    from shardplan.export import exporter
    name = exporter(framework, "export").name
    if not plans:
        raise negative(f"--export {framework}: no layout fits, nothing to export")
    if _export_chosen(framework, plans, output, inputs, rank):
        return
    first: ConfigError | None = None

    def rankings():  # the longer searches run only if no plan before them can be written
        yield plans, "ranked plan"
        if deeper:
            yield deeper(), "plan, from the longer ranking that keeps the options the search prunes as dominated,"
            free = {k: v for k, v in exporter(framework, "export").search_pins.items() if k not in (pins or {})}
            if free:
                shown = " ".join(f"{k}={v}" for k, v in free.items())
                yield deeper(free), f"plan, from a search with {shown} (what its config can write),"

    checked = 0
    last: ConfigError | None = None  # the refusal of the last ranking's best plan: the one the pins shaped most
    for ranking, what in rankings():
        for i, e in enumerate(ranking):
            try:
                write_export(framework, e, output, inputs)
            except ConfigError as err:
                first = first or err
                last = err if i == 0 else last
                continue
            if first is not None:
                slower = 1 - e.tokens_per_s / plans[0].tokens_per_s
                pace = f"predicted {slower:.1%} slower" if slower >= 5e-4 else "predicted as fast"
                err_console.print(f"note: --export {framework}: the best plan cannot be written: {first}; wrote "
                                  f"{what} #{checked + i + 1}, {e.parallel.short()}, {pace}", highlight=False,
                                  soft_wrap=True)
            return
        checked += len(ranking)
    assert first is not None
    first = last or first
    from shardplan.presets.frameworks import FRAMEWORKS
    given = (inputs or {}).get("framework")
    rank = f"rank with --framework {name}, or pin" if name in FRAMEWORKS and str(given or "megatron").lower() != name else "pin"
    raise ConfigError(f"{first} (none of the {checked} best ranked plans can be written as {name}: {rank} a "
                      f"layout the framework expresses with --fix or the layout flags)", field=first.field,
                      value=first.value, legal=first.legal)


def _longer_ranking(shown: list, *args, **kwargs) -> list:
    """``plan --export``'s longer ranking: :func:`shardplan.search.search` ``(*args, exhaustive=True, **kwargs)``
    without the plans
    already ``shown``. It keeps the options the dominance rules prune, which a framework may need (nanotron
    runs ZeRO-1 at most, and the search drops ZeRO-1 beside a ZeRO-2 layout as fast)."""
    from shardplan.search import search
    tried = {e.parallel.short() for e in shown}
    return [e for e in search(*args, exhaustive=True, **kwargs).plans if e.parallel.short() not in tried]


def _export_profile(export: Optional[str], framework: Optional[str], hardware: str,
                    precision: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """(framework, precision) of ``plan --export NAME``: without ``--framework``, NAME's own profile, as ``export --to
    NAME`` prices (:func:`shardplan.cli.export.target_profile` and :func:`shardplan.cli.export.target_precision`,
    with their notes); otherwise as given.

    Raises:
        ConfigError: an unknown export framework (exit code 2)."""
    if export is None:
        return framework, precision
    from shardplan.cli.export import target_precision, target_profile
    from shardplan.export import exporter
    name = exporter(export, "export").name
    return ((framework if framework is not None else target_profile(name, hardware, "--export")),
            target_precision(name, precision, "--export"))


def _check_export_request(export: str, output: Optional[Path], training, moe: bool = True, hardware=None) -> None:
    """``plan --export``'s bad input, before the search: an unknown framework, a precision or optimizer
    state it does not write, no -o file, or one that cannot be written.

    Raises:
        ConfigError: naming the option (exit code 2).
    """
    from shardplan.cli.common import check_output_path
    from shardplan.cli.export import TPU_EXPORTS
    from shardplan.export import exporter
    from shardplan.export.base import check_training
    name = exporter(export, "export").name
    if hardware is not None and hardware.kind == "tpu" and name not in TPU_EXPORTS:
        # first: a precision hint (--precision bf16-mixed) would lead to this refusal (a breaker followed it)
        raise ConfigError(f"--export {name} writes a config for a GPU framework, but hardware {hardware.name} is a TPU; "
                          f"legal --export for TPUs: {', '.join(TPU_EXPORTS)}", field="export", value=name,
                          legal=list(TPU_EXPORTS))
    check_training(training, exporter(export, "export"), moe, hardware)
    if output is None:
        raise ConfigError(f"--export {export} needs -o FILE (stdout carries the ranking)", field="output", value=None)
    check_output_path("-o/--output", output)


def _input_notes(m, tr, hardware, framework, precision, hw=None, attention=None, scale_up_size=None) -> None:
    """Notes on stderr about the inputs before the search: the framework a hardware file names, the precision the
    profile implies (or the fp16 policy ``hw``, a HardwareSpec without bf16, takes), the attention core on Volta, what
    the model's config.json holds that its count leaves out, what ``--scale-up-size`` leaves unchanged."""
    from shardplan.cli.common import (attention_note, fitted_precision_note, framework_note, precision_note,
                                      scale_up_size_note)
    from shardplan.cli.estimate import model_note
    framework_note(hardware, framework, tr.framework)
    precision_note(precision, tr.framework, hardware=hw, chosen=tr.precision.name)
    fitted_precision_note(hardware, tr.precision.name)
    scale_up_size_note(scale_up_size, hw)
    attention_note(attention, tr, hw)
    note = model_note(m, tr.seq_len)
    if note:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    if m.is_moe:  # what estimate's summary row says; the ranking's numbers rest on it too (a new user missed it)
        err_console.print(f"[yellow]note:[/] {escape(moe_load_note(tr))}", highlight=False, soft_wrap=True)


def moe_load_note(tr) -> str:
    """How the search prices the experts' load (``TrainingSpec.moe_load``): balanced dropless routing, the given
    imbalance, or token dropping at the capacity factor, and the flags that change it."""
    if tr.moe_capacity_factor is not None:
        return (f"MoE: token dropping at capacity factor {tr.moe_capacity_factor:g} (the busiest expert rank handles "
                f"{tr.moe_capacity_factor:g}x the balanced share)")
    if tr.moe_imbalance > 1:
        return (f"MoE: dropless routing with the busiest expert rank at {tr.moe_imbalance:g}x the balanced share "
                "(--moe-imbalance)")
    return ("MoE: priced with balanced dropless routing (every expert rank handles top_k / n_experts of the tokens, as "
            "with auxiliary-loss balancing); --moe-imbalance X prices a busier expert rank, --moe-capacity-factor "
            "token dropping")


#: layout fields that only act inside a pipeline (pp > 1)
PIPELINE_ONLY_PINS = ("schedule", "virtual_stages", "pipeline_flushes", "pp_layers")


def _inert_pins_note(pins: dict, schedules: list[str] | None, plans: list) -> None:
    """Print on stderr a note for pinned pipeline fields (:data:`PIPELINE_ONLY_PINS`, or --schedule) when no ranked
    plan pipelines: the pin changed none of them (breaker pass 53c: ``--fix schedule=interleaved`` exited 0 silently
    with every winner at pp = 1, while estimate refuses the same pin without a pipeline)."""
    pinned = [f"{k}={pins[k]}" for k in PIPELINE_ONLY_PINS if k in pins] + [f"schedule={s}" for s in schedules or ()
                                                                           if "schedule" not in pins]
    if pinned and plans and all(e.parallel.pp == 1 for e in plans):
        err_console.print(f"[yellow]note:[/] {escape(', '.join(pinned))} pinned, but no ranked plan pipelines (pp = 1 "
                          "in each): the pin changes none of them; pin pp too (e.g. --fix pp=2) to rank pipelined "
                          "layouts", highlight=False, soft_wrap=True)


def _note_unreleased(framework, schedules: list[str]) -> None:
    """Print on stderr the note for asked-for schedules the framework's released code does not run
    (:func:`shardplan.cli.estimate.unreleased_schedule_note`)."""
    from shardplan.cli.estimate import unreleased_schedule_note
    note = unreleased_schedule_note(framework, schedules)
    if note:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)


@app.command()
@config_errors
@layout_flags(repeatable=("schedule",), show_defaults=False)
def plan(model: ModelOpt, hardware: HardwareOpt, devices: DevicesOpt, seq_len: SeqOpt, global_batch: BatchOpt = None,
         global_batch_tokens: BatchTokOpt = None, precision: PrecisionOpt = None, attention: AttnOpt = None,
         framework: FrameworkOpt = None, dropout: DropoutOpt = False,
             optimizer_dtype: OptimizerDtypeOpt = None,
             moe_capacity_factor: MoeCapOpt = None, moe_imbalance: MoeImbOpt = 1.0,
             moe_routing: MoeRoutingOpt = "uniform", scale_up_size: ScaleUpOpt = None,
             top: TopOpt = 5, distinct: DistinctOpt = False,
         objective: ObjectiveOpt = "throughput",
         fix: FixOpt = None, max_tp: MaxTpOpt = None, show_infeasible: InfeasibleOpt = False,
         exhaustive: ExhaustiveOpt = False, json_out: JsonOpt = False, export: ExportOpt = None,
         output: ExportOutOpt = None, export_rank: ExportRankOpt = None, min_headroom: MinHeadroomOpt = 0.0,
         layout: dict = None) -> None:
    """Search every valid layout, rank by predicted tokens/s, and explain the choice.

    A layout flag (e.g. --tp 8) keeps that field at the value given; --schedule may be repeated to
    allow several schedules; --export FRAMEWORK -o FILE writes the best ranked plan that framework
    expresses as its config."""
    from shardplan.inputs import build_inputs
    from shardplan.search import search

    framework, precision = _export_profile(export, framework, hardware, precision)
    m, hw, tr, _ = build_inputs(model=model, hardware=hardware, devices=devices, seq_len=seq_len,
                                global_batch=global_batch, global_batch_tokens=global_batch_tokens,
                                precision=precision, attention=attention, framework=framework, dropout=dropout,
                                optimizer_dtype=optimizer_dtype,
                                moe_capacity_factor=moe_capacity_factor, moe_imbalance=moe_imbalance,
                                moe_routing=moe_routing, scale_up_size=scale_up_size, search=True)
    _input_notes(m, tr, hardware, framework, precision, hw, attention, scale_up_size)
    _check_plan_flags(top, max_tp, export, output, export_rank, (min_headroom, hw.hbm_bytes))
    if export is not None:
        _check_export_request(export, output, tr, m.is_moe, hw)
    pins, schedules = search_pins(fix, layout)
    _note_unreleased(tr.framework, [*(schedules or ()), *([pins["schedule"]] if "schedule" in pins else [])])
    from shardplan.cli.common import progress_bar
    with progress_bar("search") as update:  # degree sets, then (exhaustive) every estimate
        res = search(m, hw, tr, devices, top_k=distinct_pool(top) if distinct else top, objective=objective, fix=pins,
                     max_tp=max_tp, schedules=schedules, exhaustive=exhaustive, keep_infeasible=show_infeasible,
                     progress=update, min_headroom_bytes=min_headroom * 2**30)
        res = distinct_plans(res, top) if distinct else res
        best = res.plans[0] if res.plans else None
        if export is not None and res.plans:  # with nothing that fits, the advice below says why (nothing written)
            def deeper(pinned: dict | None = None) -> list:  # a longer ranking, when no shown plan can be written
                return _longer_ranking(res.plans, m, hw, tr, devices, top_k=max(2000, top), objective=objective,
                                       fix={**(pinned or {}), **pins}, max_tp=max_tp, schedules=schedules)
            _export_winner(export, res.plans, output, dict(model=model, hardware=hardware, framework=framework,
                                                           scale_up_size=scale_up_size), deeper, pins, export_rank)
        rules = _rule_results(m, hw, tr, devices, best, pins) if best else []
    if json_out:
        print(json.dumps(_plan_json(res, best, rules, show_infeasible, objective), indent=1))
    else:
        _print_plans(res, m, hw, tr, devices, rules, show_infeasible, objective)
        _pinned_offload_note(m, hw, tr, devices, pins, best, objective, max_tp, schedules)
        from shardplan.cli.common import fitted_overlap_note
        fitted_overlap_note(hardware, best.parallel if best else None, "the best plan")
    _inert_pins_note(pins, schedules, res.plans)
    if best is None:
        raise negative(_nothing_fits(res, m, hw, tr, devices, pins, objective, max_tp, schedules, export,
                                     show_infeasible))


def distinct_pool(top: int) -> int:
    """Plans ``plan --distinct`` asks the search for, to keep ``top`` distinct degree sets among them (a layout has
    tens of variants: schedules, virtual stages, microbatch sizes, recompute, overlap)."""
    return min(10_000, max(200, 50 * top))


def distinct_plans(res, top: int):
    """``res`` with its plans cut to the best of each distinct (dp, tp, pp, cp, ep, ZeRO stage), at most ``top`` of
    them, in rank order (new-user pass 58: the top 5 of a 70B plan were one layout with v = 8, 5, 4, 2 and 1F1B,
    within 0.3% of each other)."""
    from dataclasses import replace
    seen, kept = set(), []
    for e in res.plans:
        p = e.parallel
        key = (p.dp, p.tp, p.pp, p.cp, p.ep, p.zero_stage)
        if key not in seen:
            seen.add(key)
            kept.append(e)
        if len(kept) == top:
            break
    return replace(res, plans=kept)


def _check_plan_flags(top: int, max_tp: Optional[int], export: Optional[str], output: Optional[Path],
                      export_rank: Optional[int], headroom: tuple[float, float] = (0.0, 1.0)) -> None:
    """``plan``'s own flags in range (``headroom``: --min-headroom in GiB and the device's HBM in bytes, which it
    must stay below), and -o / --export-rank only with --export.

    Raises:
        ConfigError: naming the flag."""
    from shardplan import limits
    limits.check_range("--top", top, 1, 10_000)
    limits.check_range("--min-headroom", headroom[0], 0.0, round(headroom[1] / 2**30, 2), "GiB")
    if max_tp is not None:
        limits.check_range("--max-tp", max_tp, 1, limits.MAX_DEVICES)
    if output is not None and export is None:
        raise ConfigError("-o/--output is the file of --export; give --export FRAMEWORK (the ranking goes to stdout)",
                          field="output", value=str(output))
    if export_rank is not None and export is None:
        raise ConfigError(f"--export-rank {export_rank} chooses the plan --export writes; give --export FRAMEWORK",
                          field="export_rank", value=export_rank)


def _pinned_offload_note(m, hw, tr, devices: int, pins: dict[str, Any], best, objective: str, max_tp,
                         schedules) -> None:
    """With ``--offload-optimizer`` (or ``--offload-params``) given, say on stderr when the best layout without the
    offloads fits and is faster (a second search, offloads off): the flag forces the offload on every ranked layout,
    and a new user read it as "allow". Nothing when no plan was found or the objective is not throughput."""
    offloads = [k for k in ("offload_optimizer", "offload_params", "nvme_offload") if pins.get(k)]
    if best is None or not offloads or objective != "throughput":
        return
    from shardplan.search import search
    kept = {k: v for k, v in pins.items() if k not in offloads}
    try:
        alt = search(m, hw, tr, devices, top_k=1, objective=objective, fix=kept, max_tp=max_tp, schedules=schedules)
    except ConfigError:
        return
    if alt.plans and alt.plans[0].tokens_per_s > best.tokens_per_s:
        e = alt.plans[0]
        flags = " ".join("--" + k.replace("_", "-") for k in offloads)
        err_console.print(f"[yellow]note:[/] {flags} puts every ranked layout's state in host memory; without it the "
                          f"best layout fits and runs {e.tokens_per_s / best.tokens_per_s - 1:.0%} faster: "
                          f"{e.parallel.short()} ({e.tokens_per_s / e.layout.n_devices:,.0f} tokens/s per device, "
                          f"{e.memory.total / 2**30:,.1f} GiB)", highlight=False, soft_wrap=True)


def _nothing_fits(res, m, hw, tr, devices: int, pins: dict[str, Any], objective: str, max_tp, schedules,
                  export: str | None, show_infeasible: bool) -> str:
    """The message of a search with no layout that fits (exit 1): what was tried, the offloaded layout that fits
    (:func:`_offload_advice`), what else could help (:func:`_no_fit_advice`), and --show-infeasible."""
    hint = "" if show_infeasible else "; --show-infeasible shows how far over the nearest layouts are"
    offload = _offload_advice(m, hw, tr, devices, pins, objective, max_tp, schedules, export)
    written = f"--export {export}: nothing written; " if export is not None else ""
    if res.host_memory_failure and res.n_host_refused == res.n_layouts:  # host memory, not HBM, refused every one
        return f"{written}no layout fits ({res.n_layouts:,} layouts tried): {res.host_memory_failure}"
    host = (f", {res.n_host_refused:,} of them for host memory ({res.host_memory_failure})"
            if res.host_memory_failure else "")
    return (f"{written}no layout fits in {fit_limit_text(hw.hbm_bytes, tr.framework)} per device ({res.n_layouts:,} "
            f"layouts tried{host}); {offload}{_no_fit_advice(m, hw, tr, devices, pins, offload_named=bool(offload))}"
            f"{hint}")


def _offload_advice(m, hw, tr, devices: int, pins: dict[str, Any], objective: str, max_tp, schedules,
                    export: str | None = None) -> str:
    """When no layout fits: the best layout with the optimizer offloaded to the host (``--offload-optimizer``, a second
    search pinned to it; the host update priced with the profile's ``host_adam_params_per_s``), as "with
    --offload-optimizer the best layout fits: ...; ", or "" (already pinned, no host link, none fits that way either,
    or ``export``'s config cannot write it). A new user found `plan` advising a smaller batch that could not help where
    `estimate` named this."""
    from shardplan.search import search
    if pins.get("offload_optimizer") or not hw.host_bandwidth:
        return ""
    try:
        res = search(m, hw, tr, devices, top_k=1, objective=objective, fix={**pins, "offload_optimizer": True},
                     max_tp=max_tp, schedules=schedules)
    except ConfigError:  # the profile offloads with none of the pinned values
        return ""
    if not res.plans:  # an offload the hosts cannot hold is named as such, not offered (_no_fit_advice)
        return (f"--offload-optimizer does not help: {res.host_memory_failure}; " if res.host_memory_failure
                and res.n_host_refused == res.n_layouts else "")
    e = res.plans[0]
    if export is not None:
        from shardplan.cli.export import expressible
        from shardplan.export import exporter
        if not expressible(exporter(export).name, e):
            return ""
    return (f"with --offload-optimizer the best layout fits: {e.parallel.short()} ({e.memory.total / 2**30:,.2f} GiB; "
            f"step {fmt_seconds(e.step_s)}, {e.tokens_per_s / devices:,.0f} tokens/s per device); otherwise ")


def _no_fit_advice(m, hw, tr, devices: int, pins: dict[str, Any] | None = None, offload_named: bool = False) -> str:
    """What could make a layout fit: when the model state alone (every parameter's weights, gradients, master copy and
    optimizer moments, ``PrecisionPolicy.model_state_bytes_per_param``: 2 + 2 + 4 + 8 = 16 B under bf16 mixed
    precision with Adam, Rajbhandari et al. 2020 (ZeRO) Sec. 3.1; sharded over all ``devices``) is over the
    profile's HBM limit, a smaller batch cannot help: the devices needed for that state alone, or optimizer offload;
    else more devices or a smaller batch. With an offload pinned the host's part leaves the count: the master copy and
    moments under ``offload_optimizer``, the parameters under ``offload_params`` (Ren et al. 2021, ZeRO-Offload
    Sec. 4: the fp32 optimizer state on the CPU, the 16-bit parameters on the GPU). With ``pins`` that shard the state less (a ZeRO stage below 3, a dp_shard,
    per-step gathers) the sharding they rule out is named instead of a device count. ``offload_named``: the message
    already gives the offloaded layout (:func:`_offload_advice`), so the device count stands alone."""
    from shardplan.cost.memory import hbm_limit
    pins = pins or {}
    prec = tr.precision
    per_param = prec.model_state_bytes_per_param
    if pins.get("offload_optimizer"):  # the master copy and the moments live on the host (ZeRO-Offload)
        per_param -= prec.master_bytes + prec.optimizer_bytes
    if pins.get("offload_params"):  # the parameter shards too: the device holds what one layer's gathers need
        per_param -= prec.param_bytes
    state = m.n_params * per_param
    limit = hbm_limit(hw.hbm_bytes, tr.framework)
    less = [f"{k}={pins[k]}" for k in ("zero_stage", "dp_shard", "zero3_gather")
            if k in pins and (k != "zero_stage" or pins[k] < 3) and (k != "zero3_gather" or pins[k] == "per_step")]
    if less:
        return (f"more devices, a smaller batch, or leaving out {', '.join(less)} (which keeps more of the model state "
                "on each device) may help")
    if state / devices <= limit:
        return "more devices or a smaller batch may help"
    need = math.ceil(state / limit)
    what = ("weight and gradient (the optimizer state offloaded)" if pins.get("offload_optimizer")
            else "weight, gradient and optimizer moment")
    offer = ("" if offload_named or pins.get("offload_optimizer") and pins.get("offload_params") else
             ", or --offload-params where the framework offers it" if pins.get("offload_optimizer") else
             ", or --offload-optimizer where the framework offers it")
    return (f"the model state alone is {state / devices / 2**30:,.1f} GiB per device with every {what} sharded over "
            f"all {devices:,} devices (ZeRO-3), so a smaller batch cannot help: at least {need:,} devices of this "
            f"memory for that state alone{offer}")


DevicesListOpt = Annotated[Optional[list[int]], typer.Option("--devices", "-n", help="device counts (repeat)")]
ModelsListOpt = Annotated[Optional[list[str]], typer.Option("--model", "-m", help="models (repeat)")]
GuideTokensOpt = Annotated[int, typer.Option(help="tokens per step (raised to >= 1 sequence per device)")]
MarkdownOpt = Annotated[Optional[Path], typer.Option("--markdown", help="also write a Markdown page")]


@app.command()
@config_errors
def guide(hardware: HardwareOpt = "h100-sxm", devices: DevicesListOpt = None, models: ModelsListOpt = None,
          seq_len: SeqOpt = 8192, global_batch_tokens: GuideTokensOpt = 4 * 2**20,
          markdown: MarkdownOpt = None, framework: FrameworkOpt = None) -> None:
    """Best layout for typical model sizes and cluster sizes, beside common rules of thumb.

    Columns: DP crit. = tokens per data-parallel rank (one model replica of tp x pp devices, so the figure grows
    with the best layout's tp) below which DP/FSDP gradient traffic outweighs compute (C / W of the link the group
    crosses); max TP = largest tp whose activation traffic still
    hides behind its matmuls (F * W_scale-up / C), both from the Scaling Book."""
    from shardplan import limits
    from shardplan.guide_table import guide_rows, rows_to_markdown
    check_output_path("--markdown", markdown)  # before the guide is computed
    for n in devices or []:
        limits.check_range("devices", n, 1, limits.MAX_DEVICES)
    limits.check_range("seq_len", seq_len, 1, limits.MAX_SEQ_LEN, "tokens")
    limits.check_range("global_batch_tokens", global_batch_tokens, 1, limits.MAX_BATCH_TOKENS, "tokens")
    from shardplan.cli.common import framework_note, precision_note, hardware_file_notes
    from shardplan.inputs import default_framework
    from shardplan.presets.frameworks import framework_profile
    profile = framework_profile(framework) if framework else default_framework(hardware)
    if profile is not None:  # --framework, or a hardware file's framework section, prices the rows
        from shardplan.inputs import check_framework_device, hardware_spec
        check_framework_device(profile, hardware_spec(hardware))  # as estimate: megatron on a TPU is bad input
        framework_note(hardware, framework, profile)  # with the smoke note
        precision_note(None, profile, overridable=False)
    else:
        hardware_file_notes(hardware)
    from shardplan.cli.common import progress_bar
    with progress_bar("guide") as update:  # rows take seconds each
        rows = guide_rows(hardware, models or None, devices or None, seq_len, global_batch_tokens, progress=update,
                          framework=framework)
    _check_rows_valid(rows)
    from shardplan.loaders import load_hardware
    t = Table(title=f"best layouts on {escape(load_hardware(hardware).name)}, seq {seq_len}")
    for col in ("model", "devices", "batch tokens", "best layout", "MFU", "tok/s/dev", "bound", "DP crit. tok/dp rank",
                "max TP", "rule of thumb", "rule vs best"):
        t.add_column(col)
    for r in rows:  # the batch: --global-batch-tokens, raised to one sequence per device where that is more ("*"
        # is taken: it marks an MFU above the best published)
        raised = " (raised)" if r["batch_tokens"] > global_batch_tokens else ""
        t.add_row(r["model"], str(r["devices"]), f"{r['batch_tokens']:,}{raised}", r["best"], r["mfu"], r["tps"],
                  r["bound"], r["critical"], r["max_tp"], r["rule"], r["rule_delta"])
    console.print(t)
    if any(r["batch_tokens"] > global_batch_tokens for r in rows):
        console.print(f"batch tokens (raised): from --global-batch-tokens {global_batch_tokens:,} to one sequence of "
                      f"{seq_len:,} tokens per device", highlight=False, markup=False)
    ceiling = next((r["ceiling"] for r in rows if r.get("ceiling")), "")
    if ceiling:
        console.print(f"* above the best MFU published on this chip and precision ({ceiling}): an upper bound, "
                      "every collective assumed hidden behind tuned kernels", highlight=False, markup=False)
    if markdown:
        markdown.write_text(rows_to_markdown(rows, hardware, seq_len))
        console.print(f"wrote {markdown}")
    if rows and all(r["best"] == "nothing fits" for r in rows):  # as plan: a negative result is exit code 1
        from shardplan.cli.common import EXIT_NEGATIVE, err_console
        err_console.print("result: no layout fits for any row (try more devices, a shorter --seq-len, or hardware with "
                          "more memory)", highlight=False)
        raise typer.Exit(EXIT_NEGATIVE)
