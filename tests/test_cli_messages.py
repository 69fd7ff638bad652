"""CLI messages print as written (square brackets are not Rich markup), a command that needs JAX says
so in one line, and the plan explainer names the component that really grew."""

import importlib.util
import json
import re

import pytest
import typer

from shardplan.cli import common


def test_error_keeps_square_brackets(capsys):
    with pytest.raises(typer.Exit) as exc:
        raise common.fail("plotly not installed; pip install 'shardplan[web]'")
    assert exc.value.exit_code == 2
    assert "pip install 'shardplan[web]'" in capsys.readouterr().err


def test_missing_jax_is_a_one_line_error(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "jax" else real(name, *a))
    with pytest.raises(typer.Exit) as exc:
        common.need_jax_extra("train")
    assert exc.value.exit_code == 2
    assert "shardplan train runs on JAX: jax not installed; pip install 'shardplan[jax]'" in capsys.readouterr().err


def test_explainer_names_overlap_slowdown():
    from dataclasses import replace

    from shardplan.cost.step import estimate
    from shardplan.explain import compare
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=8192, global_batch_size=64),
                 ParallelConfig(zero_stage=3), 8)
    # the same plan with 0.5 s more overlap slowdown and nothing else: the explainer must name it
    slower = replace(e, step_s=e.step_s + 0.5, tokens_per_s=e.tokens_per_s * e.step_s / (e.step_s + 0.5),
                     overlap_slowdown_s=e.overlap_slowdown_s + 0.5)
    assert "overlapped communication slowing the matmuls" in compare(e, slower)
    assert "(+500.00 ms)" in compare(e, slower)


def test_misspelled_spec_fields_are_hinted(tmp_path):
    from shardplan.errors import ConfigError
    from shardplan.inputs import model_spec
    base = '"name": "x", "d_model": 2048, "n_heads": 32, "ffn_dim": 8192, "vocab_size": 131072'
    typo_required = tmp_path / "a.json"
    typo_required.write_text("{" + base + ', "n_layer": 16}')
    with pytest.raises(ConfigError, match="n_layers is missing .*the input has 'n_layer': a misspelling"):
        model_spec(str(typo_required))
    typo_optional = tmp_path / "b.json"
    typo_optional.write_text("{" + base + ', "n_layers": 16, "tie_embeddings": true}')
    with pytest.raises(ConfigError, match="did you mean tied_embeddings"):
        model_spec(str(typo_optional))


def test_choices_are_read_case_insensitively():
    # "DeepEP" and "1F1B" as the projects spell them are the choices deepep and 1f1b; names lists too
    from shardplan.inputs import LAYOUT_OPTIONS_BY_NAME as opts
    assert opts["moe_dispatcher"].parse("DeepEP") == "deepep" and opts["schedule"].parse("1F1B") == "1f1b"
    assert opts["recompute_modules"].parse("LayerNorm, MoE_Act") == ("layernorm", "moe_act")


def test_virtual_stages_without_a_schedule_mean_the_interleaved_one():
    # --virtual-stages 2 without --schedule: model chunks exist only in the interleaved schedule, so that is the
    # schedule asked for (as plan reads it); under a framework without it the error names virtual_stages=1
    from shardplan.errors import ConfigError
    from shardplan.inputs import build_inputs
    common = dict(model="llama-3-8b", hardware="h100-sxm", devices=16, seq_len=4096, global_batch=64,
                  global_batch_tokens=None, pp=4, virtual_stages=2)
    _, _, _, pc = build_inputs(**common)
    assert (pc.schedule, pc.virtual_stages) == ("interleaved", 2)
    from shardplan.parallel import validate
    m, hw, tr, pc = build_inputs(**common, framework="nanotron")
    with pytest.raises(ConfigError, match=r"virtual_stages=2 asks for it; with gpipe, 1f1b legal virtual_stages: 1"):
        validate(pc, m, tr, 16)
    # an explicit --schedule 1f1b still meets the virtual-stage rule
    _, _, _, pc = build_inputs(**common, schedule="1f1b")
    assert pc.schedule == "1f1b"


