"""The numbers behind each chart of the guide, and the Plotly figures built from them.

Everything here is a pure function of an :class:`~shardplan.cost.step.Estimate` (or a list of
them): no Dash, no I/O. The ``*_parts`` / ``*_data`` helpers return plain numbers that the Plotly
builders here and the matplotlib PNGs of :mod:`shardplan.web.report` share, so every chart shows
exactly the planner's numbers (seconds, bytes, FLOP/s).

Charts:

* :func:`time_figure`: step-time breakdown. One stacked bar is the critical path of the step
  (matmul, element-wise, recompute, each collective's *exposed* time, pipeline bubble, optimizer);
  it sums to ``Estimate.step_s``. A second bar stacks the communication hidden behind compute
  (``time_s - exposed_s`` of each collective), so one sees where communication outweighs compute.
* :func:`memory_figure`: per-device memory of the most loaded stage against the HBM capacity and
  the usable HBM (capacity minus the runtime reserve).
* :func:`roofline_figure`: arithmetic intensity vs attainable FLOP/s with the ceilings of HBM,
  the scale-up and the scale-out links, and the layout's operations as points.
* :func:`pipeline_figure`: a Gantt chart of the pipeline schedule simulated by
  :func:`shardplan.cost.pipeline_schedule.pipeline_schedule`.
* :func:`plans_figure`: tokens/s of the ranked layouts of ``shardplan plan``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from shardplan.cost.pipeline_schedule import pipeline_bubble_units, pipeline_schedule
from shardplan.units import fmt_gib, fmt_seconds  # noqa: F401 (re-exported for app/report)

if TYPE_CHECKING:  # pragma: no cover
    from shardplan.cost.step import Estimate

GiB = 2**30

#: y-category of the stacked bar whose segments sum to the step time.
CRITICAL_ROW = "critical path (step)"
#: y-category of the stacked bar of communication hidden behind compute.
HIDDEN_ROW = "hidden communication"

_AXIS_COLORS = {"tp": "#d62728", "cp": "#9467bd", "ep": "#8c564b", "pp": "#e377c2", "dp": "#ff7f0e"}
_FIXED_COLORS = {"matmul": "#1f77b4", "attention core": "#393b79", "element-wise": "#17becf", "recompute": "#aec7e8",
                 "pipeline bubble": "#7f7f7f", "optimizer": "#bcbd22", "framework overhead": "#c49c94",
                 "overlap slowdown": "#f7b6d2", "activation offload": "#dbdb8d", "parameter offload": "#9edae5"}
_MEM_COLORS = {"params": "#1f77b4", "grads": "#ff7f0e", "optimizer": "#2ca02c", "optimizer step temporary": "#dbdb8d",
               "ZeRO-3 buffers": "#9467bd",
               "activations": "#d62728", "logits": "#8c564b", "communication buffers": "#e377c2",
               "allocator workspace": "#17becf", "allocator fragmentation": "#bcbd22", "runtime context": "#7f7f7f", "runtime reserve": "#c7c7c7"}
_RESOURCE_COLORS = ["#1f77b4", "#2ca02c", "#d62728"]  # HBM, scale-up, scale-out
_BOUND_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
_LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=60, b=50), font=dict(size=12))


# ---- formatting -------------------------------------------------------------------------------------

# ---- headline numbers -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Headline:
    """One headline number of an estimate.

    Attributes:
        key: stable id suffix (``step``, ``tokens``, ``mfu``, ``hfu``, ``memory``, ``fits``, ``bound``).
        label: what it is.
        value: the exact number (seconds, tokens/s, fraction, bytes) or the text (fits, bound).
        text: the formatted value shown to people.
    """

    key: str
    label: str
    value: float | str | bool
    text: str


def headline(e: Estimate) -> list[Headline]:
    """Headline numbers of ``e``: step time (s), tokens/s, its held-out 80% band per device
    (:mod:`shardplan.accuracy_band`, when the layout runs), MFU, HFU, memory total (bytes), fits, bound.

    The values equal the fields of ``e.to_dict()`` (``time_s.step``, ``tokens_per_s``, ``mfu``,
    ``hfu``, ``memory_bytes.total``, ``fits``, ``bound_by``), plus ``failure`` when the layout is
    predicted to fail for a reason other than memory.
    """
    from shardplan.accuracy_band import band_text, estimate_band
    from shardplan.explain import headroom  # bytes below the fit limit (negative: does not fit)
    mem = e.memory.total
    band = estimate_band(e)
    per_device = e.tokens_per_s / e.layout.n_devices
    low, high = band.measured_range(per_device) if band else (0.0, 0.0)
    return [
        Headline("step", "step time", e.step_s, fmt_seconds(e.step_s)),
        Headline("tokens", "tokens / s", e.tokens_per_s,
                 f"{e.tokens_per_s:,.0f} ({e.tokens_per_s / e.layout.n_devices:,.0f} per device)"),
    ] + ([Headline("band", "80% band (tokens / s per device)", f"{low:.0f}-{high:.0f}",
                   band_text(band, per_device))]
         if band else []) + [
        Headline("mfu", "MFU", e.mfu, f"{e.mfu:.2%}"),
        Headline("hfu", "HFU", e.hfu, f"{e.hfu:.2%}"),
        Headline("memory", "memory per device", mem,
                 # the fit is total <= the limit (headroom), the runtime's reserve counted in the total
                 f"{fmt_gib(mem)} of {fmt_gib(e.hardware.hbm_bytes)} (headroom {fmt_gib(headroom(e))})"),
        Headline("fits", "fits in HBM", e.fits, "yes" if e.fits else "no"),
        # "memory" first for a layout that does not fit, as estimate's "bound by" row (new-user pass 57)
        Headline("bound", "bound by", e.bound_by,
                 e.bound_by if e.fits else f"{e.bound_by} (were it to run: {e.bound})"),
    ] + ([Headline("failure", "predicted to fail", e.failure, e.failure)] if e.failure else [])


def summary_rows(e: Estimate) -> list[tuple[str, str]]:
    """(label, text) rows describing ``e``: inputs, layout, headline numbers and the step-time parts."""
    p = e.parallel
    rows = [("model", f"{e.model.name} ({e.model.n_params:,} parameters)"),
            ("hardware", f"{e.layout.n_devices} x {e.hardware.name}"),
            ("batch", f"{e.training.global_batch_size} sequences x {e.training.seq_len} tokens "
                      f"({e.layout.microbatches} microbatch{'es' if e.layout.microbatches != 1 else ''} per "
                      "data-parallel rank)"),
            ("precision", e.training.precision.name + (f", optimizer state {e.training.optimizer_dtype}"
                                                        if e.training.optimizer_dtype != "fp32" else "")),
            ("framework", f"{e.training.framework.label} profile"),
            ("layout", p.short())]
    rows += [(h.label, h.text) for h in headline(e)]
    # a collective's critical part is its exposed time (new-user pass 57 read 3.77 ms as an AllGather's whole 158 ms)
    fixed = ("compute", "bubble", "optimizer", "overhead")
    rows += [(f"time: {t.label}" + ("" if t.group in fixed else " (exposed)"), fmt_seconds(t.seconds))
             for t in time_parts(e) if t.critical and t.seconds > 0]
    # the memory parts as text too (the report had them in a chart only)
    rows += [(f"memory: {name}", fmt_gib(b)) for name, b in memory_parts(e) if b > 0]
    return rows


# ---- (a) step time ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TimePart:
    """One segment of the step-time chart.

    Attributes:
        label: e.g. ``matmul`` or ``AllGather tp (activations (sequence parallel))``.
        seconds: per step, per device.
        critical: True if the segment is on the critical path (the critical segments sum to the step
            time); False for communication overlapped with compute (``time_s - exposed_s``).
        group: legend group: ``compute``, ``bubble``, ``optimizer`` or the collective's axis.
        color: hex color.
    """

    label: str
    seconds: float
    critical: bool
    group: str
    color: str


#: how each collective's colour departs from its axis colour (mixed toward white, > 0, or black, < 0), so that an
#: axis's AllGather and ReduceScatter differ in the time chart (new-user pass 55: one orange for both)
_OP_SHADES = {"AllGather": 0.45, "ReduceScatter": -0.3, "AllReduce": 0.0, "AllToAll": 0.2, "SendRecv": -0.15}


def op_shade(color: str, op: str) -> str:
    """``color`` (``#rrggbb``) mixed toward white (or black) by the op's :data:`_OP_SHADES` share."""
    k = _OP_SHADES.get(op, 0.0)
    rgb = [int(color[i:i + 2], 16) for i in (1, 3, 5)]
    mixed = [round(v + (255 - v) * k) if k >= 0 else round(v * (1 + k)) for v in rgb]
    return "#" + "".join(f"{v:02x}" for v in mixed)


def time_parts(e: Estimate) -> list[TimePart]:
    """Segments of the step time of ``e`` (seconds).

    Critical: matmul (the linear layers' GEMMs), the attention core (a part of ``e.matmul_s``), element-wise,
    recompute, the exposed time of every collective, pipeline
    bubble, optimizer, framework overheads and overlap slowdown; they sum to ``e.step_s`` (the
    planner's composition ``m T_mb + T_bubble + T_dp_exposed + T_optimizer + overheads``). Hidden: ``max(0, time_s - exposed_s)`` of
    every collective (for ZeRO-3 the forward/backward AllGather exposure is booked on the gradient
    ReduceScatter, so the clamp at 0 applies there).
    """
    # the attention kernel, what grows with the sequence, apart from the linear layers' GEMMs (a new user's 128k
    # report showed one "matmul" bar where estimate said 46-69% of the step was attention: pass 56b)
    parts = [TimePart("matmul", e.matmul_s - e.attention_s, True, "compute", _FIXED_COLORS["matmul"]),
             TimePart("attention core", e.attention_s, True, "compute", _FIXED_COLORS["attention core"]),
             TimePart("element-wise", e.elementwise_s, True, "compute", _FIXED_COLORS["element-wise"]),
             TimePart("recompute", e.recompute_s, True, "compute", _FIXED_COLORS["recompute"])]
    for c in e.collectives:
        label = f"{c.op} {c.label} {c.phase} ({c.purpose})"  # the phase tells a forward from a backward twin
        color = op_shade(_AXIS_COLORS.get(c.axis, "#333333"), c.op)
        parts.append(TimePart(label, c.exposed_s, True, c.axis, color))
        parts.append(TimePart(label, max(0.0, c.time_s - c.exposed_s), False, c.axis, color))
    parts.append(TimePart("pipeline bubble", e.bubble_s, True, "bubble", _FIXED_COLORS["pipeline bubble"]))
    parts.append(TimePart("optimizer", e.optimizer_s, True, "optimizer", _FIXED_COLORS["optimizer"]))
    # fixed per-layer / per-microbatch / per-step costs of the framework profile, and the compute
    # slowed by the communication kernels that overlap it (shardplan.cost.step.overlap_slowdown)
    # e.overhead_s holds the per-layer / per-MoE-layer overheads of the slowest stage too (Estimate.overhead_s)
    parts.append(TimePart("framework overhead", e.overhead_s, True, "overhead",
                          _FIXED_COLORS["framework overhead"]))
    parts.append(TimePart("overlap slowdown", e.overlap_slowdown_s, True, "overhead",
                          _FIXED_COLORS["overlap slowdown"]))
    parts.append(TimePart("activation offload", e.offload_s, True, "overhead", _FIXED_COLORS["activation offload"]))
    parts.append(TimePart("parameter offload", e.param_offload_s, True, "overhead",
                          _FIXED_COLORS["parameter offload"]))
    return parts


def time_figure(e: Estimate) -> go.Figure:
    """Stacked horizontal bars of the step time of ``e`` (x in seconds).

    Row :data:`CRITICAL_ROW` stacks the critical segments of :func:`time_parts` (sum = step time);
    row :data:`HIDDEN_ROW` stacks the communication overlapped with compute (hatched). Segments of
    zero length are omitted.
    """
    fig = go.Figure()
    parts = [t for t in time_parts(e) if t.seconds > 0]
    in_legend = set()
    for t in parts:
        row = CRITICAL_ROW if t.critical else HIDDEN_ROW
        name = t.label if t.critical else f"{t.label}, overlapped"
        fig.add_trace(go.Bar(
            x=[t.seconds], y=[row], orientation="h", name=t.label, legendgroup=t.label,
            showlegend=t.label not in in_legend,
            marker=dict(color=t.color, pattern=dict(shape="" if t.critical else "/"),
                        line=dict(color="white", width=0.5)),
            meta={"critical": t.critical},
            hovertemplate=f"{name}<br>{fmt_seconds(t.seconds)} ({t.seconds / e.step_s:.1%} of step)<extra></extra>"))
        in_legend.add(t.label)
    n = len(in_legend)
    layout = {**_LAYOUT, "margin": dict(l=60, r=20, t=70, b=60 + 17 * n)}  # the legend sits in the bottom margin
    fig.update_layout(
        barmode="stack", **layout, height=300 + 17 * n,
        title=dict(text=f"Step time {fmt_seconds(e.step_s)}: compute {fmt_seconds(e.compute_s)}<br>"
                        f"communication exposed {fmt_seconds(e.exposed_comm_s)}, hidden behind compute "
                        f"{fmt_seconds(sum(t.seconds for t in time_parts(e) if not t.critical))}",
                   font=dict(size=14)),
        xaxis_title="seconds per step", yaxis=dict(categoryorder="array", categoryarray=[HIDDEN_ROW, CRITICAL_ROW]),
        legend=dict(font=dict(size=10), orientation="h", yref="container", yanchor="bottom", y=0.0, xanchor="left",
                    x=0, traceorder="normal"))
    return fig


# ---- (b) memory -------------------------------------------------------------------------------------

def memory_parts(e: Estimate) -> list[tuple[str, float]]:
    """(label, bytes) of the memory of the most loaded device at its peak; the bytes sum to ``e.memory.total``
    (with lazy gradients, the parts of the phase that sets the peak: ``MemoryBreakdown.peak_parts``)."""
    m = e.memory
    labels = {"zero3_buffers": "ZeRO-3 buffers", "comm_buffers": "communication buffers",
              "workspace": "allocator workspace", "optimizer_temp": "optimizer step temporary"}
    peak = [(labels.get(k, k), v) for k, v in m.peak_parts()]
    return [*peak, ("allocator fragmentation", m.fragmentation), ("runtime context", m.context),
            ("runtime reserve", m.reserve)]


def usable_is_capacity(e: Estimate) -> bool:
    """The usable HBM (``Estimate.hbm_usable``) is the capacity to within 0.05 GiB: the charts then draw one line,
    as two would lie on top of each other (a profile that counts the runtime context as a memory term)."""
    return abs(e.hardware.hbm_bytes - e.hbm_usable) < 0.05 * GiB


def limit_is_usable(e: Estimate) -> bool:
    """The profile's fit limit (:func:`fit_limit_gib`) is the usable HBM to within 0.05 GiB: the charts then draw
    the fit limit alone (the grid's calibrated nanotron profile: both 84% of HBM)."""
    limit = fit_limit_gib(e)
    return limit is not None and abs(limit - e.hbm_usable / GiB) < 0.05


def fit_limit_gib(e: Estimate) -> float | None:
    """The fit limit in GiB when the framework profile's runs fail before the HBM cap
    (:func:`shardplan.cost.memory.hbm_limit`), else None (the capacity line is the limit)."""
    from shardplan.cost.memory import hbm_limit
    fw = e.training.framework
    return hbm_limit(e.hardware.hbm_bytes, fw) / GiB if fw.usable_hbm_fraction < 1 else None


def memory_figure(e: Estimate) -> go.Figure:
    """Stacked bar of per-device memory (y in GiB = 2**30 bytes) with the HBM capacity and usable lines,
    and the fit limit when the framework profile's runs fail before the cap (``usable_hbm_fraction``).

    The runtime reserve is part of the bar, so the bar fits exactly when it stays under the fit limit
    (the capacity line, or the fit-limit line where drawn); equivalently, everything else stays under
    the usable line.
    """
    x = [f"stage {e.memory.stage} device"]
    fig = go.Figure()
    for label, b in memory_parts(e):
        if b <= 0:
            continue
        fig.add_trace(go.Bar(x=x, y=[b / GiB], name=label, marker_color=_MEM_COLORS[label],
                             customdata=[b], hovertemplate=f"{label}: %{{y:,.2f}} GiB<extra></extra>"))
    cap, usable = e.hardware.hbm_bytes / GiB, e.hbm_usable / GiB
    same = usable_is_capacity(e)
    fig.add_hline(y=cap, line=dict(color="black", width=2), annotation_position="top left",
                  annotation_text=f"HBM capacity {cap:,.1f} GiB" + (" (all usable)" if same else ""))
    limit = fit_limit_gib(e)
    if not same and not limit_is_usable(e):
        fig.add_hline(y=usable, line=dict(color="#1f77b4", width=1.2, dash="dash"),
                      annotation_text=f"usable {usable:,.1f} GiB", annotation_position="bottom left")
    if limit is not None:
        fig.add_hline(y=limit, line=dict(color="#d62728", width=1, dash="dot"),
                      annotation_text=f"fit limit {limit:,.1f} GiB ({e.training.framework.label} runs fail above)",
                      annotation_position="top right")
    title = f"Memory per device: {fmt_gib(e.memory.total)} ({'fits' if e.fits else 'does NOT fit'})"
    if e.memory.host_offload:
        title += f"; {fmt_gib(e.memory.host_offload)} offloaded to host"
    fig.update_layout(barmode="stack", **_LAYOUT, height=380, title=dict(text=title, font=dict(size=14)),
                      yaxis=dict(title="GiB", range=[0, 1.1 * max(cap, e.memory.total / GiB)]))
    return fig


# ---- (c) roofline -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ceiling:
    """One roofline ceiling ``y = C * min(1, I / ridge)``.

    Attributes:
        resource: HBM, NVLink / ICI (scale-up) or scale-out / DCN.
        bandwidth: bytes/s per device.
        ridge: C / bandwidth, FLOPs per byte.
        color: hex color.
    """

    resource: str
    bandwidth: float
    ridge: float
    color: str


@dataclass(frozen=True)
class RooflineData:
    """Everything the roofline chart draws.

    Attributes:
        peak: C, dense peak FLOP/s of one device for the precision's compute dtype.
        ceilings: HBM, scale-up and scale-out ceilings.
        points: ``(name, resource, intensity FLOPs/byte, attainable FLOP/s, bound)`` of each of the
            layout's operations (``Estimate.roofline``); attainable = C * min(1, I / ridge).
    """

    peak: float
    ceilings: list[Ceiling]
    points: list[tuple[str, str, float, float, str]]


def roofline_data(e: Estimate) -> RooflineData:
    """Ceilings and points of the roofline of ``e`` (FLOP/s, bytes/s, FLOPs/byte).

    Raises:
        ConfigError: if the precision's compute dtype has no peak on this hardware (fp8).
    """
    from shardplan.cost.comm import level_names
    hw = e.hardware
    C = hw.peak_flops(e.training.precision.compute_dtype)
    up, out = level_names(hw)
    ceilings = [Ceiling(name, bw, C / bw, color) for (name, bw), color in zip(
        [("HBM", hw.hbm_bandwidth), (up, hw.scale_up_bandwidth), (out, hw.scale_out_bandwidth)], _RESOURCE_COLORS)]
    points = []
    for r in e.roofline:
        i = float(r["intensity"])
        if i <= 0:
            continue
        points.append((r["name"], r["resource"], i, C * min(1.0, i / r["ridge"]), r["bound"]))
    return RooflineData(C, ceilings, points)


def roofline_figure(e: Estimate) -> go.Figure:
    """Log-log roofline: arithmetic intensity (FLOPs per byte moved over the resource that feeds the
    operation) vs attainable FLOP/s, with one ceiling per resource and the layout's operations.

    A point left of its resource's ridge (C / W) is bandwidth-bound; right of it, compute-bound.
    """
    d = roofline_data(e)
    xs = [c.ridge for c in d.ceilings] + [p[2] for p in d.points]
    lo = 10 ** math.floor(math.log10(min(xs)) - 1)
    hi = 10 ** math.ceil(math.log10(max(xs)) + 1)
    grid = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    fig = go.Figure()
    colors = {}
    for c in d.ceilings:
        colors[c.resource] = c.color
        fig.add_trace(go.Scatter(
            x=grid, y=[d.peak * min(1.0, x / c.ridge) for x in grid], mode="lines", line=dict(color=c.color),
            name=f"{c.resource} ceiling ({c.bandwidth / 1e9:,.0f} GB/s, ridge {c.ridge:,.0f} FLOP/B)",
            hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=[c.ridge], y=[d.peak], mode="markers", showlegend=False,
                                 marker=dict(color=c.color, symbol="diamond", size=9),
                                 hovertemplate=f"{c.resource} ridge: C/W = {c.ridge:,.0f} FLOPs/byte<extra></extra>"))
    for bound, symbol in (("compute", "circle"), ("bandwidth", "x")):
        pts = [p for p in d.points if (p[4] == "compute") == (bound == "compute")]
        if not pts:
            continue
        fig.add_trace(go.Scatter(
            x=[p[2] for p in pts], y=[p[3] for p in pts], mode="markers", name=f"operations ({bound}-bound)",
            marker=dict(symbol=symbol, size=11, color=[colors.get(p[1], "#333333") for p in pts],
                        line=dict(width=1, color="black")),
            text=[p[0] for p in pts], customdata=[[p[1], p[4]] for p in pts],
            hovertemplate="%{text}<br>intensity %{x:,.3g} FLOPs/byte over %{customdata[0]}<br>"
                          "attainable %{y:.3s}FLOP/s (%{customdata[1]}-bound)<br>a roofline bound, not the schedule: "
                          "whether a collective hides is the step-time chart's (overlap on or off)<extra></extra>"))
    fig.update_layout(**_LAYOUT, height=520,
                      title=dict(text=f"Roofline ({e.hardware.name}, peak {d.peak / 1e12:,.0f} TFLOP/s)",
                                 font=dict(size=14)),
                      xaxis=dict(type="log", title="arithmetic intensity (FLOPs per byte moved)"),
                      yaxis=dict(type="log", title="attainable FLOP/s"),
                      legend=dict(font=dict(size=10), orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0))
    return fig


# ---- (e) pipeline schedule --------------------------------------------------------------------------

def pipeline_figure(pp: int, microbatches: int, schedule: str = "1f1b", virtual_stages: int = 1,
                    stage_layers: Sequence[int] | None = None) -> go.Figure:
    """Gantt chart of :func:`pipeline_schedule`: one row per pipeline stage, one bar per pass.

    Forward passes are blue, backward orange, weight-gradient (zero-bubble) green; darker shades
    are later model chunks (interleaved). Labels are microbatch indices when the chart is small.
    Every pass is drawn one unit long; ``stage_layers`` (the layout's layers per stage) uneven: the title says so
    and names the split (the priced bubble follows the largest chunk, :mod:`shardplan.cost.pipeline`).

    Raises:
        ConfigError: as :func:`pipeline_schedule`.
    """
    blocks = pipeline_schedule(pp, microbatches, schedule, virtual_stages)
    shades = {"F": ["#6baed6", "#2171b5", "#08519c", "#08306b"], "B": ["#fdae6b", "#e6550d", "#a63603", "#7f2704"],
              "W": ["#74c476"]}
    names = {"F": "forward", "B": "backward" if schedule not in ("zero-bubble", "dualpipe") else "backward (input grad)",
             "W": "weight grad"}
    show_text = len(blocks) <= 320
    fig = go.Figure()
    for kind in ("F", "B", "W"):
        bs = [b for b in blocks if b.kind == kind]
        if not bs:
            continue
        pal = shades[kind]
        fig.add_trace(go.Bar(
            orientation="h", y=[f"stage {b.stage}" for b in bs], x=[b.duration for b in bs],
            base=[b.start for b in bs], name=names[kind],
            marker=dict(color=[pal[min(b.chunk, len(pal) - 1)] for b in bs], line=dict(color="white", width=0.5)),
            text=[str(b.microbatch) for b in bs] if show_text else None, textposition="inside",
            insidetextanchor="middle", customdata=[[b.microbatch, b.chunk, b.start, b.end] for b in bs],
            hovertemplate=f"{names[kind]}<br>microbatch %{{customdata[0]}}, chunk %{{customdata[1]}}"
                          "<br>t = %{customdata[2]:.2f} .. %{customdata[3]:.2f}<extra></extra>"))
    bubble = pipeline_bubble_units(blocks)
    makespan = max(b.end for b in blocks)
    label = schedule + (f", v={virtual_stages}" if schedule == "interleaved" else "") + (
        " (drawn as ZB-H1: one of its two directions)" if schedule == "dualpipe" else "")
    priced = ""
    if schedule == "dualpipe":  # the drawn ZB-H1 bubble is not DualPipe's: name the one the planner prices
        from shardplan.cost.pipeline import bubble_fraction
        from shardplan.parallel import ParallelConfig
        # priced in microbatch times (forward + backward = 3 chart units)
        units = 3 * bubble_fraction(ParallelConfig(pp=pp, schedule="dualpipe"))
        priced = f"; DualPipe's own bubble, as priced: (pp/2 - 1) x 2/3 microbatch times = {units:.2f} units"
    if stage_layers is not None and len(set(stage_layers)) > 1:  # breaker 58: an uneven split was drawn as even
        priced += (f"<br>drawn with equal stages; the stages hold {', '.join(map(str, stage_layers))} layers (the "
                   "priced bubble follows the largest chunk)")
    fig.update_layout(
        barmode="overlay", **_LAYOUT, height=max(220, 60 + 34 * pp), bargap=0.15,
        title=dict(text=f"Pipeline schedule ({label}): pp={pp}, {microbatches} microbatches; bubble drawn "
                        f"{bubble:.2f} of {makespan:.2f} units ({bubble / makespan:.1%}){priced}", font=dict(size=14)),
        xaxis_title="time (units of one microbatch forward per stage; backward = 2)",
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=[f"stage {s}" for s in range(pp)]))
    return fig


