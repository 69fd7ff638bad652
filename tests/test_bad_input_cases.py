"""Cases that a bad-input check and a fresh-user check found: each was a wrong result, a silent change,
a misleading label or a traceback; each test fails on the code before the fix."""

import json

import pytest
from typer.testing import CliRunner

from shardplan.calibration import reproduce_row, row_inputs
from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.inputs import build_inputs
from shardplan.records import RunRecord, read_records
from shardplan.cost.step import estimate
from shardplan.export import reproduce_command

runner = CliRunner()
GRID_1B = ("name: usp-1b\nn_layers: 16\nd_model: 2048\nn_heads: 32\nffn_dim: 8192\nvocab_size: 131072\n"
           "tied_embeddings: true\n")


def test_nanotron_own_split_typed_in_keeps_its_predicted_failure(tmp_path):
    # the 1B grid model at pp=16 under nanotron: cost-greedy placement leaves rank 15 without a block;
    # typing that same split (2,1,1,2,1,1,1,2,1,1,1,2,0,0,0,0 = 16 layers) must not hide the failure
    model = tmp_path / "m.yaml"
    model.write_text(GRID_1B)
    base = ["estimate", "-m", str(model), "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "256", "--pp", "16",
            "--framework", "nanotron"]
    plain = runner.invoke(app, base)
    typed = runner.invoke(app, base + ["--pp-layers", "2,1,1,2,1,1,1,2,1,1,1,2,0,0,0,0"])
    assert plain.exit_code == typed.exit_code == 1
    assert "without any pipeline block" in typed.output


def test_reproduce_line_keeps_dp_shard_1_quotes_paths_and_leaves_the_hardware_framework(tmp_path):
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=32, seq_len=4096, global_batch=256,
                                 global_batch_tokens=None, zero_stage=3, dp_shard=1)
    e = estimate(m, hw, tr, pc, 32)
    assert "--dp-shard 1" in reproduce_command("torchtitan", e)  # dp_shard=1 is not the default (None = dp)
    # a path with a space is quoted; no --framework when none was typed (the hardware file's key gives it again)
    line = reproduce_command("megatron", e, tmp_path / "o u t.sh",
                             dict(model="sp ace/model.yaml", hardware="c.yaml", framework=None))
    assert "--model 'sp ace/model.yaml'" in line and "'" in line.split(" -o ")[1] and "--framework" not in line


def test_export_of_a_layout_that_does_not_fit_is_not_written(tmp_path):
    # llama-3-8b replicated on 16 H100 (dp=16, ZeRO-0): 16 B/parameter x 8.03e9 = 128 GB of model state alone
    out = tmp_path / "big.sh"
    r = runner.invoke(app, ["export", "--to", "megatron", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s",
                            "4096", "-b", "256", "--zero-stage", "0", "-o", str(out)])
    assert r.exit_code == 1 and "does not fit" in r.output and not out.exists()


def test_plan_pp_layers_pins_the_pipeline_depth():
    # a split of 2 entries is pp=2; 10 + 20 = 30 of llama-3-8b's 32 layers is the error to report
    r = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "256",
                            "--pp-layers", "10,20"])
    assert r.exit_code == 2 and "sums to 30" in r.output
    ok = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "256",
                             "--pp-layers", "10,22", "--top", "1", "--json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["plans"][0]["parallel"]["pp_layers"] == [10, 22]


def test_nanotron_profile_searches_only_what_nanotron_runs():
    # no cp, ep or selective recompute under the nanotron profile: the winner exports
    r = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "256",
                            "--framework", "nanotron", "--top", "20", "--json"])
    plans = json.loads(r.output)["plans"]
    assert plans and all(p["parallel"]["cp"] == 1 and p["parallel"]["recompute"] != "selective" for p in plans)
    bad = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b",
                              "256", "--cp", "2", "--framework", "nanotron"])
    assert bad.exit_code == 2 and "legal cp: 1" in bad.output


