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


# ---- regressions from adversarial testing ---------------------------------------------------------

def _run(*argv):
    r = runner.invoke(app, list(argv))
    assert "Traceback" not in r.output
    return r


def test_unreadable_and_malformed_files(tmp_path):
    binf = tmp_path / "bin.json"
    binf.write_bytes(b"\xff\xfe\x00garbage")
    r = _run("estimate", *BASE[2:], "--model", str(binf))
    assert r.exit_code == 2 and "not UTF-8" in r.output
    plans = tmp_path / "p.json"
    plans.write_text('{"plans": 5}')
    r = _run("estimate", *BASE, "--plan", str(plans))
    assert r.exit_code == 2 and "must be a list" in r.output
    hw = tmp_path / "hw.yaml"
    hw.write_text("base: h100-sxm\nhbm_bytes: .inf\n")
    r = _run("estimate", *BASE[:2], "--hardware", str(hw), *BASE[4:])
    assert r.exit_code == 2 and "finite" in r.output
    hw.write_text("base: h100-sxm\nruntime_reserve_bytes: 1.0e12\n")
    r = _run("estimate", *BASE[:2], "--hardware", str(hw), *BASE[4:])
    assert r.exit_code == 2 and "no usable memory" in r.output


def test_plan_file_overridden_by_explicit_default_flag(tmp_path):
    f = tmp_path / "plan.json"
    f.write_text(json.dumps({"parallel": {"tp": 8, "zero_stage": 1}}))
    r = _run("estimate", *BASE, "--plan", str(f), "--tp", "1", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)["parallel"]
    assert d["tp"] == 1 and d["zero_stage"] == 1  # --tp 1 given explicitly wins; zero_stage comes from the file


def test_fix_errors_are_specific():
    r = _run("plan", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "16", "--seq-len", "8192",
             "--global-batch", "64", "--fix", "tp=16")
    assert r.exit_code == 2 and "legal tp: 1, 2, 4, 8" in r.output
    r = _run("plan", *BASE, "--fix", "tp=8,pp=1", "--json", "--top", "2")
    assert r.exit_code == 0
    assert all(p["parallel"]["tp"] == 8 and p["parallel"]["pp"] == 1 for p in json.loads(r.stdout)["plans"])
    r = _run("plan", *BASE, "--fix", "tp=2", "--fix", "tp=4")
    assert r.exit_code == 2 and "twice" in r.output


def test_guide_and_paths():
    assert _run("guide", "--devices", "0").exit_code == 2
    r = _run("guide", "-m", "llama-3-8b", "-n", "8", "--markdown", "/proc/nope/x.md")
    assert r.exit_code == 2 and "cannot access" in r.output


def test_hf_config_shape_errors(tmp_path):
    from shardplan.errors import ConfigError
    from shardplan.loaders import model_from_hf_config
    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
            "vocab_size": 100}
    assert model_from_hf_config({**base, "architectures": "LlamaForCausalLM"}).n_layers == 2
    for bad in (5, {"a": 1}):
        with pytest.raises(ConfigError, match="list of strings"):
            model_from_hf_config({**base, "architectures": bad})
    with pytest.raises(ConfigError, match="no 'architectures'"):
        model_from_hf_config({**base, "model_type": "llama"})
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**base, "architectures": ["LlamaForCausalLM"], "num_key_value_heads": 3}))
    r = _run("estimate", "--model", str(cfg), "--hardware", "h100-sxm", "-n", "1", "-s", "128", "-b", "1")
    assert r.exit_code == 2 and "n_kv_heads=3 must divide n_heads=4" in r.output
