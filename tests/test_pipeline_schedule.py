"""The pipeline-schedule simulator (pure Python; runs without plotly)."""

from __future__ import annotations

import pytest

from shardplan.cost.pipeline_schedule import SCHEDULES, pipeline_bubble_units, pipeline_schedule, rank_orders
from shardplan.errors import ConfigError

CASES = [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("1f1b", 1, 5, 1), ("interleaved", 4, 8, 2), ("interleaved", 2, 6, 3),
         ("zero-bubble", 4, 8, 1), ("1f1b", 8, 32, 1)]


@pytest.mark.parametrize("schedule,pp,m,v", CASES)
def test_pipeline_timeline(schedule, pp, m, v):
    blocks = pipeline_schedule(pp, m, schedule, v)
    per_stage = {s: [b for b in blocks if b.stage == s] for s in range(pp)}
    for s, bs in per_stage.items():
        if schedule == "zero-bubble":
            assert len(bs) == 3 * m  # F, B (input grad), W (weight grad)
        else:
            assert len(bs) == 2 * m * v
            assert sorted((b.microbatch, b.chunk) for b in bs if b.kind == "F") == \
                sorted((i, c) for i in range(m) for c in range(v))
        bs = sorted(bs, key=lambda b: b.start)
        assert all(a.end <= b.start + 1e-9 for a, b in zip(bs, bs[1:]))  # one pass at a time per stage
    # dependencies: a microbatch's forward on stage s starts after it left stage s-1
    ends = {(b.kind, b.stage, b.microbatch, b.chunk): b.end for b in blocks}
    for b in blocks:
        if b.kind == "F" and b.stage > 0:
            assert b.start >= ends[("F", b.stage - 1, b.microbatch, b.chunk)] - 1e-9
        if b.kind == "B" and b.stage < pp - 1:
            assert b.start >= ends[("B", b.stage + 1, b.microbatch, b.chunk)] - 1e-9
    # the simulated bubble is the planner's: (p-1) T_mb x {1, 1/v, 1/3}, T_mb = 3 units
    factor = {"gpipe": 1.0, "1f1b": 1.0, "interleaved": 1.0 / v, "zero-bubble": 1.0 / 3.0}[schedule]
    assert pipeline_bubble_units(blocks) == pytest.approx((pp - 1) * 3 * factor, rel=1e-9, abs=1e-9)


def test_pipeline_rejects_bad_input():
    with pytest.raises(ConfigError, match="schedule"):
        pipeline_schedule(2, 4, "bogus")
    with pytest.raises(ConfigError, match="divisible by pp"):
        pipeline_schedule(4, 6, "interleaved", 2)
    with pytest.raises(ConfigError, match="virtual_stages"):
        pipeline_schedule(4, 8, "1f1b", 2)
    with pytest.raises(ConfigError, match="must be >= 1"):
        pipeline_schedule(0, 8, "1f1b")


def _idle_fraction(blocks) -> float:
    """Idle time over total time, summed over ranks, computed from the blocks alone."""
    makespan = max(b.end for b in blocks)
    ranks = {b.stage for b in blocks}
    busy = sum(b.duration for b in blocks)
    return (len(ranks) * makespan - busy) / (len(ranks) * makespan)


@pytest.mark.parametrize("schedule,v,expected", [
    # Narayanan et al. 2021 Sec. 2.2.1 (GPipe and 1F1B): bubble t_pb = (p-1)(t_f+t_b), ideal time
    # t_id = m(t_f+t_b), so idle / total = (p-1) / (m+p-1). In simulator units (t_f = 1, t_b = 2):
    # p=4, m=8: busy per rank 8*3 = 24, bubble 3*3 = 9, makespan 33, idle/total = 9/33 = 3/11.
    ("gpipe", 1, 3 / 11),
    ("1f1b", 1, 3 / 11),
    # Sec. 2.2.2 (interleaved, v chunks per rank): bubble (p-1)(t_f+t_b)/v. Each chunk takes
    # F = 1/v = 0.5, B = 2/v = 1 unit, so busy per rank is still m v (1/v + 2/v) = 8*2*1.5 = 24;
    # bubble 3*3/2 = 4.5, makespan 28.5, idle/total = 4.5/28.5 = 3/19 = (p-1)/(v m + p - 1).
    ("interleaved", 2, 3 / 19),
    # ZB-H1 (Qi et al. 2023): bubble (p-1)(T_F + T_B - T_W) with T_F = T_B = T_W = 1 unit: 3;
    # busy per rank 8*3 = 24, makespan 27, idle/total = 3/27 = 1/9 = (p-1)/(3m + p - 1).
    ("zero-bubble", 1, 1 / 9),
])
def test_simulated_bubble_matches_closed_form(schedule, v, expected):
    p, m = 4, 8
    assert expected == pytest.approx({"interleaved": (p - 1) / (v * m + p - 1),
                                      "zero-bubble": (p - 1) / (3 * m + p - 1)}.get(schedule, (p - 1) / (m + p - 1)))
    blocks = pipeline_schedule(p, m, schedule, v)
    assert _idle_fraction(blocks) == pytest.approx(expected, rel=1e-12)
    assert pipeline_bubble_units(blocks) / max(b.end for b in blocks) == pytest.approx(expected, rel=1e-12)


