"""Reproduce published training runs (``shardplan/data/published_runs.csv``) with the planner.

Each CSV row is turned into a model, hardware, training and parallel spec; the planner predicts
tokens/s per device and the predicted figure is expressed in the *source's own metric* (MFU, HFU
or TFLOP/s per device under the source's FLOP-counting convention), so that conventions cancel:

``predicted_metric = reported_metric * predicted_throughput / reported_throughput``.

Reported throughput comes, in order of preference, from the step time, the tokens/s, or the
reported metric divided by the source's FLOPs per token:

* Narayanan et al. 2021 Eq. 3 (also BLOOM, GPT-NeoX): ``96 L h^2 (1 + s/6h + V/16Lh)`` FLOPs per
  token, recompute included, bidirectional attention counted.
* PaLM-style MFU (Korthikanti et al. 2022, MaxText, torchtitan, llm-foundry): model FLOPs with
  attention counted without causal halving, :func:`shardplan.cost.flops.model_flops_per_token`
  with ``causal=False``.
"""

from __future__ import annotations

import csv
import functools
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from shardplan.cost.flops import model_flops_per_token
from shardplan.cost.step import Estimate, estimate
from shardplan.errors import ConfigError, divisors
from shardplan.limits import MAX_BATCH_TOKENS, MAX_DEVICES
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.models import MODELS
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

#: CSV ``model`` column -> preset
MODEL_MAP = {
    "GPT-1.7B": "gpt-1.7b", "GPT-3.6B": "gpt-3.6b", "GPT-7.5B": "gpt-7.5b", "GPT-18.4B": "gpt-18.4b",
    "GPT-39.1B": "gpt-39.1b", "GPT-76.1B": "gpt-76.1b", "GPT-145.6B": "gpt-145.6b", "GPT-310.1B": "gpt-310.1b",
    "GPT-529.6B": "gpt-529.6b", "GPT-1008.0B": "gpt-1008b", "GPT-174.6B": "gpt-175b", "GPT-22B": "gpt-22b",
    "GPT-175B": "gpt-175b", "GPT-530B": "gpt-530b", "GPT-1T": "gpt-1t", "GPT-530B (MT-NLG shape)": "gpt-530b",
    "BLOOM-176B": "bloom-176b", "GPT-NeoX-20B": "gpt-neox-20b", "GLM-130B": "glm-130b",
    "GPT-175B (MegaScale config)": "gpt-175b-megascale", "GPT3-175B": "gpt3-175b", "LLAMA2-70B": "llama-2-70b",
    "LLAMA3-70B": "llama-3-70b", "LLAMA3-8B": "llama-3-8b", "Nemotron-340B": "nemotron-4-340b",
    "Llama 3 8B": "llama-3-8b", "Llama 3 70B": "llama-3-70b", "Llama 2 13B": "llama-2-13b",
    "MaxText synthetic 32B (global_parameter_scale=32)": "maxtext-32b",
    "MaxText synthetic 64B (global_parameter_scale=64)": "maxtext-64b",
    "MPT-70B": "mpt-70b", "MPT-30B": "mpt-30b", "MPT-13B": "mpt-13b", "MPT-7B": "mpt-7b",
}


@dataclass
class RowResult:
    """One CSV row reproduced: the metric the source reports, its value, the prediction, the error."""

    id: str
    covered: bool
    reason: str = ""
    metric: str = ""
    reported: float = math.nan
    predicted: float = math.nan
    layout: str = ""
    bound: str = ""
    fits: bool = True

    @property
    def error(self) -> float:
        """Relative error predicted / reported - 1."""
        return self.predicted / self.reported - 1.0


def _f(x: str) -> float | None:
    """A numeric CSV cell, or None when it is empty, not a number, NaN or infinite (pandas writes
    missing values as 'nan')."""
    x = (x or "").strip()
    try:
        v = float(x)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


#: scale-out bandwidth per GPU of clusters that differ from the DGX reference (one-way, bytes/s)
CLUSTER_SCALE_OUT = {
    "bloom_176b": (6.25e9, "Jean Zay: 4x Omni-Path 100 Gb/s per 8-GPU node (BLOOM tr11 README)"),
    "gptneox_20b": (12.5e9, "4x ConnectX-6 HDR 200 Gb/s per 8-GPU node (Black et al. 2022, Sec. 3.2)"),
}


