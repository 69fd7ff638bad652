"""Compute that depends on the shape of the work (issue 9 Sec. 3): GEMM tile / wave quantization,
split-K, the HBM roofline, attention-kernel speed, element-wise traffic and per-layer overhead.

Every expected number is derived by hand in the comments (NVIDIA "Matrix Multiplication Background
User's Guide" Sec. 3.1-3.2 for the tile / wave counts; FlashAttention-3 paper Fig. 5-6 for the
attention tables).
"""

from __future__ import annotations

import pytest

from shardplan.cost import flops as F
from shardplan.cost.compute import (attention_core_s, layer_gemm_shapes, layer_times, loss_bytes_per_logit,
                                    stage_compute)
from shardplan.cost.gemm import ATTENTION_KERNELS, GemmShape, attention_kernel, gemm_time, kernel_head_dim
from shardplan.cost.step import estimate
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

H100 = HARDWARE["h100-sxm"]
PEAK = 989.4e12
#: one tile shape, a round asymptote, so that the hand derivations below stay short
ONE_TILE = HardwareSpec(**{**H100.model_dump(), "gemm_tiles": ((128, 256),), "matmul_efficiency": 0.75})
#: the shared grid's 1B model (shared/calibration/README.md)
USP_1B = ModelSpec(name="usp-1b", n_layers=16, d_model=2048, n_heads=32, ffn_dim=8192, vocab_size=131072,
                   tied_embeddings=True)
NANOTRON = TrainingSpec(seq_len=4096, global_batch_size=256, framework=FRAMEWORKS["nanotron"])


def _eff(g) -> float:
    """Achieved fraction of the bf16 peak."""
    return g.flops / (g.seconds * PEAK)


def test_whole_waves_reach_the_asymptote():
    # M = N = 4224 = 33 x 128 = 16.5 x 256: 33 x 17 = 561 tiles of 128x256 (the last tile column
    # half empty), ceil(561 / 132) = 5 waves. Without quantization: 4224^2 / (128 x 256) = 544.5 tiles'
    # worth of work in 5 x 132 = 660 slots -> efficiency 0.75 x 544.5 / 660 = 0.61875
    g = gemm_time(GemmShape(4224, 4224, 4096), ONE_TILE)
    assert (g.tiles, g.waves, g.split_k) == (561, 5, 1)
    assert _eff(g) == pytest.approx(0.75 * 544.5 / 660)
    # 4096 x 4096: 32 x 16 = 512 tiles, 4 waves (3.88 of work): 0.75 x 512 / 528 = 0.7273
    g = gemm_time(GemmShape(4096, 4096, 4096), ONE_TILE)
    assert (g.tiles, g.waves) == (512, 4) and _eff(g) == pytest.approx(0.75 * 512 / 528)
    # exactly 2 waves: 33 x 8 = 264 tiles of 128x256 for M = 4224, N = 2048 -> the asymptote 0.75
    assert _eff(gemm_time(GemmShape(4224, 2048, 8192), ONE_TILE)) == pytest.approx(0.75)


def test_k_is_padded_to_the_k_step():
    # K = 4097 runs ceil(4097 / 64) = 65 steps of 64 instead of 64.02: 0.75 x (4097 / 64) / 65 on 2 whole waves
    g = gemm_time(GemmShape(4224, 2048, 4097), ONE_TILE)
    assert _eff(g) == pytest.approx(0.75 * 4097 / (65 * 64))


def test_split_k_fills_the_sms_when_tiles_are_few():
    # dW of a 1024 x 1024 weight over 16384 tokens: 8 x 4 = 32 tiles of 128x256, 256 K steps.
    # Without split: 32 of 132 SMs busy, efficiency 0.75 x 32 / 132 = 0.18. Split-K 4 -> 128 thread
    # blocks in one wave of 64 steps each: 0.75 x 128 / 132 = 0.7273 (split 8: 256 blocks = 2 waves of
    # 32 steps, the same time; the smaller split wins the tie). HBM: A and B 2 x 1024 x 16384 x 2 B
    # = 67.1 MB, C 2.1 MB, 3 fp32 partials written and read 25.2 MB -> 94.4 MB / 2.68 TB/s = 35 us,
    # below the 47 us of math.
    g = gemm_time(GemmShape(1024, 1024, 16384), ONE_TILE)
    assert (g.tiles, g.split_k, g.waves) == (32, 4, 1)
    assert _eff(g) == pytest.approx(0.75 * 128 / 132) and not g.memory_bound
    assert g.memory_s == pytest.approx((2 * 2 * 1024 * 16384 + 2 * 1024 * 1024 + 8 * 3 * 1024 * 1024)
                                       / (3.35e12 * H100.hbm_efficiency))


