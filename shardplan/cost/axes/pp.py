"""Pipeline parallelism's point-to-point traffic (Narayanan et al. 2021 Sec. 2.2): each stage
sends its output activations forward and receives their gradients backward, once per microbatch
and virtual stage (interleaving multiplies the sends by v, ibid. Sec. 2.2.2). The message is the
local activations ``beta u h / sigma`` (sigma = tp with sequence parallelism: Megatron-LM sends the
sequence shard). Exposed, except under an interleaved schedule in a profile that overlaps them
(``FrameworkProfile.pp_p2p_overlap``, Megatron-LM). Stage ranks are tp x cp x dp apart (pp is the outermost
axis); a pipeline with any boundary across scale-up domains is priced at that boundary (:func:`boundary_stride`).
The bubble and in-flight microbatches are in :mod:`shardplan.cost.pipeline`.

Counted for the busiest rank: a middle rank sends ``v m`` activations and ``v m`` gradients per
step. The first virtual stage sends no gradient back and the last no activations forward (Megatron-LM
``megatron/core/pipeline_parallel/schedules.py``: ``send_backward`` is a no-op on the first stage,
``send_forward`` on the last), so with pp = 2, where every rank holds the first or the last
(virtual) stage, each rank sends ``(2 v - 1) m`` messages: the gradient row counts ``(v - 1) m``.
E.g. 1F1B, pp = 2, m = 4: 4 sends per rank (stage 0 its 4 activations, stage 1 its 4 gradients).
"""

from __future__ import annotations

from dataclasses import replace

from shardplan.cost.axes import LayerCall, tally
from shardplan.cost.collective import Collective
from shardplan.cost.context import StepContext

#: per microbatch and virtual stage
STAGE_BOUNDARY: tuple[LayerCall, ...] = (
    LayerCall("SendRecv", "fwd", "stage output activations to the next stage"),
    LayerCall("SendRecv", "bwd", "gradient of the stage input to the previous stage"),
)


def collectives(ctx: StepContext) -> list[Collective]:
    """The stage-boundary send/recvs of one step (module docstring); [] for pp = 1."""
    p, m = ctx.p, ctx.m
    if p.pp == 1:
        return []
    msg = ctx.prec.activation_bytes * ctx.layout.local_tokens * ctx.model.d_model / ctx.layout.seq_shard
    stride = boundary_stride(ctx)
    counts = [(op, ph, n * sends_per_step(p.pp, m, p.virtual_stages, ph)) for op, ph, n in tally(STAGE_BOUNDARY)]
    purpose = {c.phase: c.what for c in STAGE_BOUNDARY}
    out = [ctx.collective(op, "pp", "stage_io", ph, "layers", msg, 2, stride, count, purpose[ph])
           for op, ph, count in counts if count > 0]
    if p.schedule == "interleaved" and ctx.training.framework.pp_p2p_overlap:
        # sends posted before each chunk's compute and waited for after it (FrameworkProfile.pp_p2p_overlap):
        # only what exceeds the stage's compute of the step is exposed, shared pro rata
        total, hide = sum(c.time_s for c in out), m * ctx.stage.total_s
        keep = max(0.0, total - hide) / total if total > 0 else 0.0
        out = [replace(c, exposed_s=keep * c.time_s, overlap="p2p_overlap") for c in out]
    if p.schedule == "dualpipe":
        # DualPipe hides the sends of its paired forward-backward chunks (DeepSeek-V3 Sec. 3.2.1): only those of the
        # chunks it runs alone stay exposed (shardplan.cost.axes.ep.unpaired_fraction)
        from shardplan.cost.axes.ep import unpaired_fraction
        u = unpaired_fraction(ctx)
        out = [replace(c, exposed_s=u * c.time_s, overlap="dualpipe") for c in out]
    return out


def boundary_stride(ctx: StepContext) -> int:
    """Rank distance at which a stage-boundary send is priced: the stage stride ``tp x cp x dp``, or at least
    the scale-up domain when any boundary of the pipeline crosses domains
    (:func:`shardplan.cost.axes.tp.pipeline_crosses_domains`). Every microbatch crosses every boundary and the
    stages advance together (1F1B's steady state: one forward and one backward per stage per tick; Narayanan
    et al. 2021 Sec. 2.2), so the slowest boundary sets the pace. Example: pure pipeline, pp=16 on two 8-GPU
    nodes: stride 1, but the boundary between stages 7 and 8 crosses the network, so sends are priced there."""
    from shardplan.cost.axes.tp import pipeline_crosses_domains
    p = ctx.p
    stride = p.tp * p.cp * p.dp
    return max(stride, ctx.hw.scale_up_size) if pipeline_crosses_domains(ctx) else stride


def sends_per_step(pp: int, m: int, v: int, phase: str) -> int:
    """Stage-boundary sends of the busiest rank per step in ``phase`` ('fwd': activations, 'bwd':
    gradients): ``v m`` each; with pp = 2 ``(v - 1) m`` gradients (module docstring)."""
    return (v - 1) * m if pp == 2 and phase == "bwd" else v * m
