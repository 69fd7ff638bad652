"""Hardware specification: one accelerator kind and the two network levels around it.

Units: FLOP/s for compute, bytes for capacities, bytes/s for bandwidths, seconds for latencies.

Bandwidth convention (cost_models note 10.9 pitfall 1): ``scale_up_bandwidth`` and
``scale_out_bandwidth`` are the per-device bandwidth ``W`` that makes the ring formula
``T_AllGather = S * (n - 1) / (n * W)`` true for a collective over ``n`` devices of that level
(Scaling Book, "How to Scale Your Model", sharding.md "AllGather cost", and gpus.md "Collectives"):

* GPUs (switched NVLink / InfiniBand): the **one-way (unidirectional) egress per GPU**, i.e. half
  of the bidirectional figure printed on NVIDIA datasheets (H100 NVLink: 900 GB/s bidirectional
  -> 450 GB/s).
* TPUs (ICI torus with wraparound): the **bidirectional bandwidth of one link**, because a
  bidirectional ring along one torus axis moves data both ways (Scaling Book sharding.md:
  ``T = V / W_ici`` with ``W_ici`` bidirectional). A group that spans ``k`` torus axes gets
  ``k * W`` (Scaling Book sharding.md, "multiple axes").
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shardplan import limits as L

#: a measured bus bandwidth may exceed the wire-speed bound (:func:`shardplan.cost.comm.raw_bus_bw`) only by what
#: in-network reduction saves: NVLink SHARP / SHARP reduce in the switch, so a rank sends each byte once instead of
#: twice (NVIDIA NCCL docs, NVLS; H100 one-node AllReduce busbw ~480 GB/s against 450 GB/s one-way NVLink)
MAX_BUSBW_OVER_WIRE = 2.0


#: architecture families with published kernel tables (``tpu`` for every TPU generation)
ComputeArch = Literal["volta", "ampere", "hopper", "blackwell", "blackwell-ultra", "cdna2", "cdna3", "cdna4", "tpu"]


#: architectures whose matrix units multiply fp8: Hopper (NVIDIA H100 Tensor Core GPU Architecture whitepaper, the
#: FP8 Transformer Engine), Blackwell / Blackwell Ultra (Blackwell datasheets), CDNA3 / CDNA4 (AMD Instinct MI300 /
#: MI355X datasheets), TPU (Ironwood / TPU7x's fp8 MXU; Cloud TPU docs; the arch names every TPU generation);
#: Volta, Ampere (A100 whitepaper: FP16 / BF16 / TF32 / INT8 only) and CDNA2 (MI250X datasheet) have none
FP8_ARCHS = ("hopper", "blackwell", "blackwell-ultra", "cdna3", "cdna4", "tpu")
#: architectures with fp4 matrix modes: Blackwell / Blackwell Ultra (NVFP4, NVIDIA Blackwell datasheets) and CDNA4
#: (MXFP4, AMD Instinct MI355X datasheet)
FP4_ARCHS = ("blackwell", "blackwell-ultra", "cdna4")


#: the most devices a full-mesh scale-up level (``scale_up_topology: mesh``) links: the AMD Instinct platforms' 8 GPUs,
#: 7 Infinity Fabric links each (AMD MI300X / MI355X platform briefs)
MAX_MESH_SIZE = 8


class HardwareSpec(BaseModel):
    """One accelerator kind, its memory and its scale-up / scale-out networks.

    Attributes are per device unless the name says otherwise. ``sources`` maps a field name to
    its citation (vendor datasheet or the Scaling Book).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=200)
    kind: Literal["gpu", "tpu"] = "gpu"
    peak_flops_bf16: float = Field(ge=1e9, le=L.MAX_FLOPS, description="dense bf16 FLOP/s per device (datasheet sparse / 2)")
    bf16_tensor_cores: bool = Field(
        default=True, description="the matrix units run bf16; False on parts without bf16 (NVIDIA V100), where "
                                  "peak_flops_bf16 holds the fp16 tensor-core rate")
    peak_flops_fp32: float | None = Field(
        default=None, ge=1e9, le=L.MAX_FLOPS,
        description="dense FLOP/s of fp32 matmuls; None: half the 16-bit rate on GPUs (TF32 tensor cores), the bf16 "
                    "rate on TPUs (HardwareSpec.peak_flops)")
    peak_flops_fp8: float | None = Field(default=None, ge=1e9, le=L.MAX_FLOPS, description="dense fp8 FLOP/s per device")
    peak_flops_fp4: float | None = Field(default=None, ge=1e9, le=L.MAX_FLOPS,
                                         description="dense fp4 (NVFP4 block-scaled) FLOP/s per device; None: no fp4 "
                                                     "tensor cores")
    # Compute units (shardplan.cost.gemm: tile and wave quantization of GEMMs, attention kernels).
    sm_count: int | None = Field(default=None, gt=0, le=4096,
                                 description="streaming multiprocessors / compute units that each run one GEMM "
                                             "output tile at a time (a 'wave' = sm_count tiles); None: no wave "
                                             "quantization (TPU: XLA streams tiles through the MXUs)")
    collective_sms: int = Field(default=16, ge=0, le=4096,
                                description="SMs the communication kernels occupy while a collective overlaps "
                                            "compute: NCCL runs one CUDA block per channel (NCCL docs, "
                                            "NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS; Megatron-LM's TP-overlap "
                                            "configs reserve 16-24 SMs for it); with sm_count it sets the default "
                                            "overlap slowdown (shardplan.cost.step.overlap_slowdown)")
    gemm_tiles: tuple[tuple[int, int], ...] = Field(
        default=((128, 256), (256, 128), (128, 128)), min_length=1,
        description="output tile shapes (rows, cols) the GEMM library picks among; rows and cols are padded to them")
    gemm_k_tile: int = Field(default=64, gt=0, le=1024,
                             description="elements of K per main-loop step of one tile; K is padded to it")
    gemm_fill_steps: float = Field(default=0.0, ge=0, le=64,
                                   description="fixed cost of one output tile, in K main-loop steps: the software "
                                               "pipeline's prologue (the first loads before the first MMA) and the "
                                               "epilogue (the tile's store); a tile over K costs ceil(K / "
                                               "gemm_k_tile) + this steps (shardplan.cost.gemm); 0: not modelled")
    gemm_stream_k: bool = Field(default=False,
                                description="the GEMM library may spread a partial last wave of tiles evenly over the "
                                            "SMs (Stream-K, Osama et al. 2023; CUTLASS 3 sm90 stream-K tile "
                                            "scheduler), paying one fp32 partial per output element; False: whole "
                                            "waves and split-K only")
    compute_arch: ComputeArch | None = Field(
        default=None, description="architecture family: selects the published attention-kernel efficiency tables")
    hbm_bytes: float = Field(ge=2**20, le=L.MAX_MEMORY_BYTES, description="HBM capacity per device, bytes")
    hbm_bandwidth: float = Field(ge=1e6, le=L.MAX_BANDWIDTH, description="HBM bandwidth per device, bytes/s")
    scale_up_size: int = Field(gt=0, le=L.MAX_DEVICES, description="devices per NVLink domain / ICI slice")
    devices_per_host: int | None = Field(
        default=None, gt=0, le=L.MAX_DEVICES,
        description="accelerators one host (one launcher process group, torchrun --nproc-per-node) drives; None: "
                    "scale_up_size (an 8-GPU HGX / DGX node); a GB200 NVL72 compute tray has 4")
    scale_up_bandwidth: float = Field(ge=1e6, le=L.MAX_BANDWIDTH, description="per-device ring bandwidth of the scale-up level, bytes/s")
    scale_up_latency: float = Field(default=5e-6, ge=0, le=1.0,
                                    description="per-hop (per ring step) latency of the scale-up level, s")
    scale_up_topology: Literal["switch", "mesh"] = Field(
        default="switch",
        description="how the scale-up domain is wired: 'switch' (NVSwitch, TPU ICI: every group gets "
                    "scale_up_bandwidth per device) or 'mesh' (AMD Instinct platforms: one Infinity Fabric link "
                    "to each of the scale_up_size - 1 peers, so a group of k devices in the domain gets k - 1 of "
                    "them, (k - 1) / (scale_up_size - 1) of scale_up_bandwidth; shardplan.cost.comm.scale_up_bw)")
    scale_out_bandwidth: float = Field(ge=1e6, le=L.MAX_BANDWIDTH,
                                       description="per-device one-way scale-out (IB/RoCE/DCN) bandwidth, bytes/s")
    scale_out_latency: float = Field(default=2e-5, ge=0, le=1.0,
                                     description="per-hop latency of the scale-out level, s; a ring that crosses "
                                                 "nodes pays it on every step (shardplan.cost.comm)")
    ring_latency: Literal["per_link", "slowest_hop"] = Field(
        default="per_link",
        description="ring latency across nodes: 'per_link' charges scale_out_latency on the n_2-1 node-crossing "
                    "steps and scale_up_latency on the others (NVIDIA/nccl src/graph/tuning.cc, Ring: pipelined "
                    "chunks pay the network only where they cross it); 'slowest_hop' charges scale_out_latency on "
                    "every step (fits AWS EFA's nccl-tests, data/clusters/usp-h100-efa.yaml)")
    collective_latency: float = Field(
        default=8.4e-6, ge=0, le=1.0,
        description="per-call base latency of a collective (kernel launch and setup), s; NCCL src/graph/tuning.cc "
                    "baseLat, Ring/Simple 8.4 us")
    net_message_overhead: float = Field(
        default=1e-6, ge=0, le=1.0,
        description="host cost of posting one scale-out message, s (LogP 'o'); NCCL src/graph/tuning.cc "
                    "getNetOverhead: 1 us on Intel hosts, 2 us on AMD hosts")
    host_bandwidth: float | None = Field(
        default=None, ge=1e6, le=L.MAX_BANDWIDTH,
        description="one-way bandwidth between a device and its host memory, bytes/s (PCIe or NVLink-C2C): the link "
                    "activation offloading copies over; None: unknown (activation offloading is refused)")
    host_memory_bytes: float | None = Field(
        default=None, ge=2**20, le=L.MAX_MEMORY_BYTES,
        description="CPU (system) memory of one host, bytes: what the offloaded parameter, gradient and optimizer "
                    "shards of the devices that host drives must fit in (devices_per_host of them); None: unknown "
                    "(host memory is shown, not checked)")
    measured_busbw: dict[str, dict[int, float]] = Field(
        default_factory=dict,
        description="nccl-tests bus bandwidth (bytes/s) measured on this cluster: op -> {nodes: busbw}, with all "
                    "GPUs of each node in the communicator; used for groups that span nodes (shardplan.cost.comm)")
    measured_busbw_bytes: float | None = Field(
        default=None, gt=0, le=L.MAX_MEMORY_BYTES,
        description="buffer size S (bytes) at which measured_busbw was measured; the model's latency at that size is "
                    "taken out of it to get the bandwidth term. None: the table is the large-message bus bandwidth")
    ici_dims: int = Field(default=0, ge=0, le=3, description="torus dimensions (TPU); 0 = switched fabric")
    ici_axis_len: int = Field(default=4, gt=0, le=4096, description="devices along one torus axis of a cube/slice")
    # Efficiency factors: fraction of peak achieved by large operations, same for every run on
    # this hardware kind (see docs/cost_model.md for their sources and calibration).
    matmul_efficiency: float = Field(default=0.7, ge=L.MIN_EFFICIENCY, le=1)
    fp8_matmul_efficiency: float = Field(default=0.45, ge=L.MIN_EFFICIENCY, le=1,
                                         description="fraction of the fp8 peak reached by fp8 matmuls")
    fp4_matmul_efficiency: float | None = Field(
        default=None, ge=L.MIN_EFFICIENCY, le=1,
        description="fraction of the fp4 peak reached by fp4 matmuls; None: fp8_matmul_efficiency (assumed: the same "
                    "fraction of its peak as fp8, no public NVFP4 GEMM benchmark)")
    fp4_over_fp8_rate: float | None = Field(
        default=None, gt=1, le=4,
        description="with fp4_matmul_efficiency unset: achieved fp4 matmul FLOP/s = this x achieved fp8 FLOP/s (capped "
                    "at the fp4 peak), so the fp4 rate follows fp8_matmul_efficiency and the peaks a file overrides; "
                    "None: the fp8 fraction of the fp4 peak. Blackwell Ultra presets: 2 (presets/hardware.py "
                    "_ULTRA_FP4)")
    isolated_matmul_efficiency: float | None = Field(
        default=None, ge=L.MIN_EFFICIENCY, le=1,
        description="fraction of the bf16 peak an isolated, tuned large GEMM reaches (a benchmark, not a training "
                    "program): the ceiling of a framework's FrameworkProfile.gpu_matmul_scale, which scales the "
                    "asymptotes at most by isolated / matmul_efficiency (fp8 alike); None: unknown, the scale is not "
                    "applied (shardplan.cost.compute.gemm_device)")
    hbm_efficiency: float = Field(default=0.8, ge=L.MIN_EFFICIENCY, le=1,
                                  description="achieved fraction of hbm_bandwidth for the element-wise, optimizer and "
                                              "memory-bound GEMM traffic the cost model prices. 0.8: below a pure "
                                              "device-to-device copy (an H200 copied 4 GiB at 0.886 of its 4.8 TB/s, "
                                              "docs/device.md) since framework kernels also compute; the framework "
                                              "profiles' element-wise factors were fitted with it in place")
    scale_up_efficiency: float = Field(default=0.8, ge=L.MIN_EFFICIENCY, le=1)
    scale_out_efficiency: float = Field(default=0.85, ge=L.MIN_EFFICIENCY, le=1)
    runtime_reserve_bytes: float = Field(default=2.0 * 2**30, ge=0, le=L.MAX_MEMORY_BYTES,
                                         description="HBM kept back for the runtime (CUDA context, XLA, allocator)")
    runtime_reserve_fraction: float = Field(default=0.05, ge=0, lt=1,
                                            description="extra fraction of HBM lost to fragmentation")
    sources: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _collective_sms_fit(self) -> "HardwareSpec":
        """Communication kernels cannot occupy more SMs than the device has.

        Raises:
            ConfigError: ``collective_sms`` >= ``sm_count`` (both given).
        """
        from shardplan.errors import ConfigError
        if self.sm_count is not None and self.collective_sms >= self.sm_count:
            raise ConfigError(f"collective_sms={self.collective_sms} must be below sm_count={self.sm_count}; legal "
                              f"collective_sms: 0 to {self.sm_count - 1}", field="collective_sms",
                              value=self.collective_sms, legal=[0, self.sm_count - 1])
        return self

    @model_validator(mode="after")
    def _topology_matches_kind(self) -> "HardwareSpec":
        """A full mesh (``scale_up_topology: mesh``: one link from each device to each peer, the AMD Instinct 8-GPU
        platforms) is a GPU node of at most :data:`MAX_MESH_SIZE` devices; a torus (``ici_dims`` > 0) is a TPU's.
        Breaker pass 55: ``base: tpu-v5p`` with ``mesh`` gave a 2-chip group 1/8,959 of the link (MFU 0.05%).

        Raises:
            ConfigError: ``mesh`` on a TPU or over more than :data:`MAX_MESH_SIZE` devices, or ``ici_dims`` on a GPU.
        """
        from shardplan.errors import ConfigError
        if self.scale_up_topology == "mesh" and (self.kind != "gpu" or self.scale_up_size > MAX_MESH_SIZE):
            raise ConfigError(f"scale_up_topology='mesh' with kind={self.kind!r} and scale_up_size={self.scale_up_size}: "
                              f"a full mesh (one link from each GPU to each peer, AMD Instinct platforms) is a GPU node "
                              f"of at most {MAX_MESH_SIZE} devices; a TPU's torus is ici_dims, an NVLink / NVSwitch "
                              "domain 'switch'; legal: switch, or mesh on a GPU with scale_up_size <= "
                              f"{MAX_MESH_SIZE}", field="scale_up_topology", value="mesh", legal=["switch", "mesh"])
        if self.kind == "gpu" and self.ici_dims > 0:
            raise ConfigError(f"ici_dims={self.ici_dims} on a GPU: the torus dimensions are a TPU slice's (ICI); a GPU "
                              "scale-up level is scale_up_topology switch or mesh; legal: ici_dims 0 on a GPU",
                              field="ici_dims", value=self.ici_dims, legal=[0])
        return self

    @model_validator(mode="after")
    def _arch_matches_kind(self) -> "HardwareSpec":
        """A TPU has the ``tpu`` architecture (or none); a GPU has a GPU architecture (or none).

        Raises:
            ConfigError: ``compute_arch`` of the other kind (the legal values for this ``kind`` named).
        """
        from shardplan.errors import ConfigError
        legal = ["tpu"] if self.kind == "tpu" else [a for a in get_args(ComputeArch) if a != "tpu"]
        if self.compute_arch is not None and self.compute_arch not in legal:
            raise ConfigError(f"compute_arch={self.compute_arch!r} does not match kind={self.kind!r} (either may come "
                              f"from the base preset: set both); legal for a {self.kind.upper()}: {', '.join(legal)} "
                              "or null", field="compute_arch",
                              value=self.compute_arch, legal=legal)
        return self

    @model_validator(mode="after")
    def _busbw_table(self) -> "HardwareSpec":
        from shardplan.errors import ConfigError
        legal = ["AllReduce", "AllGather", "ReduceScatter", "AllToAll"]
        from shardplan.cost.comm import raw_bus_bw
        for op, table in self.measured_busbw.items():
            if op not in legal:
                raise ConfigError(f"measured_busbw has op {op!r}; legal: {', '.join(legal)}",
                                  field="measured_busbw", value=op, legal=legal)
            bad = {k: v for k, v in table.items() if not 1 <= k <= L.MAX_DEVICES or not 0 < v <= L.MAX_BANDWIDTH}
            if bad or not table:
                raise ConfigError(f"measured_busbw[{op!r}] needs node counts 1 to 2^20 and bus bandwidths in (0, 1e15] bytes/s "
                                  f"(got {bad or table})", field="measured_busbw", value=table)
            for k, v in table.items():
                # in-network reduction (NVLink SHARP) at most halves what a rank sends, so even it stays under twice
                # the wire-speed bus bandwidth; above that the entry is another unit (Gbit/s) or algbw of another size
                bound = MAX_BUSBW_OVER_WIRE * raw_bus_bw(self, op, self.scale_up_size, k)
                if v > bound:
                    raise ConfigError(f"measured_busbw[{op!r}][{k}]={v:.4g} B/s is above {MAX_BUSBW_OVER_WIRE:g}x the "
                                      f"wire-speed bus bandwidth of {k} node(s) of {self.scale_up_size} "
                                      f"({bound / MAX_BUSBW_OVER_WIRE:.4g} B/s from scale_up_bandwidth / "
                                      f"scale_out_bandwidth): bytes/s of nccl-tests' busbw are expected; legal: at most "
                                      f"{bound:.4g}", field="measured_busbw", value=v, legal=[0, bound])
        return self

    @model_validator(mode="after")
    def _tiles(self) -> "HardwareSpec":
        from shardplan.errors import ConfigError, short_repr
        bad = [t for t in self.gemm_tiles if not all(1 <= x <= 4096 for x in t)]
        if bad:
            raise ConfigError(f"gemm_tiles has the tile {short_repr(list(bad[0]))}; legal: (rows, cols) from 1 to 4096 each",
                              field="gemm_tiles", value=list(bad[0]))
        return self

    @model_validator(mode="after")
    def _peaks_ordered(self) -> "HardwareSpec":
        """Narrower formats are at least as fast: fp4 peak >= fp8 peak >= bf16 peak >= fp32 peak (where given; every
        tensor-core generation with them doubles the rate per halving of the width: NVIDIA Hopper / Blackwell and AMD
        CDNA3 datasheets; fp32 / TF32 runs at most at the 16-bit rate on every GPU and TPU datasheet).

        Raises:
            ConfigError: a narrower format's peak below a wider one's (the field, value and bound named).
        """
        from shardplan.errors import ConfigError
        chain = [("peak_flops_fp32", self.peak_flops_fp32), ("peak_flops_bf16", self.peak_flops_bf16),
                 ("peak_flops_fp8", self.peak_flops_fp8),
                 ("peak_flops_fp4", self.peak_flops_fp4)]
        given = [(k, v) for k, v in chain if v is not None]
        for (wide, w), (narrow, n) in zip(given, given[1:]):
            if n < w and wide == "peak_flops_fp32":  # name the fp32 entry: the 16-bit one is the datasheet's usual
                raise ConfigError(f"peak_flops_fp32={w:.4g} is above {narrow}={n:.4g} (either may come from the base "
                                  f"preset); legal peak_flops_fp32: at most {n:.4g} FLOP/s", field="peak_flops_fp32",
                                  value=w, legal=[0, n])
            if n < w:
                raise ConfigError(f"{narrow}={n:.4g} is below {wide}={w:.4g} (either may come from the base preset); "
                                  f"legal {narrow}: at least {w:.4g} FLOP/s", field=narrow, value=n, legal=[w, L.MAX_FLOPS])
        return self

    @model_validator(mode="after")
    def _low_precision_arch(self) -> "HardwareSpec":
        """An fp8 or fp4 peak only on an architecture whose matrix units run that format (:data:`FP8_ARCHS`,
        :data:`FP4_ARCHS`); a file without ``compute_arch`` is not checked.

        Raises:
            ConfigError: ``peak_flops_fp8`` / ``peak_flops_fp4`` on another architecture (the architectures named).
        """
        from shardplan.errors import ConfigError
        for field, legal in (("peak_flops_fp8", FP8_ARCHS), ("peak_flops_fp4", FP4_ARCHS)):
            value = getattr(self, field)
            if value is not None and self.compute_arch is not None and self.compute_arch not in legal:
                raise ConfigError(f"{field}={value:.4g} on compute_arch={self.compute_arch!r} (either may come from "
                                  f"the base preset): its matrix units have no {field[11:]} mode, so the format would "
                                  f"run at the 16-bit rate at best; legal: leave {field} out, or a compute_arch of "
                                  f"{', '.join(legal)}", field=field, value=value, legal=list(legal))
        return self

    @model_validator(mode="after")
    def _reserve(self) -> "HardwareSpec":
        if self.usable_hbm_bytes() <= 0:
            from shardplan.errors import ConfigError
            # usable = hbm (1 - fraction) - bytes > 0: the legal bound of each with the other as given (breaker 57)
            max_bytes = self.hbm_bytes * (1.0 - self.runtime_reserve_fraction)
            max_fraction = 1.0 - self.runtime_reserve_bytes / self.hbm_bytes
            raise ConfigError(f"runtime_reserve_bytes={self.runtime_reserve_bytes:.3g} and runtime_reserve_fraction="
                              f"{self.runtime_reserve_fraction} leave no usable memory of hbm_bytes="
                              f"{self.hbm_bytes:.3g}; legal: runtime_reserve_bytes below {max(max_bytes, 0.0):.3g} with "
                              f"this fraction, or runtime_reserve_fraction below {max(max_fraction, 0.0):.4g} with "
                              "these bytes", field="runtime_reserve_bytes", value=self.runtime_reserve_bytes)
        return self

    def runs_dtype(self, dtype: str) -> bool:
        """Whether this hardware's matrix units run ``dtype`` ('bf16', 'fp16', 'fp8', 'fp4', 'fp32'): bf16 unless
        ``bf16_tensor_cores`` is False; fp16 on GPUs only (TPU MXUs take bf16: Scaling Book tpus.md); fp8 / fp4 where
        the entry has a peak for them; fp32 everywhere."""
        return {"bf16": self.bf16_tensor_cores, "fp16": self.kind == "gpu", "fp32": True,
                "fp8": self.peak_flops_fp8 is not None, "fp4": self.peak_flops_fp4 is not None}.get(dtype, False)

    def peak_flops(self, dtype: str = "bf16") -> float:
        """Dense peak FLOP/s for ``dtype`` ('bf16', 'fp16', 'fp8', 'fp4' or 'fp32').

        bf16 and fp16 share the 16-bit tensor-core rate on GPUs (NVIDIA A100 / H100 / B200 and AMD MI300X
        datasheets give equal dense fp16 and bf16 TFLOPS; V100 has fp16 tensor cores only, ``bf16_tensor_cores``).
        fp32 matmuls run at ``peak_flops_fp32`` where the entry gives it (V100: no TF32, its 15.7 TFLOPS of fp32
        CUDA cores), else at the TF32 tensor-core rate on NVIDIA GPUs, half the BF16 rate on Ampere, Hopper and
        Blackwell (NVIDIA A100 / H100 / B200 datasheets: TF32 156 / 495 / 1,100 dense TFLOPS against BF16 312 /
        989 / 2,250; PyTorch frameworks set ``torch.backends.cuda.matmul.allow_tf32``), MI300X's TF32 rate is
        also half its BF16 (AMD datasheet: 653.7 against 1,307.4 TFLOPS), and on TPUs XLA runs f32 dots as bf16
        passes at its default precision (``jax.default_matmul_precision``), the BF16 rate.

        Raises:
            ConfigError: if the hardware's matrix units do not run ``dtype`` (no fp8 / fp4 peak, no bf16 on V100,
                no fp16 on TPUs), naming the precisions it can run; an unknown dtype.
        """
        from shardplan.errors import ConfigError
        if dtype not in ("bf16", "fp16", "fp8", "fp4", "fp32"):
            raise ConfigError(f"compute_dtype={dtype!r} is unknown; legal: bf16, fp16, fp8, fp4, fp32",
                              field="compute_dtype", value=dtype, legal=["bf16", "fp16", "fp8", "fp4", "fp32"])
        if not self.runs_dtype(dtype):
            from shardplan.specs.training import PRECISION_POLICIES  # the precisions this hardware runs
            legal = [k for k, v in PRECISION_POLICIES.items() if self.runs_dtype(v.compute_dtype)]
            example = {"fp8": "fp8-mixed", "fp4": "nvfp4-mixed", "bf16": "bf16-mixed", "fp16": "fp16-mixed"}[dtype]
            why = {"fp8": f"no {dtype} peak", "fp4": f"no {dtype} peak", "bf16": "no bf16 tensor cores",
                   "fp16": "no fp16 matrix units (TPU MXUs take bf16)"}[dtype]
            article = "a" if dtype == "bf16" else "an"
            raise ConfigError(f"hardware {self.name} has {why}, so {article} {dtype} precision (compute dtype "
                              f"{dtype}, e.g. precision={example}) cannot run on it; legal precision: "
                              f"{', '.join(legal)}", field="precision", value=dtype, legal=legal)
        if dtype in ("bf16", "fp16"):
            return self.peak_flops_bf16
        if dtype == "fp32":
            if self.peak_flops_fp32 is not None:
                return self.peak_flops_fp32
            return self.peak_flops_bf16 / 2 if self.kind == "gpu" else self.peak_flops_bf16
        return self.peak_flops_fp8 if dtype == "fp8" else self.peak_flops_fp4

    def matmul_efficiency_of(self, dtype: str = "bf16") -> float:
        """Fraction of ``dtype``'s peak that large matmuls reach: ``fp8_matmul_efficiency`` for fp8,
        ``fp4_matmul_efficiency`` for fp4 (None: ``fp4_over_fp8_rate`` x the achieved fp8 rate over the fp4
        peak where that is set, else the fp8 fraction; stated on the fields), else ``matmul_efficiency`` (bf16,
        fp16 and fp32). Example, GB300: fp4_over_fp8_rate 2, fp8 0.53 x 5 PF -> 5.3 PF / 15 PF = 0.353."""
        if dtype == "fp4" and self.fp4_matmul_efficiency is not None:
            return self.fp4_matmul_efficiency
        if dtype == "fp4" and self.fp4_over_fp8_rate is not None and self.peak_flops_fp4 and self.peak_flops_fp8:
            achieved = self.fp4_over_fp8_rate * self.fp8_matmul_efficiency * self.peak_flops_fp8
            return min(1.0, achieved / self.peak_flops_fp4)
        return self.fp8_matmul_efficiency if dtype in ("fp8", "fp4") else self.matmul_efficiency

    def achieved_matmul_flops(self, dtype: str = "bf16") -> float:
        """FLOP/s that large matmuls reach in ``dtype``: peak x :meth:`matmul_efficiency_of` that dtype.

        Raises:
            ConfigError: as :meth:`peak_flops`.
        """
        return self.peak_flops(dtype) * self.matmul_efficiency_of(dtype)

    @property
    def host_devices(self) -> int:
        """Accelerators one host drives: ``devices_per_host``, else the scale-up domain's size (the field's default)."""
        return self.devices_per_host or self.scale_up_size

    def usable_hbm_bytes(self) -> float:
        """HBM left for the model: capacity * (1 - fraction) - fixed reserve (bytes).

        Source: a stated assumption inside the range the cost-model notes give for the CUDA context
        and allocator fragmentation (1-3 GB + 5-10% of HBM, shared/reference/cost_models.md); it is
        not Megatron-LM's x1.05, which multiplies only the activations of its theoretical memory
        report. Framework profiles that describe their runtime (``context_bytes``,
        ``allocator_overhead``, fitted for nanotron) replace it. The NeMo Nemotron-4-340B run bounds
        it for a tuned Megatron run: its 75.2 GiB of tensors ran in 79.65 GiB (docs/accuracy.md).
        """
        return self.hbm_bytes * (1.0 - self.runtime_reserve_fraction) - self.runtime_reserve_bytes

    def ici_axes_spanned(self, group_size: int) -> int:
        """How many torus axes a group of ``group_size`` devices spans (TPU only; 1 for GPUs)."""
        if self.ici_dims == 0 or group_size <= 1:
            return 1
        axes, cover = 1, self.ici_axis_len
        while cover < group_size and axes < self.ici_dims:
            axes += 1
            cover *= self.ici_axis_len
        return axes

    def critical_intensity_hbm(self, dtype: str = "bf16") -> float:
        """FLOPs per byte above which a matmul is compute-bound on HBM: C / W_hbm.

        Source: Scaling Book roofline.md ("critical arithmetic intensity"), e.g. H100 ~295.
        """
        return self.peak_flops(dtype) / self.hbm_bandwidth


