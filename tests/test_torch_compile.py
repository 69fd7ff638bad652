"""The torchtitan-compile profile (torchtitan with torch.compile): fused element-wise kernels and a compiled loss,
its export / import, and the Grand Teton H100's peak the torchtitan benchmarks ran at."""

import tomllib

import pytest

from shardplan.calibration import hardware_of
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

LAYOUT = ParallelConfig(dp=32, zero_stage=3, microbatch_size=2, recompute="selective")


def _estimate(framework: str, **update):
    profile = framework_profile(framework).model_copy(update=update)
    training = TrainingSpec(seq_len=8192, global_batch_size=64, framework=profile)
    return estimate(MODELS["llama-3.1-8b"], load_hardware("h200"), training, LAYOUT, 32)


def test_compiled_loss_keeps_four_bytes_per_vocabulary_element():
    # 2 sequences x 8,192 tokens = 16,384 tokens per microbatch, vocabulary 128,256 (no padding in torchtitan):
    # eager: the backward's three fp32 tensors (log-softmax output, its incoming and outgoing gradients) = 12 B
    # (the forward's bf16 logits 2 + fp32 upcast 4 + fp32 log-softmax 4 = 10 B is lower)
    # -> 16,384 x 128,256 x 12 = 25,216,155,648 B;
    # compiled: bf16 logits 2 + bf16 gradient 2 = 4 B -> 8,405,385,216 B
    assert _estimate("torchtitan").memory.logits == 25_216_155_648
    assert _estimate("torchtitan-compile").memory.logits == 8_405_385_216


def test_compile_removes_the_eager_elementwise_traffic_and_nothing_else():
    eager, compiled = _estimate("torchtitan"), _estimate("torchtitan-compile")
    doubled = _estimate("torchtitan-compile", elementwise_traffic=2.0)
    unfused = _estimate("torchtitan-compile", elementwise_traffic=5.31)
    # the element-wise time is linear in the traffic multiplier: going 1 -> 5.31 (the eager fit) adds 4.31 times
    # what going 1 -> 2 adds; the matmuls are untouched
    assert unfused.elementwise_s - compiled.elementwise_s == pytest.approx(4.31 * (doubled.elementwise_s
                                                                                   - compiled.elementwise_s))
    # the eager profile's element-wise time is that of the unfused traffic within the eager loss's extra bytes
    assert eager.elementwise_s == pytest.approx(unfused.elementwise_s, rel=0.05)
    assert eager.step_s > compiled.step_s
    # the matmuls differ only by the eager profile's GEMM rate (gpu_matmul_scale 1.32, capped on the H100 at the
    # isolated 0.73 / 0.59): the compiled profile given the same scale prices the same matmul seconds
    assert _estimate("torchtitan-compile", gpu_matmul_scale=1.32).matmul_s == pytest.approx(eager.matmul_s)
    assert eager.matmul_s < compiled.matmul_s
    assert framework_profile("torchtitan-compile").sources["elementwise_traffic"].startswith("torchtitan with [compile]")


def test_export_writes_compile_only_for_the_compiled_profile():
    def sections(framework: str) -> dict:
        return tomllib.loads(export_text("torchtitan", _estimate(framework)))
    assert sections("torchtitan-compile")["compile"] == {"enable": True, "components": ["model", "loss"]}
    assert "compile" not in sections("torchtitan")  # torchtitan's own default: eager


@pytest.mark.parametrize("extra, profile, note", [
    ('[compile]\nenable = true\ncomponents = ["model", "loss"]\n', "torchtitan-compile", None),
    ('[compile]\nenable = true\n', "torchtitan-compile", None),
    ('[compile]\nenable = false\n', "torchtitan", None),
    ('[compile]\nenable = true\ncomponents = ["loss"]\n', "torchtitan", 'without "model"'),
    ('[compile]\nenable = true\ncomponents = ["model"]\n', "torchtitan-compile", 'without "loss"'),
    ("", "torchtitan", None),
])
def test_import_reads_the_compile_section(extra, profile, note):
    text = ('[parallelism]\ndata_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n'
            + extra)
    got = import_config("torchtitan", text)
    assert got.framework == profile
    assert note is None or any(note in n for n in got.notes), got.notes


def test_import_reads_the_older_training_compile_key_with_a_note():
    text = '[parallelism]\ndata_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\ncompile = true\n'
    got = import_config("torchtitan", text)
    assert got.framework == "torchtitan-compile" and any("[training] compile" in n for n in got.notes)


def test_grand_teton_h100_peak_is_the_midpoint_of_nvl_and_sxm():
    # torchtitan's Dec 2024 benchmarks: "between SXM and NVL": (835.5 + 989.4) / 2 = 912.45 bf16 TFLOP/s dense,
    # (1,670.5 + 1,978.9) / 2 = 1,824.7 fp8
    hw = hardware_of("H100 96GB")
    assert hw.peak_flops_bf16 == pytest.approx(912.45e12) and hw.peak_flops_fp8 == pytest.approx(1824.7e12)
    assert hw.hbm_bandwidth == 2.4e12 and hardware_of("H100").peak_flops_bf16 == pytest.approx(989.4e12, rel=1e-3)



