"""Typed collective records shared by the planner, the explanation and the compiled-program check.

A :class:`Collective` says *what* moves (``tensor``), *when* (``phase``), *over which axis* and
*how much*; its ``purpose`` is display text only and no code decides anything from it. The
byte convention :func:`bytes_sent` is the one place that turns a logical buffer into the bytes a
device sends (NCCL "bus bandwidth" accounting, nccl-tests ``doc/PERFORMANCE.md``): the planner
(:mod:`shardplan.cost.comm`) and the cross-check (:mod:`shardplan.crosscheck`) both call it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Op = Literal["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv"]
Axis = Literal["tp", "cp", "ep", "pp", "dp"]
#: what a collective carries: layer activations (tp / sp), gradients, parameters, attention keys and
#: values (cp ring), routed tokens (ep), pipeline stage inputs / output gradients, the vocab-parallel
#: loss statistics, the norm-weight gradients under sequence parallelism
Tensor = Literal["activations", "grads", "params", "kv", "tokens", "stage_io", "loss", "norm_grads"]
#: 'fwd' / 'bwd': inside a microbatch's forward / backward pass (recompute runs in the backward);
#: 'step': once per optimizer step, outside the microbatch loop
Phase = Literal["fwd", "bwd", "step"]
#: which weights or which part of the network: transformer 'layers', the vocab-parallel
#: 'embedding_head', the stage's 'dense' (non-expert) weights, its routed 'expert' weights
Scope = Literal["layers", "embedding_head", "dense", "expert"]
#: how the planner hides it: 'exposed' (on the critical path), 'tp_overlap' (chunked behind the GEMM
#: it feeds), 'ring_attention' (behind the attention core), 'buckets' (DDP / Megatron buckets behind
#: backward or forward), 'prefetch' (ZeRO-3 next-layer prefetch), 'p2p_overlap' (interleaved pipeline sends
#: beside the next chunk's compute)
Overlap = Literal["exposed", "tp_overlap", "ring_attention", "buckets", "prefetch", "combined_1f1b", "dualpipe",
                  "p2p_overlap"]

OPS: tuple[str, ...] = ("AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv")


def bytes_sent(op: str, size_bytes: float, n: int) -> float:
    """Bytes one device sends for one collective on a logical buffer.

    Args:
        op: AllReduce, AllGather, ReduceScatter, AllToAll or SendRecv.
        size_bytes: the full buffer S (bytes): result of AllGather, input of ReduceScatter /
            AllReduce; the per-device payload for AllToAll; the message for SendRecv.
        n: devices in the group (ignored for SendRecv).

    Returns:
        ``S (n-1)/n`` for AllGather / ReduceScatter / AllToAll, ``2 S (n-1)/n`` for AllReduce (ring:
        reduce-scatter + all-gather, Patarasuk & Yuan 2009), ``S`` for SendRecv, 0 for a group of one.
        Source: nccl-tests ``doc/PERFORMANCE.md`` (bus bandwidth factors).

    Raises:
        ValueError: for an unknown ``op``.
    """
    if op not in OPS:
        raise ValueError(f"op={op!r} is not a collective; legal op: {', '.join(OPS)}")
    if op == "SendRecv":
        return size_bytes
    if n <= 1:
        return 0.0
    factor = 2.0 if op == "AllReduce" else 1.0
    return factor * size_bytes * (n - 1) / n


def axis_label(axis: str, cp: int, replicas: bool = False) -> str:
    """Display name of the group a collective on ``axis`` runs over: 'dp-cp' for a data-parallel (ZeRO / gradient)
    collective when cp > 1, whose group holds the dp x cp ranks that share weights (Megatron-LM's
    ``RankGenerator.get_ranks('dp-cp')`` group, ``parallel_state.get_data_parallel_group(with_context_parallel=True)``;
    torchtitan's ``dp_shard_cp`` mesh dimension), so that a layout with dp=1 cp=8 does not show an 8-rank "dp"
    group; the HSDP AllReduce across replicas (``replicas``) and every other axis keep their name."""
    return "dp-cp" if axis == "dp" and cp > 1 and not replicas else axis


@dataclass(frozen=True)
class Collective:
    """One collective of one kind on one axis, aggregated over a step, for one device.

    Attributes:
        op: AllReduce / AllGather / ReduceScatter / AllToAll / SendRecv.
        axis: tp / cp / ep / dp / pp.
        tensor: what it carries (:data:`Tensor`).
        phase: 'fwd', 'bwd' or 'step' (:data:`Phase`).
        scope: which weights / which part of the network (:data:`Scope`).
        count: transfers per step per device (each split into ``buckets`` calls: :attr:`calls`).
        bytes_per_device: bytes each device sends per step (all calls; :func:`bytes_sent`).
        time_s: seconds per step if nothing overlapped.
        exposed_s: seconds per step left on the critical path.
        level: network level that bounds it (NVLink / scale-out / ICI / DCN / local).
        group_size: devices in the group (2 for a SendRecv pair).
        overlap: the rule that hides it (:data:`Overlap`).
        replicas: True for the HSDP AllReduce across the replicas of a ZeRO shard group.
        purpose: human description (display only).
        buckets: calls each of the ``count`` transfers is split into (gradient buckets, per-layer or per-tensor
            gathers), each paying the call's latency; ``count x buckets`` calls per step in all.
        axis_label: the group's name in tables and explanations when it is not ``axis`` (:func:`axis_label`).
    """

    op: Op
    axis: Axis
    tensor: Tensor
    phase: Phase
    scope: Scope
    count: float
    bytes_per_device: float
    time_s: float
    exposed_s: float
    level: str
    group_size: int
    overlap: Overlap
    purpose: str
    replicas: bool = False
    buckets: int = 1
    axis_label: str = ""

    @property
    def calls(self) -> float:
        """NCCL / XLA calls per step per device: ``count x buckets`` (a ZeRO-3 gather per layer and microbatch, a
        gradient bucket each), what a trace of the step counts."""
        return self.count * max(1, self.buckets)

    @property
    def label(self) -> str:
        """The group's name for display: ``axis_label`` where set, else ``axis``."""
        return self.axis_label or self.axis

    def to_dict(self) -> dict:
        """JSON-friendly form (one entry of ``collectives`` in ``estimate --json``, with :attr:`calls`); bytes and
        seconds."""
        return {**asdict(self), "calls": self.calls}
