"""Charts, report and Dash callbacks of the interactive guide (no browser; see test_browser.py)."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import subprocess
import sys

import pytest

pytest.importorskip("plotly")
pytest.importorskip("dash")

from typer.testing import CliRunner  # noqa: E402

from shardplan.cli import app as cli_app  # noqa: E402
from shardplan.cost.pipeline_schedule import pipeline_schedule  # noqa: E402
from shardplan.cost.step import estimate  # noqa: E402
from shardplan.errors import ConfigError  # noqa: E402
from shardplan.inputs import build_inputs  # noqa: E402
from shardplan.web import charts  # noqa: E402

REL = 1e-9

CASES = {
    "tp2-pp2-sp-zero1": dict(model="llama-3-8b", hardware="h100-sxm", devices=64, tp=2, pp=2, sp=True, zero_stage=1),
    "zero3": dict(model="llama-3-8b", hardware="h100-sxm", devices=64, zero_stage=3),
    # HSDP with pp: torchtitan's (Megatron-FSDP does not pipeline: the megatron profile refuses ZeRO-3 with pp > 1)
    "hsdp-tp8-pp2": dict(model="llama-3-70b", hardware="h100-sxm", devices=64, tp=8, sp=True, pp=2, zero_stage=3,
                         dp_shard=2, framework="torchtitan"),
    "moe-ep-cp-full": dict(model="mixtral-8x7b", hardware="h100-sxm", devices=64, tp=2, ep=8, cp=2, zero_stage=1,
                           recompute="full"),
    # TPUs price with the maxtext profile by default, whose pipeline is GPipe
    "tpu-pipeline": dict(model="llama-3-70b", hardware="tpu-v5p", devices=64, tp=4, pp=4, schedule="gpipe",
                         zero_stage=1),
    "zero-bubble": dict(model="llama-3-8b", hardware="a100-80gb", devices=32, pp=4, schedule="zero-bubble",
                        zero_stage=1, recompute="selective"),
}


def make(model="llama-3-8b", hardware="h100-sxm", devices=64, seq_len=4096, global_batch=256, precision="bf16-mixed",
         **layout):
    """The estimate ``shardplan estimate`` computes for these flags."""
    m, hw, tr, pc = build_inputs(model=model, hardware=hardware, devices=devices, seq_len=seq_len,
                                 global_batch=global_batch, global_batch_tokens=None, precision=precision, **layout)
    return estimate(m, hw, tr, pc, devices)


@pytest.fixture(scope="module", params=list(CASES))
def est(request):
    return make(**CASES[request.param])


def test_time_bars_sum_to_step(est):
    d = est.to_dict()
    fig = charts.time_figure(est)
    crit = [t for t in fig.data if t.y[0] == charts.CRITICAL_ROW]
    assert sum(t.x[0] for t in crit) == pytest.approx(d["time_s"]["step"], rel=REL)
    assert all(t.meta["critical"] for t in crit)
    # hidden bar = overlapped communication, time_s - exposed_s per collective (clamped at 0)
    hidden = sum(t.x[0] for t in fig.data if t.y[0] == charts.HIDDEN_ROW)
    assert hidden == pytest.approx(sum(max(0.0, c["time_s"] - c["exposed_s"]) for c in d["collectives"]), rel=REL,
                                   abs=1e-15)
    parts = charts.time_parts(est)
    named = {t.label: t.seconds for t in parts if t.critical}
    # the attention core is drawn apart from the linear layers' GEMMs (new-user pass 56b): together the matmul time
    assert named["matmul"] + named["attention core"] == pytest.approx(d["time_s"]["matmul"], rel=1e-12)
    assert named["attention core"] == d["time_s"]["attention_core"] and named["pipeline bubble"] == d["time_s"]["bubble"]
    assert sum(t.seconds for t in parts if t.critical and t.group not in ("compute", "bubble", "optimizer", "overhead")) == \
        pytest.approx(d["time_s"]["exposed_comm"], rel=REL, abs=1e-15)


def test_memory_bar_sums_to_total(est):
    d = est.to_dict()
    fig = charts.memory_figure(est)
    bars = [t for t in fig.data if t.type == "bar"]
    assert sum(t.customdata[0] for t in bars) == pytest.approx(d["memory_bytes"]["total"], rel=REL)
    assert sum(t.y[0] for t in bars) * charts.GiB == pytest.approx(d["memory_bytes"]["total"], rel=REL)
    lines = sorted(s["y0"] for s in fig.layout.shapes)
    cap, usable = d["hardware"]["hbm_bytes"] / charts.GiB, d["hardware"]["hbm_usable_bytes"] / charts.GiB
    # one line where the usable HBM is the capacity (within 0.05 GiB: the two would lie on top of each other)
    assert lines == pytest.approx([cap] if abs(cap - usable) < 0.05 else sorted([cap, usable]), rel=REL)


def test_memory_chart_draws_usable_line_only_where_it_differs(est):
    # usable = capacity (megatron counts the runtime context as a memory term): one line; a reserve of 2 GiB gives
    # a second, dashed line 2 GiB below the capacity
    one = charts.memory_figure(dataclasses.replace(est, hbm_usable=est.hardware.hbm_bytes))
    assert len(one.layout.shapes) == 1 and "(all usable)" in one.layout.annotations[0].text
    two = charts.memory_figure(dataclasses.replace(est, hbm_usable=est.hardware.hbm_bytes - 2 * charts.GiB))
    assert sorted(s["y0"] for s in two.layout.shapes) == pytest.approx([est.hardware.hbm_bytes / charts.GiB - 2,
                                                                        est.hardware.hbm_bytes / charts.GiB])


def test_roofline_points_and_ridges(est):
    d = est.to_dict()
    hw = est.hardware
    data = charts.roofline_data(est)
    C = hw.peak_flops(est.training.precision.compute_dtype)
    assert data.peak == C
    assert [c.ridge for c in data.ceilings] == pytest.approx(
        [C / hw.hbm_bandwidth, C / hw.scale_up_bandwidth, C / hw.scale_out_bandwidth], rel=REL)
    assert len(data.points) == sum(1 for r in d["roofline"] if r["intensity"] > 0)
    for (name, res, i, y, bound), r in zip(data.points, [r for r in d["roofline"] if r["intensity"] > 0]):
        assert (name, res, i, bound) == (r["name"], r["resource"], r["intensity"], r["bound"])
        assert y == pytest.approx(C * min(1.0, i / r["ridge"]), rel=REL)
        assert (i < r["ridge"]) == (y < C)  # left of the ridge: below peak (bandwidth-bound)
    fig = charts.roofline_figure(est)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    plotted = [x for t in fig.data if t.name and t.name.startswith("operations") for x in t.x]
    assert sorted(plotted) == sorted(p[2] for p in data.points)


@pytest.mark.parametrize("schedule,pp,m,v", [("gpipe", 4, 8, 1), ("1f1b", 4, 8, 1), ("1f1b", 1, 5, 1),
                                             ("interleaved", 4, 8, 2), ("interleaved", 2, 6, 3),
                                             ("zero-bubble", 4, 8, 1), ("1f1b", 8, 32, 1)])
def test_pipeline_figure(schedule, pp, m, v):
    # the simulator itself is tested in test_pipeline_schedule.py (without plotly)
    blocks = pipeline_schedule(pp, m, schedule, v)
    fig = charts.pipeline_figure(pp, m, schedule, v)
    assert {y for t in fig.data for y in t.y} == {f"stage {s}" for s in range(pp)}
    assert sum(len(t.x) for t in fig.data) == len(blocks)
    assert sorted(b for t in fig.data for b in t.base) == sorted(b.start for b in blocks)
    with pytest.raises(ConfigError, match="schedule"):
        charts.pipeline_figure(2, 4, "bogus")


def test_plans_figure():
    ests = [make(zero_stage=1), make(tp=2, zero_stage=1), make(zero_stage=0)]  # the last one does not fit
    assert not ests[2].fits
    fig = charts.plans_figure(ests)
    xs = {y: x for t in fig.data for y, x in zip(t.y, t.x)}
    assert len(xs) == 3
    assert sorted(xs.values()) == sorted(e.tokens_per_s for e in ests)
    patterns = [p for t in fig.data for p in t.marker.pattern.shape]
    assert patterns.count("x") == 1


def test_headline_equals_estimate_json(est):
    d = est.to_dict()
    h = {x.key: x.value for x in charts.headline(est)}
    from shardplan.cli.estimate import estimate_json
    band = estimate_json(est)["throughput_band"]  # the held-out band, as estimate --json gives it
    assert h.pop("band", None) == (f"{band['tokens_per_s_low']:.0f}-{band['tokens_per_s_high']:.0f}" if band else None)
    assert h == {"step": d["time_s"]["step"], "tokens": d["tokens_per_s"], "mfu": d["mfu"], "hfu": d["hfu"],
                 "memory": d["memory_bytes"]["total"], "fits": d["fits"], "bound": d["bound_by"]}


# ---- report ------------------------------------------------------------------------------------

ARGS = ["-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096", "-b", "256", "--tp", "2", "--pp", "2",
        "--zero-stage", "1"]


def test_report_html_is_self_contained(tmp_path):
    out = tmp_path / "sub" / "report.html"
    out.parent.mkdir()  # a missing folder is refused (nothing is created), as export and calibrate do
    r = CliRunner().invoke(cli_app, ["report", *ARGS, "-o", str(out), "--no-plans"])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "plotly.js v" in text or "plotly.js" in text  # the bundle is inlined
    assert len(text) > 1_000_000
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert "<link" not in text
    for div in ("chart-time", "chart-memory", "chart-roofline", "chart-pipeline"):
        assert f'id="{div}"' in text
    e = make(tp=2, pp=2, zero_stage=1)
    assert charts.fmt_seconds(e.step_s) in text and f"{e.mfu:.2%}" in text


def test_report_png(tmp_path):
    out = tmp_path / "r.png"
    r = CliRunner().invoke(cli_app, ["report", *ARGS, "-o", str(out)])  # the .png name asks for PNG charts
    assert r.exit_code == 0, r.output
    for chart in ("time", "memory", "roofline", "pipeline", "plans"):
        p = tmp_path / f"r_{chart}.png"
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5_000, chart


def test_report_invalid_layout_exits_2(tmp_path):
    r = CliRunner().invoke(cli_app, ["report", "-m", "llama-3-8b", "-H", "h100-sxm", "-n", "64", "-s", "4096",
                                     "-b", "256", "--tp", "16", "-o", str(tmp_path / "x.html")])
    assert r.exit_code == 2
    assert not (tmp_path / "x.html").exists()
    r = CliRunner().invoke(cli_app, ["report", *ARGS, "--format", "pdf", "-o", str(tmp_path / "x.pdf")])
    assert r.exit_code == 2


# ---- Dash callbacks ------------------------------------------------------------------------------

def _values(**over):
    from shardplan.web.app import CONTROLS, DEFAULTS
    d = {**DEFAULTS, **over}
    return [d[c] for c in CONTROLS]


def test_callback_valid_matches_estimate():
    from shardplan.web.app import update_view
    out = update_view(None, *_values(tp=2, zero_stage=2))
    headline, *figs, alert, style = out
    assert alert == "" and style == {"display": "none"}
    # the app's sp switch left off is the flag not given: the profile's default (megatron: sp with tp > 1) applies, as
    # in `shardplan estimate --tp 2 --zero-stage 2` (a new user's 70B read 19.9 s in the app against 19.3 s before)
    e = make(tp=2, zero_stage=2)
    assert e.parallel.sp
    shown = {c.children[1].id: c.children[1].to_plotly_json()["props"]["data-value"] for c in headline}
    assert float(shown["headline-step"]) == e.step_s
    assert float(shown["headline-mfu"]) == e.mfu
    assert float(shown["headline-memory"]) == e.memory.total
    assert len(figs) == 4


def test_callback_optimizer_state_control():
    # the optimizer-state control reaches the estimate: with ZeRO-1 over dp=64 the bf16 state without master copy
    # keeps 4 B per parameter shard instead of 12 (master 4 + moments 8), so the memory headline drops
    from shardplan.web.app import update_view

    def memory(**over):
        out = update_view(None, *_values(**over))
        shown = {c.children[1].id: c.children[1].to_plotly_json()["props"]["data-value"] for c in out[0]}
        return float(shown["headline-memory"])
    fp32, bf16 = memory(zero_stage=1), memory(zero_stage=1, optimizer_dtype="bf16")
    e32, e16 = make(zero_stage=1), make(zero_stage=1, optimizer_dtype="bf16")
    assert (fp32, bf16) == (e32.memory.total, e16.memory.total)
    assert e32.memory.optimizer == pytest.approx(3 * e16.memory.optimizer)


@pytest.mark.parametrize("over,needle", [(dict(tp=16), "tp=16 does not divide n_kv_heads=8"),
                                         (dict(tp=0), "tp=0; legal: a whole number > 0 and <= "),
                                         (dict(devices=None), "devices is empty"),
                                         (dict(pp=3), "legal pp for tp=1"),
                                         (dict(hardware="a100-80gb", precision="fp8-mixed"), "fp8")])
def test_callback_invalid_shows_message(over, needle):
    from shardplan.web.app import update_view
    out = update_view(None, *_values(**over))
    alert, style = out[-2], out[-1]
    assert needle in alert and alert.startswith("Invalid configuration")
    assert style["display"] == "block"


def test_callback_uploaded_hf_config():
    from shardplan.web.app import UPLOADED, parse_upload, update_plans, update_view
    cfg = dict(architectures=["LlamaForCausalLM"], num_hidden_layers=16, hidden_size=2048, num_attention_heads=32,
               num_key_value_heads=8, intermediate_size=8192, vocab_size=128256, tie_word_embeddings=True,
               _name_or_path="meta-llama/Llama-3.2-1B")
    contents = "data:application/json;base64," + base64.b64encode(json.dumps(cfg).encode()).decode()
    store, status, _, options, value = parse_upload(contents, "config.json")
    assert value == UPLOADED and store["name"] == "Llama-3.2-1B" and "1,235,814,400" in status
    assert options[0]["value"] == UPLOADED
    out = update_view(store, *_values(model=UPLOADED, zero_stage=1))
    assert out[-2] == ""
    ref = make(model="llama-3.2-1b", zero_stage=1)  # the preset has the same shapes
    step = [c.children[1] for c in out[0] if c.children[1].id == "headline-step"][0]
    assert float(step.to_plotly_json()["props"]["data-value"]) == pytest.approx(ref.step_s, rel=REL)
    fig, status = update_plans(store, *_values(model=UPLOADED))
    assert "valid layouts" in status and len(fig.data) >= 1
    # a bad upload leaves the model alone and says why
    bad = "data:application/json;base64," + base64.b64encode(b'{"architectures": ["BertModel"]}').decode()
    store, status, style, _, value = parse_upload(bad, "bert.json")
    assert "not supported" in status and style["display"] == "block"
    assert update_view(None, *_values(model=UPLOADED))[-2].startswith("Invalid configuration")


def test_app_layout_has_every_control():
    from shardplan.web.app import CONTROLS, create_app
    app = create_app()
    ids = set()

    def walk(node):
        if hasattr(node, "id") and node.id:
            ids.add(node.id)
        kids = getattr(node, "children", None)
        for k in kids if isinstance(kids, (list, tuple)) else [kids]:
            if k is not None and not isinstance(k, (str, int, float)):
                walk(k)
    walk(app.layout)
    assert set(CONTROLS) | {"upload", "alert", "headline", "time-chart", "memory-chart", "roofline-chart",
                            "pipeline-chart", "plans-chart"} <= ids


def test_core_importable_without_web_extra():
    code = ("import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] in ('plotly', 'dash', 'matplotlib'):\n"
            "            raise ImportError(name)\nsys.meta_path.insert(0, Block())\n"
            "import shardplan.cli, shardplan.cost.step, shardplan.cli.web\n"
            "assert not any(m.split('.')[0] in ('plotly', 'dash', 'matplotlib') for m in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_export_buttons_download_the_framework_config():
    from shardplan.export import EXPORTERS, import_config
    from shardplan.web.app import create_app, export_download
    data, status = export_download("megatron", None, *_values(tp=2, zero_stage=1))
    assert data["filename"] == "megatron.sh" and "exported" in status
    assert import_config("megatron", data["content"]).parallel.tp == 2
    data, status = export_download("easydel", None, *_values(tp=2, zero_stage=1))
    assert data is None and "EasyDeL cannot express this plan" in status
    layout = str(create_app().layout)
    assert all(f"export-{name}" in layout for name in EXPORTERS) and "export-download" in layout


def test_framework_change_sets_the_profile_zero_stage():
    # the app's ZeRO control follows the framework as `estimate` does without --zero-stage: megatron's distributed
    # optimizer (1), torchtitan's / MaxText's FSDP (3), DeepSpeed's stage 0; an unknown name keeps the value
    from shardplan.web.app import DEFAULTS, create_app, framework_zero_stage
    assert DEFAULTS["framework"] == "megatron" and DEFAULTS["zero_stage"] == framework_zero_stage("megatron", 0) == 1
    assert framework_zero_stage("torchtitan", 1) == 3 and framework_zero_stage("maxtext", 1) == 3
    assert framework_zero_stage("deepspeed", 3) == 0 and framework_zero_stage("no-such", 2) == 2
    app = create_app()
    assert any("zero_stage.value" in key for key in app.callback_map)


def test_memory_chart_draws_one_line_where_the_fit_limit_is_the_usable_hbm():
    # nanotron's fit limit is 84% of HBM and its usable HBM is that limit: capacity (80 GiB) and the limit
    # (0.84 x 80 = 67.2 GiB) only, not a third line on top of the limit
    m, hw, tr, pc = build_inputs(model="llama-3-8b", hardware="h100-sxm", devices=8, seq_len=4096, global_batch=64,
                                 global_batch_tokens=None, framework="nanotron")
    e = estimate(m, hw, tr, pc, 8)
    assert charts.limit_is_usable(e)
    fig = charts.memory_figure(e)
    assert sorted(s["y0"] for s in fig.layout.shapes) == pytest.approx([0.84 * 80, 80.0])
