"""What every axis's communication model needs to know about one step: :class:`StepContext`.

Built once per estimate by :func:`step_context`; the axis modules in :mod:`shardplan.cost.axes`
read it and return typed :class:`~shardplan.cost.collective.Collective` records priced with
:func:`shardplan.cost.comm.collective_cost`.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardplan.cost.collective import Collective, axis_label
from shardplan.cost.comm import collective_cost
from shardplan.cost.compute import LayerTimes, StageCompute, layer_times, slowest_stage
from shardplan.errors import ConfigError
from shardplan.parallel import Layout, ParallelConfig
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PrecisionPolicy, TrainingSpec


def require_host_link(hw: HardwareSpec, field: str, value) -> float:
    """The device's host link bandwidth (bytes/s) for an offloading option ``field=value``.

    Raises:
        ConfigError: the hardware gives no ``host_bandwidth``; the legal value is the option off.
    """
    if hw.host_bandwidth is None:
        off = (None if field == "offload_modules" else 0 if isinstance(value, int) and not isinstance(value, bool)
               else False)
        how = f"{field} not given" if off is None else f"{field}={off}"
        raise ConfigError(f"{field}={value} needs the device's host link bandwidth, which hardware {hw.name!r} does "
                          f"not give; legal: {how}, or a hardware file with host_bandwidth",
                          field=field, value=value, legal=[off])
    return hw.host_bandwidth


@dataclass(frozen=True)
class StepContext:
    """One validated layout with its per-layer times and its slowest pipeline stage.

    Attributes:
        model, hw, training, layout: the inputs.
        dense_t, moe_t: forward seconds of one dense / MoE layer on one microbatch
            (:class:`~shardplan.cost.compute.LayerTimes`; ``moe_t is dense_t`` for dense models).
        stage: compute of the slowest stage (:class:`~shardplan.cost.compute.StageCompute`); its
            communication is what the step waits for.
    """

    model: ModelSpec
    hw: HardwareSpec
    training: TrainingSpec
    layout: Layout
    dense_t: LayerTimes
    moe_t: LayerTimes
    stage: StageCompute

    @property
    def p(self) -> ParallelConfig:
        """The validated parallel config."""
        return self.layout.parallel

    @property
    def prec(self) -> PrecisionPolicy:
        """The precision policy (bytes per element of each tensor kind)."""
        return self.training.precision

    @property
    def m(self) -> int:
        """Microbatches per step."""
        return self.layout.microbatches

    @property
    def layers(self) -> int:
        """Transformer layers on the slowest stage."""
        return self.stage.params.layers

    @property
    def moe_layers(self) -> int:
        """MoE layers on the slowest stage."""
        return self.stage.params.moe_layers

    def call_time(self, op: str, size: float, n: int, stride: int, link_share: float = 1.0) -> float:
        """Seconds of one call: the network's time (:func:`shardplan.cost.comm.collective_cost`, with
        ``link_share`` of the group's NICs) plus the framework's per-call overhead
        (``FrameworkProfile.collective_overhead_s``); 0 for a group of one (no call is made)."""
        t = collective_cost(op, size, n, stride, self.hw, link_share=link_share).time_s  # type: ignore[arg-type]
        if n <= 1 and op != "SendRecv":
            return t
        return t + self.training.framework.collective_overhead_s

    def bucketed_time(self, op: str, size: float, n: int, stride: int, buckets: int = 1,
                      link_share: float = 1.0) -> float:
        """Seconds to move a ``size``-byte buffer in ``buckets`` equal calls (per-layer buckets of
        DDP / FSDP): each call pays its own latency and overhead."""
        return buckets * self.call_time(op, size / buckets, n, stride, link_share)

    def collective(self, op: str, axis: str, tensor: str, phase: str, scope: str, size: float, n: int,
                   stride: int, count: float, purpose: str, overlap: str = "exposed",
                   exposed_s: float | None = None, replicas: bool = False, buckets: int = 1,
                   link_share: float = 1.0) -> Collective:
        """Price ``count`` transfers of a buffer of ``size`` bytes over ``n`` devices ``stride`` ranks
        apart, each in ``buckets`` calls (:meth:`bucketed_time`). ``exposed_s`` (seconds per step on
        the critical path) defaults to all of it."""
        c = collective_cost(op, size, n, stride, self.hw)  # type: ignore[arg-type]
        time_s = self.bucketed_time(op, size, n, stride, buckets, link_share) * count
        return Collective(op=op, axis=axis, tensor=tensor, phase=phase, scope=scope,  # type: ignore[arg-type]
                          count=count, bytes_per_device=c.bytes_per_device * count, time_s=time_s,
                          exposed_s=time_s if exposed_s is None else exposed_s, level=c.level,
                          group_size=n if op != "SendRecv" else 2, overlap=overlap,  # type: ignore[arg-type]
                          purpose=purpose, replicas=replicas, buckets=max(1, int(buckets)),
                          axis_label=axis_label(axis, self.p.cp, replicas))


def step_context(model: ModelSpec, hw: HardwareSpec, training: TrainingSpec, layout: Layout) -> StepContext:
    """Per-layer forward times (dense and MoE) and the slowest stage of ``layout``."""
    p, u = layout.parallel, layout.local_tokens
    dense_t = layer_times(model, training, hw, p, u, False)
    moe_t = layer_times(model, training, hw, p, u, True) if model.is_moe else dense_t
    stage = slowest_stage(model, training, hw, layout, dense_t, moe_t)
    return StepContext(model, hw, training, layout, dense_t, moe_t, stage)
