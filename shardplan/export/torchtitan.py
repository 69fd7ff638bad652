"""torchtitan TOML job config.

Source of the names: torchtitan ``torchtitan/config/job_config.py`` (2025, commit 000204a):
``[parallelism]`` data_parallel_replicate_degree, data_parallel_shard_degree, fsdp_reshard_after_forward,
tensor_parallel_degree, enable_async_tensor_parallel, pipeline_parallel_degree,
pipeline_parallel_schedule, pipeline_parallel_layers_per_stage, pipeline_parallel_first_stage_less_layers /
pipeline_parallel_last_stage_less_layers (default 1: the embedding and the LM head count as a layer each when
the stages are cut; written as 0 for the planner's even split, and as the weights that reproduce its uneven split,
:func:`titan_stage_layers` and :func:`rank_layers`), pipeline_parallel_microbatch_size,
context_parallel_degree, expert_parallel_degree (+ expert_tensor_parallel_degree, added later in 2025: written only
with ep > 1, so a dense model's config runs on releases without it; the first / last stage weights need commit
6404b93 or later, where they appeared);
``[activation_checkpoint]`` mode / selective_ac_option; ``[training]`` local_batch_size,
global_batch_size, seq_len; ``[compile]`` enable / components (written for a plan priced with the
``torchtitan-compile`` profile; read back as that profile, as is the older ``[training] compile``). Schedule names: ``torch.distributed.pipelining`` (GPipe, 1F1B, Interleaved1F1B).

Semantics: world = replicate x shard x cp x tp x pp (expert parallelism borrows from shard x cp, the
planner's "ep carved from dp x cp"); FSDP2 is ZeRO-3 (``fsdp_reshard_after_forward = "always"``) or
ZeRO-2 (``"never"``: parameters kept unsharded between forward and backward, PyTorch's SHARD_GRAD_OP);
there is no ZeRO-1. TP always shards the sequence between the TP regions (SequenceParallel on the norms),
so tp > 1 needs sp. Without PP, ``local_batch_size`` is one microbatch and ``global_batch_size`` >
local x dp gives gradient accumulation; with PP, local_batch_size is one run of the schedule, split into
``pipeline_parallel_microbatch_size`` microbatches, and a global batch of k x local x dp runs it k times
(``pipeline_flushes`` k). Selective recomputation maps to op-level SAC
(``selective_ac_option = "op"``: matmul outputs saved, the rest recomputed).
"""

from __future__ import annotations

import tomllib

from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.export.base import (ExportContext, Exporter, Imported, check_unexpressed, comment_block,
                                   even_layers_per_virtual_stage, flag, model_support_line, parallel_from, read_meta,
                                   refuse_first, section, whole)
from shardplan.limits import MAX_SEQ_LEN

SOURCE = ("torchtitan torchtitan/config/job_config.py (2025, commit 000204a; pipeline_parallel_first/last_stage_less_layers "
          "from commit 6404b93, expert_tensor_parallel_degree and [compile] from later 2025 releases) + "
          "torch.distributed.pipelining")
#: the profile of torchtitan with torch.compile (``[compile] enable = true``, components model and loss; before mid-2025
#: ``[training] compile = true``), which export writes and import reads
COMPILED_PROFILE = "torchtitan-compile"
_SCHEDULES = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved1F1B"}
_ALT = {"tp_overlap": "Megatron-LM (--tp-comm-overlap; torchtitan's async TP "
        "is enable_async_tensor_parallel with torch.compile)"}


def _check(ctx: ExportContext) -> None:
    p = ctx.p
    check_unexpressed(p, EXPORTER, _ALT)
    checks = [
        (p.offload_optimizer and p.zero_stage != 3, f"an offloaded optimizer at ZeRO-{p.zero_stage} (its "
         "enable_cpu_offload, FSDP2's CPUOffloadPolicy, offloads the fully sharded parameters with it: --zero-stage 3)",
         "DeepSpeed (offload_optimizer)"),
        (p.offload_params and not p.offload_optimizer, "offloaded parameters with the optimizer on the GPU (its "
         "enable_cpu_offload, FSDP2's CPUOffloadPolicy, moves the optimizer step to the host as well: "
         "--offload-optimizer)", "DeepSpeed (offload_param alone)"),
        (p.zero_stage == 1, "ZeRO-1 (FSDP2 shards gradients with the optimizer state: ZeRO-2 or ZeRO-3)",
         "Megatron-LM (--use-distributed-optimizer), DeepSpeed (stage 1) or nanotron (zero_stage 1)"),
        (p.zero_stage == 0 and p.cp > 1, f"zero_stage=0 with cp={p.cp} (its FSDP shards the weights over "
         f"data_parallel_shard x context_parallel, so cp > 1 alone makes the run ZeRO-2/3: --zero-stage 3)",
         "Megatron-LM (--context-parallel-size without the distributed optimizer)"),
        (p.tp > 1 and not p.sp, f"tp={p.tp} without sequence parallelism (its TP plan always shards the sequence "
         f"on the norms)", "Megatron-LM (no --sequence-parallel)"),
        (p.schedule == "zero-bubble" and p.pp > 1, "the single-stage ZB-H1 schedule (its zero-bubble schedules "
         "are multi-stage: InterleavedZeroBubble, ZBVZeroBubble)", "no exporter"),
        (p.schedule == "dualpipe" and p.pp > 1, "DualPipe (torch.distributed.pipelining has the V-shaped DualPipeV, "
         "one copy of the weights, not DualPipe's two directions)", "no exporter"),
        (p.tp_overlap and not ctx.training.framework.compiled, "tp_overlap without torch.compile (its async TP, "
         "enable_async_tensor_parallel, raises 'Async TP requires torch.compile': price the plan with --framework "
         "torchtitan-compile)", "Megatron-LM (--tp-comm-overlap)"),
        (p.moe_dispatcher == "deepep" and p.ep > 1 and p.expert_tp > 1, f"DeepEP with etp={p.expert_tp} (its "
         "DeepEP path raises 'DeepEP with Expert Tensor Parallelism (ETP) is not supported yet')",
         "Megatron-LM (--moe-enable-deepep)"),
        (p.moe_dispatcher == "allgather", "the all-gather token dispatcher (its expert parallelism dispatches by "
         "all-to-all: expert_parallel_comm_backend standard or deepep)", "Megatron-LM (--moe-token-dispatcher-type "
         "allgather)"),
        (p.ep > 1 and p.expert_tp not in (1, p.tp), f"etp={p.expert_tp} with tp={p.tp} (its "
         "expert_tensor_parallel_degree is 1 or the tensor-parallel degree)", "Megatron-LM (--expert-tensor-parallel-size)"),
        (p.ep > 1 and not _ep_fits(p), f"ep={p.ep} outside its dp2ep rule (cp{' x tp' if p.expert_tp == 1 < p.tp else ''} "
         f"dividing ep, ep dividing data_parallel_shard_degree x context_parallel_degree"
         f"{' x tp' if p.expert_tp == 1 < p.tp else ''}; here shard {p.dp_shard if p.zero_stage else 1}, cp {p.cp}, "
         f"tp {p.tp}, etp {p.expert_tp})", "Megatron-LM"),
    ]
    refuse_first("torchtitan", checks)


