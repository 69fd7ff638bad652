"""Time of one GEMM from its shape, and of the attention core from its kernel's published speed.

GEMM (``C[M, N] = A[M, K] B[K, N]``, ``batch`` independent problems). Source: NVIDIA, "Matrix
Multiplication Background User's Guide" (Deep Learning Performance docs, DU-09799-001, 2023):

* Sec. 2.1: the library splits C into output tiles, one thread block per tile, each stepping
  through K; Sec. 2.3: cuBLAS tiles are 256x128, 128x256, 128x128, ... (larger tiles reuse more
  data and run faster; CUTLASS's Hopper kernels use 128x256x64 and 256x128x64 with a K step of
  64 elements for 16-bit inputs);
* Sec. 3.1 *tile quantization*: M and N are padded up to whole tiles (and K to whole K steps);
* Sec. 3.2 *wave quantization*: the tiles run in waves of ``sm_count`` (one tile per SM; the
  guide's example: an A100's 108 SMs run a wave of 108 256x128 tiles), and a partial last wave
  takes a whole wave's time;
* Sec. 2 (math vs memory bound): arithmetic intensity ``2 M N K / (bytes of A + B + C)``; below
  the ridge ``C / W_hbm`` the GEMM is limited by HBM (roofline, Williams et al. 2009).

When there are fewer output tiles than SMs (e.g. the weight-gradient GEMM of a 256-wide tensor
shard), the K loop is split over several thread blocks whose fp32 partial tiles are then summed
(*split-K*, CUTLASS ``GemmSplitKSerial``; *Stream-K*, Osama et al. 2023, generalizes it); each
slice after the first writes and reads back an fp32 partial: ``8 B x (split - 1) x M x N`` of HBM
traffic.

Each output tile (or split-K slice) also pays a fixed ``gemm_fill_steps`` main-loop steps: the
software pipeline's prologue, which issues the first stages' loads before the first MMA, and the
epilogue, which stores the tile (CUTLASS multistage / warp-specialized mainloops; NVIDIA CUTLASS
docs "Efficient GEMM in CUDA", software pipelining). It makes GEMMs with a short K loop slow: on an
H200 with cuBLAS (PyTorch 2.11, CUDA 13), K = 256 runs at 0.54 and K = 1,024 at 0.84 of the
long-K rate, fitted by 2.85 steps of 64 (``shardplan.fitting.fit_gemm_constants`` on
``benchmarks/device_runs/h200_2026-12-04.json``, docs/device.md). Where the library has a Stream-K
scheduler (``gemm_stream_k``) a partial last wave is dealt out evenly over the SMs instead of
running as a whole wave (Osama et al. 2023): measured there, a 96-tile weight gradient ran at the
full rate where whole waves predict 96 / 132 = 0.73.

Per-SM throughput inside a full wave is the hardware's *large-GEMM asymptote*
``matmul_efficiency x peak / sm_count`` (at infinite K when ``gemm_fill_steps`` > 0): the one
constant of this model that is fitted (see ``shardplan/presets/hardware.py``). Every tile shape
gets that rate (stated simplification: the guide's smaller tiles are somewhat slower, so shapes that only suit small tiles come out a little
optimistic). TPUs (``sm_count`` None) get tile quantization on the MXU
grid (128x128 on v4/v5, 256x256 on v6e; Scaling Book tpus.md) and no waves.

Attention core: FlashAttention kernels, speed per (kernel, architecture) from their authors'
published benchmarks; see :class:`AttentionKernel` and :func:`attention_kernel`.

Units: elements for shapes, bytes, seconds, FLOP/s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from shardplan.specs.hardware import HardwareSpec

#: fewest K steps one split-K slice keeps (below it the fp32 fix-up costs more than it saves);
#: CUTLASS's split-K examples slice K into >= 4 main-loop iterations (stated assumption)
MIN_K_STEPS_PER_SPLIT = 4


@dataclass(frozen=True)
class GemmShape:
    """``batch`` independent products ``C[m, n] = A[m, k] B[k, n]`` (elements)."""

    m: int
    n: int
    k: int
    batch: int = 1

    @property
    def flops(self) -> float:
        """Useful FLOPs: 2 m n k per problem."""
        return 2.0 * self.m * self.n * self.k * self.batch

    def backward(self) -> tuple["GemmShape", "GemmShape"]:
        """The two backward GEMMs of ``Y = X W`` with this forward shape (Narayanan et al. 2021
        Sec. 5.1: backward = 2 x forward FLOPs): input gradient ``dX[m, k] = dY[m, n] W^T`` and
        weight gradient ``dW[k, n] = X^T dY`` (reduction over the m tokens)."""
        return GemmShape(self.m, self.k, self.n, self.batch), GemmShape(self.k, self.n, self.m, self.batch)


@dataclass(frozen=True)
class GemmTime:
    """Predicted time of one GEMM and why.

    Attributes:
        seconds: max(math_s, memory_s).
        math_s: tensor-core time with tile and wave quantization.
        memory_s: HBM time of A, B, C (and split-K partials).
        tile: the output tile the library would pick (fastest).
        tiles: output tiles (all problems of the batch).
        waves: waves of ``sm_count`` thread blocks (0 on TPUs).
        split_k: K slices per tile (1 = none).
        flops: useful FLOPs.
    """

    seconds: float
    math_s: float
    memory_s: float
    tile: tuple[int, int]
    tiles: int
    waves: int
    split_k: int
    flops: float

    @property
    def memory_bound(self) -> bool:
        """HBM traffic, not the tensor cores, sets the time."""
        return self.memory_s > self.math_s


def _wave_options(shape: GemmShape, tile: tuple[int, int], sms: int | None, k_tile: int
                  ) -> list[tuple[int, int, int, int]]:
    """(tiles, waves, split, K steps per slice) for each way to run ``shape`` with ``tile``
    (guide Sec. 3.1-3.2): ``split`` = 1, and when there are fewer tiles than SMs every split-K
    factor up to two waves of slices that leaves each slice ``MIN_K_STEPS_PER_SPLIT`` steps."""
    tm, tn = tile
    tiles = shape.batch * math.ceil(shape.m / tm) * math.ceil(shape.n / tn)
    steps = math.ceil(shape.k / k_tile)
    if sms is None:  # TPU: padded dimensions, no waves
        return [(tiles, 0, 1, steps)]
    top = 1 if tiles >= sms else max(1, min(steps // MIN_K_STEPS_PER_SPLIT, math.ceil(2 * sms / tiles)))
    return [(tiles, math.ceil(tiles * s / sms), s, math.ceil(steps / s)) for s in range(1, top + 1)]


def _stream_k_steps(tiles: int, steps: int, sms: int, fill: float) -> float:
    """Main-loop steps of the busiest SM when the ``tiles x steps`` iterations are dealt out evenly
    (Stream-K, Osama et al. 2023, Sec. 4: each CTA takes an equal share of the MAC-loop iterations,
    crossing tile boundaries): ``tiles x (steps + fill) / sms`` plus one more ``fill`` for the tile
    an SM starts part-way through."""
    return tiles * (steps + fill) / sms + fill


@dataclass(frozen=True)
class GemmDevice:
    """What :func:`gemm_time` needs of the hardware for one dtype (hashable, built once per estimate).

    Attributes:
        sms: ``sm_count`` (None: TPU, no waves).
        tiles: the library's output tile shapes.
        k_tile: K elements per main-loop step.
        rate: large-GEMM FLOP/s of the whole chip (``matmul_efficiency x peak``).
        hbm: achieved HBM bytes/s (``hbm_efficiency x hbm_bandwidth``).
        fill: fixed K steps per tile (``HardwareSpec.gemm_fill_steps``; GPUs only).
        stream_k: Stream-K decomposition available (``HardwareSpec.gemm_stream_k``).
    """

    sms: int | None
    tiles: tuple[tuple[int, int], ...]
    k_tile: int
    rate: float
    hbm: float
    fill: float = 0.0
    stream_k: bool = False

    @classmethod
    def of(cls, hw: HardwareSpec, dtype: str = "bf16") -> "GemmDevice":
        """The GEMM view of ``hw`` in ``dtype``.

        Raises:
            ConfigError: if ``dtype`` has no peak on ``hw`` (:meth:`HardwareSpec.achieved_matmul_flops`).
        """
        # a K step holds the same bytes per row: 64 bf16, 128 fp8 or 256 fp4 elements on GPUs (CUTLASS sm90
        # kernels: 128x256x64 for 16-bit, 128x256x128 for 8-bit inputs; sm100 block-scaled NVFP4 kernels:
        # MMA tile 128x128x256); TPU MXUs take 128 either way
        k_tile = hw.gemm_k_tile * ({"fp8": 2, "fp4": 4}.get(dtype, 1) if hw.sm_count is not None else 1)
        gpu = hw.sm_count is not None
        return cls(hw.sm_count, tuple(hw.gemm_tiles), k_tile, hw.achieved_matmul_flops(dtype),
                   hw.hbm_bandwidth * hw.hbm_efficiency, hw.gemm_fill_steps if gpu else 0.0, hw.gemm_stream_k and gpu)


@lru_cache(maxsize=65536)
def _gemm_time(shape: GemmShape, dev: GemmDevice, in_bytes: float, out_bytes: float) -> GemmTime:
    """:func:`gemm_time` (cached: the search prices the same shapes many times)."""
    b, m, n, k = shape.batch, shape.m, shape.n, shape.k
    base_traffic = b * (in_bytes * (m * k + k * n) + out_bytes * m * n)
    best: GemmTime | None = None
    for tile in dev.tiles:
        step_s = 2.0 * tile[0] * tile[1] * dev.k_tile / (dev.rate / dev.sms if dev.sms else dev.rate)
        options = [(tiles, waves, split, (waves if dev.sms else tiles) * (steps + dev.fill), (split - 1) * 8.0)
                   for tiles, waves, split, steps in _wave_options(shape, tile, dev.sms, dev.k_tile)]
        if dev.stream_k and dev.sms:  # one fp32 partial per output element (written and read back)
            tiles = options[0][0]  # this tile shape's output tiles (every split-K option has the same count)
            options.append((tiles, 1, 1, _stream_k_steps(tiles, math.ceil(k / dev.k_tile), dev.sms, dev.fill), 8.0))
        for tiles, waves, split, step_count, partial_bytes in options:
            math_s = step_count * step_s
            memory_s = (base_traffic + b * partial_bytes * m * n) / dev.hbm  # fp32 partials out and in
            t = GemmTime(max(math_s, memory_s), math_s, memory_s, tile, tiles, waves, split, shape.flops)
            if best is None or t.seconds < best.seconds:
                best = t
    assert best is not None
    return best


def gemm_time(shape: GemmShape, hw: HardwareSpec | GemmDevice, dtype: str = "bf16", in_bytes: float = 2.0,
              out_bytes: float = 2.0) -> GemmTime:
    """Seconds of one GEMM: the fastest of the hardware's tile shapes and split-K factors (cuBLAS's
    heuristic picks among them, guide Sec. 2.3), each with tile and wave quantization, against the
    HBM time of reading A and B (``in_bytes`` per element), writing C (``out_bytes``; 8 for a
    weight gradient accumulated into an fp32 buffer: read + write 4 B) and, with split-K, writing
    and reading back ``split - 1`` fp32 partial outputs; roofline max of the two.

    Per-SM rate in a full wave: ``matmul_efficiency x peak / sm_count`` (the large-GEMM asymptote).
    ``hw`` may be a prepared :class:`GemmDevice` (then ``dtype`` is ignored).

    Raises:
        ConfigError: if ``dtype`` has no peak on ``hw``.
    """
    dev = hw if isinstance(hw, GemmDevice) else GemmDevice.of(hw, dtype)
    return _gemm_time(shape, dev, float(in_bytes), float(out_bytes))


@lru_cache(maxsize=65536)
def training_gemm_parts(shape: GemmShape, dev: GemmDevice, in_bytes: float, wgrad_out_bytes: float,
                        math_only: bool = False) -> tuple[float, float, float, bool]:
    """(forward, input-gradient, weight-gradient) seconds of a linear layer with forward GEMM ``shape``
    (:meth:`GemmShape.backward`) and whether its forward is HBM-bound; the weight gradient writes
    ``wgrad_out_bytes`` per element. Outputs of the forward and input-gradient GEMMs are 16-bit (2 B)
    even with 1-byte fp8 inputs. ``math_only``: tensor-core time only (the caller counts the operands'
    HBM traffic elsewhere)."""
    out_b = max(2.0, in_bytes)
    dgrad, wgrad = shape.backward()
    times = [gemm_time(g, dev, in_bytes=in_bytes, out_bytes=o)
             for g, o in ((shape, out_b), (dgrad, out_b), (wgrad, wgrad_out_bytes))]
    sec = [t.math_s if math_only else t.seconds for t in times]
    return sec[0], sec[1], sec[2], times[0].memory_bound and not math_only


def training_gemm_seconds(shape: GemmShape, dev: GemmDevice, in_bytes: float, wgrad_out_bytes: float,
                          math_only: bool = False) -> tuple[float, float, bool]:
    """(forward, backward) seconds of a linear layer with forward GEMM ``shape`` and whether its
    forward is HBM-bound: :func:`training_gemm_parts` with the backward's input- and weight-gradient
    GEMMs summed."""
    f, d, w, bound = training_gemm_parts(shape, dev, in_bytes, wgrad_out_bytes, math_only)
    return f, d + w, bound


@dataclass(frozen=True)
class AttentionKernel:
    """Speed of one fused-attention kernel on one architecture, as a fraction of the bf16 peak.

    ``efficiency = peak_fraction x d / (d + d_half) x s_e / (s_e + s_half)`` with ``d`` the head
    dimension and ``s_e`` the key length a query block loops over (``s``, or ``s / 2`` when causal):

    * every key block costs two ``B_r x B_c x d`` matmuls on the tensor cores plus softmax work on
      the ``B_r x B_c`` scores (exp, row max, rescale) on the slower non-tensor units, which does
      not shrink with ``d`` (FlashAttention-2, Dao 2023, Sec. 3.1: "non-matmul FLOPs"), hence
      ``d / (d + d_half)``;
    * every query block pays fixed work (load Q, write O and the log-sum-exp; in the backward the
      dQ accumulation and the dK, dV writes) amortized over its ``s_e / B_c`` key blocks, hence
      ``s_e / (s_e + s_half)``; causal masking (partly masked diagonal blocks, unequal work per
      block) multiplies ``s_half`` by ``causal_factor``.

    Backward FLOPs are 2.5 x forward (five matmuls instead of two; the convention of
    Dao-AILab/flash-attention ``benchmarks/benchmark_flash_attention.py``, ``flops(..., mode="bwd")``).

    Attributes:
        name, arch: kernel and architecture.
        fwd_peak_fraction, bwd_peak_fraction: asymptotic fraction of the bf16 dense peak.
        d_half: head dimension at which the softmax work halves the rate.
        s_half_fwd, s_half_bwd: key length at which per-query-block costs halve the rate.
        causal_factor: multiplier on ``s_half`` under a causal mask.
        source: where the constants come from.
    """

    name: str
    arch: str
    fwd_peak_fraction: float
    bwd_peak_fraction: float
    d_half: float
    s_half_fwd: float
    s_half_bwd: float
    causal_factor: float
    source: str

    def efficiency(self, head_dim: int, seq: float, causal: bool, phase: str) -> float:
        """Fraction of the bf16 peak reached in ``phase`` ('fwd' or 'bwd') for key length ``seq``."""
        peak = self.fwd_peak_fraction if phase == "fwd" else self.bwd_peak_fraction
        s_half = (self.s_half_fwd if phase == "fwd" else self.s_half_bwd) * (self.causal_factor if causal else 1.0)
        s_e = seq / 2 if causal else seq
        return peak * head_dim / (head_dim + self.d_half) * s_e / (s_e + s_half)


_FA3_FIG = ("least-squares fit (rms 2-6%) to the H100 80GB SXM5 bf16 benchmark of Shah et al. 2024, "
            "FlashAttention-3, Fig. 5-6 (head dim 64 and 128, seq 512-16k, batch x seq = 16k, hidden 2048, "
            "causal and not; tables in tests/test_compute_shape.py)")
_FA2_A100 = ("FlashAttention-2 (Dao 2023) Sec. 4.1 on A100: forward up to 73%, backward up to 63% of the peak "
             "(head dim 128, long sequences); head-dim and length terms of the same kernel on H100 (FA3 paper)")


def _fa2_ampere() -> AttentionKernel:
    """FA2 on A100: the H100 FA2 shape terms, peaks scaled so that head dim 128 at 16k keys (not
    causal) gives the paper's 73% forward and 63% backward."""
    h = ATTENTION_KERNELS[("fa2", "hopper")]
    shape_f = h.efficiency(128, 16384, False, "fwd") / h.fwd_peak_fraction
    shape_b = h.efficiency(128, 16384, False, "bwd") / h.bwd_peak_fraction
    return AttentionKernel("fa2", "ampere", 0.73 / shape_f, 0.63 / shape_b, h.d_half, h.s_half_fwd,
                           h.s_half_bwd, h.causal_factor, _FA2_A100)


