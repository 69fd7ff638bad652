"""Hardware presets. Every number carries its source in ``sources``.

Conventions (see :mod:`shardplan.specs.hardware`): FLOP/s are *dense* (datasheet sparse figure / 2);
GPU link bandwidths are one-way per GPU (datasheet bidirectional / 2); TPU ICI bandwidths are the
bidirectional bandwidth of one link, as the Scaling Book's collective formulas use them.
Capacities (``hbm_bytes``) are what the device reports where a source prints it (nvidia-smi ``memory.total`` in
MiB, rocm-smi's VRAM total in bytes: what the allocator can map), else the vendor's capacity in GiB (vendors' "GB" of
HBM are about GiB: the H200's "141GB" reports 143,771 MiB = 140.4 GiB, the MI300X's "192 GB" 191.7 GiB). The 80 GB /
40 GB / 32 GB / 96 GB / 64 GB parts keep the datasheet figure in GiB (an H100 SXM reports 81,559 MiB = 79.6 GiB, 0.4
GiB less; the allocator terms of the H100 grid were fitted with 80 GiB).

Efficiency factors are the fraction of peak that large operations reach in end-to-end training on
that hardware kind; they are fitted once per hardware kind against the published runs in
``shardplan/data/published_runs.csv`` (``benchmarks/accuracy.py``; docs/accuracy.md) and start
from the measurements quoted in the sources.
"""

from __future__ import annotations

from shardplan.specs.hardware import HardwareSpec

GiB = 2**30
MiB = 2**20
#: the sentence every device-reported capacity ends with
_DEVICE_TOTAL = ("; the runtime's own context and reserve come off it (HardwareSpec.runtime_reserve_bytes / "
                 "runtime_reserve_fraction, FrameworkProfile.context_bytes)")
_SB_GPU = "Scaling Book gpus.md (jax-ml/scaling-book, Aug 2025)"
_SB_TPU = "Scaling Book tpus.md (jax-ml/scaling-book, Feb 2025)"
_TPU7X = ("Google Cloud docs 'TPU7x (Ironwood)' (docs.cloud.google.com/tpu/docs/tpu7x, updated 2026-05-08: the spec "
          "table beside v5p and v6e, 'Dual-chiplet architecture') and jax-ml/jax jax/_src/pallas/mosaic/tpu_info.py "
          "(device_kind 'TPU7x', per TensorCore 2.31e15 // 2 bf16, 7.40e12 // 2 B/s HBM, 206e9 // 2 B)")
_NCCL = ("NCCL all-reduce bus bandwidth measured at large messages: H100 ~370 of 450 GB/s "
         "(Scaling Book gpus.md); A100 ~230 of 300 GB/s (NVIDIA DGX A100 user guide, nccl-tests)")
_IB = "InfiniBand/RoCE collective efficiency 0.85-0.9 (ezyang interactive guide SOURCES.md, estimate)"
_TPU_LAT = ("TPU ICI ~1 us per hop (Scaling Book sharding.md); no per-call NCCL base latency: XLA schedules ICI "
            "collectives inside the compiled step (collective_latency = 0)")
_LAT = ("NVLink ~5 us, InfiniBand ~20 us per ring step (Calculon system files; NVIDIA/nccl src/graph/tuning.cc "
        "hwLat Ring/Simple: NVLink 3.4 us, NET 14 us + the path's latency); per-call base 8.4 us (tuning.cc baseLat "
        "Ring/Simple, HardwareSpec.collective_latency); network post 1 us on Intel hosts (tuning.cc getNetOverhead); "
        "TPU ICI ~1 us/hop (Scaling Book)")


#: the H100 entry's GEMM rates: large-GEMM asymptotes fitted end to end, and the isolated cuBLAS rate (sources below)
_HOPPER_GEMM = dict(matmul_efficiency=0.59, fp8_matmul_efficiency=0.49, isolated_matmul_efficiency=0.73)
#: what an eager PyTorch program keeps of the best isolated GEMM on Hopper (0.59 / 0.73 = 0.808)
_HOPPER_KEEPS = _HOPPER_GEMM["matmul_efficiency"] / _HOPPER_GEMM["isolated_matmul_efficiency"]
_MAF = "ROCm blog 'Measuring Max-Achievable FLOPs - Part 2', Feb 2025"


#: SemiAnalysis, "MI300X vs H100 vs H200 Benchmark Part 1: Training" (22 Dec 2024), GEMM section: the median of
#: Llama-70B training shapes (M = 16,384 tokens; L2 flushed between runs), MI300X on AMD's tuned container: ~620
#: TFLOPS bf16, ~990 fp8; H100 in the same benchmark ~720 bf16 (0.73 of its peak: the h100-sxm entry's
#: isolated_matmul_efficiency, the same source)
_SA_MI300X = {"bf16": 620.0, "fp8": 990.0}
_SA_GEMM = "SemiAnalysis 'MI300X vs H100 vs H200 Benchmark Part 1: Training' (Dec 2024), GEMM benchmark"


def _cdna3(name: str, hbm_bytes: float, hbm_bandwidth: float, maf_bf16: float, maf_fp8: float,
           sources: dict[str, str]) -> HardwareSpec:
    """An AMD Instinct CDNA 3 entry (MI300X's 1,307.4 / 2,614.9 TFLOPS dense bf16 / fp8 peaks, 8-GPU Infinity Fabric
    platform, one 400 Gb/s NIC per GPU). Its isolated GEMM rate is the MI300X's measured at training shapes
    (:data:`_SA_MI300X`, the benchmark that gives the h100-sxm entry its 0.73) scaled by the chip's AMD
    Max-Achievable FLOPs over the MI300X's (``maf_bf16`` / ``maf_fp8`` in TFLOPS, :data:`_MAF`: the best tuned GEMM
    of each chip; 1 for the MI300X); asymptotes = that x :data:`_HOPPER_KEEPS` (derived, not fitted: no shared run is
    on AMD hardware), rounded to 0.01. The MAF alone (708 bf16 = 0.54 of peak) was used before: a best-case shape on
    low-toggle inputs with an unreleased hipBLASLt (the blog's own caveats), 1.14x the training-shape rate."""
    peak_bf16, peak_fp8 = 1307.4e12, 2614.9e12
    chip = name.upper()
    bf16 = _SA_MI300X["bf16"] * maf_bf16 / 708 * 1e12 / peak_bf16
    fp8 = _SA_MI300X["fp8"] * maf_fp8 / 1273 * 1e12 / peak_fp8
    scaled = "" if name == "mi300x" else f" x {chip}'s MAF over the MI300X's ({maf_bf16:g} / 708 bf16, {maf_fp8:g} / 1273 fp8)"
    return HardwareSpec(
        name=name, peak_flops_bf16=peak_bf16, peak_flops_fp8=peak_fp8, hbm_bytes=hbm_bytes, hbm_bandwidth=hbm_bandwidth,
        scale_up_size=8, scale_up_bandwidth=448e9, scale_up_topology="mesh", scale_out_bandwidth=50e9,
        matmul_efficiency=round(bf16 * _HOPPER_KEEPS, 2), fp8_matmul_efficiency=round(fp8 * _HOPPER_KEEPS, 2),
        isolated_matmul_efficiency=round(bf16, 3), scale_up_efficiency=0.7,
        scale_out_efficiency=0.85,
        sources={"isolated_matmul_efficiency": f"{chip} bf16 {bf16:.3f}: MI300X {_SA_MI300X['bf16']:g} TFLOPS at "
                                               f"Llama-70B training shapes ({_SA_GEMM}, where H100 measures 0.73)"
                                               f"{scaled}",
                 "matmul_efficiency": f"{chip}: isolated {bf16:.3f} bf16 / {fp8:.3f} fp8 (MI300X {_SA_MI300X['bf16']:g} / "
                                      f"{_SA_MI300X['fp8']:g} TFLOPS at training shapes, {_SA_GEMM}{scaled}; {_MAF}) x "
                                      f"{_HOPPER_KEEPS:.3f} (the h100-sxm entry's end-to-end 0.59 over its isolated "
                                      "0.73, measured in the same benchmark): derived, not fitted",
                 "scale_up_bandwidth": "AMD MI300X: 7 Infinity Fabric links, 896 GB/s bidirectional aggregate -> 448 GB/s "
                                       "one-way per GPU (fully connected 8-GPU platform)",
                 "scale_up_topology": "mesh: AMD CDNA 3 white paper / MI300X platform: each GPU links directly to each "
                                      "of its 7 peers (64 GB/s one-way per link), no switch; a group of k GPUs uses "
                                      "k - 1 of the links",
                 "scale_out_bandwidth": "MI300X platform: 8x 400 Gb/s NICs -> 50 GB/s per GPU",
                 "latency": _LAT, **sources})