def _ep_fits(p) -> bool:
    """torchtitan's dp2ep constraint (:func:`shardplan.parallel.dp2ep_bounds`): low | ep | high."""
    from shardplan.parallel import dp2ep_bounds
    low, high, _ = dp2ep_bounds(p)
    return p.ep % low == 0 and high % p.ep == 0


def _parallelism(ctx: ExportContext) -> dict:
    p = ctx.p
    shard = p.dp_shard if p.zero_stage else 1
    par = {"data_parallel_replicate_degree": p.dp // shard, "data_parallel_shard_degree": shard,
           "fsdp_reshard_after_forward": {2: "never", 3: "always"}.get(p.zero_stage, "default"),
           "tensor_parallel_degree": p.tp, "enable_async_tensor_parallel": p.tp_overlap,
           "pipeline_parallel_degree": p.pp, "context_parallel_degree": p.cp,
           "expert_parallel_degree": p.ep}
    if p.ep > 1:  # a key of later 2025 releases (job_config.py at 000204a / 6404b93 has none): written only for MoE
        par["expert_tensor_parallel_degree"] = p.expert_tp
    if p.ep > 1 and p.moe_dispatcher == "deepep":  # EP_COMM_BACKENDS: torchtitan's DeepEP token dispatch
        par["expert_parallel_comm_backend"] = "deepep"
    if p.pp > 1:
        cut = _uneven_cut(ctx)
        if cut is not None:  # the planner's uneven split, cut by torchtitan's weighted generator
            per, first, last = cut
            par.update(pipeline_parallel_schedule=_SCHEDULES[p.schedule],
                       **({"pipeline_parallel_layers_per_stage": per} if per else {}),
                       pipeline_parallel_first_stage_less_layers=first,
                       pipeline_parallel_last_stage_less_layers=last,
                       pipeline_parallel_microbatch_size=p.microbatch_size)
            return par
        per = even_layers_per_virtual_stage(ctx, "torchtitan", "Megatron-LM (--pipeline-model-parallel-layout)")
        # first/last_stage_less_layers 0: the embedding and LM head take no layer's place, so the stages hold the
        # planner's even split (torchtitan's defaults, 1 and 1, count them as a layer each)
        par.update(pipeline_parallel_schedule=_SCHEDULES[p.schedule], pipeline_parallel_layers_per_stage=per,
                   pipeline_parallel_first_stage_less_layers=0, pipeline_parallel_last_stage_less_layers=0,
                   pipeline_parallel_microbatch_size=p.microbatch_size)
    return par


def titan_stage_layers(n_layers: int, stages: int, first_less: int, last_less: int) -> tuple[int, ...] | None:
    """Transformer layers per pipeline stage as torchtitan cuts them (``distributed/pipeline_parallel.py``
    ``generate_llm_fqn_per_model_part``): the embedding counts as ``first_less`` layers and the norm + LM head as
    ``last_less``; the n_layers + first_less + last_less effective layers are dealt evenly, the first
    (effective mod stages) stages taking one more. None where torchtitan raises (more stages than effective layers,
    a weight above the smallest share). Example: 126 layers, 32 stages, 1 and 1: 128 / 32 = 4 each, so 3, 4 x 30, 3."""
    if stages < 2:
        return (n_layers,)
    effective = n_layers + first_less + last_less
    base, extra = divmod(effective, stages)
    if base == 0 or first_less > base or last_less > base:
        return None
    shares = [base + (1 if i < extra else 0) for i in range(stages)]
    shares[0] -= first_less
    shares[-1] -= last_less
    out, left = [], n_layers
    for share in shares:  # torchtitan stops adding layers once every layer is placed
        out.append(min(share, left))
        left -= out[-1]
    return tuple(out) if left == 0 else None


def rank_layers(chunks: tuple[int, ...], pp: int) -> tuple[int, ...]:
    """Layers per pipeline rank when torchtitan places virtual stage j on rank j mod pp (its looped
    placement for Interleaved1F1B)."""
    return tuple(sum(chunks[r::pp]) for r in range(pp))


