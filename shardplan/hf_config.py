"""Hugging Face ``config.json`` -> :class:`~shardplan.specs.model.ModelSpec` fields, one translator per
architecture family.

Each translator reads the keys the family's ``transformers`` configuration class defines and sets
the fields that make :attr:`ModelSpec.n_params` equal the reference implementation's
``sum(p.numel() for p in model.parameters())`` (``transformers`` ``modeling_<family>.py``; exact
counts asserted in ``tests/test_model_families.py``). Multimodal checkpoints
(``Gemma3ForConditionalGeneration``, ``Llama4ForConditionalGeneration``, ``Mistral3ForConditionalGeneration``:
Mistral Small 3.1 / 3.2, whose ``text_config`` is a ``MistralConfig``) are read from their ``text_config``: the
language model only (no vision tower or projector).

Modelled approximately (parameter counts stay exact):

* Llama 4's chunked local attention (``attention_chunk_size``, Llama4TextConfig's default 8192 where the key is
  absent) is :attr:`ModelSpec.local_attention` 'chunked' on its RoPE layers, full attention on the NoPE ones; its
  weightless L2 QK-norm adds nothing;
* DeepSeek-V3's and GLM-4.5's multi-token-prediction module (``num_nextn_predict_layers``) is not
  counted: ``transformers`` does not build it either; set ``mtp_modules`` (YAML, or the
  ``deepseek-v3-mtp`` preset) to plan training with it;
* Qwen2/Qwen3/Qwen2-MoE/SmolLM3 ``use_sliding_window`` is refused (no released checkpoint sets it);
* Qwen2-MoE's shared expert (``shared_expert_intermediate_size``) is counted as that width over
  ``moe_intermediate_size`` shared experts (a multiple in every release), its gate as ``shared_expert_gate``;
* the bias-free LayerNorms of Command-R, Command R7B / Command A (Cohere2) and DBRX are counted as
  RMSNorms (one gain of h; the JAX runtime trains RMSNorms), SmolLM3's NoPE layers and Cohere2's
  full-attention (NoPE) layers as RoPE layers, GLM-4.5's partial rotary as full RoPE (none has weights of
  its own);
* DBRX's ``clip_qkv`` is carried as ModelSpec ``clip_qkv`` (no weights, no FLOPs counted; the JAX runtime
  clamps Q/K/V as ``DbrxAttention`` does);
* ERNIE 4.5 MoE's ``moe_statics.e_score_correction_bias`` (an ``nn.Parameter`` of E elements per MoE layer,
  frozen, added to the routing scores only to pick the experts) is counted as ``router_bias``: the same
  E elements (the JAX runtime adds it to the router logits and trains it); its MTP layers are not
  counted (``transformers`` does not build them);
* MPT's bias-free LayerNorms are counted as RMSNorms (h gains), as Command-R's; its ``clip_qkv`` as DBRX's;
* OPT's ReLU and Nemotron's squared-ReLU (``relu2``) MLPs, neither gated, are counted as ModelSpec's
  2-matrix ``gelu`` MLP: the same weights and matmul FLOPs (the element-wise activation, a few FLOPs per
  intermediate element, is not costed for any kind); OPT's 2 position offset rows are counted as table
  rows, so ``max_position_embeddings`` is 2 above the config's (the planner's sequence bound too);
* StableLM's per-head bias-free QK LayerNorms (``qk_layernorm``: heads x head_dim + kv heads x head_dim
  gains) are counted as ``qk_norm='full'`` (the same elements; the JAX runtime normalises the whole
  projection); GPT-J's, Phi's, StableLM's and Nemotron's partial rotary as full RoPE (no weights);
* GPT-J's, Phi-2's and Phi-3.5-MoE's LM-head bias is ModelSpec ``lm_head_bias`` (V elements; the JAX
  runtime refuses it).
* Arcee AFM's squared-ReLU MLP is counted as Nemotron's (2-matrix ``gelu``); EXAONE 4.0's post-norms (two per
  layer) as two norms and its NoPE global layers as RoPE layers; dots.llm1's and MiniMax-M2's
  ``e_score_correction_bias`` is a buffer in ``transformers`` (not counted, as DeepSeek-V3's); MiniMax-M2's
  multi-token-prediction modules (``num_mtp_modules``) are not built by ``transformers`` and not counted.

Refused with the reason (:data:`UNMODELLED`): hybrids of attention with Mamba / linear-attention /
convolution layers (Qwen3-Next, Jamba, Nemotron-H, Falcon-H1, Bamba, Zamba2, Granite 4.0, MiniMax,
LFM2), Apertus (learned xIELU scalars) and DeepSeek-V3.2 (its lightning indexer's weights). Refused per config (ConfigError naming the key): ERNIE 4.5
MoE with ``use_bias`` (MLP biases placed differently by transformers 4.x and 5.x), DBRX with ``tie_word_embeddings`` (DbrxConfig
refuses it too), MoE layers that are not every k-th layer up to the last (ERNIE ``moe_layer_end_index``
before the last layer, Qwen ``mlp_only_layers`` inside the MoE run), MPT values ``transformers`` does
not build (``expansion_ratio`` != 4, ``no_bias`` false, ``attn_config`` ``attn_type`` other than
multi-head, ``qk_ln``, no ``alibi``), OPT-350m-style configs (``word_embed_proj_dim`` != ``hidden_size``:
project_in / project_out; ``do_layer_norm_before`` false: no final LayerNorm), Phi ``qk_layernorm``
(LayerNorms with biases of head_dim).

Anything else: a YAML/JSON file of :class:`ModelSpec` fields (README, "Describing any model").
"""

from __future__ import annotations

import json
from typing import Any, Callable

from shardplan.errors import ConfigError, fmt_legal, short_repr

Cfg = dict[str, Any]

#: the YAML route named in every "unsupported" error
YAML_ROUTE = ("or describe the model in a YAML/JSON file of ModelSpec fields (n_layers, d_model, n_heads, "
              "ffn_dim, vocab_size, ...; README 'Describing any model')")


def _kv_heads(cfg: Cfg) -> int:
    kv = cfg.get("num_key_value_heads")
    return kv if kv is not None else cfg["num_attention_heads"]


def _require(cfg: Cfg, arch: str, *keys: str) -> None:
    """Refuse a config that omits ``keys``: the family's ``transformers`` configuration class fills
    them with its own defaults (MistralConfig ``num_key_value_heads=8``, Qwen3Config ``head_dim=128``,
    GemmaConfig ``head_dim=256`` ...), not with the values derived from the other keys, so guessing
    would miscount; released checkpoints write them."""
    for key in keys:
        if cfg.get(key) is None:
            what = "sets null for" if key in cfg else "lacks"
            raise ConfigError(f"config.json for {arch} {what} {key!r}, whose default {arch}'s configuration class sets "
                              "on its own (not derived from the other keys); write its value in the file", field=key)


