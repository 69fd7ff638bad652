"""Real public launch files that `shardplan import` refused or read wrongly (2026-12-06 pass over 21 public configs):
MaxText recipes that name their model but not its layer count, tpu-recipes' run_recipe.sh (overrides in a shell
variable handed to xpk --command), the BLOOM Megatron-DeepSpeed launcher (flags in quoted variables run through
`srun bash -c`), and a launcher that passes the degrees to another script as environment variables."""

import pytest

from shardplan.errors import ConfigError
from shardplan.export import import_config

# AI-Hypercomputer/tpu-recipes training/v5p DeepSeek-V3 style overrides: the model by name, its layer inputs on the host
MAXTEXT_NAMED = """model_name: deepseek3-671b
ici_fsdp_parallelism: -1
per_device_batch_size: 4
max_target_length: 8192
remat_policy: custom
decoder_layer_input: offload
"""

# tpu-recipes training/ironwood/llama3.1-405b/.../run_recipe.sh, trimmed: the overrides in MAXTEXT_ARGS (a quoted
# value over continuation lines) and the MaxText command inside xpk's quoted --command
RUN_RECIPE = """#!/bin/bash
MAXTEXT_ARGS="\\
model_name=llama3.1-405b \\
per_device_batch_size=3 \\
ici_fsdp_parallelism=-1 \\
remat_policy=custom \\
decoder_layer_input=offload \\
max_target_length=8192 \\
base_output_directory=${BASE_OUTPUT_DIR}"

xpk workload create \\
  --cluster=$CLUSTER_NAME \\
  --device-type=tpu7x-4x8x8 \\
  --command="set -e && export JAX_PLATFORMS='tpu,cpu' && \\
python3 -m MaxText.train maxtext/configs/base.yml ${MAXTEXT_ARGS} | tee train.log"
"""

# bigscience tr11-176B-ml.slurm, trimmed: the flags in quoted variables, CMD holding a `pwd` command substitution,
# the whole command run as one quoted word by srun bash -c, and the pre-2022 --checkpoint-activations flag
BLOOM = """#!/bin/bash
TP_SIZE=4
PP_SIZE=12
MICRO_BATCH_SIZE=2
GLOBAL_BATCH_SIZE=2048
NLAYERS=70
GPT_ARGS=" \\
    --num-layers $NLAYERS \\
    --micro-batch-size $MICRO_BATCH_SIZE \\
    --global-batch-size $GLOBAL_BATCH_SIZE \\
    --checkpoint-activations \\
    "
export LAUNCHER="python -u -m torch.distributed.run \\
    --nproc_per_node 8 \\
    --nnodes $SLURM_NNODES \\
    "
export CMD=" \\
    `pwd`/pretrain_gpt.py \\
    --tensor-model-parallel-size $TP_SIZE \\
    --pipeline-model-parallel-size $PP_SIZE \\
    $GPT_ARGS \\
    "
srun --jobid $SLURM_JOB_ID bash -c "$LAUNCHER --node_rank \\$SLURM_PROCID $CMD"
"""

# Megatron-MoE-ModelZoo style: the degrees are environment variables of another script
ENV_LAUNCHER = """export MODEL=Qwen3-235B-A22B
TP=2 PP=8 VPP=4 EP=32 NNODES=32 GBS=2048 bash ./sbatch_benchmarking.sh --recompute-granularity selective
"""


def test_maxtext_model_name_gives_the_layer_count():
    imp = import_config("maxtext", MAXTEXT_NAMED, devices=256)
    # DeepSeek-V3: 61 layers (the deepseek-v3 preset, MaxText's deepseek3-671b.yml base_num_decoder_layers)
    assert imp.parallel.offload_activation_layers == 61
    assert imp.parallel.dp == 256 and imp.parallel.zero_stage == 3 and imp.parallel.microbatch_size == 4
    assert any("model_name deepseek3-671b" in n for n in imp.notes)


def test_maxtext_unknown_model_name_still_asks_for_the_layer_count():
    with pytest.raises(ConfigError, match="base_num_decoder_layers.*model_name of: .*deepseek3-671b"):
        import_config("maxtext", MAXTEXT_NAMED.replace("deepseek3-671b", "my-model"), devices=256)