def _uneven_cut(ctx: ExportContext) -> tuple[int | None, int, int] | None:
    """(layers_per_stage or None, first_stage_less_layers, last_stage_less_layers) with which torchtitan cuts the
    planner's uneven split: its pp x virtual_stages stages (:func:`titan_stage_layers`, placed by
    :func:`rank_layers`) give each rank the planner's layer count; layers_per_stage None for one stage per rank
    (torchtitan then makes pp stages). None for an even split or one no weights up to 8 give; torchtitan's defaults
    (1, 1) are tried first."""
    split, pp, v = ctx.layout.stage_layers, ctx.p.pp, ctx.p.virtual_stages
    if len(set(split)) == 1:
        return None
    n = sum(split)
    for a, b in sorted(((a, b) for a in range(9) for b in range(9)), key=lambda w: (w != (1, 1), sum(w), w)):
        chunks = titan_stage_layers(n, pp * v, a, b)
        if chunks is None or rank_layers(chunks, pp) != tuple(split):
            continue
        if v == 1:
            return None, a, b
        per = -(-(n + a + b) // (pp * v))  # torchtitan: ceil((n + a + b) / per) stages must be pp x v
        if -(-(n + a + b) // per) == pp * v:
            return per, a, b
    return None


def job_config(ctx: ExportContext) -> dict:
    """The torchtitan job-config mapping of a plan (sections parallelism, activation_checkpoint, training; fp8-mixed
    as ``[model] converters = ["float8"]``, torchao's float8 linears, which :func:`read` reads back).

    Raises:
        ConfigError: see the module docstring (ZeRO-1, tp without sp, ZB-H1, ep outside shard x cp,
            an uneven pipeline split torchtitan's weighted cut does not give, offload).
    """
    _check(ctx)
    p, tr = ctx.p, ctx.training
    # with PP the local batch is one flush's microbatches; global > local x dp accumulates pipeline_flushes of them
    local = p.microbatch_size * (ctx.layout.microbatches // p.pipeline_flushes if p.pp > 1 else 1)
    ac = {"mode": p.recompute}
    if p.recompute == "selective":
        ac["selective_ac_option"] = "op"
    out = {"parallelism": _parallelism(ctx), "activation_checkpoint": ac,
           "training": {"local_batch_size": local, "global_batch_size": tr.global_batch_size, "seq_len": tr.seq_len}}
    if p.offload_params:  # FSDP2 CPUOffloadPolicy: parameters and optimizer together (torchtitan pull 624)
        out["training"]["enable_cpu_offload"] = True
    flavor = titan_flavor(ctx.estimate.model)
    if flavor is not None:  # torchtitan builds the model from [model] name / flavor (a new user found it missing)
        out = {"model": {"name": flavor[0], "flavor": flavor[1]}, **out}
    if tr.precision.name == "fp8-mixed":  # torchao float8 linears, as torchtitan's llama3_405b.toml @01424cb converts them
        out["model"] = {**out.get("model", {}), "converters": ["float8"]}
        if ctx.estimate.model.is_moe and p.pp == 1:
            # the converter swaps nn.Linear only; the grouped expert GEMMs the plan prices in fp8 take torchtitan's
            # Float8 MoE prototype (job_config.py Float8.moe_fqns_prototype, "experts"; its converter asserts pp = 1)
            out["float8"] = {"moe_fqns_prototype": ["experts"]}
    return _compiled(out, tr)


#: the note an MoE fp8 plan with a pipeline gets: torchtitan's float8 MoE prototype refuses pp > 1
MOE_FP8_PIPELINE_NOTE = ("the plan prices the experts' grouped GEMMs in fp8, but torchtitan's float8 MoE prototype "
                         "([float8] moe_fqns_prototype) asserts pp = 1, so with this pipeline they run in bf16: the "
                         "step is priced optimistic (pp = 1, or --precision bf16-mixed, prices what runs)")


def _compiled(out: dict, tr) -> dict:
    """``out`` with ``[compile]`` on where the profile is priced with Inductor's fused kernels (and the compiled loss
    unless eager)."""
    if tr.framework.compiled:
        out["compile"] = {"enable": True, "components": ["model"] + ([] if tr.framework.loss == "eager" else ["loss"])}
    return out


def write(ctx: ExportContext) -> str:
    """The TOML text: the header as comments, then the sections (tomli-w).

    Raises:
        ConfigError: as :func:`job_config`.
    """
    import tomli_w
    model = ctx.estimate.model
    moe_fp8_pp = ctx.training.precision.name == "fp8-mixed" and model.is_moe and ctx.p.pp > 1
    extra = [f"note: {MOE_FP8_PIPELINE_NOTE}"] if moe_fp8_pp else []
    support = model_support_line(model, "torchtitan", TITAN_FEATURES, TITAN_MODELS)
    if support:
        extra.append(support)
    elif titan_flavor(model) is None:
        extra.append(f"note: no [model] section: {model.name} has the shape of no torchtitan flavor shardplan knows; "
                     "add its name and flavor (or your own model's)")
    return comment_block(ctx, EXPORTER, extra) + tomli_w.dumps(job_config(ctx))


#: what torchtitan's shipped models implement beyond a Llama block (base.model_features names): MoE, MLA (deepseek_v3),
#: QK-norm (qwen3), chunked attention (llama4's iRoPE)
TITAN_FEATURES = ("MoE", "MLA", "QK-norm", "chunked attention")
TITAN_MODELS = "torchtitan/models: llama3, llama4, qwen3, deepseek_v3 @000204a"


def read(text: str, devices: int | None = None) -> Imported:
    """The layout of a torchtitan job config.

    Raises:
        ConfigError: not TOML, no [parallelism] / [training], a data_parallel_shard_degree of -1
            without ``devices``, or ``[training] enable_cpu_offload`` (FSDP2 ``CPUOffloadPolicy``: the parameter
            shards, gradients and optimizer step on the host, ``offload_params`` with ``offload_optimizer``) without
            ZeRO-3 sharding.
    """
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"torchtitan config is not valid TOML: {e}", field="import", value="torchtitan") from None
    par = section(cfg, "parallelism", "torchtitan", required=True)
    tr = section(cfg, "training", "torchtitan", required=True)
    notes: list[str] = []
    if "local_batch_size" not in tr and "batch_size" in tr:  # the key's name before local_batch_size
        tr = {**tr, "local_batch_size": tr["batch_size"]}
        notes.append("[training] batch_size read as local_batch_size (its older name)")
    _check_parallelism_keys(par, tr, notes)
    notes += _section_typos(cfg, tr)
    rep, tp = _degree(par, "data_parallel_replicate_degree"), _degree(par, "tensor_parallel_degree")
    pp, cp = _degree(par, "pipeline_parallel_degree"), _degree(par, "context_parallel_degree")
    shard = _shard_degree(par, rep * tp * pp * cp, devices)
    zero = _zero_stage(par, shard, cp, pp)
    profile = _profile_name(cfg, tr, notes)  # checks [compile] and enable_async_tensor_parallel first
    ep = _degree(par, "expert_parallel_degree")
    etp = _degree(par, "expert_tensor_parallel_degree") if ep > 1 else tp  # torchtitan's default etp: 1
    values = dict(dp=rep * shard, zero_stage=zero, dp_shard=shard if zero else None, tp=tp, sp=tp > 1, pp=pp, cp=cp,
                  ep=ep, etp=etp if etp != tp else None, tp_overlap=flag(par, "enable_async_tensor_parallel", "torchtitan"),
                  recompute=_recompute_mode(cfg, notes), moe_dispatcher=_ep_backend(par, ep, notes))
    _cp_rotate_note(par, cp, notes)
    if flag(tr, "enable_cpu_offload", "torchtitan", where="[training] "):
        if zero != 3:
            raise ConfigError(f"torchtitan [training] enable_cpu_offload=true with ZeRO-{zero} sharding: FSDP2's CPU "
                              "offload is priced with fully sharded weights (data_parallel_shard_degree > 1, "
                              "fsdp_reshard_after_forward resharding) only; legal: enable_cpu_offload false",
                              field="enable_cpu_offload", value=True, legal=[False])
        values.update(offload_optimizer=True, offload_params=True)
    mbs = _degree(par, "pipeline_parallel_microbatch_size") if pp > 1 else tr.get("local_batch_size", 8)
    values["microbatch_size"] = mbs
    glob, accumulation = _batches(tr, rep * shard)
    if pp > 1:
        local = tr.get("local_batch_size", 8)
        if local % mbs:  # torchtitan's pipelining splits the local batch into microbatches of this size
            raise ConfigError(f"torchtitan pipeline_parallel_microbatch_size={mbs} does not divide local_batch_size="
                              f"{local}; legal: {fmt_legal(divisors(local))}",
                              field="microbatch_size", value=mbs)
        values.update(_pipeline_values(par, read_meta(text).get("n_layers") or _flavor_layers(cfg, notes), pp, notes))
        values["pipeline_flushes"] = accumulation
    precision = _model_notes(cfg, notes)
    if section(cfg, "optimizer", "torchtitan").get("early_step_in_backward") is True:
        # torchtitan components/optimizer.py: each parameter's optimizer step runs in its gradient hook
        notes.append("[optimizer] early_step_in_backward: the optimizer steps inside the backward and frees each "
                     "gradient as it goes; not priced (the plan keeps every gradient until the step: its memory is "
                     "an upper bound by the gradients' bytes)")
    seq_len = whole(tr, "seq_len", "torchtitan", where="[training] ", most=MAX_SEQ_LEN)
    _check_cp_seq_len(seq_len, cp)
    return Imported(parallel_from(values), devices=rep * shard * tp * pp * cp, seq_len=seq_len,
                    global_batch=glob, framework=profile, precision=precision, notes=tuple(notes))




def _check_cp_seq_len(seq_len: int | None, cp: int) -> None:
    """PyTorch's context_parallel shards each sequence into 2 x cp load-balanced chunks (torchtitan enables the load
    balancing: distributed/utils.py create_context_parallel_ctx), so with cp > 1 the sequence must split into them.

    Raises:
        ConfigError: naming ``[training] seq_len`` and legal multiples (breaker 58: 4,095 at cp 2 was imported, and
            the plan's estimate then refused it).
    """
    step = 2 * cp
    if cp > 1 and seq_len and seq_len % step:
        raise ConfigError(f"[training] seq_len = {seq_len} is not a multiple of 2 x context_parallel_degree {cp} = "
                          f"{step} (context parallelism splits each sequence into {step} load-balanced chunks); legal: "
                          f"multiples of {step}, e.g. {seq_len // step * step or step} or {(seq_len // step + 1) * step}",
                          field="seq_len", value=seq_len, legal=[step])

def _shard_degree(par: dict, rest: int, devices: int | None) -> int:
    """``data_parallel_shard_degree``; its -1 (torchtitan's default) takes the devices that replicate x tp x pp x cp
    (``rest``) leave.

    Raises:
        ConfigError: -1 without ``devices``, or ``rest`` not dividing them.
    """
    shard = _degree(par, "data_parallel_shard_degree", -1)
    if shard != -1:
        return shard
    if devices is None:
        raise ConfigError("data_parallel_shard_degree = -1 needs --devices", field="devices", value=None)
    if devices % rest or devices < rest:
        raise ConfigError(f"data_parallel_shard_degree = -1 takes the devices left by replicate x tp x pp x cp = "
                          f"{rest}, which does not divide --devices {devices}; legal --devices: multiples of {rest}",
                          field="devices", value=devices)
    return devices // rest


#: job_config.py Parallelism.fsdp_reshard_after_forward: Literal["default", "always", "never"]
RESHARD_POLICIES = ("default", "always", "never")


def _zero_stage(par: dict, shard: int, cp: int, pp: int) -> int:
    """The ZeRO stage of FSDP2: 0 without sharding, 2 for ``fsdp_reshard_after_forward = "never"`` (or "default" with
    a pipeline: torchtitan keeps the parameters unsharded between a microbatch's forward and backward there), else 3.
    FSDP shards over the dp_shard x cp mesh (torchtitan parallelize: dp_shard_cp), so cp > 1 alone shards too.

    Raises:
        ConfigError: a policy torchtitan does not have, naming the legal ones.
    """
    reshard = par.get("fsdp_reshard_after_forward", "default")
    if reshard not in RESHARD_POLICIES:
        raise ConfigError(f"torchtitan fsdp_reshard_after_forward={short_repr(reshard)}; legal: "
                          f"{', '.join(map(repr, RESHARD_POLICIES))}", field="fsdp_reshard_after_forward",
                          value=short_repr(reshard), legal=list(RESHARD_POLICIES))
    return 0 if shard * cp == 1 else (2 if reshard == "never" or (reshard == "default" and pp > 1) else 3)


#: the [parallelism] keys the importer reads (a key a letter or two from one of them is noted as a likely typo)
READ_KEYS = ("data_parallel_replicate_degree", "data_parallel_shard_degree", "fsdp_reshard_after_forward",
             "tensor_parallel_degree", "enable_async_tensor_parallel", "pipeline_parallel_degree",
             "pipeline_parallel_schedule", "pipeline_parallel_layers_per_stage", "pipeline_parallel_microbatch_size",
             "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
             "context_parallel_degree", "expert_parallel_degree", "expert_tensor_parallel_degree",
             "expert_parallel_comm_backend", "context_parallel_rotate_method", "context_parallel_load_balancer")
#: the [parallelism] keys that set the layout: a near miss of one is refused (:func:`shardplan.export.base.near_miss`)
LAYOUT_KEYS = tuple(k for k in READ_KEYS if k.endswith("_degree")) + ("pipeline_parallel_layers_per_stage",
                                                                       "pipeline_parallel_microbatch_size")
#: torchtitan's [parallelism] context_parallel_rotate_method values (job_config.py: "allgather" the default, "alltoall"):
#: how the K/V shards travel between the cp ranks of torch's context_parallel; both move each rank's K/V to every
#: other rank once per attention, the bytes the planner's ring prices
CP_ROTATE_METHODS = ("allgather", "alltoall")
#: torchtitan's [parallelism] context_parallel_load_balancer values (config/parallelism.py: "headtail" for SDPA,
#: "ptrr" for FlexAttention; None, the Python default of some releases, has no TOML spelling)
CP_LOAD_BALANCERS = ("headtail", "ptrr")
#: torchtitan's [parallelism] expert_parallel_comm_backend values (pytorch/torchtitan PR #2107, 2025-12:
#: torchtitan/distributed/deepep: "DeepEP: Support for NVLink8 (H100 / B200)", "HybridEP: Optimized for
#: GB200/NVLink72"; 'standard' the default all-to-all) and the planner's moe_dispatcher of each
EP_COMM_BACKENDS = {"standard": "alltoall", "deepep": "deepep", "hybridep": "deepep"}


def _ep_backend(par: dict, ep: int, notes: list[str]) -> str:
    """The planner's moe_dispatcher of ``[parallelism] expert_parallel_comm_backend`` (:data:`EP_COMM_BACKENDS`;
    'hybridep' priced as DeepEP, with a note).

    Raises:
        ConfigError: a value torchtitan does not have, or DeepEP / HybridEP with expert_parallel_degree 1 (torchtitan
            raises: "DeepEP requires expert parallelism (ep_degree > 1)").
    """
    backend = par.get("expert_parallel_comm_backend", "standard")
    if not isinstance(backend, str) or backend not in EP_COMM_BACKENDS:
        raise ConfigError(f"torchtitan expert_parallel_comm_backend={short_repr(backend)}; legal: "
                          f"{', '.join(map(repr, EP_COMM_BACKENDS))}", field="expert_parallel_comm_backend",
                          value=short_repr(backend), legal=list(EP_COMM_BACKENDS))
    if backend != "standard" and ep == 1:
        raise ConfigError(f"torchtitan expert_parallel_comm_backend={backend!r} with expert_parallel_degree 1: "
                          "torchtitan raises ('requires expert parallelism (ep_degree > 1)'); legal: 'standard', or "
                          "expert_parallel_degree > 1", field="expert_parallel_comm_backend", value=backend,
                          legal=["standard"])
    if backend == "hybridep":
        notes.append("expert_parallel_comm_backend='hybridep' (torchtitan's HybridEP for NVLink72): priced as DeepEP's "
                     "token dispatch (moe_dispatcher deepep)")
    return EP_COMM_BACKENDS[backend]


def _cp_rotate_note(par: dict, cp: int, notes: list[str]) -> None:
    """A note for ``context_parallel_rotate_method`` (:data:`CP_ROTATE_METHODS`, priced as the ring's bytes) where cp > 1.

    Raises:
        ConfigError: a value torchtitan does not have.
    """
    method = par.get("context_parallel_rotate_method", "allgather")
    if not isinstance(method, str) or method not in CP_ROTATE_METHODS:
        raise ConfigError(f"torchtitan context_parallel_rotate_method={short_repr(method)}; legal: "
                          f"{', '.join(map(repr, CP_ROTATE_METHODS))}", field="context_parallel_rotate_method",
                          value=short_repr(method), legal=list(CP_ROTATE_METHODS))
    if cp > 1:
        notes.append(f"context_parallel_rotate_method={method!r}: each rank's K/V shard reaches every other cp rank "
                     "once per attention, priced as the ring's bytes (cp_comm ring)")
    balancer = par.get("context_parallel_load_balancer")
    if "context_parallel_load_balancer" in par and balancer not in CP_LOAD_BALANCERS:  # breaker pass 54b
        raise ConfigError(f"torchtitan context_parallel_load_balancer={short_repr(balancer)}; legal: "
                          f"{', '.join(map(repr, CP_LOAD_BALANCERS))} (leave the key out for torchtitan's default; an "
                          "empty string is refused by its ParallelismConfig)", field="context_parallel_load_balancer",
                          value=short_repr(balancer), legal=list(CP_LOAD_BALANCERS))
    if cp > 1 and balancer:
        notes.append(f"context_parallel_load_balancer={balancer!r} balances each rank's causal attention; the "
                     "torchtitan profile prices contiguous chunks (its published CP runs): estimate with --framework "
                     "torchtitan+cp_load_balance=true to price the balanced run")


#: the [training] keys the importer reads (local_batch_size, global_batch_size and seq_len set the layout; a typo of
#: one is refused, breaker pass 55b: local_bach_size priced the default microbatch of 8) and other real ones
TRAINING_KEYS = ("local_batch_size", "global_batch_size", "seq_len", "batch_size", "mixed_precision_param",
                 "mixed_precision_reduce", "compile", "enable_cpu_offload", "steps", "max_norm", "warmup_steps",
                 "dataset", "dataset_path", "gc_freq", "seed", "deterministic", "gradient_accumulation_steps")
TRAINING_LAYOUT_KEYS = ("local_batch_size", "global_batch_size", "seq_len")
#: the [activation_checkpoint] keys (job_config.py ActivationCheckpoint: mode sets the recompute)
AC_KEYS = ("mode", "selective_ac_option", "per_op_sac_force_recompute_mm_shapes_by_fqns", "early_stop",
           "memory_budget", "visualize_memory_budget_pareto", "preserve_rng_state")


def _section_typos(cfg: dict, tr: dict) -> list[str]:
    """Notes on [training] and [activation_checkpoint] keys a letter or two away from one read; a typo of a key that
    sets the layout (:data:`TRAINING_LAYOUT_KEYS`, ``mode``) is refused: torchtitan's config parser stops on an
    unknown key, and read without it the layout would take the default.

    Raises:
        ConfigError: from :func:`shardplan.export.base.check_near_misses`."""
    from shardplan.export.base import check_near_misses
    ac = cfg.get("activation_checkpoint")
    return [*check_near_misses(tr, TRAINING_KEYS, TRAINING_LAYOUT_KEYS, "_", "torchtitan", stops=True,
                               where="[training] "),
            *(check_near_misses(ac, AC_KEYS, ("mode",), "_", "torchtitan", stops=True, where="[activation_checkpoint] ")
              if isinstance(ac, dict) else [])]


def _check_parallelism_keys(par: dict, tr: dict, notes: list[str]) -> None:
    """What torchtitan runs that the planner does not price: a pipeline schedule from a CSV file
    (``pipeline_parallel_schedule_csv``) is refused; manual
    ``pipeline_parallel_split_points`` and keys a letter or two away from a key the importer reads (a typo torchtitan
    stops on) get a note.

    Raises:
        ConfigError: naming the key, its value and the legal value.
    """
    csv = par.get("pipeline_parallel_schedule_csv")
    if csv not in (None, ""):
        raise ConfigError(f"torchtitan pipeline_parallel_schedule_csv={short_repr(csv)}: a custom schedule read from "
                          "a CSV file is not priced (the planner prices GPipe, 1F1B, Interleaved1F1B and the zero-bubble "
                          "schedules by name); legal: \"\" (no CSV) with pipeline_parallel_schedule naming one of them",
                          field="pipeline_parallel_schedule_csv", value=short_repr(csv), legal=[""])
    if par.get("pipeline_parallel_split_points"):
        notes.append("pipeline_parallel_split_points: the manual split points are not read; the split priced is "
                     "pipeline_parallel_layers_per_stage's (or torchtitan's even cut)")
    # a typo of a read key (a key extending one by a word is torchtitan's own: pipeline_parallel_schedule_csv)
    from shardplan.export.base import check_near_misses
    notes += check_near_misses(par, READ_KEYS, LAYOUT_KEYS, "_", "torchtitan", stops=True, where="[parallelism] ")


def _profile_name(cfg: dict, tr: dict, notes: list[str]) -> str:
    """``torchtitan-compile`` when the config compiles the model (``[compile] enable`` with 'model' among the
    components, or ``[training] compile``, its name before mid-2025; :data:`COMPILED_PROFILE`), else ``torchtitan``
    (eager, torchtitan's default); a note where the profile does not describe the config exactly.

    Raises:
        ConfigError: ``[compile]`` not a table, ``enable`` / ``[training] compile`` not a boolean, ``components``
            not a list of 'model' / 'loss', or async TP without a compiled model (torchtitan refuses it).
    """
    section = cfg.get("compile", {})
    if not isinstance(section, dict):
        raise ConfigError(f"torchtitan compile={short_repr(section)} is not a table; legal: a [compile] section with "
                          "enable = true / false and components = [\"model\", \"loss\"]", field="compile",
                          value=short_repr(section))
    enable, old = _bool_key(section, "enable", "[compile]"), _bool_key(tr, "compile", "[training]")
    components = section.get("components", ["model", "loss"])
    if not isinstance(components, list) or not all(c in ("model", "loss") for c in components):
        raise ConfigError(f"torchtitan [compile] components={short_repr(components)}; legal: a list of \"model\" "
                          "and \"loss\"", field="components", value=short_repr(components), legal=["model", "loss"])
    if enable is not None and old is not None and enable != old:
        notes.append(f"[compile] enable = {str(enable).lower()} read, [training] compile (its older name) ignored")
    compiled = enable if enable is not None else bool(old)
    if enable is None and old:
        notes.append("[training] compile read as [compile] enable (its older name); releases before early 2025 "
                     "compiled the blocks only and ran the loss eagerly (10 B per vocabulary element, not 4)")
    model_compiled = compiled and "model" in components
    if _bool_key(cfg.get("parallelism", {}), "enable_async_tensor_parallel", "[parallelism]") and not model_compiled:
        raise ConfigError("torchtitan enable_async_tensor_parallel = true without a compiled model: torchtitan refuses "
                          "it ('Async TP requires torch.compile'); legal: [compile] enable = true with \"model\" in "
                          "components, or enable_async_tensor_parallel = false", field="enable_async_tensor_parallel",
                          value=True, legal=[False])
    if compiled and not model_compiled:
        notes.append("[compile] components without \"model\": the blocks run eagerly (the torchtitan profile)")
    elif model_compiled and "loss" not in components:
        notes.append("[compile] components without \"loss\": the loss runs eagerly, keeping 10 B per vocabulary "
                     "element where the torchtitan-compile profile counts 4 (a profile file with base: "
                     "torchtitan-compile, loss: eager and logit_bytes: null counts it)")
    return COMPILED_PROFILE if model_compiled else "torchtitan"


def _bool_key(section: dict, key: str, where: str) -> bool | None:
    """``section[key]`` when it is a boolean, None when absent.

    Raises:
        ConfigError: any other value (naming it and the legal values).
    """
    value = section.get(key) if isinstance(section, dict) else None
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"torchtitan {where} {key}={short_repr(value)}; legal: true, false", field=key,
                          value=short_repr(value), legal=[True, False])
    return value


#: torchtitan [model] name / flavor -> the preset of that shape (torchtitan models/llama3/__init__.py llama3_configs:
#: 8B, 70B, 405B are Llama 3.1's shapes; models/deepseek_v3/__init__.py 671B, and 16B: DeepSeek-V2-Lite's shape, 27
#: layers, dim 2048, 64 experts top-6 with 2 shared, kv_lora_rank 512, train_configs/deepseek_v3_16b.toml;
#: models/qwen3/__init__.py)
TITAN_FLAVORS = {("llama3", "8B"): "llama-3.1-8b", ("llama3", "70B"): "llama-3-70b", ("llama3", "405B"): "llama-3.1-405b",
                 ("deepseek_v3", "671B"): "deepseek-v3", ("deepseek_v3", "16B"): "deepseek-v2-lite",
                 ("qwen3", "8B"): "qwen3-8b", ("qwen3", "30B-A3B"): "qwen3-30b-a3b",
                 ("qwen3", "235B-A22B"): "qwen3-235b-a22b"}


def titan_flavor(model) -> tuple[str, str] | None:
    """torchtitan's [model] (name, flavor) of a ModelSpec with the shape of a :data:`TITAN_FLAVORS` preset (layers,
    width, heads, KV heads, FFN, vocabulary and experts equal), else None (a model torchtitan has no flavor of: its
    name and flavor are left to the user). Llama 3 RoPE parameters other than Llama 3.1's (``rope_llama3_params``)
    are another model too (breaker pass 55: such a config was written as torchtitan's llama3 flavor unsaid)."""
    from shardplan.presets.models import MODELS
    shape = ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_dim", "vocab_size", "n_experts", "rope_llama3_params")
    for key, preset in TITAN_FLAVORS.items():
        ref = MODELS[preset]
        if all(getattr(model, f, None) == getattr(ref, f, None) for f in shape):
            return key
    return None


def _flavor_layers(cfg: dict, notes: list[str]) -> int | None:
    """The layer count of the config's [model] name / flavor where it is a shape the project ships
    (:data:`TITAN_FLAVORS`; the preset's ``n_layers``), with a note, else None. A header's shardplan-meta line wins."""
    from shardplan.presets.models import MODELS
    model = section(cfg, "model", "torchtitan")
    preset = TITAN_FLAVORS.get((str(model.get("name", "")), str(model.get("flavor", ""))))
    if preset is None:
        return None
    notes.append(f"layer count {MODELS[preset].n_layers} from [model] {model['name']} {model['flavor']} (the {preset} preset)")
    return MODELS[preset].n_layers


def _converters(model: dict) -> list[str]:
    """``[model] converters`` as a list of names: torchtitan takes a list or a comma-separated string (its config
    manager splits strings for list-typed options: ``converters = "float8"`` in llama3_405b.toml @01424cb)."""
    value = model.get("converters") or []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(v) for v in value] if isinstance(value, list) else []


