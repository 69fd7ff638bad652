"""Host memory of offloaded model state: DeepSpeed's fp32 gradient partition on the host, the platforms' system
memory (HardwareSpec.host_memory_bytes) as a limit that estimate and plan check, and the FSDP note when the
optimizer offload also moves the parameters."""
import json

import pytest
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.cost.memory import host_bytes_by_stage
from shardplan.inputs import hardware_spec
from shardplan.cost.step import estimate
from shardplan.loaders import load_hardware
from shardplan.parallel import ParallelConfig, validate
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

N_8B, N_70B, N_405B = 8_030_261_248, 70_553_706_496, 405_853_388_800
GiB, TiB = 2**30, 2**40


def _ds(seq=2048, batch=8, fw="deepspeed"):
    return TrainingSpec(seq_len=seq, global_batch_size=batch, framework=FRAMEWORKS[fw])


def test_deepspeed_zero1_offload_keeps_an_fp32_gradient_partition_on_the_host():
    # llama-3-8b, ZeRO-1 over 8 devices, optimizer offloaded: each rank's host holds its partition's fp32 gradient
    # (4 B), fp32 master (4 B) and two fp32 moments (8 B): 16 B x 8,030,261,248 / 8 = 16,060,522,496 B
    # (DeepSpeed stage_1_and_2.py: single_partition_of_fp32_groups[i].grad is a pinned fp32 host tensor of the
    # partition's size, not a bf16 copy of the whole gradient)
    tr = _ds()
    p = ParallelConfig(dp=8, zero_stage=1, offload_optimizer=True)
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 8)
    assert e.memory.host_offload == pytest.approx(16 * N_8B / 8)
    # on the device only the contiguous gradient buckets, which CPU offload turns on (2 x 5e8 bf16 elements with
    # overlap_comm; stage_1_and_2.py "CPU-Offload requires contiguous gradients")
    assert e.memory.grads == pytest.approx(2 * 5e8 * 2) and e.memory.optimizer == 0


def test_host_memory_per_host_is_the_devices_of_one_host_times_their_share():
    # llama-3-70b, ZeRO-3 over 16 A100 80GB (two hosts of 8), parameters and optimizer offloaded (DeepSpeed):
    # per device (2 + 4 + 12) B x 70,553,706,496 / 16 = 79,372,919,808 B; one host holds 8 of them
    tr = _ds(batch=16)
    p = ParallelConfig(dp=16, zero_stage=3, offload_optimizer=True, offload_params=True)
    e = estimate(MODELS["llama-3-70b"], HARDWARE["a100-80gb"], tr, p, 16)
    assert max(host_bytes_by_stage(e.model, e.training, e.layout)) == pytest.approx(18 * N_70B / 16)
    assert e.host_memory_per_host == pytest.approx(8 * 18 * N_70B / 16)
    assert e.failure is None and e.to_dict()["host_memory_per_host_bytes"] == pytest.approx(18 * N_70B / 2)


def test_offloaded_state_beyond_a_host_is_a_predicted_failure():
    # llama-3.1-405b on one DGX H100 (8 GPUs, 2 TiB of DDR5): 18 B x 405,853,388,800 = 7,305 GB = 6,803.6 GiB on
    # the host, over 2,048 GiB
    tr = _ds()
    p = ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True, offload_params=True, recompute="full")
    e = estimate(MODELS["llama-3.1-405b"], HARDWARE["h100-sxm"], tr, p, 8)
    assert 18 * N_405B / GiB == pytest.approx(6803.6, abs=0.05)
    assert HARDWARE["h100-sxm"].host_memory_bytes == 2 * TiB
    assert not e.runs and "6,803.6 GiB of host memory on one host" in e.failure and "2,048 GiB" in e.failure
    # 6,803.6 / 2,048 = 3.3: four times the devices (hosts) hold it
    assert "about 4x as many devices" in e.failure


