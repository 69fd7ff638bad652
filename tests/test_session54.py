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
    g.write_text("base: tpu-v6e\npeak_flops_bf16: 2.0e+15\npeak_flops_fp8: 4.0e+15\n")
    assert load_hardware(str(g)).peak_flops_fp8 == 4.0e15
    # breaker pass 54b: a quoted peak (pydantic reads it as a number) and a derated bf16 peak of the same chip
    # (918 -> 900 TFLOP/s, under 1.2 x) skipped the refusal
    for text in ("base: tpu-v4\npeak_flops_fp8: '1.8e15'\n",
                 "base: tpu-v6e\npeak_flops_bf16: 9.0e+14\npeak_flops_fp8: 1.8e+15\n"):
        h = tmp_path / "h.yaml"
        h.write_text(text)
        with pytest.raises(ConfigError, match="no fp8 mode"):
            load_hardware(str(h))


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


def test_a_cp_ring_that_spans_nodes_pays_the_network_on_every_step():
    # new-user pass 54: tp 2 x cp 8 = 16 ranks over two 8-GPU H100 nodes was priced as NVLink (neighbours only 2 ranks
    # apart) and did not change with an 8x slower network. The ring advances in lock step, so each step waits for its
    # node-crossing hop: one K/V block of 2 B x (32768 / 8 = 4,096 tokens) x (K + V of 8 KV heads / tp 2 = 4 heads of
    # 128: 2 x 4 x 128 = 1,024 elements per token) = 8,388,608 B per step through the sender's NIC share.
    from shardplan.cost.axes.cp import ring_hop_stride
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    assert ring_hop_stride(2, 8, 8) == 8 and ring_hop_stride(2, 4, 8) == 2 and ring_hop_stride(8, 2, 8) == 8
    h100 = HARDWARE["h100-sxm"]
    slow = h100.model_copy(update={"scale_out_bandwidth": h100.scale_out_bandwidth / 8})
    tr = TrainingSpec(seq_len=32768, global_batch_size=8, framework=FRAMEWORKS["megatron"])
    par = ParallelConfig(tp=2, cp=8, zero_stage=1)

    def ring(hw):
        e = estimate(MODELS["llama-3-8b"], hw, tr, par, 64)
        return next(c for c in e.collectives if c.axis == "cp" and c.phase == "fwd")
    fast, slower = ring(h100), ring(slow)
    assert fast.level == "scale-out"
    # per step: 8,388,608 B at the NIC share (scale_out_bandwidth x efficiency) plus latency; at 1/8 of the bandwidth
    # the bandwidth part is 8x, so the ring's time grows by more than 4x (it did not change before the fix)
    assert slower.time_s > 4 * fast.time_s
    # inside one node (tp 2 x cp 4 = 8 ranks) the ring stays on NVLink
    inside = estimate(MODELS["llama-3-8b"], h100, tr, ParallelConfig(tp=2, cp=4, zero_stage=1), 64)
    assert next(c for c in inside.collectives if c.axis == "cp").level == "NVLink"


def test_llama31_rope_scaling_reaches_the_megatron_flags():
    # new-user pass 54: a Llama 3.1 config.json's rope_scaling {rope_type: llama3, factor: 8} was checked and dropped,
    # so the exported Megatron-LM script trained with unscaled RoPE (Megatron-LM arguments.py: --use-rope-scaling,
    # "Apply rope scaling as used in llama3.x"; --rope-scaling-factor, default 8.0)
    from shardplan.export.megatron import model_args, rope_scaling_args
    from shardplan.loaders import model_from_hf_config
    from shardplan.presets.models import MODELS
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "vocab_size": 128256, "rope_theta": 500000.0,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
    m = model_from_hf_config(cfg)
    assert (m.rope_scaling_type, m.rope_scaling_factor) == ("llama3", 8.0)
    args = model_args(m, 8192)
    i = args.index("--use-rope-scaling")
    assert args[i + 1: i + 3] == ["--rope-scaling-factor", "8"]
    assert "--use-rope-scaling" in model_args(MODELS["llama-3.1-70b"], 8192)
    assert "--use-rope-scaling" not in model_args(MODELS["llama-3-70b"], 8192)  # Llama 3: no scaling
    linear = m.model_copy(update={"rope_scaling_type": "linear", "rope_scaling_factor": 4.0})
    assert rope_scaling_args(linear) == ["--rotary-seq-len-interpolation-factor", "4"]
    assert rope_scaling_args(m.model_copy(update={"rope_scaling_type": "yarn"})) == []
    # Llama 3.1 70B: the Llama 3 70B shape, 70,553,706,496 parameters (80 x (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x
    # 28672 + 2 x 8192) + 2 x 128256 x 8192 + 8192)
    assert MODELS["llama-3.1-70b"].n_params == 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) \
        + 2 * 128256 * 8192 + 8192 == 70_553_706_496