#: Blackwell presets' isolated-GEMM rate (ezyang SOURCES.md, the matmul_efficiency source's cross-check)
_BLACKWELL_ISOLATED = ("0.69: an isolated B200 bf16 GEMM (ezyang SOURCES.md), as the matmul_efficiency source's cross-check "
                       "cites it")
#: the fp4 rate's source on the Blackwell entries (HardwareSpec.fp4_matmul_efficiency None: the fp8 fraction)
_FP4_AS_FP8 = ("None, i.e. the entry's fp8_matmul_efficiency: assumed, NVFP4 GEMMs reach the same fraction of their "
               "peak as fp8 ones (no public NVFP4 GEMM benchmark was found); checked, not fitted, on MLPerf Training "
               "v5.1's NVFP4 Llama 3.1 405B runs (docs/accuracy.md)")
HARDWARE: dict[str, HardwareSpec] = {h.name: h for h in [
    HardwareSpec(
        name="a100-40gb", peak_flops_bf16=312e12, hbm_bytes=40 * GiB, hbm_bandwidth=1.555e12,
        scale_up_size=8, scale_up_bandwidth=300e9, scale_out_bandwidth=25e9,
        matmul_efficiency=0.78, scale_up_efficiency=0.77, scale_out_efficiency=0.85,
        sources={"peak_flops_bf16": "NVIDIA A100 datasheet: 312 TFLOPS bf16 dense (624 sparse)",
                 "hbm": "NVIDIA A100 datasheet: 40GB HBM2, 1,555 GB/s",
                 "scale_up_bandwidth": "NVLink 3: 600 GB/s bidirectional per GPU -> 300 GB/s one-way; 8-GPU HGX",
                 "scale_out_bandwidth": "DGX A100: 8x HDR 200 Gb/s -> 25 GB/s one-way per GPU",
                 "scale_up_efficiency": _NCCL, "scale_out_efficiency": _IB, "latency": _LAT}),
    HardwareSpec(
        name="a100-80gb", peak_flops_bf16=312e12, hbm_bytes=80 * GiB, hbm_bandwidth=2.039e12,
        scale_up_size=8, scale_up_bandwidth=300e9, scale_out_bandwidth=25e9,
        matmul_efficiency=0.78, scale_up_efficiency=0.77, scale_out_efficiency=0.85,
        sources={"peak_flops_bf16": "NVIDIA A100 datasheet: 312 TFLOPS bf16 dense (624 sparse)",
                 "matmul_efficiency": "fitted to the Megatron-LM A100 runs of Narayanan et al. 2021 and Korthikanti "
                                      "et al. 2022 (docs/accuracy.md)",
                 "hbm": "NVIDIA A100 80GB SXM datasheet: 80GB HBM2e, 2,039 GB/s",
                 "scale_up_bandwidth": "NVLink 3: 600 GB/s bidirectional per GPU -> 300 GB/s one-way; 8-GPU HGX",
                 "scale_out_bandwidth": "DGX A100: 8x HDR 200 Gb/s -> 25 GB/s one-way per GPU",
                 "scale_up_efficiency": _NCCL, "scale_out_efficiency": _IB, "latency": _LAT}),
    HardwareSpec(
        name="h100-sxm", peak_flops_bf16=989.4e12, peak_flops_fp8=1978.9e12, hbm_bytes=80 * GiB,
        hbm_bandwidth=3.35e12, scale_up_size=8, scale_up_bandwidth=450e9, scale_out_bandwidth=50e9,
        matmul_efficiency=0.6, scale_up_efficiency=0.82, scale_out_efficiency=0.85,
        sources={"peak_flops": "NVIDIA H100 SXM datasheet: 1,979 TFLOPS bf16 / 3,958 fp8 with sparsity -> /2 dense",
                 "hbm": "NVIDIA H100 SXM datasheet: 80GB HBM3, 3.35 TB/s",
                 "scale_up_bandwidth": "NVLink 4: 900 GB/s bidirectional -> 450 GB/s one-way; " + _SB_GPU,
                 "scale_out_bandwidth": "DGX H100: 8x ConnectX-7 400 Gb/s -> 50 GB/s per GPU; " + _SB_GPU,
                 "fp8_matmul_efficiency": "0.45 of the fp8 peak, fitted to the NeMo 24.07 FP8 runs (docs/accuracy.md)",
                 "matmul_efficiency": "fitted to the llm-foundry MPT H100 runs (docs/accuracy.md); SemiAnalysis "
                                      "~720/989 TFLOPS (0.73) on isolated GEMMs is the upper bound (ezyang SOURCES.md)",
                 "scale_up_efficiency": _NCCL, "scale_out_efficiency": _IB, "latency": _LAT}),
    HardwareSpec(
        name="h200", peak_flops_bf16=989.4e12, peak_flops_fp8=1978.9e12, hbm_bytes=143771 * MiB,
        hbm_bandwidth=4.8e12, scale_up_size=8, scale_up_bandwidth=450e9, scale_out_bandwidth=50e9,
        matmul_efficiency=0.72, scale_up_efficiency=0.82, scale_out_efficiency=0.85,
        sources={"peak_flops": "NVIDIA H200 datasheet: same tensor cores as H100 SXM (989 TFLOPS bf16 dense)",
                 "hbm": "NVIDIA H200 datasheet: 141GB HBM3e, 4.8 TB/s; as the device reports it: nvidia-smi "
                        "memory.total 143771MiB (140.4 GiB: the datasheet's GB is about a GiB; 141e9 B, used before, is "
                        "131.3 GiB, a new user's finding)" + _DEVICE_TOTAL,
                 "scale_up_bandwidth": "NVLink 4: 900 GB/s bidirectional -> 450 GB/s one-way",
                 "scale_out_bandwidth": "HGX H200 reference: 8x 400 Gb/s NICs -> 50 GB/s per GPU",
                 "scale_up_efficiency": _NCCL, "scale_out_efficiency": _IB, "latency": _LAT}),
    HardwareSpec(
        name="b200", peak_flops_bf16=2.25e15, peak_flops_fp8=4.5e15, peak_flops_fp4=9e15, hbm_bytes=183359 * MiB,
        hbm_bandwidth=8e12,
        scale_up_size=8, scale_up_bandwidth=900e9, scale_out_bandwidth=50e9,
        matmul_efficiency=0.58, fp8_matmul_efficiency=0.48, isolated_matmul_efficiency=0.69,
        scale_up_efficiency=0.82, scale_out_efficiency=0.85,
        sources={"isolated_matmul_efficiency": _BLACKWELL_ISOLATED,
                 "fp8_matmul_efficiency": "0.48 (0.49 before the megatron profile's interleaved pipeline sends were "
                                          "overlapped, FrameworkProfile.pp_p2p_overlap): fitted by "
                                          "benchmarks/fit_frameworks.py blackwell_fp8_table on the 16 "
                                          "public dense fp8 B200 / GB200 rows (NeMo 25.04 B200 long sequence, "
                                          "Megatron-Bridge 25.09 / 25.11 B200 and GB200; docs/accuracy.md gives the "
                                          "leave-one-row-out errors), the Megatron-Bridge FP8-CS rows with fp8 primary "
                                          "weights (0.48 while cp > 1 attention was priced at the non-causal kernel "
                                          "speed; 0.49 before the FP8-CS rows, the Hopper entry's fitted fp8 rate)",
                 "peak_flops": "NVIDIA DGX B200 datasheet: 72 PFLOPS fp8 training per 8 GPUs (sparse) -> "
                               "4.5 PF fp8 / 2.25 PF bf16 dense per GPU; " + _SB_GPU,
                 "peak_flops_fp4": "NVIDIA DGX B200 datasheet: 144 PFLOPS fp4 inference per 8 GPUs (sparse) -> 9 PF "
                                   "dense NVFP4 per GPU",
                 "fp4_matmul_efficiency": _FP4_AS_FP8,
                 "hbm": "NVIDIA DGX B200 datasheet: 1,440 GB per 8 GPUs = 180 GB per GPU (192 GB announced); as the device "
                        "reports it: nvidia-smi memory.total 183359MiB (179.1 GiB; 180e9 B, used before, is 167.6 GiB)" + _DEVICE_TOTAL + "; "
                        "8 TB/s",
                 "scale_up_bandwidth": "NVLink 5: 1.8 TB/s bidirectional -> 900 GB/s one-way",
                 "scale_out_bandwidth": "DGX B200: 8x ConnectX-7 400 Gb/s -> 50 GB/s per GPU",
                 "matmul_efficiency": "0.58: the fitted Blackwell fp8 rate (0.48, above) times the Hopper entry's "
                                      "bf16 / fp8 asymptote ratio (0.59 / 0.49, both fitted with the same shape model); "
                                      "cross-check: ezyang SOURCES.md's isolated B200 GEMM rate "
                                      "0.69 scaled by Hopper's fitted-asymptote / isolated-GEMM ratio (0.59 / 0.73) gives "
                                      "0.56. The isolated rate itself (0.69, used before) is an upper bound, as on Hopper; "
                                      "no public dense bf16 Blackwell training row was found to fit it on (docs/accuracy.md)",
                 "scale_up_efficiency": _NCCL, "scale_out_efficiency": _IB, "latency": _LAT}),
    _cdna3("mi300x", 205_822_885_888, 5.3e12, 708, 1273, {
        "peak_flops": "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS bf16, 2,614.9 fp8 (dense)",
        "hbm": "AMD MI300X datasheet: 192 GB HBM3, 5.3 TB/s; as the device reports it: rocm-smi --showmeminfo vram 'VRAM Total Memory (B): 205822885888' (191.7 GiB; ROCm docs, AMD GPU specifications: VRAM 192 GiB)" + _DEVICE_TOTAL}),
    _cdna3("mi325x", 256 * GiB, 6.0e12, 843, 1519, {
        "peak_flops": "AMD Instinct MI325X datasheet: 1,307.4 TFLOPS bf16, 2,614.9 fp8 (dense), the MI300X's (same CDNA 3 "
                      "die and clocks, 1,000 W instead of 750 W)",
        "hbm": "AMD MI325X datasheet: 256 GB HBM3E, 6.0 TB/s; ROCm docs, AMD GPU specifications: VRAM 256 GiB (no device-reported total found; the MI300X's is 0.3 GiB under its table's 192 GiB)",
        "scale_up_bandwidth": "as the MI300X (the same 8-GPU platform, 7 Infinity Fabric links; assumed)",
        "scale_out_bandwidth": "as the MI300X platform: one 400 Gb/s NIC per GPU (assumed)"}),
    HardwareSpec(
        name="mi355x", peak_flops_bf16=2516.6e12, peak_flops_fp8=5033.2e12, peak_flops_fp32=157.3e12, hbm_bytes=288 * GiB,
        hbm_bandwidth=8.0e12, scale_up_size=8, scale_up_bandwidth=537.6e9, scale_up_topology="mesh",
        scale_out_bandwidth=50e9, matmul_efficiency=0.44, fp8_matmul_efficiency=0.39, scale_up_efficiency=0.7,
        scale_out_efficiency=0.85,
        sources={"peak_flops": "AMD Instinct MI355X (CDNA 4): 256 compute units x 2.4 GHz x 4,096 bf16 FLOP per clock "
                               "per CU (CDNA 4 doubles CDNA 3's 2,048; the MI300X's 304 x 2.1 GHz x 2,048 = 1,307.4 "
                               "TFLOPS is its datasheet figure) = 2,516.6 TFLOPS bf16, fp8 twice that (AMD: 2.5 / "
                               "5 PFLOPS dense)",
                 "peak_flops_fp32": "AMD MI355X datasheet: 157.3 TFLOPS fp32 (matrix and vector alike; CDNA 4 has no TF32 "
                                    "matrix rate, unlike the MI300X's 653.7)",
                 "hbm": "AMD MI355X datasheet: 288 GB HBM3E, 8 TB/s; ROCm docs, AMD GPU specifications: VRAM 288 GiB (no device-reported total found)",
                 "scale_up_bandwidth": "AMD MI355X: 7 Infinity Fabric links of 153.6 GB/s, 1,075 GB/s bidirectional "
                                       "-> 537.6 GB/s one-way per GPU (fully connected 8-GPU platform)",
                 "scale_up_topology": "mesh: the fully connected 8-GPU platform (one link to each of 7 peers, 76.8 "
                                      "GB/s one-way each), no switch",
                 "scale_out_bandwidth": "one 400 Gb/s NIC per GPU (AMD Pollara 400 / ConnectX-7 platforms; assumed) "
                                        "-> 50 GB/s",
                 "matmul_efficiency": "AMD's CDNA 3 Max-Achievable FLOPs rates (MI300X 708 / 1,307.4 bf16 = 0.54, "
                                      "1,273 / 2,614.9 fp8 = 0.49, x 0.808, the h100-sxm entry's end-to-end over "
                                      "isolated ratio; ROCm blog 'Measuring Max-Achievable FLOPs - Part 2'), as a "
                                      "best-tuned ROCm 7 stack reaches (AMD publishes no MAF for the MI355X): "
                                      "assumed, not fitted. Check: MLPerf Training v5.1 (AMD, "
                                      "MI355X_EPYC_9575F_pytorch, Llama 3.1 8B fp8, 8 GPUs) comes out -5% with them "
                                      "(docs/accuracy.md)",
                 "latency": _LAT}),
    HardwareSpec(
        name="tpu-v4", kind="tpu", peak_flops_bf16=275e12, hbm_bytes=32 * GiB, hbm_bandwidth=1.2e12,
        scale_up_size=4096, scale_up_bandwidth=9e10, scale_up_latency=1e-6, collective_latency=0.0,
        scale_out_bandwidth=6.25e9,
        ici_dims=3, ici_axis_len=4, matmul_efficiency=0.7, scale_up_efficiency=0.9, scale_out_efficiency=0.85,
        sources={"all": _SB_TPU + ": v4p 2.75e14 bf16, 32 GB HBM at 1.2e12 B/s, ICI 4.5e10 one-way / 9e10 "
                                  "bidirectional per link, 3D torus, 4096-chip pod; DCN 2.5e10 B/s per 4-chip host",
                 "matmul_efficiency": "stated default, not fitted (no public TPU v4 run among the checks): above the "
                                      "end-to-end lower bound of PaLM 540B on 6,144 v4 chips, 57.8% hardware FLOPs "
                                      "utilization (Chowdhery et al. 2022, Table 3), below the v5p entry's fitted 0.82",
                 "latency": _TPU_LAT}),
    HardwareSpec(
        name="tpu-v5e", kind="tpu", peak_flops_bf16=1.97e14, hbm_bytes=16 * GiB, hbm_bandwidth=8.2e11,
        scale_up_size=256, scale_up_bandwidth=9e10, scale_up_latency=1e-6, collective_latency=0.0,
        scale_out_bandwidth=3.125e9,
        ici_dims=2, ici_axis_len=16, matmul_efficiency=0.865, scale_up_efficiency=0.9, scale_out_efficiency=0.85,
        sources={"all": _SB_TPU + ": v5e 1.97e14 bf16, 16 GB at 8.2e11 B/s (PR #106), ICI 9e10 bidirectional per "
                                  "link, 2D torus 16x16; DCN 3.125e9 B/s per chip (later revision)",
                 "matmul_efficiency": "0.865: fitted by benchmarks/fit_frameworks.py tpu_v5e_table on the three one-slice "
                                      "rows of the MaxText v5e README (16B, 32B, 64B), leave-one-row-out 2.8-9.3%; "
                                      "ezyang SOURCES.md's 0.67 is those runs' end-to-end MFU (a lower bound, as it "
                                      "says) under full rematerialisation, whose hardware FLOPs are ~4/3 of the model "
                                      "FLOPs the MFU counts", "latency": _TPU_LAT}),
    HardwareSpec(
        name="tpu-v5p", kind="tpu", peak_flops_bf16=4.59e14, hbm_bytes=95 * GiB, hbm_bandwidth=2.76e12,
        scale_up_size=8960, scale_up_bandwidth=1.8e11, scale_up_latency=1e-6, collective_latency=0.0,
        scale_out_bandwidth=6.25e9,
        ici_dims=3, ici_axis_len=4, matmul_efficiency=0.82, scale_up_efficiency=0.9, scale_out_efficiency=0.85,
        sources={"all": _SB_TPU + ": v5p 4.59e14 bf16, 96 GB (95 GiB) HBM at 2.76e12 B/s, ICI 9e10 one-way / "
                                  "1.8e11 bidirectional per link, 3D torus 16x20x28 (8960 chips); DCN 6.25e9 B/s "
                                  "per chip (later revision)",
                 "matmul_efficiency": "fitted to the MaxText v5p runs (docs/accuracy.md); ezyang SOURCES.md gives "
                                      "0.72 as a lower bound from end-to-end MFU", "latency": _TPU_LAT}),
    HardwareSpec(
        name="tpu-v6e", kind="tpu", peak_flops_bf16=9.18e14, hbm_bytes=32 * GiB, hbm_bandwidth=1.64e12,
        scale_up_size=256, scale_up_bandwidth=1.8e11, scale_up_latency=1e-6, collective_latency=0.0,
        scale_out_bandwidth=12.5e9,
        ici_dims=2, ici_axis_len=16, matmul_efficiency=0.64, scale_up_efficiency=0.9, scale_out_efficiency=0.85,
        sources={"all": _SB_TPU + ": v6e 9.2e14 bf16 (Google Cloud: 918 TFLOPS), 32 GB at 1.64e12 B/s, ICI 1.8e11 "
                                  "bidirectional per link, 2D torus 16x16; DCN 12.5e9 B/s per chip",
                 "matmul_efficiency": "0.64: fitted by benchmarks/fit_frameworks.py tpu_v6e_table on the three Trillium "
                                      "Gold rows of MaxText's tiering page (Llama 2 70B, Llama 3.1 8B, 70B on v6e-256; "
                                      "leave-one-row-out 3-9%, docs/accuracy.md); it replaces an unsourced 0.7",
                 "latency": _TPU_LAT}),
    # TPU7x (Ironwood): JAX exposes each chip as two devices, one per chiplet (one TensorCore, 96 GB of HBM each), so
    # this preset is one chiplet, the unit --devices counts (MaxText's per_device_batch_size and TFLOP/s/device too)
    HardwareSpec(
        name="tpu7x", kind="tpu", peak_flops_bf16=1.1535e15, peak_flops_fp8=2.307e15, hbm_bytes=96 * GiB,
        hbm_bandwidth=3.69e12, scale_up_size=18432, scale_up_bandwidth=1e11, scale_up_latency=1e-6,
        collective_latency=0.0, scale_out_bandwidth=6.25e9, devices_per_host=8,
        ici_dims=3, ici_axis_len=4, matmul_efficiency=0.83, fp8_matmul_efficiency=0.83, scale_up_efficiency=0.9,
        scale_out_efficiency=0.85,
        sources={"all": _TPU7X + ": per chip 2307 TFLOP/s bf16, 4614 fp8, 192 GiB HBM at 7380 GB/s, 1200 GB/s "
                                 "bidirectional ICI (200 GB/s per axis), 3D torus of 4x4x4 cubes up to 9216 chips, DCN "
                                 "100 Gb/s per chip, 4 chips per VM; 'Frameworks like JAX expose each Ironwood chip as "
                                 "two separate devices, one for each chiplet' -> per device (chiplet) half of each: "
                                 "1.1535e15 / 2.307e15 FLOP/s, 96 GiB at 3.69e12 B/s, 18,432 devices per pod, 8 per "
                                 "VM, DCN 6.25e9 B/s",
                 "scale_up_bandwidth": "1e11 B/s per link per device: a chip's 200 GB/s bidirectional link "
                                       "(Google Cloud TPU7x docs) carries the traffic of its two chiplets, which share "
                                       "it (assumed: half each; the die-to-die link between the chiplets, '6x faster "
                                       "than a 1D ICI link', is not modelled apart)",
                 "matmul_efficiency": "0.83: AI-Hypercomputer/accelerator-microbenchmarks Ironwood "
                                      "Ironwood_Microbenchmarks_readme.md @ 0ddd4b8c: a 32768^3 GEMM at 956.4 TFLOP/s "
                                      "per device = 0.83 of the 1153.5 TFLOP/s bf16 peak of one TensorCore (a "
                                      "measurement, not fitted on any training run)",
                 "hbm": _TPU7X + ": 192 GiB per chip, 96 GiB per chiplet (JAX: 206e9 // 2 B)",
                 "fp8_matmul_efficiency": "0.83, assumed equal to the bf16 fraction: no public TPU7x fp8 GEMM figure "
                                          "(JAX pallas tpu_info lists fp8 at twice the bf16 rate); the tpu-recipes "
                                          "fp8 runs (docs/accuracy.md) test it",
                 "latency": _TPU_LAT}),
]}

