"""JAX runtime of shardplan: execute a validated plan (:class:`~shardplan.parallel.Layout`) with JAX.

Modules:

* :mod:`shardplan.jax.mesh` -- the 6-axis device mesh ``("pp", "dp", "fsdp", "ep", "cp", "tp")``
  built from a layout (hybrid ICI/DCN mesh across processes).
* :mod:`shardplan.jax.rules` -- logical axis names, per-strategy rule tables, the resolver and
  the sharding table.
* :mod:`shardplan.jax.model` -- a Llama-style reference decoder (Flax NNX) with logical axes on
  every parameter, and :func:`~shardplan.jax.model.scale_down`.
* :mod:`shardplan.jax.data` -- byte-level tokenizer and packed, batch-sharded data.
* :mod:`shardplan.jax.train` -- the jitted training step (AdamW, gradient accumulation, ZeRO
  stages, recompute policies) and the training loop.

This package imports JAX; the planner core (``import shardplan``) does not.
"""

from __future__ import annotations

from shardplan.jax.mesh import MESH_AXES, build_mesh, mesh_shape

__all__ = ["MESH_AXES", "build_mesh", "mesh_shape"]