def with_fields(base: HardwareSpec, update: dict) -> dict:
    """``base``'s fields with ``update`` over them, as a :class:`HardwareSpec` is built from a preset and a file's or
    a flag's fields. Where ``update`` changes the devices one host drives (``devices_per_host``, or ``scale_up_size``
    when the host is the scale-up domain) and gives no ``host_memory_bytes``, the datasheet host's memory is scaled
    to the new device count, so each device keeps its share (as cloud instances scale memory with their GPUs: AWS
    p4de and p5, GCP A3); the source says so. E.g. a DGX H100's 2 TiB for 8 GPUs with --scale-up-size 4: 1 TiB."""
    out = {**base.model_dump(), **update}
    if base.host_memory_bytes is None or "host_memory_bytes" in update:
        return out
    new = out.get("devices_per_host") or out.get("scale_up_size") or base.host_devices
    if new == base.host_devices or not isinstance(new, int) or isinstance(new, bool) or new < 1:
        return out  # a value of another type or out of range: HardwareSpec's validation names it
    out["host_memory_bytes"] = base.host_memory_bytes * new / base.host_devices
    if out["host_memory_bytes"] > L.MAX_MEMORY_BYTES:  # name the field the user wrote, not the derived one
        from shardplan.errors import ConfigError
        key = "devices_per_host" if out.get("devices_per_host") else "scale_up_size"
        most = int(L.MAX_MEMORY_BYTES * base.host_devices // base.host_memory_bytes)
        raise ConfigError(f"{key}={new}: the host memory scaled to it from the datasheet host's ({base.host_devices} "
                          f"devices) would be {out['host_memory_bytes']:.4g} bytes, above the {L.MAX_MEMORY_BYTES:.4g} "
                          f"bound; legal: {key} at most {most:,}, or give host_memory_bytes", field=key, value=new,
                          legal=[1, most])
    src = base.sources.get("host_memory_bytes", "")
    out["sources"] = {**out.get("sources", {}), "host_memory_bytes": f"{src}; scaled from the datasheet host's "
                      f"{base.host_devices} devices to {new} (each device keeps its share)"}
    return out
