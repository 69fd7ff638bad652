"""What a new user met walking the calibration loop (2026-12-06, /work/notes/s46/fresh_user.md): each test fails
on the behaviour they saw."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.presets.hardware import hardware_preset_name


def test_jax_device_kinds_name_their_presets():
    # train --record writes JAX's device_kind; these four fell through to "records name other hardware"
    assert [hardware_preset_name(k) for k in ("TPU v5 lite", "TPU v6 lite", "TPU v5", "NVIDIA GH200 480GB")] == [
        "tpu-v5e", "tpu-v6e", "tpu-v5p", "gh200"]


def test_a_plan_json_given_as_records_says_what_it_is(tmp_path):
    from shardplan.records import read_records
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"plans": [{"parallel": {"dp": 8}}]}, indent=1))
    # before: only the JSON decoder's "Expecting property name enclosed in double quotes"
    with pytest.raises(ConfigError, match=r"plan.json:1: not a run record: .*the file is a plan or estimate "
                                          r"\(shardplan plan / estimate --json\) spread over several lines"):
        read_records(path)


def test_records_given_as_hardware_point_to_calibrate(tmp_path):
    rec = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
           "parallel": {"dp": 8}, "status": "ok", "tokens_per_s_per_device": 3000}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", str(path), "-n", "8", "-s", "4096", "-b", "64"])
    assert r.exit_code == 2, r.output
    assert "it holds a run record (JSON Lines): fit such records with `shardplan calibrate FILE" in " ".join(r.output.split())


def test_a_non_number_cell_in_a_division_names_its_column(tmp_path):
    from shardplan.record_import import import_csv, parse_map_items
    path = tmp_path / "ms.csv"
    path.write_text("model,hardware,devices,seq_len,global_batch_size,step_ms\nllama-3-8b,h100-sxm,8,4096,64,7.6k\n")
    # before: "'step_ms/1000' multiplies a cell that is not a number ('7.6k', '1000')": the constant listed as bad
    with pytest.raises(ConfigError, match=r"ms.csv:2: 'step_ms/1000' divides a cell that is not a number "
                                          r"\(column step_ms = '7.6k'\)"):
        import_csv(path, parse_map_items(["step_time_s=step_ms/1000"], []))


def test_a_file_written_with_force_from_a_poor_fit_says_so_on_every_use(tmp_path):
    # before: `calibrate --force` wrote a poor fit's cluster file with only its in-sample error in `sources`, and every
    # later `estimate --hardware` used it without a word (a `bench --smoke` file is flagged on each use)
    from shardplan.records import write_records
    from tests.test_calibrate import synthetic_records
    recs = synthetic_records()[:1]  # one record: 1 measurement for 5 parameters, underdetermined -> poor fit
    runs, out = tmp_path / "one.jsonl", tmp_path / "forced.yaml"
    write_records(runs, recs)
    r = CliRunner().invoke(app, ["calibrate", str(runs), "-H", "h100-sxm", "-o", str(out), "--force"])
    assert r.exit_code == 1 and out.exists(), r.output
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", str(out), "-n", "8", "-s", "4096", "-b", "64"])
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "was written by `shardplan calibrate --force` from a poor fit (1 record(s) give" in text, \
        r.output


def test_record_import_says_when_it_replaces_a_records_file(tmp_path):
    # the docs call train --record's output and the import's both runs.jsonl; replacing 3 records said nothing
    csv, out = tmp_path / "runs.csv", tmp_path / "runs.jsonl"
    csv.write_text("model,hardware,devices,seq_len,global_batch_size,dp,tokens_per_s_per_device\n"
                   "llama-3-8b,h100-sxm,8,4096,64,8,3000\n")
    out.write_text("# a comment\n{}\n{}\n{}\n")
    r = CliRunner().invoke(app, ["record", "import", str(csv), "-o", str(out)])
    assert r.exit_code == 0 and "held 3 line(s), now replaced; --append adds" in " ".join(r.output.split()), r.output
    r = CliRunner().invoke(app, ["record", "import", str(csv), "-o", str(out), "--append"])
    assert r.exit_code == 0 and "now replaced" not in r.output, r.output


def test_typos_in_hardware_files_records_and_profiles_get_a_suggestion(tmp_path):
    from shardplan.loaders import load_hardware
    from shardplan.presets.frameworks import framework_profile
    from shardplan.records import read_records
    hb = tmp_path / "hb.yaml"
    hb.write_text("base: h100-sx\n")
    # before: no file named and no suggestion, while --hardware h100-sxmm got one
    with pytest.raises(ConfigError, match=r"hardware '.*hb.yaml': base='h100-sx' is not a hardware preset \(did you "
                                          r"mean h100-sxm\?\)"):
        load_hardware(str(hb))
    hc = tmp_path / "hc.yaml"
    hc.write_text("base: h100-sxm\nmatmul_eficiency: 0.5\n")
    with pytest.raises(ConfigError, match=r"legal fields: .*runtime_reserve_fraction, base, framework, sources$"):
        load_hardware(str(hc))  # a hardware file's own keys are legal there too
    rec = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
           "parallel": {"dp": 8, "zero": 1}, "status": "ok", "tokens_per_s_per_device": 3000}
    path = tmp_path / "z.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(ConfigError, match=r"parallel.zero=1; extra inputs are not permitted \(did you mean zero_stage"):
        read_records(path)  # 'zero' begins 'zero_stage' (difflib's ratio 0.57 missed it)
    with pytest.raises(ConfigError, match=r"'microbatch_overhead' is not a profile field \(did you mean "
                                          r"microbatch_overhead_s\?\)"):
        framework_profile("megatron+microbatch_overhead=0.1")


def test_record_import_to_a_device_file_does_not_read_it(tmp_path):
    # the replaced-file note read -o whole: `-o /dev/zero` grew to 6 GB before the kernel killed it
    from shardplan.cli.record import _existing_lines
    assert _existing_lines("/dev/zero") == 0 and _existing_lines(tmp_path / "none.jsonl") == 0


def test_a_good_recalibration_of_a_forced_file_drops_its_poor_fit_mark(tmp_path):
    import yaml
    from shardplan.records import write_records
    from tests.test_calibrate import synthetic_records
    forced = tmp_path / "forced.yaml"
    forced.write_text("base: h100-sxm\nsources:\n  poor_fit: \"an old reason \\x1b[31m\"\n")
    # the mark is printed without the terminal escape
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", str(forced), "-n", "8", "-s", "4096", "-b", "64"])
    assert "from a poor fit (an old reason [31m)" in " ".join(r.output.split()) and "\x1b" not in r.output, r.output
    runs, out = tmp_path / "runs.jsonl", tmp_path / "good.yaml"
    write_records(runs, synthetic_records())
    r = CliRunner().invoke(app, ["calibrate", str(runs), "-H", str(forced), "-o", str(out), "--no-cross-validation"])
    assert r.exit_code == 0, r.output
    assert "poor_fit" not in (yaml.safe_load(out.read_text()).get("sources") or {})


def test_a_fit_that_calls_most_outcomes_wrong_is_poor():
    from types import SimpleNamespace
    from shardplan.cli.calibrate import poor_fit
    # a breaker's 10 records, 8 of which ran but were predicted not to fit: fit/OOM 20%, written with exit 0 before
    cal = SimpleNamespace(cross_validated={}, underdetermined="", in_sample={"throughput_median": 0.05, "fit_oom_accuracy": 0.2},
                          base_error={"throughput_median": 0.1})
    assert poor_fit(cal, []).startswith("the fitted constants call 20% of the records' outcomes right")
    cal.in_sample["fit_oom_accuracy"] = 0.9
    assert poor_fit(cal, []) is None


def test_column_expressions_read_slash_named_columns_and_name_a_dangling_operator(tmp_path):
    from shardplan.record_import import import_csv, parse_map_items
    path = tmp_path / "ts.csv"
    path.write_text("model,hardware,devices,seq_len,global_batch_size,tok/s\nllama-3-8b,h100-sxm,8,4096,64,3\n")
    # before: "column 'tok' is not in the CSV" although 'tok/s' is one; 3 x 1000 = 3000 tokens/s
    (rec,) = import_csv(path, parse_map_items(["tokens_per_s_per_device=tok/s * 1000"], []))
    assert rec.tokens_per_s_per_device == 3000
    # before: "column '' is not in the CSV"
    with pytest.raises(ConfigError, match=r"'devices \*\* 8' has an operator without a column or number on one side"):
        import_csv(path, parse_map_items(["devices=devices ** 8"], []))
    # a UTF-16 export is named as such (the Latin-1 advice turned it into NULs)
    u16 = tmp_path / "u16.csv"
    u16.write_bytes("model,devices\nllama-3-8b,8\n".encode("utf-16"))
    with pytest.raises(ConfigError, match=r"is UTF-16 text, not UTF-8 .*iconv -f utf-16 -t utf-8"):
        import_csv(u16, parse_map_items([], []))


def test_one_record_or_a_plan_given_as_a_spec_file_says_what_it_is(tmp_path):
    from shardplan.loaders import load_hardware
    rec = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 64,
           "parallel": {"dp": 8}, "status": "ok", "tokens_per_s_per_device": 3000}
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(rec) + "\n")  # one line parses as a mapping: before, "name is missing ..."
    with pytest.raises(ConfigError, match=r"one.jsonl is not a hardware file: it holds a run record \(JSON Lines\)"):
        load_hardware(str(one))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"plans": [{"parallel": {"dp": 8}}]}))
    with pytest.raises(ConfigError, match=r"plan.json is not a hardware file: it holds a plan or estimate"):
        load_hardware(str(plan))


def test_a_failed_write_names_the_output(tmp_path):
    import os
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    csv = tmp_path / "runs.csv"
    csv.write_text("model,hardware,devices,seq_len,global_batch_size,dp,tokens_per_s_per_device\n"
                   "llama-3-8b,h100-sxm,8,4096,64,8,3000\n")
    # before: "cannot access: No space left on device" named neither the flag nor the path
    r = CliRunner().invoke(app, ["record", "import", str(csv), "-o", "/dev/full"])
    assert r.exit_code == 2 and "writing an output failed: No space left on device (output=/dev/full)" in r.output, \
        r.output


def test_swapped_calibrate_arguments_and_importing_records_say_so(tmp_path):
    from shardplan.record_import import import_csv, parse_map_items
    from shardplan.records import read_records
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("base: h100-sxm\nmatmul_efficiency: 0.5\n")
    # `calibrate cluster.yaml --hardware runs.jsonl`: before, only "Expecting value: line 1 column 1"
    with pytest.raises(ConfigError, match=r"the file is a hardware or cluster file \(YAML\), not run records: were the "
                                          r"arguments swapped\?"):
        read_records(cluster)
    runs = tmp_path / "runs.jsonl"
    runs.write_text('{"model": "llama-3-8b"}\n{"model": "llama-3-8b"}\n')
    # `record import runs.jsonl`: before, "has a header but no rows"
    with pytest.raises(ConfigError, match=r"holds JSON, not a CSV table: a records file \(JSON Lines\) needs no import"):
        import_csv(runs, parse_map_items([], []))
