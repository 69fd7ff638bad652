"""Training setup: sequence length, batch, optimizer and precision policy.

Bytes per parameter of model state (ZeRO paper, Rajbhandari et al. 2020, Sec. 3.1: mixed-precision
Adam keeps 2 + 2 + K bytes per parameter with K = 12 for fp32 master weights and the two fp32
Adam moments):

===========================  =======  ======  ========  =========  ======================
policy                       params   grads   master    optimizer  total (B/param)
===========================  =======  ======  ========  =========  ======================
``bf16-mixed`` (default)     2        2       4         8          16  (ZeRO paper, K=12)
``bf16-mixed-fp32-grads``    2        4       4         8          18  (Megatron-LM main grads)
``fp16-mixed``               2        2       4         8          16  (fp16 with loss scaling)
``fp16-mixed-fp32-grads``    2        4       4         8          18  (Megatron-LM fp16 + fp32 grads)
``fp32-params``              4        4*      0         8          12 + transient grads
``fp32``                     4        4       0         8          16 (fp32 compute, CPU tests)
===========================  =======  ======  ========  =========  ======================

``*`` transient: gradients exist only between backward and the update (MaxText's default of fp32
weights with bf16 compute); they are counted in the peak but not in the persistent model state.

The fp16 policies are the bf16 ones with fp16 weights and activations (dynamic loss scaling; Micikevicius et al.
2018, "Mixed Precision Training", Sec. 3): the same bytes and, on GPUs, the same 16-bit tensor-core rate (NVIDIA A100
/ H100 / B200 and AMD MI300X datasheets list equal dense fp16 and bf16 TFLOPS); they are what V100-era runs and
configs use (Megatron-LM ``--fp16``: gradients in fp16 unless ``--accumulate-allreduce-grads-in-fp32``, arguments.py;
DeepSpeed ``fp16.enabled``: FP16_Optimizer / the ZeRO optimizer with fp32 master weights). TPUs have no fp16 matmul
units (:meth:`~shardplan.specs.hardware.HardwareSpec.peak_flops` refuses fp16 there).

``TrainingSpec.optimizer_dtype`` changes the master and optimizer columns of any policy:

================  ========  =================  ===============================================
optimizer_dtype   master    Adam moments       source
================  ========  =================  ===============================================
``fp32`` (dflt)   policy's  2 x 4 B            ZeRO paper Sec. 3.1 (K = 12); Megatron-LM default
``bf16-moments``  policy's  2 x 2 B            DeepSeek-V3 report (arXiv:2412.19437) Sec. 3.3.3;
                                               Megatron-LM ``--use-precision-aware-optimizer
                                               --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16``
``bf16``          0         2 x 2 B            NeMo ``optim: {name: distributed_fused_adam,
                                               dtype: bf16}``: Apex DistributedFusedAdam keeps no
                                               master copy when its state dtype is the model's
                                               (NeMo megatron_base_model.py ``store_params``)
================  ========  =================  ===============================================
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shardplan import limits as L
from shardplan.errors import ConfigError, did_you_mean, short_repr
from shardplan.specs.framework import FrameworkProfile, OptimizerDtype


class PrecisionPolicy(BaseModel):
    """Bytes per element of each kind of training state.

    Attributes:
        param_bytes: working copy of the weights used in forward/backward.
        grad_bytes: gradient (accumulation) buffer.
        master_bytes: separate fp32 master copy (0 when the working copy is already fp32).
        optimizer_bytes: optimizer moments (Adam: m and v in fp32 = 8).
        activation_bytes: stored activations (2 for bf16/fp16).
        grads_transient: gradients are freed by the fused update and not kept across steps.
        compute_dtype: dtype of the matmuls ('bf16', 'fp16', 'fp8', 'fp4' or 'fp32'), selects the peak FLOP/s
            (:meth:`~shardplan.specs.hardware.HardwareSpec.peak_flops`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    param_bytes: int = Field(default=2, gt=0, le=16)
    grad_bytes: int = Field(default=2, gt=0, le=16)
    master_bytes: int = Field(default=4, ge=0, le=16)
    optimizer_bytes: int = Field(default=8, ge=0, le=32)
    activation_bytes: int = Field(default=2, gt=0, le=16)
    grads_transient: bool = False
    compute_dtype: Literal["bf16", "fp16", "fp8", "fp4", "fp32"] = "bf16"

    @property
    def quantized(self) -> bool:
        """The linear layers run in a scaled low-precision format ('fp8' or 'fp4'): their saved inputs are the
        quantized copies and the attention core and LM head stay 16-bit (Transformer Engine recipes)."""
        return self.compute_dtype in QUANTIZED_INPUT_BYTES

    @property
    def model_state_bytes_per_param(self) -> int:
        """Persistent bytes/param without sharding: params + grads (unless transient) + master + optimizer."""
        grads = 0 if self.grads_transient else self.grad_bytes
        return self.param_bytes + grads + self.master_bytes + self.optimizer_bytes


#: bytes per element a quantized GEMM reads: fp8 1 B; NVFP4 a 4-bit E2M1 value plus one FP8 E4M3 scale per
#: 16-element block, 0.5 + 1/16 = 0.5625 B (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
#: Inference", 2025: 16-value micro-blocks with an E4M3 scale and an FP32 per-tensor scale)
QUANTIZED_INPUT_BYTES: dict[str, float] = {"fp8": 1.0, "fp4": 0.5625}

#: optimizer-state dtypes (``TrainingSpec.optimizer_dtype``; module docstring table)
OPTIMIZER_DTYPES: tuple[str, ...] = get_args(OptimizerDtype)

PRECISION_POLICIES: dict[str, PrecisionPolicy] = {
    "bf16-mixed": PrecisionPolicy(name="bf16-mixed"),
    "bf16-mixed-fp32-grads": PrecisionPolicy(name="bf16-mixed-fp32-grads", grad_bytes=4),
    # fp16 with loss scaling (module docstring): Megatron-LM --fp16 keeps fp16 gradients (arguments.py:
    # accumulate_allreduce_grads_in_fp32 defaults to False and only --bf16 forces it), --fp16
    # --accumulate-allreduce-grads-in-fp32 fp32 ones; DeepSpeed fp16.enabled reduces fp16 gradients
    "fp16-mixed": PrecisionPolicy(name="fp16-mixed", compute_dtype="fp16"),
    "fp16-mixed-fp32-grads": PrecisionPolicy(name="fp16-mixed-fp32-grads", grad_bytes=4, compute_dtype="fp16"),
    "fp32-params": PrecisionPolicy(name="fp32-params", param_bytes=4, grad_bytes=4, master_bytes=0,
                                   grads_transient=True),
    "fp8-mixed": PrecisionPolicy(name="fp8-mixed", compute_dtype="fp8"),
    # fp8 primary weights: the working copy of the weights lives in fp8 (1 B/param; the fp32 master stays in the
    # optimizer) and ZeRO / FSDP gather it in fp8. Sources: Megatron-Core --fp8-param-gather ("keep the compute param
    # in fp8 (do not use any other intermediate dtype) and perform the param all-gather in fp8"), set by every
    # Megatron-Bridge FP8-CS recipe (megatron/bridge/training/mixed_precision.py bf16_with_fp8_current_scaling_mixed:
    # fp8_param_gather=True); Transformer Engine fp8_model_init (FP8 primary weights)
    "fp8-params": PrecisionPolicy(name="fp8-params", compute_dtype="fp8", param_bytes=1),
    # NVFP4 linear layers (4-bit E2M1 values with an FP8 E4M3 scale per 16 elements and an fp32 scale per tensor) on
    # Blackwell's fp4 tensor cores, the rest as fp8-mixed (bf16 working weights, fp32 master). Sources: Transformer
    # Engine's NVFP4BlockScaling recipe; Megatron-LM --fp4-format e2m1 --fp4-recipe nvfp4 (MLPerf Training v5.1
    # NVIDIA Llama 3.1 405B configs); NVIDIA, "Pretraining Large Language Models with NVFP4" (2025)
    "nvfp4-mixed": PrecisionPolicy(name="nvfp4-mixed", compute_dtype="fp4"),
    # everything in fp32 (CPU runs and exact-loss tests): 4 + 4 + 8 = 16 B/param, 4-byte activations
    "fp32": PrecisionPolicy(name="fp32", param_bytes=4, grad_bytes=4, master_bytes=0, activation_bytes=4,
                            compute_dtype="fp32"),
}


def precision_policy(name: str) -> PrecisionPolicy:
    """Look up a named precision policy.

    Raises:
        ConfigError: for an unknown name (lists the legal names, and the closest ones: those it begins, else
            difflib's matches).
    """
    try:
        return PRECISION_POLICIES[name]
    except (KeyError, TypeError):
        # the names are lower case; read case-insensitively, as framework names are (breaker pass 56: BF16-MIXED)
        if isinstance(name, str) and name.lower() in PRECISION_POLICIES:
            return PRECISION_POLICIES[name.lower()]
        hint = did_you_mean(name, PRECISION_POLICIES, cutoff=0.5, prefixes=True)
        raise ConfigError(f"precision={short_repr(name)} is unknown{hint}; legal: {', '.join(PRECISION_POLICIES)}",
                          field="precision", value=name, legal=PRECISION_POLICIES) from None


class TrainingSpec(BaseModel):
    """What one optimizer step processes and how.

    Attributes:
        seq_len: tokens per sequence s.
        global_batch_size: sequences per optimizer step (across all data-parallel ranks).
        precision: precision policy (see module docstring).
        optimizer: 'adamw' (8 bytes of moments per parameter) or 'sgd' (momentum: 4 bytes).
        attention: 'flash' (fused, no s x s scores stored; Dao et al. 2022) or 'naive' (scores,
            softmax and dropout of size a*s*s materialised, Korthikanti et al. 2022 Table 2).
        dropout: whether dropout masks are stored (1 byte/element, Korthikanti et al. 2022 Sec. 4.1).
        causal: causal attention (halves attention-core FLOPs, Megatron ``num_floating_point_operations``).
        framework: the training framework's profile (overheads, overlap, loss, allocator;
            :class:`~shardplan.specs.framework.FrameworkProfile`), default Megatron-LM.
        moe_capacity_factor: MoE token dropping with expert capacity = capacity factor x tokens x
            top_k / experts (Switch Transformer, Fedus et al. 2022 Sec. 2.2; GShard Sec. 2.2): every
            expert computes and exchanges a buffer of that capacity. None: dropless (MegaBlocks,
            Gale et al. 2023), the default of Megatron-LM and most recent MoE recipes.
        moe_imbalance: dropless routing's load on the busiest expert rank over the mean (>= 1): the
            slowest rank's expert GEMMs, AllToAll payload and expert activations scale by it (1 =
            perfectly balanced, what auxiliary-loss-balanced training approaches).
        moe_routing: which experts a token's top_k picks, for what DeepEP deduplicates
            (:func:`shardplan.cost.axes.ep.deepep_copy_share`): 'uniform' (distinct experts uniformly at
            random: learned balanced routing, or Megatron-LM's ``--moe-router-force-load-balancing``,
            which routes on random logits) or 'round_robin' (token i to experts i*k .. i*k + k - 1 mod
            E, contiguous: NeMo AutoModel's ``FakeBalancedGate``, the ``fake_balanced_gate: true`` of its
            benchmark recipes, nemo_automodel/components/moe/layers.py).
        optimizer_dtype: dtype of the optimizer state (module docstring table): 'fp32' (fp32
            moments), 'bf16-moments' (bf16 moments, the policy's master copy kept) or 'bf16' (bf16
            moments and no master copy). Applied to ``precision`` at construction: the moments'
            bytes halve, and 'bf16' sets ``master_bytes`` to 0. None (not given): the framework
            profile's ``optimizer_dtype`` where it has one (NeMo AutoModel: 'bf16'), else 'fp32'; the
            validated spec always holds the resolved value.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq_len: int = Field(gt=0, le=L.MAX_SEQ_LEN, description="tokens per sequence")
    global_batch_size: int = Field(gt=0, le=L.MAX_BATCH_TOKENS, description="sequences per optimizer step")
    precision: PrecisionPolicy = Field(default_factory=lambda: PRECISION_POLICIES["bf16-mixed"])
    optimizer: Literal["adamw", "sgd"] = "adamw"
    attention: Literal["flash", "naive"] = "flash"
    dropout: bool = False
    causal: bool = True
    framework: FrameworkProfile = Field(default_factory=lambda: _megatron_profile())
    moe_capacity_factor: float | None = Field(default=None, ge=L.MIN_CAPACITY_FACTOR, le=L.MAX_CAPACITY_FACTOR)
    moe_imbalance: float = Field(default=1.0, ge=1.0, le=64.0)
    moe_routing: Literal["uniform", "round_robin"] = "uniform"
    optimizer_dtype: OptimizerDtype | None = None

    @field_validator("optimizer_dtype", "moe_routing", mode="before")
    @classmethod
    def _choice_case(cls, v):
        """Choice names in any case, as the command-line flags take them (``BF16`` is ``bf16``)."""
        return v.lower() if isinstance(v, str) else v

    @property
    def moe_load(self) -> float:
        """Tokens the busiest expert rank handles over the balanced share: the capacity factor with
        token dropping, else the imbalance (see the attributes)."""
        return self.moe_capacity_factor if self.moe_capacity_factor is not None else self.moe_imbalance

    @model_validator(mode="after")
    def _tokens(self) -> "TrainingSpec":
        if self.global_batch_size * self.seq_len > L.MAX_BATCH_TOKENS:
            raise ConfigError(f"global batch {self.global_batch_size:,} x seq_len {self.seq_len:,} = "
                              f"{self.global_batch_size * self.seq_len:,} tokens per step; legal: at most 2^40 = "
                              f"{L.MAX_BATCH_TOKENS:,}", field="global_batch_size", value=self.global_batch_size)
        return self

    @model_validator(mode="after")
    def _opt(self) -> "TrainingSpec":
        base = PRECISION_POLICIES.get(self.precision.name)
        if base is not None and base.compute_dtype == self.precision.compute_dtype:
            # a named policy's state bytes start from the policy (a dumped spec re-validated with another
            # optimizer state or framework must not keep the bytes the old ones set)
            reset = {k: getattr(base, k) for k in ("grad_bytes", "master_bytes", "optimizer_bytes")}
            object.__setattr__(self, "precision", self.precision.model_copy(update=reset))
        if self.optimizer == "sgd" and self.precision.optimizer_bytes == 8:
            object.__setattr__(self, "precision", self.precision.model_copy(update={"optimizer_bytes": 4}))
        if self.optimizer_dtype is None:
            # not asked for: the framework's code decides the optimizer state (FrameworkProfile.optimizer_dtype)
            object.__setattr__(self, "optimizer_dtype", self.framework.optimizer_dtype or "fp32")
        if self.optimizer_dtype != "fp32":
            # bf16 moments: 2 B per moment (AdamW keeps two, SGD with momentum one); set, not scaled,
            # so that validating a dumped spec again gives the same bytes
            update = {"optimizer_bytes": 2 * (2 if self.optimizer == "adamw" else 1)}
            if self.optimizer_dtype == "bf16":
                update["master_bytes"] = 0  # the bf16 working weights are the optimizer's copy
            object.__setattr__(self, "precision", self.precision.model_copy(update=update))
        g = self.framework.grad_buffer_bytes
        if g is not None and g != self.precision.grad_bytes:
            # the framework's gradient-accumulation buffer decides the gradient bytes (stored and reduced)
            object.__setattr__(self, "precision", self.precision.model_copy(update={"grad_bytes": g}))
        return self

    def with_framework(self, framework: FrameworkProfile, optimizer_dtype: OptimizerDtype | None = None
                       ) -> "TrainingSpec":
        """This setup under another framework profile, with what the profile decides resolved again: the
        optimizer state where ``optimizer_dtype`` is None (``FrameworkProfile.optimizer_dtype``) and the
        gradient buffer (``grad_buffer_bytes``). ``model_copy(update=...)`` would keep the old profile's.

        Raises:
            ConfigError / pydantic.ValidationError: as the constructor.
        """
        data = self.model_dump()
        data.update(framework=framework, optimizer_dtype=optimizer_dtype)
        return TrainingSpec.model_validate(data)

    @property
    def global_batch_tokens(self) -> int:
        """Tokens per optimizer step = global_batch_size * seq_len."""
        return self.global_batch_size * self.seq_len

    @classmethod
    def from_tokens(cls, seq_len: int, global_batch_tokens: int, sequences_multiple: int = 1, **kw) -> "TrainingSpec":
        """Build from a batch in tokens. ``sequences_multiple``: what the layout needs the sequence count to be a
        multiple of (dp x microbatch_size, :func:`shardplan.inputs.build_inputs`); the token counts an error
        suggests give such a count.

        Raises:
            ConfigError: if ``global_batch_tokens`` is not a multiple of ``seq_len``.
        """
        L.check_range("seq_len", seq_len, 1, L.MAX_SEQ_LEN, "tokens")
        L.check_range("global_batch_tokens", global_batch_tokens, 1, L.MAX_BATCH_TOKENS, "tokens")
        if global_batch_tokens < seq_len:
            raise ConfigError(f"global_batch_tokens={global_batch_tokens} must be >= seq_len={seq_len} "
                              f"(at least one sequence)", field="global_batch_tokens", value=global_batch_tokens)
        if global_batch_tokens % seq_len:
            step = seq_len * sequences_multiple
            lo = global_batch_tokens // step * step
            near = [t for t in (lo, lo + step) if 0 < t <= L.MAX_BATCH_TOKENS]
            which = (f"multiples of seq_len x {sequences_multiple} = {step}: the layout needs a multiple of "
                     f"{sequences_multiple} sequences, whole microbatches on every data-parallel rank"
                     if sequences_multiple > 1 else "multiples of seq_len")
            raise ConfigError(
                f"global_batch_tokens={global_batch_tokens} is not a multiple of seq_len={seq_len}; legal "
                f"global_batch_tokens nearby: " + ", ".join(f"{t} ({t // seq_len} sequences)" for t in near)
                + f" ({which})", field="global_batch_tokens", value=global_batch_tokens, legal=near)
        return cls(seq_len=seq_len, global_batch_size=global_batch_tokens // seq_len, **kw)


def _megatron_profile() -> FrameworkProfile:
    """The built-in Megatron-LM profile (``shardplan.presets.frameworks``, with its fitted constants), the default
    ``TrainingSpec.framework``; imported here lazily because the presets import the specs."""
    from shardplan.presets.frameworks import framework_profile
    return framework_profile("megatron")
