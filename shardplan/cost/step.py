"""Step time, throughput, MFU and the bottleneck of one layout: :func:`estimate`.

Composition (critical path of the slowest pipeline stage; cost_models note 10.6, after Narayanan
et al. 2021 Sec. 3 and Calculon, Isaev et al. 2023):

``T_step = m * T_mb + T_bubble + T_dp_exposed + T_optimizer`` with

* ``T_mb``: one microbatch forward + backward (+ recompute) of the stage's layers
  (:mod:`shardplan.cost.compute`), plus the exposed TP / CP / EP / ZeRO-3 / pipeline communication
  of that microbatch;
* the communication of each axis in its own module, :mod:`shardplan.cost.axes.tp` (Megatron f/g,
  sequence parallelism, vocab-parallel loss), :mod:`~shardplan.cost.axes.cp` (ring attention),
  :mod:`~shardplan.cost.axes.ep` (AllToAll dispatch / combine), :mod:`~shardplan.cost.axes.pp`
  (stage send/recv) and :mod:`~shardplan.cost.axes.dp` (DDP, ZeRO-1/2/3, HSDP), each returning
  typed :class:`~shardplan.cost.collective.Collective` records with their overlap rule;
* ``T_bubble`` per schedule: :mod:`shardplan.cost.pipeline`;
* optimizer: a memory-bound fused AdamW (:func:`optimizer_s`).
"""


from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from shardplan.cost import flops as F
from shardplan.cost.axes import cp as cp_axis
from shardplan.cost.axes import dp as dp_axis
from shardplan.cost.axes import ep as ep_axis
from shardplan.cost.axes import pp as pp_axis
from shardplan.cost.axes import tp as tp_axis
from shardplan.cost.collective import Collective
from shardplan.cost.comm import group_split, level_names
from shardplan.cost.compute import LayerTimes, elementwise_bytes_per_token
from shardplan.cost.context import StepContext, require_host_link, step_context
from shardplan.cost.memory import (MemoryBreakdown, hbm_limit, host_memory_per_host, memory_estimate,
                                   offloaded_activation_bytes, offloaded_module_bytes, optimizer_state_params,
                                   runtime_owned)
from shardplan.cost.pipeline import EQUAL_PASSES_W_SHARE, boundary_message_bytes, bubble_s, stall_rule, stall_s
from shardplan.errors import ConfigError
from shardplan.parallel import Layout, ParallelConfig, named_remat, recomputed_layers, validate
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, PrecisionPolicy, TrainingSpec

__all__ = ["Collective", "Estimate", "estimate", "estimate_layout"]


def host_memory_failure(hw: HardwareSpec, n_devices: int, per_host: float,
                        without_params: float | None = None) -> str | None:
    """Why offloaded state does not fit in host memory, or None: ``per_host`` bytes (what the busiest host holds for
    its devices, :attr:`Estimate.host_memory_per_host`) against ``HardwareSpec.host_memory_bytes`` (the system
    memory of the platform's datasheet; None: unknown, not checked). The whole system memory is the limit, so the
    check is lenient: the operating system, each rank's process and pinned staging buffers need some of it too. The
    state is divided over the devices, so ``ceil(per_host / limit)`` times as many devices (hosts) hold it.
    ``without_params``: the per-host bytes with the parameters kept on the device (where the framework offloads them
    apart from the optimizer), named when they fit."""
    limit = hw.host_memory_bytes
    if not limit or per_host <= limit:
        return None
    share = min(n_devices, hw.host_devices)
    digits = 0 if limit >= 10 * 2**30 else 2
    less = (f"without --offload-params ({without_params / 2**30:,.1f} GiB per host), or "
            if without_params is not None and without_params <= limit else "")
    return (f"the offloaded state needs {per_host / 2**30:,.1f} GiB of host memory on one host ({share} device"
            f"{'s' if share != 1 else ''}), {per_host / limit - 1:.0%} over the {limit / 2**30:,.{digits}f} GiB one "
            f"{hw.name} host has (host_memory_bytes): it fits {less}on about {math.ceil(per_host / limit)}x as "
            "many devices (the state is sharded over them)")