def test_rank_orders_1f1b_warmup():
    # 1F1B on rank s: p - s - 1 warm-up forwards, then F/B alternate; p=3, m=4
    orders = rank_orders(3, 4, "1f1b")
    kinds = ["".join(k for k, _, _ in o) for o in orders]
    assert kinds == ["FFFBFBBB", "FFBFBFBB", "FBFBFBFB"]
    assert all(sorted(mb for k, mb, _ in o if k == "B") == [0, 1, 2, 3] for o in orders)


def test_schedule_names_match_parallel_config():
    from typing import get_args

    from shardplan.parallel import ParallelConfig
    assert set(SCHEDULES) == set(get_args(ParallelConfig.model_fields["schedule"].annotation))


def test_importable_without_plotly():
    import subprocess
    import sys
    code = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('plotly', 'dash', 'matplotlib', 'jax'):\n"
            "            raise ImportError(name)\nsys.meta_path.insert(0, Block())\n"
            "import shardplan.cost.pipeline_schedule as s\nassert s.pipeline_schedule(2, 4)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_pipeline_flushes_pay_the_bubble_each_time():
    # DeepSeek-V3-like accumulation of local batches (NeMo AutoModel's 1,024-GPU recipe): pp=4, interleaved v=8,
    # 32 microbatches per step in 4 flushes of 8. Bubble: 4 x (4 - 1) / 8 = 1.5 microbatch times (one flush of 32:
    # 3/8 = 0.375); in flight on the first stage: min(8, 4 x (1 + 3/32)) = 4.375 either way; the 1F1B version holds
    # min(8, 4) = 4; GPipe holds one flush, 8 (not 32)
    from shardplan.cost.pipeline import bubble_fraction, inflight_microbatches
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    from shardplan.presets.frameworks import framework_profile
    model = ModelSpec(name="t", n_layers=32, d_model=512, n_heads=8, ffn_dim=2048, vocab_size=1024)
    # torch.distributed.pipelining runs one schedule per local batch (torchtitan); Megatron-LM refuses flushes
    tr = TrainingSpec(seq_len=256, global_batch_size=64, framework=framework_profile("torchtitan"))
    base = dict(pp=4, microbatch_size=1, schedule="interleaved", virtual_stages=8)
    one = validate(ParallelConfig(**base), model, tr, 8)  # dp = 2: 32 microbatches per rank
    four = validate(ParallelConfig(**base, pipeline_flushes=4), model, tr, 8)
    assert one.microbatches == four.microbatches == 32
    assert bubble_fraction(one.parallel, one.stage_layers) == 3 / 8
    assert bubble_fraction(four.parallel, four.stage_layers) == 4 * 3 / 8
    assert inflight_microbatches(four) == 4 * (1 + 3 / 32)
    gp = validate(ParallelConfig(pp=4, schedule="gpipe", pipeline_flushes=4), model, tr, 8)
    assert inflight_microbatches(gp) == 8
    assert "flushes=4" in four.parallel.short() and any("pipeline_flushes=4" in n for n in four.notes)


def test_pipeline_flushes_errors_name_the_legal_values():
    # every listed value passes validation (checked below for the interleaved case)
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    from shardplan.presets.frameworks import framework_profile
    model = ModelSpec(name="t", n_layers=32, d_model=512, n_heads=8, ffn_dim=2048, vocab_size=1024)
    # torch.distributed.pipelining runs one schedule per local batch (torchtitan); Megatron-LM refuses flushes
    tr = TrainingSpec(seq_len=256, global_batch_size=64, framework=framework_profile("torchtitan"))
    with pytest.raises(ConfigError, match=r"pipeline_flushes=4 needs pp > 1.*legal with pp=1: 1"):
        validate(ParallelConfig(pipeline_flushes=4), model, tr, 8)
    # 32 microbatches: 3 does not divide them; under interleaved pp=4 each flush needs a multiple of 4: 1, 2, 4, 8
    with pytest.raises(ConfigError, match=r"pipeline_flushes=3 does not divide the 32 microbatches.*legal: 1, 2, 4, 8$"):
        validate(ParallelConfig(pp=4, schedule="interleaved", virtual_stages=2, pipeline_flushes=3), model, tr, 8)
    # 16 flushes of 2 microbatches: each flush's count must be a multiple of pp=4 for the interleaved schedule
    with pytest.raises(ConfigError, match=r"pipeline_flushes=16 leaves 2 microbatches per flush, where the interleaved "
                                          r"schedule needs a multiple of pp=4; legal: 1, 2, 4, 8$"):
        validate(ParallelConfig(pp=4, schedule="interleaved", virtual_stages=2, pipeline_flushes=16), model, tr, 8)


