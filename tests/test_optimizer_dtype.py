"""``TrainingSpec.optimizer_dtype`` (bf16 optimizer state): bytes per parameter derived by hand, the CLI
flag, the exporters, and the NeMo Nemotron-4-340B recipe that needs it to fit."""

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.memory import memory_estimate
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, reproduce_command
from shardplan.inputs import build_inputs, training_spec
from shardplan.parallel import ParallelConfig, validate
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

runner = CliRunner()
TINY = ModelSpec(name="tiny", n_layers=8, d_model=1024, n_heads=8, ffn_dim=4096, vocab_size=32768)


@pytest.mark.parametrize("dtype, master, moments, total", [
    ("fp32", 4, 8, 16),          # ZeRO paper K = 12: 2 + 2 + 4 + 8
    ("bf16-moments", 4, 4, 12),  # DeepSeek-V3: fp32 master, two bf16 moments 2 x 2 B: 2 + 2 + 4 + 4
    ("bf16", 0, 4, 8),           # NeMo distributed_fused_adam dtype bf16: no master, 2 + 2 + 0 + 4
])
def test_bytes_per_parameter(dtype, master, moments, total):
    t = TrainingSpec(seq_len=8, global_batch_size=2, optimizer_dtype=dtype)
    assert (t.precision.master_bytes, t.precision.optimizer_bytes) == (master, moments)
    assert t.precision.model_state_bytes_per_param == total
    # validating the dumped spec again gives the same bytes (the override is set, not scaled)
    assert TrainingSpec(**t.model_dump()).precision == t.precision


def test_sgd_momentum_in_bf16_is_two_bytes():
    t = TrainingSpec(seq_len=8, global_batch_size=2, optimizer="sgd", optimizer_dtype="bf16-moments")
    assert t.precision.optimizer_bytes == 2  # one momentum buffer x 2 B


def test_optimizer_memory_with_zero1():
    # dp=2 ZeRO-1 on 2 devices: the optimizer column is (master + moments) x P / 2; TINY's parameters P are the
    # planner's own count, so the ratio of the columns is what is derived: (4 + 8) / (0 + 4) = 3
    pc = ParallelConfig(dp=2, zero_stage=1)
    cols = {}
    for dtype in ("fp32", "bf16"):
        tr = TrainingSpec(seq_len=512, global_batch_size=4, optimizer_dtype=dtype)
        cols[dtype] = memory_estimate(TINY, tr, validate(pc, TINY, tr, 2))
    assert cols["fp32"].optimizer == pytest.approx(3 * cols["bf16"].optimizer)
    assert cols["fp32"].params == cols["bf16"].params and cols["fp32"].grads == cols["bf16"].grads


def test_unknown_optimizer_dtype_names_the_legal_values():
    with pytest.raises(ConfigError, match="optimizer_dtype='fp8' is unknown; legal: fp32, bf16-moments, bf16"):
        training_spec(4096, 8, optimizer_dtype="fp8")
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "8",
                            "--optimizer-dtype", "int8"])
    assert r.exit_code == 2 and "legal: fp32, bf16-moments, bf16" in r.output


def test_nemotron_340b_nemo_recipe_fits_with_its_optimizer_state():
    # NeMo's Nemotron-4-340B recipe on 128 H100 (tp 8, pp 8, v 12, dp 2): with Megatron's fp32 state the first
    # stage holds ~5.8e9 parameters x (2 + 2 + 12 / 2) B = 58 GB of model state; the recipe's bf16 state without
    # master copy saves 4 B per parameter (master 4 / 2, moments 4 / 2), about 23 GB = 21.5 GiB of tensors, and the
    # Megatron-LM profile's allocator reserve (2.5% of the allocated peak) with them: 21.5 x 1.025 = 22.0 GiB
    kw = dict(model="nemotron-4-340b", hardware="h100-sxm", devices=128, seq_len=4096, global_batch=32,
              global_batch_tokens=None, tp=8, sp=True, tp_overlap=True, pp=8, schedule="interleaved",
              virtual_stages=12, zero_stage=1)
    est = {d: estimate(*build_inputs(optimizer_dtype=d, **kw), 128) for d in ("fp32", "bf16")}
    saved = est["fp32"].memory.total - est["bf16"].memory.total
    assert 21 * 1.025 * 2**30 < saved < 22 * 1.025 * 2**30
    assert not est["fp32"].fits and est["bf16"].fits


