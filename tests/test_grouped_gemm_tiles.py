"""The megablox grouped GEMM's row-tile revisits (FrameworkProfile.grouped_gemm_row_tile): MaxText's dropless
routed experts on a TPU run (experts - 1) x tile rows more than the routed tokens.

Source of the rule: jax/experimental/pallas/ops/tpu/megablox/gmm.py ``make_group_metadata`` (each group's start
rounded down and its end rounded up to the row tile ``tm``; ``tiles_m <= tiles run <= tiles_m + groups - 1``),
called by ``gmm`` and ``tgmm``; MaxText layers/moe.py ``RoutedMoE.sparse_matmul`` (tile_batch_seq 512). Every
expected number is derived by hand in the comments.
"""

from __future__ import annotations

import pytest

from shardplan.cost.compute import grouped_gemm_rows, grouped_row_tile, layer_gemm_shapes, layer_times
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

#: a DeepSeek-like layer: 256 experts of width 2048, top-8, h = 7168 (only the MoE block's shapes matter here)
DSV3_LIKE = ModelSpec(name="dsv3-like", n_layers=4, d_model=7168, n_heads=56, ffn_dim=18432, vocab_size=32000,
                      n_experts=256, top_k=8, expert_ffn_dim=2048)
MAXTEXT = TrainingSpec(seq_len=8192, global_batch_size=512, framework=FRAMEWORKS["maxtext"])


def test_rows_per_expert_hand_derived():
    # DeepSeek-V3 at pdbs 6: 49,152 tokens x 8 / 256 = 1,536 rows per expert; 255 interior boundaries split a
    # 512-row tile each: 255 x 512 = 130,560 rows more over 256 experts = 510 per expert -> 2,046 (+33.2%)
    assert grouped_gemm_rows(1536, 256, 512) == 1536 + 510
    # Llama 4 Scout at pdbs 8: 65,536 x 1 / 16 = 4,096 per expert; 15 x 512 / 16 = 480 -> 4,576 (+11.7%)
    assert grouped_gemm_rows(4096, 16, 512) == 4576
    # fewer rows than a tile: tm = min(512, 4 x 100 = 400); 3 x 400 / 4 = 300 -> 400 rows each
    assert grouped_gemm_rows(100, 4, 512) == 400
    # one group, or no tiled kernel: nothing added
    assert grouped_gemm_rows(1536, 1, 512) == 1536
    assert grouped_gemm_rows(1536, 256, 0) == 1536


def test_maxtext_tpu_dropless_shapes():
    # 49,152 local tokens, no ep: the routed GEMMs are 256 problems of 2,046 (not 1,536) rows; the forward FLOPs
    # of expert_up (gate + up, 4,096 wide, K 7,168) grow by 2,046 / 1,536 = 1.332
    p = ParallelConfig(zero_stage=3)
    plain = dict(layer_gemm_shapes(DSV3_LIKE, p, 49152, True))
    tiled = dict(layer_gemm_shapes(DSV3_LIKE, p, 49152, True, 1.0, 512))
    assert (plain["expert_up"].m, tiled["expert_up"].m, tiled["expert_down"].m) == (1536, 2046, 2046)
    assert tiled["expert_up"].flops / plain["expert_up"].flops == pytest.approx(2046 / 1536)
    # the non-expert GEMMs keep their shapes
    assert tiled["router"] == plain["router"]


def test_row_tile_applies_to_tpu_dropless_maxtext_only():
    v5p, h100 = HARDWARE["tpu-v5p"], HARDWARE["h100-sxm"]
    dropping = MAXTEXT.model_copy(update={"moe_capacity_factor": 1.25})
    megatron = TrainingSpec(seq_len=8192, global_batch_size=512)
    assert grouped_row_tile(MAXTEXT, v5p) == 512  # MaxText base.yml tile_batch_seq
    assert grouped_row_tile(MAXTEXT, h100) == 0  # megablox is a Pallas TPU kernel
    assert grouped_row_tile(dropping, v5p) == 0  # capacity_factor > 0: MaxText's dense einsum dispatch
    assert grouped_row_tile(megatron, v5p) == 0  # other profiles: no such kernel
    assert FRAMEWORKS["paxml"].grouped_gemm_row_tile == 0
    # the routed-expert forward GEMM time on the v5p grows with the rows: 1,536 -> 2,046 rows per expert, both
    # whole 128-row MXU tiles after padding (1,536 = 12 x 128; 2,046 -> 2,048 = 16 x 128): 16 / 12 = 1.333
    p = ParallelConfig(zero_stage=3)
    untiled = MAXTEXT.model_copy(update={"framework": FRAMEWORKS["maxtext"].model_copy(
        update={"grouped_gemm_row_tile": 0})})
    plain, tiled = (layer_times(DSV3_LIKE, t, v5p, p, 49152, True) for t in (untiled, MAXTEXT))
    # fwd_mm_mlp holds the router GEMM too (49,152 x 256 x 7,168: 0.5% of the routed GEMMs' FLOPs), unchanged
    routed = [lt.fwd_mm_mlp - lt.fwd_mm_shared for lt in (plain, tiled)]
    assert routed[1] / routed[0] == pytest.approx(16 / 12, rel=0.02)