#: (kernel, architecture) -> published speed; fitted constants, see _FA3_FIG
ATTENTION_KERNELS: dict[tuple[str, str], AttentionKernel] = {
    ("fa2", "hopper"): AttentionKernel("fa2", "hopper", 0.412, 0.378, 17.0, 64.3, 263.0, 3.34, _FA3_FIG),
    ("fa3", "hopper"): AttentionKernel("fa3", "hopper", 0.980, 0.915, 59.2, 219.0, 418.0, 1.67, _FA3_FIG),
    ("cudnn", "hopper"): AttentionKernel("cudnn", "hopper", 0.844, 0.828, 57.8, 125.0, 361.0, 1.68, _FA3_FIG),
}
ATTENTION_KERNELS[("fa2", "ampere")] = _fa2_ampere()

_BLACKWELL = ("Blackwell (B200), not fitted: cuDNN's forward at its rate in Zadouri et al. 2026, FlashAttention-4 (arXiv "
              "2603.05451), abstract: FA4 reaches 1,613 TFLOP/s in bf16, up to 1.3x cuDNN 9.13, so cuDNN ~1,240 "
              "TFLOP/s = 0.551 of 2.25 PF, and its backward at the Hopper cuDNN backward / forward ratio (0.981); "
              "FlashAttention-2 has no Blackwell code path: its Hopper rates x 148 / 132 SMs (its softmax and "
              "shared-memory work per SM, which bound it, did not grow: same paper, Sec. 2); head-dim and length "
              "terms of the Hopper kernels")