def test_plan_file_made_for_another_setup_is_noted(tmp_path):
    # a plan JSON holds the setup it was made for; --plan reads only its layout, and the difference is said
    from typer.testing import CliRunner
    from shardplan.cli import app
    base = ["-m", "llama-3-8b", "--hardware", "h100-sxm", "-n", "16", "--global-batch", "64"]
    out = CliRunner().invoke(app, ["plan", *base, "--seq-len", "4096", "--top", "1", "--json"])
    assert out.exit_code == 0
    plan = tmp_path / "p.json"
    plan.write_text(out.stdout)
    res = CliRunner().invoke(app, ["estimate", *base, "--seq-len", "8192", "--plan", str(plan), "--framework",
                                   "torchtitan"], terminal_width=300)
    assert "was made for seq_len 4096 (here 8192), framework megatron (here torchtitan)" in res.output
    same = CliRunner().invoke(app, ["estimate", *base, "--seq-len", "4096", "--plan", str(plan)], terminal_width=300)
    assert same.exit_code == 0 and "was made for" not in same.output


def test_plan_file_note_comes_before_the_error_it_explains(tmp_path):
    # a plan made for 16 devices used with -n 24 fails validation (its dp is derived again, 24 ranks, and 64
    # sequences do not split over them); the note says why first
    from typer.testing import CliRunner
    from shardplan.cli import app
    base = ["-m", "llama-3-8b", "--hardware", "h100-sxm", "--seq-len", "4096", "--global-batch", "64"]
    out = CliRunner().invoke(app, ["plan", *base, "-n", "16", "--top", "1", "--json"])
    plan = tmp_path / "p.json"
    plan.write_text(out.stdout)
    res = CliRunner().invoke(app, ["estimate", *base, "-n", "24", "--plan", str(plan)], terminal_width=300)
    assert res.exit_code == 2, res.output
    assert res.output.index("was made for devices 16 (here 24)") < res.output.index("error:")


def test_export_and_report_print_the_estimate_notes(tmp_path):
    # export and report price the plan as estimate does, so they say the same things: e.g. a routing that
    # changes nothing for a dense model
    from typer.testing import CliRunner
    from shardplan.cli import app
    base = ["-m", "llama-3-8b", "--hardware", "h100-sxm", "-n", "8", "--seq-len", "4096", "--global-batch", "16",
            "--zero-stage", "1", "--moe-routing", "round_robin"]
    for cmd in (["export", "--to", "megatron", *base], ["report", *base, "--no-plans", "-o", str(tmp_path / "r.html")]):
        res = CliRunner().invoke(app, cmd, terminal_width=300)
        assert res.exit_code == 0 and "--moe-routing round_robin changes nothing here" in res.output, cmd[0]


def test_plan_file_on_another_device_count_rederives_dp(tmp_path):
    # a plan made for 64 devices (dp 32 x cp 2) on 128: dp is derived again (128 / 2 = 64), as a changed --tp would
    import json
    from typer.testing import CliRunner
    from shardplan.cli import app
    f = tmp_path / "p64.json"
    f.write_text(json.dumps({"parallel": {"dp": 32, "cp": 2, "zero_stage": 1, "dp_shard": 32}, "devices": 64}))
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "128", "-s", "8192", "-b", "256",
                                 "--plan", str(f), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout[r.stdout.index("{"):])
    assert (out["parallel"]["dp"], out["parallel"]["dp_shard"], out["parallel"]["cp"]) == (64, 64, 2)
    # an explicit --dp is kept (and refused when it does not fill the devices)
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "128", "-s", "8192", "-b", "256",
                                 "--plan", str(f), "--dp", "32"])
    assert r.exit_code == 2 and "legal dp for these degrees: 64" in " ".join(r.output.split()), r.output


def test_rule_of_thumb_agrees_only_with_the_best_layout_itself():
    # llama-3-70b on 256 H100: the ZeRO-3 rule's layout is within 1% of the best but not the best: its note gives
    # the difference instead of "agrees"
    from shardplan.cli.plan import _rule_results
    from shardplan.calibration import hardware_of
    from shardplan.presets.models import MODELS
    from shardplan.search import search
    from shardplan.specs.training import TrainingSpec
    m, hw = MODELS["llama-3-70b"], hardware_of("H100-SXM")
    tr = TrainingSpec(seq_len=8192, global_batch_size=512)
    best = search(m, hw, tr, 256, top_k=1).plans[0]
    for r in _rule_results(m, hw, tr, 256, best, {}):
        if r["plan"] is not None:
            assert (r["note"] == "agrees with the best plan") == (r["plan"] == best.parallel.short()), r


def test_unknown_precision_suggests_the_policies_it_begins():
    # new user: --precision bf16 listed the nine policies without pointing at bf16-mixed
    from shardplan.errors import ConfigError
    from shardplan.specs.training import precision_policy
    with pytest.raises(ConfigError, match=r"'bf16' is unknown \(did you mean bf16-mixed, bf16-mixed-fp32-grads\?\)"):
        precision_policy("bf16")
    with pytest.raises(ConfigError, match=r"'zzz' is unknown; legal: "):
        precision_policy("zzz")