# ----- TPU HBM as XLA sees it -----------------------------------------------------------------------------------
#: TPU HBM sizes are binary (16 GiB v5e, 32 GiB v4 / v6e, 95 GiB v5p: vllm-project/tpu-inference utils.py
#: get_device_hbm_limit, 16 / 32 / 95 x 2**30) and XLA:TPU plans every buffer at compile time, so there is no caching
#: allocator's fragmentation to reserve for; what the runtime keeps back is the gap between HBM and the
#: ``bytes_limit`` of ``jax.Device.memory_stats()``: 32 GiB parts report 30.75 GiB (jax-ml/jax#1491), 31.25 GiB
#: (vllm-project/vllm#16211, v6e: 33,550,237,696 B) and 31.75 GiB (pytorch/xla#7086), so 0.25-1.25 GiB; the
#: largest, 1.25 GiB, is the reserve
_TPU_RESERVE = ("jax.Device.memory_stats() bytes_limit on 32 GiB TPUs: 30.75 GiB (jax-ml/jax#1491), 31.25 GiB "
                "(vllm-project/vllm#16211, v6e), 31.75 GiB (pytorch/xla#7086): 0.25-1.25 GiB kept back, the largest "
                "taken; no fragmentation fraction (XLA:TPU assigns buffers at compile time)")