#: dense peaks of torchtitan's Grand Teton "H100 96GB" (HBM2e, 500 W power limit): torchtitan
#: benchmarks/llama3_h100_202412_torchtitan.md, footnote 2: "the actual peak TFLOPs number is between SXM and NVL, and
#: we don't know its exact value"; the midpoint of the H100 NVL datasheet's (bf16 1,671 / fp8 3,341 TFLOP/s with
#: sparsity: 835.5 / 1,670.5 dense) and the H100 SXM's (989.4 / 1,978.9 dense), within 8.5% of either bound
H100_96GB_500W_PEAKS = {"peak_flops_bf16": (835.5e12 + 989.4e12) / 2, "peak_flops_fp8": (1670.5e12 + 1978.9e12) / 2}

#: hardware column (case-insensitive substring, first match) -> preset and field overrides (the H800, A800 and GH200
#: presets say how they differ from the H100 / A100); the "H100 96GB" of torchtitan's benchmarks has 96 GB of HBM2e at
#: 2.4 TB/s (torchtitan docs/performance.md, Grand Teton platform) and the peaks above; "v5p-128"-style TPU slices are one ICI
#: domain of 64 chips; an AWS p4de node is an A100 80GB node with 400 Gb/s of EFA (data/clusters/aws-p4de.yaml);
#: Google Cloud's A3 High and A3 Mega VMs are H100 nodes with 800 and 1,600 Gb/s for GPU traffic
#: (data/clusters/gcp-a3-high.yaml, gcp-a3-mega.yaml); Jean Zay's A100 partition is an A100 80GB node with four
#: 100 Gb/s Omni-Path links (data/clusters/jean-zay-a100.yaml)
CLUSTERS_DIR = Path(__file__).parent / "data" / "clusters"  # the shipped cluster files
HARDWARE_OF_COLUMN = (
    ("p4de", str(CLUSTERS_DIR / "aws-p4de.yaml"), {}), ("a100 80gb (jean zay)", str(CLUSTERS_DIR / "jean-zay-a100.yaml"), {}),
    ("a3 high", str(CLUSTERS_DIR / "gcp-a3-high.yaml"), {}), ("a3 mega", str(CLUSTERS_DIR / "gcp-a3-mega.yaml"), {}),
    ("a100-40gb", "a100-40gb", {}), ("a100 40gb", "a100-40gb", {}), ("a100", "a100-80gb", {}),
    ("h800", "h800", {}),
    ("gh200", "gh200", {}), ("a800", "a800", {}),
    ("h100 96gb", "h100-sxm", {"hbm_bytes": 96 * 2**30, "hbm_bandwidth": 2.4e12, **H100_96GB_500W_PEAKS}),
    ("h200", "h200", {}), ("h100", "h100-sxm", {}), ("gb300", "gb300", {}), ("b300", "b300", {}),
    ("gb200", "gb200", {}), ("b200", "b200", {}), ("v100", "v100", {}), ("mi250x", "mi250x", {}), ("mi300x", "mi300x", {}), ("mi325x", "mi325x", {}), ("mi355x", "mi355x", {}), ("mi350x", "mi350x", {}),
    ("tpu v5p", "tpu-v5p", {"scale_up_size": 64}), ("tpu v5e", "tpu-v5e", {}), ("tpu v6e", "tpu-v6e", {}),
    ("trillium", "tpu-v6e", {}), ("tpu v4", "tpu-v4", {}), ("tpu7x", "tpu7x", {}), ("ironwood", "tpu7x", {}),
)


def hardware_of(text: str):
    """The hardware preset a published row's ``hardware`` text names (:data:`HARDWARE_OF_COLUMN`:
    ignoring case, whitespace, dashes, underscores and dots, presets.hardware.squeeze_hardware_name; first
    match), with its overrides.

    Raises:
        ConfigError: if no entry matches (the message lists the known names).
    """
    from shardplan.presets.hardware import squeeze_hardware_name as squeeze  # "H100 96 GB" is "h100-96gb"
    low = squeeze(text)
    for key, preset, overrides in HARDWARE_OF_COLUMN:
        if squeeze(key) in low:
            return load_hardware(preset, **overrides)
    raise ConfigError(f"hardware {text!r} has no preset mapping; known: {', '.join(k for k, _, _ in HARDWARE_OF_COLUMN)}",
                      field="hardware", value=text)


def _hardware(row: dict):
    """The row's hardware (:func:`hardware_of`), with per-cluster scale-out overrides
    (:data:`CLUSTER_SCALE_OUT`).

    Raises:
        ConfigError: as :func:`hardware_of`.
    """
    hw = row.get("hardware", "")
    if row.get("id", "") in CLUSTER_SCALE_OUT:
        base = "a100-40gb" if "40GB" in hw else "a100-80gb"
        return load_hardware(base, scale_out_bandwidth=CLUSTER_SCALE_OUT[row["id"]][0])
    return hardware_of(hw)