def test_a_layout_that_does_not_fit_names_the_zero_stage_that_fits():
    # new user: the refusal said only "does not fit"; Llama-3-8B on 8 H100 at ZeRO-0 (16 B per parameter on every
    # rank: 128 GB) fits once the optimizer state is sharded
    from typer.testing import CliRunner
    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64",
                                 "--zero-stage", "0"])
    assert r.exit_code == 1 and "it fits with --zero-stage 1" in " ".join(r.output.split())


def test_a_framework_config_given_as_plan_names_import(tmp_path):
    # a torchtitan TOML where --plan wants a plan JSON: the parse error says how to turn it into one
    from typer.testing import CliRunner

    from shardplan.cli import app
    toml = tmp_path / "tt.toml"
    toml.write_text('[parallelism]\ndata_parallel_shard_degree = 8\n')
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "--plan", str(toml)])
    assert r.exit_code == 2 and "shardplan import --from FRAMEWORK" in " ".join(r.output.split()), r.output


def test_a_layout_no_single_change_fits_names_the_combination():
    # breaker: with neither a ZeRO stage nor recompute alone enough, the refusal named nothing; Llama-3-8B on 8 H100,
    # 4 x 8,192-token microbatches: ZeRO-3 alone and full recompute alone are both over 80 GiB, the two together fit
    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    flags = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "32", "--microbatch-size", "4"]
    r = CliRunner().invoke(app, ["estimate", *flags])
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "it fits with --zero-stage 3 --recompute full" in text, text

    def fits(**changes) -> bool:  # the independent check: each suggestion priced on its own
        m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=8192, global_batch=32,
                                     global_batch_tokens=None, microbatch_size=4, **changes)
        return estimate(m, hw, tr, pc, 8).fits
    assert not fits(zero_stage=3) and not fits(recompute="full") and fits(zero_stage=3, recompute="full")


def test_a_layout_without_data_parallelism_names_the_offloaded_optimizer():
    # Llama-3-70B at tp=8 on 8 H100 (dp=1): 70.6e9 x 16 B / 8 of weights, gradients and Adam state alone is 141 GB
    # per rank; no ZeRO group to shard over, recompute cannot help, an offloaded optimizer can. DeepSpeed offloads only
    # at ZeRO 1-3 (runtime/zero/config.py), which runs on one data-parallel rank (ZeRO-Offload)
    from typer.testing import CliRunner

    from shardplan.cli import app
    flags = ["-m", "llama-3-70b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "32", "--microbatch-size", "1",
             "--tp", "8"]
    for framework, hint in [("megatron", "it fits with --offload-optimizer ("),
                            ("deepspeed", "it fits with --offload-optimizer --zero-stage 1 (")]:
        r = CliRunner().invoke(app, ["estimate", *flags, "--framework", framework])
        text = " ".join(r.output.split())
        assert r.exit_code == 1 and hint in text, text


def test_a_compute_bound_under_half_the_step_gives_its_share():
    # new user: "bound by compute" read as "the matmuls fill the step"; Qwen3-8B under the eager hf-fsdp profile on
    # 8 H100 spends under half its step in matmuls (element-wise and the overlap slowdown are the rest), so the row
    # says the share, the JSON's matmul / step rounded
    import json

    from typer.testing import CliRunner

    from shardplan.cli import app
    flags = ["estimate", "-m", "qwen3-8b", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b", "64", "--framework", "hf-fsdp"]
    d = json.loads(CliRunner().invoke(app, [*flags, "--json"]).stdout)
    share = d["time_s"]["matmul"] / d["time_s"]["step"]
    assert d["bound"].startswith("compute") and share < 0.5
    text = " ".join(CliRunner().invoke(app, flags, terminal_width=200).output.split())
    assert f"the largest part, {share:.0%} of the step" in text, text
    # a compute bound over half the step keeps the plain name: Llama-3-8B, megatron, matmuls well over half
    text = " ".join(CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096",
                                             "-b", "64"], terminal_width=200).output.split())
    assert "bound by │ compute (matmul FLOPs) │" in text, text