@dataclass
class Estimate:
    """Everything the planner predicts for one layout. Times in seconds, memory in bytes.

    ``compute_s`` is the device work of the step's microbatches: matmul + element-wise + recompute
    (the profile's fixed per-layer costs are in ``overhead_s``, not here). ``overhead_s`` (the framework
    overhead of the step) includes, per step: ``stall_s``, the pipeline
    message stall (:func:`shardplan.cost.pipeline.message_stall_s`; ``stall_rule`` names its trigger),
    ``host_floor_s``, the host issue floor above the device time (:func:`host_floor_s` x microbatches),
    ``allocator_retry_s``, the caching allocator's retries near full HBM (:func:`allocator_retry_s`
    x microbatches), and ``fixed_overhead_s``, the profile's fixed costs (``layer_overhead_s`` per layer and
    ``moe_expert_overhead_s`` / ``moe_layer_overhead_s`` per microbatch, ``microbatch_overhead_s`` per
    microbatch, ``step_overhead_s`` per step); the four add up to ``overhead_s``. The bubble grows with the last two as well, as they lengthen each microbatch.
    ``offload_s`` is the exposed time of activation offloading and ``param_offload_s`` that of the offloaded
    parameter shards' copies to the device before each ZeRO-3 gather (:func:`shardplan.cost.axes.dp.host_copy_s`),
    both per step.
    ``priced_stage`` is the pipeline stage whose compute the step prices (the slowest; 0 without pp).
    ``hbm_usable`` is the HBM the tensors may fill: the fit limit (:func:`shardplan.cost.memory.hbm_limit`)
    less the hardware's reserve, or the whole limit when the framework profile's runtime terms (context,
    fragmentation) are already in ``memory.total``.
    """

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
    overhead_s: float = 0.0
    overlap_slowdown_s: float = 0.0
    offload_s: float = 0.0
    param_offload_s: float = 0.0
    stall_s: float = 0.0
    stall_rule: str | None = None
    host_floor_s: float = 0.0
    allocator_retry_s: float = 0.0
    fixed_overhead_s: float = 0.0
    priced_stage: int = 0
    #: the attention core's share of ``matmul_s`` (s; :attr:`~shardplan.cost.compute.StageCompute.attention_s`)
    attention_s: float = 0.0

    @property
    def hbm_fit_limit(self) -> float:
        """Bytes ``fits`` compares :attr:`MemoryBreakdown.total` with: the usable HBM plus the hardware reserve that
        ``total`` itself counts (:attr:`MemoryBreakdown.reserve`, 0 where the profile's runtime terms replace it), so
        the peak band (``peak_low`` / ``peak_high``, which count it too) is compared on the same footing."""
        return self.hbm_usable + self.memory.reserve

    @property
    def parallel(self) -> ParallelConfig:
        """The validated layout (dp and dp_shard filled in)."""
        return self.layout.parallel

    @property
    def host_memory_per_host(self) -> float:
        """Bytes of host memory the busiest host holds for the devices it drives: their offloaded model state and
        activations (:func:`shardplan.cost.memory.host_bytes_by_stage`), each stage's ranks on that host counted
        (:func:`shardplan.cost.memory.host_memory_per_host`); 0 without offloading."""
        return host_memory_per_host(self.model, self.training, self.layout, self.hardware.host_devices)

    @property
    def failure(self) -> str | None:
        """Why the framework is predicted to fail for a reason other than HBM, or None: the layout's own
        (:attr:`shardplan.parallel.Layout.failure`), else offloaded state larger than a host's memory
        (:func:`host_memory_failure`)."""
        if self.layout.failure:
            return self.layout.failure
        per_host = self.host_memory_per_host
        if not self.hardware.host_memory_bytes or per_host <= self.hardware.host_memory_bytes:
            return None
        p, without = self.parallel, None
        if p.offload_params and self.training.framework.param_offload == "independent":  # DeepSpeed's offload_param
            kept = replace(self.layout, parallel=p.model_copy(update={"offload_params": False}))
            without = host_memory_per_host(self.model, self.training, kept, self.hardware.host_devices)
        return host_memory_failure(self.hardware, self.layout.n_devices, per_host, without)

    @property
    def runs(self) -> bool:
        """Predicted to train: it fits in memory and no other failure is predicted."""
        return self.fits and self.failure is None

    @property
    def bound_by(self) -> str:
        """What limits the layout: 'memory' when it does not fit in HBM (it does not run at all), else :attr:`bound`,
        the step's largest part (README "bound by")."""
        return self.bound if self.fits else "memory"

    @property
    def mfu_of_bf16_peak(self) -> float:
        """MFU against the device's dense bf16 peak (``mfu`` is against the peak of the precision's compute
        dtype: an NVFP4 run's 10% of the fp4 peak is 40% of a 4x lower bf16 peak), so runs in different
        precisions compare: ``mfu x peak(compute dtype) / peak(bf16)``."""
        return self.mfu * self.hardware.peak_flops(self.training.precision.compute_dtype) / self.hardware.peak_flops_bf16

    def to_dict(self) -> dict:
        """The JSON object printed by ``shardplan estimate --json``."""
        p = self.parallel
        return {
            "model": {"name": self.model.name, "n_params": self.model.n_params,
                      "n_active_params": self.model.n_active_params},
            "hardware": {"name": self.hardware.name, "devices": self.layout.n_devices,
                         "compute_arch": self.hardware.compute_arch,
                         "hbm_bytes": self.hardware.hbm_bytes, "hbm_usable_bytes": self.hbm_usable,
                         "host_memory_bytes": self.hardware.host_memory_bytes},
            "training": {"seq_len": self.training.seq_len, "global_batch_size": self.training.global_batch_size,
                         "global_batch_tokens": self.training.global_batch_tokens,
                         "precision": self.training.precision.name, "attention": self.training.attention,
                         "dropout": self.training.dropout,
                         "optimizer_dtype": self.training.optimizer_dtype, "moe_routing": self.training.moe_routing,
                         "moe_capacity_factor": self.training.moe_capacity_factor,
                         "moe_imbalance": self.training.moe_imbalance,
                         "microbatches": self.layout.microbatches,
                         "framework": self.training.framework.spec,
                         # 1 where the profile's memory-limited schedule (or the profile) gathers one ZeRO-3 unit at a time
                         "zero3_gather_buffers": self.training.framework.zero3_gather_buffers},
            "parallel": p.model_dump(mode="json"),
            "stage_layers": list(self.layout.stage_layers),
            "memory_bytes": self.memory.to_dict(), "memory_peak_phase": self.memory.peak_phase,
            "memory_notes": list(self.memory.notes),
            # what one host holds for its devices' offloaded state (0 without offloading)
            "host_memory_per_host_bytes": self.host_memory_per_host,
            "fits": self.fits,  # in HBM; "runs" also needs no other predicted failure (e.g. host memory)
            "failure": self.failure, "runs": self.runs,
            "time_s": {"step": self.step_s, "compute": self.compute_s, "matmul": self.matmul_s,
                       "attention_core": self.attention_s,
                       "elementwise": self.elementwise_s, "recompute": self.recompute_s,
                       "exposed_comm": self.exposed_comm_s, "bubble": self.bubble_s,
                       "optimizer": self.optimizer_s, "framework_overhead": self.overhead_s,
                       "overlap_slowdown": self.overlap_slowdown_s, "activation_offload": self.offload_s,
                       "parameter_offload": self.param_offload_s,
                       "pipeline_stall": self.stall_s, "host_issue_floor": self.host_floor_s,
                       "allocator_retry": self.allocator_retry_s, "fixed_overhead": self.fixed_overhead_s},
            "collectives": [c.to_dict() for c in self.collectives],
            "model_flops_per_step": self.model_flops_per_step,
            "hardware_flops_per_step": self.hardware_flops_per_step,
            "mfu": self.mfu, "hfu": self.hfu, "mfu_of_bf16_peak": self.mfu_of_bf16_peak,
            "tokens_per_s": self.tokens_per_s,
            "tokens_per_s_per_device": self.tokens_per_s / self.layout.n_devices,
            # bound: the step's largest part were it to run; bound_by: "memory" when the layout does not fit (the
            # "bound by" row of estimate, the report; new-user pass 57 read "compute" beside "fits": false)
            "bound": self.bound, "bound_by": self.bound_by, "thresholds": self.thresholds, "roofline": self.roofline,
        }