def test_pytorch_fsdp_profile_has_no_pipeline_or_context_parallelism():
    # llm-foundry / fms-fsdp run PyTorch FSDP (with optional tp): the search keeps pp = cp = 1 and a pinned pp is
    # refused with the legal value
    r = runner.invoke(app, ["plan", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256",
                            "--framework", "pytorch-fsdp", "--top", "20", "--json"])
    plans = json.loads(r.output)["plans"]
    assert plans and all(p["parallel"]["pp"] == 1 and p["parallel"]["cp"] == 1 for p in plans)
    bad = runner.invoke(app, ["estimate", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b",
                              "256", "--pp", "2", "--framework", "pytorch-fsdp"])
    assert bad.exit_code == 2 and "pp=2 is not implemented by the pytorch-fsdp framework; legal pp: 1" in bad.output


def test_a_profile_files_restriction_is_named_with_the_file(tmp_path):
    # a profile file based on megatron that turns pipelining off: the refusal names the file, not just 'megatron'
    f = tmp_path / "nopp.yaml"
    f.write_text("base: megatron\npipeline_parallel: false\n")
    bad = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "16",
                              "--pp", "2", "--framework", str(f)])
    assert bad.exit_code == 2 and f"megatron (framework {f})" in bad.output and "legal pp: 1" in bad.output


def _record(**over) -> dict:
    r = RunRecord(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=64,
                  parallel={"dp": 8, "zero_stage": 1}, tokens_per_s_per_device=5000.0, source="t")
    return {**json.loads(r.model_dump_json()), **over}


def test_calibrate_names_bad_fields_and_leaves_out_refused_layouts(tmp_path):
    path = tmp_path / "r.jsonl"
    # a status word in any case is read ('OK' is 'ok', as the CSV import reads it: breaker 58); another is refused
    path.write_text(json.dumps(_record(status="RUNNING")) + "\n")
    r = runner.invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"])
    assert r.exit_code == 2 and "status='running'" in r.output and "'ok', 'oom' or 'failed'" in r.output
    # dp_shard=3 does not divide dp=8: refused by the planner, so left out of the fit and named
    bad = _record(parallel={"dp": 8, "zero_stage": 3, "dp_shard": 3})
    path.write_text(json.dumps(bad) + "\n")
    r = runner.invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"])
    assert r.exit_code == 2 and "refuses the layout of every record" in r.output
    good = [_record(tokens_per_s_per_device=t, parallel={"dp": 8, "zero_stage": z}) for t, z in ((5000, 1), (5100, 2))]
    path.write_text("".join(json.dumps(x) + "\n" for x in [*good, bad]))
    r = runner.invoke(app, ["calibrate", str(path), "-H", "h100-sxm", "--no-cross-validation"])
    # two runs for more parameters: fitted, but underdetermined (a negative result, exit 1); the refused one named
    assert r.exit_code == 1 and "underdetermined" in r.output
    assert "left out of the fit" in r.output and "record 3" in r.output
    path.write_text(json.dumps(_record(busbw={"AllReduce": {8: -1.0}})) + "\n")
    with pytest.raises(ConfigError, match="busbw.AllReduce.8=-1 is below 1e\\+06 B/s"):
        read_records(path)


#: an fms-fsdp-like row (Llama 2 7B, 128 A100 on p4de, HSDP)
ROW = dict(id="x1", source="fms-fsdp README (IBM)", model="Llama 2 7B", hardware="A100 80GB (AWS p4de)",
           n_devices="128", seq_len="4096", global_batch_sequences="256", zero_stage_or_fsdp="HSDP",
           microbatch_size="2", reported_tokens_per_sec="3760", tokens_per_sec_scope="per_device")


