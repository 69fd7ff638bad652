"""The hf-fsdp / hf-deepspeed profiles: Hugging Face Transformers model code (eager element-wise ops, an fp32 eager
loss) under the pytorch-fsdp / deepspeed sharding."""

from shardplan.cost.step import estimate
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec


def _changed(a, b) -> set[str]:
    return {k for k in type(a).model_fields if k not in ("name", "sources") and getattr(a, k) != getattr(b, k)}


def test_hf_profiles_change_only_the_model_code_terms():
    # the sharding behaviour is the base profile's; the element-wise traffic is eager torchtitan's (one number, one
    # place), the loss eager, and HF's torch.utils.checkpoint has no DeepSpeed CheckpointFunction cost; Megatron-
    # DeepSpeed's eager ops (deepspeed eager_ops) are not HF's model code, whose every op the multiplier prices. What
    # the HF integration cannot compose differs too: no PipelineModule, no Megatron sequence parallelism beside AutoTP,
    # no Ulysses beside AutoTP, no DeepSpeed MoE layer (expert parallelism)
    # and the GEMM rate of eager model code on GPUs with a known isolated rate (gpu_matmul_scale) and the tensors
    # transformers' eager layers keep (eager_saved), both measured on one H100
    assert _changed(FRAMEWORKS["hf-fsdp"], FRAMEWORKS["pytorch-fsdp"]) == {
        "elementwise_traffic", "loss", "gpu_matmul_scale", "eager_saved", "zero_stages", "sequence_parallel",
        "recomputes", "zero3_per_step"}
    assert _changed(FRAMEWORKS["hf-deepspeed"], FRAMEWORKS["deepspeed"]) == {
        "elementwise_traffic", "loss", "gpu_matmul_scale", "eager_saved", "zero3_per_step", "eager_ops", "layer_overhead_s",
        "pipeline_parallel", "sequence_parallel", "cp_with_tp", "expert_parallel"}
    assert FRAMEWORKS["hf-deepspeed"].eager_ops == () and FRAMEWORKS["hf-fsdp"].eager_ops == ()
    for name in ("hf-fsdp", "hf-deepspeed"):
        fw = FRAMEWORKS[name]
        assert fw.elementwise_traffic == FRAMEWORKS["torchtitan"].elementwise_traffic and fw.layer_overhead_s == 0
        assert all(k in fw.sources for k in ("elementwise_traffic", "loss"))


def test_hf_fsdp_keeps_the_eager_fp32_loss_and_runs_slower():
    # Mistral-7B, 1 GPU, 4 x 4096 tokens: eager loss 12 B per vocabulary element (the backward's log-softmax output,
    # incoming and outgoing fp32 gradients) -> 16,384 x 32,000 x 12 = 6,291,456,000 B; the fused loss of pytorch-fsdp
    # 2 + 4 = 6 B -> 3,145,728,000 B
    p = ParallelConfig(dp=1, microbatch_size=4, recompute="full")
    out = {}
    for name in ("hf-fsdp", "pytorch-fsdp"):
        tr = TrainingSpec(seq_len=4096, global_batch_size=4, framework=FRAMEWORKS[name])
        out[name] = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"), tr, p, 1)
    assert out["hf-fsdp"].memory.logits == 6_291_456_000 and out["pytorch-fsdp"].memory.logits == 3_145_728_000
    assert out["hf-fsdp"].elementwise_s > 4 * out["pytorch-fsdp"].elementwise_s
    assert out["hf-fsdp"].matmul_s == out["pytorch-fsdp"].matmul_s


def test_lazy_gradients_peak_at_the_optimizer_step():
    # Mistral-7B (7,241,732,096 parameters) on 1 GPU in pure bf16 (bf16 Adam moments, no master): the gradients exist
    # only between the backward and the step, and torch.optim's foreach AdamW holds one bf16 temporary the size of the
    # second moment, so the step's peak is 2 (params) + 2 (grads) + 4 (moments) + 2 (temporary) = 10 B per parameter
    # = 72,417,320,960 B, above the forward's params + moments + activations + logits here (fms-acceleration measured
    # 72,435,246,592 B at this layout)
    from shardplan.specs.training import PRECISION_POLICIES
    n = MODELS["mistral-7b"].n_params
    assert n == 7_241_732_096
    p = ParallelConfig(dp=1, microbatch_size=8, recompute="full")
    tr = TrainingSpec(seq_len=4096, global_batch_size=8, framework=FRAMEWORKS["hf-fsdp"],
                      precision=PRECISION_POLICIES["bf16-mixed"], optimizer_dtype="bf16")
    mem = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"), tr, p, 1).memory
    assert mem.lazy_grads and mem.optimizer_temp == 2 * n and mem.allocated == 10 * n == 72_417_320_960
    assert mem.params + mem.optimizer + mem.activations + mem.logits < mem.allocated
    # two microbatches per step: the first one's gradients are resident during the second's forward -> every term
    acc = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"), tr.model_copy(update={"global_batch_size": 16}),
                   p, 1).memory
    assert not acc.lazy_grads and acc.allocated == acc.params + acc.grads + acc.optimizer + acc.activations + acc.logits