#: source -> framework the run used (papers' Sec. "software"); DeepSpeed for the ZeRO-3 rows of
#: Narayanan et al. 2021 Table 2 and for the Megatron-DeepSpeed / GPT-NeoX / GLM runs; the Megatron-LM releases
#: of 2021-2023 (Narayanan, Korthikanti, MegaScale's baseline) as 'megatron-legacy' (pipeline sends not overlapped)
FRAMEWORK_OF_SOURCE = (("Narayanan21 Table 2", "zero3", "deepspeed"), ("Narayanan21", "", "megatron-legacy"),
                       ("Korthikanti22", "", "megatron-legacy"), ("MegaScale", "", "megatron-legacy"),
                       ("NeMo", "", "megatron"),
                       ("BLOOM", "", "deepspeed"), ("GPT-NeoX", "", "deepspeed"), ("GLM-130B", "", "deepspeed"),
                       ("MaxText", "", "maxtext"), ("torchtitan", "", "torchtitan"),
                       ("llm-foundry", "", "llm-foundry"),
                       # not in the shared set: sources a user's table may name
                       ("DeepSpeed", "", "deepspeed"), ("nanotron", "", "nanotron"), ("picotron", "", "nanotron"),
                       ("Ultra-Scale Playbook", "", "nanotron"), ("fms-fsdp", "", "pytorch-fsdp"), ("IBM", "", "pytorch-fsdp"),
                       ("FSDP", "", "pytorch-fsdp"), ("OLMo", "", "pytorch-fsdp"), ("Composer", "", "pytorch-fsdp"),
                       ("Levanter", "", "maxtext"), ("Pax", "", "paxml"), ("JAX", "", "maxtext"))

#: sources whose runs are NVIDIA NeMo performance recipes (sequence parallelism and TP communication
#: overlap on whenever tp > 1: NeMo-Framework-Launcher conf ``ub_tp_comm_overlap: True``)
NEMO_RECIPE_SOURCES = ("NeMo", "dgxc", "DGX Cloud", "Megatron-Bridge", "MLPerf")

#: optimizer-state dtype of NeMo recipes that set it (``TrainingSpec.optimizer_dtype``), by model preset.
#: Nemotron-4-340B: ``optim: {name: distributed_fused_adam, dtype: bf16}`` in NeMo-Framework-Launcher
#: conf/training/nemotron/nemotron_340b.yaml (commit 6daee02) and NVIDIA/dgxc-benchmarking
#: nemotron/nemotron4-340b-synth.yaml (the recipe of the dgxc table); NeMo's megatron_base_model.py then
#: sets ``store_params=False`` (state dtype = model dtype): no master copy, bf16 Adam moments
NEMO_OPTIMIZER_DTYPE = {"nemotron-4-340b": "bf16"}


def framework_of(row: dict) -> str:
    """The framework a published row ran (:data:`FRAMEWORK_OF_SOURCE`, case-insensitive, first
    match); an explicit ``framework`` column wins; 'megatron' if unknown. A row of a PyTorch stack whose
    profile lacks a dimension the row uses (PP, CP or EP > 1: 'pytorch-fsdp' has no pipelining or
    context parallelism, 'nanotron' prices neither CP nor EP inside the data-parallel group, while
    e.g. picotron does) is priced with the PyTorch-native profile that has them, 'torchtitan', so that
    the run is estimated rather than refused."""
    from shardplan.presets.frameworks import FRAMEWORKS
    name = _framework_of(row)
    fw = FRAMEWORKS[name]
    used = {dim: (_f(row.get(dim, "")) or 1) > 1 for dim in ("PP", "CP", "EP")}
    if (used["PP"] and not fw.pipeline_parallel) or (used["CP"] and not fw.context_parallel) or (
            used["EP"] and not fw.expert_parallel):
        return "torchtitan"
    return name


def _framework_of(row: dict) -> str:
    """:func:`framework_of` before the pipelining / context-parallel check."""
    from shardplan.presets.frameworks import FRAMEWORKS
    named = (row.get("framework") or "").strip().lower()
    if named in FRAMEWORKS:
        return named
    src, rid = (row.get("source") or "").lower(), (row.get("id") or "").lower()
    for source, id_part, name in FRAMEWORK_OF_SOURCE:
        if source.lower() in src and id_part in rid:
            return name
    return "megatron"


