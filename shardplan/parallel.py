"""Parallel layout and its validation.

A :class:`ParallelConfig` holds the degrees (dp, tp, pp, cp, ep), the ZeRO stage and the options
(sequence parallelism, pipeline schedule, recompute, microbatch size). :func:`validate` checks
every rule *before* any arithmetic and returns a :class:`Layout` with the derived quantities
(gradient-accumulation microbatches, layers per pipeline stage). Each violation raises
:class:`~shardplan.errors.ConfigError` naming the field, the value and the legal alternatives
(cases A-E of ``shardplan/data/bug_cases.md``).

Device order (innermost first) is tp, cp, dp, pp -- Megatron-LM's default rank order
``tp-cp-ep-dp-pp`` (``megatron/core/parallel_state.py``): tensor parallelism stays inside the
scale-up domain, pipeline stages are outermost. Expert parallelism is carved from the
data-parallel x context-parallel ranks (Megatron-LM / torchtitan convention), so
``dp * tp * pp * cp == devices`` and ``ep`` divides ``dp * cp``.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import re

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from shardplan import limits as lim
from shardplan.errors import ConfigError, divisors, fmt_legal, short_repr
from shardplan.specs.model import ModelSpec
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.training import TrainingSpec

#: largest device count accepted (keeps the divisor enumeration of the search bounded)
MAX_DEVICES = lim.MAX_DEVICES

Schedule = Literal["gpipe", "1f1b", "interleaved", "zero-bubble", "dualpipe"]
Recompute = Literal["none", "selective", "full"]
#: Megatron-LM ``--recompute-modules`` (with ``--recompute-granularity selective``)
RecomputeModule = Literal["core_attn", "layernorm", "moe_act", "mlp", "moe", "shared_experts", "mla_up_proj"]
#: Megatron-core's fine-grained activation offloading modules (docs/source/api-guide/fine_grained_activation_offloading.md:
#: "--offload-modules", each module's input goes to the host)
OffloadModule = Literal["attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act"]
#: the offload modules that exist only in MoE layers
MOE_OFFLOAD_MODULES = ("expert_fc1", "moe_act")
#: matmul outputs a full recompute can keep (MaxText's checkpoint names, ``jax.checkpoint_policies``)
RematSaved = Literal["qkv_proj", "query_proj", "key_proj", "value_proj", "context", "out_proj", "mlpwi", "mlpwo"]

#: The schedule the JAX reference runtime (:mod:`shardplan.jax.pipeline`) executes for each planner
#: schedule: GPipe and 1F1B as written; interleaved and zero-bubble (ZB-H1) as 1F1B (same gradients,
#: 1F1B's order and in-flight memory; their bubble figures are planner-only).
RUNTIME_SCHEDULE: dict[str, str] = {"gpipe": "gpipe", "1f1b": "1f1b", "interleaved": "interleaved",
                                    "zero-bubble": "1f1b", "dualpipe": "1f1b"}


class ParallelConfig(BaseModel):
    """Degrees and options of one parallel layout.

    Attributes:
        dp: total data-parallel degree, ZeRO/FSDP shards included (``None``: derived from devices).
        zero_stage: 0 = DDP, 1 = optimizer state sharded over dp, 2 = + gradients, 3 = + params (FSDP).
        dp_shard: size of the ZeRO shard group; ``dp / dp_shard`` replicas (HSDP). ``None`` = dp.
        tp: tensor-parallel degree (Megatron-LM, Shoeybi et al. 2019).
        sp: Megatron sequence parallelism over the tp group (Korthikanti et al. 2022); needs tp > 1.
        cp: context-parallel degree (the sequence split over cp ranks).
        cp_comm: how context parallelism exchanges the sequence: 'ring' (ring attention, Liu et al. 2023:
            each rank's K/V block passes around the cp group, overlapped with the attention core; Megatron-LM
            ``--cp-comm-type p2p``) or 'a2a' (DeepSpeed-Ulysses, Jacobs et al. 2023, Sec. 3: AllToAlls re-shard
            Q, K and V from sequence shards to head shards before the attention core and its output back, so each
            rank runs an ordinary attention over the whole sequence for n_heads / (tp cp) heads; Megatron-LM
            ``--cp-comm-type a2a``, DeepSpeed ``sequence_parallel_size``). Validation sets it to 'ring' when cp = 1.
        pp: pipeline-parallel degree; ``pp_layers`` gives an explicit uneven split.
        schedule: 'gpipe', '1f1b', 'interleaved' (with ``virtual_stages``), 'zero-bubble' (ZB-H1) or
            'dualpipe' (DeepSeek-V3's bidirectional DualPipe: pp even, an even count of at least 2 pp
            microbatches; each rank holds two stages' weights and overlaps one microbatch's forward with
            another's backward, hiding the expert-parallel AllToAlls and the pipeline sends).
        ep: expert-parallel degree (MoE only), carved from dp * cp.
        etp: expert tensor-parallel degree (Megatron-LM ``--expert-tensor-parallel-size``, MoE
            parallel folding, Liu et al. 2025 "MoE Parallel Folding"): the routed experts' weights are
            split etp ways (column / row like a dense MLP) and the expert grid ep x etp x edp folds
            the tp x dp x cp ranks of a stage, so edp = tp dp cp / (ep etp) (``Layout.expert_dp``).
            ``None`` = tp (the experts follow the dense tp split, Megatron's default).
        recompute: activation recomputation: 'none', 'selective' (attention core), 'full' (per layer).
        microbatch_size: sequences per microbatch per data-parallel rank.
        kv_replication: allow tp > n_kv_heads by replicating KV heads (tp % n_kv_heads == 0).
        fsdp_unit: ZeRO-3 gather granularity: 'block' (one gather per transformer layer, PyTorch FSDP's wrapping; the
            default) or 'tensor' (one gather per weight tensor, as DeepSpeed ZeRO-3's module hooks fetch them: the
            deepspeed profile's ZeRO-3 constants were fitted with it, so a DeepSpeed run is priced with 'tensor').
        offload_optimizer: keep master weights, gradients and optimizer state in host memory.
        offload_params: keep each rank's ZeRO-3 parameter shard in host memory and copy it to the device
            before every gather (DeepSpeed ``offload_param``, ZeRO-Infinity; PyTorch FSDP CPU offload, which
            needs ``offload_optimizer`` as well: ``FrameworkProfile.param_offload``); zero_stage 3 only.
        offload_activation_layers: layers whose saved activations go to host memory during the forward and
            come back for the backward (Megatron-core ``--cpu-offloading --cpu-offloading-num-layers N``,
            Transformer Engine's CPU offload context; Megatron-Bridge's GB200 recipes offload 40 of Llama 3
            70B's 80 layers); Megatron-core requires N < n_layers, pp = 1 and no recompute
            (``transformer_config.py``).
        overlap_grad_reduce: overlap the data-parallel gradient reduction (and the ZeRO-1/2 parameter
            AllGather) with backward (forward) compute, as DDP buckets / Megatron-LM do.
        moe_a2a_overlap: run the expert-parallel AllToAlls of one microbatch beside another
            microbatch's compute (Megatron-Core "Combined 1F1B", ``--overlap-moe-expert-parallel-comm``:
            the forward of one microbatch is co-scheduled with the backward of another, layer by layer);
            needs ep > 1 and, with pp > 1, the interleaved schedule.
        tp_overlap: hide the tp activation collectives behind the matmuls that consume or produce
            them (Transformer Engine userbuffers, Megatron-LM ``--tp-comm-overlap``; Wang et al. 2023,
            "Overlap Communication with Dependent Computation via Decomposition").
        moe_dispatcher: how MoE tokens reach their experts across the ep group ('alltoall' or 'deepep';
            :mod:`shardplan.cost.axes.ep`).
        zero3_gather: when ZeRO-3 gathers the parameters. 'per_microbatch': PyTorch FSDP's default,
            re-gathered for every microbatch's forward and again for its backward (Zhao et al. 2023,
            Sec. 3.2, reshard after forward). 'per_step': gathered once per step and kept for every
            microbatch (what XLA/GSPMD does left to itself: it hoists the AllGather out of the
            gradient-accumulation loop); less traffic, the whole stage's parameters resident. The
            JAX runtime executes either (``shardplan.jax.train``, docs/runtime.md).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dp: int | None = Field(default=None, gt=0, le=lim.MAX_DEVICES, description=(
        "data-parallel degree, ZeRO/FSDP shards included (empty: devices / (tp*pp*cp))"))
    zero_stage: int = Field(default=0, ge=0, le=3, description=(
        "ZeRO stage: 0 DDP, 1 optimizer state sharded over dp, 2 + gradients, 3 + parameters (FSDP)"))
    dp_shard: int | None = Field(default=None, gt=0, le=lim.MAX_DEVICES, description=(
        "size of the ZeRO shard group; dp / dp_shard replicas (HSDP) (empty: dp)"))
    tp: int = Field(default=1, gt=0, le=lim.MAX_DEVICES, description="tensor-parallel degree (Megatron-LM, Shoeybi et al. 2019)")
    sp: bool = Field(default=False, description=(
        "Megatron sequence parallelism over the tp group (Korthikanti et al. 2022); needs tp > 1"))
    cp: int = Field(default=1, gt=0, le=lim.MAX_DEVICES, description="context-parallel degree (the sequence split over cp ranks)")
    cp_comm: Literal["ring", "a2a"] = Field(default="ring", description=(
        "how context parallelism exchanges the sequence: 'ring' (ring attention: K/V blocks passed around the cp "
        "group; Megatron --cp-comm-type p2p) or 'a2a' (DeepSpeed-Ulysses: AllToAlls from sequence to head shards "
        "and back; Megatron --cp-comm-type a2a, DeepSpeed sequence_parallel_size); no effect at cp=1"))
    pp: int = Field(default=1, gt=0, le=lim.MAX_DEVICES, description="pipeline-parallel degree (pipeline stages)")
    schedule: Schedule = Field(default="1f1b", description=(
        "pipeline schedule ('interleaved' with virtual_stages >= 2; 'zero-bubble' is ZB-H1; 'dualpipe' is "
        "DeepSeek-V3's bidirectional DualPipe)"))
    virtual_stages: int = Field(default=1, gt=0, le=lim.MAX_LAYERS, description=(
        "model chunks per pipeline rank (interleaved schedule)"))
    pp_layers: tuple[int, ...] | None = Field(default=None, min_length=1, max_length=lim.MAX_DEVICES, description=(
        "explicit, possibly uneven, layers per pipeline stage, e.g. 9,7 (empty: n_layers / pp each)"))
    ep: int = Field(default=1, gt=0, le=lim.MAX_DEVICES, description="expert-parallel degree (MoE only), carved from dp * cp")
    etp: int | None = Field(default=None, gt=0, le=lim.MAX_DEVICES, description=(
        "expert tensor-parallel degree (Megatron-LM --expert-tensor-parallel-size): routed experts split "
        "etp ways instead of tp, ep x etp carved from tp * dp * cp (empty: tp)"))
    recompute: Recompute = Field(default="none", description=(
        "activation recomputation: 'selective' (the profile's: attention core under megatron, every second matmul "
        "under torchtitan, MaxText's 'minimal' under maxtext) or 'full' (per layer)"))
    recompute_modules: tuple[RecomputeModule, ...] | None = Field(default=None, min_length=1, description=(
        "with recompute='selective': the parts recomputed (Megatron-LM --recompute-modules; empty: core_attn): "
        "core_attn, layernorm (norm outputs), moe_act (the experts' activation output), mlp (dense MLPs), "
        "moe (whole MoE layers, dispatch included), shared_experts, mla_up_proj (MLA's up projections: the "
        "per-head Q, K, V)"))
    remat_saved: tuple[RematSaved, ...] | None = Field(default=None, min_length=1, description=(
        "with recompute='full': matmul outputs every recomputed layer keeps on the device instead of recomputing "
        "them (MaxText's named remat policies, jax.checkpoint_policies.save_only_these_names): qkv_proj (Q, K, V), "
        "query_proj, key_proj, value_proj (one of them: MaxText's custom policy keeps each by its own name), "
        "context (attention output), out_proj, mlpwi (MLP gate / up), mlpwo (MLP down)"))
    microbatch_size: int = Field(default=1, gt=0, le=lim.MAX_MICROBATCH, description=(
        "sequences per microbatch per data-parallel rank"))
    kv_replication: bool = Field(default=False, description=(
        "allow tp > n_kv_heads by replicating KV heads (tp % n_kv_heads == 0)"))
    fsdp_unit: Literal["block", "tensor"] = Field(default="block", description=(
        "ZeRO-3 gather granularity: 'block' (one gather per layer, PyTorch FSDP; the default) or 'tensor' (one per "
        "weight tensor, as DeepSpeed ZeRO-3 fetches them: give it for a DeepSpeed run, whose profile was fitted so)"))
    offload_optimizer: bool = Field(default=False, description=(
        "keep master weights, gradients and optimizer state in host memory"))
    offload_params: bool = Field(default=False, description=(
        "zero_stage 3: keep each rank's parameter shard in host memory, copied to the device before every gather "
        "(DeepSpeed offload_param; PyTorch FSDP / FSDP2 CPU offload, with offload_optimizer)"))
    nvme_offload: bool = Field(default=False, description=(
        "the offloaded optimizer state and parameter shards live on NVMe (DeepSpeed ZeRO-Infinity, offload device "
        "'nvme'), staged through host memory: priced as host offload, not counted in host memory"))
    recompute_layers: int | None = Field(default=None, ge=1, le=lim.MAX_LAYERS, description=(
        "with recompute='full': recompute only the first N layers of each pipeline stage (of each model chunk when "
        "interleaved) and keep the others' activations (Megatron-LM --recompute-method block --recompute-num-layers "
        "N); none: every layer"))
    offload_activation_layers: int = Field(default=0, ge=0, le=lim.MAX_LAYERS, description=(
        "layers whose saved activations are moved to host memory and back (Megatron --cpu-offloading-num-layers); "
        "needs pp=1 and recompute=none"))
    offload_modules: tuple[OffloadModule, ...] | None = Field(default=None, min_length=1, description=(
        "Megatron-core fine-grained activation offloading (--fine-grained-activation-offloading --offload-modules): "
        "the modules whose saved input goes to host memory in the forward and comes back for the backward: "
        "attn_norm, qkv_linear, core_attn (Q, K, V), attn_proj, mlp_norm, expert_fc1 (the routed tokens), moe_act "
        "(the experts' activation input); not with offload_activation_layers; under recompute='full' nothing is "
        "stored to move"))
    overlap_grad_reduce: bool = Field(default=True, description=(
        "overlap the data-parallel gradient reduction (and the ZeRO-1/2 parameter AllGather) with "
        "backward (forward) compute, as DDP buckets / Megatron-LM do"))
    moe_a2a_overlap: bool = Field(default=False, description=(
        "overlap the expert-parallel AllToAlls of one microbatch with another's compute (Megatron-Core Combined "
        "1F1B, --overlap-moe-expert-parallel-comm); needs ep > 1, and schedule='interleaved' when pp > 1"))
    tp_overlap: bool = Field(default=False, description=(
        "hide the tp activation collectives behind the matmuls that consume or produce them "
        "(Megatron-LM --tp-comm-overlap; Wang et al. 2023)"))
    hsdp_reduce: Literal["per_step", "per_microbatch"] = Field(default="per_step", description=(
        "HSDP with gradient accumulation: the AllReduce of the gradient shard across replicas once per "
        "step (deferred, FSDP2 set_requires_all_reduce / DDP no_sync) or after every microbatch's "
        "backward (PyTorch FSDP HYBRID_SHARD without no_sync)"))
    zero3_gather: Literal["per_microbatch", "per_step"] = Field(default="per_microbatch", description=(
        "when ZeRO-3 gathers the parameters: 'per_microbatch' (PyTorch FSDP, for every microbatch's "
        "forward and backward) or 'per_step' (once per step, kept for every microbatch, as XLA/GSPMD does)"))
    pipeline_flushes: int = Field(default=1, gt=0, le=lim.MAX_MICROBATCH, description=(
        "pipeline schedules run per optimizer step: gradient-accumulation steps that each run the whole schedule "
        "(warm-up, steady state, drain) on their share of the microbatches, as torch.distributed.pipelining does "
        "for each local batch (torchtitan, NeMo AutoModel: global batch > local batch x dp); 1 = one schedule "
        "over all microbatches (Megatron-LM, nanotron)"))
    moe_dispatcher: Literal["alltoall", "deepep", "allgather"] = Field(default="alltoall", description=(
        "MoE token dispatch over the ep group: 'alltoall' (NCCL AllToAll: every (token, expert) copy crosses "
        "the network), 'deepep' (DeepEP, Megatron-LM --moe-enable-deepep: one copy per (token, remote rank) "
        "inside a node, one per (token, remote node) over the scale-out network, forwarded to the node's experts "
        "over NVLink) or 'allgather' (Megatron-LM's default --moe-token-dispatcher-type: every token's hidden state "
        "gathered over the expert tensor x expert parallel group, the outputs reduce-scattered back)"))

    @property
    def expert_tp(self) -> int:
        """Tensor-parallel degree of the routed experts: etp, or tp when unset."""
        return self.etp if self.etp is not None else self.tp

    def degrees(self) -> dict[str, int]:
        """The parallel degrees as a dict (dp may be None before validation)."""
        return {"dp": self.dp, "tp": self.tp, "pp": self.pp, "cp": self.cp, "ep": self.ep}

    def short(self) -> str:
        """One-line description, e.g. ``dp=8 zero=3 tp=1 pp=1 cp=1 mbs=1 recompute=none`` (``tp=4+sp+overlap``: sequence
        parallelism and tensor-parallel communication overlap; ``host(optimizer,params)``: the optimizer and the ZeRO-3
        parameter shards offloaded to host memory)."""
        parts = [f"dp={self.dp}", f"zero={self.zero_stage}"
                 + ("(gather/step)" if self.zero_stage == 3 and self.zero3_gather == "per_step" else "")]
        if self.dp_shard and self.dp and self.dp_shard != self.dp and self.zero_stage:
            parts.append(f"dp_shard={self.dp_shard}")
        parts += [f"tp={self.tp}{'+sp' if self.sp else ''}{'+overlap' if self.tp_overlap and self.tp > 1 else ''}",
                  f"pp={self.pp}"]
        if self.pp > 1:
            parts.append(self.schedule + (f"(v={self.virtual_stages})" if self.virtual_stages > 1 else ""))
        parts += [f"cp={self.cp}" + ("(a2a)" if self.cp > 1 and self.cp_comm == "a2a" else "")]
        if self.ep > 1:
            parts.append(f"ep={self.ep}")
        if self.etp is not None and self.etp != self.tp:
            parts.append(f"etp={self.etp}")
        if self.ep > 1 and self.moe_dispatcher != "alltoall":
            parts.append(self.moe_dispatcher)
        mods = (f"({','.join(self.recompute_modules)})" if self.recompute_modules and self.recompute == "selective"
                else f"(first {self.recompute_layers} layers)" if self.recompute_layers and self.recompute == "full"
                else f"(saved:{','.join(self.remat_saved)})" if self.remat_saved and self.recompute == "full"
                else "")
        if self.pp > 1 and self.pipeline_flushes > 1:
            parts.append(f"flushes={self.pipeline_flushes}")
        parts += [f"mbs={self.microbatch_size}", f"recompute={self.recompute}{mods}"]
        if self.offload_activation_layers:
            parts.append(f"offload_activation_layers={self.offload_activation_layers}")
        if self.offload_modules:
            parts.append(f"offload({','.join(self.offload_modules)})")
        host = [name for name, on in (("optimizer", self.offload_optimizer), ("params", self.offload_params)) if on]
        if host:
            parts.append(f"{'nvme' if self.nvme_offload else 'host'}({','.join(host)})")
        return " ".join(parts)


def seq_len_divisor(cp: int, causal: bool, balanced: bool = True, comm: str = "ring") -> int:
    """What seq_len must be a multiple of for context parallelism of degree ``cp``: ``2 cp`` for
    load-balanced causal attention over a ring (each rank holds one chunk from the front and its mirror from
    the back, the split of Megatron-LM's context parallelism and Brandon et al. 2023, striped
    attention), ``cp`` otherwise (non-causal, or contiguous chunks: ``balanced`` False, the
    framework's ``cp_load_balance``; or ``comm`` 'a2a', whose attention runs on whole sequences after the
    AllToAll, so every rank has the same work without reordering: Jacobs et al. 2023, Sec. 3); 1 without cp."""
    if cp <= 1:
        return 1
    return 2 * cp if causal and balanced and comm == "ring" else cp


@dataclass(frozen=True)
class Layout:
    """A validated layout with its derived quantities, each computed in exactly one place.

    Attributes:
        parallel: the config, with ``dp`` and ``dp_shard`` filled in.
        n_devices: world size = dp * tp * pp * cp.
        microbatches: microbatches per step per data-parallel rank, m = B / (dp * mbs).
        stage_layers: transformer layers on each pipeline stage (sums to n_layers).
        seq_len: tokens per sequence (from the training spec).
        causal: causal attention (decides the cp load-balancing divisor).
        padded_vocab: embedding / LM-head rows after padding (:func:`padded_vocab`; 0 = not padded,
            for a Layout built by hand).
        inert_modules: ``recompute_modules`` that recompute nothing in this model (a note says so).
        split_rule: the framework's automatic pipeline split (``FrameworkProfile.pipeline_split``:
            'balanced' or 'cost_greedy'), which the notes name when it chose the split.
        mtp_modules: the model's multi-token-prediction modules (the last stage holds them; named in the note).
        offload_params_implied: ``offload_params`` was off and validation turned it on, because the framework
            offloads the ZeRO-3 parameter shards with the optimizer (``FrameworkProfile.param_offload``
            'with_optimizer'; a note says so).
        blockless_ranks: pipeline ranks the framework's automatic split leaves without any pipeline
            block (:func:`blockless_ranks`; only nanotron's cost-greedy split has them): the
            framework cannot train the layout (:attr:`failure`).
    """

    parallel: ParallelConfig
    n_devices: int
    microbatches: int
    stage_layers: tuple[int, ...]
    seq_len: int = 0
    causal: bool = True
    padded_vocab: int = 0
    blockless_ranks: tuple[int, ...] = ()
    inert_modules: tuple[str, ...] = ()
    split_rule: str = "balanced"
    mtp_modules: int = 0
    offload_params_implied: bool = False

    @property
    def failure(self) -> str | None:
        """Why the framework is predicted to fail on this layout for a reason other than memory, or
        None. Today one reason: pipeline ranks without any block (:func:`blockless_ranks`)."""
        if not self.blockless_ranks:
            return None
        ranks = ", ".join(map(str, self.blockless_ranks))
        return (f"nanotron's cost-greedy pipeline split leaves pipeline rank(s) {ranks} of pp={self.parallel.pp} "
                f"without any pipeline block (no layer, final norm, LM head or loss; layers per rank "
                f"{','.join(map(str, self.stage_layers))}): such runs fail (65 of 66 on the measured H100 grid); "
                f"use a smaller pp")

    def vocab_per_rank(self, vocab_size: int) -> float:
        """Embedding / LM-head rows one tp rank holds: ``padded_vocab / tp`` (``vocab_size / tp``
        for a hand-built Layout without padding)."""
        return (self.padded_vocab or vocab_size) / self.parallel.tp

    @property
    def notes(self) -> tuple[str, ...]:
        """Warnings about a legal but unusual layout (printed by the CLI): an automatic uneven
        pipeline split, fewer microbatches than pipeline stages."""
        p, out = self.parallel, []
        L = sum(self.stage_layers)
        if self.inert_modules:
            out.append(f"recompute_modules {', '.join(self.inert_modules)}: the model has no such layers, nothing "
                       f"is recomputed for them")
        if p.pp > 1 and p.pp_layers is None and self.split_rule == "cost_greedy":
            out.append(f"framework's cost-greedy pipeline split (nanotron): layers per rank "
                       f"{','.join(map(str, self.stage_layers))}" + (" (ranks without layers hold only the final "
                       "norm, LM head, fp32 cast or loss, or nothing)" if 0 in self.stage_layers else ""))
        elif p.pp > 1 and p.pp_layers is None and len(set(self.stage_layers)) > 1:
            out.append(f"pp={p.pp} does not divide the {L} layers: balanced uneven split "
                       f"--pp-layers {','.join(map(str, self.stage_layers))} (the extra layers on the middle "
                       "stages first; the first stage also holds the embedding, the last the LM head"
                       + (" and the multi-token-prediction modules)" if self.mtp_modules else ")"))
        if p.virtual_stages > 1 and any(n % p.virtual_stages for n in self.stage_layers):
            chunks = chunk_layers(self.stage_layers, p.virtual_stages)
            out.append(f"virtual_stages={p.virtual_stages} does not divide every stage: chunks of unequal size "
                       # the first stage's lightest chunk first, as export.megatron.pipeline_layout writes it
                       f"(first stage {sorted(chunks[0])}, heaviest {list(max(chunks, key=sum))} layers; Megatron-core "
                       f"--pipeline-model-parallel-layout); the largest chunk sets the pipeline tick"
                       + ("; a chunk of 0 layers holds only the embedding (first stage) or the loss (last stage), "
                          "Megatron-LM --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split"
                          if any(0 in c for c in chunks) else ""))
        chunk = max(self.stage_layers) / max(1, p.virtual_stages)
        if p.recompute == "full" and p.recompute_layers is not None and p.recompute_layers > math.ceil(chunk):
            out.append(f"recompute_layers={p.recompute_layers} exceeds the layers of each "
                       f"{'chunk' if p.virtual_stages > 1 else 'stage'} (at most {math.ceil(chunk)}): it recomputes "
                       "everything, as full recompute does (Megatron-LM's block method recomputes min(N, layers))")
        per_flush = self.microbatches // p.pipeline_flushes
        if 1 < p.pp and per_flush < p.pp:
            where = (f"per pipeline flush ({p.pipeline_flushes} flushes per step)" if p.pipeline_flushes > 1
                     else "per step")
            out.append(f"{per_flush} microbatches {where} is fewer than pp={p.pp} stages: every stage "
                       f"idles for (pp - 1) microbatch times per flush (the bubble exceeds the work; "
                       f"{p.schedule} runs like GPipe)")
        if 1 < p.pp and p.pipeline_flushes > 1:
            out.append(f"pipeline_flushes={p.pipeline_flushes}: the step runs the {p.schedule} schedule "
                       f"{p.pipeline_flushes} times on {per_flush} microbatches each (gradient accumulation over local "
                       f"batches, as torchtitan and NeMo AutoModel do), paying the bubble each time")
        if self.offload_params_implied:
            out.append("offload_params on: the framework's CPU offload moves the ZeRO-3 parameter shards to the host "
                       "with the optimizer (PyTorch FSDP's CPUOffload / CPUOffloadPolicy offload parameters, gradients "
                       "and the optimizer step together)")
        if p.zero_stage == 3 and self.zero_shard == 1 and self.expert_zero_shard == 1 and not p.offload_params:
            # (with offload_params ZeRO-3 is what keeps the weights on the host: ZeRO-Infinity on one GPU)
            other = "zero_stage=1 is" if p.offload_optimizer else "zero_stage=0 or 1 is"  # offload needs a ZeRO stage
            out.append("zero_stage=3 with a ZeRO shard group of 1 (dp_shard x cp = 1): nothing is sharded, and "
                       f"ZeRO-3's buffers (gathered weights, prefetch) still cost memory; {other} the "
                       "same layout without them")
        return tuple(out)

    @property
    def zero_shard(self) -> int:
        """Devices a ZeRO-sharded dense tensor is split over: dp_shard x cp (Megatron-LM's distributed
        optimizer shards over the dp x cp group)."""
        return (self.parallel.dp_shard or 1) * self.parallel.cp

    @property
    def expert_dp(self) -> int:
        """Data-parallel degree of the expert weights (edp): tp x dp x cp / (ep x etp), which is
        dp x cp / ep when etp = tp."""
        p = self.parallel
        return p.tp * p.dp * p.cp // (p.ep * p.expert_tp)

    @property
    def expert_zero_shard(self) -> int:
        """Devices a ZeRO-sharded expert tensor is split over: zero_shard x tp / (ep x etp) when that
        divides (zero_shard / ep for etp = tp: experts are already split over ep), else 1 (expert
        state not ZeRO-sharded)."""
        p = self.parallel
        zs, split = self.zero_shard * p.tp, p.ep * p.expert_tp
        return max(1, zs // split) if zs % split == 0 else 1

    @property
    def local_tokens(self) -> float:
        """Tokens of one microbatch on one device before the sp split: seq_len x microbatch_size / cp."""
        return self.seq_len * self.parallel.microbatch_size / self.parallel.cp

    @property
    def seq_shard(self) -> int:
        """Factor by which sequence parallelism splits the activations outside the tp regions:
        tp with sp (Korthikanti et al. 2022 Sec. 4.2.2), else 1."""
        return self.parallel.tp if self.parallel.sp else 1

    @property
    def heaviest_stage(self) -> int:
        """Index of the first pipeline stage with the most transformer layers."""
        return self.stage_layers.index(max(self.stage_layers))

    @property
    def candidate_stages(self) -> tuple[int, ...]:
        """Stages that can be the slowest or the fullest, whatever the layers hold: the first
        (embedding), the last (LM head and loss) and the one with the most layers; sorted, without
        repeats. :meth:`stages_to_price` adds the stage with the most MoE layers."""
        return tuple(sorted({0, self.parallel.pp - 1, self.heaviest_stage}))

    def stages_to_price(self, model: ModelSpec) -> tuple[int, ...]:
        """:attr:`candidate_stages` plus the first stage with the most MoE layers of ``model`` (an MoE
        layer holds more parameters and costs more than a dense one, so with dense first layers
        (DeepSeek-V3) or an uneven split the stage with the most layers need not be the heaviest)."""
        if not model.is_moe or self.parallel.pp == 1:
            return self.candidate_stages
        starts = [sum(self.stage_layers[:i]) for i in range(self.parallel.pp)]
        moe = [model.moe_layers_in(a, n) for a, n in zip(starts, self.stage_layers)]
        return tuple(sorted({*self.candidate_stages, moe.index(max(moe))}))

    @property
    def seq_len_divisor(self) -> int:
        """What seq_len must be a multiple of for this layout's cp (:func:`seq_len_divisor`)."""
        return seq_len_divisor(self.parallel.cp, self.causal, comm=self.parallel.cp_comm)


#: the :func:`validate` call whose errors list legal values: (the layout as given, model, training, devices); None
#: while one listed value is being tried (:func:`legal_values`), inside :func:`quiet_legal_values` and outside validate
_GIVEN: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("shardplan_validate_given", default=None)
#: True while a listed value is tried or an error is not shown (the search): no legal list is filtered then
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("shardplan_quiet_legal", default=False)


@contextlib.contextmanager
def quiet_legal_values() -> Iterator[None]:
    """Inside it, :func:`validate`'s errors list their legal values without trying each (:func:`legal_values`):
    for callers that only need whether a layout is valid (the search, an alternative being tried), not the
    message."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def _trial(parallel: ParallelConfig, field: str, value: object, also: dict | None = None) -> ParallelConfig:
    """``parallel`` with ``field=value`` (and the changes ``also``); a tp of 1 also drops sequence parallelism and
    TP overlap (they mean nothing without tp, and the CLI's profile defaults turn them on only with tp > 1)."""
    change: dict = {**(also or {}), field: value}
    if field == "tp" and value == 1:
        change.update(sp=False, tp_overlap=False)
    return parallel.model_copy(update=change)


def _first_failure(parallel: ParallelConfig, model: ModelSpec, training: TrainingSpec, n: int) -> str | None:
    """What :func:`validate` refuses in ``parallel`` first, without its legal lists (None: it passes)."""
    try:
        with quiet_legal_values():
            validate(parallel, model, training, n)
    except ConfigError as e:
        return re.split(r";\s*(?:legal|to keep)|, legal| \(on \d+ devices", str(e))[0]
    return None


def legal_values(field: str, values: Iterable[object], also: dict | None = None) -> tuple[list, str]:
    """The ``values`` of ``field`` that pass every check of the :func:`validate` call now running with the
    other fields as given (a listed value must not fail another check), and their text for a message:
    ``"1, 2"``, or where none passes ``"none with the other settings as given (tp=1: <why it fails>)"``.
    ``also``: other fields changed with it (values legal together with them). Outside validate (or inside
    :func:`quiet_legal_values`) the values are kept as they are."""
    values = list(values)
    if _GIVEN.get() is None or not values:
        return values, fmt_legal(values)
    kept, why = [], None
    for v in values:
        failure = failure_with(field, v, also)
        if failure is None:
            kept.append(v)
        elif why is None:
            why = f"{field}={v}: {failure}"
    if kept:
        return kept, fmt_legal(kept)
    return kept, f"none with the other settings as given ({why})"


def failure_with(field: str, value: object, also: dict | None = None) -> str | None:
    """Why the :func:`validate` call now running would refuse ``field=value`` (with ``also`` changed too) and the
    other fields as given, or None when it passes (also outside validate, where nothing is checked)."""
    given = _GIVEN.get()
    if given is None:
        return None
    parallel, model, training, n = given
    return _first_failure(_trial(parallel, field, value, also), model, training, n)


def legal_tp(model: ModelSpec, kv_replication: bool = False) -> list[int]:
    """tp degrees that split the heads evenly: divisors of n_heads that also divide n_kv_heads
    (or, with KV replication, are multiples of n_kv_heads)."""
    out = []
    for t in divisors(model.n_heads):
        if model.kv_heads % t == 0 or (kv_replication and t % model.kv_heads == 0):
            out.append(t)
    return out


def _tp_clause(by_model: list[int], n_devices: int) -> tuple[list[int], str]:
    """The tp of ``by_model`` (those splitting the model's heads) that also pass every other check on ``n_devices``
    devices (:func:`legal_values`), and the message's clause naming them (and ``by_model`` where it differs)."""
    legal, text = legal_values("tp", [t for t in by_model if n_devices % t == 0])
    if legal == by_model:
        return legal, f"legal tp: {text}"
    return legal, f"tp splitting the heads: {fmt_legal(by_model)}; legal tp (on {n_devices} devices: {text})"


def _check_tp(p: ParallelConfig, model: ModelSpec, n_devices: int) -> None:
    """tp against the model's heads and widths; the legal lists keep only the tp that also divide
    ``n_devices`` and pass the other checks (:func:`legal_values`)."""
    if p.tp == 1:
        if p.sp:
            legal, text = legal_values("sp", [False])
            raise ConfigError(f"sp=True (Megatron sequence parallelism) needs tp > 1; legal sp with tp=1: "
                              f"{'False' if legal else text}", field="sp", value=True, legal=legal)
        return
    if p.tp_overlap and not p.sp:  # Megatron-LM arguments.py asserts it; torchtitan's async TP works on SP's collectives
        legal, text = legal_values("tp_overlap", [False])
        raise ConfigError("tp_overlap=True hides the sequence-parallel AllGather / ReduceScatter behind the matmuls and "
                          "needs sp=True (Megatron-LM asserts --sequence-parallel with --tp-comm-overlap); legal: sp=True, "
                          f"or tp_overlap=False{'' if legal else f' ({text})'}", field="tp_overlap", value=True,
                          legal=legal)
    if model.n_heads % p.tp:
        by_model = legal_tp(model, p.kv_replication)
        legal, clause = _tp_clause(by_model, n_devices)
        raise ConfigError(f"tp={p.tp} does not divide n_heads={model.n_heads}; {clause}",
                          field="tp", value=p.tp, legal=legal)
    if model.kv_heads % p.tp:
        if p.kv_replication and p.tp % model.kv_heads == 0:
            pass  # each KV head is replicated tp / n_kv_heads times (stated explicitly by the user)
        else:
            hint = (f" (or set kv_replication=True, --kv-replication, to replicate each KV head {p.tp // model.kv_heads}x)"
                    if p.tp % model.kv_heads == 0 else "")
            by_model = legal_tp(model, p.kv_replication)
            legal, clause = _tp_clause(by_model, n_devices)
            raise ConfigError(f"tp={p.tp} does not divide n_kv_heads={model.kv_heads}; {clause}{hint}", field="tp",
                              value=p.tp, legal=legal)
    for name, width in (("ffn_dim", model.ffn_dim), ("vocab_size", model.vocab_size)):
        if name == "vocab_size":
            continue  # vocab is padded to a multiple of tp (Megatron --make-vocab-size-divisible-by)
        if width % p.tp:
            legal, text = legal_values("tp", [t for t in legal_tp(model, p.kv_replication)
                                              if width % t == 0 and n_devices % t == 0])
            raise ConfigError(f"tp={p.tp} does not divide {name}={width}; legal tp: {text}",
                              field="tp", value=p.tp, legal=legal)
    if model.is_moe and p.expert_tp == p.tp and model.expert_ffn % p.tp:
        raise ConfigError(f"tp={p.tp} does not divide expert_ffn_dim={model.expert_ffn}",
                          field="tp", value=p.tp)


def balanced_split(n_layers: int, pp: int, last_stage_modules: int = 0) -> tuple[int, ...]:
    """Layers per stage when pp does not divide n_layers: the extra layers go to the middle stages
    first, since the first stage also holds the embedding and the last the LM head (the Llama 3
    paper, Dubey et al. 2024 Sec. 3.3.2, removes one layer from the first and the last stage for this
    reason; nanotron splits unevenly too). Always covers every layer (bug case C).

    ``last_stage_modules``: layer-sized modules the last stage runs besides its layers, each counted as
    one layer of the split: the multi-token-prediction modules (DeepSeek-V3 Sec. 2.2; each is a full
    transformer block with its own projection and a second LM-head pass). Megatron-Bridge's DeepSeek-V3
    recipe splits its 61 layers on pp 8 x vpp 4 as ``Et|(tt|)*30mL`` (the MTP module ``m`` a chunk of
    its own), i.e. 7, 8 x 6, 6 layers: ``balanced_split(61, 8, 1)``. The last stage keeps at least one
    layer (fewer modules are counted when it would not)."""
    if last_stage_modules and n_layers + last_stage_modules >= pp:
        split = list(balanced_split(n_layers + last_stage_modules, pp))
        if split[-1] > last_stage_modules:
            split[-1] -= last_stage_modules
            return tuple(split)
        return balanced_split(n_layers, pp, last_stage_modules - 1)
    base, extra = divmod(n_layers, pp)
    order = sorted(range(pp), key=lambda i: (i in (0, pp - 1), abs(i - (pp - 1) / 2)))
    plus = set(order[:extra])
    return tuple(base + (1 if i in plus else 0) for i in range(pp))


def padded_vocab(vocab_size: int, tp: int, divisible_by: int) -> int:
    """Vocabulary rows after padding: the smallest multiple of ``divisible_by x tp`` >= vocab_size
    (Megatron-LM ``--make-vocab-size-divisible-by``, default 128, times the tensor-parallel size, so
    every rank of the vocab-parallel embedding and LM head holds the same number of rows:
    megatron/training/tokenizer/tokenizer.py ``_vocab_size_with_padding``). Vocab 32,001 at tp=2:
    multiple 256, 126 x 256 = 32,256 rows, 16,128 per rank."""
    multiple = divisible_by * tp
    return -(-vocab_size // multiple) * multiple


def chunk_layers(stage_layers: tuple[int, ...], virtual_stages: int) -> tuple[tuple[int, ...], ...]:
    """Layers of each virtual pipeline chunk, per stage: a stage's layers in ``virtual_stages``
    chunks as even as possible, larger chunks first (7 layers in 4 chunks: 2, 2, 2, 1). Megatron-core
    runs such unequal chunks with ``--pipeline-model-parallel-layout`` (an explicit layer list per
    virtual stage, Megatron-LM core_r0.13); the Llama 3 paper (Dubey et al. 2024 Sec. 3.3.2)
    interleaves stages whose first and last hold one layer less."""
    out = []
    for n in stage_layers:
        base, extra = divmod(n, virtual_stages)
        out.append(tuple(base + (1 if i < extra else 0) for i in range(virtual_stages)))
    return tuple(out)


def max_virtual_stages(split: tuple[int, ...]) -> int:
    """The most virtual chunks per stage an uneven split interleaves into: every chunk holds a layer,
    except that the first stage's first chunk may hold only the embedding and the last stage's last
    chunk only the output layer and loss (Megatron-LM ``--account-for-embedding-in-pipeline-split``
    and ``--account-for-loss-in-pipeline-split``, or a ``--pipeline-model-parallel-layout`` such as
    ``E|t...|L``): 94 layers in 32 stages of 3 chunks run as [2, 3 x 30, 2] layers."""
    edges = {0, len(split) - 1}
    return min(n + (1 if i in edges and len(split) > 1 else 0) for i, n in enumerate(split))


def _check_chunks(p: ParallelConfig, split: tuple[int, ...], what: str) -> None:
    """A split interleaves into ``virtual_stages`` chunks per stage: an even split into equal chunks
    only (bug case B: virtual_stages divides its layers per stage); an uneven one into chunks of
    unequal size (:func:`chunk_layers`) as long as every chunk holds a layer, the embedding's and the
    loss's chunks aside (:func:`max_virtual_stages`).

    Raises:
        ConfigError: naming virtual_stages and its legal values."""
    per_stage = split[0]
    if len(set(split)) == 1 and per_stage % p.virtual_stages:
        # an even split interleaves into equal chunks only (bug case B: no layer dropped, no silent reshaping)
        legal, text = legal_values("virtual_stages", [v for v in divisors(per_stage)
                                                      if v > 1 or p.schedule != "interleaved"])
        layers = f"{per_stage} layer{'s' if per_stage != 1 else ''}"
        options = []
        if legal or p.schedule != "interleaved":
            options.append(f"legal virtual_stages: {text}" + (
                f" (layers per virtual stage: {fmt_legal([per_stage // v for v in legal])})" if legal else ""))
        if p.schedule == "interleaved":
            options.append(f"virtual_stages=1 ({layers} per stage) with schedule='1f1b' (--schedule 1f1b)")
        legal_text = ", or ".join(options) if legal or p.schedule != "interleaved" else "legal: " + options[0]
        raise ConfigError(
            f"virtual_stages={p.virtual_stages} does not divide {what} {layers} per pipeline stage (layers would be "
            f"dropped); {legal_text}",
            field="virtual_stages", value=p.virtual_stages, legal=legal)
    top = max_virtual_stages(split)
    if p.virtual_stages > 1 and p.virtual_stages > top:
        legal, text = legal_values("virtual_stages", range(2, top + 1))
        raise ConfigError(f"virtual_stages={p.virtual_stages} would leave a virtual chunk of {what.rstrip(':')} "
                          f"without a layer (only the first stage's first chunk, holding the embedding, and the last "
                          f"stage's last, holding the loss, may be); legal virtual_stages: {text}",
                          field="virtual_stages", value=p.virtual_stages, legal=legal)


#: nanotron's pipeline blocks besides the transformer layers: embedding, final norm, LM head, fp32 cast, loss
#: (:func:`cost_greedy_blocks`); a pipeline of up to n_layers + these many ranks can be placed
NANOTRON_EXTRA_BLOCKS = 5


def cost_greedy_blocks(model: ModelSpec, pp: int) -> tuple[tuple[str, ...], ...]:
    """Pipeline blocks per pipeline rank as nanotron places them: 'embedding', 'layer' (once per
    transformer layer), 'final_norm', 'lm_head', 'cast_to_fp32', 'loss' (the PipelineBlocks of
    nanotron's ``models/llama.py`` LlamaModel / LlamaForTraining, in order).

    nanotron (``models/base.py`` build_model with ``models/llama.py`` get_block_compute_costs)
    walks the pipeline blocks in order (embedding, the layers, final norm, LM head, fp32 cast, loss)
    with costs 4*a*d_head*h + 3*F*h per layer, V*h for the LM head and 0 otherwise, places each block
    on the current rank and moves to the next rank once the cumulative cost exceeds
    ``total * (rank + 1) / pp``. The rank that crosses a threshold keeps the crossing block, so the
    first rank holds more layers than an even split and the last ranks may hold only the parameterless
    cast and loss blocks, or no block at all (1B grid model, pp=16: rank 15 holds nothing).
    """
    layer = 4 * model.n_heads * model.dim_head * model.d_model + 3 * model.ffn_dim * model.d_model
    blocks = ["embedding"] + ["layer"] * model.n_layers + ["final_norm", "lm_head", "cast_to_fp32", "loss"]
    costs = [0] + [layer] * model.n_layers + [0, model.vocab_size * model.d_model, 0, 0]
    total = sum(costs)
    per_rank: list[list[str]] = [[] for _ in range(pp)]
    rank, cum = 0, 0
    for name, c in zip(blocks, costs):
        cum += c
        per_rank[rank].append(name)
        if rank < pp - 1 and cum > total * ((rank + 1) / pp):
            rank += 1
    return tuple(tuple(r) for r in per_rank)


def cost_greedy_split(model: ModelSpec, pp: int) -> tuple[int, ...]:
    """Transformer layers per pipeline rank as nanotron assigns them (may contain zeros), from
    :func:`cost_greedy_blocks` (1B grid model, pp=2: 11 and 5 of 16; pp=8: 3,3,2,3,2,3,0,0). Used
    when the framework profile's ``pipeline_split`` is ``'cost_greedy'``."""
    return tuple(r.count("layer") for r in cost_greedy_blocks(model, pp))


def blockless_ranks(model: ModelSpec, pp: int) -> tuple[int, ...]:
    """Pipeline ranks that nanotron's placement (:func:`cost_greedy_blocks`) leaves without any block.

    nanotron cannot train such a layout: on the measured H100 grid
    (``shared/calibration/usp_h100_grid_1b_8b.csv``) 65 of the 66 runs of the 1B model at pp=16,
    the only layouts with a blockless rank, did not finish, against 25-28% at pp = 2, 4 and 8. A
    rank holding only the parameterless cast and loss blocks does run (8B at pp=16 and 32)."""
    return tuple(i for i, r in enumerate(cost_greedy_blocks(model, pp)) if not r)


def _automatic_split(p: ParallelConfig, model: ModelSpec, split_rule: str) -> tuple[int, ...]:
    """The split of n_layers over pp when ``pp_layers`` is not given: nanotron's cost-greedy split
    (zero-layer stages allowed, 1F1B / GPipe only) or Megatron-style even / balanced uneven."""
    if split_rule == "cost_greedy":
        if p.virtual_stages > 1:
            legal, text = legal_values("virtual_stages", [1], {"schedule": "1f1b"})
            raise ConfigError(f"virtual_stages={p.virtual_stages} with the framework's cost-greedy pipeline split "
                              f"(nanotron has no interleaved schedule); legal virtual_stages: {text}",
                              field="virtual_stages", value=p.virtual_stages, legal=legal)
        return cost_greedy_split(model, p.pp)
    return _balanced_stage_layers(p, model)


def _check_even_split(p: ParallelConfig, L: int) -> None:
    """A framework that gives every stage one layer count (``pipeline_split='even'``): ``L`` layers must divide into
    pp x virtual_stages chunks, and a ``pp_layers`` given must be that even split.

    Raises:
        ConfigError: an uneven pp_layers (named as such, with the even split: breaker pass 56 got "pp=4 does not split
            the 32 layers evenly ... legal pp: 2, 4, ..." for --pp-layers 9,8,8,7), or pp x virtual_stages not
            dividing L (with the legal pp)."""
    if not L % (p.pp * p.virtual_stages) and p.pp_layers is not None and len(set(p.pp_layers)) > 1:
        even = [L // p.pp] * p.pp
        raise ConfigError(f"pp_layers={short_repr(list(p.pp_layers))}: the framework gives every stage one layer count "
                          f"(pipeline_split='even'); legal pp_layers: {','.join(map(str, even))}, or not given (leave "
                          "--pp-layers out)", field="pp_layers", value=list(p.pp_layers), legal=[even, None])
    if L % (p.pp * p.virtual_stages):
        legal, text = legal_values("pp", [d for d in divisors(L) if d > 1 and L % (d * p.virtual_stages) == 0])
        raise ConfigError(f"pp={p.pp}{f' x virtual_stages={p.virtual_stages}' if p.virtual_stages > 1 else ''} does "
                          f"not split the {L} layers evenly: the framework gives every stage one layer count "
                          f"(pipeline_split='even'); legal pp: {text}", field="pp", value=p.pp, legal=legal)


def _stage_layers(p: ParallelConfig, model: ModelSpec, split_rule: str = "balanced") -> tuple[int, ...]:
    L = model.n_layers
    if p.virtual_stages > 1 and p.pp == 1:
        legal, text = legal_values("virtual_stages", [1])
        raise ConfigError(f"virtual_stages={p.virtual_stages} needs pp > 1 (interleaving splits pipeline stages); "
                          f"legal virtual_stages with pp=1: {text}", field="virtual_stages", value=p.virtual_stages,
                          legal=legal)
    if p.virtual_stages > 1 and p.schedule != "interleaved":
        legal, text = legal_values("virtual_stages", [1])
        raise ConfigError(f"virtual_stages={p.virtual_stages} needs schedule='interleaved' "
                          f"(got schedule={p.schedule!r}); legal virtual_stages for {p.schedule}: {text}",
                          field="virtual_stages", value=p.virtual_stages, legal=legal)
    if p.schedule == "interleaved" and p.pp > 1 and p.virtual_stages < 2:
        raise ConfigError(f"schedule='interleaved' needs virtual_stages >= 2 (--virtual-stages); legal: "
                          f"--virtual-stages 2 or more, or --schedule 1f1b", field="virtual_stages",
                          value=p.virtual_stages)
    if split_rule == "even" and p.pp > 1:
        _check_even_split(p, L)
    if p.pp_layers is not None and split_rule == "cost_greedy" and p.pp <= L:
        own = cost_greedy_split(model, p.pp)
        if tuple(p.pp_layers) != own:
            raise ConfigError(f"pp_layers={short_repr(list(p.pp_layers))}: the framework places the layers itself "
                              f"(nanotron's cost-greedy split); for pp={p.pp} it runs {','.join(map(str, own))}; "
                              "legal pp_layers: that split, or not given (leave --pp-layers out)", field="pp_layers", value=list(p.pp_layers),
                              legal=[list(own)])
    if p.pp_layers is not None and split_rule != "cost_greedy":
        if len(p.pp_layers) != p.pp:
            # pp = the entry count is legal only where the entries also cover every layer
            alt = f"pp={len(p.pp_layers)}, or " if sum(p.pp_layers) == L else ""
            raise ConfigError(f"pp_layers has {len(p.pp_layers)} entries but pp={p.pp}; legal: {alt}{p.pp} entries "
                              f"summing to {L}", field="pp_layers", value=list(p.pp_layers),
                              legal=[len(p.pp_layers)] if alt else [])
        inner = p.pp_layers[1:-1]
        if min(p.pp_layers) < 0 or (inner and min(inner) < 1) or sum(1 for n in p.pp_layers if n > 0) == 0:
            raise ConfigError(f"pp_layers={short_repr(list(p.pp_layers))} has a stage with {min(p.pp_layers)} layers; "
                              f"legal: every stage holds >= 1 layer, {L} in all (only the first stage, holding the "
                              f"embedding, and the last, holding the output layer and loss, may hold 0)",
                              field="pp_layers", value=list(p.pp_layers))
        if sum(p.pp_layers) != L:
            raise ConfigError(f"pp_layers={list(p.pp_layers)} sums to {sum(p.pp_layers)}, "
                              f"but n_layers={L}: the stages must cover every layer",
                              field="pp_layers", value=list(p.pp_layers))
        _check_chunks(p, tuple(p.pp_layers), f"pp_layers={list(p.pp_layers)}:")
        return tuple(p.pp_layers)
    if p.pp > L and not (split_rule == "cost_greedy" and p.pp <= L + NANOTRON_EXTRA_BLOCKS):
        # with dp re-derived from the devices: the pp that divide devices / (tp x cp) and leave every stage a layer
        # (nanotron places pipeline blocks, not layers: up to n_layers + its 5 other blocks, Layout.failure then
        # names the ranks left without a block)
        room = p.dp * p.pp
        legal, text = legal_values("pp", [d for d in divisors(room) if d <= L])
        raise ConfigError(f"pp={p.pp} exceeds n_layers={L}: every stage needs a layer; legal pp on these devices "
                          f"(dp x pp = {room}): {text} (those dividing {L} split the layers evenly, the "
                          "others unevenly)", field="pp", value=p.pp, legal=legal)
    return _automatic_split(p, model, split_rule)


def _balanced_stage_layers(p: ParallelConfig, model: ModelSpec) -> tuple[int, ...]:
    """Even split, or :func:`balanced_split` when pp does not divide n_layers (checks virtual_stages)."""
    L = model.n_layers
    if L % p.pp:
        split = balanced_split(L, p.pp, model.mtp_modules)
        _check_chunks(p, split, f"the balanced split {list(split)}:")
        return split
    split = (L // p.pp,) * p.pp
    _check_chunks(p, split, f"the {L}/{p.pp} =")
    return split


def validate(parallel: ParallelConfig, model: ModelSpec, training: TrainingSpec, n_devices: int) -> Layout:
    """Check a layout against the model, the batch and the device count.

    Args:
        parallel: the layout; ``dp=None`` derives dp = devices / (tp * pp * cp).
        model: model shapes.
        training: seq_len and global batch (sequences).
        n_devices: number of accelerators.

    Returns:
        The :class:`Layout` with dp, microbatches and the per-stage layer split (and ``offload_params`` set where an
        offloaded optimizer at ZeRO-3 offloads the parameter shards too: ``FrameworkProfile.param_offload``
        'with_optimizer', PyTorch FSDP's CPU offload).

    Raises:
        ConfigError: naming the field, value and legal alternatives, for: degrees whose product is
            not the device count; tp not dividing n_heads / n_kv_heads / ffn_dim; sp without tp;
            pp > n_layers; virtual_stages not dividing a stage's layers (pp need not divide
            n_layers: a balanced uneven split is chosen, see :attr:`Layout.notes`); cp not dividing
            seq_len (2*cp for load-balanced causal attention); ep not dividing n_experts or dp*cp;
            a global batch not divisible by dp x microbatch_size; an interleaved schedule whose
            microbatches pp does not divide. Fewer microbatches than stages is legal (a note). Every legal list
            an error gives passes every check with the other fields as given (:func:`legal_values`).
    """
    token = _GIVEN.set(None if _QUIET.get() else (parallel, model, training, n_devices))
    try:
        return _validated(parallel, model, training, n_devices)
    finally:
        _GIVEN.reset(token)


def _validated(parallel: ParallelConfig, model: ModelSpec, training: TrainingSpec, n_devices: int) -> Layout:
    """:func:`validate`'s checks, in order."""
    _check_options(parallel, n_devices, training.framework)
    _check_framework_support(parallel, training)
    _check_framework_extents(parallel, training.framework, model.is_moe)
    if parallel.tp == 1 and parallel.tp_overlap:  # no tp collectives to overlap: the flag means nothing
        parallel = parallel.model_copy(update={"tp_overlap": False})
    if parallel.cp == 1 and parallel.cp_comm != "ring":  # no cp group, no exchange: the default, as a search gives it
        parallel = parallel.model_copy(update={"cp_comm": "ring"})
    implied = (parallel.offload_optimizer and parallel.zero_stage == 3 and not parallel.offload_params
               and training.framework.param_offload == "with_optimizer")
    if implied:  # PyTorch FSDP's CPU offload moves the ZeRO-3 parameter shards with the optimizer: the layout says so
        parallel = parallel.model_copy(update={"offload_params": True})
    p = _resolve_dp(parallel, model, n_devices, training)
    _check_tp(p, model, n_devices)
    stage_layers = _stage_layers(p, model, training.framework.pipeline_split)
    check_activation_offload(p, model.n_layers, training.framework.activation_offload)
    check_offload_modules(p, model)
    _check_remat_saved(p)
    _check_sequence(p, training, n_devices)
    _check_cp_heads(p, model, training.framework)
    check_positions(model, training)
    if p.moe_a2a_overlap:
        _check_a2a_overlap(p, model, training)
    _check_ep(p, model)  # etp of a dense model first (_check_etp), then the framework's own expert rules
    _check_expert_composition(p, training.framework)
    _check_ep_shard(p, training.framework)
    m = _microbatches(p, model, training)
    # with the cost-greedy split a given pp_layers equals nanotron's own split (_stage_layers), so its
    # blockless ranks are nanotron's too
    empty = (blockless_ranks(model, p.pp) if training.framework.pipeline_split == "cost_greedy" and p.pp > 1
             else ())
    layout = Layout(parallel=p, n_devices=n_devices, microbatches=m, stage_layers=stage_layers,
                    seq_len=training.seq_len, causal=training.causal,
                    padded_vocab=padded_vocab(model.vocab_size, p.tp, training.framework.vocab_divisible_by),
                    blockless_ranks=empty, inert_modules=inert_recompute_modules(p, model),
                    split_rule=training.framework.pipeline_split, mtp_modules=model.mtp_modules,
                    offload_params_implied=implied)
    _check_loss_chunks(layout, training.framework.loss_chunks)
    return layout


#: the attention projections' own checkpoint names (MaxText layers/attentions.py: query_proj, key_proj, value_proj;
#: qkv_proj names the fused projection and, as a remat_saved entry, all three)
QKV_PARTS = ("query_proj", "key_proj", "value_proj")


def _check_remat_saved(p: ParallelConfig) -> None:
    """``remat_saved`` names that price twice: query_proj / key_proj / value_proj beside qkv_proj (which keeps all
    three). On a multi-head latent attention model each is priced at its own up-projected width and path
    (:func:`shardplan.cost.flops.mla_qkv_saved_weights`).

    Raises:
        ConfigError: naming the entries and the legal alternatives.
    """
    parts = [k for k in p.remat_saved or () if k in QKV_PARTS]
    if not parts:
        return
    if "qkv_proj" in p.remat_saved:
        raise ConfigError(f"remat_saved names qkv_proj (Q, K and V) and {', '.join(parts)} too; legal: qkv_proj, or "
                          "the parts alone (query_proj, key_proj, value_proj)", field="remat_saved",
                          value=list(p.remat_saved), legal=["qkv_proj", *QKV_PARTS])


def recomputed_layers(p: ParallelConfig, layers: int) -> float:
    """Layers of a stage of ``layers`` layers that full recompute recomputes: all of them, or with
    ``recompute_layers`` N the first N of each of the stage's ``virtual_stages`` chunks (Megatron-Core
    ``transformer_block.py`` ``_checkpointed_forward``, method 'block': layers ``l < recompute_num_layers`` of
    the chunk are checkpointed), at most every layer; 0 without full recompute."""
    if p.recompute != "full":
        return 0.0
    if p.recompute_layers is None:
        return float(layers)
    return float(min(layers, p.recompute_layers * p.virtual_stages))


#: what MaxText's 'minimal' remat policy keeps besides the layer input (layers/decoders.py minimal_policy): every
#: named matmul output; the attention core and the element-wise work are recomputed
NAMED_DOTS = ("qkv_proj", "out_proj", "mlpwi", "mlpwo")
#: MaxText's named policies that keep some matmul outputs under full remat (layers/decoders.py get_remat_policy),
#: as ParallelConfig.remat_saved sets ('minimal' is the planner's selective recompute, :data:`NAMED_DOTS`)
MAXTEXT_SAVED_POLICIES = {"minimal_with_context": ("qkv_proj", "context", "out_proj", "mlpwi", "mlpwo"),
                          "minimal_flash": ("qkv_proj", "context", "out_proj", "mlpwi", "mlpwo"),  # the older name
                          "save_dot_with_context_except_mlp": ("qkv_proj", "context", "out_proj"),
                          "save_dot_except_mlpwi": ("qkv_proj", "out_proj", "mlpwo"),
                          "save_dot_except_mlp": ("qkv_proj", "out_proj"), "save_qkv_proj": ("qkv_proj",),
                          "save_out_proj": ("out_proj",)}


def named_remat(p: ParallelConfig, selective_kind: str) -> tuple[str, ...] | None:
    """The matmul outputs a full-style recompute keeps, for a framework whose selective recompute is of kind
    ``selective_kind`` (``FrameworkProfile.selective_recompute``): ``remat_saved`` (or none) under full recompute,
    :data:`NAMED_DOTS` under selective recompute of the 'named_dots' kind (MaxText's 'minimal' is full remat that
    keeps every named matmul output, priced so: the same policy as ``--recompute full --remat-saved
    qkv_proj,out_proj,mlpwi,mlpwo``); None for any other recompute."""
    if p.recompute == "full":
        return p.remat_saved or ()
    if p.recompute == "selective" and selective_kind == "named_dots":
        return NAMED_DOTS
    return None


def recompute_share(p: ParallelConfig, layers: int) -> float:
    """:func:`recomputed_layers` over ``layers`` (1 with every layer recomputed; 0 without full recompute)."""
    return recomputed_layers(p, layers) / layers if layers else 0.0


def inert_recompute_modules(p: ParallelConfig, model: ModelSpec) -> tuple[str, ...]:
    """The ``recompute_modules`` with nothing to recompute in ``model``: moe and moe_act without MoE
    layers, shared_experts without shared experts, mlp without dense MLP layers, mla_up_proj without
    multi-head latent attention."""
    if p.recompute != "selective" or not p.recompute_modules:
        return ()
    absent = {"moe": model.n_moe_layers == 0, "moe_act": model.n_moe_layers == 0,
              "shared_experts": model.n_shared_experts == 0, "mlp": model.n_dense_mlp_layers == 0,
              "mla_up_proj": not model.is_mla}
    return tuple(m for m in p.recompute_modules if absent.get(m, False))


def check_activation_offload(p: ParallelConfig, n_layers: int | None = None, mode: bool | str = True) -> None:
    """The framework's rules for activation offloading (``FrameworkProfile.activation_offload`` = ``mode``).
    Megatron-core's (``transformer_config.py`` ``__post_init__``; mode True): ``offload_activation_layers`` below
    the model's layer count (when ``n_layers`` is given), no pipeline parallelism, no recompute. MaxText's
    (mode 'remat_inputs': ``decoder_layer_input: offload`` is one knob for every layer): full recompute, pp = 1
    and N = the model's layer count.

    Raises:
        ConfigError: naming the offending field, its value and the legal one.
    """
    n = p.offload_activation_layers
    if not n:
        return
    if mode == "remat_inputs":
        _check_remat_offload(p, n, n_layers)
        return
    maxtext = (" (every layer's input on the host under full recompute is MaxText's decoder_layer_input: offload: "
               "--framework maxtext)" if n == n_layers and p.recompute == "full" and p.pp == 1 else "")
    if n_layers is not None and n >= n_layers:
        raise ConfigError(f"offload_activation_layers={n} must be below n_layers={n_layers} with Megatron-core's "
                          f"offloading{maxtext}; legal: 0 to {n_layers - 1} with recompute 'none'",
                          field="offload_activation_layers", value=n, legal=[0, n_layers - 1])
    if p.pp > 1 or p.recompute != "none":
        field, value = ("pp", p.pp) if p.pp > 1 else ("recompute", p.recompute)
        legal: list = [1] if field == "pp" else ["none"]
        raise ConfigError(f"offload_activation_layers={n} needs pp=1 and recompute='none' (Megatron-core has no "
                          f"activation offloading with pipelining or recomputation); got {field}={value!r}; legal "
                          f"{field}: {legal[0]!r}, or offload_activation_layers=0", field=field, value=value,
                          legal=legal)


def check_offload_modules(p: ParallelConfig, model: ModelSpec | None) -> None:
    """``offload_modules`` as Megatron-core takes them: each module once, not with whole-layer offloading
    (``offload_activation_layers``; one offload mechanism per run), and the MoE modules only in a MoE model (not
    checked when ``model`` is None: an imported config). With full recompute they are accepted (Megatron-LM runs
    such scripts) and move nothing (:func:`shardplan.cost.memory.module_offload_per_token`).

    Raises:
        ConfigError: naming offload_modules (or the conflicting field), the value and the legal ones.
    """
    mods = p.offload_modules
    if not mods:
        return
    legal = [m for m in get_args(OffloadModule) if model is None or model.is_moe or m not in MOE_OFFLOAD_MODULES]
    repeated = sorted({m for m in mods if mods.count(m) > 1})
    if repeated:
        raise ConfigError(f"offload_modules names {', '.join(repeated)} twice; give each module once",
                          field="offload_modules", value=repeated, legal=legal)
    absent = [m for m in mods if m not in legal]
    if absent:
        raise ConfigError(f"offload_modules {', '.join(absent)}: the model has no MoE layers; legal offload_modules: "
                          f"{', '.join(legal)}", field="offload_modules", value=absent, legal=legal)
    if p.offload_activation_layers:
        raise ConfigError(f"offload_modules={','.join(mods)} with offload_activation_layers="
                          f"{p.offload_activation_layers}: whole-layer offloading already moves those layers' saved "
                          "activations (one offload mechanism per run); legal offload_activation_layers: 0, or leave "
                          "--offload-modules out", field="offload_activation_layers",
                          value=p.offload_activation_layers, legal=[0])


def _check_loss_chunks(layout: "Layout", chunks: int) -> None:
    """``FrameworkProfile.loss_chunks`` (``chunks``) must divide a microbatch's local tokens
    (:attr:`Layout.local_tokens`; MaxText asserts that ``num_vocab_tiling`` divides batch x sequence; a chunk
    needs at least one token).

    Raises:
        ConfigError: naming loss_chunks, the local tokens and the legal chunk counts (their divisors up to 64).
    """
    tokens = int(layout.local_tokens)
    if chunks > 1 and tokens % chunks:
        legal = [d for d in divisors(tokens) if d <= 64]
        raise ConfigError(f"loss_chunks={chunks} does not divide the {tokens:,} tokens of a microbatch on one device "
                          f"(seq_len x microbatch_size / cp); legal loss_chunks: {fmt_legal(legal)}",
                          field="loss_chunks", value=chunks, legal=legal)


def _check_remat_offload(p: ParallelConfig, n: int, n_layers: int | None) -> None:
    """MaxText's layer-input offloading: recompute='full', pp=1, N = n_layers.

    Raises:
        ConfigError: the first rule broken, with its legal value.
    """
    if p.recompute != "full":
        raise ConfigError(f"offload_activation_layers={n} is MaxText's decoder_layer_input: offload, which keeps the "
                          f"layer inputs that full recompute saves in host memory; got recompute={p.recompute!r}; legal "
                          "recompute: 'full', or offload_activation_layers=0", field="recompute", value=p.recompute,
                          legal=["full"])
    if p.pp > 1:
        raise ConfigError(f"offload_activation_layers={n} (MaxText layer-input offload) is priced without pipelining; "
                          f"got pp={p.pp}; legal pp: 1, or offload_activation_layers=0", field="pp", value=p.pp,
                          legal=[1])
    if n_layers is not None and n != n_layers:
        raise ConfigError(f"offload_activation_layers={n}: MaxText's decoder_layer_input: offload applies to every "
                          f"layer; legal offload_activation_layers: 0 or {n_layers}", field="offload_activation_layers",
                          value=n, legal=[0, n_layers])


def _check_options(p: ParallelConfig, n_devices: int, fw: FrameworkProfile | None = None) -> None:
    """Device count range and options that need another option (``fw``: the profile, for what the messages offer)."""
    if not 1 <= n_devices <= MAX_DEVICES:
        raise ConfigError(f"devices={n_devices} must be between 1 and {MAX_DEVICES:,}", field="devices",
                          value=n_devices)
    if p.zero3_gather != "per_microbatch" and p.zero_stage != 3:
        # zero_stage=3 is offered only where the profile gathers once per step with this layout (zero3_per_step)
        per_step = fw is None or fw.zero3_per_step == "any" or (fw.zero3_per_step == "with_pp" and p.pp > 1)
        also = ", or zero_stage=3" if per_step and (fw is None or fw.zero_stages is None or 3 in fw.zero_stages) else ""
        raise ConfigError(f"zero3_gather={p.zero3_gather!r} needs zero_stage=3 (got {p.zero_stage}); legal: zero3_gather "
                          f"per_microbatch (the default: leave --zero3-gather out) with zero_stage={p.zero_stage}{also}",
                          field="zero3_gather", value=p.zero3_gather, legal=["per_microbatch"])
    if p.recompute_modules is not None:
        if p.recompute != "selective":
            raise ConfigError(f"recompute_modules={short_repr(','.join(p.recompute_modules))} needs "
                              f"recompute='selective' (got {p.recompute!r}); legal: recompute selective with "
                              f"recompute_modules, or recompute {p.recompute} without them (leave --recompute-modules "
                              "out)", field="recompute_modules", value=list(p.recompute_modules), legal=["selective"])
        repeated = sorted({m for m in p.recompute_modules if p.recompute_modules.count(m) > 1})
        if repeated:
            raise ConfigError(f"recompute_modules names {', '.join(repeated)} twice; give each module once",
                              field="recompute_modules", value=repeated)
    if p.remat_saved is not None:
        if p.recompute != "full":
            raise ConfigError(f"remat_saved={','.join(p.remat_saved)} names what a full recompute keeps and needs "
                              f"recompute='full' (got {p.recompute!r}); legal: recompute full with remat_saved, or "
                              f"recompute {p.recompute} without it (leave --remat-saved out)", field="remat_saved",
                              value=list(p.remat_saved), legal=["full"])
        repeated = sorted({m for m in p.remat_saved if p.remat_saved.count(m) > 1})
        if repeated:
            raise ConfigError(f"remat_saved names {', '.join(repeated)} twice; give each once", field="remat_saved",
                              value=repeated)
    if p.recompute_layers is not None and p.recompute != "full":
        raise ConfigError(f"recompute_layers={p.recompute_layers} chooses how many layers full recompute recomputes and "
                          f"needs recompute='full' (got {p.recompute!r}); legal: recompute full with recompute_layers, "
                          f"or recompute {p.recompute} without it (leave --recompute-layers out)", field="recompute_layers",
                          value=p.recompute_layers, legal=[None])
    if p.moe_dispatcher != "alltoall" and p.ep == 1:
        raise ConfigError(f"moe_dispatcher={p.moe_dispatcher!r} dispatches tokens over the ep group and needs ep > 1 "
                          f"(an MoE model's expert parallelism); legal with ep=1: 'alltoall'", field="moe_dispatcher",
                          value=p.moe_dispatcher, legal=["alltoall"])
    if p.zero_stage == 0 and p.dp_shard not in (None, 1):
        raise ConfigError(f"dp_shard={p.dp_shard} needs zero_stage >= 1 (nothing is sharded with zero_stage=0)",
                          field="dp_shard", value=p.dp_shard)


def _check_framework_extents(p: ParallelConfig, fw: FrameworkProfile, model_is_moe: bool = False) -> None:
    """pipeline_flushes > 1 only where the framework runs one schedule per local batch
    (``FrameworkProfile.local_batch_flushes``); tp > 1 in a MoE model only where it runs that
    (``FrameworkProfile.moe_tensor_parallel``).

    Raises:
        ConfigError: naming the framework and the legal value 1.
    """
    if p.tp > 1 and model_is_moe and not fw.moe_tensor_parallel:
        legal, text = legal_values("tp", [1])
        raise ConfigError(f"tp={p.tp}: the {fw.label} framework runs no tensor parallelism in MoE models (its MoE "
                          f"parallelizer asserts it); legal tp: {text} (shard with ep, FSDP or pp instead)", field="tp",
                          value=p.tp, legal=legal)
    if p.pp > 1 and p.pipeline_flushes > 1 and not fw.local_batch_flushes:
        legal, text = legal_values("pipeline_flushes", [1])
        raise ConfigError(f"pipeline_flushes={p.pipeline_flushes}: the {fw.label} framework runs one pipeline schedule "
                          "over all of a step's microbatches; separate flushes per local batch are "
                          "torch.distributed.pipelining's (--framework torchtitan or automodel); legal pipeline_flushes: "
                          f"{text}", field="pipeline_flushes", value=p.pipeline_flushes, legal=legal)


def _offload_framework(p: ParallelConfig) -> str:
    """The profile that runs ``p``'s activation offload: maxtext under full recompute (its layer-input offload),
    else megatron (--cpu-offloading-num-layers, recompute none)."""
    return "maxtext (every layer, full recompute, pp 1)" if p.recompute == "full" else "megatron (recompute none, pp 1)"


def _selective_note(fw) -> str:
    """The clause naming a profile's selective recompute for an error message ('' when it has none)."""
    if fw.recomputes is not None and "selective" not in fw.recomputes:
        return f" (it has no selective recompute; its recompute policies: {', '.join(fw.recomputes)})"
    return f" (its selective recompute: {fw.selective_recompute})"


def _check_tp_composition(p: ParallelConfig, fw) -> None:
    """What the framework runs beside tensor parallelism (tp > 1): sequence parallelism
    (``FrameworkProfile.sequence_parallel``) and context parallelism (``FrameworkProfile.cp_with_tp``).

    Raises:
        ConfigError: sp with tp > 1 under a profile without sequence parallelism, or cp > 1 with tp > 1 under one
            whose context parallelism runs without tensor parallelism; each names the legal values.
    """
    if p.tp == 1:
        return
    if p.sp and not fw.sequence_parallel:
        legal, text = legal_values("sp", [False])
        raise ConfigError(f"sp=True with tp={p.tp} is not implemented by the {fw.label} framework (its tensor "
                          f"parallelism shards the weights only); legal sp: {text}", field="sp", value=True,
                          legal=legal)
    if p.cp > 1 and not fw.cp_with_tp:
        legal, text = legal_values("tp", [1])
        raise ConfigError(f"cp={p.cp} with tp={p.tp} is not implemented by the {fw.label} framework (its context "
                          f"parallelism runs without tensor parallelism); legal tp with cp={p.cp}: {text} "
                          f"(or cp=1)", field="tp", value=p.tp, legal=legal)


def _check_expert_composition(p: ParallelConfig, fw) -> None:
    """Whether the experts may take a tensor-parallel degree of their own (``FrameworkProfile.expert_tensor_parallel``;
    the expert group's extent is :func:`_check_ep_shard`'s, once dp is known).

    Raises:
        ConfigError: etp other than tp under a profile without it, naming the legal value.
    """
    if p.etp is not None and p.etp != p.tp and not fw.expert_tensor_parallel:
        legal, text = legal_values("etp", [p.tp])
        raise ConfigError(f"etp={p.etp} is not implemented by the {fw.label} framework (its experts are split over "
                          f"the tensor axis as the dense layers are); legal etp: {text} (= tp; or leave --etp out)",
                          field="etp", value=p.etp, legal=legal)


def dp2ep_bounds(p: ParallelConfig) -> tuple[int, int, int]:
    """torchtitan's dp2ep expert group (distributed/parallel_dims.py) of a resolved layout: (low, high, shard) with
    low | ep | high required. The FSDP shard is ``dp_shard`` under ZeRO >= 1 and 1 without FSDP; with etp = tp the
    group spans shard x cp ranks (low = cp), with etp = 1 < tp it borrows the tp ranks too (low = cp x tp,
    high = shard x cp x tp). Used by validation (:func:`_check_ep_shard`) and the torchtitan exporter."""
    shard = (p.dp_shard or p.dp or 1) if p.zero_stage else 1
    borrow = p.tp if p.expert_tp == 1 < p.tp else 1
    return p.cp * borrow, shard * p.cp * borrow, shard


def _check_ep_shard(p: ParallelConfig, fw) -> None:
    """The ranks the framework carves the expert-parallel group from (``FrameworkProfile.expert_group``; dp and
    ``dp_shard`` filled in by then): 'dp' -- ep divides the ZeRO-3 shard group ``dp_shard`` or, below ZeRO-3, dp;
    'dp2ep' -- torchtitan's rule: cp (x tp with etp = 1) divides ep and ep divides shard x cp (x tp), shard =
    ``dp_shard`` under ZeRO >= 1, else 1; 'dp_cp' -- nothing beyond :func:`_check_ep`.

    Raises:
        ConfigError: an ep the rule refuses, naming the group and the legal ep.
    """
    if p.ep == 1 or fw.expert_group == "dp_cp":
        return
    if fw.expert_group == "dp":
        zero3 = p.zero_stage == 3 and p.dp_shard is not None
        shard = (p.dp_shard if zero3 else p.dp) or 1
        if shard % p.ep:
            group = f"the ZeRO-3 shard group of {shard} data-parallel ranks" if zero3 else f"dp={shard}"
            legal, text = legal_values("ep", divisors(shard))
            raise ConfigError(f"ep={p.ep} does not divide {group}: the {fw.label} framework carves the expert group "
                              f"from the data-parallel ranks, not from cp={p.cp}; legal ep: {text}", field="ep",
                              value=p.ep, legal=legal)
        return
    low, high, shard = dp2ep_bounds(p)
    borrow = low // p.cp
    if p.ep % low or high % p.ep:
        legal, text = legal_values("ep", [e for e in divisors(high) if e % low == 0])
        tp_part = " x tp" if borrow > 1 else ""
        raise ConfigError(f"ep={p.ep} is outside the {fw.label} framework's expert group (torchtitan dp2ep: cp{tp_part} = "
                          f"{low} must divide ep, and ep must divide FSDP shard x cp{tp_part} = {high}; shard "
                          f"{shard}{' (no FSDP at ZeRO-0)' if not p.zero_stage else ''}); legal ep: {text}",
                          field="ep", value=p.ep, legal=legal)


def _pipelining_frameworks(p: ParallelConfig, current: str) -> list[str]:
    """Built-in framework profiles other than ``current`` that pipeline (``FrameworkProfile.pipeline_parallel``) with
    ``p.zero_stage`` and ``p.schedule`` (their ``zero_stages``, ``pipeline_zero_stages`` and ``schedules``): where a
    refusal of ZeRO with pipelining sends a user whose stack is not that framework (Llama 3 405B's ZeRO-2-style
    FSDP with PP 16, Dubey et al. 2024 Sec. 3.3.2, is refused by the megatron profile)."""
    from shardplan.presets.frameworks import FRAMEWORKS

    def runs(f) -> bool:
        return (f.pipeline_parallel and f.name not in (current, "jax-runtime")
                and all(allowed is None or value in allowed for value, allowed in (
                    (p.zero_stage, f.zero_stages), (p.zero_stage, f.pipeline_zero_stages), (p.schedule, f.schedules))))
    return [name for name, f in FRAMEWORKS.items() if runs(f)]


def _check_framework_support(p: ParallelConfig, training: TrainingSpec) -> None:
    """A pipelined layout's schedule, the ZeRO stage, the recompute policy, cp, ep and pp must be ones the
    framework profile implements (``schedules``, ``zero_stages``, ``pipeline_zero_stages``, ``recomputes``,
    ``context_parallel``, ``expert_parallel``, ``pipeline_parallel``); every legal list is filtered by
    :func:`legal_values`."""
    fw = training.framework
    _check_param_offload(p, fw)  # first: a ZeRO-stage hint below is no use where parameters cannot be offloaded
    _check_nvme_offload(p, fw)
    _check_framework_recompute(p, fw)
    if p.cp > 1 and fw.context_parallel and p.cp_comm not in fw.cp_comms:
        legal, text = legal_values("cp_comm", fw.cp_comms)
        ours = " and ".join(repr(c) for c in fw.cp_comms)
        raise ConfigError(f"cp_comm={p.cp_comm!r} is not implemented by the {fw.label} framework (its context "
                          f"parallelism: {ours}); legal cp_comm: {text}", field="cp_comm", value=p.cp_comm,
                          legal=legal)
    _check_tp_composition(p, fw)
    for name, on in (("cp", fw.context_parallel), ("ep", fw.expert_parallel), ("pp", fw.pipeline_parallel)):
        if not on and getattr(p, name) > 1:
            how = "" if name == "pp" else " as the planner composes it"
            hint = " (PyTorch FSDP with pipelining or context parallelism: --framework torchtitan)" if (
                fw.name in ("pytorch-fsdp", "llm-foundry") and name in ("pp", "cp")) else ""
            legal, text = legal_values(name, [1])
            raise ConfigError(f"{name}={getattr(p, name)} is not implemented by the {fw.label} framework{how}; "
                              f"legal {name}: {text}{hint}", field=name, value=getattr(p, name), legal=legal)
    ours = fw.schedules
    if p.pp > 1 and ours is not None and p.schedule not in ours:
        chunks = (f" (virtual_stages={p.virtual_stages} asks for it; with {', '.join(ours)} legal virtual_stages: 1)"
                  if p.schedule == "interleaved" and p.virtual_stages > 1 else "")
        # another schedule with interleaving's virtual stages is tried with virtual_stages=1, as the message says
        legal, text = legal_values("schedule", ours, {"virtual_stages": 1} if chunks else None)
        raise ConfigError(f"schedule={p.schedule!r} is not implemented by the {fw.label} framework{chunks}; "
                          f"legal schedule: {text}", field="schedule", value=p.schedule, legal=legal)
    pzs = fw.pipeline_zero_stages
    if p.pp > 1 and pzs is not None and p.zero_stage not in pzs:
        legal, text = legal_values("zero_stage", pzs)
        others = _pipelining_frameworks(p, fw.name)
        elsewhere = f"; --framework {', '.join(others)} run{'s' if len(others) == 1 else ''} it" if others else ""
        raise ConfigError(f"zero_stage={p.zero_stage} with pp={p.pp} is not implemented by the {fw.label} framework; "
                          f"legal zero_stage with pipelining: {text} (or pp=1){elsewhere}", field="zero_stage",
                          value=p.zero_stage, legal=legal)
    zs = fw.zero_stages
    if zs is not None and p.zero_stage not in zs:
        legal, text = legal_values("zero_stage", zs)
        raise ConfigError(f"zero_stage={p.zero_stage} is not implemented by the {fw.label} framework; "
                          f"legal zero_stage: {text}", field="zero_stage", value=p.zero_stage, legal=legal)
    _check_zero3_gather(p, fw)
    _check_offload_support(p, fw)
    _check_fp16_support(p, training)
    _check_weight_sharding_axes(p, fw)
    _check_tp_support(p, fw)


def _check_zero3_gather(p: ParallelConfig, fw) -> None:
    """A once-per-step ZeRO-3 gather only where the framework keeps gathered parameters across microbatches
    (``FrameworkProfile.zero3_per_step``).

    Raises:
        ConfigError: ``zero3_gather='per_step'`` under a profile whose value is 'never', or 'with_pp' with pp = 1.
    """
    if p.zero_stage != 3 or p.zero3_gather != "per_step" or fw.zero3_per_step == "any":
        return
    if fw.zero3_per_step == "with_pp" and p.pp > 1:
        return
    when = " without pipelining (it keeps the gathered parameters only when pp > 1)" if (
        fw.zero3_per_step == "with_pp") else " (it re-gathers the parameters for every microbatch)"
    legal, text = legal_values("zero3_gather", ["per_microbatch"])
    raise ConfigError(f"zero3_gather='per_step' is not implemented by the {fw.label} framework{when}; legal "
                      f"zero3_gather: {text}", field="zero3_gather", value="per_step", legal=legal)


def fp16_framework_error(training: TrainingSpec, hardware=None) -> ConfigError | None:
    """The error for an fp16 policy under a framework profile that does not train in fp16
    (``FrameworkProfile.fp16_training``; torchtitan's mixed_precision_param is bfloat16 or float32), or None. The legal
    precisions named are the bf16 and fp32 policies, only those ``hardware`` (a HardwareSpec, where known) runs: on a
    V100 fp32 alone, so that every legal value passes the checks after it."""
    prec, fw = training.precision, training.framework
    if prec.compute_dtype != "fp16" or fw.fp16_training:
        return None
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.specs.training import PRECISION_POLICIES
    legal = [k for k, v in PRECISION_POLICIES.items() if v.compute_dtype in ("bf16", "fp32")
             and (hardware is None or hardware.runs_dtype(v.compute_dtype))]
    where = f" on {hardware.name}" if hardware is not None else ""
    others = ", ".join(k for k, f in FRAMEWORKS.items() if f.fp16_training)
    return ConfigError(f"precision {prec.name} is not implemented by the {fw.label} framework (it trains in bf16 or "
                       f"fp32 only); legal precision{where}: {', '.join(legal)}, or a framework that trains in fp16 "
                       f"({others})", field="precision", value=prec.name, legal=legal)


def _check_fp16_support(p: ParallelConfig, training: TrainingSpec) -> None:
    """An fp16 policy needs a framework that trains in fp16 (:func:`fp16_framework_error`). DeepSpeed's engine (the
    profiles with ``zero0_bf16_optimizer``: its dtype rules) has no optimizer for an fp16 model with fp32 gradient
    accumulation without ZeRO (runtime/engine.py ``_do_optimizer_sanity_check``: "unsupported mix of model dtype and
    gradient accumulation type"); fp16 runs there accumulate in fp16 (fp16-mixed).

    Raises:
        ConfigError: an fp16 policy under a profile without fp16 (naming the precisions it runs and the profiles that
            train in fp16); fp16-mixed-fp32-grads at zero_stage 0 under a DeepSpeed profile, naming fp16-mixed."""
    err = fp16_framework_error(training)
    if err is not None:
        raise err
    prec, fw = training.precision, training.framework
    if (fw.zero0_bf16_optimizer and prec.compute_dtype == "fp16" and prec.grad_bytes > prec.param_bytes
            and p.zero_stage == 0):
        raise ConfigError(f"precision {prec.name} at zero_stage=0 is not implemented by the {fw.label} framework: "
                          "DeepSpeed's engine has no optimizer for an fp16 model with fp32 gradient accumulation "
                          "without ZeRO (engine.py _do_optimizer_sanity_check); legal precision: fp16-mixed (or "
                          "bf16-mixed-fp32-grads on hardware with bf16)", field="precision", value=prec.name,
                          legal=["fp16-mixed"])


def _check_offload_support(p: ParallelConfig, fw: FrameworkProfile) -> None:
    """An offloaded optimizer needs a ZeRO stage the framework offloads with (``FrameworkProfile.offload_zero_stages``);
    offloaded parameters are checked apart, before the framework's other rules (:func:`_check_param_offload`).

    Raises:
        ConfigError: e.g. DeepSpeed with zero_stage=0, naming the legal stages and offload_optimizer off."""
    stages = fw.offload_zero_stages
    if p.offload_optimizer and stages is not None and p.zero_stage not in stages:
        legal, text = legal_values("zero_stage", stages)
        raise ConfigError(f"offload_optimizer with zero_stage={p.zero_stage} is not implemented by the {fw.label} "
                          f"framework; legal zero_stage with offload_optimizer: {text} (or offload_optimizer off)",
                          field="zero_stage", value=p.zero_stage, legal=legal)


def _check_nvme_offload(p: ParallelConfig, fw: FrameworkProfile) -> None:
    """``nvme_offload`` needs something offloaded and a framework that offloads to NVMe: DeepSpeed's ZeRO-Infinity
    (offload device 'nvme'; the profiles whose ``param_offload`` is 'independent'); PyTorch FSDP's CPU offload and
    Megatron-LM's optimizer offload reach host memory only.

    Raises:
        ConfigError: naming nvme_offload (legal off, or the frameworks that have it) or offload_optimizer."""
    if not p.nvme_offload:
        return
    if fw.param_offload != "independent":
        from shardplan.presets.frameworks import FRAMEWORKS
        with_it = sorted(n for n, f in FRAMEWORKS.items() if f.param_offload == "independent")
        raise ConfigError(f"nvme_offload is not implemented by the {fw.label} framework (it offloads to host memory "
                          f"only); legal: nvme_offload off, or a framework with ZeRO-Infinity's NVMe offload: "
                          f"{', '.join(with_it)}", field="nvme_offload", value=True, legal=[False])
    if not (p.offload_optimizer or p.offload_params):
        raise ConfigError("nvme_offload with nothing offloaded: it says where offloaded state lives; legal: "
                          "offload_optimizer and/or offload_params on, or nvme_offload off", field="offload_optimizer",
                          value=False, legal=[True])


def _check_param_offload(p: ParallelConfig, fw: FrameworkProfile) -> None:
    """``offload_params`` needs, in this order: a framework with parameter offload (``FrameworkProfile.param_offload``;
    a ZeRO-3 hint is no use where the framework offloads no parameters), ZeRO-3 (DeepSpeed's offload_param is "valid
    only with stage 3"; FSDP offloads its shards), and under PyTorch FSDP's CPU offload the optimizer offloaded too.

    Raises:
        ConfigError: naming offload_params (the frameworks that have it), zero_stage (legal 3) or offload_optimizer
            (legal True)."""
    if not p.offload_params:
        return
    if fw.param_offload == "none":
        from shardplan.presets.frameworks import FRAMEWORKS
        with_it = sorted(n for n, f in FRAMEWORKS.items() if f.param_offload != "none")
        raise ConfigError(f"offload_params is not implemented by the {fw.label} framework; legal: offload_params off, "
                          f"or a framework that offloads parameters: {', '.join(with_it)}", field="offload_params",
                          value=True, legal=[False])
    if p.zero_stage != 3:
        raise ConfigError(f"offload_params with zero_stage={p.zero_stage}: parameters are offloaded as ZeRO-3 shards "
                          "(DeepSpeed offload_param is 'valid only with stage 3'; FSDP CPU offload shards them); legal "
                          "zero_stage with offload_params: 3 (or offload_params off)", field="zero_stage",
                          value=p.zero_stage, legal=[3])
    if fw.param_offload == "with_optimizer" and not p.offload_optimizer:
        raise ConfigError(f"offload_params without offload_optimizer under the {fw.label} framework: PyTorch FSDP's CPU "
                          "offload moves the parameter shards, their gradients and the optimizer step to the host "
                          "together; legal: offload_optimizer on with offload_params", field="offload_optimizer",
                          value=False, legal=[True])


def _check_framework_recompute(p: ParallelConfig, fw: FrameworkProfile) -> None:
    """The recompute options (recompute_modules, remat_saved, recompute_layers, activation offload, the policy) must
    be ones the framework profile has.

    Raises:
        ConfigError: naming the option, its value and what is legal (leave the option out, or another framework).
    """
    if p.recompute_modules is not None and (not fw.module_recompute or fw.selective_recompute != "attention"):
        raise ConfigError(f"recompute_modules is Megatron-LM's --recompute-modules, which the {fw.label} framework "
                          f"does not have{_selective_note(fw)}; legal "
                          f"recompute_modules: not given (leave --recompute-modules out), or --framework megatron",
                          field="recompute_modules",
                          value=list(p.recompute_modules), legal=[None])
    if p.remat_saved is not None and not fw.named_remat:
        raise ConfigError(f"remat_saved={','.join(p.remat_saved)} is MaxText's named remat policy (matmul outputs a "
                          f"full recompute keeps), which the {fw.label} framework does not have; legal remat_saved: "
                          "not given (leave --remat-saved out), or --framework maxtext or paxml", field="remat_saved", value=list(p.remat_saved),
                          legal=[None])
    if p.recompute_layers is not None and not fw.module_recompute:
        raise ConfigError(f"recompute_layers={p.recompute_layers} is Megatron-LM's --recompute-method block "
                          f"--recompute-num-layers, which the {fw.label} framework does not have; legal recompute_layers: "
                          "not given (leave --recompute-layers out), or --framework megatron", field="recompute_layers",
                          value=p.recompute_layers,
                          legal=[None])
    if p.offload_activation_layers and not fw.activation_offload:
        raise ConfigError(f"offload_activation_layers={p.offload_activation_layers} is Megatron-LM's "
                          f"--cpu-offloading-num-layers, which the {fw.label} framework does not have; legal "
                          f"offload_activation_layers: 0, or --framework {_offload_framework(p)}",
                          field="offload_activation_layers",
                          value=p.offload_activation_layers, legal=[0])
    if p.offload_modules and fw.activation_offload is not True:
        raise ConfigError(f"offload_modules={','.join(p.offload_modules)} is Megatron-core's fine-grained activation "
                          f"offloading (--offload-modules), which the {fw.label} framework does not have; legal "
                          "offload_modules: not given (leave --offload-modules out), or --framework megatron",
                          field="offload_modules", value=list(p.offload_modules), legal=[None])
    if fw.recomputes is not None and p.recompute not in fw.recomputes:
        legal, text = legal_values("recompute", fw.recomputes)
        raise ConfigError(f"recompute={p.recompute!r} is not implemented by the {fw.label} framework; legal "
                          f"recompute: {text}", field="recompute", value=p.recompute, legal=legal)


def _check_tp_support(p: ParallelConfig, fw) -> None:
    """TP communication overlap only where the profile runs it (``FrameworkProfile.tp_overlap``), tp > 1 with sp
    where its TP always shards the sequence (``tp_requires_sp``).

    Raises:
        ConfigError: naming the field, its value and the legal value.
    """
    if p.tp_overlap and not fw.tp_overlap:
        hint = " (its async TP runs under torch.compile: --framework torchtitan-compile)" if "torchtitan" in fw.name \
            else ""
        legal, text = legal_values("tp_overlap", [False])
        raise ConfigError(f"tp_overlap=True is not implemented by the {fw.label} framework{hint}; legal tp_overlap: "
                          f"{'false (--no-tp-overlap)' if legal else text}", field="tp_overlap", value=True, legal=legal)
    if fw.tp_requires_sp and p.tp > 1 and not p.sp:
        legal, text = legal_values("sp", [True])
        raise ConfigError(f"tp={p.tp} without sequence parallelism: the {fw.label} framework's tensor parallelism "
                          "always shards the activations between the blocks tp ways (the planner's sp); legal sp: "
                          f"{'true (--sp)' if legal else text}", field="sp", value=False, legal=legal)


def _check_weight_sharding_axes(p: ParallelConfig, fw) -> None:
    """cp / ep > 1 on an axis of ``FrameworkProfile.weight_sharding_axes`` needs a weight-sharding ZeRO stage
    (2 or 3, among the profile's ``zero_stages``).

    Raises:
        ConfigError: naming the axis, the ZeRO stage and the legal stages.
    """
    for axis in fw.weight_sharding_axes:
        degree = getattr(p, axis)
        sharding = [z for z in (fw.zero_stages or (0, 1, 2, 3)) if z >= 2]
        if degree > 1 and p.zero_stage not in sharding:
            legal, text = legal_values("zero_stage", sharding)
            raise ConfigError(f"{axis}={degree} with zero_stage={p.zero_stage}: the {fw.label} framework shards the "
                              f"weights over the {axis} axis too, so the run is ZeRO-{'/'.join(map(str, sharding))}; "
                              f"legal zero_stage: {text} (or {axis}=1)", field="zero_stage",
                              value=p.zero_stage, legal=legal)


def _resolve_dp(p: ParallelConfig, model: ModelSpec, n_devices: int,
                training: TrainingSpec | None = None) -> ParallelConfig:
    """Fill in dp (devices / (tp pp cp)) and the ZeRO shard group dp_shard, checking both."""
    if n_devices % p.tp:
        legal, text = legal_values("tp", [t for t in legal_tp(model, p.kv_replication) if n_devices % t == 0])
        raise ConfigError(f"tp={p.tp} does not divide devices={n_devices}; legal tp: {text}",
                          field="tp", value=p.tp, legal=legal)
    model_par = p.tp * p.pp * p.cp
    if p.dp is None:
        if n_devices % model_par:
            _raise_no_dp(p, model, n_devices, training)
        p = p.model_copy(update={"dp": n_devices // model_par})
    total = p.dp * model_par
    if total != n_devices:
        legal, text = legal_values("dp", [n_devices // model_par] if n_devices % model_par == 0 else [])
        raise ConfigError(
            f"dp*tp*pp*cp = {p.dp}*{p.tp}*{p.pp}*{p.cp} = {total} devices, but devices={n_devices}; "
            f"legal dp for these degrees: {text}", field="dp", value=p.dp, legal=legal)
    # ZeRO shard group (HSDP: replicate x shard)
    if p.zero_stage == 0:
        return p.model_copy(update={"dp_shard": 1})
    shard = p.dp if p.dp_shard is None else p.dp_shard
    if p.dp % shard:
        legal, text = legal_values("dp_shard", divisors(p.dp))
        raise ConfigError(f"dp_shard={shard} does not divide dp={p.dp}; legal dp_shard: {text}", field="dp_shard",
                          value=shard, legal=legal)
    return p.model_copy(update={"dp_shard": shard})


def _raise_no_dp(p: ParallelConfig, model: ModelSpec, n_devices: int, training: TrainingSpec | None) -> None:
    """tp x pp x cp does not divide the devices (dp derived): name the legal cp where tp x cp is what does not
    divide them, else the legal pp.

    Raises:
        ConfigError: always.
    """
    model_par = p.tp * p.pp * p.cp
    if n_devices % (p.tp * p.cp):
        legal, text = legal_values("cp", [c for c in divisors(n_devices // p.tp) if (n_devices // p.tp) % (c * p.pp) == 0
                                          and (training is None or (c == 1 or training.framework.context_parallel)
                                               and training.seq_len % seq_len_divisor(
                                                   c, training.causal, training.framework.cp_load_balance,
                                                   p.cp_comm if p.cp_comm in training.framework.cp_comms
                                                   else training.framework.cp_comms[0]) == 0)])
        raise ConfigError(
            f"tp*pp*cp = {p.tp}*{p.pp}*{p.cp} = {model_par} does not divide devices={n_devices}, so no dp "
            f"works; legal cp for tp={p.tp}, pp={p.pp} on {n_devices} devices: {text}",
            field="cp", value=p.cp, legal=legal)
    others = n_devices // (p.tp * p.cp)
    # with ep > 1 a pp must also leave dp x cp = devices / (tp pp) a multiple of ep (the expert groups tile the data-
    # parallel ranks; new-user pass 56: pp 8 and 16 were offered beside ep 8 on 32 devices, then refused)
    ok = [q for q in divisors(others) if q <= model.n_layers and (n_devices // (p.tp * q)) % max(1, p.ep) == 0]
    legal, text = legal_values("pp", ok)
    with_ep = f", ep={p.ep}" if p.ep > 1 else ""
    raise ConfigError(
        f"tp*pp*cp = {p.tp}*{p.pp}*{p.cp} = {model_par} does not divide devices={n_devices}, so no dp "
        f"works; legal pp for tp={p.tp}, cp={p.cp}{with_ep} on {n_devices} devices: {text}",
        field="pp", value=p.pp, legal=legal)


def check_positions(model: ModelSpec, training: TrainingSpec) -> None:
    """A model with a learned position table (GPT-2, BLOOM-style ``position='learned'``) has one row per
    position: a longer sequence has no embedding for its later tokens.

    Raises:
        ConfigError: naming seq_len, the table's size and the legal range.
    """
    rows = model.max_position_embeddings
    if model.position == "learned" and training.seq_len > rows:
        raise ConfigError(f"seq_len={training.seq_len:,} is longer than {model.name}'s learned position table of "
                          f"{rows:,} rows (max_position_embeddings); legal seq_len: 1 to {rows:,}, or a model with a "
                          f"longer table (a model YAML of 'base: {model.name}' and 'max_position_embeddings: "
                          f"{training.seq_len}' as --model)", field="seq_len", value=training.seq_len, legal=[1, rows])


def _check_sequence(p: ParallelConfig, training: TrainingSpec, n_devices: int) -> None:
    """cp needs a blockwise kernel and seq_len divisible by its divisor; sp needs seq_len / cp
    divisible by tp."""
    s = training.seq_len
    fused_only = p.cp_comm == "ring" or training.framework.cp_a2a_fused_only
    if p.cp > 1 and fused_only and training.attention != "flash":
        legal, text = legal_values("cp", [1])
        ulysses = (" or cp_comm='a2a' (DeepSpeed-Ulysses: whole-sequence attention per head shard)"
                   if "a2a" in training.framework.cp_comms and not training.framework.cp_a2a_fused_only else
                   f" (the {training.framework.label} framework's a2a runs through Transformer Engine, whose context "
                   "parallelism needs a fused kernel too)" if p.cp_comm == "a2a" else "")
        raise ConfigError(f"cp={p.cp} needs a blockwise (flash) attention kernel: ring attention merges partial "
                          f"softmaxes (Liu et al. 2023); attention={training.attention!r}; legal cp: {text}{ulysses}",
                          field="cp", value=p.cp, legal=legal)
    balanced = training.framework.cp_load_balance
    need = seq_len_divisor(p.cp, training.causal, balanced, p.cp_comm)
    if s % need:
        legal, text = legal_values("cp", [c for c in divisors(n_devices) if s % seq_len_divisor(
            c, training.causal, balanced, p.cp_comm) == 0][:12])
        raise ConfigError(
            f"cp={p.cp} needs seq_len divisible by {'2*cp' if need == 2 * p.cp else 'cp'} = {need} "
            f"({'load-balanced causal attention' if need == 2 * p.cp else 'a whole chunk per rank'}), but "
            f"seq_len={s}; legal cp: {text}", field="cp", value=p.cp, legal=legal)
    if p.sp and (s // p.cp) % p.tp:
        off, off_text = legal_values("sp", [False])
        _, tp_text = legal_values("tp", [t for t in divisors(s // p.cp) if n_devices % t == 0 and t > 1][:12])
        raise ConfigError(f"sp=True shards the sequence over tp={p.tp}, but seq_len/cp = {s // p.cp} "
                          f"is not divisible by tp; legal: sp=False{'' if off else f' ({off_text})'}, or tp dividing "
                          f"{s // p.cp} on these devices ({tp_text})", field="sp", value=True,
                          legal=off)


def a2a_kv_heads(model: ModelSpec, tp: int, cp: int) -> int:
    """K (or V) heads per tp rank that cp_comm='a2a' sends through its AllToAll: the rank's ``g_r = max(g / tp, 1)``
    KV heads, or cp of them when ``g_r`` < cp, as DeepSpeed-Ulysses replicates KV heads to the sequence-parallel
    degree before the AllToAll (deepspeed/runtime/sequence_parallel/ulysses_sp.py UlyssesSPAttentionHF:
    ``kv_replication_factor = world_size // kv_head_count``, ``repeat_interleave``), one per rank after it."""
    return max(model.kv_heads_per_rank(tp), cp)


def a2a_cp_options(model: ModelSpec, tp: int, replicates_kv: bool) -> list[int]:
    """The cp degrees cp_comm='a2a' can split a tp rank's heads over: divisors of its ``n_heads / tp`` query heads
    that divide its :meth:`~shardplan.specs.model.ModelSpec.kv_heads_per_rank` KV heads or, with ``replicates_kv``
    (DeepSpeed-Ulysses replicates KV heads up to cp, UlyssesSPAttentionHF), are multiples of them."""
    g_r = model.kv_heads_per_rank(tp)
    return [c for c in divisors(model.n_heads // tp) if g_r % c == 0 or (replicates_kv and c % g_r == 0)]


def _check_cp_heads(p: ParallelConfig, model: ModelSpec, fw: FrameworkProfile) -> None:
    """cp_comm='a2a' splits the attention heads over cp: the rank's query heads ``n_heads / tp`` must divide by cp,
    and its KV heads ``max(g / tp, 1)`` must divide by cp or, where the framework replicates them
    (``FrameworkProfile.cp_a2a_replicates_kv``), divide cp (DeepSpeed UlyssesSPAttentionHF's two checks,
    :func:`a2a_kv_heads`; Transformer Engine's a2a asserts both divisible).

    Raises:
        ConfigError: naming cp, the head counts and the legal cp.
    """
    if p.cp == 1 or p.cp_comm != "a2a":
        return
    q_r, g_r = model.n_heads // p.tp, model.kv_heads_per_rank(p.tp)
    rep = fw.cp_a2a_replicates_kv
    ok = a2a_cp_options(model, p.tp, rep)
    if p.cp not in ok:
        legal, text = legal_values("cp", ok)
        kv = ("divide the KV heads or be a multiple of them (DeepSpeed-Ulysses replicates them)" if rep else
              f"divide the KV heads too (the {fw.label} framework's a2a, Transformer Engine's, does not replicate "
              "them)")
        raise ConfigError(f"cp={p.cp} with cp_comm='a2a' splits each tp rank's {q_r} query heads and {g_r} KV "
                          f"heads (n_heads={model.n_heads}, n_kv_heads={model.kv_heads}, tp={p.tp}) over cp: cp must "
                          f"divide the query heads, and {kv}; legal cp: {text}", field="cp", value=p.cp, legal=legal)


def _check_etp(p: ParallelConfig, model: ModelSpec) -> None:
    """etp != tp needs an MoE model, etp dividing expert_ffn_dim, ep x etp dividing tp x dp x cp, and
    sequence parallelism when tp > 1 (Megatron-LM requires it for MoE with tp: each tp rank dispatches its own
    sequence shard)."""
    if p.etp is None or p.etp == p.tp:
        return
    if not model.is_moe:
        legal, text = legal_values("etp", [p.tp])
        raise ConfigError(f"etp={p.etp} needs a mixture-of-experts model; {model.name} is dense; legal etp: "
                          f"{text} (= tp) or empty", field="etp", value=p.etp, legal=legal)
    ranks = p.tp * p.dp * p.cp
    if model.expert_ffn % p.etp or ranks % (p.etp * p.ep):
        arithmetic = [e for e in divisors(model.expert_ffn) if ranks % (e * p.ep) == 0]
        legal, text = legal_values("etp", arithmetic)
        with_sp = legal_values("etp", [e for e in arithmetic if e not in legal], {"sp": True})[0] if (
            p.tp > 1 and not p.sp) else []
        need_sp = f" (with sp=True, --sp, also etp {fmt_legal(with_sp)})" if with_sp else ""
        raise ConfigError(f"etp={p.etp} must divide expert_ffn_dim={model.expert_ffn}, and ep x etp = "
                          f"{p.ep * p.etp} must divide tp*dp*cp={ranks}; legal etp: {text}{need_sp}",
                          field="etp", value=p.etp, legal=legal)
    if p.tp > 1 and not p.sp:
        _, same = legal_values("etp", [p.tp])
        why = failure_with("sp", True)
        if why:  # sp=True fails a later check too (e.g. a framework without etp != tp): name etp alone
            raise ConfigError(f"etp={p.etp} != tp={p.tp} needs sp=True, and with sp=True: {why}; legal etp: {same} "
                              f"(= tp; or leave --etp out)", field="etp", value=p.etp, legal=[p.tp])
        raise ConfigError(f"etp={p.etp} != tp={p.tp} needs sp=True (each tp rank dispatches its sequence shard to the "
                          f"experts); legal: sp=True (--sp), or without sp legal etp: {same} (= tp; or leave --etp "
                          f"out)", field="sp", value=False, legal=[True])
    if model.n_shared_experts and (model.n_shared_experts * model.expert_ffn) % p.tp:
        raise ConfigError(f"tp={p.tp} does not divide the shared experts' width "
                          f"{model.n_shared_experts * model.expert_ffn}", field="tp", value=p.tp)


def _check_ep(p: ParallelConfig, model: ModelSpec) -> None:
    """ep needs an MoE model and must divide n_experts and the ranks of a stage (tp x dp x cp) whatever etp is
    (checked before etp, so an ep too large for the devices is named first); then etp (:func:`_check_etp`);
    then ep must divide dp x cp (tp x dp x cp / etp with an expert tensor-parallel degree etp != tp: the ep group
    may fold tp ranks)."""
    if p.ep > 1 and not model.is_moe:
        legal, text = legal_values("ep", [1])
        raise ConfigError(f"ep={p.ep} needs a mixture-of-experts model; {model.name} is dense; legal ep: {text}",
                          field="ep", value=p.ep, legal=legal)
    ranks = p.tp * p.dp * p.cp
    if p.ep > 1 and (model.n_experts % p.ep or ranks % p.ep):
        legal, text = legal_values("ep", [e for e in divisors(model.n_experts) if ranks % e == 0])
        raise ConfigError(f"ep={p.ep} must divide n_experts={model.n_experts} and the {ranks} ranks of a pipeline "
                          f"stage (tp*dp*cp); legal ep: {text}", field="ep", value=p.ep, legal=legal)
    _check_etp(p, model)
    if p.ep == 1:
        return
    pool = p.dp * p.cp * p.tp // p.expert_tp  # an integer: _check_etp
    if pool % p.ep:
        what = "dp*cp" if p.expert_tp == p.tp else "tp*dp*cp/etp"
        legal, text = legal_values("ep", [e for e in divisors(model.n_experts) if pool % e == 0])
        raise ConfigError(f"ep={p.ep} must divide n_experts={model.n_experts} and {what}={pool}; "
                          f"legal ep: {text}", field="ep", value=p.ep, legal=legal)


def max_moe_imbalance(p: ParallelConfig, model: ModelSpec) -> float:
    """The largest load a dropless expert rank can carry over the mean (``TrainingSpec.moe_imbalance``): a rank holds
    E / ep experts and a token sends each of its top_k copies to a distinct expert, so at most min(top_k, E / ep) of
    a token's copies land on one rank, against top_k / ep on average: ep x min(top_k, E / ep) / top_k (1 without
    expert parallelism: the one rank holds every expert)."""
    if not model.is_moe or p.ep == 1:
        return 1.0
    return p.ep * min(model.top_k, model.n_experts // p.ep) / model.top_k


def check_moe_imbalance(p: ParallelConfig, model: ModelSpec, training: TrainingSpec) -> None:
    """Refuse a dropless ``moe_imbalance`` above what routing can produce on a given layout (:func:`max_moe_imbalance`;
    ``estimate``'s layout: a search prices every ep with the imbalance held to its bound,
    :func:`shardplan.cost.step.routable`): more than 1 without expert parallelism (one rank holds every expert), more
    than the bound with it; on a dense model the routing note says the flag does nothing.

    Raises:
        ConfigError: naming the value, the bound and its arithmetic.
    """
    if model.is_moe and model.n_experts % p.ep:  # validate names the ep the experts allow (ep=16 on Mixtral's 8
        return                                    # experts was "legal moe_imbalance: 1 .. 0")
    bound = max_moe_imbalance(p, model)
    if model.is_moe and training.moe_capacity_factor is None and training.moe_imbalance > bound + 1e-9:
        if p.ep == 1:
            raise ConfigError(f"moe_imbalance={training.moe_imbalance:g} with ep=1: one rank holds all "
                              f"{model.n_experts} experts, so its load is the mean whatever the routing; legal "
                              "moe_imbalance: 1, or an expert-parallel layout (--ep)", field="moe_imbalance",
                              value=training.moe_imbalance, legal=[1.0])
        raise ConfigError(f"moe_imbalance={training.moe_imbalance:g} exceeds what routing can put on one of the ep={p.ep} "
                          f"expert ranks: each holds {model.n_experts // p.ep} of {model.n_experts} experts, so at "
                          f"most min(top_k={model.top_k}, {model.n_experts // p.ep}) of a token's {model.top_k} copies "
                          f"against {model.top_k}/{p.ep} on average: {bound:g}; legal moe_imbalance: 1 .. {bound:g}",
                          field="moe_imbalance", value=training.moe_imbalance, legal=[1.0, bound])


def _check_a2a_overlap(p: ParallelConfig, model: ModelSpec, training: TrainingSpec) -> None:
    """Combined 1F1B pairs the forward of one microbatch with the backward of another: it needs expert
    AllToAlls to hide (an MoE model, ep > 1), with pipelining the interleaved schedule, whose steady
    state it rewrites (Megatron-Bridge training/comm_overlap.py: "If PP is used, VPP must be set";
    Megatron-Core pipeline_parallel/combined_1f1b.py ``combined_1f1b_schedule_for_interleaved_pipelining``),
    a 16-bit base precision and no full or MoE-layer recomputation (Megatron-Core's asserts).

    Raises:
        ConfigError: naming the field and what it needs.
    """
    if not model.is_moe:
        raise ConfigError(f"moe_a2a_overlap=True hides expert-parallel AllToAlls, but {model.name} is dense (no experts); "
                          "legal: moe_a2a_overlap=False", field="moe_a2a_overlap", value=True, legal=[False])
    if p.ep == 1:
        raise ConfigError("moe_a2a_overlap=True hides expert-parallel AllToAlls, but ep=1 has none; legal: "
                          "moe_a2a_overlap=False, or ep > 1", field="moe_a2a_overlap", value=True, legal=[False])
    if p.moe_dispatcher == "allgather":  # Megatron-Core: the overlap runs with the alltoall and flex dispatchers
        raise ConfigError("moe_a2a_overlap=True overlaps AllToAll dispatch; moe_dispatcher='allgather' has none; legal "
                          "moe_dispatcher: alltoall, deepep (or moe_a2a_overlap=False)", field="moe_dispatcher",
                          value="allgather", legal=["alltoall", "deepep"])
    if p.pp > 1 and p.schedule not in ("interleaved", "dualpipe"):
        raise ConfigError(f"moe_a2a_overlap=True with pp={p.pp} needs schedule='interleaved' (Megatron-Core's Combined "
                          f"1F1B runs with virtual pipeline stages only); legal: schedule='interleaved' (or 'dualpipe', which overlaps "
                          "them itself), or moe_a2a_overlap=False", field="moe_a2a_overlap", value=True,
                          legal=["interleaved", "dualpipe"])
    # Megatron-Core transformer_config.py asserts: "disable full recomputation when enabling
    # overlap_moe_expert_parallel_comm", and no recomputation of the whole MoE layer (its dispatch is split out)
    if p.recompute == "full" or (p.recompute == "selective" and "moe" in (p.recompute_modules or ())):
        what = "recompute='full'" if p.recompute == "full" else "recompute_modules with 'moe'"
        raise ConfigError(f"moe_a2a_overlap=True cannot run with {what} (Megatron-Core refuses it: the overlapped "
                          "schedule splits the MoE layer's dispatch out of the recomputed block); legal: recompute='none' "
                          "or 'selective' without 'moe', or moe_a2a_overlap=False", field="moe_a2a_overlap", value=True,
                          legal=["none", "selective"])
    if training.precision.name == "fp32":  # fp8 recipes keep a bf16 base
        raise ConfigError("moe_a2a_overlap=True needs a 16-bit base precision (Megatron-Core asserts bf16 or fp16); "
                          "legal precision: bf16-mixed, fp8-mixed, fp8-params, or moe_a2a_overlap=False",
                          field="moe_a2a_overlap", value=True, legal=["bf16-mixed", "fp8-mixed", "fp8-params"])


def _microbatch_sizes(p: ParallelConfig, global_batch: int) -> list[int]:
    """Microbatch sizes that split ``global_batch`` over p.dp ranks into whole microbatches, a multiple of
    ``pipeline_flushes`` of them, and per flush a multiple of pp under the interleaved schedule (Megatron-LM's
    interleaved schedule asserts it); [] when dp does not divide the batch."""
    if global_batch % p.dp:
        return []
    per_rank = global_batch // p.dp
    interleaved = p.pp > 1 and p.schedule == "interleaved"
    dual = p.pp > 1 and p.schedule == "dualpipe"
    f = p.pipeline_flushes if p.pp > 1 else 1
    return [b for b in divisors(per_rank)
            if (per_rank // b) % f == 0 and (not interleaved or (per_rank // b // f) % p.pp == 0)
            and (not dual or dualpipe_microbatches_ok(per_rank // b // f, p.pp))]


def dualpipe_microbatches_ok(m: int, pp: int) -> bool:
    """DualPipe runs ``m`` microbatches per flush on ``pp`` ranks when m is even and at least 2 pp (deepseek-ai/DualPipe
    ``dualpipe.py`` ``step``: ``num_chunks % 2 == 0 and num_chunks >= num_ranks * 2``)."""
    return m % 2 == 0 and m >= 2 * pp


def _passes(p: ParallelConfig, change: dict, model: ModelSpec, training: TrainingSpec, n: int) -> bool:
    """Whether ``p`` with ``change`` and data parallelism folded into it (dp 1) passes :func:`validate` on ``n``
    devices: an alternative an error suggests must itself be legal."""
    try:
        with quiet_legal_values():
            validate(p.model_copy(update={**change, "dp": None, "dp_shard": None}), model, training, n)
    except ConfigError:
        return False
    return True


def _batch_error(p: ParallelConfig, model: ModelSpec, training: TrainingSpec) -> ConfigError:
    """The error for a global batch that dp x microbatch_size does not divide, with the
    alternatives that keep the batch (shard the sequence or the heads instead)."""
    B, s, per = training.global_batch_size, training.seq_len, p.dp * p.microbatch_size
    interleaved = p.pp > 1 and p.schedule == "interleaved"
    alts = []
    total_seq = p.dp  # devices that currently hold distinct sequences
    # moving dp into cp or tp leaves dp = 1: the batch must then split into whole microbatches (a multiple of pp
    # of them under the interleaved schedule)
    f = p.pipeline_flushes if p.pp > 1 else 1  # each flush runs the same number of microbatches
    unit = (p.pp if interleaved else 1) * f  # microbatches per step must be a multiple of this
    regroup = B % p.microbatch_size == 0 and (B // p.microbatch_size) % unit == 0
    n = p.dp * p.tp * p.pp * p.cp
    if p.dp > 1 and regroup and s % (2 * total_seq) == 0 and _passes(p, {"cp": p.cp * total_seq}, model, training, n):
        alts.append(f"shard the sequence instead (cp={p.cp * total_seq}: {s}/{total_seq} = {s // total_seq} tokens "
                    f"per device)")
    t = p.tp * total_seq
    if (p.dp > 1 and regroup and model.n_heads % t == 0 and model.kv_heads % t == 0
            and _passes(p, {"tp": t}, model, training, n)):
        alts.append(f"shard the heads (tp={t}: {model.n_heads // t} query heads and "
                    f"{model.kv_heads // t} KV head(s) per device)")
    legal_mbs, mbs_text = legal_values("microbatch_size", _microbatch_sizes(p, B))
    msg = (f"global_batch_size={B} is not divisible by dp x microbatch_size = {p.dp} x {p.microbatch_size} "
           f"= {per} (the batch is split over the data-parallel/FSDP ranks); legal global_batch_size: "
           f"multiples of {per * unit}" + (f" (x pp = {p.pp}: the interleaved schedule needs a multiple of pp "
                                           "microbatches)" if interleaved else "")
           + (f" (x pipeline_flushes = {f}: each flush runs the same number)" if f > 1 else ""))
    if legal_mbs:
        msg += f"; legal microbatch_size for this batch: {mbs_text}"
    if alts:
        msg += "; to keep the batch, " + " or ".join(alts)
    if p.dp > 8:  # moving all of dp into cp / tp is seldom the layout to run: a search mixes the degrees
        msg += f"; or let `shardplan plan` split the {n} devices over dp, tp, cp and pp for this batch"
    return ConfigError(msg, field="global_batch_size", value=B)


def _check_flushes(p: ParallelConfig, m: int) -> None:
    """``pipeline_flushes`` must split the step's ``m`` microbatches evenly over a pipeline.

    Raises:
        ConfigError: flushes > 1 without pipeline parallelism (legal: 1), or not dividing m (legal: m's divisors).
    """
    f = p.pipeline_flushes
    if f == 1:
        return
    if p.pp == 1:
        raise ConfigError(f"pipeline_flushes={f} needs pp > 1: without a pipeline there is no schedule to flush "
                          "(gradient accumulation is the microbatch count); legal with pp=1: 1",
                          field="pipeline_flushes", value=f, legal=[1])
    interleaved = p.schedule == "interleaved"
    dual = p.schedule == "dualpipe"
    fits = [d for d in divisors(m) if (not interleaved or (m // d) % p.pp == 0)
            and (not dual or dualpipe_microbatches_ok(m // d, p.pp))]
    if m % f == 0 and (f in fits):
        return
    legal, text = legal_values("pipeline_flushes", fits)
    need = (f"DualPipe needs an even count of at least 2 pp = {2 * p.pp}" if dual else
            f"the interleaved schedule needs a multiple of pp={p.pp}")
    what = (f"does not divide the {m} microbatches per step (global_batch_size / (dp x microbatch_size)): each flush "
            "runs the same number" if m % f else f"leaves {m // f} microbatches per flush, where {need}")
    fix = (f"legal: {text}" if legal else
           f"no flush count does ({need} per flush): a larger global batch, or another schedule" if dual else
           f"no flush count does under the interleaved schedule ({m} microbatches is not a multiple of pp={p.pp}): "
           f"legal: a global batch that is a multiple of dp x microbatch_size x pp = {p.dp * p.microbatch_size * p.pp} "
           "sequences")
    raise ConfigError(f"pipeline_flushes={f} {what}; {fix}", field="pipeline_flushes", value=f, legal=legal or None)


def _check_dualpipe(p: ParallelConfig, m: int, global_batch: int) -> None:
    """DualPipe's asserts (deepseek-ai/DualPipe ``dualpipe.py`` ``step``): an even number of ranks, and per flush an
    even number of at least 2 pp microbatches (half run in each direction).

    Raises:
        ConfigError: naming the value and the legal ones.
    """
    if p.pp % 2:
        # the even pp that keep the other degrees: dividing the devices left over tp x cp (dp takes the rest)
        rest = p.dp * p.pp
        legal, text = legal_values("pp", [d for d in divisors(rest) if d % 2 == 0])
        raise ConfigError(f"schedule='dualpipe' needs an even pp (its two directions pair rank r with rank pp-1-r); "
                          f"got pp={p.pp}; legal pp here: {text if rest % 2 == 0 else 'none (dp x pp is odd)'}, "
                          "or another schedule", field="pp", value=p.pp, legal=legal or None)
    per_flush = m // p.pipeline_flushes
    if not dualpipe_microbatches_ok(per_flush, p.pp):
        legal, text = legal_values("microbatch_size", _microbatch_sizes(p, global_batch))
        f = p.pipeline_flushes
        fix = (f"legal microbatch_size: {text}" if legal else
               f"legal: a global batch of at least dp x microbatch_size x 2 pp" + (" x pipeline_flushes" if f > 1 else "")
               + f" = {p.dp * p.microbatch_size * 2 * p.pp * f} sequences giving an even microbatch count per flush, "
               "or another schedule")
        raise ConfigError(f"schedule='dualpipe' needs an even count of at least 2 pp = {2 * p.pp} microbatches per "
                          f"flush (DualPipe asserts it); got {per_flush}; {fix}", field="microbatch_size",
                          value=p.microbatch_size, legal=legal or None)


def _microbatches(p: ParallelConfig, model: ModelSpec, training: TrainingSpec) -> int:
    """Microbatches per step m = B / (dp x microbatch_size), checked against the pipeline."""
    B, per = training.global_batch_size, p.dp * p.microbatch_size
    if B % per:
        raise _batch_error(p, model, training)
    m = B // per
    _check_flushes(p, m)
    if p.pp > 1 and p.schedule == "interleaved" and (m // p.pipeline_flushes) % p.pp:
        legal, text = legal_values("microbatch_size", _microbatch_sizes(p, B))
        f = p.pipeline_flushes
        unit = p.dp * p.microbatch_size * p.pp * f
        flushes = f" x pipeline_flushes" if f > 1 else ""
        fix = (f"legal microbatch_size: {text}" if legal else
               f"legal: a global batch that is a multiple of dp x microbatch_size x pp{flushes} = {unit} sequences, or "
               "schedule '1f1b' with virtual_stages=1")
        per_flush = f" per pipeline flush ({m} / pipeline_flushes={p.pipeline_flushes})" if p.pipeline_flushes > 1 else ""
        raise ConfigError(f"schedule='interleaved' needs the microbatch count (global_batch_size / (dp x "
                          f"microbatch_size) = {m}){per_flush} divisible by pp={p.pp} (Megatron-LM's interleaved "
                          f"schedule asserts it); {fix}", field="microbatch_size", value=p.microbatch_size,
                          legal=legal or None)
    if p.pp > 1 and p.schedule == "dualpipe":
        _check_dualpipe(p, m, B)
    fw = training.framework
    if p.pp > 1 and fw.min_microbatches == "multiple_of_pp" and m % p.pp:
        legal, text = legal_values("microbatch_size", [b for b in divisors(B // p.dp) if (B // (p.dp * b)) % p.pp == 0])
        fix = (f"legal microbatch_size: {text}" if legal else
               f"no microbatch size gives that: a global batch that is a multiple of dp x pp = {p.dp * p.pp} sequences")
        raise ConfigError(f"{m} microbatches per step on pp={p.pp}: the {fw.label} framework needs a multiple of the "
                          f"stages (min_microbatches='multiple_of_pp'); {fix}", field="microbatch_size",
                          value=p.microbatch_size, legal=legal)
    if p.pp > 1 and p.schedule == "1f1b" and fw.min_microbatches == "pp_minus_1" and m // p.pipeline_flushes < p.pp - 1:
        f = p.pipeline_flushes  # each flush runs the engine on its share
        legal, text = legal_values("microbatch_size", [b for b in divisors(B // p.dp) if (B // (p.dp * b)) % f == 0
                                                       and B // (p.dp * b * f) >= p.pp - 1])
        fix = (f"legal microbatch_size: {text}" if legal else
               f"no microbatch size gives that: raise the global batch to at least dp x (pp - 1)"
               f"{' x pipeline_flushes' if f > 1 else ''} = {p.dp * (p.pp - 1) * f} sequences, or lower pp")
        where = f"per pipeline flush ({m} / {f} flushes)" if f > 1 else "per step"
        raise ConfigError(f"{m // f} microbatches {where} is fewer than pp - 1 = {p.pp - 1}: the {fw.label} framework's "
                          f"1F1B engine needs at least pp - 1 (min_microbatches='pp_minus_1', as nanotron's "
                          f"OneForwardOneBackwardPipelineEngine asserts); {fix}",
                          field="microbatch_size", value=p.microbatch_size, legal=legal)
    if p.pp > 1 and fw.min_microbatches == "at_least_pp" and m // p.pipeline_flushes < p.pp:
        _refuse_fewer_than_stages(p, m, B, fw)
    return m


def _refuse_fewer_than_stages(p: ParallelConfig, m: int, B: int, fw) -> None:
    """Refuse fewer microbatches per pipeline flush than stages under a profile whose engine needs as many
    (``FrameworkProfile.min_microbatches`` 'at_least_pp': torch.distributed.pipelining's schedules raise "Number of
    microbatches (1) must be greater than or equal to the number of stages (2)").

    Raises:
        ConfigError: naming the counts and the microbatch sizes that give enough.
    """
    f = p.pipeline_flushes
    legal, text = legal_values("microbatch_size", [b for b in divisors(B // p.dp) if (B // (p.dp * b)) % f == 0
                                                   and B // (p.dp * b * f) >= p.pp])
    fix = (f"legal microbatch_size: {text}" if legal else
           f"no microbatch size gives that: raise the global batch to at least dp x pp"
           f"{' x pipeline_flushes' if f > 1 else ''} = {p.dp * p.pp * f} sequences, or lower pp")
    where = f"per pipeline flush ({m} / {f} flushes)" if f > 1 else "per step"
    raise ConfigError(f"{m // f} microbatches {where} is fewer than pp = {p.pp} stages: the {fw.label} framework's "
                      "pipeline schedules need at least one per stage (min_microbatches='at_least_pp': "
                      "torch.distributed.pipelining raises 'Number of microbatches must be greater than or equal to the "
                      f"number of stages'); {fix}", field="microbatch_size", value=p.microbatch_size, legal=legal)
