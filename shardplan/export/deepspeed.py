"""DeepSpeed ``ds_config.json``.

Sources read (deepspeedai/DeepSpeed):

* ``deepspeed/runtime/config.py`` (commit 029f12b): ``DeepSpeedConfig`` reads ``zero_optimization``
  (``get_zero_config``; ``mics_shard_size`` from it), ``activation_checkpointing``
  (``DeepSpeedActivationCheckpointingConfig``) and ``tensor_parallel`` (``get_tensor_parallel_config``),
  and checks ``train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps x world_size``,
  its ``world_size`` the mpu's data-parallel size when ``deepspeed.initialize`` is given an mpu, else every rank.
  ``deepspeed/__init__.py`` ``initialize`` (commit 0a1fbe1) builds that DeepSpeedConfig before the engine sets up
  AutoTP's groups (``_configure_tensor_parallel_states``), so with AutoTP and no mpu the check counts the tp ranks
  as data-parallel ones. A tp > 1 export therefore leaves ``train_batch_size`` out (DeepSpeed fills it in from the
  micro batch and accumulation, whichever world it uses); the global batch is ``_shardplan``'s, and import takes
  the device count from there or ``--devices``.
* ``deepspeed/runtime/zero/config.py`` (commit 1b88ac3): ``stage`` 0-3, ``overlap_comm``,
  ``offload_optimizer`` ("valid for ZeRO stage 1, 2, 3"), ``mics_shard_size`` (default -1 = off).
* ``deepspeed/runtime/zero/offload_config.py`` (commit 1978617): ``device`` none | cpu | nvme,
  ``pin_memory``; ``zero_optimization.offload_param`` (DeepSpeed config docs, "Parameter offloading": "valid only
  with stage 3") is ``ParallelConfig.offload_params``.
* ``deepspeed/runtime/tensor_parallel/config.py`` (commit 18e7227): ``TPTrainingConfig.autotp_size``
  (0 = AutoTP off), read from ``ds_config["tensor_parallel"]``.
* ``deepspeed/runtime/engine.py`` ``get_data_types`` / ``_do_optimizer_sanity_check`` and ``data_types.grad_accum_dtype``
  (config.py, read by code search): with bf16 and no ZeRO the gradients accumulate in fp32 unless ``grad_accum_dtype``
  says otherwise (then BF16_Optimizer, :func:`shardplan.cost.memory.bf16_optimizer`), with ZeRO in the model dtype. A
  bf16 export writes the policy's accumulation dtype at every stage (bf16-mixed: ``bf16``, DDP_BFLOAT16 at ZeRO-0 on
  engines that have it, the ZeRO optimizer with ZeRO; bf16-mixed-fp32-grads: ``fp32``, BF16_Optimizer at ZeRO-0/1 as
  the planner prices it, the ZeRO optimizer with fp32 gradients at ZeRO-2/3). fp16-mixed writes ``fp16.enabled``
  and no ``data_types``: an fp16 model accumulates in fp16 (FP16_Optimizer at ZeRO-0, the ZeRO optimizer above).
* ``activation_checkpointing`` keys (``deepspeed/runtime/activation_checkpointing/config.py``, read by
  code search): partition_activations, number_checkpoints, contiguous_memory_optimization,
  synchronize_checkpoint_boundary, profile, cpu_checkpointing.
* ``deepspeed/runtime/engine.py`` (read by code search, commit not pinned): the ZeRO-3 path returns the
  MiCS optimizer when ``mics_shard_size > 0``; AutoTP with ZeRO-3 -- the newest engine read says "AutoTP
  + ZeRO stage 3 is supported for both inference and training", older engines assert
  ``zero_optimization_stage() <= 2`` in ``_configure_tensor_parallel_states``, and
  ``docs/_tutorials/autotp-training.md`` (commit 0e2a0c2) still lists "ZeRO Stage 3 not supported". A
  tp > 1 ZeRO-3 export therefore needs a DeepSpeed whose engine has dropped that assertion.

* DeepSpeed-Ulysses for Hugging Face models (``deepspeed/runtime/sequence_parallel/ulysses_sp.py``
  ``UlyssesSPAttentionHF``, the ALST integration; ``tests/unit/ulysses_alst/test_ulysses_sp_hf.py`` sets it in the
  config dict): the top-level key ``sequence_parallel_size`` is cp with ``cp_comm`` 'a2a'. As with AutoTP, an
  export with it leaves ``train_batch_size`` out (DeepSpeed counts the data-parallel world without the
  sequence-parallel ranks when it fills it in).

What ds_config cannot say (refused, naming who can): pipeline stages (``PipelineModule(num_stages=...)``
is model code, and the pipeline engine only runs ZeRO <= 1), Megatron sequence parallelism, ring
context parallelism (DeepSpeed's sequence parallelism is Ulysses' AllToAll, ``cp_comm`` 'a2a'), Ulysses
beside AutoTP (the Hugging Face Ulysses integration is documented without it), expert parallelism
(``deepspeed.moe.layer.MoE(ep_size=...)`` in model code), selective recomputation (the
``deepspeed.checkpointing`` API recomputes whole layers), HSDP with ZeRO-1/2 (MiCS,
``mics_shard_size``, is the ZeRO-3 optimizer), fp8 (Transformer Engine in model code).

JSON has no comments: the planner's numbers are under the top-level key ``_shardplan``, which
DeepSpeed ignores (it reads the keys it knows).
"""

from __future__ import annotations

import json
import re

from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.export.base import (ExportContext, Exporter, Imported, check_near_misses, check_unexpressed, flag,
                                   header_dict, parallel_from, refuse_first, section)

SOURCE = "DeepSpeed deepspeed/runtime/config.py (commit 029f12b), zero/config.py, tensor_parallel/config.py"
_TORCH = "Megatron-LM or torchtitan"
_ALT = {"tp_overlap": "Megatron-LM (--tp-comm-overlap)"}


def _check(ctx: ExportContext) -> None:
    """Refuse what ds_config cannot express."""
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    checks = [
        (p.pp > 1, f"pp={p.pp}: pipeline stages are model code (PipelineModule), not ds_config", _TORCH),
        (p.cp > 1 and p.cp_comm != "a2a", f"cp={p.cp} ring context parallelism (DeepSpeed's sequence parallelism "
         "is Ulysses' AllToAll over heads: cp_comm='a2a')", _TORCH),
        (p.cp > 1 and p.tp > 1, f"cp={p.cp} (Ulysses, sequence_parallel_size) with tp={p.tp} (AutoTP): the Hugging "
         "Face Ulysses integration is documented without AutoTP", "Megatron-LM (--cp-comm-type a2a)"),
        (p.sp, "Megatron sequence parallelism (sp) with AutoTP", _TORCH + " (--sequence-parallel)"),
        (p.ep > 1 and p.zero_stage == 3, f"ep={p.ep} with ZeRO-3 (DeepSpeed AutoEP, the ds_config's expert_parallel "
         "section, runs with ZeRO stages 0-2)", _TORCH + " or MaxText"),
        (p.ep > 1 and (p.tp > 1 or p.cp > 1), f"ep={p.ep} beside AutoTP / Ulysses (tp={p.tp}, cp={p.cp}): AutoEP carves "
         "its expert groups from the data-parallel ranks alone", _TORCH),
        (p.ep > 1 and p.moe_dispatcher != "alltoall", f"moe_dispatcher={p.moe_dispatcher!r} (AutoEP dispatches tokens "
         "by all-to-all)", "Megatron-LM (--moe-token-dispatcher-type)"),
        (p.recompute == "selective", "selective recomputation (deepspeed.checkpointing recomputes whole layers)",
         _TORCH),
        (p.offload_optimizer and p.zero_stage == 0, "offload_optimizer with zero_stage=0 (zero/config.py: its "
         "offload_optimizer is \"valid for ZeRO stage 1, 2, 3\")", "DeepSpeed with --zero-stage 1, 2 or 3"),
        (p.zero_stage in (1, 2) and p.dp_shard != p.dp, f"HSDP (dp_shard={p.dp_shard} < dp={p.dp}) with "
         f"ZeRO-{p.zero_stage} (MiCS is ZeRO-3 only)", "Megatron-LM (--num-distributed-optimizer-instances)"),
    ]
    refuse_first("DeepSpeed", checks)


