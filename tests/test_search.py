"""Search: ranking, pruning that never loses the best layout, explanations."""

from pathlib import Path

import pytest

from shardplan.calibration import load_rows, row_inputs
from shardplan.cost.step import estimate
from shardplan.explain import compare
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.search import balanced_split, parse_fix, search
from shardplan.errors import ConfigError
from shardplan.specs.training import TrainingSpec

H100 = HARDWARE["h100-sxm"]
L8 = MODELS["llama-3-8b"]
from shardplan.calibration import DEFAULT_CSV as CSV  # noqa: E402


def test_never_pipelines_an_8b_model_inside_one_node():
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    res = search(L8, H100, tr, 8, top_k=20)
    assert res.plans and all(e.parallel.pp < 8 for e in res.plans)
    pp8 = estimate(L8, H100, tr, ParallelConfig(pp=8, schedule="zero-bubble"), 8)
    assert pp8.tokens_per_s < res.plans[0].tokens_per_s
    assert all(e.fits for e in res.plans)


def test_exhaustive_search_finds_the_same_best():
    tr = TrainingSpec(seq_len=4096, global_batch_size=32)
    fast = search(L8, H100, tr, 8, top_k=1)
    full = search(L8, H100, tr, 8, top_k=1, exhaustive=True)
    assert fast.plans[0].tokens_per_s == pytest.approx(full.plans[0].tokens_per_s, rel=2e-3)
    assert full.n_layouts > fast.n_layouts


def test_more_devices_never_lower_best_throughput():
    prev = 0.0
    for n in (8, 16, 32, 64):
        tr = TrainingSpec(seq_len=4096, global_batch_size=4 * n)  # same per-device batch
        best = search(L8, H100, tr, n, top_k=1).plans[0].tokens_per_s
        assert best >= prev * 0.999
        prev = best


def test_explanation_names_tp_crossing_nodes():
    # a cluster with a slow scale-out network (12.5 GB/s per GPU): tp=16 spans two 8-GPU nodes
    slow = H100.model_copy(update={"scale_out_bandwidth": 12.5e9, "name": "h100-slow-ib"})
    m = MODELS["llama-3-70b"]
    tr = TrainingSpec(seq_len=4096, global_batch_size=64)
    best = search(m, slow, tr, 64, top_k=1).plans[0]
    tp16 = search(m, slow, tr, 64, top_k=1, fix={"tp": 16, "kv_replication": True}).plans[0]
    text = compare(best, tp16)
    assert "tp=16 crosses the 8-device scale-up domain" in text and "scale-out" in text
    assert any(c.axis == "tp" and c.level == "scale-out" for c in tp16.collectives)


@pytest.mark.parametrize("row_id", ["korthikanti22_175B", "korthikanti22_22B", "tt_a100_llama3_8b_64",
                                    "maxtext_v5p_32b_2xv5p128", "llmfoundry_MPT_7B_H100_8", "bloom_176b"])
def test_search_contains_published_layouts(row_id):
    row = next(r for r in load_rows(CSV) if r["id"] == row_id)
    model, hw, tr, pc, n = row_inputs(row)
    published = estimate(model, hw, tr, pc, n)
    best = search(model, hw, tr, n, top_k=1, fix={"overlap_grad_reduce": pc.overlap_grad_reduce}).plans[0]
    assert best.tokens_per_s >= published.tokens_per_s * (1 - 1e-9)


def test_memory_objective_and_fix():
    tr = TrainingSpec(seq_len=8192, global_batch_size=64)
    res = search(L8, H100, tr, 8, top_k=3, objective="memory")
    assert res.plans[0].memory.total <= res.plans[-1].memory.total
    fixed = search(L8, H100, tr, 8, top_k=5, fix=parse_fix(["tp=2", "sp=true"]))
    assert all(e.parallel.tp == 2 and e.parallel.sp for e in fixed.plans)
    with pytest.raises(ConfigError, match="not a layout field"):
        parse_fix(["tensor=2"])
    with pytest.raises(ConfigError, match="objective"):
        search(L8, H100, tr, 8, objective="speed")