def _ordinal(k: int) -> str:
    """``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def moe_layer_pattern(moe: list[int], n_layers: int, key: str) -> Cfg:
    """``n_dense_layers`` and ``moe_layer_step`` (ModelSpec: layer i is MoE iff i >= n_dense_layers and
    (i - n_dense_layers + 1) % step == 0) that give exactly the MoE layer indices ``moe``.

    Raises:
        ConfigError: ``moe`` is empty or not every step-th layer from its first to the last layer.
    """
    moe = sorted(set(moe))
    if not moe:
        raise ConfigError(f"{key}: no layer has a mixture-of-experts MLP; describe the dense model in YAML",
                          field=key, value=moe)
    step = moe[1] - moe[0] if len(moe) > 1 else n_layers - moe[0]
    if moe != list(range(moe[0], n_layers, step)) or moe[0] - step + 1 < 0:
        # ModelSpec holds a dense prefix and one MoE step (n_dense_layers, moe_layer_step): a YAML file of its fields
        # cannot place a dense layer between MoE layers either, so that route is not offered (breaker pass 57)
        every = "every layer" if step == 1 else f"every {_ordinal(step)} layer"
        raise ConfigError(f"{key}: MoE layers {moe} are not {every} from layer {moe[0]} to the last, the pattern the "
                          "planner prices (a dense prefix, then one MoE layer every k layers: n_dense_layers, "
                          "moe_layer_step); legal: such a pattern", field=key, value=moe)
    return dict(n_dense_layers=moe[0] - step + 1, moe_layer_step=step)


def window_pattern(cfg: Cfg, interval: int | None = None) -> Cfg:
    """``sliding_window`` and ``full_attention_interval`` from ``layer_types`` (when given), else
    from ``interval`` (0 = every layer slides); {} without a window."""
    w = cfg.get("sliding_window")
    types = cfg.get("layer_types")
    if types:
        local = [t == "sliding_attention" for t in types]
        if not any(local) or w is None:
            return {}
        return dict(sliding_window=w, full_attention_interval=full_interval(local, types, "layer_types"))
    if w is None or interval is None:
        return {}
    return dict(sliding_window=w, full_attention_interval=interval)


def full_interval(local: list[bool], value: Any, key: str) -> int:
    """k with layer i full iff (i + 1) % k == 0 (0: every layer local) for the per-layer ``local`` flags read from
    the config key ``key`` (``layer_types``, Llama 4's ``no_rope_layers``) whose value is ``value``.

    Raises:
        ConfigError: naming ``key`` and the legal patterns when the layers follow none.
    """
    k = 0 if all(local) else local.index(False) + 1
    if any(local[i] != (k == 0 or (i + 1) % k != 0) for i in range(len(local))):
        raise ConfigError(f"{key}={short_repr(value)}: the full-attention layers are not every k-th layer (layer i "
                          "full iff (i + 1) % k == 0, e.g. k=2: local, full, local, full, ...); legal: every layer "
                          "local, or full attention on every k-th layer counted from layer 0 (full_attention_interval); "
                          "describe another pattern in YAML", field=key, value=value)
    return k


def _llama_like(cfg: Cfg, tied: bool = False) -> Cfg:
    """Llama / Mistral / Qwen / Phi-3 / Gemma / OLMo 2 decoder: GQA, gated MLP, RMSNorm, RoPE."""
    spec = dict(n_layers=cfg["num_hidden_layers"], d_model=cfg["hidden_size"],
                n_heads=cfg["num_attention_heads"], n_kv_heads=_kv_heads(cfg), ffn_dim=cfg["intermediate_size"],
                vocab_size=cfg["vocab_size"], mlp="swiglu", norm="rmsnorm", position="rope",
                tied_embeddings=bool(cfg.get("tie_word_embeddings", tied)))
    if cfg.get("head_dim"):
        spec["head_dim"] = cfg["head_dim"]
    if cfg.get("attention_bias"):
        spec.update(qkv_bias=True, attn_out_bias=True)
    if cfg.get("mlp_bias"):
        spec["mlp_bias"] = True
    return spec


def _llama(cfg: Cfg) -> Cfg:
    return _llama_like(cfg)


def _without_bias_keys(cfg: Cfg, keys: tuple[str, ...] = ("attention_bias", "mlp_bias")) -> Cfg:
    """``cfg`` without the bias ``keys`` its family's transformers modelling code does not read, building those
    projections with ``bias=False`` whatever the config says: both for MistralAttention / MistralMLP, MixtralAttention
    and its experts, Phi3Attention's fused qkv_proj and o_proj and Phi3MLP; ``mlp_bias`` for Qwen2MLP / Qwen3MLP and
    GemmaMLP (Gemma 1-3), whose attention reads ``attention_bias`` (Qwen2's hard-codes its q/k/v biases). A Phi-4-mini
    config carries the keys, and a true one counted weights transformers never builds (breaker pass 53c: +3.3M on
    Mistral-Small-24B)."""
    return {k: v for k, v in cfg.items() if k not in keys}


def _mistral(cfg: Cfg) -> Cfg:
    # MistralAttention / MixtralAttention pass sliding_window to every layer (Mistral 7B Sec. 2); no biases
    return {**_llama_like(_without_bias_keys(cfg)), **window_pattern(cfg, 0)}


def _mixtral(cfg: Cfg) -> Cfg:
    return {**_mistral(cfg), "n_experts": cfg["num_local_experts"], "top_k": cfg["num_experts_per_tok"]}


def _qwen(cfg: Cfg, qk_norm: str) -> Cfg:
    if cfg.get("use_sliding_window"):
        raise ConfigError("use_sliding_window=true (Qwen sliding layers above max_window_layers) is not "
                          "modelled; " + YAML_ROUTE, field="use_sliding_window", value=True, legal=[False])
    spec = _llama_like(_without_bias_keys(cfg, ("mlp_bias",)))  # Qwen2MLP / Qwen3MLP: bias=False
    spec["qk_norm"] = qk_norm
    return spec


def _qwen2(cfg: Cfg) -> Cfg:
    return {**_qwen(cfg, "none"), "qkv_bias": True, "attn_out_bias": False}  # Qwen2Attention: q/k/v bias


def _qwen3(cfg: Cfg) -> Cfg:
    return _qwen(cfg, "head")  # Qwen3Attention q_norm / k_norm: RMSNorm(head_dim)


def _qwen_moe_layers(cfg: Cfg) -> Cfg:
    """Routed experts of a Qwen MoE model (Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer): layer i is MoE iff
    i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0; the others are dense MLPs of
    intermediate_size."""
    step, dense, n = cfg.get("decoder_sparse_step", 1), set(cfg.get("mlp_only_layers") or []), cfg["num_hidden_layers"]
    moe = [i for i in range(n) if i not in dense and (i + 1) % step == 0]
    return dict(n_experts=cfg["num_experts"], top_k=cfg["num_experts_per_tok"],
                expert_ffn_dim=cfg["moe_intermediate_size"],
                **moe_layer_pattern(moe, n, "mlp_only_layers / decoder_sparse_step"))


def _qwen3_moe(cfg: Cfg) -> Cfg:
    return {**_qwen3(cfg), **_qwen_moe_layers(cfg)}


def _qwen2_moe(cfg: Cfg) -> Cfg:
    """Qwen1.5-MoE / Qwen2-MoE (``transformers`` configuration_qwen2_moe.py, modeling_qwen2_moe.py).

    Qwen2MoeAttention: q/k/v bias = ``qkv_bias`` (default true), o_proj without bias (``attention_bias``
    and ``mlp_bias`` are not read). Qwen2MoeSparseMoeBlock: router ``gate`` h x E without bias, E routed
    experts of ``moe_intermediate_size``, one ``shared_expert`` of ``shared_expert_intermediate_size`` and
    its ``shared_expert_gate`` (h x 1). The shared expert is counted as shared_expert_intermediate_size /
    moe_intermediate_size experts of the routed width (4 in Qwen1.5-MoE-A2.7B, 8 in Qwen2-57B-A14B):
    the same weights and FLOPs.
    """
    fe, fs = cfg["moe_intermediate_size"], cfg["shared_expert_intermediate_size"]
    if fs % fe:
        raise ConfigError(f"shared_expert_intermediate_size={fs} is not a multiple of moe_intermediate_size={fe}; "
                          "shared experts are modelled as whole routed-width experts; " + YAML_ROUTE,
                          field="shared_expert_intermediate_size", value=fs)
    spec = _qwen({k: v for k, v in cfg.items() if k not in ("attention_bias", "mlp_bias")}, "none")
    spec.update(qkv_bias=bool(cfg.get("qkv_bias", True)), n_shared_experts=fs // fe, shared_expert_gate=True,
                **_qwen_moe_layers(cfg))
    return spec


def _olmoe(cfg: Cfg) -> Cfg:
    """OLMoE (``transformers`` configuration_olmoe.py, modeling_olmoe.py): OlmoeAttention q/k/v/o of
    head_dim = hidden / heads (an explicit ``head_dim`` other than that is refused: transformers 5.x would
    shrink q/k/v but keep the QK-norms hidden-sized), bias = ``attention_bias``, q_norm
    RMSNorm(hidden) and k_norm RMSNorm(kv heads x head_dim) (QK-norm over the whole projection, as OLMo 2);
    every layer an OlmoeSparseMoeBlock: router h x E without bias, E experts of ``intermediate_size``
    without biases; pre-norms."""
    natural = cfg["hidden_size"] // cfg["num_attention_heads"]
    if cfg.get("head_dim") not in (None, natural):  # OlmoeAttention's q_norm / k_norm stay hidden-sized then
        raise ConfigError(f"OLMoE head_dim={cfg['head_dim']} differs from hidden_size / num_attention_heads = {natural}: "
                          "its QK-norms keep the hidden size while q/k/v shrink, which is not modelled; legal head_dim: "
                          f"{natural} or none; {YAML_ROUTE}", field="head_dim", value=cfg["head_dim"], legal=[natural])
    spec = _llama_like({k: v for k, v in cfg.items() if k != "mlp_bias"})
    spec.update(qk_norm="full", n_experts=cfg["num_experts"], top_k=cfg["num_experts_per_tok"])
    return spec


def _glm4_moe(cfg: Cfg) -> Cfg:
    """GLM-4.5 / GLM-4.5-Air (``transformers`` configuration_glm4_moe.py, modeling_glm4_moe.py).

    Glm4MoeAttention: q/k/v bias = ``attention_bias``, o_proj without bias, per-head q_norm / k_norm
    RMSNorm(head_dim) when ``use_qk_norm``; ``partial_rotary_factor`` adds no weights. Layers below
    ``first_k_dense_replace`` are dense MLPs of ``intermediate_size``; the others Glm4MoeMoE: router
    weight E x h (its ``e_score_correction_bias`` is a buffer, not a parameter), E routed experts and one
    shared MLP of ``n_shared_experts`` x ``moe_intermediate_size``. The MTP layer
    (``num_nextn_predict_layers``) is not built by ``transformers`` and not counted.
    """
    spec = _llama_like({k: v for k, v in cfg.items() if k != "mlp_bias"})
    spec.update(qkv_bias=bool(cfg.get("attention_bias")), attn_out_bias=False,
                qk_norm="head" if cfg.get("use_qk_norm") else "none", n_experts=cfg["n_routed_experts"],
                top_k=cfg["num_experts_per_tok"], expert_ffn_dim=cfg["moe_intermediate_size"],
                n_shared_experts=cfg["n_shared_experts"], n_dense_layers=cfg["first_k_dense_replace"])
    return spec


def _granite(cfg: Cfg) -> Cfg:
    """IBM Granite 3.x dense (``transformers`` configuration_granite.py, modeling_granite.py): a Llama
    decoder (q/k/v/o bias = ``attention_bias``, MLP bias = ``mlp_bias``); its ``embedding_multiplier``,
    ``attention_multiplier``, ``residual_multiplier`` and ``logits_scaling`` are scalars, not weights."""
    return _llama_like(cfg)


def _granitemoe(cfg: Cfg) -> Cfg:
    """IBM Granite 3.x MoE (``transformers`` configuration_granitemoe.py, modeling_granitemoe.py):
    GraniteMoeAttention q/k/v/o of head_dim = ``head_dim`` when given (as OLMoE), else hidden / heads, bias =
    ``attention_bias``; every layer a GraniteMoeMoE: router h x E without bias, experts as
    GraniteMoeParallelExperts input_linear (E, 2F, h) + output_linear (E, h, F) = a gated MLP of
    ``intermediate_size`` each; the multipliers are scalars."""
    spec = _llama_like({k: v for k, v in cfg.items() if k != "mlp_bias"})
    spec.update(n_experts=cfg["num_local_experts"], top_k=cfg["num_experts_per_tok"])
    return spec


def _phi3(cfg: Cfg) -> Cfg:
    # Phi3Attention: fused qkv_proj (q + 2kv), no bias; sliding_window on every layer when set
    return {**_llama_like(_without_bias_keys(cfg)), **window_pattern(cfg, 0)}


def _olmo2(cfg: Cfg) -> Cfg:
    # Olmo2Attention: q_norm RMSNorm(n_heads*head_dim), k_norm RMSNorm(n_kv*head_dim); post-norms only
    return {**_llama_like(cfg), "qk_norm": "full"}


def _internlm_like(cfg: Cfg, ignored: tuple[str, ...]) -> Cfg:
    """InternLM / InternLM2: a Llama-style decoder (gated MLP without biases, RMSNorm, RoPE) whose attention
    projections take ``bias=config.bias``; ``ignored``: keys their modelling code does not read."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ignored})
    return {**spec, **(dict(qkv_bias=True, attn_out_bias=True) if cfg["bias"] else {})}


def _internlm(cfg: Cfg) -> Cfg:
    # modeling_internlm.py: multi-head q/k/v/o_proj of head_dim hidden / heads (no grouped KV heads)
    return _internlm_like(cfg, ("head_dim", "attention_bias", "mlp_bias", "num_key_value_heads"))


def _internlm2(cfg: Cfg) -> Cfg:
    # modeling_internlm2.py: grouped wqkv (num_key_value_heads; None -> the head count, configuration_internlm2.py)
    return _internlm_like(cfg, ("head_dim", "attention_bias", "mlp_bias"))


def _gemma(cfg: Cfg) -> Cfg:
    # GeGLU (gated, 3 matrices, GemmaMLP bias=False), RMSNorm (1 + w): h gains
    return _llama_like(_without_bias_keys(cfg, ("mlp_bias",)), tied=True)


def _gemma2(cfg: Cfg) -> Cfg:
    # Gemma2DecoderLayer: input, post_attention, pre_feedforward, post_feedforward norms; Gemma2Attention /
    # Gemma2ForCausalLM cap the attention scores and the final logits (attn_logit_softcapping,
    # final_logit_softcapping; None or absent: none)
    return {**_llama_like(_without_bias_keys(cfg, ("mlp_bias",)), tied=True), "norms_per_layer": 4,
            **window_pattern(cfg, 2), **softcaps(cfg)}


def softcaps(cfg: Cfg) -> Cfg:
    """The ModelSpec softcap fields of a config's ``attn_logit_softcapping`` / ``final_logit_softcapping`` (Gemma 2;
    Gemma 3 sets them None), only those given and not None."""
    keys = {"attn_logit_softcapping": "attention_softcap", "final_logit_softcapping": "final_logit_softcap"}
    return {field: cfg[key] for key, field in keys.items() if cfg.get(key) is not None}


def _gemma3(cfg: Cfg) -> Cfg:
    # the multimodal checkpoints' text_config omits max_position_embeddings: Gemma3TextConfig's default is the
    # declared context (context_length), as for the other families
    cfg = {**GEMMA3_TEXT_DEFAULTS, **cfg}
    context = cfg["max_position_embeddings"] or GEMMA3_TEXT_DEFAULTS["max_position_embeddings"]
    return {**_gemma2(cfg), "qk_norm": "head", **window_pattern(cfg, cfg.get("sliding_window_pattern", 6)),
            "context_length": context}


#: ``Gemma3TextConfig`` defaults: the text_config of the multimodal checkpoints omits some keys
GEMMA3_TEXT_DEFAULTS: Cfg = dict(vocab_size=262208, hidden_size=2304, intermediate_size=9216,
                                 num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
                                 head_dim=256, sliding_window=4096, tie_word_embeddings=True,
                                 max_position_embeddings=131072)


def _llama4(cfg: Cfg) -> Cfg:
    # Llama4TextDecoderLayer: MoE layers (routed experts of intermediate_size, one shared expert of
    # the same width, router without bias) every interleave_moe_layer_step-th layer; dense layers
    # of intermediate_size_mlp. use_qk_norm is a weightless L2 norm.
    # (Llama4TextConfig: moe_layers defaults to every interleave_moe_layer_step-th layer)
    step, n = cfg.get("interleave_moe_layer_step", 1), cfg["num_hidden_layers"]
    moe = cfg.get("moe_layers")
    moe = list(range(step - 1, n, step)) if moe is None else moe
    spec = _llama_like(cfg)
    spec.update(ffn_dim=cfg["intermediate_size_mlp"], expert_ffn_dim=cfg["intermediate_size"],
                n_experts=cfg["num_local_experts"], top_k=cfg["num_experts_per_tok"], n_shared_experts=1,
                **moe_layer_pattern(moe, n, "moe_layers"), **_llama4_chunks(cfg, n))
    return spec


def _llama4_chunks(cfg: Cfg, n_layers: int) -> Cfg:
    """Llama 4's chunked attention as ModelSpec fields: the RoPE layers attend within blocks of
    ``attention_chunk_size`` tokens (Llama4TextConfig default 8192 when the key is absent; null: none), the NoPE
    layers to the whole sequence. Which layers: ``layer_types`` ('chunked_attention' / 'full_attention'), else
    ``no_rope_layers`` (1: RoPE, chunked), else every ``no_rope_layer_interval``-th layer (default 4) is NoPE
    (transformers Llama4TextConfig: ``no_rope_layers[i] = int((i + 1) % no_rope_layer_interval != 0)``)."""
    chunk = cfg.get("attention_chunk_size", 8192)
    types, rope = cfg.get("layer_types"), cfg.get("no_rope_layers")
    if chunk is None:
        return {}
    if types:
        local = [t == "chunked_attention" for t in types]
        interval = full_interval(local, types, "layer_types") if any(local) else None
    elif rope:
        if not isinstance(rope, list) or len(rope) != n_layers:
            raise ConfigError(f"no_rope_layers={short_repr(rope)}: legal: a list of {n_layers} flags (1: RoPE and "
                              "chunked attention, 0: NoPE and full attention), one per layer", field="no_rope_layers",
                              value=rope)
        interval = full_interval([bool(x) for x in rope], rope, "no_rope_layers") if any(rope) else None
    else:
        interval = cfg.get("no_rope_layer_interval", 4)
    return {} if interval is None else dict(sliding_window=chunk, full_attention_interval=interval,
                                            local_attention="chunked")


def _deepseek(cfg: Cfg) -> Cfg:
    """DeepSeek-V2/V3: MLA attention; DeepSeekMoE layers after first_k_dense_replace dense ones."""
    if cfg.get("moe_layer_freq", 1) != 1 or cfg.get("attention_bias"):
        bad = "moe_layer_freq" if cfg.get("moe_layer_freq", 1) != 1 else "attention_bias"
        legal = (1, "every layer after first_k_dense_replace is MoE") if bad == "moe_layer_freq" else (
            False, "no bias on the attention projections")
        raise ConfigError(f"{bad}={cfg.get(bad)!r} is not modelled; legal: {legal[0]} ({legal[1]}); " + YAML_ROUTE,
                          field=bad, value=cfg.get(bad), legal=[legal[0]])
    spec = dict(n_layers=cfg["num_hidden_layers"], d_model=cfg["hidden_size"], n_heads=cfg["num_attention_heads"],
                ffn_dim=cfg["intermediate_size"], vocab_size=cfg["vocab_size"], mlp="swiglu", norm="rmsnorm",
                position="rope", tied_embeddings=bool(cfg.get("tie_word_embeddings", False)),
                q_lora_rank=cfg.get("q_lora_rank"), kv_lora_rank=cfg["kv_lora_rank"],
                qk_nope_head_dim=cfg["qk_nope_head_dim"], qk_rope_head_dim=cfg["qk_rope_head_dim"],
                v_head_dim=cfg["v_head_dim"])
    _check_deepseek_routing(cfg)
    if cfg.get("n_routed_experts"):
        spec.update(n_experts=cfg["n_routed_experts"], top_k=cfg["num_experts_per_tok"],
                    expert_ffn_dim=cfg["moe_intermediate_size"], n_shared_experts=cfg.get("n_shared_experts") or 0,
                    n_dense_layers=cfg.get("first_k_dense_replace", 0))
    return spec


#: the keys of a DeepSeek config that only an MoE model sets (transformers DeepseekV3Config)
_DEEPSEEK_MOE_KEYS = ("moe_intermediate_size", "num_experts_per_tok", "n_shared_experts", "n_group", "topk_group")


def _check_deepseek_routing(cfg: Cfg) -> None:
    """Refuse a DeepSeek config whose routed-expert count is missing or null while it sets MoE keys
    (:data:`_DEEPSEEK_MOE_KEYS`; transformers' ``DeepseekV3Config`` defaults the count to 256, DeepSeek's own
    remote-code class to None, a dense model: the two read the file as a 671B and a 37B model; without any MoE key the
    config is read as dense, as DeepSeek's class does) and group-limited routing the router cannot run (transformers ``DeepseekV3TopkRouter``: the scores
    viewed as ``(n_group, n_routed_experts // n_group)``, then the top ``topk_group`` groups: n_group must divide the
    experts and topk_group be at most n_group).

    Raises:
        ConfigError: naming the key, its value and the legal values.
    """
    moe_keys = [k for k in _DEEPSEEK_MOE_KEYS if cfg.get(k) is not None]
    if cfg.get("n_routed_experts") is None and moe_keys:
        raise ConfigError(f"n_routed_experts is {'missing' if 'n_routed_experts' not in cfg else 'null'} in a "
                          f"{cfg.get('model_type', 'DeepSeek')} config that sets {', '.join(moe_keys)}: transformers' "
                          "DeepseekV3Config reads the count as 256 routed experts, DeepSeek's own config class as none "
                          "(a dense model: 37B instead of 671B for DeepSeek-V3); legal: the count of routed experts "
                          "(256 for DeepSeek-V3, 160 for V2), or a config without the MoE keys for a dense model",
                          field="n_routed_experts", value=cfg.get("n_routed_experts"))
    experts, groups, top = cfg.get("n_routed_experts"), cfg.get("n_group"), cfg.get("topk_group")
    if not experts or groups is None:
        return
    if not isinstance(groups, int) or groups < 1 or experts % groups:
        legal = [g for g in range(1, experts + 1) if experts % g == 0]
        raise ConfigError(f"n_group={groups!r} does not divide n_routed_experts={experts} (the router views the scores "
                          f"as n_group groups of equal size); legal n_group: {fmt_legal(legal)}", field="n_group",
                          value=groups, legal=legal)
    if top is not None and (not isinstance(top, int) or not 1 <= top <= groups):
        raise ConfigError(f"topk_group={top!r} is not between 1 and n_group={groups} (the router keeps the top "
                          f"topk_group of the n_group groups); legal topk_group: 1 .. {groups}", field="topk_group",
                          value=top, legal=list(range(1, groups + 1)))


def _gpt_oss(cfg: Cfg) -> Cfg:
    # GptOssAttention: q/k/v/o biases, sinks (n_heads); GptOssExperts: gate_up_proj_bias (E, 2F),
    # down_proj_bias (E, h); GptOssTopKRouter: weight (E, h) + bias (E)
    spec = _llama_like(cfg)
    spec.update(n_experts=cfg["num_local_experts"], top_k=cfg["num_experts_per_tok"], mlp_bias=True,
                router_bias=True, attention_sinks=True, **window_pattern(cfg, 2))
    return spec


def _falcon(cfg: Cfg) -> Cfg:
    """Falcon: fused QKV (multi-query, or num_kv_heads groups in the new decoder), GeLU 4h MLP,
    LayerNorm; one norm per parallel block (7B), ln_attn + ln_mlp in the new decoder (40B/180B)."""
    h = cfg["hidden_size"]
    heads = cfg.get("num_attention_heads", cfg.get("n_head"))
    new = bool(cfg.get("new_decoder_architecture", False))
    kv = cfg.get("num_kv_heads", cfg.get("n_head_kv", heads)) if new else (1 if cfg.get("multi_query", True) else heads)
    ln = cfg.get("num_ln_in_parallel_attn")
    if ln not in (None, 1, 2):  # FalconDecoderLayer builds ln_attn + ln_mlp (2) or input_layernorm (1)
        raise ConfigError(f"config.json num_ln_in_parallel_attn={ln!r}; legal: 1, 2 or null",
                          field="num_ln_in_parallel_attn", value=ln, legal=[1, 2])
    norms = (ln or 2) if new else (1 if cfg.get("parallel_attn", True) else 2)
    return dict(n_layers=cfg.get("num_hidden_layers", cfg.get("n_layer")), d_model=h, n_heads=heads, n_kv_heads=kv,
                ffn_dim=cfg.get("ffn_hidden_size") or 4 * h, vocab_size=cfg["vocab_size"], mlp="gelu",
                norm="layernorm", linear_bias=bool(cfg.get("bias", False)), norms_per_layer=norms,
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)),
                position="alibi" if cfg.get("alibi") else "rope")


