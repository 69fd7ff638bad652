"""FLOPs, activations and context-parallel traffic per architecture (issue 11), derived by hand:
MLA's latent K/V, sliding windows, QK-norm."""

import pytest

from shardplan.cost import flops as F
from shardplan.cost.memory import activation_bytes_per_token, attention_extra_bytes_per_token
from shardplan.cost.step import estimate
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

V2L = MODELS["deepseek-v2-lite"]  # MLA: a = 16, d_c = 512, d_rope = 64, d_nope = 128, d_v = 128, no q latent


def test_mla_matmul_params_and_attention_core_flops():
    # projections only (the 512-wide latent RMSNorm is no matmul): q 2048*16*192 + kv_a 2048*576
    #   + kv_b 512*16*256 + o 16*128*2048
    assert V2L.attention_matmul_params() == 6_291_456 + 1_179_648 + 2_097_152 + 4_194_304 == 13_762_560
    # QK^T over d_qk = 192 and AV over d_v = 128: 2 * 16 * (192 + 128) per key, s/2 keys when causal
    assert F.attention_core_flops_fwd(V2L, 4096, causal=True) == 2 * 16 * 320 * 2048 == 20_971_520
    # MoE layer per token: attention + (6 routed + 2 shared) x 3 x 2048 x 1408 + router 2048 x 64
    assert F.layer_matmul_params(V2L, True) == 13_762_560 + 8 * 3 * 2048 * 1408 + 2048 * 64 == 83_099_648
    # dense first layer: attention + 3 x 2048 x 10944
    assert F.layer_matmul_params(V2L, False) == 13_762_560 + 67_239_936
    total = F.model_flops_per_token(V2L, 4096)
    assert total == 6 * (13_762_560 + 67_239_936 + 26 * 83_099_648 + 2048 * 102_400) + 3 * 27 * 20_971_520


def test_mla_kv_widths_stored_and_sent():
    # per token per layer: the latent c_KV (512) is stored twice (norm input, up-projection input), not split
    # over tp: 2 x 2 B x 512 = 2048 B whatever tp is
    assert attention_extra_bytes_per_token(V2L, 2, 1) == attention_extra_bytes_per_token(V2L, 2, 4) == 2048
    # with sequence parallelism over tp = 4 the norm input is on the rank's sequence shard, the up-projection
    # input gathered: 2 x 512 / 4 + 2 x 512 = 1280 B
    assert attention_extra_bytes_per_token(V2L, 2, 4, 4) == 1280
    # DeepSeek-V3 adds the query latent (1536) twice on the shard: 2 x (512 + 2 x 1536) / 4 + 2 x 512
    assert attention_extra_bytes_per_token(MODELS["deepseek-v3"], 2, 4, 4) == 2 * 3584 / 4 + 1024 == 2816
    # a CP ring sends the up-projected K (192) and V (128) of the rank's heads: tp = 2 -> 8 heads x 320 = 2560
    assert V2L.kv_ring_width_per_rank(2) == 8 * (192 + 128) == 2560
    # against a GQA model with 8 KV heads of 128 at tp = 2: 4 x 128 x 2
    assert MODELS["llama-3-8b"].kv_ring_width_per_rank(2) == 2 * MODELS["llama-3-8b"].kv_dim_per_rank(2) == 1024


def test_mla_cp_ring_message_bytes():
    # DeepSeek-V2-Lite, tp = 2, cp = 2, seq 8192, 1 sequence per step per dp rank: 4096 local tokens;
    # one message = 2 B x 4096 x 2560 = 20,971,520 B
    tr = TrainingSpec(seq_len=8192, global_batch_size=2)
    e = estimate(V2L, HARDWARE["h100-sxm"], tr, ParallelConfig(tp=2, cp=2, ep=2), 8)
    ring = [c for c in e.collectives if c.axis == "cp" and c.phase == "fwd"][0]
    assert ring.bytes_per_device / ring.count == 2 * 4096 * 2560 == 20_971_520


def test_mla_activations_per_token():
    # tp = 1, no SP, flash, bf16, no dropout; dense layer of DeepSeek-V2-Lite:
    #   norms + QKV input 3*2*2048 = 12,288; Q 16*192 + K 16*192 + V 16*128 = 8192 -> 16,384;
    #   attention output 16*128 -> 4096; latent 2*2*512 = 2048; LSE 4*16 = 64; MLP input 4096;
    #   SwiGLU 3*2*10944 = 65,664  -> 104,640 B
    tr = TrainingSpec(seq_len=4096, global_batch_size=8)
    lay = validate(ParallelConfig(), V2L, tr, 8)
    assert activation_bytes_per_token(V2L, tr, lay, False) == 12_288 + 16_384 + 4096 + 2048 + 64 + 4096 + 65_664


