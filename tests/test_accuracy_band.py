"""The held-out throughput band (shardplan.accuracy_band): its arithmetic, the lookup's fallback order, the shipped
file being what benchmarks/error_bands.py computes from the held-out runs today, and the CLI printing it."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shardplan.accuracy_band import BAND_FILE, MIN_RUNS, ThroughputBand, lookup, throughput_band
from shardplan.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def test_measured_range_divides_by_the_ratio_percentiles():
    # predicted 1,000 tokens/s; 90% of the group measured at least predicted / 1.25 = 800 and 90% at most
    # predicted / 0.95 = 1,052.63
    band = ThroughputBand("g", 10, 0.95, 1.05, 1.25, 0.07)
    low, high = band.measured_range(1000.0)
    assert low == pytest.approx(800.0)
    assert high == pytest.approx(1052.631578947)
    d = band.to_dict(1000.0)
    assert d["tokens_per_s_low"] == pytest.approx(800.0) and d["runs"] == 10


def _entry(**kw):
    return {"runs": 9, "ratio_p10": 0.9, "ratio_p50": 1.0, "ratio_p90": 1.1, "median_abs_error": 0.05, **kw}


DOC = {"framework_arch": [_entry(framework="megatron", arch="hopper", ratio_p50=1.01)],
       "framework": [_entry(framework="megatron", ratio_p50=1.02), _entry(framework="torchtitan", ratio_p50=1.03)],
       "arch": [_entry(arch="ampere", ratio_p50=1.04, ratio_p10=0.6), _entry(arch="tpu", ratio_p90=2.0)],
       "all": _entry(ratio_p50=1.05)}


@pytest.mark.parametrize("framework, arch, p10, p50, p90, group", [
    ("megatron", "hopper", 0.9, 1.01, 1.1, "megatron profile on hopper"),  # the pair has its own group
    # no pair: the framework's range (0.9-1.1) and the architecture's (0.6-1.1) together, the framework's median
    ("megatron", "ampere", 0.6, 1.02, 1.1, "megatron profile on any chip, widened by any framework on ampere"),
    ("torchtitan", "tpu", 0.9, 1.03, 2.0, "torchtitan profile on any chip, widened by any framework on tpu"),
    ("megatron", "cdna3", 0.9, 1.02, 1.1, "megatron profile on any chip"),  # the framework alone
    ("nanotron", "ampere", 0.6, 1.04, 1.1, "any framework on ampere"),      # the architecture alone
    ("nanotron", "cdna3", 0.9, 1.05, 1.1, "all held-out runs"),             # every run
])
def test_lookup_groups_and_fallbacks(framework, arch, p10, p50, p90, group):
    band = lookup(DOC, framework, arch)
    assert (band.ratio_p10, band.ratio_p50, band.ratio_p90, band.group) == (p10, p50, p90, group)


CLASS_DOC = {**DOC, "framework_arch_class": [_entry(framework="megatron", arch="hopper", **{"class": "moe"},
                                                   ratio_p10=0.8, ratio_p90=1.6)],
             "class": [_entry(**{"class": "moe"}, runs=20, ratio_p10=0.85, ratio_p90=1.5),
                       _entry(**{"class": "dense"}, runs=90)]}


@pytest.mark.parametrize("framework, arch, moe, p10, p90, runs, group", [
    # the (framework, architecture, class) group of its own
    ("megatron", "hopper", True, 0.8, 1.6, 9, "megatron profile on hopper, MoE models"),
    # a dense model without one: lookup's group as it is
    ("megatron", "hopper", False, 0.9, 1.1, 9, "megatron profile on hopper"),
    # an MoE model without one: lookup's group (0.9-1.1, 9 runs) widened by every MoE run (0.85-1.5, 20 runs):
    # p10 min(0.9, 0.85) = 0.85, p90 max(1.1, 1.5) = 1.5, runs 9 + 20 = 29
    ("torchtitan", "tpu", True, 0.85, 2.0, 9 + 9 + 20,
     "torchtitan profile on any chip, widened by any framework on tpu, widened by every MoE run"),
    ("megatron", "cdna3", True, 0.85, 1.5, 29, "megatron profile on any chip, widened by every MoE run"),
])
def test_class_lookup(framework, arch, moe, p10, p90, runs, group):
    from shardplan.accuracy_band import class_lookup
    band = class_lookup(CLASS_DOC, framework, arch, moe)
    assert (band.ratio_p10, band.ratio_p90, band.runs, band.group) == (p10, p90, runs, group)
    # a band file without class groups (older): the framework x architecture lookup, an MoE model not widened
    assert class_lookup(DOC, framework, arch, moe) == lookup(DOC, framework, arch)


def test_summary_percentiles_by_hand():
    from error_bands import summary
    # ten ratios 0.8 .. 1.7; numpy's linear percentile: p10 at index 0.9 -> 0.8 + 0.9 x 0.1 = 0.89, p50 at index 4.5
    # -> 1.25, p90 at index 8.1 -> 1.6 + 0.1 x 0.1 = 1.61; |error| 0.2 0.1 0 0.1 0.2 0.3 ... -> median of
    # (0, .1, .1, .2, .2, .3, .4, .5, .6, .7) = 0.25
    s = summary([0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7])
    assert s == {"runs": 10, "ratio_p10": 0.89, "ratio_p50": 1.25, "ratio_p90": 1.61, "median_abs_error": 0.25}


def test_shipped_file_is_what_the_held_out_runs_give_today():
    """A change to the cost model moves the held-out predictions: rerun python benchmarks/error_bands.py."""
    from error_bands import bands, held_out_rows, ratios
    shipped = json.loads(BAND_FILE.read_text())
    measured: list = []
    scope: list = []
    fresh = json.loads(json.dumps(bands(ratios(held_out_rows(), measured, scope), measured, scope)))
    for doc in (shipped, fresh):
        doc.pop("date")
    assert shipped == fresh, "shardplan/data/heldout_errors.json is stale: run python benchmarks/error_bands.py"
    for group in (*shipped["framework_arch"], *shipped["framework"], *shipped["arch"], *shipped["framework_arch_class"],
                  *shipped["class"], shipped["all"]):
        assert group["runs"] >= MIN_RUNS and 0 < group["ratio_p10"] <= group["ratio_p50"] <= group["ratio_p90"]
    assert shipped["all"]["runs"] >= 400


def _run(*args):
    return CliRunner().invoke(app, ["estimate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "8",
                                    "--seq-len", "8192", "--global-batch", "64", *args])


def test_estimate_prints_and_returns_the_band():
    r = _run("--tp", "2", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    band = doc["throughput_band"]
    expected = throughput_band("megatron", "hopper", moe=False)  # llama-3-8b is dense
    per_device = doc["tokens_per_s"] / 8
    assert band["group"] == "megatron profile on hopper, dense models" and band["runs"] == expected.runs
    assert band["tokens_per_s_low"] == pytest.approx(per_device / expected.ratio_p90)
    assert band["tokens_per_s_high"] == pytest.approx(per_device / expected.ratio_p10)
    table = _run("--tp", "2")
    assert "80% band" in table.stdout and "megatron profile on hopper, dense models" in " ".join(table.stdout.split())


def test_no_band_for_a_layout_that_does_not_run():
    r = _run("--json")  # dp=8 ZeRO-1 at 8,192 tokens: 85 GiB of 80, predicted not to fit (exit 1)
    assert r.exit_code == 1
    assert json.loads(r.stdout[r.stdout.index("{"):])["throughput_band"] is None


def test_plan_gives_the_winner_its_band():
    args = ["plan", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "16", "--seq-len", "8192",
            "--global-batch", "64"]
    r = CliRunner().invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    plans = json.loads(r.stdout[r.stdout.index("{"):])["plans"]
    best, band = plans[0], plans[0]["throughput_band"]
    expected = throughput_band("megatron", "hopper", moe=False)
    # the winner's tokens/s per device over the group's p90 (low end) and p10 (high end)
    assert band["tokens_per_s_low"] == pytest.approx(best["tokens_per_s"] / 16 / expected.ratio_p90)
    assert band["tokens_per_s_high"] == pytest.approx(best["tokens_per_s"] / 16 / expected.ratio_p10)
    assert all("throughput_band" not in p for p in plans[1:])
    assert "#1's 80% band" in CliRunner().invoke(app, args).stdout


def test_band_for_says_when_the_profile_or_hardware_is_a_file():
    from shardplan.accuracy_band import band_for
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    megatron, h100 = framework_profile("megatron"), HARDWARE["h100-sxm"]
    assert band_for(megatron, h100).group == "megatron profile on hopper"
    mine = megatron.model_copy(update={"origin": "my-profile.yaml"})
    cluster = h100.model_copy(update={"name": "my-cluster"})
    assert band_for(mine, cluster).group.endswith("the built-ins' record, your profile and hardware come from files")
    # the same percentiles: the record is the built-in profile's
    assert band_for(mine, h100).ratio_p90 == band_for(megatron, h100).ratio_p90


def test_order_bins_by_hand():
    from order_accuracy import order_bins
    # one group of three runs: predicted 100 / 104 / 200, measured 100 / 90 / 300.
    # pairs: (0,1) gap ln(1.04) = 0.039 (bin 2.5-5%): predicted 1 > 0, measured 1 < 0 -> wrong;
    # (0,2) gap ln 2 = 0.69 (top bin): right; (1,2) gap ln(200/104) = 0.65 (top bin): right
    bins = order_bins({"g": [0, 1, 2]}, {0: 100.0, 1: 104.0, 2: 200.0}, {0: 100.0, 1: 90.0, 2: 300.0})
    assert [(b["gap_low"], b["pairs"], b["right"]) for b in bins] == [(0.025, 1, 0), (0.5, 2, 2)]
    assert bins[1]["gap_high"] is None and bins[1]["fraction_right"] == 1.0


def test_order_lookup_and_the_shipped_file():
    from shardplan.accuracy_band import ORDER_FILE, order_lookup, order_reliability
    doc = json.loads(ORDER_FILE.read_text())
    for source in ("public", "grid"):
        edges = [b["gap_low"] for b in doc[source]["bins"]]
        assert edges == sorted(edges) and edges[0] == 0.0 and doc[source]["bins"][-1]["gap_high"] is None
        for b in doc[source]["bins"]:
            assert b["pairs"] > 0 and 0 <= b["fraction_right"] <= 1 and b["right"] <= b["pairs"]
    # 1,000 vs 1,040 tokens/s: gap ln 1.04 = 0.0392, the 0.025-0.05 bin
    o = order_reliability(1000.0, 1040.0)
    assert (o.gap_low, o.gap_high) == (0.025, 0.05) and o.predicted_gap == pytest.approx(0.0392207)
    assert o == order_lookup(doc, o.predicted_gap)
    grid_bin = next(b for b in doc["grid"]["bins"] if b["gap_low"] == 0.025)
    assert (o.grid_pairs, o.grid_fraction_right) == (grid_bin["pairs"], grid_bin["fraction_right"])
    assert order_reliability(1000.0, 0.0) is None


def test_plan_gives_runner_ups_their_order_reliability():
    from shardplan.accuracy_band import ORDER_FILE
    doc = json.loads(ORDER_FILE.read_text())
    args = ["plan", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "16", "--seq-len", "8192",
            "--global-batch", "64", "--top", "3"]
    r = CliRunner().invoke(app, [*args, "--json"])
    plans = json.loads(r.stdout[r.stdout.index("{"):])["plans"]
    for p in plans[1:]:
        o, gap = p["order_reliability"], abs(math.log(plans[0]["tokens_per_s"] / p["tokens_per_s"]))
        assert o["predicted_gap"] == pytest.approx(gap) and o["gap_low"] <= gap < o["gap_high"]
        # the file's bins read directly: the one starting at the runner-up's gap_low in each set of pairs
        grid = next(b for b in doc["grid"]["bins"] if b["gap_low"] == o["gap_low"])
        public = next(b for b in doc["public"]["bins"] if b["gap_low"] == o["gap_low"])
        assert (o["grid_pairs"], o["public_fraction_right"]) == (grid["pairs"], public["fraction_right"])
    assert "order_reliability" not in plans[0]
    assert "pairs of the measured H100 grid" in " ".join(CliRunner().invoke(app, args).stdout.split())


def test_order_file_public_pairs_are_what_the_held_out_runs_give_today():
    """The public half of data/order_accuracy.json is cheap to recompute (the grid half needs two fits, 40 s): a cost
    model change that reorders held-out pairs fails here until python benchmarks/order_accuracy.py is rerun."""
    from order_accuracy import order_bins, public_pairs

    from shardplan.accuracy_band import ORDER_FILE
    assert json.loads(ORDER_FILE.read_text())["public"]["bins"] == order_bins(*public_pairs())


def test_an_moe_model_gets_the_moe_record():
    # Mixtral 8x7B on 64 B200 under the megatron profile: the MoE group of megatron on Blackwell (its held-out MoE
    # runs have a wider band than the dense ones), not the dense one
    r = CliRunner().invoke(app, ["estimate", "-m", "mixtral-8x7b", "-H", "b200", "-n", "64", "-s", "4096", "-b", "256",
                                 "--ep", "8", "--json"])
    assert r.exit_code == 0, r.output
    band = json.loads(r.stdout[r.stdout.index("{"):])["throughput_band"]
    moe, dense = throughput_band("megatron", "blackwell", moe=True), throughput_band("megatron", "blackwell", moe=False)
    assert band["group"] == moe.group and band["runs"] == moe.runs and moe.group != dense.group
    assert moe.ratio_p90 > dense.ratio_p90


def test_no_band_for_a_prediction_outside_the_runs_scope():
    """The band file's scope (the held-out runs: 70M-683B parameters, steps of 90 ms or more): a model under a tenth of
    the smallest or a step under a tenth of the shortest gets no band, and says why (tiny-llama, 0.107M parameters,
    a 20 us step, was given "42,634-54,974 per device" from 7B-scale runs)."""
    from shardplan.accuracy_band import out_of_scope
    doc = {"scope": {"params": [70e6, 683e9], "step_s": [0.09, 670.0]}}
    assert out_of_scope(8e9, 1.0, doc) is None and out_of_scope(7.1e6, 0.01, doc) is None  # inside: 7M, 9 ms
    assert out_of_scope(107e3, 1.0, doc).startswith("none: the public runs behind it have 70M-683B parameters")
    assert out_of_scope(8e9, 0.008, doc) is not None and out_of_scope(7e12, 1.0, doc) is not None
    assert out_of_scope(107e3, 1.0, {}) is None  # an older band file without a scope: no judgement


def test_no_held_out_run_is_counted_twice():
    # two scouting passes can transcribe the same table (the forty-ninth re-read xtuner's Megatron MoE benchmark,
    # held since an earlier pass): a run with the same model, hardware, devices, sequence, batch, layout and
    # measured rate (to 0.1 token/s) under two names would be counted twice in every figure of docs/accuracy.md
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from error_bands import held_out_rows
    seen: dict[tuple, str] = {}
    for row in held_out_rows():
        key = (row[1], row[2], row[5], row[6], row[7], tuple(sorted((k, str(v)) for k, v in row[8].items())),
               round(row[9], 1))
        assert key not in seen, f"{row[0]!r} repeats {seen[key]!r}"
        seen[key] = row[0]
