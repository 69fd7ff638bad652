"""Framework profiles (``--framework``): one :class:`~shardplan.specs.framework.FrameworkProfile`
per training framework. Each number has its source or the published rows it was fitted on
(docs/accuracy.md shows the fits); a field left at its default keeps Megatron-LM's behaviour.
"""

from __future__ import annotations

from pathlib import Path

from shardplan.errors import ConfigError, did_you_mean, short_repr
from shardplan.specs.framework import FrameworkProfile

_FP32_MAIN_GRADS = ("Megatron-LM accumulates gradients in an fp32 main_grad buffer (--accumulate-allreduce-grads-in-fp32, "
                    "default with bf16); nanotron likewise (accumulate_grad_in_fp32)")

_NANOTRON_LOSS = ("nanotron models/llama.py: an eager PyTorch decoder (GLUActivation act(gate) * up keeps act(gate)) "
                  "and parallel/tensor_parallel/functional.py _ShardedCrossEntropy")
_NANOTRON_LOGITS = ("nanotron models/llama.py: the model's forward returns the fp32 cast of the sharded logits (the bf16 "
                    "logits die with it: the cast keeps no input for backward); _ShardedCrossEntropy subtracts the max "
                    "into a second fp32 tensor, exponentiated in place and saved as the softmax: 4 + 4 B per vocab "
                    "element. On the measured grid the refitted allocator constants give 1B / 8B median |error| "
                    "8.1% / 5.0% with it, 8.8% / 5.1% with the 10 B of the 'eager' count")
_NANOTRON_GRID_MEM = ("fitted jointly (shardplan.cost.memory.fit_allocator_terms: robust least squares on "
                      "log(predicted / measured)) over the 1,027 runs that ran in shared/calibration/usp_h100_grid_1b_8b.csv "
                      "(gpu_mem_gb in GB = 1e9 B, the allocator peak of world rank 0 = pipeline stage 0, nanotron helpers.py "
                      "log_throughput; stage-0 layers from nanotron's cost-greedy split): allocator_overhead 0.105, "
                      "lm_head_stage_bytes 65, allocator_base_bytes 177 MiB; median |error| 1B 6.8%, 8B 4.8%. "
                      "Leave-one-model-out: on 1B alone 0.071 / 68 / 227 MiB (8B 5.2%), on 8B alone 0.131 / 66 / 89 MiB "
                      "(1B 7.3%) (docs/accuracy.md usp-grid section). ")
_NANOTRON_HEAD = (_NANOTRON_GRID_MEM + "Without the LM-head term the pp = 1 runs with tp >= 16 were 20-58% low: their "
                  "excess is ~0.7 GB per sequence of the microbatch on 1B (d_model 2048) and ~1.5 GB on 8B (4096) at "
                  "tp = 16 and 32 alike (so not divided by tp), and pipelined runs with tp = 32, whose stage 0 holds no "
                  "LM head, show none. The tensor it is has not been identified in nanotron's code")
_NANOTRON_ALLOC = _NANOTRON_GRID_MEM + "The fraction multiplies the allocated bytes: fragmentation and block rounding"
_NANOTRON_BASE = (_NANOTRON_GRID_MEM + "Without the constant the 1B runs with tp >= 16 (peaks of 1-5 GB) were 5-7% low "
                  "and those with tp = 1 8% high (1B median 8.1%, leave-one-model-out 8.2%). 177 MiB is of the order of "
                  "a few cuBLAS workspaces (one per stream that runs GEMMs) and the small-block pool; how it splits "
                  "between them is not measured")
_NANOTRON_OOM = ("benchmarks/usp_grid.py oom_fraction: the fraction of HBM up to which predicting 'runs' classifies the "
                 "most of the 1,641 grid runs right (ran or failed): 0.84 on all runs and on 1B alone, 0.86 on 8B alone "
                 "(each with its own refitted memory constants). Above it most runs failed: 8B predicted at 0.8-0.9 of "
                 "HBM 12 ran / 19 failed, at 0.9-1.0 7 / 19; fit/OOM 92.8% -> 94.5% over all runs (held out: 93.3% on "
                 "1B, 95.3% on 8B). The same regime as the allocator retries, which the throughput fit starts at 0.81 "
                 "of HBM (allocator_pressure_start)")
_NANOTRON_CONTEXT = ("estimate, outside the caching allocator: CUDA context (~0.5 GiB on H100 with CUDA 12), NCCL "
                     "communicator buffers of the tp/pp/dp groups (~1 GiB), and the ~0.35 GiB of an '80 GB' H100 the "
                     "driver does not expose (81,559 MiB visible); bounded by the grid: the largest reserved peak that "
                     "ran is 77.4 GiB of 80; fit/OOM accuracy is flat (89.6-91.1%) for 0-8 GiB")

_TITAN_LOSS = ("torchtitan components/loss.py cross_entropy_loss: F.cross_entropy(pred.flatten(0, 1).float(), labels...) "
               "on the full-vocabulary bf16 logits (eager PyTorch: the fp32 upcast and the log-softmax output are "
               "alive together)")
_TITAN_SAC = ("torchtitan distributed/activation_checkpoint.py, selective_ac_option='op' (the default selective mode): "
              "'save output of all compute ops, except every second mm' over a save list of aten.mm and the "
              "scaled-dot-product attention kernels")
#: the PyTorch caching allocator's reserve over allocated and the runtime context, fitted for nanotron on the
#: measured H100 grid (_NANOTRON_ALLOC, _NANOTRON_CONTEXT); nanotron's own overhead is fitted jointly with its
#: LM-head stage term, which absorbs part of what the reserve alone had to explain
_PYTORCH_CONTEXT = 2 * 2**30
_NANOTRON_ALLOCATOR = dict(allocator_overhead=0.105, allocator_base_bytes=177 * 2**20, context_bytes=_PYTORCH_CONTEXT)
#: torchtitan (eager PyTorch, the same allocator) keeps the grid's reserve fitted without that nanotron-specific
#: term (_TITAN_ALLOC)
_TITAN_ALLOCATOR = dict(allocator_overhead=0.16, context_bytes=_PYTORCH_CONTEXT)
_TITAN_PP_GRADS = ("torch.distributed.pipelining stage.py backward_maybe_with_nosync: gradient reduction and resharding "
                   "only on a stage's last backward of the step; FSDP2 accumulates the unsharded gradients in its reduce "
                   "dtype, float32 under torchtitan's default mixed_precision_reduce; checked on torchtitan "
                   "docs/performance.md Tables 5-6 (405B, FSDP 8 x TP 8 x PP 8: 73-85 GiB measured, docs/accuracy.md)")
_TITAN_REDUCE = ("torchtitan's default training.mixed_precision_reduce = 'float32' (config/job_config.py), handed to "
                 "FSDP2 as MixedPrecisionPolicy(reduce_dtype=torch.float32): the gradient ReduceScatter moves fp32")
_TITAN_FLUSHES = ("torchtitan train.py: with pipeline parallelism each of a step's global_batch_size / (local_batch_size x "
                  "dp) local batches is one pp_schedule.step() call, a full run of the schedule (fill, steady state, "
                  "drain); NeMo AutoModel's train_ft loop does the same per local batch")
_TITAN_CP = ("torchtitan's published context-parallel runs (docs/performance.md Tables 2 and 6: Llama 3.1 8B and 405B at "
             "CP 2-8, 64k-262k tokens) run as contiguous sequence chunks: priced so they come out within 1-5% at CP 4-8 "
             "(8B +1% / -1%, 405B -1% / +5%; CP 2: -17% / +13%), and 1.4-1.75x too fast with balanced chunks. PyTorch's "
             "ring attention balances causal work only with round-robin sharding of the buffers "
             "(_cp_options.enable_load_balance, pytorch/pytorch#132442, Sept. 2024); a profile file with "
             "cp_load_balance: true describes a torchtitan that runs it (its HeadTail load balancer)")
_TITAN_ALLOC = ("not fitted on torchtitan rows (the shared rows publish no memory): the PyTorch caching allocator's "
                "reserve over allocated fitted on the measured nanotron H100 grid with that term alone (0.160, robust "
                "least squares over the 1,027 runs that ran; nanotron's own 0.105 shares the grid with its LM-head "
                "stage term and allocator base) and the runtime context estimated there (2 GiB); docs/accuracy.md's "
                "public runs compare it with the torchtitan rows that publish memory")

_MAXTEXT_LOGITS = ("MaxText's output head computes the logits in its compute dtype (bf16; configs/base.yml dtype) and "
                   "casts them to fp32 (cast_logits_to_fp32: true, layers/decoders.py); the cast, the soft cap and the "
                   "cross-entropy (max_utils.cross_entropy_with_logits) are element-wise work XLA fuses into the "
                   "consumers of the dot's bf16 output, and the loss's gradient fusion writes the bf16 gradient of the "
                   "dot output, which XLA's buffer assignment may place in the logits' buffer once they are dead: 2 B "
                   "per vocab element. Bounds from runs that fit 32 GiB v6e chips (scouting passes, 2026-12): tpu-recipes "
                   "Llama 3.1 8B at 5 x 8,192 tokens per chip on 64 chips (a step log) allows about 4.3 B, MaxText's "
                   "benchmark configs Gemma 2 9B at 3 x 8,192 (256k vocabulary, 'only runs on v6e-256') about 3.2 B "
                   "and Llama 3 70B with the optimizer on the host about 3.4 B; at 6 B (bf16 logits + an fp32 "
                   "softmax) 8 of tpu-recipes' 10 Trillium runs were predicted not to fit. recompute_after_loss: XLA "
                   "on TPU schedules under a memory limit, and those runs show the last layer's recompute working set "
                   "and the logits were not alive together")
_TITAN_ZERO = ("torchtitan parallelize.py: FSDP2 fully_shard over the dp_shard x cp mesh (dp_shard_cp), with "
               "reshard_after_forward per fsdp_reshard_after_forward (never: ZeRO-2; always: ZeRO-3), DDP (replicate) "
               "without sharding; FSDP2 shards gradients with the optimizer state, so no ZeRO-1, and cp > 1 alone "
               "shards the weights")
_NO_PAD = ("no vocabulary padding beyond the tp split: the model's own vocab_size (Hugging Face configs; MaxText "
           "base.yml vocab_size; DTensor / nanotron shard the embedding rows as they are)")

_DS_ZERO3 = ("fitted (benchmarks/fit_frameworks.py, scipy least_squares) to the six DeepSpeed ZeRO-3 rows of "
             "Narayanan et al. 2021 Table 2 (175B and 530B on 384-2,240 A100s) with per-parameter gathers "
             "(fsdp_unit='tensor') and the profile's layer_overhead_s; leave-one-row-out |error| median 9.0%, "
             "max 14.4% (docs/accuracy.md)")
_DS_LAYER = ("per transformer layer per microbatch, outside the GEMMs: DeepSpeed's activation checkpointing runs every "
             "layer through deepspeed/runtime/activation_checkpointing/checkpointing.py CheckpointFunction (CUDA RNG "
             "state saved and restored, the checkpointed input partitioned over the model-parallel group and gathered "
             "again for the recomputation, eager kernel launches); fitted (benchmarks/fit_frameworks.py, scipy "
             "least_squares) to the shared DeepSpeed pipeline rows bloom*, gptneox*, glm*: 12.2 ms, leave-one-row-out "
             "|error| median 5.0%, max 11.4% (13.4 ms, 7.1% / 12.3% before the eager element-wise ops). Per layer, not per microbatch: on Megatron-Turing NLG 530B (Smith et al. "
             "2022 Sec. 2.4, 3 layers per stage, not fitted) a per-microbatch constant fitted on the same rows "
             "predicts +22-27% too slow, this term 6-10% too fast (docs/accuracy.md public runs). Every run it is fitted "
             "and checked on checkpoints every layer: whether the term holds without recomputation is not identified")



_DS_LAYER_RC = ("the per-layer cost is CheckpointFunction's (layer_overhead_s), so only checkpointed layers pay it: "
                "FlagPerf's Llama-2-7B on 8 H800 under HF Trainer + DeepSpeed ZeRO-3 without activation checkpointing "
                "(FlagOpen/FlagPerf, read after every fit) was predicted 43% slow with the term on every layer, 14% "
                "fast without it")
_FSDP_ONLY = ("PyTorch FSDP as llm-foundry (Composer fsdp_config, plus tp_config for tensor parallelism) and "
              "fms-fsdp (FSDP / HSDP sharding strategies) run it: no pipeline or context parallelism options")


