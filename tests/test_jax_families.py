"""Architecture features in the JAX runtime (issue 11): QK-norm, attention sinks, a sliding window,
multi-head latent attention; interleaved sliding / full layers and sandwich norms (Gemma 2), QK-norm
over the whole projection (OLMo 2), output / MLP biases and an embedding norm, router and expert
biases (GPT-OSS), the Q/K/V clamp (DBRX clip_qkv).

A tiny Llama with Qwen3's per-head QK-norm, GPT-OSS's attention sinks and Mistral v0.1's sliding
window (8 keys at seq 32) trains 3 steps in fp32 under TP, FSDP and CP and must reproduce the single-
device losses; its parameter count equals the planner's (2 x 16 QK-norm gains + 4 sinks per layer).
Under CP the attention runs as ring attention (shardplan/jax/ring.py): the sinks rescale the ring's
log-sum-exp and the window is a mask on every block.
"""

import numpy as np
import pytest

from _jax_helpers import run_steps

jax = pytest.importorskip("jax")

from shardplan.jax.data import PackedBatches, load_tokens  # noqa: E402
from shardplan.jax.model import Transformer, param_dict  # noqa: E402
from shardplan.jax.train import TrainConfig, Trainer  # noqa: E402
from shardplan.parallel import ParallelConfig, validate  # noqa: E402
from shardplan.presets.models import MODELS  # noqa: E402
from shardplan.specs.training import TrainingSpec  # noqa: E402

pytestmark = pytest.mark.slow

FAMILY = MODELS["tiny-llama"].model_copy(update={"name": "tiny-family", "qk_norm": "head", "attention_sinks": True,
                                                 "sliding_window": 8})
TR = TrainingSpec(seq_len=32, global_batch_size=16)
CFG = TrainConfig(steps=3, compute_dtype="float32")


MLA = MODELS["deepseek-v2-lite"]


def _every_expert(m):
    """``m`` with every expert on every token (top_k = n_experts): these tests compare sharded with single-device
    losses to 2e-5, and a top-k < E router can flip a near-tied token between experts under another reduction
    order (scale_down keeps the routed share since session 57)."""
    return m.model_copy(update={"top_k": m.n_experts})


@pytest.fixture(scope="module")
def batches():
    return PackedBatches(load_tokens(), TR.seq_len, TR.global_batch_size, seed=0)


@pytest.fixture(scope="module")
def reference(batches):
    lay = validate(ParallelConfig(dp=1), FAMILY, TR, 1)
    return run_steps(Trainer(FAMILY, lay, TR, CFG, devices=jax.devices()[:1]), batches)[1]


def test_parameter_count_matches_the_planner():
    from flax import nnx

    # tiny-llama + per layer: q_norm and k_norm gains of head_dim 16 each, one sink per head (4): 36 x 2 layers
    params = param_dict(Transformer(FAMILY, nnx.Rngs(0)))
    assert sum(x.size for x in jax.tree.leaves(params)) == FAMILY.n_params == MODELS["tiny-llama"].n_params + 72


@pytest.mark.parametrize("kw", [dict(tp=2), dict(zero_stage=3), dict(cp=2), dict(cp=4), dict(cp=2, tp=2)],
                         ids=["TP", "FSDP", "CP", "CP4", "CP+TP"])
def test_family_matches_single_device(kw, batches, reference):
    lay = validate(ParallelConfig(**kw), FAMILY, TR, 8)
    losses = run_steps(Trainer(FAMILY, lay, TR, CFG), batches)[1]
    np.testing.assert_allclose(losses, reference, rtol=2e-5, atol=2e-5)
    assert losses[-1] < losses[0]


GPT = MODELS["gpt2"].model_copy(update={"name": "tiny-gpt", "n_layers": 2, "d_model": 64, "n_heads": 4,
                                       "n_kv_heads": 4, "head_dim": 16, "ffn_dim": 256, "vocab_size": 301,
                                       "max_position_embeddings": 64})


