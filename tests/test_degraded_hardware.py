"""`shardplan calibrate` leaves out a run whose own bus-bandwidth measurement shows degraded hardware
(shardplan.calibrate.degraded_cases; the Ultra-Scale Playbook's raw table has 24 such jobs, docs/calibration.md)."""

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.calibrate import DEGRADED_BUSBW_FRACTION, calibrate, cases, degraded_cases
from shardplan.cli import app
from shardplan.fitting import Parameter
from shardplan.presets.frameworks import framework_profile
from shardplan.records import write_records
from tests.test_calibrate import H100, synthetic_records

NODE_ALLREDUCE = 425e9  # B/s: the grid's typical start-of-run AllReduce within a node (benchmarks/usp_raw)


def with_node_busbw(records, slow: dict[int, float]):
    """Every record measuring AllReduce over its first 8 devices at NODE_ALLREDUCE, record i at slow[i]."""
    return [r.model_copy(update={"busbw": {"AllReduce": {8: slow.get(i, NODE_ALLREDUCE)}}})
            for i, r in enumerate(records)]


def test_a_run_far_below_the_records_median_is_named_and_left_out():
    recs = with_node_busbw(synthetic_records(), {3: 46e9, 5: 300e9})
    keep, out, _ = degraded_cases(cases(recs))
    # median of 14 measurements is 425e9; 46e9 / 425e9 = 0.108 < 1/3 (left out); 300e9 / 425e9 = 0.71 (kept)
    assert len(keep) == 13 and len(out) == 1
    assert out[0].startswith("record 4 (synthetic") and "AllReduce over 8 devices measured 46.0 GB/s, 0.11 of " \
        "the records' median 425.0 GB/s" in out[0]
    assert DEGRADED_BUSBW_FRACTION == pytest.approx(1 / 3)


def test_too_few_measurements_or_a_failed_run_are_never_left_out():
    recs = synthetic_records()
    two = [r.model_copy(update={"busbw": {"AllReduce": {8: bw}}}) for r, bw in zip(recs[:2], (425e9, 40e9))] + recs[2:]
    assert len(degraded_cases(cases(two))[0]) == len(recs)  # 2 measurements: no median to judge against
    failed = with_node_busbw(recs, {0: 40e9})
    failed[0] = failed[0].model_copy(update={"status": "failed", "tokens_per_s_per_device": None})
    assert len(degraded_cases(cases(failed))[0]) == len(recs)  # no throughput to bend the fit


def test_the_fit_is_not_bent_by_a_run_on_a_sick_node():
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0),
              Parameter("hardware", "scale_out_efficiency", 0.05, 1.0)]
    recs = synthetic_records()
    # the 8-GPU llama-3-8b run measured 4x slower than its layout can run (a node whose NVLink measured 46 GB/s)
    slow = [r.model_copy(update={"tokens_per_s_per_device": r.tokens_per_s_per_device / 4}) if i == 0 else r
            for i, r in enumerate(recs)]
    profile = framework_profile("megatron")
    cal = calibrate(with_node_busbw(slow, {0: 46e9}), H100, profile, params, cross_validate=False)
    # the records are the planner's own predictions at matmul_efficiency 0.5, scale_out_efficiency 0.3
    # (test_calibrate.TRUE): without the slow run the fit finds both within 0.5%
    assert cal.values == pytest.approx([0.5, 0.3], rel=0.005) and len(cal.degraded) == 1
    assert cal.in_sample["throughput_median"] < 0.01
    bent = calibrate(slow, H100, profile, params, cross_validate=False)  # no measurement: the run stays in
    # the soft-L1 loss limits one 4x outlier's pull, but the GEMM rate still moves by more than 1%
    assert not bent.degraded and abs(bent.values[0] / 0.5 - 1) > 0.01


def test_a_run_near_full_memory_is_kept_whatever_its_bandwidth():
    recs = with_node_busbw(synthetic_records(), {3: 46e9})
    hbm = H100.hbm_bytes  # 80 GiB = 85,899,345,920 B; PRESSURE_SHARE 0.8 of it is 68,719,476,736 B
    near = [r.model_copy(update={"peak_memory_bytes": 69e9}) if i == 3 else r for i, r in enumerate(recs)]
    assert len(degraded_cases(cases(near), hbm)[1]) == 0  # 69e9 >= 68.72e9: the memory explains it, kept
    below = [r.model_copy(update={"peak_memory_bytes": 68e9}) if i == 3 else r for i, r in enumerate(recs)]
    assert len(degraded_cases(cases(below), hbm)[1]) == 1  # 68e9 < 68.72e9: left out
    assert len(degraded_cases(cases(near))[1]) == 1  # no HBM to compare with: the bandwidth alone decides


def test_cli_warns_and_the_cluster_file_says_how_many_were_left_out(tmp_path):
    path, out = tmp_path / "runs.jsonl", tmp_path / "cluster.yaml"
    write_records(path, with_node_busbw(synthetic_records(), {2: 45e9}), append=False)
    r = CliRunner().invoke(app, ["calibrate", str(path), "--hardware", "h100-sxm", "-o", str(out),
                                 "--no-cross-validation"])
    assert r.exit_code == 0, r.output
    assert "degraded hardware" in r.output and "runs.jsonl:3: record 3" in r.output
    assert "1 run(s) on degraded hardware" in yaml.safe_load(out.read_text())["sources"]["matmul_efficiency"]


def test_two_regimes_of_the_cluster_leave_nothing_out_and_say_so():
    # 14 runs, 4 of them at 45 GB/s: the upper median of (45 x 4, 425 x 10) is 425, and 4 > 0.25 x 14 = 3.5 runs
    # below a third of it are two regimes, not sick nodes: none left out (3 of 14 would be)
    recs = synthetic_records()
    four = with_node_busbw(recs, {0: 45e9, 1: 45e9, 2: 45e9, 3: 45e9})
    keep, out, notes = degraded_cases(cases(four))
    assert len(keep) == 14 and not out
    assert notes == ["4 of the 14 runs that ran measured AllReduce over 8 devices below a third of the records' median: "
                     "two regimes of the cluster, not a few sick nodes; none of them left out"]
    three = with_node_busbw(recs, {0: 45e9, 1: 45e9, 2: 45e9})
    assert len(degraded_cases(cases(three))[1]) == 3


def test_an_impossible_record_is_refused_before_the_bandwidth_rule_calls_it_degraded():
    from shardplan.errors import ConfigError
    recs = with_node_busbw(synthetic_records(), {3: 45e9})
    recs[3] = recs[3].model_copy(update={"tokens_per_s_per_device": 1e7})  # 48,766% MFU on llama-3-8b
    with pytest.raises(ConfigError, match="MFU"):
        calibrate(recs, H100, framework_profile("megatron"), cross_validate=False)


def test_a_low_run_kept_for_its_memory_is_named():
    recs = with_node_busbw(synthetic_records(), {3: 46e9})
    near = [r.model_copy(update={"peak_memory_bytes": 69e9}) if i == 3 else r for i, r in enumerate(recs)]
    _, out, notes = degraded_cases(cases(near), H100.hbm_bytes)
    assert not out and len(notes) == 1 and notes[0].startswith("record 4: AllReduce over 8 devices measured 46.0 GB/s")
    assert notes[0].endswith("kept: its peak is near full memory, where the low measurement goes with the memory its "
                             "layout needs")
