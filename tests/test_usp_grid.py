"""The nanotron profile's terms for the measured H100 grid (issue 9 grid acceptance), with the numbers
derived by hand in the comments. Fast: a handful of estimates, no fit."""

import sys
from pathlib import Path

import pytest

from shardplan.cost.axes import tp as tp_axis
from shardplan.cost.context import step_context
from shardplan.cost.pipeline import message_stall_s, messages_per_microbatch
from shardplan.cost.step import allocator_retry_s, estimate, host_floor_s
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.specs.framework import FrameworkProfile
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import TrainingSpec

ROOT = Path(__file__).resolve().parents[1]
G1B = ModelSpec(name="usp-1b", n_layers=16, d_model=2048, n_heads=32, ffn_dim=8192, vocab_size=131072,
                tied_embeddings=True)
H100 = HARDWARE["h100-sxm"]


def _training(fw: FrameworkProfile, gbs: int = 256) -> TrainingSpec:
    return TrainingSpec(seq_len=4096, global_batch_size=gbs, framework=fw)


def test_nanotron_profile_splits_layers_cost_greedy_and_megatron_balanced():
    # 1B: layer cost 2**26, LM head 2**28 = 4 layers: pp=2 threshold 10 layers, the 11th crosses -> (11, 5);
    # pp=8 leaves the last two ranks with the LM head only (tests/test_memory_terms.py derives it)
    nano = _training(framework_profile("nanotron"))
    assert validate(ParallelConfig(pp=2), G1B, nano, 2).stage_layers == (11, 5)
    lay = validate(ParallelConfig(pp=8), G1B, nano, 8)
    assert lay.stage_layers == (3, 3, 2, 3, 2, 3, 0, 0)
    assert any("cost-greedy" in n for n in lay.notes)
    mega = _training(framework_profile("megatron"))
    assert validate(ParallelConfig(pp=2), G1B, mega, 2).stage_layers == (8, 8)
    with pytest.raises(ConfigError, match="interleaved"):
        validate(ParallelConfig(pp=2, schedule="interleaved", virtual_stages=2), G1B, nano, 2)


def test_nanotron_needs_pp_minus_1_microbatches():
    # pp=8, dp=1, mbs=64, batch 256: m = 4 < 7 -> refused (nanotron engine.py asserts m >= pp - 1);
    # legal mbs: m = 256 / mbs >= 7 -> mbs in 1, 2, 4, 8, 16, 32
    nano = _training(framework_profile("nanotron"))
    with pytest.raises(ConfigError, match="pp - 1") as e:
        validate(ParallelConfig(pp=8, microbatch_size=64), G1B, nano, 8)
    assert e.value.legal == [1, 2, 4, 8, 16, 32]
    # megatron: legal, with a note
    assert validate(ParallelConfig(pp=8, microbatch_size=64), G1B, _training(FrameworkProfile()), 8).microbatches == 4


def test_host_seconds_per_layer_with_and_without_pipeline():
    fw = FrameworkProfile(name="t", layer_host_s=4e-3, pp_tp_host_step_s=3e-4)
    tr = _training(fw)
    # tp=8 with SP, pp=2: 10 collectives per layer x 7 ring steps x 0.3 ms = 21 ms, + 4 ms = 25 ms
    ctx = step_context(G1B, H100, tr, validate(ParallelConfig(tp=8, sp=True, pp=2), G1B, tr, 16))
    assert tp_axis.host_seconds_per_layer(ctx) == pytest.approx(0.025)
    # the floor of the busiest stage: 16 layers over pp=2 balanced -> 8 layers x 25 ms = 0.2 s
    assert host_floor_s(ctx) == pytest.approx(0.2)
    # no pipeline: only the layer's own host time, 16 x 4 ms = 64 ms
    ctx1 = step_context(G1B, H100, tr, validate(ParallelConfig(tp=8, sp=True), G1B, tr, 8))
    assert tp_axis.host_seconds_per_layer(ctx1) == pytest.approx(4e-3)
    assert host_floor_s(ctx1) == pytest.approx(0.064)


def test_host_floor_sets_the_microbatch_time_when_the_gpu_is_faster():
    # 1B, tp=8 SP, dp=1, mbs=1, batch 8 -> m = 8. GPU time per microbatch is ~20 ms; a 10 ms per layer host
    # time makes every microbatch 16 x 10 ms = 0.16 s: step = 8 x 0.16 s + optimizer
    fw = FrameworkProfile(name="t", layer_host_s=0.01)
    e = estimate(G1B, H100, _training(fw, gbs=8), ParallelConfig(tp=8, sp=True), 8)
    assert e.step_s == pytest.approx(8 * 0.16 + e.optimizer_s)
    base = estimate(G1B, H100, _training(FrameworkProfile(), gbs=8), ParallelConfig(tp=8, sp=True), 8)
    assert base.step_s < 0.5 * e.step_s  # the default profile has no host floor
    # the floor is what binds: faster matmuls would not shorten this step, so the bound names the host
    from shardplan.cost.step import HOST_FLOOR_BOUND
    assert e.bound == HOST_FLOOR_BOUND and base.bound != HOST_FLOOR_BOUND