def test_small_k_is_hbm_bound():
    # M = 65536, N = 2048, K = 64: 4 FLOP per byte of C alone; bytes = 2 (M K + K N + M N) = 277 MB
    # -> 277e6 / (0.8 x 3.35e12) = 103 us, math 17.2 GFLOP / (0.75 x 989.4e12) = 23 us (x waves)
    g = gemm_time(GemmShape(65536, 2048, 64), ONE_TILE)
    assert g.memory_bound
    assert g.seconds == pytest.approx(2 * (65536 * 64 + 64 * 2048 + 65536 * 2048) / (0.8 * 3.35e12))


def test_tpu_pads_to_the_mxu():
    # v5p: 128x128 MXU tiles and K steps, no waves: 2000^3 runs as 2048^3 -> 0.82 x (2000/2048)^3 = 0.7637
    # (math 2 x 2048^3 / (0.82 x 459e12) = 45.6 us > HBM 3 x 2000^2 x 2 B / (0.8 x 2.76e12) = 10.9 us)
    v5p = HARDWARE["tpu-v5p"]
    g = gemm_time(GemmShape(2000, 2000, 2000), v5p)
    assert g.waves == 0 and g.flops / (g.seconds * v5p.peak_flops_bf16) == pytest.approx(0.82 * (2000 / 2048) ** 3)


def test_tpu_attention_pads_the_head_dimension_to_128_lanes():
    # USP_1B has 2048 / 32 = 64-wide heads. On v5p (no published kernel: the GEMM asymptote 0.82 x 459e12):
    # forward FLOPs 4 x 2048 x 4096 / 2 per token x 4096 tokens = 68.72 GFLOP, padded to 128 lanes = 2 x:
    # 2 x 68.72e9 / (0.82 x 459e12) = 0.3652 ms; backward 2 x that
    v5p = HARDWARE["tpu-v5p"]
    tr = NANOTRON.model_copy(update={"framework": FRAMEWORKS["maxtext"]})
    f, b = attention_core_s(USP_1B, tr, v5p, ParallelConfig(), 4096)
    flops = 4 * 2048 * 4096 / 2 * 4096
    assert f == pytest.approx(2 * flops / (0.82 * v5p.peak_flops_bf16)) and b == pytest.approx(2 * f)
    assert f == pytest.approx(3.652e-4, rel=1e-3)
    # 128-wide heads (16 heads of the same 2048 width) are not padded: half the time for the same FLOPs
    wide = USP_1B.model_copy(update={"n_heads": 16})
    f128, _ = attention_core_s(wide, tr, v5p, ParallelConfig(), 4096)
    assert f128 == pytest.approx(f / 2)
    # 96-wide heads pad to 128: 4/3; GPUs keep their kernels' own head-dimension terms (no padding factor)
    from shardplan.cost.compute import mxu_head_padding
    assert (mxu_head_padding(v5p, 96), mxu_head_padding(HARDWARE["tpu-v6e"], 128), mxu_head_padding(H100, 64)) == (
        pytest.approx(4 / 3), 1.0, 1.0)


def test_h200_shares_the_h100_gemm_model():
    h200 = HARDWARE["h200"]
    assert (h200.sm_count, h200.matmul_efficiency, h200.fp8_matmul_efficiency, h200.gemm_tiles) == (
        H100.sm_count, H100.matmul_efficiency, H100.fp8_matmul_efficiency, H100.gemm_tiles) == (
        132, 0.59, 0.49, ((128, 256), (256, 128), (128, 128)))
    assert HARDWARE["a100-80gb"].sm_count == 108


def test_layer_gemms_carry_the_layer_flops():
    # the sum of 2 M N K over the forward GEMMs is 2 x matmul params / tp x tokens (dense and MoE), except
    # the MoE router h x E, which every tp rank computes whole
    mix = ModelSpec(name="moe", n_layers=4, d_model=1024, n_heads=16, n_kv_heads=4, ffn_dim=2816, vocab_size=32000,
                    n_experts=8, top_k=2, n_shared_experts=1)
    for model, moe, p in ((USP_1B, False, ParallelConfig(tp=4)), (mix, True, ParallelConfig(tp=2, ep=4))):
        shapes = [s for _, s in layer_gemm_shapes(model, p, 8192, moe)]
        router = model.d_model * model.n_experts if moe else 0
        expect = 2 * (F.layer_matmul_params(model, moe) - router) / p.tp * 8192 + 2 * router * 8192
        assert sum(s.flops for s in shapes) == pytest.approx(expect)


