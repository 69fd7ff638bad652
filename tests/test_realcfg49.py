"""Real configs the forty-ninth session's sweep found refused or misread: Megatron-LM's functional-test
model_config.yaml (MODEL_ARGS) and its default all-gather MoE token dispatcher."""
import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.step import estimate
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

runner = CliRunner()

# the shape of NVIDIA/Megatron-LM tests/functional_tests/test_cases/gpt/*/model_config.yaml: ENV_VARS, then
# MODEL_ARGS mapping each flag to its value (true: a bare flag; false: left out)
MODEL_CONFIG = """ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
TEST_TYPE: "release"
MODEL_ARGS:
  # Distributed args
  --tensor-model-parallel-size: 2
  --pipeline-model-parallel-size: 2
  --sequence-parallel: true
  --use-distributed-optimizer: true
  --overlap-grad-reduce: false
  --micro-batch-size: 2
  --global-batch-size: 32
  --seq-length: 4096
  --num-layers: 8
  --hidden-size: 1024
  --num-attention-heads: 16
  --bf16: true
  --rampup-batch-size: "[8 8 1000]"
"""


def test_megatron_functional_test_config_is_read_by_its_model_args(tmp_path):
    # 8 GPUs / (tp 2 x pp 2) = dp 2; the distributed optimizer is ZeRO-1; --overlap-grad-reduce: false is left out
    f = tmp_path / "model_config.yaml"
    f.write_text(MODEL_CONFIG)
    out = tmp_path / "p.json"
    r = runner.invoke(app, ["import", "--from", "megatron", str(f), "-n", "8", "-o", str(out)], terminal_width=300)
    assert r.exit_code == 0, r.output
    plan = json.loads(out.read_text())
    p = plan["parallel"]
    assert (p["dp"], p["tp"], p["pp"], p["sp"], p["zero_stage"], p["microbatch_size"]) == (2, 2, 2, True, 1, 2)
    assert p["overlap_grad_reduce"] is False
    assert plan["training"]["global_batch_size"] == 32 and plan["training"]["seq_len"] == 4096


def test_a_recipe_mapping_without_model_args_is_still_refused(tmp_path):
    f = tmp_path / "recipe.yaml"
    f.write_text("tensor_model_parallel_size: 2\npipeline_model_parallel_size: 1\n")
    r = runner.invoke(app, ["import", "--from", "megatron", str(f), "-n", "8"], terminal_width=300)
    assert r.exit_code == 2 and "MODEL_ARGS" in " ".join(r.output.split())


def test_allgather_dispatcher_gathers_every_token_of_the_group():
    # mixtral-8x7b on 64 H100, ep 8 (tp 1), mbs 1 x seq 4096, 4 microbatches, 32 MoE layers, full recompute:
    # each forward AllGather's full buffer is the 8 ranks' 4,096 tokens x 4,096 x 2 B = 268,435,456 B, each rank
    # sends 7/8 of it: 234,881,024 B per call, 32 x 4 = 128 calls: 30,064,771,072 B (28 GiB), whatever top_k
    tr = TrainingSpec(seq_len=4096, global_batch_size=256, framework=FRAMEWORKS["megatron"])
    e = estimate(MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"], tr,
                 ParallelConfig(ep=8, zero_stage=1, recompute="full", moe_dispatcher="allgather"), 64)
    ag = [c for c in e.collectives if c.axis == "ep" and c.op == "AllGather" and c.phase == "fwd"]
    assert len(ag) == 1 and ag[0].count == 128 and ag[0].group_size == 8
    assert ag[0].bytes_per_device == pytest.approx(128 * 8 * 4096 * 4096 * 2 * 7 / 8)
    assert any(c.op == "ReduceScatter" and c.axis == "ep" for c in e.collectives)
    assert not any(c.op == "AllToAll" for c in e.collectives)


def test_megatron_default_dispatcher_is_read_and_written_as_allgather(tmp_path):
    # a MoE script without --moe-token-dispatcher-type runs Megatron-LM's default, allgather
    script = tmp_path / "run.sh"
    script.write_text("torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
                      "--num-attention-heads 32 --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 "
                      "--micro-batch-size 1 --global-batch-size 256 --seq-length 4096 --bf16 --use-distributed-optimizer\n")
    out = tmp_path / "p.json"
    r = runner.invoke(app, ["import", "--from", "megatron", str(script), "-o", str(out)], terminal_width=300)
    assert r.exit_code == 0 and json.loads(out.read_text())["parallel"]["moe_dispatcher"] == "allgather", r.output
    sh = tmp_path / "out.sh"
    r = runner.invoke(app, ["export", "--to", "megatron", "--plan", str(out), "-m", "mixtral-8x7b", "-H", "h100-sxm",
                            "--recompute", "full", "-o", str(sh)], terminal_width=300)
    assert r.exit_code == 0 and "--moe-token-dispatcher-type allgather" in sh.read_text(), r.output


