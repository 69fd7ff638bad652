"""``shardplan serve`` (interactive Dash guide) and ``shardplan report`` (static HTML / PNG report).

Registered by :func:`shardplan.cli._register_optional`. No ``from __future__ import annotations``
here: typer must see the option types imported inside :func:`register` when it reads the
signatures. plotly, dash and matplotlib (the ``web``
extra) are imported only inside the commands, so the CLI and the core planner work without them.
"""

from pathlib import Path
from typing import Annotated

import typer


def _need_web_extra() -> None:
    """Exit with a one-line message if the ``web`` extra is missing."""
    import importlib.util
    missing = [m for m in ("plotly", "dash", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        typer.echo(f"error: {', '.join(missing)} not installed; pip install 'shardplan[web]'", err=True)
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the ``serve`` and ``report`` commands to the shardplan typer ``app``."""
    from shardplan.cli import (AttnOpt, BatchOpt, BatchTokOpt, CpOpt, DevicesOpt, DpOpt, DpShardOpt, EpOpt,
                               HardwareOpt, MbsOpt, ModelOpt, PlanOpt, PpOpt, PrecisionOpt, RecOpt, ScaleUpOpt,
                               SchedOpt, SeqOpt, SpOpt, TpOpt, VsOpt, ZeroOpt, config_errors,
                               estimate_from_flags)

    @app.command()
    def serve(host: Annotated[str, typer.Option(help="interface to bind (default: local only)")] = "127.0.0.1",
              port: Annotated[int, typer.Option(help="TCP port")] = 8050,
              debug: Annotated[bool, typer.Option(help="Dash debug mode (reloader, dev tools)")] = False) -> None:
        """Start the interactive guide: a local Dash app with live charts of the planner."""
        if not 1 <= port <= 65535:
            from shardplan.cli import err_console
            err_console.print(f"[bold red]error:[/] port={port}; legal: 1..65535")
            raise typer.Exit(2)
        _need_web_extra()
        from shardplan.web.app import serve as run
        typer.echo(f"shardplan guide on http://{host}:{port}/ (Ctrl+C to stop)")
        run(host=host, port=port, debug=debug)

    @app.command()
    @config_errors
    def report(model: ModelOpt, hardware: HardwareOpt, devices: DevicesOpt, seq_len: SeqOpt,
               global_batch: BatchOpt = None, global_batch_tokens: BatchTokOpt = None,
               dp: DpOpt = None, tp: TpOpt = None, pp: PpOpt = None, cp: CpOpt = None, ep: EpOpt = None,
               zero_stage: ZeroOpt = None, dp_shard: DpShardOpt = None, sp: SpOpt = None,
               microbatch_size: MbsOpt = None, schedule: SchedOpt = None, virtual_stages: VsOpt = None,
               recompute: RecOpt = None, precision: PrecisionOpt = "bf16-mixed", attention: AttnOpt = "flash",
               scale_up_size: ScaleUpOpt = None, plan: PlanOpt = None,
               output: Annotated[Path, typer.Option("--output", "-o", help="HTML file, or PNG stem")] = Path(
                   "report.html"),
               fmt: Annotated[str, typer.Option("--format",
                                                help="html (self-contained) | png (one per chart)")] = "html",
               plans: Annotated[bool, typer.Option("--plans/--no-plans",
                                                   help="add the ranked layouts of `shardplan plan`")] = True) -> None:
        """Write a report of one layout (same flags as `estimate`): charts + summary, HTML or PNG."""
        from shardplan.errors import ConfigError
        if fmt not in ("html", "png"):
            raise ConfigError(f"--format {fmt!r}; legal: html, png", field="format", value=fmt, legal=["html", "png"])
        _need_web_extra()
        e = estimate_from_flags(locals())
        ranked = None
        if plans:
            try:
                from shardplan.search import search
            except ModuleNotFoundError:  # pragma: no cover
                search = None
            if search is not None:
                try:
                    ranked = search(e.model, e.hardware, e.training, devices, top_k=10).plans
                except ConfigError as err:  # the report of a valid layout does not need the ranking
                    typer.echo(f"warning: no ranked layouts: {err}", err=True)
        from shardplan.web import report as rep
        if fmt == "html":
            path = rep.write_html(e, output, ranked)
            typer.echo(f"wrote {path}")
        else:
            stem = output.with_suffix("") if output.suffix else output
            for path in rep.write_png(e, stem, ranked):
                typer.echo(f"wrote {path}")
