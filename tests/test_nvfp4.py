"""NVFP4 (fp4) linear layers on Blackwell: the precision policy, the hardware's fp4 peak and rate, the GEMM model's
K step, the Megatron-LM flags both ways and the errors on hardware without fp4 tensor cores.

Expected numbers are derived by hand in the comments (datasheet peaks: NVIDIA GB200 NVL72, DGX B200)."""

from __future__ import annotations

import shlex

import pytest

from shardplan.cost.gemm import GemmShape, gemm_time
from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import export_text, import_config, megatron
from shardplan.inputs import build_inputs
from shardplan.loaders import load_hardware
from shardplan.presets.hardware import HARDWARE
from shardplan.specs.training import PRECISION_POLICIES, QUANTIZED_INPUT_BYTES


def test_fp4_peak_and_rate_follow_the_datasheets_and_the_fp8_fraction():
    # GB200 NVL72: 1,440 PFLOPS fp4 with sparsity per 72 GPUs -> 10 PF dense; the rate is the fp8 fraction (0.48)
    gb200, b200 = HARDWARE["gb200"], HARDWARE["b200"]
    assert gb200.peak_flops("fp4") == 10e15 and b200.peak_flops("fp4") == 9e15
    assert gb200.achieved_matmul_flops("fp4") == pytest.approx(10e15 * 0.48)  # 4.8 PFLOP/s
    assert gb200.model_copy(update={"fp4_matmul_efficiency": 0.4}).achieved_matmul_flops("fp4") == pytest.approx(4e15)
    assert gb200.achieved_matmul_flops("fp4") == pytest.approx(2 * gb200.achieved_matmul_flops("fp8"))
    assert PRECISION_POLICIES["nvfp4-mixed"].quantized and QUANTIZED_INPUT_BYTES["fp4"] == 0.5 + 1 / 16


def test_a_large_fp4_gemm_runs_at_the_fp4_rate():
    # 8192^3 on B200 splits into whole 128x256 tiles and K steps in both dtypes (K step 128 fp8 / 256 fp4 elements):
    # 2,048 tiles in ceil(2048 / 148) = 14 waves of the 148 SMs, so math time = 2 x 8192^3 x (14 x 148 / 2048) / rate:
    # fp8 1.0995e12 x 1.01172 / (0.48 x 4.5e15) = 0.5150 ms, fp4 half of it (twice the peak, the same fraction)
    b200 = HARDWARE["b200"]
    g8, g4 = (gemm_time(GemmShape(8192, 8192, 8192), b200, d, in_bytes=QUANTIZED_INPUT_BYTES[d]) for d in ("fp8", "fp4"))
    assert (g8.tiles, g8.waves, g4.tiles, g4.waves) == (2048, 14, 2048, 14)
    assert g8.math_s == pytest.approx(2 * 8192 ** 3 * (14 * 148 / 2048) / (0.48 * 4.5e15), rel=1e-9)
    assert g4.math_s == pytest.approx(g8.math_s / 2, rel=1e-9)


def test_fp4_on_hardware_without_fp4_tensor_cores_is_refused_by_name():
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=32,
                                 global_batch_tokens=None, precision="nvfp4-mixed")
    with pytest.raises(ConfigError) as err:
        estimate(m, hw, tr, pc, 8)
    assert "h100-sxm has no fp4 peak" in str(err.value) and "fp8-mixed" in err.value.legal
    assert "nvfp4-mixed" not in err.value.legal


def test_nvfp4_round_trips_through_megatron_flags_and_mxfp4_is_refused():
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="gb200", devices=8, seq_len=4096, global_batch=32,
                                 global_batch_tokens=None, precision="nvfp4-mixed", zero_stage=1)
    e = estimate(m, hw, tr, pc, 8)
    text = export_text("megatron", e)
    a, _ = megatron.parser().parse_known_args(shlex.split(text, comments=True))
    assert (a.fp4_format, a.fp4_recipe, a.fp8_format) == ("e2m1", "nvfp4", None)
    assert import_config("megatron", text).precision == "nvfp4-mixed"
    with pytest.raises(ConfigError, match="the planner prices NVFP4 only"):
        import_config("megatron", text.replace("--fp4-recipe nvfp4", "--fp4-recipe mxfp4"))
    # a framework without an fp4 recipe refuses the precision and names the one that writes it
    with pytest.raises(ConfigError, match=r"cannot express precision='nvfp4-mixed'.*--fp4-format e2m1"):
        export_text("torchtitan", e)


