"""Gemma 2 27B and Gemma 3 4B / 12B / 27B presets: exact parameter counts derived by hand from the released
config.json values, and the MaxText model_name each exports with."""

import pytest

from shardplan.presets.models import MODELS


def _gemma_layer(d: int, heads: int, kv: int, head_dim: int, ffn: int, qk_norm: bool) -> int:
    # q and o: d x heads*head_dim each; k and v: d x kv*head_dim each; GeGLU 3 x d x ffn;
    # four sandwich RMSNorms of d (Gemma2DecoderLayer / Gemma3DecoderLayer); Gemma 3's q_norm and k_norm of head_dim
    return (2 * d * heads * head_dim + 2 * d * kv * head_dim + 3 * d * ffn + 4 * d
            + (2 * head_dim if qk_norm else 0))


@pytest.mark.parametrize("name, expected", [
    # 46 x (2*4608*4096 + 2*4608*2048 + 3*4608*36864 + 4*4608 = 566,249,472) + 256000*4608 (tied) + 4608
    ("gemma-2-27b", 27_227_128_320),
    # 34 x (2*2560*2048 + 2*2560*1024 + 3*2560*10240 + 4*2560 + 2*256 = 94,382,592) + 262208*2560 + 2560
    ("gemma-3-4b", 3_880_263_168),
    # 48 x (2*3840*4096 + 2*3840*2048 + 3*3840*15360 + 4*3840 + 2*256 = 224,148,992) + 262208*3840 + 3840
    ("gemma-3-12b", 11_766_034_176),
    # 62 x (2*5376*4096 + 2*5376*2048 + 3*5376*21504 + 4*5376 + 2*128 = 412,898,560) + 262208*5376 + 5376
    ("gemma-3-27b", 27_009_346_304),
])
def test_gemma_preset_counts(name, expected):
    assert MODELS[name].n_params == expected
    assert MODELS[name].tied_embeddings


def test_gemma_count_formula_matches_the_comments():
    # the arithmetic of the comments above, recomputed independently of ModelSpec
    assert 46 * _gemma_layer(4608, 32, 16, 128, 36864, False) + 256000 * 4608 + 4608 == 27_227_128_320
    assert 62 * _gemma_layer(5376, 32, 16, 128, 21504, True) + 262208 * 5376 + 5376 == 27_009_346_304


def test_gemma3_windows_and_norms():
    m = MODELS["gemma-3-27b"]
    assert (m.sliding_window, m.head_dim, m.qk_norm, m.n_kv_heads) == (1024, 128, "head", 16)
    # five local layers of 1,024 keys per global layer: at 8,192 tokens a query attends fewer keys than full
    # attention on average, as the 5:1 pattern says
    assert m.attended_keys(8192, True) < MODELS["gemma-2-27b"].attended_keys(8192, True)


def test_gemma_maxtext_model_names():
    from shardplan.export.maxtext import MAXTEXT_MODEL_NAMES
    assert MAXTEXT_MODEL_NAMES["gemma-2-27b"] == "gemma2-27b"
    assert MAXTEXT_MODEL_NAMES["gemma-3-27b"] == "gemma3-27b"
