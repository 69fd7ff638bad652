"""Per-device memory of the most loaded device (bytes), as the caching allocator sees it.

The peak is the sum of named terms at the point of the step where it occurs (the end of the
forward pass of the in-flight microbatches on the stage, when every stored activation and the
loss of the current microbatch are alive at once), each with its source:

**Model state** follows the ZeRO paper (Rajbhandari et al. 2020, Sec. 5.1, Fig. 1): with Psi
parameters, ZeRO shard degree N_d and the precision policy's bytes per element,

* stage 0: params + grads + master + optimizer, all replicated;
* stage 1 (P_os): master + optimizer / N_d;
* stage 2 (P_os+g): grads / N_d as well;
* stage 3 (P_os+g+p): params / N_d as well, plus gather buffers for the unit being computed and
  the one being prefetched (DeepSpeed ``estimate_zero3_model_states_mem_needs``: 4 bytes x the
  largest layer = 2 fp16 buffers).

The gradient bytes are the framework's accumulation buffer when its profile names one
(``FrameworkProfile.grad_buffer_bytes``, e.g. fp32 main grads; applied by ``TrainingSpec``).
Megatron-LM's distributed optimizer shards over the dp x cp group (cost_models note 10.3), as
here; nanotron's ZeRO-1 keeps the full fp32 gradient buffer on every rank and shards the fp32
master weights and Adam moments (``optim/gradient_accumulator.py`` FP32GradientAccumulator,
``optim/zero.py``), which is ZeRO stage 1 here. Tensor-parallel weights are split tp ways
(Shoeybi et al. 2019), routed experts over ep x etp (etp = tp unless set: Megatron-LM
``--expert-tensor-parallel-size``).

**Activations** generalise Korthikanti et al. 2022 (Table 2; "34 s b h + 5 a s^2 b" per layer for
GPT with F = 4h, 16-bit activations and dropout) to GQA, SwiGLU, flash attention, sequence and
context parallelism, recompute policies and pipeline schedules -- the breakdown per stored tensor
is in :func:`activation_bytes_per_token`. Pipeline in-flight microbatches per schedule follow
Narayanan et al. 2021 (Sec. 2.2: GPipe holds m, 1F1B at most p) and Korthikanti et al. 2022
(Sec. 4.2.3: interleaving multiplies the first stage by 1 + (p-1)/(p*v)). The embedding output
is the first layer's input (counted with the layer); the last stage adds the final norm's and
the LM head's inputs and the loss (:func:`output_layer_bytes_per_token`,
:func:`loss_bytes_per_token`; Korthikanti et al. 2022 Sec. 4.3).

**Communication buffers**: with sequence parallelism a column-parallel linear all-gathers its
input and a row-parallel linear produces an un-reduced output before its reduce-scatter, both
full-sequence (Korthikanti et al. 2022 Sec. 4.2.2, Fig. 5; Megatron-LM keeps the gathered input
in a ``GlobalMemoryBuffer``, nanotron in ``parallel/utils.py`` MemoryBuffer): 2 x tokens x h x
beta, not divided by tp (:func:`sp_buffer_bytes`).

**Runtime** (framework profile): the caching allocator reserves more than it allocates
(``FrameworkProfile.allocator_overhead`` x the allocated peak: fragmentation and block rounding
of the PyTorch caching allocator, what ``torch.cuda.max_memory_reserved`` exceeds
``max_memory_allocated`` by), and the process holds memory outside the allocator
(``FrameworkProfile.context_bytes``: CUDA context, NCCL communicator buffers). The allocator also
holds a model-independent base (``FrameworkProfile.allocator_base_bytes``: cuBLAS / cuBLASLt
workspaces and the small-block pool), counted in the allocated peak. A profile that sets the
context or the fragmentation share describes the runtime itself and replaces the hardware's generic
``runtime_reserve`` (one source of truth); the neutral default profile keeps the hardware
reserve, and the allocator base alone does not replace it. :attr:`MemoryBreakdown.allocator_peak` is what the allocator reports (compare it with
``max_memory_reserved``), :attr:`MemoryBreakdown.total` the device usage that must fit in HBM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardplan.specs.framework import FrameworkProfile
from shardplan.cost.flops import op_sac_matmuls
from shardplan.cost.pipeline import stage_inflight
from shardplan.parallel import Layout, ParallelConfig, cost_greedy_split, named_remat, recomputed_layers
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PrecisionPolicy, TrainingSpec


@dataclass(frozen=True)
class StageParams:
    """Parameter elements held by one pipeline stage, before data-parallel sharding.

    Attributes:
        dense: TP-sharded non-expert elements per device (attention, dense MLP, embeddings / tp).
        replicated: elements every tp rank keeps whole (norms, router).
        expert: routed-expert elements per device (already / (ep * etp)).
        layers: transformer layers on the stage.
        moe_layers: of which MoE layers.
    """

    dense: float
    replicated: float
    expert: float
    layers: int
    moe_layers: int

    @property
    def total(self) -> float:
        """All parameter elements held per device (dense + replicated + expert)."""
        return self.dense + self.replicated + self.expert


#: stage_params results per (model identity, the layout fields it reads, stage): the search prices the
#: same stage of the same split thousands of times; the entry keeps the model so an id is never reused
_STAGE_PARAMS: dict[tuple, tuple[ModelSpec, "StageParams"]] = {}


def stage_params(model: ModelSpec, layout: Layout, stage: int) -> StageParams:
    """Parameters on pipeline stage ``stage`` per device (cached; :func:`_stage_params`)."""
    p = layout.parallel
    key = (id(model), p.tp, p.ep, p.expert_tp, p.pp, layout.stage_layers, layout.padded_vocab, stage)
    hit = _STAGE_PARAMS.get(key)
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_STAGE_PARAMS) > 200_000:
        _STAGE_PARAMS.clear()
    out = _stage_params(model, layout, stage)
    _STAGE_PARAMS[key] = (model, out)
    return out


def _stage_params(model: ModelSpec, layout: Layout, stage: int) -> StageParams:
    """Parameters on pipeline stage ``stage`` (0 = first) per device, in elements.

    The first stage holds the input embedding (and learned positions); the last holds the final
    norm and the LM head (with tied embeddings and pp > 1 a copy of the embedding, as Megatron-LM
    does), and the multi-token-prediction modules (counted in ``layers``). Layers are assigned in
    order; which are MoE is :meth:`ModelSpec.is_moe_layer`. MLA down
    projections and per-head QK-norm gains are whole on every tp rank
    (:meth:`ModelSpec.attention_tp_replicated_params`).
    """
    p = layout.parallel
    t = p.tp
    start = sum(layout.stage_layers[:stage])
    n = layout.stage_layers[stage]
    moe_layers = model.moe_layers_in(start, n)
    last = stage == p.pp - 1
    if last and model.mtp_modules:  # MTP blocks run after the last layer, on the last stage
        n += model.mtp_modules
        moe_layers += model.mtp_modules if model.mtp_block_is_moe else 0
    dense_layers = n - moe_layers
    attn_rep = model.attention_tp_replicated_params()
    attn = model.attention_params() - attn_rep
    dense = dense_layers * (attn + model.mlp_params(model.ffn_dim)) / t
    dense += moe_layers * (attn + model.n_shared_experts * model.mlp_params(model.expert_ffn)) / t
    if t > model.kv_heads and not model.is_mla:
        # KV replication (tp > n_kv_heads): each rank's K and V projections hold one whole head
        # (:meth:`ModelSpec.kv_heads_per_rank`), not n_kv_heads / tp of one (new-user pass 57b: tp 16 on 8 KV heads
        # halved them); + their biases with qkv_bias / linear_bias
        share = model.kv_heads_per_rank(t) - model.kv_heads / t
        bias = 1 if (model.qkv_bias or model.linear_bias) else 0
        dense += n * share * (model.d_model + bias) * (model.dim_head + model.dim_head_v)
    replicated = n * (model.layer_norm_params() + attn_rep) + moe_layers * model.router_params()
    expert = moe_layers * model.routed_expert_params_per_layer() / (p.expert_tp * p.ep)
    h, V_t = model.d_model, layout.vocab_per_rank(model.vocab_size)
    if last and model.mtp_modules:  # projection M over tp, enorm + hnorm + the head's norm replicated
        dense += model.mtp_modules * 2 * h * h / t
        replicated += model.mtp_modules * 3 * model.norm_params()
    if stage == 0:
        dense += V_t * h
        replicated += model.embedding_norm * model.norm_params()
        if model.position == "learned":  # whole on every tp rank: Megatron-LM's LanguageModelEmbedding builds it as a
            # plain torch.nn.Embedding(max_sequence_length, hidden_size), not vocab-parallel (breaker pass 57: / tp)
            dense += model.max_position_embeddings * h
    if last:
        replicated += model.norm_params()
        if not model.tied_embeddings or p.pp > 1:
            dense += V_t * h
        dense += V_t * model.lm_head_bias  # the LM-head bias, vocab-sharded over tp with the head
    return StageParams(dense=dense, replicated=replicated, expert=expert, layers=n, moe_layers=moe_layers)


def activation_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool) -> float:
    """Bytes stored for backward per local token in one layer, no recompute.

    Per token (beta = activation bytes, t = tp, sigma = tp with sequence parallelism else 1):

    * 2 norm inputs: 2*beta*h/sigma; QKV input (norm output): beta*h/sigma;
    * Q, K, V: beta*(q + kv + v)/t; attention output (O-proj input): beta*o/t (= q + 2kv and q
      without MLA, :func:`attention_extra_bytes_per_token` for MLA latents and QK-norm);
    * flash attention: fp32 log-sum-exp, 4*a/t (Dao et al. 2022, Alg. 2 saves m, l per row);
      naive attention: :func:`naive_score_bytes` per score, a*s/t scores (Korthikanti Table 2: 5as at
      16 bits with dropout),
      with s the mean scored keys per query (a sliding-window layer of a banded kernel stores
      min(w, s) scores per query, Beltagy et al. 2020 Sec. 3.1; full layers s, mask included);
    * MLP input: beta*h/sigma; MLP intermediates: SwiGLU gate, up, product 3*beta*F/t; GeLU input
      and output 2*beta*F/t (Korthikanti: 8sbh + 8sbh for F = 4h);
    * MoE: intermediates of top_k experts (less :func:`moe_act_input_saving`), the routed tokens
      c*beta*k*h (:func:`routed_token_bytes`: c = 1 or 2 copies, ``FrameworkProfile.moe_routed_copies``),
      4*E router probs (the routed terms x ``TrainingSpec.moe_load``: capacity factor or dropless imbalance);
    * dropout masks: 1 byte * h/sigma after attention and after the MLP, when dropout is on;
    * eager model code (``FrameworkProfile.loss == 'eager'``: the framework runs PyTorch eager
      modules, not fused kernels): an unfused SwiGLU ``act(gate) * up`` also keeps ``act(gate)``
      for the multiply's backward, beta*F/t more (nanotron ``models/llama.py`` GLUActivation;
      torchtitan ``F.silu(w1(x)) * w3(x)``; Megatron-LM's ``bias_swiglu_impl`` keeps only its input); and the
      tensors of ``FrameworkProfile.eager_saved`` (:func:`eager_saved_bytes_per_token`);
    * fp8 or NVFP4 compute (``precision.quantized``): linear-layer inputs kept in fp8
      (:func:`fp8_linear_input_saving`); NVFP4 is priced at the same 1 byte per element: Transformer
      Engine keeps a row-wise and a column-wise NVFP4 copy (its 1-D block scales run along one
      dimension), 2 x 0.5625 B.

    Check: MHA, GeLU, F = 4h, naive attention with dropout, t = 1 gives 34h + 5as (Korthikanti Eq. 1).
    """
    beta = training.precision.activation_bytes
    h, q, kv, a = model.d_model, model.q_dim, model.kv_dim, model.n_heads
    t, sigma = layout.parallel.tp, layout.seq_shard
    s = scored_keys(model, training.seq_len)
    b = 3 * beta * h / sigma  # 2 norm inputs + QKV input
    b += beta * (q + kv + model.v_dim) / t + beta * model.o_dim / t
    b += attention_extra_bytes_per_token(model, beta, t, sigma)
    if training.attention == "flash":
        b += 4.0 * a / t
    else:
        b += naive_score_bytes(training) * a * s / t
    b += beta * h / sigma  # MLP input
    phi_store = mlp_store_factor(model, training)
    if moe:  # routed intermediates and dispatch buffers scale with TrainingSpec.moe_load
        load = training.moe_load
        b += beta * phi_store * model.expert_ffn * (load * model.top_k + model.n_shared_experts) / t
        b += routed_token_bytes(model, training, layout) + 4.0 * model.n_experts
        b -= moe_act_input_saving(model, training, layout)
    else:
        b += beta * phi_store * model.ffn_dim / t
    if training.dropout:
        b += 2.0 * h / sigma
    b += eager_saved_bytes_per_token(model, training, t, sigma)
    if training.precision.quantized:
        width = model.expert_ffn * (model.top_k + model.n_shared_experts) if moe else model.ffn_dim
        b -= fp8_linear_input_saving(beta, h, model.o_dim, width, t, sigma)
        if moe:  # the router keeps the 16-bit MLP input; the expert GEMMs keep fp8 copies of theirs
            b += fp8_moe_input_correction(model, beta, sigma)
    return b


def naive_score_bytes(training: TrainingSpec) -> float:
    """Bytes a naive (unfused) attention keeps per attention score for the backward: the softmax
    output (beta = activation bytes), and with dropout also its 1-byte mask and its output (beta):
    2 beta + 1 with dropout, else beta. Source: Korthikanti et al. 2022, Sec. 4.1 (softmax output
    2as^2b, dropout mask as^2b, dropout output 2as^2b bytes at 16 bits: 5 with dropout, 2 without);
    beta generalises their 2 bytes to the activation precision (fp32 activations keep a 4-byte
    softmax output: 4 bytes per score, 9 with dropout)."""
    beta = training.precision.activation_bytes
    return 2.0 * beta + 1.0 if training.dropout else beta


def eager_saved_bytes_per_token(model: ModelSpec, training: TrainingSpec, t: int, sigma: int) -> float:
    """Bytes per local token and layer that eager model code keeps beyond the fused count of
    :func:`activation_bytes_per_token` (``FrameworkProfile.eager_saved``; beta = activation bytes, t = tp,
    sigma = tp with sequence parallelism else 1, q / kv = query / key widths):

    * 'fp32_norm_input': each of the two norms keeps its fp32 upcast, 4 B, where the count has the beta-byte
      input: 2 (4 - beta) h / sigma (transformers ``LlamaRMSNorm``: ``hidden_states.to(torch.float32)`` is what
      ``pow`` and the multiply save);
    * 'attention_output_copy': the output projection's input is a contiguous copy of the attention output
      (``transpose(1, 2).reshape``), kept beside the copy the attention kernel saves: beta q / t;
    * 'repeated_kv': K and V are repeated to every query head before the attention kernel, which saves the
      repeated copies: 2 beta (q - kv) / t more (transformers ``repeat_kv`` on its SDPA path).

    Measured (one H100, transformers 5.17 ``LlamaForCausalLM``, docs/device.md): 51.1 B per token and d_model
    element per layer for Llama-3-8B and 53.6 for Llama-3.2-1B, where the fused count with eager SwiGLU gives 42 and
    45 and the three terms add 4 + 2 + 3 = 9. Example, Llama-3-8B (h = q = 4096, kv = 1024), bf16, t = 1:
    2 x 2 x 4096 + 2 x 4096 + 2 x 2 x 3072 = 36,864 B."""
    saved = training.framework.eager_saved
    if not saved:
        return 0.0
    beta, h, q, kv = training.precision.activation_bytes, model.d_model, model.q_dim, model.kv_dim
    b = 0.0
    if "fp32_norm_input" in saved:
        b += 2 * max(0.0, 4.0 - beta) * h / sigma
    if "attention_output_copy" in saved:
        b += beta * model.o_dim / t
    if "repeated_kv" in saved:
        b += 2 * beta * max(0, q - kv) / t
    return b


def routed_token_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes per local token and MoE layer of the routed tokens kept for the backward:
    c x beta x load x top_k x h x g / sigma (beta = activation bytes, sigma = tp with sequence parallelism,
    g = etp with it, else 1: the token dispatcher gathers the dispatched tokens over the expert-tp group before
    the experts, Megatron-Core ``MoEAlltoAllTokenDispatcher`` ``gather_from_sequence_parallel_region``, and the
    first grouped GEMM keeps the gathered rows;
    load = ``TrainingSpec.moe_load``, c = ``FrameworkProfile.moe_routed_copies``: 1 when the router
    probabilities are applied inside the expert's activation and only the first expert GEMM's
    input is kept (Megatron-core's alltoall / flex dispatchers), 2 when the weighting keeps a
    second copy). Under fp8 the first grouped GEMM keeps its copy at 1 byte (Transformer Engine
    ``GroupedLinear`` saves its quantized input): (beta - 1) x load x top_k x h / sigma less.
    Example, Qwen3-30B-A3B (h 2048, top 8), tp 1, c = 1: bf16 2 x 8 x 2048 = 32,768 B; fp8 16,384 B; at tp 2
    with sequence parallelism, etp 1: 16,384 B, etp 2: 32,768 B again."""
    beta, sigma = training.precision.activation_bytes, layout.seq_shard
    gathered = layout.parallel.expert_tp if sigma > 1 else 1
    routed = training.moe_load * model.top_k * model.d_model * gathered / sigma
    fp8_saving = (beta - 1) * routed if training.precision.quantized else 0.0
    return training.framework.moe_routed_copies * beta * routed - fp8_saving