def test_train_refuses_a_compiled_step_larger_than_the_host(monkeypatch):
    # breaker pass 54: `train --seq-len 100000` on 8 simulated CPU devices compiled a step of 820 GiB per device (the
    # runtime's attention keeps seq^2 scores) and died in a JaxRuntimeError traceback; the compiled peak x local
    # devices is now compared with the host's memory first
    from shardplan.cli import runtime
    monkeypatch.setattr(runtime, "_accelerator_present", lambda: False)
    with pytest.raises(ConfigError, match="820.0 GiB per device x 8 simulated CPU devices = 6,560 GiB") as e:
        runtime.check_compiled_memory(820 * 2**30, 8, 100_000)
    assert e.value.field == "seq_len"
    runtime.check_compiled_memory(2**20, 8, 64)  # 8 MiB fits any host

    class JaxRuntimeError(Exception):
        pass
    assert runtime.is_out_of_memory(JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 880537308928 bytes."))
    assert not runtime.is_out_of_memory(JaxRuntimeError("INVALID_ARGUMENT: shapes"))
    assert not runtime.is_out_of_memory(MemoryError("RESOURCE_EXHAUSTED"))


def test_calibrate_judges_shipped_clusters_and_hardware_files_by_their_device_class(tmp_path, monkeypatch):
    # breaker pass 54: records labelled aws-p4de / jean-zay-a100 (shipped A100 clusters) or a file with
    # base: a100-80gb were folded into an H100 fit (exit 0); the preset names a100 / a100-80gb were already refused
    from shardplan.cli.calibrate import other_class
    from shardplan.presets.hardware import HARDWARE
    (tmp_path / "a100.yaml").write_text("base: a100-80gb\n")
    monkeypatch.chdir(tmp_path)
    h100 = HARDWARE["h100-sxm"]
    found = other_class(["aws-p4de", "jean-zay-a100", "a100.yaml", "usp-h100-efa", "my-own-label", "h100"], h100)
    assert found == ["aws-p4de (ampere)", "jean-zay-a100 (ampere)", "a100.yaml (ampere)"]


def test_train_record_keeps_only_what_the_runtime_ran():
    # breaker pass 54: `train --offload-optimizer --record` wrote offload_optimizer: true (the runtime keeps the state
    # on the device), so calibrate compared the measured peak with a prediction 12 GB lower
    from shardplan.jax.train import UNEXECUTED, as_executed
    from shardplan.parallel import ParallelConfig
    p = ParallelConfig(zero_stage=3, tp=2, offload_optimizer=True, offload_activation_layers=2,
                       recompute="selective", recompute_modules=("core_attn",))
    ran = as_executed(p)
    assert (ran.offload_optimizer, ran.offload_activation_layers, ran.recompute_modules) == (False, 0, None)
    assert (ran.zero_stage, ran.tp, ran.recompute) == (3, 2, "selective")  # what ran is kept
    assert set(UNEXECUTED) <= set(ParallelConfig.model_fields)


def test_bench_output_keeps_the_cluster_files_framework_and_multi_node_rows(tmp_path):
    # breaker pass 54: `bench -H usp-h100-efa -o x.yaml` dropped `framework: nanotron-usp` (later predictions priced
    # with megatron, +49%) and replaced the 1-64-node busbw table by the one row bench measured
    from shardplan.cli.bench import bench_document
    from shardplan.loaders import load_hardware
    src = tmp_path / "cluster.yaml"
    src.write_text("base: h100-sxm\nframework: nanotron-usp\nscale_out_bandwidth: 4.0e+10\n"
                   "measured_busbw:\n  AllGather: {1: 3.0e+11, 8: 4.0e+10}\n  AllReduce: {8: 5.0e+10}\n")
    fields = {"matmul_efficiency": 0.6, "measured_busbw": {"AllGather": {1: 3.5e11}}, "sources": {"x": "bench"}}
    doc = bench_document(str(src), load_hardware(str(src)), fields, smoke=False)
    assert doc["framework"] == "nanotron-usp"
    assert doc["measured_busbw"] == {"AllGather": {1: 3.5e11, 8: 4.0e10}, "AllReduce": {8: 5.0e10}}
    assert doc["matmul_efficiency"] == 0.6 and doc["scale_out_bandwidth"] == 4.0e10


def test_record_import_status_that_denies_an_oom(tmp_path):
    # breaker pass 54: 'ok - no OOM' was read as oom ("oom" in the text) and the row's 5,153 tokens/s dropped, exit 0
    from shardplan.record_import import _status, import_csv, parse_map_items
    assert _status("ok - no OOM", True, 2) == "ok"
    assert _status("without out of memory", True, 2) == "ok"
    assert _status("CUDA OOM", False, 2) == "oom"
    with pytest.raises(ConfigError, match="line 3: status='OOM' says the run ran out of memory, but the row measured"):
        _status("OOM", True, 3)
    f = tmp_path / "runs.csv"
    f.write_text("status,tok_s\nok - no OOM,5153\nOOM,\n")
    mapping = parse_map_items(["tokens_per_s_per_device=tok_s"],
                              ["model=llama-3-8b", "hardware=h100-sxm", "devices=8", "seq_len=4096",
                               "global_batch_size=256", "tp=8"])
    recs = import_csv(f, mapping)
    assert [(r.status, r.tokens_per_s_per_device) for r in recs] == [("ok", 5153.0), ("oom", None)]


def test_record_import_map_and_set_of_one_field_and_text_switch_words():
    from shardplan.record_import import _typed, parse_map_items
    # breaker pass 54: --set overrode --map for the same field (every row's 5,153 tokens/s became 7) without a word
    with pytest.raises(ConfigError, match="--map tokens_per_s_per_device=tok_s and --set tokens_per_s_per_device=7 "
                                          "both give tokens_per_s_per_device"):
        parse_map_items(["tokens_per_s_per_device=tok_s"], ["tokens_per_s_per_device=7"])
    # yes / no are switches only for switch fields: `--set source=no` was refused as "source=False"
    assert _typed("source", "no", 2) == "no" and _typed("model", "yes", 2) == "yes"
    assert _typed("sp", "yes", 2) is True and _typed("offload_optimizer", "No", 2) is False


def test_a_number_in_a_text_field_gets_no_numeric_bounds(tmp_path):
    # breaker pass 54: "sources.matmul_efficiency=3; legal: a text value >= 0.01 and <= 1"
    f = tmp_path / "src.yaml"
    f.write_text("base: h100-sxm\nsources:\n  matmul_efficiency: 3\n")
    with pytest.raises(ConfigError) as e:
        load_hardware(str(f))
    assert "legal: a text value" in str(e.value) and ">=" not in str(e.value)


def test_resume_on_another_corpus_is_refused(tmp_path):
    # breaker pass 54: `train --resume --data OTHER` ran on with exit 0 (seed / seq_len / batch were checked)
    from shardplan.jax.checkpoint import check_data_sources
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    meta = {"data": {"position": 2, "sources": [str(a.resolve())]}}
    check_data_sources(meta, [str(a)])  # the same file: resumes
    with pytest.raises(ConfigError, match="differs from the checkpoint's data") as e:
        check_data_sources(meta, [str(b)])
    assert e.value.field == "data"
    with pytest.raises(ConfigError, match="the default corpus, no --data"):
        check_data_sources({"data": {"position": 2, "sources": None}}, [str(a)])
    check_data_sources({"data": {"position": 2, "sources": None}}, None)



#: the breaker's seven H100 records with record 1 at 1e-3 tokens/s (5,000,000x below its layout's 5,153)
_TINY_TPUT = """{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 16, "seq_len": 4096, "global_batch_size": 256, "parallel": {"dp": 2, "tp": 8, "sp": true, "microbatch_size": 2}, "status": "ok", "tokens_per_s_per_device": 0.001, "peak_memory_bytes": 61200000000.0}
{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 16, "seq_len": 4096, "global_batch_size": 256, "parallel": {"dp": 4, "tp": 4, "sp": true, "microbatch_size": 1}, "status": "ok", "tokens_per_s_per_device": 6000.0, "peak_memory_bytes": 50000000000.0}
{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 128, "parallel": {"dp": 1, "tp": 8, "sp": true, "microbatch_size": 1}, "status": "ok", "tokens_per_s_per_device": 5500.0, "peak_memory_bytes": 40000000000.0}
{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 128, "parallel": {"dp": 8, "tp": 1, "microbatch_size": 4}, "status": "oom"}
{"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 32, "seq_len": 4096, "global_batch_size": 256, "parallel": {"dp": 4, "tp": 8, "sp": true, "microbatch_size": 1}, "status": "ok", "tokens_per_s_per_device": 5000.0, "peak_memory_bytes": 38000000000.0}
{"model": "llama-3.2-1b", "hardware": "h100-sxm", "devices": 8, "seq_len": 4096, "global_batch_size": 128, "parallel": {"dp": 8, "tp": 1, "microbatch_size": 2}, "status": "ok", "tokens_per_s_per_device": 30000.0, "peak_memory_bytes": 30000000000.0}
{"model": "llama-3.2-1b", "hardware": "h100-sxm", "devices": 16, "seq_len": 4096, "global_batch_size": 128, "parallel": {"dp": 16, "tp": 1, "microbatch_size": 2}, "status": "ok", "tokens_per_s_per_device": 28000.0, "peak_memory_bytes": 30000000000.0}"""


def test_calibrate_names_a_record_missed_by_more_than_10x(tmp_path):
    # breaker pass 54: the record moved matmul_efficiency 0.375 -> 0.305 and nothing named it
    from shardplan.calibrate import OUTLIER_RATIO, calibrate
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.records import read_records
    f = tmp_path / "runs.jsonl"
    f.write_text(_TINY_TPUT + "\n")
    cal = calibrate(read_records(f), HARDWARE["h100-sxm"], FRAMEWORKS["megatron"], cross_validate=False)
    assert OUTLIER_RATIO == 10.0
    assert len(cal.outliers) == 1 and "record 1" in cal.outliers[0] and "measured 0.001 tokens/s/device" in cal.outliers[0]


def _est(model, fw, seq, gbs, n, **par):
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec
    return estimate(MODELS[model], HARDWARE["h100-sxm"], TrainingSpec(seq_len=seq, global_batch_size=gbs,
                    framework=FRAMEWORKS[fw]), ParallelConfig(**par), n)


def test_selective_recompute_that_saves_nothing_is_named():
    # new-user pass 54: 70B at 128k, tp 8 cp 16: selective recompute re-runs the flash-attention core (no s x s scores
    # to free), 0.00 GiB saved for +13% step time, and nothing said so
    from shardplan.cli.estimate import selective_recompute_note
    e = _est("llama-3-70b", "megatron", 131072, 32, 128, tp=8, cp=16, sp=True, zero_stage=1, recompute="selective")
    note = selective_recompute_note(e)
    assert note is not None and note.startswith("recompute=selective saves 0.00 GiB here")
    # where the re-run frees the scores (naive attention keeps s x s per head) there is no note
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.specs.training import TrainingSpec
    e2 = _est("llama-3-8b", "megatron", 4096, 64, 8, tp=8, sp=True, zero_stage=1, recompute="selective")
    naive = type(e2.training).model_validate({**e2.training.model_dump(), "attention": "naive",
                                              "framework": FRAMEWORKS["megatron"]})
    from shardplan.cost.step import estimate
    assert selective_recompute_note(estimate(e2.model, e2.hardware, naive, e2.parallel, 8)) is None
    assert isinstance(naive, TrainingSpec)


def test_torchtitan_cp_runs_say_how_they_are_balanced():
    from shardplan.cli.estimate import cp_balance_note
    e = _est("llama-3.1-8b", "torchtitan", 131072, 32, 128, tp=4, cp=4, sp=True, zero_stage=3)
    assert "torchtitan+cp_load_balance=true" in cp_balance_note(e)
    assert cp_balance_note(_est("llama-3.1-8b", "megatron", 131072, 32, 128, tp=4, cp=4, sp=True, zero_stage=1)) is None


def test_torchtitan_import_reads_the_cp_load_balancer():
    from shardplan.export import import_config
    toml = ("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 131072\n"
            "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 4\ncontext_parallel_degree = 4\n"
            "context_parallel_load_balancer = \"headtail\"\n")
    imported = import_config("torchtitan", toml, devices=128)
    assert any("context_parallel_load_balancer='headtail'" in n and "cp_load_balance=true" in n for n in imported.notes)
    assert not any("not read" in n and "load_balancer" in n for n in imported.notes)


@pytest.mark.parametrize("text, measured, expected", [
    ("no OOM errors", True, "ok"), ("ok, no out-of-memory errors", True, "ok"), ("oom: no", False, "ok"),
    ("OOM=0", False, "ok"), ("didn't OOM", False, "ok"), ("never OOMed", False, "ok"), ("OOMed", False, "oom"),
    ("CUDA OOM", False, "oom"), ("ran (zoom)", False, "failed"),
])
def test_record_import_status_words_around_oom(text, measured, expected):
    # breaker pass 54b: "no OOM errors" on a measured row became failed (its 3,000 tokens/s dropped, exit 0), "oom: no"
    # / "OOM=0" / "never OOMed" became oom, and "zoom" held an "oom"
    from shardplan.record_import import _status
    assert _status(text, measured, 2) == expected


def test_other_class_ignores_folders_named_like_a_cluster_and_reads_files_beside_the_records(tmp_path, monkeypatch):
    # breaker pass 54b: an `aws-p4de/` folder in the working folder hid the shipped A100 cluster (exit 0), and a
    # relative `a100.yaml` label was looked up from the working folder, not beside the records
    from shardplan.cli.calibrate import other_class
    from shardplan.presets.hardware import HARDWARE
    (tmp_path / "aws-p4de").mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a100.yaml").write_text("base: a100-80gb\n")
    monkeypatch.chdir(tmp_path)
    assert other_class(["aws-p4de", "a100.yaml"], HARDWARE["h100-sxm"], runs) == ["aws-p4de (ampere)",
                                                                                 "a100.yaml (ampere)"]


def test_record_import_mapping_later_item_wins_and_replaced_columns_are_named(tmp_path):
    # breaker pass 54b: a map file's constant beat a later --map COLUMN, and --map tput then a map file's constant kept
    # both (the constant read: 5 instead of the measured 3,000); --set over the CSV's own column said nothing
    from shardplan.record_import import parse_map_items, replaced_columns
    f = tmp_path / "m.yaml"
    f.write_text("constants: {seq_len: 2048, tokens_per_s_per_device: 5}\n")
    m = parse_map_items([str(f), "seq_len=seq"], [])
    assert m.columns["seq_len"] == "seq" and "seq_len" not in m.constants
    m = parse_map_items(["tokens_per_s_per_device=tput", str(f)], [])
    assert m.constants["tokens_per_s_per_device"] == 5 and "tokens_per_s_per_device" not in m.columns
    csv_file = tmp_path / "runs.csv"
    csv_file.write_text("model,tput\nllama-3-8b,3000\n")
    assert replaced_columns(csv_file, parse_map_items([], ["model=llama-3.1-70b"])) == ["model"]


def test_bench_output_does_not_stamp_rows_of_another_message_size(tmp_path):
    # breaker pass 54b: the source's 256 MiB rows were kept under the bench's 64 KiB measured_busbw_bytes
    from shardplan.cli.bench import bench_document
    from shardplan.loaders import load_hardware
    src = tmp_path / "cluster.yaml"
    src.write_text("base: h100-sxm\nmeasured_busbw_bytes: 268435456\n"
                   "measured_busbw:\n  AllGather: {1: 3.0e+11, 8: 4.0e+10}\n")
    fields = {"measured_busbw": {"AllGather": {1: 2.0e11}}, "measured_busbw_bytes": 65536, "sources": {}}
    doc = bench_document(str(src), load_hardware(str(src)), fields, smoke=True)
    assert doc["measured_busbw"] == {"AllGather": {1: 2.0e11}} and doc["measured_busbw_bytes"] == 65536
    assert "left out" in doc["sources"]["measured_busbw"]


def test_train_compute_dtype_long_spellings_are_the_short_ones():
    from shardplan.cli.train import _short_dtype
    assert _short_dtype("bfloat16") == "bf16" and _short_dtype("float32") == "fp32" and _short_dtype("fp16") == "fp16"


def test_rope_scaling_factor_bounds_and_llama32_scaling():
    from shardplan.loaders import model_from_hf_config
    from shardplan.presets.models import MODELS
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
           "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000,
           "rope_scaling": {"rope_type": "llama3", "factor": 10 ** 400}}
    with pytest.raises(ConfigError, match="factor from 1 to 1,024"):  # was an OverflowError traceback
        model_from_hf_config(cfg)
    assert (MODELS["llama-3.2-1b"].rope_scaling_type, MODELS["llama-3.2-1b"].rope_scaling_factor) == ("llama3", 32.0)