_TITAN_SP_COPIES = ("torchtitan models/llama3/infra/parallelize.py (and qwen3's) apply_tp: SequenceParallel norms and "
                    "PrepareModuleInput / RowwiseParallel on Shard(1), the sequence dim of [batch, seq, h], gathered "
                    "and scattered in eager DTensor through torch/distributed/_functional_collectives.py, whose "
                    "all_gather_tensor and reduce_scatter_tensor re-lay a non-zero dim with torch.cat; its own NOTE "
                    "points to pytorch/torchtitan PR 437 ('an extra aten.cat after each collective': two cats 0.18 "
                    "ms of a 3 ms FFN at seq 8k, batch 1, H100). Gathers of one-sequence microbatches are views since "
                    "pytorch/pytorch PR 169404 (Dec 2025). Not fitted (shardplan.cost.compute.sp_copy_s)")
#: PyTorch FSDP's CPU offload (ParallelConfig.offload_params with FrameworkProfile.param_offload 'with_optimizer')
_FSDP_OFFLOAD = ("'with_optimizer': torch.distributed.fsdp CPUOffload(offload_params=True) (FSDP1) and CPUOffloadPolicy "
                 "(FSDP2) keep the sharded parameters and their gradients in host memory and run the optimizer there; "
                 "pytorch/pytorch pull 120256 (FSDP2 CPU offloading): 'one H2D copy for each parameter before "
                 "all-gather, one D2H copy for each gradient after reduce-scatter, optimizer on CPU'")
#: eager PyTorch model code's GEMM rate on GPUs with a known isolated rate (torchtitan, hf-fsdp, hf-deepspeed)
_EAGER_GEMM = ("1.32, capped at isolated_matmul_efficiency / matmul_efficiency (H100 / H200: 0.73 / 0.59 = 1.24; not "
               "applied on the A100 presets, which give no isolated rate, so the A100 fits stand): measured on one "
               "H100 SXM (docs/device.md, benchmarks/device_runs/h100_2026-12-05.json): an eager transformers "
               "Llama-3-8B slice ran its GEMMs at 773 TFLOP/s inside the training step, 0.78 of the bf16 peak = "
               "1.32 x the preset's end-to-end 0.59, while its non-GEMM kernels took 51.0 ms where the 5.31 element-wise "
               "factor prices 50.8 ms. The preset's 0.59 is fitted on programs whose element-wise work the fused count "
               "(1) prices at its lower bound; with the eager count measured right, the GEMMs take the rate they ran at. "
               "Held-out Hopper rows of these profiles (never fitted on): 15 moved, median |error| of all 720 held-out "
               "runs 9.05% -> 8.87% (torchtitan 13B FSDP 0.81 -> 0.93 predicted / measured, 405B Float8 0.82 -> 0.90, "
               "FlagPerf Llama-2-7B 0.85 -> 0.92; worse: torchtitan#778 1.36 -> 1.52, and the FlagPerf Baichuan2-13B "
               "rows, priced then with fused attention, which their ALiBi model does not run)")
#: why the compiled torchtitan profile keeps the preset's end-to-end GEMM rate
_COMPILE_GEMM = ("1 (the preset's end-to-end asymptote, not the eager profile's 1.32): the compiled profile prices its "
                 "element-wise work at the fused count's lower bound (elementwise_traffic 1), and on one H100 a "
                 "torch.compile'd transformers Llama step ran no faster than eager (167 vs 160 ms, docs/device.md): its "
                 "non-GEMM time is well above that bound, which the end-to-end asymptote absorbs (held-out Hopper "
                 "torchtitan-compile runs: median predicted / measured 0.98)")


#: the host optimizer's update rate under optimizer offload (FrameworkProfile.host_adam_params_per_s), per host
_CPU_ADAM = ("1.6e9 parameters/s per host: DeepSpeed's CPU-Adam (csrc/adam, AVX vectorized) updated an 11.6B-parameter "
             "GPT-2 in 8.2 s (1.4e9/s; deepspeedai/DeepSpeed pull 735, 2021), and a Qwen-72B ZeRO-3 run with the "
             "optimizer offloaded on 4 x 8 A100 stepped in about 10 s against 0.2 s without (about 18e9 parameters per "
             "host in ~10 s: 1.8e9/s; deepspeedai/DeepSpeed issue 6834, 2024); the mean of the two")
_MEGATRON_CPU_ADAM = ("1.6e9 parameters/s per host, DeepSpeed CPU-Adam's rate (" + _CPU_ADAM.split(": ", 1)[1] + ") "
                      "ASSUMED: Megatron-Core's --optimizer-cpu-offload (megatron/core/optimizer/__init__.py: "
                      "HybridDeviceOptimizer with cpu_optimizer_cls = torch.optim.AdamW, built with fused=True 'to "
                      "improve the performance of the cpu optimizer') steps with PyTorch's fused CPU AdamW, a vectorized "
                      "kernel parallel over the host's cores like DeepSpeed's, not the per-parameter loop "
                      "_TORCH_CPU_ADAM measured; no published measurement of its rate was found. Before, the megatron "
                      "profile priced no host update (a new user saw an offloaded 405B optimizer cost 0.3 s)")
_TORCH_CPU_ADAM = ("2.4e8 parameters/s per host: PyTorch's own Adam on the CPU, what FSDP's CPUOffload steps with, "
                   "ran 6.8 x slower than DeepSpeed's CPU-Adam on the same 11.6B model (56 s against 8.2 s; "
                   "deepspeedai/DeepSpeed pull 735): 1.6e9 / 6.8")

_TORCH_FUSED_CPU_ADAM = (
    "3.5e9 parameters/s per host at HOST_ADAM_REFERENCE_BYTES (fp32 state): torchtitan's [optimizer] implementation "
    "defaults to 'fused' (torchtitan config/job_config.py), and under enable_cpu_offload (FSDP2 CPUOffloadPolicy) the "
    "shards it steps live on the CPU, where PyTorch runs its fused CPU AdamW (PyTorch 2.4 and later), a vectorized "
    "kernel parallel over the host's cores. Derived from torchtune pull 993 (Llama 3 70B full fine-tune, FSDP CPU "
    "offload, torch.optim.AdamW(fused=True) on bf16 weights and state, batch 2 per GPU on 8 A100: 13.57 s/it at step 95): "
    "the planner's compute and copies for that run (torchtitan profile, optimizer_dtype bf16, ~256-token padded Alpaca "
    "batches) take 3.50 + 0.55 s, leaving 9.52 s for the host's update of 70.55e9 parameters at 14 B each: "
    "70.55e9 x 14 / 30 / 9.52 = 3.46e9 (the compute share is small: at 128 or 512 tokens 3.4 / 3.6 s). 14 x the "
    "2021 for-loop rate (_TORCH_CPU_ADAM), which the other PyTorch FSDP profiles keep: torch.optim defaults to "
    "for-loop on CPU tensors (no fused or foreach default off CUDA) and the Hugging Face Trainer's adamw_torch "
    "passes neither")


def _fit(framework: str, rows: str, loo: str) -> str:
    """Source note of a constant fitted by benchmarks/fit_frameworks.py."""
    return (f"fitted (benchmarks/fit_frameworks.py, scipy least_squares) to the shared published {framework} rows "
            f"{rows}; leave-one-row-out |error| median {loo} (docs/accuracy.md)")


_NANOTRON_SPLIT = ("nanotron models/base.py build_model + models/llama.py get_block_compute_costs: blocks placed in "
                   "order until the cumulative compute cost passes total*(rank+1)/pp (parallel.cost_greedy_split)")

#: fitted by ``python benchmarks/usp_grid.py --fit`` (values, rows and held-out errors: _NANOTRON_FIT_NOTE)
_MEGATRON_CP_COMM = ("megatron/training/arguments.py --cp-comm-type (default p2p; 'p2p, a2a, allgather or a2a+p2p', "
                     "one per layer or one for all), passed to Transformer Engine's context-parallel attention: p2p is "
                     "the K/V ring (cp_comm='ring'), a2a the DeepSpeed-Ulysses AllToAll over heads (cp_comm='a2a'); "
                     "allgather and a2a+p2p are not priced")
_TE_A2A_HEADS = ("TransformerEngine pytorch/attention.py AttnFuncWithCPAndQKVOA2A: assert q.shape[-2] % cp_size == 0 "
                 "and k.shape[-2] % cp_size == 0, 'The number of attention heads needs to be divisible by CP size!' "
                 "(no KV-head replication)")
_TE_CP_BACKENDS = ("TransformerEngine pytorch/attention dot_product_attention utils get_attention_backend: with "
                   "context parallelism the unfused DotProductAttention backend is disabled (only FlashAttention and "
                   "cuDNN FusedAttention implement the p2p / a2a exchanges)")
_NANOTRON_CP_EP = ("nanotron config ParallelismArgs: context_parallel_size and expert_parallel_size are world "
                   "dimensions beside dp, not inside the data-parallel gradient group as the planner prices cp and ep "
                   "(the nanotron exporter refuses such plans); the measured grid the profile is fitted on has no "
                   "cp or ep runs")

_NANOTRON_FITTED = dict(layer_host_s=4.73e-3, pp_tp_host_step_s=2.51e-4,
                        overlap_slowdown=1.0, tp_overlap_slowdown=0.721, allocator_retry_s=1.0,
                        allocator_pressure_start=0.812)
_NANOTRON_FIT_NOTE = ("fitted by python benchmarks/usp_grid.py --fit: robust least squares (soft-L1, scale 0.1) on "
                      "log(predicted / measured) tokens/s/GPU over the 1,027 runs that ran in "
                      "shared/calibration/usp_h100_grid_1b_8b.csv (1B and 8B, 1-64 nodes of AWS p5), jointly with the "
                      "cluster's matmul_efficiency 0.532 (usp-h100-efa.yaml); in-sample median |error| 7.5%; "
                      "leave-one-model-out 9.0% on 1B (fit on 8B) and 10.9% on 8B (fit on 1B); 0.706 / 0.527 and "
                      "7.4% / 8.9% / 10.7% before pipeline sends were priced at the slowest stage boundary "
                      "(docs/accuracy.md usp-grid section). overlap_slowdown (data-parallel collectives) sits at "
                      "its bound 1: nanotron's gradient reduction hides nothing behind the backward in effect")
_NANOTRON_STALL_NODES = ("benchmarks/usp_grid.py stall_nodes: the smallest node count from which most pipelined runs "
                         "of the grid lose more than 0.3 s per microbatch against the stall-free prediction (8 nodes: "
                         "28 of 135, 16: 47 of 166, 32: 88 of 150, 64: all but a few); chosen on the training runs "
                         "alone in every held-out fit")
_NANOTRON_STALL_TP_NODES = ("benchmarks/usp_grid.py stall_tp_nodes: among the pipelined runs on fewer than 32 nodes, the "
                            "smallest node span of the tp group from which most runs stall: tp=32 (4 nodes) 33 of 34 "
                            "on 8-16 nodes, tp=16 (2 nodes) 6 of 63; the same value when chosen on 1B or on 8B alone")
_NANOTRON_STALL_PARTIAL = ("benchmarks/usp_grid.py stall_partial: exhaustive search over thresholds of node count, dp and "
                           "stage-boundary message for the pipelined runs the node-count trigger covers (32+ nodes). "
                           "At 32 nodes dp >= 32 stalls in 20 of 23 runs (1B and 8B); with smaller dp, 8B stalls with "
                           "64 MiB microbatch messages (2+ sequences, 40 of 40) and not with 32 MiB (0 of 17), 1B in 4 of "
                           "35 at any size; at 64 nodes 79 of 80 stall. Chosen on 8B alone the same; on 1B alone "
                           "without the message threshold. Moves the grid's 8B on 32 nodes from Spearman 0.80 to 0.98")
_NANOTRON_STALL_SEQUENCES = ("the Ultra-Scale Playbook's 80B runs on the same cluster (benchmarks_interactive.html in the "
                             "mirror vinjn/nanotron-ultrascale-playbook @ e3bcfc5c; benchmarks/usp_h100_grid_3b_80b.csv, "
                             "never fitted): at 32 nodes the ZeRO-1 pipelines with dp < 32 and one sequence per microbatch "
                             "(64 MiB messages) ran without the stall in 11 of 11 runs, with 2+ sequences 10 of 10 "
                             "stalled. The 1B / 8B grid cannot separate message size from sequence count (its 64 MiB+ "
                             "messages all carry 2+ sequences), so the condition is set from that data, not fitted")
