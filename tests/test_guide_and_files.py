"""Custom hardware / model files and the rules-of-thumb table."""

from pathlib import Path

import pytest

from shardplan.cost.comm import collective_cost
from shardplan.errors import ConfigError
from shardplan.guide_table import guide_rows
from shardplan.loaders import load_hardware, load_model

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_custom_cluster_file_overrides_preset():
    hw = load_hardware(str(EXAMPLES / "cluster_h100_roce.yaml"))
    assert hw.name == "h100-roce-4nic" and hw.scale_out_bandwidth == 1e10
    assert hw.peak_flops_bf16 == load_hardware("h100-sxm").peak_flops_bf16  # inherited from base
    # 64 GPUs / 8 nodes, 1 GB ReduceScatter ring: S (63/64) crosses each node boundary through the node's 8 NICs of
    # 1e10 x 0.8 B/s; latency 8.4 us base + 7 node-crossing steps x 20 us + 56 NVLink steps x 5 us (NCCL's
    # per-link ring latency, the preset's default)
    c = collective_cost("ReduceScatter", 1e9, 64, 1, hw)
    assert c.level == "scale-out"
    assert c.time_s == pytest.approx(1e9 * 63 / 64 / (8 * 0.8e10) + 8.4e-6 + 7 * 2e-5 + 56 * 5e-6)


def test_custom_model_file():
    m = load_model(str(EXAMPLES / "tiny_model.yaml"))
    # 16 * (2*2048^2 + 2*2048*512 + 3*2048*5632 + 2*2048) + 2*32000*2048 + 2048
    assert m.n_params == 16 * (2 * 2048**2 + 2 * 2048 * 512 + 3 * 2048 * 5632 + 2 * 2048) + 2 * 32000 * 2048 + 2048


def test_bad_hardware_files(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text("base: h100-sxm\nscale_out_bandwidth: -1\n")
    with pytest.raises(ConfigError, match="scale_out_bandwidth"):
        load_hardware(str(f))
    f.write_text("base: h900\n")
    with pytest.raises(ConfigError, match="h100-sxm"):
        load_hardware(str(f))
    f.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_hardware(str(f))


def test_guide_rows_best_is_never_worse_than_the_rule():
    rows = guide_rows("h100-sxm", ["llama-3-8b"], [8, 64], 4096, 2**20)
    assert [r["devices"] for r in rows] == [8, 64]
    for r in rows:
        assert r["best"].startswith("dp=")
        assert r["rule_delta"] == "same as best" or r["rule_delta"].startswith("-") or "fit" in r["rule_delta"]


def test_guide_uses_the_hardware_files_framework_profile(tmp_path):
    # a cluster file calibrated with a profile that has no pipelining: the guide's best layouts keep pp = 1
    from shardplan.guide_table import guide_rows
    hw = tmp_path / "hw.yaml"
    hw.write_text("base: h100-sxm\nframework:\n  base: megatron\n  pipeline_parallel: false\n")
    rows = guide_rows(str(hw), ["llama-3-70b"], [32], 8192, 4 * 2**20)
    assert "pp=1 " in rows[0]["best"] and "pp=4" not in rows[0]["best"]
    plain = guide_rows("h100-sxm", ["llama-3-70b"], [32], 8192, 4 * 2**20)  # the preset's megatron profile pipelines
    assert "pp=1 " not in plain[0]["best"]