def ds_config(ctx: ExportContext) -> dict:
    """The ds_config mapping of a plan (without ``_shardplan``).

    Raises:
        ConfigError: see the module docstring.
    """
    _check(ctx)
    p, tr = ctx.p, ctx.training
    zero: dict = {"stage": p.zero_stage, "overlap_comm": p.overlap_grad_reduce}
    if p.zero_stage == 3 and p.dp_shard != p.dp:
        zero["mics_shard_size"] = p.dp_shard
    # ZeRO-Infinity's NVMe offload needs the path of the local NVMe volume (nvme_path): a placeholder to edit
    device = {"device": "nvme", "nvme_path": NVME_PATH} if p.nvme_offload else {"device": "cpu"}
    if p.offload_optimizer:
        zero["offload_optimizer"] = {**device, "pin_memory": True}
    if p.offload_params:
        zero["offload_param"] = {**device, "pin_memory": True}
    cfg: dict = {"train_batch_size": tr.global_batch_size, "train_micro_batch_size_per_gpu": p.microbatch_size,
                 "gradient_accumulation_steps": ctx.layout.microbatches, "zero_optimization": zero,
                 "bf16": {"enabled": tr.precision.name.startswith("bf16")}}
    if tr.precision.name == "fp16-mixed":  # FP16_Optimizer / the ZeRO optimizer, dynamic loss scaling by default
        cfg["fp16"] = {"enabled": True}
    if tr.precision.name.startswith("bf16"):
        # DeepSpeed accumulates bf16 gradients in fp32 without ZeRO and in bf16 with it unless told (engine.py
        # get_data_types), and fp32 accumulation at ZeRO-0/1 runs BF16_Optimizer: say which
        wide = tr.precision.grad_bytes > tr.precision.param_bytes
        cfg["data_types"] = {"grad_accum_dtype": "fp32" if wide else "bf16"}
    if p.tp > 1:  # DeepSpeed's world for the batch check depends on the launch (module docstring): it fills it in
        del cfg["train_batch_size"]
        cfg["tensor_parallel"] = {"autotp_size": p.tp}
    if p.cp > 1:  # Ulysses (the checks above: cp_comm 'a2a'); DeepSpeed fills the batch in from its dp world
        cfg.pop("train_batch_size", None)
        cfg["sequence_parallel_size"] = p.cp
    if p.ep > 1:  # DeepSpeed AutoEP (deepspeed/module_inject/auto_ep_config.py AutoEPConfig: enabled, autoep_size):
        # the Hugging Face model's MoE blocks replaced by grouped-GEMM experts over ep data-parallel ranks
        cfg["expert_parallel"] = {"enabled": True, "autoep_size": p.ep}
    if p.recompute == "full":
        cfg["activation_checkpointing"] = {"partition_activations": False, "cpu_checkpointing": False,
                                           "contiguous_memory_optimization": False,
                                           "number_checkpoints": ctx.estimate.model.n_layers,
                                           "synchronize_checkpoint_boundary": False, "profile": False}
    return cfg


#: what a ds_config of a full-recompute plan says about it (in ``_shardplan`` and on stderr): its
#: ``activation_checkpointing`` section configures ``deepspeed.checkpointing``, which Megatron-DeepSpeed-style model code
#: calls; a Hugging Face model recomputes with the Trainer's ``--gradient_checkpointing`` (HF docs "DeepSpeed": "set
#: model.gradient_checkpointing_enable() or --gradient_checkpointing in the Trainer"), as the Accelerate export writes it
HF_RECOMPUTE_NOTE = ("recompute=full: with a Hugging Face model pass the Trainer's --gradient_checkpointing "
                     "(model.gradient_checkpointing_enable()); the activation_checkpointing section configures "
                     "deepspeed.checkpointing, which only Megatron-DeepSpeed-style model code calls")


def trainer_arguments(ctx: ExportContext) -> dict:
    """The Hugging Face TrainingArguments a ds_config written with numbers needs beside it: transformers'
    ``HfTrainerDeepSpeedConfig`` (integrations/deepspeed.py ``trainer_config_process`` / ``fill_match``) compares every
    value that is not "auto" (train_micro_batch_size_per_gpu with per_device_train_batch_size,
    gradient_accumulation_steps, the bf16 / fp16 switches) with the Trainer's arguments and raises "DeepSpeed config
    mismatch" on a difference, and the Trainer's defaults (8 per device, no accumulation, fp32) are not the plan's."""
    tr, p = ctx.training, ctx.p
    args = {"per_device_train_batch_size": p.microbatch_size, "gradient_accumulation_steps": ctx.layout.microbatches,
            "bf16": tr.precision.name.startswith("bf16"), "fp16": tr.precision.name == "fp16-mixed"}
    if p.recompute == "full":  # HF_RECOMPUTE_NOTE
        args["gradient_checkpointing"] = True
    return args


def trainer_note(args: dict, profile: str = "hf-deepspeed") -> str:
    """The Trainer flags of :func:`trainer_arguments`, as a sentence for the header and stderr; under another profile
    than hf-deepspeed (``deepspeed``: Megatron-DeepSpeed-style model code) it says that the numbers are not a Hugging
    Face model's (new-user pass 55: a layout priced at 36.6 of 40 GiB came with the Trainer flags, and a Hugging Face
    model needs 47.4 GiB there)."""
    flags = " ".join(f"--{k}" if v is True else f"--{k} {v}" for k, v in args.items() if v is not False)
    which = ("" if profile == "hf-deepspeed" else
             f" (the numbers above are the {profile} profile's, Megatron-DeepSpeed-style model code; a Hugging Face "
             "model's memory and speed: --framework hf-deepspeed)")
    return (f"under the Hugging Face Trainer pass {flags}{which} (the Trainer raises 'DeepSpeed config mismatch' where "
            "its arguments differ from this file's numbers)")