def test_pipeline_message_stall_counts_the_busiest_stage_messages():
    # 0.25 s per message from 32 nodes on. 1B (16 layers), tp=8 SP, batch 64:
    # pp=4 on 512 GPUs (64 nodes): dp=16, mbs=1 -> m = 64 / 16 = 4; an inner stage sends/receives
    # 4 messages per microbatch: (4 x 4 + 2 x (4 - 1)) x 0.25 = 22 x 0.25 = 5.5 s
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32)
    tr = _training(fw, gbs=64)
    lay = validate(ParallelConfig(tp=8, sp=True, pp=4), G1B, tr, 512)
    assert lay.microbatches == 4 and messages_per_microbatch(lay.parallel) == 4
    assert message_stall_s(lay, fw, 64) == pytest.approx(5.5)
    # pp=2: dp=32, m=2; each stage has one neighbour, 2 messages: (2 x 2 + 2 x 1) x 0.25 = 1.5 s
    lay2 = validate(ParallelConfig(tp=8, sp=True, pp=2), G1B, tr, 512)
    assert lay2.microbatches == 2 and message_stall_s(lay2, fw, 64) == pytest.approx(1.5)
    # below 32 nodes, without pp, and in the default profile: nothing
    assert message_stall_s(lay, fw, 16) == 0.0
    assert message_stall_s(validate(ParallelConfig(tp=8, sp=True), G1B, tr, 512), fw, 64) == 0.0
    assert message_stall_s(lay, FrameworkProfile(), 64) == 0.0
    # estimate adds it to the step: same layout with and without the stall differ by 5.5 s
    e1 = estimate(G1B, H100, tr, ParallelConfig(tp=8, sp=True, pp=4), 512)
    e0 = estimate(G1B, H100, _training(FrameworkProfile(name="t"), gbs=64), ParallelConfig(tp=8, sp=True, pp=4), 512)
    assert e1.step_s - e0.step_s == pytest.approx(5.5)


def test_pipeline_message_stall_from_a_wide_tp_group():
    # the same stall below 32 nodes when the tp group spans >= 4 nodes: 1B, tp=32 SP, pp=2 on 128 GPUs
    # (16 nodes): dp=2, batch 64, mbs=1 -> m = 32; (32 x 2 + 2 x 1) x 0.25 = 66 x 0.25 = 16.5 s
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32, pp_stall_min_tp_nodes=4)
    tr = _training(fw, gbs=64)
    lay = validate(ParallelConfig(tp=32, sp=True, pp=2), G1B, tr, 128)
    assert lay.microbatches == 32 and message_stall_s(lay, fw, 16, tp_nodes=4) == pytest.approx(16.5)
    # a tp group over 2 nodes stays below the span: no stall on 16 nodes
    assert message_stall_s(lay, fw, 16, tp_nodes=2) == 0.0
    # estimate derives the span from tp / scale_up_size (32 / 8 = 4 nodes)
    e1 = estimate(G1B, H100, tr, ParallelConfig(tp=32, sp=True, pp=2), 128)
    e0 = estimate(G1B, H100, _training(fw.model_copy(update={"pp_stall_min_tp_nodes": None}), gbs=64),
                  ParallelConfig(tp=32, sp=True, pp=2), 128)
    assert e1.step_s - e0.step_s == pytest.approx(16.5)


def test_zero0_pipelines_stall_by_microbatch_count_not_node_count():
    # ZeRO-0 with dp > 1 has its own trigger: >= 16 microbatches on >= 4 nodes. 1B, tp=8 SP, pp=2,
    # 0.25 s per message, two messages per microbatch on a two-stage pipeline:
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32,
                          pp_stall_zero0_min_microbatches=16, pp_stall_zero0_min_nodes=4)
    # 64 GPUs = 8 nodes, dp=4, batch 64, mbs=1 -> m = 16: (16 x 2 + 2 x 1) x 0.25 = 34 x 0.25 = 8.5 s
    tr = _training(fw, gbs=64)
    lay = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=0), G1B, tr, 64)
    assert lay.parallel.dp == 4 and lay.microbatches == 16
    assert message_stall_s(lay, fw, 8) == pytest.approx(8.5)
    # the same layout on 2 nodes (below 4) or with ZeRO-1 on 8 nodes (below 32): no stall
    assert message_stall_s(lay, fw, 2) == 0.0
    lay1 = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1), G1B, tr, 64)
    assert message_stall_s(lay1, fw, 8) == 0.0
    # 256 GPUs = 32 nodes, dp=16, batch 64 -> m = 4 < 16: ZeRO-0 does not stall even at 32 nodes,
    # ZeRO-1 does: (4 x 2 + 2) x 0.25 = 2.5 s
    big0 = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=0), G1B, tr, 256)
    big1 = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1), G1B, tr, 256)
    assert big0.microbatches == 4 and message_stall_s(big0, fw, 32) == 0.0
    assert message_stall_s(big1, fw, 32) == pytest.approx(2.5)
    # dp = 1 (no DDP) follows the node-count rule; without the rule ZeRO-0 does too
    solo = validate(ParallelConfig(tp=8, sp=True, pp=4, zero_stage=0), G1B, tr, 32)
    assert solo.parallel.dp == 1 and message_stall_s(solo, fw, 4) == 0.0
    off = fw.model_copy(update={"pp_stall_zero0_min_microbatches": None})
    assert message_stall_s(big0, off, 32) == pytest.approx(2.5) and message_stall_s(lay, off, 8) == 0.0


