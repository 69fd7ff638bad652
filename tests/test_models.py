"""Exact parameter counts of the presets (bug case J and issue #2) and Hugging Face config loading."""

import json

import pytest

from shardplan.errors import ConfigError
from shardplan.loaders import load_model, model_from_hf_config
from shardplan.presets.models import MODELS
from shardplan.specs.model import ModelSpec

# Published / hand-derived counts. Llama-3-8B by hand:
#   attention 2*4096^2 + 2*4096*1024 = 41,943,040; SwiGLU 3*4096*14336 = 176,160,768; norms 8,192
#   -> 218,112,000 per layer * 32 = 6,979,584,000; embeddings 2*128256*4096 = 1,050,673,152; final norm 4,096
#   -> 8,030,261,248.
# CodeLlama-34B by hand: attention 2*8192^2 + 2*8192*1024 = 150,994,944; SwiGLU 3*8192*22016 = 541,065,216;
#   norms 16,384 -> 692,076,544 per layer * 48 = 33,219,674,112; embeddings 2*32000*8192 = 524,288,000;
#   final norm 8,192 -> 33,743,970,304 (Meta's "34B").
# Qwen3-235B-A22B by hand: attention 4096*8192 + 2*4096*512 + 8192*4096 + q/k norms 2*128 = 71,303,424;
#   MoE router 4096*128 + 128 experts * 3*4096*1536 = 2,416,443,392; norms 8,192 -> 2,487,755,008 per layer
#   * 94 = 233,848,970,752; embeddings 2*151936*4096 = 1,244,659,712; final norm 4,096 -> 235,093,634,560 ("235B").
# gpt-oss-120b by hand (h 2880, 64 query heads and 8 KV heads of 64, biases on every projection, one sink per head):
#   attention 2880*4096 + 4096 + 2*(2880*512 + 512) + 4096*2880 + 2880 + 64 = 26,550,144; norms 5,760;
#   router 2880*128 + 128 = 368,768; 128 experts * (2880*5760 + 5760 + 2880*2880 + 2880) = 3,186,155,520
#   -> 3,213,080,192 per layer * 36 = 115,670,886,912; embeddings 2*201088*2880 = 1,158,266,880; final norm 2,880
#   -> 116,829,156,672 (the model card's 116.83B).
# NeMo GPT3-5B by hand (h 4096, 24 layers, GeLU 4h MLP, biases, 2 LayerNorms of 2h per layer, learned positions,
#   tied embeddings): per layer 12*4096^2 + 13*4096 = 201,379,840 * 24 = 4,833,116,160; wte 50257*4096 =
#   205,852,672; wpe 2048*4096 = 8,388,608; final LayerNorm 8,192 -> 5,047,365,632.
# Llama 3.2 3B by hand (h 3072, 28 layers, 24 heads of 128, 8 KV heads, SwiGLU 8192, tied, vocab 128256): per layer
#   q,o 2*3072^2 + k,v 2*3072*1024 + 3*3072*8192 + 2 norms 6,144 = 100,669,440 * 28 = 2,818,744,320; embedding
#   128256*3072 = 394,002,432; final norm 3,072 -> 3,212,749,824.
# Qwen2.5-72B by hand (h 8192, 80 layers, 64 heads, 8 KV heads, q/k/v biases, SwiGLU 29568, untied, vocab 152064):
#   attention 2*8192^2 + 2*8192*1024 + biases 8192 + 2*1024 = 151,005,184; MLP 3*8192*29568 = 726,663,168; norms
#   16,384 -> 877,684,736 * 80 = 70,214,778,880; embeddings 2*152064*8192 = 2,491,416,576; final norm 8,192
#   -> 72,706,203,648.
# Mixtral 8x22B by hand (h 6144, 56 layers, 48 heads, 8 KV heads, 8 experts of SwiGLU 16384, vocab 32768): attention
#   2*6144^2 + 2*6144*1024 = 88,080,384; experts 8*3*6144*16384 = 2,415,919,104; router 6144*8 = 49,152; norms 12,288
#   -> 2,504,060,928 * 56 = 140,227,411,968; embeddings 2*32768*6144 = 402,653,184; final norm 6,144
#   -> 140,630,071,296.
EXACT = {
    "llama-3.2-3b": 3_212_749_824,
    "qwen2.5-72b": 72_706_203_648,
    "mixtral-8x22b": 140_630_071_296,
    "gpt2": 124_439_808,
    "llama-2-7b": 6_738_415_616,
    "codellama-7b": 6_738_546_688,
    "codellama-34b": 33_743_970_304,
    "llama-2-70b": 68_976_648_192,
    "llama-3-8b": 8_030_261_248,
    "llama-3-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-7b": 7_615_616_512,
    "qwen3-235b-a22b": 235_093_634_560,
    "gpt-oss-120b": 116_829_156_672,
    "gpt3-5b": 5_047_365_632,
}