def test_a_profile_without_fragmentation_has_no_zero_width_peak_band():
    # breaker: "peak band 40.78-40.78" under hf-fsdp (allocator_overhead 0: low = high = allocated + context) read as
    # certainty; the megatron profile's band is allocated + 0 .. 2 x 2.5% fragmentation, so it keeps its numbers
    from typer.testing import CliRunner

    from shardplan.cli import app
    base = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64"]
    text = " ".join(CliRunner().invoke(app, [*base, "--framework", "hf-fsdp", "--zero-stage", "3"],
                                       terminal_width=250).output.split())
    assert "no peak band: the hf-fsdp profile prices no allocator fragmentation" in text, text
    text = " ".join(CliRunner().invoke(app, base, terminal_width=250).output.split())
    assert "peak band " in text and "no peak band" not in text, text


def test_plan_with_nothing_that_fits_names_the_offloaded_layout():
    # new user: `plan` said "more devices or a smaller batch may help" where `estimate` named --offload-optimizer.
    # Llama 3.1 405B on 32 H100: 405.9e9 x 16 B / 32 = 189 GiB of model state per device, nothing fits on the GPUs;
    # the message gives the best layout of a search pinned to offload_optimizer, and that layout, priced on its own,
    # fits (the independent check)
    import re

    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    base = ["-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "32", "-s", "8192", "-b", "32"]
    r = CliRunner().invoke(app, ["plan", *base], terminal_width=400)
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "with --offload-optimizer the best layout fits: " in text, text
    assert "or --offload-optimizer where" not in text  # named once
    layout = re.search(r"best layout fits: dp=(\d+) zero=(\d)\S* tp=(\d+)", text)
    dp, zero, tp = (int(x) for x in layout.groups())
    recompute = re.search(r"best layout fits: .*? recompute=(\w+)", text).group(1)
    mbs = int(re.search(r"best layout fits: .*? mbs=(\d+)", text).group(1))
    m, hw, tr, pc = build_inputs(model="llama-3.1-405b", hardware="h100-sxm", devices=32, seq_len=8192, global_batch=32,
                                 global_batch_tokens=None, tp=tp, zero_stage=zero, recompute=recompute,
                                 microbatch_size=mbs, offload_optimizer=True)
    assert pc.tp * (pc.dp or dp) <= 32 and estimate(m, hw, tr, pc, 32).fits


def test_easydel_export_with_tp_on_a_tpu_is_written_as_tp_with_sp(tmp_path):
    # breaker: --to easydel --tp 4 on a TPU said "legal sp: true (--sp)", and with --sp EasyDeL refused Megatron sp.
    # New-user pass 53c: EasyDeL's models shard the residual stream over tp (HiddenStateSharding with
    # hidden_state_axis 'tp'), the planner's sp, so the target's default sp applies and the file round-trips
    from typer.testing import CliRunner

    from shardplan.cli import app
    out = tmp_path / "e.json"
    base = ["export", "-m", "llama-3-8b", "-H", "tpu-v5p", "-n", "32", "-s", "8192", "-b", "64", "--recompute", "full",
            "--to", "easydel", "-o", str(out)]
    r = CliRunner().invoke(app, [*base, "--tp", "4"])
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "sp=True, the framework's own defaults" in text and out.exists(), text
    doc = json.loads(out.read_text())
    assert doc["sharding_axis_dims"][3] == 4 and doc["partition_axis"]["hidden_state_axis"] == "tp"
    back = tmp_path / "back.json"
    assert CliRunner().invoke(app, ["import", "--from", "easydel", str(out), "-o", str(back)]).exit_code == 0
    assert json.loads(back.read_text())["parallel"]["sp"] is True  # read back as tp + sp: estimate --plan prices it
    # tp without sp under the maxtext profile names --sp
    r = CliRunner().invoke(app, [*base, "--tp", "4", "--no-sp"])
    assert r.exit_code == 2 and "legal: --sp (what EasyDeL runs)" in " ".join(r.output.split()), r.output


def test_partial_recompute_gets_a_hint_that_fits():
    # breaker: --recompute-layers 1 (126 GiB) and a --recompute-modules list (192 GiB) got no hint, and appending
    # --recompute full to the module list was refused without naming the way out. Llama-3-8B, 8 H100, mbs 2:
    # the fewest recomputed layers that fit (bisection) is the hint; each suggestion, priced on its own, fits and one
    # layer fewer does not
    import re

    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs

    def priced(seq: int, **layout):
        m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=seq, global_batch=64,
                                     global_batch_tokens=None, microbatch_size=2, **layout)
        return estimate(m, hw, tr, pc, 8)
    base = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "--microbatch-size", "2", "-b", "64"]
    text = " ".join(CliRunner().invoke(app, [*base, "-s", "8192", "--recompute", "full", "--recompute-layers", "1"],
                                       terminal_width=300).output.split())
    n = int(re.search(r"it fits with --recompute-layers (\d+) ", text).group(1))
    assert priced(8192, recompute="full", recompute_layers=n).fits
    assert not priced(8192, recompute="full", recompute_layers=n - 1).fits
    r = CliRunner().invoke(app, [*base, "-s", "16384", "--recompute", "selective", "--recompute-modules",
                                 "core_attn,layernorm"], terminal_width=300)
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "--zero-stage 3 --recompute full (without --recompute-modules)" in text, text
    assert priced(16384, recompute="full", zero_stage=3).fits
    r = CliRunner().invoke(app, [*base, "-s", "16384", "--recompute", "full", "--recompute-modules", "core_attn"])
    assert r.exit_code == 2 and "leave --recompute-modules out" in " ".join(r.output.split())