def test_a_cluster_file_with_less_host_memory_refuses_what_the_preset_accepts():
    # llama-3-70b over 8 A100 80GB, both offloads: 18 B x 70,553,706,496 = 1,182.75 GiB per host; a DGX A100 640GB
    # has 2,048 GiB, an AWS p4de.24xlarge 1,152 GiB
    tr = _ds(seq=4096, batch=64)
    p = ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True, offload_params=True, recompute="full")
    model = MODELS["llama-3-70b"]
    dgx = estimate(model, HARDWARE["a100-80gb"], tr, p, 8)
    p4de = estimate(model, load_hardware("shardplan/data/clusters/aws-p4de.yaml"), tr, p, 8)
    assert 18 * N_70B / GiB == pytest.approx(1182.75, abs=0.005)
    assert dgx.failure is None
    assert p4de.failure is not None and "1,152 GiB" in p4de.failure


def test_unknown_host_memory_is_not_checked():
    # the mi300x preset names no host memory (platforms differ by integrator): nothing is refused, the memory table
    # says it is not checked
    assert HARDWARE["mi300x"].host_memory_bytes is None
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-70b", "-H", "mi300x", "-n", "8", "-s", "4096", "-b", "8",
                                 "--zero-stage", "3", "--framework", "deepspeed", "--offload-params",
                                 "--offload-optimizer"], terminal_width=200)
    assert "host memory unknown: not checked" in r.output, r.output


def test_estimate_exits_1_naming_host_memory():
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "8", "-s", "2048", "-b",
                                 "8", "--zero-stage", "3", "--framework", "deepspeed", "--offload-params",
                                 "--offload-optimizer", "--recompute", "full", "--json"], terminal_width=200)
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert "host memory" in d["failure"] and d["hardware"]["host_memory_bytes"] == 2 * TiB


def test_plan_refuses_placements_beyond_host_memory_and_says_why():
    # 8 devices: every offloaded placement holds 6,803.6 GiB per host (above); 64 devices (8 hosts): 850.5 GiB
    # per host, within 2,048
    args = ["plan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-s", "2048", "--framework", "deepspeed",
            "--offload-params", "--offload-optimizer"]
    r = CliRunner().invoke(app, [*args, "-n", "8", "-b", "8"], terminal_width=200)
    assert r.exit_code == 1 and "host memory on one host" in r.output and "HBM" not in r.output.split("result:")[-1]
    r = CliRunner().invoke(app, [*args, "-n", "64", "-b", "64", "--top", "2"], terminal_width=200)
    assert r.exit_code == 0, r.output


def test_fsdp_optimizer_offload_says_it_offloads_the_parameters_too():
    tr = TrainingSpec(seq_len=4096, global_batch_size=16, framework=FRAMEWORKS["pytorch-fsdp"])
    lay = validate(ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True), MODELS["llama-3-8b"], tr, 8)
    assert lay.parallel.offload_params and any(n.startswith("offload_params on") for n in lay.notes)
    given = validate(ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True, offload_params=True),
                     MODELS["llama-3-8b"], tr, 8)
    assert not any(n.startswith("offload_params on") for n in given.notes)


def test_a_hint_never_offers_an_offload_the_host_cannot_hold(tmp_path):
    # llama-3.1-405b over 16 H100 under torchtitan (FSDP2): with the optimizer offloaded FSDP offloads the fp32
    # parameters too, 16 B x 405,853,388,800 / 16 = 378.0 GiB per device, 3,024 GiB per 8-GPU host > 2,048 GiB:
    # the does-not-fit message must not suggest --offload-optimizer
    r = CliRunner().invoke(app, ["export", "--to", "torchtitan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "16",
                                 "-s", "8192", "-b", "64", "-o", str(tmp_path / "t.toml")], terminal_width=400)
    assert r.exit_code == 1 and "--offload-optimizer" not in r.output, r.output
    assert 16 * N_405B / 16 / GiB == pytest.approx(378.0, abs=0.05)


