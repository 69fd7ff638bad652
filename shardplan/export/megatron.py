"""Megatron-LM / NeMo (Megatron-Core) command-line arguments.

Source of the option names: NVIDIA/Megatron-LM ``megatron/training/arguments.py`` (commit 000c4ac,
read): ``_add_distributed_args`` -- ``--tensor-model-parallel-size``, ``--pipeline-model-parallel-size``,
``--decoder-first-pipeline-num-layers``, ``--decoder-last-pipeline-num-layers``,
``--num-layers-per-virtual-pipeline-stage``, ``--num-virtual-stages-per-pipeline-rank``,
``--overlap-grad-reduce``, ``--use-distributed-optimizer``, ``--use-megatron-fsdp``,
``--data-parallel-sharding-strategy {no_shard,optim,optim_grads,optim_grads_params}``,
``--num-distributed-optimizer-instances`` ("Number of Distributed Optimizer copies across Data
Parallel domain"), ``--context-parallel-size``; ``_add_training_args`` -- ``--micro-batch-size``,
``--global-batch-size``, ``--recompute-granularity {full,selective}`` (selective recomputes
``--recompute-modules``, default core_attn), ``--recompute-method {uniform,block}``,
``--recompute-num-layers``, ``--tp-comm-overlap``, ``--optimizer-cpu-offload``, ``--cpu-offloading``,
``--cpu-offloading-num-layers``,
``--sequence-parallel``; ``_add_mixed_precision_args`` -- ``--bf16``,
``--accumulate-allreduce-grads-in-fp32``, ``--grad-reduce-in-bf16`` (validate_args: ``--bf16`` alone accumulates
and reduces gradients in fp32; written for every policy with bf16 gradients, and read: ``--bf16`` without it is
bf16-mixed-fp32-grads); ``_add_moe_args`` -- ``--expert-model-parallel-size``,
``--expert-tensor-parallel-size``, ``--moe-token-dispatcher-type``, ``--moe-enable-deepep``;
``_add_data_args`` -- ``--seq-length``. Not in the parts read:
``--fp8-format`` (Transformer Engine arguments) and whether ``--num-distributed-optimizer-instances``
also makes Megatron-FSDP hybrid (HSDP). NeMo 2 passes the same values through ``MegatronStrategy``
(tensor_model_parallel_size, ...); the flags are what ``pretrain_gpt.py`` reads.

Mapping (planner -> flag): tp -> ``--tensor-model-parallel-size``; pp -> ``--pipeline-model-parallel-size``;
interleaved -> ``--num-layers-per-virtual-pipeline-stage``; an uneven split with equal middle stages ->
``--decoder-first/last-pipeline-num-layers``; any other split (middle stages that differ, a first or last
stage holding only the embedding or the loss, chunks of unequal size) -> ``--pipeline-model-parallel-layout``
(read back too, with its repeats);
cp -> ``--context-parallel-size`` (cp_comm 'a2a' -> ``--cp-comm-type a2a``); ep ->
``--expert-model-parallel-size`` with ``--expert-tensor-parallel-size`` etp (tp when unset) and
``--moe-token-dispatcher-type alltoall``, or ``flex --moe-enable-deepep`` for moe_dispatcher='deepep';
sp -> ``--sequence-parallel``; ZeRO-1 -> ``--use-distributed-optimizer``, ZeRO-2/3 -> Megatron-FSDP
``optim_grads`` / ``optim_grads_params`` with the flags Megatron-LM's Megatron-FSDP user guide lists as
required (``--use-distributed-optimizer --no-gradient-accumulation-fusion --ckpt-format fsdp_dtensor``,
``CUDA_DEVICE_MAX_CONNECTIONS`` unset; otherwise ``=1`` when tp or cp > 1); HSDP -> ``--num-distributed-optimizer-instances dp/dp_shard``;
recompute -> ``--recompute-granularity`` (+ ``--recompute-method uniform --recompute-num-layers 1`` for
full, ``--recompute-method block --recompute-num-layers N`` with recompute_layers N; read back: block with N
layers is recompute_layers N, uniform recomputes every layer; recompute_modules -> ``--recompute-modules``); ``--micro-batch-size``, ``--global-batch-size``,
``--seq-length``;
overlap_grad_reduce -> ``--overlap-grad-reduce``, at ZeRO-1 with ``--overlap-param-gather`` where the profile hides
the parameter AllGather (``param_gather_overlap``; a script without it imports with
``+param_gather_overlap=False``); an MoE model -> ``--moe-grouped-gemm``; tp_overlap -> ``--tp-comm-overlap``;
offload_optimizer -> ``--optimizer-cpu-offload``; offload_activation_layers -> ``--cpu-offloading-num-layers``
(the only flag at 000c4ac: validate_args turns ``cpu_offloading`` on when it is above 0; an older release's
``--cpu-offloading`` switch is still read on import); offload_modules -> ``--fine-grained-activation-offloading
--offload-modules`` (flags of Megatron-LM releases after 000c4ac, whose arguments.py does not define them; the file's
header says so; ``--offload-modules`` without the switch is ignored on import, as Megatron-LM ignores it); the
profile's in-place loss (``--framework megatron+loss=in_place``) -> ``--cross-entropy-loss-fusion
--cross-entropy-fusion-impl te`` (:data:`CE_FLAGS`, read back as that profile). dp is implied: world size / (tp pp cp), the world size
from the ``torchrun --nnodes --nproc-per-node`` line. No GPipe or ZB-H1 schedule (Megatron-LM runs
1F1B or interleaved 1F1B). Import reads a negative ``--moe-expert-capacity-factor`` as dropless, as Megatron-core's
``TransformerConfig.__post_init__`` does (NVIDIA/Megatron-LM ``megatron/core/transformer/transformer_config.py``), and
refuses nan / inf.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import re
import shlex

import yaml

from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.export.base import (COMPUTED, NOT_A_RUN, UNSET_IN_TESTS, ExportContext, Exporter, Imported,
                                   check_unexpressed, comment_block, expand_variables, parallel_from, refuse,
                                   runs_command, sbatch_env, shell_pieces, shell_words, strip_comments,
                                   without_heredocs)
from shardplan.parallel import ParallelConfig, check_activation_offload, check_offload_modules
from shardplan.presets.frameworks import FRAMEWORKS

SOURCE = "Megatron-LM megatron/training/arguments.py (commit 000c4ac)"
_ALT: dict[str, str] = {}  # Megatron-LM writes every option the planner has
_FSDP = {2: "optim_grads", 3: "optim_grads_params"}


def _pipeline_args(ctx: ExportContext) -> list[str]:
    """--pipeline-model-parallel-size, the virtual-stage and uneven-split flags, and
    --no-overlap-p2p-communication for an interleaved plan priced with blocking sends (megatron-legacy)."""
    args = _pipeline_split_args(ctx)
    if args and ctx.p.schedule == "interleaved" and not ctx.training.framework.pp_p2p_overlap:
        # arguments.py: overlap_p2p_comm is on by default for interleaved schedules
        args.append("--no-overlap-p2p-communication")
    return args


def _pipeline_split_args(ctx: ExportContext) -> list[str]:
    """--pipeline-model-parallel-size, the virtual-stage and uneven-split flags."""
    p, split = ctx.p, ctx.layout.stage_layers
    if p.pp == 1:
        return []
    if p.schedule in ("gpipe", "zero-bubble", "dualpipe"):
        raise refuse("Megatron-LM", f"schedule={p.schedule!r} (it runs 1F1B or interleaved 1F1B)",
                     {"gpipe": "torchtitan (GPipe)", "zero-bubble": "no exporter (ZB-H1: the zero-bubble fork of "
                      "Megatron-LM by Sea AI Lab)"}.get(p.schedule, "no exporter (DualPipe: deepseek-ai/DualPipe, "
                                                                    "wired into your own training loop)"))
    args = ["--pipeline-model-parallel-size", str(p.pp)]
    middle, v = split[1:-1], p.virtual_stages
    # --num-layers-per-virtual-pipeline-stage is one chunk size for every stage: with virtual stages the flags
    # express only an even split (an uneven one, e.g. [18, 14] at v=2, has chunks of 9 and 7)
    flags_express = 0 not in split and len(set(middle)) <= 1 and (v == 1 or len(set(split)) == 1) \
        and split[0] % v == 0
    if not flags_express:
        # a stage with only the embedding or the loss, middle stages that differ, or chunks of unequal size:
        # Megatron-core's explicit layout (quoted: '|' is a shell pipe)
        layout = pipeline_layout(split, ctx.estimate.model.mtp_modules, v)
        return args + ["--pipeline-model-parallel-layout", shlex.quote(layout)]
    if len(set(split)) > 1:
        args += ["--decoder-first-pipeline-num-layers", str(split[0]),
                 "--decoder-last-pipeline-num-layers", str(split[-1])]
    if v > 1:
        args += ["--num-layers-per-virtual-pipeline-stage", str((middle or split)[0] // v)]
    return args


def pipeline_layout(split: tuple[int, ...], mtp_modules: int = 0, virtual_stages: int = 1) -> str:
    """Megatron-core's ``--pipeline-model-parallel-layout`` of a split (megatron/core/transformer/
    pipeline_parallel_layer_layout.py): one ``|``-separated entry per virtual stage, chunk ``c`` of rank ``r``
    at entry ``c x pp + r``; ``E`` the embedding, ``t`` a transformer layer, ``m`` a multi-token-prediction
    module, ``L`` the loss. A rank's layers fill its chunks as :func:`shardplan.parallel.chunk_layers` does,
    the first rank's lightest chunk first (it holds the embedding) and the last rank's lightest last (the
    loss). Examples: (1, 2, 0) -> ``Et|tt|L``, with one MTP module ``Et|tt|mL``; (3, 4, 4, 2) with 2
    virtual stages (chunks [1, 2], [2, 2], [2, 2], [1, 1]) -> ``Et|tt|tt|t|tt|tt|tt|tL``."""
    from shardplan.parallel import chunk_layers
    pp = len(split)
    rows = [list(c) for c in chunk_layers(split, virtual_stages)]
    if pp > 1:
        rows[0].sort()
        rows[-1].sort(reverse=True)
    entries = []
    for c in range(virtual_stages):
        for r in range(pp):
            entry = ("E" if (r, c) == (0, 0) else "") + "t" * rows[r][c]
            entries.append(entry + ("m" * mtp_modules + "L" if (r, c) == (pp - 1, virtual_stages - 1) else ""))
    return "|".join(entries)


def parse_pipeline_layout(text: str, pp: int) -> tuple[tuple[int, ...], int]:
    """(layers per pipeline rank, virtual stages) of a ``--pipeline-model-parallel-layout`` string
    (:func:`layout_entries`, :func:`layout_chunks`). Example: ``Et|(tt|)*2L`` with pp 4 -> (1, 2, 2, 0), 1.

    Raises:
        ConfigError: as :func:`layout_entries`.
    """
    entries = layout_entries(text, pp)
    return tuple(sum(chunks) for chunks in layout_chunks(entries, pp)), len(entries) // pp


def layout_entries(text: str, pp: int) -> list[str]:
    """The ``|`` entries of a ``--pipeline-model-parallel-layout`` string: ``(...)*N`` and ``X*N`` repeats
    expanded, split at ``|`` (``,`` ignored, a trailing ``|`` dropped), ``pp x v`` of them. Example: ``Et|(tt|)*2L``
    -> ['Et', 'tt', 'tt', 'L'].

    Raises:
        ConfigError: a character other than E t m L | , ( ) * digits, E not first or L not last (or either not
            once), or an entry count that pp does not divide.
    """
    s = text.replace(" ", "").replace(",", "")
    if not re.fullmatch(r"[EtmL|()*0-9]*", s):
        raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)}: only E, t, m, L, |, (...)*N and X*N "
                          "are read", field="pp_layers", value=text)
    limit = 1_000_000  # characters after expansion: far beyond any real model's layers x stages

    def repeat(m: re.Match) -> str:
        if len(m.group(1)) * int(m.group(2)) > limit:
            raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)}: the repeat "
                              f"{short_repr(m.group(0))} expands past {limit:,} characters", field="pp_layers",
                              value=text)
        return m.group(1) * int(m.group(2))
    while True:
        expanded = re.sub(r"\(([^()]*)\)\*(\d{1,9})(?!\d)", repeat, s)
        expanded = re.sub(r"([EtmL])\*(\d{1,9})(?!\d)", repeat, expanded)
        if len(expanded) > limit:
            raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)} expands past {limit:,} "
                              "characters", field="pp_layers", value=text)
        if expanded == s:
            break
        s = expanded
    if re.search(r"[()*0-9]", s):
        raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)}: an unbalanced '(' / ')' or a repeat "
                          "count without '(...)*' or a layer letter before it", field="pp_layers", value=text)
    flat = s.replace("|", "")
    if flat and (flat[0] != "E" or flat[-1] != "L" or flat.count("E") != 1 or flat.count("L") != 1):
        # Megatron-core pipeline_parallel_layer_layout.py validate_layer_layout: "The first layer must be embedding",
        # "The last layer must be loss", each specified exactly once
        raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)}: Megatron-LM needs the embedding E "
                          "first and the loss L last, each once (it asserts on any other layout); legal: a layout "
                          "such as Et|(tt|)*2L", field="pp_layers", value=text)
    entries = s.split("|")
    if entries and entries[-1] == "":
        entries = entries[:-1]
    if not entries or len(entries) % pp:
        raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(text)} has {len(entries)} stages, not a "
                          f"multiple of pp={pp}", field="pp_layers", value=text)
    return entries


def layout_chunks(entries: list[str], pp: int) -> tuple[tuple[int, ...], ...]:
    """Transformer layers (``t``) of each virtual chunk per pipeline rank, from a layout's expanded ``|`` entries
    (``pp x v`` of them; rank ``r``'s chunks are entries ``r, r + pp, ...``, Megatron-core's order). Example: the
    entries of ``Et*15|t*15|t|tL`` with pp 2 -> ((15, 1), (15, 1))."""
    v = len(entries) // pp
    return tuple(tuple(entries[c * pp + r].count("t") for c in range(v)) for r in range(pp))


def _dp_args(ctx: ExportContext) -> list[str]:
    """ZeRO stage and HSDP flags."""
    p = ctx.p
    args = []
    if p.zero_stage == 1:
        args.append("--use-distributed-optimizer")
    elif p.zero_stage in _FSDP:  # the flags the Megatron-FSDP user guide lists as required
        if p.pp > 1 and p.zero_stage not in FRAMEWORKS["megatron"].pipeline_zero_stages:  # (its source there)
            raise refuse("Megatron-LM", f"zero_stage={p.zero_stage} with pp={p.pp} (Megatron-FSDP runs with TP, EP and "
                         "CP, not with pipeline parallelism)", "torchtitan (FSDP2 with pipelining)")
        args += ["--use-megatron-fsdp", "--data-parallel-sharding-strategy", _FSDP[p.zero_stage],
                 "--use-distributed-optimizer", "--no-gradient-accumulation-fusion", "--ckpt-format", "fsdp_dtensor"]
    if p.zero_stage and p.dp_shard != p.dp:
        args += ["--num-distributed-optimizer-instances", str(p.dp // p.dp_shard)]
    if p.overlap_grad_reduce:
        args.append("--overlap-grad-reduce")
        if p.zero_stage == 1 and ctx.training.framework.param_gather_overlap:
            # the profile hides the distributed optimizer's parameter AllGather behind the next forward, which
            # Megatron-LM does with --overlap-param-gather (arguments.py: default False; validate_args requires the
            # distributed optimizer and --overlap-grad-reduce); without it the gather blocks after the step
            args.append("--overlap-param-gather")
    if p.offload_optimizer:
        # Megatron-LM arguments.py: --optimizer-cpu-offload asserts --use-precision-aware-optimizer, which
        # OptimizerConfig.__post_init__ allows only with --use-distributed-optimizer (written for ZeRO-1 and for
        # Megatron-FSDP's stages)
        if p.zero_stage == 0:
            raise refuse("Megatron-LM", "offload_optimizer with zero_stage=0 (its --optimizer-cpu-offload needs the "
                         "precision-aware optimizer, which runs only with the distributed optimizer: zero_stage 1, 2 "
                         "or 3)", "Megatron-LM at zero_stage=1")
        args += ["--optimizer-cpu-offload", "--use-precision-aware-optimizer"]
    if p.offload_activation_layers:
        # arguments.py (000c4ac) defines --cpu-offloading-num-layers only; validate_args sets cpu_offloading = True
        # when it is above 0 (a --cpu-offloading switch, older releases', is an unknown argument there)
        args += ["--cpu-offloading-num-layers", str(p.offload_activation_layers)]
    if p.offload_modules:
        args += ["--fine-grained-activation-offloading", "--offload-modules", *p.offload_modules]
    return args


#: --bf16 alone makes Megatron-LM accumulate and reduce gradients in fp32 (arguments.py validate_args: "bfloat16
#: requires gradient accumulation and all-reduce to be done in fp32" unless --grad-reduce-in-bf16): the policies
#: with bf16 gradients say --grad-reduce-in-bf16, so the job keeps the 2-byte gradients the plan priced
_BF16_GRADS = ["--bf16", "--grad-reduce-in-bf16"]
#: precision policy -> Megatron-LM flags (arguments.py _add_mixed_precision_args: --fp8-param-gather for fp8 primary
#: weights, --fp4-format / --fp4-recipe for NVFP4 linear layers)
PRECISION_FLAGS: dict[str, list[str]] = {
    "bf16-mixed": _BF16_GRADS, "bf16-mixed-fp32-grads": ["--bf16", "--accumulate-allreduce-grads-in-fp32"],
    "fp8-mixed": [*_BF16_GRADS, "--fp8-format", "hybrid"],
    "fp8-params": [*_BF16_GRADS, "--fp8-format", "hybrid", "--fp8-param-gather"],
    "nvfp4-mixed": [*_BF16_GRADS, "--fp4-format", "e2m1", "--fp4-recipe", "nvfp4"],
    # --fp16 keeps fp16 gradients unless --accumulate-allreduce-grads-in-fp32 (arguments.py: only --bf16 forces it)
    "fp16-mixed": ["--fp16"], "fp16-mixed-fp32-grads": ["--fp16", "--accumulate-allreduce-grads-in-fp32"]}


def _moe_args(ctx: ExportContext) -> list[str]:
    """The MoE flags of a plan: expert parallelism, the dispatcher the planner priced, Combined 1F1B, token dropping.

    Raises:
        ConfigError: an MoE model with tp > 1 and no sequence parallelism (arguments.py validate_args: "When using MoE
            and tensor parallelism, sequence parallelism must be used"), a capacity factor with the DeepEP dispatcher.
    """
    p, tr, args = ctx.p, ctx.training, []
    if ctx.estimate.model.is_moe and p.tp > 1 and not p.sp:
        raise refuse("Megatron-LM", f"an MoE model with tp={p.tp} and no sequence parallelism (validate_args: "
                     "\"When using MoE and tensor parallelism, sequence parallelism must be used\"); plan it with --sp",
                     "no other exporter")
    if ctx.estimate.model.is_moe:
        # arguments.py _add_moe_args: --moe-grouped-gemm (default off: SequentialMLP, one expert after another)
        # runs the local experts as TE GroupedLinear, as the Megatron-Bridge recipes the MoE costs were fitted on do;
        # the plan is priced with balanced routing (TrainingSpec.moe_imbalance), what auxiliary-loss balancing
        # approaches, and --moe-aux-loss-coeff defaults to 0.0 (no balancing loss): the Megatron-Core MoE README's
        # example coefficient, 1e-2, with its aux_loss type (the default, written to say it), unless the model's
        # config.json gives its own (router_aux_loss_coef: 0.001 for Qwen3-30B-A3B; new-user pass 56 found 1e-2
        # written over it)
        coef = ctx.estimate.model.router_aux_loss_coef
        args += ["--moe-grouped-gemm", "--moe-router-load-balancing-type", "aux_loss", "--moe-aux-loss-coeff",
                 "1e-2" if coef is None else repr(coef)]
    if p.ep > 1:
        args += ["--expert-model-parallel-size", str(p.ep), "--expert-tensor-parallel-size", str(p.expert_tp)]
        # the dispatcher the planner priced (Megatron-LM's default is allgather)
        args += (["--moe-token-dispatcher-type", "flex", "--moe-enable-deepep"] if p.moe_dispatcher == "deepep"
                 else ["--moe-token-dispatcher-type", p.moe_dispatcher])
        if p.moe_a2a_overlap:  # arguments.py _add_moe_args (Megatron-Core 0.14+): Combined 1F1B
            args.append("--overlap-moe-expert-parallel-comm")
    if tr.moe_capacity_factor is not None and ctx.estimate.model.is_moe:
        if p.moe_dispatcher == "deepep":  # TransformerConfig: "Flex token dispatcher does not support" padding
            raise refuse("Megatron-LM", "moe_capacity_factor with moe_dispatcher='deepep' (its flex dispatcher does "
                         "not pad expert inputs to capacity)", "no exporter; the alltoall dispatcher")
        # arguments.py _add_moe_args: token dropping at this capacity per expert (dropless when unset), each expert's
        # input padded to it, the fixed buffer the planner prices (TrainingSpec.moe_capacity_factor)
        args += ["--moe-expert-capacity-factor", repr(tr.moe_capacity_factor), "--moe-pad-expert-input-to-capacity"]
    return args


def _cp_comm_args(ctx: ExportContext) -> list[str]:
    """``--cp-comm-type`` of context parallelism: ``a2a`` for DeepSpeed-Ulysses (``cp_comm`` 'a2a'), ``p2p`` for the
    ring (Megatron-LM's default, written so the script says which one the plan priced: new-user pass 56b looked for
    it). Transformer Engine's a2a path needs the KV heads of a tp rank divisible by cp (it does not replicate them as
    DeepSpeed does).

    Raises:
        ConfigError: KV heads per tp rank not divisible by cp.
    """
    p, m = ctx.p, ctx.estimate.model
    if p.cp == 1:
        return []
    if p.cp_comm != "a2a":
        return ["--cp-comm-type", "p2p"]
    g_r = m.kv_heads_per_rank(p.tp)
    if g_r % p.cp:
        raise refuse("Megatron-LM", f"cp={p.cp} with cp_comm='a2a' over {g_r} KV heads per tp rank (Transformer "
                     "Engine's a2a context parallelism splits the KV heads over cp and needs them divisible; it does "
                     "not replicate them)", "DeepSpeed (Ulysses replicates KV heads), or cp_comm='ring',")
    return ["--cp-comm-type", "a2a"]


#: ModelSpec fields with a value Megatron-LM's GPT model flags do not express (MLA, sliding windows, sinks, QKV
#: clipping, extra norms, biases beyond --add-bias-linear / --add-qkv-bias, MTP): such a model gets no architecture
#: flags (the user's own, as the file's last line says), rather than flags of another model
_UNEXPRESSED_SHAPE = ("kv_lora_rank", "q_lora_rank", "sliding_window", "clip_qkv")


def rope_scaling_args(m) -> list[str]:
    """Megatron-LM's RoPE scaling flags of a model (arguments.py _add_network_size_args): Llama 3.x's 'llama3' scaling
    as ``--use-rope-scaling --rope-scaling-factor F`` (default factor 8.0), a 'linear' scaling of a whole factor as
    ``--rotary-seq-len-interpolation-factor N`` (type=int); [] for an unscaled model or a scaling those flags do not
    express (yarn, dynamic, longrope: the user's own flags)."""
    if m.position != "rope" or m.rope_scaling_type is None:
        return []
    factor = m.rope_scaling_factor
    if m.rope_scaling_type == "llama3":
        return ["--use-rope-scaling"] + (["--rope-scaling-factor", f"{factor:g}"] if factor is not None else [])
    if m.rope_scaling_type == "linear" and factor is not None and factor == int(factor):
        return ["--rotary-seq-len-interpolation-factor", str(int(factor))]
    return []


def model_args(model, seq_len: int) -> list[str]:
    """Megatron-LM's architecture flags of a standard GPT-style ModelSpec (arguments.py _add_network_size_args and
    _add_moe_args; a new user found the exported script without them): --hidden-size, --ffn-hidden-size,
    --num-attention-heads, --group-query-attention / --num-query-groups (fewer KV heads), --kv-channels (a head width
    other than hidden / heads), --max-position-embeddings (at least --seq-length, as validate_args asserts),
    --position-embedding-type, --normalization, --rotary-base / --norm-epsilon (where the model gives rope_theta /
    norm_eps), the RoPE scaling flags (:func:`rope_scaling_args`), --swiglu, --untie-embeddings-and-output-weights,
    --disable-bias-linear / --add-qkv-bias, --qk-layernorm (a per-head QK norm, ``qk_norm='head'``: Qwen3; Megatron-Core's
    SelfAttention builds q_layernorm / k_layernorm with hidden_size=hidden_size_per_attention_head,
    megatron/core/transformer/attention.py), and for MoE --num-experts, --moe-router-topk, --moe-ffn-hidden-size,
    --moe-shared-expert-intermediate-size and --moe-layer-freq (leading dense layers). [] for a model with a feature
    those flags do not express (:data:`_UNEXPRESSED_SHAPE`, attention sinks, MTP, QK norms, extra norms or biases):
    its flags are the user's. The vocabulary comes from the tokenizer (not written)."""
    m = model
    if (any(getattr(m, f) is not None for f in _UNEXPRESSED_SHAPE) or m.attention_sinks or m.mtp_modules
            or m.qk_norm == "full" or m.norms_per_layer != 2 or m.embedding_norm or m.mlp_bias or m.router_bias
            or m.attn_out_bias or m.lm_head_bias or m.position == "alibi"):
        # the expert flags still go: the plan's --expert-model-parallel-size needs --num-experts (validate_args);
        # and the MTP depth, which the layout's 'm' entries need (arguments.py --mtp-num-layers)
        return moe_model_args(m) + (["--mtp-num-layers", str(m.mtp_modules)] if m.mtp_modules else [])
    kv = m.n_kv_heads or m.n_heads
    args = ["--hidden-size", str(m.d_model), "--ffn-hidden-size", str(m.ffn_dim), "--num-attention-heads", str(m.n_heads)]
    if kv < m.n_heads:
        args += ["--group-query-attention", "--num-query-groups", str(kv)]
    if m.head_dim is not None and m.head_dim != m.d_model // m.n_heads:
        args += ["--kv-channels", str(m.head_dim)]
    args += ["--max-position-embeddings", str(max(seq_len, m.context_length, m.max_position_embeddings)),
             "--position-embedding-type", "rope" if m.position == "rope" else "learned_absolute",
             "--normalization", "RMSNorm" if m.norm == "rmsnorm" else "LayerNorm"]
    if m.position == "rope" and m.rope_theta is not None and m.rope_theta == int(m.rope_theta):
        args += ["--rotary-base", str(int(m.rope_theta))]  # arguments.py: type=int, default 10000
    args += rope_scaling_args(m)
    if m.norm_eps is not None:
        args += ["--norm-epsilon", repr(m.norm_eps)]  # arguments.py _add_network_size_args: default 1e-5
    if m.mlp == "swiglu":
        args.append("--swiglu")
    if not m.tied_embeddings:
        args.append("--untie-embeddings-and-output-weights")
    if not m.linear_bias:
        args.append("--disable-bias-linear")
        if m.qkv_bias:
            args.append("--add-qkv-bias")
    if m.qk_norm == "head":
        args.append("--qk-layernorm")
    return args + moe_model_args(m)


def moe_model_args(m) -> list[str]:
    """Megatron-LM's expert flags of an MoE ModelSpec (arguments.py _add_moe_args): --num-experts, --moe-router-topk,
    --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size (shared experts) and --moe-layer-freq where some
    layers are dense (leading dense layers, or every ``moe_layer_step``-th layer an MoE one), as the per-layer 0 / 1
    list expression moe_freq_type evaluates; [] for a dense model. Written also for a model whose other shape flags
    are the user's (:data:`_UNEXPRESSED_SHAPE`): ``--expert-model-parallel-size`` without ``--num-experts`` fails
    validate_args (a new user's DeepSeek-V3 export)."""
    if not m.is_moe:
        return []
    args = ["--num-experts", str(m.n_experts), "--moe-router-topk", str(m.top_k),
            "--moe-ffn-hidden-size", str(m.expert_ffn_dim or m.ffn_dim)]
    if m.n_shared_experts:
        args += ["--moe-shared-expert-intermediate-size", str(m.n_shared_experts * (m.expert_ffn_dim or m.ffn_dim))]
    if m.moe_layer_step != 1:
        pattern = ",".join("1" if m.is_moe_layer(i) else "0" for i in range(m.n_layers))
        args += ["--moe-layer-freq", shlex.quote(f"[{pattern}]")]
    elif m.n_dense_layers:
        # a Python list expression (arguments.py moe_freq_type), quoted for the bash array
        args += ["--moe-layer-freq", shlex.quote(f"[0]*{m.n_dense_layers}+[1]*{m.n_layers - m.n_dense_layers}")]
    return args


def megatron_args(ctx: ExportContext) -> list[str]:
    """The Megatron-LM flags of a plan, one flag (with its value) after another.

    Raises:
        ConfigError: GPipe / ZB-H1, a split whose middle stages differ, kv_replication.
    """
    p, tr = ctx.p, ctx.training
    check_unexpressed(p, EXPORTER, _ALT)
    args = ["--num-layers", str(ctx.estimate.model.n_layers), *model_args(ctx.estimate.model, tr.seq_len),
            "--tensor-model-parallel-size", str(p.tp)]
    args += _pipeline_args(ctx)
    args += ["--context-parallel-size", str(p.cp)] + _cp_comm_args(ctx)
    args += _moe_args(ctx)
    if p.sp:
        args.append("--sequence-parallel")
    if p.tp_overlap:
        args.append("--tp-comm-overlap")
    args += _dp_args(ctx)
    if p.recompute == "selective":
        args += ["--recompute-granularity", "selective"]
        if p.recompute_modules:
            args += ["--recompute-modules", *p.recompute_modules]
    elif p.recompute == "full":
        args += (["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
                 if p.recompute_layers is None else
                 ["--recompute-granularity", "full", "--recompute-method", "block", "--recompute-num-layers",
                  str(p.recompute_layers)])
    args += ["--micro-batch-size", str(p.microbatch_size), "--global-batch-size", str(tr.global_batch_size),
             "--seq-length", str(tr.seq_len)]
    # dropout written out both ways: Megatron-LM's own default is 0.1 for both (arguments.py
    # _add_regularization_args: --attention-dropout / --hidden-dropout default=0.1), which a plan priced
    # without dropout would not get otherwise
    rate = str(MEGATRON_DROPOUT if tr.dropout else 0.0)
    args += ["--attention-dropout", rate, "--hidden-dropout", rate]
    if tr.attention == "naive":  # arguments.py --attention-backend (flash, fused, unfused, local, auto; default auto)
        args += ["--attention-backend", "unfused"]
    if tr.framework.loss == "in_place":  # the loss the profile prices (CE_FLAGS)
        args += CE_FLAGS
    if tr.optimizer_dtype == "bf16-moments":  # Megatron-LM arguments.py _add_mixed_precision_args
        if p.zero_stage != 1:
            # OptimizerConfig.__post_init__: the precision-aware optimizer only with the distributed optimizer
            raise refuse("Megatron-LM", f"optimizer_dtype='bf16-moments' with zero_stage={p.zero_stage} (its "
                         "precision-aware optimizer runs only with the distributed optimizer, zero_stage=1)",
                         "no other exporter")
        aware = [] if p.offload_optimizer else ["--use-precision-aware-optimizer"]  # written with the offload then
        args += [*aware, "--exp-avg-dtype", "bf16", "--exp-avg-sq-dtype", "bf16"]
    if tr.precision.name == "fp8-params" and p.zero_stage == 0:
        # arguments.py (000c4ac) validate_args: "--fp8-param-gather only supported with distributed optimizer, torch
        # fsdp2, megatron fsdp, or inference mode"
        raise refuse("Megatron-LM", "precision='fp8-params' with zero_stage=0 (its --fp8-param-gather runs only with "
                     "the distributed optimizer or Megatron-FSDP: zero_stage 1, 2 or 3)", "Megatron-LM at zero_stage=1")
    return args + PRECISION_FLAGS.get(tr.precision.name, [])


def write(ctx: ExportContext) -> str:
    """A bash launch script: the header, ``MEGATRON_ARGS=( ... )`` one flag a line, and the ``torchrun``
    line whose ``--nnodes x --nproc-per-node`` is the device count (``--nproc-per-node``: the hardware's
    ``devices_per_host``, else its scale-up size).

    Raises:
        ConfigError: as :func:`megatron_args`.
    """
    args = megatron_args(ctx)
    hw = ctx.estimate.hardware
    n, per_node = ctx.layout.n_devices, hw.host_devices
    per_node = per_node if n % per_node == 0 else n
    lines, i = [], 0
    while i < len(args):
        take = 2 if i + 1 < len(args) and not args[i + 1].startswith("--") else 1
        lines.append("  " + " ".join(args[i:i + take]))
        i += take
    body = "MEGATRON_ARGS=(\n" + "\n".join(lines) + "\n)\n"
    rest = ("data, tokenizer and optimizer arguments" if model_args(ctx.estimate.model, ctx.training.seq_len)
            else "model, data and optimizer arguments")
    # several nodes: torchrun's static rendezvous, one launch per node (Megatron-LM's examples/gpt3/
    # train_gpt3_175b_distributed.sh: --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT);
    # a new user's 4-node export had none of them
    nodes = n // per_node
    rdzv = (' --node-rank "$NODE_RANK" --master-addr "$MASTER_ADDR" --master-port "${MASTER_PORT:-6000}"'
            if nodes > 1 else "")
    launch = (f'torchrun --nnodes {nodes} --nproc-per-node {per_node}{rdzv} pretrain_gpt.py '
              f'"${{MEGATRON_ARGS[@]}}"  # + {rest}\n')
    env = ""
    if ctx.p.zero_stage in _FSDP:  # Megatron-FSDP user guide: unset it so FSDP's streams run in parallel
        env = "unset CUDA_DEVICE_MAX_CONNECTIONS\n"
    elif ctx.p.tp > 1 or ctx.p.cp > 1:  # as Megatron-LM's example scripts (examples/gpt3/train_gpt3_175b_distributed.sh):
        # one hardware queue keeps the tp / cp collectives ahead of the compute they overlap
        env = "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
    extra = ([f"--fine-grained-activation-offloading / --offload-modules: flags of Megatron-LM releases after the "
              f"{SOURCE.split('(')[-1].rstrip(')')} this file's other flags are read from (not defined there)"]
             if ctx.p.offload_modules else [])
    m = ctx.estimate.model
    if m.rope_scaling_type is not None and m.position == "rope" and not rope_scaling_args(m):  # breaker pass 54b
        extra.append(f"RoPE scaling {m.rope_scaling_type} (factor {m.rope_scaling_factor}) is not written: Megatron-LM's "
                     "flags express llama3 scaling (--use-rope-scaling) and whole linear factors "
                     "(--rotary-seq-len-interpolation-factor) only; add your fork's flags for it")
    if m.rope_scaling_type == "llama3" and m.rope_llama3_params is not None and m.position == "rope":
        low, high, orig = m.rope_llama3_params  # breaker pass 55
        extra.append(f"RoPE llama3 scaling with low_freq_factor {low:g}, high_freq_factor {high:g}, "
                     f"original_max_position_embeddings {orig}: --use-rope-scaling applies Llama 3.1's 1 / 4 / 8192 (no "
                     "flags set them; rotary_pos_embedding.py defaults); this model's rotary frequencies differ from "
                     "them: patch them in your fork")
    extra += _numerics_notes(ctx)
    if m.is_moe:  # new-user pass 56: the import of this file warned about its own missing graphs
        low, high = UNGRAPHED_MOE_BLACKWELL
        extra.append("CUDA graphs: not written; the megatron profile prices MoE layers as the tuned recipes its MoE "
                     "costs were fitted on, most of which capture attention, router and dispatch preprocessing "
                     "(--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess, with "
                     f"their requirements); without them held-out MoE runs measured {low}-{high}x slower than "
                     "predicted on Blackwell, within 25% on Hopper")
    return "#!/usr/bin/env bash\n" + comment_block(ctx, EXPORTER, extra) + env + body + launch


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises a ConfigError instead of printing usage and exiting."""

    #: the names whose value the script computes with the shell (``$(...)``, a loop, ``read``): set by :func:`_parse`
    computed: list[str] = []

    def error(self, message: str) -> None:
        """Refuse a malformed Megatron-LM argument (argparse's message, cut to 200 characters), saying why a ``$NAME``
        in it was not replaced: a value the script computes with the shell (``$(...)``, a loop variable, ``read``),
        or a variable it does not set."""
        names = re.findall(r"\$\{?([A-Za-z_]\w*)", message)
        computed = [n for n in names if n in self.computed]
        if computed:
            hint = (f"; {computed[0]} holds a value the script computes with the shell ($(...), a loop, read), "
                    "which the importer does not run: set it in the script (NAME=value) or give the expanded flags")
        elif "$" in message:
            hint = ("; a shell variable the script does not set itself: set it in the script (NAME=value) or give the "
                    "expanded flags")
        else:
            hint = ""
        raise ConfigError(f"the Megatron-LM arguments cannot be read: {message[:200]}{hint}", field="file", value=None)


#: the dropout rate written for a plan priced with dropout: Megatron-LM's default (arguments.py
#: _add_regularization_args, --attention-dropout and --hidden-dropout default=0.1)
MEGATRON_DROPOUT = 0.1

#: the flags of a plan priced with the profile's ``loss='in_place'``: Transformer Engine's parallel cross-entropy,
#: which writes the logits' gradient over the logits (Megatron-Core TransformerConfig ``cross_entropy_loss_fusion``
#: False and ``cross_entropy_fusion_impl`` 'native' by default, 'te' for Transformer Engine's; the Megatron-Bridge
#: performance recipes select it). Read back as the profile ``megatron+loss=in_place``.
CE_FLAGS = ["--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl", "te"]


#: Megatron-LM's model-shape flags (arguments.py _add_network_size_args, _add_moe_args) -> the ModelSpec field each
#: sets: an imported script records them (:func:`model_shape`) and ``estimate --plan`` names those that differ from
#: --model's (the layout is read from the script, the model from --model)
MODEL_SHAPE_FLAGS = {"--num-layers": "n_layers", "--hidden-size": "d_model", "--ffn-hidden-size": "ffn_dim",
                     "--num-attention-heads": "n_heads", "--num-query-groups": "n_kv_heads", "--num-experts": "n_experts",
                     "--moe-router-topk": "top_k", "--moe-ffn-hidden-size": "expert_ffn_dim",
                     "--max-position-embeddings": "max_position_embeddings", "--mtp-num-layers": "mtp_modules"}


def model_shape(a: argparse.Namespace) -> dict[str, int]:
    """The ModelSpec fields the script's model flags set (:data:`MODEL_SHAPE_FLAGS`), those it gives only.
    ``--num-query-groups`` counts with ``--group-query-attention`` only; without it Megatron-LM uses one group per
    attention head (arguments.py validate_args: ``num_query_groups = num_attention_heads``), so n_kv_heads =
    n_heads where the script gives the heads."""
    shape = {field: getattr(a, flag[2:].replace("-", "_")) for flag, field in MODEL_SHAPE_FLAGS.items()}
    if not a.group_query_attention:
        shape["n_kv_heads"] = shape["n_heads"]
    shape = {field: value for field, value in shape.items() if value is not None}
    _check_shape(shape)
    return shape


def _check_shape(shape: dict[str, int]) -> None:
    """The model flags describe a model: every size at least 1 (0 experts: a dense model) and at most the planner's
    ranges, query groups that divide the heads, a top-k no larger than the experts.

    Raises:
        ConfigError: naming the flag (a NeMo file's messages name its key) and the legal values."""
    from shardplan import limits
    flag_of = {field: flag for flag, field in MODEL_SHAPE_FLAGS.items()}
    for field, value in shape.items():
        low = 0 if field in ("n_experts", "mtp_modules") else 1
        high = {"n_layers": limits.MAX_LAYERS, "n_heads": limits.MAX_HEADS, "n_kv_heads": limits.MAX_HEADS,
                "d_model": limits.MAX_D_MODEL, "max_position_embeddings": limits.MAX_VOCAB}.get(field, limits.MAX_FFN)
        if not low <= value <= high:
            raise ConfigError(f"{flag_of[field]} {value}: legal: {low} to {high:,}", field=field, value=value,
                              legal=[low, high])
    heads, groups = shape.get("n_heads"), shape.get("n_kv_heads")
    if heads and groups and heads % groups:
        from shardplan.errors import divisors
        legal = divisors(heads)
        raise ConfigError(f"--num-query-groups {groups} does not divide --num-attention-heads {heads}; legal: "
                          f"{', '.join(map(str, legal))}", field="n_kv_heads", value=groups, legal=legal)
    experts, top_k = shape.get("n_experts"), shape.get("top_k")
    if experts is not None and top_k is not None and experts and top_k > experts:
        raise ConfigError(f"--moe-router-topk {top_k} is more than --num-experts {experts}; legal: 1 to {experts}",
                          field="top_k", value=top_k, legal=[1, experts])


def _add_deepspeed_args(ap: argparse.ArgumentParser) -> None:
    """Megatron-DeepSpeed's flags (microsoft/Megatron-DeepSpeed megatron/arguments.py): the DeepSpeed engine's ZeRO
    stage, DeepSpeed-Ulysses sequence parallelism (heads split over the group by all-to-all: the planner's cp with
    a2a), and the options :func:`_deepspeed_notes` names as not priced."""
    ap.add_argument("--deepspeed", action="store_true")
    ap.add_argument("--zero-stage", type=int)
    ap.add_argument("--ds-sequence-parallel-size", type=int)
    for flag in ("--ds-sequence-parallel-fpdt", "--ds-sequence-parallel-fpdt-offloading", "--checkpoint-in-cpu",
                 "--cpu-optimizer"):
        ap.add_argument(flag, action="store_true")


def parser() -> argparse.ArgumentParser:
    """An argparse parser of the flags :func:`megatron_args` writes (Megatron-LM's names and types)."""
    ap = _Parser(prog="megatron", add_help=False, allow_abbrev=False)
    for flag in ("--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
                 "--expert-model-parallel-size", "--expert-tensor-parallel-size",
                 "--num-layers-per-virtual-pipeline-stage", "--virtual-pipeline-model-parallel-size",
                 "--num-virtual-stages-per-pipeline-rank",
                 "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
                 "--num-distributed-optimizer-instances", "--micro-batch-size", "--global-batch-size",
                 "--seq-length", "--recompute-num-layers", "--nnodes", "--nproc-per-node",
                 "--cpu-offloading-num-layers", *MODEL_SHAPE_FLAGS):
        ap.add_argument(flag, type=int)
    _add_launcher_args(ap)
    ap.add_argument("--moe-flex-dispatcher-backend", choices=["deepep", "hybridep"])
    for flag in ("--sequence-parallel", "--use-distributed-optimizer", "--use-megatron-fsdp", "--overlap-grad-reduce",
                 "--tp-comm-overlap", "--optimizer-cpu-offload", "--bf16", "--moe-enable-deepep", "--cpu-offloading",
                 "--overlap-moe-expert-parallel-comm", "--moe-pad-expert-input-to-capacity", "--fp8-param-gather",
                 "--accumulate-allreduce-grads-in-fp32", "--grad-reduce-in-bf16", "--use-precision-aware-optimizer",
                 "--fp16", "--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split",
                 "--no-overlap-p2p-communication", "--fp4-param-gather", "--first-last-layers-bf16",
                 "--no-gradient-accumulation-fusion", "--fine-grained-activation-offloading",
                 "--cross-entropy-loss-fusion", "--use-torch-fsdp2", "--overlap-param-gather", "--moe-grouped-gemm",
                 "--group-query-attention"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("--data-parallel-sharding-strategy", choices=["no_shard", "optim", "optim_grads",
                                                                  "optim_grads_params"])
    ap.add_argument("--recompute-granularity", choices=["full", "selective"])
    # the flag before --recompute-granularity (Megatron-LM until 2022, and the Megatron-DeepSpeed fork BLOOM and
    # the long-sequence rebase run): every layer's input checkpointed, the layer recomputed, i.e. full granularity
    ap.add_argument("--checkpoint-activations", action="store_true")
    # arguments.py _add_training_args "--recompute-activations" (store_true); validate_args: "if
    # args.recompute_activations: args.recompute_granularity = 'selective'" (the attention core; FlagPerf's and the ROCm
    # fork's launchers use it)
    ap.add_argument("--recompute-activations", action="store_true")
    _add_deepspeed_args(ap)
    ap.add_argument("--ckpt-format")
    ap.add_argument("--moe-token-dispatcher-type", choices=["allgather", "alltoall", "flex"])
    ap.add_argument("--cp-comm-type", nargs="+")
    ap.add_argument("--moe-expert-capacity-factor", type=float)
    # arguments.py _add_regularization_args: both default to 0.1 (dropout on unless the script sets 0; read())
    ap.add_argument("--attention-dropout", type=float)
    ap.add_argument("--hidden-dropout", type=float)
    ap.add_argument("--fp8-format")
    ap.add_argument("--fp4-format")
    ap.add_argument("--fp4-recipe")
    # TE's fp8 scaling recipe (delayed, tensorwise, mxfp8, blockwise): all priced as fp8-mixed; read so that it is
    # not taken for a misspelt --fp4-recipe (misspelt_flags)
    ap.add_argument("--fp8-recipe")
    ap.add_argument("--exp-avg-dtype")
    ap.add_argument("--exp-avg-sq-dtype")
    ap.add_argument("--main-params-dtype")
    ap.add_argument("--main-grads-dtype", choices=["fp32", "bf16"])
    ap.add_argument("--recompute-modules", nargs="*")
    ap.add_argument("--offload-modules", nargs="*")
    ap.add_argument("--recompute-method", choices=["uniform", "block"])
    ap.add_argument("--pipeline-model-parallel-layout")
    ap.add_argument("--cross-entropy-fusion-impl", choices=["native", "te", "linear"])
    ap.add_argument("--attention-backend", choices=["flash", "fused", "unfused", "local", "auto"])
    _add_cuda_graph_args(ap)
    return ap


def _add_cuda_graph_args(ap: argparse.ArgumentParser) -> None:
    """Megatron-LM's CUDA graph flags (arguments.py: ``--cuda-graph-impl`` none / local / transformer_engine,
    ``--cuda-graph-scope`` / ``--cuda-graph-modules``, the deprecated ``--enable-cuda-graph`` = local and
    ``--external-cuda-graph`` = transformer_engine), read for :func:`_cuda_graph_note` only."""
    ap.add_argument("--cuda-graph-impl", choices=["none", "local", "transformer_engine"])
    for flag in ("--cuda-graph-scope", "--cuda-graph-modules"):
        ap.add_argument(flag, nargs="+")
    for flag in ("--enable-cuda-graph", "--external-cuda-graph"):
        ap.add_argument(flag, action="store_true")


#: predicted / measured tokens/s of the held-out Megatron-LM MoE runs on Blackwell that captured no CUDA graphs
#: (docs/accuracy.md: the Megatron-LM DeepSeek-V3 GB200 guide's three rows before its "CUDA Graphs" step, 1.73-2.08;
#: awsome-distributed-ai's DeepSeek-V3 B300 rows, 1.66-2.17; dgxc-benchmarking 25.05 DeepSeek-V3 GB200, 2.89), and
#: of the Hopper MoE runs without them (the Megatron MoE model zoo's and Megatron-Bridge 25.09's H100 rows, 0.77-1.16)
UNGRAPHED_MOE_BLACKWELL = (1.7, 2.9)


def uses_cuda_graphs(a: argparse.Namespace) -> bool:
    """The flags capture some of the model in CUDA graphs: ``--cuda-graph-impl`` local or transformer_engine, or
    the deprecated ``--enable-cuda-graph`` / ``--external-cuda-graph`` (Megatron-LM arguments.py migrates them to
    those two)."""
    return a.cuda_graph_impl in ("local", "transformer_engine") or a.enable_cuda_graph or a.external_cuda_graph


def _cuda_graph_note(a: argparse.Namespace) -> tuple[str, ...]:
    """A note for an MoE script (``--num-experts`` > 1) that captures no CUDA graphs. The megatron profile's fixed
    MoE costs are fitted on tuned recipes, most of which capture attention, router and dispatch preprocessing
    (Megatron-Bridge's performance recipes; ``--cuda-graph-scope attn moe_router moe_preprocess``); without graphs
    the host issues every kernel, and the launch queue empties at each MoE layer's device-to-host read of the
    split sizes, so a GPU faster than the host's issue rate waits (the Megatron-LM DeepSeek-V3 GB200 guide, Sec. 2:
    "CPU overhead or host boundedness"; its table gains 8.6% from CUDA graphs alone). The planner has no term for
    it; the note gives the held-out record, :data:`UNGRAPHED_MOE_BLACKWELL`."""
    if (a.num_experts or 0) <= 1 or uses_cuda_graphs(a):
        return ()
    low, high = UNGRAPHED_MOE_BLACKWELL
    return (f"no CUDA graphs (no --cuda-graph-impl): the megatron profile prices MoE layers as the tuned recipes its "
            f"MoE costs were fitted on, most of which capture attention, router and dispatch preprocessing in CUDA "
            f"graphs; held-out MoE runs without them measured {low}-{high}x slower than predicted on Blackwell (the "
            "host cannot issue the kernels as fast as the GPU runs them; docs/accuracy.md), within 25% on Hopper: "
            "read Blackwell predictions of this script as optimistic",)


def _check_ep_sp(a: argparse.Namespace, tp: int) -> None:
    """Megatron-Core refuses expert parallelism beside tensor parallelism without sequence parallelism
    (``ModelParallelConfig.__post_init__``: "When using expert parallelism and tensor parallelism, sequence
    parallelism must be used"), as the planner does for etp != tp.

    Raises:
        ConfigError: ep > 1 without ``--num-experts`` (Megatron-LM's validate_args asserts it), or ep > 1 and
            tp > 1 without ``--sequence-parallel``, naming the flag to add."""
    ep = a.expert_model_parallel_size or 1
    if ep > 1 and not a.num_experts:  # arguments.py validate_args: "num_experts must be non None to use expert ..."
        raise ConfigError(f"--expert-model-parallel-size {ep} without --num-experts (Megatron-LM asserts experts for "
                          "expert model parallelism); legal: --num-experts N, or expert-model-parallel-size 1",
                          field="ep", value=ep, legal=[1])
    if ep > 1 and tp > 1 and not a.sequence_parallel:
        raise ConfigError(f"--expert-model-parallel-size {ep} with --tensor-model-parallel-size {tp} needs "
                          "--sequence-parallel (Megatron-Core's ModelParallelConfig refuses expert and tensor "
                          "parallelism without it); legal: add --sequence-parallel, or tensor-model-parallel-size 1",
                          field="sp", value=False, legal=[True])


def _zero_stage(a: argparse.Namespace) -> int:
    """The ZeRO stage of the data-parallel flags: Megatron-DeepSpeed's ``--zero-stage``, Megatron-FSDP's sharding
    strategy, ``--use-torch-fsdp2`` (PyTorch FSDP2 ``fully_shard`` of every module, parameters included: ZeRO-3;
    Megatron-LM arguments.py), the distributed optimizer (ZeRO-1), else none."""
    if a.zero_stage is not None:  # Megatron-DeepSpeed: the DeepSpeed engine's ZeRO (its ds_config says the same)
        return a.zero_stage
    if a.use_torch_fsdp2:
        return 3
    if a.use_megatron_fsdp:
        return {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}[
            a.data_parallel_sharding_strategy or "optim_grads_params"]
    return 1 if a.use_distributed_optimizer else 0


def _chunk_note(text: str, pp: int, split: tuple[int, ...], v: int) -> tuple[str, ...]:
    """A note when a layout's virtual chunks are not the even chunks the planner prices each rank's layers in
    (:func:`shardplan.parallel.chunk_layers`): the interleaved schedule's tick is set by the largest chunk
    (:mod:`shardplan.cost.pipeline`), so a skewed layout's bubble is larger than the one priced (breaker 58: chunks
    of 15 and 1 layers priced as 8 and 8, about half the bubble, without a word)."""
    from shardplan.parallel import chunk_layers
    read, priced = layout_chunks(layout_entries(text, pp), pp), chunk_layers(split, v)
    if all(sorted(a) == sorted(b) for a, b in zip(read, priced)):
        return ()
    worst = max(range(pp), key=lambda r: max(read[r]) - max(priced[r]))
    return (f"--pipeline-model-parallel-layout {short_repr(text)}: rank {worst} runs chunks of "
            f"{', '.join(map(str, read[worst]))} layers; the planner prices each rank's layers in even chunks "
            f"({', '.join(map(str, priced[worst]))}), so its bubble is the even layout's: an interleaved pipeline's "
            f"tick follows its largest chunk ({max(read[worst])} layers here against {max(priced[worst])}), so this "
            "layout's bubble is larger than the one priced",)


def _pipeline_values(a: argparse.Namespace, pp: int) -> dict:
    """schedule, virtual_stages and pp_layers from the pipeline flags."""
    out: dict = {"schedule": "1f1b", "virtual_stages": 1, "pp_layers": None}
    if a.pipeline_model_parallel_layout is not None:
        if pp == 1:
            raise ConfigError("--pipeline-model-parallel-layout needs --pipeline-model-parallel-size (the layout's "
                              "stages are read per pipeline rank)", field="pp", value=1)
        split, v = parse_pipeline_layout(a.pipeline_model_parallel_layout, pp)
        if a.num_layers is not None and sum(split) != a.num_layers:
            raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(a.pipeline_model_parallel_layout)} holds "
                              f"{sum(split)} transformer layers but --num-layers is {a.num_layers}",
                              field="pp_layers", value=list(split))
        if sum(split) == 0:
            raise ConfigError(f"--pipeline-model-parallel-layout {short_repr(a.pipeline_model_parallel_layout)} holds "
                              "no transformer layer ('t')", field="pp_layers", value=list(split))
        out["pp_layers"] = split if len(set(split)) > 1 or v > 1 else None
        if v > 1:
            out.update(schedule="interleaved", virtual_stages=v)
            a.misspelt_notes += _chunk_note(a.pipeline_model_parallel_layout, pp, split, v)
        return out
    first, last = a.decoder_first_pipeline_num_layers, a.decoder_last_pipeline_num_layers
    middle = None
    chunks = a.num_virtual_stages_per_pipeline_rank or a.virtual_pipeline_model_parallel_size  # current, older name
    _check_virtual_flags(a)
    if first is not None or last is not None:
        out["pp_layers"] = _uneven_split(a.num_layers, pp, first, last)
        middle = out["pp_layers"][1] if pp > 2 else None
    elif pp > 1 and (a.account_for_embedding_in_pipeline_split or a.account_for_loss_in_pipeline_split):
        out["pp_layers"] = _accounted_split(a, pp, chunks)
    elif pp > 1 and a.num_layers and a.num_layers % pp and a.pipeline_model_parallel_layout is None:
        # Megatron-Core asserts an even split; Megatron-DeepSpeed's pipeline engine (BLOOM: 70 layers on pp 12) does not
        a.misspelt_notes += (f"--num-layers {a.num_layers} is not divisible by --pipeline-model-parallel-size {pp}: "
                             "Megatron-LM (Megatron-Core) refuses it without --decoder-first/last-pipeline-num-layers, "
                             "--account-for-*-in-pipeline-split or --pipeline-model-parallel-layout; Megatron-DeepSpeed's "
                             "pipeline engine splits unevenly, as priced here (the planner's balanced split)",)
    if out["pp_layers"] is not None and (a.num_layers_per_virtual_pipeline_stage or (chunks and any(
            n % chunks for n in out["pp_layers"]))):
        # arguments.py / transformer_block.py: each stage's layers must split into the virtual stages evenly, and
        # --num-layers-per-virtual-pipeline-stage is not combined with the first/last stage flags
        raise ConfigError(f"the uneven split {list(out['pp_layers'])} with "
                          + (f"--num-layers-per-virtual-pipeline-stage {a.num_layers_per_virtual_pipeline_stage}"
                             if a.num_layers_per_virtual_pipeline_stage else f"{chunks} virtual stages per rank")
                          + ": Megatron-LM needs every stage's layer count divisible by the virtual stages (and "
                          "--num-virtual-stages-per-pipeline-rank with the first/last stage flags); legal: virtual "
                          "stages dividing every stage, or --pipeline-model-parallel-layout", field="virtual_stages",
                          value=chunks or a.num_layers_per_virtual_pipeline_stage)
    if chunks and out["pp_layers"] is None:
        _check_even_chunks(a.num_layers, pp, chunks)
    if chunks and chunks > 1:
        out.update(schedule="interleaved", virtual_stages=chunks)
    elif a.num_layers_per_virtual_pipeline_stage is not None:
        v = _virtual_from_layers(a, pp, middle or first)
        if v > 1:  # one virtual stage per rank (k = the stage's layers) is the 1F1B schedule; an interleaved plan
            out.update(schedule="interleaved", virtual_stages=v)  # needs 2 or more
    return out


def _check_virtual_flags(a: argparse.Namespace) -> None:
    """Refuse ``--num-layers-per-virtual-pipeline-stage`` with ``--num-virtual-stages-per-pipeline-rank``: arguments.py
    validate_args asserts "--num-layers-per-virtual-pipeline-stage and --num-virtual-stages-per-pipeline-rank cannot be
    set at the same time" (breaker pass 57: both read, the chunk count kept silently).

    Raises:
        ConfigError: naming both flags, legal: one of them.
    """
    if a.num_layers_per_virtual_pipeline_stage is not None and a.num_virtual_stages_per_pipeline_rank is not None:
        raise ConfigError(f"--num-layers-per-virtual-pipeline-stage {a.num_layers_per_virtual_pipeline_stage} with "
                          f"--num-virtual-stages-per-pipeline-rank {a.num_virtual_stages_per_pipeline_rank}: "
                          "Megatron-LM refuses the two together; legal: one of them", field="virtual_stages",
                          value=a.num_virtual_stages_per_pipeline_rank,
                          legal=["--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank"])


def _virtual_from_layers(a: argparse.Namespace, pp: int, per_stage: int | None) -> int:
    """Virtual stages per rank of ``--num-layers-per-virtual-pipeline-stage k``: a stage's layers over k (``per_stage``:
    the middle or first stage's count of an uneven split, else num_layers / pp).

    Raises:
        ConfigError: no layer count, or k not dividing a stage's layers (Megatron-LM asserts it), with the legal k."""
    per_stage = per_stage or (a.num_layers // pp if a.num_layers else None)
    if per_stage is None:
        raise ConfigError("--num-layers-per-virtual-pipeline-stage needs --num-layers (or the uneven-split "
                          "flags) to give virtual_stages", field="import", value="num_layers")
    k = a.num_layers_per_virtual_pipeline_stage
    if k < 1 or per_stage % k:  # arguments.py asserts it: "number of layers per pipeline stage must be divisible"
        raise ConfigError(f"--num-layers-per-virtual-pipeline-stage {k} does not divide the {per_stage} layers "
                          f"of a pipeline stage (Megatron-LM asserts it); legal: {fmt_legal(divisors(per_stage))}",
                          field="virtual_stages", value=k, legal=divisors(per_stage))
    return per_stage // k


def _check_even_chunks(num_layers: int | None, pp: int, chunks: int) -> None:
    """An even pipeline split whose stages divide into ``chunks`` virtual stages each (breaker pass 55: 3 chunks of
    16-layer stages were imported and estimate then refused the plan); Megatron-Core builds num_layers / (pp x vp)
    layers per chunk (transformer_block.get_num_layers_to_build). An uneven split (num_layers not divisible by pp)
    is the planner's balanced one, chunked as Megatron does: not checked here.

    Raises:
        ConfigError: ``chunks`` does not divide the layers of a stage, with the legal virtual stage counts."""
    if pp <= 1 or not num_layers or num_layers % pp or (num_layers // pp) % chunks == 0:
        return
    per_stage = num_layers // pp
    raise ConfigError(f"{chunks} virtual stages per rank do not divide the {per_stage} layers of a pipeline stage "
                      f"(--num-layers {num_layers} over --pipeline-model-parallel-size {pp}); legal: "
                      f"{fmt_legal(divisors(per_stage))}", field="virtual_stages", value=chunks,
                      legal=divisors(per_stage))


def _accounted_split(a: argparse.Namespace, pp: int, chunks: int | None) -> tuple[int, ...]:
    """The per-stage layer counts of ``--account-for-embedding-in-pipeline-split`` /
    ``--account-for-loss-in-pipeline-split``: Megatron-Core counts the embedding as one layer of the first stage and
    the loss as one of the last, and splits num_layers + those evenly over the pp x virtual chunks
    (``transformer_block.get_num_layers_to_build``): 80 layers, pp 3, the embedding: 81 / 3 = 27 per stage, the first
    holding 26 transformer layers. With virtual stages the first and last chunks are a layer short, which the
    planner's interleaved split (whole stages of equal chunks) cannot write.

    Raises:
        ConfigError: ``--num-layers`` missing, the accounted count not divisible by pp x virtual stages (Megatron-LM
            asserts it), or virtual stages (a split the planner cannot write; --pipeline-model-parallel-layout can).
    """
    if a.num_layers is None:
        raise ConfigError("--account-for-*-in-pipeline-split need --num-layers to rebuild the split", field="import",
                          value="num_layers")
    e, loss = int(a.account_for_embedding_in_pipeline_split), int(a.account_for_loss_in_pipeline_split)
    total, k = a.num_layers + e + loss, a.num_layers_per_virtual_pipeline_stage
    v = chunks or (total // pp // k if k and total % pp == 0 else 1)
    if total % (pp * v):
        raise ConfigError(f"--num-layers {a.num_layers} + {e + loss} accounted (embedding / loss) = {total} is not "
                          f"divisible by pp {pp} x {v} virtual stages: Megatron-LM asserts it; legal: a layer count "
                          f"making it a multiple of {pp * v}", field="pp_layers", value=total)
    per = total // pp
    if v > 1:
        chunk = total // (pp * v)
        raise ConfigError(f"--account-for-*-in-pipeline-split with {v} virtual stages of {chunk} slots: the first / "
                          f"last chunks hold {chunk - e} / {chunk - loss} transformer layers beside the embedding / "
                          "loss, which the planner's interleaved split (equal chunks in every stage) cannot write; "
                          "legal: --pipeline-model-parallel-layout, which names each chunk's layers (e.g. Et*3|(t*4|)*30"
                          "t*3L), or no virtual stages", field="pp_layers", value=total)
    return (per - e, *([per] * (pp - 2)), per - loss)


def _uneven_split(num_layers: int | None, pp: int, first: int | None, last: int | None) -> tuple[int, ...]:
    """The per-stage layer counts of ``--decoder-first/last-pipeline-num-layers`` (either or both): the
    layers left are split evenly over the other stages, as Megatron-Core does
    (``transformer_block.get_num_layers_to_build``; ``arguments.py`` asserts the even split).

    Raises:
        ConfigError: ``--num-layers`` missing, a count below 0, or a rest the other stages cannot share evenly.
    """
    if num_layers is None:
        raise ConfigError("--decoder-first/last-pipeline-num-layers need --num-layers to rebuild the split",
                          field="import", value="num_layers")
    if pp < 2:
        raise ConfigError("--decoder-first/last-pipeline-num-layers need --pipeline-model-parallel-size >= 2",
                          field="pp", value=pp)
    for flag, v in (("first", first), ("last", last)):
        if v is not None and v < 0:
            raise ConfigError(f"--decoder-{flag}-pipeline-num-layers {v}: legal: 0 or more", field="pp_layers", value=v)
    others = pp - (first is not None) - (last is not None)
    rest = num_layers - (first or 0) - (last or 0)
    # pp = 2 with both flags: no other stage, first + last must be every layer (breaker pass 57: "the other 0 stages")
    legal = (f"first + last = {num_layers} (no other stage at pp=2)" if others == 0 else
             f"first + last at most {num_layers}, the rest a multiple of the {others} other stage"
             f"{'s' if others != 1 else ''}")
    if rest < 0:
        raise ConfigError(f"the first ({first or 0}) and last ({last or 0}) stages' layers add up to "
                          f"{(first or 0) + (last or 0)}, more than --num-layers {num_layers}; legal: {legal}",
                          field="pp_layers", value=(first or 0) + (last or 0))
    if others == 0 and rest:
        raise ConfigError(f"--decoder-first-pipeline-num-layers {first} + --decoder-last-pipeline-num-layers {last} = "
                          f"{first + last}, not --num-layers {num_layers}: with pp=2 the two stages hold every layer; "
                          f"legal: {legal}", field="pp_layers", value=first + last)
    if (others and rest % others) or (others and rest == 0 and pp > 2):
        raise ConfigError(f"--num-layers {num_layers} minus the first ({first}) and last ({last}) stages' layers leaves "
                          f"{rest} for the other {others} stages: not an even split of at least one layer each "
                          f"(Megatron-LM asserts an even split; a middle stage without layers runs nothing); legal: "
                          f"{legal}", field="pp_layers", value=rest)
    middle = rest // others if others else 0
    return ((middle if first is None else first),) + (middle,) * (pp - 2) + ((middle if last is None else last),)


#: words that end a ``nargs='*'`` flag's values in a launch script rather than name a module: the next command of a
#: line (launchers, shells, interpreters) and shell keywords
_SHELL_WORDS = frozenset({"python", "python3", "torchrun", "srun", "mpirun", "deepspeed", "bash", "sh", "exec", "echo",
                          "exit", "then", "else", "fi", "do", "done", "time", "env", "nohup", "tee", "wait"})


def _module_names(words: list[str], flag: str = "--recompute-modules", field: str = "recompute_modules") -> list[str]:
    """The module names among the words argparse gave ``flag`` (``--recompute-modules``: :data:`RecomputeModule`;
    ``--offload-modules``: :data:`OffloadModule`; ``nargs='*'`` takes every word up to the next flag, so also a bash
    array's closing ``)``, a redirection or the next command): the Megatron-LM module names before the first word
    that is not one.

    Raises:
        ConfigError: that word is a near miss of a module name (a typo, e.g. ``layernrom``), naming the legal ones.
    """
    import difflib
    import typing

    from shardplan.parallel import OffloadModule, RecomputeModule
    legal = typing.get_args(OffloadModule if field == "offload_modules" else RecomputeModule)
    names = list(itertools.takewhile(lambda w: w in legal, words))
    if len(names) < len(words):
        word = words[len(names)]
        # a module-like word (snake_case or comma-joined names) is a module Megatron-LM would refuse, not the end of
        # the list (a bash array's ')', a redirection, the next command or script path)
        looks_like_module = re.fullmatch(r"[A-Za-z0-9_,]+", word) is not None and ("_" in word or "," in word)
        # a plain lower-case word that is no shell command is a module name too (breaker pass 56: 'mpl', 'shared',
        # 'mla', 'bogus' ended the list, and the names after them were dropped with exit 0; Megatron-LM refuses them)
        plain_word = re.fullmatch(r"[a-z][a-z0-9]*", word) is not None and word not in _SHELL_WORDS
        if looks_like_module or plain_word or difflib.get_close_matches(word.lower(), legal, n=1, cutoff=0.75):
            hint = " (names are space-separated)" if "," in word else ""
            raise ConfigError(f"{flag} {word!r} is not a Megatron-LM module{hint}; legal: {', '.join(legal)}",
                              field=field, value=word, legal=list(legal))
    return names


def _dispatcher(a: argparse.Namespace) -> str:
    """``ParallelConfig.moe_dispatcher`` of ``--moe-token-dispatcher-type`` (arguments.py _add_moe_args: allgather,
    the default, alltoall, an older release's alltoall_seq, or flex, DeepEP's): 'alltoall' where ep = 1 (no expert
    group to dispatch over, nothing priced)."""
    kind = a.moe_token_dispatcher_type or "allgather"
    if (a.expert_model_parallel_size or 1) == 1:
        return "deepep" if kind == "flex" else "alltoall"
    return {"flex": "deepep", "allgather": "allgather"}.get(kind, "alltoall")


def _check_moe_recompute_flags(a: argparse.Namespace) -> None:
    """Flag combinations Megatron-LM refuses or ignores (megatron/training/arguments.py): DeepEP runs
    only with the flex dispatcher; ``--recompute-modules`` takes effect with selective granularity
    and names each module once.

    Raises:
        ConfigError: naming the flags and what Megatron-LM needs.
    """
    if a.moe_enable_deepep and a.moe_token_dispatcher_type != "flex":
        raise ConfigError(f"--moe-enable-deepep needs --moe-token-dispatcher-type flex (got "
                          f"{a.moe_token_dispatcher_type or 'the default, allgather'})", field="moe_dispatcher",
                          value=a.moe_token_dispatcher_type, legal=["flex"])
    mods = a.recompute_modules or []
    if mods and a.recompute_granularity != "selective":
        raise ConfigError(f"--recompute-modules {' '.join(mods)} takes effect with --recompute-granularity selective "
                          f"(got {a.recompute_granularity or 'none'})", field="recompute_modules", value=mods,
                          legal=["selective"])
    repeated = sorted({m for m in mods if mods.count(m) > 1})
    if repeated:
        raise ConfigError(f"--recompute-modules names {', '.join(repeated)} twice", field="recompute_modules",
                          value=repeated)


#: Megatron-LM --cp-comm-type -> ParallelConfig.cp_comm (arguments.py: p2p, a2a, allgather or a2a+p2p)
_CP_COMM = {"p2p": "ring", "a2a": "a2a"}


def _cp_comm_of(a: argparse.Namespace) -> str:
    """``cp_comm`` of a script's ``--cp-comm-type`` (default p2p: the ring; one type for every layer).

    Raises:
        ConfigError: a list whose length is neither 1 nor --num-layers, a type per layer that differs between
            layers, allgather / a2a+p2p (not priced), or a name Megatron-LM does not have.
    """
    types = a.cp_comm_type or ["p2p"]
    if len(types) > 1 and a.num_layers and len(types) != a.num_layers:
        raise ConfigError(f"--cp-comm-type gives {len(types)} types for --num-layers {a.num_layers} (Megatron-LM "
                          "asserts one type, or one per layer); legal: one of p2p, a2a", field="cp_comm",
                          value=" ".join(types), legal=list(_CP_COMM))
    if len(set(types)) > 1:
        raise ConfigError(f"--cp-comm-type {' '.join(types)}: one type per layer that differs between layers; the "
                          "planner prices one exchange for every layer; legal: one of p2p, a2a",
                          field="cp_comm", value=" ".join(types), legal=list(_CP_COMM))
    if types[0] in ("allgather", "a2a+p2p"):
        raise ConfigError(f"--cp-comm-type {types[0]}: the planner prices the K/V ring (p2p) and DeepSpeed-Ulysses' "
                          "AllToAll (a2a), not the all-gather or hierarchical a2a+p2p exchanges; legal: p2p, a2a",
                          field="cp_comm", value=types[0], legal=list(_CP_COMM))
    if types[0] not in _CP_COMM:
        raise ConfigError(f"--cp-comm-type {types[0]} is not a Megatron-LM type (arguments.py: p2p, a2a, allgather or "
                          "a2a+p2p); legal here: p2p, a2a", field="cp_comm", value=types[0], legal=list(_CP_COMM))
    return _CP_COMM[types[0]]


#: parallel degrees handed to another script as environment variables (``TP=2 PP=8 EP=32 bash sbatch_benchmarking.sh``,
#: yiakwy-xpu-team/Megatron-MoE-ModelZoo): the flags that script builds from them are not in the file
_ENV_DEGREE = re.compile(r"(?:^|[\s;])((?:TP|PP|CP|EP|ETP|VPP)(?:_SIZE)?)=(\d+)\b")


def _check_env_degrees(a: argparse.Namespace, text: str) -> None:
    """A file that reads none of the degree flags but sets degrees as environment variables for a script it runs: the
    layout is in that other script, and reading the file as tp = pp = cp = ep = 1 would price another run.

    Raises:
        ConfigError: naming the variables and what to give instead.
    """
    if all(v is None for v in (a.tensor_model_parallel_size, a.pipeline_model_parallel_size,
                               a.context_parallel_size, a.expert_model_parallel_size)):
        _refuse_env_degrees(text)


def _refuse_env_degrees(text: str) -> None:
    """Refuse a file that sets parallel degrees as environment variables of a script it runs (:data:`_ENV_DEGREE`,
    comments left out).

    Raises:
        ConfigError: naming the variables and what to give instead, where there are any.
    """
    code = re.sub(r"(?m)(?:^|(?<=\s))#.*$", "", re.sub(r"\\\r?\n", " ", text))  # comments say nothing bash runs
    found = [f"{k}={v}" for k, v in _ENV_DEGREE.findall(code)]
    if found:
        raise ConfigError(f"the file sets {' '.join(dict.fromkeys(found))} for a script it runs, and none of the "
                          "Megatron-LM degree flags (--tensor-model-parallel-size, --pipeline-model-parallel-size, "
                          "--expert-model-parallel-size, ...): the layout is built by that script; legal: import "
                          "the script itself, or a file with the expanded Megatron-LM flags", field="import",
                          value=found)


#: Python source (a ReFrame test, a NeMo / Megatron-Bridge recipe in Python): module-level statements bash has not
_PYTHON_LINE = re.compile(r"^(?:import [\w.]+|from [\w.]+ import |def \w+\(|class \w+[(:])", re.M)


def _yaml_mapping(text: str) -> bool:
    """The text parses as a YAML mapping (a bash script or a flag list parses as a string or not at all)."""
    try:
        return isinstance(yaml.safe_load(text), dict)
    except yaml.YAMLError:
        return False


def _model_args_flags(text: str) -> str | None:
    """The flag list of a Megatron-LM functional-test ``model_config.yaml`` (tests/functional_tests/test_cases/*/*/:
    a YAML mapping whose ``MODEL_ARGS`` maps each flag to its value, which Megatron-LM's test launcher turns into the
    command line: ``true`` a bare flag, ``false`` / null left out, a list its values), else None (any other text)."""
    if "MODEL_ARGS" not in text:
        return None
    import yaml
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict) or "MODEL_ARGS" not in doc:
        return None
    args = doc["MODEL_ARGS"]
    if not isinstance(args, dict):
        raise ConfigError(f"MODEL_ARGS is {short_repr(args)} ({type(args).__name__}); legal: a mapping of each "
                          "Megatron-LM flag to its value (--flag-name: value), as a functional-test "
                          "model_config.yaml writes it", field="MODEL_ARGS", value=short_repr(args))
    bad = [k for k in args if not (isinstance(k, str) and k.startswith("--"))]
    if bad:  # Megatron-LM's test launcher passes each key as written: a flag without -- is not a flag
        raise ConfigError(f"MODEL_ARGS key {short_repr(bad[0])} is not a Megatron-LM flag (a functional-test "
                          "model_config.yaml writes each as --flag-name: value); legal: keys starting with --",
                          field="MODEL_ARGS", value=short_repr(bad[0]))
    single = {f for f, act in parser()._option_string_actions.items() if act.nargs is None}
    words = []
    for flag, value in args.items():
        if isinstance(value, dict) or isinstance(value, list) and flag in single:
            raise ConfigError(f"MODEL_ARGS {flag} is {short_repr(value)}; legal: "
                              f"{'one value' if flag in single else 'a value or a list of values'} (Megatron-LM's "
                              "parser takes it so)", field=flag.lstrip("-").replace("-", "_"), value=short_repr(value))
        if value is True:
            words.append(flag)
        elif value is not False and value is not None:
            values = value if isinstance(value, list) else [value]
            words.append(" ".join([flag, *(shlex.quote(str(v)) for v in values)]))
    return " ".join(words)


def _check_script_kind(text: str) -> None:
    """Refuse what is not a launch script or flag list before its words are read: Python source (two or more
    ``import`` / ``def`` / ``class`` lines, unless a shell shebang or a heredoc says it is a shell script holding
    some), or a YAML mapping that is not a NeMo 1.x / Megatron-Bridge training config
    (:func:`shardplan.export.nemo_yaml.translate` has read those already), whose settings this importer would
    otherwise misread as flag values.

    Raises:
        ConfigError: naming what the file looks like and what to give instead.
    """
    shell = re.match(r"#!\S*(?:/|env\s+)(?:ba|z|da)?sh\b", text) or re.search(r"<<-?\s*['\"]?\w+", text)
    if not shell and len(_PYTHON_LINE.findall(text)) >= 2:  # a shell script may hold Python in a heredoc
        raise ConfigError("the file is Python source (import / def / class lines), not a launch script: the Megatron-LM "
                          "importer reads the flags a shell script passes; legal: the launch script, or the flags the "
                          "Python program builds (e.g. from its log's 'arguments' block)", field="import",
                          value="megatron")
    if re.search(r"^\s*(?:tensor|pipeline)_model_parallel_size\s*:", text, re.M) or _yaml_mapping(text):
        raise ConfigError("the file is a YAML mapping without a model: section holding the parallel degrees or batch "
                          "sizes (tensor_model_parallel_size, micro_batch_size, ...), which is how a NeMo 1.x or "
                          "Megatron-Bridge training config is read; legal: such a config, the Megatron-LM flags the "
                          "recipe runs (--tensor-model-parallel-size ...), a Megatron-LM functional-test "
                          "model_config.yaml (its MODEL_ARGS), or the layout given to estimate directly (--tp, --pp, "
                          "--cp, --ep)", field="import", value="megatron")


def _recompute_method_notes(a: argparse.Namespace) -> tuple[str, ...]:
    """Notes for ``--recompute-method uniform --recompute-num-layers N > 1`` (Megatron-Core keeps one input per group
    of N layers and recomputes each group whole: the planner prices every layer's own checkpoint, the same
    recompute with more activation memory). A full granularity without a method is refused, as Megatron-Core's
    TransformerConfig refuses it ("recompute_method must be ... uniform or block"); ``--checkpoint-activations``
    sets uniform itself (arguments.py).

    Raises:
        ConfigError: ``--recompute-granularity full`` without ``--recompute-method``.
    """
    if a.recompute_granularity == "full" and a.recompute_method is None and not a.checkpoint_activations:
        raise ConfigError("--recompute-granularity full without --recompute-method: Megatron-Core's TransformerConfig "
                          "refuses it; legal: --recompute-method uniform (with --recompute-num-layers 1: every layer) "
                          "or block", field="recompute_method", value=None, legal=["uniform", "block"])
    n = a.recompute_num_layers
    if a.recompute_granularity == "full" and a.recompute_method == "uniform" and n and n > 1:
        return (f"--recompute-method uniform --recompute-num-layers {n}: Megatron-Core checkpoints one input per "
                f"{n} layers; priced as every layer's own checkpoint (the same recompute, up to {n - 1} fewer saved "
                "layer inputs per group in the run)",)
    return ()


def _check_read_flags(a: argparse.Namespace) -> None:
    """A script with none of the flags read (another framework's file), or a degree or size below 1.

    Raises:
        ConfigError: naming the flag and the legal values.
    """
    if not any(v not in (None, False) for v in vars(a).values()):
        raise ConfigError("the file has none of the Megatron-LM flags shardplan reads (--tensor-model-parallel-size, "
                          "--micro-batch-size, ...): not a Megatron-LM launch script; legal: the script `shardplan "
                          "export --to megatron` writes, or --from the framework the file belongs to",
                          field="import", value="megatron")
    if a.zero_stage is not None and not 0 <= a.zero_stage <= 3:
        raise ConfigError(f"--zero-stage {a.zero_stage}: legal: 0, 1, 2, 3 (DeepSpeed's ZeRO stages)", field="zero_stage",
                          value=a.zero_stage, legal=[0, 1, 2, 3])
    for flag, v in (("--ds-sequence-parallel-size", a.ds_sequence_parallel_size),
                    ("--tensor-model-parallel-size", a.tensor_model_parallel_size),
                    ("--pipeline-model-parallel-size", a.pipeline_model_parallel_size),
                    ("--context-parallel-size", a.context_parallel_size),
                    ("--expert-model-parallel-size", a.expert_model_parallel_size),
                    ("--micro-batch-size", a.micro_batch_size), ("--global-batch-size", a.global_batch_size),
                    ("--nnodes", a.nnodes), ("--nproc-per-node", a.nproc_per_node), ("--num-layers", a.num_layers),
                    ("--seq-length", a.seq_length), ("--expert-tensor-parallel-size", a.expert_tensor_parallel_size),
                    ("--num-virtual-stages-per-pipeline-rank", a.num_virtual_stages_per_pipeline_rank),
                    ("--virtual-pipeline-model-parallel-size", a.virtual_pipeline_model_parallel_size),
                    ("--recompute-num-layers", a.recompute_num_layers)):
        if v is not None and v < 1:
            raise ConfigError(f"{flag} {v}: legal: a whole number >= 1", field=flag.lstrip("-"), value=v)
    _check_seq_length(a)


def _check_seq_length(a: argparse.Namespace) -> None:
    """``--seq-length`` as Megatron-LM's validate_args checks it (megatron/training/arguments.py): a multiple of
    2 x ``--context-parallel-size`` when that is above 1 ("seq-length should be a multiple of 2 *
    context-parallel-size if context-parallel-size > 1"), and at most ``--max-position-embeddings`` ("must be
    greater than or equal to seq_length").

    Raises:
        ConfigError: naming --seq-length, its value and the legal values (breaker 58: both imported, and the plan's
            estimate then refused the cp case).
    """
    seq, cp, pos = a.seq_length, a.context_parallel_size or 1, a.max_position_embeddings
    if seq is None:
        return
    if cp > 1 and seq % (2 * cp):
        step = 2 * cp
        raise ConfigError(f"--seq-length {seq} is not a multiple of 2 x --context-parallel-size {cp} = {step} (Megatron-LM "
                          f"validate_args asserts it); legal: multiples of {step}, e.g. {seq // step * step or step} or "
                          f"{(seq // step + 1) * step}", field="seq_len", value=seq, legal=[step])
    if pos is not None and seq > pos:
        raise ConfigError(f"--seq-length {seq} is longer than --max-position-embeddings {pos} (Megatron-LM validate_args "
                          f"asserts max_position_embeddings >= seq_length); legal: --seq-length 1 to {pos}, or a "
                          f"--max-position-embeddings of at least {seq}", field="seq_len", value=seq, legal=[1, pos])


def _drop_unset_launch_sizes(words: list[str]) -> list[str]:
    """``words`` without a ``--nnodes`` / ``--nproc-per-node`` whose value is not a number (a shell variable the
    script does not set, ``--nnodes $NUM_NODES``; torchrun's ``--nproc-per-node gpu``; an elastic ``--nnodes
    1:4``): the world size then comes from ``--devices``."""
    out, skip = [], False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        flag, _, value = w.partition("=")
        if flag in ("--nnodes", "--nproc-per-node", "--nproc_per_node"):
            value = value or (words[i + 1] if i + 1 < len(words) else "")
            if not value.isdigit():  # a variable the script does not set, 'gpu', an elastic range 1:4
                skip = "=" not in w
                continue
        out.append(w)
    return out


#: the flags that set the layout or the model's shape: a near miss of one of them is refused by
#: :func:`misspelt_flags` (read without it, the layout would silently take the flag's default)
LAYOUT_FLAGS = ("--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
                "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--micro-batch-size",
                "--global-batch-size", "--seq-length", "--num-layers", "--hidden-size", "--ffn-hidden-size",
                "--num-attention-heads", "--num-query-groups", "--num-layers-per-virtual-pipeline-stage",
                "--num-virtual-stages-per-pipeline-rank", "--num-experts", "--moe-router-topk",
                "--sequence-parallel", "--use-distributed-optimizer", "--recompute-granularity", "--recompute-method",
                "--recompute-num-layers")


def misspelt_flags(unknown: list[str], known: list[str]) -> tuple[str, ...]:
    """Notes for the flags the importer skipped that are a letter or two away from a flag it reads (a typo that
    Megatron-LM's own parser would stop on, "unrecognized arguments", and that would otherwise price another layout
    silently). A flag spelled with underscores where the option has dashes (``--tensor_model_parallel_size``) is
    refused: argparse has no such aliases; so is a near miss of a flag that sets the layout or the model's shape
    (:data:`LAYOUT_FLAGS`: ``--tensor-model-parallel-szie 4`` would otherwise be priced at tp = 1 and exit 0).
    Otherwise a note, not an error: Megatron-LM has hundreds of flags the importer does not read, some of them
    close to the ones it does (``--fp8-recipe`` beside ``--fp4-recipe``).

    Raises:
        ConfigError: an underscore spelling of a flag it reads, or a near miss of one of :data:`LAYOUT_FLAGS`."""
    import difflib

    from shardplan.export.base import near_miss
    notes = []
    for word in unknown:
        flag = word.split("=", 1)[0]
        if not flag.startswith("-") or flag in known or flag[1:2].isdigit():
            continue
        # another case, one dash or underscores (--Tensor-Model-Parallel-Size, -tensor-model-parallel-size,
        # --tensor_model_parallel_size): argparse matches none of them, Megatron-LM stops, the importer would drop it
        dashed = "--" + flag.lstrip("-").replace("_", "-").lower()
        if dashed in known:
            raise ConfigError(f"{flag} is not a Megatron-LM option (its parser stops on it: options are spelled in "
                              f"lower case with two leading dashes and dashes inside); legal: {dashed}", field=flag,
                              value=word)
        if not flag.startswith("--"):
            continue
        # --tp-comm-overlap-cfg extends a flag it reads (another option); a truncated or extended one
        # (--tensor-model-parallel-siz, --micro-batch-sizes) is a typo Megatron-LM's parser (allow_abbrev=False) stops on
        close = [k for k in difflib.get_close_matches(flag, known, n=1, cutoff=0.9) if near_miss(flag, k, "-")]
        if close and close[0] in LAYOUT_FLAGS:  # read without it, another layout would be priced, exit 0
            raise ConfigError(f"{flag} is not a Megatron-LM option (its parser stops on it: 'unrecognized "
                              f"arguments'); did you mean {close[0]}? Without it the importer would price "
                              f"{close[0]}'s default; legal: {close[0]}", field=flag, value=word)
        if close:
            notes.append(f"{flag} is not read (did you mean {close[0]}? Megatron-LM stops on an option it does not "
                         "know); the layout is read without it")
    return tuple(notes)


#: a Megatron-LM training entry point a launch script runs (pretrain_gpt.py, pretrain_mamba.py, Pai-Megatron-Patch's
#: pretrain_qwen.py, ...)
_ENTRY = re.compile(r"(?:^|[/\s\"'`=])pretrain\w*\.py\b")


def shell_statements(text: str) -> list[str]:
    """The statements of a (comment-free, variable-expanded) script: split at a newline, ``;``, ``|`` or ``&``
    outside quotes (:func:`~shardplan.export.base.shell_pieces`), as bash ends a simple command (bash manual, "Lists
    of Commands" and "Pipelines")."""
    out, cur = [], []
    for piece, quoted in shell_pieces(text):
        if piece in ("\n", ";", "|", "&") and not quoted:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(piece)
    out.append("".join(cur))
    return [st for st in out if st.strip()]


def launcher_statements(text: str) -> str:
    """The statements of a variable-expanded script that run a Megatron-LM entry point (:data:`_ENTRY`: the
    ``torchrun ... pretrain_gpt.py ...`` line with its arrays and variables substituted), joined by ``;``: the flags
    argparse receives are theirs alone, not those of an array the launcher never uses, of a heredoc's usage text or of
    a later post-processing command. An assignment (its uses are substituted already) and an ``echo`` / ``printf`` /
    ``cat`` line are not runs. The whole text where no statement names an entry point (a flag list, a launcher that
    holds the script's path in a variable it does not set)."""
    for body in (without_heredocs(text), text):  # a heredoc's text is not run (unless nothing else names a run)
        runs = [st for st in shell_statements(body) if _ENTRY.search(st) and not NOT_A_RUN.match(st)]
        if runs:
            return " ;\n".join(runs)
    return text


#: the most words the importer reads from a launch command (argparse's cost grows with the square of the unknown
#: flags: a breaker's 1 MiB line of 60,000 flags took 80 s; Megatron-LM's own examples pass 100-300 words)
MAX_LAUNCH_WORDS = 5000


def _unset_test_notes(env: dict[str, str]) -> tuple[str, ...]:
    """A note naming the variables the script's ``if`` tests read without the script setting them
    (:data:`shardplan.export.base.UNSET_IN_TESTS`): read unset, the branch its default run takes."""
    names = env.get(UNSET_IN_TESTS, "").split()
    if not names:
        return ()
    return (f"{', '.join(names[:5])}{' ...' if len(names) > 5 else ''}: not set by the script, read unset in its if "
            "tests (the branch bash runs without them in the environment); set them in the script to read another "
            "branch",)


#: a statement that runs another file in the script's own shell (bash manual, "Bourne Shell Builtins": ``source`` and
#: ``.``): the variables and arrays it sets reach the launch line, but the importer reads only the script it is given
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(\S+)")
#: what may stand before ``source`` / ``.`` in a statement (bash manual, "Compound Commands" and "Shell Functions"):
#: if / then / else / do keywords, a group's brace, a function header, ``builtin`` / ``command`` (breaker pass 54b:
#: ``if [ -f c.sh ]; then source c.sh; fi`` and ``setup() { source c.sh; }`` were not noted)
_BEFORE_SOURCE = re.compile(r"^\s*(?:(?:if|then|else|elif|do|\{|\(|builtin|command)\s+|[A-Za-z_]\w*\s*\(\)\s*\{\s*)*")
#: ``eval "$(cat common.sh)"``: another file's text run in the script's shell
_EVAL_CAT = re.compile(r"\beval\s+[\"']?\$\(\s*cat\s+([^)\s\"']+)")


#: files a launch script sources to set up its shell, not its training flags (a Python environment, a login profile)
_ENVIRONMENT_FILES = ("activate", "conda.sh", ".bashrc", ".bash_profile", ".profile", "setvars.sh")


def _sourced_notes(text: str) -> tuple[str, ...]:
    """A note naming the files the script sources (``source common.sh`` / ``. ./env.sh``): flags and variables they set
    are not read, so a launch line that takes its layout from them reads Megatron-LM's defaults there."""
    found = [m.group(1) for st in shell_statements(without_heredocs(strip_comments(text)))
             if (m := _SOURCE.match(_BEFORE_SOURCE.sub("", st, count=1)) or _EVAL_CAT.search(st))]
    files = [f.strip("\"'") for f in found if f.strip("\"'").rstrip("/").rsplit("/", 1)[-1] not in _ENVIRONMENT_FILES]
    if not files:
        return ()
    shown = ", ".join(files[:4]) + (" ..." if len(files) > 4 else "")
    return (f"the script sources {shown}: the variables and flags set there are not read (the importer reads only "
            "the file it is given); a flag the launch line takes from them reads as Megatron-LM's default. Paste "
            "those files' assignments into the script, or import the flags themselves",)


def _parse(text: str, devices: int | None, env: dict[str, str] | None = None) -> tuple[argparse.Namespace, int | None]:
    """The flags of a script (its own variables substituted, :func:`expand_variables`) and its world size: the
    script's torchrun line first (``--nnodes`` defaults to 1), else ``devices`` (also where the line gives a
    size as a variable or ``gpu``). A ``--devices`` that contradicts the script is refused by import_config."""
    # a shell line continuation (backslash-newline) joins the lines, as bash reads the script; shell
    # operators ( ) ; | & < > are tokens of their own, so that they end a list of values
    text = _model_args_flags(text) or text
    _check_script_kind(text)
    env = {**sbatch_env(text), **(env or {})}  # #SBATCH --nodes=4: the job's SLURM_NNODES (NNODES=${SLURM_NNODES:-1})
    expanded = expand_variables(strip_comments(re.sub(r"\\\r?\n", " ", text.replace("\r\n", "\n"))), env)
    lexer = shlex.shlex(launcher_statements(expanded), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # comments are gone (strip_comments: a # inside a word is not one)
    # a bash array element holding a flag and its value ("--fp8-format hybrid" in Megatron-LM's
    # examples/llama/train_llama3_8b_h100_fp8.sh, expanded unquoted as ${DTYPE_ARGS[@]}) is split by bash into
    # words; read it as those words (quoted, argparse would stop on it: the script runs only unquoted)
    # and a quoted command (srun bash -c "$LAUNCHER $CMD", the BLOOM / Megatron-DeepSpeed launchers) as the words
    # the program it runs receives (shell_words)
    try:
        raw = list(lexer)
        words = [part for i, w in enumerate(raw) for part in (
            (w.split() if w.startswith("--") else shell_words(w) if runs_command(raw, i) else [w])
            if " " in w.strip() and re.search(r"(?:^|\s)--[A-Za-z]", w) else [w])]
    except ValueError as e:  # shlex: an unbalanced quote (a heredoc, an apostrophe in a comment-less line)
        _refuse_env_degrees(text)
        raise ConfigError(f"the script cannot be split into words as bash would ({e}: a quote opened and not "
                          "closed); legal: a launch script bash runs, or the Megatron-LM flags alone",
                          field="import", value="megatron") from None
    if len(words) > MAX_LAUNCH_WORDS:  # argparse slows down with the square of the unknown flags: a 1 MiB line hung
        raise ConfigError(f"the launch command has {len(words):,} words once its variables and arrays are substituted; "
                          f"legal: at most {MAX_LAUNCH_WORDS:,} (a Megatron-LM launch passes a few hundred)",
                          field="import", value=len(words), legal=[MAX_LAUNCH_WORDS])
    kept = _drop_unset_launch_sizes(words)
    unread_launch = len(kept) != len(words)  # a --nnodes / --nproc-per-node the text does not give as a number
    ap = parser()
    ap.computed = env.get(COMPUTED, "").split()
    a, unknown = ap.parse_known_args(kept)
    _check_read_flags(a)
    _check_env_degrees(a, text)
    if a.checkpoint_activations and a.recompute_granularity is None:
        a.recompute_granularity = "full"
    if a.recompute_activations:  # Megatron-LM's validate_args sets selective whatever --recompute-granularity says
        a.recompute_granularity = "selective"
    a.misspelt_notes = (misspelt_flags(unknown, list(ap._option_string_actions)) + _recompute_method_notes(a)
                        + _unset_test_notes(env) + _sourced_notes(text))
    if a.recompute_modules:
        a.recompute_modules = _module_names(a.recompute_modules)
    if a.offload_modules:
        a.offload_modules = _module_names(a.offload_modules, "--offload-modules", "offload_modules")
    n = ((a.nnodes or 1) * a.nproc_per_node if a.nproc_per_node and not unread_launch else None) \
        or _srun_world(words, a, env) or devices
    return a, n


def _add_launcher_args(ap: argparse.ArgumentParser) -> None:
    """The launchers' own size flags beside torchrun's ``--nnodes`` / ``--nproc-per-node``: torchrun's other spelling
    ``--nproc_per_node``, and srun's task counts (srun manual), read where srun starts the entry point itself, one task
    per GPU (:func:`_srun_world`)."""
    ap.add_argument("--nproc_per_node", type=int, dest="nproc_per_node")
    ap.add_argument("--ntasks-per-node", type=int)
    ap.add_argument("--ntasks", "-n", type=int)
    ap.add_argument("--nodes", "-N", type=int, dest="srun_nodes")


def _srun_world(words: list[str], a: argparse.Namespace, env: dict[str, str]) -> int | None:
    """The world size of an entry point srun starts itself, one task per GPU (no torchrun between them): srun's
    ``--ntasks`` (``-n``), else its ``--nodes`` (``-N``) x ``--ntasks-per-node``, each defaulting to the job's
    ``#SBATCH`` header (:func:`~shardplan.export.base.sbatch_env`; srun manual); None where srun does not launch the
    entry point or the task count is not given."""
    if "srun" not in words or a.nproc_per_node:
        return None
    per_node = a.ntasks_per_node or int(env.get("SLURM_NTASKS_PER_NODE", "0") or 0)
    nodes = a.srun_nodes or int(env.get("SLURM_NNODES", "1") or 1)
    return a.ntasks or (nodes * per_node if per_node else None)


#: the node-count variables Slurm sets in a job (sbatch manual, "OUTPUT ENVIRONMENT VARIABLES")
SLURM_NODE_VARIABLES = ("SLURM_NNODES", "SLURM_JOB_NUM_NODES")


def _slurm_world(text: str, devices: int | None, a: argparse.Namespace,
                 n: int | None) -> tuple[argparse.Namespace, int | None]:
    """The flags and world size read again with Slurm's node count where the script takes its node count from a Slurm
    variable it does not set (``NNODES=${SLURM_NNODES:-"1"}``, Megatron-LM's examples/mixtral script) and ``devices``
    disagrees with the default: ``devices`` over the torchrun line's ``--nproc-per-node`` is the job's node count (a
    note says so); the first reading otherwise."""
    nproc = a.nproc_per_node
    if (devices is None or n is None or n == devices or not nproc or devices % nproc
            or not any(v in text for v in SLURM_NODE_VARIABLES) or "SLURM_NNODES" in sbatch_env(text)):
        return a, n
    nodes = str(devices // nproc)
    b, m = _parse(text, devices, {v: nodes for v in SLURM_NODE_VARIABLES})
    if m != devices:
        return a, n
    b.misspelt_notes = (*b.misspelt_notes, f"the node count comes from Slurm ({' / '.join(SLURM_NODE_VARIABLES)}, "
                        f"unset outside a job: the script's default {n // nproc}): read as {nodes} nodes x {nproc} = "
                        f"--devices {devices}")
    return b, m


def _check_world(a: argparse.Namespace, n: int, devices: int | None, model_size: int) -> None:
    """The world size ``n`` the script gives (its torchrun line, else ``devices``) against ``devices`` and the model
    parallel size tp x pp x cp.

    Raises:
        ConfigError: a ``devices`` other than the script's torchrun line says (named before the degree check, which
            would otherwise report the script's size as if --devices were not read), or tp x pp x cp not dividing it.
    """
    if devices is not None and n != devices:
        raise ConfigError(f"--devices {devices} disagrees with the script's torchrun --nnodes {a.nnodes or 1} "
                          f"--nproc-per-node {a.nproc_per_node} ({n} devices); legal: leave --devices out, or change "
                          f"the script's node count (its --nnodes value) to the run's", field="devices", value=devices,
                          legal=[n])
    if n % model_size:
        where = (f" (the script's torchrun --nnodes {a.nnodes or 1} --nproc-per-node {a.nproc_per_node})"
                 if a.nproc_per_node else "")
        raise ConfigError(f"tp*pp*cp = {model_size} does not divide the {n} devices{where}; legal: a product tp x pp x "
                          f"cp among {fmt_legal(divisors(n))}", field="devices", value=n, legal=divisors(n))


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of a Megatron-LM launch script or flag list, or of a NeMo 1.x / Megatron-Bridge training YAML read as
    the flags it stands for (:func:`shardplan.export.nemo_yaml.translate`; messages and notes then name the YAML's
    keys). See :func:`read_flags`.

    Raises:
        ConfigError: as :func:`read_flags` and :func:`shardplan.export.nemo_yaml.translate`.
    """
    from shardplan.export.nemo_yaml import translate
    translated = translate(text)
    if translated is None:
        return read_flags(text, devices)
    try:
        imported = read_flags(translated.text, devices)
    except ConfigError as e:
        raise translated.renamed(e) from None
    read_as = (f"read as a {translated.kind} training config: each key as the Megatron-LM flag it stands for "
               "(docs/export.md); data, logging and checkpoint keys do not change the price and are left out")
    return dataclasses.replace(imported, notes=(read_as, *(translated.rename(n) for n in imported.notes)))


def read_flags(text: str, devices: int | None = None) -> Imported:
    """The layout of a Megatron-LM launch script or flag list.

    Args:
        text: the script (comments, ``VAR=(`` arrays and other flags are ignored).
        devices: the world size when the text has no ``torchrun --nnodes --nproc-per-node``.

    Raises:
        ConfigError: no device count, or degrees that do not divide it; activation offloading that
            Megatron-core refuses (:func:`shardplan.parallel.check_activation_offload`: with pp > 1, with
            recompute, or of ``--num-layers`` layers or more). ``--cpu-offloading-num-layers N`` alone turns
            offloading on (validate_args at 000c4ac), with or without an older release's ``--cpu-offloading``.
    """
    a, n = _parse(text, devices)
    a, n = _slurm_world(text, devices, a, n)
    if n is None:
        raise ConfigError("the Megatron-LM arguments do not give the world size: pass --devices",
                          field="devices", value=None)
    tp, pp, cp, ulysses = _degrees(a)
    _check_world(a, n, devices, tp * pp * cp)
    dp, zero = n // (tp * pp * cp), _zero_stage(a)
    _check_optimizer_offload(a, zero)
    shard = _dist_opt_shard(a, dp)
    _check_moe_recompute_flags(a)
    _check_ep_sp(a, tp)
    # arguments.py: "Disabling sequence parallelism because tensor model parallelism is disabled" (tp = 1)
    values = dict(dp=dp, zero_stage=zero, tp=tp, pp=pp, cp=cp,
                  cp_comm="a2a" if ulysses else _cp_comm_of(a) if cp > 1 else "ring",
                  sp=a.sequence_parallel and tp > 1,
                  ep=a.expert_model_parallel_size or 1, recompute=a.recompute_granularity or "none",
                  etp=_etp_of(a, tp),
                  moe_dispatcher=_dispatcher(a),
                  recompute_modules=tuple(a.recompute_modules) if a.recompute_modules else None,
                  recompute_layers=(a.recompute_num_layers if a.recompute_granularity == "full"
                                    and a.recompute_method == "block" and a.recompute_num_layers else None),
                  microbatch_size=a.micro_batch_size or 1, overlap_grad_reduce=a.overlap_grad_reduce,
                  tp_overlap=a.tp_comm_overlap and tp > 1, offload_optimizer=a.optimizer_cpu_offload,
                  moe_a2a_overlap=a.overlap_moe_expert_parallel_comm,
                  offload_activation_layers=a.cpu_offloading_num_layers or 0,
                  offload_modules=(tuple(a.offload_modules) if a.fine_grained_activation_offloading
                                   and a.offload_modules else None),
                  dp_shard=shard if zero else None,
                  **_pipeline_values(a, pp))
    parallel = parallel_from(values)
    check_activation_offload(parallel, a.num_layers)
    check_offload_modules(parallel, None)
    _check_expert_and_head_split(a, parallel)
    precision, optimizer_dtype = _training_of(a, zero)
    capacity, capacity_notes = _capacity_factor(a)
    framework, loss_notes = _profile_of(a, zero, dp, ulysses)
    notes = (_import_notes(a, parallel.schedule, precision) + capacity_notes + loss_notes + _etp_notes(a, tp)
             + _default_notes(a, precision))
    return Imported(parallel, devices=n, seq_len=a.seq_length, global_batch=a.global_batch_size,
                    framework=framework, precision=precision, optimizer_dtype=optimizer_dtype,
                    moe_capacity_factor=capacity, dropout=any((MEGATRON_DROPOUT if rate is None else rate) > 0
                                                              for rate in (a.attention_dropout, a.hidden_dropout)),
                    notes=notes, model_shape=model_shape(a),
                    # an unfused attention core (its s x s scores stored): the plan records attention 'naive'
                    attention="naive" if a.attention_backend in ("unfused", "local") else None)


def _numerics_notes(ctx) -> list[str]:
    """Header notes on the flags that set numerics other than Megatron-LM's defaults: ``--grad-reduce-in-bf16`` (the
    plan keeps bf16 gradients; new-user pass 54) and dropout 0.0 (the plan is priced without dropout; new-user pass
    58: the rates changed numerics against stock runs unexplained)."""
    out = []
    if "--grad-reduce-in-bf16" in PRECISION_FLAGS.get(ctx.training.precision.name, []):
        out.append(f"--grad-reduce-in-bf16: the plan's precision {ctx.training.precision.name} keeps bf16 gradients; "
                   "Megatron-LM's own default (--bf16 alone) accumulates and reduces them in fp32 (2x the gradient "
                   "memory): --precision bf16-mixed-fp32-grads plans that")
    if not ctx.training.dropout:
        out.append("--attention-dropout 0.0 --hidden-dropout 0.0: the plan is priced without dropout; Megatron-LM's own "
                   f"default is {MEGATRON_DROPOUT} for both (--dropout plans that: its masks stored, its element-wise "
                   "traffic priced)")
    return out


def _default_notes(a: argparse.Namespace, precision: str) -> tuple[str, ...]:
    """Notes on what the plan takes from Megatron-LM's defaults where the script says nothing (new-user pass 58: a stock
    script imported as fp32 gradients and dropout on without a word): ``--bf16`` without ``--grad-reduce-in-bf16``
    reduces gradients in fp32 (arguments.py validate_args), and without ``--attention-dropout`` / ``--hidden-dropout``
    both are 0.1 (_add_regularization_args)."""
    out = []
    if precision == "bf16-mixed-fp32-grads" and not a.accumulate_allreduce_grads_in_fp32:
        out.append("precision bf16-mixed-fp32-grads: --bf16 without --grad-reduce-in-bf16 accumulates and reduces "
                   "gradients in fp32 (Megatron-LM's default; 2 more bytes per parameter than bf16 gradients)")
    unset = [flag for flag, rate in (("--attention-dropout", a.attention_dropout), ("--hidden-dropout", a.hidden_dropout))
             if rate is None]
    if unset:
        out.append(f"dropout on: {' and '.join(unset)} not given, Megatron-LM's default {MEGATRON_DROPOUT} (its masks "
                   "stored, its element-wise traffic priced; --attention-dropout 0 --hidden-dropout 0 turns it off)")
    return tuple(out)


def _etp_of(a: argparse.Namespace, tp: int) -> int | None:
    """The plan's etp of ``--expert-tensor-parallel-size``: None where it equals tp (Megatron-LM's default) or the
    model has no experts (no ``--num-experts``: Megatron-LM builds no expert layer, the flag changes nothing)."""
    etp = a.expert_tensor_parallel_size
    return None if etp in (None, tp) or not a.num_experts else etp


def _etp_notes(a: argparse.Namespace, tp: int) -> tuple[str, ...]:
    """A note where ``--expert-tensor-parallel-size`` is given for a model without ``--num-experts`` (dropped)."""
    etp = a.expert_tensor_parallel_size
    if etp in (None, tp) or a.num_experts:
        return ()
    return (f"--expert-tensor-parallel-size {etp} without --num-experts: a dense model has no expert layer for it to "
            "split (Megatron-LM only checks the expert grid); not in the plan",)


def _check_expert_and_head_split(a: argparse.Namespace, p: ParallelConfig) -> None:
    """What Megatron-LM and Transformer Engine refuse at start-up, refused at import rather than by ``estimate --plan``:
    ``--num-experts`` not divisible by ``--expert-model-parallel-size`` (Megatron-Core MoELayer asserts
    ``num_moe_experts % expert_model_parallel_size == 0``) and all-to-all context parallelism whose degree does not
    divide the key/value heads (Transformer Engine's a2a attention scatters the heads over the cp ranks).

    Raises:
        ConfigError: naming the flags, the values and the legal ones.
    """
    if a.num_experts and p.ep > 1 and a.num_experts % p.ep:
        legal = divisors(a.num_experts)
        raise ConfigError(f"--expert-model-parallel-size {p.ep} does not divide --num-experts {a.num_experts} "
                          f"(Megatron-Core asserts it); legal: {fmt_legal(legal)}", field="ep", value=p.ep, legal=legal)
    heads = (a.num_query_groups if a.group_query_attention and a.num_query_groups else a.num_attention_heads)
    if p.cp > 1 and p.cp_comm == "a2a" and heads and heads % p.cp:
        legal = [c for c in divisors(heads) if c > 1]
        raise ConfigError(f"--cp-comm-type a2a with --context-parallel-size {p.cp}: the {heads} key/value heads do not "
                          f"divide over {p.cp} ranks (Transformer Engine's all-to-all attention scatters the heads); "
                          f"legal cp: {fmt_legal(legal)}, or --cp-comm-type p2p", field="cp", value=p.cp, legal=legal)


def _check_optimizer_offload(a: argparse.Namespace, zero: int) -> None:
    """``--optimizer-cpu-offload`` needs the distributed optimizer (Megatron-LM arguments.py: it asserts
    ``--use-precision-aware-optimizer``, which OptimizerConfig allows only with the distributed optimizer; the
    exporter's rule, read back).

    Raises:
        ConfigError: the offload without the distributed optimizer, Megatron-FSDP or FSDP2."""
    if a.optimizer_cpu_offload and zero == 0 and a.zero_stage is None:
        raise ConfigError("--optimizer-cpu-offload without --use-distributed-optimizer (or Megatron-FSDP / FSDP2): "
                          "Megatron-LM's CPU optimizer offload needs the precision-aware optimizer, which runs only "
                          "with the distributed optimizer; legal: add --use-distributed-optimizer, or drop "
                          "--optimizer-cpu-offload", field="offload_optimizer", value=True, legal=[False])


def _profile_of(a: argparse.Namespace, zero: int, dp: int, ulysses: bool) -> tuple[str, tuple[str, ...]]:
    """(framework profile, notes) of the flags: Megatron-DeepSpeed's (``--deepspeed``, ``--zero-stage`` or a Ulysses
    group) is the deepspeed profile (:func:`_deepspeed_notes`), else the megatron profile of the loss and
    parameter-gather flags (:func:`_gather_profile`, :func:`_loss_profile`)."""
    if a.deepspeed or a.zero_stage is not None or ulysses:
        return "deepspeed", _deepspeed_notes(a)
    return _gather_profile(a, zero, dp, *_loss_profile(a))


def _degrees(a: argparse.Namespace) -> tuple[int, int, int, bool]:
    """(tp, pp, cp, ulysses) of the flags: cp is Megatron-LM's context parallelism times Megatron-DeepSpeed's
    ``--ds-sequence-parallel-size`` (DeepSpeed-Ulysses, ``ulysses`` True when above 1, priced with all-to-all)."""
    tp, pp, cp = a.tensor_model_parallel_size or 1, a.pipeline_model_parallel_size or 1, a.context_parallel_size or 1
    ulysses = (a.ds_sequence_parallel_size or 1) > 1
    return tp, pp, cp * (a.ds_sequence_parallel_size if ulysses else 1), ulysses


def _deepspeed_notes(a: argparse.Namespace) -> tuple[str, ...]:
    """Notes for a Megatron-DeepSpeed command (``--deepspeed`` / ``--zero-stage`` / ``--ds-sequence-parallel-size``),
    priced with the deepspeed profile: DeepSpeed-Ulysses read as cp with all-to-all, and the options the planner does
    not price (FPDT's chunked attention and its offloading, activation checkpoints on the CPU, the CPU optimizer)."""
    notes = ["Megatron-DeepSpeed (--deepspeed / --zero-stage): priced with the deepspeed profile"]
    if (a.ds_sequence_parallel_size or 1) > 1:
        notes.append(f"--ds-sequence-parallel-size {a.ds_sequence_parallel_size}: DeepSpeed-Ulysses, read as cp with "
                     "all-to-all (cp_comm a2a)")
    unpriced = [f for f, on in (("--ds-sequence-parallel-fpdt", a.ds_sequence_parallel_fpdt),
                                ("--ds-sequence-parallel-fpdt-offloading", a.ds_sequence_parallel_fpdt_offloading),
                                ("--checkpoint-in-cpu", a.checkpoint_in_cpu), ("--cpu-optimizer", a.cpu_optimizer)) if on]
    if unpriced:
        notes.append(f"{', '.join(unpriced)}: not priced (FPDT's chunked attention and host offloading, activation "
                     "checkpoints or the optimizer on the CPU): memory and time as without them")
    return tuple(notes)


def _gather_profile(a: argparse.Namespace, zero: int, dp: int, framework: str,
                    notes: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """``framework`` (and its ``notes``) with ``+param_gather_overlap=False`` for a distributed optimizer whose
    parameter AllGather blocks after the step: no ``--overlap-param-gather`` (arguments.py default False; validate_args
    needs ``--overlap-grad-reduce`` with it), which the megatron profile would price hidden."""
    if zero != 1 or dp < 2 or (a.overlap_param_gather and a.overlap_grad_reduce):
        return framework, notes
    why = ("--overlap-param-gather without --overlap-grad-reduce (Megatron-LM's validate_args overlaps the gather "
           "only with both)" if a.overlap_param_gather else "no --overlap-param-gather")
    return framework + "+param_gather_overlap=False", notes + (
        f"{why}: the distributed optimizer's parameter AllGather blocks after the optimizer step; "
        "priced with param_gather_overlap=False",)


def _loss_profile(a: argparse.Namespace) -> tuple[str, tuple[str, ...]]:
    """The profile a command's cross-entropy flags run (:data:`CE_FLAGS`): ``megatron+loss=in_place`` for Transformer
    Engine's ('te' with ``--cross-entropy-loss-fusion``), else ``megatron`` (its fused loss), with a note for the
    'linear' implementation (output layer and loss fused over vocabulary chunks), priced as the fused loss."""
    if not a.cross_entropy_loss_fusion:
        return "megatron", ()
    if a.cross_entropy_fusion_impl == "te":
        return "megatron+loss=in_place", ("--cross-entropy-fusion-impl te: Transformer Engine's in-place cross-entropy, "
                                          "the profile megatron+loss=in_place (--framework megatron+loss=in_place)",)
    if a.cross_entropy_fusion_impl == "linear":
        return "megatron", ("--cross-entropy-fusion-impl linear: the output layer and loss fused over vocabulary "
                            "chunks, priced as the megatron profile's fused loss (logits memory a little high)",)
    return "megatron", ()


def _dist_opt_shard(a: argparse.Namespace, dp: int) -> int:
    """The distributed optimizer's shard group: dp over ``--num-distributed-optimizer-instances`` (its copies across
    the data-parallel ranks; Megatron-core's parallel_state asserts that the instances divide the data-parallel
    size: "Data parallel size should be divisible by partial DistOpt shard factor").

    Raises:
        ConfigError: instances below 1 or not dividing dp, naming the legal values (the divisors of dp).
    """
    instances = a.num_distributed_optimizer_instances
    if instances is None:
        return dp
    if instances < 1 or dp % instances:
        legal = divisors(dp)
        raise ConfigError(f"--num-distributed-optimizer-instances {instances} does not divide the {dp} data-parallel "
                          f"ranks (Megatron-LM asserts it: each instance shards over dp / instances ranks); legal: "
                          f"{fmt_legal(legal)}", field="num_distributed_optimizer_instances", value=instances,
                          legal=legal)
    return dp // instances


def _capacity_factor(a: argparse.Namespace) -> tuple[float | None, tuple[str, ...]]:
    """(capacity factor, notes) of ``--moe-expert-capacity-factor``: a negative factor is dropless, as Megatron-core
    reads it (``TransformerConfig.__post_init__``: "if self.moe_expert_capacity_factor < 0:
    self.moe_expert_capacity_factor = None"), with a note; otherwise the factor, in the range the planner prices
    (``TrainingSpec.moe_capacity_factor``).

    Raises:
        ConfigError: nan or inf, a factor outside the priced range, or ``--moe-pad-expert-input-to-capacity`` without
            a factor (Megatron-core: "moe_expert_capacity_factor must be set to use
            moe_pad_expert_input_to_capacity").
    """
    from shardplan.specs.training import TrainingSpec
    bounds = TrainingSpec.model_fields["moe_capacity_factor"].metadata
    lo = min(getattr(m, "ge") for m in bounds if getattr(m, "ge", None) is not None)
    hi = max(getattr(m, "le") for m in bounds if getattr(m, "le", None) is not None)
    cf = a.moe_expert_capacity_factor
    legal = f"legal: {lo:g} to {hi:g}, or a negative value (dropless, as Megatron-LM reads it)"
    if cf is not None and not math.isfinite(cf):
        raise ConfigError(f"--moe-expert-capacity-factor {cf}; {legal}", field="moe_capacity_factor", value=str(cf))
    notes: tuple[str, ...] = ()
    if cf is not None and cf < 0:
        cf, notes = None, (f"--moe-expert-capacity-factor {a.moe_expert_capacity_factor:g}: negative, so dropless "
                           "(Megatron-core reads a negative factor as none); priced without token dropping",)
    if cf is None and a.moe_pad_expert_input_to_capacity:
        raise ConfigError("--moe-pad-expert-input-to-capacity without a capacity factor: Megatron-LM refuses it "
                          "(\"moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity\"); "
                          f"legal: --moe-expert-capacity-factor {lo:g} to {hi:g}, or drop the flag",
                          field="moe_capacity_factor", value=None)
    if cf is not None and not lo <= cf <= hi:
        raise ConfigError(f"--moe-expert-capacity-factor {cf:g} is outside the range the planner prices; {legal}",
                          field="moe_capacity_factor", value=cf)
    return cf, notes


def bf16_gradients(a: argparse.Namespace) -> bool:
    """Whether Megatron-LM keeps a ``--bf16`` run's gradients in bf16 (arguments.py validate_args' bf16 branch):
    ``--grad-reduce-in-bf16`` wins over ``--accumulate-allreduce-grads-in-fp32``; otherwise fp32 accumulation and
    reduction are switched on unless ``--main-grads-dtype bf16`` (the precision-aware optimizer's gradient dtype)."""
    if a.grad_reduce_in_bf16:
        return True
    return not a.accumulate_allreduce_grads_in_fp32 and a.main_grads_dtype == "bf16"


def _import_notes(a: argparse.Namespace, schedule: str, precision: str) -> tuple[str, ...]:
    """What an imported command runs that the planner prices otherwise: blocking interleaved sends, fp4 primary
    weights, bf16 first / last layers under fp4, fp32 gradients under an fp8 / fp4 recipe without
    ``--grad-reduce-in-bf16`` (the planner's quantized policies keep bf16 gradients), and fp32 training where no
    16-bit flag is given."""
    notes: tuple[str, ...] = a.misspelt_notes + _cuda_graph_note(a)
    notes += (("--no-overlap-p2p-communication: the interleaved schedule's stage-boundary sends are blocking; price "
              "them with --framework megatron-legacy (the megatron profile overlaps them with compute, Megatron-LM's "
              "default)",) if a.no_overlap_p2p_communication and schedule == "interleaved" else ())
    notes += (("--fp8-recipe mxfp8: MXFP8 block scaling runs on Blackwell's tensor cores only (Transformer Engine's "
               "MXFP8BlockScaling needs compute capability 10.0); priced as fp8 on the hardware estimate is given: a "
               "Hopper GPU runs the tensorwise, delayed or blockwise recipe instead",) if a.fp8_recipe == "mxfp8" else ())
    notes += (("--fp4-param-gather: fp4 primary weights are priced as nvfp4-mixed's bf16 working copy (memory a "
               "little high, the parameter gather's bytes too)",) if a.fp4_param_gather else ())
    notes += (("--first-last-layers-bf16: the layers kept in bf16 are priced in fp4 like the others (their "
               "count is not modelled)",) if a.first_last_layers_bf16 and a.fp4_format else ())
    notes += (("fp32 gradients: without --grad-reduce-in-bf16 Megatron-LM accumulates and reduces gradients in fp32; "
               f"{precision} is priced with bf16 ones (2 bytes per parameter less memory, half the data-parallel "
               "reduction's bytes)",) if precision in ("fp8-mixed", "fp8-params", "nvfp4-mixed")
              and not bf16_gradients(a) else ())
    # arguments.py: params_dtype float32 unless --bf16 / --fp16 (a Megatron-DeepSpeed ds_config may say otherwise)
    notes += (("no --bf16 / --fp16: Megatron-LM trains in fp32 (recorded as precision fp32; give --precision to "
               "price another)",) if precision == "fp32" and not a.deepspeed else ())
    return notes


def _training_of(a: argparse.Namespace, zero_stage: int) -> tuple[str, str]:
    """(precision policy, optimizer state) of the flags, the inverse of :func:`megatron_args`' table:
    ``--fp8-format`` (+ ``--fp8-param-gather``: fp8-params), ``--fp4-format e2m1 --fp4-recipe nvfp4``
    (nvfp4-mixed), ``--bf16 --grad-reduce-in-bf16`` (bf16-mixed), ``--bf16`` alone or with
    ``--accumulate-allreduce-grads-in-fp32`` (bf16-mixed-fp32-grads: Megatron-LM's default for bf16), ``--fp16``
    (fp16-mixed; with ``--accumulate-allreduce-grads-in-fp32``: fp16-mixed-fp32-grads), none of them fp32; ``--use-precision-aware-optimizer`` with both Adam moments in bf16:
    bf16-moments.

    Raises:
        ConfigError: settings the planner has no policy for (fp16 under an fp8 / fp4 recipe, another fp8 format, an fp4 recipe other than
            NVFP4, moments in another
            dtype or only one of them in bf16, non-fp32 main parameters, the precision-aware optimizer without
            the distributed optimizer, which Megatron-LM refuses); --fp16 with --bf16 (Megatron-LM refuses both).
    """
    def bad(flag: str, why: str, legal: str) -> ConfigError:
        return ConfigError(f"Megatron-LM {flag}: {why}; legal: {legal}", field="import", value=flag)
    if a.fp16 and a.bf16:
        raise bad("--fp16 --bf16", "Megatron-LM takes one 16-bit format (arguments.py asserts not both)",
                  "--fp16 or --bf16")
    if a.fp16 and (a.fp8_format or a.fp4_format):
        raise bad("--fp16 --fp8-format" if a.fp8_format else "--fp16 --fp4-format", "the planner prices fp8 and NVFP4 "
                  "recipes beside bf16 weights (Transformer Engine's recipes as Megatron-Bridge runs them)",
                  "--bf16 with the recipe, or --fp16 without it")
    if a.fp4_format and a.fp8_format:
        raise bad(f"--fp8-format {a.fp8_format} --fp4-format {a.fp4_format}", "fp8 and fp4 recipes are exclusive "
                  "(Megatron-LM runs one quantized recipe)", "one of --fp8-format / --fp4-format")
    if a.fp4_param_gather and not a.fp4_format:
        raise bad("--fp4-param-gather", "fp4 primary weights need an fp4 recipe", "add --fp4-format e2m1 --fp4-recipe "
                  "nvfp4, or drop --fp4-param-gather")
    if a.fp8_format not in (None, "e4m3", "hybrid"):
        raise bad(f"--fp8-format {a.fp8_format}", "not a Transformer Engine fp8 recipe the flags take", "e4m3, hybrid")
    if a.fp4_format is not None and (a.fp4_format, a.fp4_recipe or "nvfp4") != ("e2m1", "nvfp4"):
        raise bad(f"--fp4-format {a.fp4_format} --fp4-recipe {a.fp4_recipe}", "the planner prices NVFP4 only "
                  "(E2M1 values, E4M3 scales per 16 elements)", "--fp4-format e2m1 --fp4-recipe nvfp4")
    moments = (a.exp_avg_dtype or "fp32", a.exp_avg_sq_dtype or "fp32")
    if a.use_precision_aware_optimizer and (moments not in (("bf16", "bf16"), ("fp32", "fp32"))
                                            or (a.main_params_dtype or "fp32") != "fp32"):
        raise bad(f"--exp-avg-dtype {moments[0]} --exp-avg-sq-dtype {moments[1]}"
                  + (f" --main-params-dtype {a.main_params_dtype}" if a.main_params_dtype else ""),
                  "the planner prices Adam moments both fp32 or both bf16 beside fp32 main parameters",
                  "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16, or neither flag")
    bf16_moments = a.use_precision_aware_optimizer and moments == ("bf16", "bf16")
    if bf16_moments and zero_stage != 1:
        raise bad("--use-precision-aware-optimizer", "Megatron-LM runs it only with --use-distributed-optimizer",
                  "add --use-distributed-optimizer")
    if a.fp8_param_gather and zero_stage == 0:  # arguments.py validate_args asserts the distributed optimizer or FSDP
        raise bad("--fp8-param-gather", "Megatron-LM runs it only with the distributed optimizer, Megatron-FSDP or torch "
                  "FSDP2", "add --use-distributed-optimizer")
    if a.fp4_format:  # NVFP4 linear layers (fp4 wins over an fp8 format: Megatron-LM's fp4 context replaces fp8's)
        precision = "nvfp4-mixed"
    elif a.fp8_format:
        precision = "fp8-params" if a.fp8_param_gather else "fp8-mixed"
    elif a.bf16:
        precision = "bf16-mixed" if bf16_gradients(a) else "bf16-mixed-fp32-grads"
    elif a.fp16:
        precision = "fp16-mixed-fp32-grads" if a.accumulate_allreduce_grads_in_fp32 else "fp16-mixed"
    else:
        precision = "fp32"
    return precision, "bf16-moments" if bf16_moments else "fp32"


EXPORTER = Exporter(name="megatron", title="Megatron-LM", source=SOURCE, suffix=".sh",
                    expresses=("overlap_grad_reduce", "tp_overlap", "offload_optimizer", "etp", "moe_dispatcher", "cp_comm",
                               "recompute_modules", "recompute_layers", "offload_activation_layers", "moe_a2a_overlap",
                               "offload_modules"),
                    write=write, read=read,
                    precisions=("bf16-mixed", "bf16-mixed-fp32-grads", "fp8-mixed", "fp8-params", "nvfp4-mixed",
                                "fp16-mixed", "fp16-mixed-fp32-grads", "fp32"),
                    optimizer_dtypes=("fp32", "bf16-moments"), dropout=True, moe_capacity=True, seq_key="--seq-length")