_NANOTRON_STALL_ZERO0_MAX = ("the ZeRO-0 pipelines with dp > 1 and 16+ microbatches at 32 nodes ran without the stall: "
                             "the shared grid's one such run (1B, 128 microbatches) and the playbook's 3B / 80B runs of "
                             "that kind (6 of 6; benchmarks/usp_h100_grid_3b_80b.csv, never fitted). One run of the "
                             "shared grid cannot move the fitted rule (MIN_STALL_GAIN), so the bound is set, not fitted")
_NANOTRON_STALL_ZERO0 = ("benchmarks/usp_grid.py stall_zero0: decision stumps over the pipelined ZeRO-0 runs with dp > 1 "
                         "on 2+ nodes (nanotron wraps the model in PyTorch DDP there): first the microbatch count, then "
                         "the node count. From 4 nodes with 16+ microbatches 25 of 28 such runs stall (8B; 8-16 nodes "
                         "20 of 20), with fewer microbatches 1 of 15 (at 32 nodes, where the ZeRO-1 runs mostly stall, "
                         "1 of 11 ZeRO-0 runs does); the ZeRO-1 runs of the same layouts on 4-16 nodes stall in 24 of "
                         "275. The 1B runs of this kind mostly failed, so a fit on 1B alone finds no such rule")
_NANOTRON_FIT_SOURCES = {k: _NANOTRON_FIT_NOTE for k in _NANOTRON_FITTED}
_NANOTRON_NO_STALL = ("0 (no pipeline stall): the playbook campaign's raw table (benchmarks/usp_raw/runs.csv, its "
                      "after_pp_fix column) shows the grid's pipeline stalls in the runs made with the nanotron build "
                      "before the playbook team's pipeline fix (462 of 471 pipelined runs on 2+ nodes) and rarely after "
                      "it (50 of 757); current nanotron is the later build. The campaign's runs are predicted with the "
                      "nanotron-usp profile (usp-h100-efa.yaml), which keeps the fitted stall and its triggers")
_NANOTRON_CAMPAIGN = ("the Ultra-Scale Playbook's nanotron campaign on AWS p5 (shared/calibration/usp_h100_grid_1b_8b.csv, "
                      "benchmarks/usp_h100_grid_3b_80b.csv): the nanotron profile plus the message stall of the runs "
                      "made before the playbook team's pipeline fix (benchmarks/usp_raw/runs.csv after_pp_fix False: "
                      "the stall on every pipeline of 2+ nodes) and the triggers that tell those runs from their "
                      "layout alone, as the campaign scheduled them (most 64-node pipelines, about half the 32-node "
                      "ones, few below): fitted by benchmarks/usp_grid.py --fit; docs/calibration.md")

#: Megatron-LM's runtime outside the tensors it counts: the context (CUDA context, cuBLAS workspaces, NCCL buffers,
#: as nanotron's) and the caching allocator's reserve over allocated. Megatron-Core keeps parameters and gradients
#: in contiguous buffers (core/distributed/param_and_grad_buffer.py) and Megatron-Bridge's performance launcher
#: frees NCCL's cached buffers (scripts/performance/utils/executors.py PERF_ENV_VARS:
#: TORCH_NCCL_AVOID_RECORD_STREAMS=1, NCCL_NVLS_ENABLE=0 "to save memory"), so only activations churn.
#: No published Megatron run reports its reserved memory: the fraction is the largest that lets every public
#: Megatron-Core run that ran fit (benchmarks/accuracy.py; the binding rows are the Megatron-Bridge 25.09 / 25.11
#: GB200 Llama 3 70B Megatron-FSDP run, 166.9 GiB allocated of 173.2, at 0.026, and the GB200 Llama 3.1 405B
#: TP4 PP16 VP4 and GB300 405B Megatron-FSDP runs at 0.037). It replaces the hardware's generic 2 GiB + 5% of HBM
#: (HardwareSpec.runtime_reserve_fraction), which grows with the device's capacity although fragmentation does not:
#: with it four GB200 / GB300 runs that ran were predicted not to fit
_MEGATRON_RUNTIME = ("bound, not fitted: the largest allocator reserve (fraction of the allocated peak, with 2 GiB of "
                     "context) under which every public Megatron-Core run that ran fits (GB200 Llama 3 70B "
                     "Megatron-FSDP, Megatron-Bridge 25.09 / 25.11: 0.026); Megatron-Core keeps parameters and "
                     "gradients in contiguous buffers (core/distributed/param_and_grad_buffer.py)")
_MEGATRON_ALLOCATOR = dict(allocator_overhead=0.025, context_bytes=_PYTORCH_CONTEXT)
_MEGATRON_A2A_OVERLAP = ("measured share of the hideable AllToAll time Combined 1F1B hides (benchmarks/public_runs.py "
                         "a2a_overlap_shares; tests/test_cost_axes.py recomputes both): the Megatron MoE model zoo's A/B "
                         "pair (Qwen3-235B-A22B, TP2 EP32 PP8 VPP4 DeepEP, 256 H100: 19.7 s per step, 17.6 s with the "
                         "1F1B overlap; yanring/Megatron-MoE-ModelZoo best_practice/Qwen3) gives 0.43 of the planner's "
                         "upper bound; the Megatron-Bridge 25.11 Qwen3-235B H100 row (its recipe sets moe_a2a_overlap) "
                         "0.52; mean 0.48, rounded to 0.5 (0.44 / 0.56 before the interleaved pipeline sends were "
                         "overlapped, 0.45 / 0.61 before the fixed MoE costs' hidden form). The 25.09 row of the same layout, 31% slower, implies none and "
                         "is left out")
_MEGATRON_MOE = ("fitted jointly with moe_layer_overhead_s: benchmarks/fit_frameworks.py moe_fit_table, robust least "
                 "squares on the 33 public Megatron-Core MoE rows (Megatron-Core MoE model zoo Qwen3-235B, Megatron-Bridge "
                 "25.09 and 25.11 H100 / B200 / GB200 / GB300 Qwen3, GPT-OSS and DeepSeek-V3), everything else fixed: "
                 "0.32 ms per local expert and 1.51 ms per MoE layer (per microbatch, forward + backward; 1.52 ms "
                 "before a context-parallel ring across nodes paid the network hop, 1.53 ms per "
                 "layer before Megatron-Core's eager per-expert bias was priced, the 'expert_bias' eager op of the "
                 "GPT-OSS rows; 0.31 / 1.52 before the interleaved pipeline sends were overlapped, FrameworkProfile.pp_p2p_overlap), the "
                 "per-expert part exposed only beyond the routed experts' GEMM time (shardplan.cost.compute."
                 "moe_expert_cost_s); alone, the per-expert constant fitted 0.278 ms and left the EP 64 rows, 2 "
                 "experts per rank, 27-30% fast on GB200 (Qwen3-235B); leave-one-out median |error| 24.5% (no term) "
                 "-> 12.1% (per expert) -> 11.0% (both); 9.5% since DeepSeek-V3's MTP module counts as a layer of "
                 "the uneven pipeline split, 7.6% since DeepEP inside one node sends one copy per remote rank, 6.6% "
                 "since the per-expert host work hides behind the expert GEMMs (0.21 / 1.03 ms before; the held-out "
                 "Megatron-Core MoE rows: median |error| 16.0% -> 11.4%) (docs/accuracy.md)")
_MEGATRON_SCHEDULES = ("Megatron-Core pipeline_parallel/schedules.py get_forward_backward_func: no pipelining, 1F1B "
                       "(forward_backward_pipelining_without_interleaving) or interleaved 1F1B (..._with_interleaving); "
                       "no GPipe; zero-bubble schedules run only in forks (sail-sg/zero-bubble-pipeline-parallelism, "
                       "AMD Primus zbpp patches)")
_TITAN_SCHEDULES = ("torch.distributed.pipelining schedules: GPipe, 1F1B, Interleaved1F1B and the multi-stage "
                    "InterleavedZeroBubble / ZBVZeroBubble, no single-stage ZB-H1 (the planner's zero-bubble)")
_MEGATRON_BUCKETS = ("Megatron-Core distributed/distributed_data_parallel.py: bucket_size defaults to max(40000000, "
                     "1000000 * dp_size) parameters ('larger DP sizes need larger buckets to ensure collectives do not "
                     "become latency-bound'); DistributedDataParallelConfig.bucket_size docstring")
_ASYNC_TP = ("torchtitan's async TP (enable_async_tensor_parallel: torch.compile's micro-pipelined all-gather / "
             "reduce-scatter matmuls over symmetric memory) hides little of the TP collectives: solved "
             "(benchmarks/fit_frameworks.py async_tp_table, scipy brentq) on torchtitan's Table 4 A/B pair (Llama 3.1 "
             "70B, FSDP 32 x TP 8: 876 against 829 tokens/s/GPU, 1.06x, where the hardware's default share "
             "predicts 1.33x); the async-TP 405B rows of Tables 5 and 6, never fitted on, go from +13% / +15% / "
             "+14% / +11% / -6% / -4% to -3% / -1% / +1% / +3% / -10% / -6% (docs/accuracy.md)")
_LAZY_GRADS = ("PyTorch's own loop (Hugging Face Trainer / Accelerate, fms-fsdp): optimizer.zero_grad() sets the "
               "gradients to None (set_to_none=True, the default since PyTorch 2.0), so the backward creates them, and "
               "torch.optim.AdamW's foreach step holds one temporary the size of the second moment (torch/optim/adamw.py "
               "_multi_tensor_adamw: exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)). Checked (after reading) on "
               "fms-acceleration's HF Trainer rows: peak allocated memory median |error| 6.3% -> 0.1% (13 rows; the "
               "1-GPU Mistral-7B peak of 67.5 GiB at 4 and at 8 sequences is the optimizer step's: parameters, "
               "gradients, Adam state and one bf16 temporary)")
_MEGATRON_ZERO2 = ("'full_buffer': Megatron-LM's forward_backward schedules (megatron/core/pipeline_parallel/schedules.py) "
                   "run every microbatch but the last under the model's no_sync, so the gradients accumulate in the "
                   "full-size fp32 main_grad buffer and the distributed optimizer reduce-scatters them once per step; "
                   "MegaScale (Jiang et al. 2024, Sec. 3.2) describes its Megatron-LM baseline's ZeRO-2-style data "
                   "parallelism as one reduce-scatter after the last microbatch's backward")
_MEGATRON_TP_OVERLAP = ("True: Megatron-LM --tp-comm-overlap (Transformer Engine userbuffers) is part of NVIDIA's H100 "
                        "recipes with tensor parallelism (NeMo / Megatron-Bridge performance configs set tp_comm_overlap "
                        "for their TP > 1 models), so the search ranks tp > 1 layouts with it as well as without")
