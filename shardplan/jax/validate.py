"""Compare the planner's predictions with the program XLA compiles for the same plan.

:func:`validate_plan` builds the JAX runtime's training step for a layout (``Trainer``: AOT
``lower().compile()`` on the plan's mesh, no step is run), reads every collective from the
compiled HLO (:mod:`shardplan.jax.inspect`) and ``memory_analysis()``, runs the planner
(:func:`shardplan.cost.step.estimate_layout`) on the *same* model, batch, precision and layout, and
lines the two up per collective kind and planner axis, and per memory component.

Three layers keep backend and runtime effects visible instead of hiding them in a tolerance:

1. **Backend mapping** (compiled side, :func:`logical_collectives`): raw HLO collectives are mapped
   to the logical collectives the planner speaks of, and both are reported.

   * ``all-reduce`` whose every consumer keeps a ``1/n`` ``dynamic-slice`` (partition-id indexed)
     -> **ReduceScatter** (XLA:CPU emits reduce-scatter as all-reduce + dynamic-slice);
   * an ``all-reduce`` element that reduces again the result of another all-reduce over disjoint
     *data* axes (dp / fsdp / ep / cp; e.g. gradients reduced over ``cp`` and then over ``dp``)
     -> **one AllReduce over the product group**, which is how the planner (and Megatron's
     dp x cp gradient group) counts it; a tp reduction followed by a dp one stays two, as in
     Megatron;
   * ``-start``/``-done`` async pairs count once; ``collective-permute`` -> **SendRecv**.

2. **Runtime model** (predicted side, :func:`runtime_deltas`): documented differences between
   what the runtime / XLA's SPMD partitioner does on this model and what Megatron-LM / PyTorch
   FSDP do (which the planner models). Each is a named delta with its formula and reason; the
   planner itself is not bent. ``expected = planner + deltas``.

3. **Negligible rows**: collectives of a kind/axis the planner does not model whose bytes are below
   :data:`NEGLIGIBLE_SHARE` of the step's compiled collective bytes (loss/grad-norm scalars, the
   mask positions, the one-token target shift of context parallelism) are listed but not scored.

Mesh axes -> planner axes: the runtime's ``dp`` and ``fsdp`` (and anything grouped with them, e.g.
``dp+cp`` for the gradient reduction) are the planner's ``dp``; ``tp``, ``cp``, ``ep`` and ``pp``
map to themselves.

Bytes per device follow :mod:`shardplan.cost.comm`: ``S (n-1)/n`` for AllGather / ReduceScatter,
``2 S (n-1)/n`` for AllReduce (``S`` the full, unsharded buffer: the all-gather result, the
reduce-scatter / all-reduce input), ``S_r (n-1)/n`` for AllToAll (``S_r`` the per-device payload)
and ``S`` for SendRecv.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from shardplan.errors import ConfigError
from shardplan.jax.inspect import HloCollective, hlo_collectives, memory_breakdown, parse_module
from shardplan.parallel import Layout
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

#: HLO opcode -> planner collective name.
OP_NAMES = {"all-gather": "AllGather", "reduce-scatter": "ReduceScatter", "all-reduce": "AllReduce",
            "all-to-all": "AllToAll", "collective-permute": "SendRecv", "collective-broadcast": "Broadcast"}
#: Rows (op, axis) absent from the prediction and below this share of all compiled collective bytes
#: per step are reported as negligible and not scored.
NEGLIGIBLE_SHARE = 0.02
#: Relative tolerance on collective bytes and on model-state memory.
BYTES_TOLERANCE = 0.05
#: Compiled temp memory must lie within [1/TEMP_FACTOR, TEMP_FACTOR] x the planner's transient
#: memory (see docs/validation.md for why this is a factor, not a percentage).
TEMP_FACTOR = 2.0


def planner_axis(mesh_axes: tuple[str, ...]) -> str:
    """The planner axis of a group spanning ``mesh_axes`` (module docstring); ``"-"`` for none."""
    s = set(mesh_axes)
    if not s:
        return "-"
    if s & {"dp", "fsdp"}:
        return "dp"
    for a in ("cp", "ep", "tp", "pp"):
        if a in s:
            return a
    return "+".join(mesh_axes)


def _bytes_per_device(op: str, full: float, n: int) -> float:
    """Planner convention (shardplan.cost.comm) for a full buffer ``full`` on ``n`` devices."""
    if n <= 1:
        return 0.0
    if op == "AllReduce":
        return 2.0 * full * (n - 1) / n
    if op == "SendRecv":
        return full
    return full * (n - 1) / n


@dataclass
class LogicalCollective:
    """A collective as the planner would name it, after the backend mapping.

    Attributes:
        op: AllGather / ReduceScatter / AllReduce / AllToAll / SendRecv.
        axis: planner axis (tp / cp / ep / dp / pp).
        mesh_axes: runtime mesh axes of the group.
        group_size: devices per group.
        count: executions per step.
        full_bytes: ``S`` per execution (full buffer; per-device payload for AllToAll; message for
            SendRecv), bytes.
        bytes_per_device: bytes each device sends per step (planner convention).
        source: the HLO instruction name(s).
        mapping: the backend mapping applied ('' when none), e.g. ``"all-reduce + dynamic-slice"``.
        op_name: JAX op path of the instruction.
    """

    op: str
    axis: str
    mesh_axes: tuple[str, ...]
    group_size: int
    count: float
    full_bytes: float
    bytes_per_device: float
    source: str
    mapping: str = ""
    op_name: str = ""


def raw_bytes_per_device(c: HloCollective) -> float:
    """Bytes per device per step of one HLO collective taken literally (no backend mapping)."""
    op = OP_NAMES[c.kind]
    if c.kind == "all-gather":
        full = c.result_bytes
    elif c.kind in ("reduce-scatter", "all-reduce"):
        full = c.operand_bytes
    else:
        full = c.operand_bytes
    return _bytes_per_device(op, full, c.group_size) * c.per_step


def logical_collectives(cols: list[HloCollective], hlo_text: str | None = None) -> list[LogicalCollective]:
    """Apply the backend mapping (module docstring) to the compiled collectives.

    Args:
        cols: from :func:`shardplan.jax.inspect.hlo_collectives` (with mesh axes).
        hlo_text: the HLO text, needed to detect chained all-reduces (skipped when None).

    Returns:
        One :class:`LogicalCollective` per array (tuple element) per collective; scattered
        all-reduce elements become ReduceScatter; chained all-reduces over disjoint axes become one
        AllReduce over the union of the axes.
    """
    # (second AR, element) -> first AR whose result it reduces again; (first AR, element) absorbed
    folded: dict[tuple[str, int], HloCollective] = {}
    absorbed: set[tuple[str, int]] = set()
    if hlo_text is not None:
        module = parse_module(hlo_text)
        ars = {c.name: c for c in cols if c.kind == "all-reduce"}
        for c in ars.values():
            inst = module.by_name[c.name]
            if len(inst.operands) != len(c.elements):
                continue
            for i, o in enumerate(inst.operands):
                oi = module.by_name.get(o)
                j = 0
                if oi is not None and oi.opcode == "get-tuple-element":
                    mj = re.search(r"index=(\d+)", oi.attrs)
                    j = int(mj.group(1)) if mj else 0
                    oi = module.by_name.get(oi.operands[0])
                first = ars.get(oi.name) if oi is not None else None
                if first is None or set(first.mesh_axes) & set(c.mesh_axes) or first.elements[j].scattered:
                    continue
                if not set(first.mesh_axes) | set(c.mesh_axes) <= _DATA_AXES:
                    continue  # e.g. tp then dp: two collectives in Megatron too (model- vs data-parallel)
                users = module.users.get(first.name, [])
                if len(users) > 0 and all(u.opcode == "get-tuple-element" for u in users):
                    uses = [u for u in users if re.search(rf"index={j}\b", u.attrs)]
                    if any(len(module.users.get(u.name, [])) != 1 for u in uses):
                        continue  # the partially reduced value is used elsewhere too
                folded[(c.name, i)] = first
                absorbed.add((first.name, j))
    out: list[LogicalCollective] = []
    for c in cols:
        for i, e in enumerate(c.elements):
            if (c.name, i) in absorbed:
                continue
            axes, n, mapping = c.mesh_axes, c.group_size, ""
            if (c.name, i) in folded:
                first = folded[(c.name, i)]
                axes = tuple(a for a in _MESH_ORDER if a in set(axes) | set(first.mesh_axes))
                n = c.group_size * first.group_size
                mapping = (f"all-reduce over {'+'.join(first.mesh_axes)} then {'+'.join(c.mesh_axes)} "
                           f"-> one all-reduce")
            if c.kind == "all-reduce" and e.scattered:
                op, full, mp = "ReduceScatter", e.operand_bytes, "all-reduce + dynamic-slice -> reduce-scatter"
            elif c.kind == "all-gather":
                op, full, mp = "AllGather", e.result_bytes, ""
            else:
                op, full, mp = OP_NAMES[c.kind], e.operand_bytes, ""
            if c.kind == "collective-permute" and c.group_size < 2:
                continue  # self-copies only
            mp = "; ".join(x for x in (mapping, mp) if x)
            out.append(LogicalCollective(op=op, axis=planner_axis(axes), mesh_axes=axes, group_size=n,
                                         count=c.per_step, full_bytes=full,
                                         bytes_per_device=_bytes_per_device(op, full, n) * c.per_step,
                                         source=c.name, mapping=mp, op_name=c.op_name))
    return out


_MESH_ORDER = ("pp", "dp", "fsdp", "ep", "cp", "tp")
#: Mesh axes whose all-reduces the planner treats as one data-parallel group (dp x cp).
_DATA_AXES = {"dp", "fsdp", "ep", "cp"}


# ----- runtime model ---------------------------------------------------------------------------

@dataclass
class RuntimeDelta:
    """A documented difference between the runtime's program and the planner's reference scheme.

    Attributes:
        op, axis: the planner row it changes.
        count: calls added (negative: removed) per step.
        bytes_per_device: bytes per device per step added (negative: removed).
        rule: short identifier (see docs/validation.md).
        why: one-sentence explanation.
    """

    op: str
    axis: str
    count: float
    bytes_per_device: float
    rule: str
    why: str


def runtime_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout,
                   planner: list[Any] | None = None) -> list[RuntimeDelta]:
    """The runtime-model deltas for one plan (see docs/validation.md, "runtime model").

    All sizes in bytes; ``u`` local tokens per microbatch, ``m`` microbatches, ``L`` layers,
    ``beta`` activation bytes, ``S_t = beta u h`` (one (b, s, h) activation), ``t`` = tp,
    ``W_e = grad_bytes V h / t`` the local embedding table.

    Args:
        model, training, layout: the plan.
        planner: the planner's collectives (``Estimate.collectives``), needed by the rules that
            remove a planner entry (``grad-sync-per-microbatch``, ``zero3-keep-gathered``,
            ``cp-allgather-kv``).

    Returns:
        The deltas, each a :class:`RuntimeDelta` (counts per step, bytes per device per step).

    Rules:

    * ``tp-bwd-per-projection`` (tp > 1): the runtime's attention has separate Q, K, V projections
      and SwiGLU separate gate and up projections; XLA reduces each projection's partial input
      gradient on its own instead of summing them first, so the backward has ``3 + 2`` (SwiGLU)
      or ``3 + 1`` (GeLU) input-gradient reductions per layer where Megatron (fused QKV and
      gate/up weights) has ``2``: ``+(3 + n_up - 2) L m`` AllReduce (ReduceScatter with SP) of
      ``S_t``.
    * ``sp-keep-gathered`` (SP, recompute none): XLA keeps the all-gathered sequence-parallel
      block inputs alive for the weight gradients instead of re-gathering them in the backward as
      Megatron-SP does: ``-2 L m`` AllGather of ``S_t``.
    * ``sp-embedding-weight`` (SP): XLA all-gathers the vocab-sharded embedding table (``4 V h``)
      and all-reduces its gradient over tp, instead of reduce-scattering the lookup output
      (forward) and all-gathering its gradient (backward): ``-m`` ReduceScatter and ``-m``
      AllGather of ``S_t``, ``+1`` AllGather and ``+1`` AllReduce of ``4 V h`` over tp; the
      data-parallel gradient reduction then carries the whole table instead of its ``1/t`` shard:
      ``+2 (1 - 1/t) 4 V h (n-1)/n`` bytes on the dp AllReduce.
    * ``sp-k-weight-gather`` (SP): for the rotary K projection XLA all-gathers ``wk`` over tp and
      computes K for the local sequence chunk (then all-to-alls it to head sharding, < 2 %, not
      modelled): ``+L m`` AllGather of ``param_bytes h kv``.
    * ``grad-sync-per-microbatch`` (ZeRO-0/2 with m > 1): the runtime constrains every
      microbatch's gradient to its gradient layout inside the accumulation loop, so XLA reduces
      the gradients once per microbatch (DDP / Megatron reduce once per step): the planner's
      per-step gradient AllReduce / ReduceScatter x m. (ZeRO-3 already reduces per microbatch in
      the planner.)
    * ``zero3-keep-gathered`` (ZeRO-3, recompute none): the parameter all-gathers are loop
      invariant and their results are kept for the backward, so XLA gathers each weight once per
      *step* (no reshard-after-forward, no per-microbatch re-gather): the planner's ``2 m``
      ZeRO-3 AllGathers become 1.
    * ``zero-embedding-tokens`` (ZeRO-2/3, the embedding table sharded over its ``h`` dimension):
      XLA gathers the token ids (over the ZeRO group when tp = 1, over tp otherwise -- then
      negligible) and looks up the local ``h/n`` slice, then all-to-alls the ``(b, s, h)``
      activations back to batch sharding (forward; the backward does the reverse for the
      gradient, which is then already sharded): ``-m`` ReduceScatter of ``W_e``, ZeRO-3: ``-1``
      AllGather of ``W_e``; ``+m`` AllGather of ``4 B_group s`` token bytes (tp = 1); ``+m``
      (ZeRO-2) or ``+2m`` (ZeRO-3) AllToAll of ``S_t``.
    * ``cp-allgather-kv`` (cp > 1): the runtime's context parallelism all-gathers K and V over cp
      (and reduce-scatters their gradients) instead of a ring of send/recv; XLA gathers the
      block input ``x`` (``h`` columns) for V and the rotated K (``kv/t`` columns):
      ``-SendRecv`` of the planner, ``+L m`` AllGather of ``beta u cp (h + kv/t)`` and ``+L m``
      ReduceScatter of ``beta u cp 2 kv/t`` (dK, dV).
    * Pipeline (pp > 1, :func:`_pipeline_deltas`; ``k = m + pp - 1`` GPipe ticks, ``L`` above is
      then ``L_max`` per stage): ``gpipe-tick-sends`` (SendRecv pp: ``2 k`` sends of
      ``beta u h / sigma`` instead of the planner's ``2 v m``), ``gpipe-bubble-ticks`` (per-layer tp
      collectives ``x k / m``), ``pp-boundary-psum`` (fp32 AllReduce pp of the outputs, ``4 m u h /
      sigma``, and of the input cotangent on every tick, ``k x 4 u h / sigma``),
      ``pp-replicated-embedding-head`` (dp gradient rows ``x R / P``: embedding, head and final norm
      on every stage, see :func:`runtime_stage_params`), ``gpipe-grad-sync-per-tick`` (ZeRO-0: block
      gradients all-reduced over dp on every tick, ``+(k - 1)``), ``pp-embedding-lookup`` (tp > 1,
      no SP: ``+1`` AllReduce pp of ``beta m u h``, ``+2`` SendRecv
      of the ``V h / t`` table shard). ``grad-sync-per-microbatch`` does not apply (no accumulation
      loop: the pipeline's scan runs the microbatches).
    """
    p = layout.parallel
    planner = planner or []
    # per device, the runtime runs L_max = max(stage_layers) (padded) layers per tick under pp
    m, L = layout.microbatches, (model.n_layers if p.pp == 1 else max(layout.stage_layers))
    prec = training.precision
    beta = prec.activation_bytes
    u = training.seq_len * p.microbatch_size / p.cp
    h = model.d_model
    S_t = beta * u * h
    t = p.tp
    bpd = _bytes_per_device
    out: list[RuntimeDelta] = []
    n_up = 2 if model.mlp == "swiglu" else 1
    if t > 1:
        extra = (3 + n_up - 2) * L * m
        op = "ReduceScatter" if p.sp else "AllReduce"
        out.append(RuntimeDelta(op, "tp", extra, extra * bpd(op, S_t, t), "tp-bwd-per-projection",
                                f"XLA reduces the input gradient of each of the {3 + n_up} column-parallel "
                                f"projections separately (Megatron fuses QKV and gate/up: 2 per layer)"))
        if p.sp:
            if p.recompute == "none":
                out.append(RuntimeDelta("AllGather", "tp", -2 * L * m, -2 * L * m * bpd("AllGather", S_t, t),
                                        "sp-keep-gathered", "XLA keeps the gathered SP block inputs for the weight "
                                        "gradients (Megatron-SP re-gathers them in the backward)"))
            table = 4.0 * model.vocab_size * h
            n_dp = p.dp * p.cp
            out += [
                RuntimeDelta("ReduceScatter", "tp", -m, -m * bpd("ReduceScatter", S_t, t), "sp-embedding-weight",
                             "the embedding lookup output is not reduce-scattered over tp"),
                RuntimeDelta("AllGather", "tp", 1 - m, bpd("AllGather", table, t) - m * bpd("AllGather", S_t, t),
                             "sp-embedding-weight", "XLA all-gathers the vocab-sharded embedding table instead"),
                RuntimeDelta("AllReduce", "tp", 1, bpd("AllReduce", table, t), "sp-embedding-weight",
                             "and all-reduces the table's gradient over tp"),
                RuntimeDelta("AllReduce", "dp", 0, bpd("AllReduce", table * (1 - 1 / t), n_dp), "sp-embedding-weight",
                             "so the data-parallel gradient reduction carries the whole table, not its 1/tp shard"),
                RuntimeDelta("AllGather", "tp", L * m, L * m * bpd("AllGather", prec.param_bytes * h * model.kv_dim, t),
                             "sp-k-weight-gather", "XLA all-gathers wk over tp to compute K on the local "
                             "sequence chunk"),
            ]
    zs = layout.zero_shard
    shard = p.dp_shard or p.dp
    grads = [c for c in planner if c.axis == "dp" and c.op in ("AllReduce", "ReduceScatter")
             and c.purpose.endswith("gradients")]
    if m > 1 and p.zero_stage in (0, 2) and p.pp == 1:  # pp > 1: no accumulation loop (pipeline rules)
        for c in grads:
            out.append(RuntimeDelta(c.op, c.axis, (m - 1) * c.count, (m - 1) * c.bytes_per_device,
                                    "grad-sync-per-microbatch", "the runtime reduces the gradients inside the "
                                    "accumulation loop, once per microbatch"))
    if p.zero_stage == 3 and p.recompute == "none" and zs > 1:
        ag = [c for c in planner if c.op == "AllGather" and c.axis == "dp" and "ZeRO-3" in c.purpose]
        fwd = [c for c in ag if "forward" in c.purpose]
        cnt = sum(c.count for c in ag) - sum(c.count for c in fwd) / m
        byt = sum(c.bytes_per_device for c in ag) - sum(c.bytes_per_device for c in fwd) / m
        out.append(RuntimeDelta("AllGather", "dp", -cnt, -byt, "zero3-keep-gathered",
                                "XLA gathers each weight once per step and keeps it for all microbatches' "
                                "forward and backward"))
    if p.zero_stage >= 2 and shard > 1:
        n = shard
        table = prec.grad_bytes * model.vocab_size * h / t
        out.append(RuntimeDelta("ReduceScatter", "dp", 0, -m * bpd("ReduceScatter", table, zs),
                                "zero-embedding-tokens", "the embedding gradient is computed already sharded "
                                "(no reduce-scatter)"))
        if t == 1:
            tokens = 4.0 * training.seq_len * p.microbatch_size * shard
            out.append(RuntimeDelta("AllGather", "dp", m, m * bpd("AllGather", tokens, n), "zero-embedding-tokens",
                                    "XLA all-gathers the token ids over the ZeRO group"))
        a2a = 2 if p.zero_stage == 3 else 1
        out.append(RuntimeDelta("AllToAll", "dp", a2a * m, a2a * m * bpd("AllToAll", S_t, n),
                                "zero-embedding-tokens", "and all-to-alls the (b, s, h) activations "
                                + ("forward and backward" if a2a == 2 else "(backward)")))
        if p.zero_stage == 3:
            out.append(RuntimeDelta("AllGather", "dp", 0, -bpd("AllGather", table, zs),
                                    "zero-embedding-tokens", "the embedding table is never all-gathered"))
    if p.cp > 1:
        for c in planner:
            if c.op == "SendRecv" and c.axis == "cp":
                out.append(RuntimeDelta(c.op, c.axis, -c.count, -c.bytes_per_device, "cp-allgather-kv",
                                        "the runtime all-gathers K/V over cp instead of a send/recv ring"))
        ag_b = beta * u * p.cp * (h + model.kv_dim / t)
        rs_b = beta * u * p.cp * 2 * model.kv_dim / t
        out.append(RuntimeDelta("AllGather", "cp", L * m, L * m * bpd("AllGather", ag_b, p.cp),
                                "cp-allgather-kv", "forward: all-gather of the block input (for V) and of the "
                                "rotated K over cp"))
        out.append(RuntimeDelta("ReduceScatter", "cp", L * m, L * m * bpd("ReduceScatter", rs_b, p.cp),
                                "cp-allgather-kv", "backward: reduce-scatter of dK and dV over cp"))
    if p.pp > 1:
        out += _pipeline_deltas(model, training, layout, planner, out)
    return out


#: Rules whose count is (layers per stage) x (microbatches): repeated on the GPipe bubble ticks.
_PER_LAYER_RULES = ("tp-bwd-per-projection", "sp-keep-gathered", "sp-k-weight-gather")


def runtime_stage_params(model: ModelSpec, layout: Layout) -> tuple[float, float]:
    """Parameters (elements) every pipeline rank of the runtime holds, before ZeRO sharding:
    ``(blocks, outer)``. ``blocks = L_max x`` one block (``/ tp`` except norms and router; routed
    experts ``/ (tp ep)``), ``L_max = max(stage_layers)`` (uneven splits are padded);
    ``outer`` = embedding (``V h / t``), learned positions, LM head (``V h / t`` unless tied) and
    the final norm, replicated over pp (:mod:`shardplan.jax.pipeline`)."""
    p = layout.parallel
    t, h, V = p.tp, model.d_model, model.vocab_size
    if model.is_moe:
        layer = (model.attention_params() + model.n_shared_experts * model.mlp_params(model.expert_ffn)) / t
        layer += h * model.n_experts + model.routed_expert_params_per_layer() / (t * p.ep)
    else:
        layer = (model.attention_params() + model.mlp_params(model.ffn_dim)) / t
    layer += 2 * model.norm_params()
    blocks = max(layout.stage_layers) * layer
    outer = V * h / t * (1 if model.tied_embeddings else 2) + model.norm_params()
    if model.position == "learned":
        outer += model.max_position_embeddings * h / t
    return blocks, outer


def _planner_stage_params(model: ModelSpec, layout: Layout, stage: int) -> float:
    from shardplan.cost.memory import stage_params

    sp_ = stage_params(model, layout, stage)
    return sp_.dense + sp_.replicated + sp_.expert


def _pipeline_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout, planner: list[Any],
                     so_far: list[RuntimeDelta]) -> list[RuntimeDelta]:
    """The runtime's GPipe (:mod:`shardplan.jax.pipeline`) vs the planner's pipeline accounting
    (see :func:`runtime_deltas`, rules ``gpipe-*`` and ``pp-*``)."""
    p = layout.parallel
    m, pp = layout.microbatches, p.pp
    ticks = m + pp - 1
    u = training.seq_len * p.microbatch_size / p.cp
    h, t = model.d_model, p.tp
    sigma = t if p.sp else 1
    beta = training.precision.activation_bytes
    bpd = _bytes_per_device
    out: list[RuntimeDelta] = []
    # stage sends: one ppermute forward and one backward per tick, message beta u h / sigma
    sr = [c for c in planner if c.op == "SendRecv" and c.axis == "pp"]
    msg = beta * u * h / sigma
    out.append(RuntimeDelta("SendRecv", "pp", 2 * ticks - sum(c.count for c in sr),
                            2 * ticks * bpd("SendRecv", msg, 2) - sum(c.bytes_per_device for c in sr),
                            "gpipe-tick-sends", f"the GPipe scan ppermutes forward and backward on all m + pp - 1 = "
                            f"{ticks} ticks (bubble ticks included; '{p.schedule}' with v={p.virtual_stages} "
                            f"is executed as GPipe)"))
    # per-layer tp collectives also run on the bubble ticks (every stage computes every tick)
    for c in planner:
        if c.axis == "tp" and c.purpose.startswith("activations"):
            out.append(RuntimeDelta(c.op, c.axis, (pp - 1) / m * c.count, (pp - 1) / m * c.bytes_per_device,
                                    "gpipe-bubble-ticks", "every stage runs its layers on the pp - 1 bubble ticks too"))
    for d in so_far:
        if d.rule in _PER_LAYER_RULES:
            out.append(RuntimeDelta(d.op, d.axis, (pp - 1) / m * d.count, (pp - 1) / m * d.bytes_per_device,
                                    "gpipe-bubble-ticks", f"{d.rule} on the bubble ticks"))
    # the pp-invariant pipeline input and output cross the shard_map boundary (fp32)
    act32 = 4.0 * u * h / sigma
    out.append(RuntimeDelta("AllReduce", "pp", 1 + ticks, bpd("AllReduce", m * act32, pp)
                            + ticks * bpd("AllReduce", act32, pp), "pp-boundary-psum",
                            "fp32 psum over pp of the last stage's outputs (forward, all m microbatches) and of "
                            "the input cotangent on every tick (backward)"))
    # gradients: the runtime's stage holds L_max blocks + embedding/head/final norm (replicated)
    blocks, outer = runtime_stage_params(model, layout)
    grads = [c for c in planner if c.axis == "dp" and c.purpose.startswith("dense") and c.count > 0
             and (c.purpose.endswith("gradients") or c.purpose.endswith("after update"))]
    for c in grads:
        # parameters of the planner's (slowest) stage that this collective carries
        elem = training.precision.param_bytes if c.op == "AllGather" else training.precision.grad_bytes
        planned = c.bytes_per_device / (c.count * bpd(c.op, elem, c.group_size))
        out.append(RuntimeDelta(c.op, c.axis, 0, c.bytes_per_device * ((blocks + outer) / planned - 1),
                                "pp-replicated-embedding-head", "embedding, LM head and final norm are held (and "
                                "their gradients reduced) on every stage, blocks padded to L_max"))
        if p.zero_stage == 0 and c.op == "AllReduce":
            out.append(RuntimeDelta(c.op, c.axis, (ticks - 1) * c.count,
                                    (ticks - 1) * c.bytes_per_device * blocks / planned, "gpipe-grad-sync-per-tick",
                                    "XLA all-reduces the stage's block gradients inside the scan, once per tick"))
    if t > 1 and not p.sp:
        table = model.vocab_size * h / t
        axes = tuple(a for a in ("pp", "dp", "tp") if getattr(p, a) > 1)
        ax = planner_axis(axes)
        # the planner's pp > 1 stage carries one of the embedding / LM-head tp all-reduces (m per step);
        # the runtime, with both replicated on every stage, keeps the head's and replaces the embedding's
        out += [
            RuntimeDelta("AllReduce", "pp", 1, bpd("AllReduce", beta * m * u * h, pp), "pp-embedding-lookup",
                         "... XLA looks the tokens up in a vocab split over pp and all-reduces the output over pp"),
            RuntimeDelta("SendRecv", ax, 2, bpd("SendRecv", training.precision.param_bytes * table, 2)
                         + bpd("SendRecv", training.precision.grad_bytes * table, 2), "pp-embedding-lookup",
                         f"collective-permutes the table shard from tp to pp and its gradient back "
                         f"(pairs across {'+'.join(axes)})"),
        ]
    return out



# ----- comparison ------------------------------------------------------------------------------

@dataclass
class CollectiveRow:
    """Predicted vs compiled for one (op, planner axis). Counts per step; bytes per device per step.

    ``expected = planner + runtime deltas``; ``compiled`` after the backend mapping, ``raw`` the
    HLO ops taken literally (by their own kind, so raw rows may sit under another op name).
    ``error`` = expected / compiled - 1 (None when compiled is 0); ``planner_error`` likewise for
    the unadjusted planner. ``scored``: False for negligible rows.
    """

    op: str
    axis: str
    planner_count: float = 0.0
    planner_bytes: float = 0.0
    delta_count: float = 0.0
    delta_bytes: float = 0.0
    compiled_count: float = 0.0
    compiled_bytes: float = 0.0
    raw_count: float = 0.0
    raw_bytes: float = 0.0
    rules: list[str] = field(default_factory=list)
    mappings: list[str] = field(default_factory=list)
    scored: bool = True

    @property
    def expected_count(self) -> float:
        """Calls per step expected: planner + runtime deltas."""
        return self.planner_count + self.delta_count

    @property
    def expected_bytes(self) -> float:
        """Bytes per device per step expected: planner + runtime deltas."""
        return self.planner_bytes + self.delta_bytes

    @property
    def error(self) -> float | None:
        """Relative error of the expected bytes vs compiled (None if nothing compiled)."""
        return _rel(self.expected_bytes, self.compiled_bytes)

    @property
    def planner_error(self) -> float | None:
        """Relative error of the raw planner bytes vs compiled (None if nothing compiled)."""
        return _rel(self.planner_bytes, self.compiled_bytes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly row (bytes, counts, relative errors)."""
        d = asdict(self)
        d.update(expected_count=self.expected_count, expected_bytes=self.expected_bytes, error=self.error,
                 planner_error=self.planner_error)
        return d


@dataclass
class MemoryRow:
    """Predicted vs compiled per-device memory for one component (bytes)."""

    name: str
    predicted: float
    compiled: float
    tolerance: str
    note: str
    within: bool

    @property
    def error(self) -> float | None:
        """Relative error predicted vs compiled (None if compiled is 0)."""
        return _rel(self.predicted, self.compiled)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly row (bytes and relative error)."""
        d = asdict(self)
        d["error"] = self.error
        return d


def _rel(pred: float, actual: float) -> float | None:
    if actual == 0:
        return 0.0 if abs(pred) < 1e-9 else None
    return pred / actual - 1.0


@dataclass
class Validation:
    """The result of :func:`validate_plan` / :func:`compare`.

    Attributes:
        strategy: e.g. ``"FSDP(ZeRO-3)+TP"``.
        model, training, layout: what was compiled and predicted.
        mesh_shape: runtime mesh axis sizes.
        rows: per (op, axis) comparison.
        memory: per memory component comparison.
        deltas: the runtime-model deltas applied.
        hlo: the raw HLO collectives.
        logical: the mapped collectives.
        memory_analysis: ``compiled.memory_analysis()`` in bytes.
        compile_s: seconds to lower and compile.
        notes: backend notes.
    """

    strategy: str
    model: ModelSpec
    training: TrainingSpec
    layout: Layout
    mesh_shape: dict[str, int]
    rows: list[CollectiveRow]
    memory: list[MemoryRow]
    deltas: list[RuntimeDelta]
    hlo: list[HloCollective]
    logical: list[LogicalCollective]
    memory_analysis: dict[str, int]
    compile_s: float
    notes: list[str]

    @property
    def ok(self) -> bool:
        """Every scored collective row within :data:`BYTES_TOLERANCE` and every memory row within its
        tolerance."""
        rows_ok = all(r.error is not None and abs(r.error) <= BYTES_TOLERANCE for r in self.rows if r.scored)
        return rows_ok and all(m.within for m in self.memory)

    def row(self, op: str, axis: str) -> CollectiveRow | None:
        """The row of one collective kind and planner axis, if any."""
        return next((r for r in self.rows if r.op == op and r.axis == axis), None)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``shardplan validate --json``."""
        return {
            "strategy": self.strategy, "model": self.model.name,
            "parallel": self.layout.parallel.model_dump(mode="json"),
            "microbatches": self.layout.microbatches, "mesh": self.mesh_shape,
            "training": {"seq_len": self.training.seq_len, "global_batch_size": self.training.global_batch_size,
                         "precision": self.training.precision.name, "attention": self.training.attention},
            "ok": self.ok, "tolerances": {"collective_bytes": BYTES_TOLERANCE, "model_state": BYTES_TOLERANCE,
                                          "temp_factor": TEMP_FACTOR, "negligible_share": NEGLIGIBLE_SHARE},
            "collectives": [r.to_dict() for r in self.rows],
            "memory": [m.to_dict() for m in self.memory],
            "runtime_deltas": [asdict(d) for d in self.deltas],
            "memory_analysis": self.memory_analysis,
            "hlo_collectives": [c.to_dict() for c in self.hlo],
            "compile_s": self.compile_s, "notes": self.notes,
        }


BACKEND_NOTES = [
    "XLA:CPU lowers reduce-scatter as all-reduce + dynamic-slice: such all-reduces are reported raw and "
    "mapped to ReduceScatter.",
    "All-reduces of the same buffers chained over disjoint data axes (e.g. cp then dp) are mapped to one "
    "all-reduce over the product group (the planner's dp x cp gradient group); tp then dp stays two.",
    "Counts are executions per step; XLA combines many gradients into one tuple all-reduce and gathers "
    "weights one by one, so counts are reported but only bytes are scored.",
    "Ops inside while loops (gradient accumulation) are multiplied by the loop trip count "
    "(known_trip_count in the backend config, else the loop condition).",
]


def compare(model: ModelSpec, training: TrainingSpec, layout: Layout, hlo_text: str, memory: dict[str, int],
            mesh_shape: dict[str, int], hardware: HardwareSpec | None = None, strategy: str = "",
            compile_s: float = 0.0, batch_bytes: float | None = None) -> Validation:
    """Compare the planner with an already compiled program (no JAX needed).

    Args:
        model, training, layout: the plan (``training.precision`` should describe the runtime's
            dtypes, e.g. ``fp32`` for an fp32 run).
        hlo_text: ``compiled.as_text()``.
        memory: :func:`shardplan.jax.inspect.memory_breakdown` of the compiled step.
        mesh_shape: runtime mesh axis sizes (mesh order).
        hardware: for the planner's times (bytes do not depend on it); default ``h100-sxm``.
        strategy: label.
        compile_s: reported only.
        batch_bytes: per-device bytes of the non-state arguments (the token batch), subtracted from
            the argument size; default ``4 * local sequences * (seq_len + 1)``.

    Returns:
        :class:`Validation`.
    """
    from shardplan.cost.step import estimate_layout
    from shardplan.presets.hardware import HARDWARE

    hw = hardware or HARDWARE["h100-sxm"]
    est = estimate_layout(model, hw, training, layout)
    hlo = hlo_collectives(hlo_text, mesh_shape)
    logical = logical_collectives(hlo, hlo_text)
    deltas = runtime_deltas(model, training, layout, est.collectives)
    rows: dict[tuple[str, str], CollectiveRow] = {}

    def row(op: str, axis: str) -> CollectiveRow:
        return rows.setdefault((op, axis), CollectiveRow(op, axis))

    for c in est.collectives:
        if c.bytes_per_device <= 0:
            continue
        r = row(c.op, c.axis)
        r.planner_count += c.count
        r.planner_bytes += c.bytes_per_device
    for d in deltas:
        r = row(d.op, d.axis)
        r.delta_count += d.count
        r.delta_bytes += d.bytes_per_device
        if d.rule not in r.rules:
            r.rules.append(d.rule)
    counted: set[tuple[str, str, str]] = set()
    for lc in logical:
        r = row(lc.op, lc.axis)
        if (lc.source, lc.op, lc.axis) not in counted:  # a tuple-shaped op counts once
            counted.add((lc.source, lc.op, lc.axis))
            r.compiled_count += lc.count
        r.compiled_bytes += lc.bytes_per_device
        if lc.mapping and lc.mapping not in r.mappings:
            r.mappings.append(lc.mapping)
    for c in hlo:
        r = row(OP_NAMES[c.kind], planner_axis(c.mesh_axes))
        r.raw_count += c.per_step
        r.raw_bytes += raw_bytes_per_device(c)
    total = sum(lc.bytes_per_device for lc in logical) or 1.0
    for r in rows.values():
        if abs(r.expected_bytes) < 1e-9 and r.compiled_bytes < NEGLIGIBLE_SHARE * total:
            r.scored = False
        if r.axis == "-":
            r.scored = False
    order = {"tp": 0, "cp": 1, "ep": 2, "dp": 3, "pp": 4}
    ops = {"AllReduce": 0, "AllGather": 1, "ReduceScatter": 2, "AllToAll": 3, "SendRecv": 4}
    out_rows = sorted(rows.values(), key=lambda r: (order.get(r.axis, 9), ops.get(r.op, 9)))
    mem_rows = _memory_rows(est, training, layout, memory, batch_bytes, model)
    notes = list(BACKEND_NOTES)
    unknown = [c.name for c in hlo if not c.trip_count_known]
    if unknown:
        notes.append(f"trip count unknown for {len(unknown)} collective(s) in loops (counted once): {unknown[:5]}")
    return Validation(strategy=strategy, model=model, training=training, layout=layout, mesh_shape=dict(mesh_shape),
                      rows=out_rows, memory=mem_rows, deltas=deltas, hlo=hlo, logical=logical,
                      memory_analysis=dict(memory), compile_s=compile_s, notes=notes)


def pipeline_memory_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout, mb: Any) -> dict[str, float]:
    """Per-device memory deltas (bytes) of the runtime's GPipe vs the planner's stage ``mb.stage``
    (``pp > 1``; all zero for ``pp = 1``). ``R = blocks + outer`` of :func:`runtime_stage_params`,
    ``P`` the planner stage's parameters, ``k = m + pp - 1`` ticks:

    * ``state`` (``pp-replicated-embedding-head``): ``(params + optimizer) (R/P - 1)`` -- every rank
      holds the embedding, LM head and final norm (the planner: embedding on stage 0, head and norm
      on the last) and ``L_max`` (padded) block slots;
    * ``grads``: likewise ``grads (R/P - 1)``;
    * ``activations`` (``gpipe-tick-residuals``, recompute none): the scan keeps the residuals of
      all ``k`` ticks of ``L_max`` layers, ``a_tok L_max u k``, plus the embedding output of the
      whole local batch ``beta u h m / sigma``, instead of the planner's schedule-dependent
      in-flight microbatches;
    * ``logits`` (``pp-replicated-embedding-head``): every rank computes the LM head and loss of
      the whole local batch, ``u m (beta + 4) V / t``, instead of one microbatch on the last stage.
    """
    from shardplan.cost.memory import activation_bytes_per_token

    p = layout.parallel
    out = {"state": 0.0, "grads": 0.0, "activations": 0.0, "logits": 0.0}
    if p.pp == 1:
        return out
    blocks, outer = runtime_stage_params(model, layout)
    scale = (blocks + outer) / _planner_stage_params(model, layout, mb.stage) - 1
    out["state"] = (mb.params + mb.optimizer) * scale
    out["grads"] = mb.grads * scale
    m, ticks = layout.microbatches, layout.microbatches + p.pp - 1
    u = training.seq_len * p.microbatch_size / p.cp
    beta = training.precision.activation_bytes
    sigma = p.tp if p.sp else 1
    if p.recompute == "none":
        a_tok = activation_bytes_per_token(model, training, layout, model.is_moe)
        act = a_tok * max(layout.stage_layers) * u * ticks + beta * u * model.d_model * m / sigma
        out["activations"] = act - mb.activations
    out["logits"] = u * m * (beta + 4) * model.vocab_size / p.tp - mb.logits
    return out


