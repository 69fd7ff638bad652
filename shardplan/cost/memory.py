"""Per-device memory of the most loaded device (bytes).

Model state follows the ZeRO paper (Rajbhandari et al. 2020, Sec. 5.1, Fig. 1): with Psi
parameters, ZeRO shard degree N_d and the precision policy's bytes per element,

* stage 0: params + grads + master + optimizer, all replicated;
* stage 1 (P_os): master + optimizer / N_d;
* stage 2 (P_os+g): grads / N_d as well;
* stage 3 (P_os+g+p): params / N_d as well, plus gather buffers for the unit being computed and
  the one being prefetched (DeepSpeed ``estimate_zero3_model_states_mem_needs``: 4 bytes x the
  largest layer = 2 fp16 buffers).

Megatron-LM's distributed optimizer shards over the dp x cp group (cost_models note 10.3), as
here. Tensor-parallel weights are split tp ways (Shoeybi et al. 2019), experts over ep x tp.

Activations generalise Korthikanti et al. 2022 (Table 2; "34 s b h + 5 a s^2 b" per layer for
GPT with F = 4h, 16-bit activations and dropout) to GQA, SwiGLU, flash attention, sequence and
context parallelism, recompute policies and pipeline schedules -- the breakdown per stored tensor
is in :func:`activation_bytes_per_token`. Pipeline in-flight microbatches per schedule follow
Narayanan et al. 2021 (Sec. 2.2: GPipe holds m, 1F1B at most p) and Korthikanti et al. 2022
(Sec. 4.2.3: interleaving multiplies the first stage by 1 + (p-1)/(p*v)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shardplan.cost.pipeline import stage_inflight
from shardplan.parallel import Layout
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec


@dataclass
class StageParams:
    """Parameter elements held by one pipeline stage, before data-parallel sharding.

    Attributes:
        dense: TP-sharded non-expert elements per device (attention, dense MLP, embeddings / tp).
        replicated: elements every tp rank keeps whole (norms, router).
        expert: routed-expert elements per device (already / (ep * tp)).
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


def stage_params(model: ModelSpec, layout: Layout, stage: int) -> StageParams:
    """Parameters on pipeline stage ``stage`` (0 = first) per device, in elements.

    The first stage holds the input embedding (and learned positions); the last holds the final
    norm and the LM head (with tied embeddings and pp > 1 a copy of the embedding, as Megatron-LM
    does). Layers are assigned in order, the first ``n_dense_layers`` being dense.
    """
    p = layout.parallel
    t = p.tp
    start = sum(layout.stage_layers[:stage])
    n = layout.stage_layers[stage]
    moe_layers = max(0, start + n - max(start, model.n_dense_layers)) if model.is_moe else 0
    dense_layers = n - moe_layers
    norms = 2 * model.norm_params()
    attn = model.attention_params()
    dense = dense_layers * (attn + model.mlp_params(model.ffn_dim)) / t
    dense += moe_layers * (attn + model.n_shared_experts * model.mlp_params(model.expert_ffn)) / t
    replicated = n * norms + moe_layers * model.d_model * model.n_experts
    expert = moe_layers * model.routed_expert_params_per_layer() / (t * p.ep)
    h, V = model.d_model, model.vocab_size
    last = stage == p.pp - 1
    if stage == 0:
        dense += V * h / t
        if model.position == "learned":
            dense += model.max_position_embeddings * h / t
    if last:
        replicated += model.norm_params()
        if not model.tied_embeddings or p.pp > 1:
            dense += V * h / t
    return StageParams(dense=dense, replicated=replicated, expert=expert, layers=n, moe_layers=moe_layers)


def activation_bytes_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout, moe: bool) -> float:
    """Bytes stored for backward per local token in one layer, no recompute.

    Per token (beta = activation bytes, t = tp, sigma = tp with sequence parallelism else 1):

    * 2 norm inputs: 2*beta*h/sigma; QKV input (norm output): beta*h/sigma;
    * Q, K, V: beta*(q + 2kv)/t; attention output (O-proj input): beta*q/t;
    * flash attention: fp32 log-sum-exp, 4*a/t (Dao et al. 2022, Alg. 2 saves m, l per row);
      naive attention: scores + softmax output + dropout output 2+2+2 bytes and a 1-byte mask per
      score when dropout is on, else softmax output only: (5 or 2)*a*s/t (Korthikanti Table 2: 5as);
    * MLP input: beta*h/sigma; MLP intermediates: SwiGLU gate, up, product 3*beta*F/t; GeLU input
      and output 2*beta*F/t (Korthikanti: 8sbh + 8sbh for F = 4h);
    * MoE: intermediates of top_k experts, 2*beta*k*h dispatch/combine buffers, 4*E router probs;
    * dropout masks: 1 byte * h/sigma after attention and after the MLP, when dropout is on.

    Check: MHA, GeLU, F = 4h, naive attention with dropout, t = 1 gives 34h + 5as (Korthikanti Eq. 1).
    """
    p = layout.parallel
    beta = training.precision.activation_bytes
    h, q, kv, a = model.d_model, model.q_dim, model.kv_dim, model.n_heads
    t = p.tp
    sigma = layout.seq_shard
    s = training.seq_len
    b = 0.0
    b += 3 * beta * h / sigma  # 2 norm inputs + QKV input
    b += beta * (q + 2 * kv) / t + beta * q / t
    if training.attention == "flash":
        b += 4.0 * a / t
    else:
        b += (5.0 if training.dropout else 2.0) * a * s / t
    b += beta * h / sigma  # MLP input
    phi_store = 3 if model.mlp == "swiglu" else 2
    if moe:
        b += beta * phi_store * model.expert_ffn * (model.top_k + model.n_shared_experts) / t
        b += 2 * beta * model.top_k * h / sigma + 4.0 * model.n_experts
    else:
        b += beta * phi_store * model.ffn_dim / t
    if training.dropout:
        b += 2.0 * h / sigma
    return b