def moe_act_input_saving(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes per local token and MoE layer saved by a framework that keeps the routed experts'
    activation-function inputs at ``FrameworkProfile.moe_act_input_bytes`` = x instead of beta (the
    activation bytes): (beta - x) x n x F_e x load x top_k / t, n = 2 inputs for SwiGLU (gate, up), 1
    for GeLU (source: the profile field's, DeepSeek-V3 report Sec. 3.3.3); 0 when the field is None.
    Example, DeepSeek-V3 (F_e 2048, top 8), tp 1, bf16 activations, x = 1: 1 x 2 x 2048 x 8 = 32,768 B."""
    x = training.framework.moe_act_input_bytes
    if x is None:
        return 0.0
    n = 2 if model.mlp == "swiglu" else 1
    return (training.precision.activation_bytes - x) * n * model.expert_ffn * training.moe_load * model.top_k / \
        layout.parallel.tp


def fp8_moe_input_correction(model: ModelSpec, beta: float, sigma: int) -> float:
    """Bytes per token to add back to :func:`fp8_linear_input_saving` in a MoE layer.

    The dense count saves (beta - 1) h/sigma on the MLP input, the norm output a ``LayerNormLinear``
    keeps in fp8. In a MoE layer that tensor feeds the router, a 16-bit linear that keeps it as it is
    (Megatron-core ``moe/router.py`` gating), so that saving is undone; shared experts add a 1-byte
    fp8 copy of it for their own first GEMM (the routed experts' fp8 copies: :func:`routed_token_bytes`).
    Example, Qwen3-30B-A3B (h 2048, no shared expert), beta 2, sigma 1: 2,048 B."""
    h = model.d_model
    return (beta - 1) * h / sigma + (h / sigma if model.n_shared_experts else 0.0)


def mlp_store_factor(model: ModelSpec, training: TrainingSpec) -> int:
    """Tensors of MLP width one token stores for the backward (:func:`activation_bytes_per_token`):
    SwiGLU gate, up and product (3; eager model code also keeps ``act(gate)``: 4), GeLU input and
    output (2)."""
    if model.mlp != "swiglu":
        return 2
    return 4 if training.framework.loss == "eager" else 3


def module_saving_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool,
                            modules: tuple[str, ...]) -> float:
    """Bytes per local token one layer does not store under Megatron-LM's ``--recompute-modules``
    (megatron/core/transformer: the module's output is freed after the forward and recomputed in the
    backward, ``CheckpointWithoutOutput`` for layernorm and moe_act, ``tensor_parallel.checkpoint``
    for mlp / moe), against :func:`activation_bytes_per_token` (beta = activation bytes, t = tp,
    sigma = tp with SP, F = ffn_dim, F_e = expert width, k = top_k x the MoE load, S = shared experts):

    * layernorm: the two norm outputs, 2 beta h/sigma (under fp8 the linear layers keep their own fp8
      copies, which is what the fp8 count already stores: 0);
    * moe_act (MoE layers): the routed experts' activation output, beta k F_e/t; under fp8 the down
      projection's 1-byte fp8 copy of it, k F_e/t (Megatron-core 0.14 recomputes it too: MoE README,
      "MCore v0.14: FP8 support for Fine-grained Recomputations");
    * mlp (dense layers): the MLP's intermediates, phi beta F/t (phi = 3 SwiGLU, 2 GeLU; fp8: the
      down projection's input at 1 byte);
    * moe (MoE layers): everything inside the layer but its input: the intermediates of k routed and S
      shared experts (less :func:`moe_act_input_saving`), the routed tokens (:func:`routed_token_bytes`,
      fp8: the GEMM input copy at 1 byte) and the fp32 router probabilities;
    * shared_experts (MoE layers): the shared experts' intermediates;
    * mla_up_proj (MLA, every layer; ``multi_latent_attention.py`` ``recompute_up_proj``: the up
      projections and RoPE run under ``CheckpointWithoutOutput``, whose output, the attention kernel's
      per-head Q, K and V, is discarded after the attention forward): beta (q + k + v)/t, the Q, K, V
      term of :func:`activation_bytes_per_token` (16-bit under fp8 too: the attention core's inputs).

    Example, Qwen3-235B-A22B (h 4096, F_e 1536, top 8, no shared expert), t = 2 with SP, bf16, layernorm +
    moe_act: 2 x 2 x 4096 / 2 + 2 x 8 x 1536 / 2 = 8,192 + 12,288 = 20,480 B per token and MoE layer."""
    beta, t, sigma, h = training.precision.activation_bytes, layout.parallel.tp, layout.seq_shard, model.d_model
    fp8 = training.precision.quantized
    phi = mlp_store_factor(model, training)
    load = training.moe_load
    b = 0.0 if fp8 or "layernorm" not in modules else 2 * beta * h / sigma
    if "mla_up_proj" in modules and model.is_mla:
        b += beta * (model.q_dim + model.kv_dim + model.v_dim) / t

    def mlp_bytes(width: float) -> float:  # intermediates of an MLP of this width, fp8 down input at 1 byte
        return beta * phi * width / t - ((beta - 1) * width / t if fp8 else 0.0)
    if not moe:
        return b + (mlp_bytes(model.ffn_dim) if "mlp" in modules else 0.0)
    routed, shared = model.expert_ffn * load * model.top_k, model.expert_ffn * model.n_shared_experts
    if "moe" in modules:  # + the dispatch / combine buffers and the fp32 router probabilities
        dispatch = routed_token_bytes(model, training, layout) + 4.0 * model.n_experts
        return b + mlp_bytes(routed) + mlp_bytes(shared) + dispatch - moe_act_input_saving(model, training, layout)
    if "moe_act" in modules:
        b += (1.0 if fp8 else beta) * routed / t
    return b + (mlp_bytes(shared) if "shared_experts" in modules else 0.0)


def op_sac_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool = False) -> float:
    """Bytes per local token one dense layer keeps under op-level selective checkpointing
    (``FrameworkProfile.selective_recompute == 'every_other_matmul'``): the block input (beta
    h/sigma, the checkpoint's input), the saved matmul outputs of :func:`shardplan.cost.flops.op_sac_matmuls` (q/t, v/t,
    F/t for the gate or up projection; the down projection's output is the row-parallel partial
    sum, h wide on every rank), and the attention kernel's output (o/t) with its fp32 log-sum-exp
    (4 a/t; Dao et al. 2022 Alg. 2). Everything else (norms, RoPE, the activation function,
    the other matmuls) is recomputed. Example, Llama-3.1-8B (h 4096, q 4096, kv 1024, F 14336,
    32 heads), t = 1, bf16: 2 x (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 128 = 63,616 B
    (about 15.5 h; no recompute stores about 43 h).

    An MoE block (``moe``) saves the same attention part and, by the same alternation
    (:func:`shardplan.cost.flops.op_sac_matmuls`), the router's scores (n_experts wide) and the shared
    experts' saved projections; its routed experts' grouped_mm outputs are recomputed, not stored. With
    ep > 1 the outputs of the token dispatch and combine AllToAlls are in the save list
    (``all_to_all_single``): top_k x h each per token. Example, Qwen3-30B-A3B (h 2048, q 4096, kv 512,
    32 heads, 128 experts, top-8, no shared experts), t = 1, ep = 1: 2 x (2048 + 4096 + 512 + 128 + 4096)
    + 128 = 21,888 B."""
    p = layout.parallel
    beta, t, sigma = training.precision.activation_bytes, p.tp, layout.seq_shard
    w = model.n_shared_experts * model.expert_ffn / t
    width = {"q": model.q_dim / t, "k": model.kv_dim / t, "v": model.v_dim / t, "o": model.d_model,
             "gate": model.ffn_dim / t, "up": model.ffn_dim / t, "down": model.d_model, "router": model.n_experts,
             "shared_gate": w, "shared_up": w, "shared_down": model.d_model}
    saved, _ = op_sac_matmuls(model, moe)
    b = beta * model.d_model / sigma + beta * sum(width[k] for k in saved)
    if moe and p.ep > 1:
        b += 2.0 * beta * model.top_k * model.d_model / sigma
    return b + beta * model.o_dim / t + 4.0 * model.n_heads / t


def fp8_linear_input_saving(beta: float, h: int, q: int, width: int, t: int, sigma: int) -> float:
    """Bytes per token and layer that fp8 training saves on stored activations (can be negative).

    Transformer Engine's fp8 ``Linear`` / ``LayerNormLinear`` keep the fp8 copy of their input for
    the weight-gradient GEMM instead of the bf16 tensor (TE docs, "Using FP8 with Transformer Engine":
    the cast input is reused by the backward; LayerNormLinear saves the norm input and its fp8
    output). So the QKV input and the MLP input (norm outputs, h/sigma each) and the down-projection
    input (width/t: the SwiGLU product or the activation output) drop from beta to 1 byte, while the
    attention output keeps its beta-byte copy for flash attention's backward and gains a 1-byte fp8
    copy for the output projection (q/t). ``width``: the MLP intermediate width of one token
    (MoE: expert width x active experts)."""
    return (beta - 1) * (2 * h / sigma + width / t) - q / t


def scored_keys(model: ModelSpec, seq_len: int) -> float:
    """Mean keys per query whose scores a naive kernel stores, over layers: s on full layers (the
    masked half included), the local layers' bidirectional keys (:meth:`ModelSpec.local_keys`: min(w, s) for a
    banded sliding-window kernel, the query's whole block for chunked attention) on local layers."""
    if model.sliding_window is None:
        return float(seq_len)
    n_s = model.n_sliding_layers
    return (n_s * model.local_keys(seq_len, causal=False) + (model.n_layers - n_s) * seq_len) / model.n_layers


def attention_extra_bytes_per_token(model: ModelSpec, beta: float, t: int, sigma: int = 1) -> float:
    """Attention activations beyond Q, K, V and the output, per token per layer (bytes);
    ``sigma`` = tp with sequence parallelism, else 1.

    * QK-norm (Qwen3, Gemma 3, OLMo 2): the norms' inputs, the pre-norm Q and K, are kept for
      their backward: beta*(q + kv)/t.
    * MLA (DeepSeek-V2 Sec. 2.1.2): the down projections are replicated over tp and run on the
      rank's sequence shard (Megatron-LM ``MLASelfAttention``): the K/V latent c_KV is stored as the
      RMSNorm's input on the shard (beta*d_c/sigma) and, all-gathered over the sequence, as the up
      projection's input (beta*d_c, not divided: the gather precedes the column-parallel
      ``linear_kv_up_proj``); the query latent c_Q (q_lora_rank) as the norm's input and the
      sequence-parallel up projection's input, 2*beta*d_c'/sigma. Without SP: 2*beta*(d_c + d_c').
      The per-head K and V after the up projection (d_nope + d_rope and d_v wide, a/t heads) are the
      Q, K, V term of :func:`activation_bytes_per_token`; the decoupled RoPE key is shared by the
      heads but broadcast into K before the attention kernel, so it is stored at K width.
    """
    b = 0.0
    if model.qk_norm != "none":
        b += beta * (model.q_dim + model.kv_dim) / t
    if model.is_mla:
        c, cq = model.kv_lora_rank, model.q_lora_rank or 0
        b += beta * (c + 2 * cq) / sigma + beta * c
    return b


def loss_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes per local token of the logits and the loss on the last stage, vocab split over tp.

    Per vocab element of a token (beta = activation bytes):

    * ``'fused'`` (Megatron-LM ``vocab_parallel_cross_entropy``): the beta-byte logits and one fp32
      copy that becomes the softmax saved for backward: beta + 4;
    * ``'in_place'`` (Transformer Engine's Triton cross-entropy: the gradient overwrites the logits in
      the forward): beta;
    * ``'eager'``: PyTorch ``F.cross_entropy`` on an fp32 upcast of the logits (torchtitan
      ``components/loss.py``; transformers ``ForCausalLMLoss``). At the end of the forward the
      beta-byte logits (still held by the caller), the upcast and the saved log-softmax output are
      alive together: beta + 8. The backward is the larger peak once the caller has dropped its
      logits: ``log_softmax_backward_data`` reads the saved output and the incoming fp32 gradient of
      ``nll_loss`` and writes the fp32 input gradient, three fp32 tensors: 12. The count is the
      larger, max(beta + 8, 12) = 12 B in bf16; measured on one H100 (docs/device.md, transformers
      Llama with full recompute, where the loss sets the peak): 12.07 B per logit element.

    With final logit softcapping (``ModelSpec.final_logit_softcap``, Gemma 2) the eager count gains beta: the
    model's ``tanh`` keeps its output for the backward beside the capped logits (a fused loss caps inside its kernel).

    ``FrameworkProfile.logit_bytes`` replaces this count when the profile gives it (nanotron: the
    model returns fp32 logits, so only that input and the saved softmax live: 4 + 4 B). With
    ``FrameworkProfile.loss_chunks`` = c one chunk of the tokens has logits at a time: the count / c
    (MaxText ``num_vocab_tiling``).
    """
    beta = training.precision.activation_bytes
    fw = training.framework
    # final logit softcapping (Gemma 2): eager code runs logits / c, tanh, * c in the model dtype; tanh keeps its output
    # for the backward, beta more at either peak (transformers Gemma2ForCausalLM.forward)
    cap = beta if model.final_logit_softcap is not None else 0.0
    counts = {"eager": max(beta + 8, 12.0) + cap, "fused": beta + 4, "in_place": beta}
    per_element = fw.logit_bytes if fw.logit_bytes is not None else counts[fw.loss]
    return per_element * layout.vocab_per_rank(model.vocab_size) / fw.loss_chunks


def output_layer_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes per local token the last stage stores for the output layer besides the logits: the
    final norm's input and the LM head's input (the norm's output), 2*beta*h/sigma (Korthikanti
    et al. 2022 Sec. 4.3 counts the final layer norm and the output layer on the last stage)."""
    return 2 * training.precision.activation_bytes * model.d_model / layout.seq_shard


def sp_buffer_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Sequence-parallel communication buffers of the layer being computed (bytes): the
    all-gathered input of a column-parallel linear and the un-reduced output of a row-parallel
    linear, each ``tokens x h x beta`` over the full local sequence (not divided by tp); 0
    without sequence parallelism (sources in the module docstring)."""
    if layout.seq_shard <= 1:
        return 0.0
    return 2 * layout.local_tokens * model.d_model * training.precision.activation_bytes


@dataclass
class MemoryBreakdown:
    """Per-device bytes of the most loaded pipeline stage.

    Attributes:
        params, grads, optimizer: model state (see module docstring).
        zero3_buffers: ZeRO-3 / FSDP gather (and prefetch) buffers.
        activations: stored activations of the in-flight microbatches (and the output layer's
            inputs on the last stage).
        logits: logits and loss of the current microbatch (last stage), with the profile's
            ``lm_head_stage_bytes`` term (:func:`activation_terms`).
        comm_buffers: sequence-parallel communication buffers (:func:`sp_buffer_bytes`).
        workspace: bytes the caching allocator holds whatever the model
            (``FrameworkProfile.allocator_base_bytes``: cuBLAS / cuBLASLt workspaces, small-block segments).
        fragmentation: caching-allocator reserve above the allocated peak
            (``FrameworkProfile.allocator_overhead`` x :attr:`allocated`).
        context: memory outside the allocator (``FrameworkProfile.context_bytes``).
        reserve: the hardware's generic runtime reserve, used when the profile does not describe
            the runtime (``HardwareSpec.hbm_bytes - usable_hbm_bytes()``).
        stage: the pipeline stage.
        host_offload: bytes moved to host memory.
    """

    params: float = 0.0
    grads: float = 0.0
    optimizer: float = 0.0
    zero3_buffers: float = 0.0
    activations: float = 0.0
    logits: float = 0.0
    reserve: float = 0.0
    stage: int = 0
    host_offload: float = 0.0
    comm_buffers: float = 0.0
    fragmentation: float = 0.0
    context: float = 0.0
    workspace: float = 0.0
    optimizer_temp: float = 0.0
    lazy_grads: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def model_state(self) -> float:
        """params + grads + optimizer (bytes)."""
        return self.params + self.grads + self.optimizer

    @property
    def allocated(self) -> float:
        """Bytes of live tensors at the peak (``torch.cuda.max_memory_allocated``): every term at once, or, with
        :attr:`lazy_grads` (gradients created in the backward of the step's only microbatch and freed by
        ``zero_grad(set_to_none=True)``), the larger of the forward / backward peak without gradients and the
        optimizer step's (parameters, gradients, state and :attr:`optimizer_temp`)."""
        if self.lazy_grads:
            return max(self.forward_peak, self.step_peak)
        return (self.params + self.grads + self.optimizer + self.zero3_buffers + self.activations
                + self.logits + self.comm_buffers + self.workspace)

    @property
    def forward_peak(self) -> float:
        """Bytes alive at the forward / backward peak without gradients (:attr:`lazy_grads`)."""
        return (self.params + self.optimizer + self.zero3_buffers + self.activations + self.logits
                + self.comm_buffers + self.workspace)

    @property
    def step_peak(self) -> float:
        """Bytes alive at the optimizer step (:attr:`lazy_grads`): parameters, gradients, state, the foreach
        temporary and the allocator workspace."""
        return self.params + self.grads + self.optimizer + self.optimizer_temp + self.workspace

    @property
    def peak_phase(self) -> str:
        """What sets :attr:`allocated`: 'all terms' (every part at once), or under :attr:`lazy_grads` 'optimizer step'
        or 'forward/backward' (the gradients then absent)."""
        if not self.lazy_grads:
            return "all terms"
        return "optimizer step" if self.step_peak >= self.forward_peak else "forward/backward"

    def peak_parts(self) -> list[tuple[str, float]]:
        """(part, bytes) alive together at the allocated peak: every term, or under :attr:`lazy_grads` those of the
        phase that sets it (the others are 0)."""
        parts = [("params", self.params), ("grads", self.grads), ("optimizer", self.optimizer),
                 ("zero3_buffers", self.zero3_buffers), ("activations", self.activations), ("logits", self.logits),
                 ("comm_buffers", self.comm_buffers), ("workspace", self.workspace), ("optimizer_temp", 0.0)]
        if not self.lazy_grads:
            return parts
        step = {"params", "grads", "optimizer", "optimizer_temp", "workspace"}
        if self.step_peak >= self.forward_peak:
            return [(k, self.optimizer_temp if k == "optimizer_temp" else v) if k in step else (k, 0.0)
                    for k, v in parts]
        return [(k, 0.0) if k in ("grads", "optimizer_temp") else (k, v) for k, v in parts]

    @property
    def allocator_peak(self) -> float:
        """Bytes the caching allocator holds at the peak (``torch.cuda.max_memory_reserved``):
        allocated + fragmentation; excludes the runtime context and reserve."""
        return self.allocated + self.fragmentation

    @property
    def total(self) -> float:
        """Device usage at the peak (bytes): allocator peak + runtime context + hardware reserve.
        ``fits`` compares it with the HBM capacity."""
        return self.allocator_peak + self.context + self.reserve

    @property
    def peak_low(self) -> float:
        """Low end of :attr:`total` (bytes): no fragmentation (the allocator releases cached
        blocks and retries before it fails, so the allocated bytes are the floor)."""
        return self.allocated + self.context + self.reserve

    @property
    def peak_high(self) -> float:
        """High end of :attr:`total` (bytes): fragmentation twice its fitted value."""
        return self.allocated + 2 * self.fragmentation + self.context + self.reserve

    def add_fragmentation(self, framework: FrameworkProfile) -> None:
        """Set :attr:`fragmentation` to ``framework.allocator_overhead`` x :attr:`allocated` (bytes;
        the caching allocator's reserve above the allocated peak, fitted per framework)."""
        self.fragmentation = framework.allocator_overhead * self.allocated

    def to_dict(self) -> dict:
        """JSON-friendly breakdown in bytes (the ``memory_bytes`` object of ``estimate --json``)."""
        return {"params": self.params, "grads": self.grads, "optimizer": self.optimizer,
                "zero3_buffers": self.zero3_buffers, "activations": self.activations, "logits": self.logits,
                "comm_buffers": self.comm_buffers, "workspace": self.workspace,
                "optimizer_temp": self.optimizer_temp if self.lazy_grads else 0.0, "fragmentation": self.fragmentation,
                "runtime_context": self.context, "runtime_reserve": self.reserve,
                "allocated": self.allocated, "allocator_peak": self.allocator_peak, "total": self.total,
                "peak_low": self.peak_low, "peak_high": self.peak_high, "stage": self.stage,
                "host_offload": self.host_offload}


def dualpipe_weight_copies(layout: Layout, model: ModelSpec, stage: int) -> float:
    """Weights (and gradients) a DualPipe rank holds, in units of stage ``stage``'s own: 1 + the mirrored stage
    pp - 1 - s over this one (each rank runs stage s of the forward direction and stage pp - 1 - s of the
    reverse one: DeepSeek-V3 Sec. 3.2.1, Table 2 "2x" parameters); 1 under every other schedule."""
    p = layout.parallel
    if p.schedule != "dualpipe" or p.pp == 1:
        return 1.0
    own = stage_params(model, layout, stage).total
    mirror = stage_params(model, layout, p.pp - 1 - stage).total
    return 1.0 + mirror / own if own else 2.0


def bf16_optimizer(training: TrainingSpec, layout: Layout) -> bool:
    """Whether the job runs DeepSpeed's ``BF16_Optimizer`` (``FrameworkProfile.zero0_bf16_optimizer``): bf16 compute,
    an fp32 master copy, no optimizer offload, and either ZeRO-0 with gradients accumulated in a wider dtype than the
    bf16 weights (``grad_bytes > param_bytes``, e.g. bf16-mixed-fp32-grads) or a pipeline (pp > 1), or ZeRO-1 with
    the wider accumulation. At any dp: the engine picks the wrapper without looking at the group size (with
    dp x cp = 1 only the kept bf16 gradients differ from plain ZeRO-0).

    DeepSpeed runtime/engine.py ``_do_optimizer_sanity_check`` picks the wrapper from (model dtype, gradient
    accumulation dtype, ZeRO stage): bf16 with fp32 accumulation -> BFLOAT16 (BF16_Optimizer) without ZeRO and at
    ZeRO stage 1 (deepspeedai/DeepSpeed#2706, "BF16 optimizer for BF16+ZeRO Stage 1"), ZERO_OPTIMIZATION at stages
    2-3; bf16 with bf16 accumulation (the default once ZeRO is on, ``get_data_types``) -> BFLOAT16 without ZeRO only
    under the pipeline engine, else DDP_BFLOAT16 (FP16_Optimizer in bf16 mode: the whole fp32 master and moments on
    every rank, the plain ZeRO-0 accounting; older engines refuse it). E.g. bf16-mixed, pp=1, ZeRO-0: False;
    bf16-mixed-fp32-grads at ZeRO-0 or ZeRO-1: True; at ZeRO-2: False."""
    p, prec = layout.parallel, training.precision
    wide = prec.grad_bytes > prec.param_bytes
    stage = (p.zero_stage == 0 and (wide or p.pp > 1)) or (p.zero_stage == 1 and wide)
    return (training.framework.zero0_bf16_optimizer and stage and prec.compute_dtype == "bf16"
            and prec.master_bytes > 0 and not p.offload_optimizer)


def offloaded_shard_bytes(training: TrainingSpec) -> int:
    """Bytes per element of an offloaded parameter shard, the bytes each gather copies to the device: the fp32 master
    where the shard is the master (``FrameworkProfile.zero3_master_is_param``: FSDP's sharded fp32 parameter, cast to
    the compute dtype on the device after the copy), else the stored parameter dtype (DeepSpeed's fp16 / bf16
    partition)."""
    prec = training.precision
    return prec.master_bytes if training.framework.zero3_master_is_param and prec.master_bytes else prec.param_bytes


def optimizer_state_params(training: TrainingSpec, layout: Layout, sp: StageParams) -> float:
    """Parameters of the stage whose master weights and optimizer moments one rank holds and updates (elements):
    dense / zero_shard + expert / expert_zero_shard from ZeRO-1 on (ZeRO paper Sec. 5.1, P_os), under DeepSpeed's
    ``BF16_Optimizer`` (:func:`bf16_optimizer`) dense / (dp x cp) + expert / expert_dp (its partitions span the
    data-parallel group, the expert one for expert weights), else all of them. E.g. 7e9 dense, dp=4, ZeRO-0,
    BF16_Optimizer: 1.75e9."""
    p, dense = layout.parallel, sp.dense + sp.replicated
    if bf16_optimizer(training, layout):
        return dense / (p.dp * p.cp) + sp.expert / layout.expert_dp
    if p.zero_stage >= 1:
        return dense / layout.zero_shard + sp.expert / layout.expert_zero_shard
    return dense + sp.expert


def _model_state(mb: MemoryBreakdown, model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int) -> None:
    """Fill params, grads, optimizer, ZeRO-3 buffers and host offload of ``mb`` (ZeRO paper Sec. 5.1)."""
    p = layout.parallel
    prec = training.precision
    sp = stage_params(model, layout, stage)
    zs, ezs = layout.zero_shard, layout.expert_zero_shard
    z = p.zero_stage

    def sharded(stage_min: int) -> float:
        dense = sp.dense + sp.replicated
        return dense / (zs if z >= stage_min else 1) + sp.expert / (ezs if z >= stage_min else 1)

    # DualPipe: every rank keeps the weights of its stage and of the mirrored stage pp - 1 - s, and their
    # gradients (DeepSeek-V3 Table 2: 2x parameters); the optimizer updates each block once
    copies = dualpipe_weight_copies(layout, model, stage)
    mb.params = prec.param_bytes * sharded(3) * copies
    grads = prec.grad_bytes * sharded(2) * copies
    state_params = optimizer_state_params(training, layout, sp)
    opt = (prec.master_bytes + prec.optimizer_bytes) * state_params
    if bf16_optimizer(training, layout):
        # BF16_Optimizer: the bf16 gradients autograd writes stay allocated beside its accumulation buffer
        # (FrameworkProfile.zero0_bf16_optimizer)
        grads += prec.param_bytes * sharded(2) * copies
        mb.notes.append(f"DeepSpeed BF16_Optimizer (ZeRO-{z} with bf16): fp32 master weights and moments sharded "
                        "over dp as ZeRO-1, bf16 gradients kept beside the full-size accumulation buffer")
    fsdp_master = z == 3 and prec.master_bytes and training.framework.zero3_master_is_param
    if fsdp_master:
        # PyTorch FSDP: the fp32 shard is the parameter and the master; its gradient shard is fp32 too
        # (FrameworkProfile.zero3_master_is_param)
        mb.params, opt = prec.master_bytes * sharded(3), prec.optimizer_bytes * sharded(1)
        grads = max(prec.grad_bytes, prec.master_bytes) * sharded(2)
    _place_state(mb, p, prec, (grads, opt, state_params), sharded(1) * copies,
                 (fsdp_master, z == 3 and training.framework.zero3_master_is_param), training.framework.offload_keeps_grads)
    if (z == 2 and training.framework.zero2_accumulation == "full_buffer" and not p.offload_optimizer
            and not bf16_optimizer(training, layout)):
        # the gradients accumulate in a full-size buffer and are reduce-scattered once per step
        # (FrameworkProfile.zero2_accumulation): ZeRO-1's gradient memory, whatever the microbatch count
        mb.grads = prec.grad_bytes * (sp.dense + sp.replicated + sp.expert) * copies
        mb.notes.append(f"ZeRO-2 under the {training.framework.label} profile: the gradients accumulate in a full-size "
                        "buffer and are reduce-scattered once per step (ZeRO-1's gradient memory)")
    held = training.framework.pp_unsharded_grad_bytes
    if z == 3 and p.pp > 1 and held:
        # PyTorch pipelining + FSDP2: no reduction until the step's last backward, so the stage's gradients stay
        # unsharded in the reduce dtype for the step (FrameworkProfile.pp_unsharded_grad_bytes)
        mb.grads = held * sp.total
        mb.notes.append(f"the stage's gradients are held unsharded ({held} B per parameter) until the step's last "
                        "backward (pipelining with FSDP)")
    # a ZeRO-1/2 optimizer's contiguous gradient buckets stay on the device even when the gradients are offloaded
    mb.grads += grad_bucket_bytes(training, layout)
    if z == 3:
        _zero3_buffers(mb, model, training, layout, sp)


def _place_state(mb: MemoryBreakdown, p: ParallelConfig, prec: PrecisionPolicy, state: tuple[float, float, float],
                 partition: float, fsdp: tuple[bool, bool], keeps_grads: bool = False) -> None:
    """Put the model state where the layout keeps it: parameter shards on the host under ``offload_params``;
    gradients, master weights and moments on the host under ``offload_optimizer`` (``state`` = device gradient
    bytes, optimizer bytes, optimizer-state elements; ``partition`` = gradient elements of the rank's optimizer
    partition; ``fsdp`` = (the offloaded shard is FSDP's fp32 master, the ZeRO-3 shard is the parameter the optimizer
    updates)), the device gradient buffer kept as well where the framework keeps it (``keeps_grads``,
    ``FrameworkProfile.offload_keeps_grads``: Megatron-Core), else on the device with the foreach AdamW temporary."""
    grads, opt, state_params = state
    fsdp_master, shard_is_param = fsdp
    if offloaded := p.offload_params:  # on the host, copied in before each gather (validate sets it for FSDP's offload)
        mb.host_offload, mb.params = mb.params, 0.0
        mb.notes.append("parameter shards" + (" (the fp32 masters)" if fsdp_master else "") + " offloaded to host "
                        "memory (copied to the device before every gather)")
    if p.offload_optimizer:
        # the host optimizer steps on its own partition's gradient in the master's dtype: DeepSpeed's CPU offload
        # allocates it beside the fp32 partition from ZeRO-1 on (deepspeed/runtime/zero/stage_1_and_2.py
        # initialize_optimizer_states: single_partition_of_fp32_groups[i].grad, pinned host memory; stage3.py
        # likewise), FSDP's is the fp32 shard's gradient
        mb.host_offload += max(prec.grad_bytes, prec.master_bytes) * partition + opt
        if not prec.master_bytes and not shard_is_param:
            # without a master copy the host optimizer still updates its own copy of the partition's weights in the
            # model's dtype (DeepSpeed: single_partition_of_fp32_groups, fp32 training's 4 B), FSDP its parameter
            mb.host_offload += prec.param_bytes * state_params
        if keeps_grads:  # the host steps on a copy; the device's gradient buffer stays (Megatron-Core)
            mb.grads = grads
        mb.notes.append(("" if offloaded else "master weights, ") + "gradients and optimizer state offloaded to host memory"
                        + (" (the gradient buffer stays on the device too: the host steps on a copy)" if keeps_grads
                           else ""))
    else:
        mb.grads, mb.optimizer = grads, opt
        # torch.optim's foreach Adam(W) step holds one temporary the size of the second moment
        # (torch/optim/adamw.py _multi_tensor_adamw: exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs))
        mb.optimizer_temp = prec.optimizer_bytes / 2 * state_params


def _zero3_buffers(mb: MemoryBreakdown, model: ModelSpec, training: TrainingSpec, layout: Layout,
                   sp: StageParams) -> None:
    """Fill ``mb.zero3_buffers`` of a ZeRO-3 job: the whole stage's gathered parameters where they stay resident for
    the step (``zero3_gather='per_step'``, or pipelining under a profile with ``pp_unsharded_grad_bytes``: FSDP2 does
    not reshard before the last backward), else ``zero3_gather_buffers`` units (in use + prefetched, or one at a
    time under a memory-limited schedule) of :func:`fsdp_unit_params` each."""
    p, fw = layout.parallel, training.framework
    if p.zero3_gather == "per_step" or (fw.pp_unsharded_grad_bytes and p.pp > 1):
        mb.zero3_buffers = training.precision.param_bytes * sp.total
        return
    mb.zero3_buffers = fw.zero3_gather_buffers * zero3_gather_bytes(training) * fsdp_unit_params(model, layout)
    if fw.zero3_gather_buffers == 1:
        mb.notes.append("one ZeRO-3 unit gathered at a time (FrameworkProfile.zero3_gather_buffers 1: a memory-"
                        "limited schedule chose it, or the profile sets it): no gather prefetch, every AllGather "
                        "exposed")


def fsdp_unit_params(model: ModelSpec, layout: Layout) -> float:
    """Parameters one rank gathers for its largest ZeRO-3 / FSDP unit (elements), the size of one gather buffer.

    ``fsdp_unit='tensor'`` (DeepSpeed ZeRO-3): the largest weight tensor / tp. ``'block'`` (FSDP / FSDP2 per
    transformer block): the largest of a dense block / tp, the embedding table's rows per tp rank (padded,
    ``Layout.vocab_per_rank``) x d_model, and a MoE block's own share,
    its non-expert weights / tp plus only the rank's local routed experts, routed experts / (ep x etp). Under
    expert parallelism a rank holds E / ep experts and gathers only their shards, over the expert data-parallel
    group: PyTorch FSDP2 wraps the experts as a unit of their own on that group and leaves them out of the block's
    unit (NVIDIA-NeMo/Automodel ``components/moe/parallelizer.py`` ``apply_fsdp``: ``ignored_params`` =
    the experts, ``fully_shard(moe.experts, mesh=ep_shard_mesh)``; torchtitan ``models/llama4/infra/parallelize.py``
    ``apply_fsdp`` on ``dp_mod_ep``). Example: GPT-OSS-120B (128 experts of 3 x 2,880 x 2,880 weights per layer)
    at ep = 64 gathers 2 x 24.9 M expert weights + 26.6 M attention / norm / router weights per layer, not the
    3.2 B of the whole block."""
    p = layout.parallel
    if p.fsdp_unit == "tensor":
        return model.largest_tensor_params() / p.tp
    blocks = [model.dense_layer_params() / p.tp if model.n_dense_mlp_layers else 0.0,
              layout.vocab_per_rank(model.vocab_size) * model.d_model]
    if model.is_moe:
        routed = model.routed_expert_params_per_layer()
        blocks.append((model.moe_layer_params() - routed) / p.tp + routed / (p.ep * p.expert_tp))
    return max(blocks)


def grad_reduce_bytes(training: TrainingSpec) -> float:
    """Bytes per gradient element a data-parallel reduction moves: the framework's reduce dtype
    (``FrameworkProfile.grad_reduce_bytes``, e.g. FSDP2 ``reduce_dtype=torch.float32``: 4) where it has one, else
    the stored gradient's (``precision.grad_bytes``)."""
    return training.framework.grad_reduce_bytes or training.precision.grad_bytes


def zero3_gather_bytes(training: TrainingSpec) -> float:
    """Bytes per parameter a ZeRO-3 / FSDP AllGather moves and its gathered buffer holds: the compute
    dtype's (``precision.activation_bytes``) where the framework gathers the cast copy
    (``FrameworkProfile.zero3_gather_compute_dtype``: MaxText under GSPMD), else the stored
    parameters' (``precision.param_bytes``). Example: fp32-params, MaxText: 2; PyTorch FSDP: 4."""
    prec = training.precision
    return prec.activation_bytes if training.framework.zero3_gather_compute_dtype else prec.param_bytes


def stage_activation_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int) -> float:
    """Stored activations of pipeline stage ``stage`` at its peak (bytes): the in-flight
    microbatches' layers (:func:`~shardplan.cost.pipeline.stage_inflight`), under full recompute
    the layer inputs plus one layer recomputed in full (with ``recompute_layers`` the inputs of the recomputed
    layers, :func:`~shardplan.parallel.recomputed_layers`, and everything of the others), under selective recompute without the
    attention scores (Megatron-LM; one layer's scores stay, alive while that layer runs) or only what
    op-level checkpointing saves
    (:func:`op_sac_bytes_per_token`, torchtitan); the embedding's dropout mask on the first stage
    (1 byte x h/sigma per token, Korthikanti et al. 2022 Sec. 4.3) and the output layer's inputs on the last stage."""
    p = layout.parallel
    sp = stage_params(model, layout, stage)
    u = layout.local_tokens
    n_layers = sp.layers
    dense_l, moe_l = n_layers - sp.moe_layers, sp.moe_layers
    per_tok = layer_activation_bytes(model, training, layout)
    full_layer = per_tok[1] if moe_l else per_tok[0]
    sigma = layout.seq_shard
    beta = training.precision.activation_bytes
    inflight = stage_inflight(layout, stage)
    saved = named_remat(p, training.framework.selective_recompute)
    if saved is not None:
        # the recomputed layers keep their input (and the named outputs); the others (recompute_layers: past the
        # first N of a chunk) keep everything, the mean dense / MoE layer's bytes; one layer's recomputed rest
        # while its backward runs
        r = recomputed_layers(p, n_layers) if p.recompute == "full" else float(n_layers)
        kept = (dense_l * per_tok[0] + moe_l * per_tok[1]) / n_layers if n_layers else 0.0
        named = {moe: remat_saved_bytes_per_token(model, training, layout, moe, saved) for moe in (False, True)}
        mean_named = (dense_l * named[False] + moe_l * named[True]) / n_layers if n_layers else 0.0
        stored = r * (beta * model.d_model / sigma + mean_named) + (n_layers - r) * kept
        act = u * (stored * inflight + (full_layer - named[bool(moe_l)] if r else 0.0))
    elif p.recompute == "selective" and training.framework.selective_recompute == "every_other_matmul":
        # op-level selective checkpointing; MoE blocks recompute their routed experts (grouped_mm is not saved)
        stored = (dense_l * op_sac_bytes_per_token(model, training, layout)
                  + moe_l * op_sac_bytes_per_token(model, training, layout, True))
        act = u * stored * inflight
    else:
        stored = dense_l * per_tok[0] + moe_l * per_tok[1]
        modules = (p.recompute_modules or ("core_attn",)) if p.recompute == "selective" else ()
        a_terms = 0.0
        if "core_attn" in modules and training.attention == "naive":
            keys = scored_keys(model, training.seq_len)
            a_terms = naive_score_bytes(training) * model.n_heads * keys / p.tp
            stored -= n_layers * a_terms
        stored -= (dense_l * module_saving_per_token(model, training, layout, False, modules)
                   + moe_l * module_saving_per_token(model, training, layout, True, modules))
        # the scores not stored still exist for one layer while it runs (its forward, or its recompute)
        act = u * (stored * inflight + a_terms)
    # offloaded module inputs: on the host for every in-flight microbatch (Megatron-core reloads a layer's just
    # before its backward, so at the peak, the end of a forward, none is back)
    act -= offloaded_activation_bytes(model, training, layout) + offloaded_module_bytes(
        model, training, layout, stage) * inflight
    if stage == 0 and training.dropout:
        act += u * model.d_model / sigma * inflight  # embedding dropout mask, 1 byte per element
    if stage == p.pp - 1:
        # each MTP module also stores its two norm inputs and the concatenated projection input (4 beta h)
        mtp = model.mtp_modules * 4 * beta * model.d_model / sigma
        act += u * ((1 + model.mtp_modules) * output_layer_bytes_per_token(model, training, layout) + mtp) * inflight
    return act


def remat_saved_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool,
                                saved: tuple[str, ...] | None = None) -> float:
    """Bytes per local token one fully recomputed layer keeps besides its input for ``ParallelConfig.remat_saved``
    (MaxText's checkpoint names, layers/decoders.py get_remat_policy; each is a matmul output of the width given;
    beta = activation bytes, t = tp, sigma = the sequence shard):
    qkv_proj beta (q + k + v widths) / t (query_proj / key_proj / value_proj: their own width); context beta q / t;
    out_proj beta h / sigma; mlpwi beta (mlp_matrices - 1) F / t (an MoE layer: top_k x the expert width over etp, plus the shared experts' over t); mlpwo beta h / sigma
    (an MoE layer: top_k routed copies); ``saved`` replaces the layout's set. 0 without one. Example, Llama 2 7B at tp 1 with save_qkv_proj
    (qkv_proj): 2 B x 3 x 4,096 = 24,576 B per token, beside the 8,192 B input."""
    saved = layout.parallel.remat_saved or () if saved is None else saved
    if not saved:
        return 0.0
    beta, t, sigma, h = training.precision.activation_bytes, layout.parallel.tp, layout.seq_shard, model.d_model
    inner = model.mlp_matrices - 1
    if moe:
        etp = layout.parallel.expert_tp
        wi = inner * model.expert_ffn * (model.top_k / etp + model.n_shared_experts / t)
        wo = (model.top_k + model.n_shared_experts) * h / sigma
    else:
        wi, wo = inner * model.ffn_dim / t, h / sigma
    widths = {"qkv_proj": (model.q_dim + model.kv_dim + model.v_dim) / t, "query_proj": model.q_dim / t,
              "key_proj": model.kv_dim / t, "value_proj": model.v_dim / t, "context": model.q_dim / t,
              "out_proj": h / sigma, "mlpwi": wi, "mlpwo": wo}
    return beta * sum(widths[k] for k in saved)


def offloaded_activation_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes of one microbatch's saved activations that activation offloading keeps in host memory
    (``ParallelConfig.offload_activation_layers`` = N; validation ensures pp = 1 and no recompute): the
    stored activations of the first N layers (:func:`activation_bytes_per_token`, dense and MoE layers
    counted apart). Transformer Engine's CPU offload handler copies layer i out while layer i + 1 computes
    and brings it back while layer i + 1's backward runs, after the later layers' activations were freed, so
    at the peak (the end of the forward) none of the N layers is on the device. 0 without offloading.
    Example: Llama 3 70B, mbs 2 x seq 8192 = 16,384 tokens, N = 40, B bytes per token and layer:
    40 x 16,384 x B. Under full recompute (MaxText's ``decoder_layer_input: offload``,
    ``FrameworkProfile.activation_offload`` 'remat_inputs') the offloaded bytes are the N layer inputs, beta h / sigma
    per token each."""
    n = layout.parallel.offload_activation_layers
    if not n:
        return 0.0
    if layout.parallel.recompute == "full":  # MaxText's layer-input offload: the inputs full recompute saves
        return layout.local_tokens * n * training.precision.activation_bytes * model.d_model / layout.seq_shard
    moe_n = model.moe_layers_in(0, n)
    dense, moe = layer_activation_bytes(model, training, layout)
    return layout.local_tokens * ((n - moe_n) * dense + moe_n * moe)


def module_offload_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool) -> float:
    """Bytes per local token one layer moves to host memory under ``ParallelConfig.offload_modules`` (Megatron-core
    fine-grained activation offloading: each named module's saved input goes to the host after its forward and comes
    back before its backward; docs/source/api-guide/fine_grained_activation_offloading.md), each term one of
    :func:`activation_bytes_per_token`'s (beta = activation bytes, t = tp, sigma = the sequence shard):

    * attn_norm, mlp_norm: the norm's input, beta h/sigma;
    * qkv_linear: the QKV projection's input (the norm output), beta h/sigma, under fp8 its 1-byte copy; 0 when
      ``layernorm`` is recomputed (not stored);
    * core_attn: Q, K, V, beta (q + kv + v)/t; 0 when MLA's ``mla_up_proj`` is recomputed;
    * attn_proj: the output projection's input, beta o/t (fp8: 1 byte);
    * expert_fc1 (MoE layers): the routed tokens, :func:`routed_token_bytes`;
    * moe_act (MoE layers): the routed experts' activation input, beta n F_e load top_k / t (n = 2 for SwiGLU,
      1 for GeLU), less :func:`moe_act_input_saving`;
    * the two MoE terms are 0 when the whole MoE layer is recomputed (``moe``: nothing inside it is stored).

    Under full recompute a layer stores only its input, so nothing moves (0).

    Example, Qwen3-235B-A22B (h 4096, F_e 1536, top 8), tp 1, fp8 (beta 2), expert_fc1 + moe_act:
    1 x 8 x 4096 + 2 x 2 x 1536 x 8 = 32,768 + 49,152 = 81,920 B per token and MoE layer."""
    p = layout.parallel
    mods = p.offload_modules or () if p.recompute != "full" else ()
    recomputed = p.recompute_modules or () if p.recompute == "selective" else ()
    beta, t, sigma, h = training.precision.activation_bytes, p.tp, layout.seq_shard, model.d_model
    linear_in = 1.0 if training.precision.quantized else beta
    n_in = 2 if model.mlp == "swiglu" else 1
    act_in = (beta * n_in * model.expert_ffn * training.moe_load * model.top_k / t
              - moe_act_input_saving(model, training, layout))
    terms = {"attn_norm": beta * h / sigma, "mlp_norm": beta * h / sigma,
             "qkv_linear": 0.0 if "layernorm" in recomputed and linear_in == beta else linear_in * h / sigma,
             "core_attn": 0.0 if "mla_up_proj" in recomputed and model.is_mla
             else beta * (model.q_dim + model.kv_dim + model.v_dim) / t,
             "attn_proj": linear_in * model.o_dim / t,
             "expert_fc1": routed_token_bytes(model, training, layout) if moe and "moe" not in recomputed else 0.0,
             "moe_act": act_in if moe and "moe" not in recomputed else 0.0}
    return sum(terms[m] for m in mods)


def offloaded_module_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int) -> float:
    """Bytes of one microbatch that fine-grained offloading moves to the host on pipeline stage ``stage``:
    local tokens x its dense and MoE layers x :func:`module_offload_per_token`; 0 without ``offload_modules``."""
    if not layout.parallel.offload_modules:
        return 0.0
    sp = stage_params(model, layout, stage)
    dense_l, moe_l = sp.layers - sp.moe_layers, sp.moe_layers
    return layout.local_tokens * (dense_l * module_offload_per_token(model, training, layout, False)
                                  + moe_l * module_offload_per_token(model, training, layout, True))


def layer_activation_bytes(model: ModelSpec, training: TrainingSpec, layout: Layout) -> tuple[float, float]:
    """(dense, MoE) layer bytes per local token stored without recompute
    (:func:`activation_bytes_per_token`; the MoE entry 0 for a dense model)."""
    return (activation_bytes_per_token(model, training, layout, False),
            activation_bytes_per_token(model, training, layout, True) if model.is_moe else 0.0)


def hbm_limit(hbm_bytes: float, framework: FrameworkProfile) -> float:
    """Bytes of device usage (``MemoryBreakdown.total``) up to which a layout is predicted to fit:
    ``framework.usable_hbm_fraction`` x ``hbm_bytes`` (the HBM capacity, bytes); the whole capacity
    unless the profile says its runs fail earlier (``FrameworkProfile.usable_hbm_fraction``)."""
    return framework.usable_hbm_fraction * hbm_bytes


def runtime_owned(framework: FrameworkProfile) -> bool:
    """True when the framework profile describes the runtime's memory (context or allocator
    fragmentation): then it replaces the hardware's generic reserve."""
    return framework.context_bytes > 0 or framework.allocator_overhead > 0


