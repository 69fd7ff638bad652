"""Logical axis names, per-strategy sharding rules and the resolver.

Every parameter and activation dimension carries a *logical* name (``"embed"``, ``"act_batch"``,
...). A rule table maps each logical name to an ordered list of mesh axes (:data:`MESH_AXES`). The
resolver (:func:`resolve`) turns the logical names of one array into a
:class:`~jax.sharding.PartitionSpec` with these semantics:

* for each dimension, every listed mesh axis of size > 1 that is not already used by an earlier
  dimension of the same array is taken, in list order (a mesh axis shards at most one dimension of
  an array; an axis used earlier is skipped -- that is the priority/fallback rule);
* size-1 mesh axes are dropped (they never appear in a spec);
* ``None`` as a logical name means "replicated on purpose";
* an unknown logical name, an unknown mesh axis or a dimension that is not divisible by the product
  of its mesh axes is a :class:`~shardplan.errors.ConfigError` naming the path, shape, logical axes
  and mesh sizes. Nothing is ever replicated silently.

Four tables are built per plan (:func:`make_rules`): where the parameters live (``param``), where
the optimizer state lives (``opt``; also the layout gradients are constrained to for ZeRO-2/3),
where activations live (``act``) and where a ZeRO-3 weight lives once gathered for use
(``gathered``: the parameter table without the ZeRO sharding). See ``docs/runtime.md`` for the
tables per strategy.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.mesh import BATCH_AXES, MESH_AXES, mesh_shape
from shardplan.parallel import Layout
from shardplan.specs.model import ModelSpec

#: The logical-axis rules as one table of data (MaxText's ``logical_axis_rules`` style): per logical
#: name, the mesh axes it is sharded over, the condition under which they apply (``None``: always)
#: and the mesh axes otherwise. Conditions (evaluated per plan and table by :func:`_conditions`):
#:
#: * ``zero``: the table holds ZeRO-sharded state -- the parameters under ZeRO-3, the optimizer
#:   state (and, for ZeRO-2/3, the gradients) under ZeRO-1/2/3; never the activations;
#: * ``kv_split``: K/V heads can be split over tp (tp = 1, or tp divides ``n_kv_heads``); else they
#:   are replicated (``kv_replication``);
#: * ``sp``: Megatron sequence parallelism (the residual stream between blocks is also split over tp).
#:
#: Names without ``act_`` are parameter dimensions (tables ``param`` and ``opt``); ``act_*`` names
#: are activation dimensions (table ``act``). ``act_kv_heads_cp`` is the KV-group dimension inside the attention core
#: under DeepSpeed-Ulysses (``cp_attention="a2a"``), split over cp as well as tp while the sequence is whole.
#: ``act_seq_norm`` is the sequence dimension of the
#: residual stream between blocks (the norm regions); ``act_exp_batch`` is the batch dimension of
#: per-expert activations (ep is taken by the experts). Mesh axes of size 1 drop out in
#: :func:`resolve`, so e.g. ``experts -> ep`` is a no-op when ep = 1.
LOGICAL_AXIS_RULES: tuple[tuple[str, tuple[str, ...], str | None, tuple[str, ...]], ...] = (
    # logical          mesh axes              when        otherwise   why
    ("vocab",          ("tp",),               None,       ()),        # Megatron vocab-parallel embedding / head
    ("embed",          ("fsdp", "ep", "cp"),  "zero",     ()),        # ZeRO / FSDP shard of the model width
    ("mlp",            ("tp",),               None,       ()),        # column (up/gate) / row (down) parallel
    ("heads",          ("tp",),               None,       ()),        # Q/O split by heads
    ("kv_heads",       ("tp",),               "kv_split", ()),        # K/V split by heads
    ("head_dim",       (),                    None,       ()),
    ("qkv",            (),                    None,       ()),        # fused QKV: a group's Q heads, K, V
    ("gate_up",        (),                    None,       ()),        # fused SwiGLU gate / up
    ("experts",        ("ep",),               None,       ()),        # MoE expert weights
    ("norm",           ("fsdp", "ep", "cp"),  "zero",     ()),        # as embed
    ("latent",         ("fsdp", "ep", "cp"),  "zero",     ()),        # MLA latents: whole on every tp rank
    ("position",       (),                    None,       ()),
    ("layers",         ("pp",),               None,       ()),        # stacked pipeline stages
    ("act_batch",      BATCH_AXES,            None,       ()),        # the batch
    ("act_exp_batch",  ("dp", "fsdp"),        None,       ()),
    ("act_seq",        ("cp",),               None,       ()),        # sequence inside attention and MLP
    ("act_seq_norm",   ("cp", "tp"),          "sp",       ("cp",)),   # residual stream between blocks
    ("act_embed",      (),                    None,       ()),
    ("act_mlp",        ("tp",),               None,       ()),
    ("act_heads",      ("tp",),               None,       ()),
    ("act_kv_heads",   ("tp",),               "kv_split", ()),
    ("act_kv_heads_cp", ("tp", "cp"),         "kv_split", ("cp",)),  # Ulysses: KV groups over tp and cp
    ("act_vocab",      ("tp",),               None,       ()),
    ("act_experts",    ("ep",),               None,       ()),
)
#: Logical names of parameter dimensions.
PARAM_AXES: tuple[str, ...] = tuple(r[0] for r in LOGICAL_AXIS_RULES if not r[0].startswith("act_"))
#: Logical names of activation dimensions.
ACT_AXES: tuple[str, ...] = tuple(r[0] for r in LOGICAL_AXIS_RULES if r[0].startswith("act_"))
LOGICAL_AXES: tuple[str, ...] = PARAM_AXES + ACT_AXES

Logical = tuple[Union[str, None], ...]
Table = dict[str, tuple[str, ...]]
#: A parameter override: a regex over parameter paths and either logical names or a PartitionSpec.
ParamOverride = tuple[str, Union[Sequence[Union[str, None]], P]]


@dataclass(frozen=True)
class ShardingRules:
    """The three rule tables of one plan.

    Attributes:
        param: logical name -> mesh axes, for the parameters (working copy).
        opt: logical name -> mesh axes, for the optimizer state (ZeRO-1/2/3 shard it over the data
            axes); gradients are constrained to this layout for ZeRO-2 and ZeRO-3.
        act: logical name -> mesh axes, for activations.
        gathered: logical name -> mesh axes, for a weight all-gathered for use under ZeRO-3 (the
            ``param`` table with the ``zero`` condition false: model-parallel axes only). Empty
            when the rules were built without it (the parameter layout is then used).
        sizes: mesh axis sizes.
        zero_stage: 0-3, selects where gradients are reduced (see :mod:`shardplan.jax.train`).
        strategy: human-readable strategy name, e.g. ``"FSDP(ZeRO-3)+TP+SP"``.
        param_overrides: ``(regex, logical names or PartitionSpec)`` pairs applied by path.
        cp_attention: how attention runs under context parallelism (``cp > 1``): ``"ring"`` (K/V
            blocks passed around the cp ring, sequence in zig-zag order, :mod:`shardplan.jax.ring`),
            ``"allgather"`` (K/V all-gathered over cp by GSPMD) or ``"a2a"`` (DeepSpeed-Ulysses, the plan's
            ``cp_comm='a2a'``: Q, K and V constrained from sequence shards to KV-group shards over cp, which
            GSPMD re-shards with AllToAlls, and the output back).
    """

    param: Table
    opt: Table
    act: Table
    sizes: dict[str, int]
    zero_stage: int = 0
    strategy: str = "DP"
    param_overrides: tuple[ParamOverride, ...] = field(default_factory=tuple)
    cp_attention: str = "ring"
    gathered: Table = field(default_factory=dict)


#: Attention variants under context parallelism (:attr:`ShardingRules.cp_attention`).
CP_ATTENTION: tuple[str, ...] = ("ring", "allgather", "a2a")


def strategy_name(layout: Layout) -> str:
    """Short name of the strategy a layout composes, e.g. ``"HSDP(ZeRO-3)+TP+SP+CP"``."""
    p = layout.parallel
    parts = []
    shard = p.dp_shard or p.dp
    if p.zero_stage == 3:
        parts.append(("HSDP" if 1 < shard < p.dp else "FSDP") + "(ZeRO-3)")
    elif p.zero_stage in (1, 2):
        parts.append(f"ZeRO-{p.zero_stage}")
    elif p.dp > 1:
        parts.append("DP")
    if p.tp > 1:
        parts.append("TP+SP" if p.sp else "TP")
    if p.cp > 1:
        parts.append("CP")
    if p.ep > 1:
        parts.append("EP")
    if p.pp > 1:
        parts.append("PP")
    return "+".join(parts) or "single-device"


def _check_axes(name: str, axes: Sequence[str], where: str) -> tuple[str, ...]:
    bad = [a for a in axes if a not in MESH_AXES]
    if bad:
        raise ConfigError(f"{where}: mesh axis {bad[0]!r} for logical name {name!r} is unknown; legal mesh "
                          f"axes: {', '.join(MESH_AXES)}", field="rule_overrides", value={name: list(axes)},
                          legal=MESH_AXES)
    return tuple(axes)


def kv_replicated(model: ModelSpec | None, tp: int) -> bool:
    """True when tp > 1 does not divide ``model.n_kv_heads``: the K/V heads are then replicated over
    tp (``kv_replication``; the layout was validated with ``tp % n_kv_heads == 0``). False without
    a model."""
    return model is not None and tp > 1 and model.kv_heads % tp != 0


def _conditions(layout: Layout, model: ModelSpec | None, table: str) -> dict[str, bool]:
    """Truth of each condition of :data:`LOGICAL_AXIS_RULES` for one plan and one table
    (``param``, ``opt``, ``act`` or ``gathered``: ``zero`` is false for the activations and the
    gathered weights)."""
    p = layout.parallel
    kv_rep = kv_replicated(model, p.tp)
    zero = {"param": p.zero_stage == 3, "opt": p.zero_stage >= 1}.get(table, False)
    return {"zero": zero, "kv_split": not kv_rep, "sp": p.sp}


def _rule_table(layout: Layout, model: ModelSpec | None, table: str) -> Table:
    """One rule table (``param``, ``opt``, ``act`` or ``gathered``) of :data:`LOGICAL_AXIS_RULES` for a plan."""
    names = ACT_AXES if table == "act" else PARAM_AXES
    cond = _conditions(layout, model, table)
    return {name: axes if when is None or cond[when] else otherwise
            for name, axes, when, otherwise in LOGICAL_AXIS_RULES if name in names}


def _apply_rule_overrides(tables: Sequence[Table], rule_overrides: Mapping[str, Sequence[str]]) -> None:
    """Replace each overridden logical name's rule in every table that has it (in place).

    Raises:
        ConfigError: an unknown logical name or mesh axis, or a mesh axis listed twice.
    """
    for name, axes in rule_overrides.items():
        if name not in LOGICAL_AXES:
            raise ConfigError(f"rule_overrides: logical name {name!r} is unknown; legal: {', '.join(LOGICAL_AXES)}",
                              field="rule_overrides", value=name, legal=LOGICAL_AXES)
        if isinstance(axes, str):
            axes = [axes]
        ax = _check_axes(name, axes, "rule_overrides")
        if len(set(ax)) != len(ax):
            raise ConfigError(f"rule_overrides: {name!r} lists a mesh axis twice: {list(ax)}",
                              field="rule_overrides", value={name: list(ax)})
        for t in tables:
            if name in t:
                t[name] = ax


def _check_regexes(param_overrides: Sequence[ParamOverride]) -> None:
    """Raise ConfigError for a ``param_overrides`` regex that does not compile."""
    for rx, _ in param_overrides:
        try:
            re.compile(rx)
        except re.error as e:
            raise ConfigError(f"param_overrides: {rx!r} is not a valid regex: {e}", field="param_overrides",
                              value=rx) from None


def make_rules(layout: Layout, model: ModelSpec | None = None,
               rule_overrides: Mapping[str, Sequence[str]] | None = None,
               param_overrides: Sequence[ParamOverride] = (), cp_attention: str = "ring") -> ShardingRules:
    """Compose the rule tables of the strategy a layout describes from :data:`LOGICAL_AXIS_RULES`.

    ``param`` holds the parameter names with ``zero`` true under ZeRO-3, ``opt`` the same names
    with ``zero`` true under ZeRO-1/2/3, ``act`` the activation names, ``gathered`` the parameter
    names with ``zero`` false (a ZeRO-3 weight once all-gathered).

    Args:
        layout: validated layout.
        model: the model (used for ``kv_replication``: K/V heads replicated when tp > n_kv_heads).
        rule_overrides: ``{logical: [mesh axes]}`` replacing that name's rule in every table.
        param_overrides: ``[(regex, logical names | PartitionSpec)]`` applied per parameter path by
            :func:`param_shardings`; every regex must match at least one parameter.
        cp_attention: ``"ring"``, ``"allgather"`` or ``"a2a"`` (see :attr:`ShardingRules.cp_attention`).

    Returns:
        The :class:`ShardingRules`.

    Raises:
        ConfigError: an unknown logical name or mesh axis in ``rule_overrides`` (lists the legal
            ones), a regex that does not compile, an unknown ``cp_attention``, or an unexecutable
            layout (see :func:`~shardplan.jax.mesh.mesh_shape`).
    """
    if cp_attention not in CP_ATTENTION:
        raise ConfigError(f"cp_attention={cp_attention!r} is unknown; legal: {', '.join(CP_ATTENTION)}",
                          field="cp_attention", value=cp_attention, legal=CP_ATTENTION)
    sizes = mesh_shape(layout)
    param, opt, act, gathered = (_rule_table(layout, model, t) for t in ("param", "opt", "act", "gathered"))
    _apply_rule_overrides((param, opt, act, gathered), rule_overrides or {})
    _check_regexes(param_overrides)
    return ShardingRules(param=param, opt=opt, act=act, sizes=sizes, zero_stage=layout.parallel.zero_stage,
                         strategy=strategy_name(layout), param_overrides=tuple(param_overrides),
                         cp_attention=cp_attention, gathered=gathered)


def _spec_entry(axes: Sequence[str]) -> str | tuple[str, ...] | None:
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else tuple(axes)


def _ctx(path: str, shape: Sequence[int], logical: Any, sizes: Mapping[str, int], what: str = "logical axes") -> str:
    mesh = " ".join(f"{a}={sizes[a]}" for a in MESH_AXES if a in sizes)
    return f"{path or '<array>'}: shape {tuple(shape)}, {what} {tuple(logical)}, mesh {mesh}"


def _dividing_axes(dim: int, sizes: Mapping[str, int]) -> str:
    """The mesh axes (of size > 1) whose size divides ``dim``, for an error's legal part; ``None`` always is."""
    axes = [a for a in MESH_AXES if sizes.get(a, 1) > 1 and dim % sizes[a] == 0]
    return ", ".join(axes + ["None (replicated)"])


