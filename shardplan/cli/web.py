"""``shardplan serve`` (interactive Dash guide) and ``shardplan report`` (static HTML / PNG report).

plotly, dash and matplotlib (the ``web`` extra) are imported only inside the commands, so the CLI
and the core planner work without them.
"""

from pathlib import Path
from typing import Annotated, Optional

import typer

from shardplan.cli.common import (AttnOpt, BatchOpt, BatchTokOpt, DropoutOpt, FrameworkOpt, PlanDevicesOpt,
                                  HardwareOpt, ModelOpt, MoeCapOpt, MoeImbOpt, MoeRoutingOpt, OptimizerDtypeOpt,
                                  PlanOpt, PlanSeqOpt, PrecisionOpt, ScaleUpOpt, app, config_errors, fail, layout_flags)
from shardplan.cli.estimate import estimate_layout, estimate_notes, print_estimate_notes
from shardplan.errors import ConfigError


def _need_web_extra() -> None:
    """Exit with a one-line message (code 2) if the ``web`` extra is missing."""
    import importlib.util
    missing = [m for m in ("plotly", "dash", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        raise fail(f"{', '.join(missing)} not installed; pip install 'shardplan[web]'")


def _check_listen(host: str, port: int) -> None:
    """Exit with a one-line message (code 2) if ``host`` does not resolve to an address of this machine or
    ``port`` is taken there: bind a socket once, as the server will (closed at once)."""
    import socket
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise fail(f"host={host!r} does not resolve ({e}); legal: an address or name of this machine, e.g. "
                   "127.0.0.1 (local only) or 0.0.0.0 (every interface)") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server's socket (werkzeug) sets it
        try:
            sock.bind(address)
        except OSError as e:
            raise fail(f"cannot listen on {host}:{port} ({e.strerror or e}); legal: a free port (--port) on an "
                       "address of this machine (--host)") from None


HostOpt = Annotated[str, typer.Option(help="interface to bind (default: local only)")]
PortOpt = Annotated[int, typer.Option(help="TCP port")]
DebugOpt = Annotated[bool, typer.Option(help="Dash debug mode (reloader, dev tools)")]


@app.command()
def serve(host: HostOpt = "127.0.0.1", port: PortOpt = 8050, debug: DebugOpt = False) -> None:
    """Start the interactive guide: a local Dash app with live charts of the planner."""
    if not 1 <= port <= 65535:
        raise fail(f"port={port}; legal: 1..65535")
    _check_listen(host, port)
    _need_web_extra()
    from shardplan.web.app import serve as run
    typer.echo(f"shardplan guide on http://{host}:{port}/ (Ctrl+C to stop)")
    run(host=host, port=port, debug=debug)


OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="HTML file, or PNG stem")]
FormatOpt = Annotated[Optional[str], typer.Option("--format", help="html (self-contained) | png (one per chart); "
                                                   "default: png for an -o ending in .png, else html")]
PlansOpt = Annotated[bool, typer.Option("--plans/--no-plans", help="add the ranked layouts of `shardplan plan`")]


def _ranked(e, devices: int) -> list | None:
    """The top 10 layouts for the estimate's specs, or None (with a warning) when the search fails."""
    from shardplan.search import search
    try:
        return search(e.model, e.hardware, e.training, devices, top_k=10).plans
    except ConfigError as err:  # the report of a valid layout does not need the ranking
        typer.echo(f"warning: no ranked layouts: {err}", err=True)
        return None


def provenance(e, output: Path, inputs: dict) -> list[str]:
    """The report's footer lines: the shardplan version and the UTC time it was written, and the ``shardplan report``
    command with the model, hardware, batch and every layout flag that writes it again
    (:func:`shardplan.export.reproduce_command`; ``inputs``: the model / hardware / framework as typed)."""
    import datetime

    from shardplan import __version__
    from shardplan.export import reproduce_command
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [f"shardplan {__version__}, {when}",
            "reproduce: " + reproduce_command("report", e, output, inputs, command="shardplan report")]


