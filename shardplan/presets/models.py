"""Model presets. Shapes come from the Hugging Face ``config.json`` of each released model or from
the paper that defines the shape (named in ``source``). Parameter counts are derived by
:class:`~shardplan.specs.model.ModelSpec` and asserted exactly in ``tests/test_models.py``.
"""

from __future__ import annotations

from shardplan.hf_config import spec_fields
from shardplan.specs.model import ModelSpec

_LLAMA = dict(mlp="swiglu", norm="rmsnorm", position="rope")
_GPT = dict(mlp="gelu", norm="layernorm", linear_bias=True, tied_embeddings=True, position="learned")


def _megatron_gpt(name: str, layers: int, d: int, heads: int, source: str, vocab: int = 51200,
                  seq: int = 2048) -> ModelSpec:
    # Megatron-LM GPT: 4h GeLU MLP, learned positions, tied embeddings, vocab padded to 51200.
    return ModelSpec(name=name, n_layers=layers, d_model=d, n_heads=heads, ffn_dim=4 * d, vocab_size=vocab,
                     max_position_embeddings=seq, source=source, **_GPT)


def _maxtext(scale: int) -> ModelSpec:
    # MaxText's synthetic model of ``global_parameter_scale`` (pyconfig.get_individual_scales): with
    # b, r = divmod(log2(scale), 3), heads and MLP width double b + (r > 0) times, the embedding b + (r > 1)
    # times and the layers b times from base.yml's 2048 / 16 heads of 128 / 7168 / 16 layers; vocabulary 32000
    b, r = divmod(scale.bit_length() - 1, 3)
    head, emb = b + (r > 0), b + (r > 1)
    return ModelSpec(name=f"maxtext-{scale}b", n_layers=16 * 2**b, d_model=2048 * 2**emb, n_heads=16 * 2**head,
                     head_dim=128, ffn_dim=7168 * 2**head, vocab_size=32000,
                     source="MaxText configs/v5p/README.md (global_parameter_scale; MaxText pyconfig "
                     "get_individual_scales on base.yml's base_emb_dim 2048, base_num_query_heads 16, base_mlp_dim "
                     "7168, base_num_decoder_layers 16, head_dim 128)", **_LLAMA)


def _hf(name: str, repo: str, cfg: dict) -> ModelSpec:
    # the released checkpoint's config.json values (those the shapes depend on), read as a file would be
    arch = cfg.pop("arch")
    return ModelSpec(name=name, source=f"HF {repo} config.json ({arch})", **spec_fields(arch, cfg))


def _llama_cfg(h: int, f: int, layers: int, heads: int, kv: int, vocab: int, **kw) -> dict:
    return dict(hidden_size=h, intermediate_size=f, num_hidden_layers=layers, num_attention_heads=heads,
                num_key_value_heads=kv, vocab_size=vocab, **kw)


#: Llama 3.1's rope_scaling (HF meta-llama/Llama-3.1-8B / -70B / -405B config.json)
_LLAMA31_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                 "original_max_position_embeddings": 8192}


