"""benchmarks/usp_forecast.py: the layouts it searches and what it reports for a model that cannot fit."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_one_node_has_eighty_grid_layouts():
    import usp_forecast
    # tp x pp dividing 8 with both powers of two: (1,1) (1,2) (1,4) (1,8) (2,1) (2,2) (2,4) (4,1) (4,2) (8,1) = 10;
    # dp x mbs <= 8 x 8 = 64 always divides 256, so 4 microbatch sizes x 2 ZeRO stages: 10 x 4 x 2 = 80
    lay = usp_forecast.layouts(8)
    assert len(lay) == 80
    assert all(p.dp * p.tp * p.pp == 8 and p.sp == (p.tp > 1) for p in lay)


def test_80b_does_not_fit_on_one_node_and_3b_does():
    import usp_forecast
    from usp_grid import DEFAULT_HW
    from shardplan.inputs import default_framework
    from shardplan.loaders import load_hardware
    from shardplan.presets.frameworks import framework_profile
    hw = load_hardware(str(DEFAULT_HW))
    fw = default_framework(str(DEFAULT_HW)) or framework_profile("nanotron")
    # 80B on 8 GPUs, N = 79,995,084,800: per GPU N / (tp pp) x (2 bf16 + 4 fp32 grad buffer + 12 / dp Adam + master
    # under ZeRO-1) = N / 8 x (6 dp + 12) >= N / 8 x 18 = 180 GB (dp = 1), more than an 80 GiB (85.9 GB) H100
    assert usp_forecast.best("80B", 1, hw, fw) is None
    e = usp_forecast.best("3B", 1, hw, fw)
    assert e is not None and e.runs and e.parallel.dp * e.parallel.tp * e.parallel.pp == 8


def test_unknown_model_and_missing_markers_exit_2(tmp_path):
    script = ROOT / "benchmarks" / "usp_forecast.py"
    r = subprocess.run([sys.executable, str(script), "--models", "3B,13B"], capture_output=True, text=True)
    assert r.returncode == 2 and "13B" in r.stderr and "legal" in r.stderr and "Traceback" not in r.stderr
    doc = tmp_path / "x.md"
    doc.write_text("no markers\n")
    r = subprocess.run([sys.executable, str(script), "--models", "3B", "--doc", str(doc)], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "usp-forecast:start" in r.stderr
    assert doc.read_text() == "no markers\n"


def test_marked_block_refuses_one_marker_and_wrong_order(tmp_path):
    from usp_grid import replace_marked_block
    from shardplan.errors import ConfigError
    b, e = "<!-- x:start -->", "<!-- x:end -->"
    assert replace_marked_block("text", "new", b, e, tmp_path) is None
    assert replace_marked_block(f"a\n{b}\nold\n{e}\nz", "new", b, e, tmp_path) == f"a\n{b}\nnew\n{e}\nz"
    for doc in (f"a\n{b}\nold", f"a\n{e}\nb\n{b}\n"):
        with pytest.raises(ConfigError):
            replace_marked_block(doc, "new", b, e, tmp_path)


def test_fitted_profile_keeps_the_input_profiles_own_fields():
    from usp_grid import profile_overrides
    from shardplan.presets.frameworks import framework_profile
    own = framework_profile("nanotron").model_copy(update={"allocator_base_bytes": 2.0**30})
    assert profile_overrides(own) == {"allocator_base_bytes": 2.0**30}
    assert profile_overrides(framework_profile("nanotron")) == {}


def test_grid_csv_with_a_fractional_node_count_is_refused(tmp_path):
    from usp_grid import load_grid
    from shardplan.errors import ConfigError
    csv = tmp_path / "g.csv"
    # 1.5 nodes = 12 GPUs, but dp x tp x pp = 8
    csv.write_text("model,nodes,dp,tp,pp,zero,mbs,grad_acc,gbs,mfu_pct,tok_s_gpu,tok_s,gpu_mem_gb\n"
                   "1B,1.5,8,1,1,0,1,32,256,38.3,39273,314187,36.7\n")
    # refused by the import's device-count check (dp x tp x pp x cp = 8 x 1 x 1 x 1 = 8 of 1.5 x 8 = 12 devices)
    with pytest.raises(ConfigError, match=r"g.csv:2: dp\*tp\*pp\*cp = 8\*1\*1\*1 = 8 devices, but devices=12"):
        load_grid(csv)


def test_oom_fraction_recovers_a_planted_threshold():
    # relabel the grid's runs: a run "ran" iff its predicted device usage is at most 0.90 of HBM and nothing
    # else fails it; every fraction from 0.90 up to the next run's usage classifies all runs right, and ties go
    # to the largest such candidate
    import dataclasses
    import usp_grid
    from shardplan.loaders import load_hardware
    from shardplan.presets.frameworks import framework_profile
    hw = load_hardware(str(usp_grid.DEFAULT_HW))
    fw = framework_profile("nanotron").model_copy(update={"usable_hbm_fraction": 1.0})
    runs = usp_grid.load_grid(usp_grid.DEFAULT_CSV)[::4]
    planted, above = [], []
    for r in runs:
        e = usp_grid.predict(r, hw, fw)
        ok = not isinstance(e, str) and e.failure is None and e.memory.total <= 0.90 * hw.hbm_bytes
        planted.append(dataclasses.replace(r, tok_s_gpu=1.0 if ok else None))
        if not isinstance(e, str) and e.failure is None and not ok:
            above.append(e.memory.total / hw.hbm_bytes)
    t = usp_grid.oom_fraction(planted, hw, fw)
    assert 0.90 <= t < min(above) <= t + 0.01 + 1e-9


def test_fit_limit_is_the_profiles_fraction_of_hbm():
    # 0.84 x 80 GiB = 72,155,450,081.28 B: a layout fits up to that device usage under nanotron, up to 80 GiB under
    # a profile without the fraction
    from shardplan.cost.memory import hbm_limit
    from shardplan.presets.frameworks import framework_profile
    assert hbm_limit(80 * 2**30, framework_profile("nanotron")) == pytest.approx(0.84 * 80 * 2**30)
    assert hbm_limit(80 * 2**30, framework_profile("megatron")) == 80 * 2**30