def test_sliding_window_flops_use_the_window():
    m = MODELS["mistral-7b-v0.1"]  # every layer slides over 4096 keys
    # causal, s = 8192: query i sees min(i, 4096) keys; mean 4096 - 4096^2 / (2 x 8192) = 3072 (exact sum: 3072.25)
    assert m.attended_keys(8192, causal=True) == 3072
    assert F.attention_core_flops_fwd(m, 8192, True) == 2 * 32 * 256 * 3072 == 50_331_648
    # within the window nothing changes: s = 4096 -> s/2
    assert F.attention_core_flops_fwd(m, 4096, True) == F.attention_core_flops_fwd(MODELS["mistral-7b"], 4096, True)
    # a naive kernel computes the masked score matrix anyway: no saving in the hardware recompute FLOPs
    assert F.attention_core_flops_fwd(m, 8192, False, windowed=False) == 2 * 32 * 256 * 8192
    # Gemma 2: half the layers slide (4096 keys of 8192), half are full: mean (3072 + 4096) / 2 = 3584
    assert MODELS["gemma-2-9b"].attended_keys(8192, True) == 3584


def test_sliding_window_naive_scores_are_banded():
    m = MODELS["mistral-7b-v0.1"]
    tr = TrainingSpec(seq_len=8192, global_batch_size=8, attention="naive", dropout=False)
    full = MODELS["mistral-7b"]
    lay = validate(ParallelConfig(), m, tr, 8)
    # softmax output 2 B x 32 heads x (4096 instead of 8192 keys) per token
    diff = activation_bytes_per_token(full, tr, lay, False) - activation_bytes_per_token(m, tr, lay, False)
    assert diff == 2 * 32 * (8192 - 4096)


def test_qk_norm_stores_pre_norm_q_and_k():
    q3 = MODELS["qwen3-8b"]
    no_norm = q3.model_copy(update={"qk_norm": "none"})
    tr = TrainingSpec(seq_len=4096, global_batch_size=8)
    lay = validate(ParallelConfig(tp=2), q3, tr, 8)
    # (q 4096 + k 1024) x 2 B / tp 2
    diff = activation_bytes_per_token(q3, tr, lay, False) - activation_bytes_per_token(no_norm, tr, lay, False)
    assert diff == (4096 + 1024) * 2 / 2 == 5120
    # QK-norm and sinks add no matmul FLOPs
    assert F.model_flops_per_token(q3, 4096) == F.model_flops_per_token(no_norm, 4096)


@pytest.mark.parametrize("name", ["deepseek-v3", "gpt-oss-20b", "gemma-3-1b", "qwen3-30b-a3b", "llama-4-scout",
                                  "falcon-7b", "bloom-560m", "olmo-2-7b", "phi-3-mini-4k"])
def test_family_presets_estimate(name):
    m = MODELS[name]
    tp = 2 if m.n_heads % 2 == 0 and m.kv_heads % 2 == 0 else 1  # Falcon-7B: 71 heads; Gemma 3 1B: 1 KV head
    pc = ParallelConfig(tp=tp, ep=2) if m.is_moe else ParallelConfig(tp=tp)
    e = estimate(m, HARDWARE["h100-sxm"], TrainingSpec(seq_len=4096, global_batch_size=16), pc, 8)
    assert e.step_s > 0 and e.memory.total > 0 and 0 < e.mfu < 1


def test_mla_gemms_carry_the_layer_flops_with_replicated_down_projections():
    from shardplan.cost.compute import layer_gemm_shapes
    # DeepSeek-V2-Lite dense layer, tp = 2, 4096 tokens: the K/V down projection 2048 x 576 is computed whole on
    # every rank, the rest (q 2048 x 3072, kv_b 512 x 4096, o 2048 x 2048, MLP 3 x 2048 x 10944) is split tp ways
    shapes = dict(layer_gemm_shapes(V2L, ParallelConfig(tp=2), 4096, False))
    assert (shapes["kv_down"].n, shapes["kv_down"].k) == (576, 2048)
    assert (shapes["kv_up"].n, shapes["kv_up"].k) == (8 * 256, 512)
    assert (shapes["q"].n, shapes["attn_out"].k) == (8 * 192, 8 * 128)
    down = 2048 * 576
    expect = 2 * 4096 * ((F.layer_matmul_params(V2L, False) - down) / 2 + down)
    assert sum(s.flops for s in shapes.values()) == pytest.approx(expect)


