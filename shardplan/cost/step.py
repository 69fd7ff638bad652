"""Step time, throughput, MFU and the bottleneck of one layout: :func:`estimate`.

Composition (critical path of the slowest pipeline stage; cost_models note 10.6, after Narayanan
et al. 2021 Sec. 3 and Calculon, Isaev et al. 2023):

``T_step = m * T_mb + T_bubble + T_dp_exposed + T_optimizer`` with

* ``T_mb``: one microbatch forward + backward (+ recompute) of the stage's layers, plus the
  exposed TP / CP / EP / ZeRO-3 / pipeline communication of that microbatch;
* per layer, matmuls take ``max(FLOPs / (eta_mm C), weight bytes / (eta_hbm W_hbm))`` (roofline,
  Williams et al. 2009) and element-wise operations take ``HBM bytes / (eta_hbm W_hbm)``;
  backward = 2 x forward (Narayanan et al. 2021 Sec. 5.1);
* ``T_bubble``: (p-1) T_mb for GPipe and 1F1B (Narayanan et al. 2021 Sec. 2.2.1), (p-1) T_mb / v
  interleaved (ibid. Sec. 2.2.2), (p-1) T_mb / 3 for ZB-H1 (Qi et al. 2023, Sec. 3, with
  T_F = T_B = T_W);
* DP gradient reduction overlaps the backward of the last microbatch except the last bucket
  (Li et al. 2020, PyTorch DDP, Sec. 3.2.3); ZeRO-1/2 parameter AllGather overlaps the next
  forward likewise (Megatron-LM ``--overlap-param-gather``); ZeRO-3 prefetches the next layer's
  parameters during the current layer's compute (Zhao et al. 2023, PyTorch FSDP, Sec. 3.3.2);
  ring-attention KV exchange overlaps the attention core (Liu et al. 2023, Ring Attention Sec. 3);
  TP, EP and pipeline send/recv are exposed.
* TP also carries the vocab-parallel cross-entropy all-reduces (max logit, target logit, sum of
  exponentials: 3 x 4 bytes per token; Megatron-LM ``_VocabParallelCrossEntropy``) and, with
  sequence parallelism, one all-reduce of the norm-weight gradients per step (Megatron-LM
  ``_allreduce_layernorm_grads``); both found missing by comparing with the compiled XLA program
  (docs/validation.md).
* Optimizer: a memory-bound fused AdamW that reads and writes params, master weights and moments
  and reads gradients once (cost_models note 10.6).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from shardplan.cost import flops as F
from shardplan.cost.comm import collective_cost, level_names
from shardplan.cost.memory import MemoryBreakdown, memory_estimate, stage_params
from shardplan.parallel import Layout, ParallelConfig, validate
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec


@dataclass
class Collective:
    """Aggregate of one collective kind on one parallel axis over a step.

    Attributes:
        op: AllReduce / AllGather / ReduceScatter / AllToAll / SendRecv.
        axis: tp / cp / ep / dp / pp.
        count: calls per step per device.
        bytes_per_device: bytes each device sends per step.
        time_s: seconds per step if nothing overlapped.
        exposed_s: seconds per step on the critical path.
        level: network level that bounds it (NVLink / scale-out / ICI / DCN).
        group_size: devices in the group.
        purpose: what is communicated.
    """

    op: str
    axis: str
    count: float
    bytes_per_device: float
    time_s: float
    exposed_s: float
    level: str
    group_size: int
    purpose: str

    def to_dict(self) -> dict:
        """JSON-friendly form (one entry of ``collectives`` in ``estimate --json``); bytes and seconds."""
        return dict(op=self.op, axis=self.axis, count=self.count, bytes_per_device=self.bytes_per_device,
                    time_s=self.time_s, exposed_s=self.exposed_s, level=self.level, group_size=self.group_size,
                    purpose=self.purpose)


@dataclass
class Estimate:
    """Everything the planner predicts for one layout. Times in seconds, memory in bytes."""

    model: ModelSpec
    hardware: HardwareSpec
    training: TrainingSpec
    layout: Layout
    memory: MemoryBreakdown
    fits: bool
    hbm_usable: float
    step_s: float
    compute_s: float
    matmul_s: float
    elementwise_s: float
    recompute_s: float
    exposed_comm_s: float
    bubble_s: float
    optimizer_s: float
    collectives: list[Collective]
    model_flops_per_step: float
    hardware_flops_per_step: float
    mfu: float
    hfu: float
    tokens_per_s: float
    bound: str
    thresholds: dict
    roofline: list[dict] = field(default_factory=list)

    @property
    def parallel(self) -> ParallelConfig:
        """The validated layout (dp and dp_shard filled in)."""
        return self.layout.parallel

    def to_dict(self) -> dict:
        """The JSON object printed by ``shardplan estimate --json``."""
        p = self.parallel
        return {
            "model": {"name": self.model.name, "n_params": self.model.n_params,
                      "n_active_params": self.model.n_active_params},
            "hardware": {"name": self.hardware.name, "devices": self.layout.n_devices,
                         "hbm_bytes": self.hardware.hbm_bytes, "hbm_usable_bytes": self.hbm_usable},
            "training": {"seq_len": self.training.seq_len, "global_batch_size": self.training.global_batch_size,
                         "global_batch_tokens": self.training.global_batch_tokens,
                         "precision": self.training.precision.name, "microbatches": self.layout.microbatches},
            "parallel": p.model_dump(mode="json"),
            "memory_bytes": self.memory.to_dict(),
            "fits": self.fits,
            "time_s": {"step": self.step_s, "compute": self.compute_s, "matmul": self.matmul_s,
                       "elementwise": self.elementwise_s, "recompute": self.recompute_s,
                       "exposed_comm": self.exposed_comm_s, "bubble": self.bubble_s,
                       "optimizer": self.optimizer_s},
            "collectives": [c.to_dict() for c in self.collectives],
            "model_flops_per_step": self.model_flops_per_step,
            "hardware_flops_per_step": self.hardware_flops_per_step,
            "mfu": self.mfu, "hfu": self.hfu, "tokens_per_s": self.tokens_per_s,
            "tokens_per_s_per_device": self.tokens_per_s / self.layout.n_devices,
            "bound": self.bound, "thresholds": self.thresholds, "roofline": self.roofline,
        }


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
    sigma = t if p.sp else 1
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


@dataclass
class _LayerTimes:
    fwd_mm: float
    fwd_attn: float
    fwd_elem: float
    hbm_bound: bool

    @property
    def fwd(self) -> float:
        return self.fwd_mm + self.fwd_attn + self.fwd_elem


def _layer_times(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig,
                 tokens: float, moe: bool) -> _LayerTimes:
    """Forward time of one layer on ``tokens`` local tokens (seconds).

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
    return _LayerTimes(max(t_mm_flops, t_mm_hbm), t_attn, t_elem, t_mm_hbm > t_mm_flops)


