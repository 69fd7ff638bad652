"""Backend mapping: the compiled program's HLO collectives as the logical collectives the planner names.

Raw HLO collectives (:mod:`shardplan.crosscheck.hlo`) are mapped as follows, and both the raw and
the mapped form are reported:

* an ``all-reduce`` whose every consumer keeps a ``1/n`` ``dynamic-slice`` (partition-id indexed)
  -> **ReduceScatter** (XLA:CPU emits reduce-scatter as all-reduce + dynamic-slice);
* an ``all-reduce`` over ``n`` devices whose every consumer keeps a ``1/k`` slice, ``1 < k < n``
  (:attr:`shardplan.crosscheck.hlo.Element.split`; in HSDP the embedding gradient, all-reduced over
  dp x fsdp and sliced to the fsdp shard) -> **ReduceScatter over k, then AllReduce of the slice
  over n / k**, the rewrite of XLA:GPU's all-reduce splitter pass (OpenXLA,
  ``xla/service/gpu/transforms/all_reduce_splitter.h``) and the planner's HSDP gradient pair;
* an ``all-reduce`` element that reduces again the result of another all-reduce over disjoint
  *data* axes (dp / fsdp / ep / cp; e.g. gradients reduced over ``cp`` and then over ``dp``)
  -> **one AllReduce over the product group**, which is how the planner (and Megatron's dp x cp
  gradient group) counts it; a tp reduction followed by a dp one stays two, as in Megatron;
* two all-reduce elements over the same groups whose results are only added to each other
  (a tied embedding's two gradients: the lookup's and the output layer's) -> **one AllReduce of
  the sum**, as XLA's all-reduce reassociation pass rewrites ``add(all-reduce(x), all-reduce(y))``
  into ``all-reduce(add(x, y))`` (OpenXLA, ``xla/service/all_reduce_reassociate.h``; run by the
  GPU and TPU compilers, not by XLA:CPU) and as Megatron-LM reduces a tied table once;
* ``-start``/``-done`` async pairs count once; ``collective-permute`` -> **SendRecv**, whose bytes
  per device are those of the device that sends the most over the step
  (:func:`shardplan.crosscheck.compare.collective_rows` sums each device's sends, the sources of the
  ``source_target_pairs``, over all collective-permutes of a row and takes the largest): a
  permutation in which only some devices send (a pipeline's first or last stage) costs the others
  nothing, as the planner counts the busiest device's sends.

Mesh axes -> planner axes (:func:`planner_axis`): the runtime's ``dp`` and ``fsdp`` (and anything
grouped with them, e.g. ``dp+cp`` for the gradient reduction) are the planner's ``dp``; ``tp``,
``cp``, ``ep`` and ``pp`` map to themselves, except that only the token AllToAll is ``ep``'s: any
other collective over the ``ep`` mesh axis alone reduces or gathers dense weights over data ranks
(``dp``).

Bytes per device are :func:`shardplan.cost.collective.bytes_sent`, the planner's own convention.
No JAX is imported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from shardplan.cost.collective import bytes_sent
from shardplan.crosscheck.hlo import Element, HloCollective, HloModule, Instruction, is_scattered, parse_module

#: HLO opcode -> planner collective name.
OP_NAMES = {"all-gather": "AllGather", "reduce-scatter": "ReduceScatter", "all-reduce": "AllReduce",
            "all-to-all": "AllToAll", "collective-permute": "SendRecv", "collective-broadcast": "Broadcast"}
#: Mesh axes in mesh order (:data:`shardplan.jax.mesh.MESH_AXES`, repeated here to stay JAX-free).
MESH_ORDER = ("pp", "dp", "fsdp", "ep", "cp", "tp")
#: Mesh axes whose all-reduces the planner treats as one data-parallel group (dp x cp).
DATA_AXES = frozenset({"dp", "fsdp", "ep", "cp"})


def planner_axis(mesh_axes: tuple[str, ...], op: str | None = None) -> str:
    """The planner axis of a group spanning ``mesh_axes`` (module docstring); ``"-"`` for none.
    A collective other than the token AllToAll over the ``ep`` mesh axis alone is a data-parallel
    one (the ep ranks are data-parallel ranks for the dense weights: when ep takes every data rank,
    the runtime's ``dp`` axis has size 1 and drops out of the groups)."""
    s = set(mesh_axes)
    if not s:
        return "-"
    if s & {"dp", "fsdp"} or (s == {"ep"} and op not in (None, "AllToAll")):
        return "dp"
    for a in ("cp", "ep", "tp", "pp"):
        if a in s:
            return a
    return "+".join(mesh_axes)


def sent(op: str, full: float, n: int) -> float:
    """Bytes one device sends per execution (:func:`~shardplan.cost.collective.bytes_sent`) for a
    full buffer ``full`` (bytes) on ``n`` devices; 0 for a group of one (a collective-permute onto
    itself moves nothing). A ``Broadcast`` (not a planner op) is counted like an AllGather,
    ``S (n-1)/n``."""
    if n <= 1:
        return 0.0
    return bytes_sent("AllGather" if op == "Broadcast" else op, full, n)


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
        senders: for a SendRecv (collective-permute), the devices that send in one execution (one
            entry per source-target pair; ``bytes_per_device`` is then per *sending* device); empty
            for the other ops.
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
    senders: tuple[int, ...] = ()


def raw_bytes_per_device(c: HloCollective) -> float:
    """Bytes per device per step of one HLO collective taken literally (no backend mapping): the
    all-gather result, else the operand, as the full buffer of :func:`sent`."""
    full = c.result_bytes if c.kind == "all-gather" else c.operand_bytes
    return sent(OP_NAMES[c.kind], full, c.group_size) * c.per_step


def _tuple_source(module: HloModule, operand: str) -> tuple[str | None, int]:
    """The instruction an operand comes from, looking through one ``get-tuple-element``, and the
    tuple index (0 when none)."""
    oi = module.by_name.get(operand)
    if oi is not None and oi.opcode == "get-tuple-element":
        mj = re.search(r"index=(\d+)", oi.attrs)
        return oi.operands[0], int(mj.group(1)) if mj else 0
    return operand, 0


def _only_use(module: HloModule, first: str, j: int) -> bool:
    """Element ``j`` of all-reduce ``first`` has no use besides the one that reduces it again."""
    users = module.users.get(first, [])
    if users and all(u.opcode == "get-tuple-element" for u in users):
        uses = [u for u in users if re.search(rf"index={j}\b", u.attrs)]
        return all(len(module.users.get(u.name, [])) == 1 for u in uses)
    return True


def chained_allreduces(cols: list[HloCollective], module: HloModule
                       ) -> tuple[dict[tuple[str, int], HloCollective], set[tuple[str, int]]]:
    """All-reduce elements that reduce again the result of an all-reduce over disjoint data axes.

    Args:
        cols: the compiled collectives (:func:`shardplan.crosscheck.hlo.hlo_collectives`).
        module: the parsed HLO module they come from (:func:`shardplan.crosscheck.hlo.parse_module`).

    Returns:
        ``(folded, absorbed)``: ``folded[(second, element)]`` is the first all-reduce whose result
        that element reduces again; ``absorbed`` holds the ``(first, element)`` pairs so folded
        (reported as part of the second).
    """
    ars = {c.name: c for c in cols if c.kind == "all-reduce"}
    folded: dict[tuple[str, int], HloCollective] = {}
    absorbed: set[tuple[str, int]] = set()
    for c in ars.values():
        inst = module.by_name[c.name]
        if len(inst.operands) != len(c.elements):
            continue
        for i, o in enumerate(inst.operands):
            src, j = _tuple_source(module, o)
            first = ars.get(src) if src is not None else None
            if first is None or set(first.mesh_axes) & set(c.mesh_axes) or first.elements[j].scattered \
                    or first.elements[j].split:
                continue
            if not set(first.mesh_axes) | set(c.mesh_axes) <= DATA_AXES:
                continue  # e.g. tp then dp: two collectives in Megatron too (model- vs data-parallel)
            if not _only_use(module, first.name, j):
                continue  # the partially reduced value is used elsewhere too
            folded[(c.name, i)] = first
            absorbed.add((first.name, j))
    return folded, absorbed


def _split_pair(c: HloCollective, e: Element) -> list[LogicalCollective]:
    """An all-reduce element over ``n`` devices kept as ``1/k`` slices (``k = e.split``) as the
    ReduceScatter over ``k`` and the AllReduce of the ``1/k`` slice over ``n / k`` that XLA:GPU's
    all-reduce splitter makes of it (module docstring). Per device (the planner's convention,
    :func:`sent`): ``S (k - 1) / k + 2 (S / k) (n / k - 1) / (n / k)``, e.g. ``S = 64 KiB``,
    ``n = 8``, ``k = 4``: 48 + 16 = 64 KiB, against 112 KiB for the all-reduce over 8."""
    k, n = e.split, c.group_size
    note = f"all-reduce over {n} + 1/{k} dynamic-slice -> reduce-scatter over {k} + all-reduce over {n // k}"
    parts = [("ReduceScatter", k, e.operand_bytes), ("AllReduce", n // k, e.operand_bytes / k)]
    return [LogicalCollective(op=op, axis=planner_axis(c.mesh_axes, op), mesh_axes=c.mesh_axes, group_size=g,
                              count=c.per_step, full_bytes=full, bytes_per_device=sent(op, full, g) * c.per_step,
                              source=c.name, mapping=note, op_name=c.op_name)
            for op, g, full in parts]


def _scattered_over(module: HloModule, name: str, index: int, e: Element, n: int) -> bool:
    """Whether element ``index`` of all-reduce ``name`` is kept only as ``1/n`` slices, ``n`` the product group of a
    chained pair: ZeRO-1 + CP shards the optimizer over dp x cp, so after the cp then dp all-reduces each device
    keeps 1/(dp cp) of the gradient (sliced inside the update's fusions by partition id), which the dp all-reduce's
    own group (1/dp) does not show (new-user pass 56b: 730 KiB of AllReduce against the planner's 365 KiB
    ReduceScatter)."""
    tup = module.by_name[name].shape.lstrip().startswith("(")
    return is_scattered(module, name, math.prod(e.dims), n, index if tup else None)


def _adds_only(module: HloModule, inst: Instruction) -> bool:
    """``inst`` adds its two operands and nothing else: an ``add``, or a fusion whose body is one
    ``add`` of its two parameters (XLA:CPU's ``wrapped_add``)."""
    if inst.opcode == "add":
        return len(inst.operands) == 2
    if inst.opcode != "fusion" or len(inst.operands) != 2:
        return False
    body = [i for i in module.computations.get(inst.attr("calls") or "", []) if i.opcode != "parameter"]
    return len(body) == 1 and body[0].opcode == "add"


def reassociated_allreduces(cols: list[HloCollective], module: HloModule) -> dict[tuple[str, int], tuple[str, int]]:
    """All-reduce elements folded into another by XLA's all-reduce reassociation (module docstring):
    of each ``add`` whose two operands are whole (not sliced) all-reduce elements over the same
    groups and of one shape, each used by that add alone, the second operand's ``(name, element)``
    -> the first's (which stands for the all-reduce of the sum)."""
    ars = {c.name: c for c in cols if c.kind == "all-reduce"}
    absorbed: dict[tuple[str, int], tuple[str, int]] = {}
    for inst in module.by_name.values():
        if not _adds_only(module, inst):
            continue
        src = [_tuple_source(module, o) for o in inst.operands]
        if any(name not in ars for name, _ in src) or src[0] == src[1]:
            continue
        (a, i), (b, j) = src
        ea, eb = ars[a].elements[i], ars[b].elements[j]
        if ars[a].groups != ars[b].groups or ea.dims != eb.dims or ea.scattered or eb.scattered or ea.split \
                or eb.split:
            continue
        if all(len(module.users.get(o, [])) == 1 for o in inst.operands):
            absorbed[(b, j)] = (a, i)
    return absorbed


def _tp_data_pair(c: HloCollective, e: Element, tp: int) -> list[LogicalCollective]:
    """An all-reduce element over ``tp`` x ``d`` devices spanning the tp axis and data axes (XLA reduces the
    replicated norm gradients of sequence parallelism over tp and cp at once; new-user pass 56b: a tp 2 x cp 2
    layout's tp row read +74%) as the planner's two reductions: an AllReduce over tp (its norm-gradient reduction)
    and one over the data axes (part of its dp x cp gradient group), each of the whole buffer ``S``: ``2 S (tp - 1)
    / tp + 2 S (d - 1) / d`` per device, e.g. ``S = 1 KiB``, tp 2, cp 2: 1 + 1 KiB, against 1.5 KiB over 4."""
    data = tuple(a for a in c.mesh_axes if a != "tp")
    note = f"all-reduce over {'+'.join(c.mesh_axes)} -> all-reduce over tp + all-reduce over {'+'.join(data)}"
    return [LogicalCollective(op="AllReduce", axis=planner_axis(axes, "AllReduce"), mesh_axes=axes, group_size=g,
                              count=c.per_step, full_bytes=e.operand_bytes,
                              bytes_per_device=sent("AllReduce", e.operand_bytes, g) * c.per_step, source=c.name,
                              mapping=note, op_name=c.op_name)
            for axes, g in ((("tp",), tp), (data, c.group_size // tp))]


def logical_collectives(cols: list[HloCollective], hlo_text: str | None = None,
                        mesh_shape: dict[str, int] | None = None) -> list[LogicalCollective]:
    """Apply the backend mapping (module docstring) to the compiled collectives.

    Args:
        cols: from :func:`shardplan.crosscheck.hlo.hlo_collectives` (with mesh axes).
        hlo_text: the HLO text, needed to detect chained and reassociated all-reduces (skipped when None).
        mesh_shape: the mesh's axis sizes, needed to split an all-reduce over tp and data axes
            (:func:`_tp_data_pair`; kept whole when None).

    Returns:
        One :class:`LogicalCollective` per array (tuple element) per collective; scattered
        all-reduce elements become ReduceScatter; chained all-reduces over disjoint axes become one
        AllReduce over the union of the axes; collective-permutes onto the device itself are dropped.
    """
    module = parse_module(hlo_text) if hlo_text is not None else None
    folded, absorbed = chained_allreduces(cols, module) if module is not None else ({}, set())
    reassociated = reassociated_allreduces(cols, module) if module is not None else {}
    summed = set(reassociated.values())
    out: list[LogicalCollective] = []
    for c in cols:
        if c.kind == "collective-permute" and c.group_size < 2:
            continue  # self-copies only
        for i, e in enumerate(c.elements):
            if (c.name, i) in absorbed or (c.name, i) in reassociated:
                continue
            axes, n, maps = c.mesh_axes, c.group_size, []
            if (c.name, i) in folded:
                first = folded[(c.name, i)]
                axes = tuple(a for a in MESH_ORDER if a in set(axes) | set(first.mesh_axes))
                n = c.group_size * first.group_size
                maps.append(f"all-reduce over {'+'.join(first.mesh_axes)} then {'+'.join(c.mesh_axes)} "
                            f"-> one all-reduce")
            if (c.name, i) in summed:
                maps.append("all-reduce(x) + all-reduce(y) -> all-reduce(x + y)")
            if c.kind == "all-reduce" and e.split and (c.name, i) not in folded:
                out.extend(_split_pair(c, e))
                continue
            tp = (mesh_shape or {}).get("tp", 1)
            if (c.kind == "all-reduce" and not e.scattered and (c.name, i) not in folded and tp > 1 and c.exact_axes
                    and "tp" in axes and set(axes) - {"tp"} and set(axes) - {"tp"} <= DATA_AXES):
                out.extend(_tp_data_pair(c, e, tp))
                continue
            if c.kind == "all-reduce" and (e.scattered or ((c.name, i) in folded and module is not None
                                                           and _scattered_over(module, c.name, i, e, n))):
                op, full = "ReduceScatter", e.operand_bytes
                maps.append("all-reduce + dynamic-slice -> reduce-scatter")
            else:
                op, full = OP_NAMES[c.kind], e.result_bytes if c.kind == "all-gather" else e.operand_bytes
            senders = tuple(g[0] for g in c.groups if len(g) == 2 and g[0] != g[1]) \
                if c.kind == "collective-permute" else ()
            out.append(LogicalCollective(op=op, axis=planner_axis(axes, op), mesh_axes=axes, group_size=n,
                                         count=c.per_step, full_bytes=full,
                                         bytes_per_device=sent(op, full, n) * c.per_step,
                                         source=c.name, mapping="; ".join(maps), op_name=c.op_name,
                                         senders=senders))
    return out


__all__ = ["DATA_AXES", "LogicalCollective", "MESH_ORDER", "OP_NAMES", "chained_allreduces",
           "logical_collectives", "reassociated_allreduces", "planner_axis", "raw_bytes_per_device", "sent"]