def test_mla_down_projection_is_whole_on_every_tp_rank():
    from shardplan.cost.memory import stage_params
    tr = TrainingSpec(seq_len=4096, global_batch_size=8)
    lay = validate(ParallelConfig(tp=2, ep=2), V2L, tr, 8)
    sp = stage_params(V2L, lay, 0)
    # per layer: 2 norms 2*2048 + kv_a 2048*576 + kv_a norm 512 = 1,184,256; 26 MoE routers 2048*64; final norm
    assert V2L.attention_tp_replicated_params() == 2048 * 576 + 512
    assert sp.replicated == 27 * (4096 + 1_180_160) + 26 * 2048 * 64 + 2048
    # split over tp: the rest of the attention, dense MLP, shared experts, embeddings and LM head
    attn = 13_763_072 - 1_180_160
    split = 27 * attn + 3 * 2048 * 10944 + 26 * 2 * 3 * 2048 * 1408 + 2 * 102_400 * 2048
    assert sp.dense == split / 2
    assert sp.expert == 26 * 64 * 3 * 2048 * 1408 / (2 * 2)


def _mixtral(etp):
    tr = TrainingSpec(seq_len=4096, global_batch_size=16)
    pc = ParallelConfig(tp=2, sp=True, ep=8, etp=etp)
    return tr, validate(pc, MODELS["mixtral-8x7b"], tr, 16)


def test_etp_memory_mixtral_tp2_ep8():
    from shardplan.cost.memory import stage_params
    mix = MODELS["mixtral-8x7b"]
    # routed experts: 32 layers x 8 experts x 3 x 4096 x 14336 = 45,097,156,608 elements
    routed = 32 * 8 * 3 * 4096 * 14336
    assert routed == 45_097_156_608
    tr, one = _mixtral(1)
    _, two = _mixtral(2)
    # etp=1: each of the 8 ep ranks holds one whole expert per layer: / 8; etp=2: / (8 x 2)
    assert stage_params(mix, one, 0).expert == routed / 8 == 5_637_144_576
    assert stage_params(mix, two, 0).expert == routed / 16 == 2_818_572_288
    # the rest is identical: attention 32 x 41,943,040 + embeddings 2 x 32000 x 4096, over tp = 2
    assert stage_params(mix, one, 0).dense == stage_params(mix, two, 0).dense == (32 * 41_943_040 + 262_144_000) / 2
    # expert data parallelism folds the 16 = tp 2 x dp 8 ranks: edp = 16 / (ep 8 x etp) = 2 or 1
    assert (one.expert_dp, two.expert_dp) == (2, 1)
    # and the default etp (= tp) equals etp=2
    _, default = _mixtral(None)
    assert stage_params(mix, default, 0).expert == stage_params(mix, two, 0).expert and default.expert_dp == 1
    # model state bytes differ by exactly the expert elements: 2,818,572,288 x bytes per parameter
    from shardplan.cost.memory import memory_for_stage
    m1, m2 = memory_for_stage(mix, tr, one, 0), memory_for_stage(mix, tr, two, 0)
    # (bf16 params + grads, fp32 master, Adam moments: 2 + 2 + 4 + 8 = 16 B, ZeRO 0)
    assert tr.precision.model_state_bytes_per_param == 16
    assert m1.model_state - m2.model_state == pytest.approx(2_818_572_288 * 16)


