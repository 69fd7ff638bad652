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