def _threshold_info(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, layout: Layout) -> dict:
    """Scaling Book roofline thresholds for this hardware (training.md, gpus.md).

    * critical tokens per data-parallel rank for DP/FSDP to stay compute-bound: C / W of the level
      the data-parallel group crosses, x E / k for MoE (Scaling Book gpus.md "MoE DP": an expert
      sees k / E of the tokens); with expert parallelism an expert sees ep x k / E of a rank's
      tokens, so x E / (k ep), at least 1, and x 1 when no rank holds a replica of another's
      experts (expert data parallelism 1: no expert gradients to reduce);
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
    moe_factor = (max(1.0, model.n_experts / (model.top_k * p.ep)) if model.is_moe and layout.expert_dp > 1
                  else 1.0)
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
    plans it keeps). Composition (module docstring): the slowest stage's microbatch = its compute
    + the exposed per-microbatch communication of every axis; the step = m microbatches + bubble +
    exposed per-step communication + optimizer. Under a memory-limited schedule
    (``FrameworkProfile.memory_limited_schedule``, :func:`serialized_gathers`) a ZeRO-3 layout that does not fit
    is priced again with one gather buffer and exposed AllGathers, and that estimate is returned if it fits.
    """
    training = routable(training, layout, model)
    est = _estimate_once(model, hw, training, layout, detail)
    serial = None if est.fits else serialized_gathers(training, layout)
    if serial is None:
        return est
    retry = _estimate_once(model, hw, serial, layout, detail)
    return retry if retry.fits else est