def empty_breakdown(framework: FrameworkProfile, reserve: float, stage: int = 0) -> MemoryBreakdown:
    """A breakdown holding only the runtime terms: the profile's context and allocator workspace and,
    unless the profile describes the runtime (:func:`runtime_owned`), the hardware reserve ``reserve``
    (bytes)."""
    return MemoryBreakdown(stage=stage, reserve=0.0 if runtime_owned(framework) else reserve,
                           context=framework.context_bytes, workspace=framework.allocator_base_bytes)


def lazy_grads_apply(fw: FrameworkProfile, microbatches: int, p: ParallelConfig) -> bool:
    """Whether the gradients are absent from the forward (``FrameworkProfile.lazy_grads``) of layout ``p`` run as
    ``microbatches`` microbatches per step: one microbatch, no pipeline, no optimizer offload, and no DDP gradient
    buckets (PyTorch DDP keeps bucket-sized gradient buffers for the run: ZeRO-0 / 1 with dp > 1); FSDP's sharded
    gradients (ZeRO-2 / 3) and a single replica qualify."""
    return (fw.lazy_grads and microbatches == 1 and p.pp == 1 and not p.offload_optimizer
            and (p.zero_stage >= 2 or p.dp == 1))


def memory_for_stage(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int,
                     reserve: float = 0.0) -> MemoryBreakdown:
    """Memory of one device on pipeline stage ``stage`` (see module docstring for sources).

    Args:
        reserve: bytes kept back for the runtime (``HardwareSpec.hbm_bytes - usable_hbm_bytes()``);
            replaced by the profile's context and fragmentation when the profile sets either.
    """
    fw = training.framework
    own_runtime = runtime_owned(fw)
    mb = empty_breakdown(fw, reserve, stage)
    _model_state(mb, model, training, layout, stage)
    # PyTorch loops without a gradient buffer: one microbatch per step, no pipeline -> no gradients in the forward
    mb.lazy_grads = lazy_grads_apply(fw, layout.microbatches, layout.parallel) and mb.grads > 0
    mb.activations, mb.logits, mb.comm_buffers = activation_terms(model, training, layout, stage)
    offloaded = offloaded_activation_bytes(model, training, layout)
    if offloaded:
        mb.host_offload += offloaded
        mb.notes.append(f"saved activations of {layout.parallel.offload_activation_layers} layers offloaded to "
                        "host memory")
    modules = offloaded_module_bytes(model, training, layout, stage) * stage_inflight(layout, stage)
    if modules:
        mb.host_offload += modules
        mb.notes.append(f"saved inputs of {', '.join(layout.parallel.offload_modules)} offloaded to host memory")
    mb.add_fragmentation(fw)
    if own_runtime:
        mb.notes.append("runtime memory from the framework profile (context + allocator fragmentation) "
                        "replaces the hardware's generic reserve")
    return mb