def test_megatron_writes_the_precision_aware_optimizer_and_others_refuse():
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=8,
                                 global_batch_tokens=None, optimizer_dtype="bf16-moments", zero_stage=1)
    e = estimate(m, hw, tr, pc, 8)
    text = export_text("megatron", e, reproduce_command("megatron", e))
    lines = {line.strip() for line in text.splitlines()}
    assert {"--use-precision-aware-optimizer", "--exp-avg-dtype bf16", "--exp-avg-sq-dtype bf16"} <= lines
    assert "--optimizer-dtype bf16-moments" in text  # the reproduce command in the header
    with pytest.raises(ConfigError, match="torchtitan cannot express optimizer_dtype='bf16-moments': it writes "
                       "optimizer_dtype fp32 \\(use --optimizer-dtype fp32\\); Megatron-LM"):
        export_text("torchtitan", e, "")
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=8,
                                 global_batch_tokens=None, optimizer_dtype="bf16", zero_stage=1)
    with pytest.raises(ConfigError, match="optimizer_dtype='bf16'.*MaxText .weight_dtype bfloat16"):
        export_text("megatron", estimate(m, hw, tr, pc, 8), "")
    # Megatron-LM's precision-aware optimizer needs its distributed optimizer (ZeRO-1)
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=8,
                                 global_batch_tokens=None, optimizer_dtype="bf16-moments", zero_stage=3)
    with pytest.raises(ConfigError, match="zero_stage=3.*distributed optimizer"):
        export_text("megatron", estimate(m, hw, tr, pc, 8), "")


def test_plan_export_refuses_an_optimizer_state_before_ranking(tmp_path):
    r = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "16",
                            "--optimizer-dtype", "bf16", "--export", "deepspeed", "-o", str(tmp_path / "d.json")])
    assert r.exit_code == 2 and "use --optimizer-dtype fp32" in r.output and "ranked plans" not in r.output


def test_automodel_keeps_bf16_state_and_reduces_in_fp32():
    # NeMo AutoModel casts its weights to bf16 and torch.optim.Adam makes bf16 moments: 2 (params) + 2 (grads) +
    # 0 (master) + 4 (moments) = 8 B per parameter, while FSDP2 reduces the gradients in fp32 (4 B per element).
    # Qwen3-30B-A3B on 8 GPUs, ep 8, ZeRO-3: with n parameters on the rank, automodel holds 2n + 2n + 4n bytes and
    # torchtitan 4n + 4n + 8n (fp32 parameter shard = master, fp32 gradient shard, fp32 moments); both reduce fp32
    from shardplan.cost.memory import memory_for_stage
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m = MODELS["qwen3-30b-a3b"]
    pc = ParallelConfig(ep=8, zero_stage=3, microbatch_size=4, recompute="full")
    state, rs = {}, {}
    for fw in ("automodel", "torchtitan"):
        tr = TrainingSpec(seq_len=4096, global_batch_size=512, framework=framework_profile(fw))
        mb = memory_for_stage(m, tr, validate(pc, m, tr, 8), 0)
        state[fw] = (mb.params, mb.grads, mb.optimizer)
        e = estimate(m, HARDWARE["h100-sxm"], tr, pc, 8)
        rs[fw] = sum(c.bytes_per_device for c in e.collectives if c.op == "ReduceScatter")
        if fw == "automodel":
            assert tr.optimizer_dtype == "bf16" and tr.precision.master_bytes == 0
    n = state["automodel"][0] / 2  # parameters on the rank
    assert state["automodel"] == (2 * n, 2 * n, 4 * n)
    assert state["torchtitan"] == pytest.approx((4 * n, 4 * n, 8 * n), rel=1e-12)
    assert rs["automodel"] == pytest.approx(rs["torchtitan"], rel=1e-12)  # both reduce fp32 gradients
    # asking for another optimizer state than the default keeps the user's choice
    tr = TrainingSpec(seq_len=4096, global_batch_size=512, framework=framework_profile("automodel"),
                      optimizer_dtype="bf16-moments")
    assert tr.optimizer_dtype == "bf16-moments" and tr.precision.master_bytes == 4


def test_estimate_names_the_profiles_optimizer_state():
    # the header's framework row says where a bf16 optimizer state comes from: the automodel profile's default,
    # or the user's --optimizer-dtype (which the profile does not override)
    args = ["estimate", "-m", "qwen3-30b-a3b", "--hardware", "h100-sxm", "-n", "8", "--seq-len", "4096",
            "--global-batch", "512", "--ep", "8", "--zero-stage", "3", "--microbatch-size", "4", "--recompute", "full",
            "--framework", "automodel"]
    out = CliRunner().invoke(app, args, terminal_width=200)
    assert out.exit_code == 0 and "optimizer state bf16 (the profile's)" in out.output
    out = CliRunner().invoke(app, args + ["--optimizer-dtype", "bf16-moments"], terminal_width=200)
    assert out.exit_code == 0 and "optimizer state bf16-moments" in out.output and "(the profile's)" not in out.output


