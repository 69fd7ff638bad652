"""Pipeline parallelism: the bubble of each schedule and the microbatches a stage holds in flight.

Sources: Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM"), Sec. 2.2.1 (GPipe / 1F1B bubble (p-1) t_mb, 1F1B holds at most p
microbatches) and Sec. 2.2.2 (interleaved: bubble / v); Qi et al. 2023 ("Zero Bubble Pipeline
Parallelism"), Sec. 3, Table 2 and Appendix H (ZB-H1: bubble (p-1)(T_F + T_B - T_W), (p-1) t_mb / 3 when
T_F = T_B = T_W, the weight-gradient pass's own share otherwise; peak memory of 1F1B);
Korthikanti et al. 2022 Sec. 4.2.3 (interleaving multiplies the first stage's in-flight
activations by 1 + (p-1)/(p v)); DeepSeek-AI 2024 ("DeepSeek-V3 Technical Report") Sec. 3.2.1 and
Table 2, as deepseek-ai/DualPipe's README (DualPipe: bubble (p/2-1)(F&B + B - 3W), 2x parameters,
p+1 microbatches of activations). The schedule simulator drawn by the guide is
:mod:`shardplan.cost.pipeline_schedule`.
"""

from __future__ import annotations

import math

from shardplan.parallel import Layout, ParallelConfig
from shardplan.specs.framework import FrameworkProfile


def effective_virtual_stages(parallel: ParallelConfig, stage_layers: tuple[int, ...] | None = None) -> float:
    """Interleaving factor of the bubble: ``v`` when every stage splits into v equal chunks; with
    chunks of unequal size (``virtual_stages`` not dividing a stage's layers, chunked as
    :func:`shardplan.parallel.chunk_layers` says) the heaviest stage's largest chunk sets the tick,
    ``L / ceil(L / v)`` with L that stage's layers (e.g. 7 layers in 4 chunks of 2, 2, 2, 1: 3.5)."""
    v = parallel.virtual_stages
    if parallel.schedule != "interleaved" or not stage_layers:
        return float(v)
    heaviest = max(stage_layers)
    return heaviest / math.ceil(heaviest / v)


#: DualPipe's bubble per (p/2 - 1), in microbatch times F + B: (F&B + B - 3W) / (F + B) with the paired
#: forward-and-backward chunk F&B taking F + B (the overlap hides communication, not compute), B = 2F (input and
#: weight gradients, a forward's matmuls each) and W = F: (3F + 2F - 3F) / 3F = 2/3 (DeepSeek-V3 Table 2)
DUALPIPE_BUBBLE = 2.0 / 3.0


#: the weight-gradient share of a microbatch's forward + backward when every pass costs the same (T_F = T_B = T_W:
#: the forward's matmuls, the input-gradient's and the weight-gradient's each; Qi et al. 2023 Sec. 3)
EQUAL_PASSES_W_SHARE = 1.0 / 3.0


def zero_bubble_fraction(pp: int, w_share: float, microbatches: int | None = None) -> float:
    """ZB-H1's bubble in microbatch times: ``(p-1)(1 - 2w)`` (Qi et al. 2023, Table 2: ``(p-1)(T_F + T_B - T_W)``
    with ``w = T_W / (T_F + T_B + T_W)``), and with fewer microbatches than stages ``(p-1)(1 - w) - (m-1) w``
    (their Appendix H: one iteration takes ``(m+p-1)(T_F + T_B) + T_W``, of which ``m (T_F + T_B + T_W)`` is
    work). Both are ``(p-1)(1-w) - min(m-1, p-1) w``. Example: p=8, w=0.25, m=24: 7 x 0.5 = 3.5 microbatch
    times (1F1B: 7); m=2: 7 x 0.75 - 0.25 = 5.0. With ``w`` = 1/3 and m >= p: (p-1)/3."""
    m = pp if microbatches is None else microbatches
    return (pp - 1) * (1.0 - w_share) - min(m - 1, pp - 1) * w_share