def routable(training: TrainingSpec, layout: Layout, model: ModelSpec) -> TrainingSpec:
    """``training`` with a dropless ``moe_imbalance`` held to what routing can put on one expert rank of this layout
    (:func:`shardplan.parallel.max_moe_imbalance`: 1 without expert parallelism, where one rank holds every expert):
    a search prices every ep with the imbalance a user gives for the one they run (``estimate`` refuses more than the
    bound on its own layout, :func:`shardplan.parallel.check_moe_imbalance`)."""
    from shardplan.parallel import max_moe_imbalance
    if not model.is_moe or training.moe_capacity_factor is not None:
        return training
    bound = max_moe_imbalance(layout.parallel, model)
    return training if training.moe_imbalance <= bound else training.model_copy(update={"moe_imbalance": bound})


def serialized_gathers(training: TrainingSpec, layout: Layout) -> TrainingSpec | None:
    """``training`` with one ZeRO-3 gather buffer (``FrameworkProfile.zero3_gather_buffers`` = 1: no prefetch,
    every AllGather exposed) where the framework schedules under the memory limit
    (``memory_limited_schedule``, XLA's latency-hiding scheduler) and the layout gathers per microbatch with
    two buffers (ZeRO-3, not ``zero3_gather='per_step'``, not a stage held unsharded under pipelining,
    ``pp_unsharded_grad_bytes``); None otherwise."""
    fw, p = training.framework, layout.parallel
    if (not fw.memory_limited_schedule or fw.zero3_gather_buffers == 1 or p.zero_stage != 3
            or p.zero3_gather == "per_step" or (p.pp > 1 and fw.pp_unsharded_grad_bytes)):
        return None
    return training.model_copy(update={"framework": fw.model_copy(update={"zero3_gather_buffers": 1})})


def _estimate_once(model: ModelSpec, hw: HardwareSpec, training: TrainingSpec, layout: Layout,
                   detail: bool) -> Estimate:
    """:func:`estimate_layout` with the profile as given (no memory-limited retry)."""
    ctx = step_context(model, hw, training, layout)
    colls, dp = communication(ctx)
    m, fw = layout.microbatches, training.framework
    slow_mb, slow_step = overlap_slowdown(ctx, colls)
    in_dp = {id(c) for c in dp.collectives}  # counted in dp.per_microbatch / per_step (the tied-embedding
    # all-reduce among them has axis pp)
    offload_mb = activation_offload_s(model, training, layout, hw, ctx.stage.total_s, ctx.stage.stage)
    T_mb = (ctx.stage.total_s + dp.per_microbatch + sum(c.exposed_s for c in colls if id(c) not in in_dp) / m
            + fw.microbatch_overhead_s + slow_mb + offload_mb + dp.host_copy_per_microbatch)
    mem = memory_estimate(model, training, layout, reserve=hw.hbm_bytes - hw.usable_hbm_bytes())
    # profile terms outside the device's work: the host's issue floor and allocator retries near full
    # HBM per microbatch, pipeline message stalls per step (0 for the Megatron-LM default)
    floor_mb = max(T_mb, host_floor_s(ctx)) - T_mb
    retry_mb = allocator_retry_s(fw, mem.total / hw.hbm_bytes)
    T_mb += floor_mb + retry_mb
    st = ctx.stage
    w_share = st.wgrad_s / st.total_s if st.total_s > 0 else EQUAL_PASSES_W_SHARE  # the W pass ZB-H1 defers
    bubble = bubble_s(layout.parallel, T_mb, layout.stage_layers, w_share, m)
    opt_s = optimizer_s(ctx)
    rule = stall_rule(layout, fw, nodes(ctx), tp_nodes(ctx),
                      boundary_message_bytes(layout, model.d_model, training.precision.activation_bytes))
    stall = 0.0 if rule is None else stall_s(layout, fw)
    step = m * T_mb + bubble + dp.per_step + opt_s + fw.step_overhead_s + slow_step + stall
    tokens = training.global_batch_tokens
    mf = F.model_flops_per_token(model, training.seq_len, training.causal) * tokens
    hf = mf + tokens * hardware_extra_flops_per_token(model, training, layout)
    peak_total = layout.n_devices * hw.peak_flops(training.precision.compute_dtype)
    fixed = m * (st.overhead_s + fw.microbatch_overhead_s) + fw.step_overhead_s
    overhead = fixed + m * (floor_mb + retry_mb) + stall
    slowdown = m * slow_mb + slow_step
    limit = hbm_limit(hw.hbm_bytes, fw)
    return Estimate(
        model=model, hardware=hw, training=training, layout=layout, memory=mem,
        fits=mem.total <= limit,
        hbm_usable=limit - (0.0 if runtime_owned(fw) else hw.hbm_bytes - hw.usable_hbm_bytes()), step_s=step,
        compute_s=m * (st.total_s - st.overhead_s), matmul_s=m * st.matmul_s, attention_s=m * st.attention_s,
        elementwise_s=m * st.elementwise_s,
        recompute_s=m * st.recompute_s, exposed_comm_s=sum(c.exposed_s for c in colls), bubble_s=bubble,
        optimizer_s=opt_s, collectives=colls, model_flops_per_step=mf, hardware_flops_per_step=hf,
        mfu=mf / (step * peak_total), hfu=hf / (step * peak_total), tokens_per_s=tokens / step,
        bound=bottleneck(ctx, colls, bubble, opt_s, overhead, slowdown, floor_binds=floor_mb > 0,
                         overhead_parts=dict(zip(OVERHEAD_PARTS, (fixed, m * floor_mb, m * retry_mb, stall))),
                         param_offload_s=m * dp.host_copy_per_microbatch),
        thresholds=_threshold_info(model, training, hw, layout) if detail else {},
        roofline=_roofline(model, training, hw, layout.parallel, layout.local_tokens, ctx.dense_t, colls,
                           hf / layout.n_devices)
        if detail else [], overhead_s=overhead, overlap_slowdown_s=slowdown, offload_s=m * offload_mb,
        param_offload_s=m * dp.host_copy_per_microbatch, stall_s=stall, stall_rule=rule, host_floor_s=m * floor_mb,
        allocator_retry_s=m * retry_mb, fixed_overhead_s=fixed, priced_stage=ctx.stage.stage)