def test_a_host_holding_several_pipeline_stages_holds_each_of_them_once():
    # llama-3-8b, pp=8 on one 8-GPU host, ZeRO-1 over dp=1, optimizer offloaded (DeepSpeed): each rank holds its own
    # stage's state (16 B per parameter), the host all 8 stages: 16 B x 8,030,261,248 = 119.7 GiB, the model state
    # once (not 8 x the heaviest stage, the first with the 525,336,576-parameter embedding)
    tr = _ds(batch=16)
    p = ParallelConfig(pp=8, zero_stage=1, offload_optimizer=True)
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 8)
    stages = host_bytes_by_stage(e.model, e.training, e.layout)
    assert sum(stages) == pytest.approx(16 * N_8B)
    assert e.host_memory_per_host == pytest.approx(16 * N_8B) and e.host_memory_per_host < 8 * max(stages)
    # two hosts (16 GPUs, pp=8 x dp=2): each host holds 4 stages x 2 ranks of half their state (ZeRO-1 over dp=2)
    e16 = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p.model_copy(update={"dp": 2}), 16)
    half = host_bytes_by_stage(e16.model, e16.training, e16.layout)
    assert e16.host_memory_per_host == pytest.approx(2 * max(sum(half[:4]), sum(half[4:])))


def test_fp32_training_offloads_a_weight_copy_too():
    # fp32, DeepSpeed ZeRO-1 over 8 devices, optimizer offloaded: the host optimizer updates its own fp32 copy of the
    # partition's weights beside the fp32 gradient and two moments: (4 + 4 + 8) B x 8,030,261,248 / 8
    from shardplan.specs.training import PRECISION_POLICIES
    tr = TrainingSpec(seq_len=2048, global_batch_size=8, framework=FRAMEWORKS["deepspeed"],
                      precision=PRECISION_POLICIES["fp32"])
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, ParallelConfig(dp=8, zero_stage=1,
                                                                              offload_optimizer=True), 8)
    assert e.memory.host_offload == pytest.approx(16 * N_8B / 8)


def test_a_different_host_size_keeps_each_devices_share_of_host_memory():
    # a DGX A100 320GB has 1 TiB for 8 GPUs; with --scale-up-size 4 (4 GPUs per host) each keeps its 128 GiB: 512 GiB
    h = hardware_spec("a100-40gb", 4)
    assert h.host_memory_bytes == TiB / 2 and "scaled" in h.sources["host_memory_bytes"]
    assert hardware_spec("a100-40gb").host_memory_bytes == TiB


def test_activation_offload_counts_on_the_host_the_same_in_both_rows():
    # Megatron-core activation offloading: the per-device host_offload row times the 8 devices of the host is the
    # per-host row
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-70b", "-H", "a100-80gb", "-n", "8", "-b", "64", "-s",
                                 "8192", "--tp", "8", "--offload-activation-layers", "40", "--json"])
    d = json.loads(r.stdout)
    assert d["host_memory_per_host_bytes"] == pytest.approx(8 * d["memory_bytes"]["host_offload"])
    assert d["memory_bytes"]["host_offload"] > 0


def test_plan_does_not_offer_an_offload_the_hosts_cannot_hold():
    # llama-3-70b on 8 A100 40GB (1 TiB host) under DeepSpeed: no layout fits in HBM and with the optimizer offloaded
    # the host needs 16 B x 70,553,706,496 = 1,051.3 GiB > 1,024 GiB (the last refused layout's tp-replicated norm
    # weights add a little: 1,051.7): named as not helping, not offered
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3-70b", "-H", "a100-40gb", "-n", "8", "-b", "8", "-s", "2048",
                                 "--framework", "deepspeed"], terminal_width=400)
    text = " ".join(r.output.split())
    assert r.exit_code == 1 and "--offload-optimizer does not help: the offloaded state needs 1,051.7 GiB" in text
    assert "or --offload-optimizer where the framework offers it" not in text
    assert 16 * N_70B / GiB == pytest.approx(1051.33, abs=0.005)