def activation_terms(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int
                     ) -> tuple[float, float, float]:
    """(activations, logits, communication buffers) bytes of pipeline stage ``stage``: the terms of
    :func:`memory_for_stage` that depend on how the tokens are split (and the recompute policy),
    not on where the weights live: :func:`stage_activation_bytes`; on the last stage one set of
    logits per prediction depth (DeepSeek-V3 MTP: the main head's and each module's,
    :func:`loss_bytes_per_token`) and the profile's ``lm_head_stage_bytes`` x ``d_model`` per local
    token (once, not divided by tp); :func:`sp_buffer_bytes`. Under DualPipe a rank holds stage ``stage``
    and the mirrored stage pp - 1 - s, each with half its in-flight chunks
    (:func:`~shardplan.cost.pipeline.stage_inflight`)."""
    p = layout.parallel
    # DualPipe: a rank runs its stage and the mirrored one (pp - 1 - s), half of its p + 1 in-flight chunks each
    stages = (stage, p.pp - 1 - stage) if p.schedule == "dualpipe" and p.pp > 1 else (stage,)
    acts = sum(stage_activation_bytes(model, training, layout, s) for s in stages)
    if len(stages) == 2 and p.recompute == "full":
        # one layer is recomputed at a time on the rank: the mirrored stage's copy of that layer is not held too
        mirror = stage_params(model, layout, stages[1])
        if recomputed_layers(p, mirror.layers):
            dense, moe = layer_activation_bytes(model, training, layout)
            acts -= layout.local_tokens * (moe if mirror.moe_layers else dense)
    logits = 0.0
    if p.pp - 1 in stages:
        logits = layout.local_tokens * ((1 + model.mtp_modules) * loss_bytes_per_token(model, training, layout)
                                        + training.framework.lm_head_stage_bytes * model.d_model)
        acts -= recompute_logits_overlap(model, training, layout, logits)
    return acts, logits, sp_buffer_bytes(model, training, layout)


