"""``python -m shardplan.cli``: the CLI (same as ``python -m shardplan``)."""

from shardplan.cli import app

app()
