"""The playbook's raw benchmark table: which nanotron build each grid run used, why each failed run failed, and
the unit of its memory column -- and the grid scored with that knowledge.

``benchmarks/usp_raw/runs.csv`` is a column subset of the Ultra-Scale Playbook's raw nanotron benchmark table
(``bench_final2_mfu2.csv``, 4,104 runs, as the RAPID-LLM project stores it: repository eyao600/Rapid-LLM, path
``validation_scripts/huggingface_data/bench_final2_mfu2.csv``, commit d6e2fc37d54a3f1dcd9b9eded96c9739392e3da6),
transcribed by eight helpers, one offset range each (``benchmarks/usp_raw/README.md``). Beside what the plotted grids
give, each row has nanotron's own log columns: ``status`` (Success / OOM / Other), ``oom_error``, the run's measured
bus bandwidths, ``Mem Res (GB)`` = ``torch.cuda.max_memory_reserved() / 1024**3`` (nanotron ``helpers.py``
``create_table_log``: GiB, although the column says GB) and ``after_pp_fix``: whether the run used the nanotron build
after the playbook team's pipeline-parallel fix.

What this script shows (``python benchmarks/usp_versions.py [--lomo] [--doc docs/calibration.md]``):

* the join: every run that ran in the shared 1B / 8B grid and the 3B / 80B grid matches exactly one Success row
  (same layout, tokens/s within 1) whose ``Mem Res`` equals ``gpu_mem_gb`` to 0.05 -- so ``gpu_mem_gb`` is GiB;
  every failed run matches raw rows that say whether it ran out of memory;
* the stalls the profile's triggers describe are the pre-fix build's: pipelined runs on 2+ nodes stall when
  ``after_pp_fix`` is False and, with few exceptions, not when it is True;
* the grid scored with each run's build (:func:`versioned`): post-fix runs without any stall, pre-fix runs with the
  stall on every pipeline that spans nodes, and fit/OOM classification over the runs that ran or ran out of memory.
  ``--lomo`` fits the constants that way (:func:`fit_versioned`) on each model of the shared grid and scores the
  other (about 2 minutes);
* the unpipelined runs on 16+ nodes by the AllReduce bandwidth their job measured at start (:func:`network_table`);
* the 7 runs of a 469B that only the raw table has, scored with the shipped cluster file (:func:`raw_only_table`).

``--doc`` rewrites only the block between ``<!-- usp-versions:start -->`` and ``<!-- usp-versions:end -->``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter, defaultdict
from pathlib import Path

from usp_grid import (DEFAULT_CSV, DEFAULT_HW, FIT_PARAMS, MAX_NFEV, GridRun, check_marked_doc, measured_peak,
                      memory_terms, oom_fraction, predict, publish, report, run_script, score, stall_free, stalled,
                      throughput)
from usp_heldout import HELDOUT_CSV
from shardplan.errors import ConfigError
from shardplan.fitting import apply, fit
from shardplan.inputs import default_framework
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.specs.framework import PP_STALL_TRIGGERS, FrameworkProfile
from shardplan.specs.hardware import HardwareSpec

RAW_CSV = Path(__file__).resolve().parent / "usp_raw" / "runs.csv"
DOC_BEGIN, DOC_END = "<!-- usp-versions:start -->", "<!-- usp-versions:end -->"
#: the raw table's hidden_size -> the grid's model label (shared README and the 3B / 80B grid)
MODEL_BY_WIDTH = {2048: "1B", 3072: "3B", 4096: "8B", 8192: "80B", 16384: "469B"}
#: tokens/s per GPU within which a grid row and a raw row are the same run (the grid rounds to whole tokens/s)
SAME_RATE = 1.0


def _key(model: str, nodes: int, dp: int, tp: int, pp: int, zero: int, mbs: int, grad_acc: int) -> tuple:
    return model, nodes, dp, tp, pp, zero, mbs, grad_acc


def model_label(row: dict) -> str:
    """A raw row's model as the grids label it: by width, and "80B-gqa8" for the 80B runs with 8 KV heads."""
    label = MODEL_BY_WIDTH[int(row["hidden_size"])]
    return f"{label}-gqa8" if label == "80B" and row["num_kv_heads"] == "8.0" else label