def grad_bucket_bytes(training: TrainingSpec, layout: Layout) -> float:
    """Bytes of the contiguous gradient buckets a ZeRO-1/2 optimizer holds through the backward, counted with the
    gradients (``MemoryBreakdown.grads``): ``FrameworkProfile.grad_bucket_elements`` in the compute dtype (DeepSpeed's
    ``ipg_buffer``), two buckets when the reduction overlaps the backward (``ParallelConfig.overlap_grad_reduce``:
    DeepSpeed ``overlap_comm``), else one; 0 for other ZeRO stages, DeepSpeed's BF16_Optimizer
    (:func:`bf16_optimizer`), or a profile without them; on the device with an offloaded optimizer too (DeepSpeed
    turns contiguous gradients on for CPU offload). Example: DeepSpeed ZeRO-2 in bf16 with overlap_comm:
    2 x 500,000,000 x 2 B = 2.0e9 B (1.86 GiB), whatever the model's size."""
    p = layout.parallel
    elements = training.framework.grad_bucket_elements
    # not under DeepSpeed's BF16_Optimizer (another optimizer class: fp32 accumulation); with the optimizer offloaded
    # too ("CPU-Offload requires contiguous gradients": contiguous_gradients = contiguous_gradients or cpu_offload,
    # stage_1_and_2.py) and with one data-parallel rank (the ZeRO optimizer is built whatever dp is)
    if elements <= 0 or p.zero_stage not in (1, 2) or bf16_optimizer(training, layout):
        return 0.0
    return elements * (2 if p.overlap_grad_reduce else 1) * training.precision.activation_bytes


