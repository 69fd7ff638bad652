"""Model specification: the shapes of a dense or mixture-of-experts decoder-only transformer.

All counts are in *elements* (parameters), never bytes. Parameter-count formulas follow the
architecture definitions of the respective papers and the Hugging Face reference implementations:

* attention: Vaswani et al. 2017 (Q, K, V, O projections); grouped-query attention (GQA) per
  Ainslie et al. 2023, Sec. 2 -- K and V have ``n_kv_heads * head_dim`` output features.
* SwiGLU MLP: Shazeer 2020 "GLU Variants Improve Transformer", Eq. 6 (three matrices W, V, W2);
  GeLU MLP: two matrices (Vaswani et al. 2017 Eq. 2 with GeLU, Hendrycks & Gimpel 2016).
* RMSNorm (Zhang & Sennrich 2019): one gain vector; LayerNorm (Ba et al. 2016): gain + bias.
* MoE layers: Shazeer et al. 2017 / Fedus et al. 2022 (router ``d_model x n_experts``), Mixtral
  (Jiang et al. 2024) for top-k routing over SwiGLU experts; shared experts per DeepSeekMoE
  (Dai et al. 2024, Sec. 3.2).
* Multi-head latent attention (MLA, DeepSeek-V2, DeepSeek-AI 2024, Sec. 2.1.2-2.1.3, Eqs. 9-19):
  an optional low-rank query (``W^DQ`` h x d_c', RMSNorm, ``W^UQ`` d_c' x a(d_nope + d_rope)), a joint
  K/V latent ``W^DKV`` h x (d_c + d_rope) (the decoupled RoPE key shares the down projection,
  HF ``kv_a_proj_with_mqa``), RMSNorm on the latent, ``W^UKV`` d_c x a(d_nope + d_v), output
  ``W^O`` a d_v x h.
* QK-norm: RMSNorm on queries and keys before the dot product (Dehghani et al. 2023 "Scaling ViT
  to 22B", Sec. 3.1; Qwen3 and Gemma 3 normalise each head with a ``head_dim`` gain, OLMo 2
  (OLMo et al. 2024, Sec. 3.1) the whole projection with a ``q_dim`` / ``kv_dim`` gain).
* Sandwich norms (Gemma 2 Team 2024, Sec. 2: "post-norm and pre-norm with RMSNorm"): four norms
  per block; Falcon-7B's parallel block has one (Almazrouei et al. 2023, Sec. 4.1).
* Attention sinks (GPT-OSS, OpenAI 2025 model card Sec. 2.1; Xiao et al. 2024): one learned logit
  per head per layer added to the softmax denominator.
* Q/K/V clamping (DBRX, Databricks 2024; ``transformers`` ``DbrxAttention``: ``Wqkv`` output clamped to
  ``[-clip_qkv, clip_qkv]``): no weights.
* LM-head bias (``lm_head_bias``): V elements (transformers ``GPTJForCausalLM``, ``PhiForCausalLM``,
  ``PhimoeForCausalLM`` build ``lm_head`` with a bias).
* Sliding-window attention (Beltagy et al. 2020; Mistral 7B, Jiang et al. 2023 Sec. 2): a layer
  attends to the last ``sliding_window`` keys; Gemma 2/3 and GPT-OSS interleave full-attention
  layers (``full_attention_interval``).
* Chunked local attention (Llama 4, ``local_attention='chunked'``: transformers ``Llama4TextAttention`` with
  ``attention_chunk_size``): a local layer attends only to the keys of its own block of ``sliding_window``
  tokens (a block-diagonal causal mask); every 4th layer (the NoPE layers) attends to the whole sequence.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shardplan import limits as L
from shardplan.errors import ConfigError


class ModelSpec(BaseModel):
    """Shapes of a decoder-only transformer (dense or MoE).

    Fields use the field's standard names. Widths are in elements.

    Raises:
        ConfigError: on inconsistent shapes (e.g. ``n_heads`` not divisible by ``n_kv_heads``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str = "custom"
    n_layers: int = Field(gt=0, le=L.MAX_LAYERS, description="number of transformer blocks")
    d_model: int = Field(gt=0, le=L.MAX_D_MODEL, description="hidden size h")
    n_heads: int = Field(gt=0, le=L.MAX_HEADS, description="query heads a")
    n_kv_heads: int | None = Field(default=None, gt=0, le=L.MAX_HEADS, description="key/value heads g (GQA); default n_heads")
    head_dim: int | None = Field(default=None, gt=0, le=L.MAX_HEAD_DIM, description="per-head width; default d_model // n_heads")
    ffn_dim: int = Field(gt=0, le=L.MAX_FFN, description="dense MLP intermediate width F")
    vocab_size: int = Field(gt=0, le=L.MAX_VOCAB)
    mlp: Literal["swiglu", "gelu"] = "swiglu"
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    qkv_bias: bool = Field(default=False, description="bias on Q, K, V only (Qwen2)")
    linear_bias: bool = Field(default=False, description="bias on every linear layer (GPT-2/3, NeoX)")
    tied_embeddings: bool = False
    lm_head_bias: bool = Field(
        default=False, description="a bias of vocab_size elements on the LM head (transformers GPTJForCausalLM "
        "and PhiForCausalLM build lm_head = nn.Linear(h, V) with bias, PhimoeForCausalLM with "
        "bias=config.lm_head_bias); counted in n_params, sharded over tp with the head")
    position: Literal["rope", "learned", "alibi"] = "rope"
    max_position_embeddings: int = Field(default=0, ge=0, le=L.MAX_VOCAB, description="rows of a learned position table")
    context_length: int = Field(default=0, ge=0, le=L.MAX_SEQ_LEN, description=(
        "the context the model's config declares (a Hugging Face config's max_position_embeddings; 0 = not given); "
        "prices nothing: a longer seq_len gets a note"))
    # Mixture of experts
    n_experts: int = Field(default=0, ge=0, le=L.MAX_EXPERTS, description="routed experts per MoE layer (0 = dense)")
    top_k: int = Field(default=0, ge=0, le=L.MAX_EXPERTS, description="experts each token is routed to")
    expert_ffn_dim: int | None = Field(default=None, gt=0, le=L.MAX_FFN, description="intermediate width of one expert")
    n_shared_experts: int = Field(default=0, ge=0, le=L.MAX_EXPERTS)
    n_dense_layers: int = Field(default=0, ge=0, le=L.MAX_LAYERS, description="leading dense layers in an MoE model")
    moe_layer_step: int = Field(
        default=1, ge=1, description="after the leading dense layers, every k-th layer is MoE (layer i is MoE "
        "iff (i - n_dense_layers + 1) % k == 0): 1 = all (Mixtral, DeepSeek), 2 = alternate (Llama 4 "
        "Maverick interleave_moe_layer_step, Qwen3-MoE decoder_sparse_step)")
    mlp_bias: bool = Field(default=False, description="bias on every MLP / expert linear (GPT-OSS experts)")
    router_bias: bool = Field(default=False, description="bias on the MoE router, n_experts elements (GPT-OSS; "
                              "ERNIE 4.5's e_score_correction_bias of the same size)")
    shared_expert_gate: bool = Field(
        default=False, description="a d_model x 1 sigmoid gate scaling the shared experts' output in every MoE "
        "layer, counted with the router (Qwen2-MoE shared_expert_gate)")
    # Attention variants
    attn_out_bias: bool = Field(default=False, description="bias on the attention output projection "
                                "(Llama attention_bias, GPT-OSS); linear_bias implies it")
    qk_norm: Literal["none", "head", "full"] = Field(
        default="none", description="RMSNorm gains on Q and K per layer: 'head' = head_dim elements each "
        "(Qwen3, Gemma 3), 'full' = q_dim and kv_dim elements (OLMo 2)")
    norms_per_layer: int = Field(default=2, ge=1, le=4, description="norm layers per block: 2 pre-norms, "
                                 "4 sandwich (Gemma 2/3), 1 parallel block (Falcon-7B)")
    embedding_norm: bool = Field(default=False, description="a norm right after the input embedding (BLOOM)")
    attention_sinks: bool = Field(default=False, description="one learned sink logit per head per layer (GPT-OSS)")
    rope_theta: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="RoPE base frequency (HF "
                                     "rope_theta; Llama 3 500,000, Qwen3 1,000,000); no cost, written by the exporters "
                                     "that set it (Megatron-LM --rotary-base, default 10,000); None = not given")
    rope_scaling_type: str | None = Field(default=None, max_length=40, description="the RoPE frequency scaling "
                                          "(HF rope_scaling rope_type: 'llama3' for Llama 3.1 / 3.2, 'linear', "
                                          "'yarn', ...); no cost, written by the exporters that set it (Megatron-LM "
                                          "--use-rope-scaling); None = unscaled")
    rope_scaling_factor: float | None = Field(default=None, ge=1, allow_inf_nan=False, description="the RoPE "
                                              "scaling factor (HF rope_scaling factor: 8 for Llama 3.1); no cost; "
                                              "None = not given")
    rope_llama3_params: tuple[float, float, int] | None = Field(default=None, description="a 'llama3' scaling's "
                                                                  "(low_freq_factor, high_freq_factor, "
                                                                  "original_max_position_embeddings) where they are not "
                                                                  "Llama 3.1's (1, 4, 8192), which Megatron-LM's "
                                                                  "--use-rope-scaling hard-codes; no cost; None = those")
    router_aux_loss_coef: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False, description="the MoE "
                                               "load-balancing loss coefficient (HF router_aux_loss_coef); no cost, "
                                               "written as Megatron-LM --moe-aux-loss-coeff; None = not given")
    norm_eps: float | None = Field(default=None, gt=0, lt=1, description="the norms' epsilon (HF rms_norm_eps / "
                                   "layer_norm_eps); no cost, written as Megatron-LM --norm-epsilon (default 1e-5); "
                                   "None = not given")
    clip_qkv: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="clamp every Q, K and V "
                                   "activation to [-c, c] after the projection (DBRX attn_config.clip_qkv); no "
                                   "parameters, no FLOPs counted; None = no clamp")
    attention_softcap: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="attention logit "
                                            "softcapping c: scores -> c tanh(scores / c) before the softmax (Gemma 2 "
                                            "attn_logit_softcapping, Gemma Team 2024 Sec. 2); no FLOPs counted; a "
                                            "flash kernel needs softcap support (FlashAttention >= 2.6, "
                                            "FlexAttention), an estimate note says so; None = none")
    final_logit_softcap: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="final logit "
                                              "softcapping c on the LM head's output (Gemma 2 final_logit_softcapping):"
                                              " an eager loss keeps the tanh output for its backward, beta bytes per "
                                              "vocabulary element more (cost.memory.loss_bytes_per_token); None = none")
    sliding_window: int | None = Field(default=None, gt=0, description="keys a sliding-window layer attends "
                                       "to (tokens); None = full attention everywhere")
    full_attention_interval: int = Field(
        default=0, ge=0, description="with sliding_window: layer i uses full attention iff (i+1) % k == 0 "
        "(Gemma 2 / GPT-OSS 2, Gemma 3 6); 0 = every layer slides (Mistral v0.1)")
    local_attention: Literal["sliding", "chunked"] = Field(
        default="sliding", description="how a local layer limits its keys to sliding_window tokens: 'sliding' (the "
        "last w keys) or 'chunked' (the keys of the query's own block of w tokens: Llama 4 attention_chunk_size)")
    # Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank set = MLA
    q_lora_rank: int | None = Field(default=None, gt=0, description="MLA query latent width d_c' (None: full q)")
    kv_lora_rank: int | None = Field(default=None, gt=0, description="MLA K/V latent width d_c")
    qk_nope_head_dim: int | None = Field(default=None, gt=0, description="MLA per-head non-rotary Q/K width")
    qk_rope_head_dim: int | None = Field(default=None, gt=0, description="MLA per-head decoupled RoPE width")
    v_head_dim: int | None = Field(default=None, gt=0, description="MLA per-head value width")
    mtp_modules: int = Field(
        default=0, ge=0, description="multi-token-prediction modules (DeepSeek-V3, DeepSeek-AI 2024 Sec. 2.2, "
        "Eqs. 21-25): each one more block of the last layer's kind, a 2h x h projection and 3 RMSNorms "
        "(enorm, hnorm, the head's norm), sharing the embedding and the LM head; 0 = none, as transformers builds")
    source: str = Field(default="", description="where the shapes come from")

    @model_validator(mode="after")
    def _check(self) -> "ModelSpec":
        kv = self.n_kv_heads if self.n_kv_heads is not None else self.n_heads
        if self.n_heads % kv:
            from shardplan.errors import divisors
            legal = divisors(self.n_heads)
            raise ConfigError(
                f"n_kv_heads={kv} does not divide n_heads={self.n_heads} (grouped-query attention: each KV head serves "
                f"an equal group of query heads); legal n_kv_heads: {', '.join(map(str, legal))}",
                field="n_kv_heads", value=kv, legal=legal)
        if self.head_dim is None and self.kv_lora_rank is None and self.d_model % self.n_heads:
            raise ConfigError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}; give head_dim explicitly",
                field="head_dim", value=None)
        if self.n_experts:
            if not 1 <= self.top_k <= self.n_experts:
                raise ConfigError(
                    f"top_k={self.top_k} must be between 1 and n_experts={self.n_experts}",
                    field="top_k", value=self.top_k, legal=range(1, self.n_experts + 1))
            if self.n_dense_layers >= self.n_layers:
                raise ConfigError(
                    f"n_dense_layers={self.n_dense_layers} must be < n_layers={self.n_layers}",
                    field="n_dense_layers", value=self.n_dense_layers)
            if self.moe_layer_step > self.n_layers - self.n_dense_layers:
                raise ConfigError(f"moe_layer_step={self.moe_layer_step} leaves no MoE layer among the "
                                  f"{self.n_layers - self.n_dense_layers} after the dense ones", field="moe_layer_step",
                                  value=self.moe_layer_step, legal=range(1, self.n_layers - self.n_dense_layers + 1))
            if self.shared_expert_gate and not self.n_shared_experts:
                raise ConfigError("shared_expert_gate=True needs n_shared_experts > 0 (it gates their output)",
                                  field="shared_expert_gate", value=True, legal=[False])
        elif self.top_k or self.n_shared_experts:
            raise ConfigError("top_k / n_shared_experts need n_experts > 0", field="n_experts", value=0)
        else:
            for name, neutral in (("moe_layer_step", 1), ("router_bias", False), ("shared_expert_gate", False),
                                  ("n_dense_layers", 0), ("expert_ffn_dim", None)):
                if getattr(self, name) != neutral:
                    raise ConfigError(f"{name}={getattr(self, name)!r} needs n_experts > 0; legal for a dense "
                                      f"model: {neutral!r}", field=name, value=getattr(self, name), legal=[neutral])
        if self.full_attention_interval and self.sliding_window is None:
            raise ConfigError(f"full_attention_interval={self.full_attention_interval} needs sliding_window",
                              field="full_attention_interval", value=self.full_attention_interval, legal=[0])
        if self.local_attention == "chunked" and self.sliding_window is None:
            raise ConfigError("local_attention='chunked' needs sliding_window (the chunk length in tokens); legal "
                              "without it: 'sliding'", field="local_attention", value="chunked", legal=["sliding"])
        self._check_mla()
        if self.position == "learned" and self.max_position_embeddings == 0:
            raise ConfigError("position='learned' needs max_position_embeddings > 0",
                              field="max_position_embeddings", value=0)
        return self

    def _check_mla(self) -> None:
        mla = {"kv_lora_rank": self.kv_lora_rank, "qk_nope_head_dim": self.qk_nope_head_dim,
               "qk_rope_head_dim": self.qk_rope_head_dim, "v_head_dim": self.v_head_dim}
        given = [k for k, v in mla.items() if v is not None]
        if given and len(given) < len(mla) or (self.q_lora_rank is not None and not given):
            missing = [k for k in mla if k not in given]
            raise ConfigError(f"multi-head latent attention needs all of {', '.join(mla)}; missing "
                              f"{', '.join(missing)}", field=missing[0], value=None)
        if given and self.n_kv_heads not in (None, self.n_heads):
            raise ConfigError(f"n_kv_heads={self.n_kv_heads} must equal n_heads={self.n_heads} with MLA "
                              "(every head has its own up-projected K and V)", field="n_kv_heads",
                              value=self.n_kv_heads, legal=[self.n_heads])

    def model_copy(self, *, update: dict | None = None, deep: bool = False) -> "ModelSpec":
        """A validated copy with ``update`` applied (derived, cached values are recomputed)."""
        return ModelSpec(**{**self.model_dump(), **(update or {})})

    # ----- derived shapes (cached: the spec is frozen) -----------------------------------------
    @cached_property
    def kv_heads(self) -> int:
        """Key/value heads g (``n_kv_heads`` or ``n_heads``)."""
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @cached_property
    def is_mla(self) -> bool:
        """True for multi-head latent attention (``kv_lora_rank`` set)."""
        return self.kv_lora_rank is not None

    @cached_property
    def dim_head(self) -> int:
        """Per-head Q/K width d_h (MLA: qk_nope_head_dim + qk_rope_head_dim)."""
        if self.is_mla:
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads

    @cached_property
    def dim_head_v(self) -> int:
        """Per-head value width (MLA: v_head_dim; else d_h)."""
        return self.v_head_dim if self.is_mla else self.dim_head

    @cached_property
    def q_dim(self) -> int:
        """Query projection width q = n_heads * head_dim."""
        return self.n_heads * self.dim_head

    @cached_property
    def kv_dim(self) -> int:
        """Key projection width = n_kv_heads * head_dim (MLA: the up-projected keys, n_heads * d_h)."""
        return self.kv_heads * self.dim_head

    @cached_property
    def v_dim(self) -> int:
        """Value width = n_kv_heads * value head width (kv_dim except with MLA)."""
        return self.kv_heads * self.dim_head_v

    @cached_property
    def o_dim(self) -> int:
        """Attention output width (input of the output projection): n_heads * value head width."""
        return self.n_heads * self.dim_head_v

    def kv_heads_per_rank(self, tp: int) -> int:
        """KV heads one tensor-parallel rank holds: ``max(n_kv_heads / tp, 1)``. With tp > n_kv_heads (KV
        replication) every rank keeps one whole replicated KV head (Megatron-LM / vLLM replicate KV heads when tp
        exceeds them)."""
        return max(self.kv_heads // tp, 1)

    def kv_dim_per_rank(self, tp: int) -> int:
        """Key (or value) width one tensor-parallel rank holds: :meth:`kv_heads_per_rank` x head_dim."""
        return self.kv_heads_per_rank(tp) * self.dim_head

    def kv_ring_width_per_rank(self, tp: int) -> int:
        """K plus V elements per token one tp rank holds for the attention core -- what a context-
        parallel ring passes per token. MLA: the up-projected per-head K (d_nope + d_rope) and V
        (d_v) of the rank's n_heads / tp heads, not the latent c_KV: the ring attention kernel
        (Megatron-LM MLA over Transformer Engine's context-parallel attention) consumes ordinary
        K/V heads after ``W^UKV``."""
        return self.kv_heads_per_rank(tp) * (self.dim_head + self.dim_head_v)

    def is_sliding_layer(self, i: int) -> bool:
        """Layer ``i`` (0-based) attends within ``sliding_window`` (see ``full_attention_interval``)."""
        if self.sliding_window is None:
            return False
        k = self.full_attention_interval
        return k == 0 or (i + 1) % k != 0

    @cached_property
    def n_sliding_layers(self) -> int:
        """Layers with sliding-window attention."""
        return sum(self.is_sliding_layer(i) for i in range(self.n_layers))

    def attended_keys(self, seq_len: int, causal: bool) -> float:
        """Mean keys a query attends to, averaged over queries and layers.

        Full layer: s (bidirectional) or s/2 (causal, the convention of
        :func:`shardplan.cost.flops.attention_core_flops_fwd`). Local layers: :meth:`local_keys`.
        """
        s = float(seq_len)
        full = s / 2 if causal else s
        if self.sliding_window is None:
            return full
        n_s = self.n_sliding_layers
        return (n_s * self.local_keys(seq_len, causal) + (self.n_layers - n_s) * full) / self.n_layers

    def local_keys(self, seq_len: int, causal: bool) -> float:
        """Mean keys a query of a local layer (window or chunk w = ``sliding_window``) attends to, in the
        continuous convention that gives s/2 for a causal full layer.

        * sliding: min(w, s) bidirectional; causal, query i sees min(i, w) keys, whose mean over the s
          queries is w - w^2 / (2s) (equal to s/2 at w = s);
        * chunked (Llama 4): the s tokens fall in n = floor(s / w) whole blocks of w and one of r = s - n w;
          a query sees its block, w keys (bidirectional) or half of it on average (causal): the mean is
          (n w^2 + r^2) / s, halved when causal (s/2 at w >= s, as a full layer).

        Raises:
            ValueError: on a model without ``sliding_window``.
        """
        if self.sliding_window is None:
            raise ValueError(f"model {self.name!r} has no local attention layers (sliding_window is None)")
        s = float(seq_len)
        w = float(min(self.sliding_window, seq_len))
        if self.local_attention == "chunked":
            n = s // w
            keys = (n * w * w + (s - n * w) ** 2) / s
            return keys / 2 if causal else keys
        return (w - w * w / (2 * s)) if causal else w

    @cached_property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (n_experts > 0)."""
        return self.n_experts > 0

    def is_moe_layer(self, i: int) -> bool:
        """Layer ``i`` (0-based) has a mixture-of-experts MLP (see ``moe_layer_step``)."""
        return (self.is_moe and i >= self.n_dense_layers
                and (i - self.n_dense_layers + 1) % self.moe_layer_step == 0)

    def moe_layers_in(self, start: int, n: int) -> int:
        """MoE layers among layers ``start .. start + n - 1`` (closed form when every layer after the
        dense ones is MoE: the search calls this for every stage it prices)."""
        if not self.is_moe:
            return 0
        if self.moe_layer_step == 1:
            return max(0, start + n - max(start, self.n_dense_layers))
        return sum(self.is_moe_layer(i) for i in range(start, start + n))

    @cached_property
    def n_moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (n_layers - n_dense_layers with moe_layer_step 1)."""
        return self.moe_layers_in(0, self.n_layers)

    @cached_property
    def n_dense_mlp_layers(self) -> int:
        """Layers with a dense MLP (all layers of a dense model)."""
        return self.n_layers - self.n_moe_layers

    @cached_property
    def mlp_matrices(self) -> int:
        """phi: weight matrices per MLP (3 for SwiGLU, Shazeer 2020 Eq. 6; 2 for GeLU)."""
        return 3 if self.mlp == "swiglu" else 2

    @cached_property
    def expert_ffn(self) -> int:
        """Intermediate width of one routed expert (defaults to ``ffn_dim``)."""
        return self.expert_ffn_dim if self.expert_ffn_dim is not None else self.ffn_dim

    # ----- parameter counts (elements) ------------------------------------------------------
    def mla_up_params(self) -> int:
        """Weights of MLA's up projections in one layer (0 without MLA): the K/V up projection
        d_c*a*(d_nope + d_v) and the query's, d_c'*q with a query latent or h*q without one (DeepSeek-V2
        Eqs. 9-19; what Megatron-LM ``--recompute-modules mla_up_proj`` runs again:
        ``qkv_up_proj_and_rope_apply`` calls ``linear_q_up_proj``, or ``linear_q_proj`` on the layer
        input when there is no query latent)."""
        if not self.is_mla:
            return 0
        kv = self.kv_lora_rank * self.n_heads * (self.qk_nope_head_dim + self.v_head_dim)
        return kv + (self.q_lora_rank or self.d_model) * self.q_dim

    def attention_matmul_params(self) -> int:
        """Projection weights of one attention block (no biases, norms or sinks).

        Standard / GQA: h*q + 2*h*kv + q*h. MLA (DeepSeek-V2 Eqs. 9-19): the query h*q, or with a
        query latent d_c'*(h + q); the joint K/V down projection h*(d_c + d_rope); the K/V up
        projection d_c*a*(d_nope + d_v); the output a*d_v*h.
        """
        h = self.d_model
        if not self.is_mla:
            return h * self.q_dim + 2 * h * self.kv_dim + self.q_dim * h
        q = h * self.q_dim if self.q_lora_rank is None else self.q_lora_rank * (h + self.q_dim)
        c = self.kv_lora_rank
        kv = h * (c + self.qk_rope_head_dim) + c * self.n_heads * (self.qk_nope_head_dim + self.v_head_dim)
        return q + kv + self.o_dim * h

    def attention_params(self) -> int:
        """Parameters of one attention block: projections (+ biases, QK-norm gains, MLA latent
        norms of d_c and d_c', one sink logit per head)."""
        h, q, kv = self.d_model, self.q_dim, self.kv_dim
        n = self.attention_matmul_params()
        if self.qkv_bias or self.linear_bias:
            n += q + 2 * kv
        if self.linear_bias or self.attn_out_bias:
            n += h
        if self.qk_norm == "head":
            n += 2 * self.dim_head
        elif self.qk_norm == "full":
            n += q + kv
        if self.is_mla:
            n += self.kv_lora_rank + (self.q_lora_rank or 0)
        if self.attention_sinks:
            n += self.n_heads
        return n

    def attention_tp_replicated_params(self) -> int:
        """Attention parameters every tensor-parallel rank holds whole (part of attention_params):
        per-head QK-norm gains (shared by the heads), and with MLA the down projections and latent
        norms (h*(d_c + d_rope) + h*d_c' + d_c + d_c'; Megatron-LM ``MLASelfAttention`` builds
        ``linear_q_down_proj`` / ``linear_kv_down_proj`` duplicated over tp)."""
        n = 2 * self.dim_head if self.qk_norm == "head" else 0
        if self.is_mla:
            c, cq = self.kv_lora_rank, self.q_lora_rank or 0
            n += self.d_model * (c + self.qk_rope_head_dim + cq) + c + cq
        return n

    def mlp_params(self, width: int) -> int:
        """Parameters of one MLP of intermediate width ``width``: phi*h*width (+ biases)."""
        h = self.d_model
        n = self.mlp_matrices * h * width
        if self.linear_bias or self.mlp_bias:
            n += (self.mlp_matrices - 1) * width + h
        return n

    def norm_params(self) -> int:
        """One norm layer: h (RMSNorm) or 2h (LayerNorm gain + bias)."""
        return self.d_model * (1 if self.norm == "rmsnorm" else 2)

    def layer_norm_params(self) -> int:
        """The norms of one block: norms_per_layer * one norm."""
        return self.norms_per_layer * self.norm_params()

    def router_params(self) -> int:
        """The router of one MoE layer: h*E (+ E bias, + the h x 1 shared-expert gate)."""
        return (self.d_model * self.n_experts + (self.n_experts if self.router_bias else 0)
                + (self.d_model if self.shared_expert_gate else 0))

    def dense_layer_params(self) -> int:
        """One dense block: attention + MLP(ffn_dim) + norms."""
        return self.attention_params() + self.mlp_params(self.ffn_dim) + self.layer_norm_params()

    def routed_expert_params_per_layer(self) -> int:
        """Routed-expert weights of one MoE layer: n_experts * phi * h * expert_ffn."""
        return self.n_experts * self.mlp_params(self.expert_ffn) if self.is_moe else 0

    def moe_layer_params(self) -> int:
        """One MoE block: attention + routed experts + shared experts + router + norms."""
        if not self.is_moe:
            return 0
        shared = self.n_shared_experts * self.mlp_params(self.expert_ffn)
        return (self.attention_params() + self.routed_expert_params_per_layer() + shared
                + self.router_params() + self.layer_norm_params())

    def embedding_params(self) -> int:
        """Input embedding V*h, learned positions, the LM head V*h when untied, and its bias V with
        ``lm_head_bias`` (GPT-J, Phi-2, Phi-3.5-MoE: transformers ``lm_head`` with bias)."""
        n = self.vocab_size * (self.d_model + self.lm_head_bias)
        if self.position == "learned":
            n += self.max_position_embeddings * self.d_model
        if not self.tied_embeddings:
            n += self.vocab_size * self.d_model
        return n

    @cached_property
    def mtp_block_is_moe(self) -> bool:
        """A multi-token-prediction module's block is of the last layer's kind (MoE in DeepSeek-V3)."""
        return self.is_moe_layer(self.n_layers - 1)

    def mtp_module_params(self) -> int:
        """One multi-token-prediction module: its block + projection M (2h x h) + 3 norms."""
        block = self.moe_layer_params() if self.mtp_block_is_moe else self.dense_layer_params()
        return block + 2 * self.d_model * self.d_model + 3 * self.norm_params()

    @cached_property
    def n_params(self) -> int:
        """Total parameters: L_d*dense + L_m*moe + embeddings + final norm (+ embedding norm, + MTP)."""
        return (self.n_dense_mlp_layers * self.dense_layer_params()
                + self.n_moe_layers * self.moe_layer_params()
                + self.embedding_params() + (1 + self.embedding_norm) * self.norm_params()
                + self.mtp_modules * self.mtp_module_params())

    @cached_property
    def n_expert_params(self) -> int:
        """Parameters in routed experts (sharded over ``ep``)."""
        return self.n_moe_layers_with_mtp * self.routed_expert_params_per_layer()

    @cached_property
    def n_moe_layers_with_mtp(self) -> int:
        """MoE blocks including those of the multi-token-prediction modules."""
        return self.n_moe_layers + (self.mtp_modules if self.mtp_block_is_moe else 0)

    @cached_property
    def n_active_params(self) -> int:
        """Parameters touched per token: routed experts counted top_k/n_experts times."""
        if not self.is_moe:
            return self.n_params
        inactive = self.n_moe_layers_with_mtp * (self.n_experts - self.top_k) * self.mlp_params(self.expert_ffn)
        return self.n_params - inactive

    def largest_tensor_params(self) -> int:
        """The largest single weight tensor (elements): DeepSpeed's 'largest layer'."""
        h = self.d_model
        cands = [self.vocab_size * h, h * self.q_dim, h * self.ffn_dim]
        if self.is_moe:
            cands.append(h * self.expert_ffn)
        if self.is_mla:
            cands += [self.kv_lora_rank * self.n_heads * (self.qk_nope_head_dim + self.v_head_dim),
                      self.o_dim * h]
        return max(cands)

    def summary(self) -> dict:
        """JSON-friendly summary of the shapes and parameter counts."""
        d = self.model_dump()
        d.update(n_params=self.n_params, n_active_params=self.n_active_params,
                 head_dim=self.dim_head, n_kv_heads=self.kv_heads)
        return d