def _either(cfg: Cfg, *keys: str) -> Any:
    """The value of the first of ``keys`` (a configuration class's name and its ``attribute_map`` aliases) that
    ``cfg`` sets; KeyError naming the first when none does (the caller reports the missing key)."""
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    raise KeyError(keys[0])


def _bloom(cfg: Cfg) -> Cfg:
    # BloomModel: word_embeddings_layernorm after the embedding; biases everywhere; ALiBi (BloomConfig
    # attribute_map: n_layer -> num_hidden_layers, n_head -> num_attention_heads; hidden_size or n_embed)
    h = _either(cfg, "hidden_size", "n_embed")
    return dict(n_layers=_either(cfg, "n_layer", "num_hidden_layers"), d_model=h,
                n_heads=_either(cfg, "n_head", "num_attention_heads"), ffn_dim=4 * h,
                vocab_size=cfg["vocab_size"], mlp="gelu", norm="layernorm", linear_bias=True,
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), position="alibi", embedding_norm=True)


def _gpt2(cfg: Cfg) -> Cfg:
    d = cfg["n_embd"]
    return dict(n_layers=cfg["n_layer"], d_model=d, n_heads=cfg["n_head"], ffn_dim=cfg.get("n_inner") or 4 * d,
                vocab_size=cfg["vocab_size"], mlp="gelu", norm="layernorm", linear_bias=True,
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), position="learned",
                max_position_embeddings=cfg.get("n_positions", 1024))


