"""ZeRO-3 parameter offload (``ParallelConfig.offload_params``): DeepSpeed ``offload_param`` (ZeRO-Infinity) and PyTorch
FSDP / FSDP2 CPU offload. Before, every importer refused these real layouts and no command could price them."""

import json

import pytest

from shardplan.cost.step import estimate
from shardplan.errors import ConfigError
from shardplan.export import import_config
from shardplan.parallel import ParallelConfig
from shardplan.presets.frameworks import FRAMEWORKS
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.training import TrainingSpec

P_8B = 8_030_261_248  # llama-3-8b's exact parameter count (shared/models)


def _run(framework: str, n: int = 8, **kw):
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS[framework])
    p = ParallelConfig(dp=n, zero_stage=3, microbatch_size=2, recompute="full", **kw)
    return estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, n)


def test_offloaded_shards_leave_the_device():
    # DeepSpeed, dp 8, bf16 shards: 2 B x 8,030,261,248 / 8 = 2,007,565,312 B move from HBM to the host
    on, off = _run("deepspeed"), _run("deepspeed", offload_params=True)
    assert on.memory.params == pytest.approx(2 * P_8B / 8)
    assert off.memory.params == 0 and off.memory.host_offload == pytest.approx(2 * P_8B / 8)
    assert on.memory.total - off.memory.total == pytest.approx(2 * P_8B / 8, rel=1e-9)


def test_every_gather_copies_its_shard_in_over_the_host_link():
    # one GPU, nothing prefetched (zero3_prefetch 0): every copy is exposed. Per microbatch the forward and the backward
    # each copy the whole model once: 2 x 2 B x 8,030,261,248 = 32.1 GB; 64 / 2 = 32 microbatches over the H100's
    # 64 GB/s host link: 32 x 32,121,044,992 / 64e9 = 16.06 s
    fw = FRAMEWORKS["deepspeed"].model_copy(update={"zero3_prefetch": 0.0})
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=fw)
    p = ParallelConfig(dp=1, zero_stage=3, microbatch_size=2, recompute="full", offload_params=True,
                       offload_optimizer=True)
    e = estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 1)
    assert e.param_offload_s == pytest.approx(32 * 2 * 2 * P_8B / 64e9, rel=1e-9)
    assert e.to_dict()["time_s"]["parameter_offload"] == e.param_offload_s
    assert not e.collectives  # one rank: no gather, only the copies


def test_the_host_updates_offloaded_shards_in_place():
    # with the optimizer on the host the updated shard does not come back: the copies lose param_bytes x P / dp,
    # 2 x 8,030,261,248 / 8 / 64e9 = 31.4 ms; with the optimizer on the device the updated shard goes out once
    both, opt = _run("deepspeed", offload_params=True, offload_optimizer=True), _run("deepspeed", offload_optimizer=True)
    assert opt.optimizer_s - both.optimizer_s == pytest.approx(2 * P_8B / 8 / 64e9, rel=1e-6)
    params_only, neither = _run("deepspeed", offload_params=True), _run("deepspeed")
    assert params_only.optimizer_s - neither.optimizer_s == pytest.approx(2 * P_8B / 8 / 64e9, rel=1e-6)


def test_fsdp_cpu_offload_copies_the_fp32_shards():
    # FSDP's shard is the fp32 master: each gather copies 4 B per parameter, and the optimizer offload alone (ZeRO-3)
    # already is FSDP's CPU offload (parameters included); the explicit flag prices the same
    a = _run("pytorch-fsdp", offload_optimizer=True)
    b = _run("pytorch-fsdp", offload_optimizer=True, offload_params=True)
    assert a.param_offload_s == b.param_offload_s > 0 and a.memory.params == 0
    assert a.memory.host_offload >= 4 * P_8B / 8


@pytest.mark.parametrize(("framework", "kw", "field"), [
    ("deepspeed", {"zero_stage": 2}, "zero_stage"),
    ("megatron", {}, "offload_params"),
    ("pytorch-fsdp", {}, "offload_optimizer"),
])
def test_offload_params_refusals_name_the_field(framework, kw, field):
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS[framework])
    p = ParallelConfig(dp=8, microbatch_size=2, offload_params=True, **{"zero_stage": 3, **kw})
    with pytest.raises(ConfigError) as e:
        estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 8)
    assert e.value.field == field
    if framework == "megatron":
        assert "deepspeed" in str(e.value) and "torchtitan" in str(e.value)