def test_partial_node_trigger_needs_large_dp_or_message():
    # nodes >= 32 stall only with dp >= 32 or a boundary message >= 64 MiB below 64 nodes. 1B (h=2048),
    # seq 4096, bf16: b=1 -> 1 x 4096 x 2048 x 2 B = 16 MiB; b=4 -> 64 MiB = 67,108,864 B.
    from shardplan.cost.pipeline import boundary_message_bytes, stall_rule
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32, pp_stall_all_nodes=64,
                          pp_stall_min_dp=32, pp_stall_min_message_bytes=2.0**26)
    tr = _training(fw, gbs=256)
    # 256 GPUs (32 nodes), tp=8 pp=2 -> dp=16, mbs=1: m = 256 / 16 = 16, 16 MiB, dp < 32: no stall
    small = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1), G1B, tr, 256)
    msg = boundary_message_bytes(small, G1B.d_model, 2)
    assert small.parallel.dp == 16 and msg == 16 * 2**20
    assert stall_rule(small, fw, 32, 1, msg) is None and message_stall_s(small, fw, 32, 1, msg) == 0.0
    # the same at 64 nodes (the whole trigger): (16 x 2 + 2) x 0.25 = 8.5 s
    assert message_stall_s(small, fw, 64, 1, msg) == pytest.approx(8.5)
    # mbs=4: 64 MiB, m = 256 / (16 x 4) = 4 -> (4 x 2 + 2) x 0.25 = 2.5 s at 32 nodes
    big = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1, microbatch_size=4), G1B, tr, 256)
    big_msg = boundary_message_bytes(big, G1B.d_model, 2)
    assert big_msg == 67_108_864 and message_stall_s(big, fw, 32, 1, big_msg) == pytest.approx(2.5)
    # tp=4 pp=2 -> dp=32, mbs=1: m = 8 -> (8 x 2 + 2) x 0.25 = 4.5 s at 32 nodes despite the 16 MiB message
    wide = validate(ParallelConfig(tp=4, sp=True, pp=2, zero_stage=1), G1B, tr, 256)
    assert wide.parallel.dp == 32 and stall_rule(wide, fw, 32, 1, msg) == "nodes"
    assert message_stall_s(wide, fw, 32, 1, msg) == pytest.approx(4.5)


def test_message_trigger_needs_the_profiles_sequences_per_microbatch():
    # pp_stall_min_sequences=2: a 64 MiB message of one sequence does not stall, of two does (the playbook's 80B runs
    # at 32 nodes). 8B grid model (h=4096), seq 4096, bf16: b=1 -> 32 MiB; with h=8192 one sequence is 64 MiB, here
    # emulated by the message bytes passed in. 256 GPUs, tp=8 pp=2 -> dp=16, mbs=1: m = 16 -> no stall below 2 sequences
    from shardplan.cost.pipeline import stall_rule
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32, pp_stall_all_nodes=64,
                          pp_stall_min_dp=32, pp_stall_min_message_bytes=2.0**26, pp_stall_min_sequences=2)
    tr = _training(fw, gbs=256)
    one = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1), G1B, tr, 256)
    two = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1, microbatch_size=2), G1B, tr, 256)
    assert stall_rule(one, fw, 32, 1, 2.0**26) is None
    # mbs=2: m = 256 / 32 = 8 -> (8 x 2 + 2) x 0.25 = 4.5 s
    assert stall_rule(two, fw, 32, 1, 2.0**26) == "nodes" and message_stall_s(two, fw, 32, 1, 2.0**26) == pytest.approx(4.5)
    # without the setting any 64 MiB message stalls, as before
    assert stall_rule(one, fw.model_copy(update={"pp_stall_min_sequences": None}), 32, 1, 2.0**26) == "nodes"
    # the campaign profile (nanotron-usp) carries it, with its source
    from shardplan.presets.frameworks import framework_profile
    nano = framework_profile("nanotron-usp")
    assert nano.pp_stall_min_sequences == 2 and "80B" in nano.sources["pp_stall_min_sequences"]


def test_partial_node_trigger_fields_are_checked():
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    with pytest.raises(ValidationError) as info:
        FrameworkProfile(name="t", pp_stall_min_dp=32)
    err = config_error(info.value)
    assert err.field == "pp_stall_min_dp" and "pp_stall_all_nodes" in str(err)
    with pytest.raises(ValidationError) as info:
        FrameworkProfile(name="t", pp_stall_min_nodes=32, pp_stall_all_nodes=32)
    err = config_error(info.value)
    assert err.field == "pp_stall_all_nodes" and "33 or more" in str(err)


def test_allocator_retry_ramps_near_full_hbm():
    # start 0.85, 1 s: pressure 0.94 -> (0.94 - 0.85) / 0.15 = 0.6 s; 0.80 -> 0; 1.2 -> capped at 1 s
    fw = FrameworkProfile(name="t", allocator_retry_s=1.0, allocator_pressure_start=0.85)
    assert allocator_retry_s(fw, 0.94) == pytest.approx(0.6)
    assert allocator_retry_s(fw, 0.80) == 0.0 and allocator_retry_s(fw, 1.2) == pytest.approx(1.0)
    assert allocator_retry_s(FrameworkProfile(), 0.99) == 0.0  # Megatron default: no such term