def write(ctx: ExportContext) -> str:
    """``ds_config.json`` text: ``_shardplan`` (header) first, then the DeepSpeed keys; ``_shardplan.trainer`` holds the
    Hugging Face Trainer arguments the file's numbers need (:func:`trainer_arguments`).

    Raises:
        ConfigError: see the module docstring.
    """
    cfg = ds_config(ctx)
    head = header_dict(ctx, EXPORTER)
    head["trainer"] = trainer_arguments(ctx)
    head["lines"] = [*head["lines"], trainer_note(head["trainer"], ctx.training.framework.name)]
    if ctx.p.recompute == "full":  # HF_RECOMPUTE_NOTE
        head["lines"] = [*head["lines"], HF_RECOMPUTE_NOTE]
    return json.dumps({"_shardplan": head, **cfg}, indent=2) + "\n"


def _whole(cfg: dict, key: str, least: int = 1, most: int = 2**30) -> int | None:
    """A whole-number key of a ds_config (None where absent).

    Raises:
        ConfigError: ``"auto"`` (filled in by the Hugging Face Trainer at launch, so not in the file), or not a
            whole number from ``least`` to ``most``, naming the key.
    """
    v = cfg.get(key)
    if v is None:
        return None
    if v == "auto":
        raise ConfigError(f"DeepSpeed {key}='auto': the Hugging Face Trainer fills it in at launch, so the file does "
                          f"not say it; legal: write the number the run uses", field=key, value=v)
    if not isinstance(v, int) or isinstance(v, bool) or not least <= v <= most:
        raise ConfigError(f"DeepSpeed {key}={v!r}: legal: a whole number from {least} to {most:,}", field=key, value=v)
    return v


#: what the Hugging Face Trainer / Accelerate write for a value they fill in at launch (transformers
#: integrations/deepspeed.py ``HfTrainerDeepSpeedConfig.trainer_config_process``: train_micro_batch_size_per_gpu from
#: per_device_train_batch_size, gradient_accumulation_steps, train_batch_size = their product x the world size,
#: fp16 / bf16 ``enabled`` from --fp16 / --bf16)
AUTO = "auto"