def test_nvme_offload_is_read_kept_and_not_counted_in_host_memory(tmp_path):
    # a ZeRO-Infinity ds_config (parameters to NVMe, optimizer to the CPU): imported with nvme_offload (a note says
    # both are recorded so), llama-3.1-405b on one DGX H100 then runs (its 6,803.6 GiB host-memory failure came from
    # state that lives on NVMe), and the DeepSpeed export writes both offloads to NVMe with a placeholder path
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps({"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": True},
                              "zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/n"},
                                                    "offload_optimizer": {"device": "cpu"}}}))
    plan = tmp_path / "p.json"
    r = CliRunner().invoke(app, ["import", "--from", "deepspeed", str(ds), "-o", str(plan)], terminal_width=400)
    assert r.exit_code == 0 and "recorded as nvme_offload for both" in " ".join(r.output.split()), r.output
    assert "nvme(optimizer,params)" in r.output
    common = ["--plan", str(plan), "-m", "llama-3.1-405b", "-H", "h100-sxm", "-s", "2048", "--recompute", "full"]
    r = CliRunner().invoke(app, ["estimate", *common, "--json"])
    d = json.loads(r.stdout)
    assert r.exit_code == 0 and d["failure"] is None and d["host_memory_per_host_bytes"] == 0
    assert d["memory_bytes"]["host_offload"] == pytest.approx(18 * N_405B / 8, rel=1e-3)
    out = tmp_path / "out.json"
    r = CliRunner().invoke(app, ["export", "--to", "deepspeed", *common, "-o", str(out)])
    zero = json.loads(out.read_text())["zero_optimization"]
    assert r.exit_code == 0 and zero["offload_param"]["device"] == zero["offload_optimizer"]["device"] == "nvme"
    assert zero["offload_param"]["nvme_path"] == "/local_nvme"


def test_nvme_offload_needs_zero_infinity_and_something_offloaded():
    from shardplan.errors import ConfigError
    tr = TrainingSpec(seq_len=2048, global_batch_size=8, framework=FRAMEWORKS["pytorch-fsdp"])
    with pytest.raises(ConfigError, match="nvme_offload is not implemented by the pytorch-fsdp framework") as err:
        validate(ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True, nvme_offload=True),
                 MODELS["llama-3-8b"], tr, 8)
    assert err.value.field == "nvme_offload"
    with pytest.raises(ConfigError, match="nvme_offload with nothing offloaded"):
        validate(ParallelConfig(dp=8, zero_stage=3, nvme_offload=True), MODELS["llama-3-8b"], _ds(), 8)


def test_hardware_table_gives_each_hosts_memory():
    # DGX H100: 2 TiB = 2,048 GiB for its 8 GPUs; the mi300x preset names none
    r = CliRunner().invoke(app, ["hardware"], terminal_width=300)
    row = next(line for line in r.output.splitlines() if "h100-sxm" in line)
    assert "2,048 (8)" in row
    cells = next(line for line in r.output.splitlines() if "mi300x" in line).split("│")
    assert cells[-3].strip() == "-"  # the host-memory column: last cell is matmul eff., then the empty edge


def test_host_failure_names_the_offload_to_drop_and_json_says_it_does_not_run():
    # llama-3-70b, DeepSpeed ZeRO-3, both offloads, 8 A100 of one AWS p4de host (1,152 GiB): 18 B x 70,553,706,496 =
    # 1,182.75 GiB, 2.7% over; without the 2 B parameter shard, 16 B: 1,051.33 GiB, which fits
    p4de = load_hardware("shardplan/data/clusters/aws-p4de.yaml")
    tr = _ds(seq=4096, batch=64)
    e = estimate(MODELS["llama-3-70b"], p4de, tr, ParallelConfig(dp=8, zero_stage=3, offload_optimizer=True,
                                                                 offload_params=True, recompute="full"), 8)
    assert "3% over" in e.failure and "without --offload-params (1,051.3 GiB per host)" in e.failure
    d = e.to_dict()
    assert d["fits"] is True and d["runs"] is False  # fits in HBM, fails on the host


