"""nanotron YAML config (``parallelism``, ``tokens`` and ``optimizer`` zero_stage / accumulate_grad_in_fp32 blocks).

Sources read (huggingface/nanotron):

* ``src/nanotron/config/parallelism_config.py`` (commit 19f88fb): ``ParallelismArgs`` -- dp, pp, tp,
  pp_engine, tp_mode, tp_linear_async_communication, recompute_layer, moe_layer_recompute,
  tp_recompute_allgather, expert_parallel_size, context_parallel_size; ``tp_mode`` is parsed as
  ``TensorParallelLinearMode[value.upper()]`` (ALL_REDUCE | REDUCE_SCATTER, the latter "activate[s]
  sequence parallelism"); the defaults are afab, ALL_REDUCE and no async communication.
* ``src/nanotron/config/utils_config.py`` (commit 0784065): ``cast_str_to_pipeline_engine`` takes
  "afab" (AllForwardAllBackwardPipelineEngine) or "1f1b" (OneForwardOneBackwardPipelineEngine).
* ``src/nanotron/config/models_config.py``: ``LlamaConfig`` (Hugging Face key names: hidden_size, intermediate_size,
  num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size), the ``model.model_config`` block the
  importer records as the model's shape (:func:`model_shape`).
* ``src/nanotron/config/config.py`` (commit 00708b8): ``TokensArgs`` (sequence_length, train_steps,
  micro_batch_size, batch_accumulation_per_replica, ...), ``OptimizerArgs.zero_stage: int``,
  ``OptimizerArgs.accumulate_grad_in_fp32: bool`` (no default; written as the plan's gradient buffer, fp32 under
  the nanotron profile, so a merged config cannot keep another),
  ``Config.global_batch_size = micro_batch_size * batch_accumulation_per_replica * parallelism.dp``;
  configs are read with dacite ``strict=True``, so these blocks are merged into a full config
  (general, model, optimizer's other fields, data_stages... stay the user's).

Refused (naming who can): ZeRO-2/3, the interleaved and ZB-H1 schedules (pp_engine is 1f1b or afab),
selective recomputation (``recompute_layer`` recomputes whole layers), a pipeline split other than
nanotron's own (``models/base.py`` build_model places the layers by cumulative cost:
:func:`shardplan.parallel.cost_greedy_split`, what ``--framework nanotron`` plans with), and
cp / ep: nanotron counts expert_parallel_size and context_parallel_size as world dimensions of their
own, outside dp, which this exporter does not map to the planner's "ep carved from dp x cp"
convention. ``tp_linear_async_communication`` follows tp_overlap and is written only with
REDUCE_SCATTER (that requirement was not found in the files read). ZeRO: ``zero_stage`` is a plain int in
config.py, and ``src/nanotron/helpers.py`` (optimizer setup, read by code search, commit not pinned)
wraps the optimizer in ``ZeroDistributedOptimizer`` (optimizer-state sharding over dp) for any
``zero_stage > 0`` -- so the importer reads every stage above 0 as ZeRO-1, what nanotron runs.
"""

from __future__ import annotations

import yaml

from shardplan.errors import ConfigError, short_repr
from shardplan.export.base import (ExportContext, Exporter, Imported, check_unexpressed, comment_block, flag,
                                   model_support_line, parallel_from, refuse_first, section, whole)
from shardplan.limits import MAX_SEQ_LEN
from shardplan.parallel import cost_greedy_split

SOURCE = "nanotron src/nanotron/config/parallelism_config.py (commit 19f88fb), utils_config.py, config.py"
_ENGINES = {"1f1b": "1f1b", "gpipe": "afab"}
_ALT = {"offload_optimizer": "DeepSpeed"}