def bubble_fraction(parallel: ParallelConfig, stage_layers: tuple[int, ...] | None = None,
                    w_share: float = EQUAL_PASSES_W_SHARE, microbatches: int | None = None) -> float:
    """Bubble of one step in units of one microbatch's forward + backward on one stage.

    ``(p-1)`` for GPipe and 1F1B, ``(p-1)/v`` interleaved (v from :func:`effective_virtual_stages`
    when ``stage_layers`` is given), :func:`zero_bubble_fraction` for zero-bubble (ZB-H1; ``w_share`` the
    weight-gradient GEMMs' share of the microbatch, ``microbatches`` per flush; (p-1)/3 at the default
    1/3 and m >= p), ``(p/2-1) x 2/3`` DualPipe (:data:`DUALPIPE_BUBBLE`), 0 without pipeline
    parallelism (sources in the module docstring); times ``pipeline_flushes``, since every flush fills and
    drains the pipeline again (e.g. pp=4, interleaved v=8, 4 flushes: 4 x 3/8 = 1.5 microbatch times).

    Raises:
        KeyError: never for a validated :class:`ParallelConfig` (schedule is a Literal).
    """
    p = parallel
    if p.pp == 1:
        return 0.0
    if p.schedule == "interleaved":
        return p.pipeline_flushes * (p.pp - 1) / effective_virtual_stages(p, stage_layers)
    if p.schedule == "dualpipe":
        return p.pipeline_flushes * DUALPIPE_BUBBLE * (p.pp / 2 - 1)
    if p.schedule == "zero-bubble":
        per_flush = None if microbatches is None else max(1, microbatches // p.pipeline_flushes)
        return p.pipeline_flushes * zero_bubble_fraction(p.pp, w_share, per_flush)
    return p.pipeline_flushes * (p.pp - 1) * {"gpipe": 1.0, "1f1b": 1.0}[p.schedule]


def bubble_s(parallel: ParallelConfig, microbatch_s: float, stage_layers: tuple[int, ...] | None = None,
             w_share: float = EQUAL_PASSES_W_SHARE, microbatches: int | None = None) -> float:
    """Pipeline bubble in seconds: :func:`bubble_fraction` x the slowest stage's microbatch time
    ``microbatch_s`` (seconds, forward + backward + exposed per-microbatch communication)."""
    return bubble_fraction(parallel, stage_layers, w_share, microbatches) * microbatch_s


def messages_per_microbatch(parallel: ParallelConfig) -> int:
    """Point-to-point messages the busiest pipeline stage sends or receives per microbatch: per
    virtual stage, activations in and out and their gradients in and out for an inner stage (4),
    one neighbour for the first and last stage (2: the only stages of a two-stage pipeline), so
    ``2 x min(pp - 1, 2) x v``; 0 without pipeline parallelism (Narayanan et al. 2021 Sec. 2.2:
    one send of the activations forward and one of their gradients backward per boundary)."""
    if parallel.pp == 1:
        return 0
    return 2 * min(parallel.pp - 1, 2) * parallel.virtual_stages


def stall_rule(layout: Layout, framework: FrameworkProfile, nodes: int, tp_nodes: int = 1,
               message_bytes: float = 0.0) -> str | None:
    """Which of the profile's triggers makes a pipelined job stall (:func:`message_stall_s`), or None:

    * ``"tp_span"``: the tensor-parallel group spans at least ``pp_stall_min_tp_nodes`` nodes;
    * ``"zero0"``: ZeRO-0 with dp > 1 under a profile that sets ``pp_stall_zero0_min_microbatches``,
      with at least that many microbatches on at least ``pp_stall_zero0_min_nodes`` nodes (and below
      ``pp_stall_zero0_max_nodes``; from there such jobs stall only where every pipeline does);
    * ``"nodes"``: any other job of at least ``pp_stall_min_nodes`` nodes; where the profile sets
      ``pp_stall_all_nodes``, a job below that many nodes only with dp >= ``pp_stall_min_dp`` or a
      stage-boundary message (``message_bytes``: one microbatch's activations, bytes, before any
      sequence-parallel split) of at least ``pp_stall_min_message_bytes`` carrying at least
      ``pp_stall_min_sequences`` sequences (microbatch_size; any where None).

    None without pipeline parallelism or a stall constant (the default)."""
    fw, p = framework, layout.parallel
    if p.pp == 1 or fw.pp_message_stall_s == 0:
        return None
    if fw.pp_stall_min_tp_nodes is not None and tp_nodes >= fw.pp_stall_min_tp_nodes:
        return "tp_span"
    if p.zero_stage == 0 and p.dp > 1 and fw.pp_stall_zero0_min_microbatches is not None:
        if fw.pp_stall_zero0_max_nodes is not None and nodes >= fw.pp_stall_zero0_max_nodes:
            return "nodes" if nodes >= (fw.pp_stall_all_nodes or fw.pp_stall_min_nodes) else None
        return ("zero0" if nodes >= fw.pp_stall_zero0_min_nodes
                and layout.microbatches >= fw.pp_stall_zero0_min_microbatches else None)
    if nodes < fw.pp_stall_min_nodes:
        return None
    if fw.pp_stall_all_nodes is None or nodes >= fw.pp_stall_all_nodes:
        return "nodes"
    big_dp = fw.pp_stall_min_dp is not None and p.dp >= fw.pp_stall_min_dp
    big_message = (fw.pp_stall_min_message_bytes is not None and message_bytes >= fw.pp_stall_min_message_bytes
                   and p.microbatch_size >= (fw.pp_stall_min_sequences or 1))
    return "nodes" if big_dp or big_message else None


def boundary_message_bytes(layout: Layout, model_d: int, activation_bytes: int) -> float:
    """One microbatch's activations at a pipeline stage boundary before any sequence-parallel split,
    bytes: ``b x s x h x`` the activation width (Narayanan et al. 2021 Sec. 2.2 send ``b s h``;
    ``local_tokens`` is ``b x s / cp``). E.g. b=2, s=4096, h=4096, bf16: 67,108,864 B (64 MiB)."""
    return activation_bytes * layout.local_tokens * model_d


def message_stall_s(layout: Layout, framework: FrameworkProfile, nodes: int, tp_nodes: int = 1,
                    message_bytes: float = 0.0) -> float:
    """Seconds per step that blocking pipeline messages add where :func:`stall_rule` finds a trigger
    (jobs of at least ``pp_stall_min_nodes`` nodes, below ``pp_stall_all_nodes`` only those with dp >=
    ``pp_stall_min_dp`` or ``message_bytes`` >= ``pp_stall_min_message_bytes``; tp groups spanning at
    least ``pp_stall_min_tp_nodes`` of the job's nodes, ``tp_nodes``; ZeRO-0 jobs with dp > 1 by
    their own microbatch and node thresholds): :func:`stall_s` then, 0 otherwise and by default."""
    if stall_rule(layout, framework, nodes, tp_nodes, message_bytes) is None:
        return 0.0
    return stall_s(layout, framework)


def stall_s(layout: Layout, framework: FrameworkProfile) -> float:
    """Seconds a stalling pipeline loses per step: ``FrameworkProfile.pp_message_stall_s`` per message
    on the step's critical path, the busiest stage's ``m`` x :func:`messages_per_microbatch` plus
    ``2 (pp - 1)`` for the pipeline's fill and drain (the first microbatch's activations and the last
    one's gradients cross every stage boundary before the busiest stage can start / after it is
    done), once per ``pipeline_flushes``. Example: pp=4, m=8, 0.25 s per message: (8 x 4 + 2 x 3) x 0.25 =
    9.5 s. The constant is measured per cluster and framework (docs/accuracy.md, the nanotron grid)."""
    p = layout.parallel
    fill = 2 * (p.pp - 1) * p.pipeline_flushes
    return framework.pp_message_stall_s * (layout.microbatches * messages_per_microbatch(p) + fill)


def inflight_microbatches(layout: Layout) -> float:
    """Microbatches whose activations the first pipeline stage holds at the peak.

    No pipeline: 1 (gradient accumulation frees each microbatch). GPipe: m. 1F1B and zero-bubble
    ZB-H1: min(m, p) (Narayanan et al. 2021 Sec. 2.2; Qi et al. 2023 Sec. 3: ZB-H1 keeps 1F1B's peak).
    Interleaved: p * (1 + (p-1)/(p*v)), at most m (Korthikanti et al. 2022 Sec. 4.2.3). With
    ``moe_a2a_overlap`` (Combined 1F1B) one more: 2 without pipelining, + 1/v interleaved. m is the
    microbatches of one flush (``pipeline_flushes``: each drains before the next starts). DualPipe: min(m, p + 1)
    on every rank (DeepSeek-V3 Table 2).
    """
    p = layout.parallel
    m = layout.microbatches // p.pipeline_flushes  # each flush runs its own schedule on its share
    if p.pp == 1:
        # Combined 1F1B (moe_a2a_overlap): one microbatch's forward runs beside another's backward
        return float(min(m, 2)) if p.moe_a2a_overlap else 1.0
    if p.schedule == "gpipe":
        return float(m)
    if p.schedule == "interleaved":
        v = effective_virtual_stages(p, layout.stage_layers)
        # Combined 1F1B schedules one more warm-up forward (Megatron-Core schedules.py: "one extra micro-batch
        # forward step before the 1f1b stages"): one more chunk, 1/v of a microbatch's activations
        extra = 1 / v if p.moe_a2a_overlap else 0.0
        return min(float(m), p.pp * (1 + (p.pp - 1) / (p.pp * v)) + extra)
    if p.schedule == "dualpipe":  # DeepSeek-V3 Table 2: p + 1 chunks of activations on every rank
        return float(min(m, p.pp + 1))
    return float(min(m, p.pp))


def stage_inflight(layout: Layout, stage: int) -> float:
    """In-flight microbatches of pipeline stage ``stage``: the first stage's
    (:func:`inflight_microbatches`) minus one per stage further down (1F1B warm-up is p - s - 1
    forwards, Narayanan et al. 2021 Sec. 2.2.1), at least 1; under DualPipe half of a rank's p + 1
    (the other half are chunks of the mirrored stage the rank also runs)."""
    first = inflight_microbatches(layout)
    if layout.parallel.schedule == "dualpipe":
        # every rank holds p + 1 chunks, half of them of its stage and half of the mirrored one (its other direction)
        return first / 2
    return first if stage == 0 else max(1.0, first - stage)