def test_doc_section_is_replaced_between_markers(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid

    doc = tmp_path / "accuracy.md"
    doc.write_text("# Accuracy\n\nkeep me\n")
    usp_grid.write_doc_section(doc, "first")
    usp_grid.write_doc_section(doc, "second")
    text = doc.read_text()
    assert text.startswith("# Accuracy\n\nkeep me\n") and "second" in text and "first" not in text
    assert text.count(usp_grid.DOC_BEGIN) == 1


def test_grid_rows_round_trip_as_run_records(tmp_path):
    # two grid rows through the generic CSV import (shardplan/data/usp_grid_map.yaml): 1B, 1 node
    # -> 8 devices, dp=8 x mbs=1 x grad_acc=32 -> 256 sequences; 39,006 tok/s/GPU; 24.2 GB ->
    # 2.42e10 B; a row of nan is a run that did not finish
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid
    from shardplan.records import read_records, write_records

    csv_text = ("model,nodes,dp,tp,pp,zero,mbs,grad_acc,gbs,mfu_pct,tok_s_gpu,tok_s,gpu_mem_gb\n"
                "1B,1,8,1,1,1,1,32,256,38.1,39006,312045,24.2\n"
                "8B,1,1,8,1,0,256,1,256,nan,nan,nan,nan\n")
    (tmp_path / "g.csv").write_text(csv_text)
    recs = usp_grid.to_records(tmp_path / "g.csv", "usp-h100-efa")
    assert write_records(tmp_path / "r.jsonl", recs) == 2
    back = read_records(tmp_path / "r.jsonl")
    assert back == recs
    assert back[0].status == "ok" and back[0].measured_tokens_per_s_per_device() == 39006
    assert back[0].devices == 8 and back[0].global_batch_size == 256 and back[0].parallel.zero_stage == 1
    assert back[0].peak_memory_bytes == pytest.approx(2.42e10) and back[0].parallel.dp == 8
    assert not back[0].parallel.sp and back[1].parallel.sp and back[1].parallel.tp_overlap  # sp only with tp > 1
    assert back[0].model == usp_grid.GRID_MODELS["1B"] and back[0].framework == "nanotron-usp"
    assert back[1].status == "failed" and back[1].tokens_per_s_per_device is None
    # the benchmark's view of the same rows (load_grid reads through the import): model key, nodes
    # = 8 devices / 8, the 8B row's dp x mbs x grad_acc = 1 x 256 x 1 = 256 sequences, no throughput
    runs = usp_grid.load_grid(tmp_path / "g.csv")
    assert [(r.model, r.nodes, r.global_batch_size, r.ran) for r in runs] == [("1B", 1, 256, True), ("8B", 1, 256, False)]
    assert runs[0].tok_s_gpu == 39006 and runs[0].mem_bytes == pytest.approx(2.42e10) and runs[1].parallel.tp == 8



def test_grid_map_reads_other_model_sizes_by_either_label(tmp_path):
    # the playbook's other sizes, by size class (3B, 70B) or by MHA parameter count (3.57B, 80B):
    # 80B = 80 x (4 x 8192^2 + 3 x 8192 x 28672) + 2 x 131072 x 8192 (untied) + (2 x 80 + 1) x 8192 (norms)
    #     = 77,846,282,240 + 2,147,483,648 + 1,318,912 = 79,995,084,800
    # 3.57B = 28 x (4 x 3072^2 + 3 x 3072 x 8192) + 131072 x 3072 (tied) + (2 x 28 + 1) x 3072
    #       = 3,170,893,824 + 402,653,184 + 175,104 = 3,573,722,112
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid

    csv_text = ("model,nodes,dp,tp,pp,zero,mbs,grad_acc,gbs,mfu_pct,tok_s_gpu,tok_s,gpu_mem_gb\n"
                "80B,8,1,16,4,0,1,256,256,20.0,300,19200,60.1\n"
                "70B,8,1,16,4,0,1,256,256,nan,nan,nan,nan\n"
                "3.57B,1,8,1,1,1,1,32,256,40.0,15000,120000,40.2\n"
                "3B,1,8,1,1,1,1,32,256,nan,nan,nan,nan\n")
    (tmp_path / "g.csv").write_text(csv_text)
    runs = usp_grid.load_grid(tmp_path / "g.csv")
    assert [r.model for r in runs] == ["80B", "70B", "3.57B", "3B"]  # the CSV's own labels are kept
    assert usp_grid.GRID_MODELS["80B"].n_params == usp_grid.GRID_MODELS["70B"].n_params == 79_995_084_800
    assert usp_grid.GRID_MODELS["3.57B"].n_params == usp_grid.GRID_MODELS["3B"].n_params == 3_573_722_112
    # and they are priced: 80B on 64 GPUs at tp=16 pp=4 is a valid nanotron layout
    hw = usp_grid.load_hardware(str(usp_grid.DEFAULT_HW))
    e = usp_grid.predict(runs[0], hw, framework_profile("nanotron"))
    assert not isinstance(e, str) and e.layout.n_devices == 64

def test_nanotron_schedules_are_gpipe_and_1f1b():
    # nanotron's engines: AllForwardAllBackward (gpipe) and OneForwardOneBackward (1f1b); zero-bubble is refused
    nano = _training(framework_profile("nanotron"))
    with pytest.raises(ConfigError, match="schedule") as e:
        validate(ParallelConfig(pp=2, schedule="zero-bubble"), G1B, nano, 2)
    assert e.value.legal == ["gpipe", "1f1b"]
    assert validate(ParallelConfig(pp=2, schedule="gpipe"), G1B, nano, 2).stage_layers == (11, 5)
    # megatron default: every schedule
    mega = _training(FrameworkProfile())
    assert validate(ParallelConfig(pp=2, schedule="zero-bubble"), G1B, mega, 2).microbatches == 256


def test_pick_report_scores_the_predicted_fastest_layout_of_each_group():
    # two 1B runs on 1 node: the planner ranks dp=8 mbs=2 above dp=8 mbs=1 (same layout, larger microbatch);
    # measured 30,000 and 40,000 tok/s/GPU: the pick reaches 30,000 / 40,000 = 75% of the best, top 3: 100%
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid as g
    hw, prof = g.load_hardware(str(g.DEFAULT_HW)), framework_profile("nanotron")
    runs = [g.GridRun("1B", 1, ParallelConfig(dp=8, microbatch_size=mbs, zero_stage=1), 256, tps, 3e10)
            for mbs, tps in ((2, 30000.0), (1, 40000.0))]
    preds = [g.predict(r, hw, prof) for r in runs]
    assert preds[0].tokens_per_s > preds[1].tokens_per_s
    assert "| 1B | 1 | 75% | 100% |" in g.pick_report(runs, preds)


def test_stall_stump_picks_the_threshold_with_fewest_misclassified_runs():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid

    # stalled iff value >= t: t=4 misclassifies only (8, False) -> 1; t=8 misses (4, True) too -> 2;
    # t=1 or t=2 wrongly stall the two small ones -> 3 / 2; no stall at all misses both True -> 2
    pts = [(1, False), (2, False), (4, True), (8, True), (8, False)]
    assert usp_grid._stump(pts) == 4
    # t=2 misclassifies (3, False), no rule misclassifies (2, True): a tie keeps "no stall"
    assert usp_grid._stump([(1, False), (2, True), (3, False)]) is None


def test_estimate_reports_the_stall_and_the_cli_names_its_rule():
    from shardplan.cli.estimate import stall_note

    # the hand example above: 1B, tp=8 SP, pp=2, ZeRO-0, 64 GPUs (8 nodes), batch 64 -> m = 16 and
    # (16 x 2 + 2) x 0.25 = 8.5 s, reported as its own time and in the JSON
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32,
                          pp_stall_zero0_min_microbatches=16, pp_stall_zero0_min_nodes=4)
    e = estimate(G1B, H100, _training(fw, gbs=64), ParallelConfig(tp=8, sp=True, pp=2, zero_stage=0), 64)
    assert e.stall_s == pytest.approx(8.5) and e.to_dict()["time_s"]["pipeline_stall"] == pytest.approx(8.5)
    assert e.overhead_s >= e.stall_s
    note = stall_note(e)
    assert note is not None and "ZeRO-0" in note and "zero_stage 1" in note and "250.00 ms" in note
    # ZeRO-1 on 8 nodes: no stall, no note
    e1 = estimate(G1B, H100, _training(fw, gbs=64), ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1), 64)
    assert e1.stall_s == 0.0 and stall_note(e1) is None
    assert e.stall_rule == "zero0" and e1.stall_rule is None
    # 512 GPUs = 64 nodes, batch 512 -> dp=64, m = 8 ... with batch 1024, m = 16: ZeRO-0 stalls by its own
    # rule, but ZeRO-1 would stall too (64 >= 32 nodes), so the note does not offer zero_stage 1
    e64 = estimate(G1B, H100, _training(fw, gbs=1024), ParallelConfig(tp=8, sp=True, pp=2, zero_stage=0), 512)
    assert e64.stall_rule == "zero0" and "zero_stage 1" not in (stall_note(e64) or "zero_stage 1")
    # a tp group over 4 nodes names the tp-span trigger, whatever the ZeRO stage
    fw_tp = fw.model_copy(update={"pp_stall_min_tp_nodes": 4})
    etp = estimate(G1B, H100, _training(fw_tp, gbs=64), ParallelConfig(tp=32, sp=True, pp=2, zero_stage=0), 128)
    assert etp.stall_rule == "tp_span" and "tp group spans 4 nodes" in stall_note(etp)
    assert "a tp group within 3 nodes" in stall_note(etp)


