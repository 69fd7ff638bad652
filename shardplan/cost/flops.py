"""FLOPs of a training step.

Conventions (cost_models note 10.2):

* A matmul of a ``[n, k]`` activation with a ``[k, m]`` weight costs ``2 n k m`` FLOPs forward and
  twice that backward, so training costs ``6 * tokens * matmul_params`` (Kaplan et al. 2020,
  Sec. 2.1; Narayanan et al. 2021, Sec. 5.1 / Eq. 3).
* Attention core (QK^T and AV) costs ``4 * q_dim * s`` FLOPs per token forward for a
  bidirectional mask; a causal mask halves it (Megatron-LM ``num_floating_point_operations``:
  "/2 causal mask, x2 for QK^T and AV"), giving ``6 * q_dim * s`` per token per layer for training.
* Per architecture: the attention core is ``2 a (d_qk + d_v) k`` FLOPs per token forward for
  ``k`` attended keys per query (``4 q s`` when d_qk = d_v = d_h, k = s). MLA (DeepSeek-V2,
  Sec. 2.1.2) has d_qk = d_nope + d_rope (192 in V2/V3) and d_v = 128; its projections (down,
  up, output) are the matmul parameters of
  :meth:`~shardplan.specs.model.ModelSpec.attention_matmul_params` -- training multiplies the
  up-projected K/V, no weight absorption (that is an inference trick, Sec. 2.1.2 end). A sliding
  window (Beltagy et al. 2020 Sec. 3.1: "O(n x w)"; Mistral 7B Sec. 2) bounds ``k`` by the window:
  :meth:`~shardplan.specs.model.ModelSpec.attended_keys` (causal: w - w^2/(2s) instead of s/2),
  averaged over sliding and full layers; Llama 4's chunked layers (transformers ``Llama4TextAttention``'s
  block-diagonal chunk mask) by their block: about w/2 causal (:meth:`~shardplan.specs.model.ModelSpec.local_keys`). QK-norm, attention sinks (one extra logit per head and
  query) and the router's softmax are element-wise: no matmul FLOPs.
* DeepSeek-V3's multi-token-prediction modules (Sec. 2.2) each add one block of the last layer's
  kind, the projection M (2h x h) and one more LM head per token.
* Model FLOPs exclude recomputation; hardware FLOPs include it. MFU and HFU divide them by
  ``step_time * devices * peak`` (Chowdhery et al. 2022, PaLM, Appendix B).
* Full recompute adds one forward of every transformer layer (Korthikanti et al. 2022, Sec. 5:
  hardware FLOPs ``= 4/3`` of model FLOPs without the LM head); selective recompute adds one
  forward of the attention core (Korthikanti et al. 2022, Eq. in Sec. 6.1, ``s/(3h)`` term).
"""

from __future__ import annotations

from shardplan.specs.model import ModelSpec


def layer_matmul_params(model: ModelSpec, moe: bool) -> float:
    """Weight elements one token multiplies through in one layer (active params, no norms/biases).

    Dense: h*(q + 2kv) + q*h + phi*h*F. MoE: the MLP term becomes phi*h*F_e*(top_k + shared)
    plus the router h*E (Fedus et al. 2022, Sec. 2.1).
    """
    h = model.d_model
    attn = model.attention_matmul_params()
    if moe:
        mlp = model.mlp_matrices * h * model.expert_ffn * (model.top_k + model.n_shared_experts)
        mlp += h * model.n_experts
    else:
        mlp = model.mlp_matrices * h * model.ffn_dim
    return float(attn + mlp)


def attention_core_flops_fwd(model: ModelSpec, seq_len: int, causal: bool, windowed: bool = True) -> float:
    """Forward attention-core FLOPs per token per layer (mean over layers): 2*a*(d_qk + d_v)*k with
    k the mean attended keys (s, or s/2 when causal; the window on sliding layers). ``windowed=False``
    for a kernel that computes the whole masked score matrix (naive attention): k = s or s/2."""
    a = model.n_heads
    per_key = 2.0 * a * (model.dim_head + model.dim_head_v)
    if windowed and model.sliding_window is not None:
        return per_key * model.attended_keys(seq_len, causal)
    return per_key * (seq_len / 2 if causal else seq_len)