def _low_precision(cfg: dict) -> str | None:
    """'float8' or 'mx' where the config converts its linears: a converter named ``float8`` / ``mx`` or ending in
    ``.float8`` / ``.mx`` (the later ``quantize.linear.float8`` / ``quantize.linear.mx`` names), or the older ``[float8]
    enable_float8_linear``; None otherwise."""
    names = _converters(section(cfg, "model", "torchtitan"))
    for kind in ("float8", "mx"):
        if any(n == kind or n.endswith("." + kind) for n in names):
            return kind
    return "float8" if flag(section(cfg, "float8", "torchtitan"), "enable_float8_linear", "torchtitan",
                            where="[float8] ") else None


def _model_notes(cfg: dict, notes: list[str]) -> str | None:
    """The precision policy the config trains in, with notes for what the plan file does not carry: float8 or MX
    linears (:func:`_low_precision`) are recorded as fp8-mixed (MXFP8's block scales priced as tensor-wise fp8; the
    float8 all-gather of FSDP, ``enable_fsdp_float8_all_gather``, is not priced: the AllGathers stay 16-bit), the
    [model] flavor (give --model) and a ``[training] mixed_precision_param`` / ``mixed_precision_reduce`` other than
    torchtitan's defaults; ``mixed_precision_param = "float32"`` (FSDP2 computing in fp32) is recorded as fp32. None:
    torchtitan's default bf16 (the profile's)."""
    model = section(cfg, "model", "torchtitan")
    kind = _low_precision(cfg)
    if kind is not None:
        notes.append(f"{'float8' if kind == 'float8' else 'MXFP8'} linears ([model] converters): recorded as precision "
                     "fp8-mixed" + (" (MXFP8's 32-element block scales priced as tensor-wise fp8)" if kind == "mx" else ""))
    gathers = [sec for sec in ("float8", "quantize.linear.float8") if isinstance(_dotted(cfg, sec), dict)
               and _dotted(cfg, sec).get("enable_fsdp_float8_all_gather") is True]
    if gathers and kind is not None:
        notes.append(f"[{gathers[0]}] enable_fsdp_float8_all_gather: the FSDP AllGathers are priced in bf16 (twice the "
                     "bytes torchtitan sends)")
    training = cfg.get("training") if isinstance(cfg.get("training"), dict) else {}
    fp32 = kind is None and training.get("mixed_precision_param") == "float32"
    for key, default in (("mixed_precision_param", "bfloat16"), ("mixed_precision_reduce", "float32")):
        if training.get(key, default) != default and not (fp32 and key == "mixed_precision_param"):
            # torchtitan config/job_config.py Training defaults
            notes.append(f"[training] {key} = {training[key]!r}: the plan prices torchtitan's default {default}")
    if fp32:  # FSDP2's MixedPrecisionPolicy(param_dtype=float32): the forward and backward run in fp32
        notes.append("[training] mixed_precision_param = 'float32': FSDP computes in fp32, recorded as precision fp32")
    if model.get("name") or model.get("flavor"):
        notes.append(f"[model] {' '.join(str(model[k]) for k in ('name', 'flavor') if model.get(k))}: give the matching --model "
                     "(the plan file records only the layout)")
    return "fp8-mixed" if kind is not None else "fp32" if fp32 else None


