"""The CLI as a user runs it: JSON shape, exit codes, no tracebacks."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shardplan.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
BASE = ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "8", "--seq-len", "8192",
        "--global-batch", "64"]


def _printed(r):
    """An estimate that was printed: exit 0, or exit 1 when its layout does not fit (issue 15)."""
    assert r.exit_code == 0 or (r.exit_code == 1 and "does not fit" in r.output), r.output


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
    _printed(r)
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
    # refused before the guide is computed (check_output_path), as every other output path
    assert r.exit_code == 2 and "folder /proc/nope does not exist" in r.output


def test_hf_config_shape_errors(tmp_path):
    from shardplan.errors import ConfigError
    from shardplan.loaders import model_from_hf_config
    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
            "vocab_size": 100}
    assert model_from_hf_config({**base, "architectures": "LlamaForCausalLM"}).n_layers == 2
    for bad in (5, {"a": 1}):
        with pytest.raises(ConfigError, match="list of strings"):
            model_from_hf_config({**base, "architectures": bad})
    # a supported model_type stands in for a missing architectures list (issue 15); others are refused
    assert model_from_hf_config({**base, "model_type": "llama"}).n_layers == 2
    with pytest.raises(ConfigError, match="no 'architectures'"):
        model_from_hf_config({**base, "model_type": "bert"})
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({**base, "architectures": ["LlamaForCausalLM"], "num_key_value_heads": 3}))
    r = _run("estimate", "--model", str(cfg), "--hardware", "h100-sxm", "-n", "1", "-s", "128", "-b", "1")
    assert r.exit_code == 2 and "num_key_value_heads=3 does not divide num_attention_heads=4" in r.output and "legal num_key_value_heads: 1, 2, 4" in r.output


# ---- layout options generated from ParallelConfig ------------------------------------------------

LAYOUT_COMMANDS = ("estimate", "plan", "report", "train", "validate", "shardings")


def _click_params(command):
    import typer.main
    return {p.name: p for p in typer.main.get_command(app).commands[command].params}


@pytest.mark.parametrize("command", LAYOUT_COMMANDS)
def test_every_parallel_config_field_is_an_option(command):
    import typing

    from shardplan.parallel import ParallelConfig
    params = _click_params(command)
    for name, field in ParallelConfig.model_fields.items():
        assert name in params, f"`shardplan {command}` has no option for ParallelConfig.{name}"
        p = params[name]
        assert "--" + name.replace("_", "-") in p.opts  # today's spellings: --zero-stage, --microbatch-size...
        assert field.description and field.description in p.help
        if typing.get_origin(field.annotation) is typing.Literal:  # choices from the Literal, in order
            assert p.metavar == "[" + "|".join(typing.get_args(field.annotation)) + "]"
        if field.annotation is bool:
            assert p.secondary_opts == ["--no-" + name.replace("_", "-")]


def test_old_flag_spellings_still_parse():
    r = _run("estimate", *BASE, "--dp", "2", "--tp", "2", "--pp", "2", "--cp", "1", "--ep", "1", "--zero-stage", "1",
             "--dp-shard", "2", "--sp", "--microbatch-size", "2", "--schedule", "interleaved", "--virtual-stages", "2",
             "--recompute", "selective", "--json")
    assert r.exit_code == 0, r.output
    p = json.loads(r.stdout)["parallel"]
    assert (p["dp"], p["tp"], p["pp"], p["zero_stage"], p["dp_shard"], p["sp"], p["microbatch_size"]) == \
        (2, 2, 2, 1, 2, True, 2)
    assert (p["schedule"], p["virtual_stages"], p["recompute"]) == ("interleaved", 2, "selective")
    assert json.loads(_run("estimate", *BASE, "--no-sp", "--json").stdout)["parallel"]["sp"] is False


def test_new_layout_flags():
    # llama-3-8b: 32 heads, 8 KV heads; tp=16 needs --kv-replication (each KV head on 2 ranks)
    argv = ["estimate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "16", "--seq-len", "8192",
            "--global-batch", "64", "--tp", "16"]
    assert _run(*argv).exit_code == 2
    r = _run(*argv, "--kv-replication", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parallel"]["kv_replication"] is True
    # uneven pipeline split of the 32 layers
    r = _run("estimate", *BASE, "--pp", "2", "--pp-layers", "17,15", "--json")
    _printed(r)
    assert json.loads(r.stdout)["parallel"]["pp_layers"] == [17, 15]
    r = _run("estimate", *BASE, "--pp", "2", "--pp-layers", "17,x")
    assert r.exit_code == 2 and "whole numbers" in r.output
    for flag, value, key in (("--fsdp-unit", "tensor", "fsdp_unit"), ("--zero3-gather", "per_step", "zero3_gather")):
        # (the per-step gather under a profile that keeps it: NeMo AutoModel FSDP2; Megatron-FSDP re-gathers per microbatch)
        fw = ("--framework", "automodel") if value == "per_step" else ()
        r = _run("estimate", *BASE, "--zero-stage", "3", flag, value, *fw, "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["parallel"][key] == value
    r = _run("estimate", *BASE, "--no-overlap-grad-reduce", "--tp", "2", "--sp", "--tp-overlap", "--json")
    _printed(r)
    p = json.loads(r.stdout)["parallel"]
    assert p["overlap_grad_reduce"] is False and p["tp_overlap"] is True
    # at tp = 1 there is nothing to overlap: the validated layout drops the flag (the exporters then agree)
    r = _run("estimate", *BASE, "--tp-overlap", "--json")
    assert json.loads(r.stdout)["parallel"]["tp_overlap"] is False


def test_unknown_schedule_lists_the_literal():
    import typing

    from shardplan.parallel import Schedule
    r = _run("estimate", *BASE, "--schedule", "bogus")
    assert r.exit_code == 2 and "legal: " + ", ".join(typing.get_args(Schedule)) in r.output


def test_plan_layout_flags_pin_fields():
    r = _run("plan", *BASE, "--tp", "8", "--json", "--top", "2")
    assert r.exit_code == 0, r.output
    assert all(p["parallel"]["tp"] == 8 for p in json.loads(r.stdout)["plans"])
    r = _run("plan", *BASE, "--schedule", "1f1b", "--schedule", "zero-bubble", "--pp", "2", "--json", "--top", "3")
    assert r.exit_code == 0, r.output
    assert {p["parallel"]["schedule"] for p in json.loads(r.stdout)["plans"]} <= {"1f1b", "zero-bubble"}
    r = _run("plan", *BASE, "--tp", "4", "--fix", "tp=8")
    assert r.exit_code == 2 and "twice" in r.output


def test_new_parallel_config_field_appears_everywhere():
    """A field added to ParallelConfig becomes an option of every layout command and a control of the
    web form, with its description, without touching the CLI or the web app."""
    code = """