@pytest.mark.parametrize("kw", [dict(tp=2, sp=True), dict(tp=2, sp=True, cp=2), dict(tp=4, sp=True, zero_stage=3),
                                dict(tp=2, zero_stage=2, microbatch_size=4),
                                dict(tp=2, sp=True, pp=2, schedule="gpipe")],
                         ids=["TP+SP", "TP+SP+CP", "TP4+SP+FSDP", "TP+ZeRO-2-m1", "PP+TP+SP"])
def test_vocab_parallel_lookup_learned_positions_tied_padded(kw, batches):
    """The vocab-parallel lookup (model.vocab_parallel_lookup: each tp rank its vocabulary range,
    the output reduce-scattered over (cp, tp) with SP) on a GPT-like model: learned positions
    added after it, the table tied to the LM head, a vocabulary of 301 padded to 302 / 304 rows
    (tokens of the last shard's padded rows never occur), and the SP block inputs re-gathered in the
    backward: the same losses as one device."""
    ref = run_steps(Trainer(GPT, validate(ParallelConfig(dp=1), GPT, TR, 1), TR, CFG, devices=jax.devices()[:1]),
                    batches)[1]
    tr = Trainer(GPT, validate(ParallelConfig(**kw), GPT, TR, 8), TR, CFG)
    assert tr.net_spec.vocab_size == 301 + (-301) % kw["tp"] and GPT.tied_embeddings and GPT.position == "learned"
    losses = run_steps(tr, batches)[1]
    np.testing.assert_allclose(losses, ref, rtol=2e-5, atol=2e-5)


def test_qkv_bias_fused_and_split(batches):
    """Qwen2-style Q/K/V biases: held fused (bqkv (g, r + 2, k)) under TP, split (bq / bk / bv) under
    KV-head replication (tp=4 > 2 KV heads); both reproduce the single-device losses (the zero-initialised
    biases are trained from step 1, so steps 2-3 see them) and the planner's parameter count."""
    from flax import nnx

    m = MODELS["tiny-llama"].model_copy(update={"name": "tiny-qkv-bias", "qkv_bias": True})
    fused = param_dict(Transformer(m, nnx.Rngs(0)))
    assert fused["layers"][0]["attn"]["bqkv"].shape == (2, 4, 16)
    assert sum(x.size for x in jax.tree.leaves(fused)) == m.n_params
    ref = run_steps(Trainer(m, validate(ParallelConfig(dp=1), m, TR, 1), TR, CFG, devices=jax.devices()[:1]),
                    batches)[1]
    for kw in (dict(tp=2), dict(tp=4, kv_replication=True)):
        tr = Trainer(m, validate(ParallelConfig(**kw), m, TR, 8), TR, CFG)
        assert tr.fused_qkv == (kw["tp"] == 2)
        np.testing.assert_allclose(run_steps(tr, batches)[1], ref, rtol=2e-5, atol=2e-5)


def test_sliding_window_changes_the_function(batches, reference):
    # the same weights without the window (and without sinks) give another loss: the features are used
    plain = FAMILY.model_copy(update={"sliding_window": None, "attention_sinks": False})
    lay = validate(ParallelConfig(dp=1), plain, TR, 1)
    losses = run_steps(Trainer(plain, lay, TR, CFG, devices=jax.devices()[:1]), batches, n=1)[1]
    assert abs(losses[0] - reference[0]) > 1e-4


def test_mla_scaled_down_matches_single_device(batches):
    # DeepSeek-V2-Lite scaled down: MLA (K/V latent 32, no query latent, nope 16 + rope 8, v 16), shared + routed
    # experts, one dense first layer; the runtime's parameter count equals the planner's, and TP / CP reproduce
    # the single-device losses
    from flax import nnx

    from shardplan.jax.model import scale_down
    m = _every_expert(scale_down(MLA, d_model=64, n_layers=2))
    assert m.is_mla and m.kv_lora_rank == 32 and m.q_lora_rank is None
    assert sum(x.size for x in jax.tree.leaves(param_dict(Transformer(m, nnx.Rngs(0))))) == m.n_params
    lay1 = validate(ParallelConfig(dp=1), m, TR, 1)
    ref = run_steps(Trainer(m, lay1, TR, CFG, devices=jax.devices()[:1]), batches)[1]
    for kw in (dict(tp=2), dict(cp=2)):  # cp: MLA's per-head K and V around the ring
        losses = run_steps(Trainer(m, validate(ParallelConfig(**kw), m, TR, 8), TR, CFG), batches)[1]
        np.testing.assert_allclose(losses, ref, rtol=2e-5, atol=2e-5)


