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
        import_config("megatron", text.replace("MEGATRON_ARGS=(", "MEGATRON_ARGS=(\n  --bf16"))  # in the launcher's array


def test_deepspeed_fp16_section_round_trips():
    text = export_text("deepspeed", estimate(*_inputs("fp16-mixed", microbatch_size=1), 8))
    cfg = json.loads(text)
    assert cfg["fp16"] == {"enabled": True} and cfg["bf16"] == {"enabled": False} and "data_types" not in cfg
    assert import_config("deepspeed", text, 8).precision == "fp16-mixed"
    with pytest.raises(ConfigError, match="fp16 and bf16|both true"):
        import_config("deepspeed", json.dumps({**cfg, "bf16": {"enabled": True}}), 8)


def test_v100_and_mi250x_presets_from_their_datasheets():
    from shardplan.presets.hardware import hardware_preset_name
    v100, mi250x = HARDWARE["v100"], HARDWARE["mi250x"]
    # V100: 640 tensor cores x 64 FMA x 2 FLOP x 1.53 GHz = 125.3 TFLOPS fp16 (datasheet 125), no bf16
    assert v100.peak_flops("fp16") == 125e12 and not v100.runs_dtype("bf16")
    # GEMM rate derived, not fitted: 83 / 125 (Markidis et al. 2018) x 0.59 / 0.73 (h100-sxm) = 0.537 -> 0.54
    assert v100.matmul_efficiency == 0.54 and v100.isolated_matmul_efficiency == 0.664
    # MI250X GCD: 1.7 GHz x 110 CUs x 1,024 FLOP per clock = 191.5 TFLOPS bf16 / fp16 (383.0 per 2-GCD package)
    assert mi250x.peak_flops("bf16") == 191.5e12 == mi250x.peak_flops("fp16")
    assert mi250x.hbm_bytes == 64 * 2**30 and mi250x.scale_out_bandwidth == 100e9 / 8  # 4 x 25 GB/s per 8 GCDs
    assert hardware_preset_name("Tesla V100") == "v100" and hardware_preset_name("AMD MI250X") == "mi250x"


def test_v100_takes_the_fp16_counterpart_of_the_default_precision():
    runner = CliRunner()
    base = ["estimate", "-m", "llama-2-7b", "-H", "v100", "-n", "16", "-s", "2048", "-b", "64", "--zero-stage", "3"]
    res = runner.invoke(app, base + ["--json"], terminal_width=300)
    assert res.exit_code == 0, res.output
    assert "precision fp16-mixed: v100 has no bf16 tensor cores" in res.stderr
    assert "attention naive: FlashAttention runs on Ampere" in res.stderr  # not on Volta
    res = runner.invoke(app, base + ["--precision", "bf16-mixed"], terminal_width=300)
    assert res.exit_code == 2 and "legal precision: fp16-mixed, fp16-mixed-fp32-grads, fp32" in res.output


def test_volta_defaults_to_unfused_attention_and_the_guide_prices_fp16():
    from shardplan.guide_table import guide_rows
    runner = CliRunner()
    res = runner.invoke(app, ["estimate", "-m", "llama-2-7b", "-H", "v100", "-n", "16", "-s", "2048", "-b", "64",
                              "--zero-stage", "3", "--json"], terminal_width=300)
    assert res.exit_code == 0 and json.loads(res.stdout)["training"]["attention"] == "naive"
    assert "attention naive: FlashAttention runs on Ampere and newer" in res.stderr
    # a plan on V100 never ranks context parallelism: the ring needs a blockwise kernel, which unfused attention is
    # not, and Megatron-LM's a2a runs through Transformer Engine, whose context parallelism needs one too
    res = runner.invoke(app, ["plan", "-m", "gpt3-175b", "-H", "v100", "-n", "512", "-s", "2048", "-b", "1536", "--json"],
                        terminal_width=300)
    assert res.exit_code == 0 and all(r["parallel"]["cp"] == 1 for r in json.loads(res.stdout)["plans"])
    rows = guide_rows("v100", ["llama-2-7b"], [16], 2048, 2**20)
    assert rows and all("no bf16" not in str(r) for r in rows)


def test_mi250x_fp32_is_a_quarter_of_its_16_bit_rate():
    # CDNA 2 whitepaper: 95.7 TFLOPS fp32 matrix per 2-GCD package -> 47.85 per GCD = 191.5 / 4 (no TF32)
    assert HARDWARE["mi250x"].peak_flops("fp32") == pytest.approx(191.5e12 / 4, rel=1e-3)


def test_device_query_names_and_deepspeed_legacy_sections():
    from shardplan.presets.hardware import hardware_preset_name
    assert hardware_preset_name("AMD Instinct MI250X") == "mi250x"  # rocm-smi
    assert hardware_preset_name("Tesla V100-SXM2-32GB") == "v100"  # nvidia-smi
    assert hardware_preset_name("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert hardware_preset_name("NVIDIA H100 PCIe") is None  # a part without a preset stays refused
    base = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
            "zero_optimization": {"stage": 1}}
    # runtime/config.py get_bfloat16_config reads the legacy "bfloat16" section when "bf16" is absent
    assert import_config("deepspeed", json.dumps({**base, "bfloat16": {"enabled": True}}), 8).precision == "bf16-mixed"
    with pytest.raises(ConfigError, match="both true"):
        import_config("deepspeed", json.dumps({**base, "bfloat16": {"enabled": True}, "fp16": {"enabled": True}}), 8)
    with pytest.raises(ConfigError, match="Apex AMP") as err:
        import_config("deepspeed", json.dumps({**base, "amp": {"enabled": True}}), 8)
    assert err.value.field == "amp"


