"""The pipeline-schedule simulator (pure Python; runs without plotly)."""

from __future__ import annotations

import pytest

from shardplan.cost.pipeline_schedule import SCHEDULES, pipeline_bubble_units, pipeline_schedule, rank_orders
from shardplan.errors import ConfigError

CASES = [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("1f1b", 1, 5, 1), ("interleaved", 4, 8, 2), ("interleaved", 2, 6, 3),
         ("zero-bubble", 4, 8, 1), ("1f1b", 8, 32, 1)]


@pytest.mark.parametrize("schedule,pp,m,v", CASES)
def test_pipeline_timeline(schedule, pp, m, v):
    blocks = pipeline_schedule(pp, m, schedule, v)
    per_stage = {s: [b for b in blocks if b.stage == s] for s in range(pp)}
    for s, bs in per_stage.items():
        if schedule == "zero-bubble":
            assert len(bs) == 3 * m  # F, B (input grad), W (weight grad)
        else:
            assert len(bs) == 2 * m * v
            assert sorted((b.microbatch, b.chunk) for b in bs if b.kind == "F") == \
                sorted((i, c) for i in range(m) for c in range(v))
        bs = sorted(bs, key=lambda b: b.start)
        assert all(a.end <= b.start + 1e-9 for a, b in zip(bs, bs[1:]))  # one pass at a time per stage
    # dependencies: a microbatch's forward on stage s starts after it left stage s-1
    ends = {(b.kind, b.stage, b.microbatch, b.chunk): b.end for b in blocks}
    for b in blocks:
        if b.kind == "F" and b.stage > 0:
            assert b.start >= ends[("F", b.stage - 1, b.microbatch, b.chunk)] - 1e-9
        if b.kind == "B" and b.stage < pp - 1:
            assert b.start >= ends[("B", b.stage + 1, b.microbatch, b.chunk)] - 1e-9
    # the simulated bubble is the planner's: (p-1) T_mb x {1, 1/v, 1/3}, T_mb = 3 units
    factor = {"gpipe": 1.0, "1f1b": 1.0, "interleaved": 1.0 / v, "zero-bubble": 1.0 / 3.0}[schedule]
    assert pipeline_bubble_units(blocks) == pytest.approx((pp - 1) * 3 * factor, rel=1e-9, abs=1e-9)


def test_pipeline_rejects_bad_input():
    with pytest.raises(ConfigError, match="schedule"):
        pipeline_schedule(2, 4, "bogus")
    with pytest.raises(ConfigError, match="divisible by pp"):
        pipeline_schedule(4, 6, "interleaved", 2)
    with pytest.raises(ConfigError, match="virtual_stages"):
        pipeline_schedule(4, 8, "1f1b", 2)
    with pytest.raises(ConfigError, match="must be >= 1"):
        pipeline_schedule(0, 8, "1f1b")


def _idle_fraction(blocks) -> float:
    """Idle time over total time, summed over ranks, computed from the blocks alone."""
    makespan = max(b.end for b in blocks)
    ranks = {b.stage for b in blocks}
    busy = sum(b.duration for b in blocks)
    return (len(ranks) * makespan - busy) / (len(ranks) * makespan)


@pytest.mark.parametrize("schedule,v,expected", [
    # Narayanan et al. 2021 Sec. 2.2.1 (GPipe and 1F1B): bubble t_pb = (p-1)(t_f+t_b), ideal time
    # t_id = m(t_f+t_b), so idle / total = (p-1) / (m+p-1). In simulator units (t_f = 1, t_b = 2):
    # p=4, m=8: busy per rank 8*3 = 24, bubble 3*3 = 9, makespan 33, idle/total = 9/33 = 3/11.
    ("gpipe", 1, 3 / 11),
    ("1f1b", 1, 3 / 11),
    # Sec. 2.2.2 (interleaved, v chunks per rank): bubble (p-1)(t_f+t_b)/v. Each chunk takes
    # F = 1/v = 0.5, B = 2/v = 1 unit, so busy per rank is still m v (1/v + 2/v) = 8*2*1.5 = 24;
    # bubble 3*3/2 = 4.5, makespan 28.5, idle/total = 4.5/28.5 = 3/19 = (p-1)/(v m + p - 1).
    ("interleaved", 2, 3 / 19),
    # ZB-H1 (Qi et al. 2023): bubble (p-1)(T_F + T_B - T_W) with T_F = T_B = T_W = 1 unit: 3;
    # busy per rank 8*3 = 24, makespan 27, idle/total = 3/27 = 1/9 = (p-1)/(3m + p - 1).
    ("zero-bubble", 1, 1 / 9),
])
def test_simulated_bubble_matches_closed_form(schedule, v, expected):
    p, m = 4, 8
    assert expected == pytest.approx({"interleaved": (p - 1) / (v * m + p - 1),
                                      "zero-bubble": (p - 1) / (3 * m + p - 1)}.get(schedule, (p - 1) / (m + p - 1)))
    blocks = pipeline_schedule(p, m, schedule, v)
    assert _idle_fraction(blocks) == pytest.approx(expected, rel=1e-12)
    assert pipeline_bubble_units(blocks) / max(b.end for b in blocks) == pytest.approx(expected, rel=1e-12)