_TPU_HBM = ("vllm-project/tpu-inference utils.py get_device_hbm_limit: v5e 16, v4 / v6e 32, v5p 95 GiB (binary units, "
            "which the memory_stats bytes_limit above 32e9 B on 32 GiB parts confirms)")
for _name in ("tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x"):
    _h = HARDWARE[_name]
    HARDWARE[_name] = HardwareSpec(**{**_h.model_dump(), "runtime_reserve_bytes": 1.25 * GiB,
                                      "runtime_reserve_fraction": 0.0,
                                      "sources": {**_h.sources, "runtime_reserve_bytes": _TPU_RESERVE,
                                                  "runtime_reserve_fraction": _TPU_RESERVE,
                                                  "hbm": _h.sources.get("hbm", _TPU_HBM)}})

# ----- Compute units (issue 9 Sec. 3): SMs, GEMM tiles, architecture ---------------------------
# Kept in one block so that each preset above stays as it was; applied below with validation.
_CUTLASS = ("GEMM tiles 128x256 / 256x128 / 128x128 with K steps of 64 (NVIDIA Matrix Multiplication "
            "Background User's Guide Sec. 2.3; CUTLASS sm80/sm90 bf16 kernels)")
#: large-GEMM asymptotes (shardplan.cost.gemm: per-SM rate inside a full wave = efficiency x peak / sm_count),
#: re-fitted with the shape model in place on the rows named (median |error|, leave-one-row-out in docs)
_A100_GEMM = ("0.78: large-GEMM asymptote re-fitted with tile/wave quantization and the attention kernel model on "
              "the 21 Megatron-LM A100 rows of Narayanan et al. 2021 (Tables 1, 2 PTD-P) and Korthikanti et al. "
              "2022 (median |error| 1.4%, leave-one-row-out 1.4%)")
_HOPPER_GEMM_SOURCES = {
    "isolated_matmul_efficiency": "0.73: an isolated cuBLAS bf16 GEMM on H100 SXM (SemiAnalysis, via ezyang SOURCES.md; "
                                  "the matmul_efficiency source's upper bound); H200 / H800: the same GH100 SMs",
    "matmul_efficiency": "0.59: large-GEMM asymptote of the Hopper tensor cores (H100 and H200 share it: same GH100 "
                         "SMs and clocks), re-fitted with tile/wave quantization and the attention kernel model on the "
                         "llm-foundry MPT-70B/30B H100 rows (median |error| 1.7%, leave-one-row-out 3.2%); isolated "
                         "cuBLAS GEMMs reach ~0.73 (SemiAnalysis, ezyang SOURCES.md): an upper bound, the gap is "
                         "end-to-end (clock throttling under load, framework overheads not yet modelled)",
    "fp8_matmul_efficiency": "0.49: fp8 asymptote re-fitted the same way on the six NeMo 24.07 FP8 H100 rows "
                             "(median |error| 3.3%, leave-one-row-out 5.0%)"}
