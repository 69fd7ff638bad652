"""Runtime model: named differences between the JAX runtime's compiled program and the planner's scheme.

The planner models what Megatron-LM / PyTorch FSDP send. Where the runtime (how
:mod:`shardplan.jax.model` writes the model) or XLA's SPMD partitioner does something else, a *rule*
adds a delta to the prediction, ``expected = planner + deltas``; the planner itself is not bent.
Each rule is one small function registered with :func:`rule` (collective deltas, :data:`RULES`) or
:func:`memory_rule` (per-device memory deltas, :data:`MEMORY_RULES`); its docstring's first
paragraph is its reason, and the table in docs/validation.md is generated from the registries
(:func:`rules_table`). Rules select planner collectives by their typed fields (``op``, ``axis``,
``tensor``, ``phase``, ``scope``, ``replicas`` of :class:`shardplan.cost.collective.Collective`),
never by their display text.

Symbols (:class:`PlanContext`): ``u`` local tokens per microbatch, ``m`` microbatches, ``L`` layers
(with pp: ``L_max`` per stage), ``beta`` activation bytes, ``S_t = beta u h`` one ``(b, s, h)``
activation, ``t`` = tp, ``sigma`` = tp with SP else 1, ``k = m + pp - 1`` GPipe ticks. Bytes per
device follow :func:`shardplan.cost.collective.bytes_sent`. No JAX is imported.

Gradient accumulation: the runtime reduces the data-parallel gradients once per step by default
(``PlanContext.local_axes``, the mesh axes of ``Trainer.local_axes``: the accumulation runs in a
``shard_map`` manual over them), as the planner prices it; with ``local_axes == ()`` (the option
``grad_sync='per_microbatch'``, ``cp > 1``, ``pp > 1``, ZeRO-3 without HSDP replicas) XLA reduces inside
the accumulation loop and the ``grad-sync-per-microbatch`` rule applies.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from shardplan.cost.collective import bytes_sent
from shardplan.parallel import RUNTIME_SCHEDULE, Layout
from shardplan.pipeline_program import interleaved_runs, interleaved_table, one_f_one_b_runs
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec


@dataclass
class RuntimeDelta:
    """A documented difference between the runtime's program and the planner's reference scheme.

    Attributes:
        op, axis: the planner row it changes.
        count: calls added (negative: removed) per step.
        bytes_per_device: bytes per device per step added (negative: removed).
        rule: the rule's name (see docs/validation.md).
        why: one-sentence explanation.
    """

    op: str
    axis: str
    count: float
    bytes_per_device: float
    rule: str
    why: str


class Change(NamedTuple):
    """What a rule function returns: one row change (calls and bytes per device per step)."""

    op: str
    axis: str
    count: float
    bytes_per_device: float
    why: str


@dataclass(frozen=True)
class PlanContext:
    """The plan a rule reads, with the symbols of the module docstring as properties.

    Attributes:
        model, training, layout: the plan (``training.precision`` the runtime's dtypes).
        planner: the planner's collectives (``Estimate.collectives``, typed records).
        local_axes: the mesh axes over which the runtime accumulated local, unreduced gradients
            and reduced them once per step (``Trainer.local_axes``); ``()``: the GSPMD accumulation.
        cp_attention: the runtime's attention under context parallelism, ``"ring"`` (the
            planner's scheme) or ``"allgather"`` (``TrainConfig.cp_attention``).
    """

    model: ModelSpec
    training: TrainingSpec
    layout: Layout
    planner: tuple[Any, ...] = ()
    local_axes: tuple[str, ...] = ()
    cp_attention: str = "ring"

    @property
    def p(self) -> Any:
        """The :class:`~shardplan.parallel.ParallelConfig`."""
        return self.layout.parallel

    @property
    def m(self) -> int:
        """Microbatches per step."""
        return self.layout.microbatches

    @property
    def L(self) -> int:
        """Layers each device runs per microbatch: all of them, or with pp the padded ``L_max``
        (the runtime stacks that many block slots on every stage, :func:`runtime_slots`)."""
        return self.model.n_layers if self.p.pp == 1 else runtime_slots(self.layout)

    @property
    def u(self) -> float:
        """Local tokens per microbatch, ``seq_len x microbatch_size / cp``."""
        return self.training.seq_len * self.p.microbatch_size / self.p.cp

    @property
    def beta(self) -> float:
        """Bytes per activation element."""
        return self.training.precision.activation_bytes

    @property
    def S_t(self) -> float:
        """Bytes of one ``(b, s, h)`` activation of a microbatch, ``beta u h``."""
        return self.beta * self.u * self.model.d_model

    @property
    def sigma(self) -> int:
        """Sequence split outside the tp regions (tp with SP, else 1)."""
        return self.layout.seq_shard

    @property
    def executed(self) -> str | None:
        """The schedule the runtime executes (:data:`shardplan.parallel.RUNTIME_SCHEDULE`: 'gpipe',
        '1f1b' or 'interleaved'), None without pipeline parallelism."""
        return RUNTIME_SCHEDULE[self.p.schedule] if self.p.pp > 1 else None

    @property
    def gpipe(self) -> bool:
        """``pp > 1`` executed as GPipe by the runtime (``schedule='gpipe'``; the other schedules
        run the explicit 1F1B, :data:`shardplan.parallel.RUNTIME_SCHEDULE`)."""
        return self.p.pp > 1 and RUNTIME_SCHEDULE[self.p.schedule] == "gpipe"

    @property
    def ticks(self) -> int:
        """GPipe scan ticks, ``k = m + pp - 1``."""
        return self.m + self.p.pp - 1

    @property
    def gspmd_accumulation(self) -> bool:
        """``m > 1`` without a pipeline, accumulated under GSPMD (no per-step ``shard_map``): XLA
        reduces the data-parallel gradients inside the accumulation loop."""
        return self.m > 1 and self.p.pp == 1 and not self.local_axes

    def planned(self, **fields: Any) -> list[Any]:
        """The planner collectives whose typed fields equal ``fields`` (e.g. ``op="SendRecv",
        tensor="kv"``)."""
        return [c for c in self.planner if all(getattr(c, k) == v for k, v in fields.items())]


RuleFn = Callable[[PlanContext, Sequence[RuntimeDelta]], list[Change]]
MemoryFn = Callable[[PlanContext, Any], dict[str, float]]


@dataclass(frozen=True)
class Rule:
    """A registered rule: its name, where it applies, its delta formula and the function.

    ``reason`` is the first paragraph of the function's docstring.
    """

    name: str
    applies: str
    delta: str
    fn: Callable[..., Any]
    kind: str = "collectives"

    @property
    def reason(self) -> str:
        """The first paragraph of the rule function's docstring, on one line."""
        return " ".join(inspect.getdoc(self.fn).split("\n\n")[0].split())


#: Collective rules in application order (the order of the rule names in a row).
RULES: list[Rule] = []
#: Per-device memory rules (component -> bytes, see :func:`pipeline_memory_deltas`).
MEMORY_RULES: list[Rule] = []


def rule(name: str, applies: str, delta: str) -> Callable[[RuleFn], RuleFn]:
    """Register a collective rule ``fn(ctx, so_far) -> list[Change]`` (``so_far``: the deltas of
    the rules before it); ``applies`` and ``delta`` are the docs table's columns."""
    def register(fn: RuleFn) -> RuleFn:
        RULES.append(Rule(name, applies, delta, fn))
        return fn
    return register


def memory_rule(name: str, applies: str, delta: str) -> Callable[[MemoryFn], MemoryFn]:
    """Register a memory rule ``fn(ctx, mb) -> {component: bytes}`` (``mb`` the planner's
    :class:`~shardplan.cost.memory.MemoryBreakdown`; components ``state``, ``grads``,
    ``activations``, ``logits``)."""
    def register(fn: MemoryFn) -> MemoryFn:
        MEMORY_RULES.append(Rule(name, applies, delta, fn, kind="memory"))
        return fn
    return register


# ----- precision ------------------------------------------------------------------------------------

def narrow_compute(training: TrainingSpec) -> bool:
    """The runtime computes in a narrower dtype than its parameters and gradients (``--compute-dtype
    bf16``: 2-byte activations, fp32 parameters and gradients, precision ``fp32-params``)."""
    prec = training.precision
    return prec.activation_bytes < prec.grad_bytes


@rule("grads-reduced-in-compute-dtype", "bf16 compute (`--compute-dtype bf16`: fp32 parameters), ZeRO-0, GSPMD reduction",
      "gradient collectives x `beta / grad_bytes` (2 / 4)")
def grads_reduced_in_compute_dtype(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """With bf16 compute the runtime keeps fp32 parameters and casts them where they are used, so
    each device's gradient is born in bf16 and XLA reduces it over the data axes before converting
    it to the fp32 gradient buffer (PyTorch FSDP's `reduce_dtype=bf16`, Megatron-LM's
    `--grad-reduce-in-bf16`); the planner prices its gradient collectives at the buffer's 4 bytes.
    The gradient memory stays fp32 and is not changed.
    """
    beta, g = ctx.training.precision.activation_bytes, ctx.training.precision.grad_bytes
    if not narrow_compute(ctx.training) or ctx.p.zero_stage > 0 or ctx.local_axes:  # per-step: fp32 sums
        return []
    return [Change(c.op, c.axis, 0, -c.bytes_per_device * (1 - beta / g),
                   "gradients reduced in the compute dtype (bf16), stored in fp32")
            for c in ctx.planner if c.tensor in ("grads", "norm_grads")]


# ----- tensor and sequence parallelism ------------------------------------------------------------
# No delta for the column-parallel projections: the runtime holds Q/K/V and SwiGLU gate/up fused
# like Megatron-LM (shardplan.jax.model.Attention / MLP), and constrains their input to the whole
# sequence, so the backward reduces 2 input gradients per layer (AllReduce, ReduceScatter with SP)
# and XLA gathers the block input rather than a weight, as the planner counts. Not validated:
# KV-head replication (tp > n_kv_heads) keeps Q, K, V unfused and XLA reduces dK / dV inside the
# attention core instead.

# No delta for the SP block inputs: the runtime keeps the sequence-sharded input and all-gathers it
# again in the backward for the weight gradients (shardplan.jax.model.column_parallel), as
# Megatron-SP does and the planner counts; XLA kept the gathered input alive instead.

# No delta for the embedding lookup: the runtime looks the tokens up as Megatron-LM's
# VocabParallelEmbedding does (shardplan.jax.model.vocab_parallel_lookup: each tp rank its own
# vocabulary range, the partial outputs reduce-scattered over tp along the sequence with SP,
# all-reduced without; the table gradient stays on its tp shard), where XLA's partitioner
# all-gathered the vocab-sharded table under SP and reduced its whole gradient over tp and dp.

@rule("sp-norm-grads-per-microbatch", "sp, tp > 1, m > 1, pp = 1", "planner's norm-gradient AR over tp x m")
def sp_norm_grads_per_microbatch(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The runtime all-reduces the sequence-parallel norm gradients over tp in every microbatch's
    backward (GSPMD reduces them where they are computed, inside the accumulation loop); Megatron-LM
    reduces them once per step, after the last microbatch (``finalize_model_grads``), as the planner
    counts them."""
    p = ctx.p
    if not (p.sp and p.tp > 1 and ctx.m > 1 and p.pp == 1):
        return []
    m = ctx.m
    return [Change(c.op, c.axis, (m - 1) * c.count, (m - 1) * c.bytes_per_device,
                    "the runtime reduces the norm gradients over tp in each microbatch")
            for c in ctx.planned(axis="tp", tensor="norm_grads")]


# ----- data parallelism and ZeRO ------------------------------------------------------------------

def _grad_reductions(ctx: PlanContext) -> list[Any]:
    """The planner's data-parallel gradient reductions of the shard group (not the HSDP replica
    AllReduce): AllReduce (ZeRO-0) or ReduceScatter (ZeRO >= 1) of ``tensor="grads"`` on dp."""
    return [c for c in ctx.planned(axis="dp", tensor="grads", replicas=False)
            if c.op in ("AllReduce", "ReduceScatter")]


@rule("grad-sync-per-microbatch", "ZeRO-0/2, m > 1, GSPMD accumulation (`grad_sync='per_microbatch'` or cp > 1)",
      "planner's gradient AR / RS x m")
def grad_sync_per_microbatch(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """Under the GSPMD accumulation each microbatch's gradient is constrained inside the
    accumulation loop, so XLA reduces once per microbatch (DDP `no_sync` / Megatron, and the
    runtime's default `grad_sync='per_step'`, reduce once per step).

    ZeRO-3 already reduces per microbatch in the planner; with pp > 1 there is no accumulation
    loop (the pipeline's scan runs the microbatches, see the ``gpipe-*`` rules). ZeRO-1 and HSDP
    under the GSPMD accumulation are not covered (:func:`not_covered`).
    """
    p = ctx.p
    if not ctx.gspmd_accumulation or p.zero_stage not in (0, 2):
        return []
    m = ctx.m
    return [Change(c.op, c.axis, (m - 1) * c.count, (m - 1) * c.bytes_per_device,
                   "the runtime reduces the gradients inside the accumulation loop, once per microbatch")
            for c in _grad_reductions(ctx)]


# No rule for ZeRO-3's weight gathers: the runtime gathers every weight (the embedding table
# included) as the plan's ``zero3_gather`` says -- forward and backward inside every microbatch
# ('per_microbatch', the PyTorch-FSDP default), or once per step before the accumulation loop
# ('per_step') -- and reduce-scatters the whole gradient of each weight per microbatch
# (shardplan.jax.train.Trainer.gather_weights), as the planner prices both policies.

# No delta for ZeRO-2's embedding gradient either: every device builds its own table gradient from
# its tokens and the tables are reduce-scattered once (shardplan.jax.model.local_lookup_gradients),
# where XLA all-gathered the token ids and all-to-alled the lookup's cotangent to the table's shard.

# ----- context parallelism ------------------------------------------------------------------------

@rule("cp-allgather-kv", "cp > 1, `cp_attention=\"allgather\"`",
      "`-` the planner's SendRecv; `+L m` AG of `2 beta u cp kv`; `+L m` RS of `2 beta u cp kv`")
def cp_allgather_kv(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """With `cp_attention="allgather"` the runtime all-gathers K/V over cp (Q stays sharded) and
    reduce-scatters dK/dV, instead of a ring of send/recv; XLA gathers V and the rotated K (`kv`
    columns each), sliced from the fused QKV projection of the local sequence chunk. The default
    ring attention (`shardplan/jax/ring.py`) sends what the planner models, `cp - 1` K+V blocks per
    layer forward and `2 (cp - 1)` backward (K/V again, and the dK/dV accumulators), and needs no delta.

    With tp the K and V columns are ``kv / t`` per device.
    """
    p = ctx.p
    if p.cp == 1 or ctx.cp_attention != "allgather":
        return []
    out = [Change(c.op, c.axis, -c.count, -c.bytes_per_device,
                  "the runtime all-gathers K/V over cp instead of a send/recv ring")
           for c in ctx.planned(op="SendRecv", axis="cp", tensor="kv")]
    n = ctx.L * ctx.m
    ag_b = ctx.beta * ctx.u * p.cp * 2 * ctx.model.kv_dim / p.tp
    rs_b = ctx.beta * ctx.u * p.cp * 2 * ctx.model.kv_dim / p.tp
    out.append(Change("AllGather", "cp", n, n * bytes_sent("AllGather", ag_b, p.cp),
                      "forward: all-gather of V and of the rotated K over cp"))
    out.append(Change("ReduceScatter", "cp", n, n * bytes_sent("ReduceScatter", rs_b, p.cp),
                      "backward: reduce-scatter of dK and dV over cp"))
    return out


# ----- pipeline (the runtime's GPipe, shardplan.jax.pipeline) -------------------------------------

@rule("gpipe-tick-sends", "pp > 1, GPipe (schedule='gpipe')",
      "SendRecv pp: `2 k` collective-permutes, the busiest device sending `n k` messages of `beta u h / sigma` "
      "(`n` = 1 for pp = 2, else 2) instead of the planner's `2 v m` (pp = 2: `m`)")
def gpipe_tick_sends(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The GPipe scan runs `k = m + pp - 1` ticks and ppermutes the stage output forward (and the
    cotangent backward) on *every* tick, bubble ticks included; a middle stage sends both, the
    first and last stage one of them (pp = 2: each device `k` messages)."""
    p = ctx.p
    if not ctx.gpipe:
        return []
    sr = ctx.planned(op="SendRecv", axis="pp", tensor="stage_io")
    msg = ctx.beta * ctx.u * ctx.model.d_model / ctx.sigma
    k, n = ctx.ticks, (1 if p.pp == 2 else 2)
    return [Change("SendRecv", "pp", 2 * k - sum(c.count for c in sr),
                   n * k * bytes_sent("SendRecv", msg, 2) - sum(c.bytes_per_device for c in sr),
                   f"the GPipe scan ppermutes forward and backward on all m + pp - 1 = {k} ticks (bubble ticks "
                   f"included)")]


@rule("gpipe-bubble-ticks", "pp > 1, GPipe (schedule='gpipe')",
      "`+(pp - 1)/m` x the planner's per-layer tp activation rows")
def gpipe_bubble_ticks(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """Every stage runs its `L_max` layers on all `k` ticks (bubble ticks compute on discarded
    data), so the per-layer tp collectives run `k` instead of `m` times.

    Per-layer collectives: the planner's ``tensor="activations", scope="layers"`` records on tp.
    """
    p, m = ctx.p, ctx.m
    if not ctx.gpipe:
        return []
    f = (p.pp - 1) / m
    return [Change(c.op, c.axis, f * c.count, f * c.bytes_per_device,
                   "every stage runs its layers on the pp - 1 bubble ticks too")
            for c in ctx.planned(axis="tp", tensor="activations", scope="layers")]


@rule("pp-boundary-psum", "pp > 1, GPipe (schedule='gpipe')",
      "`+1` AR pp of `4 m u h / sigma`, `+k` AR pp of `4 u h / sigma`")
def pp_boundary_psum(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The pipeline input and output are pp-replicated (embedding and head run on every rank): the
    last stage's outputs are `psum`med over pp (forward) and so is the input cotangent on every
    tick (backward), in fp32."""
    p = ctx.p
    if not ctx.gpipe:
        return []
    act32 = 4.0 * ctx.u * ctx.model.d_model / ctx.sigma
    k = ctx.ticks
    return [Change("AllReduce", "pp", 1 + k, bytes_sent("AllReduce", ctx.m * act32, p.pp)
                   + k * bytes_sent("AllReduce", act32, p.pp),
                   "fp32 psum over pp of the last stage's outputs (forward, all m microbatches) and of the "
                   "input cotangent on every tick (backward)")]


@rule("gpipe-tied-embedding", "pp > 1, GPipe (schedule='gpipe'), tied embeddings",
      "`-` the planner's embedding-group AllReduce pp of the table gradient")
def gpipe_tied_embedding(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """Under GPipe every rank holds the one tied table (replicated over pp), so there are no two
    copies to all-reduce over the embedding group (first + last stage) as Megatron-LM does; the
    table's gradient is reduced with the others (rule `pp-replicated-embedding-head`)."""
    if not ctx.gpipe or not ctx.model.tied_embeddings:
        return []
    group = ctx.planned(op="AllReduce", axis="pp", tensor="grads")
    return [Change(c.op, c.axis, -c.count, -c.bytes_per_device, "no embedding-group all-reduce: the tied table "
                   "is replicated over pp") for c in group]


@rule("1f1b-slot-sends", "pp > 1, executed 1F1B (schedule '1f1b' or 'zero-bubble')",
      "SendRecv pp: the calls are the slots that send (`one_f_one_b_runs`), the bytes the planner's")
def one_f_one_b_slot_sends(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The executed 1F1B ppermutes after each slot in which a stage produced an output, and each
    device sends only its own forwards / backwards (:func:`shardplan.pipeline_program.one_f_one_b_runs`),
    which are the planner's sends of the busiest rank; XLA counts one collective-permute per slot
    that sends (e.g. pp = 2, m = 4: 5, the first carrying stage 0's first activation and the last
    stage 1's last gradient), so only the call count differs."""
    if ctx.executed != "1f1b":
        return []
    sr = ctx.planned(op="SendRecv", axis="pp", tensor="stage_io")
    runs = one_f_one_b_runs(ctx.p.pp, ctx.m)
    calls = sum((stop - start) * (bool(even) + bool(odd)) for start, stop, even, odd in runs)
    return [Change("SendRecv", "pp", calls - sum(c.count for c in sr), 0.0,
                   f"{calls} collective-permutes (one per slot that sends); each device sends only its own work")]


@rule("interleaved-slot-sends", "pp > 1, executed interleaved 1F1B (schedule 'interleaved')",
      "SendRecv pp: the calls are the slots' distinct non-empty permutations (`interleaved_runs`), the bytes "
      "the planner's")
def interleaved_slot_sends(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The executed interleaved 1F1B ppermutes after each slot of its static lock-step
    (:func:`shardplan.pipeline_program.interleaved_table`) only the chunk outputs / cotangents that
    were produced (:func:`shardplan.pipeline_program.interleaved_runs`), forward and backward, so
    each device sends the planner's messages; XLA counts one collective-permute per slot and
    direction that sends (two with the same pairs are one), e.g. pp = 2, m = 4, v = 2: 21 for the
    planner's 12 messages per device."""
    p = ctx.p
    if ctx.executed != "interleaved":
        return []
    sr = ctx.planned(op="SendRecv", axis="pp", tensor="stage_io")
    runs = interleaved_runs(interleaved_table(p.pp, ctx.m, p.virtual_stages), p.virtual_stages)
    calls = sum((stop - start) * len({pairs for pairs in (fwd, bwd) if pairs}) for start, stop, fwd, bwd in runs)
    return [Change("SendRecv", "pp", calls - sum(c.count for c in sr), 0.0,
                   f"{calls} collective-permutes (one per slot and direction that sends); each device sends only "
                   f"its own chunks' outputs")]


@rule("1f1b-boundary-psum", "pp > 1, executed 1F1B or interleaved 1F1B (schedule != 'gpipe'), learned positions "
      "or an embedding norm", "`+1` AR pp of `4 (P_pos + P_norm + 1)`")
def one_f_one_b_boundary_psum(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """The learned position table and the embedding norm (BLOOM) stay pp-replicated: their
    gradients (stage 0's) and the loss (the last stage's) are `psum`med over pp once, in fp32.
    (Without them only scalars are -- the loss and the global gradient norm's per-leaf sums --
    below the negligible share; the embedding and the LM head are stacked over pp,
    :data:`shardplan.jax.pipeline.BOUNDARY`.)

    ``P_pos`` = ``max_position_embeddings h`` (learned positions, whole on every tp rank), ``P_norm`` the embedding
    norm's parameters."""
    p, model = ctx.p, ctx.model
    if ctx.executed in (None, "gpipe"):
        return []
    pos = model.max_position_embeddings * model.d_model if model.position == "learned" else 0.0
    extra = pos + (model.norm_params() if model.embedding_norm else 0.0)
    if extra == 0:
        return []
    return [Change("AllReduce", "pp", 1, bytes_sent("AllReduce", 4.0 * (extra + 1), p.pp),
                   "fp32 psum over pp of the pp-replicated position table / embedding norm gradients and the loss")]


def runtime_slots(layout: Layout) -> int:
    """Block slots every pipeline rank of the runtime holds: ``L_max = max(stage_layers)``, or with
    the executed interleaved schedule ``v ceil(L_max / v)`` (each chunk padded to the largest,
    :func:`shardplan.jax.pipeline.interleaved_placement`)."""
    p = layout.parallel
    lmax = max(layout.stage_layers)
    if p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] == "interleaved":
        return p.virtual_stages * -(-lmax // p.virtual_stages)
    return lmax


def runtime_stage_params(model: ModelSpec, layout: Layout) -> tuple[float, float]:
    """Parameters (elements) every pipeline rank of the runtime holds, before ZeRO sharding:
    ``(blocks, outer)``. ``blocks = L_max x`` one block (``/ tp`` except norms and router; routed
    experts ``/ (tp ep)``), ``L_max`` = :func:`runtime_slots` (uneven splits are padded);
    ``outer`` = embedding (``V h / t``), learned positions, LM head (``V h / t`` unless tied) and
    the final norm, replicated over pp under GPipe; under the executed 1F1B / interleaved schedule
    each rank holds one ``V h / t`` slice of the stacked table and one final-norm slice
    (:data:`shardplan.jax.pipeline.BOUNDARY`; the middle ranks' slices are zero) and the learned
    positions (:mod:`shardplan.jax.pipeline`)."""
    p = layout.parallel
    t, h, V = p.tp, model.d_model, model.vocab_size
    if model.is_moe:
        layer = (model.attention_params() + model.n_shared_experts * model.mlp_params(model.expert_ffn)) / t
        layer += model.router_params() + model.routed_expert_params_per_layer() / (t * p.ep)
    else:
        layer = (model.attention_params() + model.mlp_params(model.ffn_dim)) / t
    layer += model.layer_norm_params()
    blocks = runtime_slots(layout) * layer
    boundary = p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] != "gpipe"
    outer = V * h / t * (1 if model.tied_embeddings or boundary else 2) + model.norm_params()
    if model.position == "learned":  # replicated over tp (the runtime's pos_embed, ("position", "embed"))
        outer += model.max_position_embeddings * h
    return blocks, outer


def _planner_stage_params(model: ModelSpec, layout: Layout, stage: int) -> float:
    """Parameters (elements) of the planner's pipeline stage ``stage`` (dense + replicated + expert)."""
    from shardplan.cost.memory import stage_params

    sp_ = stage_params(model, layout, stage)
    return sp_.dense + sp_.replicated + sp_.expert


def _stage_weight_syncs(ctx: PlanContext) -> list[tuple[Any, float]]:
    """The planner's data-parallel collectives of the stage's dense weights, each with the number
    of parameters it carries: the gradient reduction (any ZeRO stage) and the ZeRO-1/2 gather of
    the updated parameters (``tensor="params", phase="step"``); not the HSDP replica AllReduce,
    not the ZeRO-3 gathers."""
    out = []
    for c in ctx.planned(axis="dp", scope="dense", replicas=False):
        after_update = c.tensor == "params" and c.phase == "step" and ctx.p.zero_stage in (1, 2)
        if c.count <= 0 or c.bytes_per_device <= 0 or not (c.tensor == "grads" or after_update):
            continue
        prec = ctx.training.precision
        elem = prec.param_bytes if c.op == "AllGather" else prec.grad_bytes
        out.append((c, c.bytes_per_device / (c.count * bytes_sent(c.op, elem, c.group_size))))
    return out


@rule("pp-replicated-embedding-head", "pp > 1",
      "dp gradient rows x `R / P` (`R` = `L_max` blocks + embedding + head + norm per device, `P` = the "
      "planner's stage; the executed 1F1B: one table + norm slice, zero for an even split)")
def pp_replicated_embedding_head(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """GPipe: every rank holds (and reduces the gradients of) the embedding, LM head and final norm;
    Megatron holds the embedding on stage 0 and the head on the last. The executed 1F1B holds them
    so (one stacked table slice per rank), but the middle ranks of pp > 2 hold (and reduce) an unused
    zero slice. Both hold `L_max` padded block slots."""
    if ctx.p.pp == 1:
        return []
    blocks, outer = runtime_stage_params(ctx.model, ctx.layout)
    out = [(c, c.bytes_per_device * ((blocks + outer) / planned - 1)) for c, planned in _stage_weight_syncs(ctx)]
    return [Change(c.op, c.axis, 0, delta, "embedding, LM head and final norm are held (and their gradients "
                   "reduced) on every stage (1F1B: one table slice each), blocks padded to L_max")
            for c, delta in out if abs(delta) > 1e-6 * c.bytes_per_device]


@rule("gpipe-grad-sync-per-tick", "pp > 1, GPipe (schedule='gpipe'), ZeRO-0", "`+(k - 1)` AR of the block gradients")
def gpipe_grad_sync_per_tick(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """XLA all-reduces the stage's block gradients over dp inside the scan, once per tick (the
    embedding / head gradients once per step)."""
    if not ctx.gpipe or ctx.p.zero_stage != 0:
        return []
    blocks, _ = runtime_stage_params(ctx.model, ctx.layout)
    k = ctx.ticks
    return [Change(c.op, c.axis, (k - 1) * c.count, (k - 1) * c.bytes_per_device * blocks / planned,
                   "XLA all-reduces the stage's block gradients inside the scan, once per tick")
            for c, planned in _stage_weight_syncs(ctx) if c.op == "AllReduce"]


@rule("pp-embedding-lookup", "pp > 1, tp > 1, no SP",
      "`+1` AR tp of `beta m u h` (the planner's pp > 1 stage already counts only one embedding/head AR tp "
      "per microbatch)")
def pp_embedding_lookup(ctx: PlanContext, so_far: Sequence[RuntimeDelta]) -> list[Change]:
    """Runs the vocab-parallel embedding on every stage, for the whole batch at once before the
    pipeline, so its output all-reduce over tp is one of ``m`` microbatches' activations, beside
    the LM head's tp all-reduce per microbatch.

    The planner's pp > 1 stage carries one of the embedding / LM-head tp all-reduces (``m`` per
    step, a stage holds one or the other); the runtime, with both replicated on every stage, keeps
    the head's and adds the embedding's. (Before the runtime wrote the lookup out, XLA moved the
    table from tp to pp sharding and all-reduced the lookup over pp instead.)
    """
    p = ctx.p
    if p.pp == 1 or p.tp == 1 or p.sp:
        return []
    return [Change("AllReduce", "tp", 1, bytes_sent("AllReduce", ctx.beta * ctx.m * ctx.u * ctx.model.d_model, p.tp),
                   "the runtime's embedding all-reduces its output over tp once, for the whole batch")]


def runtime_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout,
                   planner: Sequence[Any], local_axes: Sequence[str] = (), cp_attention: str = "ring"
                   ) -> list[RuntimeDelta]:
    """The runtime-model deltas for one plan: every rule of :data:`RULES`, in order.

    Args:
        model, training, layout: the plan.
        planner: the planner's collectives (``Estimate.collectives``, typed
            :class:`~shardplan.cost.collective.Collective` records).
        local_axes: ``Trainer.local_axes`` of the compiled step (see :class:`PlanContext`).
        cp_attention: the runtime's attention under cp, ``"ring"``, ``"allgather"`` or ``"a2a"`` (Ulysses: the
            planner's own AllToAlls, no delta).

    Returns:
        The deltas, each a :class:`RuntimeDelta` (counts per step, bytes per device per step).
    """
    ctx = PlanContext(model, training, layout, tuple(planner), tuple(local_axes), cp_attention)
    out: list[RuntimeDelta] = []
    for r in RULES:
        out += [RuntimeDelta(c.op, c.axis, c.count, c.bytes_per_device, r.name, c.why) for c in r.fn(ctx, out)]
    return out


# ----- memory -------------------------------------------------------------------------------------

@memory_rule("pp-replicated-embedding-head", "pp > 1",
             "state, gradients x `R / P`; GPipe: logits of the whole local batch `u m (beta+4) V / t` on every rank")
def replicated_state_and_logits(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """Every rank holds the embedding, LM head and final norm (the planner: embedding on stage 0,
    head and norm on the last) and `L_max` (padded) block slots, and computes the LM head and loss
    of the whole local batch instead of one microbatch on the last stage (GPipe; the executed
    1F1B runs the head per microbatch on the last stage).

    ``R = blocks + outer`` of :func:`runtime_stage_params`, ``P`` the planner stage's parameters.
    """
    if ctx.p.pp == 1:
        return {}
    blocks, outer = runtime_stage_params(ctx.model, ctx.layout)
    scale = (blocks + outer) / _planner_stage_params(ctx.model, ctx.layout, mb.stage) - 1
    if not ctx.gpipe:  # 1F1B: one microbatch's head and loss at a time on the last stage, as the planner
        return {"state": (mb.params + mb.optimizer) * scale, "grads": mb.grads * scale}
    logits = ctx.u * ctx.m * (ctx.beta + 4) * ctx.model.vocab_size / ctx.p.tp
    return {"state": (mb.params + mb.optimizer) * scale, "grads": mb.grads * scale, "logits": logits - mb.logits}


#: Bytes per attention score the runtime's naive attention keeps for the backward, whatever its compute dtype:
#: the fp32 exponentials and the fp32 probabilities of ``jax.nn.softmax`` (scores are cast to fp32 before it,
#: :meth:`shardplan.jax.model.Attention._gathered_core`). Measured: compiled temp of the gradient of 1-3 stacked
#: attention cores (4 heads, s = 256 and 512, XLA:CPU) grows by 8.1-8.3 B per score and layer in fp32 and bf16.
RUNTIME_SCORE_BYTES = 8.0

#: Bytes per score of one K/V block alive while the runtime's cp ring (:mod:`shardplan.jax.ring`) runs a block's
#: backward: the recomputed scores and probabilities, their gradients and the masked copies, fp32. Measured: the
#: compiled temp of tiny-llama at cp = 2 and 4, seq 256-2,048, grows by 28.3 bytes (fp32) and 30.3 (bf16) per
#: score of one block (a (s / cp)^2 per sequence and microbatch), whatever the layer count.
RING_BLOCK_SCORE_BYTES = 28.0


def runtime_score_extra_per_token(model: ModelSpec, training: TrainingSpec, layout: Layout) -> float:
    """Bytes per local token and layer the runtime's naive attention keeps beyond the planner's scores:
    ``(8 s - n_score s_k) a / t`` with ``8`` = :data:`RUNTIME_SCORE_BYTES`, ``n_score`` =
    :func:`shardplan.cost.memory.naive_score_bytes`, ``s_k`` = :func:`shardplan.cost.memory.scored_keys` (the
    runtime masks a sliding window inside the full ``s x s`` scores), ``a`` = n_heads, ``t`` = tp; 0 with
    flash attention (the runtime always runs the naive core; validation prices it naive,
    :func:`shardplan.crosscheck.compare.runtime_training`)."""
    from shardplan.cost.memory import naive_score_bytes, scored_keys

    if training.attention != "naive":
        return 0.0
    s = float(training.seq_len)
    kept = RUNTIME_SCORE_BYTES * s - naive_score_bytes(training) * scored_keys(model, training.seq_len)
    return kept * model.n_heads / layout.parallel.tp


def runtime_activation_bytes_per_token(ctx: "PlanContext") -> float:
    """:func:`shardplan.cost.memory.activation_bytes_per_token` of the plan plus
    :func:`runtime_score_extra_per_token`: what one layer of the runtime keeps per local token."""
    from shardplan.cost.memory import activation_bytes_per_token

    return (activation_bytes_per_token(ctx.model, ctx.training, ctx.layout, ctx.model.is_moe)
            + runtime_score_extra_per_token(ctx.model, ctx.training, ctx.layout))


@memory_rule("jax-softmax-residuals", "naive attention (the runtime's), every layout",
             "activations `+ S (8 s / (n s_k) - 1)` (pp = 1; the cp ring: `- S`) `+ (4 + beta) a s u / t` "
             "(the cp ring: `+ 28 a (s / cp) u / t`)")
def jax_softmax_residuals(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """The runtime's attention core keeps two fp32 tensors per score for its backward (``jax.nn.softmax``'s
    exponentials and probabilities: 8 bytes) where Megatron-LM's fused softmax keeps its output, the
    planner's ``n`` bytes per score (Korthikanti et al. 2022 Sec. 4.1); and while one layer's attention
    backward runs, the gradient of the probabilities (compute dtype) and the fp32 gradient of the
    scores are alive beside them, ``(4 + beta)`` bytes per score of one layer and microbatch. The cp ring
    (:mod:`shardplan.jax.ring`, ``pp = 1``) is a flash-style ``custom_vjp``: it keeps the log-sum-exp, not the
    scores, and its backward holds one K/V block's scores at a time, :data:`RING_BLOCK_SCORE_BYTES` per score.

    ``S``: the planner's stored score bytes, from its activations with naive and with flash attention
    (:func:`shardplan.cost.memory.stage_activation_bytes`; under pp the ``*-residuals`` / ``*-inputs`` rules
    count the runtime's 8 bytes themselves, :func:`runtime_activation_bytes_per_token`); ``a`` = n_heads,
    ``s`` = seq_len (keys), ``u`` =
    local tokens per microbatch (queries), ``s_k`` = :func:`shardplan.cost.memory.scored_keys`. Measured on
    XLA:CPU (:data:`RUNTIME_SCORE_BYTES`): the transient is 7.6-8.3 bytes per score in fp32, 6.4-7.1 in bf16.
    """
    from shardplan.cost.memory import naive_score_bytes, scored_keys, stage_activation_bytes

    tr, p = ctx.training, ctx.p
    if tr.attention != "naive":
        return {}
    ring = p.cp > 1 and p.pp == 1 and ctx.cp_attention == "ring"
    s = float(tr.seq_len)
    per_score = RING_BLOCK_SCORE_BYTES if ring else 4.0 + ctx.beta
    act = per_score * ctx.model.n_heads / p.tp * (s / p.cp if ring else s) * ctx.u
    if p.pp == 1:
        flash = tr.model_copy(update={"attention": "flash"})
        stage = getattr(mb, "stage", 0)
        n, s_k = naive_score_bytes(tr), scored_keys(ctx.model, tr.seq_len)
        diff = (stage_activation_bytes(ctx.model, tr, ctx.layout, stage)
                - stage_activation_bytes(ctx.model, flash, ctx.layout, stage))
        saved = max(diff, 0.0) * n * s_k / (n * s_k - 4.0)  # the flash count keeps 4 a / t (log-sum-exp) per token
        act += -saved if ring else saved * (RUNTIME_SCORE_BYTES * s / (n * s_k) - 1.0)
    return {"activations": act}


@memory_rule("gpipe-tick-residuals", "pp > 1, GPipe (schedule='gpipe'), no recompute",
             "activations `a_tok L_max u k + beta u h m / sigma` instead of the planner's in-flight microbatches")
def gpipe_tick_residuals(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """The scan keeps the residuals of all `k` ticks (temp memory), plus the embedding output of
    the whole local batch, instead of the planner's schedule-dependent in-flight microbatches.

    ``a_tok``: :func:`runtime_activation_bytes_per_token` (the planner's layer bytes and the runtime's 8-byte scores).
    """
    if not ctx.gpipe or ctx.p.recompute != "none":
        return {}
    a_tok = runtime_activation_bytes_per_token(ctx)
    act = a_tok * ctx.L * ctx.u * ctx.ticks + ctx.beta * ctx.u * ctx.model.d_model * ctx.m / ctx.sigma
    return {"activations": act - mb.activations}


@memory_rule("1f1b-stage-inputs", "pp > 1, executed 1F1B or interleaved 1F1B, no recompute",
             "activations `a_tok L u + beta u h R / sigma + 2 beta m u h / sigma` instead of the planner's "
             "in-flight microbatches; gradients `+ R_g` (the backward's stage gradient beside the accumulator)")
def one_f_one_b_stage_inputs(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """The executed 1F1B keeps only the *inputs* of its in-flight microbatches (``R`` rows of
    ``beta u h / sigma``: ``min(m, pp)``, interleaved the chunk-input and cotangent rows of
    :func:`shardplan.pipeline_program.interleaved_table`) and recomputes a stage's (chunk's)
    residuals, ``a_tok L u``, in its backward; beside them it holds the whole local batch's
    embedding output and input cotangent (compute dtype; the embedding runs inside the pipeline,
    stage 0's table). The backward's stage and head gradient (fp32) sits beside the fp32 accumulators
    until it is added.

    ``a_tok``: :func:`runtime_activation_bytes_per_token`; ``L`` the slots run in one
    backward (:func:`runtime_slots`, ``/ v`` interleaved); ``R_g`` the runtime's per-device block and
    head parameters (:func:`runtime_stage_params`, head = ``V h / t`` + final norm) x 4 bytes.
    """
    p = ctx.p
    if ctx.executed in (None, "gpipe") or p.recompute != "none":
        return {}
    h, u, sig = ctx.model.d_model, ctx.u, ctx.sigma
    a_tok = runtime_activation_bytes_per_token(ctx)
    if ctx.executed == "interleaved":
        tbl = interleaved_table(p.pp, ctx.m, p.virtual_stages)
        rows, layers = tbl.rows_in + tbl.rows_cot, ctx.L / p.virtual_stages
    else:
        rows, layers = min(ctx.m, p.pp), ctx.L
    act = a_tok * layers * u + ctx.beta * u * h * rows / sig + 2 * ctx.beta * ctx.m * u * h / sig
    blocks, _ = runtime_stage_params(ctx.model, ctx.layout)
    head = ctx.model.vocab_size * h / p.tp + ctx.model.norm_params()
    return {"activations": act - mb.activations, "grads": 4.0 * (blocks / ctx.layout.zero_shard + head)}


@memory_rule("zero2-full-local-gradient", "ZeRO-2, pp = 1",
             "gradients `x zero_shard` (the whole local gradient instead of its `1/N` shard)")
def zero2_full_local_gradient(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """The runtime holds the whole local gradient, as under ZeRO-1, not the ZeRO-2 shard the planner
    counts: with the once-per-step reduction it is the unreduced accumulator (a sharded buffer needs
    a reduce-scatter per microbatch, DeepSpeed's ZeRO-2, which the planner prices under a 'per_microbatch'
    profile); otherwise XLA reduce-scatters the backward's full gradient after it is complete (DeepSpeed
    frees each bucket as it is reduced).

    ``N`` = ``Layout.zero_shard``; the planner's ZeRO-2 gradient bytes are ``G / N``, or already the whole ``G``
    under a profile whose ``zero2_accumulation`` is 'full_buffer' (megatron: nothing to add then).
    """
    if ctx.p.zero_stage != 2 or ctx.p.pp > 1 or ctx.training.framework.zero2_accumulation == "full_buffer":
        return {}
    return {"grads": mb.grads * (ctx.layout.zero_shard - 1)}


@memory_rule("gradient-accumulator", "m > 1, ZeRO-0/1/2, pp = 1",
             "gradients `+ G` (the running sum beside the microbatch's gradient)")
def gradient_accumulator(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """With two or more microbatches the runtime's accumulation loop carries the running sum of the
    gradients beside the gradient of the microbatch it is differentiating, two buffers of the local
    gradient at once; Megatron-LM accumulates each weight gradient into its ``main_grad`` buffer in
    place (``gradient_accumulation_fusion``), the one buffer the planner counts.

    ``G`` = the whole local gradient: the planner's gradient bytes under ZeRO-0/1 (and a 'full_buffer'
    ZeRO-2), ``N`` times its ZeRO-2 shard otherwise (``N`` = ``Layout.zero_shard``). Not ZeRO-3, whose
    runtime reduce-scatters each microbatch's gradient and accumulates the shard.
    """
    p = ctx.p
    if ctx.m < 2 or p.pp > 1 or p.zero_stage > 2:
        return {}
    whole = p.zero_stage < 2 or ctx.training.framework.zero2_accumulation == "full_buffer"
    return {"grads": mb.grads * (1 if whole else ctx.layout.zero_shard)}


@memory_rule("bf16-working-copies", "bf16 compute (fp32 parameters)",
             "gradients `+ 2 (beta / g) G`: a bf16 copy of the weights and of their gradient")
def bf16_working_copies(ctx: PlanContext, mb: Any) -> dict[str, float]:
    """With bf16 compute the runtime casts its fp32 parameters to bf16 where they are used and the
    gradient arrives in bf16 before its conversion to the fp32 buffer, so the step's temp memory
    holds a bf16 copy of the weights and of their gradient beside the fp32 gradient the planner
    counts (a mixed-precision framework keeps the bf16 working copy as its parameters instead).

    Bytes: ``2 x beta / grad_bytes x`` the planner's gradient bytes (the same elements at 2 bytes,
    twice), added to the gradients component.
    """
    if not narrow_compute(ctx.training):
        return {}
    prec = ctx.training.precision
    return {"grads": 2 * mb.grads * prec.activation_bytes / prec.grad_bytes}


def memory_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout, mb: Any,
                  local_axes: Sequence[str] = (), cp_attention: str = "ring") -> dict[str, dict[str, float]]:
    """Per-device memory deltas (bytes) of the runtime vs the planner's stage ``mb.stage``, per
    rule of :data:`MEMORY_RULES` that applies: ``{rule: {component: bytes}}`` (components
    ``state``, ``grads``, ``activations``, ``logits``).

    Args:
        model, training, layout: the plan.
        mb: the planner's :class:`~shardplan.cost.memory.MemoryBreakdown` (``Estimate.memory``).
        local_axes: ``Trainer.local_axes`` of the compiled step (see :class:`PlanContext`).
    """
    ctx = PlanContext(model, training, layout, local_axes=tuple(local_axes), cp_attention=cp_attention)
    out: dict[str, dict[str, float]] = {}
    for r in MEMORY_RULES:
        d = r.fn(ctx, mb)
        if d:
            out[r.name] = dict(d)
    return out


def pipeline_memory_deltas(model: ModelSpec, training: TrainingSpec, layout: Layout, mb: Any,
                           local_axes: Sequence[str] = ()) -> dict[str, float]:
    """The sum of :func:`memory_deltas` per component (``state``, ``grads``, ``activations``,
    ``logits``, bytes per device); all zero when no memory rule applies (``pp = 1`` and no
    per-step ZeRO-2 accumulation)."""
    out = {"state": 0.0, "grads": 0.0, "activations": 0.0, "logits": 0.0}
    for d in memory_deltas(model, training, layout, mb, local_axes).values():
        for k, v in d.items():
            out[k] += v
    return out


def _one_f_one_b_not_covered(layout: Layout, local_axes: Sequence[str]) -> str | None:
    """Why a plan executed as 1F1B cannot be scored, or None: the slot work is a per-device
    ``lax.switch``, and the HLO count of a collective inside a branch (every branch, every slot)
    is not what a device executes, so the plan is covered only when no collective sits in a
    branch -- tp = cp = ep = 1, no ZeRO-3 gathers, and the data-parallel gradient reduction taken
    out of the schedule (``dp`` in ``local_axes``, or dp = 1)."""
    p = layout.parallel
    inside = [f"{a}={getattr(p, a)}" for a in ("tp", "cp", "ep") if getattr(p, a) > 1]
    if p.zero_stage == 3:
        inside.append("ZeRO-3")
    if p.dp > 1 and "dp" not in local_axes:
        inside.append(f"dp={p.dp} reduced per microbatch (m={layout.microbatches})")
    if not inside:
        return None
    return (f"pp > 1 with schedule={p.schedule!r} and {', '.join(inside)}: the runtime executes 1F1B, whose slots "
            "run their forward / backward / bubble work as branches of a per-device lax.switch; the compiled "
            "program holds every branch on every slot, so the HLO count of the collectives inside the branches is "
            "not what a device executes (validate the collectives with --schedule gpipe)")


def not_covered(layout: Layout, local_axes: Sequence[str] = (), training: TrainingSpec | None = None,
                model: ModelSpec | None = None) -> str | None:
    """Why the comparison cannot score a plan's compiled program, or None when it can.

    Not covered: ZeRO-3 with sequence parallelism and cp > 1 (GSPMD reshards between the tp and cp axes); pp > 1
    executed as 1F1B (every schedule but 'gpipe', see
    :data:`shardplan.parallel.RUNTIME_SCHEDULE`) with collectives inside the per-device
    ``lax.switch`` branches of its slots (:func:`_one_f_one_b_not_covered`); cp with pp (K/V
    all-gathered in the pipeline, GPipe rules stated for cp = 1); sequence parallelism with pp > 1
    (tp collectives on every GPipe tick in patterns no rule models);
    ZeRO-3 with pp > 1 (weights gathered on every GPipe tick); sequence
    parallelism, cp or ZeRO-1/2/3 with bf16 compute (:func:`narrow_compute`): XLA reduce-scatters the
    fp32 gradient shards but reduces the replicated leaves in bf16, a dtype mix no rule models
    (and XLA:CPU gathers bf16 sequence shards in patterns stated for fp32 only); ZeRO-1, HSDP (replicas > 1) and ZeRO-2 with cp > 1, each with ``m > 1`` and
    ``pp = 1`` under the GSPMD accumulation (``local_axes == ()``: ``grad_sync='per_microbatch'``
    or ``cp > 1``). XLA then all-reduces ZeRO-1's replicated accumulator every microbatch and
    re-gathers parameters, moves HSDP's embedding gradient in patterns (extra gathers, halved
    all-to-alls), and adds a dp x cp all-reduce to ZeRO-2 + CP, none of which a rule of
    :data:`RULES` models; with the default once-per-step reduction (cp = 1) ZeRO-1 and HSDP are
    covered. And ep > 1 with ``m > 1``, ``pp = 1`` and ZeRO-0/1/2 (ep not a local axis of the accumulation): the
    dense gradients are all-reduced over ep inside the loop every microbatch (one microbatch, or ZeRO-3, is covered).
    """
    p = layout.parallel
    if p.pp > 1 and RUNTIME_SCHEDULE[p.schedule] != "gpipe":
        why = _one_f_one_b_not_covered(layout, local_axes)
        if why:
            return why
    why = static_not_covered(layout, training, model)
    if why:
        return why
    if p.ep > 1 and layout.microbatches > 1 and p.pp == 1 and p.zero_stage < 3 and "ep" not in local_axes:
        # tiny-moe dp 4 x ep 2, 2 microbatches: the compiled dp all-reduce read 1,243 KiB against 974 predicted
        return (f"ep > 1 with {layout.microbatches} microbatches: the runtime's accumulation loop runs the expert "
                "dispatch under GSPMD, so XLA all-reduces the dense gradients over ep (and gathers the embedding's "
                "cotangent) inside the loop, once per microbatch, a pattern no runtime rule models; one microbatch "
                "(--global-batch = dp x microbatch_size) and ZeRO-3 (reduced per microbatch anyway) are covered")
    replicas = p.dp // (p.dp_shard or p.dp) if p.zero_stage else 1
    odd = p.zero_stage == 1 or replicas > 1 or (p.zero_stage == 2 and p.cp > 1)
    if layout.microbatches == 1 or p.pp > 1 or local_axes or not odd:
        return None
    what = f"HSDP ({replicas} replicas)" if replicas > 1 else f"ZeRO-{p.zero_stage}" + (" + CP" if p.cp > 1 else "")
    why = "cp > 1" if p.cp > 1 else "grad_sync='per_microbatch'"
    return (f"{what} with {layout.microbatches} microbatches under the GSPMD accumulation ({why}): XLA "
            f"reduces inside the accumulation loop in a pattern no runtime rule models; the runtime's "
            f"once-per-step reduction (grad_sync='per_step', cp = 1) is covered")


def static_not_covered(layout: Layout, training: TrainingSpec | None = None,
                       model: ModelSpec | None = None) -> str | None:
    """The reasons of :func:`not_covered` that the plan alone decides (cp, sequence parallelism or ZeRO-3 with
    pp > 1; sequence parallelism, cp or ZeRO with bf16 compute; with ``model``, tp above its KV heads), known before
    anything is compiled; None otherwise."""
    p = layout.parallel
    if model is not None and not model.is_mla and p.tp > model.kv_heads:
        return (f"tp={p.tp} above n_kv_heads={model.kv_heads} (KV replication): the runtime keeps all "
                f"{model.kv_heads} KV heads on every tp rank and all-gathers them where Megatron-LM gives each rank "
                f"one replicated head (the planner's count); validate tp <= {model.kv_heads}")
    if p.pp > 1 and p.cp > 1:
        return ("cp > 1 with pp > 1: inside the pipeline the runtime all-gathers K/V (the ring attention does "
                "not compile in the pipeline's scan) and the GPipe rules are stated for cp = 1")
    if p.pp > 1 and p.sp and p.tp > 1:
        return ("sequence parallelism with pp > 1: inside the runtime's GPipe scan XLA all-gathers the sequence "
                "shards and reduces the norm gradients over tp on every tick in patterns no rule models (tiny-llama "
                "pp=2 tp=2: the tp all-reduce 10x the planner's bytes); validate pp with tp and without --sp")
    if p.zero_stage == 3 and p.sp and p.tp > 1 and p.cp > 1:
        return ("ZeRO-3 with sequence parallelism and cp > 1: GSPMD reshards the gathered weights and the sequence "
                "shards between the tp and cp axes (all-gathers and all-to-alls over cp, sends over dp) in patterns "
                "no rule models (tiny-llama tp 2 cp 2: 440 KiB of such collectives); ZeRO-1 / 2 with tp + sp + cp, "
                "and ZeRO-3 with tp + cp without --sp, are covered")
    if p.zero_stage == 3 and p.pp > 1:
        return ("ZeRO-3 with pp > 1: the runtime's GPipe scan gathers each stage's weights on every one of its "
                f"m + pp - 1 = {layout.microbatches + p.pp - 1} ticks (bubble ticks included), which neither "
                "zero3_gather policy prices")
    narrow = training is not None and narrow_compute(training)
    if narrow and p.sp:
        return ("sequence parallelism with bf16 compute: XLA:CPU gathers and reduce-scatters the bf16 sequence "
                "shards in patterns the rules model for fp32 only (tiny-llama: twice the planner's all-gather "
                "bytes); validate it with --compute-dtype fp32")
    if narrow and p.cp > 1:
        return ("cp > 1 with bf16 compute: XLA:CPU sends the bf16 ring's K/V blocks in fp32 (twice the planner's "
                "SendRecv bytes) and all-reduces gradients over cp beside the dp x cp reduction (tiny-llama cp 2, seq "
                "1024: 832 KiB over cp no rule models); validate it with --compute-dtype fp32")
    if narrow and p.zero_stage > 0:
        return (f"ZeRO-{p.zero_stage} with bf16 compute: the runtime reduce-scatters fp32 gradient shards, reduces "
                f"the replicated leaves in bf16, a dtype mix no runtime rule "
                f"models; validate it with --compute-dtype fp32")
    return None


def rules_table() -> list[str]:
    """The markdown table of every registered rule (docs/validation.md): name, what it changes
    (collectives / memory), where it applies, its reason (docstring) and its delta."""
    lines = ["| rule | changes | applies to | what XLA / the runtime does instead | delta |",
             "|---|---|---|---|---|"]
    for r in RULES + MEMORY_RULES:
        lines.append(f"| `{r.name}` | {r.kind} | {r.applies} | {r.reason.replace('``', '`')} | {r.delta} |")
    return lines


__all__ = ["Change", "MEMORY_RULES", "PlanContext", "RULES", "Rule", "RuntimeDelta", "narrow_compute",
           "memory_deltas", "memory_rule", "not_covered", "pipeline_memory_deltas", "rule", "rules_table",
           "runtime_deltas", "runtime_stage_params"]
