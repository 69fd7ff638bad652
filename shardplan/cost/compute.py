"""Compute time of one microbatch: per layer and per pipeline stage.

Per layer: every GEMM at its sharded shape through :func:`shardplan.cost.gemm.gemm_time` (tile and
wave quantization on the device's SMs against the large-GEMM asymptote ``matmul_efficiency``,
HBM roofline; NVIDIA "Matrix Multiplication Background User's Guide"), forward and its two
backward GEMMs (input and weight gradient; Narayanan et al. 2021 Sec. 5.1); the attention core at
the speed its kernel reaches for this head dim and sequence length (FlashAttention-2/-3 and cuDNN
benchmarks, :class:`shardplan.cost.gemm.AttentionKernel`); element-wise operations
``HBM bytes x elementwise_traffic / (eta_hbm W_hbm)``. Full recompute adds one forward of every
layer, selective recompute one forward of the attention core (Korthikanti et al. 2022 Sec. 5) or,
under op-level selective checkpointing (torchtitan), of every second matmul and every element-wise
op (:func:`every_other_mm_shares`). The
last pipeline stage adds the LM head GEMMs and the softmax cross-entropy over the vocab shard.
The framework's ``layer_overhead_s`` is charged per layer per microbatch, ``moe_expert_overhead_s`` per local
expert of every MoE layer per microbatch (``StageCompute.overhead_s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from shardplan.cost import flops as F
from shardplan.cost.gemm import (GemmDevice, GemmShape, attention_kernel, kernel_head_dim, training_gemm_parts,
                                 training_gemm_seconds)
from shardplan.cost.memory import StageParams, stage_params
from shardplan.parallel import Layout, ParallelConfig, named_remat, recompute_share, recomputed_layers
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import QUANTIZED_INPUT_BYTES, TrainingSpec


def elementwise_bytes_per_token(model: ModelSpec, training: TrainingSpec, parallel: ParallelConfig,
                                moe: bool) -> float:
    """HBM bytes moved per local token by one layer's non-matmul operations, forward.

    Counted reads + writes (beta = activation bytes, sigma = tp with SP else 1): two norms
    (read + write h: 4 beta h / sigma), two residual adds (read 2h, write h: 6 beta h / sigma),
    the MLP activation (SwiGLU reads gate and up, writes the product: 3 beta F / t; GeLU reads and
    writes F: 2 beta F / t), rotary embedding on Q and K (2 beta (q + kv) / t), dropout (read,
    write, 1-byte mask on h, twice), and for naive attention the a x s score matrix written by
    QK^T, read and written by the softmax, read by AV (4 beta a s / t, plus 2 beta + 1 per score for
    attention dropout), QK-norm on Q and K (2 beta (q + kv) / t). Same operation list as Korthikanti et al. 2022 Sec. 4.1; byte counts are
    this project's (one read per input, one write per output, no fusion beyond bias+activation).
    """
    p = parallel
    beta = training.precision.activation_bytes
    h, q, kv, a, s = model.d_model, model.q_dim, model.kv_dim, model.n_heads, training.seq_len
    t = p.tp
    sigma = t if p.sp else 1  # Layout.seq_shard (no Layout here: the search calls this per option)
    b = 10.0 * beta * h / sigma
    act = 3 if model.mlp == "swiglu" else 2
    if moe:  # routed work on the busiest rank scales with TrainingSpec.moe_load
        load = training.moe_load
        b += act * beta * model.expert_ffn * (load * model.top_k + model.n_shared_experts) / t
        b += 4.0 * beta * load * model.top_k * h / t  # permute / unpermute of dispatched tokens
    else:
        b += act * beta * model.ffn_dim / t
    if model.position == "rope":
        b += 2.0 * beta * (q + kv) / t
    if model.qk_norm != "none":  # QK-norm reads and writes Q and K
        b += 2.0 * beta * (q + kv) / t
    if training.dropout:
        b += 2 * (2 * beta + 1) * h / sigma
    if training.attention == "naive":
        b += a * s * (4 * beta + ((2 * beta + 1) if training.dropout else 0)) / t
    return b + eager_op_extra_bytes(model, training, parallel, moe)


def eager_op_extra_bytes(model: ModelSpec, training: TrainingSpec, parallel: ParallelConfig, moe: bool = False) -> float:
    """HBM bytes per local token and layer, forward, that the framework profile's ``eager_ops`` add to
    :func:`elementwise_bytes_per_token`'s fused count (0 for a profile without them; ``moe``: an MoE layer,
    whose SwiGLU runs on the routed and shared experts' widths). The backward is
    priced as twice the forward, as every element-wise byte (:class:`LayerTimes`).

    Each op as Megatron-LM's legacy model code (megatron/model/, 2023) runs it, one read per input and
    one write per output of every eager PyTorch op (beta = activation bytes, t = tp, sigma = tp with SP):

    * 'rope' (rotary_pos_embedding.py ``apply_rotary_pos_emb``: ``t * cos``, ``_rotate_half`` = negate half
      and ``torch.cat``, ``* sin``, the add, and ``torch.cat`` with the empty pass-through part): 6.5
      reads + 5.5 writes = 12 beta per element of Q and K, against the fused 2 beta: + 10 beta (q + kv) / t.
    * 'swiglu' (transformer.py ``ParallelMLP``: ``torch.chunk`` then ``F.silu(x[0]) * x[1]``): silu reads
      and writes F, the product reads 2F and writes F: 5 beta F against the fused 3 beta F: + 2 beta F / t.
    * 'rmsnorm' (rms_norm.py ``RMSNorm``: ``x.float()``, ``pow(2)``, ``mean``, ``x * rsqrt(...)``,
      ``type_as(x)``, ``* weight``): (beta + 4) + 8 + 4 + 8 + (4 + beta) + 2 beta = 28 + 4 beta bytes per
      element against the fused 2 beta, for each of the norms_per_layer norms: + n (28 + 2 beta) h / sigma.
    * 'attention_layout' (transformer.py ``ParallelAttention`` with ``--use-flash-attn``:
      ``rearrange(x, 's b ... -> b s ...').contiguous()`` of Q, K and V before the kernel and of the
      output after it): + 2 beta (2q + 2kv) / t; only with flash attention.
    * 'expert_bias' (Megatron-Core megatron/core/transformer/moe/experts.py ``TEGroupedMLP``: ``linear_fc2`` is built
      with ``skip_bias_add=True`` and its per-expert bias is added after the grouped GEMM by ``_apply_bias``, a loop
      over the local experts of ``t + b * p`` on ``torch.split`` slices, then ``torch.cat`` and ``.to(dtype)``). The
      routed probabilities ``p`` are fp32 (assumed from the code's own casts back to the activation dtype), so
      every routed copy's h-wide output goes through fp32 (4 B) intermediates. Forward: ``b * p`` writes 4; the add
      reads beta + 4, writes 4; the cat reads and writes 4; the cast reads 4, writes beta: 24 + 2 beta bytes per
      element. Backward (autograd): the cast's (read beta, write 4), the add's cast of the gradient to the input
      (read 4, write beta), the product's two gradients each an element-wise product (read 4, write 4) and a sum
      (read 4): 32 + 2 beta. Forward + backward 56 + 4 beta per element of the h-wide output of each of the
      ``load x top_k`` routed copies of a token, entered here as a third of it because the caller prices the
      backward as twice these forward bytes: + (56 + 4 beta) / 3 x load x top_k x h / t. Only in MoE layers of a
      model with expert biases (GPT-OSS, ``mlp_bias``); the fc1 bias is added inside Transformer Engine's grouped
      GEMM (``skip_bias_add=False``) and is not counted.
    """
    ops = training.framework.eager_ops
    if not ops:
        return 0.0
    p, beta = parallel, training.precision.activation_bytes
    t, sigma = p.tp, (p.tp if p.sp else 1)
    q, kv = model.q_dim, model.kv_dim
    extra = 0.0
    if "rope" in ops and model.position == "rope":
        extra += 10.0 * beta * (q + kv) / t
    if "swiglu" in ops and model.mlp == "swiglu":
        width = model.expert_ffn * (training.moe_load * model.top_k + model.n_shared_experts) if moe else model.ffn_dim
        extra += 2.0 * beta * width / t
    if "rmsnorm" in ops and model.norm == "rmsnorm":
        extra += model.norms_per_layer * (28.0 + 2.0 * beta) * model.d_model / sigma
    if "attention_layout" in ops and training.attention == "flash":
        extra += 2.0 * beta * (2 * q + 2 * kv) / t
    if "expert_bias" in ops and moe and (model.mlp_bias or model.linear_bias):
        extra += (56.0 + 4.0 * beta) / 3.0 * training.moe_load * model.top_k * model.d_model / t
    return extra


def layer_gemm_shapes(model: ModelSpec, p: ParallelConfig, tokens: float, moe: bool,
                      load: float = 1.0, row_tile: int = 0) -> list[tuple[str, GemmShape]]:
    """Forward GEMMs of one layer on ``tokens`` local tokens after tensor parallelism (Megatron
    column / row split, Shoeybi et al. 2019 Sec. 3): M = tokens (with sequence parallelism the
    input is all-gathered first, so M is the whole local sequence), N and K the sharded widths.

    QKV ``[u, h] x [h, q/t + 2 kv_r]`` (``kv_r`` = kv/t, or one whole head per rank when tp
    exceeds the KV heads and they are replicated), output ``[u, q/t] x [q/t, h]``, MLP up (gate
    and up fused for SwiGLU) ``[u, h] x [h, (phi-1) F/t]`` and down ``[u, F/t] x [F/t, h]``. MoE:
    the router ``[u, h] x [h, E]``, and per local expert (E/ep of them, balanced routing: each
    receives ``u top_k ep / E`` tokens) the same MLP pair on ``F_e / t``; shared experts as a dense
    MLP of width ``n_shared F_e``. With an expert tensor-parallel degree etp != tp the experts'
    pair is ``F_e / etp`` wide on ``u (etp / t) top_k ep / E`` tokens (same FLOPs, other shapes).
    ``row_tile`` > 0: the routed experts run as one grouped GEMM whose row tiles straddling two experts run
    twice (:func:`grouped_gemm_rows`; ``FrameworkProfile.grouped_gemm_row_tile``).
    """
    h, t, dh = model.d_model, p.tp, model.dim_head
    u = max(1, round(tokens))
    kv_r = model.kv_dim // t if model.kv_heads >= t else dh
    up = model.mlp_matrices - 1
    if model.is_mla:
        out = mla_gemm_shapes(model, t, u, t if p.sp else 1)
    else:
        out = [("qkv", GemmShape(u, model.q_dim // t + 2 * kv_r, h)), ("attn_out", GemmShape(u, h, model.q_dim // t))]
    if not moe:
        f = model.ffn_dim // t
        return out + [("mlp_up", GemmShape(u, up * f, h)), ("mlp_down", GemmShape(u, h, f))]
    # routed experts split etp ways; with etp < tp each rank dispatches its 1/tp sequence shard and an
    # expert's etp ranks gather their tokens: tokens x etp / tp per expert rank (= tokens for etp = tp)
    et = p.expert_tp
    fe, local = model.expert_ffn // et, max(1, model.n_experts // p.ep)
    # load: the busiest expert's tokens over the balanced share (TrainingSpec.moe_load)
    m_e = max(1, round(load * tokens * et / t * model.top_k * p.ep / model.n_experts))
    m_e = grouped_gemm_rows(m_e, local, row_tile)
    fe_shared = model.expert_ffn // t
    out += [("router", GemmShape(u, model.n_experts, h)), ("expert_up", GemmShape(m_e, up * fe, h, local)),
            ("expert_down", GemmShape(m_e, h, fe, local))]
    if model.n_shared_experts:
        w = model.n_shared_experts * fe_shared
        out += [("shared_up", GemmShape(u, up * w, h)), ("shared_down", GemmShape(u, h, w))]
    return out


def grouped_gemm_rows(m_e: int, groups: int, row_tile: int) -> int:
    """Rows per expert (tokens) a row-tiled grouped GEMM computes for ``m_e`` routed rows per expert over
    ``groups`` local experts with row tile ``row_tile`` (0: ``m_e``, no such kernel).

    JAX's Pallas megablox kernel (jax/experimental/pallas/ops/tpu/megablox/gmm.py ``make_group_metadata``, the
    ``gmm`` / ``tgmm`` MaxText's sparse_matmul calls: MaxText layers/moe.py ``RoutedMoE.sparse_matmul``, kernels/
    megablox/ops.py ``_gmm_bwd``) rounds each group's start down and its end up to the row tile ``tm`` and runs
    every tile of that span, so a tile two groups share runs once for each: ``tiles_m <= tiles run <= tiles_m +
    groups - 1``. Dropless routing leaves the group boundaries at arbitrary rows, so all ``groups - 1`` interior
    boundaries split a tile: ``(groups - 1) x tm`` rows more in all, ``tm (groups - 1) / groups`` per expert, in
    the forward, input-gradient and weight-gradient GEMMs alike (the same metadata; ``tm = min(row_tile,
    rows)``, MaxText ``gmm``). Example: DeepSeek-V3, 49,152 tokens x top-8 over 256 experts = 1,536 rows per
    expert, tile 512: + 512 x 255 / 256 = 510 rows, 2,046 per expert (+33%)."""
    if row_tile <= 0 or groups <= 1:
        return m_e
    tm = min(row_tile, m_e * groups)
    return m_e + round(tm * (groups - 1) / groups)


def mla_gemm_shapes(model: ModelSpec, t: int, u: int, sigma: int = 1) -> list[tuple[str, GemmShape]]:
    """Forward GEMMs of multi-head latent attention (DeepSeek-V2 Sec. 2.1.2) on ``u`` tokens: the
    down projections ``[u/sigma, h] x [h, d_c + d_rope]`` (and ``[h, d_c']`` for the query latent)
    are replicated over tp and run on the rank's sequence shard (sigma = tp with sequence
    parallelism; Megatron-LM ``MLASelfAttention`` gathers the latent afterwards), the up projections
    are column-parallel (``[u, d_c] x [d_c, a (d_nope + d_v) / t]``, query ``[u, d_c' or h] x
    [., a d_qk / t]``), the output row-parallel ``[u, a d_v / t] x [., h]``."""
    h, a_t = model.d_model, max(model.n_heads // t, 1)
    c, q_in = model.kv_lora_rank, model.q_lora_rank or h
    shard = max(1, round(u / sigma))
    out = [("kv_down", GemmShape(shard, c + model.qk_rope_head_dim, h)),
           ("kv_up", GemmShape(u, a_t * (model.qk_nope_head_dim + model.v_head_dim), c)),
           ("q_up" if model.q_lora_rank else "q", GemmShape(u, a_t * model.dim_head, q_in)),
           ("attn_out", GemmShape(u, h, a_t * model.v_head_dim))]
    if model.q_lora_rank:
        out.insert(0, ("q_down", GemmShape(shard, model.q_lora_rank, h)))
    return out


def unquantized_dtype(training: TrainingSpec) -> str:
    """The dtype of the matmuls an fp8 recipe keeps in 16 bits (attention core, LM head): 'bf16', 'fp16' under an
    fp16 policy, or 'fp32' when the whole model computes in fp32 (the ``fp32`` precision policy)."""
    dtype = training.precision.compute_dtype
    return dtype if dtype in ("fp32", "fp16") else "bf16"


def gemm_device(hw: HardwareSpec, training: TrainingSpec, dtype: str) -> GemmDevice:
    """The GEMM view of ``hw`` in ``dtype`` (:meth:`shardplan.cost.gemm.GemmDevice.of`) under the training's
    framework: on a GPU (``HardwareSpec.kind`` 'gpu') with a known isolated-GEMM rate
    (``HardwareSpec.isolated_matmul_efficiency``) the large-GEMM rate times the profile's ``gpu_matmul_scale``,
    at most isolated / ``matmul_efficiency`` (a program cannot beat the tuned isolated GEMM), elsewhere unchanged
    (A100: its asymptote, fitted on Megatron-LM, has no published isolated rate beside it). Why per framework: the
    GPU presets' asymptotes are fitted end to end on programs whose element-wise work the fused count prices at its
    lower bound (llm-foundry, Megatron-LM, ``HardwareSpec.matmul_efficiency``'s source), so they sit below an
    isolated cuBLAS GEMM's rate; a compiled XLA program (MaxText) is priced closer to it, and eager PyTorch model
    code, whose element-wise time its own profile counts (measured on one H100: docs/device.md), at it
    (``FrameworkProfile.gpu_matmul_scale``'s sources). The TPU presets are fitted on MaxText runs themselves. Not on
    AMD GPUs (CDNA): the scales were fitted or measured on NVIDIA H100s, the AMD presets' isolated rate is AMD's
    tuned Max-Achievable FLOPs, and PyTorch programs on MI300X are already over-predicted at the unscaled rate
    (docs/accuracy.md, MI300X bug-report runs).

    Raises:
        ConfigError: as :meth:`~shardplan.cost.gemm.GemmDevice.of`.
    """
    dev = GemmDevice.of(hw, dtype)
    scale, ceiling = training.framework.gpu_matmul_scale, hw.isolated_matmul_efficiency
    if scale == 1.0 or hw.kind != "gpu" or ceiling is None or (hw.compute_arch or "").startswith("cdna"):
        return dev
    # at most the isolated-GEMM rate: the asymptotes scale by min(scale, isolated / matmul_efficiency)
    scale = max(1.0, min(scale, ceiling / hw.matmul_efficiency))
    return replace(dev, rate=min(hw.peak_flops(dtype), dev.rate * scale))


#: the lane width TPUs pad matmul operands to (elements): vector registers are 8 x 128 and XLA pads
#: tensor dimensions to multiples of 128 (Cloud TPU performance guide, "Padding" and "Tensor
#: dimensions"); the v4 / v5 MXUs are 128 x 128 (Scaling Book, "How to Think About TPUs")
TPU_LANE_WIDTH = 128


def mxu_head_padding(hw: HardwareSpec, head_dim: int) -> float:
    """Work the attention core's matmuls do per useful FLOP on a TPU because of the head dimension:
    ``ceil(head_dim / 128) x 128 / head_dim`` (:data:`TPU_LANE_WIDTH`). Both matmuls of a head carry
    ``head_dim`` in a padded dimension (the contraction of ``Q K^T``, the output width of ``P V``),
    so a 64-wide head costs 2 x its FLOPs and a 128-wide head 1 x. Example: head_dim 64 -> 2.0,
    96 -> 1.33, 128 -> 1.0. The v6e's 256 x 256 MXU would suggest padding to 256; priced that way,
    the v6e preset's fit on its three MaxText rows (head_dim 128) gets a worse leave-one-out error
    (median 6.7% -> 8.8%; ``benchmarks/fit_frameworks.py tpu_v6e_table``), so 128 is used on every
    TPU. 1.0 on GPUs (``sm_count`` set), whose kernels' head-dimension terms are in
    :class:`~shardplan.cost.gemm.AttentionKernel`."""
    if hw.sm_count is not None or head_dim <= 0:
        return 1.0
    return math.ceil(head_dim / TPU_LANE_WIDTH) * TPU_LANE_WIDTH / head_dim


def attention_core_s(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig,
                     tokens: float) -> tuple[float, float]:
    """(forward, backward) seconds of the attention core (QK^T, softmax, AV) on ``tokens`` local
    tokens, in bf16 (Transformer Engine keeps attention in 16-bit under fp8 recipes).

    * naive: the batched GEMMs ``[s/cp, d] x [d, s]`` and ``[s/cp, s] x [s, d]`` per (sequence,
      local head) through :func:`~shardplan.cost.gemm.gemm_time`, tensor-core time only (the
      score matrix's HBM traffic is in :func:`elementwise_bytes_per_token`);
    * flash: the forward FLOPs (:func:`shardplan.cost.flops.attention_core_flops_fwd`) at the
      framework's kernel speed for this head dim and key length
      (:func:`shardplan.cost.gemm.attention_kernel`; key length s/cp per ring step; the causal kernel's speed
      with cp too: Megatron-LM's load-balanced ring runs a causal-masked kernel on each rank's diagonal chunks
      and short per-step kernels on the rest, MaxText gathers K/V and runs one causal kernel; priced as full
      blocks at the non-causal speed, the 41 shared and public runs with cp > 1 came out median |error| 4.9%,
      at the causal speed 3.5%), backward 2.5 x the FLOPs at its backward speed; SMs left idle when
      ``sequences x heads x ceil((s/cp) / 128)`` query blocks are fewer than the SMs (FlashAttention-2
      Sec. 3.2) scale both; a head dim the kernel has no build for runs padded to the next one it has
      (:func:`~shardplan.cost.gemm.kernel_head_dim`: 80 -> 96 under FlashAttention-2); with no published
      kernel for the hardware, the GEMM asymptote
      (backward 2 x forward), on TPUs with the head dimension padded to 128 lanes
      (:func:`mxu_head_padding`);
    * causal attention over cp > 1 without load balancing (``FrameworkProfile.cp_load_balance``
      False: contiguous chunks, rank r attends to r + 1/2 chunk pairs) takes the last rank's work,
      (2 cp - 1) / cp of the balanced 1 / cp share (every ring step waits for it);
    * with ``cp_comm`` 'a2a' (DeepSpeed-Ulysses, Jacobs et al. 2023, Sec. 3) the kernel runs on whole sequences
      (queries and keys of length s) for n_heads / (tp cp) heads: the same FLOPs as the ring's blocks, at the
      kernel's speed for key length s, and every rank has the same causal work.
    """
    s, d, act = training.seq_len, model.dim_head, training.precision.activation_bytes
    a2a = p.cp > 1 and p.cp_comm == "a2a"  # whole sequences, heads split over cp
    heads, sq = (model.n_heads / (p.tp * p.cp), s) if a2a else (model.n_heads / p.tp, s / p.cp)
    seqs = tokens / (s / p.cp)  # sequences a rank attends for: the microbatch size either way
    if training.attention == "naive":
        b = max(1, round(seqs * heads))
        f = b_ = 0.0
        dev = gemm_device(hw, training, unquantized_dtype(training))
        for shape in (GemmShape(round(sq), s, d, b), GemmShape(round(sq), d, s, b)):
            tf, tb, _ = training_gemm_seconds(shape, dev, act, act, math_only=True)
            f, b_ = f + tf, b_ + tb
        return f, b_
    flops = F.attention_core_flops_fwd(model, s, training.causal) / p.tp * tokens
    if training.causal and p.cp > 1 and not a2a and not training.framework.cp_load_balance:
        # contiguous sequence chunks: the ring's last rank attends to every earlier chunk and each ring step
        # waits for it, (2 cp - 1) / cp of the balanced share (FrameworkProfile.cp_load_balance)
        flops *= (2 * p.cp - 1) / p.cp
    kern = attention_kernel(hw, training.framework.name, training.framework.attention_kernel)
    if kern is None:
        t = flops * mxu_head_padding(hw, d) / gemm_device(hw, training, unquantized_dtype(training)).rate
        return t, 2 * t
    causal = training.causal  # with cp too: see the docstring
    occ = 1.0 if hw.sm_count is None else min(1.0, seqs * heads * math.ceil(sq / 128) / hw.sm_count)
    peak = hw.peak_flops(unquantized_dtype(training)) * occ
    # the kernel runs at the head dimension it was compiled for (kernel_head_dim): padded_d / d of the useful work
    padded = kernel_head_dim(kern.name, d)
    flops *= padded / d if d > 0 else 1.0  # (kernel_head_dim keeps a non-positive d)
    return (flops / (kern.efficiency(padded, sq, causal, "fwd") * peak),
            2.5 * flops / (kern.efficiency(padded, sq, causal, "bwd") * peak))


@dataclass(frozen=True)
class LayerTimes:
    """Seconds of one transformer layer on one microbatch's local tokens.

    Attributes:
        fwd_mm: linear layers, forward (:func:`~shardplan.cost.gemm.gemm_time` per GEMM).
        fwd_attn: attention core, forward (:func:`attention_core_s`).
        fwd_elem: element-wise operations, forward (HBM-bound), x the framework's
            ``elementwise_traffic``.
        hbm_bound: most of the forward GEMM time is spent in HBM-bound GEMMs.
        bwd_mm: linear layers, backward (input- and weight-gradient GEMMs).
        bwd_attn: attention core, backward.
        fwd_mm_every_other: forward time of the projections that op-level selective
            checkpointing recomputes (:func:`shardplan.cost.memory.op_sac_matmuls`: every second
            ``aten.mm`` of a dense block), a share of the fused GEMMs in proportion to their widths.
        fwd_mm_mlp: forward time of the MLP's GEMMs (dense: up and down; MoE: router, experts and shared
            experts), what ``recompute_modules`` 'mlp' / 'moe' run again.
        fwd_mm_shared: forward time of the shared experts' GEMMs ('shared_experts').
        fwd_mm_mla_up: forward time of MLA's up projections, K/V and query (the query projection
            itself without a query latent; 'mla_up_proj').
        bwd_wgrad: the weight-gradient GEMMs' share of ``bwd_mm`` (what a zero-bubble schedule defers,
            :func:`shardplan.cost.pipeline.bubble_fraction`).
    """

    fwd_mm: float
    fwd_attn: float
    fwd_elem: float
    hbm_bound: bool
    bwd_mm: float
    bwd_attn: float
    fwd_mm_every_other: float = 0.0
    fwd_mm_mlp: float = 0.0
    fwd_mm_shared: float = 0.0
    fwd_mm_mla_up: float = 0.0
    bwd_wgrad: float = 0.0

    @property
    def fwd(self) -> float:
        """Whole forward of the layer (seconds)."""
        return self.fwd_mm + self.fwd_attn + self.fwd_elem

    @property
    def bwd(self) -> float:
        """Whole backward of the layer (seconds): element-wise backward = 2 x forward."""
        return self.bwd_mm + self.bwd_attn + 2 * self.fwd_elem


def layer_times(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig,
                tokens: float, moe: bool) -> LayerTimes:
    """Times of one layer on ``tokens`` local tokens (seconds), dense or MoE (``moe``).

    Each GEMM of :func:`layer_gemm_shapes` and its two backward GEMMs through
    :func:`~shardplan.cost.gemm.gemm_time` (tile and wave quantization on the device's SMs,
    HBM roofline; the weight gradient accumulates into the gradient buffer: read + write of
    ``grad_bytes``); the attention core by :func:`attention_core_s`; element-wise operations
    ``HBM bytes x elementwise_traffic / (eta_hbm W_hbm)`` (:func:`elementwise_bytes_per_token`).

    Linear layers run in the policy's compute dtype (fp8 or NVFP4 with Transformer Engine-style
    recipes: 1-byte or 0.5625-byte inputs, :data:`~shardplan.specs.training.QUANTIZED_INPUT_BYTES`); the
    attention core and the LM head stay in bf16 (NVIDIA Transformer Engine keeps both in 16-bit).
    """
    prec = training.precision
    dtype = prec.compute_dtype
    in_b = QUANTIZED_INPUT_BYTES.get(dtype, prec.activation_bytes)
    fwd = bwd = wgrad = hbm_fwd = every_other = mlp = shared = mla_up = 0.0
    dev = gemm_device(hw, training, dtype)
    shares = every_other_mm_shares(model, p, moe)
    for name, shape in layer_gemm_shapes(model, p, tokens, moe, training.moe_load, grouped_row_tile(training, hw)):
        tf, td, tw, bound = training_gemm_parts(shape, dev, in_b, 2.0 * prec.grad_bytes)
        fwd, bwd, wgrad, hbm_fwd = fwd + tf, bwd + td + tw, wgrad + tw, hbm_fwd + (tf if bound else 0.0)
        every_other += shares.get(name, 0.0) * tf
        mlp += tf if name.startswith(("mlp", "router", "expert", "shared")) else 0.0
        shared += tf if name.startswith("shared") else 0.0
        mla_up += tf if name in ("kv_up", "q_up") or (name == "q" and model.is_mla) else 0.0
    attn_f, attn_b = attention_core_s(model, training, hw, p, tokens)
    hbm = hw.hbm_bandwidth * hw.hbm_efficiency
    t_elem = (elementwise_bytes_per_token(model, training, p, moe) * training.framework.elementwise_traffic
              * tokens / hbm)
    return LayerTimes(fwd, attn_f, t_elem, hbm_fwd > fwd / 2, bwd, attn_b, every_other, mlp, shared, mla_up, wgrad)


def grouped_row_tile(training: TrainingSpec, hw: HardwareSpec) -> int:
    """The profile's grouped-GEMM row tile (``FrameworkProfile.grouped_gemm_row_tile``, tokens) where it applies:
    dropless routing (``moe_capacity_factor`` None; MaxText's capacity_factor > 0 path is dense einsum dispatch,
    layers/moe.py ``dense_matmul``) on a TPU (megablox is a Pallas TPU kernel); 0 elsewhere."""
    if training.moe_capacity_factor is not None or hw.kind != "tpu":
        return 0
    return training.framework.grouped_gemm_row_tile


def every_other_mm_shares(model: ModelSpec, p: ParallelConfig, moe: bool = False) -> dict[str, float]:
    """Share of each fused forward GEMM of :func:`layer_gemm_shapes` (dense layer) that op-level
    selective checkpointing recomputes (the projections :func:`shardplan.cost.flops.op_sac_matmuls`
    puts second: K and O of the attention, the up projection of a SwiGLU MLP, the down projection of
    a non-gated one), in proportion to the output widths fused in that GEMM. Example, Llama-3.1-8B
    at t = 1: qkv 1024 / (4096 + 2 x 1024) = 1/6, attn_out 1, mlp_up 1/2 (w3 of w1 | w3),
    mlp_down 0. MLA attention: the output projection only. An MoE layer (``moe``): the routed experts' GEMMs
    whole (grouped_mm outputs are not saved, :func:`shardplan.cost.flops.op_sac_matmuls`), the router's not
    (5th mm, saved), the shared experts' by the same alternation (SwiGLU: gate and down)."""
    redo = set(F.op_sac_matmuls(model, moe)[1])
    kv_r = model.kv_dim // p.tp if model.kv_heads >= p.tp else model.dim_head
    q_r = model.q_dim // p.tp
    qkv = {"q": q_r, "k": kv_r, "v": kv_r}
    mlp_up = ["gate", "up"] if model.mlp == "swiglu" else ["up"]
    if moe:
        shared_up = ["shared_gate", "shared_up"] if model.mlp == "swiglu" else ["shared_up"]
        shares = {"attn_out": float("o" in redo), "router": float("router" in redo), "expert_up": 1.0,
                  "expert_down": 1.0, "shared_up": sum(k in redo for k in shared_up) / len(shared_up),
                  "shared_down": float("shared_down" in redo)}
    else:
        shares = {"attn_out": float("o" in redo), "mlp_up": sum(k in redo for k in mlp_up) / len(mlp_up),
                  "mlp_down": float("down" in redo)}
    if not model.is_mla:
        shares["qkv"] = sum(w for k, w in qkv.items() if k in redo) / sum(qkv.values())
    return shares


def loss_bytes_per_logit(training: TrainingSpec) -> float:
    """HBM bytes per vocabulary element per token of the LM head's softmax cross-entropy,
    forward + backward.

    'fused' (vocab-parallel / fused kernel): logits written and read (beta each), an fp32
    softmax written and read (8): 2 (beta + 8). 'eager' (PyTorch ``F.cross_entropy`` on upcast
    logits, one kernel per op): upcast (read beta, write 4), log-softmax (read 4 twice for max
    and sum, read 4 write 4 for the output), its backward (read 4, write 4), downcast of the
    gradient (read 4, write beta): 2 beta + 32. 'in_place' (one kernel computes the loss and writes the
    gradient over the logits; the online softmax reads the logits once more): read beta twice, write beta,
    and the backward scales the gradient in place (read and write beta): 5 beta.
    """
    beta = training.precision.activation_bytes
    return {"eager": 2.0 * beta + 32.0, "fused": 2.0 * (beta + 8.0), "in_place": 5.0 * beta}[training.framework.loss]


def sp_copy_s(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig,
              tokens: float) -> tuple[float, float]:
    """(forward + backward, recompute) seconds per layer and microbatch of the activation copies that eager
    sequence parallelism on the sequence dim adds to its collectives (``FrameworkProfile.sp_seq_dim_copies``);
    (0, 0) without it, with tp = 1 or without sp.

    PyTorch's functional collectives, which DTensor's Shard(1) redistributes call, gather into a rank-major
    buffer and re-lay it along the gather dim with ``torch.cat(torch.chunk(res, group_size, dim=0),
    dim=gather_dim)``, and build the rank-major input of a ReduceScatter on the scatter dim with
    ``torch.cat(torch.chunk(x, group_size, dim=scatter_dim))`` (torch/distributed/_functional_collectives.py
    all_gather_tensor, reduce_scatter_tensor). torchtitan's TP plan (models/llama3/infra/parallelize.py
    apply_tp: SequenceParallel norms, PrepareModuleInput Shard(1) -> Replicate before attention and the MLP,
    RowwiseParallel output_layouts Shard(1)) runs each layer's two gathers and two scatters so, and autograd
    transposes them (a scatter's gradient is a gather on the same dim and vice versa): two gathers and two
    scatters in the forward, as many in the backward and, under full recompute, in the recomputed forward.
    torchtitan's own note there ("we can accelerate Sequence Parallel by folding (and unfolding) the batch
    dimension and the sequence dimension", pytorch/torchtitan PR 437: "an extra aten.cat after each
    collective") names the cost. Since pytorch/pytorch PR 169404 (Dec 2025) a gather of a microbatch of one
    sequence is a view (``_maybe_view_chunk_cat``), so gathers copy only with microbatch_size > 1; scatters
    always do. Each copy reads and writes the whole activation, ``beta u h`` (u = ``tokens``, the
    microbatch's tokens before the sequence split), at the HBM rate ``eta_hbm W_hbm``, with no element-wise
    traffic factor (one kernel, counted exactly). The embedding's scatter and the LM head's gather are left out.
    """
    if not (training.framework.sp_seq_dim_copies and p.tp > 1 and p.sp):
        return 0.0, 0.0
    per_pass = 2 + (2 if p.microbatch_size > 1 else 0)  # two scatters, two gathers unless a view
    copy = 2.0 * training.precision.activation_bytes * tokens * model.d_model / (hw.hbm_bandwidth * hw.hbm_efficiency)
    return 2 * per_pass * copy, (per_pass * copy if p.recompute == "full" else 0.0)


@dataclass(frozen=True)
class StageCompute:
    """Seconds of one microbatch's compute (forward + backward + recompute) on one pipeline stage.

    Attributes:
        stage: stage index (0 = first).
        matmul_s: linear layers and attention core, forward + backward.
        elementwise_s: element-wise operations, forward + backward.
        recompute_s: the forward recomputed in the backward ('full': whole layers; 'selective':
            attention core).
        params: the stage's parameters (:class:`~shardplan.cost.memory.StageParams`).
        overhead_s: launch / host dispatch the GPU waits for: the framework's
            ``layer_overhead_s`` x the stage's layers plus its fixed MoE costs (:func:`moe_expert_cost_s`:
            per local expert E / ep and per MoE layer; forward + backward of one microbatch).
        wgrad_s: the layers' weight-gradient GEMMs, part of ``matmul_s`` (the LM head's stay in its
            backward): the W pass a zero-bubble schedule defers.
        attention_s: the attention core (``softmax(QK^T) V``, forward + backward, :func:`attention_core_s`), part of
            ``matmul_s``: the term that grows with the sequence (new-user pass 54 asked to see it at 128k).
    """

    stage: int
    matmul_s: float
    elementwise_s: float
    recompute_s: float
    params: StageParams
    overhead_s: float = 0.0
    wgrad_s: float = 0.0
    attention_s: float = 0.0

    @property
    def total_s(self) -> float:
        """matmul + element-wise + recompute + overhead (seconds)."""
        return self.matmul_s + self.elementwise_s + self.recompute_s + self.overhead_s


def lm_head_s(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout,
              tokens: float) -> tuple[float, float, float]:
    """(matmul, element-wise, recompute) seconds of the LM head on ``tokens`` local tokens, forward +
    backward: the ``[u, h] x [h, V_p/t]`` GEMM (V_p the padded vocabulary,
    :func:`shardplan.parallel.padded_vocab`) and its two backward GEMMs in bf16, and the
    cross-entropy over the vocab shard (:func:`loss_bytes_per_logit`). With ``FrameworkProfile.loss_chunks``
    c > 1 the GEMMs run on u / c tokens c times and the backward re-runs each chunk's forward GEMM
    (recompute; MaxText ``vocab_tiling_linen_loss``); otherwise recompute is 0."""
    prec = training.precision
    chunks = training.framework.loss_chunks
    V = math.ceil(layout.vocab_per_rank(model.vocab_size))
    shape = GemmShape(max(1, round(tokens / chunks)), V, model.d_model)
    dev = gemm_device(hw, training, unquantized_dtype(training))
    tf, tb, _ = training_gemm_seconds(shape, dev, prec.activation_bytes, 2.0 * prec.grad_bytes)
    elem = loss_bytes_per_logit(training) * V * tokens / (hw.hbm_bandwidth * hw.hbm_efficiency)
    return chunks * (tf + tb), elem, (chunks * tf if chunks > 1 else 0.0)


def charged_layers(p: ParallelConfig, fw: FrameworkProfile, layers: int) -> float:
    """Layers of a stage that pay ``FrameworkProfile.layer_overhead_s`` per microbatch: all ``layers``, or only the
    recomputed ones when the profile's per-layer cost is its checkpointing wrapper's
    (``layer_overhead_recomputed_only``, DeepSpeed's CheckpointFunction; :func:`shardplan.parallel.recomputed_layers`)."""
    return recomputed_layers(p, layers) if fw.layer_overhead_recomputed_only else float(layers)


def stage_compute(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout, stage: int,
                  dense_t: LayerTimes, moe_t: LayerTimes) -> StageCompute:
    """Compute seconds of one microbatch on pipeline stage ``stage`` (see module docstring).

    Args:
        dense_t, moe_t: times of one dense / MoE layer (:func:`layer_times`).
    """
    p = layout.parallel
    sp_ = stage_params(model, layout, stage)
    mm = wgrad = attn = 0.0
    share = recompute_share(p, sp_.layers)  # full recompute of every layer, or of recompute_layers per chunk
    copy_s, copy_rec = sp_copy_s(model, training, hw, p, layout.local_tokens)
    elem, rec = sp_.layers * copy_s, sp_.layers * copy_rec * share
    for lt, cnt, moe in ((dense_t, sp_.layers - sp_.moe_layers, False), (moe_t, sp_.moe_layers, True)):
        mm += cnt * (lt.fwd_mm + lt.bwd_mm + lt.fwd_attn + lt.bwd_attn)
        attn += cnt * (lt.fwd_attn + lt.bwd_attn)
        wgrad += cnt * lt.bwd_wgrad
        elem += cnt * 3 * lt.fwd_elem
        saved = named_remat(p, training.framework.selective_recompute)
        if saved is not None:  # full recompute, less the named matmul outputs kept (MaxText's policies)
            rec += cnt * (lt.fwd - remat_saved_fwd_s(model, lt, moe, saved)) * (share if p.recompute == "full" else 1.0)
        elif p.recompute == "selective" and training.framework.selective_recompute == "every_other_matmul":
            rec += cnt * (lt.fwd_mm_every_other + lt.fwd_elem)  # op-level: half the matmuls, every element-wise op
        elif p.recompute == "selective":
            rec += cnt * module_recompute_s(p.recompute_modules or ("core_attn",), lt, moe)
    if stage == p.pp - 1:  # LM head + cross-entropy over the vocab shard (once more per MTP module)
        head_mm, head_elem, head_rec = lm_head_s(model, training, hw, layout, layout.local_tokens)
        heads = 1 + model.mtp_modules
        mm, elem, rec = mm + heads * head_mm, elem + heads * head_elem, rec + heads * head_rec
    fw = training.framework
    return StageCompute(stage, mm, elem, rec, sp_, charged_layers(p, fw, sp_.layers) * fw.layer_overhead_s
                        + moe_expert_cost_s(model, training, p, sp_.moe_layers, moe_t), wgrad, attn)


def remat_saved_fwd_s(model: ModelSpec, lt: LayerTimes, moe: bool, saved: tuple[str, ...] | None) -> float:
    """Forward seconds of one layer that a full recompute keeping ``saved`` (``ParallelConfig.remat_saved``) does
    not run again: the layer's forward GEMM time x the kept matmuls' share of its weights
    (:func:`shardplan.cost.flops.remat_saved_weights` over :func:`shardplan.cost.flops.layer_matmul_params`; GEMM
    time taken in proportion to FLOPs) and, with 'context', the attention core's forward. 0 without ``saved``."""
    if not saved:
        return 0.0
    share = min(1.0, F.remat_saved_weights(model, saved, moe) / F.layer_matmul_params(model, moe))
    return lt.fwd_mm * share + (lt.fwd_attn if "context" in saved else 0.0)


def moe_expert_cost_s(model: ModelSpec, training: TrainingSpec, p: ParallelConfig, moe_layers: int,
                      moe_t: "LayerTimes | None" = None) -> float:
    """Seconds per microbatch of the framework profile's fixed MoE costs on ``moe_layers`` MoE layers
    (forward + backward; both constants fitted, benchmarks/fit_frameworks.py):

        (max(0, moe_expert_overhead_s x E / ep - 3 x T_experts) + moe_layer_overhead_s) x moe_layers

    The per-expert host work (one GEMM launch per local expert from a host loop, per-expert casts and
    splits) runs after the dispatcher's device-to-host read of the split sizes has emptied the launch queue;
    while it issues one expert's kernels the GPU runs the previous expert's GEMMs, so only the host time
    beyond the routed experts' GEMM time is exposed (PyTorch docs, CUDA semantics, "Asynchronous
    execution": GPU operations are enqueued and run while the host goes on; the same max of host and device
    time as :func:`shardplan.cost.step.host_floor_s`). ``T_experts`` is the routed experts' forward GEMM time (``LayerTimes.fwd_mm_mlp`` less
    the shared experts), x 3 for the forward and the two backward GEMMs; ``moe_t`` None (no layer times)
    hides nothing. The per-layer constant (router kernels, the permutation, the host read itself) stays
    exposed. Example, Qwen3-30B-A3B at ep 8 (16 local experts) with 0.32 ms and 1.51 ms and experts whose
    GEMMs take 1 ms forward: (max(0, 0.32 ms x 16 - 3 ms) + 1.51 ms) x 48 = (2.12 + 1.51) ms x 48 = 0.1742 s
    per microbatch."""
    fw = training.framework
    host = fw.moe_expert_overhead_s * max(1, model.n_experts // p.ep)
    if moe_t is not None:
        host = max(0.0, host - routed_expert_gemm_s(moe_t))
    return (host + fw.moe_layer_overhead_s) * moe_layers


def routed_expert_gemm_s(moe_t: LayerTimes) -> float:
    """Seconds of one MoE layer's routed-expert GEMMs per microbatch, forward and the two backward GEMMs: 3 x the
    MLP's forward GEMM time less the shared experts' (``LayerTimes.fwd_mm_mlp - fwd_mm_shared``; the router's
    GEMM is in it, a ~h x E sliver). What hides the per-expert host work in :func:`moe_expert_cost_s`."""
    return 3 * max(0.0, moe_t.fwd_mm_mlp - moe_t.fwd_mm_shared)


def module_recompute_s(modules: tuple[str, ...], lt: LayerTimes, moe: bool) -> float:
    """Seconds one layer recomputes under Megatron-LM's ``--recompute-modules`` (forward again in the
    backward): core_attn the attention core; mlp a dense layer's MLP GEMMs; moe an MoE layer's router,
    experts and shared experts (its AllToAlls: :mod:`shardplan.cost.axes.ep`); shared_experts theirs;
    mla_up_proj MLA's K/V and query up projections (every layer; RoPE's element-wise work free as below).
    layernorm and moe_act recompute element-wise work only (counted as free: a norm or an activation
    reads and writes the tensor once, against the GEMMs around it)."""
    t = lt.fwd_attn if "core_attn" in modules else 0.0
    t += lt.fwd_mm_mla_up if "mla_up_proj" in modules else 0.0
    if not moe:
        return t + (lt.fwd_mm_mlp if "mlp" in modules else 0.0)
    if "moe" in modules:
        return t + lt.fwd_mm_mlp
    return t + (lt.fwd_mm_shared if "shared_experts" in modules else 0.0)


def slowest_stage(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout,
                  dense_t: LayerTimes, moe_t: LayerTimes) -> StageCompute:
    """The stage with the longest microbatch compute among ``layout.stages_to_price(model)`` (first,
    last, most layers, most MoE layers): it sets the pipeline's pace (Narayanan et al. 2021 Sec. 2.2).
    Under DualPipe the slowest rank, each rank a pair of mirrored stages (:func:`dualpipe_rank`)."""
    stages = layout.stages_to_price(model)
    p = layout.parallel
    if p.schedule == "dualpipe" and p.pp > 1:
        # a DualPipe rank runs half its microbatches through stage s and half through the mirrored pp - 1 - s
        every = {st: stage_compute(model, training, hw, layout, st, dense_t, moe_t)
                 for st in set(stages) | {p.pp - 1 - st for st in stages}}
        return max((dualpipe_rank(every[st], every[p.pp - 1 - st]) for st in stages), key=lambda c: c.total_s)
    per_stage = [stage_compute(model, training, hw, layout, st, dense_t, moe_t) for st in stages]
    return max(per_stage, key=lambda c: c.total_s)


def dualpipe_rank(own: StageCompute, mirror: StageCompute) -> StageCompute:
    """One DualPipe rank as a stage: the mean microbatch time of its stage and the mirrored one (it runs half its
    microbatches through each, DeepSeek-V3 Sec. 3.2.1) and the weights of both (summed; the layer counts are the
    mean, the layers one microbatch passes)."""
    a, b = own.params, mirror.params
    params = StageParams(dense=a.dense + b.dense, replicated=a.replicated + b.replicated, expert=a.expert + b.expert,
                         layers=(a.layers + b.layers) / 2, moe_layers=(a.moe_layers + b.moe_layers) / 2)
    return StageCompute(own.stage, (own.matmul_s + mirror.matmul_s) / 2, (own.elementwise_s + mirror.elementwise_s) / 2,
                        (own.recompute_s + mirror.recompute_s) / 2, params, (own.overhead_s + mirror.overhead_s) / 2,
                        attention_s=(own.attention_s + mirror.attention_s) / 2)
