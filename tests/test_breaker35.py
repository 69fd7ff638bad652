"""Fixes from a breaker pass on benchmarks/usp_versions.py, the nanotron-usp profile and the ``--doc`` files of the
usp_* benchmarks: each test fails on the behaviour it found."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.inputs import default_framework

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import usp_grid  # noqa: E402
import usp_versions  # noqa: E402

BEGIN, END = usp_versions.DOC_BEGIN, usp_versions.DOC_END
runner = CliRunner()


def _script(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "usp_versions.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, env=env)


def test_usp_versions_on_a_gpu_preset_without_a_framework_section():
    # --hardware h100-sxm (no framework: key) crashed with AttributeError: 'NoneType' object has no attribute
    # 'model_copy' (exit 1, a traceback); now the campaign's nanotron-usp profile, and the tables name what they used
    # instead of "shipped cluster file"
    r = _script("--hardware", "h100-sxm")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "hardware h100-sxm and the nanotron-usp profile" in r.stdout
    assert "shipped" not in r.stdout


def test_usp_versions_names_the_shipped_cluster_file_only_for_it():
    prof = default_framework(str(usp_grid.DEFAULT_HW))
    assert usp_versions.source_text(str(usp_grid.DEFAULT_HW), prof) == "shipped cluster file"
    assert usp_versions.source_text("h100-sxm", prof) == "hardware h100-sxm and the nanotron-usp profile"


@pytest.mark.parametrize("content, says", [
    (b"\xff\xfe" + BEGIN.encode() + END.encode(), "cannot be read as text"),
    (f"x\n{END}\ny\n{BEGIN}\n".encode(), "has the end marker before the start marker"),
    (f"{BEGIN}\n".encode(), f"has {BEGIN} without {END}"),
], ids=["not-utf8", "reversed", "one-marker"])
def test_a_broken_doc_is_refused_with_what_is_legal(tmp_path, content, says):
    # a non-UTF-8 --doc raised UnicodeDecodeError (a traceback, exit 1); a broken block said "legal: ... or neither",
    # but a file with neither marker is refused too
    doc = tmp_path / "d.md"
    doc.write_bytes(content)
    with pytest.raises(ConfigError) as e:
        usp_grid.check_marked_doc(doc, BEGIN, END)
    assert says in str(e.value) and "or neither" not in str(e.value) and f"{BEGIN} followed by {END}" in str(e.value)
    r = _script("--doc", doc)
    assert r.returncode == 2 and "Traceback" not in r.stderr and says in r.stderr
    assert doc.read_bytes() == content


def test_usp_grid_refuses_a_doc_that_is_not_text(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_bytes(b"\xff\xfe\x00")
    args = argparse.Namespace(fit=False, profile_out=None, hardware_out=None, by_nodes=False, out=None, doc=doc,
                              to_records=None)
    with pytest.raises(ConfigError, match="cannot be read as text"):
        usp_grid.check_arguments(args)


def test_usp_grid_doc_intro_names_the_profile_the_cluster_file_gives():
    # the intro said "framework profile `nanotron`", while usp-h100-efa.yaml names nanotron-usp (the plain nanotron
    # preset has no stall)
    name = default_framework(str(usp_grid.DEFAULT_HW)).name
    assert name == "nanotron-usp" and f"framework profile `{name}`" in usp_grid.DOC_INTRO


@pytest.mark.parametrize("value, named", [
    ('"nanotron-usp+pp_stall_min_nodes=16"', "nanotron-usp+pp_stall_min_nodes=16"),
    ('"megatron+loss=in_place"', "megatron+loss=in_place"),
    ("{base: megatron, loss: in_place}", "megatron"),
], ids=["nanotron-usp-inline", "megatron-inline", "megatron-mapping"])
def test_the_hardware_files_framework_note_keeps_its_overrides(tmp_path, value, named):
    # a hardware file's framework: nanotron-usp+field=value was announced as plain 'nanotron-usp', and one based on
    # megatron not at all
    hw = tmp_path / "hw.yaml"
    hw.write_text(f"base: h100-sxm\nname: t\nframework: {value}\n")
    r = runner.invoke(app, ["estimate", "-m", "llama-3-8b", "-H", str(hw), "-n", "64", "-s", "4096", "-b", "256",
                            "--tp", "8", "--pp", "2"])
    assert r.exit_code == 0, r.output
    assert f"framework profile '{named}' from the hardware file" in r.stderr


def test_stall_triggers_on_a_profile_without_a_stall_constant_are_named_as_idle():
    # nanotron (the current build) has pp_message_stall_s = 0: a trigger set on it prices nothing, and the note says so;
    # nanotron-usp (stall 0.252 s) with its own triggers gets no such note
    args = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256", "--tp", "8",
            "--pp", "2"]
    idle = CliRunner().invoke(app, [*args, "--framework", "nanotron+pp_stall_min_nodes=2"])
    assert idle.exit_code == 0 and "pp_stall_min_nodes of the nanotron+pp_stall_min_nodes=2 profile has no effect" in idle.output
    usp = CliRunner().invoke(app, [*args, "--framework", "nanotron-usp"])
    assert usp.exit_code == 0 and "no effect" not in usp.output