def test_host_memory_reads_the_address_space_limit(monkeypatch):
    # breaker pass 54b: under `ulimit -v` 8 GB an 11 GiB step passed the check (physical memory only) and XLA aborted
    import resource

    from shardplan.cli import runtime
    monkeypatch.setattr(resource, "getrlimit", lambda which: (8 * 2**30, resource.RLIM_INFINITY))
    assert runtime.host_memory_bytes() <= 8 * 2**30
    monkeypatch.setattr(runtime, "_accelerator_present", lambda: False)
    with pytest.raises(ConfigError, match=r"this process may use \d+ GiB"):
        runtime.check_compiled_memory(11 * 2**30 / 8, 8, 4096)


def test_breaker54b_sourced_forms_balancer_values_and_cp_note():
    from shardplan.export import import_config
    from shardplan.export.megatron import _sourced_notes
    # sources inside if / a function / builtin / eval "$(cat ...)" are named; `cp -r . dest` is no source
    for text in ("if [ -f c.sh ]; then source c.sh; fi", "setup() { source c.sh; }", "builtin source c.sh",
                 'eval "$(cat c.sh)"'):
        assert _sourced_notes(text) and "sources c.sh:" in _sourced_notes(text)[0]
    assert _sourced_notes("cp -r . dest") == ()
    # torchtitan refuses an empty balancer; numbers, lists and unknown names are no balancer either
    base = ("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n"
            "[parallelism]\ndata_parallel_shard_degree = -1\ncontext_parallel_degree = 2\n")
    for value in ('""', "3", '["headtail"]', "true", '"nonsense"'):
        with pytest.raises(ConfigError, match="context_parallel_load_balancer"):
            import_config("torchtitan", base + f"context_parallel_load_balancer = {value}\n", devices=8)
    import_config("torchtitan", base + 'context_parallel_load_balancer = "ptrr"\n', devices=8)
    # the cp note keeps the user's overrides and says nothing under Ulysses (heads sharded, no imbalance)
    from shardplan.cli.estimate import cp_balance_note
    from shardplan.presets.frameworks import framework_profile
    e = _est("llama-3.1-8b", "torchtitan", 65536, 8, 16, tp=2, cp=4, sp=True, zero_stage=3)
    over = e.training.model_copy(update={"framework": framework_profile("torchtitan+loss_chunks=8")})
    from shardplan.cost.step import estimate
    assert "--framework torchtitan+loss_chunks=8+cp_load_balance=true" in cp_balance_note(
        estimate(e.model, e.hardware, over, e.parallel, 16))
    # (torchtitan has no Ulysses; a profile file with cp_load_balance false and a2a allowed: the megatron one altered)
    unbalanced = e.training.model_copy(update={"framework": framework_profile("megatron+cp_load_balance=false")})
    a2a = estimate(e.model, e.hardware, unbalanced, e.parallel.model_copy(update={"cp_comm": "a2a", "zero_stage": 1}),
                   16)
    assert cp_balance_note(a2a) is None


