"""``shardplan plan`` (ranked search with explanations) and ``shardplan guide`` (rules of thumb,
quantified)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from shardplan import cli as C


def _rule_results(model, hw, training, n, best, user_fix):
    """Evaluate each applicable rule of thumb as a constrained search; returns rows of dicts."""
    from shardplan.errors import ConfigError
    from shardplan.explain import rules_of_thumb
    from shardplan.search import search

    out = []
    for rule in rules_of_thumb(model.n_params, n, training.seq_len, model.is_moe, hw.kind):
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
                    "note": "agrees with the best plan" if abs(delta) < 0.01 else f"{delta:+.1%} tokens/s vs best"})
    return out


def register(app: typer.Typer) -> None:
    """Add the ``plan`` and ``guide`` commands to the main CLI."""

    @app.command()
    @C.config_errors
    def plan(model: C.ModelOpt, hardware: C.HardwareOpt, devices: C.DevicesOpt, seq_len: C.SeqOpt,
             global_batch: C.BatchOpt = None, global_batch_tokens: C.BatchTokOpt = None,
             precision: C.PrecisionOpt = "bf16-mixed", attention: C.AttnOpt = "flash",
             scale_up_size: C.ScaleUpOpt = None,
             top: Annotated[int, typer.Option("--top", help="plans to show")] = 5,
             objective: Annotated[str, typer.Option(help="throughput | memory")] = "throughput",
             fix: Annotated[Optional[list[str]], typer.Option("--fix", help="pin a field, e.g. --fix tp=8")] = None,
             max_tp: Annotated[Optional[int], typer.Option("--max-tp", help="largest tp to consider")] = None,
             schedule: Annotated[Optional[list[str]], typer.Option("--schedule", help="allowed schedules")] = None,
             show_infeasible: Annotated[bool, typer.Option("--show-infeasible",
                                                           help="also list the closest layouts that do not fit")] = False,
             exhaustive: Annotated[bool, typer.Option(help="also evaluate dominated options")] = False,
             json_out: C.JsonOpt = False) -> None:
        """Search every valid layout, rank by predicted tokens/s, and explain the choice."""
        from shardplan.explain import compare, describe
        from shardplan.search import parse_fix, search

        m, hw, tr, _ = C.build_inputs(model=model, hardware=hardware, devices=devices, seq_len=seq_len,
                                      global_batch=global_batch, global_batch_tokens=global_batch_tokens,
                                      precision=precision, attention=attention, scale_up_size=scale_up_size)
        if top < 1:
            raise C.ConfigError(f"--top {top} must be >= 1", field="top", value=top)
        if max_tp is not None and max_tp < 1:
            raise C.ConfigError(f"--max-tp {max_tp} must be >= 1", field="max_tp", value=max_tp)
        fixed = parse_fix(fix or [])
        res = search(m, hw, tr, devices, top_k=top, objective=objective, fix=fixed, max_tp=max_tp,
                     schedules=schedule, exhaustive=exhaustive, keep_infeasible=show_infeasible)
        best = res.plans[0] if res.plans else None
        rules = _rule_results(m, hw, tr, devices, best, fixed) if best else []
        if json_out:
            plans = []
            for i, e in enumerate(res.plans):
                d = e.to_dict()
                d["rank"] = i + 1
                d["explanation"] = describe(e) if i == 0 else compare(best, e)
                plans.append(d)
            out = {"plans": plans, "search": {"layouts": res.n_layouts, "invalid": res.n_invalid,
                                              "equivalent_not_shown": res.n_equivalent, "seconds": res.seconds},
                   "rules_of_thumb": rules}
            if show_infeasible:
                out["infeasible"] = [dict(e.to_dict(), explanation=describe(e)) for e in res.infeasible]
            print(json.dumps(out, indent=1))
            return
        if not res.plans:
            hint = "" if show_infeasible else "; use --show-infeasible to see the closest ones"
            C.err_console.print(f"[bold red]no layout fits[/] in {hw.hbm_bytes / 2**30:.0f} GiB per device "
                                f"({res.n_layouts:,} layouts tried){hint}")
        t = Table(title=f"{m.name} on {devices} x {hw.name}, seq {tr.seq_len}, batch {tr.global_batch_size} "
                        f"sequences: {res.n_layouts:,} layouts in {res.seconds:.2f} s"
                        + (f" ({res.n_equivalent:,} with identical predictions not shown)" if res.n_equivalent else ""))
        for col in ("#", "layout", "tokens/s/device", "MFU", "step", "memory GiB", "bound"):
            t.add_column(col, justify="right" if col in ("#", "tokens/s/device", "MFU", "step", "memory GiB") else "left")
        for i, e in enumerate(res.plans):  # noqa: B007
            t.add_row(str(i + 1), e.parallel.short(), f"{e.tokens_per_s / devices:,.0f}", f"{e.mfu:.1%}",
                      C._fmt_s(e.step_s), f"{e.memory.total / 2**30:,.1f}", e.bound)
        if res.plans:
            C.console.print(t)
        for i, e in enumerate(res.plans):
            C.console.print(f"[bold]#{i + 1}[/] " + (describe(e) if i == 0 else compare(best, e)), highlight=False)
        if rules:
            rt = Table(title="rules of thumb evaluated by the planner")
            for col in ("source", "rule", "best layout under the rule", "verdict"):
                rt.add_column(col)
            for r in rules:
                rt.add_row(r["source"], r["rule"], r["plan"] or "-", r["note"])
            C.console.print(rt)
        if show_infeasible and res.infeasible:
            it = Table(title="closest layouts that do not fit")
            for col in ("layout", "memory GiB", "over by GiB"):
                it.add_column(col)
            for e in res.infeasible:
                it.add_row(e.parallel.short(), f"{e.memory.total / 2**30:,.1f}",
                           f"{(e.memory.total - hw.hbm_bytes) / 2**30:,.1f}")
            C.console.print(it)

    @app.command()
    @C.config_errors
    def guide(hardware: C.HardwareOpt = "h100-sxm",
              devices: Annotated[Optional[list[int]], typer.Option("--devices", "-n", help="device counts (repeat)")] = None,
              models: Annotated[Optional[list[str]], typer.Option("--model", "-m", help="models (repeat)")] = None,
              seq_len: C.SeqOpt = 8192,
              global_batch_tokens: Annotated[int, typer.Option(help="tokens per step (raised to >= 1 "
                                                                    "sequence per device)")] = 4 * 2**20,
              markdown: Annotated[Optional[Path], typer.Option("--markdown", help="also write a Markdown page")] = None
              ) -> None:
        """Best layout for typical model sizes and cluster sizes, beside common rules of thumb.

        Columns: DP crit. = tokens per data-parallel rank below which DP/FSDP gradient traffic outweighs
        compute (C / W of the link the group crosses); max TP = largest tp whose activation traffic still
        hides behind its matmuls (F * W_scale-up / C), both from the Scaling Book."""
        from shardplan.guide_table import guide_rows, rows_to_markdown
        for n in devices or []:
            if n < 1:
                raise C.ConfigError(f"--devices {n} must be >= 1", field="devices", value=n)
        if seq_len < 1:
            raise C.ConfigError(f"--seq-len {seq_len} must be >= 1", field="seq_len", value=seq_len)
        rows = guide_rows(hardware, models or None, devices or None, seq_len, global_batch_tokens)
        t = Table(title=f"best layouts on {hardware}, seq {seq_len}")
        for col in ("model", "devices", "best layout", "MFU", "tok/s/dev", "bound", "DP crit.", "max TP",
                    "rule of thumb", "rule vs best"):
            t.add_column(col)
        for r in rows:
            t.add_row(r["model"], str(r["devices"]), r["best"], r["mfu"], r["tps"], r["bound"], r["critical"],
                      r["max_tp"], r["rule"], r["rule_delta"])
        C.console.print(t)
        if markdown:
            markdown.write_text(rows_to_markdown(rows, hardware, seq_len))
            C.console.print(f"wrote {markdown}")
