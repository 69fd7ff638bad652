"""torchtitan's op-level selective checkpointing (FrameworkProfile.selective_recompute='every_other_matmul')."""

import pytest

from shardplan.cost.compute import every_other_mm_shares
from shardplan.cost.flops import op_sac_matmuls, recompute_flops_per_token
from shardplan.cost.memory import op_sac_bytes_per_token
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.models import MODELS
from shardplan.search import recompute_dominated
from shardplan.specs.training import TrainingSpec

L8 = MODELS["llama-3.1-8b"]  # h 4096, 32 heads, 8 KV heads (kv 1024), F 14336, SwiGLU


def _tr(framework: str = "torchtitan") -> TrainingSpec:
    return TrainingSpec(seq_len=8192, global_batch_size=16, framework=framework_profile(framework))


def test_every_other_mm_is_saved_in_call_order():
    # wq, wk, wv, wo, w1, w3, w2: the 1st, 3rd, 5th, 7th are saved
    assert op_sac_matmuls(L8) == (["q", "v", "gate", "down"], ["k", "o", "up"])
    assert op_sac_matmuls(MODELS["gpt2"]) == (["q", "v", "up"], ["k", "o", "down"])


def test_op_sac_bytes_by_hand():
    tr = _tr()
    lay = validate(ParallelConfig(zero_stage=3, dp=8, microbatch_size=2), L8, tr, 8)
    # block input 4096 + q 4096 + v 1024 + gate 14336 + down output 4096 + attention output 4096, x 2 B,
    # + fp32 log-sum-exp 4 B x 32 heads = 63,488 + 128
    assert op_sac_bytes_per_token(L8, tr, lay) == 63_616
    # tp=2 with SP: the block input is sequence-sharded (h/2), q, v, gate and the attention output split
    # by tp, the down projection's partial sum stays h wide; lse over 16 heads:
    # 2 x (2048 + 2048 + 512 + 7168 + 4096 + 2048) + 4 x 16 = 35,840 + 64
    lay2 = validate(ParallelConfig(tp=2, sp=True, dp=4, microbatch_size=2), L8, tr, 8)
    assert op_sac_bytes_per_token(L8, tr, lay2) == 35_904


def test_op_sac_recomputes_k_o_and_up():
    # FLOPs: 2 x (h kv + q h + h F) per layer = 2 x (4096 x 1024 + 4096^2 + 4096 x 14336) = 159,383,552 x 32 layers
    assert recompute_flops_per_token(L8, 8192, "selective", selective="every_other_matmul") == 2 * 32 * (
        4096 * 1024 + 4096 * 4096 + 4096 * 14336)
    # time shares of the fused GEMMs: K is 1024 of the 4096 + 2 x 1024 QKV columns, O whole, w3 half of w1 | w3
    assert every_other_mm_shares(L8, ParallelConfig()) == pytest.approx(
        {"qkv": 1 / 6, "attn_out": 1.0, "mlp_up": 0.5, "mlp_down": 0.0})
    # GPT-2 (GeLU, MHA 768): K is 768 of the 3 x 768 QKV columns, O whole, the down projection recomputed
    assert every_other_mm_shares(MODELS["gpt2"], ParallelConfig()) == pytest.approx(
        {"qkv": 1 / 3, "attn_out": 1.0, "mlp_up": 0.0, "mlp_down": 1.0})


def test_selective_is_not_pruned_under_op_sac():
    # Megatron's selective recompute stores what no-recompute stores under a flash kernel (pruned);
    # op-level checkpointing stores about 15.5 h instead of about 43 h per token and layer (kept)
    assert recompute_dominated("selective", _tr("megatron"), True)
    assert not recompute_dominated("selective", _tr("torchtitan"), True)


Q3 = MODELS["qwen3-30b-a3b"]  # h 2048, q 4096, kv 512, 32 heads, 128 experts top-8, expert_ffn 768, no shared


def test_moe_block_recomputes_its_routed_experts():
    # call order wq, wk, wv, wo, router gate; the experts' grouped_mm is not an mm the policy saves
    assert op_sac_matmuls(Q3, moe=True) == (["q", "v", "router"], ["k", "o"])
    tr = _tr()
    lay = validate(ParallelConfig(zero_stage=3, dp=8, microbatch_size=1), Q3, tr, 8)
    # block input 2048 + q 4096 + v 512 + router 128 + attention output 4096, x 2 B, + lse 4 x 32:
    # 2 x 10,880 + 128 = 21,888 B (the no-recompute count keeps every routed copy's expert activations)
    assert op_sac_bytes_per_token(Q3, tr, lay, moe=True) == 21_888
    # ep=8: the dispatch and combine AllToAll outputs are saved too, 2 x 2 B x top_k 8 x 2048 = 65,536 more
    lay_ep = validate(ParallelConfig(zero_stage=3, dp=8, ep=8, microbatch_size=1), Q3, tr, 8)
    assert op_sac_bytes_per_token(Q3, tr, lay_ep, moe=True) == 21_888 + 65_536
    # FLOPs per token: every MoE layer redoes K and O, 2 x (2048 x 512 + 4096 x 2048), and all 8 routed
    # experts, 2 x 8 x 3 x 2048 x 768; 48 MoE layers
    per_layer = 2 * (2048 * 512 + 4096 * 2048) + 2 * 8 * 3 * 2048 * 768
    assert recompute_flops_per_token(Q3, 8192, "selective", selective="every_other_matmul") == 48 * per_layer
    shares = every_other_mm_shares(Q3, ParallelConfig(), moe=True)
    assert shares["expert_up"] == shares["expert_down"] == 1.0 and shares["router"] == 0.0
    assert shares["qkv"] == pytest.approx(512 / (4096 + 2 * 512))


def test_loss_chunks_divide_the_logits_and_recompute_the_head():
    from shardplan.cost.compute import lm_head_s
    from shardplan.cost.step import estimate
    from shardplan.presets.hardware import HARDWARE
    m, hw = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]
    base = framework_profile("maxtext")
    chunked = base.model_copy(update={"loss_chunks": 4})
    p = ParallelConfig(zero_stage=3, microbatch_size=1)
    tr1 = TrainingSpec(seq_len=8192, global_batch_size=8, framework=base)
    tr4 = TrainingSpec(seq_len=8192, global_batch_size=8, framework=chunked)
    e1, e4 = estimate(m, hw, tr1, p, 8), estimate(m, hw, tr4, p, 8)
    # MaxText's logits as XLA keeps them (the bf16 dot output, its gradient in the same buffer), 2 B x 128,256
    # vocab x 8,192 tokens = 2,101,346,304 B; four chunks hold a quarter of it at a time
    assert e1.memory.logits == 2 * 128_256 * 8192 == 2_101_346_304
    assert e4.memory.logits == 2 * 128_256 * 8192 / 4
    # the backward re-runs each chunk's forward GEMM ([2048, 4096] x [4096, 128,256]), four times
    lay = e4.layout
    _, _, rec = lm_head_s(m, tr4, hw, lay, 8192)
    assert rec > 0 and lm_head_s(m, tr1, hw, e1.layout, 8192)[2] == 0.0
    assert e4.recompute_s - e1.recompute_s == pytest.approx(rec)
    # HFU counts the head's forward once more: 2 x 4096 x 128,256 FLOPs per token x 65,536 tokens
    assert e4.hardware_flops_per_step - e1.hardware_flops_per_step == pytest.approx(2 * 4096 * 128_256 * 65_536)
