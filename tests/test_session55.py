"""Findings of the fifty-fifth session: each test fails on the behaviour before the fix."""

import pytest

from test_session54 import _TINY_TPUT


def test_calibrated_file_names_its_records_precision_and_estimate_notes_another(tmp_path):
    # the fit's memory terms absorb the buffers of the precision policy its records were priced in (new-user pass 54b:
    # allocator_overhead 0.025 -> 0.133 on bf16-gradient pricing of fp32-gradient runs): the file says which policy,
    # and a command pricing another one says so
    import yaml
    from typer.testing import CliRunner

    from shardplan.cli import app
    runs = tmp_path / "runs.jsonl"
    runs.write_text(_TINY_TPUT.replace('"tokens_per_s_per_device": 0.001', '"tokens_per_s_per_device": 5153.0') + "\n")
    out = tmp_path / "fit.yaml"
    r = CliRunner().invoke(app, ["calibrate", str(runs), "-H", "h100-sxm", "-o", str(out), "--no-cross-validation"])
    assert out.exists(), r.output
    # the seven records give no precision: the megatron profile prices them as bf16-mixed
    assert yaml.safe_load(out.read_text())["sources"]["fitted_precision"] == "bf16-mixed (7 records)"
    args = ["estimate", "-m", "llama-3-8b", "-H", str(out), "-n", "8", "-s", "4096", "-b", "64", "--tp", "8"]
    same = CliRunner().invoke(app, args)
    other = CliRunner().invoke(app, [*args, "--precision", "bf16-mixed-fp32-grads"])
    assert "calibrated on records in" not in same.output
    assert "calibrated on records in bf16-mixed (7 records); this prices bf16-mixed-fp32-grads" in \
        " ".join(other.output.split())


def test_megatron_import_cli_exits_2_on_a_misspelt_layout_flag(tmp_path):
    # breaker finding (session 54): --tensor-model-paralel-size 4 was noted and the layout priced at tp = 1, exit 0
    from typer.testing import CliRunner

    from shardplan.cli import app
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py --bf16 --num-layers 32 --hidden-size 4096 "
                      "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                      "--global-batch-size 64 --tensor-model-paralel-size 4\n")
    r = CliRunner().invoke(app, ["import", "--from", "megatron", str(script)])
    assert r.exit_code == 2 and "did you mean --tensor-model-parallel-size" in " ".join(r.output.split())


def test_rules_of_thumb_read_tp8_as_the_node_and_pcie_is_named():
    # new-user pass 55: on 4-GPU PCIe nodes the playbook's "TP=8" put half of every tp group across 25 GbE
    from shardplan.cost.comm import level_names
    from shardplan.explain import rules_of_thumb
    from shardplan.inputs import hardware_spec
    rules = rules_of_thumb(3e9, 24, 4096, False, "gpu", None, node_size=4)
    assert {r.fix.get("tp") for r in rules} == {4, 1} and any("TP=4 (the node" in r.text for r in rules)
    assert {r.fix.get("tp") for r in rules_of_thumb(3e9, 24, 4096, False, "gpu")} == {8, 1}  # 8-GPU nodes unchanged
    # a scale-up level at PCIe Gen5 x16's 64 GB/s or below is PCIe; the presets' NVLink (>= 150 GB/s) stays NVLink
    pcie = hardware_spec("a100-40gb").model_copy(update={"scale_up_bandwidth": 20e9})
    assert level_names(pcie)[0] == "PCIe"
    assert level_names(hardware_spec("a100-40gb"))[0] == "NVLink"
    assert level_names(hardware_spec("mi300x"))[0] == "Infinity Fabric"


def test_scale_up_size_override_says_the_bandwidth_stays():
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "a100-40gb", "-n", "8", "-s", "4096", "-b", "64",
                                 "--zero-stage", "3", "--scale-up-size", "4"])
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "its bandwidth stays 300 GB/s per GPU (NVLink of the preset)" in text


def test_mesh_topology_only_on_a_gpu_node_of_at_most_8(tmp_path):
    # breaker pass 55: base tpu-v5p with scale_up_topology mesh gave a 2-chip group 1/8,959 of the link (MFU 0.05%)
    from shardplan.errors import ConfigError
    from shardplan.loaders import load_hardware
    for body, field in (("base: tpu-v5p\nscale_up_topology: mesh\n", "scale_up_topology"),
                        ("base: gb200\nscale_up_topology: mesh\n", "scale_up_topology"),
                        ("base: h100-sxm\nici_dims: 2\n", "ici_dims")):
        f = tmp_path / "hw.yaml"
        f.write_text(body)
        with pytest.raises(ConfigError) as err:
            load_hardware(str(f))
        assert err.value.field == field
    f = tmp_path / "ok.yaml"
    f.write_text("base: h100-sxm\nscale_up_topology: mesh\n")  # an 8-GPU mesh node is legal
    assert load_hardware(str(f)).scale_up_topology == "mesh"


def test_a_diverged_run_exits_1_without_a_record(tmp_path):
    # breaker pass 55: train --lr 1e30 printed 'loss nan', exited 0 and appended a record with status ok
    import typer

    from shardplan.cli.train import _diverged
    rec = tmp_path / "runs.jsonl"
    _diverged([{"step": 1, "loss": 5.1}, {"step": 2, "loss": 4.9}], rec)  # finite: nothing happens
    with pytest.raises(typer.Exit) as err:
        _diverged([{"step": 1, "loss": 5.1}, {"step": 2, "loss": float("nan")}], rec)
    assert err.value.exit_code == 1 and not rec.exists()
