"""Framework profiles: how much of the hardware a training framework turns into work.

Efficiency belongs to the software as much as to the chip: the same layout on the same GPUs runs
at different speeds and peaks under Megatron-LM, MaxText, torchtitan, PyTorch FSDP, DeepSpeed or
nanotron. A :class:`FrameworkProfile` is a small set of named, physical factors (fixed overheads,
overlap of each collective kind, kernel fusion, loss implementation, allocator behaviour); the
cost model reads them where the effect happens (:mod:`shardplan.cost.compute`,
:mod:`shardplan.cost.step`, :mod:`shardplan.cost.memory`). The values of each preset and the rows
they were fitted on are in ``shardplan/presets/frameworks.py`` and docs/accuracy.md.

Units: seconds, bytes, dimensionless fractions.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: optimizer-state dtypes (``TrainingSpec.optimizer_dtype``; the table in :mod:`shardplan.specs.training`)
OptimizerDtype = Literal["fp32", "bf16-moments", "bf16"]
#: the fused attention kernels a profile may name (``FrameworkProfile.attention_kernel``; their speed tables:
#: :mod:`shardplan.cost.gemm`)
AttentionKernelName = Literal["fa2", "fa3", "cudnn", "triton"]


#: the fields that say when a pipeline stalls (:func:`shardplan.cost.pipeline.stall_rule`); they act only with a
#: nonzero ``FrameworkProfile.pp_message_stall_s``, the seconds each stalled message costs
PP_STALL_TRIGGERS = ("pp_stall_min_nodes", "pp_stall_min_tp_nodes", "pp_stall_zero0_min_microbatches",
                     "pp_stall_zero0_min_nodes", "pp_stall_all_nodes", "pp_stall_min_dp", "pp_stall_min_message_bytes",
                     "pp_stall_min_sequences", "pp_stall_zero0_max_nodes")


class FrameworkProfile(BaseModel):
    """Factors of one training framework (defaults: a well-tuned Megatron-LM run).

    Attributes:
        name: profile name (``--framework``).
        collective_overhead_s: seconds per collective call outside the network (stream
            synchronisation, Python dispatch, NCCL kernel launch), added to every call's time.
        layer_overhead_s: seconds per transformer layer per microbatch (forward + backward) of
            kernel launches and host dispatch that the GPU waits for (eager frameworks launch one
            kernel per operation; CUDA graphs / XLA fuse them away).
        layer_overhead_recomputed_only: charge ``layer_overhead_s`` on the recomputed layers only (full
            recompute: all, or ``recompute_layers`` per chunk; none otherwise), where the cost is the
            checkpointing wrapper's (DeepSpeed's CheckpointFunction).
        moe_expert_overhead_s: seconds per local expert (E / ep) per MoE layer per microbatch (forward +
            backward) beyond the GEMM, attention, element-wise and AllToAll times the model prices: the
            host work that grows with the experts a rank runs (Transformer Engine's grouped linear layers
            issue one GEMM per local expert from a host loop, forward and both backward GEMMs, with
            per-expert fp8 casts and token splits), exposed because the dropless dispatcher reads the
            split sizes on the host before every AllToAll (Megatron-core ``token_dispatcher.py``
            ``_maybe_dtoh_and_synchronize``) and the launch queue empties; only the part beyond the routed
            experts' GEMM time is exposed, since the GPU runs one expert's GEMMs while the host issues the
            next (:func:`shardplan.cost.compute.moe_expert_cost_s`). Fitted per framework
            (benchmarks/fit_frameworks.py).
        moe_layer_overhead_s: seconds per MoE layer per microbatch (forward + backward) of the same kind
            that do not grow with the local experts: the router's top-k, score and auxiliary-loss
            kernels, the permutation and its inverse, and the host read of the split sizes itself,
            each a short launch-bound kernel or a wait on the device. Fitted jointly with
            ``moe_expert_overhead_s`` (benchmarks/fit_frameworks.py); without it one constant per
            local expert cannot price both a rank of 16 experts (EP 8) and of 2 (EP 64).
        microbatch_overhead_s: seconds per microbatch per pipeline stage (schedule bookkeeping,
            pipeline send/recv setup, data movement of the batch).
        step_overhead_s: seconds per optimizer step (optimizer launch, gradient clipping norm,
            data loading and logging that do not overlap).
        gpu_matmul_scale: multiplier on a GPU preset's large-GEMM asymptote (``matmul_efficiency``,
            ``fp8_matmul_efficiency``; capped at the peak) for this framework's programs
            (:func:`shardplan.cost.compute.gemm_device`; not on TPUs, whose presets are fitted on MaxText runs). The
            GPU asymptotes are fitted end to end on programs priced with the fused element-wise count (1 = those);
            maxtext: fitted on NVIDIA's dgxc-benchmarking MaxText Llama 2 70B runs on H100
            (``benchmarks/fit_frameworks.py`` maxtext_gpu_fit_table), XLA's GEMMs reaching closer to an isolated
            cuBLAS GEMM's rate; torchtitan, hf-fsdp, hf-deepspeed (eager model code): 1.32, the GEMM rate an eager
            transformers step ran at on one H100 (docs/device.md), capped at the isolated rate. At least 1: the
            asymptotes are already the slowest rate a framework's GEMMs were fitted at.
        elementwise_traffic: multiplier on the HBM bytes of element-wise operations (1 = the
            fused kernels counted in :func:`shardplan.cost.compute.elementwise_bytes_per_token`;
            eager PyTorch reads and writes every intermediate: > 1).
        eager_ops: the element-wise operations this framework runs as separate eager PyTorch ops
            although the rest of its layer is fused, each priced at the HBM bytes its eager code moves
            (:func:`shardplan.cost.compute.eager_op_extra_bytes`): 'rope', 'swiglu', 'rmsnorm' and
            'attention_layout' (the contiguous copies of Q, K, V and the output around a FlashAttention
            call) and 'expert_bias' (a per-expert output bias added outside the grouped GEMM through fp32
            intermediates, Megatron-Core's ``TEGroupedMLP``). Applies only where the model has the op (a GeLU
            model has no SwiGLU to run eager, a model without expert biases no expert bias).
        zero3_per_step: where the framework can gather the ZeRO-3 parameters once per step and keep them for every
            microbatch (``ParallelConfig.zero3_gather='per_step'``): 'any' (XLA hoists the gather out of the
            accumulation loop), 'with_pp' (only in pipelined layouts: torchtitan's ``reshard_after_forward = not
            pp_enabled``), 'never' (FSDP / DeepSpeed ZeRO-3 under a Hugging Face trainer re-gather every microbatch).
        eager_saved: tensors eager model code keeps for the backward beyond the fused count of
            :func:`shardplan.cost.memory.activation_bytes_per_token`: 'fp32_norm_input' (an RMSNorm / LayerNorm
            that upcasts its input to fp32 keeps the upcast, 4 B per element instead of the 16-bit input),
            'attention_output_copy' (the attention output's transpose + reshape gives the output projection a
            contiguous copy beside the one the attention kernel saves) and 'repeated_kv' (K and V repeated to
            every query head before the attention kernel, which saves the repeated copies). hf-fsdp / hf-deepspeed:
            all three, transformers' Llama code, measured on one H100 (docs/device.md).
        vocab_divisible_by: the vocabulary is padded to a multiple of this x tp (Megatron-LM
            ``--make-vocab-size-divisible-by``, default 128); the padded rows cost memory and FLOPs.
        zero3_prefetch: fraction of each ZeRO-3 gather / reduce-scatter that prefetching can hide
            behind the compute of the layer before it (1: PyTorch FSDP's forward/backward prefetch,
            Zhao et al. 2023 Sec. 3.3.2; 0: gathered synchronously when the layer's hook fires).
        zero3_gather_buffers: gathered ZeRO-3 / FSDP units a device holds at once (bytes: this x
            :func:`shardplan.cost.memory.zero3_gather_bytes` x :func:`shardplan.cost.memory.fsdp_unit_params`): 2, the
            unit being computed and the next one being prefetched (PyTorch FSDP's ``limit_all_gathers``
            rate limiter allows two in flight, Zhao et al. 2023 Sec. 3.3.2; XLA's pipelined AllGather of a scan
            loop's next iteration), or 1: each AllGather starts once the previous unit's weights are freed, so
            every forward and backward AllGather is exposed (the ReduceScatter still overlaps).
        memory_limited_schedule: the compiler schedules the program under the device's memory limit: when a
            ZeRO-3 layout with per-microbatch gathers does not fit with ``zero3_gather_buffers`` 2, it is priced
            again with 1 (no gather prefetch, exposed AllGathers) and fits if that does. XLA's latency-hiding
            scheduler tracks the schedule's memory peak and trades overlap for memory above its limit (OpenXLA
            ``xla/service/latency_hiding_scheduler.h``: ``SchedulerConfig::memory_limit``,
            ``depth_based_memory_pressure_reduction``, reruns with a lower limit; the TPU and GPU compilers
            set the limit from the device's memory): True for the XLA profiles (MaxText, Paxml), False for
            eager PyTorch, whose FSDP prefetches regardless and runs out of memory.
        zero3_gather_compute_dtype: ZeRO-3 / FSDP gathers the parameters in the compute dtype
            (``TrainingSpec.precision.activation_bytes``: bf16) rather than the stored one (fp32 under
            ``fp32-params``): the gathered buffers and the AllGather bytes shrink accordingly. True for
            MaxText: its layers cast each fp32 kernel to bf16 (``jnp.asarray(kernel, dtype)``) before the
            matmul, and an element-wise op keeps its operand's sharding under GSPMD's sharding
            propagation (Xu et al. 2021, GSPMD), so the AllGather that the partitioner inserts
            before the dot moves the bf16 copy. False for PyTorch FSDP, whose flat parameter
            is gathered in its own dtype (its ``MixedPrecision(param_dtype=...)`` is the precision
            policy's ``param_bytes``).
        cp_load_balance: context parallelism shards each sequence so that every rank gets an equal
            share of the causal attention work (Megatron-LM's 2 x cp chunks, rank r holding chunks r and
            2 cp - 1 - r; PyTorch's ``_cp_options.enable_load_balance``, round-robin chunks, since
            pytorch/pytorch#132442, Sept. 2024). False: contiguous chunks, the last rank does
            (2 cp - 1) / cp of the balanced share and sets the pace of every ring step
            (:func:`shardplan.cost.compute.attention_core_s`).
        zero3_master_is_param: under ZeRO-3 the stored parameter shard is the full-precision master
            itself and its gradient shard has the master's dtype: no separate compute-dtype copy
            persists (it exists only gathered, :attr:`MemoryBreakdown.zero3_buffers`). Per parameter
            and data-parallel shard: master (4) + gradient (4) + optimizer moments, instead of the
            policy's param + grad + master + moments (bf16-mixed-fp32-grads: 16 B instead of 18 B).
            True for PyTorch FSDP (torch.distributed.fsdp ``MixedPrecision`` docs: "outside forward and
            backward, the sharded parameters are kept in full precision (e.g. for the optimizer step)";
            FSDP1 casts the reduced gradient to the parameter's dtype, ``_cast_grad_to_param_dtype``;
            FSDP2 ``MixedPrecisionPolicy`` keeps the sharded DTensor parameter in its original dtype):
            the pytorch-fsdp, llm-foundry and torchtitan profiles.
        zero0_bf16_optimizer: ZeRO-0 with bf16 compute and fp32 master weights runs DeepSpeed's
            ``BF16_Optimizer`` (where it accumulates the gradients in fp32, ``grad_bytes`` > ``param_bytes``, or
            runs a pipeline; bf16 accumulation without one is DDP_BFLOAT16, priced as plain ZeRO-0), and so does
            ZeRO-1 with fp32 accumulation (deepspeedai/DeepSpeed#2706; :func:`shardplan.cost.memory.bf16_optimizer`).
            It shards the fp32 master weights and the optimizer moments over the
            whole data-parallel group (dp x cp) as ZeRO-1 does, keeps an unsharded gradient buffer in the
            accumulation dtype (the policy's ``grad_bytes``) beside the bf16 gradients autograd writes
            (zeroed, not freed: ``param_bytes`` more per parameter), all-reduces that buffer after the
            backward and all-gathers the updated bf16 parameters after the step. Sources
            (deepspeedai/DeepSpeed): runtime/engine.py ``get_data_types`` (bf16 without ZeRO accumulates
            gradients in fp32) and ``_do_optimizer_sanity_check`` (bf16 with fp32 accumulation and no ZeRO:
            the BFLOAT16 wrapper, ``_configure_bf16_optimizer``); runtime/bf16_optimizer.py
            ``_setup_for_real_optimizer`` (``fp32_groups_flat_partition``: one dp partition of the flat
            parameters in fp32; ``fp32_groups_gradients_flat``: a full-size buffer), ``_update_hp_grad``
            (the bf16 gradient added into it, then zeroed), ``get_grads_for_reduction`` (the fp32
            buffers the engine all-reduces) and ``update_lp_params`` (``all_gather_dp_groups``). Seen by users:
            deepspeedai/Megatron-DeepSpeed#239 (ZERO_STAGE=0 and 1 use the same memory under bf16). DeepSpeed's
            pipeline engine (Megatron-DeepSpeed's PipelineModule, also at pp=1) reduces bf16 ZeRO-0 gradients this
            way (pipe/engine.py ``_exec_reduce_grads``: ``_bf16_reduce_grads``); since deepspeedai/DeepSpeed#7790
            (2026) bf16 with fp32 accumulation without ZeRO and without the pipeline engine is refused. True for the
            deepspeed profiles.
        zero3_nic_share: fraction of the group's scale-out NICs the ZeRO-3 gathers and
            reduce-scatters reach across nodes (1: all of them, NCCL spreading its rings over the
            node's NICs; DeepSpeed ZeRO-3 v0.3-0.5's per-parameter calls reach about one NIC per node,
            fitted in presets/frameworks.py).
        dp_overlap: fraction of the data-parallel gradient reduction (and ZeRO-1/2 parameter
            gather) that can hide behind backward / forward compute (1 = all but the last bucket,
            PyTorch DDP / Megatron-LM; 0 = reduced after the backward).
        dp_bucket_min_params, dp_bucket_params_per_rank: the gradient bucket of the ZeRO-0/1/2
            reduction holds ``max(dp_bucket_min_params, dp_bucket_params_per_rank x dp x cp)``
            parameters (Megatron-Core ``distributed_data_parallel.py``: 40,000,000 and 1,000,000);
            both 0 (the default): one bucket per layer (``shardplan.cost.axes.dp.grad_buckets``).
        grad_bucket_elements: elements of each contiguous gradient bucket a ZeRO-1/2 optimizer allocates for the
            backward, whatever the model's size, one bucket, or two when the reduction overlaps the backward
            (``ParallelConfig.overlap_grad_reduce``); bytes in the compute dtype, counted with the gradients. DeepSpeed:
            ``reduce_bucket_size`` (default 500,000,000; deepspeed/runtime/zero/config.py) with
            ``contiguous_gradients`` (default true): stage_1_and_2.py ``backward`` allocates ``ipg_buffer``
            ``torch.empty(reduce_bucket_size)`` and a second one "to avoid data access conflict when overlap_comm is
            enabled" (2 x 5e8 x 2 B = 1.86 GiB in bf16). 0: none (Megatron-LM and PyTorch buckets are views of the
            gradient buffer, counted in it).
        param_gather_overlap: whether the ZeRO-1/2 AllGather of the updated parameters hides behind
            the next step's forward (True: Megatron-LM ``--overlap-param-gather``, per bucket as the
            forward reaches it) or blocks after the optimizer step (False: nanotron
            ``optim/zero.py`` ZeroDistributedOptimizer.step calls ``_all_gather_params``, one
            synchronous ``all_gather_coalesced`` over every parameter shard, after the update).
        overlap_slowdown: fraction of every overlapped collective's time that is added back to
            compute, because the communication kernels take SMs and HBM bandwidth from the
            matmuls they run beside (0 = free overlap; None = the hardware's SM share of the
            communication kernels, ``collective_sms / sm_count``).
        tp_overlap_slowdown: the same fraction for the tensor-parallel collectives (sequence-parallel
            all-gathers and reduce-scatters inside a node, overlapped with the GEMMs they feed);
            None = ``overlap_slowdown``. Separate because their kernels move data over NVLink
            between the GEMMs of one layer, where the data-parallel ones cross the network beside a
            whole backward pass.
        loss: 'fused' (vocab-parallel / fused cross-entropy: bf16 logits plus an fp32 softmax of
            the shard), 'eager' (PyTorch ``F.cross_entropy`` on upcast logits: fp32 logits,
            log-softmax output and its gradient live at once) or 'in_place' (a kernel that writes the
            logits' gradient over the logits in the forward, so only the 16-bit logits live:
            Transformer Engine ``pytorch/cross_entropy.py``, the loss Megatron-Bridge's performance
            recipes select with ``cross_entropy_fusion_impl: te``; Liger-Kernel's cross-entropy).
        recompute_after_loss: under full recompute the last stage's one-layer recompute working set is never
            alive with the logits (the output layer's backward runs first), so the peak counts the larger of the
            two (:func:`shardplan.cost.memory.recompute_logits_overlap`); False counts both, as a scheduler free to
            run the first recompute beside the loss's backward may (XLA:CPU does in tests/test_validation_coverage).
        loss_chunks: the LM head and the loss run over a microbatch's local tokens in this many chunks, one
            chunk's logits alive at a time, and the backward recomputes each chunk's logits (MaxText
            ``num_vocab_tiling``: ``vocab_tiling_linen_loss`` scans the chunks in a custom VJP whose backward
            re-runs the head per chunk; chunked linear cross-entropy losses likewise). 1: the whole
            microbatch's logits at once, nothing recomputed.
        logit_bytes: bytes per vocabulary element of a local token that the loss keeps at its peak
            (None: from ``loss``, :func:`shardplan.cost.memory.loss_bytes_per_token`). For a
            framework whose model already returns fp32 logits (the 16-bit ones die inside the
            model's forward) and whose loss saves one more fp32 tensor: 4 + 4 = 8 (nanotron).
        lm_head_stage_bytes: bytes per local token and per unit of ``d_model`` that the pipeline
            stage holding the LM head keeps at its peak beyond the counted terms, not divided by
            tp (one microbatch). A measured per-framework constant, 0 by default; nanotron's is
            fitted on the measured grid (its mechanism is not identified there: see the source).
        grad_buffer_bytes: bytes per parameter element of the gradient-accumulation buffer the
            framework keeps (None: the precision policy's ``grad_bytes``; Megatron-LM and nanotron
            accumulate in fp32 = 4).
        grad_reduce_bytes: bytes per gradient element the data-parallel ReduceScatter / AllReduce moves when the
            framework reduces in another dtype than it stores (None: the stored ``grad_bytes``). PyTorch FSDP2's
            ``MixedPrecisionPolicy(reduce_dtype=torch.float32)`` (torchtitan's default ``mixed_precision_reduce``,
            NeMo AutoModel's ``components/moe/parallelizer.py``): 4, even where the sharded gradient it keeps is
            bf16 (AutoModel's bf16 parameters).
        optimizer_dtype: the optimizer-state dtype the framework's code keeps when the training setup
            does not ask for one (``TrainingSpec.optimizer_dtype`` None; None here: fp32). NeMo AutoModel:
            'bf16', since its model classes cast every weight to bf16 at initialisation and
            ``torch.optim.Adam`` creates its moments like the parameter (no fp32 master, bf16 moments).
        default_precision: the precision policy (a name of ``shardplan.specs.training.PRECISION_POLICIES``)
            that the framework's default configuration runs, used when a command gives no ``--precision``
            (None: bf16-mixed, Megatron-LM's ``--bf16`` with fp32 master weights). MaxText: 'fp32-params'
            (configs/base.yml ``weight_dtype: float32``, ``dtype: bfloat16``: fp32 weights the optimizer
            updates in place, no separate master copy, bf16 compute), which its exporter writes.
        allocator_overhead: fraction of the allocated bytes the caching allocator reserves on top
            (fragmentation, rounding of blocks), as its peak ``reserved`` exceeds ``allocated``.
        allocator_base_bytes: bytes the caching allocator holds whatever the model and layout: the
            cuBLAS / cuBLASLt workspaces, one per (handle, stream) pair that runs a GEMM, allocated
            through the caching allocator and kept until cleared (PyTorch docs, "CUDA semantics: cuBLAS
            workspaces"), and the small-block pool's 2 MiB segments (PyTorch "CUDA semantics: memory
            management"). Counted in the allocated peak. 0 by default; nanotron's is fitted on the
            measured grid with ``allocator_overhead`` and ``lm_head_stage_bytes``.
        context_bytes: bytes of HBM taken before any tensor (CUDA context, NCCL
            workspaces and communication buffers).
        pipeline_split: how layers are assigned to pipeline stages when ``pp_layers`` is not given:
            'balanced' (even, or :func:`shardplan.parallel.balanced_split` when pp does not divide
            the layers; Megatron-LM / Llama 3), 'cost_greedy' (nanotron's cumulative-cost split,
            :func:`shardplan.parallel.cost_greedy_split`: the first rank heavier, trailing ranks may
            hold no layer) or 'even' (one layer count for every stage: pp x virtual_stages must divide the
            layers; MaxText: layers = stages x num_layers_per_pipeline_stage x num_pipeline_repeats).
        layout_defaults: layout fields the framework's runs set unless a command gives them, applied by
            ``estimate`` / ``export`` / ``report`` where they are legal (tp > 1): ``sp`` and
            ``tp_overlap``. megatron, maxtext, torchtitan: ``{sp: true}`` (their recipes / axis rules);
            nanotron: ``{sp: true, tp_overlap: true}``, the ``tp_mode: REDUCE_SCATTER``
            with ``tp_linear_async_communication`` of the runs its constants were fitted on
            (shared/calibration/README.md); ``--no-sp`` / ``--no-tp-overlap`` turn them off.
        default_zero_stage: the ZeRO stage the framework's runs use when a command gives none (applied
            by ``estimate`` / ``export`` / ``report`` with the ``layout_defaults``, where the profile allows
            the stage with the layout's pp): megatron 1 (the distributed optimizer of every Megatron-Bridge
            recipe), torchtitan / pytorch-fsdp / maxtext 3 (their FSDP defaults), 0 elsewhere.
        min_microbatches: 'none' (fewer microbatches than stages is legal: the bubble grows),
            'pp_minus_1' (the pipeline engine refuses fewer than pp - 1 microbatches per step;
            nanotron ``OneForwardOneBackwardPipelineEngine`` asserts it), 'multiple_of_pp' (the microbatch count
            of a step must be a multiple of the stages; MaxText base.yml: num_pipeline_microbatches "must be a
            multiple of the number of pipeline stages") or 'at_least_pp' (at least one microbatch per stage in each
            pipeline flush: torch.distributed.pipelining's schedules raise "Number of microbatches must be greater
            than or equal to the number of stages", torchtitan's pipelines).
        layer_host_s: seconds the host needs to issue one transformer layer's kernels and
            collectives (forward + backward of one microbatch). An eager framework's CPU runs ahead
            of the GPU, so this is hidden while the GPU work of a microbatch is longer, and sets a
            floor on the microbatch time when it is not (small microbatches, wide tp): the stage's
            microbatch takes ``max(GPU time, layers x host time)``.
        pp_tp_host_step_s: host seconds per ring step (tp - 1 per call) of every per-layer tp
            collective, added to the host time of a layer when the stage also runs pipeline
            point-to-point transfers over the scale-out network (pp > 1 and the pipeline group spans
            more than one node; on the measured grid the single-node pipelines do not pay it: 1B,
            tp=4 pp=2 mbs=1, 43 ms per microbatch on one node against 134 ms on two, and the
            same for tp=2 pp=2 and tp=2 pp=4). nanotron receives each pipeline message with a
            blocking metadata handshake (``parallel/pipeline_parallel/p2p.py`` ``_recv_meta``:
            ``dist.recv`` of the shape, read on the host) and asynchronous tp collectives are
            waited for on the host (``parallel/tensor_parallel/functional.py``), so the host no
            longer runs ahead and every ring step's round trip is exposed.
        pp_message_stall_s, pp_stall_min_nodes: seconds every pipeline point-to-point message
            blocks the stages that exchange it, on jobs of at least ``pp_stall_min_nodes`` nodes
            (:func:`shardplan.cost.pipeline.message_stall_s`). A blocking send/recv pipeline
            (nanotron's ``p2p.py``: a host-side metadata handshake before every tensor) waits on
            every message; on the measured EFA cluster each wait costs ~0.25 s once the job spans
            32 nodes or more, so the step grows by that per message on the busiest stage (2 per
            microbatch on a two-stage pipeline, 4 on an inner stage) -- a measured per-cluster
            constant, 0 by default.
        pp_stall_min_tp_nodes: the same stall on smaller jobs whose tensor-parallel group spans at
            least this many nodes (None: no such trigger). On the measured grid the pipelined runs
            with tp=32 (4 nodes) stall at every job size (86 of 88 runs on 8-64 nodes), those with
            tp=16 (2 nodes) below 32 nodes rarely (6 of 63): heavy cross-node tp traffic next to
            the pipeline messages brings the wait on early.
        pp_stall_zero0_min_microbatches, pp_stall_zero0_min_nodes: the stall's own trigger for ZeRO-0
            jobs with dp > 1 (None: they follow ``pp_stall_min_nodes`` like the others): steps of at
            least ``pp_stall_zero0_min_microbatches`` microbatches on at least
            ``pp_stall_zero0_min_nodes`` nodes. On the measured grid nanotron's ZeRO-0 pipelines
            (PyTorch DDP around the pipeline stages) stall from 4 nodes once a step has 16 or more
            microbatches (25 of 28 runs), and not with fewer, even at 32 nodes (1 of 11); the
            same layouts with ZeRO-1 follow the node-count trigger. A measured per-cluster rule,
            off by default.
        pp_stall_all_nodes, pp_stall_min_dp, pp_stall_min_message_bytes: where the node-count trigger
            is partial (None: it is not). From ``pp_stall_min_nodes`` up to below
            ``pp_stall_all_nodes`` nodes only jobs with dp >= ``pp_stall_min_dp`` or a stage-boundary
            message of at least ``pp_stall_min_message_bytes`` (one microbatch's activations
            ``b x s x h`` at the activation width, before any sequence-parallel split) stall; from
            ``pp_stall_all_nodes`` every pipelined job does. On the measured grid at 32 nodes the
            pipelines this trigger covers stall with dp >= 32 in 20 of 23 runs (1B and 8B alike);
            with less data parallelism 8B stalls with 2+ sequences per microbatch (64 MiB: 40 of
            40) and not with one (32 MiB: 0 of 17), while 1B stalls in 2 of 17 runs at 64-512 MiB
            and 2 of 18 below: the message threshold rests on 8B alone, the weakest part of the
            rule (a fit on 1B alone leaves it out). At 64 nodes 79 of 80 stall.
        pp_stall_zero0_max_nodes: the ZeRO-0 trigger holds below this node count (None: at any); from it on those
            jobs stall only where every pipeline does (``pp_stall_all_nodes``, else ``pp_stall_min_nodes``). The
            shared grid's one ZeRO-0 pipeline with dp > 1 and 16+ microbatches at 32 nodes (1B, 128
            microbatches) ran without the stall; so did the 6 of the playbook's 3B / 80B runs of that kind at 32
            nodes (its ``benchmarks_interactive.html``, not fitted). One run cannot move the fitted rule (a
            threshold must classify more than 5 runs better), so the bound is set, not fitted.
        pp_stall_min_sequences: the message trigger (``pp_stall_min_message_bytes``) needs at least this
            many sequences per microbatch (``microbatch_size``; None: any). The playbook's 80B runs on
            the same cluster (its ``benchmarks_interactive.html``, not in the fitted grid) have 64 MiB
            messages with one sequence: at 32 nodes 11 of 11 such pipelines (ZeRO-1, dp < 32) ran
            without the stall and 10 of 10 with 2+ sequences stalled, as 8B's 2-sequence 64 MiB
            messages did. The 1B / 8B grid cannot tell the two conditions apart (every message of 64
            MiB or more there carries 2+ sequences), so the setting is not fitted.
        module_recompute: the framework recomputes named modules (Megatron-LM ``--recompute-modules``:
            the layout field ``recompute_modules``); False for the other profiles.
        pipeline_zero_stages: the ZeRO stages the framework allows together with pipeline parallelism
            (None: those of ``zero_stages``). DeepSpeed's PipelineEngine asserts a stage below 2
            (deepspeed/runtime/pipe/engine.py: "ZeRO-2 and ZeRO-3 are incompatible with pipeline
            parallelism").
        fp16_training: the framework trains in loss-scaled fp16 (the ``fp16-mixed`` policies); False where its
            configuration offers no fp16 (torchtitan: ``mixed_precision_param`` is bfloat16 or float32), which then
            refuses those policies.
        offload_zero_stages: the ZeRO stages with which the framework offloads the optimizer
            (``ParallelConfig.offload_optimizer``; None: any). DeepSpeed: 1, 2, 3 (runtime/zero/config.py:
            ``offload_optimizer`` is "valid for ZeRO stage 1, 2, 3").
        param_offload: how the framework keeps ZeRO-3 parameter shards in host memory
            (``ParallelConfig.offload_params``): 'none' (it does not), 'independent' (DeepSpeed's
            ``zero_optimization.offload_param``, "valid only with stage 3", set apart from ``offload_optimizer``:
            deepspeed/runtime/zero/offload_config.py) or 'with_optimizer' (PyTorch FSDP's ``CPUOffload(offload_params=
            True)`` and FSDP2's ``CPUOffloadPolicy`` move the parameter shards, the gradients and the optimizer step
            to the host together: pytorch/pytorch pull 120256 "one H2D copy for each parameter before all-gather,
            one D2H copy for each gradient after reduce-scatter, optimizer on CPU").
        offload_keeps_grads: under ``offload_optimizer`` the gradient buffer stays on the device (the host steps on a
            copy of the partition's gradients): Megatron-Core's ``--optimizer-cpu-offload`` keeps the DDP main-grad
            buffer on the GPU (megatron/core/optimizer/cpu_offloading/README.md: "Gradient copy from GPU to CPU, CPU
            optimizer step, and subsequent parameter copy from CPU to GPU"); False: the gradients leave the device
            as they are reduced (DeepSpeed ZeRO-Offload's pinned host partitions, FSDP's CPU offload).
        host_adam_params_per_s: parameters per second one host's CPUs update with the framework's host optimizer
            when it is offloaded (``ParallelConfig.offload_optimizer``; the GPUs of a host share it): DeepSpeed's
            vectorized CPU-Adam about 1.6e9, PyTorch's CPU AdamW (FSDP CPU offload) about 6.8 x slower; None: the
            host's update is not priced (only the copies over the host link). At least 1e6 (a host updating fewer
            parameters per second is not a training setup).
        searched_tp_overlap: the search (:func:`shardplan.search.search`) tries every tp > 1 layout with and without
            ``tp_overlap`` when it is not pinned (Megatron-LM: NVIDIA's H100 recipes run ``--tp-comm-overlap`` with
            tensor parallelism); False: only as pinned or as the profile's ``layout_defaults`` say.
        zero2_accumulation: how ZeRO-2 accumulates gradients over the microbatches of a step (with one microbatch both
            are the same): 'per_microbatch' (default) keeps only its gradient shard and reduce-scatters after every
            microbatch's backward (DeepSpeed refuses ``no_sync`` under ZeRO-2 and reduces every micro-step,
            deepspeed/runtime/engine.py and runtime/zero/stage_1_and_2.py; PyTorch FSDP SHARD_GRAD_OP / FSDP2
            ``reshard_after_forward=False`` reduce-scatter after every backward); 'full_buffer' accumulates into a
            full-size gradient buffer and reduce-scatters once per step (Megatron-LM: its schedules run every
            microbatch but the last under ``no_sync``, gradients accumulating in the full fp32 ``main_grad``
            buffer; MegaScale's "ZeRO-2-style" Megatron-LM runs reduce-scatter after the last microbatch):
            the gradient memory of ZeRO-1 (:mod:`shardplan.cost.memory`: the full buffer whatever the microbatch
            count, as Megatron-LM allocates its main_grad buffer), its one reduction per step
            (:mod:`shardplan.cost.axes.dp`).
        zero2_param_gather: when ZeRO-2 all-gathers the parameters: 'per_step' (default: after the optimizer
            update, the replicated parameters then kept; DeepSpeed stage 2, Megatron-LM's distributed optimizer) or
            'per_microbatch' (PyTorch FSDP2 with ``reshard_after_forward=False`` reshards after every backward unless
            the loop calls ``set_reshard_after_backward(False)``, so each microbatch's forward gathers again:
            torchtitan's ``fsdp_reshard_after_forward = "never"``, whose train.py accumulation loop does not; in a
            pipeline torch's PipelineStage turns the reshard off until the last microbatch, so once per step).
        pp_unsharded_grad_bytes: bytes per parameter element of the gradients a ZeRO-3 (FSDP) stage
            holds unsharded across the microbatches of a pipelined step (0: none, the gradients are
            reduce-scattered every microbatch). PyTorch's pipelining runs every microbatch's backward
            but the last without gradient reduction or resharding (torch.distributed.pipelining
            stage.py ``backward_maybe_with_nosync``), and FSDP2 accumulates those unsharded gradients
            in its reduce dtype (fp32 under torchtitan's default ``mixed_precision_reduce``): 4.
            A non-zero value also keeps the stage's gathered parameters resident under pipelining
            (torchtitan ``reshard_after_forward = not pp_enabled``), whatever ``zero3_gather`` says.
        allocator_retry_s, allocator_pressure_start: seconds per microbatch lost when the
            predicted device usage nears the HBM capacity: the caching allocator's failed
            ``cudaMalloc`` -> synchronize, free cached blocks, retry (``num_alloc_retries``), ramped
            linearly from ``allocator_pressure_start`` x HBM (0) to the full HBM (``allocator_retry_s``).
        usable_hbm_fraction: fraction of the HBM capacity the framework's runs can fill before they fail
            (1: all of it). A layout is predicted to fit when its device usage (``memory.total``) is at
            most this fraction of HBM (:func:`shardplan.cost.memory.hbm_limit`). Near the cap the
            caching allocator's free memory is split into blocks too small for the next request, and
            after freeing its cache and retrying it raises an out-of-memory error (PyTorch "CUDA
            semantics: memory management", ``max_split_size_mb``); nanotron's is chosen on the measured grid.
        selective_recompute: what ``recompute='selective'`` keeps: 'attention' (Megatron-LM,
            Korthikanti et al. 2022 Sec. 4.1: the attention core's scores, softmax and dropout mask
            are recomputed, the rest stored) or 'every_other_matmul' (torchtitan's op-level
            selective checkpointing, ``torchtitan/distributed/activation_checkpoint.py``: inside each
            block only the outputs of the scaled-dot-product attention kernel and of the 1st, 3rd,
            5th, ... ``aten.mm`` are saved; every other matmul and every element-wise op is recomputed
            in the backward: :func:`shardplan.cost.memory.op_sac_bytes_per_token`) or 'named_dots' (MaxText's
            'minimal' remat policy: the layer input and every named matmul output are kept, the attention core and
            the element-wise work recomputed: priced as full recompute keeping :data:`shardplan.parallel.NAMED_DOTS`,
            :func:`shardplan.parallel.named_remat`).
        attention_kernel: the fused attention kernel the framework calls ('fa2' FlashAttention-2,
            'fa3' FlashAttention-3, 'cudnn' cuDNN fused attention, 'triton' the Triton FlashAttention
            llm-foundry's MPT models run (``attn_impl: triton``); None: the framework's default,
            :data:`shardplan.cost.gemm.FRAMEWORK_ATTENTION_KERNEL`). Transformer Engine (Megatron-LM,
            NeMo) picks cuDNN on Hopper by default but FlashAttention-2 with ``NVTE_FUSED_ATTN=0`` (the
            dgxc-benchmarking Nemotron-4-340B recipe sets it) or where cuDNN does not serve the case.
        zero_stages: the ZeRO stages the framework implements (None: all of them); other stages are
            refused by validation and skipped by the search (nanotron: 0 and 1).
        schedules: the pipeline schedules the framework implements (None: all of them); a layout
            with pp > 1 and another schedule is refused, and the search tries only these
            (nanotron: 'gpipe' = AllForwardAllBackwardPipelineEngine, '1f1b' =
            OneForwardOneBackwardPipelineEngine).
        released_schedules: the pipeline schedules the framework's released code runs (None: every one in
            ``schedules``). The search offers the ones among its defaults
            (``shardplan.search.DEFAULT_SCHEDULES``; all of them when none is), others only when asked
            for, and ``estimate`` / ``plan`` price those with a note (Megatron-LM: 1F1B and interleaved 1F1B,
            its zero-bubble schedules live in forks). Must lie within ``schedules``.
        recomputes: the recomputation policies the framework implements (None: all of them);
            others are refused by validation and skipped by the search (nanotron: none and full,
            ``recompute_layer`` recomputes whole layers).
        moe_tensor_parallel: whether the framework runs tensor parallelism in a MoE model (False: tp > 1 refused
            for MoE models; NeMo AutoModel's custom MoE models assert "Tensor parallelism not supported for custom
            MoE models", components/moe/parallelizer.py parallelize_model).
        expert_tensor_parallel: whether the experts can take a tensor-parallel degree of their own (``etp`` other
            than tp; Megatron-LM ``--expert-tensor-parallel-size``, torchtitan's ETP); False: the experts are split
            over the tensor axis as the dense layers are (MaxText's logical rules put the experts' ``mlp`` dimension
            on the same ``tensor`` axes as the dense MLP's).
        expert_group: which ranks the expert-parallel group is carved from. 'dp_cp': any ep dividing dp x cp
            (Megatron-LM folds it into the data- and context-parallel ranks; validation's own rule). 'dp': ep
            divides the ZeRO-3 shard group (``dp_shard``), below ZeRO-3 dp, never taking cp ranks (MaxText's
            ``expert`` mesh axis is carved from the fsdp ranks, beside ``context``). 'dp2ep': torchtitan's
            (distributed/parallel_dims.py): cp (x tp with etp = 1) divides ep, and ep divides the FSDP shard x cp
            (x tp), the shard being ``dp_shard`` under ZeRO >= 1 and 1 without FSDP.
        context_parallel, expert_parallel: whether cp > 1 / ep > 1 layouts are priced for this
            framework as the planner composes them (cp and ep inside the data-parallel gradient
            group); False refuses them in validation and the search (nanotron: its
            ``context_parallel_size`` and ``expert_parallel_size`` are world dimensions outside dp).
        cp_comms: the context-parallel exchanges the framework implements (``ParallelConfig.cp_comm``), its default
            first: ('ring',) for ring attention only, ('a2a',) for DeepSpeed-Ulysses only (DeepSpeed: sequence
            parallelism by AllToAll over heads, no ring), ('ring', 'a2a') where both run (Megatron-LM
            ``--cp-comm-type``). A layout without ``cp_comm`` takes the first; validation refuses the others.
        cp_a2a_replicates_kv: with ``cp_comm`` 'a2a', a tp rank with fewer KV heads than cp replicates them up to
            cp (DeepSpeed-Ulysses); False: its KV heads must divide by cp (Transformer Engine's a2a context
            parallelism, which Megatron-LM runs, asserts it).
        cp_a2a_fused_only: with ``cp_comm`` 'a2a' the attention core must be a fused (flash) kernel, as for the ring:
            Transformer Engine runs context parallelism only in its FlashAttention and cuDNN fused backends (its
            unfused DotProductAttention has none); False where the AllToAll wraps any attention (DeepSpeed-Ulysses).
        weight_sharding_axes: the axes among cp and ep whose degree > 1 also shards the weights, so such a layout
            must use one of the profile's weight-sharding ZeRO stages (``zero_stages`` of 2 and up; MaxText's
            'embed' rule shards the weights over the context and expert axes: ZeRO-3; torchtitan's FSDP shards over
            data_parallel_shard x context_parallel: ZeRO-2/3). Validation refuses other stages.
        tp_requires_sp: tensor parallelism always shards the activations between the blocks (torchtitan's TP plan
            shards the norms' sequence, MaxText's tensor axis the activations' embed dimension: ``sp`` with every
            tp > 1).
        sequence_parallel: the framework has Megatron-style sequence parallelism beside tensor parallelism
            (``ParallelConfig.sp`` with tp > 1); False refuses it in validation and the search (DeepSpeed's AutoTP,
            which the Hugging Face integration runs, shards the linear layers' weights only).
        cp_with_tp: context parallelism composes with tensor parallelism (cp > 1 beside tp > 1); False refuses
            the pair (the Hugging Face DeepSpeed-Ulysses integration is documented without AutoTP).
        tp_overlap: the framework can overlap the tensor-parallel collectives with the GEMMs
            (``ParallelConfig.tp_overlap``); False refuses it (eager torchtitan: its async TP runs only under
            torch.compile, torchtitan parallelize.py "Async TP requires torch.compile").
        lazy_grads: PyTorch's own training loop: the gradients are created in the backward and freed by
            ``optimizer.zero_grad(set_to_none=True)`` (PyTorch >= 2.0's default), with no persistent gradient buffer,
            and the step is torch.optim's foreach AdamW, which holds one temporary the size of the second moment
            (torch/optim/adamw.py ``_multi_tensor_adamw``). With one microbatch per step (no accumulation, no
            pipeline) the peak is then the larger of the forward / backward peak without gradients and the
            optimizer step's (:attr:`shardplan.cost.memory.MemoryBreakdown.allocated`).
        sp_seq_dim_copies: the sequence-parallel AllGathers and ReduceScatters run on the sequence dim (dim 1 of
            ``[batch, seq, h]``), so each call also copies the whole activation on the compute stream
            (:func:`shardplan.cost.compute.sp_copy_s`): PyTorch's functional collectives gather into a
            rank-major buffer and re-lay it with ``torch.cat(torch.chunk(res, group_size, dim=0), dim=gather_dim)``,
            and scatter from ``torch.cat(torch.chunk(x, group_size, dim=scatter_dim))``
            (torch/distributed/_functional_collectives.py), which eager DTensor's Shard(1) redistributes call
            (torchtitan's TP plan: SequenceParallel norms, block inputs Shard(1)).
        compiled: the framework runs the model under torch.compile (torchtitan ``[compile] enable``): the torchtitan
            exporter writes the ``[compile]`` section for it (components model, and loss unless ``loss`` is
            'eager'), and its importer reads that section back into the ``torchtitan-compile`` profile.
        device_kinds: the accelerator kinds (``HardwareSpec.kind``) the framework runs on: PyTorch stacks
            (Megatron-LM, DeepSpeed, torchtitan, FSDP, nanotron) are CUDA / ROCm programs with NCCL / RCCL
            collectives, 'gpu' only; JAX / XLA programs (MaxText, Paxml, this project's runtime) run on both.
        named_remat: full recompute may keep named matmul outputs (``ParallelConfig.remat_saved``: MaxText's
            remat policies minimal, save_qkv_proj, save_dot_except_mlpwi, ...); other profiles refuse it.
        moe_routed_copies: copies of each routed token (top_k x h per token, the MoE load included) a
            MoE layer keeps for the backward. 1: the router's probabilities travel with the tokens and
            are applied inside the expert's activation, so only the first expert GEMM's input is kept
            and the combine (a plain un-permute) keeps nothing (Megatron-core 0.12+:
            ``token_dispatcher.py`` permutes ``probs`` with the tokens, ``unpermute`` is called without
            them, ``experts.py`` applies them in ``activation_func_with_probs``). 2: the weighting
            keeps a second copy, the routed input before it is scaled (torchtitan ``moe.py``
            ``score_before_experts``) or the expert output before the weighted combine (GShard-style
            einsum combines: MaxText, DeepSpeed-MoE; Hugging Face's Mixtral block scales each expert's
            output; Megatron-core before 0.12 un-permuted with probs).
        moe_act_input_bytes: bytes per element of the routed experts' activation-function inputs (the first
            grouped GEMM's output: gate and up for SwiGLU) kept for the backward; None: the activation dtype's
            (``Precision.activation_bytes``). DeepSeek-V3's framework caches them in fp8, 1 (DeepSeek-V3 Technical
            Report, arXiv 2412.19437, Sec. 3.3.3 "Low-Precision Activation" (2): "Inputs of the SwiGLU operator in
            MoE", stored in FP8, the SwiGLU output recomputed in the backward, which is ``recompute_modules``
            'moe_act'); :func:`shardplan.cost.memory.moe_act_input_saving`.
        grouped_gemm_row_tile: row tile (tokens) of the framework's TPU grouped GEMM for dropless routed experts
            (``moe_capacity_factor`` None on a TPU); 0: none. The JAX Pallas megablox kernel
            (jax/experimental/pallas/ops/tpu/megablox/gmm.py ``make_group_metadata``) runs every row tile a group
            touches, so a tile shared by two groups runs once per group: ``tiles_m <= tiles run <= tiles_m +
            groups - 1``. With E local experts the forward GEMMs, the input-gradient GEMMs (``gmm``) and the
            weight-gradient GEMMs (``tgmm``, same metadata) each run about ``(E - 1) x tile`` rows more than the
            routed tokens (:func:`shardplan.cost.compute.grouped_gemm_rows`).
        activation_offload: how the framework offloads saved activations to host memory
            (``ParallelConfig.offload_activation_layers``): True, Megatron-LM's ``--cpu-offloading-num-layers``
            (every saved activation of the first N layers, without recompute); 'remat_inputs', MaxText's
            ``remat_policy: custom`` with ``decoder_layer_input: offload`` (under full recompute, every layer's
            input, N = all layers); False refuses the field.
        a2a_overlap_share: the share of the expert-parallel AllToAll time that ``moe_a2a_overlap`` (Megatron-Core's
            Combined 1F1B) can hide behind the partner microbatch's compute which it does hide (1 = all of it, the
            schedule's upper bound; :func:`shardplan.cost.axes.ep.combined_1f1b`). Fitted: 0.5 (the source in
            the megatron preset).
        local_batch_flushes: whether the framework accumulates a step's local batches as separate runs of the
            pipeline schedule (``ParallelConfig.pipeline_flushes`` > 1: torch.distributed.pipelining under
            torchtitan and NeMo AutoModel, whose trainers call ``schedule.step`` once per local batch); False:
            one schedule over all the step's microbatches (Megatron-LM ``get_forward_backward_func``, nanotron,
            MaxText, the JAX runtime), and pipeline_flushes > 1 is refused.
        pipeline_parallel: whether the framework has pipeline parallelism (False: pp > 1 refused in
            validation and left out of the search; PyTorch FSDP as llm-foundry and fms-fsdp run it).
        pp_p2p_overlap: under the interleaved schedule the stage-boundary sends run beside the next chunk's
            compute (Megatron-LM ``overlap_p2p_comm``: on by default for interleaved schedules, forced off for the
            others, megatron/training/arguments.py ``--no-overlap-p2p-communication``), so only what exceeds the
            stage's compute is exposed; False: every send exposed.
        sources: field -> citation or the rows the value was fitted on.
        origin: where a profile that is not a built-in came from (a profile file, or a hardware file's
            ``framework:`` section), so that a refusal names it (:attr:`label`), or the ``NAME+field=value``
            text of a built-in with inline overrides (:attr:`spec`); empty for built-ins.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: str = Field(default="megatron", min_length=1, max_length=200)
    collective_overhead_s: float = Field(default=0.0, ge=0, le=0.1)
    layer_overhead_s: float = Field(default=0.0, ge=0, le=0.1)
    layer_overhead_recomputed_only: bool = False
    microbatch_overhead_s: float = Field(default=0.0, ge=0, le=1.0)
    moe_expert_overhead_s: float = Field(default=0.0, ge=0, le=0.01)
    moe_layer_overhead_s: float = Field(default=0.0, ge=0, le=0.1)
    step_overhead_s: float = Field(default=0.0, ge=0, le=60.0)
    elementwise_traffic: float = Field(default=1.0, ge=1.0, le=10.0)
    eager_ops: tuple[Literal["rope", "swiglu", "rmsnorm", "attention_layout", "expert_bias"], ...] = ()
    eager_saved: tuple[Literal["fp32_norm_input", "attention_output_copy", "repeated_kv"], ...] = ()
    zero3_per_step: Literal["any", "with_pp", "never"] = "any"
    gpu_matmul_scale: float = Field(default=1.0, ge=1.0, le=2.0)
    dp_overlap: float = Field(default=1.0, ge=0, le=1)
    dp_bucket_min_params: float = Field(default=0.0, ge=0, le=1e12)
    dp_bucket_params_per_rank: float = Field(default=0.0, ge=0, le=1e10)
    grad_bucket_elements: float = Field(default=0.0, ge=0, le=1e11)
    param_gather_overlap: bool = True
    zero3_prefetch: float = Field(default=1.0, ge=0, le=1)
    vocab_divisible_by: int = Field(default=128, ge=1, le=4096)
    zero3_nic_share: float = Field(default=1.0, gt=0, le=1)
    zero3_gather_buffers: int = Field(default=2, ge=1, le=2, strict=True)
    memory_limited_schedule: bool = False
    zero3_gather_compute_dtype: bool = False
    zero3_master_is_param: bool = False
    zero0_bf16_optimizer: bool = False
    cp_load_balance: bool = True
    overlap_slowdown: float | None = Field(default=None, ge=0, le=1)
    tp_overlap_slowdown: float | None = Field(default=None, ge=0, le=1)
    loss: Literal["fused", "eager", "in_place"] = "fused"
    loss_chunks: int = Field(default=1, ge=1, le=4096, strict=True)
    recompute_after_loss: bool = False
    logit_bytes: float | None = Field(default=None, ge=0, le=64)
    lm_head_stage_bytes: float = Field(default=0.0, ge=0, le=10_000)
    grad_buffer_bytes: int | None = Field(default=None, ge=1, le=8)
    grad_reduce_bytes: int | None = Field(default=None, ge=1, le=8)
    optimizer_dtype: OptimizerDtype | None = None
    default_precision: str | None = None
    allocator_overhead: float = Field(default=0.0, ge=0, le=1)
    allocator_base_bytes: float = Field(default=0.0, ge=0, le=2**33)
    context_bytes: float = Field(default=0.0, ge=0, le=2**36)
    layer_host_s: float = Field(default=0.0, ge=0, le=0.1)
    pp_tp_host_step_s: float = Field(default=0.0, ge=0, le=0.01)
    pp_message_stall_s: float = Field(default=0.0, ge=0, le=10.0)
    pp_stall_min_nodes: int = Field(default=1, ge=1, le=2**20)
    pp_stall_min_tp_nodes: int | None = Field(default=None, ge=1, le=2**20)
    pp_stall_zero0_min_microbatches: int | None = Field(default=None, ge=1, le=2**30)
    pp_stall_zero0_min_nodes: int = Field(default=1, ge=1, le=2**20)
    pp_stall_all_nodes: int | None = Field(default=None, ge=2, le=2**20)
    pp_stall_min_dp: int | None = Field(default=None, ge=1, le=2**30)
    pp_stall_min_message_bytes: float | None = Field(default=None, gt=0, le=2.0**50)
    pp_stall_min_sequences: int | None = Field(default=None, ge=1, le=2**20)
    pp_stall_zero0_max_nodes: int | None = Field(default=None, ge=2, le=2**20)
    zero2_accumulation: Literal["per_microbatch", "full_buffer"] = "per_microbatch"
    zero2_param_gather: Literal["per_step", "per_microbatch"] = "per_step"
    searched_tp_overlap: bool = False
    pp_unsharded_grad_bytes: int = Field(default=0, ge=0, le=8)
    pipeline_zero_stages: tuple[Literal[0, 1, 2, 3], ...] | None = Field(default=None, min_length=1)
    offload_zero_stages: tuple[Literal[0, 1, 2, 3], ...] | None = Field(default=None, min_length=1)
    host_adam_params_per_s: float | None = Field(default=None, ge=1e6, le=1e13)
    param_offload: Literal["none", "independent", "with_optimizer"] = "none"
    offload_keeps_grads: bool = False
    fp16_training: bool = True
    module_recompute: bool = True
    allocator_retry_s: float = Field(default=0.0, ge=0, le=10.0)
    allocator_pressure_start: float = Field(default=0.9, ge=0.5, lt=1.0)
    usable_hbm_fraction: float = Field(default=1.0, ge=0.5, le=1.0)
    pipeline_split: Literal["balanced", "cost_greedy", "even"] = "balanced"
    layout_defaults: dict[Literal["sp", "tp_overlap"], bool] = Field(default_factory=dict)
    default_zero_stage: Literal[0, 1, 2, 3] = 0
    selective_recompute: Literal["attention", "every_other_matmul", "named_dots"] = "attention"
    attention_kernel: AttentionKernelName | None = None
    schedules: tuple[Literal["gpipe", "1f1b", "interleaved", "zero-bubble", "dualpipe"], ...] | None = Field(default=None,
                                                                                               min_length=1)
    released_schedules: tuple[Literal["gpipe", "1f1b", "interleaved", "zero-bubble", "dualpipe"], ...] | None = Field(
        default=None, min_length=1)
    zero_stages: tuple[Literal[0, 1, 2, 3], ...] | None = Field(default=None, min_length=1)
    recomputes: tuple[Literal["none", "selective", "full"], ...] | None = Field(default=None, min_length=1)
    context_parallel: bool = True
    cp_comms: tuple[Literal["ring", "a2a"], ...] = Field(default=("ring",), min_length=1)
    cp_a2a_replicates_kv: bool = True
    cp_a2a_fused_only: bool = False
    weight_sharding_axes: tuple[Literal["cp", "ep"], ...] = ()
    tp_requires_sp: bool = False
    sequence_parallel: bool = True
    cp_with_tp: bool = True
    tp_overlap: bool = True
    compiled: bool = False
    sp_seq_dim_copies: bool = False
    lazy_grads: bool = False
    named_remat: bool = False
    device_kinds: tuple[Literal["gpu", "tpu"], ...] = Field(default=("gpu",), min_length=1)
    expert_parallel: bool = True
    moe_tensor_parallel: bool = True
    expert_tensor_parallel: bool = True
    expert_group: Literal["dp_cp", "dp", "dp2ep"] = "dp_cp"
    pipeline_parallel: bool = True
    pp_p2p_overlap: bool = False
    local_batch_flushes: bool = False
    a2a_overlap_share: float = Field(default=0.5, ge=0, le=1)
    moe_routed_copies: Literal[1, 2] = 1
    moe_act_input_bytes: float | None = Field(default=None, gt=0, le=4)
    grouped_gemm_row_tile: int = Field(default=0, ge=0, le=8192)
    activation_offload: bool | Literal["remat_inputs"] = True
    min_microbatches: Literal["none", "pp_minus_1", "multiple_of_pp", "at_least_pp"] = "none"
    sources: dict[str, str] = Field(default_factory=dict)
    origin: str = ""

    @property
    def inline(self) -> bool:
        """A built-in with ``+field=value`` overrides (``megatron+loss=in_place``), not a profile file."""
        return self.origin.lower().startswith(self.name.lower() + "+")

    @property
    def spec(self) -> str:
        """What ``--framework`` takes to give this profile again where a name does: the ``NAME+field=value`` text of
        inline overrides, else the name (a file's profile: its base name; the file is named by :attr:`label`)."""
        return self.origin if self.inline else self.name

    @property
    def label(self) -> str:
        """The profile as messages name it: ``megatron`` for a built-in, ``megatron+loss=in_place`` with inline
        overrides, ``megatron (framework nopp.yaml)`` for one read from a file."""
        if self.inline:
            return self.origin
        return f"{self.name} ({self.origin})" if self.origin else self.name

    @model_validator(mode="after")
    def _stall_thresholds_pair(self) -> "FrameworkProfile":
        """Stall thresholds that act only together: ``pp_stall_all_nodes`` must exceed
        ``pp_stall_min_nodes``; ``pp_stall_min_dp`` / ``pp_stall_min_message_bytes`` act only with
        ``pp_stall_all_nodes``; ``pp_stall_zero0_min_nodes`` only with ``pp_stall_zero0_min_microbatches``;
        ``pp_stall_zero0_max_nodes`` above ``pp_stall_zero0_min_nodes``.

        Raises:
            ConfigError: a pair that cannot act as set (the message names every way out).
        """
        if self.pp_stall_all_nodes is not None and self.pp_stall_all_nodes <= self.pp_stall_min_nodes:
            from shardplan.errors import ConfigError
            raise ConfigError(f"pp_stall_all_nodes={self.pp_stall_all_nodes} must exceed pp_stall_min_nodes="
                              f"{self.pp_stall_min_nodes} (the partial trigger holds between the two; either may "
                              f"come from the base profile); legal: pp_stall_all_nodes {self.pp_stall_min_nodes + 1} "
                              f"or more, pp_stall_min_nodes below {self.pp_stall_all_nodes}, or pp_stall_all_nodes, "
                              "pp_stall_min_dp and pp_stall_min_message_bytes all null",
                              field="pp_stall_all_nodes", value=self.pp_stall_all_nodes)
        if self.pp_stall_all_nodes is None and (self.pp_stall_min_dp is not None
                                                or self.pp_stall_min_message_bytes is not None):
            from shardplan.errors import ConfigError
            name = "pp_stall_min_dp" if self.pp_stall_min_dp is not None else "pp_stall_min_message_bytes"
            raise ConfigError(f"{name}={getattr(self, name)!r} has no effect while pp_stall_all_nodes is null (a "
                              "base profile may have set it); legal: set pp_stall_all_nodes (the node count from "
                              "which every pipelined job stalls) above pp_stall_min_nodes, or set pp_stall_min_dp "
                              "and pp_stall_min_message_bytes both to null", field=name, value=getattr(self, name))
        if self.pp_stall_zero0_min_nodes != 1 and self.pp_stall_zero0_min_microbatches is None:
            from shardplan.errors import ConfigError
            raise ConfigError(f"pp_stall_zero0_min_nodes={self.pp_stall_zero0_min_nodes} has no effect while "
                              "pp_stall_zero0_min_microbatches is null (a base profile may have set it); legal: set "
                              "both (the ZeRO-0 stall rule needs its microbatch threshold), or "
                              "pp_stall_zero0_min_nodes to 1 with the microbatch threshold null",
                              field="pp_stall_zero0_min_nodes", value=self.pp_stall_zero0_min_nodes)
        top = self.pp_stall_zero0_max_nodes
        if top is not None and top <= self.pp_stall_zero0_min_nodes:
            from shardplan.errors import ConfigError
            raise ConfigError(f"pp_stall_zero0_max_nodes={top} must exceed pp_stall_zero0_min_nodes="
                              f"{self.pp_stall_zero0_min_nodes} (the ZeRO-0 rule holds from the one to below the "
                              f"other; a base profile may have set either); legal: pp_stall_zero0_max_nodes "
                              f"{self.pp_stall_zero0_min_nodes + 1} or more, or null", field="pp_stall_zero0_max_nodes",
                              value=top)
        return self

    @model_validator(mode="after")
    def _released_within_schedules(self) -> "FrameworkProfile":
        """``released_schedules`` lie within ``schedules`` (the released code runs what the framework implements).

        Raises:
            ConfigError: a released schedule the profile's ``schedules`` leave out (names the legal ones).
        """
        extra = [s for s in self.released_schedules or () if self.schedules is not None and s not in self.schedules]
        if extra:
            from shardplan.errors import ConfigError
            raise ConfigError(f"released_schedules={list(self.released_schedules)} names {', '.join(extra)}, which "
                              f"schedules={list(self.schedules)} leaves out (a base profile may have set either); "
                              f"legal: released schedules among {', '.join(self.schedules)}",
                              field="released_schedules", value=list(self.released_schedules),
                              legal=list(self.schedules))
        return self

    @model_validator(mode="after")
    def _default_zero_stage_implemented(self) -> "FrameworkProfile":
        """``default_zero_stage`` is a stage the profile implements (``zero_stages``).

        Raises:
            ConfigError: naming the stage and the legal ones (a base profile may have set ``zero_stages``).
        """
        if self.zero_stages is not None and self.default_zero_stage not in self.zero_stages:
            from shardplan.errors import ConfigError
            raise ConfigError(f"default_zero_stage={self.default_zero_stage} is not among zero_stages="
                              f"{list(self.zero_stages)} (a base profile may have set it); legal default_zero_stage: "
                              f"{', '.join(map(str, self.zero_stages))}", field="default_zero_stage",
                              value=self.default_zero_stage, legal=list(self.zero_stages))
        return self

    @model_validator(mode="after")
    def _sp_default_allowed(self) -> "FrameworkProfile":
        """A profile whose tensor axis always shards the activations (``tp_requires_sp``) cannot default sp off
        (``layout_defaults``), and one without sequence parallelism (``sequence_parallel`` False) can neither
        require it nor default it on: every tp > 1 layout would then be refused naming the user's flags.

        Raises:
            ConfigError: naming both fields and the ways out.
        """
        if self.tp_requires_sp and self.layout_defaults.get("sp") is False:
            from shardplan.errors import ConfigError
            raise ConfigError("layout_defaults sp=false with tp_requires_sp=true: the profile would refuse its own "
                              "default at every tp > 1; legal: layout_defaults sp true (or left out), or "
                              "tp_requires_sp false", field="layout_defaults", value=dict(self.layout_defaults),
                              legal=[{"sp": True}, {}])
        if not self.sequence_parallel and (self.tp_requires_sp or self.layout_defaults.get("sp")):
            from shardplan.errors import ConfigError
            which = "tp_requires_sp=true" if self.tp_requires_sp else "layout_defaults sp=true"
            raise ConfigError(f"sequence_parallel=false with {which}: the profile would refuse its own sp at every "
                              "tp > 1; legal: sequence_parallel true, or tp_requires_sp false and layout_defaults "
                              "without sp true", field="sequence_parallel", value=False, legal=[True])
        return self

    @field_validator("schedules", "released_schedules", "zero_stages", "recomputes", "pipeline_zero_stages",
                     "offload_zero_stages")
    @classmethod
    def _no_repeats(cls, value: tuple | None) -> tuple | None:
        """A list of what the framework implements names each choice once."""
        if value is not None and len(set(value)) != len(value):
            raise ValueError(f"{list(value)} names a choice twice; give each once")
        return value

    @field_validator("default_precision")
    @classmethod
    def _known_precision(cls, value: str | None) -> str | None:
        """``default_precision`` names a precision policy."""
        from shardplan.specs.training import PRECISION_POLICIES
        if value is not None and value not in PRECISION_POLICIES:
            raise ValueError(f"legal: {', '.join(PRECISION_POLICIES)}")
        return value

    @field_validator("activation_offload", mode="before")
    @classmethod
    def _offload_kind(cls, value: object) -> object:
        """``activation_offload`` is true, false or ``remat_inputs`` (MaxText's layer-input offload)."""
        if isinstance(value, bool) or value == "remat_inputs":
            return value
        raise ValueError("legal: true, false or remat_inputs")
