"""NeMo 1.x and Megatron-Bridge training configs (YAML) imported through the Megatron-LM importer
(shardplan/export/nemo_yaml.py)."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.export import import_config
from shardplan.export.nemo_yaml import translate

# NeMo-Framework-Launcher launcher_scripts/conf/training/llama/llama3_70b.yaml (NVIDIA/NeMo-Framework-Launcher
# @ 3dd35614), the keys the importer reads, as the file gives them (data, logging and schedule keys left out)
NEMO_LLAMA3_70B = """\
defaults:
  - _self_
  - optional tp_overlap@model.ub_tp_comm_overlap_cfg: ub_cfg_h100_h8192_tp4_mbs1_seqlen8192
run:
  name: llama3_70b
  results_dir: ${base_results_dir}/${.name}
trainer:
  num_nodes: 128
  devices: 8
  precision: bf16
exp_manager:
  checkpoint_callback_params:
    model_parallel_size: ${multiply:${training.model.tensor_model_parallel_size}, ${training.model.pipeline_model_parallel_size}}
model:
  mcore_gpt: true
  micro_batch_size: 1
  global_batch_size: 2048
  tensor_model_parallel_size: 4
  pipeline_model_parallel_size: 4
  virtual_pipeline_model_parallel_size: 5
  context_parallel_size: 2
  encoder_seq_length: 8192
  num_layers: 80
  hidden_size: 8192
  ffn_hidden_size: 28672
  num_attention_heads: 64
  num_query_groups: 8
  hidden_dropout: 0.0
  attention_dropout: 0.0
  activations_checkpoint_granularity: null
  sequence_parallel: true
  fp8: False
  fp8_hybrid: False
  ub_tp_comm_overlap: true
  overlap_p2p_comm: true
  optim:
    name: mcore_distributed_optim
    overlap_grad_sync: true
    overlap_param_sync: true
  data:
    seq_length: 8192
"""

# a Megatron-Bridge ConfigContainer as YAML (the field names of Megatron-Bridge's "Megatron-LM to Megatron Bridge
# Guide"), DeepSeek-V3's layout of the Megatron-LM GB200 guide with MXFP8 and partial CUDA graphs
BRIDGE_DSV3 = """\
_target_: megatron.bridge.training.config.ConfigContainer
model:
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 8
  virtual_pipeline_model_parallel_size: 4
  expert_model_parallel_size: 32
  expert_tensor_parallel_size: 1
  sequence_parallel: false
  seq_length: 4096
  num_layers: 61
  hidden_size: 7168
  num_attention_heads: 128
  num_moe_experts: 256
  moe_router_topk: 8
  moe_token_dispatcher_type: flex
  moe_enable_deepep: true
  recompute_granularity: selective
  recompute_modules: [mlp, moe_act]
  hidden_dropout: 0.0
  attention_dropout: 0.0
  cuda_graph_impl: transformer_engine
  cuda_graph_scope: [attn, moe_router, moe_preprocess]
train:
  micro_batch_size: 1
  global_batch_size: 2048
ddp:
  use_distributed_optimizer: true
  overlap_grad_reduce: true
  overlap_param_gather: true
  grad_reduce_in_fp32: false
optimizer:
  use_distributed_optimizer: true
  use_precision_aware_optimizer: true
  exp_avg_dtype: {_call_: false, _target_: torch.bfloat16}
  exp_avg_sq_dtype: {_call_: false, _target_: torch.bfloat16}
  main_params_dtype: {_call_: false, _target_: torch.float32}
  lr: 0.0003