def _memory_rows(est: Any, training: TrainingSpec, layout: Layout, memory: dict[str, int],
                 batch_bytes: float | None, model: ModelSpec | None = None) -> list[MemoryRow]:
    """Memory rows: persistent state vs compiled arguments, transient vs compiled temp (with the
    pipeline deltas of :func:`pipeline_memory_deltas` when ``pp > 1``)."""
    if not memory:
        return []
    mb = est.memory
    p = layout.parallel
    if batch_bytes is None:
        local_seqs = training.global_batch_size // p.dp
        batch_bytes = 4.0 * local_seqs * (training.seq_len + 1)
    dm = (pipeline_memory_deltas(model, training, layout, mb) if model is not None
          else {"state": 0.0, "grads": 0.0, "activations": 0.0, "logits": 0.0})
    pp_note = ""
    if p.pp > 1:
        pp_note = (f"; expected = planner {mb.params + mb.optimizer:,.0f} + pp-replicated-embedding-head "
                   f"{dm['state']:+,.0f}")
    state_pred = mb.params + mb.optimizer + dm["state"]
    state_comp = memory["argument"] - batch_bytes
    err = _rel(state_pred, state_comp)
    rows = [MemoryRow("params + optimizer state (step arguments)", state_pred, state_comp,
                      f"±{BYTES_TOLERANCE:.0%}",
                      "compiled: argument bytes minus the token batch (params, Adam moments, step counters)" + pp_note,
                      err is not None and abs(err) <= BYTES_TOLERANCE)]
    out_comp = memory["output"] - 4.0 * 2  # loss and grad-norm scalars
    err = _rel(state_pred, out_comp)
    rows.append(MemoryRow("params + optimizer state (step outputs, donated)", state_pred, out_comp,
                          f"±{BYTES_TOLERANCE:.0%}", "compiled: output bytes minus the two metric scalars" + pp_note,
                          err is not None and abs(err) <= BYTES_TOLERANCE))
    transient = mb.grads + mb.activations + mb.logits + mb.zero3_buffers
    t_delta = dm["grads"] + dm["activations"] + dm["logits"]
    comp = memory["temp"]
    ratio = (transient + t_delta) / comp if comp else float("inf")
    t_note = ""
    if p.pp > 1:
        t_note = (f"; expected = planner {transient:,.0f} + pp-replicated-embedding-head "
                  f"{dm['grads'] + dm['logits']:+,.0f} + gpipe-tick-residuals {dm['activations']:+,.0f}")
    rows.append(MemoryRow("grads + activations + logits + ZeRO-3 buffers (temp)", transient + t_delta, comp,
                          f"x{TEMP_FACTOR:g}", "compiled: temp bytes (XLA buffer assignment, live-range packed)"
                          + t_note, 1 / TEMP_FACTOR <= ratio <= TEMP_FACTOR))
    ms_pred = mb.model_state + dm["state"] + dm["grads"]
    ms_comp = state_comp + mb.grads + dm["grads"]
    rows.append(MemoryRow("model state: params + grads + optimizer", ms_pred, ms_comp, f"±{BYTES_TOLERANCE:.0%}",
                          "compiled: state arguments + the expected gradient bytes (gradients are temp "
                          "buffers in the compiled step, not arguments)" + pp_note,
                          abs(_rel(ms_pred, ms_comp) or 0) <= BYTES_TOLERANCE))
    return rows


