"""Fixes from a breaker pass on ``--framework NAME+field=value``, plan files that give devices / sequence / batch,
``shardplan import`` and ``record import`` / ``calibrate``: each test fails on the behaviour it found."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.export import import_config

runner = CliRunner()

_PLAN = {"model": {"name": "llama-3-8b"}, "hardware": {"name": "h100-sxm", "devices": 8},
         "training": {"seq_len": 4096, "global_batch_size": 64},
         "parallel": {"dp": 8, "zero_stage": 1, "tp": 1, "pp": 1, "microbatch_size": 1}}


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("text, says", [
    ("", "is not valid JSON"),
    (json.dumps(_PLAN)[:60], "is not valid JSON"),
    (json.dumps({"plans": []}), "empty 'plans' list"),
    (json.dumps({**_PLAN, "hardware": {"name": "h100-sxm", "devices": "8"}}), "hardware.devices='8'"),
    (json.dumps({**_PLAN, "hardware": {"name": "h100-sxm", "devices": -8}}), "hardware.devices=-8"),
    (json.dumps({**_PLAN, "training": {"seq_len": 4096.5, "global_batch_size": 64}}), "training.seq_len=4096.5"),
    (json.dumps({**_PLAN, "training": {"seq_len": 4096, "global_batch_size": "64"}}),
     "training.global_batch_size='64'"),
], ids=["empty", "truncated", "no-plans", "devices-text", "devices-negative", "seq-len-float", "batch-text"])
def test_a_broken_plan_file_is_named_before_the_flags_it_would_give(tmp_path, text, says):
    # estimate / export / report take --devices, --seq-len and --global-batch from the plan file: a file that cannot
    # be read, or records them with the wrong type, said "--devices is missing ... records none" (or "give exactly
    # one of --global-batch or --global-batch-tokens"), or printed "note: --devices -8 from --plan" first
    path = tmp_path / "plan.json"
    path.write_text(text)
    for cmd in (["estimate"], ["export", "--to", "megatron", "-o", tmp_path / "out.sh"]):
        r = _run(*cmd, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--plan", path)
        assert r.exit_code == 2 and says in r.output, r.output
        assert "is missing" not in r.output and "exactly one of" not in r.output and "from --plan" not in r.output
        assert not (tmp_path / "out.sh").exists()


def test_deepspeed_import_refuses_a_key_given_twice():
    # DeepSpeed reads a ds_config with object_pairs_hook=dict_raise_error_on_duplicate_keys ("Duplicate keys in
    # DeepSpeed config"); the import kept the last value silently (a batch of 32 where the run would not start)
    text = '{"train_batch_size": 64, "train_batch_size": 32, "train_micro_batch_size_per_gpu": 1}'
    with pytest.raises(ConfigError, match="'train_batch_size' is given twice.*Duplicate keys"):
        import_config("deepspeed", text, devices=8)
    nested = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1, "stage": 3}}'
    with pytest.raises(ConfigError, match="'stage' is given twice"):
        import_config("deepspeed", nested, devices=8)


_RECORD = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
           "parallel": {"dp": 8, "zero_stage": 1, "microbatch_size": 1}, "status": "ok",
           "tokens_per_s_per_device": 8000.0}


def test_record_import_names_how_to_give_a_missing_field(tmp_path):
    # "hardware is missing (a required field)" named no legal alternative; the ways to give it are a column, --map
    # and --set (docs/calibration.md)
    csv = tmp_path / "runs.csv"
    csv.write_text("model,devices,seq_len,global_batch_size,dp,tokens_per_s_per_device\nllama-3-8b,8,4096,64,8,9000\n")
    r = _run("record", "import", csv, "-o", tmp_path / "runs.jsonl")
    assert r.exit_code == 2 and "hardware is missing" in r.output, r.output
    assert "--set hardware=VALUE" in r.output and "--map hardware=COLUMN" in r.output


@pytest.mark.parametrize("change, says", [
    ({"model": "no-such-model"}, "model='no-such-model'"),
    ({"devices": 16}, "devices=16"),
])
def test_calibrate_names_the_file_and_line_of_a_refused_record(tmp_path, change, says):
    # an unknown model or a layout the planner refuses was reported as "record 1: ..." without the records file and
    # line that check_physical's errors name
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(_RECORD) + "\n" + json.dumps({**_RECORD, **change}) + "\n")
    if "devices" in change:  # every record refused: the message quotes the first reason
        path.write_text(json.dumps({**_RECORD, **change}) + "\n")
    r = _run("calibrate", path, "--hardware", "h100-sxm", "--no-cross-validation", "-o", tmp_path / "c.yaml")
    line = 1 if "devices" in change else 2
    assert r.exit_code == 2 and f"{path}:{line}: record {line}" in r.output and says in r.output, r.output


def test_a_records_line_that_gives_a_key_twice_is_refused(tmp_path):
    # json.loads kept the last "status" silently; plan and spec files refuse a repeated key (loaders.parse_document)
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(_RECORD)[:-1] + ', "status": "oom"}\n')
    r = _run("calibrate", path, "--hardware", "h100-sxm", "--no-cross-validation", "-o", tmp_path / "c.yaml")
    assert r.exit_code == 2 and f"{path}:1" in r.output and "'status' is given twice" in r.output, r.output


@pytest.mark.parametrize("typed", [" megatron+loss=in_place", "megatron +loss=in_place", "Megatron+loss=in_place",
                                   "megatron+ loss = in_place"])
def test_inline_overrides_with_spaces_or_capitals_keep_their_spec(typed):
    # the profile kept the typed text as its origin, and FrameworkProfile.inline compares it with "megatron+": with a
    # space before a "+" the override was read but --json recorded framework "megatron" (a plan file that loses
    # loss=in_place) and the 80% band said "your profile is a file"
    r = _run("estimate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", 8, "--seq-len", 4096,
             "--global-batch", 64, "--framework", typed, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["training"]["framework"] == "megatron+loss=in_place"
    assert "is a file" not in d["throughput_band"]["group"] and "overrides loss=in_place" in d["throughput_band"]["group"]


def test_an_unknown_inline_field_is_not_offered_base_or_name():
    # the legal list came from the profile-file reader and began "base, name", which inline overrides refuse
    r = _run("estimate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", 8, "--seq-len", 4096,
             "--global-batch", 64, "--framework", "megatron+bogus=1")
    assert r.exit_code == 2 and "'bogus' is not a profile field; legal: collective_overhead_s" in r.output, r.output
    assert "legal: base, name" not in r.output


@pytest.mark.parametrize("cmd", [["export", "--to", "torchtitan"], ["export", "--to", "maxtext", "--zero-stage", 3],
                                 ["plan", "--export", "nanotron"]])
def test_an_export_that_cannot_run_the_in_place_loss_is_refused(tmp_path, cmd):
    # like loss_chunks (refused by every exporter but MaxText): Transformer Engine's in-place cross-entropy is a
    # Megatron-LM flag; torchtitan / MaxText / nanotron / DeepSpeed / EasyDeL files were written priced with it, so
    # their header's memory left out the logits' gradient their own loss keeps
    out = tmp_path / "out.cfg"
    r = _run(*cmd, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", 8, "--seq-len", 4096,
             "--global-batch", 64, "--framework", "megatron+loss=in_place", "-o", out)
    assert r.exit_code == 2 and "cannot express loss='in_place'" in r.output and "Megatron-LM writes it" in r.output, \
        r.output
    assert not out.exists()
