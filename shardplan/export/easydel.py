"""EasyDeL: ``sharding_axis_dims`` / ``partition_axis`` as a Python snippet (``.py``) or JSON (``.json``).

Sources read:

* erfanzar/EasyDeL ``easydel/infra/etils.py`` (commit 08a33f7): ``EasyDeLGradientCheckPointers`` --
  ``NONE = ""``, ``CHECKPOINT_DOTS = "checkpoint_dots"`` (matmul outputs saved), ``NOTHING_SAVEABLE =
  "nothing_saveable"`` (only the layer inputs saved), the same strings in
  ``AVAILABLE_GRADIENT_CHECKPOINTS``.
* EasyDeL ``from_pretrained(sharding_axis_dims=(1, -1, 1, 1, 1), sharding_dcn_axis_dims=None,
  sharding_axis_names=("dp", "fsdp", "ep", "tp", "sp"), partition_axis=..., config_kwargs=...)`` and
  ``EasyDeLBaseConfig.__init__`` with the same defaults (read by code search in the current EasyDeL
  modules; commit not pinned). The mesh has no pipeline axis.
* EasyDeL ``easydel/trainers/base_trainer.py`` (commit 1107afd): ``training_batch_size =
  total_batch_size * gradient_accumulation_steps``; ``minibatch_call`` splits that batch into
  accumulation steps of ``total_batch_size`` sequences.
* erfanzar/eformer ``eformer/escale/partition/manager.py`` (commit 5c1cd3b): ``PartitionAxis`` fields
  ``batch_axis``, ``sequence_axis``, ``head_axis``, ``hidden_state_axis`` (and more), defaults resolved
  in ``__post_init__`` to (fsdp, dp), sp, tp, tp -- the values written here.

Mapping: sharding_axis_dims = (dp replicas, ZeRO-3 shards, 1, tp, cp), in the order of sharding_axis_names (the
importer reads each dim by its axis name, so a reordered names list is honoured). EasyDeL's ``sp`` mesh axis
shards the sequence (ring/blockwise attention): the planner's cp. Refused (naming who can): pipeline
(the from_pretrained mesh has no pipeline axis), ZeRO-1/2 (its fsdp axis shards parameters, i.e.
ZeRO-3), and ep (its ``ep`` axis does not join the dense weights' fsdp sharding the planner assumes). Its tp shards
the activations between the blocks too: every model applies ``HiddenStateSharding`` (batch, sequence, hidden) to the
residual stream, with ``hidden_state_axis`` 'tp' (eformer's default, written here), so a block's output is reduced
and scattered over tp and gathered before the next: the planner's tp + sp (the same bytes as Megatron's sequence
parallelism, the activations 1/tp). A plan with tp > 1 and sp off is written with a note (EasyDeL holds less than
it priced); the importer reads tp > 1 with hidden_state_axis 'tp' as sp. Recompute: none -> "" (off), selective ->
"checkpoint_dots", full -> "nothing_saveable". Batch: ``total_batch_size = dp x microbatch_size``
sequences per accumulation step, ``gradient_accumulation_steps`` = microbatches (one optimizer step =
their product, as ``training_batch_size`` computes it).
"""

from __future__ import annotations

import ast
import json
import re

from shardplan.errors import ConfigError, short_repr
from shardplan.export.base import (ExportContext, Exporter, Imported, check_unexpressed, comment_block,
                                   header_dict, parallel_from, refuse, refuse_first, require)

SOURCE = "EasyDeL infra/etils.py (commit 08a33f7), trainers/base_trainer.py (1107afd) + eformer PartitionAxis (5c1cd3b)"
NAMES = ("dp", "fsdp", "ep", "tp", "sp")
_CKPT = {"none": "", "selective": "checkpoint_dots", "full": "nothing_saveable"}
_ALT = {"tp_overlap": "Megatron-LM", "offload_optimizer": "DeepSpeed"}
_TORCH = "Megatron-LM, torchtitan or MaxText"


def _check(ctx: ExportContext) -> None:
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    checks = [
        (p.pp > 1, f"pp={p.pp} (its from_pretrained mesh (dp, fsdp, ep, tp, sp) has no pipeline axis)",
         "Megatron-LM, torchtitan, MaxText or nanotron"),
        (p.zero_stage in (1, 2), f"ZeRO-{p.zero_stage} (its fsdp axis shards the parameters: ZeRO-3)",
         "Megatron-LM, DeepSpeed (or MaxText for ZeRO-1)"),
        (p.ep > 1, f"ep={p.ep} (its ep axis does not shard the dense weights with fsdp as the plan assumes)",
         "MaxText or torchtitan"),
    ]
    refuse_first("EasyDeL", checks)


