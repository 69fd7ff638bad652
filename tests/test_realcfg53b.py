"""New-user pass 53b (a platform engineer with A100 and H200 clusters, torchtitan and the Hugging Face Trainer with
DeepSpeed): each test fails on the behaviour the pass found (noted in its comment)."""

from __future__ import annotations

import json

import pytest

from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.inputs import build_inputs
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec


def test_torchtitan_pipelines_need_a_microbatch_per_stage():
    # plan ranked (and --export torchtitan wrote) pp=2 with one microbatch: torch.distributed.pipelining raises
    # "Number of microbatches (1) must be greater than or equal to the number of stages (2)"
    tr = TrainingSpec(seq_len=4096, global_batch_size=4, framework=framework_profile("torchtitan"))
    with pytest.raises(ConfigError, match="1 microbatches per step is fewer than pp = 2 stages"):
        validate(ParallelConfig(dp=4, pp=2, microbatch_size=1), MODELS["llama-3-8b"], tr, 8)
    # 8 sequences over dp 4: 2 microbatches of 1 per rank, one per stage: runs
    tr8 = tr.model_copy(update={"global_batch_size": 8})
    assert validate(ParallelConfig(dp=4, pp=2, microbatch_size=1), MODELS["llama-3-8b"], tr8, 8).microbatches == 2
    from shardplan.search import search
    res = search(MODELS["tiny-llama"], HARDWARE["a100-80gb"], TrainingSpec(
        seq_len=64, global_batch_size=16, framework=framework_profile("torchtitan")), 8, top_k=20)
    assert all(e.layout.microbatches // e.parallel.pipeline_flushes >= e.parallel.pp for e in res.plans)


def test_torchtitan_zero2_gathers_every_microbatch_outside_a_pipeline():
    # fsdp_reshard_after_forward "never" was priced as one gather per step; FSDP2 reshards after every backward and
    # torchtitan's accumulation loop does not call set_reshard_after_backward(False): 4 microbatches, 4 gathers
    def gathers(framework, **lay):
        tr = TrainingSpec(seq_len=4096, global_batch_size=256, framework=framework_profile(framework))
        e = estimate(MODELS["llama-3-8b"], HARDWARE["a100-80gb"], tr, ParallelConfig(zero_stage=2, **lay), 64)
        return sum(c.count for c in e.collectives if c.op == "AllGather" and c.axis == "dp")
    assert gathers("torchtitan", microbatch_size=1) == 4  # 256 / (64 x 1) microbatches
    assert gathers("deepspeed", microbatch_size=1) == 1   # DeepSpeed's replicated parameters: once after the update
    # in a pipeline torch's PipelineStage keeps them until the last microbatch: once per step
    assert gathers("torchtitan", microbatch_size=1, pp=2) == 1


def test_deepspeed_export_names_the_trainer_arguments_its_numbers_need():
    # the file pinned micro batch 2, accumulation 2 and bf16 while _shardplan.trainer held only gradient_checkpointing:
    # the Hugging Face Trainer's defaults (8 per device, no accumulation, fp32) raise "DeepSpeed config mismatch"
    m, hw, tr, pc = build_inputs(model="llama-2-7b", hardware="a100-80gb", devices=64, seq_len=4096,
                                 global_batch=256, global_batch_tokens=None, framework="hf-deepspeed",
                                 microbatch_size=2, zero_stage=3, recompute="full")
    head = json.loads(export_text("deepspeed", estimate(m, hw, tr, pc, 64)))["_shardplan"]
    assert head["trainer"] == {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "bf16": True,
                               "fp16": False, "gradient_checkpointing": True}
    assert any("--per_device_train_batch_size 2 --gradient_accumulation_steps 2 --bf16" in line
               for line in head["lines"])


def test_torchtitan_cp_rotate_method_is_read():
    # context_parallel_rotate_method = "alltoall" was dropped without a note; a value torchtitan lacks was accepted
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=16, seq_len=32768, global_batch=16,
                                 global_batch_tokens=None, framework="torchtitan", cp=4, tp=2, zero_stage=3)
    text = export_text("torchtitan", estimate(m, hw, tr, pc, 16))
    edited = text.replace("context_parallel_degree = 4", 'context_parallel_degree = 4\ncontext_parallel_rotate_method = '
                                                         '"alltoall"')
    imp = import_config("torchtitan", edited)
    assert imp.parallel.cp == 4 and any("context_parallel_rotate_method='alltoall'" in n for n in imp.notes)
    with pytest.raises(ConfigError, match="context_parallel_rotate_method='ring'"):
        import_config("torchtitan", edited.replace('"alltoall"', '"ring"'))


def test_batch_error_points_to_plan_and_offset_names_the_winner_s_part():
    # a batch of 100 on 64 ranks suggested only cp=64 (64 tokens per device); the comparison of a pp=1 runner-up said
    # "less pipeline bubble of pp=1" (the bubble it avoids is #1's pp=2 one)
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="a100-80gb", devices=64, seq_len=4096, global_batch=100,
                                 global_batch_tokens=None, zero_stage=3)
    with pytest.raises(ConfigError, match="or let `shardplan plan` split the 64 devices"):
        estimate(m, hw, tr, pc, 64)
    from shardplan.explain import compare
    from shardplan.search import search
    res = search(MODELS["tiny-llama"], HARDWARE["a100-80gb"], TrainingSpec(
        seq_len=64, global_batch_size=16, framework=framework_profile("torchtitan")), 8, top_k=5)
    texts = [compare(res.plans[0], e, "throughput") for e in res.plans[1:]]
    assert not any("pipeline bubble of pp=1" in t for t in texts)