def _gpt_neox(cfg: Cfg) -> Cfg:
    return dict(n_layers=cfg["num_hidden_layers"], d_model=cfg["hidden_size"], n_heads=cfg["num_attention_heads"],
                ffn_dim=cfg["intermediate_size"], vocab_size=cfg["vocab_size"], mlp="gelu", norm="layernorm",
                linear_bias=True, tied_embeddings=bool(cfg.get("tie_word_embeddings", False)), position="rope")


def _starcoder2(cfg: Cfg) -> Cfg:
    """StarCoder2 (``transformers`` configuration_starcoder2.py, modeling_starcoder2.py): GQA q/k/v/o and
    a GeLU MLP c_fc / c_proj of ``intermediate_size``, all with bias = ``use_bias`` (default true);
    LayerNorm (gain + bias) pre-norms and final norm; ``sliding_window`` on every layer when set;
    tied embeddings unless ``tie_word_embeddings`` is false."""
    spec = dict(n_layers=cfg["num_hidden_layers"], d_model=cfg["hidden_size"], n_heads=cfg["num_attention_heads"],
                n_kv_heads=_kv_heads(cfg), ffn_dim=cfg["intermediate_size"], vocab_size=cfg["vocab_size"],
                mlp="gelu", norm="layernorm", linear_bias=bool(cfg.get("use_bias", True)), position="rope",
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)), **window_pattern(cfg, 0))
    if cfg.get("head_dim"):
        spec["head_dim"] = cfg["head_dim"]
    return spec


def _smollm3(cfg: Cfg) -> Cfg:
    """SmolLM3 (``transformers`` configuration_smollm3.py, modeling_smollm3.py): a Llama decoder whose
    NoPE layers (``no_rope_layers``) skip RoPE (no weights either way); tied embeddings by default."""
    if cfg.get("use_sliding_window"):
        raise ConfigError("use_sliding_window=true (SmolLM3 sliding layers from layer_types / max_window_layers) "
                          "is not modelled; " + YAML_ROUTE, field="use_sliding_window", value=True, legal=[False])
    return _llama_like(cfg, tied=True)


def _olmo3(cfg: Cfg) -> Cfg:
    """OLMo 3 (``transformers`` configuration_olmo3.py, modeling_olmo3.py): OLMo 2's block (QK-norm over
    the whole q / k projections, post-norms only) with ``sliding_window`` layers per ``layer_types``
    (Olmo3Config default: every 4th layer full attention, window 4096)."""
    cfg = {"sliding_window": 4096, **{k: v for k, v in cfg.items() if k != "mlp_bias"}}  # Olmo3MLP: no bias
    return {**_olmo2(cfg), **window_pattern(cfg, 4)}


def _cohere(cfg: Cfg) -> Cfg:
    """Cohere Command-R (``transformers`` configuration_cohere.py, modeling_cohere.py): a parallel block
    (attention and MLP read one input_layernorm) whose CohereLayerNorm has a gain and no bias (counted
    as an RMSNorm: h elements); q/k/v/o bias = ``attention_bias``; with ``use_qk_norm`` q_norm / k_norm
    gains of (heads, head_dim) and (kv heads, head_dim), i.e. q_dim + kv_dim; tied embeddings by default,
    ``logit_scale`` a scalar."""
    spec = _llama_like({k: v for k, v in cfg.items() if k != "mlp_bias"}, tied=True)
    spec.update(norms_per_layer=1, qk_norm="full" if cfg.get("use_qk_norm") else "none")
    return spec


def _seed_oss(cfg: Cfg) -> Cfg:
    """ByteDance Seed-OSS (``transformers`` configuration_seed_oss.py, modeling_seed_oss.py): a Llama
    decoder with explicit ``head_dim``, q/k/v bias = ``attention_bias``, o_proj bias =
    ``attention_out_bias``, MLP bias = ``mlp_bias``."""
    spec = _llama_like({k: v for k, v in cfg.items() if k != "attention_bias"})
    spec.update(qkv_bias=bool(cfg.get("attention_bias", True)), attn_out_bias=bool(cfg.get("attention_out_bias")))
    return spec


def _glm(cfg: Cfg) -> Cfg:
    """GLM-4 dense (``transformers`` configuration_glm.py, modeling_glm.py ``GlmForCausalLM``; THUDM/glm-4-9b-hf):
    a Llama decoder whose q/k/v projections carry a bias when ``attention_bias`` (GlmConfig default true) and whose
    o_proj has none, one fused ``gate_up_proj`` (the weights of a SwiGLU's gate and up), two RMSNorms per layer;
    ``partial_rotary_factor`` rotates part of each head (no weights). glm-4-9b-hf: 40 x 203,960,832 + 2 x
    151,552 x 4,096 + 4,096 = 9,399,951,360 parameters (tests/test_model_families.py)."""
    spec = _llama_like({k: v for k, v in cfg.items() if k != "attention_bias"})
    spec.update(qkv_bias=bool(cfg.get("attention_bias", True)), attn_out_bias=False)
    return spec


def _glm4(cfg: Cfg) -> Cfg:
    """GLM-4-0414 (``transformers`` modeling_glm4.py ``Glm4DecoderLayer``): :func:`_glm` with a
    ``post_self_attn_layernorm`` and a ``post_mlp_layernorm`` beside the two pre-norms: four RMSNorms per layer."""
    return {**_glm(cfg), "norms_per_layer": 4}


def _cohere2(cfg: Cfg) -> Cfg:
    """Cohere Command R7B / Command A (``transformers`` configuration_cohere2.py, modeling_cohere2.py):
    Command-R's parallel block (one bias-free Cohere2LayerNorm per layer and a final one, each h gains,
    counted as RMSNorms), q/k/v/o bias = ``attention_bias``, no QK-norm (``use_qk_norm`` is not read), a
    gated MLP without biases; layer i slides over ``sliding_window`` keys (Cohere2Config default 4096)
    per ``layer_types``, else iff (i + 1) % ``sliding_window_pattern`` != 0 (default 4: 3 sliding layers,
    then one full-attention layer, which skips RoPE: no weights either way); tied embeddings by
    default, ``logit_scale`` a scalar."""
    cfg = {"sliding_window": 4096, **{k: v for k, v in cfg.items() if k not in ("mlp_bias", "use_qk_norm")}}
    spec = _llama_like(cfg, tied=True)
    spec.update(norms_per_layer=1, **window_pattern(cfg, cfg.get("sliding_window_pattern", 4)))
    return spec


def _sub_config(cfg: Cfg, arch: str, key: str, *required: str) -> Cfg:
    """The nested configuration ``cfg[key]`` (DBRX ``attn_config`` / ``ffn_config``), refusing one that
    is missing, not a mapping, or lacks one of ``required`` (keys its sub-configuration class
    defaults on its own, :func:`_require`)."""
    sub = cfg.get(key)
    if not isinstance(sub, dict):
        what = "lacks" if sub is None else f"has {type(sub).__name__} for"
        raise ConfigError(f"config.json for {arch} {what} {key!r}; legal: a mapping of its keys "
                          f"({', '.join(required)}, ...)", field=key, value=sub)
    for name in required:
        if sub.get(name) is None:
            raise ConfigError(f"config.json for {arch}: {key}.{name} is missing or null; {arch}'s {key} class "
                              "sets its own default (not derived from the other keys); write its value in the file",
                              field=f"{key}.{name}", value=None)
    return sub


def _clip_qkv(attn: Cfg) -> float | None:
    """``attn_config.clip_qkv`` (DBRX, MPT: the fused Q/K/V output clamped to +-c) as a float, None without one.

    Raises:
        ConfigError: a value that is not a number > 0 and < 2^24 or null, naming the key.
    """
    clip = attn.get("clip_qkv")
    if clip is not None and (isinstance(clip, bool) or not isinstance(clip, (int, float)) or not 0 < clip < 2**24):
        raise ConfigError(f"config.json attn_config.clip_qkv={clip!r}; legal: a number > 0 and < {2**24:,}, or null "
                          "(no clamp)", field="attn_config.clip_qkv", value=clip)
    return None if clip is None else float(clip)


