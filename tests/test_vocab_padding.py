"""Vocabulary padding (issue 9 section 1): planner and JAX runtime agree on a padded vocabulary."""

import math

import pytest

from shardplan.cost.memory import memory_estimate
from shardplan.parallel import ParallelConfig, padded_vocab, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

ODD = ModelSpec(name="odd-vocab", n_layers=2, d_model=64, n_heads=4, ffn_dim=128, vocab_size=32001)


def test_planner_counts_whole_padded_rows():
    # Megatron pads to a multiple of 128 x tp: vocab 32,001 at tp=2 -> multiple 256, 126 x 256 = 32,256 rows,
    # 16,128 per rank (not 16,000.5)
    tr = TrainingSpec(seq_len=64, global_batch_size=8)
    lay = validate(ParallelConfig(tp=2), ODD, tr, 2)
    assert lay.padded_vocab == 32256 and lay.vocab_per_rank(ODD.vocab_size) == 16128
    # the embedding and untied LM head each hold 16,128 x 64 parameters per rank: bf16 params grow by
    # 2 x 2 x (16,128 - 16,000.5) x 64 bytes against the unpadded count
    mem = memory_estimate(ODD, tr, lay)
    unpadded = memory_estimate(ODD, tr, lay.__class__(**{**lay.__dict__, "padded_vocab": 0}))
    assert mem.params - unpadded.params == pytest.approx(2 * 2 * (16128 - 16000.5) * 64)
    # frameworks without padding (maxtext profile: divisible_by 1) split to a multiple of tp only: 32,002
    tr_mt = tr.model_copy(update={"framework": framework_profile("maxtext")})
    assert validate(ParallelConfig(tp=2, sp=True), ODD, tr_mt, 2).padded_vocab == 32002
    assert padded_vocab(128256, 8, 128) == 129024  # Llama 3 under Megatron at tp=8: 126 x 1024


@pytest.mark.slow
def test_runtime_trains_an_odd_vocabulary_at_tp2():
    jax = pytest.importorskip("jax")
    from _jax_helpers import run_steps
    from shardplan.jax.data import PackedBatches, load_tokens
    from shardplan.jax.train import TrainConfig, Trainer

    # vocab 257 (odd, >= the byte tokenizer's 256) at tp=2: the runtime pads to 258 rows (the planner's layout
    # under the maxtext profile says 258 too) and masks the extra logit: making the padded LM-head column huge
    # leaves the loss unchanged, and the padded model trains
    m = ODD.model_copy(update={"vocab_size": 257, "n_layers": 1})
    from shardplan.presets.frameworks import JAX_RUNTIME
    tr = TrainingSpec(seq_len=16, global_batch_size=8, framework=JAX_RUNTIME)  # the runtime's profile (maxtext's)
    lay = validate(ParallelConfig(tp=2), m, tr, 8)
    trainer = Trainer(m, lay, tr, TrainConfig(steps=2, compute_dtype="float32"), devices=jax.devices()[:8])
    assert trainer.net_spec.vocab_size == 258 == lay.padded_vocab
    batches = PackedBatches(load_tokens(max_bytes=1 << 16), 16, 8, seed=0)
    params, _ = trainer.init_state()
    tokens = jax.numpy.asarray(batches.batch(0))
    assert params["lm_head"].shape == (64, 258)
    bumped = dict(params, lm_head=params["lm_head"].at[:, 257].set(100.0))
    assert float(trainer.loss(params, tokens)) == pytest.approx(float(trainer.loss(bumped, tokens)), rel=1e-6)
    _, losses = run_steps(trainer, batches, n=2)
    assert all(math.isfinite(x) for x in losses) and losses[1] < losses[0]


def test_runtime_refuses_what_it_does_not_implement():
    pytest.importorskip("jax")
    from shardplan.errors import ConfigError
    from shardplan.jax.model import check_runtime_support, scale_down
    from shardplan.presets.models import MODELS

    # the planner costs multi-token prediction and three norms per block; the reference model would
    # silently train another network
    three_norms = MODELS["falcon-7b"].model_copy(update={"norms_per_layer": 3, "name": "three-norms"})
    MODELS_ = {**MODELS, "three-norms": three_norms}
    for name, what in (("deepseek-v3-mtp", "multi-token prediction"), ("three-norms", "norms_per_layer=3")):
        with pytest.raises(ConfigError, match=what):
            check_runtime_support(MODELS_[name], 1, 1)
        with pytest.raises(ConfigError, match="scale-down"):
            scale_down(MODELS_[name])
    check_runtime_support(MODELS["llama-3-8b"], 2, 2)
    with pytest.raises(ConfigError, match="etp=1"):
        check_runtime_support(MODELS["mixtral-8x7b"], 1, 2)