def test_a_dumped_spec_revalidated_with_another_state_or_profile_has_its_bytes():
    # the bytes follow the dtype and the profile of the spec as validated, not those of the one it was dumped from:
    # automodel's bf16 state (master 0, moments 4) edited to fp32 gives the policy's 4 + 8 again; switching the
    # profile to megatron without a dtype resolves to fp32 likewise; with_framework re-resolves it the same way
    from shardplan.presets.frameworks import framework_profile
    from shardplan.specs.training import TrainingSpec
    auto = TrainingSpec(seq_len=4096, global_batch_size=8, framework=framework_profile("automodel"))
    assert (auto.optimizer_dtype, auto.precision.master_bytes, auto.precision.optimizer_bytes) == ("bf16", 0, 4)
    d = auto.model_dump()
    d["optimizer_dtype"] = "fp32"
    edited = TrainingSpec.model_validate(d)
    assert (edited.precision.master_bytes, edited.precision.optimizer_bytes) == (4, 8)
    moved = auto.with_framework(framework_profile("megatron"))
    assert (moved.optimizer_dtype, moved.precision.master_bytes, moved.precision.optimizer_bytes) == ("fp32", 4, 8)
    back = moved.with_framework(framework_profile("automodel"))
    assert back.precision == auto.precision and back.optimizer_dtype == "bf16"
    assert TrainingSpec.model_validate(auto.model_dump()).precision == auto.precision  # a plain round trip


def test_export_names_the_profile_behind_a_refused_optimizer_state():
    # automodel's bf16 state is not what torchtitan's config runs: the refusal says the profile chose it, and an
    # explicit --optimizer-dtype fp32 exports
    args = ["export", "--to", "torchtitan", "-m", "llama-3-8b", "--hardware", "h100-sxm", "-n", "16", "--seq-len",
            "4096", "--global-batch", "64", "--zero-stage", "3", "--framework", "automodel"]
    out = CliRunner().invoke(app, args, terminal_width=300)
    assert out.exit_code == 2 and "bf16 is the automodel profile's optimizer state" in out.output
    out = CliRunner().invoke(app, args + ["--optimizer-dtype", "fp32"])
    assert out.exit_code == 0 and "optimizer state fp32" in out.output


def test_choice_names_take_any_case_in_the_python_api_and_records():
    # as on the command line: BF16 is bf16, Round_Robin is round_robin
    from shardplan.records import RunRecord
    from shardplan.specs.training import TrainingSpec
    t = TrainingSpec(seq_len=8, global_batch_size=2, optimizer_dtype="BF16", moe_routing="Round_Robin")
    assert (t.optimizer_dtype, t.moe_routing) == ("bf16", "round_robin")
    r = RunRecord.model_validate({"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096,
                                  "global_batch_size": 16, "parallel": {"zero_stage": 1}, "status": "ok",
                                  "tokens_per_s_per_device": 1000.0, "optimizer_dtype": "BF16-Moments"})
    assert r.optimizer_dtype == "bf16-moments"


def test_maxtext_profile_defaults_to_fp32_weights_and_says_so():
    # MaxText's base.yml keeps weight_dtype float32 with no master copy: the planner's fp32-params.
    # llama-2-7b has 6,738,415,616 parameters; ZeRO-3 over 64 devices: 6,738,415,616 x 4 B / 64
    # = 421,150,976 B of parameters per device (bf16-mixed would hold half of that, 210,575,488 B)
    args = ["estimate", "-m", "llama-2-7b", "-H", "tpu-v5p", "-n", "64", "-s", "4096", "-b", "64",
            "--zero-stage", "3", "--framework", "maxtext", "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "precision fp32-params: the maxtext profile's default" in r.stderr
    import json
    out = json.loads(r.stdout)
    assert out["memory_bytes"]["params"] == pytest.approx(6_738_415_616 * 4 / 64, rel=1e-9)
    r = runner.invoke(app, args + ["--precision", "bf16-mixed"])  # given: no note, the given policy
    assert "profile's default" not in r.stderr
    assert json.loads(r.stdout)["memory_bytes"]["params"] == pytest.approx(6_738_415_616 * 2 / 64, rel=1e-9)
    # the Megatron-LM profile keeps bf16-mixed without a note
    assert training_spec(4096, 8).precision.name == "bf16-mixed"
    assert training_spec(4096, 8, framework="maxtext").precision.name == "fp32-params"