def run_key(run: GridRun) -> tuple:
    """A grid run's layout key: (model, nodes, dp, tp, pp, zero_stage, microbatch_size, gradient accumulation)."""
    p = run.parallel
    return _key(run.model, run.nodes, p.dp, p.tp, p.pp, p.zero_stage, p.microbatch_size,
                run.global_batch_size // (p.dp * p.microbatch_size))


def load_raw(path: Path = RAW_CSV) -> tuple[dict[tuple, list[dict]], dict[tuple, list[str]]]:
    """The raw table as two indexes by layout key: Success rows (dicts of the CSV's columns) and the statuses of
    the failed rows ('OOM' / 'Other')."""
    ok: dict[tuple, list[dict]] = defaultdict(list)
    failed: dict[tuple, list[str]] = defaultdict(list)
    with path.open() as f:
        for r in csv.DictReader(f):
            k = _key(model_label(r), int(float(r["nodes"])), int(r["dp"]), int(r["tp"]),
                     int(r["pp"]), int(r["zero_stage"]), int(r["mbs"]), int(float(r["batch_accum"])))
            (ok[k].append(r) if r["status"] == "Success" else failed[k].append(r["status"]))
    return ok, failed


def _one_row(ok: dict[tuple, list[dict]], key: tuple, tok_s_gpu: float) -> dict:
    """The one Success row with layout ``key`` and tokens/s/GPU within :data:`SAME_RATE` of ``tok_s_gpu``.

    Raises:
        ConfigError: none or several match (the transcription or the grid is wrong)."""
    rows = [r for r in ok.get(key, []) if abs(float(r["tok_s_gpu"]) - tok_s_gpu) <= SAME_RATE]
    if len(rows) != 1:
        raise ConfigError(f"run {key} at {tok_s_gpu} tokens/s/GPU matches {len(rows)} rows of {RAW_CSV}; "
                          "legal: exactly one", field="run", value=str(key))
    return rows[0]


def raw_row(run: GridRun, ok: dict[tuple, list[dict]]) -> dict:
    """The one Success row of the raw table that is ``run`` (:func:`_one_row` on its :func:`run_key`).

    Raises:
        ConfigError: none or several match."""
    return _one_row(ok, run_key(run), run.tok_s_gpu or 0.0)


#: the raw table's start-of-run bandwidth columns (GB/s, nanotron's bus-bandwidth accounting): collective ->
#: (column measured within a node, column measured over the whole job)
BUSBW_COLUMNS = {"AllReduce": ("allreduce_intra_gbps", "allreduce_gbps"),
                 "AllGather": ("allgather_intra_gbps", "allgather_gbps"),
                 "ReduceScatter": ("reducescatter_intra_gbps", "reducescatter_gbps")}


def measured_busbw(run: GridRun, ok: dict[tuple, list[dict]]) -> dict[str, dict[int, float]] | None:
    """The bus bandwidths (bytes/s) ``run``'s job measured when it started, as ``RunRecord.busbw``: the intra-node
    column over a group of 8 devices (a node) and, on 2+ nodes, the job-wide column over all its devices; None
    for a run that did not run or has no single raw row. Raises nothing."""
    if not run.ran:
        return None
    try:
        row = raw_row(run, ok)
    except ConfigError:
        return None
    out: dict[str, dict[int, float]] = {}
    for op, (intra, job) in BUSBW_COLUMNS.items():
        sizes = {8: row[intra]} | ({run.devices: row[job]} if run.devices > 8 else {})
        sizes = {n: float(v) * 1e9 for n, v in sizes.items() if v and float(v) > 0}
        if sizes:
            out[op] = sizes
    return out or None


def with_busbw(records: list, runs: list[GridRun]) -> list:
    """``records`` (``RunRecord``, one per run of ``runs``, same order) with each run's :func:`measured_busbw`, so
    that ``shardplan calibrate`` can leave out the runs on degraded hardware. Raises nothing."""
    ok = load_raw()[0]
    return [rec.model_copy(update={"busbw": bw}) if (bw := measured_busbw(run, ok)) else rec
            for rec, run in zip(records, runs)]


def after_fix(run: GridRun, ok: dict[tuple, list[dict]]) -> bool:
    """Whether a run that ran used the nanotron build after the pipeline fix (the raw table's ``after_pp_fix``)."""
    return raw_row(run, ok)["after_pp_fix"] == "True"


def failure(run: GridRun, failed: dict[tuple, list[str]]) -> str:
    """Why a failed run failed: 'OOM', 'Other', or 'OOM/Other' where repeats of the layout differ."""
    return "/".join(sorted(set(failed.get(run_key(run), ["unknown"]))))


def pre_fix(profile: FrameworkProfile) -> FrameworkProfile:
    """The pre-fix nanotron build: the profile's message stall (``pp_message_stall_s`` per pipeline message,
    :func:`shardplan.cost.pipeline.stall_s`) on every pipelined job of 2 or more nodes, no other trigger."""
    defaults = {f: FrameworkProfile.model_fields[f].default for f in PP_STALL_TRIGGERS}
    return profile.model_copy(update={**defaults, "pp_stall_min_nodes": 2})


def versioned(run: GridRun, profile: FrameworkProfile, ok: dict[tuple, list[dict]]) -> FrameworkProfile:
    """The profile of the build ``run`` used: without any stall after the fix, :func:`pre_fix` before it. A failed
    run (no raw Success row) keeps ``profile``."""
    if not run.ran:
        return profile
    return stall_free(profile) if after_fix(run, ok) else pre_fix(profile)


def fit_versioned(train: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, ok: dict[tuple, list[dict]]
                  ) -> tuple[HardwareSpec, FrameworkProfile]:
    """:data:`~usp_grid.FIT_PARAMS` fitted on the runs of ``train`` that ran, each predicted with its own build
    (:func:`versioned`; the stall triggers are not chosen: the build says which runs stall), after the memory
    terms and the usable HBM fraction as ``usp_grid.fit_on`` chooses them: the fitted hardware and profile."""
    ran = [r for r in train if r.ran]
    profile = profile.model_copy(update=memory_terms(train, hw, profile))
    profile = profile.model_copy(update={"usable_hbm_fraction": oom_fraction(train, hw, profile)})

    def predictor(run: GridRun, h: HardwareSpec, f: FrameworkProfile) -> float | None:
        return throughput(run, h, versioned(run, f, ok))

    res = fit(ran, [r.tok_s_gpu for r in ran], predictor, FIT_PARAMS, hw, profile, max_nfev=MAX_NFEV)
    return apply(FIT_PARAMS, res.values, hw, profile)


def score_versioned(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, ok: dict[tuple, list[dict]]
                    ) -> dict:
    """``usp_grid.score`` with every run priced with its own build (:func:`versioned`)."""
    return score(runs, [predict(r, hw, versioned(r, profile, ok)) for r in runs])


def stall_table(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, ok: dict[tuple, list[dict]]) -> str:
    """Stalled / ran (``usp_grid.stalled``: the measured step exceeds the stall-free prediction by more than 0.3 s
    per microbatch) by model, pipelining and build, over the runs on 2 or more nodes."""
    free = stall_free(profile)
    count: Counter = Counter()
    for r in runs:
        e = predict(r, hw, free)
        if r.ran and r.nodes >= 2 and not isinstance(e, str):
            count[(r.model, r.parallel.pp > 1, after_fix(r, ok), stalled(r, e))] += 1
    lines = ["| model | pipelined | stalled / ran, pre-fix build | stalled / ran, post-fix build |", "|---|---|---|---|"]
    for m in dict.fromkeys(r.model for r in runs):
        for piped in (True, False):
            cells = [f"{count[(m, piped, fix, True)]} / {count[(m, piped, fix, True)] + count[(m, piped, fix, False)]}"
                     for fix in (False, True)]
            if cells != ["0 / 0", "0 / 0"]:
                lines.append(f"| {m} | {'yes' if piped else 'no'} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


#: a job's start-of-run AllReduce measurement (the raw table's ``allreduce_gbps``) below this is the low regime: on
#: 16+ nodes the unpipelined runs measure 135-225 GB/s or 12-50 GB/s, with nothing between 50 and 130
LOW_ALLREDUCE_GBPS = 100.0


def network_table(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, ok: dict[tuple, list[dict]]) -> str:
    """Stalled / ran for the unpipelined runs on 16 or more nodes, by the AllReduce bandwidth their job measured when
    it started (the raw table's ``allreduce_gbps``; below :data:`LOW_ALLREDUCE_GBPS` or not): the losses of
    unpipelined jobs at scale go with the job's network, not with its layout."""
    free = stall_free(profile)
    count: Counter = Counter()
    for r in runs:
        e = predict(r, hw, free)
        if r.ran and r.nodes >= 16 and r.parallel.pp == 1 and not isinstance(e, str):
            low = float(raw_row(r, ok)["allreduce_gbps"]) < LOW_ALLREDUCE_GBPS
            count[(r.nodes, low, stalled(r, e))] += 1
    lines = [f"| nodes | stalled / ran, job measured AllReduce < {LOW_ALLREDUCE_GBPS:g} GB/s | stalled / ran, at or above |",
             "|---|---|---|"]
    for n in sorted({k[0] for k in count}):
        cells = [f"{count[(n, low, True)]} / {count[(n, low, True)] + count[(n, low, False)]}" for low in (True, False)]
        lines.append(f"| {n} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def oom_table(runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, failed: dict[tuple, list[str]]) -> str:
    """Predicted to run or not, by measured outcome (ran / OOM / other failure, from the raw table), and the
    fit/OOM classification over the runs that ran or ran out of memory."""
    count: Counter = Counter()
    for r in runs:
        e = predict(r, hw, profile)
        outcome = "ran" if r.ran else failure(r, failed)
        count[(outcome, not isinstance(e, str) and e.runs)] += 1
    outcomes = sorted({o for o, _ in count}, key=lambda o: (o != "ran", o))
    lines = ["| measured | runs | predicted to run | predicted not to |", "|---|---|---|---|"]
    lines += [f"| {o} | {count[(o, True)] + count[(o, False)]} | {count[(o, True)]} | {count[(o, False)]} |"
              for o in outcomes]
    right = count[("ran", True)] + count[("OOM", False)]
    n = sum(count[(o, x)] for o in ("ran", "OOM") for x in (True, False))
    return "\n".join(lines) + f"\n\nfit/OOM classification over the {n} runs that ran or ran out of memory: {right / n:.1%}."


def raw_only_runs(model: str, path: Path = RAW_CSV) -> list[tuple[GridRun, dict]]:
    """The Success rows of a model that only the raw table has (the 469B) as grid runs (the grid map's
    convention: sequence and tensor parallelism with asynchronous TP communication, peak = ``Mem Res`` x 1e9 as
    the map reads ``gpu_mem_gb``), each with its raw row."""
    out = []
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["status"] == "Success" and model_label(r) == model:
                tp = int(r["tp"])
                p = ParallelConfig(dp=int(r["dp"]), tp=tp, pp=int(r["pp"]), zero_stage=int(r["zero_stage"]),
                                   microbatch_size=int(r["mbs"]), sp=tp > 1, tp_overlap=tp > 1)
                out.append((GridRun(model, int(float(r["nodes"])), p, int(float(r["gbs"])), float(r["tok_s_gpu"]),
                                    float(r["mem_res_gib"]) * 1e9), r))
    return out


def raw_only_table(model: str, hw: HardwareSpec, profile: FrameworkProfile) -> str:
    """Per run of :func:`raw_only_runs`: layout, build, measured and predicted tokens/s/GPU (the shipped cluster
    file, and without any stall) and peak memory, then the summary metrics (``usp_grid.report``)."""
    runs = raw_only_runs(model)
    lines = ["| nodes | dp | tp | pp | mbs | build | measured tokens/s/GPU | predicted | without stall | "
             "measured peak (Mem Res) | predicted peak / 1e9 B |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    preds = []
    for g, r in runs:
        e, free = predict(g, hw, profile), predict(g, hw, stall_free(profile))
        preds.append(e)
        p = g.parallel
        rate = (lambda x: "refused" if isinstance(x, str) else
                f"{x.tokens_per_s / x.layout.n_devices:.1f}" + ("" if x.runs else " (not to fit)"))
        mem = "-" if isinstance(e, str) else f"{measured_peak(e) / 1e9:.1f}"
        lines.append(f"| {g.nodes} | {p.dp} | {p.tp} | {p.pp} | {p.microbatch_size} | "
                     f"{'post-fix' if r['after_pp_fix'] == 'True' else 'pre-fix'} | {g.tok_s_gpu:g} | {rate(e)} | "
                     f"{rate(free)} | {(g.mem_bytes or 0) / 1e9:.1f} | {mem} |")
    note = ("\n\nBoth memory columns are on the scale the grid fit reads `gpu_mem_gb` (= Mem Res, GiB) on: as GB "
            "(1e9 B).\n\n")
    return "\n".join(lines) + note + report(f"{model} (raw table only, never fitted)", score([g for g, _ in runs], preds))


def memory_unit_check(path: Path, ok: dict[tuple, list[dict]]) -> tuple[int, float]:
    """Runs of the grid CSV at ``path`` with a peak, and the largest |gpu_mem_gb - Mem Res| over them (the raw
    column is ``max_memory_reserved() / 1024**3``: a difference at rounding says ``gpu_mem_gb`` is GiB).

    Raises:
        ConfigError: a run that matches no raw row or several (:func:`_one_row`)."""
    worst, n = 0.0, 0
    with path.open() as f:
        for r in csv.DictReader(f):
            if r["gpu_mem_gb"] == "nan":
                continue
            k = _key(r["model"], int(r["nodes"]), int(r["dp"]), int(r["tp"]), int(r["pp"]), int(r["zero"]),
                     int(r["mbs"]), int(r["grad_acc"]))
            row = _one_row(ok, k, float(r["tok_s_gpu"]))
            worst, n = max(worst, abs(float(row["mem_res_gib"]) - float(r["gpu_mem_gb"]))), n + 1
    return n, worst


def section(name: str, runs: list[GridRun], hw: HardwareSpec, profile: FrameworkProfile, raw: tuple, fits: dict,
            source: str = "shipped cluster file") -> str:
    """One grid's tables: stalls by build, outcomes, and the grid scored with each run's build under the
    constants of ``source`` (what ``hw`` and ``profile`` are, as the text names them) and each refit of ``fits``
    (label -> (hardware, profile, the model it was fitted on or None): a fit on one model is scored on the grid's
    other models only)."""
    ok, failed = raw
    out = [f"**{name}**: stalls by build (runs on 2+ nodes)\n", stall_table(runs, hw, profile, ok),
           "\nUnpipelined runs on 16+ nodes, by the AllReduce bandwidth their job measured at start:\n",
           network_table(runs, hw, profile, ok),
           f"\nOutcomes against the prediction ({source}):\n", oom_table(runs, hw, profile, failed),
           "\nScored with each run's build (post-fix: no stall; pre-fix: the stall on every pipeline of 2+ nodes):\n"]
    out.append(report("shipped constants" if source == "shipped cluster file" else source,
                      score_versioned(runs, hw, profile, ok)))
    for label, (h, f, model) in fits.items():
        scored = [r for r in runs if r.model != model]
        others = ", ".join(dict.fromkeys(r.model for r in scored))
        out.append("\n" + report(f"{label}, scored on {others}", score_versioned(scored, h, f, ok)))
    post = [r for r in runs if r.ran and after_fix(r, ok)]
    out.append("\nWhat a user of the current (post-fix) nanotron gets: the post-fix runs alone, predicted without any "
               "stall (the `nanotron` preset's behaviour with this cluster's constants):\n")
    out.append(report("post-fix runs, no stall", score(post, [predict(r, hw, stall_free(profile)) for r in post])))
    return "\n".join(out)


def source_text(hardware: str, profile: FrameworkProfile) -> str:
    """What the tables call the hardware and profile they predict with: "shipped cluster file" for the default
    ``--hardware`` (:data:`~usp_grid.DEFAULT_HW`) with its own profile, else the ``--hardware`` value and the
    profile's label. Raises nothing."""
    if Path(hardware).resolve() == DEFAULT_HW.resolve() and profile.name == "nanotron-usp" and not profile.inline:
        return "shipped cluster file"
    return f"hardware {hardware} and the {profile.label} profile"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hardware", default=str(DEFAULT_HW),
                    help="preset or cluster file; its framework section gives the profile, else nanotron-usp (the "
                         "campaign's: its stall is the pre-fix build's)")
    ap.add_argument("--lomo", action="store_true", help="also fit with each run's build on each shared model (~2 min)")
    ap.add_argument("--doc", type=Path, default=None, help="write the block between the usp-versions markers")
    args = ap.parse_args()
    doc = check_marked_doc(args.doc, DOC_BEGIN, DOC_END) if args.doc is not None else None
    from usp_grid import load_grid
    hw = load_hardware(args.hardware)
    profile = default_framework(args.hardware) or framework_profile("nanotron-usp")
    raw, source = load_raw(), source_text(args.hardware, profile)
    checks = [memory_unit_check(p, raw[0]) for p in (DEFAULT_CSV, HELDOUT_CSV)]
    text = [f"Join: {checks[0][0]} + {checks[1][0]} runs with a peak (shared grid + 3B / 80B) each match one Success "
            f"row of the raw table; |gpu_mem_gb - Mem Res (GiB)| at most {max(c[1] for c in checks):.2f}."]
    shared, held = load_grid(DEFAULT_CSV), load_grid(HELDOUT_CSV)
    fits = {}
    if args.lomo:
        fits["fitted with builds on all shared runs"] = (*fit_versioned(shared, hw, profile, raw[0]), None)
        for m in ("1B", "8B"):
            fits[f"fitted with builds on the shared {m} runs alone"] = (
                *fit_versioned([r for r in shared if r.model == m], hw, profile, raw[0]), m)
    text.append(section("Shared 1B / 8B grid", shared, hw, profile, raw, fits, source))
    text.append(section("3B / 80B grid (held out)", held, hw, profile, raw, fits, source))
    text.append(f"**The 469B runs**, in the raw table only (no plot shows them; all on 64 nodes), with the {source}:\n\n"
                + raw_only_table("469B", hw, profile))
    publish("\n\n".join(text), args.doc, doc, DOC_BEGIN, DOC_END)


if __name__ == "__main__":
    run_script(main)
