"""New-user pass 53d (an infrastructure engineer training MoE models on H200 / B200 / GB200 with Megatron-LM,
Megatron-Bridge and torchtitan): each test fails on the behaviour the pass found (noted in its comment)."""

from __future__ import annotations

import pytest

from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.records import RunRecord

#: a Megatron-Bridge ConfigContainer of Qwen3-235B-A22B on 256 GPUs (pp 4 x vpp 2, ep 32), as the pass wrote it
BRIDGE = """
_target_: megatron.bridge.training.config.ConfigContainer
comm_overlap:
  tp_comm_overlap: false
  {overlap}
dataset:
  sequence_length: 4096
ddp:
  grad_reduce_in_fp32: false
  overlap_grad_reduce: true
  overlap_param_gather: true
  use_distributed_optimizer: true
mixed_precision: {precision}
model:
  num_layers: 94
  hidden_size: 4096
  ffn_hidden_size: 12288
  num_attention_heads: 64
  num_query_groups: 4
  kv_channels: 128
  qk_layernorm: true
  num_moe_experts: 128
  moe_router_topk: 8
  moe_ffn_hidden_size: 1536
  moe_grouped_gemm: true
  moe_token_dispatcher_type: alltoall
  seq_length: 4096
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 2
  context_parallel_size: 1
  expert_model_parallel_size: 32
  expert_tensor_parallel_size: 1
  sequence_parallel: false
  pipeline_model_parallel_layout: "Et*11|(t*12|)*6t*11L"
train:
  micro_batch_size: 1
  global_batch_size: 2048
"""


def _bridge(precision: str = "bf16_mixed", overlap: str = ""):
    return import_config("nemo", BRIDGE.format(precision=precision, overlap=overlap), devices=256)


def test_bridge_nvfp4_presets_and_fields_are_read_and_unknown_names_refused():
    # bf16_with_nvfp4_mixed (and the fields form fp4: e2m1) was priced as bf16; bf16_with_banana_mixed was accepted
    assert _bridge("bf16_with_nvfp4_mixed").precision == "nvfp4-mixed"
    fields = "{bf16: true, fp8: null, fp4: e2m1, fp4_recipe: nvfp4}"
    assert _bridge(fields).precision == "nvfp4-mixed"
    with pytest.raises(ConfigError, match="mixed_precision 'bf16_with_banana_mixed': legal: a Megatron-Bridge preset"):
        _bridge("bf16_with_banana_mixed")
    # mixed_precision.py: the fp8 presets gather fp8 parameters, except the subchannel (blockwise) ones
    assert _bridge("bf16_with_fp8_current_scaling_mixed").precision == "fp8-params"
    assert _bridge("bf16_with_fp8_subchannel_scaling_mixed").precision == "fp8-mixed"
    assert _bridge("nemotron_h_bf16_with_fp8_current_scaling_mixed").precision == "fp8-params"  # a model prefix


def test_bridge_expert_parallel_comm_overlap_is_read():
    # comm_overlap.overlap_moe_expert_parallel_comm: true was dropped (the same flag in a Megatron-LM script is read)
    assert _bridge().parallel.moe_a2a_overlap is False
    assert _bridge(overlap="overlap_moe_expert_parallel_comm: true").parallel.moe_a2a_overlap is True


def test_megatron_export_of_an_mla_moe_model_names_its_experts():
    # DeepSeek-V3's export had --expert-model-parallel-size 64 without --num-experts: Megatron-LM's validate_args
    # fails, and shardplan's own import refused the file
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="deepseek-v3", hardware="h100-sxm", devices=1024, seq_len=4096,
                                 global_batch=8192, global_batch_tokens=None, tp=2, pp=16, ep=64, etp=1)
    text = export_text("megatron", estimate(m, hw, tr, pc, 1024))
    assert "--num-experts 256" in text and "--moe-router-topk 8" in text and "--hidden-size" not in text
    assert import_config("megatron", text).parallel.ep == 64


def test_records_with_virtual_stages_and_no_schedule_are_interleaved():
    # a VPP column without a schedule left the record out of the fit ("needs schedule='interleaved'"), where
    # estimate reads --virtual-stages alone as the interleaved schedule
    rec = RunRecord(model="llama-3-70b", hardware="h100-sxm", devices=64, seq_len=4096, global_batch_size=128,
                    parallel={"tp": 4, "pp": 4, "virtual_stages": 5}, tokens_per_s_per_device=500.0)
    assert rec.parallel.schedule == "interleaved"
    assert RunRecord(**{**rec.model_dump(exclude={"parallel"}), "parallel": {"tp": 4, "pp": 4}}).parallel.schedule \
        == "1f1b"


def test_bridge_pipeline_layout_as_lists_is_read():
    # Megatron-Bridge's DeepSeek-V3 recipe gives the layout as lists of LayerType names: it was ignored (the note said
    # the layout was missing, and the balanced split was priced)
    from shardplan.export.nemo_yaml import layout_string
    stages = [["embedding", *["decoder"] * 3], ["decoder"] * 4, [*["decoder"] * 2, "mtp", "loss"]]
    assert layout_string(stages) == "Ettt|tttt|ttmL"
    assert layout_string("Et|tL") == "Et|tL" and layout_string([["attention"]]) == [["attention"]]  # others as given
    text = BRIDGE.format(precision="bf16_mixed", overlap="").replace(
        'pipeline_model_parallel_layout: "Et*11|(t*12|)*6t*11L"',
        "pipeline_model_parallel_layout: " + str([["embedding", *["decoder"] * 11]] + [["decoder"] * 12] * 6
                                                 + [[*["decoder"] * 11, "loss"]]).replace("'", '"'))
    # pp 4 x vpp 2: rank r holds entries r and r + 4: (11 + 12, 12 + 12, 12 + 12, 12 + 11)
    assert import_config("nemo", text, devices=256).parallel.pp_layers == (23, 24, 24, 23)