_MXU128 = "MXU 128x128 (Scaling Book tpus.md): XLA pads M, N, K of a matmul to multiples of 128"
_COMPUTE_UNITS: dict[str, dict] = {
    "a100-40gb": dict(sm_count=108, compute_arch="ampere", matmul_efficiency=0.78, sources={
        "sm_count": "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs", "gemm_tiles": _CUTLASS,
        "matmul_efficiency": _A100_GEMM}),
    "a100-80gb": dict(sm_count=108, compute_arch="ampere", matmul_efficiency=0.78, sources={
        "sm_count": "NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs", "gemm_tiles": _CUTLASS,
        "matmul_efficiency": _A100_GEMM}),
    "h100-sxm": dict(sm_count=132, compute_arch="hopper", **_HOPPER_GEMM, sources={
        "sm_count": "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5 has 132 SMs",
        "gemm_tiles": _CUTLASS, **_HOPPER_GEMM_SOURCES}),
    "h200": dict(sm_count=132, compute_arch="hopper", **_HOPPER_GEMM, sources={
        "sm_count": "same GH100 die and tensor cores as H100 SXM5 (NVIDIA H200 datasheet: 989 TFLOPS bf16): 132 SMs",
        "gemm_tiles": _CUTLASS, **_HOPPER_GEMM_SOURCES}),
    "b200": dict(sm_count=148, compute_arch="blackwell", sources={
        "sm_count": "NVIDIA Blackwell B200: 2 dies x 74 SMs = 148 SMs (stated; not calibrated)",
        "gemm_tiles": _CUTLASS}),
    "mi300x": dict(sm_count=304, compute_arch="cdna3", sources={
        "sm_count": "AMD Instinct MI300X datasheet: 304 compute units",
        "gemm_tiles": _CUTLASS + " (assumed for rocBLAS)"}),
    "mi355x": dict(sm_count=256, compute_arch="cdna4", sources={
        "sm_count": "AMD Instinct MI355X: 256 compute units",
        "gemm_tiles": _CUTLASS + " (assumed for hipBLASLt)"}),
    "mi325x": dict(sm_count=304, compute_arch="cdna3", sources={
        "sm_count": "AMD Instinct MI325X datasheet: 304 compute units",
        "gemm_tiles": _CUTLASS + " (assumed for rocBLAS)"}),
    "tpu-v4": dict(compute_arch="tpu", gemm_tiles=((128, 128),), gemm_k_tile=128, sources={"gemm_tiles": _MXU128}),
    "tpu-v5e": dict(compute_arch="tpu", gemm_tiles=((128, 128),), gemm_k_tile=128, sources={"gemm_tiles": _MXU128}),
    "tpu-v5p": dict(compute_arch="tpu", gemm_tiles=((128, 128),), gemm_k_tile=128, sources={"gemm_tiles": _MXU128}),
    "tpu-v6e": dict(compute_arch="tpu", gemm_tiles=((256, 256),), gemm_k_tile=256, sources={
        "gemm_tiles": "MXU 256x256 on v6e (Scaling Book tpus.md): XLA pads matmul dims to multiples of 256"}),
    "tpu7x": dict(compute_arch="tpu", gemm_tiles=((256, 256),), gemm_k_tile=256, sources={
        "gemm_tiles": "MXU 256x256 on TPU7x (MaxText docs optimizing_frontier_model_training_on_tpu_v7x.md: 'The "
                      "Ironwood MXU is a 256x256 systolic array'; JAX pallas tpu_info.py mxu_column_size=256)"}),
}
for _name, _units in _COMPUTE_UNITS.items():
    _h = HARDWARE[_name]
    HARDWARE[_name] = HardwareSpec(**{**_h.model_dump(), **_units, "sources": {**_h.sources, **_units["sources"]}})

# ----- Host link (activation offloading, ParallelConfig.offload_activation_layers) -----------------------------
_PCIE4 = "PCIe Gen4 x16 to the host CPU: 32 GB/s per direction (PCI-SIG: 16 GT/s x 16 lanes, 128b/130b)"
_PCIE5 = "PCIe Gen5 x16 to the host CPU: 64 GB/s per direction (PCI-SIG: 32 GT/s x 16 lanes, 128b/130b)"
_HOST_LINK = {"a100-40gb": (32e9, _PCIE4), "a100-80gb": (32e9, _PCIE4), "h100-sxm": (64e9, _PCIE5),
              "h200": (64e9, _PCIE5), "b200": (64e9, _PCIE5), "mi300x": (64e9, _PCIE5),
              "mi325x": (64e9, _PCIE5), "mi355x": (64e9, _PCIE5)}
#: TPU host links: the Scaling Book's figures (tpus.md, the revision with TPU7x: "PCIe bandwidth is typically around
#: 1.6e10 bytes / second per TPU (3.2e10 for TPU v6e)"); per JAX device, so a TPU7x chip's is shared by its two chiplets
_SB_PCIE = ("Scaling Book tpus.md (jax-ml/scaling-book, the revision that adds TPU7x): 'PCIe bandwidth is typically "
            "around 1.6e10 bytes / second per TPU (3.2e10 for TPU v6e)'")
for _name in ("tpu-v4", "tpu-v5e", "tpu-v5p"):
    _HOST_LINK[_name] = (1.6e10, _SB_PCIE)
_HOST_LINK["tpu-v6e"] = (3.2e10, _SB_PCIE + "; the Cloud TPU v6e docs add that each chip reaches the host over "
                         "PCIe Gen5")
_HOST_LINK["tpu7x"] = (8e9, _SB_PCIE + ", TPU7x not named apart: 1.6e10 per chip, shared by its two chiplets (JAX "
                       "devices): 8e9 per device (Google Cloud's TPU7x page says only that four chips reach their host "
                       "'using a PCIe network')")
for _name, (_bw, _src) in _HOST_LINK.items():
    _h = HARDWARE[_name]
    HARDWARE[_name] = HardwareSpec(**{**_h.model_dump(), "host_bandwidth": _bw,
                                      "sources": {**_h.sources, "host_bandwidth": _src}})

#: GB200 NVL72: the Blackwell GPU of a Grace-Blackwell superchip at the higher power of the NVL72 rack (the b200
#: entry's SMs, GEMM and network efficiencies, and kernels), with 72 GPUs in one NVLink domain
_B200 = HARDWARE["b200"]
HARDWARE["gb200"] = HardwareSpec(**{
    **_B200.model_dump(), "name": "gb200", "peak_flops_bf16": 2.5e15, "peak_flops_fp8": 5e15, "peak_flops_fp4": 10e15,
    "hbm_bytes": 189471 * MiB,
    "scale_up_size": 72, "devices_per_host": 4, "host_bandwidth": 450e9, "isolated_matmul_efficiency": 0.70, "sources": {
        **_B200.sources,
        "peak_flops": "NVIDIA GB200 NVL72 datasheet: 360 PFLOPS fp16/bf16 and 720 PFLOPS fp8 per 72 GPUs with sparsity "
                      "-> 2.5 PF bf16 / 5 PF fp8 dense per GPU",
        "peak_flops_fp4": "NVIDIA GB200 NVL72 datasheet: 1,440 PFLOPS fp4 per 72 GPUs with sparsity -> 10 PF dense "
                          "NVFP4 per GPU",
        "hbm": "NVIDIA GB200 NVL72 datasheet: up to 13.4 TB HBM3e and 576 TB/s per 72 GPUs -> 186 GB, 8 TB/s per GPU; "
               "as the device reports it: nvidia-smi memory.total 189471MiB (185.0 GiB; 186e9 B, used before, is "
               "173.2 GiB)" + _DEVICE_TOTAL,
        "scale_up_bandwidth": "NVLink 5: 1.8 TB/s bidirectional per GPU -> 900 GB/s one-way; NVL72: one NVLink domain "
                              "of 72 GPUs (NVLink Switch trays)",
        "scale_out_bandwidth": "GB200 NVL72 compute tray: 4 GPUs with 4 ConnectX-7 400 Gb/s NICs -> 50 GB/s per GPU",
        "host_bandwidth": "NVIDIA GB200 NVL72 datasheet: NVLink-C2C 900 GB/s between Grace and Blackwell -> 450 GB/s "
                          "per direction",
        "devices_per_host": "NVIDIA GB200 NVL72: 18 compute trays of 2 Grace-Blackwell superchips (4 GPUs) each",
        "matmul_efficiency": "the b200 entry's (same Blackwell SMs): " + _B200.sources["matmul_efficiency"],
        "isolated_matmul_efficiency": "0.70: an isolated GB200 bf16 GEMM (ezyang SOURCES.md, as the shared cost-model "
                                      "notes quote it)"}})

#: Blackwell Ultra (B300): the B200's tensor cores at the same dense bf16 / fp8 peaks per GPU as their NVL72 and DGX
#: datasheets give them, 160 SMs, 12-high HBM3e stacks and ConnectX-8 800 Gb/s NICs; network efficiencies are the
#: b200 entry's, the GEMM rates are fitted on the public GB300 rows and the attention kernel has the doubled
#: softmax-exponential throughput (no published Blackwell Ultra GEMM or attention benchmark to set them from)
_ULTRA_GEMM = dict(matmul_efficiency=0.64, fp8_matmul_efficiency=0.53, isolated_matmul_efficiency=0.75)
_ULTRA = {
    "isolated_matmul_efficiency": "0.75: the b200 entry's isolated rate (0.69) x the Blackwell Ultra / Blackwell asymptote "
                                  "ratio (0.64 / 0.59): assumed, no isolated Blackwell Ultra GEMM measurement",
    "sm_count": "Blackwell Ultra (B300): 160 SMs, 20,480 CUDA cores (NVIDIA Blackwell Ultra announcement, GTC 2025)",
    "scale_out_bandwidth": "one ConnectX-8 SuperNIC, 800 Gb/s, per GPU -> 100 GB/s per GPU",
    "compute_arch": "Blackwell Ultra: the Blackwell tensor cores with twice the special-function-unit throughput for "
                    "the softmax exponential (shardplan.cost.gemm._BLACKWELL_ULTRA)",
    "fp8_matmul_efficiency": "0.53: fitted by benchmarks/fit_frameworks.py blackwell_ultra_fp8_table on the three public "
                             "dense fp8 GB300 rows (Megatron-Bridge 25.11 Llama 3 8B, 70B, 405B, FP8-CS with fp8 "
                             "primary weights; leave-one-row-out -9% / +8% / +0%, docs/accuracy.md). The datasheets give Blackwell Ultra the Blackwell "
                             "dense peaks, yet the table's GB300 runs are 1.03-1.23x its GB200 runs: a fitted rate "
                             "above the B200 / GB200 entry's 0.48 carries that (three rows: weakly determined)",
    "matmul_efficiency": "0.64: the fitted Blackwell Ultra fp8 rate (0.53) times the Hopper entry's bf16 / fp8 ratio "
                         "(0.59 / 0.49), as for the b200 entry; no public bf16 Blackwell Ultra row beside GPT-OSS-120B"}