def test_megatron_import_refuses_mixed_quantized_flags_and_notes_what_it_does_not_price():
    base = "--num-layers 32 --tensor-model-parallel-size 1 --bf16 --micro-batch-size 1 --global-batch-size 8 " \
           "--seq-length 4096 --nproc-per-node 8"
    with pytest.raises(ConfigError, match="fp8 and fp4 recipes are exclusive"):
        import_config("megatron", base + " --fp8-format hybrid --fp4-format e2m1")
    with pytest.raises(ConfigError, match="fp4 primary weights need an fp4 recipe"):
        import_config("megatron", base + " --fp4-param-gather")
    imp = import_config("megatron", base + " --fp4-format e2m1 --fp4-recipe nvfp4 --fp4-param-gather "
                                           "--first-last-layers-bf16")
    # the third note: --bf16 without --grad-reduce-in-bf16 keeps fp32 gradients, priced as bf16 ones
    # three notes, and Megatron-LM's default dropout the script leaves on (session 58)
    assert imp.precision == "nvfp4-mixed" and len([n for n in imp.notes if not n.startswith("dropout on:")]) == 3
    assert any("--fp4-param-gather" in n for n in imp.notes) and any("--first-last-layers-bf16" in n for n in imp.notes)
    assert any("--grad-reduce-in-bf16" in n for n in imp.notes)


def test_estimate_notes_nvfp4_under_a_framework_without_the_recipe():
    from shardplan.cli.estimate import fp4_note
    from shardplan.presets.frameworks import framework_profile
    notes = {}
    for fw in ("megatron", "torchtitan"):
        m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="b200", devices=8, seq_len=4096, global_batch=32,
                                     global_batch_tokens=None, precision="nvfp4-mixed", zero_stage=0)
        notes[fw] = fp4_note(estimate(m, hw, tr.model_copy(update={"framework": framework_profile(fw)}), pc, 8))
    assert notes["megatron"] is None and "torchtitan profile's framework has no such recipe" in notes["torchtitan"]


def test_blackwell_ultra_nvfp4_rate_is_twice_its_fp8_rate_as_on_blackwell():
    # GB300: fp8 rate 0.53 x 5 PF = 2.65 PF/s; NVFP4 = 2 x that = 5.3 PF/s = 0.3533 of its 15 PF peak (not 0.53 x 15 =
    # 7.95 PF/s); B300: 2 x 0.53 x 4.5 PF = 4.77 PF/s of 14 PF. GB200 keeps the fp8 fraction: 0.48 x 10 PF = 4.8 PF/s
    gb300, b300, gb200 = HARDWARE["gb300"], HARDWARE["b300"], HARDWARE["gb200"]
    assert gb300.achieved_matmul_flops("fp4") == pytest.approx(5.3e15)
    assert gb300.matmul_efficiency_of("fp4") == pytest.approx(5.3 / 15)
    assert b300.achieved_matmul_flops("fp4") == pytest.approx(4.77e15)
    assert gb200.achieved_matmul_flops("fp4") == pytest.approx(4.8e15)


def test_ultra_nvfp4_rate_follows_a_calibrated_fp8_rate_and_overridden_peaks():
    # fp8 rate 0.70 (a calibrate -o file): NVFP4 = 2 x 0.70 x 5 PF = 7.0 PF/s (not the preset's 5.3); an fp4 peak cut to
    # 6 PF caps NVFP4 at 6 PF/s (2 x 2.65 = 5.3 PF/s fits under it: 5.3), never below fp8's 2.65 PF/s
    gb300 = HARDWARE["gb300"]
    assert gb300.model_copy(update={"fp8_matmul_efficiency": 0.70}).achieved_matmul_flops("fp4") == pytest.approx(7.0e15)
    assert gb300.model_copy(update={"peak_flops_fp4": 6e15}).achieved_matmul_flops("fp4") == pytest.approx(5.3e15)
    assert gb300.model_copy(update={"peak_flops_fp4": 5e15}).achieved_matmul_flops("fp4") == pytest.approx(5.0e15)


def test_a_narrower_format_cannot_have_a_lower_peak(tmp_path):
    f = tmp_path / "hw.yaml"
    f.write_text("base: b200\npeak_flops_fp4: 1.0e12\n")
    with pytest.raises(ConfigError, match="peak_flops_fp4=1e\\+12 is below peak_flops_fp8=4.5e\\+15"):
        load_hardware(str(f))


def test_quantized_mfu_is_also_given_against_the_bf16_peak():
    # GB300: fp4 peak 15 PF, bf16 2.5 PF -> MFU of the bf16 peak = 6 x MFU of the fp4 peak; bf16 runs: the same number
    m, h, t, p = build_inputs(model="llama-3-8b", hardware="gb300", devices=8, seq_len=4096, global_batch=16,
                              global_batch_tokens=None, precision="nvfp4-mixed", zero_stage=1)
    e = estimate(m, h, t, p, 8)
    assert e.mfu_of_bf16_peak == pytest.approx(6 * e.mfu) and e.to_dict()["mfu_of_bf16_peak"] == e.mfu_of_bf16_peak