def _no_accumulation_for(B: int, mbs: int, dp: int, devices: int | None) -> None:
    """Refuse a data-parallel size ``dp`` (``devices`` over the config's own tp and Ulysses degrees) that the step's
    ``B`` sequences in micro batches of ``mbs`` do not spread over whole: DeepSpeed derives the accumulation steps as
    B / (mbs x dp) and stops on a remainder. The usual cause is a Megatron-DeepSpeed run (BLOOM's tr11 ds_config:
    2,048 sequences, micro batch 2, 384 GPUs), whose tensor and pipeline degrees are its launcher's flags, not keys
    of the ds_config.

    Raises:
        ConfigError: always, naming the data-parallel sizes the batch allows among the divisors of ``devices``.
    """
    legal = [d for d in divisors(devices or dp) if (B // mbs) % d == 0] if B % mbs == 0 else []
    raise ConfigError(f"train_batch_size={B} in micro batches of {mbs} is not a whole number of steps over the {dp} "
                      f"data-parallel ranks --devices {devices} leaves (DeepSpeed derives gradient_accumulation_steps "
                      "from them); a ds_config holds no tensor or pipeline degree (a Megatron-DeepSpeed run's are its "
                      "launcher's --tensor-model-parallel-size / --pipeline-model-parallel-size); legal: import the "
                      "launch script with --from megatron, or write gradient_accumulation_steps, or a data-parallel "
                      f"size among {fmt_legal(legal) if legal else 'none: the micro batch does not divide the batch'}",
                      field="train_batch_size", value=B, legal=legal)


def _batch_sizes(cfg: dict, tp: int, devices: int | None) -> tuple[int | None, int, int, int, tuple[str, ...]]:
    """(train_batch_size, micro batch, accumulation steps, data-parallel size, notes): DeepSpeed fills in one missing
    of the three from the other two and the data-parallel world (``runtime/config.py``
    ``_configure_train_batch_size``: train_batch_size = micro x accumulation x dp; accumulation defaults to 1 when only
    the micro batch is given). A Hugging Face Trainer config (:data:`AUTO` batch keys) gives the layout with the
    device count alone: dp = devices / tp, the micro batch read as 1 when 'auto' (a note names it; ``--microbatch-size``
    over the plan gives the run's) and the global batch left to ``--global-batch`` where it is not fixed.

    Raises:
        ConfigError: fewer than two given without the device count (or an 'auto' one without it), or sizes that do not
            multiply.
    """
    keys = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
    auto = [k for k in keys if cfg.get(k) == AUTO]
    B, mbs, gas = (None if k in auto else _whole(cfg, k) for k in keys)
    dp = devices // tp if devices else None
    if auto and not dp:
        raise ConfigError(f"DeepSpeed {auto[0]}='auto': the Hugging Face Trainer fills it in at launch from the "
                          "world size; legal: pass --devices (the world size) to read the layout, or write the numbers "
                          "the run uses", field=auto[0], value=AUTO)
    if gas is None and B is not None and mbs is not None and dp:
        if B % (mbs * dp):
            _no_accumulation_for(B, mbs, dp, devices)
        gas = B // (mbs * dp)  # DeepSpeed derives the accumulation steps too
    if B is None and mbs is not None and dp and "gradient_accumulation_steps" not in auto:
        B = mbs * (gas or 1) * dp
    if mbs is None and B is not None and dp and "gradient_accumulation_steps" not in auto:
        if B % ((gas or 1) * dp):
            raise ConfigError(f"train_batch_size={B} is not accumulation x dp = {(gas or 1)} x {dp} times a micro batch",
                              field="train_batch_size", value=B)
        mbs = B // ((gas or 1) * dp)
    notes = ()
    if auto:
        notes = (f"{', '.join(auto)} 'auto' (the Hugging Face Trainer's, set at launch): dp = {devices} devices / "
                 f"{tp} = {dp}" + ("; micro batch read as 1 (give --microbatch-size, the Trainer's "
                                   "per_device_train_batch_size)" if mbs is None else "")
                 + ("; no global batch (give --global-batch)" if B is None else ""),)
        return B, mbs or 1, gas or 1, dp, notes
    if B is None and mbs is None and dp:  # the Hugging Face Trainer supplies both (as with 'auto' above)
        return None, 1, gas or 1, dp, ("neither train_batch_size nor train_micro_batch_size_per_gpu in the file (the "
                                       "Hugging Face Trainer passes them in): micro batch read as 1 (give "
                                       "--microbatch-size) and no global batch (give --global-batch)",)
    if B is None or mbs is None:
        given, other = (("train_batch_size", "train_micro_batch_size_per_gpu") if B is not None else
                        ("train_micro_batch_size_per_gpu", "train_batch_size"))
        raise ConfigError(f"the ds_config gives {given} but not {other}, and no device count to derive it (DeepSpeed "
                          f"derives {other} from its world size): pass --devices (the world size), or write {other}",
                          field=other, value=None)
    if gas is None and not devices:
        notes = (f"gradient_accumulation_steps not in the file and no --devices: read as 1, so dp = {B} / {mbs} = "
                 f"{B // mbs if B % mbs == 0 else B / mbs:g} (DeepSpeed derives the steps from its world size; give "
                 "--devices, or the launcher's tensor / pipeline degrees with --from megatron)",)
    gas = gas or 1
    _check_product(B, mbs, gas, devices)
    return B, mbs, gas, B // (mbs * gas), notes


def _check_product(B: int, mbs: int, gas: int, devices: int | None) -> None:
    """DeepSpeed's assertion train_batch_size = micro batch x accumulation x dp (``runtime/config.py``).

    Raises:
        ConfigError: a batch that is not a multiple of micro x accumulation, naming the batches the devices reach (dp
            divides them) or, without a device count, the nearest multiples.
    """
    step = mbs * gas
    if B % step == 0:
        return
    if devices:
        legal = (f"{step} x dp with dp dividing the {devices} devices: {fmt_legal([step * d for d in divisors(devices)])}"
                 f"; or change gradient_accumulation_steps to one that divides {B // mbs if B % mbs == 0 else B}")
    else:
        legal = f"a multiple of {step}, e.g. {(B // step) * step or step} or {(B // step + 1) * step}"
    raise ConfigError(f"train_batch_size={B} is not micro batch x accumulation x dp ({mbs} x {gas} x dp); legal "
                      f"train_batch_size: {legal}", field="train_batch_size", value=B)


def _precision(cfg: dict, stage: int) -> str | None:
    """The precision policy of a ds_config's ``bf16`` / ``fp16`` sections (DeepSpeed runs fp32 when neither is
    enabled; the exporter writes ``"bf16": {"enabled": true}`` for bf16-mixed, false for fp32) and, with bf16, of its
    gradient accumulation dtype (:func:`_grad_accum_fp32`): fp32 -> bf16-mixed-fp32-grads. ``fp16.enabled`` is
    fp16-mixed: DeepSpeed accumulates an fp16 model's gradients in fp16 (engine.py ``get_data_types``) under
    FP16_Optimizer or the ZeRO optimizer, with fp32 master weights. None: a Hugging Face Trainer config whose
    ``bf16`` / ``fp16`` ``enabled`` is :data:`AUTO` (the Trainer's --bf16 / --fp16 set it at launch).

    Raises:
        ConfigError: an ``enabled`` that is not true / false (the HF Trainer's ``"auto"`` is resolved by the Trainer,
            not by DeepSpeed), both enabled (DeepSpeed refuses that), Apex ``amp`` (not priced; the section
            ``bfloat16``, the legacy name of ``bf16``, is read as it), fp16 with a grad_accum_dtype other than fp16
            (DeepSpeed's engine has no such optimizer without ZeRO, ``_do_optimizer_sanity_check``: "unsupported
            mix of model dtype and gradient accumulation type"; the planner prices none with it).
    """
    enabled = {}
    for key in ("bf16", "fp16", "amp"):
        # runtime/config.py get_bfloat16_config: the legacy section name "bfloat16" is read when "bf16" is absent
        name = "bfloat16" if key == "bf16" and "bf16" not in cfg and "bfloat16" in cfg else key
        value = section(cfg, name, "DeepSpeed").get("enabled", False)
        if value == AUTO and key != "amp":  # the Trainer's --bf16 / --fp16 decide (below)
            enabled[key] = AUTO
            continue
        if not isinstance(value, bool):
            raise ConfigError(f"DeepSpeed {key}.enabled={value!r}: legal: true, false (an HF Trainer 'auto' is "
                              "resolved by the Trainer: write the value it resolves to)", field=key, value=value,
                              legal=[True, False])
        enabled[key] = value
    if AUTO in enabled.values():  # an explicit true decides; otherwise the Trainer does: no precision recorded
        if True not in enabled.values():
            return None
        enabled = {k: v is True for k, v in enabled.items()}
    if enabled["amp"]:
        raise ConfigError("DeepSpeed amp.enabled=true (NVIDIA Apex AMP, which DeepSpeed refuses beside ZeRO and beside "
                          "fp16 / bf16): the planner does not price Apex's opt levels; legal: fp16.enabled (fp16-mixed, "
                          "what Apex O2 approximates) or bf16.enabled", field="amp", value=True, legal=[False])
    if enabled["fp16"] and enabled["bf16"]:
        raise ConfigError("DeepSpeed fp16.enabled and bf16.enabled are both true (DeepSpeed refuses that: one 16-bit "
                          "format); legal: one of them", field="fp16", value=True, legal=[False])
    if enabled["fp16"]:
        accum = section(cfg, "data_types", "DeepSpeed").get("grad_accum_dtype")
        if accum not in (None, "fp16", "float16", "half"):
            why = ("DeepSpeed's engine runs an fp16 model with fp16 gradient accumulation (engine.py "
                   "_do_optimizer_sanity_check refuses other mixes without ZeRO: 'unsupported mix of model dtype and "
                   "gradient accumulation type') and the planner prices that one"
                   if accum in GRAD_ACCUM_DTYPES else "not a dtype name DeepSpeed reads for it")
            raise ConfigError(f"DeepSpeed data_types.grad_accum_dtype={accum!r} with fp16: {why}; legal: 'fp16' or no "
                              "grad_accum_dtype", field="grad_accum_dtype", value=accum, legal=["fp16"])
        return "fp16-mixed"
    if not enabled["bf16"]:
        return "fp32"
    return "bf16-mixed-fp32-grads" if _grad_accum_fp32(cfg, stage) else "bf16-mixed"


#: DeepSpeed's names of the two gradient accumulation dtypes a bf16 run can have (runtime/config.py DtypeEnum)
GRAD_ACCUM_DTYPES = {"fp32": True, "float32": True, "float": True, "bf16": False, "bfloat16": False}


def _grad_accum_fp32(cfg: dict, stage: int) -> bool:
    """Whether a bf16 ds_config accumulates the gradients in fp32: ``data_types.grad_accum_dtype`` where given, else
    DeepSpeed's default (engine.py ``get_data_types``: fp32 without ZeRO, the model's bf16 with it).

    Raises:
        ConfigError: a grad_accum_dtype other than fp32 / bf16 (fp16 has no planner policy), naming the legal values.
    """
    value = section(cfg, "data_types", "DeepSpeed").get("grad_accum_dtype")
    if value is None:
        return stage == 0
    if not isinstance(value, str) or value not in GRAD_ACCUM_DTYPES:
        raise ConfigError(f"DeepSpeed data_types.grad_accum_dtype={value!r} with bf16: the planner prices fp32 or bf16 "
                          f"gradient accumulation; legal: {', '.join(map(repr, GRAD_ACCUM_DTYPES))}",
                          field="grad_accum_dtype", value=value, legal=list(GRAD_ACCUM_DTYPES))
    return GRAD_ACCUM_DTYPES[value]


#: the top-level ds_config keys the importer reads (deepspeed/runtime/config.py); a near miss of one of
#: :data:`LAYOUT_TOP_KEYS` is refused (:func:`shardplan.export.base.check_near_misses`: DeepSpeed ignores an unknown
#: top-level key and runs the default, ZeRO-0 for a misspelt zero_optimization)
TOP_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization",
            "tensor_parallel", "sequence_parallel_size", "bf16", "fp16", "fp8", "activation_checkpointing",
            "optimizer", "scheduler", "gradient_clipping", "data_types", "communication_data_type", "steps_per_print",
            "wall_clock_breakdown", "zero_allow_untested_optimizer", "pipeline", "checkpoint", "amp")
#: deepspeed/runtime/zero/config.py DeepSpeedZeroConfig's fields and their stage3_ aliases (a near miss of the
#: layout ones is refused: the model forbids unknown keys)
ZERO_KEYS = ("stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
             "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights",
             "elastic_checkpoint", "offload_param", "offload_optimizer", "sub_group_size", "cpu_offload_param",
             "cpu_offload_use_pin_memory", "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size",
             "param_persistence_threshold", "stage3_param_persistence_threshold", "model_persistence_threshold",
             "stage3_model_persistence_threshold", "max_live_parameters", "stage3_max_live_parameters",
             "max_reuse_distance", "stage3_max_reuse_distance", "gather_16bit_weights_on_model_save",
             "stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
             "module_granularity_threshold", "use_all_reduce_for_fetch_params", "ignore_unused_parameters",
             "legacy_stage1", "round_robin_gradients", "zero_hpz_partition_size", "zero_quantized_weights",
             "zero_quantized_nontrainable_weights", "zero_quantized_gradients", "zeropp_loco_param",
             "mics_shard_size", "mics_hierarchical_params_gather", "memory_efficient_linear",
             "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings")
#: deepspeed/runtime/tensor_parallel/config.py TPTrainingConfig's fields
TP_KEYS = ("autotp_size", "tp_overlap_comm", "tensor_parallel", "injection_policy_tuple", "keep_module_on_host",
           "tp_grain_size", "partition_config", "preset_model", "dtype")
LAYOUT_TOP_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                   "zero_optimization", "tensor_parallel", "sequence_parallel_size", "bf16", "fp16")


