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
    with pytest.raises(ConfigError, match="'train_batch_size' twice"):
        import_config("deepspeed", text, devices=8)
    nested = '{"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 1, "stage": 3}}'
    with pytest.raises(ConfigError, match="'stage' twice"):
        import_config("deepspeed", nested, devices=8)