def _blackwell(name: str) -> AttentionKernel:
    """The Hopper kernel ``name`` moved to B200 (:data:`_BLACKWELL`; peaks and SM counts from the presets)."""
    from shardplan.presets.hardware import HARDWARE
    b200, h100 = HARDWARE["b200"], HARDWARE["h100-sxm"]
    h = ATTENTION_KERNELS[(name, "hopper")]
    if name == "cudnn":
        fwd = 1613e12 / 1.3 / b200.peak_flops_bf16
        bwd = fwd * h.bwd_peak_fraction / h.fwd_peak_fraction
    else:
        scale = h100.peak_flops_bf16 * b200.sm_count / (h100.sm_count * b200.peak_flops_bf16)
        fwd, bwd = h.fwd_peak_fraction * scale, h.bwd_peak_fraction * scale
    return AttentionKernel(name, "blackwell", fwd, bwd, h.d_half, h.s_half_fwd, h.s_half_bwd, h.causal_factor,
                           _BLACKWELL)


for _k in ("cudnn", "fa2"):
    ATTENTION_KERNELS[(_k, "blackwell")] = _blackwell(_k)

_BLACKWELL_ULTRA = ("Blackwell Ultra (B300): the Blackwell kernel with d_half halved. d_half measures the softmax work "
                    "per score, which on Blackwell the exponential bounds (MUFU.EX2 on the special function units: "
                    "Zadouri et al. 2026, FlashAttention-4, Sec. 3); Blackwell Ultra doubles that unit's throughput "
                    "(NVIDIA technical blogs 'Inside NVIDIA Blackwell Ultra' and 'Making Softmax More Efficient with "
                    "NVIDIA Blackwell Ultra': 2x SFU throughput for attention). Head dim 128: d / (d + d_half) "
                    "0.69 -> 0.82 for cuDNN. Not measured on Blackwell Ultra; ")


