"""The framework overhead's split (``Estimate.fixed_overhead_s`` beside the stall, host floor and allocator
parts), the bound and note that name DeepSpeed's per-layer cost, the DeepSpeed profile's limits, and the
runtime commands' own refusals of layouts only the planner prices."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

_70B = ["-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256", "--tp", "8", "--pp", "4",
        "--zero-stage", "1", "--framework", "deepspeed"]


def _ds(recompute: str):
    tr = TrainingSpec(seq_len=4096, global_batch_size=256, framework=FRAMEWORKS["deepspeed"])
    p = ParallelConfig(tp=8, pp=4, zero_stage=1, recompute=recompute)
    return estimate(MODELS["llama-3-70b"], HARDWARE["h100-sxm"], tr, p, 64)


def test_deepspeed_layer_cost_is_the_fixed_overhead_and_names_the_bound():
    e = _ds("full")
    # 80 layers / pp 4 = 20 per stage; dp = 64 / (8*4) = 2, so 256 / 2 = 128 microbatches of 1 sequence;
    # 12.2 ms x 20 layers x 128 microbatches = 31.232 s, all of it fixed (no floor, retries or stalls)
    assert e.layout.microbatches == 128
    assert e.fixed_overhead_s == pytest.approx(0.0122 * 20 * 128)
    assert e.overhead_s == pytest.approx(e.fixed_overhead_s + e.host_floor_s + e.allocator_retry_s + e.stall_s)
    assert e.bound == "framework overhead (fixed per-layer and per-microbatch costs)"
    assert e.to_dict()["time_s"]["fixed_overhead"] == pytest.approx(31.232)
    # without recompute DeepSpeed's checkpoint wrapper does not run: no per-layer cost
    assert _ds("none").fixed_overhead_s == 0.0


def test_estimate_notes_the_per_layer_cost():
    res = CliRunner().invoke(app, ["estimate", *_70B, "--recompute", "full"], terminal_width=400)
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "31.232 s of the deepspeed profile's per-layer cost" in flat
    assert "only checkpointed (recomputed) layers pay it" in flat
    js = CliRunner().invoke(app, ["estimate", *_70B, "--recompute", "full", "--json"])
    d = json.loads(js.stdout)
    assert d["time_s"]["framework_overhead"] == pytest.approx(d["time_s"]["fixed_overhead"])


@pytest.mark.parametrize("fields, field", [(dict(recompute="selective"), "recompute"),
                                           (dict(cp=2, cp_comm="ring"), "cp_comm")])
def test_deepspeed_profile_refuses_what_deepspeed_does_not_run(fields, field):
    # DeepSpeed recomputes whole layers only, and its sequence parallelism is Ulysses' AllToAll, not a K/V ring
    tr = TrainingSpec(seq_len=8192, global_batch_size=128, framework=FRAMEWORKS["deepspeed"])
    with pytest.raises(ConfigError) as err:
        estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=3, **fields), 64)
    assert err.value.field == field
    assert "deepspeed framework" in str(err.value)


@pytest.mark.parametrize("flags, needle", [
    (["--pp", "2", "--schedule", "dualpipe"], "schedule='dualpipe' is not implemented by shardplan's JAX runtime"),
    (["--recompute", "full", "--recompute-layers", "1"], "recompute_layers=1 is not implemented by shardplan's JAX runtime"),
])
def test_train_refuses_planner_only_layouts_in_its_own_words(flags, needle):
    res = CliRunner().invoke(app, ["train", "--model", "tiny-llama", "--devices", "8", "--steps", "1", "--seq-len",
                                   "64", "--global-batch", "16", *flags], terminal_width=400)
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert needle in flat and "maxtext" not in flat and "--framework" not in flat


def test_train_says_when_the_refused_field_came_from_the_plan_file(tmp_path):
    # a plan file with ZeRO-3 parameter offload (priced for DeepSpeed / FSDP): the runtime refuses it, and since no
    # --offload-params flag was given the message names the file and the flag that overrides it, not "drop
    # --offload-params"; given as a flag, "drop --offload-params"
    plan = tmp_path / "p.json"
    plan.write_text('{"parallel": {"dp": 8, "zero_stage": 3, "offload_params": true, "offload_optimizer": true}}')
    base = ["train", "--model", "tiny-llama", "--steps", "1", "--seq-len", "64", "--global-batch", "16"]
    res = CliRunner().invoke(app, [*base, "--plan", str(plan)], terminal_width=400)
    flat = " ".join(res.output.split())
    assert res.exit_code == 2 and "the plan file sets it: give --no-offload-params" in flat and "drop" not in flat
    res = CliRunner().invoke(app, [*base, "--devices", "8", "--zero-stage", "3", "--offload-params",
                                   "--offload-optimizer"], terminal_width=400)
    assert res.exit_code == 2 and "(drop --offload-params)" in " ".join(res.output.split())


def test_recompute_layers_beyond_the_stage_is_noted():
    res = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b",
                                   "128", "--tp", "8", "--pp", "2", "--recompute", "full", "--recompute-layers", "21"],
                             terminal_width=400)
    assert res.exit_code == 0
    # 32 layers / pp 2 = 16 per stage < 21
    assert "recompute_layers=21 exceeds the layers of each stage (at most 16)" in " ".join(res.output.split())


def test_loss_chunks_must_divide_the_microbatch_tokens_and_only_maxtext_writes_them():
    from shardplan.export import export_text
    fw = FRAMEWORKS["maxtext"].model_copy(update={"loss_chunks": 3})
    tr = TrainingSpec(seq_len=512, global_batch_size=8, framework=fw)
    # 512 tokens per microbatch: 3 chunks do not divide them; the legal counts are its divisors up to 64
    with pytest.raises(ConfigError, match="legal loss_chunks: 1, 2, 4, 8, 16, 32, 64") as err:
        estimate(MODELS["llama-3-8b"], HARDWARE["tpu-v6e"], tr, ParallelConfig(zero_stage=3), 8)
    assert err.value.field == "loss_chunks"
    tt = FRAMEWORKS["torchtitan"].model_copy(update={"loss_chunks": 4})
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=512, global_batch_size=8,
                 framework=tt), ParallelConfig(zero_stage=3), 8)
    with pytest.raises(ConfigError, match="cannot express loss_chunks=4"):
        export_text("torchtitan", e)


@pytest.mark.parametrize("flags, field", [(["--offload-activation-layers", "1"], "offload_activation_layers"),
                                          (["--pp", "2", "--pipeline-flushes", "2"], "pipeline_flushes"),
                                          (["--recompute", "selective", "--recompute-modules", "core_attn"],
                                           "recompute_modules")])
def test_train_refuses_other_planner_only_fields(flags, field):
    res = CliRunner().invoke(app, ["train", "--model", "tiny-llama", "--devices", "8", "--steps", "1", "--seq-len",
                                   "64", "--global-batch", "16", *flags], terminal_width=400)
    flat = " ".join(res.output.split())
    assert res.exit_code == 2 and f"{field}=" in flat and "JAX runtime" in flat and "maxtext" not in flat


@pytest.mark.parametrize("line, field", [("remat_policy: garbage", "remat_policy"),
                                         ("remat_policy: custom\ndecoder_layer_input: Offload", "decoder_layer_input"),
                                         ("weight_dtype: float16", "weight_dtype"),
                                         ("remat_policy: custom\ndecoder_layer_input: offload\n"
                                          "base_num_decoder_layers: true", "base_num_decoder_layers")])
def test_maxtext_import_refuses_values_maxtext_refuses(line, field):
    from shardplan.export import import_config
    text = f"ici_fsdp_parallelism: 8\nper_device_batch_size: 1\n{line}\n"
    with pytest.raises(ConfigError) as err:
        import_config("maxtext", text, devices=8)
    assert err.value.field == field


def test_dualpipe_chart_title_gives_the_priced_bubble_in_chart_units():
    from shardplan.web.charts import pipeline_figure
    # pp 4: (4/2 - 1) x 2/3 microbatch times; a microbatch's forward + backward is 3 units: 2.00 units
    title = pipeline_figure(4, 16, "dualpipe", 1).layout.title.text
    assert "as priced: (pp/2 - 1) x 2/3 microbatch times = 2.00 units" in title


def test_json_compute_does_not_count_the_fixed_overhead_twice():
    e = _ds("full")
    # compute = matmul + element-wise + recompute; the 31.232 s per-layer cost is only in framework_overhead
    assert e.compute_s == pytest.approx(e.matmul_s + e.elementwise_s + e.recompute_s)
