"""Fixes from a breaker pass on run records, ``calibrate``, output paths and plan files (session 2026-12-05): each
test fails on the behaviour the pass found."""

import json
import os
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.records import read_records

runner = CliRunner()

_CSV = "model,gpus,tp,mbs,gbs,tps\nllama-3-8b,8,1,1,64,3000\nllama-3-8b,8,2,1,64,3200\n"
_MAP = ["--map", "model=model", "--set", "hardware=h100-sxm", "--map", "devices=gpus", "--set", "seq_len=4096",
        "--map", "global_batch_size=gbs", "--map", "tp=tp", "--map", "microbatch_size=mbs",
        "--map", "tokens_per_s_per_device=tps"]
_RECORD = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
           "parallel": {"dp": 8, "zero_stage": 1}}


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_appending_records_ends_a_last_line_without_newline_and_refuses_other_files(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text(_CSV)
    out = tmp_path / "r.jsonl"
    assert _run("record", "import", csv, *_MAP, "-o", out).exit_code == 0
    out.write_text(out.read_text().rstrip("\n"))  # a hand-edited file whose last line has no newline
    assert _run("record", "import", csv, *_MAP, "-o", out, "--append").exit_code == 0
    assert len(read_records(out)) == 4  # 2 + 2, every line a record (before: the third glued onto the second)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"parallel": {"tp": 2}}))
    r = _run("record", "import", csv, *_MAP, "-o", plan, "--append")
    assert r.exit_code == 2 and "holds something other than run records" in r.output
    assert json.loads(plan.read_text()) == {"parallel": {"tp": 2}}  # left as it was


def test_an_output_that_is_the_input_is_refused(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text(_CSV)
    r = _run("record", "import", csv, *_MAP, "-o", csv)
    assert r.exit_code == 2 and "is the CSV file the command reads" in r.output and csv.read_text() == _CSV
    recs = tmp_path / "r.jsonl"
    assert _run("record", "import", csv, *_MAP, "-o", recs).exit_code == 0
    before = recs.read_text()
    r = _run("calibrate", recs, "--no-cross-validation", "-o", recs)
    assert r.exit_code == 2 and "is the records file the command reads" in r.output and recs.read_text() == before


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and /proc")
def test_an_output_that_cannot_be_written_is_refused_before_the_work(tmp_path):
    args = ["report", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64"]
    if os.path.isdir("/proc"):
        r = _run(*args, "-o", "/proc/x.html")  # /proc exists, but no file can be made in it
        assert r.exit_code == 2 and "cannot be written" in r.output
    fifo = tmp_path / "ff.html"
    os.mkfifo(fifo)
    r = _run(*args, "-o", fifo)  # before: opened for writing, which waits for a reader for ever
    assert r.exit_code == 2 and "is a FIFO" in r.output
    r = _run(*args, "-o", tmp_path / "r.pdf")  # before: an HTML page written under the .pdf name
    assert r.exit_code == 2 and "neither .html nor .png" in r.output
    assert not (tmp_path / "r.pdf").exists()


def test_train_refuses_a_record_of_one_step_and_a_record_file_that_is_the_metrics_file(tmp_path):
    base = ["train", "--model", "tiny-llama", "--devices", "2", "--global-batch", "4"]
    r = _run(*base, "--steps", "1", "--record", tmp_path / "r.jsonl")
    assert r.exit_code == 2 and "--steps 2 or more" in r.output  # before: the compile step recorded as the speed
    same = tmp_path / "same.jsonl"
    r = _run(*base, "--steps", "3", "--record", same, "--metrics", same)
    assert r.exit_code == 2 and "is the --metrics file" in r.output


def test_runtime_commands_take_the_device_count_of_the_plan(tmp_path):
    from shardplan.cli.runtime import runtime_devices
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"devices": 16, "parallel": {"dp": 16}}))
    # before: --devices defaulted to 8 whatever the plan, so a 16-device plan failed "16 devices, but devices=8"
    assert (runtime_devices(None, plan), runtime_devices(4, plan), runtime_devices(None, None)) == (16, 4, 8)


def test_a_poor_fit_is_a_negative_result():
    from shardplan.cli.calibrate import poor_fit
    good = SimpleNamespace(cross_validated={}, underdetermined="",
                          in_sample={"throughput_median": 0.04}, base_error={"throughput_median": 0.3})
    assert poor_fit(good, []) is None
    # a fit that leaves 60% median error on its own records (the breaker's step_time_s 1e7 record)
    bad = SimpleNamespace(cross_validated={}, underdetermined="",
                         in_sample={"throughput_median": 0.6}, base_error={"throughput_median": 0.7})
    assert "median throughput |error| of 60%" in poor_fit(bad, [])
    # CPU records against the H100 preset: the base is off by 87x and the records name another device
    cpu = SimpleNamespace(cross_validated={}, underdetermined="",
                         in_sample={"throughput_median": 0.0}, base_error={"throughput_median": 87.2})
    assert "another device class" in poor_fit(cpu, ["cpu"]) and poor_fit(cpu, []) is None
    # fewer measurements than parameters: a 0.0% in-sample error says nothing, so nothing is written
    under = SimpleNamespace(cross_validated={}, underdetermined="1 record(s) give 2 measurement(s) for 7 fitted parameters",
                            in_sample={"throughput_median": 0.0}, base_error={"throughput_median": 0.1})
    assert poor_fit(under, []).startswith("1 record(s) give 2 measurement(s)")