FRAMEWORKS: dict[str, FrameworkProfile] = {
    p.name: p for p in [
        FrameworkProfile(name="megatron", moe_expert_overhead_s=3.2e-4, moe_layer_overhead_s=1.51e-3,
                         offload_keeps_grads=True,
                         host_adam_params_per_s=1.6e9, offload_zero_stages=(1, 2, 3),
                         dp_bucket_min_params=4e7, dp_bucket_params_per_rank=1e6, **_MEGATRON_ALLOCATOR, released_schedules=("1f1b", "interleaved"),
                         pp_p2p_overlap=True, layout_defaults={"sp": True}, default_zero_stage=1, cp_comms=("ring", "a2a"),
                         cp_a2a_replicates_kv=False, cp_a2a_fused_only=True, zero2_accumulation="full_buffer",
                         searched_tp_overlap=True, pipeline_zero_stages=(0, 1), eager_ops=("expert_bias",),
                         zero3_per_step="never",
                         sources={"host_adam_params_per_s": _MEGATRON_CPU_ADAM,
                                  "zero3_per_step": "'never': Megatron-LM's ZeRO-3 is Megatron-FSDP "
                                  "(--data-parallel-sharding-strategy optim_grads_params), which gathers an FSDP unit's "
                                  "parameters before its forward and again before its backward and releases them after "
                                  "(Megatron-Core developer guide, core.distributed.fsdp.src.megatron_fsdp.megatron_fsdp: "
                                  "TrainingState FORWARD / PRE_BACKWARD / POST_BACKWARD, RegisterFSDPBackwardFunction "
                                  "'used to release the parameters after the backward pass'); its "
                                  "DistributedDataParallelConfig has no option that keeps them across the microbatches "
                                  "of a step, nor does --use-torch-fsdp2 (fully_shard with resharding): every "
                                  "microbatch re-gathers",
                                  "eager_ops": "('expert_bias',): Megatron-Core megatron/core/transformer/moe/"
                                  "experts.py TEGroupedMLP builds linear_fc2 with skip_bias_add=True and adds the "
                                  "per-expert bias in _apply_bias (a Python loop over the local experts of "
                                  "t + b * p with the fp32 routed probabilities, torch.cat, .to(dtype)), eager "
                                  "PyTorch ops outside the fused kernels (shardplan.cost.compute."
                                  "eager_op_extra_bytes); only models with expert biases (GPT-OSS) pay it",
                                  "pipeline_zero_stages": "ZeRO-2/3 are Megatron-FSDP (--use-megatron-fsdp, "
                                  "--data-parallel-sharding-strategy optim_grads / optim_grads_params), which runs "
                                  "with TP, EP and CP but not with pipeline parallelism: its docs list those three "
                                  "(NVIDIA/Megatron-LM issue #1455, open), and NVIDIA/Megatron-LM PR #6081's "
                                  "multimodal launch script refuses USE_FSDP with PP > 1 ('FSDP and PP are mutually "
                                  "exclusive in Megatron's standard path'); with pp > 1 the distributed optimizer "
                                  "(ZeRO-1) or none",
                                  "offload_keeps_grads": "NVIDIA/Megatron-LM megatron/core/optimizer/cpu_offloading/"
                                  "README.md: 'Gradient copy from GPU to CPU, CPU optimizer step, and subsequent "
                                  "parameter copy from CPU to GPU' (HybridDeviceOptimizer): the DDP main-grad buffer "
                                  "stays on the GPU, the host steps on a copy",
                                  "offload_zero_stages": "megatron/training/arguments.py: --optimizer-cpu-offload asserts "
                                  "--use-precision-aware-optimizer, which OptimizerConfig allows only with "
                                  "--use-distributed-optimizer (ZeRO-1, or Megatron-FSDP's stages): no ZeRO-0 offload",
                                  "zero2_accumulation": _MEGATRON_ZERO2, "searched_tp_overlap": _MEGATRON_TP_OVERLAP, "released_schedules": _MEGATRON_SCHEDULES, "a2a_overlap_share": _MEGATRON_A2A_OVERLAP,
                                  "cp_comms": _MEGATRON_CP_COMM, "cp_a2a_replicates_kv": _TE_A2A_HEADS,
                                  "cp_a2a_fused_only": _TE_CP_BACKENDS,
                                  "default_zero_stage": "1: Megatron-LM's --use-distributed-optimizer is opt-in, but "
                                  "NVIDIA's Megatron-Bridge recipes set DistributedDataParallelConfig("
                                  "use_distributed_optimizer=True) (e.g. recipes/llama/llama31_405b.py), as NeMo's do",
                                  "layout_defaults": "sp wherever tp > 1: Megatron-LM's --sequence-parallel is opt-in, "
                                  "but NVIDIA's Megatron-Bridge recipes turn it on with every tp > 1 (e.g. "
                                  "src/megatron/bridge/recipes/llama/llama31_405b.py model_config: sequence_parallelism "
                                  "True), as do NeMo's; the Megatron-LM tp-comm overlap requires it. --no-sp turns it off",
                                  "pp_p2p_overlap": "megatron/training/arguments.py: --no-overlap-p2p-communication "
                                  "(store_false: overlap_p2p_comm on by default), forced off with a warning for "
                                  "non-interleaved schedules; core/pipeline_parallel/schedules.py posts the interleaved "
                                  "schedule's isend / irecv before a chunk's compute and waits after it",
                                  "moe_expert_overhead_s": _MEGATRON_MOE, "moe_layer_overhead_s": _MEGATRON_MOE,
                                  "dp_bucket_min_params": _MEGATRON_BUCKETS, "dp_bucket_params_per_rank": _MEGATRON_BUCKETS,
                                  "allocator_overhead": _MEGATRON_RUNTIME, "context_bytes": _MEGATRON_RUNTIME}),
        FrameworkProfile(name="maxtext", device_kinds=("gpu", "tpu"), moe_routed_copies=2, activation_offload="remat_inputs", module_recompute=False, vocab_divisible_by=1,
                         zero3_gather_compute_dtype=True, schedules=("gpipe",), zero_stages=(0, 1, 3), logit_bytes=2.0,
                         recompute_after_loss=True, weight_sharding_axes=("cp", "ep"), tp_requires_sp=True,
                         named_remat=True, selective_recompute="named_dots", layout_defaults={"sp": True},
                         default_precision="fp32-params", gpu_matmul_scale=1.16, default_zero_stage=3,
                         memory_limited_schedule=True, expert_tensor_parallel=False, expert_group="dp",
                         pipeline_split="even", min_microbatches="multiple_of_pp", grouped_gemm_row_tile=512,
                         sources={"grouped_gemm_row_tile": "512: MaxText configs/base.yml tile_batch_seq: 512 (later "
                                  "wi/wo_tile_{fwd,dlhs,drhs}_batch_seq: 512), the row tile layers/moe.py "
                                  "RoutedMoE.sparse_matmul passes (min(tile, rows)) to the megablox gmm / tgmm of "
                                  "its dropless path (megablox and sparse_matmul true, capacity_factor -1: base.yml "
                                  "defaults); make_group_metadata (jax/experimental/pallas/ops/tpu/megablox/gmm.py) "
                                  "runs a tile shared by two experts once per expert: (experts - 1) x 512 rows more "
                                  "per grouped GEMM (shardplan.cost.compute.grouped_gemm_rows). TPU only",
                                  "pipeline_split": "'even': MaxText base.yml num_layers_per_pipeline_stage, one "
                                  "count for every stage (layers = stages x layers per stage x num_pipeline_repeats)",
                                  "min_microbatches": "'multiple_of_pp': MaxText base.yml num_pipeline_microbatches "
                                  "\"must be a multiple of the number of pipeline stages\"",
                                  "expert_tensor_parallel": "False: MaxText src/MaxText/configs/base.yml "
                                  "logical_axis_rules put the experts' 'mlp' dimension on the same tensor axes "
                                  "(['fsdp_transpose', 'tensor', 'tensor_sequence', 'autoregressive']) as the dense "
                                  "MLP's and 'exp' on 'expert'; no option gives the experts a tensor degree of their own",
                                  "expert_group": "'dp': base.yml's 'expert' mesh axis is a dimension of its own beside "
                                  "'context' (the mesh's product is the devices), and the 'embed' rule shards the "
                                  "weights over fsdp and expert together: the expert group comes out of the ZeRO-3 "
                                  "(fsdp) ranks, not the context ones (shardplan's MaxText export refuses other ep)",
                                  "memory_limited_schedule": "OpenXLA xla/service/latency_hiding_scheduler.h: "
                                  "SchedulerConfig::memory_limit and depth_based_memory_pressure_reduction (the "
                                  "latency-hiding scheduler tracks the schedule's memory peak against the device's limit "
                                  "and gives up overlap, scheduling again with a lower limit, to stay under it; apple/axlearn "
                                  "axlearn/common/compiler_options.py documents the TPU flags: "
                                  "xla_tpu_enable_scheduler_memory_pressure_tracking, and "
                                  "xla_tpu_scheduler_percent_shared_memory_limit (default 95% of HBM): near that limit the "
                                  "scheduler prefers lower memory to more overlap); written "
                                  "after the tpu-recipes v6e-256 GPT-3 175B run (FSDP 256, full remat), which ran where "
                                  "two gathered 1.8 B-parameter layers did not fit (docs/accuracy.md)",
                                  "zero3_gather_buffers": "2 (the default): the next scanned layer's FSDP AllGather "
                                  "runs beside this layer's compute (XLA's collective pipelining of the scan loop; on "
                                  "GPUs --xla_gpu_enable_pipelined_all_gather=true, which NVIDIA's MaxText recipes set "
                                  "and XLA leaves off by default: OpenXLA xla/debug_options_flags.cc); the held-out "
                                  "runs with default GPU flags are priced 'maxtext+zero3_gather_buffers=1' "
                                  "(benchmarks/public_runs.py SCOUTED_2026_12BE)",
                                  "default_zero_stage": "3: MaxText configs/base.yml ici_fsdp_parallelism: -1 (every "
                                  "chip of a slice not given to another axis shards the weights, FSDP)",
                                  "gpu_matmul_scale": "fitted (benchmarks/fit_frameworks.py maxtext_gpu_fit_table, scipy "
                                  "least_squares) to the 12 public NVIDIA dgxc-benchmarking MaxText Llama 2 70B H100 runs "
                                  "(64-2,048 GPUs, bf16 and fp8; benchmarks/public_runs.py) with their attention as the "
                                  "recipes run it (cudnn_flash_te: cuDNN's kernel), leave-one-row-out |error| median 1.3%, "
                                  "max 11.7% (docs/accuracy.md); the H100 asymptote 0.59 x 1.16 = 0.68, below the isolated "
                                  "cuBLAS GEMM rate the h100-sxm preset's matmul_efficiency source gives (0.73, SemiAnalysis; "
                                  "its isolated_matmul_efficiency, which caps the scale on every GPU: not applied where none "
                                  "is known, e.g. the A100): XLA's GEMMs run nearer it than the eager PyTorch programs the GPU "
                                  "presets are fitted on. (Priced with FlashAttention-2, as until the fifty-fifth session, "
                                  "the fit was 1.24, on the cap.)","vocab_divisible_by": _NO_PAD, "logit_bytes": _MAXTEXT_LOGITS,
                                  "default_precision": "MaxText configs/base.yml: weight_dtype float32 (the parameters "
                                  "and the optax state in fp32, updated in place: no master copy) and dtype bfloat16 "
                                  "(activations and matmuls): the planner's fp32-params",
                                  "recompute_after_loss": _MAXTEXT_LOGITS,
                                  "weight_sharding_axes": "MaxText's logical axis rules (configs/base.yml "
                                  "logical_axis_rules) shard the 'embed' dimension of the weights over fsdp, "
                                  "sequence, context and expert: cp or ep > 1 shards the weights (ZeRO-3); "
                                  "shardplan/export/maxtext.py refuses cp / ep with ZeRO-0/1 likewise",
                                  "selective_recompute": "MaxText layers/decoders.py minimal_policy (remat_policy "
                                  "'minimal', the planner's selective for MaxText: export / import map one to the "
                                  "other): jax.checkpoint_policies.save_only_these_names of query/key/value_proj, "
                                  "qkv_proj, out_proj, mlpwi(_0/_1) and mlpwo; the attention core and the "
                                  "element-wise work are recomputed",
                                  "named_remat": "MaxText layers/decoders.py get_remat_policy: minimal, "
                                  "save_dot_with_context_except_mlp, save_dot_except_mlpwi, save_dot_except_mlp, "
                                  "save_qkv_proj and save_out_proj are jax.checkpoint_policies.save_only_these_names "
                                  "of the checkpoint names query/key/value_proj, context, out_proj, mlpwi(_0/_1), "
                                  "mlpwo; custom keeps the tensors set to 'device'",
                                  "layout_defaults": "sp wherever tp > 1: MaxText's tensor axis always shards the "
                                  "activations (tp_requires_sp)",
                                  "tp_requires_sp": "MaxText configs/base.yml logical_axis_rules: activation_embed, "
                                  "activation_mlp and activation_heads on the 'tensor' axis (activation_batch not): the "
                                  "saved activations between the TP regions are sharded tp ways, the planner's sp",
                                  "activation_offload": "MaxText configs/base.yml: remat_policy 'custom' takes per-tensor "
                                  "knobs ('remat' | 'device' | 'offload'), decoder_layer_input among them; with every "
                                  "other knob 'remat' that is full recompute whose saved layer inputs live in host memory "
                                  "(tpu-recipes trillium Llama3.1-405B-MaxText runs it)",
                                  "schedules": "MaxText's pipeline (layers/pipeline.py) runs every microbatch's forward "
                                  "before the backwards: GPipe, whose in-flight activations the planner prices; its "
                                  "circular variant (num_pipeline_repeats) keeps the same all-forward order, which "
                                  "the planner's 1F1B-interleaved memory count does not describe, so it is not offered",
                                  "zero_stages": "MaxText shards the optimizer state over data (shard_optimizer_over_data: "
                                  "ZeRO-1) or everything over the fsdp axis (ZeRO-3); it has no ZeRO-2 "
                                  "(shardplan/export/maxtext.py refuses it)",
                                  "zero3_gather_compute_dtype": "MaxText layers cast the fp32 kernel to the compute dtype "
                                  "(layers/linears.py DenseGeneral: jnp.asarray(kernel, self.dtype)) before the dot; the "
                                  "cast, an element-wise op, keeps the kernel's FSDP sharding under GSPMD's sharding "
                                  "propagation (Xu et al. 2021, GSPMD), so the AllGather before the dot moves bf16"}),
        FrameworkProfile(name="torchtitan", moe_routed_copies=2, activation_offload=False, module_recompute=False, elementwise_traffic=5.31, vocab_divisible_by=1, loss="eager",
                         gpu_matmul_scale=1.32, zero3_per_step="with_pp", host_adam_params_per_s=3.5e9, param_offload="with_optimizer",
                         tp_overlap=False, fp16_training=False,
                         zero3_master_is_param=True, cp_load_balance=False, zero_stages=(0, 2, 3),
                         weight_sharding_axes=("cp",), tp_requires_sp=True, layout_defaults={"sp": True}, sp_seq_dim_copies=True,
                         default_zero_stage=3, released_schedules=("gpipe", "1f1b", "interleaved"),
                         selective_recompute="every_other_matmul", pp_unsharded_grad_bytes=4, grad_reduce_bytes=4,
                         local_batch_flushes=True, expert_group="dp2ep", zero2_param_gather="per_microbatch",
                         min_microbatches="at_least_pp",
                         **_TITAN_ALLOCATOR,
                         sources={"min_microbatches": "'at_least_pp': torch.distributed.pipelining schedules.py "
                                  "PipelineScheduleSingle (ScheduleGPipe, Schedule1F1B) raises \"Number of microbatches "
                                  "(1) must be greater than or equal to the number of stages (2)\", which torchtitan's "
                                  "pipelines run into with a local batch of fewer microbatches than stages",
                                  "zero2_param_gather": "'per_microbatch': torchtitan train.py (at 000204a) train_step "
                                  "runs forward_backward_step once per gradient-accumulation microbatch without "
                                  "set_reshard_after_backward(False), and FSDP2 reshards after every backward by "
                                  "default, so fsdp_reshard_after_forward 'never' (ZeRO-2) gathers the parameters again "
                                  "in each microbatch's forward (a new user's 13B plan priced one gather per step)",
                                  "expert_group": "'dp2ep': torchtitan distributed/parallel_dims.py builds the expert "
                                  "mesh from the FSDP shard x cp (x tp with expert_tensor_parallel_degree 1) ranks: cp "
                                  "(x tp) divides expert_parallel_degree and it divides that product (shardplan's "
                                  "torchtitan export checks the same rule)",
                                  "param_offload": _FSDP_OFFLOAD + "; torchtitan [training] enable_cpu_offload "
                                  "passes CPUOffloadPolicy() to fully_shard (torchtitan pull 624)",
                                  "fp16_training": "torchtitan job_config.py Training.mixed_precision_param: "
                                                   "Literal['bfloat16', 'float32'] (no float16)",
                                  "released_schedules": _TITAN_SCHEDULES,"vocab_divisible_by": _NO_PAD, "elementwise_traffic": _fit("torchtitan", "tt_*", "1.2%, max 2.0%"), "gpu_matmul_scale": _EAGER_GEMM,
                                  "host_adam_params_per_s": _TORCH_FUSED_CPU_ADAM,
                                  "zero3_per_step": "'with_pp': torchtitan parallelize.py fully_shard(..., "
                                  "reshard_after_forward=not pp_enabled) under fsdp_reshard_after_forward 'default': "
                                  "the gathered parameters stay for the step's microbatches only in pipelined runs",
                                  "loss": _TITAN_LOSS, "selective_recompute": _TITAN_SAC, "sp_seq_dim_copies": _TITAN_SP_COPIES,
                                  "zero_stages": _TITAN_ZERO, "weight_sharding_axes": _TITAN_ZERO,
                                  "default_zero_stage": "3: torchtitan's parallelism.data_parallel_shard_degree "
                                  "defaults to -1 (FSDP2 over every rank the other dimensions leave)",
                                  "layout_defaults": "sp wherever tp > 1: its TP plan always shards the sequence "
                                  "(tp_requires_sp)",
                                  "tp_requires_sp": "torchtitan models/llama3/infra/parallelize.py apply_tp: the norms "
                                  "get SequenceParallel() and the blocks' inputs Shard(1), with no option to keep the "
                                  "sequence whole (shardplan/export/torchtitan.py refuses tp without sp likewise)",
                                  "pp_unsharded_grad_bytes": _TITAN_PP_GRADS, "cp_load_balance": _TITAN_CP,
                                  "grad_reduce_bytes": _TITAN_REDUCE, "local_batch_flushes": _TITAN_FLUSHES,
                                  "allocator_overhead": _TITAN_ALLOC, "context_bytes": _TITAN_ALLOC,
                                  "tp_overlap": "torchtitan models/llama3/infra/parallelize.py: async TP "
                                  "(enable_async_tensor_parallel) raises 'Async TP requires torch.compile' without "
                                  "compile: the eager profile refuses tp_overlap (--framework torchtitan-compile "
                                  "prices it)"}),
        FrameworkProfile(name="pytorch-fsdp", moe_routed_copies=2, activation_offload=False, module_recompute=False, overlap_slowdown=0.55, vocab_divisible_by=1,
                         default_zero_stage=3, host_adam_params_per_s=2.4e8, param_offload="with_optimizer",
                         pipeline_parallel=False, context_parallel=False, zero3_master_is_param=True, lazy_grads=True,
                         sources={"vocab_divisible_by": _NO_PAD, "lazy_grads": _LAZY_GRADS, "param_offload": _FSDP_OFFLOAD,
                                  "host_adam_params_per_s": _TORCH_CPU_ADAM,
                                  "overlap_slowdown": "fitted (benchmarks/fit_frameworks.py fsdp_fit_table, scipy "
                                  "least_squares) to the four fms-fsdp README rows (IBM's PyTorch FSDP / HSDP on 128 "
                                  "A100, FlashAttention-2 through SDPA; public_runs.FMS_FSDP): 0.546, leave-one-row-out "
                                  "|error| median 4.2%, max 6.8% (docs/accuracy.md)",
                                  "pipeline_parallel": _FSDP_ONLY, "context_parallel": _FSDP_ONLY,
                                  "default_zero_stage": "3: torch.distributed.fsdp.FullyShardedDataParallel's "
                                  "sharding_strategy defaults to ShardingStrategy.FULL_SHARD"}),
        FrameworkProfile(name="deepspeed", moe_routed_copies=2, activation_offload=False, module_recompute=False,
                         zero0_bf16_optimizer=True, param_gather_overlap=False, offload_zero_stages=(1, 2, 3),
                         host_adam_params_per_s=1.6e9, param_offload="independent",
                         zero3_prefetch=0.221, zero3_nic_share=0.217, layer_overhead_s=0.0122,
                         grad_bucket_elements=5e8,
                         eager_ops=("rope", "swiglu", "attention_layout"),
                         layer_overhead_recomputed_only=True, recomputes=("none", "full"), cp_comms=("a2a",),
                         schedules=("1f1b",), pipeline_zero_stages=(0, 1),
                         sources={"zero3_prefetch": _DS_ZERO3, "zero3_nic_share": _DS_ZERO3, "host_adam_params_per_s": _CPU_ADAM,
                                  "grad_bucket_elements": "deepspeedai/DeepSpeed runtime/zero/config.py "
                                  "reduce_bucket_size default 500,000,000 and contiguous_gradients default true; "
                                  "runtime/zero/stage_1_and_2.py backward(): ipg_buffer of reduce_bucket_size "
                                  "elements in the model dtype, a second one with overlap_comm (new-user pass 55)",
                                  "zero0_bf16_optimizer": "deepspeedai/DeepSpeed runtime/engine.py: get_data_types "
                                  "(bf16 without ZeRO accumulates gradients in fp32) and _do_optimizer_sanity_check "
                                  "(then the BFLOAT16 wrapper), runtime/bf16_optimizer.py BF16_Optimizer (fp32 "
                                  "partition per dp rank, full-size fp32 gradient buffer, all_gather_dp_groups after "
                                  "the step); not fitted",
                                  "param_offload": "deepspeedai/DeepSpeed runtime/zero/offload_config.py and the "
                                  "config docs (Parameter offloading): zero_optimization.offload_param moves the ZeRO-3 "
                                  "parameter partitions to host (or NVMe) memory, 'valid only with stage 3', and is set "
                                  "apart from offload_optimizer; each partition is copied to the device before its "
                                  "all-gather (ZeRO-Infinity, Rajbhandari et al. 2021 Sec. 6.1: bandwidth-centric "
                                  "partitioning, every rank moves its own 1/dp over its own PCIe link)",
                                  "offload_zero_stages": "deepspeedai/DeepSpeed runtime/zero/config.py: "
                                  "offload_optimizer is \"valid for ZeRO stage 1, 2, 3\"",
                                  "param_gather_overlap": "deepspeedai/DeepSpeed runtime/zero/stage_1_and_2.py "
                                  "DeepSpeedZeroOptimizer.step: after the partition's update, all_gather_dp_groups "
                                  "gathers the updated bf16 partitions inside step() (\"ready for next round "
                                  "forward\"), a blocking call before the next forward; not fitted",
                                  "layer_overhead_s": _DS_LAYER, "layer_overhead_recomputed_only": _DS_LAYER_RC,
                                  "eager_ops": "Megatron-DeepSpeed's model code (microsoft/Megatron-DeepSpeed "
                                  "megatron/model/: rotary_pos_embedding.py apply_rotary_pos_emb in plain PyTorch, "
                                  "transformer.py's SwiGLU as chunk + F.silu(x[0]) * x[1], and "
                                  "rearrange(...).contiguous() copies around flash-attn), as Megatron-LM's legacy code "
                                  "(the megatron-legacy profile); its RoPE skips the final cat, counted all the same. "
                                  "RMSNorm is apex's fused MixedFusedRMSNorm on CUDA (megatron/model/__init__.py since "
                                  "commit 8822a5ce; rmsnorm.py's plain one only off CUDA): not eager. Not fitted; "
                                  "checked on FlagPerf's Llama 2 7B Megatron-DeepSpeed run (docs/accuracy.md)",
                                  "recomputes": "deepspeed/runtime/activation_checkpointing/checkpointing.py: "
                                  "deepspeed.checkpointing.checkpoint(function, *args) recomputes the whole function "
                                  "it wraps, a decoder layer in Megatron-DeepSpeed and the Hugging Face models (no "
                                  "attention-only selective recomputation)",
                                  "cp_comms": "DeepSpeed has no ring context parallelism: its sequence parallelism is "
                                  "DeepSpeed-Ulysses (Jacobs et al. 2023; deepspeed/sequence/layer.py "
                                  "DistributedAttention, and for Hugging Face models "
                                  "deepspeed/runtime/sequence_parallel/ulysses_sp.py UlyssesSPAttentionHF with the "
                                  "ds_config key sequence_parallel_size): AllToAlls over attention heads, "
                                  "cp_comm='a2a'",
                                  "schedules": "deepspeed/runtime/pipe/schedule.py: TrainSchedule, a 1F1B-style "
                                  "schedule, is the PipelineEngine's only training schedule",
                                  "pipeline_zero_stages": "deepspeed/runtime/pipe/engine.py PipelineEngine.__init__: "
                                  "assert zero_optimization_stage() < 2 ('ZeRO-2 and ZeRO-3 are incompatible with "
                                  "pipeline parallelism')"}),
        FrameworkProfile(name="nanotron", moe_routed_copies=2, activation_offload=False, module_recompute=False, grad_buffer_bytes=4, loss="eager", **_NANOTRON_ALLOCATOR,
                         logit_bytes=8.0, lm_head_stage_bytes=65.0, pipeline_split="cost_greedy", vocab_divisible_by=1,
                         param_gather_overlap=False, layout_defaults={"sp": True, "tp_overlap": True},
                         min_microbatches="pp_minus_1", schedules=("gpipe", "1f1b"), zero_stages=(0, 1),
                         recomputes=("none", "full"), context_parallel=False, expert_parallel=False,
                         usable_hbm_fraction=0.84,
                         **_NANOTRON_FITTED,
                         sources={"grad_buffer_bytes": _FP32_MAIN_GRADS, "loss": _NANOTRON_LOSS,
                                  "logit_bytes": _NANOTRON_LOGITS, "lm_head_stage_bytes": _NANOTRON_HEAD,
                                  "allocator_overhead": _NANOTRON_ALLOC, "context_bytes": _NANOTRON_CONTEXT,
                                  "allocator_base_bytes": _NANOTRON_BASE, "usable_hbm_fraction": _NANOTRON_OOM,
                                  "pipeline_split": _NANOTRON_SPLIT, "vocab_divisible_by": _NO_PAD,
                                  "layout_defaults": "the measured H100 grid the profile's constants are fitted on "
                                  "runs TP with sequence parallelism and asynchronous TP communication (nanotron "
                                  "ParallelismArgs tp_mode REDUCE_SCATTER, tp_linear_async_communication true; "
                                  "shared/calibration/README.md)",
                                  "param_gather_overlap": "nanotron optim/zero.py ZeroDistributedOptimizer.step: "
                                  "super().step() then self._all_gather_params(), one blocking "
                                  "dist.all_gather_coalesced of every updated shard after the update (no "
                                  "async_op), so nothing hides it",
                                  "min_microbatches": "nanotron parallel/pipeline_parallel/engine.py "
                                  "OneForwardOneBackwardPipelineEngine.train_batch_iter: "
                                  "assert nb_microbatches >= pp - 1",
                                  "zero_stages": "nanotron config OptimizerArgs.zero_stage: 0 or ZeRO-1 (any stage > 0 "
                                  "shards the optimizer state only, optim/zero.py ZeroDistributedOptimizer)",
                                  "recomputes": "nanotron config ParallelismArgs recompute_layer: whole decoder layers "
                                  "(no selective recomputation)",
                                  "context_parallel": _NANOTRON_CP_EP, "expert_parallel": _NANOTRON_CP_EP,
                                  "schedules": "nanotron parallel/pipeline_parallel/engine.py: "
                                  "AllForwardAllBackwardPipelineEngine and OneForwardOneBackwardPipelineEngine",
                                  "pp_message_stall_s": _NANOTRON_NO_STALL, **_NANOTRON_FIT_SOURCES}),
    ]
}
_FOUNDRY = ("llm-foundry's MPT models (MosaicML Composer's FSDP, the pytorch-fsdp profile and its fitted constants) run "
            "the Triton FlashAttention: attn_config attn_impl: triton in scripts/train/yamls/pretrain/mpt-*.yaml and "
            "the default of scripts/train/benchmarking/submit_benchmarks.py --attn_impl")
