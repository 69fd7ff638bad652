"""MaxText YAML overrides of ``base.yml``.

Sources read (AI-Hypercomputer/maxtext, the former google/maxtext):

* ``src/MaxText/configs/base.yml`` (commit 003b416): mesh axes ``data, stage, fsdp, fsdp_transpose,
  sequence, context, context_autoregressive, tensor, tensor_transpose, tensor_sequence, expert,
  autoregressive``; ``ici_<axis>_parallelism`` (product = devices per slice) and
  ``dcn_<axis>_parallelism`` (product = slices; pipeline is ``ici/dcn_pipeline_parallelism``);
  ``shard_optimizer_over_data`` ("ZeRO-1 optimizer sharding over data axis");
  ``per_device_batch_size``, ``gradient_accumulation_steps``, ``num_pipeline_microbatches`` ("must be
  a multiple of the number of pipeline stages"; "microbatch_size is given by global_batch_size /
  num_pipeline_microbatches, where global_batch_size = per_device_batch_size * num_devices"),
  ``num_layers_per_pipeline_stage`` (layers = stages x layers per stage x ``num_pipeline_repeats``),
  ``remat_policy`` and the per-tensor knobs of ``remat_policy: custom`` (``decoder_layer_input``,
  ``context``, ``mlpwi``, ..., each 'remat' | 'device' | 'offload'), ``optimizer_memory_host_offload``,
  ``max_target_length``, ``weight_dtype`` / ``dtype`` (float32 weights with bfloat16 compute: the planner's
  fp32-params), ``num_vocab_tiling`` (the profile's ``loss_chunks``).
* ``src/MaxText/configs/types.py`` (commit 0035497): ``RematPolicy`` = full, minimal,
  save_dot_with_context_except_mlp, save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj,
  qkv_proj_offloaded, custom, minimal_offloaded, save_out_proj -- no 'none', so the pydantic config
  refuses ``remat_policy: none``; the batch sizes: micro batch = devices x per_device_batch_size,
  global batch = micro batch x gradient_accumulation_steps; with pipelining the microbatch count must
  divide by the stages and the micro batch by the microbatch count.
* ``src/MaxText/pyconfig.py`` (commit 0047101, the omegaconf loader): the same pipeline asserts.
* ``src/MaxText/layers/decoders.py`` ``get_remat_policy`` (read by code search, commit not pinned):
  'minimal' saves the q/k/v, out and MLP projections and recomputes the attention context; 'full'
  saves nothing (``jax.checkpoint`` with no policy); 'custom' saves the tensors set to 'device'.

Mapping: tp -> ``tensor``, which also shards the activations between the TP regions (base.yml's logical axis
rules put ``activation_embed``, ``activation_mlp`` and ``activation_heads`` on ``tensor``): the planner's tp
with sp, so tp without sp is refused and both ``tensor`` and ``tensor_sequence`` are read back as tp + sp;
cp -> ``context``, pp -> ``pipeline``, ep -> ``expert``, ZeRO-3 shards -> ``fsdp``,
replicas -> ``data``. MaxText's ``embed`` logical rule shards the weights over fsdp, context and expert,
so cp > 1 or ep > 1 need ZeRO-3 (the planner's ZeRO shard group is dp_shard x cp, the same set).
Each degree is split into an ICI part and a DCN part, innermost axis first (tp, cp, expert, fsdp, data,
pipeline: the planner's device order) until the ICI parts fill one scale-up domain
(``HardwareSpec.scale_up_size``: 8 GPUs per NVLink domain, a TPU slice). Pipelining is MaxText's
circular pipeline: all forward then all backward per repeat (GPipe for 1 repeat, interleaved bubble for
``num_pipeline_repeats`` > 1); 1F1B is refused, and so is a microbatch count that is not a multiple of
the stages. Batch: without pp, ``per_device_batch_size`` = one microbatch per device and
``gradient_accumulation_steps`` = microbatches; with pp, ``per_device_batch_size`` = the whole step and
``num_pipeline_microbatches`` = microbatches. ``remat_policy``: full -> 'full'; selective -> 'minimal'
(matmul outputs saved, attention core recomputed); none -> 'custom' with every tensor knob 'device'
(every named matmul output and the attention context saved; the nearest no-recompute policy the
validated config accepts -- the element-wise results between them are still recomputed). The importer
also reads 'none' (accepted by ``get_remat_policy`` and by older, unvalidated MaxText configs).
``offload_activation_layers`` = every layer under full recompute (the maxtext profile's
``activation_offload: remat_inputs``) -> 'custom' with every knob 'remat' and ``decoder_layer_input: offload``
(tpu-recipes' Llama 3.1 405B on Trillium runs it).
"""

from __future__ import annotations

import math
import re
from math import gcd

import yaml

from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.parallel import MAXTEXT_SAVED_POLICIES
from shardplan.specs.framework import FrameworkProfile
from shardplan.export.base import (NOT_A_RUN, ExportContext, Exporter, Imported, check_near_misses, check_unexpressed,
                                   comment_block,
                                   dp_axes, even_layers_per_virtual_stage, expand_variables, flag, parallel_from,
                                   read_meta, refuse, refuse_first, shell_words, whole, without_heredocs)
from shardplan.limits import MAX_CAPACITY_FACTOR, MAX_SEQ_LEN, MIN_CAPACITY_FACTOR

SOURCE = "MaxText src/MaxText/configs/base.yml (commit 003b416) + configs/types.py (commit 0035497)"
#: axes in the planner's device order, innermost first (ICI is filled in this order)
AXES = ("tensor", "tensor_sequence", "context", "expert", "fsdp", "data", "pipeline")
_REMAT = {"none": "custom", "selective": "minimal", "full": "full"}
#: MaxText's named policies that keep some matmul outputs under full remat (parallel.MAXTEXT_SAVED_POLICIES)
_SAVED_POLICIES = MAXTEXT_SAVED_POLICIES
#: the checkpoint names behind each remat_saved entry (MaxText's attention and MLP layers)
_SAVED_TENSORS = {"qkv_proj": ("query_proj", "key_proj", "value_proj", "qkv_proj"), "query_proj": ("query_proj",),
                  "key_proj": ("key_proj",), "value_proj": ("value_proj",), "context": ("context",),
                  "out_proj": ("out_proj",), "mlpwi": ("mlpwi", "mlpwi_0", "mlpwi_1"), "mlpwo": ("mlpwo",)}
#: the per-tensor knobs of ``remat_policy: custom`` (base.yml); all 'device' = save every named tensor
REMAT_TENSORS = ("decoder_layer_input", "context", "mlpwi", "mlpwi_0", "mlpwi_1", "mlpwo", "query_proj",
                 "key_proj", "value_proj", "qkv_proj", "out_proj", "mla_q", "mla_kv")
_ALT = {"tp_overlap": "Megatron-LM (--tp-comm-overlap)"}
#: configs/types.py RematPolicy, plus 'none' (older, unvalidated MaxText configs)
_POLICIES = ("full", "minimal", "save_dot_with_context_except_mlp", "save_dot_except_mlpwi", "save_dot_except_mlp",
             "save_qkv_proj", "qkv_proj_offloaded", "custom", "minimal_offloaded", "save_out_proj", "none",
             "minimal_with_context", "minimal_flash")
_TORCH = "Megatron-LM or torchtitan"