def test_tp8_on_a_1b_model_is_small_gemm_territory():
    # 1B at tp=8, one 4096-token sequence: QKV forward is 4096 x 768 x 2048 -> 32 x 3 = 96 tiles of
    # 128x256 on 132 SMs, one wave of 32 K steps (split 2 = 2 waves of 16 steps: same): 0.59 x 96/132
    p8 = ParallelConfig(tp=8, sp=True)
    qkv = dict(layer_gemm_shapes(USP_1B, p8, 4096, False))["qkv"]
    assert (qkv.m, qkv.n, qkv.k) == (4096, 768, 2048)
    assert _eff(gemm_time(qkv, H100)) == pytest.approx(0.59 * 96 / 132)
    # per token, the whole layer's GEMMs are slower at mbs 1 (4096 tokens) than at mbs 16 (65536)
    small, big = (layer_times(USP_1B, NANOTRON, H100, p8, u, False) for u in (4096, 65536))
    assert (small.fwd_mm + small.bwd_mm) * 16 > 1.05 * (big.fwd_mm + big.bwd_mm)
    # ... and tp=8 is slower per token than tp=1 (the same work spread on 8 GPUs takes > 1/8 of the time)
    one = layer_times(USP_1B, NANOTRON, H100, ParallelConfig(tp=1), 65536, False)
    assert (big.fwd_mm + big.bwd_mm) * 8 > 1.01 * (one.fwd_mm + one.bwd_mm)


#: FlashAttention-3 paper (Shah et al. 2024) Fig. 5-6, H100 80GB SXM5 bf16, TFLOP/s at seq 512 .. 16k
#: (batch x seq = 16k, hidden 2048): {(kernel, phase, head dim, causal): values}
FA3_PAPER = {
    ("fa2", "fwd", 128, False): [309, 350, 362, 368, 370, 370],
    ("fa2", "fwd", 128, True): [191, 260, 298, 319, 333, 335],
    ("fa2", "fwd", 64, False): [282, 306, 318, 321, 322, 324],
    ("fa2", "fwd", 64, True): [180, 229, 262, 284, 295, 299],
    ("fa2", "bwd", 128, False): [214, 260, 291, 310, 318, 322],
    ("fa2", "bwd", 64, False): [198, 238, 264, 279, 287, 291],
    ("fa3", "fwd", 128, False): [497, 565, 625, 638, 646, 648],
    ("fa3", "fwd", 128, True): [292, 423, 521, 579, 602, 616],
    ("fa3", "fwd", 64, False): [333, 392, 460, 476, 496, 497],
    ("fa3", "fwd", 64, True): [197, 265, 371, 420, 460, 473],
    ("fa3", "bwd", 128, False): [316, 424, 501, 542, 559, 561],
    ("fa3", "bwd", 64, False): [272, 363, 422, 453, 472, 474],
    ("cudnn", "fwd", 128, False): [467, 574, 617, 609, 600, 595],
    ("cudnn", "fwd", 128, True): [315, 410, 484, 518, 529, 539],
    ("cudnn", "fwd", 64, False): [335, 373, 395, 408, 412, 413],
    ("cudnn", "bwd", 128, False): [305, 408, 465, 499, 518, 516],
    ("cudnn", "bwd", 64, False): [266, 348, 395, 417, 432, 433],
}


@pytest.mark.parametrize("key", sorted(FA3_PAPER))
def test_attention_kernels_reproduce_the_fa3_paper(key):
    kernel, phase, d, causal = key
    k = ATTENTION_KERNELS[(kernel, "hopper")]
    for s, tf in zip((512, 1024, 2048, 4096, 8192, 16384), FA3_PAPER[key]):
        assert k.efficiency(d, s, causal, phase) * PEAK / 1e12 == pytest.approx(tf, rel=0.125)
    # FA2 (the grid's kernel) is fitted within 5% everywhere (cuDNN's forward peaks at 2k, 12% above the fit)
    if kernel == "fa2":
        for s, tf in zip((512, 1024, 2048, 4096, 8192, 16384), FA3_PAPER[key]):
            assert k.efficiency(d, s, causal, phase) * PEAK / 1e12 == pytest.approx(tf, rel=0.05)


