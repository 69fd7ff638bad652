"""Compute time of one microbatch: per layer (roofline) and per pipeline stage.

Per layer, matmuls take ``max(FLOPs / (eta_mm C), weight bytes / (eta_hbm W_hbm))`` (roofline,
Williams et al. 2009) and element-wise operations take ``HBM bytes / (eta_hbm W_hbm)``; backward
= 2 x forward (Narayanan et al. 2021 Sec. 5.1). Full recompute adds one forward of every layer,
selective recompute one forward of the attention core (Korthikanti et al. 2022 Sec. 5). The last
pipeline stage adds the LM head matmul (3 x 2 h V / tp per token) and the fp32 softmax
cross-entropy over the vocab shard.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardplan.cost import flops as F
from shardplan.cost.memory import StageParams, stage_params
from shardplan.parallel import Layout, ParallelConfig
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec


def elementwise_bytes_per_token(model: ModelSpec, training: TrainingSpec, parallel: ParallelConfig,
                                moe: bool) -> float:
    """HBM bytes moved per local token by one layer's non-matmul operations, forward.

    Counted reads + writes (beta = activation bytes, sigma = tp with SP else 1): two norms
    (read + write h: 4 beta h / sigma), two residual adds (read 2h, write h: 6 beta h / sigma),
    the MLP activation (SwiGLU reads gate and up, writes the product: 3 beta F / t; GeLU reads and
    writes F: 2 beta F / t), rotary embedding on Q and K (2 beta (q + kv) / t), dropout (read,
    write, 1-byte mask on h, twice), and for naive attention the a x s score matrix written by
    QK^T, read and written by the softmax, read by AV (4 beta a s / t, plus 2 beta + 1 per score for
    attention dropout). Same operation list as Korthikanti et al. 2022 Sec. 4.1; byte counts are
    this project's (one read per input, one write per output, no fusion beyond bias+activation).
    """
    p = parallel
    beta = training.precision.activation_bytes
    h, q, kv, a, s = model.d_model, model.q_dim, model.kv_dim, model.n_heads, training.seq_len
    t = p.tp
    sigma = t if p.sp else 1  # Layout.seq_shard (no Layout here: the search calls this per option)
    b = 10.0 * beta * h / sigma
    act = 3 if model.mlp == "swiglu" else 2
    if moe:
        b += act * beta * model.expert_ffn * (model.top_k + model.n_shared_experts) / t
        b += 4.0 * beta * model.top_k * h / t  # permute / unpermute of dispatched tokens
    else:
        b += act * beta * model.ffn_dim / t
    if model.position == "rope":
        b += 2.0 * beta * (q + kv) / t
    if training.dropout:
        b += 2 * (2 * beta + 1) * h / sigma
    if training.attention == "naive":
        b += a * s * (4 * beta + ((2 * beta + 1) if training.dropout else 0)) / t
    return b


@dataclass(frozen=True)
class LayerTimes:
    """Forward seconds of one transformer layer on one microbatch's local tokens.

    Attributes:
        fwd_mm: linear layers (roofline max of FLOP time and weight-read time).
        fwd_attn: attention core (QK^T, AV) in bf16.
        fwd_elem: element-wise operations (HBM-bound).
        hbm_bound: the linear layers are limited by reading their weights, not by FLOPs.
    """

    fwd_mm: float
    fwd_attn: float
    fwd_elem: float
    hbm_bound: bool

    @property
    def fwd(self) -> float:
        """Whole forward of the layer (seconds)."""
        return self.fwd_mm + self.fwd_attn + self.fwd_elem


def layer_times(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig,
                 tokens: float, moe: bool) -> LayerTimes:
    """Forward time of one layer on ``tokens`` local tokens (seconds), dense or MoE (``moe``).

    Roofline per operation (Williams et al. 2009): matmuls take ``max(FLOPs / (eta_mm C), weight
    bytes / (eta_hbm W_hbm))``, element-wise operations ``HBM bytes / (eta_hbm W_hbm)``
    (:func:`elementwise_bytes_per_token`), the attention core its FLOPs
    (:func:`shardplan.cost.flops.attention_core_flops_fwd`) at the bf16 matmul rate.

    Linear layers run in the policy's compute dtype (fp8 with Transformer Engine-style recipes); the
    attention core and the LM head stay in bf16 (NVIDIA Transformer Engine keeps both in 16-bit).
    """
    peak = hw.achieved_matmul_flops(training.precision.compute_dtype)
    peak_attn = hw.achieved_matmul_flops("bf16")
    hbm = hw.hbm_bandwidth * hw.hbm_efficiency
    mm_flops = 2.0 * F.layer_matmul_params(model, moe) / p.tp * tokens
    # with ep > 1 tokens are redistributed, but on average each device still computes top_k expert MLPs
    # per local token (balanced routing assumed)
    weight_bytes = training.precision.param_bytes * (
        (model.moe_layer_params() if moe else model.dense_layer_params()) / (p.tp * (p.ep if moe else 1)))
    t_mm_flops = mm_flops / peak
    t_mm_hbm = weight_bytes / hbm
    attn = F.attention_core_flops_fwd(model, training.seq_len, training.causal and training.attention == "flash")
    t_attn = attn / p.tp * tokens / peak_attn
    t_elem = elementwise_bytes_per_token(model, training, p, moe) * tokens / hbm
    return LayerTimes(max(t_mm_flops, t_mm_hbm), t_attn, t_elem, t_mm_hbm > t_mm_flops)


@dataclass(frozen=True)
class StageCompute:
    """Seconds of one microbatch's compute (forward + backward + recompute) on one pipeline stage.

    Attributes:
        stage: stage index (0 = first).
        matmul_s: linear layers and attention core, forward + backward (3 x forward).
        elementwise_s: element-wise operations, forward + backward.
        recompute_s: the forward recomputed in the backward ('full': whole layers; 'selective':
            attention core).
        params: the stage's parameters (:class:`~shardplan.cost.memory.StageParams`).
    """

    stage: int
    matmul_s: float
    elementwise_s: float
    recompute_s: float
    params: StageParams

    @property
    def total_s(self) -> float:
        """matmul + element-wise + recompute (seconds)."""
        return self.matmul_s + self.elementwise_s + self.recompute_s


def stage_compute(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout, stage: int,
                  dense_t: LayerTimes, moe_t: LayerTimes) -> StageCompute:
    """Compute seconds of one microbatch on pipeline stage ``stage`` (see module docstring).

    Args:
        dense_t, moe_t: forward times of one dense / MoE layer (:func:`layer_times`).
    """
    p = layout.parallel
    sp_ = stage_params(model, layout, stage)
    mm = elem = rec = 0.0
    for lt, cnt in ((dense_t, sp_.layers - sp_.moe_layers), (moe_t, sp_.moe_layers)):
        mm += cnt * 3 * (lt.fwd_mm + lt.fwd_attn)
        elem += cnt * 3 * lt.fwd_elem
        if p.recompute == "full":
            rec += cnt * lt.fwd
        elif p.recompute == "selective":
            rec += cnt * lt.fwd_attn
    if stage == p.pp - 1:  # LM head + cross-entropy (fp32 softmax over the vocab shard)
        u, V = layout.local_tokens, model.vocab_size
        hbm = hw.hbm_bandwidth * hw.hbm_efficiency
        mm += 3 * 2.0 * model.d_model * V / p.tp * u / hw.achieved_matmul_flops("bf16")
        elem += 2 * (training.precision.activation_bytes + 8) * V / p.tp * u / hbm
    return StageCompute(stage, mm, elem, rec, sp_)


def slowest_stage(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout,
                  dense_t: LayerTimes, moe_t: LayerTimes) -> StageCompute:
    """The stage with the longest microbatch compute among ``layout.candidate_stages`` (first,
    last, most layers): it sets the pipeline's pace (Narayanan et al. 2021 Sec. 2.2)."""
    per_stage = [stage_compute(model, training, hw, layout, st, dense_t, moe_t) for st in layout.candidate_stages]
    return max(per_stage, key=lambda c: c.total_s)