def easydel_config(ctx: ExportContext) -> dict:
    """The EasyDeL values of a plan: sharding_axis_dims, names, partition_axis, gradient_checkpointing,
    training_arguments, and attn_mechanism 'vanilla' for a plan priced with the unfused attention core.

    Raises:
        ConfigError: see the module docstring.
    """
    _check(ctx)
    p, tr = ctx.p, ctx.training
    shard = p.dp_shard if p.zero_stage == 3 else 1
    attention = {"attn_mechanism": "vanilla"} if tr.attention == "naive" else {}  # the unfused core the plan priced
    return {**attention, "sharding_axis_dims": [p.dp // shard, shard, 1, p.tp, p.cp], "sharding_axis_names": list(NAMES),
            "partition_axis": {"batch_axis": ["fsdp", "dp"], "sequence_axis": "sp", "head_axis": "tp",
                               "hidden_state_axis": "tp"},
            "gradient_checkpointing": _CKPT[p.recompute],
            "training_arguments": {"total_batch_size": p.dp * p.microbatch_size,
                                   "gradient_accumulation_steps": ctx.layout.microbatches,
                                   "max_sequence_length": tr.seq_len}}


def _python(ctx: ExportContext, cfg: dict, extra: list[str] | None = None) -> str:
    """The Python snippet: EASYDEL_CONFIG (a literal the importer reads) and the calls that use it; ``extra``
    header lines."""
    p, e = ctx.p, ctx.estimate
    dims = cfg["sharding_axis_dims"]
    why = (f"(dp, fsdp, ep, tp, sp) = ({dims[0]} replicas, {dims[1]} ZeRO-3 shards, no ep, tp {dims[3]}, "
           f"cp {dims[4]}): {e.memory.total / 2**30:.1f} GiB/device, step {e.step_s:.3f} s, MFU {e.mfu:.1%}")
    rows = [f"    # {why}"] + [f"    {k!r}: {_py(v)}," for k, v in cfg.items()]
    body = "{\n" + "\n".join(rows) + "\n}"
    return (comment_block(ctx, EXPORTER, extra) + "import easydel as ed\n\nEASYDEL_CONFIG = " + body + "\n\n"
            "model = ed.AutoEasyDeLModelForCausalLM.from_pretrained(\n"
            f'    "{e.model.name}",  # your checkpoint\n'
            '    sharding_axis_dims=EASYDEL_CONFIG["sharding_axis_dims"],\n'
            '    sharding_axis_names=EASYDEL_CONFIG["sharding_axis_names"],\n'
            '    partition_axis=ed.PartitionAxis(**EASYDEL_CONFIG["partition_axis"]),\n'
            '    config_kwargs=ed.EasyDeLBaseConfigDict(gradient_checkpointing=EASYDEL_CONFIG["gradient_checkpointing"]'
            ' or ed.EasyDeLGradientCheckPointers.NONE'
            + (', attn_mechanism=EASYDEL_CONFIG["attn_mechanism"]' if "attn_mechanism" in cfg else "") + '),\n)\n'
            'arguments = ed.TrainingArguments(**EASYDEL_CONFIG["training_arguments"])\n'
            + ("" if p.recompute != "none" else "# gradient_checkpointing '' = off (the plan recomputes nothing)\n"))


def _py(value):
    """A Python literal, lists written as tuples (as EasyDeL takes them)."""
    if isinstance(value, list):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in value.items()) + "}"
    return repr(value)


#: the note a plan with tp > 1 and sp off gets (EasyDeL shards the block activations over tp whatever the plan says)
TP_WITHOUT_SP = ("tp={tp} priced with the activations between the blocks whole (sp off), but EasyDeL shards them over "
                 "tp (PartitionAxis hidden_state_axis 'tp'): it holds less than priced; --sp prices what it runs")


