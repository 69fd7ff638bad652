"""fp16 mixed precision (loss-scaled fp16, Micikevicius et al. 2018): the bf16 policies' bytes at the same GPU
tensor-core rate, refused on TPUs, and carried through the Megatron-LM and DeepSpeed export / import."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config
from shardplan.inputs import build_inputs
from shardplan.presets.hardware import HARDWARE

P_7B = 6_738_415_616  # llama-2-7b parameters (models list)


def _inputs(precision: str, hardware: str = "a100-80gb", **layout):
    return build_inputs(model="llama-2-7b", hardware=hardware, devices=8, seq_len=4096, global_batch=64,
                        global_batch_tokens=None, precision=precision, zero_stage=1, **layout)


def test_fp16_runs_at_the_16_bit_rate_with_the_bf16_bytes():
    # A100 datasheet: 312 TFLOPS dense for both fp16 and bf16 tensor cores
    assert HARDWARE["a100-80gb"].peak_flops("fp16") == 312e12 == HARDWARE["a100-80gb"].peak_flops("bf16")
    fp16 = estimate(*_inputs("fp16-mixed"), 8)
    bf16 = estimate(*_inputs("bf16-mixed"), 8)
    assert fp16.step_s == pytest.approx(bf16.step_s, rel=1e-12)
    # ZeRO-1 over dp = 8: 2 B fp16 weights + 2 B fp16 gradients per parameter, (4 B master + 8 B moments) / 8
    # 2 x 6,738,415,616 = 13,476,831,232 B; 12 x 6,738,415,616 / 8 = 10,107,623,424 B
    mem = fp16.memory
    assert mem.params == pytest.approx(13_476_831_232)
    assert mem.grads == pytest.approx(13_476_831_232)
    assert mem.optimizer == pytest.approx(10_107_623_424)
    # fp16-mixed-fp32-grads: 4 B gradients, 26,953,662,464 B
    assert estimate(*_inputs("fp16-mixed-fp32-grads"), 8).memory.grads == pytest.approx(4 * P_7B)


def test_tpu_refuses_fp16_naming_the_precisions_it_runs():
    with pytest.raises(ConfigError) as err:
        HARDWARE["tpu-v5p"].peak_flops("fp16")
    assert "no fp16 matrix units" in str(err.value)
    assert "fp16-mixed" not in err.value.legal and "bf16-mixed" in err.value.legal
    res = CliRunner().invoke(app, ["estimate", "-m", "llama-2-7b", "-H", "tpu-v5p", "-n", "8", "-s", "4096", "-b", "64",
                                   "--precision", "fp16-mixed"], terminal_width=200)
    assert res.exit_code == 2 and "legal precision: bf16-mixed" in res.output


def test_megatron_fp16_flags_round_trip():
    # Megatron-LM --fp16 keeps fp16 gradients unless --accumulate-allreduce-grads-in-fp32 (arguments.py)
    for precision, flags, absent in (("fp16-mixed", ["--fp16"], "--accumulate-allreduce-grads-in-fp32"),
                                     ("fp16-mixed-fp32-grads", ["--fp16", "--accumulate-allreduce-grads-in-fp32"],
                                      "--grad-reduce-in-bf16")):
        text = export_text("megatron", estimate(*_inputs(precision), 8))
        assert all(f in text for f in flags) and absent not in text and "--bf16" not in text
        assert import_config("megatron", text).precision == precision
    with pytest.raises(ConfigError, match="Megatron-LM --fp16 --bf16"):
        import_config("megatron", text + "\n--bf16\n")


def test_deepspeed_fp16_section_round_trips():
    text = export_text("deepspeed", estimate(*_inputs("fp16-mixed", microbatch_size=1), 8))
    cfg = json.loads(text)
    assert cfg["fp16"] == {"enabled": True} and cfg["bf16"] == {"enabled": False} and "data_types" not in cfg
    assert import_config("deepspeed", text, 8).precision == "fp16-mixed"
    with pytest.raises(ConfigError, match="fp16 and bf16|both true"):
        import_config("deepspeed", json.dumps({**cfg, "bf16": {"enabled": True}}), 8)