#: the Ultra-Scale Playbook campaign's nanotron runs (the measured H100 grid and its 3B / 80B runs): nanotron plus
#: the pipeline stall of the campaign's runs made with the build before the playbook team's pipeline fix, with the
#: triggers that tell from a layout alone which runs those were (what usp-h100-efa.yaml predicts the grid with)
FRAMEWORKS["nanotron-usp"] = FRAMEWORKS["nanotron"].model_copy(update={
    "name": "nanotron-usp", "pp_message_stall_s": 0.252, "pp_stall_min_nodes": 32, "pp_stall_min_tp_nodes": 4,
    "pp_stall_zero0_min_microbatches": 16, "pp_stall_zero0_min_nodes": 4, "pp_stall_all_nodes": 64,
    "pp_stall_min_dp": 32, "pp_stall_min_message_bytes": 2.0**26, "pp_stall_min_sequences": 2,
    "pp_stall_zero0_max_nodes": 32,
    "sources": {**FRAMEWORKS["nanotron"].sources, "name": _NANOTRON_CAMPAIGN, "pp_message_stall_s": _NANOTRON_FIT_NOTE,
                "pp_stall_min_nodes": _NANOTRON_STALL_NODES, "pp_stall_min_tp_nodes": _NANOTRON_STALL_TP_NODES,
                "pp_stall_zero0_min_microbatches": _NANOTRON_STALL_ZERO0, "pp_stall_zero0_min_nodes": _NANOTRON_STALL_ZERO0,
                "pp_stall_all_nodes": _NANOTRON_STALL_PARTIAL, "pp_stall_min_dp": _NANOTRON_STALL_PARTIAL,
                "pp_stall_min_message_bytes": _NANOTRON_STALL_PARTIAL, "pp_stall_min_sequences": _NANOTRON_STALL_SEQUENCES,
                "pp_stall_zero0_max_nodes": _NANOTRON_STALL_ZERO0_MAX}})