#: Blackwell Ultra's NVFP4 rate: achieved NVFP4 = Blackwell's fp4 / fp8 peak ratio (2) x achieved fp8
#: (HardwareSpec.fp4_over_fp8_rate), so it follows a calibrated fp8 rate and overridden peaks. Example, GB300:
#: 2 x 0.53 x 5 PF = 5.3 PF/s = 0.353 of its 15 PF peak (GB200: 0.48 x 10 = 4.8)
_ULTRA_FP4 = ("derived, not fitted (HardwareSpec.fp4_over_fp8_rate = 2): achieved NVFP4 = 2 x achieved fp8, as the "
              "B200 / GB200 entries reach it (Blackwell's fp4 / fp8 peak ratio); the datasheet's "
              "1.5x NVFP4 peak over Blackwell is not assumed realized. Written after the MLPerf v5.1 GB300 NVFP4 405B "
              "run came out +28% at the fp8 fraction (GB300 / GB200 NVFP4 per GPU measured 1.31x, predicted 1.71x) and "
              "checked on the MLPerf v6.0 Cisco B300 NVFP4 Llama 3.1 8B run: +21% -> +5% (docs/accuracy.md)")
HARDWARE["gb300"] = HardwareSpec(**{
    **HARDWARE["gb200"].model_dump(), "name": "gb300", "hbm_bytes": 284208 * MiB, "sm_count": 160, "scale_out_bandwidth": 100e9,
    "peak_flops_fp4": 15e15,
    "compute_arch": "blackwell-ultra", **_ULTRA_GEMM,
    "fp4_over_fp8_rate": HARDWARE["gb200"].peak_flops_fp4 / HARDWARE["gb200"].peak_flops_fp8,
    "sources": {
        **HARDWARE["gb200"].sources, **_ULTRA, "fp4_over_fp8_rate": _ULTRA_FP4,
        "peak_flops": "NVIDIA GB300 NVL72 datasheet: 360 PFLOPS fp16/bf16 and 720 PFLOPS fp8 per 72 GPUs with sparsity "
                      "(the GB200 NVL72's figures) -> 2.5 PF bf16 / 5 PF fp8 dense per GPU",
        "peak_flops_fp4": "NVIDIA GB300 NVL72 datasheet: 1,080 PFLOPS dense fp4 (1,440 with sparsity) per 72 GPUs -> 15 PF "
                          "dense NVFP4 per GPU (Blackwell Ultra: 1.5x Blackwell's dense NVFP4)",
        "hbm": "NVIDIA Blackwell Ultra (GB300): 288 GB HBM3e per GPU; the GB300 NVL72 datasheet's 'up to 20 TB' and "
               "576 TB/s per 72 GPUs -> 8 TB/s per GPU; as the device reports it: nvidia-smi memory.total 284208MiB "
               "(277.5 GiB; 288e9 B, used before, is 268.2 GiB; the 265.08 GiB peak torchtitan's DeepSeek-V3 DistMoE "
               "report measured on one GB300, docs/accuracy.md fortieth pass, fits under both)" + _DEVICE_TOTAL,
        "devices_per_host": "NVIDIA GB300 NVL72: 18 compute trays of 4 Blackwell Ultra GPUs and 2 Grace CPUs"}})
HARDWARE["b300"] = HardwareSpec(**{
    **_B200.model_dump(), "name": "b300", "hbm_bytes": 275040 * MiB, "sm_count": 160, "scale_out_bandwidth": 100e9,
    "peak_flops_fp4": 14e15,
    "compute_arch": "blackwell-ultra", **_ULTRA_GEMM,
    "fp4_over_fp8_rate": HARDWARE["gb200"].peak_flops_fp4 / HARDWARE["gb200"].peak_flops_fp8,
    "sources": {
        **_B200.sources, **_ULTRA, "fp4_over_fp8_rate": _ULTRA_FP4,
        "peak_flops": "NVIDIA DGX B300 datasheet: 72 PFLOPS fp8 training per 8 GPUs (sparse) -> 4.5 PF fp8 / 2.25 PF "
                      "bf16 dense per GPU (the DGX B200's figures)",
        "peak_flops_fp4": "14 PF dense NVFP4 per B300 GPU (Verda, 'NVIDIA GB300 NVL72: GPU Architecture & Performance', "
                          "per-GPU table without sparsity; HGX B300 at its lower power limit, below the GB300's 15)",
        "hbm": "NVIDIA DGX B300 datasheet: 2.3 TB HBM3e per 8 GPUs -> 288 GB per GPU; 8 TB/s (Blackwell Ultra); as the "
               "device reports it: nvidia-smi memory.total 275040MiB (268.6 GiB) on B300 SXM6 AC" + _DEVICE_TOTAL}})

#: H800 SXM: the export variant of H100 SXM (same GH100 die, tensor cores, HBM and SM count; every other
#: number is the h100-sxm entry's), with NVLink cut to 400 GB/s bidirectional
_H100 = HARDWARE["h100-sxm"]
HARDWARE["h800"] = HardwareSpec(**{**_H100.model_dump(), "name": "h800", "scale_up_bandwidth": 200e9, "sources": {
    **_H100.sources,
    "scale_up_bandwidth": "NVIDIA H800 SXM: NVLink 400 GB/s bidirectional -> 200 GB/s one-way (DeepSeek-V3 technical "
                          "report, Liu et al. 2024, Sec. 3.2.2: about 160 GB/s achieved over NVLink against 50 GB/s "
                          "over InfiniBand); compute, HBM and SMs as H100 SXM"}})

#: A800 SXM 80GB: the export variant of A100 80GB SXM (same GA100 die, tensor cores, HBM and SMs; every other number
#: is the a100-80gb entry's) with NVLink cut to 400 GB/s bidirectional, as the H800 is of the H100
_A100 = HARDWARE["a100-80gb"]
HARDWARE["a800"] = HardwareSpec(**{**_A100.model_dump(), "name": "a800", "scale_up_bandwidth": 200e9, "sources": {
    **_A100.sources,
    "scale_up_bandwidth": "NVIDIA A800 40GB Active / A800 SXM 80GB product brief: NVLink 400 GB/s bidirectional -> "
                          "200 GB/s one-way (A100 SXM: 600 GB/s); compute, HBM and SMs as A100 80GB SXM"}})

#: GH200 Grace Hopper superchip (96 GB HBM3 version): the H100's tensor cores and SMs beside a Grace CPU on a 900 GB/s
#: NVLink-C2C (450 GB/s per direction), which is the host link activation offloading uses; every other number is the
#: h100-sxm entry's but the node: 4 superchips with a 200 Gb/s NIC each, as the GH200 systems with public training runs
#: (CSCS Alps, JSC JUPITER) are built
HARDWARE["gh200"] = HardwareSpec(**{
    **_H100.model_dump(), "name": "gh200", "hbm_bytes": 96 * GiB, "hbm_bandwidth": 4.0e12, "host_bandwidth": 450e9,
    "scale_up_size": 4, "scale_out_bandwidth": 25e9,
    "sources": {**_H100.sources,
                "scale_up_size": "4 GH200 superchips per node, NVLink between them (the GH200 HPC nodes: HPE Cray EX254n "
                                 "of CSCS Alps, JSC JUPITER's BullSequana XH3000 booster blades); 18 NVLink 4 links "
                                 "per GPU as on H100 SXM (scale_up_bandwidth kept)",
                "scale_out_bandwidth": "one 200 Gb/s NIC per superchip (Alps: 4 HPE Slingshot-11 per node; JUPITER: 4 "
                                       "InfiniBand NDR200 per node) -> 25 GB/s per GPU",
                "hbm": "NVIDIA GH200 Grace Hopper Superchip datasheet: 96GB HBM3 at 4 TB/s (144GB HBM3e at 4.9 TB/s on "
                       "the later version: a hardware file with hbm_bytes / hbm_bandwidth)",
                "host_bandwidth": "NVIDIA GH200 datasheet: NVLink-C2C 900 GB/s bidirectional CPU-GPU -> 450 GB/s per "
                                  "direction"}})