def _matches_single_device(m, batches, cases):
    """Train ``m`` 3 steps on one device and under each ParallelConfig kwargs of ``cases`` (8 devices);
    the losses must agree and decrease."""
    ref = run_steps(Trainer(m, validate(ParallelConfig(dp=1), m, TR, 1), TR, CFG, devices=jax.devices()[:1]),
                    batches)[1]
    for kw in cases:
        losses = run_steps(Trainer(m, validate(ParallelConfig(**kw), m, TR, 8), TR, CFG), batches)[1]
        np.testing.assert_allclose(losses, ref, rtol=2e-5, atol=2e-5, err_msg=str(kw))
        assert losses[-1] < losses[0]


def _n_params(m):
    from flax import nnx

    return sum(x.size for x in jax.tree.leaves(param_dict(Transformer(m, nnx.Rngs(0)))))


def _gemma2():
    """Gemma 2 scaled down: 4 layers alternating sliding (window 8 at seq 32) and full attention,
    sandwich norms (4 per block), tied embeddings."""
    from shardplan.jax.model import scale_down

    # the softcaps off: the cp ring of the layouts below has none (tests/test_session57.py checks them)
    return scale_down(MODELS["gemma-2-9b"], d_model=64, n_layers=4).model_copy(
        update={"sliding_window": 8, "attention_softcap": None, "final_logit_softcap": None})


def test_gemma2_like_interleaved_windows_and_sandwich_norms(batches):
    from flax import nnx

    m = _gemma2()
    assert m.norms_per_layer == 4 and m.full_attention_interval == 2 and m.tied_embeddings
    net = Transformer(m, nnx.Rngs(0))
    assert [layer.attn.window for layer in net.layers] == [8, None, 8, None]
    assert _n_params(m) == m.n_params  # 4 norms of d per block
    # interleaving is used: the same weights with every layer sliding (or none) give other logits
    tokens = jax.numpy.asarray(batches.batch(0))[:2]
    logits = net(tokens)
    for other in ({"full_attention_interval": 0}, {"sliding_window": None, "full_attention_interval": 0}):
        alt = Transformer(m.model_copy(update=other), nnx.Rngs(0))
        assert float(jax.numpy.abs(alt(tokens) - logits).max()) > 1e-4
    # pp=2: each stage holds a sliding and a full layer, whose windows are scanned as data
    from shardplan.jax.pipeline import FULL_WINDOW, layer_windows

    assert layer_windows(m, (3, 1)).tolist() == [[8, FULL_WINDOW, 8], [FULL_WINDOW] * 3]
    assert layer_windows(m.model_copy(update={"full_attention_interval": 0}), (2, 2)) is None
    # cp=2: the ring attention (shardplan/jax/ring.py) with each layer's own window
    # (ZeRO-3 is family-independent: tests/test_jax_runtime.py covers it)
    _matches_single_device(m, batches, [dict(tp=2), dict(pp=2, tp=2), dict(cp=2)])


def test_olmo2_like_full_qk_norm(batches):
    from flax import nnx

    from shardplan.jax.model import logical_axes, scale_down

    m = scale_down(MODELS["olmo-2-7b"], d_model=64, n_layers=2)
    assert m.qk_norm == "full"
    net = Transformer(m, nnx.Rngs(0))
    attn = logical_axes(net)["layers"][0]["attn"]
    assert (attn["q_norm"]["scale"], attn["k_norm"]["scale"]) == (("heads",), ("kv_heads",))
    assert param_dict(net)["layers"][0]["attn"]["q_norm"]["scale"].shape == (m.q_dim,)
    assert _n_params(m) == m.n_params  # q_dim + kv_dim gains per layer
    _matches_single_device(m, batches, [dict(tp=2), dict(zero_stage=3)])