FRAMEWORKS["llm-foundry"] = FRAMEWORKS["pytorch-fsdp"].model_copy(update={
    "name": "llm-foundry", "attention_kernel": "triton", "overlap_slowdown": 0.30, "logit_bytes": 4.0,
    "lazy_grads": False,
    "sources": {**FRAMEWORKS["pytorch-fsdp"].sources, "attention_kernel": _FOUNDRY,
                "lazy_grads": "off: Composer's DecoupledAdamW (composer/optim/decoupled_weight_decay.py) steps parameter "
                "by parameter, with no whole-model foreach temporary, and no llm-foundry run publishes its memory",
                "logit_bytes": "llm-foundry models/mpt/modeling_mpt.py ComposerMPTCausalLM: loss_fn defaults to "
                "'fused_crossentropy', flash_attn.losses.cross_entropy.CrossEntropyLoss(ignore_index=-100): the bf16 "
                "logits are saved for the backward, which writes a bf16 gradient (inplace_backward off); the loss "
                "and log-sum-exp are one fp32 value per token: 2 + 2 B per vocabulary element, not an fp32 softmax. "
                "Read after the llm-foundry README's A100 40GB rows, 7 of which ran but were predicted 0.5-2.1 GiB "
                "over at 6 B (docs/accuracy.md)",
                "overlap_slowdown": _fit("llm-foundry", "llmfoundry*", "8.1%, max 21.1%")}})

_AUTOMODEL_KERNELS = ("NeMo AutoModel's benchmark recipes (examples/benchmark/configs/*_te_deepep.yaml) run Transformer "
                      "Engine linear layers and RMSNorm with fused RoPE (backend: linear: te, rms_norm: te, rope_fusion: "
                      "true): fused element-wise kernels as in Megatron-LM, not torchtitan's eager ones")
_AUTOMODEL_LOSS = ("nemo_automodel MaskedCrossEntropy with fp32_upcast: false in the benchmark recipes: F.cross_entropy on "
                   "the bf16 logits, which keeps them (2 B) and its bf16 log-softmax output (2 B) per vocabulary element")
_AUTOMODEL_STATE = ("NeMo AutoModel's model classes cast every weight to bf16 when they initialise (e.g. "
                     "components/models/gpt_oss/model.py initialize_weights(dtype=torch.bfloat16): self.to(dtype)), so "
                     "FSDP2 shards bf16 parameters and their bf16 gradients, and the recipes' torch.optim.Adam creates "
                     "its two moments like the parameter (torch/optim/adam.py: torch.zeros_like(p)): bf16, no fp32 "
                     "master, 8 B per parameter. Checked on the AutoModel H100 table (benchmarks/public_runs.py "
                     "AUTOMODEL_H100), which the fp32-state guess of 16 B predicted 4 of 5 runs out of memory")
#: NeMo AutoModel (NVIDIA-NeMo/Automodel, the PyTorch backend of NeMo): torchtitan's FSDP2 + torch.distributed.pipelining
#: composition (the torchtitan profile's memory behaviour) with Transformer Engine kernels and DeepEP. Nothing fitted on
#: its own runs: its published rows are held-out checks (benchmarks/public_runs.py AUTOMODEL_H100)
FRAMEWORKS["automodel"] = FRAMEWORKS["torchtitan"].model_copy(update={
    "name": "automodel", "fp16_training": True, "elementwise_traffic": 1.0, "loss": "fused", "logit_bytes": 4.0, "attention_kernel": "cudnn",
    "optimizer_dtype": "bf16", "moe_tensor_parallel": False, "gpu_matmul_scale": 1.0, "zero3_per_step": "any",
    "sp_seq_dim_copies": False,
    "sources": {**{k: v for k, v in FRAMEWORKS["torchtitan"].sources.items()
                   if k not in ("elementwise_traffic", "gpu_matmul_scale", "zero3_per_step", "sp_seq_dim_copies")},
                "sp_seq_dim_copies": "False: AutoModel's own tensor-parallel plans were not read for this term "
                "(the torchtitan profile's, from torchtitan's TP plan); priced without the copies",
                "zero3_per_step": "'any': NeMo AutoModel's DeepSeek-V3 recipes keep the FSDP2 parameters gathered "
                "across microbatches (benchmarks/public_runs.py, the AutoModel rows priced zero3_gather per_step)",
                "optimizer_dtype": _AUTOMODEL_STATE,
                "gpu_matmul_scale": "1 (the preset's end-to-end asymptote, not eager torchtitan's 1.32): Transformer "
                "Engine's fused kernels, priced at the fused element-wise count like the megatron profile",
                "fp16_training": "True (not torchtitan's restriction): AutoModel builds its FSDP2 MixedPrecisionPolicy "
                                 "from its own config's dtypes; no source found that restricts them to bf16 / fp32",
                "moe_tensor_parallel": "components/moe/parallelizer.py parallelize_model asserts 'Tensor parallelism "
                "not supported for custom MoE models'",
                "elementwise_traffic": _AUTOMODEL_KERNELS, "loss": _AUTOMODEL_LOSS, "logit_bytes": _AUTOMODEL_LOSS,
                "attention_kernel": "the recipes' attn: te, Transformer Engine DotProductAttention, whose fused backend "
                "on Hopper and Blackwell is cuDNN's (as the megatron profile); the GPT-OSS recipes run PyTorch "
                "FlexAttention (attn: flex), which has no kernel table of its own and is priced as this one"}})

_COMPILE_KERNELS = ("torchtitan with [compile] enable = true (--compile.enable; --training.compile before mid-2025): "
                    "models/llama3/infra/parallelize.py apply_compile wraps every TransformerBlock in "
                    "torch.compile(fullgraph=True), whose Inductor backend fuses each chain of element-wise ops "
                    "(RMSNorm, RoPE, SiLU x up, residual adds) into one generated kernel that reads its inputs and "
                    "writes its outputs once (Ansel et al. 2024, 'PyTorch 2', ASPLOS: the TorchInductor section), the traffic the fused "
                    "kernels of elementwise_bytes_per_token count (1), where the eager profile's 5.31 is fitted. "
                    "Not fitted: checked on compiled runs never fitted on (docs/accuracy.md 'torch.compile')")
_COMPILE_LOSS = ("torchtitan components/loss.py build_cross_entropy_loss: with compile enabled and 'loss' in "
                 "compile.components (the default components: model and loss) the loss F.cross_entropy(pred.float()) is "
                 "compiled too; Inductor fuses the fp32 upcast, log-softmax and NLL into one kernel that keeps "
                 "the bf16 logits and one fp32 log-sum-exp per token, and the backward writes a bf16 gradient: "
                 "2 + 2 B per vocabulary element, as a fused cross-entropy. The Dec 2024 runs of "
                 "docs/performance.md compiled the blocks only (train.py then called the loss eagerly)")
#: torchtitan with torch.compile: the torchtitan profile's FSDP2 / pipelining / CP behaviour with Inductor's fused
#: element-wise kernels and compiled loss. Nothing fitted on compiled runs (benchmarks/public_runs.py: the Trainy
#: H200 runs, OLMo-core's README, docs/performance.md Tables 1-6 are checks)
FRAMEWORKS["torchtitan-compile"] = FRAMEWORKS["torchtitan"].model_copy(update={
    "name": "torchtitan-compile", "elementwise_traffic": 1.0, "loss": "fused", "logit_bytes": 4.0, "compiled": True,
    "tp_overlap": True, "tp_overlap_slowdown": 0.81, "gpu_matmul_scale": 1.0, "sp_seq_dim_copies": False,
    "sources": {**{k: v for k, v in FRAMEWORKS["torchtitan"].sources.items() if k not in ("tp_overlap", "sp_seq_dim_copies")},
                "gpu_matmul_scale": _COMPILE_GEMM,
                "sp_seq_dim_copies": "False: under torch.compile Inductor lowers the functional collectives' chunk + cat "
                "itself (and async TP rewrites the gathers); what copies remain was not checked, so none are priced",
                "elementwise_traffic": _COMPILE_KERNELS, "loss": _COMPILE_LOSS, "logit_bytes": _COMPILE_LOSS,
                "compiled": _COMPILE_KERNELS, "tp_overlap_slowdown": _ASYNC_TP}})

