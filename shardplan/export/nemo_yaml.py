"""NeMo 1.x and Megatron-Bridge training configs (YAML), read as the Megatron-LM flags they stand for.

Both describe a Megatron-Core run with a YAML mapping instead of command-line flags, and both spell the parallel
degrees as Megatron-Core's ``TransformerConfig`` / ``ModelParallelConfig`` fields (``tensor_model_parallel_size``
...), under ``model:``:

- **NeMo 1.x** (NeMo's ``examples/nlp/language_modeling/conf/megatron_gpt_config.yaml`` and the
  NeMo-Framework-Launcher's ``launcher_scripts/conf/training/*/*.yaml``): ``trainer.num_nodes`` x
  ``trainer.devices`` is the world size and ``trainer.precision`` the precision; ``model`` holds the batch sizes,
  ``encoder_seq_length``, ``activations_checkpoint_granularity / _method / _num_layers`` (NeMo's
  ``MegatronGPTModel`` passes them to Megatron-Core as ``recompute_granularity / _method / _num_layers``),
  ``ub_tp_comm_overlap`` (Transformer Engine's userbuffers tp overlap), ``fp8`` / ``fp8_hybrid`` / ``fp8_e4m3``
  and ``optim`` (``name: distributed_fused_adam`` or ``mcore_distributed_optim``: the distributed optimizer;
  ``overlap_grad_sync`` / ``overlap_param_sync``; ``grad_sync_dtype``).
- **Megatron-Bridge** (a ``ConfigContainer`` written as YAML): the mapping of its docs'
  "Megatron-LM to Megatron Bridge Guide" (docs/megatron-lm-to-megatron-bridge.md): ``model.*`` for the degrees,
  shape and recompute, ``train.micro_batch_size`` / ``global_batch_size``, ``ddp.use_distributed_optimizer`` /
  ``overlap_grad_reduce`` / ``overlap_param_gather`` / ``grad_reduce_in_fp32``, ``comm_overlap.tp_comm_overlap``
  and ``mixed_precision`` (a preset name such as ``bf16_mixed`` or ``bf16_with_mxfp8_mixed``, or its fields). A
  ConfigContainer does not hold the world size: ``--devices`` gives it.

:func:`translate` turns such a file into the flag list :func:`shardplan.export.megatron.read` parses, so both are
read with every check of the Megatron-LM importer. Keys it does not map (data, logging, checkpointing,
learning rate) do not change the price and are left out.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from shardplan.errors import ConfigError, short_repr

#: (section, key) -> the Megatron-LM flag with the same value (NeMo 1.x and Megatron-Bridge spell the degrees and the
#: model shape as Megatron-Core's config fields; the recompute keys are NeMo 1.x's activations_checkpoint_* and
#: Bridge's recompute_*; the sequence length: :data:`SEQ_KEYS`)
VALUE_KEYS = {
    **{("model", k): "--" + k.replace("_", "-") for k in (
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
        "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "num_layers",
        "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups", "moe_router_topk",
        "moe_ffn_hidden_size", "moe_token_dispatcher_type", "moe_expert_capacity_factor", "recompute_granularity",
        "recompute_method", "recompute_num_layers", "recompute_modules", "hidden_dropout", "attention_dropout",
        "cpu_offloading_num_layers", "cuda_graph_impl", "cuda_graph_scope", "pipeline_model_parallel_layout",
        "micro_batch_size", "global_batch_size", "max_position_embeddings")},
    ("model", "num_moe_experts"): "--num-experts",
    # Megatron-Bridge / Megatron-Core TransformerConfig names of the uneven pipeline split (the CLI's
    # --decoder-first/last-pipeline-num-layers; a breaker's Qwen3-235B pp 16 with 3 / 7 layers priced an even split)
    ("model", "num_layers_in_first_pipeline_stage"): "--decoder-first-pipeline-num-layers",
    ("model", "num_layers_in_last_pipeline_stage"): "--decoder-last-pipeline-num-layers",
    ("model", "activations_checkpoint_granularity"): "--recompute-granularity",
    ("model", "activations_checkpoint_method"): "--recompute-method",
    ("model", "activations_checkpoint_num_layers"): "--recompute-num-layers",
    ("train", "micro_batch_size"): "--micro-batch-size",
    ("train", "global_batch_size"): "--global-batch-size",
    ("ddp", "data_parallel_sharding_strategy"): "--data-parallel-sharding-strategy",
}

#: the recompute keys Megatron-Core reads with full granularity only (TransformerConfig: recompute_method and
#: recompute_num_layers "only used when recompute_granularity is full"; the NeMo-Framework-Launcher's configs write
#: activations_checkpoint_num_layers: 0 beside granularity null or selective)
FULL_RECOMPUTE_KEYS = ("recompute_method", "recompute_num_layers", "activations_checkpoint_method",
                       "activations_checkpoint_num_layers")

#: where the trained sequence length is, first found first: NeMo 1.x trains on ``model.data.seq_length``
#: (MegatronGPTModel.build_train_valid_test_datasets passes it to the dataset), which may be shorter than the
#: position table's ``model.encoder_seq_length``; Megatron-Bridge on ``dataset.sequence_length``, else the model's
#: ``seq_length``
SEQ_KEYS = (("model", "data", "seq_length"), ("dataset", "sequence_length"), ("model", "encoder_seq_length"),
            ("model", "seq_length"))

#: (section, key) -> the Megatron-LM flag a true value stands for
FLAG_KEYS = {
    ("model", "sequence_parallel"): "--sequence-parallel",
    ("model", "account_for_embedding_in_pipeline_split"): "--account-for-embedding-in-pipeline-split",
    ("model", "account_for_loss_in_pipeline_split"): "--account-for-loss-in-pipeline-split",
    ("model", "moe_grouped_gemm"): "--moe-grouped-gemm",
    ("model", "moe_enable_deepep"): "--moe-enable-deepep",
    ("model", "ub_tp_comm_overlap"): "--tp-comm-overlap",
    ("comm_overlap", "tp_comm_overlap"): "--tp-comm-overlap",
    # Megatron-Bridge CommOverlapConfig / the model provider's field of the same name (Megatron-Core's EP a2a overlap)
    ("comm_overlap", "overlap_moe_expert_parallel_comm"): "--overlap-moe-expert-parallel-comm",
    ("model", "overlap_moe_expert_parallel_comm"): "--overlap-moe-expert-parallel-comm",
    ("model", "cross_entropy_loss_fusion"): "--cross-entropy-loss-fusion",
    ("model", "enable_cuda_graph"): "--enable-cuda-graph",
    ("model", "external_cuda_graph"): "--external-cuda-graph",
    ("model", "fp8_params"): "--fp8-param-gather",
    ("model", "bf16"): "--bf16",
    ("model", "fp16"): "--fp16",
    ("ddp", "use_distributed_optimizer"): "--use-distributed-optimizer",
    ("optimizer", "use_distributed_optimizer"): "--use-distributed-optimizer",
    ("ddp", "overlap_grad_reduce"): "--overlap-grad-reduce",
    ("ddp", "overlap_param_gather"): "--overlap-param-gather",
    ("ddp", "use_megatron_fsdp"): "--use-megatron-fsdp",
    ("dist", "use_megatron_fsdp"): "--use-megatron-fsdp",
    ("dist", "use_torch_fsdp2"): "--use-torch-fsdp2",
    ("optimizer", "use_precision_aware_optimizer"): "--use-precision-aware-optimizer",
}

#: Megatron-Bridge's optimizer state dtypes (``optimizer.exp_avg_dtype`` ...: a ``torch`` dtype written as
#: ``{_target_: torch.bfloat16, _call_: false}`` or its name) -> Megatron-LM's flag value; read with
#: ``use_precision_aware_optimizer`` only, as Megatron-Core does
OPTIMIZER_DTYPE_KEYS = {"exp_avg_dtype": "--exp-avg-dtype", "exp_avg_sq_dtype": "--exp-avg-sq-dtype",
                        "main_grads_dtype": "--main-grads-dtype", "main_params_dtype": "--main-params-dtype"}
#: torch dtype -> Megatron-LM's dtype name (arguments.py maps --exp-avg-dtype fp8 to torch.uint8, the storage of
#: Transformer Engine's fp8 optimizer states)
TORCH_DTYPES = {"torch.bfloat16": "bf16", "torch.float32": "fp32", "torch.float16": "fp16", "torch.uint8": "fp8"}

#: the part of a Megatron-Bridge fp8 preset name (``bf16_with_fp8_current_scaling_mixed``, ...) -> Megatron-LM's
#: ``--fp8-recipe`` value (arguments.py choices tensorwise, delayed, mxfp8, blockwise: current scaling is per-tensor,
#: sub-channel scaling the blockwise recipe)
BRIDGE_FP8_RECIPES = {"mxfp8": "mxfp8", "current_scaling": "tensorwise", "delayed": "delayed",
                      "subchannel": "blockwise", "blockwise": "blockwise"}

#: Megatron-Bridge's registered mixed-precision preset names (src/megatron/bridge/training/mixed_precision.py
#: @register, '-' read as '_' as get_mixed_precision_config does): an optional model prefix (nemotron_h_, nanov2_,
#: nemotron_3_super_), bf16 / fp16, and an fp8 / mxfp8 / nvfp4 recipe; group 1 the 16-bit type, group 2 the recipe
BRIDGE_PRESET = re.compile(r"(?:[a-z0-9]+_)*?(bf16|fp16)(?:_with_(fp8_delayed_scaling|fp8_current_scaling|"
                           r"fp8_subchannel_scaling|mxfp8|nvfp4))?_mixed")

#: NeMo 1.x's distributed optimizers (model.optim.name): Apex's DistributedFusedAdam and Megatron-Core's
#: DistributedOptimizer, both ZeRO-1-style sharding of the optimizer state over the data-parallel ranks
NEMO_DISTRIBUTED_OPTIMIZERS = ("distributed_fused_adam", "mcore_distributed_optim")

#: the keys that make a YAML mapping a NeMo / Megatron-Bridge training config (any of them under model:)
_MARKERS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
            "expert_model_parallel_size", "micro_batch_size", "activations_checkpoint_granularity")
#: Megatron-Bridge's ConfigContainer sections beside model (its guide's "Config groups")
BRIDGE_SECTIONS = ("train", "optimizer", "ddp", "dist", "mixed_precision", "comm_overlap", "dataset")

#: phrases of the Megatron-LM importer's messages and their wording for a YAML config
_PHRASES = {"the Megatron-LM arguments do not give the world size: pass --devices":
            "the YAML gives no world size as numbers (NeMo 1.x: trainer.num_nodes x trainer.devices; a "
            "Megatron-Bridge ConfigContainer holds none): pass --devices",
            "this script": "this config", "the script": "the config", "the config's torchrun ": "the config's "}

#: the flags :func:`_nemo_flags` writes -> the NeMo 1.x key each stands for
NEMO_KEYS = {"--nnodes": "trainer.num_nodes", "--nproc-per-node": "trainer.devices", "--bf16": "trainer.precision",
             "--fp16": "trainer.precision", "--use-distributed-optimizer": "model.optim.name",
             "--overlap-grad-reduce": "model.optim.overlap_grad_sync",
             "--overlap-param-gather": "model.optim.overlap_param_sync",
             "--grad-reduce-in-bf16": "model.optim.grad_sync_dtype", "--fp8-format": "model.fp8",
             "--no-overlap-p2p-communication": "model.overlap_p2p_comm", "--use-torch-fsdp2": "model.fsdp",
             "--use-megatron-fsdp": "model.fsdp", "--data-parallel-sharding-strategy": "model.fsdp_sharding_strategy",
             "--num-distributed-optimizer-instances": "model.fsdp_sharding_strategy"}
#: the flags :func:`_bridge_flags` writes -> the Megatron-Bridge key each stands for
BRIDGE_KEYS = {"--bf16": "mixed_precision", "--fp16": "mixed_precision", "--fp8-format": "mixed_precision",
               "--fp8-recipe": "mixed_precision", "--fp8-param-gather": "mixed_precision.fp8_param_gather",
               "--grad-reduce-in-bf16": "ddp.grad_reduce_in_fp32: false",
               "--no-overlap-p2p-communication": "comm_overlap.overlap_p2p_comm",
               **{flag: f"optimizer.{key}" for key, flag in OPTIMIZER_DTYPE_KEYS.items()}}


@dataclass(frozen=True)
class Translated:
    """A YAML training config as Megatron-LM flags: ``text`` (the flag list), ``keys`` (each flag -> the YAML key
    it came from, ``section.key``) and ``kind`` (NeMo 1.x or a Megatron-Bridge ConfigContainer), with :meth:`rename` to
    word the importer's messages in the file's keys."""

    text: str
    keys: dict[str, str]
    kind: str = "NeMo 1.x"
    #: this file's own rewordings, applied last (a ``trainer.precision: 32`` the flags cannot carry)
    phrases: dict[str, str] = field(default_factory=dict)

    def rename(self, message: str) -> str:
        """``message`` with each Megatron-LM flag of :attr:`keys` (or of the key tables, for a flag the file does
        not set: "no --cuda-graph-impl") named by its YAML key, and :data:`_PHRASES` reworded."""
        known = {**_STATIC_KEYS, **self.keys}
        for phrase, wording in _PHRASES.items():
            message = message.replace(phrase, wording)
        message = re.sub(r"--[a-z0-9][a-z0-9-]*", lambda m: known.get(m.group(0), m.group(0)), message)
        # two flags of one key ("no --bf16 / --fp16" -> "no trainer.precision / trainer.precision"): the key once
        message = re.sub(r"\b([\w.]+) / \1\b", r"\1", message)
        for phrase, wording in self.phrases.items():
            message = message.replace(phrase, wording)
        return message

    def renamed(self, err: ConfigError) -> ConfigError:
        """``err`` reworded by :meth:`rename`, its field, value and legal values kept."""
        return ConfigError(self.rename(str(err)), field=err.field, value=err.value, legal=err.legal)


#: a flag -> the first YAML key of the tables that stands for it
_STATIC_KEYS = {flag: f"{s}.{k}" for (s, k), flag in reversed([*VALUE_KEYS.items(), *FLAG_KEYS.items()])}


#: the model-section keys that set the layout or the model's shape: a near miss of one is refused
#: (:func:`_refuse_layout_typos`)
LAYOUT_MODEL_KEYS = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
                     "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size",
                     "num_layers", "hidden_size", "ffn_hidden_size", "num_attention_heads", "num_query_groups",
                     "micro_batch_size", "global_batch_size", "sequence_parallel", "num_moe_experts", "moe_router_topk")


#: NeMo 1.x trainer keys that set the job's size (a typo: num_node priced 8 devices, breaker pass 55b)
TRAINER_KEYS = ("devices", "num_nodes", "precision", "accumulate_grad_batches", "max_steps")
#: Megatron-Bridge ddp keys that set the ZeRO stage and its overlap
DDP_LAYOUT_KEYS = ("use_distributed_optimizer", "data_parallel_sharding_strategy", "use_megatron_fsdp",
                   "overlap_grad_reduce", "overlap_param_gather")


def _refuse_layout_typos(doc: dict) -> None:
    """Refuse a ``model``, ``trainer`` or Megatron-Bridge ``train`` / ``ddp`` key a letter or two away from a layout key
    this importer reads (:data:`LAYOUT_MODEL_KEYS`, :data:`TRAINER_KEYS`, :data:`DDP_LAYOUT_KEYS`; breaker pass 55:
    ``tensor_model_paralel_size: 4`` was priced at tp = 1, 55b: ``num_node: 2`` as 8 devices): NeMo 1.x's open model
    config ignores it and runs the default, Megatron-Bridge's dataclasses stop on it (the message says which).

    Raises:
        ConfigError: from :func:`shardplan.export.base.check_near_misses`."""
    from shardplan.export.base import check_near_misses
    bridge = "trainer" not in doc  # Megatron-Bridge's dataclasses stop on an unknown key; NeMo 1.x ignores it
    who = "Megatron-Bridge" if bridge else "NeMo"
    for name, layout in (("model", LAYOUT_MODEL_KEYS), ("train", LAYOUT_MODEL_KEYS), ("ddp", DDP_LAYOUT_KEYS),
                         ("trainer", TRAINER_KEYS)):
        sec = doc.get(name)
        read = [k for (s_, k) in (*VALUE_KEYS, *FLAG_KEYS) if s_ == name] + list(layout)
        if isinstance(sec, dict):
            check_near_misses(sec, read, layout, "_", who, stops=bridge, where=f"{name}.")


def is_training_config(doc: Any) -> bool:
    """``doc`` (parsed YAML) is a NeMo 1.x or Megatron-Bridge training config: a mapping whose ``model`` mapping
    holds a parallel degree or a batch / recompute key (:data:`_MARKERS`), or beside a ``train`` section with the
    batch sizes (Megatron-Bridge)."""
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        return False
    train = doc.get("train")
    return any(k in model for k in _MARKERS) or isinstance(train, dict) and (
        "micro_batch_size" in train or "global_batch_size" in train)


def translate(text: str) -> Translated | None:
    """The Megatron-LM flags a NeMo 1.x / Megatron-Bridge training config stands for (:data:`VALUE_KEYS`,
    :data:`FLAG_KEYS`, :data:`SEQ_KEYS`, the world size, precision and optimizer of :func:`_nemo_flags` /
    :func:`_bridge_flags`), or None when ``text`` is not such a config (:func:`is_training_config`).

    Raises:
        ConfigError: a mapped key whose value is an OmegaConf interpolation that does not resolve to a number; a
            Megatron-Bridge override file (:func:`_check_complete`); Megatron-Bridge's older section names.
    """
    from shardplan.loaders import _UniqueKeyLoader
    try:
        doc = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader): YAML 1.2 numbers, no repeated key
    except yaml.constructor.ConstructorError as e:
        if "given twice" in str(e.problem):
            raise ConfigError(f"{e.problem} ({e.problem_mark}); legal: each key once (YAML keeps the last silently)",
                              field="import", value=str(e.problem)) from None
        return None
    except yaml.YAMLError:
        return None
    _refuse_other_bridge_shapes(doc)
    if not is_training_config(doc):
        return None
    _check_complete(doc)
    _refuse_layout_typos(doc)
    keys: dict[str, str] = {}
    words: list[str] = []  # each a flag with its values, so that dict.fromkeys below drops repeated flags only
    for (section, key), flag in VALUE_KEYS.items():
        value = _value(doc, section, key)
        if key == "pipeline_model_parallel_layout":
            value = layout_string(value)
        if _skipped(doc, key, value) or value is None or value is False:
            continue
        _one_value(f"{section}.{key}", value, key in LIST_KEYS)
        if key == "recompute_modules":
            _known_modules(f"{section}.{key}", value)
        values = value if isinstance(value, list) else [value]
        words.append(" ".join([flag, *(shlex.quote(str(v)) for v in values)]))
        keys[flag] = f"{section}.{key}"
    for (section, key), flag in FLAG_KEYS.items():
        if _value(doc, section, key) is True:
            words.append(flag)
            keys[flag] = f"{section}.{key}"
    for path in SEQ_KEYS:  # a sequence length that is no whole number ("4k", 4096.5) is refused, not skipped
        v = _nested(doc, path)  # (breaker pass 56: encoder_seq_length "4k" left seq_len unset with exit 0)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)) and not (isinstance(v, str)
                                                                                        and v.startswith("${")):
            raise ConfigError(f"{'.'.join(path)}={short_repr(v)} is not a whole number of tokens; legal: a whole "
                              "number such as 4096", field=".".join(path), value=v)
    seq = next(((".".join(path), v) for path in SEQ_KEYS if isinstance(v := _nested(doc, path), int)), None)
    if seq:
        words.append(f"--seq-length {seq[1]}")
        keys["--seq-length"] = seq[0]
    model = doc["model"]
    heads, groups = model.get("num_attention_heads"), model.get("num_query_groups")
    if groups is not None and groups != heads:  # Megatron-LM reads --num-query-groups only with this flag
        words.append("--group-query-attention")
    nemo = "trainer" in doc
    words += _nemo_flags(doc) if nemo else _bridge_flags(doc)
    return Translated(" ".join(dict.fromkeys(words)), {**(NEMO_KEYS if nemo else BRIDGE_KEYS), **keys},
                      "NeMo 1.x" if nemo else "Megatron-Bridge ConfigContainer", _file_phrases(doc, nemo))


def _file_phrases(doc: dict, nemo: bool) -> dict[str, str]:
    """:attr:`Translated.phrases` of a file: a NeMo ``trainer.precision`` of 32 / 32-true / 64 has no Megatron-LM flag,
    so the fp32 note names the key as given (breaker pass 57: "no trainer.precision" beside ``precision: 32``)."""
    precision = _value(doc, "trainer", "precision") if nemo else None
    if precision is None or _nemo_precision(doc):
        return {}
    return {"no trainer.precision: Megatron-LM trains in fp32": f"trainer.precision {precision}: fp32"}


#: the mapped keys that take a list (Megatron-Core's recompute_modules and cuda_graph_scope)
LIST_KEYS = ("recompute_modules", "cuda_graph_scope")


def _one_value(key: str, value: Any, listed: bool) -> None:
    """A mapped key's value is one number or word (a list only for :data:`LIST_KEYS`, of numbers or words).

    Raises:
        ConfigError: a list or mapping where one value belongs (``model.tensor_model_parallel_size [4, 8]`` was read
            as 4), naming the key."""
    items = value if listed and isinstance(value, list) else [value]
    if any(isinstance(v, (list, dict)) for v in items) or isinstance(value, dict):
        raise ConfigError(f"{key} {value!r}: legal: {'a list of values' if listed else 'one value'}", field=key,
                          value=str(value))


def _known_modules(key: str, value: Any) -> None:
    """Every entry of a YAML ``recompute_modules`` list is a Megatron-Core module name (on a command line the list
    ends at the first other word; in a YAML list an unknown entry was dropped without a word).

    Raises:
        ConfigError: naming the entry and the legal modules."""
    import typing

    from shardplan.parallel import RecomputeModule
    legal = typing.get_args(RecomputeModule)
    for entry in value if isinstance(value, list) else [value]:
        if entry not in legal:
            raise ConfigError(f"{key}: {entry!r} is not a Megatron-Core recompute module; legal: {', '.join(legal)}",
                              field=key, value=str(entry), legal=list(legal))


def _whole(doc: dict, section: str, key: str) -> int | None:
    """``doc[section][key]`` as a whole number >= 1, None when absent.

    Raises:
        ConfigError: a value that is not a whole number >= 1 (a quoted '16' was read as 1 node), naming the key."""
    value = _value(doc, section, key)
    if value is None:
        return None
    from shardplan.limits import MAX_DEVICES
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DEVICES:
        raise ConfigError(f"{section}.{key} {value!r}: legal: a whole number 1 to {MAX_DEVICES:,}",
                          field=f"{section}.{key}", value=str(value), legal=[1, MAX_DEVICES])
    return value


#: Megatron-Core's LayerType names in a pipeline layout given as lists (pipeline_parallel_layer_layout.py: embedding,
#: decoder, mtp, loss) -> the letters of --pipeline-model-parallel-layout
LAYOUT_LETTERS = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


def layout_string(value: Any) -> Any:
    """A pipeline layout given as a list of virtual stages, each a list of LayerType names (Megatron-Bridge's
    DeepSeek-V3 recipe: ``[["embedding", "decoder", ...], ..., [..., "mtp", "loss"]]``), as the flag's string
    (``Et...|...|...mL``: :data:`LAYOUT_LETTERS`, stages joined by ``|``, as PipelineParallelLayerLayout reads
    both); any other value as given (a string, or a form the caller leaves out with its note)."""
    if (isinstance(value, list) and value and all(isinstance(stage, list) for stage in value)
            and all(isinstance(x, str) and x.lower() in LAYOUT_LETTERS for stage in value for x in stage)):
        return "|".join("".join(LAYOUT_LETTERS[x.lower()] for x in stage) for stage in value)
    return value


def _skipped(doc: dict, key: str, value: Any) -> bool:
    """A key set in the file that Megatron-Core does not read there: offloading without ``cpu_offloading: true``, a
    recompute method or layer count without full granularity (:data:`FULL_RECOMPUTE_KEYS`), a pipeline layout
    given as nested lists that :func:`layout_string` could not read as LayerType names."""
    model = doc["model"]
    if key == "cpu_offloading_num_layers":
        return model.get("cpu_offloading") is not True
    if key in FULL_RECOMPUTE_KEYS:
        granularity = model.get("recompute_granularity", model.get("activations_checkpoint_granularity"))
        return granularity != "full" or not value
    return key == "pipeline_model_parallel_layout" and not isinstance(value, str)


def _refuse_other_bridge_shapes(doc: Any) -> None:
    """Refuse the Megatron-Bridge files that are not a run's ConfigContainer: a performance config (a
    ``ConfigContainer:`` mapping of overrides beside a ``perf_matrix``) and the older ``model_config:`` /
    ``train_config:`` section names.

    Raises:
        ConfigError: naming what the file is."""
    if not isinstance(doc, dict) or "model" in doc:
        return
    if "ConfigContainer" in doc:
        raise ConfigError("the file is a YAML mapping with a ConfigContainer: section (Megatron-Bridge's performance "
                          "configs: overrides of a recipe per system, beside a perf_matrix), not a run's "
                          "ConfigContainer; legal: the ConfigContainer YAML of the run (model:, train:, ddp:, ...), "
                          "or the layout given to estimate directly (--tp, --pp, --cp, --ep)", field="import",
                          value="ConfigContainer")
    if "model_config" in doc or "train_config" in doc:
        raise ConfigError("the file is a YAML mapping with Megatron-Bridge's older section names (model_config:, "
                          "train_config:), which are not read; legal: the current ConfigContainer names (model:, "
                          "train:, ddp:, optimizer:, mixed_precision:)", field="import", value="model_config")


def _check_complete(doc: dict) -> None:
    """Refuse a Megatron-Bridge override file: Bridge sections (:data:`BRIDGE_SECTIONS`) without a root
    ``_target_`` naming the ConfigContainer (what a saved ConfigContainer has; an override file holds only the
    fields it changes in a recipe, whose precision, optimizer sharding, dispatcher and dropout would otherwise
    be read as Megatron-LM's defaults). A NeMo 1.x config (``trainer:``) is complete as written.

    Raises:
        ConfigError: naming the file's kind and what to give instead."""
    if "trainer" in doc or not any(isinstance(doc.get(s), dict) or s == "mixed_precision" and s in doc
                                   for s in BRIDGE_SECTIONS):
        return
    target = doc.get("_target_")
    if not (isinstance(target, str) and target.endswith("ConfigContainer")):
        raise ConfigError("the file looks like a Megatron-Bridge override file (sections model:, train:, ... without "
                          "the root _target_: ...ConfigContainer a saved ConfigContainer has): it holds only what it "
                          "changes in a recipe, and the recipe's precision, optimizer sharding, MoE dispatcher and "
                          "dropout would be read as Megatron-LM's defaults; legal: the run's full ConfigContainer "
                          "YAML (Megatron-Bridge's scripts/performance/dryrun_configs are such files), or the layout "
                          "given to estimate directly (--tp, --pp, --cp, --ep, --precision)", field="_target_",
                          value=target)


#: an innermost OmegaConf interpolation: a node reference (``${.hidden_size}``, ``${model.hidden_size}``,
#: ``${training.model.hidden_size}``) or the NeMo-Framework-Launcher's arithmetic resolvers (``${multiply:4,
#: ${.hidden_size}}``; launcher_scripts/nemo_launcher/core/launchers.py registers multiply / divide_ceil /
#: divide_floor with OmegaConf)
_INTERPOLATION = re.compile(r"\$\{([^${}]*)\}")


def _resolve(value: str, doc: dict, base: tuple[str, ...]) -> Any:
    """``value`` with its OmegaConf interpolations replaced, innermost first: node references within ``doc``
    (relative ones, ``${.key}``, in the mapping at path ``base``; a launcher path's leading ``training.`` dropped)
    and multiply / divide_ceil / divide_floor of numbers. Returns the number when the whole value resolves to one,
    else None (an environment variable, a path, a resolver it does not know)."""
    def one(m: re.Match) -> str:
        expr = m.group(1).strip()
        if ":" in expr:
            name, _, args = expr.partition(":")
            nums = [float(x) for x in args.split(",")]
            out = {"multiply": lambda a, b: a * b, "divide_ceil": lambda a, b: math.ceil(a / b),
                   "divide_floor": lambda a, b: math.floor(a / b)}[name.strip()](*nums)
            return str(int(out)) if float(out).is_integer() else str(out)
        path = [*base, expr[1:]] if expr.startswith(".") else expr.split(".")
        node: Any = doc
        for part in path[1:] if path[0] == "training" else path:
            node = node[part]
        return str(node)
    for _ in range(8):  # nested interpolations, innermost first
        try:
            new = _INTERPOLATION.sub(one, value)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return None
        if new == value:
            break
        value = new
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number.is_integer() else number


def _value(doc: dict, section: str, key: str) -> Any:
    """``doc[section][key]`` or None (:func:`_nested`)."""
    return _nested(doc, (section, key))


def _nested(doc: dict, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in ``doc``, an OmegaConf interpolation resolved (:func:`_resolve`), or None.

    Raises:
        ConfigError: an interpolation that does not resolve to a number, naming the key."""
    node: Any = doc
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, str) and "${" in node:
        resolved = _resolve(node, doc, path[:-1])
        if resolved is None:
            key = ".".join(path)
            raise ConfigError(f"{key} is {node!r}, an OmegaConf interpolation the importer cannot resolve to a number "
                              "(it resolves references to the file's own numbers and multiply / divide_ceil / "
                              "divide_floor); legal: the value itself in the file", field=key, value=node)
        return resolved
    return node


def _nemo_flags(doc: dict) -> list[str]:
    """NeMo 1.x's keys outside ``model``'s Megatron-Core fields: ``trainer.num_nodes`` x ``trainer.devices`` (the
    torchrun sizes), ``trainer.precision`` (bf16 / bf16-mixed: --bf16; 16 / 16-mixed: --fp16), ``model.optim``
    (a distributed optimizer, :data:`NEMO_DISTRIBUTED_OPTIMIZERS`; its overlap and gradient-dtype keys),
    ``model.fp8`` (format hybrid with ``fp8_hybrid``, else e4m3), ``model.overlap_p2p_comm: false`` (blocking
    interleaved sends) and ``model.fsdp`` (:func:`_nemo_fsdp`); ``cpu_offloading`` is read by :func:`_skipped`."""
    words: list[str] = []
    nodes, devices = _whole(doc, "trainer", "num_nodes"), _whole(doc, "trainer", "devices")
    if devices is not None:
        words += [f"--nnodes {nodes or 1}", f"--nproc-per-node {devices}"]  # no num_nodes: Lightning's default 1
    words += _nemo_precision(doc)
    model = doc["model"]
    optim = model.get("optim") if isinstance(model.get("optim"), dict) else {}
    if optim.get("name") is not None and not isinstance(optim.get("name"), str):
        raise ConfigError(f"model.optim.name {optim['name']!r}: legal: one optimizer name (e.g. "
                          f"{', '.join(NEMO_DISTRIBUTED_OPTIMIZERS)} or fused_adam)", field="model.optim.name",
                          value=str(optim["name"]))
    if optim.get("name") in NEMO_DISTRIBUTED_OPTIMIZERS:
        words.append("--use-distributed-optimizer")
        words += ["--overlap-grad-reduce"] if optim.get("overlap_grad_sync") else []
        words += ["--overlap-param-gather"] if optim.get("overlap_param_sync") else []
    words += ["--grad-reduce-in-bf16"] if optim.get("grad_sync_dtype") == "bf16" else []
    fp8 = model.get("fp8")
    if fp8 not in (None, True, False, "hybrid", "e4m3"):  # breaker pass 56: fp8 "yes-please" was read as no fp8
        raise ConfigError(f"model.fp8={short_repr(fp8)}; legal: true, false (NeMo 1.x's switch, the format in "
                          "model.fp8_hybrid), 'hybrid', 'e4m3'", field="model.fp8", value=fp8,
                          legal=[True, False, "hybrid", "e4m3"])
    if fp8 is True:
        words.append(f"--fp8-format {'hybrid' if model.get('fp8_hybrid') else 'e4m3'}")
    elif isinstance(fp8, str):
        words.append(f"--fp8-format {fp8}")
    if model.get("overlap_p2p_comm") is False:
        words.append("--no-overlap-p2p-communication")
    return words + _nemo_fsdp(model, nodes)


#: PyTorch Lightning's ``Trainer(precision=...)`` values (lightning.fabric.connector _PRECISION_INPUT; any case here)
#: -> the Megatron-LM flag of the same training precision (none: fp32 / fp64)
NEMO_PRECISIONS = {"bf16": "--bf16", "bf16-mixed": "--bf16", "bf16-true": "--bf16", "16": "--fp16",
                   "16-mixed": "--fp16", "16-true": "--fp16", "32": None, "32-true": None, "64": None, "64-true": None}


def _nemo_precision(doc: dict) -> list[str]:
    """``trainer.precision`` (:data:`NEMO_PRECISIONS`) as its Megatron-LM flag; absent: fp32 (Lightning's default).

    Raises:
        ConfigError: a value Lightning does not take (``bf61`` was read as fp32), naming the legal ones."""
    value = _value(doc, "trainer", "precision")
    if value is None:
        return []
    text = str(value).lower() if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if text not in NEMO_PRECISIONS:
        raise ConfigError(f"trainer.precision {value!r}: legal: {', '.join(NEMO_PRECISIONS)}",
                          field="trainer.precision", value=str(value), legal=list(NEMO_PRECISIONS))
    flag = NEMO_PRECISIONS[text]
    return [flag] if flag else []


#: NeMo 1.x's ``model.fsdp_sharding_strategy`` (PyTorch FSDP's ShardingStrategy through NeMo's
#: NLPFSDPStrategy; default 'full'): full = FULL_SHARD (ZeRO-3), grad = SHARD_GRAD_OP (ZeRO-2), hybrid =
#: HYBRID_SHARD (ZeRO-3 within a node, replicated across nodes)
NEMO_FSDP_STRATEGIES = ("full", "grad", "hybrid")


def _nemo_fsdp(model: dict, nodes: int | None) -> list[str]:
    """NeMo 1.x's ``model.fsdp: true`` as the Megatron-LM flags of the same sharding (:data:`NEMO_FSDP_STRATEGIES`):
    full as ``--use-torch-fsdp2`` (ZeRO-3), grad as Megatron-FSDP's optim_grads (ZeRO-2), hybrid as ZeRO-3 sharded
    over each node's ranks (``--num-distributed-optimizer-instances`` = nodes); ``fsdp_grad_reduce_dtype: bf16``
    as ``--grad-reduce-in-bf16``.

    Raises:
        ConfigError: another strategy, or hybrid without ``trainer.num_nodes``."""
    if model.get("fsdp") is not True:
        return []
    strategy = model.get("fsdp_sharding_strategy") or "full"
    if strategy not in NEMO_FSDP_STRATEGIES:
        raise ConfigError(f"model.fsdp_sharding_strategy {strategy!r}; legal: {', '.join(NEMO_FSDP_STRATEGIES)}",
                          field="model.fsdp_sharding_strategy", value=strategy, legal=list(NEMO_FSDP_STRATEGIES))
    if strategy == "hybrid" and not nodes:
        raise ConfigError("model.fsdp_sharding_strategy hybrid shards within each node: trainer.num_nodes is needed "
                          "to count them; legal: a number of nodes in trainer.num_nodes", field="trainer.num_nodes",
                          value=None)
    words = {"full": ["--use-torch-fsdp2"],
             "grad": ["--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads"],
             "hybrid": ["--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads_params",
                        f"--num-distributed-optimizer-instances {nodes}"]}[strategy]
    return words + (["--grad-reduce-in-bf16"] if model.get("fsdp_grad_reduce_dtype") in ("bf16", 16, "16") else [])


def _bridge_flags(doc: dict) -> list[str]:
    """Megatron-Bridge's keys outside ``model``'s Megatron-Core fields: the precision (:func:`_bridge_precision`),
    the optimizer state dtypes with ``use_precision_aware_optimizer`` (:data:`OPTIMIZER_DTYPE_KEYS`) and
    ``comm_overlap.overlap_p2p_comm: false`` (null: Bridge decides, overlapping interleaved sends)."""
    words = _bridge_precision(doc)
    optimizer = doc.get("optimizer") if isinstance(doc.get("optimizer"), dict) else {}
    if optimizer.get("use_precision_aware_optimizer") is True:
        for key, flag in OPTIMIZER_DTYPE_KEYS.items():
            dtype = optimizer.get(key)
            name = dtype.get("_target_") if isinstance(dtype, dict) else dtype
            if name is None:
                continue
            if not isinstance(name, str) or not (TORCH_DTYPES.get(name) or name in TORCH_DTYPES.values()):
                raise ConfigError(f"optimizer.{key} {name!r}: legal: {', '.join(TORCH_DTYPES)}",
                                  field=f"optimizer.{key}", value=str(name), legal=list(TORCH_DTYPES))
            words.append(f"{flag} {TORCH_DTYPES.get(name, name)}")
    overlap = doc.get("comm_overlap") if isinstance(doc.get("comm_overlap"), dict) else {}
    return words + (["--no-overlap-p2p-communication"] if overlap.get("overlap_p2p_comm") is False else [])


def _bridge_precision(doc: dict) -> list[str]:
    """Megatron-Bridge's ``mixed_precision``: a preset name (``bf16_mixed``, ``fp16_mixed``,
    ``bf16_with_fp8_delayed_scaling_mixed``, ``bf16_with_mxfp8_mixed``, ``bf16_with_nvfp4_mixed``, ...:
    :data:`BRIDGE_PRESET`; bf16 / fp16 and fp8 hybrid with the named recipe and its fp8 parameter gather, or NVFP4)
    or its fields (``bf16``, ``fp16``, ``fp8``, ``fp8_recipe``, ``fp8_param_gather``, ``fp4``, ``fp4_recipe``,
    ``grad_reduce_in_fp32``), and ``ddp.grad_reduce_in_fp32: false`` (bf16 reduction).

    Raises:
        ConfigError: a name that is no preset (naming the presets).
    """
    mp = doc.get("mixed_precision")
    mp = mp.lower() if isinstance(mp, str) else mp  # preset names in any case
    words: list[str] = []
    preset = isinstance(mp, str) and BRIDGE_PRESET.fullmatch(mp.replace("-", "_"))
    if not (mp is None or isinstance(mp, dict) or preset):
        raise ConfigError(f"mixed_precision {doc.get('mixed_precision')!r}: legal: a Megatron-Bridge preset name "
                          "(bf16_mixed, fp16_mixed, bf16_with_fp8_delayed_scaling_mixed, bf16_with_mxfp8_mixed, "
                          "bf16_with_fp8_current_scaling_mixed, bf16_with_fp8_subchannel_scaling_mixed, "
                          "bf16_with_nvfp4_mixed, ...) or the preset's fields (bf16, fp16, fp8, fp8_recipe, fp4, ...)",
                          field="mixed_precision", value=str(doc.get("mixed_precision")))
    if preset:
        words += ["--bf16"] if preset.group(1) == "bf16" else ["--fp16"]
        low = preset.group(2) or ""
        if "fp8" in low:
            recipe = next((flag for part, flag in BRIDGE_FP8_RECIPES.items() if part in low), None)
            # mixed_precision.py: every fp8 preset but the subchannel (blockwise) ones sets fp8_param_gather=True
            words += ["--fp8-format hybrid", *([f"--fp8-recipe {recipe}"] if recipe else []),
                      *(["--fp8-param-gather"] if recipe != "blockwise" else [])]
        elif low == "nvfp4":  # fp8 None, fp4 "e2m1", fp4_recipe "nvfp4"
            words += ["--fp4-format e2m1", "--fp4-recipe nvfp4"]
    elif isinstance(mp, dict):
        words += [flag for key, flag in (("bf16", "--bf16"), ("fp16", "--fp16"),
                                         ("fp8_param_gather", "--fp8-param-gather")) if mp.get(key) is True]
        if isinstance(mp.get("fp8"), str):
            words += [f"--fp8-format {shlex.quote(mp['fp8'])}",
                      *([f"--fp8-recipe {shlex.quote(str(mp['fp8_recipe']))}"] if mp.get("fp8_recipe") else [])]
        if isinstance(mp.get("fp4"), str):
            words += [f"--fp4-format {shlex.quote(mp['fp4'])}",
                      *([f"--fp4-recipe {shlex.quote(str(mp['fp4_recipe']))}"] if mp.get("fp4_recipe") else [])]
        words += ["--grad-reduce-in-bf16"] if mp.get("grad_reduce_in_fp32") is False else []
    words += ["--grad-reduce-in-bf16"] if _value(doc, "ddp", "grad_reduce_in_fp32") is False else []
    return words