def _blackwell_ultra(name: str) -> AttentionKernel:
    """The Blackwell kernel ``name`` with the softmax work per score halved (:data:`_BLACKWELL_ULTRA`)."""
    b = ATTENTION_KERNELS[(name, "blackwell")]
    return AttentionKernel(name, "blackwell-ultra", b.fwd_peak_fraction, b.bwd_peak_fraction, b.d_half / 2,
                           b.s_half_fwd, b.s_half_bwd, b.causal_factor, _BLACKWELL_ULTRA + b.source)


for _k in ("cudnn", "fa2"):
    ATTENTION_KERNELS[(_k, "blackwell-ultra")] = _blackwell_ultra(_k)

#: speed of llm-foundry's Triton FlashAttention relative to FlashAttention-2 on the same chip (forward and
#: backward alike): fitted on the llm-foundry benchmarking README's H100 and A100 rows that are not in the
#: shared set (benchmarks/fit_frameworks.py ``triton_attention_table``; each chip's rows predicted by the
#: fit on the other chip's are in docs/accuracy.md). The FlashAttention-2 paper (Dao 2023, Sec. 4.1) reports
#: FA2 1.3-2.5x faster than "FlashAttention in Triton" on A100, i.e. 0.4-0.77 of its speed
TRITON_FLASH_SPEED = 0.53
_TRITON = ("llm-foundry's Triton FlashAttention (llmfoundry/models/layers/flash_attn_triton.py; MPT yamls and "
           "scripts/train/benchmarking/submit_benchmarks.py default attn_impl: triton): the FlashAttention-2 kernel "
           "of the same chip x TRITON_FLASH_SPEED (fitted; the FA2 paper, Sec. 4.1, puts it at 0.4-0.77 of FA2). ")