def test_torchtitan_fp8_export_converts_the_experts_it_prices_in_fp8():
    # converters = ["float8"] swaps nn.Linear only: the grouped expert GEMMs priced in fp8 ran in bf16
    import tomllib

    from shardplan.cost.step import estimate
    from shardplan.export.torchtitan import MOE_FP8_PIPELINE_NOTE
    from shardplan.inputs import build_inputs

    def text(**lay):
        m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="h100-sxm", devices=16, seq_len=4096,
                                     global_batch=128, global_batch_tokens=None, framework="torchtitan",
                                     precision="fp8-mixed", zero_stage=3, ep=8, **lay)
        return export_text("torchtitan", estimate(m, hw, tr, pc, 16))
    flat = text()
    assert tomllib.loads(flat)["float8"] == {"moe_fqns_prototype": ["experts"]} and MOE_FP8_PIPELINE_NOTE not in flat
    piped = text(pp=2)  # torchtitan's float8 MoE converter asserts pp = 1: noted, not written
    assert "float8" not in tomllib.loads(piped) and " ".join(MOE_FP8_PIPELINE_NOTE.split()[:8]) in piped


def test_fp8_headers_say_which_peak_the_mfu_is_of():
    # export headers printed an fp8 plan's MFU of the fp8 peak as "MFU: 36.8%" beside tables quoted against bf16
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, precision="fp8-mixed")
    e = estimate(m, hw, tr, pc, 8)
    # the H100's fp8 peak is twice its bf16 one (1,978.9 vs 989.4 TFLOP/s): MFU of bf16 = 2 x MFU of fp8
    assert e.mfu_of_bf16_peak == pytest.approx(2 * e.mfu, rel=1e-3)
    assert f"MFU: {e.mfu:.1%} of the fp8 peak ({e.mfu_of_bf16_peak:.1%} of the bf16 peak)" in export_text("megatron", e)
    # an MXFP8 recipe in a Megatron script is noted (Blackwell only)
    imp = import_config("megatron", "torchrun --nproc-per-node 8 pretrain_gpt.py --bf16 --fp8-format e4m3 "
                                    "--fp8-recipe mxfp8")
    assert any(n.startswith("--fp8-recipe mxfp8: MXFP8 block scaling runs on Blackwell") for n in imp.notes)


def test_megatron_mtp_depth_is_exported_and_compared_with_the_model():
    # --mtp-num-layers was neither written nor recorded: a DeepSeek-V3 script with MTP priced as --model deepseek-v3
    # (no MTP module, 15% faster) said nothing
    from shardplan.export.megatron import model_args
    from shardplan.presets.models import MODELS
    args = model_args(MODELS["deepseek-v3-mtp"], 4096)
    assert args[args.index("--mtp-num-layers") + 1] == "1"
    imp = import_config("megatron", "torchrun --nproc-per-node 8 pretrain_gpt.py --bf16 --num-layers 4 "
                                    "--mtp-num-layers 1")
    assert imp.model_shape["mtp_modules"] == 1


def test_plan_min_headroom_ranks_only_plans_that_keep_it():
    # a cluster operator asked for "the fastest plan with at least X GiB free" (new-user pass 53b): --min-headroom
    from typer.testing import CliRunner

    from shardplan.cli import app
    from shardplan.explain import headroom
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.search import search
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    free = search(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, 8, top_k=5)
    kept = search(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, 8, top_k=5, min_headroom_bytes=30 * 2**30)
    assert min(headroom(e) for e in free.plans) < 30 * 2**30  # without it the ranking holds tighter plans
    assert kept.plans and all(headroom(e) >= 30 * 2**30 for e in kept.plans)
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "64",
                                 "--min-headroom", "81"])
    assert r.exit_code == 2 and "--min-headroom=81.0 is out of range; legal: 0.0 to 80.0 GiB" in r.output, r.output


@pytest.mark.parametrize("header, srun, devices", [
    ("#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=8\n", "srun", 32),      # the job's header: 4 nodes x 8 tasks
    ("#SBATCH --nodes=4\n", "srun -N 2 --ntasks-per-node 4", 8),              # srun's own flags win
    ("", "srun --ntasks 16", 16)])                                             # a total task count
def test_srun_launching_the_entry_point_gives_the_world_size(header, srun, devices):
    # "#SBATCH --ntasks-per-node" with srun running pretrain_gpt.py itself (one task per GPU) was not read: the
    # import asked for --devices
    script = (f"#!/bin/bash\n{header}{srun} python pretrain_gpt.py --num-layers 16 --hidden-size 4096 "
              "--num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 "
              "--tensor-model-parallel-size 4")
    imp = import_config("megatron", script)
    assert imp.devices == devices and imp.parallel.dp == devices // 4