def resolve(logical: Sequence[str | None], shape: Sequence[int], table: Mapping[str, Sequence[str]],
            sizes: Mapping[str, int], path: str = "") -> P:
    """Resolve the logical names of one array into a PartitionSpec (semantics: module docstring).

    Args:
        logical: one logical name (or ``None``) per dimension.
        shape: the array's global shape.
        table: logical name -> ordered mesh axes.
        sizes: mesh axis sizes.
        path: the array's path, used in error messages.

    Returns:
        A PartitionSpec of length ``len(shape)``; single axes as strings, several as a tuple.

    Raises:
        ConfigError: rank mismatch, unknown logical name, or a dimension not divisible by the
            product of its mesh axes (naming path, shape, logical axes and mesh sizes).
    """
    if len(logical) != len(shape):
        raise ConfigError(f"{_ctx(path, shape, logical, sizes)}: {len(logical)} logical axes for a rank-"
                          f"{len(shape)} array; legal: {len(shape)} entries, one per dimension (None for a "
                          f"replicated one)", field="logical_axes", value=tuple(logical))
    used: set[str] = set()
    out: list[Any] = []
    for name, dim in zip(logical, shape):
        if name is None:
            out.append(None)
            continue
        if name not in table:
            raise ConfigError(f"{_ctx(path, shape, logical, sizes)}: logical axis {name!r} is unknown; legal: "
                              f"{', '.join(table)}", field="logical_axes", value=name, legal=list(table))
        axes = [a for a in table[name] if sizes.get(a, 1) > 1 and a not in used]
        n = math.prod(sizes[a] for a in axes)
        if dim % n:
            raise ConfigError(
                f"{_ctx(path, shape, logical, sizes)}: dimension {name!r} of size {dim} is not divisible by "
                f"{'*'.join(axes)} = {n} mesh devices; change the degrees, the model width, or override "
                f"this rule (--rule / --param-rule)", field="logical_axes", value=name)
        used.update(axes)
        out.append(_spec_entry(axes))
    return P(*out)


