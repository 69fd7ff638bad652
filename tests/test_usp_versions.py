"""The playbook's raw benchmark table (benchmarks/usp_raw/runs.csv) against the plotted grids, and the per-build
profiles of benchmarks/usp_versions.py. Fast: CSV reads and a handful of estimates, no fit."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from usp_grid import DEFAULT_CSV, DEFAULT_HW, GridRun, load_grid, predict  # noqa: E402
import usp_versions as uv  # noqa: E402

from shardplan.inputs import default_framework  # noqa: E402
from shardplan.loaders import load_hardware  # noqa: E402
from shardplan.parallel import ParallelConfig  # noqa: E402


@pytest.fixture(scope="module")
def raw():
    return uv.load_raw()


def test_raw_table_counts(raw):
    ok, failed = raw
    # README: 4,104 rows = 1,765 Success + 1,917 OOM + 422 Other; the Success rows are the runs that ran in the shared
    # grid (1,027) and the 3B / 80B grid (731) plus the 469B's 7: 1,027 + 731 + 7 = 1,765
    assert sum(map(len, ok.values())) == 1765
    statuses = [s for v in failed.values() for s in v]
    assert (statuses.count("OOM"), statuses.count("Other")) == (1917, 422)


def test_grid_memory_column_is_gib(raw):
    # every run with a peak matches one Success row, whose Mem Res (max_memory_reserved / 1024**3) equals gpu_mem_gb
    # to the grid's rounding (0.1 GB printed with one decimal -> at most 0.05)
    n, worst = uv.memory_unit_check(DEFAULT_CSV, raw[0])
    assert n == 1027 and worst <= 0.05 + 1e-9


def test_after_fix_and_failure_of_known_runs(raw):
    ok, failed = raw
    runs = {uv.run_key(r): r for r in load_grid(DEFAULT_CSV)}
    # 1B, 1 node, dp=8 mbs=2 ZeRO-0 (40,150 tok/s/GPU): raw job 14113488, after_pp_fix True
    r = next(r for r in load_grid(DEFAULT_CSV) if uv.run_key(r) == ("1B", 1, 8, 1, 1, 0, 2, 16) and r.ran)
    assert uv.after_fix(r, ok) is True
    # 1B, 1 node, dp=8 mbs=1 ZeRO-0 (39,273): job 13436292, after_pp_fix False
    r = next(r for k, r in runs.items() if k == ("1B", 1, 8, 1, 1, 0, 1, 32))
    assert uv.after_fix(r, ok) is False
    failed_runs = [r for r in load_grid(DEFAULT_CSV) if not r.ran]
    assert {uv.failure(r, failed) for r in failed_runs} <= {"OOM", "Other", "OOM/Other"}


def test_pre_fix_build_stalls_every_pipeline_across_nodes():
    hw = load_hardware(str(DEFAULT_HW))
    prof = default_framework(str(DEFAULT_HW))
    pre = uv.pre_fix(prof)

    def run(nodes: int, **p) -> GridRun:
        return GridRun("8B", nodes, ParallelConfig(**p, sp=p.get("tp", 1) > 1, tp_overlap=True), 256, 1.0, None)

    # 8B, 2 nodes, dp=8 pp=2 mbs=1, ZeRO-1: 32 microbatches, 2 messages each on a two-stage pipeline plus
    # 2 x (2 - 1) fill/drain -> (32 x 2 + 2) x pp_message_stall_s more than the stall-free step
    two = run(2, dp=8, pp=2, zero_stage=1, microbatch_size=1)
    stall = predict(two, hw, pre).step_s - predict(two, hw, uv.stall_free(prof)).step_s
    assert stall == pytest.approx((32 * 2 + 2) * prof.pp_message_stall_s, rel=1e-6)
    # the shipped triggers leave this 2-node run alone (they start at 32 nodes)
    assert predict(two, hw, prof).step_s == pytest.approx(predict(two, hw, uv.stall_free(prof)).step_s)
    # one node: no stall under the pre-fix build either
    one = run(1, dp=4, pp=2, zero_stage=1, microbatch_size=1)
    assert predict(one, hw, pre).step_s == pytest.approx(predict(one, hw, uv.stall_free(prof)).step_s)


def test_nanotron_preset_is_the_post_fix_build_and_the_campaign_profile_keeps_the_stall():
    from shardplan.presets.frameworks import framework_profile
    nano, usp = framework_profile("nanotron"), framework_profile("nanotron-usp")
    # current nanotron (the post-fix build): no message stall; its source names the raw table's evidence
    assert nano.pp_message_stall_s == 0 and "after_pp_fix" in nano.sources["pp_message_stall_s"]
    # the campaign's profile: the same fitted constants plus the stall and its triggers (docs/accuracy.md usp-grid)
    assert usp.pp_message_stall_s == 0.252 and usp.pp_stall_min_nodes == 32 and usp.pp_stall_all_nodes == 64
    assert (usp.layer_host_s, usp.allocator_overhead) == (nano.layer_host_s, nano.allocator_overhead)
    assert default_framework(str(DEFAULT_HW)).name == "nanotron-usp"
    # 8B, 64 nodes, tp=8 pp=2 dp=32 mbs=1 ZeRO-1: 8 microbatches; the campaign profile stalls (every pipeline from 64
    # nodes): (8 x 2 + 2 x 1) x 0.252 = 4.536 s more per step; the nanotron preset prices no stall
    hw = load_hardware(str(DEFAULT_HW))
    run = GridRun("8B", 64, ParallelConfig(tp=8, sp=True, tp_overlap=True, pp=2, zero_stage=1), 256, 1.0, None)
    extra = predict(run, hw, usp).step_s - predict(run, hw, nano).step_s
    assert extra == pytest.approx((8 * 2 + 2) * 0.252, rel=1e-6)


def test_gqa8_runs_of_the_80b_plot_are_labelled_and_priced_with_8_kv_heads(raw):
    from usp_heldout import HELDOUT_CSV
    runs = load_grid(HELDOUT_CSV)
    gqa = [r for r in runs if r.model == "80B-gqa8"]
    # 14 Success rows of the raw table have hidden 8192 and num_kv_heads 8; each is one run of the CSV
    assert len(gqa) == 14 and all(r.ran and uv.raw_row(r, raw[0])["num_kv_heads"] == "8.0" for r in gqa)
    assert all(r.group == ("80B", r.nodes) for r in gqa)
    n, worst = uv.memory_unit_check(HELDOUT_CSV, raw[0])
    assert n == 731 and worst <= 0.05 + 1e-9


def test_469b_runs_come_from_the_raw_table_with_their_spec():
    import usp_grid
    # 7 Success rows with hidden 16384 (all on 64 nodes); the grid map's 469B: 126 layers of h = 16384, MHA, ffn 53248,
    # untied 131072 vocabulary -> 126 x (4 h^2 + 3 h x 53248 + 2 h) + 2 x 131072 x h + h = 469.36e9 parameters
    runs = uv.raw_only_runs("469B")
    assert len(runs) == 7 and {g.nodes for g, _ in runs} == {64}
    h, f = 16384, 53248
    assert usp_grid.GRID_MODELS["469B"].n_params == 126 * (4 * h * h + 3 * h * f + 2 * h) + 2 * 131072 * h + h
    assert usp_grid.GRID_MODELS["469B"].n_params == pytest.approx(469.36e9, rel=1e-4)


def out_path_prefix(line: str) -> str:
    """The ``FILE:LINE: `` a degraded_cases line starts with (records read from a file)."""
    return line[:line.index("record ")]


def test_grid_records_carry_the_job_s_bandwidths(tmp_path):
    from shardplan.records import read_records
    import usp_grid
    out = tmp_path / "runs.jsonl"
    usp_grid.write_records(out, uv.with_busbw(usp_grid.to_records(DEFAULT_CSV), load_grid(DEFAULT_CSV)))
    recs = read_records(out)
    # every run that ran matches one raw row (test_grid_memory_column_is_gib): 1,027 records carry busbw; a 2-node
    # run carries the node's group of 8 and the job's 16
    assert sum(r.busbw is not None for r in recs) == 1027
    two = next(r for r in recs if r.devices == 16 and r.busbw)
    assert set(two.busbw["AllReduce"]) == {8, 16}
    # raw table: 1B dp=1 pp=8 ZeRO-1 mbs 1 x 128 (record 32: 484.91 tokens/s/GPU, 18.38 GiB reserved) measured
    # AllReduce within its node at 45.85 GB/s, 8B dp=4 pp=2 ZeRO-1 mbs 1 x 64 (2,751.97, 71.5 GiB) at 45.98 GB/s,
    # against a median of 425.6 over the 1,027 runs; 45.85 / 425.6 = 0.11 < 1/3
    from shardplan.calibrate import cases, degraded_cases
    one = [r for r in recs if r.devices == 8 and r.busbw]
    full = next(r for r in one if r.parallel.dp == 4 and r.parallel.pp == 2 and r.busbw["AllReduce"][8] < 50e9)
    assert full.busbw["AllReduce"] == {8: pytest.approx(45.98e9)}
    hbm = load_hardware(str(DEFAULT_HW)).hbm_bytes
    _, out, _ = degraded_cases(cases(recs), hbm)
    # 9 left out (3 within a node, 6 job-wide); the 8B run's peak 71.5e9 B (the grid's GB x 1e9) is at least
    # 0.8 x 80 GiB = 68.7e9 B: near full memory, kept (its slowness goes with the memory its layout needs)
    assert len(out) == 9 and out[0].startswith(f"{out_path_prefix(out[0])}record 32 (")
    assert not any("record 820 " in line for line in out)  # the 8B dp=4 pp=2 run (CSV line 821)
