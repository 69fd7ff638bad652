"""Breaker pass 44: what a breaker and a new user found, each with the behaviour it pins."""

from typer.testing import CliRunner

from shardplan.cli import app

runner = CliRunner()


def test_easydel_refusal_names_the_profile_it_is_priced_with(tmp_path):
    # EasyDeL has no profile of its own: on a GPU the plan is priced with the megatron profile, so a refusal from
    # that profile ("the megatron framework runs one pipeline schedule") said "megatron" after --to easydel
    args = ["export", "-m", "llama-3-8b", "-n", "16", "-s", "4096", "-b", "64", "--pp", "2",
            "--pipeline-flushes", "2", "--to", "easydel", "-o", str(tmp_path / "e.py")]
    for hardware, profile in (("h100-sxm", "megatron"), ("tpu-v5p", "maxtext")):
        r = runner.invoke(app, [*args, "-H", hardware])
        assert r.exit_code == 2, r.output
        text = " ".join(r.output.split())
        assert f"--to easydel prices with the hardware's default {profile} profile" in text, text
        assert "--framework chooses another" in text and "legal pipeline_flushes: 1" in text


def test_import_and_csv_errors_say_what_is_legal(tmp_path):
    # a ds_config whose batch is not micro batch x accumulation x dp: 33 is not a multiple of 1 x 4; the nearest
    # multiples of 4 are 32 and 36
    ds = tmp_path / "ds.json"
    ds.write_text('{"train_batch_size": 33, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4}')
    r = runner.invoke(app, ["import", str(ds), "--from", "deepspeed", "-n", "8", "-o", str(tmp_path / "p.json")])
    assert r.exit_code == 2 and "legal train_batch_size: a multiple of 4, e.g. 32 or 36" in " ".join(r.output.split())
    ds.write_text("hello")
    r = runner.invoke(app, ["import", str(ds), "--from", "deepspeed", "-n", "8", "-o", str(tmp_path / "p.json")])
    assert r.exit_code == 2 and "legal: a DeepSpeed config file" in " ".join(r.output.split()), r.output
    # a Latin-1 CSV: 'a,b\n1,caf' is 9 bytes, then 0xe9 on line 2
    csv = tmp_path / "x.csv"
    csv.write_bytes(b"a,b\n1,caf\xe9\n")
    r = runner.invoke(app, ["record", "import", str(csv), "-o", str(tmp_path / "x.jsonl")])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "is not UTF-8 text (byte 9, line 2" in text and "save it as UTF-8" in text, text


def test_virtual_stage_errors_name_the_flags_and_count_layers_right():
    # tiny-llama: 2 layers over pp 2 = 1 layer per stage: no virtual_stages > 1 divides it
    args = ["estimate", "-m", "tiny-llama", "-H", "h100-sxm", "-n", "8", "-s", "32", "-b", "16", "--pp", "2",
            "--schedule", "interleaved"]
    r = runner.invoke(app, [*args, "--virtual-stages", "2"])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "1 layer per pipeline stage" in text and "legal virtual_stages: none" not in text
    assert "legal: virtual_stages=1 (1 layer per stage) with schedule='1f1b' (--schedule 1f1b)" in text, text
    r = runner.invoke(app, [*args, "--virtual-stages", "1"])
    assert r.exit_code == 2 and "legal: --virtual-stages 2 or more, or --schedule 1f1b" in " ".join(r.output.split())