def _zero(text: str) -> tuple[int, bool]:
    """(ZeRO stage, gradient reduction overlapped) a ``zero_stage_or_fsdp`` cell names: PyTorch FSDP's
    SHARD_GRAD_OP is ZeRO-2 and NO_SHARD plain DDP (torch.distributed.fsdp.ShardingStrategy); FULL_SHARD,
    FSDP2 and hybrid sharding (HSDP) shard the parameters, ZeRO-3."""
    t = text.lower()
    if "shard_grad_op" in t or "shard grad op" in t:
        return 2, True
    if "no_shard" in t:
        return 0, True
    if "zero-3" in t or "fsdp" in t or "hsdp" in t or "hybrid" in t:
        return 3, True
    if "zero-2" in t:
        return 2, True
    if "zero-1" in t or "distributed optimizer" in t or "zero stage not verified" in t:
        return 1, True
    return 0, "no grad overlap" not in t


def _hybrid_shard(text: str, dp: int, scale_up_size: int) -> int | None:
    """The ZeRO-3 shard group of a hybrid-sharded row (HSDP / HYBRID_SHARD: shards inside a group,
    replicas across groups; torch.distributed.fsdp.ShardingStrategy.HYBRID_SHARD shards within a node):
    an "N-way shard" the cell names, else the devices of a node that divide dp
    (``gcd(dp, scale_up_size)``); None when the cell does not say hybrid.

    Raises:
        ConfigError: a named shard size that does not divide dp (the legal sizes are listed).
    """
    t = text.lower()
    if "hsdp" not in t and "hybrid" not in t:
        return None
    named = re.search(r"(\d+)\s*-?\s*way", t)
    if not named:
        return math.gcd(dp, scale_up_size)
    size = int(named.group(1))
    if not 0 < size <= dp or dp % size:
        legal = divisors(dp)
        raise ConfigError(f"zero_stage_or_fsdp={text!r}: a {size}-way shard group does not divide DP={dp}; legal "
                          f"shard sizes: {', '.join(map(str, legal))}", field="zero_stage_or_fsdp", value=text,
                          legal=legal)
    return size


def _recompute(text: str) -> str:
    t = (text or "").lower()
    if t.startswith("full") or t.startswith("yes"):
        return "full"
    if "selective" in t or "minimal" in t:
        return "selective"
    return "none"


def _norm(name: str) -> str:
    """A model name without case, spaces, dashes or underscores ('Llama 3.1 405B' -> 'llama3.1405b')."""
    return "".join(c for c in name.lower() if c.isalnum() or c == ".")


def _model_from_dims(row: dict) -> ModelSpec | None:
    """A model built from the row's own shape columns (n_layers, d_model, n_heads, n_kv_heads, ffn_dim,
    vocab, experts, top_k), or None when they are missing. The MLP is the one (SwiGLU or GeLU) whose
    parameter count is closer to the row's ``params_B`` (SwiGLU when it has none)."""
    dims = {k: _f(row.get(k, "")) for k in ("n_layers", "d_model", "n_heads", "ffn_dim", "vocab")}
    if any(v is None for v in dims.values()):
        return None
    kv = _f(row.get("n_kv_heads", ""))
    experts, top_k = _f(row.get("experts", "")) or 0, _f(row.get("top_k", "")) or 0
    base = dict(name=row.get("model") or "custom", n_layers=int(dims["n_layers"]), d_model=int(dims["d_model"]),
                n_heads=int(dims["n_heads"]), n_kv_heads=int(kv) if kv else None, ffn_dim=int(dims["ffn_dim"]),
                vocab_size=int(dims["vocab"]), source="published_runs row shape columns")
    if experts:
        base.update(n_experts=int(experts), top_k=int(top_k or 1))
    options = [ModelSpec(**base, mlp="swiglu"), ModelSpec(**base, mlp="gelu", norm="layernorm", linear_bias=True)]
    target = _f(row.get("params_B", ""))
    if not target:
        return options[0]
    return min(options, key=lambda m: abs(m.n_params / 1e9 - target))


