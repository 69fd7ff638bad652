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

__all__ = ["app"]