def check_spec(spec: P, shape: Sequence[int], sizes: Mapping[str, int], path: str = "") -> P:
    """Validate a user-given PartitionSpec for one array (unknown/duplicate axes, rank, divisibility).

    Returns:
        The spec padded with ``None`` to the array's rank, size-1 axes kept as given.

    Raises:
        ConfigError: naming the path, shape, spec and mesh sizes.
    """
    entries = list(spec)
    if len(entries) > len(shape):
        raise ConfigError(f"{_ctx(path, shape, entries, sizes, 'spec')}: PartitionSpec {spec} is longer than the "
                          f"rank; legal: at most {len(shape)} entries",
                          field="param_overrides", value=str(spec))
    entries += [None] * (len(shape) - len(entries))
    seen: set[str] = set()
    for e, dim in zip(entries, shape):
        axes = () if e is None else (e,) if isinstance(e, str) else tuple(e)
        for a in axes:
            if a not in MESH_AXES:
                raise ConfigError(f"{_ctx(path, shape, entries, sizes, 'spec')}: mesh axis {a!r} in {spec} is unknown; "
                                  f"legal: {', '.join(MESH_AXES)}", field="param_overrides", value=a,
                                  legal=MESH_AXES)
            if a in seen:
                raise ConfigError(f"{_ctx(path, shape, entries, sizes, 'spec')}: mesh axis {a!r} used twice in {spec}",
                                  field="param_overrides", value=str(spec))
            seen.add(a)
        n = math.prod(sizes[a] for a in axes)
        if dim % n:
            raise ConfigError(f"{_ctx(path, shape, entries, sizes, 'spec')}: dimension of size {dim} is not divisible "
                              f"by {'*'.join(axes)} = {n} in {spec}; legal for this dimension: "
                              f"{_dividing_axes(dim, sizes)}", field="param_overrides", value=str(spec))
    return P(*entries)


