"""Regenerate the per-layer collective schedules in docs/cost_model.md from shardplan/cost/axes.

Usage: python benchmarks/cost_tables.py
"""

from pathlib import Path

from shardplan.cost.axes.tables import replace_block

DOC = Path(__file__).resolve().parents[1] / "docs" / "cost_model.md"

if __name__ == "__main__":
    DOC.write_text(replace_block(DOC.read_text()))
    print(f"wrote {DOC}")
