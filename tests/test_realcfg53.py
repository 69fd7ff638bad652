"""New-user pass 53 (an MoE team on H100 / H200 and a dense 70B on TPU v5p): each test fails on the behaviour the
pass found (noted in its comment)."""

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


def test_megatron_mixtral_zoo_layout_is_not_flagged_above_the_moe_record():
    # the H100 bf16 MoE record was one [A] run the planner over-predicts by 44% (30.3%): Megatron's own Mixtral 8x22B
    # layout, predicted 43.5% and measured ~46% (455-470 TFLOP/s), got "treat it as an upper bound"
    from shardplan.calibration import best_published_moe_mfu, optimism_note
    record = best_published_moe_mfu(HARDWARE["h100-sxm"].peak_flops_bf16, False)
    assert record is not None and record[0] > 0.46
    m, hw, tr, pc = build_inputs(model="mixtral-8x22b", hardware="h100-sxm", devices=128, seq_len=4096,
                                 global_batch=256, global_batch_tokens=None, tp=2, sp=True, tp_overlap=True, pp=8,
                                 schedule="interleaved", virtual_stages=7, ep=8, etp=1, microbatch_size=1)
    e = estimate(m, hw, tr, pc, 128)
    assert 0.40 < e.mfu < record[0] and optimism_note(e) is None


def test_megatron_profile_does_not_price_a_per_step_zero3_gather():
    # Megatron-FSDP gathers before each unit's forward and backward: the megatron profile's search ranked (and
    # --export megatron wrote) ZeRO-3 plans priced with one gather per step, 7.5% faster than Megatron runs them
    tr = TrainingSpec(seq_len=4096, global_batch_size=512)
    with pytest.raises(ConfigError, match="zero3_gather='per_step' is not implemented by the megatron"):
        validate(ParallelConfig(dp=32, ep=8, zero_stage=3, zero3_gather="per_step", microbatch_size=2),
                 MODELS["qwen3-30b-a3b"], tr, 32)
    from shardplan.search import search
    plans = search(MODELS["qwen3-30b-a3b"], HARDWARE["h100-sxm"], tr, 32, top_k=20).plans
    assert plans and all(e.parallel.zero3_gather == "per_microbatch" for e in plans)


def test_calibrate_names_parameters_one_model_cannot_separate():
    # six Qwen3-30B-A3B records moved matmul_efficiency 0.59 -> 0.79 and hbm_efficiency 0.80 -> 0.34 at 0.4% in-sample
    # error, silently; the file then priced a dense 70B run 13% faster. Synthetic records of one MoE model, all slower
    # than the preset predicts: the fit trades the two rates, and says so
    from shardplan.calibrate import calibrate
    from shardplan.records import RunRecord
    slow = HARDWARE["h100-sxm"].model_copy(update={"matmul_efficiency": 0.5, "hbm_efficiency": 0.6})
    # (a run-to-run spread of +-5%, as measured runs have: exact records pin even collinear parameters, and a breaker's
    # seven exact records of two models were flagged until the standard error joined the test)
    recs = []
    for i, (n, lay) in enumerate(((8, dict(ep=8, microbatch_size=1)), (16, dict(ep=8, dp=16, microbatch_size=2)),
                                  (32, dict(ep=8, dp=32, microbatch_size=1)), (16, dict(ep=4, dp=16, microbatch_size=1)),
                                  (8, dict(ep=8, microbatch_size=2)))):
        tr = TrainingSpec(seq_len=4096, global_batch_size=256)
        e = estimate(MODELS["qwen3-30b-a3b"], slow, tr, ParallelConfig(**lay), n)
        recs.append(RunRecord(model="qwen3-30b-a3b", hardware="h100-sxm", devices=n, seq_len=4096,
                              global_batch_size=256, parallel=ParallelConfig(**lay),
                              tokens_per_s_per_device=e.tokens_per_s / n * (1.05 if i % 2 else 0.95),
                              source="synthetic"))
    cal = calibrate(recs, HARDWARE["h100-sxm"], framework_profile("megatron"), cross_validate=False)
    assert cal.one_model == "qwen3-30b-a3b"
    fitted = [p.field for p in cal.params if p.field not in cal.held]
    assert any("matmul_efficiency is not separated" in t or "hbm_efficiency is not separated" in t
               for t in cal.traded), (cal.traded, fitted)
    # exact records of two dense models over sequence lengths, microbatches and layouts pin the two rates though they
    # correlate (a breaker's seven records, VIF 30, recovered 0.5 / 0.6 exactly and were flagged): no warning
    dense = []
    for model, n, lay, seq, batch in (
            ("llama-3-8b", 8, dict(dp=8, zero_stage=1), 4096, 64),
            ("llama-3-8b", 16, dict(dp=8, tp=2, sp=True, zero_stage=1), 8192, 64),
            ("llama-3-70b", 64, dict(dp=8, tp=8, sp=True, zero_stage=1), 4096, 256),
            ("llama-3-70b", 64, dict(dp=2, tp=8, pp=4, sp=True, zero_stage=1), 4096, 256),
            ("llama-3-8b", 8, dict(dp=8, zero_stage=1, microbatch_size=2), 2048, 64),
            ("llama-3-70b", 32, dict(dp=4, tp=8, sp=True, zero_stage=1, recompute="full"), 8192, 64),
            ("llama-3-8b", 32, dict(dp=32, zero_stage=3), 4096, 256)):
        e = estimate(MODELS[model], slow, TrainingSpec(seq_len=seq, global_batch_size=batch), ParallelConfig(**lay), n)
        dense.append(RunRecord(model=model, hardware="h100-sxm", devices=n, seq_len=seq, global_batch_size=batch,
                               parallel=ParallelConfig(**lay), tokens_per_s_per_device=e.tokens_per_s / n,
                               source="synthetic"))
    cal = calibrate(dense, HARDWARE["h100-sxm"], framework_profile("megatron"), cross_validate=False)
    assert cal.traded == [] and cal.one_model == ""


