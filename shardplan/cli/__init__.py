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

__all__ = ["app"]
