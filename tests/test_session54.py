"""Fifty-fourth session fixes: each test fails on the code before the fix."""

import pytest

from shardplan.errors import ConfigError
from shardplan.loaders import load_hardware


def test_fp8_peak_on_a_tpu_generation_without_fp8_is_refused(tmp_path):
    # TPU v5p's MXU runs bf16 and int8 only; every TPU preset shares compute_arch 'tpu', which FP8_ARCHS admits for
    # TPU7x, so before the fix the file loaded and fp8 plans ran at 2 x 459 TFLOP/s
    f = tmp_path / "v5p-fp8.yaml"
    f.write_text("base: tpu-v5p\npeak_flops_fp8: 9.18e+14\n")
    with pytest.raises(ConfigError, match="no fp8 mode.*tpu7x") as e:
        load_hardware(str(f))
    assert e.value.field == "peak_flops_fp8"


def test_fp8_peak_on_tpu7x_or_a_new_generation_loads(tmp_path):
    f = tmp_path / "t7.yaml"
    f.write_text("base: tpu7x\npeak_flops_fp8: 2.3e+15\n")
    assert load_hardware(str(f)).peak_flops_fp8 == 2.3e15
    # a generation described from its own datasheet (its own bf16 peak) may have fp8
    g = tmp_path / "next.yaml"
    g.write_text("base: tpu-v6e\npeak_flops_bf16: 1.0e+15\npeak_flops_fp8: 2.0e+15\n")
    assert load_hardware(str(g)).peak_flops_fp8 == 2.0e15


def test_megatron_import_names_the_files_a_script_sources(tmp_path):
    # a script that takes flags from `source common_flags.sh` read as Megatron-LM's defaults without a word before
    from shardplan.export import import_config
    script = ("#!/bin/bash\nsource /opt/venv/bin/activate\nsource ./common_flags.sh\n. ./env.sh\n"
              "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 --num-layers 32 "
              "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
              "--micro-batch-size 1 --global-batch-size 64 --bf16 $COMMON_ARGS\n")
    f = tmp_path / "run.sh"
    f.write_text(script)
    imported = import_config("megatron", f.read_text())
    text = " ".join(imported.notes)
    assert "sources ./common_flags.sh, ./env.sh:" in text
    assert "activate" not in text  # a Python environment is no flag file
