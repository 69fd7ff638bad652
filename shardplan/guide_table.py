"""The "rules of thumb, quantified" table: best layout per model size and device count, the
roofline thresholds, and the seeds' recommendation evaluated by the same cost model."""

from __future__ import annotations

from collections.abc import Callable

from shardplan.errors import ConfigError
from shardplan.explain import rules_of_thumb
from shardplan.loaders import load_hardware, load_model
from shardplan.search import search
from shardplan.specs.training import TrainingSpec, precision_policy

DEFAULT_MODELS = ["llama-3.2-1b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b"]
DEFAULT_DEVICES = {"gpu": [8, 64, 512, 1024, 8192], "tpu": [64, 256, 1024, 4096, 8192]}


#: the columns of a row without a plan
_EMPTY = ("mfu", "tps", "bound", "critical", "max_tp", "rule", "rule_delta")


def _training_defaults(hardware: str, hw, framework: str | None = None) -> dict:
    """TrainingSpec fields the guide's rows share: the ``framework`` profile (a name, ``NAME+field=value`` or a profile
    file), else a hardware file's, with that profile's own precision where it has one (MaxText: fp32-params), as
    estimate and plan price it; on hardware without bf16 (V100, a HardwareSpec ``hw``) its fp16 counterpart and the
    unfused attention Volta runs (shardplan.inputs.build_inputs).

    Raises:
        ConfigError: an unknown framework (from :func:`shardplan.presets.frameworks.framework_profile`)."""
    from shardplan.inputs import default_framework, fp16_counterpart
    from shardplan.presets.frameworks import framework_profile
    profile = framework_profile(framework) if framework else default_framework(hardware)
    default = (profile.default_precision if profile is not None else None) or "bf16-mixed"
    spec = {"precision": precision_policy(fp16_counterpart(hw, default) or default)}
    if profile is not None:
        spec["framework"] = profile
    if hw.compute_arch == "volta":
        spec["attention"] = "naive"
    return spec


def guide_rows(hardware: str, models: list[str] | None, devices: list[int] | None, seq_len: int,
               global_batch_tokens: int, progress: Callable[[int, int, str], None] | None = None,
               framework: str | None = None) -> list[dict]:
    """One row per (model, device count): best plan, MFU, bound, thresholds, rule of thumb verdict.

    The batch is ``max(global_batch_tokens, devices * seq_len)`` tokens (at least one sequence per
    device). ``progress(done, total, label)`` is called before each row. The ``framework`` profile, else a hardware
    file's ``framework:`` profile (the one it was calibrated with), prices the rows, as in ``estimate`` and ``plan``
    (new-user pass 55: DeepSpeed users saw Megatron-LM's interleaved pipelines). Raises ConfigError for unknown model,
    hardware or framework names.
    """
    hw = load_hardware(hardware)
    spec = _training_defaults(hardware, hw, framework)
    rows = []
    names, counts = models or DEFAULT_MODELS, devices or DEFAULT_DEVICES[hw.kind]
    for name in names:
        m = load_model(name)
        for n in counts:
            if progress is not None:
                progress(len(rows), len(names) * len(counts), f"{name} on {n}")
            tokens = max(global_batch_tokens, n * seq_len)
            tr = TrainingSpec.from_tokens(seq_len, tokens // seq_len * seq_len, **spec)
            row = {"model": name, "devices": n, "batch_tokens": tokens}
            try:
                res = search(m, hw, tr, n, top_k=1)
            except ConfigError as e:
                res, row["best"] = None, f"invalid: {e}"
            if res is None or not res.plans:
                rows.append({"best": "nothing fits", **row, **dict.fromkeys(_EMPTY, "-")})
                continue
            best = res.plans[0]
            th = best.thresholds
            rule_txt, delta = "-", "-"
            rules = rules_of_thumb(m.n_params, n, seq_len, m.is_moe, hw.kind, tr.framework, hw.scale_up_size)
            if rules:
                # long sequences: show the sequence rule (SP / CP), otherwise the size / cluster rule
                rule = rules[-1] if seq_len >= 32768 else rules[0]
                rule_txt = f"{rule.text} ({rule.source})"
                try:
                    rr = search(m, hw, tr, n, top_k=1, fix=rule.fix)
                    if rr.plans:
                        d = rr.plans[0].tokens_per_s / best.tokens_per_s - 1
                        delta = "same as best" if abs(d) < 0.005 else f"{d:+.1%} ({rr.plans[0].parallel.short()})"
                    else:
                        delta = "does not fit"
                except ConfigError:
                    delta = "not valid"
            from shardplan.calibration import mfu_ceiling, optimism_note  # late: reads the published runs
            above = optimism_note(best) is not None
            ceiling = mfu_ceiling(best) if above else None
            rows.append({**row, "best": best.parallel.short(), "mfu": f"{best.mfu:.1%}" + (" *" if above else ""),
                         "ceiling": f"{ceiling[0]:.1%}, {ceiling[1]}" if ceiling else "",
                         "tps": f"{best.tokens_per_s / n:,.0f}", "bound": best.bound,
                         "critical": f"{th['critical_tokens_per_dp_rank']:,.0f} ({th['dp_level']})",
                         "max_tp": f"{th['max_compute_bound_tp']:.1f}", "rule": rule_txt, "rule_delta": delta})
    return rows


def rows_to_markdown(rows: list[dict], hardware: str, seq_len: int) -> str:
    """Markdown table of :func:`guide_rows`."""
    out = [f"## {hardware}, seq_len {seq_len}\n",
           "| model | devices | batch tokens | best layout | MFU | tokens/s/device | bound | critical tokens per "
           "DP rank | largest compute-bound TP | rule of thumb | rule vs best |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mfu = r["mfu"].replace("*", "\\*")  # Markdown: a literal asterisk
        out.append(f"| {r['model']} | {r['devices']} | {r['batch_tokens']:,} | `{r['best']}` | {mfu} | {r['tps']} "
                   f"| {r['bound']} | {r['critical']} | {r['max_tp']} | {r['rule']} | {r['rule_delta']} |")
    ceiling = next((r["ceiling"] for r in rows if r.get("ceiling")), "")
    if ceiling:
        out.append(f"\n\\* above the best MFU published on this chip and precision ({ceiling}, in the planner's MFU "
                   "definition): the prediction assumes every collective hidden behind tuned kernels; read it as an "
                   "upper bound (docs/accuracy.md, search vs the published layout).")
    return "\n".join(out) + "\n"
