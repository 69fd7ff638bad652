"""Command-line interface: ``shardplan estimate | plan | guide | export | import | record import | calibrate | models | hardware | serve |
report | shardings | train | validate``.

Built on typer (arguments) and rich (tables). One module per command (or pair of commands), each
registering module-level functions on :data:`app` (defined in :mod:`shardplan.cli.common`). The
layout flags of every command that takes a layout are generated from
:class:`~shardplan.parallel.ParallelConfig` (:func:`shardplan.cli.common.layout_flags`); the
names, paths and flag values become specs in :mod:`shardplan.inputs`.

Exit codes: 0 ok, 1 a negative result (no layout fits, outside tolerance), 2 bad input (a :class:`~shardplan.errors.ConfigError` printed as one line on
stderr, no traceback). Importing this package loads neither JAX nor the ``web`` extra.
"""

from shardplan.cli import bench, calibrate, estimate, export, presets, plan, record, web, shardings, train, validate  # noqa: F401  (registers)
from shardplan.cli.common import app


def _one_line_summaries() -> None:
    """The commands list of ``shardplan --help`` shows each command's first docstring paragraph; typer
    keeps its hard line breaks there, so give every command that paragraph on one line as its
    ``short_help`` (``shardplan COMMAND --help`` still shows the whole docstring as written)."""
    import inspect
    for info in app.registered_commands:
        doc = inspect.getdoc(info.callback) or ""
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.split("\n\n")[0].split())


_one_line_summaries()


def _plain_help_below(columns: int = 120) -> None:
    """rich's help panels give the option names a fixed share of the width and cut longer ones below about
    120 columns (``--zero-stage,--z…``, ``--microbatch-siz…`` at 80, or when the help is piped); there a
    command's ``--help`` prints click's plain help instead, every flag in full and its text wrapped. Errors
    keep rich's one-line form."""
    import shutil
    from typing import Any

    from typer.core import TyperCommand

    class NarrowHelpCommand(TyperCommand):
        """A typer command whose ``--help`` is click's plain format on a terminal narrower than ``columns``."""

        def format_help(self, ctx: Any, formatter: Any) -> None:
            if shutil.get_terminal_size(fallback=(80, 24)).columns < columns:
                # the click Command that TyperCommand extends (typer vendors click: no separate import)
                return super(TyperCommand, self).format_help(ctx, formatter)
            return super().format_help(ctx, formatter)

    for info in [*app.registered_commands, *(c for g in app.registered_groups for c in g.typer_instance.registered_commands)]:
        if info.cls in (None, TyperCommand):
            info.cls = NarrowHelpCommand


_plain_help_below()

__all__ = ["app"]
