"""Hugging Face Accelerate config file (``accelerate launch --config_file FILE``), the launcher of the Transformers
Trainer, TRL and most fine-tuning scripts.

Sources read (huggingface/accelerate):

* ``src/accelerate/utils/constants.py``: ``FSDP_SHARDING_STRATEGY = ["FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD",
  "HYBRID_SHARD", "HYBRID_SHARD_ZERO2"]`` -- the ``fsdp_sharding_strategy`` of an FSDP1 config, by name or by its
  1-based number (the config written by ``accelerate config`` in ``docs/source/usage_guides/fsdp.md`` has
  ``fsdp_sharding_strategy: 1``): FULL_SHARD is ZeRO-3, SHARD_GRAD_OP ZeRO-2, NO_SHARD ZeRO-0 (DDP), and the
  HYBRID ones shard within a node and replicate across nodes (HSDP: ``dp_shard`` = the processes of one machine).
  Later releases name it ``fsdp_reshard_after_forward``: a strategy name for FSDP1, a boolean for FSDP2
  (``fsdp_version: 2``, PyTorch ``fully_shard(reshard_after_forward=...)``: true gathers the parameters again for
  the backward, ZeRO-3; false keeps them, ZeRO-2).
* ``src/accelerate/parallelism_config.py``: ``ParallelismConfig`` -- ``dp_replicate_size``, ``dp_shard_size``,
  ``tp_size``, ``cp_size`` (the YAML keys ``parallelism_config_*``; their product is ``num_processes``, the total
  over every machine; tp and cp need FSDP2).
* the config file's other keys: ``distributed_type`` (``MULTI_GPU`` = DDP, ``FSDP``, ``DEEPSPEED``, ``NO``),
  ``num_machines``, ``num_processes``, ``mixed_precision`` (``no`` | ``fp16`` | ``bf16`` | ``fp8``),
  ``fsdp_config.fsdp_activation_checkpointing`` (full recompute of each wrapped block), ``fsdp_offload_params``
  (FSDP CPU offload: the parameter shards, their gradients and the optimizer step on the host, ``offload_params``
  with ``offload_optimizer``; under FULL_SHARD / reshard-after-forward only), and ``deepspeed_config``
  (``zero_stage``,
  ``offload_optimizer_device``, ``offload_param_device``, ``gradient_accumulation_steps``, or a
  ``deepspeed_config_file`` to import with ``--from deepspeed``).

The batch, sequence length and gradient accumulation are Trainer arguments, not part of this file: the export writes
them as a comment (``shardplan-trainer: {...}``, the ``--per_device_train_batch_size`` /
``--gradient_accumulation_steps`` / ``--max_length`` to pass) that the import reads back; a hand-written file gives
the micro batch 1 with a note, and no global batch or sequence length. Priced with the ``hf-fsdp`` profile
(Transformers model code: eager element-wise ops and loss), ``hf-deepspeed`` for a DeepSpeed one.

Refused on export (naming who can): pp, ep, Megatron-style sequence parallelism, selective recompute, cp (the
hf-fsdp profile prices no context parallelism), ZeRO-1 with tp, an FSDP launch with the optimizer offloaded but not the
parameters (FSDP offloads both) or offload below ZeRO-3, and a precision other than
bf16-mixed / fp16-mixed / fp32.
"""

from __future__ import annotations

import json
import re

import yaml

from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.export.base import (ExportContext, Exporter, Imported, check_unexpressed, comment_block, flag,
                                   parallel_from, refuse_first, section, whole)
from shardplan.export.deepspeed import NVME_PATH, OFFLOAD_DEVICES

SOURCE = ("huggingface/accelerate src/accelerate/utils/constants.py (FSDP_SHARDING_STRATEGY), utils/dataclasses.py "
          "(FullyShardedDataParallelPlugin, DeepSpeedPlugin), parallelism_config.py (ParallelismConfig)")
