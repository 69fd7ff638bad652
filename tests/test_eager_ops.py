"""The megatron-legacy profile's eager element-wise ops (shardplan.cost.compute.eager_op_extra_bytes): the extra
HBM bytes per token and layer that Megatron-LM's legacy model code moves, derived by hand below."""

import pytest

from shardplan.cost.compute import eager_op_extra_bytes, elementwise_bytes_per_token
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS, framework_profile
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec


def _training(framework: str, attention: str = "flash") -> TrainingSpec:
    return TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS[framework], attention=attention)


def test_llama_2_13b_eager_bytes_by_hand():
    # Llama-2-13B: h = q = kv = 5120 (MHA), SwiGLU F = 13824, RMSNorm x 2, RoPE; bf16 activations (beta = 2), tp = 1
    #   rope:      10 x 2 x (5120 + 5120)        = 204,800
    #   swiglu:     2 x 2 x 13824                =  55,296
    #   rmsnorm:    2 norms x (28 + 2 x 2) x 5120 = 327,680
    #   layout:     2 x 2 x (2 x 5120 + 2 x 5120) =  81,920   (flash attention)
    #   total                                     = 669,696
    m, tr = MODELS["llama-2-13b"], _training("megatron-legacy")
    assert eager_op_extra_bytes(m, tr, ParallelConfig(tp=1)) == pytest.approx(669_696)
    # tp = 2 with sequence parallelism: every term halves (norms over sigma = tp, the rest over tp) -> 334,848
    assert eager_op_extra_bytes(m, tr, ParallelConfig(tp=2, sp=True)) == pytest.approx(334_848)
    # without flash attention there is no layout copy: 669,696 - 81,920 = 587,776
    assert eager_op_extra_bytes(m, _training("megatron-legacy", "naive"), ParallelConfig(tp=1)) == pytest.approx(587_776)


def test_eager_bytes_apply_only_to_the_ops_a_model_has_and_the_legacy_profile():
    # GPT-3 175B (GeLU, LayerNorm, learned positions): only the FlashAttention layout copies,
    # 2 x 2 x (2 x 12288 + 2 x 12288) = 196,608 bytes
    gpt, p = MODELS["gpt3-175b"], ParallelConfig(tp=1)
    assert eager_op_extra_bytes(gpt, _training("megatron-legacy"), p) == pytest.approx(196_608)
    # Megatron-Core (the megatron profile) fuses them all: nothing extra, and the per-token total is the fused count
    llama, tr = MODELS["llama-2-13b"], _training("megatron")
    assert FRAMEWORKS["megatron"].eager_ops == ("expert_bias",) and eager_op_extra_bytes(llama, tr, p) == 0.0
    legacy = elementwise_bytes_per_token(llama, _training("megatron-legacy"), p, False)
    assert legacy - elementwise_bytes_per_token(llama, tr, p, False) == pytest.approx(669_696)
    # Megatron-DeepSpeed takes apex's fused RMSNorm on CUDA: its eager bytes lack the norms' 327,680 -> 342,016
    assert eager_op_extra_bytes(llama, _training("deepspeed"), p) == pytest.approx(669_696 - 327_680)


def test_megatron_legacy_defaults_to_fp32_gradient_reduction():
    # 2023 Megatron-LM's validate_args turns --bf16 into fp32 gradient accumulation and reduction: the profile's
    # default precision; 13B at dp=32 ZeRO-0 keeps a 4-byte gradient per parameter (13.0e9 x 4 B = 48.5 GiB of grads)
    import json

    from typer.testing import CliRunner

    from shardplan.cli import app

    r = CliRunner().invoke(app, ["estimate", "-m", "llama-2-13b", "-H", "a100-80gb", "-n", "32", "-s", "2048", "-b",
                                 "64", "--framework", "megatron-legacy", "--json"])
    assert r.exit_code in (0, 1), r.output
    d = json.loads(r.stdout)
    assert d["training"]["precision"] == "bf16-mixed-fp32-grads"
    params = MODELS["llama-2-13b"].n_params
    assert d["memory_bytes"]["grads"] == pytest.approx(4 * params, rel=1e-6)


def test_megatron_expert_bias_prices_the_eager_per_expert_output_bias_of_gpt_oss_only():
    # Megatron-Core TEGroupedMLP._apply_bias: (56 + 4 x 2) / 3 bytes per element of the 2,880-wide output of each of
    # the 4 routed copies: 64 / 3 x 4 x 2,880 = 245,760 bytes per token (forward; the backward is twice it)
    oss, tr, p = MODELS["gpt-oss-120b"], _training("megatron"), ParallelConfig(tp=1, ep=8)
    assert eager_op_extra_bytes(oss, tr, p, moe=True) == pytest.approx(245_760)
    assert eager_op_extra_bytes(oss, tr, p, moe=False) == 0.0  # a dense layer has no experts
    # an MoE model without expert biases pays nothing, nor does a profile without the op (the MLPerf rows' TE op fuser)
    assert eager_op_extra_bytes(MODELS["qwen3-30b-a3b"], tr, p, moe=True) == 0.0
    fused = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("megatron+eager_ops=[]"))
    assert eager_op_extra_bytes(oss, fused, p, moe=True) == 0.0
