"""Parse the HLO text XLA compiled: every collective, its groups, bytes and executions per step.

:func:`hlo_collectives` parses ``compiled.as_text()`` (the optimized, SPMD-partitioned HLO module
of one device) and returns one :class:`HloCollective` per collective instruction:

* kinds: ``all-gather``, ``reduce-scatter``, ``all-reduce``, ``all-to-all``,
  ``collective-permute`` and ``collective-broadcast``, in their synchronous form or the asynchronous
  ``<kind>-start`` / ``<kind>-done`` pair (the ``-start`` is counted, the ``-done`` skipped);
* operand and result bytes (tuple-shaped collectives, e.g. the all-reduce combiner's output, are
  kept per element in :attr:`HloCollective.elements`);
* the device groups, from every replica-group syntax XLA prints: explicit ``{{0,1},{2,3}}``,
  iota ``[2,4]<=[4,2]T(1,0)`` (``iota(prod(dims)).reshape(dims).transpose(perm).reshape(G, S)``),
  the mesh-axes form ``mesh['axis_0'=4,'axis_1'=2], device_ids=([4,2]T(1,0)) {'axis_1'}``
  (groups = devices that differ only along the listed axes, sub-axes ``'a':(pre)size``; semantics
  of ``xla/hlo/ir/replica_group.cc`` ``MeshAxesReplicaGroupList``) and ``source_target_pairs`` of
  collective-permute;
* how often it runs per step: instructions inside ``while`` bodies (gradient accumulation,
  ``scan`` over layers) are multiplied by the loop's trip count. The trip count is read from the
  while instruction's ``backend_config`` (``"known_trip_count":{"n":"K"}``, set by XLA's loop
  analysis); failing that, from the loop condition when it is ``compare(counter,
  constant(K)), direction=LT`` (counter assumed to start at 0); failing both, the multiplicity is 1
  and :attr:`HloCollective.trip_count_known` is False;
* ``scattered``: for each all-reduce element, whether every consumer keeps only this device's
  ``1/n`` slice (a ``dynamic-slice`` indexed by the partition id, possibly inside a fusion) --
  the pattern XLA:CPU emits instead of a reduce-scatter.

Device ids in replica groups are *logical* ids (``use_global_device_ids=true`` with one replica:
the partition number), i.e. positions in the executable's device assignment, which for a jit over
a :class:`jax.sharding.Mesh` is ``mesh.devices.flat``. :func:`axes_of_groups` maps them to mesh
coordinates and names the mesh axes a group spans.

This module is pure text processing plus numpy and does not import JAX (the compiled program's
``memory_analysis()`` is read by :func:`shardplan.jax.validate.memory_breakdown`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Collective opcodes recognised (the async ``-start`` forms are folded into these).
COLLECTIVE_KINDS: tuple[str, ...] = ("all-gather", "reduce-scatter", "all-reduce", "all-to-all",
                                     "collective-permute", "collective-broadcast")

#: Bytes per element of HLO primitive types.
DTYPE_BYTES: dict[str, float] = {
    "pred": 1, "s2": 0.25, "u2": 0.25, "s4": 0.5, "u4": 0.5, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2,
    "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
    "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3fnuz": 1, "f8e5m2fnuz": 1, "f8e4m3b11fnuz": 1, "f8e4m3": 1, "f8e3m4": 1,
    "f8e8m0fnu": 1, "f4e2m1fn": 0.5, "token": 0,
}

_ARRAY_RE = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
_INSTR_RE = re.compile(r"^\s*(ROOT\s+)?%([^\s=]+)\s*=\s*(.*)$")
_COMP_RE = re.compile(r"^\s*(ENTRY\s+)?%([^\s(]+)\s*\(.*\{\s*$")


class HloParseError(ValueError):
    """The HLO text has a construct this parser does not understand (names the instruction)."""


# ----- shapes ----------------------------------------------------------------------------------

def array_shapes(shape: str) -> list[tuple[str, tuple[int, ...]]]:
    """``"(f32[], f32[64,4]{1,0})"`` -> ``[("f32", ()), ("f32", (64, 4))]`` (tuple elements in order)."""
    out = []
    for dt, dims in _ARRAY_RE.findall(shape):
        if dt not in DTYPE_BYTES:
            continue
        out.append((dt, tuple(int(d) for d in dims.split(",") if d)))
    return out


def shape_bytes(shape: str) -> float:
    """Bytes of an HLO shape string (sum over tuple elements; layouts ignored)."""
    return sum(DTYPE_BYTES[dt] * math.prod(dims) for dt, dims in array_shapes(shape))


def _split_shape(rest: str) -> tuple[str, str]:
    """Split ``"<shape> <opcode>(...)..."`` into the shape and the remainder."""
    rest = rest.lstrip()
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[: i + 1], rest[i + 1:].lstrip()
        raise HloParseError(f"unbalanced tuple shape: {rest[:80]}")
    m = re.match(r"(\S+)\s+(.*)$", rest)
    if not m:
        raise HloParseError(f"cannot split shape from: {rest[:80]}")
    return m.group(1), m.group(2)


def _matching(s: str, start: int) -> int:
    """Index of the parenthesis closing the one at ``start``."""
    depth = 0
    for i in range(start, len(s)):
        depth += s[i] == "("
        depth -= s[i] == ")"
        if depth == 0:
            return i
    raise HloParseError(f"unbalanced parentheses: {s[start:start + 80]}")


# ----- module structure ------------------------------------------------------------------------

@dataclass
class Instruction:
    """One HLO instruction.

    Attributes:
        name: instruction name without ``%``.
        shape: result shape text.
        opcode: e.g. ``all-reduce``, ``fusion``.
        operands: operand names without ``%``.
        attrs: the text after the operand list (attributes, metadata).
        computation: the enclosing computation's name.
        raw_operands: the text inside the operand parentheses (literals of ``constant`` and
            ``parameter`` numbers live here).
    """

    name: str
    shape: str
    opcode: str
    operands: list[str]
    attrs: str
    computation: str
    raw_operands: str = ""

    def attr(self, key: str) -> str | None:
        """The value of a simple ``key=%name`` / ``key=value`` attribute, else None."""
        m = re.search(rf"(?:^|[\s,]){re.escape(key)}=%?([^\s,{{}}]+)", self.attrs)
        return m.group(1) if m else None

    @property
    def op_name(self) -> str:
        """The JAX source op path from ``metadata={op_name=...}`` ('' when absent)."""
        m = re.search(r'op_name="([^"]*)"', self.attrs)
        return m.group(1) if m else ""


@dataclass
class HloModule:
    """A parsed HLO module: computations (name -> instructions), the entry computation's name, the
    partition count and an index of every instruction by name."""

    computations: dict[str, list[Instruction]]
    entry: str
    num_partitions: int
    by_name: dict[str, Instruction]
    users: dict[str, list[Instruction]]


def parse_module(text: str) -> HloModule:
    """Parse the text of an HLO module (``compiled.as_text()``).

    Raises:
        HloParseError: no ENTRY computation, or an instruction line that cannot be split.
    """
    comps: dict[str, list[Instruction]] = {}
    entry = ""
    cur: str | None = None
    m_parts = re.search(r"num_partitions=(\d+)", text.split("\n", 1)[0])
    num_partitions = int(m_parts.group(1)) if m_parts else 1
    for line in text.splitlines():
        if cur is None:
            m = _COMP_RE.match(line)
            if m:
                cur = m.group(2)
                comps[cur] = []
                if m.group(1):
                    entry = cur
            continue
        if line.strip() == "}":
            cur = None
            continue
        m = _INSTR_RE.match(line)
        if not m:
            continue
        name, rest = m.group(2), m.group(3)
        shape, rest = _split_shape(rest)
        mo = re.match(r"([\w\-.]+)\(", rest)
        if not mo:
            raise HloParseError(f"{name}: cannot read the opcode in {rest[:80]!r}")
        opcode = mo.group(1)
        close = _matching(rest, mo.end() - 1)
        operand_text = rest[mo.end():close]
        operands = re.findall(r"%([^\s,()]+)", operand_text)
        comps[cur].append(Instruction(name, shape, opcode, operands, rest[close + 1:], cur, operand_text))
    if not entry:
        raise HloParseError("no ENTRY computation in the HLO text")
    by_name = {i.name: i for insts in comps.values() for i in insts}
    users: dict[str, list[Instruction]] = {}
    for insts in comps.values():
        for i in insts:
            for o in dict.fromkeys(i.operands):
                users.setdefault(o, []).append(i)
    return HloModule(comps, entry, num_partitions, by_name, users)


def _called(inst: Instruction) -> list[tuple[str, str]]:
    """``(role, computation)`` pairs an instruction calls (body/condition/calls/branches...)."""
    out = []
    for key in ("body", "condition", "calls", "to_apply", "true_computation", "false_computation"):
        for m in re.finditer(rf"(?:^|[\s,]){key}=%([^\s,{{}}]+)", inst.attrs):
            out.append((key, m.group(1)))
    m = re.search(r"branch_computations=\{([^}]*)\}", inst.attrs)
    if m:
        out += [("branch", c) for c in re.findall(r"%([^\s,]+)", m.group(1))]
    m = re.search(r"(?:^|[\s,])calls=\{([^}]*)\}", inst.attrs)
    if m:
        out += [("calls", c) for c in re.findall(r"%([^\s,]+)", m.group(1))]
    return out


def while_trip_count(module: HloModule, inst: Instruction) -> tuple[int, str]:
    """Trip count of a ``while`` instruction and where it came from.

    Returns:
        ``(count, source)`` with source ``"backend_config"`` (XLA's ``known_trip_count``),
        ``"condition"`` (``compare(i, constant(K)), direction=LT`` in the condition computation,
        counter assumed to start at 0) or ``"unknown"`` (count 1).
    """
    m = re.search(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)"?', inst.attrs)
    if m:
        return int(m.group(1)), "backend_config"
    cond = inst.attr("condition")
    for ci in module.computations.get(cond or "", []):
        if ci.opcode == "compare" and "direction=LT" in ci.attrs and len(ci.operands) == 2:
            c = module.by_name.get(ci.operands[1])
            if c is not None and c.opcode == "constant":
                val = re.findall(r"-?\d+", module_constant_text(c))
                if val:
                    return int(val[0]), "condition"
    return 1, "unknown"


def module_constant_text(inst: Instruction) -> str:
    """The literal of a ``constant`` (or the number of a ``parameter``): the text inside the parentheses."""
    return inst.raw_operands


def multiplicities(module: HloModule) -> dict[str, tuple[float, bool]]:
    """How many times each computation runs per execution of the entry computation.

    Returns:
        ``{computation: (times, trip_counts_known)}``; while bodies and conditions multiply by the
        trip count (:func:`while_trip_count`), other calls by 1, summed over call sites.
        Computations never reached from the entry are absent.
    """
    out: dict[str, tuple[float, bool]] = {}

    def visit(comp: str, mult: float, known: bool, depth: int = 0) -> None:
        if depth > 64:
            raise HloParseError(f"call graph deeper than 64 at {comp}")
        prev = out.get(comp, (0.0, True))
        out[comp] = (prev[0] + mult, prev[1] and known)
        for inst in module.computations.get(comp, []):
            calls = _called(inst)
            if not calls:
                continue
            trip, src = (while_trip_count(module, inst) if inst.opcode == "while" else (1, "n/a"))
            for role, callee in calls:
                if role == "to_apply":
                    continue  # reduction lambdas: never contain collectives
                k = trip if role in ("body", "condition") else 1
                visit(callee, mult * k, known and src != "unknown", depth + 1)

    visit(module.entry, 1.0, True)
    return out


# ----- replica groups --------------------------------------------------------------------------

def _iota(dims: Sequence[int], perm: Sequence[int] | None) -> np.ndarray:
    a = np.arange(math.prod(dims)).reshape(dims)
    return a.transpose(perm) if perm else a


def _ints(s: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", s)]


def _parse_tile(s: str, sizes: Sequence[int]) -> np.ndarray:
    """A device assignment ``[4,2]T(1,0)`` / ``[8]`` (iota) or an explicit id list, shaped ``sizes``."""
    m = re.fullmatch(r"\s*\[([\d,]+)\](?:T\(([\d,]+)\))?\s*", s)
    if m:
        return _iota(_ints(m.group(1)), _ints(m.group(2)) if m.group(2) else None).reshape(sizes)
    ids = _ints(s)
    if len(ids) != math.prod(sizes):
        raise HloParseError(f"device_ids {s!r} do not fill a mesh of sizes {list(sizes)}")
    return np.asarray(ids).reshape(sizes)


def _mesh_groups(spec: str) -> list[list[int]]:
    """Groups of the mesh-axes replica-group form (see the module docstring)."""
    m = re.match(r"mesh\[([^\]]*)\]", spec)
    if not m:
        raise HloParseError(f"cannot read mesh replica groups {spec[:80]!r}")
    axes = re.findall(r"'?([\w.]+)'?\s*=\s*(\d+)", m.group(1))
    names = [a for a, _ in axes]
    sizes = [int(n) for _, n in axes]
    rest = spec[m.end():]
    dev = np.arange(math.prod(sizes)).reshape(sizes)
    md = re.match(r"\s*,\s*device_ids=\(", rest)
    if md:
        close = _matching(rest, md.end() - 1)
        dev = _parse_tile(rest[md.end():close], sizes)
        rest = rest[close + 1:]
    mg = re.search(r"\{([^}]*)\}", rest)
    if not mg:
        raise HloParseError(f"mesh replica groups without an axis list: {spec[:120]!r}")
    refs = []
    for tok in [t.strip() for t in mg.group(1).split(",") if t.strip()]:
        mr = re.fullmatch(r"'?([\w.]+)'?(?::\((\d+)\)(\d+))?", tok)
        if not mr or mr.group(1) not in names:
            raise HloParseError(f"unknown mesh axis {tok!r} in {spec[:120]!r}")
        idx = names.index(mr.group(1))
        refs.append((idx, int(mr.group(2)) if mr.group(2) else None, int(mr.group(3)) if mr.group(3) else None))
    # split every axis into (pre, size, post) pieces for its sub-axes, then group over the pieces
    new_sizes: list[int] = []
    piece_of: dict[tuple[int, int | None], int] = {}
    for i, n in enumerate(sizes):
        subs = sorted({(pre, sz) for (j, pre, sz) in refs if j == i and pre is not None})
        if not subs:
            piece_of[(i, None)] = len(new_sizes)
            new_sizes.append(n)
            continue
        prod = 1
        for pre, sz in subs:
            if pre != prod:
                new_sizes.append(pre // prod)
                prod = pre
            piece_of[(i, pre)] = len(new_sizes)
            new_sizes.append(sz)
            prod *= sz
        if prod != n:
            new_sizes.append(n // prod)
    # a sub-axis (pre)size of an axis reshaped row-major into [pre, size, rest]: pieces in
    # ascending pre_size order are major-to-minor (replica_group.cc HandleSingleAxisRefPerDimension)
    arr = dev.reshape(new_sizes)
    grouped = [piece_of[(i, pre)] for (i, pre, _) in refs]
    rest_axes = [a for a in range(arr.ndim) if a not in grouped]
    arr = arr.transpose(rest_axes + grouped)
    g = math.prod(arr.shape[a] for a in range(len(rest_axes), arr.ndim)) if grouped else 1
    return arr.reshape(-1, g).tolist()


def parse_replica_groups(attrs: str, num_devices: int) -> list[list[int]]:
    """The device groups of a collective from its attribute text.

    Args:
        attrs: the instruction's text after the operand list.
        num_devices: partitions in the module (one group of all of them when the attribute is
            absent or empty).

    Returns:
        A list of groups, each a list of logical device ids in group order. For
        ``collective-permute``, one ``[source, target]`` pair per entry of ``source_target_pairs``.

    Raises:
        HloParseError: an unrecognised replica-group syntax.
    """
    m = re.search(r"source_target_pairs=\{(.*?)\}\}", attrs)
    if m:
        return [_ints(p) for p in re.findall(r"\{([\d,\s]+)\}", m.group(1) + "}")]
    if "source_target_pairs={}" in attrs:
        return []
    i = attrs.find("replica_groups=")
    if i < 0:
        return [list(range(num_devices))]
    s = attrs[i + len("replica_groups="):]
    if s.startswith("{}"):
        return [list(range(num_devices))]
    if s.startswith("{"):
        depth, j = 0, 0
        for j, ch in enumerate(s):
            depth += ch == "{"
            depth -= ch == "}"
            if depth == 0:
                break
        return [_ints(g) for g in re.findall(r"\{([\d,\s]*)\}", s[1:j])]
    m = re.match(r"\[(\d+),(\d+)\]<=\[([\d,]+)\](?:T\(([\d,]+)\))?", s)
    if m:
        g, n = int(m.group(1)), int(m.group(2))
        return _iota(_ints(m.group(3)), _ints(m.group(4)) if m.group(4) else None).reshape(g, n).tolist()
    if s.startswith("mesh["):
        return _mesh_groups(s)
    raise HloParseError(f"unrecognised replica_groups syntax: {s[:120]!r}")


def axes_of_groups(groups: Sequence[Sequence[int]], mesh_shape: Mapping[str, int]) -> tuple[tuple[str, ...], bool]:
    """The mesh axes a set of device groups spans.

    Logical device id ``i`` is the position ``i`` in ``mesh.devices.flat``; its coordinates are
    ``np.unravel_index(i, sizes)``. An axis is spanned when coordinates along it differ inside a
    group.

    Args:
        groups: device groups (from :func:`parse_replica_groups`).
        mesh_shape: ``{axis: size}`` in mesh order (e.g. ``mesh.shape``).

    Returns:
        ``(axes, exact)``: the spanned axes in mesh order, and whether every group is exactly the
        product of those axes (False for sub-axis groups, e.g. 2 of the 4 ``fsdp`` devices).
    """
    names = list(mesh_shape)
    sizes = [mesh_shape[a] for a in names]
    spanned: set[int] = set()
    exact = True
    for grp in groups:
        if len(grp) <= 1:
            continue
        coords = np.array(np.unravel_index(np.asarray(grp), sizes)).T
        var = [k for k in range(len(names)) if len(set(coords[:, k])) > 1]
        spanned.update(var)
        if len(set(map(int, grp))) != math.prod(sizes[k] for k in var):
            exact = False
    axes = tuple(names[k] for k in sorted(spanned))
    return axes, exact


# ----- collectives -----------------------------------------------------------------------------

@dataclass
class Element:
    """One array of a (possibly tuple-shaped) collective.

    Attributes:
        dtype, dims: the result array (per device).
        operand_bytes: bytes of the matching operand on one device.
        result_bytes: bytes of the result on one device.
        scattered: for all-reduce, True when every consumer keeps only a ``1/n`` dynamic slice
            (the CPU reduce-scatter pattern).
        split: for an all-reduce over ``n`` devices that is not :attr:`scattered`, the largest
            proper divisor ``k > 1`` of ``n`` such that every consumer keeps only a ``1/k`` dynamic
            slice (0 when none). XLA:GPU's all-reduce splitter pass rewrites this pattern as a
            reduce-scatter over ``k`` devices followed by an all-reduce of the slice over the other
            ``n / k`` (OpenXLA, ``xla/service/gpu/transforms/all_reduce_splitter.h``, 2024; its
            header names HSDP gradients as the case it serves); XLA:CPU has no such pass.
    """

    dtype: str
    dims: tuple[int, ...]
    operand_bytes: float
    result_bytes: float
    scattered: bool = False
    split: int = 0


@dataclass
class HloCollective:
    """One collective instruction of the compiled module.

    Attributes:
        kind: one of :data:`COLLECTIVE_KINDS` (``-start`` folded in).
        name: HLO instruction name.
        is_async: it was an ``<kind>-start``.
        computation: enclosing computation.
        per_step: executions per step (product of enclosing loop trip counts).
        trip_count_known: every enclosing loop's trip count was found.
        groups: device groups (logical ids) or source/target pairs.
        group_size: devices per group (2 for a collective-permute pair).
        mesh_axes: mesh axes the groups span (see :func:`axes_of_groups`); empty for a no-op.
        exact_axes: groups are exactly the product of ``mesh_axes``.
        elements: per-array operand/result bytes.
        op_name: the JAX op path from the metadata (fwd/bwd/optimizer hints).
        promoted: an all-reduce XLA:CPU widened from bf16 to f32 (reducer ``*_promoted``); its
            :attr:`elements` are counted at bf16 (2 bytes per element), the bytes the program's
            bf16 reduction moves on a backend without the promotion (GPU, TPU).
    """

    kind: str
    name: str
    is_async: bool
    computation: str
    per_step: float
    trip_count_known: bool
    groups: list[list[int]]
    group_size: int
    mesh_axes: tuple[str, ...]
    exact_axes: bool
    elements: list[Element]
    op_name: str = ""
    promoted: bool = False

    @property
    def operand_bytes(self) -> float:
        """Operand bytes on one device (all tuple elements)."""
        return sum(e.operand_bytes for e in self.elements)

    @property
    def result_bytes(self) -> float:
        """Result bytes on one device (all tuple elements)."""
        return sum(e.result_bytes for e in self.elements)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (groups omitted)."""
        return dict(kind=self.kind, name=self.name, is_async=self.is_async, computation=self.computation,
                    per_step=self.per_step, trip_count_known=self.trip_count_known, group_size=self.group_size,
                    mesh_axes=list(self.mesh_axes), exact_axes=self.exact_axes, operand_bytes=self.operand_bytes,
                    result_bytes=self.result_bytes, n_elements=len(self.elements),
                    scattered_elements=sum(e.scattered for e in self.elements),
                    split_elements=sum(e.split > 0 for e in self.elements), op_name=self.op_name,
                    promoted=self.promoted)


#: ops that pass a value on with the same elements (a new layout or dtype)
_RELAYOUT = ("bitcast", "copy", "transpose", "reshape", "convert")
_PASS_THROUGH = _RELAYOUT + ("get-tuple-element",)


def _slices_param(module: HloModule, fusion: Instruction, operand: str, full_elems: int, n: int) -> bool:
    """Whether fusion ``fusion`` applies a ``1/n`` dynamic-slice to its operand ``operand``."""
    callee = fusion.attr("calls")
    body = module.computations.get(callee or "", [])
    idxs = [k for k, o in enumerate(fusion.operands) if o == operand]
    params = {i.name for i in body if i.opcode == "parameter" and _ints(module_constant_text(i))[:1]
              and _ints(module_constant_text(i))[0] in idxs}
    frontier, seen = set(params), set()
    while frontier:
        v = frontier.pop()
        seen.add(v)
        for u in module.users.get(v, []):
            if u.computation != callee:
                continue
            if u.opcode == "dynamic-slice" and u.operands and u.operands[0] == v:
                if _elems(u.shape) * n == full_elems:
                    return True
            elif u.opcode in _PASS_THROUGH and u.name not in seen:
                frontier.add(u.name)
    return False


def _elems(shape: str) -> int:
    return sum(math.prod(d) for _, d in array_shapes(shape))


def _converts(module: HloModule, inst: Instruction) -> bool:
    """A fusion whose body only converts / re-lays out its one input (e.g. XLA:CPU's
    ``wrapped_convert`` after an all-reduce it promoted from bf16 to f32)."""
    if inst.opcode != "fusion" or len(inst.operands) != 1:
        return False
    body = module.computations.get(inst.attr("calls") or "", [])
    return bool(body) and all(i.opcode == "parameter" or i.opcode in _RELAYOUT for i in body)


def is_scattered(module: HloModule, value: str, full_elems: int, n: int, tuple_index: int | None) -> bool:
    """Every consumer of ``value`` (element ``tuple_index`` of a tuple; ``full_elems`` elements) keeps only a
    ``1/n`` dynamic slice of it (the XLA:CPU reduce-scatter pattern, :attr:`Element.scattered`)."""
    return _is_scattered(module, value, full_elems, n, tuple_index)


def _is_scattered(module: HloModule, value: str, full_elems: int, n: int, tuple_index: int | None) -> bool:
    """Every consumer of ``value`` (element ``tuple_index`` of a tuple) keeps a 1/n dynamic slice."""
    if n <= 1:
        return False
    users = module.users.get(value, [])
    if tuple_index is not None:
        nxt = [u for u in users if u.opcode == "get-tuple-element" and re.search(rf"index={tuple_index}\b", u.attrs)]
        if not nxt:
            return False
        return all(_is_scattered(module, u.name, full_elems, n, None) for u in nxt)
    if not users:
        return False
    for u in users:
        if u.opcode == "dynamic-slice" and u.operands[0] == value and _elems(u.shape) * n == full_elems:
            continue
        if u.opcode in _RELAYOUT or _converts(module, u):
            if not _is_scattered(module, u.name, full_elems, n, None):
                return False
            continue
        if u.opcode == "fusion" and _slices_param(module, u, value, full_elems, n):
            continue
        return False
    return True


def _elements(module: HloModule, inst: Instruction, kind: str, is_async: bool, gsize: int) -> list[Element]:
    """Per-array operand and result bytes of one collective instruction.

    An async ``-start`` of all-gather / collective-permute / all-to-all / reduce-scatter returns the
    tuple ``(operands..., results..., [context scalars])``: only the results are kept. Where the
    operand arrays do not line up with the results, the operand bytes follow from the kind
    (all-gather: ``result / n``, reduce-scatter: ``result x n``, else equal). All-reduce elements
    get :attr:`Element.scattered` (the XLA:CPU reduce-scatter pattern) or :attr:`Element.split`
    (the HSDP pattern: a ``1/k`` slice of an all-reduce over more than ``k`` devices).
    """
    op_shapes = [array_shapes(module.by_name[o].shape) if o in module.by_name else [] for o in inst.operands]
    operand_arrays = [a for shp in op_shapes for a in shp]
    res_arrays = array_shapes(inst.shape)
    if is_async and kind in ("all-gather", "collective-permute", "all-to-all", "reduce-scatter") \
            and len(res_arrays) >= 2 * max(1, len(inst.operands)):
        k = len(inst.operands)
        res_arrays = res_arrays[k:2 * k]
    elements = []
    for j, (dt, dims) in enumerate(res_arrays):
        rb = DTYPE_BYTES[dt] * math.prod(dims)
        if j < len(operand_arrays) and len(operand_arrays) == len(res_arrays):
            odt, odims = operand_arrays[j]
            ob = DTYPE_BYTES[odt] * math.prod(odims)
        elif kind == "all-gather":
            ob = rb / max(gsize, 1)
        elif kind == "reduce-scatter":
            ob = rb * gsize
        else:
            ob = rb
        elements.append(Element(dt, dims, ob, rb))
    if kind == "all-reduce" and not is_async and gsize > 1:
        tup = inst.shape.lstrip().startswith("(")
        for j, e in enumerate(elements):
            e.scattered = _is_scattered(module, inst.name, math.prod(e.dims), gsize, j if tup else None)
            if not e.scattered:
                e.split = _split_parts(module, inst.name, math.prod(e.dims), gsize, j if tup else None)
    return elements


def _split_parts(module: HloModule, value: str, full_elems: int, n: int, tuple_index: int | None) -> int:
    """The largest proper divisor ``k > 1`` of ``n`` for which every consumer of ``value`` keeps a
    ``1/k`` dynamic slice (:attr:`Element.split`), else 0."""
    for k in range(n // 2, 1, -1):
        if n % k == 0 and full_elems % k == 0 and _is_scattered(module, value, full_elems, k, tuple_index):
            return k
    return 0


#: the reducer of an all-reduce that XLA:CPU promoted from bf16 to f32 (its all-reduce promotion
#: pass clones the reduction computation as ``<name>.clone_promoted``)
_PROMOTED_RE = re.compile(r"to_apply=%?[\w.\-]*promoted\b")

_COLLECTIVE_RE = re.compile(rf"^({'|'.join(re.escape(k) for k in COLLECTIVE_KINDS)})(-start)?$")


def _collective(module: HloModule, inst: Instruction, per_step: float, known: bool,
                mesh_shape: Mapping[str, int] | None) -> HloCollective | None:
    """The :class:`HloCollective` of one instruction, or None when it is not a collective (a
    ``-done`` is not: its ``-start`` counts)."""
    m = _COLLECTIVE_RE.match(inst.opcode)
    if not m:
        return None
    kind, is_async = m.group(1), bool(m.group(2))
    groups = parse_replica_groups(inst.attrs, module.num_partitions)
    if kind == "collective-permute":
        spanning = [p for p in groups if len(p) == 2 and p[0] != p[1]]
        gsize = 2 if spanning else 1
    else:
        spanning = groups
        gsize = max((len(g) for g in groups), default=1)
    axes, exact = axes_of_groups(spanning, mesh_shape) if mesh_shape else ((), True)
    elements = _elements(module, inst, kind, is_async, gsize)
    promoted = kind == "all-reduce" and bool(_PROMOTED_RE.search(inst.attrs))
    if promoted:  # XLA:CPU reduced a bf16 buffer in f32: count the bytes of the bf16 the program reduces
        elements = [Element("bf16", e.dims, e.operand_bytes / 2, e.result_bytes / 2, e.scattered, e.split)
                    if e.dtype == "f32" else e for e in elements]
    return HloCollective(kind=kind, name=inst.name, is_async=is_async, computation=inst.computation,
                         per_step=per_step, trip_count_known=known, groups=groups, group_size=gsize,
                         mesh_axes=axes, exact_axes=exact, elements=elements, op_name=inst.op_name,
                         promoted=promoted)


def hlo_collectives(text: str, mesh_shape: Mapping[str, int] | None = None) -> list[HloCollective]:
    """Every collective of a compiled HLO module (see the module docstring).

    Args:
        text: ``compiled.as_text()``.
        mesh_shape: ``{axis: size}`` of the mesh the program was partitioned for (mesh order);
            without it :attr:`HloCollective.mesh_axes` is empty.

    Returns:
        One :class:`HloCollective` per collective instruction reachable from the entry
        computation, in text order.

    Raises:
        HloParseError: unparseable instruction or replica groups.
    """
    module = parse_module(text)
    mult = multiplicities(module)
    out: list[HloCollective] = []
    for comp, insts in module.computations.items():
        if comp not in mult:
            continue
        per_step, known = mult[comp]
        for inst in insts:
            c = _collective(module, inst, per_step, known, mesh_shape)
            if c is not None:
                out.append(c)
    return out


__all__ = ["COLLECTIVE_KINDS", "DTYPE_BYTES", "Element", "HloCollective", "HloModule", "HloParseError",
           "Instruction", "array_shapes", "axes_of_groups", "hlo_collectives", "multiplicities", "parse_module",
           "parse_replica_groups", "shape_bytes", "while_trip_count"]