def test_lazy_gradients_note_names_the_phase():
    from shardplan.cli.estimate import lazy_grads_note
    from shardplan.specs.training import PRECISION_POLICIES
    p = ParallelConfig(dp=1, microbatch_size=8, recompute="full")
    tr = TrainingSpec(seq_len=4096, global_batch_size=8, framework=FRAMEWORKS["hf-fsdp"],
                      precision=PRECISION_POLICIES["bf16-mixed"], optimizer_dtype="bf16")
    e = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"), tr, p, 1)
    assert "is the optimizer step's" in lazy_grads_note(e)  # 10 B per parameter above the forward (test above)
    megatron = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"),
                        tr.model_copy(update={"framework": FRAMEWORKS["megatron"]}), p, 1)
    assert lazy_grads_note(megatron) is None  # a persistent gradient buffer: every part at once


def test_hf_profiles_keep_transformers_eager_tensors():
    # Llama-3-8B (h = q = 4096, kv = 1024, F = 14,336), bf16, tp 1, per token and layer beyond the fused count:
    # two fp32 norm upcasts 2 x (4 - 2) x 4096 = 16,384 B; o_proj's contiguous input 2 x 4096 = 8,192 B; K and V
    # repeated to 32 heads 2 x 2 x (4096 - 1024) = 12,288 B; the eager SwiGLU's act(gate) 2 x 14,336 = 28,672 B:
    # 65,536 B -> 4 layers x 8,192 tokens x 65,536 B = 2,147,483,648 B over pytorch-fsdp's fused count
    from shardplan.cost.memory import eager_saved_bytes_per_token
    m = MODELS["llama-3-8b"].model_copy(update={"n_layers": 4})
    out = {}
    for name in ("hf-fsdp", "pytorch-fsdp"):
        tr = TrainingSpec(seq_len=8192, global_batch_size=1, framework=FRAMEWORKS[name])
        out[name] = estimate(m, load_hardware("h100-sxm"), tr, ParallelConfig(microbatch_size=1, zero_stage=0), 1)
        assert eager_saved_bytes_per_token(m, tr, 1, 1) == (36_864 if name == "hf-fsdp" else 0)
    assert out["hf-fsdp"].memory.activations - out["pytorch-fsdp"].memory.activations == 2_147_483_648


def test_hf_profile_against_the_h100_measurement():
    # benchmarks/device_runs/h100_2026-12-05.json (docs/device.md): transformers LlamaForCausalLM forward + backward
    # on one H100, no recompute. The allocator's peak above the parameters and gradients (activations, logits and
    # loss) and the non-GEMM, non-attention kernel seconds are independent of the planner; its activation + logit
    # terms must be within 5% and its element-wise seconds within 20% (1B: 92.3 ms priced, 79.3 measured)
    import json
    from pathlib import Path
    run = json.loads((Path(__file__).parents[1] / "benchmarks/device_runs/h100_2026-12-05.json").read_text())
    checked = 0
    for r in run["hf_step"]:
        if r["recompute"]:
            continue
        m = MODELS[r["preset"]].model_copy(update={"n_layers": r["n_layers"]})
        tr = TrainingSpec(seq_len=r["seq_len"], global_batch_size=r["microbatch_size"], framework=FRAMEWORKS["hf-fsdp"])
        e = estimate(m, load_hardware("h100-sxm"), tr, ParallelConfig(microbatch_size=r["microbatch_size"], zero_stage=0), 1)
        measured = r["peak_bytes"] - r["static_bytes"]
        assert abs((e.memory.activations + e.memory.logits) / measured - 1) < 0.05, r["name"]
        assert abs(e.elementwise_s / r["kernels"]["seconds"]["other"] - 1) < 0.20, r["name"]
        checked += 1
    assert checked == 2