def test_pipeline_flushes_regather_per_step_parameters():
    # ZeRO-3 gathered once per step (per_step) re-gathers after every flush's last backward: 4 flushes, 4 calls,
    # 4 x the exposed time of one
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    from shardplan.presets.frameworks import framework_profile
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("torchtitan"))
    ag = {}
    for f in (1, 4):
        pc = ParallelConfig(pp=2, zero_stage=3, zero3_gather="per_step", pipeline_flushes=f)
        e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, pc, 16)
        ag[f] = next(c for c in e.collectives if c.op == "AllGather" and c.axis == "dp")
    assert (ag[1].count, ag[4].count) == (1, 4)
    assert ag[4].exposed_s == pytest.approx(4 * ag[1].exposed_s, rel=1e-12)
    assert "once per pipeline flush, 4 per step" in ag[4].purpose


def test_search_keeps_unpipelined_layouts_with_pinned_flushes():
    # --pipeline-flushes N pins N for pipelined candidates; pp = 1 ones have nothing to flush and stay in the search
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.search import search
    from shardplan.specs.training import TrainingSpec
    from shardplan.presets.frameworks import framework_profile
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=framework_profile("torchtitan"))
    res = search(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, 16, top_k=200, fix={"pipeline_flushes": 2})
    pps = {p.parallel.pp for p in res.plans}
    assert 1 in pps and any(pp > 1 for pp in pps)
    assert all(p.parallel.pipeline_flushes == (2 if p.parallel.pp > 1 else 1) for p in res.plans)


def test_pipeline_flush_errors_list_only_values_that_pass():
    # interleaved pp=2 on 16 devices (tp 8, dp 1): a global batch of 6 is 6 microbatches; 2 flushes leave 3 per flush,
    # not a multiple of pp: legal 1 and 3, and each validates. An odd batch (5) has no legal count: the message
    # asks for a batch that is a multiple of dp x mbs x pp = 2 instead of listing nothing
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m = MODELS["llama-3-8b"]
    from shardplan.presets.frameworks import framework_profile
    titan = framework_profile("torchtitan")
    base = dict(pp=2, tp=8, sp=True, schedule="interleaved", virtual_stages=2)
    tr = TrainingSpec(seq_len=4096, global_batch_size=6, framework=titan)
    with pytest.raises(ConfigError) as err:
        validate(ParallelConfig(**base, pipeline_flushes=2), m, tr, 16)
    assert err.value.legal == [1, 3]
    for f in err.value.legal:
        validate(ParallelConfig(**base, pipeline_flushes=f), m, tr, 16)
    with pytest.raises(ConfigError, match=r"no flush count does .* multiple of dp x microbatch_size x pp = 2 sequences"):
        validate(ParallelConfig(**base, pipeline_flushes=2), m,
                 TrainingSpec(seq_len=4096, global_batch_size=5, framework=titan), 16)


def test_pipeline_flushes_only_where_the_framework_runs_them():
    # Megatron-LM runs one schedule over all microbatches: pipeline_flushes > 1 is refused, naming who has it
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    with pytest.raises(ConfigError, match=r"megatron framework runs one pipeline schedule.*torchtitan or automodel.*"
                                          r"legal pipeline_flushes: 1$"):
        validate(ParallelConfig(pp=2, pipeline_flushes=2), MODELS["llama-3-8b"],
                 TrainingSpec(seq_len=4096, global_batch_size=64), 16)


def _dualpipe(**kw):
    from shardplan.parallel import ParallelConfig
    return ParallelConfig(**{"pp": 16, "ep": 64, "zero_stage": 1, "microbatch_size": 1, "schedule": "dualpipe",
                             "moe_dispatcher": "deepep", **kw})


