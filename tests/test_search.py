"""Search: ranking, pruning that never loses the best layout, explanations."""

from pathlib import Path

import pytest

from shardplan.calibration import load_rows, row_inputs
from shardplan.cost.step import estimate
from shardplan.explain import compare
from shardplan.parallel import ParallelConfig
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import balanced_split, parse_fix, search
from shardplan.errors import ConfigError
from shardplan.specs.training import TrainingSpec

H100 = HARDWARE["h100-sxm"]
L8 = MODELS["llama-3-8b"]
from shardplan.calibration import DEFAULT_CSV as CSV  # noqa: E402


def test_never_pipelines_an_8b_model_inside_one_node():
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    res = search(L8, H100, tr, 8, top_k=20)
    assert res.plans and all(e.parallel.pp < 8 for e in res.plans)
    pp8 = estimate(L8, H100, tr, ParallelConfig(pp=8, schedule="zero-bubble"), 8)
    assert pp8.tokens_per_s < res.plans[0].tokens_per_s
    assert all(e.fits for e in res.plans)


def test_exhaustive_search_finds_the_same_best():
    tr = TrainingSpec(seq_len=4096, global_batch_size=32)
    fast = search(L8, H100, tr, 8, top_k=1)
    full = search(L8, H100, tr, 8, top_k=1, exhaustive=True)
    assert fast.plans[0].tokens_per_s == pytest.approx(full.plans[0].tokens_per_s, rel=2e-3)
    assert full.n_layouts > fast.n_layouts


def test_more_devices_never_lower_best_throughput():
    prev = 0.0
    for n in (8, 16, 32, 64):
        tr = TrainingSpec(seq_len=4096, global_batch_size=4 * n)  # same per-device batch
        best = search(L8, H100, tr, n, top_k=1).plans[0].tokens_per_s
        assert best >= prev * 0.999
        prev = best


def test_explanation_names_tp_crossing_nodes():
    # a cluster with a slow scale-out network (12.5 GB/s per GPU): tp=16 spans two 8-GPU nodes
    slow = H100.model_copy(update={"scale_out_bandwidth": 12.5e9, "name": "h100-slow-ib"})
    m = MODELS["llama-3-70b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    best = search(m, slow, tr, 64, top_k=1).plans[0]
    tp16 = search(m, slow, tr, 64, top_k=1, fix={"tp": 16, "kv_replication": True}).plans[0]
    text = compare(best, tp16)
    assert "tp=16 crosses the 8-device scale-up domain" in text and "scale-out" in text
    assert any(c.axis == "tp" and c.level == "scale-out" for c in tp16.collectives)


@pytest.mark.parametrize("row_id", ["korthikanti22_175B", "korthikanti22_22B", "tt_a100_llama3_8b_64",
                                    "maxtext_v5p_32b_2xv5p128", "llmfoundry_MPT_7B_H100_8", "bloom_176b"])
def test_search_contains_published_layouts(row_id):
    row = next(r for r in load_rows(CSV) if r["id"] == row_id)
    model, hw, tr, pc, n = row_inputs(row)
    published = estimate(model, hw, tr, pc, n)
    best = search(model, hw, tr, n, top_k=1, fix={"overlap_grad_reduce": pc.overlap_grad_reduce}).plans[0]
    assert best.tokens_per_s >= published.tokens_per_s * (1 - 1e-9)


def test_memory_objective_and_fix():
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    res = search(L8, H100, tr, 8, top_k=3, objective="memory")
    assert res.plans[0].memory.total <= res.plans[-1].memory.total
    fixed = search(L8, H100, tr, 8, top_k=5, fix=parse_fix(["tp=2", "sp=true"]))
    assert all(e.parallel.tp == 2 and e.parallel.sp for e in fixed.plans)
    with pytest.raises(ConfigError, match="not a layout field"):
        parse_fix(["tensor=2"])
    with pytest.raises(ConfigError, match="objective"):
        search(L8, H100, tr, 8, objective="speed")


def test_infeasible_layouts_are_reported():
    tr = TrainingSpec(seq_len=8192, global_batch_size=8)
    res = search(MODELS["llama-3-70b"], H100, tr, 8, top_k=3, keep_infeasible=True)
    assert res.infeasible and all(not e.fits for e in res.infeasible)


def test_balanced_split_covers_every_layer():
    assert balanced_split(30, 4) == (7, 8, 8, 7)
    assert sum(balanced_split(126, 32)) == 126