import sys
from pydantic import Field
import shardplan.parallel as P
class PC(P.ParallelConfig):
    new_knob: int = Field(default=3, gt=0, description="a knob added to ParallelConfig")
P.ParallelConfig = PC
import typer.main
from shardplan.cli import app
cli = typer.main.get_command(app)
for name in %r:
    p = {p.name: p for p in cli.commands[name].params}["new_knob"]
    assert p.opts == ["--new-knob"] and "a knob added" in p.help, name
from shardplan.inputs import parallel_config
assert parallel_config({"new_knob": 5}).new_knob == 5
from shardplan.web.app import CONTROLS, DEFAULTS, create_app
assert "new_knob" in CONTROLS and DEFAULTS["new_knob"] == 3
ids = set()
def walk(node):
    ids.add(getattr(node, "id", None))
    kids = getattr(node, "children", None)
    for k in kids if isinstance(kids, (list, tuple)) else [kids]:
        if k is not None and not isinstance(k, (str, int, float)):
            walk(k)
walk(create_app().layout)
assert "new_knob" in ids
""" % (LAYOUT_COMMANDS,)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_cli_import_loads_no_jax():
    code = ("import sys, shardplan.cli\n"
            "assert not any(m.split('.')[0] in ('jax', 'jaxlib', 'flax') for m in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_framework_flag_and_web_control():
    # nanotron accumulates gradients in an fp32 buffer: 4 B/param instead of bf16-mixed's 2;
    # llama-3-8b has 8,030,261,248 parameters and zero_stage=0 keeps every gradient on each device
    n = 8_030_261_248
    r = _run("estimate", *BASE, "--framework", "nanotron", "--json")
    _printed(r)
    assert json.loads(r.stdout)["memory_bytes"]["grads"] == n * 4
    assert json.loads(_run("estimate", *BASE, "--json").stdout)["memory_bytes"]["grads"] == n * 2
    r = _run("estimate", *BASE, "--framework", "bogus")
    assert r.exit_code == 2 and "nanotron" in r.output
    pytest.importorskip("dash")
    from shardplan.web.app import CONTROLS, DEFAULTS, build_estimate
    values = {**DEFAULTS, "devices": 8, "seq_len": 8192, "global_batch": 64, "zero_stage": 0, "framework": "nanotron"}
    assert "framework" in CONTROLS
    assert build_estimate({c: values[c] for c in CONTROLS}).memory.grads == n * 4


def test_plan_rules_of_thumb_are_not_tried_against_a_contradicting_pin():
    # the ZeRO-3 rules of the decision guide need zero_stage=3; with --fix zero_stage=1 they are reported as not
    # tried, never as "the best layout under the rule" with ZeRO-1 in it
    r = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256",
                            "--fix", "zero_stage=1", "--top", "1", "--json"])
    assert r.exit_code == 0, r.output
    rules = json.loads(r.stdout)["rules_of_thumb"]
    zero3 = [x for x in rules if "ZeRO-3" in x["rule"] and "inefficient" not in x["rule"]]
    assert zero3 and all(x["plan"] is None and "needs zero_stage=3, the pinned zero_stage=1" in x["note"]
                         for x in zero3)


def test_bad_input_cases_from_the_tenth_session_helper(tmp_path):
    # fp8 on a TPU names the precision and lists the precisions that run there
    r = _run("estimate", "-m", "llama-3-8b", "-H", "tpu-v4", "-n", "256", "-s", "4096", "-b", "256", "--zero-stage", "3",
             "--precision", "fp8-mixed")
    assert r.exit_code == 2 and "precision=fp8-mixed" in r.output and "bf16-mixed" in r.output
    # an offloaded optimizer needs a host link (every preset has one since the TPUs got the Scaling Book's: a hardware
    # file without one)
    no_link = tmp_path / "no_link.yaml"
    no_link.write_text("base: tpu-v5p\nhost_bandwidth: null\n")
    r = _run("estimate", "-m", "llama-3-8b", "-H", str(no_link), "-n", "256", "-s", "4096", "-b", "256", "--zero-stage",
             "3", "--framework", "maxtext", "--offload-optimizer")
    assert r.exit_code == 2 and "offload_optimizer=True needs the device's host link" in r.output
    # the tp list names the values that also divide the device count
    r = _run("estimate", "-m", "gpt3-20b", "-H", "h100-sxm", "-n", "10", "-s", "2048", "-b", "10", "--tp", "5")
    assert r.exit_code == 2 and "(on 10 devices: 1, 2)" in r.output
    # a pinned ZeRO stage with dp = 1 is searched (estimate accepts it), not "no valid layout"
    r = _run("plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--fix", "tp=8",
             "--fix", "zero_stage=2", "--top", "1", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["plans"][0]["parallel"]["zero_stage"] == 2


def test_offloaded_optimizer_costs_its_two_host_copies():
    # Llama 3 8B (8,030,261,248 params) ZeRO-1 on 8 H100s (PCIe 5: 64 GB/s), bf16-mixed: each rank copies its
    # 1/8 shard's bf16 gradients out and bf16 parameters back, (2 + 2) B x 8,030,261,248 / 8 / 64e9 = 0.0627 s; the
    # host then updates all eight shards (one host of 8 GPUs) with Megatron-Core's fused CPU AdamW at the megatron
    # profile's 1.6e9 parameters/s: 8,030,261,248 / 1.6e9 = 5.019 s
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8", "--zero-stage", "1",
             "--offload-optimizer", "--json")
    assert r.exit_code == 0
    assert json.loads(r.stdout)["time_s"]["optimizer"] == pytest.approx(
        4 * 8_030_261_248 / 8 / 64e9 + 8_030_261_248 / 1.6e9, rel=1e-6)


def test_gpu_framework_exports_refuse_a_tpu_and_collective_sms_fit_the_device(tmp_path):
    r = _run("export", "--to", "megatron", "-m", "llama-3-8b", "-H", "tpu-v5p", "-n", "64", "-s", "4096", "-b", "128",
             "--zero-stage", "1", "-o", str(tmp_path / "x.sh"))
    assert r.exit_code == 2 and "legal --to for TPUs: maxtext, easydel" in r.output and not (tmp_path / "x.sh").exists()
    hw = tmp_path / "h.yaml"
    hw.write_text("base: gb300\nname: gbx\ncollective_sms: 1000\n")
    r = _run("estimate", "-m", "llama-3-8b", "-H", str(hw), "-n", "8", "-s", "4096", "-b", "8")
    assert r.exit_code == 2 and "collective_sms=1000 must be below sm_count=160" in r.output


def test_maxtext_plans_only_offer_what_maxtext_runs():
    # MaxText: GPipe-order pipelines only (its circular repeats are not priced) and ZeRO 0, 1 or 3
    r = _run("plan", "-m", "maxtext-32b", "-H", "tpu-v5e", "-n", "256", "-s", "2048", "-b", "1024", "--framework",
             "maxtext", "--top", "40", "--json")
    assert r.exit_code == 0
    plans = [p["parallel"] for p in json.loads(r.stdout)["plans"]]
    assert plans and all(p["zero_stage"] in (0, 1, 3) for p in plans)
    assert all(p["pp"] == 1 or p["schedule"] == "gpipe" for p in plans)


def test_framework_flag_names_the_hardware_files_profile_values_it_replaces(tmp_path):
    # a calibrated cluster file carries its own nanotron values; --framework nanotron takes the preset instead
    hw = tmp_path / "cluster.yaml"
    hw.write_text("base: h100-sxm\nname: my-cluster\nframework:\n  base: nanotron\n  lm_head_stage_bytes: 20.0\n")
    args = ["estimate", "--model", "llama-3.2-1b", "--hardware", str(hw), "--devices", "8", "--seq-len", "4096",
            "--global-batch", "32", "--tp", "8", "--mbs", "4"]
    r = runner.invoke(app, args + ["--framework", "nanotron"])
    assert r.exit_code == 0
    assert "replaces the framework section" in r.output and "lm_head_stage_bytes" in r.output
    r = runner.invoke(app, args)  # without the flag the file's profile is used, and said so
    assert r.exit_code == 0 and "replaces" not in r.output and "from the hardware file" in r.output


def test_a_plan_files_derived_shard_group_follows_a_new_zero_stage(tmp_path):
    # a ZeRO-0 plan stores dp_shard=1; --zero-stage 1 over it re-derives the shard group (dp x cp = 2 x 2 = 4,
    # the optimizer state a quarter of ZeRO-0's) instead of silently keeping 1
    plan = tmp_path / "z0.json"
    plan.write_text(json.dumps({"parallel": {"dp": 2, "zero_stage": 0, "dp_shard": 1, "tp": 4, "sp": True, "cp": 2}}))
    argv = ["estimate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "16", "--seq-len", "4096",
            "--global-batch", "64", "--plan", str(plan), "--json"]
    z0 = json.loads(_run(*argv).stdout)
    z1 = json.loads(_run(*argv, "--zero-stage", "1").stdout)
    assert z1["parallel"]["dp_shard"] != 1
    assert z1["memory_bytes"]["optimizer"] == pytest.approx(z0["memory_bytes"]["optimizer"] / 4)


def test_typer_argument_errors_are_one_line_with_the_value_given():
    # a flag that does not parse (-n 8.5) is bad input like any other: exit 2, one line on stderr naming the
    # option and the value, no usage block or boxed panel
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "shardplan", "estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n",
                        "8.5", "-s", "4096", "-b", "16"], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith("error: Invalid value for '--devices'") and "(given: '8.5')" in lines[0]
    assert "legal: a whole number written in digits" in lines[0]  # what is legal, as every other refusal says


def test_moe_routing_is_shown_and_a_routing_that_prices_nothing_says_so():
    # the summary names the framework profile (and the MoE routing for an MoE model); --moe-routing on a dense
    # model, or without DeepEP, changes no number and a note says why
    r = runner.invoke(app, ["estimate", *BASE, "--moe-routing", "round_robin"])
    _printed(r)
    out = " ".join(r.output.split())
    assert "changes nothing here" in out and "--moe-dispatcher deepep" in out and "megatron profile" in out
    moe = ["--model", "qwen3-30b-a3b", "--hardware", "h100-sxm", "--devices", "8", "--seq-len", "4096",
           "--global-batch", "512", "--ep", "8", "--moe-dispatcher", "deepep", "--zero-stage", "3"]
    r = runner.invoke(app, ["estimate", *moe, "--framework", "automodel", "--moe-routing", "round_robin"])
    _printed(r)
    out = " ".join(r.output.split())
    assert "automodel profile; MoE routing round_robin" in out and "changes nothing" not in out


def test_a_schedule_the_framework_does_not_ship_is_priced_with_a_note():
    # Megatron-LM runs 1F1B and interleaved 1F1B: an asked-for ZB-H1 is priced as such, and says so
    r = runner.invoke(app, ["estimate", *BASE, "--pp", "2", "--schedule", "zero-bubble"])
    _printed(r)
    out = " ".join(r.output.split())
    assert "schedule=zero-bubble is priced as asked" in out and "runs 1f1b, interleaved" in out
    r = runner.invoke(app, ["estimate", *BASE, "--pp", "2", "--schedule", "1f1b"])
    _printed(r)
    assert "is priced as asked" not in r.output
    # torchtitan runs GPipe (torch.distributed.pipelining): no note; plan says it for an asked-for schedule too
    r = runner.invoke(app, ["estimate", *BASE, "--pp", "2", "--schedule", "gpipe", "--framework", "torchtitan"])
    _printed(r)
    assert "is priced as asked" not in r.output
    r = runner.invoke(app, ["plan", *BASE, "--pp", "2", "--schedule", "zero-bubble", "--top", "1"])
    assert r.exit_code == 0 and "schedule=zero-bubble is priced as asked" in " ".join(r.output.split())


def test_estimate_json_names_why_a_negative_result_is_negative():
    import json

    from typer.testing import CliRunner

    from shardplan.cli import app
    args = ["estimate", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "8", "--dp", "8", "--json"]
    r = CliRunner().invoke(app, args)
    # 70B without sharding: 16 B per parameter of state alone is ~1 TiB per GPU, far over 80 GiB -> exit 1
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["fits"] is False and doc["negative_reasons"][0].startswith("the layout does not fit")
    ok = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "8",
                                  "--dp", "8", "--zero-stage", "3", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["negative_reasons"] == []


def test_help_on_a_narrow_terminal_shows_every_flag_in_full():
    # fresh-user pass: at 80 columns rich's help panels cut the flag names ("--zero-stage,--z…"); below 120 columns a
    # command's --help is click's plain format, every flag whole; wide terminals keep the panels
    from typer.testing import CliRunner

    narrow = CliRunner().invoke(app, ["estimate", "--help"], env={"COLUMNS": "80"})
    assert narrow.exit_code == 0
    assert "--zero-stage, --zero" in narrow.output and "--offload-activation-layers" in narrow.output
    assert "…" not in narrow.output
    wide = CliRunner().invoke(app, ["estimate", "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert "Layout" in wide.output and "╭" in wide.output


def test_cli_needs_no_separate_click():
    # the README's first command installs no extras, and typer vendors click: the CLI (its narrow-terminal help
    # included) must not import the click package (a fresh venv has none; the [test] extra pulls it in via dash)
    code = ("import sys; sys.modules['click'] = None\n"
            "from typer.testing import CliRunner\nfrom shardplan.cli import app\n"
            "r = CliRunner().invoke(app, ['estimate', '--help'], env={'COLUMNS': '80'})\n"
            "assert r.exit_code == 0 and '--zero-stage, --zero' in r.output, r.output")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0


def test_file_outputs_refuse_stdout_and_missing_folders(tmp_path):
    # '-' is stdout only for `export -o -`; the commands that write files refuse it (no file named '-'), and a
    # missing folder is refused before any work by every output option, train's included (nothing is created)
    csv = tmp_path / "runs.csv"
    csv.write_text("model,hardware,devices,seq_len,global_batch_size,tokens_per_s_per_device\n"
                   "llama-3-8b,h100-sxm,8,4096,64,1000\n")
    for args in (["record", "import", str(csv), "-o", "-"],
                 ["calibrate", str(csv), "--hardware", "h100-sxm", "-o", "-"]):
        r = _run(*args)
        assert r.exit_code == 2 and "writes a file, not stdout" in r.output, (args, r.output)
    missing = tmp_path / "no" / "such"
    for flag in ("--record", "--metrics", "--checkpoint-dir"):
        r = _run("train", "-m", "llama-3.2-1b", "--steps", "1", flag, str(missing / "x"))
        assert r.exit_code == 2 and "does not exist" in r.output, (flag, r.output)
    assert not (tmp_path / "no").exists() and not (tmp_path / "-").exists()


def test_serve_refuses_an_unknown_host_and_a_taken_port():
    # bad input (exit 2 with the legal values), checked before the server starts
    import socket
    r = _run("serve", "--host", "999.1.1.1")
    assert r.exit_code == 2 and "does not resolve" in r.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        r = _run("serve", "--port", str(taken.getsockname()[1]))
    assert r.exit_code == 2 and "cannot listen on 127.0.0.1" in r.output


def test_groups_that_straddle_a_scale_up_domain_are_named():
    # tp=2 on domains of 3 devices: ranks 2 and 3 are in two domains, which the estimate prices as one
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64",
             "--scale-up-size", "3", "--tp", "2")
    assert r.exit_code == 0 and "tp=2 (ranks 1 apart, a span of 2) does not divide the 3-device" in r.output
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--tp", "2")
    assert r.exit_code == 0 and "does not divide" not in r.output


def test_no_fit_advice_says_when_a_smaller_batch_cannot_help():
    # Llama-3-70B (70,553,706,496 parameters) at bf16-mixed, 2 + 2 + 4 + 8 = 16 B each: 131.4 GiB on
    # each of 8 devices even fully sharded; an 80 GiB limit needs ceil(8 x 131.4 / 80) = ceil(13.14) = 14 devices
    r = _run("plan", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64")
    assert r.exit_code == 1 and "a smaller batch cannot help: at least 14 devices" in r.output


def test_plan_file_used_on_another_device_count_says_what_dp_becomes(tmp_path):
    plan = tmp_path / "p8.json"
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--json")
    plan.write_text(r.stdout)
    r = _run("estimate", "--plan", str(plan), "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "64")
    assert r.exit_code == 0 and "dp 8 in the file becomes 64 on 64 devices" in r.output


def test_a_hardware_file_or_an_unlabelled_hf_config_as_model_says_what_it_is(tmp_path):
    hw = tmp_path / "cluster.yaml"
    hw.write_text("base: h100-sxm\nhbm_bytes: 1.0e11\n")
    r = _run("estimate", "-m", str(hw), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64")
    assert r.exit_code == 2 and "this is a hardware file" in r.output and "n_layers is missing" not in r.output
    hf = tmp_path / "config.json"
    hf.write_text('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, '
                  '"vocab_size": 100}')
    r = _run("estimate", "-m", str(hf), "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64")
    assert r.exit_code == 2 and "without 'architectures' or 'model_type'" in r.output


def test_no_fit_advice_names_the_pins_that_keep_the_state_replicated():
    # ZeRO-0 pinned: sharding the state over more devices cannot happen, so no device count is promised
    r = _run("plan", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "64", "--zero-stage", "0",
             "--tp", "1", "--pp", "1", "--cp", "1")
    assert r.exit_code == 1 and "leaving out zero_stage=0" in r.output and "at least" not in r.output


def test_a_profile_that_asks_for_one_gather_buffer_is_not_said_to_be_out_of_memory(tmp_path):
    prof = tmp_path / "one.yaml"
    prof.write_text("base: maxtext\nzero3_gather_buffers: 1\n")
    r = _run("estimate", "-m", "llama-3-8b", "-H", "tpu-v6e", "-n", "32", "-s", "4096", "-b", "64",
             "--framework", str(prof))
    assert r.exit_code == 0 and "gathers one ZeRO-3 unit at a time" in r.output and "do not fit" not in r.output
    # a TPU preset has no framework section for --framework to replace
    assert "replaces the framework section" not in r.output


def test_dropped_or_implied_layout_flags_are_named():
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--tp-overlap")
    assert r.exit_code == 0 and "--tp-overlap changes nothing at tp=1" in r.output
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64",
             "--pp-layers", "16,16")
    assert r.exit_code == 0 and "pp=2: the number of stages --pp-layers lists" in r.output
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--tp", "2",
             "--sp", "--tp-overlap")
    assert "changes nothing" not in r.output