def test_dualpipe_bubble_and_validation():
    from shardplan.cost.pipeline import bubble_fraction
    from shardplan.parallel import validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    # DeepSeek-V3 Table 2: (p/2 - 1)(F&B + B - 3W) with F&B = F + B, B = 2F, W = F: (8 - 1) x 2F = 14 F,
    # in microbatch times F + B = 3F: 14 / 3
    assert bubble_fraction(_dualpipe()) == pytest.approx(14 / 3)
    m, tr = MODELS["deepseek-v3-mtp"], TrainingSpec(seq_len=4096, global_batch_size=15360)
    assert validate(_dualpipe(), m, tr, 2048).microbatches == 120  # 15360 / 128 ranks, even and >= 2 x 16
    from shardplan.parallel import ParallelConfig
    with pytest.raises(ConfigError, match="even pp"):  # llama-3-8b, pp 3 on 6 devices: dp 2, 12 microbatches
        validate(ParallelConfig(pp=3, schedule="dualpipe"), MODELS["llama-3-8b"],
                 TrainingSpec(seq_len=4096, global_batch_size=24), 6)
    # pp 2 on 4 devices: dp 2, 18 sequences per rank; mbs 2 gives 9 (odd): legal mbs 1 (18) and 3 (6), not 9 (2 < 4)
    with pytest.raises(ConfigError, match="even count") as e:
        validate(ParallelConfig(pp=2, schedule="dualpipe", microbatch_size=2), MODELS["llama-3-8b"],
                 TrainingSpec(seq_len=4096, global_batch_size=36), 4)
    assert e.value.legal == [1, 3]
    for mbs in e.value.legal:  # every listed microbatch size passes
        validate(ParallelConfig(pp=2, schedule="dualpipe", microbatch_size=mbs), MODELS["llama-3-8b"],
                 TrainingSpec(seq_len=4096, global_batch_size=36), 4)
    with pytest.raises(ConfigError, match="at least 2 pp") as e:  # 1,024 / 128 = 8 microbatches < 32
        validate(_dualpipe(), m, TrainingSpec(seq_len=4096, global_batch_size=1024), 2048)
    assert e.value.legal is None  # no microbatch size gives 32 or more


def test_dualpipe_hides_expert_alltoalls_and_pipeline_sends_of_paired_chunks():
    from shardplan.cost.step import estimate
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, tr = MODELS["deepseek-v3-mtp"], TrainingSpec(seq_len=4096, global_batch_size=15360)
    e = estimate(m, HARDWARE["h800"], tr, _dualpipe(), 2048)
    # rank 0 runs 1.5 x 16 - 1 = 23 of its 120 chunks unpaired (DualPipe step()): that share of the AllToAll and
    # send time stays exposed, the rest hides (share 1: DeepSeek-V3 Sec. 3.2.1)
    for c in e.collectives:
        if c.axis == "pp":
            assert c.overlap == "dualpipe" and c.exposed_s == pytest.approx(23 / 120 * c.time_s)
        if c.axis == "ep":
            assert c.overlap == "dualpipe" and c.exposed_s < c.time_s
    # two stages' weights per rank: a middle rank of equal stages holds twice 1F1B's parameters
    one = estimate(m, HARDWARE["h800"], tr, _dualpipe(schedule="1f1b", pp_layers=(4,) * 15 + (1,)), 2048)
    two = estimate(m, HARDWARE["h800"], tr, _dualpipe(pp_layers=(4,) * 15 + (1,)), 2048)
    from shardplan.cost.memory import memory_for_stage
    assert memory_for_stage(m, tr, two.layout, 5).params == pytest.approx(
        2 * memory_for_stage(m, tr, one.layout, 5).params)


def test_dualpipe_is_refused_where_nothing_runs_it():
    from shardplan.parallel import validate
    from shardplan.presets.frameworks import JAX_RUNTIME
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=4096, global_batch_size=15360, framework=JAX_RUNTIME)
    with pytest.raises(ConfigError, match="schedule='dualpipe' is not implemented"):
        validate(_dualpipe(), MODELS["deepseek-v3-mtp"], tr, 2048)