def test_amd_infinity_fabric_mesh_gives_a_small_group_its_own_links():
    # new-user pass 54b: MI300X has no switch: one 64 GB/s link to each of 7 peers (448 GB/s only for all 8); a tp 2
    # group was priced at ~275 GB/s. AllGather of S = 1e9 B over tp 2 on MI300X: bus bandwidth 448e9 x 0.7 (efficiency)
    # x 1/7 (one link of seven) = 44.8e9 B/s; bytes per device (2-1)/2 x S = 5e8; time 5e8 / 44.8e9 = 11.161 ms plus the
    # latency 8.4 us + 1 step x 5 us
    from shardplan.cost.comm import collective_cost, mesh_share
    from shardplan.presets.hardware import HARDWARE
    mi = HARDWARE["mi300x"]
    assert mi.scale_up_topology == "mesh" and HARDWARE["h100-sxm"].scale_up_topology == "switch"
    assert (mesh_share(mi, 2, 1), mesh_share(mi, 4, 1), mesh_share(mi, 8, 1)) == (1 / 7, 3 / 7, 1.0)
    assert mesh_share(mi, 4, 2) == 3 / 7 and mesh_share(HARDWARE["h100-sxm"], 2, 1) == 1.0
    c = collective_cost("AllGather", 1e9, 2, 1, mi)
    assert c.time_s == pytest.approx(5e8 / 44.8e9 + 8.4e-6 + 5e-6, rel=1e-6)
    # a pipeline / cp send to a peer in the node uses one link
    s = collective_cost("SendRecv", 1e8, 2, 1, mi)
    assert s.time_s == pytest.approx(1e8 / 44.8e9 + 8.4e-6 + 5e-6, rel=1e-6)