def test_an_offload_flag_without_a_zero_stage_takes_the_stage_it_needs():
    # the deepspeed profile's default is ZeRO-0, where DeepSpeed offloads nothing: --offload-optimizer alone takes
    # ZeRO-1 (the lowest stage ZeRO-Offload runs with) and --offload-params ZeRO-3, each with a note (it was refused
    # as "offload_optimizer with zero_stage=0", a stage the user never gave)
    base = ["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--framework",
            "deepspeed", "--json"]
    r = CliRunner().invoke(app, [*base, "--offload-optimizer"])
    assert r.exit_code in (0, 1) and json.loads(r.stdout)["parallel"]["zero_stage"] == 1
    assert "ZeRO-1 because an offloaded optimizer needs a ZeRO stage" in " ".join(r.stderr.split())
    r = CliRunner().invoke(app, [*base, "--offload-optimizer", "--offload-params"])
    assert json.loads(r.stdout)["parallel"]["zero_stage"] == 3


def test_plan_explanation_and_hardware_list_name_host_memory():
    # plan's winner line gives the host memory per host beside the HBM headroom; `shardplan hardware` lists the
    # shipped cluster files
    r = CliRunner().invoke(app, ["plan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-n", "64", "-b", "64", "-s", "2048",
                                 "--framework", "deepspeed", "--offload-params", "--offload-optimizer", "--top", "2"],
                           terminal_width=400)
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "GiB per host of 2,048" in text, text
    r = CliRunner().invoke(app, ["hardware"], terminal_width=300)
    assert "aws-p4de" in r.output and "cluster files" in r.output


def test_tpu_hosts_drive_their_chips_and_hold_their_memory():
    # Google Cloud TPU docs: v5e and v6e hosts drive 8 chips with 512 / 1,536 GiB of DRAM, a v5p host 4 chips with
    # 448 GB; the slice (scale-up size 256 / 8,960) is the ICI domain, not the host
    from shardplan.presets.hardware import HARDWARE
    assert (HARDWARE["tpu-v5e"].host_devices, HARDWARE["tpu-v5e"].host_memory_bytes) == (8, 512 * GiB)
    assert (HARDWARE["tpu-v6e"].host_devices, HARDWARE["tpu-v6e"].host_memory_bytes) == (8, 1536 * GiB)
    assert (HARDWARE["tpu-v5p"].host_devices, HARDWARE["tpu-v5p"].host_memory_bytes) == (4, 448e9)


def test_show_infeasible_lists_the_layouts_refused_for_host_memory():
    # every placement on 8 devices is refused for host memory (18 B x 405,853,388,800 = 6,803.6 GiB per host, above):
    # --show-infeasible lists them (it listed nothing), each under the HBM and with its host memory of 2,048 GiB
    args = ["plan", "-m", "llama-3.1-405b", "-H", "h100-sxm", "-s", "2048", "--framework", "deepspeed",
            "--offload-params", "--offload-optimizer", "-n", "8", "-b", "8", "--show-infeasible"]
    r = CliRunner().invoke(app, args, terminal_width=250)
    assert r.exit_code == 1 and "closest layouts that do not fit" in r.output and "of 2,048" in r.output
    r = CliRunner().invoke(app, [*args, "--json"])
    near = json.loads(r.output[:r.output.rindex("}") + 1])["infeasible"]
    assert near and all(e["host_memory_per_host_bytes"] > 2 * TiB and "host memory" in e["failure"] for e in near)
    assert all(e["memory_bytes"]["total"] < 80 * GiB for e in near)


def test_export_header_gives_the_host_memory_of_offloaded_state(tmp_path):
    # ZeRO-3 with the optimizer on the host (DeepSpeed): fp32 master 4 + Adam moments 8 + fp32 gradient partition 4
    # = 16 B per parameter, sharded over 64 devices, 8 per host: 16 x 70,553,706,496 / 8 = 141.1e9 B = 131.4 GiB
    out = tmp_path / "ds.json"
    r = CliRunner().invoke(app, ["export", "--to", "deepspeed", "-m", "llama-3-70b", "-H", "h100-sxm", "-n", "64",
                                 "-s", "4096", "-b", "64", "--zero-stage", "3", "--offload-optimizer", "--framework",
                                 "deepspeed", "--recompute", "full", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert 16 * N_70B / 8 / GiB == pytest.approx(131.4, abs=0.05)
    assert "host memory per host: 131.4 GiB of 2,048 GiB" in out.read_text()