# ----- parameters ------------------------------------------------------------------------------

def path_str(key_path: Sequence[Any]) -> str:
    """``"layers/0/attn/wqkv"`` from a JAX key path (dict keys, sequence indices, attributes)."""
    parts = []
    for k in key_path:
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    return "/".join(parts)


@dataclass(frozen=True)
class LeafSharding:
    """The resolved layout of one parameter.

    Attributes:
        path: ``"layers/0/attn/wqkv"``.
        shape: global shape.
        dtype: parameter dtype name (the fp32 master copy).
        logical: logical axes (``None`` entries for deliberately replicated dims; ``()`` when a raw
            PartitionSpec override was given).
        param_spec: where the parameter lives.
        opt_spec: where its optimizer moments live.
        override: the regex that set this leaf's layout, if any.
        gathered_spec: where it lives once all-gathered for use under ZeRO-3 (the ``gathered``
            table; ``param_spec`` itself for a raw PartitionSpec override or rules without that
            table, i.e. no explicit gather). None only for leaves built by hand.
    """

    path: str
    shape: tuple[int, ...]
    dtype: str
    logical: Logical
    param_spec: P
    opt_spec: P
    override: str | None = None
    gathered_spec: P | None = None

    def bytes_per_device(self, sizes: Mapping[str, int], which: str = "param") -> int:
        """Bytes of this leaf held by one device (itemsize * elements / shards)."""
        spec = self.param_spec if which == "param" else self.opt_spec
        shards = math.prod(sizes[a] for e in spec if e is not None for a in ((e,) if isinstance(e, str) else e))
        return math.prod(self.shape) * jax.numpy.dtype(self.dtype).itemsize // shards