#: the seven records of _TINY_TPUT with the 0.001 tokens/s record made plausible (5,153): a fit that writes its file
FIT_RUNS = _TINY_TPUT.replace('"tokens_per_s_per_device": 0.001', '"tokens_per_s_per_device": 5153.0')


def calibrated_file(tmp_path, runs_text: str = FIT_RUNS):
    """(the CliRunner result, the written file) of ``calibrate RUNS -H h100-sxm -o fit.yaml --no-cross-validation``."""
    from typer.testing import CliRunner

    from shardplan.cli import app
    runs = tmp_path / "runs.jsonl"
    runs.write_text(runs_text + "\n")
    out = tmp_path / "fit.yaml"
    r = CliRunner().invoke(app, ["calibrate", str(runs), "-H", "h100-sxm", "-o", str(out), "--no-cross-validation"])
    assert out.exists(), r.output
    return r, out


def test_calibrate_without_cross_validation_marks_its_file(tmp_path):
    # new-user pass 54b: with cross-validation the records were a poor fit (exit 1); --force --no-cross-validation
    # wrote a clean-looking file with exit 0. The file now says the held-out check did not run, and commands repeat it.
    import yaml
    from typer.testing import CliRunner

    from shardplan.cli import app
    r, out = calibrated_file(tmp_path)
    assert "not_cross_validated" in yaml.safe_load(out.read_text())["sources"]
    assert "7 of 7 records give no precision: priced as bf16-mixed" in r.output  # new-user pass 54b
    r2 = CliRunner().invoke(app, ["estimate", "-m", "llama-3-8b", "-H", str(out), "-n", "8", "-s", "4096", "-b", "64",
                                  "--tp", "8"])
    assert "--no-cross-validation" in r2.output