#: Megatron-LM before Megatron-Core's overlapped pipeline sends (the 2021-2023 releases of Narayanan et al. 2021,
#: Korthikanti et al. 2022 and MegaScale's Megatron-LM baseline, Jiang et al. 2024, whose own system adds the
#: overlap): the megatron profile with every stage-boundary send exposed
FRAMEWORKS["megatron-legacy"] = FRAMEWORKS["megatron"].model_copy(update={
    "name": "megatron-legacy", "pp_p2p_overlap": False, "eager_ops": ("rope", "swiglu", "rmsnorm", "attention_layout"),
    "default_precision": "bf16-mixed-fp32-grads", "layout_defaults": {}, "default_zero_stage": 0, "cp_comms": ("ring",),
    "searched_tp_overlap": False, "pipeline_zero_stages": (0, 1, 2),
    "sources": {**FRAMEWORKS["megatron"].sources,
                "pipeline_zero_stages": "0, 1, 2: before Megatron-FSDP (2025) a Megatron-LM ZeRO stage above 0 is the "
                "distributed optimizer (--use-distributed-optimizer), which reduce-scatters the gradients from the full "
                "main-gradient buffer (ZeRO-2-style communication, zero2_accumulation 'full_buffer') and runs with "
                "pipeline parallelism (MegaScale's Megatron-LM baseline, Jiang et al. 2024 Tables 1-2: PP 8 with its "
                "ZeRO-2-style optimizer); ZeRO-3 never did",
                "searched_tp_overlap": "False: Megatron-LM's 2021-2023 releases had no tensor-parallel communication "
                "overlap (--tp-comm-overlap came with Transformer Engine's userbuffers in 2023)",
                "cp_comms": "ring only: Megatron-LM's --cp-comm-type (a2a, allgather, a2a+p2p beside the p2p ring) came "
                "with Megatron-Core in 2024, after the legacy model code this profile describes",
                "default_zero_stage": "0: the distributed optimizer came to Megatron-LM in 2022 as the opt-in "
                "--use-distributed-optimizer; the 2021 runs of Narayanan et al. 2021 reduce with DDP",
                "layout_defaults": "none: sequence parallelism came with Korthikanti et al. 2022 (Megatron-LM v3.0) as "
                "the opt-in --sequence-parallel; the 2021 runs of Narayanan et al. 2021 had none",
                "default_precision": "Megatron-LM's legacy megatron/arguments.py validate_args: with --bf16, "
                "'bfloat16 requires gradient accumulation and all-reduce to be done in fp32' "
                "(accumulate_allreduce_grads_in_fp32 forced on; --grad-reduce-in-bf16 came in 2024)",
                "eager_ops": "Megatron-LM's legacy model code (megatron/model/, 2023; e.g. NVIDIA/Megatron-LM @ "
                "00baee46): rotary_pos_embedding.py apply_rotary_pos_emb and rms_norm.py RMSNorm are plain PyTorch "
                "ops, transformer.py ParallelMLP runs SwiGLU as torch.chunk + F.silu(x[0]) * x[1] (only GeLU has "
                "the fused bias_gelu), and ParallelAttention copies Q, K, V and the output to and from the "
                "FlashAttention layout with rearrange(...).contiguous(); Megatron-Core's GPT model later fused "
                "each (Transformer Engine norms, bias_swiglu, --apply-rope-fusion). Not fitted: checked on the "
                "2023 Megatron-LM rows of RoPE models scouted after every fit (Skywork-13B, FP8-LM, Seq1F1B: "
                "median +20.2% / +11.1% before, docs/accuracy.md)",
                "pp_p2p_overlap": "False: Megatron-LM's interleaved schedule of 2021-2023 sends between chunks with "
                "blocking batched p2p (Narayanan et al. 2021 Sec. 4.1, the scatter/gather optimisation of those sends); "
                "overlap_p2p_comm came with Megatron-Core, and MegaScale (Jiang et al. 2024 Sec. 3.2) lists overlapping "
                "the pipeline sends among its own changes to its Megatron-LM baseline"}})

_HF_EAGER = ("Hugging Face Transformers model code (e.g. transformers models/llama/modeling_llama.py: LlamaRMSNorm, "
             "apply_rotary_pos_emb, act_fn(gate_proj(x)) * up_proj(x) and the residual adds as separate eager PyTorch "
             "ops) reads and writes every element-wise intermediate: the eager torchtitan profile's fitted 5.31. "
             "Checked (not fitted) on fms-acceleration's A100 benchmark (IBM, scripts/benchmarks/refs/a100_80gb.csv): "
             "the stock HF Mistral-7B rows come out -6% to +3% with it and +15% to +25% at the fused-kernel 1, and the "
             "same runs with fused Triton RMSNorm / RoPE / loss ran 10-13% faster (docs/accuracy.md)")
_HF_LOSS = ("transformers LlamaForCausalLM.forward (4.4x; 5.x ForCausalLMLoss): logits = logits.float(), then "
            "cross-entropy on the fp32 logits: eager (shardplan.cost.memory.loss_bytes_per_token: 12 B per logit "
            "element at the backward's peak, 12.07 measured on one H100, docs/device.md)")
#: what transformers' eager decoder layers keep beyond the fused count (FrameworkProfile.eager_saved)
_HF_SAVED = ("fp32_norm_input", "attention_output_copy", "repeated_kv")
_HF_SAVED_SOURCE = ("transformers models/llama/modeling_llama.py (5.x): LlamaRMSNorm upcasts its input to fp32, "
                    "attn_output.transpose(1, 2).reshape(...) before o_proj, repeat_kv on the SDPA path; measured on one "
                    "H100 (transformers 5.17, PyTorch 2.11, docs/device.md): 51.1 B per token and d_model element per "
                    "layer (Llama-3-8B) and 53.6 (Llama-3.2-1B) against 42 / 45 without these terms, 51 / 54 with them")
#: why the Hugging Face profiles never keep ZeRO-3 parameters gathered across microbatches
_HF_REGATHER = ("'never': the Trainer runs every microbatch through the wrapped model; FSDP FULL_SHARD / FSDP2 "
                "reshard_after_forward=True re-gathers each unit in every forward and backward (no_sync skips only the "
                "gradient reduction), and DeepSpeed ZeRO-3 fetches each module's partitions when it runs "
                "(stage3_param_persistence_threshold keeps only small ones resident)")
#: Hugging Face Transformers models under PyTorch FSDP (Trainer / Accelerate / TRL) and under DeepSpeed ZeRO: the
#: pytorch-fsdp / deepspeed profiles' sharding behaviour with eager HF model code
FRAMEWORKS["hf-fsdp"] = FRAMEWORKS["pytorch-fsdp"].model_copy(update={
    "name": "hf-fsdp", "elementwise_traffic": FRAMEWORKS["torchtitan"].elementwise_traffic, "loss": "eager",
    "gpu_matmul_scale": FRAMEWORKS["torchtitan"].gpu_matmul_scale, "eager_saved": _HF_SAVED,
    "zero_stages": (0, 2, 3), "sequence_parallel": False, "recomputes": ("none", "full"), "zero3_per_step": "never",
    "sources": {**FRAMEWORKS["pytorch-fsdp"].sources, "elementwise_traffic": _HF_EAGER, "loss": _HF_LOSS,
                "gpu_matmul_scale": _EAGER_GEMM, "eager_saved": _HF_SAVED_SOURCE,
                "zero_stages": "(0, 2, 3): Accelerate's FSDP plugin takes FSDP's sharding strategies (FULL_SHARD = 3, "
                "SHARD_GRAD_OP = 2, NO_SHARD = 0, HYBRID_SHARD = 3 within a node; FSDP2's reshard_after_forward true / "
                "false = 3 / 2); FSDP shards gradients with the optimizer state, so no ZeRO-1 (a DDP launch is 0)",
                "sequence_parallel": "False: transformers' tensor-parallel plans (tp_plan, Accelerate's "
                "parallelism_config tp_size) shard the linear layers; no Megatron-style sequence parallelism of the "
                "norms and dropouts (shardplan's Accelerate export refuses it too)",
                "recomputes": "('none', 'full'): transformers' gradient_checkpointing wraps each decoder layer whole "
                "(PreTrainedModel.gradient_checkpointing_enable); no selective (attention-only) recompute",
                "zero3_per_step": _HF_REGATHER}})
FRAMEWORKS["hf-deepspeed"] = FRAMEWORKS["deepspeed"].model_copy(update={
    "name": "hf-deepspeed", "elementwise_traffic": FRAMEWORKS["torchtitan"].elementwise_traffic, "loss": "eager",
    "eager_ops": (), "gpu_matmul_scale": FRAMEWORKS["torchtitan"].gpu_matmul_scale, "eager_saved": _HF_SAVED,
    "zero3_per_step": "never",
    "layer_overhead_s": 0.0, "pipeline_parallel": False, "sequence_parallel": False, "cp_with_tp": False,
    "expert_parallel": False,
    "sources": {**FRAMEWORKS["deepspeed"].sources, "elementwise_traffic": _HF_EAGER, "loss": _HF_LOSS,
                "gpu_matmul_scale": _EAGER_GEMM, "eager_saved": _HF_SAVED_SOURCE, "zero3_per_step": _HF_REGATHER,
                "sequence_parallel": "False: DeepSpeed AutoTP training (docs/_tutorials/autotp-training.md; "
                "deepspeed/module_inject/auto_tp.py) replaces the model's nn.Linear layers with row / column sharded "
                "ones; no Megatron-style sequence parallelism of the norms and dropouts between them",
                "expert_parallel": "False: DeepSpeed's expert parallelism is model code (deepspeed/moe/layer.py "
                "MoE(ep_size=...)); the Hugging Face MoE blocks (e.g. transformers models/mixtral/modeling_mixtral.py "
                "MixtralSparseMoeBlock, an nn.ModuleList of experts) run every expert on every rank, sharded by ZeRO "
                "like any weight",
                "cp_with_tp": "False: the Hugging Face DeepSpeed-Ulysses integration (ALST, "
                "deepspeed/runtime/sequence_parallel/ulysses_sp.py UlyssesSPAttentionHF) is documented and tested "
                "without AutoTP; shardplan's DeepSpeed export refuses the pair for the same reason",
                "layer_overhead_s": "0: the HF Trainer's gradient_checkpointing wraps each decoder layer in "
                "torch.utils.checkpoint, not DeepSpeed's CheckpointFunction, whose per-layer cost the deepspeed "
                "profile's layer_overhead_s (fitted on Megatron-DeepSpeed rows) prices",
                "pipeline_parallel": "the HF Trainer / Accelerate integration runs DeepSpeed's ZeRO engine; "
                "DeepSpeed's PipelineModule needs the model rewritten as a layer list (Megatron-DeepSpeed does that)"}})

#: Paxml (google/paxml on Praxis, in NVIDIA's JAX containers with Transformer Engine): an XLA / GSPMD program like
#: MaxText's (the same memory behaviour, named remat policies: SAVE_DOT_ONLY keeps every dot output as MaxText's
#: 'minimal', SAVE_QKV_OUT_PROJ keeps those projections) whose public H100 runs are no faster than the GPU presets'
#: eager asymptote: nothing fitted on its runs (benchmarks/public_runs.py SCOUTED_2026_12, XLA_GPU_2026_12 hold them)
FRAMEWORKS["paxml"] = FRAMEWORKS["maxtext"].model_copy(update={
    "name": "paxml", "gpu_matmul_scale": 1.0, "grouped_gemm_row_tile": 0,
    "sources": {**{k: v for k, v in FRAMEWORKS["maxtext"].sources.items() if k != "grouped_gemm_row_tile"},
                "gpu_matmul_scale": "1 (the GPU presets' asymptote, not fitted): Paxml's public H100 runs (NVIDIA "
                "dgxc-benchmarking paxml GPT-3 5B / 175B, container pax-2024-03-04; JAX-Toolbox Pax 24.04) come out "
                "-6% to +21% at 1 (docs/accuracy.md), where MaxText's 70B runs need 1.16: a different program "
                "(Praxis layers calling Transformer Engine), not the maxtext profile's fit"}})


