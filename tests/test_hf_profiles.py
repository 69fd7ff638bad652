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
    # place), the loss eager, and HF's torch.utils.checkpoint has no DeepSpeed CheckpointFunction cost
    assert _changed(FRAMEWORKS["hf-fsdp"], FRAMEWORKS["pytorch-fsdp"]) == {"elementwise_traffic", "loss"}
    assert _changed(FRAMEWORKS["hf-deepspeed"], FRAMEWORKS["deepspeed"]) == {"elementwise_traffic", "loss",
                                                                             "layer_overhead_s"}
    for name in ("hf-fsdp", "hf-deepspeed"):
        fw = FRAMEWORKS[name]
        assert fw.elementwise_traffic == FRAMEWORKS["torchtitan"].elementwise_traffic and fw.layer_overhead_s == 0
        assert all(k in fw.sources for k in ("elementwise_traffic", "loss"))


def test_hf_fsdp_keeps_the_eager_fp32_loss_and_runs_slower():
    # Mistral-7B, 1 GPU, 4 x 4096 tokens: eager loss 2 (bf16) + 8 (fp32 upcast and log-softmax) = 10 B per vocabulary
    # element -> 16,384 x 32,000 x 10 = 5,242,880,000 B; the fused loss of pytorch-fsdp 2 + 4 = 6 B -> 3,145,728,000 B
    p = ParallelConfig(dp=1, microbatch_size=4, recompute="full")
    out = {}
    for name in ("hf-fsdp", "pytorch-fsdp"):
        tr = TrainingSpec(seq_len=4096, global_batch_size=4, framework=FRAMEWORKS[name])
        out[name] = estimate(MODELS["mistral-7b"], load_hardware("a100-80gb"), tr, p, 1)
    assert out["hf-fsdp"].memory.logits == 5_242_880_000 and out["pytorch-fsdp"].memory.logits == 3_145_728_000
    assert out["hf-fsdp"].elementwise_s > 4 * out["pytorch-fsdp"].elementwise_s
    assert out["hf-fsdp"].matmul_s == out["pytorch-fsdp"].matmul_s