def param_shardings(abstract: Any, logical: Any, rules: ShardingRules) -> dict[str, LeafSharding]:
    """Resolve every parameter's layout.

    Args:
        abstract: pytree of arrays / ``ShapeDtypeStruct`` (the parameters).
        logical: pytree of the same structure whose leaves are tuples of logical names.
        rules: the plan's rules (with its ``param_overrides``).

    Returns:
        ``{path: LeafSharding}`` in tree order.

    Raises:
        ConfigError: a ``param_overrides`` regex that matches no parameter (lists a few paths), and
            every resolver error (see :func:`resolve`).
    """
    leaves = jax.tree_util.tree_flatten_with_path(abstract)[0]
    names = jax.tree_util.tree_leaves(logical, is_leaf=lambda x: isinstance(x, tuple))
    if len(leaves) != len(names):
        raise ConfigError(f"{len(leaves)} parameters but {len(names)} logical-axis annotations",
                          field="logical_axes", value=len(names))
    paths = [path_str(kp) for kp, _ in leaves]
    hits = {rx: 0 for rx, _ in rules.param_overrides}
    out: dict[str, LeafSharding] = {}
    for path, (_, leaf), lg in zip(paths, leaves, names):
        shape = tuple(leaf.shape)
        override = None
        spec_override: P | None = None
        for rx, target in rules.param_overrides:  # later entries take precedence
            if re.search(rx, path):
                hits[rx] += 1
                override = rx
                if isinstance(target, P):
                    spec_override, lg = target, ()
                else:
                    spec_override, lg = None, tuple(target)
        try:
            if spec_override is not None:
                ps = check_spec(spec_override, shape, rules.sizes, path)
                os_ = gs = ps
            else:
                ps = resolve(lg, shape, rules.param, rules.sizes, path)
                os_ = resolve(lg, shape, rules.opt, rules.sizes, path)
                gs = resolve(lg, shape, rules.gathered, rules.sizes, path) if rules.gathered else ps
        except ConfigError as err:
            if override is None:
                raise
            raise ConfigError(f"param_overrides {override!r} (--param-rule / --param-spec): {err}", field=err.field,
                              value=err.value, legal=err.legal) from None
        out[path] = LeafSharding(path, shape, str(leaf.dtype), tuple(lg), ps, os_, override, gs)
    for rx, n in hits.items():
        if n == 0:
            sample = ", ".join(paths[:6])
            raise ConfigError(f"param_overrides: regex {rx!r} matches no parameter; paths look like: {sample}, ...",
                              field="param_overrides", value=rx)
    return out