def test_output_and_mlp_biases_and_embedding_norm(batches):
    # Llama attention_bias without Q/K/V bias (o_proj only), mlp_bias (gate, up and down), BLOOM's embedding norm
    m = MODELS["tiny-llama"].model_copy(update={"name": "tiny-biases", "attn_out_bias": True, "mlp_bias": True,
                                                "embedding_norm": True})
    from flax import nnx

    p = param_dict(Transformer(m, nnx.Rngs(0)))
    assert set(p["layers"][0]["mlp"]) >= {"b_gate", "b_up", "b_down"} and "bqkv" not in p["layers"][0]["attn"]
    assert _n_params(m) == m.n_params == MODELS["tiny-llama"].n_params + 2 * (64 + 2 * 128 + 64) + 64
    # SwiGLU with linear_bias: a gate bias too, as the planner counts (phi - 1) f + d
    lb = MODELS["tiny-llama"].model_copy(update={"linear_bias": True})
    assert _n_params(lb) == lb.n_params
    _matches_single_device(m, batches, [dict(tp=2), dict(zero_stage=3)])


def test_gpt_oss_like_router_and_expert_biases(batches):
    # GPT-OSS scaled down: router bias, expert gate/up/down biases, Q/K/V/O biases, sinks, alternating windows
    from shardplan.jax.model import scale_down

    m = _every_expert(scale_down(MODELS["gpt-oss-20b"], d_model=64, n_layers=2, min_kv_heads=2))
    m = m.model_copy(update={"sliding_window": 8})
    assert m.router_bias and m.mlp_bias and m.attn_out_bias and m.full_attention_interval == 2
    assert _n_params(m) == m.n_params
    _matches_single_device(m, batches, [dict(tp=2), dict(ep=2, zero_stage=3)])


def test_falcon_like_parallel_block(batches):
    # Falcon-7B scaled down: one LayerNorm per block, x + attn(ln(x)) + mlp(ln(x)), multi-query
    # attention, GeLU MLP; the runtime's count equals the planner's (one norm of d (+ bias) per block)
    from flax import nnx

    from shardplan.jax.model import scale_down

    # 71 query heads do not scale down evenly: 4 heads of 16 sharing one K/V head (multi-query, as Falcon)
    m = scale_down(MODELS["falcon-7b"], d_model=64, n_layers=2).model_copy(update={"n_heads": 4, "n_kv_heads": 1})
    assert m.norms_per_layer == 1
    net = Transformer(m, nnx.Rngs(0))
    assert net.layers[0].mlp_norm is None
    assert _n_params(m) == m.n_params
    _matches_single_device(m, batches, [dict(tp=2, kv_replication=True), dict(zero_stage=3)])


def test_dbrx_like_clipped_qkv(batches):
    # DBRX scaled down (benchmarks/models/dbrx-base.config.json): every layer MoE, GQA, clip_qkv clamps the
    # projected Q/K/V (HF DbrxAttention clamps the Wqkv output to [-8, 8]); 0.5 here so that the clamp bites at
    # this width. No parameters of its own: the runtime's count equals the planner's
    from pathlib import Path

    from flax import nnx

    from shardplan.jax.model import scale_down
    from shardplan.loaders import load_model

    dbrx = load_model(str(Path(__file__).resolve().parents[1] / "benchmarks/models/dbrx-base.config.json"))
    assert dbrx.clip_qkv == 8.0
    m = _every_expert(scale_down(dbrx, d_model=64, n_layers=2, min_kv_heads=2)).model_copy(update={"clip_qkv": 0.5})
    assert m.is_moe and m.clip_qkv == 0.5 and _n_params(m) == m.n_params
    tokens = jax.numpy.asarray(batches.batch(0))[:2]
    clipped = Transformer(m, nnx.Rngs(0))(tokens)
    plain = Transformer(m.model_copy(update={"clip_qkv": None}), nnx.Rngs(0))(tokens)
    assert float(jax.numpy.abs(clipped - plain).max()) > 1e-4  # the clamp is applied
    # the clamp is element-wise on the local heads: one sharded layout (tp) checks it
    _matches_single_device(m, batches, [dict(tp=2)])