def test_dualpipe_rank_runs_both_mirrored_stages():
    from shardplan.cost.compute import slowest_stage, stage_compute
    from shardplan.cost.context import step_context
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, h, tr = MODELS["llama-3-8b"], HARDWARE["h100-sxm"], TrainingSpec(seq_len=4096, global_batch_size=64)
    # stages of 14, 2, 2, 14 layers: rank 0 runs stages 0 and 3 (14 + 14, the LM head once per two microbatches),
    # rank 1 stages 1 and 2; the slowest rank's microbatch time is the mean of its pair
    p = ParallelConfig(pp=4, schedule="dualpipe", pp_layers=(14, 2, 2, 14))
    lay = validate(p, m, tr, 4)
    ctx = step_context(m, h, tr, lay)
    s0, s3 = (stage_compute(m, tr, h, lay, s, ctx.dense_t, ctx.moe_t) for s in (0, 3))
    assert ctx.stage.matmul_s == pytest.approx((s0.matmul_s + s3.matmul_s) / 2)
    assert ctx.stage.params.dense == pytest.approx(s0.params.dense + s3.params.dense)  # both stages' weights
    # its gradient reduction moves both stages' gradients: twice 1F1B's on equal stages
    eq = dict(pp=4, pp_layers=(8, 8, 8, 8))
    one, two = (estimate(m, h, tr, ParallelConfig(**eq, schedule=s), 8) for s in ("1f1b", "dualpipe"))
    rs = [sum(c.bytes_per_device for c in e.collectives if c.axis == "dp") for e in (one, two)]
    assert rs[1] == pytest.approx(2 * rs[0])
    # an odd pp names the even ones that keep dp x pp = 6: 2 and 6
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(pp=3, schedule="dualpipe"), m, TrainingSpec(seq_len=4096, global_batch_size=48), 6)
    assert e.value.legal == [2, 6]


def test_dualpipe_full_recompute_holds_one_recomputed_layer_per_rank():
    # a DualPipe rank holds stages 1 and 2 of 4 (8 layers each here) under full recompute: their stored inputs and
    # ONE layer being recomputed (not one per stage): activations = stage 1 + stage 2 - one layer's full bytes
    from shardplan.cost.memory import activation_terms, layer_activation_bytes, stage_activation_bytes
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, tr = MODELS["llama-3-8b"], TrainingSpec(seq_len=4096, global_batch_size=64)
    lay = validate(ParallelConfig(pp=4, schedule="dualpipe", recompute="full"), m, tr, 8)
    one_layer = lay.local_tokens * layer_activation_bytes(m, tr, lay)[0]
    both = stage_activation_bytes(m, tr, lay, 1) + stage_activation_bytes(m, tr, lay, 2)
    assert activation_terms(m, tr, lay, 1)[0] == pytest.approx(both - one_layer)


def test_zero_bubble_defers_only_the_weight_gradient_pass():
    # Qi et al. 2023 Table 2: ZB-H1 bubble (p-1)(T_F + T_B - T_W). In microbatch times with w = T_W / (F + B + W):
    # p=8, w=1/3 (equal passes): 7/3; w=0.25 (their profiled 6.2B share): 7 x (1 - 0.5) = 3.5.
    # Appendix H, m < p: (p-1)(1-w) - (m-1) w; p=8, w=0.25, m=2: 5.25 - 0.25 = 5.0 (1F1B: 7)
    from shardplan.cost.pipeline import bubble_fraction, zero_bubble_fraction
    from shardplan.parallel import ParallelConfig
    assert zero_bubble_fraction(8, 1 / 3) == pytest.approx(7 / 3)
    assert zero_bubble_fraction(8, 0.25, 24) == pytest.approx(3.5)
    assert zero_bubble_fraction(8, 0.25, 2) == pytest.approx(5.0)
    assert zero_bubble_fraction(8, 0.25, 1) == pytest.approx(7 * 0.75)  # one microbatch: only W leaves the bubble
    zb = ParallelConfig(pp=8, schedule="zero-bubble", pipeline_flushes=2)
    assert bubble_fraction(zb, None, 0.25, 48) == pytest.approx(2 * 3.5)  # 24 microbatches per flush


def test_estimate_prices_the_zero_bubble_schedule_with_its_own_weight_gradient_share():
    # the stage's W share is its weight-gradient GEMMs over its compute: below 1/3 once attention and element-wise
    # work join the forward and backward, so the ZB bubble lies between (p-1)/3 and (p-1) microbatch times
    from shardplan.cost.pipeline import zero_bubble_fraction
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    e = {s: estimate(MODELS["llama-3-70b"], HARDWARE["h100-sxm"], tr,
                     ParallelConfig(tp=8, sp=True, pp=4, schedule=s, zero_stage=1), 64) for s in ("1f1b", "zero-bubble")}
    zb = e["zero-bubble"]
    from shardplan.cost.step import step_context
    st = step_context(zb.model, zb.hardware, zb.training, zb.layout).stage
    w = st.wgrad_s / st.total_s
    assert 0.15 < w < 1 / 3
    ratio = zb.bubble_s / e["1f1b"].bubble_s  # same microbatch time under both schedules
    assert ratio == pytest.approx(zero_bubble_fraction(4, w, zb.layout.microbatches) / 3, rel=1e-9)