# ---- (d) ranked plans -------------------------------------------------------------------------------

def plans_figure(plans: Sequence[Estimate], top: int = 10) -> go.Figure:
    """Horizontal bars of tokens/s of the ``top`` best layouts (rank 1 on top), colored by the
    bottleneck (``bound``); layouts that do not fit in HBM are hatched.
    """
    shown = list(plans)[:top]
    labels = [f"#{i + 1} {e.parallel.short()}" for i, e in enumerate(shown)]
    best = shown[0].tokens_per_s if shown else 1.0
    bounds = list(dict.fromkeys(e.bound for e in shown))
    fig = go.Figure()
    for j, bound in enumerate(bounds):
        idx = [i for i, e in enumerate(shown) if e.bound == bound]
        fig.add_trace(go.Bar(
            orientation="h", y=[labels[i] for i in idx], x=[shown[i].tokens_per_s for i in idx], name=bound,
            marker=dict(color=_BOUND_COLORS[j % len(_BOUND_COLORS)],
                        pattern=dict(shape=["" if shown[i].fits else "x" for i in idx])),
            text=[f"{shown[i].tokens_per_s / best - 1:+.1%} vs #1" if i else "#1" for i in idx],
            textposition="inside", insidetextanchor="end",
            customdata=[[shown[i].mfu, fmt_gib(shown[i].memory.total), "yes" if shown[i].fits else "no",
                         fmt_seconds(shown[i].step_s)] for i in idx],
            hovertemplate="%{y}<br>%{x:,.0f} tokens/s, step %{customdata[3]}<br>MFU %{customdata[0]:.1%}, "
                          "memory %{customdata[1]}, fits %{customdata[2]}<extra></extra>"))
    # close rankings (a new user's report: 10 bars of 76-78k tokens/s on an axis from 0 all looked alike): the axis
    # starts near the slowest shown, said in its title, so the differences show; each bar says its gap to #1
    low = min((e.tokens_per_s for e in shown), default=0.0)
    high = max((e.tokens_per_s for e in shown), default=best)
    start = 0.9 * low if shown and low > 0.8 * high else 0.0
    fig.update_layout(**_LAYOUT, height=max(260, 80 + 30 * len(shown)),
                      title=dict(text=f"Ranked layouts (top {len(shown)}; hatched = does not fit)", font=dict(size=14)),
                      xaxis_title="tokens / s" + (f" (axis from {start:,.0f})" if start else ""),
                      xaxis=dict(range=[start, 1.02 * high]) if start else {}, legend_title_text="bound by",
                      yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels))
    return fig


def empty_figure(message: str) -> go.Figure:
    """A blank figure that shows ``message`` (used when there is nothing to plot)."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                       font=dict(size=13))
    fig.update_layout(**_LAYOUT, height=260, xaxis=dict(visible=False), yaxis=dict(visible=False))
    return fig