def recompute_logits_overlap(model: ModelSpec, training: TrainingSpec, layout: Layout, logits: float) -> float:
    """Bytes of the last stage's full-recompute working set (one layer recomputed in full, counted by
    :func:`stage_activation_bytes`) that are never alive together with its ``logits`` bytes, so the peak counts
    only the larger of the two: the logits and the loss's saved tensors live from the end of the forward until
    the LM head's backward has run, and the first layer is recomputed only after that (the backward runs the
    output layer before any transformer layer; a layer's recompute starts its own backward, Chen et al. 2016,
    "Training Deep Nets with Sublinear Memory Cost", Sec. 3, and Korthikanti et al. 2022 Sec. 5). 0 without
    full-style recompute (:func:`shardplan.parallel.named_remat`: full, or MaxText's 'minimal'), when the last stage
    recomputes no layer, or when the profile does not say its runs order them so
    (``FrameworkProfile.recompute_after_loss``). The working set is the layer's no-recompute bytes less the named
    outputs it keeps (:func:`remat_saved_bytes_per_token`).
    Example: Llama 3.1 8B on 8 TPU v6e, 24,576 local tokens, 2 B per logit: logits 24,576 x 128,256 x 2 B =
    6.3 GB and a working set of w: min(w, 6.3 GB) comes off the activations."""
    p = layout.parallel
    saved = named_remat(p, training.framework.selective_recompute)
    if saved is None or not training.framework.recompute_after_loss:
        return 0.0
    last = stage_params(model, layout, p.pp - 1)
    if not (recomputed_layers(p, last.layers) if p.recompute == "full" else last.layers):
        return 0.0
    dense, moe = layer_activation_bytes(model, training, layout)
    rest = (moe if last.moe_layers else dense) - remat_saved_bytes_per_token(model, training, layout,
                                                                             bool(last.moe_layers), saved)
    return min(layout.local_tokens * rest, logits)