def test_stall_note_names_the_partial_condition_this_layout_meets():
    from shardplan.cli.estimate import stall_note

    # 1B on 256 GPUs (32 nodes), tp=8 pp=2 -> dp=16 < 32; mbs=4: message 4 x 4096 x 2048 x 2 B = 64 MiB, which meets
    # the 64 MiB threshold; on 512 GPUs (64 nodes) every pipeline stalls, whatever dp and message
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32, pp_stall_all_nodes=64,
                          pp_stall_min_dp=32, pp_stall_min_message_bytes=2.0**26)
    pc = ParallelConfig(tp=8, sp=True, pp=2, zero_stage=1, microbatch_size=4)
    note = stall_note(estimate(G1B, H100, _training(fw, gbs=256), pc, 256))
    assert "its microbatch message 64 MiB >= 64 MiB" in note and "dp=" not in note and "this job: 32 nodes" in note
    note64 = stall_note(estimate(G1B, H100, _training(fw, gbs=512), pc, 512))
    assert "every pipeline stalls on jobs of 64 nodes or more" in note64


def test_zero0_stall_node_threshold_alone_is_refused():
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    with pytest.raises(ValidationError) as info:
        FrameworkProfile(name="t", pp_stall_zero0_min_nodes=8)
    err = config_error(info.value)  # what every input path prints: the validator's own one-line message
    assert err.field == "pp_stall_zero0_min_nodes" and "has no effect" in str(err) and "set both" in str(err)
    assert FrameworkProfile(name="t", pp_stall_zero0_min_nodes=8, pp_stall_zero0_min_microbatches=16)


