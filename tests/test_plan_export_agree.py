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
CASES = [("llama-3-8b", 16, 8192, 64), ("mixtral-8x7b", 32, 4096, 128), ("qwen3-30b-a3b", 16, 4096, 64),
         # breaker cases: torchtitan's dp2ep expert groups at long sequences; maxtext pp over 27 layers
         ("qwen3-30b-a3b", 16, 32768, 16), ("deepseek-v2-lite", 64, 4096, 64)]


@pytest.mark.parametrize("framework,target", PAIRS)
def test_every_ranked_layout_exports(framework, target):
    for model, n, seq, gbs in CASES:
        tr = TrainingSpec(seq_len=seq, global_batch_size=gbs, framework=framework_profile(framework))
        res = search(MODELS[model], HARDWARE["h100-sxm"], tr, n, top_k=10)
        assert res.plans, (framework, model)
        for plan in res.plans:
            assert plan.fits, (framework, model, plan.parallel.short())  # ranked plans fit (the search's memory cache)
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


def test_torchtitan_expert_groups_follow_dp2ep():
    # torchtitan parallel_dims: cp (x tp with etp 1) divides ep, ep divides FSDP shard x cp (x tp). Qwen3-30B-A3B on 16
    # GPUs, tp 4 + sp, ZeRO-3: dp 4 = shard 4. etp = tp: ep | 4 -> 1, 2, 4; etp 1 borrows tp: 4 | ep | 16 -> 4, 8, 16
    tr = TrainingSpec(seq_len=8192, global_batch_size=16, framework=framework_profile("torchtitan"))
    q3 = MODELS["qwen3-30b-a3b"]
    validate(ParallelConfig(tp=4, sp=True, ep=4, zero_stage=3), q3, tr, 16)
    validate(ParallelConfig(tp=4, sp=True, ep=16, etp=1, zero_stage=3), q3, tr, 16)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(tp=4, sp=True, ep=2, etp=1, zero_stage=3), q3, tr, 16)
    assert err.value.field == "ep" and "legal ep: 4, 8, 16" in str(err.value)
    with pytest.raises(ConfigError, match="legal ep: 1, 2, 4"):
        validate(ParallelConfig(tp=4, sp=True, ep=8, zero_stage=3), q3, tr, 16)
    # DDP (ZeRO-0) has no FSDP shard to carve from: only ep 1
    with pytest.raises(ConfigError, match="no FSDP at ZeRO-0"):
        validate(ParallelConfig(ep=8), q3, tr.model_copy(update={"global_batch_size": 16}), 16)


def test_maxtext_pipelines_split_evenly_with_whole_rounds_of_microbatches():
    # MaxText: layers = stages x num_layers_per_pipeline_stage (x repeats); num_pipeline_microbatches a multiple of the
    # stages. DeepSeek-V2-Lite has 27 layers: pp 3 and 9 split them, pp 2 does not
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("maxtext"))
    v2l = MODELS["deepseek-v2-lite"]
    gpipe = dict(schedule="gpipe", zero_stage=3)  # MaxText's circular pipeline
    tr48 = tr.model_copy(update={"global_batch_size": 48})
    with pytest.raises(ConfigError) as err:  # on 12 devices: of 3, 9, 27 only pp 3 leaves a whole dp (4; 6 microbatches)
        validate(ParallelConfig(pp=2, microbatch_size=2, **gpipe), v2l, tr48, 12)
    assert err.value.field == "pp" and "legal pp: 3" in str(err.value)
    validate(ParallelConfig(pp=3, microbatch_size=2, **gpipe), v2l, tr48, 12)
    # 64 sequences over dp 4: 64 / (4 x b) microbatches is 16, 8, 4, 2 or 1, never a multiple of 3: refused, saying so
    with pytest.raises(ConfigError, match="needs a multiple of the stages") as err:
        validate(ParallelConfig(pp=3, microbatch_size=4, **gpipe), v2l, tr, 12)
    assert err.value.field == "microbatch_size" and "a multiple of dp x pp = 12 sequences" in str(err.value)


def test_plan_pin_refusal_lists_the_rule_legal_values():
    # breaker: "legal ep: none with the other settings as given (ep=1: global_batch_size=32 is not divisible by dp x
    # microbatch_size = 64 x 1)" although the unpinned search runs ep=1 at tp=4; the list is now the rule's own
    from typer.testing import CliRunner
    from shardplan.cli import app
    r = CliRunner().invoke(app, ["plan", "-m", "mixtral-8x7b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b", "32",
                                 "--framework", "hf-deepspeed", "--fix", "ep=2"])
    assert r.exit_code == 2 and "legal ep: 1" in r.output and "none with the other settings" not in r.output


def test_plan_table_shows_the_headroom_and_marks_a_tight_peak_band():
    # new user: the table had no headroom column, and "fits" sat beside a peak band reaching past the HBM
    from typer.testing import CliRunner
    from shardplan.cli import app
    r = CliRunner().invoke(app, ["plan", "-m", "mixtral-8x7b", "-H", "h100-sxm", "-n", "16", "-s", "32768", "-b", "16",
                                 "--framework", "torchtitan", "--top", "3"])
    assert r.exit_code == 0, r.output
    assert "free" in r.output and "* the peak band's high end" in " ".join(r.output.split())