def framework_profile(name: str) -> FrameworkProfile:
    """Look up a framework profile by name (case-insensitive), or read a profile file (``.yaml`` / ``.yml`` / ``.json``:
    ``base: <name>`` plus FrameworkProfile fields, as ``shardplan calibrate --profile-out`` writes). ``NAME+field=value``
    (repeatable: ``megatron+loss=in_place``) is NAME with those fields replaced, as a profile file with ``base: NAME``
    would replace them (:func:`profile_from_mapping`; each value read as YAML: ``0.5``, ``true``, ``in_place``); the
    form docs/accuracy.md's public runs use for what a run's recipe sets.

    Raises:
        ConfigError: for an unknown name (lists the legal names), an unreadable file, a ``+`` part that is not
            ``field=value``, or a bad field.
    """
    from shardplan.loaders import is_file  # late: loaders reads the presets

    if "+" in name and not is_file(name):
        return _with_overrides(name)
    if name.lower().endswith((".yaml", ".yml", ".json")):
        return _profile_file(name)
    try:
        return FRAMEWORKS[name if name in FRAMEWORKS else name.strip().lower()]
    except KeyError:
        raise ConfigError(f"framework={short_repr(name)} is unknown; legal framework: {', '.join(FRAMEWORKS)} "
                          "(or a profile .yaml file)", field="framework", value=name, legal=list(FRAMEWORKS)) from None


def _with_overrides(name: str) -> FrameworkProfile:
    """``NAME+field=value[+field=value...]`` (:func:`framework_profile`).

    Raises:
        ConfigError: a part that is not ``field=value`` (or names a field twice), or what
            :func:`profile_from_mapping` raises for the base and the fields.
    """
    import yaml

    from shardplan.loaders import is_file, load_yaml_value

    pieces = name.split("+")
    # the base: the longest prefix that is a built-in's name or an existing file (a path may hold a "+")
    cut = next((i for i in range(len(pieces), 0, -1) if "+".join(pieces[:i]).strip().lower() in FRAMEWORKS
                or is_file("+".join(pieces[:i]))), 1)
    base, parts = "+".join(pieces[:cut]), _rejoin_exponents(pieces[cut:])
    data: dict = {"base": base}
    shown = short_repr(name)
    texts = []  # the parts as field=value without the spaces around them: the profile's spec (FrameworkProfile.inline)
    inline = [k for k in FrameworkProfile.model_fields if k not in ("name", "origin")]
    for part in parts:
        field, eq, value = part.partition("=")
        field = field.strip()
        if field in ("base", "name"):
            raise ConfigError(f"framework={shown}: {field} cannot be overridden inline (the part before the first + is "
                              f"the base profile, whose name the profile keeps); legal: NAME+field=value with another "
                              "field, e.g. deepspeed+loss=eager", field="framework", value=name)
        if not eq or not field or field in data:
            why = "names a field twice" if field in data else "is not field=value"
            raise ConfigError(f"framework={shown}: {short_repr(part)} {why}; legal: NAME+field=value, e.g. "
                              "megatron+loss=in_place (profile fields: docs/calibration.md, or a profile .yaml file)",
                              field="framework", value=name)
        if field not in inline:  # profile_from_mapping's list would offer base and name, refused above
            raise ConfigError(f"framework {shown}: {short_repr(field)} is not a profile field"
                              f"{did_you_mean(field, inline, prefixes=True)}; legal: {', '.join(inline)}", field=field,
                              value=value, legal=inline)
        try:
            data[field] = load_yaml_value(value) if value.strip() else value
        except yaml.YAMLError:
            data[field] = value
        texts.append(f"{field}={value.strip()}")
    profile = profile_from_mapping(data, f"framework {shown}")
    if base.strip().lower() not in FRAMEWORKS:  # a profile file's overrides: named by the file (label)
        return profile
    # " megatron +loss=in_place" is megatron+loss=in_place: a spec that keeps the spaces would not read as inline
    return profile.model_copy(update={"origin": "+".join([base.strip().lower(), *texts])})


def _rejoin_exponents(parts: list[str]) -> list[str]:
    """The ``+`` pieces of inline overrides with a number's own ``+`` put back: ``host_adam_params_per_s=1.6e+9``
    splits into ``...=1.6e`` and ``9``, ``step_overhead_s=+1`` into ``...=`` and ``1``; a piece that starts with a
    digit (or ``.``) after one ending in a mantissa and ``e`` (``1.6e``, ``[1e``) or in ``=`` is that number's sign,
    not another override (breaker findings: ``1.6e+9``, ``=+1``, ``[1e+9]``). Never empty: :func:`framework_profile`
    reads a whole name that is a file."""
    import re

    out: list[str] = []
    for part in parts:
        if out and re.search(r"(?:=\s*|[0-9.][eE])$", out[-1]) and re.match(r"[0-9.]", part):
            out[-1] += "+" + part
        else:
            out.append(part)
    return out


def _profile_file(path: str, seen: tuple[str, ...] = ()) -> FrameworkProfile:
    """A profile file: its ``base`` profile with the file's fields replacing the base's; a ``base``
    that is itself a file is read relative to this file's folder.

    Raises:
        ConfigError: an unreadable file, a bad field, or files that name each other as ``base``.
    """
    from shardplan.loaders import _read_mapping

    key = str(Path(path).resolve())
    if key in seen:
        raise ConfigError(f"framework {path}: base files name each other ({' -> '.join([*seen, key])})",
                          field="base_loop", value=path)
    return profile_from_mapping(_read_mapping(Path(path), "framework file"), f"framework {path}", Path(path).parent,
                                (*seen, key))


def _inherited(base: FrameworkProfile, data: dict) -> dict:
    """The base profile's fields a profile file starts from: a file that narrows ``schedules`` (what the framework
    implements) and leaves ``released_schedules`` out narrows the base's released schedules with it."""
    inherited = base.model_dump()
    if isinstance(data.get("schedules"), (list, tuple)) and "released_schedules" not in data \
            and base.released_schedules is not None:
        kept = tuple(s for s in base.released_schedules if s in data["schedules"])
        inherited["released_schedules"] = kept or None
    return inherited


def profile_from_mapping(data: dict, where: str = "framework", folder: Path | None = None,
                         seen: tuple[str, ...] = ()) -> FrameworkProfile:
    """A profile from a mapping: its ``base`` profile (required; a profile file is read relative
    to ``folder`` when given) with the mapping's fields replacing the base's (a profile file's content,
    or a hardware file's ``framework:`` section), with the field types checked strictly
    (:func:`shardplan.loaders.check_number_types`).

    Raises:
        ConfigError: a missing or unknown base, or an invalid field (named, with ``where``).
    """
    from pydantic import ValidationError

    from shardplan.loaders import check_number_types, config_error

    data = dict(data)
    if "base" not in data:
        raise ConfigError(f"{where}: base is missing (the profile whose fields the others replace); legal base: "
                          f"{', '.join(FRAMEWORKS)} or a profile file", field="base", value=None, legal=list(FRAMEWORKS))
    base_name = data.pop("base")
    if not isinstance(base_name, str) or not base_name.strip():
        raise ConfigError(f"{where}: base={short_repr(base_name)}; legal: {', '.join(FRAMEWORKS)} or a profile file",
                          field="base", value=base_name, legal=list(FRAMEWORKS))
    if base_name.lower().endswith((".yaml", ".yml", ".json")):
        path = Path(base_name) if folder is None or Path(base_name).is_absolute() else folder / base_name
        try:
            base = _profile_file(str(path), seen)
        except ConfigError as e:
            if e.field == "base_loop":  # already names every file of the loop
                raise
            raise ConfigError(f"{where}: base {base_name}: {e}", field="base", value=base_name) from None
    else:
        try:
            base = framework_profile(base_name)
        except ConfigError as e:
            raise ConfigError(f"{where}: base: {e}", field="base", value=base_name, legal=e.legal) from None
    settable = [k for k in FrameworkProfile.model_fields if k != "origin"]  # origin: where the profile was read
    unknown = [k for k in data if k not in settable]
    if unknown:
        legal = ["base", *settable]
        guess = did_you_mean(unknown[0], settable, prefixes=True)
        raise ConfigError(f"{where}: {short_repr(unknown[0])} is not a profile field{guess}; legal: {', '.join(legal)}",
                          field=str(unknown[0]), value=data[unknown[0]], legal=legal)
    check_number_types(data, FrameworkProfile, where)
    if "attention_kernel" not in data and base.attention_kernel is None and data.get("name", base.name) != base.name:
        # the default kernel is looked up by profile name (cost.gemm.FRAMEWORK_ATTENTION_KERNEL): a renamed copy of
        # megatron fell from cuDNN to FlashAttention-2, 7% on a step, without a word (breaker pass 56); it keeps its
        # base's kernel
        from typing import get_args

        from shardplan.cost.gemm import FRAMEWORK_ATTENTION_KERNEL
        from shardplan.specs.framework import AttentionKernelName
        if FRAMEWORK_ATTENTION_KERNEL.get(base.name) in get_args(AttentionKernelName):  # 'xla' (jax-runtime) is no
            data["attention_kernel"] = FRAMEWORK_ATTENTION_KERNEL[base.name]  # field value: the GEMM-asymptote default
    try:
        return FrameworkProfile(**{**_inherited(base, data), "name": data.pop("name", base.name), "origin": where,
                                   **data})
    except ValidationError as e:
        raise config_error(e, where) from None


#: the profile shardplan's own JAX runtime (``shardplan train``, ``validate``) is priced with, 'jax-runtime': MaxText's
#: (an XLA / GSPMD program, no vocabulary padding, bf16 FSDP gathers) without MaxText's own limits on pipeline
#: schedules and ZeRO stages, since the runtime implements GPipe, 1F1B and zero-bubble schedules and every ZeRO stage
JAX_RUNTIME = FRAMEWORKS["maxtext"].model_copy(update={
    "name": "jax-runtime", "schedules": ("gpipe", "1f1b", "interleaved", "zero-bubble"), "zero_stages": None,
    "activation_offload": False,
    "logit_bytes": None, "recompute_after_loss": False, "tp_requires_sp": False, "weight_sharding_axes": (),
    "named_remat": False, "layout_defaults": {}, "default_zero_stage": 0,
    "released_schedules": ("gpipe", "1f1b", "interleaved"), "cp_comms": ("ring", "a2a"), "cp_a2a_replicates_kv": True,
    "pipeline_split": "balanced", "min_microbatches": "none", "grouped_gemm_row_tile": 0,
    "sources": {**{k: v for k, v in FRAMEWORKS["maxtext"].sources.items()
                   if k not in ("logit_bytes", "recompute_after_loss", "tp_requires_sp", "weight_sharding_axes",
                                "named_remat", "layout_defaults", "pipeline_split", "min_microbatches",
                                "grouped_gemm_row_tile")},
                "pipeline_split": "shardplan.jax.pipeline places any split (parallel.balanced_split when pp does not "
                "divide the layers)", "min_microbatches": "shardplan.jax.pipeline runs any microbatch count",
                "expert_tensor_parallel": "shardplan.jax.model.check_runtime_support: etp other than tp is not "
                "implemented", "expert_group": "shardplan.jax.mesh: the ep axis is carved from the data-parallel "
                "(fsdp) ranks, beside cp",
                "released_schedules": "shardplan.jax.pipeline runs zero-bubble as 1F1B (docs/runtime.md): its smaller "
                "bubble is the planner's",
                "cp_comms": "shardplan.jax.model Attention: the K/V ring (shardplan.jax.ring) and DeepSpeed-Ulysses "
                "(_ulysses_core, GSPMD AllToAlls; docs/runtime.md)",
                "cp_a2a_replicates_kv": "shardplan.jax.model Attention._ulysses_core: a tp rank with fewer KV heads "
                "than cp repeats them up to cp before the AllToAll (shardplan.jax.ring.ulysses_kv_copies), as DeepSpeed "
                "does"}})
#: registered under its name, so that the records ``shardplan train --record`` writes (framework 'jax-runtime') are
#: priced, and calibrated, as the program the runtime ran (MaxText's own profile refuses tp without sp and 1F1B)
FRAMEWORKS["jax-runtime"] = JAX_RUNTIME