def _dbrx(cfg: Cfg) -> Cfg:
    """Databricks DBRX (``transformers`` configuration_dbrx.py, modeling_dbrx.py). DbrxBlock:
    norm_1 / norm_2 ``nn.LayerNorm(d_model, bias=False)`` (h gains each, counted as RMSNorms, as norm_f);
    DbrxAttention: fused ``Wqkv`` h x (h + 2 kv_n_heads head_dim), head_dim = d_model / n_heads,
    ``out_proj`` h x h, no biases, output clamped to +-``clip_qkv`` (no weights); DbrxFFN: router
    ``layer`` h x E without bias, DbrxExpertGLU ``w1`` / ``v1`` / ``w2`` (E ffn_hidden_size, h): a gated MLP
    of ``ffn_hidden_size`` per expert (whatever ``ffn_act_fn``); every layer MoE; untied LM head
    (DbrxConfig refuses ``tie_word_embeddings``).
    """
    attn = _sub_config(cfg, "DbrxForCausalLM", "attn_config", "kv_n_heads")
    ffn = _sub_config(cfg, "DbrxForCausalLM", "ffn_config", "ffn_hidden_size", "moe_num_experts", "moe_top_k")
    if cfg.get("tie_word_embeddings"):
        raise ConfigError("config.json for DbrxForCausalLM: tie_word_embeddings=true is refused by DbrxConfig "
                          "(DBRX has its own lm_head); legal: false", field="tie_word_embeddings", value=True,
                          legal=[False])
    clip = _clip_qkv(attn)
    return dict(n_layers=cfg["n_layers"], d_model=cfg["d_model"], n_heads=cfg["n_heads"],
                n_kv_heads=attn["kv_n_heads"], ffn_dim=ffn["ffn_hidden_size"], vocab_size=cfg["vocab_size"],
                mlp="swiglu", norm="rmsnorm", position="rope", tied_embeddings=False,
                n_experts=ffn["moe_num_experts"], top_k=ffn["moe_top_k"], clip_qkv=clip)