@dataclass
class MemoryBreakdown:
    """Per-device bytes of the most loaded pipeline stage."""

    params: float = 0.0
    grads: float = 0.0
    optimizer: float = 0.0
    zero3_buffers: float = 0.0
    activations: float = 0.0
    logits: float = 0.0
    reserve: float = 0.0
    stage: int = 0
    host_offload: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def model_state(self) -> float:
        """params + grads + optimizer (bytes)."""
        return self.params + self.grads + self.optimizer

    @property
    def total(self) -> float:
        """Everything on the device, runtime reserve included (bytes)."""
        return (self.params + self.grads + self.optimizer + self.zero3_buffers + self.activations
                + self.logits + self.reserve)

    def to_dict(self) -> dict:
        """JSON-friendly breakdown in bytes (the ``memory_bytes`` object of ``estimate --json``)."""
        return {"params": self.params, "grads": self.grads, "optimizer": self.optimizer,
                "zero3_buffers": self.zero3_buffers, "activations": self.activations, "logits": self.logits,
                "runtime_reserve": self.reserve, "total": self.total, "stage": self.stage,
                "host_offload": self.host_offload}


def memory_for_stage(model: ModelSpec, training: TrainingSpec, layout: Layout, stage: int,
                     reserve: float = 0.0) -> MemoryBreakdown:
    """Memory of one device on pipeline stage ``stage`` (see module docstring for sources).

    Args:
        reserve: bytes kept back for the runtime (``HardwareSpec.hbm_bytes - usable_hbm_bytes()``).
    """
    p = layout.parallel
    prec = training.precision
    sp = stage_params(model, layout, stage)
    zs, ezs = layout.zero_shard, layout.expert_zero_shard
    z = p.zero_stage

    def sharded(stage_min: int) -> float:
        dense = sp.dense + sp.replicated
        return dense / (zs if z >= stage_min else 1) + sp.expert / (ezs if z >= stage_min else 1)

    mb = MemoryBreakdown(stage=stage, reserve=reserve)
    mb.params = prec.param_bytes * sharded(3)
    grads = prec.grad_bytes * sharded(2)
    opt = (prec.master_bytes + prec.optimizer_bytes) * sharded(1)
    if p.offload_optimizer:
        mb.host_offload = grads + opt
        mb.notes.append("master weights, gradients and optimizer state offloaded to host memory")
    else:
        mb.grads, mb.optimizer = grads, opt
    if z == 3 and p.zero3_gather == "per_step":
        # the gathered parameters of the whole stage stay resident for the step
        mb.zero3_buffers = prec.param_bytes * sp.total
    elif z == 3:
        unit = model.largest_tensor_params() if p.fsdp_unit == "tensor" else model.largest_block_params()
        mb.zero3_buffers = 2 * prec.param_bytes * unit / p.tp
    # activations
    u = layout.local_tokens
    n_layers = sp.layers
    dense_l, moe_l = n_layers - sp.moe_layers, sp.moe_layers
    per_tok = [activation_bytes_per_token(model, training, layout, False),
               activation_bytes_per_token(model, training, layout, True) if model.is_moe else 0.0]
    full_layer = per_tok[1] if moe_l else per_tok[0]
    sigma = layout.seq_shard
    beta = prec.activation_bytes
    inflight = stage_inflight(layout, stage)
    if p.recompute == "full":
        stored = n_layers * beta * model.d_model / sigma
        mb.activations = u * (stored * inflight + full_layer)
    else:
        stored = dense_l * per_tok[0] + moe_l * per_tok[1]
        if p.recompute == "selective" and training.attention == "naive":
            a_terms = (5.0 if training.dropout else 2.0) * model.n_heads * training.seq_len / p.tp
            stored -= n_layers * a_terms
        mb.activations = u * stored * inflight
    if stage == 0:
        mb.activations += u * beta * model.d_model / sigma * inflight  # embedding output
    if stage == p.pp - 1:
        # bf16 logits + fp32 copy for the softmax cross-entropy, vocab split over tp
        mb.logits = u * (beta + 4) * model.vocab_size / p.tp
    return mb


def memory_estimate(model: ModelSpec, training: TrainingSpec, layout: Layout, reserve: float = 0.0
                    ) -> MemoryBreakdown:
    """Memory of the most loaded device: the maximum over the first and last pipeline stages and,
    for uneven splits, the stage with the most layers."""
    stages = layout.candidate_stages
    return max((memory_for_stage(model, training, layout, s, reserve) for s in stages), key=lambda m: m.total)