def runtime_training(training: TrainingSpec, compute_dtype: str) -> TrainingSpec:
    """The TrainingSpec the planner should use for the runtime: precision ``fp32`` when the runtime
    computes in fp32 (params, grads, moments and activations all 4 bytes), ``bf16-mixed`` otherwise
    (parameters are fp32 masters in the runtime either way), and naive attention (the runtime
    materialises the score matrix)."""
    prec = "fp32" if compute_dtype in ("float32", "fp32") else training.precision.name
    return training.model_copy(update={"precision": PRECISION_POLICIES[prec], "attention": "naive",
                                       "dropout": False})


def validate_plan(model: ModelSpec, layout: Layout, training: TrainingSpec, cfg: Any = None,
                  hardware: HardwareSpec | None = None, devices: Any = None) -> Validation:
    """Compile the runtime's training step for a plan and compare it with the planner.

    Args:
        model: model shapes (scale it down first for CPU).
        layout: validated layout.
        training: seq_len / batch (precision and attention are set by :func:`runtime_training`).
        cfg: :class:`shardplan.jax.train.TrainConfig` (default: fp32 compute).
        hardware: for the planner's times only.
        devices: devices for the mesh (default all).

    Returns:
        :class:`Validation`.

    Raises:
        ConfigError: a plan the runtime cannot compile (indivisible shapes, wrong device count; see
            :class:`shardplan.jax.train.Trainer`), or ``ep > 1`` (MoE routing is a dense dispatch in
            the runtime, so its all-to-all traffic is not comparable).
    """
    from shardplan.jax.train import TrainConfig, Trainer

    p = layout.parallel
    if p.ep > 1:
        raise ConfigError(f"ep={p.ep}: the JAX runtime's MoE uses a dense dispatch (no token all-to-all), so "
                          f"expert-parallel communication cannot be validated; legal ep: 1", field="ep",
                          value=p.ep, legal=[1])
    if p.offload_optimizer:
        raise ConfigError("offload_optimizer=True is not implemented by the JAX runtime; legal: False",
                          field="offload_optimizer", value=True, legal=[False])
    cfg = cfg or TrainConfig(compute_dtype="float32")
    tr = runtime_training(training, cfg.compute_dtype)
    t0 = time.perf_counter()
    trainer = Trainer(model, layout, tr, cfg, devices=devices)
    compile_s = time.perf_counter() - t0
    text = trainer.compiled.as_text()
    memory = memory_breakdown(trainer.compiled)
    mesh_shape = {a: int(trainer.mesh.shape[a]) for a in trainer.mesh.axis_names}
    return compare(model, tr, layout, text, memory, mesh_shape, hardware, trainer.rules.strategy, compile_s)


def group_by_kind(v: Validation) -> dict[str, dict[str, float]]:
    """Compiled logical bytes per op (all axes), for summaries."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"count": 0.0, "bytes": 0.0})
    for lc in v.logical:
        out[lc.op]["count"] += lc.count
        out[lc.op]["bytes"] += lc.bytes_per_device
    return dict(out)


__all__ = ["BACKEND_NOTES", "BYTES_TOLERANCE", "CollectiveRow", "LogicalCollective", "MemoryRow",
           "NEGLIGIBLE_SHARE", "RuntimeDelta", "TEMP_FACTOR", "Validation", "compare", "logical_collectives",
           "pipeline_memory_deltas", "planner_axis", "raw_bytes_per_device", "runtime_deltas",
           "runtime_stage_params", "runtime_training", "validate_plan"]