@pytest.mark.parametrize("name,count", EXACT.items())
def test_exact_param_counts(name, count):
    assert MODELS[name].n_params == count


def test_gpt2_by_hand():
    # wte 50257*768 + wpe 1024*768 + 12 * (2 LN 2*1536 + c_attn 768*2304+2304 + c_proj 768*768+768
    #   + c_fc 768*3072+3072 + c_proj 3072*768+768) + ln_f 1536
    per_layer = 2 * 1536 + 768 * 2304 + 2304 + 768 * 768 + 768 + 768 * 3072 + 3072 + 3072 * 768 + 768
    assert per_layer == 7_087_872
    assert MODELS["gpt2"].n_params == 50257 * 768 + 1024 * 768 + 12 * per_layer + 1536


def test_megatron_gpt_shapes_match_paper_sizes():
    # Narayanan et al. 2021 Table 1 names the models by their size in billions
    for name, billions in [("gpt-1.7b", 1.7), ("gpt-18.4b", 18.4), ("gpt-145.6b", 145.6), ("gpt-1008b", 1008.0)]:
        assert MODELS[name].n_params / 1e9 == pytest.approx(billions, rel=0.03)


def test_moe_active_params():
    m = MODELS["mixtral-8x7b"]
    # 6 of 8 experts idle per token: 32 layers * 6 * 3*4096*14336
    assert m.n_params - m.n_active_params == 32 * 6 * 3 * 4096 * 14336


def _hf(arch, **kw):
    base = {"architectures": [arch], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
            "tie_word_embeddings": False}
    base.update(kw)
    return base


def test_hf_llama_config_equals_preset(tmp_path):
    p = tmp_path / "llama3" / "config.json"
    p.parent.mkdir()
    p.write_text(json.dumps(_hf("LlamaForCausalLM")))
    assert load_model(str(p.parent)).n_params == 8_030_261_248


def test_hf_mixtral_and_gpt2():
    m = model_from_hf_config(_hf("MixtralForCausalLM", vocab_size=32000, num_local_experts=8,
                                 num_experts_per_tok=2))
    assert m.n_params == 46_702_792_704
    g = model_from_hf_config({"architectures": ["GPT2LMHeadModel"], "n_embd": 768, "n_layer": 12, "n_head": 12,
                              "vocab_size": 50257, "n_positions": 1024})
    assert g.n_params == 124_439_808


def test_hf_unsupported_architecture_names_it():
    with pytest.raises(ConfigError) as e:
        model_from_hf_config({"architectures": ["MambaForCausalLM"]})
    msg = str(e.value)
    assert "MambaForCausalLM" in msg and "LlamaForCausalLM" in msg and "GPTNeoXForCausalLM" in msg
    assert "YAML" in msg  # the route for anything else


def test_custom_model_yaml(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("n_layers: 2\nd_model: 64\nn_heads: 4\nffn_dim: 128\nvocab_size: 256\n")
    m = load_model(str(p))
    # 2 * (4*64*64 + 3*64*128 + 2*64) + 2*256*64 + 64
    assert m.n_params == 2 * (4 * 64 * 64 + 3 * 64 * 128 + 2 * 64) + 2 * 256 * 64 + 64


def test_bad_custom_model_is_config_error(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("n_layers: 0\nd_model: 64\nn_heads: 4\nffn_dim: 128\nvocab_size: 256\n")
    with pytest.raises(ConfigError, match="n_layers"):
        load_model(str(p))
    with pytest.raises(ValueError, match="n_kv_heads=3"):  # pydantic wraps it in a ValidationError
        ModelSpec(n_layers=1, d_model=64, n_heads=4, n_kv_heads=3, ffn_dim=8, vocab_size=8)
    with pytest.raises(ConfigError, match="presets"):
        load_model("no-such-model")