def model_flops_per_token(model: ModelSpec, seq_len: int, causal: bool = True) -> float:
    """Training model FLOPs per token (forward + backward, no recompute).

    ``6 * (sum of layer matmul params + h*V) + 3 * L * attention_core_fwd``.
    Source: Megatron-LM ``num_floating_point_operations`` (cost_models note 6.5); with causal=False
    it equals the PaLM / Korthikanti et al. 2022 convention ``72 B s L h^2 (1 + s/6h + V/12hL)``
    for a GPT with F = 4h.
    """
    L_dense, L_moe, L = _block_counts(model)
    matmul = L_dense * layer_matmul_params(model, False) + L_moe * layer_matmul_params(model, True)
    matmul += (1 + model.mtp_modules) * model.d_model * model.vocab_size  # LM head (shared by MTP modules)
    matmul += model.mtp_modules * 2 * model.d_model * model.d_model  # MTP projection M
    return 6.0 * matmul + 3.0 * L * attention_core_flops_fwd(model, seq_len, causal)


def _block_counts(model: ModelSpec) -> tuple[int, int, int]:
    """(dense, MoE, all) transformer blocks, the multi-token-prediction modules' included."""
    mtp_moe = model.mtp_modules if model.mtp_block_is_moe else 0
    L_moe = model.n_moe_layers + mtp_moe
    L_dense = model.n_dense_mlp_layers + model.mtp_modules - mtp_moe
    return L_dense, L_moe, L_dense + L_moe


def op_sac_matmuls(model: ModelSpec, moe: bool = False) -> tuple[list[str], list[str]]:
    """The projections of one dense block (``moe=False``) or MoE block in the order an eager PyTorch block
    calls ``aten.mm`` (torchtitan ``Attention.forward``: wq, wk, wv, then wo; ``FeedForward.forward``:
    ``w2(silu(w1(x)) * w3(x))`` calls w1, w3, w2), split into (saved, recomputed) by torchtitan's
    op-level selective checkpointing policy: the 1st, 3rd, 5th, ... mm outputs are saved, every
    second one is recomputed (``torchtitan/distributed/activation_checkpoint.py``, "save output of
    all compute ops, except every second mm"). Non-gated MLP: up, down.

    An MoE block (torchtitan ``MoE.forward``) calls the router's gate mm after wo, then the routed
    experts, then the shared experts (``shared_gate``, ``shared_up``, ``shared_down``). The routed experts
    run ``torch._grouped_mm``, which is not in torchtitan's op-SAC save list (``_op_sac_save_list`` of the
    llama4 / deepseek_v3 / gpt_oss parallelize modules: mm, the SDPA kernels, reduce_scatter, all_to_all,
    max, flex_attention; its graph trainer adds ``_grouped_mm`` to that list only for a comparison), so they
    are recomputed and do not count in the alternation: they are in neither list (see
    :func:`recompute_flops_per_token`)."""
    order = ["q", "k", "v", "o"]
    if not moe:
        order += ["gate", "up", "down"] if model.mlp == "swiglu" else ["up", "down"]
    else:
        order += ["router"]
        if model.n_shared_experts:
            order += ["shared_gate", "shared_up", "shared_down"] if model.mlp == "swiglu" else ["shared_up",
                                                                                                "shared_down"]
    return order[0::2], order[1::2]