def triton_kernels(speed: float = TRITON_FLASH_SPEED) -> dict[tuple[str, str], AttentionKernel]:
    """The Triton FlashAttention on every architecture with a FlashAttention-2 entry: FA2's shape terms
    (head dim, key length, causal mask), both peaks x ``speed`` (default :data:`TRITON_FLASH_SPEED`;
    ``benchmarks/fit_frameworks.py`` passes trial values)."""
    out = {}
    for (name, arch), f in list(ATTENTION_KERNELS.items()):
        if name == "fa2":
            out[("triton", arch)] = AttentionKernel("triton", arch, f.fwd_peak_fraction * speed,
                                                    f.bwd_peak_fraction * speed, f.d_half, f.s_half_fwd,
                                                    f.s_half_bwd, f.causal_factor, _TRITON + f.source)
    return out


ATTENTION_KERNELS.update(triton_kernels())

#: the attention kernel each framework profile runs: nanotron, torchtitan (PyTorch SDPA's flash
#: backend), PyTorch FSDP (fms-fsdp: SDPA) and DeepSpeed call FlashAttention-2 (the llm-foundry profile
#: names its Triton FlashAttention in its own attention_kernel field, so that a profile file based on it
#: keeps the kernel whatever its name); Megatron-LM / NeMo go through Transformer Engine, whose default
#: on Hopper is cuDNN's fused attention (FA2 on Ampere); MaxText on GPUs runs Transformer Engine's cuDNN fused
#: attention (attention=cudnn_flash_te, what NVIDIA's MaxText GPU recipes and the MaxText export set; before the
#: fifty-fifth session a missing 'xla' entry fell back to FlashAttention-2 unsaid, new-user pass 55b), and on TPUs,
#: like shardplan's JAX runtime, XLA / Pallas kernels (no published table: the GEMM asymptote)
FRAMEWORK_ATTENTION_KERNEL = {"nanotron": "fa2", "torchtitan": "fa2", "pytorch-fsdp": "fa2",
                              "deepspeed": "fa2", "megatron": "cudnn", "megatron-legacy": "cudnn", "maxtext": "cudnn",
                              "jax-runtime": "xla"}


