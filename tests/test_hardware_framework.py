"""A calibrated hardware file names the framework profile it was fitted with (``framework:``): commands
use it when --framework is not given (issue 10: ``usp_grid.py --fit -o cluster.yaml`` then
``shardplan estimate --hardware cluster.yaml`` predicts the grid's runs)."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from shardplan.cli import app
from shardplan.errors import ConfigError
from shardplan.inputs import build_inputs, default_framework
from shardplan.loaders import load_hardware

runner = CliRunner()

SPEC = dict(model="llama-3-8b", devices=16, seq_len=4096, global_batch=64, global_batch_tokens=None)


def _file(tmp_path, doc: dict):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_hardware_file_framework_is_the_default(tmp_path):
    path = _file(tmp_path, {"base": "h100-sxm", "matmul_efficiency": 0.5, "framework": "nanotron"})
    # the hardware itself ignores the key (its fields are the base's plus the override)
    assert load_hardware(path).matmul_efficiency == 0.5
    assert build_inputs(hardware=path, **SPEC).training.framework.name == "nanotron"
    # an explicit --framework wins; presets have no framework of their own
    assert build_inputs(hardware=path, framework="megatron", **SPEC).training.framework.name == "megatron"
    assert build_inputs(hardware="h100-sxm", **SPEC).training.framework.name == "megatron"
    assert default_framework("h100-sxm") is None


def test_hardware_file_framework_mapping_overrides_its_base(tmp_path):
    path = _file(tmp_path, {"base": "h100-sxm", "framework": {"base": "nanotron", "layer_host_s": 0.01,
                                                              "pp_stall_min_tp_nodes": 4}})
    prof = default_framework(path)
    # the base's fields stay (nanotron's cost-greedy split), the mapping's replace them
    assert prof.name == "nanotron" and prof.layer_host_s == 0.01 and prof.pp_stall_min_tp_nodes == 4
    assert prof.pipeline_split == "cost_greedy"


@pytest.mark.parametrize("value, match", [(3, "framework=3"), ({"base": "nope"}, "framework='nope' is unknown"),
                                          ({"base": "nanotron", "layer_host_s": -1}, "layer_host_s=-1")])
def test_bad_framework_section_is_named(tmp_path, value, match):
    path = _file(tmp_path, {"base": "h100-sxm", "framework": value})
    with pytest.raises(ConfigError, match=match):
        build_inputs(hardware=path, **SPEC)
    with pytest.raises(ConfigError, match=match):  # checked even when --framework replaces the section
        build_inputs(hardware=path, framework="maxtext", **SPEC)


def test_estimate_uses_and_reports_the_file_framework(tmp_path):
    path = _file(tmp_path, {"base": "h100-sxm", "framework": "nanotron"})
    args = ["estimate", "--model", "llama-3-8b", "--hardware", path, "--devices", "16", "--seq-len", "4096",
            "--global-batch", "64", "--tp", "8", "--pp", "2", "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["training"]["framework"] == "nanotron"
    assert "framework profile 'nanotron' from the hardware file" in r.stderr
    r2 = runner.invoke(app, args + ["--framework", "megatron"])
    assert json.loads(r2.stdout)["training"]["framework"] == "megatron"


def test_calibrate_from_a_hardware_file_writes_a_loadable_file(tmp_path):
    # calibrate -o on a hardware *file* keeps that file's fields (its base preset, measured tables) and
    # names the profile it used, with the profile's own fields (layer_host_s 0.01 stays)
    from test_calibrate import synthetic_records

    from shardplan.records import write_records
    rec = tmp_path / "recs.jsonl"
    write_records(rec, synthetic_records())
    hw = _file(tmp_path, {"base": "h100-sxm", "scale_out_latency": 3e-5,
                          "framework": {"base": "nanotron", "name": "mynano", "layer_host_s": 0.01}})
    out, prof = tmp_path / "cal.yaml", tmp_path / "prof.yaml"
    r = runner.invoke(app, ["calibrate", str(rec), "--hardware", hw, "--no-cross-validation", "-o", str(out),
                            "--profile-out", str(prof), "--force"])
    # the synthetic records were made without the profile's 10 ms per layer of host time, which the fit does not
    # move: 74% median error in sample, a poor fit (exit code 1), written because of --force
    assert r.exit_code == 1 and "poor fit" in r.output and "written anyway" in r.output, r.output
    doc = yaml.safe_load(out.read_text())
    assert doc["base"] == "h100-sxm" and doc["framework"]["base"] == "nanotron"
    assert doc["framework"]["name"] == "mynano" and doc["framework"]["layer_host_s"] == 0.01
    assert load_hardware(str(out)).name.endswith("-calibrated")
    assert default_framework(str(out)).layer_host_s == 0.01
    assert yaml.safe_load(prof.read_text())["base"] == "nanotron"


def test_tied_embedding_allreduce_is_counted_once():
    # the tied-embedding gradient all-reduce (axis pp, per step) is in the data-parallel per-step exposure;
    # the step's parts then add up to the step (it was also added per microbatch before)
    from shardplan.cost.step import estimate
    from shardplan.parallel import ParallelConfig
    from shardplan.presets.hardware import HARDWARE
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    m = ModelSpec(name="t", n_layers=16, d_model=2048, n_heads=32, ffn_dim=8192, vocab_size=131072,
                  tied_embeddings=True)
    e = estimate(m, HARDWARE["h100-sxm"], TrainingSpec(seq_len=4096, global_batch_size=256),
                 ParallelConfig(pp=2, microbatch_size=1), 32)
    t = e.to_dict()["time_s"]
    parts = sum(t[k] for k in ("matmul", "elementwise", "recompute", "exposed_comm", "bubble", "optimizer",
                               "framework_overhead", "overlap_slowdown"))
    assert any(c.tensor == "grads" and c.axis == "pp" for c in e.collectives)
    assert parts == pytest.approx(t["step"], rel=1e-12)


BASE = ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--devices", "64", "--seq-len", "4096",
        "--global-batch", "64"]


def _run(*args):
    r = runner.invoke(app, [*args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def test_deepspeed_pipelines_only_with_zero_0_or_1_and_its_own_schedule():
    # DeepSpeed's PipelineEngine asserts ZeRO stage < 2 and has one training schedule (TrainSchedule, 1F1B)
    code, out = _run("estimate", *BASE, "--framework", "deepspeed", "--pp", "8", "--zero-stage", "3")
    assert code == 2 and "legal zero_stage with pipelining: 0, 1" in out
    code, out = _run("estimate", *BASE, "--framework", "deepspeed", "--pp", "8", "--schedule", "interleaved",
                     "--virtual-stages", "2")
    assert code == 2 and "legal schedule: 1f1b" in out
    assert _run("estimate", *BASE, "--framework", "deepspeed", "--zero-stage", "3")[0] in (0, 1)  # pp = 1: fine
    # the search keeps ZeRO-0/1 pipelines (ZeRO-2 does not dominate them where pipelining forbids it)
    code, out = _run("plan", *BASE, "--framework", "deepspeed", "--fix", "pp=4")
    assert code == 0 and "pp=4" in out


def test_plan_refuses_a_schedule_the_framework_lacks_and_uses_the_one_it_has(tmp_path):
    code, out = _run("plan", *BASE, "--framework", "nanotron", "--pp", "2", "--schedule", "interleaved")
    assert code == 2 and "legal schedule: gpipe, 1f1b" in out
    f = tmp_path / "gpipe.yaml"
    f.write_text("base: torchtitan\nschedules: [gpipe]\n")
    code, out = _run("plan", *BASE, "--framework", str(f), "--pp", "2")
    assert code == 0 and "gpipe" in out


def test_nanotron_microbatch_floor_is_its_1f1b_engines():
    # global batch 8 on dp = 8: one microbatch, fewer than pp - 1 = 7 -- refused for 1F1B, legal for GPipe
    # (nanotron's AllForwardAllBackwardPipelineEngine has no such assert)
    args = ("estimate", *BASE[:-1], "8", "--framework", "nanotron", "--pp", "8")
    code, out = _run(*args)
    assert code == 2 and "fewer than pp - 1 = 7" in out and "no microbatch size gives that" in out
    assert _run(*args, "--schedule", "gpipe")[0] in (0, 1)


def test_profile_file_errors_name_the_file_and_the_legal_values(tmp_path):
    cases = {"base: torchtitan\nbogus_field: 1\n": "'bogus_field' is not a profile field; legal: base, name",
             "base: torchtitan\nzero_stages: [true]\n": "not booleans",
             "base: nosuch\n": "base: framework='nosuch' is unknown",
             "base: torchtitan\nname: ''\n": "name=''",
             # a range error gives the field's whole range (Field(ge=0, le=1)), whichever bound was crossed
             "base: torchtitan\nallocator_overhead: 2\n": "allocator_overhead=2; legal: a number >= 0 and <= 1",
             "base: torchtitan\nallocator_overhead: -1\n": "allocator_overhead=-1; legal: a number >= 0 and <= 1",
             # no base: an error naming the legal bases, not a silent megatron
             "layer_host_s: 0.001\n": "base is missing (the profile whose fields the others replace); legal base: "
                                      "megatron, maxtext"}
    for i, (text, match) in enumerate(cases.items()):
        f = tmp_path / f"p{i}.yaml"
        f.write_text(text)
        code, out = _run("estimate", *BASE, "--framework", str(f))
        assert code == 2 and match in out and f"p{i}.yaml" in out, (text, out)
    # two files naming each other: one message naming both, not repeated
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    code, out = _run("estimate", *BASE, "--framework", str(tmp_path / "a.yaml"))
    assert code == 2 and "name each other" in out and out.count("framework ") == 1


def test_moe_and_recompute_module_options_are_checked():
    # DeepEP needs an ep group; recompute modules are Megatron-LM's; a module named twice is named in the error
    code, out = _run("estimate", *BASE, "--moe-dispatcher", "deepep")
    assert code == 2 and "needs ep > 1" in out
    code, out = _run("estimate", *BASE, "--recompute", "selective", "--recompute-modules", "mlp,layernorm,mlp")
    assert code == 2 and "names mlp twice" in out
    code, out = _run("estimate", *BASE, "--framework", "deepspeed", "--recompute", "selective",
                     "--recompute-modules", "mlp")
    assert code == 2 and "--framework megatron" in out
    assert _run("estimate", *BASE, "--recompute", "selective", "--recompute-modules", "mlp")[0] in (0, 1)
    code, out = _run("estimate", *BASE, "--recompute", "selective", "--recompute-modules", "moe_act,mlp")
    assert code in (0, 1) and "recompute_modules moe_act: the model has no such layers" in out
    code, out = _run("plan", *BASE, "-o", "x.sh")
    assert code == 2 and "give --export FRAMEWORK" in out


def test_megatron_import_reads_continued_lines_and_checks_flag_pairs(tmp_path):
    from shardplan.export import exporter
    script = ("torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py \\\n  --tensor-model-parallel-size 2 \\\n"
              "  --recompute-granularity selective --recompute-modules layernorm moe_act \\\n  --micro-batch-size 1\n")
    assert exporter("megatron").read(script).parallel.recompute_modules == ("layernorm", "moe_act")
    for bad, match in (("--moe-enable-deepep --expert-model-parallel-size 8", "needs --moe-token-dispatcher-type flex"),
                       ("--recompute-modules mlp", "takes effect with --recompute-granularity selective"),
                       ("--recompute-granularity selective --recompute-modules mlp mlp", "names mlp twice")):
        with pytest.raises(ConfigError, match=match):
            exporter("megatron").read(f"torchrun --nnodes 1 --nproc-per-node 8 x.py {bad}")


def test_profiles_refuse_what_their_frameworks_cannot_run():
    # MaxText shards the weights over its context and expert axes (ZeRO-3 only with cp / ep > 1); torchtitan's FSDP2
    # has no ZeRO-1, shards over dp_shard x cp (ZeRO-2/3 with cp > 1) and always shards the sequence with tp
    import pytest
    from shardplan.errors import ConfigError
    from shardplan.parallel import ParallelConfig, validate
    from shardplan.presets.frameworks import framework_profile
    from shardplan.presets.models import MODELS
    from shardplan.specs.training import TrainingSpec

    def check(fw, model, **kw):
        tr = TrainingSpec(seq_len=4096, global_batch_size=512, framework=framework_profile(fw))
        return validate(ParallelConfig(**kw), MODELS[model], tr, 128)
    for kw, legal in ((dict(ep=8, zero_stage=1), [3]), (dict(cp=2, zero_stage=0), [3])):
        with pytest.raises(ConfigError) as e:
            check("maxtext", "mixtral-8x7b", **kw)
        assert e.value.field == "zero_stage" and e.value.legal == legal, str(e.value)
    check("maxtext", "mixtral-8x7b", ep=8, zero_stage=3)
    with pytest.raises(ConfigError, match="legal zero_stage: 0, 2, 3"):
        check("torchtitan", "llama-3-8b", zero_stage=1)
    with pytest.raises(ConfigError, match="legal zero_stage: 2, 3"):
        check("torchtitan", "llama-3-8b", cp=2, zero_stage=0)
    with pytest.raises(ConfigError, match="legal sp: true"):
        check("torchtitan", "llama-3-8b", tp=2, zero_stage=3)
    check("torchtitan", "llama-3-8b", tp=2, sp=True, cp=2, zero_stage=2)
    # the megatron profile keeps all of them
    check("megatron", "llama-3-8b", tp=2, cp=2, zero_stage=1)


def test_amd_gemm_rates_follow_the_measured_training_shape_gemm():
    # SemiAnalysis (Dec 2024) GEMM benchmark at Llama-70B shapes: MI300X ~620 TFLOPS bf16, ~990 fp8 (H100 0.73 in
    # the same benchmark); the MI325X scaled by AMD's Max-Achievable FLOPs ratio (843 / 708 bf16, 1519 / 1273 fp8);
    # x the H100's end-to-end / isolated ratio 0.59 / 0.73 = 0.808:
    # MI300X bf16 620 / 1307.4 = 0.474 x 0.808 = 0.383 -> 0.38, fp8 990 / 2614.9 = 0.379 x 0.808 = 0.306 -> 0.31;
    # MI325X bf16 620 x 843 / 708 = 738.2 / 1307.4 = 0.565 x 0.808 = 0.456 -> 0.46,
    #        fp8 990 x 1519 / 1273 = 1181.3 / 2614.9 = 0.452 x 0.808 = 0.365 -> 0.37
    from shardplan.presets.hardware import HARDWARE
    assert (HARDWARE["mi300x"].matmul_efficiency, HARDWARE["mi300x"].fp8_matmul_efficiency) == (0.38, 0.31)
    assert (HARDWARE["mi325x"].matmul_efficiency, HARDWARE["mi325x"].fp8_matmul_efficiency) == (0.46, 0.37)
    assert HARDWARE["mi300x"].isolated_matmul_efficiency == 0.474
    assert HARDWARE["mi325x"].isolated_matmul_efficiency == 0.565
    for name, maf in (("mi300x", 708), ("mi325x", 843)):  # never above the best GEMM AMD measured
        assert HARDWARE[name].achieved_matmul_flops("bf16") < maf * 1e12
    assert HARDWARE["mi325x"].hbm_bytes == 256 * 2**30 and HARDWARE["mi325x"].hbm_bandwidth == 6.0e12


def test_mi355x_peak_is_its_compute_units_times_clock():
    # 256 CUs x 2.4e9 Hz x 4,096 bf16 FLOP / clock / CU = 2,516.6e12; fp8 twice; the MI300X's
    # 304 x 2.1e9 x 2,048 = 1,307.4e12 is the same formula at CDNA 3's per-CU rate (its datasheet figure)
    from shardplan.presets.hardware import HARDWARE
    h = HARDWARE["mi355x"]
    assert h.peak_flops_bf16 == pytest.approx(256 * 2.4e9 * 4096, rel=1e-4)
    assert h.peak_flops_fp8 == pytest.approx(2 * h.peak_flops_bf16, rel=1e-4)
    assert HARDWARE["mi300x"].peak_flops_bf16 == pytest.approx(304 * 2.1e9 * 2048, rel=1e-4)
    # AMD's Max-Achievable-FLOPs CDNA 3 rates: 708 / 1307.4 x 0.808 = 0.438 -> 0.44, 1273 / 2614.9 x 0.808 = 0.39
    assert (h.matmul_efficiency, h.fp8_matmul_efficiency) == (0.44, 0.39)


def test_hardware_names_users_and_tables_give_read_as_presets(tmp_path):
    # exact aliases only: "H100 SXM5" is the h100-sxm preset, a bare "a100" the 80 GB part; H100 PCIe (756 TFLOP/s
    # bf16, HBM2e) has no preset and must not be priced as the SXM part: refused with the preset list
    assert load_hardware("H100 SXM5").name == "h100-sxm" and load_hardware("a100").hbm_bytes == 80 * 2**30
    assert load_hardware("Trillium").name == "tpu-v6e" and load_hardware("v5p").name == "tpu-v5p"
    with pytest.raises(ConfigError, match="neither a preset nor a file; presets: .*h100-sxm"):
        load_hardware("h100-pcie")
    f = tmp_path / "cluster.yaml"
    f.write_text("base: h100\nscale_out_bandwidth: 12.5e9\n")
    hw = load_hardware(str(f))
    assert hw.peak_flops_bf16 == load_hardware("h100-sxm").peak_flops_bf16 and hw.scale_out_bandwidth == 12.5e9


def test_export_variants_differ_from_their_parts_only_in_the_datasheet_fields():
    # A800 = A100 80GB with NVLink 400 GB/s bidirectional -> 200e9 one-way (A100: 300e9); GH200 = H100 with 96 GiB of
    # HBM3 at 4.0 TB/s and a 450 GB/s NVLink-C2C host link (H100: 80 GiB, 3.35 TB/s, PCIe Gen5 64 GB/s)
    a800, a100 = load_hardware("a800"), load_hardware("a100-80gb")
    assert a800.scale_up_bandwidth == 200e9 and a100.scale_up_bandwidth == 300e9
    # (and no host memory: the A800 ships in integrators' HGX servers, no DGX datasheet gives one; the a100-80gb
    # preset's 2 TiB is the DGX A100 640GB's)
    assert a800.host_memory_bytes is None and a100.host_memory_bytes == 2 * 2**40
    assert a800.model_dump(exclude={"name", "scale_up_bandwidth", "sources", "host_memory_bytes"}) == \
        a100.model_dump(exclude={"name", "scale_up_bandwidth", "sources", "host_memory_bytes"})
    gh200, h100 = load_hardware("gh200"), load_hardware("h100-sxm")
    assert (gh200.hbm_bytes, gh200.hbm_bandwidth, gh200.host_bandwidth) == (96 * 2**30, 4.0e12, 450e9)
    assert gh200.peak_flops_bf16 == h100.peak_flops_bf16 and h100.host_bandwidth == 64e9
    # node of 4 superchips with one 200 Gb/s NIC each: 25 GB/s per GPU (a DGX H100: 8 GPUs, 400 Gb/s = 50 GB/s each)
    assert (gh200.scale_up_size, gh200.scale_out_bandwidth) == (4, 25e9)


def test_files_bench_and_calibrate_write_keep_a_cluster_files_own_fields():
    # bench -o / calibrate -o extend the --hardware file: gcp-a3-high's 12.5e9 B/s NIC share and base stay (a file
    # written with base: gcp-a3-high could not be read: base must be a preset)
    from shardplan.loaders import hardware_document
    src = "shardplan/data/clusters/gcp-a3-high.yaml"
    doc = hardware_document(src, load_hardware(src), "gcp-a3-high-measured")
    assert doc["base"] == "h100-sxm" and float(doc["scale_out_bandwidth"]) == 12.5e9 and "scale_out_bandwidth" in doc["sources"]
    assert hardware_document("h100", load_hardware("h100"), "x") == {"base": "h100-sxm", "name": "x", "sources": {}}


def test_calibrate_warns_when_records_name_other_hardware(tmp_path):
    from shardplan.records import write_records
    from tests.test_calibrate import synthetic_records
    path = tmp_path / "runs.jsonl"
    write_records(path, [rec.model_copy(update={"hardware": h}) for rec, h in
                         zip(synthetic_records()[:3], ("b200", "h100", "nonsense"))], append=False)
    r = CliRunner().invoke(app, ["calibrate", str(path), "--hardware", "h100-sxm", "--no-cross-validation"])
    # 2 of the 3 records (the third, 'h100', is the base preset's alias); a user mixing device classes was not told
    # that only some records name another one
    assert "2 of the 3 records name hardware 'b200', 'nonsense'" in " ".join(r.output.split())


def test_names_in_any_case_and_close_matches_are_suggested():
    from shardplan.loaders import load_model
    assert load_model("LLAMA-3-8B").n_params == load_model("llama-3-8b").n_params
    with pytest.raises(ConfigError, match=r"not a preset \(did you mean llama-3-8b"):
        load_model("llama3-8b")
    with pytest.raises(ConfigError, match=r"neither a preset nor a file \(did you mean [^)]*h800"):
        load_hardware("h1000")


def test_framework_name_with_field_overrides_equals_the_profile_file(tmp_path):
    # "megatron+loss=in_place" is the profile a file {base: megatron, loss: in_place} gives (the form of the public
    # runs in docs/accuracy.md): the same estimate, and values read as YAML (a number, a boolean, a string)
    from shardplan.presets.frameworks import framework_profile
    f = tmp_path / "p.yaml"
    f.write_text("base: megatron\nloss: in_place\nlayer_overhead_s: 0.001\n")
    inline = framework_profile("megatron+loss=in_place+layer_overhead_s=0.001")
    assert (inline.loss, inline.layer_overhead_s, inline.name) == ("in_place", 0.001, "megatron")
    def out(framework: str) -> dict:
        r = runner.invoke(app, ["estimate", *BASE, "--framework", framework, "--json"])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)
    by_file, plain = out(str(f)), out("megatron")
    by_name = out("megatron+loss=in_place+layer_overhead_s=0.001")
    assert by_name["time_s"]["step"] == by_file["time_s"]["step"] != plain["time_s"]["step"]
    assert by_name["memory_bytes"]["total"] == by_file["memory_bytes"]["total"]
    assert framework_profile("megatron+module_recompute=false").module_recompute is False
    # a number's exponent sign is not an override separator (breaker finding): 1.6e+9 = 1,600,000,000 host updates/s
    sci = framework_profile("deepspeed+host_adam_params_per_s=1.6e+9+loss=eager")
    assert (sci.host_adam_params_per_s, sci.loss) == (1_600_000_000, "eager")
    assert framework_profile(sci.origin).host_adam_params_per_s == 1_600_000_000  # the spec reads back
    for bad, match in [("megatron+loss", "'loss' is not field=value"), ("megatron+loss=eager+loss=fused", "twice"),
                       ("megatron+loss=bogus", "legal: 'fused', 'eager' or 'in_place'"),
                       ("nosuch+loss=eager", "framework='nosuch' is unknown"),
                       ("megatron+bogus=1", "'bogus' is not a profile field")]:
        code, out = _run("estimate", *BASE, "--framework", bad)
        assert code == 2 and match in " ".join(out.split()), (bad, out)


def test_inline_overrides_keep_their_text_and_refuse_name_and_base(tmp_path):
    # the override text is the profile's spec: estimate --json names it, the export header prices "megatron+loss=
    # in_place profile", a plan file made with it compares equal to the same --framework (no "made for" note), the
    # band says the profile has overrides; a file whose path holds a "+" still reads as a file (with overrides too);
    # name and base are the base profile's and cannot be overridden inline
    from shardplan.presets.frameworks import framework_profile
    p = framework_profile("megatron+loss=in_place")
    assert (p.name, p.spec, p.label, p.inline) == ("megatron", "megatron+loss=in_place", "megatron+loss=in_place", True)
    assert framework_profile("megatron").spec == "megatron"
    r = runner.invoke(app, ["estimate", *BASE, "--framework", "megatron+loss=in_place", "--json"])
    assert json.loads(r.stdout)["training"]["framework"] == "megatron+loss=in_place"
    r = runner.invoke(app, ["estimate", *BASE, "--framework", "megatron+loss=in_place"])
    assert "your profile overrides loss=in_place" in " ".join(r.output.split())
    out = tmp_path / "m.sh"
    r = runner.invoke(app, ["export", "--to", "megatron", *BASE, "--framework", "megatron+loss=in_place", "-o", str(out)])
    assert r.exit_code == 0 and "(megatron+loss=in_place profile)" in out.read_text()
    plan = tmp_path / "p.json"
    assert runner.invoke(app, ["import", str(out), "--from", "megatron", "-o", str(plan)]).exit_code == 0
    r = runner.invoke(app, ["estimate", "--plan", str(plan), *BASE, "--framework", "megatron+loss=in_place"])
    assert r.exit_code == 0 and "made for framework" not in r.output
    folder = tmp_path / "a+b"
    folder.mkdir()
    (folder / "p.yaml").write_text("base: megatron\nloss: in_place\n")
    assert framework_profile(str(folder / "p.yaml")).loss == "in_place"
    both = framework_profile(str(folder / "p.yaml") + "+layer_overhead_s=0.001")
    assert (both.loss, both.layer_overhead_s, both.inline) == ("in_place", 0.001, False)
    for bad in ("megatron+name=foo", "megatron+base=deepspeed"):
        code, text = _run("estimate", *BASE, "--framework", bad)
        assert code == 2 and "cannot be overridden inline" in " ".join(text.split()), text


def test_a_profile_cannot_default_sp_off_where_tp_requires_it():
    # tp_requires_sp (MaxText's tensor axis shards the activations) with layout_defaults sp=false refused its own
    # default at every tp > 1, naming the user's flags; now the profile itself is refused, naming both fields
    code, out = _run("estimate", *BASE, "--tp", "2", "--framework", "megatron+tp_requires_sp=true+layout_defaults={sp: false}")
    assert code == 2 and "layout_defaults sp=false with tp_requires_sp=true" in " ".join(out.split())
    assert _run("estimate", *BASE, "--tp", "2", "--framework", "megatron+tp_requires_sp=true")[0] == 0


def test_yaml_numbers_are_yaml_1_2(tmp_path):
    from shardplan.presets.frameworks import framework_profile
    # breaker: PyYAML's YAML 1.1 read a leading zero as octal and 1:30 as base 60, silently: hbm_bytes 0100000000000
    # was 8 GiB (0o100000000000 = 8 x 2**30), step_overhead_s=010 was 8 s. YAML 1.2's core schema: 010 is ten, 1:30 a
    # string (refused by the number field), 1e9 a float; 0o / 0x keep their bases
    from shardplan.loaders import load_hardware, load_yaml_value
    assert [load_yaml_value(t) for t in ("010", "-010", "1e9", "0o17", "0x1F", "+1", "1.6e+9")] == \
        [10, -10, 1e9, 15, 31, 1, 1.6e9]
    assert load_yaml_value("1:30") == "1:30" and load_yaml_value("true") is True
    f = tmp_path / "h.yaml"
    f.write_text("base: h100-sxm\nname: x\nhbm_bytes: 0100000000000\n")
    assert load_hardware(str(f)).hbm_bytes == 100_000_000_000
    assert framework_profile("megatron+step_overhead_s=010").step_overhead_s == 10
    # a number's own sign is not an override separator: =+1 and [1e+9] (a list, refused by the number field)
    assert framework_profile("megatron+step_overhead_s=+1").step_overhead_s == 1
    with pytest.raises(ConfigError, match=r"host_adam_params_per_s=\[1000000000.0\]; legal: a number"):
        framework_profile("megatron+host_adam_params_per_s=[1e+9]")
    with pytest.raises(ConfigError, match=r"step_overhead_s='1:30'; legal: a number"):
        framework_profile("megatron+step_overhead_s=1:30")
    # an override too long for a file name is still read as an override (was "File name too long")
    with pytest.raises(ConfigError, match=r"loss='x+\.\.\.x+'; legal: 'fused', 'eager' or 'in_place'"):
        framework_profile("megatron+loss=" + "x" * 5000)
