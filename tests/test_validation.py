"""Config validation: bug cases A-E of shardplan/data/bug_cases.md."""

import pytest

from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, legal_tp, validate
from shardplan.presets.models import MODELS
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

L3 = MODELS["llama-3-8b"]
T8K = TrainingSpec(seq_len=8192, global_batch_size=64)


def test_case_a_tp_larger_than_kv_heads():
    # a batch of 16 sequences: every tp of 1, 2, 4, 8 leaves dp = 16 / tp dividing it (with a batch of 1 none would,
    # and a listed tp must pass the batch check too: tests/test_legal_values.py)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=16), L3, TrainingSpec(seq_len=8192, global_batch_size=16), 16)
    assert "n_kv_heads=8" in str(e.value) and "legal tp: 1, 2, 4, 8" in str(e.value)
    assert e.value.field == "tp" and e.value.legal == [1, 2, 4, 8]
    # explicit KV replication is accepted when tp is a multiple of n_kv_heads
    lay = validate(ParallelConfig(tp=16, kv_replication=True), L3, TrainingSpec(seq_len=8192, global_batch_size=1), 16)
    assert lay.parallel.dp == 1


def test_case_a_head_counts():
    m52 = ModelSpec(n_layers=2, d_model=52 * 128, n_heads=52, ffn_dim=512, vocab_size=100)
    # 52 heads split 1, 2, 4, 13, 26 or 52 ways; of those, 1, 2 and 4 divide 8 devices (and leave dp = 8 / tp
    # dividing the batch of 8)
    with pytest.raises(ConfigError, match=r"tp splitting the heads: 1, 2, 4, 13, 26, 52; legal tp \(on 8 devices: "
                                          r"1, 2, 4\)"):
        validate(ParallelConfig(tp=8), m52, TrainingSpec(seq_len=128, global_batch_size=8), 8)
    m28 = ModelSpec(n_layers=2, d_model=28 * 128, n_heads=28, n_kv_heads=4, ffn_dim=512, vocab_size=100)
    assert legal_tp(m28) == [1, 2, 4]


def test_case_b_interleaved_pipeline_never_drops_layers():
    m = ModelSpec(n_layers=80, d_model=1024, n_heads=8, ffn_dim=4096, vocab_size=1000)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(pp=16, schedule="interleaved", virtual_stages=2), m,
                 TrainingSpec(seq_len=1024, global_batch_size=64), 16)
    # legal layers per virtual stage: 1 (v=5, interleaved) or 5 (v=1, which is no longer interleaving)
    assert "80/16 = 5" in str(e.value) and "legal virtual_stages: 5 (layers per virtual stage: 1)" in str(e.value)
    assert "virtual_stages=1 (5 layers per stage) with schedule='1f1b'" in str(e.value)
    lay = validate(ParallelConfig(pp=16, schedule="interleaved", virtual_stages=5), m,
                   TrainingSpec(seq_len=1024, global_batch_size=64), 16)
    assert sum(lay.stage_layers) == 80


def test_case_c_uneven_split():
    m = ModelSpec(n_layers=30, d_model=1024, n_heads=8, ffn_dim=4096, vocab_size=1000)
    tr = TrainingSpec(seq_len=1024, global_batch_size=8)
    # no layer is dropped: the automatic split covers all 30 (7 + 8 + 8 + 7), the middle stages heavier
    auto = validate(ParallelConfig(pp=4), m, tr, 4)
    assert auto.stage_layers == (7, 8, 8, 7)
    lay = validate(ParallelConfig(pp=4, pp_layers=(8, 8, 7, 7)), m, tr, 4)
    assert sum(lay.stage_layers) == 30
    with pytest.raises(ConfigError, match="sums to 28"):
        validate(ParallelConfig(pp=4, pp_layers=(7, 7, 7, 7)), m, tr, 4)
    # memory is sized by the heaviest stage, not the average
    from shardplan.cost.memory import memory_for_stage, stage_params
    assert stage_params(m, lay, 0).layers == 8 and stage_params(m, lay, 3).layers == 7
    assert memory_for_stage(m, tr, lay, 1).params > memory_for_stage(m, tr, lay, 2).params


def test_case_d_degree_product():
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(cp=2, pp=3), L3, T8K, 8)
    assert "legal pp for tp=1, cp=2 on 8 devices: 1, 2, 4" in str(e.value)
    with pytest.raises(ConfigError, match=r"= 64 devices, but devices=8"):
        validate(ParallelConfig(dp=8, zero_stage=3, cp=8), L3, T8K, 8)


