"""Framework profiles (``--framework``): one :class:`~shardplan.specs.framework.FrameworkProfile`
per training framework. Each number has its source or the published rows it was fitted on
(docs/accuracy.md shows the fits); a field left at its default keeps Megatron-LM's behaviour.
"""

from __future__ import annotations

from shardplan.errors import ConfigError
from shardplan.specs.framework import FrameworkProfile

_FP32_MAIN_GRADS = ("Megatron-LM accumulates gradients in an fp32 main_grad buffer (--accumulate-allreduce-grads-in-fp32, "
                    "default with bf16); nanotron likewise (accumulate_grad_in_fp32)")

_NANOTRON_LOSS = ("nanotron models/llama.py: an eager PyTorch decoder (GLUActivation act(gate) * up keeps act(gate)) "
                  "and parallel/tensor_parallel/functional.py _ShardedCrossEntropy: bf16 logits, their fp32 cast and "
                  "the fp32 shifted logits exponentiated in place into the saved softmax, 2 + 4 + 4 B per vocab element")
_NANOTRON_ALLOC = ("fitted: robust least squares on log(predicted / measured) over the 1,027 runs that ran in "
                   "shared/calibration/usp_h100_grid_1b_8b.csv (gpu_mem_gb in GB = 1e9 B, the allocator peak of world rank "
                   "0 = pipeline stage 0, nanotron helpers.py log_throughput), stage-0 layers from nanotron's cost-greedy "
                   "split (parallel.cost_greedy_split): 0.160; leave-one-model-out: 0.149 on 1B (8B median |error| 6.0%), "
                   "0.169 on 8B (1B median |error| 10.3%)")
_NANOTRON_CONTEXT = ("estimate, outside the caching allocator: CUDA context (~0.5 GiB on H100 with CUDA 12), NCCL "
                     "communicator buffers of the tp/pp/dp groups (~1 GiB), and the ~0.35 GiB of an '80 GB' H100 the "
                     "driver does not expose (81,559 MiB visible); bounded by the grid: the largest reserved peak that "
                     "ran is 77.4 GiB of 80; fit/OOM accuracy is flat (89.6-91.1%) for 0-8 GiB")

_NANOTRON_SPLIT = ("nanotron models/base.py build_model + models/llama.py get_block_compute_costs: blocks placed in "
                   "order until the cumulative compute cost passes total*(rank+1)/pp (parallel.cost_greedy_split)")

#: fitted by ``python benchmarks/usp_grid.py --fit`` (values, rows and held-out errors: _NANOTRON_FIT_NOTE)
_NANOTRON_FITTED = dict(layer_host_s=4.43e-3, pp_tp_host_step_s=2.67e-4, microbatch_node_s=2.74e-6,
                        microbatch_node_exponent=3.0, overlap_slowdown=0.642, allocator_retry_s=1.07,
                        allocator_pressure_start=0.85)
_NANOTRON_FIT_NOTE = ("fitted by python benchmarks/usp_grid.py --fit: robust least squares (soft-L1, scale 0.1) on "
                      "log(predicted / measured) tokens/s/GPU over the 1,027 runs that ran in "
                      "shared/calibration/usp_h100_grid_1b_8b.csv (1B and 8B, 1-64 nodes of AWS p5), jointly with the "
                      "cluster's matmul_efficiency 0.515 (usp-h100-efa.yaml); in-sample median |error| 14.5%; "
                      "leave-one-model-out 16.5% on 1B (fit on 8B) and 18.1% on 8B (fit on 1B); "
                      "microbatch_node_exponent sits on its upper bound 3 (an empirical growth with job size, "
                      "docs/accuracy.md usp-grid section)")
_NANOTRON_FIT_SOURCES = {k: _NANOTRON_FIT_NOTE for k in _NANOTRON_FITTED}

FRAMEWORKS: dict[str, FrameworkProfile] = {
    p.name: p for p in [
        FrameworkProfile(name="megatron"),
        FrameworkProfile(name="maxtext"),
        FrameworkProfile(name="torchtitan"),
        FrameworkProfile(name="pytorch-fsdp"),
        FrameworkProfile(name="deepspeed"),
        FrameworkProfile(name="nanotron", grad_buffer_bytes=4, loss="eager", allocator_overhead=0.16,
                         context_bytes=2 * 2**30, pipeline_split="cost_greedy",
                         min_microbatches="pp_minus_1", schedules=("gpipe", "1f1b"),
                         **_NANOTRON_FITTED,
                         sources={"grad_buffer_bytes": _FP32_MAIN_GRADS, "loss": _NANOTRON_LOSS,
                                  "allocator_overhead": _NANOTRON_ALLOC, "context_bytes": _NANOTRON_CONTEXT,
                                  "pipeline_split": _NANOTRON_SPLIT,
                                  "min_microbatches": "nanotron parallel/pipeline_parallel/engine.py "
                                  "OneForwardOneBackwardPipelineEngine.train_batch_iter: "
                                  "assert nb_microbatches >= pp - 1",
                                  "schedules": "nanotron parallel/pipeline_parallel/engine.py: "
                                  "AllForwardAllBackwardPipelineEngine and OneForwardOneBackwardPipelineEngine",
                                  **_NANOTRON_FIT_SOURCES}),
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
        raise ConfigError(f"framework={name!r} is unknown; legal framework: {', '.join(FRAMEWORKS)}",
                          field="framework", value=name, legal=list(FRAMEWORKS)) from None