def _dotted(cfg: dict, path: str):
    """``cfg`` at a dotted TOML table path (``quantize.linear.float8``), or None."""
    node = cfg
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _stage_weights(par: dict) -> tuple[int, int]:
    """pipeline_parallel_first / last_stage_less_layers (torchtitan's defaults 1 and 1).

    Raises:
        ConfigError: a value that is not a whole number >= 0, naming the key.
    """
    out = []
    for key in ("pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers"):
        v = par.get(key, 1)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ConfigError(f"torchtitan {key}={v!r}: legal: a whole number >= 0", field=key, value=v)
        out.append(v)
    return out[0], out[1]


def _stage_split(par: dict, n_layers: int | None, pp: int, stages: int, notes: list[str]) -> dict:
    """``pp_layers`` of a pipeline of ``stages`` stages (``stages / pp`` per rank) as torchtitan cuts it
    (:func:`titan_stage_layers`, placed by :func:`rank_layers`), where uneven; {} when even, or when the model's
    layer count is not in the file (a note then says the planner's own split is priced).

    Raises:
        ConfigError: a cut torchtitan itself refuses (a weight above the share, more stages than layers).
    """
    weights = _stage_weights(par)
    if n_layers is None:
        if any(weights):
            notes.append(f"pipeline_parallel_first/last_stage_less_layers {weights[0]} / {weights[1]}: torchtitan "
                         "cuts the stages around the embedding and LM head, but the file gives no layer count (a "
                         "'shardplan-meta' line): the planner's own split is priced")
        return {}
    chunks = titan_stage_layers(n_layers, stages, *weights)
    if chunks is None:
        raise ConfigError(f"torchtitan cannot cut {n_layers} layers into {stages} stages with first/last_stage_less_"
                          f"layers {weights[0]} / {weights[1]} (it raises: more stages than layers, or a weight above "
                          "the share)", field="pp_layers", value=None)
    ranks = rank_layers(chunks, pp)
    return {"pp_layers": ranks} if len(set(ranks)) > 1 else {}