def test_fa2_on_a100_matches_the_fa2_paper():
    # Dao 2023 Sec. 4.1: up to 73% (forward) and 63% (backward) of the A100 peak, head dim 128, long seq
    k = ATTENTION_KERNELS[("fa2", "ampere")]
    assert k.efficiency(128, 16384, False, "fwd") == pytest.approx(0.73)
    assert k.efficiency(128, 16384, False, "bwd") == pytest.approx(0.63)


def test_attention_kernel_per_framework():
    assert attention_kernel(H100, "nanotron").name == "fa2"
    assert attention_kernel(H100, "megatron").name == "cudnn"
    assert attention_kernel(HARDWARE["a100-80gb"], "megatron").name == "fa2"  # TE uses FA2 on Ampere
    assert attention_kernel(HARDWARE["tpu-v5p"], "maxtext") is None


def test_flash_attention_time_on_the_1b_model():
    # 1B (head dim 64), seq 4096 causal, one sequence, tp=1, FA2 on H100:
    # forward FLOPs 4 x 2048 x 4096 / 2 per token x 4096 tokens = 68.7 GFLOP;
    # efficiency 0.412 x 64/81 x 2048 / (2048 + 64.3 x 3.34) = 0.2946 -> 0.2357 ms
    # backward 2.5 x FLOPs at 0.378 x 64/81 x 2048 / (2048 + 263 x 3.34) = 0.2099 -> 0.827 ms
    f, b = attention_core_s(USP_1B, NANOTRON, H100, ParallelConfig(), 4096)
    flops = 4 * 2048 * 4096 / 2 * 4096
    e_f = 0.412 * 64 / 81 * 2048 / (2048 + 64.3 * 3.34)
    e_b = 0.378 * 64 / 81 * 2048 / (2048 + 263 * 3.34)
    assert f == pytest.approx(flops / (e_f * PEAK)) and b == pytest.approx(2.5 * flops / (e_b * PEAK))
    assert f == pytest.approx(2.357e-4, rel=1e-3)
    # at tp=8 only 4 heads x 32 query blocks = 128 thread blocks run on 132 SMs: 128/132 of the speed
    f8, _ = attention_core_s(USP_1B, NANOTRON, H100, ParallelConfig(tp=8, sp=True), 4096)
    assert f8 == pytest.approx(f / 8 * 132 / 128)


def test_flash_attention_pads_the_head_dim_to_the_kernels_build():
    # FlashAttention-2 builds head dims 32, 64, ..., 192, 256 (flash_api.cpp head_size_rounded): a model of
    # d_model 2560 with 32 heads (head dim 80) runs the 96-wide kernel. Forward, seq 4096 causal, one sequence:
    # useful FLOPs 4 x 2560 x 4096 / 2 x 4096 = 85.9 GFLOP, padded 96/80 of them at the 96-wide efficiency
    # 0.412 x 96/113 x 2048 / (2048 + 64.3 x 3.34); unpadded it would be 80/97 at the same length term
    assert kernel_head_dim("fa2", 80) == 96 and kernel_head_dim("fa3", 80) == 96
    assert kernel_head_dim("triton", 80) == 128 and kernel_head_dim("cudnn", 80) == 80
    assert kernel_head_dim("fa2", 108) == 128 and kernel_head_dim("cudnn", 108) == 112
    assert kernel_head_dim("fa2", 200) == 256 and kernel_head_dim("fa3", 160) == 192
    m80 = USP_1B.model_copy(update={"d_model": 2560})
    f, _ = attention_core_s(m80, NANOTRON, H100, ParallelConfig(), 4096)
    useful = 4 * 2560 * 4096 / 2 * 4096
    length = 2048 / (2048 + 64.3 * 3.34)
    assert f == pytest.approx(useful * 96 / 80 / (0.412 * 96 / 113 * length * PEAK), rel=1e-3)
    # 1.165 x the time the 80-wide work would take at its own head-dim term: (96/80) (113/96) / (97/80) = 113/97
    unpadded = useful / (0.412 * 80 / 97 * length * PEAK)
    assert f / unpadded == pytest.approx(96 / 80 * 113 / 96 / (97 / 80), rel=1e-3)


