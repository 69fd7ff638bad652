"""The search under a framework profile ranks only layouts that framework's own exporter writes: a plan made with
``--framework F`` can leave as F's config. (The deepspeed profile is Megatron-DeepSpeed, whose pipeline stages and
experts are model code that a ds_config cannot carry; its plans leave through the Megatron-LM flags, so it is not
paired with the DeepSpeed JSON exporter here.)"""

import pytest

from shardplan.errors import ConfigError
from shardplan.export import export_text
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import search
from shardplan.specs.training import TrainingSpec

PAIRS = [("megatron", "megatron"), ("megatron-legacy", "megatron"), ("maxtext", "maxtext"),
         ("torchtitan", "torchtitan"), ("torchtitan-compile", "torchtitan"), ("hf-deepspeed", "deepspeed"),
         ("nanotron", "nanotron")]
CASES = [("llama-3-8b", 16, 8192, 64), ("mixtral-8x7b", 32, 4096, 128), ("qwen3-30b-a3b", 16, 4096, 64)]


@pytest.mark.parametrize("framework,target", PAIRS)
def test_every_ranked_layout_exports(framework, target):
    for model, n, seq, gbs in CASES:
        tr = TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=framework_profile(framework))
        res = search(MODELS[model], HARDWARE["h100-sxm"], tr, n, top_k=10)
        assert res.plans, (framework, model)
        for plan in res.plans:
            try:
                export_text(target, plan)
            except ConfigError as e:
                pytest.fail(f"{framework} ranked {plan.parallel.short()} for {model}; --to {target} refused: {e}")


def test_maxtext_experts_follow_its_mesh():
    # MaxText splits the experts over the tensor axis as the dense MLP (no etp of their own) and carves the expert
    # axis from the fsdp ranks: Mixtral 8x7B on 32 GPUs, tp 2, cp 2 -> dp 8; ep 8 divides dp_shard 8 but not 4
    tr = TrainingSpec(seq_len=4096, global_batch_size=128, framework=framework_profile("maxtext"))
    mixtral = MODELS["mixtral-8x7b"]
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=2, sp=True, cp=2, ep=8, etp=1, zero_stage=3), mixtral, tr, 32)
    assert err.value.field == "etp" and "legal etp: 2" in str(err.value)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=2, sp=True, cp=2, ep=8, zero_stage=3, dp_shard=4), mixtral, tr, 32)
    # legal: the divisors of 4 that also divide the 8 experts
    assert err.value.field == "ep" and "legal ep: 1, 2, 4" in str(err.value)
    validate(ParallelConfig(tp=2, sp=True, cp=2, ep=8, zero_stage=3), mixtral, tr, 32)


def test_hf_deepspeed_has_no_expert_parallelism():
    # Hugging Face MoE blocks run every expert on every rank; DeepSpeed's ep is its own MoE layer in model code
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("hf-deepspeed"))
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(ep=8, zero_stage=2), MODELS["mixtral-8x7b"], tr, 16)
    assert err.value.field == "ep" and "legal ep: 1" in str(err.value)
