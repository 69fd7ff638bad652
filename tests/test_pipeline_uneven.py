"""Interleaved schedules over uneven pipeline stages (issue 9 section 1)."""

import pytest

from shardplan.cost.pipeline import bubble_fraction, effective_virtual_stages
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, chunk_layers, validate
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

L405 = MODELS["llama-3.1-405b"]  # 126 layers
TR = TrainingSpec(seq_len=8192, global_batch_size=2048)


def test_chunks_as_even_as_possible_larger_first():
    # 7 layers in 4 chunks: 7 = 4 x 1 + 3 -> 2, 2, 2, 1; 8 layers: 2, 2, 2, 2
    assert chunk_layers((7, 8), 4) == ((2, 2, 2, 1), (2, 2, 2, 2))
    assert chunk_layers((5,), 2) == ((3, 2),)


def test_llama3_405b_interleaves_over_the_uneven_split():
    # Llama 3 405B (Dubey et al. 2024 Table 4): tp=8, pp=16, dp=128 on 16,384 GPUs; 126 layers over 16 stages
    # = 7, 8 x 14, 7; v=4 needs chunks of 2, 2, 2, 1 on the first and last stage
    p = ParallelConfig(tp=8, sp=True, pp=16, dp=128, zero_stage=1, schedule="interleaved", virtual_stages=4)
    lay = validate(p, L405, TR, 16384)
    assert lay.stage_layers == (7,) + (8,) * 14 + (7,)
    assert any("chunks of unequal size" in n for n in lay.notes)
    # the heaviest stage (8 layers) splits evenly: v_eff = 8 / ceil(8/4) = 4, bubble (16-1)/4 = 3.75 microbatches
    assert effective_virtual_stages(p, lay.stage_layers) == 4.0
    assert bubble_fraction(p, lay.stage_layers) == pytest.approx(15 / 4)
    # v=3: 8 layers in chunks of 3, 3, 2 -> the tick is 3 layers: v_eff = 8/3, bubble 15 x 3/8 = 5.625
    p3 = p.model_copy(update={"virtual_stages": 3})
    assert bubble_fraction(p3, validate(p3, L405, TR, 16384).stage_layers) == pytest.approx(15 * 3 / 8)
    e1, e4 = (estimate(L405, HARDWARE["h100-sxm"], TR, q, 16384)
              for q in (p.model_copy(update={"schedule": "1f1b", "virtual_stages": 1}), p))
    assert e4.bubble_s < e1.bubble_s and e4.fits


def test_only_the_embedding_and_loss_chunks_may_hold_no_layer():
    # 126 layers on 16 stages: 7, 8 x 14, 7. Eight chunks per stage fit when the first stage's first chunk holds
    # only the embedding and the last stage's last chunk only the loss (Megatron-LM
    # --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: 126 + 2 = 16 x 8 slots);
    # nine would leave a middle stage's chunk empty: legal virtual_stages 2..8
    p = ParallelConfig(tp=8, pp=16, dp=128, schedule="interleaved", virtual_stages=9)
    with pytest.raises(ConfigError) as err:
        validate(p, L405, TR, 16384)
    assert err.value.field == "virtual_stages" and err.value.legal == [2, 3, 4, 5, 6, 7, 8]
    lay = validate(p.model_copy(update={"virtual_stages": 8}), L405, TR, 16384)
    assert chunk_layers(lay.stage_layers, 8)[0] == (1, 1, 1, 1, 1, 1, 1, 0)
    assert any("holds only the embedding" in n for n in lay.notes)