def test_estimate_splits_the_framework_overhead_into_its_named_terms():
    # the nanotron profile on the 8B ZeRO-0 pp=4 layout at 96% of HBM: overhead = stall + host floor + allocator
    # retries (no per-microbatch or per-step constant in that profile), each reported per step in the JSON. The
    # profile predicts such a layout to fail (usable_hbm_fraction 0.84); with the whole HBM usable it fits and the
    # note names the retries
    from shardplan.cli.estimate import allocator_note
    from shardplan.presets.models import MODELS
    fw = framework_profile("nanotron").model_copy(update={"usable_hbm_fraction": 1.0})
    assert not estimate(MODELS["llama-3-8b"], H100, _training(framework_profile("nanotron")),
                        ParallelConfig(pp=4, zero_stage=0), 64).fits
    e = estimate(MODELS["llama-3-8b"], H100, _training(fw), ParallelConfig(pp=4, zero_stage=0), 64)
    m, pressure = e.layout.microbatches, e.memory.total / H100.hbm_bytes
    assert e.allocator_retry_s == pytest.approx(m * allocator_retry_s(fw, pressure)) and e.allocator_retry_s > 0
    assert e.overhead_s == pytest.approx(e.stall_s + e.host_floor_s + e.allocator_retry_s
                                         + m * (fw.microbatch_overhead_s) + fw.step_overhead_s)
    t = e.to_dict()["time_s"]
    assert t["allocator_retry"] == e.allocator_retry_s and t["host_issue_floor"] == e.host_floor_s
    assert "allocator retries" in allocator_note(e)


def test_stall_partial_recovers_a_planted_rule(monkeypatch):
    # planted: from 32 nodes, stall iff dp >= 32 or message >= 64 MiB; from 64 nodes always; never below 32.
    # 10 copies of each kind, so the rule beats the whole trigger at 32 nodes (which misses the 2 x 10
    # non-stalling 32-node kinds) by 20 runs > MIN_STALL_GAIN = 5
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from types import SimpleNamespace

    import usp_grid as g
    mib = 2**20
    kinds = [(16, 32, 64 * mib, False), (32, 32, 16 * mib, True), (32, 16, 64 * mib, True),
             (32, 16, 32 * mib, False), (32, 8, 16 * mib, False), (64, 8, 16 * mib, True), (64, 16, 32 * mib, True)]
    rows = [(g.GridRun("8B", nodes, ParallelConfig(dp=dp, pp=2, zero_stage=1), 256, 1.0, 1.0),
             SimpleNamespace(msg=msg), s) for nodes, dp, msg, s in kinds for _ in range(10)]
    monkeypatch.setattr(g, "_labelled", lambda runs, hw, profile, keep: [x for x in rows if keep(x[0])])
    monkeypatch.setattr(g, "_message_bytes", lambda e: e.msg)
    prof = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32)
    assert g.stall_partial([], H100, prof) == (32, 64, 32, 64 * mib)
    # without the 32-node kinds that do not stall, the whole trigger from 32 nodes stays
    rows[:] = [x for x in rows if not (x[0].nodes == 32 and not x[2])]
    assert g.stall_partial([], H100, prof) == (32, None, None, None)


def test_grid_script_refuses_fit_options_without_fit_and_unwritable_paths(tmp_path):
    # checked before any work: exit 2 with the option named, not a traceback after the 5 s run
    import argparse
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid

    def args(**kw):
        base = dict(fit=False, by_nodes=False, profile_out=None, hardware_out=None, out=None, doc=None, to_records=None)
        return argparse.Namespace(**{**base, **kw})

    with pytest.raises(ConfigError, match="--profile-out needs --fit"):
        usp_grid.check_arguments(args(profile_out=tmp_path / "p.yaml"))
    with pytest.raises(ConfigError, match="--by-nodes needs --fit"):
        usp_grid.check_arguments(args(by_nodes=True))
    with pytest.raises(ConfigError, match="is a folder"):
        usp_grid.check_arguments(args(out=tmp_path))
    with pytest.raises(ConfigError, match="does not exist"):
        usp_grid.check_arguments(args(doc=tmp_path / "missing" / "a.md"))
    usp_grid.check_arguments(args(fit=True, by_nodes=True, profile_out=tmp_path / "p.yaml"))  # fine


