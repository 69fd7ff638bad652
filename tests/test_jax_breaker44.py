"""What a new user of the runtime found (session 44), each with the behaviour it pins: notes instead of silence or
raw Python warnings, and errors that say what is legal."""

import pytest
from typer.testing import CliRunner

from shardplan.cli import app

runner = CliRunner()
BASE = ["train", "--model", "tiny-llama", "--devices", "8", "--seq-len", "32", "--global-batch", "16",
        "--compute-dtype", "fp32"]


def _text(r):
    return " ".join(r.output.split())


def test_train_notes_the_plan_setup_the_unexecuted_fields_and_a_changed_schedule(tmp_path):
    pytest.importorskip("jax")
    plan = tmp_path / "plan.json"
    r = runner.invoke(app, ["plan", "-m", "tiny-llama", "-H", "h100-sxm", "-n", "8", "-s", "64", "-b", "16", "--json"])
    assert r.exit_code == 0
    plan.write_text(r.stdout)
    # --plan made for seq 64 / batch 16 / dp 8, run at seq 32 / batch 8 with tp 2 (dp 4): said, not silent
    r = runner.invoke(app, [*BASE[:5], "--seq-len", "32", "--global-batch", "8", "--plan", str(plan), "--tp", "2",
                            "--steps", "2"])
    assert r.exit_code == 0, r.output
    assert f"--plan {plan} was made for seq_len 64 (here 32), global_batch_size 16 (here 8), dp 8 (here 4)" \
        in _text(r), _text(r)
    # a layout field the runtime does not execute is a note, not a Python UserWarning with its source line
    ck = tmp_path / "ck"
    r = runner.invoke(app, [*BASE, "--steps", "2", "--zero-stage", "3", "--offload-optimizer",
                            "--checkpoint-dir", str(ck)])
    assert r.exit_code == 0, r.output
    assert "note: offload_optimizer=True is not executed by the JAX runtime" in _text(r) and "UserWarning" not in r.output
    # resuming with another --steps stretches the learning-rate schedule: a note (steps 3-20 of a resumed run
    # differed from an uninterrupted one by up to 7.8% without one); onto another layout: a note, not WARNING:...
    r = runner.invoke(app, [*BASE, "--steps", "3", "--tp", "2", "--checkpoint-dir", str(ck), "--resume"])
    assert r.exit_code == 0, r.output
    text = _text(r)
    assert "note: the learning-rate schedule changes (--steps 2 -> 3): steps 1-2 followed the saved run's" in text
    assert "note: resuming step 2 saved with FSDP(ZeRO-3) (mesh axes" in text and "WARNING" not in text
    assert "on mesh mesh" not in text


def test_runtime_etp_error_names_one_way_out():
    pytest.importorskip("jax")
    # sp=True would not help either (the runtime splits experts over tp as the dense layers): one legal etp
    r = runner.invoke(app, ["train", "--model", "tiny-moe", "--devices", "8", "--tp", "2", "--ep", "2", "--etp", "1",
                            "--steps", "2"])
    assert r.exit_code == 2
    assert ("etp=1 != tp=2 needs sp=True, and with sp=True: etp=1 is not implemented by the jax-runtime framework"
            in _text(r)) and "legal etp: 2 (= tp; or leave --etp out)" in _text(r), _text(r)
    assert "(none with the other settings" not in _text(r)


def test_param_override_errors_name_the_override_and_what_is_legal():
    pytest.importorskip("jax")
    base = ["shardings", "--model", "tiny-llama", "--devices", "8"]
    # wqkv (64, 2, 4, 16): its 2 KV groups cannot split over fsdp = 8; the spec is mesh axes, not logical ones
    r = runner.invoke(app, [*base, "--zero-stage", "3", "--param-spec", "attn/wqkv=None,fsdp,None,None"])
    text = _text(r)
    assert r.exit_code == 2 and "param_overrides 'attn/wqkv' (--param-rule / --param-spec)" in text, text
    assert "spec (None, 'fsdp', None, None)" in text and "logical axes" not in text
    assert "legal for this dimension: None (replicated)" in text
    r = runner.invoke(app, [*base, "--param-rule", "w_down$=None"])
    text = _text(r)
    assert r.exit_code == 2 and "param_overrides 'w_down$'" in text
    assert "1 logical axes for a rank-2 array; legal: 2 entries, one per dimension" in text, text


def test_a_corpus_too_small_is_refused_before_the_compile(tmp_path):
    pytest.importorskip("jax")
    small = tmp_path / "small.txt"
    small.write_text("tiny\n")  # 5 bytes + the separator: 0 sequences of 33 tokens
    r = runner.invoke(app, [*BASE, "--steps", "2", "--data", str(small)])
    assert r.exit_code == 2 and "fewer than global_batch_size=16" in _text(r)
    assert "compiling (first step)" not in r.output and "memory:" not in r.output