def write(ctx: ExportContext, fmt: str = "py") -> str:
    """The Python snippet (``fmt="py"``) or JSON (``fmt="json"``, header under ``_shardplan``), with the
    :data:`TP_WITHOUT_SP` note where it applies.

    Raises:
        ConfigError: see the module docstring.
    """
    cfg = easydel_config(ctx)
    extra = [f"note: {TP_WITHOUT_SP.format(tp=ctx.p.tp)}"] if ctx.p.tp > 1 and not ctx.p.sp else []
    prec = ctx.training.precision
    if ctx.training.optimizer_dtype == "fp32" or prec.param_bytes >= 4:
        # new-user pass 57b: priced with fp32 master and moments (16 B per parameter) where EasyDeL's default
        # param_dtype bfloat16 keeps none (optax moments in the parameters' dtype)
        extra.append(f"note: priced as {prec.name} with {ctx.training.optimizer_dtype} optimizer state; EasyDeL's "
                     "default param_dtype is bfloat16 (no fp32 master, bf16 moments): pass dtype=jnp.bfloat16, "
                     "param_dtype=jnp.float32 to from_pretrained for fp32 state (--precision fp32-params prices it), "
                     "or price the default with --precision bf16-mixed --optimizer-dtype bf16")
    if fmt == "json":
        return json.dumps({"_shardplan": header_dict(ctx, EXPORTER, extra), **cfg}, indent=2) + "\n"
    return _python(ctx, cfg, extra)


def _load(text: str) -> tuple[dict, tuple[str, ...]]:
    """(config mapping, notes) of a JSON export, of the ``EASYDEL_CONFIG = {...}`` literal of a snippet, or else of a
    training script's keyword arguments (:func:`_script_config`; an older release's four-axis mesh read as today's
    five with a note, :func:`_four_axes`: shardplan's own exports always write five axes)."""
    if text.lstrip().startswith("{"):
        return json.loads(text), ()
    m = re.search(r"^EASYDEL_CONFIG = (\{.*?^\})", text, re.S | re.M)
    if not m:
        return _four_axes(_script_config(text))
    source = m.group(1)
    tree = ast.parse(source, mode="eval")
    for node in ast.walk(tree):  # literal_eval's own message names an AST node class, not the text
        if not isinstance(node, (ast.Expression, ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Constant, ast.UnaryOp,
                                 ast.USub, ast.UAdd, ast.Load)):
            raise ValueError(f"EASYDEL_CONFIG holds {ast.get_source_segment(source, node)!r}, which is not a literal "
                             "(legal: numbers, strings, True / False / None, and tuples, lists or dicts of them)")
    return ast.literal_eval(tree), ()


#: the keyword arguments of an EasyDeL training script the importer reads (``AutoEasyDeLModelForCausalLM.from_pretrained``
#: sharding_axis_dims / sharding_axis_names, ``EasyDeLBaseConfigDict`` gradient_checkpointing, ``TrainingArguments`` /
#: ``SFTConfig`` total_batch_size, gradient_accumulation_steps, max_sequence_length)
SCRIPT_KEYS = {"sharding_axis_dims": None, "sharding_axis_names": None, "gradient_checkpointing": None,
               "attn_mechanism": None,
               "total_batch_size": "training_arguments", "gradient_accumulation_steps": "training_arguments",
               "max_sequence_length": "training_arguments", "hidden_state_axis": "partition_axis"}


def checkpointer_policy(node: ast.AST) -> str | None:
    """The policy an ``EasyDeLGradientCheckPointers`` member names (``ed.EasyDeLGradientCheckPointers.NOTHING_SAVEABLE``
    is "nothing_saveable": its lower-case name); None for another expression (``FLAGS.gradient_checkpointing``, set at
    run time)."""
    if not isinstance(node, ast.Attribute):
        return None
    base = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
    if base.endswith("GradientCheckPointers"):
        return "" if node.attr == "NONE" else node.attr.lower()  # NONE = "" (EasyDeL's enum: no checkpointing)
    return node.attr.lower() if base.endswith("AttentionMechanisms") else None


