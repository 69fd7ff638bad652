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
    with pytest.raises(ConfigError, match="multi-head latent attention"):
        validate(ParallelConfig(recompute="full", remat_saved=("value_proj",)), MODELS["deepseek-v3"],
                 TrainingSpec(seq_len=4096, global_batch_size=512, framework=mt), 512)


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