#: one model of every Hugging Face family the loaders read (issue 11); counts in tests/test_model_families.py
_FAMILY_PRESETS = [
    _hf("llama-3.1-8b", "meta-llama/Llama-3.1-8B", _llama_cfg(4096, 14336, 32, 32, 8, 128256, arch="LlamaForCausalLM",
                                                                          rope_theta=500000.0, rms_norm_eps=1e-5,
                                                                          rope_scaling=_LLAMA31_ROPE)),
    _hf("llama-3.1-70b", "meta-llama/Llama-3.1-70B", _llama_cfg(
        8192, 28672, 80, 64, 8, 128256, arch="LlamaForCausalLM", rope_theta=500000.0, rms_norm_eps=1e-5,
        rope_scaling=_LLAMA31_ROPE)),
    _hf("llama-4-scout", "meta-llama/Llama-4-Scout-17B-16E (text_config)", _llama_cfg(
        5120, 8192, 48, 40, 8, 202048, arch="Llama4ForCausalLM", head_dim=128, intermediate_size_mlp=16384,
        num_local_experts=16, num_experts_per_tok=1, interleave_moe_layer_step=1)),
    _hf("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", _llama_cfg(
        4096, 14336, 32, 32, 8, 32000, arch="MistralForCausalLM", sliding_window=4096)),
    _hf("qwen3-8b", "Qwen/Qwen3-8B", _llama_cfg(4096, 12288, 36, 32, 8, 151936, arch="Qwen3ForCausalLM",
                                                head_dim=128, rope_theta=1000000.0, rms_norm_eps=1e-6)),
    _hf("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", _llama_cfg(
        2048, 6144, 48, 32, 4, 151936, arch="Qwen3MoeForCausalLM", head_dim=128, moe_intermediate_size=768,
        num_experts=128, num_experts_per_tok=8, rope_theta=1000000.0, rms_norm_eps=1e-6)),
    _hf("qwen3-235b-a22b", "Qwen/Qwen3-235B-A22B", _llama_cfg(
        4096, 12288, 94, 64, 4, 151936, arch="Qwen3MoeForCausalLM", head_dim=128, moe_intermediate_size=1536,
        num_experts=128, num_experts_per_tok=8, rope_theta=1000000.0, rms_norm_eps=1e-6)),
    _hf("gemma-7b", "google/gemma-7b", _llama_cfg(3072, 24576, 28, 16, 16, 256000, arch="GemmaForCausalLM",
                                                  head_dim=256)),
    _hf("gemma-2-9b", "google/gemma-2-9b", _llama_cfg(3584, 14336, 42, 16, 8, 256000, arch="Gemma2ForCausalLM",
                                                      head_dim=256, sliding_window=4096,
                                                      attn_logit_softcapping=50.0, final_logit_softcapping=30.0)),
    _hf("gemma-3-1b", "google/gemma-3-1b-pt", _llama_cfg(
        1152, 6912, 26, 4, 1, 262144, arch="Gemma3ForCausalLM", head_dim=256, sliding_window=512,
        sliding_window_pattern=6)),
    _hf("gemma-2-27b", "google/gemma-2-27b", _llama_cfg(4608, 36864, 46, 32, 16, 256000, arch="Gemma2ForCausalLM",
                                                        head_dim=128, sliding_window=4096, query_pre_attn_scalar=144,
                                                        attn_logit_softcapping=50.0, final_logit_softcapping=30.0)),
    # Gemma 3 4B / 12B / 27B: the text_config of the Gemma3ForConditionalGeneration checkpoints (the SigLIP vision
    # tower is not trained by a text pre-training layout and is left out); vocabulary 262208, window 1024, 5 local : 1
    _hf("gemma-3-4b", "google/gemma-3-4b-pt (text_config)", _llama_cfg(
        2560, 10240, 34, 8, 4, 262208, arch="Gemma3ForCausalLM", head_dim=256, sliding_window=1024,
        sliding_window_pattern=6)),
    _hf("gemma-3-12b", "google/gemma-3-12b-pt (text_config)", _llama_cfg(
        3840, 15360, 48, 16, 8, 262208, arch="Gemma3ForCausalLM", head_dim=256, sliding_window=1024,
        sliding_window_pattern=6)),
    _hf("gemma-3-27b", "google/gemma-3-27b-pt (text_config)", _llama_cfg(
        5376, 21504, 62, 32, 16, 262208, arch="Gemma3ForCausalLM", head_dim=128, sliding_window=1024,
        sliding_window_pattern=6, query_pre_attn_scalar=168)),
    _hf("phi-3-mini-4k", "microsoft/Phi-3-mini-4k-instruct", _llama_cfg(
        3072, 8192, 32, 32, 32, 32064, arch="Phi3ForCausalLM", sliding_window=2047)),
    _hf("phi-4", "microsoft/phi-4", _llama_cfg(5120, 17920, 40, 40, 10, 100352, arch="Phi3ForCausalLM")),
    _hf("deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite", _llama_cfg(
        2048, 10944, 27, 16, 16, 102400, arch="DeepseekV2ForCausalLM", moe_intermediate_size=1408,
        n_routed_experts=64, n_shared_experts=2, num_experts_per_tok=6, first_k_dense_replace=1,
        q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)),
    _hf("deepseek-v3", "deepseek-ai/DeepSeek-V3", _llama_cfg(
        7168, 18432, 61, 128, 128, 129280, arch="DeepseekV3ForCausalLM", moe_intermediate_size=2048,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3,
        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)),
    _hf("deepseek-v3-mtp", "deepseek-ai/DeepSeek-V3 + its multi-token-prediction module", _llama_cfg(
        7168, 18432, 61, 128, 128, 129280, arch="DeepseekV3ForCausalLM", moe_intermediate_size=2048,
        n_routed_experts=256, n_shared_experts=1, num_experts_per_tok=8, first_k_dense_replace=3,
        q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)
        ).model_copy(update={"mtp_modules": 1}),
    _hf("gpt-oss-20b", "openai/gpt-oss-20b", _llama_cfg(
        2880, 2880, 24, 64, 8, 201088, arch="GptOssForCausalLM", head_dim=64, num_local_experts=32,
        num_experts_per_tok=4, sliding_window=128, attention_bias=True,
        layer_types=["sliding_attention", "full_attention"] * 12)),
    _hf("gpt-oss-120b", "openai/gpt-oss-120b", _llama_cfg(
        2880, 2880, 36, 64, 8, 201088, arch="GptOssForCausalLM", head_dim=64, num_local_experts=128,
        num_experts_per_tok=4, sliding_window=128, attention_bias=True,
        layer_types=["sliding_attention", "full_attention"] * 18)),
    _hf("olmo-2-7b", "allenai/OLMo-2-1124-7B", _llama_cfg(4096, 11008, 32, 32, 32, 100352, arch="Olmo2ForCausalLM")),
    _hf("falcon-7b", "tiiuae/falcon-7b", dict(
        arch="FalconForCausalLM", hidden_size=4544, num_hidden_layers=32, num_attention_heads=71,
        multi_query=True, parallel_attn=True, bias=False, vocab_size=65024)),
    _hf("bloom-560m", "bigscience/bloom-560m", dict(arch="BloomForCausalLM", hidden_size=1024, n_layer=24,
                                                   n_head=16, vocab_size=250880)),
    _hf("pythia-160m", "EleutherAI/pythia-160m", dict(
        arch="GPTNeoXForCausalLM", hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
        num_attention_heads=12, vocab_size=50304)),
]