def _check(ctx: ExportContext) -> None:
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    own = cost_greedy_split(ctx.estimate.model, p.pp)  # the split nanotron will run (build_model)
    checks = [
        (p.zero_stage > 1, f"ZeRO-{p.zero_stage} (nanotron has ZeRO-1 only)",
         "Megatron-LM (Megatron-FSDP), torchtitan or DeepSpeed"),
        (p.pp > 1 and p.schedule not in _ENGINES, f"schedule={p.schedule!r} (pp_engine is 1f1b or afab)",
         "Megatron-LM or torchtitan" if p.schedule == "interleaved" else "no exporter"),
        (p.recompute == "selective", "selective recomputation (recompute_layer recomputes whole layers)",
         "Megatron-LM or torchtitan"),
        (p.pp > 1 and tuple(ctx.layout.stage_layers) != own,
         f"the pipeline split {list(ctx.layout.stage_layers)}: nanotron places layers itself (cost-greedy, "
         f"{list(own)} for pp={p.pp}; plan with --framework nanotron)",
         "Megatron-LM or torchtitan"),
        (p.cp > 1, f"cp={p.cp} (context_parallel_size is a world dimension outside dp in nanotron)",
         "Megatron-LM or torchtitan"),
        (p.ep > 1, f"ep={p.ep} (expert_parallel_size is a world dimension outside dp in nanotron)",
         "Megatron-LM or torchtitan"),
        (p.tp_overlap and not p.sp, "tp_overlap without sp (tp_linear_async_communication needs REDUCE_SCATTER)",
         "Megatron-LM"),
    ]
    refuse_first("nanotron", checks)


def nanotron_config(ctx: ExportContext) -> dict:
    """The nanotron blocks of a plan: parallelism, tokens, optimizer (zero_stage, accumulate_grad_in_fp32).

    Raises:
        ConfigError: see the module docstring.
    """
    _check(ctx)
    p, tr = ctx.p, ctx.training
    par = {"dp": p.dp, "tp": p.tp, "pp": p.pp, "pp_engine": _ENGINES.get(p.schedule, "1f1b"),
           "tp_mode": "REDUCE_SCATTER" if p.sp else "ALL_REDUCE", "tp_linear_async_communication": p.tp_overlap,
           "recompute_layer": p.recompute == "full", "expert_parallel_size": 1, "context_parallel_size": 1}
    return {"parallelism": par,
            "tokens": {"sequence_length": tr.seq_len, "micro_batch_size": p.microbatch_size,
                       "batch_accumulation_per_replica": ctx.layout.microbatches},
            "optimizer": {"zero_stage": p.zero_stage,
                          # the gradient buffer the plan is priced with: fp32 (the nanotron profile's, as its H100
                          # grid ran) or the precision's bf16; OptimizerArgs.accumulate_grad_in_fp32 has no default
                          "accumulate_grad_in_fp32": tr.precision.grad_bytes >= 4}}


def write(ctx: ExportContext) -> str:
    """The YAML text (merge these blocks into a nanotron config: general, model, data... stay yours).

    Raises:
        ConfigError: see the module docstring.
    """
    extra = ["note: these blocks merge into a full nanotron config (general, model, tokenizer, the optimizer's "
             "learning_rate_scheduler and optimizer_factory, tokens.train_steps, data_stages...): nanotron reads "
             "configs with dacite strict, so run_train.py on this file alone fails"]
    support = model_support_line(ctx.estimate.model, "nanotron", NANOTRON_FEATURES, NANOTRON_MODELS)
    return comment_block(ctx, EXPORTER, extra + ([support] if support else [])) + yaml.safe_dump(
        nanotron_config(ctx), sort_keys=False)


#: what nanotron's shipped models implement beyond a Llama block (base.model_features names): Qwen2's qkv bias and
#: its MoE variant
NANOTRON_FEATURES = ("MoE", "qkv bias")
NANOTRON_MODELS = "nanotron src/nanotron/models: llama, qwen @19f88fb"


