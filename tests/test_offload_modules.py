"""Megatron-core fine-grained activation offloading (``ParallelConfig.offload_modules``): the bytes each module's
input takes off the device, the host copies' exposed time, validation, and the Megatron-LM flags both ways."""

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.memory import memory_for_stage, module_offload_per_token, stage_activation_bytes
from shardplan.cost.step import activation_offload_s
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

runner = CliRunner()


def test_moe_module_inputs_per_token():
    # Qwen3-235B-A22B (h 4096, F_e 1536, top 8), tp 1, fp8: expert_fc1 = the routed tokens' 1-byte copies
    # 1 x 8 x 4096 = 32,768 B; moe_act = the SwiGLU input (gate and up) 2 B x 2 x 1536 x 8 = 49,152 B
    m = MODELS["qwen3-235b-a22b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=3072, precision=PRECISION_POLICIES["fp8-mixed"])
    lay = validate(ParallelConfig(pp=4, ep=64, zero_stage=1, offload_modules=("expert_fc1", "moe_act")), m, tr, 256)
    assert module_offload_per_token(m, tr, lay, True) == 32_768 + 49_152
    assert module_offload_per_token(m, tr, lay, False) == 0  # neither module is in a dense layer


def test_dense_offload_leaves_the_device_and_costs_host_link_time():
    # Llama-3-8B (q 4096, kv 1024), tp 1, bf16, core_attn: Q, K, V = 2 x (4096 + 1024 + 1024) = 12,288 B per token;
    # one microbatch of 4096 tokens over 32 layers: 12,288 x 4096 x 32 = 1,610,612,736 B, on the host, not the device
    m, hw = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    plain = validate(ParallelConfig(zero_stage=1), m, tr, 8)
    lay = validate(ParallelConfig(zero_stage=1, offload_modules=("core_attn",)), m, tr, 8)
    assert module_offload_per_token(m, tr, lay, False) == 12_288
    moved = 12_288 * 4096 * 32
    assert stage_activation_bytes(m, tr, plain, 0) - stage_activation_bytes(m, tr, lay, 0) == moved
    assert memory_for_stage(m, tr, lay, 0).host_offload == moved
    # copied out beside the forward and back beside the backward at 64 GB/s (PCIe 5 x16): with no compute to hide
    # behind, both copies are exposed: 2 x 1,610,612,736 / 64e9 = 0.0503 s
    assert activation_offload_s(m, tr, lay, hw, 0.0) == pytest.approx(2 * moved / 64e9)
    assert activation_offload_s(m, tr, lay, hw, 1.0) == 0.0  # a 1 s microbatch hides 25 ms copies


def test_full_recompute_leaves_nothing_to_offload():
    # Megatron-LM scripts combine the two; a fully recomputed layer stores only its input: 0 B move
    m = MODELS["llama-3-8b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    lay = validate(ParallelConfig(zero_stage=1, recompute="full", offload_modules=("core_attn",)), m, tr, 8)
    assert module_offload_per_token(m, tr, lay, False) == 0


def test_recomputed_inputs_are_not_offloaded_twice():
    # layernorm recompute does not store the QKV input in bf16: offloading qkv_linear then moves nothing
    m = MODELS["llama-3-8b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    lay = validate(ParallelConfig(zero_stage=1, recompute="selective", recompute_modules=("layernorm",),
                                  offload_modules=("qkv_linear", "attn_norm")), m, tr, 8)
    assert module_offload_per_token(m, tr, lay, False) == 2 * 4096  # attn_norm's input only


@pytest.mark.parametrize("layout, framework, match", [
    (dict(offload_modules=("expert_fc1",)), None, "no MoE layers; legal offload_modules: attn_norm"),
    (dict(offload_modules=("core_attn", "core_attn")), None, "twice"),
    (dict(offload_modules=("core_attn",), offload_activation_layers=2), None, "legal offload_activation_layers: 0"),
    (dict(offload_modules=("core_attn",)), "torchtitan", "or --framework megatron"),
])
def test_bad_offload_modules_are_named(layout, framework, match):
    from shardplan.presets.frameworks import framework_profile
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    if framework:
        tr = tr.with_framework(framework_profile(framework))
    with pytest.raises(ConfigError, match=match):
        validate(ParallelConfig(zero_stage=1, **layout), MODELS["llama-3-8b"], tr, 8)


def test_megatron_flags_both_ways():
    from shardplan.export import exporter
    r = runner.invoke(app, ["export", "--to", "megatron", "-m", "qwen3-30b-a3b", "-H", "h100-sxm", "-n", "16",
                            "-s", "4096", "-b", "64", "--ep", "8", "--offload-modules", "expert_fc1,moe_act"])
    assert r.exit_code == 0, r.output
    read = exporter("megatron").read
    assert "--fine-grained-activation-offloading" in r.stdout
    # not in the arguments.py (000c4ac) of the file's other flags: the header says these need a later release
    assert "flags of Megatron-LM releases after the commit 000c4ac" in r.stdout
    assert read(r.stdout, 16).parallel.offload_modules == ("expert_fc1", "moe_act")
    text = "pretrain_gpt.py --fine-grained-activation-offloading --offload-modules core_attn attn_proj --bf16"
    assert read(text, 8).parallel.offload_modules == ("core_attn", "attn_proj")
    # Megatron-LM ignores --offload-modules without the switch; a near-miss module name is named
    assert read("pretrain_gpt.py --offload-modules core_attn", 8).parallel.offload_modules is None
    with pytest.raises(ConfigError, match="'core_atn' is not a Megatron-LM module"):
        read("pretrain_gpt.py --fine-grained-activation-offloading --offload-modules core_atn", 8)
    # a module-like word ends nothing: comma-joined names and unknown snake_case names are refused, not dropped
    for words in ("core_attn,qkv_linear", "core_attn dense_mlp moe_act"):
        with pytest.raises(ConfigError, match="is not a Megatron-LM module"):
            read(f"pretrain_gpt.py --fine-grained-activation-offloading --offload-modules {words}", 8)
    # the list ends at a shell word that is not module-like; a name given twice is refused at import, as estimate would
    text = "pretrain_gpt.py --fine-grained-activation-offloading --offload-modules core_attn attn_proj ) > log.txt"
    assert read(text, 8).parallel.offload_modules == ("core_attn", "attn_proj")
    with pytest.raises(ConfigError, match="names core_attn twice"):
        read("pretrain_gpt.py --fine-grained-activation-offloading --offload-modules core_attn core_attn", 8)
    with pytest.raises(ConfigError, match="legal offload_activation_layers: 0"):
        read("pretrain_gpt.py --fine-grained-activation-offloading --offload-modules core_attn --cpu-offloading "
             "--cpu-offloading-num-layers 2", 8)


def test_a_recomputed_moe_layer_has_no_expert_inputs_to_offload():
    # Qwen3-30B-A3B (h 2048, F_e 768, top 8), tp 1, bf16: with moe_act recompute the routed tokens 2 x 8 x 2048 =
    # 32,768 B and the SwiGLU input 2 x 2 x 768 x 8 = 24,576 B move (57,344 B); recomputing the whole MoE layer
    # ('moe') stores neither, so nothing moves
    m = MODELS["qwen3-30b-a3b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    for mods, moved in ((("moe_act",), 57_344), (("moe",), 0)):
        lay = validate(ParallelConfig(ep=8, zero_stage=1, recompute="selective", recompute_modules=mods,
                                      offload_modules=("expert_fc1", "moe_act")), m, tr, 16)
        assert module_offload_per_token(m, tr, lay, True) == moved


def test_an_empty_module_list_says_to_leave_the_field_out():
    # a plan file's `offload_modules: []` (read into a tuple) is shown as written, with the way to say "none";
    # a required list (a hardware file's gemm_tiles) gets no such hint
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    from shardplan.specs.hardware import HardwareSpec
    with pytest.raises(ValidationError) as e:
        ParallelConfig(offload_modules=())
    msg = str(config_error(e.value))
    assert "offload_modules=[]" in msg and "leave the field out (null) for none" in msg
    with pytest.raises(ValidationError) as e:
        HardwareSpec(**{**HARDWARE["h100-sxm"].model_dump(), "gemm_tiles": ()})
    msg = str(config_error(e.value))
    assert "gemm_tiles=[]" in msg and "leave the field out" not in msg