def test_deepspeed_offload_param_is_read_and_written():
    cfg = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True},
           "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu", "pin_memory": True},
                                 "offload_optimizer": {"device": "cpu"}}}
    imp = import_config("deepspeed", json.dumps(cfg), devices=8)
    assert (imp.parallel.offload_params, imp.parallel.offload_optimizer) == (True, True)
    cfg["zero_optimization"]["stage"] = 2  # DeepSpeed ignores offload_param below ZeRO-3: read, with a note
    imp = import_config("deepspeed", json.dumps(cfg), devices=8)
    assert not imp.parallel.offload_params and any("ignored at stage 2" in n for n in imp.notes)


def test_fsdp_cpu_offload_imports_from_accelerate_and_torchtitan():
    acc = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_offload_params: true\n  fsdp_sharding_strategy: 1\n"
           "mixed_precision: bf16\nnum_machines: 1\nnum_processes: 8\n")
    p = import_config("accelerate", acc).parallel
    assert (p.zero_stage, p.offload_params, p.offload_optimizer) == (3, True, True)
    titan = ("[parallelism]\ndata_parallel_shard_degree = 8\n[training]\nlocal_batch_size = 2\nseq_len = 4096\n"
             "enable_cpu_offload = true\n")
    p = import_config("torchtitan", titan, devices=8).parallel
    assert (p.zero_stage, p.offload_params, p.offload_optimizer) == (3, True, True)
    with pytest.raises(ConfigError) as e:  # SHARD_GRAD_OP: ZeRO-2, not priced with CPU offload
        import_config("accelerate", acc.replace("fsdp_sharding_strategy: 1", "fsdp_sharding_strategy: 2"))
    assert e.value.field == "fsdp_offload_params"


def test_cli_prices_and_exports_offload_params(tmp_path):
    from typer.testing import CliRunner

    from shardplan.cli import app
    base = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "--dp", "8", "--zero-stage", "3",
            "--framework", "deepspeed", "--offload-params"]
    r = CliRunner().invoke(app, ["estimate", *base, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout[r.stdout.index("{"):])  # notes come first
    assert out["parallel"]["offload_params"] and out["time_s"]["parameter_offload"] > 0
    r = CliRunner().invoke(app, ["export", "--to", "deepspeed", *base, "-o", str(tmp_path / "ds.json")])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "ds.json").read_text())["zero_optimization"]["offload_param"]["device"] == "cpu"
    # Megatron-LM has no parameter offload: refused as bad input, naming the option
    r = CliRunner().invoke(app, ["export", "--to", "megatron", *base, "-o", str(tmp_path / "m.sh")])
    assert r.exit_code == 2 and "offload_params" in r.output, r.output


def _titan_70b(optimizer_dtype: str):
    tr = TrainingSpec(seq_len=256, global_batch_size=16, framework=FRAMEWORKS["torchtitan"],
                      optimizer_dtype=optimizer_dtype)
    p = ParallelConfig(dp=8, zero_stage=3, microbatch_size=2, recompute="full", offload_optimizer=True)
    return estimate(MODELS["llama-3-70b"], HARDWARE["a100-80gb"], tr, p, 8)


def test_the_host_update_is_memory_bound():
    # the host's AdamW moves 2 x (2 + 4 + 8) + 2 = 30 B per parameter with fp32 state and 2 x (2 + 0 + 4) + 2 = 14 B
    # with bf16 weights and state: its time scales by 14 / 30; the gradient copies (2 B per parameter) do not
    fp32, bf16 = _titan_70b("fp32"), _titan_70b("bf16")
    copies = 2 * 70_553_706_496 / 8 / 32e9  # llama-3-70b's parameters, bf16 gradients, 8 ranks, A100 host link
    assert (bf16.optimizer_s - copies) / (fp32.optimizer_s - copies) == pytest.approx(14 / 30, rel=1e-9)
    # 8 ranks' shards (70.55e9 parameters) on one host at torchtitan's fused CPU AdamW rate, 3.5e9 per s at 30 B:
    # 70,553,706,496 / 3.5e9 = 20.16 s with fp32 state
    assert fp32.optimizer_s - copies == pytest.approx(70_553_706_496 / 3.5e9, rel=1e-9)


def test_torchtune_70b_cpu_offload_run():
    # torchtune pull 993: Llama 3 70B, FSDP CPU offload, fused CPU AdamW on bf16 state, batch 2 per GPU, 8 A100:
    # 13.57 s/it (the rate's source, so this checks the derivation: ~256-token padded Alpaca batches)
    assert _titan_70b("bf16").step_s == pytest.approx(13.57, rel=0.05)