def _whole(block: dict, key: str, default: int | None, least: int = 1) -> int:
    """A whole-number field of a nanotron config block (``default`` None: required).

    Raises:
        ConfigError: missing (where required), or not a whole number >= ``least``, naming the key.
    """
    if key not in block and default is None:
        raise ConfigError(f"the nanotron config lacks parallelism.{key}", field=key, value=None)
    v = block.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < least:
        raise ConfigError(f"nanotron {key}={v!r}: legal: a whole number >= {least}", field=key, value=v)
    return v


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of a nanotron config (``parallelism`` block required; ``tokens`` and ``optimizer``
    read when present).

    Raises:
        ConfigError: not a YAML mapping, no parallelism block, ep or cp > 1.
    """
    cfg = yaml.safe_load(text)
    par = section(cfg, "parallelism", "nanotron", required=True)
    tokens, opt = section(cfg, "tokens", "nanotron"), section(cfg, "optimizer", "nanotron")
    for key in ("expert_parallel_size", "context_parallel_size"):
        if _whole(par, key, 1) > 1:
            raise ConfigError(f"nanotron {key}={par[key]} has no planner mapping here (its expert and context "
                              f"parallelism are not read); legal: 1, or describe the layout with shardplan's flags",
                              field=key, value=par[key], legal=[1])
    dp, tp, pp = (_whole(par, k, None) for k in ("dp", "tp", "pp"))
    stage = _whole(opt, "zero_stage", 0, least=0)
    zero = 1 if stage > 0 else 0  # helpers.py: any stage > 0 is ZeroDistributedOptimizer
    notes = ((f"optimizer.zero_stage={stage}: nanotron runs its ZeRO-1 optimizer for every stage above 0 "
              "(ZeroDistributedOptimizer); read as zero_stage=1",) if stage > 1 else ())
    if not flag(opt, "accumulate_grad_in_fp32", "nanotron", default=True, where="optimizer."):
        notes += ("optimizer.accumulate_grad_in_fp32=false: the nanotron profile prices the fp32 gradient buffer its "
                  "measured grid ran (4 B per parameter); a bf16 buffer holds 2 B less per parameter, not priced",)
    mode = str(par.get("tp_mode", "ALL_REDUCE")).upper()
    if mode not in ("ALL_REDUCE", "REDUCE_SCATTER"):  # TensorParallelLinearMode[value.upper()]
        raise ConfigError(f"nanotron tp_mode={par.get('tp_mode')!r}; legal: ALL_REDUCE, REDUCE_SCATTER", field="tp_mode",
                          value=par.get("tp_mode"), legal=["ALL_REDUCE", "REDUCE_SCATTER"])
    # ParallelismArgs: plain bools (a string "false" is not read by its truthiness)
    recompute, overlap = (flag(par, k, "nanotron", where="parallelism.") for k in ("recompute_layer",
                                                                                    "tp_linear_async_communication"))
    if overlap and mode != "REDUCE_SCATTER" and tp > 1:
        raise ConfigError("nanotron tp_linear_async_communication needs tp_mode REDUCE_SCATTER (its async linear "
                          "overlaps the sequence-parallel gathers); legal: tp_mode REDUCE_SCATTER, or "
                          "tp_linear_async_communication false", field="tp_linear_async_communication", value=True,
                          legal=[False])
    if flag(par, "moe_layer_recompute", "nanotron", where="parallelism.") and not recompute:
        notes += ("parallelism.moe_layer_recompute=true: nanotron recomputes its MoE layers in the backward; not "
                  "priced (no recompute is; recompute_layer would be full recompute)",)
    engine = str(par.get("pp_engine", "1f1b")).lower()
    if engine not in ("1f1b", "afab"):
        raise ConfigError(f"nanotron pp_engine={par.get('pp_engine')!r}; legal: 1f1b, afab", field="pp_engine",
                          value=par.get("pp_engine"), legal=["1f1b", "afab"])
    # tp_mode REDUCE_SCATTER and the async linear act only inside a tp group: with tp = 1 there is none
    values = dict(dp=dp, tp=tp, pp=pp, zero_stage=zero, sp=mode == "REDUCE_SCATTER" and tp > 1,
                  schedule="gpipe" if engine == "afab" else "1f1b",
                  tp_overlap=overlap and tp > 1, recompute="full" if recompute else "none",
                  microbatch_size=_whole(tokens, "micro_batch_size", 1))
    m = _whole(tokens, "batch_accumulation_per_replica", 1)
    seq_len = whole(tokens, "sequence_length", "nanotron", where="tokens.", most=MAX_SEQ_LEN)
    precision, more = _model_dtype(section(cfg, "model", "nanotron"))
    return Imported(parallel_from(values), devices=dp * tp * pp, seq_len=seq_len,
                    global_batch=dp * values["microbatch_size"] * m, framework="nanotron", notes=notes + more,
                    model_shape=model_shape(cfg), precision=precision)


#: nanotron ``model.dtype`` (config/models_config ModelArgs, a torch dtype name) -> the precision policy it trains in
#: (None: the profile's default, bf16 with fp32 gradient accumulation)
NANOTRON_DTYPES = {"bfloat16": None, "torch.bfloat16": None, "float32": "fp32", "torch.float32": "fp32"}


def _model_dtype(model: dict) -> tuple[str | None, tuple[str, ...]]:
    """(precision, notes) of a nanotron config's ``model.dtype`` (:data:`NANOTRON_DTYPES`): bfloat16 the profile's
    default; float32 trains in fp32 (a breaker's config was priced in bf16 without a word).

    Raises:
        ConfigError: another dtype, naming the legal ones.
    """
    dtype = model.get("dtype", "bfloat16")
    if dtype not in NANOTRON_DTYPES:
        raise ConfigError(f"nanotron model.dtype={short_repr(dtype)}; legal: bfloat16, float32", field="dtype",
                          value=short_repr(dtype), legal=["bfloat16", "float32"])
    precision = NANOTRON_DTYPES[dtype]
    return precision, ((f"model.dtype={dtype}: trained in fp32 (--precision fp32)",) if precision else ())


#: nanotron's ``model.model_config`` keys (config/models_config.py LlamaConfig, Hugging Face names) -> the ModelSpec
#: field each sets: an imported config records them and ``estimate --plan`` names those that differ from --model's
MODEL_CONFIG_KEYS = {"num_hidden_layers": "n_layers", "hidden_size": "d_model", "intermediate_size": "ffn_dim",
                     "num_attention_heads": "n_heads", "num_key_value_heads": "n_kv_heads", "vocab_size": "vocab_size"}


def model_shape(cfg: dict) -> dict[str, int]:
    """The ModelSpec fields a nanotron config's ``model.model_config`` gives (:data:`MODEL_CONFIG_KEYS`; whole numbers
    only, anything else is left to --model). LlamaConfig's ``num_key_value_heads`` defaults to the attention heads
    (``__post_init__``: None -> num_attention_heads), so a config giving the heads alone records n_kv_heads = n_heads.
    E.g. the Smol Playbook's SmolLM3-style 3B block: 36 layers, hidden 2048, 16 heads, 4 KV heads. A ``moe_config``
    adds the experts (num_experts, top_k, an expert width where given, one shared expert with
    ``enable_shared_expert``)."""
    model = cfg.get("model") if isinstance(cfg.get("model"), dict) else {}
    mc = model.get("model_config") if isinstance(model.get("model_config"), dict) else {}
    shape = {field: mc[key] for key, field in MODEL_CONFIG_KEYS.items()
             if isinstance(mc.get(key), int) and not isinstance(mc.get(key), bool) and mc[key] > 0}
    if "n_heads" in shape and mc.get("num_key_value_heads") is None:
        shape["n_kv_heads"] = shape["n_heads"]
    moe = mc.get("moe_config")
    if isinstance(moe, dict):  # nanotron's Qwen2 MoE config (MoEConfig: num_experts, top_k, enable_shared_expert)
        for key, field in (("num_experts", "n_experts"), ("top_k", "top_k"), ("moe_intermediate_size", "expert_ffn_dim"),
                           ("moe_hidden_size", "expert_ffn_dim")):
            if isinstance(moe.get(key), int) and not isinstance(moe.get(key), bool) and moe[key] > 0:
                shape[field] = moe[key]
        if isinstance(moe.get("enable_shared_expert"), bool):
            shape["n_shared_experts"] = int(moe["enable_shared_expert"])
    return shape


EXPORTER = Exporter(name="nanotron", title="nanotron", source=SOURCE, suffix=".yaml", expresses=("tp_overlap",),
                    precisions=("bf16-mixed", "bf16-mixed-fp32-grads"),
                    write=write, read=read, seq_key="tokens.sequence_length")
