"""Explanations of ranked plans (shardplan.explain)."""

from __future__ import annotations

import pytest

from shardplan.cost.step import estimate
from shardplan.explain import compare
from shardplan.parallel import ParallelConfig
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

V5E = HARDWARE["tpu-v5e"]  # 256-chip ICI slices joined by DCN
L8 = MODELS["llama-3-8b"]
TR = TrainingSpec(seq_len=4096, global_batch_size=256)


def _one_vs_two_slices(pc: ParallelConfig, n: int, slice_size: int, dcn_bandwidth: float):
    """The same layout on one big ICI domain and on slices of ``slice_size`` chips joined by a slow DCN."""
    big = V5E.model_copy(update={"scale_up_size": n, "name": "v5e-one-slice"})
    small = V5E.model_copy(update={"scale_up_size": slice_size, "scale_out_bandwidth": dcn_bandwidth,
                                   "name": "v5e-slices"})
    return estimate(L8, big, TR, pc, n), estimate(L8, small, TR, pc, n)


def test_pp_on_dcn_is_not_called_data_parallel():
    # regression: `startswith("dp ") and "scale-out" in worst or "DCN" in worst` parsed as
    # `(dp and scale-out) or DCN`, so any collective on DCN (here the pp stage hand-off) was
    # explained as "data-parallel". Devices are ordered tp, cp, dp, pp (pp outermost): with
    # tp*dp = 4*64 = 256 chips per slice, the two pp stages sit on two slices.
    one, two = _one_vs_two_slices(ParallelConfig(tp=4, pp=2, zero_stage=1), 512, 256, 1e8)
    assert any(c.axis == "pp" and c.level == "DCN" for c in two.collectives)
    assert all(c.level != "DCN" for c in two.collectives if c.axis != "pp")
    text = compare(one, two)
    assert "data-parallel" not in text
    assert "pp communication crossing the 256-device scale-up domain: pp SendRecv on DCN" in text


def test_dp_on_dcn_is_data_parallel():
    # cp=2 x tp=4 = 8 chips per cp group, slices of 4 chips: cp and the ZeRO-1 dp collectives cross DCN
    one, two = _one_vs_two_slices(ParallelConfig(tp=4, cp=2, zero_stage=1), 256, 4, 6.25e9)
    text = compare(one, two)
    # cp=2: the ZeRO-1 group holds the dp x cp ranks, named dp-cp (Megatron-LM's group of that name)
    assert "mostly data-parallel dp-cp " in text and "on DCN" in text


def test_tp_crossing_slices_names_tp():
    one, two = _one_vs_two_slices(ParallelConfig(tp=8, zero_stage=1), 256, 4, 1e8)
    assert any(c.axis == "tp" and c.level == "DCN" for c in two.collectives)
    text = compare(one, two)
    assert "tp=8 crosses the 4-device scale-up domain: tp " in text and "data-parallel" not in text


@pytest.mark.parametrize("pc", [ParallelConfig(tp=2, zero_stage=1), ParallelConfig(pp=2, zero_stage=1)])
def test_same_layout_same_throughput(pc):
    e = estimate(L8, V5E, TR, pc, 64)
    assert compare(e, e).startswith("same predicted throughput")


def test_memory_objective_runners_up_are_explained_by_their_memory():
    # ranked by device memory, a runner-up holds more bytes and may well be faster: no "tie" by step time
    from shardplan.search import search
    res = search(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=4096, global_batch_size=64), 8,
                 top_k=3, objective="memory")
    best, other = res.plans[0], res.plans[1]
    text = compare(best, other, "memory")
    extra = (other.memory.total - best.memory.total) / 2**30
    assert f"{extra:+,.2f} GiB per device" in text and "tie" not in text
    assert f"{other.step_s / best.step_s - 1:+.1%} step time" in text