def test_published_rows_with_missing_cells_and_odd_hsdp_cells():
    # csv.DictReader gives None for the missing cells of a short row: read as empty, never a traceback
    for col in ("zero_stage_or_fsdp", "source", "recompute", "precision"):
        row_inputs({**ROW, col: None})
    assert not reproduce_row({**ROW, "model": None}).covered
    no_id = dict(ROW)
    del no_id["id"]
    assert reproduce_row(no_id).covered
    with pytest.raises(ConfigError, match="legal: a whole number > 0 and <= "):
        row_inputs({**ROW, "global_batch_sequences": "-256"})
    # a named shard group must divide DP=128; without a size the node's devices that divide dp (gcd):
    # 12 devices, DP=12 -> gcd(12, 8) = 4
    with pytest.raises(ConfigError, match="3-way shard group does not divide DP=128"):
        row_inputs({**ROW, "zero_stage_or_fsdp": "HSDP (3-way shard)"})
    assert row_inputs({**ROW, "n_devices": "12", "global_batch_sequences": "24"})[3].dp_shard == 4
    assert not reproduce_row({**ROW, "reported_tokens_per_sec": "-1e6"}).covered
    assert row_inputs({**ROW, "framework": "Nanotron", "zero_stage_or_fsdp": ""})[2].framework.name == "nanotron"


def test_record_import_reads_a_bom_and_keeps_file_line_numbers(tmp_path):
    src = tmp_path / "bom.csv"
    src.write_bytes(b"\xef\xbb\xbfmodel,devices,seq_len,global_batch_size,dp,tokens_per_s_per_device\n"
                    b"llama-3-8b,8,4096,64,8,1000\n\nllama-3-8b,8,4096,64,8,1100\n")
    out = tmp_path / "r.jsonl"
    r = runner.invoke(app, ["record", "import", str(src), "--set", "hardware=h100-sxm", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert [x.source for x in read_records(out)] == ["bom.csv:2", "bom.csv:4"]


def test_pp_layers_with_an_empty_entry_is_refused():
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64",
                            "--pp", "2", "--pp-layers", "16,,16"])
    assert r.exit_code == 2 and "empty entry" in r.output


def test_fix_pp_layers_reads_the_flag_syntax():
    # --fix pp_layers=10,22 is the same pin as --pp-layers 10,22 (and pins pp=2)
    r = runner.invoke(app, ["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "256",
                            "--fix", "pp_layers=10,22", "--top", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["plans"][0]["parallel"]["pp_layers"] == [10, 22]


def test_bound_names_the_framework_overhead_when_it_is_the_largest_part():
    # llama-3-8b, tp=8 pp=2 across nodes under nanotron: the host floor (4.73 ms + 0.257 ms x 7 ring steps x 10
    # collectives = 22.7 ms per layer x 18 layers = 0.41 s per microbatch, 16 microbatches) outweighs the matmuls
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=64, seq_len=8192, global_batch=64,
                                 global_batch_tokens=None, tp=8, sp=True, pp=2, zero_stage=1, recompute="full",
                                 framework="nanotron")
    e = estimate(m, hw, tr, pc, 64)
    # the host floor binds, so the bound names it (cost.step.HOST_FLOOR_BOUND), the framework's CPU
    assert e.overhead_s > e.matmul_s and e.bound.startswith("host issue floor")


def test_no_optimism_note_for_a_layout_that_does_not_fit():
    from shardplan.calibration import optimism_note
    # llama-3-8b replicated on 16 H100: 16 B x 8.03e9 parameters = 128 GB, does not fit; no MFU claim to flag
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=16, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, zero_stage=0)
    e = estimate(m, hw, tr, pc, 16)
    assert not e.fits and optimism_note(e) is None