def test_megatron_round_trip_keeps_dropout(tmp_path):
    # breaker: export --dropout (--attention-dropout 0.1 --hidden-dropout 0.1), import, estimate --plan priced the
    # plan without dropout (58.93 GiB / 1.576 s against 59.97 / 1.600 exported). The import records dropout (Megatron-
    # LM's default 0.1 too when a script sets neither), --plan applies it: the same step and memory as the export
    import json

    from typer.testing import CliRunner

    from shardplan.cli import app
    script, plan = tmp_path / "d.sh", tmp_path / "d.json"
    base = ["-m", "llama-3-8b", "-H", "h100-sxm"]
    flags = [*base, "-n", "16", "-s", "4096", "-b", "64", "--dropout"]
    assert CliRunner().invoke(app, ["export", *flags, "--to", "megatron", "-o", str(script)]).exit_code == 0
    assert CliRunner().invoke(app, ["import", str(script), "--from", "megatron", "-o", str(plan)]).exit_code == 0
    assert json.loads(plan.read_text())["training"]["dropout"] is True
    direct = json.loads(CliRunner().invoke(app, ["estimate", *flags, "--json"]).stdout)
    again = json.loads(CliRunner().invoke(app, ["estimate", *base, "--plan", str(plan), "--json"]).stdout)
    assert again["time_s"]["step"] == direct["time_s"]["step"]
    assert again["memory_bytes"]["total"] == direct["memory_bytes"]["total"]
    # a script that sets both rates to 0 imports without dropout; one that sets neither has Megatron-LM's 0.1
    zero = tmp_path / "z.sh"
    zero.write_text(script.read_text().replace("--attention-dropout 0.1", "--attention-dropout 0.0")
                    .replace("--hidden-dropout 0.1", "--hidden-dropout 0.0"))
    from shardplan.export import import_config
    assert import_config("megatron", zero.read_text()).dropout is False
    bare = script.read_text().replace("--attention-dropout 0.1", "").replace("--hidden-dropout 0.1", "")
    assert import_config("megatron", bare).dropout is True


def test_band_and_bound_rows_say_what_applies():
    # new user: an inline override that restates the built-in (deepspeed's own host_adam_params_per_s 1.6e9) was
    # reported as "your profile overrides"; a layout that does not fit was "bound by compute"
    from shardplan.accuracy_band import band_for
    from shardplan.cli.estimate import bound_text
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    h100 = HARDWARE["h100-sxm"]
    same = band_for(framework_profile("deepspeed+host_adam_params_per_s=1.6e+9"), h100, False)
    other = band_for(framework_profile("deepspeed+host_adam_params_per_s=1e+9"), h100, False)
    assert same == band_for(framework_profile("deepspeed"), h100, False)
    assert "your profile overrides host_adam_params_per_s=1e+9" in other.group
    # Llama-3-8B at ZeRO-0 on 8 H100: 16 B x 8.03e9 = 128 GB of model state per rank, over 80 GiB
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, zero_stage=0)
    e = estimate(m, hw, tr, pc, 8)
    assert not e.fits and bound_text(e) == f"memory: the layout does not fit (were it to run: {e.bound})"


def test_megatron_export_writes_what_its_profile_prices():
    # new user: the megatron profile hides the ZeRO-1 parameter AllGather and its MoE costs were fitted on grouped-GEMM
    # runs, but the script had neither --overlap-param-gather nor --moe-grouped-gemm (Megatron-LM's defaults: off).
    # Written now; a script without --overlap-param-gather imports priced with the gather blocking
    from shardplan.cost.step import estimate
    from shardplan.export import export_text, import_config
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="h100-sxm", devices=64, seq_len=4096, global_batch=512,
                                 global_batch_tokens=None, ep=8, zero_stage=1)
    text = export_text("megatron", estimate(m, hw, tr, pc, 64))
    assert "--moe-grouped-gemm" in text and "--overlap-param-gather" in text and "--qk-layernorm" in text
    assert import_config("megatron", text).framework == "megatron"
    blocking = import_config("megatron", text.replace("--overlap-param-gather", ""))
    assert blocking.framework == "megatron+param_gather_overlap=False"