def test_calibrate_without_hardware_takes_the_records_own():
    # new-user pass 54b: every record named mi300x, the fit priced them on the h100-sxm default and refused their HBM
    from shardplan.cli.calibrate import _records_hardware
    from shardplan.records import RunRecord
    rec = dict(model="llama-3-8b", devices=8, seq_len=4096, global_batch_size=64, parallel={"tp": 8},
               tokens_per_s_per_device=5000.0)
    assert _records_hardware([RunRecord(hardware="mi300x", **rec)] * 2) == "mi300x"
    assert _records_hardware([RunRecord(hardware="MI300X", **rec)]) == "mi300x"
    assert _records_hardware([RunRecord(hardware="mi300x", **rec), RunRecord(hardware="h200", **rec)]) == "h100-sxm"
    assert _records_hardware([RunRecord(hardware="my-cluster", **rec)]) == "h100-sxm"
    assert _records_hardware([RunRecord(hardware="aws-p4de", **rec)]).endswith("aws-p4de.yaml")


def test_calibrate_prints_each_held_out_group():
    # new-user pass 54b: one median per split hid a model group the fit missed; each group now has its line
    from shardplan.calibrate import calibrate
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.records import RunRecord
    import json
    recs = [RunRecord(**json.loads(line)) for line in
            _TINY_TPUT.replace('"tokens_per_s_per_device": 0.001', '"tokens_per_s_per_device": 5153.0').splitlines()]
    cal = calibrate(recs, HARDWARE["h100-sxm"], FRAMEWORKS["megatron"])
    models = [line for line in cal.cross_validated_groups if line.startswith("leave-one-model-out: ")]
    assert len(models) == cal.cross_validated["leave-one-model-out"]["groups"] == 2
    assert any(line.startswith("leave-one-node-count-out: 1 node held out (") for line in cal.cross_validated_groups)
