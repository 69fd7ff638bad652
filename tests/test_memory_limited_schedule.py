"""A compiler that schedules under the memory limit (``FrameworkProfile.memory_limited_schedule``, XLA's
latency-hiding scheduler): a ZeRO-3 layout that does not fit with two gathered units is priced with one,
every AllGather exposed; the search finds such layouts and their memory is the estimate's."""

import pytest

from shardplan.cost.step import estimate, serialized_gathers
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import search
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

GPT3 = MODELS["gpt3-175b"]
V6E = HARDWARE["tpu-v6e"]
#: the tpu-recipes v6e-256 GPT-3 175B run: FSDP 256, 3 sequences of 2,048 per chip, full remat, fp32 weights
LAYOUT = ParallelConfig(zero_stage=3, microbatch_size=3, recompute="full")


def _training(framework):
    return TrainingSpec(seq_len=2048, global_batch_size=768, precision=PRECISION_POLICIES["fp32-params"],
                        framework=framework)


MAXTEXT = framework_profile("maxtext")
NO_LIMIT = MAXTEXT.model_copy(update={"memory_limited_schedule": False})


def test_one_gathered_layer_when_two_do_not_fit():
    # a GPT-3 layer: 12 h^2 + 13 h = 12 x 12,288^2 + 13 x 12,288 = 1,812,099,072 parameters (biases and two
    # layer norms); MaxText gathers the bf16 cast, 2 B each: 3,624,198,144 B per gathered layer
    layer_bytes = 2 * (12 * 12_288**2 + 13 * 12_288)
    assert layer_bytes == 3_624_198_144
    two = estimate(GPT3, V6E, _training(NO_LIMIT), LAYOUT, 256)
    one = estimate(GPT3, V6E, _training(MAXTEXT), LAYOUT, 256)
    assert two.memory.zero3_buffers == 2 * layer_bytes and not two.fits
    assert one.memory.zero3_buffers == layer_bytes and one.fits
    assert two.memory.total - one.memory.total == layer_bytes  # nothing else moves
    assert one.training.framework.zero3_gather_buffers == 1


def test_serialized_gathers_are_exposed_and_priced_in_the_step():
    two = estimate(GPT3, V6E, _training(NO_LIMIT), LAYOUT, 256)
    one = estimate(GPT3, V6E, _training(MAXTEXT), LAYOUT, 256)
    gathers = [c for c in one.collectives if c.op == "AllGather" and c.axis == "dp"]
    assert len(gathers) == 2  # the forward's and the backward's (remat re-gathers nothing more: one unit, one call)
    for c in gathers:
        assert c.exposed_s == pytest.approx(c.time_s, rel=1e-12)  # nothing hides a gather without a second buffer
    rs = next(c for c in one.collectives if c.op == "ReduceScatter")
    assert rs.exposed_s == 0.0  # the gradients' ReduceScatter still hides behind the backward (2 s of 13 s)
    # one microbatch, no pipeline: the step grows by exactly the extra exposed communication
    extra = sum(c.exposed_s for c in one.collectives) - sum(c.exposed_s for c in two.collectives)
    assert one.step_s - two.step_s == pytest.approx(extra, rel=1e-9)
    assert extra > 2.0  # two passes over 96 gathered layers of 3.6 GB on the ICI: seconds


def test_nothing_changes_where_two_buffers_fit_or_one_does_not_help():
    small = ParallelConfig(zero_stage=3, microbatch_size=1, recompute="full")  # fits with prefetch
    a = estimate(GPT3, V6E, _training(MAXTEXT), small, 256)
    b = estimate(GPT3, V6E, _training(NO_LIMIT), small, 256)
    assert a.fits and a.step_s == b.step_s and a.memory.total == b.memory.total
    assert a.training.framework.zero3_gather_buffers == 2
    huge = ParallelConfig(zero_stage=3, microbatch_size=12, recompute="full")  # 4x the activations: no fit either way
    e = estimate(GPT3, V6E, TrainingSpec(seq_len=2048, global_batch_size=3072, precision=PRECISION_POLICIES[
        "fp32-params"], framework=MAXTEXT), huge, 256)
    assert not e.fits and e.training.framework.zero3_gather_buffers == 2  # the prefetching estimate is reported


def test_only_memory_limited_profiles_and_per_microbatch_gathers_serialize():
    tr = _training(MAXTEXT)
    lay = validate(LAYOUT, GPT3, tr, 256)
    assert serialized_gathers(tr, lay).framework.zero3_gather_buffers == 1
    assert serialized_gathers(_training(framework_profile("pytorch-fsdp")), lay) is None  # eager FSDP prefetches anyway
    per_step = validate(LAYOUT.model_copy(update={"zero3_gather": "per_step"}), GPT3, tr, 256)
    assert serialized_gathers(tr, per_step) is None  # the whole stage stays gathered: no unit to serialize
    zero1 = validate(ParallelConfig(zero_stage=1, tp=8, sp=True, pp=8, schedule="gpipe"), GPT3, tr, 256)
    assert serialized_gathers(tr, zero1) is None


def test_search_finds_the_serialized_layout_with_the_estimates_memory():
    tr = _training(MAXTEXT)
    res = search(GPT3, V6E, tr, 256, fix={"tp": 1, "pp": 1, "cp": 1, "zero_stage": 3, "microbatch_size": 3,
                                          "recompute": "full"}, top_k=5)
    assert res.plans, "the run that tpu-recipes ran is found"
    best = res.plans[0]
    direct = estimate(GPT3, V6E, tr, LAYOUT, 256)
    assert best.parallel.microbatch_size == 3 and best.memory.total == direct.memory.total
    assert best.training.framework.zero3_gather_buffers == 1


@pytest.mark.parametrize("fix", [{"tp": 1, "pp": 1, "cp": 1}, {}])
def test_a_serialized_fit_does_not_prune_the_faster_smaller_microbatch(fix):
    # mbs 3 fits only with serialized gathers (17.8 s), mbs 1 with prefetch (15.6 s): the default search's pruning
    # (the largest microbatch that fits is the fastest) must not drop mbs 1; it ranks as the exhaustive search does
    tr = _training(MAXTEXT)
    quick = search(GPT3, V6E, tr, 256, fix=fix, top_k=3)
    full = search(GPT3, V6E, tr, 256, fix=fix, top_k=3, exhaustive=True)
    assert quick.plans[0].parallel == full.plans[0].parallel
    assert quick.plans[0].step_s == full.plans[0].step_s
    if fix:
        assert quick.plans[0].parallel.microbatch_size == 1
        assert quick.plans[0].training.framework.zero3_gather_buffers == 2