def test_elementwise_traffic_and_layer_overhead():
    slow = FrameworkProfile(name="nanotron", elementwise_traffic=2.5, layer_overhead_s=1e-3, grad_buffer_bytes=4)
    tr2 = NANOTRON.model_copy(update={"framework": slow})
    p = ParallelConfig(dp=8)
    a, b = (layer_times(USP_1B, t, H100, p, 8192, False) for t in (NANOTRON, tr2))
    # element-wise time scales with the profile's traffic multiplier (the nanotron preset's is fitted)
    assert b.fwd_elem == pytest.approx(2.5 / NANOTRON.framework.elementwise_traffic * a.fwd_elem) and b.fwd_mm == a.fwd_mm
    lay = validate(p.model_copy(update={"microbatch_size": 2}), USP_1B, tr2, 8)
    st = stage_compute(USP_1B, tr2, H100, lay, 0, b, b)
    # 16 layers x 1 ms per microbatch, a named term of the stage's total
    assert st.overhead_s == pytest.approx(16e-3)
    assert st.total_s == pytest.approx(st.matmul_s + st.elementwise_s + st.recompute_s + 16e-3)
    e1, e2 = (estimate(USP_1B, H100, t, p.model_copy(update={"microbatch_size": 2}), 8) for t in (NANOTRON, tr2))
    # 16 microbatches per step: the overhead adds 16 x 16 ms = 0.256 s of fixed overhead (not compute); compute
    # grows by the extra HBM bytes only
    extra_elem = e2.elementwise_s - e1.elementwise_s
    assert e2.compute_s - e1.compute_s == pytest.approx(extra_elem, rel=1e-6)
    assert e2.fixed_overhead_s - e1.fixed_overhead_s == pytest.approx(0.256, rel=1e-6)


def test_loss_bytes_by_implementation():
    # fused: 2 (beta + 8) = 20 B per logit; eager: upcast 2 + 4, log-softmax 4 + 4 + 4 + 4, its backward
    # 4 + 4, downcast 4 + 2 = 36 B
    fused = NANOTRON.model_copy(update={"framework": FrameworkProfile(name="x", loss="fused")})
    eager = NANOTRON.model_copy(update={"framework": FrameworkProfile(name="x", loss="eager")})
    assert (loss_bytes_per_logit(fused), loss_bytes_per_logit(eager)) == (20.0, 36.0)


def test_naive_attention_is_priced_as_batched_gemms():
    # GPT-3 175B shapes (head dim 128, 96 heads, seq 2048), tp=8, one sequence: 12 heads per GPU.
    # QK^T = 12 x [2048, 128] x [128, 2048]: 12 x 16 x 8 = 1536 tiles of 128x256 in ceil(1536/108) = 15
    # waves -> 0.78 x 1536/1620 = 0.7396. AV = 12 x [2048, 2048] x [2048, 128]: 12 x 16 = 192 tiles of
    # 128x128 in 2 waves -> 0.78 x 192/216 = 0.6933. Equal FLOPs (12.9 GFLOP each): forward efficiency is
    # their harmonic mean 0.7157 (tensor-core time only: the score traffic is element-wise HBM time)
    gpt3 = ModelSpec(name="gpt3", n_layers=96, d_model=12288, n_heads=96, ffn_dim=49152, vocab_size=51200,
                     mlp="gelu", norm="layernorm", position="learned", max_position_embeddings=2048)
    tr = TrainingSpec(seq_len=2048, global_batch_size=8, attention="naive")
    f, b = attention_core_s(gpt3, tr, HARDWARE["a100-80gb"], ParallelConfig(tp=8), 2048)
    flops = 2 * 12 * 2 * 2048 ** 2 * 128
    e_qk, e_av = 0.78 * 1536 / 1620, 0.78 * 192 / 216
    assert flops / (f * 312e12) == pytest.approx(2 / (1 / e_qk + 1 / e_av))
    assert b > 1.9 * f


def test_blackwell_attention_kernels_derived_from_sources():
    # cuDNN on B200: FlashAttention-4 reaches 1,613 TFLOP/s, 1.3x cuDNN 9.13 -> 1613e12 / 1.3 / 2.25e15 = 0.55145 of the
    # bf16 peak forward; backward at Hopper cuDNN's ratio 0.828 / 0.844 -> 0.54100. FlashAttention-2 (no Blackwell path):
    # Hopper rates x 989.4e12 x 148 / (132 x 2.25e15) = x 0.49304 -> 0.412 -> 0.20313, 0.378 -> 0.18637
    from shardplan.cost.gemm import ATTENTION_KERNELS
    cudnn, fa2 = ATTENTION_KERNELS[("cudnn", "blackwell")], ATTENTION_KERNELS[("fa2", "blackwell")]
    assert cudnn.fwd_peak_fraction == pytest.approx(0.55145, abs=1e-5)
    assert cudnn.bwd_peak_fraction == pytest.approx(0.54100, abs=1e-5)
    assert fa2.fwd_peak_fraction == pytest.approx(0.20313, abs=1e-5)
    assert fa2.bwd_peak_fraction == pytest.approx(0.18637, abs=1e-5)


