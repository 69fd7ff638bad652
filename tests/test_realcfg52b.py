"""New-user pass 52b (the runtime, the guide and calibrate from train --record) and breaker pass 52b (framework
config imports): each finding, fixed, with a test that fails on the old behaviour."""

from shardplan.crosscheck.deltas import not_covered
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec


def test_validate_says_dp_ep_with_accumulation_is_not_covered():
    m = MODELS["tiny-moe"]
    # 16 sequences over dp 8 (ep 2 carved from it) at one per microbatch: 2 microbatches, whose accumulation loop
    # the runtime runs under GSPMD: XLA all-reduces the dense gradients over ep each microbatch (a new user's
    # validate read 1,243 KiB compiled against 974 predicted and called the plan outside tolerance)
    two = validate(ParallelConfig(ep=2), m, TrainingSpec(seq_len=64, global_batch_size=16), 8)
    assert two.microbatches == 2 and "ep > 1 with 2 microbatches" in not_covered(two, ("dp",))
    one = validate(ParallelConfig(ep=2), m, TrainingSpec(seq_len=64, global_batch_size=8), 8)
    assert not_covered(one, ("dp",)) is None  # one microbatch compiles to the planner's collectives
    zero3 = validate(ParallelConfig(ep=2, zero_stage=3), m, TrainingSpec(seq_len=64, global_batch_size=16), 8)
    assert not_covered(zero3, ("dp",)) is None  # ZeRO-3 reduces per microbatch in the planner too


import json

import pytest

from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.cost.step import estimate
from shardplan.inputs import build_inputs

MEGATRON = ("torchrun --nproc-per-node 24 pretrain_gpt.py --num-layers {L} --hidden-size 4096 --num-attention-heads 32 "
            "--seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 48 --bf16 "
            "--pipeline-model-parallel-size {pp} {extra}")


def test_accelerate_round_trip_keeps_the_trainers_recompute():
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=32,
                                 global_batch_tokens=None, framework="hf-deepspeed", zero_stage=3, recompute="full")
    text = export_text("accelerate", estimate(m, hw, tr, pc, 8))
    # the export writes gradient_checkpointing in its Trainer comment; the import dropped it (recompute none: 25.3 ->
    # 71.7 GiB for a 70B)
    assert import_config("accelerate", text).parallel.recompute == "full"


def test_nanotron_and_easydel_fp32_are_read_as_fp32():
    nano = ("parallelism: {dp: 8, tp: 1, pp: 1}\ntokens: {sequence_length: 4096, micro_batch_size: 2, "
            "batch_accumulation_per_replica: 1}\nmodel: {dtype: float32}\n")
    got = import_config("nanotron", nano)
    assert got.precision == "fp32" and any("model.dtype=float32" in n for n in got.notes)
    with pytest.raises(ConfigError, match="legal: bfloat16, float32"):
        import_config("nanotron", nano.replace("float32", "float8"))
    ed = ("import easydel as ed\nimport jax.numpy as jnp\nmodel = ed.AutoEasyDeLModelForCausalLM.from_pretrained("
          "'m', dtype=jnp.float32, param_dtype=jnp.float32, sharding_axis_dims=(1, -1, 1, 4, 1))\n")
    assert import_config("easydel", ed, devices=64).precision == "fp32"  # was written as bf16-mixed
    assert import_config("easydel", ed.replace("'m', dtype=jnp.float32", "'m', dtype=jnp.bfloat16"),
                         devices=64).precision == "fp32-params"


def test_deepspeed_param_persistence_above_the_default_says_what_it_keeps():
    cfg = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
           "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 1e12}, "bf16": {"enabled": True}}
    notes = import_config("deepspeed", json.dumps(cfg), devices=8).notes
    assert any("stage3_param_persistence_threshold=1e+12" in n and "--zero-stage 2" in n for n in notes)