def test_second_round_published_rows_and_records(tmp_path):
    from shardplan.calibration import load_rows
    # a PP of 1e300 is refused before a pipeline split of that many stages is built
    with pytest.raises(ConfigError, match="PP='1e300'.*larger than 1,048,576"):
        row_inputs({**load_rows()[0], "PP": "1e300"})
    bad = tmp_path / "b.jsonl"
    bad.write_bytes(b"\xff\xfe x\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        read_records(bad)
    bad.write_text("[" * 100000 + "]" * 100000 + "\n")
    with pytest.raises(ConfigError, match="nests too deeply"):
        read_records(bad)
    # 1e-300 tokens/s per device is a unit mix-up, not a run (legal: 1e-3 to 1e9)
    bad.write_text(json.dumps(_record(tokens_per_s_per_device=1e-300)) + "\n")
    with pytest.raises(ConfigError, match="tokens_per_s_per_device"):
        read_records(bad)


def test_second_round_cli_inputs(tmp_path):
    base = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--zero-stage", "1"]
    for text in ("1 0,22", "1_0,22", "\u0668,24"):  # a space inside a number, an underscore, an Arabic-Indic digit
        r = runner.invoke(app, base + ["--pp", "2", "--pp-layers", text])
        assert r.exit_code == 2 and "whole numbers" in r.output, text
    # a split without --pp sets pp = 2, as plan does
    assert runner.invoke(app, base + ["--pp-layers", "10,22", "--json"]).exit_code == 0
    # profile files: base relative to the file, booleans only for on/off fields, no base loop
    (tmp_path / "p.yaml").write_text("base: nanotron\n")
    (tmp_path / "p2.yaml").write_text("base: p.yaml\ncontext_parallel: 'off'\n")
    (tmp_path / "p3.yaml").write_text("base: p3.yaml\n")
    (tmp_path / "p4.yaml").write_text("base: p.yaml\ntp_overlap_slowdown: 0.5\n")
    for name, expect in (("p2", "legal: true or false"), ("p3", "name each other")):
        r = runner.invoke(app, base + ["--framework", str(tmp_path / f"{name}.yaml")])
        assert r.exit_code == 2 and expect in r.output, r.output
    assert runner.invoke(app, base + ["--framework", str(tmp_path / "p4.yaml")]).exit_code in (0, 1)


def test_reproduce_line_with_a_newline_in_a_path_stays_one_line(tmp_path):
    out = tmp_path / "new\nline.sh"
    r = runner.invoke(app, ["export", "--to", "megatron", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s",
                            "4096", "-b", "64", "--tp", "2", "--zero-stage", "1", "-o", str(out)])
    assert r.exit_code == 0, r.output
    line = next(x for x in out.read_text().splitlines() if "reproduce:" in x)
    assert line.endswith("line.sh'") and "$'" in line


def test_guide_flags_predictions_above_the_best_published_mfu():
    # llama-3-8b on 8 A100: the best layout's predicted MFU (~69%) is above the best published A100 bf16 run (60.7%
    # in the planner's MFU definition, llm.c's GPT-2 774M, a public run): marked, with a footnote naming the run; on
    # 8 H100 (~51%) it is below the H100 ceiling (NeMo 25.02's Llama 3.1 8B, 55.6%): not marked
    from shardplan.guide_table import guide_rows, rows_to_markdown
    rows = guide_rows("a100-80gb", ["llama-3-8b"], [8], 4096, 4 * 2**20)
    assert rows[0]["mfu"].endswith(" *") and "llm.c run_gpt2_774M" in rows[0]["ceiling"]
    assert not guide_rows("h100-sxm", ["llama-3-8b"], [8], 8192, 4 * 2**20)[0]["mfu"].endswith(" *")
    md = rows_to_markdown(rows, "a100-80gb", 4096)
    assert "% \\* |" in md and "above the best MFU published" in md


def test_a_sequence_longer_than_a_learned_position_table_is_refused(tmp_path):
    # gpt2 learns 1,024 positions (n_positions): seq_len 4,096 has no embedding for tokens 1,025 on; an empty
    # base: in a hardware file names the presets instead of reporting the first missing field
    from typer.testing import CliRunner
    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "gpt2", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "16"])
    assert r.exit_code == 2 and "learned position table of 1,024 rows" in r.output and "legal seq_len: 1 to 1,024" in r.output
    assert CliRunner().invoke(app, ["estimate", "-m", "gpt2", "-H", "h100-sxm", "-n", "8", "-s", "1024",
                                    "-b", "16"]).exit_code == 0
    hw = tmp_path / "hw.yaml"
    hw.write_text("base:\nname: x\n")
    r = CliRunner().invoke(app, ["estimate", "-m", "gpt2", "-H", str(hw), "-n", "8", "-s", "1024", "-b", "16"])
    assert r.exit_code == 2 and "base is empty; presets: a100-40gb" in r.output