def test_a_compute_bound_names_a_close_runner_up():
    # new user: Llama-3-70B at tp=16 (across two 8-GPU nodes) on 64 H100 was "bound by compute" with matmuls 51% and
    # exposed tp communication 46% of the step; the row names the runner-up when it is within a quarter of the matmuls
    from shardplan.cli.estimate import bound_text
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="llama-3-70b", hardware="h100-sxm", devices=64, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, tp=16, kv_replication=True, zero_stage=1)
    e = estimate(m, hw, tr, pc, 64)
    tp_exposed = sum(c.exposed_s for c in e.collectives if c.axis == "tp")
    assert e.bound.startswith("compute") and tp_exposed >= 0.75 * e.matmul_s  # the independent sums
    assert bound_text(e).endswith(f"with exposed tp communication (scale-out) close behind at "
                                  f"{tp_exposed / e.step_s:.0%}")


def test_plan_table_marks_ties():
    # new user: #4 at 1,089 tok/s above #5 at 1,091 looked misordered; they were one step of the ranking (tokens/s
    # rounded to powers of 1.002, then the simpler layout and memory). Equal tokens/s tie; 1% apart
    # (log(1.01) / log(1.002) = 5 steps) do not; the memory objective ranks by memory, no tie marks
    from types import SimpleNamespace

    from shardplan.cli.plan import _tied
    res = SimpleNamespace(plans=[SimpleNamespace(tokens_per_s=t) for t in (1010.0, 1000.0, 1000.0)])
    assert _tied(res, "throughput") == [False, False, True]
    assert _tied(res, "memory") == [False, False, False]


def test_roofline_dp_verdict_gives_the_exposed_share():
    # new user: "bound by compute ... (bandwidth-bound DP)" in one sentence; the roofline ignores overlap, so the
    # sentence now gives the dp collectives' exposed share of the step (the independent sum over the estimate's dp
    # collectives). Qwen3-30B-A3B on 128 TPU v5p: 16,384 tokens per dp rank against a critical 40,800 on ICI
    from shardplan.cost.step import estimate
    from shardplan.explain import describe
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="tpu-v5p", devices=128, seq_len=4096,
                                 global_batch=512, global_batch_tokens=None, zero_stage=3, microbatch_size=4)
    e = estimate(m, hw, tr, pc, 128)
    share = sum(c.exposed_s for c in e.collectives if c.axis == "dp") / e.step_s
    text = describe(e)
    if not e.thresholds.get("dp_compute_bound", True):
        assert f"(by the roofline, bandwidth-bound DP; exposed dp communication is {share:.0%} of the step)" in text
    else:
        assert "bandwidth-bound DP" not in text


def test_a_pinned_microbatch_gets_a_smaller_one_that_fits():
    # breaker: Llama-3.2-1B on 2 A100 40GB at --microbatch-size 16 x 8,192 tokens (263 GiB of activations and logits)
    # got only a pointer to `plan`, which with the same pin found nothing. The largest smaller divisor of 16 that fits
    # is named; priced on its own it fits, and the next larger divisor does not
    import re

    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3.2-1b", "-H", "a100-40gb", "-n", "2", "--microbatch-size",
                                 "16", "-s", "8192", "-b", "64"], terminal_width=300)
    text = " ".join(r.output.split())
    d = int(re.search(r"it fits with --microbatch-size (\d+) ", text).group(1))

    def fits(mbs: int) -> bool:
        m, hw, tr, pc = build_inputs(model="llama-3.2-1b", hardware="a100-40gb", devices=2, seq_len=8192,
                                     global_batch=64, global_batch_tokens=None, microbatch_size=mbs)
        return estimate(m, hw, tr, pc, 2).fits
    assert r.exit_code == 1 and fits(d) and all(not fits(x) for x in (2, 4, 8) if x > d)