def sharding_rows(leaves: Mapping[str, LeafSharding], sizes: Mapping[str, int]) -> list[dict[str, Any]]:
    """Rows of the sharding table: one per parameter.

    Returns:
        Dicts with keys ``path``, ``shape``, ``logical`` (tuple), ``spec`` (the parameter's
        PartitionSpec as text), ``opt_spec`` (optimizer state), ``bytes_per_device`` (parameter
        bytes on one device) and ``opt_bytes_per_device`` (both Adam moments, fp32, on one device).
    """
    rows = []
    for leaf in leaves.values():
        rows.append(dict(path=leaf.path, shape=leaf.shape, logical=leaf.logical, spec=spec_str(leaf.param_spec),
                         opt_spec=spec_str(leaf.opt_spec), bytes_per_device=leaf.bytes_per_device(sizes),
                         opt_bytes_per_device=2 * leaf.bytes_per_device(sizes, "opt")))
    return rows


def spec_str(spec: P) -> str:
    """``P('fsdp', None)`` -> ``"('fsdp', None)"``; ``P()`` -> ``"replicated"``."""
    entries = list(spec)
    if all(e is None for e in entries):
        return "replicated"
    return "(" + ", ".join(repr(e) for e in entries) + ")"


# ----- activations ---------------------------------------------------------------------------