def test_torchtitan_deepep_backend_round_trips():
    # import ignored [parallelism] expert_parallel_comm_backend = "deepep" (priced as AllToAll, +55% at ep 32 across
    # nodes); export refused a DeepEP plan as having "no option in its config"
    m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="h100-sxm", devices=32, seq_len=4096,
                                 global_batch=512, global_batch_tokens=None, framework="torchtitan", ep=8,
                                 zero_stage=3, moe_dispatcher="deepep", microbatch_size=2, recompute="full")
    text = export_text("torchtitan", estimate(m, hw, tr, pc, 32))
    assert 'expert_parallel_comm_backend = "deepep"' in text
    assert import_config("torchtitan", text).parallel.moe_dispatcher == "deepep"
    hybrid = text.replace('"deepep"', '"hybridep"')
    imp = import_config("torchtitan", hybrid)
    assert imp.parallel.moe_dispatcher == "deepep" and any("HybridEP" in n for n in imp.notes)
    with pytest.raises(ConfigError, match="expert_parallel_comm_backend='mori'"):
        import_config("torchtitan", text.replace('"deepep"', '"mori"'))


def test_deepspeed_autoep_round_trips():
    # import read expert_parallel.autoep_size; export refused the same plan ("expert parallelism is model code")
    m, hw, tr, pc = build_inputs(model="qwen3-30b-a3b", hardware="h100-sxm", devices=32, seq_len=4096,
                                 global_batch=512, global_batch_tokens=None, framework="hf-deepspeed+expert_parallel=true", ep=8,
                                 zero_stage=2, microbatch_size=1, recompute="full")
    text = export_text("deepspeed", estimate(m, hw, tr, pc, 32))
    assert json.loads(text)["expert_parallel"] == {"enabled": True, "autoep_size": 8}
    assert import_config("deepspeed", text, devices=32).parallel.ep == 8
    pc3 = pc.model_copy(update={"zero_stage": 3})
    with pytest.raises(ConfigError, match="AutoEP"):
        export_text("deepspeed", estimate(m, hw, tr, pc3, 32))


def test_megatron_moe_export_balances_its_routing():
    # the script set no balancing loss (Megatron-LM's --moe-aux-loss-coeff defaults to 0.0) while the plan is priced
    # with balanced routing
    m, hw, tr, pc = build_inputs(model="mixtral-8x7b", hardware="h100-sxm", devices=64, seq_len=4096,
                                 global_batch=256, global_batch_tokens=None, ep=8, zero_stage=1)
    text = export_text("megatron", estimate(m, hw, tr, pc, 64))
    assert "--moe-router-load-balancing-type aux_loss" in text and "--moe-aux-loss-coeff 1e-2" in text
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=16,
                                 global_batch_tokens=None)
    assert "--moe-aux-loss-coeff" not in export_text("megatron", estimate(m, hw, tr, pc, 8))


def test_moe_imbalance_above_what_routing_can_produce_is_refused():
    # --moe-imbalance 64 on Mixtral with ep 8 was priced: a rank holds one of 8 experts, so it receives at most one of a
    # token's 2 copies against 2/8 on average: 8 x min(2, 1) / 2 = 4
    from shardplan.parallel import max_moe_imbalance
    assert max_moe_imbalance(ParallelConfig(ep=8), MODELS["mixtral-8x7b"]) == 4
    # Qwen3-30B-A3B, 128 experts top-8, ep 8: 16 experts a rank, all 8 copies can land there: 8 x 8 / 8 = 8
    assert max_moe_imbalance(ParallelConfig(ep=8), MODELS["qwen3-30b-a3b"]) == 8
    kw = dict(model="mixtral-8x7b", hardware="h100-sxm", devices=64, seq_len=4096, global_batch=256,
              global_batch_tokens=None, ep=8)
    with pytest.raises(ConfigError, match="legal moe_imbalance: 1 .. 4"):
        build_inputs(**kw, moe_imbalance=64)
    assert build_inputs(**kw, moe_imbalance=4).training.moe_imbalance == 4


def test_plan_points_to_a_layout_with_headroom_when_first_is_tight():
    # the DeepSeek-V3 top 5 were all tight fits with no pointer; Qwen3-30B-A3B's tight #1 had no note naming #3
    from shardplan.cli.plan import safer_pick_note
    from shardplan.explain import tight_fit
    from shardplan.search import search
    tr = TrainingSpec(seq_len=4096, global_batch_size=512)
    plans = search(MODELS["qwen3-30b-a3b"], HARDWARE["h100-sxm"], tr, 32, top_k=5).plans
    note = safer_pick_note(plans)
    if tight_fit(plans[0]):
        assert "#1 is a tight fit" in note and ("GiB free" in note or "safer pick" in note or "--top" in note)
    assert safer_pick_note(plans[:1]) == "" or "safer pick" in safer_pick_note(plans[:1])


def test_no_peak_band_row_where_the_profile_has_no_band():
    # maxtext prices no fragmentation: the fits row said "no peak band" and the memory table then printed
    # "peak band (low-high) 33.96-33.96"
    from typer.testing import CliRunner

    from shardplan.cli import app
    args = ["estimate", "--model", "llama-3-70b", "--hardware", "tpu-v5p", "--devices", "256", "--seq-len", "8192",
            "--global-batch", "256", "--zero-stage", "3", "--recompute", "full"]
    text = CliRunner().invoke(app, args).output
    assert "no peak band" in text and "peak band (low-high)" not in text