def test_blackwell_ultra_attention_halves_the_softmax_term():
    # Blackwell Ultra doubles the softmax exponential's throughput: d_half 57.8 (cuDNN) -> 28.9. At head dim 128 the
    # softmax factor d / (d + d_half) goes 128 / 185.8 = 0.68891 -> 128 / 156.9 = 0.81581, so the kernel is
    # 0.81581 / 0.68891 = 1.18419x the Blackwell one at any length; peaks and length terms unchanged
    from shardplan.cost.gemm import ATTENTION_KERNELS, attention_kernel
    from shardplan.presets.hardware import HARDWARE
    b, u = ATTENTION_KERNELS[("cudnn", "blackwell")], ATTENTION_KERNELS[("cudnn", "blackwell-ultra")]
    assert u.d_half == pytest.approx(28.9) and u.fwd_peak_fraction == b.fwd_peak_fraction
    for seq in (4096, 8192):
        assert u.efficiency(128, seq, True, "fwd") / b.efficiency(128, seq, True, "fwd") == pytest.approx(1.18419,
                                                                                                          abs=1e-5)
    assert attention_kernel(HARDWARE["gb300"], "megatron") is u
    assert attention_kernel(HARDWARE["gb200"], "megatron") is b


def test_compute_arch_must_match_the_hardware_kind():
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    from shardplan.presets.hardware import HARDWARE
    v5p = HARDWARE["tpu-v5p"].model_dump()
    with pytest.raises(ValidationError) as info:
        type(HARDWARE["tpu-v5p"])(**{**v5p, "compute_arch": "blackwell-ultra"})
    err = config_error(info.value)
    assert err.field == "compute_arch" and "kind='tpu'" in str(err) and "legal for a TPU: tpu" in str(err)
    gb = HARDWARE["gb300"].model_dump()
    with pytest.raises(ValidationError):
        type(HARDWARE["gb300"])(**{**gb, "kind": "tpu"})


def test_ring_without_load_balance_waits_for_the_last_rank():
    # causal attention over cp = 4 contiguous chunks: rank 3 attends to chunks 0-2 fully and to its own half,
    # 3.5 chunk pairs against the balanced 16 / 2 / 4 = 2: (2 x 4 - 1) / 4 = 1.75 x the attention time, forward and
    # backward; cp = 1 and non-causal attention are unaffected
    from shardplan.cost.compute import attention_core_s
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, hw = MODELS["llama-3.1-8b"], HARDWARE["h100-sxm"]
    fw = framework_profile("torchtitan")
    assert fw.cp_load_balance is False
    for cp, causal, ratio in ((4, True, 7 / 4), (8, True, 15 / 8), (1, True, 1.0), (4, False, 1.0)):
        times = []
        for balanced in (True, False):
            tr = TrainingSpec(seq_len=131072, global_batch_size=1, causal=causal,
                              framework=fw.model_copy(update={"cp_load_balance": balanced}))
            times.append(attention_core_s(m, tr, hw, ParallelConfig(cp=cp), 131072 / cp))
        assert times[1][0] == pytest.approx(ratio * times[0][0], rel=1e-12)
        assert times[1][1] == pytest.approx(ratio * times[0][1], rel=1e-12)