def test_exporters_without_fp16_say_none_of_theirs_runs_on_v100():
    runner = CliRunner()
    res = runner.invoke(app, ["export", "--to", "nanotron", "-m", "llama-2-7b", "-H", "v100", "-n", "16", "-s", "2048",
                              "-b", "64", "--precision", "fp16-mixed", "-o", "x.yaml"], terminal_width=300)
    assert res.exit_code == 2 and "none of them runs on v100" in res.output and "Megatron-LM, DeepSpeed, Hugging Face Accelerate write it" in res.output


def test_records_check_the_precision_and_default_to_fp16_on_v100():
    from shardplan.calibrate import cases, valid_cases
    from shardplan.presets.frameworks import framework_profile
    from shardplan.records import RunRecord
    rec = dict(model="llama-2-7b", hardware="v100", devices=16, seq_len=2048, global_batch_size=64,
               parallel={"zero_stage": 3}, status="ok", tokens_per_s_per_device=1000.0)
    with pytest.raises(Exception, match="precision='half' is unknown"):
        RunRecord.model_validate({**rec, "precision": "half"})
    assert RunRecord.model_validate({**rec, "precision": "FP16-Mixed"}).precision == "fp16-mixed"
    kept, _ = valid_cases(cases([RunRecord.model_validate(rec)]), HARDWARE["v100"], framework_profile("megatron"))
    assert kept[0].training.precision.name == "fp16-mixed" and kept[0].training.precision.compute_dtype == "fp16"


def test_megatron_torch_fsdp2_imports_as_zero3():
    # Megatron-LM --use-torch-fsdp2: PyTorch FSDP2 fully_shard of every module (parameters too), i.e. ZeRO-3; it was
    # read as ZeRO-0 (the flag was unknown to the importer)
    text = export_text("megatron", estimate(*_inputs("fp16-mixed"), 8))
    assert "--use-distributed-optimizer" in text
    fsdp2 = text.replace("--use-distributed-optimizer", "--use-torch-fsdp2")
    assert import_config("megatron", fsdp2).parallel.zero_stage == 3


def test_deepspeed_refuses_fp16_with_fp32_accumulation_without_zero():
    # engine.py _do_optimizer_sanity_check: "unsupported mix of model dtype and gradient accumulation type" at ZeRO-0
    with pytest.raises(ConfigError, match="fp16-mixed-fp32-grads at zero_stage=0") as err:
        estimate(*build_inputs(model="llama-2-7b", hardware="a100-80gb", devices=8, seq_len=2048, global_batch=64,
                               global_batch_tokens=None, precision="fp16-mixed-fp32-grads", framework="deepspeed",
                               zero_stage=0), 8)
    assert err.value.legal == ["fp16-mixed"]
    # Megatron-LM runs it (--fp16 --accumulate-allreduce-grads-in-fp32)
    assert estimate(*_inputs("fp16-mixed-fp32-grads"), 8).step_s > 0


def test_unfused_attention_is_exported_to_megatron_and_amd_links_are_named():
    from shardplan.cost.comm import level_names
    # Megatron-LM arguments.py --attention-backend {flash, fused, unfused, local, auto}: a plan priced with the unfused
    # attention core says so; import records it (the plan's training.attention, applied by estimate --plan)
    m, hw, tr, pc = build_inputs(model="llama-2-7b", hardware="v100", devices=16, seq_len=2048, global_batch=64,
                                 global_batch_tokens=None, attention=None, zero_stage=1, tp=4, recompute="full")
    text = export_text("megatron", estimate(m, hw, tr, pc, 16))
    assert tr.attention == "naive" and "--attention-backend unfused" in text and "--fp16" in text
    assert import_config("megatron", text).attention == "naive"
    assert import_config("megatron", text).to_plan()["training"]["attention"] == "naive"
    assert level_names(HARDWARE["mi250x"])[0] == "Infinity Fabric" and level_names(HARDWARE["h100-sxm"])[0] == "NVLink"


def test_torchtitan_refuses_fp16():
    # torchtitan job_config.py: mixed_precision_param is Literal["bfloat16", "float32"]; its compile variant inherits
    for fw in ("torchtitan", "torchtitan-compile"):
        with pytest.raises(ConfigError, match=f"not implemented by the {fw} framework") as err:
            estimate(*build_inputs(model="llama-2-7b", hardware="a100-80gb", devices=8, seq_len=2048, global_batch=64,
                                   global_batch_tokens=None, precision="fp16-mixed", framework=fw), 8)
        assert "fp16-mixed" not in err.value.legal and "bf16-mixed" in err.value.legal and "fp32" in err.value.legal
    # a framework whose FSDP2 policy takes any dtype is not refused (NeMo AutoModel)
    assert estimate(*build_inputs(model="llama-2-7b", hardware="a100-80gb", devices=8, seq_len=2048, global_batch=64,
                                  global_batch_tokens=None, precision="fp16-mixed", framework="automodel"), 8).step_s > 0


def test_torchtitan_on_v100_names_only_what_both_run():
    # V100 has no bf16 and torchtitan no fp16: of the precisions, fp32 alone runs on both (every legal value listed
    # passes the checks after it)
    with pytest.raises(ConfigError, match="legal precision on v100: fp32,") as err:
        build_inputs(model="llama-2-7b", hardware="v100", devices=16, seq_len=2048, global_batch=64,
                     global_batch_tokens=None, framework="torchtitan")
    assert err.value.legal == ["fp32"]
    assert estimate(*build_inputs(model="llama-2-7b", hardware="v100", devices=16, seq_len=2048, global_batch=64,
                                  global_batch_tokens=None, framework="torchtitan", precision="fp32"), 16).step_s > 0