def model_state_terms(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int
                      ) -> tuple[float, float, float, float]:
    """(params, grads, optimizer, ZeRO-3 buffers) bytes of pipeline stage ``stage``: the terms of
    :func:`memory_for_stage` that depend only on where the weights live (ZeRO paper Sec. 5.1;
    offloaded gradients and optimizer state count 0 here)."""
    return model_state_and_temp(model, training, layout, stage)[:4]


def model_state_and_temp(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int
                         ) -> tuple[float, float, float, float, float]:
    """:func:`model_state_terms` and the optimizer step's foreach temporary (``MemoryBreakdown.optimizer_temp``)."""
    mb = MemoryBreakdown()
    _model_state(mb, model, training, layout, stage)
    return mb.params, mb.grads, mb.optimizer, mb.zero3_buffers, mb.optimizer_temp


def host_bytes_by_stage(model: ModelSpec, training: TrainingSpec, layout: Layout,
                        activations: bool = True) -> list[float]:
    """Bytes one device of each pipeline stage keeps in host memory (``MemoryBreakdown.host_offload``): its offloaded
    model state (parameter shards under ``offload_params``; gradients, master weights and moments under
    ``offload_optimizer``; none of it with ``nvme_offload``, where it lives on NVMe) and, with ``activations``, its
    offloaded activations (``offload_activation_layers``, ``offload_modules``; the search leaves them out: they depend
    on the microbatch). All zeros without offloading."""
    p = layout.parallel
    out = []
    for stage in range(p.pp):
        mb = MemoryBreakdown()
        if (p.offload_params or p.offload_optimizer) and not p.nvme_offload:  # NVMe-offloaded state: not in RAM
            _model_state(mb, model, training, layout, stage)
        if activations:
            mb.host_offload += offloaded_activation_bytes(model, training, layout) + offloaded_module_bytes(
                model, training, layout, stage) * stage_inflight(layout, stage)
        out.append(mb.host_offload)
    return out