#: FSDP1 sharding strategies (constants.py order; the 1-based number is the same strategy) -> (ZeRO stage, hybrid)
STRATEGIES = {"FULL_SHARD": (3, False), "SHARD_GRAD_OP": (2, False), "NO_SHARD": (0, False),
              "HYBRID_SHARD": (3, True), "HYBRID_SHARD_ZERO2": (2, True)}
#: ``mixed_precision`` <-> the planner's precision policy
PRECISIONS = {"bf16": "bf16-mixed", "fp16": "fp16-mixed", "no": "fp32",
              # Accelerate's fp8 (Transformer Engine / torchao / MS-AMP recipes: fp8 GEMMs beside bf16 weights)
              "fp8": "fp8-mixed"}
TRAINER_TAG = "shardplan-trainer:"
_ALT = {"offload_optimizer": "DeepSpeed"}


def _check(ctx: ExportContext) -> None:
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    refuse_first("Hugging Face Accelerate", [
        (p.pp > 1, f"pp={p.pp} (Accelerate launches no pipeline schedule)", "Megatron-LM, torchtitan or DeepSpeed"),
        (p.ep > 1, f"ep={p.ep} (no expert parallelism in its config)", "Megatron-LM or torchtitan"),
        (p.sp, "sequence parallelism (Megatron-style; ParallelismConfig's tp shards the weights only)",
         "Megatron-LM or torchtitan"),
        (p.cp > 1, f"cp={p.cp} (the hf-fsdp profile prices no context parallelism)", "torchtitan or Megatron-LM"),
        (p.recompute == "selective", "selective recomputation (fsdp_activation_checkpointing recomputes whole blocks)",
         "Megatron-LM or torchtitan"),
        (p.zero_stage == 1 and p.tp > 1, "ZeRO-1 with tp (a DeepSpeed ZeRO-1 launch has no tp here)",
         "DeepSpeed (AutoTP) or Megatron-LM"),
        (p.zero_stage == 0 and p.tp > 1, "ZeRO-0 with tp (ParallelismConfig's tp runs under FSDP2, which shards)",
         "Megatron-LM or DeepSpeed (AutoTP)"),
        (p.offload_optimizer and not _deepspeed_launch(ctx) and not (p.offload_params and p.zero_stage == 3),
         "an offloaded optimizer under FSDP without offloaded parameters at ZeRO-3 (Accelerate's fsdp_offload_params "
         "moves the parameter shards, their gradients and the optimizer step together)",
         "DeepSpeed (--framework hf-deepspeed: an Accelerate DeepSpeed launch with offload_optimizer_device cpu), or "
         "--offload-params with --zero-stage 3"),
        (p.offload_params and not p.offload_optimizer and not _deepspeed_launch(ctx), "offloaded parameters with the "
         "optimizer on the GPU under FSDP (fsdp_offload_params moves the optimizer step to the host as well)",
         "DeepSpeed (--framework hf-deepspeed, tp 1: an Accelerate DeepSpeed launch with offload_param_device cpu "
         "alone), or --offload-optimizer"),
    ])


def _deepspeed_launch(ctx: ExportContext) -> bool:
    """Whether the plan leaves as an Accelerate DeepSpeed launch: ZeRO-1 (FSDP has none), or any ZeRO stage priced
    with a DeepSpeed profile (hf-deepspeed, deepspeed) without tp (a DeepSpeed launch here carries no AutoTP)."""
    p = ctx.p
    ds_profile = ctx.training.framework.name in ("hf-deepspeed", "deepspeed")
    return p.zero_stage == 1 or (ds_profile and p.zero_stage > 0 and p.tp == 1)