def kernel_head_dim(kernel: str, head_dim: int) -> int:
    """The head dimension ``kernel`` computes at for a model's ``head_dim`` (elements): fused-attention
    kernels are compiled for a few head dimensions and run a smaller one in the next one up, loading
    zeros into the padded columns, so ``Q K^T`` and ``P V`` do the padded width's work.

    * FlashAttention-2 ('fa2'): ``head_size_rounded = head_size <= 192 ?
      round_multiple(head_size, 32) : 256`` (Dao-AILab/flash-attention ``csrc/flash_attn/flash_api.cpp``
      ``mha_fwd``; the kernels are instantiated for 32, 64, ..., 192 and 256, ``static_switch.h``
      ``HEADDIM_SWITCH``);
    * FlashAttention-3 ('fa3'): 64, 96, 128, 192 or 256 (``hopper/flash_api.cpp`` ``round_up_headdim``);
    * the Triton FlashAttention ('triton', llm-foundry): the next power of two, at least 16
      (``flash_attn_triton.py``: ``BLOCK_HEADDIM = max(triton.next_power_of_2(d), 16)``);
    * cuDNN ('cudnn', Transformer Engine's fused attention): a multiple of 8, the alignment its SDPA graphs
      require (cuDNN frontend docs, "Scaled Dot Product Attention": head dims multiple of 8).

    Examples: head_dim 80 -> 96 (fa2, fa3), 128 (triton), 80 (cudnn); 108 -> 128 (fa2), 112 (cudnn); 128 -> 128.
    Other names return ``head_dim``."""
    if head_dim <= 0:
        return head_dim
    if kernel == "fa2":
        return -(-head_dim // 32) * 32 if head_dim <= 192 else max(256, head_dim)
    if kernel == "fa3":
        return next((b for b in (64, 96, 128, 192, 256) if head_dim <= b), head_dim)
    if kernel == "triton":
        return max(16, 1 << (head_dim - 1).bit_length())
    if kernel == "cudnn":
        return -(-head_dim // 8) * 8
    return head_dim


def attention_kernel(hw: HardwareSpec, framework: str, kernel: str | None = None) -> AttentionKernel | None:
    """The published kernel model for ``framework`` on ``hw`` (``kernel``, a profile's
    ``attention_kernel``, overrides the framework's default; falling back to FlashAttention-2 on the
    same architecture), or None when no table exists (the caller then prices the attention core at
    the GEMM asymptote)."""
    if hw.compute_arch is None:
        return None
    name = kernel or FRAMEWORK_ATTENTION_KERNEL.get(framework, "fa2")
    return ATTENTION_KERNELS.get((name, hw.compute_arch)) or ATTENTION_KERNELS.get(("fa2", hw.compute_arch))