# a breaker on the feature (/work/notes/s48/break48.md): each case failed before its fix
def _deepspeed_estimate(framework: str = "deepspeed", **kw):
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS[framework])
    p = ParallelConfig(zero_stage=3, microbatch_size=2, offload_params=True, **kw)
    return estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 8)


def test_exports_refuse_offloaded_parameters_with_the_optimizer_on_the_gpu():
    # FSDP's CPU offload (Accelerate fsdp_offload_params, torchtitan enable_cpu_offload) moves the optimizer step to the
    # host too: a DeepSpeed plan with parameters offloaded alone was written as one (re-imported: 6.05 s -> 38.5 s)
    from shardplan.export import export_text
    e = _deepspeed_estimate("hf-deepspeed", tp=2, dp=4)  # tp 2: an Accelerate FSDP launch
    for target in ("accelerate", "torchtitan"):
        with pytest.raises(ConfigError, match="optimizer on the GPU"):
            export_text(target, e)
    assert '"offload_param"' in export_text("deepspeed", _deepspeed_estimate())


def test_bound_and_breakdown_name_the_parameter_copies():
    # one GPU, a 1B model at 4 x 512 tokens: the copies are most of the step; the bound said "HBM bandwidth"
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3.2-1b", "-H", "h100-sxm", "-n", "1", "-s", "512", "-b", "4",
                                 "--framework", "deepspeed", "--zero-stage", "3", "--offload-params"],
                           terminal_width=200)
    assert r.exit_code == 0 and "host link (offloaded parameter shards" in r.output, r.output
    assert "parameter_offload" in r.output
    # on one rank ZeRO-3 is what keeps the weights on the host: no "zero_stage=0 or 1 is the same layout" note
    assert "same layout without them" not in r.output
    from shardplan.web.charts import time_parts
    e = _deepspeed_estimate()
    assert sum(t.seconds for t in time_parts(e) if t.critical) == pytest.approx(e.step_s, rel=1e-9)


@pytest.mark.parametrize(("framework", "field"), [("megatron", "offload_params"), ("nanotron", "offload_params"),
                                                  ("torchtitan", "offload_optimizer")])
def test_refusals_name_what_to_change(framework, field):
    # megatron / nanotron have no parameter offload (before: "legal zero_stage: 3", which they then refused);
    # torchtitan needs the optimizer offloaded with it; plan pins ZeRO-3 with --offload-params
    from shardplan.search import search
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS[framework])
    with pytest.raises(ConfigError) as e:
        estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, ParallelConfig(zero_stage=1, offload_params=True), 8)
    assert e.value.field == (field if framework != "torchtitan" else "zero_stage")
    with pytest.raises(ConfigError) as e:
        search(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, 8, fix={"offload_params": True})
    assert e.value.field == field


def test_fsdp_optimizer_offload_says_the_parameters_go_too():
    # PyTorch FSDP's CPU offload at ZeRO-3: the layout records offload_params (it was priced so, but said false)
    assert _run("pytorch-fsdp", offload_optimizer=True).parallel.offload_params
    assert not _run("deepspeed", offload_optimizer=True).parallel.offload_params


def test_accelerate_offload_devices_are_checked():
    base = ("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 3\n  offload_param_device: {}\n"
            "mixed_precision: bf16\nnum_processes: 8\n")
    for bad in ("gpu", "true", "0"):
        with pytest.raises(ConfigError) as e:
            import_config("accelerate", base.format(bad))
        assert e.value.field == "offload_param_device"
    # nvme: ZeRO-Infinity, recorded as nvme_offload (priced as host offload, not counted in host memory)
    imp = import_config("accelerate", base.format("nvme"))
    assert imp.parallel.offload_params and imp.parallel.nvme_offload