def _typo_notes(cfg: dict, zero: dict, tpc: dict) -> list[str]:
    """Notes on keys a letter or two away from one read (top level, ``zero_optimization``, ``tensor_parallel``);
    a typo of a layout key is refused (:func:`shardplan.export.base.check_near_misses`). DeepSpeed ignores an unknown
    top-level key; inside its sections its config models forbid them (DeepSpeedConfigModel extra="forbid").

    Raises:
        ConfigError: a typo of a key that sets the layout."""
    return [*check_near_misses(cfg, TOP_KEYS, LAYOUT_TOP_KEYS, "_", "DeepSpeed", stops=False),
            *check_near_misses(zero, ZERO_KEYS, ("stage", "offload_optimizer", "offload_param", "overlap_comm"),
                               "_", "DeepSpeed", stops=True, where="zero_optimization."),
            *check_near_misses(tpc, TP_KEYS, ("autotp_size",), "_", "DeepSpeed", stops=True,
                               where="tensor_parallel.")]


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of a ds_config: dp = train_batch_size / (micro batch x accumulation), devices = dp x tp x cp (cp:
    ``sequence_parallel_size``, DeepSpeed-Ulysses, read as ``cp_comm`` 'a2a').

    Raises:
        ConfigError: not JSON, missing batch keys (``"auto"`` ones without ``devices``: :func:`_batch_sizes`), a
            batch that the micro batch does not divide, a
            ZeRO stage outside 0-3, or a
            precision section the planner has no policy for (:func:`_precision`).
    """
    cfg = _load(text)
    zero, tpc = section(cfg, "zero_optimization", "DeepSpeed"), section(cfg, "tensor_parallel", "DeepSpeed")
    typo_notes = _typo_notes(cfg, zero, tpc)
    tp = _whole(tpc, "autotp_size", least=0) or 1  # tensor_parallel/config.py: 0 = AutoTP off
    sp = _whole(cfg, "sequence_parallel_size") or 1  # DeepSpeed-Ulysses (module docstring)
    said = _meta_devices(cfg)
    if devices is None and "train_batch_size" not in cfg and said is not None:
        if not isinstance(said, int) or isinstance(said, bool) or said < 1:  # breaker pass 56: "sixteen" / -16 gave
            raise ConfigError(f"_shardplan.devices={short_repr(said)} is not a device count; legal: a whole number "
                              "of at least 1 (the exported plan's), or --devices N", field="_shardplan.devices",
                              value=said)  # an error about the missing train_batch_size instead
        devices = said  # a tp > 1 export leaves train_batch_size out: the header's device count gives dp
    _check_model_parallel(tp, sp, devices)
    B, mbs, gas, dp, batch_notes = _batch_sizes(cfg, tp * sp, devices)
    autotp_note = (("train_batch_size with autotp_size: read as micro batch x accumulation x the data-parallel size; "
                    "DeepSpeed checks it against its world size, which is every rank unless deepspeed.initialize is "
                    "given an mpu (then its data-parallel size): leave train_batch_size out to let it fill it in",)
                   if tp > 1 and cfg.get("train_batch_size") not in (None, AUTO) else ())
    stage = _whole(zero, "stage", 0, 3) or 0
    offload, offload_params, offload_notes = _offload(zero, stage)
    nvme, nvme_notes = _nvme(zero, offload, offload_params)
    offload_notes = (*typo_notes, *offload_notes, *nvme_notes, *_zeropp_notes(zero), *_persistence_notes(zero),
                     *_unread_notes(cfg, sp))
    precision = _precision(cfg, stage)
    fp8 = flag(section(cfg, "fp8", "DeepSpeed"), "enabled", "DeepSpeed", where="fp8.")
    if fp8 and precision not in ("fp8-mixed", "fp8-params"):
        # not a DeepSpeed section: the fp8 training of the program around it (LLaMA-Factory's fp8 with Accelerate's
        # Transformer Engine / torchao recipes) reads it, beside the bf16 (or fp16) DeepSpeed runs the rest in, or
        # fp32 where none is enabled: the GEMMs run in fp8 either way
        precision = "fp8-mixed"
    auto_notes = (*batch_notes, *(("bf16 / fp16 enabled 'auto' (the Hugging Face Trainer's --bf16 / --fp16 set it): "
                                   "no precision recorded (give --precision; the profile's default otherwise)",)
                                  if precision is None else ()))
    ac_notes = _checkpointing_notes(section(cfg, "activation_checkpointing", "DeepSpeed"))  # present: recompute on
    shard, mics_notes = _mics_shard(zero, stage, dp)
    ep = _autoep_size(cfg, stage, dp)
    values = dict(dp=dp, zero_stage=stage, tp=tp, cp=sp, cp_comm="a2a" if sp > 1 else "ring", microbatch_size=mbs,
                  dp_shard=shard, ep=ep,
                  recompute="full" if "activation_checkpointing" in cfg else "none",
                  overlap_grad_reduce=flag(zero, "overlap_comm", "DeepSpeed", stage == 3, "zero_optimization."),
                  offload_optimizer=offload, offload_params=offload_params, nvme_offload=nvme)
    framework, profile_notes = _meta_profile(cfg) or _profile_of(cfg, tp, sp, ep)
    return Imported(parallel_from(values), devices=dp * tp * sp, seq_len=_meta_seq_len(cfg), global_batch=B,
                    framework=framework, precision=precision,
                    notes=(*auto_notes, *(("fp8.enabled (a section DeepSpeed itself does not read: the fp8 training "
                                           "of the program around it, e.g. LLaMA-Factory with Accelerate's Transformer "
                                           "Engine recipe): priced as fp8-mixed (fp8 GEMMs beside bf16 weights)",)
                                          if fp8 else ()),
                           *offload_notes, *mics_notes, *_meta_devices_note(cfg, dp * tp * sp),
                           *autotp_note, *profile_notes, *ac_notes))


def _checkpointing_notes(ac: dict) -> tuple[str, ...]:
    """Notes for the ``activation_checkpointing`` keys that change the price and are not priced:
    ``partition_activations`` (the checkpoints split over the model-parallel ranks) and ``cpu_checkpointing`` (moved to
    host memory); breaker pass 57: both were dropped without a word."""
    return tuple(f"activation_checkpointing.{key}: {what}, which the planner does not price (the full recompute "
                 "priced keeps every checkpoint on the device, whole on each rank)"
                 for key, what in (("partition_activations", "the checkpoints split over the model-parallel ranks"),
                                   ("cpu_checkpointing", "the checkpoints moved to host memory"))
                 if ac.get(key) is True)


def _unread_notes(cfg: dict, sp: int) -> tuple[str, ...]:
    """Notes for blocks that change the price and that this importer does not read: a ``sequence_parallel`` block
    (LLaMA-Factory's ALST / Ulysses settings, whose degree its training program sets; DeepSpeed's own key is
    ``sequence_parallel_size``), a ``pipeline`` block with ``stages`` > 1 (the model code's PipelineModule sets the
    stage count) and a ``compile`` block with ``disable`` false (DeepSpeed's torch.compile of the
    engine: fused element-wise kernels the eager profiles do not price)."""
    notes: tuple[str, ...] = ()
    block = cfg.get("sequence_parallel")
    if isinstance(block, dict) and block.get("enabled", True) and sp == 1:
        size = block.get("size") or (block.get("ulysses") or {}).get("degree")
        notes += (f"sequence_parallel block (size {short_repr(size)}, mode {short_repr(block.get('mode'))}: the "
                  "training program's Ulysses / ALST settings, not a DeepSpeed key) is not read: give --cp "
                  f"{size if isinstance(size, int) else 'N'} --cp-comm a2a for its sequence parallelism",)
    pipe = cfg.get("pipeline")  # breaker pass 56: "pipeline": {"stages": 4} was read as pp = 1 without a word
    stages = pipe.get("stages") if isinstance(pipe, dict) else None
    if isinstance(stages, int) and not isinstance(stages, bool) and stages > 1:
        notes += (f"pipeline.stages {stages} is not read: DeepSpeed's pipeline engine takes its stage count from the "
                  "model's PipelineModule(num_stages=...) (Megatron-DeepSpeed's --pipeline-model-parallel-size); the "
                  f"layout is read without pipeline parallelism: give --pp {stages} to price it",)
    comp = cfg.get("compile")
    if isinstance(comp, dict) and comp.get("disable") is False:
        notes += ("compile (DeepSpeed's torch.compile of the model) is not priced: the deepspeed profiles price eager "
                  "element-wise kernels (--framework torchtitan-compile prices compiled ones)",)
    return notes


#: DeepSpeed's default ``stage3_param_persistence_threshold`` (elements; deepspeed/runtime/zero/config.py
#: ZERO_PARAM_PERSISTENCE_THRESHOLD_DEFAULT = 1e5): biases and norms stay whole, the planner's count as well
PERSISTENCE_DEFAULT = 1e5


def _zeropp_notes(zero: dict) -> tuple[str, ...]:
    """A note for ZeRO++ (Wang et al. 2023, "ZeRO++": ``zero_hpz_partition_size`` keeps a secondary copy of the
    weights sharded within a node for the backward's gathers, ``zero_quantized_weights`` / ``_gradients`` send them
    in int8 / int4), which the planner does not price: its collectives stay plain ZeRO-3's."""
    hpz = zero.get("zero_hpz_partition_size")
    used = ([f"zero_hpz_partition_size {hpz}"] if isinstance(hpz, int) and not isinstance(hpz, bool) and hpz > 1
            else []) + [k for k in ("zero_quantized_weights", "zero_quantized_gradients") if zero.get(k) is True]
    if not used:
        return ()
    return (f"ZeRO++ ({', '.join(used)}): not priced; the parameter gathers and gradient reductions are priced as "
            "plain ZeRO's (full precision over the whole data-parallel group), an upper bound on their time",)