def projection_params(model: ModelSpec) -> dict[str, int]:
    """Weights of each projection of one block (MHA/GQA; no biases): q, k, v (h x width),
    o (q x h), the dense MLP's gate and up (h x F) and down (F x h); of an MoE block also the router
    (h x n_experts) and the shared experts' gate, up (h x w) and down (w x h), w = n_shared x expert_ffn."""
    h, F = model.d_model, model.ffn_dim
    w = model.n_shared_experts * model.expert_ffn
    return {"q": h * model.q_dim, "k": h * model.kv_dim, "v": h * model.v_dim, "o": model.q_dim * h,
            "gate": h * F, "up": h * F, "down": F * h, "router": h * model.n_experts,
            "shared_gate": h * w, "shared_up": h * w, "shared_down": w * h}


def remat_saved_weights(model: ModelSpec, saved: tuple[str, ...], moe: bool) -> float:
    """Weight elements per token of the matmuls whose outputs a full recompute keeps
    (``ParallelConfig.remat_saved``, MaxText's checkpoint names), so that the backward does not run them again:
    qkv_proj the Q, K, V projections (query_proj, key_proj, value_proj one of them); out_proj the output
    projection; mlpwi the MLP's input matrices (gate and up, or up alone: mlp_matrices - 1 of them) and mlpwo its
    down matrix, of the routed top_k experts (and shared
    experts) in an MoE layer (MLA: out_proj is heads x v_head_dim x h and qkv_proj the rest of the attention's
    weights, down and up projections). 'context' saves the attention core's output, no weights (its FLOPs:
    :func:`attention_core_flops_fwd`). Example, Llama 2 7B (h 4096, F 11008, SwiGLU): qkv_proj 3 x 4096^2 =
    50,331,648; mlpwi 2 x 4096 x 11008 = 90,177,536."""
    w = projection_params(model)
    h = model.d_model
    f, copies = (model.expert_ffn, model.top_k + model.n_shared_experts) if moe else (model.ffn_dim, 1)
    out = w["o"]
    if model.is_mla:  # MLA: the output projection is heads x v_head_dim -> h; Q/K/V are the rest of the attention
        out = model.n_heads * (model.v_head_dim or model.head_dim) * h
    qkv = model.attention_matmul_params() - out if model.is_mla else w["q"] + w["k"] + w["v"]
    q, k, v = mla_qkv_saved_weights(model, saved) if model.is_mla else (w["q"], w["k"], w["v"])
    parts = {"qkv_proj": qkv, "query_proj": q, "key_proj": k, "value_proj": v, "out_proj": out, "context": 0,
             "mlpwi": (model.mlp_matrices - 1) * h * f * copies, "mlpwo": f * h * copies}
    return float(sum(parts[k] for k in saved))


def mla_qkv_saved_weights(model: ModelSpec, saved: tuple[str, ...]) -> tuple[int, int, int]:
    """Weight elements per token a full recompute does not run again when it keeps MLA's query_proj / key_proj /
    value_proj (MaxText layers/attention_mla.py names the up-projected query, the key (nope part with the shared
    rope part) and the value by those names; DeepSeek-V2 Eqs. 9-19): the query keeps its whole path (down
    h x d_c' and up d_c' x a d_qk, or h x a d_qk without a query latent); the key its share of the K/V up projection
    (d_c x a d_nope) and the value its share (d_c x a d_v); the joint down projection h x (d_c + d_rope) is skipped
    only when both are kept (each needs the latent), counted with the key. DeepSeek-V3 (h 7168, d_c' 1536, d_c 512,
    a 128, d_nope 128, d_rope 64, d_v 128): query 1536 x (7168 + 24,576) = 48,758,784; key and value kept:
    512 x 16,384 + 7168 x 576 = 12,517,376 and 512 x 16,384 = 8,388,608."""
    h, c, a = model.d_model, model.kv_lora_rank, model.n_heads
    q = h * model.q_dim if model.q_lora_rank is None else model.q_lora_rank * (h + model.q_dim)
    k = c * a * model.qk_nope_head_dim
    if "key_proj" in saved and "value_proj" in saved:
        k += h * (c + model.qk_rope_head_dim)
    return q, k, c * a * model.v_head_dim


