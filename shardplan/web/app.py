"""The Dash app behind ``shardplan serve``: pick a model, hardware, batch and layout, see the planner's
step-time breakdown, memory, roofline, pipeline schedule and ranked layouts update live.

The callbacks are plain module-level functions (:func:`update_view`, :func:`update_plans`,
:func:`parse_upload`) registered in :func:`create_app`, so tests can call them directly. Every
callback turns a :class:`~shardplan.errors.ConfigError` (or a pydantic validation error) into the
message shown in the page's alert box; nothing raises into Dash.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import dash
from dash import Input, Output, State, dcc, html

from shardplan.errors import ConfigError, short_repr
from shardplan.explain import fit_limit_text
from shardplan.inputs import LAYOUT_OPTIONS, LayoutOption, hardware_spec, model_spec, parallel_config, training_spec
from shardplan.web import charts

#: Dropdown value of the model parsed from an uploaded Hugging Face config.json.
UPLOADED = "__uploaded__"

#: Controls of the specs; they also set the search space of the ranked-plans chart.
SPEC_CONTROLS = ("model", "hardware", "devices", "seq_len", "global_batch", "precision", "optimizer_dtype",
                 "framework")
#: Controls of the layout: one per ParallelConfig field (generated from :data:`shardplan.inputs.LAYOUT_OPTIONS`).
LAYOUT_CONTROLS = tuple(o.name for o in LAYOUT_OPTIONS)
#: Control ids in the order :func:`update_view` takes them (after ``uploaded``).
CONTROLS = SPEC_CONTROLS + LAYOUT_CONTROLS

#: Initial control values: llama-3-8b on 64 H100s, 4096 x 256 tokens, ZeRO-1, the other layout
#: fields at their ParallelConfig defaults.
DEFAULTS: dict[str, Any] = {"model": "llama-3-8b", "hardware": "h100-sxm", "devices": 64, "seq_len": 4096,
                            "global_batch": 256, "precision": "bf16-mixed", "optimizer_dtype": "",
                            "framework": "megatron",
                            **{o.name: o.default for o in LAYOUT_OPTIONS}, "zero_stage": 1}

_HIDDEN = {"display": "none"}
_ALERT = {"display": "block", "background": "#fdecea", "color": "#611a15", "border": "1px solid #f5c6cb",
          "borderRadius": "4px", "padding": "10px 14px", "margin": "0 0 12px 0", "whiteSpace": "pre-wrap",
          "fontSize": "14px"}
_INFO = {**_ALERT, "background": "#e8f4fd", "color": "#0c3c60", "border": "1px solid #b6dcf7"}


def _error_text(e: Exception) -> str:
    """One-line message of a ConfigError or pydantic ValidationError (as the CLI prints it)."""
    from pydantic import ValidationError

    from shardplan.loaders import config_error
    return str(config_error(e)) if isinstance(e, ValidationError) else str(e)


def _as_int(name: str, v: Any, optional: bool = False) -> int | None:
    """A numeric control value as int.

    Raises:
        ConfigError: empty (unless ``optional``) or not a whole number.
    """
    if v is None or v == "":
        if optional:
            return None
        raise ConfigError(f"{name} is empty; give a whole number", field=name, value=v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}={v!r} is not a number", field=name, value=v) from None
    if f != int(f):
        raise ConfigError(f"{name}={v!r} must be a whole number", field=name, value=v)
    return int(f)


def _model(name: str | None, uploaded: dict | None):
    """The model of the model control: a preset, or the uploaded config.json when ``name`` is UPLOADED.

    Raises:
        ConfigError: nothing picked, nothing uploaded yet, or an invalid model.
    """
    from shardplan.loaders import model_from_hf_config
    if name == UPLOADED:
        if not uploaded:
            raise ConfigError("no config.json uploaded yet; pick a preset or upload a file", field="model")
        return model_from_hf_config(uploaded["config"], name=uploaded.get("name") or "uploaded")
    if not name:
        raise ConfigError("pick a model preset or upload a config.json", field="model")
    return model_spec(name)


def _no_server_file(field: str, value: Any) -> None:
    """The page's model / hardware / framework controls name presets only: a value that reads as a file path
    (a separator or a .yaml / .yml / .json ending) is refused, so a request cannot make the server read its own
    files (and echo their keys in an error) when it listens beyond this machine.

    Raises:
        ConfigError: naming the control and what it takes."""
    text = str(value or "")
    if "/" in text or "\\" in text or text.lower().endswith((".yaml", ".yml", ".json")):
        raise ConfigError(f"{field}: the guide takes a preset name, not a file ({short_repr(text)}); a model of your "
                          "own: upload its config.json; hardware or profile files: the CLI (--hardware FILE)",
                          field=field, value=text)


def _specs(values: dict[str, Any], uploaded: dict | None):
    """``(model, hardware, training, n_devices)`` from the spec controls (:data:`SPEC_CONTROLS`).

    Raises:
        ConfigError: an empty or invalid control (named), or a file path (:func:`_no_server_file`).
    """
    for field in ("model", "hardware", "framework"):
        _no_server_file(field, values.get(field))
    n = _as_int("devices", values.get("devices"))
    seq_len = _as_int("seq_len", values.get("seq_len"))
    batch = _as_int("global_batch", values.get("global_batch"))
    m = _model(values.get("model"), uploaded)
    if not values.get("hardware"):
        raise ConfigError("pick a hardware preset", field="hardware")
    hw = hardware_spec(values["hardware"])
    tr = training_spec(seq_len, batch, precision=values.get("precision") or None,
                       framework=values.get("framework") or None,
                       optimizer_dtype=values.get("optimizer_dtype") or None)
    return m, hw, tr, n


def _layout_value(option: LayoutOption, raw: Any) -> Any:
    """A layout control's value as the ParallelConfig field takes it (None: not given, its default).

    Raises:
        ConfigError: an empty or fractional number where a whole one is needed.
    """
    if option.kind == "int":
        return _as_int(option.name, raw, optional=option.optional)
    if option.kind == "bool":
        return bool(raw)  # the checklist yields [name] or []
    if option.kind == "names":
        return list(raw) if raw else None  # the multi-select yields a list of names
    return None if raw == "" else raw


def build_estimate(values: dict[str, Any], uploaded: dict | None = None):
    """Run the planner on the app's control values.

    Args:
        values: control id -> value (see :data:`CONTROLS`); numbers may be int, float or None
            (an optional field such as ``dp`` None = derived: devices / (tp * pp * cp)).
        uploaded: ``{"name": str, "config": dict}`` of an uploaded HF config.json, used when
            ``values["model"] == UPLOADED``.

    Returns:
        The :class:`~shardplan.cost.step.Estimate` (``shardplan estimate`` with these flags gives the
        same numbers: both read their inputs with :mod:`shardplan.inputs`).

    Raises:
        ConfigError: for any invalid input or layout.
    """
    from shardplan.cost.step import estimate
    from shardplan.inputs import applied_layout_defaults
    m, hw, tr, n = _specs(values, uploaded)
    layout = {o.name: _layout_value(o, values.get(o.name)) for o in LAYOUT_OPTIONS}
    for name, default in (tr.framework.layout_defaults or {}).items():
        if default is True and layout.get(name) is False:  # unchecked: not given, as estimate without --sp
            layout[name] = None
    pc = parallel_config(layout)
    applied = applied_layout_defaults(tr.framework, pc, layout, None, tr.seq_len)
    if applied:  # the profile's defaults, as `shardplan estimate` applies them (a new user's 70B read 19.9 s vs 19.3)
        pc = parallel_config({**layout, **applied})
    return estimate(m, hw, tr, pc, n)


def headline_children(e) -> list:
    """Headline cards of an estimate; each value has id ``headline-<key>`` and its exact number in
    ``data-value`` (see :func:`shardplan.web.charts.headline`)."""
    cards = []
    for h in charts.headline(e):
        color = {"fits": "#1b7f3b" if e.fits else "#b00020"}.get(h.key, "#111")
        cards.append(html.Div([
            html.Div(h.label, style={"fontSize": "12px", "color": "#555"}),
            html.Div(h.text, id=f"headline-{h.key}", **{"data-value": repr(h.value)},
                     style={"fontSize": "17px", "fontWeight": "600", "color": color}),
        ], style={"padding": "8px 12px", "background": "white", "border": "1px solid #ddd", "borderRadius": "6px",
                  "minWidth": "120px"}))
    return cards


def update_view(uploaded: dict | None, *values: Any) -> tuple:
    """Main callback: estimate the layout and rebuild the headline and four charts.

    Args:
        uploaded: the upload store (see :func:`build_estimate`).
        values: the controls, in :data:`CONTROLS` order.

    Returns:
        ``(headline children, time fig, memory fig, roofline fig, pipeline fig, alert text,
        alert style)``. On a ConfigError / validation error the alert shows the message, the
        headline is cleared and the charts say the layout is invalid; nothing is raised.
    """
    from pydantic import ValidationError
    try:
        e = build_estimate(dict(zip(CONTROLS, values)), uploaded)
        p = e.parallel
        figs = (charts.time_figure(e), charts.memory_figure(e), charts.roofline_figure(e),
                charts.pipeline_figure(p.pp, e.layout.microbatches, p.schedule, p.virtual_stages,
                                                   e.layout.stage_layers))
    except Exception as err:  # noqa: BLE001 - a UI callback must not raise into Dash
        msg = _error_text(err) if isinstance(err, (ConfigError, ValidationError)) else \
            f"internal error ({type(err).__name__}: {err}); please report it"
        blank = charts.empty_figure("invalid layout: see the message above")
        return ([html.Div("no estimate", id="headline-step", **{"data-value": ""})], blank, blank, blank, blank,
                f"Invalid configuration: {msg}", _ALERT)
    note = ""
    if not e.fits:
        note = (f"This layout does not fit: {charts.fmt_gib(e.memory.total)} per device > "
                f"{fit_limit_text(e.hardware.hbm_bytes, e.training.framework)}. Raise zero_stage, tp/pp, or enable "
                "recompute.")
    if e.failure:
        note = (note + " " if note else "") + f"This layout is predicted to fail: {e.failure}."
    return (headline_children(e), *figs, note, _INFO if note else _HIDDEN)


def update_plans(uploaded: dict | None, *values: Any) -> tuple:
    """Ranked-plans callback: run :func:`shardplan.search.search` for the model / hardware /
    devices / batch / precision of the controls (layout controls are ignored) and chart the top 10
    (padded with the best layouts that do not fit when fewer than 10 fit).

    Returns:
        ``(figure, status text)``; a ConfigError yields an empty figure and its message.
    """
    from pydantic import ValidationError

    from shardplan.search import search
    try:  # the specs exactly as the main view reads them; the layout controls are not needed
        res = search(*_specs(dict(zip(CONTROLS, values)), uploaded), top_k=10, keep_infeasible=True)
    except (ConfigError, ValidationError) as err:
        return charts.empty_figure(f"no ranked plans: {_error_text(err)}"), _error_text(err)
    plans = list(res.plans)[:10]
    plans += list(res.infeasible)[: 10 - len(plans)]
    if not plans:
        return charts.empty_figure("no valid layout"), "no valid layout"
    status = (f"{res.n_layouts:,} valid layouts, {res.n_evaluated:,} evaluated in {res.seconds:.2f} s; "
              f"{len(res.plans)} shown fit")
    return charts.plans_figure(plans), status


def parse_upload(contents: str | None, filename: str | None) -> tuple:
    """Upload callback: parse a Hugging Face ``config.json`` sent by ``dcc.Upload``.

    Args:
        contents: ``data:<mime>;base64,<payload>`` as dcc.Upload delivers it (None before any upload).
        filename: the uploaded file's name.

    Returns:
        ``(store data {"name", "config"} or no_update, status text, status style, model options,
        model value)``. An unreadable file or unsupported architecture leaves the model unchanged and
        shows the message.
    """
    options = _model_options()
    if not contents:
        return dash.no_update, "", _HIDDEN, options, dash.no_update
    try:
        payload = contents.split(",", 1)[1] if "," in contents else contents
        if len(payload) > 2 * 2**20:
            raise ConfigError(f"{filename} is larger than 1 MiB; a config.json is a few KiB", field="config.json")
        cfg = json.loads(base64.b64decode(payload).decode("utf-8"))
        from shardplan.loaders import check_document
        check_document(cfg, str(filename))
        if not isinstance(cfg, dict):
            raise ConfigError(f"{filename} holds no JSON object", field="config.json")
        name = cfg.get("_name_or_path") or (filename or "config.json").rsplit(".", 1)[0]
        name = str(name).rstrip("/").rsplit("/", 1)[-1] or "uploaded"
        from shardplan.loaders import model_from_hf_config
        spec = model_from_hf_config(cfg, name=name)
    except RecursionError:
        return dash.no_update, f"Upload {filename}: nested too deeply", _ALERT, options, dash.no_update
    except (ValueError, UnicodeDecodeError) as err:  # ConfigError is a ValueError; so is JSONDecodeError
        return dash.no_update, f"Upload {filename}: {err}", _ALERT, options, dash.no_update
    options = _model_options(f"uploaded: {spec.name} ({spec.n_params / 1e9:,.2f} B parameters)")
    return ({"name": spec.name, "config": cfg}, f"Loaded {filename}: {spec.name}, {spec.n_params:,} parameters",
            _INFO, options, UPLOADED)


def _model_options(uploaded_label: str | None = None) -> list[dict]:
    from shardplan.presets.models import MODELS
    opts = [{"label": k, "value": k} for k in MODELS]
    if uploaded_label:
        opts.insert(0, {"label": uploaded_label, "value": UPLOADED})
    return opts


# ---- layout -------------------------------------------------------------------------------------

def _field(label: str, control: Any, hint: str | None = None, title: str | None = None) -> html.Div:
    return html.Div([html.Label(label, title=title, style={"fontSize": "12px", "fontWeight": "600",
                                                           "display": "block"}),
                     control] + ([html.Div(hint, style={"fontSize": "11px", "color": "#777"})] if hint else []),
                    title=title, style={"marginBottom": "8px"})


def _num(id_: str, value: Any, min_: int | None = 1, placeholder: str | None = None) -> dcc.Input:
    return dcc.Input(id=id_, type="number", value=value, min=min_, step=1, debounce=True, placeholder=placeholder,
                     style={"width": "100%"})


def _dropdown(id_: str, options: list, value: Any) -> dcc.Dropdown:
    return dcc.Dropdown(id=id_, options=options, value=value, clearable=False)


def _graph(id_: str) -> dcc.Graph:
    return dcc.Graph(id=id_, config={"displaylogo": False}, style={"minHeight": "240px"})


def _layout_field(option: LayoutOption, value: Any) -> html.Div:
    """The control of one ParallelConfig field, labelled with its name, its description as tooltip:
    a dropdown for a Literal or a small bounded int (zero_stage), a number box for an int ("empty =
    auto" when optional), a text box for a list of ints (pp_layers: ``9,7``)."""
    o = option
    if o.kind == "choice":
        control = _dropdown(o.name, list(o.choices), value)
    elif o.kind == "int" and o.minimum is not None and o.maximum is not None and o.maximum - o.minimum < 8:
        control = _dropdown(o.name, list(range(o.minimum, o.maximum + 1)), value)
    elif o.kind == "int":
        control = _num(o.name, value, o.minimum, placeholder="auto" if o.optional else None)
    elif o.kind == "ints":
        control = dcc.Input(id=o.name, type="text", value=value, debounce=True, placeholder="e.g. 9,7",
                            style={"width": "100%"})
    elif o.kind == "names":
        control = dcc.Dropdown(id=o.name, options=list(o.choices), value=list(value or []), multi=True,
                               clearable=True)
    else:
        raise TypeError(f"no web control for the {o.kind!r} option {o.name}")
    return _field(o.name, control, "empty = auto" if o.optional else None, title=o.description)


def _switch(option: LayoutOption, value: bool) -> html.Div:
    """A checkbox for a boolean ParallelConfig field (value ``[name]`` when on), its description as tooltip (sp and
    tp_overlap unchecked take the framework's default, as ``shardplan estimate`` without the flag does)."""
    hint = " (unchecked: the framework's default)" if option.name in ("sp", "tp_overlap") else ""
    return html.Div(dcc.Checklist(id=option.name, options=[{"label": f" {option.name}", "value": option.name}],
                                  value=[option.name] if value else [], style={"fontSize": "13px"}),
                    title=option.description + hint)


def _layout_controls() -> list:
    """One control per ParallelConfig field (:data:`shardplan.inputs.LAYOUT_OPTIONS`): the others in
    a two-column grid, then the switches."""
    two = {"display": "grid", "gridTemplateColumns": "1fr 1fr", "columnGap": "8px"}
    fields = [_layout_field(o, DEFAULTS[o.name]) for o in LAYOUT_OPTIONS if o.kind != "bool"]
    switches = [_switch(o, DEFAULTS[o.name]) for o in LAYOUT_OPTIONS if o.kind == "bool"]
    return [html.H3("Layout", style={"margin": "12px 0 8px 0"}), html.Div(fields, style=two), *switches]


def _controls() -> html.Div:
    from shardplan.presets.frameworks import FRAMEWORKS
    from shardplan.presets.hardware import HARDWARE
    from shardplan.specs.training import OPTIMIZER_DTYPES, PRECISION_POLICIES
    d = DEFAULTS
    two = {"display": "grid", "gridTemplateColumns": "1fr 1fr", "columnGap": "8px"}
    return html.Div([
        html.H3("Inputs", style={"margin": "0 0 8px 0"}),
        _field("model", _dropdown("model", _model_options(), d["model"])),
        dcc.Upload(id="upload", accept=".json,application/json", max_size=2_000_000,
                   children=html.Div(["upload a Hugging Face ", html.B("config.json")]),
                   style={"border": "1px dashed #999", "borderRadius": "4px", "padding": "6px", "textAlign": "center",
                          "fontSize": "12px", "marginBottom": "8px", "cursor": "pointer"}),
        html.Div(id="upload-status", style=_HIDDEN),
        _field("hardware", _dropdown("hardware", list(HARDWARE), d["hardware"])),
        html.Div([_field("devices", _num("devices", d["devices"])),
                  _field("seq_len", _num("seq_len", d["seq_len"]))], style=two),
        html.Div([_field("global batch (sequences)", _num("global_batch", d["global_batch"])),
                  _field("precision", _dropdown("precision", list(PRECISION_POLICIES), d["precision"]))], style=two),
        _field("optimizer state", _dropdown("optimizer_dtype", [{"label": "the framework's (fp32 unless it keeps "
                                                                 "another)", "value": ""}, *OPTIMIZER_DTYPES],
                                            d["optimizer_dtype"]),
               title="the framework's: fp32, or what the framework's code keeps (automodel: bf16); "
                     "fp32: fp32 master and Adam moments; bf16-moments: bf16 moments (DeepSeek-V3); "
                     "bf16: bf16 moments, no master copy (NeMo distributed_fused_adam dtype bf16)"),
        _field("framework", _dropdown("framework", list(FRAMEWORKS), d["framework"]),
               title="the training framework's profile: overheads, overlap, loss, allocator"),
        *_layout_controls(),
    ], style={"width": "300px", "flex": "0 0 300px", "padding": "12px", "background": "#f7f7f9",
              "borderRight": "1px solid #ddd", "overflowY": "auto"})


def export_download(framework: str, uploaded: dict | None, *values: Any) -> tuple:
    """Export-button callback: the control values' layout as a framework's config file
    (:func:`shardplan.export.export_text`, the same text as ``shardplan export --to NAME``), priced with the
    target's own profile (:func:`export_values`).

    Returns:
        ``(dcc.Download data or None, status text)``; a ConfigError (an invalid layout, or one the
        framework cannot express) yields no file and its message; nothing is raised.
    """
    from pydantic import ValidationError

    from shardplan.export import exporter, export_text, reproduce_command
    try:
        ex = exporter(framework)
        # priced with the target's own profile, as `shardplan export --to NAME` prices it (breaker 58: a DeepSpeed file
        # headed 820 ms / 48.7% MFU under the page's megatron profile where the CLI's, and its reproduce line, say 2.04 s)
        e = build_estimate(export_values(ex.name, dict(zip(CONTROLS, values))), uploaded)
        filename = f"{ex.name}{ex.suffix}"
        text = export_text(ex.name, e, reproduce_command(ex.name, e, filename))
    except (ConfigError, ValidationError) as err:
        return None, f"not exported: {_error_text(err)}"
    return dcc.send_string(text, filename), f"exported {filename} ({ex.title})"


def _export_row() -> html.Div:
    """One button per framework (ids ``export-<name>``), the download and its status line."""
    from shardplan.export import EXPORTERS
    buttons = [html.Button(ex.title, id=f"export-{name}", n_clicks=0, title=f"download this layout as a {ex.title} "
                           f"config ({ex.suffix})", style={"marginRight": "6px"}) for name, ex in EXPORTERS.items()]
    return html.Div([html.Span("export this layout: ", style={"fontSize": "13px"}), *buttons,
                     html.Span(id="export-status", style={"fontSize": "12px", "color": "#555", "marginLeft": "8px"}),
                     dcc.Download(id="export-download")], style={"marginBottom": "12px"})


def _register_export(app: dash.Dash) -> None:
    """The export buttons' callback: which button was clicked -> :func:`export_download`."""
    from shardplan.export import EXPORTERS

    @app.callback(Output("export-download", "data"), Output("export-status", "children"),
                  *[Input(f"export-{name}", "n_clicks") for name in EXPORTERS], State("uploaded", "data"),
                  *[State(c, "value") for c in CONTROLS], prevent_initial_call=True)
    def _export(*args):
        uploaded, values = args[len(EXPORTERS)], args[len(EXPORTERS) + 1:]
        clicked = str(dash.ctx.triggered_id or "").removeprefix("export-")
        return export_download(clicked, uploaded, *values)


def create_app() -> dash.Dash:
    """Build the Dash app (layout + callbacks). Assets are served locally: it works offline.

    Returns:
        The :class:`dash.Dash` instance; ``app.server`` is its Flask WSGI app.
    """
    app = dash.Dash(__name__, title="shardplan guide", serve_locally=True)
    card = {"background": "white", "border": "1px solid #ddd", "borderRadius": "6px", "padding": "4px"}
    app.layout = html.Div([
        dcc.Store(id="uploaded"),
        _controls(),
        html.Div([
            html.H2("shardplan: where does communication outweigh compute?", style={"margin": "0 0 10px 0"}),
            html.Div(id="alert", role="alert", style=_HIDDEN),
            _export_row(),
            dcc.Loading(html.Div(id="headline", style={"display": "flex", "flexWrap": "wrap", "gap": "8px",
                                                       "marginBottom": "12px"}), type="dot"),
            html.Div([html.Div(_graph("time-chart"), style=card), html.Div(_graph("memory-chart"), style=card),
                      html.Div(_graph("roofline-chart"), style=card),
                      html.Div(_graph("pipeline-chart"), style=card)],
                     style={"display": "grid", "gridTemplateColumns": "repeat(auto-fit, minmax(560px, 1fr))",
                            "gap": "10px"}),
            html.Div([dcc.Loading(_graph("plans-chart"), type="circle"),
                      html.Div(id="plans-status", style={"fontSize": "12px", "color": "#555", "padding": "4px"})],
                     style={**card, "marginTop": "10px"}),
        ], style={"flex": "1", "padding": "12px", "minWidth": "0"}),
    ], style={"display": "flex", "fontFamily": "system-ui, -apple-system, 'Segoe UI', Arial, sans-serif",
              "background": "#fafafa", "minHeight": "100vh"})

    inputs = [Input("uploaded", "data")] + [Input(c, "value") for c in CONTROLS]

    @app.callback(Output("headline", "children"), Output("time-chart", "figure"), Output("memory-chart", "figure"),
                  Output("roofline-chart", "figure"), Output("pipeline-chart", "figure"),
                  Output("alert", "children"), Output("alert", "style"), *inputs)
    def _view(uploaded, *values):
        return update_view(uploaded, *values)

    @app.callback(Output("plans-chart", "figure"), Output("plans-status", "children"), Input("uploaded", "data"),
                  *[Input(c, "value") for c in SPEC_CONTROLS])
    def _plans(uploaded, *spec_values):
        values = dict(DEFAULTS)
        values.update(zip(SPEC_CONTROLS, spec_values))
        return update_plans(uploaded, *[values[c] for c in CONTROLS])

    @app.callback(Output("uploaded", "data"), Output("upload-status", "children"), Output("upload-status", "style"),
                  Output("model", "options"), Output("model", "value"), Input("upload", "contents"),
                  State("upload", "filename"), prevent_initial_call=True)
    def _upload(contents, filename):
        return parse_upload(contents, filename)

    _register_framework_defaults(app)
    _register_export(app)
    return app


def _register_framework_defaults(app: dash.Dash) -> None:
    """The callbacks that set the ZeRO stage and the precision controls to the framework profile's defaults when the
    framework control changes (:func:`framework_zero_stage`, :func:`framework_precision`), as ``shardplan estimate``
    applies them when ``--zero-stage`` / ``--precision`` are not given."""
    @app.callback(Output("zero_stage", "value"), Input("framework", "value"), State("zero_stage", "value"),
                  prevent_initial_call=True)
    def _zero(framework, current):
        return framework_zero_stage(framework, current)

    @app.callback(Output("precision", "value"), Input("framework", "value"), prevent_initial_call=True)
    def _precision(framework):
        return framework_precision(framework)


def framework_zero_stage(framework: str | None, current: Any) -> Any:
    """The ZeRO stage control's value after the framework control changes to ``framework``: the profile's
    ``default_zero_stage`` (megatron 1; torchtitan, PyTorch FSDP, MaxText 3; ... as ``shardplan estimate`` applies
    it when ``--zero-stage`` is not given), or ``current`` for a name that is not a preset profile."""
    from shardplan.presets.frameworks import FRAMEWORKS
    profile = FRAMEWORKS.get(str(framework or "").lower())
    return current if profile is None else profile.default_zero_stage


def framework_precision(framework: str | None) -> str:
    """The precision control's value after the framework control changes to ``framework``: the profile's
    ``default_precision`` (MaxText / PAXML: fp32-params), else bf16-mixed, what ``shardplan estimate`` uses when
    ``--precision`` is not given (:func:`shardplan.inputs.training_spec`)."""
    from shardplan.presets.frameworks import FRAMEWORKS
    profile = FRAMEWORKS.get(str(framework or "").lower())
    return (profile.default_precision if profile is not None else None) or "bf16-mixed"


def export_values(target: str, values: dict[str, Any]) -> dict[str, Any]:
    """The control values an export to ``target`` is priced with: the target framework's own profile
    (``shardplan export --to NAME`` without ``--framework``: :data:`shardplan.cli.export.TARGET_PROFILES`), with that
    profile's default precision where the page shows the page framework's default; ``values`` unchanged for a
    target without a profile (megatron, easydel) or when the page already uses it. The page's other fields stay."""
    from shardplan.cli.export import TARGET_PROFILES
    profile = TARGET_PROFILES.get(target)
    if profile is None or str(values.get("framework") or "").lower() == profile:
        return values
    out = {**values, "framework": profile}
    if values.get("precision") in (None, "", framework_precision(values.get("framework"))):
        out["precision"] = framework_precision(profile)
    return out


def serve(host: str = "127.0.0.1", port: int = 8050, debug: bool = False) -> None:
    """Run the app with Dash's development server (blocking) on ``http://host:port``."""
    create_app().run(host=host, port=port, debug=debug)