def test_hf_fsdp_refuses_what_accelerate_cannot_run():
    # Accelerate's FSDP plugin: no ZeRO-1 (FSDP shards gradients with the optimizer state), whole-layer gradient
    # checkpointing only, no Megatron-style sequence parallelism, and every microbatch re-gathers the parameters
    import pytest

    from shardplan.errors import ConfigError
    from shardplan.parallel import validate
    tr = TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-fsdp"])
    for p, field, legal in ((ParallelConfig(zero_stage=1), "zero_stage", "legal zero_stage: 0, 2, 3"),
                            (ParallelConfig(zero_stage=3, recompute="selective"), "recompute", "legal recompute: none, full"),
                            (ParallelConfig(zero_stage=3, zero3_gather="per_step"), "zero3_gather",
                             "legal zero3_gather: per_microbatch")):
        with pytest.raises(ConfigError) as err:
            validate(p, MODELS["llama-3-8b"], tr, 8)
        assert err.value.field == field and legal in str(err.value), str(err.value)
    # torchtitan keeps the gathered parameters only in pipelined runs (reshard_after_forward = not pp_enabled)
    titan = TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["torchtitan"])
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(zero_stage=3, zero3_gather="per_step"), MODELS["llama-3-8b"], titan, 8)
    assert "without pipelining" in str(err.value)
    assert validate(ParallelConfig(dp=4, pp=2, zero_stage=3, zero3_gather="per_step"), MODELS["llama-3-8b"], titan,
                    8).parallel.zero3_gather == "per_step"


def test_peak_band_is_compared_with_the_limit_fits_uses():
    # the hf-fsdp profile has no runtime terms: total counts the hardware reserve (2 GiB + 5% of 80 = 6 GiB) and is
    # compared with 80 GiB; the band's high end counts the same reserve, so it too is compared with 80 GiB, not with
    # the 74 GiB left after the reserve
    e = estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                 TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-fsdp"]),
                 ParallelConfig(zero_stage=3, microbatch_size=1), 8)
    assert e.hbm_usable == 74 * 2**30 and e.hbm_fit_limit == 80 * 2**30
    assert e.memory.peak_high == e.memory.total  # no fitted fragmentation in this profile: a zero-width band


def test_does_not_fit_names_the_recompute_that_fits():
    # Llama-3-8B, 8 H100, 4 x 8,192 tokens per device without recompute under hf-fsdp (ZeRO-3): 84.8 GiB of 80; its
    # profile runs whole-layer recompute only (no selective), and with it the layout fits
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "32",
                                 "--framework", "hf-fsdp"])
    assert r.exit_code == 1 and "it fits with --recompute full" in " ".join(r.output.split()), r.output
    # torchtitan runs op-level selective recompute, the cheaper one that fits
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "8192", "-b", "32",
                                 "--framework", "torchtitan"])
    assert r.exit_code == 1 and "it fits with --recompute selective" in " ".join(r.output.split()), r.output


def test_offloaded_optimizer_prices_the_host_adam():
    # Llama-3-8B (8,030,261,248 parameters) under ZeRO-3 on the 8 GPUs of one host, optimizer on the CPU: each rank
    # updates 1,003,782,656 parameters, the host all 8 x that = 8,030,261,248 at DeepSpeed CPU-Adam's 1.6e9 per
    # second: 5.019 s per step beside the copies over PCIe; PyTorch's CPU Adam (hf-fsdp) at 2.4e8: 33.46 s
    import pytest
    out = {}
    for name in ("hf-deepspeed", "hf-fsdp"):
        fw = FRAMEWORKS[name]
        p = ParallelConfig(zero_stage=3, microbatch_size=1, recompute="full", offload_optimizer=True)
        with_host, copies_only = (
            estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                     TrainingSpec(seq_len=4096, global_batch_size=8, framework=f), p, 8)
            for f in (fw, fw.model_copy(update={"host_adam_params_per_s": None})))
        out[name] = with_host.optimizer_s - copies_only.optimizer_s
    assert out["hf-deepspeed"] == pytest.approx(8_030_261_248 / 1.6e9, rel=1e-6)
    assert out["hf-fsdp"] == pytest.approx(8_030_261_248 / 2.4e8, rel=1e-6)