def test_infeasible_layouts_are_reported():
    tr = TrainingSpec(seq_len=8192, global_batch_size=8)
    res = search(MODELS["llama-3-70b"], H100, tr, 8, top_k=3, keep_infeasible=True)
    assert res.infeasible and all(not e.fits for e in res.infeasible)


def test_balanced_split_covers_every_layer():
    assert balanced_split(30, 4) == (7, 8, 8, 7)
    assert sum(balanced_split(126, 32)) == 126


# ---- the restructured search (issue 13): halves cached exactly, bounds below the step, B&B changes nothing


import shardplan.search as S  # noqa: E402
from shardplan.cost.memory import memory_estimate  # noqa: E402
from shardplan.cost.step import serialized_gathers  # noqa: E402
from shardplan.parallel import validate  # noqa: E402
from shardplan.specs.framework import FrameworkProfile  # noqa: E402

#: overheads and overlap slowdown all on: every term the bounds leave out is then > 0
BUSY = FrameworkProfile(name="busy", collective_overhead_s=3e-5, layer_overhead_s=2e-5, microbatch_overhead_s=1e-3,
                        step_overhead_s=0.05, overlap_slowdown=0.3, dp_overlap=0.5)
HALVES_CASES = [  # model, devices, seq_len, batch, search keywords
    ("llama-3-8b", 8, 4096, 32, {}),
    ("llama-3-8b", 8, 4096, 32, {"exhaustive": True, "schedules": ["gpipe", "1f1b", "interleaved", "zero-bubble"]}),
    ("qwen2.5-7b", 16, 4096, 64, {}),  # 28 layers: pp=8 and pp=16 split unevenly
    ("mixtral-8x7b", 16, 4096, 32, {}),
    ("llama-3-70b", 32, 4096, 64, {"fix": {"zero_stage": 3, "dp_shard": 8}}),
    ("llama-3-70b", 32, 4096, 64, {"fix": {"schedule": "interleaved", "sp": True}}),
    ("llama-3-8b", 8, 4096, 8, {"objective": "memory", "fix": {"kv_replication": True}}),
    # nanotron: an allocator base (workspace) in the allocated bytes and a fit limit of 0.84 x HBM
    ("llama-3-8b", 8, 4096, 64, {"framework": "nanotron"}),
    # maxtext: named remat policies searched as 'full:<saved>' options (search.NAMED_REMAT_ORDER)
    ("llama-3-70b", 32, 4096, 64, {"framework": "maxtext"}),
    # maxtext MoE: the saved expert matmul outputs are split over etp, a weight-placement field (etp=1 at tp=2)
    ("mixtral-8x7b", 16, 4096, 32, {"framework": "maxtext"}),
    # torchtitan: cp > 1 only with ZeRO-2/3 (weight_sharding_axes), the token splits validated under ZeRO-3
    ("llama-3-8b", 16, 16384, 16, {"framework": "torchtitan"}),
    # torchtitan MoE: op-SAC keeps the expert AllToAll outputs when ep > 1, so ep (a weight-placement field) is in
    # the activation key (breaker: layouts of 90-100 GiB were ranked as fitting 80 GiB)
    ("qwen3-30b-a3b", 16, 8192, 16, {"framework": "torchtitan"}),
    # hf-fsdp: lazy gradients with one microbatch per step (the larger of two phases), DDP buckets at ZeRO-0 / 1
    ("mistral-7b", 4, 4096, 16, {"framework": "hf-fsdp"}),
    ("mistral-7b", 2, 4096, 4, {"framework": "hf-fsdp"}),
]