def _check(ctx: ExportContext) -> None:
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    checks = [
        (p.tp > 1 and not p.sp, f"tp={p.tp} without sequence parallelism (its tensor axis also shards the activations "
         "between the TP regions: activation_embed / activation_mlp on 'tensor'; --sp prices that)",
         "Megatron-LM (no --sequence-parallel)"),
        (p.pp > 1 and p.schedule in ("1f1b", "zero-bubble", "dualpipe"), f"schedule={p.schedule!r} (its circular pipeline runs "
         f"all forward then all backward: GPipe, or interleaved with repeats)",
         _TORCH if p.schedule == "1f1b" else "no exporter"),
        (p.cp > 1 and p.zero_stage != 3, f"cp={p.cp} with zero_stage={p.zero_stage}: its 'embed' rule shards the "
         f"weights over the context axis (ZeRO-3 over cp)", _TORCH),
        (ctx.training.optimizer_dtype == "bf16" and not _bf16_weights(ctx.training),
         f"optimizer_dtype='bf16' with precision {ctx.training.precision.name} (bf16 Adam moments come with "
         "weight_dtype bfloat16: --precision bf16-mixed)", "no exporter"),
        (p.zero_stage == 2, "ZeRO-2 (shard_optimizer_over_data is ZeRO-1; fsdp is ZeRO-3)",
         "Megatron-LM (Megatron-FSDP optim_grads) or torchtitan (fsdp_reshard_after_forward = never)"),
        (p.zero_stage == 1 and p.dp_shard != p.dp, "ZeRO-1 over a part of dp (HSDP)",
         "Megatron-LM (--num-distributed-optimizer-instances)"),
        (p.pp > 1 and ctx.layout.microbatches % p.pp != 0, f"{ctx.layout.microbatches} microbatches on pp={p.pp} "
         f"(num_pipeline_microbatches must be a multiple of the stages)",
         "Megatron-LM" + (" or torchtitan" if ctx.layout.microbatches // p.pipeline_flushes >= p.pp else "")),
        (bool(p.offload_activation_layers) and (p.recompute != "full" or p.offload_activation_layers
                                                 != ctx.estimate.model.n_layers),
         f"offload_activation_layers={p.offload_activation_layers} with recompute={p.recompute!r} (its "
         f"decoder_layer_input: offload keeps every layer's input on the host under full remat)",
         "Megatron-LM (--cpu-offloading-num-layers)"),
    ]
    refuse_first("MaxText", checks)


def axis_degrees(ctx: ExportContext) -> dict[str, int]:
    """Total degree of each MaxText mesh axis (product = devices).

    Raises:
        ConfigError: see the module docstring.
    """
    _check(ctx)
    p = ctx.p
    d = dp_axes(p, "MaxText", _TORCH)
    return {"tensor": p.tp, "tensor_sequence": 1, "context": p.cp, "expert": d.expert, "fsdp": d.fsdp,
            "data": d.data, "pipeline": p.pp}


def split_ici_dcn(degrees: dict[str, int], slice_size: int) -> tuple[dict[str, int], dict[str, int]]:
    """Split each degree into ICI x DCN parts, innermost axis first, so that the ICI parts multiply to
    the slice size (``min(scale-up size, devices)``).

    Raises:
        ConfigError: the degrees cannot fill a slice exactly (e.g. a degree of 3 on 8-device slices).
    """
    room, ici, dcn = slice_size, {}, {}
    for axis in AXES:
        g = gcd(degrees[axis], room)
        ici[axis], dcn[axis] = g, degrees[axis] // g
        room //= g
    if room != 1:
        raise refuse("MaxText", f"degrees {degrees} that do not fill a {slice_size}-device slice (ICI parts must "
                     f"multiply to the devices per slice)", _TORCH)
    return ici, dcn


#: shardplan model presets -> the MaxText model config of the same model (``model_name``: MaxText loads
#: src/MaxText/configs/models/<name>.yml; names as stored in AI-Hypercomputer/maxtext, e.g. llama3-8b.yml @ f0fd1e5,
#: mixtral-8x7b.yml @ 48445cf, deepseek3-671b.yml @ ac708cd, qwen3-30b-a3b.yml @ 6710342, llama4-17b-16e.yml @ ab0fa7f,
#: gpt-oss-20b.yml @ 6710342, gemma2-27b.yml @ 48445cf, gemma3-4b.yml @ 598dfbc, gemma3-12b.yml @ 3b04832,
#: gemma3-27b.yml @ 14c4474; MaxText's Gemma files pad the vocabulary to 256128 / 262144 rows). A model without an
#: entry (a config file, a scaled model) leaves model_name out: the file then carries the layout only, to be given
#: beside the run's own model config.
MAXTEXT_MODEL_NAMES = {
    "llama-2-7b": "llama2-7b", "llama-2-13b": "llama2-13b", "llama-2-70b": "llama2-70b", "llama-3-8b": "llama3-8b",
    "llama-3-70b": "llama3-70b", "llama-3.1-8b": "llama3.1-8b", "llama-3.1-70b": "llama3.1-70b",
    "llama-3.1-405b": "llama3.1-405b",
    "llama-4-scout": "llama4-17b-16e", "mixtral-8x7b": "mixtral-8x7b", "mixtral-8x22b": "mixtral-8x22b",
    "gemma-7b": "gemma-7b", "gemma-2-9b": "gemma2-9b", "gemma-2-27b": "gemma2-27b",
    "gemma-3-4b": "gemma3-4b", "gemma-3-12b": "gemma3-12b", "gemma-3-27b": "gemma3-27b",
    "deepseek-v2-lite": "deepseek2-16b",
    "deepseek-v3": "deepseek3-671b", "gpt-oss-20b": "gpt-oss-20b", "gpt-oss-120b": "gpt-oss-120b",
    "gpt3-175b": "gpt3-175b", "qwen2.5-7b": "qwen2.5-7b", "qwen3-8b": "qwen3-8b", "qwen3-30b-a3b": "qwen3-30b-a3b",
    "qwen3-235b-a22b": "qwen3-235b-a22b", "mistral-7b": "mistral-7b", "mistral-7b-v0.1": "mistral-7b"}
#: what an exported file without ``model_name`` says (header and stderr): base.yml's own model would train
NO_MODEL_NAME = ("no model_name: MaxText has no config of this model that shardplan knows, so the file carries the "
                 "layout only and base.yml's default model would train; add model_name (MaxText configs/models/) or "
                 "your model's base_emb_dim / base_num_decoder_layers / ... keys")


#: the ModelSpec fields a model must share with the preset of its name to take that preset's MaxText model_name
_SHAPE_FIELDS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_dim", "vocab_size", "n_experts", "top_k")


def maxtext_model_name(model) -> str | None:
    """MaxText's ``model_name`` of a model (:data:`MAXTEXT_MODEL_NAMES`), where it has the shape of the shardplan
    preset of its name (:data:`_SHAPE_FIELDS`); None otherwise: a breaker's 0.85B model file named ``llama-3-8b`` was
    exported as ``model_name: llama3-8b``, and MaxText would have trained the real 8B."""
    from shardplan.presets.models import MODELS
    name, preset = MAXTEXT_MODEL_NAMES.get(model.name), MODELS.get(model.name)
    if name is None or preset is None or any(getattr(model, f) != getattr(preset, f) for f in _SHAPE_FIELDS):
        return None
    return name


def overrides(ctx: ExportContext) -> dict:
    """The MaxText override mapping of a plan (``model_name`` first where the model has a MaxText config,
    :data:`MAXTEXT_MODEL_NAMES`).

    Raises:
        ConfigError: see the module docstring.
    """
    p, tr, n = ctx.p, ctx.training, ctx.layout.n_devices
    ici, dcn = split_ici_dcn(axis_degrees(ctx), min(ctx.estimate.hardware.scale_up_size, n))
    out: dict = {}
    name = maxtext_model_name(ctx.estimate.model)
    if name is not None:
        out["model_name"] = name
    for axis in AXES:
        out[f"ici_{axis}_parallelism"] = ici[axis]
    for axis in AXES:
        out[f"dcn_{axis}_parallelism"] = dcn[axis]
    out["shard_optimizer_over_data"] = p.zero_stage == 1
    m = ctx.layout.microbatches
    if p.pp > 1:
        out["per_device_batch_size"] = tr.global_batch_size / n
        out["num_pipeline_microbatches"] = m
        out["num_layers_per_pipeline_stage"] = even_layers_per_virtual_stage(
            ctx, "MaxText", "Megatron-LM (--pipeline-model-parallel-layout)")
    else:
        out["per_device_batch_size"] = tr.global_batch_size / (n * m)
        out["gradient_accumulation_steps"] = m
    out.update(_remat_overrides(p))
    if p.zero_stage == 3 and p.zero3_gather == "per_step" and p.pp == 1:
        # MaxText's ZeroOneTransformer: the weights all-gathered once per step and kept through the accumulation
        # (types.py model_fsdp_ag_once; refused with pipeline parallelism); new-user pass 57b found the plan's
        # per-step gather listed as "not a config option here"
        out["model_fsdp_ag_once"] = True
    out["optimizer_memory_host_offload"] = p.offload_optimizer
    out["max_target_length"] = tr.seq_len
    if tr.precision.name == "fp32-params":  # MaxText's default: fp32 weights (no master copy), bf16 compute
        out.update(weight_dtype="float32", dtype="bfloat16")
    elif _bf16_weights(tr):  # bf16 weights; optax keeps the Adam moments in the weights' dtype (mu_dtype unset)
        out.update(weight_dtype="bfloat16", dtype="bfloat16")
    if tr.framework.loss_chunks > 1:  # the profile's chunked loss is MaxText's vocab tiling (base.yml num_vocab_tiling)
        out["num_vocab_tiling"] = tr.framework.loss_chunks
    if tr.attention == "naive":  # the unfused core the plan priced: XLA's einsum attention (MAXTEXT_ATTENTION)
        out["attention"] = "dot_product"
    elif ctx.estimate.hardware.kind == "gpu":  # the fused kernel priced on GPUs: cuDNN's (shardplan.cost.gemm)
        out["attention"] = "cudnn_flash_te"
    if ctx.estimate.hardware.kind == "gpu":  # base.yml's hardware: 'tpu' would not start a GPU job (new-user pass 55b)
        out["hardware"] = "gpu"
    return out


def _bf16_weights(tr) -> bool:
    """True for MaxText's ``weight_dtype: bfloat16``: bf16 weights and gradients, Adam moments in the weights'
    dtype (optax adamw with MaxText's default empty ``mu_dtype``), no fp32 master copy: the planner's
    bf16-mixed with ``optimizer_dtype`` 'bf16'."""
    return tr.precision.name == "bf16-mixed" and tr.optimizer_dtype == "bf16"


def _remat_overrides(p) -> dict:
    """remat_policy (and the custom policy's per-tensor knobs) of a layout: none -> custom with every tensor on
    the device; selective -> minimal; full -> full, or the named policy keeping ``remat_saved``
    (:data:`_SAVED_POLICIES`), else custom with those tensors on the device; layer-input offload -> custom with the
    input offloaded."""
    saved = tuple(sorted(p.remat_saved or ()))
    # only names of MaxText's validated RematPolicy (configs/types.py); minimal_with_context is get_remat_policy's
    # alone, so that set is written as custom knobs
    named = {tuple(sorted(v)): k for k, v in _SAVED_POLICIES.items() if k not in ("minimal_with_context", "minimal_flash")}
    if not p.offload_activation_layers and (not saved or saved in named):
        out = {"remat_policy": named[saved] if saved else _REMAT[p.recompute]}
        return out | ({name: "device" for name in REMAT_TENSORS} if p.recompute == "none" else {})
    kept = {t for k in saved for t in _SAVED_TENSORS[k]}
    return {"remat_policy": "custom"} | {name: "device" if name in kept else "remat" for name in REMAT_TENSORS} | {
        "decoder_layer_input": "offload" if p.offload_activation_layers else "device"}


def write(ctx: ExportContext) -> str:
    """The YAML text: header comments, ``base_config: base.yml``, then the overrides. MaxText's pyconfig
    (``_load_config``) merges a file's ``base_config`` parent under it, looked up beside the file and then in
    MaxText's own configs folder, so ``python -m MaxText.train FILE`` runs it; without the line only the overrides
    load and base.yml's keys are missing (new-user pass 57b). The same keys also work as ``key=value`` overrides.

    Raises:
        ConfigError: see the module docstring.
    """
    extra = [] if maxtext_model_name(ctx.estimate.model) else [f"note: {NO_MODEL_NAME}"]
    if ctx.training.precision.name != "fp32-params" and not _bf16_weights(ctx.training):
        extra += [f"note: priced as precision {ctx.training.precision.name}; MaxText keeps its default weight_dtype "
                 "float32 (fp32 weights, no master copy): --precision fp32-params prices what this file runs "
                 "(bf16 weights: --precision bf16-mixed --optimizer-dtype bf16, weight_dtype bfloat16)"]
    extra += xla_gpu_flag_lines(ctx)
    extra.append("run: python -m MaxText.train THIS_FILE run_name=... (base_config pulls in MaxText's base.yml)")
    return comment_block(ctx, EXPORTER, extra) + yaml.safe_dump({"base_config": "base.yml", **overrides(ctx)},
                                                                sort_keys=False)


#: XLA:GPU flags under which a scanned layer's FSDP AllGather of the next iteration's weights overlaps this one's
#: compute (collective pipelining of the while loop; OpenXLA xla/debug_options_flags.cc: pipelined all-gather and
#: all-reduce default false; NVIDIA's MaxText GPU recipes set them, e.g. AI-Hypercomputer/maxtext issue #1005's and
#: the A3 Llama 2 70B script's XLA_FLAGS, with a PGLE profile), what the maxtext profile's zero3_gather_buffers 2
#: prices; without them each layer's gather is exposed (``maxtext+zero3_gather_buffers=1``)
XLA_GPU_OVERLAP_FLAGS = ("--xla_gpu_enable_latency_hiding_scheduler=true --xla_gpu_enable_pipelined_all_gather=true "
                         "--xla_gpu_enable_pipelined_reduce_scatter=true --xla_gpu_enable_pipelined_all_reduce=true "
                         "--xla_gpu_enable_while_loop_double_buffering=true")


def xla_gpu_flag_lines(ctx: ExportContext) -> list[str]:
    """Header lines for a GPU export with ZeRO-3 whose profile prices the FSDP AllGathers overlapped
    (``zero3_gather_buffers`` 2): the XLA_FLAGS that make XLA pipeline them (:data:`XLA_GPU_OVERLAP_FLAGS`); [] on
    TPUs, without ZeRO-3, or under a profile that prices them exposed."""
    if ctx.estimate.hardware.kind != "gpu" or ctx.p.zero_stage != 3 or ctx.training.framework.zero3_gather_buffers < 2:
        return []
    return [f"run with XLA_FLAGS=\"{XLA_GPU_OVERLAP_FLAGS}\": the FSDP AllGathers are priced overlapped with the "
            "layer before (XLA's pipelined all-gather, off by default, where the reduce-scatter's is on); with XLA's "
            "defaults each layer's gather is exposed (price it with --framework maxtext+zero3_gather_buffers=1)"]


def _degree(cfg: dict, axis: str) -> int:
    ici, dcn = cfg.get(f"ici_{axis}_parallelism", 1), cfg.get(f"dcn_{axis}_parallelism", 1)
    for key, v in ((f"ici_{axis}_parallelism", ici), (f"dcn_{axis}_parallelism", dcn)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"MaxText {key}={v!r}: legal: a whole number >= 1 (-1 is resolved by import with "
                              "--devices, one auto axis per level)", field=key, value=v)
    return ici * dcn


#: base.yml's auto axes, for override files that set no ici_* / dcn_* degree of their own
BASE_AUTO = {"ici_fsdp_parallelism": -1, "dcn_data_parallelism": -1}


def resolve_auto_axes(cfg: dict, devices: int | None, notes: list[str], slices: int | None = None) -> dict:
    """``cfg`` with its auto (-1) degrees resolved as MaxText does (``max_utils.fill_unspecified_mesh_axes``: the
    one -1 of a level takes the devices the others leave): the dcn -1 takes the launcher's ``slices`` over the other
    dcn degrees (1 without them: the run read as one slice), and the ici -1 takes ``devices`` over every other
    degree. With ``devices``, the keys a file leaves out have base.yml's values: ``ici_fsdp_parallelism: -1`` and
    ``dcn_data_parallelism: -1`` (without it, a left-out axis is 1).

    Raises:
        ConfigError: an auto axis without ``devices``, two auto axes in one level, degrees that do not divide
            ``devices``, or dcn degrees whose product is not ``slices`` (MaxText asserts it).
    """
    cfg = dict(cfg)
    unset = {k: v for k, v in BASE_AUTO.items() if k not in cfg}
    if unset and devices is not None:  # base.yml's auto axes apply to what the file leaves out
        cfg.update(unset)
        notes.append(f"{' and '.join(unset)} not in the file: base.yml's -1 (auto) applies")
    elif unset:
        notes.append(f"{' and '.join(unset)} not in the file and no --devices: read as 1 (one device for each "
                     "degree the file gives), where MaxText's base.yml -1 would spread the run over every device; "
                     "give --devices N to read it as MaxText does")
    for level in ("dcn", "ici"):  # the dcn degrees first: the ici -1 takes what they leave
        auto = [k for k, v in cfg.items() if str(k).startswith(level + "_") and str(k).endswith("_parallelism")
                and v == -1]
        if len(auto) > 1:
            raise ConfigError(f"MaxText sets {len(auto)} {level} axes to -1 ({', '.join(auto)}); legal: one per level",
                              field=auto[1], value=-1)
        if not auto:
            continue
        if level == "dcn":
            cfg[auto[0]] = _resolve_dcn(cfg, auto[0], slices)
            continue
        if devices is None:
            raise ConfigError(f"MaxText {auto[0]} -1 (auto) needs --devices to be resolved", field="devices", value=None)
        rest = 1
        for k, v in cfg.items():
            if str(k).endswith("_parallelism") and str(k).startswith(("ici_", "dcn_")) and k != auto[0] and \
                    isinstance(v, int) and v > 0:
                rest *= v
        if devices % rest:
            raise ConfigError(f"MaxText's other degrees multiply to {rest}, which does not divide --devices {devices}",
                              field="devices", value=devices)
        cfg[auto[0]] = devices // rest
        dcn = _degree_product(cfg, "dcn_")
        notes.append(f"{auto[0]} -1 resolved to {devices // rest} over --devices {devices}, "
                     + (f"{dcn} slices (the dcn_* degrees)" if dcn > 1 else "one slice" if slices else
                        "the run read as one slice (give the dcn_* degrees of a multi-slice run, or the launcher's "
                        "--num-slices)"))
    if slices is not None and _degree_product(cfg, "dcn_") != slices:
        raise ConfigError(f"MaxText's dcn_* degrees multiply to {_degree_product(cfg, 'dcn_')}, but the launcher runs "
                          f"--num-slices {slices} (MaxText asserts they agree); legal: dcn degrees whose product is "
                          f"{slices}, or one dcn axis at -1", field="dcn_data_parallelism", value=slices)
    return cfg


def _degree_product(cfg: dict, prefix: str) -> int:
    """The product of ``cfg``'s positive ``<prefix>*_parallelism`` degrees."""
    return math.prod(v for k, v in cfg.items() if str(k).startswith(prefix) and str(k).endswith("_parallelism")
                     and isinstance(v, int) and not isinstance(v, bool) and v > 0)


def _resolve_dcn(cfg: dict, auto: str, slices: int | None) -> int:
    """The degree of the dcn axis ``auto`` set to -1: the launcher's slices over the other dcn degrees, 1 without them.

    Raises:
        ConfigError: other dcn degrees that do not divide ``slices``.
    """
    if slices is None:
        return 1
    rest = _degree_product({k: v for k, v in cfg.items() if k != auto}, "dcn_")
    if slices % rest:
        raise ConfigError(f"MaxText's other dcn degrees multiply to {rest}, which does not divide the launcher's "
                          f"--num-slices {slices}; legal: dcn degrees dividing {slices}", field=auto, value=-1)
    return slices // rest


def slice_devices(device_type: str, topology: str | None = None) -> int | None:
    """JAX devices in one TPU slice named as xpk / gcluster name it (``--device-type`` / ``--tpu-type`` /
    ``--compute-type``, with ``--topology``), or None for a name not read. Cloud TPU docs ("TPU versions",
    "TPU7x (Ironwood)"): a v4 / v5p ``-N`` name counts TensorCores, two per chip, and JAX sees each chip as one device
    (megacore): v5p-128 is 64 devices; v5e (v5litepod) and v6e ``-N`` names count chips, one device each; TPU7x chips
    hold two TensorCore chiplets that JAX sees as two devices, and its ``-N`` name counts TensorCores: tpu7x-128 is
    128 devices. A topology (``v5p-4x4x4``, ``tpu7x-4x4x4``, ``v6e-4x4``, or ``--topology 16x16`` beside a machine
    type such as ct6e-standard-4t) counts chips: 64, 128, 16, 256 devices."""
    name = device_type.lower().removeprefix("tpu-")
    family = next((f for f, pattern in (("tpu7x", r"tpu7x|ironwood"), ("v4", r"v4|ct4p"), ("v5p", r"v5p|ct5p"),
                                        ("v5e", r"v5e|v5litepod|ct5lp"), ("v6e", r"v6e|ct6e"))
                   if re.match(pattern, name)), None)
    if family is None:
        return None
    per_chip = 2 if family == "tpu7x" else 1
    dims = re.fullmatch(r"[a-z0-9]+-(\d+)x(\d+)(?:x(\d+))?", name) or re.fullmatch(r"(\d+)x(\d+)(?:x(\d+))?",
                                                                                      topology or "")
    if dims:
        return per_chip * math.prod(int(d) for d in dims.groups() if d) or None  # a 0 dimension is no slice
    count = re.fullmatch(r"[a-z0-9]+-(\d+)", name)
    if count is None or int(count.group(1)) == 0:
        return None
    n = int(count.group(1))
    if family in ("v4", "v5p"):
        return n // 2 if n % 2 == 0 else None  # TensorCores, two per chip
    return n


def launcher_topology(text: str) -> tuple[int | None, int | None, str]:
    """(slices, JAX devices per slice, the words read) of the xpk / gcluster command that launches a MaxText script
    (``--num-slices``, ``--device-type`` / ``--tpu-type`` / ``--compute-type``, ``--topology``; the script's own
    variables substituted, :func:`~shardplan.export.base.expand_variables`); None for what it does not say."""
    got: dict[str, str] = {}
    for line in run_lines(text):  # the workload's own statement, not an echo or an `xpk cluster create`
        words = shell_words(line)
        for i, w in enumerate(words):
            m = re.fullmatch(r"--(num-slices|device-type|tpu-type|compute-type|topology)(?:=(.*))?", w)
            if m and (m.group(2) is not None or i + 1 < len(words)):
                got[m.group(1)] = m.group(2) if m.group(2) is not None else words[i + 1]
    # xpk's get_system_characteristics: args.tpu_type if given, else args.device_type
    kind = next((got[k] for k in ("tpu-type", "device-type", "compute-type") if k in got), None)
    per_slice = slice_devices(kind, got.get("topology")) if kind else None
    # xpk's --num-slices defaults to 1
    slices = int(got["num-slices"]) if got.get("num-slices", "").isdigit() else 1 if per_slice else None
    said = " ".join(f"--{k} {v}" for k, v in got.items())
    return (slices if slices else None), per_slice, said


#: MaxText keys (besides ici_* / dcn_*) one of which a MaxText config has (MaxText configs/base.yml)
_MAXTEXT_KEYS = ("per_device_batch_size", "remat_policy", "max_target_length",
                 "num_pipeline_microbatches", "shard_optimizer_over_data", "model_name", "base_config",
                 "model_fsdp_ag_once")


#: a word that runs MaxText's training (``python3 -m MaxText.train``, ``MaxText/train.py``, ``src/MaxText/train.py``,
#: the AOT ``train_compile``), not its decode or checkpoint tools
_TRAIN_ENTRY = re.compile(r"(?:^|[/.])train(?:_compile)?(?:\.py)?$", re.I)


def run_lines(text: str) -> list[str]:
    """The lines of a launch script (backslash continuations joined, the script's variables substituted,
    :func:`~shardplan.export.base.expand_variables`; heredoc bodies blanked) that run MaxText's training: a word
    :data:`_TRAIN_ENTRY` before the base ``.yml``, not printed or tested (:data:`~shardplan.export.base.NOT_A_RUN`:
    ``echo``, ``cat``, ...). Where no line does, every line that is not such a statement (a script whose entry
    point has another name). A breaker's heredoc usage text, ``echo`` example and later ``MaxText.decode`` line set
    the layout before (dp 64 read as 256)."""
    lines = [ln for ln in expand_variables(re.sub(r"\\\r?\n", " ", without_heredocs(text))).splitlines()
             if not NOT_A_RUN.match(ln)]

    def trains(line: str) -> bool:
        words = shell_words(line)
        for w in words:  # a quoted command (xpk --command="python3 -m MaxText.train base.yml ...") is split too
            if w.endswith((".yml", ".yaml")):
                return any(_TRAIN_ENTRY.search(x) for x in words[:words.index(w)])
        return False
    return [ln for ln in lines if trains(ln)] or lines


def _has_maxtext_keys(cfg: dict) -> bool:
    """Whether a mapping holds a MaxText key (an ``ici_*`` / ``dcn_*`` degree or one of :data:`_MAXTEXT_KEYS`)."""
    return any(str(k).startswith(("ici_", "dcn_")) or k in _MAXTEXT_KEYS for k in cfg)


def command_line_overrides(text: str) -> dict:
    """The ``key=value`` overrides of a MaxText launch script's command line (MaxText's ``pyconfig`` reads
    ``python3 -m MaxText.train configs/base.yml key=value ...``; e.g. ``configs/trillium/gemma2_9b.sh``): the words after
    the first one ending in ``.yml`` / ``.yaml`` on a line that runs the training (:func:`run_lines`: variables
    substituted, and quoted commands split, :func:`~shardplan.export.base.shell_words`: tpu-recipes' ``MAXTEXT_ARGS="..."``
    handed to ``xpk --command="... base.yml ${MAXTEXT_ARGS}"``), keys of lower-case letters,
    digits and underscores, each value read as YAML (``3`` an int, ``'flash'`` a string). ``{}`` where there are none."""
    out: dict = {}
    for line in run_lines(text):
        words = shell_words(line)
        base = next((i for i, w in enumerate(words) if w.endswith((".yml", ".yaml"))), None)
        for w in words[base + 1:] if base is not None else ():
            # any case and dashes too, so that a misspelt key reaches the typo check (ici-tensor_parallelism=2)
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_-]*)=(.*)", w, re.S)
            if m:
                try:
                    out[m.group(1)] = yaml.safe_load(m.group(2)) if m.group(2) else ""
                except yaml.YAMLError:
                    out[m.group(1)] = m.group(2)
    return out