def test_interleaved_microbatch_error_lists_microbatch_sizes_that_pass():
    # 8 GPUs, pp 8 (dp 1), global batch 16: microbatch 1 -> 16 microbatches (16 % 8 = 0), 2 -> 8, 4 -> 2 (no), 8 -> 2
    # ... so the legal sizes are 1 and 2; the message names the field and them, and each passes
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m, tr = MODELS["llama-3-8b"], TrainingSpec(seq_len=4096, global_batch_size=16)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(pp=8, schedule="interleaved", virtual_stages=2, microbatch_size=4), m, tr, 8)
    assert e.value.field == "microbatch_size" and e.value.legal == [1, 2] and "microbatch_size: 1, 2" in str(e.value)
    for b in e.value.legal:
        validate(ParallelConfig(pp=8, schedule="interleaved", virtual_stages=2, microbatch_size=b), m, tr, 8)


def test_record_with_an_unknown_framework_is_refused():
    base = dict(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch_size=8,
                parallel={"dp": 8}, tokens_per_s_per_device=1000.0)
    assert RunRecord(**base, framework="llm-foundry").framework == "llm-foundry"
    assert RunRecord(**base, framework="my_profile.yaml").framework == "my_profile.yaml"
    with pytest.raises(ValueError, match="framework='llm-fondry' is unknown; legal framework: .*llm-foundry"):
        RunRecord(**base, framework="llm-fondry")


def test_profile_file_sets_layout_defaults_and_keeps_its_base_kernel(tmp_path):
    from shardplan.presets.frameworks import framework_profile
    f = tmp_path / "p.yaml"
    f.write_text("base: nanotron\nlayout_defaults: {sp: false}\n")
    assert framework_profile(str(f)).layout_defaults == {"sp": False}
    f.write_text("base: nanotron\nlayout_defaults: {tp_overlap: 'yes'}\n")
    with pytest.raises(ConfigError, match="layout_defaults.*legal: a mapping of names to true or false"):
        framework_profile(str(f))
    # the attention kernel is the profile's field, not its name: a renamed llm-foundry keeps the Triton kernel and a
    # pytorch-fsdp named llm-foundry keeps FlashAttention-2
    from shardplan.cost.gemm import attention_kernel
    from shardplan.presets.hardware import HARDWARE
    f.write_text("base: llm-foundry\nname: my-foundry\n")
    p = framework_profile(str(f))
    assert attention_kernel(HARDWARE["h100-sxm"], p.name, p.attention_kernel).name == "triton"
    f.write_text("base: pytorch-fsdp\nname: llm-foundry\n")
    p = framework_profile(str(f))
    assert attention_kernel(HARDWARE["h100-sxm"], p.name, p.attention_kernel).name == "fa2"


def test_plan_with_pinned_virtual_stages_names_the_real_reason():
    # MPT-3B's 32 layers on pp 4 are 8 per stage: virtual_stages 3 does not divide them. The search pairs virtual
    # stages with the interleaved schedule only, so the refusal is that rule, not "needs schedule='interleaved'"
    r = runner.invoke(app, ["plan", "-m", "mpt-3b", "-H", "h100-sxm", "-n", "32", "-s", "2048", "-b", "64",
                            "--framework", "torchtitan", "--pp", "4", "--virtual-stages", "3"])
    assert r.exit_code == 2
    assert "virtual_stages=3 does not divide the 32/4 = 8 layers" in r.output and "legal virtual_stages: 2, 4, 8" in r.output
    ok = runner.invoke(app, ["plan", "-m", "mpt-3b", "-H", "h100-sxm", "-n", "32", "-s", "2048", "-b", "64",
                             "--framework", "torchtitan", "--pp", "4", "--virtual-stages", "2", "--json"])
    assert ok.exit_code == 0 and '"virtual_stages": 2' in ok.output


