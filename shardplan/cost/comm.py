"""Time of one collective on a two-level network (alpha-beta model).

A group of ``n`` devices whose members are ``stride`` ranks apart has ``n_1`` members inside each
scale-up domain (NVLink node / TPU slice) and ``n_2 = n / n_1`` domains. For a buffer of ``S``
bytes (the *full* logical buffer: result of AllGather, input of ReduceScatter / AllReduce):

* AllGather / ReduceScatter, hierarchical and pipelined (Scaling Book gpus.md, "collectives
  across nodes"; cost_models note 10.4):
  ``T = max(S (n_1-1) / (n_1 W_1), S (n_2-1) / (n W_2)) + alpha_1 (n_1-1) + alpha_2 (n_2-1)``.
  With ``n_2 = 1`` this is the ring formula ``S (n-1) / (n W)`` (Scaling Book sharding.md); with
  many domains the scale-out term tends to ``S / (n_1 W_2)`` = S / node egress.
* AllReduce = ReduceScatter + AllGather: twice the above (Patarasuk & Yuan 2009, ring all-reduce).
* AllToAll with a per-device payload ``S_r``: ``T = max(S_r (n_1-1)/(n W_1), S_r (n-n_1)/(n W_2))
  + alpha (n-1)`` (Scaling Book gpus.md, "AllToAll").
* send/recv: ``alpha + S / W`` of the link between the two devices.

``W_1 = scale_up_bandwidth * scale_up_efficiency`` (times the torus axes the group spans on TPUs),
``W_2 = scale_out_bandwidth * scale_out_efficiency``. Bytes per device (what each device sends) are
``S (n-1)/n`` for AllGather / ReduceScatter, twice that for AllReduce, ``S_r (n-1)/n`` for
AllToAll and ``S`` for send/recv (NCCL "bus bandwidth" accounting, nccl-tests PERFORMANCE.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from shardplan.specs.hardware import HardwareSpec

Op = Literal["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv"]


@dataclass(frozen=True)
class CollectiveCost:
    """One collective: bytes each device sends, seconds, and the network level that bounds it."""

    time_s: float
    bytes_per_device: float
    level: str  # 'scale-up' | 'scale-out' | 'local'
    n_local: int
    n_domains: int


def group_split(n: int, stride: int, domain: int) -> tuple[int, int]:
    """(members per scale-up domain, domains) of a group of ``n`` ranks spaced ``stride`` apart."""
    if n <= 1:
        return 1, 1
    if stride >= domain:
        return 1, n
    n1 = max(1, min(n, domain // stride))
    while n % n1:
        n1 -= 1
    return n1, n // n1


def level_names(hw: HardwareSpec) -> tuple[str, str]:
    """Human names of the two network levels: NVLink / scale-out for GPUs, ICI / DCN for TPUs."""
    return ("ICI", "DCN") if hw.kind == "tpu" else ("NVLink", "scale-out")


def collective_cost(op: Op, size_bytes: float, n: int, stride: int, hw: HardwareSpec) -> CollectiveCost:
    """Time of one collective (see module docstring for the formulas and their sources).

    Args:
        op: AllReduce, AllGather, ReduceScatter, AllToAll or SendRecv.
        size_bytes: full buffer S (bytes); for AllToAll the per-device payload; for SendRecv the
            message.
        n: devices in the group (for SendRecv: 2 if the peers are in different domains, else 1).
        stride: rank distance between consecutive group members (product of the inner axes).
        hw: the hardware.

    Returns:
        :class:`CollectiveCost` (seconds, bytes per device, bounding level).
    """
    if n <= 1 and op != "SendRecv":
        return CollectiveCost(0.0, 0.0, "local", 1, 1)
    names = level_names(hw)
    axes = hw.ici_axes_spanned(min(n * stride, hw.scale_up_size)) if hw.kind == "tpu" else 1
    w1 = hw.scale_up_bandwidth * hw.scale_up_efficiency * axes
    w2 = hw.scale_out_bandwidth * hw.scale_out_efficiency
    if op == "SendRecv":
        cross = stride >= hw.scale_up_size
        w, lat = (w2, hw.scale_out_latency) if cross else (w1, hw.scale_up_latency)
        return CollectiveCost(lat + size_bytes / w, size_bytes, names[1] if cross else names[0], 1, 1)
    n1, n2 = group_split(n, stride, hw.scale_up_size)
    lat = hw.scale_up_latency * (n1 - 1) + hw.scale_out_latency * (n2 - 1)
    if op == "AllToAll":
        t1 = size_bytes * (n1 - 1) / (n * w1)
        t2 = size_bytes * (n - n1) / (n * w2)
        sent = size_bytes * (n - 1) / n
    else:
        t1 = size_bytes * (n1 - 1) / (n1 * w1) if n1 > 1 else 0.0
        t2 = size_bytes * (n2 - 1) / (n * w2) if n2 > 1 else 0.0
        sent = size_bytes * (n - 1) / n
    t = max(t1, t2) + lat
    level = names[1] if t2 >= t1 else names[0]
    if op == "AllReduce":
        t, sent = 2 * t, 2 * sent
    return CollectiveCost(t, sent, level, n1, n2)