def _threshold_info(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout) -> dict:
    """Scaling Book roofline thresholds for this hardware (training.md, gpus.md).

    * critical tokens per data-parallel rank for DP/FSDP to stay compute-bound: C / W of the level
      the data-parallel group crosses, x E / k for MoE (Scaling Book gpus.md "MoE DP");
    * largest compute-bound TP: F * W_scale_up / C (Scaling Book training.md, "Y < F W / C");
    * HBM critical intensity C / W_hbm (roofline.md).
    """
    p = layout.parallel
    C = hw.peak_flops(training.precision.compute_dtype)
    dp_group = p.dp * p.cp
    stride = p.tp
    crosses = dp_group * stride > hw.scale_up_size
    if crosses:
        # the node's scale-out egress is shared by the group members inside one scale-up domain
        members = max(1, min(dp_group, hw.scale_up_size // stride))
        w_dp = hw.scale_out_bandwidth * members
    else:
        w_dp = hw.scale_up_bandwidth
    moe_factor = model.n_experts / model.top_k if model.is_moe else 1.0
    critical = C / w_dp * moe_factor
    tokens_per_rank = training.global_batch_tokens / dp_group
    axes = hw.ici_axes_spanned(p.tp) if hw.kind == "tpu" else 1
    max_tp = model.ffn_dim * hw.scale_up_bandwidth * axes / C
    return {
        "dp_level": level_names(hw)[1 if crosses else 0],
        "critical_tokens_per_dp_rank": critical,
        "tokens_per_dp_rank": tokens_per_rank,
        "dp_compute_bound": tokens_per_rank > critical,
        "max_compute_bound_tp": max_tp,
        "tp_compute_bound": p.tp <= max(1.0, max_tp),
        "hbm_critical_intensity": hw.critical_intensity_hbm(training.precision.compute_dtype),
    }


def estimate(model: ModelSpec, hardware: HardwareSpec, training: TrainingSpec, parallel: ParallelConfig,
             n_devices: int) -> Estimate:
    """Predict memory, step time, MFU and the bottleneck of one layout.

    Args:
        model, hardware, training: the specs.
        parallel: the layout (validated here first).
        n_devices: number of accelerators.

    Returns:
        :class:`Estimate` (seconds, bytes, FLOP/s as documented on its fields).

    Raises:
        ConfigError: if the layout is invalid (see :func:`shardplan.parallel.validate`).
    """
    layout = validate(parallel, model, training, n_devices)
    return estimate_layout(model, hardware, training, layout)


def estimate_layout(model: ModelSpec, hw: HardwareSpec, training: TrainingSpec, layout: Layout,
                    detail: bool = True) -> Estimate:
    """:func:`estimate` for an already validated :class:`Layout`.

    ``detail=False`` skips the roofline points and thresholds (the search fills them in for the
    plans it returns).
    """
    p = layout.parallel
    prec = training.precision
    beta = prec.activation_bytes
    m = layout.microbatches
    s = training.seq_len
    u = s * p.microbatch_size / p.cp  # local tokens per microbatch
    h = model.d_model
    names = level_names(hw)
    sigma = p.tp if p.sp else 1

    dense_t = _layer_times(model, training, hw, p, u, False)
    moe_t = _layer_times(model, training, hw, p, u, True) if model.is_moe else dense_t

    coll: dict[tuple[str, str, str], list] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, "", 1])

    def add(op: str, axis: str, purpose: str, size: float, n: int, stride: int, count: float,
            exposed_frac: float | None = None, exposed_abs: float | None = None) -> float:
        c = collective_cost(op, size, n, stride, hw)  # type: ignore[arg-type]
        rec = coll[(op, axis, purpose)]
        rec[0] += count
        rec[1] += c.bytes_per_device * count
        rec[2] += c.time_s * count
        if exposed_abs is not None:
            rec[3] += exposed_abs
        else:
            rec[3] += c.time_s * count * (1.0 if exposed_frac is None else exposed_frac)
        rec[4], rec[5] = c.level, n if op != "SendRecv" else 2
        return c.time_s

    # ---- per-stage compute of one microbatch -------------------------------------------------
    peak_mm = hw.achieved_matmul_flops("bf16")  # LM head
    hbm = hw.hbm_bandwidth * hw.hbm_efficiency

    def stage_compute(stage: int) -> tuple[float, float, float, float, int, int]:
        sp_ = stage_params(model, layout, stage)
        n_l, n_moe = sp_.layers, sp_.moe_layers
        mm = elem = rec = 0.0
        for lt, cnt in ((dense_t, n_l - n_moe), (moe_t, n_moe)):
            mm += cnt * 3 * (lt.fwd_mm + lt.fwd_attn)
            elem += cnt * 3 * lt.fwd_elem
            if p.recompute == "full":
                rec += cnt * lt.fwd
            elif p.recompute == "selective":
                rec += cnt * lt.fwd_attn
        if stage == p.pp - 1:  # LM head + cross-entropy (fp32 softmax over the vocab shard)
            mm += 3 * 2.0 * h * model.vocab_size / p.tp * u / peak_mm
            elem += 2 * (beta + 8) * model.vocab_size / p.tp * u / hbm
        return mm, elem, rec, mm + elem + rec, n_l, n_moe

    stages = sorted({0, p.pp - 1, max(range(p.pp), key=lambda i: layout.stage_layers[i])})
    per_stage = {st: stage_compute(st) for st in stages}
    slow = max(stages, key=lambda st: per_stage[st][3])
    mm_t, elem_t, rec_t, comp_mb, L_s, L_moe_s = per_stage[slow]
    fwd_layer = dense_t.fwd
    bwd_layer = 2 * dense_t.fwd

    # ---- TP ------------------------------------------------------------------------------------
    exposed_mb = 0.0
    if p.tp > 1:
        S_t = beta * u * h
        n_layers = L_s
        # vocab-parallel embedding (first stage) and LM head (last stage): one collective each per
        # microbatch and direction; with pp > 1 a stage holds only one of them (Megatron-LM
        # VocabParallelEmbedding / ColumnParallelLinear on the first / last pipeline stage)
        emb_head = 2 if p.pp == 1 else 1
        if p.sp:
            ag = 2 + 4 + (2 if p.recompute == "full" else 0)
            rs = 2 + 2 + (2 if p.recompute == "full" else 0)
            add("AllGather", "tp", "activations (sequence parallel)", S_t, p.tp, 1, ag * n_layers * m)
            add("ReduceScatter", "tp", "activations (sequence parallel)", S_t, p.tp, 1, rs * n_layers * m)
            add("AllGather", "tp", "LM head / embedding", S_t, p.tp, 1, emb_head * m)
            add("ReduceScatter", "tp", "LM head / embedding", S_t, p.tp, 1, emb_head * m)
        else:
            ar = 4 + (2 if p.recompute == "full" else 0)
            add("AllReduce", "tp", "activations (Megatron f/g)", S_t, p.tp, 1, ar * n_layers * m)
            add("AllReduce", "tp", "LM head / embedding", S_t, p.tp, 1, emb_head * m)
        # vocab-parallel cross-entropy (Megatron-LM _VocabParallelCrossEntropy): all-reduces of the
        # max logit, the target logit and the sum of exponentials, one fp32 value per token each
        add("AllReduce", "tp", "cross-entropy (vocab parallel)", 4.0 * u, p.tp, 1, 3 * m)
        if p.sp:
            # norm weights are replicated over tp but see only 1/tp of the sequence with SP, so their
            # gradients are all-reduced over tp once per step (Megatron-LM
            # _allreduce_layernorm_grads / Korthikanti et al. 2022 Sec. 4.2.2)
            repl = stage_params(model, layout, slow).replicated
            add("AllReduce", "tp", "norm gradients (sequence parallel)", prec.grad_bytes * repl, p.tp, 1, 1)
        if p.tp_overlap:
            # the chunked collective runs concurrently with the GEMM it feeds: only the part longer
            # than the stage's matmul time stays on the critical path
            act = [rec for (op_, ax, purpose), rec in coll.items() if ax == "tp" and purpose.startswith("activ")]
            total = sum(rec[2] for rec in act)
            hide = m * L_s * 3 * (dense_t.fwd_mm if L_moe_s < L_s else moe_t.fwd_mm)
            if total > 0:
                keep = max(0.0, total - hide) / total
                for rec in act:
                    rec[3] = rec[2] * keep
    # ---- CP (ring attention) -------------------------------------------------------------------
    if p.cp > 1:
        kv_bytes = 2 * beta * u * model.kv_dim / p.tp
        steps_fwd = (p.cp - 1) * (2 if p.recompute == "full" else 1)
        t_step = collective_cost("SendRecv", kv_bytes, 2, p.tp, hw).time_s
        attn_fwd = dense_t.fwd_attn
        exp_fwd = max(0.0, (p.cp - 1) * t_step - attn_fwd)
        exp_bwd = max(0.0, 2 * (p.cp - 1) * t_step - 2 * attn_fwd)
        exposed = (exp_fwd * (2 if p.recompute == "full" else 1) + exp_bwd) * L_s * m
        add("SendRecv", "cp", "K/V ring (context parallel)", kv_bytes, 2, p.tp, (steps_fwd + 2 * (p.cp - 1)) * L_s * m,
            exposed_abs=exposed)
    # ---- EP ------------------------------------------------------------------------------------
    if p.ep > 1 and L_moe_s:
        payload = beta * (u / p.tp) * model.top_k * h
        n_a2a = 4 + (2 if p.recompute == "full" else 0)
        add("AllToAll", "ep", "token dispatch / combine", payload, p.ep, p.tp, n_a2a * L_moe_s * m)
    # ---- PP ------------------------------------------------------------------------------------
    if p.pp > 1:
        msg = beta * u * h / sigma
        stride = p.tp * p.cp * p.dp
        add("SendRecv", "pp", "stage activations / gradients", msg, 2, stride, 2 * p.virtual_stages * m)
    # ---- DP / ZeRO -----------------------------------------------------------------------------
    sp_ = stage_params(model, layout, slow)
    dense_p = sp_.dense + sp_.replicated
    shard = layout.zero_shard
    replicas = p.dp // (p.dp_shard or 1)
    ezs = max(1, shard // p.ep) if shard % p.ep == 0 else 1
    dp_window = L_s * (bwd_layer + (fwd_layer if p.recompute == "full" else 0))
    buckets = max(1, L_s)
    overlap = p.overlap_grad_reduce

    def overlapped(t: float, window: float) -> float:
        if not overlap:
            return t
        return t / buckets + max(0.0, t * (1 - 1 / buckets) - window)

    def replica_allreduce(kind: str, params: float, n: int, stride: int) -> float:
        """HSDP: AllReduce of the gradient shard across the dp / dp_shard replicas, once per step,
        overlapped with backward like DDP buckets; returns its exposed seconds (0 without replicas)."""
        if replicas <= 1:
            return 0.0
        size = prec.grad_bytes * params / n
        t = collective_cost("AllReduce", size, replicas, stride * n, hw).time_s
        e = overlapped(t, dp_window)
        add("AllReduce", "dp", f"{kind} gradients across replicas", size, replicas, stride * n, 1, exposed_abs=e)
        return e

    dp_exposed = 0.0
    groups = [("dense", dense_p, shard, p.tp), ("expert", sp_.expert, ezs, p.tp * p.ep)]
    if p.zero_stage <= 2:
        for kind, params, n, stride in groups:
            if params == 0:
                continue
            if p.zero_stage == 0:
                n_all = p.dp * p.cp if kind == "dense" else layout.expert_dp
                t = collective_cost("AllReduce", prec.grad_bytes * params, n_all, stride, hw).time_s
                e = overlapped(t, dp_window)
                add("AllReduce", "dp", f"{kind} gradients", prec.grad_bytes * params, n_all, stride, 1,
                    exposed_abs=e)
                dp_exposed += e
            else:
                t = collective_cost("ReduceScatter", prec.grad_bytes * params, n, stride, hw).time_s
                e = overlapped(t, dp_window)
                add("ReduceScatter", "dp", f"{kind} gradients", prec.grad_bytes * params, n, stride, 1,
                    exposed_abs=e)
                dp_exposed += e
                t2 = collective_cost("AllGather", prec.param_bytes * params, n, stride, hw).time_s
                e2 = overlapped(t2, L_s * fwd_layer)
                add("AllGather", "dp", f"{kind} parameters after update", prec.param_bytes * params, n, stride, 1,
                    exposed_abs=e2)
                dp_exposed += e2
            if p.zero_stage > 0:
                dp_exposed += replica_allreduce(kind, params, n, stride)
    else:
        for kind, params, n, stride in groups:
            if params == 0 or n == 1:
                continue
            ag = collective_cost("AllGather", prec.param_bytes * params, n, stride, hw).time_s
            rs = collective_cost("ReduceScatter", prec.grad_bytes * params, n, stride, hw).time_s
            per_l_ag, per_l_rs = ag / buckets, rs / buckets
            bwd_l = bwd_layer + (fwd_layer if p.recompute == "full" else 0)
            if p.zero3_gather == "per_step":
                # one gather per step (first microbatch's forward hides all but the first layer's),
                # then every microbatch reuses it; gradients are reduce-scattered per microbatch
                exp_ag = per_l_ag + (buckets - 1) * max(0.0, per_l_ag - fwd_layer)
                exp_rs = buckets * max(0.0, per_l_rs - bwd_l)
                dp_exposed += exp_ag
                exposed_mb += exp_rs
                add("AllGather", "dp", f"{kind} parameters (ZeRO-3, once per step)", prec.param_bytes * params, n,
                    stride, 1, exposed_abs=exp_ag)
                add("ReduceScatter", "dp", f"{kind} gradients", prec.grad_bytes * params, n, stride, m,
                    exposed_abs=exp_rs * m)
                dp_exposed += replica_allreduce(kind, params, n, stride)
                continue
            # forward: the first layer's gather is exposed, each later one is prefetched behind the
            # previous layer's forward; backward: gather + reduce-scatter of a layer behind its backward
            exp_fwd = per_l_ag + (buckets - 1) * max(0.0, per_l_ag - fwd_layer)
            exp_bwd = buckets * max(0.0, per_l_ag + per_l_rs - bwd_l)
            ag_share = per_l_ag / (per_l_ag + per_l_rs) if per_l_ag + per_l_rs > 0 else 0.0
            exposed_mb += exp_fwd + exp_bwd
            add("AllGather", "dp", f"{kind} parameters (ZeRO-3 forward)", prec.param_bytes * params, n, stride, m,
                exposed_abs=exp_fwd * m)
            add("AllGather", "dp", f"{kind} parameters (ZeRO-3 backward)", prec.param_bytes * params, n, stride, m,
                exposed_abs=exp_bwd * ag_share * m)
            add("ReduceScatter", "dp", f"{kind} gradients", prec.grad_bytes * params, n, stride, m,
                exposed_abs=exp_bwd * (1 - ag_share) * m)
            dp_exposed += replica_allreduce(kind, params, n, stride)

    # per-microbatch exposed communication (TP, CP, EP, PP) on the critical path
    for (op, axis, purpose), rec in coll.items():
        if axis in ("tp", "cp", "ep", "pp"):
            exposed_mb += rec[3] / m
    T_mb = comp_mb + exposed_mb
    if p.pp > 1:
        bubble_factor = {"gpipe": 1.0, "1f1b": 1.0, "interleaved": 1.0 / p.virtual_stages,
                         "zero-bubble": 1.0 / 3.0}[p.schedule]
        bubble = (p.pp - 1) * T_mb * bubble_factor
    else:
        bubble = 0.0
    # optimizer: memory-bound fused AdamW over the local (sharded) parameters
    opt_params = dense_p / (shard if p.zero_stage >= 1 else 1) + sp_.expert / (ezs if p.zero_stage >= 1 else 1)
    opt_bytes = (2 * (prec.param_bytes + prec.master_bytes + prec.optimizer_bytes) + prec.grad_bytes) * opt_params
    optimizer_s = 0.0 if p.offload_optimizer else opt_bytes / hbm
    step = m * T_mb + bubble + dp_exposed + optimizer_s

    tokens = training.global_batch_tokens
    mf = F.model_flops_per_token(model, s, training.causal) * tokens
    hf = F.hardware_flops_per_token(model, s, p.recompute, training.causal, training.attention) * tokens
    peak_total = layout.n_devices * hw.peak_flops(prec.compute_dtype)
    mem = memory_estimate(model, training, layout, reserve=hw.hbm_bytes - hw.usable_hbm_bytes())
    collectives = [Collective(op=k[0], axis=k[1], purpose=k[2], count=v[0], bytes_per_device=v[1], time_s=v[2],
                              exposed_s=v[3], level=v[4], group_size=v[5]) for k, v in coll.items()]
    exposed_comm = sum(c.exposed_s for c in collectives)
    # bottleneck
    parts = {"compute (matmul FLOPs)": m * mm_t, "HBM bandwidth (element-wise + optimizer)": m * elem_t + optimizer_s,
             "recompute": m * rec_t, "pipeline bubble": bubble}
    by_axis: dict[str, float] = defaultdict(float)
    levels: dict[str, str] = {}
    for c in collectives:
        by_axis[c.axis] += c.exposed_s
        levels[c.axis] = c.level
    for axis, e in by_axis.items():
        parts[f"{axis} communication ({levels[axis]})"] = e
    bound = max(parts, key=parts.get)
    roofline = _roofline(model, training, hw, p, u, dense_t, collectives, m) if detail else []
    return Estimate(
        model=model, hardware=hw, training=training, layout=layout, memory=mem,
        fits=mem.total <= hw.hbm_bytes, hbm_usable=hw.usable_hbm_bytes(), step_s=step,
        compute_s=m * comp_mb, matmul_s=m * mm_t, elementwise_s=m * elem_t, recompute_s=m * rec_t,
        exposed_comm_s=exposed_comm, bubble_s=bubble, optimizer_s=optimizer_s, collectives=collectives,
        model_flops_per_step=mf, hardware_flops_per_step=hf, mfu=mf / (step * peak_total),
        hfu=hf / (step * peak_total), tokens_per_s=tokens / step, bound=bound,
        thresholds=_threshold_info(model, training, hw, layout) if detail else {}, roofline=roofline)


def _roofline(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig, u: float,
              lt: _LayerTimes, collectives: list[Collective], m: int) -> list[dict]:
    """Operations of the layout placed on the roofline: arithmetic intensity (FLOPs per byte moved
    over the resource that feeds them) and achieved FLOP/s, with the resource's ridge point C / W."""
    C = hw.peak_flops(training.precision.compute_dtype)
    prec = training.precision
    out = []
    mm_flops = 2.0 * F.layer_matmul_params(model, False) / p.tp * u
    w_bytes = prec.param_bytes * model.dense_layer_params() / p.tp + 2 * prec.activation_bytes * u * (
        model.d_model * 4 + model.ffn_dim * 3 / p.tp)
    out.append(dict(name="layer matmuls", resource="HBM", intensity=mm_flops / w_bytes,
                    ridge=C / hw.hbm_bandwidth, bound="compute" if mm_flops / w_bytes > C / hw.hbm_bandwidth
                    else "HBM"))
    e_bytes = elementwise_bytes_per_token(model, training, p, False) * u
    out.append(dict(name="element-wise ops", resource="HBM", intensity=0.0 if e_bytes == 0 else
                    (20.0 * model.d_model * u / p.tp) / e_bytes, ridge=C / hw.hbm_bandwidth, bound="HBM"))
    layer_flops = (3 * mm_flops)  # per microbatch per layer fwd+bwd
    for c in collectives:
        if c.bytes_per_device <= 0:
            continue
        bw = hw.scale_up_bandwidth if c.level in ("NVLink", "ICI") else hw.scale_out_bandwidth
        flops_hidden = layer_flops * p.tp if c.axis == "tp" else layer_flops
        calls = max(c.count, 1.0)
        per_call_bytes = c.bytes_per_device / calls
        # FLOPs available to hide one call: the step's FLOPs spread over the calls
        total_flops = layer_flops * model.n_layers / p.pp * m
        intensity = total_flops / c.bytes_per_device
        out.append(dict(name=f"{c.op} {c.axis} ({c.purpose})", resource=c.level, intensity=intensity,
                        ridge=C / bw, bound="compute" if intensity > C / bw else c.level,
                        bytes_per_call=per_call_bytes, flops_hidden=flops_hidden))
    return out