def _persistence_notes(zero: dict) -> tuple[str, ...]:
    """A note for a ``stage3_param_persistence_threshold`` above DeepSpeed's default: DeepSpeed keeps a parameter of
    fewer elements whole on every rank (stage3.py ``persistent_parameters``), which the planner's ZeRO-3, gathering
    every weight, does not price (a breaker's 1e12 priced a 70B at 35 GiB)."""
    keep = zero.get("stage3_param_persistence_threshold")
    if not isinstance(keep, (int, float)) or isinstance(keep, bool) or keep <= PERSISTENCE_DEFAULT:
        return ()
    return (f"stage3_param_persistence_threshold={keep:g}: DeepSpeed keeps every parameter of fewer elements whole "
            "on every rank, which the planner's ZeRO-3 does not price; above the model's largest weight (d_model x "
            "ffn_dim elements) that is every parameter: price it with --zero-stage 2 (weights whole, gradients and "
            "optimizer state sharded)",)


def _load(text: str) -> dict:
    """The ds_config object of ``text``.

    Raises:
        ConfigError: not JSON, a key given twice in one object (DeepSpeed refuses it), or not an object.
    """
    from shardplan.loaders import no_repeated_json_keys
    try:
        cfg = json.loads(text, object_pairs_hook=no_repeated_json_keys)
    except json.JSONDecodeError as e:
        if re.match(r"\s*#!", text) or re.search(r"^\s*(?:torchrun|deepspeed|srun|python3?)\s", text, re.M):
            raise ConfigError("the file is a shell script (a #! line or a launcher command), not a ds_config; legal: "
                              "the ds_config JSON it passes (--deepspeed_config / --deepspeed FILE), or, for a "
                              "Megatron-DeepSpeed launch script, --from megatron", field="import",
                              value="deepspeed") from None
        comments = "; it holds comments, which DeepSpeed's own reader (hjson) allows and JSON does not: remove them" \
            if re.search(r"(^|\s)(//|#)", text) else ""
        raise ConfigError(f"ds_config is not valid JSON: {e}{comments}; legal: a DeepSpeed config file (a JSON object "
                          'such as {"train_batch_size": 64, "zero_optimization": {"stage": 3}})', field="import",
                          value="deepspeed") from None
    except ValueError as e:  # a key given twice in one object
        raise ConfigError(f"ds_config: {e} in one object (DeepSpeed refuses it: 'Duplicate keys in DeepSpeed "
                          "config'); legal: each key once", field="import", value="deepspeed") from None
    if not isinstance(cfg, dict):
        raise ConfigError("ds_config is not a JSON object", field="import", value="deepspeed")
    return cfg


