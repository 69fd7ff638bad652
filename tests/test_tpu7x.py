"""The TPU7x (Ironwood) preset: one JAX device per chiplet, its constants derived by hand from the sources its
entry cites, and the names a user or JAX gives it."""

import pytest

from shardplan.calibration import hardware_of
from shardplan.presets.hardware import HARDWARE, hardware_preset_name

GiB = 2**30


def test_tpu7x_is_one_chiplet_of_the_published_chip():
    h = HARDWARE["tpu7x"]
    # Google Cloud TPU7x table, per chip: 2307 TFLOP/s bf16, 4614 fp8, 192 GiB HBM at 7380 GB/s; JAX exposes two
    # devices per chip -> per device 2307e12 / 2 = 1.1535e15, 4614e12 / 2 = 2.307e15, 192 / 2 = 96 GiB, 7.38e12 / 2
    # = 3.69e12 B/s
    assert h.peak_flops_bf16 == pytest.approx(1.1535e15)
    assert h.peak_flops_fp8 == pytest.approx(2.307e15)
    assert h.hbm_bytes == 96 * GiB
    assert h.hbm_bandwidth == pytest.approx(3.69e12)
    # 9216 chips per pod x 2 devices = 18,432 devices in one ICI domain; 4 chips per VM x 2 = 8 devices per host
    assert h.scale_up_size == 18432 and h.devices_per_host == 8
    # DCN 100 Gb/s per chip = 12.5e9 B/s, half per chiplet = 6.25e9
    assert h.scale_out_bandwidth == pytest.approx(6.25e9)
    # GEMM microbenchmark: 956.4 TFLOP/s of a 1153.5 TFLOP/s TensorCore = 0.829
    assert h.matmul_efficiency == pytest.approx(956.4 / 1153.5, abs=0.005)
    # the XLA:TPU runtime reserve of the other TPU entries, the 256x256 MXU, a 3D torus
    assert h.runtime_reserve_bytes == 1.25 * GiB and h.gemm_tiles == ((256, 256),) and h.ici_dims == 3
    # host link: the Scaling Book's 1.6e10 B/s per TPU (v6e's 3.2e10 is the only exception it names), per chip,
    # shared by its two chiplets: 8e9 per device
    assert h.host_bandwidth == pytest.approx(8e9)
    for name in ("tpu-v4", "tpu-v5e", "tpu-v5p"):
        assert HARDWARE[name].host_bandwidth == pytest.approx(1.6e10), name
    assert HARDWARE["tpu-v6e"].host_bandwidth == pytest.approx(3.2e10)
    for field in ("all", "matmul_efficiency", "fp8_matmul_efficiency", "scale_up_bandwidth", "host_bandwidth",
                  "gemm_tiles", "hbm"):
        assert h.sources.get(field), field


@pytest.mark.parametrize("text", ["TPU7x", "tpu7x", "Ironwood", "TPU v7x", "tpu-7x"])
def test_tpu7x_names(text):
    # "TPU7x" is jax.Device.device_kind on Ironwood (jax pallas tpu_info.py), what train --record writes
    assert hardware_preset_name(text) == "tpu7x"


def test_published_rows_name_tpu7x():
    # the hardware column of benchmarks/public_runs.py rows (calibration.HARDWARE_OF_COLUMN)
    assert hardware_of("TPU7x").name == "tpu7x" and hardware_of("Ironwood 4x4x4").name == "tpu7x"