def _stage_count(par: dict, n_layers: int | None, pp: int, looped: bool) -> int:
    """torchtitan's number of pipeline stages: ceil((n_layers + first_less + last_less) / layers_per_stage) when
    ``pipeline_parallel_layers_per_stage`` is given, else pp x (2 for a looped schedule, 1 otherwise)
    (distributed/pipeline_parallel.py).

    Raises:
        ConfigError: layers_per_stage without the layer count, or a stage count a schedule cannot run (not a multiple
            of pp; one stage per rank for a looped schedule, more for a single-stage one).
    """
    if par.get("pipeline_parallel_layers_per_stage") is None:
        return pp * (2 if looped else 1)
    per = _degree(par, "pipeline_parallel_layers_per_stage")
    if not n_layers:
        raise ConfigError("pipeline_parallel_layers_per_stage: the stage count needs the model's layer count (a "
                          "'shardplan-meta: {\"n_layers\": N}' comment line)", field="virtual_stages", value=None)
    effective = n_layers + sum(_stage_weights(par))

    def fits(k: int) -> bool:  # k layers per stage give a stage count the schedule runs
        stages = -(-effective // k)
        return stages % pp == 0 and (stages // pp >= 2 if looped else stages == pp)

    def runs(k: int) -> bool:  # and a cut torchtitan makes, in stages the planner prices (breaker pass 56: the legal
        stages = -(-effective // k)  # list offered 17, whose cut torchtitan refuses)
        return (fits(k) and titan_stage_layers(n_layers, stages, *_stage_weights(par)) is not None
                and (not looped or _rank_chunks_even(par, n_layers, pp, stages)))
    if not fits(per):
        stages = -(-effective // per)
        legal = [k for k in range(1, effective + 1) if runs(k)]
        w = _stage_weights(par)
        shown = (fmt_legal(legal[:16]) + (f", ... ({len(legal)} values)" if len(legal) > 16 else "") if legal else
                 f"none with first / last_stage_less_layers {w[0]} / {w[1]} (smaller weights leave more cuts)")
        need = "a multiple of pp, at least 2 per rank" if looped else "exactly pp"
        raise ConfigError(f"torchtitan pipeline_parallel_layers_per_stage={per}: {n_layers} layers (+ {effective - n_layers} "
                          f"for the embedding and LM head) make {stages} stage{'' if stages == 1 else 's'} of {per} on "
                          f"pp={pp} ranks, where its {'looped' if looped else 'single-stage'} schedule needs {need}; "
                          f"legal pipeline_parallel_layers_per_stage: {shown}", field="pipeline_parallel_layers_per_stage",
                          value=per, legal=legal)
    return -(-effective // per)


def _degree(par: dict, key: str, default: int = 1) -> int:
    """A [parallelism] degree: a whole number >= 1 (-1 where ``default`` is -1: auto).

    Raises:
        ConfigError: naming the key, its value and what is legal.
    """
    v = par.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or (v < 1 and not (default == -1 and v == -1)):
        raise ConfigError(f"torchtitan {key}={v!r}: legal: a whole number >= 1" + (" or -1" if default == -1 else ""),
                          field=key, value=v)
    return v


def _recompute_mode(cfg: dict, notes: list[str]) -> str:
    """The planner's recompute of ``[activation_checkpoint] mode``: none / selective / full as named;
    ``memory_budget`` (torch.compile's min-cut under a memory budget) as selective, with a note; a whole-number
    ``selective_ac_option`` N (torchtitan distributed/activation_checkpoint.py: every N-th layer checkpointed in
    full) as full for 1 and, with a note, as the op-level selective recompute above.

    Raises:
        ConfigError: ``[activation_checkpoint]`` not a table, or a mode torchtitan does not have.
    """
    mode = section(cfg, "activation_checkpoint", "torchtitan").get("mode", "selective")
    legal = ("none", "selective", "full", "memory_budget")
    if mode not in legal:
        raise ConfigError(f"torchtitan [activation_checkpoint] mode={short_repr(mode)}; legal: "
                          f"{', '.join(map(repr, legal))}", field="mode", value=short_repr(mode), legal=list(legal))
    if mode == "memory_budget":
        notes.append("activation_checkpoint mode 'memory_budget' (torch.compile chooses what to save) priced as "
                     "selective recompute")
        return "selective"
    raw = section(cfg, "activation_checkpoint", "torchtitan").get("selective_ac_option", "op")
    option = str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else raw if isinstance(raw, str) else ""
    n = int(option) if option.isdigit() else 0  # every n-th layer; 0: not a whole number
    if mode == "selective" and option != "op" and n < 1:
        # torchtitan activation_checkpoint.py: 'op', or a positive integer string (every N-th layer); it raises else
        raise ConfigError(f"torchtitan selective_ac_option={short_repr(raw)}; legal: 'op' or a whole number >= 1 as a "
                          "string ('2': every second layer)", field="selective_ac_option", value=short_repr(raw),
                          legal=["op", "1", "2"])
    if mode == "selective" and n >= 1:
        if n == 1:  # torchtitan activation_checkpoint.py _apply_layer_sac: every layer checkpointed in full
            notes.append("selective_ac_option='1' checkpoints every layer in full: read as full recompute")
            return "full"
        more = "" if n == 2 else f" (more than the one layer in {n} this option recomputes)"
        notes.append(f"selective_ac_option='{n}' checkpoints one layer in {n} in full (torchtitan's layer-level "
                     "selective AC), which the planner has no field for under this profile: priced as the op-level "
                     "selective recompute, whose extra forward work (every second matmul and the element-wise ops, "
                     f"about a sixth of a step) is that of every second layer recomputed{more}; its saved activations "
                     "differ")
    return mode


def _batches(tr: dict, dp: int) -> tuple[int, int]:
    """(global batch, gradient-accumulation steps) of a job config: ``global_batch_size`` (-1: local x dp) over
    ``local_batch_size`` x dp, which torchtitan's trainer asserts divides it; with PP each accumulation step
    is a run of the schedule (``pipeline_flushes``).

    Raises:
        ConfigError: a local batch below 1, or a global batch that is not a positive multiple of local x dp.
    """
    local, glob = tr.get("local_batch_size", 8), tr.get("global_batch_size", -1)
    if not isinstance(local, int) or isinstance(local, bool) or local < 1:
        raise ConfigError(f"torchtitan local_batch_size={local!r}: legal: a whole number >= 1", field="import",
                          value=local)
    if glob == -1:
        return local * dp, 1
    if not isinstance(glob, int) or isinstance(glob, bool) or glob < 1 or glob % (local * dp):
        raise ConfigError(f"torchtitan global_batch_size={glob!r} is not a multiple of local_batch_size x data-parallel "
                          f"degree = {local} x {dp} = {local * dp} (its trainer asserts it); legal: -1 or a multiple "
                          f"of {local * dp}", field="import", value=glob)
    return glob, glob // (local * dp)


def _pipeline_values(par: dict, n_layers_hint: int | None, pp: int, notes: list[str]) -> dict:
    """schedule and virtual_stages from the schedule name and layers per stage. A looped schedule has
    ``ceil((n_layers + first_less + last_less) / layers_per_stage) / pp`` stages per rank, the first and
    last stages counting ``pipeline_parallel_first/last_stage_less_layers`` (default 1: the embedding,
    the LM head) as layers (torchtitan ``distributed/pipeline_parallel.py``), or 2 without
    ``pipeline_parallel_layers_per_stage`` (:func:`_stage_count`), and every stage holds the layers torchtitan's
    weighted cut gives it (:func:`_stage_split`: ``pp_layers`` where uneven); the layer count comes from the
    header's ``shardplan-meta`` line. The zero-bubble schedules (ZBVZeroBubble, InterleavedZeroBubble) are priced as the planner's
    ZB-H1 zero-bubble schedule, with a note."""
    names = {v: k for k, v in _SCHEDULES.items()}
    given = par.get("pipeline_parallel_schedule", "1F1B")
    if given in ("ZBVZeroBubble", "InterleavedZeroBubble"):
        notes.append(f"pipeline_parallel_schedule {given} priced as the planner's zero-bubble (ZB-H1) schedule: the "
                     "same split of the weight-gradient pass, on one stage per rank")
        return {"schedule": "zero-bubble"}
    schedule = names.get(given)
    if schedule is None:
        raise ConfigError(f"pipeline_parallel_schedule={given!r} has no planner equivalent; legal: "
                          f"{', '.join(names)}, ZBVZeroBubble, InterleavedZeroBubble", field="schedule", value=given)
    looped = schedule == "interleaved"
    stages = _stage_count(par, n_layers_hint, pp, looped)
    split = _stage_split(par, n_layers_hint, pp, stages, notes)
    if looped and n_layers_hint and par.get("pipeline_parallel_layers_per_stage") is not None:
        _check_equal_chunks(par, n_layers_hint, pp, stages)
    return {"schedule": schedule, **({"virtual_stages": stages // pp} if looped else {}), **split}


def _rank_chunks_even(par: dict, n_layers: int, pp: int, stages: int) -> bool:
    """Whether the planner prices torchtitan's cut of ``n_layers`` into ``stages`` looped stages
    (:func:`titan_stage_layers`): an uneven per-rank split (``pp_layers``) interleaves into chunks of unequal size,
    but ranks of one layer count take equal chunks only (``parallel._check_chunks``, bug case B), so that count
    must divide by the stages per rank."""
    chunks = titan_stage_layers(n_layers, stages, *_stage_weights(par))
    if chunks is None:
        return False
    ranks = rank_layers(chunks, pp)
    return len(set(ranks)) > 1 or ranks[0] % (stages // pp) == 0


def _check_equal_chunks(par: dict, n_layers: int, pp: int, stages: int) -> None:
    """Refuse a looped schedule whose layers_per_stage cuts ranks of one layer count into unequal stages (breaker pass
    56: 80 layers at 7 per stage on pp 4 are 12 stages of 7 or 6, 20 layers per rank, imported as 3 virtual stages
    that `estimate --plan` then refused).

    Raises:
        ConfigError: naming the value and the layers_per_stage values whose cut the planner prices.
    """
    if _rank_chunks_even(par, n_layers, pp, stages):
        return
    per = _degree(par, "pipeline_parallel_layers_per_stage")
    effective = n_layers + sum(_stage_weights(par))
    legal = []
    for k in range(1, effective + 1):
        count = -(-effective // k)
        if count % pp == 0 and count // pp >= 2 and _rank_chunks_even(par, n_layers, pp, count):
            legal.append(k)
    raise ConfigError(f"torchtitan pipeline_parallel_layers_per_stage={per}: {n_layers} layers in {stages} stages "
                      f"({stages // pp} per rank on pp={pp}) are cut unequally within ranks of one layer count, which "
                      f"the planner prices as equal virtual stages only; legal pipeline_parallel_layers_per_stage: "
                      f"{fmt_legal(legal) if legal else 'none for this pp'}",
                      field="pipeline_parallel_layers_per_stage", value=per, legal=legal)


EXPORTER = Exporter(name="torchtitan", title="torchtitan", source=SOURCE, suffix=".toml",
                    expresses=("tp_overlap", "pipeline_flushes", "etp", "offload_optimizer", "offload_params",
                               "moe_dispatcher"), write=write, read=read, seq_key="[training] seq_len",
                    precisions=("bf16-mixed", "fp8-mixed"))