def hardware_extra_flops_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """FLOPs per token the hardware runs beyond the model FLOPs (the HFU numerator's extra, PaLM Appendix B):
    the layers' recomputation (:func:`shardplan.cost.flops.recompute_flops_per_token`, times the recomputed
    share of the layers under ``recompute_layers``) and, with ``FrameworkProfile.loss_chunks`` > 1, the LM
    head's forward once more per prediction depth (2 h V per token: the backward re-runs each chunk's logits)."""
    p, fw = layout.parallel, training.framework
    rshare = (sum(recomputed_layers(p, n) for n in layout.stage_layers) / max(1, sum(layout.stage_layers))
              if p.recompute == "full" else 1.0)
    saved = named_remat(p, fw.selective_recompute)  # MaxText's 'minimal' is full remat keeping the named outputs
    extra = rshare * F.recompute_flops_per_token(model, training.seq_len, "full" if saved is not None else p.recompute,
                                                 training.causal, training.attention, fw.selective_recompute,
                                                 p.recompute_modules, saved or ())
    if fw.loss_chunks > 1:
        extra += (1 + model.mtp_modules) * 2.0 * model.d_model * model.vocab_size
    return extra


def host_floor_s(ctx: StepContext) -> float:
    """Seconds the host needs to issue one microbatch on the busiest stage: its layers x
    :func:`shardplan.cost.axes.tp.host_seconds_per_layer`. The microbatch cannot run faster
    (an eager framework's CPU runs ahead of the GPU only while the GPU has more to do); 0 for
    profiles without host costs (Megatron-LM default)."""
    per_layer = tp_axis.host_seconds_per_layer(ctx)
    return max(ctx.layout.stage_layers) * per_layer if per_layer > 0 else 0.0