def host_bytes_per_host(stage_bytes: list[float], layout: Layout, host_devices: int) -> float:
    """Bytes of host memory the busiest host holds: ranks are laid out tp, cp, dp innermost and pp outermost, so the
    ``min(n_devices, host_devices)`` consecutive ranks of one host are ``n_devices / pp`` ranks of each stage it
    holds. When a stage's ranks fill whole hosts, a host holds ``host_devices`` x that stage's bytes (the heaviest
    stage's host); when a host holds several stages (pp x ranks per stage spans fewer devices than a host), it holds
    each of them: e.g. pp = 8, one rank per stage, one 8-device host: the sum of the 8 stages, the model state once.
    ``stage_bytes``: :func:`host_bytes_by_stage`."""
    per_host = min(layout.n_devices, host_devices)
    group = layout.n_devices // len(stage_bytes)  # ranks of one stage
    if group >= per_host:
        return per_host * max(stage_bytes)
    k = -(-per_host // group)  # stages one host holds
    return max(group * sum(stage_bytes[j:j + k]) for j in range(0, len(stage_bytes), k))


def host_memory_per_host(model: ModelSpec, training: TrainingSpec, layout: Layout, host_devices: int,
                         activations: bool = True) -> float:
    """Bytes of host memory the busiest host of ``host_devices`` devices holds: :func:`host_bytes_per_host` of
    :func:`host_bytes_by_stage` (``activations`` as there). What ``Estimate.host_memory_per_host`` reports and the
    search's host-memory check (without activations) compares."""
    return host_bytes_per_host(host_bytes_by_stage(model, training, layout, activations), layout, host_devices)


def memory_estimate(model: ModelSpec, training: TrainingSpec, layout: Layout, reserve: float = 0.0
                    ) -> MemoryBreakdown:
    """Memory of the most loaded device: the maximum over the first and last pipeline stages and,
    for uneven splits, the stage with the most layers and the one with the most MoE layers
    (:meth:`~shardplan.parallel.Layout.stages_to_price`)."""
    stages = layout.stages_to_price(model)
    return max((memory_for_stage(model, training, layout, s, reserve) for s in stages), key=lambda m: m.total)


def cost_greedy_stage_layers(model: ModelSpec, pp: int) -> tuple[int, ...]:
    """nanotron's layers per pipeline rank (may contain zeros): :func:`shardplan.parallel.cost_greedy_split`,
    which a layout uses when the framework profile's ``pipeline_split`` is ``'cost_greedy'``. The grid's
    measured peak is world rank 0's (nanotron ``helpers.py`` log_throughput writes the CSV on rank 0 =
    pipeline rank 0), so that rank's layer count decides the memory comparison."""
    return cost_greedy_split(model, pp)


def fit_allocator_terms(allocated: list[float], head_basis: list[float], measured: list[float]
                        ) -> tuple[float, float, float]:
    """``(allocator_overhead, lm_head_stage_bytes, allocator_base_bytes)`` with
    ``(allocated + u * head_basis + c) * (1 + f) ~ measured`` (a reserved-memory peak), by robust least
    squares on the log ratio (scipy ``least_squares``, soft-L1 loss, scale 0.05, so the runs far off the
    line -- on the measured grid the ones near the HBM cap, where the caching allocator frees its cache and
    retries -- do not pull the fit). ``allocated`` excludes the constant ``c``; ``head_basis`` is, per
    run, the bytes one unit of ``FrameworkProfile.lm_head_stage_bytes`` adds to the measured stage (its
    local tokens x ``d_model`` when that stage holds the LM head, else 0); all lists in bytes and equally
    long. Bounds keep all three physical: f in [0, 1], u in [0, 1000], c in [0, 2 GiB].

    Raises:
        ValueError: if the lists are empty or differ in length.
    """
    if not allocated or not len(allocated) == len(head_basis) == len(measured):
        raise ValueError(f"need equally long non-empty lists, got {len(allocated)}, {len(head_basis)} and "
                         f"{len(measured)}")
    import numpy as np
    from scipy.optimize import least_squares

    a, b, y = (np.asarray(v, dtype=float) for v in (allocated, head_basis, measured))
    res = least_squares(lambda x: np.log((a + x[1] * b + x[2]) * (1 + x[0]) / y), [0.1, 10.0, 1e8],
                        loss="soft_l1", f_scale=0.05, bounds=([0.0, 0.0, 0.0], [1.0, 1000.0, 2.0 * 2**30]),
                        x_scale=[0.1, 10.0, 1e8])
    return float(res.x[0]), float(res.x[1]), float(res.x[2])