def test_tpu_recipes_run_recipe_sh():
    imp = import_config("maxtext", RUN_RECIPE, devices=512)
    # 405B: 126 layers offloaded; 512 devices over ici_fsdp -1; 3 sequences per device of 8,192 tokens
    assert imp.parallel.offload_activation_layers == 126
    assert imp.parallel.dp == 512 and imp.parallel.microbatch_size == 3
    assert imp.seq_len == 8192 and imp.global_batch == 3 * 512


def test_maxtext_without_devices_says_how_it_read_the_auto_axes():
    imp = import_config("maxtext", "per_device_batch_size: 2\nmax_target_length: 4096\n")
    assert imp.parallel.dp == 1
    assert any("no --devices" in n for n in imp.notes)


def test_bloom_launcher_reads_the_flags_inside_quoted_variables():
    imp = import_config("megatron", BLOOM, devices=384)
    p = imp.parallel
    # 384 GPUs / (tp 4 x pp 12) = dp 8; --checkpoint-activations is full recompute
    assert (p.tp, p.pp, p.dp, p.microbatch_size, p.recompute) == (4, 12, 8, 2, "full")
    assert imp.global_batch == 2048


def test_degrees_given_to_another_script_are_refused():
    with pytest.raises(ConfigError, match="TP=2 PP=8 VPP=4 EP=32") as e:
        import_config("megatron", ENV_LAUNCHER, devices=256)
    assert "expanded Megatron-LM flags" in str(e.value)


def test_key_and_value_kept_apart_from_the_query():
    from shardplan.cost.memory import remat_saved_bytes_per_token
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    cfg = RUN_RECIPE.replace("decoder_layer_input=offload \\\n", "decoder_layer_input=offload \\\nkey_proj=device \\\n"
                             "value_proj=device \\\n")
    imp = import_config("maxtext", cfg, devices=512)
    assert imp.parallel.remat_saved == ("key_proj", "value_proj")
    # Llama 3.1 405B: 8 KV heads x 128 = 1,024 wide each, against qkv_proj's 16,384 + 1,024 + 1,024 = 18,432:
    # bf16 2 B x 2,048 = 4,096 B per token at tp 1, not 36,864
    from shardplan.presets.frameworks import framework_profile
    mt = framework_profile("maxtext")
    m, tr = MODELS["llama-3.1-405b"], TrainingSpec(seq_len=8192, global_batch_size=1536, framework=mt)
    lay = validate(imp.parallel, m, tr, 512)
    assert remat_saved_bytes_per_token(m, tr, lay, moe=False) == 2 * 2048
    assert remat_saved_bytes_per_token(m, tr, lay, moe=False, saved=("qkv_proj",)) == 2 * 18432
    with pytest.raises(ConfigError, match="qkv_proj .* and key_proj too"):
        validate(ParallelConfig(recompute="full", remat_saved=("qkv_proj", "key_proj")), m, tr, 512)


def test_mla_query_key_and_value_are_priced_apart():
    # MaxText's MLA names the up-projected query, key and value query_proj / key_proj / value_proj (layers/
    # attention_mla.py); they were refused on MLA models. DeepSeek-V3: h 7168, query latent 1536, KV latent 512,
    # 128 heads, nope 128, rope 64, value 128
    from shardplan.cost.flops import remat_saved_weights
    from shardplan.cost.memory import remat_saved_bytes_per_token
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m = MODELS["deepseek-v3"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=512, framework=framework_profile("maxtext"))
    lay = validate(ParallelConfig(recompute="full", remat_saved=("value_proj",)), m, tr, 512)
    # widths: value 128 x 128 = 16,384; key 128 x 192 = 24,576; query 128 x 192 = 24,576 (bf16, tp 1)
    assert remat_saved_bytes_per_token(m, tr, lay, moe=False) == 2 * 16384
    assert remat_saved_bytes_per_token(m, tr, lay, moe=False, saved=("key_proj",)) == 2 * 24576
    # weights not run again: query 1536 x (7168 + 24,576) = 48,758,784; value 512 x 16,384 = 8,388,608; key alone
    # 512 x 16,384 = 8,388,608 (the joint down projection still runs for the value), key with value adds it:
    # 7168 x (512 + 64) = 4,128,768
    assert remat_saved_weights(m, ("query_proj",), moe=False) == 48_758_784
    assert remat_saved_weights(m, ("value_proj",), moe=False) == 8_388_608
    assert remat_saved_weights(m, ("key_proj",), moe=False) == 8_388_608
    assert remat_saved_weights(m, ("key_proj", "value_proj"), moe=False) == 2 * 8_388_608 + 4_128_768
    # all three skip every attention weight but the output's (qkv_proj's set), no more
    assert remat_saved_weights(m, ("query_proj", "key_proj", "value_proj"), moe=False) == \
        remat_saved_weights(m, ("qkv_proj",), moe=False)


