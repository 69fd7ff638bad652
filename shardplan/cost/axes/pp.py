"""Pipeline parallelism's point-to-point traffic (Narayanan et al. 2021 Sec. 2.2): each stage
sends its output activations forward and receives their gradients backward, once per microbatch
and virtual stage (interleaving multiplies the sends by v, ibid. Sec. 2.2.2). The message is the
local activations ``beta u h / sigma`` (sigma = tp with sequence parallelism: Megatron-LM sends the
sequence shard). Exposed. Stage ranks are tp x cp x dp apart (pp is the outermost axis).
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
    stride = p.tp * p.cp * p.dp
    counts = [(op, ph, n * sends_per_step(p.pp, m, p.virtual_stages, ph)) for op, ph, n in tally(STAGE_BOUNDARY)]
    purpose = {c.phase: c.what for c in STAGE_BOUNDARY}
    out = [ctx.collective(op, "pp", "stage_io", ph, "layers", msg, 2, stride, count, purpose[ph])
           for op, ph, count in counts if count > 0]
    if p.schedule == "dualpipe":
        # DualPipe hides the sends of its paired forward-backward chunks (DeepSeek-V3 Sec. 3.2.1): only those of the
        # chunks it runs alone stay exposed (shardplan.cost.axes.ep.unpaired_fraction)
        from shardplan.cost.axes.ep import unpaired_fraction
        u = unpaired_fraction(ctx)
        out = [replace(c, exposed_s=u * c.time_s, overlap="dualpipe") for c in out]
    return out


def sends_per_step(pp: int, m: int, v: int, phase: str) -> int:
    """Stage-boundary sends of the busiest rank per step in ``phase`` ('fwd': activations, 'bwd':
    gradients): ``v m`` each; with pp = 2 ``(v - 1) m`` gradients (module docstring)."""
    return (v - 1) * m if pp == 2 and phase == "bwd" else v * m