def _elarge_sharding(tree: ast.AST) -> dict:
    """``sharding_axis_dims`` / ``sharding_axis_names`` of EasyDeL's newer ``eLargeModel({... "sharding": {"axis_dims":
    (...), "axis_names": (...)}})`` dictionary form (EasyDeL examples/post_training/sft.py @ 9cdaf76), from the first
    dict literal with a "sharding" entry that holds literal axis_dims; {} without one."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not (isinstance(key, ast.Constant) and key.value == "sharding" and isinstance(value, ast.Dict)):
                continue
            out = {}
            for k, v in zip(value.keys, value.values):
                if isinstance(k, ast.Constant) and k.value in ("axis_dims", "axis_names"):
                    try:
                        out[f"sharding_{k.value}"] = ast.literal_eval(v)
                    except (ValueError, SyntaxError, TypeError):
                        pass
            if "sharding_axis_dims" in out:
                return {**out, **_elarge_training(node)}
    return {}


#: eLargeModel dictionary keys the importer reads besides the sharding (EasyDeL sft.py: "base_config" -> "values" ->
#: gradient_checkpointing, "trainer" -> total_batch_size / gradient_accumulation_steps / max_length)
_ELARGE_TRAINING = {"total_batch_size": "total_batch_size", "gradient_accumulation_steps": "gradient_accumulation_steps",
                    "max_length": "max_sequence_length", "max_sequence_length": "max_sequence_length"}


def _elarge_training(config: ast.Dict) -> dict:
    """``gradient_checkpointing`` and the ``training_arguments`` (:data:`_ELARGE_TRAINING`) anywhere in an
    eLargeModel dictionary: a literal, or for gradient_checkpointing an ``EasyDeLGradientCheckPointers`` member."""
    out: dict = {}
    for node in ast.walk(config):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if not isinstance(key, ast.Constant):
                continue
            if key.value == "gradient_checkpointing":
                policy = checkpointer_policy(value)
                if policy is None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    policy = value.value
                if policy is not None:
                    out["gradient_checkpointing"] = policy
            elif key.value in _ELARGE_TRAINING and isinstance(value, ast.Constant):
                out.setdefault("training_arguments", {})[_ELARGE_TRAINING[key.value]] = value.value
    return out


def _script_config(text: str) -> dict:
    """The config mapping of an EasyDeL training script without an ``EASYDEL_CONFIG`` literal (EasyDeL's own examples,
    e.g. ``supervised-finetuning/launch.py``): the :data:`SCRIPT_KEYS` keyword arguments of its calls, each a literal,
    a name the script assigns a literal to (``total_batch_size=total_batch_size``) or, for gradient_checkpointing, an
    ``EasyDeLGradientCheckPointers`` member (its lower-case name is the policy's value).

    Raises:
        ConfigError: not Python, or no ``sharding_axis_dims`` keyword (nothing says the layout).
        ValueError / SyntaxError: from the parser (the caller names the file).
    """
    tree = ast.parse(text)
    names = {}
    for node in ast.walk(tree):  # NAME = literal anywhere (a function's locals included): the last one wins
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                pass
    cfg: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("dtype", "param_dtype") and isinstance(node.value,
                                                                                               ast.Attribute):
            cfg[node.arg] = node.value.attr  # jnp.float32 -> 'float32' (the last call's wins)
            continue
        if not isinstance(node, ast.keyword) or node.arg not in SCRIPT_KEYS:
            continue
        v = node.value
        if node.arg in ("gradient_checkpointing", "attn_mechanism") and isinstance(v, ast.Attribute):
            value = checkpointer_policy(v)
            if value is None:
                continue  # FLAGS.gradient_checkpointing: set at run time, not in the file
        elif isinstance(v, ast.Name) and v.id in names:
            value = names[v.id]
        else:
            try:
                value = ast.literal_eval(v)
            except (ValueError, SyntaxError, TypeError):
                continue
        (cfg.setdefault(SCRIPT_KEYS[node.arg], {}) if SCRIPT_KEYS[node.arg] else cfg)[node.arg] = value
    if "sharding_axis_dims" not in cfg:
        cfg.update(_elarge_sharding(tree))
    if "sharding_axis_dims" not in cfg:
        raise ConfigError("no EASYDEL_CONFIG = {...} literal (shardplan's export) and no sharding_axis_dims=... keyword "
                          "in the EasyDeL script: nothing says the layout; legal: a script passing sharding_axis_dims "
                          "(a literal tuple) to from_pretrained, or a `shardplan export --to easydel` file",
                          field="import", value="easydel")
    return cfg


#: the mesh axes of EasyDeL releases before its expert axis (sharding_axis_names default ("dp", "fsdp", "tp", "sp"),
#: as examples/training/causal_language_model_training_example.py @ 09fbe72 passes sharding_axis_dims=(1, -1, 1, 1))
OLDER_NAMES = ("dp", "fsdp", "tp", "sp")


def _four_axes(cfg: dict) -> tuple[dict, tuple[str, ...]]:
    """``cfg`` with an older EasyDeL's four-axis mesh (:data:`OLDER_NAMES`, or four of :data:`NAMES` without ep) read
    as today's five with ep 1, and a note; ``cfg`` unchanged otherwise (:func:`_dims` checks it)."""
    dims, names = cfg.get("sharding_axis_dims"), cfg.get("sharding_axis_names", OLDER_NAMES)
    if not (isinstance(dims, (list, tuple)) and len(dims) == 4 and isinstance(names, (list, tuple)) and len(names) == 4
            and sorted(names) == sorted(OLDER_NAMES)):
        return cfg, ()
    degree = {**dict(zip(names, dims)), "ep": 1}
    return ({**cfg, "sharding_axis_dims": [degree[n] for n in NAMES], "sharding_axis_names": list(NAMES)},
            (f"sharding_axis_dims={tuple(dims)} over {tuple(names)}: an EasyDeL release before the expert axis, "
             "read with ep 1",))


def _dims(cfg: dict, devices: int | None) -> list[int]:
    """``sharding_axis_dims`` as five whole numbers (dp, fsdp, ep, tp, sp), its one -1 (EasyDeL: the
    remaining devices) resolved from ``devices``.

    Raises:
        ConfigError: not five whole numbers >= 1 (at most one -1), or a -1 without ``devices`` that it divides.
    """
    dims = require(cfg, "sharding_axis_dims", "EasyDeL")
    legal = "five whole numbers (dp, fsdp, ep, tp, sp), each >= 1 or one of them -1 (the remaining devices)"
    if (not isinstance(dims, (list, tuple)) or len(dims) != len(NAMES)
            or any(not isinstance(d, int) or isinstance(d, bool) or (d < 1 and d != -1) for d in dims)
            or list(dims).count(-1) > 1):
        raise ConfigError(f"EasyDeL sharding_axis_dims={short_repr(dims)}; legal: {legal}", field="sharding_axis_dims",
                          value=short_repr(dims))
    dims = list(dims)
    if -1 in dims:
        known = -1 * eval_product(dims)
        if devices is None or devices % known:
            raise ConfigError(f"a -1 sharding_axis_dims entry needs --devices, a multiple of {known} (the product of "
                              "the other entries)", field="devices", value=devices)
        dims[dims.index(-1)] = devices // known
    return dims


def _by_name(cfg: dict, dims: list[int]) -> tuple[int, ...]:
    """The degrees of the axes dp, fsdp, ep, tp, sp (:data:`NAMES`) from ``dims``, each entry belonging to the axis
    ``sharding_axis_names`` names at its position (EasyDeL builds the mesh from the two lists together; without
    names its default order, :data:`NAMES`).

    Raises:
        ConfigError: names that are not dp, fsdp, ep, tp and sp, each once, naming the value and the legal names.
    """
    names = cfg.get("sharding_axis_names", NAMES)
    if (not isinstance(names, (list, tuple)) or len(names) != len(NAMES) or not all(isinstance(n, str) for n in names)
            or sorted(names) != sorted(NAMES)):
        raise ConfigError(f"EasyDeL sharding_axis_names={short_repr(names)}; legal: the five axis names "
                          f"{', '.join(map(repr, NAMES))}, each once, in any order (one per sharding_axis_dims entry)",
                          field="sharding_axis_names", value=short_repr(names), legal=list(NAMES))
    degree = dict(zip(names, dims))
    return tuple(degree[n] for n in NAMES)


#: EasyDeL's gradient-checkpointing policy names (etils.py AVAILABLE_GRADIENT_CHECKPOINTS) -> the planner's
#: recompute: nothing saved is full recomputation, saving everything (or no policy) none, the dot-saving policies
#: selective
EASYDEL_RECOMPUTE = {"": "none", "everything_saveable": "none", "nothing_saveable": "full",
                     "checkpoint_dots": "selective", "checkpoint_dots_with_no_batch_dims": "selective",
                     "dots_saveable": "selective", "dots_with_no_batch_dims_saveable": "selective"}


def _recompute_of(policy: object) -> str:
    """The planner's recompute of an EasyDeL ``gradient_checkpointing`` value.

    Raises:
        ConfigError: a name EasyDeL does not have, with the legal names.
    """
    if not isinstance(policy, str) or policy not in EASYDEL_RECOMPUTE:
        raise ConfigError(f"EasyDeL gradient_checkpointing={policy!r}; legal: "
                          f"{', '.join(repr(k) for k in EASYDEL_RECOMPUTE)}", field="gradient_checkpointing",
                          value=policy, legal=list(EASYDEL_RECOMPUTE))
    return EASYDEL_RECOMPUTE[policy]


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of an EasyDeL export (snippet or JSON) or training script (:func:`_script_config`).

    Raises:
        ConfigError: no config literal and no sharding_axis_dims keyword, a -1 (auto) dim without ``devices``, an ep
            dim > 1.
    """
    try:
        cfg, older = _load(text)
    except (ValueError, SyntaxError) as e:
        raise ConfigError(f"cannot read the EasyDeL config: {e}", field="import", value="easydel") from None
    dims = _dims(cfg, devices)
    dp_rep, fsdp, ep, tp, sp = _by_name(cfg, dims)
    if ep != 1:
        raise refuse("shardplan import", "EasyDeL ep > 1 (no planner equivalent)", "an ep of 1")
    args = _training_arguments(cfg)
    dp = dp_rep * fsdp
    values = dict(dp=dp, zero_stage=3 if fsdp > 1 else 0, dp_shard=fsdp if fsdp > 1 else None, tp=tp, cp=sp,
                  sp=tp > 1 and _hidden_axis(cfg) == "tp",
                  recompute=_recompute_of(cfg.get("gradient_checkpointing", "")),
                  microbatch_size=max(1, args.get("total_batch_size", dp) // dp))
    B = args.get("total_batch_size", dp) * args.get("gradient_accumulation_steps", 1)
    # the one precision an EasyDeL file is priced with (EXPORTER.precisions; the CLI's target_precision): without it
    # `estimate --plan` on a TPU took maxtext's fp32-params (a breaker's round trip: 9.978 s -> 10.530 s)
    precision, more = _dtype_precision(cfg)
    attention, attn_notes = attention_of(cfg.get("attn_mechanism"))
    return Imported(parallel_from(values), devices=eval_product(dims), seq_len=args.get("max_sequence_length"),
                    global_batch=B, framework="easydel", notes=(*older, *_order_note(cfg), *more, *attn_notes),
                    precision=precision, attention=attention)


def _hidden_axis(cfg: dict) -> object:
    """The mesh axis EasyDeL shards the residual stream's hidden dimension over: ``partition_axis``'s
    ``hidden_state_axis`` where the file gives one (a script's ``PartitionAxis(hidden_state_axis=...)`` keyword too;
    'tp' where a tuple of axes holds it), else eformer's default 'tp' (the planner's sp with tp > 1)."""
    axes = cfg.get("partition_axis")
    axis = axes.get("hidden_state_axis", "tp") if isinstance(axes, dict) else "tp"
    # a tuple of mesh axes shards the dimension over each: over tp if 'tp' is among them
    return "tp" if isinstance(axis, (list, tuple)) and "tp" in axis else axis


#: EasyDeL's training attention mechanisms (``easydel/layers/attention/_flexible.py`` ``AttentionMechanisms``, a
#: StrEnum whose values are the lower-case member names; older releases' dataclass of the same strings): the ones
#: that materialise the s x s scores (priced as ``--attention naive``) and the fused or blockwise kernels (priced as
#: flash attention)
EASYDEL_NAIVE_ATTENTION = ("vanilla", "sharded_vanilla", "legacy_sharded_vanilla")
EASYDEL_FUSED_ATTENTION = ("auto", "flash_attn2", "cuda_flash_attn2", "flash", "pallas_flash", "splash", "cudnn",
                           "blockwise", "blocksparse", "sdpa", "ring", "wise_ring", "local_ring")


def attention_of(mechanism: object) -> tuple[str | None, tuple[str, ...]]:
    """(the plan's attention, notes) of an EasyDeL ``attn_mechanism``: 'naive' for the unfused ones
    (:data:`EASYDEL_NAIVE_ATTENTION`, whose s x s scores cost HBM traffic and memory), None (flash, the planner's
    default) for a fused or blockwise kernel, with a note for the ring kernels (their ring over the sequence axis is
    priced as context parallelism over ``sp``) and for ``auto`` (EasyDeL picks a fused kernel for the device).

    Raises:
        ConfigError: a value EasyDeL has no training mechanism of, with the legal values.
    """
    if mechanism is None:
        return None, ()
    name = str(mechanism).lower()
    if name in EASYDEL_NAIVE_ATTENTION:
        return "naive", (f"attn_mechanism {name!r}: the unfused attention (the s x s scores stored), priced as "
                         "--attention naive",)
    if name not in EASYDEL_FUSED_ATTENTION:
        legal = [*EASYDEL_NAIVE_ATTENTION, *EASYDEL_FUSED_ATTENTION]
        raise ConfigError(f"EasyDeL attn_mechanism={short_repr(mechanism)}; legal: {', '.join(map(repr, legal))} (the "
                          "training mechanisms of easydel.AttentionMechanisms)", field="attn_mechanism",
                          value=short_repr(mechanism), legal=legal)
    note = ("a ring over the sequence axis, priced as context parallelism over sp" if "ring" in name else
            "EasyDeL picks a fused kernel for the device" if name == "auto" else None)
    return None, ((f"attn_mechanism {name!r}: priced as a fused (flash) attention kernel; {note}",) if note else ())


def _dtype_precision(cfg: dict) -> tuple[str, tuple[str, ...]]:
    """(precision, notes) of a script's ``dtype`` / ``param_dtype`` keywords (``jnp.float32``: the computation and the
    parameters' dtypes of EasyDeL's from_pretrained): float32 compute -> fp32, float32 parameters with 16-bit compute
    -> fp32-params, else the exporter's precision (a breaker's ``dtype=jnp.float32, param_dtype=jnp.float32`` was
    written as bf16-mixed)."""
    dtype, param = cfg.get("dtype", "bfloat16"), cfg.get("param_dtype", "bfloat16")
    if dtype == "float32":
        return "fp32", ("dtype=jnp.float32: computes in fp32 (--precision fp32)",)
    if param == "float32":
        return "fp32-params", ("param_dtype=jnp.float32: fp32 parameters with 16-bit compute (--precision fp32-params)",)
    other = [f"{k}=jnp.{v}" for k, v in (("dtype", dtype), ("param_dtype", param)) if v not in ("bfloat16", "float32")]
    return EXPORTER.precisions[0], ((f"{', '.join(other)}: not priced (read as {EXPORTER.precisions[0]})",)
                                    if other else ())


def _training_arguments(cfg: dict) -> dict:
    """The ``training_arguments`` mapping, its batch and sequence entries checked (absent ones stay absent).

    Raises:
        ConfigError: not a mapping, or total_batch_size / gradient_accumulation_steps / max_sequence_length
            not a whole number >= 1, naming the key.
    """
    args = cfg.get("training_arguments", {})
    if not isinstance(args, dict):
        raise ConfigError(f"EasyDeL training_arguments={short_repr(args)}; legal: a mapping of TrainingArguments "
                          "fields", field="training_arguments", value=short_repr(args))
    for key in ("total_batch_size", "gradient_accumulation_steps", "max_sequence_length"):
        v = args.get(key)
        if key in args and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
            raise ConfigError(f"EasyDeL training_arguments.{key}={v!r}; legal: a whole number >= 1", field=key,
                              value=short_repr(v))
    return args


def _order_note(cfg: dict) -> tuple[str, ...]:
    """A note when ``sharding_axis_names`` is not EasyDeL's default order: the dims were read by name."""
    names = tuple(cfg.get("sharding_axis_names", NAMES))
    if names == NAMES:
        return ()
    return (f"sharding_axis_names {', '.join(names)}: each sharding_axis_dims entry read as the degree of the axis named "
            "at its position",)


def eval_product(values: list[int]) -> int:
    """The product of a list of ints."""
    out = 1
    for v in values:
        out *= v
    return out


EXPORTER = Exporter(name="easydel", title="EasyDeL", source=SOURCE, suffix=".py", expresses=(), write=write,
                    read=read, seq_key="training_arguments.max_sequence_length",
                    search_pins={"pp": 1, "ep": 1, "tp_overlap": False, "zero_stage": 3})  # what _check lets through