def _profile_of(cfg: dict, tp: int, sp: int, ep: int) -> tuple[str, tuple[str, ...]]:
    """(framework profile, notes) of a ds_config. The file does not say whose model code runs: Megatron-DeepSpeed's
    fused kernels (the deepspeed profile) or a Hugging Face model under the Trainer / Accelerate (eager element-wise
    ops: hf-deepspeed). AutoTP and the Ulysses sequence_parallel_size are the Hugging Face integration's, 'auto' values
    the Trainer's (:func:`_has_auto`), and AutoEP replaces a Hugging Face model's MoE blocks
    (``hf-deepspeed+expert_parallel=true``)."""
    trainer = _has_auto(cfg)
    notes = ()
    if ep > 1:
        notes = (f"expert_parallel.autoep_size={ep} (DeepSpeed AutoEP: the Hugging Face model's MoE blocks replaced by "
                 "grouped-GEMM experts with AllToAll token dispatch, expert groups carved from the data-parallel "
                 f"ranks): ep={ep}, priced with hf-deepspeed+expert_parallel=true",)
    if tp > 1 or sp > 1:
        notes += ("autotp_size / sequence_parallel_size are the Hugging Face integration's (AutoTP, "
                  "UlyssesSPAttentionHF): priced with the hf-deepspeed profile (eager model code)",)
    elif trainer:
        notes += ("'auto' values are the Hugging Face Trainer's (Accelerate's): priced with the hf-deepspeed profile "
                  "(Transformers model code, eager element-wise ops)",)
    elif ep == 1:
        return "deepspeed", ("the model code is not in a ds_config: the deepspeed profile prices Megatron-DeepSpeed's "
                             "kernels (fused norms, eager RoPE and SwiGLU); for a Hugging Face model (Trainer / "
                             "Accelerate) price with --framework hf-deepspeed",)
    return ("hf-deepspeed+expert_parallel=true" if ep > 1 else "hf-deepspeed"), notes


def _meta_profile(cfg: dict) -> tuple[str, tuple[str, ...]] | None:
    """(framework profile, notes) that the ``_shardplan`` header of a ds_config shardplan exported records (the
    profile the plan was priced with: which model code runs is not in the DeepSpeed keys; any case, spaces ignored),
    or None for a hand-written config (no header, or no ``framework`` key, or null).

    Raises:
        ConfigError: a ``framework`` value that names no built-in profile (:func:`_unknown_meta_profile`)."""
    from shardplan.presets.frameworks import framework_profile
    meta = cfg.get("_shardplan")
    if not isinstance(meta, dict) or "framework" not in meta:
        return None
    name = meta["framework"]
    if name is None:
        return None
    try:
        spec = framework_profile(name.strip().lower()).label if isinstance(name, str) and name.strip() else None
    except ConfigError:
        spec = None
    if spec is None:  # not a built-in profile, a broken override or not a name (a hand edit): refused
        _unknown_meta_profile(name)
    return spec, (f"_shardplan.framework={short_repr(name)}: the profile the exported plan was priced with",)


def _unknown_meta_profile(name: object) -> None:
    """Raise for a ``_shardplan.framework`` that names no profile shardplan has (a hand edit).

    Raises:
        ConfigError: always, naming the value and the built-in profiles.
    """
    from shardplan.presets.frameworks import FRAMEWORKS
    raise ConfigError(f"_shardplan.framework={short_repr(name)} is not a framework profile; legal: {', '.join(FRAMEWORKS)} "
                      "(with +field=value overrides), or delete the key to price the DeepSpeed keys' own profile",
                      field="framework", value=name, legal=list(FRAMEWORKS))


def _autoep_size(cfg: dict, stage: int, dp: int) -> int:
    """The expert-parallel size of a ds_config's ``expert_parallel`` section (DeepSpeed AutoEP,
    ``deepspeed/module_inject/auto_ep_config.py`` AutoEPConfig: ``enabled``, ``autoep_size`` default 1): 1 when the
    section is absent or not enabled.

    Raises:
        ConfigError: an autoep_size that is not a whole number, that does not divide the data-parallel size (AutoEP
            builds its expert groups from those ranks), or AutoEP with ZeRO-3 (DeepSpeed's AutoEP docs: "ZeRO
            compatibility: Stages 0, 1, and 2"), naming the legal values.
    """
    sec = section(cfg, "expert_parallel", "DeepSpeed")
    if not flag(sec, "enabled", "DeepSpeed", False, "expert_parallel."):
        return 1
    ep = _whole(sec, "autoep_size") or 1
    if ep > 1 and stage == 3:
        raise ConfigError(f"DeepSpeed expert_parallel.autoep_size={ep} with zero_optimization.stage 3: AutoEP runs with "
                          "ZeRO stages 0, 1 and 2 (DeepSpeed's AutoEP docs); legal stage: 0, 1, 2", field="zero_stage",
                          value=3, legal=[0, 1, 2])
    if dp % ep:
        raise ConfigError(f"DeepSpeed expert_parallel.autoep_size={ep} does not divide the {dp} data-parallel ranks "
                          f"(AutoEP's expert groups are carved from them); legal autoep_size: {fmt_legal(divisors(dp))}",
                          field="autoep_size", value=ep, legal=divisors(dp))
    return ep