mixed_precision: bf16_with_mxfp8_mixed
"""


def test_nemo_launcher_config_reads_as_its_megatron_flags():
    imp = import_config("nemo", NEMO_LLAMA3_70B)
    p = imp.parallel
    # 128 nodes x 8 devices = 1,024; tp 4 x pp 4 x cp 2 = 32, so dp = 1,024 / 32 = 32; the mcore distributed
    # optimizer: ZeRO-1 over those 32; VPP 5; SP and the userbuffers tp overlap; both DP overlaps
    assert imp.devices == 1024 and (p.dp, p.zero_stage, p.tp, p.pp, p.cp) == (32, 1, 4, 4, 2)
    assert (p.schedule, p.virtual_stages, p.sp, p.tp_overlap, p.overlap_grad_reduce) == ("interleaved", 5, True,
                                                                                       True, True)
    assert (imp.seq_len, imp.global_batch, p.microbatch_size, p.recompute) == (8192, 2048, 1, "none")
    # trainer.precision bf16 without a gradient dtype: Megatron-Core's fp32 gradients; dropout 0 in the file
    assert imp.precision == "bf16-mixed-fp32-grads" and imp.dropout is False
    assert imp.model_shape == {"n_layers": 80, "d_model": 8192, "ffn_dim": 28672, "n_heads": 64, "n_kv_heads": 8}


def test_bridge_config_reads_with_devices_given():
    imp = import_config("megatron", BRIDGE_DSV3, devices=256)
    p = imp.parallel
    # 256 / (tp 1 x pp 8) = dp 32 (ep 32 inside it); flex + DeepEP: the deepep dispatcher; MXFP8: fp8 with the
    # preset's fp8 parameter gather (Megatron-Bridge mixed_precision.py bf16_with_mxfp8_mixed: fp8_param_gather=True)
    assert (p.dp, p.pp, p.virtual_stages, p.ep, p.moe_dispatcher) == (32, 8, 4, 32, "deepep")
    assert (p.recompute, p.recompute_modules, imp.precision) == ("selective", ("mlp", "moe_act"), "fp8-params")
    # the precision-aware optimizer's bf16 moments (written as torch dtypes): bf16-moments
    assert imp.optimizer_dtype == "bf16-moments"
    assert imp.model_shape["n_experts"] == 256 and imp.model_shape["top_k"] == 8
    # CUDA graphs captured: no note about running without them
    assert not [n for n in imp.notes if "CUDA graphs" in n]
    flags = translate(BRIDGE_DSV3).text
    assert "--fp8-recipe mxfp8" in flags and "--grad-reduce-in-bf16" in flags
    # a current-scaling preset is Megatron-LM's tensorwise recipe (its --fp8-recipe has no 'current')
    current = BRIDGE_DSV3.replace("bf16_with_mxfp8_mixed", "bf16_with_fp8_current_scaling_mixed")
    assert "--fp8-recipe tensorwise" in translate(current).text
    with pytest.raises(ConfigError, match="trainer.num_nodes x trainer.devices.*pass --devices"):  # none in it
        import_config("megatron", BRIDGE_DSV3)


def test_nemo_offloading_needs_its_switch_and_interpolations_are_named():
    # Megatron-Core offloads only with cpu_offloading true: the layer count alone is not read
    base = NEMO_LLAMA3_70B.replace("  pipeline_model_parallel_size: 4\n  virtual_pipeline_model_parallel_size: 5\n",
                                   "  pipeline_model_parallel_size: 1\n")
    assert import_config("nemo", base.replace("  data:", "  cpu_offloading_num_layers: 10\n  data:")
                         ).parallel.offload_activation_layers == 0
    on = base.replace("  data:", "  cpu_offloading: true\n  cpu_offloading_num_layers: 10\n  data:")
    assert import_config("nemo", on).parallel.offload_activation_layers == 10
    bad = NEMO_LLAMA3_70B.replace("context_parallel_size: 2", "context_parallel_size: ${oc.env:CP}")
    with pytest.raises(ConfigError, match="model.context_parallel_size") as err:
        import_config("nemo", bad)
    assert err.value.field == "model.context_parallel_size"


def test_other_yaml_mappings_are_still_refused(tmp_path):
    f = tmp_path / "other.yaml"
    f.write_text("trainer:\n  num_nodes: 2\noptim:\n  lr: 0.1\n")
    r = CliRunner().invoke(app, ["import", "--from", "nemo", str(f), "-n", "8"], terminal_width=300)
    assert r.exit_code == 2 and "NeMo 1.x or Megatron-Bridge training config" in " ".join(r.output.split())


def test_import_cli_writes_a_plan_that_estimate_prices(tmp_path):
    src, plan = tmp_path / "llama3_70b.yaml", tmp_path / "plan.json"
    src.write_text(NEMO_LLAMA3_70B)
    r = CliRunner().invoke(app, ["import", "--from", "nemo", str(src), "-o", str(plan)])
    assert r.exit_code == 0, r.output
    assert json.loads(plan.read_text())["devices"] == 1024
    r = CliRunner().invoke(app, ["estimate", "--plan", str(plan), "-m", "llama-3-70b", "-H", "h100-sxm", "--json"])
    assert r.exit_code == 0, r.output
    p = json.loads(r.stdout[r.stdout.index("{"):r.stdout.rindex("}") + 1])["parallel"]
    assert (p["dp"], p["tp"], p["pp"], p["cp"], p["virtual_stages"]) == (32, 4, 4, 2, 5)


# NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/70b_32n_gbs256_fsdp_tp2_mbs2ga1.yaml (@ 3d827fe0): its
# keys as given, but trainer.num_nodes 32 as the file's name says (the file gives 128, for which dp 512 x micro batch
# 2 = 1,024 does not divide its global batch 256: the importer refuses that, naming both)
NEMO_FSDP_70B = """\
trainer:
  num_nodes: 32
  devices: 8
  precision: bf16
model:
  micro_batch_size: 2
  global_batch_size: 256
  tensor_model_parallel_size: 2
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: null
  encoder_seq_length: 2048
  num_layers: 80
  hidden_size: 8192
  ffn_hidden_size: ${multiply:4, ${.hidden_size}}
  num_attention_heads: 64
  sequence_parallel: True
  num_query_groups: null
  fsdp: True
  fsdp_grad_reduce_dtype: bf16
  optim:
    name: fused_adam
