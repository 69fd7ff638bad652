"""Model presets. Shapes come from the Hugging Face ``config.json`` of each released model or from
the paper that defines the shape (named in ``source``). Parameter counts are derived by
:class:`~shardplan.specs.model.ModelSpec` and asserted exactly in ``tests/test_models.py``.
"""

from __future__ import annotations

from shardplan.specs.model import ModelSpec

_LLAMA = dict(mlp="swiglu", norm="rmsnorm", position="rope")
_GPT = dict(mlp="gelu", norm="layernorm", linear_bias=True, tied_embeddings=True, position="learned")


def _megatron_gpt(name: str, layers: int, d: int, heads: int, source: str, vocab: int = 51200,
                  seq: int = 2048) -> ModelSpec:
    # Megatron-LM GPT: 4h GeLU MLP, learned positions, tied embeddings, vocab padded to 51200.
    return ModelSpec(name=name, n_layers=layers, d_model=d, n_heads=heads, ffn_dim=4 * d, vocab_size=vocab,
                     max_position_embeddings=seq, source=source, **_GPT)


_NARAYANAN = "Narayanan et al. 2021 (PTD-P), Table 1"
_KORTHIKANTI = "Korthikanti et al. 2022, Table 3"

MODELS: dict[str, ModelSpec] = {m.name: m for m in [
    ModelSpec(name="gpt2", n_layers=12, d_model=768, n_heads=12, ffn_dim=3072, vocab_size=50257,
              max_position_embeddings=1024, source="HF openai-community/gpt2 config.json", **_GPT),
    ModelSpec(name="gpt3-175b", n_layers=96, d_model=12288, n_heads=96, ffn_dim=49152, vocab_size=50257,
              max_position_embeddings=2048, source="Brown et al. 2020, Table 2.1", **_GPT),
    ModelSpec(name="llama-2-7b", n_layers=32, d_model=4096, n_heads=32, ffn_dim=11008, vocab_size=32000,
              source="HF meta-llama/Llama-2-7b-hf config.json", **_LLAMA),
    ModelSpec(name="codellama-7b", n_layers=32, d_model=4096, n_heads=32, ffn_dim=11008, vocab_size=32016,
              source="HF codellama/CodeLlama-7b-hf config.json", **_LLAMA),
    ModelSpec(name="llama-2-13b", n_layers=40, d_model=5120, n_heads=40, ffn_dim=13824, vocab_size=32000,
              source="HF meta-llama/Llama-2-13b-hf config.json", **_LLAMA),
    ModelSpec(name="llama-2-70b", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=28672,
              vocab_size=32000, source="HF meta-llama/Llama-2-70b-hf config.json", **_LLAMA),
    ModelSpec(name="llama-3-8b", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=128256, source="HF meta-llama/Meta-Llama-3-8B config.json", **_LLAMA),
    ModelSpec(name="llama-3-70b", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, ffn_dim=28672,
              vocab_size=128256, source="HF meta-llama/Meta-Llama-3-70B config.json", **_LLAMA),
    ModelSpec(name="llama-3.1-405b", n_layers=126, d_model=16384, n_heads=128, n_kv_heads=8, ffn_dim=53248,
              vocab_size=128256, source="HF meta-llama/Llama-3.1-405B config.json", **_LLAMA),
    ModelSpec(name="llama-3.2-1b", n_layers=16, d_model=2048, n_heads=32, n_kv_heads=8, ffn_dim=8192,
              vocab_size=128256, tied_embeddings=True, source="HF meta-llama/Llama-3.2-1B config.json", **_LLAMA),
    ModelSpec(name="mistral-7b", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=32000, source="HF mistralai/Mistral-7B-v0.1 config.json", **_LLAMA),
    ModelSpec(name="mixtral-8x7b", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, ffn_dim=14336,
              vocab_size=32000, n_experts=8, top_k=2, source="HF mistralai/Mixtral-8x7B-v0.1 config.json",
              **_LLAMA),
    ModelSpec(name="qwen2.5-7b", n_layers=28, d_model=3584, n_heads=28, n_kv_heads=4, ffn_dim=18944,
              vocab_size=152064, qkv_bias=True, source="HF Qwen/Qwen2.5-7B config.json", **_LLAMA),
    ModelSpec(name="gpt-neox-20b", n_layers=44, d_model=6144, n_heads=64, ffn_dim=24576, vocab_size=50432,
              mlp="gelu", norm="layernorm", linear_bias=True, position="rope",
              source="HF EleutherAI/gpt-neox-20b config.json"),
    ModelSpec(name="bloom-176b", n_layers=70, d_model=14336, n_heads=112, ffn_dim=57344, vocab_size=250880,
              mlp="gelu", norm="layernorm", linear_bias=True, tied_embeddings=True, position="alibi",
              source="HF bigscience/bloom config.json"),
    ModelSpec(name="glm-130b", n_layers=70, d_model=12288, n_heads=96, ffn_dim=32768, vocab_size=150528,
              mlp="swiglu", norm="layernorm", linear_bias=True, position="rope",
              source="Zeng et al. 2022 (GLM-130B), Sec. 2 and Table 11 (GeGLU: 3 matrices)"),
    ModelSpec(name="nemotron-4-340b", n_layers=96, d_model=18432, n_heads=96, n_kv_heads=8, ffn_dim=73728,
              vocab_size=256000, mlp="gelu", norm="layernorm", position="rope",
              source="NVIDIA Nemotron-4 340B report, Table 1 (squared-ReLU MLP: 2 matrices)"),
    # MosaicML MPT: no biases, ALiBi, tied embeddings, 4x MLP, vocab 50368 (llm-foundry yamls)
    *[ModelSpec(name=f"mpt-{n}", n_layers=L, d_model=d, n_heads=a, ffn_dim=4 * d, vocab_size=50368,
                mlp="gelu", norm="layernorm", tied_embeddings=True, position="alibi",
                source="llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml")
      for n, L, d, a in [("7b", 32, 4096, 32), ("13b", 40, 5120, 40), ("30b", 48, 7168, 64),
                         ("70b", 80, 8192, 64)]],
    # MaxText synthetic shapes (global_parameter_scale), shared/calibration/published_runs.csv
    *[ModelSpec(name=f"maxtext-{n}b", n_layers=L, d_model=8192, n_heads=64, ffn_dim=28672, vocab_size=32000,
                source="MaxText configs/v5p/README.md (global_parameter_scale)", **_LLAMA)
      for n, L in [("32", 32), ("64", 64)]],
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
]}
