"""`shardplan record import`: a CSV of measured runs -> run records (issue 10)."""

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.record_import import CsvMapping, import_csv, parse_map_items
from shardplan.records import read_records

RUNNER = CliRunner()


def _csv(tmp_path, text, name="runs.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_columns_named_like_fields_need_no_mapping(tmp_path):
    p = _csv(tmp_path, "model,hardware,devices,seq_len,global_batch_size,tp,pp,zero_stage,microbatch_size,"
                       "tokens_per_s_per_device\n"
                       "llama-3-8b,h100-sxm,16,4096,64,2,2,1,2,3500.5\n")
    (r,) = import_csv(p, CsvMapping())
    assert (r.model, r.hardware, r.devices, r.seq_len, r.global_batch_size) == ("llama-3-8b", "h100-sxm", 16, 4096, 64)
    assert (r.parallel.tp, r.parallel.pp, r.parallel.zero_stage, r.parallel.microbatch_size) == (2, 2, 1, 2)
    assert r.status == "ok" and r.tokens_per_s_per_device == 3500.5 and r.source == "runs.csv:2"


def test_expressions_values_and_status(tmp_path):
    # step_ms / 1000: 2,500 ms -> 2.5 s; mem_gib * 1073741824: 40 GiB -> 42,949,672,960 B;
    # hosts * 4 * 2: 2 hosts of 4 boards x 2 GPUs -> 16 devices; 'OOM' / 'CUDA out of memory' -> oom
    p = _csv(tmp_path, "net,hosts,TP,PP,mb,gbs,step_ms,mem_gib,result\n"
                       "small,2,2,1,1,32,2500,40,success\n"
                       "small,2,1,1,4,32,,,OOM\n"
                       "small,2,1,2,4,32,,,CUDA out of memory\n"
                       "small,2,1,2,2,32,,,NCCL timeout\n")
    m = parse_map_items(["model=net", "devices=hosts * 4 * 2", "tp=TP", "pp=PP", "microbatch_size=mb",
                         "global_batch_size=gbs", "step_time_s=step_ms / 1000", "peak_memory_bytes=mem_gib * 1073741824",
                         "status=result"], ["seq_len=2048", "hardware=a100-sxm-80gb", "framework=deepspeed"])
    m = m.model_copy(update={"values": {"model": {"small": "llama-3-8b"}}})
    recs = import_csv(p, m)
    assert [r.status for r in recs] == ["ok", "oom", "oom", "failed"]
    assert recs[0].step_time_s == 2.5 and recs[0].peak_memory_bytes == 42_949_672_960 and recs[0].devices == 16
    assert recs[0].model == "llama-3-8b" and recs[0].seq_len == 2048 and recs[0].framework == "deepspeed"
    # tokens/s per device from the step: 32 x 2048 / 2.5 / 16 = 1,638.4
    assert recs[0].measured_tokens_per_s_per_device() == pytest.approx(1638.4)


def test_mapping_file_and_missing_status(tmp_path):
    mp = _csv(tmp_path, "columns: {tokens_per_s_per_device: tps}\n"
                        "constants: {model: llama-3-8b, hardware: h100-sxm, devices: 8, seq_len: 4096,"
                        " global_batch_size: 16}\n"
                        "missing_status: oom\n", "map.yaml")
    p = _csv(tmp_path, "tp,tps\n8,1200\n1,\n")
    recs = import_csv(p, parse_map_items([str(mp)], []))
    assert [r.status for r in recs] == ["ok", "oom"] and recs[1].tokens_per_s_per_device is None


@pytest.mark.parametrize("items,sets,text,match", [
    (["tokens=tps"], [], "tps\n1\n", "'tokens' is not a record field; legal: model, hardware"),
    (["tokens_per_s_per_device=tps"], [], "tp\n1\n", "column 'tps' is not in the CSV; its columns: tp"),
    (["tokens_per_s_per_device=tps * 2"], [], "tps\nfast\n", "multiplies a cell that is not a number"),
    (["tp"], [], "tp\n1\n", "--map 'tp' is not field=column"),
    (["tokens_per_s_per_device=tps / 0"], [], "tps\n5\n", r"runs.csv:2: 'tps / 0' divides by zero"),
    (["tokens_per_s_per_device=tps * 1e308"], [], "tps\n1e10\n", "is not a finite number"),
    ([], ["seq_len"], "tp\n1\n", "--set 'seq_len' is not field=value"),
    ([], [], "tp\n", "has a header but no rows"),
    ([], ["model=llama-3-8b", "hardware=h100-sxm", "devices=8", "seq_len=4096", "global_batch_size=8"],
     "tp,tokens_per_s_per_device\n2.5,10\n", r"runs.csv:2: tp='2.5' is not a whole number"),
])
def test_bad_input_names_field_and_legal_values(tmp_path, items, sets, text, match):
    p = _csv(tmp_path, text)
    with pytest.raises(ConfigError, match=match):
        import_csv(p, parse_map_items(items, sets))


def test_value_without_entry_lists_the_entries(tmp_path):
    p = _csv(tmp_path, "model\n9B\n")
    m = CsvMapping(values={"model": {"1B": "llama-3.2-1b", "8B": "llama-3-8b"}})
    with pytest.raises(ConfigError, match="runs.csv:2: model value '9B' has no entry in values.model; its entries: 1B, 8B"):
        import_csv(p, m)


def test_cli_writes_records_and_exit_codes(tmp_path):
    p = _csv(tmp_path, "tp,tps\n2,900\n")
    out = tmp_path / "r.jsonl"
    args = ["record", "import", str(p), "-o", str(out), "--map", "tokens_per_s_per_device=tps",
            "--set", "model=llama-3-8b", "--set", "hardware=h100-sxm", "--set", "devices=8",
            "--set", "seq_len=4096", "--set", "global_batch_size=16"]
    res = RUNNER.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "1 run records" in res.output
    res = RUNNER.invoke(app, args + ["--append"])
    assert res.exit_code == 0 and len(read_records(out)) == 2
    bad = RUNNER.invoke(app, ["record", "import", str(p), "-o", str(out), "--map", "tokenz=tps"])
    assert bad.exit_code == 2 and "not a record field" in bad.output
    fmt = RUNNER.invoke(app, ["record", "import", str(p), "-o", str(out), "--format", "xlsx"])
    assert fmt.exit_code == 2 and "xlsx" in fmt.output  # typer's choice check names the bad value


def test_grid_example_imports_every_row():
    # the worked example of docs/calibration.md: 1,641 rows, 1,027 ran (tok_s_gpu given), 614 did not
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    recs = import_csv(root / "shardplan/data/usp_h100_grid_1b_8b.csv",
                      parse_map_items([str(root / "shardplan/data/usp_grid_map.yaml")], []))
    import csv
    with open(root / "shardplan/data/usp_h100_grid_1b_8b.csv") as f:
        ran = [row["tok_s_gpu"] not in ("", "nan") for row in csv.DictReader(f)]
    assert len(recs) == len(ran) == 1641 and [r.status == "ok" for r in recs] == ran and sum(ran) == 1027


def test_a_bad_computed_field_names_its_columns(tmp_path):
    # global_batch_size = dp * mbs * acc = 8 * 0 * 4 = 0: the message names the expression, not only the field
    p = _csv(tmp_path, "dp,mbs,acc,tps\n8,0,4,1000\n")
    m = parse_map_items(["global_batch_size=dp * mbs * acc", "tokens_per_s_per_device=tps", "dp=dp"],
                        ["model=llama-3-8b", "hardware=h100-sxm", "devices=8", "seq_len=4096"])
    with pytest.raises(ConfigError, match=r"global_batch_size=0.*computed from the CSV columns 'dp \* mbs \* acc'"):
        import_csv(p, m)


def test_import_notes_a_profile_file_that_does_not_exist(tmp_path):
    # records keep a profile file's name (read when calibrate uses them); the import says when it is not there
    p = _csv(tmp_path, "model,hardware,devices,seq_len,global_batch_size,tokens_per_s_per_device\n"
                       "llama-3-8b,h100-sxm,8,4096,64,5000\n")
    out = tmp_path / "r.jsonl"
    r = RUNNER.invoke(app, ["record", "import", str(p), "--set", f"framework={tmp_path / 'gone.yaml'}", "-o", str(out)])
    assert r.exit_code == 0 and "gone.yaml does not exist here" in " ".join(r.output.split())
    assert read_records(out)[0].framework.endswith("gone.yaml")
    r = RUNNER.invoke(app, ["record", "import", str(p), "--set", "framework=nanotron", "-o", str(out)])
    assert r.exit_code == 0 and "does not exist" not in r.output


HEAD = "model,hardware,devices,seq_len,global_batch_size,tp,pp,tokens_per_s_per_device"
ROW = "llama-3-8b,h100-sxm,16,4096,256,8,2,3000"


@pytest.mark.parametrize("cell, sets, item", [
    ('"8,x"', [], "'x'"),          # a word among the layers per stage
    ('"1.5,30.5"', [], "'1.5'"),   # layers are whole numbers
    (None, ["pp_layers=8,x"], "'x'"),  # the same through --set
])
@pytest.mark.parametrize("command", [["record", "import"], ["calibrate"]])
def test_pp_layers_that_are_not_whole_numbers_name_file_line_and_value(tmp_path, cell, sets, item, command):
    p = _csv(tmp_path, f"{HEAD},pp_layers\n{ROW},{cell}\n" if cell else f"{HEAD}\n{ROW}\n")
    args = [*command, str(p), *(["-o", str(tmp_path / "o.jsonl")] if command[0] == "record" else [])]
    r = RUNNER.invoke(app, args + [a for s in sets for a in ("--set", s)])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "Traceback" not in text, text
    assert f"{p}:2: pp_layers=" in text and f"its item {item} is not a whole number" in text, text
    assert "legal: whole numbers joined by commas" in text


def test_whole_number_lists_and_counts_are_converted(tmp_path):
    # "16.0,16" is 16 + 16 layers on pp = 2; "mlp;moe" is a list; a 401-digit --set tp is refused by its bound,
    # not converted to a float (which overflows)
    p = _csv(tmp_path, f"{HEAD},pp_layers,recompute_modules\n{ROW},\"16.0,16\",mlp;layernorm\n")
    (r,) = import_csv(p, CsvMapping(constants={"recompute": "selective"}))
    assert r.parallel.pp_layers == (16, 16) and r.parallel.recompute_modules == ("mlp", "layernorm")
    with pytest.raises(ConfigError, match=r"runs.csv:2: parallel.tp=.*legal: <= 1,048,576"):
        import_csv(p, parse_map_items([], [f"tp=1{'0' * 400}"]))
    with pytest.raises(ConfigError, match=r"runs.csv:2: tp=True is not a whole number"):
        import_csv(p, CsvMapping(constants={"tp": True}))


@pytest.mark.parametrize("command", [["record", "import"], ["calibrate"]])
def test_a_cell_over_the_csv_field_limit_names_file_and_line(tmp_path, command):
    # 131,073 characters in the source cell: one over the csv module's 131,072, in a file well under the 1 MiB cap
    p = _csv(tmp_path, f"{HEAD},source\n{ROW},ok\n{ROW},{'a' * 131_073}\n")
    args = [*command, str(p), *(["-o", str(tmp_path / "o.jsonl")] if command[0] == "record" else [])]
    r = RUNNER.invoke(app, args)
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "Traceback" not in text, text
    assert f"{p}:3: not a CSV row" in text and "cells of at most 131,072 characters" in text, text


def test_a_truncated_row_or_a_repeated_column_is_refused(tmp_path):
    # a row with 3 of the header's 5 cells would become a 'failed' run (no throughput): refused, naming the line
    p = _csv(tmp_path, "model,hardware,devices,seq_len,global_batch_size\nllama-3-8b,h100-sxm,8,4096,64\n"
             "llama-3-8b,h100-sxm,8\n")
    with pytest.raises(ConfigError, match=r"runs.csv:3: the row has 3 cells, the header 5"):
        import_csv(p, CsvMapping(missing_status="failed"))
    p = _csv(tmp_path, "model,tp,tp\nllama-3-8b,1,2\n", name="dup.csv")
    with pytest.raises(ConfigError, match=r"'tp' more than once"):
        import_csv(p, CsvMapping())


def test_a_record_with_a_boolean_degree_or_a_string_switch_is_refused(tmp_path):
    # JSON true is not tp=1 and "false" is not a switch (pydantic's lax mode would read them so)
    base = ('{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 16, "seq_len": 4096, "global_batch_size": 64, '
            '"tokens_per_s_per_device": 1000, "parallel": {"dp": 2, %s}}\n')
    for field, message in (('"tp": true', "tp=True; legal: a number"), ('"tp": 8, "sp": "false"', "sp='false'")):
        f = tmp_path / "r.jsonl"
        f.write_text(base % field)
        with pytest.raises(ConfigError, match=message):
            read_records(f)
    f.write_text(base % '"tp": 8')
    assert read_records(f)[0].parallel.tp == 8


def test_a_field_name_in_another_case_is_not_dropped(tmp_path):
    # 'TP' is not the field 'tp': ignoring it would give tp=1; refused unless mapped (and 'tp,TP' is a repeat)
    p = _csv(tmp_path, "model,TP,hardware,devices,seq_len,global_batch_size,tokens_per_s_per_device\n"
                       "llama-3-8b,2,h100-sxm,8,4096,64,1000\n")
    with pytest.raises(ConfigError, match=r"column 'TP' is not the field 'tp'.*--map tp=TP"):
        import_csv(p, CsvMapping())
    (r,) = import_csv(p, parse_map_items(["tp=TP"], []))
    assert r.parallel.tp == 2
    p = _csv(tmp_path, "model,tp,TP\nllama-3-8b,1,2\n", name="twice.csv")
    with pytest.raises(ConfigError, match="more than once"):
        import_csv(p, CsvMapping())


def test_a_misspelt_mapping_section_names_the_legal_keys(tmp_path):
    m = tmp_path / "map.yaml"
    m.write_text("colums:\n  tp: TP\n")
    with pytest.raises(ConfigError, match=r"colums=.*did you mean columns.*legal fields: columns, constants"):
        parse_map_items([str(m)], [])


def test_a_status_word_not_read_on_a_measured_row_is_refused_not_dropped(tmp_path):
    # a breaker's status 'MAYBE' / 'sucess' with 5,153 tokens/s became 'failed' and the measurement vanished (exit 0)
    from shardplan.errors import ConfigError
    from shardplan.record_import import import_csv, parse_map_items
    head = "model,hardware,devices,seq_len,global_batch_size,status,tokens_per_s_per_device\n"
    csv = tmp_path / "runs.csv"
    csv.write_text(head + "llama-3-8b,h100-sxm,8,4096,64,sucess,5153\n")
    with pytest.raises(ConfigError, match=r"runs.csv:2: status='sucess' is not a word the import reads"):
        import_csv(csv, parse_map_items([], []))
    # words that say it ran, failed or ran out of memory are read as before
    csv.write_text(head + "llama-3-8b,h100-sxm,8,4096,64,Passed,5153\nllama-3-8b,h100-sxm,8,4096,64,NCCL timeout,5\n"
                   "llama-3-8b,h100-sxm,8,4096,64,CUDA OOM,\nllama-3-8b,h100-sxm,8,4096,64,whatever,\n")
    recs = import_csv(csv, parse_map_items([], []))
    assert [r.status for r in recs] == ["ok", "failed", "oom", "failed"]
    assert recs[0].tokens_per_s_per_device == 5153 and recs[1].tokens_per_s_per_device is None


def test_a_semicolon_separated_file_is_named_as_such(tmp_path):
    # a breaker's semicolon CSV was refused as "model is missing", which does not say what is wrong
    csv = tmp_path / "semi.csv"
    csv.write_text("model;hardware;devices\nllama-3-8b;h100-sxm;8\n")
    with pytest.raises(ConfigError, match=r"not comma-separated \(separated by ';'\)"):
        import_csv(csv, parse_map_items([], []))


def test_an_unknown_layout_key_in_a_record_lists_the_layout_fields(tmp_path):
    # a breaker's record with "parallel": {"tpp": 2} was told the record's fields (model, hardware, ...)
    path = tmp_path / "r.jsonl"
    path.write_text('{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, '
                    '"global_batch_size": 64, "parallel": {"tpp": 2}, "tokens_per_s_per_device": 3000}\n')
    with pytest.raises(ConfigError, match=r"parallel\.tpp=2.*did you mean tp or pp\?.*legal fields: dp, zero_stage"):
        read_records(path)


def test_a_row_whose_degrees_do_not_fill_its_devices_is_refused_at_import(tmp_path):
    # a new user's row dp 16 x tp 1 x pp 2 on 16 devices imported silently and was only left out, with a warning
    # and exit 0, when calibrate priced it: 16 * 1 * 2 * 1 = 32 devices; the legal dp is 16 / (1 * 2 * 1) = 8
    header = "model,devices,seq_len,global_batch_size,dp,tp,pp,tokens_per_s_per_device\n"
    path = _csv(tmp_path, header + "llama-3-8b,16,4096,256,8,1,2,3000\nllama-3-8b,16,4096,256,16,1,2,3000\n")
    mapping = parse_map_items([], ["hardware=h100-sxm"])
    with pytest.raises(ConfigError, match=r"runs.csv:3: dp\*tp\*pp\*cp = 16\*1\*2\*1 = 32 devices, but devices=16; "
                                          r"legal dp for these degrees: 8"):
        import_csv(path, mapping)
    # no dp column: tp * pp * cp = 3 cannot divide 16 devices
    path = _csv(tmp_path, "model,devices,seq_len,global_batch_size,tp,tokens_per_s_per_device\n"
                          "llama-3-8b,16,4096,256,3,3000\n", name="three.csv")
    with pytest.raises(ConfigError, match=r"three.csv:2: tp\*pp\*cp = 3\*1\*1 = 3 does not divide devices=16"):
        import_csv(path, mapping)