def test_deepspeed_fp8_block_and_accelerate_fp8_are_priced_as_fp8(tmp_path):
    # LLaMA-Factory examples/deepspeed/ds_z3_fp8_config.json: bf16 and fp16 off, an fp8 block on (read by the
    # program around DeepSpeed): fp8-mixed with a note, not fp32; Accelerate's mixed_precision fp8 likewise
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,
                              "bf16": {"enabled": False}, "fp16": {"enabled": False}, "fp8": {"enabled": True},
                              "zero_optimization": {"stage": 3}}))
    out = tmp_path / "p.json"
    r = runner.invoke(app, ["import", "--from", "deepspeed", str(ds), "-n", "8", "-o", str(out)], terminal_width=300)
    assert r.exit_code == 0 and "priced as fp8-mixed" in " ".join(r.output.split()), r.output
    assert json.loads(out.read_text())["training"]["precision"] == "fp8-mixed"
    acc = tmp_path / "acc.yaml"
    acc.write_text("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp8\n"
                   "num_processes: 8\nnum_machines: 1\n")
    r = runner.invoke(app, ["import", "--from", "accelerate", str(acc), "-o", str(out)], terminal_width=300)
    assert r.exit_code == 0 and json.loads(out.read_text())["training"]["precision"] == "fp8-mixed", r.output


def test_deepspeed_blocks_that_change_the_price_are_named(tmp_path):
    # LLaMA-Factory's ALST sequence_parallel block and axolotl's compile block: not read, each named in a note
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                              "zero_optimization": {"stage": 1}, "compile": {"disable": False},
                              "sequence_parallel": {"enabled": True, "size": 4, "mode": "ulysses"}}))
    r = runner.invoke(app, ["import", "--from", "deepspeed", str(ds), "-n", "8"], terminal_width=300)
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "give --cp 4 --cp-comm a2a" in text and "torch.compile of the model" in text


def test_accelerate_launch_naming_its_ds_config_imports_that_file(tmp_path, monkeypatch):
    # LLaMA-Factory examples/accelerate/ds_multi_nodes.yaml names examples/deepspeed/ds_z3_offload_config.json (a path
    # from the repository root, where the launch runs) and num_processes 16: the ds_config is imported with 16 devices
    (tmp_path / "examples" / "deepspeed").mkdir(parents=True)
    (tmp_path / "examples" / "deepspeed" / "ds_z3_offload_config.json").write_text(json.dumps(
        {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "bf16": {"enabled": "auto"},
         "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}))
    launch = tmp_path / "ds_multi_nodes.yaml"
    launch.write_text("deepspeed_config:\n  deepspeed_config_file: examples/deepspeed/ds_z3_offload_config.json\n"
                      "  zero3_init_flag: true\ndistributed_type: DEEPSPEED\nnum_processes: 16\nnum_machines: 2\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "p.json"
    r = runner.invoke(app, ["import", "--from", "accelerate", str(launch), "-o", str(out)], terminal_width=300)
    assert r.exit_code == 0 and "its ds_config imported" in " ".join(r.output.split()), r.output
    p = json.loads(out.read_text())["parallel"]
    assert (p["dp"], p["zero_stage"], p["offload_optimizer"], p["offload_params"]) == (16, 3, True, True)
    # a named file that is not there: still refused, naming it
    launch.write_text(launch.read_text().replace("ds_z3_offload_config.json", "missing.json"))
    r = runner.invoke(app, ["import", "--from", "accelerate", str(launch)], terminal_width=300)
    assert r.exit_code == 2 and "missing.json" in r.output


def test_nanotron_moe_config_is_part_of_the_recorded_shape():
    # nanotron examples/config_qwen_with_moe.yaml: moe_config num_experts 8, top_k 1, a shared expert
    from shardplan.export import import_config
    text = ("general: {project: q}\nparallelism: {dp: 2, tp: 1, pp: 1, expert_parallel_size: 1}\n"
            "tokens: {micro_batch_size: 3, sequence_length: 256, batch_accumulation_per_replica: 1}\n"
            "model:\n  model_config:\n    num_hidden_layers: 12\n    hidden_size: 256\n    intermediate_size: 768\n"
            "    num_attention_heads: 4\n    num_key_value_heads: 4\n    vocab_size: 128256\n"
            "    moe_config: {num_experts: 8, top_k: 1, enable_shared_expert: true}\n")
    shape = import_config("nanotron", text).model_shape
    assert (shape["n_experts"], shape["top_k"], shape["n_shared_experts"]) == (8, 1, 1)


def test_new_user_findings_on_megatron_imports(tmp_path):
    # a MODEL_ARGS key without -- is named (not called a Megatron-Bridge recipe); --optimizer-cpu-offload without the
    # distributed optimizer is refused at import, naming Megatron-LM's flags (estimate refused it as "zero_stage=0");
    # no --bf16 / --fp16 is fp32, with a note
    from shardplan.errors import ConfigError
    from shardplan.export import import_config
    bad = tmp_path / "m.yaml"
    bad.write_text("MODEL_ARGS:\n  tensor-model-parallel-size: 2\n")
    r = runner.invoke(app, ["import", "--from", "megatron", str(bad), "-n", "8"], terminal_width=300)
    assert r.exit_code == 2 and "MODEL_ARGS key 'tensor-model-parallel-size' is not a Megatron-LM flag" in r.output
    base = "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --micro-batch-size 1 --global-batch-size 8 "
    with pytest.raises(ConfigError, match="--optimizer-cpu-offload without --use-distributed-optimizer") as err:
        import_config("megatron", base + "--bf16 --optimizer-cpu-offload", 8)
    assert err.value.field == "offload_optimizer"
    imported = import_config("megatron", base, 8)
    assert imported.precision == "fp32" and any(n.startswith("no --bf16 / --fp16") for n in imported.notes)
    assert not any(n.startswith("no --bf16") for n in import_config("megatron", base + "--bf16", 8).notes)