def test_etp_collectives_mixtral():
    mix = MODELS["mixtral-8x7b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=16)
    hw = HARDWARE["h100-sxm"]
    e1 = estimate(mix, hw, tr, ParallelConfig(tp=2, sp=True, ep=8, etp=1), 16)
    e2 = estimate(mix, hw, tr, ParallelConfig(tp=2, sp=True, ep=8, etp=2), 16)
    def tp_calls(e, tensor):
        return sum(c.count for c in e.collectives if c.axis == "tp" and c.tensor == tensor and c.scope == "layers")
    # every layer keeps its 5 attention SP rows over tp; the MoE layers' MLP rows belong to the token dispatcher:
    # etp=2 (= tp) gathers / scatters the dispatched tokens, 4 calls per layer (AG + RS forward, RS + AG backward,
    # no weight-gradient re-gather); etp=1 has none
    m = 16 // 8  # microbatches: 16 sequences / dp 8
    assert tp_calls(e2, "activations") == 5 * 32 * m and tp_calls(e2, "tokens") == 4 * 32 * m
    assert tp_calls(e1, "activations") == 5 * 32 * m and tp_calls(e1, "tokens") == 0
    # one dispatcher gather: bf16 x (4,096 tokens / tp 2) x etp 2 x top_k 2 x d_model 4,096 = 67,108,864 B, twice
    # the 33,554,432 B block input a dense layer's gather moves; exposed although tp_overlap hides the others
    ag = [c for c in e2.collectives if c.tensor == "tokens" and c.op == "AllGather" and c.phase == "fwd"][0]
    assert ag.group_size == 2 and ag.overlap == "exposed" and ag.exposed_s == ag.time_s
    # AllGather bytes per device: (n - 1) / n of the gathered buffer, 32 layers x 2 microbatches
    assert ag.bytes_per_device == pytest.approx(67_108_864 * 1 / 2 * 32 * m)
    e3 = estimate(mix, hw, tr, ParallelConfig(tp=2, sp=True, ep=8, etp=2, tp_overlap=True), 16)
    rows = [c for c in e3.collectives if c.axis == "tp" and c.scope == "layers"]
    assert all(c.exposed_s < c.time_s for c in rows if c.tensor == "activations")
    assert all(c.exposed_s == c.time_s and c.overlap == "exposed" for c in rows if c.tensor == "tokens")


def test_etp_validation_names_field_and_legal_values():
    from shardplan.errors import ConfigError
    tr = TrainingSpec(seq_len=4096, global_batch_size=16)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=2, sp=True, etp=1), MODELS["llama-3-8b"], tr, 16)
    assert e.value.field == "etp"
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=2, sp=True, ep=8, etp=4), MODELS["mixtral-8x7b"], tr, 16)
    assert e.value.field == "etp" and 1 in e.value.legal and 4 not in e.value.legal
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=2, sp=False, ep=8, etp=1), MODELS["mixtral-8x7b"], tr, 16)
    assert e.value.field == "sp"


def test_search_honours_a_pinned_etp():
    from shardplan.search import search
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    res = search(MODELS["mixtral-8x7b"], HARDWARE["h100-sxm"], tr, 16, top_k=3, fix={"etp": 1, "tp": 2, "sp": True})
    assert res.plans and all(pl.parallel.etp == 1 and pl.parallel.tp == 2 for pl in res.plans)


def test_deepseek_v3_mtp_module():
    base, mtp = MODELS["deepseek-v3"], MODELS["deepseek-v3-mtp"]
    # one more MoE block (11,507,286,016) + projection M 2 x 7168 x 7168 + enorm, hnorm, head norm 3 x 7168;
    # embedding and LM head shared
    assert mtp.n_params - base.n_params == 11_507_286_016 + 102_760_448 + 21_504 == 11_610_067_968
    # active: attention 187,107,328 + (8 routed + 1 shared) x 3 x 7168 x 2048 + router 256 x 7168 + 2 norms
    #   + M + 3 norms
    assert mtp.n_active_params - base.n_active_params == (187_107_328 + 9 * 3 * 7168 * 2048 + 256 * 7168
                                                           + 2 * 7168 + 102_760_448 + 3 * 7168)
    # FLOPs per token: 6 x (one more MoE block's matmuls + M + one more LM head) + 3 x one more attention core
    d = F.model_flops_per_token(mtp, 4096) - F.model_flops_per_token(base, 4096)
    block = F.layer_matmul_params(base, True)
    assert d == 6 * (block + 2 * 7168 * 7168 + 7168 * 129280) + 3 * F.attention_core_flops_fwd(base, 4096, True)