def test_export_hints_are_what_the_target_writes(tmp_path):
    # breaker: `export --to torchtitan` suggested --offload-optimizer, which the same export then refused (torchtitan's
    # config had no such option); `--to megatron --zero-stage 0` suggested --offload-optimizer alone, refused at ZeRO-0.
    # An export's hints are checked by rendering the target's config. torchtitan's enable_cpu_offload (FSDP2
    # CPUOffloadPolicy) is written since parameter offload is priced: following its hint writes the file; for
    # Megatron-LM the offload comes with ZeRO-1, and following it writes the file. 32 GPUs (4 DGX H100): FSDP's
    # offloaded fp32 parameters, gradients and moments, 16 B x 405,853,388,800 / 32 x 8 = 1,512 GiB per host, within
    # its 2 TiB (on 16 GPUs, 3,024 GiB: no offload hint, the host memory refuses it)
    from typer.testing import CliRunner

    from shardplan.cli import app
    titan = ["export", "--to", "torchtitan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "32", "-s", "8192", "-b",
             "64", "-o", str(tmp_path / "t.toml")]
    r = CliRunner().invoke(app, titan, terminal_width=400)
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "it fits with --offload-optimizer --recompute full (" in text, text
    r = CliRunner().invoke(app, [*titan, "--offload-optimizer", "--recompute", "full"])
    assert r.exit_code == 0 and "enable_cpu_offload = true" in (tmp_path / "t.toml").read_text(), r.output
    base = ["export", "--to", "megatron", "-m", "llama-3-70b", "-H", "mi300x", "-n", "2", "-s", "8192", "-b", "8",
            "--tp", "2", "--zero-stage", "0", "-o", str(tmp_path / "m.sh")]
    r = CliRunner().invoke(app, base, terminal_width=400)
    text = " ".join(r.output.split())
    # Megatron-LM keeps its gradient buffer on the device under --optimizer-cpu-offload (offload_keeps_grads): the
    # full bf16 gradients of 70.6e9 / tp 2 parameters (66 GiB) stay, so recompute is needed beside the offload
    assert r.exit_code == 1 and "it fits with --offload-optimizer --zero-stage 1 --recompute full (" in text, text
    r = CliRunner().invoke(app, [*base, "--offload-optimizer", "--zero-stage", "1", "--recompute", "full"])
    assert r.exit_code == 0 and (tmp_path / "m.sh").exists(), r.output


def test_megatron_round_trip_keeps_the_capacity_factor(tmp_path):
    # breaker pass 2: the import recorded --moe-expert-capacity-factor 1.25, estimate --plan only noted it and priced
    # dropless (2.976 s / 42.3 GiB against the export's 3.021 s / 44.0 GiB); it is now taken like --devices
    import json

    from typer.testing import CliRunner

    from shardplan.cli import app
    script, plan = tmp_path / "cf.sh", tmp_path / "cf.json"
    model = ["-m", "qwen3-30b-a3b", "-H", "h100-sxm"]
    flags = [*model, "-n", "32", "-s", "4096", "-b", "64", "--tp", "2", "--ep", "4", "--moe-capacity-factor", "1.25"]
    assert CliRunner().invoke(app, ["export", *flags, "--to", "megatron", "-o", str(script)]).exit_code == 0
    assert CliRunner().invoke(app, ["import", str(script), "--from", "megatron", "-o", str(plan)]).exit_code == 0
    direct = json.loads(CliRunner().invoke(app, ["estimate", *flags, "--json"]).stdout)
    again = json.loads(CliRunner().invoke(app, ["estimate", *model, "--plan", str(plan), "--json"]).stdout)
    assert again["time_s"]["step"] == direct["time_s"]["step"]
    assert again["memory_bytes"]["total"] == direct["memory_bytes"]["total"]


def test_a_pinned_microbatch_pairs_with_recompute():
    # breaker pass 2: Llama-3-8B on 8 A100 40GB, tp=2, --microbatch-size 8 x 8,192 tokens (194 GiB): no single change
    # fits, and the hint pairs the largest smaller microbatch with more recompute; priced on its own, it fits
    import re

    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "a100-40gb", "-n", "8", "-s", "8192", "-b", "64",
                                 "--microbatch-size", "8", "--tp", "2"], terminal_width=400)
    text = " ".join(r.output.split())
    found = re.search(r"it fits with --microbatch-size (\d+) --recompute (\w+) ", text)
    assert r.exit_code == 1 and found, text
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="a100-40gb", devices=8, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, tp=2, microbatch_size=int(found.group(1)),
                                 recompute=found.group(2))
    assert estimate(m, hw, tr, pc, 8).fits


