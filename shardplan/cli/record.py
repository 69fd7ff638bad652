"""``shardplan record import``: a CSV of measured runs -> run records (JSON Lines)."""

from collections import Counter
from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from shardplan.cli.common import app, check_output_path, config_errors, console, err_console

record_app = typer.Typer(no_args_is_help=True, help="Run records: import measured runs for `shardplan calibrate`.")
app.add_typer(record_app, name="record")

CsvArg = Annotated[Path, typer.Argument(help="CSV of measured runs, header row first")]


class RecordFormat(str, Enum):
    """Input formats of ``record import``."""

    csv = "csv"


FormatOpt = Annotated[RecordFormat, typer.Option("--format", help="input format")]
MapOpt = Annotated[Optional[List[str]], typer.Option(
    "--map", help="a mapping file (YAML/JSON: columns, constants, values, missing_status) or field=column "
                  "expression, e.g. tokens_per_s_per_device=tok_s_gpu or peak_memory_bytes='gpu_mem_gb * 1e9'; "
                  "repeat it")]
SetOpt = Annotated[Optional[List[str]], typer.Option("--set", help="field=value for every row, e.g. seq_len=4096; "
                                                     "repeat it")]
OutOpt = Annotated[Path, typer.Option("--output", "-o", help="records file to write (JSON Lines)")]
AppendOpt = Annotated[bool, typer.Option("--append", help="add to the records file instead of replacing it")]


def unread_note(csv_file: Path, mapping) -> None:
    """Say on stderr which columns of the CSV no field or --map reads (:func:`shardplan.record_import.unread_columns`)."""
    from rich.markup import escape

    from shardplan.cli.common import err_console
    from shardplan.record_import import replaced_columns, unread_columns_note
    note = unread_columns_note(csv_file, mapping)
    if note:
        err_console.print(f"[yellow]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    for col in replaced_columns(csv_file, mapping):
        err_console.print(f"[yellow]note:[/] --set {escape(col)}={escape(str(mapping.constants[col]))} replaces the "
                          f"{escape(col)} column of {escape(csv_file.name)} on every row", highlight=False,
                          soft_wrap=True)


def _existing_lines(path: Path) -> int:
    """Non-empty, non-comment lines of an existing regular file at ``path``, counted in its first
    :data:`~shardplan.records.MAX_RECORDS_BYTES` (0 when there is none, it is a device such as /dev/zero, or it
    cannot be read: a breaker's ``-o /dev/zero`` was read whole until memory ran out)."""
    from shardplan.records import MAX_RECORDS_BYTES
    p = Path(path)
    try:
        if not p.is_file():
            return 0
        with p.open("rb") as f:
            data = f.read(MAX_RECORDS_BYTES)
    except OSError:
        return 0
    return sum(1 for ln in data.decode("utf-8", errors="replace").splitlines()
               if ln.strip() and not ln.lstrip().startswith("#"))


def absolute_paths(record):
    """``record`` (a RunRecord) with its model, hardware and framework written as absolute paths where they name a file
    relative to the current folder (``--set model=inputs/config.json``), so that ``calibrate`` run from another
    folder reads the same files (new-user pass 56: "file not found", relative to where unsaid); names of presets and
    paths that are not files are kept."""
    update = {}
    for field in ("model", "hardware", "framework"):
        value = getattr(record, field, None)
        if isinstance(value, str) and "+" not in value:
            path = Path(value)
            try:
                if not path.is_absolute() and path.is_file():
                    update[field] = str(path.resolve())
            except OSError:  # a name too long for a path is a preset name or bad input, checked where it is read
                pass
    return record.model_copy(update=update) if update else record


@record_app.command("import")
@config_errors
def import_(csv_file: CsvArg, output: OutOpt, format: FormatOpt = RecordFormat.csv, map: MapOpt = None,
            set: SetOpt = None, append: AppendOpt = False) -> None:
    """Turn a CSV of measured runs into run records (docs/calibration.md, "Importing a table of runs")."""
    from shardplan.record_import import import_csv, parse_map_items
    from shardplan.records import check_records_target, write_records

    check_output_path("-o/--output", output, inputs={"CSV": csv_file})
    if append:
        check_records_target("-o/--output", output)
    mapping = parse_map_items(list(map or []), list(set or []))
    records = [absolute_paths(r) for r in import_csv(csv_file, mapping)]
    unread_note(csv_file, mapping)
    replaced = _existing_lines(output) if not append else 0
    n = write_records(output, records, append=append)
    if replaced:  # the docs name train --record's file and this one alike (runs.jsonl): say what was replaced
        err_console.print(f"[yellow]note:[/] {escape(str(output))} held {replaced} line(s), now replaced; --append "
                          "adds to a records file instead", highlight=False, soft_wrap=True)
    counts = Counter(r.status for r in records)
    # the path goes in a line of its own: a table title wraps at the table's width (new-user pass 55: ~20 columns)
    console.print(f"{n} run records {'added to' if append else 'written to'} {escape(str(output))}", highlight=False,
                  soft_wrap=True)
    t = Table(title="records by status")
    for col in ("status", "records"):
        t.add_column(col)
    for status in ("ok", "oom", "failed"):
        t.add_row(status, str(counts.get(status, 0)))
    console.print(t)
    missing = sorted({r.framework for r in records if r.framework and r.framework.lower().endswith((".yaml", ".yml", ".json"))
                      and not Path(r.framework).exists()})
    for name in missing:  # a record names a profile file that is read when the record is used (calibrate)
        console.print(f"note: framework profile file {name} does not exist here; `shardplan calibrate` reads it "
                      "when it uses these records")
