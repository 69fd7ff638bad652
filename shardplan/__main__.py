"""`python -m shardplan`: the CLI."""

from shardplan.cli import app

app()
