"""Device mesh of the JAX runtime, built from a validated :class:`~shardplan.parallel.Layout`.

The mesh always has the six named axes :data:`MESH_AXES` = ``("pp", "dp", "fsdp", "ep", "cp",
"tp")`` ordered slowest to fastest network (size 1 when unused, so sharding rules never mention an
absent axis). Mapping from the plan (``p = layout.parallel``):

=======  ==========================================================================================
axis     size
=======  ==========================================================================================
``pp``   ``p.pp`` (pipeline stages; the stacked transformer blocks are sharded over it, see
         :mod:`shardplan.jax.pipeline`)
``dp``   pure data-parallel replicas: ``p.dp / p.ep`` when ``zero_stage == 0``; the HSDP replicate
         degree ``p.dp / p.dp_shard`` when ``zero_stage >= 1``
``fsdp`` the ZeRO shard group: ``p.dp_shard / p.ep`` when ``zero_stage >= 1`` (else 1)
``ep``   ``p.ep``, carved out of the data ranks (of the replicas for ZeRO-0, of the ZeRO shard
         group otherwise); outside MoE layers it acts like another data (and ZeRO) axis
``cp``   ``p.cp`` (sequence-sharded activations)
``tp``   ``p.tp`` (Megatron tensor parallelism; ``sp`` is a rule option on this axis)
=======  ==========================================================================================

so ``dp * fsdp * ep == p.dp`` and the batch is sharded over ``("dp", "fsdp", "ep")``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import AxisType, Mesh

from shardplan.errors import ConfigError, divisors, fmt_legal
from shardplan.parallel import Layout

#: Mesh axis names, slowest (outermost, DCN) to fastest (innermost, NVLink/ICI) network.
MESH_AXES: tuple[str, ...] = ("pp", "dp", "fsdp", "ep", "cp", "tp")

#: Mesh axes over which the global batch is sharded.
BATCH_AXES: tuple[str, ...] = ("dp", "fsdp", "ep")


def mesh_shape(layout: Layout) -> dict[str, int]:
    """Sizes of the six mesh axes for a validated layout (see the module docstring for the mapping).

    Args:
        layout: the result of :func:`shardplan.parallel.validate`.

    Returns:
        ``{axis: size}`` in :data:`MESH_AXES` order; the product is ``layout.n_devices``.

    Raises:
        ConfigError: ``ep`` not dividing the data ranks it is carved from (``dp`` for ZeRO-0,
            ``dp_shard`` for ZeRO-1/2/3), naming the legal values. (Which pipeline layouts the
            runtime executes is checked by :func:`shardplan.jax.pipeline.check_pipeline`.)
    """
    p = layout.parallel
    dp_total = p.dp
    if p.zero_stage == 0:
        if dp_total % p.ep:
            legal = [e for e in divisors(dp_total)]
            raise ConfigError(
                f"ep={p.ep} must divide dp={dp_total}: the JAX runtime carves the expert axis out of the "
                f"data-parallel replicas; legal ep: {fmt_legal(legal)}", field="ep", value=p.ep, legal=legal)
        shape = dict(pp=p.pp, dp=dp_total // p.ep, fsdp=1, ep=p.ep, cp=p.cp, tp=p.tp)
    else:
        shard = p.dp_shard or dp_total
        if shard % p.ep:
            legal = divisors(shard)
            raise ConfigError(
                f"ep={p.ep} must divide dp_shard={shard}: with zero_stage={p.zero_stage} the JAX runtime "
                f"carves the expert axis out of the ZeRO shard group; legal ep: {fmt_legal(legal)}",
                field="ep", value=p.ep, legal=legal)
        shape = dict(pp=p.pp, dp=dp_total // shard, fsdp=shard // p.ep, ep=p.ep, cp=p.cp, tp=p.tp)
    assert math.prod(shape.values()) == layout.n_devices, (shape, layout.n_devices)
    return {a: shape[a] for a in MESH_AXES}


def split_dcn(shape: dict[str, int], n_granules: int) -> tuple[list[int], list[int]]:
    """Split mesh axis sizes into a per-granule (ICI / NVLink) part and a cross-granule (DCN) part.

    The ``n_granules`` factor (processes or slices) is taken from the slowest axes first (``pp``,
    then ``dp``, ``fsdp``, ...), so tensor and context parallelism stay inside a host when possible.

    Args:
        shape: ``{axis: size}`` as from :func:`mesh_shape`.
        n_granules: number of processes (or slices).

    Returns:
        ``(ici_shape, dcn_shape)`` lists in :data:`MESH_AXES` order with ``ici * dcn == shape``.

    Raises:
        ConfigError: if the granule count cannot be factored over the axes.
    """
    left = n_granules
    ici, dcn = [], []
    for a in MESH_AXES:
        g = math.gcd(left, shape[a])
        dcn.append(g)
        ici.append(shape[a] // g)
        left //= g
    if left != 1:
        raise ConfigError(
            f"cannot spread the mesh {shape} over {n_granules} processes/slices: their count must factor "
            f"into the axis sizes (slowest first)", field="num_processes", value=n_granules)
    return ici, dcn


def build_mesh(layout: Layout, devices: Sequence[Any] | None = None,
               axis_type: AxisType | None = None) -> Mesh:
    """The device mesh for a layout, with all six :data:`MESH_AXES` and explicit axis types.

    Axis types: every axis is built as :attr:`jax.sharding.AxisType.Auto`, deliberately. The runtime
    states the layout of every parameter, optimizer-state leaf, gradient and batch through
    ``in_shardings``/``out_shardings`` and ``jax.lax.with_sharding_constraint`` at block boundaries,
    and lets the GSPMD partitioner place the collectives in between (the MaxText approach). Explicit
    mode would make sharding part of every intermediate's type and require an ``out_sharding`` on
    each ambiguous einsum (e.g. the MoE dispatch and GQA reshapes), for no gain in what is checked:
    the resolver in :mod:`shardplan.jax.rules` already rejects indivisible or conflicting specs with
    a path-naming error. The type is always passed explicitly because JAX's default differs between
    ``jax.make_mesh`` (Explicit) and ``Mesh`` (Auto).

    Args:
        layout: validated layout; ``layout.n_devices`` must equal the number of devices.
        devices: devices to use (default ``jax.devices()``, i.e. all devices of all processes).
            Passing a list is the only way to use fewer devices than exist.
        axis_type: override the axis type (default Auto, see above).

    Returns:
        A :class:`jax.sharding.Mesh` of shape :func:`mesh_shape` over ``devices``. With more than one
        process a hybrid mesh (:func:`jax.experimental.mesh_utils.create_hybrid_device_mesh`) puts
        the slowest axes across processes.

    Raises:
        ConfigError: the layout's degrees do not multiply to the number of devices (never silently
            uses a subset), or ``ep`` not carvable (see :func:`mesh_shape`).
    """
    devs = list(jax.devices() if devices is None else devices)
    p = layout.parallel
    if layout.n_devices != len(devs):
        legal_dp = len(devs) // (p.tp * p.pp * p.cp) if len(devs) % (p.tp * p.pp * p.cp) == 0 else None
        raise ConfigError(
            f"the plan needs dp*tp*pp*cp = {p.dp}*{p.tp}*{p.pp}*{p.cp} = {layout.n_devices} devices, but JAX "
            f"sees {len(devs)} ({devs[0].platform if devs else 'none'}); legal dp for tp={p.tp}, pp={p.pp}, "
            f"cp={p.cp} on {len(devs)} devices: {legal_dp if legal_dp else 'none'} (pass --devices "
            f"{len(devs)} or change the degrees)", field="devices", value=layout.n_devices,
            legal=[len(devs)])
    shape = mesh_shape(layout)
    sizes = [shape[a] for a in MESH_AXES]
    procs = sorted({d.process_index for d in devs})
    slices = sorted({getattr(d, "slice_index", 0) or 0 for d in devs})
    if len(procs) > 1 or len(slices) > 1:
        by_slice = len(slices) > 1
        n_gran = len(slices) if by_slice else len(procs)
        ici, dcn = split_dcn(shape, n_gran)
        arr = mesh_utils.create_hybrid_device_mesh(ici, dcn, devs, process_is_granule=not by_slice)
    elif devs and devs[0].platform in ("tpu", "gpu", "cuda", "rocm") and devices is None:
        arr = mesh_utils.create_device_mesh(sizes, devs)
    else:
        arr = np.asarray(devs, dtype=object).reshape(sizes)
    at = AxisType.Auto if axis_type is None else axis_type
    return Mesh(arr, MESH_AXES, axis_types=(at,) * len(MESH_AXES))


def describe(mesh: Mesh) -> str:
    """One line such as ``mesh axes pp=1 dp=2 fsdp=4 ep=1 cp=1 tp=1 (8 cpu devices, 1 process; planner dp = dp x
    fsdp x ep)``: the mesh names the replicated and the sharded data-parallel axes apart, where the planner says
    ``dp=8 zero=3`` for ``dp=1 fsdp=8`` (docs/runtime.md, the mesh table: fsdp x ep is the ZeRO shard group)."""
    sizes = " ".join(f"{a}={mesh.shape[a]}" for a in MESH_AXES)
    devs = mesh.devices.flatten()
    n_proc = len({d.process_index for d in devs})
    return (f"mesh axes {sizes} ({len(devs)} {devs[0].platform} devices, {n_proc} process{'es' if n_proc > 1 else ''}; "
            "planner dp = dp x fsdp x ep)")