@pytest.mark.parametrize("extra, field", [
    ('[compile]\nenable = "true"\n', "enable"),
    ('[compile]\nenable = true\ncomponents = "model"\n', "components"),
    ('[compile]\nenable = true\ncomponents = ["model", "bogus"]\n', "components"),
    ('compile = true\n', "compile"),
])
def test_import_refuses_odd_compile_values(extra, field):
    text = extra + '[parallelism]\ndata_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 1\n'
    with pytest.raises(ConfigError) as err:
        import_config("torchtitan", text)
    assert err.value.field == field and "legal" in str(err.value)


def test_async_tp_needs_the_compiled_profile():
    # torchtitan raises "Async TP requires torch.compile": the eager profile refuses tp_overlap, its importer refuses
    # async TP without a compiled model, and its exporter refuses tp_overlap from a profile that is not compiled
    with pytest.raises(ConfigError, match="--framework torchtitan-compile") as err:
        estimate(MODELS["llama-3.1-8b"], load_hardware("h200"),
                 TrainingSpec(seq_len=8192, global_batch_size=64, framework=framework_profile("torchtitan")),
                 ParallelConfig(dp=16, zero_stage=3, tp=2, sp=True, tp_overlap=True, microbatch_size=2), 32)
    assert err.value.field == "tp_overlap"
    text = ('[parallelism]\ndata_parallel_shard_degree = 4\ntensor_parallel_degree = 2\n'
            'enable_async_tensor_parallel = true\n[training]\nlocal_batch_size = 1\n')
    with pytest.raises(ConfigError, match="Async TP requires torch.compile"):
        import_config("torchtitan", text)
    assert import_config("torchtitan", text + "[compile]\nenable = true\n").framework == "torchtitan-compile"
    megatron = TrainingSpec(seq_len=8192, global_batch_size=64, framework=framework_profile("megatron"))
    e = estimate(MODELS["llama-3.1-8b"], load_hardware("h200"), megatron,
                 ParallelConfig(dp=16, zero_stage=3, tp=2, sp=True, tp_overlap=True, microbatch_size=2), 32)
    with pytest.raises(ConfigError, match="tp_overlap without torch.compile"):
        export_text("torchtitan", e)


def test_a_profile_file_on_the_compiled_base_exports_compile(tmp_path):
    # the [compile] section follows what the plan was priced with (FrameworkProfile.compiled), not the profile's name;
    # an eager loss drops "loss" from the components
    from shardplan.presets.frameworks import framework_profile as load
    named = tmp_path / "named.yaml"
    named.write_text("base: torchtitan-compile\nname: cluster-a\n")
    eager_loss = tmp_path / "eager_loss.yaml"
    eager_loss.write_text("base: torchtitan-compile\nloss: eager\nlogit_bytes: null\n")
    for path, components in ((named, ["model", "loss"]), (eager_loss, ["model"])):
        training = TrainingSpec(seq_len=8192, global_batch_size=64, framework=load(str(path)))
        e = estimate(MODELS["llama-3.1-8b"], load_hardware("h200"), training, LAYOUT, 32)
        assert tomllib.loads(export_text("torchtitan", e))["compile"]["components"] == components


def test_grand_teton_peak_ignores_spacing_and_internlm_keys_its_code_ignores():
    assert hardware_of("H100 96 GB").peak_flops_bf16 == pytest.approx(912.45e12)
    from shardplan.hf_config import spec_fields
    base = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
            "vocab_size": 103168, "bias": True}
    # InternLM v1 is multi-head whatever num_key_value_heads says; InternLM2 derives the KV heads from the head count
    assert spec_fields("InternLMForCausalLM", {**base, "num_key_value_heads": 8}).get("n_kv_heads") == 32
    assert spec_fields("InternLM2ForCausalLM", {**base, "bias": False})["n_kv_heads"] == 32
    assert "head_dim" not in spec_fields("InternLM2ForCausalLM", {**base, "head_dim": 64})


def test_compile_note_only_under_eager_torchtitan():
    from shardplan.cli.estimate import compile_note
    eager, compiled = _estimate("torchtitan"), _estimate("torchtitan-compile")
    note = compile_note(eager)
    # the note quotes the compiled estimate of the same layout: its tokens/s per device and its gain
    assert f"{compiled.tokens_per_s / 32:,.0f} tokens/s per device" in note
    assert f"({compiled.tokens_per_s / eager.tokens_per_s - 1:+.0%})" in note
    assert compile_note(compiled) is None and compile_note(_estimate("megatron")) is None