def test_nanotron_gathers_updated_parameters_in_one_blocking_call():
    # nanotron optim/zero.py: ZeroDistributedOptimizer.step -> _all_gather_params, a synchronous
    # all_gather_coalesced after the update: the ZeRO-1 AllGather is exposed whole (exposed = time),
    # where a profile that overlaps it (Megatron-LM --overlap-param-gather) hides all but the last
    # bucket behind the forward. The gradient ReduceScatter is overlapped in both.
    nano = framework_profile("nanotron").model_copy(update={"overlap_slowdown": 0.0, "tp_overlap_slowdown": 0.0})
    hidden = nano.model_copy(update={"param_gather_overlap": True})
    par = ParallelConfig(dp=16, zero_stage=1, microbatch_size=1)
    ags = {}
    for name, fw in (("blocking", nano), ("overlapped", hidden)):
        e = estimate(G1B, H100, _training(fw), par, 16)
        ag = [c for c in e.collectives if c.axis == "dp" and c.op == "AllGather"]
        rs = [c for c in e.collectives if c.axis == "dp" and c.op == "ReduceScatter"]
        assert len(ag) == 1 and len(rs) == 1 and rs[0].exposed_s < rs[0].time_s
        ags[name] = ag[0]
    assert ags["blocking"].overlap == "exposed" and ags["blocking"].exposed_s == ags["blocking"].time_s
    assert ags["overlapped"].time_s == ags["blocking"].time_s and ags["overlapped"].exposed_s < ags["overlapped"].time_s


def test_grid_script_scores_tiny_csvs_and_refuses_what_it_cannot_score(tmp_path):
    # one run: scored (3.8%-style figures), ranking 'n/a' (no group of 3); no run that ran: exit 2, one line;
    # a fit on 5 runs that ran: exit 2 naming the 8 constants it cannot identify (2 x 8 = 16 runs needed)
    import subprocess
    head = "model,nodes,dp,tp,pp,zero,mbs,grad_acc,gbs,mfu_pct,tok_s_gpu,tok_s,gpu_mem_gb\n"
    row = "1B,1,8,1,1,0,2,16,256,39.2,40150,321200,50.2\n"
    script = [sys.executable, str(ROOT / "benchmarks" / "usp_grid.py")]

    def run(text: str, *extra: str) -> subprocess.CompletedProcess:
        (tmp_path / "g.csv").write_text(head + text)
        return subprocess.run([*script, "--csv", str(tmp_path / "g.csv"), *extra], capture_output=True, text=True,
                              cwd=ROOT)
    r = run(row)
    assert r.returncode == 0 and "Traceback" not in r.stderr and "min n/a, median n/a" in r.stdout
    r = run(row.replace("40150", "nan").replace("50.2", "nan"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "nothing to score" in r.stderr
    r = run(row * 5, "--fit")
    assert r.returncode == 2 and "5 runs that ran cannot identify the 8 fitted constants" in r.stderr


def test_nanotron_layout_defaults_apply_where_not_given():
    # the grid's runs use TP with sequence parallelism and asynchronous TP communication: the nanotron profile
    # applies sp / tp_overlap where tp > 1 and the flags are not given; a flag given wins; tp = 1 keeps sp off
    from shardplan.inputs import build_inputs
    kw = dict(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=16,
              global_batch_tokens=None, framework="nanotron")
    assert build_inputs(**kw, tp=8).parallel.sp and build_inputs(**kw, tp=8).parallel.tp_overlap
    pc = build_inputs(**kw, tp=8, sp=False).parallel  # nanotron's asynchronous TP runs only with sp: both off
    assert not pc.sp and not pc.tp_overlap
    pc = build_inputs(**{**kw, "seq_len": 4098}, tp=4).parallel  # 4098 does not split over tp=4: sp stays off
    assert not pc.sp and not pc.tp_overlap
    pc = build_inputs(**kw).parallel  # tp = 1
    assert not pc.sp and not pc.tp_overlap
    # megatron: sp only (Megatron-Bridge recipes); megatron-legacy (2021-2023 Megatron-LM): no defaults
    pc = build_inputs(**{**kw, "framework": "megatron"}, tp=8).parallel
    assert pc.sp and not pc.tp_overlap
    assert not build_inputs(**{**kw, "framework": "megatron-legacy"}, tp=8).parallel.sp


def test_plan_takes_a_pinned_tp_overlap():
    # plan --tp-overlap used to find no valid layout (the flag was not passed to the searched layouts)
    from typer.testing import CliRunner
    from shardplan.cli import app
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "16",
                                 "--tp", "2", "--tp-overlap", "--top", "1", "--json"])
    assert r.exit_code == 0, r.output
    import json
    assert json.loads(r.stdout)["plans"][0]["parallel"]["tp_overlap"] is True


def test_zero0_trigger_holds_below_its_node_bound():
    # pp_stall_zero0_max_nodes=32: a ZeRO-0 pipeline with dp > 1 and 16+ microbatches stalls on 4-31 nodes, not on
    # 32 (dp < 32, so the partial node trigger does not take it either), and on 64 like every pipeline.
    # 1B, 256 GPUs, tp=8 pp=2 -> dp=16, mbs=1: m = 256 / 16 = 16; message 16 MiB
    from shardplan.cost.pipeline import stall_rule
    fw = FrameworkProfile(name="t", pp_message_stall_s=0.25, pp_stall_min_nodes=32, pp_stall_all_nodes=64,
                          pp_stall_min_dp=32, pp_stall_zero0_min_microbatches=16, pp_stall_zero0_min_nodes=4,
                          pp_stall_zero0_max_nodes=32)
    lay = validate(ParallelConfig(tp=8, sp=True, pp=2, zero_stage=0), G1B, _training(fw), 256)
    assert lay.microbatches == 16 and lay.parallel.dp == 16
    assert [stall_rule(lay, fw, n, 1, 2.0**24) for n in (4, 16, 31, 32, 64)] == ["zero0", "zero0", "zero0", None, "nodes"]
    # without the bound the ZeRO-0 rule holds at any node count (64 included)
    free = fw.model_copy(update={"pp_stall_zero0_max_nodes": None})
    assert [stall_rule(lay, free, n, 1, 2.0**24) for n in (32, 64)] == ["zero0", "zero0"]


