"""Framework profiles' layout defaults: the ZeRO stage and sequence parallelism a framework's runs use when a
command gives none (FrameworkProfile.default_zero_stage / layout_defaults)."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.step import estimate
from shardplan.inputs import build_inputs

runner = CliRunner()
_KW = dict(model="llama-3-8b", hardware="h100-sxm", devices=16, seq_len=4096, global_batch=64,
           global_batch_tokens=None)


@pytest.mark.parametrize("framework,zero", [("megatron", 1), ("megatron-legacy", 0), ("torchtitan", 3),
                                            ("pytorch-fsdp", 3), ("maxtext", 3), ("deepspeed", 0), ("nanotron", 0)])
def test_zero_stage_default_follows_the_framework(framework, zero):
    # megatron: Megatron-Bridge recipes' use_distributed_optimizer=True; torchtitan data_parallel_shard_degree=-1,
    # PyTorch FSDP FULL_SHARD and MaxText ici_fsdp_parallelism=-1 shard everything; DeepSpeed and nanotron: stage 0
    assert build_inputs(**_KW, framework=framework).parallel.zero_stage == zero
    assert build_inputs(**_KW, framework=framework, zero_stage=0).parallel.zero_stage == 0  # a given stage wins


def test_zero_stage_default_only_where_the_profile_allows_it_with_pp():
    # a profile defaulting to ZeRO-3 whose pipelines allow only 0 / 1 (DeepSpeed's PipelineEngine): with pp > 1 the
    # default is not applied (the layout keeps 0), without pp it is
    from shardplan.inputs import applied_layout_defaults
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    fw = framework_profile("deepspeed").model_copy(update={"default_zero_stage": 3})
    assert applied_layout_defaults(fw, ParallelConfig(pp=2), {}, None, 4096) == {}
    assert applied_layout_defaults(fw, ParallelConfig(), {}, None, 4096) == {"zero_stage": 3}
    assert applied_layout_defaults(fw, ParallelConfig(), {"zero_stage": 0}, None, 4096) == {}  # given: kept


def test_llama3_405b_tp8_pp16_1f1b_fits_with_megatron_defaults():
    # Dubey et al. 2024 Table 4: 405B, TP 8, PP 16, 8,192 H100, seq 8192, 16M tokens. With the megatron profile's
    # defaults (sp on, distributed optimizer) the second stage (8 layers) holds, per device:
    #   layer weights (attention 16384 x (2 x 16384 + 2 x 1024) = 570,425,344; MLP 3 x 16384 x 53248 = 2,617,245,696)
    #   / tp 8 = 398,458,880, x 8 layers = 3,187,671,040, + 8 x 2 norms x 16384 (replicated) = 3,187,933,184 params;
    #   bf16 params 2 B -> 6,375,866,368 B; fp32 master + Adam 12 B / dp 64 -> 597,737,472 B
    m, hw, tr, pc = build_inputs(model="llama-3.1-405b", hardware="h100-sxm", devices=8192, seq_len=8192,
                                 global_batch=2048, global_batch_tokens=None, tp=8, pp=16, microbatch_size=1)
    assert pc.sp and pc.zero_stage == 1
    e = estimate(m, hw, tr, pc, 8192)
    assert e.memory.params == 6_375_866_368 and e.memory.optimizer == 597_737_472
    assert e.fits
    # without sp the saved activations between the tp regions are whole (Korthikanti et al. 2022 Eq. 1 vs 2):
    # it does not fit, as the run would not
    m, hw, tr, pc = build_inputs(model="llama-3.1-405b", hardware="h100-sxm", devices=8192, seq_len=8192,
                                 global_batch=2048, global_batch_tokens=None, tp=8, pp=16, microbatch_size=1, sp=False)
    assert not estimate(m, hw, tr, pc, 8192).fits


def test_estimate_says_which_defaults_it_took():
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64",
                            "--tp", "2"])
    assert r.exit_code == 0
    assert "sp=True, zero_stage=1: the megatron profile's layout defaults" in r.output
    assert "--no-sp to turn it off; --zero-stage N for another ZeRO stage" in r.output
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64",
                            "--tp", "2", "--zero-stage", "0", "--sp"])
    assert r.exit_code == 0 and "layout defaults" not in r.output


def test_profile_schedule_and_zero3_options_take_their_defaults():
    # MaxText pipelines run in GPipe order (its profile's only schedule): --pp 2 without --schedule takes it, not the
    # 1F1B that MaxText refuses; --zero3-gather per_step (only sharded parameters are gathered) implies ZeRO-3
    pc = build_inputs(**_KW, framework="maxtext", pp=2).parallel
    assert pc.schedule == "gpipe" and pc.zero_stage == 3
    assert build_inputs(**_KW, zero3_gather="per_step").parallel.zero_stage == 3  # megatron's own default is 1
    # DeepSpeed (default 0) with an HSDP shard group: the shards are FSDP shards, ZeRO-3
    assert build_inputs(**_KW, framework="deepspeed", dp_shard=4).parallel.zero_stage == 3


def test_profile_without_recompute_none_takes_its_cheapest_policy():
    # a profile whose recomputes lack the default 'none' takes the least recomputing policy it lists (selective
    # before full, whatever order the list has) and says so; a given --recompute still wins and is still checked
    assert build_inputs(**_KW, framework="megatron+recomputes=[full,selective]").parallel.recompute == "selective"
    assert build_inputs(**_KW, framework="megatron+recomputes=[full]").parallel.recompute == "full"
    assert build_inputs(**_KW, framework="megatron+recomputes=[none,full]").parallel.recompute == "none"
    args = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--tp", "2",
            "--framework", "megatron+recomputes=[full]"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert ("recompute=full: the cheapest recompute policy the megatron+recomputes=[full] profile implements (its "
            "recomputes: full); --recompute NAME for another of them") in " ".join(r.output.split())
    assert "recompute=full: the megatron" not in r.output  # not called one of the framework's layout defaults
    r = runner.invoke(app, args + ["--recompute", "none"])
    assert r.exit_code == 2 and "legal recompute: full" in r.output


@pytest.mark.parametrize("to,expect", [("torchtitan", "data_parallel_shard_degree"), ("easydel", "sharding_axis_dims"),
                                       ("deepspeed", '"stage": 0'), ("megatron", "--use-distributed-optimizer")])
def test_export_without_framework_takes_the_target_frameworks_defaults(tmp_path, to, expect):
    # export --to X with no --framework and no ZeRO / sp flags writes what X runs by default (torchtitan / EasyDeL:
    # FSDP; DeepSpeed: stage 0 and no Megatron sp with tp; Megatron-LM: the distributed optimizer and sp); before,
    # the pricing profile's megatron defaults (ZeRO-1, sp) made torchtitan / EasyDeL / DeepSpeed refuse the layout
    out = tmp_path / "out.cfg"
    tp = ["--tp", "2"] if to in ("deepspeed", "megatron") else []
    r = runner.invoke(app, ["export", "--to", to, "-m", "llama-3.2-1b", "-H", "h100-sxm", "-n", "8", "-s", "4096",
                            "-b", "64", *tp, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert expect in out.read_text()


def test_calibrate_fits_records_as_the_profile_prices_them(tmp_path):
    # torchtitan records that give only tp: fitted with torchtitan's defaults (sp with tp, FSDP), as estimate
    # prices them; before, the layout was refused ("legal sp: true")
    rec = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 16, "seq_len": 4096, "global_batch_size": 64,
           "status": "ok", "framework": "torchtitan"}
    path = tmp_path / "runs.jsonl"
    path.write_text("\n".join(json.dumps({**rec, "parallel": {"tp": tp}, "tokens_per_s_per_device": tok})
                              for tp, tok in ((2, 6000), (4, 5000))) + "\n")
    r = runner.invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--framework", "torchtitan",
                            "--no-cross-validation"])
    # fitted (not refused: exit 2); two runs for more parameters are an underdetermined fit, a negative result (1)
    assert r.exit_code == 1 and "underdetermined" in r.output and "legal sp" not in r.output, r.output


def test_runtime_commands_show_the_field_default():
    # shardings / train / validate build the JAX runtime's layout: no framework profile defaults apply there
    r = runner.invoke(app, ["shardings", "--help"], env={"COLUMNS": "200"})
    assert "the framework's" not in r.output and "[default: (0)]" in r.output.replace("  ", " ")


@pytest.mark.parametrize("base,stage,legal", [("torchtitan", 1, "0, 2, 3"), ("nanotron", 3, "0, 1")])
def test_profile_file_default_zero_stage_must_be_implemented(tmp_path, base, stage, legal):
    # a default the profile itself refuses would be dropped silently: the file is refused, naming the legal stages
    f = tmp_path / "profile.yaml"
    f.write_text(f"base: {base}\ndefault_zero_stage: {stage}\n")
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64",
                            "--framework", str(f)])
    assert r.exit_code == 2 and f"default_zero_stage={stage} is not among" in r.output
    assert f"legal default_zero_stage: {legal}" in " ".join(r.output.split())


def test_token_batch_error_waits_for_the_layouts_own_degree_error():
    # --global-batch-tokens 100000 (not a multiple of 4096) with --tp 3 on 64 devices: the degrees decide the batch
    # unit, so the tp error comes first (its legal tp judged with a batch every degree divides), not token counts
    # that would then fail on tp
    base = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "--global-batch-tokens", "100000"]
    r = runner.invoke(app, base + ["--tp", "3"])
    assert r.exit_code == 2 and "tp=3 does not divide devices=64; legal tp: 1, 2, 4, 8" in r.output
    r = runner.invoke(app, base + ["--tp", "2"])  # a valid layout: the token error with the unit dp x mbs = 32
    assert r.exit_code == 2 and "legal global_batch_tokens nearby: 131072 (32 sequences)" in r.output