def test_megatron_pipeline_split_flags_are_read_as_megatron_builds_them():
    # 80 layers + the embedding counted as a layer = 81 over pp 3: 27 each, the first holding 26 transformer layers
    p = import_config("megatron", MEGATRON.format(L=80, pp=3, extra="--account-for-embedding-in-pipeline-split")).parallel
    assert p.pp_layers == (26, 27, 27)  # priced as 27/27/26 before
    # Megatron-Core asserts an even split (Megatron-DeepSpeed does not): said, no longer silent
    assert any("--num-layers 28 is not divisible by --pipeline-model-parallel-size 8" in n
               for n in import_config("megatron", MEGATRON.format(L=28, pp=8, extra="")).notes)
    with pytest.raises(ConfigError, match="cannot write; legal: --pipeline-model-parallel-layout"):
        import_config("megatron", MEGATRON.format(L=126, pp=8, extra="--account-for-embedding-in-pipeline-split "
                      "--account-for-loss-in-pipeline-split --num-layers-per-virtual-pipeline-stage 4"))


def test_megatron_full_recompute_needs_a_method_and_uniform_groups_are_noted():
    base = MEGATRON.format(L=32, pp=1, extra="--recompute-granularity full")
    with pytest.raises(ConfigError, match="without --recompute-method"):
        import_config("megatron", base)
    got = import_config("megatron", base + " --recompute-method uniform --recompute-num-layers 4")
    assert got.parallel.recompute == "full" and any("one input per 4 layers" in n for n in got.notes)


def test_shell_values_bash_computes_or_appends_are_read_as_bash_reads_them():
    from shardplan.export.base import expand_variables
    # a value computed by a command replaces the earlier one: unknown from there (was the old 1 node / tp 4)
    assert "--nnodes $NNODES" in expand_variables("NNODES=1\nNNODES=$(scontrol show hostnames | wc -l)\n"
                                                  "torchrun --nnodes $NNODES x.py")
    # (integer arithmetic on known values is evaluated as bash does: 4 x 2; one on an unknown value stays unknown)
    assert "--tp 8" in expand_variables("TP=4\nTP=$((TP*2))\nrun --tp $TP")
    assert "--tp $TP" in expand_variables("TP=$(nproc)\nTP=$((TP*2))\nrun --tp $TP")
    # a string append: both flags reach the command (the appended pipeline degree was dropped)
    out = expand_variables('ARGS="--tensor-model-parallel-size 4"\nARGS+=" --pipeline-model-parallel-size 2"\n'
                           "torchrun x.py $ARGS")
    assert out.rstrip().endswith("torchrun x.py --tensor-model-parallel-size 4 --pipeline-model-parallel-size 2")


def test_bridge_yaml_uneven_pipeline_keys_are_read():
    bridge = ("_target_: megatron.bridge.training.config.ConfigContainer\nmodel:\n  tensor_model_parallel_size: 4\n"
              "  pipeline_model_parallel_size: 16\n  context_parallel_size: 2\n  expert_model_parallel_size: 8\n"
              "  expert_tensor_parallel_size: 1\n  sequence_parallel: true\n  seq_length: 4096\n  num_layers: 94\n"
              "  num_moe_experts: 128\n  moe_router_topk: 8\n  num_layers_in_first_pipeline_stage: 3\n"
              "  num_layers_in_last_pipeline_stage: 7\ntrain:\n  micro_batch_size: 1\n  global_batch_size: 2048\n"
              "ddp:\n  use_distributed_optimizer: true\nmixed_precision: bf16_mixed\n")
    # 94 - 3 - 7 = 84 layers over the other 14 stages: 6 each (priced as Megatron's even-ish split before)
    assert import_config("megatron", bridge, devices=256).parallel.pp_layers == (3, *[6] * 14, 7)


def test_a_plan_files_ranked_plan_is_read_by_rank(tmp_path):
    from shardplan.loaders import plan_path_and_rank, read_plan_context, read_plan_file
    f = tmp_path / "plans.json"
    f.write_text(json.dumps({"plans": [{"parallel": {"tp": 8}, "devices": 64}, {"parallel": {"tp": 4}, "devices": 64},
                                       {"parallel": {"tp": 2}, "devices": 64}]}))
    # a new user could price only #1 of a `plan --json` file; FILE#N takes plan N (1-based), the file name as written
    assert plan_path_and_rank(f"{f}#3") == (f, 3) and plan_path_and_rank(f) == (f, 1)
    assert read_plan_file(f"{f}#2") == {"tp": 4} and read_plan_file(f) == {"tp": 8}
    assert read_plan_context(f"{f}#3")["devices"] == 64
    with pytest.raises(ConfigError, match="no rank 4: it is past the file's 3 plan"):
        read_plan_file(f"{f}#4")