_ACT: contextvars.ContextVar[tuple[Mesh, ShardingRules] | None] = contextvars.ContextVar("shardplan_act",
                                                                                         default=None)


@contextlib.contextmanager
def activation_sharding(mesh: Mesh, rules: ShardingRules) -> Iterator[None]:
    """Context in which :func:`constrain` applies ``rules.act`` on ``mesh`` (used while tracing)."""
    token = _ACT.set((mesh, rules))
    try:
        yield
    finally:
        _ACT.reset(token)


def active_context() -> tuple[Mesh, ShardingRules] | None:
    """The ``(mesh, rules)`` of the enclosing :func:`activation_sharding`, or None outside one
    (e.g. a single-device call)."""
    return _ACT.get()


def manual_axes() -> tuple[str, ...]:
    """Mesh axes that are manual where this is traced (inside a partially manual ``jax.shard_map``:
    the pipeline over ``pp``, the per-step accumulation over the data axes, ring attention over
    ``cp``), in mesh order; ``()`` outside one. Along them an array is already the local block."""
    ambient = jax.sharding.get_abstract_mesh()
    return tuple(ambient.manual_axes) if not ambient.empty else ()


def local_sizes(rules: ShardingRules) -> dict[str, int]:
    """``rules.sizes`` with the :func:`manual_axes` counted as size 1 (dropped from a spec and from
    its divisibility check: the array is already the local block along them)."""
    manual = set(manual_axes())
    return {a: 1 if a in manual else n for a, n in rules.sizes.items()}


def context_mesh(mesh: Mesh) -> Any:
    """The mesh to name in a sharding constraint or ``jax.shard_map`` while tracing: the context's
    abstract mesh inside a partially manual ``jax.shard_map`` (the pipeline, manual over ``pp``),
    whose manual axes have type Manual; else ``mesh``."""
    ambient = jax.sharding.get_abstract_mesh()
    return ambient if (not ambient.empty and ambient.manual_axes) else mesh


def constrain(x: jax.Array, logical: Sequence[str | None], path: str = "") -> jax.Array:
    """Constrain an activation to the layout its logical names resolve to (GSPMD constraint).

    Outside :func:`activation_sharding` (e.g. a single-device call) this is the identity. Inside a
    partially manual ``jax.shard_map`` the manual mesh axes are left out of the spec (``x`` is then
    the per-device block along them).

    Raises:
        ConfigError: as :func:`resolve` (e.g. a batch not divisible by the batch axes).
    """
    ctx = _ACT.get()
    if ctx is None:
        return x
    mesh, rules = ctx
    # inside a partially manual ``jax.shard_map`` the constraint names the context's abstract mesh and
    # the manual axes resolve as size 1 (local_sizes)
    spec = resolve(logical, x.shape, rules.act, local_sizes(rules), path or "activation")
    return jax.lax.with_sharding_constraint(x, NamedSharding(context_mesh(mesh), spec))