_NARAYANAN = "Narayanan et al. 2021 (PTD-P), Table 1"
_KORTHIKANTI = "Korthikanti et al. 2022, Table 3"

MODELS: dict[str, ModelSpec] = {m.name: m for m in [
    ModelSpec(name="gpt2", n_layers=12, d_model=768, n_heads=12, ffn_dim=3072, vocab_size=50257,
              max_position_embeddings=1024, source="HF openai-community/gpt2 config.json", **_GPT),
    ModelSpec(name="gpt3-175b", n_layers=96, d_model=12288, n_heads=96, ffn_dim=49152, vocab_size=50257,
              max_position_embeddings=2048, source="Brown et al. 2020, Table 2.1", **_GPT),
    ModelSpec(name="gpt3-5b", n_layers=24, d_model=4096, n_heads=32, ffn_dim=16384, vocab_size=50257,
              max_position_embeddings=2048, source="NeMo-Framework-Launcher conf/training/gpt3/5b.yaml (24 layers, "
              "hidden 4096, ffn 4 x hidden, 32 heads, seq 2048, GPT-2 BPE vocabulary)", **_GPT),
    ModelSpec(name="gpt3-20b", n_layers=44, d_model=6144, n_heads=48, ffn_dim=24576, vocab_size=50257,
              max_position_embeddings=2048, source="NeMo-Framework-Launcher conf/training/gpt3/20b.yaml (44 layers, "
              "hidden 6144, ffn 4 x hidden, 48 heads, seq 2048, GPT-2 BPE vocabulary)", **_GPT),
    ModelSpec(name="llama-2-7b", n_layers=32, d_model=4096, n_heads=32, ffn_dim=11008, vocab_size=32000,
              source="HF meta-llama/Llama-2-7b-hf config.json", **_LLAMA),
    ModelSpec(name="codellama-7b", n_layers=32, d_model=4096, n_heads=32, ffn_dim=11008, vocab_size=32016,
              source="HF codellama/CodeLlama-7b-hf config.json", **_LLAMA),
    ModelSpec(name="llama-2-13b", n_layers=40, d_model=5120, n_heads=40, ffn_dim=13824, vocab_size=32000,
              source="HF meta-llama/Llama-2-13b-hf config.json", **_LLAMA),
    ModelSpec(name="codellama-34b", n_layers=48, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=22016,
              vocab_size=32000, source="HF codellama/CodeLlama-34b-hf config.json (the Llama 2 34B shape; "
              "fms-fsdp get_model_config 'llama2_34b' uses the same dimensions)", **_LLAMA),
    ModelSpec(name="llama-2-70b", rope_theta=10000.0, norm_eps=1e-5, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=28672,
              vocab_size=32000, source="HF meta-llama/Llama-2-70b-hf config.json", **_LLAMA),
    ModelSpec(name="llama-3-8b", rope_theta=500000.0, norm_eps=1e-5, n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=128256, source="HF meta-llama/Meta-Llama-3-8B config.json", **_LLAMA),
    ModelSpec(name="llama-3-70b", rope_theta=500000.0, norm_eps=1e-5, n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=28672,
              vocab_size=128256, source="HF meta-llama/Meta-Llama-3-70B config.json", **_LLAMA),
    ModelSpec(name="llama-3.1-405b", rope_theta=500000.0, norm_eps=1e-5, rope_scaling_type="llama3",
              rope_scaling_factor=8.0, n_layers=126, d_model=16384, n_heads=128, n_kv_heads=8, ffn_dim=53248,
              vocab_size=128256, source="HF meta-llama/Llama-3.1-405B config.json", **_LLAMA),
    ModelSpec(name="llama-3.2-1b", rope_theta=500000.0, norm_eps=1e-5, rope_scaling_type="llama3",
              rope_scaling_factor=32.0, n_layers=16, d_model=2048, n_heads=32, n_kv_heads=8, ffn_dim=8192,
              vocab_size=128256, tied_embeddings=True, source="HF meta-llama/Llama-3.2-1B config.json", **_LLAMA),
    ModelSpec(name="mistral-7b", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=32000, source="HF mistral-community/Mistral-7B-v0.2 config.json (no sliding window; "
              "v0.1's 4096: mistral-7b-v0.1)", **_LLAMA),
    ModelSpec(name="mixtral-8x7b", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=32000, n_experts=8, top_k=2, source="HF mistralai/Mixtral-8x7B-v0.1 config.json",
              **_LLAMA),
    ModelSpec(name="qwen2.5-7b", n_layers=28, d_model=3584, n_heads=28, n_kv_heads=4, ffn_dim=18944,
              vocab_size=152064, qkv_bias=True, source="HF Qwen/Qwen2.5-7B config.json", **_LLAMA),
    ModelSpec(name="llama-3.2-3b", rope_scaling_type="llama3", rope_scaling_factor=32.0, n_layers=28, d_model=3072,
              n_heads=24, n_kv_heads=8, ffn_dim=8192,
              vocab_size=128256, tied_embeddings=True, source="HF meta-llama/Llama-3.2-3B config.json", **_LLAMA),
    ModelSpec(name="qwen2.5-72b", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=29568,
              vocab_size=152064, qkv_bias=True, source="HF Qwen/Qwen2.5-72B config.json", **_LLAMA),
    ModelSpec(name="mixtral-8x22b", n_layers=56, d_model=6144, n_heads=48, n_kv_heads=8, ffn_dim=16384,
              vocab_size=32768, n_experts=8, top_k=2, source="HF mistralai/Mixtral-8x22B-v0.1 config.json",
              **_LLAMA),
    ModelSpec(name="gpt-neox-20b", n_layers=44, d_model=6144, n_heads=64, ffn_dim=24576, vocab_size=50432,
              mlp="gelu", norm="layernorm", linear_bias=True, position="rope",
              source="HF EleutherAI/gpt-neox-20b config.json"),
    ModelSpec(name="bloom-176b", n_layers=70, d_model=14336, n_heads=112, ffn_dim=57344, vocab_size=250880,
              mlp="gelu", norm="layernorm", linear_bias=True, tied_embeddings=True, position="alibi",
              source="HF bigscience/bloom config.json"),
    ModelSpec(name="glm-130b", n_layers=70, d_model=12288, n_heads=96, ffn_dim=32768, vocab_size=150528,
              mlp="swiglu", norm="layernorm", linear_bias=True, position="rope",
              source="Zeng et al. 2022 (GLM-130B), Sec. 2 and Table 11 (GeGLU: 3 matrices)"),
    # Nemotron-3 8B / 22B as NeMo's performance configs describe them (NeMo-Framework-Launcher
    # conf/training/nemotron/nemotron_8b.yaml, nemotron_22b.yaml: MHA, squared-ReLU MLP, layernorm1p, untied
    # embeddings, RoPE on half the head) with the Nemotron tokenizer's 256,000 tokens (as nemotron-4-340b)
    ModelSpec(name="nemotron-3-8b", n_layers=32, d_model=4096, n_heads=32, ffn_dim=16384, vocab_size=256000,
              mlp="gelu", norm="layernorm", position="rope",
              source="NeMo-Framework-Launcher conf/training/nemotron/nemotron_8b.yaml (squared-ReLU MLP: 2 matrices)"),
    ModelSpec(name="nemotron-3-22b", n_layers=40, d_model=6144, n_heads=48, ffn_dim=24576, vocab_size=256000,
              mlp="gelu", norm="layernorm", position="rope",
              source="NeMo-Framework-Launcher conf/training/nemotron/nemotron_22b.yaml (squared-ReLU MLP: 2 matrices)"),
    ModelSpec(name="nemotron-4-340b", n_layers=96, d_model=18432, n_heads=96, n_kv_heads=8, ffn_dim=73728,
              vocab_size=256000, mlp="gelu", norm="layernorm", position="rope",
              source="NVIDIA Nemotron-4 340B report, Table 1 (squared-ReLU MLP: 2 matrices)"),
    # MosaicML MPT: no biases, ALiBi, tied embeddings, 4x MLP, vocab 50368 (llm-foundry yamls)
    *[ModelSpec(name=f"mpt-{n}", n_layers=L, d_model=d, n_heads=a, ffn_dim=4 * d, vocab_size=50368,
                mlp="gelu", norm="layernorm", tied_embeddings=True, position="alibi",
                source="llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml")
      for n, L, d, a in [("125m", 12, 768, 12), ("350m", 24, 1024, 16), ("760m", 24, 1536, 12), ("1b", 24, 2048, 16),
                         ("3b", 32, 2560, 20), ("7b", 32, 4096, 32), ("13b", 40, 5120, 40), ("30b", 48, 7168, 64),
                         ("70b", 80, 8192, 64)]],
    # MaxText synthetic shapes (global_parameter_scale), shared/calibration/published_runs.csv and the same README
    *[_maxtext(scale) for scale in (16, 32, 64, 128, 256, 512)],
    ModelSpec(name="gpt-175b-megascale", n_layers=96, d_model=12288, n_heads=128, ffn_dim=49152,
              vocab_size=64000, max_position_embeddings=2048, source="Jiang et al. 2024 (MegaScale), Table 1",
              **_GPT),
    *[_megatron_gpt(f"gpt-{n}", L, d, a, _NARAYANAN) for n, L, d, a in [
        ("1.7b", 24, 2304, 24), ("3.6b", 30, 3072, 32), ("7.5b", 36, 4096, 32), ("18.4b", 40, 6144, 48),
        ("39.1b", 48, 8192, 64), ("76.1b", 60, 10240, 80), ("145.6b", 80, 12288, 96),
        ("310.1b", 96, 16384, 128), ("529.6b", 105, 20480, 128), ("1008b", 128, 25600, 160)]],
    *[_megatron_gpt(f"gpt-{n}", L, d, a, _KORTHIKANTI) for n, L, d, a in [
        ("22b", 48, 6144, 64), ("175b", 96, 12288, 96), ("530b", 105, 20480, 128), ("1t", 128, 25600, 160)]],
    ModelSpec(name="tiny-llama", n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, ffn_dim=128, vocab_size=256,
              source="shardplan test model (byte vocabulary)", **_LLAMA),
    ModelSpec(name="tiny-moe", n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, ffn_dim=128, vocab_size=256,
              n_experts=4, top_k=2, source="shardplan test model (byte vocabulary)", **_LLAMA),
    *_FAMILY_PRESETS,
]}