def _has_auto(value) -> bool:
    """Whether a ds_config (or any object or list in it) holds an :data:`AUTO` value."""
    if isinstance(value, dict):
        return any(_has_auto(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_auto(v) for v in value)
    return value == AUTO


def _check_model_parallel(tp: int, sp: int, devices: int | None) -> None:
    """AutoTP and Ulysses with a known device count: their product must divide it (DeepSpeed builds tp x sp groups
    of the ranks), and Ulysses is not taken beside AutoTP (:func:`_check`: the Hugging Face integration is documented
    without it, and the export refuses it).

    Raises:
        ConfigError: naming autotp_size / sequence_parallel_size, the device count and the legal values.
    """
    if sp > 1 and tp > 1:
        raise ConfigError(f"DeepSpeed sequence_parallel_size={sp} with tensor_parallel.autotp_size={tp}: the Hugging "
                          "Face Ulysses integration is documented without AutoTP (the export refuses it too); legal: "
                          "one of them 1", field="sequence_parallel_size", value=sp, legal=[1])
    if devices is not None and devices % (tp * sp):
        name, value = ("sequence_parallel_size", sp) if sp > 1 else ("autotp_size", tp)
        raise ConfigError(f"DeepSpeed {name}={value} does not divide the {devices} devices (DeepSpeed groups the ranks "
                          f"{value} at a time); legal {name}: {fmt_legal(divisors(devices))}", field=name, value=value,
                          legal=divisors(devices))


def _meta_devices(cfg: dict):
    """The device count the ``_shardplan`` header of an exported ds_config records (any JSON value), or None."""
    meta = cfg.get("_shardplan")
    return meta.get("devices") if isinstance(meta, dict) else None


def _meta_seq_len(cfg: dict) -> int | None:
    """The sequence length the ``_shardplan`` header of an exported ds_config records (a ds_config has none of its
    own: the model code sets it), or None (no header, or not a whole number of at least 1)."""
    meta = cfg.get("_shardplan")
    seq = meta.get("seq_len") if isinstance(meta, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and seq >= 1 else None


def _meta_devices_note(cfg: dict, devices: int) -> tuple[str, ...]:
    """A note when the ``_shardplan`` header of an exported ds_config names another device count than the
    batch keys give (train_batch_size / (micro batch x accumulation) x autotp_size: what DeepSpeed runs on),
    e.g. after a hand edit of train_batch_size; () otherwise (no header, or the same count)."""
    said = _meta_devices(cfg)
    if said is None or said == devices:
        return ()
    return (f"_shardplan.devices={short_repr(said)} (the exported plan's) but the import runs on {devices} devices "
            "(train_batch_size / (micro batch x accumulation) x autotp_size, or --devices where those keys are "
            f"'auto'); the import uses {devices}",)


def _mics_shard(zero: dict, stage: int, dp: int) -> tuple[int | None, tuple[str, ...]]:
    """(ZeRO shard group, notes) of a ``zero_optimization`` block: ``mics_shard_size`` under ZeRO-3 (DeepSpeed's engine
    runs the MiCS optimizer for ``mics_shard_size > 0`` on the ZeRO-3 path only); None (all of dp) for its default -1
    (off), and under ZeRO-1/2, which ignore it (with a note).

    Raises:
        ConfigError: a mics_shard_size that is not -1 or a whole number dividing dp (MiCS splits the data-parallel
            ranks into groups of that size), naming the legal values.
    """
    if zero.get("mics_shard_size", -1) == -1:
        return None, ()
    size = _whole(zero, "mics_shard_size")
    if stage != 3:
        return None, (f"mics_shard_size={size} with stage {stage}: DeepSpeed runs MiCS on the ZeRO-3 path only, so "
                      f"ZeRO-{stage} shards over all {dp} data-parallel ranks",)
    if dp % size:
        legal = divisors(dp)
        raise ConfigError(f"DeepSpeed zero_optimization.mics_shard_size={size} does not divide the {dp} data-parallel "
                          f"ranks (MiCS shards over groups of that size); legal: -1 (off) or {fmt_legal(legal)}",
                          field="mics_shard_size", value=size, legal=[-1, *legal])
    return size, ()


#: DeepSpeed's offload devices (deepspeed/runtime/zero/offload_config.py OffloadDeviceEnum)
OFFLOAD_DEVICES = ("none", "cpu", "nvme")
#: the nvme_path an export writes for ZeRO-Infinity's NVMe offload (DeepSpeed config docs, "Parameter offloading":
#: "nvme_path: Filesystem path for NVMe device"): a placeholder for the cluster's local NVMe mount
NVME_PATH = "/local_nvme"


def _offload(zero: dict, stage: int) -> tuple[bool, bool, tuple[str, ...]]:
    """(optimizer offloaded, parameters offloaded, notes) of a ``zero_optimization`` block: ``offload_optimizer.device``
    cpu or nvme offloads the optimizer, ``offload_param.device`` cpu or nvme the ZeRO-3 parameter partitions
    (``ParallelConfig.offload_params``; ignored by DeepSpeed below stage 3, with a note); nvme is recorded as
    ``nvme_offload`` by :func:`_nvme` (priced as host offload: the planner has no NVMe bandwidth).

    Raises:
        ConfigError: an offload entry that is not an object, a device DeepSpeed does not have, or optimizer offload
            with ZeRO stage 0 (zero/config.py: offload_optimizer is "valid for ZeRO stage 1, 2, 3").
    """
    for key in ("offload_param", "offload_optimizer"):
        device = section(zero, key, "DeepSpeed", "zero_optimization.").get("device", "none")
        if device is not None and device not in OFFLOAD_DEVICES:
            raise ConfigError(f"DeepSpeed zero_optimization.{key}.device={device!r}; legal: "
                              f"{', '.join(map(repr, OFFLOAD_DEVICES))}", field=key, value=device,
                              legal=list(OFFLOAD_DEVICES))
    param_device = (zero.get("offload_param") or {}).get("device", "none")
    params = param_device not in (None, "none") and stage == 3
    notes: tuple[str, ...] = ()
    if param_device not in (None, "none") and stage != 3:
        notes += (f"zero_optimization.offload_param.device={param_device!r} is ignored at stage {stage}: DeepSpeed "
                  "offloads parameters only under ZeRO-3 (\"valid only with stage 3\")",)
    elif param_device == "nvme":
        notes += ("offload_param.device='nvme' is priced as 'cpu' (each shard copied over the host link before its "
                  "gather); NVMe (ZeRO-Infinity) is slower than the planner predicts",)
    device = (zero.get("offload_optimizer") or {}).get("device", "none")
    if device not in (None, "none") and stage == 0:
        raise ConfigError(f"DeepSpeed zero_optimization.offload_optimizer.device={device!r} with stage 0: DeepSpeed "
                          "offloads the optimizer only under ZeRO (zero/config.py: offload_optimizer is \"valid for "
                          "ZeRO stage 1, 2, 3\"); legal: stage 1, 2 or 3, or offload_optimizer.device 'none'",
                          field="offload_optimizer", value=device, legal=["none"])
    notes += (("offload_optimizer.device='nvme' is priced as 'cpu' (the optimizer step on the host over the "
               "host link); NVMe (ZeRO-Infinity) is slower than the planner predicts",) if device == "nvme" else ())
    opt = zero.get("offload_optimizer") or {}
    if isinstance(opt, dict) and opt.get("ratio") not in (None, 1, 1.0):  # ZeRO-Offload++ Twin-Flow
        notes += (f"offload_optimizer.ratio={short_repr(opt['ratio'])} (ZeRO-Offload++ Twin-Flow: that share of the "
                  "optimizer on the host, the rest updated on the GPU) is priced as the whole optimizer offloaded",)
    if zero.get("super_offload") or (isinstance(opt, dict) and opt.get("super_offload")):
        notes += ("super_offload (DeepSpeed SuperOffload, the update overlapped with the backward on Grace-Hopper "
                  "hosts) is not modelled: priced as plain optimizer offload",)
    if zero.get("zenflow") is not None:  # DeepSpeed ZenFlow: top-k important gradients updated on the GPU
        notes += ("zero_optimization.zenflow (ZenFlow's split of the update between GPU and host) is not modelled: "
                  "priced as plain optimizer offload",)
    return device not in (None, "none"), params, notes


def _nvme(zero: dict, offload: bool, params: bool) -> tuple[bool, tuple[str, ...]]:
    """(``ParallelConfig.nvme_offload``, notes) of a ``zero_optimization`` block: True where an offload that applies
    goes to NVMe (ZeRO-Infinity); with the other on the CPU, a note that both are recorded as NVMe (so host memory is
    not checked for either)."""
    devices = {key: (zero.get(key) or {}).get("device", "none") for key, on in
               (("offload_optimizer", offload), ("offload_param", params)) if on}
    if "nvme" not in devices.values():
        return False, ()
    mixed = [k for k, d in devices.items() if d != "nvme"]
    return True, ((f"{mixed[0]}.device={devices[mixed[0]]!r} beside NVMe: recorded as nvme_offload for both (host "
                   "memory is not checked for either; an export writes both to NVMe)",) if mixed else ())


EXPORTER = Exporter(name="deepspeed", title="DeepSpeed", source=SOURCE, suffix=".json",
                    expresses=("overlap_grad_reduce", "offload_optimizer", "offload_params", "nvme_offload", "cp_comm"),
                    write=write, read=read, comment="",
                    precisions=("bf16-mixed", "bf16-mixed-fp32-grads", "fp16-mixed", "fp32"))