def _ernie4_5(cfg: Cfg) -> Cfg:
    """Baidu ERNIE 4.5 dense, e.g. ERNIE-4.5-0.3B (``transformers`` configuration_ernie4_5.py,
    modeling_ernie4_5.py): a Llama decoder whose q/k/v/o and gate/up/down projections take bias =
    ``use_bias`` (``attention_bias`` / ``mlp_bias`` are not read), ``head_dim`` its own key (Ernie4_5Config
    default 128, required here), lm_head without bias, tied embeddings by default."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ("attention_bias", "mlp_bias")}, tied=True)
    if cfg.get("use_bias"):
        spec.update(qkv_bias=True, attn_out_bias=True, mlp_bias=True)
    return spec


def _ernie4_5_moe(cfg: Cfg) -> Cfg:
    """Baidu ERNIE 4.5 MoE, e.g. ERNIE-4.5-21B-A3B (``transformers`` configuration_ernie4_5_moe.py,
    modeling_ernie4_5_moe.py). Layer i is an Ernie4_5_MoeSparseMoeBlock iff (i + 1) % ``moe_layer_interval``
    == 0 and ``moe_layer_start_index`` <= i <= ``moe_layer_end_index`` (-1: the last layer), else a dense
    MLP of ``intermediate_size``. The block: router ``gate`` h x E without bias; ``moe_statics``
    ``e_score_correction_bias`` (1, E), an ``nn.Parameter`` (requires_grad=False), counted as ``router_bias``
    (E elements); E experts of ``moe_intermediate_size``; one shared MLP of ``moe_num_shared_experts`` x
    that width (counted as that many experts). Attention and norms as ERNIE 4.5 dense (head_dim = the
    config's ``head_dim`` if any, else hidden / heads). ``use_bias`` is refused: besides an LM-head bias
    it gives MLP biases whose placement differs between ``transformers`` versions (every expert in 4.x;
    in 5.x the fused MixtralExperts have none, the shared and dense MLPs do). The MTP layers
    (``num_nextn_predict_layers``) are not built by ``transformers`` and not counted.
    """
    if cfg.get("use_bias"):
        raise ConfigError("config.json for Ernie4_5_MoeForCausalLM: use_bias=true also gives its lm_head a bias "
                          "and its MLPs biases placed differently by transformers 4.x (every expert) and 5.x "
                          "(shared and dense MLPs only), which is not modelled; legal: false; " + YAML_ROUTE,
                          field="use_bias", value=True, legal=[False])
    n, step = cfg["num_hidden_layers"], cfg.get("moe_layer_interval", 1)
    start, end = cfg.get("moe_layer_start_index", 1), cfg.get("moe_layer_end_index", -1)
    end = n - 1 if end == -1 else end
    moe = [i for i in range(n) if (i + 1) % step == 0 and start <= i <= end]
    spec = _ernie4_5(cfg)
    spec.update(n_experts=cfg["moe_num_experts"], top_k=cfg["moe_k"], expert_ffn_dim=cfg["moe_intermediate_size"],
                n_shared_experts=cfg["moe_num_shared_experts"], router_bias=True,
                **moe_layer_pattern(moe, n, "moe_layer_start_index / moe_layer_interval / moe_layer_end_index"))
    return spec


def _only(arch: str, key: str, value: Any, legal: list[Any], why: str) -> None:
    """Refuse ``key``'s ``value`` unless it is one of ``legal`` (the variant whose parameters are counted),
    naming the key, the value, the legal values and ``why`` the others are not modelled."""
    if value not in legal or isinstance(value, bool) != isinstance(legal[0], bool):
        raise ConfigError(f"config.json for {arch}: {key}={json.dumps(value, default=str)} is not modelled ({why}); "
                          f"legal: {', '.join(json.dumps(v) for v in legal)}; " + YAML_ROUTE, field=key, value=value,
                          legal=legal)


def _mpt(cfg: Cfg) -> Cfg:
    """MosaicML MPT, e.g. MPT-7B / MPT-30B (``transformers`` configuration_mpt.py, modeling_mpt.py). MptBlock:
    norm_1 / norm_2 LayerNorms whose bias is set to None (h gains each, counted as RMSNorms, as ``norm_f``);
    MptAttention fused ``Wqkv`` h x 3h and ``out_proj`` h x h without biases (multi-head, head_dim = d_model /
    n_heads), output clamped to +-``attn_config.clip_qkv``; MptMLP up_proj / down_proj of 4 x d_model without
    biases (GeLU); ALiBi (no position table); lm_head tied to ``wte`` unless ``tie_word_embeddings`` is false.
    ``transformers`` builds this whatever ``expansion_ratio``, ``no_bias``, ``attn_config.attn_type``,
    ``qk_ln`` or ``alibi`` say, so another value of those (a checkpoint ``transformers`` cannot load) is refused.
    """
    arch, attn = "MptForCausalLM", cfg.get("attn_config", {})
    if not isinstance(attn, dict):
        raise ConfigError(f"config.json for {arch} has {type(attn).__name__} for 'attn_config'; legal: a mapping "
                          "of its keys (alibi, attn_type, clip_qkv, ...)", field="attn_config", value=attn)
    for key, value, legal, why in (
            ("expansion_ratio", cfg.get("expansion_ratio", 4), [4], "MptMLP is 4 x d_model wide"),
            ("no_bias", cfg.get("no_bias", True), [True], "MptBlock builds no biases"),
            ("attn_config.attn_type", attn.get("attn_type", "multihead_attention"), ["multihead_attention"],
             "MptAttention's Wqkv is 3 x d_model wide"),
            ("attn_config.qk_ln", attn.get("qk_ln", False), [False], "MptAttention has no QK LayerNorms"),
            ("attn_config.alibi", attn.get("alibi", True), [True], "MptModel adds ALiBi and has no position table")):
        _only(arch, key, value, legal, why)
    h = _either(cfg, "d_model", "hidden_size")
    return dict(n_layers=_either(cfg, "n_layers", "num_hidden_layers"), d_model=h,
                n_heads=_either(cfg, "n_heads", "num_attention_heads"), ffn_dim=4 * h, vocab_size=cfg["vocab_size"],
                mlp="gelu", norm="rmsnorm", position="alibi", clip_qkv=_clip_qkv(attn),
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))


def _opt(cfg: Cfg) -> Cfg:
    """Meta OPT (``transformers`` configuration_opt.py, modeling_opt.py). OPTDecoderLayer: q/k/v/out_proj and
    fc1 / fc2 (ReLU, ``ffn_dim`` wide) with bias = ``enable_bias`` (default true), self_attn_layer_norm and
    final_layer_norm LayerNorms (gain + bias); OPTDecoder: embed_tokens, OPTLearnedPositionalEmbedding of
    ``max_position_embeddings`` + 2 rows (its offset of 2), a final LayerNorm; lm_head tied. Refused:
    ``word_embed_proj_dim`` other than ``hidden_size`` (OPT-350m: narrower embeddings with project_in /
    project_out), ``do_layer_norm_before`` false or ``_remove_final_layer_norm`` (no final LayerNorm),
    ``layer_norm_elementwise_affine`` false (weightless LayerNorms)."""
    arch, h = "OPTForCausalLM", cfg["hidden_size"]
    for key, legal, why in (
            ("word_embed_proj_dim", [h], "narrower embeddings add project_in / project_out, not counted"),
            ("do_layer_norm_before", [True], "post-LN OPT has no final LayerNorm, which ModelSpec counts"),
            ("_remove_final_layer_norm", [False], "no final LayerNorm, which ModelSpec counts"),
            ("layer_norm_elementwise_affine", [True], "weightless LayerNorms")):
        value = cfg.get(key)
        _only(arch, key, legal[0] if value is None else value, legal, why)
    rows = cfg.get("max_position_embeddings", 2048)  # OPTConfig's default
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= 2**24 - 2:  # + 2 offset rows
        raise ConfigError(f"config.json max_position_embeddings={rows!r}; legal: a whole number from 1 to "
                          f"{2**24 - 2:,}", field="max_position_embeddings", value=rows)
    return dict(n_layers=cfg["num_hidden_layers"], d_model=h, n_heads=cfg["num_attention_heads"],
                ffn_dim=cfg["ffn_dim"], vocab_size=cfg["vocab_size"], mlp="gelu", norm="layernorm",
                linear_bias=bool(cfg.get("enable_bias", True)), position="learned", max_position_embeddings=rows + 2,
                tied_embeddings=bool(cfg.get("tie_word_embeddings", True)))


def _gptj(cfg: Cfg) -> Cfg:
    """EleutherAI GPT-J (``transformers`` configuration_gptj.py, modeling_gptj.py). GPTJBlock: one ln_1
    LayerNorm feeding attention and MLP in parallel; GPTJAttention q/k/v/out_proj h x h without biases
    (rotary on ``rotary_dim`` of each head: no weights); GPTJMLP fc_in / fc_out of ``n_inner`` (null: 4 x
    n_embd) with biases; ln_f; an untied lm_head h x V with a bias of V (``lm_head_bias``). GPTJConfig
    attribute_map: hidden_size -> n_embd, num_hidden_layers -> n_layer, num_attention_heads -> n_head."""
    d = _either(cfg, "n_embd", "hidden_size")
    return dict(n_layers=_either(cfg, "n_layer", "num_hidden_layers"), d_model=d,
                n_heads=_either(cfg, "n_head", "num_attention_heads"), ffn_dim=cfg.get("n_inner") or 4 * d,
                vocab_size=cfg["vocab_size"], mlp="gelu", norm="layernorm", mlp_bias=True, norms_per_layer=1,
                position="rope", tied_embeddings=bool(cfg.get("tie_word_embeddings", False)), lm_head_bias=True)


def _phi(cfg: Cfg) -> Cfg:
    """Microsoft Phi-1 / Phi-1.5 / Phi-2 (``transformers`` configuration_phi.py, modeling_phi.py). PhiDecoderLayer:
    one input_layernorm LayerNorm feeding attention and MLP in parallel; PhiAttention q/k/v (kv heads =
    ``num_key_value_heads``, null: the head count) and dense, all with biases, head_dim = hidden / heads
    (partial rotary: no weights); PhiMLP fc1 / fc2 of ``intermediate_size`` with biases; final_layernorm;
    lm_head with a bias of V (``lm_head_bias``), untied by default. ``qk_layernorm`` (two LayerNorms of
    head_dim with biases, 4 head_dim elements, not ModelSpec's 2 head_dim) is refused; no release sets it."""
    _only("PhiForCausalLM", "qk_layernorm", cfg.get("qk_layernorm", False), [False],
          "its LayerNorms of head_dim with biases are not counted")
    return dict(n_layers=cfg["num_hidden_layers"], d_model=cfg["hidden_size"], n_heads=cfg["num_attention_heads"],
                n_kv_heads=_kv_heads(cfg), ffn_dim=cfg["intermediate_size"], vocab_size=cfg["vocab_size"],
                mlp="gelu", norm="layernorm", linear_bias=True, norms_per_layer=1, position="rope",
                tied_embeddings=bool(cfg.get("tie_word_embeddings", False)), lm_head_bias=True)


def _nemotron(cfg: Cfg) -> Cfg:
    """NVIDIA Nemotron-4 / Minitron (``transformers`` configuration_nemotron.py, modeling_nemotron.py): a Llama
    decoder (q/k/v/o bias = ``attention_bias``, ``head_dim`` if given) whose NemotronMLP is up_proj / down_proj
    of ``intermediate_size`` (squared ReLU, not gated; bias = ``mlp_bias``), counted as ModelSpec's
    2-matrix ``gelu`` MLP (the same weights and matmul FLOPs), and whose NemotronLayerNorm1P norms
    (input / post-attention / final) are LayerNorms with gain and bias; partial rotary has no weights; untied."""
    spec = _llama_like(cfg)
    spec.update(mlp="gelu", norm="layernorm")
    return spec


def _stablelm(cfg: Cfg) -> Cfg:
    """Stability AI StableLM (3B-4E1T, StableLM 2; ``transformers`` configuration_stablelm.py,
    modeling_stablelm.py). StableLmAttention: q/k/v (head_dim = hidden / heads) with bias = ``use_qkv_bias``,
    o_proj without; with ``qk_layernorm`` StableLmLayerNormPerHead on q and k: one bias-free LayerNorm of
    head_dim per head, heads x head_dim + kv heads x head_dim gains (counted as ``qk_norm='full'``: the
    same elements). A gated MLP without biases; LayerNorm (gain + bias) input_layernorm and, unless
    ``use_parallel_residual``, post_attention_layernorm; final LayerNorm; untied by default."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ("head_dim", "attention_bias", "mlp_bias")})
    spec.update(norm="layernorm", qkv_bias=bool(cfg.get("use_qkv_bias", False)),
                qk_norm="full" if cfg.get("qk_layernorm") else "none",
                norms_per_layer=1 if cfg.get("use_parallel_residual") else 2)
    return spec


def _phimoe(cfg: Cfg) -> Cfg:
    """Microsoft Phi-3.5-MoE (``transformers`` configuration_phimoe.py, modeling_phimoe.py). PhimoeDecoderLayer:
    input / post-attention LayerNorms with gain and bias (``elementwise_affine=True``), as the final norm;
    PhimoeAttention q/k/v/o of head_dim = hidden / heads with bias = ``attention_bias``; PhimoeSparseMoeBlock:
    router ``gate`` h x E without bias, E experts w1 / w3 / w2 of ``intermediate_size`` without biases;
    lm_head with bias = ``lm_head_bias`` (``lm_head_bias``, V elements); ``sliding_window`` on every layer."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ("head_dim", "mlp_bias")})
    spec.update(norm="layernorm", n_experts=cfg["num_local_experts"], top_k=cfg["num_experts_per_tok"],
                lm_head_bias=bool(cfg.get("lm_head_bias", False)), **window_pattern(cfg, 0))
    return spec


def _dots1(cfg: Cfg) -> Cfg:
    """rednote dots.llm1 (``transformers`` configuration_dots1.py, modular_dots1.py / modeling_dots1.py).
    Dots1Attention is Qwen3Attention: q/k/v/o (head_dim = ``head_dim`` if given, else hidden / heads) with bias =
    ``attention_bias``, per-head q_norm / k_norm RMSNorm(head_dim). Dots1DecoderLayer is DeepseekV3DecoderLayer:
    layers below ``first_k_dense_replace`` a dense MLP of ``intermediate_size``, the others Dots1MoE (DeepseekV3MoE):
    router weight E x h (its ``e_score_correction_bias`` a buffer, not a parameter), E routed experts of
    ``moe_intermediate_size`` and one shared MLP of ``n_shared_experts`` x that width; two pre-norms; untied
    lm_head by default. Sliding layers per ``layer_types``, else (Dots1Config) layer i >= ``max_window_layers``
    slides when ``sliding_window`` is set (default 4096 with max_window_layers 62: none in a 62-layer model)."""
    n = cfg["num_hidden_layers"]
    types = cfg.get("layer_types")
    if types is None:
        w, start = cfg.get("sliding_window", 4096), cfg.get("max_window_layers", 62)
        types = ["sliding_attention" if w is not None and i >= start else "full_attention" for i in range(n)]
    spec = _qwen3({k: v for k, v in cfg.items() if k not in ("mlp_bias", "use_sliding_window")})
    spec.update(n_experts=cfg["n_routed_experts"], top_k=cfg["num_experts_per_tok"],
                expert_ffn_dim=cfg["moe_intermediate_size"], n_shared_experts=cfg["n_shared_experts"],
                n_dense_layers=cfg.get("first_k_dense_replace", 0),
                **window_pattern({"sliding_window": cfg.get("sliding_window", 4096), "layer_types": types}))
    return spec


def _exaone4_window(cfg: Cfg) -> Cfg:
    """EXAONE 4.0's sliding layers: ``layer_types`` when given; else none without ``sliding_window`` (null), else
    (Exaone4Config: window 4096, pattern 4 by default) every ``sliding_window_pattern``-th layer full attention, the
    pattern a number or a string of ``L`` (local) ending in one ``G`` (global), e.g. ``"LLLG"`` = 4."""
    if cfg.get("layer_types"):
        return window_pattern({"sliding_window": cfg.get("sliding_window", 4096), "layer_types": cfg["layer_types"]})
    w, pattern = cfg.get("sliding_window", 4096), cfg.get("sliding_window_pattern", 4)
    if w is None or pattern is None:
        return {}
    if isinstance(pattern, str):
        if not pattern or pattern.strip("L") != "G" or not pattern.endswith("G"):
            raise ConfigError(f"config.json sliding_window_pattern={pattern!r}; legal: a number, or 'L' characters "
                              "followed by one 'G' (e.g. \"LLLG\"); " + YAML_ROUTE, field="sliding_window_pattern",
                              value=pattern)
        pattern = len(pattern)
    return window_pattern({"sliding_window": w}, pattern)


def _exaone4(cfg: Cfg) -> Cfg:
    """LG EXAONE 4.0 (``transformers`` configuration_exaone4.py, modular_exaone4.py / modeling_exaone4.py).
    Exaone4Attention: q/k/v/o without biases (head_dim = ``head_dim`` if given, else hidden / heads), per-head
    q_norm / k_norm RMSNorm(head_dim); Exaone4DecoderLayer is Olmo2DecoderLayer: post_attention_layernorm and
    post_feedforward_layernorm only (two RMSNorms, as two pre-norms count), a gated MLP without biases; a final
    norm; untied by default (EXAONE-4.0-1.2B ties). Global layers of the hybrid (32B: ``"LLLG"``, window 4096)
    skip RoPE: no weights either way (:func:`_exaone4_window`)."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ("attention_bias", "mlp_bias")})
    spec.update(qk_norm="head", **_exaone4_window(cfg))
    return spec


def _arcee(cfg: Cfg) -> Cfg:
    """Arcee AFM-4.5B (``transformers`` configuration_arcee.py, modular_arcee.py / modeling_arcee.py): a Llama
    decoder (q/k/v/o bias = ``attention_bias``, ``head_dim`` if given) whose ArceeMLP is NemotronMLP: up_proj /
    down_proj of ``intermediate_size`` (ReLU^2, not gated; bias = ``mlp_bias``), counted as ModelSpec's 2-matrix
    ``gelu`` MLP (the same weights and matmul FLOPs); two RMSNorms per layer; untied by default."""
    return {**_llama_like(cfg), "mlp": "gelu"}


def _minimax_m2(cfg: Cfg) -> Cfg:
    """MiniMax-M2 (``transformers`` configuration_minimax_m2.py, modeling_minimax_m2.py). MiniMaxM2Attention: full
    attention in every layer, q/k/v/o without biases (head_dim = ``head_dim``), q_norm RMSNorm(heads x head_dim)
    and k_norm RMSNorm(kv heads x head_dim) over the whole projections (``qk_norm='full'``; partial rotary has no
    weights); every layer a MiniMaxM2SparseMoeBlock: router weight E x h without bias (its
    ``e_score_correction_bias`` a buffer, not a parameter), E experts gate_up (2F x h) + down (h x F) of
    ``intermediate_size``, no shared expert; two RMSNorms per layer; untied lm_head. The multi-token-prediction
    modules (``num_mtp_modules``) are not built by ``transformers`` and not counted."""
    spec = _llama_like({k: v for k, v in cfg.items() if k not in ("attention_bias", "mlp_bias")})
    spec.update(qk_norm="full", n_experts=_either(cfg, "num_local_experts", "num_experts"),
                top_k=cfg["num_experts_per_tok"])
    return spec


#: ``architectures[0]`` -> translator; multimodal wrappers read ``text_config``
FAMILIES: dict[str, Callable[[Cfg], Cfg]] = {
    "LlamaForCausalLM": _llama, "MistralForCausalLM": _mistral, "MixtralForCausalLM": _mixtral,
    "Qwen2ForCausalLM": _qwen2, "Qwen3ForCausalLM": _qwen3, "Qwen3MoeForCausalLM": _qwen3_moe,
    "GemmaForCausalLM": _gemma, "Gemma2ForCausalLM": _gemma2, "Gemma3ForCausalLM": _gemma3,
    "Gemma3ForConditionalGeneration": _gemma3, "Phi3ForCausalLM": _phi3, "Llama4ForCausalLM": _llama4,
    "Llama4ForConditionalGeneration": _llama4, "Mistral3ForConditionalGeneration": _mistral,
    "DeepseekV2ForCausalLM": _deepseek,
    "DeepseekV3ForCausalLM": _deepseek, "GptOssForCausalLM": _gpt_oss, "Olmo2ForCausalLM": _olmo2,
    "FalconForCausalLM": _falcon, "RWForCausalLM": _falcon, "GPT2LMHeadModel": _gpt2,
    "GPTNeoXForCausalLM": _gpt_neox, "BloomForCausalLM": _bloom,
    "InternLMForCausalLM": _internlm, "InternLM2ForCausalLM": _internlm2,
    "Qwen2MoeForCausalLM": _qwen2_moe, "OlmoeForCausalLM": _olmoe, "Glm4MoeForCausalLM": _glm4_moe,
    "GraniteForCausalLM": _granite, "GraniteMoeForCausalLM": _granitemoe, "Starcoder2ForCausalLM": _starcoder2,
    "SmolLM3ForCausalLM": _smollm3, "Olmo3ForCausalLM": _olmo3, "CohereForCausalLM": _cohere,
    "SeedOssForCausalLM": _seed_oss, "Cohere2ForCausalLM": _cohere2, "DbrxForCausalLM": _dbrx,
    "Ernie4_5ForCausalLM": _ernie4_5, "Ernie4_5_MoeForCausalLM": _ernie4_5_moe,
    "MptForCausalLM": _mpt, "MPTForCausalLM": _mpt, "OPTForCausalLM": _opt, "GPTJForCausalLM": _gptj,
    "PhiForCausalLM": _phi, "NemotronForCausalLM": _nemotron, "StableLmForCausalLM": _stablelm,
    "PhimoeForCausalLM": _phimoe, "PhiMoEForCausalLM": _phimoe, "GlmForCausalLM": _glm, "Glm4ForCausalLM": _glm4,
    "Dots1ForCausalLM": _dots1, "Exaone4ForCausalLM": _exaone4, "ArceeForCausalLM": _arcee,
    "MiniMaxM2ForCausalLM": _minimax_m2,
}
MULTIMODAL = ("Gemma3ForConditionalGeneration", "Llama4ForConditionalGeneration", "Mistral3ForConditionalGeneration")
#: the text_config model_type each multimodal wrapper's translator reads (transformers builds the text model from
#: CONFIG_MAPPING[text_config.model_type]; Mistral3Config defaults it to "mistral")
TEXT_MODEL_TYPES = {"Mistral3ForConditionalGeneration": ("mistral",)}

_MAMBA2 = "hybrid of Mamba-2 (state-space) and attention layers"
#: architectures refused with the reason ModelSpec cannot express them (it knows attention + MLP blocks only)
_LIGHTNING = "hybrid of lightning (linear) attention and softmax attention layers"
UNMODELLED = {
    "Qwen3NextForCausalLM": "hybrid of Gated DeltaNet linear-attention and gated full-attention layers",
    "JambaForCausalLM": "hybrid of Mamba and attention layers", "NemotronHForCausalLM": _MAMBA2,
    "BambaForCausalLM": _MAMBA2, "GraniteMoeHybridForCausalLM": "Granite 4.0: " + _MAMBA2,
    "FalconH1ForCausalLM": "Mamba-2 and attention heads side by side in every layer",
    "Zamba2ForCausalLM": "Mamba-2 layers with shared attention blocks",
    "MiniMaxForCausalLM": _LIGHTNING, "MiniMaxM1ForCausalLM": _LIGHTNING, "MiniMaxText01ForCausalLM": _LIGHTNING,
    "Lfm2ForCausalLM": "hybrid of gated short-convolution and attention layers",
    "ApertusForCausalLM": "its xIELU activation has two learned scalars per layer, which ModelSpec does not count",
    "KimiLinearForCausalLM": "hybrid of Kimi Delta Attention (linear) and MLA layers",
    "DeepseekV32ForCausalLM": "DeepSeek-V3.2's lightning indexer (per layer wq_b, wk, a LayerNorm with bias and "
                              "weights_proj beside MLA) has weights and FLOPs ModelSpec does not count",
}


#: config keys that only an :data:`UNMODELLED` family's configuration class defines -> that family: a config that
#: sets one under a supported architecture (a relabelled DeepSeek-V3.2 or Qwen3-Next) would be priced without the
#: layers the key describes (transformers' DeepseekV32Config, Qwen3NextConfig, NemotronHConfig, MiniMaxConfig)
FOREIGN_KEYS = {"index_topk": "DeepseekV32ForCausalLM", "index_n_heads": "DeepseekV32ForCausalLM",
                "index_head_dim": "DeepseekV32ForCausalLM", "linear_num_value_heads": "Qwen3NextForCausalLM",
                "linear_num_key_heads": "Qwen3NextForCausalLM", "linear_conv_kernel_dim": "Qwen3NextForCausalLM",
                "hybrid_override_pattern": "NemotronHForCausalLM"}
#: ``layer_types`` entries of the supported families (softmax attention, full / local)
SOFTMAX_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")


def foreign_feature(cfg: Cfg) -> str | None:
    """Why a config read under a supported architecture describes layers ModelSpec cannot price: a key of
    :data:`FOREIGN_KEYS`, a ``mamba_*`` / ``ssm_*`` key (the Mamba hybrids: Jamba, Falcon-H1, Granite 4.0,
    Nemotron-H, Bamba), a ``layer_types`` entry other than :data:`SOFTMAX_LAYER_TYPES` (Qwen3-Next's
    'linear_attention', Granite 4.0's 'mamba'), or an ``attn_type_list`` with a 0 (MiniMax-Text-01's lightning
    attention layers; MiniMax-M2 configs may list 1s, softmax attention, only); None when there is none. The
    ``model_type`` alone is not read: MiniMax-M2 configs have been published with model_type 'minimax'."""
    set_keys = [k for k, v in cfg.items() if v is not None]
    for key in set_keys:
        if key in FOREIGN_KEYS:
            arch = FOREIGN_KEYS[key]
            return f"it sets {key} ({arch}: {UNMODELLED[arch]})"
        if key.startswith(("mamba_", "ssm_")):
            return f"it sets {key} (Mamba layers: {_MAMBA2})"
    types = cfg.get("layer_types")
    odd = sorted({t for t in types if t not in SOFTMAX_LAYER_TYPES}, key=str) if isinstance(types, list) else []
    if odd:
        return (f"its layer_types has {', '.join(map(short_repr, odd))} layers (legal: "
                f"{', '.join(SOFTMAX_LAYER_TYPES)}; linear-attention and Mamba layers are not modelled)")
    kinds = cfg.get("attn_type_list")
    if isinstance(kinds, list) and 0 in kinds:
        return f"its attn_type_list has linear-attention layers (0s; MiniMaxForCausalLM: {UNMODELLED['MiniMaxForCausalLM']})"
    return None


#: keys a family's configuration class defaults on its own (:func:`_require`)
REQUIRED_KEYS = {"MistralForCausalLM": ("num_key_value_heads",), "MixtralForCausalLM": ("num_key_value_heads",),
                 "Llama4ForCausalLM": ("num_key_value_heads", "head_dim"),
                 "Llama4ForConditionalGeneration": ("num_key_value_heads", "head_dim"),
                 "Mistral3ForConditionalGeneration": ("num_key_value_heads",),
                 "Qwen2ForCausalLM": ("num_key_value_heads",), "Qwen3ForCausalLM": ("num_key_value_heads", "head_dim"),
                 "Qwen3MoeForCausalLM": ("num_key_value_heads", "head_dim"),
                 "GemmaForCausalLM": ("num_key_value_heads", "head_dim"),
                 "Gemma2ForCausalLM": ("num_key_value_heads", "head_dim"),
                 "GptOssForCausalLM": ("num_key_value_heads", "head_dim"),
                 "InternLMForCausalLM": ("bias",), "InternLM2ForCausalLM": ("bias",),
                 "Qwen2MoeForCausalLM": ("num_key_value_heads",),
                 "Glm4MoeForCausalLM": ("num_key_value_heads", "n_shared_experts", "first_k_dense_replace"),
                 "Starcoder2ForCausalLM": ("num_key_value_heads",), "SmolLM3ForCausalLM": ("num_key_value_heads",),
                 "SeedOssForCausalLM": ("num_key_value_heads", "head_dim", "attention_bias"),
                 "Ernie4_5ForCausalLM": ("num_key_value_heads", "head_dim"),
                 "StableLmForCausalLM": ("num_key_value_heads",), "PhimoeForCausalLM": ("num_key_value_heads",),
                 "PhiMoEForCausalLM": ("num_key_value_heads",),
                 "GlmForCausalLM": ("num_key_value_heads", "head_dim"), "Glm4ForCausalLM": ("num_key_value_heads", "head_dim"),
                 "Ernie4_5_MoeForCausalLM": ("num_key_value_heads", "moe_num_experts", "moe_k", "moe_intermediate_size",
                                             "moe_num_shared_experts"),
                 "Dots1ForCausalLM": ("num_key_value_heads", "n_routed_experts", "n_shared_experts",
                                      "num_experts_per_tok", "moe_intermediate_size"),
                 "Exaone4ForCausalLM": ("num_key_value_heads",),
                 "MiniMaxM2ForCausalLM": ("num_key_value_heads", "head_dim")}


#: the dropout probabilities of the families' configuration classes (transformers: LlamaConfig attention_dropout,
#: GPT2Config resid_pdrop / embd_pdrop / attn_pdrop, GPTNeoXConfig hidden_dropout, BloomConfig hidden_dropout /
#: attention_dropout, ...)
DROPOUT_KEYS = ("attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "embedding_dropout",
                "residual_dropout", "mlp_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob")


def caveats(arch: str, cfg: Cfg) -> list[str]:
    """What a config.json holds that the ModelSpec built from it does not count, in words for a note: the vision
    tower of a multimodal model (only ``text_config`` is read), DeepSeek-V3 / GLM-4.5's multi-token-prediction
    modules (``num_nextn_predict_layers``: ``transformers`` builds none, so neither does the loader; ModelSpec
    ``mtp_modules`` prices them; MiniMax-M2's ``num_mtp_modules``, not counted either) and a
    ``quantization_config`` (the checkpoint's storage format, not the training precision, which ``--precision``
    sets) and dropout probabilities above 0 (:data:`DROPOUT_KEYS`; ``--dropout`` prices them). Called after :func:`spec_fields`, so a multimodal config's
    ``text_config`` is a mapping and the keys' types are checked (``loaders.check_hf_types``)."""
    out = []
    if arch in MULTIMODAL:
        out.append("text model only: the vision tower's weights are not counted")
    text = cfg["text_config"] if arch in MULTIMODAL else cfg
    mtp = text.get("num_nextn_predict_layers")
    if mtp:
        out.append(f"num_nextn_predict_layers={mtp} is not counted (transformers builds no multi-token-prediction "
                   f"module); a model file with mtp_modules: {mtp} prices it (preset deepseek-v3-mtp)")
    if text.get("num_mtp_modules"):  # MiniMax-M2's MTP modules: not DeepSeek-V3's shape, so no mtp_modules offer
        out.append(f"num_mtp_modules={text['num_mtp_modules']} is not counted (transformers builds no "
                   "multi-token-prediction module)")
    drop = {k: text[k] for k in DROPOUT_KEYS if isinstance(text.get(k), (int, float)) and text[k] > 0}
    if drop:
        out.append(", ".join(f"{k}={v}" for k, v in drop.items()) + ": the config trains with dropout; priced "
                   "without it unless --dropout is given (dropout masks and their element-wise traffic)")
    if isinstance(cfg.get("quantization_config"), dict):
        method = short_repr(cfg["quantization_config"].get("quant_method", "?"))
        out.append(f"quantization_config (quant_method {method}) describes the checkpoint's storage, not training: "
                   "priced in the --precision given")
    return out


def spec_fields(arch: str, cfg: Cfg) -> Cfg:
    """ModelSpec fields for ``arch`` (a key of :data:`FAMILIES`) from its config mapping.

    Raises:
        KeyError: a key the family needs is missing (the caller names it).
        ConfigError: a variant of the family that is not modelled.
    """
    if arch in MULTIMODAL:
        text = cfg.get("text_config")
        if not isinstance(text, dict):
            raise ConfigError(f"{arch} config.json text_config={short_repr(text)}; legal: a mapping of the text "
                              "model's keys (hidden_size, num_hidden_layers, ...)", field="text_config", value=text)
        kind, legal = text.get("model_type"), TEXT_MODEL_TYPES.get(arch)
        if legal and kind is not None and kind not in legal:
            # transformers builds the text model from CONFIG_MAPPING[text_config.model_type]: another family's keys
            raise ConfigError(f"{arch} config.json text_config.model_type={short_repr(kind)}; legal: "
                              f"{', '.join(repr(k) for k in legal)} (the text model this translator reads) or leave the "
                              "key out", field="text_config.model_type", value=kind, legal=list(legal))
        cfg = text
    _require(cfg, arch, *REQUIRED_KEYS.get(arch, ()))
    _check_activation(cfg)
    fields = {**FAMILIES[arch](cfg), **_rope_and_eps(cfg, arch)}
    coef = cfg.get("router_aux_loss_coef")  # Mixtral, Qwen2/3-MoE, OLMoE, GPT-OSS, PhiMoE, ...: the training loss's
    if fields.get("n_experts") and coef is not None:  # balancing weight (configuration_*.py), no cost
        if isinstance(coef, bool) or not isinstance(coef, (int, float)) or not 0 <= coef <= 1:
            raise ConfigError(f"config.json router_aux_loss_coef={coef!r} is not legal; legal: a number from 0 to 1",
                              field="router_aux_loss_coef", value=coef)
        fields["router_aux_loss_coef"] = float(coef)
    return fields


#: the activation names transformers builds (transformers/activations.py ``ACT2CLS``; ``get_activation`` raises
#: KeyError on any other, so a model with another name does not load)
HF_ACTIVATIONS = ("gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh", "gelu_python_tanh",
                  "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear", "mish", "quick_gelu", "relu",
                  "relu2", "relu6", "sigmoid", "silu", "sqrtsoftplus", "swish", "tanh", "prelu", "xielu")
#: the config keys that name the MLP's activation (LlamaConfig ``hidden_act``, Gemma ``hidden_activation``, GPT-2 /
#: GPT-J ``activation_function``)
ACTIVATION_KEYS = ("hidden_act", "hidden_activation", "activation_function")


def _check_activation(cfg: Cfg) -> None:
    """Refuse an activation name transformers does not build (the planner costs every activation alike, but a config
    naming an unknown one is a typo or another library's model: transformers' ``ACT2FN[name]`` fails on it).

    Raises:
        ConfigError: naming the key, the value and :data:`HF_ACTIVATIONS`.
    """
    for key in ACTIVATION_KEYS:
        value = cfg.get(key)
        if value is not None and value not in HF_ACTIVATIONS:
            raise ConfigError(f"config.json {key}={short_repr(value)} is not an activation transformers builds; legal: "
                              f"{', '.join(HF_ACTIVATIONS)}", field=key, value=value, legal=list(HF_ACTIVATIONS))


def _rope_and_eps(cfg: Cfg, arch: str = "") -> Cfg:
    """``rope_theta``, ``norm_eps`` and the ``rope_scaling`` type and factor of a config (``rope_theta``;
    ``rms_norm_eps``, ``layer_norm_eps`` or ``layer_norm_epsilon``; ``rope_scaling.rope_type`` / legacy ``type`` and
    ``factor``, transformers' names) where given: no cost, carried for the exporters (Megatron-LM --rotary-base /
    --norm-epsilon / --use-rope-scaling; new users found Qwen3's 1e6 base and 1e-6 epsilon and Llama 3.1's llama3
    scaling missing)."""
    out: Cfg = {}
    scaling = cfg.get("rope_scaling")
    _check_rope_scaling(scaling, arch)
    if isinstance(scaling, dict) and scaling.get("rope_type", scaling.get("type")) not in (None, "default"):
        out["rope_scaling_type"] = str(scaling.get("rope_type", scaling.get("type")))
        if scaling.get("factor") is not None:
            out["rope_scaling_factor"] = float(scaling["factor"])
        params = llama3_params(scaling)
        if params is not None:
            out["rope_llama3_params"] = params
    theta = cfg.get("rope_theta")
    if theta is not None:
        out["rope_theta"] = _number_in(theta, "rope_theta", 0.0, float("inf"), "a positive finite number (e.g. 10000)")
    for key in ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"):
        eps = cfg.get(key)
        if eps is not None:
            out["norm_eps"] = _number_in(eps, key, 0.0, 1.0, "a number between 0 and 1 (e.g. 1e-5)")
            break
    return out


#: the largest RoPE scaling factor read (released models use 4-64: Llama 3.1 8, Llama 3.2 32, DeepSeek-V3's yarn 40;
#: a 401-digit factor overflowed float(), breaker pass 54b)
MAX_ROPE_FACTOR = 1024


#: the RoPE scalings transformers builds for every family (modeling_rope_utils ROPE_INIT_FUNCTIONS: default, linear,
#: dynamic, yarn, longrope, llama3)
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
#: legacy names only some families' configs translate: Phi-3's 'su' (Phi3Config renames it to longrope); other
#: families' rotary embeddings look the name up as it is and fail (LlamaRotaryEmbedding: ROPE_INIT_FUNCTIONS[...]).
#: Qwen2-VL's 'mrope' belongs to a family the planner does not read.
LEGACY_ROPE_TYPES = {"su": ("Phi3ForCausalLM",)}


#: Llama 3.1's llama3 RoPE parameters (low_freq_factor, high_freq_factor, original_max_position_embeddings), the ones
#: Megatron-LM's --use-rope-scaling applies with only --rope-scaling-factor to set (arguments.py; the rotary embedding's
#: scaling, megatron/core/models/common/embeddings/rotary_pos_embedding.py, defaults 1, 4 and 8192; Megatron-Bridge's
#: llama provider apply_rope_scaling likewise)
LLAMA31_ROPE = (1.0, 4.0, 8192)


def llama3_params(scaling: Any) -> tuple[float, float, int] | None:
    """A 'llama3' ``rope_scaling``'s (low_freq_factor, high_freq_factor, original_max_position_embeddings) where they
    are given and differ from :data:`LLAMA31_ROPE` (breaker pass 55: a config with 2 / 8 / 32768 was exported as
    Megatron-LM's defaults without a word); None otherwise."""
    if not isinstance(scaling, dict) or scaling.get("rope_type", scaling.get("type")) != "llama3":
        return None
    got = (scaling.get("low_freq_factor"), scaling.get("high_freq_factor"), scaling.get("original_max_position_embeddings"))
    if any(v is None or isinstance(v, bool) or not isinstance(v, (int, float)) for v in got):
        return None
    params = (float(got[0]), float(got[1]), int(got[2]))
    return None if params == LLAMA31_ROPE else params


def _check_rope_scaling(scaling: Any, arch: str = "") -> None:
    """Refuse a ``rope_scaling`` transformers cannot read (``rope_config_validation``: a mapping with its ``rope_type``
    or legacy ``type`` key; every scaling type takes a ``factor``, from 1 to :data:`MAX_ROPE_FACTOR` where given). No
    cost depends on it
    (the rotary embedding is element-wise), but a string or a negative factor is not a model transformers builds.

    Raises:
        ConfigError: naming the key, its value and what is legal.
    """
    if scaling is None:
        return
    kind = scaling.get("rope_type", scaling.get("type")) if isinstance(scaling, dict) else None
    factor = scaling.get("factor") if isinstance(scaling, dict) else None
    legal = [*ROPE_TYPES, *(name for name, archs in LEGACY_ROPE_TYPES.items() if arch in archs)]
    if isinstance(kind, str) and kind not in legal:
        raise ConfigError(f"config.json rope_scaling rope_type={short_repr(kind)} is not a RoPE scaling transformers "
                          f"builds{f' for {arch}' if arch else ''}; legal: {', '.join(legal)}",
                          field="rope_scaling.rope_type", value=short_repr(kind), legal=legal)
    if not isinstance(kind, str) or (factor is not None and not (
            isinstance(factor, (int, float)) and not isinstance(factor, bool) and 1 <= factor <= MAX_ROPE_FACTOR)):
        raise ConfigError(f"config.json rope_scaling={short_repr(scaling)} is not legal; legal: null, or a mapping with "
                          "its rope_type (or type: 'linear', 'dynamic', 'yarn', 'longrope', 'llama3', ...) and a "
                          f"factor from 1 to {MAX_ROPE_FACTOR:,} (transformers rope_config_validation)",
                          field="rope_scaling", value=short_repr(scaling))


def _number_in(value: Any, key: str, low: float, high: float, legal: str) -> float:
    """``value`` as a float when it is a number strictly between ``low`` and ``high``.

    Raises:
        ConfigError: naming ``key``, the value and ``legal`` (a NaN, an infinity, a string or a value out
            of range would otherwise be dropped and the exporters write the framework's default instead).
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool) and low < value < high:
        return float(value)
    raise ConfigError(f"config.json {key}={value!r} is not legal; legal: {legal}",
                      field=key, value=value)
