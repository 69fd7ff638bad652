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
