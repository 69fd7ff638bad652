"""Turn a CSV of measured runs into run records (issue 10): ``shardplan record import``.

A table of runs rarely uses shardplan's field names or units, so the import takes a *mapping*
(:class:`CsvMapping`, a small YAML/JSON file or ``--map`` / ``--set`` flags):

* ``columns``: record field -> CSV column, or columns and numbers joined by ``*`` and ``/``:
  ``"tok_s_gpu"``, ``"gpu_mem_gb * 1e9"``, ``"nodes * 8"``, ``"step_ms / 1000"``, ``"dp * mbs * grad_acc"``. Fields are those of
  :class:`~shardplan.records.RunRecord` and every :class:`~shardplan.parallel.ParallelConfig` field
  (they go into the record's ``parallel``). A column whose name is already a field name is taken
  without being mapped.
* ``constants``: field -> value for every row (``seq_len: 4096``, ``hardware: my-cluster.yaml``).
* ``values``: field -> {CSV text: record value}, e.g. ``model: {1B: llama-3.2-1b}`` (a value may
  be an inline model spec mapping).
* ``status``: how a row's outcome is read. With a ``status`` column, its text is matched
  case-insensitively (``ok``/``success``/``passed``/``finished``/``ran``/``true``/``1`` ... -> ok, anything with
  ``oom`` or ``out of memory`` -> oom, the rest -> failed; a text that is neither an ok word nor a failure word
  (``fail``, ``error``, ``crash``, ``timeout`` ...) on a row that measured the run is refused, so that a typo does not
  drop the measurement). Without one, a row with a measured throughput or
  step time ran (``ok``) and a row without is ``missing_status`` (default ``failed``: most tables do
  not say why a run did not finish).

Nothing is evaluated: a column expression is names and numbers joined by ``*`` and ``/``. ``sp`` and
``tp_overlap`` are dropped on rows with tp = 1 (a table that sets them for every run means "with tensor
parallelism"; Megatron-LM's arguments.py turns sequence parallelism off at tp = 1 the same way).
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shardplan.errors import ConfigError, short_repr
from shardplan.loaders import _read_mapping, config_error, read_text_capped
from shardplan.parallel import ParallelConfig
from shardplan.records import RunRecord

#: record fields a mapping may name (the layout's fields go into ``parallel``)
RECORD_FIELDS = tuple(f for f in RunRecord.model_fields if f != "parallel")
LAYOUT_FIELDS = tuple(ParallelConfig.model_fields)
FIELDS = RECORD_FIELDS + LAYOUT_FIELDS
#: fields that hold whole numbers (a CSV's "8.0" becomes 8)
_INT_FIELDS = {"devices", "seq_len", "global_batch_size"} | {
    f for f, info in ParallelConfig.model_fields.items() if info.annotation is int or int in get_args(info.annotation)}
#: fields that hold switches: only their cells read true / false / yes / no as booleans (a `--set source=no` or a
#: model named "yes" stays text, breaker pass 54)
_BOOL_FIELDS = {f for model in (ParallelConfig, RunRecord) for f, info in model.model_fields.items()
                if info.annotation is bool or bool in get_args(info.annotation)}
#: layout fields that hold lists: a cell's items are joined by commas, semicolons or spaces ("8,8", "[mlp, moe]")
_LIST_FIELDS = {f for f, info in ParallelConfig.model_fields.items() if "tuple" in str(info.annotation)}
_OK_WORDS = {"ok", "success", "succeeded", "successful", "ran", "true", "yes", "1", "done", "completed", "complete",
             "finished", "passed", "pass"}
#: parts of a status text that say a run failed for a reason other than memory
_FAILED_PARTS = ("fail", "error", "crash", "timeout", "timed out", "hang", "kill", "abort", "nan", "diverg", "exception")
_FAILED_WORDS = {"no", "false", "0", "", "-", "x"}
#: an out-of-memory word of a status text: OOM (OOMed, OOMs) as a word, or "out of memory" ("zoom" is none)
_OOM_WORD = r"(?:\boom(?:ed|s)?\b|\bout[\s_-]of[\s_-]memory\b)"
#: a status text that denies running out of memory ("ok - no OOM errors", "without OOM", "not out of memory", "didn't
#: OOM", "never OOMed", "oom: no", "OOM=0"), with a trailing errors / issues / failures word it negates too
_NO_OOM = re.compile(r"\b(?:no|not|non|without|w/o|never|didn'?t|did\s+not)[\s_-]*(?:an?\s+|any\s+)?" + _OOM_WORD
                     + r"(?:[\s_-]*(?:errors?|issues?|problems?|failures?|crash(?:es)?|events?))?"
                     + r"|" + _OOM_WORD + r"\s*[:=]\s*(?:no|none|false|0)\b")


class CsvMapping(BaseModel):
    """How the columns of a CSV of runs become :class:`~shardplan.records.RunRecord` fields (module
    docstring). Raises ConfigError (via :func:`check_mapping`) for an unknown field name."""

    model_config = ConfigDict(extra="forbid")

    columns: dict[str, str] = Field(default_factory=dict)
    constants: dict[str, Any] = Field(default_factory=dict)
    values: dict[str, dict[str, Any]] = Field(default_factory=dict)
    missing_status: Literal["ok", "oom", "failed"] = "failed"


def check_mapping(mapping: CsvMapping) -> None:
    """Every field the mapping names is a record or layout field.

    Raises:
        ConfigError: naming the unknown field and the legal ones.
    """
    for where in ("columns", "constants", "values"):
        for f in getattr(mapping, where):
            if f not in FIELDS:
                raise ConfigError(f"{where}: {short_repr(f)} is not a record field; legal: {', '.join(FIELDS)}",
                                  field=f"map.{where}", value=f, legal=list(FIELDS))


def parse_map_items(items: list[str], sets: list[str]) -> CsvMapping:
    """A mapping from CLI items: each ``--map`` item is a YAML/JSON mapping file or
    ``field=column[*|/ number]``; each ``--set`` item is ``field=value`` (a number when it parses as
    one). Later items override earlier ones (a ``field=`` item over a mapping file's entry, a mapping file's entry over
    an earlier item; a column and a constant of one field do not both stay), but one flag naming
    a field twice (``--set seq_len=4096 --set seq_len=2048``) is a typo, not an override, and so is a field given by
    both a ``--map field=COLUMN`` item and a ``--set`` item.

    Raises:
        ConfigError: an item without ``=``, an unreadable file, an unknown field, a field given twice by one flag, or
            by ``--map field=COLUMN`` and ``--set`` both.
    """
    doc: dict[str, Any] = {"columns": {}, "constants": {}, "values": {}}
    flag_columns: dict[str, str] = {}  # field -> the --map field=COLUMN item that maps it
    for item in items:
        p = Path(item)
        if "=" not in item and p.suffix.lower() in (".yaml", ".yml", ".json"):
            data = _read_mapping(p, "--map")
            try:
                part = CsvMapping.model_validate(data)
            except ValidationError as e:
                raise config_error(e, f"--map {p}") from None
            for field, col in part.columns.items():  # later wins: a file's column over an earlier constant
                doc["constants"].pop(field, None)
                doc["columns"][field] = col
                flag_columns.pop(field, None)
            for field, value in part.constants.items():  # and a file's constant over an earlier column
                doc["columns"].pop(field, None)
                doc["constants"][field] = value
                flag_columns.pop(field, None)
            doc["values"].update(part.values)
            if "missing_status" in data:
                doc["missing_status"] = part.missing_status
            continue
        field, col = _split_item(item, "--map", "field=column, e.g. tokens_per_s_per_device=tok_s_gpu")
        _once(field, "--map", items)
        doc["constants"].pop(field, None)  # over an earlier map file's constant: the later item wins
        doc["columns"][field] = col
        flag_columns[field] = item
    for item in sets:
        field, value = _split_item(item, "--set", "field=value, e.g. seq_len=4096")
        _once(field, "--set", sets)
        if field in flag_columns:  # both flags for one field: one of them is a mistake (breaker pass 54)
            raise ConfigError(f"--map {flag_columns[field]} and --set {item} both give {field}; legal: one of them (a "
                              "column's value per row, or one value for every row)", field=field,
                              value=[flag_columns[field], item])
        doc["columns"].pop(field, None)  # over a mapping file's column: the constant is what is read
        doc["constants"][field] = _number_or_text(value)
    mapping = CsvMapping.model_validate(doc)
    check_mapping(mapping)
    return mapping


def _once(field: str, flag: str, items: list[str]) -> None:
    """Refuse ``flag`` naming ``field`` in more than one of its ``field=...`` items.

    Raises:
        ConfigError: naming the flag, the field and its values.
    """
    given = [i for i in items if "=" in i and i.partition("=")[0].strip() == field]
    if len(given) > 1:
        raise ConfigError(f"{flag} gives {field} {len(given)} times ({', '.join(given)}); legal: once", field=field,
                          value=given)


def _split_item(item: str, flag: str, form: str) -> tuple[str, str]:
    """``field=rest`` of one flag value.

    Raises:
        ConfigError: no ``=`` or an empty side.
    """
    field, sep, rest = item.partition("=")
    if not sep or not field.strip() or not rest.strip():
        raise ConfigError(f"{flag} {short_repr(item)} is not {form}", field=flag.lstrip("-"), value=item)
    return field.strip(), rest.strip()


def _number_or_text(text: str) -> Any:
    """``text`` as an int, else a float, else as it is."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _expression_parts(expr: str, columns: list[str] | tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """(terms, operators) of a column expression: ``"dp * mbs / 2"`` -> (['dp', 'mbs', '2'], ['*', '/']). A column
    of ``columns`` whose name holds ``*`` or ``/`` (``tok/s``) stays one term (``"tok/s * 1000"`` -> (['tok/s',
    '1000'], ['*']))."""
    text, names = expr.strip(), {}
    for i, name in enumerate(sorted((c for c in columns if re.search(r"[*/]", c) and c in expr), key=len,
                                    reverse=True)):
        key = f"\x00{i}\x00"
        names[key] = name
        text = text.replace(name, key)
    parts = [names.get(p, p) for p in re.split(r"\s*([*/])\s*", text)]
    return parts[::2], parts[1::2]


def _column_value(expr: str, row: dict[str, str], header: list[str], line: int) -> float | str | None:
    """The value of a column expression in one row: a column name, or columns and numbers joined by
    ``*`` and ``/`` (``gpu_mem_gb * 1e9``, ``dp * mbs * grad_acc``); None when a cell it reads is empty.

    Raises:
        ConfigError: an unknown column (names the CSV's columns), a cell of a product that is not a
            number, a division by zero or a result that is not finite.
    """
    if expr.strip() in row:  # a plain column (its name may itself hold '*' or '/')
        terms, ops = [expr.strip()], []
    else:
        terms, ops = _expression_parts(expr, header)
    if any(not t.strip() for t in terms):  # 'nodes ** 8', 'nodes *': an operator without a term on one side
        raise ConfigError(f"{short_repr(expr)} has an operator without a column or number on one side; legal: "
                          "columns and numbers joined by single * and / (e.g. nodes * 8, step_ms / 1000)",
                          field="map.columns", value=expr)
    values: list[str] = []
    for t in terms:
        if t in row:
            cell = (row[t] or "").strip()
            if cell == "" or cell.lower() in ("nan", "na", "n/a", "none", "-"):
                return None
            values.append(cell)
        elif not isinstance(_number_or_text(t), str):  # a number
            values.append(t)
        else:
            ops_hint = (" (a column expression joins columns and numbers with * and / only)"
                        if re.search(r"[-+()%^]", t) else "")
            if len(header) == 1 and re.search(r"[;\t|]", header[0]):  # another delimiter read as one column
                ops_hint += " (the header is one column: the file is not comma-separated; save it as CSV with commas)"
            raise ConfigError(f"column {short_repr(t)} is not in the CSV{ops_hint}; its columns: {', '.join(header)}",
                              field="map.columns", value=t, legal=header)
    if not ops:
        return values[0]
    bad = [(t, v) for t, v in zip(terms, values) if isinstance(_number_or_text(v), str)]
    if bad:
        verb = "divides" if ops == ["/"] else "multiplies" if set(ops) == {"*"} else "computes with"
        cells = ", ".join(f"column {t} = {short_repr(v)}" for t, v in bad)
        raise ConfigError(f"line {line}: {short_repr(expr)} {verb} a cell that is not a number ({cells}); legal: "
                          "plain numbers (no units or suffixes such as '7.6k')", field="csv", value=expr)
    nums = [float(v) for v in values]
    x = nums[0]
    for op, y in zip(ops, nums[1:]):
        if op == "/" and y == 0:
            raise ConfigError(f"line {line}: {short_repr(expr)} divides by zero ({', '.join(map(short_repr, values))})",
                              field="csv", value=expr)
        x = x * y if op == "*" else x / y
    if not math.isfinite(x):
        raise ConfigError(f"line {line}: {short_repr(expr)} = {x} is not a finite number", field="csv", value=expr)
    return x


def _status(text: Any, measured: bool = False, line: int = 0) -> str:
    """'ok', 'oom' or 'failed' of a status cell (module docstring).

    A text that denies an OOM ("ok - no OOM", "without oom": :data:`_NO_OOM`) is read without that phrase.

    Raises:
        ConfigError: a text that is none of the words read (ok, out of memory or a failure word) on a row that
            measured a throughput or step time: 'passed ', 'sucess' would be read as failed and the measurement
            dropped (a breaker's 5,153 tokens/s vanished with exit 0); an out-of-memory status on such a row.
    """
    t = str(text).strip().lower()
    negated = _NO_OOM.sub(" ", t)
    if negated != t:  # "ok - no OOM", "without oom": the run did not run out of memory; read what is left
        t = " ".join(re.sub(r"[^a-z0-9 ]+", " ", negated).split()) or "ok"
    if re.search(_OOM_WORD, t):
        if measured:  # RunRecord refuses an oom record with a measured outcome: say which line, not a dropped figure
            raise ConfigError(f"line {line}: status={short_repr(text)} says the run ran out of memory, but the row "
                              "measured a throughput or step time; legal: a status of a run that ran (ok) on a "
                              "measured row, or an empty measurement on an oom row; or translate the column with a "
                              "values table (map file: values: {status: {TEXT: ok}})", field="status", value=text,
                              legal=sorted(_OK_WORDS))
        return "oom"
    if t in _OK_WORDS:
        return "ok"
    if measured and t not in _FAILED_WORDS and not any(part in t for part in _FAILED_PARTS):
        raise ConfigError(f"line {line}: status={short_repr(text)} is not a word the import reads, and the row "
                          f"measured the run; legal: {', '.join(sorted(_OK_WORDS))} (ran), anything with oom or 'out "
                          "of memory' (ran out of memory), or a failure word (failed, error, crash, timeout, ...); or "
                          "translate the column with a values table (map file: values: {status: {TEXT: ok}})",
                          field="status", value=text, legal=sorted(_OK_WORDS))
    return "failed"


def _typed(field: str, value: Any, line: int) -> Any:
    """A cell converted for its field: whole numbers for counts and degrees, floats for measures,
    booleans for switches, comma lists for the list fields (``pp_layers``: of whole numbers); text stays text.

    Raises:
        ConfigError: a count, or an item of ``pp_layers``, that is not a whole number (names the line, the
            field and the value).
    """
    if isinstance(value, (str, int, float)) and field in _LIST_FIELDS:
        items = [v for v in re.split(r"[,\s;]+", str(value).strip("[]() ")) if v]
        return [_whole(field, v, value, line) for v in items] if field == "pp_layers" else items
    if not isinstance(value, (str, int, float)):
        return value
    if field in _INT_FIELDS:
        return _whole(field, value, value, line)
    if isinstance(value, str) and field in _BOOL_FIELDS and value.strip().lower() in ("true", "false", "yes", "no"):
        return value.strip().lower() in ("true", "yes")
    return _number_or_text(value) if isinstance(value, str) else value


def _whole(field: str, item: Any, value: Any, line: int) -> Any:
    """``item`` (``value`` itself, or one item of the list ``value``) as an int when it is a whole number
    (``8``, ``"8.0"``); text that is not a number is returned for pydantic to name (count fields).

    Raises:
        ConfigError: a number that is not whole or not finite, a switch (true/false) given for a count, or an
            item of ``pp_layers`` that is not a number.
    """
    listed = field in _LIST_FIELDS
    legal = ("legal: whole numbers joined by commas, one per pipeline stage (layers per stage), e.g. '16,16'"
             if listed else "legal: a whole number")
    what = f": its item {short_repr(item)} is not a whole number" if listed else " is not a whole number"
    bad = ConfigError(f"line {line}: {field}={short_repr(value)}{what}; {legal}", field=field, value=value)
    if isinstance(item, bool):
        raise bad
    if isinstance(item, int):
        return item
    try:
        x = float(item)
    except (ValueError, OverflowError):
        if listed:
            raise bad from None
        return item  # pydantic names the field and the value
    if not math.isfinite(x) or x != int(x):
        raise bad
    return int(x)


def _row_fields(row: dict[str, str], header: list[str], mapping: CsvMapping, line: int) -> dict[str, Any]:
    """Field -> value of one CSV row: identical column names, then the mapping's columns (values
    translated by ``values``), then the constants."""
    out: dict[str, Any] = {c: row[c].strip() for c in header if c in FIELDS and (row[c] or "").strip()}
    for field, expr in mapping.columns.items():
        v = _column_value(expr, row, header, line)
        if v is None:
            out.pop(field, None)
        else:
            out[field] = v
    for field, table in mapping.values.items():
        v = out.get(field)
        if isinstance(v, str):
            if v not in table:
                raise ConfigError(f"line {line}: {field} value {short_repr(v)} has no entry in values.{field}; "
                                  f"its entries: {', '.join(map(str, table))}", field=f"map.values.{field}",
                                  value=v, legal=list(table))
            out[field] = table[v]
    out.update(mapping.constants)
    return {f: _typed(f, v, line) for f, v in out.items()}


def row_record(fields: dict[str, Any], mapping: CsvMapping, line: int, source: str) -> RunRecord:
    """One :class:`RunRecord` from a row's fields: layout fields into ``parallel``, the status from
    its cell or from whether a throughput was measured (module docstring).

    Raises:
        ConfigError: a row that is not a valid record (names the line and the field).
    """
    layout = {f: v for f, v in fields.items() if f in LAYOUT_FIELDS}
    if layout.get("tp", 1) == 1:  # as Megatron-LM does (arguments.py): no sequence parallelism, nor
        layout.pop("sp", None)     # tp communication overlap, without tensor parallelism
        layout.pop("tp_overlap", None)
    rec = {f: v for f, v in fields.items() if f in RECORD_FIELDS}
    measured = rec.get("tokens_per_s_per_device") is not None or rec.get("step_time_s") is not None
    rec["status"] = (_status(rec["status"], measured, line) if "status" in rec
                     else ("ok" if measured else mapping.missing_status))
    if rec["status"] != "ok":  # a run that did not finish has no throughput (a table may still list one)
        rec.pop("tokens_per_s_per_device", None)
        rec.pop("step_time_s", None)
    rec.setdefault("source", source)
    try:
        return check_device_count(RunRecord.model_validate({**rec, "parallel": layout}))
    except ValidationError as e:
        err = config_error(e, f"line {line}")
        if e.errors()[0]["type"] == "missing":  # a required record field that no column or constant gives
            f = err.field
            err = ConfigError(f"{err}; legal: a column named {f}, --map {f}=COLUMN or --set {f}=VALUE (a mapping "
                              "file's columns / constants)", field=f, value=None)
        raise _from_columns(err, mapping) from None
    except ConfigError as e:
        raise _from_columns(ConfigError(f"line {line}: {e}", field=e.field, value=e.value), mapping) from None


def check_device_count(record: RunRecord) -> RunRecord:
    """``record`` when its layout's degrees fit its device count: dp x tp x pp x cp = devices where the row gives
    dp, else tp x pp x cp divides devices (dp is then devices over it, as ``shardplan estimate`` sets it). A row
    that breaks it ran on another layout than the one it names; refused at import (with its line) rather than
    left out of a later fit. Example: dp 16, tp 1, pp 2 on 16 devices is 32 devices: legal dp 8.

    Raises:
        ConfigError: the degrees do not multiply to the device count (names the product and the legal dp; the
            caller adds the line)."""
    p, n = record.parallel, record.devices
    model_par = p.tp * p.pp * p.cp
    if p.dp is None and n % model_par:
        raise ConfigError(f"tp*pp*cp = {p.tp}*{p.pp}*{p.cp} = {model_par} does not divide devices={n}, so no dp "
                          f"fills the devices; legal: degrees whose product divides {n}", field="devices", value=n)
    if p.dp is not None and p.dp * model_par != n:
        legal = [n // model_par] if n % model_par == 0 else []
        raise ConfigError(f"dp*tp*pp*cp = {p.dp}*{p.tp}*{p.pp}*{p.cp} = {p.dp * model_par} devices, but devices={n}; "
                          f"legal dp for these degrees: {', '.join(map(str, legal)) or 'none'}", field="dp",
                          value=p.dp, legal=legal)
    return record


def _from_columns(e: ConfigError, mapping: CsvMapping) -> ConfigError:
    """``e`` with the CSV expression its field came from (``global_batch_size=0 (from the columns dp * mbs *
    grad_acc)``) when the mapping computes that field from columns, so the message names what to fix."""
    field = str(e.field or "").split(".")[-1]
    expr = mapping.columns.get(field)
    if expr is None or expr.strip() == field:
        return e
    return ConfigError(f"{e} (computed from the CSV columns {short_repr(expr)})", field=e.field, value=e.value,
                       legal=e.legal)


def _rows(reader: csv.DictReader, path: Path):
    """``(line, row)`` of every row of ``reader`` (the file's line: DictReader skips blank lines).

    Raises:
        ConfigError: a row the csv module cannot read (a cell longer than its field limit), naming the file and line.
    """
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise _unreadable(path, reader, e) from None
        yield reader.line_num, row


def _unreadable(path: Path, reader: csv.DictReader, e: csv.Error) -> ConfigError:
    """The error for a row the csv module refuses (``e``), naming the file and the line it stopped on."""
    where = f"{path}:{reader.reader.line_num}"  # the line it stopped on (DictReader's line_num is the last row's)
    if "new-line character" in str(e):  # a bare carriage return inside a cell (breaker pass 56: the legal part named
        legal = ("rows ending in \\n or \\r\\n, and a line break inside a cell only within double quotes (save "
                 "the file with Unix or Windows line endings)")  # the cell-size limit)
    else:
        legal = f"cells of at most {csv.field_size_limit():,} characters"
    return ConfigError(f"{where}: not a CSV row the import can read ({e}); legal: {legal}", field="csv", value=where)


def import_csv(path: str | Path, mapping: CsvMapping) -> list[RunRecord]:
    """Run records of every row of a CSV file (header row first) under ``mapping``.

    Raises:
        ConfigError: unreadable or empty file (at most :data:`~shardplan.loaders.MAX_FILE_BYTES`),
            a row the csv module cannot read (a cell over its field limit), an unknown field or column, or a
            row that is not a valid record (the message names the file and line, the field and the value).
    """
    check_mapping(mapping)
    p = Path(path)
    from shardplan.records import MAX_RECORDS_BYTES
    text = read_text_capped(p, "csv", MAX_RECORDS_BYTES, "a CSV file", "a table of measured runs is a few MiB at most: "
                            "drop the columns no --map names").removeprefix("\ufeff")  # a UTF-8 byte-order mark (Excel's CSV export)
    if text.lstrip().startswith(("{", "[")):  # JSON Lines (or a JSON document), not a table
        raise ConfigError(f"{short_repr(str(p))} holds JSON, not a CSV table: a records file (JSON Lines) needs no "
                          "import; give it to `shardplan calibrate` directly", field="csv", value=str(p))
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
    except csv.Error as e:
        raise _unreadable(p, reader, e) from None
    if not header:
        raise ConfigError(f"{short_repr(str(p))} has no header row", field="csv", value=str(p))
    if len(header) == 1 and re.search(r"[;\t|]", header[0]):  # another delimiter: the header reads as one column
        sep = next(c for c in ";\t|" if c in header[0])
        raise ConfigError(f"{short_repr(str(p))}: the header is one column ({short_repr(header[0])}): the file is "
                          f"not comma-separated (separated by {sep!r}); legal: a comma-separated file (save it as CSV "
                          "with commas)", field="csv", value=header[0])
    lower = [h.lower() for h in header]
    twice = sorted({h for h in header if lower.count(h.lower()) > 1})
    if twice:  # DictReader would keep only the last column of a repeated name
        raise ConfigError(f"{short_repr(str(p))}: the header names column(s) {', '.join(map(repr, twice))} more than once; "
                          "legal: each column name once", field="csv", value=twice)
    reader.fieldnames = header
    for h in header:  # a field's name in another case would be dropped as an unknown column
        field = next((f for f in FIELDS if f.lower() == h.lower()), None)
        if field is not None and h != field and field not in mapping.columns and field not in mapping.constants:
            raise ConfigError(f"{short_repr(str(p))}: column {h!r} is not the field {field!r} (names are case-sensitive); "
                              f"legal: rename the column to {field}, or map it: --map {field}={h}", field="csv", value=h,
                              legal=[field])
    out = []
    for line, row in _rows(reader, p):
        try:
            if None in row:  # more cells than the header names
                raise ConfigError(f"line {line}: the row has more cells than the header's {len(header)}; legal: one "
                                  "cell per header column (quote a cell that holds a comma)", field="csv", value=line)
            if any(v is None for v in row.values()):  # fewer: DictReader fills the missing ones with None
                cells = sum(v is not None for v in row.values())
                raise ConfigError(f"line {line}: the row has {cells} cells, the header {len(header)} (a truncated "
                                  "row?); legal: one cell per header column (an empty cell for a missing value)",
                                  field="csv", value=line)
            fields = _row_fields(row, header, mapping, line)
            out.append(row_record(fields, mapping, line, f"{p.name}:{line}").at(f"{p}:{line}"))
        except ConfigError as e:  # name the file with the line: "runs.csv:2: ..."
            raise ConfigError(f"{p}:{line}: {str(e).removeprefix(f'line {line}: ')}", field=e.field, value=e.value,
                              legal=e.legal) from None
    if not out:
        raise ConfigError(f"{short_repr(str(p))} has a header but no rows", field="csv", value=str(p))
    return out


def unread_columns(path: str | Path, mapping: CsvMapping) -> list[str]:
    """The header columns of the CSV at ``path`` that neither are a record field nor appear in a ``columns``
    expression of ``mapping`` (a column the import does not read: a new user's ``zero`` column was dropped without a
    word, and the runs were priced at the profile's default ZeRO stage). [] when the header cannot be read
    (:func:`import_csv` reports that)."""
    header = _csv_header(path)
    used = set()
    for expr in mapping.columns.values():  # a plain column (whose name may hold '*' or '/'), or an expression's terms
        used.add(expr.strip())
        used.update(_expression_parts(expr, header)[0])
    return [h for h in header if h and h not in FIELDS and h not in used]


def replaced_columns(path: str | Path, mapping: CsvMapping) -> list[str]:
    """The header columns of the CSV at ``path`` named as a record field that a constant of ``mapping`` (``--set``)
    replaces on every row (breaker pass 54b: ``--set model=...`` over the CSV's own model column said nothing). []
    when the header cannot be read."""
    return [h for h in _csv_header(path) if h in mapping.constants and h not in mapping.columns]


def _csv_header(path: str | Path) -> list[str]:
    """The header cells of the CSV at ``path`` (stripped; a byte-order mark dropped), [] when it cannot be read
    (:func:`import_csv` reports that)."""
    try:
        text = read_text_capped(Path(path), "csv").removeprefix("\ufeff")
        return [h.strip() for h in next(csv.reader(io.StringIO(text)), [])]
    except (ConfigError, csv.Error):
        return []


def unread_columns_note(path: str | Path, mapping: CsvMapping) -> str:
    """The note naming :func:`unread_columns`, or "" when every column is read."""
    unread = unread_columns(path, mapping)
    if not unread:
        return ""
    read = [f"{k} from {v}" for k, v in mapping.columns.items() if k in ("tokens_per_s_per_device", "step_time_s")]
    return (f"{len(unread)} column{'s' if len(unread) > 1 else ''} of {Path(path).name} not read: "
            f"{', '.join(unread[:12])}{' ...' if len(unread) > 12 else ''} (no --map names "
            f"{'them' if len(unread) > 1 else 'it'}; a layout field left out takes the framework's default, e.g. "
            "--map zero_stage=COLUMN for a ZeRO-stage column" + (f"; the outcome is read as {', '.join(read)}" if read
                                                                  else "") + ")")


__all__ = ["CsvMapping", "FIELDS", "check_mapping", "import_csv", "parse_map_items", "row_record", "unread_columns",
           "unread_columns_note"]