def accelerate_config(ctx: ExportContext) -> dict:
    """The Accelerate config of a plan: FSDP2 for ZeRO-2 / ZeRO-3 (HSDP and tp through ``parallelism_config``),
    DeepSpeed ZeRO-1 for ZeRO-1, ``MULTI_GPU`` (DDP) for ZeRO-0 without tp.

    Raises:
        ConfigError: see the module docstring.
    """
    _check(ctx)
    p, tr = ctx.p, ctx.training
    n = ctx.layout.n_devices
    per_node = ctx.estimate.hardware.host_devices
    cfg: dict = {"compute_environment": "LOCAL_MACHINE"}
    if _deepspeed_launch(ctx):
        device = "nvme" if p.nvme_offload else "cpu"
        cfg.update(distributed_type="DEEPSPEED", deepspeed_config={
            "zero_stage": p.zero_stage, "offload_optimizer_device": (device if p.offload_optimizer else "none"),
            "offload_param_device": device if p.offload_params else "none",
            "gradient_accumulation_steps": ctx.layout.microbatches, "zero3_init_flag": False})
        if p.nvme_offload:  # Accelerate's DeepSpeed plugin keys for ZeRO-Infinity's NVMe path (a placeholder to edit)
            cfg["deepspeed_config"].update({f"offload_{k}_nvme_path": NVME_PATH for k, on in
                                            (("optimizer", p.offload_optimizer), ("param", p.offload_params)) if on})
    elif p.zero_stage == 0 and p.tp == 1:
        cfg["distributed_type"] = "MULTI_GPU"
    else:
        cfg.update(distributed_type="FSDP", fsdp_config={
            "fsdp_version": 2, "fsdp_reshard_after_forward": p.zero_stage == 3,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "fsdp_activation_checkpointing": p.recompute == "full",
            "fsdp_offload_params": p.offload_params, "fsdp_state_dict_type": "SHARDED_STATE_DICT",
            "fsdp_cpu_ram_efficient_loading": True})
        shard = p.dp_shard or p.dp if p.zero_stage else 1
        if p.tp > 1 or shard != p.dp:
            cfg["parallelism_config"] = {"parallelism_config_dp_replicate_size": p.dp // shard,
                                         "parallelism_config_dp_shard_size": shard,
                                         "parallelism_config_tp_size": p.tp, "parallelism_config_cp_size": 1}
    cfg.update(mixed_precision={v: k for k, v in PRECISIONS.items()}[tr.precision.name],
               num_machines=max(1, n // per_node) if n % per_node == 0 else 1, num_processes=n, machine_rank=0,
               main_training_function="main", rdzv_backend="static", same_network=True, use_cpu=False)
    return cfg


def write(ctx: ExportContext) -> str:
    """The YAML text, headed by the planner's numbers and the Trainer arguments of the batch (a comment).

    Raises:
        ConfigError: see the module docstring.
    """
    cfg = accelerate_config(ctx)
    trainer = {"per_device_train_batch_size": ctx.p.microbatch_size,
               "gradient_accumulation_steps": ctx.layout.microbatches, "max_length": ctx.training.seq_len,
               "gradient_checkpointing": ctx.p.recompute == "full" and cfg["distributed_type"] != "FSDP"}
    extra = [f"{TRAINER_TAG} {json.dumps(trainer)}",
             "  (Trainer / TRL arguments: --per_device_train_batch_size, --gradient_accumulation_steps, --max_length)"]
    return comment_block(ctx, EXPORTER, extra) + yaml.safe_dump(cfg, sort_keys=False)


def _trainer_values(text: str) -> dict:
    """The ``shardplan-trainer: {...}`` comment of an exported file, or ``{}``."""
    m = re.search(re.escape(TRAINER_TAG) + r" (\{[^\n]*\})", text)
    try:
        return json.loads(m.group(1)) if m else {}
    except json.JSONDecodeError:
        return {}


def _fsdp_stage(fsdp: dict, version: int) -> tuple[int, bool]:
    """(ZeRO stage, hybrid) of an ``fsdp_config``: ``fsdp_reshard_after_forward`` (a boolean for FSDP2, a strategy
    name for FSDP1), else ``fsdp_sharding_strategy`` (a name or its 1-based number), else FULL_SHARD (FSDP's default).

    Raises:
        ConfigError: a strategy that is none of :data:`STRATEGIES`, naming the legal values.
    """
    value = fsdp.get("fsdp_reshard_after_forward", fsdp.get("fsdp_sharding_strategy", "FULL_SHARD"))
    key = "fsdp_reshard_after_forward" if "fsdp_reshard_after_forward" in fsdp else "fsdp_sharding_strategy"
    if isinstance(value, bool):
        if version != 2 and key == "fsdp_sharding_strategy":
            raise ConfigError(f"Accelerate fsdp_config.{key}={value!r}; legal: {', '.join(STRATEGIES)} (or 1-5)",
                              field=key, value=value, legal=list(STRATEGIES))
        return (3 if value else 2), False
    if isinstance(value, int) and 1 <= value <= len(STRATEGIES):
        value = list(STRATEGIES)[value - 1]
    if not isinstance(value, str) or value.upper() not in STRATEGIES:
        raise ConfigError(f"Accelerate fsdp_config.{key}={short_repr(value)}; legal: {', '.join(STRATEGIES)} (or their "
                          "numbers 1-5; FSDP2: true / false)", field=key, value=short_repr(value),
                          legal=list(STRATEGIES))
    return STRATEGIES[value.upper()]


def _degrees(cfg: dict, n: int, hybrid: bool, machines: int) -> tuple[int, int, int, int]:
    """(dp, dp_shard, tp, cp) of the processes: ``parallelism_config`` where given (its product must be n), else
    dp = n with the HYBRID strategies sharding over one machine's processes.

    Raises:
        ConfigError: degrees that do not multiply to num_processes, naming them (num_machines not dividing
            num_processes is refused before, :func:`_check_launch`: each machine's processes are one HYBRID shard group).
    """
    par = section(cfg, "parallelism_config", "Accelerate")
    if not par:
        return n, n // machines if hybrid else n, 1, 1
    rep, shard, tp, cp = (whole(par, f"parallelism_config_{k}_size", "Accelerate", 1, where="parallelism_config.")
                          for k in ("dp_replicate", "dp_shard", "tp", "cp"))
    if rep * shard * tp * cp != n:
        raise ConfigError(f"Accelerate parallelism_config: dp_replicate {rep} x dp_shard {shard} x tp {tp} x cp {cp} = "
                          f"{rep * shard * tp * cp}, not num_processes={n}; legal: sizes whose product is {n}",
                          field="parallelism_config", value=rep * shard * tp * cp, legal=[n])
    return rep * shard, shard, tp, cp


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of an Accelerate config file (the module docstring's keys).

    Raises:
        ConfigError: not a YAML mapping, no ``distributed_type``, a type the planner does not price (TPU / XLA,
            Megatron-LM's plugin), parameter offload, a bad sharding strategy or degrees, num_processes missing
            without ``devices``.
    """
    cfg = yaml.safe_load(text)
    if not isinstance(cfg, dict) or "distributed_type" not in cfg:
        raise ConfigError("not an Accelerate config (no distributed_type: MULTI_GPU, FSDP or DEEPSPEED); legal: the "
                          "YAML `accelerate config` writes", field="import", value="accelerate")
    kind = str(cfg["distributed_type"]).upper()
    legal = ["NO", "MULTI_GPU", "FSDP", "DEEPSPEED"]
    if kind not in legal:
        raise ConfigError(f"Accelerate distributed_type={short_repr(cfg['distributed_type'])}: not priced here; legal: "
                          f"{', '.join(legal)}", field="distributed_type", value=cfg["distributed_type"], legal=legal)
    n = whole(cfg, "num_processes", "Accelerate", devices if devices is not None else (1 if kind == "NO" else None))
    if n is None:
        raise ConfigError("the Accelerate config gives no num_processes: pass --devices", field="devices", value=None)
    machines = whole(cfg, "num_machines", "Accelerate", 1)
    _check_launch(cfg, n, machines)
    notes: list[str] = []
    values, framework = _layout(cfg, kind, n, machines, notes)
    trainer = _trainer_values(text)
    mbs = trainer.get("per_device_train_batch_size")
    values["microbatch_size"] = mbs if isinstance(mbs, int) and mbs >= 1 else 1
    if trainer.get("gradient_checkpointing") is True and kind != "FSDP":
        # DDP / DeepSpeed recompute is the Trainer's --gradient_checkpointing, which the export writes in its
        # comment (a breaker's round trip of a recomputing hf-deepspeed plan came back at 71.7 GiB instead of 25.3)
        values["recompute"] = "full"
    if not trainer:
        notes.append("the batch is a Trainer argument, not in this file: micro batch read as 1 (give --microbatch-size, "
                     "the Trainer's --per_device_train_batch_size), no global batch or sequence length (give "
                     "--global-batch, --seq-len)")
    acc = trainer.get("gradient_accumulation_steps")
    batch = values["dp"] * values["microbatch_size"] * acc if isinstance(acc, int) and acc >= 1 else None
    precision = _precision(cfg)
    seq = trainer.get("max_length")
    return Imported(parallel_from(values), devices=n, seq_len=seq if isinstance(seq, int) else None,
                    global_batch=batch, framework=framework, precision=precision, notes=tuple(notes))


def _precision(cfg: dict) -> str:
    """The precision policy of ``mixed_precision`` (:data:`PRECISIONS`; absent: 'no', fp32).

    Raises:
        ConfigError: a value Accelerate refuses (``utils/dataclasses.py`` PrecisionType: no, fp16, bf16, fp8;
            breaker pass 57: 'fp4' was read with a note).
    """
    value = cfg.get("mixed_precision", "no")
    precision = PRECISIONS.get(str(value).lower())
    if precision is None:
        raise ConfigError(f"Accelerate mixed_precision={short_repr(value)}: Accelerate refuses it; legal: "
                          f"{', '.join(PRECISIONS)}", field="mixed_precision", value=value, legal=list(PRECISIONS))
    return precision


def _check_launch(cfg: dict, n: int, machines: int) -> None:
    """Refuse what ``accelerate launch`` would not run as ``n`` accelerators: ``use_cpu: true`` (a CPU run) and
    ``num_processes`` not a multiple of ``num_machines`` (each machine starts num_processes / num_machines; under a
    HYBRID strategy one machine's processes are one shard group).

    Raises:
        ConfigError: naming the key and the legal values.
    """
    if cfg.get("use_cpu") is True:
        raise ConfigError("Accelerate use_cpu: true trains on CPUs, which the planner does not price; legal: false",
                          field="use_cpu", value=True, legal=[False])
    if n % machines:
        legal = [m for m in range(1, n + 1) if n % m == 0]
        raise ConfigError(f"Accelerate num_processes={n} is not a multiple of num_machines={machines} (each machine "
                          f"launches num_processes / num_machines); legal num_machines: "
                          f"{', '.join(map(str, legal[:12]))}", field="num_machines", value=machines, legal=legal)


def _offload_device(ds: dict, key: str, notes: list[str]) -> bool:
    """Whether ``deepspeed_config.<key>`` offloads: Accelerate passes it to DeepSpeed, whose devices are
    :data:`shardplan.export.deepspeed.OFFLOAD_DEVICES` (YAML's null read as none); cpu or nvme (``nvme_offload``,
    :func:`_layout`).

    Raises:
        ConfigError: a device Accelerate does not offer, naming the key and the legal devices.
    """
    value = ds.get(key, "none")
    device = str(value).lower() if isinstance(value, str) else value
    device = "none" if device in (None, "null") else device
    if device not in OFFLOAD_DEVICES:
        raise ConfigError(f"Accelerate deepspeed_config.{key}={short_repr(value)}; legal: "
                          f"{', '.join(OFFLOAD_DEVICES)}", field=key, value=short_repr(value),
                          legal=list(OFFLOAD_DEVICES))
    return device != "none"


def _layout(cfg: dict, kind: str, n: int, machines: int, notes: list[str]) -> tuple[dict, str]:
    """(layout values, profile) of an Accelerate config's distributed type.

    Raises:
        ConfigError: FSDP ``fsdp_offload_params`` below ZeRO-3 (SHARD_GRAD_OP, NO_SHARD, reshard-after-forward
            false: not priced), a bad strategy, stage or degrees.
    """
    if kind == "DEEPSPEED":
        ds = section(cfg, "deepspeed_config", "Accelerate")
        if ds.get("deepspeed_config_file"):
            # Accelerate then takes the ZeRO stage, offload and batch from that file and ignores its own keys: reading
            # zero_stage's default 0 here priced LLaMA-Factory's ZeRO-3 offload launch at 1,293 GiB per device
            raise ConfigError(f"Accelerate deepspeed_config.deepspeed_config_file={short_repr(ds['deepspeed_config_file'])}"
                              ": the ZeRO stage, offload and batch are in that ds_config, which this file only names; "
                              "legal: import the ds_config itself (shardplan import --from deepspeed FILE -n N), or "
                              "give zero_stage (and the offload devices) in deepspeed_config instead",
                              field="deepspeed_config_file", value=short_repr(ds["deepspeed_config_file"]),
                              legal=["(not given)"])
        stage = whole(ds, "zero_stage", "Accelerate", 0, least=0, most=3, where="deepspeed_config.")
        params, offload = (_offload_device(ds, key, notes) for key in ("offload_param_device",
                                                                        "offload_optimizer_device"))
        if params and stage != 3:
            notes.append(f"deepspeed_config.offload_param_device={ds['offload_param_device']!r} is ignored at "
                         f"zero_stage {stage}: DeepSpeed offloads parameters only under ZeRO-3")
        offload, params = offload and stage > 0, params and stage == 3
        used = {key: str(ds.get(key, "")).lower() for key, on in
                (("offload_optimizer_device", offload), ("offload_param_device", params)) if on}
        nvme = "nvme" in used.values()  # ZeRO-Infinity: priced as host offload, not counted in host memory
        mixed = [k for k, d in used.items() if d != "nvme"] if nvme else []
        if mixed:  # the plan has one nvme_offload field (as the ds_config importer records it)
            notes.append(f"deepspeed_config.{mixed[0]}={used[mixed[0]]!r} beside NVMe: recorded as nvme_offload for "
                         "both (host memory is not checked for either; an export writes both to NVMe)")
        return dict(dp=n, zero_stage=stage, offload_optimizer=offload, offload_params=params,
                    nvme_offload=nvme), "hf-deepspeed"
    if kind != "FSDP":
        return dict(dp=n, zero_stage=0), "hf-fsdp"
    fsdp = section(cfg, "fsdp_config", "Accelerate")
    version = whole(fsdp, "fsdp_version", "Accelerate", 1, most=2, where="fsdp_config.")
    offload = flag(fsdp, "fsdp_offload_params", "Accelerate", False, "fsdp_config.")
    stage, hybrid = _fsdp_stage(fsdp, version)
    if offload and stage != 3:
        raise ConfigError(f"Accelerate fsdp_config.fsdp_offload_params=true with ZeRO-{stage} sharding: CPU offload is "
                          "priced with FULL_SHARD (fsdp_reshard_after_forward true / FULL_SHARD / HYBRID_SHARD) only; "
                          "legal: fsdp_offload_params false, or a fully sharded strategy",
                          field="fsdp_offload_params", value=True, legal=[False])
    dp, shard, tp, cp = _degrees(cfg, n, hybrid, machines)
    if shard > 1 and dp % shard:
        raise ConfigError(f"Accelerate dp_shard_size={shard} does not divide dp={dp}; legal: {fmt_legal(divisors(dp))}",
                          field="dp_shard", value=shard, legal=divisors(dp))
    recompute = "full" if flag(fsdp, "fsdp_activation_checkpointing", "Accelerate", False, "fsdp_config.") else "none"
    values = dict(dp=dp, zero_stage=stage, dp_shard=shard if stage else None, tp=tp, cp=cp, recompute=recompute,
                  offload_optimizer=offload, offload_params=offload)
    return values, "hf-fsdp"


EXPORTER = Exporter(name="accelerate", title="Hugging Face Accelerate", source=SOURCE, suffix=".yaml", expresses=("offload_optimizer", "offload_params", "nvme_offload"),
                    write=write, read=read, precisions=tuple(PRECISIONS.values()),
                    seq_key="max_length (a Trainer argument)",
                    search_pins={"pp": 1, "ep": 1, "sp": False, "cp": 1})