#: NVIDIA V100 SXM2 32GB in a DGX-2 (16 GPUs on NVSwitch), the node of the V100 runs with public layouts (Megatron-LM
#: 2019 on DGX-2H, the ZeRO paper's 25 DGX-2): fp16 tensor cores only (no bf16, no TF32), so precision is fp16-mixed.
#: GEMM rates derived as the AMD entries' are: Markidis et al. 2018's best measured cuBLAS GEMM (83 of 125 TFLOPS) x
#: Hopper's end-to-end over isolated-GEMM ratio; nothing fitted
_V100_ISOLATED = 83e12 / 125e12
HARDWARE["v100"] = HardwareSpec(
    name="v100", peak_flops_bf16=125e12, bf16_tensor_cores=False, peak_flops_fp32=15.7e12, hbm_bytes=32 * GiB,
    hbm_bandwidth=900e9, scale_up_size=16, scale_up_bandwidth=150e9, scale_out_bandwidth=6.25e9,
    matmul_efficiency=round(_V100_ISOLATED * _HOPPER_KEEPS, 2), isolated_matmul_efficiency=round(_V100_ISOLATED, 3),
    scale_up_efficiency=HARDWARE["a100-80gb"].scale_up_efficiency, scale_out_efficiency=0.85, sm_count=80,
    compute_arch="volta", host_bandwidth=16e9,
    sources={
        "peak_flops": "NVIDIA, 'Programming Tensor Cores in CUDA 9': V100 tensor cores up to 125 TFLOPS (fp16 inputs, "
                      "fp16 / fp32 accumulation; 640 tensor cores x 64 FMA x 2 x 1.53 GHz = 125.3 TFLOPS); peak_flops_bf16 "
                      "holds this fp16 rate: Volta has no bf16 tensor cores (bf16_tensor_cores False: --precision "
                      "fp16-mixed)",
        "peak_flops_fp32": "V100 SXM2: 15.7 TFLOPS fp32 on CUDA cores at 1.53 GHz (Cornell Virtual Workshop, 'GPU "
                           "example: Tesla V100'); no TF32 tensor cores before Ampere",
        "hbm": "V100 SXM2 32GB: 32 GB HBM2 at 900 GB/s (4,096-bit bus; the Megatron-LM 2019 and ZeRO papers' V100 32GB)",
        "sm_count": "Volta whitepaper Table 1: 80 SMs on Tesla V100 (84 on the full GV100), 8 tensor cores each",
        "gemm_tiles": _CUTLASS + " (assumed for Volta's cuBLAS)",
        "scale_up_bandwidth": "NVLink 2: 6 links x 25 GB/s per direction = 150 GB/s one-way per GPU (NVIDIA DGX-1 V100 "
                              "system architecture); DGX-2: 16 GPUs on NVSwitch at that rate, any to any (DGX-1's "
                              "8-GPU hybrid cube mesh: --scale-up-size 8)",
        "scale_out_bandwidth": "DGX-2: 8x 100 Gb/s EDR InfiniBand per 16 GPUs (the ZeRO paper's 800 Gbps per node) -> "
                               "6.25 GB/s per GPU (DGX-1: 4x EDR per 8 GPUs, the same per GPU)",
        "host_bandwidth": "PCIe Gen3 x16: 16 GB/s per direction (PCI-SIG: 8 GT/s x 16 lanes, 128b/130b)",
        "isolated_matmul_efficiency": f"{_V100_ISOLATED:.3f}: Markidis et al. 2018, 'NVIDIA Tensor Core Programmability, "
                                      "Performance & Precision' (IPDPSW): cuBLAS GEMM reaches 83 of the V100's 125 "
                                      "TFLOPS in mixed precision",
        "matmul_efficiency": f"{_V100_ISOLATED:.3f} (Markidis et al. 2018, isolated cuBLAS GEMM) x {_HOPPER_KEEPS:.3f} "
                             "(the h100-sxm entry's end-to-end 0.59 over its isolated ~0.73): derived, not fitted; "
                             "checked on the Megatron-LM V100 runs (docs/accuracy.md)",
        "compute_arch": "Volta (sm_70): FlashAttention needs Ampere or newer (FlashAttention-2 README), so V100 runs "
                        "use --attention naive; no attention-kernel table (the attention core at the GEMM rate)",
        "scale_up_efficiency": _NCCL + " (the A100's fraction, assumed for NVLink 2)", "scale_out_efficiency": _IB,
        "latency": _LAT})

#: AMD Instinct MI250X, one GCD as PyTorch / JAX see it (a package holds two), in the 8-GCD nodes of Frontier and
#: LUMI-G (4 MI250X, 4 Slingshot-11 NICs). No measured GEMM rate was found for CDNA 2: the mi300x entry's derived
#: rates are assumed, as for the mi355x entry
_MI300X = HARDWARE["mi300x"]
HARDWARE["mi250x"] = HardwareSpec(
    name="mi250x", peak_flops_bf16=191.5e12, peak_flops_fp32=47.85e12, hbm_bytes=64 * GiB, hbm_bandwidth=1.6384e12, scale_up_size=8,
    scale_up_bandwidth=100e9, scale_out_bandwidth=12.5e9, matmul_efficiency=_MI300X.matmul_efficiency,
    scale_up_efficiency=_MI300X.scale_up_efficiency, scale_out_efficiency=0.85, sm_count=110, compute_arch="cdna2",
    host_bandwidth=36e9,
    sources={
        "peak_flops": "AMD CDNA 2 whitepaper Table 1: MI250X 383.0 TFLOPS fp16 / bf16 per package of 2 GCDs (endnote "
                      "MI200-05: 1,700 MHz); one GCD 191.5 (ROCm/hipBLAS#534: a GCD is one device, 1.7 GHz x 110 CUs x "
                      "1,024 FLOP per clock); no fp8 or TF32 units on CDNA 2",
        "peak_flops_fp32": "AMD CDNA 2 whitepaper Table 1: MI250X fp32 matrix 95.7 TFLOPS per package -> 47.85 per GCD "
                           "(a quarter of its bf16 rate; no TF32)",
        "hbm": "per GCD 64 GB HBM2e at 1.6384 TB/s (CDNA 2 whitepaper endnote MI200-30: 128 GB, 3.2768 TB/s per "
               "package; OLCF Frontier user guide)",
        "sm_count": "110 compute units per GCD (OLCF Frontier user guide; LUMI-G docs: 220 per MI250X)",
        "gemm_tiles": _CUTLASS + " (assumed for rocBLAS / hipBLASLt)",
        "scale_up_bandwidth": "Frontier / LUMI-G node: 8 GCDs; Infinity Fabric 200 GB/s per direction between the two "
                              "GCDs of a package, 50-100 GB/s (1 or 2 links) between GCDs of different packages (OLCF "
                              "Frontier user guide, node diagram): a ring over the 8 GCDs runs at its slowest hop, "
                              "100 GB/s where it crosses packages over 2-link pairs (assumed)",
        "scale_out_bandwidth": "4x HPE Slingshot-11 200 Gb/s NICs per 8-GCD node (OLCF Frontier user guide; LUMI-G "
                               "docs: one per MI250X) -> 12.5 GB/s per GCD",
        "host_bandwidth": "OLCF Frontier user guide: 36 GB/s per direction between the CPU and each GCD (Infinity "
                          "Fabric CPU-GPU)",
        "matmul_efficiency": "the mi300x entry's derived rate (AMD publishes no Max-Achievable FLOPs for CDNA 2; no "
                             "measured MI250X GEMM found): assumed, not fitted, as for the mi355x entry",
        "scale_up_efficiency": "the mi300x entry's (Infinity Fabric, assumed)", "scale_out_efficiency": _IB,
        "latency": _LAT})

#: AMD Instinct MI350X: the MI355X's CDNA 4 die (256 CUs, 288 GB HBM3E, 8-GPU Infinity Fabric platform) at a lower
#: peak engine clock and board power (air-cooled, 1,000 W against 1,400 W): every entry of the mi355x preset but the
#: peaks, which scale with the clock
_MI355X = HARDWARE["mi355x"]
HARDWARE["mi350x"] = HardwareSpec(**{
    **_MI355X.model_dump(), "name": "mi350x", "peak_flops_bf16": 2306.9e12, "peak_flops_fp8": 4613.7e12,
    "peak_flops_fp32": 144.2e12,
    "sources": {**_MI355X.sources,
                "peak_flops": "AMD Instinct MI350X (CDNA 4): 256 compute units x 2.2 GHz peak engine clock x 4,096 "
                              "bf16 FLOP per clock per CU = 2,306.9 TFLOPS bf16, fp8 twice that (AMD: 2.3 / 4.6 "
                              "PFLOPS dense; the MI355X's 2.4 GHz gives its 2.5 / 5.0)",
                "peak_flops_fp32": "AMD MI350X: 144.2 TFLOPS fp32 (the MI355X's 157.3 at 2.2 / 2.4 GHz; no TF32 on CDNA 4)",
                "hbm": "AMD MI350X datasheet: 288 GB HBM3E, 8 TB/s (as the MI355X); ROCm docs, AMD GPU specifications: VRAM 288 GiB",
                "scale_up_bandwidth": "the MI355X's platform (same 7 Infinity Fabric links of 153.6 GB/s): "
                                      + _MI355X.sources["scale_up_bandwidth"],
                "matmul_efficiency": "the mi355x entry's (AMD's Max-Achievable-FLOPs CDNA 3 rates; no MI350X GEMM "
                                     "measurement public): assumed, not fitted"}})