def test_search_offloads_the_optimizer_and_names_the_host_bound():
    # the token split is validated without the offload (it does not depend on it), so a pinned --offload-optimizer
    # leaves the ZeRO 1-3 layouts DeepSpeed offloads with; CPU-Adam of 8 x 1.0e9 parameters (5.0 s) outweighs the
    # rest of the step, which the bound says
    from shardplan.search import search
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS["hf-deepspeed"])
    res = search(MODELS["llama-3-8b"], load_hardware("h100-sxm"), tr, 8, fix={"offload_optimizer": True}, top_k=3)
    assert res.plans and all(e.parallel.offload_optimizer and e.parallel.zero_stage > 0 for e in res.plans)
    assert res.plans[0].bound.startswith("host optimizer")


def test_deepspeed_header_profile_is_read_in_any_case_and_refused_when_unknown():
    import json

    import pytest

    from shardplan.errors import ConfigError
    from shardplan.export import export_text, import_config
    e = estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                 TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-deepspeed"]),
                 ParallelConfig(zero_stage=3, microbatch_size=1, recompute="full"), 8)
    cfg = json.loads(export_text("deepspeed", e))
    assert cfg["_shardplan"]["framework"] == "hf-deepspeed"
    cfg["_shardplan"]["framework"] = "  HF-DeepSpeed "
    assert import_config("deepspeed", json.dumps(cfg)).framework == "hf-deepspeed"
    for bad in ("nonsense", 5, ""):
        cfg["_shardplan"]["framework"] = bad
        with pytest.raises(ConfigError) as err:
            import_config("deepspeed", json.dumps(cfg))
        assert err.value.field == "framework" and "hf-deepspeed" in str(err.value)
    # a host that updates under a million parameters a second is refused (it made the step infinite)
    with pytest.raises(Exception) as err:
        FRAMEWORKS["hf-deepspeed"].model_validate({**FRAMEWORKS["hf-deepspeed"].model_dump(), "host_adam_params_per_s": 1e-300})
    assert "host_adam_params_per_s" in str(err.value)


def test_accelerate_export_follows_the_deepspeed_profile():
    # priced with hf-deepspeed, ZeRO-2 with the optimizer on the CPU: an Accelerate DeepSpeed launch (not FSDP) whose
    # import prices the same step; under hf-fsdp at ZeRO-3 the offload is FSDP's CPU offload, parameters included
    # (fsdp_offload_params, read back as both); at ZeRO-2 hf-fsdp's offload is refused
    import pytest

    from shardplan.errors import ConfigError
    from shardplan.export import export_text, import_config
    p = ParallelConfig(zero_stage=2, microbatch_size=1, offload_optimizer=True)
    e = estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                 TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-deepspeed"]), p, 8)
    text = export_text("accelerate", e)
    assert "distributed_type: DEEPSPEED" in text and "offload_optimizer_device: cpu" in text
    back = import_config("accelerate", text)
    assert back.framework == "hf-deepspeed" and back.parallel.offload_optimizer and back.parallel.zero_stage == 2
    f = estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                 TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-fsdp"]),
                 p.model_copy(update={"zero_stage": 3}), 8)
    assert f.parallel.offload_params  # validate: FSDP's CPU offload moves the shards with the optimizer
    text = export_text("accelerate", f)
    assert "distributed_type: FSDP" in text and "fsdp_offload_params: true" in text
    back = import_config("accelerate", text).parallel
    assert (back.zero_stage, back.offload_optimizer, back.offload_params) == (3, True, True)
    g = estimate(MODELS["llama-3-8b"], load_hardware("h100-sxm"),
                 TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS["hf-fsdp"]), p, 8)
    with pytest.raises(ConfigError) as err:
        export_text("accelerate", g)
    assert "fsdp_offload_params" in str(err.value)


def test_per_step_gather_message_offers_zero3_only_where_it_runs():
    # --zero3-gather per_step at ZeRO-2: 'or zero_stage=3' only where the profile gathers once per step
    import pytest

    from shardplan.errors import ConfigError
    from shardplan.parallel import validate
    p = ParallelConfig(zero_stage=2, zero3_gather="per_step")
    for name, offered in (("hf-fsdp", False), ("torchtitan", False), ("maxtext", True)):
        tr = TrainingSpec(seq_len=4096, global_batch_size=32, framework=FRAMEWORKS[name])
        with pytest.raises(ConfigError) as err:
            validate(p, MODELS["llama-3-8b"], tr, 8)
        assert ("or zero_stage=3" in str(err.value)) == offered, (name, str(err.value))
