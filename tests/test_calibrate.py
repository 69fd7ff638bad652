"""Run records and `shardplan calibrate` (issue 10): a fit recovers known constants."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.calibrate import calibrate, cluster_yaml
from shardplan.cli import app
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.fitting import Parameter
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import framework_profile
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.records import RunRecord, read_records, write_records
from shardplan.specs.training import PRECISION_POLICIES, TrainingSpec

H100 = HARDWARE["h100-sxm"]
#: the "true" cluster: slower GEMMs and a congested network than the preset's 0.59 / 0.85
TRUE = H100.model_copy(update={"matmul_efficiency": 0.5, "scale_out_efficiency": 0.3})
LAYOUTS = [(8, dict(tp=8)), (16, dict(tp=8, dp=2)), (32, dict(tp=4, pp=2, dp=4)), (64, dict(dp=64, zero_stage=3)),
           (16, dict(dp=16, zero_stage=1)), (32, dict(tp=8, pp=4)), (64, dict(tp=8, dp=8, zero_stage=1))]


def synthetic_records() -> list[RunRecord]:
    """What the planner predicts on TRUE for llama-3-8b and a 1B model: records with known constants."""
    out = []
    for model in ("llama-3-8b", "llama-3.2-1b"):
        for n, lay in LAYOUTS:
            tr = TrainingSpec(seq_len=4096, global_batch_size=256)
            e = estimate(MODELS[model], TRUE, tr, ParallelConfig(**lay), n)
            out.append(RunRecord(model=model, hardware="h100-sxm", devices=n, seq_len=4096, global_batch_size=256,
                                 # every field given (as a records file holds it): no profile default applies
                                 parallel=ParallelConfig(**ParallelConfig(**lay).model_dump()),
                                 tokens_per_s_per_device=e.tokens_per_s / n,
                                 source="synthetic: planner on matmul_efficiency 0.5, scale_out_efficiency 0.3"))
    return out


def test_fit_recovers_known_constants():
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0),
              Parameter("hardware", "scale_out_efficiency", 0.05, 1.0)]
    cal = calibrate(synthetic_records(), H100, framework_profile("megatron"), params, cross_validate=False)
    got = dict(zip((p.field for p in params), cal.values))
    # the records are the model's own predictions: the fit must find the constants within 2%
    assert got["matmul_efficiency"] == pytest.approx(0.5, rel=0.02)
    assert got["scale_out_efficiency"] == pytest.approx(0.3, rel=0.02)
    assert cal.in_sample["throughput_median"] < 0.01 < cal.base_error["throughput_median"]


def test_single_node_records_cannot_identify_the_network():
    recs = [r for r in synthetic_records() if r.devices == 8]
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0),
              Parameter("hardware", "scale_out_efficiency", 0.05, 1.0)]
    cal = calibrate(recs, H100, framework_profile("megatron"), params, cross_validate=False)
    assert cal.held == ["scale_out_efficiency"] and cal.values[1] == 0.85


def test_records_round_trip_and_bad_lines_are_named(tmp_path):
    path = tmp_path / "runs.jsonl"
    recs = synthetic_records()[:3]
    write_records(path, recs, append=False)
    assert read_records(path) == recs
    path.write_text(path.read_text() + json.dumps({"model": "llama-3-8b", "status": "ok"}) + "\n")
    with pytest.raises(ConfigError, match=r"runs.jsonl:4"):
        read_records(path)
    with pytest.raises(ValueError, match="needs tokens_per_s_per_device or step_time_s"):
        RunRecord(model="x", hardware="h100-sxm", devices=8, seq_len=8, global_batch_size=8,
                  parallel=ParallelConfig(), status="ok")
    # a step time gives the throughput: 4096 x 256 tokens / 2 s / 8 devices = 65,536 tokens/s per device
    r = RunRecord(model="x", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=256,
                  parallel=ParallelConfig(), step_time_s=2.0)
    assert r.measured_tokens_per_s_per_device() == 65536


def test_cli_calibrate_writes_a_cluster_yaml_estimate_takes(tmp_path):
    path, out = tmp_path / "runs.jsonl", tmp_path / "cluster.yaml"
    write_records(path, synthetic_records(), append=False)
    r = CliRunner().invoke(app, ["calibrate", str(path), "--hardware", "h100-sxm", "-o", str(out),
                                 "--no-cross-validation"])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["base"] == "h100-sxm" and doc["matmul_efficiency"] == pytest.approx(0.5, rel=0.05)
    assert "shardplan calibrate on 14 records" in doc["sources"]["matmul_efficiency"]
    assert load_hardware(str(out)).matmul_efficiency == doc["matmul_efficiency"]
    assert "the records name framework" not in r.output  # the records' framework is the profile fitted


def test_a_fitted_value_on_its_bound_is_flagged_with_its_unit():
    # bounds [0.05, 1]: the tolerance is 1e-3 x 0.95 = 0.00095, so 0.9991 is on the upper bound, 0.998 is not
    p = Parameter("hardware", "scale_out_efficiency", 0.05, 1.0, "fraction of NIC bandwidth")
    assert p.at_bound(0.9991) == "upper" and p.at_bound(0.998) is None
    assert p.at_bound(0.0505) == "lower" and p.at_bound(0.052) is None
    from shardplan.calibrate import DEFAULT_PARAMS, MEMORY_PARAMS, MOE_PARAMS
    assert all(q.unit for q in DEFAULT_PARAMS + MOE_PARAMS + MEMORY_PARAMS)  # every default parameter says its unit


def test_cli_calibrate_warns_when_the_records_name_another_framework(tmp_path):
    path = tmp_path / "runs.jsonl"
    write_records(path, [rec.model_copy(update={"framework": "nanotron"}) for rec in synthetic_records()[:4]],
                  append=False)
    r = CliRunner().invoke(app, ["calibrate", str(path), "--hardware", "h100-sxm", "--framework", "megatron",
                                 "--no-cross-validation"])
    assert "the records name framework nanotron" in r.output and "megatron profile" in r.output


@pytest.mark.slow
def test_train_record_then_calibrate_on_cpu(tmp_path):
    # two short CPU runs of a scaled-down model append records; calibrate fits them (round trip of the format)
    rec = tmp_path / "runs.jsonl"
    for flags in (["--tp", "2"], ["--zero-stage", "3"]):
        r = CliRunner().invoke(app, ["train", "--model", "llama-3-8b", "--scale-down", "--devices", "8", "--steps", "3",
                                     "--seq-len", "32", "--global-batch", "8", "--record", str(rec), *flags])
        assert r.exit_code == 0, r.output
    recs = read_records(rec)
    assert len(recs) == 2 and all(x.step_time_s and x.status == "ok" for x in recs)
    assert recs[0].parallel.tp == 2 and recs[1].parallel.zero_stage == 3
    # the records name the profile of the program the runtime ran (MaxText's refuses tp without sp), with the layout
    # whole (sp false, ZeRO-0 written), and calibrate takes that profile when --framework is not given
    assert {x.framework for x in recs} == {"jax-runtime"} and "sp" in recs[0].parallel.model_fields_set
    r = CliRunner().invoke(app, ["calibrate", str(rec), "--hardware", "h100-sxm", "--no-cross-validation",
                                 "-o", str(tmp_path / "c.yaml")])
    # CPU records against the H100 preset: the base is off by far over 300% and the records name the CPU device,
    # so the fit is called poor (exit code 1) and nothing is written unless --force
    assert r.exit_code == 1 and "poor fit" in r.output and not (tmp_path / "c.yaml").exists(), r.output
    r = CliRunner().invoke(app, ["calibrate", str(rec), "--hardware", "h100-sxm", "--no-cross-validation",
                                 "-o", str(tmp_path / "c.yaml"), "--force"])
    assert r.exit_code == 1 and (tmp_path / "c.yaml").exists(), r.output
    assert "'jax-runtime', the one every record names" in r.output


def test_cli_calibrate_reads_a_csv_with_a_mapping(tmp_path):
    # the same synthetic runs as a CSV in the user's own column names and units: tok/s per GPU, the
    # layout in short names, the model as a value table; the fit must be the one on the records
    rows = ["net,gpus,TP,PP,DP,zero,tps"]
    for r in synthetic_records():
        p = r.parallel
        rows.append(f"{'big' if r.model == 'llama-3-8b' else 'small'},{r.devices},{p.tp},{p.pp},{p.dp or ''},"
                    f"{p.zero_stage},{r.tokens_per_s_per_device!r}")
    csv_path, mapping, out = tmp_path / "runs.csv", tmp_path / "map.yaml", tmp_path / "cluster.yaml"
    csv_path.write_text("\n".join(rows) + "\n")
    mapping.write_text("columns: {model: net, devices: gpus, tp: TP, pp: PP, dp: DP, zero_stage: zero,"
                       " tokens_per_s_per_device: tps}\n"
                       "constants: {hardware: h100-sxm, seq_len: 4096, global_batch_size: 256}\n"
                       "values: {model: {big: llama-3-8b, small: llama-3.2-1b}}\n")
    r = CliRunner().invoke(app, ["calibrate", str(csv_path), "--map", str(mapping), "--hardware", "h100-sxm",
                                 "-o", str(out), "--no-cross-validation"])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["matmul_efficiency"] == pytest.approx(0.5, rel=0.05)
    assert "shardplan calibrate on 14 records" in doc["sources"]["matmul_efficiency"]


def test_fit_recovers_the_per_expert_moe_cost():
    # MoE records made with 0.5 ms per local expert (the Megatron profile ships 0.20 ms): ep 8, 4 and 2 give 16,
    # 32 and 64 local experts of Qwen3-30B-A3B; the default parameter list gains moe_expert_overhead_s for MoE
    # records and the fit finds it within 2%
    true_fw = framework_profile("megatron").model_copy(update={"moe_expert_overhead_s": 5e-4})
    recs = []
    for n, lay in ((8, dict(ep=8)), (16, dict(ep=8, dp=16)), (8, dict(ep=4)), (16, dict(ep=2, dp=16, zero_stage=1))):
        tr = TrainingSpec(seq_len=4096, global_batch_size=128, framework=true_fw)
        e = estimate(MODELS["qwen3-30b-a3b"], H100, tr, ParallelConfig(**lay), n)
        recs.append(RunRecord(model="qwen3-30b-a3b", hardware="h100-sxm", devices=n, seq_len=4096,
                              global_batch_size=128, parallel=ParallelConfig(**lay),
                              tokens_per_s_per_device=e.tokens_per_s / n, source="synthetic"))
    cal = calibrate(recs, H100, framework_profile("megatron"), cross_validate=False)
    got = dict(zip((p.field for p in cal.params), cal.values))
    assert got["moe_expert_overhead_s"] == pytest.approx(5e-4, rel=0.02)


def test_choose_usable_hbm_fraction_is_the_best_stump():
    from shardplan.fitting import choose_usable_hbm_fraction
    # ran at 0.50 and 0.80 of HBM, failed at 0.86, 0.90 and 0.95: every fraction in [0.80, 0.86) classifies all five
    # right, ties go to the largest candidate, 0.85; at 1.0 three are wrong
    pts = [(0.5, True), (0.8, True), (0.86, False), (0.9, False), (0.95, False)]
    assert choose_usable_hbm_fraction(pts) == 0.85
    # a gain of 3 runs is not more than min_gain = 3: the whole HBM stays
    assert choose_usable_hbm_fraction(pts, min_gain=3) == 1.0
    # a run predicted to fail for another reason (None) counts as predicted not to run at every fraction
    assert choose_usable_hbm_fraction([(None, False), (0.6, True)]) == 1.0
    # an oom far above the cap says nothing about 0.6-2.7: the fraction in force (nanotron's 0.84) is kept
    assert choose_usable_hbm_fraction([(0.6, True), (2.7, False)], keep=0.84) == 0.84


def test_calibrate_chooses_the_fit_limit_from_oom_records():
    # records of the planner's own predictions on TRUE that ran, plus llama-3-8b layouts whose predicted usage is
    # 0.37-1.58 of HBM marked 'oom' above 0.9 of HBM: the chosen fraction sits between the last ok (0.81) and the
    # first oom (0.98)
    recs = synthetic_records()
    fw = framework_profile("megatron")
    tr = TrainingSpec(seq_len=4096, global_batch_size=256)
    usage = []
    for mbs in (1, 2, 4):
        for dp in (2, 4, 8):
            pc = ParallelConfig(dp=dp, tp=8 // dp, zero_stage=1, microbatch_size=mbs)
            e = estimate(MODELS["llama-3-8b"], TRUE, tr, pc, 8)
            u = e.memory.total / TRUE.hbm_bytes
            usage.append(u)
            status = "oom" if u > 0.9 else "ok"
            recs.append(RunRecord(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096,
                                  global_batch_size=256, parallel=pc, status=status,
                                  tokens_per_s_per_device=e.tokens_per_s / 8 if status == "ok" else None,
                                  source="synthetic oom threshold 0.9"))
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0)]
    cal = calibrate(recs, H100, fw, params, cross_validate=False)
    below = max(u for u in usage if u <= 0.9)
    above = min((u for u in usage if u > 0.9), default=2.0)
    assert cal.usable_hbm_fraction is not None
    assert below <= cal.usable_hbm_fraction < above


def test_a_record_that_did_not_finish_has_no_throughput():
    # status 'oom' with a throughput would be fitted as a run that ran: refused as contradictory input
    from pydantic import ValidationError
    with pytest.raises(ValidationError, match="did not finish"):
        RunRecord(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=64,
                  parallel=ParallelConfig(dp=8), status="oom", tokens_per_s_per_device=1000.0)
    assert RunRecord(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=64,
                     parallel=ParallelConfig(dp=8), status="oom").measured_tokens_per_s_per_device() is None


def test_a_record_carries_its_moe_routing_into_the_priced_run():
    # a run record of a synthetic round-robin gate (NeMo AutoModel's fake_balanced_gate) is priced with that routing
    from shardplan.calibrate import cases
    from shardplan.parallel import ParallelConfig
    from shardplan.records import RunRecord
    rec = RunRecord(model="qwen3-30b-a3b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=64,
                    parallel=ParallelConfig(ep=8, moe_dispatcher="deepep", zero_stage=3), moe_routing="round_robin",
                    tokens_per_s_per_device=10000.0)
    assert cases([rec])[0].training.moe_routing == "round_robin"
    assert RunRecord(**{**rec.model_dump(), "moe_routing": "uniform"}).moe_routing == "uniform"


def test_cli_calibrate_refuses_records_whose_precision_the_base_hardware_cannot_run(tmp_path):
    # an nvfp4-mixed record on h100-sxm (no fp4 peak) is bad input (exit 2, naming the record and the legal
    # precisions), as estimate says, not a record silently left out of the fit
    path = tmp_path / "runs.jsonl"
    recs = synthetic_records()[:3]
    recs = [recs[0].model_copy(update={"precision": "nvfp4-mixed"}), *recs[1:]]
    write_records(path, recs, append=False)
    r = CliRunner().invoke(app, ["calibrate", str(path), "--hardware", "h100-sxm", "-o", str(tmp_path / "c.yaml"),
                                 "--no-cross-validation"])
    assert r.exit_code == 2 and "record 1" in r.output and "has no fp4 peak" in r.output
    assert not (tmp_path / "c.yaml").exists()


def test_default_fit_moves_the_gemm_rate_of_the_records_dtype():
    # NVFP4 records on gb200 made with fp4_matmul_efficiency 0.40 (the preset: None = the fp8 fraction 0.48): the
    # default fit frees fp4_matmul_efficiency (start 0.48) and not the bf16 matmul_efficiency, and finds 0.40
    from shardplan.calibrate import rate_params
    gb200 = HARDWARE["gb200"]
    true = gb200.model_copy(update={"fp4_matmul_efficiency": 0.40})
    recs = []
    for n, lay in LAYOUTS:
        tr = TrainingSpec(seq_len=4096, global_batch_size=256, precision=PRECISION_POLICIES["nvfp4-mixed"])
        e = estimate(MODELS["llama-3-8b"], true, tr, ParallelConfig(**lay), n)
        recs.append(RunRecord(model="llama-3-8b", hardware="gb200", devices=n, seq_len=4096, global_batch_size=256,
                              precision="nvfp4-mixed",
                              # every field given, as priced: no megatron layout default applies (with them the fit
                              # once reached 0.40 only by driving hbm_efficiency to its bound, now held at base)
                              parallel=ParallelConfig(**ParallelConfig(**lay).model_dump()),
                              tokens_per_s_per_device=e.tokens_per_s / n, source="synthetic: fp4 rate 0.40"))
    cal = calibrate(recs, gb200, framework_profile("megatron"), cross_validate=False)
    got = dict(zip((p.field for p in cal.params), cal.values))
    assert "matmul_efficiency" not in got and got["fp4_matmul_efficiency"] == pytest.approx(0.40, rel=0.03)
    assert dict(zip((p.field for p in cal.params), cal.base_values))["fp4_matmul_efficiency"] == 0.48
    assert [p.field for p in rate_params([])] == []


RECORD = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
          "parallel": {"dp": 8, "zero_stage": 3}, "status": "ok", "tokens_per_s_per_device": 5000}


@pytest.mark.parametrize("extra, field, bound", [
    # 1e12 B is above the H100's 80 GiB = 85,899,345,920 B for a run that ran
    ({"peak_memory_bytes": 1e12}, "peak_memory_bytes=1,000,000,000,000", "at most 85,899,345,920 B"),
    # llama-3-8b at seq 4096: 6 x 8.03e9 parameters (plus attention) ~ 4.8e10 FLOPs per token; 1e9 tokens/s per device
    # is ~4.8e19 FLOP/s, far above the 9.89e14 dense bf16 peak (about 20,500 tokens/s per device at 100% MFU)
    ({"tokens_per_s_per_device": 1e9}, "tokens_per_s_per_device=1,000,000,000", "dense bf16 peak of h100-sxm")])
def test_cli_calibrate_refuses_physically_impossible_records(tmp_path, extra, field, bound):
    path = tmp_path / "runs.jsonl"
    path.write_text("# one run\n" + json.dumps({**RECORD, **extra}) + "\n")
    r = CliRunner().invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and f"{path}:2" in text and field in text and bound in text, text
    # the same record within the bounds is fitted (one record gives two measurements for more parameters: an
    # underdetermined fit, a negative result, exit 1, not a refusal of the record)
    path.write_text(json.dumps({**RECORD, "peak_memory_bytes": 60e9}) + "\n")
    ok = CliRunner().invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"])
    assert ok.exit_code == 1 and "underdetermined" in ok.output and "error:" not in ok.output, ok.output


def test_a_step_time_above_the_peak_is_refused_as_such():
    # 64 x 4096 tokens in 1 ms on 8 devices: 32.8 M tokens/s per device, above 100% MFU; the error names step_time_s
    # and the shortest step the peak allows (262,144 tokens / 20,506 tokens/s / 8 devices = 1.598 s)
    from shardplan.calibrate import cases, check_physical
    rec = RunRecord.model_validate({**{k: v for k, v in RECORD.items() if k != "tokens_per_s_per_device"},
                                    "step_time_s": 1e-3})
    with pytest.raises(ConfigError) as e:
        check_physical(cases([rec])[0], H100)
    assert e.value.field == "step_time_s" and "a step of at least 1.598 s" in str(e.value), str(e.value)


#: the tester's record: llama-3-8b at seq 1024, 4.58e10 model FLOPs per token; the H100's 9.894e14 dense bf16 peak
#: allows 9.894e14 / 4.5834e10 = 21,586.95 tokens/s per device
FAST = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 16, "seq_len": 1024, "global_batch_size": 256,
        "parallel": {"tp": 8, "sp": True, "microbatch_size": 2}, "status": "ok"}


def _refusal(rec: dict) -> str:
    from shardplan.calibrate import cases, check_physical
    try:
        check_physical(cases([RunRecord.model_validate(rec)])[0], H100)
    except ConfigError as e:
        return str(e)
    return ""


def test_a_printed_physical_bound_is_itself_accepted():
    import re
    # throughput: the maximum 21,586.95 prints rounded down, 21,586, which passes; 21,587 does not
    msg = _refusal({**FAST, "tokens_per_s_per_device": 1e6})
    assert "legal: at most 21,586 tokens/s per device" in msg, msg
    assert _refusal({**FAST, "tokens_per_s_per_device": 21586}) == ""
    assert "at most 21,586 tokens/s" in _refusal({**FAST, "tokens_per_s_per_device": 21587})
    # step time: 1024 x 256 / 16 = 16,384 tokens per device per step, at least 16,384 / 21,586.95 = 0.75898 s,
    # printed rounded up to 0.7590; a step of 0.7590 s passes
    msg = _refusal({**FAST, "step_time_s": 1e-4})
    bound = re.search(r"a step of at least ([0-9.]+) s", msg).group(1)
    assert bound == "0.7590" and _refusal({**FAST, "step_time_s": float(bound)}) == ""
    # memory: one byte over the 80 GiB = 85,899,345,920 B shows both exact integers; the capacity itself passes
    msg = _refusal({**FAST, "tokens_per_s_per_device": 5000, "peak_memory_bytes": 85_899_345_921})
    assert "peak_memory_bytes=85,899,345,921 is above the 85,899,345,920 B" in msg, msg
    assert _refusal({**FAST, "tokens_per_s_per_device": 5000, "peak_memory_bytes": 85_899_345_920}) == ""


def test_legal_bound_rounds_toward_the_legal_side():
    from shardplan.calibrate import legal_bound
    assert legal_bound(21586.95, False, lambda x: x <= 21586.95) == "21,586"  # a maximum: down
    assert legal_bound(0.85571, True, lambda x: x >= 0.85571) == "0.8558"     # a minimum: up
    assert legal_bound(2.0, True, lambda x: x > 2.0) == "2.001"               # still refused at 2.000: one unit up


@pytest.mark.parametrize("status", ["ok", "oom", "failed"])
def test_a_peak_above_hbm_is_refused_whatever_the_status(status):
    # 1 PiB on an 80 GiB H100: no allocator peaks above the memory it allocates from, not even in an OOM
    rec = {**FAST, "status": status, "peak_memory_bytes": 2.0**50}
    if status == "ok":
        rec["tokens_per_s_per_device"] = 5000
    msg = _refusal(rec)
    assert "peak_memory_bytes=1,125,899,906,842,624" in msg and "legal: at most 85,899,345,920 B" in msg, msg


def test_a_peak_under_one_mib_is_not_bytes(tmp_path):
    # 1 KiB (1,024) is not a device's peak in bytes (80 GB given as 80, or KiB); 1 MiB = 1,048,576 B is accepted
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({**FAST, "status": "oom", "peak_memory_bytes": 1024}) + "\n")
    with pytest.raises(ConfigError, match=r"runs.jsonl:1: .*peak_memory_bytes=1024 is below 1 MiB: not a device "
                                          r"peak in bytes \(did you give GB"):
        read_records(path)
    assert RunRecord.model_validate({**FAST, "status": "oom", "peak_memory_bytes": 2**20}).peak_memory_bytes == 2**20


def test_calibrate_reports_progress_once_per_fit():
    # one call per fit: the fit on every record, then a fold per node count (two node counts here), then done
    from shardplan.calibrate import calibrate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.hardware import HARDWARE
    from shardplan.records import RunRecord
    recs = [RunRecord(model="llama-3.2-1b", hardware="h100-sxm", devices=n, seq_len=2048, global_batch_size=64,
                      parallel={"dp": n, "zero_stage": 1}, tokens_per_s_per_device=t)
            for n, t in ((8, 60_000.0), (16, 58_000.0), (8, 61_000.0))]
    calls = []
    calibrate(recs, HARDWARE["h100-sxm"], framework_profile("megatron"), progress=lambda *a: calls.append(a))
    assert [c[:2] for c in calls] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert "held out" in calls[1][2] and calls[-1][2] == "done"


def test_imported_records_keep_the_layout_fields_the_csv_gave_and_name_unread_columns(tmp_path):
    # a new user's imported CSV was written with every ParallelConfig default (zero_stage 0, sp false), so calibrate
    # priced it as DDP without sp while the CSV given to calibrate directly took the megatron defaults (ZeRO-1, sp):
    # memory median |error| 80% against 12.5%; and a column `zero` no --map named was dropped without a word
    csv = tmp_path / "runs.csv"
    csv.write_text("gpus,tp,zero,run,tps,peak\n16,2,1,a,3000,60e9\n16,1,1,b,2800,70e9\n")
    args = ["--map", "devices=gpus", "--map", "tokens_per_s_per_device=tps", "--map", "peak_memory_bytes=peak",
            "--set", "model=llama-3-8b", "--set", "hardware=h100-sxm", "--set", "seq_len=4096",
            "--set", "global_batch_size=64"]
    out = tmp_path / "r.jsonl"
    r = CliRunner().invoke(app, ["record", "import", str(csv), "-o", str(out), *args])
    assert r.exit_code == 0 and "2 columns of runs.csv not read: zero, run" in r.output, r.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["parallel"] for x in lines] == [{"tp": 2}, {"tp": 1}]  # what the CSV gave, no defaults
    from shardplan.calibrate import Case, with_layout_defaults
    from shardplan.presets.frameworks import framework_profile
    rec = read_records(out)[0]
    # megatron's layout defaults apply to the read-back record as to the CSV path: ZeRO-1, sp with tp 2
    case = with_layout_defaults(Case(rec, None, None, rec.parallel), framework_profile("megatron"))
    assert case.parallel.zero_stage == 1 and case.parallel.sp
    # with the column mapped, nothing is unread and the stage is the CSV's
    r = CliRunner().invoke(app, ["record", "import", str(csv), "-o", str(out), *args, "--map", "zero_stage=zero",
                                 "--map", "source=run"])
    assert r.exit_code == 0 and "not read" not in r.output, r.output
    assert json.loads(out.read_text().splitlines()[0])["parallel"] == {"tp": 2, "zero_stage": 1}


def test_a_parameter_the_fit_puts_on_a_bound_is_held_at_base_and_not_written():
    # a new user's records drove scale_out_latency to its 2e-4 upper bound and NIC efficiency to 0.997, and both
    # were written to the cluster file. Here the synthetic runs (matmul 0.5, NIC 0.3) are made 1.7x faster than any
    # constant within the bounds can price (matmul at 1.0 gives 2x on the compute alone, not on the network), so the
    # fit presses both to their upper bounds: both are held at the base value, named, and left out of the file
    recs = [r.model_copy(update={"tokens_per_s_per_device": r.tokens_per_s_per_device * 1.7})
            for r in synthetic_records()]
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0),
              Parameter("hardware", "scale_out_efficiency", 0.05, 1.0)]
    cal = calibrate(recs, H100, framework_profile("megatron"), params, cross_validate=False)
    assert cal.at_bound == {"matmul_efficiency": "upper", "scale_out_efficiency": "upper"}
    assert cal.values == cal.base_values == [H100.matmul_efficiency, H100.scale_out_efficiency]
    doc = cluster_yaml(cal, H100, len(recs), "2026-12-06")
    assert "matmul_efficiency" not in doc and "scale_out_efficiency" not in doc
    # a zero lower bound is a physical answer (no overhead), not a limit: kept, and an optimizer residue is 0
    from shardplan.calibrate import snap_to_zero, unpinned_side
    overhead = Parameter("framework", "microbatch_overhead_s", 0.0, 0.1)
    assert unpinned_side(overhead, 0.0) is None and unpinned_side(overhead, 0.099) == "upper"
    assert snap_to_zero(overhead, 9e-9) == 0.0 and snap_to_zero(overhead, 1e-6) == 1e-6  # 1e-6 x 0.1 = 1e-7


def test_a_fit_with_no_group_to_hold_out_says_its_errors_are_in_sample(tmp_path):
    # a new user's one-model, one-node records printed no cross-validation line and no word about it
    recs = [r for r in synthetic_records() if r.devices == 8 and r.model == "llama-3-8b"]
    path = tmp_path / "one.jsonl"
    write_records(path, recs)
    r = CliRunner().invoke(app, ["calibrate", str(path), "-H", "h100-sxm"], terminal_width=300)
    assert "no cross-validation: the records hold one model and one node count" in r.output, r.output
    # the summary in words, not dict keys
    assert "base: throughput median |error|" in r.output and "throughput_median" not in r.output


def test_the_band_of_a_calibrated_file_names_the_file_s_own_fit(tmp_path):
    # a new user's estimate on a calibrated cluster file showed only the built-ins' 80% band; the file holds its own
    # in-sample and cross-validated errors (cluster_yaml's sources note), which the band row now quotes
    from shardplan.accuracy_band import band_for
    from shardplan.loaders import load_hardware
    params = [Parameter("hardware", "matmul_efficiency", 0.2, 1.0)]
    cal = calibrate(synthetic_records(), H100, framework_profile("megatron"), params, cross_validate=False)
    out = tmp_path / "c.yaml"
    out.write_text(yaml.safe_dump(cluster_yaml(cal, H100, 14, "2026-12-06")))
    band = band_for(framework_profile("megatron"), load_hardware(str(out)), False)
    assert band is not None and "the file's own fit: 14 records (2026-12-06): in-sample throughput" in band.group
    assert "the file's own fit" not in band_for(framework_profile("megatron"), H100, False).group


def test_records_far_from_full_memory_say_they_do_not_measure_it(tmp_path):
    # issue 10: a fit on records that all stay below ~0.8 of HBM learns nothing about allocator retries or the OOM
    # edge (docs/calibration.md: no 1B grid run reserves more than 68.3 of 80 GiB, and a 1B-only fit mis-ranks the
    # 8B runs that do). 48 GiB of the h100-sxm's 80 GiB (85,899,345,920 B) = 0.6: the note names 48.0 GiB and 60.0%
    # (rounded down to a tenth of a percent, so that a peak just under the 80% rule does not read as 80%).
    from shardplan.calibrate import peak_share, unmeasured_pressure
    recs = [r.model_copy(update={"peak_memory_bytes": 48 * 2**30 if i == 0 else 30 * 2**30})
            for i, r in enumerate(synthetic_records()[:4])]
    assert peak_share(recs, H100) == pytest.approx(0.6)
    path = tmp_path / "low.jsonl"
    write_records(path, recs)
    r = CliRunner().invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"],
                           terminal_width=400)
    assert "the records' highest peak is 48.0 GiB, 60.0% of HBM" in r.output, r.output
    assert "layouts predicted above 60.0% of HBM rest on the base profile's behaviour" in r.output, r.output
    # a record at 70 GiB (0.875 of HBM, above the 0.8 pressure share) measures the regime: no note
    near = [recs[0].model_copy(update={"peak_memory_bytes": 70 * 2**30}), *recs[1:]]
    cal = calibrate(near, H100, framework_profile("megatron"), cross_validate=False)
    assert cal.peak_share == pytest.approx(0.875) and unmeasured_pressure(cal, H100) == ""


def test_records_of_another_device_are_judged_on_their_own_error(tmp_path):
    # a new user mixed 3 CPU records (train --record) with H100 records: the median base error over all nine was 8%,
    # so the 300% rule let the fit through and the CPU step times set microbatch_overhead_s for every later
    # prediction. The rule now reads the CPU records alone: 1/100 of the H100 throughput is 9,900% off.
    h100 = synthetic_records()[:6]
    cpu = [r.model_copy(update={"hardware": "cpu", "tokens_per_s_per_device": r.tokens_per_s_per_device / 100})
           for r in synthetic_records()[7:10]]
    path, out = tmp_path / "mixed.jsonl", tmp_path / "cluster.yaml"
    write_records(path, h100 + cpu)
    r = CliRunner().invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation", "-o", str(out)],
                           terminal_width=400)
    assert r.exit_code == 1 and not out.exists(), r.output
    assert "off by" in r.output and "on the records that name hardware 'cpu'" in r.output, r.output


def test_a_fitted_cost_near_zero_is_shown_as_written():
    # the table said "0: the records show no such cost" beside a fitted and written 7.816e-05 (within 0.1% of the
    # [0, 0.1] range of microbatch_overhead_s, not 0)
    from types import SimpleNamespace
    from shardplan.cli.calibrate import fitted_table
    p = Parameter("framework", "microbatch_overhead_s", 0.0, 0.1, "s per microbatch")
    rows = []
    for v in (7.816e-05, 0.0):
        cal = SimpleNamespace(params=[p], base_values=[0.0], values=[v], at_bound={}, held=[])
        t = fitted_table(cal, "t")
        rows.append(t.columns[4]._cells[0])
    assert rows == ["7.816e-05, near 0: the records show little such cost", "0: the records show no such cost"]