def test_batch_error_under_the_interleaved_schedule_lists_what_passes_both_rules():
    # llama-3-8b on 64 GPUs, tp 2, pp 4 -> dp 8; batch 128 with microbatch 3: 128 % 24 != 0. Microbatch sizes that
    # divide 128 / 8 = 16 are 1, 2, 4, 8, 16; the interleaved schedule also needs 16 / b microbatches divisible by
    # pp = 4: 1 (16), 2 (8), 4 (4) pass, 8 (2) and 16 (1) do not. Legal batches: multiples of 8 x 3 x 4 = 96
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m = MODELS["llama-3-8b"]
    pc = dict(tp=2, pp=4, schedule="interleaved", virtual_stages=2)
    with pytest.raises(ConfigError) as e:
        validate(ParallelConfig(**pc, microbatch_size=3), m, TrainingSpec(seq_len=4096, global_batch_size=128), 64)
    assert "legal microbatch_size for this batch: 1, 2, 4" in str(e.value) and "multiples of 96" in str(e.value)
    for b in (1, 2, 4):
        validate(ParallelConfig(**pc, microbatch_size=b), m, TrainingSpec(seq_len=4096, global_batch_size=128), 64)
    validate(ParallelConfig(**pc, microbatch_size=3), m, TrainingSpec(seq_len=4096, global_batch_size=96), 64)


def test_contiguous_context_chunks_need_only_seq_len_divisible_by_cp():
    # torchtitan (cp_load_balance false): 65,532 = 4 x 16,383 splits into 4 contiguous chunks, but not into the
    # 2 x 4 = 8 mirrored chunks a load-balanced split needs (65,532 / 8 = 8,191.5)
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    m = MODELS["llama-3-8b"]
    tt = framework_profile("torchtitan")
    validate(ParallelConfig(cp=4, zero_stage=3), m, TrainingSpec(seq_len=65532, global_batch_size=8, framework=tt), 8)
    with pytest.raises(ConfigError, match=r"needs seq_len divisible by 2\*cp = 8"):
        validate(ParallelConfig(cp=4, zero_stage=3), m, TrainingSpec(seq_len=65532, global_batch_size=8,
                                                       framework=tt.model_copy(update={"cp_load_balance": True})), 8)


def test_pp_beyond_the_layers_lists_the_pp_these_devices_allow():
    # MPT-3B (32 layers) on 64 GPUs: pp must divide 64 (dp re-derived) and be at most 32: 1, 2, 4, 8, 16, 32
    r = runner.invoke(app, ["estimate", "-m", "mpt-3b", "-H", "a100-80gb", "-n", "64", "-s", "2048", "-b", "512",
                            "--pp", "64"])
    assert r.exit_code == 2 and "legal pp on these devices (dp x pp = 64): 1, 2, 4, 8, 16, 32" in r.output


