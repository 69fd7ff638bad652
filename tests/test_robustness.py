"""Nothing a user types crashes, hangs or lies (issue 15): every example of the issue as a regression
test, and property tests (hypothesis) over the CLI's flags, the loaders and plan files.

Every CLI call runs in-process (typer's CliRunner); the outcome must be exit 0 with a finite result,
exit 1 (a negative result, printed) or exit 2 with one ``error:`` line, never a traceback.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError, divisors, short_repr

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
BASE = ["-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64"]
LLAMA = {"architectures": ["LlamaForCausalLM"], "hidden_size": 1024, "num_hidden_layers": 4,
         "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 2816, "vocab_size": 32000}
# ROBUST_EXAMPLES raises the examples per property for a longer search
SETTINGS = settings(max_examples=int(os.environ.get("ROBUST_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(*args, seconds: float = 20.0):
    """Invoke the CLI in-process; fails on a traceback or a run longer than ``seconds``."""
    t0 = time.time()
    r = runner.invoke(app, [str(a) for a in args])
    assert time.time() - t0 < seconds, f"{args} took {time.time() - t0:.1f} s"
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output
    return r


def _bad(*args, needle: str = ""):
    """The call is refused as bad input: exit 2, one ``error:`` line that contains ``needle``."""
    r = _run(*args)
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and needle in r.output, r.output
    return r


def _finite(x) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_finite(v) for v in x)
    return True


# ---- numbers: physical ranges, checked before any arithmetic ----------------------------------------
@pytest.mark.parametrize("args, needle", [
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "1" + "0" * 400, "-b", "64"], "seq_len"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", str(10**18), "--microbatch-size", "3"],
     "global_batch"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", str(10**18 + 1), "-b", "64", "--cp", "2"], "seq_len"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", str(2**21), "-s", "4096", "-b", "64"], "devices"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--tp", str(2**70)], "tp"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "16777216", "-b", "1000000"], "tokens per step"),
    (["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "--global-batch-tokens", str(2**41)],
     "global_batch_tokens"),
])
def test_huge_numbers_are_refused_at_once(args, needle):
    _bad("estimate", *args, needle=needle)


def test_plan_with_a_batch_of_1e18_returns():
    _bad("plan", "-m", "llama-3-8b", *BASE[:4], "-s", "4096", "-b", str(10**18), needle="global_batch")


@pytest.mark.parametrize("text, needle", [
    ("n_layers: 1e18\nd_model: 256\nn_heads: 4\nffn_dim: 1024\nvocab_size: 1000\n", "n_layers"),
    ("n_layers: 1000000000000000000\nd_model: 256\nn_heads: 4\nffn_dim: 1024\nvocab_size: 1000\n", "legal: "),
])
def test_model_file_numbers(tmp_path, text, needle):
    f = tmp_path / "m.yaml"
    f.write_text(text)
    _bad("estimate", "-m", f, *BASE, "--pp", "3", needle=needle)


@pytest.mark.parametrize("field, value", [("matmul_efficiency", 5e-324), ("hbm_efficiency", 0.001),
                                          ("scale_out_bandwidth", 1e300), ("peak_flops_bf16", 1e30),
                                          ("scale_up_size", 2**40), ("gemm_tiles", [[0, 128]])])
def test_hardware_file_numbers(tmp_path, field, value):
    f = tmp_path / "hw.yaml"
    f.write_text(yaml.safe_dump({"base": "h100-sxm", field: value}))
    _bad("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:], needle=field)


def test_hardware_file_booleans_are_not_numbers(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text("base: h100-sxm\nscale_up_size: true\n")
    _bad("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:], needle="scale_up_size=True")
    f.write_text("base: h100-sxm\nscale_out_bandwidth: 1.0e10\n")  # PyYAML reads this as a string
    r = _run("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:], "--zero-stage", "3", "--json")
    assert r.exit_code == 0, r.output


def test_hardware_file_nan_and_inf(tmp_path):
    for value in (".nan", ".inf", "-.inf"):
        f = tmp_path / "hw.yaml"
        f.write_text(f"base: h100-sxm\nhbm_bandwidth: {value}\n")
        _bad("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:], needle="hbm_bandwidth")


def test_divisors_are_bounded_and_fast():
    t0 = time.time()
    assert divisors(2**40 - 87) == [1, 2**40 - 87]  # a prime: trial division to 2^20
    assert divisors(720720)[:6] == [1, 2, 3, 4, 5, 6]
    assert time.time() - t0 < 2
    with pytest.raises(ConfigError):
        divisors(10**18)


# ---- config files ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["a: 1\n1: 2\n", "true: 3\nn_layers: 2\n", "null: 4\n", "[1, 2]: 5\n"])
def test_yaml_with_non_string_keys(tmp_path, text):
    f = tmp_path / "m.yaml"
    f.write_text(text)
    r = _run("estimate", "-m", f, *BASE)
    assert r.exit_code == 2
    r = _run("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:])
    assert r.exit_code == 2


@pytest.mark.parametrize("name, text", [("deep.json", "[" * 100_000), ("deep.yaml", "a: " + "[" * 100_000),
                                        ("deep2.json", '{"a": ' * 40 + "1" + "}" * 40)])
def test_deeply_nested_documents(tmp_path, name, text):
    f = tmp_path / name
    f.write_text(text)
    _bad("estimate", "-m", f, *BASE, needle="nested")


def test_yaml_alias_bomb_returns(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    f = tmp_path / "bomb.yaml"
    f.write_text("\n".join(lines))
    for flag in ("-m", "-H"):
        args = [flag, f] + (BASE if flag == "-m" else ["-m", "llama-3-8b"] + BASE[2:])
        r = _bad("estimate", *args, needle="values")
        assert len(r.output) < 1000


def test_huge_file_dev_zero_and_fifo(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: 1\n" + "#" * (2 * 2**20))
    _bad("estimate", "-m", big, *BASE, needle="1 MiB")
    _bad("estimate", "-m", "/dev/zero", *BASE, needle="not a regular file")
    _bad("estimate", "-m", "llama-3-8b", "-H", "/dev/zero", *BASE[2:], needle="not a regular file")
    _bad("estimate", "-m", "llama-3-8b", *BASE, "--plan", "/dev/zero", needle="not a regular file")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    _bad("estimate", "-m", fifo, *BASE, needle="FIFO")
    _bad("estimate", "-m", "llama-3-8b", *BASE, "--plan", fifo, needle="FIFO")


@pytest.mark.parametrize("change, needle", [
    ({"tie_word_embeddings": "false"}, "tie_word_embeddings='false'"),
    ({"attention_bias": "true"}, "attention_bias"),
    ({"head_dim": 0}, "head_dim=0"),
    ({"num_hidden_layers": True}, "num_hidden_layers"),
    ({"hidden_size": "1024"}, "hidden_size"),
    ({"num_attention_heads": 12}, "hidden_size=1024 is not divisible by num_attention_heads=12"),
    ({"num_hidden_layers": 10**6}, "num_hidden_layers"),
    ({"num_key_value_heads": 3}, "num_key_value_heads=3 does not divide num_attention_heads=8"),
])
def test_hf_config_values(tmp_path, change, needle):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**LLAMA, **change}))
    _bad("estimate", "-m", f, *BASE, needle=needle)


def test_hf_null_shape_keys():
    from shardplan.loaders import model_from_hf_config
    gpt2 = {"architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257}
    assert model_from_hf_config({**gpt2, "n_inner": None}).ffn_dim == 4 * 768  # null: derived
    with pytest.raises(ConfigError, match="n_embd=None"):
        model_from_hf_config({**gpt2, "n_embd": None})
    assert model_from_hf_config({**LLAMA, "num_key_value_heads": None, "head_dim": None}).kv_heads == 8


def test_hf_config_model_type_without_architectures(tmp_path):
    cfg = {k: v for k, v in LLAMA.items() if k != "architectures"}
    f = tmp_path / "config.json"
    f.write_text(json.dumps({**cfg, "model_type": "llama"}))
    r = _run("estimate", "-m", f, *BASE, "--json")
    assert r.exit_code == 0, r.output
    f.write_text(json.dumps({**cfg, "model_type": "bert"}))
    _bad("estimate", "-m", f, *BASE, needle="architectures")


def test_false_string_is_not_true():
    from shardplan.loaders import model_from_hf_config
    assert model_from_hf_config({**LLAMA, "tie_word_embeddings": False}).tied_embeddings is False
    with pytest.raises(ConfigError, match="not strings"):
        model_from_hf_config({**LLAMA, "tie_word_embeddings": "false"})


def test_empty_names_do_not_read_the_current_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        _bad("estimate", "-m", "", *BASE, needle="empty")
        _bad("estimate", "-m", " ", *BASE, needle="empty")
        _bad("estimate", "-m", "llama-3-8b", "-H", "", *BASE[2:], needle="empty")
        _bad("estimate", "-m", "llama-3-8b", "-H", ".", *BASE[2:], needle="directory")
    finally:
        os.chdir(old)


# ---- plan files ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("plan, needle", [
    ({"tp": True}, "tp=True"), ({"zero_stage": "3"}, "zero_stage='3'"), ({"tp": 2.0}, "tp=2.0"),
    ({"sp": "yes"}, "sp"), ({"zero_stag": 3}, "legal: dp, zero_stage"), ({"pp_layers": [1, "2"]}, "pp_layers"),
    ({"tp": 10**400}, "tp="),
])
def test_plan_files_are_typed_strictly(tmp_path, plan, needle):
    f = tmp_path / "plan.json"
    f.write_text(json.dumps({"parallel": plan}))
    r = _bad("estimate", "-m", "llama-3-8b", *BASE, "--plan", f, needle=needle)
    assert str(f) in r.output  # the message names the file


def test_pp_layers_negative_entry_says_so():
    r = _bad("estimate", "-m", "llama-3-8b", *BASE, "--pp", "2", "--pp-layers", "-1,33")
    assert "-1 layers" in r.output and "sums to" not in r.output


def test_long_values_are_echoed_cut():
    r = _bad("estimate", "-m", "x" * 5000, *BASE)
    # the echoed value is cut (the legal list after "presets:" is as long as the preset table)
    assert len(r.output.splitlines()[0].split(": not a preset")[0]) < 100 and "x" * 100 not in r.output
    r = _bad("estimate", "-m", "llama-3-8b", *BASE, "--schedule", "y" * 5000)
    assert "y" * 100 not in r.output
    assert len(short_repr(list(range(10**6)))) <= 80 and len(short_repr(10**4000)) <= 80


# ---- train flags (checked before JAX loads) ------------------------------------------------------------
@pytest.mark.parametrize("flag, value", [("--num-processes", "0"), ("--seed", "-1"), ("--seed", str(2**70)),
                                         ("--steps", str(10**12)), ("--process-id", "5")])
def test_train_flags_are_range_checked(flag, value):
    _bad("train", "-m", "tiny-llama", flag, value, needle=flag.lstrip("-").split("-")[0])


# ---- exit codes ----------------------------------------------------------------------------------------
def test_negative_results_exit_1():
    r = _run("plan", "-m", "llama-3.1-405b", "-H", "a100-40gb", "-n", "8", "-s", "8192", "-b", "8")
    assert r.exit_code == 1 and "no layout fits" in r.output
    r = _run("estimate", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8", "--json")
    assert r.exit_code == 1 and "does not fit" in r.output
    assert json.loads(r.stdout)["fits"] is False  # still printed
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--zero-stage", "3")
    assert r.exit_code == 0, r.output


def test_version():
    from shardplan import __version__
    r = _run("--version")
    assert r.exit_code == 0 and __version__ in r.output


def test_closed_pipe_is_quiet():
    # ~230 KB of output: more than a pipe's buffer, so the writer meets the closed pipe
    cmd = [sys.executable, "-m", "shardplan", "plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096",
           "-b", "256", "--top", "30", "--json"]
    for args in (cmd, cmd[:-1]):
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=60) == 0, err
        assert "Broken pipe" not in err and "Traceback" not in err and "BrokenPipeError" not in err


# ---- properties ----------------------------------------------------------------------------------------
NUMS = st.one_of(st.integers(-10, 10**6), st.sampled_from([0, -1, 2**20, 2**24, 2**40, 10**18, 10**18 + 1, 2**70]))


@SETTINGS
@given(devices=NUMS, seq=NUMS, batch=NUMS, tp=st.none() | NUMS, mbs=st.none() | NUMS,
       model=st.sampled_from(["tiny-llama", "llama-3-8b", "mixtral-8x7b"]))
def test_estimate_flags_never_crash(devices, seq, batch, tp, mbs, model):
    args = ["estimate", "-m", model, "-H", "h100-sxm", "-n", devices, "-s", seq, "-b", batch, "--json"]
    args += ["--tp", tp] if tp is not None else []
    args += ["--microbatch-size", mbs] if mbs is not None else []
    r = _run(*args)
    assert r.exit_code in (0, 1, 2), r.output
    if r.exit_code in (0, 1):
        assert _finite(json.loads(r.stdout))


JSONISH = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                   max_size=3), max_leaves=6)


@SETTINGS
@given(changes=st.dictionaries(st.sampled_from(sorted(LLAMA) + ["head_dim", "tie_word_embeddings", "model_type",
                                                                "num_local_experts", "attention_bias"]),
                               JSONISH, max_size=3))
def test_hf_configs_give_a_model_or_a_config_error(changes):
    from shardplan.loaders import model_from_hf_config
    try:
        m = model_from_hf_config({**LLAMA, **changes})
    except ConfigError as e:
        assert len(str(e)) < 2000
        return
    assert m.n_params > 0 and m.n_layers >= 1


@SETTINGS
@given(text=st.text(max_size=200) | st.builds(yaml.safe_dump, st.dictionaries(st.text(max_size=12), JSONISH,
                                                                                max_size=4)))
def test_spec_files_give_a_spec_or_a_config_error(text):
    from shardplan.loaders import load_hardware, load_model
    with tempfile.TemporaryDirectory() as tmp:
        for name, load in (("m.yaml", load_model), ("h.yaml", load_hardware), ("m.json", load_model)):
            f = Path(tmp) / name
            f.write_text(text)
            try:
                load(str(f))
            except ConfigError as e:
                assert len(str(e)) < 2000


FIELDS = ["tp", "pp", "cp", "dp", "zero_stage", "sp", "schedule", "pp_layers", "microbatch_size", "zero_stag"]


@SETTINGS
@given(plan=st.dictionaries(st.sampled_from(FIELDS), JSONISH, max_size=3), wrap=st.booleans())
@example(plan={"pp_layers": []}, wrap=False)  # found by CI: pp=len([])=0 was checked outside the file's context
@example(plan={"pp_layers": True}, wrap=False)  # found searching: pp was taken from a pp_layers of the wrong type
@example(plan={"pp_layers": ""}, wrap=False)
def test_plan_files_give_a_layout_or_a_config_error(plan, wrap):
    from shardplan.inputs import LAYOUT_OPTIONS_BY_NAME, parallel_config
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "plan.json"
        f.write_text(json.dumps({"plans": [{"parallel": plan}]} if wrap else plan))
        try:
            pc = parallel_config({}, f)
        except ConfigError as e:
            assert str(f) in str(e) and len(str(e)) < 2000
            return
    for key, value in plan.items():  # accepted values are of the field's JSON type, never coerced
        got = getattr(pc, key)
        if key == "pp_layers":  # a list of stage sizes (the flag's text form, "9,7", is refused in a plan file)
            assert got == LAYOUT_OPTIONS_BY_NAME["pp_layers"].parse(value), (value, got)
        else:
            assert type(got) is type(value), (key, value, got)


def test_guide_and_plan_ranges():
    _bad("guide", "--devices", str(2**30), needle="devices")
    _bad("guide", "--seq-len", str(10**9), needle="seq_len")
    _bad("guide", "--global-batch-tokens", "0", needle="global_batch_tokens")
    _bad("plan", "-m", "llama-3-8b", *BASE, "--top", str(10**18), needle="--top")
    _bad("plan", "-m", "llama-3-8b", *BASE, "--max-tp", "0", needle="--max-tp")


def test_train_refuses_a_model_larger_than_the_host(monkeypatch):
    from shardplan.cli import runtime
    from shardplan.presets.models import MODELS
    monkeypatch.setattr(runtime, "_accelerator_present", lambda: False)
    with pytest.raises(ConfigError, match="--scale-down"):
        runtime.check_host_memory(MODELS["llama-3.1-405b"], 8)  # 6 TiB of model state
    runtime.check_host_memory(MODELS["tiny-llama"], 8)
    # with the layout, activations count too: 8 simulated devices each holding the planner's allocated bytes; a host
    # of 16 GiB refuses 4 x 8 sequences of 8,192 tokens of Llama-3.2-1B (its model state alone, 19.8 GB, is over 16 too,
    # so the host is shrunk to find the activations: 64 GiB passes the state and fails the whole)
    from shardplan.cost.memory import memory_estimate
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.training import TrainingSpec
    m, tr = MODELS["llama-3.2-1b"], TrainingSpec(seq_len=8192, global_batch_size=32)
    lay = validate(ParallelConfig(microbatch_size=4), m, tr, 8)
    need = memory_estimate(m, tr, lay).allocated * 8
    assert m.n_params * 16 < 64 * 2**30 < need
    monkeypatch.setattr(runtime.os, "sysconf", lambda k: 4096 if k == "SC_PAGE_SIZE" else 64 * 2**30 // 4096)
    runtime.check_host_memory(m, 8)  # the model state alone fits in 64 GiB
    with pytest.raises(ConfigError, match="model state and activations"):
        runtime.check_host_memory(m, 8, lay, tr)
    monkeypatch.undo()
    monkeypatch.setattr(runtime, "_accelerator_present", lambda: False)
    with pytest.raises(ConfigError, match="simulated CPU devices"):
        monkeypatch.delenv("XLA_FLAGS", raising=False)
        if "jax" not in sys.modules:
            runtime.configure_host_devices(4096)
        else:
            raise ConfigError("simulated CPU devices (jax already loaded: the flag is not set)")


def test_fix_values():
    plan = ["plan", "-m", "llama-3-8b", *BASE]
    _bad(*plan, "--fix", "tp=true", needle="not a boolean")
    _bad(*plan, "--fix", "tp=" + "[" * 100 + "1" + "]" * 100, needle="nested")
    _bad(*plan, "--fix", "tp=.nan", needle="tp")
    r = _run(*plan, "--fix", 'zero_stage="3"', "--json")
    assert r.exit_code in (0, 1) and all(p["parallel"]["zero_stage"] == 3 for p in json.loads(r.stdout)["plans"])


def test_report_of_a_layout_that_does_not_fit_says_so(tmp_path):
    pytest.importorskip("plotly")
    out = tmp_path / "r.html"
    r = _run("report", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8", "-o", out,
             "--no-plans", seconds=60)
    assert r.exit_code == 1 and "does not fit" in r.output and out.exists()


def test_keys_given_twice_are_refused(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text("base: h100-sxm\nbase: a100-80gb\n")
    _bad("estimate", "-m", "llama-3-8b", "-H", f, *BASE[2:], needle="given twice")
    p = tmp_path / "plan.json"
    p.write_text('{"tp": 2, "tp": 4}')
    _bad("estimate", "-m", "llama-3-8b", *BASE, "--plan", p, needle="given twice")
    f.write_text("common: &c {matmul_efficiency: 0.5}\n")  # anchors and merge keys still work
    from shardplan.loaders import parse_document
    assert parse_document("a: &x {b: 1}\nd: {<<: *x, b: 2}\n", f, False)["d"] == {"b": 2}


@pytest.mark.parametrize("missing", ["hidden_size", "n_layer", "n_head"])
def test_bloom_config_without_a_size_key_names_it(tmp_path, missing):
    # BloomConfig reads hidden_size or n_embed, n_layer or num_hidden_layers, n_head or num_attention_heads: with
    # neither spelling the key is reported (exit 2), not a TypeError from 4 x None
    from typer.testing import CliRunner

    from shardplan.cli import app
    cfg = {"architectures": ["BloomForCausalLM"], "n_layer": 2, "n_head": 2, "hidden_size": 64, "vocab_size": 100}
    del cfg[missing]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    r = CliRunner().invoke(app, ["estimate", "-m", str(path), "-H", "h100-sxm", "-n", "8", "-s", "1024", "-b", "8"])
    assert r.exit_code == 2 and f"lacks the key {missing!r}" in r.output and "Traceback" not in r.output