def test_estimate_names_a_slower_attention_kernel():
    # llm-foundry's profile prices the Triton FlashAttention (0.53 x FA2's peaks, the same shape terms); the CLI
    # note says so, and says nothing for a profile that runs FlashAttention-2
    from shardplan.cli.estimate import attention_kernel_note
    from shardplan.cost.gemm import TRITON_FLASH_SPEED
    from shardplan.presets.models import MODELS
    fa2, triton = ATTENTION_KERNELS[("fa2", "hopper")], ATTENTION_KERNELS[("triton", "hopper")]
    assert triton.fwd_peak_fraction == pytest.approx(TRITON_FLASH_SPEED * fa2.fwd_peak_fraction, rel=1e-12)
    assert (triton.d_half, triton.s_half_bwd) == (fa2.d_half, fa2.s_half_bwd)
    notes = {}
    for name in ("llm-foundry", "pytorch-fsdp"):
        tr = TrainingSpec(seq_len=8192, global_batch_size=8, framework=FRAMEWORKS[name])
        e = estimate(MODELS["mpt-1b"], HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=3), 8)
        notes[name] = attention_kernel_note(e)
    assert "Triton FlashAttention" in notes["llm-foundry"] and f"{TRITON_FLASH_SPEED:g} x" in notes["llm-foundry"]
    assert notes["pytorch-fsdp"] is None
    # on a TPU the note names the padding of 64-wide heads (USP_1B: 2048 / 32) to 128 lanes, 2 x; none for 128-wide
    tr = TrainingSpec(seq_len=4096, global_batch_size=16, framework=FRAMEWORKS["maxtext"])
    narrow = estimate(USP_1B, HARDWARE["tpu-v5p"], tr, ParallelConfig(zero_stage=3), 16)
    wide = estimate(USP_1B.model_copy(update={"n_heads": 16}), HARDWARE["tpu-v5p"], tr, ParallelConfig(zero_stage=3), 16)
    assert "64-wide heads are padded to the TPU's 128 lanes" in attention_kernel_note(narrow)
    assert "2 x its FLOPs" in attention_kernel_note(narrow) and attention_kernel_note(wide) is None


def test_fp32_runs_at_the_tf32_rate_on_gpus_and_the_bf16_rate_on_tpus():
    # NVIDIA A100: TF32 156 dense TFLOPS against BF16 312 (datasheet); TPU: XLA's default f32 dot is a bf16 pass
    from shardplan.presets.hardware import HARDWARE
    assert HARDWARE["a100-80gb"].peak_flops("fp32") == 156e12
    assert HARDWARE["h100-sxm"].peak_flops("fp32") == HARDWARE["h100-sxm"].peak_flops_bf16 / 2
    assert HARDWARE["tpu-v5p"].peak_flops("fp32") == HARDWARE["tpu-v5p"].peak_flops_bf16
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec
    tr = {k: TrainingSpec(seq_len=4096, global_batch_size=8, precision=PRECISION_POLICIES[k]) for k in ("bf16-mixed", "fp32")}
    e = {k: estimate(MODELS["llama-3-8b"], HARDWARE["a100-80gb"], t, ParallelConfig(), 8) for k, t in tr.items()}
    # the matmuls take about twice as long (the same shapes at half the rate; the tiles' bytes differ a little)
    assert 1.8 < e["fp32"].matmul_s / e["bf16-mixed"].matmul_s < 2.2


def test_framework_gpu_matmul_scale_moves_gpu_gemms_only():
    # h100-sxm: 989.4e12 FLOP/s x 0.59 = 583.746e12; under maxtext x min(1.16, 0.73 / 0.59 = 1.237) = 1.16: 989.4e12 x
    # 0.59 x 1.16 = 677.15e12 (below the isolated cuBLAS rate 0.73); a TPU keeps its preset rate (fitted on MaxText
    # runs already), and so does an A100 (no isolated-GEMM rate beside its Megatron-LM-fitted asymptote)
    from shardplan.cost.compute import gemm_device
    from shardplan.presets.hardware import HARDWARE
    from shardplan.specs.training import TrainingSpec
    from shardplan.presets.frameworks import framework_profile
    mt = TrainingSpec(seq_len=4096, global_batch_size=8, framework=framework_profile("maxtext"))
    mg = TrainingSpec(seq_len=4096, global_batch_size=8)
    h100, v5p, a100 = HARDWARE["h100-sxm"], HARDWARE["tpu-v5p"], HARDWARE["a100-80gb"]
    assert gemm_device(h100, mg, "bf16").rate == pytest.approx(989.4e12 * 0.59)
    assert gemm_device(h100, mt, "bf16").rate == pytest.approx(989.4e12 * 0.59 * 1.16)
    assert gemm_device(h100, mt, "fp8").rate == pytest.approx(1978.9e12 * 0.49 * 1.16)
    # a scale above the ceiling stops at the isolated cuBLAS rate: 0.59 x 1.3 > 0.73
    big = mt.model_copy(update={"framework": mt.framework.model_copy(update={"gpu_matmul_scale": 1.3})})
    assert gemm_device(h100, big, "bf16").rate == pytest.approx(989.4e12 * 0.73)
    assert gemm_device(v5p, mt, "bf16").rate == pytest.approx(v5p.peak_flops_bf16 * v5p.matmul_efficiency)
    assert gemm_device(a100, mt, "bf16").rate == pytest.approx(312e12 * 0.78)
    # a scale below the ceiling applies in full: 0.59 x 1.1 = 0.649
    small = mt.model_copy(update={"framework": mt.framework.model_copy(update={"gpu_matmul_scale": 1.1})})
    assert gemm_device(h100, small, "bf16").rate == pytest.approx(989.4e12 * 0.59 * 1.1)
    # never below the asymptote, whatever the ceiling
    assert gemm_device(h100.model_copy(update={"matmul_efficiency": 0.9}), mt, "bf16").rate == pytest.approx(989.4e12 * 0.9)