@pytest.mark.parametrize("plan, says", [
    ({"parallel": {"tp": 2}, "devices": "16"}, "devices='16'; legal: a whole number from 1 to 1,048,576"),
    ({"parallel": {"tp": 2}, "training": {"seq_len": -5}}, "training.seq_len=-5; legal: a whole number from 1"),
    ({"parallel": {"tp": 2}, "training": {"precision": 7}}, "training.precision=7; legal: a text value"),
    ({"parallel": {"tp": 2}, "training": [4096]}, "training=[4096]; legal: an object"),
    ({"parallel": {"pp": 2, "pp_layers": "16,16"}}, "pp_layers='16,16' is a text value; legal: a JSON list"),
])
def test_plan_file_training_devices_and_list_fields_are_typed_strictly(tmp_path, plan, says):
    # plan files are typed strictly (README): these were accepted ("devices": "16", a training block of any types)
    # or parsed as the flag's text ("16,16")
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(plan))
    r = runner.invoke(app, ["estimate", "--plan", str(f), "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s",
                            "4096", "-b", "32"])
    assert r.exit_code == 2 and says in " ".join(r.output.split()), r.output
    f.write_text(json.dumps({"parallel": {"tp": 2, "pp": 2, "pp_layers": [16, 16]}, "devices": 16,
                             "training": {"seq_len": None, "global_batch_size": None}}))  # what import writes
    ok = runner.invoke(app, ["estimate", "--plan", str(f), "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s",
                             "4096", "-b", "32", "--json"])
    assert ok.exit_code in (0, 1) and json.loads(ok.stdout)["parallel"]["pp_layers"] == [16, 16]


@pytest.mark.parametrize("args, note", [
    # 12 devices on 8-GPU nodes: one full node and 4 GPUs of a second; the data-parallel group of 12 is priced as 2
    # nodes of 6 (the largest part of 12 that fits a node of 8 and divides 12)
    (["-n", "12", "-b", "48", "--zero", "3"], "12 devices do not fill nodes of 8 (NVLink domain, scale_up_size): 1 "
     "full node(s) and 4 device(s) of one more, which is partly used (2 nodes in all); the estimate prices the "
     "data-parallel group of 12 as 6 per node on 2 nodes"),
    # 16 devices in domains of 3: 5 full and 1 device of a sixth; 16 splits as 2 per domain on 8 domains
    (["-n", "16", "-b", "64", "--scale-up-size", "3"], "16 devices do not fill nodes of 3 (NVLink domain, "
     "scale_up_size): 5 full node(s) and 1 device(s) of one more, which is partly used (6 nodes in all); the estimate "
     "prices the data-parallel group of 16 as 2 per node on 8 nodes")])
def test_devices_that_do_not_fill_the_nodes_get_a_note(args, note):
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-s", "4096", *args])
    assert r.exit_code in (0, 1) and note in " ".join(r.output.split()), r.output
    full = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-s", "4096", "-n", "16", "-b", "64"])
    assert "do not fill nodes" not in full.output  # 16 on nodes of 8: two full nodes, no note


def test_a_profile_precision_the_hardware_cannot_run_says_where_it_came_from(tmp_path):
    # a profile file whose default_precision is fp8-mixed, on an A100 (no fp8 units): the error says the precision is
    # the profile's and that --precision overrides it; with --precision bf16-mixed the same command runs
    prof = tmp_path / "fp8.yaml"
    prof.write_text("base: megatron\ndefault_precision: fp8-mixed\n")
    base = ["estimate", "-m", "llama-3-8b", "-H", "a100-sxm", "-n", "8", "-s", "4096", "-b", "64",
            "--framework", str(prof)]
    r = runner.invoke(app, base)
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "comes from the default_precision of the framework profile" in text, text
    assert "has no fp8 peak" in text and "give --precision bf16-mixed" in text
    assert runner.invoke(app, base + ["--precision", "bf16-mixed"]).exit_code in (0, 1)


def test_an_unknown_model_type_is_named(tmp_path):
    import re
    # breaker: {"model_type": "banana", ...} was refused for a missing 'architectures' list; a look-alike
    # 'llam\u0430' (Cyrillic a) printed as 'llama'. The unknown model_type is named, in ascii, with the legal ones
    import json

    from shardplan.errors import ConfigError
    from shardplan.loaders import load_model
    fields = dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=8, vocab_size=1000)
    for mt, shown in (("banana", "'banana'"), ("llam\u0430", "'llam\\u0430'")):
        f = tmp_path / f"{len(shown)}.json"
        f.write_text(json.dumps(dict(fields, model_type=mt)))
        with pytest.raises(ConfigError, match=rf"model_type={re.escape(shown)} is not supported.*legal model_type: llama"):
            load_model(str(f))