def _records(tmp_path, *recs):
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return read_records(path)


def test_a_record_whose_throughput_and_step_time_disagree_is_refused(tmp_path):
    # 4096 x 64 tokens / 100 s / 8 devices = 327.68 tokens/s per device, not 40,150
    with pytest.raises(ConfigError, match="327.68"):
        _records(tmp_path, {**_RECORD, "tokens_per_s_per_device": 40150, "step_time_s": 100})
    ok, = _records(tmp_path, {**_RECORD, "tokens_per_s_per_device": 330, "step_time_s": 100})  # within 10%
    assert ok.measured_tokens_per_s_per_device() == 330


def test_an_inline_model_in_a_record_names_its_missing_field(tmp_path):
    with pytest.raises(ConfigError) as e:
        _records(tmp_path, {**_RECORD, "model": {"name": "x", "n_layers": 2}, "tokens_per_s_per_device": 1.0})
    # before: "model.str={...}; legal: a text value" (the text branch of str | ModelSpec)
    assert "d_model is missing" in str(e.value) and "model.str" not in str(e.value)


def test_a_plan_with_its_objects_but_no_layout_says_so(tmp_path):
    plan = tmp_path / "p.json"
    plan.write_text(json.dumps({"model": {"name": "llama-3-8b"}, "hardware": {"name": "h100-sxm", "devices": 8},
                                "training": {"seq_len": 4096}}))
    r = _run("estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--plan", plan)
    assert r.exit_code == 2 and "holds no parallel object" in r.output  # before: "'model' is not a layout field"


def test_a_shipped_cluster_is_named_like_a_preset_and_a_file_base_is_explained(tmp_path):
    r = _run("estimate", "-m", "llama-3-8b", "-H", "usp-h100-efa", "-n", "16", "-s", "4096", "-b", "64")
    # the cluster usp_grid.py --to-records names in its records (its profile's ZeRO-0 default does not fit: exit 1)
    assert r.exit_code in (0, 1) and "nanotron-usp" in r.output, r.output
    hw = tmp_path / "hw.yaml"
    hw.write_text("base: measured.yaml\nhbm_bandwidth: 3.0e12\n")
    r = _run("estimate", "-m", "llama-3-8b", "-H", hw, "-n", "8", "-s", "4096", "-b", "64")
    assert r.exit_code == 2 and "base: names a preset, not a file" in r.output


def test_a_field_set_twice_by_one_flag_is_refused(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text(_CSV)
    r = _run("record", "import", csv, *_MAP, "--set", "seq_len=2048", "-o", tmp_path / "r.jsonl")
    assert r.exit_code == 2 and "gives seq_len 2 times" in r.output  # before: the last one won silently


def test_guide_with_nothing_that_fits_is_a_negative_result():
    # Llama 3 8B on 8 TPU v5e chips (16 GiB each) at seq 8192 and 4M tokens: no layout fits (as `plan` says, exit 1)
    r = _run("guide", "-m", "llama-3-8b", "-n", "8", "-H", "tpu-v5e")
    assert r.exit_code == 1 and "nothing fits" in r.output


def test_a_record_s_relative_model_path_is_read_beside_the_records_file(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.yaml").write_text("base: tiny-llama\n")
    (tmp_path / "sub" / "r.jsonl").write_text(json.dumps({**_RECORD, "model": "m.yaml",
                                                          "tokens_per_s_per_device": 10.0}) + "\n")
    monkeypatch.chdir(tmp_path)  # the records' folder is sub/: before, "model='m.yaml': file not found" from here
    rec, = read_records("sub/r.jsonl")
    assert rec.model == "sub/m.yaml"  # the records file's folder joined to the record's path


def test_a_semicolon_csv_is_named_as_such(tmp_path):
    csv = tmp_path / "runs.csv"
    csv.write_text(_CSV.replace(",", ";"))
    r = _run("record", "import", csv, *_MAP, "-o", tmp_path / "r.jsonl")
    assert r.exit_code == 2 and "not comma-separated" in r.output


def test_the_megatron_search_ranks_tp_layouts_with_and_without_tp_overlap():
    # a new user found a tp=4 layout with --tp-overlap beating the default #1 (the search did not try the overlap):
    # under the megatron profile (searched_tp_overlap) the ranking now holds tp > 1 layouts with it, shown as
    # "+overlap"; megatron-legacy (2021-2023 releases: no overlap) and a pinned --no-tp-overlap do not
    base = ["plan", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b", "512", "--top", "20"]
    assert "+overlap" in _run(*base).stdout
    assert "+overlap" not in _run(*base, "--framework", "megatron-legacy").stdout
    assert "+overlap" not in _run(*base, "--fix", "tp_overlap=false").stdout


def test_an_export_whose_peak_band_passes_the_hbm_is_warned(tmp_path):
    # Llama 3 70B on 64 H100 exported for torchtitan: the written #1 needs 79.6 of 80 GiB, its peak band reaching
    # ~90 GiB (twice the fitted fragmentation): before, the file was written without a word
    r = _run("plan", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "8192", "-b", "512", "--export",
             "torchtitan", "-o", tmp_path / "tt.toml")
    assert r.exit_code == 0 and "its peak band reaches" in " ".join(r.output.split())