def test_rank_orders_1f1b_warmup():
    # 1F1B on rank s: p - s - 1 warm-up forwards, then F/B alternate; p=3, m=4
    orders = rank_orders(3, 4, "1f1b")
    kinds = ["".join(k for k, _, _ in o) for o in orders]
    assert kinds == ["FFFBFBBB", "FFBFBFBB", "FBFBFBFB"]
    assert all(sorted(mb for k, mb, _ in o if k == "B") == [0, 1, 2, 3] for o in orders)


def test_schedule_names_match_parallel_config():
    from typing import get_args

    from shardplan.parallel import ParallelConfig
    assert set(SCHEDULES) == set(get_args(ParallelConfig.model_fields["schedule"].annotation))


def test_importable_without_plotly():
    import subprocess
    import sys
    code = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('plotly', 'dash', 'matplotlib', 'jax'):\n"
            "            raise ImportError(name)\nsys.meta_path.insert(0, Block())\n"
            "import shardplan.cost.pipeline_schedule as s\nassert s.pipeline_schedule(2, 4)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_pipeline_flushes_pay_the_bubble_each_time():
    # DeepSeek-V3-like accumulation of local batches (NeMo AutoModel's 1,024-GPU recipe): pp=4, interleaved v=8,
    # 32 microbatches per step in 4 flushes of 8. Bubble: 4 x (4 - 1) / 8 = 1.5 microbatch times (one flush of 32:
    # 3/8 = 0.375); in flight on the first stage: min(8, 4 x (1 + 3/32)) = 4.375 either way; the 1F1B version holds
    # min(8, 4) = 4; GPipe holds one flush, 8 (not 32)
    from shardplan.cost.pipeline import bubble_fraction, inflight_microbatches
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    model = ModelSpec(name="t", n_layers=32, d_model=512, n_heads=8, ffn_dim=2048, vocab_size=1024)
    tr = TrainingSpec(seq_len=256, global_batch_size=64)
    base = dict(pp=4, microbatch_size=1, schedule="interleaved", virtual_stages=8)
    one = validate(ParallelConfig(**base), model, tr, 8)  # dp = 2: 32 microbatches per rank
    four = validate(ParallelConfig(**base, pipeline_flushes=4), model, tr, 8)
    assert one.microbatches == four.microbatches == 32
    assert bubble_fraction(one.parallel, one.stage_layers) == 3 / 8
    assert bubble_fraction(four.parallel, four.stage_layers) == 4 * 3 / 8
    assert inflight_microbatches(four) == 4 * (1 + 3 / 32)
    gp = validate(ParallelConfig(pp=4, schedule="gpipe", pipeline_flushes=4), model, tr, 8)
    assert inflight_microbatches(gp) == 8
    assert "flushes=4" in four.parallel.short() and any("pipeline_flushes=4" in n for n in four.notes)


def test_pipeline_flushes_errors_name_the_legal_values():
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    model = ModelSpec(name="t", n_layers=32, d_model=512, n_heads=8, ffn_dim=2048, vocab_size=1024)
    tr = TrainingSpec(seq_len=256, global_batch_size=64)
    with pytest.raises(ConfigError, match=r"pipeline_flushes=4 needs pp > 1.*legal with pp=1: 1"):
        validate(ParallelConfig(pipeline_flushes=4), model, tr, 8)
    # 32 microbatches: 3 does not divide them; under interleaved pp=4 each flush needs a multiple of 4: 1, 2, 4, 8
    with pytest.raises(ConfigError, match=r"pipeline_flushes=3 does not divide the 32 microbatches.*legal: 1, 2, 4, 8$"):
        validate(ParallelConfig(pp=4, schedule="interleaved", virtual_stages=2, pipeline_flushes=3), model, tr, 8)
    # 16 flushes of 2 microbatches: each flush's count must be a multiple of pp=4 for the interleaved schedule
    with pytest.raises(ConfigError, match=r"per pipeline flush \(32 / pipeline_flushes=16\) divisible by pp=4"):
        validate(ParallelConfig(pp=4, schedule="interleaved", virtual_stages=2, pipeline_flushes=16), model, tr, 8)
