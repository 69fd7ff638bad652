"""The CLI as a user runs it: JSON shape, exit codes, no tracebacks."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from shardplan.cli import app

runner = CliRunner()
BASE = ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "8", "--seq-len", "8192",
        "--global-batch", "64"]


def test_estimate_json_has_documented_keys():
    r = runner.invoke(app, ["estimate", *BASE, "--zero-stage", "3", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["model"]["n_params"] == 8_030_261_248
    assert set(d["memory_bytes"]) >= {"params", "grads", "optimizer", "activations", "total"}
    assert set(d["time_s"]) >= {"step", "compute", "exposed_comm", "bubble", "optimizer"}
    assert {"op", "axis", "bytes_per_device", "time_s", "exposed_s"} <= set(d["collectives"][0])
    for k in ("fits", "mfu", "hfu", "tokens_per_s", "bound"):
        assert k in d


def test_plan_json_feeds_back_into_estimate(tmp_path):
    r = runner.invoke(app, ["plan", *BASE, "--json", "--top", "3"])
    assert r.exit_code == 0, r.output
    plans = json.loads(r.stdout)["plans"]
    assert len(plans) == 3 and all(p["fits"] for p in plans)
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(plans[0]))
    r2 = runner.invoke(app, ["estimate", *BASE, "--plan", str(f), "--json"])
    assert r2.exit_code == 0, r2.output
    assert json.loads(r2.stdout)["tokens_per_s"] == pytest.approx(plans[0]["tokens_per_s"])


@pytest.mark.parametrize("args,needle", [
    (["--tp", "16", "--devices", "16"], "legal tp: 1, 2, 4, 8"),
    (["--zero-stage", "5"], "zero_stage"),
    (["--recompute", "sometimes"], "legal: none, selective, full"),
    (["--model", "gpt5"], "presets"),
    (["--hardware", "h900"], "presets"),
    (["--pp", "3"], "legal pp"),
])
def test_bad_input_exits_2_with_message(args, needle):
    argv = ["estimate", *BASE]
    for i in range(0, len(args), 2):  # later flags override earlier ones
        if args[i] in argv:
            argv[argv.index(args[i]) + 1] = args[i + 1]
        else:
            argv += args[i:i + 2]
    r = runner.invoke(app, argv)
    assert r.exit_code == 2
    assert needle in r.output and "Traceback" not in r.output


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "shardplan", "models"], capture_output=True, text=True)
    assert out.returncode == 0 and "llama-3.1-405b" in out.stdout


def test_hardware_and_models_json():
    r = runner.invoke(app, ["hardware", "--json"])
    hw = json.loads(r.stdout)
    assert hw["h100-sxm"]["peak_flops_bf16"] == pytest.approx(989.4e12)
    r = runner.invoke(app, ["models", "--json"])
    assert json.loads(r.stdout)["gpt2"]["n_params"] == 124_439_808
