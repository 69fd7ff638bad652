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
    position: Literal["rope", "learned", "alibi"] = "rope"
    max_position_embeddings: int = Field(default=0, ge=0, le=L.MAX_VOCAB, description="rows of a learned position table")
    # Mixture of experts
    n_experts: int = Field(default=0, ge=0, le=L.MAX_EXPERTS, description="routed experts per MoE layer (0 = dense)")
    top_k: int = Field(default=0, ge=0, le=L.MAX_EXPERTS, description="experts each token is routed to")
    expert_ffn_dim: int | None = Field(default=None, gt=0, le=L.MAX_FFN, description="intermediate width of one expert")
    n_shared_experts: int = Field(default=0, ge=0, le=L.MAX_EXPERTS)
    n_dense_layers: int = Field(default=0, ge=0, le=L.MAX_LAYERS, description="leading dense layers in an MoE model")
    source: str = Field(default="", description="where the shapes come from")

    @model_validator(mode="after")
    def _check(self) -> "ModelSpec":
        kv = self.n_kv_heads if self.n_kv_heads is not None else self.n_heads
        if self.n_heads % kv:
            raise ConfigError(
                f"n_kv_heads={kv} must divide n_heads={self.n_heads} (grouped-query attention)",
                field="n_kv_heads", value=kv)
        if self.head_dim is None and self.d_model % self.n_heads:
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
        elif self.top_k or self.n_shared_experts:
            raise ConfigError("top_k / n_shared_experts need n_experts > 0", field="n_experts", value=0)
        if self.position == "learned" and self.max_position_embeddings == 0:
            raise ConfigError("position='learned' needs max_position_embeddings > 0",
                              field="max_position_embeddings", value=0)
        return self

    def model_copy(self, *, update: dict | None = None, deep: bool = False) -> "ModelSpec":
        """A validated copy with ``update`` applied (derived, cached values are recomputed)."""
        return ModelSpec(**{**self.model_dump(), **(update or {})})

    # ----- derived shapes (cached: the spec is frozen) -----------------------------------------
    @cached_property
    def kv_heads(self) -> int:
        """Key/value heads g (``n_kv_heads`` or ``n_heads``)."""
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @cached_property
    def dim_head(self) -> int:
        """Per-head width d_h."""
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads

    @cached_property
    def q_dim(self) -> int:
        """Query projection width q = n_heads * head_dim."""
        return self.n_heads * self.dim_head

    @cached_property
    def kv_dim(self) -> int:
        """Key (or value) projection width = n_kv_heads * head_dim."""
        return self.kv_heads * self.dim_head

    def kv_dim_per_rank(self, tp: int) -> int:
        """Key (or value) width one tensor-parallel rank holds: ``max(n_kv_heads / tp, 1) x head_dim``.
        With tp > n_kv_heads (KV replication) every rank keeps one whole replicated KV head
        (Megatron-LM / vLLM replicate KV heads when tp exceeds them)."""
        return max(self.kv_heads // tp, 1) * self.dim_head

    @cached_property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (n_experts > 0)."""
        return self.n_experts > 0

    @cached_property
    def n_moe_layers(self) -> int:
        """Layers whose MLP is a mixture of experts (n_layers - n_dense_layers)."""
        return self.n_layers - self.n_dense_layers if self.is_moe else 0

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
    def attention_params(self) -> int:
        """Parameters of one attention block: h*q + 2*h*kv + q*h (+ biases)."""
        h, q, kv = self.d_model, self.q_dim, self.kv_dim
        n = h * q + 2 * h * kv + q * h
        if self.qkv_bias or self.linear_bias:
            n += q + 2 * kv
        if self.linear_bias:
            n += h
        return n

    def mlp_params(self, width: int) -> int:
        """Parameters of one MLP of intermediate width ``width``: phi*h*width (+ biases)."""
        h = self.d_model
        n = self.mlp_matrices * h * width
        if self.linear_bias:
            n += (self.mlp_matrices - 1) * width + h
        return n

    def norm_params(self) -> int:
        """One norm layer: h (RMSNorm) or 2h (LayerNorm gain + bias)."""
        return self.d_model * (1 if self.norm == "rmsnorm" else 2)

    def dense_layer_params(self) -> int:
        """One dense block: attention + MLP(ffn_dim) + 2 norms."""
        return self.attention_params() + self.mlp_params(self.ffn_dim) + 2 * self.norm_params()

    def routed_expert_params_per_layer(self) -> int:
        """Routed-expert weights of one MoE layer: n_experts * phi * h * expert_ffn."""
        return self.n_experts * self.mlp_params(self.expert_ffn) if self.is_moe else 0

    def moe_layer_params(self) -> int:
        """One MoE block: attention + routed experts + shared experts + router (h*E) + 2 norms."""
        if not self.is_moe:
            return 0
        shared = self.n_shared_experts * self.mlp_params(self.expert_ffn)
        router = self.d_model * self.n_experts
        return (self.attention_params() + self.routed_expert_params_per_layer() + shared + router
                + 2 * self.norm_params())

    def embedding_params(self) -> int:
        """Input embedding V*h, learned positions, and the LM head V*h when untied."""
        n = self.vocab_size * self.d_model
        if self.position == "learned":
            n += self.max_position_embeddings * self.d_model
        if not self.tied_embeddings:
            n += self.vocab_size * self.d_model
        return n

    @cached_property
    def n_params(self) -> int:
        """Total parameters: L_d*dense + L_m*moe + embeddings + final norm."""
        return (self.n_dense_mlp_layers * self.dense_layer_params()
                + self.n_moe_layers * self.moe_layer_params()
                + self.embedding_params() + self.norm_params())

    @cached_property
    def n_expert_params(self) -> int:
        """Parameters in routed experts (sharded over ``ep``)."""
        return self.n_moe_layers * self.routed_expert_params_per_layer()

    @cached_property
    def n_active_params(self) -> int:
        """Parameters touched per token: routed experts counted top_k/n_experts times."""
        if not self.is_moe:
            return self.n_params
        inactive = self.n_moe_layers * (self.n_experts - self.top_k) * self.mlp_params(self.expert_ffn)
        return self.n_params - inactive

    def largest_tensor_params(self) -> int:
        """The largest single weight tensor (elements): DeepSpeed's 'largest layer'."""
        h = self.d_model
        cands = [self.vocab_size * h, h * self.q_dim, h * self.ffn_dim]
        if self.is_moe:
            cands.append(h * self.expert_ffn)
        return max(cands)

    def largest_block_params(self) -> int:
        """The largest FSDP unit when wrapping per transformer block (or the embedding)."""
        blocks = [self.dense_layer_params() if self.n_dense_mlp_layers else 0, self.moe_layer_params()]
        return max(max(blocks), self.vocab_size * self.d_model)

    def summary(self) -> dict:
        """JSON-friendly summary of the shapes and parameter counts."""
        d = self.model_dump()
        d.update(n_params=self.n_params, n_active_params=self.n_active_params,
                 head_dim=self.dim_head, n_kv_heads=self.kv_heads)
        return d