def _tried(name, n, seq, batch, kw, framework=None):
    """The evaluator and the feasible candidates of one search, as ``search`` builds them."""
    from shardplan.presets.frameworks import framework_profile
    model, tr = MODELS[name], TrainingSpec(seq_len=seq, global_batch_size=batch)
    if framework is None and "framework" in kw:
        framework = framework_profile(kw["framework"])
    if framework is not None:
        tr = tr.model_copy(update={"framework": framework})
    fix = dict(kw.get("fix", {}))
    prune = not kw.get("exhaustive", False) and kw.get("objective", "throughput") == "throughput"
    space = S.build_space(model, H100, tr, n, fix, None, max(1, seq // 1024), kw.get("schedules"), 16, prune)
    ev = S._Evaluator(model, H100, tr, n, fix)
    res = S.SearchResult(plans=[])
    feasible, _ = S._enumerate(space, ev, res, keep_infeasible=True)
    return ev, res, feasible


@pytest.mark.parametrize("name,n,seq,batch,kw", HALVES_CASES)
def test_validity_and_memory_from_cached_halves_equal_direct_calls(monkeypatch, name, n, seq, batch, kw):
    # every try of the search, checked against validate() and memory_estimate() on the whole layout
    checked = {"tries": 0, "memory": 0}
    probe, memory = S._Trials.probe, S._Evaluator.memory

    def direct(ev, g, mbs, rc, serial=None, probe=False):
        fields = dict(dp=g.dp, tp=g.tp, pp=g.pp, cp=g.cp, ep=g.ep, etp=g.etp, zero_stage=g.zero_stage,
                      dp_shard=g.dp_shard, sp=g.sp, microbatch_size=mbs, schedule=g.schedule,
                      virtual_stages=g.virtual_stages, pp_layers=g.pp_layers, zero3_gather=g.zero3_gather,
                      cp_comm=g.cp_comm,
                      **ev.extra)
        fields.update(S.recompute_fields(rc, ev.extra.get("remat_saved")))  # 'full:<saved>' keeps those outputs
        pc = ParallelConfig(**fields)
        try:
            lay = validate(pc, ev.model, ev.training, ev.n_devices)
        except ConfigError:
            return "invalid"
        if any(getattr(lay.parallel, k) != v for k, v in ev.pinned.items()
               if not (k == "schedule" and lay.parallel.pp == 1)):  # a layout without a pipeline has no schedule
            return "unhonoured"
        total = memory_estimate(ev.model, ev.training, lay, ev.reserve).total
        # a memory-limited schedule (maxtext) gathers one ZeRO-3 unit at a time when two do not fit
        one = serialized_gathers(ev.training, lay)
        if serial or (probe and total > ev.limit and one is not None):
            single = memory_estimate(ev.model, one, lay, ev.reserve).total
            return single if serial else min(total, single)
        return total

    def checked_probe(self, mbs, rc):
        before = self.res.n_invalid
        out = probe(self, mbs, rc)
        ref = direct(self.ev, self.group, mbs, rc, probe=True)
        checked["tries"] += 1
        if isinstance(ref, str):
            assert out is None and self.res.n_invalid - before == (ref == "invalid"), (self.group, mbs, rc, ref)
        else:
            assert bool(out) is (ref <= self.ev.limit), (self.group, mbs, rc)  # SERIAL: fits with one gather buffer
        return out

    def checked_memory(self, trials, split, rc, serial=False):
        out = memory(self, trials, split, rc, serial=serial)
        ref = direct(self, trials.group, split.layout.parallel.microbatch_size, rc, serial=serial)
        assert out == ref  # bit for bit
        checked["memory"] += 1
        return out

    monkeypatch.setattr(S._Trials, "probe", checked_probe)
    monkeypatch.setattr(S._Evaluator, "memory", checked_memory)
    _, res, _ = _tried(name, n, seq, batch, kw)
    assert checked["tries"] >= res.n_layouts + res.n_invalid - 1 > 0  # minus the batch check of degree sets
    assert checked["memory"] >= res.n_layouts  # and once more for each serialized retry


@pytest.mark.parametrize("framework", [None, BUSY])
@pytest.mark.parametrize("name,n,seq,batch,kw", [c for c in HALVES_CASES if c[4].get("objective") != "memory"][:5])
def test_step_time_bounds_are_below_the_estimate(name, n, seq, batch, kw, framework):
    ev, _, feasible = _tried(name, n, seq, batch, kw, framework)
    assert feasible
    for c in feasible[:: max(1, len(feasible) // 150)]:
        e = ev.estimate(c)
        bounds = [ev.compute_bound(c), *ev.comm_bounds(c)]
        assert all(b <= e.step_s for b in bounds), (c.group, c.microbatch_size, c.recompute, bounds, e.step_s)
        assert bounds == sorted(bounds)  # each axis only tightens
        assert c.memory == e.memory.total  # the ranking's memory key is the estimate's
    # the bound is tight where only the optimizer is left out: one device (no dp traffic), no overheads
    ev1, _, one = _tried("llama-3.2-1b", 1, 2048, 8, {})
    for c in one:
        e = ev1.estimate(c)
        assert list(ev1.comm_bounds(c))[-1] == pytest.approx(e.step_s - e.optimizer_s, rel=1e-6)


@pytest.mark.parametrize("name,n,tokens,top_k,objective", [
    ("llama-3-8b", 8, 2**18, 1, "throughput"), ("llama-3-8b", 16, 2**19, 40, "throughput"),
    ("mixtral-8x7b", 16, 2**19, 10, "throughput"), ("llama-3-70b", 32, 2**20, 5, "memory"),
])
def test_branch_and_bound_changes_nothing(monkeypatch, name, n, tokens, top_k, objective):
    tr = TrainingSpec.from_tokens(4096, tokens)

    def run():
        r = search(MODELS[name], H100, tr, n, top_k=top_k, objective=objective, keep_infeasible=True)
        return r, [(e.parallel, e.step_s, e.memory.total) for e in r.plans], [e.parallel for e in r.infeasible]

    fast, plans, infeasible = run()
    monkeypatch.setattr(S, "BRANCH_AND_BOUND", False)
    full, plans_full, infeasible_full = run()
    assert plans == plans_full and infeasible == infeasible_full
    assert (fast.n_layouts, fast.n_invalid, fast.n_equivalent) == (full.n_layouts, full.n_invalid, full.n_equivalent)
    assert fast.n_timed <= full.n_timed


def test_branch_and_bound_times_few_layouts():
    tr = TrainingSpec.from_tokens(8192, 16 * 2**20)
    res = search(MODELS["mixtral-8x7b"], H100, tr, 64, top_k=5)
    assert res.n_timed < 0.01 * res.n_layouts  # 89 of 40,511 when written


#: the megatron profile with every default schedule in its search (it offers 1F1B and interleaved only)
_ALL_SCHEDULES = framework_profile("megatron").model_copy(update={"released_schedules": None})


def test_megatron_search_offers_the_schedules_megatron_runs():
    # Megatron-Core runs 1F1B and interleaved 1F1B; zero-bubble only when asked for (forks implement it)
    tr = TrainingSpec(seq_len=4096, global_batch_size=32)
    assert S.build_space(L8, H100, tr, 8, {}, None, 4, None, 16, True).schedules == ("1f1b", "interleaved")
    assert S.build_space(L8, H100, tr, 8, {}, None, 4, ["zero-bubble"], 16, True).schedules == ("zero-bubble",)
    res = search(L8, H100, tr, 16, top_k=50, fix={"pp": 2})
    assert res.plans and {p.parallel.schedule for p in res.plans} <= {"1f1b", "interleaved"}
    # a profile that releases none of the default schedules: the search offers its released ones
    gp = framework_profile("megatron").model_copy(update={"released_schedules": ("gpipe",)})
    tr_gp = TrainingSpec(seq_len=4096, global_batch_size=32, framework=gp)
    assert S.build_space(L8, H100, tr_gp, 8, {}, None, 4, None, 16, True).schedules == ("gpipe",)
    # every asked-for schedule must be one the framework implements (DeepSpeed: 1F1B only)
    ds = TrainingSpec(seq_len=4096, global_batch_size=32, framework=framework_profile("deepspeed"))
    with pytest.raises(ConfigError, match=r"schedule=interleaved is not implemented by the deepspeed framework; "
                                          r"legal schedule: 1f1b"):
        S.build_space(L8, H100, ds, 8, {}, None, 4, ["1f1b", "interleaved"], 16, True)
    # released schedules lie within the implemented ones
    with pytest.raises(ValueError, match=r"released_schedules=\['interleaved'\] names interleaved"):
        framework_profile("megatron").model_validate(
            {**framework_profile("megatron").model_dump(), "schedules": ("1f1b",), "released_schedules": ("interleaved",)})


def test_dominance_rules():
    # no ZeRO stage dominates another: ZeRO-2 reduce-scatters every microbatch (test_zero2_reduces_every_microbatch),
    # so every stage the profile has is searched
    tr0 = TrainingSpec(seq_len=4096, global_batch_size=32)
    assert S.build_space(L8, H100, tr0, 8, {}, None, 4, None, 16, True).zero_stages == (0, 1, 2, 3)
    # every default schedule offered (the megatron profile's search leaves zero-bubble out: test below)
    tr = TrainingSpec(seq_len=4096, global_batch_size=32, framework=_ALL_SCHEDULES)
    space = S.build_space(L8, H100, tr, 8, {}, None, 4, None, 16, True)
    assert S.schedule_dominated("1f1b", space) and not S.schedule_dominated("zero-bubble", space)
    pinned = S.build_space(L8, H100, tr, 8, {"schedule": "1f1b"}, None, 4, None, 16, True)
    assert not S.schedule_dominated("1f1b", pinned)
    assert "gpipe" not in S.DEFAULT_SCHEDULES and set(S.SCHEDULES) == {"gpipe", "1f1b", "interleaved", "zero-bubble", "dualpipe"}
    # selective recompute saves only what a flash kernel never stores: dominated by none there
    assert space.recomputes == ("none", "full") and S.recompute_dominated("selective", tr, True)
    naive = tr.model_copy(update={"attention": "naive"})
    assert S.build_space(L8, H100, naive, 8, {}, None, 4, None, 16, True).recomputes == S.RECOMPUTE_ORDER
    assert not S.recompute_dominated("selective", tr, False)
    assert S.build_space(L8, H100, tr, 8, {"recompute": "selective"}, None, 4, None, 16, True).recomputes == (
        "selective",)
    # the walks: pipelined stops at the first policy that fits per microbatch size; unpipelined keeps
    # only larger microbatches for stronger policies (fits: mbs <= 2 with none, <= 4 with full)
    fits = {"none": 2, "selective": 2, "full": 4}
    tried = []

    def probe(mbs, rc):
        tried.append((mbs, rc))
        return mbs <= fits[rc]

    S.walk_pipelined([8, 4, 2, 1], S.RECOMPUTE_ORDER, probe, prune=True)
    assert tried == [(8, "none"), (8, "selective"), (8, "full"), (4, "none"), (4, "selective"), (4, "full"),
                     (2, "none"), (1, "none")]
    tried.clear()
    S.walk_unpipelined([8, 4, 2, 1], S.RECOMPUTE_ORDER, probe)
    assert tried == [(8, "none"), (4, "none"), (2, "none"), (8, "selective"), (4, "selective"), (8, "full"),
                     (4, "full")]


def test_candidate_order_is_the_product_order():
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=_ALL_SCHEDULES)
    space = S.build_space(MODELS["mixtral-8x7b"], H100, tr, 16, {}, None, 4, None, 16, True)
    degrees = list(S.degree_candidates(space))
    assert degrees == sorted(degrees, key=lambda d: (d.tp, d.cp, d.pp, d.ep))
    assert all(d.tp * d.cp * d.pp * d.dp == 16 and (d.tp * d.dp * d.cp) % (d.ep * (d.etp or d.tp)) == 0
               for d in degrees)
    # expert tensor parallelism: None (= tp) everywhere, 1 as well where tp > 1 and ep > 1 (ep may then fold tp)
    assert {d.etp for d in degrees} == {None, 1} and all(d.tp > 1 and d.ep > 1 for d in degrees if d.etp == 1)
    assert all((d.dp * d.cp) % d.ep == 0 for d in degrees if d.etp is None)
    d = next(d for d in degrees if d.dp == 4 and d.tp == 2 and d.pp == 2)
    groups = list(S.group_candidates(space, d, None))
    # ZeRO-0, 1, 2 (no shard / gather variants; no stage is pruned: ZeRO-2 reduce-scatters every microbatch), then
    # ZeRO-3 with the node-local shard (8 // (tp cp) = 4 = dp: not a strict sub-group, so none) and both gathers; sp
    # on only (the megatron profile's layout default with tp > 1); ZB-H1 and interleaved(v=2, 4, 8, 16)
    assert {g.sp for g in groups} == {True}
    assert [(g.zero_stage, g.dp_shard, g.zero3_gather) for g in groups[::5]] == [
        (0, None, "per_microbatch"), (1, None, "per_microbatch"), (2, None, "per_microbatch"),
        (3, None, "per_microbatch"), (3, None, "per_step")]
    assert [(g.schedule, g.virtual_stages) for g in groups[:5]] == [
        ("interleaved", 2), ("interleaved", 4), ("interleaved", 8), ("interleaved", 16), ("zero-bubble", 1)]


@pytest.mark.parametrize("name,n,seq,batch,kw", HALVES_CASES)
def test_layout_composed_from_halves_equals_the_validated_one(name, n, seq, batch, kw):
    # the bounds read a layout assembled from the two validated halves without validating it
    # again; it must be the very layout validate() returns for every feasible candidate
    ev, _, feasible = _tried(name, n, seq, batch, kw)
    assert feasible
    for c in feasible:
        assert ev.composed(c) == ev.layout(c), (c.group, c.microbatch_size, c.recompute)


def test_search_interleaves_uneven_splits_with_embedding_and_loss_chunks():
    # Llama 3 405B on 16,384 H100 (Dubey et al. 2024 Table 4): pp = 16 splits 126 layers 7, 8 x 14, 7; the search
    # offers interleaving with the divisors of the heaviest stage up to 8 chunks (the first stage's first chunk
    # holding only the embedding, the last stage's last only the loss): v = 2, 4, 8; a pinned v = 8 is searched,
    # and a pinned v > 1 leaves no unpipelined layout (which has no chunks)
    m, tr = MODELS["llama-3.1-405b"], TrainingSpec(seq_len=8192, global_batch_size=2048)
    res = search(m, H100, tr, 16384, top_k=50, fix={"pp": 16}, schedules=["interleaved"])
    assert {p.parallel.virtual_stages for p in res.plans} <= {2, 4, 8} and res.plans
    pinned = search(m, H100, tr, 16384, top_k=3, fix={"pp": 16, "virtual_stages": 8}, schedules=["interleaved"])
    assert all(p.parallel.virtual_stages == 8 and p.parallel.pp == 16 for p in pinned.plans)
    with pytest.raises(ConfigError):
        search(m, H100, tr, 16384, top_k=1, fix={"pp": 1, "virtual_stages": 8})


def test_a_pinned_schedule_keeps_the_unpipelined_layouts():
    # --fix schedule=X is the same as --schedule X: a layout without a pipeline has no schedule to pin
    tr = TrainingSpec(seq_len=4096, global_batch_size=32)
    a = search(L8, H100, tr, 16, top_k=200, fix={"schedule": "interleaved"})
    b = search(L8, H100, tr, 16, top_k=200, schedules=["interleaved"])
    assert [p.parallel for p in a.plans] == [p.parallel for p in b.plans]
    assert any(p.parallel.pp == 1 for p in a.plans) and {p.parallel.schedule for p in a.plans if p.parallel.pp > 1} \
        <= {"interleaved"}


def test_no_layout_error_names_the_rule_an_asked_schedule_breaks():
    # --schedule 1f1b with --virtual-stages 2: the rule (virtual stages need the interleaved schedule), not "relax --fix"
    tr = TrainingSpec(seq_len=4096, global_batch_size=32)
    with pytest.raises(ConfigError, match=r"virtual_stages=2 needs schedule='interleaved' \(got schedule='1f1b'\)"):
        search(L8, H100, tr, 16, top_k=3, fix={"pp": 4, "virtual_stages": 2}, schedules=["1f1b"])


def test_maxtext_search_walks_the_named_remat_policies_in_order():
    # MaxText's named policies keep nested sets of matmul outputs (minimal = every named dot, then
    # save_dot_except_mlpwi, save_dot_except_mlp, save_qkv_proj, then full keeps none): along that order
    # memory must fall and step time rise, the premise of the walks that stop at the first policy that fits
    from shardplan.inputs import build_inputs
    tr = TrainingSpec(seq_len=4096, global_batch_size=128, framework=framework_profile("maxtext"))
    space = S.build_space(MODELS["llama-2-70b"], H100, tr, 64, {}, None, 4, None, 16, True)
    assert space.recomputes == ("none", "selective", "full:qkv_proj,out_proj,mlpwo", "full:qkv_proj,out_proj",
                                "full:qkv_proj", "full")
    steps, mems = [], []
    for rc in space.recomputes[1:]:
        m, hw, t, pc = build_inputs(model="llama-2-70b", hardware="h100-sxm", devices=64, seq_len=4096,
                                    global_batch=128, global_batch_tokens=None, framework="maxtext", zero_stage=3,
                                    microbatch_size=2,
                                    **S.recompute_fields(rc))
        e = estimate(m, hw, t, pc, 64)
        steps.append(e.step_s)
        mems.append(e.memory.total)
    assert steps == sorted(steps) and mems == sorted(mems, reverse=True)
    assert len(set(steps)) == len(steps) and len(set(mems)) == len(mems)
    # pinned: a given remat_saved or recompute is not searched over
    assert S.build_space(MODELS["llama-2-70b"], H100, tr, 64, {"remat_saved": ("qkv_proj",)}, None, 4, None, 16,
                         True).recomputes == ("none", "selective", "full")
    # the Megatron-LM profile has no named policies
    assert "full:qkv_proj" not in S.build_space(MODELS["llama-2-70b"], H100, TrainingSpec(seq_len=4096,
                                                global_batch_size=128), 64, {}, None, 4, None, 16, True).recomputes


@pytest.mark.parametrize("framework", ["maxtext", "torchtitan", "automodel"])
def test_profiles_that_shard_weights_over_cp_still_search_cp(framework):
    # these profiles refuse cp > 1 below ZeRO-2 (FrameworkProfile.weight_sharding_axes); the search validates a
    # token split under a neutral weight placement, which must not be the ZeRO-0 those profiles refuse with cp
    # (the bug: every cp > 1 split was invalid, so their searches never offered context parallelism)
    fw = framework_profile(framework)
    assert fw.pipeline_zero_stages is None  # S.neutral_weights relies on it
    tr = TrainingSpec(seq_len=32768, global_batch_size=16, framework=fw)
    r = search(MODELS["llama-3-8b"], H100, tr, 16, top_k=200, fix={"cp": 2})
    assert r.plans and all(e.parallel.cp == 2 and e.parallel.zero_stage >= 2 for e in r.plans)


def test_search_reports_progress_over_degree_sets_and_exhaustive_estimates():
    # the callback a progress bar draws: each degree set (done < total, ending below total), then in an exhaustive
    # search every feasible estimate in steps of 1% of them
    calls = []
    res = S.search(MODELS["llama-3-8b"], H100, TrainingSpec(seq_len=4096, global_batch_size=32), 8, top_k=2,
                   exhaustive=True, progress=lambda *a: calls.append(a))
    enum = [c for c in calls if c[2] == "enumerating degree sets"]
    timed = [c for c in calls if c[2] == "estimating every layout that fits"]
    assert enum and [c[0] for c in enum] == list(range(len(enum))) and all(c[1] == len(enum) for c in enum)
    assert timed and timed[0][0] == 0 and all(c[0] < c[1] for c in timed) and res.plans


def test_zero2_reduces_every_microbatch_and_zero1_once():
    # Llama 3 8B on 64 H100, seq 8192, batch 512, mbs 1: 512 / 64 = 8 microbatches. ZeRO-1 reduce-scatters its full
    # gradient buffer once per step; ZeRO-2 keeps only its shard, so under DeepSpeed (which refuses no_sync under
    # ZeRO-2) it reduce-scatters after each of the 8 backwards (8 calls, 8 x the bytes); with one microbatch (batch
    # 64) the two issue the same collectives. Under the megatron profile (zero2_accumulation 'full_buffer': the
    # main_grad buffer) ZeRO-2 reduces once, with ZeRO-1's gradient memory: 8.03e9 x 2 B bf16 grads per device
    from shardplan.cost.step import estimate
    from shardplan.inputs import build_inputs

    def run(zero, batch, framework="deepspeed"):
        m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=64, seq_len=8192,
                                     global_batch=batch, global_batch_tokens=None, zero_stage=zero,
                                     framework=framework, precision="bf16-mixed")
        e = estimate(m, hw, tr, pc, 64)
        c, = [c for c in e.collectives if c.op == "ReduceScatter" and c.tensor == "grads" and c.scope == "dense"]
        return c.count, c.bytes_per_device, e.step_s, e.memory.grads  # bytes_per_device: all calls of the step

    n1, b1, t1, _ = run(1, 512)
    n2, b2, t2, g2 = run(2, 512)
    assert (n1, n2) == (1, 8) and b2 == pytest.approx(8 * b1) and t2 > t1
    assert run(1, 64)[:2] == run(2, 64)[:2]
    # sharded bf16 gradients, and DeepSpeed's two contiguous gradient buckets of 5e8 elements (overlap_comm) in bf16
    assert g2 == pytest.approx(2 * 8_030_261_248 / 64 + 2 * 5e8 * 2, rel=1e-3)
    nm, bm, _, gm = run(2, 512, "megatron")
    assert (nm, bm) == (1, run(1, 512, "megatron")[1]) and gm == pytest.approx(2 * 8_030_261_248, rel=1e-3)


def test_branch_and_bound_with_an_offloaded_optimizer(monkeypatch):
    # an offloaded optimizer's host update (megatron: 1.6e9 parameters/s per host) is tens of seconds the step adds;
    # the bounds now count it (Evaluator.offload_bound): every bound stays below its estimate, the ranking equals the
    # exhaustive one, and far fewer layouts are timed than without it in the bound (the fuzzer's 20 s plan)
    tr = TrainingSpec.from_tokens(4096, 2**19)
    fix = {"offload_optimizer": True}
    fast = search(MODELS["mixtral-8x7b"], H100, tr, 16, top_k=5, fix=fix)
    monkeypatch.setattr(S, "BRANCH_AND_BOUND", False)
    full = search(MODELS["mixtral-8x7b"], H100, tr, 16, top_k=5, fix=fix)
    assert fast.plans and [(e.parallel, e.step_s) for e in fast.plans] == [(e.parallel, e.step_s) for e in full.plans]
    assert all(e.parallel.offload_optimizer and e.optimizer_s > 1.0 for e in fast.plans)
    assert fast.n_timed < 0.2 * full.n_timed


def test_fix_echoes_a_yaml_boolean_word_as_typed_for_a_named_option():
    # a breaker typed --fix recompute=on and was told "recompute=True": YAML reads on/yes as true, but recompute is a
    # policy name, so the word itself is what is refused (and a bool field still reads it as true)
    from shardplan.search import parse_fix
    with pytest.raises(ConfigError, match=r"recompute='on'; legal: 'none', 'selective' or 'full'"):
        parse_fix(["recompute=on"])
    assert parse_fix(["sp=yes"]) == {"sp": True}