#: base.yml's mesh axes (module docstring), each with an ici_ and a dcn_ degree
MESH_AXES = ("data", "stage", "fsdp", "fsdp_transpose", "sequence", "context", "context_autoregressive", "tensor",
             "tensor_transpose", "tensor_sequence", "expert", "autoregressive", "pipeline")
#: the keys that set the layout: a near miss of one is refused (MaxText's pyconfig stops on a key base.yml does not
#: have; :func:`shardplan.export.base.check_near_misses`)
LAYOUT_KEYS = (*(f"{level}_{axis}_parallelism" for level in ("ici", "dcn") for axis in MESH_AXES),
               "per_device_batch_size", "gradient_accumulation_steps", "num_pipeline_microbatches",
               "num_pipeline_repeats", "remat_policy", "max_target_length")
#: the keys the importer reads (LAYOUT_KEYS and the rest it looks at)
READ_KEYS = (*LAYOUT_KEYS, *_MAXTEXT_KEYS, "optimizer_memory_host_offload", "decoder_layer_input", "capacity_factor",
             "dtype", "weight_dtype", "attention", "base_num_decoder_layers", "num_layers_per_pipeline_stage",
             "hardware")


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of MaxText overrides (axes not given are 1; -1 resolved by :func:`resolve_auto_axes`): a YAML file,
    or a launch script's command line (:func:`command_line_overrides`).

    Raises:
        ConfigError: neither a YAML mapping nor a script with overrides, an auto (-1) axis, an axis the planner has no
            degree for.
    """
    cfg, script_notes = _overrides(text)
    if not _has_maxtext_keys(cfg):
        raise ConfigError("the file has none of MaxText's keys (ici_* / dcn_* parallelism, per_device_batch_size, "
                          "remat_policy, ...): not a MaxText config; legal: the YAML overrides `shardplan export "
                          "--to maxtext` writes, or --from the framework the file belongs to", field="import",
                          value="maxtext")
    notes: list[str] = [*script_notes, *check_near_misses(cfg, READ_KEYS, LAYOUT_KEYS, "_", "MaxText", stops=True)]
    devices, slices = _launcher_devices(text, devices, notes) if script_notes else (devices, None)
    cfg = resolve_auto_axes(cfg, devices, notes, slices)
    deg = _folded_degrees(cfg, notes)
    n = _mesh_size(deg, devices if slices is not None else None)
    tp, pp = deg["tensor"] * deg["tensor_sequence"], deg["pipeline"]
    dp = deg["data"] * deg["fsdp"] * deg["expert"]
    # the embed rule shards the weights over fsdp, context and expert alike: any of them above 1 is ZeRO-3
    zero = 3 if deg["fsdp"] * deg["expert"] * deg["context"] > 1 else (
        1 if flag(cfg, "shard_optimizer_over_data", "MaxText") else 0)
    per_device, ga = _number(cfg, "per_device_batch_size", 12.0), int(_number(cfg, "gradient_accumulation_steps", 1))
    B = int(per_device * n) * ga  # MaxText pyconfig: micro_batch_size_to_train_on = int(num_devices * pdbs)
    if per_device * n != int(per_device * n):
        notes.append(f"per_device_batch_size={per_device} x {n} devices = {per_device * n:g} is not whole: MaxText "
                     f"trains on int() of it, {int(per_device * n)} sequences per microbatch step")
    _check_per_device(per_device, n, dp, pp)
    m = int(_number(cfg, "num_pipeline_microbatches", ga))
    values = dict(dp=dp, zero_stage=zero, dp_shard=deg["fsdp"] * deg["expert"] if zero == 3 else None, tp=tp,
                  sp=tp > 1, cp=deg["context"], ep=deg["expert"], pp=pp,
                  microbatch_size=max(1, B // (m * dp)),
                  offload_activation_layers=_offloaded_layers(cfg, text, notes),
                  offload_optimizer=flag(cfg, "optimizer_memory_host_offload", "MaxText"))
    values["recompute"], values["remat_saved"] = _recompute(cfg, notes)
    if flag(cfg, "model_fsdp_ag_once", "MaxText") and zero == 3:
        values["zero3_gather"] = "per_step"  # ZeroOneTransformer: one gather per step (overrides' model_fsdp_ag_once)
    if pp > 1:
        if values["offload_activation_layers"]:
            raise ConfigError(f"MaxText decoder_layer_input: offload with ici/dcn_pipeline_parallelism={pp}: the "
                              "planner prices MaxText's layer-input offload without a pipeline (as the published "
                              "recipes run it); legal: pipeline_parallelism 1, or decoder_layer_input: remat",
                              field="decoder_layer_input", value="offload")
        repeats_given = cfg.get("num_pipeline_repeats", -1) not in (-1, None)  # else the layer count gives them
        values.update(_pipeline_values(cfg, None if repeats_given else layer_count(cfg, text, notes), pp))
        if values["schedule"] == "interleaved":
            notes.append(_circular_note(values["virtual_stages"]))
    seq_len = whole(cfg, "max_target_length", "MaxText", most=MAX_SEQ_LEN)
    _vocab_tiling(cfg, per_device * (seq_len or 0), notes)
    precision, optimizer = _precision_of(cfg, notes)
    _optimizer_notes(cfg, notes)
    _cp_strategy(cfg, values.get("cp", 1), notes)
    attention, capacity = attention_of(cfg, notes), _capacity_factor(cfg, notes)
    return Imported(parallel_from(values), devices=n, seq_len=seq_len, global_batch=B,
                    framework="maxtext", precision=precision, optimizer_dtype=optimizer,
                    moe_capacity_factor=capacity, notes=tuple(notes), attention=attention)


def _check_per_device(per_device: float, n: int, dp: int, pp: int) -> None:
    """Refuse a ``per_device_batch_size`` whose microbatch step, ``int(per_device x n)`` sequences, the ``dp`` data
    ranks cannot share (no pipeline; with one, the pipeline's microbatches split the step instead).

    Raises:
        ConfigError: naming per_device_batch_size (the key the file sets; breaker pass 57: the error blamed a
            global_batch_size the file does not have), legal: multiples of dp / n.
    """
    step = int(per_device * n)
    if pp > 1 or (step >= dp and step % dp == 0):
        return
    unit = dp / n
    legal = [round(unit * k, 6) for k in range(max(1, int(per_device / unit)), int(per_device / unit) + 3)]
    raise ConfigError(f"MaxText per_device_batch_size={per_device:g} x {n} devices = {step} sequences per step, not a "
                      f"multiple of the {dp} data-parallel ranks (data x fsdp x expert); legal per_device_batch_size: "
                      f"multiples of {unit:g} ({', '.join(f'{v:g}' for v in legal)})",
                      field="per_device_batch_size", value=per_device, legal=legal)


#: MaxText's ``attention`` values (src/MaxText/configs/base.yml: "Supported attention: autoselected, dot_product,
#: flash, cudnn_flash_te, ..."; layers/attentions.py AttentionOp): 'dot_product' is XLA's einsum attention, which
#: materialises the s x s scores (priced as --attention naive); the others are fused kernels (splash / Pallas flash on
#: TPU, cuDNN on GPU), priced as flash attention
MAXTEXT_ATTENTION = ("autoselected", "dot_product", "flash", "cudnn_flash_te", "cudnn_flash_jax", "paged")


def attention_of(cfg: dict, notes: list[str]) -> str | None:
    """The plan's attention of a MaxText ``attention`` override: 'naive' for 'dot_product' (with a note), None (flash)
    for the fused ones and where the file leaves it to base.yml's 'autoselected'.

    Raises:
        ConfigError: a value MaxText does not have, with the legal values.
    """
    value = cfg.get("attention")
    if value is None:
        return None
    if value not in MAXTEXT_ATTENTION:
        raise ConfigError(f"MaxText attention={short_repr(value)}; legal: {', '.join(MAXTEXT_ATTENTION)} (base.yml)",
                          field="attention", value=short_repr(value), legal=list(MAXTEXT_ATTENTION))
    if value == "dot_product":
        notes.append("attention=dot_product: XLA's einsum attention (the s x s scores stored), priced as --attention "
                     "naive")
        return "naive"
    return None


def _mesh_size(degrees: dict, launched: int | None) -> int:
    """The devices MaxText's mesh spans (the product of its folded ``degrees``).

    Raises:
        ConfigError: a mesh of another size than the ``launched`` devices of the script's launcher (MaxText's
            create_device_mesh refuses it; a breaker's v5p-128 script with a fixed 32-device mesh was read as 32).
    """
    n = math.prod(degrees.values())
    if launched is not None and n != launched:
        raise ConfigError(f"MaxText's ici_* x dcn_* degrees multiply to {n}, but the launcher runs {launched} JAX "
                          f"devices (MaxText refuses a mesh of another size); legal: degrees whose product is "
                          f"{launched}, or one ici axis at -1", field="devices", value=n, legal=[launched])
    return n


def _launcher_devices(text: str, devices: int | None, notes: list[str]) -> tuple[int | None, int | None]:
    """(devices, slices) of a launch script: the launcher's slices x devices per slice (:func:`launcher_topology`),
    with a note (new-user pass 53c: tpu-recipes' scripts say ``--device-type=tpu7x-4x4x4 --num-slices=1``, yet ``-1``
    axes asked for --devices), or ``devices`` (--devices) in whole slices of the launcher's size: the script priced
    at another slice count (its ``--num-slices ${NUM_SLICES}`` default), with a note.

    Raises:
        ConfigError: --devices that is not a whole number of the launcher's slices.
    """
    slices, per_slice, said = launcher_topology(text)
    if per_slice is None or slices is None:
        return devices, slices
    if devices is None:
        notes.append(f"--devices {per_slice * slices} from the launcher's {said} ({per_slice} JAX devices per slice)")
        return per_slice * slices, slices
    if devices % per_slice:
        raise ConfigError(f"--devices {devices} is not a whole number of the launcher's slices ({said}: "
                          f"{per_slice} JAX devices each); legal: leave --devices out, or a multiple of {per_slice}",
                          field="devices", value=devices, legal=[per_slice * k for k in (1, 2, 4, 8)])
    if devices != per_slice * slices:  # pricing the script at another slice count (a ${NUM_SLICES} default)
        notes.append(f"--devices {devices}: {devices // per_slice} slice(s) of {per_slice} JAX devices, where the "
                     f"launcher says {said}")
    return devices, devices // per_slice


def _overrides(text: str) -> tuple[dict, list[str]]:
    """(overrides, notes) of a MaxText file: a YAML mapping, else a launch script's command line
    (:func:`command_line_overrides`, with a note).

    Raises:
        ConfigError: neither, naming what is legal; a key given twice.
    """
    from shardplan.loaders import _UniqueKeyLoader
    yaml_error = ""
    try:  # MaxText reads its configs with OmegaConf, which refuses a key given twice (PyYAML keeps the last)
        cfg = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except yaml.constructor.ConstructorError as e:
        if "given twice" in str(e.problem):
            where = f"line {e.problem_mark.line + 1}" if e.problem_mark is not None else "the file"
            raise ConfigError(f"MaxText overrides: {e.problem} ({where}); legal: each key once (MaxText's "
                              "OmegaConf loader refuses a repeated key)", field="import", value=str(e.problem)) from None
        cfg, yaml_error = None, f" (YAML: {e.problem})"
    except yaml.YAMLError as e:
        cfg = None
        mark = getattr(e, "problem_mark", None)
        yaml_error = (f" (YAML: {getattr(e, 'problem', None) or 'unreadable'}"
                      + (f" at line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ")"))
    if isinstance(cfg, dict):
        # a one-line launch script with ": " in it (xpk --command="echo Start: now; ...") is a YAML mapping too
        line = command_line_overrides(text) if not _has_maxtext_keys(cfg) else {}
        return (line, [f"read the {len(line)} key=value overrides of the script's MaxText command line"]) if line \
            else (cfg, [])
    cfg = command_line_overrides(text)
    if not cfg:
        raise ConfigError(f"MaxText overrides are not a YAML mapping{yaml_error}, and the file has no MaxText command "
                          "line with key=value overrides after its base .yml; legal: a YAML overrides file, or a "
                          "launch script such as MaxText's configs/trillium/*.sh", field="import", value="maxtext")
    return cfg, [f"read the {len(cfg)} key=value overrides of the script's MaxText command line"]


def _capacity_factor(cfg: dict, notes: list[str]) -> float | None:
    """The MoE capacity factor of MaxText overrides: base.yml ``capacity_factor: -1.0`` ("no dropping by default"),
    None (dropless) at or below 0; above 0 the MoE layers drop tokens over that capacity (a note says so).

    Raises:
        ConfigError: not a finite number, or above 0 outside the range the planner prices (1 to 64).
    """
    capacity = cfg.get("capacity_factor", -1.0)
    if isinstance(capacity, bool) or not isinstance(capacity, (int, float)) or not math.isfinite(capacity):
        raise ConfigError(f"MaxText capacity_factor={capacity!r}: legal: a number (<= 0: dropless, base.yml's -1.0)",
                          field="capacity_factor", value=capacity)
    if capacity <= 0:
        return None
    if not MIN_CAPACITY_FACTOR <= capacity <= MAX_CAPACITY_FACTOR:  # the import's plan would be refused at estimate
        raise ConfigError(f"MaxText capacity_factor={capacity:g}: the planner prices an expert capacity of "
                          f"{MIN_CAPACITY_FACTOR:g} to {MAX_CAPACITY_FACTOR:g} even shares (below one, every step "
                          "drops tokens, which it does not price); legal: <= 0 (dropless) or "
                          f"{MIN_CAPACITY_FACTOR:g} to {MAX_CAPACITY_FACTOR:g}", field="capacity_factor",
                          value=capacity, legal=[MIN_CAPACITY_FACTOR, MAX_CAPACITY_FACTOR])
    notes.append(f"capacity_factor={capacity:g}: tokens over each expert's capacity are dropped; recorded as "
                 f"moe_capacity_factor {capacity:g}")
    return float(capacity)


def _number(cfg: dict, key: str, default: float) -> float:
    """A positive number of the MaxText config (``default`` where absent); whole where the default is.

    Raises:
        ConfigError: not a finite number above 0 (a whole one for counts), naming the key.
    """
    v = cfg.get(key, default)
    whole = isinstance(default, int)
    if (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
            or (whole and v != int(v))):
        raise ConfigError(f"MaxText {key}={v!r}: legal: a finite {'whole ' if whole else ''}number above 0", field=key,
                          value=v)
    return v


def _folded_degrees(cfg: dict, notes: list[str]) -> dict[str, int]:
    """The degree of each axis of :data:`AXES`, with MaxText's ``fsdp_transpose`` folded into ``fsdp`` (it shards
    the weights and the batch as fsdp does, on the other weight dimension: base.yml logical_axis_rules) and
    ``sequence`` into ``context`` (it shards the activations' sequence, the planner's cp; a note says so); a
    ``quantization`` setting gets a note (priced at the precision given).

    Raises:
        ConfigError: tensor_transpose, context_autoregressive or autoregressive above 1 (no planner equivalent).
    """
    for axis in ("tensor_transpose", "context_autoregressive", "autoregressive"):
        if _degree(cfg, axis) != 1:
            raise ConfigError(f"MaxText axis {axis!r} has no planner equivalent", field="import", value=axis)
    deg = {axis: _degree(cfg, axis) for axis in AXES}
    deg["fsdp"] *= _degree(cfg, "fsdp_transpose")
    if _degree(cfg, "sequence") > 1:
        deg["context"] *= _degree(cfg, "sequence")
        notes.append(f"sequence parallelism {_degree(cfg, 'sequence')} read as cp (it shards the sequence; MaxText "
                     "all-gathers the keys and values where the planner prices a ring)")
    quant = cfg.get("quantization")
    if quant and "fp8" in str(quant):  # fp8, fp8_full, nanoo_fp8, fp8_gpu, fp8_nanoo (MaxText configs/base.yml)
        notes.append(f"quantization={quant!r}: fp8 matmuls, not priced by this plan (its precision keeps the config's "
                     "weights); --precision fp8-mixed prices fp8 matmuls, with bf16 weights and an fp32 master copy")
    elif quant:
        notes.append(f"quantization={quant!r}: integer matmuls, not priced (the planner has bf16, fp8 and fp4 matmuls; "
                     "the plan prices the config's dtype)")
    return deg


def _recompute(cfg: dict, notes: list[str]) -> tuple[str, tuple[str, ...] | None]:
    """(recompute, remat_saved) of a remat_policy: 'none' (older MaxText) or 'custom' with every tensor knob
    'device' -> none; 'full' -> full; 'minimal' -> selective (the planner's MaxText selective recompute); the
    named policies of :data:`_SAVED_POLICIES` -> full keeping their tensors; 'custom' -> full keeping the tensors
    set to 'device' (the layer input is what full remat keeps anyway; an offloaded one is
    ``offload_activation_layers``); offloaded tensors hold no device memory and are priced as recomputed (a note
    says so), as are qkv_proj_offloaded and minimal_offloaded.

    Raises:
        ConfigError: an unknown policy or knob value.
    """
    policy = cfg.get("remat_policy", "full")
    if policy not in _POLICIES:
        raise ConfigError(f"MaxText remat_policy={policy!r}: legal: {', '.join(_POLICIES)}", field="remat_policy",
                          value=policy, legal=list(_POLICIES))
    for t in REMAT_TENSORS:
        if t in cfg and cfg[t] not in ("remat", "device", "offload"):
            raise ConfigError(f"MaxText {t}={cfg[t]!r}: legal: remat, device, offload", field=t, value=cfg[t],
                              legal=["remat", "device", "offload"])
    defaults = {t: "remat" for t in REMAT_TENSORS} | {"decoder_layer_input": "device"}  # base.yml defaults
    knobs = {t: cfg.get(t, defaults[t]) for t in REMAT_TENSORS}
    if policy == "none" or (policy == "custom" and all(v == "device" for v in knobs.values())):
        return "none", None
    if policy in _SAVED_POLICIES:
        return "full", _SAVED_POLICIES[policy]
    if policy in ("qkv_proj_offloaded", "minimal_offloaded"):
        notes.append(f"remat_policy={policy}: the offloaded projections are priced as recomputed (full recompute; "
                     "the planner has no partial host offload)")
    if policy != "custom":
        return ("selective" if policy == "minimal" else "full"), None
    offloaded = sorted(t for t, v in knobs.items() if v == "offload" and t != "decoder_layer_input")
    if offloaded:
        notes.append(f"remat_policy=custom offloads {', '.join(offloaded)}: priced as recomputed (the planner has no "
                     "partial host offload)")
    saved = saved_names(knobs)
    unpriced = sorted(t for t in ("mla_q", "mla_kv") if knobs[t] == "device")
    if unpriced:
        notes.append(f"remat_policy=custom keeps {', '.join(unpriced)} on the device: not priced (the planner's "
                     "remat_saved names the attention's Q/K/V, context and out_proj and the MLP's)")
    return "full", saved or None


def saved_names(knobs: dict[str, str]) -> tuple[str, ...]:
    """The ``remat_saved`` names of a custom policy's knobs set to 'device': qkv_proj where the fused qkv_proj or all
    three of query_proj / key_proj / value_proj are kept, else those kept by their own names (the tpu7x Llama 3.1 405B
    recipe keeps key_proj and value_proj: 2 x 1,024 of the 18,432 widths qkv_proj would price), then context,
    out_proj, mlpwi (any of mlpwi, mlpwi_0, mlpwi_1) and mlpwo."""
    kept = {t for t, v in knobs.items() if v == "device"}
    parts = ("query_proj", "key_proj", "value_proj")
    qkv = ("qkv_proj",) if "qkv_proj" in kept or all(t in kept for t in parts) else tuple(t for t in parts if t in kept)
    rest = tuple(k for k in ("context", "out_proj", "mlpwi", "mlpwo") if kept & set(_SAVED_TENSORS[k]))
    return qkv + rest


#: MaxText's ``dtype`` values (configs/base.yml: the activations' and matmuls' jnp dtype)
MAXTEXT_DTYPES = ("bfloat16", "float32", "float16")


def _precision_of(cfg: dict, notes: list[str]) -> tuple[str | None, str | None]:
    """(precision, optimizer_dtype) of a MaxText config's ``weight_dtype``: float32 given -> fp32-params; bfloat16 ->
    bf16-mixed with bf16 optimizer state (a note); absent -> (None, None).

    Raises:
        ConfigError: another weight_dtype, or a dtype outside :data:`MAXTEXT_DTYPES`.
    """
    dtype = cfg.get("dtype", "bfloat16")  # configs/base.yml dtype: the activations' / matmuls' dtype
    if dtype not in MAXTEXT_DTYPES:
        raise ConfigError(f"MaxText dtype={short_repr(dtype)}: legal: {', '.join(MAXTEXT_DTYPES)} (quantized matmuls "
                          "are the quantization key)", field="dtype", value=dtype, legal=list(MAXTEXT_DTYPES))
    if dtype != "bfloat16":
        notes.append(f"dtype={dtype!r}: the plan prices bfloat16 activations and matmuls (MaxText's default); this "
                     "config computes in " + ("fp32 (--precision fp32)" if dtype == "float32" else
                                                "fp16 (--precision fp16-mixed on hardware without bf16)"))
    wd = cfg.get("weight_dtype", "float32")
    if wd not in ("float32", "bfloat16"):
        raise ConfigError(f"MaxText weight_dtype={wd!r}: legal: float32 (MaxText's default, the planner's fp32-params) "
                          "or bfloat16", field="weight_dtype", value=wd, legal=["float32", "bfloat16"])
    if wd == "bfloat16":
        notes.append("weight_dtype=bfloat16: bf16 weights with the Adam moments in bf16 and no fp32 master copy "
                     "(--precision bf16-mixed --optimizer-dtype bf16)")
        return "bf16-mixed", "bf16"
    return ("fp32-params" if "weight_dtype" in cfg else None), None


#: MaxText's context_parallel_strategy values (configs/types.py: "all_gather" the default, "ring"): both move each
#: cp rank's K/V to every other one once per attention, the bytes of the planner's ring; "ulysses" (an all-to-all over
#: the heads) is not what the maxtext profile prices
MAXTEXT_CP_STRATEGIES = ("all_gather", "ring")


def _cp_strategy(cfg: dict, cp: int, notes: list[str]) -> None:
    """A note for ``context_parallel_strategy`` where cp > 1 (:data:`MAXTEXT_CP_STRATEGIES`, any case, priced as the
    ring's bytes); nothing without context parallelism, where MaxText never reads it.

    Raises:
        ConfigError: 'ulysses' or another value with cp > 1 (the maxtext profile prices the K/V exchange only).
    """
    if cp <= 1:  # no context parallelism: the strategy is never used
        return
    strategy = cfg.get("context_parallel_strategy", "all_gather")
    strategy = strategy.lower() if isinstance(strategy, str) else strategy  # MaxText compares it lower-cased
    if strategy not in MAXTEXT_CP_STRATEGIES:
        raise ConfigError(f"MaxText context_parallel_strategy={short_repr(strategy)}: the maxtext profile prices the "
                          "K/V exchange of all_gather / ring context parallelism, not an all-to-all over the heads; "
                          "legal: all_gather, ring (or price Ulysses with --framework megatron --cp-comm a2a)",
                          field="context_parallel_strategy", value=short_repr(strategy),
                          legal=list(MAXTEXT_CP_STRATEGIES))
    notes.append(f"context_parallel_strategy={strategy!r}: each cp rank's K/V reaches every other once per "
                 "attention, priced as the ring's bytes")


def _optimizer_notes(cfg: dict, notes: list[str]) -> None:
    """Notes for the optimizer keys the plan does not price as written: ``mu_dtype`` (optax keeps the first Adam
    moment in it, else in the parameters' dtype; the plan prices fp32 moments beside fp32 weights and bf16 moments
    beside bf16 weights), ``grad_dtype`` and an ``opt_type`` other than
    adamw (the plan prices AdamW's two moments)."""
    mu, grad, opt = cfg.get("mu_dtype"), cfg.get("grad_dtype"), cfg.get("opt_type", "adamw")
    if mu not in (None, "", "float32") and cfg.get("weight_dtype", "float32") == "float32":
        notes.append(f"mu_dtype={mu!r}: the first Adam moment in {mu} (optax), priced as fp32 moments: the optimizer "
                     "state is over-counted by about 2 bytes per parameter")
    elif mu == "float32" and cfg.get("weight_dtype") == "bfloat16":  # optax: the moments default to the param dtype
        notes.append("mu_dtype='float32' with weight_dtype='bfloat16': the first Adam moment in fp32 (optax), priced "
                     "as bf16 moments: the optimizer state is under-counted by about 2 bytes per parameter")
    if grad not in (None, "", "float32"):
        notes.append(f"grad_dtype={grad!r}: gradients in {grad}; the plan's gradient bytes follow its precision policy")
    if opt != "adamw":
        notes.append(f"opt_type={opt!r}: priced as AdamW's two moments per parameter (the planner has no {opt} state)")


def _vocab_tiling(cfg: dict, tokens: float, notes: list[str]) -> None:
    """Checks ``num_vocab_tiling`` (:func:`_check_vocab_tiling`, ``tokens`` per device per microbatch) and notes the
    profile file that prices it (the plan file records only the layout).

    Raises:
        ConfigError: see :func:`_check_vocab_tiling`.
    """
    tiles = int(_number(cfg, "num_vocab_tiling", 1))
    _check_vocab_tiling(tiles, tokens)
    if tiles > 1:
        notes.append(f"num_vocab_tiling={tiles}: price the chunked loss with a profile file (base: maxtext, "
                     f"loss_chunks: {tiles}) as --framework; the plan file records only the layout")


def _check_vocab_tiling(tiles: int, tokens: float) -> None:
    """``num_vocab_tiling`` must be at most the profile's ``loss_chunks`` limit (4,096) and divide a device's
    ``per_device_batch_size x max_target_length`` tokens (MaxText's config check; ``tokens`` 0 when the file
    gives no sequence length, which skips the divisor check).

    Raises:
        ConfigError: naming num_vocab_tiling and its legal values.
    """
    limit = FrameworkProfile.model_fields["loss_chunks"].metadata
    most = min(getattr(m, "le") for m in limit if getattr(m, "le", None) is not None)
    if tiles > most:
        raise ConfigError(f"MaxText num_vocab_tiling={tiles:,}: the planner's loss_chunks goes up to {most:,}; legal "
                          f"num_vocab_tiling: 1 to {most:,}", field="num_vocab_tiling", value=tiles)
    if tiles > 1 and tokens and (tokens != int(tokens) or int(tokens) % tiles):
        legal = [d for d in divisors(int(tokens)) if d <= 64] if tokens == int(tokens) else [1]
        raise ConfigError(f"MaxText num_vocab_tiling={tiles} does not divide a device's per_device_batch_size x "
                          f"max_target_length = {tokens:,g} tokens (MaxText refuses the config); legal "
                          f"num_vocab_tiling: {fmt_legal(legal)}", field="num_vocab_tiling", value=tiles, legal=legal)


#: MaxText model configs of the same shape as a shipped preset that MAXTEXT_MODEL_NAMES, which names one config per
#: preset for the exporter, does not list (configs/models/llama3.1-70b.yml and llama3.3-70b.yml: Llama 3 70B's shape,
#: as the tpu-recipes trillium Llama3.1-70B recipe names it)
MAXTEXT_NAME_ALIASES = {"llama3.1-70b": "llama-3-70b", "llama3.3-70b": "llama-3-70b"}


def layer_count(cfg: dict, text: str, notes: list[str]) -> int | None:
    """The model's layer count a config gives: the shardplan header's, ``base_num_decoder_layers``, or the ``model_name``
    of a shipped preset (:func:`model_name_layers`); None without one.

    Raises:
        ConfigError: a count that is not a whole number from 1 to 100,000.
    """
    n = read_meta(text).get("n_layers")
    if n is None:
        n = cfg.get("base_num_decoder_layers")
    if n is None:
        return model_name_layers(cfg, notes)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100_000:
        raise ConfigError(f"MaxText base_num_decoder_layers={n!r}: legal: a whole number of layers from 1 to 100,000",
                          field="base_num_decoder_layers", value=n)
    return n


def model_name_layers(cfg: dict, notes: list[str]) -> int | None:
    """The layer count of the config's ``model_name`` where it is the MaxText config of a preset the project ships
    (:data:`MAXTEXT_MODEL_NAMES` read backwards, :data:`MAXTEXT_NAME_ALIASES`; the preset's ``n_layers``, which
    MaxText's configs/models/<name>.yml sets as base_num_decoder_layers), with a note; None for another or no name."""
    from shardplan.presets.models import MODELS
    name = cfg.get("model_name")
    preset = (MAXTEXT_NAME_ALIASES.get(name) or next((k for k, v in MAXTEXT_MODEL_NAMES.items() if v == name), None)
              if isinstance(name, str) else None)
    if preset is None:
        return None
    notes.append(f"layer count {MODELS[preset].n_layers} from model_name {name} (the {preset} preset)")
    return MODELS[preset].n_layers


def _offloaded_layers(cfg: dict, text: str, notes: list[str]) -> int:
    """``offload_activation_layers`` of a config: every layer (the model's count, :func:`layer_count`) when
    ``remat_policy: custom`` offloads ``decoder_layer_input`` (full remat with the inputs on the host; the other knobs
    are read by :func:`_recompute`); 0 otherwise.

    Raises:
        ConfigError: layer-input offload without a layer count, or an invalid one (:func:`layer_count`).
    """
    if cfg.get("remat_policy") != "custom" or cfg.get("decoder_layer_input") != "offload":
        return 0
    n = layer_count(cfg, text, notes)
    if n is None:
        raise ConfigError("MaxText decoder_layer_input: offload offloads every layer's input, but the file gives no "
                          f"layer count and its model_name ({cfg.get('model_name')!r}) is not one the planner ships; "
                          "legal: add base_num_decoder_layers: N (the model's layers) to the file, or a model_name of: "
                          f"{', '.join(sorted({*MAXTEXT_MODEL_NAMES.values(), *MAXTEXT_NAME_ALIASES}))}",
                          field="base_num_decoder_layers", value=None)
    return n


def _circular_note(v: int) -> str:
    """The import's note on a circular pipeline of ``v`` repeats: the plan records --framework maxtext, whose profile
    prices GPipe order only, so it says what estimates it (breaker 58: the note named "the default profile", which
    the plan does not use, and every estimate of the plan failed)."""
    return (f"num_pipeline_repeats={v}: MaxText's circular pipeline, read as the interleaved schedule with {v} virtual "
            f"stages (its bubble, (pp - 1) / ({v} x microbatches)); the maxtext profile the plan records prices GPipe "
            f"order only, so estimate it with --schedule gpipe --virtual-stages 1 (one repeat: a bubble {v}x this "
            "config's, an upper bound) or with a profile that prices interleaved ZeRO-3 pipelines (--framework "
            "torchtitan)")


def _pipeline_values(cfg: dict, n_layers: int | None, pp: int) -> dict:
    """GPipe for one repeat, interleaved with num_pipeline_repeats (or layers / (pp x per stage)) > 1."""
    per = whole(cfg, "num_layers_per_pipeline_stage", "MaxText", 1)
    repeats = cfg.get("num_pipeline_repeats", -1)
    if repeats in (-1, None):
        if not n_layers:
            raise ConfigError("num_pipeline_repeats -1 needs the model's layer count to read the repeats (a "
                              "'shardplan-meta' comment line, base_num_decoder_layers, a model_name the planner "
                              "ships, or num_pipeline_repeats)", field="import", value=None)
        repeats = n_layers // (pp * per)
    else:
        repeats = whole(cfg, "num_pipeline_repeats", "MaxText", -1, most=2**16)
    return {"schedule": "interleaved", "virtual_stages": repeats} if repeats > 1 else {"schedule": "gpipe"}


EXPORTER = Exporter(name="maxtext", title="MaxText", source=SOURCE, suffix=".yml",
                    expresses=("offload_optimizer", "offload_activation_layers", "remat_saved", "zero3_gather"),
                    write=write, read=read,
                    precisions=("bf16-mixed", "fp32-params"), optimizer_dtypes=("fp32", "bf16"),
                    seq_key="max_target_length")