def recompute_flops_per_token(model: ModelSpec, seq_len: int, recompute: str, causal: bool = True,
                              attention: str = "flash", selective: str = "attention",
                              modules: tuple[str, ...] | None = None, saved: tuple[str, ...] = ()) -> float:
    """Extra (hardware-only) FLOPs per token spent on activation recomputation.

    full: one more forward of every layer, 2*layer_params + attention core (not the LM head);
    selective: one more forward of the attention core (``selective='attention'``, Megatron-LM) or,
    under op-level checkpointing (``'every_other_matmul'``, torchtitan), of the projections it
    recomputes in dense layers (K, O and the SwiGLU up projection, or K, O and the down projection:
    :func:`op_sac_matmuls`), 2 x their weights (:func:`projection_params`), and in MoE blocks also every
    routed expert's GEMMs (top_k x mlp_matrices x h x expert_ffn weights per token: torchtitan does not save
    grouped_mm outputs); none: 0. Megatron-LM's
    ``--recompute-modules`` (``modules``, default core_attn): core_attn the attention core of every
    layer, mlp 2 x the MLP weights of the dense layers, moe 2 x the active MLP weights (router, top_k
    and shared experts) of the MoE layers, shared_experts 2 x the shared experts', mla_up_proj 2 x the
    MLA up projections' weights of every layer (:meth:`ModelSpec.mla_up_params`; layernorm and moe_act
    recompute element-wise work: no matmul FLOPs). Full recompute with ``saved`` (``ParallelConfig.remat_saved``)
    skips the kept matmuls (:func:`remat_saved_weights`) and, with 'context', the attention core.
    A naive (non-flash) attention kernel computes the full s x s score matrix even when causal.
    """
    if recompute == "none":
        return 0.0
    core = attention_core_flops_fwd(model, seq_len, causal and attention == "flash", attention == "flash")
    L_dense, L_moe, L = _block_counts(model)
    if recompute == "selective" and selective == "every_other_matmul":
        weights = projection_params(model)
        # MoE blocks also recompute every routed expert's GEMMs (grouped_mm, not saved: op_sac_matmuls)
        routed = model.top_k * model.mlp_matrices * model.d_model * model.expert_ffn if L_moe else 0
        return (2.0 * L_dense * sum(weights[k] for k in op_sac_matmuls(model)[1])
                + 2.0 * L_moe * (sum(weights[k] for k in op_sac_matmuls(model, True)[1]) + routed))
    if recompute == "selective":
        mods = modules or ("core_attn",)
        h, attn = model.d_model, model.attention_matmul_params()
        flops = L * core if "core_attn" in mods else 0.0
        if "mlp" in mods:
            flops += 2.0 * L_dense * (layer_matmul_params(model, False) - attn)
        if "moe" in mods:
            flops += 2.0 * L_moe * (layer_matmul_params(model, True) - attn)
        elif "shared_experts" in mods:
            flops += 2.0 * L_moe * model.mlp_matrices * h * model.expert_ffn * model.n_shared_experts
        if "mla_up_proj" in mods:
            flops += 2.0 * L * model.mla_up_params()
        return flops
    matmul = L_dense * layer_matmul_params(model, False) + L_moe * layer_matmul_params(model, True)
    kept = L_dense * remat_saved_weights(model, saved, False) + L_moe * remat_saved_weights(model, saved, True)
    return 2.0 * (matmul - kept) + L * core * (0.0 if "context" in saved else 1.0)


def hardware_flops_per_token(model: ModelSpec, seq_len: int, recompute: str, causal: bool = True,
                             attention: str = "flash", selective: str = "attention",
                             modules: tuple[str, ...] | None = None) -> float:
    """Model FLOPs per token plus recomputation (HFU numerator, PaLM Appendix B); ``selective`` and
    ``modules`` as :func:`recompute_flops_per_token`."""
    return model_flops_per_token(model, seq_len, causal) + recompute_flops_per_token(
        model, seq_len, recompute, causal, attention, selective, modules)