def test_case_e_batch_not_divisible():
    for batch in (1, 3):
        with pytest.raises(ConfigError) as e:
            validate(ParallelConfig(dp=8, zero_stage=3), L3, TrainingSpec(seq_len=8192, global_batch_size=batch), 8)
        msg = str(e.value)
        assert "multiples of 8" in msg
        assert "cp=8: 8192/8 = 1024 tokens per device" in msg
        assert "tp=8: 4 query heads and 1 KV head(s) per device" in msg
    # the alternatives it proposes are themselves valid
    validate(ParallelConfig(cp=8), L3, TrainingSpec(seq_len=8192, global_batch_size=1), 8)
    validate(ParallelConfig(tp=8), L3, TrainingSpec(seq_len=8192, global_batch_size=1), 8)


def test_other_rules():
    with pytest.raises(ConfigError, match="needs tp > 1"):
        validate(ParallelConfig(sp=True), L3, T8K, 8)
    # fewer microbatches than stages is legal (nanotron runs it): 8 / (2 x 4) = 1 microbatch on pp=4, with a note
    lay = validate(ParallelConfig(pp=4, microbatch_size=4), L3, TrainingSpec(seq_len=8192, global_batch_size=8), 8)
    assert lay.microbatches == 1 and any("fewer than pp=4" in n for n in lay.notes)
    with pytest.raises(ConfigError, match="mixture-of-experts"):
        validate(ParallelConfig(ep=2), L3, T8K, 8)
    with pytest.raises(ConfigError, match="legal ep: 1, 2, 4, 8"):
        validate(ParallelConfig(ep=16, dp=16), MODELS["mixtral-8x7b"], TrainingSpec(seq_len=4096, global_batch_size=16), 16)
    with pytest.raises(ConfigError, match="2\\*cp"):
        validate(ParallelConfig(cp=8), L3, TrainingSpec(seq_len=8200, global_batch_size=1), 8)
    with pytest.raises(ConfigError, match="dp_shard=3"):
        validate(ParallelConfig(zero_stage=3, dp_shard=3), L3, T8K, 8)


def test_uneven_pipeline_split_is_automatic():
    # 32 layers over pp=3: 32 = 3 x 10 + 2; the middle stage takes the first extra layer, the second goes to
    # the first stage (first and last are equally far from the middle; the sort is stable, so stage 0), which
    # keeps the LM-head stage the lighter one: (11, 11, 10)
    lay = validate(ParallelConfig(pp=3), L3, TrainingSpec(seq_len=8192, global_batch_size=6), 6)
    assert lay.stage_layers == (11, 11, 10) and sum(lay.stage_layers) == 32
    assert any("--pp-layers 11,11,10" in n for n in lay.notes)
    # 30 layers over pp=4 = 4 x 7 + 2: both middle stages get the extra layer -> (7, 8, 8, 7)
    from shardplan.parallel import balanced_split
    assert balanced_split(30, 4) == (7, 8, 8, 7)
    with pytest.raises(ConfigError, match="exceeds n_layers"):
        validate(ParallelConfig(pp=33), L3, TrainingSpec(seq_len=8192, global_batch_size=33), 33)


def test_tp_overlap_needs_sequence_parallelism():
    tr = TrainingSpec(seq_len=4096, global_batch_size=8)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(tp=2, tp_overlap=True), MODELS["llama-3-8b"], tr, 8)
    assert e.value.field == "tp_overlap" and "sp=True" in str(e.value)
    assert validate(ParallelConfig(tp=2, sp=True, tp_overlap=True), MODELS["llama-3-8b"], tr, 8).parallel.tp_overlap
    # at tp = 1 there is nothing to overlap: the flag is dropped, not refused
    assert not validate(ParallelConfig(tp_overlap=True), MODELS["llama-3-8b"], tr, 8).parallel.tp_overlap


def test_pp_layers_count_mismatch_lists_only_what_passes():
    tr = TrainingSpec(seq_len=4096, global_batch_size=8)
    with pytest.raises(ConfigError) as e:  # 8 x 3 = 24 of llama-3-8b's 32 layers: pp=3 would fail the sum next
        validate(ParallelConfig(pp=4, pp_layers=(8, 8, 8)), MODELS["llama-3-8b"], tr, 12)
    assert "pp=3" not in str(e.value) and e.value.legal == []
    with pytest.raises(ConfigError) as e:  # 8 + 8 + 16 = 32: pp=3 is legal
        validate(ParallelConfig(pp=4, pp_layers=(8, 8, 16)), MODELS["llama-3-8b"], tr, 12)
    assert "pp=3" in str(e.value)
    assert validate(ParallelConfig(pp=3, pp_layers=(8, 8, 16)), MODELS["llama-3-8b"], tr, 12).parallel.pp == 3