def test_nanotron_places_pipeline_blocks_beyond_the_layer_count():
    # nanotron places 28 layers + 5 other blocks (embedding, final norm, LM head, fp32 cast, loss) = 33 blocks: the
    # playbook's 3B (28 layers) ran once at pp=32. The cost-greedy split then leaves rank 31 without a block, which
    # the layout reports as its failure (such runs mostly fail); pp=34 > 33 blocks is refused as before
    g3b = ModelSpec(name="usp-3b", n_layers=28, d_model=3072, n_heads=32, ffn_dim=8192, vocab_size=131072,
                    tied_embeddings=True)
    tr = _training(framework_profile("nanotron"))
    lay = validate(ParallelConfig(tp=4, sp=True, pp=32, zero_stage=0), g3b, tr, 128)
    assert lay.stage_layers[:28] == (1,) * 28 and lay.stage_layers[28:] == (0,) * 4
    assert "rank(s) 31 of pp=32" in lay.failure
    with pytest.raises(ConfigError, match="pp=34 exceeds n_layers=28"):
        validate(ParallelConfig(pp=34, zero_stage=0), g3b, tr, 34)
    # a framework that splits layers (megatron) still needs a layer per stage
    with pytest.raises(ConfigError, match="pp=32 exceeds n_layers=28"):
        validate(ParallelConfig(tp=4, sp=True, pp=32), g3b, _training(framework_profile("megatron")), 128)


def test_heldout_3b_80b_runs_load_and_none_that_ran_is_refused():
    # benchmarks/usp_h100_grid_3b_80b.csv (the playbook's plot data, transcribed): 842 3B rows (593 ran) and 821 80B
    # rows (138 ran, 14 of them the GQA-8 variant labelled 80B-gqa8: 807 + 14 rows, 124 + 14 ran); its 3B ran at tp = 16
    # and 32, which the grid map's 32-head 3B accepts (32 % 16 == 32 % 32 == 0)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import usp_grid as g
    import usp_heldout
    runs = g.load_grid(usp_heldout.HELDOUT_CSV)
    count = {m: (sum(r.model == m for r in runs), sum(r.model == m and r.ran for r in runs))
             for m in ("3B", "80B", "80B-gqa8")}
    assert count == {"3B": (842, 593), "80B": (807, 124), "80B-gqa8": (14, 14)}
    assert {r.parallel.tp for r in runs if r.model == "3B" and r.ran} >= {16, 32}
    hw = g.load_hardware(str(g.DEFAULT_HW))
    prof = framework_profile("nanotron")
    refused = [r for r in runs if r.ran and isinstance(g.predict(r, hw, prof), str)]
    assert refused == []


def test_heldout_script_fills_its_doc_block_and_refuses_a_file_without_it(tmp_path):
    # --doc writes the metrics between the usp-heldout markers (the README-check found them left empty); a file
    # without the markers exits 2 before any work and is not touched
    import subprocess
    csv_text = ("model,nodes,dp,tp,pp,zero,mbs,grad_acc,gbs,mfu_pct,tok_s_gpu,tok_s,gpu_mem_gb\n"
                "3B,1,8,1,1,1,1,32,256,42.0,16341,130728,50.8\n"
                "3B,1,4,1,2,1,2,32,256,46.7,16426,131408,56.9\n"
                "3B,1,2,1,4,1,1,128,256,40.0,15402,123216,36.1\n")
    (tmp_path / "h.csv").write_text(csv_text)
    doc = tmp_path / "d.md"
    doc.write_text("before\n<!-- usp-heldout:start -->\nold\n<!-- usp-heldout:end -->\nafter\n")
    script = str(ROOT / "benchmarks" / "usp_heldout.py")
    r = subprocess.run([sys.executable, script, "--csv", str(tmp_path / "h.csv"), "--doc", str(doc)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    text = doc.read_text()
    assert text.startswith("before\n<!-- usp-heldout:start -->\n**nanotron") and "old" not in text
    assert "3 runs (3 ran)" in text and text.endswith("<!-- usp-heldout:end -->\nafter\n")
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    r = subprocess.run([sys.executable, script, "--csv", str(tmp_path / "h.csv"), "--doc", str(bare)],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "has no <!-- usp-heldout:start -->" in r.stderr and bare.read_text() == "no markers\n"


def test_zero0_node_bound_must_exceed_its_start():
    # pp_stall_zero0_max_nodes <= pp_stall_zero0_min_nodes would leave the ZeRO-0 rule no node count: refused,
    # naming the smallest legal bound (4 + 1 = 5 with nanotron-usp's start of 4)
    from shardplan.presets.frameworks import framework_profile as fp
    with pytest.raises(ConfigError, match="pp_stall_zero0_max_nodes 5 or more") as e:
        fp("nanotron-usp+pp_stall_zero0_max_nodes=4")
    assert e.value.field == "pp_stall_zero0_max_nodes"
    assert fp("nanotron-usp+pp_stall_zero0_max_nodes=5").pp_stall_zero0_max_nodes == 5