def resolve_model(row: dict) -> ModelSpec:
    """The row's model: :data:`MODEL_MAP`, else a preset whose name matches the ``model`` column
    without case, spaces or dashes ('LLAMA3.1-405B' -> llama-3.1-405b; a Llama 3.x minor version
    falls back to the 3.0 shapes it shares, 'Llama 3.1 70B' -> llama-3-70b), else the row's shape
    columns (:func:`_model_from_dims`).

    Raises:
        ConfigError: if none of these gives a model (the message says what the row needs).
    """
    name = row.get("model", "")
    if name in MODEL_MAP:
        return MODELS[MODEL_MAP[name]]
    key = _norm(name)
    candidates = {_norm(k): v for k, v in MODEL_MAP.items()} | {_norm(k): k for k in MODELS}
    for k in (key, key.replace("3.1", "3").replace("3.3", "3")):
        if k in candidates:
            return MODELS[candidates[k]]
    spec = _model_from_dims(row)
    if spec is None:
        raise ConfigError(f"no preset for model {name!r} and the row has no n_layers, d_model, n_heads, ffn_dim and "
                          f"vocab to build one", field="model", value=name)
    return spec


def _int(row: dict, key: str, default: int | None = None) -> int:
    """A positive integer column, ``default`` when empty or 'nan'.

    Raises:
        ConfigError: if the column is empty and has no default, is not a number, or is not a
            positive integer.
    """
    v = _f(row.get(key, ""))
    if v is None:
        if default is None or (row.get(key) or "").strip().lower() not in ("", "nan"):
            raise ConfigError(f"{key}={row.get(key)!r} in row {row.get('id')!r} is not a number",
                              field=key, value=row.get(key))
        return default
    if v < 1 or v != int(v):
        raise ConfigError(f"{key}={row.get(key)!r} in row {row.get('id')!r} is not a positive integer",
                          field=key, value=row.get(key))
    top = MAX_BATCH_TOKENS if key in ("seq_len", "global_batch_tokens", "global_batch_sequences") else MAX_DEVICES
    if v > top:  # before any loop over it (a pipeline split of PP stages)
        raise ConfigError(f"{key}={row.get(key)!r} in row {row.get('id')!r} is larger than {top:,}; legal: 1 to {top:,}",
                          field=key, value=row.get(key))
    return int(v)


def clean_row(row: dict) -> dict:
    """A row with every missing cell as ``""``: ``csv.DictReader`` gives None for the cells of a short
    row (and keys of None for the extra ones of a long row), which the parsers here read as empty."""
    return {k: ("" if v is None else str(v)) for k, v in row.items() if k is not None}


def row_inputs(row: dict) -> tuple[ModelSpec, object, TrainingSpec, ParallelConfig, int]:
    """Specs for one CSV row (missing cells read as empty, :func:`clean_row`).

    Raises:
        ConfigError: when the row lacks what the planner needs or holds a value it cannot use (the
            message names the column and the value).
    """
    row = clean_row(row)
    try:
        return _row_inputs(row)
    except ValidationError as e:
        from shardplan.loaders import config_error
        err = config_error(e, f"row {row.get('id') or '?'!r}")
        raise ConfigError(str(err), field=err.field, value=err.value, legal=err.legal) from None


def _row_precision(row: dict) -> str:
    """The precision policy name of a calibration row's ``precision`` text: Megatron-Bridge's FP8 current scaling
    keeps fp8 weights (mixed_precision.py bf16_with_fp8_current_scaling_mixed: fp8_param_gather=True) ->
    fp8-params; other fp8 -> fp8-mixed; 'fp32 weights' -> fp32-params; torch FSDP's amp_bf16 / torchtitan (bf16
    parameters, gradients reduced in fp32) -> bf16-mixed-fp32-grads; else bf16-mixed."""
    prec = (row.get("precision") or "").lower()
    if "fp8" in prec and "megatron-bridge" in (row.get("source") or "").lower() and (
            "cs" in re.split(r"[^a-z0-9]+", prec) or "current" in prec):
        return "fp8-params"
    if "fp8" in prec:
        return "fp8-mixed"
    if "fp32 weights" in prec:
        return "fp32-params"
    if "amp_bf16" in prec or "torchtitan" in row.get("source", ""):
        return "bf16-mixed-fp32-grads"
    return "bf16-mixed"


