"""Public training runs outside ``../shared`` that the planner is checked against (and, where
:mod:`fit_frameworks` says so, fitted on): each entry is
``(label, model preset, hardware, framework, precision, devices, seq_len, global batch, layout fields,
reported tokens/s/GPU, reported GiB or None)``. The framework may carry ``+field=value`` profile
overrides, the hardware ``+field=value`` integer HardwareSpec overrides and the precision ``+field=value``
TrainingSpec overrides. Each group cites its source.
"""

from __future__ import annotations

import statistics
from pathlib import Path

#: public runs outside the shared set, used as checks; benchmarks/fit_frameworks.py fits a few constants on some of
#: them (the Megatron-LM profile's two MoE costs on its MoE rows; the Blackwell, Blackwell Ultra and TPU v5e / v6e GEMM
#: rates on their rows), with leave-one-out errors in docs/accuracy.md:
#: (label, model, hardware text as a published row names it (calibration.hardware_of), framework, precision,
#: devices, seq_len, global batch, layout, reported tokens/s/GPU, reported GiB or None). torchtitan docs/performance.md (commit eaea6f6, Dec 2024; H100 96 GB HBM2e at a 500 W
#: power limit, below the SXM peak the preset assumes) and its earlier 405B table (2D FSDP + TP, bf16, full AC);
#: NVIDIA dgxc-benchmarking (llama3.1/README_70b.md and README_405b.md: NeMo 24.09;
#: nemo_megatron/README_175b.md; nemotron/README_340b.md: NeMo 24.11; all recipes with sequence parallelism and TP communication overlap, ub_tp_comm_overlap=True)
#: fms-fsdp README table (IBM + Meta, "Maximizing training throughput using PyTorch FSDP", 2024): Llama 2 shapes
#: (fms_fsdp/utils/config_utils.py; 34B = the CodeLlama-34B shape), seq 4096, bf16 FSDP (FSDP1, eager, no
#: torch.compile), batch = per-GPU batch x 128 with no accumulation; HSDP shards inside a node (dp_shard 8),
#: activation checkpointing of every block = full recompute; on AWS p4de nodes (data/clusters/aws-p4de.yaml)
H96 = "H100 96GB"
#: the Megatron-LM profile with Transformer Engine's FlashAttention-2 backend instead of cuDNN's fused attention
#: (``FrameworkProfile.attention_kernel``): dgxc-benchmarking nemotron/configure.sh exports NVTE_FUSED_ATTN=0 for
#: the 340B recipe; the NeMo 24.03 long-sequence table (below)
FA2_MEGATRON = "megatron+attention_kernel=fa2"
#: suffix of a precision name in :data:`PUBLIC_CHECKS` ("+field=value" pairs set TrainingSpec fields): the
#: recipe's optimizer state is bf16 with no master copy (``TrainingSpec.optimizer_dtype='bf16'``; the recipe
#: is cited at :data:`shardplan.calibration.NEMO_OPTIMIZER_DTYPE`)
OPTIMIZER_BF16 = "+optimizer_dtype=bf16"
#: the same for bf16 Adam moments beside an fp32 master copy (the DeepSeek-V3 recipes)
OPTIMIZER_BF16_MOMENTS = "+optimizer_dtype=bf16-moments"
P4DE = "A100 80GB (AWS p4de)"
FMS_FSDP = tuple(
    (f"fms-fsdp README: Llama 2 {size} {'HSDP' if shard == 8 else 'FSDP'}, 128 A100", model, P4DE, "pytorch-fsdp",
     "bf16-mixed", 128, 4096, 128 * mbs, dict(dp=128, zero_stage=3, dp_shard=shard, microbatch_size=mbs,
                                              recompute=recompute), tps, None)
    for size, model, shard, mbs, recompute, tps in (
        ("7B", "llama-2-7b", 8, 2, "none", 3760), ("13B", "llama-2-13b", 8, 1, "none", 1700),
        ("34B", "codellama-34b", 128, 8, "full", 772), ("70B", "llama-2-70b", 128, 6, "full", 380)))
#: torchtitan docs/performance.md (older A100 tables, FSDP2 on 64 A100 80GB): the rows the shared set does not
#: hold. "selective layer" AC (every second block fully recomputed) has no option of its own; it is priced as the
#: profile's op-level selective recompute, and says so in the label
TT_A100 = tuple(
    (f"torchtitan A100 table: {name}, 64 A100", model, "A100 80GB", "torchtitan", "bf16-mixed-fp32-grads", 64, seq,
     64 * mbs, dict(dp=64, zero_stage=3, microbatch_size=mbs, recompute=rc), tps, None)
    for name, model, seq, mbs, rc, tps in (
        ("Llama 3 8B, selective layer AC (priced as op)", "llama-3-8b", 8192, 1, "selective", 2904),
        ("Llama 2 13B, selective layer AC (priced as op)", "llama-2-13b", 4096, 2, "selective", 1914),
        ("Llama 2 13B, selective op AC", "llama-2-13b", 4096, 2, "selective", 1904),
        ("Llama 2 70B, selective op AC, batch 1", "llama-2-70b", 4096, 1, "selective", 355),
        ("Llama 2 70B, full AC, batch 2", "llama-2-70b", 4096, 2, "full", 353)))
#: llm-foundry scripts/train/benchmarking/README.md (commit 061f2c7): MPT 760M-70B on 8-64 H100 80GB (amp_bf16) and
#: 125M-30B on 8 A100 80GB (amp_bf16, 1600 Gbps RoCE), FSDP FULL_SHARD with Composer's per-GPU microbatch, the rows the
#: shared set does not hold (it holds 5 of them). (model, seq, GPUs, microbatch, gradient accumulation, tokens/s/GPU,
#: activation checkpointing). Global batch = GPUs x microbatch x accumulation sequences; tokens/s/GPU as printed (the
#: table's MFU counts attention without the causal half). The MPT yamls run attn_impl: triton (the llm-foundry profile)
_FOUNDRY_H100 = (
        ("70b", 2048, 32, 2, 16, 882, True), ("30b", 8192, 8, 1, 21, 1384, True), ("30b", 4096, 8, 1, 21, 1802, True), ("30b", 2048, 16, 10, 3, 2263, True),
        ("30b", 2048, 8, 3, 21, 2002, True), ("30b", 1024, 8, 6, 21, 2084, True), ("13b", 32768, 8, 1, 3, 1976, True), ("13b", 16384, 8, 3, 3, 2985, True),
        ("13b", 4096, 8, 10, 3, 4717, True), ("13b", 2048, 32, 2, 1, 4811, False), ("13b", 2048, 16, 2, 1, 4767, False), ("13b", 2048, 8, 2, 1, 4792, False),
        ("13b", 1024, 8, 40, 3, 5502, True), ("7b", 65536, 8, 1, 2, 1956, True), ("7b", 32768, 8, 2, 2, 3318, True), ("7b", 8192, 8, 8, 2, 6935, True),
        ("7b", 4096, 8, 16, 2, 8611, True), ("7b", 1024, 8, 64, 2, 10203, True), ("3b", 65536, 8, 1, 2, 3262, True), ("3b", 32768, 8, 3, 6, 5873, True),
        ("3b", 16384, 8, 1, 6, 11152, False), ("3b", 8192, 8, 3, 6, 16578, False), ("3b", 4096, 8, 5, 6, 20964, False), ("3b", 2048, 64, 6, 3, 22525, False),
        ("3b", 2048, 32, 6, 3, 23021, False), ("3b", 2048, 16, 10, 3, 24142, False), ("3b", 1024, 8, 20, 6, 27046, False), ("3b", 512, 8, 40, 6, 27965, False),
        ("1b", 65536, 8, 1, 2, 5506, True), ("1b", 32768, 8, 1, 4, 12025, False), ("1b", 16384, 8, 2, 4, 19649, False), ("1b", 8192, 8, 3, 4, 29157, False),
        ("1b", 4096, 8, 7, 4, 38535, False), ("1b", 2048, 64, 20, 1, 44402, False), ("1b", 2048, 32, 20, 1, 45130, False), ("1b", 2048, 16, 20, 1, 46037, False),
        ("1b", 2048, 8, 14, 1, 45455, False), ("1b", 1024, 8, 18, 4, 48910, False), ("1b", 512, 8, 56, 4, 52275, False), ("760m", 32768, 8, 1, 2, 16291, False),
        ("760m", 16384, 8, 3, 2, 27815, False), ("760m", 8192, 8, 6, 2, 41825, False), ("760m", 4096, 8, 12, 2, 55459, False), ("760m", 2048, 32, 24, 1, 67971, False),
        ("760m", 2048, 16, 24, 1, 68551, False), ("760m", 2048, 8, 24, 2, 63147, False), ("760m", 1024, 8, 48, 2, 78581, False), ("760m", 512, 8, 96, 2, 83749, False),
)
_FOUNDRY_A100 = (
        ("30b", 8192, 8, 1, 21, 574, True), ("30b", 4096, 8, 1, 21, 814, True), ("30b", 1024, 8, 6, 21, 946, True), ("30b", 512, 8, 12, 21, 967, True),
        ("13b", 32768, 8, 1, 3, 1016, True), ("13b", 16384, 8, 3, 3, 1431, True), ("13b", 8192, 8, 5, 3, 1795, True), ("13b", 4096, 8, 10, 3, 2060, True),
        ("13b", 2048, 8, 2, 3, 2262, False), ("13b", 1024, 8, 40, 3, 2330, True), ("7b", 65536, 8, 1, 2, 1013, True), ("7b", 32768, 8, 2, 2, 1672, True),
        ("7b", 16384, 8, 4, 2, 2453, True), ("7b", 8192, 8, 8, 2, 3206, True), ("7b", 4096, 8, 16, 2, 3684, True), ("7b", 2048, 8, 6, 2, 4641, False),
        ("7b", 1024, 8, 64, 2, 4357, True), ("3b", 65536, 8, 1, 2, 1767, True), ("3b", 32768, 8, 3, 6, 3029, True), ("3b", 16384, 8, 1, 6, 5529, False),
        ("3b", 8192, 8, 3, 6, 7695, False), ("3b", 4096, 8, 5, 6, 9457, False), ("3b", 2048, 8, 10, 2, 10811, False), ("3b", 1024, 8, 20, 6, 11580, False),
        ("3b", 512, 8, 40, 6, 12127, False), ("1b", 65536, 8, 1, 2, 3044, True), ("1b", 32768, 8, 1, 4, 6275, False), ("1b", 16384, 8, 2, 4, 9956, False),
        ("1b", 8192, 8, 3, 4, 13814, False), ("1b", 4096, 8, 7, 4, 17807, False), ("1b", 2048, 8, 14, 4, 20513, False), ("1b", 1024, 8, 18, 4, 22112, False),
        ("1b", 512, 8, 56, 4, 23148, False), ("760m", 65536, 8, 1, 2, 4143, True), ("760m", 32768, 8, 1, 2, 8802, False), ("760m", 16384, 8, 3, 2, 14274, False),
        ("760m", 8192, 8, 6, 2, 20933, False), ("760m", 4096, 8, 12, 2, 27351, False), ("760m", 2048, 8, 24, 2, 32434, False), ("760m", 1024, 8, 48, 2, 29765, False),
        ("760m", 512, 8, 96, 2, 29446, False), ("350m", 65536, 8, 1, 2, 7524, False), ("350m", 32768, 8, 2, 2, 13652, False), ("350m", 16384, 8, 4, 2, 23559, False),
        ("350m", 8192, 8, 8, 2, 36569, False), ("350m", 4096, 8, 16, 2, 49555, False), ("350m", 2048, 8, 32, 2, 58782, False), ("350m", 1024, 8, 64, 2, 64813, False),
        ("350m", 512, 8, 128, 2, 69330, False), ("125m", 65536, 8, 1, 2, 20368, False), ("125m", 32768, 8, 2, 2, 36407, False), ("125m", 16384, 8, 4, 2, 60040, False),
        ("125m", 8192, 8, 8, 2, 90392, False), ("125m", 4096, 8, 16, 2, 118396, False), ("125m", 2048, 8, 40, 2, 142830, False), ("125m", 1024, 8, 64, 2, 156468, False),
        ("125m", 512, 8, 128, 2, 165681, False),
)


def _foundry(hw: str, rows: tuple, precision: str = "bf16-mixed-fp32-grads") -> tuple:
    """PUBLIC_CHECKS entries of llm-foundry README rows ``(model, seq, GPUs, microbatch, accumulation, tokens/s/GPU,
    activation checkpointing)`` on ``hw``: FSDP FULL_SHARD over every GPU, global batch GPUs x microbatch x
    accumulation. ``precision``: Composer's amp_bf16 (fp32 gradient reduction, the default), PURE bf16
    ('bf16-mixed') or amp_fp8 ('fp8-mixed', named in the label)."""
    tag = " FP8" if precision.startswith("fp8") else ""
    return tuple(
        (f"llm-foundry README {hw}{tag}: MPT-{m.upper()} seq {s:,}, {g} GPUs, mbs {mbs}{', AC' if ac else ''}",
         f"mpt-{m}", hw, "llm-foundry", precision, g, s, g * mbs * ga,
         dict(dp=g, zero_stage=3, microbatch_size=mbs, recompute="full" if ac else "none"), tps, None)
        for m, s, g, mbs, ga, tps, ac in rows)


LLM_FOUNDRY_H100 = _foundry("H100 80GB", _FOUNDRY_H100)
LLM_FOUNDRY_A100 = _foundry("A100 80GB", _FOUNDRY_A100)
#: the same README's A100 40GB table (MPT 125M-70B on 8-128 GPUs, 1600 Gbps RoCE, Composer's PURE bf16 mixed precision:
#: bf16 compute and gradient reduction; FSDP keeps the fp32 shard), read after the Triton-attention fit and never fitted
#: on: the held-out check of that fit (accuracy.py ``foundry_held_out``)
_FOUNDRY_A100_40GB = (
    ("70b", 2048, 128, 4, 1, 376, True), ("70b", 2048, 64, 2, 1, 276, True), ("30b", 2048, 128, 6, 1, 865, True), ("30b", 2048, 32, 4, 1, 857, True),
    ("13b", 8192, 8, 1, 16, 1407, True), ("13b", 4096, 8, 2, 16, 1603, True), ("13b", 2048, 128, 16, 1, 1972, True), ("13b", 2048, 64, 16, 1, 1976, True),
    ("13b", 2048, 32, 14, 1, 1998, True), ("13b", 2048, 16, 10, 1, 1993, True), ("13b", 2048, 8, 4, 16, 1668, True), ("13b", 1024, 8, 8, 16, 1727, True),
    ("13b", 512, 8, 16, 16, 1763, True), ("7b", 16384, 8, 1, 4, 2249, True), ("7b", 8192, 8, 3, 4, 2887, True), ("7b", 4096, 8, 6, 4, 3366, True),
    ("7b", 2048, 128, 18, 1, 3623, True), ("7b", 2048, 64, 18, 1, 3665, True), ("7b", 2048, 32, 18, 1, 3725, True), ("7b", 2048, 16, 16, 1, 3645, True),
    ("7b", 2048, 8, 12, 4, 3679, True), ("7b", 1024, 8, 24, 4, 3854, True), ("7b", 512, 8, 48, 4, 3895, True), ("3b", 32768, 8, 1, 4, 2955, True),
    ("3b", 16384, 8, 2, 8, 4465, True), ("3b", 8192, 8, 1, 8, 7149, False), ("3b", 4096, 8, 2, 8, 8777, False), ("3b", 2048, 128, 6, 1, 9538, False),
    ("3b", 2048, 64, 6, 1, 9736, False), ("3b", 2048, 32, 6, 1, 9914, False), ("3b", 2048, 16, 5, 1, 9750, False), ("3b", 2048, 8, 5, 8, 10065, False),
    ("3b", 1024, 8, 10, 8, 10731, False), ("3b", 512, 8, 20, 8, 11324, False), ("1b", 32768, 8, 1, 4, 5095, True), ("1b", 16384, 8, 1, 8, 9715, False),
    ("1b", 8192, 8, 2, 8, 13474, False), ("1b", 4096, 8, 4, 8, 16856, False), ("1b", 2048, 128, 10, 1, 18647, False), ("1b", 2048, 64, 10, 1, 19001, False),
    ("1b", 2048, 32, 10, 1, 15555, False), ("1b", 2048, 16, 8, 1, 19085, False), ("1b", 2048, 8, 8, 8, 19271, False), ("1b", 1024, 8, 16, 8, 20959, False),
    ("1b", 512, 8, 32, 8, 21782, False), ("760m", 32768, 8, 1, 4, 7183, True), ("760m", 16384, 8, 1, 4, 13914, False), ("760m", 8192, 8, 3, 4, 20106, False),
    ("760m", 4096, 8, 6, 4, 25863, False), ("760m", 2048, 128, 12, 1, 28940, False), ("760m", 2048, 64, 12, 1, 29344, False), ("760m", 2048, 32, 12, 1, 29648, False),
    ("760m", 2048, 16, 12, 1, 29607, False), ("760m", 2048, 8, 12, 4, 30173, False), ("760m", 1024, 8, 24, 4, 33422, False), ("760m", 512, 8, 48, 4, 34938, False),
    ("350m", 32768, 8, 1, 4, 13416, False), ("350m", 16384, 8, 2, 4, 22896, False), ("350m", 8192, 8, 4, 4, 34933, False), ("350m", 4096, 8, 8, 4, 46833, False),
    ("350m", 2048, 128, 18, 1, 51934, False), ("350m", 2048, 64, 18, 1, 52689, False), ("350m", 2048, 32, 18, 1, 53811, False), ("350m", 2048, 16, 18, 1, 55413, False),
    ("350m", 2048, 8, 16, 4, 55995, False), ("350m", 1024, 8, 32, 4, 62523, False), ("350m", 512, 8, 64, 4, 66284, False), ("125m", 32768, 8, 1, 4, 32651, False),
    ("125m", 16384, 8, 2, 3, 55484, False), ("125m", 8192, 8, 5, 3, 86858, False), ("125m", 4096, 8, 13, 3, 115162, False), ("125m", 2048, 128, 26, 1, 123936, False),
    ("125m", 2048, 64, 26, 1, 125234, False), ("125m", 2048, 32, 26, 1, 127122, False), ("125m", 2048, 16, 26, 1, 130535, False), ("125m", 2048, 8, 26, 3, 136334, False),
    ("125m", 1024, 8, 52, 3, 148289, False), ("125m", 512, 8, 104, 3, 156735, False),
)
LLM_FOUNDRY_A100_40GB = _foundry("A100 40GB", _FOUNDRY_A100_40GB, "bf16-mixed")
#: the README's H100 FP8 table (amp_fp8: Transformer Engine linear layers in fp8, attention and the rest in bf16), read
#: after every fit and never fitted on
_FOUNDRY_H100_FP8 = (
    ("3b", 32768, 8, 3, 6, 5856, True), ("3b", 8192, 8, 3, 6, 19146, False), ("3b", 2048, 8, 10, 6, 30586, False),
    ("3b", 512, 8, 40, 6, 36527, False), ("1b", 32768, 8, 1, 4, 12580, False), ("1b", 8192, 8, 2, 4, 32010, False),
    ("1b", 512, 8, 56, 4, 70315, False), ("350m", 32768, 8, 1, 4, 24439, False), ("350m", 16384, 8, 2, 4, 42929, False),
    ("350m", 512, 8, 56, 4, 154420, False),
)
LLM_FOUNDRY_H100_FP8 = _foundry("H100 80GB", _FOUNDRY_H100_FP8, "fp8-mixed")
#: Megatron-Turing NLG 530B (Smith et al. 2022, "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B",
#: Sec. 2.4): tp=8 pp=35 (DeepSpeed pipeline engine, 1F1B), mbs 1, global batch 1920, seq 2048, full activation
#: checkpointing, on 280 / 350 / 420 DGX A100 80GB nodes of Selene: 60.1 / 50.2 / 44.4 s per iteration (126 / 121 /
#: 113 TFLOP/s per GPU). tokens/s/GPU = 1920 x 2048 / iteration time / GPUs, e.g. 3,932,160 / 60.1 / 2240 = 29.2.
#: ZeRO stage not stated (ZeRO-1 as BLOOM's Megatron-DeepSpeed; dp=8-12 makes the choice worth < 1%)
MT_NLG = tuple(
    (f"MT-NLG 530B (Megatron-DeepSpeed), {n:,} A100", "gpt-530b", "A100 80GB", "deepspeed", "bf16-mixed", n, 2048,
     1920, dict(tp=8, pp=35, zero_stage=1, microbatch_size=1, recompute="full"), 1920 * 2048 / t / n, None)
    for n, t in ((2240, 60.1), (2800, 50.2), (3360, 44.4)))
#: torchtitan docs/performance.md (commit eaea6f6; benchmarks/llama3_h100_202412_torchtitan.md) Tables 2, 4, 5 and 6:
#: torch.compile + Float8 linears, priced as fp8-mixed with the torchtitan-compile profile, 96 GB H100 at 500 W
#: (calibration.H100_96GB_500W_PEAKS). That release compiled the TransformerBlocks only: the 2024 train.py calls a plain,
#: uncompiled loss_fn, and the memory says so (Table 1: 77.0 GiB compiled against 82.4 eager, where a compiled loss
#: alone would free 11.7 GiB of the eager loss's 16,384 x 128,256 x 10 B), so these rows keep the eager torchtitan
#: loss's 10 B per vocabulary element (bf16 logits 2 + fp32 upcast 4 + fp32 log-softmax 4): "+logit_bytes=10".
#: Tables 1 and 3's compiled rows (TT_H100_COMPILED_1D) likewise
#: Table 2: Llama 3.1 8B, 8 GPUs, local batch 1, full AC, FSDP 8/cp x CP cp at seq 32768 x cp. Table 4: 70B, FSDP 32 x
#: TP 8, local batch 16, full AC, without / with AsyncTP. Table 5: 405B, FSDP 8 x TP 8 x PP 8, AsyncTP, local batch 32
#: in 8 microbatches of 4 (torchtitan's default pp microbatch count = pp), full AC; with PP torchtitan keeps the
#: gathered parameters for the step (parallelize.py: reshard_after_forward = not pp_enabled) = zero3_gather='per_step'.
#: Table 6: 405B, TP 8 x PP 8 x FSDP 8/cp x CP cp, 1F1B, local batch 8 (microbatches of 1), seq 32768 x cp
_TTC = "torchtitan-compile+logit_bytes=10"
TT_H100_COMPILED = (
    *((f"torchtitan Table 2: Llama-3.1-8B FSDP {8 // cp} x CP {cp}, seq {32768 * cp:,} (compile+Float8)", "llama-3.1-8b",
       H96, _TTC, "fp8-mixed", 8, 32768 * cp, 8 // cp, dict(dp=8 // cp, cp=cp, zero_stage=3, microbatch_size=1,
                                                                    recompute="full"), tps, gib)
      for cp, tps, gib in ((1, 3890, 83.9), (2, 2540, 84.2), (4, 1071, 84.0), (8, 548, 84.5))),
    *((f"torchtitan Table 4: Llama-3.1-70B FSDP 32 x TP 8{label} (compile+Float8)", "llama-3-70b", H96, _TTC,
       "fp8-mixed", 256, 8192, 512, dict(dp=32, zero_stage=3, tp=8, sp=True, tp_overlap=overlap, microbatch_size=16,
                                         recompute="full"), tps, gib)
      for label, overlap, tps, gib in (("", False, 829, 71.9), (" + AsyncTP", True, 876, 67.6))),
    *((f"torchtitan Table 5: Llama-3.1-405B FSDP 8 x TP 8 x PP 8, {name} (compile+Float8)", "llama-3.1-405b", H96,
       _TTC, "fp8-mixed", 512, 8192, 256, dict(dp=8, zero_stage=3, zero3_gather="per_step", tp=8, sp=True,
                                                      tp_overlap=True, pp=8, microbatch_size=4, recompute="full", **sched),
       tps, gib)
      for name, sched, tps, gib in (("1F1B", {}, 100, 82.5),
                                    ("interleaved 1F1B (v=2)", dict(schedule="interleaved", virtual_stages=2), 128, 72.7))),
    *((f"torchtitan Table 6: Llama-3.1-405B TP 8 x PP 8 x FSDP {8 // cp} x CP {cp}, seq {32768 * cp:,} (compile+Float8)",
       "llama-3.1-405b", H96, _TTC, "fp8-mixed", 512, 32768 * cp, 64 // cp,
       dict(dp=8 // cp, cp=cp, zero_stage=3, zero3_gather="per_step", tp=8, sp=True, tp_overlap=True, pp=8,
            microbatch_size=1, recompute="full"), tps, gib)
      for cp, tps, gib in ((1, 76, 75.3), (2, 47, 75.9), (4, 31, 77.1), (8, 16, 84.9))),
)
#: the same page's Tables 1 and 3: Llama 3.1 8B, FSDP on 8 / 128 GPUs, local batch 2, seq 8192, per-op selective AC, with
#: torch.compile and with torch.compile + Float8 (their eager rows are in PUBLIC_CHECKS)
TT_H100_COMPILED_1D = tuple(
    (f"torchtitan Table {t}: Llama-3.1-8B FSDP, {n} GPUs ({what})", "llama-3.1-8b", H96, _TTC, prec, n, 8192, 2 * n,
     dict(dp=n, zero_stage=3, microbatch_size=2, recompute="selective"), tps, gib)
    for t, n, what, prec, tps, gib in ((1, 8, "compile", "bf16-mixed", 6667, 77.0),
                                       (1, 8, "compile+Float8", "fp8-mixed", 8532, 76.8),
                                       (3, 128, "compile", "bf16-mixed", 6514, 62.0),
                                       (3, 128, "compile+Float8", "fp8-mixed", 8380, 61.8)))
#: Megatron-Core MoE model zoo (yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/readme.md, NVIDIA): Qwen3-235B-A22B
#: on 256 H100 (InfiniBand 8 x 50 GB/s), bf16, seq 4096, global batch 2048; tokens/s/GPU = 2048 x 4096 / step time /
#: 256, e.g. 8,388,608 / 19.7 s / 256 = 1,663. DeepEP rows: moe_dispatcher='deepep'; "norm, act" recompute:
#: --recompute-modules layernorm moe_act; etp 1; Megatron-FSDP as ZeRO-3; the PP 32 x VPP 3 row fills 96 chunks with
#: 94 layers, the embedding and the loss. Not stated: the "+1f1b overlap" row (EP AllToAll hidden behind another
#: microbatch)
_NORM_ACT = dict(recompute="selective", recompute_modules=("layernorm", "moe_act"))
QWEN3_MOE = tuple(
    (f"Megatron MoE zoo: Qwen3-235B-A22B {label}, 256 H100", "qwen3-235b-a22b", "H100-SXM", "megatron", "bf16-mixed",
     256, 4096, 2048, dict(tp=tp, sp=True, ep=ep, etp=1, **rest), 2048 * 4096 / step / 256, None)
    for label, tp, ep, rest, step in (
        ("TP2 EP32 PP8 VPP4, DeepEP", 2, 32, dict(pp=8, schedule="interleaved", virtual_stages=4, zero_stage=1,
                                                  microbatch_size=1, moe_dispatcher="deepep", **_NORM_ACT), 19.7),
        ("TP2 EP8 FSDP, DeepEP, full AC", 2, 8, dict(zero_stage=3, microbatch_size=4, recompute="full",
                                                     moe_dispatcher="deepep"), 17.6),
        ("TP2 EP8 PP32 VPP3, AllToAll", 2, 8, dict(pp=32, schedule="interleaved", virtual_stages=3, zero_stage=1,
                                                   microbatch_size=1, **_NORM_ACT), 24.2),
        ("TP4 EP8 PP8 VPP4, DeepEP", 4, 8, dict(pp=8, schedule="interleaved", virtual_stages=4, zero_stage=1,
                                                microbatch_size=1, moe_dispatcher="deepep"), 29.0)))
#: Llama 3 405B pre-training (Dubey et al. 2024, "The Llama 3 Herd of Models", Table 4): bf16, seq 8192, 16M tokens
#: per step (2048 sequences), TP 8, CP 1, PP 16, DP 64 / 128 on 8,192 / 16,384 H100 80GB, 430 / 400 TFLOP/s per GPU.
#: tokens/s/GPU = TFLOP/s / the planner's model FLOPs per token (2.524e12, causal; 2.625e12 counted non-causally,
#: 4% fewer tokens). Sec. 3.3.2: interleaved schedule with one layer less on the first and last stage, i.e. 126 + 2
#: = 16 x 8 slots; virtual_stages is not published (8 assumed); the Megatron-LM profile stands in for Meta's stack.
#: Data parallelism (Sec. 3.3.2): FSDP that "shards optimizer states and gradients, but for model shards we do not
#: reshard after forward computation": the parameters stay whole per tp x pp rank, so ZeRO-2, with the gradients
#: sharded (FSDP's reduce-scatter after each microbatch's backward: zero2_accumulation 'per_microbatch', not the
#: megatron profile's full main-grad buffer; added 2026-12-05 with that field, not fitted: -10% / -9% with it, and
#: 84 GiB, over the 80 GB H100, with the full buffer). Meta's stack runs that sharding beside PP 16, which Megatron-LM
#: does not (the megatron profile's pipeline_zero_stages 0, 1): the row allows ZeRO-2 with pipelining inline
LLAMA3_405B = tuple(
    (f"Llama 3 405B (Dubey et al. 2024 Table 4), {n:,} H100, v=8 assumed", "llama-3.1-405b", "H100-SXM",
     "megatron+zero2_accumulation=per_microbatch+pipeline_zero_stages=[0,1,2]",
     "bf16-mixed", n, 8192, 2048, dict(tp=8, sp=True, pp=16, schedule="interleaved", virtual_stages=8, zero_stage=2,
                                       microbatch_size=1), tflops / 2.524e12, None)
    for n, tflops in ((8192, 430e12), (16384, 400e12)))
#: Megatron-Core MoE model zoo, Qwen3 "Long Context" table (yanring/Megatron-MoE-ModelZoo best_practice/Qwen3/
#: readme.md): Qwen3-235B-A22B on 32 nodes of 8 H100 (256 GPUs), bf16, DeepEP, TP 4, PP 8 x VPP 4, EP 8, ETP 1
#: (the command's defaults), recompute modules layernorm and moe, global batch 256 sequences, CP 1-8 for
#: 16k-128k tokens; TFLOP/s per GPU with forced load balancing (--moe-router-force-load-balancing) and dropless.
#: tokens/s/GPU = TFLOP/s / the planner's causal model FLOPs per token (e.g. 16k: 295e12 / 1.631e12 = 181).
#: Forced balance: moe_imbalance 1 (a check, nothing fitted). Dropless: moe_imbalance 1.55, fitted here to the four
#: forced / dropless ratios (1.245, 1.209, 1.150, 1.090 measured; 1.241, 1.200, 1.147, 1.096 predicted with the
#: Megatron-LM profile's moe_expert_overhead_s; 1.5 before it): one value
#: whose effect shrinks with the sequence length as the attention share grows, as measured

def _qwen3_long_context() -> tuple:
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS
    model = MODELS["qwen3-235b-a22b"]
    rows = []
    for cp, seq, forced, dropless in ((1, 16384, 295, 237), (2, 32768, 335, 277), (4, 65536, 368, 320),
                                      (8, 131072, 389, 357)):
        per_token = model_flops_per_token(model, seq, True)
        for label, imbalance, tflops in (("forced balance", 1.0, forced), ("dropless", 1.55, dropless)):
            rows.append((f"Megatron MoE zoo long context: Qwen3-235B-A22B seq {seq // 1024}k CP {cp}, {label}, 256 H100",
                         "qwen3-235b-a22b", "H100-SXM", "megatron", f"bf16-mixed+moe_imbalance={imbalance}", 256,
                         seq, 256, dict(tp=4, sp=True, cp=cp, ep=8, etp=1, pp=8, schedule="interleaved",
                                        virtual_stages=4, zero_stage=1, microbatch_size=1, moe_dispatcher="deepep",
                                        recompute="selective", recompute_modules=("layernorm", "moe")),
                         tflops * 1e12 / per_token, None))
    return tuple(rows)


QWEN3_LONG_CONTEXT = _qwen3_long_context()
#: NeMo long-sequence performance (NVIDIA/NeMo docs/source/performance/performance_long_sequence.md, NeMo 24.03
#: container, DGX-H100): Llama 2 7B in fp8 with context parallelism, one GPU per 1k tokens of sequence, TFLOP/s per
#: GPU. tokens/s/GPU = TFLOP/s / the model FLOPs per token as NeMo counts them (attention not halved for the causal
#: mask, like the shared NeMo rows; e.g. 16k: 660e12 / 6.541e10 = 10,090). Rows from 16k tokens (unpipelined; the
#: global batch, not published, is set to one sequence per data-parallel rank and moves these rows by under 2%;
#: the 4k and 8k rows, one of them pipelined, depend on it and are left out). Attention kernel: FlashAttention-2
#: (with cuDNN's kernel the rows are predicted 24-69% fast, with FlashAttention-2 within 7% from 16k to 1M tokens,
#: where the attention share grows from a third to 98% of the FLOPs; which backend Transformer Engine chose in that
#: container is not published)
def _nemo_long_sequence() -> tuple:
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS
    model = MODELS["llama-2-7b"]
    return tuple(
        (f"NeMo 24.03 long sequence: Llama 2 7B fp8, seq {k}k, TP {tp} CP {cp}, {k} H100", "llama-2-7b", "H100-SXM",
         FA2_MEGATRON, "fp8-mixed", k, k * 1024, dp,
         dict(tp=tp, sp=tp > 1, tp_overlap=tp > 1, dp=dp, cp=cp, zero_stage=1, microbatch_size=1),
         tflops * 1e12 / model_flops_per_token(model, k * 1024, causal=False), None)
        for k, tflops, tp, dp, cp in ((16, 660, 2, 8, 1), (32, 610, 2, 8, 2), (64, 574, 4, 8, 2), (128, 555, 4, 8, 4),
                                      (256, 549, 4, 8, 8), (512, 549, 8, 4, 16), (1024, 536, 8, 4, 32)))


NEMO_LONG_SEQUENCE = _nemo_long_sequence()


#: NeMo long-sequence performance, Llama 3 8B in fp8 on DGX-B200 (NVIDIA/NeMo docs/source/performance/
#: performance_long_sequence.md, NeMo 25.04.rc2 container): sequence 8k-1M tokens, global batch as published (512 at
#: 8k halving with each doubling), TP / CP / DP as published, micro batch 1 (not published), TFLOP/s per GPU counted
#: as for the H100 rows above (attention not halved); Transformer Engine's default attention (cuDNN) on Blackwell
def _nemo_long_sequence_b200() -> tuple:
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS
    model = MODELS["llama-3-8b"]
    return tuple(
        (f"NeMo 25.04 long sequence: Llama 3 8B fp8, seq {k}k, TP {tp} CP {cp}, {n} B200", "llama-3-8b", "B200",
         "megatron", "fp8-mixed", n, k * 1024, gbs,
         dict(tp=tp, sp=tp > 1, tp_overlap=tp > 1, dp=dp, cp=cp, zero_stage=1, microbatch_size=1),
         tflops * 1e12 / model_flops_per_token(model, k * 1024, causal=False), None)
        for k, n, gbs, tp, cp, dp, tflops in ((8, 2, 512, 1, 1, 2, 1671), (16, 4, 256, 1, 1, 4, 1717),
                                               (32, 8, 128, 1, 2, 4, 1624), (64, 16, 64, 1, 4, 4, 1600),
                                               (128, 32, 32, 2, 4, 4, 1588), (256, 64, 16, 4, 4, 4, 1590),
                                               (512, 128, 8, 4, 8, 4, 1619), (1024, 256, 4, 4, 16, 4, 1608)))


NEMO_LONG_SEQUENCE_B200 = _nemo_long_sequence_b200()
#: Megatron-Bridge performance summary, NeMo 25.09 container, DGX-H100 table (NVIDIA-NeMo/Megatron-Bridge
#: docs/performance-summary.md; one 405B row from the 26.06 table, global batch 1536): fp8 with current scaling (the 25.11 table names it FP8-CS), tokens/s/GPU as
#: published; MoE rows force-balanced ("we force-balance the token distribution among experts"). TP communication
#: overlap assumed on for the dense rows with tp > 1 (the recipes' userbuffers configs). DeepSeek-V3 as its
#: resolved recipe (scripts/performance/dryrun_configs/deepseek/deepseek_v3_pretrain_h100_fp8_sc_v1.yaml):
#: layout Et|(tt|)*30mL on pp 8 x vpp 4 (ranks hold 7, 8 x 6, 6 layers, the MTP module and loss on the last),
#: recompute mla_up_proj + mlp, bf16 Adam moments, the flex dispatcher (HybridEP: one copy per remote node, priced
#: as DeepEP), no TP overlap. Qwen3-235B: the alltoall dispatcher with the recipe's EP AllToAll overlap
#: (moe_a2a_overlap), priced here without it; the 25.11 row is one of the two measurements the profile's
#: a2a_overlap_share comes from (a2a_overlap_shares below; cost/axes/ep.py combined_1f1b)
_H100_MB = "H100-SXM"
#: the Megatron-LM profile with Transformer Engine's in-place cross-entropy: every Megatron-Bridge performance recipe
#: read sets cross_entropy_fusion_impl: "te" (scripts/performance/configs/llama3/llama3_8b_llm_pretrain.yaml,
#: qwen3/qwen3_30b_a3b_llm_pretrain.yaml, qwen3/qwen3_235b_a22b_llm_pretrain.yaml)
MB_FW = "megatron+loss=in_place"
#: the precision of Megatron-Bridge's FP8-CS columns: fp8 with per-tensor current scaling and fp8 primary weights
#: (megatron/bridge/training/mixed_precision.py bf16_with_fp8_current_scaling_mixed sets fp8_param_gather=True;
#: shardplan.specs.training 'fp8-params'). The FP8-MX / FP8-SC columns keep 'fp8-mixed'
FP8_CS = "fp8-params"
#: NeMo 24.07 performance summary, DGX-H100, FP8 (NVIDIA/NeMo docs/source/performance/performance_summary.md,
#: commit 070a0bb): the rows the shared set does not hold (it holds GPT3-175B, Llama 2 70B, Llama 3 8B / 70B and
#: Nemotron-340B of the same table). Distributed optimizer (ZeRO-1), as the shared rows; GPT3 shapes from the NeMo
#: launcher's gpt3 configs, GPT3-20B with sequence parallelism and TP overlap as its fp8 performance config
#: (conf/training/gpt3/20b_fp8_performance.yaml); no dropout, as the shared NeMo rows are priced
def _maxtext_v5p() -> tuple:
    """MaxText configs/v5p/README.md rows the shared set does not hold (it holds the 32B and 64B ones): TFLOP/s per
    chip of the synthetic 128B-512B models on v5p slices (v5p-N = N/2 chips, one ICI domain each, DCN between
    slices), priced as the shared rows are (calibration.row_inputs): FSDP over the slice x tp, data parallel across
    slices, microbatch = per_device_batch_size, fp32 weights, remat minimal = selective, full = full; the configs'
    128b.sh / 256b.sh / 512b.sh: ici_tensor_parallelism 8, per_device_batch_size 1 / 1 / 2, remat minimal / minimal /
    full, seq 2048. tokens/s per chip = TFLOP/s / the non-causal 6N + attention FLOPs per token (the shared rows'
    conversion, calibration._source_flops_per_token)."""
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS
    out = []
    for size, slice_chips, slices, tflops, pdbs, rc in (
            (128, 128, 1, 315, 1, "selective"), (128, 128, 2, 305, 1, "selective"),
            (128, 256, 1, 316, 1, "selective"), (128, 256, 2, 274, 1, "selective"),
            (256, 512, 1, 308, 1, "selective"), (256, 512, 2, 289, 1, "selective"),
            (512, 512, 1, 294, 2, "full"), (512, 512, 2, 282, 2, "full")):
        n, name = slice_chips * slices, f"maxtext-{size}b"
        fields = dict(tp=8, sp=True, zero_stage=3, microbatch_size=pdbs, recompute=rc)
        if slices > 1:
            fields["dp_shard"] = slice_chips // 8
        tps = tflops * 1e12 / model_flops_per_token(MODELS[name], 2048, causal=False)
        out.append((f"MaxText v5p README: {size}B, {slices}x v5p-{2 * slice_chips}", name,
                    f"TPU v5p+scale_up_size={slice_chips}", "maxtext", "fp32-params", n, 2048, n * pdbs, fields, tps,
                    None))
    return tuple(out)


#: torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md (Trainy on WhiteFiber, June 2025): Llama 3.1 8B,
#: llama3_8b.toml (FSDP over all GPUs, seq 8192, per-op selective AC) with local batch 2, torch.compile and float8
#: (fp8 all-gather), on 4 and 8 hosts of 8 H200 (400 Gb/s per GPU); tokens/s per GPU and memory (GiB) at step 100.
#: Priced as fp8-mixed with the torchtitan-compile profile (that release compiles the loss with the blocks)
TT_H200_TRAINY = tuple(
    (f"torchtitan Trainy H200: Llama-3.1-8B FSDP, {n} GPUs (compile+Float8)", "llama-3.1-8b", "H200", "torchtitan-compile",
     "fp8-mixed", n, 8192, 2 * n, dict(dp=n, zero_stage=3, microbatch_size=2, recompute="selective"), tps, gib)
    for n, tps, gib in ((32, 10938, 47.96), (64, 10753, 46.97)))


MAXTEXT_V5P = _maxtext_v5p()


def _maxtext_v5e() -> tuple:
    """MaxText configs/v5e/README.md: TFLOP/s per chip of the synthetic 16B, 32B and 64B models on 1-32 v5e-256 slices
    (256 chips, one 16x16 ICI torus each, DCN between slices), priced as the v5p rows (:func:`_maxtext_v5p`); the
    configs 16b.sh / 32b.sh / 64b.sh: FSDP over all chips of a slice (no tensor parallelism), per_device_batch_size
    6 / 4 / 2, remat_policy full, seq 2048. The 128B column is not a check: its config offloads activations to the
    host (remat_policy minimal_offloaded), which the planner does not price for MaxText."""
    from shardplan.cost.flops import model_flops_per_token
    from shardplan.presets.models import MODELS
    out = []
    for size, pdbs, per_slices in ((16, 6, (120, 117, 117, 115, 111, 108)), (32, 4, (132, 128, 126, 125, 123, 119)),
                                   (64, 2, (118, 112, 110, 108, 105, 99))):
        name = f"maxtext-{size}b"
        for slices, tflops in zip((1, 2, 4, 8, 16, 32), per_slices):
            n = 256 * slices
            fields = dict(zero_stage=3, microbatch_size=pdbs, recompute="full")
            if slices > 1:
                fields["dp_shard"] = 256
            tps = tflops * 1e12 / model_flops_per_token(MODELS[name], 2048, causal=False)
            out.append((f"MaxText v5e README: {size}B, {slices}x v5e-256", name, "TPU v5e", "maxtext", "fp32-params", n,
                        2048, n * pdbs, fields, tps, None))
    return tuple(out)


MAXTEXT_V5E = _maxtext_v5e()
#: MaxText's optimized-models tiering page (maxtext.readthedocs.io reference/models/tiering, v0.2.0), Trillium (v6e)
#: Gold rows, approximate tokens/s per device on one v6e-256 slice (16x16 ICI torus), bf16 compute over fp32
#: parameters; layouts from benchmarks/maxtext_trillium_model_configs.py (the configs the page links): FSDP over the 256
#: chips (ici_fsdp / ici_fsdp_transpose -1). Llama 2 70B (llama2_70b_4096_sc): per_device_batch_size 2, seq 4096,
#: remat_policy qkv_proj_offloaded; Llama 3.1 8B (llama3_1_8b_8192) and 70B (llama3_1_70b_8192): per_device_batch_size
#: 4, seq 8192, remat_policy custom with the decoder-layer input and the q / k / v (/ out) projections offloaded to the
#: host. Every other tensor of these policies is rematerialized, so the rows are priced with full recomputation, which
#: also recomputes the offloaded projections (~17% of a layer's forward FLOPs: Llama 3.1 8B at seq 8192, 84 of 503
#: MFLOP per token; ~4% of the step in excess). llama-3-70b stands for Llama 3.1 70B (same shapes). All three set the
#: tpu-v6e GEMM rate (benchmarks/fit_frameworks.py tpu_v6e_table); only Llama 2 70B is a public check: the other two
#: fit 32 GiB only because their layer inputs live on the host, which the planner does not price for MaxText
MAXTEXT_V6E_ALL = tuple(
    (f"MaxText tiering v6e-256: {label}", name, "TPU v6e", "maxtext", "fp32-params", 256, seq, 256 * pdbs,
     dict(zero_stage=3, microbatch_size=pdbs, recompute="full"), tps, None)
    for label, name, seq, pdbs, tps in (("Llama 2 70B, seq 4096", "llama-2-70b", 4096, 2, 900),
                                        ("Llama 3.1 8B, seq 8192", "llama-3.1-8b", 8192, 4, 7207),
                                        ("Llama 3.1 70B, seq 8192", "llama-3-70b", 8192, 4, 960)))
MAXTEXT_V6E = MAXTEXT_V6E_ALL[:1]
NEMO_2407 = (
    ("NeMo 24.07 H100: GPT3-5B, 64 GPUs", "gpt3-5b", "H100-SXM", "megatron", "fp8-mixed", 64, 2048, 2048,
     dict(zero_stage=1, microbatch_size=4), 22521, None),
    ("NeMo 24.07 H100: GPT3-20B TP2, 64 GPUs", "gpt3-20b", "H100-SXM", "megatron", "fp8-mixed", 64, 2048, 256,
     dict(tp=2, sp=True, tp_overlap=True, zero_stage=1, microbatch_size=2), 5851, None),
    ("NeMo 24.07 H100: Llama 2 7B, 8 GPUs", "llama-2-7b", "H100-SXM", "megatron", "fp8-mixed", 8, 4096, 128,
     dict(zero_stage=1, microbatch_size=1), 16847, None),
    ("NeMo 24.07 H100: Llama 2 13B PP4 VP10, 16 GPUs", "llama-2-13b", "H100-SXM", "megatron", "fp8-mixed", 16, 4096,
     128, dict(pp=4, schedule="interleaved", virtual_stages=10, zero_stage=1, microbatch_size=1), 8646, None),
)
MEGATRON_BRIDGE_H100 = (
    ("Megatron-Bridge 25.09 H100: Llama 3 8B Megatron-FSDP, 8 GPUs", "llama-3-8b", _H100_MB, MB_FW, FP8_CS,
     8, 8192, 128, dict(zero_stage=3, microbatch_size=1), 14079, None),
    ("Megatron-Bridge 25.09 H100: Llama 3 70B TP4 PP8 VP5, 64 GPUs", "llama-3-70b", _H100_MB, MB_FW,
     FP8_CS, 64, 8192, 128, dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=5,
                                      zero_stage=1, microbatch_size=1), 1619, None),
    ("Megatron-Bridge 25.09 H100: Llama 3.1 405B TP8 PP8 CP2 VP8, 1,024 GPUs", "llama-3.1-405b", _H100_MB, MB_FW,
     FP8_CS, 1024, 8192, 512, dict(tp=8, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved",
                                        virtual_stages=8, zero_stage=1, microbatch_size=1), 302, None),
    ("Megatron-Bridge 26.06 H100: Llama 3.1 405B TP8 PP8 CP2 VP8, GBS 1536, 1,024 GPUs", "llama-3.1-405b", _H100_MB,
     MB_FW, FP8_CS, 1024, 8192, 1536, dict(tp=8, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved",
                                                     virtual_stages=8, zero_stage=1, microbatch_size=1), 328, None),
    ("Megatron-Bridge 25.09 H100: DeepSeek-V3 TP2 PP8 VP4 EP64 (MTP), 1,024 GPUs", "deepseek-v3-mtp", _H100_MB,
     MB_FW, "fp8-mixed" + OPTIMIZER_BF16_MOMENTS, 1024, 4096, 8192,
     dict(tp=2, sp=True, pp=8, schedule="interleaved", virtual_stages=4, pp_layers=(7, 8, 8, 8, 8, 8, 8, 6), ep=64,
          etp=1, moe_dispatcher="deepep", zero_stage=1, microbatch_size=1, recompute="selective",
          recompute_modules=("mla_up_proj", "mlp")), 1297, None),
    # the 25.11 DGX-B200 table (FP8-CS), the dense rows
    ("Megatron-Bridge 25.11 B200: Llama 3 8B, 8 GPUs", "llama-3-8b", "B200", MB_FW, FP8_CS, 8, 8192, 128,
     dict(zero_stage=1, microbatch_size=2), 30624, None),
    ("Megatron-Bridge 25.11 B200: Llama 3.1 405B TP4 PP8 CP2 VP8, 128 GPUs", "llama-3.1-405b", "B200", MB_FW,
     FP8_CS, 128, 8192, 64, dict(tp=4, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved",
                                      virtual_stages=8, zero_stage=1, microbatch_size=1), 661, None),
    ("Megatron-Bridge 25.09 H100: Qwen3-235B-A22B TP2 PP8 VP4 EP32, token drop, 256 GPUs", "qwen3-235b-a22b", _H100_MB,
     MB_FW, FP8_CS, 256, 4096, 2048,
     dict(tp=2, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=4, ep=32, etp=1,
          zero_stage=1, microbatch_size=1), 1204, None),
    # Qwen3-30B-A3B (scripts/performance/configs/qwen3/qwen3_30b_a3b_llm_pretrain.yaml of the same release: h100
    # num_gpus_16, fp8_cs micro batch 2, tp 1, pp 2, vp 24 (one layer per chunk), ep 8, etp 1, no recompute, no
    # CUDA graphs, bf16 gradient reduction)
    ("Megatron-Bridge 25.09 H100: Qwen3-30B-A3B PP2 VP24 EP8, token drop, 16 GPUs", "qwen3-30b-a3b", _H100_MB, MB_FW,
     FP8_CS, 16, 4096, 512, dict(pp=2, schedule="interleaved", virtual_stages=24, ep=8, etp=1, zero_stage=1,
                                      microbatch_size=2), 10494, None),
    # the 25.09 DGX-B200 table's MoE rows (same yaml files: b200 num_gpus_8 / num_gpus_64, micro batch 1, no recompute;
    # Qwen3-235B without CUDA graphs, Qwen3-30B with them)
    ("Megatron-Bridge 25.09 B200: Qwen3-30B-A3B EP8, token drop, 8 GPUs", "qwen3-30b-a3b", "B200", MB_FW, "fp8-mixed", 8,
     4096, 512, dict(ep=8, etp=1, zero_stage=1, microbatch_size=1), 18066, None),
    ("Megatron-Bridge 25.09 B200: Qwen3-235B-A22B PP8 VP2 EP8, token drop, 64 GPUs", "qwen3-235b-a22b", "B200", MB_FW,
     "fp8-mixed", 64, 4096, 1024, dict(pp=8, schedule="interleaved", virtual_stages=2, ep=8, etp=1, zero_stage=1,
                                       microbatch_size=1), 4104, None),
    # the 25.11 table (a later copy of the same page, e.g. pufanyi/Megatron-Bridge docs/performance-summary.md at
    # 21a2ced, which also labels the 25.09 Qwen3 rows "tokendrop"): "all benchmarks are token-dropless", force-balanced.
    # The same Qwen3 layouts as 25.09 ran 1.9-2x slower on Qwen3-30B-A3B and 1.26x slower (B200) / 1.31x faster
    # (H100, whose row has lost its batch column: the 25.09 recipe's 2048 assumed) on Qwen3-235B
    ("Megatron-Bridge 25.11 H100: Qwen3-30B-A3B PP2 VP24 EP8, dropless, 16 GPUs", "qwen3-30b-a3b", _H100_MB, MB_FW,
     FP8_CS, 16, 4096, 512, dict(pp=2, schedule="interleaved", virtual_stages=24, ep=8, etp=1, zero_stage=1,
                                      microbatch_size=2), 5275, None),
    ("Megatron-Bridge 25.11 H100: Qwen3-235B-A22B TP2 PP8 VP4 EP32, dropless, 256 GPUs", "qwen3-235b-a22b", _H100_MB,
     MB_FW, FP8_CS, 256, 4096, 2048,
     dict(tp=2, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=4, ep=32, etp=1,
          zero_stage=1, microbatch_size=1), 1575, None),
    ("Megatron-Bridge 25.11 B200: Qwen3-30B-A3B EP8, dropless, 8 GPUs", "qwen3-30b-a3b", "B200", MB_FW,
     "fp8-mixed", 8, 4096, 512, dict(ep=8, etp=1, zero_stage=1, microbatch_size=1), 9299, None),
    ("Megatron-Bridge 25.11 B200: Qwen3-235B-A22B PP8 VP2 EP8, dropless, 64 GPUs", "qwen3-235b-a22b", "B200",
     MB_FW, "fp8-mixed", 64, 4096, 1024, dict(pp=8, schedule="interleaved", virtual_stages=2, ep=8, etp=1,
                                                   zero_stage=1, microbatch_size=1), 3269, None),
    # GPT-OSS 120B, bf16, forced balance (scripts/performance/configs/gpt_oss/gpt_oss_llm_pretrain.py sets
    # moe_router_force_load_balancing; gpt_oss_workload_base_configs.py V1: recompute_modules layernorm + moe_act).
    # H100: the table's MBS 4 / GA 2 cannot both hold with PP 4 on 64 GPUs (dp 16 x 4 x 2 = 128, not 512); the
    # config's micro batch 1 is used. B200: EP 8, MBS 4, GA 2 as the table gives them (dp 64 x 4 x 2 = 512)
    ("Megatron-Bridge 25.11 H100: GPT-OSS-120B PP4 EP8, 64 GPUs", "gpt-oss-120b", _H100_MB, MB_FW, "bf16-mixed",
     64, 4096, 512, dict(pp=4, ep=8, etp=1, zero_stage=1, microbatch_size=1, recompute="selective",
                         recompute_modules=("layernorm", "moe_act")), 5630, None),
    ("Megatron-Bridge 25.11 B200: GPT-OSS-120B EP8, 64 GPUs", "gpt-oss-120b", "B200", MB_FW, "bf16-mixed",
     64, 4096, 512, dict(ep=8, etp=1, zero_stage=1, microbatch_size=4, recompute="selective",
                         recompute_modules=("layernorm", "moe_act")), 8213, None),
    # DeepSeek-V3 in the 25.11 B200 and GB200 tables (FP8-MX, force-balanced, gbs 2048, mbs 1, seq 4096), as the
    # recipes give them (scripts/performance/configs/deepseek/deepseek_workload_base_configs.py
    # DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1: pp 16, ep 8; ..._GB200_V1: pp 4 x vpp 4, ep 64; both the hybridep flex
    # dispatcher, priced as DeepEP, and mla_up_proj recompute; bf16 Adam moments as the H100 recipe). The recipes set
    # the pipeline layout with a helper this table does not resolve: the planner's balanced split is used. The
    # table's GB300 row (pp 8, ep 64 on 256 GPUs) is not a check: ep 64 exceeds its 32-way data parallelism
    ("Megatron-Bridge 25.11 B200: DeepSeek-V3 PP16 EP8 (MTP), 256 GPUs", "deepseek-v3-mtp", "B200", MB_FW,
     "fp8-mixed" + OPTIMIZER_BF16_MOMENTS, 256, 4096, 2048,
     dict(pp=16, ep=8, etp=1, moe_dispatcher="deepep", zero_stage=1, microbatch_size=1, recompute="selective",
          recompute_modules=("mla_up_proj",)), 2139, None),
    ("Megatron-Bridge 25.11 GB200: DeepSeek-V3 PP4 VP4 EP64 (MTP), 256 GPUs", "deepseek-v3-mtp", "GB200", MB_FW,
     "fp8-mixed" + OPTIMIZER_BF16_MOMENTS, 256, 4096, 2048,
     dict(pp=4, schedule="interleaved", virtual_stages=4, ep=64, etp=1, moe_dispatcher="deepep", zero_stage=1,
          microbatch_size=1, recompute="selective", recompute_modules=("mla_up_proj",)), 3653, None),
    # the DGX-GB200 (NVL72) tables, 25.09 and 25.11, the `gb200` preset; layouts as the tables give them (FP8-CS
    # columns), with the recipes' activation offloading (scripts/performance/configs/llama/
    # llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V1: Megatron-FSDP, cpu_offloading_num_layers
    # 40; llama31_workload_base_configs.py LLAMA31_405B_PRETRAIN_CONFIG_GB200_FP8_CS_V1: FSDP, TP 2, 92 layers) and
    # GPT-OSS-120B's norm and MoE-activation recompute (gpt_oss_workload_base_configs.py GB200_BF16_V1)
    *((f"Megatron-Bridge {rel} GB200: {label}", name, "GB200", MB_FW, prec, n, seq, gbs, fields, tps, None)
      for rel, label, name, prec, n, seq, gbs, fields, tps in (
          ("25.09", "Llama 3 8B, 8 GPUs", "llama-3-8b", FP8_CS, 8, 8192, 128,
           dict(zero_stage=1, microbatch_size=2), 31357),
          ("25.11", "Llama 3 8B, 8 GPUs", "llama-3-8b", FP8_CS, 8, 8192, 128,
           dict(zero_stage=1, microbatch_size=2), 31508),
          ("25.09", "Llama 3 70B Megatron-FSDP, 40 layers offloaded, 64 GPUs", "llama-3-70b", FP8_CS, 64, 8192, 128,
           dict(zero_stage=3, microbatch_size=2, offload_activation_layers=40), 3986),
          ("25.11", "Llama 3 70B Megatron-FSDP, 40 layers offloaded, 64 GPUs", "llama-3-70b", FP8_CS, 64, 8192, 128,
           dict(zero_stage=3, microbatch_size=2, offload_activation_layers=40), 4312),
          ("25.09", "Llama 3.1 405B Megatron-FSDP TP2, 92 layers offloaded, 128 GPUs", "llama-3.1-405b", FP8_CS, 128,
           8192, 64, dict(zero_stage=3, tp=2, sp=True, microbatch_size=1, offload_activation_layers=92), 729),
          ("25.11", "Llama 3.1 405B Megatron-FSDP TP2, 92 layers offloaded, 128 GPUs", "llama-3.1-405b", FP8_CS, 128,
           8192, 64, dict(zero_stage=3, tp=2, sp=True, microbatch_size=1, offload_activation_layers=92), 706),
          ("25.09", "Qwen3-30B-A3B EP8, token drop, 8 GPUs", "qwen3-30b-a3b", "fp8-mixed", 8, 4096, 512,
           dict(ep=8, etp=1, zero_stage=1, microbatch_size=4), 22775),
          ("25.11", "Qwen3-30B-A3B EP8, dropless, 8 GPUs", "qwen3-30b-a3b", "fp8-mixed", 8, 4096, 512,
           dict(ep=8, etp=1, zero_stage=1, microbatch_size=4), 23766),
          ("25.09", "Qwen3-235B-A22B TP2 EP64, token drop, 64 GPUs", "qwen3-235b-a22b", "fp8-mixed", 64, 4096, 1024,
           dict(tp=2, sp=True, ep=64, etp=1, zero_stage=1, microbatch_size=1), 4452),
          ("25.11", "Qwen3-235B-A22B TP2 EP64, dropless, 64 GPUs", "qwen3-235b-a22b", "fp8-mixed", 64, 4096, 1024,
           dict(tp=2, sp=True, ep=64, etp=1, zero_stage=1, microbatch_size=1), 4366),
          ("25.11", "GPT-OSS-120B EP64, 64 GPUs", "gpt-oss-120b", "bf16-mixed", 64, 4096, 512,
           dict(ep=64, etp=1, zero_stage=1, microbatch_size=4, recompute="selective",
                recompute_modules=("layernorm", "moe_act")), 15754))),
    # the DGX-GB300 (NVL72) table of 25.11, the `gb300` preset (the gb200 entry's efficiencies, no GB300 fit); FP8-CS
    # columns, layouts as the table gives them, offloading from the recipes (llama3_workload_base_configs.py
    # LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V1: FSDP, cpu_offloading_num_layers 20; llama31_workload_base_configs.py
    # LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V1: FSDP, TP 2, 10 layers); the MoE rows as on GB200
    *((f"Megatron-Bridge 25.11 GB300: {label}", name, "GB300", MB_FW, prec, n, seq, gbs, fields, tps, None)
      for label, name, prec, n, seq, gbs, fields, tps in (
          ("Llama 3 8B, 8 GPUs", "llama-3-8b", FP8_CS, 8, 8192, 128, dict(zero_stage=1, microbatch_size=2), 37556),
          ("Llama 3 70B Megatron-FSDP, 20 layers offloaded, 64 GPUs", "llama-3-70b", FP8_CS, 64, 8192, 128,
           dict(zero_stage=3, microbatch_size=2, offload_activation_layers=20), 4440),
          ("Llama 3.1 405B Megatron-FSDP TP2, 10 layers offloaded, 128 GPUs", "llama-3.1-405b", FP8_CS, 128,
           8192, 64, dict(zero_stage=3, tp=2, sp=True, microbatch_size=1, offload_activation_layers=10), 850),
          ("Qwen3-30B-A3B EP8, dropless, 8 GPUs", "qwen3-30b-a3b", "fp8-mixed", 8, 4096, 512,
           dict(ep=8, etp=1, zero_stage=1, microbatch_size=4), 28934),
          ("Qwen3-235B-A22B TP2 EP64, dropless, 64 GPUs", "qwen3-235b-a22b", "fp8-mixed", 64, 4096, 1024,
           dict(tp=2, sp=True, ep=64, etp=1, zero_stage=1, microbatch_size=1), 5350),
          ("GPT-OSS-120B EP64, 64 GPUs", "gpt-oss-120b", "bf16-mixed", 64, 4096, 512,
           dict(ep=64, etp=1, zero_stage=1, microbatch_size=4, recompute="selective",
                recompute_modules=("layernorm", "moe_act")), 18618))),
)
#: Held out: rows added on 2026-12-02, after every fit, and never fitted on (benchmarks/fit_frameworks.py reads
#: PUBLIC_CHECKS only): the 25.11 table of NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md as revised later
#: (commit 00b7660: GB300 / GB200 rows at GBS 256-8192 and the H100 rows of the same release), the rows that differ
#: from the ones above. Layouts as the table gives them, the rest from the V2 workload configs of
#: scripts/performance/configs (llama3_workload_base_configs.py LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V2: Megatron-FSDP,
#: 20 layers offloaded; llama31_workload_base_configs.py ..._GB200_FP8_CS_V2: TP4 PP16 VP4, no FSDP, no offload;
#: gpt_oss_workload_base_configs.py ..._GB300_BF16_V2: no recompute, ..._GB200_BF16_V2: norm and MoE-activation
#: recompute); DeepSeek-V3 and Qwen3-235B priced as their rows above (DeepEP, mla_up_proj recompute, bf16 Adam moments;
#: no recompute). The MoE runs are force-balanced and dropless (the table's note)
_DS_FIELDS = dict(etp=1, moe_dispatcher="deepep", zero_stage=1, microbatch_size=1, recompute="selective",
                  recompute_modules=("mla_up_proj",))
_MB_REVISED = tuple(
    (f"Megatron-Bridge 25.11 (revised) {system}: {label}", name, system, MB_FW, prec, n, seq, gbs, fields, tps, None)
    for system, label, name, prec, n, seq, gbs, fields, tps in (
        ("H100-SXM", "Llama 3 8B Megatron-FSDP, 8 GPUs", "llama-3-8b", FP8_CS, 8, 8192, 128,
         dict(zero_stage=3, microbatch_size=1), 14451),
        ("H100-SXM", "Llama 3 70B TP4 PP8 VP5, 64 GPUs", "llama-3-70b", FP8_CS, 64, 8192, 128,
         dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=5, zero_stage=1,
              microbatch_size=1), 1602),
        ("H100-SXM", "Llama 3.1 405B TP8 PP8 CP2 VP8, 1,024 GPUs", "llama-3.1-405b", FP8_CS, 1024, 8192, 512,
         dict(tp=8, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved", virtual_stages=8, zero_stage=1,
              microbatch_size=1), 292),
        ("GB300", "Llama 3 70B Megatron-FSDP, 20 layers offloaded, GBS 256, 64 GPUs", "llama-3-70b", FP8_CS, 64, 8192,
         256, dict(zero_stage=3, microbatch_size=2, offload_activation_layers=20), 4520),
        ("GB300", "Llama 3.1 405B TP2 PP8 CP2 VP4, 256 GPUs", "llama-3.1-405b", FP8_CS, 256, 8192, 1536,
         dict(tp=2, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved", virtual_stages=4, zero_stage=1,
              microbatch_size=1), 999),
        ("GB300", "GPT-OSS-120B EP64, seq 8192, 64 GPUs", "gpt-oss-120b", "bf16-mixed", 64, 8192, 1280,
         dict(ep=64, etp=1, zero_stage=1, microbatch_size=2), 18347),
        ("GB300", "Qwen3-235B-A22B BF16 PP4 VP12 EP16, 256 GPUs", "qwen3-235b-a22b", "bf16-mixed", 256, 4096, 8192,
         dict(pp=4, schedule="interleaved", virtual_stages=12, ep=16, etp=1, zero_stage=1, microbatch_size=2), 6131),
        ("GB200", "Llama 3.1 405B TP4 PP16 VP4, 256 GPUs", "llama-3.1-405b", FP8_CS, 256, 8192, 1536,
         dict(tp=4, sp=True, tp_overlap=True, pp=16, schedule="interleaved", virtual_stages=4, zero_stage=1,
              microbatch_size=1), 813),
        ("GB200", "GPT-OSS-120B EP64, seq 8192, 64 GPUs", "gpt-oss-120b", "bf16-mixed", 64, 8192, 1280,
         dict(ep=64, etp=1, zero_stage=1, microbatch_size=1, recompute="selective",
              recompute_modules=("layernorm", "moe_act")), 15876),
        ("GB200", "Qwen3-235B-A22B BF16 PP8 VP3 EP32, 256 GPUs", "qwen3-235b-a22b", "bf16-mixed", 256, 4096, 8192,
         dict(pp=8, schedule="interleaved", virtual_stages=3, ep=32, etp=1, zero_stage=1, microbatch_size=1), 4916),
        # DeepSeek-V3 (MTP), 256 GPUs, GBS 4096: the BF16 and FP8-MX columns, interleaved with 4 chunks per rank
        *((system, f"DeepSeek-V3 {label} PP{pp} VP4 EP{ep} (MTP), 256 GPUs", "deepseek-v3-mtp",
           prec + OPTIMIZER_BF16_MOMENTS, 256, 4096, 4096,
           dict(pp=pp, schedule="interleaved", virtual_stages=4, ep=ep, **_DS_FIELDS), tps)
          for system, label, prec, pp, ep, tps in (
              ("GB300", "BF16", "bf16-mixed", 2, 32, 3848), ("GB300", "FP8-MX", "fp8-mixed", 2, 32, 4357),
              ("GB200", "BF16", "bf16-mixed", 4, 64, 3139), ("GB200", "FP8-MX", "fp8-mixed", 8, 32, 4018)))))
#: NeMo 24.07 performance summary, DGX-H100, FP8 (as NEMO_2407): the Nemotron-8B and -22B rows, read after every fit
#: (the recipes: NeMo-Framework-Launcher conf/training/nemotron/nemotron_8b.yaml and nemotron_22b.yaml, sequence
#: parallelism and TP communication overlap on, the distributed optimizer with its default fp32 state)
NEMO_2407_NEMOTRON = (
    ("NeMo 24.07 H100: Nemotron-8B TP2, 64 GPUs", "nemotron-3-8b", "H100-SXM", "megatron", "fp8-mixed", 64, 4096, 256,
     dict(tp=2, sp=True, tp_overlap=True, zero_stage=1, microbatch_size=4), 12701, None),
    ("NeMo 24.07 H100: Nemotron-22B TP2 PP4 VP10, 64 GPUs", "nemotron-3-22b", "H100-SXM", "megatron", "fp8-mixed", 64,
     4096, 256, dict(tp=2, sp=True, tp_overlap=True, pp=4, schedule="interleaved", virtual_stages=10, zero_stage=1,
                     microbatch_size=2), 4256, None),
)
#: DeepSeek-V3 technical report (DeepSeek-AI 2024, arXiv 2412.19437): pre-training on 2,048 H800 at 180K GPU hours per
#: trillion tokens (Sec. 1 and Table 1: 2.664M H800 GPU hours for 14.8T tokens), 1e12 / (180e3 x 3600) = 1,543
#: tokens/s/GPU, an average over the run (its batch ramp and restarts included); layout from Sec. 3.2: a 16-way
#: DualPipe pipeline, 64-way expert parallelism over 8 nodes, ZeRO-1 data parallelism; seq 4096 and the final
#: batch of 15,360 sequences (Sec. 4.2); FP8 with bf16 Adam moments (Sec. 3.3.3); RMSNorm and the MLA
#: up-projections recomputed (Sec. 3.2.3); the MoE SwiGLU inputs cached in fp8 and its output recomputed (Sec. 3.3.3,
#: "Low-Precision Activation" (2): profile field moe_act_input_bytes=1 and the moe_act module; its item (1), the
#: attention output projection's input in E5M6, 1.5 B, stays priced as fp8's 1 B); its own dispatch kernels priced as
#: DeepEP. Its framework (HAI-LLM) has no profile: Megatron-LM's. Read after every fit; the dualpipe schedule was
#: written after reading it, its terms from the report's Table 2 and deepseek-ai/DualPipe, nothing fitted
DEEPSEEK_V3_REPORT = (
    ("DeepSeek-V3 report: H800 PP16 EP64 DualPipe, 2,048 GPUs", "deepseek-v3-mtp", "H800",
     "megatron+moe_act_input_bytes=1", "fp8-mixed" + OPTIMIZER_BF16_MOMENTS, 2048, 4096, 15360,
     dict(pp=16, ep=64, etp=1, schedule="dualpipe", moe_dispatcher="deepep", zero_stage=1, microbatch_size=1,
          recompute="selective", recompute_modules=("layernorm", "mla_up_proj", "moe_act")), 1543, None),
)
#: Runs a scouting pass found in sources the project had not used (2026-12-03), read after every fit and never fitted
#: on; inputs as the sources give them, the rest assumed as noted. NVIDIA/dgxc-benchmarking (commit 143b90d):
#: llama3.1/README_8b.md (NeMo 24.09, Llama 3.1 8B, TP1 PP1 CP2 MBS1, seq 8192, GBS 16 x GPUs; tokens/s over all
#: GPUs as printed; ZeRO-1 and no recompute assumed), maxtext/README_70b.md + configure.sh (MaxText, JAX/XLA on DGX
#: H100, Llama 2 70B, FSDP over up to 256 GPUs and data parallel across, per_device_batch_size 2, seq 4096, remat
#: save_qkv_proj priced as full recompute, fp32 weights; the FP8 rows as fp8-mixed), paxml/README_5b.md (Paxml GPT-3
#: 5B shape, FSDP within a node, MBS 4, seq 2048, SAVE_DOT_ONLY priced as no recompute; the maxtext profile stands in
#: for Paxml), llama3.1/README.md commit 14fb6ae (the MFU worked example: 405B on 128 GB200, 9.347 s per step);
#: NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md (commit 0a25f91), the 26.02 tables, priced as the
#: 25.x rows above; AI-Hypercomputer/tpu-recipes training/trillium/Llama3.1-405B-MaxText (commit 21efcc2, step log:
#: 54.803 s for 512 x 8192 tokens; remat_policy custom with decoder_layer_input: offload, the maxtext profile's
#: layer-input offload, which was added after reading this row: without it the run was predicted at 67 GiB of 32)
#: the dgxc Llama 2 70B runs' remat (maxtext/configure.sh @ 35a9aecc, GSW 24.11, the script behind the README's table,
#: container jax:maxtext-2024-12-09): remat_policy=custom keeping query/key/value/qkv_proj and out_proj (+ mlpwo in bf16)
#: on the device, i.e. save_dot_except_mlpwi (bf16) / save_dot_except_mlp (fp8), the POLICY names the script sets first.
#: Until 2026-12-03 these rows were priced as save_qkv_proj taken as full recompute (the later Llama 3 70B script's
#: POLICY, read at the wrong commit): -18% to -28% then.
_DGXC_70B_SAVED = {"bf16": ("qkv_proj", "out_proj", "mlpwo"), "fp8": ("qkv_proj", "out_proj")}


def _dgxc_llama2_70b(label: str, prec: str, n: int, tokens_per_s: float) -> tuple:
    """One dgxc MaxText Llama 2 70B row: FSDP over the job (``ici_fsdp`` 8 x ``dcn_fsdp`` nodes, from 64 nodes
    ``dcn_fsdp`` 16 and data parallelism across: dp_shard 128), per_device_batch_size 2, seq 4096, the script's
    custom remat (:data:`_DGXC_70B_SAVED`)."""
    return (f"dgxc MaxText H100: Llama 2 70B FSDP, {label}, {n} GPUs", "llama-2-70b", "H100-SXM", "maxtext", prec, n,
            4096, 2 * n, dict(zero_stage=3, dp_shard=128 if n >= 512 else None, microbatch_size=2, recompute="full",
                              remat_saved=_DGXC_70B_SAVED[label]), tokens_per_s / n, None)


SCOUTED_2026_12 = (
    *((f"dgxc NeMo 24.09 H100: Llama 3.1 8B CP2, {prec}, {n} GPUs", "llama-3.1-8b", "H100-SXM", "megatron", prec, n,
       8192, 16 * n, dict(cp=2, zero_stage=1, microbatch_size=1), tps / n, None)
      for prec, n, tps in (("bf16-mixed", 8, 81222), ("bf16-mixed", 128, 1280704), ("fp8-mixed", 8, 108436))),
    *(_dgxc_llama2_70b(label, prec, n, tps)
      for label, prec, n, tps in (("bf16", "fp32-params", 64, 74908.99), ("bf16", "fp32-params", 2048, 2374358.34),
                                  ("fp8", "fp8-mixed", 64, 121250.69), ("fp8", "fp8-mixed", 2048, 3403086.41))),
    # Paxml's SAVE_DOT_ONLY (dgxc paxml/paxml_mod_configs.py @ 35a9aecc Synthetic5BCkpt) keeps every dot output and
    # recomputes the rest: MaxText's 'minimal', the maxtext profile's selective (priced as no recompute until 2026-12-03)
    *((f"dgxc Paxml H100: GPT-3 5B FSDP 8, {label}, 16 GPUs", "gpt3-5b", "H100-SXM", "paxml", prec, 16, 2048, 64,
       dict(zero_stage=3, dp_shard=8, microbatch_size=4, recompute="selective"), tps / 16, None)
      for label, prec, tps in (("bf16", "fp32-params", 206738.17), ("fp8", "fp8-mixed", 278876.60))),
    ("dgxc NeMo GB200: Llama 3.1 405B TP4 PP8 CP2 VP8, 128 GPUs (README MFU example)", "llama-3.1-405b", "GB200",
     "megatron", "bf16-mixed", 128, 8192, 64, dict(tp=4, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved",
                                                    virtual_stages=8, zero_stage=1, microbatch_size=1),
     8192 * 64 / 9.347 / 128, None),
    ("Megatron-Bridge 26.02 H100: Llama 3 70B TP4 PP8 VP5, 64 GPUs", "llama-3-70b", _H100_MB, MB_FW, FP8_CS, 64, 8192,
     256, dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=5, zero_stage=1,
               microbatch_size=1), 1621, None),
    ("Megatron-Bridge 26.02 GB300: Llama 3 70B MXFP8 PP4 VP5, 64 GPUs", "llama-3-70b", "GB300", MB_FW, "fp8-mixed", 64,
     8192, 256, dict(pp=4, schedule="interleaved", virtual_stages=5, zero_stage=1, microbatch_size=1), 4596, None),
    ("Megatron-Bridge 26.02 GB300: Llama 3.1 405B TP4 PP8 VP4, 256 GPUs", "llama-3.1-405b", "GB300", MB_FW, FP8_CS,
     256, 8192, 1536, dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=4,
                           zero_stage=1, microbatch_size=1), 988, None),
    ("Megatron-Bridge 26.02 H100: Qwen3-235B-A22B TP2 PP8 VP4 EP32, GBS 8192, 256 GPUs", "qwen3-235b-a22b", _H100_MB,
     MB_FW, FP8_CS, 256, 4096, 8192, dict(tp=2, sp=True, tp_overlap=True, pp=8, schedule="interleaved",
                                          virtual_stages=4, ep=32, etp=1, zero_stage=1, microbatch_size=1), 1633, None),
    ("Megatron-Bridge 26.02 B300: DeepSeek-V3 MXFP8 PP16 EP8 (MTP), 256 GPUs", "deepseek-v3-mtp", "B300", MB_FW,
     "fp8-mixed" + OPTIMIZER_BF16_MOMENTS, 256, 4096, 4096, dict(pp=16, ep=8, **_DS_FIELDS), 2983, None),
    ("tpu-recipes v6e: Llama 3.1 405B FSDP 512, 2 x v6e-256, layer inputs on the host",
     "llama-3.1-405b", "tpu-v6e", "maxtext", "fp32-params", 512, 8192, 512,
     dict(zero_stage=3, microbatch_size=1, recompute="full", offload_activation_layers=126), 149.482, None),
)
#: Runs a second scouting pass found in sources the project had not used (2026-12-03, later the same day), read after
#: every fit and never fitted on; its notes per source below. The maxtext profile's logit_bytes (4 B) was set after
#: reading the tpu-recipes rows' memory (they were predicted not to fit), so their fit column is not held out.
#: AI-Hypercomputer/tpu-recipes training/trillium/*/README.md (MaxText tags tpu-recipes-v0.1.4 for Llama 3.1,
#: v0.1.2 for Mistral / Mixtral / GPT-3), one v6e slice each (ICI only), the "Tokens/s/device" of the step log line
#: the README quotes. Paths and commits: Llama3.1-8B-MaxText/v6e-8 (10ca5b9), v6e-16 (43e52ff), v6e-64 (a9e0929);
#: Llama3.1-70B-MaxText/v6e-32, v6e-64, v6e-128, v6e-256 (3596002); Mistral-7B-MaxText (7f2f5e6);
#: Mixtral-8x7B-MaxText (e008533); GPT3-175B-MaxText/bf16 (c855fe6). Layout: ici_fsdp_parallelism -1 (FSDP over the
#: slice = zero_stage 3, XLA gathers once per step is NOT assumed: default per_microbatch; no accumulation, so equal),
#: per_device_batch_size = microbatch_size, global batch = chips x pdbs (checked against the log's total_weights).
#: remat_policy custom with decoder_layer_input (+q/k/v(/out) projections) offloaded -> recompute="full" +
#: offload_activation_layers = n_layers (as the project's tpu-recipes 405B row). Weights fp32 ("fp32-params") except
#: the 70B v6e-32 recipe, which sets weight_dtype bfloat16 (bf16 weights, optax moments in the weights' dtype, no master
#: copy: "bf16-mixed" + OPTIMIZER_BF16). Mixtral: capacity_factor 1.25 (dropping,
#: megablox False, no EP: experts FSDP-sharded) -> precision "+moe_capacity_factor=1.25". GPT-3 175B: remat full,
#: seq 2048 (total_weights / chips / pdbs), no offload.
_TR = "fp32-params"
_BF16_WEIGHTS = "bf16-mixed" + OPTIMIZER_BF16


def _tpu_recipe(chips: int, label: str, model: str, pdbs: int, tps: float, seq: int = 8192, offloaded: int = 0,
                precision: str = _TR) -> tuple:
    """One tpu-recipes Trillium row: FSDP over the slice, per_device_batch_size ``pdbs`` sequences of ``seq`` as one
    microbatch, full remat with ``offloaded`` layer inputs on the host (0: none)."""
    layout = dict(zero_stage=3, microbatch_size=pdbs, recompute="full")
    if offloaded:
        layout["offload_activation_layers"] = offloaded
    where = ", layer inputs on host" if offloaded else ", full remat"
    return (f"tpu-recipes v6e-{chips}: {label} FSDP {chips}, pdbs {pdbs}{where}", model, "tpu-v6e", "maxtext",
            precision, chips, seq, chips * pdbs, layout, tps, None)


TPU_RECIPES_V6E = (
    _tpu_recipe(8, "Llama 3.1 8B", "llama-3.1-8b", 3, 7138.890, offloaded=32),
    _tpu_recipe(16, "Llama 3.1 8B", "llama-3.1-8b", 3, 7243.378, offloaded=32),
    _tpu_recipe(64, "Llama 3.1 8B", "llama-3.1-8b", 5, 7247.111, offloaded=32),
    _tpu_recipe(32, "Llama 3.1 70B (bf16 weights)", "llama-3-70b", 2, 920.965, offloaded=80, precision=_BF16_WEIGHTS),
    _tpu_recipe(64, "Llama 3.1 70B", "llama-3-70b", 2, 876.736, offloaded=80),
    _tpu_recipe(128, "Llama 3.1 70B", "llama-3-70b", 4, 941.976, offloaded=80),
    _tpu_recipe(256, "Llama 3.1 70B", "llama-3-70b", 5, 960.248, offloaded=80),
    _tpu_recipe(8, "Mistral 7B", "mistral-7b", 6, 7776.813, offloaded=32),
    _tpu_recipe(256, "Mixtral 8x7B (capacity 1.25)", "mixtral-8x7b", 12, 3645.203, seq=4096, offloaded=32,
                precision=_TR + "+moe_capacity_factor=1.25"),
    _tpu_recipe(256, "GPT-3 175B", "gpt3-175b", 3, 357.580, seq=2048),
)

#: allenai/OLMo-core README.md at commit a7de3f651cbc5bde928a126e4b0728bdeeb00279 ("Throughput numbers from these
#: scripts ... measured on a cluster with NVIDIA H100 GPUs", tokens/s per device). Scripts src/scripts/train/
#: OLMo-7B.py (OLMo-1124 = OLMo 2 7B shape; the README's Llama-8B (dolma2 vocabulary) and OLMo 2 13B rows need model
#: files the project does not ship: -20% / -26% and +13% / +22% in the scouting pass). FSDP2 (param bf16, reduce fp32 -> "bf16-mixed-fp32-grads"),
#: torch.compile, no activation checkpointing, seq 4096; rank_microbatch_size 2 x 4096 (7B, 8B) / 1 x 4096 (13B);
#: global batch 1024 x 4096 (7B, 8B) / 2048 x 4096 (13B). ASSUMED: one node of 8 H100 (the launch helper's default
#: num_nodes=1; the README gives no GPU count), FSDP over the 8 GPUs. FP8 column = torchao float8 linears
#: ("fp8-mixed"). Framework: the torchtitan-compile profile (FSDP2 + torch.compile, as OLMo-core runs them).
_OC = "bf16-mixed-fp32-grads"
OLMO_CORE_H100 = tuple(
    (f"OLMo-core README H100: {name} {tag}, 8 GPUs FSDP (assumed), mbs {mbs}", model, "h100-sxm", "torchtitan-compile",
     _OC if tag == "BF16" else "fp8-mixed", 8, 4096, gbs, dict(dp=8, zero_stage=3, microbatch_size=mbs,
                                                                 recompute="none"), tps, None)
    for name, model, mbs, gbs, tag, tps in (
        ("OLMo 2 7B", "olmo-2-7b", 2, 1024, "BF16", 10000), ("OLMo 2 7B", "olmo-2-7b", 2, 1024, "FP8", 13000),
))

#: NVIDIA NeMo Framework 24.12 user guide, performance/performance_summary.html
#: (https://docs.nvidia.com/nemo-framework/user-guide/24.12/nemotoolkit/performance/performance_summary.html), DGX-H100,
#: FP8, "Tokens / sec / GPU" as printed. NOTE: same layouts as the already-used NeMo 24.07 table, re-measured in a later
#: container (values differ by -1% to +6%): a drift check more than new evidence. Priced as NEMO_2407 /
#: NEMO_2407_NEMOTRON (ZeRO-1, sp + tp_overlap when tp > 1).
NEMO_2412_H100 = (
    ("NeMo 24.12 H100: GPT3-175B TP4 PP8 VP6, 512 GPUs", "gpt3-175b", "h100-sxm", "megatron", "fp8-mixed", 512, 2048,
     2048, dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=6, zero_stage=1,
                microbatch_size=2), 825, None),
    ("NeMo 24.12 H100: Llama 2 70B TP4 PP4 VP20, 64 GPUs", "llama-2-70b", "h100-sxm", "megatron", "fp8-mixed", 64, 4096,
     128, dict(tp=4, sp=True, tp_overlap=True, pp=4, schedule="interleaved", virtual_stages=20, zero_stage=1,
               microbatch_size=1), 1728, None),
    ("NeMo 24.12 H100: Llama 3 70B TP4 PP4 CP2 VP5, 64 GPUs", "llama-3-70b", "h100-sxm", "megatron", "fp8-mixed", 64,
     8192, 128, dict(tp=4, sp=True, tp_overlap=True, pp=4, cp=2, schedule="interleaved", virtual_stages=5,
                     zero_stage=1, microbatch_size=1), 1524, None),
    ("NeMo 24.12 H100: Llama 3 8B CP2, 8 GPUs", "llama-3-8b", "h100-sxm", "megatron", "fp8-mixed", 8, 8192, 128,
     dict(cp=2, zero_stage=1, microbatch_size=1), 12273, None),
    ("NeMo 24.12 H100: Nemotron-22B TP2 PP4 VP10, 64 GPUs", "nemotron-3-22b", "h100-sxm", "megatron", "fp8-mixed", 64,
     4096, 256, dict(tp=2, sp=True, tp_overlap=True, pp=4, schedule="interleaved", virtual_stages=10, zero_stage=1,
                     microbatch_size=2), 4312, None),
)

SCOUTED_2026_12B = (*TPU_RECIPES_V6E, *OLMO_CORE_H100, *NEMO_2412_H100)

#: A fourth scouting pass (2026-12-03): JAX / XLA programs on NVIDIA GPUs, read after every fit and never fitted on.
#: Precision: bf16 runs keep MaxText's / Paxml's fp32 weights ("fp32-params"); fp8 runs (MaxText quantization=fp8, Paxml
#: TE ENABLE_FP8) are priced as fp8-mixed, as SCOUTED_2026_12's. Tier B rows (partly assumed) say so in their label.
#: * NVIDIA/dgxc-benchmarking maxtext/README_70b.md @ 143b90dd (= 35a9aecc): the Llama 2 70B table's other scales
#:   (:func:`_dgxc_llama2_70b`).
#: * the same file @ 8f5cbb37 (GSW 25.02, container nvcr.io/nvidia/jax:25.01-maxtext-py3; configure.sh @ 8f5cbb37):
#:   Llama 3 70B, seq 8192 (log total_weights 2,097,152 = 128 x 2 x 8192), per_device_batch_size 2, remat_policy
#:   save_qkv_proj, ici_fsdp 8 x dcn_fsdp nodes (from 64 nodes dcn_fsdp 16, data parallel across: dp_shard 128).
#: * dgxc paxml/README_175b.md @ 143b90dd and configure.sh (container pax-2024-03-04): GPT-3 175B fp8 ("BF16 is not
#:   currently supported"), PERCORE_BATCH_SIZE 2, seq 2048, ICI [1,8,1] x DCN [dp,16,1] (FSDP 128, dp_shard 128),
#:   paxml_mod_configs.py Synthetic175BCkpt SAVE_QKV_OUT_PROJ (full recompute keeping q/k/v and out projections).
#: * dgxc paxml/README_5b.md @ 35a9aecc: GPT-3 5B, MBS 4, FSDP 8 inside a node (ICI [1,8,1], ASSUMED from paxml
#:   configs.py GPT5B) x data parallel across nodes, SAVE_DOT_ONLY (= MaxText minimal: selective).
#: * NVIDIA/JAX-Toolbox rosetta/projects/pax/README.md (container nvcr.io/nvidia/jax:24.04-paxml-py3), Sequences/Sec on
#:   256 GPUs, DP 1 x FSDP 256, seq 2048 (Tier B: 5B remat ASSUMED SAVE_DOT_WITH_NO_BATCH_DIM = selective; 175B remat
#:   ASSUMED the class default, full recompute).
#: * JAX-Toolbox docs/frameworks/maxtext/README.md @ 67b79492: Llama 2 7B on 8 H100, BS/GPU 2, FSDP 8, minimal_flash,
#:   0.721 s per step.
#: * AI-Hypercomputer/maxtext MaxText/configs/a3/llama_2_7b/README.md @ d2aa7f25 (TFLOP/s/chip only, tokens/s from
#:   MaxText's count of 46.085 GFLOP per token, checked on the A3 Mega log line) with 1vm-16vm.sh: ici_fsdp 8 x
#:   dcn_data nodes, per_device_batch_size 4, seq 4096, minimal_flash (Tier B for 4 and 8 nodes: scripts ASSUMED alike).
#: * AI-Hypercomputer/gpu-recipes example log lines (Tier B: one step each): a3mega llama-2-7b 256 GPUs (GPUDirect-TCPXO;
#:   ici_fsdp 8 x dcn_data 32, pdbs 4, minimal_flash), a3ultra llama3-1-70b 256 H200 (ici_fsdp 8 x dcn_fsdp 16 x dcn_data
#:   2, pdbs 2, seq 8192, save_dot_with_context_except_mlp, bf16 ASSUMED from the README's MFU example), a4 llama3-1-70b
#:   and 405b on 256 B200 (remat full; fp8 ASSUMED: at bf16 the logged model TFLOP/s would be 90% of the dense peak
#:   under full recompute).
#: minimal_flash is minimal_with_context (MaxText layers/decoders.py): full recompute keeping q/k/v, context, out,
#: mlpwi and mlpwo.
_MINIMAL_FLASH = ("qkv_proj", "context", "out_proj", "mlpwi", "mlpwo")
_A3_7B_FLOPS = 46.085e9  # MaxText's GFLOP per token for llama2-7b at 4,096 (6 x matmul params + non-causal attention)
XLA_GPU_2026_12 = (
    *(_dgxc_llama2_70b(label, prec, n, tps) for label, prec, n, tps in (
        ("bf16", "fp32-params", 128, 148271.49), ("bf16", "fp32-params", 256, 293184.96),
        ("bf16", "fp32-params", 512, 591496.83), ("bf16", "fp32-params", 1024, 1184162.62),
        ("fp8", "fp8-mixed", 128, 230152.77), ("fp8", "fp8-mixed", 256, 422898.16),
        ("fp8", "fp8-mixed", 512, 831708.11), ("fp8", "fp8-mixed", 1024, 1657172.66))),
    *((f"dgxc MaxText H100: Llama 3 70B FSDP, {label}, {n} GPUs", "llama-3-70b", "H100-SXM", "maxtext", prec, n, 8192,
       2 * n, dict(zero_stage=3, dp_shard=128 if n >= 512 else None, microbatch_size=2, recompute="full",
                   remat_saved=("qkv_proj",)), tps / n, None)
      for label, prec, n, tps in (
          ("bf16", "fp32-params", 128, 134752.43), ("bf16", "fp32-params", 256, 271581.46),
          ("bf16", "fp32-params", 512, 540537.92), ("bf16", "fp32-params", 1024, 1075255.78),
          ("bf16", "fp32-params", 2048, 2110607.12), ("fp8", "fp8-mixed", 128, 231116.60),
          ("fp8", "fp8-mixed", 256, 442064.08), ("fp8", "fp8-mixed", 512, 907465.17),
          ("fp8", "fp8-mixed", 1024, 1769188.65), ("fp8", "fp8-mixed", 2048, 3592936.29))),
    *((f"dgxc Paxml H100: GPT-3 175B FSDP 128, fp8, {n} GPUs", "gpt3-175b", "H100-SXM", "paxml", "fp8-mixed", n, 2048,
       2 * n, dict(zero_stage=3, dp_shard=128 if n > 128 else None, microbatch_size=2, recompute="full",
                   remat_saved=("qkv_proj", "out_proj")), tps / n, None)
      for n, tps in ((128, 70185.8), (256, 138334.56), (512, 275941.05), (1024, 531597.46), (2048, 1045961.09))),
    *((f"dgxc Paxml H100: GPT-3 5B FSDP 8, {label}, {n} GPUs", "gpt3-5b", "H100-SXM", "paxml", prec, n, 2048, 4 * n,
       dict(zero_stage=3, dp_shard=8, microbatch_size=4, recompute="selective"), tps / n, None)
      for label, prec, n, tps in (
          ("bf16", "fp32-params", 32, 410241.00), ("bf16", "fp32-params", 64, 815377.92),
          ("bf16", "fp32-params", 128, 1610715.82), ("fp8", "fp8-mixed", 32, 546133.33),
          ("fp8", "fp8-mixed", 64, 1092266.67), ("fp8", "fp8-mixed", 128, 2097152.00))),
    *((f"JAX-Toolbox Pax 24.04 {hw}: GPT-3 {size} FSDP 256, {label}, 256 GPUs (Tier B: remat assumed)", model, hw,
       "paxml", prec, 256, 2048, 256 * mbs, dict(zero_stage=3, microbatch_size=mbs, recompute=rc),
       seqs * 2048 / 256, None)
      for hw, size, model, label, prec, mbs, rc, seqs in (
          ("H100-SXM", "5B", "gpt3-5b", "bf16", "fp32-params", 8, "selective", 1657.24),
          ("H100-SXM", "5B", "gpt3-5b", "fp8", "fp8-mixed", 8, "selective", 2374.66),
          ("H100-SXM", "175B", "gpt3-175b", "bf16", "fp32-params", 6, "full", 51.00),
          ("H100-SXM", "175B", "gpt3-175b", "fp8", "fp8-mixed", 6, "full", 84.45),
          ("A100 80GB", "5B", "gpt3-5b", "bf16", "fp32-params", 8, "selective", 718.19),
          ("A100 80GB", "175B", "gpt3-175b", "bf16", "fp32-params", 6, "full", 20.44))),
    ("JAX-Toolbox MaxText H100: Llama 2 7B FSDP 8, bf16, 8 GPUs", "llama-2-7b", "H100-SXM", "maxtext", "fp32-params", 8,
     4096, 16, dict(zero_stage=3, microbatch_size=2, recompute="full", remat_saved=_MINIMAL_FLASH), 16 / 0.721 * 4096 / 8,
     None),
    *((f"MaxText A3 README H100: Llama 2 7B FSDP 8 x DP {nodes}, bf16, {8 * nodes} GPUs{tier}", "llama-2-7b",
       "H100-SXM (GCP A3 High)", "maxtext", "fp32-params", 8 * nodes, 4096, 32 * nodes,
       dict(zero_stage=3, dp_shard=8 if nodes > 1 else None, microbatch_size=4, recompute="full",
            remat_saved=_MINIMAL_FLASH), tflops * 1e12 / _A3_7B_FLOPS, None)
      for nodes, tflops, tier in ((1, 492, ""), (2, 422, ""), (4, 407, " (Tier B)"), (8, 409, " (Tier B)"),
                                  (16, 375, ""))),
    ("gpu-recipes A3 Mega H100: Llama 2 7B FSDP 8 x DP 32, bf16, 256 GPUs (Tier B: one log line)", "llama-2-7b",
     "H100-SXM (GCP A3 Mega)", "maxtext", "fp32-params", 256, 4096, 1024,
     dict(zero_stage=3, dp_shard=8, microbatch_size=4, recompute="full", remat_saved=_MINIMAL_FLASH), 10922.973, None),
    ("gpu-recipes A3 Ultra H200: Llama 3.1 70B FSDP 128 x DP 2, bf16, 256 GPUs (Tier B: one log line)", "llama-3-70b",
     "H200", "maxtext", "fp32-params", 256, 8192, 512,
     dict(zero_stage=3, dp_shard=128, microbatch_size=2, recompute="full",
          remat_saved=("qkv_proj", "context", "out_proj")), 1055.949, None),
    ("gpu-recipes A4 B200: Llama 3.1 70B FSDP 256, fp8, 256 GPUs (Tier B: one log line, fp8 assumed)", "llama-3-70b",
     "B200", "maxtext", "fp8-mixed", 256, 8192, 2048, dict(zero_stage=3, microbatch_size=8, recompute="full"),
     3130.521, None),
    ("gpu-recipes A4 B200: Llama 3.1 405B FSDP 128 x DP 2, fp8, 256 GPUs (Tier B: one log line, fp8 assumed)",
     "llama-3.1-405b", "B200", "maxtext", "fp8-mixed", 256, 8192, 512,
     dict(zero_stage=3, dp_shard=128, microbatch_size=2, recompute="full"), 579.059, None),
)
#: AMD Instinct runs a scouting pass found (2026-12-03), checks of the AMD presets' derived GEMM rates (nothing fitted):
#: MLPerf Training v5.1 closed division, AMD (mlcommons/training_results_v5.1 @ 4da2d1cd): Llama 3.1 8B on one node
#: of 8 MI355X, config_MI355X_1x8x1_8b.sh: GBS 32, MBS 2 (gradient accumulation 2), TP = PP = CP = 1, FP8_PARAMS=1
#: (fp8 primary weights: "fp8-params"), seq 8192, NeMo 2.3 / Megatron-LM with Transformer Engine (ROCm), distributed
#: optimizer (ZeRO-1); 30.65 samples/s steady (results/.../llama31_8b/result_0.txt tracked_stats throughput)
#: x 8192 / 8 = 31,386 tokens/s/GPU (eval pauses excluded). The MI300X runs found (ROCm blog Primus-Pipeline, an
#: engineer's benchmark repo) state no batch, sequence or precision and are not used.
AMD_2026_12 = (
    ("MLPerf Training v5.1 AMD MI355X: Llama 3.1 8B fp8 (fp8 params), 8 GPUs", "llama-3.1-8b", "MI355X", "megatron",
     "fp8-params", 8, 8192, 32, dict(zero_stage=1, microbatch_size=2), 30.65 * 8192 / 8, None),
)
#: Configurations that ran (or, marked 'oom', that failed for memory), read by a third scouting pass (2026-12-03) from
#: MaxText's tuned benchmark registry (AI-Hypercomputer/maxtext benchmarks/maxtext_{trillium,v5p,v5e}_model_configs.py,
#: commits as given) and tpu-recipes step logs: fit checks, no throughput. (id, source, model, hardware, framework,
#: precision, devices, seq_len, global batch, layout, expected 'ran' | 'oom'). Mapping: ici/dcn fsdp (and
#: fsdp_transpose) -> ZeRO-3; tensor -> tp with sp (MaxText's tensor axis shards the activations); remat 'full',
#: qkv_proj_offloaded -> full; save_qkv_proj / save_dot_except_mlpwi / save_dot_with_context_except_mlp -> full with
#: remat_saved; 'custom' with the layer input offloaded -> offload_activation_layers = n_layers; weight_dtype bfloat16 ->
#: bf16 optimizer state; the slice is v6e-256 where the registry does not say (FSDP state only shrinks with more
#: chips); int8 configs priced as bf16. Rows that need model files the project does not ship (MaxText's GPT-3 with
#: 16k positions, Llama 4, DeepSeek-V3 variants, Gemma 2 27B) and the v5p / v5e host-offload rows (no host link
#: in those presets) are left out.
FIT_CHECKS_2026_12 = (
    ('v6e.default-32', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd default_32 (v6e-256 assumed)', 'maxtext-32b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 2048, 3328, {'zero_stage': 3, 'microbatch_size': 13, 'recompute': 'full'}, 'ran'),
    ('v6e.default-64', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd default_64 (v6e-256 assumed)', 'maxtext-64b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 2048, 1536, {'zero_stage': 3, 'microbatch_size': 6, 'recompute': 'full'}, 'ran'),
    ('v6e.default-128', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd default_128 (v6e-256 assumed)', 'maxtext-128b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 2048, 512, {'zero_stage': 3, 'microbatch_size': 2, 'recompute': 'full'}, 'ran'),
    ('v6e.llama2-7b-4096', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama2_7b_4096 (v6e-256 assumed)', 'llama-2-7b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 4096, 3072, {'zero_stage': 3, 'microbatch_size': 12, 'recompute': 'full'}, 'ran'),
    ('v6e.llama2-70b-4096', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama2_70b_4096 (fsdp_transpose -1; v6e-256 assumed)', 'llama-2-70b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 4096, 1024, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'full'}, 'ran'),
    ('v6e.llama2-70b-4096-sc', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama2_70b_4096_sc pdbs 3, qkv_proj_offloaded (v6e-256 assumed)', 'llama-2-70b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 4096, 768, {'zero_stage': 3, 'microbatch_size': 3, 'recompute': 'full'}, 'ran'),
    ('v6e.llama3-8b-8192', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama3_8b_8192 (v6e-256 assumed)', 'llama-3-8b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 8192, 2048, {'zero_stage': 3, 'microbatch_size': 8, 'recompute': 'full'}, 'ran'),
    ('v6e.llama3-70b-8192', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama3_70b_8192 optimizer_memory_host_offload (v6e-256 assumed)', 'llama-3-70b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 8192, 512, {'zero_stage': 3, 'microbatch_size': 2, 'recompute': 'full', 'offload_optimizer': True}, 'ran'),
    ('v6e.llama3.1-405b-fsdp-dcn', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama3_1_405b_8192_fsdp_dcn: 2x v6e-256, fsdp 64 x tp 4 x dcn fsdp 2', 'llama-3.1-405b', 'tpu-v6e', 'maxtext', 'fp32-params', 512, 8192, 512, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'full', 'tp': 4, 'offload_activation_layers': 126, 'sp': True}, 'ran'),
    ('v6e.llama3.1-70b-131072', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd llama3_1_70b_131072: pdbs 0.125, context 16 (v6e-256 assumed)', 'llama-3-70b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 131072, 32, {'zero_stage': 3, 'microbatch_size': 2, 'recompute': 'full', 'cp': 16, 'offload_activation_layers': 80}, 'ran'),
    ('v6e.mixtral-8x7b-dropless', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd mixtral_8x7b_dropless megablox (v6e-256 assumed)', 'mixtral-8x7b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 4096, 3072, {'zero_stage': 3, 'microbatch_size': 12, 'recompute': 'full'}, 'ran'),
    ('v6e.mixtral-8x7b-dropped-int8', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd mixtral_8x7b_dropped_int8 (int8 priced as fp32 weights; v6e-256 assumed)', 'mixtral-8x7b', 'tpu-v6e', 'maxtext', 'fp32-params+moe_capacity_factor=1.25', 256, 4096, 2048, {'zero_stage': 3, 'microbatch_size': 8, 'recompute': 'full'}, 'ran'),
    ('v6e.mixtral-8x22b-dropped', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd mixtral_8x22b_dropped (fsdp 64 x ep 4, v6e-256; tpu-recipes training/trillium/Mixtral-8x22B-MaxText/README.md @ 03fb496 step log)', 'mixtral-8x22b', 'tpu-v6e', 'maxtext', 'bf16-mixed+optimizer_dtype=bf16+moe_capacity_factor=1.25', 256, 4096, 2048, {'zero_stage': 3, 'microbatch_size': 8, 'recompute': 'full', 'ep': 4, 'offload_activation_layers': 56}, 'ran'),
    ('v6e.deepseek-v3-ep16', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd deepseek_v3_ep16: 2x v6e-256, fsdp 16 x ep 16 x dcn fsdp 2, opt sgd (priced bf16 Adam)', 'deepseek-v3', 'tpu-v6e', 'maxtext', 'bf16-mixed+optimizer_dtype=bf16+moe_capacity_factor=1.0', 512, 8192, 512, {'zero_stage': 3, 'microbatch_size': 1, 'recompute': 'full', 'ep': 16, 'offload_activation_layers': 61}, 'ran'),
    ('v6e.gemma2-9b-8192', 'AI-Hypercomputer/maxtext benchmarks/maxtext_trillium_model_configs.py @ bfd388fd gemma2_9b_8192 fsdp_transpose 256', 'gemma-2-9b', 'tpu-v6e', 'maxtext', 'fp32-params', 256, 8192, 768, {'zero_stage': 3, 'microbatch_size': 3, 'recompute': 'full'}, 'ran'),
    ('v5p.mixtral-8x7b-dropless-256', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5p_model_configs.py @ 8270e050 mixtral_8x7b_dropless_v5p_512: 256 chips, pdbs 36, bf16 weights', 'mixtral-8x7b', 'tpu-v5p', 'maxtext', 'bf16-mixed+optimizer_dtype=bf16', 256, 4096, 9216, {'zero_stage': 3, 'microbatch_size': 36, 'recompute': 'full'}, 'ran'),
    ('v5p.mixtral-8x7b-64chips', 'AI-Hypercomputer/tpu-recipes training/v5p/Mixtral-8X7B-Maxtext run_recipe.sh: 4x4x4, pdbs 36', 'mixtral-8x7b', 'tpu-v5p', 'maxtext', 'bf16-mixed+optimizer_dtype=bf16', 64, 4096, 2304, {'zero_stage': 3, 'microbatch_size': 36, 'recompute': 'full'}, 'ran'),
    ('v5p.llama2-70b-64', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5p_model_configs.py @ 8270e050 llama2_70b_v5p_128: save_dot_except_mlpwi -> selective', 'llama-2-70b', 'tpu-v5p', 'maxtext', 'fp32-params', 64, 4096, 256, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'full', 'remat_saved': ('qkv_proj', 'out_proj', 'mlpwo')}, 'ran'),
    ('v5p.llama2-7b-64', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5p_model_configs.py @ 8270e050 llama2_7b_v5p_128: minimal -> selective', 'llama-2-7b', 'tpu-v5p', 'maxtext', 'fp32-params', 64, 4096, 256, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'selective'}, 'ran'),
    ('v5p.llama2-7b-256', 'AI-Hypercomputer/tpu-recipes training/v5p/Llama2-7B-Maxtext (v5p-512, remat minimal)', 'llama-2-7b', 'tpu-v5p', 'maxtext', 'fp32-params', 256, 4096, 1024, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'selective'}, 'ran'),
    ('v5p.gpt3-175b-512', 'AI-Hypercomputer/tpu-recipes training/v5p/GPT3-175B-MaxText (v5p_1024.sh: fsdp 64 x tp 8, pdbs 4, int8) step log', 'gpt3-175b', 'tpu-v5p', 'maxtext', 'fp32-params', 512, 2048, 2048, {'zero_stage': 3, 'microbatch_size': 32, 'recompute': 'full', 'tp': 8, 'sp': True}, 'ran'),
    ('v5e.default-128b', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5e_model_configs.py @ 64854e86 default_128b_v5e_256: tp 16, qkv_proj_offloaded', 'maxtext-128b', 'tpu-v5e', 'maxtext', 'fp32-params', 256, 2048, 256, {'zero_stage': 3, 'microbatch_size': 16, 'recompute': 'full', 'tp': 16, 'sp': True}, 'ran'),
    ('v5e.gpt3-175b', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5e_model_configs.py @ 64854e86 gpt_3_175b_v5e_256: tp 16, pdbs 0.5', 'gpt3-175b', 'tpu-v5e', 'maxtext', 'fp32-params', 256, 2048, 128, {'zero_stage': 3, 'microbatch_size': 8, 'recompute': 'full', 'tp': 16, 'sp': True}, 'ran'),
    ('v5e.llama2-7b', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5e_model_configs.py @ 64854e86 llama2_7b_v5e_256: save_qkv_proj -> selective', 'llama-2-7b', 'tpu-v5e', 'maxtext', 'fp32-params', 256, 2048, 1024, {'zero_stage': 3, 'microbatch_size': 4, 'recompute': 'full', 'remat_saved': ('qkv_proj',)}, 'ran'),
    ('v5e.llama2-13b', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5e_model_configs.py @ 64854e86 llama2_13b_v5e_256: qkv_proj_offloaded -> full', 'llama-2-13b', 'tpu-v5e', 'maxtext', 'fp32-params', 256, 2048, 2048, {'zero_stage': 3, 'microbatch_size': 8, 'recompute': 'full'}, 'ran'),
    ('v5e.llama2-70b', 'AI-Hypercomputer/maxtext benchmarks/maxtext_v5e_model_configs.py @ 64854e86 llama2_70b_v5e_256: qkv_proj_offloaded -> full', 'llama-2-70b', 'tpu-v5e', 'maxtext', 'fp32-params', 256, 2048, 512, {'zero_stage': 3, 'microbatch_size': 2, 'recompute': 'full'}, 'ran'),
)

#: ---- fifth scouting pass ----
#: InternLM cluster: 4 x 100 Gb RoCE per 8-GPU node = 6.25 GB/s per GPU (InternLM doc/en/train_performance.md)
INTERNLM_HW = "A100 80GB+scale_out_bandwidth=6250000000"   # 4 x 100 Gb RoCE per 8-GPU node
A800 = "A100 80GB (A800 NVLink 400 GB/s)+scale_up_bandwidth=200000000000"
H800_IB200 = "H800+scale_out_bandwidth=25000000000"
#: benchmarks/models: the shapes of runs without a preset (Hugging Face config.json files)
MODELS_DIR = "models/"
INTERNLM = MODELS_DIR + "internlm-7b.config.json"
TINYLLAMA = MODELS_DIR + "tinyllama-1.1b.config.json"

# InternLM/InternLM doc/en/train_performance.md @ 20fe5ac297e61c6ee62a8589e0b7fd12e36b590b (InternEvo; A100-SXM4-80GB,
# 4x100Gb RoCE; "FLOPS Testing" tables: pack_sample_into_one=True, bf16; "Throughput Measurement" table: micro_num 4,
# micro_bsz 2 (tp=1) / 4 (tp=2), seq 2048, checkpoint=False). zero1=8 -> ZeRO-1 sharded inside the node (dp_shard 8);
# zero1=-1 -> over all dp ranks. InternEvo has no profile: Megatron-LM's stands in.
_ILM = "InternLM perf doc: InternLM-7B tp1 zero1=8"
SCOUT5_INTERNLM = (
    *((f"[A] {_ILM}, {what}, {n} A100", INTERNLM, INTERNLM_HW, "megatron", "bf16-mixed", n, 2048, gbs,
       dict(tp=1, dp=n, zero_stage=1, dp_shard=8, microbatch_size=mbs, recompute=rc), tps, None)
      for what, n, gbs, mbs, rc, tps in (
          ("no AC, mbs2 x4", 8, 64, 2, "none", 4103), ("no AC, mbs2 x4", 128, 1024, 2, "none", 3928),
          ("no AC, mbs2 x4", 1024, 8192, 2, "none", 3625), ("no AC, mbs2 x1 (4M tokens)", 1024, 2048, 2, "none", 2346),
          ("full AC, mbs8 x1", 8, 64, 8, "full", 3314), ("full AC, mbs8 x1", 1024, 8192, 8, "full", 3163))),
    ("[A] InternLM perf doc (TGS table, unpacked): InternLM-7B tp1 zero1=-1, mbs2 x4, 1024 A100", INTERNLM, INTERNLM_HW, "megatron",
     "bf16-mixed", 1024, 2048, 8192, dict(tp=1, dp=1024, zero_stage=1, microbatch_size=2, recompute="none"), 2271, None),
    ("[B] InternLM perf doc (TGS table): InternLM-7B tp2 zero1=4, mbs4 x4, 1024 A100 (sp off assumed)", INTERNLM, INTERNLM_HW,
     "megatron", "bf16-mixed", 1024, 2048, 8192, dict(tp=2, sp=False, dp=512, zero_stage=1, dp_shard=4, microbatch_size=4,
                                                      recompute="none"), 3486, None),
    ("[B] InternLM perf doc (TGS table): InternLM-7B tp2 zero1=-1, mbs4 x4, 1024 A100 (sp off assumed)", INTERNLM, INTERNLM_HW,
     "megatron", "bf16-mixed", 1024, 2048, 8192, dict(tp=2, sp=False, dp=512, zero_stage=1, microbatch_size=4,
                                                      recompute="none"), 2785, None),
)

# FlagOpen/FlagPerf training/nvidia/*/README.md "性能指标" (token/p/s = tokens/s/GPU from the last "elapsed time per
# iteration"; mem GiB): llama3_8B-megatron @ 0e0fc76a (megatron-core core_v0.6.0; script
# training/benchmarks/llama3_8B/megatron/pretrain_llama3.sh @ 8f45ae0a: MBS 1, GBS 512, seq 8192, --sequence-parallel,
# --use-distributed-optimizer, TE, flash-attn; "recompute-activations" listed under the README's optimisations ->
# selective, Tier B), llama3_70B-megatron @ 61ac0796 (same script family @ adb02a53, TP8 PP4 DP2), llama2_70B-megatron
# @ 0171acaa (FlagScale; config_H800x4x8.py: seq 4096, MBS 1, GAS 44, recompute False; megatron_main.sh: bf16,
# distributed optimizer, sequence parallel, flash-attn), llama2_7b-megatron-deepspeed @ 0f139fc9 (Megatron-DeepSpeed;
# megatron-deepspeed_main.sh @ 1aea824c: ds_config ZeRO-1, bf16 with bf16 grad accumulation; its "#--recompute-activations"
# line inside the eval'd command comments out everything after it, so no activation checkpointing and no
# --deepspeed-activation-checkpointing)
SCOUT5_FLAGPERF = (
    ("[B] FlagPerf llama3_8B-megatron: A800 PP2 DP4 TP1, selective AC, 8 GPUs", "llama-3-8b", A800, "megatron", "bf16-mixed",
     8, 8192, 512, dict(tp=1, pp=2, dp=4, zero_stage=1, microbatch_size=1, recompute="selective"), 3698.7, 76.0),
    ("[B] FlagPerf llama3_8B-megatron: H100 TP2 DP4 (PP1; the table's DP4 x TP2 = 8), sp, selective AC, 8 GPUs", "llama-3-8b",
     "H100 80GB", "megatron", "bf16-mixed", 8, 8192, 512,
     dict(tp=2, sp=True, pp=1, dp=4, zero_stage=1, microbatch_size=1, recompute="selective"), 8103, 71.0),
    ("[B] FlagPerf llama3_8B-megatron: H100 TP2 DP4, FP8 (TE), 8 GPUs", "llama-3-8b", "H100 80GB", "megatron", "fp8-mixed",
     8, 8192, 512, dict(tp=2, sp=True, pp=1, dp=4, zero_stage=1, microbatch_size=1, recompute="selective"), 10486, 74.0),
    ("[B] FlagPerf llama3_8B-megatron: H100 TP2 DP8, 16 GPUs", "llama-3-8b", "H100 80GB", "megatron", "bf16-mixed",
     16, 8192, 512, dict(tp=2, sp=True, pp=1, dp=8, zero_stage=1, microbatch_size=1, recompute="selective"), 7914, 62.0),
    ("[B] FlagPerf llama3_8B-megatron: H100 TP2 DP8, FP8 (TE), 16 GPUs", "llama-3-8b", "H100 80GB", "megatron", "fp8-mixed",
     16, 8192, 512, dict(tp=2, sp=True, pp=1, dp=8, zero_stage=1, microbatch_size=1, recompute="selective"), 10280, 64.0),
    ("[B] FlagPerf llama3_70B-megatron: H100 TP8 PP4 DP2, sp, selective AC, 64 GPUs", "llama-3-70b", "H100 80GB", "megatron",
     "bf16-mixed", 64, 8192, 512, dict(tp=8, sp=True, pp=4, dp=2, zero_stage=1, microbatch_size=1, recompute="selective"),
     851, 55.0),
    ("[A] FlagPerf llama2_70B-megatron (FlagScale): H800 TP8 PP4 DP1, no AC, GBS 44, 32 GPUs", "llama-2-70b", H800_IB200,
     "megatron", "bf16-mixed", 32, 4096, 44, dict(tp=8, sp=True, pp=4, dp=1, zero_stage=1, microbatch_size=1, recompute="none"),
     641.93, 62.0),
    ("[A] FlagPerf llama2_70B-megatron (FlagScale): H800 TP4 PP8 DP1, no AC, GBS 44, 32 GPUs", "llama-2-70b", H800_IB200,
     "megatron", "bf16-mixed", 32, 4096, 44, dict(tp=4, sp=True, pp=8, dp=1, zero_stage=1, microbatch_size=1, recompute="none"),
     791.37, 74.0),
    ("[A] FlagPerf llama2_7b-megatron-deepspeed: A100 40GB TP4 DP2 ZeRO-1, no AC, GAS 32, 8 GPUs", "llama-2-7b", "A100 40GB",
     "deepspeed", "bf16-mixed", 8, 4096, 64, dict(tp=4, sp=False, pp=1, dp=2, zero_stage=1, microbatch_size=1,
                                                   recompute="none"), 2868, 32.0),
)

# Others
SCOUT5_OTHER = (
    # jzhang38/TinyLlama README.md @ bf122247 ("24k tokens per second per A100-40G GPU ... without activation checkpointing",
    # 16 A100-40G) + pretrain/tinyllama.py @ 01c9c774: Lightning Fabric FSDP (FULL_SHARD default, Block wrap, no AC),
    # micro_batch_size 8, global 512 per 8 devices (= 64 per GPU, 1024 over 16 = 2M tokens), seq 2048 (block_size),
    # bf16-mixed. ASSUMED: two DGX-like nodes (inter-node bandwidth not published).
    ("[B] TinyLlama README: TinyLlama-1.1B FSDP, no AC, mbs 8 x GA 8, 16 A100-40G", TINYLLAMA, "A100 40GB", "pytorch-fsdp",
     "bf16-mixed", 16, 2048, 1024, dict(dp=16, zero_stage=3, microbatch_size=8, recompute="none"), 24000, None),
    # pytorch/torchtitan issue #929 (comment by mori360, 2025-03-07): llama3_8b.toml defaults (local batch 1, seq 8192,
    # selective op AC, FSDP 8) + --training.compile, 8 GPUs; log "memory: 47.61GiB(60.15%)" and "tflops 169.77 mfu 54.42%"
    # -> 79.2 GiB devices at a 312 TFLOP/s peak = A100 80GB (inferred). tps 2,931 at step 20 (2,872-2,949 over steps 20-40).
    ("[B] torchtitan #929: Llama 3 8B FSDP 8 + compile, selective op AC, 8 A100 80GB (GPU inferred from MFU)", "llama-3-8b",
     "A100 80GB", "torchtitan-compile", "bf16-mixed-fp32-grads", 8, 8192, 8,
     dict(dp=8, zero_stage=3, microbatch_size=1, recompute="selective"), 2931, 47.61),
    # Nemotron-4 340B technical report (NVIDIA 2024, Table 2, as quoted by aiportalx.com/nvidia/nemotron-4-340b): 6,144
    # H100, batch 2,304, seq 4096, 8.0 s per iteration, MFU ~41%; TP 8, PP 12 with interleaving, DP 64, distributed
    # optimizer (report Sec. 2.3). 2304 x 4096 / 8.0 / 6144 = 192.0 tokens/s/GPU. ASSUMED: mbs 1, 4 virtual stages
    # (2 layers per chunk), selective recompute, sp + TP overlap (the NeMo 340B recipe's).
    ("[B] Nemotron-4 340B report Table 2: TP8 PP12 (VP4 assumed) DP64, 6144 H100", "nemotron-4-340b", "H100 80GB", "megatron",
     "bf16-mixed", 6144, 4096, 2304, dict(tp=8, sp=True, tp_overlap=True, pp=12, schedule="interleaved", virtual_stages=4,
                                           dp=64, zero_stage=1, microbatch_size=1, recompute="selective"), 192.0, None),
    # NVIDIA/NeMo issue #8059 (li-yi-dong, 2023-12-20): NeMo 23.08, 8 x A100, Llama 2 13B shape (40 layers, 5120, 13824,
    # 40 heads), TP4 PP1, MBS 1, GBS 32, sequence_parallel, selective AC, distributed_fused_adam, bf16, O2 off:
    # "under 1900 Tokens/s/GPU". ASSUMED: seq 4096 (the NeMo Llama 2 config default), A100 80GB.
    ("[B] NeMo #8059: Llama 2 13B TP4 sp, selective AC, GBS 32, 8 A100 (seq 4096 assumed)", "llama-2-13b", "A100 80GB",
     "megatron", "bf16-mixed", 8, 4096, 32, dict(tp=4, sp=True, pp=1, dp=2, zero_stage=1, microbatch_size=1,
                                                  recompute="selective"), 1900, None),
)

#: a fifth scouting pass (2026-12-03, after every fit): InternLM's InternEvo table, FlagPerf's LLM cases, TinyLlama, a
#: torchtitan issue log, the Nemotron-4 340B report, a NeMo issue. "[A]": every layout field stated by the source
#: (the framework profile may be a stand-in); "[B]": some assumed, as the comment says
SCOUTED_2026_12E = (*SCOUT5_INTERNLM, *SCOUT5_FLAGPERF, *SCOUT5_OTHER)


#: ---- sixth scouting pass: Hugging Face Transformers models under HF Trainer / Accelerate (PyTorch FSDP, DeepSpeed
#: ZeRO-3) and Colossal-AI (2026-12-03, after every fit). Stock HF model code is priced with the hf-fsdp / hf-deepspeed
#: profiles (eager element-wise work), fms-acceleration's fused-kernel rows with pytorch-fsdp (fused kernels) and its
#: Liger rows with no logits kept (Liger's fused linear cross-entropy: "+logit_bytes=0"). Every row is [B]: the sources
#: leave the sequence (or more) to infer, as each comment says. The profiles were written after reading these rows
_OPT_BF16 = "+optimizer_dtype=bf16"          # bf16 Adam moments, no fp32 master copy (pure-bf16 HF Trainer runs)
_A800_IB = "A100 80GB (A800, NVLink 400 GB/s, 4 HCAs assumed 200 Gb/s)+scale_up_bandwidth=200000000000+scale_out_bandwidth=12500000000"
LLAMA65 = MODELS_DIR + "llama-65b.config.json"

# ---- foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb.csv @ 0aab2c6f64e3e19d137efe2b8f7a4c65c23a2059
# (IBM; fms-hf-tuning sft_trainer = HF Trainer/TRL 0.11.4, transformers 4.45.2, accelerate 1.0.1, torch 2.4.1,
# flash-attn 2.6.3 (refs/requirements.txt at the same commit); A100 80GB; defaults.yaml: use_flash_attn True,
# gradient_checkpointing True, gradient_accumulation_steps 1; accelerate.yaml: FSDP FULL_SHARD (sharding_strategy 1),
# TRANSFORMER_BASED_WRAP, BACKWARD_PRE, mixed_precision 'no'; scenario full-finetuning: torch_dtype bfloat16, bf16
# unset -> pure bf16 weights, grads and AdamW moments: the CSV's steady allocation 28,984,215,552 B on 2 GPUs =
# 7.24e9 x 8 B / 2). Columns: num_gpus, per_device_train_batch_size, train_tokens_per_second (HF Trainer: per
# device, first batch's input_ids.numel() x steps / train_runtime), train_samples_per_second (all devices).
# SEQUENCE 4096 INFERRED: tokens/s / (samples/s / num_gpus) = 4,094-4,097 in every row (packed or padded to 4096);
# global batch = samples/s / steps/s (no accumulation). 1-GPU rows run plain python (no FSDP): dp=1, zero 0.
# "none" = stock HF eager model code with FA2; "foak-fast-kernels" = fms-acceleration fused Triton kernels
# (fast_loss, fast_rms_layernorm, fast_rope_embeddings) patched into the same HF model.
# Memory: mem_peak_torch_mem_alloc_in_bytes (HF Trainer memory metrics, rank 0) in GiB.
FMS = "fms-acceleration a100_80gb.csv@0aab2c6f"
_FMS_MISTRAL = (  # (framework_config, gpus, pdbs, tokens/s/GPU, peak alloc bytes)
    ("none", 1, 4, 3013.697, 72434853376), ("none", 2, 2, 2759.576, 36225955840),
    ("none", 1, 8, 3090.877, 72435246592), ("none", 2, 4, 2972.616, 36226152448),
    ("foak-fast-kernels", 1, 4, 3400.52, 72432723456), ("foak-fast-kernels", 2, 2, 3052.528, 36225955840),
    ("foak-fast-kernels", 1, 8, 3496.393, 72433116672), ("foak-fast-kernels", 2, 4, 3321.129, 36226152448),
)
SCOUT6_FMS = tuple(
    (f"[B seq 4096 inferred] {FMS}: Mistral-7B full FT, {fc}, {n} A100, pdbs {b}, GC on, FA2, pure bf16",
     "mistral-7b", "A100 80GB", "hf-fsdp" if fc == "none" else "pytorch-fsdp", "bf16-mixed" + _OPT_BF16, n, 4096, n * b,
     dict(dp=n, zero_stage=3 if n > 1 else 0, microbatch_size=b, recompute="full"), tps, round(peak / 2**30, 1))
    for fc, n, b, tps, peak in _FMS_MISTRAL)

# ---- fms-acceleration scripts/benchmarks/refs/a100_80gb_liger.csv @ 12ebdb907b39f18993783e8fece6b513c43a6975 and
# scenarios-liger.yaml @ 2c202ef4: Llama-3-8B full FT, torch_dtype bfloat16 AND bf16: True -> accelerate 1.0.1
# upcasts the FSDP shards to fp32 (mem_torch_mem_alloc 32,138,562,048 B on 4 GPUs = 8.03e9 x 16 B / 4: fp32
# params, grads, Adam); fused kernels only (foak, foak+liger); no eager baseline in this file. Seq 4096 inferred as above.
FMSL = "fms-acceleration a100_80gb_liger.csv@12ebdb90"
_FMS_LIGER = (  # (framework_config, gpus, pdbs, tokens/s/GPU, peak alloc bytes)
    ("foak-fast-kernels", 4, 4, 3201.603, 47584840192), ("foak-fast-kernels", 4, 8, 2264.38, 68958272000),
    ("foak-fast-kernels-liger", 4, 4, 3198.608, 40168839680), ("foak-fast-kernels-liger", 4, 8, 3342.327, 44061352448),
    ("foak-fast-kernels-liger", 4, 16, 3423.435, 60306944512),
)
SCOUT6_FMS_LIGER = tuple(
    (f"[B seq 4096 inferred] {FMSL}: Llama-3-8B full FT, {fc}, {n} A100 FSDP, pdbs {b}, GC on, FA2, bf16 (fp32 shards)",
     "llama-3-8b", "A100 80GB", "pytorch-fsdp+logit_bytes=0" if "liger" in fc else "pytorch-fsdp", "bf16-mixed", n, 4096,
     n * b,
     dict(dp=n, zero_stage=3, microbatch_size=b, recompute="full"), tps, round(peak / 2**30, 1))
    for fc, n, b, tps, peak in _FMS_LIGER)

# ---- huggingface/blog deepspeed-to-fsdp-and-back.md @ 09e9aa2d9b04feabe06bf98d25691caf8d967eea, Table 3:
# IBM Granite 7B (Llama 2 7B architecture; llama-2-7b preset, vocab 32008 vs 32000 ignored) on 4 A100 (80 GB assumed),
# "Batch size of 8", bf16; FSDP full sharding in "aligned mode" (fp32 shards, bf16 compute) vs DeepSpeed ZeRO-3.
# tokens/s/device 3158.7 / 3094.5 with step times 10.4 / 10.6 s -> 3158.7 x 10.4 = 32,850 tokens per device per step
# = 8 x 4,106: per-device batch 8 of ~4096 tokens (seq 4096 INFERRED), global batch 32. Activation checkpointing
# ASSUMED on (8 x 4096 tokens of a 7B model do not fit 80 GB without it); attention implementation not stated.
GRANITE = "huggingface/blog deepspeed-to-fsdp-and-back.md@09e9aa2d Table 3"
SCOUT6_GRANITE = (
    (f"[B seq/AC/80GB assumed] {GRANITE}: Granite 7B, FSDP FULL_SHARD aligned mode, 4 A100, pdbs 8",
     "llama-2-7b", "A100 80GB", "hf-fsdp", "bf16-mixed", 4, 4096, 32,
     dict(dp=4, zero_stage=3, microbatch_size=8, recompute="full"), 3158.7, None),
    (f"[B seq/AC/80GB assumed] {GRANITE}: Granite 7B, DeepSpeed ZeRO-3, 4 A100, pdbs 8",
     "llama-2-7b", "A100 80GB", "hf-deepspeed", "bf16-mixed", 4, 4096, 32,
     dict(dp=4, zero_stage=3, microbatch_size=8, recompute="full", fsdp_unit="tensor"), 3094.5, None),
)

# ---- hpcaitech/ColossalAI examples/language/llama/README.md @ 82e0d6bffa8ee0f92daec7376794d675dfd5cff6 ("c. Results")
# + benchmark_65B/gemini_auto/batch12_seq2048_flash_attn.sh @ 955091e8: LLaMA-65B (HF LlamaForCausalLM, 80 x 8192,
# 64 heads, ffn 22016), 4 nodes x 8 A800 ("connected with RDMA"), Gemini plugin (chunk-based ZeRO-3), -b 12 per GPU,
# -l 2048, -g gradient checkpointing, -x xformers flash attention; "throughput: 5.29 samples/s, TFLOPS/GPU: 176.84,
# max memory usage: 58500.20 MB" -> 5.29 x 2048 / 32 = 338.6 tokens/s/GPU (176.84 TFLOP/s = 8N x 338.6: recompute
# counted). Precision: GeminiPlugin default fp16 (priced as bf16-mixed, same FLOP rate); Gemini placement
# "auto" (GeminiPlugin(placement_policy="auto"): chunks placed on CPU when the GPU runs short, HybridAdam updating the
# CPU-resident ones) ASSUMED to hold the optimizer state (fp32 masters and moments) on the host: offload_optimizer.
# Without it the row was priced at 84.5 GiB, not fitting 80 (changed after reading that, nothing fitted); IB speed
# ASSUMED 4 x 200 Gb/s per node; 58500 MB read as MiB.
COLOSSAL = "hpcaitech/ColossalAI examples/language/llama/README.md@82e0d6bf"
SCOUT6_COLOSSAL = (
    (f"[B IB speed/placement assumed] {COLOSSAL}: LLaMA-65B Gemini, 32 A800, pdbs 12, seq 2048, GC, xformers",
     LLAMA65, _A800_IB, "hf-deepspeed", "bf16-mixed", 32, 2048, 384,
     dict(dp=32, zero_stage=3, microbatch_size=12, recompute="full", offload_optimizer=True), 5.29 * 2048 / 32,
     round(58500.20 / 1024, 1)),
)

SCOUTED_2026_12F = SCOUT6_FMS + SCOUT6_FMS_LIGER + SCOUT6_GRANITE + SCOUT6_COLOSSAL

# ---- seventh scouting pass (2026-12, SCOUTED_2026_12G): sources no earlier fit or check used, read after every fit
# and never fitted on. Labels: [A] every layout field stated by the source (its script or its log), [B] some
# assumed (named in the label). Memory as printed by the source (KempnerForge: GiB, counter not stated).
KF13 = MODELS_DIR + "kempnerforge-13b.config.json"     # 5120 x 40, 40 heads / 8 kv, ffn 17,920, vocab 128,256: 14.84B (README: 14.84B)
KF175 = MODELS_DIR + "kempnerforge-175b.config.json"   # 12288 x 96, 96 heads / 8 kv, ffn 39,680, vocab 128,256: 174.99B (README: 175.0B)
SMOL3 = MODELS_DIR + "smollm3-3b.config.json"          # 2048 x 36, 16 heads / 4 kv, ffn 11,008, vocab 128,256, tied: 3.08B
OPT175 = MODELS_DIR + "opt-175b.config.json"           # 12288 x 96, 96 heads, ffn 49,152, vocab 50,272, ReLU (2-matrix MLP): 174.6B

# ------------------------------------------------------------------------------------------------------------------
# KempnerForge (KempnerInstitute/KempnerForge; FSDP2 + DTensor TP with SequenceParallel
# (kempnerforge/distributed/tensor_parallel.py @ 0c4eba1e: sp on unless PP / tied / MoE), torch.compile, full AC,
# fused AdamW). PRECISION: kempnerforge/distributed/parallel.py @ 01b461a7 (the git of the 1-32 GPU sweep)
# build_parallel_model() ends with model.to(dtype=param_dtype) with param_dtype bf16 and an FSDP2
# MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32): the stored (sharded) parameters, their gradients and
# torch AdamW's moments are bf16, no fp32 master -> "bf16-mixed+optimizer_dtype=bf16" (8 B/param; the torchtitan
# profiles' grad_reduce_bytes=4 already prices the fp32 reduce-scatter). Evidence in the logs: 1-GPU 7B peaks at
# 80.7 GiB (8 B x 8.03e9 = 64 GB + activations; 16 B/param would be 128 GB), and the 70B 8-GPU preflight log grows
# from 94.2 to 128.5 GiB at the first optimizer step = 36.8e9 B / 8.8e9 local params = 4.2 B/param (two bf16
# moments). Cluster: 4 x H200 141 GB per node (NVLink
# inside the node), InfiniBand (NDR per the 175B README) between nodes -> hardware "H200+scale_up_size=4".
# ASSUMED for every KempnerForge row: one 400 Gb/s NDR HCA per GPU (the H200 preset's 50 GB/s/GPU; not stated).
# The torchtitan-compile profile stands in (KempnerForge is a torchtitan-style FSDP2 trainer; no own profile).
# Throughput columns are job totals: tokens/s/GPU = tok/s / GPUs (check: 70B 32 GPUs, 17,657 x 14.85 s =
# 262k tokens/step = 8 dp x 2 x 4 x 4096). Global batch = dp_shard x batch_size x grad_accum (sequences of 4096).
#
# (1) benchmarks/mfu_scaling/mfu_scaling_2026-04-05.md @ 9f3f03a070668192230c7c542a3ecebb22d9a20c (run at git
#     01b461a) + benchmarks/mfu_scaling/mfu_bench.sh @ same commit (per-experiment batch_size / grad_accum /
#     compile_model flags; exp 01-02 use batch 2 x GA 4, the others 4 x GA 2 (7B), 4 x GA 4 (13B), 2 x GA 4 (70B);
#     exp 08 runs compile_model=false -> plain "torchtitan" profile). Every layout field is in the script: [A].
KF = "H200+scale_up_size=4"
KFP = "bf16-mixed+optimizer_dtype=bf16"   # pure bf16 params / grads / Adam moments (see above)
KFS = "KempnerForge mfu_scaling@9f3f03a0"
_KF_SCALING = (  # (exp, model, gpus, tp, dp_shard, mbs, ga, compile, total tok/s, mem GB)
    ("01 7B 1 GPU", "llama-3-8b", 1, 1, 1, 2, 4, True, 10471, 80.7),
    ("02 7B FSDP2", "llama-3-8b", 2, 1, 2, 2, 4, True, 18728, 62.4),
    ("03 7B TP2", "llama-3-8b", 2, 2, 1, 4, 2, True, 13163, 57.8),
    ("04 7B FSDP4", "llama-3-8b", 4, 1, 4, 4, 2, True, 38983, 61.1),
    ("05 7B TP4", "llama-3-8b", 4, 4, 1, 4, 2, True, 25135, 39.4),
    ("06 7B TP2 FSDP2", "llama-3-8b", 4, 2, 2, 4, 2, True, 25980, 45.9),
    ("07 7B TP4 FSDP2 (2 nodes)", "llama-3-8b", 8, 4, 2, 4, 2, True, 44299, 32.7),
    ("08 13B FSDP8 (2 nodes, no compile)", KF13, 8, 1, 8, 4, 4, False, 35405, 88.5),
    ("09 13B TP4 FSDP2 (2 nodes)", KF13, 8, 4, 2, 4, 4, True, 27345, 45.1),
    ("10 7B TP4 FSDP4 (4 nodes)", "llama-3-8b", 16, 4, 4, 4, 2, True, 82988, 29.4),
    ("11 13B TP4 FSDP4 (4 nodes)", KF13, 16, 4, 4, 4, 4, True, 53814, 39.2),
    ("12 7B TP4 FSDP8 (8 nodes)", "llama-3-8b", 32, 4, 8, 4, 2, True, 155917, 27.6),
    ("13 13B TP4 FSDP8 (8 nodes)", KF13, 32, 4, 8, 4, 4, True, 104309, 36.3),
    ("14 70B TP4 FSDP8 (8 nodes)", "llama-3-70b", 32, 4, 8, 2, 4, True, 17657, 93.2),
)


def _kf_layout(tp, dp, mbs):
    lay = dict(tp=tp, dp=dp, zero_stage=3 if dp > 1 else 0, microbatch_size=mbs, recompute="full")
    if tp > 1:
        lay["sp"] = True
    return lay


SCOUT7_KEMPNER_SCALING = tuple(
    (f"[A] {KFS}: exp {exp}, {n} H200 (4/node), full AC, mbs {mbs} x GA {ga}"
     + (", compile" if comp else ", eager") + " (torchtitan profile stands in)",
     model, KF, "torchtitan-compile" if comp else "torchtitan", KFP, n, 4096, dp * mbs * ga,
     _kf_layout(tp, dp, mbs), round(tps / n, 1), mem)
    for exp, model, n, tp, dp, mbs, ga, comp, tps, mem in _KF_SCALING)

# (2) benchmarks/weak_scaling_160gpu/README.md @ e9f91892905dc840f7048a01e8028083eb4033e7 (run 2026-06-30 at git
#     3ad9d9a) + weak_scaling_160gpu_bench.sh @ same commit (13B: batch 4 x GA 4, 70B: batch 2 x GA 4, compile on,
#     TP 4 x FSDP dp_shard). Only the points the 1-32 GPU sweep does not hold (the 32-GPU points re-run there agree
#     within 6%). 160-GPU figures are the mean of 2 repeats. The logs print the JobConfig actually run: the
#     scaling points match the script (70b_064gpu log: batch_size=2, grad_accum_steps=4, compile_model=True), but the
#     8-GPU 70B point (results/preflight_70b_008gpu_tp4_fsdp2.log @ 17248f87) ran batch_size=1, grad_accum_steps=8,
#     compile_model=False (same 65,536 tokens/step): that row uses the log's values. The log's "mem=128.5/140GB" is
#     GiB (140 = the H200's 140.4 GiB). [A]
KFW = "KempnerForge weak_scaling_160gpu@e9f91892"
_KF_WEAK = (  # (model name, model, gpus, dp_shard, mbs, ga, compile, total tok/s, mem GiB)
    ("13B", KF13, 64, 16, 4, 4, True, 216507, 34.8), ("13B", KF13, 128, 32, 4, 4, True, 423306, 34.0),
    ("13B", KF13, 160, 40, 4, 4, True, 534644, 33.9),
    ("70B (preflight log: mbs 1 x GA 8, eager)", "llama-3-70b", 8, 2, 1, 8, False, 3623, 128.5),
    ("70B", "llama-3-70b", 64, 16, 2, 4, True, 35824, 86.8),
    ("70B", "llama-3-70b", 160, 40, 2, 4, True, 85571, 82.9),
)
SCOUT7_KEMPNER_WEAK = tuple(
    (f"[A] {KFW}: {name} TP4 FSDP{dp}, {n} H200 (4/node), full AC, mbs {mbs} x GA {ga}"
     + (", compile" if comp else ", eager"),
     model, KF, "torchtitan-compile" if comp else "torchtitan", KFP, n, 4096, dp * mbs * ga,
     _kf_layout(4, dp, mbs), round(tps / n, 1), mem)
    for name, model, n, dp, mbs, ga, comp, tps, mem in _KF_WEAK)

# (3) benchmarks/175b_360gpu/README.md @ b62d2e368edeeb259f20281934981812cb001c1a: 175B dense (Llama-3-style GQA),
#     90 nodes x 4 H200 SXM, TP 4 x FSDP2 dp_shard 90, per-GPU batch 8, GA 1 (global 720 x 4096 = 2.95M tokens),
#     full AC, compile, fp32 gradient reduction; 154,523 tokens/s over 360 GPUs = 429.2 tokens/s/GPU (19.09 s/step:
#     2,949,120 / 19.09 / 360 = 429.1); peak 53.8 GB. Precision differs from the sweeps: the README's checkpoint is
#     "bf16 weights plus fp32 optimizer moments" (~350 GB + ~2.1 TB = 12 B/param of optimizer state: fp32 master +
#     moments) and "parameters, gradients and optimizer state ... roughly 8 GB per GPU" (16 B x 175e9 / 360 = 7.8 GB)
#     -> standard mixed precision; priced "bf16-mixed-fp32-grads" as the torchtitan rows (fp32 sharded params/grads). [A]
SCOUT7_KEMPNER_175B = (
    ("[A] KempnerForge 175b_360gpu@b62d2e36: 175B TP4 FSDP90, 360 H200 (4/node), full AC, mbs 8, GA 1, compile",
     KF175, KF, "torchtitan-compile", "bf16-mixed-fp32-grads", 360, 4096, 720, _kf_layout(4, 90, 8),
     round(154523 / 360, 1), 53.8),
)

# ------------------------------------------------------------------------------------------------------------------
# PyTorch blog "Maximizing Training Throughput Using PyTorch FSDP and Torch.compile" (IBM + Meta, 2024;
# pytorch/pytorch.github.io _posts, stored id 3709511418): Table 1 = 128 A100 80GB, 400 Gbps inter-node (the fms-fsdp
# AWS p4de cluster: data/clusters/aws-p4de.yaml); Table 2 = 464 H100 80GB, 3.2 Tbps inter-node (= 50 GB/s/GPU, the
# H100 preset). Llama 2 shapes, "batch size 2", "selective activation checkpointing", seq 4096 (fms-fsdp default).
# MFU -> tokens/s/GPU with fms-fsdp's own FLOP count, checked on the README row it repeats (7B A100 no-compile:
# 0.57 x 312e12 / 3,760 tok/s = 47.3 GFLOP/token = 6N + 12 L d s = 40.4 + 6.4 = 46.9): tokens/s/GPU =
# MFU x peak / (6N + 12 L d s); 7B: 46.87 GFLOP/token, 13B: 6 x 13.016e9 + 12 x 40 x 5120 x 4096 = 88.17 GFLOP/token;
# peaks 312 (A100) and 989 (H100) TFLOP/s. (No-compile A100 rows = the fms-fsdp README rows already used: skipped.)
# 34B/70B are left out: their no-compile MFUs (0.47/0.50) do not reproduce the README's tokens/s (772 -> 0.55,
# 380 -> 0.54), so their MFU basis is unclear.
# ASSUMED: HSDP inside the node (dp_shard 8, as the README's 7B/13B rows), mbs 2 with no accumulation (global =
# 2 x GPUs), and "selective AC" of fms-fsdp (a fraction of blocks fully checkpointed, fraction not given) priced as
# the profile's op-level selective recompute. Eager = pytorch-fsdp profile; compile = torchtitan-compile profile as a
# stand-in (FSDP1 + torch.compile has no profile of its own).
_PTB = "PyTorch blog FSDP+compile"
_PTB_ROWS = (  # (table, model, hw, gpus, compile, mfu, flop/token, peak)
    ("T1", "llama-2-7b", "A100 80GB (AWS p4de)", 128, True, 0.68, 46.87e9, 312e12),
    ("T1", "llama-2-13b", "A100 80GB (AWS p4de)", 128, True, 0.60, 88.17e9, 312e12),
    ("T2", "llama-2-7b", "H100 80GB", 464, False, 0.37, 46.87e9, 989e12),
    ("T2", "llama-2-7b", "H100 80GB", 464, True, 0.45, 46.87e9, 989e12),
    ("T2", "llama-2-13b", "H100 80GB", 464, False, 0.35, 88.17e9, 989e12),
    ("T2", "llama-2-13b", "H100 80GB", 464, True, 0.43, 88.17e9, 989e12),
)
SCOUT7_PT_BLOG = tuple(
    (f"[B HSDP8/mbs2/AC-as-op assumed] {_PTB} {tab}: {model} {'compile (torchtitan-compile stands in)' if comp else 'eager'}, "
     f"{n} {'A100' if 'A100' in hw else 'H100'}, MFU {mfu}",
     model, hw, "torchtitan-compile" if comp else "pytorch-fsdp", "bf16-mixed", n, 4096, 2 * n,
     dict(dp=n, zero_stage=3, dp_shard=8, microbatch_size=2, recompute="selective"), round(mfu * peak / fpt, 1), None)
    for tab, model, hw, n, comp, mfu, fpt, peak in _PTB_ROWS)

# ------------------------------------------------------------------------------------------------------------------
# SmolLM3 (Hugging Face): huggingface/smollm text/pretraining/README.md @ cdbe30ad ("global batch size of 2.36M
# tokens with 4096 sequence length ... nanotron ... 384 H100 GPUs"), the Smol Training Playbook ch. "The Training
# Marathon" (copy stored as id 59725709609: "optimized our configuration for around 30% MFU on 384 GPUs (48 nodes)";
# "SmolLM3 required TP=2 to fit in memory") and the playbook's ~14k tokens/s/GPU before the storage stalls (quoted in
# stored notes: "~40% drop in throughput (14k to 8k tokens/sec/GPU)"). 2.36M / 4096 = 576 sequences; TP 2 -> dp 192,
# 3 sequences per dp rank. Check: 14,000 x (6 x 3.08e9 + 12 x 36 x 2048 x 4096 = 22.1 GFLOP) = 309 TFLOP/s = 31% of
# 989 (the playbook's "~30%"; tzafon.ai blog: "14k ... MFU capped at 29.4%").
# ZeRO-0: the Smol Training Playbook's "Optimizing Training Throughput" section (stored copy id 48402540377, read in the
# thirty-third pass; the row assumed ZeRO-1 until then, -12.0%). ASSUMED: mbs 3 with no accumulation, no activation
# recompute, nanotron tp_mode REDUCE_SCATTER (= sp). AWS p5 EFA (50 GB/s/GPU, the preset).
SCOUT7_SMOLLM3 = (
    ("[B mbs3/no-AC assumed] SmolLM3 playbook: SmolLM3-3B nanotron TP2 DP192 ZeRO-0, 384 H100, seq 4096, GBS 2.36M tok",
     SMOL3, "H100 80GB", "nanotron", "bf16-mixed", 384, 4096, 576,
     dict(tp=2, sp=True, dp=192, zero_stage=0, microbatch_size=3, recompute="none"), 14000.0, None),
)

# ------------------------------------------------------------------------------------------------------------------
# OPT-175B (Zhang et al. 2022, arXiv 2205.01068, Sec. 2.4; metaseq projects/OPT/chronicles/10_percent_update.md
# @ b8924c0f): 992 A100 80GB (Azure; 8 x 200 Gb/s HDR per node = the A100 preset's 25 GB/s/GPU), FSDP + Megatron TP 8,
# batch 2M tokens at seq 2048, fp16 weights with fp32 Adam sharded, "up to 147 TFLOP/s per GPU". The logbook plans
# "33 days to fully train at this scale with 1024 80GB A100s" for 300B tokens = 300e9 / (33 x 86400 x 1024) = 102.7
# tokens/s/GPU, which matches 147 TFLOP/s only if the FLOPs count the recompute forward (8N + 16 l s h per token:
# 147e12 / (8 x 174.6e9 + 16 x 96 x 2048 x 12288 = 1.435e12) = 102.4); 6N would give 136. Taken: 102.4 ("up to":
# a peak, not an average).
# ASSUMED: full activation checkpointing (implied by the FLOP accounting above), dp 124 x 8 sequences = 992 per
# step (2.03M tokens) as mbs 8 with no accumulation, no sequence parallelism (metaseq's Megatron TP of 2021),
# fp16 priced as bf16-mixed. Framework: FairScale FSDP + Megatron TP -> the pytorch-fsdp profile stands in.
SCOUT7_OPT = (
    ("[B AC/mbs8/no-sp assumed] OPT-175B paper + logbook: metaseq FSDP x TP8, 992 A100 80GB, 147 TFLOP/s (8N basis)",
     OPT175, "A100 80GB", "pytorch-fsdp", "bf16-mixed", 992, 2048, 992,
     dict(tp=8, sp=False, dp=124, zero_stage=3, microbatch_size=8, recompute="full"), 102.4, None),
)

SCOUTED_2026_12G = (*SCOUT7_KEMPNER_SCALING, *SCOUT7_KEMPNER_WEAK, *SCOUT7_KEMPNER_175B, *SCOUT7_PT_BLOG,
                    *SCOUT7_SMOLLM3, *SCOUT7_OPT)

# ---- eighth scouting pass (2026-12, SCOUTED_2026_12H): Mixture-of-Experts runs from sources no earlier fit or check
# used, read after every fit and never fitted on. TFLOP/s -> tokens/s with each source's own FLOPs per token:
#: Megatron-LM's 2024 count (megatron/training/training.py num_floating_point_operations, core_r0.8/0.9; attention
#: not halved for causality): 12 L h^2 [(1 + g/a + s/h) + (f/h) x topk x 3/2 + V / (2 L h)] per token, Mixtral 8x7B
#: (L 32, h 4096, a 32, g 8, f 14336, topk 2, V 32000) at s 4096
MIXTRAL_8X7B_FLOPS = 8.2928e10
#: Megatron-LM's current transformer_flops() MLA branch (causal core attention halved, SwiGLU x 3, routed + shared
#: experts, logits), DeepSeek-V3 without MTP (L 61, 3 dense layers, h 7168, ffn 18432, expert ffn 2048, topk 8, one
#: shared expert, V 129280, 128 heads, q_lora 1536, kv_lora 512, qk 128, rope 64, v 128) at s 4096
DSV3_FLOPS = 2.4981e11
# ---------------------------------------------------------------------------------------------------------------------
# 1. NVIDIA/Megatron-LM megatron/core/transformer/moe/README.md (stored copy at commit 022bcb5a, the README of the
#    MCore v0.9-v0.12 era): "With MCore v0.9, we've achieved remarkable performance of **468 TFLOPS** for Mixtral 8X7B
#    bf16 training"; an earlier revision of the same README (the stored "Megatron Core MoE Key Features" excerpt):
#    "This boosts Mixtral 8X7B bf16 training to achieve **438 TFLOPS** as of MCore v0.8". Layout: the same README's
#    "Reference Best Parallel Mapping" table ("reference parallel mappings of MCore v0.8"): Mixtral 8x7B (Dropless),
#    vocab 32K, All-to-All dispatcher, BF16, 64 GPUs, seq 4096, TP1 EP8 PP4 VP8 MBS1 GBS256, on 8xH100 80GB HBM3
#    nodes (NVLink 4, InfiniBand 8x400 Gbit/s), PyTorch 24.09 + TE 1.11.
#    Not stated: recompute (none assumed), distributed optimizer (ZeRO-1 assumed: the README's own example script sets
#    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather), that the v0.9 468 figure used the v0.8
#    mapping (assumed), routing balance (dropless, learned aux-loss routing; imbalance 1 assumed = planner default).
#    TFLOP/s -> tokens/s: Megatron's 2024 count (flops.megatron_2024; attention not halved for causality):
#    12*32*4096^2*[(1+8/32+4096/4096) + 3.5*2*1.5 + 32000/(2*32*4096)] = 8.2928e10 FLOP/token, so
#    438e12/8.2928e10 = 5,282 and 468e12/8.2928e10 = 5,643 tokens/s/GPU.
_MIX = dict(tp=1, pp=4, schedule="interleaved", virtual_stages=8, ep=8, zero_stage=1, microbatch_size=1,
            recompute="none")
MEGATRON_MOE_README = (
    ("[B: recompute none, ZeRO-1 assumed] Megatron-LM MoE README: Mixtral 8x7B MCore v0.8, TP1 EP8 PP4 VP8, 64 H100",
     "mixtral-8x7b", "H100-SXM", "megatron", "bf16-mixed", 64, 4096, 256, _MIX, 438e12 / MIXTRAL_8X7B_FLOPS, None),
    ("[B: v0.8 mapping, recompute none, ZeRO-1 assumed] Megatron-LM MoE README: Mixtral 8x7B MCore v0.9, 64 H100",
     "mixtral-8x7b", "H100-SXM", "megatron", "bf16-mixed", 64, 4096, 256, _MIX, 468e12 / MIXTRAL_8X7B_FLOPS, None),
)

# ---------------------------------------------------------------------------------------------------------------------
# 2. NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md (stored at
#    1d9edcf8) and deepseek-v3-gb200-reproduce-guide.md (stored at 32ea0afd): DeepSeek-V3 (no MTP: the launch script
#    sets no --mtp-num-layers) pre-training, MXFP8 (--fp8-recipe mxfp8 --fp8-param-gather: fp8 primary weights ->
#    "fp8-params"), BF16 Adam moments with fp32 master and grads (--exp-avg-dtype bf16 ... -> optimizer_dtype
#    bf16-moments), 256 GB200 (NVL72, every 32 GPUs in one NVLink domain), TP1 PP8 EP32 ETP1 CP1, VPP4 through
#    --pipeline-model-parallel-layout "Et|(tt|)*30L" (32 chunks: embedding + 1 layer, 30 x 2 layers, loss only; rank r
#    holds chunks r, r+8, r+16, r+24 -> pp_layers (7,8,8,8,8,8,8,6)), MBS1 GBS2048, seq 4096, distributed optimizer,
#    --moe-router-force-load-balancing (random logits -> moe_routing 'uniform', the planner default).
#    Section 3 table ("optimization history"), TFLOPS/GPU rows used: baseline 494.46 (AlltoAll, recompute
#    "mlp up_proj" = dense-layer MLP + MLA up-projection); 566.07 (DeepEP, same recompute); 610.71 ("Remove up_proj
#    recompute": --recompute-modules mlp moe_act); 970.01 (final: HybridEP priced as DeepEP, CUDA graphs, recompute
#    mlp moe_act). TFLOP/s -> tokens/s with Megatron's current count (flops.megatron_2025_mla, causal MLA, no MTP):
#    2.4981e11 FLOP/token: 494.46e12/2.4981e11 = 1,979; 566.07 -> 2,266; 610.71 -> 2,445; 970.01 -> 3,883.
#    Each table row is cumulative: 566.07 also carries the two earlier fusion steps (529.55, 540.00), so the pure
#    DeepEP step is 540.00 -> 566.07 (x1.048).
#    Not modelled: CUDA graphs / CPU launch optimisations (the 663-970 rows differ only in those and in the dispatcher
#    kernel), so only the four rows above are taken.
_DS = dict(tp=1, pp=8, schedule="interleaved", virtual_stages=4, pp_layers=(7, 8, 8, 8, 8, 8, 8, 6), ep=32, etp=1,
           zero_stage=1, microbatch_size=1, recompute="selective")
_DS_PREC = "fp8-params+optimizer_dtype=bf16-moments"
MEGATRON_DSV3_GB200 = tuple(
    (f"[A] Megatron-LM DSv3 GB200 guide: {label}, TP1 PP8 VP4 EP32, 256 GB200", "deepseek-v3", "GB200", "megatron",
     _DS_PREC, 256, 4096, 2048, dict(_DS, moe_dispatcher=disp, recompute_modules=mods), tflops / DSV3_FLOPS, None)
    for label, disp, mods, tflops in (
        ("baseline MXFP8, AlltoAll, recompute mlp+mla_up_proj", "alltoall", ("mlp", "mla_up_proj"), 494.46e12),
        ("DeepEP, recompute mlp+mla_up_proj", "deepep", ("mlp", "mla_up_proj"), 566.07e12),
        ("DeepEP, recompute mlp+moe_act", "deepep", ("mlp", "moe_act"), 610.71e12),
        ("final: HybridEP (as deepep), CUDA graphs, recompute mlp+moe_act", "deepep", ("mlp", "moe_act"), 970.01e12)))

# ---------------------------------------------------------------------------------------------------------------------
# 3. pytorch/torchtitan torchtitan/distributed/deepep/README.md (stored at 022f885f): Qwen3-30B-A3B with DeepEP on
#    B200 (the README's "reproduced with ... GPU: NVIDIA B200"; 167.93 GiB = 94.15% -> 178.4 GiB devices), tokens/s
#    per GPU as printed, Memory/GPU = torchtitan's logged max reserved GiB. Config: torchtitan/models/qwen3/
#    train_configs/qwen3_30b_a3b_with_deepep.toml (stored at 6d356730; same as qwen3_10b_a1b_with_deepep.toml @
#    022f885f whose header says "should get: tps: 14,768 tflops: 340.88 on 8 B200s"): local_batch_size 8, seq 4096,
#    FSDP over every rank (data_parallel_shard_degree -1, replicate 1), TP1 CP1, EP 8, full activation checkpointing,
#    torch.compile of model and loss, debug moe_force_load_balance (torchtitan's _debug_force_load_balance_routing:
#    token i -> experts i*k..i*k+k-1 mod E, i.e. moe_routing round_robin), bf16 params / fp32 reduce (torchtitan
#    default mixed precision). "Strong Scaling (fixed batch size, increasing nodes)" keeps the LOCAL batch at 8 (its
#    128-GPU row equals the weak-scaling table's LBS 8 row: 13,856 tok/s, 114.78 GiB), so global batch = 8 x GPUs.
#    The weak-scaling LBS 10 row at 128 GPUs is taken too. The default-EP comparison ("33% faster than TorchTitan's
#    default expert parallelism (14,796 vs 9,930 tok/s/GPU at EP=8)") is [B]: 8 GPUs and the same config assumed.
_TT = "torchtitan-compile"
_TT_PREC = "bf16-mixed-fp32-grads+moe_routing=round_robin"
TORCHTITAN_DEEPEP_B200 = tuple(
    (f"[A] torchtitan DeepEP README: Qwen3-30B-A3B FSDP EP8 DeepEP, LBS {lbs}, full AC, {n} B200", "qwen3-30b-a3b",
     "B200", _TT, _TT_PREC, n, 4096, lbs * n,
     dict(zero_stage=3, ep=8, moe_dispatcher="deepep", microbatch_size=lbs, recompute="full"), tps, gib)
    for n, lbs, tps, gib in ((8, 8, 14796, 167.93), (16, 8, 14380, 138.75), (32, 8, 14276, 124.58),
                             (64, 8, 14107, 117.50), (128, 8, 13856, 114.78), (128, 10, 14123, 142.21))) + (
    ("[B: 8 GPUs, same config assumed] torchtitan DeepEP README: Qwen3-30B-A3B default EP (all-to-all), EP8, 8 B200",
     "qwen3-30b-a3b", "B200", _TT, _TT_PREC, 8, 4096, 64,
     dict(zero_stage=3, ep=8, moe_dispatcher="alltoall", microbatch_size=8, recompute="full"), 9930, None),
)

SCOUTED_2026_12H = (*MEGATRON_MOE_README, *MEGATRON_DSV3_GB200, *TORCHTITAN_DEEPEP_B200)

# ---- ninth scouting pass (2026-12, SCOUTED_2026_12I): dense runs on TPUs outside MaxText (Levanter via Marin, EasyLM)
# and one LitGPT run, read after every fit and never fitted on; the maxtext / pytorch-fsdp profiles stand in for
# those stacks. (An MLPerf v5.1 MI350X row has no preset and is left out.)
# ---------------------------------------------------------------------------------------------------------------
# Marin speedrun results (marin-community/marin, Levanter on Cloud TPU), experiments/speedrun/*/speedrun_results.json:
#   adamw_llama_scaling/130m  @ 38359f78 (total_tokens 2,599,944,192; training_time 1125.394 s; v5p-32; batch 128)
#   adamw_llama_scaling/300m  @ 3cb4a055 (5,999,951,872; 5250.401 s; v5p-32, num_chips 16; batch 128)
#   adamw_llama_scaling/520m  @ 0343cb27 (10,399,776,768; 18757.797 s; v5p-32; batch 256)
#   adamw_llama_scaling/1_2b  @ 3cb4a055 (23,999,807,488; 54527.103 s; v5p-32, num_chips 16; batch 256)
#   llama_150m_run            @ 3958e040 (1,572,864,000; 285.402 s; v4-128; batch 512, seq 1024)
#   llama_300m                @ 2f9d163b (6,291,456,000; 1115.869 s; v4-256; batch 1024, seq 1024)
# Chips: v5p-32 = 16 chips (the files' num_chips); v4-128 = 64, v4-256 = 128 chips (training_hardware_flops /
# training_time / 275e12 = 64.0 and 128.0). tokens/s/chip = total_tokens / training_time / chips, e.g. 1.2B:
# 23,999,807,488 / 54527.103 / 16 = 27,509. training_time is the sum of Levanter's logged per-step durations
# (marin/speedrun/speedrun.py, speedrun_results), so evaluations are excluded; the first step's compilation may be in it.
# Model shapes from model_config (Llama: hidden, intermediate, heads, kv heads, layers, untied); vocabulary 128,256
# solved from the published model_size (all four sizes give exactly 128,256 = the Llama 3 tokenizer) -> files under
# benchmarks/models/ reproduce model_size to the parameter.
# Layout [B]: Levanter's default mesh shards parameters and optimizer state over every chip (FSDP over the "data" axis
# -> zero_stage 3, dp = chips), per-chip batch = batch / chips as one microbatch (no accumulation is configured);
# gradient_checkpointing true = Levanter's default block remat (recompute="full"); mixed precision p=f32,c=bf16
# (Marin's default -> "fp32-params"). MaxText's profile stands in for Levanter (JAX/XLA on TPU).
def _marin(label, model, hw, chips, seq, gbs, tokens, secs):
    """One Marin speedrun row: FSDP over every chip, one microbatch of gbs / chips sequences, full remat."""
    return (f"[B] Marin speedrun (Levanter) {label}: FSDP {chips}, mbs {gbs // chips}, seq {seq}, full remat", MODELS_DIR + model,
            hw, "maxtext", "fp32-params", chips, seq, gbs,
            dict(dp=chips, zero_stage=3, microbatch_size=gbs // chips, recompute="full"), tokens / secs / chips, None)

SCOUT9_MARIN = (
    _marin("Llama 130M (adamw_llama_scaling) v5p-32", "marin-llama-130m.config.json", "TPU v5p+scale_up_size=16", 16,
           4096, 128, 2_599_944_192, 1125.3937461299429),
    _marin("Llama 300M (adamw_llama_scaling) v5p-32", "marin-llama-300m.config.json", "TPU v5p+scale_up_size=16", 16,
           4096, 128, 5_999_951_872, 5250.400686581957),
    _marin("Llama 520M (adamw_llama_scaling) v5p-32", "marin-llama-520m.config.json", "TPU v5p+scale_up_size=16", 16,
           4096, 256, 10_399_776_768, 18757.797290551214),
    _marin("Llama 1.2B (adamw_llama_scaling) v5p-32", "marin-llama-1.2b.config.json", "TPU v5p+scale_up_size=16", 16,
           4096, 256, 23_999_807_488, 54527.10330390734),
    _marin("Llama 150M (llama_150m_run) v4-128", "marin-llama-130m.config.json", "TPU v4+scale_up_size=64", 64,
           1024, 512, 1_572_864_000, 285.4022916740073),
    _marin("Llama 300M (llama_300m) v4-256", "marin-llama-300m.config.json", "TPU v4+scale_up_size=128", 128,
           1024, 1024, 6_291_456_000, 1115.86879359899),
)

# ---------------------------------------------------------------------------------------------------------------
# OpenLLaMA (openlm-research/open_llama README.md @ 21d97fb6): "Overall we reach a throughput of over 2200 tokens /
# second / TPU-v4 chip for our 7B model" (the 200B-token preview README @ 070f479c said "over 1900"); EasyLM on
# cloud TPU-v4s, "a combination of normal data parallelism and fully sharded data parallelism (ZeRO stage 3)".
# Script: young-geng/EasyLM examples/pretrain_llama_7b.sh @ 8446e740 ("pretrain a 7B LLaMA model on a TPU v4-512
# pod ... the ones we used to train the OpenLLaMA 7B model"): mesh_dim '-1,64,1' (dp x fsdp x mp: on v4-512 = 256
# chips -> dp 4 x fsdp 64), dtype fp32 (EasyLM's computation dtype; weights fp32; XLA's default TPU matmul precision
# runs fp32 matmuls as bf16 passes -> priced as "fp32-params"), seq_length 2048, batch_size 2048 (= 8 sequences per
# chip), LLaMA-7B shape (EasyLM LLAMA_STANDARD_CONFIGS['7b'], vocab 32000). Remat: EasyLM llama_model.py LLaMAConfig
# default remat_block='nothing_saveable' -> full recompute.
# [B]: the slice size of the actual run (v4-512 from the script's comment) and that the "2200" run used this script.
SCOUT9_OPENLLAMA = (
    ("[B] OpenLLaMA README (EasyLM): LLaMA-7B, DP 4 x FSDP 64 (v4-512 assumed), mbs 8, seq 2048, full remat",
     MODELS_DIR + "openllama-7b.config.json", "TPU v4+scale_up_size=256", "maxtext", "fp32-params", 256, 2048, 2048,
     dict(dp=256, zero_stage=3, dp_shard=64, microbatch_size=8, recompute="full"), 2200.0, None),
)

# ---------------------------------------------------------------------------------------------------------------
# LitGPT extensions/thunder/README.md @ 059941ff (Lightning Fabric, A100-SXM4-40GB x 8, torch 2.4 nightly):
# TinyLlama-1.1B pretraining, "Fully-sharded ZeRO 3 | Eager | 8 | 456.57 ms/iter @ step 10 | 22.13 GB", command
# --compiler null --train.global_batch_size 32 (the FSDP rows disable gradient accumulation). Script defaults
# (extensions/thunder/pretrain.py @ 03f8ddd9, a later commit: ASSUMED unchanged): micro_batch_size 4,
# precision "bf16-true" (bf16 weights and AdamW state, no master copy -> bf16-mixed + optimizer_dtype=bf16),
# FSDPStrategy FULL_SHARD with Block wrapping, no activation checkpointing; sequence = TinyLlama block size 2048
# (ASSUMED). 8 GPUs x 4 = 32 = global batch -> one iteration is one optimizer step:
# 4 x 2048 / 0.45657 s = 17,942 tokens/s/GPU (one iteration at step 10, not an average). Memory 22.13 GB =
# torch.cuda.max_memory_allocated / 1e9 -> 20.61 GiB. The Thunder rows and the DDP / 1-GPU rows (whose logged iteration
# is one micro-batch of a 16- / 128-way accumulation) are not used.
SCOUT9_LITGPT = (
    ("[B] LitGPT thunder README: TinyLlama-1.1B FSDP 8 eager, mbs 4 (assumed), bf16-true, 8 A100 40GB",
     TINYLLAMA, "A100 40GB", "pytorch-fsdp", "bf16-mixed+optimizer_dtype=bf16", 8, 2048, 32,
     dict(dp=8, zero_stage=3, microbatch_size=4, recompute="none"), 4 * 2048 / 0.45657, 22.13e9 / 2**30),
)

SCOUTED_2026_12I = (*SCOUT9_MARIN, *SCOUT9_OPENLLAMA, *SCOUT9_LITGPT)

# ---- tenth scouting pass (2026-12, SCOUTED_2026_12J): MLPerf Training LLM pre-training submissions (NVIDIA, closed
# division: v4.0 GPT-3 175B, v5.0 and v5.1 Llama 3.1 405B), read after every fit and never fitted on. tokens/s/GPU =
# GBS x seq / steady step time / GPUs from the result logs (tracked_stats train_step_time, or a training block's
# tokens over its start/stop times for GPT-3); layouts from the submissions' config_*.sh (MINIBS, TP, PP,
# INTERLEAVED_PIPELINE, CP, MICRO_BATCH_SIZE, TP_COMM_OVERLAP, USE_DIST_OPTIMIZER, FP8_PARAMS). [A]: every layout field
# read from the submission; [B]: some assumed, as the label says.
_405 = dict(tp=8, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved", virtual_stages=8, zero_stage=1,
            microbatch_size=1)

# --- MLPerf Training v5.0, NVIDIA, Llama 3.1 405B on DGX H100 (Eos), NeMo 25.01 ---------------------------------
# Source: prishajain1/training_results_v5.0@0fdc28f013256aea84fa36fdaf1e0fa46094b18c (a fork holding the v5.0 results)
#   NVIDIA/benchmarks/llama31_405b/implementations/eos-dfw_n{64,256,304,320,1024}_ngc25.01_nemo/
#     config_DGXH100_{64x8x288,256x8x72,304x8x64,320x8x56,1024x8x24}xtp8pp8cp2.sh:
#     TP8 PP8 INTERLEAVED_PIPELINE=8 CP2 MICRO_BATCH_SIZE=1 TP_COMM_OVERLAP=True ASYM_PP_EMBED/LOSS=True;
#     "global batch size will be DGXNNODES*MINIBS/16"
#   .../eos-dfw_n304_ngc25.01_nemo/config_common.sh: USE_DIST_OPTIMIZER=True, FP8=True, FP8_PARAMS=True
#   NVIDIA/results/eos-dfw_n*_ngc25.01_nemo/llama31_405b/result_0.txt (seq 8192 = the benchmark's max_sequence_length):
#   n64   (512 GPUs):  samples step 1152, train_step_time ~54.93 s  -> 1152*8192/54.93/512  = 335.6
#   n256  (2048 GPUs): step 1152, ~14.15 s (block-1 "throughput" 80.99 samples/s) -> 1152*8192/14.15/2048 = 325.6
#   n304  (2432 GPUs): step 1216, ~12.645 s (block throughput 95.43)              -> 1216*8192/12.645/2432 = 323.9
#   n320  (2560 GPUs): step 1120, ~11.13 s (block throughput 97.52, incl. slow first steps) -> 1120*8192/11.13/2560 = 322.0
#   n1024 (8192 GPUs): step 1536, ~5.18 s (block-2 throughput 293.19)             -> 1536*8192/5.18/8192 = 296.5
#   The logs also print "max_memory_usage" 52.48 (n256), 52.15 (n304), 52.06 (n320), 50.90 (n1024) with no unit
#   stated in the stored files; not used as the GiB column.
V50_H100_405B = tuple(
    (f"[A] MLPerf v5.0 NVIDIA Eos H100: Llama 3.1 405B TP8 PP8 VP8 CP2, GBS {gbs}, {n:,} GPUs", "llama-3.1-405b",
     "H100-SXM", "megatron", "fp8-params", n, 8192, gbs, dict(_405), tps, None)
    for n, gbs, tps in ((512, 1152, 1152 * 8192 / 54.93 / 512), (2048, 1152, 1152 * 8192 / 14.15 / 2048),
                        (2432, 1216, 1216 * 8192 / 12.645 / 2432), (2560, 1120, 1120 * 8192 / 11.13 / 2560),
                        (8192, 1536, 1536 * 8192 / 5.18 / 8192)))

# --- MLPerf Training v5.0, NVIDIA, Llama 3.1 405B on GB200 NVL72 (Tyche), NeMo 25.04 -------------------------------
# Source: prishajain1/training_results_v5.0@0fdc28f0
#   .../tyche_ngpu256_ngc25.04_nemo/config_GB200_64x4x112xtp4pp8cp2_cg.sh: MINIBS=112 TP4 PP8 VP8 CP2 MBS1
#     TP_COMM_OVERLAP=True, 64 nodes x 4 GPUs; config_common.sh: dist optimizer, FP8=True, FP8_PARAM_GATHER=True;
#     config_common_cg.sh: FULL_CUDA_GRAPH=True
#   .../tyche_ngpu512_ngc25.04_nemo/config_GB200_128x4x112xtp4pp8cp2_cg_dplast.sh: same, 128 nodes, FP8_PARAM_GATHER=True
#     (config_common_blackwell.sh: FP8_RECIPE="delayed")
#   NVIDIA/results/tyche_ngpu256_ngc25.04_nemo/llama31_405b/result_0.txt: step 448 samples, ~18.94 s
#     -> 448*8192/18.94/256 = 756.9
#   NVIDIA/results/tyche_ngpu512_ngc25.04_nemo/llama31_405b/result_0.txt: step 896 samples, ~19.23 s
#     -> 896*8192/19.23/512 = 745.5
_405_GB = dict(_405, tp=4)
V50_GB200_405B = (
    ("[A] MLPerf v5.0 NVIDIA Tyche GB200: Llama 3.1 405B TP4 PP8 VP8 CP2, GBS 448, 256 GPUs", "llama-3.1-405b",
     "GB200", "megatron", "fp8-params", 256, 8192, 448, dict(_405_GB), 448 * 8192 / 18.94 / 256, None),
    ("[A] MLPerf v5.0 NVIDIA Tyche GB200: Llama 3.1 405B TP4 PP8 VP8 CP2, GBS 896, 512 GPUs", "llama-3.1-405b",
     "GB200", "megatron", "fp8-params", 512, 8192, 896, dict(_405_GB), 896 * 8192 / 19.23 / 512, None),
)

# --- MLPerf Training v5.1, NVIDIA, Llama 3.1 405B, NVFP4 (NeMo 25.09) ----------------------------------------------
# Source: mlcommons/training_results_v5.1@4da2d1cd71eb30c855dad12712480ae5ac90dd89
#   configs (all "_cg_fp4": source config_common_fp4.sh, which is NOT stored; MBS1, ASYM_PP_EMBED/LOSS):
#   .../tyche_ngpu512 README -> config_GB200_128x4x144xtp4pp8cp2_cg_fp4.sh: MINIBS 144 TP4 PP8 VP8 CP2 TP_COMM_OVERLAP=False
#   .../theia_ngpu512 README -> config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh: MINIBS 72 TP2 PP8 VP8 CP2 (TP_COMM_OVERLAP
#       not set in the file: assumed True) ; systems/theia_ngpu512_ngc25.09_nemo.json: "Theia (8x NVIDIA GB300 NVL72)"
#       (the result log's submission_platform string says "128xNVIDIA GB200"; the system file and the GB300 config win)
#   .../hsg_ngpu2560 README -> config_GB200_640x4x24xtp4pp8cp2_cg_fp4.sh: MINIBS 24 TP4 PP8 VP8 CP2 TP_COMM_OVERLAP=False
#   .../hsg_ngpu5120 README -> config_GB200_1280x4x16xtp4pp8cp2_cg_fp4.sh: MINIBS 16, same layout
#   theia_ngpu512/config_common.sh: USE_DIST_OPTIMIZER=True, FP8=True, FP8_PARAM_GATHER=True, FP8_RECIPE="tensorwise"
#   results (result_0.txt, train_step_time, GBS = samples_count increment; theia logs global_batch_size 1152):
#   tyche 512 GB200:  1152, ~17.25 s -> 1152*8192/17.25/512  = 1068.5
#   theia 512 GB300:  1152, ~13.14 s -> 1152*8192/13.14/512  = 1402.7
#   hsg 2560 GB200:   960,  ~3.195 s -> 960*8192/3.195/2560  = 961.5
#   hsg 5120 GB200:   1280, ~2.245 s -> 1280*8192/2.245/5120 = 912.3
# [B]: config_common_fp4.sh is not stored, so the NVFP4 recipe's details (layers kept in bf16, fp4 parameter gather)
# are unknown; priced as 'nvfp4-mixed' (added after this pass was read: the datasheet fp4 peaks at the fp8 fraction, not
# fitted). Before it, priced as fp8 they were -33% to -38%.
_405_FP4 = dict(_405_GB, tp_overlap=False)
V51_FP4_405B = (
    ("[B] MLPerf v5.1 NVIDIA Tyche GB200: Llama 3.1 405B NVFP4 TP4 PP8 VP8 CP2, GBS 1152, 512 GPUs",
     "llama-3.1-405b", "GB200", "megatron", "nvfp4-mixed", 512, 8192, 1152, dict(_405_FP4), 1152 * 8192 / 17.25 / 512,
     None),
    ("[B] MLPerf v5.1 NVIDIA Theia GB300: Llama 3.1 405B NVFP4 TP2 PP8 VP8 CP2, GBS 1152, 512 GPUs "
     "(TP overlap assumed)", "llama-3.1-405b", "GB300", "megatron", "nvfp4-mixed", 512, 8192, 1152,
     dict(_405_GB, tp=2), 1152 * 8192 / 13.14 / 512, None),
    ("[B] MLPerf v5.1 NVIDIA GB200: Llama 3.1 405B NVFP4 TP4 PP8 VP8 CP2, GBS 960, 2,560 GPUs",
     "llama-3.1-405b", "GB200", "megatron", "nvfp4-mixed", 2560, 8192, 960, dict(_405_FP4), 960 * 8192 / 3.195 / 2560,
     None),
    ("[B] MLPerf v5.1 NVIDIA GB200: Llama 3.1 405B NVFP4 TP4 PP8 VP8 CP2, GBS 1280, 5,120 GPUs",
     "llama-3.1-405b", "GB200", "megatron", "nvfp4-mixed", 5120, 8192, 1280, dict(_405_FP4),
     1280 * 8192 / 2.245 / 5120, None),
)

# --- MLPerf Training v4.0, NVIDIA, GPT-3 175B on DGX H100 (Eos), NeMo 24.04 -----------------------------------------
# Source: mlcommons/training_results_v4.0@62f111b7690f163b269f32e4f93dcaaa13717c9c
#   NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_64x8x128x4x8_mbs2.sh: TP4 PP8 INTERLEAVED_PIPELINE=4
#     MICRO_BATCH_SIZE=2 TP_COMM_OVERLAP=True, sources config_fp8.sh (not read: fp8 assumed from its name),
#     MINIBS default 128 but the log's global_batch_size is 2304 (= DP 16 x 144): the run overrode MINIBS
#   NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_0.txt: submission_platform "64xNVIDIA DGX H100",
#     global_batch_size 2304, max_sequence_length 2048, gradient_accumulation_steps 72; training block
#     epoch_count 51,904,512 tokens (= 11 steps of 2304 x 2048), block_start 1715043961195 -> block_stop 1715044081144
#     = 119.949 s (2nd block; 1st 119.856 s, 3rd 119.865 s) -> 51904512/119.949/512 = 845.2 tokens/s/GPU
# [B]: fp8 recipe (config_fp8.sh not read), distributed optimizer (config_common.sh not read).
V40_GPT3 = (
    ("[B] MLPerf v4.0 NVIDIA Eos H100: GPT-3 175B TP4 PP8 VP4 MBS2, GBS 2304, 512 GPUs (fp8, ZeRO-1 assumed)",
     "gpt3-175b", "H100-SXM", "megatron", "fp8-mixed", 512, 2048, 2304,
     dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=4, zero_stage=1,
          microbatch_size=2), 51904512 / 119.949 / 512, None),
)

# Full-scale GPT-3 runs of the same submission (same repo/commit):
#   NVIDIA/benchmarks/gpt3/implementations/nemo/config_DGXH100_1344x8x6x4x6_mbs1_cg.sh (and ..._1452x8x6x4x6_mbs1_cg.sh,
#     its sibling, same file naming): MINIBS 6, TP4, PP6, INTERLEAVED_PIPELINE=8, MICRO_BATCH_SIZE=1,
#     TP_COMM_OVERLAP=True, LAYER_CUDA_GRAPH=1, config_fp8.sh
#   NVIDIA/results/eos-dfw_n1344_ngc24.04_nemo/gpt3/result_0.txt (tail): blocks of epoch_count 55,050,240 tokens
#     (= 10 steps of 2688 x 2048, GBS 2688 = DP 448 x MINIBS 6), block 1714681223410->1714681232618 = 9.208 s
#     (next two: 9.206 s, 9.210 s) -> 55050240/9.208/10752 = 556.0 tokens/s/GPU
#   NVIDIA/results/eos-dfw_n1452_ngc24.04_nemo/gpt3/result_0.txt (tail): blocks of 53,526,528 tokens
#     (= 9 steps of 2904 x 2048, GBS 2904 = DP 484 x 6), block 1714685120948->1714685129254 = 8.306 s
#     (next two 8.301 s, 8.302 s) -> 53526528/8.306/11616 = 554.8 tokens/s/GPU
# [B]: GBS from the config default MINIBS (the log's global_batch_size line was not read; the block token counts
#   are an exact integer number of such steps), the 1452-node config file not opened (name-equivalent), fp8 and
#   ZeRO-1 assumed as above. The planner has no per-layer CUDA-graph knob.
_GPT3_BIG = dict(tp=4, sp=True, tp_overlap=True, pp=6, schedule="interleaved", virtual_stages=8, zero_stage=1,
                 microbatch_size=1)
V40_GPT3 += (
    ("[B] MLPerf v4.0 NVIDIA Eos H100: GPT-3 175B TP4 PP6 VP8 MBS1, GBS 2688, 10,752 GPUs (fp8, ZeRO-1 assumed)",
     "gpt3-175b", "H100-SXM", "megatron", "fp8-mixed", 10752, 2048, 2688, dict(_GPT3_BIG),
     55050240 / 9.208 / 10752, None),
    ("[B] MLPerf v4.0 NVIDIA Eos H100: GPT-3 175B TP4 PP6 VP8 MBS1, GBS 2904, 11,616 GPUs (fp8, ZeRO-1 assumed)",
     "gpt3-175b", "H100-SXM", "megatron", "fp8-mixed", 11616, 2048, 2904, dict(_GPT3_BIG),
     53526528 / 8.306 / 11616, None),
)

SCOUTED_2026_12J = (*V50_H100_405B, *V50_GB200_405B, *V51_FP4_405B, *V40_GPT3)

# ---- eleventh scouting pass (2026-12, SCOUTED_2026_12K): the Zero Bubble Pipeline Parallelism paper's tables (1F1B,
# ZB-1p, 1F1B-I on 8-32 A100), read after every fit and never fitted on. The zero-bubble schedule's bubble was changed
# after reading them (cost/pipeline.py zero_bubble_fraction: the stage's own weight-gradient share and the paper's
# Appendix H count for m < p, both from the paper's formulas; before: (p-1)/3 always).
# ---------------------------------------------------------------------------------------------------------------
# SOURCE: Qi, Wan, Huang, Lin, "Zero Bubble Pipeline Parallelism" (Sea AI Lab; ICLR 2024, arXiv 2401.10241).
# Read from two independent stored transcriptions of the paper in the code index (find_string
# "Samples per GPU per second"; read_file ids 61003545947 = PDF extraction, 45548154975 = markdown rewrite;
# every number below agrees in both, and where they differ (Table 11) the PDF extraction is the one used).
#   Sec. 5.1 / Table 3 ("Models and fixed settings used in experiments"):
#     1.5B : 22 layers, 24 heads, hidden 2304, seq 1024, Pipelines (GPUs) 8,  microbatch size 6, m = 24/32/64
#     6.2B : 30 layers, 32 heads, hidden 4096, seq 1024, Pipelines (GPUs) 8,  microbatch size 3, m = 24/32/64
#     14.6B: 46 layers, 40 heads, hidden 5120, seq 1024, Pipelines (GPUs) 16, microbatch size 1, m = 48/64/128
#     28.3B: 62 layers, 48 heads, hidden 6144, seq 1024, Pipelines (GPUs) 32, microbatch size 1, m = 96/128/256
#   "both the initial and final pipeline stages possess one fewer transformer layer compared to the intermediate
#   stages" -> pp_layers: 22 = 2+6x3+2, 30 = 3+6x4+3, 46 = 2+14x3+2, 62 = 1+30x2+1.
#   "up to 32 NVIDIA A100 SXM 80G GPUs distributed across 4 nodes interconnected by a RoCE RDMA network";
#   implementation on Megatron-LM ("models analogous to GPT-3").
#   Pipelines = #GPU, so dp = 1 and tp = 1 (pure pipeline); global batch = microbatch size x m.
#   Table 4 ("Experiment result details"): samples per GPU per second and Memory (GB) for ZB-2p, ZB-1p, 1F1B, 1F1B-I.
#   Table 12 (Appendix H, m <= p): 1F1B and ZB-2p; "when m <= p ZB-1p and ZB-2p are essentially the same".
# Conversion: tokens/s/GPU = samples/s/GPU x 1024 (e.g. 1.5B, 1F1B, m=24: 11.8 x 1024 = 12,083.2).
# Schedules: 1F1B -> '1f1b'. ZB-1p -> 'zero-bubble' (the planner's ZB-H1): the paper's own Table 5 gives ZB-1p
#   and ZB-H1 identical bubble rates in all 12 settings (e.g. 1.5B m=24: 0.1585 and 0.1585) and ZB-1p is
#   "activation memory limited to pM_B", 1F1B's. ZB-2p (2pM_B) has no planner schedule except for m <= p (App. H).
# Assumed (hence [B]): vocabulary 50,257 GPT-2 BPE with tied embeddings (paper says only "analogous to GPT-3");
#   fp16 mixed precision priced as bf16-mixed (PREC below) (the repo's examples/pretrain_zero_bubble.sh @064369d6 adds --fp16
#   unless FP32 is set); no activation recompute (none stated; Table 4's 1F1B memory of 30 GB for 1.5B is
#   consistent with none); zero_stage 0 (dp = 1, so sharding is moot). Memory column: the paper's "Memory (GB)",
#   entered as printed (GB vs GiB not stated; which stage not stated, presumably the peak).
# ---------------------------------------------------------------------------------------------------------------
HW = "A100 80GB"
# Attention / dropout: priced as Megatron's unfused attention with stored s x s scores and dropout masks
# (TrainingSpec attention='naive', dropout=True). Evidence, all from the paper: its Table 1 gives the activation
# memory of B as sb(34h + 5as) (Korthikanti et al.'s count WITH the attention scores and dropout masks), and the
# reported Memory (GB) of 1F1B (30 / 39 / 32 / 43) is what the planner gives under this setting (27.0 / 36.3 / 30.3 /
# 40.4 GiB = 29.0 / 39.0 / 32.5 / 43.4 GB) and not under flash attention without dropout (11.7 / 22.5 / 21.1 / 25.1
# GiB). Against: the repo's later examples/pretrain_zero_bubble.sh @064369d6 passes --use-flash-attn. The flash,
# no-dropout pricing is reported beside every row as a sensitivity (REPORT.md); it is an input reading, no planner
# constant was touched.
PREC = "bf16-mixed+attention=naive+dropout=True"
# Pipeline sends: the repo's examples/pretrain_zero_bubble.sh @064369d6 passes --no-overlap-p2p-communication (and
# --use-legacy-models --transformer-impl local): blocking sends, the megatron-legacy profile (read after the pass: the
# interleaved multi-node rows were +12% to +20% with Megatron-Core's overlapped sends; non-interleaved schedules never
# overlap them, so only the 1F1B-I rows move)
ZB_FRAMEWORK = "megatron-legacy"
ZB_SETUPS = {  # name: (config, pp, microbatch, pp_layers, {m: {schedule: (samples/s/GPU, GB)}})
    "1.5B": ("zb-1.5b", 8, 6, (2, 3, 3, 3, 3, 3, 3, 2), {
        24: {"1F1B": (11.8, 30), "ZB-1p": (12.9, 32)},
        32: {"1F1B": (12.5, 30), "ZB-1p": (13.4, 32)},
        64: {"1F1B": (13.6, 30), "ZB-1p": (14.2, 32)}}),
    "6.2B": ("zb-6.2b", 8, 3, (3, 4, 4, 4, 4, 4, 4, 3), {
        24: {"1F1B": (3.50, 39), "ZB-1p": (3.88, 42)},
        32: {"1F1B": (3.70, 39), "ZB-1p": (4.00, 42)},
        64: {"1F1B": (4.03, 39), "ZB-1p": (4.20, 42)}}),
    "14.6B": ("zb-14.6b", 16, 1, (2,) + (3,) * 14 + (2,), {
        48: {"1F1B": (1.40, 32), "ZB-1p": (1.61, 33)},
        64: {"1F1B": (1.49, 32), "ZB-1p": (1.67, 33)},
        128: {"1F1B": (1.64, 32), "ZB-1p": (1.76, 33)}}),
    "28.3B": ("zb-28.3b", 32, 1, (1,) + (2,) * 30 + (1,), {
        96: {"1F1B": (0.76, 43), "ZB-1p": (0.87, 44)},
        128: {"1F1B": (0.80, 43), "ZB-1p": (0.90, 44)},
        256: {"1F1B": (0.88, 43), "ZB-1p": (0.96, 44)}}),
}
# Table 4 (other schedules, kept for the ordering checks only, not planner-expressible): ZB-2p and 1F1B-I
ZB_TABLE4_OTHER = {
    "1.5B": {24: {"ZB-2p": 14.5, "1F1B-I": 13.1}, 32: {"ZB-2p": 14.8, "1F1B-I": 13.4}, 64: {"ZB-2p": 14.9, "1F1B-I": 13.9}},
    "6.2B": {24: {"ZB-2p": 4.32, "1F1B-I": 4.01}, 32: {"ZB-2p": 4.35, "1F1B-I": 4.08}, 64: {"ZB-2p": 4.39, "1F1B-I": 4.19}},
    "14.6B": {48: {"ZB-2p": 1.81, "1F1B-I": 1.54}, 64: {"ZB-2p": 1.83, "1F1B-I": 1.59}, 128: {"ZB-2p": 1.85, "1F1B-I": 1.66}},
    "28.3B": {96: {"ZB-2p": 0.99, "1F1B-I": 0.82}, 128: {"ZB-2p": 1.00, "1F1B-I": 0.85}, 256: {"ZB-2p": 1.00, "1F1B-I": 0.90}},
}
# Table 12 (Appendix H, m <= p), (samples/s/GPU, GB): 1F1B and ZB-2p (= ZB-1p here, per the paper)
ZB_TABLE12 = {
    "1.5B": {2: {"1F1B": (3.56, 11), "ZB": (4.25, 12)}, 4: {"1F1B": (5.74, 18), "ZB": (6.92, 19)},
             8: {"1F1B": (8.26, 29), "ZB": (9.90, 34)}},
    "6.2B": {2: {"1F1B": (1.04, 21), "ZB": (1.33, 21)}, 4: {"1F1B": (1.69, 28), "ZB": (2.16, 29)},
             8: {"1F1B": (2.45, 39), "ZB": (3.07, 44)}},
    "14.6B": {4: {"1F1B": (0.39, 19), "ZB": (0.52, 20)}, 8: {"1F1B": (0.65, 24), "ZB": (0.85, 24)},
              16: {"1F1B": (0.95, 32), "ZB": (1.25, 33)}},
}
SCHED = {"1F1B": "1f1b", "ZB-1p": "zero-bubble", "ZB": "zero-bubble"}
SEQ = 1024


def _row(table, size, m, sched, sps, gb):
    """One row of the paper's Table 4 / 12: pure pipeline, the uneven split the paper describes."""
    cfg, pp, mbs, layers, _ = ZB_SETUPS[size]
    name = {"ZB": "ZB-2p (= ZB-1p at m<=p)"}.get(sched, sched)
    return (f"[B] ZeroBubble {table}: GPT {size}, PP{pp} (pure), mbs {mbs}, m={m}, {name}, {pp} A100 80GB",
            MODELS_DIR + cfg + ".config.json", HW, ZB_FRAMEWORK, PREC, pp, SEQ, mbs * m,
            dict(dp=1, tp=1, pp=pp, pp_layers=layers, schedule=SCHED[sched], microbatch_size=mbs, recompute="none",
                 zero_stage=0),
            round(sps * SEQ, 1), gb)


ZB_TABLE4_ROWS = tuple(_row("Table 4", size, m, s, *v)
                       for size, (_, _, _, _, ms) in ZB_SETUPS.items() for m, d in ms.items() for s, v in d.items())
# the m = p column of Table 12 (one full pipeline of microbatches) joins the headline set; the rest are extra checks
ZB_TABLE12_ROWS = tuple(_row("Table 12", size, m, s, *v)
                        for size, ms in ZB_TABLE12.items() for m, d in ms.items() for s, v in d.items())
_MEQP = {("1.5B", 8), ("6.2B", 8), ("14.6B", 16)}
SCOUTED_2026_12K_HEADLINE = ZB_TABLE4_ROWS + tuple(r for r in ZB_TABLE12_ROWS
                                          if any(f"GPT {s}," in r[0] and f"m={m}," in r[0] for s, m in _MEQP))
_TABLE12_REST = tuple(r for r in ZB_TABLE12_ROWS if r not in SCOUTED_2026_12K_HEADLINE)

# 1F1B-I as the paper ran it ("In our interleaved experiments, we always use the maximum number of chunks to ensure
# least bubble, i.e. each transformer layer serves as a chunk"; first/last stage one layer fewer): schedule=
# 'interleaved', virtual_stages = layers of a middle stage, the same uneven split (the planner accepts it and chunks
# the 1-layer-short end stages unevenly, shardplan.cost.pipeline.effective_virtual_stages). Table 4 gives no 1F1B-I
# memory (GB) 40 / 48 / 39 / 58 for 1.5B / 6.2B / 14.6B / 28.3B, entered below. [B] for the same assumptions as above.
_MEM_1F1B_I = {"1.5B": 40, "6.2B": 48, "14.6B": 39, "28.3B": 58}
ZB_TABLE4_1F1B_I = tuple(
    (f"[B] ZeroBubble Table 4: GPT {size}, PP{pp}, mbs {mbs}, m={m}, 1F1B-I (1 layer per chunk)",
     MODELS_DIR + cfg + ".config.json", HW, ZB_FRAMEWORK, PREC, pp, SEQ, mbs * m,
     dict(dp=1, tp=1, pp=pp, pp_layers=layers, schedule="interleaved", virtual_stages=max(layers),
          microbatch_size=mbs, recompute="none", zero_stage=0),
     round(ZB_TABLE4_OTHER[size][m]["1F1B-I"] * SEQ, 1), _MEM_1F1B_I[size])
    for size, (cfg, pp, mbs, layers, ms) in ZB_SETUPS.items() for m in ms)
# extra checks (not in the headline 30): 1F1B-I of Table 4 and the m < p columns of Table 12
SCOUTED_2026_12K = (*SCOUTED_2026_12K_HEADLINE, *ZB_TABLE4_1F1B_I, *_TABLE12_REST)

#: A twelfth scouting pass (SCOUTED_2026_12L), read after every fit and never fitted on: MLPerf Training rounds and
#: submitters the tenth pass did not read (v6.0 NVIDIA DeepSeek-V3 671B on GB200 / GB300, v6.0 Cisco H200 and B300,
#: v4.1 and v3.1 NVIDIA GPT-3 175B). tokens/s/GPU = global batch x seq / steady step time / GPUs, the step time from
#: each result log's own per-step timer away from warm-up and eval pauses; "[A]": every layout input stated by the
#: submission's config or log, "[B: ...]": what was assumed.


# =====================================================================================================
# 1. MLPerf Training v6.0, NVIDIA, DeepSeek-V3 671B pre-training (new benchmark in v6.0), NeMo 26.04.
#    Source: Richardyu114/training_results_v6.0 @ eabf23a07b2a0c60a289ff871dc3a46fff0d0421 (a fork holding
#    mlcommons/training_results_v6.0).
#    Configs: NVIDIA/benchmarks/deepseekv3_671b/implementations/
#      tyche-hsg_ngpu512_ngc26.04_nemo/config_GB200_128x4x240xtp2pp4ep32cp1_mxfp8_full_cg.sh  (512 GB200)
#      tyche-hsg_ngpu2048_ngc26.04_nemo/config_GB200_512x4x60xtp2pp4ep32cp1_mxfp8_full_cg.sh  (2048 GB200)
#      tyche-hsg_ngpu8192_ngc26.04_nemo/config_GB200_2048x4x16xtp2pp4ep32cp1_mxfp8_full_cg.sh (8192 GB200)
#      (4096 GB200: config_GB200_1024x4x32xtp2pp4ep32cp1_mxfp8_full_cg.sh, file listed, not opened: same family,
#       MINIBS 32 from its name; GBS 16384 confirmed by the log's samples_count increments)
#      theia_ngpu512_ngc26.04_nemo/config_GB300_64x4x240xtp1pp4ep32cp1_mxfp8_full_cg.sh  (256 GB300)
#      theia_ngpu512_ngc26.04_nemo/config_GB300_128x4x120xtp1pp4ep32cp1_mxfp8_full_cg.sh (512 GB300)
#    + config_common.sh (distributed optimizer via conf/deepseekv3_671b.yaml use_distributed_optimizer default True),
#      config_common_mxfp8.sh (FP8=True, FP8_PARAM_GATHER=True -> 'fp8-params'),
#      conf/model/671b.yaml (MTP_NUM_LAYERS default 1 -> 'deepseek-v3-mtp'; encoder_seq_length 4096;
#      micro_batch_size 1; GBS = MINIBS x GPUs / (TP x PP x CP)).
#    Layout (all five): PP 4 x VPP 4 with PIPELINE_LAYOUT "Et*4|(t*4|)*14tmL" = 16 chunks (embedding + 4 layers,
#      14 x 4 layers, 1 layer + MTP + loss); rank r holds chunks r, r+4, r+8, r+12 -> pp_layers (16,16,16,13);
#      EP 32, ETP 1 (default), CP 1; flex dispatcher with HybridEP (priced as DeepEP, as the project's MB rows);
#      OVERLAP_MOE_EXPERT_PARALLEL_COMM=True -> moe_a2a_overlap; GB200: TP 2 (sp), RECOMPUTE_MODULES="mlp";
#      GB300: TP 1, no recompute. Real data, learned routing (MOE_ROUTER_FORCE_LOAD_BALANCING=False, aux 0.01).
#    Not expressible / not priced: full-iteration CUDA graphs, paged stashing (MOE_PAGED_STASH, capacity
#      factor 4 buffers), DELAY_WGRAD_COMPUTE, fused CuteDSL grouped MLP, FP8 attention (FP8_DPA=True).
#    Step times (tracked_stats train_step_time at block level, lineno 299):
#      512 GB200  result_0.txt steps 41-48: 30.758 30.728 30.728 30.712 30.677 30.802 30.844 30.851 -> 30.76 s
#      2048 GB200 result_1.txt steps 10-18: 8.869 8.858 9.180 9.038 9.103 8.984 8.970 8.767 -> 8.97 s
#      4096 GB200 result_0.txt steps 45-47: 5.477 5.403 5.454 -> 5.445 s
#      8192 GB200 result_1.txt steps 26-33: 3.475 3.560 3.483 3.607 3.451 3.524 3.518 3.511 -> 3.516 s
#      256 GB300  theia_ngpu256 result_1.txt steps 28-35: 39.28 39.33 39.32 39.48 39.48 39.23 39.27 39.08 -> 39.31 s
#      512 GB300  theia_ngpu512 result_2.txt steps 43-49: 19.908 19.907 19.912 19.909 19.912 19.906 19.952 -> 19.91 s
#    (a third-party summary, vuiseng9's notes stored as id 54647765583, lists "Avg Step Time" 33.34 / 9.03 / 5.54 /
#    3.54 / 39.51 / 20.21 s: averages including the slow first steps; the steady values above are used)
#    [B] for all: token routing balance (real data; planner default imbalance 1), optimizer moment dtype (not set:
#    fp32 default), framework profile 'megatron' without TE in-place CE (cross_entropy_fusion_impl not read).
# =====================================================================================================
_DS = dict(pp=4, schedule="interleaved", virtual_stages=4, pp_layers=(16, 16, 16, 13), ep=32, etp=1,
           moe_dispatcher="deepep", zero_stage=1, microbatch_size=1, moe_a2a_overlap=True)
_DS_GB200 = dict(_DS, tp=2, sp=True, recompute="selective", recompute_modules=("mlp",))
_DS_B = "[B: balanced routing, fp32 moments, HybridEP as DeepEP]"
V60_DSV3 = tuple(
    (f"{_DS_B} MLPerf v6.0 NVIDIA {sys_}: DeepSeek-V3 (MTP) MXFP8 {lay}, GBS {gbs}, {n} GPUs", "deepseek-v3-mtp",
     hw, "megatron", "fp8-params", n, 4096, gbs, fields, gbs * 4096 / step / n, None)
    for sys_, hw, lay, n, gbs, fields, step in (
        ("GB200 (tyche-hsg)", "GB200", "TP2 PP4 VP4 EP32", 512, 15360, _DS_GB200, 30.76),
        ("GB200 (tyche-hsg)", "GB200", "TP2 PP4 VP4 EP32", 2048, 15360, _DS_GB200, 8.97),
        ("GB200 (tyche-hsg)", "GB200", "TP2 PP4 VP4 EP32", 4096, 16384, _DS_GB200, 5.445),
        ("GB200 (tyche-hsg)", "GB200", "TP2 PP4 VP4 EP32", 8192, 16384, _DS_GB200, 3.516),
        ("GB300 (theia)", "GB300", "TP1 PP4 VP4 EP32", 256, 15360, _DS, 39.31),
        ("GB300 (theia)", "GB300", "TP1 PP4 VP4 EP32", 512, 15360, _DS, 19.91),
    ))

# =====================================================================================================
# 2. MLPerf Training v6.0, Cisco, Llama 3.1 8B pre-training on 2 x C885A M8 (16 H200-SXM-141GB), NeMo /
#    Megatron-Bridge 26.04 container.
#    Source: same fork @ eabf23a0: Cisco/benchmarks/llama31_8b/implementations/nemo/config_C885A_H200_2x8x1xtp1pp1cp1_8b.sh
#    (TP1 PP1 CP1, MICRO_BATCH_SIZE 1, full CUDA graph) and Cisco/results/2xC885A_M8-8xH200-SXM-141GB/llama31_8b/
#    result_0.txt, whose config dump states: WORLD_SIZE=16 (2 nodes), global_batch_size 32, micro_batch_size 1,
#    "setting number of microbatches to constant 2", max_sequence_length 8192, fp8 'hybrid' with fp8_recipe
#    'tensorwise' and fp8_param True (-> 'fp8-params'), use_distributed_optimizer True with use_megatron_fsdp False
#    (-> ZeRO-1), no recompute_granularity (the listed recompute_modules ['core_attn'] is inactive without it),
#    cross_entropy_fusion_impl 'te' (-> 'megatron+loss=in_place'), params bf16, grads fp32 main.
#    Step: block-level train_step_time 1.1804 / 1.1803 s (steps 5376-5632, 5632-5888) -> 32 x 8192 / 1.1803 / 16.
#    [A]
# =====================================================================================================
V60_LLAMA8B = (
    ("[A] MLPerf v6.0 Cisco 2 x C885A H200: Llama 3.1 8B FP8 DP16 MBS1 GA2, GBS 32", "llama-3.1-8b", "H200",
     "megatron+loss=in_place", "fp8-params", 16, 8192, 32, dict(zero_stage=1, microbatch_size=1),
     32 * 8192 / 1.1803 / 16, None),
)

# =====================================================================================================
# 3. MLPerf Training v4.1, NVIDIA, GPT-3 175B (the MLPerf GPT-3 shape, preset 'gpt3-175b', seq 2048).
#    Source: swsok/training_results_v4.1 @ 8821c7037ffd06e3775398fd39361a4c591d2235 (a fork of
#    mlcommons/training_results_v4.1).
#    a) NVIDIA/benchmarks/gpt3/implementations/b200_n8_preview_nemo/config_DGXB200_8x8x1024x4x8_mbs2_cg.sh: 8 nodes
#       HGX B200, MINIBS 1024, TP4 PP8, INTERLEAVED_PIPELINE 6, MICRO_BATCH_SIZE 2, TP_COMM_OVERLAP True, LAYER_CUDA_GRAPH,
#       config_fp8.sh; config_common.sh: USE_DIST_OPTIMIZER=True, FP8_PARAMS=True. Log NVIDIA/results/
#       b200_n8_preview_nemo/gpt3/result_0.txt: submission_platform "8xNVIDIA HGX B200", global_batch_size 2048,
#       gradient_accumulation_steps 512 (= 2048 / (DP 2 x MBS 2)), max_sequence_length 2048, step increments
#       4,194,304 tokens, "train_step_timing in s" 36.02-36.05 (steady, blocks 1, 2 and the last) -> 36.04 s. [A]
#    b) eos_n32_ngc24.09_nemo/config_DGXH100_32x8x256x4x8_mbs2.sh: 32 DGX H100, MINIBS 256 (GBS 256 x DP 8 = 2048),
#       TP4 PP8 VP6 MBS2, TP overlap, fp8; result_0.txt last blocks: 18.355-18.378 s -> 18.37 s.
#    c) eos_n64_ngc24.09_nemo/config_DGXH100_64x8x128x4x8_mbs2.sh: 64 DGX H100, MINIBS 128 (x DP 16 = 2048),
#       same layout; result_0.txt last block: 9.486-9.504 s -> 9.495 s.
#    [B] for b, c: their config_common.sh is not stored; distributed optimizer and FP8_PARAMS=True taken from the same
#    submission's B200 config_common.sh. Not priced: DEFER_EMBEDDING_WGRAD_COMPUTE, layer CUDA graphs (B200).
# =====================================================================================================
_GPT3_V41 = dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=6, zero_stage=1,
                 microbatch_size=2)
V41_GPT3 = (
    ("[A] MLPerf v4.1 NVIDIA 8 x HGX B200 (preview): GPT-3 175B TP4 PP8 VP6 MBS2, GBS 2048, 64 GPUs", "gpt3-175b",
     "B200", "megatron", "fp8-params", 64, 2048, 2048, dict(_GPT3_V41), 4194304 / 36.04 / 64, None),
    ("[B: dist-opt, fp8 params from the B200 config_common] MLPerf v4.1 NVIDIA Eos H100: GPT-3 175B TP4 PP8 VP6 MBS2, "
     "GBS 2048, 256 GPUs", "gpt3-175b", "H100-SXM", "megatron", "fp8-params", 256, 2048, 2048, dict(_GPT3_V41),
     4194304 / 18.37 / 256, None),
    ("[B: dist-opt, fp8 params from the B200 config_common] MLPerf v4.1 NVIDIA Eos H100: GPT-3 175B TP4 PP8 VP6 MBS2, "
     "GBS 2048, 512 GPUs", "gpt3-175b", "H100-SXM", "megatron", "fp8-params", 512, 2048, 2048, dict(_GPT3_V41),
     4194304 / 9.495 / 512, None),
)

# =====================================================================================================
# 4. MLPerf Training v3.1, NVIDIA, GPT-3 175B on Eos (DGX H100), NeMo 23.09.
#    Source: mlcommons/training_results_v3.1 @ f33f9444205023cf49bf19ec960992b39663f6fd
#      NVIDIA/benchmarks/gpt3/implementations/pytorch/config_DGXH100_512x8x16x4x8_mbs1.sh (MINIBS 16, TP4 PP8, MBS 1,
#      TP_COMM_OVERLAP True, config_fp8.sh: FP8 hybrid, amax history 1024), config_DGXH100_1344x8x8x4x8_mbs1.sh
#      (MINIBS 8, same layout); the 1024-node file is named config_DGXH100_1024x8x16x4x8_mbs1.sh (listed, not opened).
#      conf/custom.yaml: GBS = MINIBS x GPUs / (TP x PP); virtual_pipeline_model_parallel_size defaults to
#      INTERLEAVED_PIPELINE or 12; sequence_parallel default True; overlap_p2p_comm True; megatron_amp_O2 (fp32 main
#      params); activation checkpointing off unless ACT_CKPT_* set.
#      Logs NVIDIA/results/eos-dfw_n{512,1024,1344}_ngc23.09_nemo/gpt3/result_0.txt (tails):
#        n512  (4096 GPUs): step +4,194,304 tokens (GBS 2048), train_step_timing 1.605-1.610 (one 1.631) -> 1.607 s
#        n1024 (8192 GPUs): step +8,388,608 tokens (GBS 4096), 1.619-1.644 -> 1.628 s
#        n1344 (10752 GPUs): step +5,505,024 tokens (GBS 2688), 0.929-0.943 (first 0.888) -> 0.929 s
#    [B]: config_common.sh is not stored: VP 12 (custom.yaml's default), distributed optimizer and no recompute assumed;
#    fp8 without fp8 parameters ('fp8-mixed': FP8_PARAMS did not exist in NeMo 23.09's MLPerf configs).
# =====================================================================================================
_GPT3_V31 = dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=12, zero_stage=1,
                 microbatch_size=1)
_V31_B = "[B: VP12 default, ZeRO-1, no recompute]"
V31_GPT3 = tuple(
    (f"{_V31_B} MLPerf v3.1 NVIDIA Eos H100: GPT-3 175B TP4 PP8 MBS1, GBS {gbs}, {n} GPUs", "gpt3-175b", "H100-SXM",
     "megatron", "fp8-mixed", n, 2048, gbs, dict(_GPT3_V31), gbs * 2048 / step / n, None)
    for n, gbs, step in ((4096, 2048, 1.607), (8192, 4096, 1.628), (10752, 2688, 0.929)))

SCOUTED_2026_12L = V60_DSV3 + V60_LLAMA8B + V41_GPT3 + V31_GPT3

# =====================================================================================================
# 5. MLPerf Training v6.0, Cisco, one C880A M8 with 8 x B300-SXM-288GB, Megatron-Bridge 26.04 container.
#    Source: same fork @ eabf23a0, Cisco/results/1xC880A_M8-8xB300-SXM-288GB/{llama31_8b,gpt_oss_20b}/result_0.txt.
#    Both logs print the run's full config dump ("Configuration Summary (Non-Default Values vs Megatron Core)").
#    a) Llama 3.1 8B: global_batch_size 16, micro_batch_size 2, "number of microbatches to constant 1" (dp 8), seq 8192,
#       TP=PP=1, fp4 'e2m1' (NVFP4 GEMMs) with fp8 tensorwise / fp8 DPA, fp8_param_gather False, distributed optimizer
#       (use_megatron_fsdp False), no recompute granularity, TE cross-entropy, full-iteration CUDA graph.
#       Step: block-level train_step_time 0.39855 s (samples 159744-172032) -> 16 x 8192 / 0.39855 / 8.
#       [B: nvfp4 recipe details (which layers stay bf16) priced as the project's 'nvfp4-mixed']
#    b) GPT-OSS-20B (24 layers, 2880 hidden, 32 experts top-4, sliding window 128 every other layer): global batch 24,
#       micro batch 3, one microbatch (dp 8), EP 1 (not in the non-default list; config name ..ep1), seq 8192, fp8
#       'e4m3' mxfp8 recipe without fp8 param gather ('fp8-mixed'), flex dispatcher (hybridep; irrelevant at EP 1),
#       moe_router_load_balancing_type 'none', distributed optimizer, no recompute, TE cross-entropy.
#       Step: block-level train_step_time 0.56202 s (samples 184320-196608) -> 24 x 8192 / 0.56202 / 8.
#       [B: learned routing with no balancing loss priced as balanced (planner default)]
# =====================================================================================================
V60_CISCO_B300 = (
    ("[B: nvfp4 recipe details] MLPerf v6.0 Cisco C880A 8 x B300: Llama 3.1 8B NVFP4 DP8 MBS2, GBS 16", "llama-3.1-8b",
     "B300", "megatron+loss=in_place", "nvfp4-mixed", 8, 8192, 16, dict(zero_stage=1, microbatch_size=2),
     16 * 8192 / 0.39855 / 8, None),
    # [B] the TE op fuser of NVIDIA's B300 FP8_MX V1 recipe assumed (gpt_oss_llm_pretrain.py; see _OP_FUSER below)
    ("[B: balanced routing] MLPerf v6.0 Cisco C880A 8 x B300: GPT-OSS-20B MXFP8 DP8 EP1 MBS3, GBS 24", "gpt-oss-20b",
     "B300", "megatron+loss=in_place+eager_ops=[]", "fp8-mixed", 8, 8192, 24, dict(zero_stage=1, microbatch_size=3),
     24 * 8192 / 0.56202 / 8, None),
)
SCOUTED_2026_12L = SCOUTED_2026_12L + V60_CISCO_B300

#: A thirteenth scouting pass (SCOUTED_2026_12M), read after every fit and never fitted on: technical reports and a
#: model card the project had not used (Nemotron-4 15B Table 2, BloombergGPT, DeepSeek-V2, MPT-7B). Every row is [B];
#: the DeepSeek-V2 and MPT-7B rows are whole-run averages (GPU-hours per trillion tokens, days for 1T tokens).


M = MODELS_DIR

# =====================================================================================================
# 1. Nemotron-4 15B Technical Report (Parmar et al., NVIDIA, arXiv 2402.16819), Sec. 2 "Pre-training" + Table 2.
#    Stored transcription: code-index id 61211626093 (offsets ~2500-9000).
#    Stated: 384 DGX H100 nodes, 8 x H100 80GB SXM5 each, NVLink/NVSwitch, 8 x 400 Gbps IB HCAs per node
#      (= the h100-sxm preset's 50 GB/s per GPU); "8-way tensor parallelism and data parallelism ... distributed
#      optimizer to shard the optimizer state over the data-parallel replicas"; bf16; seq 4096 (Table 1);
#      Table 2 (batch-size ramp): DP 96 / 192 / 288, GPUs 768 / 1,536 / 2,304, iteration time 0.57 / 0.58 / 0.64 s,
#      MFU 34.3 / 33.3 / 30.5 %, batch size 384 / 768 / 1,152 sequences.
#    tokens/s/GPU = batch x 4096 / iteration time / GPUs (e.g. 384 x 4096 / 0.57 / 768 = 3,593). Check against the
#      stated MFU: 3,593 x 6 x 15.63e9 = 337 TFLOP/s = 34.1% of 989 (34.3% stated; attention FLOPs make up the rest).
#    Model: models/nemotron-4-15b.config.json (ModelSpec fields; 15.63B params).
#    ASSUMED [B]: micro-batch 1 (the NeMo/Megatron default; 4 / 4 / 4 microbatches per DP rank), sequence parallelism
#      and TP communication overlap on (as the project's Nemotron-4 340B report row assumes for the same NeMo stack),
#      no activation recompute, ZeRO-1 = "distributed optimizer". Framework: megatron profile (NeMo / Megatron-Core).
# =====================================================================================================
_N15 = dict(tp=8, sp=True, tp_overlap=True, zero_stage=1, microbatch_size=1, recompute="none")
_N15_B = "[B: mbs 1, sp + tp_overlap, no recompute]"
NEMOTRON4_15B = tuple(
    (f"{_N15_B} Nemotron-4 15B report Table 2: TP8 DP{dp}, {n} H100, batch {gbs} x 4096", M + "nemotron-4-15b.config.json",
     "H100-SXM", "megatron", "bf16-mixed", n, 4096, gbs, dict(_N15), gbs * 4096 / it / n, None)
    for dp, n, it, gbs in ((96, 768, 0.57, 384), (192, 1536, 0.58, 768), (288, 2304, 0.64, 1152)))

# =====================================================================================================
# 2. BloombergGPT (Wu et al. 2023, arXiv 2303.17564), Sec. 2.x "Shape", 3.3 "Training Configuration",
#    "Hardware Stack", 3.4 "Large-scale Optimization". Stored transcription: code-index id 61069858959 (offset ~31000-38500).
#    Stated: 50.6B params, L = 70, D = 7680, 40 heads of 192 (BLOOM architecture and software stack: ALiBi; Table 4
#      vocabulary 131,072 - models/bloomberggpt-50b.config.json reproduces 50.56B); seq 2,048; batch 1,024 for the first
#      7,200 steps then 2,048 sequences; 64 p4d.24xlarge = 512 A100 40GB, NVSwitch inside, EFA 400 Gb/s per node
#      (-> scale_out_bandwidth 6.25e9 B/s per GPU, as the project's aws-p4de cluster file); ZeRO stage 3 through
#      SageMaker Model Parallelism with MiCS, "We shard a model across 128 GPUs, and we have 4 copies of the model"
#      (-> dp 512, zero_stage 3, dp_shard 128); activation checkpointing of every transformer layer (-> full);
#      bf16 compute, fp32 parameters and updates (-> bf16-mixed); "we achieve 102 TFLOPs on average and each
#      training step takes 32.5 seconds".
#    tokens/s/GPU = 2048 x 2048 / 32.5 / 512 = 252.1. The batch of the 32.5 s step is not stated: 2,048 (the batch of
#      95% of the steps) is taken; it is the one consistent with 102 TFLOP/s under the paper's own accounting (it counts
#      the recompute forward, "an additional 0.33x"): per token 8 x 50.56e9 (matmuls incl. recompute) + 16 x 70 x 2048 x
#      7680 (non-causal attention incl. recompute) = 4.22e11 FLOP -> 252.1 x 4.22e11 = 106 TFLOP/s (102 stated); at
#      batch 1,024 it would be 53.
#    ASSUMED [B]: the batch (above); micro-batch 4 with no accumulation (4 sequences per GPU per step; not stated);
#      the 'deepspeed' profile stands in for SMP's ZeRO-3/MiCS (SMP v1 sharded data parallelism is DeepSpeed-ZeRO-derived).
# =====================================================================================================
BLOOMBERGGPT = (
    ("[B: step batch 2048 inferred from 102 TFLOP/s, mbs 4, deepspeed profile for SMP/MiCS] BloombergGPT 50.6B: "
     "ZeRO-3 sharded over 128 x 4 replicas, full AC, 512 A100 40GB (p4d, EFA 400 Gb/s/node)",
     M + "bloomberggpt-50b.config.json", "A100 40GB+scale_out_bandwidth=6250000000", "deepspeed", "bf16-mixed", 512,
     2048, 2048, dict(dp=512, zero_stage=3, dp_shard=128, microbatch_size=4, recompute="full"),
     2048 * 2048 / 32.5 / 512, None),
)

# =====================================================================================================
# 3. DeepSeek-V2 (DeepSeek-AI 2024, arXiv 2405.04434), Sec. 3.1.2 (hyper-parameters), 3.1.3 "Infrastructures",
#    3.2 "Training and Inference Efficiency". Stored transcriptions: code-index ids 62014419490 (Sec. 3.1.3 text),
#    53994610483 (the 172.8K GPU-hours sentence).
#    Stated: HAI-LLM, "16-way zero-bubble pipeline parallelism, an 8-way expert parallelism, and ZeRO-1 data
#      parallelism"; no tensor parallelism ("a portion of the operators are recomputed"); shared-expert computation
#      overlapped with the EP all-to-all; H800 nodes of 8 GPUs (NVLink/NVSwitch, InfiniBand across); max sequence 4K;
#      batch ramped 2,304 -> 9,216 sequences over the first 225B tokens, then 9,216; token dropping during training;
#      "for training on each trillion tokens ... DeepSeek-V2 needs only 172.8K GPU hours".
#    tokens/s/GPU = 1e12 / (172,800 x 3,600) = 1,607.5 - a whole-run average (restarts, evaluation, the batch ramp
#      and any idle time included), like the project's DeepSeek-V3 2.788M-GPU-hour row.
#    Model: models/deepseek-v2.config.json (HF DeepseekV2 shape: 60 layers, 5120, 128 heads, MLA q_lora 1536 /
#      kv_lora 512, 2 shared + 160 routed experts of 1536, top-6, first layer dense, vocab 102,400): 235.7B total,
#      21.4B active (paper: 236B / 21B).
#    ASSUMED [B]: 1,024 GPUs (not published; dp 64 x pp 16, 144 microbatches of 1 per step); pp_layers
#      (3,3,4 x 12,3,3) for 60 layers on 16 stages; micro-batch 1; "a portion of the operators" recomputed read as the
#      set the same framework's next report names (DeepSeek-V3 Sec. 3.2.3: RMSNorm and the MLA up-projections;
#      'selective' with core attention alone priced 91.6 GiB of 80, predicted not to fit); balanced routing (planner default; the run drops tokens over device capacity); plain NCCL all-to-all
#      pricing of its custom kernels; no moe_a2a_overlap (the report overlaps the shared expert only, which the planner
#      cannot express); the megatron profile stands in for HAI-LLM; bf16-mixed.
# =====================================================================================================
DEEPSEEK_V2 = (
    ("[B: 1024 GPUs, pp_layers, mbs 1, V3's recompute set, balanced routing; whole-run GPU-hour average] DeepSeek-V2 "
     "236B: PP16 zero-bubble, EP8, ZeRO-1, no TP, H800, batch 9216 x 4096",
     M + "deepseek-v2.config.json", "H800", "megatron", "bf16-mixed", 1024, 4096, 9216,
     dict(pp=16, schedule="zero-bubble", pp_layers=(3, 3) + (4,) * 12 + (3, 3), ep=8, zero_stage=1,
          microbatch_size=1, recompute="selective", recompute_modules=("layernorm", "mla_up_proj")),
     1e12 / (172.8e3 * 3600), None),
)

# =====================================================================================================
# 4. MPT-7B model card (mosaicml/mpt-7b README.md on Hugging Face; stored copy code-index id 5858553616, "Training
#    Configuration" and "Data Mix"): "trained for 1 trillion tokens (with batch size 1760 and sequence length 2048)";
#    "trained on 440 A100-40GBs for about 9.5 days using the MosaicML Platform"; "sharded data parallelism using FSDP";
#    LION optimizer. tokens/s/GPU = 1e12 / (9.5 x 86,400 x 440) = 2,769 - wall-clock average incl. restarts
#    ("about 9.5 days": +-5% reading uncertainty).
#    Model: preset mpt-7b (6.65B; vocab 50,368 vs the card's 50,432: < 0.1%).
#    ASSUMED [B]: 4 sequences per GPU as one microbatch (1760 / 440; no accumulation), FSDP FULL_SHARD over all 440
#      (zero 3), full activation checkpointing (llm-foundry's A100-40GB 7B benchmark configs at seq 2048 run it),
#      amp_bf16 (-> bf16-mixed), Adam-sized optimizer state (LION keeps one moment: memory only); llm-foundry profile
#      (Triton/flash attention as in 2023); default A100 40GB interconnect.
# =====================================================================================================
MPT7B = (
    ("[B: mbs 4 no GA, full AC, whole-run wall-clock average] MPT-7B model card: FSDP 440 A100 40GB, batch 1760 x 2048",
     "mpt-7b", "A100 40GB", "llm-foundry", "bf16-mixed", 440, 2048, 1760,
     dict(dp=440, zero_stage=3, microbatch_size=4, recompute="full"), 1e12 / (9.5 * 86400 * 440), None),
)

SCOUTED_2026_12M = NEMOTRON4_15B + BLOOMBERGGPT + DEEPSEEK_V2 + MPT7B

#: A fourteenth scouting pass (SCOUTED_2026_12N), read after every fit and never fitted on: throughputs posted with
#: their configurations in GitHub issues and pull requests of training frameworks (pass 14N). Tokens/s/GPU; where the
#: source gives Megatron's TFLOP/s/GPU it is converted with Megatron-LM's own FLOP formula (num_floating_point_operations).

M = MODELS_DIR

# --- swiss-ai/Megatron-LM (CSCS Alps "Clariden", GH200 96GB, 4 per node), Megatron-Core, NGC PyTorch 25.01 ---
# Launch scripts submit-llama3-8b.sh / submit-llama3-300m.sh (swiss-ai/Megatron-LM @0e57e5e4 / @0b6e13f5): TP1 PP1,
# --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather, TE, bf16, no recompute flags,
# --use-precision-aware-optimizer --main-grads-dtype bf16, untied embeddings (8B), tokenizer tj-solergibert/swai
# (vocab 131072 assumed). TFLOP/s -> tokens/s with Megatron's formula (8B: 57.98 GFLOP/token at seq 8192;
# 3B: 27.78; 300M: 3.951 at seq 4096).
# PR #29 (2025-02-13): "llama 3.2 based 8b model. With 2M batch size: 32 nodes -> 413, 16 nodes -> 430 TFLOP/s/GPU".
#   Assumed: GBS 256 x 8192 (= "2M"; the stored script has GBS 128), MBS 1 and seq 8192 from the script.
# PR #10 (2025-02-07): Llama 3.2 3B config, "1 node: micro_batch_size 1 (~505 TFLOPS/GPU); 8 nodes: mbs 2 (~493)".
#   Assumed: seq 8192 and the 8B script's other flags; GBS 128 (only sets gradient accumulation).
# PR #23 (2025-02-12): 300M model (6 layers, h 2048, ffn 6144, 16 heads / 4 kv groups, tied embeddings),
#   "8 nodes, MBS 2, GBS 256, seq_len 4K, ~140 TFLOPS/GPU, iteration ~0.9 s" (the TFLOP/s figure is used; 0.9 s
#   gives 36,409 tokens/s/GPU, +3%).
SWISSAI = (
    ("[B: GBS 256 from '2M batch', seq 8192/MBS 1/no recompute from the launch script] swiss-ai/Megatron-LM#29: "
     "Llama-3 8B DP64 dist-opt, 16 nodes x 4 GH200", M + "swissai-llama3-8b.config.json", "GH200", "megatron",
     "bf16-mixed", 64, 8192, 256, dict(dp=64, zero_stage=1, microbatch_size=1), 430e12 / 57.982e9, None),
    ("[B: GBS 256 from '2M batch', seq 8192/MBS 1/no recompute from the launch script] swiss-ai/Megatron-LM#29: "
     "Llama-3 8B DP128 dist-opt, 32 nodes x 4 GH200", M + "swissai-llama3-8b.config.json", "GH200", "megatron",
     "bf16-mixed", 128, 8192, 256, dict(dp=128, zero_stage=1, microbatch_size=1), 413e12 / 57.982e9, None),
    ("[B: seq 8192, GBS 128, 8B script flags] swiss-ai/Megatron-LM#10: Llama-3.2 3B DP4 mbs 1, 1 node x 4 GH200",
     M + "swissai-llama3.2-3b.config.json", "GH200", "megatron", "bf16-mixed", 4, 8192, 128,
     dict(dp=4, zero_stage=1, microbatch_size=1), 505e12 / 27.783e9, None),
    ("[B: seq 8192, GBS 128, 8B script flags] swiss-ai/Megatron-LM#10: Llama-3.2 3B DP32 mbs 2, 8 nodes x 4 GH200",
     M + "swissai-llama3.2-3b.config.json", "GH200", "megatron", "bf16-mixed", 32, 8192, 128,
     dict(dp=32, zero_stage=1, microbatch_size=2), 493e12 / 27.783e9, None),
    ("[A] swiss-ai/Megatron-LM#23: Llama-3 300M DP32 mbs 2, GBS 256, seq 4096, 8 nodes x 4 GH200",
     M + "swissai-llama3-300m.config.json", "GH200", "megatron", "bf16-mixed", 32, 4096, 256,
     dict(dp=32, zero_stage=1, microbatch_size=2), 140e12 / 3.9510e9, None),
)

# --- NVIDIA/Megatron-LM#756 (2024-04-05 comment, after the maintainers' advice): Mixtral 8x7B on 16 H100, latest
# MCore (ba773259), grouped_gemm 1.0, --moe-token-dispatcher-type alltoall, EP8 TP2 (log: "world size 16, data-parallel
# size 8, tensor-model-parallel size 2, pipeline 1"), GBS 128, recompute_granularity None, bf16. Log iterations 85-87:
# 5,581 / 5,696 / 5,445 ms, 229-240 TFLOP/s/GPU. Sequence length not in the retrieved part of the dump: 2048 is the only
# value consistent with both printed numbers (128 x 2048 / 5.57 s / 16 = 2,940 tok/s/GPU x 79.7 GFLOP/token (Megatron
# formula, top-2) = 234 TFLOP/s; seq 4096 would need 469). Assumed: MBS 1, sequence parallel on (MCore requires it
# for TP with EP), distributed optimizer. The original post (130 TFLOP/s, old dispatcher) is excluded: the reporter
# changed the setup on maintainer advice.
MEGATRON_756 = (
    ("[B: seq 2048 inferred from step time vs TFLOP/s, MBS 1, SP, dist-opt] NVIDIA/Megatron-LM#756: Mixtral 8x7B "
     "TP2 EP8 DP8 alltoall + grouped GEMM, GBS 128, no recompute, 16 H100", "mixtral-8x7b", "H100-SXM", "megatron",
     "bf16-mixed", 16, 2048, 128, dict(dp=8, tp=2, sp=True, ep=8, zero_stage=1, microbatch_size=1),
     128 * 2048 / 5.574 / 16, None),
)

# --- pytorch/torchtitan#778 (2025-01-07, danielvegamyhre, Meta): Llama 3 8B, FSDP2, batch 1, seq 4096, no AC,
# table header "8 H100s" (the prose says 4; the table is used). Tokens/sec per GPU as torchtitan prints (TFLOPS column
# 231 for 4,495 tok/s confirms per-GPU). Assumed: Meta's H100 96GB / 500 W nodes of torchtitan's own performance docs,
# bf16 params with fp32 gradient reduction (torchtitan default). FP8 row: torchao float8 tensorwise, compile of the
# full model (Triton casts fused), priced with the fp8-mixed policy.
TT_778 = tuple(
    (f"[B: 8 GPUs (table header), H100 96GB assumed] pytorch/torchtitan#778: Llama 3 8B FSDP8 {name}, lbs 1, "
     f"seq 4096, no AC", "llama-3-8b", "H100 96GB", fw, prec, 8, 4096, 8,
     dict(dp=8, zero_stage=3, microbatch_size=1, recompute="none"), tps, None)
    for name, fw, prec, tps in (("bf16 eager", "torchtitan", "bf16-mixed-fp32-grads", 4495.0),
                                ("bf16 torch.compile", "torchtitan-compile", "bf16-mixed-fp32-grads", 5033.8),
                                ("float8 tensorwise, compile full model", "torchtitan-compile", "fp8-mixed", 5768.6)))

# --- pytorch/torchtitan#1207 (2025-05-20): "Llama3 8b on 4xH100s with per op SAC, using FSDP=2, TP=2; bf16: 5378 TPS,
# 45.68 GiB peak". The float8-rowwise number of the same post is the bug being reported (slower than bf16): excluded.
# Assumed: default llama3_8b.toml of that time (local batch 1, seq 8192, compile off), TP with sequence parallel
# (torchtitan's TP plan), H100 96GB as above.
TT_1207 = (
    ("[B: default toml lbs 1 / seq 8192 / eager, H100 96GB assumed] pytorch/torchtitan#1207: Llama 3 8B FSDP2 x TP2, "
     "per-op SAC, bf16, 4 H100", "llama-3-8b", "H100 96GB", "torchtitan", "bf16-mixed-fp32-grads", 4, 8192, 2,
     dict(dp=2, zero_stage=3, tp=2, sp=True, microbatch_size=1, recompute="selective"), 5378.0, 45.68),
)

# --- alibaba/Megatron-LLaMA#16 (2023-09-14): 13B LLaMA on 2 x 8 A800 80GB, TP4 PP1 --sequence-parallel, mbs 4,
# GBS 1024, seq 2048, --overlapped-distributed-optimizer, --no-gradient-accumulation-fusion, no recompute flag:
# "only 840 token/sec/GPU". Unresolved in the thread (no misconfiguration identified). Megatron-LLaMA is a 2023
# Megatron-LM fork: megatron-legacy profile. Assumed: bf16, the cluster's inter-node network (A800 preset).
MEGATRON_LLAMA_16 = (
    ("[B: bf16, A800 preset network] alibaba/Megatron-LLaMA#16: LLaMA-13B TP4 SP DP4, mbs 4, GBS 1024, seq 2048, "
     "overlapped dist-opt, no AC, 16 A800", "llama-2-13b", "A800", "megatron-legacy", "bf16-mixed", 16, 2048, 1024,
     dict(dp=4, tp=4, sp=True, zero_stage=1, microbatch_size=4), 840.0, None),
)

# --- hpcaitech/ColossalAI#4551 (2023-08-30): examples/language/llama2/benchmark.py, config 13b, plugin gemini
# (ZeRO-3-style chunked sharding), batch_size 8 per GPU, grad_checkpoint True, max_length 4096, xformers, 8 A100;
# printed step time 19.714 s (step 2; step 1 22.9 s). tokens/s/GPU = 8 x 4096 / 19.714. Assumed: A100 80GB; the
# hf-deepspeed ZeRO-3 profile as for the ColossalAI Gemini row already in public_runs.py.
COLOSSAL_4551 = (
    ("[B: A100 80GB, Gemini as ZeRO-3, early step] hpcaitech/ColossalAI#4551: LLaMA-2 13B Gemini, pdbs 8, seq 4096, "
     "grad ckpt, 8 A100", "llama-2-13b", "A100 80GB", "hf-deepspeed", "bf16-mixed", 8, 4096, 64,
     dict(dp=8, zero_stage=3, microbatch_size=8, recompute="full"), 8 * 4096 / 19.714, None),
)

SCOUTED_2026_12N = SWISSAI + MEGATRON_756 + TT_778 + TT_1207 + MEGATRON_LLAMA_16 + COLOSSAL_4551

#: A fifteenth scouting pass (SCOUTED_2026_12O), read after every fit and never fitted on: SemiAnalysis' MI300X
#: training benchmark bug reports on ROCm/TransformerEngine (Oct 2024, issues #72 / #76 / #78 / #79), which post complete
#: single-file reproduction scripts (synthetic data, per-GPU batch bsz, gradient accumulation 8, fused AdamW with fp32
#: master weights, bf16 autocast, TE fp8 DelayedScaling HYBRID where stated, no activation checkpointing). The scripts
#: report TFLOP/s per GPU with flops_per_token = 6 N + 12 L H hd T (N all parameters incl. embeddings); tokens/s/GPU =
#: TFLOP/s x 1e12 / flops_per_token. They measure late-2024 ROCm 6.2 TransformerEngine builds being fixed at the time.

_L8B_FPT = 6 * 8_030_261_248 + 12 * 32 * 32 * 128 * 4096  # Llama 3.1 8B, T=4096
_P70 = 2 * 128256 * 8192 + 4 * (8192 * 10240 + 8192 * 8192 + 3 * 8192 * 28672 + 2 * 8192) + 8192
_P70_FPT = 6 * _P70 + 12 * 4 * 64 * 128 * 4096  # Llama 3.1 70B 4-layer proxy, T=4096
_G = 50304 * 1600 + 1024 * 1600 + 48 * (2 * 1600 + 1600 * 4800 + 4800 + 1600 * 1600 + 1600 + 2 * 1600
                                       + 1600 * 6400 + 6400 + 6400 * 1600 + 1600) + 2 * 1600
_GPT2XL_FPT = 6 * _G + 12 * 48 * 25 * 64 * 1024  # GPT-2 XL (vocab 50304, tied), T=1024

P70 = MODELS_DIR + "llama-3.1-70b-4layer-proxy.config.json"
GPT2XL = MODELS_DIR + "gpt2-xl-50304.config.json"


def _tps(tflops, fpt):
    """tokens/s/GPU from the scripts' TFLOP/s per GPU and their FLOPs per token."""
    return tflops * 1e12 / fpt


SCOUTED_2026_12O = (
    # ROCm/TransformerEngine issue #78 "[FSDP 8xMI300X]: LLama3 70B 4 Layer Proxy Model GPU Core Dumps"
    # https://github.com/ROCm/TransformerEngine/issues/78 ; script: FSDP1 FULL_SHARD, transformer_auto_wrap per
    # TE TransformerLayer, MixedPrecision(param/reduce bf16), seq 4096, grad_acc 8, fp8 TE.
    ("[B: TFLOP/s converted; AMD's run with TE PR#66] SemiAnalysis 70B 4-layer proxy, FSDP, TE fp8, bsz 2, 8xMI300X",
     P70, "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 2 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=2), _tps(572, _P70_FPT), None),
    ("[B: TFLOP/s converted; reporter's run after TE PR#66 merged, mean of 50 steps after 32 warmup] SemiAnalysis "
     "70B 4-layer proxy, FSDP, TE fp8, bsz 10 (script default), 8xMI300X",
     P70, "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 10 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=10), _tps(716.97, _P70_FPT), None),
    ("[B: TFLOP/s converted; pre-PR#66 TE (ROCm 6.2), preliminary] SemiAnalysis 70B 4-layer proxy, FSDP, TE fp8, "
     "bsz 2, 8xMI300X",
     P70, "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 2 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=2), _tps(491.22, _P70_FPT), None),
    # ROCm/TransformerEngine issue #79 "[FSDP 8xMI300X] Llama3 8B FP8 is 21% slower than BF16 & OOMs on the same
    # batch size" https://github.com/ROCm/TransformerEngine/issues/79 ; train_fsdp_llama_8b.py (same template,
    # Llama 3.1 8B config max_seq_len 4096; grad_acc 8 assumed from the template).
    ("[B: TFLOP/s converted; grad_acc 8 assumed] SemiAnalysis Llama 3.1 8B, FSDP + torch.compile (nightly), bf16, "
     "bsz 4, 8xMI300X",
     "llama-3.1-8b", "MI300X", "pytorch-fsdp", "bf16-mixed", 8, 4096, 4 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=4), _tps(410.42, _L8B_FPT), None),
    ("[B: TFLOP/s converted; grad_acc 8 assumed; AMD's run with TE PR#66] SemiAnalysis Llama 3.1 8B, FSDP, TE fp8, "
     "bsz 2, 8xMI300X",
     "llama-3.1-8b", "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 2 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=2), _tps(442, _L8B_FPT), None),
    ("[B: TFLOP/s converted; grad_acc 8 assumed; AMD's run with TE PR#66] SemiAnalysis Llama 3.1 8B, FSDP, TE fp8, "
     "bsz 4, 8xMI300X",
     "llama-3.1-8b", "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 4 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=4), _tps(474, _L8B_FPT), None),
    ("[B: TFLOP/s converted; grad_acc 8 assumed; pre-PR#66 TE (ROCm 6.2), preliminary] SemiAnalysis Llama 3.1 8B, "
     "FSDP, TE fp8, bsz 2, 8xMI300X",
     "llama-3.1-8b", "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 4096, 2 * 8 * 8,
     dict(dp=8, zero_stage=3, microbatch_size=2), _tps(324, _L8B_FPT), None),
    # ROCm/TransformerEngine issue #76 "[DDP 8xMI300X] GPT2-1.5B FP8 is 25% slower than BF16 & OOMs on the same batch
    # size" https://github.com/ROCm/TransformerEngine/issues/76 ; DDP script: GPT-2 XL (48 x 1600, 25 heads, vocab
    # 50304, tied), seq 1024, grad_acc 8 (require_backward_grad_sync only on the last micro-step), TE fp8.
    ("[B: TFLOP/s converted; AMD's run with TE PR#66] SemiAnalysis GPT-2 XL 1.5B, DDP, TE fp8, bsz 28, 8xMI300X",
     GPT2XL, "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 1024, 28 * 8 * 8,
     dict(dp=8, zero_stage=0, microbatch_size=28), _tps(315, _GPT2XL_FPT), None),
    ("[B: TFLOP/s converted; AMD's run with TE PR#66] SemiAnalysis GPT-2 XL 1.5B, DDP, TE fp8, bsz 42, 8xMI300X",
     GPT2XL, "MI300X", "pytorch-fsdp", "fp8-mixed", 8, 1024, 42 * 8 * 8,
     dict(dp=8, zero_stage=0, microbatch_size=42), _tps(324, _GPT2XL_FPT), None),
    # ROCm/TransformerEngine issue #72 "[1xMI300X] GPT-2 XL 1.5B FP8 Training ~30% slower than H100 FP8"
    # https://github.com/ROCm/TransformerEngine/issues/72 (reprod.py, single GPU, bsz 14; grad_acc assumed 8)
    ("[B: TFLOP/s converted; grad_acc 8 assumed; ROCm 6.2 TE dev] SemiAnalysis GPT-2 XL 1.5B, 1 GPU, TE fp8, bsz 14, "
     "1xMI300X",
     GPT2XL, "MI300X", "pytorch-fsdp", "fp8-mixed", 1, 1024, 14 * 8,
     dict(dp=1, zero_stage=0, microbatch_size=14), _tps(174.87, _GPT2XL_FPT), None),
)

#: MI250X / MI250 runs seen but not evaluable (no preset in HARDWARE_OF_COLUMN) or not found with configs in time:
#: none recorded this pass.

HELD_OUT_CHECKS = (*_MB_REVISED, *NEMO_2407_NEMOTRON, *DEEPSEEK_V3_REPORT)
PUBLIC_CHECKS = (
    *NEMO_2407,
    *MAXTEXT_V5P,
    *MAXTEXT_V6E,
    *MAXTEXT_V5E,
    *TT_H200_TRAINY,
    ("torchtitan Table 1: Llama-3.1-8B FSDP, 8 GPUs", "llama-3.1-8b", H96, "torchtitan", "bf16-mixed", 8, 8192, 16,
     dict(dp=8, zero_stage=3, microbatch_size=2, recompute="selective"), 5762, 82.4),
    ("torchtitan Table 3: Llama-3.1-8B FSDP, 128 GPUs", "llama-3.1-8b", H96, "torchtitan", "bf16-mixed", 128, 8192, 256,
     dict(dp=128, zero_stage=3, microbatch_size=2, recompute="selective"), 5605, 67.0),
    ("torchtitan 405B, 2D: FSDP 16 x TP 8, 128 GPUs", "llama-3.1-405b", H96, "torchtitan", "bf16-mixed", 128, 8192, 32,
     dict(dp=16, zero_stage=3, tp=8, sp=True, microbatch_size=2, recompute="full"), 109, None),
    *((f"dgxc NeMo 24.09 Llama-3.1-70B {prec.split('-')[0]}, 64 H100", "llama-3-70b", "H100-SXM", "megatron", prec, 64, 8192, 128,
       dict(tp=4, sp=True, tp_overlap=True, pp=4, cp=2, schedule="interleaved", virtual_stages=5, zero_stage=1,
            microbatch_size=1), tps, None) for prec, tps in (("bf16-mixed", 71235 / 64), ("fp8-mixed", 95239 / 64))),
    *((f"dgxc NeMo 24.09 Llama-3.1-405B {prec.split('-')[0]}, 576 H100", "llama-3.1-405b", "H100-SXM", "megatron", prec,
       576, 8192, 252, dict(tp=8, sp=True, tp_overlap=True, pp=9, cp=2, schedule="interleaved", virtual_stages=7,
                            zero_stage=1, microbatch_size=1), tps, None)
      for prec, tps in (("bf16-mixed", 120022 / 576), ("fp8-mixed", 183664 / 576))),
    *((f"dgxc NeMo GPT-3 175B {prec.split('-')[0]}, 128 H100", "gpt3-175b", "H100-SXM", "megatron", prec, 128, 2048, 256,
       dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=12, zero_stage=1,
            microbatch_size=1), tps, None) for prec, tps in (("bf16-mixed", 63099 / 128), ("fp8-mixed", 93190 / 128))),
    *((f"dgxc NeMo 24.11 Nemotron-4-340B {prec.split('-')[0]}, 128 H100", "nemotron-4-340b", "H100-SXM", FA2_MEGATRON,
       prec + OPTIMIZER_BF16, 128, 4096, 32,
       dict(tp=8, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=12, zero_stage=1,
            microbatch_size=1), tps, None) for prec, tps in (("bf16-mixed", 28432 / 128), ("fp8-mixed", 41478 / 128))),
    *FMS_FSDP,
    *TT_A100,
    *LLM_FOUNDRY_H100,
    *LLM_FOUNDRY_A100,
    *MT_NLG,
    *TT_H100_COMPILED,
    *TT_H100_COMPILED_1D,
    *QWEN3_MOE,
    *LLAMA3_405B,
    *QWEN3_LONG_CONTEXT,
    *NEMO_LONG_SEQUENCE,
    *NEMO_LONG_SEQUENCE_B200,
    *MEGATRON_BRIDGE_H100,
)


#: A sixteenth scouting pass (SCOUTED_2026_12P), read after every fit and never fitted on: llm.c's GPT-2
#: reproductions (karpathy/llm.c scripts/run_gpt2_*.sh) and one llm.c fork.
#: Pass 16 (SCOUTED_2026_12P), PUBLIC_CHECKS format: llm.c GPT-2 reproductions (karpathy/llm.c scripts/*.sh).
#:
#: llm.c (C/CUDA, train_gpt2.cu): every kernel hand-fused (fused residual+LayerNorm, cuBLASLt GEMM with fused bias/GELU
#: epilogue (-ge 1), cuDNN flash attention (USE_CUDNN=1), fused classifier = softmax + loss + dlogits in place, so no fp32
#: logits copy), bf16 activations/gradients, fp32 master weights and AdamW moments, data parallel over 8 GPUs with
#: ZeRO-1 (-z 1: optimizer state sharded, gradients reduce-scattered), no recompute (-r 0), no torch.compile.
#: Priced with the "pytorch-fsdp" profile (fused kernels, fused loss, eager) as the closest stand-in (same choice as pass
#: 15 for DDP rows). Vocabulary padded to 50304 (llm.c Vp); tied wte/lm_head; learned positions 1024. The planner's
#: parameter counts equal llm.c's printed num_parameters (124,475,904 / 354,871,296 / 774,090,240 / 1,557,686,400).
#: tokens/s/GPU = tokens per step (-d) / quoted seconds per step / 8 GPUs.
M = MODELS_DIR
SCOUTED_2026_12P = (
    # karpathy/llm.c scripts/run_gpt2_{124M,350M,774M,1558M}.sh (commits 039904ee / 100bba03 / fe04df90), header
    # comments: "524,288 tokens/step on 8X A100 80GB SXM ... ~300ms/iter" (124M), "~820ms/iter" (350M), "~1.7s/iter"
    # (774M), "~1M tokens/step (1,048,576 to be precise) on 8X H100 80GB SXM ... 2.80s/iter" (1558M; the next line
    # rounds to 2.7 s for the 24 h total); launch lines mpirun -np 8 ... -b {64,64,32,16} -t 1024 -d {524288 x3,
    # 1048576} -r 0 -z 1 -e d{12,24,36,48}. GA = -d / (-b x 1024 x 8); tokens/s/GPU = -d / seconds / 8
    # (524,288 / 0.300 / 8 = 218,453)
    *((f"[A] llm.c run_gpt2_{script}.sh: GPT-2 {name} (d{depth}), 8x {gpu} SXM, DP8 ZeRO-1, mbs {mbs}, "
       f"GA {tokens // (mbs * 1024 * 8)}, {when}",
       M + cfg, hw, "pytorch-fsdp", "bf16-mixed", 8, 1024, tokens // 1024,
       dict(dp=8, zero_stage=1, microbatch_size=mbs, recompute="none"), tokens / seconds / 8, None)
      for script, name, depth, gpu, hw, cfg, mbs, tokens, seconds, when in (
          ("124M", "124M", 12, "A100 80GB", "a100-80gb", "gpt2-124m-50304.config.json", 64, 524288, 0.300, "~300 ms/step"),
          ("350M", "350M", 24, "A100 80GB", "a100-80gb", "gpt2-350m-50304.config.json", 64, 524288, 0.820, "~820 ms/step"),
          ("774M", "774M", 36, "A100 80GB", "a100-80gb", "gpt2-774m-50304.config.json", 32, 524288, 1.7, "~1.7 s/step"),
          ("1558M", "1.5B", 48, "H100 80GB", "h100-sxm", "gpt2-xl-50304.config.json", 16, 1048576, 2.80,
           "2.80 s/step"))),
    # SiddanthEmani/GPT-2-124M-CUDA (llm.c fork) README as stored in the pages index (codestin.com proxy of the GitHub
    # page): "8xA100 40GB SXM4 GPUs via Lambda Labs", "Throughput: 1.59M tokens/second", "ZeRO-1", "BF16", 10B tokens
    # in ~1 h 47 min (10e9 / 6420 s = 1.56M tok/s, consistent). 1.59e6 / 8 = 198,750. Not stated: micro-batch,
    # global batch, recompute (the README mentions "gradient recomputation" among strategies).
    ("[B: mbs 32 (llm.c's 64 halved for 40 GB), GBS 524288 tokens (llm.c 124M recipe), no recompute] llm.c fork "
     "GPT-2 124M, 8x A100 40GB SXM4, DP8 ZeRO-1, 1.59M tok/s",
     M + "gpt2-124m-50304.config.json", "a100-40gb", "pytorch-fsdp", "bf16-mixed", 8, 1024, 512,
     dict(dp=8, zero_stage=1, microbatch_size=32, recompute="none"), 1.59e6 / 8, None),
)

#: A seventeenth scouting pass (SCOUTED_2026_12Q), read after every fit and never fitted on: MoE runs.
#: Mixture-of-Experts training-throughput rows scouted 2026-12 (pass 17, "SCOUTED_2026_12Q"), PUBLIC_CHECKS format.
#:
#: Sources (none used by benchmarks/public_runs.py before this pass):
#:   1. yanring/Megatron-MoE-ModelZoo (NVIDIA's Megatron-Core MoE model zoo)
#:      best_practice/Mixtral/run_mixtral_8x22B.sh @ 0993e667 (the stated H100 TFLOP/s per GPU),
#:      runtime_configs/benchmarking/runtime.conf @ 30631ea5 (Mixtral-8x22B defaults: TP2 PP8 EP8 CP1 VPP1 MBS1 GBS256,
#:      16 nodes, alltoall, grouped GEMM, seq 4096) and model_configs/benchmarking/Mixtral-8x22B.yaml @ 0993e667
#:      (distributed optimizer, overlap grad reduce / param gather, --tp-comm-overlap, sequence parallel, ETP 1, bf16,
#:      no recompute flag, no cross-entropy fusion flag).
#:   2. The same repository's best_practice/qwen3/readme.md @ 020b8136 (lower-case "qwen3": the GB200 and GB300 tables;
#:      the H100 tables of the same file were already used as QWEN3_MOE / QWEN3_LONG_CONTEXT), with
#:      sbatch_benchmarking.sh @ 38ce2ed2 (PR=mxfp8 -> --fp8-recipe mxfp8 --fp8-param-gather + bf16 Adam moments beside
#:      fp32 master weights; PR=bf16 -> --tp-comm-overlap; DISPATCHER=hybridep -> flex / HybridEP; GB200_CLUSTER -> 4 GPUs
#:      per node) and model_configs/benchmarking/Qwen3-235B-A22B.yaml @ 1ed4179f (distributed optimizer, sequence
#:      parallel, TE cross-entropy fusion, account-for-embedding/loss in the pipeline split).
#:   3. pytorch/ao torchao/prototype/moe_training/README.md @ 0b1bb117, "End-to-end training benchmark with TorchTitan:
#:      Llama4 Scout vs bfloat16 baseline": 4 x B200, Llama 4 Scout shape cut to 2 layers, FSDP 4, EP 4, AC none,
#:      torch.compile, seq 8192, local batch 8; median tokens/s (torchtitan's per-device tps) and max memory.
#:   4. AI-Hypercomputer/tpu-recipes training/trillium/Mixtral-8x22B-MaxText/README.md @ 03fb496c (the step-log line) with
#:      cluster_toolkit/run_recipe.sh @ 03fb496c (the resolved mixtral_8x22b_dropped config). Only the fit ('ran') of this
#:      config was used before (FIT_CHECKS 'v6e.mixtral-8x22b-dropped'); its throughput was not.
from shardplan.cost.flops import model_flops_per_token  # noqa: E402  (the rows convert TFLOP/s with it)
from shardplan.parallel import balanced_split  # noqa: E402  (the Qwen3-235B rows' pipeline splits)
from shardplan.presets.models import MODELS  # noqa: E402
SCOUT4 = MODELS_DIR + "llama-4-scout-2layer.config.json"  # the llama-4-scout preset with num_hidden_layers 2

# Megatron-LM num_floating_point_operations (causal core attention halved), Mixtral 8x22B as the zoo's yaml sets it:
# L 56, h 6144, a 48, g 8, kv_channels 128, f 16384, top-2, SwiGLU, V 32000 (Llama2Tokenizer, padded to a multiple of
# 128 x TP = 256: 32000), s 4096:
#   12*56*6144^2 * [(1 + 8/48 + 4096/6144/2) + (16384/6144)*2*1.5 + 32000/(2*56*6144)] = 2.42168e11 FLOP/token
# (the planner's own causal count for the mixtral-8x22b preset, vocab 32768: 2.42212e11, +0.02%). Without the
# causal halving (Megatron before ~2025) it is 2.50623e11, i.e. 3.4% fewer tokens/s.
MIXTRAL_8X22B_FLOPS = 12 * 56 * 6144**2 * ((1 + 8 / 48 + 4096 / 6144 / 2) + (16384 / 6144) * 2 * 1.5
                                           + 32000 / (2 * 56 * 6144))
# Qwen3-235B-A22B: the planner's causal model FLOPs per token (as public_runs.QWEN3_LONG_CONTEXT converts the same
# zoo's TFLOP/s): 1.4833e11 at 4096, 7.3500e11 at 131072
_Q = MODELS["qwen3-235b-a22b"]
QWEN_4K = model_flops_per_token(_Q, 4096, True)
QWEN_128K = model_flops_per_token(_Q, 131072, True)

# VPP: runtime.conf @ 30631ea5 sets VPP 1 for Mixtral-8x22B, the later @ 3a2d8b5c (adds Qwen3-Next) VPP 7 (one layer per
# virtual stage). Which one the script's 455 / 470 figures ran with is not stated; VPP 7 is used (at VPP 1 the 1F1B
# bubble, 7 of 32 microbatches, would need ~580 TFLOP/s outside the bubble). The VPP-1 variant is evaluated in eval.py.
_MIX22 = dict(tp=2, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=7, ep=8, etp=1, zero_stage=1, microbatch_size=1,
              recompute="none", moe_dispatcher="alltoall")
MX_PREC = "fp8-params+optimizer_dtype=bf16-moments"   # PR=mxfp8: --fp8-param-gather, bf16 exp_avg / exp_avg_sq
MB_FW = "megatron+loss=in_place"                       # Qwen3 yaml: --cross-entropy-fusion-impl te

SCOUTED_2026_12Q = (
    # ---- 1. Megatron MoE model zoo, Mixtral 8x22B on 128 H100 (16 nodes x 8) ----
    # run_mixtral_8x22B.sh: "Dropless training, stable performance should be around 455TFLOPS for H100."
    # tokens/s/GPU = 455e12 / 2.42168e11 = 1,878.9
    ("[B: 'around' 455 TFLOP/s; causal FLOP count assumed; VPP 7 of the later runtime.conf] "
     "Megatron MoE zoo: Mixtral 8x22B dropless, TP2 PP8 VPP7 EP8 alltoall, MBS1 GBS256, 128 H100",
     "mixtral-8x22b", "H100-SXM", "megatron", "bf16-mixed", 128, 4096, 256, dict(_MIX22),
     455e12 / MIXTRAL_8X22B_FLOPS, None),
    # "Token Drop training, perf should be around 470TFLOPS for H100." --moe-expert-capacity-factor 1.0
    # --moe-pad-expert-input-to-capacity. tokens/s/GPU = 470e12 / 2.42168e11 = 1,940.8
    ("[B: 'around' 470 TFLOP/s; causal FLOP count assumed; VPP 7] Megatron MoE zoo: Mixtral 8x22B token drop CF 1.0 "
     "padded, TP2 PP8 VPP7 EP8 alltoall, MBS1 GBS256, 128 H100",
     "mixtral-8x22b", "H100-SXM", "megatron", "bf16-mixed+moe_capacity_factor=1.0", 128, 4096, 256, dict(_MIX22),
     470e12 / MIXTRAL_8X22B_FLOPS, None),

    # ---- 2. Megatron MoE model zoo, Qwen3-235B-A22B on GB200 / GB300 NVL72 (4 GPUs per node) ----
    # GB200 BF16: NNODES 64 (= 256 GPUs), TP1 PP8 VPP1 EP8 MBS1 GBS8192, HybridEP (priced as deepep), force
    # balance, CUDA graphs (attn, moe_router, moe_preprocess), no recompute flag, A2A_OVERLAP 0. 750 TFLOP/s.
    # tokens/s/GPU = 750e12 / 1.4833e11 = 5,056
    ("[A] Megatron MoE zoo: Qwen3-235B-A22B BF16 TP1 PP8 EP8 HybridEP, CUDA graphs, MBS1 GBS8192, 256 GB200",
     "qwen3-235b-a22b", "GB200", MB_FW, "bf16-mixed", 256, 4096, 8192,
     dict(tp=1, pp=8, schedule="1f1b", ep=8, etp=1, zero_stage=1, microbatch_size=1, recompute="none",
          moe_dispatcher="deepep"), 750e12 / QWEN_4K, None),
    # GB200 MXFP8: NNODES 64, TP1 PP4 VPP6 EP64 MBS3 GBS3072, A2A_OVERLAP 1 (EP all-to-all 1F1B overlap), recompute
    # moe_act + layernorm, fine-grained activation offloading of expert_fc1 and moe_act (offload_modules: priced since
    # 2026-12-04, after this row was read; before, it was predicted not to fit at 234 GiB), CUDA graphs.
    # 919 TFLOP/s -> 919e12 / 1.4833e11 = 6,196
    ("[A] Megatron MoE zoo: Qwen3-235B-A22B MXFP8 TP1 PP4 VPP6 EP64 HybridEP, a2a overlap, recompute moe_act+norm, "
     "offload expert_fc1+moe_act, MBS3 GBS3072, 256 GB200",
     "qwen3-235b-a22b", "GB200", MB_FW, MX_PREC, 256, 4096, 3072,
     dict(tp=1, pp=4, schedule="interleaved", virtual_stages=6, ep=64, etp=1, zero_stage=1, microbatch_size=3,
          recompute="selective", recompute_modules=("moe_act", "layernorm"), moe_dispatcher="deepep",
          moe_a2a_overlap=True, offload_modules=("expert_fc1", "moe_act")), 919e12 / QWEN_4K, None),
    # GB300 MXFP8: NNODES 64, TP1 PP4 VPP1 EP32 MBS2 GBS8192, no recompute, A2A_OVERLAP 0, CUDA graphs.
    # 974 TFLOP/s -> 974e12 / 1.4833e11 = 6,566
    ("[A] Megatron MoE zoo: Qwen3-235B-A22B MXFP8 TP1 PP4 EP32 HybridEP, CUDA graphs, MBS2 GBS8192, 256 GB300",
     "qwen3-235b-a22b", "GB300", MB_FW, MX_PREC, 256, 4096, 8192,
     dict(tp=1, pp=4, schedule="1f1b", ep=32, etp=1, zero_stage=1, microbatch_size=2, recompute="none",
          moe_dispatcher="deepep"), 974e12 / QWEN_4K, None),
    # GB300 long context: NNODES 32 (= 128 GPUs), seq 131072, TP4 CP4 PP4 VPP12 EP32 MBS1 GBS1024, recompute
    # moe_act + layernorm, A2A_OVERLAP 0, no CUDA graphs, no --tp-comm-overlap (only PR=bf16 adds it).
    # DP = 128 / (4 x 4 x 4) = 2. 1150 TFLOP/s -> 1150e12 / 7.3500e11 = 1,564.6
    ("[A] Megatron MoE zoo: Qwen3-235B-A22B MXFP8 seq 128k TP4 CP4 PP4 VPP12 EP32 HybridEP, recompute moe_act+norm, "
     "GBS1024, 128 GB300",
     "qwen3-235b-a22b", "GB300", MB_FW, MX_PREC, 128, 131072, 1024,
     dict(tp=4, sp=True, cp=4, pp=4, schedule="interleaved", virtual_stages=12, ep=32, etp=1, zero_stage=1,
          microbatch_size=1, recompute="selective", recompute_modules=("moe_act", "layernorm"),
          moe_dispatcher="deepep"), 1150e12 / QWEN_128K, None),

    # ---- 3. torchao MoE training README: torchtitan Llama 4 Scout (2 layers) on 4 B200 ----
    # FSDP 4 (dp_shard 4) x EP 4 (experts sharded over the same 4 ranks), AC none, compile, seq 8192, local batch 8
    # -> global batch 32. Tokens/s as printed (torchtitan logs per-device tps). Max memory 145.55 GiB (torchtitan's
    # max reserved; not used).
    ("[B: torchtitan Llama4 debug config = HF Scout shapes x 2 layers assumed] torchao README: Llama4 Scout 2-layer "
     "bf16, FSDP4 EP4, compile, no AC, LBS8, 4 B200",
     SCOUT4, "B200", "torchtitan-compile", "bf16-mixed", 4, 8192, 32,
     dict(dp=4, zero_stage=3, ep=4, microbatch_size=8, recompute="none"), 49381.0, None),
    # MXFP8 for linears (except output, router gate, wk, wv) + grouped GEMMs: priced as fp8-mixed. 70,747 tokens/s
    ("[B: MXFP8 linears+grouped GEMMs priced as fp8-mixed; 2-layer shapes assumed] torchao README: Llama4 Scout "
     "2-layer MXFP8, FSDP4 EP4, compile, no AC, LBS8, 4 B200",
     SCOUT4, "B200", "torchtitan-compile", "fp8-mixed", 4, 8192, 32,
     dict(dp=4, zero_stage=3, ep=4, microbatch_size=8, recompute="none"), 70747.0, None),

    # ---- 4. tpu-recipes Mixtral-8x22B-MaxText, one v6e-256 slice ----
    # step log: "completed step: 9, seconds: 24.706, TFLOP/s/device: 332.463, Tokens/s/device: 1326.307,
    # total_weights: 8388608" (= 256 chips x pdbs 8 x 4096). ici_fsdp 64 x ici_expert 4, remat custom with
    # decoder_layer_input / q / k / v / out_proj offloaded (-> full recompute + offload_activation_layers 56, as the
    # project maps tpu-recipes), capacity_factor 1.25 (dropping, megablox False), weight_dtype bfloat16
    # (bf16 weights and optimizer state, no master copy). Same mapping as FIT_CHECKS 'v6e.mixtral-8x22b-dropped'.
    ("[A] tpu-recipes Mixtral-8x22B-MaxText: FSDP64 x EP4, CF 1.25, remat custom (offload), pdbs 8, v6e-256 "
     "(one step-log line)",
     "mixtral-8x22b", "tpu-v6e", "maxtext", "bf16-mixed+optimizer_dtype=bf16+moe_capacity_factor=1.25", 256, 4096,
     2048, dict(zero_stage=3, microbatch_size=8, recompute="full", ep=4, offload_activation_layers=56), 1326.307, None),
)


#: An eighteenth scouting pass (SCOUTED_2026_12R), read after every fit and never fitted on: throughput tables
#: written as text in GitHub repositories' READMEs.
#: Pass 18 (SCOUTED_2026_12R), PUBLIC_CHECKS format: training-throughput tables written as text in GitHub READMEs.
#:
#: Sources (none used by benchmarks/public_runs.py before this pass):
#:   1. Dao-AILab/flash-attention training/README.md @ 0b037c2d ("Training speed": 8 x A100 80GB SXM4 (400W) with NVLink,
#:      one node; GPT3-125M..2.7B at seq 2048, table "Batch size (tokens) / Through put (tokens/sec)") with the Hydra
#:      experiment configs training/configs/experiment/pile/{base,gpt3s-flash,gpt3m-flash,gpt3l-flash,gpt3xl-flash,
#:      gpt3-2.7B-flash-hdim128}.yaml: per-GPU batch from train.gpu_mem (A100 80GB: nvidia-smi 81920 MiB / 1000 -> 82),
#:      global_batch_size 256 (512 for xl / 2.7B), grad accumulation = global / (8 x per-GPU batch), Lightning
#:      precision bf16 (autocast over fp32 weights -> fp32 grads), optimizer adamw-apex + plain DDP for 125M / 355M,
#:      torch ZeroRedundancyOptimizer (DDPStrategyZero1 = ZeRO-1) for 760M / 1.3B / 2.7B; no activation checkpointing
#:      (mlp_checkpoint_lvl 0); FlashAttention, fused bias+GELU MLP, fused dropout+add+LayerNorm, Apex cross-entropy
#:      with inplace_backward (-> loss=in_place); GPT2Config default dropout 0.1 (dropout masks stored); vocab 50257
#:      padded to a multiple of 8 = 50264, tied; learned positions 2048. The planner's parameter counts: 125.2M /
#:      355.9M / 760.3M / 1.316B / 2.652B, matching the GPT-3 names.
#:   2. InternLM/InternEvo doc/en/train_performance.md @ 3a665e88 ("FLOPS Testing" tables, pack_sample_into_one=True, bf16,
#:      A100-SXM4-80GB, 4 x 100 Gb RoCE per node): the same tables as InternLM/InternLM doc/en/train_performance.md, of which
#:      public_runs.SCOUT5_INTERNLM holds 7 rows; only the five rows it does not hold are taken here (smaller per-GPU token
#:      counts at 512 / 1024 GPUs, i.e. the communication-bound end of the table). Model: benchmarks/models/internlm-7b
#:      .config.json, hardware and profile as SCOUT5_INTERNLM (Megatron-LM's profile stands in for InternEvo; zero1=8 ->
#:      ZeRO-1 sharded inside the node, dp_shard 8).
#:   3. hpcaitech/ColossalAI examples/language/llama2/README.md @ 068372a7 ("4. Shell Script Examples", "c. Results":
#:      "max memory usage:  55491.10 MB, throughput:  24.26 samples/s, TFLOPS/GPU:  167.43") for the command it names,
#:      scripts/benchmark_7B/gemini.sh @ 1c235638 (colossalai run --nproc_per_node 8 ... benchmark.py -g -x -b 16; NCCL over 4
#:      IB HCAs) with benchmark.py @ 01ee32a7 (config 7b = LlamaConfig(max_position_embeddings=4096): the Llama 2 7B shape;
#:      plugin gemini, precision bf16; -g gradient checkpointing of every layer; -x xformers flash attention; max_length
#:      4096; 5 steps, 2 ignored; HybridAdam). README: "4 computing nodes with 32 A800 GPUs ... connected with RDMA".
M = MODELS_DIR
FA_FW = "pytorch-fsdp+loss=in_place"   # eager PyTorch with hand-fused kernels; closest profile (as pass 16 for llm.c DDP)
FA_PREC = "bf16-mixed-fp32-grads+dropout=True"

SCOUTED_2026_12R = (
    # ---- 1. flash-attention training/README.md "Training speed" table (tokens/sec on 8 GPUs) ----
    # (name, config, global batch sequences, per-GPU batch, ZeRO stage, tokens/s on 8 GPUs): GPT3-125M 0.5M-token batch
    # = 256 x 2048, per-GPU batch 32 (gpt3s-flash, gpu_mem 82 >= 40), GA 1, DDP; 355M per-GPU 16 (gpt3m-flash), GA 2,
    # DDP; 760M per-GPU 16 (gpt3l-flash: gpu_mem 82 is not < 80), GA 2, ZeRO-1; 1.3B 1M-token batch = 512 x 2048,
    # per-GPU 8 (gpt3xl-flash), GA 8, ZeRO-1; 2.7B (head dim 128: 20 heads of 2560) per-GPU 4
    # (gpt3-2.7B-flash-hdim128), GA 16, ZeRO-1. tokens/s/GPU = table / 8 (1310k / 8 = 163,750, ...)
    *((f"[A] flash-attention training README: GPT3-{name}, 8x A100 80GB, DDP{' ZeRO-1' if zero else ''}, mbs {mbs}, "
       f"GA {gbs // (8 * mbs)}, seq 2048, {tps // 1000:.0f}k tok/s",
       M + f"flashattn-gpt3-{cfg}-50264.config.json", "a100-80gb", FA_FW, FA_PREC, 8, 2048, gbs,
       dict(dp=8, zero_stage=zero, microbatch_size=mbs, recompute="none"), tps / 8, None)
      for name, cfg, gbs, mbs, zero, tps in (
          ("125M", "125m", 256, 32, 0, 1310e3), ("355M", "355m", 256, 16, 0, 503e3), ("760M", "760m", 256, 16, 1, 245e3),
          ("1.3B", "1.3b", 512, 8, 1, 169e3), ("2.7B hdim128", "2.7b-hdim128", 512, 4, 1, 85e3))),

    # ---- 2. InternEvo train_performance.md FLOPS tables: rows not in public_runs.SCOUT5_INTERNLM ----
    # TGS = tokens/GPU/s as printed; global batch = GPUs x micro_bsz x micro_num sequences of 2048.
    *((f"[A] InternEvo perf doc FLOPS table: InternLM-7B tp1 zero1=8, {what}, {n} A100", M + "internlm-7b.config.json",
       "A100 80GB+scale_out_bandwidth=6250000000", "megatron", "bf16-mixed", n, 2048, n * mbs * mn,
       dict(tp=1, dp=n, zero_stage=1, dp_shard=8, microbatch_size=mbs, recompute=rc), tgs, None)
      for what, n, mbs, mn, rc, tgs in (
          ("full AC, mbs4 x1 (4M tokens)", 512, 4, 1, "full", 2963),
          ("full AC, mbs2 x1 (4M tokens)", 1024, 2, 1, "full", 2341),
          ("full AC, mbs4 x1 (8M tokens)", 1024, 4, 1, "full", 2796),
          ("no AC, mbs2 x2 (4M tokens)", 512, 2, 2, "none", 3084),
          ("no AC, mbs2 x2 (8M tokens)", 1024, 2, 2, "none", 2817))),

    # ---- 3. ColossalAI llama2 README "c. Results" (benchmark_7B/gemini.sh) ----
    # GPU count: the README's environment line (32 A800) is confirmed by its own TFLOPS formula (PerformanceEvaluator:
    # samples/s x seq x 8 x numel / GPUs with grad checkpointing): 24.26 x 4096 x 8 x 6.738e9 / 167.43e12 = 32.0 GPUs.
    # tokens/s/GPU = 24.26 x 4096 / 32 = 3,105.3. Global batch = 16 x 32 = 512 sequences. Peak 55491.10 MB -> 54.2 GiB
    # (max_memory_allocated, MiB). Gemini (chunk-based ZeRO-3, placement static, nothing offloaded by default) priced
    # as hf-deepspeed ZeRO-3, as the earlier ColossalAI rows; A800 hardware string as public_runs._A800_IB (IB speed assumed).
    ("[B: 4 x 200 Gb/s IB per node assumed; Gemini as ZeRO-3; measured over steps 3-5 of 5] ColossalAI llama2 README: "
     "LLaMA-2 7B Gemini, 32 A800, pdbs 16, seq 4096, grad ckpt, xformers",
     "llama-2-7b", "A100 80GB (A800, NVLink 400 GB/s, 4 HCAs assumed 200 Gb/s)+scale_up_bandwidth=200000000000"
     "+scale_out_bandwidth=12500000000", "hf-deepspeed", "bf16-mixed", 32, 4096, 512,
     dict(dp=32, zero_stage=3, microbatch_size=16, recompute="full"), 24.26 * 4096 / 32, round(55491.10 / 1024, 1)),
)



#: The 2023 Megatron-LM runs of the scouting passes below ran --bf16, which that code's validate_args turns into fp32
#: gradient accumulation and fp32 data-parallel reduction ("bfloat16 requires gradient accumulation and all-reduce to
#: be done in fp32": megatron/arguments.py, accumulate_allreduce_grads_in_fp32; --grad-reduce-in-bf16 came in 2024)
_LEGACY_BF16 = "bf16-mixed-fp32-grads"

#: Nineteenth scouting pass (2026-12, never fitted on; SCOUTED_2026_12S): technical reports / papers that print measured
#: training throughput WITH the parallel layout (full texts found in the search index's code corpus).
#:
#: 1. Skywork-13B technical report (Wei et al. 2023, arXiv 2310.19341), Sec. 3.5 + Appendix B Table 10 (index file id
#:    70098497552). 512 A800-80G SXM (64 HGX nodes, 400 GB/s NVLink, 800 Gb/s RoCE per node = 12.5 GB/s per GPU),
#:    Megatron-LM, bf16, FlashAttention-2, DP with ZeRO-1 + PP (+TP with SP where used), no activation checkpointing
#:    ("we have avoided ... Tensor Model Parallelism, Sequence Parallelism, ZeRO-Stage2, and Checkpointing"), global batch
#:    4096, micro batch 1, seq 4096. Table 10: "Throughput is measured in tokens processed per GPU per second" -> used as
#:    printed; memory in GB as printed.
#: 2. FP8-LM (Peng et al. 2023, arXiv 2310.18313, Microsoft MS-AMP), Table 1 + Table 5 (index file id 59868284901):
#:    GPT-7B / 13B / 175B (RoPE, FlashAttention, SP on), Azure NDv5 H100 80GB (8 x 400 Gb/s IB per node), seq 2048,
#:    batch 4M tokens (7B, 13B) / 1M tokens (175B). Table 5 throughput in samples/s for the whole job:
#:    tokens/s/GPU = samples/s x 2048 / GPUs (GPUs = TP x PP x DP). BF16 and FP8 (Transformer Engine) rows only; the
#:    paper's own FP8 scheme (fp8 gradients / all-reduce / optimizer) has no precision policy here.
_SKY = MODELS_DIR + "skywork-13b.config.json"
_G7 = MODELS_DIR + "fp8lm-gpt-7b.config.json"
_G13 = MODELS_DIR + "fp8lm-gpt-13b.config.json"
_G175 = MODELS_DIR + "fp8lm-gpt-175b.config.json"
# Skywork cluster: 800 Gb/s RoCE per 8-GPU node = 100 GB/s / 8 = 12.5 GB/s per GPU (the A800 preset assumes 25 GB/s)
_A800_SKY = "A800+scale_out_bandwidth=12500000000"

_SKY_LAYOUTS = (  # (strategy text, layout)
    ("DP256+PP2", dict(dp=256, zero_stage=1, pp=2, schedule="1f1b", microbatch_size=1, recompute="none")),
    ("DP256+TP2", dict(dp=256, zero_stage=1, tp=2, sp=True, microbatch_size=1, recompute="none")),
    ("DP128+TP2+PP2", dict(dp=128, zero_stage=1, tp=2, sp=True, pp=2, schedule="1f1b", microbatch_size=1,
                           recompute="none")),
    ("DP128+PP4", dict(dp=128, zero_stage=1, pp=4, schedule="1f1b", microbatch_size=1, recompute="none")),
    ("DP128+TP4", dict(dp=128, zero_stage=1, tp=4, sp=True, microbatch_size=1, recompute="none")),
)
# Table 10 (tokens/GPU/s, memory GB): LLaMA2-13B then Skywork-13B, in _SKY_LAYOUTS order. DP512 OOMs for both.
_SKY_LLAMA = ((2045, 70.7), (1928, 65.5), (1936, 39.4), (1964, 53.4), (1744, 35.4))
_SKY_SKY = ((1873, 77.1), (1775, 67.9), (1776, 42.5), (1828, 58.7), (1417, 36.6))

_SKY_ROWS = tuple(
    (f"[B: ZeRO-1 on every row and the 1F1B schedule assumed (stated for the chosen DP256+PP2); network from Sec. 3.5] "
     f"Skywork-13B report Table 10: {mname} {strat}, mbs 1, GBS 4096, seq 4096, no AC, 512 A800",
     model, _A800_SKY, "megatron-legacy", _LEGACY_BF16, 512, 4096, 4096, lay, float(tps), gib)
    for mname, model, vals in (("LLaMA2-13B", "llama-2-13b", _SKY_LLAMA), ("Skywork-13B", _SKY, _SKY_SKY))
    for (strat, lay), (tps, gib) in zip(_SKY_LAYOUTS, vals)
)

# FP8-LM Table 5. (label, model, TP, PP, DP, mbs, gbs, precision, samples/s, GPU mem GB)
_FP8LM = (
    ("GPT-7B BF16", _G7, 1, 1, 32, 2, 2048, _LEGACY_BF16, 159.2, 69.6),
    ("GPT-7B FP8 (TE)", _G7, 1, 1, 32, 2, 2048, "fp8-mixed", 224.5, 77.3),
    ("GPT-13B BF16", _G13, 2, 1, 16, 2, 2048, _LEGACY_BF16, 79.3, 68.2),
    ("GPT-13B FP8 (TE)", _G13, 2, 1, 16, 2, 2048, "fp8-mixed", 111.7, 76.4),
    ("GPT-175B BF16", _G175, 8, 4, 4, 1, 512, _LEGACY_BF16, 22.4, 66.1),
    ("GPT-175B FP8 (TE)", _G175, 8, 4, 4, 1, 512, "fp8-mixed", 28.7, 69.6),
)


def _fp8lm_layout(tp, pp, dp, mbs):
    lay = dict(dp=dp, zero_stage=1, tp=tp, sp=tp > 1, microbatch_size=mbs, recompute="none")
    if pp > 1:
        lay.update(pp=pp, schedule="1f1b")
    return lay


_FP8LM_ROWS = tuple(
    (f"[B: vocab 50,304 (GPT-2 BPE padded), tied embeddings, ZeRO-1 (distributed optimizer), no AC, 1F1B, Megatron-LM "
     f"stack assumed] FP8-LM Table 5: {lab}, TP{tp} PP{pp} DP{dp}, mbs {mbs}, GBS {gbs}, seq 2048, {tp*pp*dp} H100",
     model, "H100-SXM", "megatron-legacy", prec, tp * pp * dp, 2048, gbs, _fp8lm_layout(tp, pp, dp, mbs),
     sps * 2048 / (tp * pp * dp), gib)
    for lab, model, tp, pp, dp, mbs, gbs, prec, sps, gib in _FP8LM
)

SCOUTED_2026_12S = _SKY_ROWS + _FP8LM_ROWS


#: Twentieth scouting pass (2026-12, never fitted on): the stock Megatron-LM 1F1B and interleaved 1F1B baselines of an
#: ML-systems paper's pipeline experiments.
#: ---------------------------------------------------------------------------------------------------------------
#: SOURCE: Sun, Zhao, Han, Yang, Zhang, Liu, Shi, Sun, "Seq1F1B: Efficient Sequence-Level Pipeline Parallelism for Large
#: Language Model Training" (NAACL 2025, arXiv 2406.03488); code https://github.com/thunlp/Seq1F1B (Megatron-LM fork).
#: Numbers: thunlp/Seq1F1B picture/"32x7b zhihu_throughput.tex" @ ef3cbe4f (the paper's 7B x 32 A100 table as LaTeX):
#:   TFLOPS/s and Throughput for 1F1B, 1F1B-I, Seq1F1B, Seq1F1B-I at seqlen 32768 / 65536 / 131072, Micros 8 / 16.
#:   "Throughput" is Megatron's whole-job tokens/s: megatron/training.py @ 43eb818e training_log:
#:     toks = batch_size * args.seq_length / elapsed_time_per_iteration  (batch_size = mbs x dp x num_microbatches),
#:   averaged over iterations 5.. of the run. tokens/s/GPU = toks / 32, e.g. 48,189.47 / 32 = 1,505.9.
#:   Cross-check of the GPU count with the repo's own FLOP count (megatron/core/pipeline_parallel/sp_utils.py get_tflops,
#:   causal, x3 for fwd+bwd, input embedding counted as a GEMM): 99.67 TFLOP/s x N / 48,189 tok/s = 67.0 GFLOP/token
#:   -> N = 32.4 (32 GPUs); 64k row: 32.3.
#: Model: exp.sh @ 934c71fd config_7b = 32 layers, hidden 4096, 32 heads; run.sh @ 934c71fd: ffn not set (4h = 16384,
#:   GeLU), --position-embedding-type rope, --untie-embeddings-and-output-weights, GPT2BPETokenizer (50,257 padded by
#:   Megatron to a multiple of 128 x tp = 1,024 -> 51,200), --bf16, --use-distributed-optimizer, --sequence-parallel,
#:   --use-flash-attn, dropout 0, --no-async-tensor-model-parallel-allreduce, micro batch 1, recompute only if
#:   RECOMPUTE=1 (the paper: "without recomputation"). Planner parameter count 6.864B (Megatron's count for this shape:
#:   12 L h^2 (1 + 13/12h) + 2 V h = 6.86B).
#: Layout: NOT stated by the stored files for the 7B x 32 run (exp.sh's stored defaults are the 30B x 64 run: TP 8,
#:   PP 8, VPP 2/4; exp2.sh: 7B on 8 GPUs TP 2 PP 4). Inferred, hence [B]:
#:   * PP 4: the 1F1B m=16 / m=8 TFLOPS ratio is 1.148 (32k) and 1.153 (64k); a 1F1B pipeline's m/(m+p-1) ratio is
#:     1.158 at p = 4, 1.30 at p = 8, 1.06 at p = 2.
#:   * TP 8, dp 1: with PP 4 the rest of 32 GPUs is tp x dp = 8; 1F1B at 64k ran and at 128k ran out of memory, which
#:     fits TP 8 (first stage ~ 4 microbatches x 8 layers x 34 s h B / tp = 36 GB at 64k, 73 GB at 128k) and not TP 4
#:     (73 GB at 64k). dp 1 -> global batch = Micros (8 or 16 sequences).
#:   * 1F1B-I: virtual_stages 2 assumed (exp.sh sweeps VPP 2 and 4; the m=16/m=8 ratios 1.063 / 1.073 lie between the
#:     interleaved bubble's 1.086 at v=2 and 1.045 at v=4).
#:   * hardware A100 SXM 80GB (the files say "A100"; exp.sh's 8 InfiniBand HCAs per node suggest DGX-class nodes).
#: Framework: megatron-legacy (a mid-2023 Megatron-LM: legacy megatron/training.py, blocking p2p sends, async TP
#:   all-reduce switched off by the script).
#: ---------------------------------------------------------------------------------------------------------------
_SEQ1F1B_B = "[B: tp8/pp4/dp1 inferred from the m-scaling and OOM pattern; A100 80GB SXM]"
_SEQ1F1B_BI = "[B: tp8/pp4/dp1 inferred; virtual_stages 2 assumed (VPP 2 or 4 in the repo's sweep); A100 80GB SXM]"


def _seq1f1b_layout(schedule: str, virtual_stages: int = 1) -> dict:
    """The inferred Seq1F1B baseline layout (TP 8 + SP, PP 4, dp 1, mbs 1, no recompute)."""
    return dict(dp=1, zero_stage=1, tp=8, sp=True, pp=4, schedule=schedule, virtual_stages=virtual_stages,
                microbatch_size=1, recompute="none")


SCOUTED_2026_12T = tuple(
    row
    # (seq, microbatches, 1F1B whole-job tokens/s, 1F1B-I whole-job tokens/s): the .tex table, mean of iterations 5..
    for seq, m, t1, ti in ((32768, 8, 48189.47, 52964.06), (32768, 16, 55333.16, 56304.42),
                           (65536, 8, 37342.92, 41676.97), (65536, 16, 43063.26, 44712.49))
    for row in (
        (f"{_SEQ1F1B_B} Seq1F1B 7B x 32 A100 table: Megatron 1F1B baseline, seq {seq}, {m} microbatches (GBS {m})",
         MODELS_DIR + "seq1f1b-gpt-7b.json", "A100 80GB", "megatron-legacy", _LEGACY_BF16, 32, seq, m,
         _seq1f1b_layout("1f1b"), t1 / 32, None),
        (f"{_SEQ1F1B_BI} Seq1F1B 7B x 32 A100 table: Megatron 1F1B-I baseline, seq {seq}, {m} microbatches (GBS {m})",
         MODELS_DIR + "seq1f1b-gpt-7b.json", "A100 80GB", "megatron-legacy", _LEGACY_BF16, 32, seq, m,
         _seq1f1b_layout("interleaved", 2), ti / 32, None),
    )
)


#: Twenty-first scouting pass (2026-12, never fitted on; SCOUTED_2026_12U): LLaMA-style runs on 2023 Megatron-LM forks
#: (the legacy megatron/model/transformer.py era); tokens/s/GPU as the source prints it or as derived from its stated
#: wall time. Scouted after the megatron-legacy profile's eager_ops were written: a held-out check of them.
#:
#: Source: alibaba/Megatron-LLaMA (a mid-2023 fork of Megatron-LM 23.04-era code; pretrain_llama.py, megatron/model/
#: transformer.py with an eager SwiGLU (torch.chunk + F.silu * x), eager RoPE (megatron/model/rotary_pos_embedding.py
#: apply_rotary_pos_emb, plain torch), flash-attn v1/v2 via flash_attn_unpadded_func / flash_attn_varlen_func;
#: the launch scripts pass --no-gradient-accumulation-fusion; --recompute-granularity selective is a no-op on the
#: flash-attn path (ParallelAttention checkpoints only the non-flash CoreAttention), so recompute = none.
#:  * README.md @ 46ae7dde (English, latest stored) and README_zh.md @ eb1a2580: "Efficiency and Affordability" table
#:    (LLaMA-13B on four 8xA100-80GB nodes, global batch 2048 via gradient accumulation, 10B tokens: Megatron-LLaMA
#:    40.3 h, 180 model TFLOPS; the zh text says this Megatron-LLaMA run used the plain DistributedOptimizer and the
#:    HF baseline DeepSpeed ZeRO-2) and "Excellent Scalability" table (LLaMA-13B reproduction, 8xA100-80GB nodes with
#:    4x200Gbps RDMA per node, token/GPU/sec; zh: total batch 4M tokens as in the LLaMA paper).
#:    The English README at 46ae7dde prints 1890 / 1845 for the Overlapped optimizer (earlier versions, incl. the zh
#:    file: 1800 / 1660); DistributedOptimizer 1630 / 1430 in every version.
#:  * examples/LLaMA/LLaMA_13_slurm.sh (stored copy in the fork user11209/Megatron-LLaMA @ d2e05b8e; search id
#:    6376846594): TP 2, PP 1, --sequence-parallel, micro batch 4, global batch 2048, seq 2048, bf16, flash-attn,
#:    --overlapped-distributed-optimizer --reduce-bucket-size 4e8, selective recompute flag. ASSUMED to be the
#:    README runs' layout (the issue #49 maintainer points to this script for the 32-node numbers).
#: Derivations: 32-GPU row: 10e9 tokens / (40.3 h x 3600 s) / 32 GPUs = 2,154 tokens/s/GPU (check: x 83.1 GFLOP per
#: token = 179 TFLOPS, the README's 180). Scaling rows: as printed; check: 1890 x 256 GPUs x 23.9 days x 86400 = 1.0e12
#: tokens, as the README's "days" column implies for 1T tokens.
#: Network: 4 x 200 Gb/s per 8-GPU node = 12.5 GB/s per GPU ("+scale_out_bandwidth=12500000000"; preset 25 GB/s).
#: DistributedOptimizer rows: Megatron-LM 23.04's DistributedOptimizer reduce-scatters after the last backward and
#: all-gathers after the step, neither overlapped: "+dp_overlap=0+param_gather_overlap=False" (the Overlapped rows keep
#: the megatron-legacy profile's overlapped DP).
_MLLAMA_HW = "A100 80GB+scale_out_bandwidth=12500000000"
_MLLAMA_OVL = "megatron-legacy"
_MLLAMA_DO = "megatron-legacy+dp_overlap=0+param_gather_overlap=False"


_MLLAMA_B = ("[B: TP2/SP/mbs4 from LLaMA_13_slurm.sh; GBS 2048 x 2048 = 4M tokens from README_zh] Megatron-LLaMA "
             "README: LLaMA-13B, ")


def _mllama_layout(dp: int) -> dict:
    """The assumed Megatron-LLaMA README layout (LLaMA_13_slurm.sh: TP 2 + SP, mbs 4, no recompute)."""
    return dict(dp=dp, zero_stage=1, tp=2, sp=True, pp=1, microbatch_size=4, recompute="none")


SCOUTED_2026_12U = (
    # README "Efficiency and Affordability" table (Megatron-LLaMA column; DistributedOptimizer per README_zh)
    ("[B: TP2/SP/mbs4/seq 2048 from LLaMA_13_slurm.sh] Megatron-LLaMA README: LLaMA-13B, DistributedOptimizer, "
     "GBS 2048, 32 A100 80GB (10B tokens in 40.3 h)", "llama-2-13b", _MLLAMA_HW, _MLLAMA_DO, _LEGACY_BF16, 32, 2048,
     2048, _mllama_layout(16), 10e9 / (40.3 * 3600) / 32, None),
    # README "Excellent Scalability" table: (optimizer, GPUs, profile, tokens/s/GPU as printed)
    *((_MLLAMA_B + f"{optimizer}, {n} A100 80GB", "llama-2-13b", _MLLAMA_HW, fw, _LEGACY_BF16, n, 2048, 2048,
       _mllama_layout(n // 2), tps, None)
      for optimizer, n, fw, tps in (("OverlappedDistributedOptimizer", 256, _MLLAMA_OVL, 1890.0),
                                    ("OverlappedDistributedOptimizer", 512, _MLLAMA_OVL, 1845.0),
                                    ("DistributedOptimizer", 256, _MLLAMA_DO, 1630.0),
                                    ("DistributedOptimizer", 512, _MLLAMA_DO, 1430.0))),
)


#: Twenty-second scouting pass (2026-12, never fitted on; SCOUTED_2026_12V): Only one new source with a throughput beside a layout was found in the time box: argonne-lcf/Megatron-DeepSpeed
#: (AuroraGPT's fork of microsoft/Megatron-DeepSpeed) on ALCF Polaris (HPE Apollo 6500: 4 x A100-SXM4-40GB per node,
#: NVLink3 inside the node, 2 x Slingshot-11 200 Gb/s NICs per node = 12.5 GB/s per GPU).
#:
#: Model (both rows): the fork's "Llama2 7B Config" in train_llama_alcf_polaris.sh (search id 31506501339) and the
#: Polaris command line printed in ALCF/README.md (id 20196590859): 32 layers, hidden 4096, 32 heads,
#: --num-key-value-heads 8 (GQA 8, NOT Llama 2 7B's MHA), FFN 11008, --swiglu --normalization rmsnorm
#: --use-rotary-position-embeddings --untie-embeddings-and-output-weights --disable-bias-linear, Llama2Tokenizer
#: (vocab 32000), seq 4096 -> models/auroragpt-7b-gqa8.config.json (5.93B parameters by the planner; no published count).
#: Both runs: --use-flash-attn-v2, --deepspeed-activation-checkpointing + --checkpoint-activations
#: --checkpoint-num-layers 1 (every layer recomputed = full), --no-gradient-accumulation-fusion,
#: --no-bias-dropout-fusion, --no-masked-softmax-fusion, --accumulate-allreduce-grads-in-fp32, DeepSpeed ZeRO stage 2
#: (--zero-stage=2), PP 1 (--no-pipeline-parallel), TP 2, no Megatron sequence parallelism.
#: The log's "TFLOPs" (Megatron-DeepSpeed formula 96 L h^2 (1 + s/6h + V/16Lh) per token with the recompute factor
#: 4) = 60.9 GFLOP/token: 69.85e12 / 1146.7 and 98.29e12 / 1613.5 both give 60.9e9, i.e. the recompute factor was on.
_POLARIS = "A100 40GB+scale_up_size=4+devices_per_host=4+scale_out_bandwidth=12500000000"
_AURORA = MODELS_DIR + "auroragpt-7b-gqa8.config.json"

SCOUTED_2026_12V = (
    # argonne-lcf/Megatron-DeepSpeed ALCF/README.md @ 4b4fc21f (id 6502012148; same block in id 5833402453 and
    # id 20196590859): Polaris log of 2024-03-07, "iteration 199/317892 ... elapsed time per iteration (ms): 14287.5 |
    # global batch size: 768 | ... actual seqlen: 4096 | samples per second: 53.753 | tokens per gpu per second (tgs):
    # 1146.733 | TFLOPs: 69.85", checkpoint dir ds_stage2_nl32_hs4096_mb8_seq4096_gb768_pp1_tp2_fp16; DeepSpeed timer
    # MaxMemAllocated=19.52GB. GPUs = 53.753 x 4096 / 1146.733 = 192 (48 Polaris nodes; the README's "Continue runs on
    # Polaris @ 48 Nodes"; train_llama_alcf_polaris.sh has #PBS -l select=48). 768 x 4096 / 14.2875 s / 192 = 1146.8.
    # dp = 192 / 2 = 96, 768 / 96 = 8 = MICRO_BATCH 8 x GRAD_ACC_STEPS 1. fp16 (DTYPE fp16): priced as the brief's
    # "bf16-mixed-fp32-grads" (same byte sizes; Megatron's --accumulate-allreduce-grads-in-fp32 on the command line).
    # Iteration 200 gives 1126.7 (a checkpoint save follows it); 199 used.
    ("[B: GQA-8 / FFN 11008 from the matching launch script's defaults; fp16 priced as bf16] argonne-lcf "
     "Megatron-DeepSpeed (AuroraGPT-7B): ZeRO-2, TP2, mbs 8, full AC, FA2, 192 A100-40GB (48 Polaris nodes)",
     _AURORA, _POLARIS, "deepspeed", "bf16-mixed-fp32-grads", 192, 4096, 768,
     dict(dp=96, tp=2, sp=False, pp=1, zero_stage=2, microbatch_size=8, recompute="full"), 1146.733, None),
    # Same README, Polaris block of 2024-04-04 (id 20196590859, offset ~17000-31000): 2 nodes x 4 GPUs, command line
    # printed in full: --bf16 --optimizer adamw, TP 2, mbs 8, GBS 32, ZeRO 2, full AC, FA2, seq 4096; torch 2.2.1,
    # deepspeed 0.14.0, CUDA 11.8. "iteration 2/317892 | elapsed time per iteration (ms): 10154.3 | ... tokens per gpu
    # per second(tgs): 1613.503 | TFLOPs: 98.29": 32 x 4096 / 10.1543 / 8 = 1613.5. Only iterations 1-2 printed
    # (iteration 1: 21.1 s, warm-up). Memory after iteration 1: max allocated 22332 MB (21.8 GiB), max reserved
    # 35824 MB (35.0 GiB, rank 1) -> reported GiB 35.0 (reserved, the planner's total includes allocator slack).
    ("[B: iteration 2 of a debug run (only 2 printed); GQA-8 from the command line] argonne-lcf Megatron-DeepSpeed "
     "README Polaris example: ZeRO-2, TP2, mbs 8, full AC, FA2, bf16, 8 A100-40GB (2 nodes)",
     _AURORA, _POLARIS, "deepspeed", "bf16-mixed-fp32-grads", 8, 4096, 32,
     dict(dp=4, tp=2, sp=False, pp=1, zero_stage=2, microbatch_size=8, recompute="full"), 1613.503, 35824 / 1024),
)


#: Twenty-third scouting pass (2026-12, never fitted on; SCOUTED_2026_12W).
#: Twenty-third scouting pass (2026-12): NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, the 26.04 and
#: 26.06 NeMo-container tables (releases whose GB200 / GB300 dense rows the project has not used), dense Llama rows.
#:
#: 26.04 table: search-index file id 51905015924 (Megatron-Bridge docs/performance-summary.md, "## 26.04 NeMo
#:   Container", Pre-Training Performance, Model: LLAMA3_70B and LLAMA3.1_405B). Columns: System, #-GPUs, Precision,
#:   GBS, MBS, Sequence Length, FSDP, TP, PP, CP, VP, EP, Tokens/sec/GPU, Model TFLOP/sec/GPU. Tokens/s/GPU used as
#:   printed (no conversion).
#: 26.06 table: search-index file id 56183476306 ("## 26.06 NeMo Container", LLAMA3.1_405B; GB300 / GB200 rows; the
#:   DGX-H100 row of this table is already in public_runs.MEGATRON_BRIDGE_H100).
#: Recipe details not in the tables: scripts/performance/configs/llama/llama3_workload_base_configs.py (search id
#:   52014364621): LLAMA3_70B_PRETRAIN_CONFIG_GB300_FP8_CS_V2 = Megatron-FSDP, micro batch 2, cpu_offloading_num_layers
#:   20; ..._GB200_FP8_CS_V2 = Megatron-FSDP, micro batch 2, cpu_offloading_num_layers 40; ..._GB300_FP8_MX_V2 /
#:   _NVFP4_V2 = PP4 VP5; ..._GB200_FP8_MX_V2 / _NVFP4_V2 = TP2 PP4 VP5 (GBS 256 = V2). Which commit of that file
#:   matches the 26.04 container is NOT known (the layout columns agree with the table), hence the FSDP rows are [B].
#: Priced as public_runs prices the 25.11 / 26.02 Megatron-Bridge rows: framework "megatron+loss=in_place" (TE
#:   cross-entropy fusion), FP8 column = FP8-CS = "fp8-params", MXFP8 = "fp8-mixed", NVFP4 = "nvfp4-mixed";
#:   distributed optimizer (ZeRO-1) when FSDP = 0, sp + tp_overlap when tp > 1, recompute none.
_MB2604 = "megatron+loss=in_place"
_FP8CS = FP8_CS


def _mb_interleaved(tp: int, pp: int, cp: int, vp: int) -> dict:
    """An interleaved Megatron-Bridge / NeMo layout: distributed optimizer, mbs 1, sp + TP overlap when tp > 1."""
    d = dict(zero_stage=1, microbatch_size=1, pp=pp, schedule="interleaved", virtual_stages=vp)
    if tp > 1:
        d.update(tp=tp, sp=True, tp_overlap=True)
    if cp > 1:
        d.update(cp=cp)
    return d


SCOUTED_2026_12W = (
    # ---- 26.04, LLAMA3_70B, 64 GPUs, GBS 256, seq 8192 --------------------------------------------------------
    ("[A] MB 26.04 GB300: Llama 3 70B NVFP4 PP4 VP5, 64 GPUs", "llama-3-70b", "GB300", _MB2604, "nvfp4-mixed", 64, 8192,
     256, _mb_interleaved(1, 4, 1, 5), 7397, None),
    ("[A] MB 26.04 GB200: Llama 3 70B NVFP4 TP2 PP4 VP5, 64 GPUs", "llama-3-70b", "GB200", _MB2604, "nvfp4-mixed", 64, 8192,
     256, _mb_interleaved(2, 4, 1, 5), 4898, None),
    ("[A] MB 26.04 GB300: Llama 3 70B MXFP8 PP4 VP5, 64 GPUs", "llama-3-70b", "GB300", _MB2604, "fp8-mixed", 64, 8192,
     256, _mb_interleaved(1, 4, 1, 5), 4742, None),
    ("[A] MB 26.04 GB200: Llama 3 70B MXFP8 TP2 PP4 VP5, 64 GPUs", "llama-3-70b", "GB200", _MB2604, "fp8-mixed", 64, 8192,
     256, _mb_interleaved(2, 4, 1, 5), 3828, None),
    ("[B: offload 20 layers from the config file, commit unmatched] MB 26.04 GB300: Llama 3 70B FP8-CS Megatron-FSDP "
     "MBS2, 64 GPUs", "llama-3-70b", "GB300", _MB2604, _FP8CS, 64, 8192, 256,
     dict(zero_stage=3, microbatch_size=2, offload_activation_layers=20), 5243, None),
    ("[B: offload 40 layers from the config file, commit unmatched] MB 26.04 GB200: Llama 3 70B FP8-CS Megatron-FSDP "
     "MBS2, 64 GPUs", "llama-3-70b", "GB200", _MB2604, _FP8CS, 64, 8192, 256,
     dict(zero_stage=3, microbatch_size=2, offload_activation_layers=40), 4143, None),
    # ---- 26.04 and 26.06 (the same layouts re-measured), LLAMA3.1_405B, 256 GPUs, GBS 1536, seq 8192, MBS 1:
    # (label after 'MB ', system, precision, tp, pp, cp, vp, tokens/s/GPU as printed) ----
    *((f"[A] MB {label}", "llama-3.1-405b", system, _MB2604, precision, 256, 8192, 1536,
       _mb_interleaved(tp, pp, cp, vp), tps, None)
      for label, system, precision, tp, pp, cp, vp, tps in (
          ("26.04 GB300: Llama 3.1 405B NVFP4 TP4 PP8 VP4, 256 GPUs", "GB300", "nvfp4-mixed", 4, 8, 1, 4, 1424),
          ("26.04 GB200: Llama 3.1 405B NVFP4 TP4 PP16 VP8, 256 GPUs", "GB200", "nvfp4-mixed", 4, 16, 1, 8, 1136),
          ("26.04 GB300: Llama 3.1 405B MXFP8 TP2 PP8 CP2 VP4, 256 GPUs", "GB300", "fp8-mixed", 2, 8, 2, 4, 968),
          ("26.04 GB200: Llama 3.1 405B MXFP8 TP4 PP16 VP8, 256 GPUs", "GB200", "fp8-mixed", 4, 16, 1, 8, 793),
          ("26.04 GB300: Llama 3.1 405B FP8-CS TP4 PP8 VP4, 256 GPUs", "GB300", _FP8CS, 4, 8, 1, 4, 1036),
          ("26.04 GB200: Llama 3.1 405B FP8-CS TP4 PP16 VP4, 256 GPUs", "GB200", _FP8CS, 4, 16, 1, 4, 842),
          ("26.06 GB300: Llama 3.1 405B FP8-CS TP4 PP8 VP4, 256 GPUs", "GB300", _FP8CS, 4, 8, 1, 4, 1024),
          ("26.06 GB300: Llama 3.1 405B MXFP8 TP2 PP8 CP2 VP4, 256 GPUs", "GB300", "fp8-mixed", 2, 8, 2, 4, 960),
          ("26.06 GB300: Llama 3.1 405B NVFP4 TP4 PP8 VP4, 256 GPUs", "GB300", "nvfp4-mixed", 4, 8, 1, 4, 1472),
          ("26.06 GB200: Llama 3.1 405B FP8-CS TP4 PP16 VP4, 256 GPUs", "GB200", _FP8CS, 4, 16, 1, 4, 864),
          ("26.06 GB200: Llama 3.1 405B MXFP8 TP4 PP16 VP8, 256 GPUs", "GB200", "fp8-mixed", 4, 16, 1, 8, 768),
          ("26.06 GB200: Llama 3.1 405B NVFP4 TP4 PP16 VP8, 256 GPUs", "GB200", "nvfp4-mixed", 4, 16, 1, 8, 1056))),
)

#: ---------------------------------------------------------------------------------------------------------------
#: NeMo Framework user guide performance summaries, NeMo 2.0 (NeMo 25.02 DGX-B200 table; NeMo 25.04 DGX-GB200 table),
#: read through the search index's stored pages:
#:   https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance_summary.html (revision showing
#:     "Container: NeMo 25.02", "System: DGX-B200", "FP8 precision (using NeMo 2.0)")
#:   https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/archive/25.04-performance-summary.html
#:     ("Container: NeMo 25.04", "System: DGX-GB200"; "per-tensor FP8 quantization, leveraging scaling factors computed
#:     in the current step" = FP8 current scaling)
#: Columns: Model, #-GPUs, GBS, MBS, Seq, (FSDP), TP, PP, CP, VP, EP, GA, Tokens/sec/GPU, Model TFLOP/sec/GPU; used
#: as printed. GA checks: e.g. B200 70B: dp = 64/(2*4*2) = 4, GBS 128/(4*1) = 32 = GA (as printed).
#: Precision: NeMo 2.0's bf16_with_fp8_mixed recipe sets fp8_param_gather=True (nemo/collections/llm/recipes/
#:   precision/mixed_precision.py, search id 3501017253), so "fp8-params"; 25.02 used delayed scaling, 25.04 current
#:   scaling (both priced the same). sp + tp_overlap when tp > 1 (NeMo 2.0 performance scripts turn on
#:   tp_comm_overlap; ASSUMED, as for the 24.x NeMo rows). Distributed optimizer (ZeRO-1). Framework "megatron" (no TE
#:   cross-entropy fusion in these releases; ASSUMED). Nemotron-340B: cuDNN attention (no NVTE_FUSED_ATTN=0 known).
_NEMO2 = "megatron"
SCOUTED_2026_12W = SCOUTED_2026_12W + (
    # ---- NeMo 25.02, DGX-B200 ----
    ("[B: tp overlap assumed] NeMo 25.02 B200: GPT3-175B TP4 PP4 VP6 MBS2, 512 GPUs", "gpt3-175b", "B200", _NEMO2,
     _FP8CS, 512, 2048, 2048, dict(_mb_interleaved(4, 4, 1, 6), microbatch_size=2), 1600, None),
    ("[A] NeMo 25.02 B200: Llama 3 8B MBS2, 8 GPUs", "llama-3-8b", "B200", _NEMO2, _FP8CS, 8, 8192, 128,
     dict(zero_stage=1, microbatch_size=2), 26006, None),
    ("[B: tp overlap assumed] NeMo 25.02 B200: Llama 3 70B TP2 PP4 CP2 VP5, 64 GPUs", "llama-3-70b", "B200", _NEMO2,
     _FP8CS, 64, 8192, 128, _mb_interleaved(2, 4, 2, 5), 3062, None),
    ("[B: tp overlap assumed] NeMo 25.02 B200: Llama 3 405B TP4 PP8 CP2 VP8, 128 GPUs", "llama-3.1-405b", "B200",
     _NEMO2, _FP8CS, 128, 8192, 64, _mb_interleaved(4, 8, 2, 8), 625, None),
    ("[B: tp overlap assumed] NeMo 25.02 B200: Nemotron-4 340B TP8 PP4 VP12, 128 GPUs", "nemotron-4-340b", "B200",
     _NEMO2, _FP8CS, 128, 4096, 32, _mb_interleaved(8, 4, 1, 12), 602, None),
    # ---- NeMo 25.04, DGX-GB200 ----
    ("[B: tp overlap assumed] NeMo 25.04 GB200: GPT3-175B TP4 PP4 VP12 MBS2, 128 GPUs", "gpt3-175b", "GB200", _NEMO2,
     _FP8CS, 128, 2048, 256, dict(_mb_interleaved(4, 4, 1, 12), microbatch_size=2), 1804, None),
    ("[A] NeMo 25.04 GB200: Llama 3 8B MBS2, 8 GPUs", "llama-3-8b", "GB200", _NEMO2, _FP8CS, 8, 8192, 128,
     dict(zero_stage=1, microbatch_size=2), 33099, None),
    ("[B: offload 40 layers assumed from MB 25.09's GB200 recipe] NeMo 25.04 GB200: Llama 3 70B FSDP, 64 GPUs",
     "llama-3-70b", "GB200", _NEMO2, _FP8CS, 64, 8192, 128,
     dict(zero_stage=3, microbatch_size=1, offload_activation_layers=40), 4035, None),
    ("[B: tp overlap assumed] NeMo 25.04 GB200: Llama 3 405B TP4 PP8 CP2 VP8, 128 GPUs", "llama-3.1-405b", "GB200",
     _NEMO2, _FP8CS, 128, 8192, 64, _mb_interleaved(4, 8, 2, 8), 665, None),
    ("[B: tp overlap assumed] NeMo 25.04 GB200: Nemotron-4 340B TP8 PP4 VP12, 128 GPUs", "nemotron-4-340b", "GB200",
     _NEMO2, _FP8CS, 128, 4096, 32, _mb_interleaved(8, 4, 1, 12), 737, None),
)


#: Twenty-fourth scouting pass (2026-12, never fitted on; SCOUTED_2026_12X): pre-2024 pre-training runs whose layout is
#: published beside a GPU-hour or wall-clock total (Pythia, StarCoderBase, Falcon). Every row is a whole-run average
#: derived from a total, with the arithmetic below; none is a per-step log.
#:
#: 1. Pythia (Biderman et al. 2023, arXiv 2304.01373), Appendix D, Table 5 "GPU count / total GPU hours" (PDF p21):
#:    70M 32 / 510, 160M 32 / 1,030, 410M 32 / 2,540, 1B 64 / 4,830, 1.4B 64 / 7,120, 2.8B 64 / 14,240, 6.9B 128 /
#:    33,500, 12B 256 / 72,300. The paper PDF is NOT in the search index: the table is read from a third-party
#:    transcription that cites it page by page (search-index file id 71571056092, a held-out-dataset builder script,
#:    records "PDF p21, Table 5 ... total GPU hours ... (iteration time x iterations x GPUs / 3600)" and the caption's
#:    "computed from logged iteration time, not billed time"): so these hours are logged step time, not wall clock.
#:    Tokens: 299,892,736,000 (EleutherAI/pythia README, "Each model saw 299,892,736,000 ~= 299.9B tokens") = 143,000
#:    iterations x 1,024 sequences x 2,048 (checked). tokens/s/GPU = 299,892,736,000 / (GPU hours x 3,600), e.g. 12B:
#:    2.9989e11 / (72,300 x 3,600) = 1,152.2; check: 6 x 11.85e9 x 1,152 = 81.9 TFLOP/s = 26% of the A100's 312 (fp16),
#:    34% counting the full-recompute forward (8N).
#:    Layout, every field from the GPT-NeoX configs EleutherAI/pythia models/<size>/pythia-<size>.yml (stored
#:    versions: 70M @ ae1ce75d, 160M @ 00753222, 410M @ ddad623a, 1B @ b14d5af9, 1.4B @ 4d0c9018, 2.8B @ 2d898509,
#:    6.9B @ 31654e58, 12B @ 55e1182b): pipe-parallel-size 1, model-parallel-size 1 (2 for 6.9B, 4 for 12B),
#:    train_micro_batch_size_per_gpu 32 / 16 / 8 with gas 1 (6.9B / 12B: 8 x GA 2), the comment "trained on N gpus"
#:    (= Table 5's counts; dp x mbs x GA = 1,024 on every size), ZeRO stage 1, checkpoint-activations with
#:    checkpoint-num-layers 1 (-> full recompute; partition-activations only shards the checkpoints over TP ranks),
#:    fp16 (priced bf16-mixed: same tensor rate), dropout 0, attention-config "flash" except the 70M and 1B files
#:    (no attention-config: GPT-NeoX's default "global" softmax attention -> TrainingSpec attention='naive').
#:    Vocabulary padded to 128 x TP (50,304 / 50,432 / 50,688) as the HF configs have it; models
#:    models/pythia-<size>.config.json (HF GPTNeoX shape; 70,426,624 ... 11,846,072,320 parameters = HF's counts).
#:    ASSUMED [B]: the network (AWS p4d, 8 x A100 40GB with 4 x 100 Gb/s EFA per node -> 6.25 GB/s per GPU, as the
#:    BloombergGPT row: the configs' /fsx paths are Amazon FSx for Lustre; not stated by the paper as read here); the
#:    deepspeed profile (GPT-NeoX is a Megatron + DeepSpeed stack, as the shared GPT-NeoX-20B row prices it).
_P4D = "A100 40GB+scale_out_bandwidth=6250000000"
_PYTHIA_TOKENS = 299_892_736_000
_PYTHIA = (  # (size, model, GPUs, TP, mbs, GA, GPU hours, attention)
    ("70M", MODELS_DIR + "pythia-70m.config.json", 32, 1, 32, 1, 510, "naive"),
    ("160M", "pythia-160m", 32, 1, 32, 1, 1030, "flash"),
    ("410M", MODELS_DIR + "pythia-410m.config.json", 32, 1, 32, 1, 2540, "flash"),
    ("1B", MODELS_DIR + "pythia-1b.config.json", 64, 1, 16, 1, 4830, "naive"),
    ("1.4B", MODELS_DIR + "pythia-1.4b.config.json", 64, 1, 16, 1, 7120, "flash"),
    ("2.8B", MODELS_DIR + "pythia-2.8b.config.json", 64, 1, 16, 1, 14240, "flash"),
    ("6.9B", MODELS_DIR + "pythia-6.9b.config.json", 128, 2, 8, 2, 33500, "flash"),
    ("12B", MODELS_DIR + "pythia-12b.config.json", 256, 4, 8, 2, 72300, "flash"),
)
SCOUT24_PYTHIA = tuple(
    (f"[B: p4d network assumed; Table 5 via a transcription] Pythia {size} (GPT-NeoX): TP{tp} DP{n // tp} ZeRO-1, "
     f"mbs {mbs} x GA {ga}, full AC, {'flash' if att == 'flash' else 'default (non-flash)'} attention, "
     f"{n} A100 40GB, 1024 x 2048",
     model, _P4D, "deepspeed", "bf16-mixed" + ("+attention=naive" if att == "naive" else ""), n, 2048, 1024,
     dict(tp=tp, sp=False, dp=n // tp, zero_stage=1, microbatch_size=mbs, recompute="full"),
     round(_PYTHIA_TOKENS / (hours * 3600), 1), None)
    for size, model, n, tp, mbs, ga, hours, att in _PYTHIA)

#: 2. StarCoder (Li et al. 2023, arXiv 2305.06161), Sec. 5.6 "Multi-Node GPU Setup" and 5.7 (CO2 emissions).
#:    Stored quotes: search-index ids 21949449555 / 24927022793 (Sec. 5.6: "512 A100 80 GB GPUs distributed across 64
#:    nodes ... 3D-parallel layout that shards the model with both tensor and pipeline parallelism rank 4 ... 32-fold
#:    data parallelism ... micro-batch size of 1 and accumulated for 16 steps, resulting in a global batch size of 512
#:    (equivalent to 4M tokens)"; "the training in BF16 leads to 10% lower throughput than FP16 ... it requires the
#:    gradient reduction step in FP32") and 71571056092 (Sec. 5.7 "total number of GPU hours that training took
#:    (320,256)"; StarCoderBase "250k iterations, batch 4M tokens, one trillion tokens").
#:    tokens/s/GPU = 250,000 x 512 x 8,192 / (320,256 x 3,600) = 1.0486e12 / 1.1529e9 = 909.5 (with the rounded "one
#:    trillion" it would be 867, -4.7%). Check: 6 x 15.52e9 x 909.5 = 84.7 TFLOP/s = 27% of 312; a whole-run figure
#:    (restarts included, whatever they were).
#:    Model: models/starcoderbase-15.5b.config.json (ModelSpec fields: 40 x 6144, 48 heads, multi-query, GELU 24576,
#:    learned positions 8192, vocab 49,152, tied): 15,517,456,384 parameters (paper: ~15.5B).
#:    ASSUMED [B]: the flags the paper does not state, from the same team's StarCoderBase-7B pre-training script
#:    (bigcode Megatron-LM fork, search-index id 8100786725: "7b-starcoder", 64 nodes, --use-flash-attn,
#:    --use-distributed-optimizer, no --recompute-*, no --sequence-parallel, --attention-dropout 0.1 --hidden-dropout 0.1,
#:    --bf16, AWS EFA environment): flash attention, ZeRO-1, recompute none, sp off, dropout masks stored; the AWS
#:    p4de network (the project's aws-p4de constant) from that script's EFA settings; 1F1B; megatron-legacy profile
#:    (a 2023 Megatron-LM fork) with --bf16's fp32 gradient reduction (_LEGACY_BF16, as the paper says). The single KV
#:    head is replicated on the 4 TP ranks (kv_replication; the fork's multiquery attention keeps one K/V per rank).
SCOUT24_STARCODER = (
    ("[B: flash/dist-opt/no-AC/no-SP/dropout from the 7B sibling script, p4de network; whole-run GPU-hour average] "
     "StarCoder paper Sec. 5.6-5.7: StarCoderBase 15.5B TP4 PP4 DP32, mbs 1 x GA 16, GBS 512 x 8192, 512 A100 80GB",
     MODELS_DIR + "starcoderbase-15.5b.config.json", P4DE, "megatron-legacy", _LEGACY_BF16 + "+dropout=true", 512,
     8192, 512, dict(tp=4, sp=False, kv_replication=True, pp=4, schedule="1f1b", dp=32, zero_stage=1, microbatch_size=1,
                    recompute="none"),
     round(250_000 * 512 * 8192 / (320_256 * 3600), 1), None),
)

#: 3. Falcon (TII), Hugging Face model cards tiiuae/falcon-7b (stored copy id 3598128044), falcon-40b (24303298681),
#:    falcon-180B (47938588607) "Training Procedure" / "Training Hyperparameters" / "Compute Infrastructure", and the
#:    Hugging Face blog "Spread Your Wings: Falcon 180B is here" (stored copy id 7239854304).
#:    Stated: 7B "384 A100 40GB GPUs, using a 2D parallelism strategy (PP=2, DP=192) combined with ZeRO", batch 2304
#:    (30B tokens ramp-up), seq 2048, bf16, 1,500B tokens, "took about two weeks"; 40B "384 A100 40GB GPUs ... 3D
#:    parallelism strategy (TP=8, PP=4, DP=12) combined with ZeRO", batch 1152 (100B tokens ramp-up), 1,000B tokens,
#:    "started in December 2022 and took two months"; 180B "up to 4,096 A100 40GB GPUs ... (TP=8, PP=8, DP=64) combined
#:    with ZeRO", batch 2048 (100B tokens ramp-up), 3,500B tokens; blog: "on up to 4096 GPUs simultaneously ... for a
#:    total of ~7,000,000 GPU hours"; all on AWS SageMaker P4d instances (-> 4 x 100 Gb/s EFA = 6.25 GB/s per GPU);
#:    Gigatron: "3D parallelism approach combined with ZeRO and high-performance Triton kernels (FlashAttention, etc.)".
#:    tokens/s/GPU: 7B 1.5e12 / (14 d x 86,400 x 384) = 3,229 ("about two weeks"); 40B 1.0e12 / (60 d x 86,400 x 384)
#:    = 502.3 ("two months" read as 60 days); 180B 3.5e12 / (7.0e6 h x 3,600) = 138.9 ("~7,000,000": one significant
#:    figure). Checks (6N per token): 7B 6 x 7.2e9 x 3,229 = 140 TFLOP/s = 45% of 312; 40B 6 x 41.8e9 x 502 = 126 = 40%;
#:    180B 6 x 179.5e9 x 138.9 = 150 = 48% - whole-run averages, so none can be above the sustained rate.
#:    Models: preset falcon-7b (6.92B: the preset ties the embeddings); models/falcon-40b.config.json and
#:    falcon-180b.config.json (HF Falcon "new decoder": 60 x 8192 / 80 x 14848, head_dim 64, 8 KV groups, two
#:    LayerNorms per parallel block, no biases, vocab 65,024, untied): 41,835,970,560 and 179,522,565,120 parameters
#:    (the latter = HF's safetensors count quoted in id 71571056092).
#:    ASSUMED [B]: ZeRO stage 1 ("combined with ZeRO", stage not stated), micro-batch 1, no activation recompute, 1F1B,
#:    no sequence parallelism, the whole run at the final batch and at the full GPU count (180B: "up to" 4,096), the
#:    megatron profile standing in for Gigatron (fused / Triton kernels, FlashAttention).
_FALCON = (  # (label, model, GPUs, gbs, layout, tokens/s/GPU)
    ("Falcon-7B model card: PP2 DP192 + ZeRO, 384 A100 40GB (p4d), batch 2304 x 2048, ~2 weeks for 1.5T", "falcon-7b",
     384, 2304, dict(pp=2, schedule="1f1b", dp=192, zero_stage=1, microbatch_size=1, recompute="none"),
     1.5e12 / (14 * 86400 * 384)),
    ("Falcon-40B model card: TP8 PP4 DP12 + ZeRO, 384 A100 40GB (p4d), batch 1152 x 2048, 2 months for 1T",
     MODELS_DIR + "falcon-40b.config.json", 384, 1152,
     dict(tp=8, sp=False, pp=4, schedule="1f1b", dp=12, zero_stage=1, microbatch_size=1, recompute="none"),
     1.0e12 / (60 * 86400 * 384)),
    ("Falcon-180B model card + HF blog: TP8 PP8 DP64 + ZeRO, 4096 A100 40GB (p4d), batch 2048 x 2048, ~7M GPU-h "
     "for 3.5T", MODELS_DIR + "falcon-180b.config.json", 4096, 2048,
     dict(tp=8, sp=False, pp=8, schedule="1f1b", dp=64, zero_stage=1, microbatch_size=1, recompute="none"),
     3.5e12 / (7.0e6 * 3600)),
)
SCOUT24_FALCON = tuple(
    (f"[B: ZeRO-1, mbs 1, no AC, megatron profile for Gigatron; whole-run average from a rounded duration] {label}",
     model, _P4D, "megatron", "bf16-mixed", n, 2048, gbs, lay, round(tps, 1), None)
    for label, model, n, gbs, lay, tps in _FALCON)

SCOUTED_2026_12X = SCOUT24_PYTHIA + SCOUT24_STARCODER + SCOUT24_FALCON


def check_inputs(row: tuple, profile_update: dict | None = None):
    """(model, hardware, training, parallel, devices) of one :data:`PUBLIC_CHECKS` entry, the profile
    with the row's ``+field=value`` overrides and then ``profile_update`` applied."""
    from shardplan.calibration import hardware_of
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

    _, name, hw, fw, prec, n, seq, gbs, fields, _, _ = row
    from shardplan.loaders import load_model  # a model without a preset: a config file under benchmarks/
    model = MODELS[name] if name in MODELS else load_model(str(Path(__file__).parent / name))
    hw, *hw_pairs = hw.split("+")  # "+field=value": a hardware field the row's system sets (a TPU slice's ICI size)
    prec, *pairs = prec.split("+")
    extra = {k: (float(v) if k == "moe_imbalance" else v) for k, v in (pair.split("=") for pair in pairs)}
    profile = framework_profile(fw)  # "+field=value": a profile field the run's recipe sets (as --framework reads it)
    if profile_update:
        profile = profile.model_copy(update=profile_update)
    training = TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=profile, precision=PRECISION_POLICIES[prec],
                            **extra)
    hardware = hardware_of(hw).model_copy(update={k: int(v) for k, v in (pair.split("=") for pair in hw_pairs)})
    return model, hardware, training, ParallelConfig(**fields), n
#: NeMo AutoModel docs/performance-summary.md (NVIDIA-NeMo/Automodel, "Last Updated: 2025-10-02"), DGX-H100 BF16
#: pre-training: FSDP2 over every rank, EP and PP as the table gives them, sequence 4,096, recipes
#: examples/benchmark/configs/*_te_deepep.yaml (Transformer Engine kernels, DeepEP, fake_balanced_gate: true, i.e.
#: round-robin routing, TrainingSpec.moe_routing; activation checkpointing of every block in the DeepSeek-V3 and Qwen3
#: recipes, none in the GPT-OSS ones, as stored; bf16 weights and Adam state with fp32 gradient reduction: the profile's
#: optimizer_dtype and grad_reduce_bytes). The Kimi K2 row has no
#: model preset and is left out. DeepSeek-V3 without MTP (the recipe's Hugging Face config). The 1,024-GPU DeepSeek-V3
#: row accumulates 4 local batches (GA 4: global batch 8,192 over 256 data-parallel ranks, local_batch_size 8), each a
#: pipeline flush of 8 microbatches (ParallelConfig.pipeline_flushes). Read after every fit and never fitted on; the
#: routing term and the flushes were added after these rows were read
_AM = "bf16-mixed+moe_routing=round_robin"
_AM_DS = dict(pp=4, schedule="interleaved", virtual_stages=8, ep=64, moe_dispatcher="deepep", zero_stage=3,
              microbatch_size=1, recompute="full")
AUTOMODEL_H100 = tuple(
    (f"NeMo AutoModel H100: {label}", model, "H100-SXM", "automodel", _AM, n, 4096, gbs, fields, tps, None)
    for label, model, n, gbs, fields, tps in (
        ("DeepSeek-V3 PP4 VP8 EP64 FSDP, full AC, 1,024 GPUs", "deepseek-v3", 1024, 8192,
         dict(_AM_DS, pipeline_flushes=4), 865),
        ("DeepSeek-V3 PP4 VP8 EP64 FSDP, full AC, 256 GPUs", "deepseek-v3", 256, 512, _AM_DS, 1002),
        ("Qwen3-30B-A3B EP8 FSDP, full AC, 8 GPUs", "qwen3-30b-a3b", 8, 512,
         dict(ep=8, moe_dispatcher="deepep", zero_stage=3, microbatch_size=4, recompute="full"), 12040),
        ("GPT-OSS-20B EP8 FSDP, FlexAttention, 8 GPUs", "gpt-oss-20b", 8, 256,
         dict(ep=8, moe_dispatcher="deepep", zero_stage=3, microbatch_size=2), 13058),
        ("GPT-OSS-120B EP64 FSDP, FlexAttention, 64 GPUs", "gpt-oss-120b", 64, 512,
         dict(ep=64, moe_dispatcher="deepep", zero_stage=3, microbatch_size=2), 7626)))


#: the Megatron MoE model zoo's step with the 1F1B EP overlap on the QWEN3_MOE[0] layout (best_practice/Qwen3
#: readme: 17.6 s, "+1f1b overlap", against 19.7 s without)
ZOO_A2A_OVERLAP_STEP_S = 17.6


def a2a_overlap_shares() -> dict[str, float]:
    """The share of the hideable expert AllToAll time Combined 1F1B hides, implied by measurements: for a row,
    (step without - step measured with) / (step without - step with everything hideable hidden), the two
    predictions from the planner (``FrameworkProfile.a2a_overlap_share`` 0 and 1). The zoo pair is an A/B of
    one layout, so its share compares the measured ratio with the predicted one; the Megatron-Bridge 25.11
    Qwen3-235B H100 row (recipe moe_a2a_overlap) compares its measured step with the two predictions."""
    from shardplan.cost.step import estimate

    def steps(row: tuple) -> tuple[float, float, float]:
        out = []
        for share in (0.0, 1.0):
            m, h, t, p, n = check_inputs(row, {"a2a_overlap_share": share})
            out.append(estimate(m, h, t, p.model_copy(update={"moe_a2a_overlap": True}), n).step_s)
        return out[0], out[1], t.global_batch_tokens / n / row[9]
    no, full, measured = steps(QWEN3_MOE[0])
    zoo = (1 - ZOO_A2A_OVERLAP_STEP_S / measured) / (1 - full / no)
    row = next(r for r in MEGATRON_BRIDGE_H100 if r[0].startswith("Megatron-Bridge 25.11 H100: Qwen3-235B"))
    no, full, measured = steps(row)
    return {"zoo A/B": zoo, "Megatron-Bridge 25.11 H100 Qwen3-235B": (no - measured) / (no - full)}


#: Twenty-fifth scouting pass (2026-12, never fitted on; SCOUTED_2026_12Y): JAX / XLA training on TPU v4 / v5e / v5p /
#: v6e (and the same code on H100) with the layout in the source: Apple's AXLearn (its Fuji configs' step-time notes
#: and the AXLearn paper's iteration times) and PaLM 540B.
#:
#: 1. AXLearn, apple/axlearn axlearn/experiments/text/gpt/fuji.py. The step times are comments beside the mesh rules
#:    (stored versions: search-index file id 7945315976, the earliest, 9,579 characters; commit 5f7e1421 = id
#:    1418552320, the latest read). Quoted:
#:      7B:  "# Step time: / v1 on tpu-v4-1024 (512 chips): 3.03s / v1 on tpu-v5litepod-256x4 (1024 chips): 2.44s /
#:            v1 on tpu-v5p-512 (256 chips): 2.85s / v1 on gpu-p5.48xlarge-256 (256 chips): 2.44s / v1 on
#:            gpu-p5.48xlarge-512 (512 chips): 1.54s"; "v2 on tpu-v5litepod-256x4: 2.21s (46% MFU), HBM usage:
#:            14GB/chip."; "v2 on gpu-p5.48xlarge-256, step time: 1.78s/step, MFU 39%."
#:      70B: "v2 on gpu-p5.48xlarge 8x64, step time: 12.9s."; "TPU V5e maximum per device batch is 1. with all
#:            activation offloading, HBM usage: 14.6GB/chip. ... tpu-v5e-256-4. step time: 14.3736s (59.87% MFU).";
#:            "V2 on tpu-v6e-256x4, step time: 4.9s."; "V2 on tpu-v6e-256, step time: 19.5s." (GA 4 in that rule)
#:      single host (make_single_host_config docstring): "gpu-p5.48xlarge 8x1 step time: 128K tokens per batch: 2.03s
#:            for v1. 64K tokens per batch: 1.1s for v1, 1.54s for v2. tpu-v5litepod-32 step time: 128K tokens per
#:            batch: 1.93s for v1."
#:    Batch: tokens_per_batch = 4 * 1024**2 for v1 / v2 (4,194,304 tokens), train_batch_size = tokens / max sequence
#:    length (v1 2,048 -> 2,048 sequences; v2 4,096 -> 1,024). tokens/s/device = 4,194,304 / step_s / devices, e.g.
#:    v4: 4,194,304 / 3.03 / 512 = 2,703.6. Check of the stated MFUs (6N + 12 L h s per token, N with the embedding):
#:    7B v2 v5e: 4,194,304 / 2.21 / 1024 = 1,853.4 tokens/s x (6 x 6.61e9 + 12 x 32 x 4096 x 4096 = 46.1e9) = 85.4
#:    TFLOP/s = 43% of 197 (stated 46%); 70B v5e: 285.0 x (6 x 68.99e9 + 12 x 80 x 8192 x 4096 = 446.2e9) = 127 TFLOP/s
#:    = 65% of 197 (stated 59.87%: AXLearn's own FLOP count); 7B v2 p5: 9,206 x 46.1e9 = 424 TFLOP/s = 43% of 989
#:    (stated 39%).
#:    Model (every config): Fuji v1/v2 7B = 32 x 4096, 32 heads (MHA), SwiGLU ffn scaled_hidden_dim(8/3, multiple of
#:    256) = 11,008, vocab 32 x 1024 = 32,768, shared_lm_head=True (tied), RMSNorm, RoPE, no biases
#:    (models/fuji-7b-v1.config.json: 6,610,489,344 parameters; v2 differs only in sequence length 4,096). 70B v2 =
#:    80 x 8192, 64 heads in 8 KV groups, ffn scaled_hidden_dim(3.5) = 28,672, vocab 32,768, untied
#:    (models/fuji-70b-v2.config.json: 68,989,231,104). Weights fp32, step dtype bf16 (common.py STEP_DTYPE, cfg.dtype
#:    float32) -> "fp32-params"; AdamW; no gradient accumulation unless the rule adds GradientAccumulationModifier.
#:    Mesh: mesh_shape_from_axes(data=-1, fsdp=F): FSDP over F devices, replicas over the rest -> zero_stage 3,
#:    dp = devices, dp_shard = F; micro-batch = sequences / devices (/ GA). Rules beside the v1 7B numbers in the
#:    earliest version: tpu-v4 fsdp 16, tpu-v5litepod-.* fsdp 16, tpu-v5p fsdp 8, p5 fsdp 8; single host: the default
#:    mesh (data=-1, fsdp=8); 7B v2 v5e-256-4: fsdp 256, remat dots_saveable; 70B default mesh fsdp=-1, p5 rule data=-1
#:    fsdp=128, v5e-256-4 fsdp 256 with offload_dots_saveable (every dot output to pinned host), v6e-256-(4|8) and
#:    v6e-256 fsdp 256 with offload_attention_proj_policy (attention projections offloaded, the rest recomputed) and
#:    GA 4 on v6e-256.
#:    Default remat (common.py update_model_remat_config -> attention.build_remat_spec, id 8082716765): the
#:    RepeatedTransformerLayer saves the attention's q/k/v projections, context and output projection and recomputes the
#:    feed-forward (priced recompute="full", remat_saved qkv_proj / context / out_proj).
#:    ASSUMED [B]: that each step time was measured with the rule and remat default of the version it sits beside (the
#:    comments were kept while the rules changed: the latest v5p 7B rule is fsdp 64 with flash + dots saved); the
#:    attention kernel (fuji-*-flash and plain configs both exist; priced with flash); the 70B p5 row's feed-forward
#:    (the earliest version that carries "12.9s" has no ffn_dim for 70B -> scaled 8/3 = 21,888; priced 28,672 as the
#:    later file); offloaded tensors priced as recomputed (v6e) or kept (v5e: recompute none, the v5e preset has no host
#:    link); the network: AWS p5 = 3,200 Gb/s of EFA per 8 GPUs = 50 GB/s per GPU (the H100-SXM preset's), TPU slices'
#:    ICI over the slice ("+scale_up_size" = chips in one slice) and DCN between slices (v5e-256 x 4, v6e-256 x 4).
_FUJI7 = MODELS_DIR + "fuji-7b-v1.config.json"
_FUJI70 = MODELS_DIR + "fuji-70b-v2.config.json"
_FUJI_TOKENS = 4 * 1024**2
_FUJI_SAVED = ("qkv_proj", "context", "out_proj")           # build_remat_spec(self_attention=True, feed_forward=False)
_DOTS = ("qkv_proj", "context", "out_proj", "mlpwi", "mlpwo")  # jax dots_saveable: every matmul output kept


def _fuji(v, size, hw, n, fsdp, step_s, rc="full", saved=_FUJI_SAVED, ga=1, tokens=_FUJI_TOKENS, mem_gib=None,
          extra="", tag="[B: rule and remat of that version assumed; code-default attention]", flash=False, **kw):
    seq = 2048 if v == 1 else 4096
    gbs = tokens // seq
    lay = dict(dp=n, zero_stage=3, microbatch_size=gbs // n // ga, recompute=rc, **kw)
    if fsdp != n:
        lay["dp_shard"] = fsdp
    if rc == "full" and saved:
        lay["remat_saved"] = saved
    label = (f"{tag} AXLearn fuji.py: Fuji-{size} v{v} on {hw.split('+')[0]}, {n} devices, data {n // fsdp} x fsdp "
             f"{fsdp}, {gbs} x {seq}{f', GA {ga}' if ga > 1 else ''}{extra}, {step_s} s/step")
    label += ", flash attention" if flash else ", plain (non-flash) attention"
    return (label, _FUJI7 if size == "7B" else _FUJI70, hw, "maxtext", "fp32-params" + ("" if flash else "+attention=naive"),
            n, seq, gbs, lay,
            round(tokens / step_s / n, 1), mem_gib)


SCOUT25_AXLEARN_FUJI = (
    _fuji(1, "7B", "TPU v4+scale_up_size=512", 512, 16, 3.03),
    _fuji(1, "7B", "TPU v5e", 1024, 16, 2.44),
    _fuji(1, "7B", "TPU v5p+scale_up_size=256", 256, 8, 2.85),
    _fuji(1, "7B", "H100-SXM", 256, 8, 2.44),
    _fuji(1, "7B", "H100-SXM", 512, 8, 1.54),
    _fuji(2, "7B", "TPU v5e", 1024, 256, 2.21, saved=_DOTS, extra=", dots_saveable", mem_gib=round(14e9 / 2**30, 2),
          tag="[B: HBM '14GB' read as 1e9 B; code-default attention]"),
    _fuji(2, "7B", "H100-SXM", 256, 8, 1.78),
    _fuji(2, "70B", "H100-SXM", 512, 128, 12.9, tag="[B: ffn 28,672 (the file of that time has 21,888), remat default]"),
    _fuji(2, "70B", "TPU v5e", 1024, 256, 14.3736, rc="none", extra=", offload_dots_saveable priced as no recompute",
          mem_gib=round(14.6e9 / 2**30, 2), tag="[B: host offload of every dot output not priced (no v5e host link)]"),
    _fuji(2, "70B", "TPU v6e", 1024, 256, 4.9, saved=None, extra=", attention projections offloaded, priced as full AC",
          flash=True, tag="[B: offloaded attention projections priced as recomputed]"),
    _fuji(2, "70B", "TPU v6e", 256, 256, 19.5, saved=None, ga=4,
          extra=", attention projections offloaded, priced as full AC", flash=True,
          tag="[B: offloaded attention projections priced as recomputed]"),
    # single-host configs: global batch // 32 (128K tokens for v1) and the docstring's 64K-token variants
    _fuji(1, "7B", "H100-SXM", 8, 8, 2.03, tokens=_FUJI_TOKENS // 32),
    _fuji(1, "7B", "H100-SXM", 8, 8, 1.1, tokens=_FUJI_TOKENS // 64,
          tag="[B: 64K-token batch = 32 sequences, how it was set not stated; remat default]"),
    _fuji(2, "7B", "H100-SXM", 8, 8, 1.54, tokens=_FUJI_TOKENS // 64,
          tag="[B: 64K-token batch = 16 sequences, how it was set not stated; remat default]"),
    _fuji(1, "7B", "TPU v5e+scale_up_size=32", 32, 16, 1.93, tokens=_FUJI_TOKENS // 32),
)

#: 2. The AXLearn paper (Lee et al. 2025, "AXLearn: Modular, Hardware-Agnostic Large Model Training", arXiv 2507.05411)
#:    compares AXLearn with MaxText, PyTorch FSDP and Megatron-LM. The stored arXiv HTML (arxiv.org/html/2507.05411v3)
#:    is searchable only from its start; its table is read through the paper's benchmark listing on wizwand.com
#:    (www.wizwand.com/paper/68fa79ed1e209131cea80024): AXLearn iteration times "Llama2-7B tpu-v5p-512 2.5 s",
#:    "Llama2 70B (tpu-v5p-1024) 11.6 s" (and "Llama2-70B (64 x H100-8) 9.2 s", "LLaMA2-7B 1.4 s" whose GPU count is
#:    not in the listing: not used). tokens/s/chip = 4,194,304 / 2.5 / 256 = 6,553.6 and 4,194,304 / 11.6 / 512 =
#:    706.2; check: 706.2 x 6 x 68.98e9 = 292 TFLOP/s = 64% of 459 (MaxText's own v5p-512 Llama 2 70B: 692
#:    tokens/s/chip at 65.4% MFU, tiering page).
#:    ASSUMED [B]: batch 4M tokens of 4,096 (the Fuji v2 configs the paper's AXLearn runs would use); the Llama 2 shapes
#:    (presets llama-2-7b / llama-2-70b, vocabulary 32,000); the layout and remat of the latest fuji.py v5p rules (7B:
#:    data=-1, fsdp=64, flash attention saved + dots_saveable -> every matmul output kept; 70B: fsdp over all 512
#:    chips, flash attention output and linear1_0 saved -> full recompute keeping context and mlpwi).
SCOUT25_AXLEARN_PAPER = (
    ("[B: 4M x 4096 batch, fuji.py v5p rule] AXLearn paper: Llama2-7B on tpu-v5p-512 (256 chips), data 4 x fsdp 64, "
     "2.5 s/iteration", "llama-2-7b", "TPU v5p+scale_up_size=256", "maxtext", "fp32-params", 256, 4096, 1024,
     dict(dp=256, dp_shard=64, zero_stage=3, microbatch_size=4, recompute="full", remat_saved=_DOTS),
     round(_FUJI_TOKENS / 2.5 / 256, 1), None),
    ("[B: 4M x 4096 batch, fuji.py v5p rule] AXLearn paper: Llama2-70B on tpu-v5p-1024 (512 chips), fsdp 512, "
     "11.6 s/iteration", "llama-2-70b", "TPU v5p+scale_up_size=512", "maxtext", "fp32-params", 512, 4096, 1024,
     dict(dp=512, zero_stage=3, microbatch_size=2, recompute="full", remat_saved=("context", "mlpwi")),
     round(_FUJI_TOKENS / 11.6 / 512, 1), None),
)

#: 3. PaLM (Chowdhery et al. 2022, arXiv 2204.02311). Throughput, Appendix B as quoted by blog.heim.xyz/palm-training-cost
#:    ("The training of PaLM 540B uses rematerialization because the feasible batch size with rematerialization enables
#:    higher training throughput. Without the rematerialization costs, the resulting model FLOPs utilization is 45.7%
#:    without self-attention ((238.3 x 6 x 540)/(275 x 6144)) or 46.2% with it. PaLM's analytically computed hardware
#:    FLOPs utilization, which includes rematerialization FLOPs, is 57.8%") and leonericsson.github.io ("a training
#:    throughput of 238.3K tokens/sec resulting in a model FLOPs utilization of 46.2%"): 238,300 / 6,144 = 38.8
#:    tokens/s/chip. System (ai-papers.xuzou.cn/papers/palm_2022, analyticsindiamag.com): two TPU v4 Pods of 3,072 chips
#:    (768 hosts each) over the data-centre network, model and data parallelism within a pod, data parallelism across
#:    pods, no pipeline; batch 512 sequences of 2,048 until step 50k, 1,024 until 115k, then 2,048. Model
#:    models/palm-540b.json (see its source line).
#:    ASSUMED [B]: 12-way model parallelism x 256-way fully sharded data parallelism per pod (the paper's Sec. 4 as the
#:    brief states it; not in the stored excerpts) with 2 replicas over DCN (dp 512, dp_shard 256); the throughput at the
#:    final batch 2,048 (micro-batch 4 per replica); remat priced as full recompute (HFU / MFU = 57.8 / 46.2 = 1.25
#:    implies 1.5 of the forward's 2N recomputed, the planner's full recompute 2N: ~6% more FLOPs); the one K/V head
#:    replicated on the 12 TP ranks; the maxtext profile (JAX/XLA on TPU) with tp_requires_sp=False: GSPMD's 2D
#:    finalized layout shards the activations between blocks on d_model (18,432 / 12), which the profile's sequence
#:    sharding cannot express (2,048 is not divisible by 12); the parallel attention + MLP block is priced as two
#:    sequential sub-blocks with one norm (ModelSpec has no parallel-block field; FLOPs and weights are the same, the
#:    fused input projection's ~15% speed-up the paper reports is not priced).
SCOUT25_PALM = (
    ("[B: 12 x 256 per pod from the brief, batch 2048, full AC] PaLM App. B: PaLM 540B on 2 x 3,072 TPU v4 (2 pods over "
     "DCN), MP 12 x FSDP 256 per pod, 2-way DP, 238.3K tokens/s", MODELS_DIR + "palm-540b.json",
     "TPU v4+scale_up_size=3072", "maxtext+tp_requires_sp=False", "fp32-params", 6144, 2048, 2048,
     dict(tp=12, sp=False, kv_replication=True, dp=512, dp_shard=256, zero_stage=3, microbatch_size=4,
          recompute="full"), round(238_300 / 6144, 1), None),
)

SCOUTED_2026_12Y = SCOUT25_AXLEARN_FUJI + SCOUT25_AXLEARN_PAPER + SCOUT25_PALM

#: Twenty-sixth scouting pass (2026-12, never fitted on; SCOUTED_2026_12Z): DeepSpeed's own throughput tables. The
#: DeepSpeed-Ulysses blog (microsoft/DeepSpeed blogs/deepspeed-ulysses/README.md, id 16026764616), the ZeRO++ and
#: SuperOffload blogs give their throughputs only in figures (no number in the text: not used); the one table with
#: numbers and a layout found in the time box is Megatron-DeepSpeed's long-sequence rebase table:
#:
#: microsoft/Megatron-DeepSpeed examples_deepspeed/deepspeed4science/megatron_long_seq_support/README.md (read in the
#: fork zhangsheng377/Megatron-DeepSpeed, id 25015511214; the same table in .../long_seq_support/README.md, id
#: 24899945756), "Performance Comparison between Old Megatron-DeepSpeed and New Megatron-DeepSpeed": "performed on 4
#: NVIDIA DGX A100-40GB nodes, connected through 8 HDR InfiniBand (200Gb/s per HDR)" (ANL ThetaGPU), TFLOPS per GPU:
#:   seq  2k / 4k / 8k / 16k / 32k / 64k / 128k / 256k: new 68 / 80 / 86 / 92 / 100 / 106 / 119 / 94 (TP size=32);
#:   old 25 / 28 (TP=32), OoM from 8k.
#: The model and flags: the README's "GPT30B" script, long_seq_support/pre_train_gpt_30B_seq_parallel.sh (id
#: 24757723280): "GPT-3 30B" num_layers=64, hidden_size=6144, num_attn_heads=64, global_batch_size=2, batch_size
#: (micro)=1, zero_stage=0, --sequence-parallel, activation_checkpoint="true" (--checkpoint-activations +
#: --deepspeed-activation-checkpointing), --fp16, --use-flash-attn-triton, --max-position-embeddings ${seq_len}
#: (learned positions), GPT-2 BPE (models/megads-gpt3-30b-s*k.json: vocabulary 50,257 padded to 128 x TP 32 = 53,248;
#: 29.34B parameters at 2k, 30.93B at 256k with the position table).
#: TFLOPS -> tokens/s/GPU: Megatron-DeepSpeed's throughput_calculator (megatron/utils.py; the same formula quoted by
#: DeepSpeed-Chat's print_throughput): flops/iter = 24 x 4 (checkpoint factor) x B x s x L x h^2 x (1 + s/(6h) +
#: V/(16 L h)), TFLOPS = flops / (t x world x 1e12) -> tokens/s/GPU = TFLOPS x 1e12 / (96 L h^2 (1 + s/6h + V/16Lh)),
#: 96 x 64 x 6144^2 = 2.3192e11; V/(16 L h) = 53,248 / 6,291,456 = 0.00846. E.g. 2k: 68e12 / (2.3192e11 x (1 + 2048 /
#: 36,864 + 0.00846 = 1.0640)) = 275.6; 256k: 94e12 / (2.3192e11 x 8.1196) = 49.9.
#: ASSUMED [B]: the table was measured with that script's flags (mp_size=8 in the script, TP 32 in the table: TP 32
#: over the 32 GPUs, dp 1); micro-batch 1 and global batch 2 (GA 2) as the script (the README says the new version
#: "supports larger batch sizes": not given); fp16 priced as bf16-mixed (same A100 tensor rate); the Triton flash
#: kernel priced as the profile's flash; padded vocabulary in the formula (padded_vocab_size); the "old" rows: no
#: sequence parallel, no flash attention (the rebase added both), the rest as the new.
_MEGADS_TP32 = "A100 40GB"


def _megads30(k: int, tflops: float, old: bool = False):
    s = k * 1024
    per_token = 96 * 64 * 6144**2 * (1 + s / (6 * 6144) + 53_248 / (16 * 64 * 6144))
    tag = ("[B: old = no SP, naive attention; mbs 1 x GA 2 from the script]" if old
           else "[B: TP 32 from the table, mbs 1 x GA 2 from the script]")
    return (f"{tag} Megatron-DeepSpeed long-seq rebase table: GPT-3 30B, {'old' if old else 'new'} "
            f"Megatron-DeepSpeed, seq {k}k, TP 32{'' if old else ' + SP'}, full AC, 32 A100-40GB (4 DGX), {tflops} TFLOPS",
            MODELS_DIR + f"megads-gpt3-30b-s{k}k.json", _MEGADS_TP32, "deepspeed",
            "bf16-mixed" + ("+attention=naive" if old else ""), 32, s, 2,
            dict(tp=32, sp=not old, dp=1, zero_stage=0, microbatch_size=1, recompute="full"),
            round(tflops * 1e12 / per_token, 1), None)


SCOUT26_MEGADS_LONGSEQ = (
    *[_megads30(k, t) for k, t in ((2, 68), (4, 80), (8, 86), (16, 92), (32, 100), (64, 106), (128, 119), (256, 94))],
    _megads30(2, 25, old=True),
    _megads30(4, 28, old=True),
)

SCOUTED_2026_12Z = SCOUT26_MEGADS_LONGSEQ

#: Twenty-seventh scouting pass (2026-12, never fitted on; SCOUTED_2026_12AA): NVIDIA dgxc-benchmarking's v25.04
#: release (NeMo 25.02.01, NeMo 2.0 recipes; CHANGELOG "[v25.04] - 2025-04-30": "Llama3.1 and Nemotron4 benchmarks
#: adopted 25.02.01 NeMo Framework and use NeMo2.0 interface"), whose H100 tables the project had not read (the
#: dgxc rows above are the 24.09 / 24.11 releases), and the IBM + Meta float8 / FSDP2 blog.
#:
#: 1. NVIDIA/dgxc-benchmarking llama3.1/README.md @ 741c886025a7665a1d690c05ff12ac29c1be7252 (search id 36499762388):
#:    layout tables (Size, Precision, GPUs, SeqLen, Layers, TP, PP, CP, EP, DP, VP, MBS, GBS, GA) and "Expected
#:    Performance" tables on DGX H100 (step time, throughput in tokens/s over all GPUs = 8192 x GBS / step time).
#:    Used: the smallest and the largest scale of each full-size table (the scales between are within 1-3% of these
#:    in step time, weak scaling at a fixed per-replica batch, and add nothing); the 405B "Proxy" rows (8 / 30 / 62
#:    layers) are left out. tokens/s/GPU = printed throughput / GPUs, e.g. 8B bf16 8 GPUs: 85,459 / 8 = 10,682
#:    (= 8192 x 128 / 12.27 / 8).
#:      8B  TP1 PP1 CP2 MBS1, GBS 16 x GPUs: bf16 8 / 128 GPUs 85,459 / 1,360,683; fp8 112,388 / 1,758,618
#:      70B bf16 TP4 PP4 CP2 VP5, fp8 TP4 PP8 CP1 VP5, MBS1, GBS 2 x GPUs: bf16 64 / 2048 GPUs 71,526 / 2,288,843;
#:          fp8 106,346 / 3,305,855
#:      405B TP8 PP8 CP2 VP8 MBS1, GBS GPUs / 2: bf16 512 / 2048 GPUs 106,024 / 422,175; fp8 169,535 / 667,883
#:    The recipe script at the same commit, llama3.1/pretrain_llama31.py (search id 36224874564): NeMo 2.0
#:    pretrain_recipe(performance_mode=True) of llama3_8b / llama3_70b / llama31_405b; fp8 = bf16_with_fp8_mixed()
#:    with grad_reduce_in_fp32 False (NeMo 2.0's bf16_with_fp8_mixed sets fp8_param_gather=True, read for the
#:    NeMo 25.02 rows above: "fp8-params"); TP communication overlap with userbuffers for 70B / 405B (tp_overlap).
#: 2. NVIDIA/dgxc-benchmarking nemotron/README.md @ 741c886 (search id 36512589675): Nemotron4 15B, TP2 PP1 CP1 MBS2
#:    GA4, seq 4096, GBS 4 x GPUs; 16 / 2048 GPUs: bf16 98,550 / 12,069,940 tokens/s (2.66 / 2.78 s), fp8 132,396 /
#:    16,054,752 (1.98 / 2.09 s). Model: models/nemotron-4-15b.config.json (squared-ReLU MLP priced as a 2-matrix
#:    MLP). The 340B table of the same file (TP8 PP8, VP "NA") is not used: its attention backend and optimizer dtype
#:    in this release are not known (the 24.11 release set NVTE_FUSED_ATTN=0 and bf16 optimizer state), and the 24.11
#:    340B rows are already held.
#:    ASSUMED for every dgxc row (the tables give all layout fields, so [A]): distributed optimizer (ZeRO-1), sp with
#:    tp > 1, no activation recompute (performance_mode recipes), framework profile "megatron" (as the NeMo 25.02 /
#:    25.04 rows above), the 15B's TP overlap and fp8 recipe as the Llama script's.
#: 3. PyTorch blog "Supercharging Training using float8 and FSDP2" (IBM + Meta, 2024-11-25; pytorch/pytorch.github.io
#:    _posts/2024-11-25-training-using-float8-fsdp2.md @ 1580429b6ff8630fe0be951f2feb079aae051e50, search id
#:    50063634772), Table 3, "512 GPU scale" on the IBM Cloud cluster (H100, "3.2Tbps RoCE" = 50 GB/s per GPU, the
#:    h100-sxm preset): tokens/sec/GPU ("wps") 70B bf16 960, float8 1,448; 405B (TP4) bf16 152, float8 217. torchtitan
#:    + FSDP2 + torch.compile, torchao float8 tensorwise linears with float8 all-gather, SDPA attention in bf16, seq 8K.
#:    Table 1 is not used (its GPU count, 128 / 256 / 512 on three clusters, is not given per row).
#:    ASSUMED [B]: "We explored the best batch size and activation checkpointing schemes" without giving them: local
#:    batch 2 (the same IBM team's FSDP1 blog and fms-fsdp, and torchtitan's 2024 8B tables) and full activation
#:    checkpointing (70B on FSDP alone needs it on 80 GB), FSDP over all 512 GPUs for 70B and FSDP 128 x TP 4 (sp) for
#:    405B; priced as the torchtitan Float8 rows above: torchtitan-compile with the 2024 eager loss (logit_bytes 10),
#:    float8 as fp8-mixed.
_DGXC2504 = "[A] dgxc v25.04 (NeMo 25.02.01) H100:"


def _dgxc2504(model: str, name: str, prec: str, n: int, seq: int, gbs: int, tp: int, pp: int, cp: int, vp: int | None,
              mbs: int, total_tps: float) -> tuple:
    """One dgxc-benchmarking v25.04 DGX H100 row: distributed optimizer, sp + TP overlap when tp > 1, no recompute."""
    lay = dict(zero_stage=1, microbatch_size=mbs)
    if tp > 1:
        lay.update(tp=tp, sp=True, tp_overlap=True)
    if pp > 1:
        lay.update(pp=pp)
    if vp:
        lay.update(schedule="interleaved", virtual_stages=vp)
    if cp > 1:
        lay.update(cp=cp)
    shown = f"TP{tp}" + (f" PP{pp}" if pp > 1 else "") + (f" CP{cp}" if cp > 1 else "") + (f" VP{vp}" if vp else "")
    return (f"{_DGXC2504} {name} {'BF16' if prec == 'bf16-mixed' else 'FP8'} {shown} MBS{mbs}, {n} GPUs", model,
            "H100-SXM", "megatron", prec, n, seq, gbs, lay, round(total_tps / n, 1), None)


SCOUT27_DGXC = (
    *(_dgxc2504("llama-3.1-8b", "Llama 3.1 8B", prec, n, 8192, 16 * n, 1, 1, 2, None, 1, tps)
      for prec, n, tps in (("bf16-mixed", 8, 85_459), ("bf16-mixed", 128, 1_360_683),
                           (FP8_CS, 8, 112_388), (FP8_CS, 128, 1_758_618))),
    *(_dgxc2504("llama-3-70b", "Llama 3.1 70B", prec, n, 8192, 2 * n, 4, pp, cp, 5, 1, tps)
      for prec, pp, cp, n, tps in (("bf16-mixed", 4, 2, 64, 71_526), ("bf16-mixed", 4, 2, 2048, 2_288_843),
                                   (FP8_CS, 8, 1, 64, 106_346), (FP8_CS, 8, 1, 2048, 3_305_855))),
    *(_dgxc2504("llama-3.1-405b", "Llama 3.1 405B", prec, n, 8192, n // 2, 8, 8, 2, 8, 1, tps)
      for prec, n, tps in (("bf16-mixed", 512, 106_024), ("bf16-mixed", 2048, 422_175),
                           (FP8_CS, 512, 169_535), (FP8_CS, 2048, 667_883))),
    *(_dgxc2504(MODELS_DIR + "nemotron-4-15b.config.json", "Nemotron4 15B", prec, n, 4096, 4 * n, 2, 1, 1, None, 2,
                tps)
      for prec, n, tps in (("bf16-mixed", 16, 98_550), ("bf16-mixed", 2048, 12_069_940),
                           (FP8_CS, 16, 132_396), (FP8_CS, 2048, 16_054_752))),
)

_F8BLOG = "[B: local batch 2, full AC assumed] PyTorch float8 + FSDP2 blog Table 3 (IBM Cloud):"
SCOUT27_FLOAT8_BLOG = (
    *((f"{_F8BLOG} Llama 3 70B FSDP 512, {label}, 512 H100", "llama-3-70b", "H100 80GB", _TTC, prec, 512, 8192, 1024,
       dict(dp=512, zero_stage=3, microbatch_size=2, recompute="full"), tps, None)
      for label, prec, tps in (("bf16, compile", "bf16-mixed", 960), ("float8 + fp8 all-gather, compile", "fp8-mixed",
                                                                       1448))),
    *((f"{_F8BLOG} Llama 3.1 405B FSDP 128 x TP 4, {label}, 512 H100", "llama-3.1-405b", "H100 80GB", _TTC, prec, 512,
       8192, 256, dict(dp=128, zero_stage=3, tp=4, sp=True, microbatch_size=2, recompute="full"), tps, None)
      for label, prec, tps in (("bf16, compile", "bf16-mixed", 152), ("float8 + fp8 all-gather, compile", "fp8-mixed",
                                                                      217))),
)

SCOUTED_2026_12AA = SCOUT27_DGXC + SCOUT27_FLOAT8_BLOG

#: Twenty-eighth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AB): XTuner's DeepSpeed ZeRO-3 full
#: fine-tuning speed tables (InternLM/xtuner; Hugging Face Transformers models under xtuner's mmengine runner and
#: DeepSpeed), on A100-SXM4-80GB. XTuner's own "sequence parallel" (DeepSpeed-Ulysses-style head AllToAlls, which
#: the planner does not price: cp is ring attention) is left out: only the rows with sequence_parallel_size 1 are used.
#:
#: 1. InternLM/xtuner docs/zh_cn/acceleration/benchmark.rst @ 4d2758ec5738910b130a9c7c62f2b14375f6d90b (search id
#:    238893093), "速度基准" (speed benchmark): NVIDIA A100-SXM4-80GB, PyTorch 1.13 / CUDA 11.7 / NCCL 2.14.3 as listed;
#:    columns model, GPUs, sequence length, TGS ("Tokens per GPU per Second"), TFLOPs, config. Rows with sp 1:
#:      Llama2-7B 8 GPUs 8k 3028.3 (185.3 TFLOPs), Llama2-7B 8 GPUs 32k 2234.2 (193.0), Yi-34B-200K 32 GPUs 8k 485.1
#:      (165.6), Llama2-70B 32 GPUs 8k 216.8 (144.7).
#:    The configs the table links, xtuner/configs/llama_speed_benchmark/{llama2_7b,yi_34b,llama2_70b}/*_sp1.py (llama2_7b
#:    8k @ e179091c, id 935059564; 32k @ 36592ef1, id 5112256943; yi_34b 8k @ af7a96ce, id 5457329570): batch_size 1
#:    per device, accumulative_counts 1 ("bs = 8 gpus * 1 batch_size_per_device * 1 acc / 1 sequence parallel"),
#:    max_length = the table's length with pack_to_max_length True, use_varlen_attn False (attention over the whole
#:    packed sequence), AdamW, AmpOptimWrapper dtype float16. Earlier stored versions of the same table
#:    (docs/zh_cn/accelerate/benchmark.md, ids 49414903804 / 48994408213) print other TGS for the 7B (3593.0 at 8k,
#:    3864.2 at 32k, more at 32k than at 8k, 3108.9 at 128k) with use_varlen_attn True in the configs of that time
#:    (e.g. the 8k config @ 10bf0839): attention only within each short packed Alpaca sample, which the planner cannot
#:    price; those are not used. The .rst's TFLOPs column is xtuner's ThroughputHook formula (engine/hooks/
#:    throughput_hook.py @ b2ef99b1, id 212173407) applied to its TGS with a causal attention count over the whole
#:    sequence and the recompute factor 4, e.g. 7B 8k: ((8 + 4 x 4.03) x 4096^2 + 2 x 8192 x 4096) x 4 x 32 + 6 x 4096
#:    x 32000 = 6.12e10 FLOP per token x 3028.3 = 185.3e12; 70B 8k: 6.67e11 x 216.8 = 144.7e12, so the TGS and the
#:    activation checkpointing (the hook reads the model's gradient_checkpointing flag: factor 4, not 3) agree.
#: 2. InternLM/xtuner xtuner/configs/llama/llama3_8b/README.md (id 49245579814, "Speed" table): Llama3 8B, 8k, ZeRO-3,
#:    Sequence Parallel 1 on 4 / 8 / 16 GPUs: 2331.3 / 2771.2 / 2127.2 tokens per second (per GPU: the TFLOPs column,
#:    172.6 / 205.1 / 157.5, is the same hook's 7.40e10 FLOP per token x these), A100-80G ("Full parameter fine-tune
#:    Llama3 8B in 8k context only requires 2 * A100-80G"; the Chinese README of the same table, id 1219309696, runs it
#:    as "8*A100 ... --deepspeed deepspeed_zero3"). The 2-GPU row is sp 2 and is left out.
#: Every row: xtuner's SupervisedFinetune enables gradient checkpointing of every decoder layer by default (HF
#: gradient_checkpointing_enable; confirmed by the hook's factor 4) -> recompute 'full'; xtuner's dispatch_modules
#: (xtuner/model/modules/dispatch/__init__.py @ f956b2ea, id 11855050) swaps in flash-attn attention and a Triton
#: RMSNorm for Llama models but keeps HF's eager RoPE, SwiGLU and fp32 loss -> the hf-deepspeed profile (stock HF
#: element-wise work; the Triton RMSNorm is counted eager, so these rows lean slow); DeepSpeed's per-tensor ZeRO-3
#: gathers -> fsdp_unit 'tensor'; fp16 with fp32 masters priced as bf16-mixed (same A100 tensor rate).
#: ASSUMED [B]: (a) for the .rst rows, ZeRO-3 (the table names no stage; deepspeed_zero3.json @ 05525371, id
#: 19381559991: stage 3, overlap_comm, 3e8 buckets; the 34B / 70B rows cannot run under ZeRO-2 on 80 GB, and the
#: Llama3 table and the sequence-parallel doc name ZeRO-3); (b) for the Llama3 rows, batch 1 per GPU and no
#: accumulation (the 8k config of that table is not stored; xtuner's speed configs all use batch_size 1); (c) the
#: inter-node network of the 16- and 32-GPU rows (not stated): the a100-80gb preset's 8 x 200 Gb/s per node.
_XT = "XTuner ZeRO-3 speed table"
_XT_RST = "[B: ZeRO-3 assumed] " + _XT + " (benchmark.rst @4d2758ec)"
_XT_L3 = "[B: mbs 1, no GA assumed] " + _XT + " (llama3_8b README)"


def _xtuner(tag: str, name: str, model: str, n: int, seq: int, tgs: float) -> tuple:
    """One XTuner A100 row: DeepSpeed ZeRO-3 over every GPU, batch 1 per GPU, no accumulation, full recompute."""
    return (f"{tag}: {name}, {n} A100 80GB, seq {seq // 1024}k, sp 1, mbs 1, GC on, FA2", model, "A100 80GB",
            "hf-deepspeed", "bf16-mixed", n, seq, n,
            dict(dp=n, zero_stage=3, microbatch_size=1, recompute="full", fsdp_unit="tensor"), tgs, None)


SCOUT28_XTUNER = (
    _xtuner(_XT_RST, "Llama2-7B", "llama-2-7b", 8, 8192, 3028.3),
    _xtuner(_XT_RST, "Llama2-7B", "llama-2-7b", 8, 32768, 2234.2),
    _xtuner(_XT_RST, "Yi-34B-200K", MODELS_DIR + "yi-34b-200k.config.json", 32, 8192, 485.1),
    _xtuner(_XT_RST, "Llama2-70B", "llama-2-70b", 32, 8192, 216.8),
    *(_xtuner(_XT_L3, "Llama3 8B", "llama-3-8b", n, 8192, tgs) for n, tgs in ((4, 2331.3), (8, 2771.2), (16, 2127.2))),
)

SCOUTED_2026_12AB = SCOUT28_XTUNER

#: Twenty-ninth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AC): Mixture-of-Experts runs of NVIDIA
#: dgxc-benchmarking's GSW 25.05.04 release (NeMo 25.04 containers, NeMo 2.0 performance scripts), whose MoE workloads
#: the project had not read (the dgxc rows above are dense), and the MoE rows of the NeMo 25.04 DGX-GB200 performance
#: summary (whose dense rows SCOUTED_2026_12W holds). Every dgxc row: step time of iterations 11-44 as the README prints
#: it; tokens/s/GPU = seq x GBS / step / GPUs (the READMEs' own formula; e.g. DeepSeek-V3 1,024 H100: 4096 x 8192 /
#: 52.04 / 1024 = 629.7). Distributed optimizer (ZeRO-1), no activation recompute unless named, as the dense NeMo rows.
#:
#: 1. NVIDIA/dgxc-benchmarking deepseek_v3/pretraining/README.md @ 1f6d9f40e4117d7c71b726f86074ac01c29f87f5 (search id
#:    36419841962; launch.sh same commit, id 36437861880: FW_VERSION 25.04.01, GSW_VERSION 25.05.04; setup.sh id
#:    36689102252: NeMo @ 7a8f1cc7, Megatron-LM @ 7094270c). DeepSeek-V3 671B BF16, seq 4096, MBS 1, GBS 8 x GPUs,
#:    TP2 (sp), ETP1, VP1, CP1; H100: PP8 (512 GPUs) / PP16 (1,024), EP64, recompute mla_up_proj (launch.sh RM);
#:    GB200: PP4, EP32 (128) / EP64, recompute core_attn. Step times: H100 512 / 1024: 48.948 / 52.04 s; GB200
#:    128 / 256 / 512: 34.168 / 34.194 / 34.274 s (256 left out: weak scaling, the same per-GPU work as 128 and 512).
#:    NeMo's scripts/performance/llm/pretrain_deepseek_v3.py (the stored version @ 0349f235, id 3482608323; not the
#:    release's pinned commit): MegatronTokenDropCallback (expert capacity factor 1.0, padded to capacity; it requires the
#:    alltoall dispatcher) -> "+moe_capacity_factor=1.0", alltoall; pipeline layout first stage 64/PP - 1 layers, last
#:    64/PP - 2, the rest 64/PP (-> pp_layers); TE cross-entropy fusion (MB_FW); selective recompute of the modules the
#:    launcher passes.
#:    ASSUMED [B]: no MTP (NeMo 25.04's DeepSeek-V3 recipe of that era; the later recipe @ 00f65ddf turns MTP on, with the
#:    same 3 / 2 split for PP16) -> 'deepseek-v3'; fp32 Adam moments; no TP overlap (the later recipe sets
#:    tp_comm_overlap False); the script version.
#: 2. NVIDIA/dgxc-benchmarking grok1/README.md @ 1f6d9f40 (id 36123316441) and launch.sh @ 1f6d9f40 (id 36662665174;
#:    FW 25.04.00, GSW 25.05.04): Grok-1 314B as NeMo builds it (scripts/performance/llm/pretrain_grok1_314b.py, stored
#:    @ 01b83a7c, id 45526795795: MixtralConfig8x7B with 64 layers, hidden 6144, 48 heads in 8 groups, ffn 32768, 8
#:    experts top-2, the Llama 3 tokenizer -> models/grok1-314b-nemo.config.json, 316.5B parameters); performance mode:
#:    MegatronTokenDropCallback (capacity 1.0, padded), TP overlap, sp; fp8 = bf16_with_fp8_mixed (fp8-params), seq 8192,
#:    MBS 1, GBS 2 x GPUs. H100 (512): TP4 PP8 CP2 EP8 ETP1 VP8, no CUDA graphs: 15.933 s bf16, 13.433 s fp8. GB200
#:    (TP4 PP1 EP8 ETP4, CUDA graphs on per launch.sh): bf16 7.325 / 7.324 s, fp8 5.298 / 5.193 s at 128 / 512 GPUs
#:    (the README's 512-GPU "tokens per second" repeat the 256-GPU figure; the step time is used).
#: 3. NVIDIA/dgxc-benchmarking llama4/README.md @ 1f6d9f40 (id 36153601722) and launch.sh @ 1f6d9f40 (id 36438559479;
#:    FW 25.04.01, GSW 25.05.04): Llama 4 Maverick 400B (models/llama-4-maverick.config.json: HF text_config, 48 layers,
#:    MoE every second layer, 128 experts top-1 plus a shared expert; 400.7B / 17.2B active), seq 8192, MBS 1. H100 (512):
#:    TP4 EP128 ETP4 PP1, GBS 1024: bf16 4.426 s, fp8 3.855 s (fp8 with CUDA graphs, per the README and launch.sh); GB200:
#:    TP1 PP2 VP12 EP64 ETP1, GBS 1024 / 4096 at 128 / 512 GPUs: bf16 7.781 / 7.992 s, fp8 6.093 / 6.327 s (no CUDA
#:    graphs). NeMo's pretrain_llama4_e128.py (stored @ 058b3bda, id 4216933286): TE cross-entropy fusion (MB_FW), RoPE
#:    and permute fusion; the e128 recipe's dropless alltoall routing.
#:    ASSUMED [B]: no recompute, TP overlap with tp > 1 (as the NeMo rows above), the HF vocabulary (the script's null
#:    tokenizer has 200,000 words).
#: 4. NeMo Framework user guide, archive/25.04-performance-summary.html (https://docs.nvidia.com/nemo-framework/
#:    user-guide/latest/performance/archive/25.04-performance-summary.html and the performance_summary.html revision of
#:    the same table, read through the search index's stored pages), DGX-GB200, FP8 current scaling, NeMo 25.04:
#:    Mixtral-8x7B 64 GPUs, GBS 256, MBS 2, seq 4096, FSDP 0, TP1 PP1 CP1 VP1 EP8, GA 2: 19,275 tokens/s/GPU (1,598
#:    TFLOP/s: 19,275 x 8.29e10 FLOP per token); Mixtral-8x22B 256 GPUs, seq 65,536, TP2 PP4 CP8 VP14 EP8: 2,731
#:    tokens/s/GPU. The 8x22B row prints GBS 1 / MBS 64 (swapped; GA 16 does not fit either); GBS 64 / MBS 1 are the
#:    same layout's in awslabs' NeMo B200 performance doc (search id 35084922388) -> [B]. NeMo 2.0's Mixtral recipes'
#:    performance mode adds MegatronTokenDropCallback (the 8x7B recipe, id 4118987140; the 8x22B one, id 2709302336)
#:    -> capacity 1.0, padded.
#: Left out: the dgxc deepseek_v3/pretrain (Megatron-Bridge) and torchtitan READMEs (layouts without measured times),
#: the NeMo 25.07 GB200 table (two figures per row, "13783 (10717)", whose second layout is not stated for the MoE
#: rows), NeMo AutoModel's Kimi K2 row (one row; a model config to write).
_DGXC_MOE = "dgxc 25.05.04 (NeMo 25.04)"


def _dgxc_moe(tag: str, name: str, model: str, hw: str, fw: str, prec: str, n: int, seq: int, gbs: int, lay: dict,
              step_s: float) -> tuple:
    """One dgxc MoE row: tokens/s/GPU from the README's step time."""
    return (f"{tag} {_DGXC_MOE} {hw}: {name}, {n} GPUs", model, hw, fw, prec, n, seq, gbs,
            dict(zero_stage=1, microbatch_size=1, **lay), round(seq * gbs / step_s / n, 1), None)


def _dsv3_pp_layers(pp: int) -> tuple[int, ...]:
    """pretrain_deepseek_v3.py's split of the 61 layers: 64/pp - 1 first, 64/pp - 2 last, 64/pp between."""
    mid = 64 // pp
    return (mid - 1, *([mid] * (pp - 2)), mid - 2)


_DS_TAG = "[B: no MTP, token drop CF1 of the stored script, alltoall]"
_DS_H100 = dict(tp=2, sp=True, ep=64, etp=1, recompute="selective", recompute_modules=("mla_up_proj",))
_DS_GB200 = dict(tp=2, sp=True, pp=4, pp_layers=_dsv3_pp_layers(4), etp=1, recompute="selective",
                 recompute_modules=("core_attn",))
SCOUT29_DGXC_DSV3 = (
    _dgxc_moe(_DS_TAG, "DeepSeek-V3 BF16 TP2 PP8 EP64, recompute mla_up_proj", "deepseek-v3", "H100-SXM", MB_FW,
              "bf16-mixed+moe_capacity_factor=1.0", 512, 4096, 4096,
              dict(_DS_H100, pp=8, pp_layers=_dsv3_pp_layers(8)), 48.948),
    _dgxc_moe(_DS_TAG, "DeepSeek-V3 BF16 TP2 PP16 EP64, recompute mla_up_proj", "deepseek-v3", "H100-SXM", MB_FW,
              "bf16-mixed+moe_capacity_factor=1.0", 1024, 4096, 8192,
              dict(_DS_H100, pp=16, pp_layers=_dsv3_pp_layers(16)), 52.04),
    *(_dgxc_moe(_DS_TAG, f"DeepSeek-V3 BF16 TP2 PP4 EP{ep}, recompute core_attn", "deepseek-v3", "GB200", MB_FW,
                "bf16-mixed+moe_capacity_factor=1.0", n, 4096, 8 * n, dict(_DS_GB200, ep=ep), step)
      for n, ep, step in ((128, 32, 34.168), (512, 64, 34.274))),
)

_GROK = MODELS_DIR + "grok1-314b-nemo.config.json"
_GROK_TAG = "[B: recompute none assumed; token drop CF1 of the stored script]"
SCOUT29_DGXC_GROK = (
    *(_dgxc_moe(_GROK_TAG, f"Grok-1 314B {label} TP4 PP8 CP2 VP8 EP8", _GROK, "H100-SXM", "megatron",
                prec + "+moe_capacity_factor=1.0", 512, 8192, 1024,
                dict(tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=8, cp=2, ep=8, etp=1),
                step)
      for label, prec, step in (("BF16", "bf16-mixed", 15.933), ("FP8", FP8_CS, 13.433))),
    *(_dgxc_moe(_GROK_TAG, f"Grok-1 314B {label} TP4 EP8 ETP4, CUDA graphs", _GROK, "GB200", "megatron",
                prec + "+moe_capacity_factor=1.0", n, 8192, 2 * n, dict(tp=4, sp=True, tp_overlap=True, ep=8, etp=4),
                step)
      for label, prec, n, step in (("BF16", "bf16-mixed", 128, 7.325), ("BF16", "bf16-mixed", 512, 7.324),
                                   ("FP8", FP8_CS, 128, 5.298), ("FP8", FP8_CS, 512, 5.193))),
)

_MAV = MODELS_DIR + "llama-4-maverick.config.json"
_MAV_TAG = "[B: recompute none, TP overlap assumed]"
SCOUT29_DGXC_MAVERICK = (
    *(_dgxc_moe(_MAV_TAG, f"Llama 4 Maverick {label} TP4 EP128 ETP4", _MAV, "H100-SXM", MB_FW, prec, 512, 8192, 1024,
                dict(tp=4, sp=True, tp_overlap=True, ep=128, etp=4), step)
      for label, prec, step in (("BF16", "bf16-mixed", 4.426), ("FP8 (CUDA graphs)", FP8_CS, 3.855))),
    *(_dgxc_moe(_MAV_TAG, f"Llama 4 Maverick {label} PP2 VP12 EP64", _MAV, "GB200", MB_FW, prec, n, 8192, 8 * n,
                dict(pp=2, schedule="interleaved", virtual_stages=12, ep=64, etp=1), step)
      for label, prec, n, step in (("BF16", "bf16-mixed", 128, 7.781), ("BF16", "bf16-mixed", 512, 7.992),
                                   ("FP8", FP8_CS, 128, 6.093), ("FP8", FP8_CS, 512, 6.327))),
)

SCOUT29_NEMO2504_MOE = (
    ("[A] NeMo 25.04 GB200: Mixtral-8x7B FP8-CS EP8 MBS2, token drop CF1, 64 GPUs", "mixtral-8x7b", "GB200", _NEMO2,
     _FP8CS + "+moe_capacity_factor=1.0", 64, 4096, 256, dict(ep=8, zero_stage=1, microbatch_size=2), 19275, None),
    ("[B: GBS 64 / MBS 1 (the page prints them swapped), tp overlap assumed] NeMo 25.04 GB200: Mixtral-8x22B FP8-CS "
     "seq 64k TP2 PP4 CP8 VP14 EP8, token drop CF1, 256 GPUs", "mixtral-8x22b", "GB200", _NEMO2,
     _FP8CS + "+moe_capacity_factor=1.0", 256, 65536, 64, dict(_mb_interleaved(2, 4, 8, 14), ep=8), 2731, None),
)

SCOUTED_2026_12AC = SCOUT29_DGXC_DSV3 + SCOUT29_DGXC_GROK + SCOUT29_DGXC_MAVERICK + SCOUT29_NEMO2504_MOE

#: Thirtieth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AD): Megatron-Core MoE layout sweeps on H800 by
#: XTuner's authors (jayhenry), run with Alibaba's Pai-Megatron-Patch (Megatron-Core + Transformer Engine) on Alibaba
#: PAI-DLC H800 nodes. No torchtitan MoE source with a whole layout and a measured rate was found beyond the rows already
#: held (the PyTorch / Nebius DeepSeek-V3 B200 blog, 651 / 859 / 918 tokens/s on 256 B200, gives no layout in its stored
#: text; the dgxc torchtitan DeepSeek-V3 README gives layouts but no rates; torchtitan#1789's DeepSeek-V3 16B H100 log
#: is stored without its command), so this pass holds Megatron rows on a chip the held-out set had little of.
#:
#: 1. InternLM/xtuner docs/zh_cn/benchmark/megatron_moe_benchmark.md @ bfafd26e5fdda788200b0862e712a698b2882658 (search
#:    id 840638476), "Megatron MoE训练benchmark及调优指南": Qwen3-235B-A22B on 256 H800 ("H800 256卡"), Pai-Megatron-Patch
#:    @ 2b201af0 with its pai-megatron-patch:25.04 image, seq 4096; the Qwen3 example script's settings plus: recompute
#:    "select" = --recompute-granularity selective --recompute-modules moe_act layernorm, "moe" = --recompute-modules moe
#:    layernorm, "full" = full recompute of every layer; sequence parallel whenever TP > 1; MBS 1 unless named;
#:    --moe-router-force-load-balancing (random router logits -> moe_routing 'uniform', the planner default; dropless);
#:    no CUDA graphs; TE cross-entropy fusion (-> MB_FW); --moe-permute-fusion; distributed optimizer ("Zero1是必选项").
#:    The tables print TimePerIter and Tokens/GPU/Second (= 4096 x GBS / step / 256, e.g. 4096 x 4096 / 42.537 / 256 =
#:    1,540.7). Pipeline split: "the first and the last stage hold one layer fewer" (94 layers): PP32 -> (2, 3 x 30, 2)
#:    with VPP3 one layer per chunk (the script's --num-layers-per-virtual-pipeline-stage), PP8 -> (11, 12 x 6, 11).
#:    Rows (config, GBS, step s, tokens/s/GPU):
#:      tp1 ep8 pp32 vpp3 mbs4 full       4096  42.537  1540.68    tp1 ep8 pp32 vpp3 mbs8 full   8192  86.186  1520.8
#:      tp2 ep8 pp32 vpp3 mbs4 full       4096  43.495  1506.76    tp2 ep8 pp32 mbs4 full (1F1B) 8192  92.652  1414.68
#:      tp2 ep8 pp32 vpp3 mbs1 select     2048  22.42   1461.56    tp1 ep8 pp32 vpp3 mbs1 moe    2048  22.946  1428.04
#:      tp4 ep8 pp8 vpp4 mbs1 (no recompute) 2048  35.481  923.53
#:      tp2 ep32 pp8 vpp4 select          2048  35.392  925.87     tp2 ep32 deepep pp8 vpp4 select 2048 25.73 1273.54
#:      tp2 ep8 pp8 select (1F1B)         2048  27.555  1189.17    same + zero / tp overlap       2048  29.276 1119.26
#:      tp4 ep8 deepep pp8 vpp4, capacity factor 1 (no forced balancing) 2048  50.81  644.92
#:    Left out: the "zero overlap" row (29.66 s: the same layout for the planner, overlap_grad_reduce is its default) and
#:    capacity factors 2 / 3 / 5 (learned routing's imbalance on real data, not stated).
#:    ASSUMED [B]: (a) ETP 1 (the doc names none; the companion Qwen3-30B issue below states "expert tp=1"); (b) no TP
#:    communication overlap except in the row that adds it (the doc's overlap table adds "zero/tp overlap" to a baseline
#:    although the stored example script turns --tp-comm-overlap on with TP > 1); (c) the network: PAI Lingjun H800
#:    nodes' RDMA is not stated, the h800 preset's 8 x 400 Gb/s per node is kept; (d) for the capacity-1 row, tokens
#:    dropped without padding (no --moe-pad-expert-input-to-capacity named) -> moe_capacity_factor 1.0.
#: 2. alibaba/Pai-Megatron-Patch issue #643 (jayhenry, 2025-08-08, "训练Qwen3-30B-A3B MoE模型速度偏慢"): Qwen3-30B-A3B on 16
#:    H800, same commit and image, seq 8192, MBS 1, expert TP 1, no recompute (the script's --recompute-modules moe
#:    removed), --moe-expert-capacity-factor 1.0 (token drop), no CUDA graphs: tp1 pp2 ep8 GBS 128 10.361 s (6,325
#:    tokens/s/GPU), tp1 pp4 ep4 GBS 256 20.992 s (6,244). ASSUMED [B]: distributed optimizer, no VPP (none named),
#:    bf16, the example script's fused cross-entropy (-> MB_FW).
_XT_MOE = "XTuner Megatron MoE benchmark (Pai-Megatron-Patch @2b201af) H800"
_Q235_TAG = "[B: ETP1, no TP overlap, preset network assumed]"


def _q235(name: str, gbs: int, step_s: float, *, tp: int, ep: int, pp: int, vpp: int | None, mbs: int = 1,
          recompute: str = "none", modules: tuple[str, ...] | None = None, deepep: bool = False,
          tp_overlap: bool = False, prec: str = "bf16-mixed", tag: str = _Q235_TAG) -> tuple:
    """One Qwen3-235B-A22B row of the XTuner doc: 256 H800, seq 4096, ZeRO-1, force-balanced dropless routing."""
    lay = dict(tp=tp, pp=pp, pp_layers=balanced_split(94, pp),  # the first and last stage one layer fewer
               ep=ep, etp=1, zero_stage=1, microbatch_size=mbs,
               recompute=recompute)
    if tp > 1:
        lay.update(sp=True, tp_overlap=tp_overlap)
    if vpp:
        lay.update(schedule="interleaved", virtual_stages=vpp)
    if modules:
        lay.update(recompute_modules=modules)
    if deepep:
        lay.update(moe_dispatcher="deepep")
    return (f"{tag} {_XT_MOE}: Qwen3-235B-A22B {name}, 256 GPUs", "qwen3-235b-a22b", "H800", MB_FW, prec, 256, 4096,
            gbs, lay, round(4096 * gbs / step_s / 256, 1), None)


_SEL = ("moe_act", "layernorm")
SCOUT30_XTUNER_MEGATRON_MOE = (
    _q235("tp1 ep8 pp32 vpp3 mbs4, full recompute, GBS 4096", 4096, 42.537, tp=1, ep=8, pp=32, vpp=3, mbs=4,
          recompute="full"),
    _q235("tp1 ep8 pp32 vpp3 mbs8, full recompute, GBS 8192", 8192, 86.186, tp=1, ep=8, pp=32, vpp=3, mbs=8,
          recompute="full"),
    _q235("tp2 ep8 pp32 vpp3 mbs4, full recompute, GBS 4096", 4096, 43.495, tp=2, ep=8, pp=32, vpp=3, mbs=4,
          recompute="full"),
    _q235("tp2 ep8 pp32 (1F1B) mbs4, full recompute, GBS 8192", 8192, 92.652, tp=2, ep=8, pp=32, vpp=None, mbs=4,
          recompute="full"),
    _q235("tp2 ep8 pp32 vpp3 mbs1, recompute moe_act+layernorm", 2048, 22.42, tp=2, ep=8, pp=32, vpp=3,
          recompute="selective", modules=_SEL),
    _q235("tp1 ep8 pp32 vpp3 mbs1, recompute moe+layernorm", 2048, 22.946, tp=1, ep=8, pp=32, vpp=3,
          recompute="selective", modules=("moe", "layernorm")),
    _q235("tp4 ep8 pp8 vpp4 mbs1, no recompute", 2048, 35.481, tp=4, ep=8, pp=8, vpp=4),
    _q235("tp2 ep32 pp8 vpp4 mbs1, recompute moe_act+layernorm", 2048, 35.392, tp=2, ep=32, pp=8, vpp=4,
          recompute="selective", modules=_SEL),
    _q235("tp2 ep32 DeepEP pp8 vpp4 mbs1, recompute moe_act+layernorm", 2048, 25.73, tp=2, ep=32, pp=8, vpp=4,
          recompute="selective", modules=_SEL, deepep=True),
    _q235("tp2 ep8 pp8 (1F1B) mbs1, recompute moe_act+layernorm", 2048, 27.555, tp=2, ep=8, pp=8, vpp=None,
          recompute="selective", modules=_SEL),
    _q235("tp2 ep8 pp8 (1F1B) mbs1, recompute moe_act+layernorm, TP overlap", 2048, 29.276, tp=2, ep=8, pp=8,
          vpp=None, recompute="selective", modules=_SEL, tp_overlap=True,
          tag="[B: ETP1, preset network assumed]"),
    _q235("tp4 ep8 DeepEP pp8 vpp4 mbs1, capacity factor 1 (learned routing, dropped)", 2048, 50.81, tp=4, ep=8, pp=8,
          vpp=4, deepep=True, prec="bf16-mixed+moe_capacity_factor=1.0",
          tag="[B: ETP1, no TP overlap, preset network, drop without padding assumed]"),
)

_Q30_TAG = "[B: ZeRO-1, no VPP assumed] Pai-Megatron-Patch #643 H800"
SCOUT30_PAI_QWEN3_30B = tuple(
    (f"{_Q30_TAG}: Qwen3-30B-A3B tp1 pp{pp} ep{ep} mbs1, no recompute, capacity factor 1, seq 8192, GBS {gbs}, 16 GPUs",
     "qwen3-30b-a3b", "H800", MB_FW, "bf16-mixed+moe_capacity_factor=1.0", 16, 8192, gbs,
     dict(pp=pp, ep=ep, etp=1, zero_stage=1, microbatch_size=1, recompute="none"), round(8192 * gbs / step / 16, 1),
     None)
    for pp, ep, gbs, step in ((2, 8, 128, 10.361), (4, 4, 256, 20.992)))

SCOUTED_2026_12AD = SCOUT30_XTUNER_MEGATRON_MOE + SCOUT30_PAI_QWEN3_30B

#: Thirty-first scouting pass (2026-12, never fitted on; SCOUTED_2026_12AE): the Apertus technical report (Swiss AI
#: Initiative, "Apertus: Democratizing Open and Compliant LLMs for Global Language Environments", arXiv 2509.14233,
#: Sep 2025), trained with swiss-ai/Megatron-LM (Megatron-Core + Transformer Engine, NGC PyTorch 25.01 / 25.03) on CSCS
#: Alps "Clariden": GH200 96 GB, four per node, HPE Slingshot-11 at 200 Gb/s per GPU (the gh200 preset: 4 per node,
#: 25 GB/s scale-out). The report's text was read through a stored transcription of it (viktor-shcherb/msc_thesis
#: references/2025-09-apertus-open-compliant-llms/sections/ @ d8817a6820bcae602b820efdcab2cdf4bb5ee9ca:
#: 02a_model-architecture.md, 02e_long-context.md, 06_infrastructure-scaling-efficiency.md), its launch scripts from
#: swiss-ai/pretrain-code (the report's footnote 5).
#:
#: 1. Sec. 6.3.6 (p. 56): strong / weak scaling of Apertus 70B at GBS 16.8M tokens (seq 4096), "ultimately 80% strong
#:    scaling parallel efficiency at 4096 GPUs. The performance at this scale is 723 tokens per second per GPU".
#:    Layout: swiss-ai/pretrain-code pretraining/submit_apertus_70b.sh @ dba94a7b6e914170e96f0edba210975b765d73ac (1,024
#:    nodes): TP4 (--sequence-parallel) PP8, --num-layers-per-virtual-pipeline-stage 2 (80 / 8 / 2 = 5 virtual
#:    stages; Sec. 6.3.4: scaling to 1,024 nodes took "increasing virtual pipelining"), CP1, MBS 1, GBS 4096 (after
#:    --rampup-batch-size 2048 -> 4096), --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather,
#:    --main-grads-dtype fp32 (-> 'bf16-mixed-fp32-grads'), --cross-entropy-loss-fusion (-> MB_FW), bf16, no recompute
#:    and no --tp-comm-overlap named; vboost on (-C nvidia_vboost_enabled).
#: 2. Table 5 (p. 15), the long-context extension stages: "Parallelism (TP/PP/DP/CP)" and "Avg. Throughput
#:    (Tokens/GPU/s)", every stage on 2,048 GPUs (TP x PP x DP x CP), GBS 8M tokens (8B) / 16M (70B):
#:      8B:  8k 2/1/1024/1 ~6150, 16k 4/1/512/1 ~4300, 32k 4/1/256/2 ~3700, 64k 4/1/128/4 ~1800
#:      70B: 8k 4/8/64/1 ~780,  16k 4/8/32/2 ~710,   32k 4/8/16/4 ~480,   64k 4/8/8/8 ~160
#:    Per-stage scripts: swiss-ai/pretrain-code long_context/training_scripts/{8B,70B}/*.sh (stored versions @
#:    142c68de / 531cc8be; read: 70B 8k, 32k, 64k and 8B 8k, 64k): MBS 1, sequence parallel, distributed optimizer with
#:    both overlaps, fp32 main grads, TE cross-entropy fusion, the 70B with --num-layers-per-virtual-pipeline-stage 2,
#:    no recompute, no TP overlap (the 70B / 8B 16k and 8B 32k scripts not read: the same flags assumed). The scripts
#:    read agree with the table's TP / PP / CP; two run other node counts than the table (8B 8k: 256 nodes, DP 512;
#:    70B 64k: 256 nodes, DP 4): the table's DP is used and those rows are [B].
#: Model: Apertus 8B / 70B (Table 1: 32 / 80 layers, dim 4096 / 8192, MLP 21504 / 43008, 32 / 64 heads in 8 KV
#: groups, vocabulary 131,072, untied, QK-norm, no biases) use xIELU, a non-gated 2-matrix MLP of 2.625 x the
#: Llama 3 ffn, which hf_config refuses (ApertusForCausalLM). Priced with Llama-style configs of the same shapes:
#: a gated MLP of 2/3 of the width (14336 / 28672) has the same parameters and matmul FLOPs
#: (3 x h x 28672 = 2 x h x 43008): models/swissai-llama3-8b.config.json (8,053,329,920 parameters) and
#: models/apertus-70b-llama-style.config.json (70,599,843,840; QK-norm's 20,480 and xIELU's 160 scalars left out).
#: Not priced: xIELU's element-wise cost against SwiGLU's, QK-norm, cross-document attention masks (--reset-attention-
#: mask up to 32k; off at 64k), the Goldfish loss mask, AdEMAMix's third moment (memory only; no memory is compared),
#: vboost. The throughputs are averages over each stage ("~"), checkpointing and garbage-collection dips included.
_APERTUS = "Apertus report (swiss-ai Megatron-LM, Alps GH200)"
_AP70 = MODELS_DIR + "apertus-70b-llama-style.config.json"
_AP8 = MODELS_DIR + "swissai-llama3-8b.config.json"


def _apertus(tag: str, size: str, model: str, n: int, seq: int, gbs: int, tps: float, *, tp: int, pp: int = 1,
             cp: int = 1) -> tuple:
    """One Apertus row on ``n`` GH200: mbs 1, distributed optimizer, sp, the 70B interleaved with 2 layers a chunk."""
    lay = dict(tp=tp, sp=True, zero_stage=1, microbatch_size=1, recompute="none")
    if pp > 1:
        lay.update(pp=pp, schedule="interleaved", virtual_stages=80 // pp // 2)
    if cp > 1:
        lay.update(cp=cp)
    dp = n // (tp * pp * cp)
    return (f"{tag} {_APERTUS}: Apertus {size} (xIELU priced as a Llama-style SwiGLU config of the same shapes) "
            f"TP{tp} PP{pp}{' VP5' if pp > 1 else ''} CP{cp} DP{dp}, seq {seq:,}, GBS {gbs}, {n:,} GPUs", model,
            "GH200", MB_FW, "bf16-mixed-fp32-grads", n, seq, gbs, lay, tps, None)


_AP_NOT_READ = "[B: the stage script not read; the other stages' flags]"
SCOUT31_APERTUS = (
    _apertus("[A]", "70B pretraining (Sec. 6.3.6 scaling)", _AP70, 4096, 4096, 4096, 723, tp=4, pp=8),
    _apertus("[B: the table's DP 1024; the stored 8k script runs 256 nodes]", "8B long-context 8k", _AP8, 2048, 8192,
             1024, 6150, tp=2),
    _apertus(_AP_NOT_READ, "8B long-context 16k", _AP8, 2048, 16384, 512, 4300, tp=4),
    _apertus(_AP_NOT_READ, "8B long-context 32k", _AP8, 2048, 32768, 256, 3700, tp=4, cp=2),
    _apertus("[A]", "8B long-context 64k", _AP8, 2048, 65536, 128, 1800, tp=4, cp=4),
    _apertus("[A]", "70B long-context 8k", _AP70, 2048, 8192, 2048, 780, tp=4, pp=8),
    _apertus(_AP_NOT_READ, "70B long-context 16k", _AP70, 2048, 16384, 1024, 710, tp=4, pp=8, cp=2),
    _apertus("[A]", "70B long-context 32k", _AP70, 2048, 32768, 512, 480, tp=4, pp=8, cp=4),
    _apertus("[B: the table's DP 8; the stored 64k script runs 256 nodes]", "70B long-context 64k", _AP70, 2048, 65536,
             256, 160, tp=4, pp=8, cp=8),
)

SCOUTED_2026_12AE = SCOUT31_APERTUS

#: Thirty-second scouting pass (2026-12, never fitted on; SCOUTED_2026_12AF): GPT-OSS training runs with their layout,
#: to see what the GPT-OSS over-prediction (1.27-1.67x on every Megatron-Bridge 25.11 row, 1.41-1.44x on NeMo
#: AutoModel's H100 rows, -4% on MLPerf v6.0's Cisco B300 GPT-OSS-20B run) depends on.
#:
#: 1. NVIDIA-NeMo/Megatron-Bridge docs/performance-summary*.md, "GPT OSS 120B" pre-training tables of three later
#:    releases (BF16, 64 GPUs, GBS 1280, seq 4096, force-balanced and dropless: the pages' MoE note):
#:      26.02: docs/performance-summary-archive.md @ 0a25f911b2ed6c6905a539504fdb8e5b40e3438b (search id 52388310688)
#:        GB300 EP64 MBS4 19412, GB200 EP64 MBS4 15784, B300 EP64 MBS4 8359, B200 EP64 MBS4 8047, H100 PP4 EP8 MBS1 5993
#:      26.04: docs/performance-summary.md (search id 51905015924)
#:        GB300 EP64 MBS4 19275, GB200 EP64 MBS4 15938, B300 EP8 MBS4 15114, B200 EP8 MBS4 13045, H100 PP4 EP8 MBS1 5810
#:      26.06: docs/performance-summary.md (search id 56183476306)
#:        GB300 EP64 MBS4 20800, GB200 EP64 MBS4 17728, H100 PP4 EP8 MBS1 5824
#:    (tokens/s/GPU as printed; TP = CP = 1, no VP, no FSDP). Recipe details not in the tables, from the stored
#:    versions of scripts/performance/configs/gpt_oss/gpt_oss_workload_base_configs.py (V2 = GBS 1280):
#:      a) search id 69749324871 (V2 = V1 + GBS 1280: B300 / B200 at EP64, as the 26.02 table): GB300 and B300 no
#:         recompute, TE CUDA graphs of attn / moe_router / moe_preprocess; GB200, B200 and H100 recompute_modules
#:         layernorm + moe_act; H100 PP4 EP8 MBS1 -> the 26.02 rows;
#:      b) search id 52038606814 (B300 / B200 V2 at EP8 with the HybridEP flex dispatcher, GB200 V2 HybridEP +
#:         moe_a2a_overlap, as the 26.04 table's EP8 B-rows) -> the 26.04 rows;
#:      c) search id 56362006345 @ 07eea52d (the newest stored: GB200 V2 moe_a2a_overlap without HybridEP, B200 EP8
#:         without HybridEP, B300 EP8 HybridEP) -> the 26.06 rows.
#:    Which commit each release ran is NOT known (the layout columns agree with the version named), hence [B] on the
#:    dispatcher / overlap / recompute of every row; HybridEP priced as DeepEP (as the project's MB DeepSeek-V3 rows).
#:    Common: scripts/performance/configs/gpt_oss/gpt_oss_llm_pretrain.py (grad_reduce_in_fp32 False -> 'bf16-mixed',
#:    moe_router_force_load_balancing True, router fusion), the recipe's distributed optimizer (ZeRO-1), TE
#:    cross-entropy (MB_FW). Attention: the GPT-OSS provider (src/megatron/bridge/models/gpt_oss/gpt_oss_provider.py:
#:    softmax_type 'learnable', window (128, 0) every other layer) keeps attention_backend 'auto' -> Transformer
#:    Engine's fused (cuDNN) sink attention on TE >= 2.8, the containers' (the provider falls back to Megatron-Core's
#:    unfused "local" attention below TE 2.8); the tables do not state the backend.
#: 2. MLPerf Training v6.0, NVIDIA, GPT-OSS-20B (Richardyu114/training_results_v6.0 @
#:    eabf23a07b2a0c60a289ff871dc3a46fff0d0421, NeMo 26.04 container, closed division): the result logs'
#:    block-level train_step_time (lineno 286) of the second training block, GBS checked against samples_count:
#:      tyche-hsg 8 GB200   config_GB200_2x4x2xtp1pp1cp1ep1_mxfp8      GBS 16  0.43854 s (result_0, block 2)
#:      theia 8 GB300       config_GB300_2x4x3xtp1pp1cp1ep1_mxfp8      GBS 24  0.49330 s (result_0, block 2)
#:      tyche-hsg 72 GB200  config_GB200_18x4x1xtp1pp1cp2ep4_mxfp8     GBS 36  0.16644 s (result_0, block 2)
#:      theia 72 GB300      config_GB300_18x4x1xtp1pp1cp2ep4_mxfp8     GBS 36  0.16062 s (result_0, block 2; the log's
#:                          submission_platform says "18xNVIDIA GB200", the system file "1x NVIDIA GB300 NVL72")
#:      theia 512 GB300     config_GB300_128x4x1xtp2pp1cp4ep8 (stored) GBS 64  0.09034 s (result_0, block 2)
#:    (configs named by the READMEs; GBS = MINIBS x GPUs / (TP x PP x CP), as conf/gpt_oss.yaml computes it). Stored
#:    config: MICRO_BATCH_SIZE 1, TP 2 with SEQ_PARALLEL, CP 4, EP 8, HybridEP inside the NVLink domain, CUDA graphs,
#:    CuteDSL grouped MLP. conf/gpt_oss.yaml: seq 8192, 24 layers, rope, flex dispatcher / HybridEP, learned routing
#:    without force balancing (load_balancing_type none), cp_comm_type 'a2a', no recompute unless set, distributed
#:    optimizer, TE cross-entropy (MB_FW), fp8 param gather off (-> 'fp8-mixed', MXFP8 from the config names).
#:    config_common*.sh are not stored: MBS of the 8-GPU rows (2 on GB200, 3 on GB300) from Megatron-Bridge's
#:    GPT_OSS_20B_PRETRAIN_CONFIG_GB200_FP8_MX_V1 / _GB300_FP8_MX_V1 (GBS 16 / 24 on 8 GPUs, as these runs), MBS 1 of
#:    the 72-GPU rows from ..._GB200_FP8_MX_V2 (72 GPUs, CP2, EP4, MBS1, GBS 36). Model: the MLPerf GPT-OSS-20B
#:    uses the Llama 3 tokenizer (Megatron-Bridge's MLPerf-style GPT-OSS-20B perf config sets vocab_size 128256,
#:    position rope) -> models/gpt-oss-20b-vocab128256.config.json, the gpt-oss-20b preset with that vocabulary.
#:    [B] for all five: learned routing priced as balanced; the CP rows' a2a (head all-to-all) context parallelism
#:    priced as the planner's ring; CUDA graphs, paged stashing and CuteDSL kernels not priced.
_MB_OSS = "[B: recipe of the workload-config version whose EP matches the table; the release's commit not matched]"
_OSS_SEL = dict(recompute="selective", recompute_modules=("layernorm", "moe_act"))


def _mb_oss(rel: str, system: str, hw: str, label: str, fields: dict, tps: float) -> tuple:
    """One Megatron-Bridge GPT-OSS-120B row: BF16, 64 GPUs, GBS 1280, seq 4096, ZeRO-1, forced balance."""
    return (f"{_MB_OSS} MB {rel} {system}: GPT-OSS-120B {label}, GBS 1280, 64 GPUs", "gpt-oss-120b", hw, MB_FW,
            "bf16-mixed", 64, 4096, 1280, dict(etp=1, zero_stage=1, **fields), tps, None)


_EP64 = dict(ep=64, microbatch_size=4)
_EP8 = dict(ep=8, microbatch_size=4)
_H100_OSS = dict(pp=4, ep=8, microbatch_size=1, **_OSS_SEL)
_DEEPEP = dict(moe_dispatcher="deepep")
SCOUT32_MB_GPT_OSS = (
    # ---- 26.02 (workload configs a) ----
    _mb_oss("26.02", "GB300", "GB300", "EP64 MBS4", _EP64, 19412),
    _mb_oss("26.02", "GB200", "GB200", "EP64 MBS4, recompute norm+moe_act", dict(_EP64, **_OSS_SEL), 15784),
    _mb_oss("26.02", "B300", "B300", "EP64 MBS4", _EP64, 8359),
    _mb_oss("26.02", "B200", "B200", "EP64 MBS4, recompute norm+moe_act", dict(_EP64, **_OSS_SEL), 8047),
    _mb_oss("26.02", "H100", _H100_MB, "PP4 EP8 MBS1, recompute norm+moe_act", _H100_OSS, 5993),
    # ---- 26.04 (workload configs b) ----
    _mb_oss("26.04", "GB300", "GB300", "EP64 MBS4", _EP64, 19275),
    _mb_oss("26.04", "GB200", "GB200", "EP64 HybridEP MBS4, a2a overlap, recompute norm+moe_act",
            dict(_EP64, moe_a2a_overlap=True, **_DEEPEP, **_OSS_SEL), 15938),
    _mb_oss("26.04", "B300", "B300", "EP8 HybridEP MBS4", dict(_EP8, **_DEEPEP), 15114),
    _mb_oss("26.04", "B200", "B200", "EP8 HybridEP MBS4, recompute norm+moe_act", dict(_EP8, **_DEEPEP, **_OSS_SEL),
            13045),
    _mb_oss("26.04", "H100", _H100_MB, "PP4 EP8 MBS1, recompute norm+moe_act", _H100_OSS, 5810),
    # ---- 26.06 (workload configs c) ----
    _mb_oss("26.06", "GB300", "GB300", "EP64 MBS4", _EP64, 20800),
    _mb_oss("26.06", "GB200", "GB200", "EP64 MBS4, a2a overlap, recompute norm+moe_act",
            dict(_EP64, moe_a2a_overlap=True, **_OSS_SEL), 17728),
    _mb_oss("26.06", "H100", _H100_MB, "PP4 EP8 MBS1, recompute norm+moe_act", _H100_OSS, 5824),
)

_OSS20_MLPERF = MODELS_DIR + "gpt-oss-20b-vocab128256.config.json"
#: the MLPerf GPT-OSS-20B MXFP8 recipes set use_transformer_engine_op_fuser (Megatron-Bridge scripts/performance/configs/
#: gpt_oss/gpt_oss_llm_pretrain.py, every fp8_mx variant), so Megatron-Core's TEGroupedMLP runs FC1, activation and FC2
#: (biases included) as one Transformer Engine op sequence and returns before the eager per-expert bias (_apply_bias,
#: megatron/core/transformer/moe/experts.py): the megatron profile's 'expert_bias' eager op is not paid
_OP_FUSER = "+eager_ops=[]"


def _v60_oss(tag: str, system: str, hw: str, label: str, n: int, gbs: int, step_s: float, fields: dict) -> tuple:
    """One MLPerf v6.0 NVIDIA GPT-OSS-20B row: MXFP8, seq 8192, ZeRO-1, HybridEP as DeepEP where ep > 1."""
    return (f"{tag} MLPerf v6.0 NVIDIA {system}: GPT-OSS-20B (vocab 128256) MXFP8 {label}, GBS {gbs}, {n} GPUs",
            _OSS20_MLPERF, hw, MB_FW + _OP_FUSER, "fp8-mixed", n, 8192, gbs, dict(zero_stage=1, recompute="none", **fields),
            gbs * 8192 / step_s / n, None)


_V60_OSS_B8 = "[B: balanced routing, MBS from the MB workload config]"
_V60_OSS_BCP = "[B: balanced routing, a2a CP priced as ring, MBS 1 from the MB workload config]"
SCOUT32_V60_GPT_OSS_20B = (
    _v60_oss(_V60_OSS_B8, "8 GB200 (tyche-hsg)", "GB200", "DP8 EP1 MBS2", 8, 16, 0.43854, dict(microbatch_size=2)),
    _v60_oss(_V60_OSS_B8, "8 GB300 (theia)", "GB300", "DP8 EP1 MBS3", 8, 24, 0.49330, dict(microbatch_size=3)),
    _v60_oss(_V60_OSS_BCP, "72 GB200 (tyche-hsg)", "GB200", "CP2 EP4 HybridEP MBS1", 72, 36, 0.16644,
             dict(cp=2, ep=4, etp=1, moe_dispatcher="deepep", microbatch_size=1)),
    _v60_oss(_V60_OSS_BCP, "72 GB300 (theia)", "GB300", "CP2 EP4 HybridEP MBS1", 72, 36, 0.16062,
             dict(cp=2, ep=4, etp=1, moe_dispatcher="deepep", microbatch_size=1)),
    _v60_oss("[B: balanced routing, a2a CP priced as ring]", "512 GB300 (theia)", "GB300",
             "TP2 CP4 EP8 HybridEP MBS1", 512, 64, 0.09034,
             dict(tp=2, sp=True, cp=4, ep=8, etp=1, moe_dispatcher="deepep", microbatch_size=1)),
)

SCOUTED_2026_12AF = SCOUT32_MB_GPT_OSS + SCOUT32_V60_GPT_OSS_20B

#: Thirty-third scouting pass (2026-12, never fitted on; SCOUTED_2026_12AG): the Hugging Face / nanotron stack and other
#: dense Llama-style runs of 1B-80B with their layout and a measured rate. Most Hugging Face sources give no layout with
#: a rate (see the section's prose); these four do.
#:
#: 1. The Smol Training Playbook (Hugging Face, Oct. 2025), "Setting up our ablation framework", read through a stored
#:    copy of the page (search-index file id 48402540377): the 1B ablation baseline "following Llama3.2 1B architecture
#:    ... about 1.5 days to train on a node of 8xH100s using this nanotron config (42k tokens per second per GPU)", and
#:    the config's sections quoted there: hidden 2048, 16 layers, 32 heads / 8 KV heads, intermediate 8192, tied
#:    embeddings, tokenizer HuggingFaceTB/SmolLM3-3B (vocabulary 128,256 -> the llama-3.2-1b preset), parallelism dp 8,
#:    tp 1, pp 1, micro_batch_size 3, batch_accumulation_per_replica 16, sequence_length 4096 (GBS 384 x 4096 = 1.57M
#:    tokens). Check: 45B tokens / (42,000 x 8) = 1.55 days, as stated. [B]: ZeRO-0 (the config's optimizer section is
#:    not quoted with a zero_stage; the playbook's SmolLM3 run used ZeRO-0, its "Optimizing Training Throughput"
#:    section, same copy) and no activation recompute (none quoted).
#: 2. Lucie-7B (OpenLLM-France / LINAGORA; Megatron-DeepSpeed on the Jean Zay H100 partition), OpenLLM-France/
#:    Lucie-Training: assets/hugging_face/README_model.md @ 094e67c0 (the model card: Llama-3.1-style, 32 layers,
#:    hidden 4096, 32 heads / 8 KV heads, ffn 12288, vocabulary 65,024, untied, "exactly 6 706 958 336" parameters ->
#:    models/lucie-7b.config.json, which reproduces that count) and the launch scripts and training logs under
#:    chronicles/pretrain/ @ 98792a1a / e5c0098c:
#:    a) main pre-training, 1_pretraining/pretrain_lucie.slurm: 128 nodes x 4 H100 (--gres=gpu:4, "max 4 pour les
#:       noeuds H100"), TP 4, PP 4 (DP 32), MICRO_BATCH_SIZE 2, GLOBAL_BATCH_SIZE 1024 (after a ramp from 256),
#:       SEQ_LENGTH 4096, ZERO_STAGE 0, --checkpoint-activations (full recompute), --use-flash-attn-v2, bf16, no
#:       --sequence-parallel, CUDA_LAUNCH_BLOCKING=1 exported. Rate from 1_pretraining/training_logs.csv (columns
#:       training_tokens, walltime in hours; gputime = 512 x walltime): steps 101,660 -> 320,942 (all at GBS 1024,
#:       4,194,304 tokens a step): (1,305,990,135,808 - 386,254,766,080) tokens / ((418.9954 - 123.6706) h x 3600 s) /
#:       512 = 1,689.6 tokens/s/GPU. (The model card's whole-run average, 3.1T tokens in "about 550 000 GPU hours", is
#:       1,566, restarts and the batch ramp included.)
#:    b) context extension, 2_extension/context_extension.slurm: 32 nodes x 4 H100, TP 4, PP 4 (DP 8), MICRO_BATCH_SIZE
#:       4, GLOBAL_BATCH_SIZE 128, SEQ_LENGTH 32,000, ZERO_STAGE 1, --recompute-granularity full --recompute-method
#:       uniform, grad_accum_dtype fp32, flash-attn v2, CUDA_LAUNCH_BLOCKING=1. Rate from 2_extension/training_logs.csv:
#:       steps 100 -> 1,200 (4,096,000 tokens a step): 4,505,600,000 tokens / ((12.7378 - 1.0663) h x 3600 s) / 128 =
#:       837.7 tokens/s/GPU.
#:    Framework: the deepspeed profile (Megatron-DeepSpeed, as the project's MT-NLG and BloombergGPT rows); precision
#:    bf16 with fp32 gradient accumulation (the extension's ds_config says so; the main run's is assumed the same).
#:    [B] for both: the walltime column taken as training time (it is smooth across the 20-hour jobs, so restarts are
#:    likely outside it); Jean Zay's H100 inter-node network as the H100 preset's 50 GB/s per GPU (no source found: a
#:    later search of the stored IDRIS pages, model cards and repositories for the H100 partition's (gpu_p6) adapters
#:    and link speed found none).
#:    Launch blocking (added after the pass, not fitted): both scripts export CUDA_LAUNCH_BLOCKING=1. NVIDIA's CUDA
#:    Programming Guide (Asynchronous Concurrent Execution, quoted in discuss.pytorch.org/t/160924): "Programmers can
#:    globally disable asynchronicity of kernel launches for all CUDA applications running on a system by setting the
#:    CUDA_LAUNCH_BLOCKING environment variable to 1. This feature is provided for debugging purposes only and should
#:    not be used as a way to make production software run reliably." A launch then returns only when its kernel has
#:    finished, NCCL's collective kernels included, so the host issues no compute kernel while a collective runs:
#:    the data-parallel gradient reduction cannot hide behind the backward (dp_overlap 0) nor the ZeRO-1 parameter
#:    AllGather behind the next forward (param_gather_overlap False) -> framework "deepspeed+dp_overlap=0+
#:    param_gather_overlap=False" (_LUCIE_FW). The other overlap fields are already off for these layouts (no
#:    sequence parallelism or TP overlap, pp_p2p_overlap False, no ZeRO-3, no MoE). What launch blocking also costs
#:    (every launch's host latency exposed instead of hidden while the host runs ahead) has no source-given number
#:    and is not priced. Errors before -> after: main +31.0% -> +29.5%, extension +137.8% -> +137.1%.
#: 3. alibaba/Megatron-LLaMA README.md @ 46ae7dde: "train our own LLaMA-13b model on four 8xA100-80GB devices ... The
#:    global batch size is set to 2048 via gradient accumulation": Megatron-LLaMA 40.3 hours (180 model TFLOPS) for 10
#:    billion tokens -> 10e9 / (40.3 x 3600) / 32 = 2,153.7 tokens/s/GPU (DeepSpeed (HF): 49.7 h, 146 TFLOPS; not
#:    taken: its ZeRO stage, micro batch and recompute are not given). [B]: the layout of the repository's 13B
#:    example as used in alibaba/Megatron-LLaMA#16 (TP 4 with --sequence-parallel, PP 1, micro batch 4, sequence 2048,
#:    --overlapped-distributed-optimizer = ZeRO-1, no recompute; the example script itself is not stored); the
#:    README's scaling-table cluster ("4x200Gbps RDMA" per 8-GPU node = 12.5 GB/s per GPU) for these 32 GPUs; bf16.
#:    Framework: megatron-legacy (a 2023 Megatron-LM fork), as the project's Megatron-LLaMA#16 row.
SMOL_PLAYBOOK_1B = (
    ("[B: ZeRO-0, no recompute] Smol Training Playbook: 1B ablation baseline (Llama 3.2 1B shape) nanotron DP8, mbs 3 x "
     "GA 16, seq 4096, 8 H100", "llama-3.2-1b", "H100 80GB", "nanotron", "bf16-mixed", 8, 4096, 384,
     dict(dp=8, zero_stage=0, microbatch_size=3, recompute="none"), 42000.0, None),
)

_LUCIE = MODELS_DIR + "lucie-7b.config.json"
_JEAN_ZAY_H100 = "H100 80GB+scale_up_size=4+devices_per_host=4"   # 4 H100 per node (--gres=gpu:4)
_LUCIE_B = "[B: log walltime as training time, preset network]"
#: the Lucie launch scripts export CUDA_LAUNCH_BLOCKING=1: every kernel launch, NCCL's included, returns only when the
#: kernel has finished, so no collective runs beside compute (see the comment block above)
_LUCIE_FW = "deepspeed+dp_overlap=0+param_gather_overlap=False"
LUCIE_7B = (
    (f"{_LUCIE_B} Lucie-7B main pretraining (Megatron-DeepSpeed): TP4 PP4 DP32, ZeRO-0, mbs 2, GBS 1024, seq 4096, "
     "full AC, 512 H100 (Jean Zay)", _LUCIE, _JEAN_ZAY_H100, _LUCIE_FW, "bf16-mixed-fp32-grads", 512, 4096, 1024,
     dict(tp=4, sp=False, pp=4, dp=32, zero_stage=0, microbatch_size=2, recompute="full"), 1689.6, None),
    (f"{_LUCIE_B} Lucie-7B context extension (Megatron-DeepSpeed): TP4 PP4 DP8, ZeRO-1, mbs 4, GBS 128, seq 32,000, "
     "full AC, 128 H100 (Jean Zay)", _LUCIE, _JEAN_ZAY_H100, _LUCIE_FW, "bf16-mixed-fp32-grads", 128, 32000, 128,
     dict(tp=4, sp=False, pp=4, dp=8, zero_stage=1, microbatch_size=4, recompute="full"), 837.7, None),
)

MEGATRON_LLAMA_README = (
    ("[B: layout of the 13B example (issue #16), seq 2048, 12.5 GB/s per GPU] Megatron-LLaMA README: LLaMA-13B TP4 SP "
     "DP8, overlapped dist-opt, mbs 4, GBS 2048, 32 A100 80GB", "llama-2-13b",
     "A100 80GB+scale_out_bandwidth=12500000000", "megatron-legacy", "bf16-mixed", 32, 2048, 2048,
     dict(tp=4, sp=True, dp=8, zero_stage=1, microbatch_size=4, recompute="none"), 10e9 / (40.3 * 3600) / 32, None),
)

SCOUTED_2026_12AG = SMOL_PLAYBOOK_1B + LUCIE_7B + MEGATRON_LLAMA_README

#: Thirty-fourth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AH): the Lucie-Training A100 parallelism sweep
#: (OpenLLM-France / LINAGORA, Megatron-DeepSpeed on Jean Zay; the lead the thirty-third pass left untaken). Sources, all
#: in OpenLLM-France/Lucie-Training:
#: 1. chronicles/parallelism/parallelism.md @ b0f24fbc (search id 32348712736): "Each experiment is runed on A100 GPUs
#:    for ~20min", tokens/s = "samples per second * actual seq length" (2048), DP = nGPUs / (TP x PP), "TP=1, PP=1 ...
#:    Only z1 is possible", GBS 192 / 512 with the micro batch "the maximum ... that does not cause OOM and respects
#:    ... GBS % (MBS * nGPUs / PP / TP) == 0", a GBS / MBS table per GPU count and layout (TP1 PP1: MBS 3 at GBS 192,
#:    2 at GBS 512, GBS 256 with MBS 2 on 128 GPUs; TP2 PP1: 4 (3 on 128 GPUs); TP1 PP2: 4 (2 on 8 GPUs); TP2 PP2: 6 at
#:    GBS 192, 4 at GBS 512).
#: 2. chronicles/parallelism/scripts/parse_logs.py @ b0f24fbc (id 32403901892): GPUs = 8 x nodes, tokens/s =
#:    samples_per_second x 2048, the zero stage and batch from the log folders (z0 / z1, b192 / b512).
#: 3. The launch script of the 2,048-token sweep: scripts/training/pretrain_llama_multinodes.slurm (id 32257432975,
#:    version @ 14026d26; job name run-lucie7b-32nodes-tp2-pp2-z0-b512, "refaire les toutes premieres experiences avec
#:    une batch size de 512"): --gres=gpu:8 --constraint=a100, HIDDEN 4096, FFN 11008, 32 layers, 32 heads, 32 KV heads
#:    (MHA: "for lucie and for now we use MHA"), SEQ_LENGTH 2048, --swiglu --normalization rmsnorm --untie-embeddings-
#:    and-output-weights --disable-bias-linear --use-rotary-position-embeddings, --bf16 (ds_config bf16 enabled, the
#:    ZeRO stage from the job), --use-flash-attn-v2, activation_checkpoint="false" (no recompute), tokenizer
#:    OpenLLM-France/Lucie-tokenizer-v2.4-space_prefix_all, CUDA_LAUNCH_BLOCKING=1 exported. That is the Llama 2 7B
#:    shape, not Lucie-7B's final config (GQA 8, FFN 12288, vocabulary 65,024) -> the llama-2-7b preset. Vocabulary:
#:    the tokenizer's size is not stated; parallelism.md's example log line (GBS 192, 5,350 ms, "TFLOPs: 48.77") with
#:    Megatron-DeepSpeed's formula 72 B s L h^2 (1 + s/6h + V/16Lh) (no recompute, factor 3) is consistent only with 64
#:    GPUs and a padded vocabulary of about 32,100 (+-250 from the printed rounding) -> 32,000 taken [B]. (The stored
#:    1_seq4k / 2_vocab_65k scripts are the later 4,096-token / 65k-vocabulary sweeps, not these logs.)
#: 4. The rates: chronicles/parallelism/all_iters_w_dp.csv @ b0f24fbc (id 32921652504, 429,674 characters): one row per
#:    iteration (consumed_samples, iter_time, samples_per_seconds, ngpus, PP, TP, batch, stage). The column
#:    samples_per_seconds (global) of each run was transcribed into benchmarks/lucie_sweep/sps.txt (run boundaries where
#:    consumed_samples restarts; the row count of each run checked against its last consumed_samples / GBS; the 8-GPU
#:    TP2 PP2 run has no row for consumed 1,344 in the CSV). Rate = median over the run's iterations 6.. (5 dropped as
#:    warm-up; the one slow iteration every ~50, 3-80x the step time, left in) x 2048 / GPUs (benchmarks/lucie_sweep/medians.py).
#:    The pass read the first 256,000 characters of the CSV in its time box (21 runs; the 128-GPU TP2 PP2 z0 GBS-192
#:    run from 169 of its iterations). A follow-up (not fitted) read the rest, offsets 256,000-429,674: that run's
#:    other 99 iterations (268 in all; median 54.4100 samples/s, was 54.4125 from the 169), then 19 more runs, all z0:
#:    GBS 192 TP2 PP1 and TP1 PP2 on 8 GPUs, TP1 PP2 and TP2 PP2 on 64; GBS 512 TP2 PP1, TP1 PP2 and TP2 PP2 on 8 / 16
#:    / 32 / 64 / 128 GPUs. Every run's row count matches its consumed samples. The CSV holds no z1 TP2 run (the pass's
#:    note that "the z1 TP2 runs" were left unread was wrong): z1 is TP1 PP1 only. 40 runs, one row each.
#: Hardware: 8 A100 per node (--gres=gpu:8, --constraint=a100: Jean Zay's A100 partition, gpu_p5). First priced as
#:    the A100 80GB preset with its DGX network (25 GB/s per GPU) [B]; now (added after the pass, not fitted) as
#:    data/clusters/jean-zay-a100.yaml ("A100 80GB (Jean Zay)"): the BLOOM paper (arXiv 2211.05100, Sec. 3.4.1, p. 18,
#:    as quoted by stored model-card summaries, search ids 53899936766 / 54266897520) trained on 48 Jean Zay nodes of
#:    "8 NVIDIA A100 80GB GPUs" with "4 NVLink GPU-to-GPU interconnects per node and 4 Omni-Path 100 Gbps links per
#:    node for inter-node communication"; bigscience-workshop/bigscience train/tr11-176B-ml/README.md @ 00327f8c:
#:    "416 A100 80GB GPUs (52 nodes)", "4 OmniPath links", "Inter-node connect: Omni-Path Architecture (OPA)" ->
#:    4 x 100 Gb/s / 8 GPUs = 6.25 GB/s per GPU, a quarter of the preset's. [B]: that the "a100" constraint reaches
#:    these same A100 80GB nodes (Jean Zay has one A100 partition; the Lucie sources name neither memory nor network).
#: Framework: the deepspeed profile, as the thirty-third pass's Lucie-7B rows and the twenty-second pass's Polaris
#:    Megatron-DeepSpeed rows (the same Megatron-DeepSpeed fork family, DeepSpeed ZeRO and pipeline engine); precision
#:    bf16-mixed-fp32-grads as those rows (DeepSpeed's bf16 optimizer accumulates gradients in fp32) for the ZeRO-0 runs,
#:    bf16-mixed for the ZeRO-1 ones (changed 2026-12-05, not fitted): the script's ds_config sets only the stage and
#:    "bf16": {"enabled": true}, and DeepSpeed's engine.py get_data_types accumulates in the model's dtype (bf16) once
#:    ZeRO is on and in fp32 only without it (BF16_Optimizer, FrameworkProfile.zero0_bf16_optimizer). The launch script
#:    exports CUDA_LAUNCH_BLOCKING=1, so, as for the Lucie-7B rows (the comment block above: the CUDA Programming
#:    Guide's sentence and the reasoning), no collective overlaps compute: "deepspeed+dp_overlap=0+
#:    param_gather_overlap=False" (_LUCIE_FW; added after the pass, not fitted).
#: Before these two changes (preset network, plain deepspeed): median |error| 101.0%, TP1 PP1 GBS 192 on 8 / 16 /
#:    32 / 64 / 128 GPUs +11.5% / +88.1% / +244.0% / +476.4% / +706.2%; after: 69.2%, +10.1% / +61.5% / +156.8% /
#:    +241.7% / +295.1% (each change alone: 95.4% network, 95.3% launch blocking). Those figures are the pass's 21
#:    rows; over all 40 rows (the follow-up's 19 included): 73.4% before, 56.5% after (68.3% network alone, 68.9%
#:    launch blocking alone). Per row: scouted_sections.yaml.
#: [B] for all rows: vocabulary 32,000; the Jean Zay A100 network (above); the micro batch from parallelism.md's table
#:    (the script's own comment suggests other values: "PP=2,TP=2: 6, PP=1,TP=2: 2, PP=2,TP=1: 2"); where the table's
#:    micro batch breaks its own divisibility rule (at GBS 192: TP2 PP1 on 64 GPUs, TP1 PP2 on 64 and 128: MBS 4 over
#:    32 / 32 / 64 replicas does not divide 192) the largest micro batch that divides, 3, is taken.
_JEAN_ZAY_A100 = "A100 80GB (Jean Zay)"   # calibration.HARDWARE_OF_COLUMN -> data/clusters/jean-zay-a100.yaml
_LUCIE_SWEEP_B = "[B: vocab 32000, MBS from parallelism.md]"
_LUCIE_SWEEP_BMBS = "[B: vocab 32000, MBS 3 (the table's 4 does not divide GBS 192)]"


def _lucie_sweep(tag: str, n: int, tp: int, pp: int, zero: int, gbs: int, mbs: int, sps: float) -> tuple:
    """One Lucie-Training A100 sweep row: Llama 2 7B shape, seq 2048, Megatron-DeepSpeed, no recompute, FA2, bf16."""
    dp = n // (tp * pp)
    return (f"{tag} Lucie-Training A100 sweep (Megatron-DeepSpeed): Llama-2-7B shape, TP{tp} PP{pp} DP{dp}, ZeRO-{zero}, "
            f"mbs {mbs}, GBS {gbs}, seq 2048, {n} A100", "llama-2-7b", _JEAN_ZAY_A100, _LUCIE_FW,
            "bf16-mixed" if zero else "bf16-mixed-fp32-grads", n, 2048, gbs,
            dict(tp=tp, sp=False, pp=pp, dp=dp, zero_stage=zero, microbatch_size=mbs, recompute="none"),
            sps * 2048 / n, None)


# (GPUs, tp, pp, ZeRO, GBS, MBS, median global samples/s over iterations 6.. of all_iters_w_dp.csv)
LUCIE_A100_SWEEP = tuple(
    _lucie_sweep(_LUCIE_SWEEP_BMBS if row[:5] in ((64, 2, 1, 0, 192), (64, 1, 2, 0, 192), (128, 1, 2, 0, 192))
                 else _LUCIE_SWEEP_B, *row)
    for row in (
        # TP1 PP1 (ZeRO-1), GBS 192 (256 on 128 GPUs), MBS 3 (2 at GBS 256)
        (8, 1, 1, 1, 192, 3, 16.6310), (16, 1, 1, 1, 192, 3, 19.6045), (32, 1, 1, 1, 192, 3, 21.2570),
        (64, 1, 1, 1, 192, 3, 24.9130), (128, 1, 1, 1, 256, 2, 34.8360),
        # TP1 PP1 (ZeRO-1), GBS 512, MBS 2
        (8, 1, 1, 1, 512, 2, 16.3585), (16, 1, 1, 1, 512, 2, 26.0370), (32, 1, 1, 1, 512, 2, 36.7920),
        (64, 1, 1, 1, 512, 2, 50.2580), (128, 1, 1, 1, 512, 2, 61.3720),
        # ZeRO-0, GBS 192: TP2 PP1 (MBS 4; 3 on 64 [B] and 128 GPUs)
        (8, 2, 1, 0, 192, 4, 14.2420), (16, 2, 1, 0, 192, 4, 19.5870), (32, 2, 1, 0, 192, 4, 27.4160),
        (64, 2, 1, 0, 192, 3, 33.2145), (128, 2, 1, 0, 192, 3, 39.4510),
        # TP1 PP2 (MBS 4; 2 on 8 GPUs; 3 on 64 and 128 GPUs [B])
        (8, 1, 2, 0, 192, 2, 13.6300), (16, 1, 2, 0, 192, 4, 25.6530), (32, 1, 2, 0, 192, 4, 31.7540),
        (64, 1, 2, 0, 192, 3, 35.8990), (128, 1, 2, 0, 192, 3, 39.9745),
        # TP2 PP2 (MBS 6)
        (8, 2, 2, 0, 192, 6, 13.8770), (16, 2, 2, 0, 192, 6, 25.5000), (32, 2, 2, 0, 192, 6, 33.7475),
        (64, 2, 2, 0, 192, 6, 36.4600), (128, 2, 2, 0, 192, 6, 54.4100),
        # ZeRO-0, GBS 512 (MBS 4; TP1 PP2 on 8 GPUs: 2): TP2 PP1
        (8, 2, 1, 0, 512, 4, 14.3460), (16, 2, 1, 0, 512, 4, 24.5620), (32, 2, 1, 0, 512, 4, 40.9305),
        (64, 2, 1, 0, 512, 4, 46.5470), (128, 2, 1, 0, 512, 4, 81.2890),
        # TP1 PP2
        (8, 1, 2, 0, 512, 2, 14.0530), (16, 1, 2, 0, 512, 4, 27.1500), (32, 1, 2, 0, 512, 4, 43.6180),
        (64, 1, 2, 0, 512, 4, 62.4520), (128, 1, 2, 0, 512, 4, 85.7160),
        # TP2 PP2
        (8, 2, 2, 0, 512, 4, 13.5650), (16, 2, 2, 0, 512, 4, 26.0720), (32, 2, 2, 0, 512, 4, 44.0160),
        (64, 2, 2, 0, 512, 4, 71.6395), (128, 2, 2, 0, 512, 4, 104.5610),
    ))

SCOUTED_2026_12AH = LUCIE_A100_SWEEP

#: Thirty-fifth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AI): ATorch's Llama 2 7B table (Ant Group,
#: intelligent-machine-learning/dlrover, atorch/examples/llama2; PyTorch FSDP and DeepSpeed 3D parallelism on A100).
#: Sources, all in intelligent-machine-learning/dlrover:
#: 1. atorch/examples/llama2/README.md @ 11bf2fbf (read_file id 31493756484; the table added by PR #825, "llama2 readme
#:    update performance", 2023-11-16), "Llama2 Pretrain/Finetune", section "Performance": "Model: Llama2-7b",
#:    "Cluster: 8 A100-80GB GPUs in each node, with NVLink and 800 Gb/s RDMA"; columns Use LoRA, Num of GPUs, TP, PP,
#:    DP, Batch Per GPU, Grad Accu Steps, Global Batch Size, TFLOPs, HFU(%), Mem Max allocated(MB). Rows taken: the four
#:    FSDP rows without LoRA (8 / 16 / 32 / 64 GPUs, batch 4 per GPU, GA 1: 204.67 / 197.22 / 196.04 / 195.14 TFLOPs)
#:    and the six "DS 3D" rows (TP1 PP2 DP4 / TP2 PP1 DP4 / TP2 PP2 DP2 on 8 GPUs, TP2 PP2 on 16 / 32 / 64 GPUs; batch
#:    8 per GPU, GA 64: 190.27 / 159.19 / 155.73 / 154.84 / 154.44 / 153.93). The LoRA rows are not taken (the planner
#:    prices full-parameter training only). Pre-training and fine-tuning run the same script (README: --config_name
#:    for a random init, --model_name_or_path to load weights); wikitext is concatenated and cut into block_size chunks
#:    (example_utils.py get_data_iter, group_texts: no padding), so either is full-sequence training.
#: 2. The TFLOPs column: atorch/examples/llama2/example_utils.py @ 358a3c9e (id 4809348719) compute_llama2_training_flops,
#:    "hardware flops" per iteration (Megatron-LM's appendix formula, matmuls only): per sequence attention forward
#:    8 s h^2 + 4 s^2 h (the full, not causal, score and context products), MLP 3 x 2 s h f, logits 2 s h V; with
#:    gradient checkpointing layers x 4 and logits x 3; both training scripts (fsdp_llama2.py @ 0ada8100, id
#:    21763322778; ds_3d_llama2.py @ 495f2356, id 5610625584) print flops_per_iter / elapsed / world_size with the
#:    checkpointing flag set (FSDP: --gradient_checkpointing; DS 3D: activation_checkpoint_interval > 0) and the
#:    global batch. HFU(%) = TFLOPs / 312 (204.67 / 312 = 65.6%, as printed). So tokens/s/GPU = TFLOPs x 1e12 /
#:    (32 x (8 h^2 + 4 s h + 6 h f) x 4 + 2 h V x 3) with h 4096, f 11008, V 32,000, s 4096 = TFLOPs x 1e12 /
#:    61.184 GFLOP (_ATORCH_FLOP_PER_TOKEN): 3,345 for the 8-GPU FSDP row.
#: 3. Layout: fsdp_llama2_entry.sh @ 0ada8100 (id 21894984092): BLOCK_SIZE 4096, PER_DEVICE_TRAIN_BATCH_SIZE 4 (the
#:    table's batch), --precision bf16_amp (torch autocast, fp32 weights), --gradient_checkpointing (every
#:    LlamaDecoderLayer); fsdp_llama2.py: FSDP over every rank (parallel_mode data = world size; FULL_SHARD, FSDP's
#:    default), wrapped per LlamaDecoderLayer, limit_all_gathers, forward_prefetch, use_orig_params, "module_replace"
#:    (ATorch's flash-attention swap), HF AutoModelForCausalLM (its eager loss). ds_3d_llama2_entry.sh @ 2652deff (id
#:    21413925070) / 81663249 (id 5249675017): BLOCK_SIZE 4096, ds_config ZeRO stage 1, fp16 enabled, pipeline
#:    activation_checkpoint_interval 1, micro batch and GA from the environment (the table's 8 and 64); ds_3d_llama2.py:
#:    HF LlamaModel layers, TP-sharded by ATorch (q/k/v/gate/up column-, o/down row-parallel, vocabulary-parallel
#:    embedding, no sequence parallelism), in DeepSpeed's PipelineModule (its activation_checkpoint_func defaults to
#:    DeepSpeed's checkpointing.checkpoint: read in an NPU port of PipelineModule.__init__, read_file id 40682759139,
#:    which imports checkpointing from deepspeed.runtime.activation_checkpointing and documents "Defaults to
#:    ``deepspeed.checkpointing.checkpoint``"; that ATorch's PipeModuleFromRecordedMeta keeps the default is [B], its
#:    code not read), loss vocab_parallel_cross_entropy on logits.float(), "module_replace" (flash attention).
#: Hardware: A100 80GB with 800 Gb/s RDMA per 8-GPU node = 12.5 GB/s per GPU (the Megatron-LLaMA row's figure for the
#:    same link), half the preset's 25 GB/s. Framework: FSDP rows hf-fsdp (stock HF model code under PyTorch FSDP, as
#:    the sixth pass's HF Trainer / Accelerate rows); DS 3D rows hf-deepspeed (HF model code under DeepSpeed) with
#:    pipeline_parallel on (ATorch does build the PipelineModule that the HF Trainer integration lacks) and the
#:    deepspeed profile's layer_overhead_s (0.0122: its recompute goes through DeepSpeed's CheckpointFunction, which
#:    hf-deepspeed zeroes only because HF's own torch.utils.checkpoint replaces it). Precision bf16-mixed for both (the
#:    DS rows are fp16 with loss scaling: the same FLOP rate, as the ColossalAI rows price fp16).
#: Memory: the table's "Mem Max allocated(MB)" is report_memory's torch.cuda.max_memory_allocated / 2^20 on rank 0
#:    (print only on rank 0), taken as GiB / 1024 (rank 0 is pipeline stage 0 in the DS rows).
#: [B] for all rows: the entry scripts' BLOCK_SIZE default (4096; the README states no sequence length) and that the
#:    scripts read (the versions stored, not necessarily the table's commit) are those the table ran; the TFLOPs
#:    column an average over steady iterations (the README does not say which); vocabulary 32,000 (Llama 2's).
_ATORCH_FLOP_PER_TOKEN = 32 * (8 * 4096 ** 2 + 4 * 4096 * 4096 + 6 * 4096 * 11008) * 4 + 2 * 4096 * 32000 * 3
_ATORCH_HW = "A100 80GB+scale_out_bandwidth=12500000000"   # 800 Gb/s RDMA per 8-GPU node
_ATORCH_DS_FW = "hf-deepspeed+pipeline_parallel=true+layer_overhead_s=0.0122"
_ATORCH_B = "[B: seq 4096 from the entry scripts, 12.5 GB/s per GPU]"
ATORCH_LLAMA2_7B = (
    *((f"{_ATORCH_B} ATorch llama2 README: Llama-2-7B FSDP (ZeRO-3) DP{n}, mbs 4, GA 1, seq 4096, GC, bf16 amp, FA, "
       f"{n} A100 80GB", "llama-2-7b", _ATORCH_HW, "hf-fsdp", "bf16-mixed", n, 4096, 4 * n,
       dict(dp=n, zero_stage=3, microbatch_size=4, recompute="full"), tflops * 1e12 / _ATORCH_FLOP_PER_TOKEN,
       round(mem / 1024, 1))
      for n, tflops, mem in ((8, 204.67, 39596.3), (16, 197.22, 34776.7), (32, 196.04, 32366.8),
                             (64, 195.14, 31161.9))),
    *((f"{_ATORCH_B} ATorch llama2 README: Llama-2-7B DS 3D TP{tp} PP{pp} DP{n // (tp * pp)}, ZeRO-1, mbs 8, GA 64, "
       f"seq 4096, GC, fp16, FA, {n} A100 80GB", "llama-2-7b", _ATORCH_HW, _ATORCH_DS_FW, "bf16-mixed", n, 4096,
       8 * 64 * n // (tp * pp),
       dict(tp=tp, sp=False, pp=pp, dp=n // (tp * pp), zero_stage=1, microbatch_size=8, recompute="full"),
       tflops * 1e12 / _ATORCH_FLOP_PER_TOKEN, round(mem / 1024, 1))
      for n, tp, pp, tflops, mem in ((8, 1, 2, 190.27, 40006.9), (8, 2, 1, 159.19, 38635.6), (8, 2, 2, 155.73, 31132.3),
                                     (16, 2, 2, 154.84, 26309.4), (32, 2, 2, 154.44, 23901.8),
                                     (64, 2, 2, 153.93, 22695.7))),
)

SCOUTED_2026_12AI = ATORCH_LLAMA2_7B

#: Thirty-sixth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AJ): LLM technical reports that print a
#: pre-training run's GPU count, parallel layout and a measured rate. Most names of the brief were already held or gave
#: no layout or no rate in a stored source (see the section's prose). Two sources, three rows:
#: 1. Nemotron-4 340B technical report (NVIDIA 2024), Table 2, the two batch-ramp stages the project did not hold (the
#:    DP64 stage is the PUBLIC_CHECKS row "[B] Nemotron-4 340B report Table 2: TP8 PP12 (VP4 assumed) DP64, 6144
#:    H100", from the aiportalx.com quotation). Stored transcription: code-index file id 52156206017 (a study-notes
#:    markdown of the report, section 3.2-3.3): "768 DGX H100 nodes x 8 H100 80GB SXM5 GPUs", "Inter-node: 8x NVIDIA
#:    Mellanox 400 Gbps HDR InfiniBand HCAs" (50 GB/s per GPU, the h100-sxm preset), "Tensor Parallelism (TP) | 8",
#:    "Pipeline Parallelism (PP) with interleaving | 12", "Data Parallelism (DP) | 16 -> 32 -> 64 (ramped)",
#:    "Distributed optimizer | Sharded across DP replicas", and the table rows "| 1 | 768 | 16 | 1536 | 200 | 10.3 |
#:    42.4 |" and "| 2 | 1536 | 32 | 3072 | 200 | 10.3 | 42.3 |" (batch size in sequences, DP size, GPUs, tokens (B),
#:    iteration time (s), MFU (%)); its DP64 row (2304, 8.0 s, 41.0%) matches the aiportalx quotation. Sequence 4,096
#:    ("Pack documents into sequences of length T=4096"). tokens/s/GPU = batch x 4096 / iteration time / GPUs:
#:    768 x 4096 / 10.3 / 1536 = 198.8 (and the same for DP32). Check against the MFU: 198.8 x 6 x 341e9 / 989e12 =
#:    41.1% (42.4% printed; attention FLOPs make up the rest). Model: the nemotron-4-340b preset. Framework: megatron
#:    (NeMo / Megatron-Core), as the DP64 row; precision bf16-mixed as that row.
#:    [B] as the DP64 row: micro batch 1, 4 virtual stages (2 layers per chunk), selective recompute, sequence
#:    parallelism with TP communication overlap (the NeMo 340B recipe's), ZeRO-1 for "distributed optimizer"; and that
#:    the third-party transcription copies the report's Table 2 faithfully (its DP64 row agrees with the other quote).
#: 2. FLM-101B (Li et al. 2023, "FLM-101B: An Open LLM and How to Train It with $100K Budget", BAAI), read through the
#:    model card CofeAI/FLM-101B README.md (code-index file id 13791979073) and a stored copy of the paper (id
#:    60901277199, Sec. 2.3-2.4, Tables 1-2). Model card "Parallel Strategies": "| 101 | 4 | 4 | 12 | 192 | 2160 | 165 |
#:    52.88% |" (TP, PP, DP, GPUs, batch size, TFLOP/s per GPU, GPU utilization); "Training Hyper Parameter": 101b
#:    "Batch size(M tokens) 4.31", "Time(day) 6.54", "Tokens(B) 26.54"; "FLM-101B is trained on a cluster of 24 DGX-A800
#:    GPU (8x80G) servers"; "a codebase adapted from Megatron-LM ... 3D(DP+TP+PP) parallelism approach and distributed
#:    optimizer"; "Flash Attention (In Training)"; "sequence length 2048". Paper Sec. 2.4: "by employing sequence
#:    parallelism ... We also utilize the Megetron-LM implementation of the distributed optimizer"; Table 2 caption
#:    "Gradient accumulation is applied for the large global batch size"; Sec. 3: "we choose Bfloat16". Shape (model
#:    card "Model size" and paper Sec. 2.3): 80 layers, d_model 10240, 80 heads, vocabulary 100,256, "GPT3-style
#:    transformer block designs" -> models/flm-101b.config.json (a GPT-2-style config: GELU MLP of 4 x hidden, biases,
#:    LayerNorm; 101,721,559,040 parameters). Rate: the 101B stage's wall-clock average, 26.54e9 tokens / (6.54 days x
#:    86,400 s) / 192 GPUs = 244.6 tokens/s/GPU. (The printed 165 TFLOP/s per GPU is a steady-state figure whose FLOP
#:    count the paper does not give: with Megatron's no-recompute count, 72 B s l h^2 (1 + s/6h + V/16lh), it is 262
#:    tokens/s/GPU; with the full-recompute count, 96 ..., 197, below the stage's own wall-clock average, so the
#:    no-recompute reading is the consistent one. The wall-clock figure is taken, as measured.) The two smaller growth
#:    stages (16B TP2 DP96, 51B TP4 PP2 DP24) are not taken: no stored source gives their widths.
#:    Framework: megatron-legacy with fp32 gradient accumulation (a 2023 Megatron-LM fork, as the Skywork-13B rows).
#:    [B]: the stage's "Time(day)" as pure training time (it may hold restarts: a lower bound of the steady rate);
#:    micro batch 1 (180 sequences per replica per step); no activation recompute (above); the 1F1B schedule without
#:    interleaving (Megatron's default); the A800 preset's network (25 GB/s per GPU; the DGX-A800 links are not
#:    stated); tied embeddings and learned positions in the config (xPos adds no weights; the cost difference is
#:    negligible); the model card's 4.31M-token batch against 2160 x 2048 = 4.42M from the table (the table's batch
#:    is taken).
_N340_B = "[B: as the DP64 row (mbs 1, VP4, selective AC, sp + tp_overlap); Table 2 via a transcription]"
NEMOTRON4_340B_RAMP = tuple(
    (f"{_N340_B} Nemotron-4 340B report Table 2: TP8 PP12 DP{dp}, {n} H100, batch {gbs} x 4096", "nemotron-4-340b",
     "H100 80GB", "megatron", "bf16-mixed", n, 4096, gbs,
     dict(tp=8, sp=True, tp_overlap=True, pp=12, schedule="interleaved", virtual_stages=4, dp=dp, zero_stage=1,
          microbatch_size=1, recompute="selective"), gbs * 4096 / it / n, None)
    for dp, n, it, gbs in ((16, 1536, 10.3, 768), (32, 3072, 10.3, 1536)))

FLM_101B = (
    ("[B: stage wall-clock as training time, mbs 1, no AC, preset network] FLM-101B model card: 101B stage TP4 PP4 DP12 "
     "SP, dist-opt, GBS 2160 x 2048, 192 A800 80GB", MODELS_DIR + "flm-101b.config.json", "A800", "megatron-legacy",
     _LEGACY_BF16, 192, 2048, 2160,
     dict(tp=4, sp=True, pp=4, dp=12, zero_stage=1, microbatch_size=1, recompute="none"),
     26.54e9 / (6.54 * 86400) / 192, None),
)

SCOUTED_2026_12AJ = NEMOTRON4_340B_RAMP + FLM_101B

#: Thirty-seventh scouting pass (2026-12, never fitted on; SCOUTED_2026_12AK): the RAPID-LLM simulator's validation
#: data (NanoCAD lab, UCLA). Read: eyao600/Rapid-LLM validation_scripts/ (uci_train.py @ 50eec60b, uci_train_lime.py
#: @ d6e2fc37, nvidia_train.py @ 50eec60b, koyeb.py @ c7d53d9c, hf_meta_sweep.py @ 24ef24c6, validation_configs/);
#: that fork stores no measured training data (its scripts read validation_scripts/imec_data/*.csv, not in the fork),
#: so the CSVs were read from the two other stored copies of the same code: nanocad-lab/Rapid-LLM @ 339ef6ab
#: validation_scripts/train_validation_data/uci_train.csv (6 rows) and gkarfakis19/DeepFlow @ 51a0976b
#: validation_scripts/imec_data/uci_train.csv (14 rows, a superset with the same numbers; 13 SUCCESS). These are the
#: authors' own measurements on a 4-GPU A100 80GB system the files call "UCI" (README: "4-GPU system training
#: validation ... the 4-GPU UCI cases"): Llama-2-7B ("Llama2-7B.yaml": 32 x 4096, 32 heads, ffn 11008, vocab 32000:
#: the llama-2-7b preset), seq_len 4096 (the scripts' override), "run_benchmark.py parameters GLOBAL_BATCH_SIZE = 128,
#: MICRO_BATCH_SIZE = 1", a TP x PP x CP x DP grid under "DDP" and "FSDP" (RAPID-LLM prices them as dp_zero_stage 0
#: and 3). Columns Avg_Step_Time_s, Total_Throughput_tokens_s and Throughput_per_GPU_tokens_s; 128 x 4096 / step / 4
#: = the per-GPU column (DDP DP4: 524,288 / 36.9333 / 4 = 3,548.9), which is taken as printed. Network facts from
#: uci_train_lime.py / uci_train_validation.py: "4-GPU ring: 2 NVLink, 2 PCIe", NVLink 12 x 25 = 300 GB/s per GPU,
#: PCIe 25 GB/s per GPU, and the authors' final model puts TP/CP on the PCIe ring (TP_ON_NVLINK = False) and PP/DP on
#: NVLink. The hardware config (a100_80GB_train_validation.yaml): 108 SMs at 1.41 GHz, 80 GB at 1,986 GB/s, bf16
#: tensors, parameters, gradients and optimizer states ("as_tensor_format"), "master_parameters: 0.0",
#: "full_recomputation: false" (selective), kernel_launch_overhead 9 us.
#: [B] for every row: hardware = the a100-80gb preset with its scale-up ring at 25 GB/s per GPU (every 4-GPU ring has
#: two PCIe hops, and the authors' model puts TP/CP there; their PP/DP NVLink ring is not representable beside it, and
#: DP / PP traffic is under 2% of these steps); the pairs of GPUs bridged by NVLink suggest A100 80GB PCIe cards
#: (1,935 GB/s, 300 W), not stated, and the preset's SXM HBM bandwidth and clocks are kept; precision bf16 with bf16
#: Adam state and no master copy ("+optimizer_dtype=bf16", the authors' config; bf16-mixed ZeRO-0 would need 122 GiB
#: for the DDP DP4 row, which ran); selective recompute (the authors' config); "DDP" = ZeRO-0, "FSDP" = ZeRO-3 (the
#: authors' pricing); the 1F1B schedule without interleaving for PP; profile megatron: the FSDP PP failure's text,
#: "AssertionError: FSDP does not support pipeline parallelism", is NeMo's NLPFSDPStrategy assertion
#: (nemo/collections/nlp/parts/nlp_overrides.py), so the harness is taken as NeMo / Megatron-Core (not stated).
#: Skipped: the FSDP TP1 PP2 DP2 row (INSUFFICIENT_DATA, the assertion above); nvidia_train.py's A100_korthi /
#: A100_selene rows (Korthikanti 2022 Table 5 full- and selective-recompute GPT 22B-1T, Narayanan 2021 Table 1 GPT
#: 310B / 530B / 1T: held in shardplan/data/published_runs.csv; RAPID-LLM's copies of the Korthikanti times, e.g. GPT
#: 175B 16.9 / 12.9 s, are below the paper's 18.13 / 13.75 s and are not taken); koyeb.py and nvidia_inf.csv
#: (inference); huggingface_data/bench_final2_*.csv (the Ultra-Scale Playbook nanotron sweep, held in usp_raw/).
_UCI = "[B: PCIe 25 GB/s ring, bf16 Adam no master, selective AC, NeMo assumed] RAPID-LLM uci_train.csv (authors' 4 A100)"
UCI_RAPID_LLM_A100 = tuple(
    (f"{_UCI}: Llama-2-7B {variant} TP{tp} PP{pp} CP{cp} DP{dp}, GBS 128 x 4096, mbs 1", "llama-2-7b",
     "A100 80GB+scale_up_bandwidth=25000000000", "megatron", "bf16-mixed" + OPTIMIZER_BF16, 4, 4096, 128,
     dict(tp=tp, pp=pp, cp=cp, dp=dp, zero_stage=3 if variant == "FSDP" else 0, microbatch_size=1,
          recompute="selective", **(dict(schedule="1f1b") if pp > 1 else {})), tps, None)
    for variant, tp, pp, cp, dp, tps in (
        ("DDP", 1, 1, 1, 4, 3548.88), ("DDP", 4, 1, 1, 1, 1862.7), ("DDP", 1, 4, 1, 1, 3231.03),
        ("DDP", 1, 1, 4, 1, 1224.97), ("DDP", 2, 2, 1, 1, 3050.16), ("DDP", 2, 1, 2, 1, 2070.83),
        ("DDP", 1, 2, 2, 1, 2981.92), ("DDP", 2, 1, 1, 2, 3139.87), ("DDP", 1, 2, 1, 2, 3429.46),
        ("DDP", 1, 1, 2, 2, 3046.41), ("FSDP", 1, 1, 1, 4, 2329.59), ("FSDP", 2, 1, 1, 2, 1767.33),
        ("FSDP", 1, 1, 2, 2, 1257.62)))

SCOUTED_2026_12AK = UCI_RAPID_LLM_A100

#: Thirty-eighth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AL): runs on the two chips the v100 and
#: mi250x presets were added for (their GEMM rates derived from a published isolated GEMM or assumed, not fitted).
#: V100 (DGX-2H, 16 V100 32GB per node on NVSwitch): Shoeybi et al. 2019, "Megatron-LM" (arXiv 1909.08053): Table 1
#: shapes (1.2B = 40 x 1536, 16 heads; 4.2B = 64 x 2304, 24 heads; 8.3B = 72 x 3072, 32 heads; head dim 96, ffn 4h,
#: GPT-2 vocabulary padded to 51,200, seq 1,024, tied embeddings; benchmarks/models/megatron2019-gpt-*.config.json),
#: mixed fp16 with dynamic loss scaling, activation checkpointing of every layer, dropout 0.1, attention unfused (2019:
#: no FlashAttention); model-parallel runs at batch 8, data-parallel runs at global batch 512 (8 per replica), Adam.
#: Measured: the abstract's 39 TFLOP/s on one GPU and 15.1 PFLOP/s on 512 GPUs (8.3B, TP 8 x DP 64: 29.5 per GPU), and
#: Fig. 5's weak-scaling efficiencies of 77% for 8.3B at TP 8 and 96% for 1.2B at DP 64 (x 39 TFLOP/s); TFLOP/s
#: converted to tokens/s with Narayanan et al. 2021 Eq. 3 (recomputed forward counted: 96 l h^2 (1 + s / 6h + V / 16lh)
#: per token; 1.2B: 1.0538e10, 8.3B: 6.9797e10), the convention NVIDIA's Megatron v1.0 post confirms (62.4 TFLOP/s at
#: 1,288 ms per 8 x 1,024 tokens: 9.8e9 FLOPs per token). NVIDIA ADLR, "MegatronLM's Supercharged V1.0" (2020, Table 1):
#: iteration times at batch 8 after its kernel work (fused softmax and GELU, among others), 1.2B on one GPU 1,288 ms,
#: 4.2B at TP 4 1,357 ms. [B]: the 2019 FLOP convention (the paper does not state it), the blog's batch and shapes
#: (the paper's); the megatron-legacy profile (Megatron-LM 2021's fused kernels: the 2019 rows ran fewer of them).
#: MI250X (one GCD): the OLCF-6 FORGE benchmark README (FORGE-s, Yin et al. SC'23): 1.44B GPT-NeoX (24 x 2064, 24
#: heads, seq 2,048, rotary; at-aaims/forge train/configs/forge-s.yml: micro batch 16, ZeRO-1, activation checkpointing
#: of every layer, bf16) at about 77 TFLOP/s on one GCD and 63 per GCD on one node (8 GCDs), converted with GPT-NeoX's
#: own count (megatron/utils.py get_flops: Eq. 3 with the checkpointing factor; 1.2061e10 per token at vocabulary
#: 50,304). [B]: the vocabulary (FORGE's tokenizer; 50,304 assumed), DP 8 on the node, the deepspeed profile.
_MLM19 = "[B: FLOP convention, unfused attention] Megatron-LM 2019 (V100 32GB, DGX-2H)"
_MLM19_PREC = "fp16-mixed+attention=naive+dropout=True"
MEGATRON_2019_V100 = tuple(
    (f"{_MLM19}: {label}", f"models/megatron2019-gpt-{size}.config.json", "V100 32GB", "megatron-legacy", _MLM19_PREC,
     n, 1024, gbs, dict(tp=tp, dp=n // tp, zero_stage=0, microbatch_size=8, recompute="full", sp=False),
     round(tflops / flops_per_token, 1), None)
    for label, size, n, tp, gbs, tflops, flops_per_token in (
        ("1.2B on 1 GPU, batch 8, 39 TFLOP/s", "1.2b", 1, 1, 8, 39e12, 1.0538e10),
        ("1.2B DP 64, batch 512, 96% weak scaling", "1.2b", 64, 1, 512, 0.96 * 39e12, 1.0538e10),
        ("8.3B TP 8, batch 8, 77% weak scaling", "8.3b", 8, 8, 8, 0.77 * 39e12, 6.9797e10),
        ("8.3B TP 8 x DP 64, batch 512, 15.1 PFLOP/s on 512 GPUs", "8.3b", 512, 8, 512, 15.1e15 / 512, 6.9797e10)))
_MLMV1 = "[B: batch 8 and the paper's shapes] NVIDIA Megatron v1.0 post (V100 32GB, DGX-2H)"
MEGATRON_V1_V100 = tuple(
    (f"{_MLMV1}: {label}", f"models/megatron2019-gpt-{size}.config.json", "V100 32GB", "megatron-legacy", _MLM19_PREC,
     n, 1024, 8, dict(tp=n, dp=1, zero_stage=0, microbatch_size=8, recompute="full", sp=False),
     round(8 * 1024 / step_s / n, 1), None)
    for label, size, n, step_s in (("1.2B on 1 GPU, 1,288 ms per iteration", "1.2b", 1, 1.288),
                                   ("4.2B TP 4, 1,357 ms per iteration", "4.2b", 4, 1.357)))
_FORGE = "[B: vocabulary 50,304, DP 8 on a node, deepspeed profile] OLCF-6 FORGE-s benchmark (MI250X GCDs)"
FORGE_MI250X = tuple(
    (f"{_FORGE}: {label}", "models/forge-s-1.4b.config.json", "MI250X", "deepspeed", "bf16-mixed", n, 2048, 16 * n,
     dict(dp=n, zero_stage=1, microbatch_size=16, recompute="full"), round(tflops / 1.2061e10, 1), None)
    for label, n, tflops in (("1.44B GPT-NeoX on 1 GCD, micro batch 16, ~77 TFLOP/s", 1, 77e12),
                             ("1.44B GPT-NeoX on 8 GCDs (one node), ~63 TFLOP/s per GCD", 8, 63e12)))

SCOUTED_2026_12AL = MEGATRON_2019_V100 + MEGATRON_V1_V100 + FORGE_MI250X

#: Thirty-ninth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AM): AMD Instinct runs with their whole
#: configuration, DeepSpeed ZeRO on Hopper, and DeepSpeed-Ulysses (the cp_comm='a2a' exchange added this session).
#: 1. pytorch/ao torchao/float8/README.md @ 9519bebb, "Training benchmarks": torchtitan Llama 3 8B on one node of
#:    8 GPUs, batch size 1, seq 8192, torch.compile, FSDP2, per-op SAC; "Median tokens/second" (torchtitan's
#:    per-GPU rate) and "Peak Memory (GB)" (torchtitan's memory monitor, read as GiB). NVIDIA H100 (PyTorch 2.7.0a0,
#:    torchao 0.10) and AMD MI300X (PyTorch 2.9.0.dev+rocm6.4, torchao 0.13; the PR that added them, pytorch/ao#2736,
#:    says they ran "without any performance debugging"). bf16 = torchtitan's default (bf16 params, fp32 gradient
#:    reduction); float8 tensorwise / rowwise / rowwise_with_gw_hp all priced as fp8-mixed (the planner has one fp8
#:    recipe). [B]: H100 96GB (Meta's torchtitan nodes, as TT_778), FSDP2 reshard-after-forward (torchtitan's default).
#: 2. AMD-AGI/Primus agent/workspace/qwen3_fp8_tw_gfx950_20261010/README.md @ 31c71fa8 (and e2e/results.md @ fb0603b6):
#:    Qwen3-30B-A3B FP8 tensorwise on 8 MI355X, EP 8, MBS 8, GBS 512, seq 4096, "even routing", s/iter over
#:    iterations 11-20 (tokens/s/GPU = 262,144 / s): the submitted config (Primus-Turbo e2d9f1d7) 8,894 ms and, after
#:    three kernel changes (fused activation with probabilities, DeepEP on 160 CUs, fp8 permutation), 6,507.6 ms. The
#:    Primus yaml (examples/megatron/configs/MI355X/qwen3_30B_A3B-FP8-pretrain.yaml @ 05b350b3): distributed optimizer,
#:    bf16 main gradients and Adam moments (the precision-aware optimizer). [B]: no activation recompute (the yaml read
#:    recomputes 5 layers; the campaign's config is not given; 223-277 GB per GPU measured fits without), DeepEP
#:    dispatch for both.
#: 3. MLPerf Training v5.1, AMD/results/MI350X_EPYC_9575F_pytorch/llama31_8b/result_0.txt @ 4da2d1cd: Llama 3.1 8B
#:    FP8, 8 MI350X, GBS 32, GA 2, seq 8192, tracked throughput 24.975 samples/s (the blocks after the first);
#:    [B]: the layout of the sibling MI355X config (TP 1, MBS 2, fp8 parameters, distributed optimizer), as the MI355X
#:    row of AMD_2026_12. Priced with the mi350x preset added this session (the MI355X's entries at its 2.2 GHz clock).
#:    The v6.0 MXFP4 runs (MI355X ~37,520, MI350X ~30,120 tokens/s/GPU) have no planner precision (MX block fp4 on
#:    AMD) and are left out.
#: 4. FlagOpen/FlagPerf DeepSpeed cases (training/nvidia/*-deepspeed/README.md, a Hugging Face model under a bare
#:    DeepSpeed engine, fixed-length blocks; "token/p/s" = tokens/s/GPU): llama2_7b-deepspeed @ 63c68145 (H800 x 8,
#:    ZeRO-3, fp16 ds_config, FlashAttention-2, LBS 1, GAS 1, seq 4096, no AC: 7,151) and its -nvidia A800 variant
#:    @ 804a4d5c (3,583; [B]: the same ds_config); chatglm3_6b-deepspeed @ 055c966b (H100 x 8, ZeRO-3, bf16, seq 4096, no
#:    AC: 8,429.22; [B]: ZeRO-3 / bf16 from the committed merged ds_config, SDPA attention from the model code) and its
#:    A800 variant @ 45ca7630 (3,486.4); baichuan2_13b-deepspeed @ 0ed3fd03 (2 x 8 H800, ZeRO-1, bf16, full AC, no
#:    FlashAttention (ALiBi), seq 2048, GAS 8: 2,068 and GAS 64: 2,710; the network as the FlagPerf H800 rows above,
#:    H800_IB200; priced with attention=naive, as the README's "no FlashAttention" says: the rows were priced with
#:    fused attention until the forty-first session, +77% / +41%). Model shapes: benchmarks/models/chatglm3-6b.json, baichuan2-13b.json (their HF configs).
#: 5. huggingface/blog ulysses-sp.md @ 01d33d5c ("Ulysses Sequence Parallelism", 2026-03): TRL SFTTrainer, Qwen3-4B
#:    (benchmarks/models/qwen3-4b.config.json) on H100 80GB, DeepSpeed ZeRO-3 with the optimizer offloaded to the
#:    CPU, gradient checkpointing, FlashAttention-2, 8 micro-batches of 1 per step: 1 GPU at 8K, and 4 GPUs with
#:    Ulysses SP 4 at 8K / 32K / 64K. [B]: the "Tokens/s" column read as the job's total (per GPU it would be > 320
#:    TFLOP/s at 64K under full recompute), full-length sequences, the hf-deepspeed profile.
_TORCHAO_F8 = "torchao float8 README (torchtitan Llama 3 8B, FSDP2 + compile, per-op SAC, lbs 1, seq 8192, 8 GPUs)"
TORCHAO_FLOAT8_README = tuple(
    (f"[B: {'H100 96GB, ' if hw == 'H100 96GB' else ''}fp8 recipes priced alike] {_TORCHAO_F8}: {hw} {name}",
     "llama-3-8b", hw, "torchtitan-compile", prec, 8, 8192, 8,
     dict(dp=8, zero_stage=3, microbatch_size=1, recompute="selective"), tps, gib)
    for hw, name, prec, tps, gib in (
        ("H100 96GB", "bf16", "bf16-mixed-fp32-grads", 6150.0, 47.65),
        ("H100 96GB", "float8 tensorwise, float8 all-gather", "fp8-mixed", 7689.5, 47.77),
        ("H100 96GB", "float8 rowwise, bf16 all-gather", "fp8-mixed", 6768.0, 47.79),
        ("MI300X", "bf16", "bf16-mixed-fp32-grads", 5376.5, 39.09),
        ("MI300X", "float8 tensorwise, float8 all-gather", "fp8-mixed", 6166.0, 39.07),
        ("MI300X", "float8 rowwise_with_gw_hp, bf16 all-gather", "fp8-mixed", 6100.0, 39.32),
        ("MI300X", "float8 rowwise, bf16 all-gather", "fp8-mixed", 5891.0, 39.32)))
PRIMUS_QWEN3_MI355X = tuple(
    (f"[B: no recompute, DeepEP] Primus Qwen3-30B-A3B FP8 tensorwise, EP8 MBS8 GBS512, even routing, 8 MI355X: {label}",
     "qwen3-30b-a3b", "MI355X", "megatron", "fp8-mixed+optimizer_dtype=bf16", 8, 4096, 512,
     dict(ep=8, zero_stage=1, microbatch_size=8, moe_dispatcher="deepep", recompute="none"),
     round(262144 / step_s, 1), None)
    for label, step_s in (("submitted config, 8,894 ms per iteration", 8.894),
                          ("after three Primus-Turbo kernel changes, 6,507.6 ms", 6.5076)))
MLPERF_V51_MI350X = (
    ("[B: layout of the MI355X config] MLPerf Training v5.1 AMD MI350X: Llama 3.1 8B fp8 (fp8 params), 8 GPUs",
     "llama-3.1-8b", "MI350X", "megatron", "fp8-params", 8, 8192, 32, dict(zero_stage=1, microbatch_size=2),
     round(24.975 * 8192 / 8, 1), None),
)
_FP = "FlagPerf DeepSpeed (HF model, bare engine)"
_Z3_8 = dict(dp=8, zero_stage=3, microbatch_size=1, recompute="none")
FLAGPERF_DEEPSPEED = (
    (f"[A] {_FP}: Llama-2-7B ZeRO-3 fp16, FA2, seq 4096, 8 H800", "llama-2-7b", "H800", "hf-deepspeed", "fp16-mixed",
     8, 4096, 8, _Z3_8, 7151.0, None),
    (f"[B: ds_config as the H800 case's] {_FP}: Llama-2-7B ZeRO-3 fp16, FA2, seq 4096, 8 A800", "llama-2-7b", A800,
     "hf-deepspeed", "fp16-mixed", 8, 4096, 8, _Z3_8, 3583.0, None),
    (f"[B: merged ds_config, SDPA] {_FP}: ChatGLM3-6B ZeRO-3 bf16, seq 4096, 8 H100", "models/chatglm3-6b.json",
     "H100 80GB", "hf-deepspeed", "bf16-mixed", 8, 4096, 8, _Z3_8, 8429.22, None),
    (f"[B: merged ds_config, SDPA] {_FP}: ChatGLM3-6B ZeRO-3 bf16, seq 4096, 8 A800", "models/chatglm3-6b.json", A800,
     "hf-deepspeed", "bf16-mixed", 8, 4096, 8, _Z3_8, 3486.4, None),
    *((f"[A] {_FP}: Baichuan2-13B ZeRO-1 bf16, full AC, seq 2048, GAS {ga}, 16 H800 (2 nodes)",
       "models/baichuan2-13b.json", H800_IB200, "hf-deepspeed", "bf16-mixed+attention=naive", 16, 2048, 16 * ga,
       dict(dp=16, zero_stage=1, microbatch_size=1, recompute="full"), tps, None)
      for ga, tps in ((8, 2068.0), (64, 2710.0))),
)
_ULY = "[B: job totals, full-length sequences] HF blog Ulysses SP (TRL, Qwen3-4B, ZeRO-3 + CPU optimizer, full AC, H100)"
HF_ULYSSES_BLOG = tuple(
    (f"{_ULY}: {label}", "models/qwen3-4b.config.json", "H100 80GB", "hf-deepspeed", "bf16-mixed", n, seq, 8,
     dict(dp=1, cp=n, cp_comm="a2a", zero_stage=3, microbatch_size=1, recompute="full", offload_optimizer=True),
     round(total / n, 1), None)
    for label, n, seq, total in (("1 GPU, 8K", 1, 8192, 2436.0), ("Ulysses 4, 8K", 4, 8192, 2315.0),
                                 ("Ulysses 4, 32K", 4, 32768, 7872.0), ("Ulysses 4, 64K", 4, 65536, 13396.0)))

SCOUTED_2026_12AM = (TORCHAO_FLOAT8_README + PRIMUS_QWEN3_MI355X + MLPERF_V51_MI350X + FLAGPERF_DEEPSPEED
                     + HF_ULYSSES_BLOG)

#: Fortieth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AN): NeMo-Megatron's 2022 GPT-3 scaling tables,
#: torchtitan's later documents and the torchao MX README.
#: 1. NVIDIA/NeMo-Framework-Launcher README.md @ 003d7e63 "7.1.2. Training Performance Results": tokens/s of GPT-3 5B
#:    on 1-32 DGX A100 80GB nodes (40,345 ... 1,159,288) and GPT-3 175B on 8-128 nodes (7,500 ... 109,684), and the 5B
#:    convergence run (160 GPUs, GBS 1,440, seq 2,048, 726,384 tokens/s; section 7.1.1). Layouts from the 2022 recipes
#:    (NVIDIA/NeMo @ 05deb685 conf/training/gpt3/5b.yaml: TP 2, MBS 2, GBS 1,440, fused_adam (no distributed
#:    optimizer), megatron_amp_O2 bf16 (fp32 main gradients), hidden_dropout 0.1, no layer checkpointed; 175b.yaml:
#:    TP 8, PP 8, MBS 2, GBS 1,536). [B]: the 2022 Megatron stack priced as megatron-legacy with unfused attention
#:    (NeMo had no FlashAttention then) and dropout; GBS 2,048 for the 5B scaling rows (1,440 does not divide at 8 and
#:    16 nodes; the rate moves < 1% with it); for 175B full recompute without sequence parallelism: the stored yaml
#:    sets SP + selective recompute, which the same README credits with "~30%" faster training than its tables (priced
#:    that way the rows come out +31% to +39%).
#: 2. pytorch/torchtitan docs/performance.md, the 2024-08 revision (index id 17054842945): Llama 3.1 405B on 128 H100
#:    (94 GB), FSDP 16 x TP 8, local batch 2, full AC: Float8 177 and Float8 + async TP 185 tokens/s/GPU (its bf16 row,
#:    109, is in PUBLIC_CHECKS). [B]: seq 8,192 (torchtitan's default), async TP under torch.compile.
#: 3. pytorch/torchtitan docs/dsv3_671b_dist_moe_256gpu_report.md @ 1ec9e872: DeepSeek-V3 on 64 x 4 GB300, seq 4,096,
#:    16,777,216 tokens per step, BF16 parameters with MXFP8 DistMoE experts, FSDP (reshard_after_forward never), EP 64,
#:    no recompute, one CUDA graph of the whole step: PP1 (16 microbatches) 5,822.00, PP2 / VPP8 (32 microbatches)
#:    5,615.50, PP2 / VPP8 with MTP 5,548.44 tokens/s/GPU (the eager column); peaks 265.08 / 263.25 / 238.30 GiB.
#:    [B]: the fused, graph-captured step priced with the torchtitan-compile profile (the eager profile's element-wise
#:    term gives -54% to -56%), fp8-mixed for the MXFP8 recipe, microbatch 1.
#: 4. pytorch/torchtitan docs/chunked_loss.md @ 94609ad7: Qwen3-14B (benchmarks/models/qwen3-14b.config.json) on 8
#:    H100 with TP 4 x DP 2, 327,680 tokens per DP rank, varlen attention with an 8,192 maximum context, full AC, eager
#:    model (the Inductor columns compile only the loss): 3,648 (8,192-token loss chunks) and 3,537 (1,024) tokens/s/GPU,
#:    83.56 GiB. [B]: H100 96GB (the peak is above 80 GB), documents priced as full 8,192-token sequences (40 per rank
#:    in one microbatch), the chunks as the profile's loss_chunks. Without the eager profile's sequence-dim copies
#:    (sp_seq_dim_copies): that torchtitan folds the batch and sequence dims before its sequence-parallel collectives
#:    (pytorch/torchtitan PR #4121, 2026-08), so no copy is made.
#: 5. pytorch/ao torchao/prototype/mx_formats/README.md @ 09f13255 "Training e2e benchmarks on NVIDIA B200" (also
#:    torchtitan docs/mxfp8.md @ 0d481060): Llama 3 8B on 8 "power limited" B200, torchtitan with torch.compile, FSDP2,
#:    per-op SAC, batch 1 x 8,192: bf16 8,307.5, float8 tensorwise 10,417.0, mxfp8_cublas 9,969.0, mxfp8_cublas_rceil
#:    9,642.0, float8 rowwise 8,640.5 tokens/s/GPU. [B]: the power limit is not given (priced at the preset's full
#:    power); the fp8 recipes priced alike. The Llama 4 Scout MoE rows of docs/mxfp8.md are left out: their stated
#:    setup (local batch 10 x 8,192 with no recompute) cannot fit a GB200, and the text gives 256 and 512 GPUs.
_NEMO22 = "bf16-mixed-fp32-grads+dropout=True+attention=naive"
_NEMO22_B = "[B: 2022 recipe, megatron-legacy, unfused attention, dropout"
NEMO_LAUNCHER_GPT3 = (
    *((f"{_NEMO22_B}, GBS 2,048] NeMo-Megatron Launcher README: GPT-3 5B TP2 MBS2, {nodes} DGX A100 80GB node"
       f"{'s' if nodes > 1 else ''}", "gpt3-5b", "A100 80GB", "megatron-legacy", _NEMO22, 8 * nodes, 2048, 2048,
       dict(dp=4 * nodes, zero_stage=0, tp=2, microbatch_size=2, recompute="none"), round(total / (8 * nodes), 1), None)
      for nodes, total in ((1, 40345), (2, 79815), (4, 161754), (8, 312774), (16, 659481), (32, 1159288))),
    (f"{_NEMO22_B}] NeMo-Megatron Launcher README: GPT-3 5B TP2 MBS2 convergence run, GBS 1,440, 160 A100 80GB",
     "gpt3-5b", "A100 80GB", "megatron-legacy", _NEMO22, 160, 2048, 1440,
     dict(dp=80, zero_stage=0, tp=2, microbatch_size=2, recompute="none"), round(726384 / 160, 1), None),
    *((f"{_NEMO22_B}, full AC without SP] NeMo-Megatron Launcher README: GPT-3 175B TP8 PP8 MBS2, GBS 1,536, {nodes} "
       "DGX A100 80GB nodes", "gpt3-175b", "A100 80GB", "megatron-legacy", _NEMO22, 8 * nodes, 2048, 1536,
       dict(dp=nodes // 8, zero_stage=0, tp=8, pp=8, microbatch_size=2, recompute="full"), round(total / (8 * nodes), 1),
       None)
      for nodes, total in ((8, 7500), (16, 14950), (32, 29537), (64, 58211), (128, 109684))),
)
TORCHTITAN_405B_FLOAT8 = (
    ("[B: seq 8192] torchtitan performance.md (2024-08): Llama 3.1 405B FSDP 16 x TP 8, Float8, full AC, 128 H100",
     "llama-3.1-405b", H96, "torchtitan", "fp8-mixed", 128, 8192, 32,
     dict(dp=16, zero_stage=3, tp=8, sp=True, microbatch_size=2, recompute="full"), 177.0, None),
    ("[B: seq 8192, compiled] torchtitan performance.md (2024-08): Llama 3.1 405B FSDP 16 x TP 8, Float8 + async TP, "
     "full AC, 128 H100", "llama-3.1-405b", H96, "torchtitan-compile", "fp8-mixed", 128, 8192, 32,
     dict(dp=16, zero_stage=3, tp=8, sp=True, tp_overlap=True, microbatch_size=2, recompute="full"), 185.0, None),
)
_DSV3_TT = "[B: fused step under one CUDA graph priced as torchtitan-compile, MXFP8 as fp8-mixed] torchtitan DistMoE"
_DSV3_PP2 = dict(dp=128, zero_stage=3, zero3_gather="per_step", ep=64, pp=2, schedule="interleaved", virtual_stages=8,
                 microbatch_size=1, recompute="none")
TORCHTITAN_DSV3_DISTMOE = (
    # the fused step's graph keeps the gathered parameters across microbatches without pipelining, which stock
    # torchtitan does only with pp > 1 (its profile's zero3_per_step 'with_pp'): priced with that field opened
    (f"{_DSV3_TT}: DeepSeek-V3 FSDP 256 EP64 PP1, no MTP, 256 GB300", "deepseek-v3", "GB300",
     "torchtitan-compile+zero3_per_step=any", "fp8-mixed", 256, 4096, 4096,
     dict(dp=256, zero_stage=3, zero3_gather="per_step", ep=64, microbatch_size=1, recompute="none"), 5822.0, 265.08),
    (f"{_DSV3_TT}: DeepSeek-V3 FSDP 128 EP64 PP2 VPP8, no MTP, 256 GB300", "deepseek-v3", "GB300", "torchtitan-compile",
     "fp8-mixed", 256, 4096, 4096, _DSV3_PP2, 5615.5, 263.25),
    (f"{_DSV3_TT}: DeepSeek-V3 FSDP 128 EP64 PP2 VPP8, MTP 1, 256 GB300", "deepseek-v3-mtp", "GB300",
     "torchtitan-compile", "fp8-mixed", 256, 4096, 4096, _DSV3_PP2, 5548.44, 238.30),
)
TORCHTITAN_CHUNKED_LOSS = tuple(
    (f"[B: H100 96GB, full-length documents, 40 sequences per microbatch] torchtitan chunked_loss.md: Qwen3-14B TP4 DP2, "
     f"full AC, {chunk:,}-token loss chunks, 8 H100", "models/qwen3-14b.config.json", H96,
     f"torchtitan+loss_chunks={327680 // chunk}+sp_seq_dim_copies=False", "bf16-mixed-fp32-grads", 8, 8192, 80,
     dict(dp=2, zero_stage=3, tp=4, sp=True, microbatch_size=40, recompute="full"), tps, 83.56)
    for chunk, tps in ((8192, 3648.0), (1024, 3537.0)))
TORCHAO_MX_B200 = tuple(
    (f"[B: power-limited B200 (cap not given), fp8 recipes priced alike] torchao MX README (torchtitan Llama 3 8B, FSDP2 "
     f"+ compile, per-op SAC, lbs 1, seq 8192, 8 B200): {name}", "llama-3-8b", "B200", "torchtitan-compile", prec, 8,
     8192, 8, dict(dp=8, zero_stage=3, microbatch_size=1, recompute="selective"), tps, gib)
    for name, prec, tps, gib in (("bf16", "bf16-mixed-fp32-grads", 8307.5, 33.71),
                                 ("float8 tensorwise, float8 all-gather", "fp8-mixed", 10417.0, 33.38),
                                 ("mxfp8_cublas", "fp8-mixed", 9969.0, 33.88),
                                 ("mxfp8_cublas_rceil", "fp8-mixed", 9642.0, 33.88),
                                 ("float8 rowwise", "fp8-mixed", 8640.5, 33.72)))

SCOUTED_2026_12AN = (NEMO_LAUNCHER_GPT3 + TORCHTITAN_405B_FLOAT8 + TORCHTITAN_DSV3_DISTMOE + TORCHTITAN_CHUNKED_LOSS
                     + TORCHAO_MX_B200)


# ---------------------------------------------------------------------------------------------------------------
# Forty-first scouting pass (2026-12, never fitted on; SCOUTED_2026_12AO): MLPerf Training v5.1 / v6.0 Llama 3.1 8B
# logs of third parties and NVIDIA, torchtitan PRs #1690 (Qwen3-32B) and #1884 (flex attention with CP), a PithTrain
# issue timing torchtitan, and LambdaLabs' FlashAttention-2 README. Names carry _S45_ so that no earlier row's helper
# reads them.
# ---------------------------------------------------------------------------------------------------------------
# 1. MLPerf Training v5.1, Llama 3.1 8B pre-training, closed division (mlcommons/training_results_v5.1
#    @ 4da2d1cd71eb30c855dad12712480ae5ac90dd89). NeMo/Megatron-Core with TE; NVIDIA's config_common.sh
#    (NVIDIA/benchmarks/llama31_8b/implementations/nemo/config_common.sh): USE_DIST_OPTIMIZER=True (ZeRO-1),
#    FP8=True, FP8_RECIPE="tensorwise" (current scaling), FP8_PARAM_GATHER=True -> "fp8-params", overlap grad
#    reduce / param gather, CUDA graphs (config_common_cg.sh). Seq 8192 (log max_sequence_length).
#    tokens/s/GPU = global_batch_size x 8192 / train_step_time / GPUs, train_step_time = the log's block average
#    ("tracked_stats" train_step_time of the first block, logging.py line 210).
#  a) University-of-Florida/results/hpg.dgxb200x8.n1/llama31_8b/result_0.txt: 8 B200 (DGX B200, "HiPerGator"),
#     global_batch_size 16, gradient_accumulation_steps 1, block-average step 0.5387814506 s;
#     run_1n.sub sources config_DGXB200_1x8x2xtp1pp1cp1_8b.sh (not stored; name = 1 node x 8 GPUs x MINIBS 2,
#     TP1 PP1 CP1) -> DP 8, MBS 2 (16 / 8 / GA 1). 16 x 8192 / 0.53878 / 8 = 30,407.
#  b) University-of-Florida/results/hpg.dgxb200x8.n32/llama31_8b/result_0.txt: 256 B200, samples 4096 per 32 steps
#     -> GBS 128; config_DGXB200_32x8x1xtp1pp1cp2_8b.sh (stored): MINIBS 1, TP1, PP1, CP2, MBS 1 -> DP 128;
#     block-average step 0.22001852644 s. 128 x 8192 / 0.22002 / 256 = 18,616.
#  c) NVIDIA/results/theia_ngpu72_ngc25.09_nemo/llama31_8b/result_0.txt: 72 GPUs (18 nodes x 4),
#     global_batch_size 36, GA 1; config_GB300_18x4x1xtp1pp1cp2_8b.sh (README-theia_ngpu72: MINIBS 1, TP1, CP2,
#     MBS 1, SEQ_PARALLEL False) -> DP 36; block-average step 0.1461935657 s. 36 x 8192 / 0.14619 / 72 = 28,018.
#     [B: GB300 from the config name; the log's submission_platform says "18xNVIDIA GB200" and config_common sets
#     GPU_ARCH=gb200; config_common_8b.sh (not stored) might switch the recipe; fp8 tensorwise assumed]
_S45_MLPERF_FW = "megatron"
MLPERF_V51_8B = (
    ("[B: UF config file not stored (layout from its name + log); fp8 tensorwise from NVIDIA config_common] "
     "MLPerf v5.1 UF HiPerGator 8 B200: Llama 3.1 8B FP8 DP8 MBS2, GBS 16", "llama-3.1-8b", "B200", _S45_MLPERF_FW,
     "fp8-params", 8, 8192, 16, dict(dp=8, zero_stage=1, microbatch_size=2, recompute="none"),
     16 * 8192 / 0.5387814506 / 8, None),
    ("[B: fp8 tensorwise from NVIDIA config_common] MLPerf v5.1 UF HiPerGator 256 B200: Llama 3.1 8B FP8 CP2 DP128 "
     "MBS1, GBS 128", "llama-3.1-8b", "B200", _S45_MLPERF_FW, "fp8-params", 256, 8192, 128,
     dict(dp=128, cp=2, zero_stage=1, microbatch_size=1, recompute="none"), 128 * 8192 / 0.22001852644 / 256, None),
    ("[B: GB300 per config name (log says GB200); fp8 tensorwise] MLPerf v5.1 NVIDIA theia 72 GPUs: Llama 3.1 8B "
     "FP8 CP2 DP36 MBS1, GBS 36", "llama-3.1-8b", "GB300", _S45_MLPERF_FW, "fp8-params", 72, 8192, 36,
     dict(dp=36, cp=2, zero_stage=1, microbatch_size=1, recompute="none"), 36 * 8192 / 0.1461935657 / 72, None),
)

# ---------------------------------------------------------------------------------------------------------------
# 2. pytorch/torchtitan PR #1690 "[Qwen3] Add 32b training configs" (wwwjn, 2025-09-08/11;
#    https://github.com/pytorch/torchtitan/pull/1690, description). Qwen3-32B (benchmarks/models/qwen3-32b.config.json:
#    the HF config, 64 x 5120, 64 heads / 8 KV, ffn 25600, vocab 151936, untied; 32.76B parameters).
#    Memory column "81.85GiB(86.17%)" -> 95.0 GiB devices = Meta's H100 95 GiB (the H100 96GB preset, as the
#    torchtitan performance rows). torchtitan default mixed precision (bf16 params, fp32 reduce).
#    * "When torch.compile is enabled, FSDP=8 ... step: 50 ... memory: 81.85GiB ... tps: 1,874 tflops: 389.87";
#      recommended "local batch size=2, FSDP=8, full AC". Seq not printed for that line: tflops/tps = 208.04
#      GFLOP/token, the same as the seq-4096 rows below (182.14/876 = 207.9), so seq 4096. [B: seq by that ratio]
#    * table "Local bs (gbs) | seq_len | Training parallelism | Performance" (no compile):
#      16 (64) | 4096 | fsdp 4, tp 8 | Full AC: step 20 memory 43.45GiB tps 876
#      32 (128) | 4096 | fsdp 4, tp 8 | Full AC: step 10 memory 70.79GiB tps 883
#      32 (256) | 4096 | Fsdp8, tp 8 | Full AC: step 70 memory 63.27GiB tps 873
#      (64 (256) fsdp 4 tp 8: OOM). torchtitan TP = sequence parallel on; async TP not mentioned (off).
#      [B: early steps (10-70) of each run; GPU count = fsdp x tp]
_S45_TT = "torchtitan"
_S45_TTC = "torchtitan-compile"
_S45_H96 = "H100 96GB"
_S45_TT_PREC = "bf16-mixed-fp32-grads"
TT_QWEN3_32B = (
    ("[B: seq 4096 from the tflops/tps ratio] torchtitan PR#1690: Qwen3-32B FSDP8, lbs 2, full AC, compile, 8 H100",
     MODELS_DIR + "qwen3-32b.config.json", _S45_H96, _S45_TTC, _S45_TT_PREC, 8, 4096, 16,
     dict(dp=8, zero_stage=3, microbatch_size=2, recompute="full"), 1874, 81.85),
    ("[B: step 20 of the run] torchtitan PR#1690: Qwen3-32B FSDP4 x TP8, lbs 16, full AC, eager, 32 H100",
     MODELS_DIR + "qwen3-32b.config.json", _S45_H96, _S45_TT, _S45_TT_PREC, 32, 4096, 64,
     dict(dp=4, zero_stage=3, tp=8, sp=True, microbatch_size=16, recompute="full"), 876, 43.45),
    ("[B: step 10 of the run] torchtitan PR#1690: Qwen3-32B FSDP4 x TP8, lbs 32, full AC, eager, 32 H100",
     MODELS_DIR + "qwen3-32b.config.json", _S45_H96, _S45_TT, _S45_TT_PREC, 32, 4096, 128,
     dict(dp=4, zero_stage=3, tp=8, sp=True, microbatch_size=32, recompute="full"), 883, 70.79),
    ("[B: step 70 of the run] torchtitan PR#1690: Qwen3-32B FSDP8 x TP8, lbs 32, full AC, eager, 64 H100",
     MODELS_DIR + "qwen3-32b.config.json", _S45_H96, _S45_TT, _S45_TT_PREC, 64, 4096, 256,
     dict(dp=8, zero_stage=3, tp=8, sp=True, microbatch_size=32, recompute="full"), 873, 63.27),
)

# ---------------------------------------------------------------------------------------------------------------
# 3. mlc-ai/pith-train issue #79 (DAN-DNA-AND, 2026-07-22; https://github.com/mlc-ai/pith-train/issues/79):
#    TorchTitan, Qwen3-30B-A3B, one 8 x B200 node, "BF16, seq8192, FSDP8, EP1, PP1, MBS8, GBS64, Selective activation
#    checkpointing, Eight loss chunks, Compiled Transformer blocks and loss": "stable steps reached 19.41k, 19.53k,
#    and 19.52k tokens/s/GPU, with 141.79 GiB peak memory per GPU" -> mean of the three 19,487. Real checkpoint and
#    DCLM data (routing not forced). The same issue's PithTrain EP4/PP2 run (~17.5k) is not priced (framework and
#    schedule not expressible). [B: selective AC = the profile's op-level selective recompute; real routing priced
#    with the default imbalance; fp32 gradient reduce = torchtitan default]
PITH_TT_QWEN3_MOE = (
    ("[B: selective AC as op-level; default routing imbalance] pith-train#79: TorchTitan Qwen3-30B-A3B FSDP8 EP1, "
     "MBS8, 8 loss chunks, compile, 8 B200", "qwen3-30b-a3b", "B200", _S45_TTC + "+loss_chunks=8", _S45_TT_PREC, 8, 8192, 64,
     dict(dp=8, zero_stage=3, microbatch_size=8, recompute="selective"), (19410 + 19530 + 19520) / 3, 141.79),
)

# ---------------------------------------------------------------------------------------------------------------
# 4. LambdaLabsML/examples flash-attention-2/README.md @ 1884943455184be70dd73109f6cd81cf613b156a ("Results":
#    gpt3-2.7B-flash with FlashAttention 2, table Configurations / Iter/Sec / Tokens/Sec / BS_per_GPU /
#    Memory_per_GPU (GB)): A100 80GB SXM4 2.6 it/s 10649.6 tok/s; H100 80GB SXM5 5.44 / 22282.24; 8xA100 2.5 / 81920;
#    8xH100 5.34 / 174981.12; BS_per_GPU 4. Tokens/Sec = it/s x 4 x 1024 (x GPUs): sequence 1024 (owt datamodule).
#    Config: LambdaLabsML/flash-attention training/configs/experiment/owt/gpt3-2.7B-flash.yaml @ 81796d35 (n_embd 2560,
#    n_head 32, n_layer 32, mlp_checkpoint_lvl 0, batch_size 4) -> owt/gpt3xl-flash.yaml @ 1fc928ca (global_batch_size
#    512, DDPStrategyZero1 = ZeRO-1) -> owt/base.yaml (Dao-AILab @ 0bf5e500: max_length 1024, precision 16 = fp16 AMP,
#    Apex cross-entropy inplace_backward). GA = 512 / (GPUs x 4) (128 on 1 GPU, 16 on 8). Model:
#    benchmarks/models/flashattn-gpt3-2.7b-owt-1024.config.json (2.649B; vocab 50257 padded to 50264 as the flash-attn
#    GPT config pads to a multiple of 8; learned positions 1024; tied). Priced as public_runs.SCOUTED_2026_12R prices
#    the same code base (pytorch-fsdp + in-place loss, fp32 gradients, dropout on).
#    tokens/s/GPU: 10649.6, 22282.24, 81920/8 = 10240, 174981.12/8 = 21872.64. Memory column 73 / 56 GB.
#    [B: fp16 AMP priced as bf16 (same tensor rate); "Iter/Sec" read as micro-batch iterations (it matches the
#    Tokens/Sec column exactly)]
_S45_FA_FW = "pytorch-fsdp+loss=in_place"
_S45_FA_PREC = "bf16-mixed-fp32-grads+dropout=True"
_S45_FA_M = MODELS_DIR + "flashattn-gpt3-2.7b-owt-1024.config.json"
LAMBDA_FA2 = (
    ("[A] LambdaLabs FA2 README: GPT3-2.7B (hdim 80) seq 1024, 1 A100 80GB, mbs 4, GA 128", _S45_FA_M, "A100 80GB",
     _S45_FA_FW, _S45_FA_PREC, 1, 1024, 512, dict(dp=1, zero_stage=0, microbatch_size=4, recompute="none"), 10649.6, None),
    ("[A] LambdaLabs FA2 README: GPT3-2.7B (hdim 80) seq 1024, 1 H100 80GB, mbs 4, GA 128", _S45_FA_M, "H100",
     _S45_FA_FW, _S45_FA_PREC, 1, 1024, 512, dict(dp=1, zero_stage=0, microbatch_size=4, recompute="none"), 22282.24, None),
    ("[A] LambdaLabs FA2 README: GPT3-2.7B (hdim 80) seq 1024, 8 A100 80GB, DDP ZeRO-1, mbs 4, GA 16", _S45_FA_M,
     "A100 80GB", _S45_FA_FW, _S45_FA_PREC, 8, 1024, 512, dict(dp=8, zero_stage=1, microbatch_size=4, recompute="none"),
     81920 / 8, None),
    ("[A] LambdaLabs FA2 README: GPT3-2.7B (hdim 80) seq 1024, 8 H100 80GB, DDP ZeRO-1, mbs 4, GA 16", _S45_FA_M,
     "H100", _S45_FA_FW, _S45_FA_PREC, 8, 1024, 512, dict(dp=8, zero_stage=1, microbatch_size=4, recompute="none"),
     174981.12 / 8, None),
)

# ---------------------------------------------------------------------------------------------------------------
# 5. MLPerf Training v6.0, ASUSTeK, Llama 3.1 8B (fork Richardyu114/training_results_v6.0
#    @ eabf23a07b2a0c60a289ff871dc3a46fff0d0421): ASUSTeK/benchmarks/llama31_8b/implementations/nemo/
#    config_XA_NB3I_E12.sh (1 node x 8 GPUs, MINIBS 2, MICRO_BATCH_SIZE 2, TP1 PP1 CP1, CE_FUSION_IMPL=te, sources
#    config_common_cg.sh, config_common_fp8attn.sh and config_common_fp4.sh -> NVFP4 linears, fp8 attention) and
#    config_common_8b.sh (FP8_HYBRID, NVFP4 2D quantization + stochastic rounding). Log
#    ASUSTeK/results/XA_NB3I_E12/llama31_8b/result_1.txt: global_batch_size 16, gradient_accumulation_steps 1,
#    max_sequence_length 8192, first-block average train_step_time 0.3995160616 s (callback_logging.py line 286).
#    16 x 8192 / 0.39952 / 8 = 41,009 tokens/s/GPU. Cross-check: public_runs holds Cisco's v6.0 C880A 8 x B300 NVFP4
#    DP8 MBS2 GBS 16 row (same recipe family).
#    [B: B300 from the system name XA NB3I-E12 (the log's platform is a placeholder; systems json not read);
#    ZeRO-1 (distributed optimizer, NVIDIA's config_common); fp8 attention priced as the nvfp4 policy prices it]
MLPERF_V60_ASUS = (
    ("[B: B300 from the system name; ZeRO-1] MLPerf v6.0 ASUSTeK XA NB3I-E12 8 GPUs: Llama 3.1 8B NVFP4 DP8 MBS2, "
     "GBS 16", "llama-3.1-8b", "B300", "megatron+loss=in_place", "nvfp4-mixed", 8, 8192, 16,
     dict(dp=8, zero_stage=1, microbatch_size=2, recompute="none"), 16 * 8192 / 0.3995160616 / 8, None),
)

# ---------------------------------------------------------------------------------------------------------------
# 6. pytorch/torchtitan PR #1884 "[llama3-8B] add flex_attention model flavor" (XilunWu, 2025-10-15;
#    https://github.com/pytorch/torchtitan/pull/1884, "Test"): CONFIG_FILE=llama3_8b.toml NGPU=4 --model.flavor
#    "8B_flex_attn" --activation_checkpoint.mode "full" --parallelism.context_parallel_degree 2; log rank2/3 "step: 10
#    ... memory: 44.84GiB(47.19%) tps: 5,615 tflops: 325.20". 44.84 / 0.4719 = 95.0 GiB -> H100 95 GiB. Seq 8192:
#    325.20e12 / 5615 = 57.9 GFLOP/token = torchtitan's 6 x 7.50e9 + 12 x 32 x 32 x 128 x 8192 (57.9e9).
#    FSDP over the remaining 2 ranks (data_parallel_shard_degree -1). [B: local batch 1 (the toml's default; not in
#    the PR); step 10 of a test run; FlexAttention priced as the profile's attention kernel; eager (no --compile)]
TT_FLEX = (
    ("[B: lbs 1 from llama3_8b.toml; step 10; flex priced as SDPA] torchtitan PR#1884: Llama 3 8B flex attn, CP2 x "
     "FSDP2, full AC, 4 H100", "llama-3.1-8b", _S45_H96, _S45_TT, _S45_TT_PREC, 4, 8192, 2,
     dict(dp=2, cp=2, zero_stage=3, microbatch_size=1, recompute="full"), 5615, 44.84),
)

SCOUTED_2026_12AO = (*MLPERF_V51_8B, *MLPERF_V60_ASUS, *TT_QWEN3_32B, *PITH_TT_QWEN3_MOE, *LAMBDA_FA2, *TT_FLEX)


# ---------------------------------------------------------------------------------------------------------------
# Forty-second scouting pass (2026-12, never fitted on; SCOUTED_2026_12AP). Names carry _S45B_.
#: Second scouting pass of session 45 (never fitted on): MLPerf Training v5.1 Llama 3.1 8B pre-training runs of third
#: parties (Lambda, Nebius, Dell, Supermicro, Oracle) and NVIDIA's 512-GPU runs (GB300 theia, GB200 tyche).
#:
#: Row format: public_runs.check_inputs ``(label, model, hardware, framework, precision, devices, seq_len, global batch,
#: layout, reported tokens/s/GPU, reported GiB or None)``.
#:
#: Source for every row: mlcommons/training_results_v5.1 @ 4da2d1cd71eb30c855dad12712480ae5ac90dd89 (closed division).
#: Every third-party log prints NeMo's full "Experiment configuration" dump near its start (micro_batch_size,
#: tensor/pipeline/context_parallel_size, global_batch_size, fp8 / fp8_recipe / fp4 / fp4_recipe, fp8_dot_product_attention,
#: use_transformer_engine_op_fuser, cross_entropy_fusion_impl, optim.use_distributed_optimizer, optim.fp8_param_gather,
#: overwritten_attributes.enable_cuda_graph / cuda_graph_scope, activations_checkpoint_granularity) and a ":::SYSJSON" line
#: with accelerator_model_name; where that dump was read the row says "log config dump". Common to all dumps read:
#: distributed optimizer (-> zero_stage 1), no activation checkpointing, sequence_parallel false (TP 1), TE cross-entropy
#: (cross_entropy_fusion_impl: te -> 'megatron+loss=in_place', as public_runs prices the v6.0 Cisco / ASUSTeK rows),
#: use_transformer_engine_op_fuser true (dense model: no eager op of the profile affected), seq 8192
#: (encoder_seq_length / max_sequence_length).
#: Precision: fp8 tensorwise with fp8_param_gather true -> 'fp8-params' (as MLPERF_V51_8B); fp4 nvfp4 (fp8 DPA, no fp8
#: param gather) -> 'nvfp4-mixed' (as MLPERF_V60_ASUS / V60_CISCO_B300; the NVFP4 recipe's details -- which layers stay
#: bf16, 2D quantization, stochastic rounding -- are not modelled, hence [B] on every nvfp4 row).
#: Step time: the log's run-end line "Average train_step_time <s>" (mlperf_common callback average over the whole run),
#: or, where that line is absent, the last training block's tracked_stats train_step_time (logging.py lineno 210).
#: GBS checked against the log's samples_count increment per step. tokens/s/GPU = GBS x 8192 / step / GPUs.
#: CUDA graphs (full / full_iteration) are not priced (the planner has no launch-overhead term for them).



_S45B_FW = "megatron+loss=in_place"
_S45B_FP8 = "fp8-params"
_S45B_FP4 = "nvfp4-mixed"
_S45B_DP = dict(zero_stage=1, recompute="none")


def _s45b_row(label, hw, prec, n, gbs, step_s, **lay):
    """One MLPerf v5.1 Llama 3.1 8B row: ``n`` GPUs, ``gbs`` sequences of 8,192 tokens, ``step_s`` seconds per step
    -> tokens/s/GPU = gbs x 8192 / step_s / n; ZeRO-1, no recompute, the layout fields ``lay``."""
    return (label, "llama-3.1-8b", hw, _S45B_FW, prec, n, 8192, gbs, dict(_S45B_DP, **lay), gbs * 8192 / step_s / n, None)


# ---------------------------------------------------------------------------------------------------------------
# 1. Lambda, 18 x 4 GB300 (72 GPUs). Config Lambda/benchmarks/llama31_8b/implementations/gb300_0922/
#    config_GB300_18x4x1xtp1pp1cp2_8b.sh (sources config_GB200_18x4x1xtp1pp1cp2_8b.sh, NOT stored) + config_common.sh
#    (USE_DIST_OPTIMIZER, FP8, FP8_RECIPE tensorwise, FP8_PARAM_GATHER) + config_common_8b.sh (CE_FUSION_IMPL=te).
#    Log Lambda/results/gb300_n18_ngc25.04_nemo/llama31_8b/result_1.txt: SYSJSON accelerator "NVIDIA GB300"; config dump
#    (offset ~53k): micro_batch_size 1, TP 1, PP 1, CP 2, global_batch_size 36, fp8 true / tensorwise, fp4 false,
#    fp8_param_gather true, distributed optimizer, cuda_graph_scope full_iteration; MLLOG global_batch_size 36,
#    gradient_accumulation_steps 1.0; samples_count 172800 -> 173952 over 32 steps = 36/step.
#    "Average train_step_time 0.16250409094678495" -> 36 x 8192 / 0.162504 / 72 = 25,206.
#    [A] (layout and precision from the run's own config dump)
# 2. Nebius (Nebius/benchmarks/llama31_8b/configs/nebius_b{200,300}_n*/config_*.sh, all stored; each sources
#    config_common.sh (stored in nebius_b200_n1: dist optimizer, FP8 tensorwise), config_common_fp4.sh, config_common_8b.sh,
#    config_common_cg.sh, config_common_fp8attn.sh (those four not stored for Nebius' 8B):
#    a) nebius_b200_n1 config_DGXB200_1x8x2xtp1pp1cp1_8b_fp4.sh: MINIBS 2, MBS 2, TP1 PP1 CP1, FULL_CUDA_GRAPH=0;
#       results/nebius_b200_n1/llama31_8b/result_01.txt: samples 172032 at step 10752 -> GBS 16;
#       "Average train_step_time 0.4597740015458493" -> 16 x 8192 / 0.45977 / 8 = 35,634.
#    b) nebius_b200_n2 config_DGXB200_2x8x2xtp1pp1cp1_8b_fp4.sh: 16 GPUs, MINIBS 2, MBS 1 (GA 2), FULL_CUDA_GRAPH=0;
#       result_1.txt: 196608 at step 6144 -> GBS 32; average 0.4952020876808092 -> 32 x 8192 / 0.49520 / 16 = 33,085.
#    c) nebius_b200_n4 config_DGXB200_4x8x1xtp1pp1cp1_8b_fp4.sh: 32 GPUs, MINIBS 1, MBS 1, FULL_CUDA_GRAPH=0;
#       result_01.txt: 233472 at step 7296 -> GBS 32; average 0.26822549085083763 -> 32 x 8192 / 0.26823 / 32 = 30,541.
#    d) nebius_b300_n1 config_DGXB200_1x8x2xtp1pp1cp1_8b.sh (sources config_common_fp4.sh last): MINIBS 2, MBS 2,
#       USE_TE_OPS, CE te; result_1.txt: SYSJSON "NVIDIA B300 SXM6 AC" (275040 MiB), DLPAL DGXB200_1x8x2xtp1pp1cp1_8b,
#       log config dump: MBS 2, GBS 16, fp8 false / fp4 true nvfp4, fp8 DPA true, fp8_param_gather false, dist optimizer,
#       CUDA graph full_iteration; 184320 at step 11520 -> 16/step; average 0.3978111646448573
#       -> 16 x 8192 / 0.39781 / 8 = 41,184 (cf. the v6.0 ASUSTeK / Cisco B300 NVFP4 rows: 41,009 / 41,110).
#    [B: nvfp4 recipe details] all four; a-c also [B: log config dump not read; fp4 from the config file names].
# 3. Dell (Dell/benchmarks/llama31_8b/implementations/nemo/; config_common*.sh not stored for Dell):
#    a) results/1xXE9680Lx8B200-SXM-180GB/llama31_8b/result_0.txt: 8 B200; the one 1-node XE9680L config is
#       config_1xXE9680Lx8B200-SXM-180GB.sh (sources config_common_fp4.sh; MINIBS 2, MBS 2, TP1 PP1 CP1,
#       FULL_CUDA_GRAPH=0); 184320 at step 11520 -> GBS 16; no run-end average line, last block train_step_time
#       0.4507862185065126 -> 16 x 8192 / 0.45079 / 8 = 36,346. [B: config matched by system name (log dump not read);
#       nvfp4 recipe details; last block]
#    b) results/2xXE9680Lx8B200-SXM-180GB/llama31_8b/result_0.txt: 16 B200, config_2xXE9680Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1_8b.sh
#       (FP8: no fp4 common sourced; MINIBS 2, MBS 2, TP1 PP1 CP1, USE_TE_OPS, CE te); 196608 at step 6144 -> GBS 32;
#       average 0.5936232063686475 -> 32 x 8192 / 0.59362 / 16 = 27,600. [B: fp8 tensorwise + fp8 params from
#       NVIDIA's config_common (Dell's not stored; log dump not read)]
#    c) results/1xXE9780x8B300-SXM-270GB/llama31_8b/result_0.txt: 8 B300 (platform 1xXE9780x8B300-SXM-270GB),
#       config_XE9780x8B300-SXM-270GB_1x8x2xtp1pp1cp1_8b.sh; log config dump (offset ~11k): MBS 2, GBS 16, fp8 true
#       tensorwise, fp4 false, fp8 DPA false, fp8_param_gather true, dist optimizer, CUDA graph full_iteration;
#       159744 at step 9984 -> 16/step; average 0.5476646529844938 -> 16 x 8192 / 0.54766 / 8 = 29,915. [A]
#    (results/2xXE9685Lx8B200-SXM-180GB: 2.4 MB log, run-end average not located in the tail: skipped)
# 4. Supermicro:
#    a) results/AS-4126GS-NBR-LCC/llama31_8b/result_1.txt: DLPAL AS-4126GS-NBR-LCC_1x8x2xtp1pp1cp1_8b_fp4 (config file
#       not stored, only config_common.sh); SYSJSON "NVIDIA B200"; log config dump: MBS 2, GBS 16, TP1 PP1 CP1, fp4 true
#       nvfp4, fp8 DPA true, fp8_param_gather false, dist optimizer, cuda_graph_scope full; 184320 at step 11520;
#       average 0.45357042557249466 -> 16 x 8192 / 0.45357 / 8 = 36,124. [B: nvfp4 recipe details]
#    b) results/AS-8126GS-NB3RT/llama31_8b/result_1.txt: DLPAL DGXB200_1x8x2xtp1pp1cp1_8b (config
#       benchmarks/llama31_8b/implementations/AS-8126GS-NB3RT/config_DGXB200_1x8x2xtp1pp1cp1_8b.sh stored);
#       SYSJSON "NVIDIA B300 SXM6 AC"; log config dump: MBS 2, GBS 16, fp8 true tensorwise, fp4 false, fp8_param_gather
#       true, dist optimizer, enable_cuda_graph 0 (no CUDA graph); 159744 at step 9984; average 0.5503755719759144
#       -> 16 x 8192 / 0.55038 / 8 = 29,768. [A]
#    (results/SYS-422GS-NBRT-LCC: 8 GPUs, GBS 16, average 0.4548827954346225, but neither stored config of that system
#    (8x8x1 CP2, GB200 2x4x2) matches an 8-GPU run and its dump was not read: skipped)
# 5. Oracle (benchmarks/llama31_8b/run_llama31-8b.sh sources config_DGXB200_8x8x1xtp1pp1cp2_8b.sh, the 1-node configs
#    commented out; the config files themselves are not stored; systems/*BM.GPU.B200.8.json):
#    a) results/1xBM.GPU.B200.8/llama31_8b/result_0.txt: log config dump: MBS 2, GBS 16, TP1 PP1 CP1, fp4 true nvfp4,
#       fp8 DPA, fp8_param_gather false, dist optimizer, cuda_graph_scope full; 172032 at step 10752;
#       average 0.45745431294753436 -> 16 x 8192 / 0.45745 / 8 = 35,815. [B: nvfp4 recipe details]
#    b) results/8xBM.GPU.B200.8/llama31_8b/result_0.txt (64 B200): log config dump (offset ~43k): MBS 1, TP1 PP1 CP2,
#       GBS 32 (DP 32, GA 1), fp8 true tensorwise, fp4 false, fp8_param_gather true, dist optimizer, CUDA graph
#       full_iteration; 184320 at step 5760 -> 32/step; average 0.19115092050698068 -> 32 x 8192 / 0.19115 / 64 = 21,429. [A]
# 6. NVIDIA 512-GPU runs (NeMo 25.09):
#    a) theia_ngpu512 (README names config_GB300_128x4x1xtp2pp1cp4_8b.sh, stored in NVIDIA/benchmarks/llama31_8b/
#       implementations/nemo/: MINIBS 1, TP 2, SEQ_PARALLEL True, PP 1, CP 4, TP_COMM_OVERLAP True, MBS 1,
#       USE_TE_OPS False, NVTE_DPA_FP8_RECIPE F16, 128 nodes x 4) + nemo/config_common.sh (dist optimizer, FP8 tensorwise,
#       FP8 param gather) -> GBS = 512 / (2 x 4) = 64; results/theia_ngpu512_ngc25.09_nemo/llama31_8b/result_0.txt:
#       221184 at step 3456 -> 64/step; no run-end average line: last block train_step_time 0.08661875362499434
#       -> 64 x 8192 / 0.086619 / 512 = 11,822. [B: last block; GB300 per the config name (log dump not read)]
#    b) tyche_ngpu512 (README names config_GB200_128x4x1xtp2pp1cp4_8b.sh, NOT stored): layout from the name and the
#       stored GB300 twin; result_0.txt: 64/step, last block 0.09017478047396328 -> 64 x 8192 / 0.090175 / 512 = 11,356.
#       [B: GB200 config not stored (TP overlap / SP as the GB300 twin); last block]
# ---------------------------------------------------------------------------------------------------------------
_S45B_TAG = "MLPerf v5.1"
SCOUTED_2026_12AP = (
    _s45b_row(f"[A] {_S45B_TAG} Lambda 18 x 4 GB300: Llama 3.1 8B FP8 CP2 DP36 MBS1, GBS 36, 72 GPUs", "GB300", _S45B_FP8, 72, 36,
         0.16250409094678495, dp=36, cp=2, microbatch_size=1),
    _s45b_row(f"[B: nvfp4 recipe; fp4 from config name] {_S45B_TAG} Nebius 1 x 8 B200: Llama 3.1 8B NVFP4 DP8 MBS2, GBS 16",
         "B200", _S45B_FP4, 8, 16, 0.4597740015458493, dp=8, microbatch_size=2),
    _s45b_row(f"[B: nvfp4 recipe; fp4 from config name] {_S45B_TAG} Nebius 2 x 8 B200: Llama 3.1 8B NVFP4 DP16 MBS1 GA2, GBS 32",
         "B200", _S45B_FP4, 16, 32, 0.4952020876808092, dp=16, microbatch_size=1),
    _s45b_row(f"[B: nvfp4 recipe; fp4 from config name] {_S45B_TAG} Nebius 4 x 8 B200: Llama 3.1 8B NVFP4 DP32 MBS1, GBS 32",
         "B200", _S45B_FP4, 32, 32, 0.26822549085083763, dp=32, microbatch_size=1),
    _s45b_row(f"[B: nvfp4 recipe] {_S45B_TAG} Nebius 1 x 8 B300: Llama 3.1 8B NVFP4 DP8 MBS2, GBS 16", "B300", _S45B_FP4, 8, 16,
         0.3978111646448573, dp=8, microbatch_size=2),
    _s45b_row(f"[B: config by system name; nvfp4 recipe; last block] {_S45B_TAG} Dell XE9680L 8 B200: Llama 3.1 8B NVFP4 DP8 "
         "MBS2, GBS 16", "B200", _S45B_FP4, 8, 16, 0.4507862185065126, dp=8, microbatch_size=2),
    _s45b_row(f"[B: fp8 params from NVIDIA config_common] {_S45B_TAG} Dell 2 x XE9680L 16 B200: Llama 3.1 8B FP8 DP16 MBS2, "
         "GBS 32", "B200", _S45B_FP8, 16, 32, 0.5936232063686475, dp=16, microbatch_size=2),
    _s45b_row(f"[A] {_S45B_TAG} Dell XE9780 8 B300: Llama 3.1 8B FP8 DP8 MBS2, GBS 16", "B300", _S45B_FP8, 8, 16, 0.5476646529844938,
         dp=8, microbatch_size=2),
    _s45b_row(f"[B: nvfp4 recipe] {_S45B_TAG} Supermicro AS-4126GS-NBR-LCC 8 B200: Llama 3.1 8B NVFP4 DP8 MBS2, GBS 16", "B200",
         _S45B_FP4, 8, 16, 0.45357042557249466, dp=8, microbatch_size=2),
    _s45b_row(f"[A] {_S45B_TAG} Supermicro AS-8126GS-NB3RT 8 B300: Llama 3.1 8B FP8 DP8 MBS2 (no CUDA graph), GBS 16", "B300",
         _S45B_FP8, 8, 16, 0.5503755719759144, dp=8, microbatch_size=2),
    _s45b_row(f"[B: nvfp4 recipe] {_S45B_TAG} Oracle BM.GPU.B200.8 8 B200: Llama 3.1 8B NVFP4 DP8 MBS2, GBS 16", "B200", _S45B_FP4,
         8, 16, 0.45745431294753436, dp=8, microbatch_size=2),
    _s45b_row(f"[A] {_S45B_TAG} Oracle 8 x BM.GPU.B200.8 64 B200: Llama 3.1 8B FP8 CP2 DP32 MBS1, GBS 32", "B200", _S45B_FP8, 64, 32,
         0.19115092050698068, dp=32, cp=2, microbatch_size=1),
    _s45b_row(f"[B: last block; GB300 per config name] {_S45B_TAG} NVIDIA theia 512 GB300: Llama 3.1 8B FP8 TP2 SP CP4 DP64 MBS1, "
         "GBS 64", "GB300", _S45B_FP8, 512, 64, 0.08661875362499434, tp=2, sp=True, tp_overlap=True, cp=4, dp=64,
         microbatch_size=1),
    _s45b_row(f"[B: GB200 config not stored; last block] {_S45B_TAG} NVIDIA tyche 512 GB200: Llama 3.1 8B FP8 TP2 SP CP4 DP64 "
         "MBS1, GBS 64", "GB200", _S45B_FP8, 512, 64, 0.09017478047396328, tp=2, sp=True, tp_overlap=True, cp=4, dp=64,
         microbatch_size=1),
)


# ---------------------------------------------------------------------------------------------------------------
# Forty-third scouting pass (2026-12, never fitted on; SCOUTED_2026_12AQ). Names carry _S46_.
#: pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md @ c720cb872308d6d179b7fb3a4d6ff6ed8029bc27
#: (the revision with the tables; later revisions show them as an image): PyTorch team, June 2025, Grand Teton H100 96 GB
#: HBM2e at the default 500 W (the page), 400 Gb/s RDMA per GPU; torch 38410cf9 (2025-06-14). "tokens/sec" per GPU (the
#: same page family's convention: its Llama 3 70B float8 vanilla-TP figure 809.8 matches the 2024-12 page's Table 4, 829
#: TPS/GPU). Commands on the current revision of the page: llama3_70b.toml --activation_checkpoint.mode=full
#: --training.local-batch-size=16 --training.compile --parallelism.tensor_parallel_degree=8 (FSDP 32 on 256 GPUs), and
#: llama3_8b.toml --activation_checkpoint.mode=selective --selective_ac_option=op --training.local-batch-size=12
#: --training.compile --parallelism.tensor_parallel_degree=8 (FSDP 8 on 64 GPUs); --model.converters=float8 for the
#: float8 tensorwise rows; --parallelism.enable_async_tensor_parallel for the async TP rows (tp_overlap).
#: Layout: FSDP (ZeRO-3) x TP 8 with sequence parallelism (torchtitan's TP plan), seq 8192 (both tomls' seq_len),
#: microbatch = local batch, global batch = local batch x FSDP degree. Profile torchtitan-compile (2025 torchtitan compiles
#: the blocks and the loss). Float8 tensorwise priced as fp8-mixed (the tomls keep enable_fsdp_float8_all_gather off).
#: Left out: the float8 rowwise rows (the page itself says the vanilla-TP rowwise baseline is a bug being fixed,
#: pytorch/torchtitan#1207). [B] on every row: the 500 W power cap priced at the preset's H100 96GB peaks.
_S46_TT = "torchtitan-compile"
_S46_B = "[B: 500 W cap at preset peaks] torchtitan asyncTP benchmark (2025-06, H100 96GB):"
TT_ASYNC_TP_2025 = tuple(
    (f"{_S46_B} Llama 3.1 {size} FSDP {fsdp} x TP 8, {prec_name}, {'async' if overlap else 'vanilla'} TP, "
     f"{fsdp * 8} H100", model, H96, _S46_TT, prec, fsdp * 8, 8192, fsdp * lbs,
     dict(dp=fsdp, zero_stage=3, tp=8, sp=True, tp_overlap=overlap, microbatch_size=lbs, recompute=ac), tps, None)
    for size, model, fsdp, lbs, ac, rows in (
        ("70B", "llama-3-70b", 32, 16, "full", (("bf16", "bf16-mixed", 597.3, 652.4),
                                                ("float8 tensorwise", "fp8-mixed", 809.8, 942.4))),
        ("8B", "llama-3.1-8b", 8, 12, "selective", (("bf16", "bf16-mixed", 4378.0, 4809.4),
                                                    ("float8 tensorwise", "fp8-mixed", 5078.1, 5570.1))))
    for prec_name, prec, vanilla, asynchronous in rows
    for overlap, tps in ((False, vanilla), (True, asynchronous)))
SCOUTED_2026_12AQ = TT_ASYNC_TP_2025


# ---------------------------------------------------------------------------------------------------------------
# Forty-fourth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AR). Names carry _S46B_.
#: Scouting pass of session 46 (never fitted on): MLPerf Training v6.0 runs not yet in benchmarks/public_runs.py --
#: NVIDIA's GB300 Llama 3.1 405B runs (theia-cmh, 512 and 2,048 GPUs), HPE's 72-GB300 405B run, and HPE's GB300
#: Llama 3.1 8B (16 / 32 / 72 GPUs) and GPT-OSS-20B (16 / 32 GPUs) runs.
#:
#: Row format: public_runs.check_inputs ``(label, model, hardware, framework, precision, devices, seq_len, global batch,
#: layout, reported tokens/s/GPU, reported GiB or None)``.
#:
#: Source for every row: Richardyu114/training_results_v6.0 @ eabf23a07b2a0c60a289ff871dc3a46fff0d0421 (a fork holding
#: mlcommons/training_results_v6.0; the same fork public_runs cites for the v6.0 NVIDIA / Cisco / ASUSTeK rows).
#: tokens/s/GPU = GBS x 8192 / step / GPUs; GBS = the samples_count increment per step (checked in each log); step = the
#: block-level average "tracked_stats train_step_time" of callback_logging.py lineno 286 (= block wall time / steps: for
#: HPE-GB300-ngpu72 8B, block_start 1778295001464 -> block_stop 1778295034424 = 32.960 s over 171 steps = 0.19275 s vs the
#: logged 0.192750), except the 405B rows whose blocks open with a short first step (2.44 s): there the per-step
#: lineno-328 values are read and their typical value used, as the label says. No log gives a peak memory.
#: [A]: every layout input stated by the submission's config or log; [B: ...]: what was assumed.
#: config_common*.sh files are NOT stored for any of these submissions (NVIDIA's v6.0 405B dir holds only the 2,048-GPU
#: config and two READMEs; HPE's dirs hold only the per-system configs), so the precision recipe (NVFP4 for the "_fp4"
#: configs, MXFP8 for the "_mxfp8" configs), the distributed optimizer (ZeRO-1) and the CE implementation come from the
#: file names and from the same-round NVIDIA / ASUSTeK files public_runs already cites -> [B] on every row.

_S46B_FW_TE_CE = "megatron+loss=in_place"  # cross_entropy_fusion_impl te (as the v6.0 Cisco / ASUSTeK 8B rows)
_S46B_SEQ = 8192


def _S46B_tps(gbs: int, step_s: float, n: int) -> float:
    """tokens/s/GPU of a run: gbs sequences of 8,192 tokens per step_s seconds over n GPUs."""
    return gbs * _S46B_SEQ / step_s / n


# ---------------------------------------------------------------------------------------------------------------
# 1. NVIDIA v6.0 Llama 3.1 405B on GB300 NVL72 (theia-cmh), NeMo 26.04, NVFP4.
#  a) 2,048 GPUs: NVIDIA/benchmarks/llama31_405b/implementations/theia-cmh_ngpu2048_ngc26.04_nemo/
#     config_GB300_512x4x16xtp2pp8cp2_cg_fp4.sh: MINIBS 16, TP 2, PP 8, INTERLEAVED_PIPELINE 8, CP 2, MBS 1,
#     ASYM_PP_EMBED/LOSS True, USE_TE_OPS False, NVTE_DPA_FP8_RECIPE F16, DGXNNODES 512 x 4; TP_COMM_OVERLAP not set in
#     the file (the v5.1 GB300 row of public_runs assumed True; kept). GBS = 16 x 2048 / 32 = 1024.
#     NVIDIA/results/theia-cmh_ngpu2048_ngc26.04_nemo/llama31_405b/result_0.txt: samples_count 313344 -> 314368 ->
#     315392 (1024/step); per-step lineno-328 train_step_time 3.1039 3.0864 3.1187 3.1044 3.1000 3.0826 3.0905 3.0897
#     3.0796 3.1933 3.0864 3.0821 3.0986 3.0872 3.1229 3.0972 (steps 307-323) -> median 3.0935 s; the block
#     averages (lineno 286) 3.0625 / 3.0675 / 3.0703 s include a 2.44 s first step. 1024 x 8192 / 3.09 / 2048 = 1,325.6.
#  b) 512 GPUs: README-theia-cmh_ngpu512_ngc26.04_nemo.md names config_GB300_128x4x56xtp2pp8cp2_cg_fp4.sh (NOT
#     stored): MINIBS 56, TP 2, PP 8, CP 2 from the name; VP 8, MBS 1, ASYM PP as the stored 2,048-GPU file.
#     GBS = 56 x 512 / 32 = 896; results/theia-cmh_ngpu512_ngc26.04_nemo/llama31_405b/result_0.txt: samples 301056 ->
#     301952 -> 302848 (896/step); per-step train_step_time 9.5931 9.6011 9.5909 9.6000 9.5859 9.5911 9.5878 9.5949
#     9.5917 9.5941 9.5810 9.5999 9.5985 9.5971 9.5889 9.5879 9.5881 9.6016 9.5947 (steps 337-355) -> 9.59 s
#     (block average 9.5698 incl. a 9.03 s first step). 896 x 8192 / 9.59 / 512 = 1,494.8.
#     Cross-check: public_runs' v5.1 theia 512 GB300 NVFP4 row (GBS 1152, 13.14 s) = 1,402.7.
_S46B_405 = dict(tp=2, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved", virtual_stages=8, zero_stage=1,
            microbatch_size=1)
_S46B_B405 = "[B: config_common*.sh not stored: NVFP4 from the name, ZeRO-1, TP overlap assumed]"
_S46B_NVIDIA_405B = (
    (f"{_S46B_B405} MLPerf v6.0 NVIDIA theia-cmh GB300: Llama 3.1 405B NVFP4 TP2 PP8 VP8 CP2, GBS 1024, 2,048 GPUs",
     "llama-3.1-405b", "GB300", "megatron", "nvfp4-mixed", 2048, _S46B_SEQ, 1024, dict(_S46B_405), _S46B_tps(1024, 3.09, 2048), None),
    (f"{_S46B_B405[:-1]}; config named by README, not stored] MLPerf v6.0 NVIDIA theia-cmh GB300: Llama 3.1 405B NVFP4 "
     "TP2 PP8 VP8 CP2, GBS 896, 512 GPUs", "llama-3.1-405b", "GB300", "megatron", "nvfp4-mixed", 512, _S46B_SEQ, 896,
     dict(_S46B_405), _S46B_tps(896, 9.59, 512), None),
)

# ---------------------------------------------------------------------------------------------------------------
# 2. HPE v6.0 Llama 3.1 405B on 18 x 4 GB300 (72 GPUs), NeMo 26.04 (arm container mlperftv60-llama31_405b-arm-20260428).
#    HPE/benchmarks/llama31_405b/implementations/nemo_arm_ngc26.04/config_GB300_18x4x72xtp4pp18cp1_cg_fp4.sh:
#    MINIBS 1152, TP 4, PP 18, INTERLEAVED_PIPELINE 7 (126 layers = 18 x 7 chunks of 1 layer), CP 1, MBS 1,
#    TP_COMM_OVERLAP=False, DGXNNODES 18 x 4 -> DP 1, GBS 1152 = 1152 microbatches per step; SEQ_PARALLEL default True
#    (conf/custom.yaml of the same round). Log HPE/results/HPE-GB300-ngpu72_ngc26.04/llama31_405b/result_1.txt:
#    ":::DLPAL ... GB300_18x4x72xtp4pp18cp1_cg_fp4" (the config used), samples_count 297216 -> 298368 -> 299520
#    (1152/step), per-step train_step_time 91.77 91.86 91.78 91.80 91.79 ... 91.79, block average (lineno 286)
#    91.81124 s. 1152 x 8192 / 91.811 / 72 = 1,427.7 tokens/s/GPU.
_S46B_HPE_405B = (
    ("[B: config_common*.sh not stored: NVFP4 from the name; DP 1] MLPerf v6.0 HPE 18 x 4 GB300: Llama 3.1 405B "
     "NVFP4 TP4 PP18 VP7 (no TP overlap), GBS 1152, 72 GPUs", "llama-3.1-405b", "GB300", "megatron", "nvfp4-mixed",
     72, _S46B_SEQ, 1152, dict(tp=4, sp=True, tp_overlap=False, pp=18, schedule="interleaved", virtual_stages=7,
                          zero_stage=1, microbatch_size=1), _S46B_tps(1152, 91.81124, 72), None),
)

# ---------------------------------------------------------------------------------------------------------------
# 3. HPE v6.0 Llama 3.1 8B on GB300 (NeMo 26.04 arm), configs HPE/benchmarks/llama31_8b/implementations/
#    nemo_arm_ngc26.04/ (each sources config_common.sh, config_common_fp4.sh, config_common_cg.sh,
#    config_common_8b.sh, config_common_fp8attn.sh -- none stored; TP1 SEQ_PARALLEL False PP1 CP1):
#  a) config_GB300_4x4x2xtp1pp1cp1_8b_fp4.sh: 16 GPUs, MINIBS 2, MBS 2 (GBS 32 per its own comment);
#     results/HPE-GB300-ngpu16_ngc26.04/llama31_8b/result_1.txt: samples 172032 @ step 5376 -> 184320 @ 5760 (32/step),
#     block average 0.3334303269 s. 32 x 8192 / 0.33343 / 16 = 49,139.
#  b) config_GB300_8x4x2xtp1pp1cp1_8b_fp4.sh: 32 GPUs, MINIBS 2, MBS 2 (GBS 64);
#     results/HPE-GB300-ngpu32_ngc26.04/llama31_8b/result_1.txt: 208896 @ 3264 -> 221184 @ 3456 (64/step),
#     block average 0.3296605524 s. 64 x 8192 / 0.32966 / 32 = 49,700.
#  c) config_GB300_18x4x1xtp1pp1cp1_8b_fp4.sh: 72 GPUs, MINIBS 1, MBS 1 (GBS 72);
#     results/HPE-GB300-ngpu72_ngc26.04/llama31_8b/result_1.txt: 233928 @ 3249 -> 246240 @ 3420 (72/step),
#     block average 0.1927502208 s (= 32.960 s block wall / 171 steps). 72 x 8192 / 0.19275 / 72 = 42,501.
#    Priced as the v6.0 ASUSTeK / Cisco B300 NVFP4 rows: 'nvfp4-mixed', ZeRO-1, TE CE, no recompute.
_S46B_B8 = "[B: common configs not stored: NVFP4 + fp8 attention, ZeRO-1, TE CE as the ASUSTeK v6.0 files]"
_S46B_L8 = dict(zero_stage=1, recompute="none")
_S46B_HPE_8B = (
    (f"{_S46B_B8} MLPerf v6.0 HPE 4 x 4 GB300: Llama 3.1 8B NVFP4 DP16 MBS2, GBS 32, 16 GPUs", "llama-3.1-8b", "GB300",
     _S46B_FW_TE_CE, "nvfp4-mixed", 16, _S46B_SEQ, 32, dict(_S46B_L8, microbatch_size=2), _S46B_tps(32, 0.3334303269, 16), None),
    (f"{_S46B_B8} MLPerf v6.0 HPE 8 x 4 GB300: Llama 3.1 8B NVFP4 DP32 MBS2, GBS 64, 32 GPUs", "llama-3.1-8b", "GB300",
     _S46B_FW_TE_CE, "nvfp4-mixed", 32, _S46B_SEQ, 64, dict(_S46B_L8, microbatch_size=2), _S46B_tps(64, 0.3296605524, 32), None),
    (f"{_S46B_B8} MLPerf v6.0 HPE 18 x 4 GB300: Llama 3.1 8B NVFP4 DP72 MBS1, GBS 72, 72 GPUs", "llama-3.1-8b", "GB300",
     _S46B_FW_TE_CE, "nvfp4-mixed", 72, _S46B_SEQ, 72, dict(_S46B_L8, microbatch_size=1), _S46B_tps(72, 0.1927502208, 72), None),
)

# ---------------------------------------------------------------------------------------------------------------
# 4. HPE v6.0 GPT-OSS-20B on GB300 (NeMo 26.04 arm), MXFP8. HPE/benchmarks/gpt_oss_20b/implementations/
#    nemo_arm_ngc26.04/config_GB300_{4,8}x4x2xtp1pp1cp1ep1_mxfp8.sh: MINIBS 2, MBS 2, TP1 PP1 CP1, EP 1, HybridEP
#    ranks = EP (1), USE_TE_OPS=True, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, CUDA graphs (config_common_cg.sh);
#    config_common.sh / config_common_mxfp8.sh not stored. Priced as public_runs._v60_oss prices NVIDIA's v6.0
#    GPT-OSS-20B rows (vocab-128256 model file, MB_FW + no eager expert bias, 'fp8-mixed', ZeRO-1, no recompute).
#  a) 16 GPUs: results/HPE-GB300-ngpu16_ngc26.04/gpt_oss_20b/result_1.txt: samples +1024 per 32 steps (32/step),
#     block average 0.354262893588787 s (block 16384 samples = 512 steps). 32 x 8192 / 0.35426 / 16 = 46,250.
#  b) 32 GPUs: results/HPE-GB300-ngpu32_ngc26.04/gpt_oss_20b/result_1.txt: +2048 per 32 steps (64/step),
#     block average 0.35237475974502813 s. 64 x 8192 / 0.35237 / 32 = 46,497.
#    Cross-check: public_runs' NVIDIA v6.0 8 GB300 DP8 EP1 MBS3 row = 49,820.
_S46B_BOSS = "[B: balanced routing; config_common_mxfp8.sh not stored]"
_S46B_OSS = dict(zero_stage=1, recompute="none", microbatch_size=2)
_S46B_HPE_OSS = (
    (f"{_S46B_BOSS} MLPerf v6.0 HPE 4 x 4 GB300: GPT-OSS-20B (vocab 128256) MXFP8 DP16 EP1 MBS2, GBS 32, 16 GPUs",
     _OSS20_MLPERF, "GB300", _S46B_FW_TE_CE + _OP_FUSER, "fp8-mixed", 16, _S46B_SEQ, 32, dict(_S46B_OSS),
     _S46B_tps(32, 0.354262893588787, 16), None),
    (f"{_S46B_BOSS} MLPerf v6.0 HPE 8 x 4 GB300: GPT-OSS-20B (vocab 128256) MXFP8 DP32 EP1 MBS2, GBS 64, 32 GPUs",
     _OSS20_MLPERF, "GB300", _S46B_FW_TE_CE + _OP_FUSER, "fp8-mixed", 32, _S46B_SEQ, 64, dict(_S46B_OSS),
     _S46B_tps(64, 0.35237475974502813, 32), None),
)

SCOUTED_2026_12AR = (*_S46B_NVIDIA_405B, *_S46B_HPE_405B, *_S46B_HPE_8B, *_S46B_HPE_OSS)


# ---------------------------------------------------------------------------------------------------------------
# Forty-fifth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AS). Names carry _S46C_.
#: Scout s46 (second pass, 'scout2'): TPU runs with a MaxText step log (AI-Hypercomputer/tpu-recipes and a
#: third-party reproduction, yangwhale/tpu-recipes) not yet in benchmarks/public_runs.py. Row format as public_runs
#: (label, model, hardware, framework, precision, devices, seq_len, global_batch, layout, measured tokens/s/device,
#: measured GiB or None). Every module-level name is prefixed _S46C_. Conventions copied from public_runs
#: TPU_RECIPES_V6E / _maxtext_v5p / FIT_CHECKS_2026_12: ici_fsdp -1 -> zero_stage 3 over the slice; tensor -> tp with
#: sp, microbatch_size = per_device_batch_size x tp; MaxText custom remat with the decoder-layer input offloaded ->
#: recompute='full' + offload_activation_layers = n_layers (v6e only: the v5p preset has no host link, so v5p rows keep
#: the layer input on the device, [B]); weight_dtype float32 -> 'fp32-params'; tokens/s/device is the log's
#: Tokens/s/device (= total_weights / seconds / chips, checked per row). AMD Instinct sources searched found no new
#: measured run with a layout (see the report).
_S46C_V5P = "TPU v5p+scale_up_size={}"  # one v5p slice = one ICI domain (as public_runs._maxtext_v5p)
_S46C_MODELS = "models/"  # benchmarks/models (public_runs.MODELS_DIR)

# ---- 1. AI-Hypercomputer/tpu-recipes training/v5p/Llama3.1-405B-MaxText/README.md @ 85bce684 (+ cluster_toolkit/
# README.md and run_recipe.sh @ 1dee47db): MaxText 3eb77db3, JAX 0.7.0, v5p-1024 = 512 chips (8x8x8), config
# llama3_1_405b_8192_v5p_1024: per_device_batch_size 2, ici_fsdp_parallelism -1, max_target_length 8192, bf16 compute
# / fp32 weights, remat_policy custom with context=offload and mlpwo=offload (layer input on device, the rest
# recomputed). Log: "completed step: 10, seconds: 131.474, TFLOP/s/device: 314.530, Tokens/s/device: 124.618,
# total_weights: 8388608". Check: 8,388,608 / 8192 = 1024 seq = 512 x 2; 8,388,608 / 131.474 / 512 = 124.62.
# ---- 2. DeepSeek-V3 671B on v5p, config deepseek3_671b_v5p_1024 (tpu-recipes training/v5p/DeepSeek3-671B-MaxText/
# cluster_toolkit/run_recipe.sh, search id 71082412967): ici_fsdp -1, ici_tensor 1, per_device_batch_size 6, seq 8192,
# dtype bf16, weight_dtype float32, megablox + sparse_matmul (dropless), remat custom with decoder_layer_input and
# out_proj offloaded. (a) upstream, cluster_toolkit/README.md @ 2a2f894c: "completed step: 11, seconds: 90.668,
# TFLOP/s/device: 152.415, Tokens/s/device: 542.108, total_weights: 25165824" on v5p-1024 (512 chips): 25,165,824 /
# 8192 = 3072 = 512 x 6; 25,165,824 / 90.668 / 512 = 542.1. Reproduced to 0.3% by yangwhale/tpu-recipes training/v5p/
# DeepSeek3-671B-MaxText-512chips/README.en.md @ 3524cad9 (543.6, 90.41 s, 2026-07-27). (b) yangwhale/tpu-recipes
# training/v5p/DeepSeek3-671B-MaxText-256chips/README.en.md (search id 57530974814): the same config on 256 chips
# (4x8x8) with per_device_batch_size 4 (6 and 5 OOM: "Used 112.37G of 95.74G hbm" at 6), GBS 1024, steady step
# 68.70 s, "Tokens/s/device 477.1" (1024 x 8192 / 68.70 / 256 = 477.0). MaxText deepseek3-671b trains without MTP
# -> 'deepseek-v3'; no expert parallelism (experts FSDP-sharded).
# ---- 3. Llama 4 on v5p. (a) Scout: tpu-recipes training/v5p/Llama4-Scout-17B-16E-Maxtext/README.md (search id
# 71176607433) + cluster_toolkit/run_recipe.sh (id 71279673260), config llama4_scout_dropless_v5p_256 @ 3eb77db3:
# per_device_batch_size 8, seq 8192, ici_fsdp -1, bf16 / fp32 weights, megablox sparse_matmul (dropless), adamw, remat
# custom with decoder_layer_input offloaded. Log "completed step: 11, seconds: 31.652, TFLOP/s/device: 225.491,
# Tokens/s/device: 2070.487, total_weights: 33554432": 33,554,432 / 8192 = 4096 = 512 x 8 and 33,554,432 / 31.652 /
# 2070.487 = 512.0 chips, so the quoted log is the v5p-1024 (512-chip) run of the three slice sizes the README lists.
# (b) Maverick: tpu-recipes training/v5p/Llama4-Maverick-17B-128E-Maxtext/README.md @ 16a56b20 (MaxText
# tpu-recipes-v0.1.3): v5p-256 (128 chips), llama4_maverick_dropless_v5p_256: per_device_batch_size 4, seq 8192,
# ici_fsdp 32 x ici_tensor 4, bf16 / fp32 weights, megablox dropless, remat custom with decoder_layer_input, out_proj,
# q/k/v proj offloaded. Log "completed step: 12, seconds: 24.792, TFLOP/s/device: 160.005, Tokens/s/device:
# 1321.725, total_weights: 4194304": 4,194,304 / 8192 = 512 = 128 x 4; 4,194,304 / 24.792 / 128 = 1321.7.
_S46C_TPU_V5P = (
    ("[B: context/mlpwo offload priced as recomputed] tpu-recipes v5p-1024: Llama 3.1 405B FSDP 512, pdbs 2",
     "llama-3.1-405b", _S46C_V5P.format(512), "maxtext", "fp32-params", 512, 8192, 1024,
     dict(zero_stage=3, microbatch_size=2, recompute="full"), 124.618, None),
    ("[B: layer input offload over the Scaling Book's v5p host link] tpu-recipes v5p-1024: DeepSeek-V3 dropless FSDP "
     "512, pdbs 6", "deepseek-v3", _S46C_V5P.format(512), "maxtext", "fp32-params", 512, 8192, 3072,
     dict(zero_stage=3, microbatch_size=6, recompute="full", offload_activation_layers=61), 542.108, None),
    ("[B: layer input offload over the Scaling Book's v5p host link; third-party run] yangwhale tpu-recipes v5p-512: "
     "DeepSeek-V3 dropless FSDP 256, pdbs 4", "deepseek-v3", _S46C_V5P.format(256), "maxtext", "fp32-params", 256,
     8192, 1024, dict(zero_stage=3, microbatch_size=4, recompute="full", offload_activation_layers=61), 477.1, None),
    ("[B: layer input offload over the Scaling Book's v5p host link] tpu-recipes v5p-1024: Llama 4 Scout dropless "
     "FSDP 512, pdbs 8", "llama-4-scout", _S46C_V5P.format(512), "maxtext", "fp32-params", 512, 8192, 4096,
     dict(zero_stage=3, microbatch_size=8, recompute="full", offload_activation_layers=48), 2070.487, None),
    ("[B: layer input/qkv/out offload priced on device] tpu-recipes v5p-256: Llama 4 Maverick dropless FSDP 32 x TP 4, "
     "pdbs 4", _S46C_MODELS + "llama-4-maverick.config.json", _S46C_V5P.format(128), "maxtext", "fp32-params", 128,
     8192, 512, dict(zero_stage=3, tp=4, sp=True, microbatch_size=16, recompute="full"), 1321.725, None),
)

# ---- 4. Trillium (v6e), one slice each unless said. (a) tpu-recipes training/trillium/Llama3.1-8B-MaxText/v6e-32/
# README.md @ 43e52ff5 (MaxText tpu-recipes-v0.1.4): llama3_1_8b_8192_no_collective_matmul, per_device_batch_size 3,
# ici_fsdp -1, remat custom with decoder_layer_input / q / k / v / out_proj offloaded, seq 8192. Log "completed step:
# 14, seconds: 3.495, TFLOP/s/device: 407.225, Tokens/s/device: 7031.689, total_weights: 786432": 786,432 / 8192 = 96
# = 32 x 3; 786,432 / 3.495 / 32 = 7031.8. (b) v6e-128/README.md @ a9e09290: llama3_1_8b_8192 (pdbs 4, same remat),
# "completed step: 14, seconds: 4.602, TFLOP/s/device: 412.319, Tokens/s/device: 7119.648, total_weights: 4194304":
# 4,194,304 / 8192 = 512 = 128 x 4; / 4.602 / 128 = 7120.3. (v6e-8/16/64 and v6e-256 are already held:
# TPU_RECIPES_V6E and MAXTEXT_V6E_ALL 7207.) (c) training/trillium/Llama3-405B-MaxText/README.md @ b28e5994 (maxtext
# 5c45ca38, libtpu 20241106): 2 x v6e-256, llama3_1_405b_8192_fsdp_dcn (layout as FIT_CHECKS_2026_12
# 'v6e.llama3.1-405b-fsdp-dcn': ici fsdp 64 x tensor 4, dcn fsdp 2, pdbs 1, layer inputs offloaded). Log "completed
# step: 5, seconds: 58.805, TFLOP/s/device: 365.740, Tokens/s/device: 139.307, total_weights: 4194304": 4,194,304 /
# 8192 = 512 = 512 chips x 1; / 58.805 / 512 = 139.3. (The held 149.482 row is the later Llama3.1-405B-MaxText recipe,
# FSDP 512 without TP.) (d) training/trillium/GPT3-175B-MaxText/fp8/README.md @ 48e590c6 (maxtext e7292a3a): v6e-256,
# model_name gpt_3_175b = per_device_batch_size 3, ici_fsdp -1, remat full, quantization int8 in every stored
# version of the registry (the directory is called fp8). Log "step: 100, seconds: 14.245, TFLOP/s/device: 464.261,
# Tokens/s/device: 431.318, total_weights: 1572864": 1,572,864 / 2048 = 768 = 256 x 3; / 14.245 / 256 = 431.3.
# NOT ADDED: the tpu-v6e preset has no fp8/int8 peak (check_inputs refuses fp8-mixed on it), and pricing it as bf16
# would test the missing int8 rate, not the layout. The bf16 twin (357.58) is held.
_S46C_TPU_V6E = (
    ("[A] tpu-recipes v6e-32: Llama 3.1 8B FSDP 32, pdbs 3, layer inputs on host (no collective matmul)",
     "llama-3.1-8b", "tpu-v6e", "maxtext", "fp32-params", 32, 8192, 96,
     dict(zero_stage=3, microbatch_size=3, recompute="full", offload_activation_layers=32), 7031.689, None),
    ("[A] tpu-recipes v6e-128: Llama 3.1 8B FSDP 128, pdbs 4, layer inputs on host",
     "llama-3.1-8b", "tpu-v6e", "maxtext", "fp32-params", 128, 8192, 512,
     dict(zero_stage=3, microbatch_size=4, recompute="full", offload_activation_layers=32), 7119.648, None),
    ("[A] tpu-recipes 2x v6e-256: Llama 3.1 405B FSDP 128 x TP 4 (dcn fsdp 2), pdbs 1, layer inputs on host",
     "llama-3.1-405b", "tpu-v6e", "maxtext", "fp32-params", 512, 8192, 512,
     dict(zero_stage=3, tp=4, sp=True, microbatch_size=4, recompute="full", offload_activation_layers=126), 139.307,
     None),
)

SCOUTED_2026_12AS = _S46C_TPU_V5P + _S46C_TPU_V6E


# ---------------------------------------------------------------------------------------------------------------
# Forty-sixth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AT). Names carry _S46D_.
#: Scouting pass 3 of session 46 (never fitted on): measured GPU training runs not yet in benchmarks/public_runs.py.
#:
#: Row format: public_runs.check_inputs ``(label, model, hardware, framework, precision, devices, seq_len, global batch,
#: layout, reported tokens/s/GPU, reported GiB or None)``. [A]: every layout input stated by the source; [B: ...]: what
#: was assumed. Duplicate check: grep of public_runs.py for 'awsome', 'p5en', 'p6-b', 'tohtana', 'benchmark_tp',
#: 'AutoTP', 'custom_llama3_1_70b', 'fsdp2_prefetch' finds nothing.
_S46D_MODELS = "models/"
_S46D_QWEN32 = _S46D_MODELS + "qwen3-32b.config.json"   # as public_runs' torchtitan PR#1690 rows


def _S46D_tps(tokens_per_step: float, step_s: float, n: int) -> float:
    """tokens/s/GPU from tokens per optimizer step, step seconds and GPU count."""
    return tokens_per_step / step_s / n


# ---------------------------------------------------------------------------------------------------------------
# 1. NeMo AutoModel docs/performance-summary.md, pre-training table "System: DGX-H100, Precision: BF16", row
#    "| Llama3 70B | 64 | 128 | 1 | 1 | 4 | 8192 | 1 | 1 | 2 | - | - | 32 | TE + fsdp2_prefetch + AsyncTP | 16.71 | 440 |
#    979.96 |" (read in the fork basheer-cloud/Automodel @ 1498e705, search id 67106984551; the upstream copy stored
#    at ce005dd lacks this row). Recipe examples/llm_pretrain/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml
#    (basheer-cloud/Automodel @ 2f02803e, id 51890868568): meta-llama/Llama-3.1-70B via NeMoAutoModelForCausalLM,
#    torch_dtype bf16, rms_norm torch_fp32, GBS 128, local_batch_size 1 (GA 4 over dp 32), seq 8192, fsdp2 tp 1
#    cp 2 pp 1, activation_checkpointing True, enable_compile True, enable_fsdp2_prefetch True,
#    defer_rs_grad_accum True, TE FusedAdam. Check: 128 x 8192 / 16.71 / 64 = 980.4 (table 979.96).
#    [B]: the automodel profile (TE kernels, bf16 optimizer state) stands in for a HF Llama + torch.compile run whose
#    optimizer is TE FusedAdam (fp32 moments by default, bf16 params); llama-3-70b preset = Llama 3.1 70B shapes.
_S46D_AUTOMODEL = (
    ("[B: HF Llama + compile priced with the automodel profile; TE FusedAdam state as the profile's bf16] NeMo "
     "AutoModel perf summary H100: Llama 3.1 70B FSDP32 x CP2, full AC, GA4, seq 8192, 64 GPUs", "llama-3-70b",
     "H100-SXM", "automodel", "bf16-mixed", 64, 8192, 128,
     dict(cp=2, zero_stage=3, microbatch_size=1, recompute="full"), 979.96, None),
)

# ---------------------------------------------------------------------------------------------------------------
# 2. tohtana/benchmark_tp README.md @ 5c6ab5ac (search id 8935959250; Masahiro Tanaka, DeepSpeed), "Results (8xH100,
#    Qwen3-32B, TP=8, BS=1, seq=2048, BF16+autocast)", PyTorch 2.9.0, DeepSpeed 0.18.3, TorchTitan v0.2.0:
#      DeepSpeed AutoTP | 2,479 tokens/sec | 829 ms | 49.2 GB
#      FSDP + DTensor   | 1,513 tokens/sec | 1,354 ms | 34.6 GB
#      TorchTitan       | ~1,000 tokens/sec | ~2,028 ms | 32.8 GB
#    Commands in the same README: --tp_size 8 (dp 1), --batch_size 1, --seq_length 2048, flash_attention_2,
#    --activation_checkpointing (HF gradient_checkpointing_enable: full per layer); torchtitan toml: tp 8, dp_shard 1,
#    local_batch_size 1, seq 2048, training.dtype bfloat16, activation_checkpoint full. tokens/sec is per step of the
#    single TP group (benchmark/metrics.py @ 4b4486a0: batch x seq / step_time; 2048 / 0.829 = 2,470) -> /8 per GPU:
#    2479/8 = 309.9, 1513/8 = 189.1, 1000/8 = 125.0. Memory: metrics.py max_memory_allocated()/1e9 -> GiB = GB/1.0737:
#    49.2 -> 45.8, 34.6 -> 32.2; torchtitan logs reserved GiB already -> 32.8.
#    AutoTP: DeepSpeed ZeRO-1 (the script's default --zero_stage 1, dp 1), Megatron-style TP without sequence
#    parallelism, vocab-parallel embedding/loss. FSDP+DTensor: DTensor Colwise/Rowwise plan without SequenceParallel.
#    torchtitan: its TP plan with sequence parallel norms; training.dtype bfloat16 = bf16 params and Adam moments, no
#    fp32 master (optimizer_dtype=bf16). FSDP+DTensor: the model is built in bf16 (create_model(dtype=...), as in
#    parallel/autotp.py) and torch.optim.AdamW makes its moments zeros_like(p) -> bf16 state, no master
#    (optimizer_dtype=bf16; 4.1e9 params/GPU x 8 B = 32.8 GB, the measured 34.6 GB).  [B] on all three: 'H100-SXM' for "8xH100"; the README's results were taken
#    at an earlier commit of autotp.py than the one stored (the stored one sets bf16_master_weights_and_grads and
#    bf16_optimizer_states); the torchtitan figure is approximate ("~").
_S46D_TP8 = dict(tp=8, sp=False, zero_stage=1, microbatch_size=1, recompute="full")
_S46D_AUTOTP = (
    ("[B: H100-SXM assumed; ZeRO-1 default; state dtypes at the README's commit unknown] tohtana/benchmark_tp: "
     "Qwen3-32B DeepSpeed AutoTP TP8, bs 1, seq 2048, full AC, 8 H100", _S46D_QWEN32, "H100-SXM", "hf-deepspeed",
     "bf16-mixed", 8, 2048, 1, dict(_S46D_TP8), 2479 / 8, 49.2 / 1.0737),
    ("[B: H100-SXM assumed; FSDP over dp 1] tohtana/benchmark_tp: Qwen3-32B FSDP2 + DTensor TP8 (no SP), bs 1, "
     "seq 2048, full AC, 8 H100", _S46D_QWEN32, "H100-SXM", "hf-fsdp", "bf16-mixed+optimizer_dtype=bf16", 8, 2048, 1,
     dict(_S46D_TP8, zero_stage=3), 1513 / 8, 34.6 / 1.0737),
    ("[B: H100-SXM assumed; '~1,000 tokens/sec' approximate] tohtana/benchmark_tp: Qwen3-32B torchtitan v0.2.0 TP8 "
     "+ SP, bf16 params/state, bs 1, seq 2048, full AC, 8 H100", _S46D_QWEN32, "H100-SXM", "torchtitan",
     "bf16-mixed+optimizer_dtype=bf16", 8, 2048, 1, dict(_S46D_TP8, sp=True, zero_stage=3), 1000 / 8, 32.8),
)

# ---------------------------------------------------------------------------------------------------------------
# 3. awslabs/awsome-distributed-ai PR #1138 "feat: add Qwen3-8B pre-training sample (H200 vs B300, NeMo/Megatron)"
#    (https://github.com/awslabs/awsome-distributed-ai/pull/1138, 2026-06-18). Files: b300/README.md (search id
#    55831877559): p6-b300.48xlarge x 2 = 16 B300 (288 GB), EFA, NeMo 26.02 / Megatron-Bridge; "Best Configuration"
#    TP1 PP1 DP16, MBS 4, GBS 128 (grad_accum 2), seq 4096, BF16, no recompute, distributed optimizer, overlap grad
#    reduce + param gather; step 1.65 s, 318K tok/s. "Optimization Sweep Results" (MBS | seq | ckpt | TFLOP/s |
#    tok/s (16 GPU)): 2|4096|Yes|612|199K; 2|4096|No|784|255K; 4|4096|Yes|768|250K; 4|4096|No|976|318K;
#    8|4096|No|941|306K; 4|8192|No|892|145K; 8|8192|No|914|149K. TP=2 DP=8 MBS=4: 868 TFLOP/s, 283K tok/s.
#    Consistency: TFLOP/s = 6 x 8.2e9 x tok/s / 16 holds for every seq-4096 row (318K -> 977; 199K -> 612), but NOT for
#    the seq-8192 rows (145K -> 446, table 892: a factor 2), so the two seq-8192 rows are left out.
#    h200/README.md (search id 55862279534): p5en x 2 = 16 H200, NeMo 25.07 Megatron-Core pretrain(), TP1 PP1 DP16,
#    MBS 2, GBS 128 (grad_accum 4), seq 4096, BF16, full recompute, distributed optimizer, overlaps; step 3.23 s,
#    162K tok/s -> 128 x 4096 / 3.23 / 16 = 10,145 tok/s/GPU. Peak memory is given as "~138 GB" in one stored copy
#    and "~114 GB" in another (ids 56022116337 / 71233854240): not used; B300 "~173 GB" units unstated: not used.
#    The H200 row (10,145 tokens/s/GPU with full recompute = 67% of peak in hardware FLOPs, beside two peaks ~138 and
#    ~114 GB for the same run) is left out: the README contradicts itself.
#    tokens/s/GPU of the sweep = table tok/s / 16. [B] on the sweep rows: GBS 128 held for every MBS (the sweep table
#    states only MBS), recompute "Yes" = full (as the H200 config); TP2 row: sequence parallel assumed.
_S46D_Q8 = dict(zero_stage=1)
_S46D_QWEN8 = tuple(
    (f"[B: GBS 128 assumed for the sweep; recompute 'Yes' as full] awsome-distributed-ai PR#1138 B300: Qwen3-8B "
     f"DP16 MBS{mbs}{' full AC' if rc == 'full' else ''}, seq 4096, 16 B300 (p6-b300)", "qwen3-8b", "B300", "megatron",
     "bf16-mixed", 16, 4096, 128, dict(_S46D_Q8, microbatch_size=mbs, recompute=rc), tok / 16, None)
    for mbs, rc, tok in ((2, "full", 199e3), (2, "none", 255e3), (4, "full", 250e3), (4, "none", 318e3),
                         (8, "none", 306e3))) + (
    ("[B: sequence parallel assumed] awsome-distributed-ai PR#1138 B300: Qwen3-8B TP2 DP8 MBS4, seq 4096, 16 B300",
     "qwen3-8b", "B300", "megatron", "bf16-mixed", 16, 4096, 128,
     dict(_S46D_Q8, tp=2, sp=True, microbatch_size=4), 283e3 / 16, None),
)

# ---------------------------------------------------------------------------------------------------------------
# 4. awslabs/awsome-distributed-ai 3.test_cases/megatron/megatron-bridge/dsv3/RESULTS.md @ 4e622275 (id 55799997412)
#    + dsv3/bench_dsv3_pretrain.py @ 4e622275 (id 55609427524): DeepSeek-V3 (deepseek_v3_pretrain_config_32nodes,
#    nemo 26.04.01, bridge 0.4.2 / core 0.17.1) on 256 B300 (32 x p6-b300, EFA 6.4 Tbps/node), TP8 PP8 EP32 DP4,
#    seq 4096, GBS 256, bf16, moe_router_force_load_balancing, shared-expert overlap off; overlap=off keeps VPP 1 and
#    the recipe's recompute ("keeps VPP=1 + full recompute", the script's comment); overlap=on sets VPP 2, recompute
#    off and overlap_moe_expert_parallel_comm. Mean iteration times (s): mb1 alltoall 12.538 ("derived tok/s/GPU 327");
#    mb4 alltoall 9.774, deepep 6.263 (overlap off); overlap on mb4: alltoall 5.978, deepep 3.839.
#    tokens/s/GPU = 256 x 4096 / t / 256 = 4096 / t. The recipe keeps DSV3's MTP layer -> deepseek-v3-mtp.
#    [B] on all: overlap-off recompute taken as full (the script comment), TP without comm overlap, the recipe's
#    pipeline layout replaced by the planner's default split, UCCL deep_ep priced as DeepEP, bf16 with fp32 state.
_S46D_DS = dict(tp=8, sp=True, pp=8, ep=32, etp=1, zero_stage=1)
_S46D_DSV3 = tuple(
    (f"[B: recompute/layout/UCCL-as-DeepEP assumed] awsome-distributed-ai dsv3 RESULTS B300: DeepSeek-V3 TP8 PP8 "
     f"EP32 DP4, mb{mb}, {disp}, EP overlap {'on (VPP2, no recompute)' if ov else 'off'}, 256 B300",
     "deepseek-v3-mtp", "B300", "megatron", "bf16-mixed", 256, 4096, 256,
     dict(_S46D_DS, microbatch_size=mb, moe_dispatcher=disp, recompute="none" if ov else "full",
          **(dict(schedule="interleaved", virtual_stages=2, moe_a2a_overlap=True) if ov else {})),
     4096 / t, None)
    for mb, disp, ov, t in ((1, "alltoall", False, 12.538), (4, "alltoall", False, 9.774),
                            (4, "deepep", False, 6.263), (4, "alltoall", True, 5.978), (4, "deepep", True, 3.839)))

SCOUTED_2026_12AT = (*_S46D_AUTOMODEL, *_S46D_AUTOTP, *_S46D_QWEN8, *_S46D_DSV3)


# ---------------------------------------------------------------------------------------------------------------
# Forty-seventh scouting pass (2026-12, never fitted on; SCOUTED_2026_12AU). Names carry _S47_.
#: TPU7x (Ironwood), the preset added in the same session (presets/hardware.py "tpu7x": one JAX device = one chiplet,
#: half a chip; its constants are datasheet figures and one GEMM microbenchmark, nothing fitted on these rows).
#: Source: AI-Hypercomputer/tpu-recipes training/ironwood/README.md @ 0797d9ce (the measured table: step time,
#: TFLOP/s per chip, tokens/s per chip) with each row's run_recipe.sh (helper notes: MaxText, one slice, synthetic
#: data, AdamW, splash attention, SparseCore collective offload): Llama 3.1 70B 8k pdbs 2 ici_fsdp -1 (bc90a992,
#: 333a7575, 5474e2cc, 47a7a5af), 70B 128k ici_context 8 x fsdp (4bd5703e, c82b54a7), 405B pdbs 3 with the decoder
#: layer input and mlpwo offloaded (fd16581b, ce8bcf64), DeepSeek-V3 pdbs 8 ici_fsdp -1 (5d292b57, 0da1a2f1,
#: 46c7d8e2, cbb49c4f), Qwen3-235B-A22B pdbs 16 (1c91283c, 1652241e), GPT-OSS-120B ici_fsdp 64 x ici_data 2 / 8
#: pdbs 10 (604f8070, a7ca1626); fp8 rows are quantization=fp8_full (qwix). Per-device rate = the README's tokens/s
#: per chip / 2 (JAX devices are chiplets; GBS = pdbs x 2 x chips holds on every row). Conventions as SCOUTED_2026_12AS:
#: ici_fsdp -1 -> zero_stage 3 over the slice; remat custom -> 'full' with offload_activation_layers = n_layers where
#: the recipe offloads the layer input (priced over the preset's assumed host link); weight_dtype float32 (MaxText's
#: default) -> 'fp32-params'; fp8_full -> 'fp8-mixed'. Not added: Gemma 4 rows (no model config held), Wan 2.1
#: (not an LLM) and the 8B long-context recipe (no figures published).
_S47_REC = "[B: weight_dtype float32 (MaxText default); remat custom priced as full]"
_S47_OFF = "[B: layer inputs offloaded over the Scaling Book's per-TPU host link; remat custom priced as full]"
_S47_TOPO = {64: "4x4x4", 128: "4x4x8", 256: "4x8x8"}


def _s47_row(tag: str, model: str, chips: int, what: str, fp8: bool, seq: int, pdbs: float, tok_chip: float,
             **layout) -> tuple:
    """One tpu-recipes Ironwood row: ``chips`` chips = 2 x chips JAX devices (one ICI slice), global batch pdbs x
    devices sequences, measured tokens/s per chip halved per device; ``layout`` beside ZeRO-3 and full recompute."""
    n = 2 * chips
    return (f"{tag} tpu-recipes Ironwood {_S47_TOPO[chips]}: {what}, {'fp8_full' if fp8 else 'bf16'}", model,
            f"TPU7x+scale_up_size={n}", "maxtext", "fp8-mixed" if fp8 else "fp32-params", n, seq, round(pdbs * n),
            dict(zero_stage=3, recompute="full", **layout), tok_chip / 2, None)


# (tag, model, chips, what, seq, per_device_batch_size, layout, (bf16, fp8) tokens/s per chip; None: no fp8 run)
_S47_RUNS = (
    (_S47_REC, "llama-3-70b", 64, "Llama 3.1 70B FSDP 128, pdbs 2", 8192, 2, dict(microbatch_size=2),
     (2686.98, 4127.56)),
    (_S47_REC, "llama-3-70b", 256, "Llama 3.1 70B FSDP 512, pdbs 2", 8192, 2, dict(microbatch_size=2),
     (2670.55, 4121.02)),
    (_S47_REC, "llama-3-70b", 256, "Llama 3.1 70B seq 131,072, CP 8 x FSDP 64", 131072, 0.125,
     dict(cp=8, microbatch_size=1), (963.03, 1087.99)),
    (_S47_OFF, "llama-3.1-405b", 256, "Llama 3.1 405B FSDP 512, pdbs 3", 8192, 3,
     dict(microbatch_size=3, offload_activation_layers=126), (499.77, 763.54)),
    (_S47_OFF, "deepseek-v3", 128, "DeepSeek-V3 dropless FSDP 256, pdbs 8", 4096, 8,
     dict(microbatch_size=8, offload_activation_layers=61), (2425.75, 2917.15)),
    (_S47_OFF, "deepseek-v3", 256, "DeepSeek-V3 dropless FSDP 512, pdbs 8", 4096, 8,
     dict(microbatch_size=8, offload_activation_layers=61), (2446.25, 2968.49)),
    (_S47_OFF, "qwen3-235b-a22b", 256, "Qwen3-235B-A22B dropless FSDP 512, pdbs 16", 4096, 16,
     dict(microbatch_size=16, offload_activation_layers=94), (4245.89, 4736.72)),
    (_S47_OFF, "gpt-oss-120b", 64, "GPT-OSS-120B FSDP 64 x DP 2, pdbs 10", 8192, 10,
     dict(dp_shard=64, microbatch_size=10, offload_activation_layers=36), (10975.31, None)),
    (_S47_OFF, "gpt-oss-120b", 256, "GPT-OSS-120B FSDP 64 x DP 8, pdbs 10", 8192, 10,
     dict(dp_shard=64, microbatch_size=10, offload_activation_layers=36), (10810.77, None)),
)
_S47_TPU7X_ROWS = tuple(_s47_row(tag, model, chips, what, fp8, seq, pdbs, rate, **layout)
                        for tag, model, chips, what, seq, pdbs, layout, rates in _S47_RUNS
                        for fp8, rate in zip((False, True), rates) if rate is not None)

SCOUTED_2026_12AU = _S47_TPU7X_ROWS

# Forty-eighth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AV). Names carry _S48_.
# Jiang et al. 2024, "MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs" (NSDI'24, arXiv
# 2402.15627v1): the Megatron-LM baseline (commit 285068c8) rows the shared calibration set leaves out. Priced exactly as
# the shared MegaScale rows are (shardplan.calibration.row_inputs of megascale_175b_megatron_*: megatron-legacy, A100
# 80GB, TP 8 PP 8 interleaved with 6 virtual stages, ZeRO-2-style distributed optimizer, micro batch 1, no recompute,
# bf16 with fp32 gradient accumulation; the paper states neither micro batch, recompute nor the A100's memory).
# Table 2 (175B, seq 2048): 512 / 768 GPUs at batch 768 and 6,144 / 8,192 GPUs at batch 6,144, printed tokens/s over
# the GPUs. Table 3's "original Megatron-LM" row (256 GPUs, batch 256) and Fig. 9 (530B, TP 8 PP 35 with 3 virtual
# stages, batch = GPUs) print MFU only: converted with the FLOPs per token the paper's own 175B pairs imply,
# 6 N + 12 L h s (MFU x 312e12 x GPUs / tokens/s = 1.0772e12 at 256 GPUs against 6 x 174,773,133,312 + 12 x 96 x 12288 x
# 2048 = 1.0776e12): 175B 0.477 x 312e12 / 1.0776e12 = 138.1 tokens/s/GPU; 530B (benchmarks/models/
# gpt-530b-megascale.json, 529,862,963,200 parameters) 6 N + 12 x 105 x 20480 x 2048 = 3.2320e12 FLOPs per token. The
# Fig. 9 labels (49.2 / 48.8 / 48.2 and 54.3 / 54.1 / 54.3) are not tied to a series in the text: the lower triple is
# Megatron-LM's (the text: MegaScale "higher than Megatron-LM by up to 6.1%", Megatron-LM "decreases by 1.6%").
_S48_MS = "Jiang et al. 2024 (MegaScale)"
_S48_175 = dict(tp=8, pp=8, schedule="interleaved", virtual_stages=6, zero_stage=2, microbatch_size=1, recompute="none")
_S48_530 = dict(tp=8, pp=35, schedule="interleaved", virtual_stages=3, zero_stage=2, microbatch_size=1, recompute="none")
_S48_F530 = 6 * 529_862_963_200 + 12 * 105 * 20480 * 2048
SCOUTED_2026_12AV = (
    *((f"[A] {_S48_MS} Table 2: Megatron-LM baseline, GPT 175B TP8 PP8 VP6 DP{n // 64}, batch {b}, {n:,} A100",
       "gpt-175b-megascale", "A100 80GB", "megatron-legacy", "bf16-mixed-fp32-grads", n, 2048, b,
       dict(dp=n // 64, **_S48_175), tokens / n, None)
      for n, b, tokens in ((512, 768, 74_100), (768, 768, 103_800), (6144, 6144, 851_600), (8192, 6144, 1_027_900))),
    (f"[B: MFU only, tokens/s from 6N + 12Lhs] {_S48_MS} Table 3: original Megatron-LM, GPT 175B TP8 PP8 VP6 DP4, "
     "batch 256, 256 A100", "gpt-175b-megascale", "A100 80GB", "megatron-legacy", "bf16-mixed-fp32-grads", 256, 2048,
     256, dict(dp=4, **_S48_175), 0.477 * 312e12 / (6 * 174_773_133_312 + 12 * 96 * 12288 * 2048), None),
    *((f"[B: Fig. 9 label, series pairing inferred; MFU only, tokens/s from 6N + 12Lhs] {_S48_MS} Fig. 9: Megatron-LM, "
       f"GPT 530B TP8 PP35 VP3 DP{n // 280}, batch {n}, {n:,} A100", "models/gpt-530b-megascale.json", "A100 80GB",
       "megatron-legacy", "bf16-mixed-fp32-grads", n, 2048, n, dict(dp=n // 280, **_S48_530), mfu * 312e12 / _S48_F530,
       None)
      for n, mfu in ((2240, 0.492), (4480, 0.488), (11200, 0.482))),
)

# Forty-ninth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AW). Names carry _S49_.
# ---- 1. AMD Instinct MI300X / MI325X, one engineer's public logs (hisohara/ai-scripts, AMD Accelerator Cloud). ----
#  a) training/02_megatron/README.md @ 3c1f70c6 (id 32623064251): ROCm/Megatron-LM rocm_dev @ 38fc8307 (torch
#     2.8.0+rocm6.4, ROCm TransformerEngine 8c4a512), examples/llama/train_llama2.sh with MBS=4 BS=256 TP=1 TE_FP8=1
#     SEQ_LENGTH=4096 MODEL_SIZE=7 USE_FLASH_ATTN=0 GEMM_TUNING=0, one node: "iteration 50/50 | ... elapsed time per
#     iteration (ms): 10235.8 | ... throughput per GPU (TFLOP/s/GPU): 590.2 | ... global batch size: 256", the script's
#     means "elapsed time per iteration: 10250.497872340427", "tokens/GPU/s: 12786.891099" (= 256 x 4096 / 10.2505 / 8:
#     8 GPUs). The script's non-FSDP path adds --use-distributed-optimizer (ZeRO-1), no recompute (RECOMPUTE default 0).
#     [B]: MI300X (the README names the ROCm MI300X docs page and gfx942, not the node's GPU), TE's fused attention
#     although USE_FLASH_ATTN=0 (TE picks its own backend), untuned hipBLASLt (GEMM_TUNING=0) priced as the preset.
#  b) training/03_primus/ (README.md, RUN.sh, *.log @ 4fb66ab5): Primus e16b27b (Megatron-LM 5a676b36), docker
#     rocm/primus:v25.9_gfx942, AAC11 = MI325X nodes (8 GPUs, Broadcom bnxt RoCE), mock data, seq 4096 (the yamls;
#     checked: GBS x 4096 / step / GPUs = the logged tokens/s/GPU). Logged "tokens per GPU (tokens/s/GPU): last/average"
#     (average over iterations 3-50, log_avg_skip_iterations 2); the averages at iteration 50 are used:
#     - run-llama2-70B-2N.log: 16 GPUs, examples/megatron/configs/llama2_70B-pretrain.yaml (TP1 PP1, use_torch_fsdp2
#       true, recompute full block 80 layers, Turbo attention) with --micro_batch_size 10 --global_batch_size 640
#       --recompute_num_layers 80 --no_fp8_weight_transpose_cache true --fp8 hybrid: "elapsed time per iteration (ms):
#       92574.9/92631.9 | hip mem usage/free/total/usage_ratio: 227.04GB/28.94GB/255.98GB | throughput per GPU
#       (TFLOP/s/GPU): 786.7/786.2 | tokens per GPU (tokens/s/GPU): 1769.8/1768.7".
#     - run-llama2-7B-8N.log: 64 GPUs, llama2_7B-pretrain.yaml (TP1 PP1, MBS 4, distributed optimizer, no recompute)
#       with --global_batch_size 2048 --fp8 hybrid: "elapsed time per iteration (ms): 6403.1/6402.7 | ... 126.03GB ... |
#       (TFLOP/s/GPU): 943.4/943.5 | tokens per GPU (tokens/s/GPU): 20470.1/20472.8".
#     - run-mixtral-8x7B-8N.log: 64 GPUs, mixtral_8x7B_v0.1-pretrain.yaml (TP1 PP1 EP8, moe_router_force_load_balancing
#       -> uniform routing, legacy grouped GEMM, no permute fusion, bf16) with --micro_batch_size 2
#       --global_batch_size 256: "elapsed time per iteration (ms): 3060.8/3099.5 | ... 133.18GB ... | (TFLOP/s/GPU):
#       443.9/439.1 | tokens per GPU (tokens/s/GPU): 5352.9/5294.6".
#     [B] on the three: the example yamls as stored at 2386c727 (not the run's commit e16b27b; the command lines and
#     logged batch / sequence agree with them), use_distributed_optimizer from pre_trainer.yaml's default, the
#     MI325X preset for AAC11's network. hip mem usage is the allocator's device total, not a peak: not used.
#  c) training/04_megatron-pyxis/ (README.md, megatron-pyxis-12384.out @ 97db03fb): rocm/megatron-lm:v25.9_gfx942 on 8
#     MI325X nodes (64 GPUs), examples/llama/train_llama3.sh (ROCm/Megatron-LM @ 02b8aa76: FSDP=1 -> --use-torch-fsdp2
#     with TP forced 1 and sequence parallel off; RECOMPUTE=1 -> full block recompute of all 80 layers; TE_FP8=1 ->
#     hybrid delayed scaling; flash attention on) with MODEL_SIZE=70 (Llama 3.1 70B shape) MBS=4 BS=256
#     SEQ_LENGTH=8192 MOCK_DATA=1 FP8_WEIGHT_TRANSPOSE_CACHE=0: script means "throughput per GPU: 824.93", "elapsed
#     time per iteration: 19124.91", "tokens/GPU/s: 1713.367156" (= 256 x 8192 / 19.1249 / 64).
_S49_AAC = "[B: yaml at 2386c727, distributed optimizer by default; MI325X preset network]"
_S49_AMD = (
    ("[B: MI300X assumed, TE fused attention, untuned GEMMs] hisohara ROCm Megatron-LM: Llama 2 7B FP8 DP8 MBS4, "
     "GBS 256, seq 4096, 8 GPUs", "llama-2-7b", "MI300X", "megatron", "fp8-mixed", 8, 4096, 256,
     dict(zero_stage=1, microbatch_size=4), 12786.891099, None),
    (f"{_S49_AAC} hisohara Primus v25.9: Llama 2 70B FP8 torch-FSDP2 x 16, full AC, MBS10, GBS 640, 16 MI325X",
     "llama-2-70b", "MI325X", "megatron", "fp8-mixed", 16, 4096, 640,
     dict(zero_stage=3, microbatch_size=10, recompute="full"), 1768.7, None),
    (f"{_S49_AAC} hisohara Primus v25.9: Llama 2 7B FP8 DP64 MBS4, GBS 2048, 64 MI325X", "llama-2-7b", "MI325X",
     "megatron", "fp8-mixed", 64, 4096, 2048, dict(zero_stage=1, microbatch_size=4), 20472.8, None),
    (f"{_S49_AAC} hisohara Primus v25.9: Mixtral 8x7B BF16 EP8 DP64 MBS2, forced balance, GBS 256, 64 MI325X",
     "mixtral-8x7b", "MI325X", "megatron", "bf16-mixed", 64, 4096, 256, dict(ep=8, zero_stage=1, microbatch_size=2),
     5294.6, None),
    ("[A] hisohara ROCm Megatron-LM v25.9: Llama 3.1 70B FP8 torch-FSDP2 x 64, full AC, MBS4, GBS 256, seq 8192, "
     "64 MI325X", "llama-3-70b", "MI325X", "megatron", "fp8-mixed", 64, 8192, 256,
     dict(zero_stage=3, microbatch_size=4, recompute="full"), 1713.367156, None),
)

# (The same pass also transcribed xtuner's Megatron MoE benchmark (Qwen3-235B-A22B on 256 H800) and
#  Pai-Megatron-Patch issue #643 (Qwen3-30B-A3B on 16 H800): both were already held (_XT_MOE and _Q30_TAG above, the
#  same figures), so those 13 rows were dropped as duplicates.)
SCOUTED_2026_12AW = _S49_AMD

# Fiftieth scouting pass (2026-12, never fitted on; SCOUTED_2026_12AX). Names carry _S50_.
# ---- 1. mosaicml/llm-foundry scripts/train/benchmarking/README.md @ c90b9b312c644dbde5c9e6eef75c6f1c117d8782 (search id
#    605387504), table "H100 80GB BF16 (Large Scale, >= 128 GPUs)" (absent from the 061f2c7 copy the _FOUNDRY_H100 rows
#    come from; also in the fork Diego9709/llm-foundry @ 000d3691, id 26050899891). MPT 1B-70B, seq 2,048, 128 / 256 / 512
#    H100 80GB, amp_bf16 (MP Mode DEFAULT: fp32 gradient reduction, as _foundry's default), no accumulation (GradAccum 1),
#    global batch = GPUs x micro batch; FULL_SHARD (ZeRO-3) for 7B-70B, SHARD_GRAD_OP (ZeRO-2) for 1B / 3B; activation
#    checkpointing True for 13B-70B; Throughput (T/s/GPU) as printed (= T/s / GPUs: 515,636 / 512 = 1,007). [A]
_S50_LS = (  # (model, GPUs, micro batch, global batch, tokens/s/GPU, activation checkpointing, ZeRO stage)
    ("70b", 512, 8, 4096, 1007, True, 3), ("70b", 256, 8, 2048, 1035, True, 3), ("70b", 128, 8, 1024, 1058, True, 3),
    ("30b", 512, 8, 4096, 2115, True, 3), ("30b", 256, 8, 2048, 2148, True, 3), ("30b", 128, 8, 1024, 2199, True, 3),
    ("13b", 512, 16, 8192, 4952, True, 3), ("13b", 256, 16, 4096, 4989, True, 3), ("13b", 128, 16, 2048, 5080, True, 3),
    ("7b", 512, 6, 3072, 9670, False, 3), ("7b", 256, 6, 1536, 10119, False, 3), ("7b", 128, 6, 768, 10475, False, 3),
    ("3b", 512, 8, 4096, 21664, False, 2), ("3b", 256, 8, 2048, 22772, False, 2), ("3b", 128, 8, 1024, 23422, False, 2),
    ("1b", 512, 12, 6144, 39837, False, 2), ("1b", 256, 12, 3072, 42555, False, 2), ("1b", 128, 12, 1536, 44123, False, 2),
)
_S50_FOUNDRY_LS = tuple(
    (f"[A] llm-foundry README H100 80GB (large scale): MPT-{m.upper()} seq 2,048, {g} GPUs, mbs {mbs}"
     f"{', AC' if ac else ''}{', SHARD_GRAD_OP' if z == 2 else ''}", f"mpt-{m}", "H100 80GB", "llm-foundry",
     "bf16-mixed-fp32-grads", g, 2048, gbs,
     dict(dp=g, zero_stage=z, microbatch_size=mbs, recompute="full" if ac else "none"), tps, None)
    for m, g, mbs, gbs, tps, ac, z in _S50_LS)
# ---- 2. AI-Hypercomputer/torchprime issue #16 (zpcore comment, 2025-02-06; torch_xla 2.6.0): "Llama 3.0 8B 8kseq_len |
#    256 | v6e-256 x 1pod | 1.625s" and "| 512 | ... | 2.991s" (torchprime column). tokens/s/chip = GBS x 8192 / step /
#    256: 256 x 8192 / 1.625 / 256 = 5,041.2; 512 x 8192 / 2.991 / 256 = 5,477.8. Layout from the recipe in
#    torchprime/torch_xla_models/README.md (@ 1d2842b5, id 61647493530: ici_mesh.fsdp=256, model/remat=llama-scan,
#    splash attention) and configs (model/llama-3-8b.yaml: torch_dtype bfloat16, remat llama = every decoder layer).
#    [B]: FSDP 256 and per-layer remat at the issue's date, bf16 weights with bf16 AdamW state (no fp32 master), the
#    maxtext profile standing in for torch_xla SPMD.
_S50_TP = ("[B: FSDP 256 + per-layer remat from the later recipe; bf16 weights and AdamW state; maxtext profile for "
           "torch_xla]")
_S50_TORCHPRIME = tuple(
    (f"{_S50_TP} torchprime#16: Llama 3.0 8B seq 8,192, GBS {gbs}, v6e-256", "llama-3-8b", "tpu-v6e", "maxtext",
     "bf16-mixed+optimizer_dtype=bf16", 256, 8192, gbs, dict(zero_stage=3, microbatch_size=gbs // 256, recompute="full"),
     gbs * 8192 / step / 256, None)
    for gbs, step in ((256, 1.625), (512, 2.991)))
# ---- 3. PrimeIntellect-ai/prime-rl benchmarks/results/BENCHMARKS.md (search id 11149717588; "Last Updated 2026-02-07",
#    "Commit 30bf494f"), rows "SFT Full | 16384 | Recompute | ... | 8xH100 HBM3 | 26.6% | 49.72k" (FA2), "8xH200 | 28.4% |
#    53.14k", "8xB200 | 15.5% | 66.04k" (Qwen3-4B-Instruct-2507) and Qwen3-30B-A3B-Instruct-2507 "8xH200 | 16.6% |
#    35.03k" (FA3), "8xB200 | 11.6% | 55.68k" (FA4); EP 1, CP 1; Peak Mem 54.6 / 54.6 / 52.5 / 106.4 / 111.8 GiB.
#    The baselines JSON (benchmarks/baselines/benchmark-8xh100-Qwen--Qwen3-4B-Instruct-2507-sft-full-8gpu-Recompute-
#    flash_attention_2-16384-cp1-ep1.json @ 767aaadf, id 70584881440; ...8xb200-Qwen--Qwen3-30B-A3B...-sft-full-...
#    flash_attention_4-16384-cp1-ep1.json @ 30bf494f, id 11864956339) give micro_batches 2 and the throughput mean
#    (49,716.76; 55,679.99 tokens/s over the 8 GPUs); 55,680 x 4.684 s step = 260.8k = 2 x 8 x 16,384 tokens, so one
#    16,384 sequence per GPU per micro batch: global batch 16. tokens/s/GPU = TPS / 8. [B]: FSDP over the 8 GPUs (the
#    trainer's FSDP2, no EP), full AC for "Recompute", bf16 params with fp32 master/optimizer, the torchtitan profile
#    standing in for prime-rl's trainer.
_S50_PR = "[B: FSDP2 x 8, 2 micro-batches of 1, full AC, fp32 master; torchtitan profile for prime-rl]"
_S50_PRIME_RL = tuple(
    (f"{_S50_PR} prime-rl bench: {name} SFT full, seq 16,384, 8 {hw}", model, hw, "torchtitan", "bf16-mixed", 8, 16384,
     16, dict(zero_stage=3, microbatch_size=1, recompute="full"), tps / 8, gib)
    for name, model, hw, tps, gib in (
        ("Qwen3-4B", "models/qwen3-4b.config.json", "H100-SXM", 49716.756, 54.63),
        ("Qwen3-4B", "models/qwen3-4b.config.json", "H200", 53140, 54.6),
        ("Qwen3-4B", "models/qwen3-4b.config.json", "B200", 66040, 52.5),
        ("Qwen3-30B-A3B (EP 1)", "qwen3-30b-a3b", "H200", 35030, 106.4),
        ("Qwen3-30B-A3B (EP 1)", "qwen3-30b-a3b", "B200", 55680, 111.8)))

SCOUTED_2026_12AX = (*_S50_FOUNDRY_LS, *_S50_TORCHPRIME, *_S50_PRIME_RL)


# Fifty-first scouting pass (2026-12, never fitted on; SCOUTED_2026_12AY). Names carry _S51_. The transcription and
# each row's derivation: the session notes' scout51.md (tokens/s/GPU = global batch x seq / logged step time / GPUs).
# ---- 1. togethercomputer/together-dgxc-benchmarking (commits d275be99, 337f1d3c, 661e8e14): Together AI's runs of
#    NVIDIA's dgxc-benchmarking / Megatron-Bridge recipes (NeMo 25.07-26.02) on its own B200 cluster (8 B200 and 8 x
#    400 Gb/s ConnectX-7 per node), March-May 2026; the logged TFLOP/s/GPU over the derived tokens/s/GPU gives one FLOP
#    count per token within +-0.5% for every model across its rows, which checks the batch sizes and sequence lengths.
# ---- 2. ServiceNow/Fast-LLM README + examples/mistral-4-node-benchmark.yaml: Mistral-7B on 32 H100 (an "expected"
#    rate, [B]).
_S51_TG = "together-dgxc-benchmarking"

# Llama 3 70B FP8-CS, Megatron-FSDP, 5 layers CPU-offloaded, MBS 1, GBS = 2 x GPUs, seq 8192 (weak scaling)
_S51_70B_FSDP = tuple(
    (f"[A] {_S51_TG} tests/b200/reports/Llama_70B_FP8_Scaling_Benchmark_Report.md: Llama 3 70B FP8-CS Megatron-FSDP, "
     f"5 layers offloaded, MBS 1, GBS {2 * n}, {n} B200", "llama-3-70b", "b200", MB_FW, FP8_CS, n, 8192, 2 * n,
     dict(dp=n, zero_stage=3, microbatch_size=1, recompute="none", offload_activation_layers=5),
     round(2 * 8192 / step, 1), None)
    for n, step in ((64, 4.63), (128, 4.63), (256, 4.92), (512, 5.39), (592, 5.59)))

# Llama 3.1 8B, one 8 x B200 node (K8s), NeMo 26.02, TP1 PP1 CP1 DP8, GBS 128, seq 8192, no recompute, CUDA graphs
_S51_8B = (
    (f"[A] {_S51_TG} tests/b200/pretrain/llama3.1/logs/benchmark_k8s_nemo2602.md: Llama 3.1 8B BF16 DP8, MBS 2, GBS 128, "
     "8 B200", "llama-3.1-8b", "b200", MB_FW, "bf16-mixed", 8, 8192, 128,
     dict(dp=8, zero_stage=1, microbatch_size=2, recompute="none"), round(128 * 8192 / 5.701 / 8, 1), None),
    (f"[A] {_S51_TG} tests/b200/pretrain/llama3.1/logs/benchmark_k8s_nemo2602.md: Llama 3.1 8B FP8-CS DP8, MBS 2, GBS 128, "
     "8 B200", "llama-3.1-8b", "b200", MB_FW, FP8_CS, 8, 8192, 128,
     dict(dp=8, zero_stage=1, microbatch_size=2, recompute="none"), round(128 * 8192 / 4.121 / 8, 1), None),
    (f"[B: NVFP4 recipe details as the project's nvfp4-mixed] {_S51_TG} benchmark_k8s_nemo2602.md: Llama 3.1 8B NVFP4 DP8, "
     "MBS 4, GBS 128, 8 B200", "llama-3.1-8b", "b200", MB_FW, "nvfp4-mixed", 8, 8192, 128,
     dict(dp=8, zero_stage=1, microbatch_size=4, recompute="none"), round(128 * 8192 / 3.369 / 8, 1), None),
)

# Nemotron-4 15B (NeMo 2 recipe), TP1 PP1 CP1, MBS 2, seq 4096, DP = GPUs; step times from results.md and the
# 2026-04-20 512-GPU report
_S51_N15 = "models/nemotron-4-15b.config.json"
_S51_N15_ROWS = tuple(
    (f"[B: {extra}] {_S51_TG} {src}: Nemotron-4 15B {tag} DP{n}, MBS 2, GBS {gbs}, {n} B200", _S51_N15, "b200", "megatron",
     prec, n, 4096, gbs, dict(dp=n, zero_stage=1, microbatch_size=2, recompute="none"),
     round(gbs * 4096 / step / n, 1), None)
    for tag, prec, n, gbs, step, src, extra in (
        ("BF16", "bf16-mixed", 64, 256, 0.930, "tests/b200/slurm/nemotron4-15b/results.md", "26.02 + compat_runner, CUDA graphs off"),
        ("BF16", "bf16-mixed", 256, 1024, 1.015, "tests/b200/slurm/nemotron4-15b/results.md", "26.02 + compat_runner, CUDA graphs off"),
        ("BF16", "bf16-mixed", 512, 2048, 1.061, "worklog/2026-04-20_all15_models_512gpu_report.md", "GBS 2048 from the 04-26 config table"),
        ("FP8", "fp8-mixed", 64, 256, 0.763, "tests/b200/slurm/nemotron4-15b/results.md", "fp8 recipe unstated, CUDA graphs off"),
        ("FP8", "fp8-mixed", 256, 512, 0.457, "tests/b200/slurm/nemotron4-15b/results.md", "fp8 recipe unstated, CUDA graphs off; mean of 3 runs"),
        ("FP8", "fp8-mixed", 256, 1024, 0.813, "tests/b200/slurm/nemotron4-15b/results.md", "fp8 recipe unstated, CUDA graphs off"),
        ("FP8", "fp8-mixed", 256, 2048, 1.535, "tests/b200/slurm/nemotron4-15b/results.md", "fp8 recipe unstated, CUDA graphs off"),
        ("FP8", "fp8-mixed", 256, 2560, 1.899, "tests/b200/slurm/nemotron4-15b/results.md", "fp8 recipe unstated, CUDA graphs off"),
        ("FP8", "fp8-mixed", 512, 2048, 0.954, "worklog/2026-04-20_all15_models_512gpu_report.md", "fp8 recipe unstated, NeMo 25.09 container"),
    ))

# Qwen3-235B-A22B, 256 B200, TP1 PP8 EP8 ETP1, MBS 1, GBS 8192 (tests/b200/slurm/qwen3-235b/results.md)
_S51_Q = "[B: seq 4096 (Megatron-Bridge recipe; consistent with the logged TFLOP/s); recipe's forced-balance dropless MoE]"
_S51_QWEN = (
    (f"{_S51_Q} {_S51_TG} qwen3-235b/results.md: Qwen3-235B-A22B BF16 PP8 VP4 EP8, GBS 8192, 256 B200", "qwen3-235b-a22b",
     "b200", MB_FW, "bf16-mixed", 256, 4096, 8192,
     dict(dp=32, pp=8, schedule="interleaved", virtual_stages=4, ep=8, etp=1, zero_stage=1, microbatch_size=1,
          recompute="none"), round(8192 * 4096 / 37.8 / 256, 1), None),
    (f"{_S51_Q} {_S51_TG} qwen3-235b/results.md: Qwen3-235B-A22B FP8-MX PP8 EP8 (no VP, no CUDA graphs), GBS 8192, 256 B200",
     "qwen3-235b-a22b", "b200", MB_FW, "fp8-mixed", 256, 4096, 8192,
     dict(dp=32, pp=8, ep=8, etp=1, zero_stage=1, microbatch_size=1, recompute="none"),
     round(8192 * 4096 / 50.7 / 256, 1), None),
    (f"{_S51_Q} {_S51_TG} qwen3-235b/results.md: Qwen3-235B-A22B FP8-MX PP8 VP4 EP8 (no CUDA graphs), GBS 8192, 256 B200",
     "qwen3-235b-a22b", "b200", MB_FW, "fp8-mixed", 256, 4096, 8192,
     dict(dp=32, pp=8, schedule="interleaved", virtual_stages=4, ep=8, etp=1, zero_stage=1, microbatch_size=1,
          recompute="none"), round(8192 * 4096 / 50.2 / 256, 1), None),
)

# Llama 3.1 405B, seq 8192, MBS 1. The NVFP4 runs recompute every layer (read 2026-12-07, not fitted): results.md's
# PP16 VP8 config A runs the V1 B200 NVFP4 config's recompute_num_layers=1 (Megatron-Bridge scripts/performance/configs/
# llama/llama31_workload_base_configs.py, find_string id 19334072267), one layer per chunk; config D passed -rl 8 (job
# 80076) for four-layer chunks (2026-04-11 report, id 66827581858: job 80074, PP8 with recompute_num_layers=1, 'hit CUDA
# OOM after iter 1'); the 512-GPU NVFP4 run falls back to the same V1 config. The FP8-CS config sets no recompute.
_S51_405 = (
    (f"[B: seq 8192 and MBS 1 from the Megatron-Bridge recipe (consistent with the logged TFLOP/s)] {_S51_TG} tests/b200/slurm/llama3.1-405b/nvfp4/results.md: Llama 3.1 405B NVFP4 TP4 PP16 VP8 DP4 (config A, recompute_num_layers 1), "
     "GBS 1536, 256 B200", "llama-3.1-405b", "b200", MB_FW, "nvfp4-mixed", 256, 8192, 1536,
     dict(dp=4, tp=4, sp=True, tp_overlap=True, pp=16, schedule="interleaved", virtual_stages=8, zero_stage=1,
          microbatch_size=1, recompute="full"), round(1536 * 8192 / 79.3 / 256, 1), None),
    (f"[B: seq 8192 and MBS 1 from the Megatron-Bridge recipe (consistent with the logged TFLOP/s)] {_S51_TG} tests/b200/slurm/llama3.1-405b/nvfp4/results.md: Llama 3.1 405B NVFP4 TP4 PP8 VP4 DP8 (config D, recompute_num_layers 8), "
     "GBS 1536, 256 B200", "llama-3.1-405b", "b200", MB_FW, "nvfp4-mixed", 256, 8192, 1536,
     dict(dp=8, tp=4, sp=True, tp_overlap=True, pp=8, schedule="interleaved", virtual_stages=4, zero_stage=1,
          microbatch_size=1, recompute="full"), round(1536 * 8192 / 61.8 / 256, 1), None),
    (f"[B: GBS 3072 from the 04-26 config table; the V1 B200 NVFP4 config's recompute_num_layers 1] {_S51_TG} worklog/2026-04-20_all15_models_512gpu_report.md: Llama 3.1 405B "
     "NVFP4 TP4 PP16 VP8 DP8, 512 B200", "llama-3.1-405b", "b200", MB_FW, "nvfp4-mixed", 512, 8192, 3072,
     dict(dp=8, tp=4, sp=True, tp_overlap=True, pp=16, schedule="interleaved", virtual_stages=8, zero_stage=1,
          microbatch_size=1, recompute="full"), round(3072 * 8192 / 69.044 / 512, 1), None),
    (f"[B: GBS 3072 from the 04-26 config table] {_S51_TG} worklog/2026-04-20_all15_models_512gpu_report.md: Llama 3.1 405B "
     "FP8-CS TP4 PP8 CP2 VP8 DP8, 512 B200", "llama-3.1-405b", "b200", MB_FW, FP8_CS, 512, 8192, 3072,
     dict(dp=8, tp=4, sp=True, tp_overlap=True, pp=8, cp=2, schedule="interleaved", virtual_stages=8, zero_stage=1,
          microbatch_size=1, recompute="none"), round(3072 * 8192 / 69.698 / 512, 1), None),
)

# Llama 3.1 70B official Megatron-Bridge 26.02 B200 layout at 512 GPUs (TP2 PP4 VP5), seq 8192, MBS 1
_S51_70B_512 = tuple(
    (f"[B: GBS 2048 inferred (table says 256, the 64-GPU base; 2048 = base x 8 matches the logged TFLOP/s)] {_S51_TG} "
     f"worklog/2026-04-20_all15_models_512gpu_report.md: Llama 3.1 70B {tag} TP2 PP4 VP5 DP64, 512 B200",
     "llama-3-70b", "b200", MB_FW, prec, 512, 8192, 2048,
     dict(dp=64, tp=2, sp=True, tp_overlap=True, pp=4, schedule="interleaved", virtual_stages=5, zero_stage=1,
          microbatch_size=1, recompute="none"), round(2048 * 8192 / step / 512, 1), None)
    for tag, prec, step in (("FP8-MX", "fp8-mixed", 9.509), ("NVFP4", "nvfp4-mixed", 7.197)))

# Nemotron-4 340B (NeMo 25.07, TP comm overlap disabled by the PMIx workaround), TP8 PP4 VP12, GBS 128, 512 GPUs
_S51_340 = tuple(
    (f"[B: seq 4096 and MBS 1 from the dgxc recipe; fp8 recipe unstated] {_S51_TG} "
     f"worklog/2026-04-20_all15_models_512gpu_report.md: Nemotron-4 340B {tag} TP8 PP4 VP12 DP16, no TP overlap, "
     "GBS 128, 512 B200", "nemotron-4-340b", "b200", "megatron", prec, 512, 4096, 128,
     dict(dp=16, tp=8, sp=True, tp_overlap=False, pp=4, schedule="interleaved", virtual_stages=12, zero_stage=1,
          microbatch_size=1, recompute="none"), round(128 * 4096 / step / 512, 1), None)
    for tag, prec, step in (("BF16", "bf16-mixed", 2.521), ("FP8", "fp8-mixed", 1.740)))

# Fast-LLM README: Mistral-7B, 32 H100, seq 8192, batch 32, mbs 1, ZeRO-2, bf16 (examples/mistral-4-node-benchmark.yaml)
_S51_FASTLLM = (
    ("[B: README's 'expected' rate, not a logged one; H100 SXM assumed; no recompute (none configured); Fast-LLM "
     "priced with the megatron profile] ServiceNow/Fast-LLM README: Mistral-7B DP32 ZeRO-2, mbs 1, batch 32, seq 8192, "
     "32 H100", "mistral-7b", "h100-sxm", "megatron", "bf16-mixed", 32, 8192, 32,
     dict(dp=32, zero_stage=2, microbatch_size=1, recompute="none"), 9800.0, None),
)

# ---- 3. The same repository's two later reports (second read of the pass): tests/b300/pretrain/qwen3/
#    benchmark_comparison.md @ b0a7f98e (+ qwen3_job.log @ 5956915b, its config dump): Qwen3-30B-A3B BF16 on one 8 x
#    B300 node (run with the recipe's gb300 config), EP8 DP8, MBS 1, GBS 64, seq 4096, no recompute, 3.050 s per step
#    under NeMo 25.11.01 ([A]) and 2.395 s under 26.02.00 ([B]: its log not stored, the launch flags identical); and
#    tests/gb200/reports/cluster-training-performance-overview-v3.md @ 0b86473a: 64 GB200 (one NVL72 rack), NeMo 26.02,
#    the median step time of each of six racks: GPT-OSS-120B EP64 MBS 4 GBS 1280, layernorm + moe_act recompute,
#    alltoall dispatch (the log: DeepEP skipped on GB200), 5.47-5.89 s; Qwen2.5-72B TP8 PP4 DP2 with sp and no TP
#    overlap, MBS 2 GBS 512, layernorm recompute, 19.84-20.57 s; gradients reduced in fp32 (the logged DDP config).
#    One configuration measured on six racks is one row here: the median of the six (5.555 s, 20.29 s).
_S51_Q30 = dict(dp=8, ep=8, etp=1, zero_stage=1, microbatch_size=1, recompute="none")
_S51_LATER = (
    (f"[A] {_S51_TG} tests/b300/pretrain/qwen3/benchmark_comparison.md: Qwen3-30B-A3B BF16 EP8 DP8, MBS 1, GBS 64, "
     "NeMo 25.11.01, 8 B300", "qwen3-30b-a3b", "b300", MB_FW, "bf16-mixed", 8, 4096, 64, dict(_S51_Q30),
     round(64 * 4096 / 3.050 / 8, 1), None),
    (f"[B: the 26.02 config assumed = the logged 25.11 one] {_S51_TG} tests/b300/pretrain/qwen3/benchmark_comparison.md: "
     "Qwen3-30B-A3B BF16 EP8 DP8, MBS 1, GBS 64, NeMo 26.02.00, 8 B300", "qwen3-30b-a3b", "b300", MB_FW, "bf16-mixed", 8,
     4096, 64, dict(_S51_Q30), round(64 * 4096 / 2.395 / 8, 1), None),
    (f"[B: attention backend for the sink attention unknown; alltoall dispatch] {_S51_TG} "
     "tests/gb200/reports/cluster-training-performance-overview-v3.md: GPT-OSS-120B BF16 EP64 DP64, MBS 4, GBS 1280, "
     "recompute norm + moe_act, median of six racks, 64 GB200", "gpt-oss-120b", "gb200", MB_FW, "bf16-mixed-fp32-grads",
     64, 4096, 1280, dict(dp=64, ep=64, etp=1, zero_stage=1, microbatch_size=4, recompute="selective",
                          recompute_modules=("layernorm", "moe_act")), round(1280 * 4096 / 5.555 / 64, 1), None),
    (f"[A] {_S51_TG} tests/gb200/reports/cluster-training-performance-overview-v3.md: Qwen2.5-72B BF16 TP8 PP4 DP2 (sp, "
     "no TP overlap, no VP), MBS 2, GBS 512, recompute norm, median of six racks, 64 GB200", "qwen2.5-72b", "gb200",
     MB_FW, "bf16-mixed-fp32-grads", 64, 4096, 512,
     dict(dp=2, tp=8, sp=True, tp_overlap=False, pp=4, zero_stage=1, microbatch_size=2, recompute="selective",
          recompute_modules=("layernorm",)), round(512 * 4096 / 20.29 / 64, 1), None),
)

SCOUTED_2026_12AY = (*_S51_70B_FSDP, *_S51_8B, *_S51_N15_ROWS, *_S51_QWEN, *_S51_405, *_S51_70B_512, *_S51_340,
                     *_S51_FASTLLM, *_S51_LATER)

# Fifty-second scouting pass (2026-12, never fitted on; SCOUTED_2026_12AZ). Names carry _S52_. Two sources no earlier
# pass read: NVIDIA BioNeMo recipes (FSDP2 + Transformer Engine, B200 and H100) and AMD-AGI/Primus tools/convergence_test.
# ---- 1. NVIDIA/bionemo-framework (BioNeMo recipes; also mirrored as NVIDIA-BioNeMo/bionemo-framework)
#   a) bionemo-recipes/recipes/llama3_native_te/README.md @ 6eef5556f0531b88bc9ecb7e2702dbc085dcee4d
#      (NVIDIA-BioNeMo/bionemo-framework), section "Multi-node throughput (B200, production-scale runs)":
#      "**Llama-3.1-8B** (8 nodes / 64× B200, mbs=2, grad_acc=2, global batch = 256 seqs, seq_len = 8192)" ...
#      "MXFP8 + qinit reaches **22,517 unpadded tokens / s / GPU vs 17,644 for BF16**", and
#      "**Llama-3.1-70B** (4 nodes / 32× B200, cp=2, dp=16, mbs=1, grad_acc=1, gbs = 16 seqs, seq_len = 8192)" ...
#      "MXFP8 + qinit reaches **2,725 unpadded tokens / s / GPU vs 1,972 for BF16**".
#      Recipe: native PyTorch loop, FSDP2 (train_fsdp2.py; train_fsdp2_cp.py for CP), Transformer Engine layers,
#      "fused AdamW with FP32 master weights, and THD sequence packing" (README), DCLM text with the Llama 3 tokenizer
#      (hydra_config/L2_lingua_7b.yaml @ 05c8c741: use_sequence_packing: true, attn_input_format: thd,
#      use_fp32_master_weights_fused: true, max_seq_length 8192; L2_lingua_70b_thd.yaml @ c9fb2c03: thd +
#      sequence packing on top of L2_lingua_70b.yaml: cp_size 2, Llama-3.1-70B). MXFP8 + qinit:
#      L2_lingua_7b_mxfp8_qinit.yaml @ 427b4e37 (MXFP8BlockScaling E4M3, quantized_model_init: FP8 primary weights,
#      no bf16 copy -> priced 'fp8-params'). No activation-checkpointing option exists in defaults.yaml (@ aff0af6f):
#      priced recompute 'none'. ASSUMED ([B]): (i) THD packing attends within documents; priced as full causal
#      attention over 8192 (overstates attention work); the README's "unpadded tokens" is taken as all token slots
#      (packing fills the slots); (ii) the fused-master-weights path reduces gradients in bf16 (bf16-mixed);
#      (iii) the 70B run ids end in "_bia", the cluster the single-node scripts call "bia B300"
#      (benchmarks/70b_bf16_mbs1_1n_bia.sh @ 1592701b): the README's "B200" is taken as written.
#      Framework: the 'automodel' profile (FSDP2 + Transformer Engine kernels, cuDNN attention, fused loss) with
#      optimizer_dtype=fp32 (TE FusedAdam keeps fp32 master weights and moments), as the nearest profile.
#   b) bionemo-recipes/recipes/opengenome2_llama_native_te/README.md @ 12aecbdb43a2a87d2746b9fa44a4465268b0c1c0
#      (NVIDIA/bionemo-framework): "Reported results use GBS 384 on 6× H100 nodes (48 GPUs)"; table "MFU and step
#      time": "| This recipe (OG2 7B) | 6.60 | 384 | 51.8 |" (step time s, GBS, MFU %), "Step times are computed as
#      the slope of wall-clock time vs global step". tokens/s/GPU = 384 x 8192 / 6.60 / 48 = 9,930 (the README's THD
#      row gives 9,927 "Unpadded Tokens/sec/GPU", which confirms the seq and GPU count). Model:
#      hydra_config/og2_7b_thd_gqa.yaml @ 5fd66d75 (Llama 3 shape, 32 x 4096, 32 heads / 8 kv, ffn 14,336,
#      vocab 256 nucleotide tokens, untied; micro_batch_size 2, grad_acc_steps 4: 2 x 4 x 48 = 384 ✓), FSDP2,
#      fp32 master weights + fp32 gradient reduction (README "FP32 Master Weights and RoPE": MixedPrecisionPolicy
#      param bf16, reduce fp32) -> 'bf16-mixed-fp32-grads'. Same THD assumption as (a).
_S52_BN_FW = "automodel+optimizer_dtype=fp32"
_S52_BN_THD = "[B: THD packing priced as full 8192 causal attention; no AC; bf16 grad reduce assumed]"
_S52_BIONEMO = (
    (f"{_S52_BN_THD} NVIDIA-BioNeMo/bionemo-framework llama3_native_te/README.md@6eef5556: Llama-3.1-8B BF16 FSDP2 DP64, "
     "mbs 2, GA 2, GBS 256, Lingua/DCLM, 64 B200", "llama-3.1-8b", "b200", _S52_BN_FW, "bf16-mixed", 64, 8192, 256,
     dict(dp=64, zero_stage=3, microbatch_size=2, recompute="none"), 17644.0, None),
    (f"{_S52_BN_THD} NVIDIA-BioNeMo/bionemo-framework llama3_native_te/README.md@6eef5556: Llama-3.1-8B MXFP8 + quantized "
     "init (fp8 weights) FSDP2 DP64, mbs 2, GA 2, GBS 256, 64 B200", "llama-3.1-8b", "b200", _S52_BN_FW, "fp8-params", 64,
     8192, 256, dict(dp=64, zero_stage=3, microbatch_size=2, recompute="none"), 22517.0, None),
    (f"{_S52_BN_THD[:-1]}; 'B200' as the README says (run id '_bia')] NVIDIA-BioNeMo/bionemo-framework "
     "llama3_native_te/README.md@6eef5556: Llama-3.1-70B BF16 FSDP2 DP16 x CP2, mbs 1, GBS 16, 32 B200",
     "llama-3-70b", "b200", _S52_BN_FW, "bf16-mixed", 32, 8192, 16,
     dict(dp=16, cp=2, zero_stage=3, microbatch_size=1, recompute="none"), 1972.0, None),
    (f"{_S52_BN_THD[:-1]}; 'B200' as the README says (run id '_bia')] NVIDIA-BioNeMo/bionemo-framework "
     "llama3_native_te/README.md@6eef5556: Llama-3.1-70B MXFP8 + quantized init FSDP2 DP16 x CP2, mbs 1, GBS 16, "
     "32 B200", "llama-3-70b", "b200", _S52_BN_FW, "fp8-params", 32, 8192, 16,
     dict(dp=16, cp=2, zero_stage=3, microbatch_size=1, recompute="none"), 2725.0, None),
    ("[B: THD packing priced as full 8192 causal attention; no AC; H100 SXM assumed] NVIDIA/bionemo-framework "
     "opengenome2_llama_native_te/README.md@12aecbdb: OG2 7B (Llama 3 shape, vocab 256) BF16 FSDP2 DP48, mbs 2, GA 4, "
     "GBS 384, step 6.60 s, 48 H100", MODELS_DIR + "og2-7b-llama3-vocab256.config.json", "h100-sxm", _S52_BN_FW,
     "bf16-mixed-fp32-grads", 48, 8192, 384, dict(dp=48, zero_stage=3, microbatch_size=2, recompute="none"),
     round(384 * 8192 / 6.60 / 48, 1), None),
)

# ---- 2. AMD-AGI/Primus tools/convergence_test (a path no earlier pass read; the repository's
#    agent/workspace/qwen3_* and examples/ yamls were read in earlier passes).
#    configs/llama3.2_1B-convergence.yaml @ 5c50dba7: "2000 iters x 128 x 4096 = 1.05B tokens. Measured on 8x MI325X
#    at 1.33 s/iter (49.2k tokens/s/GPU)"; micro_batch_size 4, global_batch_size 128, seq_length 4096,
#    tensor/pipeline/expert parallel 1, overlap_grad_reduce + overlap_param_gather (distributed optimizer: ZeRO-1),
#    no recompute set, Primus-Turbo attention, real FineWeb-Edu data. README.md @ b463b69b ("Reference results"):
#    "Measured on 1 node x 8 MI325X, `rocm/primus:v26.7`" ... "| Llama-3.2-1B BF16 | 2000 | 1.05B | 45 min | 12.15 ->
#    3.29 | 49200 |". tokens/s/GPU = 128 x 4096 / 1.33 / 8 = 49,273.
_S52_PRIMUS_CONV = (
    ("[A] AMD-AGI/Primus tools/convergence_test/configs/llama3.2_1B-convergence.yaml@5c50dba7: Llama-3.2-1B BF16 "
     "Megatron DP8, mbs 4, GBS 128, seq 4096, 1.33 s/iter, 8 MI325X", "llama-3.2-1b", "MI325X", "megatron",
     "bf16-mixed-fp32-grads", 8, 4096, 128, dict(dp=8, zero_stage=1, microbatch_size=4, recompute="none"),
     round(128 * 4096 / 1.33 / 8, 1), None),
)

# Fifty-second pass, second read (same session, never fitted on): ms-swift (Megatron-SWIFT) and torchtune tables.
# ---- 1. modelscope/ms-swift (Megatron-SWIFT; Megatron-Core core_r0.14 + Transformer Engine under ms-swift's trainer,
#      and ms-swift's HF-Trainer + DeepSpeed path for the ZeRO columns). SFT with packing, i.e. pretraining-shaped
#      compute (full-parameter, every position through the LM head).
#   a) docs/source_en/Megatron-SWIFT/Quick-start.md @ 001320d09193522edf9f937d4af192e83c520e56 (id 39514086431),
#      "## Benchmark": "The training speed comparison for full-parameter dense models with 8K context length, using
#      `megatron sft` and `swift sft`, under a single-node, eight-GPU A800 environment is as follows:" ...
#      "**Dense** Qwen2.5-14B: | Training Speed | 9.04s/it | 10.32s/it | 10.56s/it |" (columns Megatron-LM,
#      Deepspeed-ZeRO2, Deepspeed-ZeRO3; "GPU Memory Usage | 8*64GB | 8*80GB | 8*58GB").
#      "The training speed comparison for full-parameter MoE models with 8K context length ... under a two-node,
#      16-GPU A800 environment": "**MoE** Qwen3-30B-A3B: | Training Speed | 9.6s/it | - | 91.2s/it |"
#      ("GPU Memory Usage | 16 * 60GiB | OOM | 16 * 80GiB").
#      Same page, "Training Tips": "Megatron-SWIFT uses ZeRO-1 (use_distributed_optimizer enabled by default)".
#   b) The scripts behind the rows. Dense Megatron: examples/megatron/base_to_chat.sh @ 26aee6f1 (id 3035500566;
#      benchmark/deepspeed.sh names it as "Corresponding Megatron-SWIFT script"): Qwen/Qwen2.5-14B,
#      --tensor_model_parallel_size 4, --sequence_parallel true, --micro_batch_size 1, --global_batch_size 16,
#      --packing true, --recompute_granularity selective, --max_length 8192, --attention_backend flash, 8 GPUs
#      (-> DP 2, GA 8). Dense DeepSpeed: examples/megatron/benchmark/deepspeed.sh @ 52e9b665 (id 39339222935):
#      "# 8 * 80GiB", swift sft --train_type full, --per_device_train_batch_size 1, --gradient_accumulation_steps 2,
#      --packing true, --max_length 8192, --deepspeed zero2, --attn_impl flash_attn (GBS 8 x 1 x 2 = 16).
#      MoE Megatron: examples/megatron/moe/qwen3_moe.sh (6 stored versions; first line of every one read:
#      "# ZeRO3: 91.2s/it; 16 * 80GiB" / "# Megatron-LM: 9.6s/it; 16 * 60GiB"). The version quoted beside the
#      doc table (stored copies: search hit for ms-swift examples/train/megatron/moe/qwen3_moe.sh and the doc copy
#      charliedream1/ai_wiki 31_LLM/.../01_megatron_swift.md, "训练环境是2机8 * 80GiB A800"):
#      --tensor_model_parallel_size 2, --expert_model_parallel_size 8, --moe_grouped_gemm true,
#      --moe_aux_loss_coeff 0.01, --micro_batch_size 1, --global_batch_size 16, --packing true,
#      --recompute_granularity full --recompute_method uniform --recompute_num_layers 1, --max_length 8192,
#      --sequence_parallel true (16 GPUs -> DP 8). The version @ 7b55a0c1 (id 152335685) keeps the same comment with
#      --pipeline_model_parallel_size 2, --expert_model_parallel_size 8, aux 1e-3 (priced as a sensitivity only, in
#      scout52b.md; not a row).
#   Tokens per step = GBS x max_length (packing fills each 8192 slot): 16 x 8192 = 131,072.
#      Qwen2.5-14B: 131072 / 9.04 / 8 = 1,812.4; / 10.32 / 8 = 1,587.6; / 10.56 / 8 = 1,551.5 tokens/s/GPU.
#      Qwen3-30B-A3B: 131072 / 9.6 / 16 = 853.3; / 91.2 / 16 = 89.8 tokens/s/GPU.
#   ASSUMED ([B]): (i) packing fills the 8192 slots; ms-swift's packing is padding-free (attention within each
#      packed sample): priced as full 8192 causal attention, which overstates attention work (SFT samples of
#      liucong/Chinese-DeepSeek-R1-Distill-data-110k-SFT are a few thousand tokens); (ii) A800 preset (NVLink 400 GB/s
#      bidirectional, its scale-out 25 GB/s/GPU) for Alibaba DLC nodes, network unstated; (iii) selective recompute
#      = Megatron core_attn; (iv) swift sft's gradient_checkpointing default (true) -> recompute full for the ZeRO
#      runs, HF modelling code -> hf-deepspeed profile; (v) the Qwen3-30B ZeRO-3 run's batch: per-device 1, GA 1
#      (GBS 16 = the Megatron run's), unstated; (vi) Megatron MoE: expert tensor parallel = TP (Megatron-Core 0.14
#      default when --expert-tensor-parallel-size is not set), alltoall dispatcher, routing as uniform (real
#      aux-loss routing, dropless); (vii) the number is the log's s/it at an unstated step.
#   Model: Qwen2.5-14B -> models/qwen2.5-14b.config.json (48 x 5120, 40 heads / 8 kv, ffn 13,824, vocab 152,064,
#      untied, qkv bias: the Qwen2 config as stored in id 39720353876 and id 70417149504).
_S52_SW = "modelscope/ms-swift docs/source_en/Megatron-SWIFT/Quick-start.md@001320d0 Benchmark"
_S52_SW_B = "[B: packing priced as full 8192 causal attention; A800 network preset]"
_S52_SWIFT = (
    (f"{_S52_SW_B} {_S52_SW}: Qwen2.5-14B Megatron-LM TP4 SP DP2 ZeRO-1, mbs 1, GBS 16, selective recompute, 9.04 s/it, "
     "8 A800 (examples/megatron/base_to_chat.sh@26aee6f1)", MODELS_DIR + "qwen2.5-14b.config.json", "A800", "megatron",
     "bf16-mixed", 8, 8192, 16, dict(tp=4, sp=True, dp=2, zero_stage=1, microbatch_size=1, recompute="selective"),
     131072 / 9.04 / 8, None),
    (f"{_S52_SW_B[:-1]}; swift's default gradient checkpointing] {_S52_SW}: Qwen2.5-14B DeepSpeed ZeRO-2 DP8, pdbs 1, GA 2, "
     "GBS 16, 10.32 s/it, 8 A800 (examples/megatron/benchmark/deepspeed.sh@52e9b665)", MODELS_DIR + "qwen2.5-14b.config.json",
     "A800", "hf-deepspeed", "bf16-mixed", 8, 8192, 16,
     dict(dp=8, zero_stage=2, microbatch_size=1, recompute="full"), 131072 / 10.32 / 8, None),
    (f"{_S52_SW_B[:-1]}; swift's default gradient checkpointing; zero3 in the same script] {_S52_SW}: Qwen2.5-14B DeepSpeed "
     "ZeRO-3 DP8, pdbs 1, GA 2, GBS 16, 10.56 s/it, 8 A800", MODELS_DIR + "qwen2.5-14b.config.json",
     "A800", "hf-deepspeed", "bf16-mixed", 8, 8192, 16,
     dict(dp=8, zero_stage=3, microbatch_size=1, recompute="full"), 131072 / 10.56 / 8, None),
    (f"{_S52_SW_B[:-1]}; ETP = TP (Mcore default); uniform routing for aux-loss dropless] {_S52_SW}: Qwen3-30B-A3B Megatron-LM "
     "TP2 SP EP8 DP8 ZeRO-1, mbs 1, GBS 16, full recompute, 9.6 s/it, 16 A800 (examples/megatron/moe/qwen3_moe.sh, "
     "TP2 EP8 version)", "qwen3-30b-a3b", "A800", "megatron", "bf16-mixed", 16, 8192, 16,
     dict(tp=2, sp=True, dp=8, ep=8, etp=2, zero_stage=1, microbatch_size=1, recompute="full"), 131072 / 9.6 / 16,
     None),
    (f"{_S52_SW_B[:-1]}; pdbs 1, GA 1 assumed; swift's default gradient checkpointing; HF Qwen3-MoE expert loop] {_S52_SW}: "
     "Qwen3-30B-A3B DeepSpeed ZeRO-3 DP16, GBS 16, 91.2 s/it, 16 A800", "qwen3-30b-a3b", "A800", "hf-deepspeed",
     "bf16-mixed", 16, 8192, 16, dict(dp=16, zero_stage=3, microbatch_size=1, recompute="full"),
     131072 / 91.2 / 16, None),
)

# ---- 1c. modelscope/ms-swift examples/megatron/long_text.sh @ 15898fee (id 42490395670): "# Env: 4 * A100",
#      "# Max Length: 32K", "# GPU Memory: 4 * 50GB, Training Speed 23s/it"; Qwen/Qwen2.5-7B, ZhipuAI/LongWriter-6k,
#      --tensor_model_parallel_size 4, --sequence_parallel true, --micro_batch_size 1, --global_batch_size 8,
#      --packing true, --recompute_granularity full (uniform, 1 layer), --max_length 32768, flash attention.
#      tokens/s/GPU = 8 x 32768 / 23 / 4 = 2,849.4. ASSUMED ([B]): A100 80GB (the column "A100" maps to the 80 GB
#      preset; 50 GB used); packing fills the 32K slots; priced as full causal attention over 32,768 (LongWriter
#      samples are a few thousand to ~10k tokens: attention overstated); ZeRO-1 (Megatron-SWIFT default; DP 1 here
#      so it does not matter).
_S52_SWIFT_LONG = (
    ("[B: A100 80GB; packing priced as full 32K causal attention] modelscope/ms-swift examples/megatron/long_text.sh"
     "@15898fee: Qwen2.5-7B Megatron-LM TP4 SP, mbs 1, GBS 8, full recompute, seq 32768, 23 s/it, 4 A100",
     "qwen2.5-7b", "A100", "megatron", "bf16-mixed", 4, 32768, 8,
     dict(tp=4, sp=True, dp=1, zero_stage=1, microbatch_size=1, recompute="full"), 8 * 32768 / 23 / 4, None),
)

# ---- 2. pytorch/torchtune README.md (stored id 214345278; the repository's stored README @ a9ea6d5b carries the same
#      section), "### Optimization flags": "The table below demonstrates the effects of applying some of these
#      techniques sequentially to the Llama 3.2 3B model. Each technique is added on top of the previous one" ...
#      "> Baseline uses Recipe=**full_finetune_single_device**, Model=**Llama 3.2 3B**, Batch size=**2**, Max sequence
#      length=**4096**, Precision=**bf16**, Hardware=**A100**". Cells (Technique | Peak Memory Active (GiB) | ... |
#      Tokens Per Second): "+ Packed Dataset | 60.0 | ... | 7075", "+ Compile | 51.0 | ... | 8998", "+ Chunked Cross
#      Entropy | 42.9 | ... | 9174", "+ Activation Checkpointing | 24.9 | ... | 7210", "+ Fuse optimizer step into
#      backward | 23.1 | ... | 7309". Single GPU (full_finetune_single_device), no gradient accumulation (the
#      reproduce command sets gradient_accumulation_steps=1, batch_size=2, tokenizer.max_seq_len=4096,
#      optimizer=torch.optim.AdamW). Rows taken: the packed ones up to the fused optimizer step (the baseline's 2091 is
#      unpacked, padded samples; activation offloading and 8-bit AdamW have no planner equivalent: not rows).
#      tokens/s/GPU = the cell (one GPU).
#   ASSUMED ([B]): (i) A100 80GB (the column "A100" maps to the 80 GB preset; 60 GiB active peak rules out 40 GB);
#      (ii) torchtune trains pure bf16 (bf16 weights and AdamW state, no fp32 master): priced bf16-mixed with
#      optimizer_dtype=bf16 (the planner keeps a 4-byte master copy; memory only); (iii) eager rows as the
#      'torchtitan' profile (FSDP2-native PyTorch, eager), compiled rows as 'torchtitan-compile'; the chunked CE as
#      loss_chunks=8 (torchtune CEWithChunkedOutputLoss num_output_chunks default 8); (iv) packing fills the 4096
#      slots; torchtune's packed dataset masks attention per sample (flex/document mask); priced as full causal 4096;
#      (v) "Fuse optimizer step into backward" does not change the priced work (optimizer step is the same).
#      Model: llama-3.2-3b preset (tied embeddings).
_S52_TT_B = "[B: A100 80GB; pure bf16 as bf16-mixed+optimizer_dtype=bf16; packed priced as full causal 4096]"
_S52_TT_SRC = "pytorch/torchtune README.md@a9ea6d5b Optimization flags"
_S52_TT_PREC = "bf16-mixed+optimizer_dtype=bf16"
_S52_TT_L = dict(dp=1, microbatch_size=2)
_S52_TORCHTUNE = (
    (f"{_S52_TT_B} {_S52_TT_SRC}: Llama 3.2 3B full finetune single device, bs 2, packed 4096, eager, 1 A100 (+ Packed Dataset)",
     "llama-3.2-3b", "A100", "torchtitan", _S52_TT_PREC, 1, 4096, 2, dict(_S52_TT_L, recompute="none"), 7075.0, 60.0),
    (f"{_S52_TT_B} {_S52_TT_SRC}: Llama 3.2 3B, bs 2, packed 4096, torch.compile, 1 A100 (+ Compile)",
     "llama-3.2-3b", "A100", "torchtitan-compile", _S52_TT_PREC, 1, 4096, 2, dict(_S52_TT_L, recompute="none"), 8998.0, 51.0),
    (f"{_S52_TT_B} {_S52_TT_SRC}: Llama 3.2 3B, bs 2, packed 4096, compile, chunked CE (8 chunks), 1 A100 (+ Chunked CE)",
     "llama-3.2-3b", "A100", "torchtitan-compile+loss_chunks=8", _S52_TT_PREC, 1, 4096, 2, dict(_S52_TT_L, recompute="none"),
     9174.0, 42.9),
    (f"{_S52_TT_B} {_S52_TT_SRC}: Llama 3.2 3B, bs 2, packed 4096, compile, chunked CE, full AC, 1 A100 (+ Activation "
     "Checkpointing)", "llama-3.2-3b", "A100", "torchtitan-compile+loss_chunks=8", _S52_TT_PREC, 1, 4096, 2,
     dict(_S52_TT_L, recompute="full"), 7210.0, 24.9),
    (f"{_S52_TT_B[:-1]}; optimizer-in-backward not priced] {_S52_TT_SRC}: Llama 3.2 3B, bs 2, packed 4096, compile, chunked CE, "
     "full AC, optimizer step fused into backward, 1 A100", "llama-3.2-3b", "A100", "torchtitan-compile+loss_chunks=8",
     _S52_TT_PREC, 1, 4096, 2, dict(_S52_TT_L, recompute="full"), 7309.0, 23.1),
)

# ---- 2b. Same README, "### Memory and training speed": "all the below numbers are provided for batch size 2 (without
#      gradient accumulation), a dataset packed to sequence length 2048, and torch compile enabled." Row
#      "| Llama 3.1 70B | Full finetune | 8x A100  | 13.9 GiB ** | 1568  |", "*= Measured over one full training epoch",
#      "**= Uses CPU offload with fused optimizer". 1568 tokens/s is read as the total over the 8 GPUs (as a per-GPU
#      rate it would be 2.1x the A100's bf16 peak at 6 x 70B FLOP/token): 196 tokens/s/GPU.
#   ASSUMED ([B]): total not per GPU; FSDP2 over 8 with parameters and optimizer on the host (fsdp_cpu_offload ->
#      offload_params + offload_optimizer), activation checkpointing on (the 70B_full config's
#      enable_activation_checkpointing: True), A100 80GB with its preset's PCIe host link, pure bf16 as above, no
#      chunked loss; model llama-3-70b preset (Llama 3.1 70B's shape).
_S52_TORCHTUNE_70B = (
    ("[B: 1568 tokens/s is the 8-GPU total; CPU offload as offload_params+offload_optimizer; full AC; A100 80GB] "
     f"{_S52_TT_SRC[:-19]} Memory and training speed: Llama 3.1 70B full finetune FSDP2 x 8, CPU offload, bs 2, packed "
     "2048, compile, 8 A100", "llama-3-70b", "A100", "torchtitan-compile", _S52_TT_PREC, 8, 2048, 16,
     dict(dp=8, zero_stage=3, microbatch_size=2, recompute="full", offload_params=True, offload_optimizer=True),
     1568.0 / 8, 13.9),
)

SCOUTED_2026_12AZ = (*_S52_BIONEMO, *_S52_PRIMUS_CONV, *_S52_SWIFT, *_S52_SWIFT_LONG, *_S52_TORCHTUNE,
                     *_S52_TORCHTUNE_70B)


# Fifty-third scouting pass (2026-12, never fitted on; SCOUTED_2026_12BA). Names carry _S53_. Five tables no
# earlier pass read: four FlagOpen/FlagPerf training/nvidia cases and llm-jp/scripts' LLM-jp-3 172B run.
# Model files new in this pass: benchmarks/models/aquila2-7b.config.json, flagperf-qwen1.5-moe-8x1.8b.config.json and
# llm-jp-3-172b.config.json (sources in each file).
# Every source below is one of FlagOpen/FlagPerf's training/nvidia/<case>/README.md "性能指标" tables that no earlier
# pass read (earlier passes read FlagPerf's llama3_8B/llama3_70B/llama2_70B-megatron, llama2_7b-megatron-deepspeed and
# the *-deepspeed cases: SCOUT5_FLAGPERF and the forty-fifth pass's _FP rows). FlagPerf's "token/p/s" is tokens per second
# per accelerator ("平均单卡每秒处理的token数").
# ---- 1. FlagOpen/FlagPerf training/nvidia/llama1_7B-paddle/README.md @ 20ce265be254527ca4e8e99bd34c3087e11880ab
#    (PaddleNLP on paddle-2.5.1, "NVIDIA DGX A100(80G)" / "(40G * 8)", one node, "InfiniBand，200Gb/s"). Table columns
#    "配置 | config | precision | fix_hp | parallel_strategy | throughput | memory"; LLaMA-7B rows (facebook/llama-7b,
#    max_seq_length 2048, openwebtext), e.g.
#      "| A100单机8卡（1x8*80G）  | config_TP1PP1SH2SP8A10080Gx1x8 | fp16, level="O2" | per_device_bs=4, accumulate=64,
#       (global bs = 4M tokens) | flash_attention=True, recompute=False, use_fused_rms_norm=True, sharding="stage2",
#       sharding_degree=8 |   16.67 * 2048 / 8 = 4267 tokens/s   |  70.09 * 8 GB  |"
#    The throughput cell is samples/s x 2048 / 8 GPUs, i.e. tokens/s/GPU. Layout from the config file names
#    (TPx PPy SH<sharding stage> SP<sharding degree>) and the configs read: config_TP2PP4SH1SP1A10080Gx1x8.py @ 1fe5fb53
#    (per_device_train_batch_size 4, tensor_parallel_degree 2, pipeline_parallel_degree 4, virtual_pp_degree 1,
#    sharding_parallel_degree 1, gradient_accumulation_steps 512, use_flash_attention 1, use_fused_rms_norm 1, fp16 O2,
#    recompute False), config_TP1PP1SH2SP8A10040Gx1x8.py @ 66eb17e4 (batch 2, sharding stage2 degree 8, accumulation
#    128, recompute True, recompute_granularity "full"). The table's parallel_strategy text of the TP2PP4 rows
#    ("sharding="stage2", sharding_degree=4") is a copy of the row above it and contradicts 8 GPUs; the file name and
#    the stored config (sharding degree 1) are used. The 40G rows say "global bs = 2M tokens" but batch x accumulation x
#    DP gives 2,048 sequences (4M tokens); the product is used (GA >= 128 in every row, so the fill/drain share is the
#    same either way). The "LLaMA-13B" block repeats the 40G 7B numbers cell for cell (copy-paste): not used.
#    ASSUMED ([B]): PaddleNLP priced with the megatron profile (fused kernels, flash attention; Paddle's sharding stage 1/2
#    as ZeRO-1/2 over the sharding group); fp16 O2 (fp16 weights, fp32 master, loss scaling) as fp16-mixed; no sequence
#    parallelism (not set); 1F1B for the pipeline rows; memory column "N * 8 GB" read as GiB per GPU (as the earlier
#    FlagPerf rows read nvidia-smi), for the PP rows the largest stage. Model: the llama-2-7b preset (LLaMA-1 7B has the
#    same shape: 32 x 4096, ffn 11008, 32 MHA heads, vocab 32000, untied).
_S53_PD = "FlagOpen/FlagPerf training/nvidia/llama1_7B-paddle/README.md@20ce265b"
_S53_PD_B = "[B: PaddleNLP as the megatron profile; fp16 O2 as fp16-mixed; no SP]"
_S53_PADDLE = tuple(
    (f"{_S53_PD_B} {_S53_PD}: LLaMA-7B PaddleNLP {cfg}, bs {mbs}, GA {ga}, seq 2048, {rc}, 8 {hwname}",
     "llama-2-7b", hw, "megatron", "fp16-mixed", 8, 2048, mbs * ga * dp,
     dict(dp=dp, tp=tp, pp=pp, zero_stage=zs, microbatch_size=mbs, recompute=rc), round(sps * 2048 / 8, 1), mem)
    for cfg, hw, hwname, dp, tp, pp, zs, mbs, ga, rc, sps, mem in (
        ("TP1 PP1 sharding stage2 x8", "A100 80GB", "A100 80GB", 8, 1, 1, 2, 4, 64, "none", 16.67, 70.09),
        ("TP2 PP1 sharding stage1 x4", "A100 80GB", "A100 80GB", 4, 2, 1, 1, 4, 128, "none", 15.19, 58.73),
        ("TP2 PP1 sharding stage2 x4", "A100 80GB", "A100 80GB", 4, 2, 1, 2, 4, 128, "none", 14.26, 54.01),
        ("TP2 PP4 DP1", "A100 80GB", "A100 80GB", 1, 2, 4, 1, 4, 512, "none", 14.54, 46.80),
        ("TP1 PP1 sharding stage2 x8", "A100 40GB", "A100 40GB", 8, 1, 1, 2, 2, 128, "full", 10.72, 33.55),
        ("TP2 PP1 sharding stage1 x4", "A100 40GB", "A100 40GB", 4, 2, 1, 1, 2, 256, "full", 8.45, 28.4),
        ("TP2 PP1 sharding stage2 x4", "A100 40GB", "A100 40GB", 4, 2, 1, 2, 2, 256, "full", 8.44, 25.8),
        ("TP2 PP4 DP1", "A100 40GB", "A100 40GB", 1, 2, 4, 1, 2, 1024, "full", 8.72, 20.41),
    ))

# ---- 2. FlagOpen/FlagPerf training/nvidia/aquila2_7b_finetune-flagscale/README.md @ 2604a550aa9bce5d26c08ca5a55dfccb524af56e
#    ("NVIDIA DGX A800(80G)", "InfiniBand，200Gb/s", "训练框架版本：FlagScale.git@ed55532", "值得注意的是，ed55532版本的
#    flagscale训练框架尚未实现计算通信重叠" = this FlagScale commit has no compute/communication overlap; "flash attention 2";
#    "local_batchsize ... 在本case中默认为1", "seqlength ... 默认为2048", "gradient_accumulate_steps ... 默认为4";
#    data: alpaca fine-tuning set, "数据精度 amp"). Rows ("配置 | parallel | fix_hp | token/p/s | loss | mem | MFU"):
#      "| A800单机8卡（1x8）  | TP1PP1DP8 |  /                | 3813.2 | 2.61 | 75/80 | 51.3% |"
#      "| A800单机8卡（1x8）  | TP2PP1DP4 |  GAS=8                | 3639.8 | 2.49 | 41/80 | 49.0% |"
#      "| A800单机8卡（1x8）  | TP1PP1DP8 |  GAS=16(GBS=128=256K tokens)                | 4318.9 | 2.90 | 75/80 | 58.1% |"
#    The MFU column checks the FLOP count: 0.513 x 312e12 / 3813.2 = 42.0 GFLOP/token = 6 x 7.0B (PaLM MFU without
#    attention): a ~7B model at every token of the 2048 slot (the samples fill the slot: packed or padded, unstated).
#    config/config_A800x1x8.py @ 2fe09ab2: seqlength 2048, batchsize 1, accumulate_steps 9 (a later edit; the README's
#    default 4 is used for the first row), tensor_parallel 1, pipeline_parallel 1, flashattn True.
#    ASSUMED ([B]): bf16 for "amp"; distributed optimizer (ZeRO-1: without it 7.3B params x 18 B = 131 GB would not fit
#    the reported 75 GB); no activation recompute; sequence parallel in the TP2 row; no gradient-reduce overlap
#    (overlap_grad_reduce=False, the README's note); every 2048 position priced (alpaca samples padded / packed to 2048).
#    Model: Aquila2-7B as /work/notes/s53/models/aquila2-7b.config.json (Llama shape: 32 x 4096, 32 MHA heads, ffn 11008
#    = the 'multiple_of 256' rule of FlagAI's aquila-7b config.json "dim": 4096, "n_layers": 32, "n_heads": 32,
#    "vocab_size": 100008 (stored copy, find_string id 30372997160); Aquila2-7B assumed to keep that shape, untied).
_S53_AQ = "FlagOpen/FlagPerf training/nvidia/aquila2_7b_finetune-flagscale/README.md@2604a550"
_S53_AQ_B = "[B: bf16; distributed optimizer; no AC; Aquila2-7B = aquila-7b shape; no grad-reduce overlap]"
_S53_AQUILA = (
    (f"{_S53_AQ_B[:-1]}; GAS 4 = README default] {_S53_AQ}: Aquila2-7B FlagScale TP1 PP1 DP8, MBS 1, GAS 4, GBS 32, "
     "seq 2048, 8 A800", MODELS_DIR + "aquila2-7b.config.json", A800, "megatron", "bf16-mixed", 8, 2048, 32,
     dict(dp=8, tp=1, pp=1, zero_stage=1, microbatch_size=1, recompute="none", overlap_grad_reduce=False), 3813.2, 75.0),
    (f"{_S53_AQ_B[:-1]}; SP on] {_S53_AQ}: Aquila2-7B FlagScale TP2 PP1 DP4, MBS 1, GAS 8, GBS 32, seq 2048, 8 A800",
     MODELS_DIR + "aquila2-7b.config.json", A800, "megatron", "bf16-mixed", 8, 2048, 32,
     dict(dp=4, tp=2, sp=True, pp=1, zero_stage=1, microbatch_size=1, recompute="none", overlap_grad_reduce=False),
     3639.8, 41.0),
    (f"{_S53_AQ_B} {_S53_AQ}: Aquila2-7B FlagScale TP1 PP1 DP8, MBS 1, GAS 16, GBS 128, seq 2048, 8 A800",
     MODELS_DIR + "aquila2-7b.config.json", A800, "megatron", "bf16-mixed", 8, 2048, 128,
     dict(dp=8, tp=1, pp=1, zero_stage=1, microbatch_size=1, recompute="none", overlap_grad_reduce=False), 4318.9, 75.0),
)

# ---- 3. FlagOpen/FlagPerf training/nvidia/qwen1.5_MoE-megatron/README.md @ 32f1a7a7299e8f76190e74fce111d5b0afceb1f9
#    ("NVIDIA DGX A800(80G)", "InfiniBand，200Gb/s", "训练框架版本：Megatron-LM-240405", "实施者：Pai-Megatron-Patch",
#    "flash attention 2"; "local_batchsize ... 默认为1", "seqlength ... 默认为8192", "global_batchsize ... 默认为512").
#    Rows: "| A800单机8卡（1x8）  |    bf16    | TP1PP2DP4 |  / | 7450.7 | 8.53 | 66/80 | 32.95% |" and
#          "| A800单机8卡（1x8）  |    fp16    | TP1PP2DP4 |  /| 7537.7 | 8.59 | 59/80 | 33.33% |".
#    Launch script training/benchmarks/qwen1.5_MoE/megatron/megatron_pai_main.sh @ 04c97573 ("# Runs Qwen1.5 14B(8*1.8B)
#    MoE model on 8xA800 GPUs"): --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --ffn-hidden-size 5504
#    --swiglu --untie-embeddings-and-output-weights --add-qkv-bias, --moe-router-topk 2 --num-experts 8
#    --expert-model-parallel-size 1 --moe-router-load-balancing-type aux_loss, --extra-vocab-size 293 (Qwen2 tokenizer,
#    151,643 + 293 = 151,936), --use-flash-attn --transformer-impl transformer_engine --recompute-activations,
#    --use-distributed-optimizer --sequence-parallel; config_A800x1x8.py @ 572fd7d8: batchsize 1, gbs 512, seqlength 8192,
#    tensor_parallel 1, pipeline_parallel 2. The same two rows sit in training/nvidia/qwen1.5_MoE-megatron_pai/README.md
#    @ 49f69bad, whose text says "seqlength ... 在本case中默认为4096": the sequence length is the one conflict ([B]: 8192
#    from the config file and this README; the MFU column, 0.3295 x 312e12 / 7450.7 = 13.8 GFLOP/token = 6 x 2.3B active
#    parameters without attention, cannot tell 4096 from 8192). The model file is new:
#    /work/notes/s53/models/flagperf-qwen1.5-moe-8x1.8b.config.json (Mixtral-style: 8 experts of ffn 5504, top-2, no
#    shared expert; the qkv bias is not represented: 3 x 2048 parameters a layer). Routing as the planner's default for
#    aux-loss dropless MoE (no forced balance in the script).
_S53_QM = "FlagOpen/FlagPerf training/nvidia/qwen1.5_MoE-megatron/README.md@32f1a7a7"
_S53_QMOE = tuple(
    (f"[B: seq 8192 (the _pai copy of the table says 4096)] {_S53_QM}: Qwen1.5 8x1.8B MoE (Pai-Megatron-Patch) {tag} TP1 PP2 DP4 EP1, MBS 1, GBS 512, seq 8192, "
     "selective recompute, dist-opt, 8 A800", MODELS_DIR + "flagperf-qwen1.5-moe-8x1.8b.config.json", A800, "megatron",
     prec, 8, 8192, 512, dict(dp=4, tp=1, pp=2, ep=1, zero_stage=1, microbatch_size=1, recompute="selective"), tps, mem)
    for tag, prec, tps, mem in (("BF16", "bf16-mixed", 7450.7, 66.0), ("FP16", "fp16-mixed", 7537.7, 59.0)))

# ---- 4. FlagOpen/FlagPerf training/nvidia/mixtral_8x7B-megatron/README.md @ 68d2944f886c830005dc78469a2e73bd6ba77b6e
#    (a stored earlier version; the latest stored version @ 04218a46 moved to seq 8192 / PP4 TP8 and leaves token/p/s
#    blank). "机器型号: NVIDIA DGX H100(80G)", "InfiniBand，400Gb/s", "megatron-core tag:core_v0.6.0", "实施细节：
#    PP2DP2EP1TP8", "flash attention 2 / recompute-activations / transformer-engine impl / moe-grouped-gemm",
#    "local_batchsize ... 默认为3", "seqlength ... 默认为4096", "global_batchsize ... 默认为1200，使得globalbatchsize=4.8M
#    tokens". Row: "| H1004机32卡（4x8）  | bf16   | PP2DP2EP1TP8 | / | 2844.0  | *（仅供性能参考）* | 75/80 | 20.7% |".
#    MFU check: 0.207 x 989e12 / 2844 = 72 GFLOP/token = 6 x 12.0B (Mixtral's ~12.9B active, PaLM MFU without attention).
#    The launch script (megatron_main.sh, the stored version @ 04218a46) sets --sequence-parallel, --use-distributed-optimizer,
#    --use-mcore-models, --use-flash-attn, --recompute-activations, bf16, aux-loss top-2 routing, GQA 8 groups.
#    ASSUMED ([B]): the earlier script had the same flags (not stored at 68d2944f); expert TP = TP 8 (core 0.6: experts
#    split over the tensor-parallel group when EP 1); selective recompute for --recompute-activations; routing as the
#    planner's default for aux-loss dropless MoE.
_S53_MX = (
    ("[B: flags from the later stored script; ETP = TP 8] FlagOpen/FlagPerf training/nvidia/mixtral_8x7B-megatron/"
     "README.md@68d2944f: Mixtral 8x7B Megatron-core 0.6 TP8 SP PP2 DP2 EP1, MBS 3, GBS 1200, seq 4096, selective "
     "recompute, grouped GEMM, 32 H100", "mixtral-8x7b", "H100 80GB", "megatron", "bf16-mixed", 32, 4096, 1200,
     dict(dp=2, tp=8, sp=True, pp=2, ep=1, etp=8, zero_stage=1, microbatch_size=3, recompute="selective"), 2844.0, 75.0),
)

# ---- 5. llm-jp/scripts pretrain/scripts/v3-172b-exp2-sakura/README.md @ 12d0dff0a653df11de0a0e0084794371c586d642
#    (LLM-jp-3 172B pre-training on the Sakura cluster): "必要リソース: gpu (H100 x8) 64ノード", "学習速度: 1日あたり約2k
#    steps" (about 2k steps a day). train.sh @ 5f20cf11: HIDDEN_SIZE=12288, FFN_HIDDEN_SIZE=38464, NUM_LAYERS=96,
#    NUM_HEADS=96, NUM_QUERY_GROUPS=16, SEQ_LENGTH=4096, TENSOR_PARALLEL_SIZE=4, PIPELINE_PARALLEL_SIZE=16,
#    CONTEXT_PARALLEL_SIZE=1, MICRO_BATCH_SIZE=1, GLOBAL_BATCH_SIZE=1728, --sequence-parallel --use-distributed-optimizer
#    --bf16 --untie-embeddings-and-output-weights --swiglu --use-flash-attn --recompute-activations
#    --recompute-granularity "selective" --transformer-impl "transformer_engine" --use-z-loss; sbatch.sh: --nodes=64
#    --gpus-per-node=8 (512 GPUs, DP 8). tokens/s/GPU = 2000 x 1728 x 4096 / 86400 / 512 = 320.0.
#    ASSUMED ([B]): the "about 2k steps a day" is a rounded daily rate that includes checkpoint saves and any restarts
#    (an upper bound on step time, a lower bound on the steady-state rate; only good to a few percent either way);
#    H100 SXM preset network (Sakura's fabric unstated); 1F1B (no virtual stages set); vocabulary 99,584 (LLM-jp-3's
#    Hugging Face vocab_size; the 100k ver3.0 tokenizer) in /work/notes/s53/models/llm-jp-3-172b.config.json.
_S53_LLMJP = (
    ("[B: approximate daily rate (about 2k steps/day), overheads included; H100 SXM network preset] llm-jp/scripts "
     "pretrain/scripts/v3-172b-exp2-sakura/README.md@12d0dff0 + train.sh@5f20cf11: LLM-jp-3 172B Megatron TP4 SP PP16 DP8, "
     "MBS 1, GBS 1728, seq 4096, selective recompute, dist-opt, 512 H100", MODELS_DIR + "llm-jp-3-172b.config.json",
     "H100-SXM", "megatron", "bf16-mixed", 512, 4096, 1728,
     dict(dp=8, tp=4, sp=True, pp=16, zero_stage=1, microbatch_size=1, recompute="selective"),
     round(2000 * 1728 * 4096 / 86400 / 512, 1), None),
)

SCOUTED_2026_12BA = (*_S53_PADDLE, *_S53_AQUILA, *_S53_QMOE, *_S53_MX, *_S53_LLMJP)


# Fifty-third scouting pass, second scout (2026-12, never fitted on; SCOUTED_2026_12BB). Names carry _S53B_. One source
# no earlier pass read: Modalities/modalities' scaling experiments (PyTorch FSDP1 on Leonardo Booster's 4 x A100 64 GB
# nodes and MareNostrum 5's 4 x H100 64 GB nodes). Model files new in this pass:
# benchmarks/models/modalities-gpt-{2.7b,6.7b,13b}.config.json (benchmarks/models/README.md).
# ---- 1. Modalities/modalities (the OpenGPT-X / Fraunhofer IAIS PyTorch-FSDP framework) scaling experiments:
#    docs/scaling_experiments/scaling_leonardo.md @ 8a9b6617bd8ff7f45fb00bcb626e43eb2220e6b1 (search id 15602262552) and
#    docs/scaling_experiments/scaling_mn5.md @ 5644c95fdce22447827b1de8049efefb027a8480 (search id 15276961315); the
#    README's "Scaling Experiments" section (stored copy id 14992073537) repeats a subset of both files under the headings
#    "## Leonardo Booster  - NVIDIA A100 64GB" and "## MareNostrum5 - NVIDIA H100 64GB" and says "we explored a
#    **limited** set of different configurations (batch size, gradient accumulation steps, etc.) to get our baseline
#    results". Columns: "|  | No. Parameters (B) | GPUs | Samples/s | GradAccm | MBS | GBS | Sequence Length | Precision
#    | Sharding | AC | GPU Type | MFU |". Rows used (quoted verbatim):
#      Leonardo: "| 2 | 2.7 | 8 | 18.63 | 1 | 2 | 16 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.5847 |"
#                "| 27 | 2.7 | 256 | 303.17 | 1 | 2 | 512 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.2974 |"
#                "| 3 | 2.7 | 8 | 18.43 | 1 | 2 | 16 | 4096 | BF_16 | HYBRID_SHARD | False | NVIDIA A100 | 0.5786 |"
#                "| 26 | 2.7 | 256 | 495.44 | 1 | 2 | 512 | 4096 | BF_16 | HYBRID_SHARD | False | NVIDIA A100 | 0.4859 |"
#                "| 4 | 2.7 | 8 | 19.94 | 1 | 4 | 32 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.626 |"
#                "| 28 | 2.7 | 256 | 506.08 | 1 | 4 | 1024 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.4964 |"
#                "| 31 | 6.7 | 8 | 9.28 | 1 | 2 | 16 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.6867 |"
#                "| 45 | 6.7 | 256 | 225.24 | 1 | 2 | 512 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA A100 | 0.5209 |"
#      MN5:      "| 2 | 2.7 | 4 | 15.06 | 1 | 2 | 8 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA H100 | 0.2983 |"
#                "| 48 | 2.7 | 512 | 1365.31 | 1 | 2 | 1024 | 4096 | BF_16 | FULL_SHARD | False | NVIDIA H100 | 0.2112 |"
#                "| 3 | 2.7 | 4 | 15.14 | 1 | 2 | 8 | 4096 | BF_16 | HYBRID_SHARD | False | NVIDIA H100 | 0.2998 |"
#                "| 53 | 2.7 | 1024 | 3618.0 | 1 | 2 | 2048 | 4096 | BF_16 | HYBRID_SHARD | False | NVIDIA H100 | 0.2799 |"
#                "| 94 | 13 | 8 | 3.21 | 1 | 1 | 8 | 8192 | BF_16 | FULL_SHARD | True | NVIDIA H100 | 0.3174 |"
#                "| 110 | 13 | 2048 | 241.79 | 1 | 1 | 2048 | 8192 | BF_16 | FULL_SHARD | True | NVIDIA H100 | 0.0935 |"
#    Selection rule (fixed before pricing, not by agreement): for every series the README tables show (size x sharding x
#    MBS x AC), the smallest and the largest GPU count in the detail file; the README's 28B series is replaced by the
#    detail file's 13B AC series (no shape could be pinned for the 28B, see the notes) with the same rule.
#    tokens/s/GPU = Samples/s x Sequence Length / GPUs (GBS = GPUs x MBS, GradAccm 1: Samples/s is the global rate),
#    e.g. 18.63 x 4096 / 8 = 9538.6.
#    MFU check (Modalities' get_theoretical_flops_per_token "6*N + 12*L*T*H", PEAK_PERFORMANCE A100 312e12 / H100 989e12,
#    search ids 15175955719 / 10039538731): MFU x peak / (tokens/s/GPU) gives 19.13 GFLOP/token for every 2.7B row,
#    45.07-45.11 for 6.7B, 85.5-85.7 (seq 4096) / 95.5 (seq 8192) for 13B, i.e. N = 2.517B / 6.44B / 12.58B and
#    L x H = 32 x 2560 / 32 x 4096 / 40 x 5120 - exactly 12 L H^2 (the GPT-3 2.7B / 6.7B / 13B shapes, no embedding
#    term in N).
#    Precision: Modalities' MixedPrecisionSettings.BF_16 = MixedPrecision(param_dtype=torch.bfloat16,
#    reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16) (search id 15502975787) -> "bf16-mixed" (bf16 gradient
#    reduction). FSDP1 (FULL_SHARD over all ranks; HYBRID_SHARD = FSDP1's default intra-node shard group, inter-node
#    replicas: dp_shard = GPUs per node = 4), AC False -> recompute none, True -> full (Modalities' activation
#    checkpointing wraps whole GPT2Blocks).
#    ASSUMED ([B]):
#    - model: the configs are not in the stored repository. Modalities' gpt2 model as its example configs set it
#      (config_files/training/config_lorem_ipsum.yaml @ 053275e1: activation_type swiglu, rms_norm, RotaryTransform,
#      vocab_size 50304) with a SwiGLU width of int(8h/3) (6826 / 10922 / 13653) so that a layer holds 12 h^2 weights as
#      the MFU column implies; MHA with 32 / 32 / 40 heads (GPT-3's); vocab 50304, tied. Files:
#      models53b/modalities-gpt-{2.7b,6.7b,13b}.config.json (2.516B / 6.442B / 12.583B non-embedding parameters).
#    - hardware (system facts not in the source): Leonardo Booster nodes = 4 x A100 64 GB (custom SXM, HBM2e) with
#      2 x dual-port HDR100 (400 Gb/s per node = 12.5 GB/s per GPU); MareNostrum 5 ACC nodes = 4 x H100 64 GB with
#      4 x NDR200 (800 Gb/s per node = 25 GB/s per GPU). Priced as the A100 80GB / H100 SXM presets with hbm_bytes 64 GiB,
#      scale_up_size 4, devices_per_host 4 and those scale-out rates; the presets' HBM bandwidth and NVLink rates kept.
#    - framework: the pytorch-fsdp profile (FSDP1, eager, as the fms-fsdp rows); flash attention assumed (Modalities'
#      attention_implementation not stated for these runs).
_S53B_MOD = "Modalities/modalities docs/scaling_experiments"
_S53B_MOD_B = "[B: GPT-3-shaped SwiGLU model (12h^2/layer), vocab 50304 tied; system network from the site specs]"
_S53B_LEO = "A100 80GB+hbm_bytes=68719476736+scale_up_size=4+devices_per_host=4+scale_out_bandwidth=12500000000"
_S53B_MN5 = "H100 80GB+hbm_bytes=68719476736+scale_up_size=4+devices_per_host=4+scale_out_bandwidth=25000000000"
_S53B_MODALITIES = tuple(
    (f"{_S53B_MOD_B} {_S53B_MOD}/{fname}@{commit}: row {idx}, {size}B {shard}, {gpus} {gpu} 64GB, MBS {mbs}, GBS "
     f"{gpus * mbs}, seq {seq}, {'full AC' if ac else 'no AC'}",
     MODELS_DIR + f"modalities-gpt-{size.lower()}b.config.json", hw, "pytorch-fsdp", "bf16-mixed", gpus, seq, gpus * mbs,
     dict(dp=gpus, zero_stage=3, microbatch_size=mbs, recompute="full" if ac else "none",
          **({"dp_shard": 4} if shard == "HYBRID_SHARD" else {})),
     round(sps * seq / gpus, 1), None)
    for fname, commit, hw, gpu, idx, size, gpus, sps, mbs, seq, shard, ac in (
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 2, "2.7", 8, 18.63, 2, 4096, "FULL_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 27, "2.7", 256, 303.17, 2, 4096, "FULL_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 3, "2.7", 8, 18.43, 2, 4096, "HYBRID_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 26, "2.7", 256, 495.44, 2, 4096, "HYBRID_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 4, "2.7", 8, 19.94, 4, 4096, "FULL_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 28, "2.7", 256, 506.08, 4, 4096, "FULL_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 31, "6.7", 8, 9.28, 2, 4096, "FULL_SHARD", False),
        ("scaling_leonardo.md", "8a9b6617", _S53B_LEO, "A100", 45, "6.7", 256, 225.24, 2, 4096, "FULL_SHARD", False),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 2, "2.7", 4, 15.06, 2, 4096, "FULL_SHARD", False),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 48, "2.7", 512, 1365.31, 2, 4096, "FULL_SHARD", False),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 3, "2.7", 4, 15.14, 2, 4096, "HYBRID_SHARD", False),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 53, "2.7", 1024, 3618.0, 2, 4096, "HYBRID_SHARD", False),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 94, "13", 8, 3.21, 1, 8192, "FULL_SHARD", True),
        ("scaling_mn5.md", "5644c95f", _S53B_MN5, "H100", 110, "13", 2048, 241.79, 1, 8192, "FULL_SHARD", True),
    ))

SCOUTED_2026_12BB = _S53B_MODALITIES


# Fifty-fourth scouting pass (2026-12, never fitted on; SCOUTED_2026_12BC). Names carry _S54_. One source no earlier
# pass read: Oneflow-Inc/DLPerf's reproductions of NVIDIA Megatron-LM (8aa4619, 2021) and DeepSpeed 0.3 + Megatron-LM
# on 4 nodes of 8 x V100-SXM2-16GB with one 100 Gb EDR HCA per node. Row-selection rule (fixed before any row was
# priced): every row of the two tables that ran NVIDIA's or Microsoft's Megatron-LM code; a configuration the
# Megatron-LM table measures twice enters once, as its first printed row (the repeat is quoted as run-to-run spread).
# The OneFlow-GPT rows of the same report are not priced (no OneFlow profile).
# Shared hardware: DLPerf's cluster, stated in every README used here: "4 台各配置了 8 张 V100-SXM2-16GB GPU 的服务器",
# "Tesla V100-SXM2-16GB x 8", "InfiniBand 100 Gb/sec (4X EDR), Mellanox Technologies MT27700 Family" (one HCA, mlx5_0,
# in the nvidia-smi topo matrix), NVLink hybrid cube mesh (NV1 / NV2 links in the same matrix: DGX-1-style, not
# NVSwitch). Priced as the V100 32GB preset (125 TFLOP/s fp16, 900 GB/s HBM2: the same for the 16 GB SXM2 part) with
# hbm_bytes 16 GiB, 8 GPUs per NVLink domain and host, and 100 Gb/s per node = 12.5 GB/s / 8 = 1.5625 GB/s per GPU
# scale-out. ASSUMED: the preset's 150 GB/s NVLink rate and 0.77 efficiency (fitted on NVSwitch DGX-2H rows) for the
# cube mesh.
_S54_HW = ("V100 32GB+hbm_bytes=17179869184+scale_up_size=8+devices_per_host=8+scale_out_bandwidth=1562500000")
_S54_PREC = "fp16-mixed+attention=naive+dropout=True"

# ---- 1. Oneflow-Inc/DLPerf Megatron-LM/README.md @ 01e43de400ab91475437b181f220777615c24253 (search id 22641068479),
#    "[NVIDIA/Megatron-LM]复现": NVIDIA/Megatron-LM @ 8aa4619f2b2a57b5725026a50ebd2b15e8121482, NGC PyTorch 20.12, NCCL
#    2.8.3; scripts Megatron-LM/scripts/mutil_perf_pretrain_gpt_dp_mp_pp.sh @ 10f79798 (id 22135582221) and
#    ..._1536_16_16.sh @ 80718877 (id 22196901639): --seq-length 2048, --max-position-embeddings 2048,
#    --checkpoint-activations, --fp16, GPT-2 BPE vocabulary; the summary report reports/GPT/
#    dlperf_gpt_test_report_210512.md @ 4bdc37d9 (id 22562655570): "All models use a vocabulary size of 51,200 and a
#    sequence length of 2048", "All tests were performed on 4 Nodes with 8x Tesla V100-SXM2-16GB GPUs", its
#    Megatron-LM sequences/sec column = global batch / latency of the README (e.g. 2 / 0.46412 s = 4.31).
#    Case table columns "group | case | num-nodes | num-gpus-per-node | data-parallel-size | tensor-model-parallel-size
#    | pipeline-model-parallel-size | micro-batch-size | micro-batch-size-times-data-parallel-size |
#    num-accumulation-steps | global-batch-size | hidden-size | num-attention-heads | num-layers"; result table
#    "group | case | lantency- | memory-" (quoted verbatim, case row then result row):
#      " | DP_1x1x1_2_1536x16 | 1 | 1 | 1 | 1 | 1 | 2 | 2 | 1 | 2 | 1536 | 16 | 16"      "DP_1x1x1_2_1536x16  |  464.12 (ms)  |  14362 (MiB)"
#      " | DP_8x1x1_16_1536x16 | 1 | 8 | 8 | 1 | 1 | 2 | 16 | 1 | 16 | 1536 | 16 | 16"   "DP_8x1x1_16_1536x16  |  480.96 (ms)  |  14938 (MiB)"
#      " | DP_16x1x1_32_1536x16 | 2 | 8 | 16 | 1 | 1 | 2 | 32 | 1 | 32 | 1536 | 16 | 16" "DP_16x1x1_32_1536x16  |  664.46 (ms)  |  14508 (MiB)"
#      " | DP_32x1x1_64_1536x16 | 4 | 8 | 32 | 1 | 1 | 2 | 64 | 1 | 64 | 1536 | 16 | 16" "DP_32x1x1_64_1536x16  |  683.51 (ms)  |  14508 (MiB)"
#      " | MP_1x1x1_8_768x12 | 1 | 1 | 1 | 1 | 1 | 8 | 8 | 1 | 8 | 768 | 12 | 12"        "MP_1x1x1_8_768x12  |  611.2 (ms)  |  9810 (MiB)"
#      " | MP_1x8x1_16_1536x16 | 1 | 8 | 1 | 8 | 1 | 16 | 16 | 1 | 16 | 1536 | 16 | 16"  "MP_1x8x1_16_1536x16  |  692.44 (ms)  |  12684 (MiB)"
#      " | MP_1x16x1_16_3072x16 | 2 | 8 | 1 | 16 | 1 | 16 | 16 | 1 | 16 | 3072 | 32 | 16" "MP_1x16x1_16_3072x16  |  5610.23(ms)  |  12150 (MiB)"
#      " | MP_1x32x1_16_3072x32 | 4 | 8 | 1 | 32 | 1 | 16 | 16 | 1 | 16 | 3072 | 32 | 32" "MP_1x32x1_16_3072x32  |  13037.85 (ms)  |  8834 (MiB)"
#      " | 2D_8x1x1_16_1536x16 | ..."  "2D_8x1x1_16_1536x16  |  480.22 (ms)  |  14938 (MiB)"   (repeat of DP_8x1x1: not a row)
#      " | 2D_1x8x1_16_1536x16 | ..."  "2D_1x8x1_16_1536x16  |  664.64 (ms)  |  12684 (MiB)"   (repeat of MP_1x8x1: not a row)
#      " | 2D_2x4x1_16_1536x16 | 1 | 8 | 2 | 4 | 1 | 8 | 16 | 1 | 16 | 1536 | 16 | 16"   "2D_2x4x1_16_1536x16  |  576.48 (ms)  |  9104 (MiB)"
#      " | 2D_4x2x1_16_1536x16 | 1 | 8 | 4 | 2 | 1 | 4 | 16 | 1 | 16 | 1536 | 16 | 16"   "2D_4x2x1_16_1536x16  |  593.68 (ms)  |  9642 (MiB)"
#      " | 2D_2x8x1_16_2304x24 | 2 | 8 | 2 | 8 | 1 | 8 | 16 | 1 | 16 | 2304 | 24 | 24"   "2D_2x8x1_16_2304x24  |  1313.52 (ms)  |  14928 (MiB)"
#      " | 2D_4x8x1_32_2304x24 | 4 | 8 | 4 | 8 | 1 | 8 | 32 | 1 | 32 | 2304 | 24 | 24"   "2D_4x8x1_32_2304x24  |  1508.48 (ms)  |  15004 (MiB)"
#      " | DP_PP_8x1x4_512_1536x16 | 4 | 8 | 8 | 1 | 4 | 2 | 16 | 32 | 512 | 1536 | 16 | 16"   "DP_PP_8x1x4_512_1536x16  |  4893.55 (ms)  |  7130 (MiB)"
#      " | MP_PP_1x8x4_512_2304x24 | 4 | 8 | 1 | 8 | 4 | 16 | 16 | 32 | 512 | 2304 | 24 | 24"  "MP_PP_1x8x4_512_2304x24  |  22166.85 (ms)  |  14204 (MiB)"
#      " | 2D_PP_2x4x4_512_2304x24 | 4 | 8 | 2 | 4 | 4 | 8 | 16 | 32 | 512 | 2304 | 24 | 24"   "2D_PP_2x4x4_512_2304x24  |  15331.23 (ms)  |  10018 (MiB)"
#      " | 2D_PP_2x8x2_512_2304x24 | 4 | 8 | 2 | 8 | 2 | 8 | 16 | 32 | 512 | 2304 | 24 | 24"   "2D_PP_2x8x2_512_2304x24  |  16281.51 (ms)  |  10554 (MiB)"
#    tokens/s/GPU = global batch x 2048 / latency / GPUs, e.g. 2 x 2048 / 0.46412 / 1 = 8,825.3.
#    Memory: nvidia-smi memory.used of one GPU (MiB / 1024 -> GiB): CUDA context and the caching allocator's reserve
#    included; for the PP rows the GPU is not named (rank 0 = the first stage assumed). Kept for information.
#    Settings from the code at that commit (not printed by the source; read from Megatron-LM training.py of 2021, e.g.
#    search id 17596222549: "# All-reduce if needed. if args.DDP_impl == 'local': ... allreduce_params" after
#    forward_backward): local DDP all-reduces the fp16 gradients after the whole backward, no overlap
#    (overlap_grad_reduce False; --accumulate-allreduce-grads-in-fp32 not passed -> fp16 gradient buffer:
#    "fp16-mixed"); no distributed optimizer (ZeRO 0), no sequence parallelism; the pipeline rows use the default
#    non-interleaved 1F1B; attention unfused (2021: no FlashAttention; the fused scaled-masked softmax only), dropout
#    0.1 (Megatron's default hidden / attention dropout). Profile megatron-legacy (as the Megatron 2019 / v1.0 V100 rows).
#    Model: GPT-2-style (learned positions 2048, LayerNorm, GeLU 4h MLP, biases, tied embeddings), vocab 51,200 as the
#    report states; files models54/dlperf-gpt-{768x12,1536x16,2304x24,3072x16,3072x32}.config.json.
#    Tier [A]: every setting above is printed by the source or read from its code at its commit; the hardware's NVLink
#    rate for the cube mesh is the preset's (noted on the hardware string above).
_S54_DLP = "DLPerf Megatron-LM/README.md@01e43de4 (Megatron-LM 8aa4619, V100-SXM2-16GB, 100 Gb EDR per node)"
_S54_MEGATRON = tuple(
    (f"[A] {_S54_DLP}: {case}, {n} GPUs, mbs {mbs}, gbs {gbs}, seq 2048, full AC",
     MODELS_DIR + f"dlperf-gpt-{shape}.config.json", _S54_HW, "megatron-legacy", _S54_PREC, n, 2048, gbs,
     dict(dp=d, tp=m, pp=p, zero_stage=0, microbatch_size=mbs, recompute="full", sp=False, overlap_grad_reduce=False,
          **({"schedule": "1f1b"} if p > 1 else {})),
     round(gbs * 2048 / (ms / 1000) / n, 1), round(mib / 1024, 2))
    for case, n, d, m, p, mbs, gbs, shape, ms, mib in (
        ("DP_1x1x1_2_1536x16", 1, 1, 1, 1, 2, 2, "1536x16", 464.12, 14362),
        ("DP_8x1x1_16_1536x16", 8, 8, 1, 1, 2, 16, "1536x16", 480.96, 14938),
        ("DP_16x1x1_32_1536x16", 16, 16, 1, 1, 2, 32, "1536x16", 664.46, 14508),
        ("DP_32x1x1_64_1536x16", 32, 32, 1, 1, 2, 64, "1536x16", 683.51, 14508),
        ("MP_1x1x1_8_768x12", 1, 1, 1, 1, 8, 8, "768x12", 611.2, 9810),
        ("MP_1x8x1_16_1536x16", 8, 1, 8, 1, 16, 16, "1536x16", 692.44, 12684),
        ("MP_1x16x1_16_3072x16", 16, 1, 16, 1, 16, 16, "3072x16", 5610.23, 12150),
        ("MP_1x32x1_16_3072x32", 32, 1, 32, 1, 16, 16, "3072x32", 13037.85, 8834),
        ("2D_2x4x1_16_1536x16", 8, 2, 4, 1, 8, 16, "1536x16", 576.48, 9104),
        ("2D_4x2x1_16_1536x16", 8, 4, 2, 1, 4, 16, "1536x16", 593.68, 9642),
        ("2D_2x8x1_16_2304x24", 16, 2, 8, 1, 8, 16, "2304x24", 1313.52, 14928),
        ("2D_4x8x1_32_2304x24", 32, 4, 8, 1, 8, 32, "2304x24", 1508.48, 15004),
        ("DP_PP_8x1x4_512_1536x16", 32, 8, 1, 4, 2, 512, "1536x16", 4893.55, 7130),
        ("MP_PP_1x8x4_512_2304x24", 32, 1, 8, 4, 16, 512, "2304x24", 22166.85, 14204),
        ("2D_PP_2x4x4_512_2304x24", 32, 2, 4, 4, 8, 512, "2304x24", 15331.23, 10018),
        ("2D_PP_2x8x2_512_2304x24", 32, 2, 8, 2, 8, 512, "2304x24", 16281.51, 10554),
    ))

# ---- 2. Oneflow-Inc/DLPerf DeepSpeed/Megatron-LM/README.md @ 017d9b1aef062b14239b2e0a68cf6a6cb47ce43e (search id
#    22266657433), "【OSDI】DeepSpeed-Megatron-LM测评": microsoft/DeepSpeedExamples @ a79272cc Megatron-LM (the 2019 v1
#    fork), DeepSpeed 0.3.0+7d4d742, PyTorch 1.6.0, NCCL 2.7.3, "8x Tesla V100-SXM2-16GB", the same 4 nodes
#    (10.11.0.2-5). Script scripts/ds_zero2_pretrain_gpt2_model_parallel.sh @ cb09c490 (id 23068787873): gpt2-small
#    (num_layers=12, num_attention_heads=12, hidden_size=768), --batch-size ${BATCH_SIZE} per GPU (4 in every run:
#    "bash scripts/ds_zero2_pretrain_gpt2_model_parallel.sh 4 8 0 off 1" ...), --seq-length 1024,
#    --max-position-embeddings 1024, --fp16, CHECKPOINT_ACTIVATIONS off (no --checkpoint-activations), MP_SIZE 1;
#    train_batch_size = 4 x GPUs; config scripts/ds_zero2_config.json @ 351bbe55 (id 22733917214):
#    "zero_optimization": {"stage": <0|1 by sed>}, fp16 enabled, Adam, no "overlap_comm" (DeepSpeed's default false:
#    overlap_grad_reduce False). Rows (verbatim, columns "| date | test_num | test_desc | xn_xg_xdp_xmp_xbs |
#    gpu_mem(mB) | gpu_util(%) | throuthput(sample/sec) |"):
#      "| 20201205 | test-1-3 | zero-stage-0 | 1n_8g_dp_4bs      | 15387         | 92          | 198.6                  |"
#      "|          | test-1-4 | zero-stage-1 | 1n_8g_dp_4bs      | 14199(↓7.7%)  | 87          | 195.8 (↓1.4%)          |"
#      "| 20201208 | test-13-1 | zero-stage-0 | 2n_8g_dp_4bs      | 15336              | 94          | 269                    |"
#      "|          | test-13-2 | zero-stage-1 | 2n_8g_dp_4bs      | 14005(-1331,8.7↓%) | 93          | 261(3.0↓%)             |"
#      "| 20201209 | test-18-1 | zero-stage-0     | 4n_8g_dp_4bs      | 15336              | 95          | 533                    |"
#      "|          | test-18-2 | zero-stage-1     | 4n_8g_dp_4bs      | 13975(-1361,↓8.9%) | 92          | 506(↓5.3%)             |"
#    tokens/s/GPU = samples/s x 1024 / GPUs, e.g. 198.6 x 1024 / 8 = 25,420.8. Memory: nvidia-smi (mB read as MiB).
#    Model: benchmarks/models/gpt2-124m-50304.config.json (GPT-2 small with the vocabulary padded to 50,304, Megatron's
#    --make-vocab-size-divisible-by 128 default; 1024 positions, tied). Unfused attention, dropout 0.1 (Megatron v1
#    defaults). [A] but for the vocabulary padding (from the code default, 0.09% of the vocabulary).
_S54_DS = "DLPerf DeepSpeed/Megatron-LM/README.md@017d9b1a (DeepSpeed 0.3.0, V100-SXM2-16GB, 100 Gb EDR per node)"
_S54_DEEPSPEED = tuple(
    (f"[A] {_S54_DS}: {test}, GPT-2 small, {n} GPUs, ZeRO-{zs}, batch 4/GPU, seq 1024, no AC",
     "models/gpt2-124m-50304.config.json", _S54_HW, "deepspeed", _S54_PREC, n, 1024, 4 * n,
     dict(dp=n, zero_stage=zs, microbatch_size=4, recompute="none", overlap_grad_reduce=False),
     round(sps * 1024 / n, 1), round(mib / 1024, 2))
    for test, n, zs, sps, mib in (
        ("test-1-3", 8, 0, 198.6, 15387), ("test-1-4", 8, 1, 195.8, 14199),
        ("test-13-1", 16, 0, 269.0, 15336), ("test-13-2", 16, 1, 261.0, 14005),
        ("test-18-1", 32, 0, 533.0, 15336), ("test-18-2", 32, 1, 506.0, 13975),
    ))

SCOUTED_2026_12BC = _S54_MEGATRON + _S54_DEEPSPEED


# Fifty-fourth scouting pass, second scout (2026-12, never fitted on; SCOUTED_2026_12BD). Names carry _S54B_ / _s54b_.
# SOURCE: bigscience-workshop/bigscience train/tr11-176B-ml/chronicles-prequel.md @ 053adafee86d8b0beb10ddd95e5bbbbe3d702f3c,
# "Trials and Tribulations prior to the start of training" (BLOOM-176B topology search, Feb 2022, Megatron-DeepSpeed +
# DeepSpeed pipeline engine with ZeRO-1, up to 48 nodes of Jean Zay A100 80GB). Every table row gives Nodes, model size,
# DP, TP, PP, MBS, (NHEADS,) GBS, nvidia-smi max memory ("Mem"), Sec/it and TFLOPs. Row-selection rule (fixed before
# pricing): every table row with a numeric Sec/it whose shape (NHIDDEN, NLAYERS, NHEADS) is stated; a row whose
# DP x TP x PP differs from 8 x Nodes is dropped, as are two internally inconsistent tables and the table without Sec/it;
# a configuration printed twice enters once. tokens/s/GPU = GBS x 2048 / (Sec/it) / (8 x Nodes). Settings: seq 2048,
# vocabulary 250,880 [B] (the prequel says "250k"), BLOOM architecture, full activation checkpointing (read from the
# printed TFLOPs: Megatron-DeepSpeed's formula with checkpoint_activations_factor 4 to 0.1%), ZeRO-1, 1F1B, fp16 up to
# 02-27 and the BF16 optimizer with fp32 accumulation from 02-28 (the 02-17 bf16 rows: bf16 gradients), attention
# unfused (2022: no FlashAttention), dropout 0.1, the stage splits the author states; profile deepspeed, hardware the
# shipped jean-zay-a100 cluster. Not expressed: CUDA_LAUNCH_BLOCKING=1 (0-7% in the 02-17 table) and the 02-25
# PCI-Express/NUMA fix ("1-5%"). Full notes: the scout's scout54b.md (session 54). Models: benchmarks/models/bloom-prequel/.
_S54B_HW = "A100 80GB (Jean Zay)"
_S54B_FW = "deepspeed"
_S54B_SRC = "bigscience tr11-176B-ml/chronicles-prequel.md@053adafe (Megatron-DeepSpeed ZeRO-1, Jean Zay A100 80GB)"
_S54B_SHAPES = {}  # (h, L, heads) -> model file name, written by make_models54b.py


def _s54b_model(h, L, a):
    name = f"bigsci-prequel-{h}x{L}-a{a}.config.json"
    _S54B_SHAPES[(h, L, a)] = name
    return MODELS_DIR + "bloom-prequel/" + name


def _s54b_split(L, pp, embed_slot):
    if pp == 1:
        return None
    if embed_slot:  # 'type:transformer|embedding': 2 + L blocks over pp stages, the embeddings in the end slots
        k, r = divmod(L + 2, pp)
        assert r == 0, (L, pp)
        return (k - 1,) + (k,) * (pp - 2) + (k - 1,)
    if L % pp == 0:
        return None
    if (L, pp) == (78, 12):  # stated by the author
        return (7,) * 11 + (1,)
    raise ValueError((L, pp))


# Verbatim table rows. Each block: (section/date tag, NHIDDEN, NLAYERS, heads or None (column), precision,
# embed-slot split, extra [B] note, rows). Rows are the source's table lines, quoted verbatim.
# Columns without NHEADS: "| Nodes | Size | DP | TP | PP | MBS |  GBS | Mem  | Sec/it | TFLOPs | Notes |";
# with NHEADS: "| Nodes | Size | DP | TP | PP | MBS | NHEADS |  GBS | Mem  | Sec/it | TFLOPs | Notes |".
_S54B_NH64 = "[B: NHEADS 64 by 'all NHEADS=64 (above too)']"
_S54B_BLOCKS = (
    ("48 node contenders 02-21", 14336, 72, 64, "fp16-mixed", False, _S54B_NH64, (
        "|    48 | 181B |  4 |  8 | 12 |   1 | 2048 | 29GB | 143.31 | 112.49 | 02-21 |",
        "|    48 | 181B |  4 |  8 | 12 |   2 | 2048 | 37GB | 134.02 | 120.29 | 02-21 |",
        "|    48 | 181B |  4 |  8 | 12 |   4 | 2048 | 49GB | 123.69 | 130.34 | 02-21 |",
        "|    48 | 181B |  4 |  8 | 12 |   8 | 2048 | 69GB | 129.26 | 124.72 | 02-21 |",
        "|    48 | 181B |  8 |  8 |  6 |   1 | 2048 | 38GB | 139.82 | 115.31 | 02-21 |",
        "|    48 | 181B |  8 |  8 |  6 |   2 | 2048 | 44GB | 131.02 | 123.05 | 02-21 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 | 2048 | 56GB | 121.48 | 132.71 | 02-21 |")),
    ("48 node contenders 02-21", 13824, 84, 64, "fp16-mixed", False, _S54B_NH64, (
        "|    48 | 196B |  4 |  8 | 12 |   2 | 2048 | 39GB | 143.89 | 121.45 | 02-21 |",
        "|    48 | 196B |  4 |  8 | 12 |   4 | 2048 | 52GB | 133.12 | 131.27 | 02-21 |",
        "|    48 | 196B |  8 |  8 |  6 |   2 | 2048 | 65GB | 141.41 | 123.58 | 02-21 |",
        "|    48 | 196B |  8 |  8 |  6 |   4 | 2048 | 56GB | 130.31 | 134.11 | 02-21 |")),
    ("Final round comparison 02-23", 12288, 96, 64, "fp16-mixed", False, "", (
        "|    48 | 177B |  8 |  8 |  6 |   2 | 2048 | GB   | 136.73 | 115.73 | 02-23 |",
        "|    48 | 177B |  8 |  8 |  6 |   4 | 2048 | GB   | 122.96 | 128.69 | 02-23 |")),
    ("Final round comparison 02-23", 13312, 84, 64, "fp16-mixed", False, "", (
        "|    48 | 182B |  4 |  8 | 12 |   4 | 2048 | GB   | 125.52 | 129.29 | 02-23 |",
        "|    48 | 182B |  8 |  8 |  6 |   2 | 2048 | GB   | 135.55 | 119.72 | 02-23 |",
        "|    48 | 182B |  8 |  8 |  6 |   4 | 2048 | GB   | 122.93 | 132.00 | 02-23 |")),
    ("Final round comparison 02-23", 13824, 78, 64, "fp16-mixed", False, "", (
        "| 48    | 182B | 8  | 8  | 6  | 4   | 2048 | GB   | 121.28 | 133.93 | 02-23 |",)),
    ("Final round comparison 02-23", 14336, 72, 64, "fp16-mixed", False, "", (
        "|    48 | 181B |  4 |  8 | 12 |   4 | 2048 | GB   | 123.79 | 130.24 | 02-23 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 | 2048 | GB   | 120.85 | 133.40 | 02-23 |")),
    ("NHEADs comparison 02-23/24", 14336, 72, None, "fp16-mixed", False, "", (
        "|    48 | 181B |  8 |  8 |  6 |   4 |     16 | 2048 | 54GB | 121.03 | 133.20 | 02-24 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 |     32 | 2048 | 55GB | 124.01 | 130.00 | 02-23 |",
        # "|    48 | 181B |  8 |  8 |  6 |   4 |     64 | 2048 | 55GB | 120.18 | 134.15 | 02-23 |"  repeat (rule 5)
        "|    48 | 181B |  8 |  8 |  6 |   4 |    112 | 2048 | 53GB | 138.72 | 116.21 | 02-23 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 |    128 | 2048 | 55GB | 124.89 | 129.08 | 02-23 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 |    256 | 2048 | 54GB | 132.85 | 121.35 | 02-24 |")),
    ("NHEADs comparison 02-23", 13824, 78, None, "fp16-mixed", False, "", (
        # "|    48 | 182B |  8 |  8 |  6 |   4 |     64 | 2048 | GB   | 121.28 | 133.93 | 02-23 |"  repeat (rule 5)
        "|    48 | 182B |  8 |  8 |  6 |   4 |     96 | 2048 | 59GB | 124.75 | 130.21 | 02-23 |",
        "|    48 | 182B |  8 |  8 |  6 |   4 |    128 | 2048 | 54GB | 162.72 |  99.82 | 02-23 |")),
    ("NHEADs comparison 02-23", 13312, 84, None, "fp16-mixed", False, "", (
        # "|    48 | 182B |  8 |  8 |  6 |   4 |     64 | 2048 | GB   | 122.93 | 132.00 | 02-23 |"  repeat (rule 5)
        "|    48 | 182B |  8 |  8 |  6 |   4 |    128 | 2048 | GB   | 129.17 | 125.63 | 02-23 |",)),
    ("NHEADs comparison 02-24", 12288, 96, None, "fp16-mixed", False, "", (
        # "|    48 | 177B |  8 |  8 |  6 |   4 |     64 | 2048 | GB   | 122.96 | 128.69 | 02-24 |"  repeat (rule 5)
        "|    48 | 177B |  8 |  8 |  6 |   4 |     96 | 2048 | GB   | 145.40 | 108.83 | 02-24 |",
        "|    48 | 177B |  8 |  8 |  6 |   4 |    128 | 2048 | GB   | 129.42 | 122.27 | 02-24 |")),
    ("GBS Variations 02-25 (NLAYERS=72 NHIDDEN=14336 NHEADS=64)", 14336, 72, 64, "fp16-mixed", False, "", (
        "|    48 | 181B |  8 |  8 |  6 |   4 | 1568 | 56GB | 113.01 | 109.22 | 02-25 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 | 2048 | 55GB | 114.11 | 141.27 | 02-25 |",
        "|    48 | 181B |  8 |  8 |  6 |   6 | 2016 | 66GB | 123.57 | 128.43 | 02-25 |",
        "|    48 | 181B |  4 |  8 | 12 |   4 | 1568 | GB   |  92.75 | 133.08 | 02-25 |",
        "|    48 | 181B |  4 |  8 | 12 |   4 | 2048 | 49GB | 117.07 | 137.70 | 02-25 |",
        "|    48 | 181B |  4 |  8 | 12 |   2 | 1568 | GB   |  99.93 | 123.51 | 02-25 |",
        "|    48 | 181B |  4 |  8 | 12 |   2 | 2048 | GB   | 128.82 | 125.15 | 02-25 |",
        "|    48 | 181B |  6 |  8 |  8 |   4 | 2016 | 52GB | 113.16 | 140.24 | 02-25 |",
        "|    48 | 181B | 12 |  8 |  4 |   2 | 2016 | 53GB | 125.52 | 126.43 | 02-25 |",
        "|    48 | 181B | 12 |  8 |  4 |   4 | 2016 | 59GB | 114.81 | 138.22 | 02-25 |",
        "|    48 | 181B | 24 |  8 |  2 |   1 | 2016 | 65GB | 145.45 | 109.11 | 02-25 |",
        "|    48 | 181B | 24 |  8 |  2 |   2 | 2016 | 76GB | 136.13 | 116.58 | 02-25 |",
        "|    48 | 181B |  8 |  4 | 12 |   4 | 2048 | 60GB | 111.89 | 144.08 | 02-25 |",
        "|    48 | 181B |  8 |  4 | 12 |   2 | 2048 | 44GB | 110.48 | 145.92 | 02-25 |",
        # "|    48 | 181B |  8 |  4 | 12 |   2 | 2048 | 38GB | 113.54 | 141.99 | 02-25 |"  repeat (rule 5)
        "|    48 | 181B | 16 |  4 |  6 |   4 | 2048 | 75GB | 117.11 | 137.66 | 02-25 |",
        "|    48 | 181B | 16 |  4 |  6 |   2 | 2048 | 57GB | 111.71 | 144.31 | 02-25 |",
        "|    48 | 181B | 16 |  2 | 12 |   2 | 2048 | 63GB | 112.50 | 143.30 | 02-25 |",
        "|    48 | 181B |  8 |  2 | 24 |   1 | 2048 | 44GB | 119.53 | 134.88 | 02-25 |",
        "|    48 | 181B |  8 |  2 | 24 |   2 | 2048 | 53GB | 122.75 | 131.33 | 02-25 |",
        "|    48 | 181B |  4 |  4 | 24 |   1 | 2048 | GB   | 130.60 | 123.44 | 02-25 |")),
    ("GBS Variations 02-25", 12288, 96, 64, "fp16-mixed", False, _S54B_NH64, (
        "| 48    | 177B | 8  | 1  | 48 | 1   | 2048 | 58GB | 142.17 | 111.30 | 02-25 |",)),
    ("Another round of NHEADS 02-26", 13824, 78, None, "fp16-mixed", False, "", (
        "|    48 | 182B |  8 |  4 | 12 |   1 |     64 | 2048 |      | 148.24 | 109.57 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   2 |     64 | 2048 | 48GB | 103.51 | 156.92 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   2 |     96 | 2048 | 48GB | 107.12 | 151.64 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   2 |    128 | 2048 |      | 147.41 | 110.19 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   4 |     64 | 2048 |      | 106.72 | 152.21 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   4 |     96 | 2048 |      | 110.31 | 147.25 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   4 |    128 | 2048 |      | 153.90 | 105.54 | 02-26 |",
        "|    48 | 182B |  8 |  8 |  6 |   4 |     96 | 2048 |      | 118.12 | 137.51 | 02-26 |",
        "|    48 | 182B |  8 |  8 |  6 |   4 |    128 | 2048 |      | 156.84 | 103.56 | 02-26 |")),
    ("Another round of NHEADS 02-26", 14336, 72, None, "fp16-mixed", False, "", (
        # repeat of a 02-25 row (a configuration enters once, as its first printed row):
        # "|    48 | 181B |  8 |  4 | 12 |   2 |     64 | 2048 |      | 110.42 | 146.00 | 02-26 |",
        "|    48 | 181B |  8 |  4 | 12 |   2 |    128 | 2048 |      | 114.02 | 141.39 | 02-26 |",
        "|    48 | 181B |  8 |  4 | 12 |   4 |    128 | 2048 |      | 137.53 | 117.23 | 02-26 |",
        # repeat of a 02-25 row:
        # "|    48 | 181B |  8 |  8 |  6 |   4 |     64 | 2048 |      | 113.95 | 141.47 | 02-26 |",
        "|    48 | 181B |  8 |  8 |  6 |   4 |    128 | 2048 |      | 116.06 | 138.90 | 02-26 |")),
    ("Another round of NHEADS 02-26", 13312, 84, None, "fp16-mixed", False, "", (
        "|    48 | 182B |  8 |  4 | 12 |   2 |     64 | 2048 |      | 103.82 | 156.46 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   4 |     64 | 2048 |      | 113.21 | 143.34 | 02-26 |",
        "|    48 | 182B |  8 |  8 |  6 |   2 |     64 | 2048 |      | 129.61 | 125.21 | 02-26 |")),
    ("Batchsize Warmup 02-26", 13824, 78, None, "fp16-mixed", False, "", (
        "|    48 | 182B |  8 |  4 | 12 |   2 |     96 |  512 |      |  35.77 | 113.52 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   2 |     96 | 1024 |      |  59.65 | 136.15 | 02-26 |",
        "|    48 | 182B |  8 |  4 | 12 |   2 |     96 | 1536 |      |  83.11 | 146.59 | 02-26 |")),
        # "|    48 | 182B |  8 |  4 | 12 |   2 |     96 | 2048 |      | 107.12 | 151.64 | 02-26 |"  repeat (rule 5)
    ("Re-do 02-27", 13824, 78, None, "fp16-mixed", False, "", (
        "|    48 | 182B |  8 |  8 |  6 |   2 |     96 | 2048 | GB   | 133.57 | 121.61 | 02-27 |",
        "|    48 | 182B |  8 |  8 |  6 |   4 |     96 | 2048 | 59GB | 118.24 | 137.38 | 02-27 |",
        "|    48 | 182B | 16 |  4 |  6 |   4 |     96 | 2048 | 75GB | 115.55 | 140.57 | 02-27 |")),
    ("Re-do 02-27, partition type:transformer|embed", 12288, 106, None, "fp16-mixed", True, "", (
        "|    48 | 195B |  8 |  4 | 12 |   2 |     96 | 2048 | 44GB | 112.69 | 154.86 | 02-27 |",
        "|    48 | 195B |  8 |  4 | 12 |   2 |     64 | 2048 | GB   | 110.96 | 157.27 | 02-27 |")),
    ("Rebalancing layers 02-28 (BF16 optimizer)", 12288, 106, None, "bf16-mixed-fp32-grads", True, "", (
        "|    48 | 195B |  8 |  4 | 12 |   2 |     64 | 2048 | 67GB | 116.54 | 149.75 | 02-28 |",
        "|    48 | 195B |  8 |  4 | 12 |   2 |     96 | 2048 | 65GB | 118.79 | 146.90 | 02-28 |",
        "|    48 | 195B |  8 |  4 | 12 |   2 |    128 | 2048 | 67GB | 121.42 | 143.73 | 02-28 |",
        "|    48 | 195B |  8 |  4 | 12 |   4 |     96 | 2048 | 79GB | 120.34 | 145.01 | 02-28 |")),
    ("Rebalancing layers 02-28 (BF16 optimizer)", 12288, 100, None, "bf16-mixed-fp32-grads", True, "", (
        "|    48 | 184B |  8 |  8 |  6 |   2 |     64 | 2048 | 61GB | 139.72 | 117.91 | 02-28 |",
        "|    48 | 184B |  8 |  8 |  6 |   4 |     64 | 2048 | 72GB | 120.96 | 136.20 | 02-28 |")),
    ("Rebalancing layers 02-28 (BF16 optimizer)", 13312, 82, None, "bf16-mixed-fp32-grads", True, "", (
        "|    48 | 178B |  4 |  8 | 12 |   4 |     64 | 2048 | 52GB | 111.79 | 141.76 | 02-28 |",
        "|    48 | 178B |  8 |  4 | 12 |   2 |     64 | 2048 | 63GB | 104.45 | 151.71 | 02-28 |",
        "|    48 | 178B |  8 |  4 | 12 |   2 |    104 | 2048 | 62GB | 123.71 | 128.10 | 02-28 |",
        "|    48 | 178B |  8 |  4 | 12 |   2 |    128 | 2048 | 60GB | 108.78 | 145.68 | 02-28 |",
        "|    48 | 178B |  8 |  4 | 12 |   4 |     64 | 2048 | 74GB | 104.82 | 151.18 | 02-28 |")),
    ("Rebalancing layers 02-28 (BF16 optimizer)", 13312, 94, None, "bf16-mixed-fp32-grads", True, "", (
        "| 48    | 203B | 8  | 4  | 12 | 2   | 128    | 2048 | 67GB | 124.10 | 146.12 | 02-28 |",)),
    ("Rebalancing layers 02-28 (BF16 optimizer)", 14336, 70, None, "bf16-mixed-fp32-grads", True, "", (
        "|    48 | 176B |  4 |  8 | 12 |   2 |     64 | 2048 | 40GB | 121.63 | 128.92 | 02-28 |",
        "|    48 | 176B |  8 |  4 | 12 |   2 |     64 | 2048 | 59GB | 102.03 | 153.68 | 02-28 |",
        "|    48 | 176B |  8 |  4 | 12 |   2 |    112 | 2048 | 59GB | 104.50 | 150.05 | 02-28 |",
        "|    48 | 176B |  8 |  4 | 12 |   2 |    128 | 2048 | 60GB | 105.89 | 148.08 | 02-28 |",
        "|    48 | 176B |  8 |  4 | 12 |   4 |     64 | 2048 | 73GB | 102.27 | 153.33 | 02-28 |")),
)

# "## Best TFLOPs" (02-17), one node / 10 / 20 nodes; setup lines quoted: "20B model: TP=8, PP=1, NLAYERS=8,
# NHIDDEN=14400, NHEADS=32, SEQ_LEN=2048, VOCAB_LENGTH=250k, GBS=2048" and "200B model: TP=8, PP=10, NLAYERS=80,
# NHIDDEN=14400, NHEADS=96, SEQ_LEN=2048, VOCAB_LENGTH=250k, GBS=2048"; Sec/it from the quoted log lines
# ("elapsed time per iteration (s): 769.99" ...), MBS 1 and Mem from the tables ("|    8 | 20B  |  1 |  8 |  1 |   1 |
# 67GB | 108.47 | 02-17 |" ...). (precision, GPUs, DP, PP, L, heads, sec/it, mem GB)
_S54B_BEST_TFLOPS = (
    ("fp16-mixed", 8, 1, 1, 8, 32, 769.99, 67), ("fp16-mixed", 80, 1, 10, 80, 96, 844.81, 73),
    ("fp16-mixed", 160, 2, 10, 80, 96, 430.21, 51),
    ("bf16-mixed", 8, 1, 1, 8, 32, 777.09, 68), ("bf16-mixed", 80, 1, 10, 80, 96, 853.81, 75),
    ("bf16-mixed", 160, 2, 10, 80, 96, 434.14, 53),
)


def _s54b_cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _s54b_row(tag, h, L, heads, prec, embed, note, line):
    c = _s54b_cells(line)
    nodes, dp, tp, pp, mbs = int(c[0]), int(c[2]), int(c[3]), int(c[4]), int(c[5])
    i = 6
    if heads is None:
        heads, i = int(c[6]), 7
    gbs, mem, sec = int(c[i]), c[i + 1], float(c[i + 2])
    n = 8 * nodes
    assert dp * tp * pp == n, line
    fields = dict(dp=dp, tp=tp, pp=pp, zero_stage=1, microbatch_size=mbs, recompute="full")
    split = _s54b_split(L, pp, embed)
    if split:
        fields["pp_layers"] = split
    memv = float(mem[:-2]) if mem.endswith("GB") and mem[:-2] else None
    tier = "[B: vocab 250880]" + (" " + note if note else "")
    label = (f"{tier} {_S54B_SRC}: {tag}: h{h} L{L} heads {heads}, DP{dp} TP{tp} PP{pp} MBS{mbs} GBS{gbs}, {n} GPUs, "
             f"{prec}, {sec} s/it")
    return (label, _s54b_model(h, L, heads), _S54B_HW, _S54B_FW, prec + "+attention=naive+dropout=True", n, 2048, gbs, fields,
            round(gbs * 2048 / sec / n, 2), memv)


_S54B_TABLES = tuple(_s54b_row(tag, h, L, a, prec, emb, note, line)
                     for tag, h, L, a, prec, emb, note, lines in _S54B_BLOCKS for line in lines)
_S54B_BEST = tuple(
    (f"[B: vocab 250880] {_S54B_SRC}: Best TFLOPs 02-17: h14400 L{L} heads {a}, DP{dp} TP8 PP{pp} MBS1 GBS2048, "
     f"{n} GPUs, {prec}, {sec} s/it",
     _s54b_model(14400, L, a), _S54B_HW, _S54B_FW, prec + "+attention=naive+dropout=True", n, 2048, 2048,
     dict(dp=dp, tp=8, pp=pp, zero_stage=1, microbatch_size=1, recompute="full"),
     round(2048 * 2048 / sec / n, 2), float(mem))
    for prec, n, dp, pp, L, a, sec, mem in _S54B_BEST_TFLOPS)

SCOUTED_2026_12BD = _S54B_BEST + _S54B_TABLES


# Fifty-fifth scouting pass (2026-12, never fitted on; SCOUTED_2026_12BE). Names carry _S55_.
#
# Row format as benchmarks/public_runs.py PUBLIC_CHECKS:
# (label, model, hardware, framework, precision, devices, seq_len, global batch, layout fields, measured tokens/s/GPU,
# measured GiB or None). Import with sys.path.insert(0, '/work/main/benchmarks').
# The one model file new in this pass lives in /work/notes/s55/models55/ (to be copied to benchmarks/models/); the
# prefix below is "models/" as the rows will read once copied; check55.py points it at the notes folder through
# S55_MODELS_DIR.
#
# Every source is one repository: amd-agi/maxtext-slurm (AMD's MaxText-on-Slurm launcher; its sweep reports are
# markdown files at the repository root and under docs/). Novelty: `grep -ril` over /work/main/benchmarks,
# /work/main/docs/accuracy.md and /work/notes for maxtext-slurm, deepseek3-671b-pdbs-sweep, kimi-k2-1t, sgd-v3,
# b200-benchmark-report, LLAMA31_405B_RUN_REPORT, Pensando, AINIC found nothing (the one "deepseek3-671b" hit in
# public_runs.py is a TPU v5p tpu-recipes row, another source).
#
# Row-selection rules (fixed before any row was priced; no row dropped afterwards):
#  S1  deepseek3-671b-pdbs-sweep.md (MI355X, DeepSeek-V3 671B): every numeric cell of the "Tokens/s/device (TGS)"
#      matrix, 1-node/proc value (the first of "a / b"), in the columns dense-cf1.25, dense-cf2, dense-cf4 (MaxText
#      dense_matmul = capacity-factor dropping) and sparse-gmm-deepep-v3 (dropless, Primus-Turbo grouped GEMM + DeepEP
#      dispatch). Not taken: the 1-GPU/proc values (same planner inputs as 1-node/proc), the sparse-gmm column (XLA's
#      in-process one-shot ragged-all-to-all kernel, a defect the report itself diagnoses and the repo's default now
#      avoids), sparse-gmm-fixed / sparse-gmm-deepep v1 / v2 (superseded implementations of the same dropless layout:
#      identical planner inputs to v3 or to each other). 29 rows (8 + 8 + 7 + 6).
#  S2  kimi-k2-1t-pdbs-sweep.md (MI355X, Kimi-K2 1T): the same columns and the same rule on its TGS matrix. 30 rows.
#  S3  docs/deepseek3-671b-pdbs-sweep.md (B200, DeepSeek-V3 671B, the B200 mirror of S1): every SUCCESS row of the
#      BF16 / FP8 dense-cf tables whose "XLA Flags / Run" cell is exactly "AMD-parity" or exactly "NV defaults" (one of
#      the two baseline flag sets, no added flag, memory fraction or option). 13 rows; a configuration run
#      under both flag sets enters once, as its earlier job: 10 rows.
#  S4  LLAMA31_405B_RUN_REPORT.md (MI355X, Llama 3.1 405B FP8): its one run, steady state = mean of steps 2-9. 1 row.

_S55_KIMI = MODELS_DIR + "kimi-k2-1t.config.json"
# The launcher's XLA flags (changed after the first read, on the source's files, not on the errors): every run of
# amd-agi/maxtext-slurm takes the Docker image's default XLA_FLAGS (train_env.sh @ 015ca5d7: "the entire build logic
# is commented out to use the Docker image's default XLA_FLAGS!", the commented block holding
# --xla_gpu_enable_pipelined_all_gather=true; PGLE commented out too); the B200 doc's flag sets are the image default
# ("AMD-parity") and "--xla_gpu_enable_latency_hiding_scheduler=true --xla_gpu_enable_command_buffer=''" ("NV
# defaults"), NVIDIA's JAX image embedding only the latency-hiding scheduler (docs.nvidia.com/jax-toolbox
# environment-variables). XLA:GPU does not pipeline a scan loop's all-gathers by default (OpenXLA
# xla/debug_options_flags.cc: xla_gpu_enable_pipelined_all_gather false), so each layer's FSDP AllGather waits in the
# layer: priced 'maxtext+zero3_gather_buffers=1' (the maxtext profile's value, 2, is the pipelined gather of NVIDIA's
# tuned recipes). [B] for the MI355X image's defaults (not stored). At the first read (the maxtext profile as is):
# median +39%.
_S55_FW = "maxtext+zero3_gather_buffers=1"

_S55_SEQ = 4096
# MaxText with dtype bfloat16 / weight_dtype bfloat16 (no fp32 master, Adam state in the weight dtype) is priced as
# the held tpu-recipes Mixtral row: 'bf16-mixed+optimizer_dtype=bf16'; capacity-factor dropping as
# '+moe_capacity_factor=<cf>'; dropless rows carry no capacity factor (uniform routing: synthetic data).
_S55_BF16 = "bf16-mixed+optimizer_dtype=bf16"


def _S55_layout(pdbs: int, dropless: bool) -> dict:
    """configs/deepseek3-671b.gpu.yml: dcn_fsdp_parallelism 8 x ici_expert_parallelism 8 (all other axes 1),
    remat_policy full, per_device_batch_size = pdbs (no gradient accumulation)."""
    d = dict(zero_stage=3, ep=8, microbatch_size=pdbs, recompute="full")
    if dropless:
        d["moe_dispatcher"] = "deepep"
    return d


def _S55_prec(cf):
    return _S55_BF16 if cf is None else f"{_S55_BF16}+moe_capacity_factor={cf}"


# ---- S1. amd-agi/maxtext-slurm deepseek3-671b-pdbs-sweep.md @ be4716fc0563ab767a361e38f9b49466fdf9adc9 (search id
#    56759702043; a later version of the same file is stored @ eea3136f). "DeepSeek-V3 671B — comprehensive pdbs
#    sweep", 2026-04-17..25: "Hardware: 8 nodes × 8× AMD MI355 (288 GB HBM / device), Pensando AINIC interconnect";
#    "Image: /mnt/vast/yihuang/deepep-gmm-maxtext-v26.2.tar (includes Primus-Turbo GMM + DeepEP)"; "Base config:
#    configs/deepseek3-671b.gpu.yml"; "Dataset: dataset_type=synthetic"; "All metrics except loss are mean over
#    training steps 5–14". Configs: "dense-cf1.25 | (default) — sparse_matmul=false, capacity_factor=1.25",
#    "dense-cf2 | capacity_factor=2.0", "dense-cf4 | capacity_factor=4.0", "sparse-gmm-deepep-v3 |
#    sparse_matmul=true use_turbo_grouped_gemm=true use_deepep_dispatch=true (patch branch
#    yihuang/moe-turbo-gmm-and-deepep-v3)" (ROCm/maxtext @ f59be3c9).
#    configs/deepseek3-671b.gpu.yml @ 3012f6e6 (id 56787012629): dcn_fsdp_parallelism 8, ici_expert_parallelism 8,
#    every other dcn/ici axis 1 (dcn_data -1 -> 1), max_target_length 4096, attention cudnn_flash_te, remat_policy
#    "full", scan_layers True, dtype bfloat16, weight_dtype bfloat16, megablox False. (The dropless blog in
#    ROCm/rocm-blogs maxtext-dropless-moe/README.md @ 450d0386 restates "sequence length 4096, FSDP=8, bf16,
#    remat_policy: full" for the same cluster and yml at ad3c5245.)
#    TGS matrix, 1-node / 1-GPU per cell (quoted; first value used):
#      "| 1    | 333 / 326   | 311 / 307 | 265 / 259 | ... | **317**  |"
#      "| 2    | 563 / 535   | 497 / 471 | 374 / 369 | ... | **545**  |"
#      "| 4    | 867 / 822   | 721 / 723 | 500 / 493 | ... | **839**  |"
#      "| 5    | 962 / 959   | 796 / 775 | 535 / 531 | ... | **948**  |"
#      "| 6    | 1040 / 1043 | 835 / 808 | 543 / 548 | ... | **1030** |"
#      "| 7    | 1086 / 1080 | 884 / 867 | 560 / 540 | ... | **1097** |"
#      "| 8    | 1191 / 1171 | 918 / 928 | 566 / 571 | ... | ✗        |"
#      "| 16   | 1416 / 1387 | 968 / 966 | ✗ / ✗     | ... | —        |"
#    (columns dense-cf1.25 | dense-cf2 | dense-cf4 | ... | sparse-gmm-deepep-v3). TGS = per_device_batch_size x
#    4096 / step time (the repo's convention, stated in docs/deepseek3-671b-pdbs-sweep.md: "every Tok/s/dev column in
#    this doc = per_device_batch_size × max_target_length / step_time"); e.g. pdbs 16 cf1.25: 16 x 4096 / 1416 =
#    46.3 s per step. GBS = 64 x pdbs. Tier [A]: every layout field from the yml and the report (network rate: the
#    MI355X preset's 50 GB/s per GPU for one 400 Gb/s Pensando AINIC per GPU, ASSUMED).
#    Model: 'deepseek-v3' (MaxText deepseek3-671b: 61 layers, 3 dense, 256 experts top-8, MLA; no MTP).
_S55_DS3_MI355 = {  # pdbs: (cf1.25, cf2, cf4, sgd-v3); None = OOM / not run
    1: (333, 311, 265, 317), 2: (563, 497, 374, 545), 4: (867, 721, 500, 839), 5: (962, 796, 535, 948),
    6: (1040, 835, 543, 1030), 7: (1086, 884, 560, 1097), 8: (1191, 918, 566, None), 16: (1416, 968, None, None)}
_S55_COLS = (("dense-cf1.25", 1.25), ("dense-cf2", 2.0), ("dense-cf4", 4.0), ("sparse-gmm-deepep-v3 dropless", None))

S55_DS3_MI355X = tuple(
    (f"[A] maxtext-slurm DS3 sweep MI355X: DeepSeek-V3 671B {tag}, FSDP8 x EP8, pdbs {pdbs}, full remat, 64 GPUs",
     "deepseek-v3", "MI355X", _S55_FW, _S55_prec(cf), 64, _S55_SEQ, 64 * pdbs, _S55_layout(pdbs, cf is None),
     float(vals[i]), None)
    for pdbs, vals in _S55_DS3_MI355.items() for i, (tag, cf) in enumerate(_S55_COLS) if vals[i] is not None)

# ---- S2. amd-agi/maxtext-slurm kimi-k2-1t-pdbs-sweep.md @ b01028b9f5e8cfd1967ecacca23ebd1c5f89190f (id 57095490180).
#    "Kimi-K2 1T — comprehensive pdbs sweep", 2026-04-23..25: "Model: kimi-k2-1t (MaxText). 1026.4 B parameters total.
#    61 decoder layers (layer 0 dense, layers 1–60 MoE with 384 experts × top-8 routing + 1 shared expert). MLA
#    attention (q_lora_rank=1536, kv_lora_rank=512)"; same 8 x 8 MI355 cluster and image as S1; "Base config:
#    configs/kimi-k2-1t.gpu.yml (dcn_fsdp_parallelism=8, ici_expert_parallelism=8 on 8-node × 8-GPU topology)";
#    "Only the 1-node/proc launcher is measured here"; "mean over training steps 5–14".
#    TGS matrix (quoted rows; columns dense-cf1.25 | dense-cf2 | dense-cf4 | ... | sgd-deepep v3):
#      "| 1 | 234.9 | 208.3 | 195.2 | ... | 229.5 |"   "| 2 | 399.0 | 373.4 | 297.1 | ... | 405.5 |"
#      "| 4 | 678.9 | 597.0 | 414.9 | ... | 685.2 |"   "| 5 | 787.2 | 652.1 | 455.1 | ... | 750.8 |"
#      "| 6 | 873.3 | 707.5 | 453.2 | ... | 856.4 |"   "| 7 | 930.3 | 758.4 | ✗ 180.5 | ... | 897.9 |"
#      "| 8 | 1028.9 | 808.8 | ✗ 216.4 | ... | ✗ 214.3 |"   "| 9 | 1035.1 | — | — | ... | — |"
#      "| 10 | 1135.1 | 827.8 | — | ... | — |"   "| 11 | 1170.1 | ✗ 189.4 | — | ... | — |"
#      "| 12 | 1134.5 | ✗ 189.7 | — | ... | — |"   "| 16 | ✗ 202.4 | — | ... |"
#    Cross-check with its step-time table: pdbs 1 cf1.25 17.44 s -> 4096 / 17.44 = 234.9; pdbs 4 cf1.25 24.14 s ->
#    16384 / 24.14 = 678.7 (quoted 678.9).
#    [B: configs/kimi-k2-1t.gpu.yml is not stored: remat full, bf16 weights, flash attention assumed as the DS3 yml the
#    report names as its counterpart]. Model: models55/kimi-k2-1t.config.json, written from the report's shape and
#    Moonshot's public Kimi-K2 config (hidden 7168, 64 heads, 18432 dense FFN, 2048 expert FFN, vocab 163840, untied);
#    the planner's loader counts 1026.408 B parameters (report: 1026.4 B).
_S55_KIMI_MI355 = {
    1: (234.9, 208.3, 195.2, 229.5), 2: (399.0, 373.4, 297.1, 405.5), 4: (678.9, 597.0, 414.9, 685.2),
    5: (787.2, 652.1, 455.1, 750.8), 6: (873.3, 707.5, 453.2, 856.4), 7: (930.3, 758.4, None, 897.9),
    8: (1028.9, 808.8, None, None), 9: (1035.1, None, None, None), 10: (1135.1, 827.8, None, None),
    11: (1170.1, None, None, None), 12: (1134.5, None, None, None)}

S55_KIMI_MI355X = tuple(
    (f"[B: kimi yml not stored; remat full as DS3 yml] maxtext-slurm Kimi sweep MI355X: Kimi-K2 1T {tag}, FSDP8 x EP8, "
     f"pdbs {pdbs}, 64 GPUs", _S55_KIMI, "MI355X", _S55_FW, _S55_prec(cf), 64, _S55_SEQ, 64 * pdbs,
     _S55_layout(pdbs, cf is None), float(vals[i]), None)
    for pdbs, vals in _S55_KIMI_MI355.items() for i, (tag, cf) in enumerate(_S55_COLS) if vals[i] is not None)

# ---- S3. amd-agi/maxtext-slurm docs/deepseek3-671b-pdbs-sweep.md @ 64a75dfe4d592e3e53b585d2b182d985c0fdc7ed (id
#    56999872237), "DeepSeek-V3 671B — pdbs Sweep on B200" (2026-04-10 / 05-08), data from docs/b200-benchmark-report.md:
#    "Hardware: 8 nodes × 8× NVIDIA B200 (179.1 GiB HBM / dev), InfiniBand fabric"; "Image:
#    nvcr.io/nvidia/jax:26.03-maxtext-py3"; "Patch branch: llying/benchmark-on-nv-b200 @ 5f68243"; "Base config:
#    configs/deepseek3-671b.gpu.yml" (the S1 yml: FSDP8 x EP8, remat full, bf16 weights); "Tok/s/dev = per_device_
#    batch_size × max_target_length / step_time". FP8 rows: "quantization=fp8". Flag sets: "AMD-parity (the image-
#    default XLA_FLAGS, for AMD / NV cross-validation)" and "NV defaults (... --xla_gpu_enable_latency_hiding_
#    scheduler=true --xla_gpu_enable_command_buffer='')" -- the planner sees no difference; both kept by the rule.
#    Quoted rows (| pdbs | Job ID | XLA Flags / Run | Status | Step (s) | MFU (%) | TFLOP/s/dev | Tok/s/dev |):
#      BF16 dense-cf1.25: "| 4 | 1196 | AMD-parity | SUCCESS | 18.47 | 9.85 | 221.8 | 886 |"
#                         "| 6 | 1198 | AMD-parity | SUCCESS | 23.34 | 11.71 | 263.5 | 1,048 |"
#                         "| 7 | 1200 | AMD-parity | SUCCESS | 26.51 | 12.04 | 270.8 | 1,081 |"
#                         "| 7 | 1524 | NV defaults | SUCCESS | 24.23 | 13.17 | 296.4 | 1,183 |"
#      BF16 dense-cf1:    "| 7 | 1207 | AMD-parity | SUCCESS | 23.71 | 13.46 | 302.9 | 1,209 |"
#                         "| 8 | 1208 | AMD-parity | SUCCESS | 26.38 | 13.83 | 312.2 | 1,242 |"
#      BF16 dense-cf2:    "| 4 | 1595 | AMD-parity | SUCCESS | 22.04 | 8.28 | 186.2 | 743 |"
#                         "| 5 | 4163 | AMD-parity | SUCCESS | 25.53 | 8.93 | 200.9 | 802 |"
#                         "| 5 | 4164 | NV defaults | SUCCESS | 23.69 | 9.62 | 216.5 | 864 |"
#      BF16 dense-cf4:    "| 2 | 1596 | AMD-parity | SUCCESS | 20.42 | 4.47 | 100.5 | 401 |"
#                         "| 2 | 4176 | NV defaults | SUCCESS | 18.98 | 4.80 | 108.1 | 432 |"
#      FP8 dense-cf1.25:  "| 7 | 1592 | NV defaults | SUCCESS | 21.40 | 7.46* | 335.5 | 1,340 |"
#      FP8 dense-cf1:     "| 7 | 4161 | NV defaults | SUCCESS | 19.46 | 8.20* | 369.0 | 1,473 |"
#    Derivation check: 4 x 4096 / 18.47 = 887.1 (quoted 886); 7 x 4096 / 19.46 = 1,473.4. The rate used is
#    pdbs x 4096 / step (the step column, more digits). Tier [A] for BF16; FP8 [B: MaxText quantization=fp8 priced
#    as 'fp8-mixed' with bf16 weights (the yml's weight_dtype)]. B200 preset network (400 Gb/s IB per GPU).
_S55_B200 = (  # (precision tag, cf, pdbs, job, flags, step_s)
    ("BF16", 1.25, 4, 1196, "AMD-parity", 18.47), ("BF16", 1.25, 6, 1198, "AMD-parity", 23.34),
    ("BF16", 1.25, 7, 1200, "AMD-parity", 26.51), ("BF16", 1.25, 7, 1524, "NV defaults", 24.23),
    ("BF16", 1.0, 7, 1207, "AMD-parity", 23.71), ("BF16", 1.0, 8, 1208, "AMD-parity", 26.38),
    ("BF16", 2.0, 4, 1595, "AMD-parity", 22.04), ("BF16", 2.0, 5, 4163, "AMD-parity", 25.53),
    ("BF16", 2.0, 5, 4164, "NV defaults", 23.69), ("BF16", 4.0, 2, 1596, "AMD-parity", 20.42),
    ("BF16", 4.0, 2, 4176, "NV defaults", 18.98),
    ("FP8", 1.25, 7, 1592, "NV defaults", 21.40), ("FP8", 1.0, 7, 4161, "NV defaults", 19.46))

S55_DS3_B200 = tuple(
    (f"{'[A]' if prec == 'BF16' else '[B: quantization=fp8 as fp8-mixed, bf16 weights]'} maxtext-slurm DS3 sweep B200: "
     f"DeepSeek-V3 671B {prec} dense-cf{cf:g}, FSDP8 x EP8, pdbs {pdbs}, job {job} ({flags}), 64 GPUs",
     "deepseek-v3", "B200", _S55_FW,
     f"{'bf16-mixed' if prec == 'BF16' else 'fp8-mixed'}+optimizer_dtype=bf16+moe_capacity_factor={cf}",
     64, _S55_SEQ, 64 * pdbs, _S55_layout(pdbs, False), round(pdbs * _S55_SEQ / step, 1), None)
    for prec, cf, pdbs, job, flags, step in _S55_B200
    # a configuration measured twice (two XLA flag sets the planner cannot see) enters once, as its earlier job (the
    # lower job number): 1200 not 1524, 4163 not 4164, 1596 not 4176; the pairs differ by 7.7-9.4%
    if job not in (1524, 4164, 4176))

# ---- S4. amd-agi/maxtext-slurm LLAMA31_405B_RUN_REPORT.md @ 06ff510654a5b2ed6a7f4153d64ea82ad0e603b7 (id 56807939848):
#    "8-node / 64x MI355X Llama-3.1-405B FP8 training on MaxText (JAX/XLA)", SLURM job 16784 (2026-06-16), image
#    rocm/pyt-megatron-lm-jax-nightly-private:maxtext-v26.2-rccl-pr2063, "AMD Pensando ionic NICs, RoCE/RDMA",
#    "Tensile FP8 GEMM, CK fused attention (BF16)"; "64-way pure FSDP (ZeRO-3 style), no tensor parallelism:
#    ici_fsdp_parallelism = -1 -> 8 (intra-node), dcn_fsdp_parallelism = -1 -> 8 (inter-node)";
#    "per_device_batch_size = 3 -> global batch = 192 (64 x 3); gradient_accumulation_steps = 1"; "Sequence length
#    (max_target_length) | 8192". Step times, steps 2-9: 37.73 37.94 38.09 38.17 38.21 38.22 38.19 38.21 s (mean
#    38.095 s); "Steady-state (steps 2-9): MFU ~32.5%, ~38.1 s/step, ~645 tokens/s/device".
#    tokens/s/GPU = 192 x 8192 / 38.095 / 64 = 645.1.
#    [B: remat full, weight_dtype bfloat16, quantization fp8 read from the sibling configs/llama3.1-405b-2n.gpu.yml
#    @ 662fbfa5 (id 57117914940: "Apples-to-apples with llama3.1-405b.gpu.yml: pure FSDP across all devices",
#    remat_policy 'full', weight_dtype bfloat16, quantization "fp8"); the 8-node yml itself is not stored.
#    optimizer_memory_host_offload is True in that 2-node file only ("True at 2N"), not assumed here.]
S55_405B_MI355X = (
    ("[B: remat full / bf16 weights from the 2-node sibling yml] maxtext-slurm 405B report MI355X: Llama 3.1 405B FP8, "
     "FSDP 64, pdbs 3, seq 8192, 64 GPUs", "llama-3.1-405b", "MI355X", _S55_FW, "fp8-mixed+optimizer_dtype=bf16",
     64, 8192, 192, dict(zero_stage=3, microbatch_size=3, recompute="full"),
     round(192 * 8192 / 38.095 / 64, 1), None),
)

SCOUTED_2026_12BE = S55_DS3_MI355X + S55_KIMI_MI355X + S55_DS3_B200 + S55_405B_MI355X


# Fifty-fifth scouting pass, second scout (2026-12, never fitted on; SCOUTED_2026_12BF). Names carry _S55B_.
#
# Row format as benchmarks/public_runs.py PUBLIC_CHECKS: (label, model, hardware, framework, precision, devices, seq_len,
# global batch, layout fields, measured tokens/s/GPU, measured GiB or None). Import with
# sys.path.insert(0, '/work/main/benchmarks'). Every model has a preset (llama-3.1-8b, llama-3.1-70b, mixtral-8x22b), so
# no model file is new in this pass.
#
# Sources: two ROCm blog posts stored in ROCm/rocm-blogs, which quote measured multi-node Primus-Megatron throughput
# (the training tables of AMD's "ROCm performance results" page, which the pages corpus does not store), with layouts
# completed from AMD-AGI/Primus docs/02-user-guide/megatron-lm-training.md (the multi-node launch commands) and the
# Primus example yamls.
# Novelty: `grep -ril` over /work/main/benchmarks, /work/main/docs/accuracy.md and /work/notes for primus-projection,
# primus-tuning-agent, "Primus Projection", megatron-lm-training, 16186 / 16,186, 1,726, 3,475 / 3475, 4,402, 4,377,
# rocm/primus:v26.1, rocm/primus:v26.2 found nothing. (The MI325X rows held from hisohara are Primus v25.9 logs on
# 16 / 64 GPUs of Llama 2, another source.)
#
# Row-selection rules (fixed before any row was priced; no row dropped afterwards):
#  S1  primus-projection README, section "Validation: Projected vs. Measured Results": every cell of a column headed
#      "Measured" in its two tables (3 MI325X Llama 3.1 rows, 1 MI355X Mixtral 8x22B row). Not taken: the "1-Node
#      (tok/s/GPU)" column (not labelled measured; its one-node batch / sharding are not stated; and it repeats 1,135 for
#      both 70B rows, FP8 and BF16, which is not credible against the FP8 row's 1,726 at 8 nodes), and the "Projected"
#      column (Primus's own model, not a measurement). 4 rows.
#  S2  primus-tuning-agent README, "Hardware validation" table: both measured cells (2 rows). Its "Published reference
#      3,475 (measured)" is the same measurement as S1's Mixtral row ("AMD's published Mixtral 8x22B 4-node BF16
#      reference ... rocm/primus:v26.2") and enters once, as S1's row. 2 rows.


_S55B_SEQ = 8192

# ---- S1. ROCm/rocm-blogs blogs/software-tools-optimization/primus-projection/README.md @ 5f2d6c15 (search id
#    62367109929; 5 stored versions, latest listed d7e207dc), "Primus Projection: Estimate Memory and Performance Before
#    You Train", 14 May 2026. "we compared projected performance against measured results published on the AMD ROCm
#    Performance Results page ... benchmark on a single node, then project to 8 nodes and compare against the published
#    multi-node measurements."
#    MI325X table ("Docker container: rocm/primus:v26.1", "Release date: Jan 21, 2026"), quoted:
#      "| Model | Precision | Batch | SeqLen | FSDP | TP | PP | CP | EP | 1-Node (tok/s/GPU) | Measured 8-Node (tok/s/GPU)
#       | Projected 8-Node (tok/s/GPU) | Error |"
#      "| Llama 3.1 8B | FP8 | 2 | 8192 | No | 1 | 1 | 1 | 1 | 16,224 | 16,186 | 17,787 | +9.89% |"
#      "| Llama 3.1 70B | FP8 | 4 | 8192 | Yes | 1 | 1 | 1 | 1 | 1,135 | 1,726 | 1,872 | +8.46% |"
#      "| Llama 3.1 70B | BF16 | 1 | 8192 | Yes | 1 | 1 | 1 | 1 | 1,135 | 1,174 | 1,096 | -6.64% |"
#    MI355X table ("rocm/primus:v26.2", "Apr 4, 2026"), quoted:
#      "| Model | Precision | Batch | SeqLen | TP | PP | VPP | CP | EP | Measured 8-Node (tok/s/GPU) | Projected 8-Node
#       (tok/s/GPU) | Error |"
#      "| Mixtral 8×22B | BF16 | 1 | 8192 | 1 | 4 | 2 | 1 | 8 | 3,475 | 3,426 | -1.4% |"
#    The rate is the source's tokens/s/GPU (Primus's log: seq_length x global batch / step / world size). Implied steps
#    (arithmetic only): 8B 1024 x 8192 / (16,186 x 64) = 8.10 s; 70B FP8 256 x 8192 / (1,726 x 64) = 18.99 s; 70B BF16
#    256 x 8192 / (1,174 x 64) = 27.91 s; Mixtral 512 x 8192 / (3,475 x 32) = 37.72 s.
#    Layout completed from AMD-AGI/Primus docs/02-user-guide/megatron-lm-training.md @ 01aa081c (id 69032994044),
#    section 3.2 "Multi-node training", quoted:
#      "Llama3.1-8B FP8, 8 nodes: ... slurm_pretrain.sh --global_batch_size 1024"
#      "Llama3.1-70B FP8, 8 nodes: ... --micro_batch_size 4 --global_batch_size 256 --recompute_num_layers 80"
#      "Llama3.1-70B BF16, 8 nodes: ... --micro_batch_size 1 --global_batch_size 256 --recompute_num_layers 12"
#      "Mixtral-8x22B BF16, 4 nodes, MI355X ... --micro_batch_size 1 --global_batch_size 512
#       --num_virtual_stages_per_pipeline_rank 2 --pipeline_model_parallel_size 4 --expert_model_parallel_size 8
#       --recompute_num_layers 1 --moe_use_legacy_grouped_gemm True --gradient_accumulation_fusion True"
#    and the yamls: examples/megatron/configs/MI325X/llama3.1_8B-FP8-pretrain.yaml @ bf6d0957 (id 69370449565): TP1 PP1,
#    "overlap_param_gather: true" (Megatron's distributed optimizer), no recompute, "fp8: hybrid", delayed recipe;
#    MI325X/llama3.1_70B-FP8-pretrain.yaml @ 212f74e7 (id 71379880663) and llama3.1_70B-BF16-pretrain.yaml @ 0e6fcd8e
#    (id 71382651711): "use_torch_fsdp2: true", "use_distributed_optimizer: false", "recompute_granularity: full",
#    "recompute_method: block"; MI355X/mixtral_8x22B_v0.1-BF16-pretrain.yaml @ 46840761 (id 71412982178): TP1 PP4 EP8,
#    "overlap_param_gather: true", "moe_router_force_load_balancing: true" (Primus's default type 'even' = round-robin,
#    docs/04-technical-guides/mega-moe.md), "recompute_method: block", no DeepEP key (AllToAll dispatcher).
#    Mapping: recompute_num_layers 80 with method block on an 80-layer model = every layer -> recompute='full';
#    12 -> recompute='full', recompute_layers=12 (first 12 layers per stage); Mixtral 1 -> recompute_layers=1 (per model
#    chunk, interleaved); FSDP2 -> zero_stage=3; distributed optimizer -> zero_stage=1.
#    [B] for every row: the blog states only MBS, seq, FSDP and TP/PP/VPP/CP/EP; GBS and the recompute count come from
#    the v26.7 recipe page (the measurements are v26.1 / v26.2), the sharding from yamls stored at other commits than
#    the projection commit 2d937b9. Mixtral: the blog's column says "8-Node" but the launch recipe ("4 nodes, MI355X"),
#    the tuning-agent blog ("AMD's published Mixtral 8x22B 4-node BF16 reference of 3,475 tok/s/GPU") and the ROCm 7
#    MI355X blog ("Mixtral 8x22B BF16, 4 nodes") all say 4 nodes: priced at 32 GPUs (check55b.py also prints the 64-GPU
#    price as a sensitivity, not a row). Network: the presets' 50 GB/s per GPU scale-out (ASSUMED; the source names no
#    NIC).
S55B_PROJECTION = (
    ("[B: GBS 1024 from the v26.7 8-node recipe; distributed optimizer from the yaml] Primus projection blog, measured "
     "8-node: Llama 3.1 8B FP8 DP64 MBS2, seq 8192, rocm/primus:v26.1, 64 MI325X",
     "llama-3.1-8b", "MI325X", "megatron", "fp8-mixed", 64, _S55B_SEQ, 1024,
     dict(zero_stage=1, microbatch_size=2, recompute="none"), 16186.0, None),
    ("[B: GBS 256 and recompute 80/80 layers from the v26.7 recipe] Primus projection blog, measured 8-node: Llama 3.1 70B "
     "FP8 torch-FSDP2 x 64, MBS4, full recompute, rocm/primus:v26.1, 64 MI325X",
     "llama-3.1-70b", "MI325X", "megatron", "fp8-mixed", 64, _S55B_SEQ, 256,
     dict(zero_stage=3, microbatch_size=4, recompute="full"), 1726.0, None),
    ("[B: GBS 256 and recompute 12/80 layers from the v26.7 recipe] Primus projection blog, measured 8-node: Llama 3.1 70B "
     "BF16 torch-FSDP2 x 64, MBS1, block recompute 12 layers, rocm/primus:v26.1, 64 MI325X",
     "llama-3.1-70b", "MI325X", "megatron", "bf16-mixed", 64, _S55B_SEQ, 256,
     dict(zero_stage=3, microbatch_size=1, recompute="full", recompute_layers=12), 1174.0, None),
    ("[B: 4 nodes per the recipe (blog column says 8-node); GBS 512, recompute 1 layer/chunk from the recipe; round-robin "
     "routing, AllToAll] Primus projection blog, measured: Mixtral 8x22B BF16 PP4 VPP2 EP8 DP8, MBS1, rocm/primus:v26.2, "
     "32 MI355X",
     "mixtral-8x22b", "MI355X", "megatron", "bf16-mixed+moe_routing=round_robin", 32, _S55B_SEQ, 512,
     dict(pp=4, schedule="interleaved", virtual_stages=2, ep=8, zero_stage=1, microbatch_size=1, recompute="full",
          recompute_layers=1), 3475.0, None),
)

# ---- S2. ROCm/rocm-blogs blogs/software-tools-optimization/primus-tuning-agent/README.md @ 1a3182aa (id 62439128356),
#    "Primus Tuning Agent: Closing the Configuration-Search Loop", 06 Jul 2026. "Case Study: Mixtral 8×22B (4-Node
#    MI355X)": "We applied the agent to Mixtral 8×22B (FP8, 4-node MI355X, GBS=512, seq_len=8192), grounded against
#    AMD's published Mixtral 8×22B 4-node BF16 reference of 3,475 tok/s/GPU (measured on the rocm/primus:v26.2
#    container) on the same hardware." The winner: "combining MBS=1, no recompute, and DeepEP". Quoted:
#      "| Config | Projected | Measured | Projection Error | vs. measured reference |"
#      "| MBS=1, DeepEP | 4,908 | 4,402 | −10.3% | +26.7% |"
#      "| MBS=1, DeepEP + distributed optimizer | 4,903 | 4,377 | −10.7% | +25.9% |"
#    Implied steps: 512 x 8192 / (4,402 x 32) = 29.78 s; 512 x 8192 / (4,377 x 32) = 29.95 s.
#    [B: TP1 PP4 VPP2 EP8 kept from the workload baseline (the table names only the changed knobs); BF16 assumed: the
#    case-study line says "FP8" but the workload yaml the blog launches is mixtral_8x22B_v0.1-BF16-pretrain.yaml, the
#    reference it compares with is BF16 "on the same hardware", and the winner's description names no FP8 (check55b.py
#    prints the fp8 price as a sensitivity, not a row); the first row without the distributed optimizer (zero_stage 0)
#    because the second adds it; round-robin routing as the yaml's force_load_balancing default.]
_S55B_TA = dict(pp=4, schedule="interleaved", virtual_stages=2, ep=8, microbatch_size=1, recompute="none",
                moe_dispatcher="deepep")
S55B_TUNING_AGENT = (
    ("[B: PP4 VPP2 EP8 baseline kept, BF16 assumed, no distributed optimizer] Primus tuning-agent blog, measured: "
     "Mixtral 8x22B MBS1, no recompute, DeepEP, GBS 512, 32 MI355X",
     "mixtral-8x22b", "MI355X", "megatron", "bf16-mixed+moe_routing=round_robin", 32, _S55B_SEQ, 512,
     dict(_S55B_TA, zero_stage=0), 4402.0, None),
    ("[B: PP4 VPP2 EP8 baseline kept, BF16 assumed] Primus tuning-agent blog, measured: Mixtral 8x22B MBS1, no "
     "recompute, DeepEP + distributed optimizer, GBS 512, 32 MI355X",
     "mixtral-8x22b", "MI355X", "megatron", "bf16-mixed+moe_routing=round_robin", 32, _S55B_SEQ, 512,
     dict(_S55B_TA, zero_stage=1), 4377.0, None),
)

SCOUTED_2026_12BF = S55B_PROJECTION + S55B_TUNING_AGENT


# Fifty-sixth scouting pass (2026-12, never fitted on; SCOUTED_2026_12BG). Names carry _S56_.
#
# Row format as PUBLIC_CHECKS. Row-selection rules (fixed per source before any row of that source was priced; no
# row dropped afterwards):
#  S1  yandex/YaFSDP README.md "Benchmarks" table (the version with the two iteration-time columns): every one of its
#      16 configurations (the "FSDP iteration time (s)" cell as the row; the YaFSDP cell quoted, see below).
#  S2  allenai/OLMo-core README.md, the version with the largest throughput table (1B, 7B, 8B, 13B, 32B rows; read
#      id 47201541904): every row except (a) the 7B BF16 / FP8 pair, the same configuration as the held
#      OLMO_CORE_H100 rows, and (b) the 32B pair: src/scripts/train/OLMo2-32B.py changes its layout across stored
#      commits (full AC, mbs 1, HSDP 32 replicas @ 016e4268 vs FFN-only AC, mbs 2, 4 replicas in OLMo2/OLMo2-32B.py
#      @ 18b8fb66) and no version is tied to the README figure: more than two assumptions. 6 rows.
# Novelty: grep over benchmarks/, docs/accuracy.md and the notes found no YaFSDP / yafsdp, OLMo2-13B, olmo-2-13b,
# Llama3-8B.py, "4,600 TPS" or "1,500 TPS".

# ---- S1. yandex/YaFSDP README.md @ ddfdda4b5003800a3b3f16b4744eb2894e2ac889 region (stored read id 15191628706; the
#    same table in id 15015080537 without the time columns, and in the github.com page copy id 67338964240, fetched
#    2026-05-18). Quoted:
#    "We've compared YaFSDP with FSDP on a variety of pre-training setups ranging from: 7B to 70B parameters, 64 to 256
#    devices, 2048 to 8192 tokens per sequence"
#    "| model | gpu-count | seq-len | num-ckpt-layers | speedup | YaFSDP iteration time (s) | FSDP iteration time (s) |"
#    "| Llama 2 7B  |  64 | 2048 |  0 |  9.92% |  0.81 |  0.90 |"
#    "| Llama 2 7B  |  64 | 4096 |  0 |  3.43% |  1.16 |  1.21 |"
#    "| Llama 2 7B  |  64 | 8192 |  0 |  2.68% |  2.23 |  2.29 |"
#    "| Llama 2 7B  | 128 | 2048 |  0 |  9.57% |  0.87 |  0.97 |"
#    "| Llama 2 7B  | 128 | 4096 |  0 |  2.42% |  1.19 |  1.22 |"
#    "| Llama 2 7B  | 128 | 8192 |  0 |  2.32% |  2.25 |  2.31 |"
#    "| Llama 2 13B | 128 | 2048 |  0 | 12.10% |  1.55 |  1.76 |"
#    "| Llama 2 13B | 128 | 4096 |  0 |  3.49% |  2.06 |  2.14 |"
#    "| Llama 2 34B | 128 | 2048 |  0 | 20.70% |  3.39 |  4.27 |"
#    "| Llama 2 34B | 256 | 2048 |  0 | 21.99% |  3.51 |  4.50 |"
#    "| Llama 2 34B | 256 | 4096 |  5 |  8.35% |  5.33 |  5.81 |"
#    "| Llama 2 70B | 256 | 2048 | 10 | 21.48% |  6.97 |  8.87 |"
#    "| Llama 2 70B | 256 | 4096 | 50 |  7.17% | 11.07 | 11.93 |"
#    "| Llama 3 8B  |  64 | 2048 |  0 | 11.91% |  0.97 |  1.10 |"
#    "| Llama 3 8B  |  64 | 4096 |  0 |  7.86% |  1.36 |  1.48 |"
#    "| Llama 3 70B | 256 | 2048 | 20 | 26.60% |  7.17 |  9.76 |"
#    "Details: In each run per-device batch size is set to 1. `num-ckpt-layers` refers to the number of transformer
#    layers to which activation checkpointing was applied. Performance was measured using a cluster of hosts with
#    A100 80 GB GPUs."
#    Stack (examples/clm.md @ 0bd33e74, id 15406104222): "accelerate launch --config_file ya-fsdp/examples/
#    fsdp_config.yaml --fsdp_ya_fsdp_enabled true transformers/examples/pytorch/language-modeling/run_clm.py ...
#    --block_size 2048 --per_device_train_batch_size 1"; "--fsdp_ya_fsdp_enabled true - toggle between FSDP and
#    YaFSDP"; image "based on the NVIDIA PyTorch image [24.02] with some patched HF libraries".
#    examples/fsdp_config.yaml (id 15876704918): "fsdp_sharding_strategy: FULL_SHARD", "fsdp_backward_prefetch:
#    BACKWARD_PRE", "fsdp_forward_prefetch: true", "fsdp_offload_params: false", "mixed_precision: bf16",
#    "fsdp_num_layers_to_checkpoint".
#    tokens/s/GPU = 1 sequence x seq / iteration time, e.g. Llama 2 7B 64 GPUs 2048 YaFSDP: 2048 / 0.81 = 2,528.4;
#    Llama 3 70B 256 GPUs 2048 FSDP: 2048 / 9.76 = 209.8. Global batch = gpu-count x 1.
#    Layout: ZeRO-3 (FULL_SHARD) over all GPUs, microbatch 1; num-ckpt-layers 0 -> recompute none, N > 0 -> full
#    recompute of N layers (recompute_layers=N). Framework: hf-fsdp (stock HF Llama code under PyTorch FSDP through
#    Accelerate), 'bf16-mixed'. [B: (1) gradient accumulation 1 assumed: the "iteration" = one optimizer step over
#    one sequence per GPU (run_clm's default gradient_accumulation_steps 1); (2) the YaFSDP column is priced with the
#    same hf-fsdp profile: the planner has no YaFSDP profile, so those rows measure how far a different FSDP
#    implementation sits from the PyTorch-FSDP price; (3) network: the a100-80gb preset's 25 GB/s per GPU scale-out
#    (Yandex's fabric is not stated)]. Models: 'llama-2-7b', 'llama-2-13b', 'codellama-34b' (the Llama 2 34B shape),
#    'llama-2-70b', 'llama-3-8b', 'llama-3-70b'.
#    Partial checkpointing (num-ckpt-layers 5 / 10 / 20 / 50): the plain hf-fsdp profile refuses recompute_layers
#    ("ConfigError: recompute_layers=5 is Megatron-LM's --recompute-method block --recompute-num-layers, which the
#    hf-fsdp framework does not have" -- first pricing, check56_output.txt shows it again for one row), although
#    YaFSDP's patched Accelerate has exactly that knob (fsdp_num_layers_to_checkpoint). Those 8 rows therefore run
#    under 'hf-fsdp+module_recompute=true', the profile field that gates per-layer-count recompute; nothing else of
#    the profile changes (recompute_modules is not used). Decided after the refusal, before any of the 8 was priced.
_S56_YA = (  # (model label, preset, gpus, seq, ckpt layers, YaFSDP s, FSDP s)
    ("Llama 2 7B", "llama-2-7b", 64, 2048, 0, 0.81, 0.90), ("Llama 2 7B", "llama-2-7b", 64, 4096, 0, 1.16, 1.21),
    ("Llama 2 7B", "llama-2-7b", 64, 8192, 0, 2.23, 2.29), ("Llama 2 7B", "llama-2-7b", 128, 2048, 0, 0.87, 0.97),
    ("Llama 2 7B", "llama-2-7b", 128, 4096, 0, 1.19, 1.22), ("Llama 2 7B", "llama-2-7b", 128, 8192, 0, 2.25, 2.31),
    ("Llama 2 13B", "llama-2-13b", 128, 2048, 0, 1.55, 1.76), ("Llama 2 13B", "llama-2-13b", 128, 4096, 0, 2.06, 2.14),
    ("Llama 2 34B", "codellama-34b", 128, 2048, 0, 3.39, 4.27),
    ("Llama 2 34B", "codellama-34b", 256, 2048, 0, 3.51, 4.50),
    ("Llama 2 34B", "codellama-34b", 256, 4096, 5, 5.33, 5.81),
    ("Llama 2 70B", "llama-2-70b", 256, 2048, 10, 6.97, 8.87), ("Llama 2 70B", "llama-2-70b", 256, 4096, 50, 11.07, 11.93),
    ("Llama 3 8B", "llama-3-8b", 64, 2048, 0, 0.97, 1.10), ("Llama 3 8B", "llama-3-8b", 64, 4096, 0, 1.36, 1.48),
    ("Llama 3 70B", "llama-3-70b", 256, 2048, 20, 7.17, 9.76))


def _S56_ya_layout(ckpt: int) -> dict:
    d = dict(zero_stage=3, microbatch_size=1)
    if ckpt:
        d.update(recompute="full", recompute_layers=ckpt)
    return d


#    Integration (session 56): one configuration enters once (as the fifty-fifth pass's B200 rows measured under two
#    flag sets): the planner's inputs of a YaFSDP cell and of its PyTorch FSDP twin are the same, and the hf-fsdp
#    profile describes PyTorch FSDP, so the PyTorch FSDP column is the row; the YaFSDP column stays quoted above as
#    the spread of another FSDP implementation on the same configuration (2-27% faster, most at seq 2048).
S56_YAFSDP = tuple(
    (f"[B: GA 1 assumed; A100 network assumed] YaFSDP README A100 80GB: {name} PyTorch FSDP, "
     f"FULL_SHARD {n} GPUs, seq {seq}, mbs 1, ckpt layers {ck}",
     model, "A100 80GB", "hf-fsdp+module_recompute=true" if ck else "hf-fsdp", "bf16-mixed", n, seq, n,
     _S56_ya_layout(ck), round(seq / fs, 1), None)
    for name, model, n, seq, ck, ya, fs in _S56_YA)

# ---- S2. allenai/OLMo-core README.md, read id 47201541904 (the stored version with the 32B row; an earlier one, id
#    47766689062, has the same 1B / 7B / 8B / 13B values; the held OLMO_CORE_H100 rows came from @ a7de3f65, whose
#    table has 1B / 7B / 13B with older scripts). Quoted:
#    "Throughput numbers from these scripts with various different configuration settings are reported below,
#    measured on a cluster with NVIDIA H100 GPUs."
#    "| **1B**  | OLMo-1124 | 4096 | BF16 | 55,000 TPS | `OLMo2-1B.py` | |"
#    "| | | 4096 | BF16/FP8[^2] | 65,000 TPS | `OLMo2-1B.py` | `--train_module.float8_config.enabled=true` |"
#    "| **8B**  | Llama | 4096 | BF16 | 9,500 TPS | `Llama3-8B.py` | |"
#    "| | | 4096 | BF16/FP8 | 12,500 TPS | `Llama3-8B.py` | `--train_module.float8_config.enabled=true` |"
#    "| **13B** | OLMo-1124 | 4096 | BF16 | 4,600 TPS | `OLMo2-13B.py` | |"
#    "| | | 4096 | BF16/FP8 | 5,500 TPS | `OLMo2-13B.py` | `--train_module.float8_config.enabled=true` |"
#    "[^1]: Throughput reported in tokens per second per device." "[^2]: In this setup most matrix multiplications
#    are computed in `float8`, everything else is in `bfloat16`."
#    The TPS figure is already tokens/s/GPU (no derivation). Scripts (train-module API, as the README's overrides
#    name it):
#      OLMo2-1B.py @ 08c51514 (id 47876414258): rank_microbatch_size 8 x 4096 (x2 only on B200), GLOBAL_BATCH_SIZE 512
#        x 4096, compile_model True, dp hsdp param bf16 reduce fp32, no ac_config; model olmo2_1B = llama2_1B
#        (d_model 2048, n_layers 18, n_heads 16) with hidden_size_multiplier 1.5 -> FFN 8192 (olmo_core config.py,
#        id 5711370762).
#      Llama3-8B.py @ 274fd6ae (id 9105600299): rank_microbatch_size 2 x 4096, global 1024 x 4096, compile, hsdp bf16 /
#        fp32 reduce, no AC; llama3_8B (4096, 32 layers, 32 heads, 8 KV, FFN 14336) with the dolma2 vocabulary padded
#        to 100352.
#      OLMo2-13B.py @ 31ed7021 (id 47461783307): rank_microbatch_size 1 x 4096, global 2048 x 4096, compile, hsdp bf16 /
#        fp32 reduce, no AC; olmo2_13B = llama2_13B (5120, 40 layers, 40 heads, FFN 13824), vocab 100352.
#    Priced exactly as the held OLMO_CORE_H100 rows: torchtitan-compile, 'bf16-mixed-fp32-grads' / 'fp8-mixed',
#    dp 8 ZeRO-3 (HSDP inside one node), recompute none. [B: (1) one node of 8 H100 assumed (the README gives no
#    GPU count; with HSDP the shard group is one node whatever the node count, so only the cross-node gradient
#    all-reduce of the replicas is left out); (2) the README figures are rounded to 2-3 significant digits; 1B only:
#    (3) 18 layers as olmo2_1B reads at the stored config.py (the released OLMo-2-0425-1B has 16; olmo2_1B_v2 has 16)].
#    Models: benchmarks/models/olmo-core-olmo2-1b-18l.config.json (1.619 B parameters as the loader counts),
#    benchmarks/models/olmo-core-llama3-8b-dolma2.config.json (7.802 B), benchmarks/models/olmo-2-13b.config.json
#    (13.716 B; HF
#    allenai/OLMo-2-1124-13B states 13.7 B). QK-norm of OLMo 2 is not modelled (a few norms per layer).
_S56_OC = (  # (name, model file, mbs, global batch, precision tag, TPS, extra assumption)
    ("OLMo 2 1B (18 layers)", "olmo-core-olmo2-1b-18l.config.json", 8, 512, "BF16", 55000, "; 18 layers"),
    ("OLMo 2 1B (18 layers)", "olmo-core-olmo2-1b-18l.config.json", 8, 512, "FP8", 65000, "; 18 layers"),
    ("Llama 3 8B shape, dolma2 vocab", "olmo-core-llama3-8b-dolma2.config.json", 2, 1024, "BF16", 9500, ""),
    ("Llama 3 8B shape, dolma2 vocab", "olmo-core-llama3-8b-dolma2.config.json", 2, 1024, "FP8", 12500, ""),
    ("OLMo 2 13B", "olmo-2-13b.config.json", 1, 2048, "BF16", 4600, ""),
    ("OLMo 2 13B", "olmo-2-13b.config.json", 1, 2048, "FP8", 5500, ""))
S56_OLMO_CORE = tuple(
    (f"[B: 8 GPUs assumed; rounded{extra}] OLMo-core README H100: {name} {tag}, HSDP in one node, mbs {mbs}, compile",
     MODELS_DIR + f, "h100-sxm", "torchtitan-compile", "bf16-mixed-fp32-grads" if tag == "BF16" else "fp8-mixed",
     8, 4096, gbs, dict(dp=8, zero_stage=3, microbatch_size=mbs, recompute="none"), float(tps), None)
    for name, f, mbs, gbs, tag, tps, extra in _S56_OC)

SCOUTED_2026_12BG = S56_YAFSDP + S56_OLMO_CORE


# Fifty-sixth scouting pass, second scout (2026-12, systems papers and their baselines; never fitted on; SCOUTED_2026_12BH). Names
# carry _S56B_.
#
# Row format as benchmarks/public_runs.py PUBLIC_CHECKS:
# (label, model, hardware, framework, precision, devices, seq_len, global batch, layout fields, measured tokens/s/GPU,
# measured GiB or None). Import with sys.path.insert(0, '/work/main/benchmarks').
# Model files new in this pass: benchmarks/models/kwai-llama-*.config.json (MODELS_DIR).
#
# Row-selection rules (fixed per source BEFORE any row of that source was priced; no row dropped afterwards):
#  K1  Megatron-Kwai USENIX ATC '24 artifact (Yuan et al., "Accelerating the Training of Large Language Models using
#      Efficient Activation Rematerialization and Optimal Hybrid Parallelism"), examples/atc24/README.md: every
#      measured row whose method is a layout the planner can state, i.e.
#        (a) the "Minimum Demo" table (Llama-7B, 4 GPUs, seq 12,288): the "baseline" and the "origin Megatron-LM" rows,
#            both the A800 and the H800 column (4 rows). Left out: "ours" (fractional activation offload alpha and
#            the fork's balanced partial checkpointing, neither a planner layout) and the OOM row (no number);
#        (b) the "Reproduce Table 8" table (Llama-175B, 256 H800, seq 8,192): "baseline" and "origin Megatron-LM"
#            (2 rows); "ours" and the OOM row left out as in (a);
#        (c) the "Reproduce Figure 9" table: every row with ckpt "no" and alpha 0.000 (no checkpointing, no
#            activation offload: 7 rows). Rows with ckpt "ours" or alpha > 0 are left out (not a planner layout).
#      13 rows. Nothing else in the repository is a measurement of a stated layout.



# ---- K1. Megatron-Kwai ATC'24 artifact. README examples/atc24/README.md, stored copy in the fork
#    wtr0504/Megatron-Kwai-Transformer-Rematerialization @ 99b3339c474ed37aa9209bad1c3d1d87033d0b86 (read id
#    15817696046; the same text is the second half of the fork's top-level README, id 20040627269). The fork copied
#    kwai/Megatron-Kwai branch atc24ae ("Submitted tag: atc24ae-1.0.0"); scripts are read at the fork's first commit
#    b2646e4d9f244b90de44352ac742a1494a4781cc, before the fork's own edits (at 99b3339c the fork changed
#    1_run_7b_4gpus_baseline.sh to 1 GPU / seq 16384 and hard-coded --num-layers 14 in pretrain_llama.sh; neither
#    edit is used here). Quoted (README):
#    "The referred "Latest Megatron-LM" is the snapshot of NVIDIA/Megatron-LM at Jan 1, 2024, when the commit id was
#     [2bc6cd3] ... We make minor modifications (~10 lines) on it to ensure compatibility with OpenMPI and for our
#     dataset."
#    "Software requirements are consistent with NVIDIA's official Megatron-LM. The only additional requirement is
#     TransformerEngine v1.1.0 built with NVTE_WITH_USERBUFFERS=1."
#    Minimum demo: "Train Llama-7B with a context window size of 12,288 using 4 GPUs."
#      "| File | Method | A800 throughput / MFU | H800 throughput / MFU |"
#      "| 1_run_7b_4gpus_baseline.sh | baseline | 3016 / 47.7% | 6639 / 33.1% |"
#      "| 3_run_7b_4gpus_origin_megatron.sh | origin Megatron-LM | 2847 / 45.0% | 6138 / 30.6% |"
#      "The throughput metric is "Tokens per Second per GPU" printed to the screen."
#    Cluster: "A cluster consists of 32 nodes. Each node is equipped with eight NVIDIA H800 80GB GPUs interconnected
#     via NVLink. For inter-node communication, each node is outfitted with eight 100 Gbps NICs."
#    Table 8: "Train Llama-175B with a context window size of 8,192 using 256 GPUs."
#      "| 5_run_175b_256gpus_baseline.sh | baseline | 299 / 33.4% |"
#      "| 7_run_175b_256gpus_origin_megatron.sh | origin Megatron-LM | 278 / 31.0% |"   (H800 throughput / MFU)
#    Figure 9: "The values of NUM_GPUS, GLOBAL_BATCH_SIZE, TP, CP, PP, PP_l, CKPT, and OFFLOAD_ALPHA used in the
#     experiments are provided in the following table." Header "| model | SEQ_LENGTH | NUM_GPUS | B | t | c | p | l |
#     ckpt | alpha | tokens per second |"; the rows taken (ckpt no, alpha 0.000), verbatim:
#      "| Llama-65B | 4096 | 200 | 250 | 4 | 1 | 5 | 4 | no | 0.000 | 179819 |"
#      "| Llama-65B | 4096 | 192 | 240 | 4 | 1 | 8 | 2 | no | 0.000 | 180303 |"
#      "| Llama-65B | 4096 | 112 | 252 | 4 | 1 | 4 | 4 | no | 0.000 | 99046 |"
#      "| Llama2-70B | 8192 | 256 | 256 | 2 | 4 | 8 | 2 | no | 0.000 | 229338 |"
#      "| Llama2-70B | 8192 | 240 | 270 | 2 | 4 | 10 | 2 | no | 0.000 | 217316 |"
#      "| Llama2-70B | 8192 | 192 | 264 | 2 | 4 | 8 | 2 | no | 0.000 | 177032 |"
#      "| Llama2-70B | 8192 | 160 | 260 | 2 | 4 | 10 | 2 | no | 0.000 | 148456 |"
#     The "tokens per second" column is the whole job's rate (e.g. 65B on 200 GPUs: 179819 / 200 = 899.1 per GPU,
#     an MFU near 38% on H800 with the 6N + attention count; the per-GPU reading would be >100%).
#    Derivations: (a)/(b) the README figure is already tokens/s/GPU. (c) tokens/s/GPU = tokens per second / NUM_GPUS:
#     179819/200 = 899.1; 180303/192 = 939.1; 99046/112 = 884.3; 229338/256 = 895.9; 217316/240 = 905.5;
#     177032/192 = 922.0; 148456/160 = 927.9.
#    Scripts (b2646e4d): 1_run_7b_4gpus_baseline.sh (id 20011167592) and 3_run_7b_4gpus_origin_megatron.sh (id
#     15175819617): SEQ_LENGTH 12288, GLOBAL_BATCH_SIZE 16, NUM_GPUS 4, TP 1, CP 1, PP 4, PP_l 1, CKPT full
#     (baseline: OFFLOAD_ALPHA 0). 5_run_175b_256gpus_baseline.sh (id 19422053430) and
#     7_run_175b_256gpus_origin_megatron.sh (id 19284778379): SEQ_LENGTH 8192, GLOBAL_BATCH_SIZE 256, NUM_GPUS 256,
#     TP 2, CP 2, PP 16, PP_l 1, CKPT full (baseline OFFLOAD_ALPHA 0).
#    pretrain_llama_using_origin_megatron.sh (id 1671858352; stock Megatron-LM 2bc6cd3): --use-distributed-optimizer
#     --accumulate-allreduce-grads-in-fp32 --use-flash-attn --sequence-parallel --num-layers-per-virtual-pipeline-
#     stage $PP_l --context-parallel-size $CP --use-mcore-models; CKPT full = "--recompute-granularity full
#     --recompute-method uniform --recompute-num-layers 1"; "if [ $CP == "1" ]; then TP_OVERLAP_ARGS="--tp-comm-overlap"";
#     --micro-batch-size 1, --bf16, --swiglu, --normalization RMSNorm, --untie-embeddings-and-output-weights,
#     --vocab-size 32004; no --overlap-grad-reduce, no --overlap-param-gather, no --overlap-p2p-communication.
#    pretrain_llama.sh (Megatron-Kwai fork, id 1724824843): the same flags plus --overlap-p2p-communication,
#     TP_OVERLAP_ARGS="--overlap-sp-ag --overlap-sp-rs" (always), --use-fast-rms-norm --use-fast-rope,
#     --kaimm-overlap-cp-slow-ctas 4, --kaimm-offload-activation-ratio $OFFLOAD_ALPHA; CKPT no = no recompute flags.
#    Model files (ids 1737613199, 2214101712, 1507091461, 1838360080): llama-7b 32 layers, hidden 4096, FFN 11008,
#     heads hidden/128; llama-65b 80 / 8192 / 22016; llama2-70b 80 / 8192 / 28672, GQA 8 groups; llama-175b 96 /
#     12288 / 32768, heads 96 (MHA). Vocabulary 32004 (NullTokenizer), untied embeddings -> models56b/kwai-*.json.
#    Layout as priced: dp = GPUs / (t c p); ZeRO-1 (distributed optimizer); microbatch 1; sequence parallel when
#     t > 1; interleaved 1F1B with virtual_stages = (layers / p) / PP_l (7B: 8; 175B: 6; 65B p5 l4: 4; 65B p8 l2: 5;
#     65B p4 l4: 5; 70B p8 l2: 5; 70B p10 l2: 4); recompute full (CKPT full) or none (CKPT no); overlap_grad_reduce
#     False (no --overlap-grad-reduce); tp_overlap True where the script turns a TP overlap on with t > 1 (the fork
#     always; origin Megatron-LM only when CP == 1, so not on the 175B row); CP ring (Megatron's p2p).
#    Precision 'bf16-mixed-fp32-grads' (--bf16 --accumulate-allreduce-grads-in-fp32).
#    Hardware: H800 with the README's network, 8 x 100 Gb/s per 8-GPU node = 12.5 GB/s per GPU
#     ("H800+scale_out_bandwidth=12500000000"; preset 50 GB/s); the 4-GPU demo rows are one node ('A800' / 'H800').
#    Framework: origin Megatron-LM (Jan 2024, Megatron-Core models with Transformer Engine) -> 'megatron' with the
#     script's p2p behaviour ('megatron+pp_p2p_overlap=False': no --overlap-p2p-communication in that version, where
#     it defaulted off) [A]. The Megatron-Kwai fork rows ("baseline", Figure 9) are priced with the plain 'megatron'
#     profile (the fork runs Megatron-LM's legacy model code with its own fused RMSNorm / RoPE kernels and its own
#     SP all-gather / reduce-scatter overlap; the planner has no profile for it) [B: fork priced as megatron].
_S56B_KW_HW = "H800+scale_out_bandwidth=12500000000"


def _S56B_kw_layout(t, c, p, layers, pp_l, ckpt, tp_overlap):
    d = dict(tp=t, cp=c, pp=p, zero_stage=1, microbatch_size=1, recompute="full" if ckpt == "full" else "none",
             overlap_grad_reduce=False)
    if t > 1:
        d.update(sp=True, tp_overlap=tp_overlap)
    v = (layers // p) // pp_l
    if p > 1 and v > 1:
        d.update(schedule="interleaved", virtual_stages=v)
    return d


_ORIGIN = "megatron+pp_p2p_overlap=False"
S56B_KWAI_DEMO = tuple(
    (f"{tier}Megatron-Kwai ATC'24 artifact, minimum demo: Llama-7B {method}, {gpu}, 4 GPUs TP1 CP1 PP4 VP8 "
     f"(PP_l 1), full recompute, seq 12288, GBS 16",
     MODELS_DIR + "kwai-llama-7b.config.json", gpu, fw, "bf16-mixed-fp32-grads", 4, 12288, 16,
     _S56B_kw_layout(1, 1, 4, 32, 1, "full", False), float(tps), None)
    for method, fw, tier, a800, h800 in (
        ("baseline (Megatron-Kwai fork)", "megatron", "[B: fork priced as megatron] ", 3016, 6639),
        ("origin Megatron-LM 2bc6cd3", _ORIGIN, "[A] ", 2847, 6138))
    for gpu, tps in (("A800", a800), ("H800", h800)))

S56B_KWAI_175B = (
    ("[B: fork priced as megatron] Megatron-Kwai ATC'24 artifact, Table 8: Llama-175B baseline (Megatron-Kwai fork), "
     "256 H800 TP2 CP2 PP16 VP6, full recompute, seq 8192, GBS 256",
     MODELS_DIR + "kwai-llama-175b.config.json", _S56B_KW_HW, "megatron", "bf16-mixed-fp32-grads", 256, 8192, 256,
     _S56B_kw_layout(2, 2, 16, 96, 1, "full", True), 299.0, None),
    ("[A] Megatron-Kwai ATC'24 artifact, Table 8: Llama-175B origin Megatron-LM 2bc6cd3, "
     "256 H800 TP2 CP2 PP16 VP6, full recompute, seq 8192, GBS 256 (no TP overlap: CP > 1)",
     MODELS_DIR + "kwai-llama-175b.config.json", _S56B_KW_HW, _ORIGIN, "bf16-mixed-fp32-grads", 256, 8192, 256,
     _S56B_kw_layout(2, 2, 16, 96, 1, "full", False), 278.0, None),
)

_S56B_FIG9 = (  # (model label, file, layers, seq, GPUs, B, t, c, p, l, tokens/s total)
    ("Llama-65B", "kwai-llama-65b.config.json", 80, 4096, 200, 250, 4, 1, 5, 4, 179819),
    ("Llama-65B", "kwai-llama-65b.config.json", 80, 4096, 192, 240, 4, 1, 8, 2, 180303),
    ("Llama-65B", "kwai-llama-65b.config.json", 80, 4096, 112, 252, 4, 1, 4, 4, 99046),
    ("Llama2-70B", "kwai-llama2-70b.config.json", 80, 8192, 256, 256, 2, 4, 8, 2, 229338),
    ("Llama2-70B", "kwai-llama2-70b.config.json", 80, 8192, 240, 270, 2, 4, 10, 2, 217316),
    ("Llama2-70B", "kwai-llama2-70b.config.json", 80, 8192, 192, 264, 2, 4, 8, 2, 177032),
    ("Llama2-70B", "kwai-llama2-70b.config.json", 80, 8192, 160, 260, 2, 4, 10, 2, 148456),
)
S56B_KWAI_FIG9 = tuple(
    (f"[B: fork priced as megatron] Megatron-Kwai ATC'24 artifact, Figure 9: {name} ckpt no, alpha 0, {n} H800 "
     f"TP{t} CP{c} PP{p} l{l}, seq {seq}, GBS {b}",
     MODELS_DIR + f, _S56B_KW_HW, "megatron", "bf16-mixed-fp32-grads", n, seq, b,
     _S56B_kw_layout(t, c, p, layers, l, "no", True), round(tps / n, 1), None)
    for name, f, layers, seq, n, b, t, c, p, l, tps in _S56B_FIG9)

S56B_KWAI = S56B_KWAI_DEMO + S56B_KWAI_175B + S56B_KWAI_FIG9

SCOUTED_2026_12BH = S56B_KWAI


# Fifty-seventh scouting pass (2026-12, never fitted on; SCOUTED_2026_12BI). Names carry _S57_.
#
# Source: AI-Hypercomputer/gpu-recipes (Google Cloud's GPU training recipes), the NeMo parts the MaxText rows above
# (XLA_GPU_2026_12) did not use. Row format as PUBLIC_CHECKS. Model files new in this pass:
# benchmarks/models/nemo-*.config.json (GPT-2 vocabulary 50,304 bodies; Qwen2.5 shapes without QKV bias as the NeMo
# configs print `bias: false`).
#
# Row-selection rules (fixed before any row was priced; no row dropped afterwards):
#  G1  training/a4/custom/*/logs/*: every committed full log whose run reaches NeMo's closing summary line
#      "train_step_timing in s: [...]" (20 steps, step_timing_kwargs buffer_size 5, sync_cuda true). Measured step =
#      median of the list's entries 10..19 (0-based; the 5-step buffer is full from entry 5). Layout, precision and
#      shape from the log's printed NeMo configuration; GPUs = trainer.num_nodes x 8 where read, else the run name.
#      12 logs, 12 rows (B200, NeMo 25.04, megatron_gpt / mcore).
#  G2  the "Here is an example of an entry in the DLLogger log" block of every NeMo (1.x launcher) recipe README under
#      training/{a3mega,a3ultra,a4}/: each distinct entry (by timestamp) once, assigned to the recipe whose global batch
#      satisfies consumed_samples == (step + 1) x GBS (the A3 Mega Mixtral README carries the GPT-3 175B entry,
#      timestamp 1727463426.984522, consumed 98304 = 48 x 2048, so it is no Mixtral row). Layout from the NeMo yaml the
#      README names; precision from its process_training_results.py example (--precision); GPUs from its
#      --num_accelerators. Row = that one step's train_step_timing. 9 rows.
#  Conversion: tokens/s/GPU = seq x GBS / step / GPUs (measured step times, no MFU back-out). Framework: megatron (NeMo
#  on Megatron-Core, as the earlier NeMo rows); ZeRO-1 (distributed optimizer); no recompute (every config has
#  activations_checkpoint_granularity: null); fp8-params where a config sets fp8_params: true with fp8; tp_overlap =
#  ub_tp_comm_overlap. Hardware: A3 Mega = the gcp-a3-mega cluster file (GPUDirect-TCPXO), A3 Ultra = h200, A4 = b200.
#
# Quoted (read ids of the stored copies):
#  G1 training/a4/custom/llama3-8b/logs/llama3-8b-8gpu-tp1-pp1-cp1-vp1-gbs128-mbs2-fp8-full-logs @1b8db9dc
#     (id 34391915496): "micro_batch_size: 2", "global_batch_size: 128", "encoder_seq_length: 8192", "fp8: true",
#     "fp8_params: true", "type: 'GPT2BPETokenizer'"; "train_step_timing in s: [21.37, 12.82, ..., 4.33]".
#  G1 .../llama3-70b/logs/llama3-70b-64gpu-sq1-tp2-pp4-cp2-vp5-gbs128-mbs1-fp8-full-logs @8d928f16 (id 34614364132):
#     "tensor_model_parallel_size: 2", "pipeline_model_parallel_size: 4", "virtual_pipeline_model_parallel_size: 5",
#     "context_parallel_size: 1" (the file name says cp2: the config is used), "ub_tp_comm_overlap: true", "num_nodes: 8".
#  G1 .../qwen2-5-32b/logs/*.log @9e10748b (tp1; ids 34529997519 / 34702721722 / 34420442826) and @779bb30b (tp2; ids
#     34866735734 / 34976461805 / 34684825446): "override_vocab_size: 152064", "num_layers: 64", "hidden_size: 5120",
#     "ffn_hidden_size: 27648", "num_attention_heads: 40", "num_query_groups: 8", "bias: false", "fp8: false",
#     "encoder_seq_length: 4096", "global_batch_size: 512".
#  G1 .../qwen2-5-7b/logs/qwen2-5-7b-{8,16}gpu-... @1e6e99bc / @a7ca5559 (ids 34529991693 / 34412154743): "num_layers:
#     28", "hidden_size: 3584", "ffn_hidden_size: 18944", "num_attention_heads: 28", "num_query_groups: 4",
#     "micro_batch_size: 4".
#  G1 .../qwen3-30b/logs/qwen3-30b-{16,32}gpu-tp1-pp1-cp1-vp1-ep8-gbs256-mbs4.log @6cff69e4 (ids 34324242736 /
#     34519824546): "moe_token_dispatcher_type: alltoall", "moe_pad_expert_input_to_capacity: True",
#     "moe_expert_capacity_factor: 1.0", "expert_model_parallel_size: 8", "fp8: true", "fp8_params: true".
#  G2 training/a3mega/gpt3-175b/nemo-pretraining-gke/README.md @19794be3 (id 34322558557): "step": 47,
#     "consumed_samples": 98304, "train_step_timing in s": 25.115550994873047, "--batch_size 2048 --num_accelerators 256
#     --accelerator_type h100 --precision fp8"; config a3mega/nemo-configs/gpt3-175b-256gpus-fp8.yaml @c72e38da: TP4 PP8
#     VP2, SP, ub_tp_comm_overlap false, dropout 0.1 (priced without, as the earlier NeMo GPT-3 rows).
#  G2 a3mega/llama3-70b README @2a1f3e49: "step": 36, "consumed_samples": 37888, 45.81364059448242, --batch_size 1024,
#     --num_accelerators 128 (the README default; 512 would put the planner at 3.8x); llama3-70b-fp8.yaml @822113d3:
#     TP4 PP4 VP5 CP2. a3mega/llama3-1-70b README @0355c388: "step": 37, 77824, 67.82038879394531, bf16, 256 GPUs; the
#     config it names is not stored: src/frameworks/nemo-configs/llama3.1-70b-256gpus-bf16.yaml @3a1db077 (TP4 PP4 VP4
#     CP2) used [B].
#  G2 a3ultra/llama-3.1-70b README @1a3020bb: "step": 15, 16384.0, 20.021318435668945, fp8, 256 H200; config TP2 PP4
#     VP20, fp8_params. a3ultra/mixtral-8x7b README @19794be3: "step": 26, 27648, 2.7396187782287598, bf16, 256; config
#     @78012f93 EP8 mbs 2, moe_grouped_gemm false, capacity 1.0 padded. a3ultra/llama-3.1-405b README @1a3020bb:
#     "step": 16, 34272.0, 92.28738164901733, fp8, 576; config @0e8ade8c TP8 PP9 VP14, num_query_groups 16,
#     overlap_p2p_comm false.
#  G2 a4/llama3-1-70b README @0211dc17: "step": 11, 24576.0, 19.954481744766234, fp8, 256 B200; config TP2 PP4 VP20,
#     ub_tp_comm_overlap true. a4/mixtral-8x7b README @0211dc17: "step": 38, 39936.0, 1.0826486110687257, fp8, 256; EP8
#     mbs 4, grouped GEMM. a4/llama3-1-405b README @19794be3: "step": 12, 26208.0, 118.18969259262084, fp8, 224;
#     config @534ed019 TP4 PP14 VP9 CP2, num_query_groups 16, ub_tp_comm_overlap true.
#  Where README tool examples offer fp8 and bf16 configs the tool example's fp8 is taken (priced as bf16 afterwards
#  they came out 0.57-0.79: fp8 is the consistent reading).

_S57_M = MODELS_DIR
_S57_L3_8B = _S57_M + "nemo-llama3-8b-gpt2vocab.config.json"
_S57_L3_70B = _S57_M + "nemo-llama3-70b-gpt2vocab.config.json"
_S57_L31_405B = _S57_M + "nemo-llama3.1-405b-kv16-gpt2vocab.config.json"
_S57_Q25_32B = _S57_M + "nemo-qwen2.5-32b-nobias.config.json"
_S57_Q25_7B = _S57_M + "nemo-qwen2.5-7b-nobias.config.json"
_S57_MIX_GPT2 = _S57_M + "nemo-mixtral-8x7b-gpt2vocab.config.json"


def _S57_step(summary: list[float]) -> float:
    """G1 rule: median of entries 10..19 of NeMo's closing train_step_timing list."""
    return statistics.median(summary[10:20])


def _S57_tps(seq: int, gbs: int, step_s: float, n: int) -> float:
    return round(seq * gbs / step_s / n, 1)


def _S57_il(tp, pp, vp, cp=1, tp_overlap=False, mbs=1, **kw):
    d = dict(tp=tp, pp=pp, cp=cp, zero_stage=1, microbatch_size=mbs, recompute="none", **kw)
    if tp > 1:
        d.update(sp=True, tp_overlap=tp_overlap)
    if pp > 1 and vp and vp > 1:
        d.update(schedule="interleaved", virtual_stages=vp)
    return d


# ---- G1: full logs, A4 (8 x B200 per VM, 8 x 400 Gb/s RoCE: the b200 preset's 50 GB/s per GPU), NeMo 25.04 (NeMo 1
# launcher, megatron_gpt / mcore), GPT-2 BPE tokenizer unless override_vocab_size.
_S57_S = {  # closing "train_step_timing in s: [...]" lists, verbatim
    "l3_8b": [21.37, 12.82, 9.98, 8.56, 7.71, 4.31, 4.32, 4.32, 4.33, 4.33, 4.33, 4.33, 4.33, 4.33, 4.33, 4.33, 4.33,
              4.33, 4.33, 4.33],
    "l3_70b": [44.85, 24.77, 18.06, 14.72, 12.71, 4.68, 4.69, 4.7, 4.7, 4.71, 4.71, 4.71, 4.7, 4.71, 4.71, 4.7, 4.7,
               4.69, 4.68, 4.68],
    "q32_16_tp1": [41.74, 33.04, 30.13, 28.68, 27.8, 24.32, 24.33, 24.32, 24.33, 24.34, 24.34, 24.33, 24.34, 24.34,
                   24.34, 24.34, 24.35, 24.35, 24.35, 24.35],
    "q32_16_tp2": [52.33, 39.9, 35.75, 33.68, 32.44, 27.46, 27.47, 27.47, 27.47, 27.48, 27.49, 27.49, 27.5, 27.51,
                   27.51, 27.5, 27.5, 27.5, 27.5, 27.48],
    "q32_32_tp1": [39.03, 25.68, 21.23, 19.01, 17.68, 12.34, 12.35, 12.35, 12.35, 12.35, 12.35, 12.36, 12.36, 12.35,
                   12.36, 12.36, 12.36, 12.36, 12.36, 12.36],
    "q32_32_tp2": [40.98, 27.18, 22.6, 20.29, 18.92, 13.41, 13.41, 13.41, 13.41, 13.42, 13.41, 13.43, 13.43, 13.44,
                   13.44, 13.45, 13.45, 13.45, 13.45, 13.45],
    "q32_64_tp1": [25.48, 15.94, 12.77, 11.18, 10.23, 6.42, 6.43, 6.43, 6.43, 6.43, 6.43, 6.43, 6.43, 6.44, 6.43, 6.43,
                   6.42, 6.42, 6.42, 6.43],
    "q32_64_tp2": [34.69, 20.67, 16.02, 13.69, 12.29, 6.7, 6.71, 6.71, 6.72, 6.72, 6.73, 6.73, 6.73, 6.73, 6.73, 6.73,
                   6.73, 6.73, 6.73, 6.73],
    "q7_8": [47.53, 29.31, 23.25, 20.21, 18.39, 11.1, 11.11, 11.1, 11.1, 11.1, 11.11, 11.11, 11.12, 11.12, 11.12, 11.12,
             11.11, 11.11, 11.11, 11.12],
    "q7_16": [44.84, 25.93, 19.63, 16.48, 14.59, 7.04, 7.05, 7.05, 7.05, 7.05, 7.05, 7.05, 7.04, 7.04, 7.05, 7.05, 7.05,
              7.05, 7.05, 7.05],
    "q3_16": [22.71, 13.35, 10.2, 8.63, 7.69, 3.93, 3.92, 3.92, 3.92, 3.93, 3.93, 3.93, 3.93, 3.93, 3.93, 3.93, 3.93,
              3.93, 3.93, 3.93],
    "q3_32": [20.49, 11.28, 8.19, 6.64, 5.72, 2.03, 2.01, 2.02, 2.02, 2.01, 2.02, 2.02, 2.02, 2.03, 2.03, 2.03, 2.03,
              2.03, 2.03, 2.02],
}
_S57_G1 = "gpu-recipes A4 custom log (NeMo 25.04, B200)"
_S57_MOE_CF1 = "+moe_capacity_factor=1.0"
S57_GPU_RECIPES_LOGS = (
    (f"[B: GPT-2 vocab 50304] {_S57_G1}: Llama 3 8B shape FP8 (fp8_params), DP8 mbs2, seq 8192, GBS 128, 8 GPUs",
     _S57_L3_8B, "B200", "megatron", "fp8-params", 8, 8192, 128, _S57_il(1, 1, None, mbs=2), _S57_tps(8192, 128, _S57_step(_S57_S["l3_8b"]), 8),
     None),
    (f"[B: GPT-2 vocab 50304; CP1 per config, file name says cp2] {_S57_G1}: Llama 3 70B shape FP8 (fp8_params) TP2 PP4 VP5, "
     f"seq 8192, GBS 128, 64 GPUs", _S57_L3_70B, "B200", "megatron", "fp8-params", 64, 8192, 128,
     _S57_il(2, 4, 5, tp_overlap=True), _S57_tps(8192, 128, _S57_step(_S57_S["l3_70b"]), 64), None),
    *((f"[B: no qkv bias as NeMo config; {tag}] {_S57_G1}: Qwen2.5-32B shape BF16 TP{tp} PP2 VP{vp} mbs{mbs}, seq 4096, "
       f"GBS 512, {n} GPUs", _S57_Q25_32B, "B200", "megatron", "bf16-mixed", n, 4096, 512,
       _S57_il(tp, 2, vp, tp_overlap=tp > 1, mbs=mbs), _S57_tps(4096, 512, _S57_step(_S57_S[key]), n), None)
      for key, n, tp, vp, mbs, tag in (
          ("q32_16_tp1", 16, 1, 32, 1, "num_nodes 2 read"),
          ("q32_16_tp2", 16, 2, 32, 1, "num_nodes 2 read"),
          ("q32_32_tp1", 32, 1, 32, 1, "4 nodes read; bf16 as its siblings"),
          ("q32_32_tp2", 32, 2, 4, 2, "num_nodes 4 read"),
          ("q32_64_tp1", 64, 1, 32, 1, "config from run name; bf16 as its siblings"),
          ("q32_64_tp2", 64, 2, 8, 2, "num_nodes 8 read"))),
    *((f"[B: no qkv bias as NeMo config] {_S57_G1}: Qwen2.5-7B shape BF16 DP{n} mbs4, seq 4096, GBS 512, {n} GPUs",
       _S57_Q25_7B, "B200", "megatron", "bf16-mixed", n, 4096, 512, _S57_il(1, 1, None, mbs=4),
       _S57_tps(4096, 512, _S57_step(_S57_S[key]), n), None)
      for key, n in (("q7_8", 8), ("q7_16", 16))),
    *((f"[B: {tag}] {_S57_G1}: Qwen3-30B-A3B FP8 (fp8_params) EP8 mbs4, token drop CF1 padded, alltoall, seq 4096, "
       f"GBS 256, {n} GPUs", "qwen3-30b-a3b", "B200", "megatron", "fp8-params" + _S57_MOE_CF1, n, 4096, 256,
       dict(_S57_il(1, 1, None, mbs=4), ep=8), _S57_tps(4096, 256, _S57_step(_S57_S[key]), n), None)
      for key, n, tag in (("q3_16", 16, "config read; run name says pp2 ep4, values pp1 ep8"),
                          ("q3_32", 32, "config from run name, as its 16-GPU sibling"))),
)

# ---- G2: one DLLogger step each (example entries in recipe READMEs). A3 Mega = gcp-a3-mega cluster file (25 GB/s per
# GPU, GPUDirect-TCPXO); A3 Ultra = h200 preset (8 x 400 Gb/s RoCE); A4 = b200 preset.
_S57_G2 = "gpu-recipes README DLLogger example"
_S57_A3M = "H100-SXM (GCP A3 Mega)"
S57_GPU_RECIPES_README = (
    (f"[B: one step; dropout 0.1 in config, priced without] {_S57_G2} A3 Mega (NeMo 24.07): GPT-3 175B FP8 TP4 PP8 VP2, "
     f"seq 2048, GBS 2048, 256 GPUs", "gpt3-175b", _S57_A3M, "megatron", "fp8-mixed", 256, 2048, 2048,
     _S57_il(4, 8, 2), _S57_tps(2048, 2048, 25.115550994873047, 256), None),
    (f"[B: one step; 128 GPUs = README default; GPT-2 vocab] {_S57_G2} A3 Mega (NeMo 24.07): Llama 3 70B FP8 TP4 PP4 VP5 CP2, "
     f"seq 8192, GBS 1024, 128 GPUs", _S57_L3_70B, _S57_A3M, "megatron", "fp8-mixed", 128, 8192, 1024,
     _S57_il(4, 4, 5, cp=2), _S57_tps(8192, 1024, 45.81364059448242, 128), None),
    (f"[B: one step; config = src/frameworks/nemo-configs/llama3.1-70b-256gpus-bf16.yaml; GPT-2 vocab] {_S57_G2} A3 Mega "
     f"(NeMo 24.07): Llama 3.1 70B BF16 TP4 PP4 VP4 CP2, seq 8192, GBS 2048, 256 GPUs", _S57_L3_70B, _S57_A3M, "megatron",
     "bf16-mixed", 256, 8192, 2048, _S57_il(4, 4, 4, cp=2), _S57_tps(8192, 2048, 67.82038879394531, 256), None),
    (f"[B: one step; GPT-2 vocab] {_S57_G2} A3 Ultra (NeMo 24.07): Llama 3.1 70B FP8 (fp8_params) TP2 PP4 VP20, seq 8192, "
     f"GBS 1024, 256 H200", _S57_L3_70B, "H200", "megatron", "fp8-params", 256, 8192, 1024, _S57_il(2, 4, 20),
     _S57_tps(8192, 1024, 20.021318435668945, 256), None),
    (f"[B: one step; GPT-2 vocab; moe_grouped_gemm false] {_S57_G2} A3 Ultra (NeMo 24.07): Mixtral 8x7B BF16 EP8 mbs2, token "
     f"drop CF1 padded, seq 4096, GBS 1024, 256 H200", _S57_MIX_GPT2, "H200", "megatron", "bf16-mixed" + _S57_MOE_CF1, 256, 4096,
     1024, dict(_S57_il(1, 1, None, mbs=2), ep=8), _S57_tps(4096, 1024, 2.7396187782287598, 256), None),
    (f"[B: one step; fp8 per README tool example; 16 KV groups, GPT-2 vocab] {_S57_G2} A3 Ultra (NeMo 24.12): Llama 3.1 405B "
     f"FP8 TP8 PP9 VP14, seq 8192, GBS 2016, 576 H200", _S57_L31_405B, "H200", "megatron+pp_p2p_overlap=False", "fp8-mixed",
     576, 8192, 2016, _S57_il(8, 9, 14), _S57_tps(8192, 2016, 92.28738164901733, 576), None),
    (f"[B: one step; fp8 per README tool example; GPT-2 vocab] {_S57_G2} A4 (NeMo 25.02): Llama 3.1 70B FP8 TP2 PP4 VP20, "
     f"seq 8192, GBS 2048, 256 B200", _S57_L3_70B, "B200", "megatron", "fp8-mixed", 256, 8192, 2048,
     _S57_il(2, 4, 20, tp_overlap=True), _S57_tps(8192, 2048, 19.954481744766234, 256), None),
    (f"[B: one step; fp8 per README tool example; GPT-2 vocab] {_S57_G2} A4 (NeMo 25.02): Mixtral 8x7B FP8 EP8 mbs4, token "
     f"drop CF1 padded, seq 4096, GBS 1024, 256 B200", _S57_MIX_GPT2, "B200", "megatron", "fp8-mixed" + _S57_MOE_CF1, 256, 4096,
     1024, dict(_S57_il(1, 1, None, mbs=4), ep=8), _S57_tps(4096, 1024, 1.0826486110687257, 256), None),
    (f"[B: one step; fp8 per README tool example; 16 KV groups, GPT-2 vocab] {_S57_G2} A4 (NeMo 25.02): Llama 3.1 405B FP8 "
     f"TP4 PP14 VP9 CP2, seq 8192, GBS 2016, 224 B200", _S57_L31_405B, "B200", "megatron", "fp8-mixed", 224, 8192, 2016,
     _S57_il(4, 14, 9, cp=2, tp_overlap=True), _S57_tps(8192, 2016, 118.18969259262084, 224), None),
)

SCOUTED_2026_12BI = S57_GPU_RECIPES_LOGS + S57_GPU_RECIPES_README


# Fifty-seventh scouting pass, second scout (2026-12, Mixture-of-Experts; never fitted on; SCOUTED_2026_12BJ). Names
# carry _S57B_. Row format as PUBLIC_CHECKS. Model files new in this pass: benchmarks/models/{qwen2-57b-a14b,
# mixtral-8x22b-g8t8, llama3-8x70b-e8t2, skywork-moe-146b}.config.json.
#
# Sources (quotes and arithmetic in rows.md):
#   F  Liu, Yan et al. (NVIDIA) 2025, "MoE Parallel Folding: Heterogeneous Parallelism Mappings for Efficient
#      Large-Scale MoE Model Training with Megatron Core", arXiv 2504.14960; stored Markdown transcriptions in the code
#      index: main text id 62107520083 (also id 62437099677), appendix (Tables 3-5) id 62089996986. Eos DGX H100
#      (8 x 400 Gb/s IB per node = the h100-sxm preset's 50 GB/s per GPU), PyTorch 2.5.0, CUDA 12.6, BF16, token drop
#      with capacity factor 1 "for benchmarking", every method implemented in Megatron-Core.
#   S  Skywork-MoE technical report (Wei et al. 2024, arXiv 2406.06563), Appendix B.3, via a stored transcription (code
#      index id 62093249470): 1,536 A800, PP12 x TP/EP4 (EDP) x DP32 ZeRO-1, "a throughput of 690 tokens per GPU per
#      second" at "38% MFU".
#
# Selection rules (fixed BEFORE any row was priced; no row dropped afterwards):
#   F1  Table 3 (GBS 256, seq 4096; the appendix: "the global batch size was fixed at 256, and the sequence length was
#       fixed at 4096"): every row of method MCore, MCore w/ Folding or TP+EP+DP with a numeric MFU (11 rows). FSDP and
#       FSDP+EP rows are not taken: ZeRO-3 baselines whose layout columns do not parse into a layout (an "FSDP" row
#       printing TP 8, and no statement of how FSDP+EP places EP).
#   F2  Table 4 (strong scaling, GBS 1024 per Sec. 4.3, seq 4096, "All parallel configurations are the same as those
#       identified in the performance experiments", i.e. Table 3's): for each MCore and MCore-w/-Folding series the
#       smallest and the largest GPU count printed (8 series, 16 rows), GPU counts as the transcription prints them.
#   F3  Table 2 (Mixtral 8x22B, 128 H100, FP8 delayed scaling): the two FP8 rows, TFLOP/s as printed, with the Table 3
#       Mixtral layouts (Table 2's BF16 458.3 / 487.7 TFLOP/s are Table 3's 46.3% / 49.3% x 989.5, so GBS 256).
#   F4  Table 5 (context scaling, layouts and GBS printed): the Mixtral-8x22B block, smallest and largest GPU count of
#       each series (4 rows). The Qwen2-57B-A14B block repeats the Mixtral block's cells value for value (a copy in the
#       paper or the transcription) and is not taken.
#   S1  The one Skywork-MoE production rate (1 row).
#
# Conversion (F): tokens/s/GPU = MFU x 989.5e12 / F(model, s), the paper's peak ("Each GPU achieves a peak
# half-precision throughput of 989.5 TFLOP/s"; Table 2's TFLOP/s / 989.5 reproduce Table 3's MFU), F = Megatron-LM's
# num_floating_point_operations of the MCore 0.10-0.11 era (stored copy id 18457118733; no causal halving):
#   F = 12 L h^2 [ (1 + g/a + s/h) (q/h) + (f_e/h) k 3/2 + (f_s/h) 3/2 + V / (2 L h) ]
# (f_e the routed expert width, k top-k, f_s the shared-expert width, V the vocabulary, unpadded here: Megatron pads
# to 128 x TP, +0.1% to +0.6% of F).
#
# Assumptions for F (all rows [B]): micro batch 1 and one layer per virtual pipeline stage (VP = L / PP) as the same
# team's "Reference Best Parallel Mapping" of the Megatron-LM MoE README (Mixtral 8x7B PP4 VP8, 8x22B PP8 VP7, MBS 1);
# distributed optimizer (ZeRO-1; the paper says so for TP+EP+DP); sequence parallelism and TP communication overlap
# with TP > 1 (the README's "Enable --tp-comm-overlap when TP>1"); no recompute; alltoall dispatcher; "MCore" rows keep
# the experts on the attention TP split (etp = tp, EP inside DP: the pre-folding mapping); Folding rows etp = 1 (the
# Llama3-8x70B Folding row prints no ETP: 1 assumed); Llama3-8x70B top-2 (the paper does not state k); Mixtral-8x22B
# and G8T8 vocabulary 32768 (the HF config; NVIDIA's own yaml uses 32000).

from shardplan.parallel import balanced_split as _S57B_balanced_split  # noqa: E402

_S57B_QWEN57 = MODELS_DIR + "qwen2-57b-a14b.config.json"  # 57,408,658,944 params (HF card: 57B / A14B)
_S57B_G8T8 = MODELS_DIR + "mixtral-8x22b-g8t8.config.json"  # 140,649,338,880
_S57B_L8X70 = MODELS_DIR + "llama3-8x70b-e8t2.config.json"  # 465,159,069,696 (top-2 assumed)
_S57B_SKY = MODELS_DIR + "skywork-moe-146b.config.json"  # 146,356,167,168 (report: 146B / 22B active)
_S57B_PEAK = 989.5e12  # the paper's H100 BF16 peak


def _S57B_megatron_2025_flops(L, h, a, g, s, fe, k, V, fs=0, q=None):
    """Megatron-LM num_floating_point_operations per token (MCore 0.10-0.11, non-MLA branch, no causal halving)."""
    q = q or h
    return 12 * L * h * h * ((1 + g / a + s / h) * (q / h) + (fe / h) * k * 1.5 + (fs / h) * 1.5 + V / (2 * L * h))


#: FLOPs per token at seq s, per model (shapes as the config files above)
def _S57B_F(model: str, s: int) -> float:
    if model == "mixtral-8x22b":
        return _S57B_megatron_2025_flops(56, 6144, 48, 8, s, 16384, 2, 32768)
    if model == "g8t8":
        return _S57B_megatron_2025_flops(56, 6144, 48, 8, s, 2048, 8, 32768)
    if model == "qwen57":
        return _S57B_megatron_2025_flops(28, 3584, 28, 4, s, 2560, 8, 151936, fs=20480)
    if model == "l8x70":
        return _S57B_megatron_2025_flops(80, 8192, 64, 8, s, 28672, 2, 128256)
    raise KeyError(model)


_S57B_MODEL_FILE = {"mixtral-8x22b": "mixtral-8x22b", "g8t8": _S57B_G8T8, "qwen57": _S57B_QWEN57, "l8x70": _S57B_L8X70}
_S57B_LAYERS = {"mixtral-8x22b": 56, "g8t8": 56, "qwen57": 28, "l8x70": 80}
_S57B_NAME = {"mixtral-8x22b": "Mixtral-8x22B", "g8t8": "Mixtral-8x22B-G8T8", "qwen57": "Qwen2-57B-A14B",
        "l8x70": "Llama3-8x70B (top-2 assumed)"}


def _S57B_lay(key, tp, ep, pp, etp=None, cp=1):
    """Megatron-Core layout: ZeRO-1, MBS 1, SP + TP overlap with tp > 1, one layer per virtual stage."""
    d = dict(tp=tp, cp=cp, pp=pp, ep=ep, zero_stage=1, microbatch_size=1, recompute="none", moe_dispatcher="alltoall")
    if etp is not None:
        d["etp"] = etp
    if tp > 1:
        d.update(sp=True, tp_overlap=True)
    if pp > 1:
        vp = _S57B_LAYERS[key] // pp
        if vp > 1:
            d.update(schedule="interleaved", virtual_stages=vp)
    return d


_S57B_CF1 = "bf16-mixed+moe_capacity_factor=1.0"
_S57B_FP8 = "fp8-mixed+moe_capacity_factor=1.0"
_S57B_H100 = "H100-SXM"

# Table 3 layouts (method -> (tp, ep, pp, etp)); GPUs; MFU (%) as printed. Columns "GPUs | CP | TP | EP | PP | ETP".
_S57B_T3 = (
    ("mixtral-8x22b", "MCore", 128, (2, 4, 8, None), 46.3),
    ("mixtral-8x22b", "MCore w/ Folding", 128, (2, 8, 8, 1), 49.3),
    ("mixtral-8x22b", "TP+EP+DP", 128, (4, 8, 1, None), 36.6),
    ("qwen57", "MCore", 64, (2, 4, 4, None), 35.3),
    ("qwen57", "MCore w/ Folding", 64, (2, 4, 4, 1), 39.0),
    ("qwen57", "TP+EP+DP", 64, (4, 4, 1, None), 23.1),
    ("g8t8", "MCore", 128, (2, 8, 8, None), 17.1),
    ("g8t8", "MCore w/ Folding", 128, (4, 8, 8, 1), 28.8),
    ("g8t8", "TP+EP+DP", 128, (8, 8, 1, None), 8.7),
    ("l8x70", "MCore", 256, (8, 4, 8, None), 38.8),
    ("l8x70", "MCore w/ Folding", 256, (8, 8, 16, 1), 41.6),
)
_S57B_LAYOUT = {(k, meth): l for k, meth, _, l, _ in _S57B_T3}

# Table 4 (GBS 1024): (model, method, GPUs, MFU %), smallest and largest printed GPU count of each series.
_S57B_T4 = (
    ("mixtral-8x22b", "MCore", 128, 49.4), ("mixtral-8x22b", "MCore", 1024, 42.3),
    ("mixtral-8x22b", "MCore w/ Folding", 128, 52.2), ("mixtral-8x22b", "MCore w/ Folding", 1024, 44.9),
    ("qwen57", "MCore", 64, 36.2), ("qwen57", "MCore", 1024, 29.8),
    ("qwen57", "MCore w/ Folding", 64, 39.9), ("qwen57", "MCore w/ Folding", 1024, 33.4),
    ("g8t8", "MCore", 128, 19.8), ("g8t8", "MCore", 1024, 13.4),
    ("g8t8", "MCore w/ Folding", 128, 30.0), ("g8t8", "MCore w/ Folding", 1024, 25.5),
    ("l8x70", "MCore", 256, 40.1), ("l8x70", "MCore", 1024, 39.1),
    ("l8x70", "MCore w/ Folding", 128, 43.7), ("l8x70", "MCore w/ Folding", 1024, 41.5),
)

# Table 2 (128 H100, Mixtral 8x22B): FP8 delayed scaling, model TFLOP/s per GPU as printed.
_S57B_T2 = (("MCore", 575.1), ("MCore w/ Folding", 631.7))

# Table 5, Mixtral-8x22B block: (method, GPUs, seq, CP, TP, EP, PP, ETP, GBS, MFU %), smallest / largest of each series.
_S57B_T5 = (
    ("MCore", 128, 16384, 4, 2, 4, 8, None, 1024, 45.3),
    ("MCore", 1024, 131072, 16, 4, 8, 8, None, 128, 38.2),
    ("MCore w/ Folding", 128, 16384, 4, 2, 8, 8, 1, 1024, 47.6),
    ("MCore w/ Folding", 1024, 131072, 8, 8, 8, 8, 1, 128, 42.9),
)


def _S57B_fold_label(meth):
    return {"MCore": "MCore (etp=tp)", "MCore w/ Folding": "MCore w/ Folding", "TP+EP+DP": "TP+EP+DP (no PP)"}[meth]


def _S57B_lay_txt(tp, ep, pp, etp, cp=1):
    return f"CP{cp} TP{tp} EP{ep} PP{pp}" + (f" ETP{etp}" if etp else "")


S57B_F_ROWS = (
    *((f"[B: MBS1, VP=L/PP, ZeRO-1, TP overlap, no AC assumed] MoE Parallel Folding Table 3: {_S57B_NAME[k]} {_S57B_fold_label(m)} "
       f"{_S57B_lay_txt(*l)}, CF1 token drop, seq 4096, GBS 256, {n} H100 (MFU {mfu}%)",
       _S57B_MODEL_FILE[k], _S57B_H100, "megatron", _S57B_CF1, n, 4096, 256, _S57B_lay(k, *l), round(mfu / 100 * _S57B_PEAK / _S57B_F(k, 4096), 1), None)
      for k, m, n, l, mfu in _S57B_T3),
    *((f"[B: layout = Table 3's; MBS1, VP=L/PP, ZeRO-1, TP overlap, no AC assumed] MoE Parallel Folding Table 4: "
       f"{_S57B_NAME[k]} {_S57B_fold_label(m)} {_S57B_lay_txt(*_S57B_LAYOUT[(k, m)])}, CF1, seq 4096, GBS 1024, {n} H100 (MFU {mfu}%)",
       _S57B_MODEL_FILE[k], _S57B_H100, "megatron", _S57B_CF1, n, 4096, 1024, _S57B_lay(k, *_S57B_LAYOUT[(k, m)]),
       round(mfu / 100 * _S57B_PEAK / _S57B_F(k, 4096), 1), None)
      for k, m, n, mfu in _S57B_T4),
    *((f"[B: FP8 delayed scaling priced fp8-mixed; GBS 256 and layout of Table 3] MoE Parallel Folding Table 2: "
       f"Mixtral-8x22B {_S57B_fold_label(m)} FP8 {_S57B_lay_txt(*_S57B_LAYOUT[('mixtral-8x22b', m)])}, CF1, seq 4096, 128 H100 "
       f"({tf} TFLOP/s)", "mixtral-8x22b", _S57B_H100, "megatron", _S57B_FP8, 128, 4096, 256,
       _S57B_lay("mixtral-8x22b", *_S57B_LAYOUT[("mixtral-8x22b", m)]), round(tf * 1e12 / _S57B_F("mixtral-8x22b", 4096), 1), None)
      for m, tf in _S57B_T2),
    *((f"[B: MBS1, VP=L/PP, ZeRO-1, TP overlap, no AC assumed; CP ring] MoE Parallel Folding Table 5: Mixtral-8x22B "
       f"{_S57B_fold_label(m)} {_S57B_lay_txt(tp, ep, pp, etp, cp)}, CF1, seq {s}, GBS {gbs}, {n} H100 (MFU {mfu}%)",
       "mixtral-8x22b", _S57B_H100, "megatron", _S57B_CF1, n, s, gbs, _S57B_lay("mixtral-8x22b", tp, ep, pp, etp, cp),
       round(mfu / 100 * _S57B_PEAK / _S57B_F("mixtral-8x22b", s), 1), None)
      for m, n, s, cp, tp, ep, pp, etp, gbs, mfu in _S57B_T5),
)

# ---- S: Skywork-MoE, 1,536 A800 (800 Gb/s RoCE per 8-GPU node = 12.5 GB/s per GPU, as the Skywork-13B rows)

S57B_S_ROWS = (
    ("[B: GBS 2048 x 8192 assumed (Skywork-13B's 16M-token batch), MBS1, no AC, 1F1B, balanced routing; the uneven "
     "52-layer split as balanced_split] Skywork-MoE report App. B.3: 146B 16 experts top-2, PP12 TP4 EP4 (EDP: experts "
     "folded on the TP group, etp 1) DP32 ZeRO-1, seq 8192, 1,536 A800",
     _S57B_SKY, "A800+scale_out_bandwidth=12500000000", "megatron-legacy", "bf16-mixed-fp32-grads", 1536, 8192, 2048,
     dict(tp=4, sp=True, pp=12, pp_layers=_S57B_balanced_split(52, 12), ep=4, etp=1, zero_stage=1, microbatch_size=1,
          recompute="none", moe_dispatcher="alltoall"), 690.0, None),
)


SCOUTED_2026_12BJ = S57B_F_ROWS + S57B_S_ROWS


# Fifty-eighth scouting pass (2026-12, Mixture-of-Experts; never fitted on; SCOUTED_2026_12BK). Names carry _S58_.
# Row format as PUBLIC_CHECKS. Model files new in this pass: benchmarks/models/{megascale-moe-internal-352b,
# deepspeed-moe-1.3b-moe128}.json.
#
# Sources (quotes and arithmetic in the scout's notes, summarised in docs/accuracy.md):
#   M  Jin et al. 2025, "MegaScale-MoE: Large-Scale Communication-Efficient Training of Mixture-of-Experts Models in
#      Production", arXiv 2505.11432 (stored transcription, code-index id 62112311081). Sec. 6.1: stock Megatron-LM at
#      commit f1f03922 "adopts TP within each node ... configured with a PP size of 15", "a uniform TP size across all
#      components" (experts tensor-split, etp = tp = 8, ep 1), "Sequence length is 8,192", global batch 720, H800.
#      Table 3 (strong scaling): GPUs, iteration time (s), throughput (tokens/s).
#   D  Rajbhandari et al. 2022, "DeepSpeed-MoE", arXiv 2201.05596, Table 3: "1.3B+MoE-128 | 372" training samples
#      per second on 128 A100; the recipe microsoft/Megatron-DeepSpeed examples_deepspeed/MoE/
#      ds_pretrain_gpt_1.3B_MoE128.sh @ 8d90491e: seq 2048, global batch 512, EP = GPUs, capacity factor 1.0 with
#      token drop, activation checkpointing, ZeRO-1, bf16.
#
# Selection rules (fixed BEFORE any row was priced; no row dropped afterwards): M1 every Megatron-LM row of Table 3
# (5 rows); D1 the one MoE row of DeepSpeed-MoE's Table 3. MegaScale-MoE's own rows (a system the planner has no
# profile for) are not taken. Conversion: M tokens/s/GPU = printed tokens/s / GPUs (151.1k / 240 = 629.6); D 372 x
# 2048 / 128 = 5,952. The 352B model file carries one shared expert: Table 2's shapes give 341.3B where the paper says
# 352B, and with the shared expert the paper's own MFU (32.48% / 27.89%) follows from its throughput (a correction
# from the source's numbers, found after pricing, not from the planner's error).

_S58_MS352 = MODELS_DIR + "megascale-moe-internal-352b.json"    # 351,860,133,888 params (paper: 352B)
_S58_DS13 = MODELS_DIR + "deepspeed-moe-1.3b-moe128.json"       # 52,471,429,120 params (paper: 52B)
# (GPUs, iteration time s, printed throughput tokens/s), Table 3's Megatron-LM block
_S58_T3 = ((240, 39.94, 151.1e3), (480, 19.56, 301.1e3), (720, 13.70, 430.5e3), (960, 10.82, 550.2e3),
           (1440, 7.90, 746.6e3))

S58_M_ROWS = tuple(
    (f"[B: EP1/ETP8, SP, ZeRO-1, MBS1, 1F1B, no AC, no TP overlap assumed; H800 preset network] MegaScale-MoE "
     f"Table 3: stock Megatron-LM (f1f03922), Internal-352B (32 experts top-3, one shared) TP8 PP15 DP{n // 120}, "
     f"seq 8192, GBS 720, {n} H800 ({tps / 1e3:.1f}k tokens/s, {it} s/iter)",
     _S58_MS352, "H800", "megatron", "bf16-mixed", n, 8192, 720,
     dict(tp=8, sp=True, pp=15, ep=1, zero_stage=1, microbatch_size=1, recompute="none"), round(tps / n, 1), None)
    for n, it, tps in _S58_T3)

S58_D_ROWS = (
    ("[B: A100 40GB (Azure ND A100 v4) assumed; MBS 4 = GBS/128 (the recipe's BATCH_SIZE=16 is for 8 GPUs); "
     "capacity factor 1.0, ZeRO-1, bf16, full AC as the recipe] DeepSpeed-MoE Table 3: 1.3B+MoE-128 (52B, top-1, "
     "MoE every other layer) DP128 EP128, seq 2048, GBS 512, 128 A100 (372 samples/s)",
     _S58_DS13, "A100 40GB", "deepspeed", "bf16-mixed+moe_capacity_factor=1.0", 128, 2048, 512,
     dict(ep=128, zero_stage=1, microbatch_size=4, recompute="full"), round(372 * 2048 / 128, 1), None),
)

SCOUTED_2026_12BK = S58_M_ROWS + S58_D_ROWS


# Fifty-eighth scouting pass, second scout (2026-12, dense long sequences; never fitted on; SCOUTED_2026_12BL). Names
# carry _S58B_. Row format as PUBLIC_CHECKS. Model files new in this pass: benchmarks/models/{distflashattn-llama-gqa,
# distflashattn-llama-33h-pad40, distflashattn-llama-33h-pad48, ulysses-gpt3-30b-s{8,16,32,64,128}k}.json.
#
# Sources (quotes and arithmetic summarised in docs/accuracy.md):
#   D  Li, Shao et al., "DISTFLASHATTN: Distributed Memory-efficient Attention for Long-context LLMs Training" (arXiv
#      2310.03294, COLM 2024), stored transcription (code-index id 70470730145). Table 1: seconds per iteration of
#      Megatron-LM (TP + sequence parallelism, "the same attention backend", FlashAttention-2) on 1x8 and 2x8 A100
#      80GB DGX boxes, 8K / 16K / 32K tokens per GPU, LLaMA-7B, LLaMA-GQA (8 KV heads, "replicate[d] to 32 heads" at
#      TP 16) and LLaMA-33H (padded to 40 / 48 heads as Megatron-LM pads them); Table 4: DeepSpeed-Ulysses on 2x8.
#   U  microsoft/Megatron-DeepSpeed examples_deepspeed/sequence_parallel/README.md, "GPT 30B (32 A100s on 4 nodes)":
#      DeepSpeed-Ulysses with ZeRO-3, TFLOPS per GPU at 8k-128k tokens; recipe ds_pretrain_gpt_30B_seq_parallel.sh
#      (--use-flash-attn-triton: FlashAttention v1's Triton kernel).
#
# Selection rules (fixed BEFORE any row was priced; no row dropped afterwards): D1 every Megatron-LM cell of Table 1
# for LLaMA-7B and LLaMA-GQA (12 rows); D2 its LLaMA-33H cells (6); D3 the four DeepSpeed-Ulysses cells of Table 4;
# U1 the README's five GPT-30B rows. Conversions: D tokens/s/GPU = per-GPU K x 1,024 / seconds per iteration (one
# sequence per iteration); U TFLOPS / Megatron-DeepSpeed's throughput_calculator FLOPs per token (checkpoint factor 4,
# attention without the causal half, vocabulary 50,304).
#
# Read after pricing, each from the sources' own statements rather than from the planner's error (the scout's headline
# readings, kept in its notes, differ on these three): (a) "a stable 100 Gbps Infiniband" between the two boxes is
# one 100 Gb/s link per GPU (12.5 GB/s), declared as a sensitivity before pricing: one link per box (1.56 GB/s per
# GPU) cannot carry TP 16's sequence-parallel traffic (about 384 GiB per step at 32K per GPU, ~33 s) in the 14.26 s
# that Table 1 measures for 2x8 at 8K per GPU; (b) the GQA rows at TP 16 replicate the KV heads, as the paper says
# (kv_replication; refused without it, as Megatron-LM refuses TP above the KV heads); (c) the U rows run the recipe's
# Triton kernel (attention_kernel=triton), not the profile's default FlashAttention-2.

_S58B_M = MODELS_DIR
_S58B_FW = "megatron-legacy+attention_kernel=fa2"
_S58B_PREC = "bf16-mixed-fp32-grads"
_S58B_HW = {1: "A100 80GB", 2: "A100 80GB+scale_out_bandwidth=12500000000"}  # (a): 100 Gb/s per GPU across the boxes
# Table 1 Megatron-LM cells: (nodes, per-GPU K, LLaMA-7B s, LLaMA-GQA s, LLaMA-33H s)
_S58B_T1 = ((1, 8, 6.81, 6.60, 8.37), (1, 16, 20.93, 20.53, 25.75), (1, 32, 72.75, 71.93, 90.21),
            (2, 8, 14.26, 14.21, 20.63), (2, 16, 43.44, 43.20, 62.78), (2, 32, 147.06, 146.38, 216.70))
# Table 4 DeepSpeed-Ulysses cells, all 2x8: (per-GPU K, Llama-7B s, Llama-33H s)
_S58B_T4 = ((16, 37.53, 56.63), (32, 134.09, 202.89))


def _s58b_d_row(name, model, nodes, k, t, group, kv_replication=False):
    n = 8 * nodes
    seq = k * 1024 * n
    lay = dict(dp=1, tp=n, sp=True, microbatch_size=1, recompute="full")
    if kv_replication:
        lay["kv_replication"] = True
    net = "" if nodes == 1 else ", 100 Gb/s per GPU (read after pricing)"
    return (f"[B: GBS 1, TP over all GPUs + SP, full AC, legacy Megatron + FA2, bf16{net}] DistFlashAttn Table 1 "
            f"({group}): Megatron-LM {name} TP{n}+SP, {nodes}x8 A100 80GB, {k}K/GPU = {seq // 1024}K total, {t} s/iter",
            model, _S58B_HW[nodes], _S58B_FW, _S58B_PREC, n, seq, 1, lay, round(seq / t / n, 1), None)


def _s58b_d_rows():
    d1, d2 = [], []
    for nodes, k, t7, tg, t33 in _S58B_T1:
        d1.append(_s58b_d_row("LLaMA-7B", "llama-2-7b", nodes, k, t7, "D1"))
        gqa = "LLaMA-GQA (kv 8" + (", replicated to 16 at TP 16, read after pricing)" if nodes == 2 else ")")
        d1.append(_s58b_d_row(gqa, _S58B_M + "distflashattn-llama-gqa.json", nodes, k, tg, "D1", nodes == 2))
        pad = 40 if nodes == 1 else 48
        d2.append(_s58b_d_row(f"LLaMA-33H (padded to {pad} heads)", _S58B_M + f"distflashattn-llama-33h-pad{pad}.json",
                              nodes, k, t33, "D2"))
    return tuple(d1), tuple(d2)


S58B_D1_ROWS, S58B_D2_ROWS = _s58b_d_rows()
S58B_D3_ROWS = tuple(
    (f"[B: GBS 1, ZeRO-3, full AC, bf16, 100 Gb/s per GPU (read after pricing)] DistFlashAttn Table 4 (D3): "
     f"DeepSpeed-Ulysses {name} SP16, 2x8 A100 80GB, {k}K/GPU = {k * 16}K total, {t} s/iter",
     model, _S58B_HW[2], "deepspeed", "bf16-mixed", 16, k * 1024 * 16, 1,
     dict(dp=1, cp=16, cp_comm="a2a", zero_stage=3, microbatch_size=1, recompute="full"),
     round(k * 1024 * 16 / t / 16, 1), None)
    for k, t7, t33 in _S58B_T4
    for name, model, t in (("Llama-7B", "llama-2-7b", t7),
                           ("Llama-33H (padded to 48 heads)", _S58B_M + "distflashattn-llama-33h-pad48.json", t33)))

# GPT-30B table: (seq K, global batch, sequence-parallel size, TFLOPS); 64 layers, hidden 6,144, vocabulary 50,304
_S58B_U = ((8, 16, 2, 142), (16, 8, 4, 135), (32, 4, 8, 139), (64, 2, 16, 133), (128, 1, 32, 132))


def _s58b_u_flops_per_token(s):
    """Megatron-DeepSpeed megatron/utils.py throughput_calculator per token, checkpoint_activations_factor 4:
    24 x 4 x L h^2 (1 + s / (6 h) + V / (16 L h)), L 64, h 6,144, V 50,304."""
    L, h, V = 64, 6144, 50304
    return 24 * 4 * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h))


S58B_U_ROWS = tuple(
    (f"[B: A100 40GB assumed, fp16 priced as fp16-mixed, the recipe's Triton flash kernel (read after pricing), GA 1] "
     f"Megatron-DeepSpeed sequence_parallel README (U1): GPT-3 30B DeepSpeed-Ulysses SP{sp} DP{32 // sp} ZeRO-3, "
     f"full AC, seq {k}k, GBS {gbs}, 32 A100 (4 nodes), {tf} TFLOPS",
     _S58B_M + f"ulysses-gpt3-30b-s{k}k.json", "A100 40GB", "deepspeed+attention_kernel=triton", "fp16-mixed", 32,
     k * 1024, gbs, dict(dp=32 // sp, cp=sp, cp_comm="a2a", zero_stage=3, microbatch_size=1, recompute="full"),
     round(tf * 1e12 / _s58b_u_flops_per_token(k * 1024), 1), None)
    for k, gbs, sp, tf in _S58B_U)

SCOUTED_2026_12BL = S58B_D1_ROWS + S58B_D2_ROWS + S58B_D3_ROWS + S58B_U_ROWS