def test_real_offload_configs_found_by_a_second_helper():
    # /work/notes/s48/realoffload.md: an Accelerate DeepSpeed launch that names a deepspeed_config_file was read as
    # ZeRO-0 without offload (1,293 GiB per device for LLaMA-Factory's ZeRO-3 offload launch): refused, naming the file
    acc = ("distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds_z3_offload_config.json\n"
           "  deepspeed_multinode_launcher: standard\nnum_machines: 2\nnum_processes: 16\n")
    with pytest.raises(ConfigError) as e:
        import_config("accelerate", acc)
    assert e.value.field == "deepspeed_config_file" and "--from deepspeed" in str(e.value)
    # partial (Twin-Flow) and SuperOffload optimizer offload: noted, priced as the whole optimizer offloaded
    cfg = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 2, "bf16": {"enabled": True},
           "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": 0.8,
                                                                   "super_offload": True}}}
    notes = " ".join(import_config("deepspeed", json.dumps(cfg), devices=8).notes)
    assert "ratio=0.8" in notes and "SuperOffload" in notes
    # a commented ds_config (DeepSpeed reads hjson): the error says so
    with pytest.raises(ConfigError, match="hjson"):
        import_config("deepspeed", '{\n  // ZeRO-3\n  "train_batch_size": 8\n}', devices=8)
    # train_batch_size alone without a device count: the message names what is missing (it said "neither")
    with pytest.raises(ConfigError, match="gives train_batch_size but not train_micro_batch_size_per_gpu"):
        import_config("deepspeed", '{"train_batch_size": 8, "zero_optimization": {"stage": 3}}')


def test_time_parts_add_up_with_the_copies():
    # README: step = compute + exposed_comm + bubble + optimizer + framework_overhead + overlap_slowdown +
    # activation_offload + parameter_offload
    t = _run("deepspeed", offload_params=True, offload_optimizer=True).to_dict()["time_s"]
    parts = ("compute", "exposed_comm", "bubble", "optimizer", "framework_overhead", "overlap_slowdown",
             "activation_offload", "parameter_offload")
    assert t["parameter_offload"] > 0 and sum(t[k] for k in parts) == pytest.approx(t["step"], rel=1e-12)


def test_a_once_per_step_gather_copies_once_per_step_on_one_shard():
    # a new user's plan: ZeRO-3 gathered once per step with parameter offload and a shard group of 1 (dp 1, tp 8)
    # charged the copy every microbatch (3.4 / 6.9 / 13.8 s at 8 / 16 / 32 microbatches): it is one copy per step
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS["deepspeed"])
    times = []
    for mbs in (8, 2):  # 8 and 32 microbatches of the same 64 sequences
        p = ParallelConfig(dp=1, tp=8, zero_stage=3, zero3_gather="per_step", microbatch_size=mbs,
                           offload_params=True, offload_optimizer=True)
        times.append(estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, p, 8).param_offload_s)
    assert times[0] == pytest.approx(times[1], rel=1e-9) and times[0] > 0


def test_compare_treats_dp_and_dp_cp_reductions_as_one_part():
    # plan's #2 read "+1.93 s dp-cp ReduceScatter, partly offset by less dp ReduceScatter (-1.93 s)": the same
    # weights' reduction under two group names; the real cause of the difference is cp's AllToAll
    from shardplan.explain import compare
    tr = TrainingSpec(seq_len=4096, global_batch_size=64, framework=FRAMEWORKS["deepspeed"])
    run = [estimate(MODELS["llama-3-8b"], HARDWARE["h100-sxm"], tr, ParallelConfig(
        dp=8 // cp, cp=cp, cp_comm="a2a", zero_stage=3, microbatch_size=2 * cp, offload_params=True), 8)
        for cp in (1, 2)]
    text = compare(run[0], run[1])
    assert "mostly cp AllToAll" in text and "dp-cp" not in text, text


def test_memory_table_gives_the_host_memory_of_one_host():
    # llama-3-70b, ZeRO-3 over 8 A100 of one host, parameters and optimizer offloaded under DeepSpeed: each device's
    # share of the host memory (bf16 shard 2 + the fp32 gradient partition DeepSpeed's CPU optimizer steps on 4 + fp32
    # master and moments 12 = 18 B x 70,553,706,496 / 8 = 147.84 GiB) and the host's for its 8 devices (1,182.75 GiB,
    # of the DGX A100 640GB's 2 TiB = 2,048 GiB)
    from typer.testing import CliRunner

    from shardplan.cli import app
    r = CliRunner().invoke(app, ["estimate", "-m", "llama-3-70b", "-H", "a100-80gb", "-n", "8", "-s", "4096", "-b", "64",
                                 "--zero-stage", "3", "--framework", "deepspeed", "--offload-params",
                                 "--offload-optimizer"], terminal_width=200)
    assert "147.84" in r.output and "host memory per host (8 devices, of 2,048.00 GiB)" in r.output, r.output
    assert "1,182.75" in r.output, r.output
    assert 18 * 70_553_706_496 / 8 / 2**30 == pytest.approx(147.84, abs=0.005)
    assert 18 * 70_553_706_496 / 2**30 == pytest.approx(1182.75, abs=0.005)
