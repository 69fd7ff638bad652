"""Findings of the fifty-sixth session: each test fails on the behaviour before the fix."""

import json

import pytest


def _cli(args):
    from typer.testing import CliRunner

    from shardplan.cli import app
    return CliRunner().invoke(app, args)


def _estimate(layout, **kw):
    """The Estimate ``shardplan estimate`` builds from these flags (every flag not given at its default)."""
    from shardplan.cli.estimate import estimate_layout
    flags = dict(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=64,
                 global_batch_tokens=None, precision=None, attention=None, framework=None, dropout=False,
                 optimizer_dtype=None, moe_capacity_factor=None, moe_imbalance=1.0, moe_routing="uniform",
                 scale_up_size=None, plan=None)
    return estimate_layout({**flags, **kw}, layout)


MAXTEXT_GPU = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--framework", "maxtext"]


def test_estimate_json_and_plan_json_carry_the_notes_estimate_prints():
    # last session's list: the XLA-flag note (the pipelined all-gather the maxtext profile's GPU price rests on) was
    # said on stderr only; a script reading --json, or the HTML report, never saw it
    r = _cli(["estimate", *MAXTEXT_GPU, "--zero-stage", "3", "--json"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    assert any("--xla_gpu_enable_pipelined_all_gather=true" in n for n in doc["notes"])
    # every stderr note is in the list, the layout's own notes first
    from shardplan.cli.estimate import estimate_notes
    assert doc["notes"] == estimate_notes(_estimate({"zero_stage": 3}, devices=16, framework="maxtext"))
    # the Megatron default on the same layout rests on no XLA flag
    r = _cli(["estimate", *MAXTEXT_GPU[:-2], "--zero-stage", "3", "--json"])
    assert not any("XLA_FLAGS" in n for n in json.loads(r.stdout[r.stdout.index("{"):])["notes"])
    r = _cli(["plan", *MAXTEXT_GPU, "--json"])
    plans = json.loads(r.stdout[r.stdout.index("{"):])["plans"]
    assert plans[0]["parallel"]["zero_stage"] == 3  # the winner gathers parameters: the note applies
    assert any("--xla_gpu_enable_pipelined_all_gather=true" in n for n in plans[0]["notes"])
    assert all("notes" not in p for p in plans[1:])


def test_html_report_lists_the_notes(tmp_path):
    pytest.importorskip("plotly")
    out = tmp_path / "r.html"
    r = _cli(["report", *MAXTEXT_GPU, "--zero-stage", "3", "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert "<h2>Notes</h2>" in page and "--xla_gpu_enable_pipelined_all_gather=true" in page
    # no notes, no section
    from shardplan.web.report import render_html
    assert "<h2>Notes</h2>" not in render_html(_estimate({}))


def test_export_of_a_plan_ranked_under_another_framework_is_priced_with_the_targets_profile(tmp_path):
    # new-user pass 56: a layout ranked under megatron, exported --to torchtitan, was headed by Megatron's step time
    # (11.4 s) where torchtitan's own profile prices 17.7 s, though `export --help` promises the target's profile
    plan = tmp_path / "p.json"
    r = _cli(["plan", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "16", "-s", "4096", "-b", "64", "--fix",
              "zero_stage=3", "--fix", "tp=1", "--json", "--top", "1"])
    plan.write_text(r.stdout[r.stdout.index("{"):])
    base = ["export", "--plan", f"{plan}#1", "-m", "llama-3-8b", "-H", "h100-sxm", "--to", "torchtitan"]
    tt, kept = _cli(base), _cli([*base, "--framework", "megatron"])
    assert tt.exit_code == 0 and kept.exit_code == 0
    assert "# predicted step time (torchtitan profile)" in tt.stdout
    assert "with the torchtitan profile (the plan records megatron)" in " ".join(tt.output.split())
    assert "# predicted step time (megatron profile)" in kept.stdout  # --framework keeps the plan's
    # the header is torchtitan's own estimate of the plan's layout
    mbs = json.loads(plan.read_text())["plans"][0]["parallel"]["microbatch_size"]
    e = _estimate({"zero_stage": 3, "dp": 16, "tp": 1, "microbatch_size": mbs}, devices=16, framework="torchtitan")
    step = float(tt.stdout.split("# predicted step time (torchtitan profile): ")[1].split(" s")[0])
    assert step == pytest.approx(e.step_s, abs=1e-3)
    # a plan ranked with a variant of the target's profile keeps it
    from shardplan.cli.export import plan_target_profile
    doc = json.loads(plan.read_text())
    doc["plans"][0]["training"]["framework"] = "torchtitan-compile"
    plan.write_text(json.dumps(doc))
    assert plan_target_profile("torchtitan", "h100-sxm", f"{plan}#1") == (None, None)
    assert plan_target_profile("megatron", "h100-sxm", f"{plan}#1") == (None, None)  # no profile of its own


def test_calibrate_params_fits_only_the_named_constants(tmp_path):
    # new-user pass 56: two records, nine default parameters: a poor fit whose advice ("hold it with a parameter list")
    # named an option calibrate did not have; --force halved matmul_efficiency for every later plan
    import yaml

    from test_session54 import FIT_RUNS
    from shardplan.calibrate import catalog, params_named
    from shardplan.cli.calibrate import ParamsOpt
    runs = tmp_path / "runs.jsonl"
    runs.write_text("\n".join(FIT_RUNS.splitlines()[:2]) + "\n")
    out = tmp_path / "fit.yaml"
    r = _cli(["calibrate", str(runs), "-H", "h100-sxm", "-o", str(out), "--no-cross-validation"])
    assert r.exit_code == 1 and "--params" in " ".join(r.output.split())  # underdetermined: the advice names it
    r = _cli(["calibrate", str(runs), "-H", "h100-sxm", "-o", str(out), "--no-cross-validation", "--params",
              "matmul_efficiency"])
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(out.read_text())
    from shardplan.presets.hardware import HARDWARE
    base = HARDWARE["h100-sxm"]
    # only the named constant is fitted and written (a cluster file holds what differs from its base preset)
    assert doc["base"] == "h100-sxm" and doc["matmul_efficiency"] != base.matmul_efficiency
    assert not {"hbm_efficiency", "scale_up_efficiency", "scale_out_efficiency", "scale_out_latency"} & set(doc)
    assert "microbatch_overhead_s" not in (doc.get("framework") or {})
    r = _cli(["calibrate", str(runs), "-H", "h100-sxm", "--params", "matmul_eficiency"])
    assert r.exit_code == 2 and "legal: matmul_efficiency, hbm_efficiency" in " ".join(r.output.split())
    assert [p.field for p in params_named(["hbm_efficiency,matmul_efficiency", "hbm_efficiency"])] == \
        ["hbm_efficiency", "matmul_efficiency"]
    # the --help list is the catalog (one source of truth checked)
    help_text = ParamsOpt.__metadata__[0].help
    assert all(name in help_text for name in catalog())


def test_a_forced_poor_fit_file_does_not_quote_its_in_sample_error():
    # new-user pass 56: a --force file of an underdetermined fit printed "the file's own fit: 2 records ...: in-sample
    # throughput median |error| 0.0%" beside the built-ins' band
    from shardplan.accuracy_band import band_for
    from shardplan.inputs import hardware_spec
    from shardplan.presets.frameworks import FRAMEWORKS
    fit = "shardplan calibrate on 2 records (2026-12-07): in-sample throughput median |error| 0.0%"
    hw = hardware_spec("h100-sxm").model_copy(update={"name": "h100-sxm-calibrated",
                                                      "sources": {"matmul_efficiency": fit}})
    assert "in-sample throughput median |error| 0.0%" in band_for(FRAMEWORKS["megatron"], hw, False).group
    poor = hw.model_copy(update={"sources": {"matmul_efficiency": fit, "poor_fit": "underdetermined"}})
    group = band_for(FRAMEWORKS["megatron"], poor, False).group
    assert "the file's own fit is poor" in group and "0.0%" not in group


QWEN_EP32 = dict(model="qwen3-30b-a3b", hardware="h200", devices=32, seq_len=8192, global_batch=512)


def test_bound_names_an_axis_by_its_costliest_collective_and_the_roofline_line_covers_the_ep_alltoall():
    # new-user pass 56: ep 32 over the network, 62% of the step AllToAll: "bound by: communication (ep over scale-out,
    # dp over local)" (a group-of-one expert-gradient collective, listed last, named dp's level) beside a roofline line
    # that named only the data-parallel group as compute-bound
    from shardplan.cli.estimate import _roofline_line
    e = _estimate({"ep": 32, "microbatch_size": 2}, **QWEN_EP32)
    assert e.bound == "communication (ep over scale-out, dp over scale-out)"
    line = _roofline_line(e)
    a2a = [c for c in e.collectives if c.op == "AllToAll" and c.axis == "ep"]
    exposed = sum(c.exposed_s for c in a2a) / e.step_s
    assert exposed > 0.5
    # intensity: the step's FLOPs per device over every AllToAll byte it sends; ridge: C / W of the NIC
    # (989e12 / 50e9 = 19,780: the h200's bf16 peak over its 50 GB/s per GPU)
    intensity = e.hardware_flops_per_step / 32 / sum(c.bytes_per_device for c in a2a)
    ridge = e.hardware.peak_flops("bf16") / e.hardware.scale_out_bandwidth
    assert intensity < ridge
    assert (f"ep AllToAll on scale-out: {intensity:,.0f} FLOPs per byte vs ridge {ridge:,.0f} (bandwidth-bound, "
            f"{exposed:.0%} of the step exposed)") in line
    # inside the node (ep 8 over NVLink, 450 GB/s: ridge 2,198) the same model's AllToAll is compute-bound
    e8 = _estimate({"ep": 8, "microbatch_size": 2}, **QWEN_EP32)
    assert "ep AllToAll on NVLink" in _roofline_line(e8) and "(compute-bound" in _roofline_line(e8).split("ep AllToAll")[1]
    # a dense model has no such part
    assert "AllToAll" not in _roofline_line(_estimate({}))


def test_roofline_png_names_its_points(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from shardplan.web.report import _mpl_roofline
    fig = Figure()
    ax = fig.add_subplot()
    _mpl_roofline(_estimate({"ep": 32, "microbatch_size": 2}, **QWEN_EP32), ax)
    texts = [t.get_text() for t in ax.texts]
    assert "AllToAll ep" in texts and "layer matmuls" in texts
    assert any(" / " in t for t in texts)  # the dp ReduceScatter and AllGather coincide: one label


def test_record_import_writes_absolute_paths_and_calibrate_knows_the_same_file(tmp_path, monkeypatch):
    # new-user pass 56: `--set model=inputs/config.json` was stored as typed; calibrate run from another folder said
    # "file not found", and the same hardware file, typed relative, was "other hardware"
    import shutil

    from shardplan.cli.calibrate import _same_file
    from shardplan.records import read_records
    work = tmp_path / "work"
    (work / "inputs").mkdir(parents=True)
    shutil.copy("shardplan/data/clusters/gcp-a3-mega.yaml", work / "inputs" / "hw.yaml")
    (work / "runs.csv").write_text("tp,tok\n1,5000\n2,4800\n")
    monkeypatch.chdir(work)
    r = _cli(["record", "import", "runs.csv", "-o", "runs.jsonl", "--map", "tp=tp", "--map",
              "tokens_per_s_per_device=tok", "--set", "model=llama-3-8b", "--set", "hardware=inputs/hw.yaml",
              "--set", "devices=8", "--set", "seq_len=4096", "--set", "global_batch_size=64"])
    assert r.exit_code == 0, r.output
    recs = read_records(work / "runs.jsonl")
    assert {x.hardware for x in recs} == {str((work / "inputs" / "hw.yaml").resolve())}
    assert {x.model for x in recs} == {"llama-3-8b"}  # a preset name stays a name
    assert _same_file(recs[0].hardware, "inputs/hw.yaml") and not _same_file("h100-sxm", "inputs/hw.yaml")


def test_a_hardware_file_with_a_node_aggregate_as_the_per_device_network_is_warned(tmp_path):
    # new-user pass 56: scale_out_bandwidth 400e9 (8 x 400 Gb/s, the node's) was priced without a word, ep 16 across
    # nodes as fast as inside one
    from shardplan.cost.comm import FASTEST_NIC_BANDWIDTH, implausible_network
    from shardplan.inputs import hardware_spec
    from shardplan.presets.hardware import HARDWARE
    assert not [n for n, h in HARDWARE.items() if implausible_network(h)]  # no preset trips it (GB300: 100 GB/s)
    f = tmp_path / "hw.yaml"
    f.write_text("base: h200\nname: pernode\nscale_out_bandwidth: 400.0e9\n")
    r = _cli(["estimate", "-m", "llama-3-8b", "-H", str(f), "-n", "16", "-s", "4096", "-b", "64"])
    assert r.exit_code == 0
    # 400e9 / 8 = 50e9 B/s per GPU: the usual 400 Gb/s NIC
    assert "400 GB/s per device is above the fastest NIC" in " ".join(r.output.split())
    assert "50.0 GB/s each" in " ".join(r.output.split())
    slow_up = hardware_spec("h200").model_copy(update={"scale_up_bandwidth": 40e9, "scale_out_bandwidth": 50e9})
    assert "not below scale_up_bandwidth" in implausible_network(slow_up)
    assert implausible_network(hardware_spec("h200").model_copy(update={"scale_out_bandwidth": FASTEST_NIC_BANDWIDTH})) \
        is None


def test_megatron_export_writes_the_models_own_aux_loss_coefficient(tmp_path):
    # new-user pass 56: Qwen3-30B-A3B's config.json says router_aux_loss_coef 0.001; the export wrote 1e-2
    from shardplan.loaders import load_model
    cfg = json.loads(open("benchmarks/models/dbrx-base.config.json").read())
    assert cfg["router_aux_loss_coef"] == 0.05
    m = load_model("benchmarks/models/dbrx-base.config.json")
    assert m.router_aux_loss_coef == 0.05
    args = ["export", "--to", "megatron", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256", "--ep", "8",
            "--tp", "4", "--pp", "2"]
    r = _cli([*args, "-m", "benchmarks/models/dbrx-base.config.json"])
    assert r.exit_code == 0, r.output
    assert "--moe-aux-loss-coeff 0.05" in r.stdout
    r = _cli([*args, "-m", "mixtral-8x7b", "--tp", "1", "--pp", "1"])  # a preset gives none: the README's 1e-2
    assert "--moe-aux-loss-coeff 1e-2" in r.stdout
    # a coefficient outside [0, 1] is refused with its key
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps({**cfg, "router_aux_loss_coef": 5}))
    r = _cli(["estimate", "-m", str(bad), "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256", "--ep", "8"])
    assert r.exit_code == 2 and "router_aux_loss_coef=5" in r.output


def test_megatron_export_of_an_moe_plan_says_the_cuda_graphs_its_price_assumes():
    # new-user pass 56: importing the export warned "no CUDA graphs ... the megatron profile prices MoE layers as the
    # tuned recipes" about the exporter's own output, which said nothing of it
    from shardplan.export.megatron import UNGRAPHED_MOE_BLACKWELL
    base = ["export", "--to", "megatron", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64"]
    moe = _cli([*base, "-m", "qwen3-30b-a3b", "--ep", "8", "--recompute", "full"])
    assert moe.exit_code == 0, moe.output
    line = next(x for x in moe.stdout.splitlines() if x.startswith("# CUDA graphs"))
    assert "--cuda-graph-impl transformer_engine" in line and f"{UNGRAPHED_MOE_BLACKWELL[0]}-" in line
    assert "# CUDA graphs" not in _cli([*base, "-m", "llama-3-8b"]).stdout


def test_no_dp_message_names_the_ep_that_narrows_the_legal_pp():
    # new-user pass 56: "legal pp for tp=1, cp=1 on 32 devices: 1, 2, 4" beside --ep 8, without saying why 8 and 16
    # are missing: dp x cp = 32 / pp must stay a multiple of ep = 8, so pp in {1, 2, 4}
    r = _cli(["estimate", "-m", "qwen3-30b-a3b", "-H", "h200", "-n", "32", "-s", "8192", "-b", "512", "--ep", "8",
              "--pp", "5"])
    assert r.exit_code == 2 and "legal pp for tp=1, cp=1, ep=8 on 32 devices: 1, 2, 4" in " ".join(r.output.split())


def test_the_explanation_of_an_ep1_moe_layout_says_what_it_runs():
    # new-user pass 56: torchtitan's winner for a 128-expert model had ep 1, and nothing said why or what that runs
    from shardplan.explain import describe
    text = describe(_estimate({"zero_stage": 3}, **{**QWEN_EP32, "framework": "torchtitan"}))
    assert ("ep=1: every rank runs all 128 experts on its own tokens (the same expert FLOPs as any ep, no AllToAll), "
            "their weights sharded by ZeRO-3 and gathered per layer; the torchtitan profile prices no per-expert cost"
            ) in text
    # under megatron the fitted per-expert cost is named (320 us, docs/accuracy.md)
    assert "charges 320 us per local expert" in describe(_estimate({"zero_stage": 1}, **QWEN_EP32))
    assert "ep=1" not in describe(_estimate({"ep": 8, "zero_stage": 1}, **QWEN_EP32))


def test_guide_refuses_what_estimate_refuses():
    # breaker pass 56: guide -H tpu-v5p --framework megatron printed a 76.7% MFU table with exit 0 (estimate: exit 2);
    # guide -m gpt2 at seq 8192 (a 1,024-row position table) exited 0 with one "invalid" row
    r = _cli(["guide", "-m", "llama-3-8b", "-n", "8", "-H", "tpu-v5p", "--framework", "megatron"])
    assert r.exit_code == 2 and "framework=megatron runs on GPUs only; tpu-v5p is a TPU; legal there: maxtext" in \
        " ".join(r.output.split())
    r = _cli(["guide", "-m", "gpt2", "-n", "8"])
    assert r.exit_code == 2 and "no guide row is valid: seq_len=8,192 is longer than gpt2's" in " ".join(r.output.split())


@pytest.mark.parametrize("modules", ["core_attn mpl", "bogus core_attn", "moe shared", "layernorm mla"])
def test_megatron_import_refuses_unknown_recompute_modules(tmp_path, modules):
    # breaker pass 56: a word that is no module ended the list; it and every name after it were dropped, exit 0
    script = tmp_path / "train.sh"
    script.write_text("torchrun --nproc-per-node 8 pretrain_gpt.py --bf16 --num-layers 32 --hidden-size 4096 "
                      "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 "
                      f"--global-batch-size 64 --recompute-granularity selective --recompute-modules {modules}\n")
    r = _cli(["import", "--from", "megatron", str(script)])
    bad = next(w for w in modules.split() if w not in ("core_attn", "moe", "layernorm"))
    assert r.exit_code == 2 and f"--recompute-modules '{bad}' is not a Megatron-LM module" in r.output
    # a following command still ends the list
    script.write_text(script.read_text().replace(modules, "core_attn mlp") .rstrip("\n") + " && echo done\n")
    assert _cli(["import", "--from", "megatron", str(script)]).exit_code == 0


def test_calibrate_never_prints_a_correlation_outside_minus_one_one(tmp_path):
    # breaker pass 56: one record (2 measurements, 5 parameters) printed "correlation +3.8e155" from the inverse of a
    # singular J^T J
    import re

    record = {"model": {"name": "usp-1b", "n_layers": 16, "d_model": 2048, "n_heads": 32, "ffn_dim": 8192,
                        "vocab_size": 131072, "mlp": "swiglu", "tied_embeddings": True},
              "hardware": "usp-h100-efa", "devices": 8, "seq_len": 4096, "global_batch_size": 256,
              "parallel": {"dp": 8, "zero_stage": 0, "tp": 1, "pp": 1, "microbatch_size": 2},
              "precision": "bf16-mixed", "framework": "nanotron-usp", "status": "ok",
              "tokens_per_s_per_device": 40150.0, "peak_memory_bytes": 50200000000.0}  # the shared grid's first row
    runs = tmp_path / "one.jsonl"
    runs.write_text(json.dumps(record) + "\n")
    r = _cli(["calibrate", str(runs), "--no-cross-validation"])
    assert r.exit_code == 1 and "underdetermined" in r.output
    values = [float(x) for x in re.findall(r"correlation ([+-][0-9.e+]+)\)", r.output)]
    assert all(abs(v) <= 1 for v in values)


def test_imports_write_only_plans_estimate_prices(tmp_path):
    # breaker pass 56: Megatron / NeMo with one virtual stage per rank imported as interleaved(v=1), and torchtitan's
    # 80 layers at 7 per stage on pp 4 (12 stages of 7 or 6, 20 per rank) as interleaved(v=3): estimate --plan refused
    # both (exit 2) after the import's exit 0
    from shardplan.export import import_config
    mg = ("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --micro-batch-size 1 "
          "--global-batch-size 64 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 16")
    p = import_config("megatron", mg, 16).parallel
    assert (p.schedule, p.virtual_stages) == ("1f1b", 1)  # 16 layers per stage in chunks of 16: one chunk
    p = import_config("megatron", mg.replace("stage 16", "stage 8"), 16).parallel
    assert (p.schedule, p.virtual_stages) == ("interleaved", 2)
    tt = ("# shardplan-meta: {\"n_layers\": 80}\n[training]\nlocal_batch_size = 4\n[parallelism]\n"
          "data_parallel_shard_degree = 2\ntensor_parallel_degree = 8\npipeline_parallel_degree = 4\n"
          "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_first_stage_less_layers = 0\n"
          "pipeline_parallel_last_stage_less_layers = 0\npipeline_parallel_layers_per_stage = K\n")
    # ceil(80 / 7) = 12 stages: torchtitan cuts 8 of 7 and 4 of 6; each rank holds 7 + 7 + 6 = 20 in 3 unequal stages
    from shardplan.errors import ConfigError
    with pytest.raises(ConfigError, match=r"=7: 80 layers in 12 stages \(3 per rank on pp=4\) are cut unequally.*"
                                          "legal pipeline_parallel_layers_per_stage: 1, 2, 4, 5, 10, 11"):
        import_config("torchtitan", tt.replace("K", "7"), 64)
    assert import_config("torchtitan", tt.replace("K", "10"), 64).parallel.virtual_stages == 2  # 8 stages of 10


def test_the_attention_core_is_its_own_part_in_plan_report_and_charts():
    # new-user pass 56b: at 128k estimate said the attention kernel was 69% of the step; plan's explanation said
    # "matmul compute 95%", and the report's time list and PNG drew one matmul bar
    from shardplan.explain import describe
    from shardplan.web.charts import summary_rows, time_parts
    e = _estimate({"tp": 8, "cp": 4, "sp": True}, model="llama-3.1-8b", devices=32, seq_len=131072, global_batch=32)
    share = e.attention_s / e.step_s
    assert share > 0.4  # 4 a d s^2 / cp per layer against 6 N per token: the kernel dominates at 131,072 tokens
    assert f"attention core {share:.0%}" in describe(e)
    parts = {t.label: t.seconds for t in time_parts(e) if t.critical}
    assert parts["attention core"] == e.attention_s and parts["matmul"] == pytest.approx(e.matmul_s - e.attention_s)
    assert any(label == "time: attention core" for label, _ in summary_rows(e))


def test_zero3_with_sp_and_cp_is_not_covered_by_validate():
    # new-user pass 56b: ZeRO-3 + tp 2 + sp + cp 2 compiled 440 KiB of resharding collectives (AllGather / AllToAll
    # over cp, sends over dp) that neither the planner nor a rule models: not covered, said before compiling; ZeRO-1
    # + cp and tp + sp + cp are covered (validation_cases STRATEGIES 'ZeRO-1+CP', 'TP+SP+CP')
    from shardplan.crosscheck.deltas import static_not_covered
    from shardplan.validation_cases import STRATEGIES
    why = static_not_covered(_estimate({"tp": 2, "sp": True, "cp": 2, "zero_stage": 3}, model="tiny-llama",
                                       seq_len=256, global_batch=16).layout)
    assert why and why.startswith("ZeRO-3 with sequence parallelism and cp > 1")
    for kw in (STRATEGIES["ZeRO-1+CP"], STRATEGIES["TP+SP+CP"], {"tp": 2, "cp": 2, "zero_stage": 3, "sp": False}):
        assert static_not_covered(_estimate(kw, model="tiny-llama", seq_len=32, global_batch=16).layout) is None


def test_a_renamed_profile_file_keeps_its_bases_attention_kernel(tmp_path):
    # breaker pass 56: "base: megatron / name: custom" fell from cuDNN to FlashAttention-2 (attention core 0.135 s ->
    # 0.244 s, step +7%) because the default kernel is looked up by the profile's name
    f = tmp_path / "named.yaml"
    f.write_text("base: megatron\nname: custom\n")
    same = _estimate({"zero_stage": 3}, devices=16, framework="megatron")
    renamed = _estimate({"zero_stage": 3}, devices=16, framework=str(f))
    assert renamed.training.framework.name == "custom" and renamed.training.framework.attention_kernel == "cudnn"
    assert renamed.step_s == pytest.approx(same.step_s, rel=1e-12)
    f.write_text("base: megatron\nname: custom\nattention_kernel: fa2\n")  # a kernel given stays
    assert _estimate({"zero_stage": 3}, devices=16, framework=str(f)).attention_s > same.attention_s


def test_an_uneven_pp_layers_on_an_even_split_framework_names_pp_layers():
    # breaker pass 56: maxtext with --pp 4 --pp-layers 9,8,8,7 said "pp=4 does not split the 32 layers evenly" and
    # listed pp=4 as legal; the uneven split is what MaxText cannot run (32 / 4 = 8 layers a stage)
    r = _cli(["estimate", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "32", "-s", "4096", "-b", "128", "--framework",
              "maxtext", "--pp", "4", "--tp", "2", "--pp-layers", "9,8,8,7"])
    assert r.exit_code == 2
    assert "pp_layers=[9, 8, 8, 7]: the framework gives every stage one layer count (pipeline_split='even'); legal " \
           "pp_layers: 8,8,8,8, or not given" in " ".join(r.output.split())


def test_importers_refuse_values_they_used_to_drop(tmp_path):
    # breaker pass 56: NeMo encoder_seq_length "4k" (seq_len left unset) and fp8 "yes-please" (no fp8) exited 0; a
    # DeepSpeed header's _shardplan.devices "sixteen" got an error about train_batch_size; a CSV with a bare carriage
    # return in a cell was told the cell-size limit
    from shardplan.errors import ConfigError
    from shardplan.export import import_config
    nemo = ("trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n"
            "  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n  num_layers: 32\n  hidden_size: 4096\n"
            "  num_attention_heads: 32\n  encoder_seq_length: SEQ\n")
    assert import_config("nemo", nemo.replace("SEQ", "4096")).seq_len == 4096
    with pytest.raises(ConfigError, match="model.encoder_seq_length='4k' is not a whole number of tokens"):
        import_config("nemo", nemo.replace("SEQ", "'4k'"))
    with pytest.raises(ConfigError, match="model.fp8='yes-please'; legal: true, false"):
        import_config("nemo", nemo.replace("SEQ", "4096") + "  fp8: yes-please\n")
    ds = json.dumps({"_shardplan": {"devices": "sixteen"}, "train_micro_batch_size_per_gpu": 1,
                     "gradient_accumulation_steps": 1, "zero_optimization": {"stage": 1}, "bf16": {"enabled": True}})
    with pytest.raises(ConfigError, match="_shardplan.devices='sixteen' is not a device count"):
        import_config("deepspeed", ds)
    csv_file = tmp_path / "runs.csv"
    csv_file.write_bytes(b"tp,tok\r\n1,5000\r,extra\r\n")
    r = _cli(["record", "import", str(csv_file), "-o", str(tmp_path / "r.jsonl"), "--map", "tp=tp"])
    assert r.exit_code == 2 and "a line break inside a cell only within double quotes" in " ".join(r.output.split())


def test_megatron_export_writes_the_ring_cp_comm_type():
    # new-user pass 56b: the ring context parallelism left --cp-comm-type to Megatron-LM's default (p2p) unsaid
    r = _cli(["export", "--to", "megatron", "-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "32", "-s", "131072", "-b",
              "32", "--tp", "8", "--cp", "4"])
    assert r.exit_code == 0, r.output
    assert "--context-parallel-size 4 --cp-comm-type p2p" in " ".join(r.stdout.split())
    assert "--cp-comm-type" not in _cli(["export", "--to", "megatron", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8",
                                         "-s", "4096", "-b", "64"]).stdout


def test_estimate_says_when_full_recompute_buys_nothing():
    # new-user pass 56b: TP 8 CP 4 at 128k with full recompute, 13.9 of 80 GiB used, 23% of the step re-running the
    # forward, and no word that the layout fits without it
    from shardplan.cli.estimate import full_recompute_note
    kw = dict(model="llama-3.1-8b", devices=32, seq_len=131072, global_batch=32)
    e = _estimate({"tp": 8, "cp": 4, "recompute": "full"}, **kw)
    plain = _estimate({"tp": 8, "cp": 4, "recompute": "none"}, **kw)
    assert plain.fits and plain.step_s < e.step_s
    note = full_recompute_note(e)
    assert note.startswith(f"recompute=full costs ") and f"({(e.step_s - plain.step_s) / e.step_s:.0%})" in note
    assert f"fits without it ({plain.memory.total / 2**30:.1f} GiB" in note
    # where the layout needs it (Llama 3 8B, 8 GPUs, ZeRO-1, 2 x 8,192 tokens a microbatch), nothing is said
    need = _estimate({"recompute": "full", "microbatch_size": 2, "zero_stage": 1}, seq_len=8192, global_batch=64)
    assert need.fits and not _estimate({"recompute": "none", "microbatch_size": 2, "zero_stage": 1}, seq_len=8192,
                                       global_batch=64).fits
    assert full_recompute_note(need) is None


def test_a_plans_run_says_which_batch_it_runs(tmp_path, capsys):
    # new-user pass 56b: validate --plan ran a global batch of 2 where the plan had 32, without a word
    from shardplan.cli.runtime import runtime_inputs
    plan = tmp_path / "p.json"
    r = _cli(["plan", "-m", "tiny-llama", "-H", "h100-sxm", "-n", "8", "-s", "64", "-b", "32", "--json", "--top", "1"])
    plan.write_text(r.stdout[r.stdout.index("{"):])
    capsys.readouterr()
    _, tr, pc = runtime_inputs("tiny-llama", 8, 64, None, None, str(plan), {}, (False, None, None), default_batch=True)
    err = " ".join(capsys.readouterr().err.split())
    assert f"--global-batch {tr.global_batch_size} (no batch given" in err
    assert "the plan's 32 is not used: --global-batch 32 runs it" in err


def test_precision_names_are_read_in_any_case_and_a_file_as_folder_is_named(tmp_path):
    # breaker pass 56: --precision BF16-MIXED was refused while framework names are case-insensitive; -o under a path
    # that is a file said "folder ... does not exist"
    from shardplan.specs.training import precision_policy
    assert precision_policy("BF16-MIXED") is precision_policy("bf16-mixed")
    f = tmp_path / "afile"
    f.write_text("x")
    r = _cli(["report", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "8", "-s", "4096", "-b", "64", "-o",
              str(f / "r.html")])
    assert r.exit_code == 2 and f"folder {f} is a file, not a folder" in " ".join(r.output.split())


def test_plans_png_writes_each_bars_gap_to_the_first():
    # new-user pass 56: the ranking PNG's zoomed axis (from 327,515 tokens/s) made a 3% spread look 2x
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from shardplan.web.report import _mpl_plans
    a = _estimate({"zero_stage": 1}, devices=16)
    b = _estimate({"zero_stage": 3}, devices=16)
    plans = sorted([a, b], key=lambda e: -e.tokens_per_s)
    ax = Figure().add_subplot()
    _mpl_plans(plans, ax)
    assert [t.get_text() for t in ax.texts] == [f"{plans[1].tokens_per_s / plans[0].tokens_per_s - 1:+.1%}"]


def test_hardware_table_gives_the_nic_rate_in_gbit():
    # new-user pass 56: "scale-out GB/s 50.00" had to be converted to find the 400 Gb/s NIC of the cluster
    r = _cli(["hardware"])
    row = next(x for x in r.output.splitlines() if x.startswith("│ h200 "))
    assert "50.00 (400)" in row  # 50e9 B/s x 8 bit = 400 Gb/s


def test_deepspeed_import_says_it_does_not_read_pipeline_stages():
    # breaker pass 56: "pipeline": {"stages": 4} was read as pp = 1 without a word
    from shardplan.export import import_config
    cfg = {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 8,
           "zero_optimization": {"stage": 1}, "bf16": {"enabled": True}, "pipeline": {"stages": 4}}
    imp = import_config("deepspeed", json.dumps(cfg))
    assert imp.parallel.pp == 1 and any(n.startswith("pipeline.stages 4 is not read") for n in imp.notes)
    cfg["pipeline"] = {"stages": "auto"}
    assert not any("pipeline.stages" in n for n in import_config("deepspeed", json.dumps(cfg)).notes)
