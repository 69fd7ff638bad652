"""The GEMM model's per-tile fill and Stream-K terms (shardplan.cost.gemm) and their fit from measured
GEMMs (shardplan.fitting.fit_gemm_constants), as `shardplan bench` uses them."""

import pytest

from shardplan.cost.gemm import GemmShape, gemm_time
from shardplan.fitting import fit_gemm_constants
from shardplan.presets.hardware import HARDWARE

H100 = HARDWARE["h100-sxm"]


def test_fill_steps_add_to_every_tile_of_a_short_k_loop():
    # [16384, 512] x [512, 4096]: 128x256 tiles -> 128 x 16 = 2,048 tiles = 16 waves of 132 (15.5 rounded up);
    # K = 512 -> 8 steps of 64. Math time 16 waves x 8 steps; with 3 fill steps 16 x 11: ratio 11 / 8
    # (math-bound both ways: 2 x (16384 x 512 + 512 x 4096 + 16384 x 4096) B = 155 MB of HBM, ~58 us, under ~120 us)
    shape = GemmShape(16384, 4096, 512)
    plain = gemm_time(shape, H100)
    filled = gemm_time(shape, H100.model_copy(update={"gemm_fill_steps": 3.0}))
    assert not plain.memory_bound and not filled.memory_bound
    assert filled.math_s / plain.math_s == pytest.approx(11 / 8)
    # a long K loop barely notices: K = 8192 -> 128 steps, (128 + 3) / 128
    long = GemmShape(16384, 4096, 8192)
    ratio = (gemm_time(long, H100.model_copy(update={"gemm_fill_steps": 3.0})).math_s / gemm_time(long, H100).math_s)
    assert ratio == pytest.approx(131 / 128)


def test_stream_k_deals_a_partial_wave_over_every_sm():
    # [2048, 8192] x [8192, 1536] (a weight gradient): 16 x 6 = 96 tiles of 128x256 on 132 SMs, 128 K steps.
    # Whole waves (split-K by 2 or 3 gives 2 waves x 64 or 3 x 43 steps: no better): 1 wave x 128 steps.
    # Stream-K: 96 x 128 / 132 = 93.09 steps on the busiest SM -> 96 / 132 = 0.727 of the time
    shape = GemmShape(2048, 1536, 8192)
    waves = gemm_time(shape, H100)
    stream = gemm_time(shape, H100.model_copy(update={"gemm_stream_k": True}))
    assert stream.math_s / waves.math_s == pytest.approx(96 / 132, rel=1e-9)
    # a TPU has no SMs: the flags change nothing
    v5p = HARDWARE["tpu-v5p"]
    assert gemm_time(shape, v5p.model_copy(update={"gemm_stream_k": True, "gemm_fill_steps": 3.0})).seconds == \
        gemm_time(shape, v5p).seconds


GRID = [(8192, 8192, 8192), (8192, 4096, 14336), (8192, 2048, 256), (8192, 2048, 512), (8192, 2048, 1024),
        (2048, 1536, 8192), (4096, 768, 8192), (8192, 384, 2048), (8192, 1024, 8192), (16384, 4096, 2048)]


@pytest.mark.parametrize("asymptote, fill, stream_k", [(0.72, 3.0, True), (0.65, 1.0, False)])
def test_fit_recovers_the_constants_that_made_the_measurements(asymptote, fill, stream_k):
    truth = H100.model_copy(update={"matmul_efficiency": asymptote, "gemm_fill_steps": fill, "gemm_stream_k": stream_k})
    gemms = [(m, n, k, gemm_time(GemmShape(m, n, k), truth).seconds) for m, n, k in GRID]
    got = fit_gemm_constants(gemms, H100)
    assert got.asymptote == pytest.approx(asymptote, rel=0.01)
    assert got.fill_steps == pytest.approx(fill, abs=0.1)
    # the launch floor (30 us) leaves out the shortest GEMMs: 2 x 8192 x 2048 x 256 = 8.6 GFLOP and
    # 2 x 8192 x 384 x 2048 = 12.9 GFLOP run in ~20-30 us at ~0.5 PFLOP/s
    assert got.stream_k is stream_k and got.used == sum(g[3] >= 30e-6 for g in gemms) >= 8


def test_fit_refuses_what_cannot_identify_the_model():
    with pytest.raises(ValueError, match="need 3 or more"):
        fit_gemm_constants([(64, 64, 64, 1e-6)] * 5, H100)  # launch-bound GEMMs only
    with pytest.raises(ValueError, match="sm_count=None"):
        fit_gemm_constants([(8192, 8192, 8192, 1e-3)] * 3, HARDWARE["tpu-v5p"])