def test_mtp_module_lives_on_the_last_stage():
    from shardplan.cost.memory import memory_for_stage, stage_params
    base, mtp = MODELS["deepseek-v3"], MODELS["deepseek-v3-mtp"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    # the same split for both (the automatic one counts the MTP module as a last-stage layer:
    # test_mtp_module_counts_in_the_uneven_split)
    pc = ParallelConfig(pp=8, ep=8, tp=8, sp=True, pp_layers=(7, 8, 8, 8, 8, 8, 7, 7))
    lb, lm = validate(pc, base, tr, 512), validate(pc, mtp, tr, 512)
    first_b, first_m = stage_params(base, lb, 0), stage_params(mtp, lm, 0)
    assert first_b == first_m
    last_b, last_m = stage_params(base, lb, 7), stage_params(mtp, lm, 7)
    assert (last_m.layers - last_b.layers, last_m.moe_layers - last_b.moe_layers) == (1, 1)
    assert last_m.expert - last_b.expert == 256 * 3 * 7168 * 2048 / (8 * 8)
    # logits of the main head and the module's head are both alive at the end of the forward
    mb, mm = memory_for_stage(base, tr, lb, 7), memory_for_stage(mtp, tr, lm, 7)
    assert mm.logits == 2 * mb.logits


def test_new_model_fields_validate_with_field_value_and_legal():
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    from shardplan.specs.model import ModelSpec
    base = dict(n_layers=4, d_model=64, n_heads=4, ffn_dim=128, vocab_size=256)

    def error(**kw):
        with pytest.raises(ValidationError) as e:
            ModelSpec(**base, **kw)
        return config_error(e.value)

    e = error(router_bias=True)
    assert (e.field, e.value, list(e.legal)) == ("router_bias", True, [False])
    e = error(n_experts=4, top_k=1, moe_layer_step=5)
    assert e.field == "moe_layer_step" and list(e.legal) == [1, 2, 3, 4]
    assert error(full_attention_interval=2).field == "full_attention_interval"
    assert error(kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8).field == "v_head_dim"
    e = error(n_kv_heads=2, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=16)
    assert e.field == "n_kv_heads" and list(e.legal) == [4]
    assert error(qk_norm="per-head").field == "qk_norm"


def test_etp_expert_gemms_same_flops_other_shapes():
    from shardplan.cost.compute import layer_gemm_shapes
    mix = MODELS["mixtral-8x7b"]
    # tp = 2, ep = 8, 8192 local tokens: etp = 2 -> each expert rank multiplies 8192 x 2 x 8 / 8 = 16,384 tokens
    # through 14336 / 2 = 7168 columns; etp = 1 -> 8192 / 2 x 2 = 8192 tokens through all 14336
    two = dict(layer_gemm_shapes(mix, ParallelConfig(tp=2, sp=True, ep=8, etp=2), 8192, True))
    one = dict(layer_gemm_shapes(mix, ParallelConfig(tp=2, sp=True, ep=8, etp=1), 8192, True))
    assert (two["expert_down"].m, two["expert_down"].k) == (16384, 7168)
    assert (one["expert_down"].m, one["expert_down"].k) == (8192, 14336)
    assert one["expert_up"].flops == two["expert_up"].flops


def test_mla_down_projections_on_the_sequence_shard_with_sp():
    from shardplan.cost.compute import layer_gemm_shapes
    # tp = 2 with SP: with the whole latent computed on the 4096 / 2 tokens of the shard, the layer's GEMM FLOPs
    # are exactly its matmul parameters / tp
    shapes = dict(layer_gemm_shapes(V2L, ParallelConfig(tp=2, sp=True), 4096, False))
    assert shapes["kv_down"].m == 2048 and shapes["kv_up"].m == 4096
    assert sum(s.flops for s in shapes.values()) == pytest.approx(2 * 4096 * F.layer_matmul_params(V2L, False) / 2)


def test_mtp_module_counts_in_the_uneven_split():
    """61 layers + 1 MTP module = 62 layer units on pp 8: 62 = 8 x 7 + 6, the 6 extra units to the
    middle stages first (7, 8, 8, 8, 8, 8, 8, 7), then the MTP unit leaves the last stage: 7, 8 x 6, 6,
    the split of Megatron-Bridge's DeepSeek-V3 recipe layout Et|(tt|)*30mL (4 chunks per rank)."""
    from shardplan.parallel import balanced_split
    mtp, base = MODELS["deepseek-v3-mtp"], MODELS["deepseek-v3"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    pc = ParallelConfig(pp=8, ep=8, tp=8, sp=True)
    assert validate(pc, mtp, tr, 512).stage_layers == (7, 8, 8, 8, 8, 8, 8, 6)
    # without MTP: 61 = 8 x 7 + 5, the 5 extra layers to stages 3, 4, 2, 5, 1
    assert validate(pc, base, tr, 512).stage_layers == (7, 8, 8, 8, 8, 8, 7, 7)
    # pp 4: 62 = 4 x 15 + 2 -> 15, 16, 16, 15 -> last minus one: 15, 16, 16, 14
    assert balanced_split(61, 4, 1) == (15, 16, 16, 14)
    # a last stage that would be left without a layer counts fewer modules: 4 layers + 1 on pp 3 gives
    # 2, 2, 1 -> 0 layers last, so the plain split 1, 2, 1
    assert balanced_split(4, 3, 1) == (1, 2, 1)