@app.command()
@config_errors
@layout_flags
def report(model: ModelOpt, hardware: HardwareOpt, devices: PlanDevicesOpt = None, seq_len: PlanSeqOpt = None,
           global_batch: BatchOpt = None, global_batch_tokens: BatchTokOpt = None,
           precision: PrecisionOpt = None, attention: AttnOpt = None,
           framework: FrameworkOpt = None, dropout: DropoutOpt = False,
           optimizer_dtype: OptimizerDtypeOpt = None,
           moe_capacity_factor: MoeCapOpt = None, moe_imbalance: MoeImbOpt = 1.0, moe_routing: MoeRoutingOpt = "uniform",
           scale_up_size: ScaleUpOpt = None, plan: PlanOpt = None, output: OutputOpt = Path("report.html"),
           fmt: FormatOpt = None, plans: PlansOpt = True, layout: dict = None) -> None:
    """Write a report of one layout (same flags as `estimate`): charts + summary, HTML or PNG."""
    if str(output) == "-":
        raise ConfigError("report writes files (an HTML page or PNG charts), not stdout: give -o NAME.html or NAME.png",
                          field="output", value="-")
    from shardplan.cli.common import check_output_path
    # a folder first: the suffix error's "--format html" then failed on it (breaker pass 57)
    check_output_path("-o/--output", output)  # nothing is created: a missing folder is bad input
    if fmt is None:  # the file name says which: report.png -> PNG charts (report_time.png, ...)
        if output.suffix.lower() not in (".html", ".htm", ".png"):
            raise ConfigError(f"-o {output}: the name ends in neither .html nor .png, so it does not say what to write "
                              "(an HTML page, or PNG charts); legal: -o NAME.html, -o NAME.png, or --format html / png",
                              field="output", value=str(output), legal=[".html", ".png"])
        fmt = "png" if output.name.lower().endswith(".png") else "html"
    fmt = fmt.lower()
    if fmt == "html" and output.name.lower().endswith(".png"):
        typer.echo(f"warning: --format html writes an HTML page to {output} (a .png name); PNG charts: --format png",
                   err=True)
    if fmt not in ("html", "png"):
        raise ConfigError(f"--format {fmt!r}; legal: html, png", field="format", value=fmt, legal=["html", "png"])
    _need_web_extra()
    e = estimate_layout(dict(model=model, hardware=hardware, devices=devices, seq_len=seq_len,
                             global_batch=global_batch, global_batch_tokens=global_batch_tokens, precision=precision,
                             attention=attention, framework=framework, dropout=dropout,
                             optimizer_dtype=optimizer_dtype, moe_capacity_factor=moe_capacity_factor,
                             moe_imbalance=moe_imbalance, moe_routing=moe_routing, scale_up_size=scale_up_size,
                             plan=plan),
                        layout)
    print_estimate_notes(e)
    from shardplan.cli.common import stages
    with stages("report", 3 if plans else 2) as step:
        ranked = None
        if plans:
            step("ranking layouts")
            ranked = _ranked(e, e.layout.n_devices)
        step("loading plotly")
        from shardplan.web import report as rep
        step("writing the charts")
        if fmt == "html":
            # a negative result's reasons lead the notes (new-user pass 57: the report of a layout that does not fit
            # lacked the "it fits with --recompute selective" line the terminal prints)
            # and the peak band and roofline lines estimate prints (the report had neither)
            from shardplan.cli.estimate import _roofline_line, negative_reasons, peak_band_text
            written = [rep.write_html(e, output, ranked, negative_reasons(e) + estimate_notes(e)
                                      + [peak_band_text(e), _roofline_line(e)],
                                      provenance(e, output, dict(model=model, hardware=hardware, framework=framework,
                                                                 scale_up_size=scale_up_size)))]
        else:
            written = list(rep.write_png(e, output.with_suffix("") if output.suffix else output, ranked))
    for path in written:
        typer.echo(f"wrote {path}")
    from shardplan.cli.estimate import raise_if_negative
    raise_if_negative(e)