def test_export_header_names_the_moe_routing_priced():
    # breaker pass 2: --moe-routing round_robin priced the header's step but the script said nothing of it
    from shardplan.cost.step import estimate
    from shardplan.export import export_text
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="h100-sxm", devices=32, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, tp=2, ep=4, moe_routing="round_robin")
    header = next(line for line in export_text("megatron", estimate(m, hw, tr, pc, 32)).splitlines()
                  if "runtime behaviour assumed" in line)
    assert header.endswith("moe_routing=round_robin")


def test_a_pick_within_the_memory_error_of_the_hbm_is_marked_without_a_peak_band():
    # a new user found MaxText's v5p pick 0.8 GiB below 95 GiB unmarked (the profile prices no fragmentation, so no
    # band could pass the HBM); now a fit with less headroom than 5.7% of the usable HBM (the planner's median
    # peak-memory error) is a tight fit: 0.80 GiB < 0.057 x 95.00 GiB = 5.42 GiB
    from shardplan.cost.step import estimate
    from shardplan.explain import TIGHT_HEADROOM_SHARE, headroom, tight_fit
    from shardplan.inputs import build_inputs
    args = dict(model="llama-3-70b", hardware="tpu-v5p", devices=256, seq_len=8192, global_batch=256,
                global_batch_tokens=None)
    m, hw, tr, pc = build_inputs(**args, zero_stage=3, cp=2)
    e = estimate(m, hw, tr, pc, 256)
    assert e.fits and e.memory.peak_high == e.memory.peak_low  # maxtext: no band
    assert headroom(e) < TIGHT_HEADROOM_SHARE * e.hbm_fit_limit and tight_fit(e)
    m, hw, tr, pc = build_inputs(**args, zero_stage=3, recompute="full")
    roomy = estimate(m, hw, tr, pc, 256)
    assert roomy.fits and headroom(roomy) > TIGHT_HEADROOM_SHARE * roomy.hbm_fit_limit and not tight_fit(roomy)
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-70b", "-H", "v5p", "-n", "256", "-s", "8192", "-b", "256",
                                 "--zero-stage", "3", "--cp", "2"], terminal_width=300)
    assert r.exit_code == 0 and "yes, tightly" in r.output and "median peak-memory" in r.output


def test_model_errors_name_the_config_json_route_and_the_file(tmp_path):
    # a new user asked for a model without a preset and was not told that a config.json works; a config.json
    # missing a key was refused without naming the file
    from shardplan.errors import ConfigError
    from shardplan.loaders import load_model
    with pytest.raises(ConfigError, match=r"a model without a preset: its Hugging Face config\.json"):
        load_model("qwen2.5-32b")
    cfg = tmp_path / "m" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text('{"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, '
                   '"num_attention_heads": 4, "vocab_size": 100}')
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(cfg))}: config\.json for LlamaForCausalLM lacks"):
        load_model(str(cfg))


def test_runtime_refusals_list_alternatives_for_a_defaulted_batch():
    # a breaker's `validate --tp 8` on tiny-llama (4 heads) derived batch 1 from tp=8 (dp 1) and was told "legal tp:
    # none ... global_batch_size=1 is not divisible by dp x microbatch_size = 8": tp 1 and 2 divide the 4 heads and 8
    # devices, and each runs with the batch its own layout defaults to
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["validate", "-m", "tiny-llama", "-n", "8", "--tp", "8"])
    assert r.exit_code == 2 and "legal tp: 1, 2" in r.output, r.output
    # a batch given stays the user's: the legal list is the one that batch allows
    r = CliRunner().invoke(app, ["validate", "-m", "tiny-llama", "-n", "8", "--tp", "8", "-b", "4"])
    assert r.exit_code == 2 and "legal tp (on 8 devices: 2)" in r.output, r.output


def test_plan_export_of_a_gpu_framework_on_a_tpu_is_refused_first():
    # a breaker was first told to use --precision bf16-mixed, then, having done so, that Megatron-LM is a GPU framework
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3.1-8b", "-H", "tpu-v5e", "-n", "64", "-s", "4096", "-b", "256",
                                 "--export", "megatron", "-o", "x.sh"])
    assert r.exit_code == 2 and "is a TPU; legal --export for TPUs: maxtext, easydel" in r.output
    assert "--precision bf16-mixed" not in r.output


def test_rates_under_one_are_not_printed_as_zero():
    # a breaker's million-device estimate read "(0 per device)" and a band "0-0"
    from shardplan.units import fmt_rate
    assert fmt_rate(0.1564) == "0.156" and fmt_rate(12.34) == "12.3" and fmt_rate(1234.6) == "1,235"
    assert fmt_rate(0) == "0"