def job_nodes(n_devices: int, hw: HardwareSpec) -> int:
    """Nodes a job of ``n_devices`` spans: devices / scale-up domain size, rounded up."""
    return -(-n_devices // hw.scale_up_size)


def nodes(ctx: StepContext) -> int:
    """Nodes the job of ``ctx`` spans (:func:`job_nodes`)."""
    return job_nodes(ctx.layout.n_devices, ctx.hw)


def tp_nodes(ctx: StepContext) -> int:
    """Scale-up domains (nodes) one tensor-parallel group spans: tp is the innermost axis, so its
    ranks are consecutive (:func:`shardplan.cost.comm.group_split` at stride 1)."""
    return group_split(ctx.p.tp, 1, ctx.hw.scale_up_size)[1]


def allocator_retry_s(fw: FrameworkProfile, pressure: float) -> float:
    """Seconds per microbatch the caching allocator loses near full HBM: ``allocator_retry_s`` x the
    ramp ``(pressure - start) / (1 - start)`` clipped to [0, 1], ``pressure`` = predicted device
    usage / HBM, ``start`` = ``allocator_pressure_start``. When ``cudaMalloc`` fails, PyTorch's
    caching allocator synchronizes, frees its cached blocks and retries (``torch.cuda.memory_stats``
    ``num_alloc_retries``; PyTorch "CUDA semantics: memory management"), every microbatch once the
    working set no longer fits beside the cache. Example: start 0.85, 1 s, pressure 0.94: 0.6 s."""
    if fw.allocator_retry_s == 0 or pressure <= fw.allocator_pressure_start:
        return 0.0
    return fw.allocator_retry_s * min(1.0, (pressure - fw.allocator_pressure_start) / (1 - fw.allocator_pressure_start))


def communication(ctx: StepContext) -> tuple[list[Collective], dp_axis.DataParallelCost]:
    """Every collective of one step, axis by axis (tp, cp, ep, pp, dp), and the dp exposure."""
    dp = dp_axis.collectives(ctx)
    colls = tp_axis.collectives(ctx) + cp_axis.collectives(ctx) + ep_axis.collectives(ctx)
    return colls + pp_axis.collectives(ctx) + dp.collectives, dp


def slowdown_factor(framework: FrameworkProfile, hw: HardwareSpec) -> float:
    """Fraction of overlapped communication time added back to compute: the profile's
    ``overlap_slowdown``, or by default the SM share the communication kernels take from the
    matmuls, ``collective_sms / sm_count`` (H100: 16 / 132 = 0.12; A100: 16 / 108 = 0.15; 0 where
    the hardware has no SM count, e.g. TPUs whose collectives run on the ICI DMA engines)."""
    if framework.overlap_slowdown is not None:
        return framework.overlap_slowdown
    return hw.collective_sms / hw.sm_count if hw.sm_count else 0.0


def overlap_slowdown(ctx: StepContext, colls: list[Collective]) -> tuple[float, float]:
    """Compute time lost to communication that overlaps it, (per microbatch, per step) seconds.

    Overlapped collectives run NCCL kernels that take SMs and HBM bandwidth from the matmuls
    beside them, so hidden communication is not free: ``overlap_slowdown`` (framework profile) x the
    hidden seconds is added back (Rashidi et al. 2021 / Jangda et al. 2022, CoCoNet, measure this
    interference; the factor is fitted, see docs/accuracy.md), ``tp_overlap_slowdown`` for the
    tensor-parallel ones when the profile sets it. Per-step collectives (phase 'step') slow the
    step once; the others slow every microbatch.
    """
    k = slowdown_factor(ctx.training.framework, ctx.hw)
    k_tp = ctx.training.framework.tp_overlap_slowdown
    k_tp = k if k_tp is None else k_tp
    if k == 0 and k_tp == 0:
        return 0.0, 0.0
    factor = {id(c): (k_tp if c.axis == "tp" else k) for c in colls}
    hidden = {id(c): max(0.0, c.time_s - c.exposed_s) for c in colls}  # rounding can leave -1e-18
    per_mb = sum(factor[id(c)] * hidden[id(c)] for c in colls if c.phase != "step") / ctx.m
    per_step = sum(factor[id(c)] * hidden[id(c)] for c in colls if c.phase == "step")
    return per_mb, per_step


def activation_offload_s(model: ModelSpec, training: TrainingSpec, layout: Layout, hw: HardwareSpec,
                         compute_s: float, stage: int = 0) -> float:
    """Exposed seconds per microbatch of activation offloading (``ParallelConfig.offload_activation_layers``, or
    ``offload_modules`` on pipeline stage ``stage``): the offloaded bytes
    (:func:`~shardplan.cost.memory.offloaded_activation_bytes`, :func:`~shardplan.cost.memory.offloaded_module_bytes`)
    go to the host during the
    forward and come back during the backward over ``HardwareSpec.host_bandwidth`` (datasheet rate, no
    efficiency factor: an optimistic bound), each copy on its own stream beside that pass's compute
    (Transformer Engine's CPU offload handler); a copy longer than its pass is exposed by the difference. The
    forward is a third of the stage's microbatch compute ``compute_s`` and the backward two thirds
    (Narayanan et al. 2021 Sec. 5.1: backward = 2 x forward). 0 without offloading.

    Raises:
        ConfigError: offloading on hardware without a ``host_bandwidth``.
    """
    p = layout.parallel
    if not p.offload_activation_layers and not p.offload_modules:
        return 0.0
    field, value = (("offload_activation_layers", p.offload_activation_layers) if p.offload_activation_layers
                    else ("offload_modules", ",".join(p.offload_modules or ())))
    moved = offloaded_activation_bytes(model, training, layout) + offloaded_module_bytes(model, training, layout, stage)
    copy = moved / require_host_link(hw, field, value)
    return max(0.0, copy - compute_s / 3) + max(0.0, copy - 2 * compute_s / 3)


def adam_bytes_per_param(prec: PrecisionPolicy) -> int:
    """Bytes a fused AdamW update moves per parameter (memory-bound, cost_models note 10.6): it reads and writes the
    weights, the master weights and both moments and reads the gradient, 2 (param + master + moments) + grad. E.g.
    bf16-mixed (2, 4, 8, 2): 2 x 14 + 2 = 30 B; bf16 weights and Adam state (2, 0, 4, 2): 14 B."""
    return 2 * (prec.param_bytes + prec.master_bytes + prec.optimizer_bytes) + prec.grad_bytes


#: bytes per parameter of the state DeepSpeed's CPU-Adam rate was measured with (16-bit weights and gradients, fp32
#: master weights and moments: :func:`adam_bytes_per_param` of bf16-mixed, 30 B); ``FrameworkProfile.
#: host_adam_params_per_s`` is a rate at this size
HOST_ADAM_REFERENCE_BYTES = adam_bytes_per_param(PRECISION_POLICIES["bf16-mixed"])


def optimizer_s(ctx: StepContext) -> float:
    """Seconds of a memory-bound fused AdamW over the local (ZeRO-sharded) parameters
    (:func:`shardplan.cost.memory.optimizer_state_params`): it reads
    and writes params, master weights and both moments and reads the gradients once
    (cost_models note 10.6). With the optimizer offloaded to the host (ZeRO-Offload, Ren et al.
    2021 Sec. 4.1: gradients go to the host, the updated parameters come back), the two copies
    over the host link instead: (grad_bytes + param_bytes) x local parameters / host_bandwidth, then
    the host's update of every local parameter of the GPUs that share it (min(devices, devices_per_host)
    x local parameters / ``FrameworkProfile.host_adam_params_per_s``, on GPUs, scaled by the bytes the update moves
    per parameter over :data:`HOST_ADAM_REFERENCE_BYTES` (bf16 weights and Adam state: 2 x (2 + 0 + 4) + 2 = 14 B,
    0.47 x the time of fp32 state; a memory-bound update, as on the device); not priced where the
    profile gives no rate). Example: an 8B model under ZeRO-3 on 8 GPUs of one host, DeepSpeed CPU-Adam
    at 1.6e9 parameters/s: 8 x 1.0e9 / 1.6e9 = 5.0 s per step.
    With the parameter shards offloaded (``ParallelConfig.offload_params``) the host updates them in
    place, so only the gradients cross the link; with them offloaded but the optimizer on the device, the updated
    shard is copied out once more (param_bytes x local parameters / host_bandwidth).

    Raises:
        ConfigError: an offloaded optimizer on hardware without a ``host_bandwidth``.
    """
    p, prec = ctx.p, ctx.prec
    params = optimizer_state_params(ctx.training, ctx.layout, ctx.stage.params)
    # offloaded parameter shards are updated where they live: with the optimizer on the host no parameter copy comes
    # back; with it on the device the updated shard goes out to the host once
    on_host = p.offload_params
    per_param = adam_bytes_per_param(prec)
    if p.offload_optimizer:
        moved = prec.grad_bytes + (0 if on_host else prec.param_bytes)
        copies = moved * params / require_host_link(ctx.hw, "offload_optimizer", True)
        rate = ctx.training.framework.host_adam_params_per_s
        if rate is None or ctx.hw.kind != "gpu":
            return copies
        sharing = min(ctx.layout.n_devices, ctx.hw.host_devices)
        # the host's update is memory-bound like the device's: its rate is for HOST_ADAM_REFERENCE_BYTES per parameter
        return copies + sharing * params / rate * per_param / HOST_ADAM_REFERENCE_BYTES
    out = prec.param_bytes * params / require_host_link(ctx.hw, "offload_params", True) if on_host else 0.0
    return per_param * params / (ctx.hw.hbm_bandwidth * ctx.hw.hbm_efficiency) + out


#: the parts of the framework overhead, in the order :func:`estimate_layout` passes them to :func:`bottleneck`
OVERHEAD_PARTS = ("fixed per-layer and per-microbatch costs", "host issue floor", "allocator retries",
                  "pipeline message stalls")

#: the bound named when the host issue floor sets the microbatch time (:func:`host_floor_s`)
HOST_FLOOR_BOUND = "host issue floor (the framework's CPU issues each microbatch slower than the GPU runs it)"


def bottleneck(ctx: StepContext, colls: list[Collective], bubble: float, opt_s: float, overhead_s: float = 0.0,
               slowdown_s: float = 0.0, floor_binds: bool = False, overhead_parts: dict | None = None,
               param_offload_s: float = 0.0) -> str:
    """The largest part of the step: matmul FLOPs, HBM traffic, the host optimizer (an offloaded optimizer's copies
    and CPU update, :func:`optimizer_s`), recompute, bubble, one axis's
    exposed communication (named with the network level it crosses), the exposed communication of
    several axes together when their sum outweighs every non-communication part, the framework profile's
    overhead ``overhead_s`` (host issue floor, pipeline stalls, allocator retries; seconds per step)
    or the overlap slowdown ``slowdown_s`` (seconds per step). When the host issue floor sets the
    microbatch time (``floor_binds``) it is the bound whatever the largest part: nothing on the GPU
    side shortens such a step (:data:`HOST_FLOOR_BOUND`). ``overhead_parts`` (name: seconds per step) splits
    ``overhead_s``; the overhead bound names its largest part. ``param_offload_s``: the exposed copies of offloaded
    parameter shards (seconds per step), a host-link part of their own, as the offloaded optimizer's is."""
    if floor_binds:
        return HOST_FLOOR_BOUND
    m, st = ctx.m, ctx.stage
    largest = max(overhead_parts, key=overhead_parts.get) if overhead_parts else None  # type: ignore[arg-type]
    overhead_name = (f"framework overhead ({largest})" if largest and overhead_parts[largest] > 0  # type: ignore[index]
                     else "framework overhead (host issue, pipeline stalls, allocator)")
    # an offloaded optimizer or parameter shards use the host link: their step part is not HBM traffic
    offloaded = ctx.p.offload_optimizer or ctx.p.offload_params
    parts = {"compute (matmul FLOPs)": m * st.matmul_s,
             "HBM bandwidth (element-wise + optimizer)": m * st.elementwise_s + (0.0 if offloaded else opt_s),
             "host optimizer (offloaded states: the copies and the CPU's update)": opt_s if offloaded else 0.0,
             "host link (offloaded parameter shards copied in before each gather)": param_offload_s,
             "recompute": m * st.recompute_s, "pipeline bubble": bubble,
             overhead_name: overhead_s,
             "overlap slowdown (communication kernels beside the matmuls)": slowdown_s}
    by_axis: dict[str, float] = defaultdict(float)
    levels: dict[str, str] = {}
    weight: dict[str, tuple[float, float]] = {}
    for c in colls:
        by_axis[c.label] += c.exposed_s
        # the axis is named with the level of its costliest collective (a group-of-one expert-gradient collective,
        # 'local', listed last, named "dp over local" for a dp whose exposed time crossed the network: new user 56)
        if c.label not in weight or (c.exposed_s, c.time_s) > weight[c.label]:
            weight[c.label], levels[c.label] = (c.exposed_s, c.time_s), c.level
    largest_other = max(parts.values())
    for axis, e in by_axis.items():
        parts[f"{axis} communication ({levels[axis]})"] = e
    exposed = {a: e for a, e in by_axis.items() if e > 0}
    if len(exposed) > 1 and sum(exposed.values()) > largest_other:
        # no single axis outweighs the compute, but the exposed communication together does: name it so
        axes = sorted(exposed, key=exposed.get, reverse=True)  # type: ignore[arg-type]
        return "communication (" + ", ".join(f"{a} over {levels[a]}" for a in axes) + ")"
    return max(parts, key=parts.get)  # type: ignore[arg-type]


def _roofline(model: ModelSpec, training: TrainingSpec, hw: HardwareSpec, p: ParallelConfig, u: float,
              lt: LayerTimes, collectives: list[Collective], step_flops: float) -> list[dict]:
    """Operations of the layout placed on the roofline: arithmetic intensity (FLOPs per byte moved
    over the resource that feeds them) and achieved FLOP/s, with the resource's ridge point C / W.
    A collective's intensity is the FLOPs one device computes per step (``step_flops``: the hardware FLOPs of the
    step over the devices, recompute and every layer kind included: an MoE's experts, not a dense layer's MLP) over
    the bytes it sends per step: above the ridge its time fits inside the compute's (Williams et al. 2009)."""
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
    for c in _merge_phases(collectives):
        if c.bytes_per_device <= 0:
            continue
        bw = hw.scale_up_bandwidth if c.level in ("NVLink", "ICI") else hw.scale_out_bandwidth
        flops_hidden = layer_flops * p.tp if c.axis == "tp" else layer_flops
        calls = max(c.count, 1.0)
        per_call_bytes = c.bytes_per_device / calls
        intensity = step_flops / c.bytes_per_device  # the step's FLOPs per byte the collective sends
        out.append(dict(name=f"{c.op} {c.label} ({c.purpose})", resource=c.level, intensity=intensity,
                        ridge=C / bw, bound="compute" if intensity > C / bw else c.level,
                        bytes_per_call=per_call_bytes, flops_hidden=flops_hidden))
    return out


def _merge_phases(collectives: list[Collective]) -> list[Collective]:
    """One record per (op, axis, purpose, replicas): the passes of one collective summed (count,
    bytes, seconds), for views that place each collective kind once (roofline)."""
    merged: dict[tuple, Collective] = {}
    for c in collectives:
        key = (c.op, c.axis, c.purpose, c.replicas)
        prev = merged.get(key)
        merged[key] = c if prev is None else replace(
            prev, count=prev.count + c.count, bytes_per_device=prev.bytes_per_device + c.bytes_per_device,
            time_s=prev.time_s + c.time_s, exposed_s=prev.exposed_s + c.exposed_s, level=c.level)
    return list(merged.values())