@pytest.mark.parametrize("option, recompute", [("1", "full"), ("2", "selective")])
def test_torchtitan_layer_selective_ac(option, recompute):
    # torchtitan's selective_ac_option as a number checkpoints every N-th layer in full (not op-level SAC)
    toml = (f'[activation_checkpoint]\nmode = "selective"\nselective_ac_option = "{option}"\n'
            '[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = -1\n')
    imp = import_config("torchtitan", toml, devices=8)
    assert imp.parallel.recompute == recompute
    assert any(f"selective_ac_option='{option}'" in n for n in imp.notes)


def test_torchtitan_fp8_round_trip(tmp_path):
    # the importer reads [model] converters = "float8" (torchtitan llama3_405b.toml) as fp8-mixed; the exporter writes it
    from typer.testing import CliRunner

    from shardplan.cli import app
    out = tmp_path / "t.toml"
    r = CliRunner().invoke(app, ["export", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "8",
                                 "--zero-stage", "3", "--precision", "fp8-mixed", "--framework", "torchtitan",
                                 "--to", "torchtitan", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert 'converters = [\n    "float8",\n]' in out.read_text() or 'converters = ["float8"]' in out.read_text()
    assert import_config("torchtitan", out.read_text(), devices=8).precision == "fp8-mixed"


def test_torchtitan_early_step_in_backward_is_noted():
    toml = ('[optimizer]\nearly_step_in_backward = true\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n'
            '[parallelism]\ndata_parallel_shard_degree = -1\n')
    assert any("early_step_in_backward" in n for n in import_config("torchtitan", toml, devices=8).notes)


def test_megatron_layout_needs_embedding_first_and_loss_last():
    from shardplan.export.megatron import parse_pipeline_layout
    # a DeepSeek-V3 layout (GCP A4 recipe) with its loss L: 8 stages x 4 chunks = 32 entries
    assert parse_pipeline_layout("Et*2|(tt|)*22t|(tt|)*7mL", 8)[1] == 4
    for bad in ("Et*2|(tt|)*22t|(tt|)*7m", "t|Et|(tt|)*2L", "Et|(tt|)*2L|L"):
        with pytest.raises(ConfigError, match="embedding E first and the loss L last"):
            parse_pipeline_layout(bad, 4)


# microsoft/Megatron-DeepSpeed examples_deepspeed/sequence_parallel (FPDT / Ulysses), trimmed: ZeRO-3 and a Ulysses
# group of 4 on 4 GPUs are DeepSpeed's flags
MEGATRON_DEEPSPEED = """sp_size=4
zero_stage=3
megatron_options="--tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \\
    --ds-sequence-parallel-size ${sp_size} --ds-sequence-parallel-fpdt --micro-batch-size 1 --global-batch-size 4 \\
    --seq-length 262144 --num-layers 32 --checkpoint-activations"
deepspeed_options="--deepspeed --deepspeed_config ds_config.json --zero-stage ${zero_stage}"
deepspeed pretrain_gpt.py ${megatron_options} ${deepspeed_options}
"""


def test_megatron_deepspeed_zero_and_ulysses():
    imp = import_config("megatron", MEGATRON_DEEPSPEED, devices=4)
    p = imp.parallel
    # 4 GPUs = Ulysses 4 (cp with all-to-all) x dp 1; ZeRO-3 from --zero-stage; the deepspeed profile
    assert (p.dp, p.zero_stage, p.cp, p.cp_comm, p.recompute) == (1, 3, 4, "a2a", "full")
    assert imp.framework == "deepspeed"
    assert any("--ds-sequence-parallel-fpdt" in n for n in imp.notes)


@pytest.mark.parametrize("text, match", [
    ("import os\nfrom reframe import x\ndef run():\n    args = ['--attention-dropout', '0.0,']\n", "Python source"),
    ("ConfigContainer:\n  model:\n    cross_entropy_fusion_impl: te\n", "YAML mapping"),
    ('CP_SIZE=1 TP_SIZE=2 PP_SIZE=4 bash train.sh "unclosed\n', "TP_SIZE=2 PP_SIZE=4"),
    ('torchrun pretrain_gpt.py --tensor-model-parallel-size 2 "unclosed\n', "a quote opened and not closed")])
def test_megatron_files_that_are_not_launch_scripts_say_what_they_are(text, match):
    with pytest.raises(ConfigError, match=match):
        import_config("megatron", text, devices=8)


def test_deepspeed_trainer_config_and_zeropp():
    # a Hugging Face Trainer ds_config with no batch keys: micro batch 1, no global batch, with a note
    imp = import_config("deepspeed", '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": true}}', devices=8)
    assert (imp.parallel.dp, imp.parallel.microbatch_size, imp.global_batch) == (8, 1, None)
    assert any("micro batch read as 1" in n for n in imp.notes)
    zpp = ('{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "zero_hpz_partition_size": 16, '
           '"zero_quantized_weights": true}}')
    notes = import_config("deepspeed", zpp, devices=64).notes
    assert any("ZeRO++ (zero_hpz_partition_size 16, zero_quantized_weights)" in n for n in notes)
    assert not any("no --devices" in n for n in notes)


def test_easydel_four_axis_mesh_of_older_releases():
    # EasyDeL before its expert axis: sharding_axis_dims=(dp, fsdp, tp, sp)
    script = ("model = AutoEasyDeLModelForCausalLM.from_pretrained('x', sharding_axis_dims=(1, -1, 2, 1), "
              "gradient_checkpointing=EasyDeLGradientCheckPointers.NOTHING_SAVEABLE)\n")
    imp = import_config("easydel", script, devices=8)
    # 8 devices = fsdp 4 x tp 2: dp 4 (ZeRO-3 over 4), tp 2
    assert (imp.parallel.dp, imp.parallel.zero_stage, imp.parallel.tp) == (4, 3, 2)
    assert any("before the expert axis" in n for n in imp.notes)


def test_easydel_elarge_model_sharding_dict():
    # EasyDeL's eLargeModel({... "sharding": {"axis_dims": ..., "axis_names": ...}}) (examples/post_training/sft.py);
    # a gradient_checkpointing set from FLAGS at run time is not read as a policy name
    script = ('import easydel as ed\nelm = ed.eLargeModel({"model": {"name_or_path": "x"}, "sharding": {"axis_dims": '
              '(1, -1, 1, 2, 1), "axis_names": ("dp", "fsdp", "ep", "tp", "sp")}})\n'
              'f(gradient_checkpointing=FLAGS.gradient_checkpointing)\n')
    imp = import_config("easydel", script, devices=8)
    assert (imp.parallel.dp, imp.parallel.tp, imp.parallel.recompute) == (4, 2, "none")


def test_breaker_inputs_of_the_session():
    # a variable that doubles itself forty times (2**40 characters) is refused, not expanded until memory runs out
    doubling = "A=x\n" + 'A="$A$A"\n' * 40 + "torchrun pretrain_gpt.py $A\n"
    with pytest.raises(ConfigError, match="variable A expands past"):
        import_config("megatron", doubling, devices=8)
    # text an echo prints is not the command: tp 2 is launched, tp 8 only printed
    echo = ('torchrun pretrain_gpt.py --tensor-model-parallel-size 2 --micro-batch-size 1\n'
            'echo "next time try --tensor-model-parallel-size 8"\n')
    assert import_config("megatron", echo, devices=8).parallel.tp == 2
    # a shell script holding Python in a heredoc, and a comment naming a degree, are launch scripts
    heredoc = ("#!/bin/bash\npython - <<'EOF'\nimport os\nimport sys\ndef f():\n    pass\nEOF\n"
               "torchrun pretrain_gpt.py --tensor-model-parallel-size 2\n")
    assert import_config("megatron", heredoc, devices=8).parallel.tp == 2
    assert import_config("megatron", "# TP=8 was slower\ntorchrun pretrain_gpt.py --micro-batch-size 1\n",
                         devices=8).parallel.tp == 1
    for flags, match in (("--ds-sequence-parallel-size 0", "ds-sequence-parallel-size 0"),
                         ("--zero-stage 7", "--zero-stage 7: legal: 0, 1, 2, 3")):
        with pytest.raises(ConfigError, match=match):
            import_config("megatron", f"deepspeed pretrain_gpt.py --deepspeed {flags}\n", devices=8)
    for option in ('"0"', '"2.5"', '"garbage"', "true"):
        toml = (f'[activation_checkpoint]\nmode = "selective"\nselective_ac_option = {option}\n'
                '[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = -1\n')
        with pytest.raises(ConfigError, match="selective_ac_option"):
            import_config("torchtitan", toml, devices=8)


def test_easydel_elarge_model_reads_recompute_and_batch():
    # EasyDeL sft.py: gradient checkpointing under base_config.values, the batch under trainer
    script = ('import easydel as ed\nelm = ed.eLargeModel({"sharding": {"axis_dims": (1, -1, 1, 2, 1)}, '
              '"base_config": {"values": {"gradient_checkpointing": ed.EasyDeLGradientCheckPointers.NOTHING_SAVEABLE}},'
              ' "trainer": {"total_batch_size": 32, "gradient_accumulation_steps": 4, "max_length": 2048}})\n')
    imp = import_config("easydel", script, devices=8)
    # 8 devices: fsdp 4 x tp 2 -> dp 4; 32 sequences per step over dp 4 = micro batch 8; x 4 accumulation = 128
    assert (imp.parallel.recompute, imp.parallel.microbatch_size, imp.global_batch, imp.seq_len) == ("full", 8, 128, 2048)


def test_maxtext_llama31_70b_name_and_bad_layer_counts():
    # MaxText's llama3.1-70b.yml (the tpu-recipes Trillium 70B recipe's model_name) has Llama 3 70B's 80 layers
    cfg = MAXTEXT_NAMED.replace("deepseek3-671b", "llama3.1-70b")
    assert import_config("maxtext", cfg, devices=256).parallel.offload_activation_layers == 80
    with pytest.raises(ConfigError, match="base_num_decoder_layers='x'"):
        import_config("maxtext", cfg + "base_num_decoder_layers: x\n", devices=256)


def test_cluster_toolkit_command_option():
    # tpu-recipes trillium Llama3.1-70B run_recipe.sh: gcluster job submit --command "bash -c 'python3 ... base.yml
    # ${MAXTEXT_ARGS}'" (a separate --command word, then a shell's -c)
    script = ('MAXTEXT_ARGS="model_name=llama3.1-70b per_device_batch_size=2 ici_fsdp_parallelism=-1 '
              'max_target_length=8192"\n'
              '"${GCLUSTER_BIN}" job submit --topology 8x8 --command "bash -c \'python3 -u MaxText/train.py '
              'MaxText/configs/base.yml ${MAXTEXT_ARGS} 2>&1 | tee train.log\'"\n')
    imp = import_config("maxtext", script, devices=64)
    # 64 devices over ici_fsdp -1; 2 sequences of 8,192 per device: 128 per step
    assert (imp.parallel.dp, imp.parallel.microbatch_size, imp.global_batch, imp.seq_len) == (64, 2, 128, 8192)
