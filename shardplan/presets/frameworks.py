"""Framework profiles (``--framework``): one :class:`~shardplan.specs.framework.FrameworkProfile`
per training framework. Each number has its source or the published rows it was fitted on
(docs/accuracy.md shows the fits); a field left at its default keeps Megatron-LM's behaviour.
"""

from __future__ import annotations

from shardplan.errors import ConfigError, short_repr
from shardplan.specs.framework import FrameworkProfile

_FP32_MAIN_GRADS = ("Megatron-LM accumulates gradients in an fp32 main_grad buffer (--accumulate-allreduce-grads-in-fp32, "
                    "default with bf16); nanotron likewise (accumulate_grad_in_fp32)")

_NANOTRON_LOSS = ("nanotron models/llama.py: an eager PyTorch decoder (GLUActivation act(gate) * up keeps act(gate)) "
                  "and parallel/tensor_parallel/functional.py _ShardedCrossEntropy: bf16 logits, their fp32 cast and "
                  "the fp32 shifted logits exponentiated in place into the saved softmax, 2 + 4 + 4 B per vocab element")
_NANOTRON_ALLOC = ("fitted: robust least squares on log(predicted / measured) over the 1,027 runs that ran in "
                   "shared/calibration/usp_h100_grid_1b_8b.csv (gpu_mem_gb = torch.cuda.max_memory_reserved / 2**30 of "
                   "world rank 0 = pipeline stage 0, nanotron helpers.py log_throughput), stage-0 layers from nanotron's "
                   "cost-greedy split (cost.memory.cost_greedy_stage_layers): 0.245; leave-one-model-out: 0.234 on 1B "
                   "(8B median |error| 6.0%), 0.255 on 8B (1B median |error| 10.3%)")
_NANOTRON_CONTEXT = ("estimate, outside the caching allocator: CUDA context (~0.5 GiB on H100 with CUDA 12), NCCL "
                     "communicator buffers of the tp/pp/dp groups (~1 GiB), and the ~0.35 GiB of an '80 GB' H100 the "
                     "driver does not expose (81,559 MiB visible); bounded by the grid: the largest reserved peak that "
                     "ran is 77.4 GiB of 80; fit/OOM accuracy is flat (89.6-91.1%) for 0-8 GiB")

_DS_ZERO3 = ("fitted (benchmarks/fit_frameworks.py, scipy least_squares) to the six DeepSpeed ZeRO-3 rows of "
             "Narayanan et al. 2021 Table 2 (175B and 530B on 384-2,240 A100s) with per-parameter gathers "
             "(fsdp_unit='tensor'); leave-one-row-out |error| median 8.3%, max 13.5% (docs/accuracy.md)")



def _fit(framework: str, rows: str, loo: str) -> str:
    """Source note of a constant fitted by benchmarks/fit_frameworks.py."""
    return (f"fitted (benchmarks/fit_frameworks.py, scipy least_squares) to the shared published {framework} rows "
            f"{rows}; leave-one-row-out |error| median {loo} (docs/accuracy.md)")


FRAMEWORKS: dict[str, FrameworkProfile] = {
    p.name: p for p in [
        FrameworkProfile(name="megatron"),
        FrameworkProfile(name="maxtext"),
        FrameworkProfile(name="torchtitan", elementwise_traffic=6.44,
                         sources={"elementwise_traffic": _fit("torchtitan", "tt_*", "5.5%, max 8.3%")}),
        FrameworkProfile(name="pytorch-fsdp", overlap_slowdown=0.522,
                         sources={"overlap_slowdown": _fit("pytorch-fsdp", "llmfoundry*", "6.4%, max 16.1%")}),
        FrameworkProfile(name="deepspeed", zero3_prefetch=0.201, zero3_nic_share=0.215, microbatch_overhead_s=0.111,
                         sources={"zero3_prefetch": _DS_ZERO3, "zero3_nic_share": _DS_ZERO3,
                                  "microbatch_overhead_s": _fit("deepspeed", "bloom*, gptneox*, glm*",
                                                                "6.2%, max 9.9%")}),
        FrameworkProfile(name="nanotron", grad_buffer_bytes=4, loss="eager", allocator_overhead=0.245,
                         context_bytes=2 * 2**30,
                         sources={"grad_buffer_bytes": _FP32_MAIN_GRADS, "loss": _NANOTRON_LOSS,
                                  "allocator_overhead": _NANOTRON_ALLOC, "context_bytes": _NANOTRON_CONTEXT}),
    ]
}


def framework_profile(name: str) -> FrameworkProfile:
    """Look up a framework profile by name.

    Raises:
        ConfigError: for an unknown name (lists the legal names).
    """
    try:
        return FRAMEWORKS[name]
    except KeyError:
        raise ConfigError(f"framework={short_repr(name)} is unknown; legal framework: {', '.join(FRAMEWORKS)}",
                          field="framework", value=name, legal=list(FRAMEWORKS)) from None