def _row_inputs(row: dict) -> tuple[ModelSpec, object, TrainingSpec, ParallelConfig, int]:
    model = resolve_model(row)
    hw = _hardware(row)
    n = _int(row, "n_devices")
    seq = _int(row, "seq_len")
    gbs = int(_f(row.get("global_batch_sequences", "")) or _int(row, "global_batch_tokens") // seq)
    policy = PRECISION_POLICIES[_row_precision(row)]
    src = row.get("source", "")
    old_megatron = any(k in src for k in ("Narayanan21", "Korthikanti22", "BLOOM", "GPT-NeoX", "GLM-130B"))
    nemo = any(k.lower() in src.lower() for k in NEMO_RECIPE_SOURCES)  # SP and TP overlap on whenever tp > 1
    training = TrainingSpec(seq_len=seq, global_batch_size=gbs, precision=policy,
                            optimizer_dtype=NEMO_OPTIMIZER_DTYPE.get(model.name, "fp32") if nemo else "fp32",
                            framework=framework_profile(framework_of(row)),
                            attention="naive" if old_megatron else "flash",
                            dropout=any(k in src for k in ("Narayanan21", "Korthikanti22", "GPT-NeoX", "GLM")))
    zero, overlap = _zero(row.get("zero_stage_or_fsdp", ""))
    tp, pp, cp = _int(row, "TP", 1), _int(row, "PP", 1), _int(row, "CP", 1)
    ep = _int(row, "EP", 1) if model.is_moe else 1  # a dense model's EP cell (1, or blank) says nothing
    dp = _int(row, "DP", max(1, n // (tp * pp * cp)))  # the README: DP = n_devices / (TP x PP x CP)
    vp = _int(row, "virtual_pipeline_stages", 1)
    mbs = _int(row, "microbatch_size", 1)
    pp_layers = None
    if model.n_layers % pp:
        # Megatron-DeepSpeed / GLM split uneven layer counts; the heavier stages sit in the middle
        base, extra = divmod(model.n_layers, pp)
        pp_layers = tuple(base + (1 if 0 < i <= extra else 0) for i in range(pp))
        if extra == pp - 1:
            pp_layers = tuple(base + (1 if i < extra else 0) for i in range(pp))
    if gbs % (dp * mbs):
        if gbs < dp * mbs:
            raise ConfigError(f"global batch {gbs} in row {row.get('id')!r} is smaller than DP x microbatch_size = "
                              f"{dp} x {mbs}", field="global_batch_sequences", value=gbs)
        gbs = gbs // (dp * mbs) * (dp * mbs)  # GPT-NeoX: 1538 in the paper, mbs 4 x GA 32 x DP 12 = 1536 in config
        training = training.model_copy(update={"global_batch_size": gbs})
    dp_shard = _hybrid_shard(row.get("zero_stage_or_fsdp", ""), dp, hw.scale_up_size)
    if "DCN slice" in row.get("zero_stage_or_fsdp", ""):
        dp_shard = dp // max(1, n // hw.scale_up_size)
    rc_text = row.get("recompute", "")
    parallel = ParallelConfig(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep, zero_stage=zero, dp_shard=dp_shard,
                              sp="sequence parallel" in rc_text or ((nemo or training.framework.tp_requires_sp)
                                                                     and tp > 1),
                              tp_overlap=nemo and tp > 1, microbatch_size=mbs,
                              schedule="interleaved" if vp > 1 else "1f1b", virtual_stages=vp,
                              recompute=_recompute(rc_text), overlap_grad_reduce=overlap,
                              pp_layers=pp_layers,
                              fsdp_unit="tensor" if "ZeRO-3 (DeepSpeed)" in row.get("zero_stage_or_fsdp", "") else "block")
    return model, hw, training, parallel, n


def _source_flops_per_token(row: dict, model: ModelSpec, seq: int) -> float:
    d = row.get("tflops_definition") or "unspecified"
    if "Eq.3" in d or "incl. recompute" in d or d == "unspecified":
        L, h, V = model.n_layers, model.d_model, model.vocab_size
        return 96.0 * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h))
    return model_flops_per_token(model, seq, causal=False)


def reported_throughput(row: dict, model: ModelSpec, hw, training: TrainingSpec, n: int
                        ) -> tuple[str, float, float] | None:
    """(metric name, reported value, reported tokens/s per device) of a row: the metric is the
    reported MFU, else HFU, else TFLOP/s per device, else tokens/s per device; the throughput comes
    from the step time, else the tokens/s, else the metric over the source's FLOPs per token
    (:func:`_source_flops_per_token`) and peak (``peak_tflops_basis``, else the hardware's bf16 or
    fp8 peak). None when the row reports none of them, or a figure that is not positive."""
    tokens = training.global_batch_tokens
    basis = (row.get("peak_tflops_basis") or "").split()
    fp8 = training.precision.compute_dtype == "fp8"
    peak = _f(basis[0]) * 1e12 if basis and _f(basis[0]) else hw.peak_flops("fp8" if fp8 else "bf16")
    fpt = _source_flops_per_token(row, model, training.seq_len)
    per_dev = (_f(row.get("reported_tokens_per_sec", "")) or 0) / (n if row.get("tokens_per_sec_scope") == "total" else 1)
    if _f(row.get("reported_MFU", "")) is not None:
        metric, value = "MFU %", _f(row["reported_MFU"])
    elif _f(row.get("reported_HFU", "")) is not None:
        metric, value = "HFU %", _f(row["reported_HFU"])
    elif _f(row.get("reported_TFLOPs_per_device", "")) is not None:
        metric, value = "TFLOP/s per device", _f(row["reported_TFLOPs_per_device"])
    elif per_dev:
        return ("tokens/s per device", per_dev, per_dev) if per_dev > 0 else None
    elif _f(row.get("step_time_s", "")):
        v = tokens / _f(row["step_time_s"]) / n
        return ("tokens/s per device", v, v) if v > 0 else None
    else:
        return None
    if _f(row.get("step_time_s", "")):
        rep_tps = tokens / _f(row["step_time_s"]) / n
    elif per_dev:
        rep_tps = per_dev
    elif metric == "TFLOP/s per device":
        rep_tps = value * 1e12 / fpt
    else:
        rep_tps = value / 100 * peak / fpt
    return (metric, value, rep_tps) if value > 0 and rep_tps > 0 else None


def reproduce_row(row: dict) -> RowResult:
    """Predict one published run and express it in the source's metric."""
    row = clean_row(row)
    rid = row.get("id") or "?"
    try:
        model, hw, training, parallel, n = row_inputs(row)
    except (ConfigError, ValidationError, ArithmeticError) as e:  # ArithmeticError: a zero in a divided column
        return RowResult(rid, False, reason=f"{type(e).__name__}: {e}" if isinstance(e, ArithmeticError) else str(e))
    try:
        est = estimate(model, hw, training, parallel, n)
    except ConfigError as e:
        return RowResult(rid, False, reason=f"layout rejected: {e}")
    try:
        measured = reported_throughput(row, model, hw, training, n)
    except ArithmeticError as e:
        return RowResult(rid, False, reason=f"the row's reported figures cannot be used: {e}")
    if measured is None:
        return RowResult(rid, False, reason="the row reports no positive step time, tokens/s, MFU, HFU or TFLOP/s per device")
    metric, value, rep_tps = measured
    pred_tps = est.tokens_per_s / n
    return RowResult(rid, True, metric=metric, reported=value, predicted=value * pred_tps / rep_tps,
                     layout=est.parallel.short(), bound=est.bound, fits=est.fits)


#: the calibration set shipped with the package (a copy of shared/calibration/published_runs.csv)
DEFAULT_CSV = Path(__file__).resolve().parent / "data" / "published_runs.csv"


def load_rows(path: Path = DEFAULT_CSV) -> list[dict]:
    """Rows of ``published_runs.csv``.

    Raises:
        ConfigError: if the file cannot be read.
    """
    if not Path(path).exists():
        raise ConfigError(f"calibration file {path} not found", field="csv", value=str(path))
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(results: list[RowResult]) -> dict:
    """Median and max absolute relative error over covered rows."""
    errs = [abs(r.error) for r in results if r.covered]
    return {"covered": len(errs), "rows": len(results),
            "median_abs_error": statistics.median(errs) if errs else math.nan,
            "max_abs_error": max(errs) if errs else math.nan,
            "within_25pct": sum(e <= 0.25 for e in errs)}


@functools.lru_cache(maxsize=1)
def published_mfu_table() -> tuple[tuple[float, bool, float, str, bool], ...]:
    """Every covered published row as (bf16 peak FLOP/s of its chip, fp8 run?, measured MFU, row id, MoE model?).

    The MFU is in the planner's own definition (:attr:`shardplan.cost.step.Estimate.mfu`: model
    FLOPs incl. attention over the precision's peak, PaLM Appendix B) scaled by the row's measured
    over predicted throughput, so rows that report HFU, TFLOP/s or tokens/s compare alike.
    """
    out = []
    for row in load_rows():
        try:
            model, hw, training, parallel, n = row_inputs(row)
            est = estimate(model, hw, training, parallel, n)
        except ConfigError:
            continue
        r = reproduce_row(row)
        if r.covered and r.predicted:
            out.append((hw.peak_flops_bf16, training.precision.compute_dtype == "fp8",
                        est.mfu * r.reported / r.predicted, row["id"], model.is_moe))
    return tuple(out)


def best_published_mfu(peak_flops_bf16: float, fp8: bool) -> tuple[float, str] | None:
    """(highest measured MFU, where it comes from) among the published runs on a chip of the same bf16 peak (FLOP/s)
    and precision class: the shared rows (:func:`published_mfu_table`; "<row id> in shardplan/data/published_runs.csv")
    and, where the shared rows set a ceiling, the public runs the planner was never fitted on whose layout is not
    partly assumed (the ``best_mfu`` entries of shardplan/data/heldout_errors.json, written by
    ``benchmarks/error_bands.py``; "<run> (a public run of docs/accuracy.md)"): those raise the ceiling (a new user saw
    the note on most H100 estimates: the shared H100 BF16 best is 44.6%, public NeMo runs measured 55.6%) and, on a
    chip without a shared row (v5e, v6e, TPU7x), set it (a new user's Llama-3-8B plan on v5e-256 at 80.1% MFU had no
    note; MoE runs keep their own record, :func:`best_published_moe_mfu`). None without either."""
    from shardplan.accuracy_band import best_public_mfu
    rows = [(m, f"{rid} in shardplan/data/published_runs.csv") for peak, f8, m, rid, _ in published_mfu_table()
            if peak == peak_flops_bf16 and f8 == fp8]
    public = best_public_mfu(peak_flops_bf16, fp8)
    if public is not None:
        rows.append((public[0], f"{public[1]} (a public run of docs/accuracy.md)"))
    return max(rows) if rows else None


def best_published_moe_mfu(peak_flops_bf16: float, fp8: bool) -> tuple[float, str] | None:
    """(highest measured MFU, where it comes from) among the published mixture-of-experts runs on a chip of this bf16
    peak (FLOP/s) and precision class: the shared MoE rows and the held-out public MoE runs without a [B] tier (the
    band file's ``best_mfu_moe``, ``benchmarks/error_bands.py``); None when neither has one. MoE runs reach lower MFU
    than dense ones on the same chip (routing, permutation and expert GEMMs of a few hundred to a few thousand
    columns), so a MoE prediction is held to the MoE record (issue 9: the best MFU published for that hardware,
    precision and model class; the search's MoE #1s were 23-110% above every published MoE run of their chip)."""
    from shardplan.accuracy_band import best_public_mfu
    rows = [(m, f"{rid} in shardplan/data/published_runs.csv") for peak, f8, m, rid, moe in published_mfu_table()
            if moe and peak == peak_flops_bf16 and f8 == fp8]
    public = best_public_mfu(peak_flops_bf16, fp8, moe=True)
    if public is not None:
        rows.append((public[0], f"{public[1]} (a public run of docs/accuracy.md)"))
    return max(rows) if rows else None


def optimism_note(est: Estimate) -> str | None:
    """A warning when ``est.mfu`` exceeds the best MFU published on this chip and precision (:func:`mfu_ceiling`: the
    MoE record for a MoE model; no prediction above it without a stated reason), else None; None too for a layout predicted not to
    run (its MFU is not a claim) and for fp4 compute, which no shared run used. Both MFUs are the planner's definition (:func:`published_mfu_table`),
    which can differ from the figure a source prints (FLOPs counted with or without attention)."""
    if not est.runs or est.training.precision.compute_dtype == "fp4":  # the shared set has no fp4 run
        return None
    best = mfu_ceiling(est)
    if best is None or est.mfu <= best[0]:
        return None
    return (f"predicted MFU {est.mfu:.1%} is above the best published {best[2]} on a chip of this bf16 peak and this "
            "precision "
            f"({best[0]:.1%} as the planner counts MFU, {best[1]}): the "
            "prediction assumes communication fully hidden behind tuned kernels; treat it as an upper bound")


def mfu_ceiling(est: Estimate) -> tuple[float, str, str] | None:
    """(MFU, where it comes from, 'run' | 'MoE run') that :func:`optimism_note` holds ``est`` to: for a MoE model the
    MoE record of its chip and precision (:func:`best_published_moe_mfu`) where one exists, else the record of every
    run (:func:`best_published_mfu`); None without either."""
    fp8 = est.training.precision.compute_dtype == "fp8"
    if est.model.is_moe:
        moe = best_published_moe_mfu(est.hardware.peak_flops_bf16, fp8)
        if moe is not None:
            return moe[0], moe[1], "MoE run"
    best = best_published_mfu(est.hardware.peak_flops_bf16, fp8)
    return (best[0], best[1], "run") if best is not None else None