# ----- Host memory (offloaded model state, HardwareSpec.host_memory_bytes) --------------------------------------
#: system memory of one host of the reference platform, bytes (DIMM capacities are binary: "2 TB" of 32 DIMMs is
#: 32 x 64 GiB). Only platforms with a datasheet figure; elsewhere (TPU hosts, AMD and HGX-only platforms, GH200 nodes,
#: whose memory varies by integrator) host memory is shown, not checked
TiB = 2**40
_DGX_BASEPOD = ("NVIDIA DGX BasePOD reference architecture, core components: DGX H100 / H200 '2 TB of DDR5 system "
                "memory' (32 x 64 GiB DIMMs)")
_HOST_MEMORY = {
    "a100-40gb": (1 * TiB, "NVIDIA DGX A100 datasheet: DGX A100 320GB system memory 1 TB"),
    "a100-80gb": (2 * TiB, "NVIDIA DGX A100 datasheet: DGX A100 640GB system memory 2 TB"),
    "h100-sxm": (2 * TiB, _DGX_BASEPOD), "h200": (2 * TiB, _DGX_BASEPOD),
    "b200": (2 * TiB, "NVIDIA DGX B200 user guide, hardware overview: system memory '2 TB using 32 x DIMMs "
                      "(upgradable to 4 TB)'"),
    "gb200": (960e9, "NVIDIA GB200 NVL72: each Grace CPU has up to 480 GB LPDDR5X (36 Grace for 72 GPUs, 'up to 17 TB' "
                     "per rack); a compute tray (2 Grace, 4 GPUs) up to 960 GB"),
}
for _name, (_bytes, _src) in _HOST_MEMORY.items():
    _h = HARDWARE[_name]
    HARDWARE[_name] = HardwareSpec(**{**_h.model_dump(), "host_memory_bytes": _bytes,
                                      "sources": {**_h.sources, "host_memory_bytes": _src}})
#: Cloud TPU hosts (one JAX process each): the chips a host drives and its memory, from Google Cloud's TPU docs (the
#: slice's scale-up size is the ICI domain, not the host)
_TPU_HOSTS = {
    "tpu-v5e": (8, 512 * GiB, "Google Cloud TPU docs, TPU v5e: 'DRAM per host 512 GiB', 'Chips per host 8'"),
    "tpu-v6e": (8, 1536 * GiB, "Google Cloud TPU docs, TPU v6e: 'DRAM per host 1536 GiB', 'Chips per host 8'"),
    "tpu-v5p": (4, 448e9, "Google Cloud TPU docs, TPU v5p training, VM, host and slice attributes: 4 v5p chips, "
                          "RAM 448 GB per host"),
}
for _name, (_chips, _bytes, _src) in _TPU_HOSTS.items():
    _h = HARDWARE[_name]
    HARDWARE[_name] = HardwareSpec(**{**_h.model_dump(), "devices_per_host": _chips, "host_memory_bytes": _bytes,
                                      "sources": {**_h.sources, "host_memory_bytes": _src, "devices_per_host": _src}})

#: other names a user or a published table gives the presets (compared without case, spaces, dashes, underscores
#: and dots: "H100 SXM5" is "h100sxm5"): exact names only, so a part the presets do not model (H100 PCIe, H100 NVL,
#: A100 PCIe) is refused with the preset list instead of priced as the SXM part. A bare "a100" is the 80 GB part
#: (the one the published A100 rows ran on unless they say 40GB)
HARDWARE_ALIASES: dict[str, str] = {
    **dict.fromkeys(("h100", "h100sxm5", "h10080gb", "h100sxm80gb", "h100sxm580gb", "dgxh100", "hgxh100"), "h100-sxm"),
    **dict.fromkeys(("h200sxm", "h200141gb", "h200sxm141gb", "dgxh200", "hgxh200"), "h200"),
    **dict.fromkeys(("a100", "a100sxm", "a100sxm4", "a100sxm80gb", "a100sxm480gb", "dgxa100"), "a100-80gb"),
    **dict.fromkeys(("a100sxm40gb", "a100sxm440gb"), "a100-40gb"),
    **dict.fromkeys(("a800sxm", "a80080gb", "a800sxm80gb"), "a800"),
    **dict.fromkeys(("h800sxm", "h80080gb"), "h800"),
    **dict.fromkeys(("b200sxm", "dgxb200", "hgxb200"), "b200"),
    **dict.fromkeys(("b300sxm", "dgxb300", "hgxb300"), "b300"),
    **dict.fromkeys(("gb200nvl72",), "gb200"), **dict.fromkeys(("gb300nvl72",), "gb300"),
    # "NVIDIA GH200 480GB": the device query of the 96 GB HBM3 part (480 GB is its Grace LPDDR5X)
    **dict.fromkeys(("gh20096gb", "gh200480gb"), "gh200"),
    # JAX's device_kind (what train --record writes): "TPU v4", "TPU v5" (v5p), "TPU v5 lite" (v5e), "TPU v6 lite" (v6e)
    **dict.fromkeys(("v4", "tpuv4"), "tpu-v4"), **dict.fromkeys(("v5p", "tpuv5p", "tpuv5"), "tpu-v5p"),
    **dict.fromkeys(("v5e", "tpuv5e", "v5litepod", "tpuv5litepod", "tpuv5lite"), "tpu-v5e"),
    **dict.fromkeys(("v6e", "tpuv6e", "trillium", "tpuv6etrillium", "tpuv6lite"), "tpu-v6e"),
    # JAX's device_kind on Ironwood is "TPU7x" (jax pallas tpu_info.py); Google Cloud names it TPU7x / Ironwood
    **dict.fromkeys(("tpu7x", "v7x", "tpuv7x", "tpuv7", "ironwood", "tpu7xironwood"), "tpu7x"),
    **dict.fromkeys(("instinctmi300x", "amdmi300x"), "mi300x"), **dict.fromkeys(("instinctmi325x", "amdmi325x"), "mi325x"),
    **dict.fromkeys(("instinctmi355x", "amdmi355x"), "mi355x"), **dict.fromkeys(("instinctmi350x", "amdmi350x"), "mi350x"),
    **dict.fromkeys(("v100sxm2", "v10032gb", "v100sxm232gb", "teslav100", "dgx2", "dgx2h"), "v100"),
    **dict.fromkeys(("instinctmi250x", "amdmi250x", "mi250xgcd"), "mi250x"),
}


def squeeze_hardware_name(text: str) -> str:
    """``text`` lower-cased without whitespace, dashes, underscores and dots (the key of :data:`HARDWARE_ALIASES`)."""
    return "".join(ch for ch in text.lower() if ch not in "-_." and not ch.isspace())


#: vendor words device queries print before the part (nvidia-smi "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB";
#: rocm-smi "AMD Instinct MI250X") and the memory-kind suffix, dropped when the whole name matches nothing
_VENDOR_PREFIXES = ("nvidia", "tesla", "amd", "instinct")
_MEMORY_SUFFIXES = ("hbm3e", "hbm3", "hbm2e", "hbm2")


def hardware_preset_name(text: str) -> str | None:
    """The preset ``text`` names: a preset name in any case, or an entry of :data:`HARDWARE_ALIASES`
    (``"H100 SXM5"`` -> ``"h100-sxm"``), also after dropping the vendor words and memory kind device queries print
    (:data:`_VENDOR_PREFIXES`, :data:`_MEMORY_SUFFIXES`: ``"NVIDIA H100 80GB HBM3"`` -> ``"h100-sxm"``); None when it
    names none."""
    key = squeeze_hardware_name(text)
    by_key = {squeeze_hardware_name(name): name for name in HARDWARE}
    found = by_key.get(key) or HARDWARE_ALIASES.get(key)
    if found is None:
        short = key
        while short.startswith(_VENDOR_PREFIXES):
            short = short[len(next(p for p in _VENDOR_PREFIXES if short.startswith(p))):]
        short = next((short[:-len(x)] for x in _MEMORY_SUFFIXES if short.endswith(x)), short)
        if short != key and short:
            found = by_key.get(short) or HARDWARE_ALIASES.get(short)
    return found