def test_estimate_names_the_eager_model_code_twin():
    # under pytorch-fsdp (fused element-wise kernels) the note prices the same layout with hf-fsdp (eager HF code:
    # torchtitan's fitted 5.31 x traffic, eager fp32 loss) and quotes its tokens/s; none under hf-fsdp itself
    from shardplan.cli.estimate import eager_code_note
    from shardplan.presets.models import MODELS
    notes, tps = {}, {}
    for name in ("pytorch-fsdp", "hf-fsdp"):
        tr = TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS[name])
        e = estimate(MODELS["llama-2-7b"], HARDWARE["a100-80gb"], tr,
                     ParallelConfig(zero_stage=3, microbatch_size=4, recompute="full"), 8)
        notes[name], tps[name] = eager_code_note(e), e.tokens_per_s / 8
    assert notes["hf-fsdp"] is None and tps["hf-fsdp"] < tps["pytorch-fsdp"]
    assert "--framework hf-fsdp" in notes["pytorch-fsdp"] and f"{tps['hf-fsdp']:,.0f} tokens/s" in notes["pytorch-fsdp"]
    # where the eager code would not fit (its fp32 logits and unfused intermediates), the note says so instead:
    # 24 sequences of 4,096 per GPU fit under pytorch-fsdp (71.3 GiB of 80) but need 93.1 GiB as HF code: the eager
    # loss's 12 B per logit element over the fused 6 B, 98,304 tokens x 32,000 x 6 B = 17.6 GiB, and the recomputed
    # layer's act(gate), 98,304 x 11,008 x 2 B = 2.0 GiB, fp32 norm upcasts and o_proj's input copy (MHA: no K/V
    # repeat), 98,304 x (2 x 2 x 4,096 + 2 x 4,096) B = 2.25 GiB
    tr = TrainingSpec(seq_len=4096, global_batch_size=192, framework=FRAMEWORKS["pytorch-fsdp"])
    big = estimate(MODELS["llama-2-7b"], HARDWARE["a100-80gb"], tr,
                   ParallelConfig(zero_stage=3, microbatch_size=24, recompute="full"), 8)
    assert big.fits and "needs 93.1 GiB per device" in eager_code_note(big) and "does not fit" in eager_code_note(big)


def test_sp_seq_dim_copies_of_eager_torchtitan():
    """Eager torchtitan's sequence-parallel collectives on dim 1 copy the whole activation once per call
    (torch.cat in the functional collectives): 2 gathers + 2 scatters per pass, the gathers a view with one
    sequence per microbatch; full recompute repeats the forward's; the compiled profile prices none."""
    from shardplan.cost.compute import sp_copy_s
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, hw = MODELS["llama-3-8b"], HARDWARE["h100-sxm"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=8, framework=framework_profile("torchtitan"))
    one = 2 * 2 * 4096 * 4 * m.d_model / (hw.hbm_bandwidth * hw.hbm_efficiency)  # read + write, bf16, 4 sequences
    p = ParallelConfig(tp=8, sp=True, microbatch_size=4, recompute="full")
    assert sp_copy_s(m, tr, hw, p, 4 * 4096) == pytest.approx((8 * one, 4 * one))
    one_seq = ParallelConfig(tp=8, sp=True, microbatch_size=1, recompute="none")
    assert sp_copy_s(m, tr, hw, one_seq, 4 * 4096) == pytest.approx((4 * one, 0.0))
    compiled = tr.model_copy(update={"framework": framework_profile("torchtitan-compile")})
    assert sp_copy_s(m, compiled, hw, p, 4 * 4096) == (0.0, 0.0)
    assert sp_copy_s(m, tr, hw, ParallelConfig(microbatch_size=4), 4 * 4096) == (0.0, 0.0)
