"""Pipeline parallelism's point-to-point traffic (Narayanan et al. 2021 Sec. 2.2): each stage
sends its output activations forward and receives their gradients backward, once per microbatch
and virtual stage (interleaving multiplies the sends by v, ibid. Sec. 2.2.2). The message is the
local activations ``beta u h / sigma`` (sigma = tp with sequence parallelism: Megatron-LM sends the
sequence shard). Exposed. Stage ranks are tp x cp x dp apart (pp is the outermost axis).
The bubble and in-flight microbatches are in :mod:`shardplan.cost.pipeline`.
"""

from __future__ import annotations

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
    return [ctx.collective(op, "pp", "stage_io", ph, "layers", msg, 2, stride, n * p.virtual_stages * m,
                           "stage activations / gradients") for op, ph, n in tally(STAGE_BOUNDARY)]