"""


def test_nemo_fsdp_and_the_launchers_arithmetic():
    imp = import_config("nemo", NEMO_FSDP_70B)
    p = imp.parallel
    # 32 x 8 = 256 devices / tp 2 = dp 128; fsdp (strategy full by default): ZeRO-3 over all 128
    assert imp.devices == 256 and (p.dp, p.zero_stage, p.dp_shard, p.tp, p.sp) == (128, 3, 128, 2, True)
    # ${multiply:4, ${.hidden_size}} = 4 x 8,192 = 32,768; num_query_groups null: one group per head (MHA)
    assert imp.model_shape["ffn_dim"] == 32768 and imp.model_shape["n_kv_heads"] == 64
    assert imp.precision == "bf16-mixed"  # fsdp_grad_reduce_dtype bf16
    # hybrid: ZeRO-3 within each node, 8 devices / tp 2 = 4 ranks per shard group
    hybrid = NEMO_FSDP_70B.replace("  fsdp: True\n", "  fsdp: True\n  fsdp_sharding_strategy: hybrid\n")
    assert (import_config("nemo", hybrid).parallel.dp_shard, import_config("nemo", hybrid).parallel.zero_stage) == (4, 3)
    grad = NEMO_FSDP_70B.replace("  fsdp: True\n", "  fsdp: True\n  fsdp_sharding_strategy: grad\n")
    assert import_config("nemo", grad).parallel.zero_stage == 2
    with pytest.raises(ConfigError, match="fsdp_sharding_strategy") as err:
        import_config("nemo", NEMO_FSDP_70B.replace("  fsdp: True\n", "  fsdp: True\n  fsdp_sharding_strategy: x\n"))
    assert err.value.legal == ["full", "grad", "hybrid"]


def test_launcher_defaults_that_megatron_core_ignores_are_not_read():
    # the launchers' GPT-3 175B / Llama 2 70B / Llama 3 8B configs write activations_checkpoint_num_layers: 0 (and
    # method block) beside granularity selective or null: Megatron-Core reads both with full granularity only
    text = NEMO_LLAMA3_70B.replace("  activations_checkpoint_granularity: null\n",
                                   "  activations_checkpoint_granularity: selective\n"
                                   "  activations_checkpoint_method: block\n  activations_checkpoint_num_layers: 0\n")
    assert import_config("nemo", text).parallel.recompute == "selective"
    full = text.replace("granularity: selective", "granularity: full").replace("num_layers: 0", "num_layers: 2")
    p = import_config("nemo", full).parallel
    assert (p.recompute, p.recompute_layers) == ("full", 2)
    # a value the importer refuses is named by its YAML key
    bad = full.replace("micro_batch_size: 1", "micro_batch_size: 0")
    with pytest.raises(ConfigError, match="model.micro_batch_size"):
        import_config("nemo", bad)


def test_nemo_trains_on_the_data_sequence_length():
    # NeMo 1.x's dataset takes model.data.seq_length (the launcher's llama3_8b.yaml: encoder_seq_length 8192, data
    # seq_length 4096); a reference to the encoder's length resolves to it
    text = NEMO_LLAMA3_70B.replace("  data:\n    seq_length: 8192", "  data:\n    seq_length: 4096")
    assert import_config("nemo", text).seq_len == 4096
    ref = NEMO_LLAMA3_70B.replace("  data:\n    seq_length: 8192", "  data:\n    seq_length: ${model.encoder_seq_length}")
    assert import_config("nemo", ref).seq_len == 8192


def test_bridge_override_files_and_other_shapes_are_refused():
    # an override file (no root _target_ ... ConfigContainer) holds only what it changes in a recipe
    override = BRIDGE_DSV3.replace("_target_: megatron.bridge.training.config.ConfigContainer\n", "")
    with pytest.raises(ConfigError, match="override file") as err:
        import_config("megatron", override, devices=256)
    assert err.value.field == "_target_"
    with pytest.raises(ConfigError, match="older section names"):
        import_config("megatron", "model_config:\n  tensor_model_parallel_size: 2\ntrain_config:\n  gbs: 8\n",
                      devices=8)
    with pytest.raises(ConfigError, match="performance configs"):
        import_config("megatron", "ConfigContainer:\n  model:\n    tensor_model_parallel_size: 2\n", devices=8)


def test_bridge_megatron_fsdp_switch_in_dist():
    # Megatron-Bridge's dist.use_megatron_fsdp with ddp's sharding strategy optim_grads_params: ZeRO-3 over dp 256
    text = BRIDGE_DSV3.replace("ddp:\n", "dist:\n  use_megatron_fsdp: true\nddp:\n  "
                                        "data_parallel_sharding_strategy: optim_grads_params\n")
    text = text.replace("  use_precision_aware_optimizer: true\n", "")
    p = import_config("megatron", text, devices=256).parallel
    assert (p.zero_stage, p.dp_shard) == (3, 32)
