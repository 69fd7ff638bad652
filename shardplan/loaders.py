"""Read the input files: models and hardware from preset names, Hugging Face ``config.json`` files or
YAML/JSON specs, and plan JSON files. :mod:`shardplan.inputs` turns command-line values into specs
with these.

Nothing here touches the network: a Hugging Face config must be a local file (or a directory that
contains ``config.json``).
"""

from __future__ import annotations

import difflib
import json
import re
import stat
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from shardplan import limits
from shardplan.errors import ConfigError, did_you_mean, fmt_legal, short_repr
from shardplan.hf_config import (DROPOUT_KEYS, FAMILIES, MULTIMODAL, UNMODELLED, YAML_ROUTE, caveats, foreign_feature,
                                 spec_fields)
from shardplan.presets.hardware import HARDWARE, hardware_preset_name
from shardplan.presets.models import MODELS
from shardplan.specs.hardware import HardwareSpec, with_fields
from shardplan.specs.model import ModelSpec

#: ``architectures`` values understood by :func:`model_from_hf_config` (:mod:`shardplan.hf_config`).
HF_ARCHITECTURES = tuple(FAMILIES)
#: separates ModelSpec.source from what the source holds that the spec does not count (hf_config.caveats)
SOURCE_NOTE = " -- note: "


#: bytes read from any input file at most (a spec or plan is a few KiB)
MAX_FILE_BYTES = 2**20
#: nesting depth and number of values a spec or plan document may hold
MAX_DEPTH, MAX_NODES = 32, 100_000


def read_text_capped(path: Path, what: str, limit: int = MAX_FILE_BYTES, kind: str = "a YAML/JSON file",
                     typical: str = "a spec or plan file is a few KiB") -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (:data:`MAX_FILE_BYTES`, 1 MiB, for specs and
    plans; a table of measured runs passes its own). A FIFO, device or socket is refused before it is opened
    (``/dev/zero`` never ends, a FIFO blocks); ``what`` names the input in the message (``"model"``, ``"--plan"``),
    ``kind`` the file to give instead and ``typical`` what such a file usually weighs.

    Raises:
        ConfigError: missing, unreadable, not a regular file, too large, or not UTF-8.
    """
    def err(msg: str) -> ConfigError:
        return ConfigError(f"{what} {short_repr(str(path))} {msg}", field=what.lstrip("-"), value=str(path))
    try:
        st = path.stat()
        if stat.S_ISDIR(st.st_mode):
            raise err("is a directory; give a file")
        if not stat.S_ISREG(st.st_mode):
            raise err(f"is not a regular file (a FIFO, device or socket); give {kind}")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise err(f"cannot be read: {e.strerror or e}") from None
    if len(data) > limit:
        raise err(f"is larger than {limit // 2**20} MiB; {typical}")
    try:
        return data.decode("utf-8-sig")  # a leading byte-order mark is not part of the document
    except UnicodeDecodeError as e:
        raise err(_not_utf8(data, e)) from None


def _not_utf8(data: bytes, e: UnicodeDecodeError) -> str:
    """Why ``data`` is not UTF-8 and how to convert it: UTF-16 (a byte-order mark, or NUL bytes between
    characters: what spreadsheet exports often write), a zip container (an .xlsx / .ods workbook), else a
    single-byte encoding such as Latin-1 (a breaker followed the Latin-1 advice on a UTF-16 CSV and got NULs)."""
    line = data[:e.start].count(b"\n") + 1
    where = f"byte {e.start}, line {line}: {e.reason}"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or data[:200].count(b"\x00") > len(data[:200]) // 4:
        return f"is UTF-16 text, not UTF-8 ({where}); save it as UTF-8, e.g. iconv -f utf-16 -t utf-8 FILE > FILE.utf8"
    if data.startswith(b"PK\x03\x04"):
        return (f"is a zip container (a spreadsheet workbook such as .xlsx?), not text ({where}); export the sheet "
                "as CSV (UTF-8)")
    return (f"is not UTF-8 text ({where}); save it as UTF-8, e.g. iconv -f latin1 -t utf-8 FILE > FILE.utf8 if it "
            "is Latin-1")


def check_document(data: Any, where: str) -> None:
    """Refuse a parsed document nested deeper than :data:`MAX_DEPTH` or holding more than
    :data:`MAX_NODES` values (a YAML alias bomb), walking it without recursion.

    Raises:
        ConfigError: naming ``where`` and the limit.
    """
    stack, nodes = [(data, 0)], 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if depth > MAX_DEPTH or nodes > MAX_NODES:
            what = f"nested deeper than {MAX_DEPTH} levels" if depth > MAX_DEPTH else f"more than {MAX_NODES:,} values"
            raise ConfigError(f"{where} holds {what}; a spec or plan is a flat mapping", field="path", value=where)
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((v, depth + 1) for v in value)


_INT_TAG, _FLOAT_TAG = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


class _Yaml12Numbers(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core-schema numbers instead of YAML 1.1's: ``010`` is ten (YAML 1.1 reads
    it as octal eight), ``1:30`` is a string (1.1: sexagesimal 90), ``1e9`` a float (1.1: a string); ``0o17`` and
    ``0x1F`` stay octal and hex (YAML 1.2 spec, 10.3.2 "Tag Resolution", the core schema's int and float patterns).
    A breaker found ``hbm_bytes: 0100000000000`` read as 8 GiB and ``step_overhead_s=010`` as 8 s, without a word."""


_Yaml12Numbers.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12Numbers.add_implicit_resolver(_INT_TAG, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
                                     list("-+0123456789"))
_Yaml12Numbers.add_implicit_resolver(
    _FLOAT_TAG, re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                           r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), list("-+.0123456789"))


def _yaml12_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """An int of the YAML 1.2 core schema: decimal (leading zeros allowed, still decimal), ``0o`` octal, ``0x`` hex."""
    text = loader.construct_scalar(node)
    body = text.lstrip("+-")
    sign = -1 if text.startswith("-") else 1
    if body.startswith("0o"):
        return sign * int(body[2:], 8)
    if body.startswith("0x"):
        return sign * int(body[2:], 16)
    return sign * int(body, 10)


_Yaml12Numbers.add_constructor(_INT_TAG, _yaml12_int)


def load_yaml_value(text: str) -> Any:
    """One YAML value as the project reads every YAML input (files, inline profile overrides, ``--fix``): the safe
    loader with YAML 1.2 numbers (:class:`_Yaml12Numbers`).

    Raises:
        yaml.YAMLError: the text is not YAML (callers name their input)."""
    return yaml.load(text, Loader=_Yaml12Numbers)  # noqa: S506 (a SafeLoader)


class _UniqueKeyLoader(_Yaml12Numbers):
    """The project's safe loader (:class:`_Yaml12Numbers`), refusing a key given twice in one mapping (PyYAML keeps
    the last silently)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict:
        """The mapping of ``node``; raises a ConstructorError on a repeated key."""
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *anchor" may be overridden by the keys given
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # unhashable: the base class reports it
                break
            if repeated:
                raise yaml.constructor.ConstructorError(None, None, f"the key {short_repr(key)} is given twice",
                                                        key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def no_repeated_json_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``json.loads``'s ``object_pairs_hook`` for every JSON the project reads (spec and plan files, run records,
    ds_configs): a JSON object's pairs as a dict, refusing a key given twice in one object (``json.loads`` alone keeps
    the last silently; DeepSpeed refuses it too, ``runtime/config_utils.py dict_raise_error_on_duplicate_keys``).

    Raises:
        ValueError: naming the key (callers turn it into a ConfigError naming their file).
    """
    keys = [k for k, _ in pairs]
    if len(set(keys)) < len(keys):
        twice = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"the key {short_repr(twice)} is given twice")
    return dict(pairs)


def _records_hint(text: str) -> str:
    """A hint when ``text`` is JSON Lines run records (two or more lines that each hold a run record,
    :func:`document_kind`) given where a spec or hardware file is expected: '' otherwise."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")][:3]
    try:
        objs = [json.loads(ln) for ln in lines]
    except ValueError:
        return ""
    if len(objs) > 1 and all(isinstance(o, dict) and document_kind(o) == RUN_RECORD for o in objs):
        return f"; it holds {RUN_RECORD}: {FIT_RECORDS}"
    return ""


def parse_document(text: str, path: Path, as_json: bool) -> Any:
    """Parse JSON (``as_json``) or YAML text, turning every parser failure (syntax, recursion depth,
    unhashable keys, bad timestamps) into a ConfigError and checking the shape (:func:`check_document`).

    Raises:
        ConfigError: the text is not valid JSON / YAML or too deep / too large.
    """
    kind = "JSON" if as_json else "YAML"
    try:
        data = (json.loads(text, object_pairs_hook=no_repeated_json_keys) if as_json
                else yaml.load(text, Loader=_UniqueKeyLoader))  # noqa: S506 (a SafeLoader)
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be a spec ({kind})", field="path", value=str(path)) from None
    except (json.JSONDecodeError, yaml.YAMLError, ValueError, TypeError, OverflowError) as e:
        why = " ".join(str(e).split())  # one line
        raise ConfigError(f"{path} is not valid {kind}: {why[:200] + ('...' if len(why) > 200 else '')}"
                          f"{_records_hint(text)}", field="path", value=str(path)) from None
    check_document(data, str(path))
    return data


def _bool_valued_dict(annotation: Any) -> bool:
    """The annotation is ``dict[..., bool]`` (a mapping whose values must be booleans)."""
    return typing.get_origin(annotation) is dict and typing.get_args(annotation)[1:] == (bool,)


def check_number_types(data: dict[str, Any], spec: type, where: str) -> None:
    """Refuse a boolean given for a numeric field of the pydantic model ``spec`` (pydantic's lax mode would
    read ``true`` as 1), and anything but a boolean for a boolean field (lax mode reads ``'off'`` and ``0``
    as False). Strings stay legal for numbers: PyYAML reads ``1.0e10`` (no exponent sign) as a string,
    and pydantic parses it, or refuses it when it is not a number.

    Raises:
        ConfigError: naming ``where``, the field and the value.
    """
    for key, value in data.items():
        info = spec.model_fields.get(key)
        if info is not None and _bool_valued_dict(info.annotation):  # e.g. FrameworkProfile.layout_defaults
            if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
                raise ConfigError(f"{where}: {key}={short_repr(value)}; legal: a mapping of names to true or false",
                                  field=key, value=value)
            continue
        inner = _nested_bool(value) if isinstance(value, (dict, list, tuple)) else None
        if info is not None and inner is not None:
            raise ConfigError(f"{where}: {key}: {inner} is a boolean; legal: numbers (and names), not booleans",
                              field=key, value=value)
        if info is not None and info.annotation is bool and not isinstance(value, bool):
            raise ConfigError(f"{where}: {key}={short_repr(value)}; legal: true or false", field=key, value=value,
                              legal=[True, False])
        if info is not None and isinstance(value, (list, tuple)) and any(isinstance(x, bool) for x in value):
            raise ConfigError(f"{where}: {key}={short_repr(value)}; legal: a list of numbers or names, not booleans",
                              field=key, value=value)
        if info is None or not isinstance(value, bool):
            continue
        ann = info.annotation
        if typing.get_origin(ann) is typing.Literal and all(type(a) is int for a in typing.get_args(ann)):
            legal = list(typing.get_args(ann))
            raise ConfigError(f"{where}: {key}={short_repr(value)}; legal: {fmt_legal(legal)} (numbers, not a boolean)",
                              field=key, value=value, legal=legal)
        kinds = set(typing.get_args(ann)) if typing.get_origin(ann) in (typing.Union, types.UnionType) else {ann}
        kinds.discard(type(None))
        if kinds and kinds <= {int, float}:
            raise ConfigError(f"{where}: {key}={short_repr(value)}; legal: a number, not a boolean", field=key,
                              value=value)


#: YAML / JSON value kinds in the words of the messages
_KIND_WORDS = {"list": "list", "str": "text value", "int": "number", "float": "number", "bool": "boolean",
               "date": "date", "datetime": "date"}


def _nested_bool(value: Any, path: str = "") -> str | None:
    """Where a boolean sits inside a nested mapping or list (a key or a value), e.g. ``AllReduce.2`` or
    ``[0][1]``, or None. YAML reads ``true`` where a number was meant and pydantic's lax mode would
    take it as 1 (a bus bandwidth of 1 B/s)."""
    if isinstance(value, bool):
        return path or "the value"
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if isinstance(k, bool):
                return f"key {here}"
            found = _nested_bool(v, here)
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _nested_bool(v, f"{path}[{i}]")
            if found:
                return found
    return None


def _read_mapping(path: Path, what: str = "file") -> dict[str, Any]:
    data = parse_document(read_text_capped(path, what), path, path.suffix.lower() == ".json")
    if not isinstance(data, dict):
        got = "nothing (the file is empty)" if data is None else f"a {_KIND_WORDS.get(type(data).__name__, 'value')}"
        raise ConfigError(f"{path} must contain a mapping of fields (name: value lines), got {got}",
                          field="path", value=str(path))
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{path}: key {short_repr(bad[0])} is not a field name; keys must be strings",
                          field="path", value=bad[0])
    kind = document_kind(data)
    if kind and what in ("hardware", "model", "framework"):
        advice = FIT_RECORDS if kind == RUN_RECORD else "give its layout with --plan where a command takes one"
        raise ConfigError(f"{path} is not a {what} file: it holds {kind}: {advice}", field="path", value=str(path))
    return data


#: what :func:`document_kind` calls a run record and a plan / estimate, and what to do with records
RUN_RECORD = "a run record (JSON Lines)"
PLAN_DOCUMENT = "a plan or estimate (shardplan plan / estimate --json)"
FIT_RECORDS = "fit such records with `shardplan calibrate FILE -o cluster.yaml` and give the cluster file instead"


def document_kind(data: Any) -> str:
    """Which of shardplan's own outputs a parsed document is, where a spec or records were expected:
    :data:`RUN_RECORD` (a mapping with a layout and an outcome: a one-line records file parses as a mapping too),
    :data:`PLAN_DOCUMENT` (``plan --json``'s ``plans``, or ``estimate --json``'s layout beside its memory), or ''."""
    if not isinstance(data, dict):
        return ""
    if "parallel" in data and ("status" in data or "tokens_per_s_per_device" in data):
        return RUN_RECORD
    if "plans" in data or ("parallel" in data and "memory_bytes" in data):
        return PLAN_DOCUMENT
    return ""


def config_error(e: ValidationError, context: str | None = None) -> ConfigError:
    """The first error of a pydantic ``ValidationError`` as a :class:`ConfigError` (one line: field,
    message, value given), prefixed with ``context`` (e.g. ``"model foo.yaml"``) when given.

    A ConfigError raised inside a model validator is kept (it already names field and legal values).
    Used by every input path (files here, flags in :mod:`shardplan.inputs`, the CLI, the web app).
    """
    first = e.errors()[0]
    inner = (first.get("ctx") or {}).get("error")
    prefix = f"{context}: " if context else ""
    if isinstance(inner, ConfigError):
        return ConfigError(f"{prefix}{inner}", field=inner.field, value=inner.value, legal=inner.legal)
    loc = ".".join(str(x) for x in first["loc"]) or (context or "input")
    if first["loc"] and not str(first["loc"][-1]):
        loc = "an empty field name"
    if first["type"] == "missing":
        given = [str(x["loc"][-1]) for x in e.errors() if x["type"] == "extra_forbidden" and x["loc"]]
        close = difflib.get_close_matches(str(first["loc"][-1]), given, n=1)
        hint = f"; the input has {close[0]!r}: a misspelling?" if close else ""
        # every required field that is missing at once, not one per run (a breaker fixed a new part field by field)
        others = [".".join(str(p) for p in x["loc"]) for x in e.errors()[1:] if x["type"] == "missing" and x["loc"]]
        also = f"; also missing: {', '.join(others)}" if others else ""
        return ConfigError(f"{prefix}{loc} is missing (a required field){hint}{also}", field=loc, value=None)
    value = first.get("input")
    hint = ""
    if first["type"] == "extra_forbidden":
        names = [n for n in _field_names(_nested_title(e.title, first["loc"])) if n not in ("sources", "origin")]
        key = str(first["loc"][-1])
        # a field the name begins (zero -> zero_stage), else difflib's nearest two
        close = [n for n in names if key and n.startswith(key)][:2] or difflib.get_close_matches(key, names, n=2)
        if e.title == "HardwareSpec" and (context or "").startswith("hardware") and len(first["loc"]) == 1:
            names = [*names, "base", "framework", "sources"]  # a hardware file's own keys beside the spec's fields
        hint = (f" (did you mean {' or '.join(close)}?)" if close else "") + (
            f"; legal fields: {', '.join(names)}" if names else "")
    legal = _legal_text(first)
    kind = first["type"]
    if (kind in _TYPE_WORDS or kind in _UNBOUNDED_NUMBER_ERRORS or kind in _RANGE_ERRORS) and kind != "string_type":
        # (a text value has no numeric bounds: sources.matmul_efficiency=3 borrowed matmul_efficiency's, breaker 54)
        # the field's whole range, whichever bound was crossed or whatever failed to parse
        name = str(first["loc"][-1]) if first["loc"] else ""
        bounds = _field_bounds(e.title, name)
        if bounds:
            words = _TYPE_WORDS.get(kind) or _UNBOUNDED_NUMBER_ERRORS.get(kind) or _number_word(e.title, name)
            legal = f"legal: {words} {bounds}" + _field_unit(e.title, name)
    if kind == "too_short" and _optional_field(e.title, str(first["loc"][-1]) if first["loc"] else ""):
        legal += ", or leave the field out (null) for none"  # ParallelConfig.offload_modules, recompute_modules, ...
    shown = list(value) if isinstance(value, tuple) else value  # a plan file's list, read into a tuple: as written
    return ConfigError(f"{prefix}{loc}={short_repr(shown)}; {legal}{hint}", field=loc, value=value)


#: pydantic number errors whose context carries no bounds: too large to parse as an integer, not finite
_UNBOUNDED_NUMBER_ERRORS = {"int_parsing_size": "a whole number", "finite_number": "a finite number"}


#: pydantic range errors: the message then gives the field's whole range (:func:`_field_bounds`)
_RANGE_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def _optional_field(title: str, name: str) -> bool:
    """Whether field ``name`` of the spec class ``title`` takes None (an optional list: left out for none)."""
    cls = _spec_class(title)
    info = cls.model_fields.get(name) if cls is not None else None
    return info is not None and type(None) in typing.get_args(info.annotation)


def _number_word(title: str, name: str) -> str:
    """'a whole number' for an integer field of the spec class ``title``, else 'a number'."""
    cls = _spec_class(title)
    info = cls.model_fields.get(name) if cls is not None else None
    return "a whole number" if info is not None and info.annotation is int else "a number"


def _spec_class(title: str):
    """The spec class a ValidationError's ``title`` names, or None."""
    from shardplan.parallel import ParallelConfig
    from shardplan.record_import import CsvMapping
    from shardplan.records import RunRecord
    from shardplan.specs.framework import FrameworkProfile
    from shardplan.specs.hardware import HardwareSpec
    from shardplan.specs.model import ModelSpec
    from shardplan.specs.training import TrainingSpec
    return {c.__name__: c for c in (ModelSpec, HardwareSpec, FrameworkProfile, ParallelConfig, TrainingSpec,
                                    RunRecord, CsvMapping)}.get(title)


def _nested_title(title: str, loc: tuple) -> str:
    """The class name of the model that holds the last key of ``loc`` inside spec class ``title``: a RunRecord's
    ``parallel.tpp`` is a ParallelConfig key (a breaker's record was told the record's fields instead of the
    layout's), else ``title``."""
    cls = _spec_class(title)
    for key in loc[:-1]:
        info = cls.model_fields.get(str(key)) if cls is not None else None
        ann = getattr(info, "annotation", None)
        if not (isinstance(ann, type) and hasattr(ann, "model_fields")):
            break
        cls = ann
    return cls.__name__ if cls is not None else title


def _field_bounds(title: str, name: str) -> str:
    """``>= 1 and <= 1,048,576``: the numeric bounds the spec class ``title`` puts on field ``name``
    (its ``Field(ge=..., le=...)`` constraints), or "" when it has none or is not a spec field."""
    cls = _spec_class(title)
    info = cls.model_fields.get(name) if cls is not None else None
    if info is None:
        return ""
    bounds = []
    for m in info.metadata:
        for attr, word in _BOUND_WORDS.items():
            v = getattr(m, attr, None)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                # a whole float bound (2.0**50 bytes) without its ".0"; 1e-9 or 0.5 as they are
                bounds.append(f"{word} {int(v):,}" if isinstance(v, float) and v.is_integer() and abs(v) >= 1
                              else f"{word} {v:,}")
    return " and ".join(bounds)


def _field_unit(title: str, name: str) -> str:
    """`` (per-device one-way scale-out bandwidth, bytes/s)``: the description of a spec field whose description
    names a unit (bytes, bytes/s, FLOP/s, s), so a value written in another unit (``400Gb/s``) is told what the field
    takes; "" otherwise."""
    cls = _spec_class(title)
    info = cls.model_fields.get(name) if cls is not None else None
    text = (info.description or "") if info is not None else ""
    return f" ({text})" if re.search(r"\b(bytes?(/s)?|FLOP/s|s)\b", text) and len(text) < 160 else ""


def _field_names(title: str) -> list[str]:
    """The field names of the spec class a ValidationError's ``title`` names ([] if not a spec)."""
    cls = _spec_class(title)
    return list(cls.model_fields) if cls is not None else []


_BOUND_WORDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
#: pydantic type-error kinds in the words of the rest of the messages
_TYPE_WORDS = {"int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
               "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
               "bool_parsing": "true or false", "tuple_type": "a list, written [a, b]", "list_type": "a list, written [a, b]",
               "string_type": "a text value", "dict_type": "a mapping of fields"}


def _legal_text(err: dict[str, Any]) -> str:
    """``legal: >= 1 and <= 16,777,216`` for a range error of pydantic, else its message."""
    ctx = err.get("ctx") or {}
    bounds = [f"{_BOUND_WORDS[k]} {v:,}" for k, v in ctx.items() if k in _BOUND_WORDS and isinstance(v, (int, float))]
    if bounds:
        return "legal: " + " and ".join(bounds)
    kind = err.get("type", "")
    if kind in _TYPE_WORDS:
        return "legal: " + _TYPE_WORDS[kind]
    if kind == "literal_error" and "expected" in ctx:
        return f"legal: {ctx['expected']}"
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    if err.get("type") == "too_short":
        return f"legal: {ctx['min_length']:,} or more entries"
    if err.get("type") == "too_long":
        return f"legal: at most {ctx['max_length']:,} entries"
    return err["msg"][0].lower() + err["msg"][1:]


def plan_path_and_rank(path: str | Path) -> tuple[Path, int]:
    """The file and the rank a ``--plan`` value names: ``plans.json#4`` is the 4th plan of ``shardplan plan --json``'s
    ranking (a new user could not price #4 from the file: only #1 was read), a plain path rank 1. A path that exists
    as written (a file whose name holds '#') is that file.

    Raises:
        ConfigError: an existing file followed by '#' and something other than a whole number (``#-1``, ``#abc``,
            ``#2.0``: read as part of the name, they said "No such file" for a file that exists).
    """
    m = re.fullmatch(r"(.+)#([^#/]*)", str(path))
    if m is None or Path(path).exists():
        return Path(path), 1
    if not m.group(2).isdigit() or not m.group(2).isascii():
        if Path(m.group(1)).is_file():
            raise ConfigError(f"--plan {path}: #{m.group(2)} is not a rank; legal: #1, #2, ... (the plan's rank in "
                              "the file), or the file without #N for the first", field="plan", value=str(path))
        return Path(path), 1
    return Path(m.group(1)), int(m.group(2))


def _ranked_plan(data: Any, path: str | Path, rank: int) -> Any:
    """Plan ``rank`` (1-based) of a ``{"plans": [...]}`` document, else ``data`` as it is (a single plan, rank 1).

    Raises:
        ConfigError: a malformed or empty 'plans' list, or a rank past it (naming the legal ranks).
    """
    if not (isinstance(data, dict) and "plans" in data):
        if rank != 1:
            raise ConfigError(f"--plan {path}: #{rank} names a ranked plan, but the file holds one plan; legal: the "
                              "file without #N, or a `shardplan plan --json` file", field="plan", value=str(path))
        return data
    plans = data["plans"]
    if not isinstance(plans, list) or not all(isinstance(x, dict) for x in plans):
        raise ConfigError(f"--plan {path}: 'plans' must be a list of plan objects", field="plan", value=str(path))
    if not plans:
        raise ConfigError(f"--plan {path} has an empty 'plans' list", field="plan", value=str(path))
    if not 1 <= rank <= len(plans):
        where = "ranks start at 1" if rank < 1 else f"it is past the file's {len(plans)} plan(s)"
        raise ConfigError(f"--plan {path}: no rank {rank}: {where}; legal: #1 to "
                          f"#{len(plans)}", field="plan", value=str(path), legal=[1, len(plans)])
    return plans[rank - 1]


def read_plan_file(path: str | Path) -> dict[str, Any]:
    """The ``parallel`` object of a plan JSON file: ``{"parallel": {...}}`` (one plan of
    ``shardplan plan --json``), ``{"plans": [{...}]}`` (its first plan, or plan N of ``FILE#N``:
    :func:`plan_path_and_rank`) or a bare mapping of ParallelConfig fields.

    Raises:
        ConfigError: unreadable file, invalid JSON, or no parallel object.
    """
    def err(msg: str) -> ConfigError:
        return ConfigError(f"--plan {path} {msg}", field="plan", value=str(path))
    shown, (path, rank) = path, plan_path_and_rank(path)
    try:
        data = parse_document(read_text_capped(Path(path), "--plan"), Path(path), as_json=True)
    except ConfigError as e:
        if Path(path).suffix.lower() in (".json", ""):
            raise
        # a framework's config (TOML, YAML, a launch script) given where a plan JSON goes
        raise ConfigError(f"{e}; a framework config becomes a plan with `shardplan import --from FRAMEWORK {path} -o "
                          "plan.json`", field="plan", value=str(path)) from None
    data = _ranked_plan(data, shown, rank)
    if isinstance(data, dict) and "parallel" in data:
        check_plan_context(data, path)
        data = data["parallel"]
    elif isinstance(data, dict) and {"model", "hardware", "training", "devices", "imported_from"} & set(data):
        # a plan's other objects without its layout: not a bare mapping of layout fields
        raise err("holds no parallel object (the layout: a plan from `shardplan plan --json`, `estimate --json` or "
                  "`import` has one beside its model / hardware / training objects)")
    if not isinstance(data, dict) or not data:  # {} would price the flags' layout while seeming to read the file
        raise err("holds no parallel object" + (" (the file is an empty JSON object)" if data == {} else ""))
    return data


#: what a plan file's ``training`` object may hold (``shardplan plan --json`` / ``estimate --json`` / ``import`` write
#: them): key -> (JSON kind, least, most); null is legal for each (``import`` writes null where a config is silent)
PLAN_TRAINING_KEYS: dict[str, tuple[type, float | None, float | None]] = {
    "seq_len": (int, 1, limits.MAX_SEQ_LEN), "global_batch_size": (int, 1, limits.MAX_BATCH_TOKENS),
    "global_batch_tokens": (int, 1, limits.MAX_BATCH_TOKENS), "microbatches": (int, 1, limits.MAX_BATCH_TOKENS),
    "moe_capacity_factor": (float, 1.0, 64.0), "moe_imbalance": (float, 1.0, 64.0),
    "precision": (str, None, None), "optimizer_dtype": (str, None, None), "moe_routing": (str, None, None),
    "framework": (str, None, None), "zero3_gather_buffers": (int, 1, 2), "attention": (str, None, None),
    "dropout": (bool, None, None)}
_KIND_NAMES = {int: "a whole number", float: "a number", str: "a text value (a name)", bool: "true or false"}
#: the top-level keys of the plan objects shardplan writes (``estimate --json``, a row of ``plan --json``, ``import``)
PLAN_TOP_KEYS = frozenset({
    "bound", "collectives", "explanation", "failure", "fits", "hardware", "hardware_flops_per_step", "hfu",
    "host_memory_per_host_bytes", "memory_bytes", "memory_notes", "memory_peak_phase", "mfu", "mfu_of_bf16_peak",
    "model", "model_flops_per_step", "negative_reasons", "parallel", "rank", "roofline", "runs", "stage_layers",
    "thresholds", "throughput_band", "time_s", "tokens_per_s", "tokens_per_s_per_device", "training", "devices",
    "imported_from", "model_shape"})


def check_plan_context(data: dict[str, Any], path: str | Path) -> None:
    """Refuse a plan object whose ``devices`` (top level or under ``hardware``) or ``training`` values are of the wrong
    JSON type or outside their ranges (:data:`PLAN_TRAINING_KEYS`, :mod:`shardplan.limits`): ``"devices": "16"``,
    ``"seq_len": -5``, ``"precision": 7``. Plan files are typed strictly (README), and these values say what the plan
    was made for (:func:`read_plan_context`). A ``training`` key shardplan does not write is refused (``"precison"``
    would price the plan in another precision silently), and so is a top-level key a letter or two from one it writes
    (``"device"``); other top-level keys are left alone (a hand-made plan may carry notes).

    Raises:
        ConfigError: naming the file, the key, the value and what is legal.
    """
    import difflib
    for key in data:
        close = difflib.get_close_matches(str(key), PLAN_TOP_KEYS, n=1, cutoff=0.8)
        if key not in PLAN_TOP_KEYS and close:
            raise ConfigError(f"--plan {path}: key {short_repr(key)} is not read (did you mean {close[0]}?); legal "
                              f"top-level keys: {', '.join(sorted(PLAN_TOP_KEYS))}", field=str(key), value=key)
    hw = data.get("hardware")
    checks: list[tuple[str, Any, tuple[type, float | None, float | None]]] = [
        (f"{where}devices", block.get("devices"), (int, 1, limits.MAX_DEVICES))
        for where, block in (("", data), ("hardware.", hw if isinstance(hw, dict) else {}))]
    training = data.get("training")
    if training is not None and not isinstance(training, dict):
        raise ConfigError(f"--plan {path}: training={short_repr(training)}; legal: an object of the training setup "
                          "(seq_len, global_batch_size, precision, ...)", field="training", value=short_repr(training))
    for key in (training or {}):
        if key not in PLAN_TRAINING_KEYS:
            close = difflib.get_close_matches(str(key), PLAN_TRAINING_KEYS, n=1, cutoff=0.6)
            raise ConfigError(f"--plan {path}: training.{key} is not a training field"
                              + (f" (did you mean {close[0]}?)" if close else "")
                              + f"; legal: {', '.join(PLAN_TRAINING_KEYS)}", field=f"training.{key}", value=key)
    checks += [(f"training.{k}", (training or {}).get(k), spec) for k, spec in PLAN_TRAINING_KEYS.items()]
    for key, value, (kind, lo, hi) in checks:
        if value is None:
            continue
        ok = (isinstance(value, bool) if kind is bool else
              not isinstance(value, bool) and (isinstance(value, kind) or (kind is float and isinstance(value, int)))
              and (lo is None or (value == value and lo <= value <= hi)))
        if not ok:
            bounds = f" from {lo:,} to {hi:,}" if lo is not None else ""
            raise ConfigError(f"--plan {path}: {key}={short_repr(value)}; legal: {_KIND_NAMES[kind]}{bounds} (or null)",
                              field=key.rsplit(".", 1)[-1], value=value)


def read_plan_context(path: str | Path) -> dict[str, Any]:
    """What a plan file says it was made for, besides its layout: ``{"model", "hardware", "devices", "seq_len",
    "global_batch_size", "precision", "optimizer_dtype", "moe_routing", "framework", "dropout", "model_shape"}`` where the
    file has them (``shardplan plan --json`` / ``estimate --json``: the ``model``, ``hardware`` and ``training`` objects;
    ``shardplan import``: ``devices``, ``training``, ``imported_from`` and ``model_shape``, the ModelSpec fields the
    config's model flags give), names for the named objects.
    Unreadable parts are left out and an unreadable file gives ``{}`` (:func:`read_plan_file` reports it);
    raises nothing.
    """
    path, rank = plan_path_and_rank(path)
    try:
        data = parse_document(read_text_capped(Path(path), "--plan"), Path(path), as_json=True)
    except ConfigError:
        return {}
    try:
        data = _ranked_plan(data, path, rank)
    except ConfigError:  # read_plan_file reports it
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("model", "hardware"):
        value = data.get(key)
        name = value.get("name") if isinstance(value, dict) else None
        if isinstance(name, str):
            out[key] = name
    hw = data.get("hardware")
    devices = data.get("devices", hw.get("devices") if isinstance(hw, dict) else None)
    if isinstance(devices, int) and not isinstance(devices, bool):
        out["devices"] = devices
    training = data.get("training") if isinstance(data.get("training"), dict) else {}
    for key in ("seq_len", "global_batch_size", "precision", "optimizer_dtype", "moe_routing", "framework",
                "moe_capacity_factor", "attention"):
        if isinstance(training.get(key), (int, float, str)) and not isinstance(training.get(key), bool):
            out[key] = training[key]
    if isinstance(training.get("dropout"), bool):
        out["dropout"] = training["dropout"]
    shape = data.get("model_shape")  # `shardplan import`: the config's own model flags (Imported.model_shape)
    if isinstance(shape, dict):
        out["model_shape"] = {k: v for k, v in shape.items() if isinstance(k, str) and isinstance(v, int)
                              and not isinstance(v, bool)}
    if "framework" not in out and isinstance(data.get("imported_from"), str):
        from shardplan.presets.frameworks import FRAMEWORKS
        # a framework with a profile (EasyDeL has none to compare), or one with +field=value overrides
        if data["imported_from"].split("+")[0] in FRAMEWORKS:
            out["framework"] = data["imported_from"]
    return out


#: ``model_type`` -> ``architectures`` entry, for a config.json without ``architectures``
HF_MODEL_TYPES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
                  "mistral3": "Mistral3ForConditionalGeneration",
                  "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM",
                  "gemma": "GemmaForCausalLM", "gemma2": "Gemma2ForCausalLM", "gemma3_text": "Gemma3ForCausalLM",
                  "gemma3": "Gemma3ForConditionalGeneration", "phi3": "Phi3ForCausalLM",
                  "llama4_text": "Llama4ForCausalLM", "llama4": "Llama4ForConditionalGeneration",
                  "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
                  "kimi_k2": "DeepseekV3ForCausalLM",  # Kimi K2's config: model_type kimi_k2, the DeepSeek-V3 network
                  "gpt_oss": "GptOssForCausalLM", "olmo2": "Olmo2ForCausalLM", "falcon": "FalconForCausalLM",
                  "gpt2": "GPT2LMHeadModel", "gpt_neox": "GPTNeoXForCausalLM", "bloom": "BloomForCausalLM",
                  "internlm": "InternLMForCausalLM", "internlm2": "InternLM2ForCausalLM",
                  "qwen2_moe": "Qwen2MoeForCausalLM", "olmoe": "OlmoeForCausalLM", "glm4_moe": "Glm4MoeForCausalLM",
                  "granite": "GraniteForCausalLM", "granitemoe": "GraniteMoeForCausalLM",
                  "starcoder2": "Starcoder2ForCausalLM", "smollm3": "SmolLM3ForCausalLM", "olmo3": "Olmo3ForCausalLM",
                  "cohere": "CohereForCausalLM", "seed_oss": "SeedOssForCausalLM", "cohere2": "Cohere2ForCausalLM",
                  "dbrx": "DbrxForCausalLM", "ernie4_5": "Ernie4_5ForCausalLM",
                  "ernie4_5_moe": "Ernie4_5_MoeForCausalLM", "mpt": "MptForCausalLM", "opt": "OPTForCausalLM",
                  "gptj": "GPTJForCausalLM", "phi": "PhiForCausalLM", "nemotron": "NemotronForCausalLM",
                  "stablelm": "StableLmForCausalLM", "phimoe": "PhimoeForCausalLM", "dots1": "Dots1ForCausalLM",
                  "exaone4": "Exaone4ForCausalLM", "arcee": "ArceeForCausalLM", "minimax_m2": "MiniMaxM2ForCausalLM"}
#: what a refusal of an :data:`~shardplan.hf_config.UNMODELLED` family says instead of the model-file route: a
#: ModelSpec file of its shapes would price softmax-attention and MLP blocks in place of what sets it apart
UNMODELLED_APPROXIMATE = ("; ModelSpec knows softmax-attention and MLP blocks only: a model file of its shapes "
                          "would price an approximation of it, not this model")
#: ``model_type`` -> architecture of the refused families (:data:`shardplan.hf_config.UNMODELLED`), so that a
#: config without ``architectures`` gets the same reason
UNMODELLED_MODEL_TYPES = {"qwen3_next": "Qwen3NextForCausalLM", "jamba": "JambaForCausalLM",
                          "nemotron_h": "NemotronHForCausalLM", "bamba": "BambaForCausalLM",
                          "granitemoehybrid": "GraniteMoeHybridForCausalLM", "falcon_h1": "FalconH1ForCausalLM",
                          "zamba2": "Zamba2ForCausalLM", "minimax": "MiniMaxForCausalLM", "lfm2": "Lfm2ForCausalLM",
                          "apertus": "ApertusForCausalLM", "deepseek_v32": "DeepseekV32ForCausalLM",
                          "kimi_linear": "KimiLinearForCausalLM"}
#: Hugging Face keys that hold whole numbers, with their least legal value (None = absent)
HF_INT_KEYS = {**{k: 1 for k in (
    "n_embd", "n_layer", "n_head", "n_inner", "n_positions", "n_embed", "vocab_size", "num_hidden_layers",
    "hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size", "head_dim",
    "num_local_experts", "num_experts", "num_experts_per_tok", "moe_intermediate_size", "n_routed_experts",
    "decoder_sparse_step", "interleave_moe_layer_step", "intermediate_size_mlp", "ffn_hidden_size", "num_kv_heads",
    "n_head_kv", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "sliding_window", "sliding_window_pattern", "moe_layer_freq", "shared_expert_intermediate_size", "d_model",
    "n_layers", "n_heads", "kv_n_heads", "moe_num_experts", "moe_top_k", "moe_k", "moe_layer_interval",
    "expansion_ratio", "ffn_dim", "word_embed_proj_dim", "max_position_embeddings")},
    "first_k_dense_replace": 0, "n_shared_experts": 0, "moe_num_shared_experts": 0, "moe_layer_start_index": 0,
    "moe_layer_end_index": -1, "num_nextn_predict_layers": 0, "num_mtp_modules": 0, "max_window_layers": 0}
#: keys that hold ``true`` / ``false``
HF_BOOL_KEYS = ("tie_word_embeddings", "attention_bias", "mlp_bias", "multi_query", "parallel_attn", "bias",
                "alibi", "new_decoder_architecture", "use_sliding_window", "qkv_bias", "use_qk_norm", "use_bias",
                "attention_out_bias", "no_bias", "qk_ln", "enable_bias", "do_layer_norm_before",
                "_remove_final_layer_norm", "layer_norm_elementwise_affine", "qk_layernorm", "use_qkv_bias",
                "use_parallel_residual", "lm_head_bias")
#: keys whose ``null`` means "derive it" or "none" (Transformers' defaults)
HF_NULLABLE_KEYS = ("n_inner", "num_key_value_heads", "head_dim", "q_lora_rank", "sliding_window", "n_routed_experts",
                    "n_shared_experts", "num_kv_heads", "n_head_kv", "ffn_hidden_size", "word_embed_proj_dim",
                    "max_position_embeddings")
#: architectures whose config.json nests sub-configurations whose keys :func:`check_hf_types` checks too
HF_SUB_CONFIGS = {"DbrxForCausalLM": ("attn_config", "ffn_config"), "MptForCausalLM": ("attn_config",),
                  "MPTForCausalLM": ("attn_config",)}
#: architecture -> whole-number keys that may also hold a string or null there (its translator checks them)
HF_OWN_FORMS = {"Exaone4ForCausalLM": ("sliding_window_pattern",)}
#: keys that hold lists of layer indices
HF_LAYER_LIST_KEYS = ("mlp_only_layers", "moe_layers")
#: ModelSpec field -> the Hugging Face key it comes from (messages name the key the user wrote)
_HF_COMMON = {"n_layers": "num_hidden_layers", "d_model": "hidden_size", "n_heads": "num_attention_heads",
              "n_kv_heads": "num_key_value_heads", "ffn_dim": "intermediate_size", "n_experts": "num_local_experts",
              "top_k": "num_experts_per_tok"}
_HF_DEEPSEEK = {**_HF_COMMON, "n_experts": "n_routed_experts", "expert_ffn_dim": "moe_intermediate_size",
                "n_dense_layers": "first_k_dense_replace"}
HF_FIELD_KEYS = {"GPT2LMHeadModel": {"n_layers": "n_layer", "d_model": "n_embd", "n_heads": "n_head",
                                     "ffn_dim": "n_inner", "max_position_embeddings": "n_positions"},
                 "Qwen3MoeForCausalLM": {**_HF_COMMON, "n_experts": "num_experts", "expert_ffn_dim": "moe_intermediate_size",
                                         "moe_layer_step": "decoder_sparse_step", "n_dense_layers": "mlp_only_layers"},
                 "OlmoeForCausalLM": {**_HF_COMMON, "n_experts": "num_experts"},
                 "Glm4MoeForCausalLM": _HF_DEEPSEEK,
                 "Llama4ForCausalLM": {**_HF_COMMON, "ffn_dim": "intermediate_size_mlp",
                                       "expert_ffn_dim": "intermediate_size", "moe_layer_step": "interleave_moe_layer_step"},
                 "DeepseekV2ForCausalLM": _HF_DEEPSEEK, "DeepseekV3ForCausalLM": _HF_DEEPSEEK,
                 "Dots1ForCausalLM": _HF_DEEPSEEK,
                 "Gemma3ForCausalLM": {**_HF_COMMON, "full_attention_interval": "sliding_window_pattern"},
                 "Cohere2ForCausalLM": {**_HF_COMMON, "full_attention_interval": "sliding_window_pattern"},
                 "DbrxForCausalLM": {"n_kv_heads": "attn_config.kv_n_heads", "ffn_dim": "ffn_config.ffn_hidden_size",
                                     "n_experts": "ffn_config.moe_num_experts", "top_k": "ffn_config.moe_top_k",
                                     "clip_qkv": "attn_config.clip_qkv"},
                 "Ernie4_5_MoeForCausalLM": {**_HF_COMMON, "n_experts": "moe_num_experts", "top_k": "moe_k",
                                             "expert_ffn_dim": "moe_intermediate_size",
                                             "n_shared_experts": "moe_num_shared_experts",
                                             "n_dense_layers": "moe_layer_start_index",
                                             "moe_layer_step": "moe_layer_interval"},
                 "MptForCausalLM": {"clip_qkv": "attn_config.clip_qkv", "ffn_dim": "d_model"},
                 "GPTJForCausalLM": {"n_layers": "n_layer", "d_model": "n_embd", "n_heads": "n_head",
                                     "ffn_dim": "n_inner"},
                 "OPTForCausalLM": {**_HF_COMMON, "ffn_dim": "ffn_dim"},
                 "FalconForCausalLM": {**_HF_COMMON, "ffn_dim": "ffn_hidden_size", "n_kv_heads": "num_kv_heads",
                                       "norms_per_layer": "num_ln_in_parallel_attn"},
                 "*": _HF_COMMON}
HF_FIELD_KEYS.update({"Llama4ForConditionalGeneration": HF_FIELD_KEYS["Llama4ForCausalLM"],
                      "Gemma3ForConditionalGeneration": HF_FIELD_KEYS["Gemma3ForCausalLM"],
                      "RWForCausalLM": HF_FIELD_KEYS["FalconForCausalLM"],
                      "MPTForCausalLM": HF_FIELD_KEYS["MptForCausalLM"],
                      "Qwen2MoeForCausalLM": {**HF_FIELD_KEYS["Qwen3MoeForCausalLM"],
                                              "n_shared_experts": "shared_expert_intermediate_size"}})


def check_hf_types(cfg: dict[str, Any], where: str = "config.json", own: tuple[str, ...] = ()) -> None:
    """Refuse a Hugging Face shape key that is not a whole number at least its least legal value
    (``head_dim: 0``, ``"4096"``, ``true``, ``1.5``), a dropout probability outside [0, 1] or not a number
    (:data:`~shardplan.hf_config.DROPOUT_KEYS`), a boolean key that is not ``true`` / ``false``
    (the string ``"false"`` would otherwise read as true), a layer list that is not a list of layer
    indices, and a ``layer_types`` that is not one known attention type per layer, naming the key
    as written in config.json (``where``: ``config.json`` or ``config.json text_config``). ``own``: whole-number
    keys that may also be a string or null in the family (:data:`HF_OWN_FORMS`), checked by its translator.

    Raises:
        ConfigError: the first offending key, its value and what is legal.
    """
    for key, least in HF_INT_KEYS.items():
        if key not in cfg or (cfg[key] is None and key in HF_NULLABLE_KEYS):
            continue
        if key in own and (cfg[key] is None or isinstance(cfg[key], str)):
            continue  # the family's translator checks its other forms (Exaone4 sliding_window_pattern "LLLG")
        v = cfg[key]
        if not isinstance(v, int) or isinstance(v, bool) or not least <= v <= 2**24:
            raise ConfigError(f"{where} {key}={short_repr(v)}; legal: a whole number from {least} to {2**24:,}",
                              field=key, value=v)
    for key in HF_BOOL_KEYS:
        v = cfg.get(key)
        if key in cfg and v is None:  # transformers keeps the None, which its model code reads as false
            raise ConfigError(f"{where} {key}=null; legal: true, false, or leave the key out for the family's "
                              "default", field=key, value=None, legal=[True, False])
        if v is not None and not isinstance(v, bool):
            raise ConfigError(f"{where} {key}={short_repr(v)}; legal: true, false (JSON booleans, not strings)",
                              field=key, value=v, legal=[True, False])
    for key in DROPOUT_KEYS:  # probabilities (transformers' configs default them to 0.0)
        v = cfg.get(key)
        if key in cfg and v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                             or not 0.0 <= v <= 1.0):
            raise ConfigError(f"{where} {key}={short_repr(v)}; legal: a probability from 0 to 1 (or null / leave the "
                              "key out for none)", field=key, value=v, legal=[0.0, 1.0])
    q = cfg.get("quantization_config")
    if "quantization_config" in cfg and q is not None and not isinstance(q, dict):
        raise ConfigError(f"{where} quantization_config={short_repr(q)}; legal: a mapping (Transformers' quantization "
                          "settings, e.g. {\"quant_method\": \"fp8\"}) or leave the key out", field="quantization_config",
                          value=q)
    _check_layer_lists(cfg, where)


def _check_layer_lists(cfg: dict[str, Any], where: str) -> None:
    """:func:`check_hf_types` for ``mlp_only_layers`` / ``moe_layers`` and ``layer_types``."""
    n = cfg.get("num_hidden_layers", cfg.get("n_layer"))
    if not isinstance(n, int) or isinstance(n, bool):
        return  # no layer count to check against: the translator names the missing key
    for key in HF_LAYER_LIST_KEYS:
        v = cfg.get(key)
        if v is not None and (not isinstance(v, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in v)):
            raise ConfigError(f"{where} {key}={short_repr(v)}; legal: a list of layer indices from 0 to {n - 1}",
                              field=key, value=v)
    types = cfg.get("layer_types")
    # Llama 4 (transformers' Llama4TextConfig) writes 'chunked_attention' for its RoPE layers, local over
    # attention_chunk_size; the sliding-window families write 'sliding_attention'
    llama4 = str(cfg.get("model_type", "")).startswith("llama4") or any(
        str(a).startswith("Llama4") for a in (cfg.get("architectures") or []) if isinstance(cfg.get("architectures"), list))
    legal = ("chunked_attention", "full_attention") if llama4 else ("sliding_attention", "full_attention")
    if types is not None and (not isinstance(types, list) or len(types) != n or any(t not in legal for t in types)):
        raise ConfigError(f"{where} layer_types={short_repr(types)}; legal: a list of {n} entries, each "
                          f"{' or '.join(map(repr, legal))}", field="layer_types", value=types, legal=legal)


def hf_names(err: ConfigError, arch: str) -> ConfigError:
    """``err`` with the ModelSpec field names in its message replaced by the config.json keys of ``arch``."""
    names = HF_FIELD_KEYS.get(arch, HF_FIELD_KEYS["*"])
    msg = re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: names[m.group(1)], str(err))
    return ConfigError(msg, field=names.get(err.field or "", err.field), value=err.value, legal=err.legal)


def _refusal_parts(arch: str | None, supported: str, cfg: dict | None = None) -> tuple[str, str]:
    """(reason, list) of a refused architecture: an :data:`~shardplan.hf_config.UNMODELLED` family's reason, or, for
    an architecture of no known family, what its ``cfg`` holds that no ModelSpec can price
    (:func:`shardplan.hf_config.foreign_feature`: MiniMax-Text-01's remote-code config lists its lightning-attention
    layers in attn_type_list), with :data:`UNMODELLED_APPROXIMATE` and the supported list without the model-file
    route (a YAML of its shapes would price those layers as softmax attention); else no reason and ``supported``
    (which offers that route)."""
    foreign = foreign_feature(cfg) if arch not in UNMODELLED and isinstance(cfg, dict) else None
    if arch not in UNMODELLED and not foreign:
        return "", supported
    reason = UNMODELLED[arch] if arch in UNMODELLED else foreign
    return f" ({reason}{UNMODELLED_APPROXIMATE})", f"supported: {', '.join(HF_ARCHITECTURES)}"


def _refuse_foreign(arch: str, cfg: dict) -> None:
    """Refuse a config that names the supported ``arch`` but holds what only an unmodelled family has
    (:func:`shardplan.hf_config.foreign_feature`: a relabelled DeepSeek-V3.2, Qwen3-Next or Mamba hybrid, whose
    indexer, linear-attention or Mamba layers the supported family's translator would drop in silence), or whose
    ``model_type`` names another network (:func:`_check_model_type`).

    Raises:
        ConfigError: naming the architecture, the foreign key and its family (or both network names).
    """
    _check_model_type(arch, cfg.get("model_type"))
    text = cfg.get("text_config") if arch in MULTIMODAL and isinstance(cfg.get("text_config"), dict) else cfg
    foreign = foreign_feature(text) or (foreign_feature(cfg) if text is not cfg else None)
    if foreign:
        raise ConfigError(f"config.json names {arch} but {foreign}: priced as {arch} it would be another network "
                          f"(keep the checkpoint's own architectures){UNMODELLED_APPROXIMATE}", field="architectures",
                          value=arch)


def dense_granite4(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """A GraniteMoeHybridForCausalLM config whose every layer is attention and which has no experts (Granite 4.0
    micro: ``layer_types`` all 'attention', ``num_local_experts`` 0) as the GraniteForCausalLM config of the same
    network, or None for a real hybrid. transformers' GraniteMoeHybridDecoderLayer (modular_granitemoehybrid.py)
    builds GraniteMoeSharedAttention (q/k/v/o, bias ``attention_bias``) for an 'attention' layer and, without
    experts, only its shared_mlp: GraniteMoeSharedMLP input_linear h x 2F + output_linear F x h without bias,
    F = ``shared_intermediate_size``: a gated MLP, as Granite 3's; the ``mamba_*`` keys then describe no layer. vLLM
    reads this checkpoint as dense the same way."""
    types = cfg.get("layer_types", cfg.get("layers_block_type"))
    # GraniteMoeHybridConfig's defaults: num_local_experts 8 (an MoE), shared_intermediate_size 1024; a layer list of
    # another length, or another network's model_type, is no such checkpoint (the hybrid's refusal names it)
    if (not isinstance(types, list) or len(types) != cfg.get("num_hidden_layers") or any(t != "attention" for t in types)
            or cfg.get("num_local_experts", 8) != 0 or cfg.get("model_type", "granitemoehybrid") != "granitemoehybrid"):
        return None
    out = {k: v for k, v in cfg.items() if not k.startswith(("mamba_", "ssm_")) and k not in (
        "layer_types", "layers_block_type", "num_local_experts", "num_experts_per_tok", "shared_intermediate_size",
        "position_embedding_type", "router_aux_loss_coef", "output_router_logits", "mlp_bias")}
    return {**out, "architectures": ["GraniteForCausalLM"], "model_type": "granite",
            "intermediate_size": cfg.get("shared_intermediate_size", 1024)}


def _refuse_without_architectures(mt: Any, supported: str) -> None:
    """Refuse a config without an ``architectures`` list whose ``model_type`` names no supported family.

    Raises:
        ConfigError: always: an unknown model_type (with a did-you-mean), or a refused family's reason.
    """
    why = UNMODELLED_MODEL_TYPES.get(mt) if isinstance(mt, str) else None
    if isinstance(mt, str) and why is None:
        # a model_type the table does not know is the problem, not the missing list (breaker finding); ascii()
        # shows a look-alike letter (a Cyrillic 'а' in 'llamа') that repr would print as the Latin one
        close = did_you_mean(mt, list(HF_MODEL_TYPES))
        raise ConfigError(f"config.json: model_type={ascii(mt)} is not supported{close} and the file has no "
                          f"'architectures' list; legal model_type: {', '.join(HF_MODEL_TYPES)} (or an "
                          f"'architectures' list: {supported})", field="model_type", value=mt,
                          legal=list(HF_MODEL_TYPES))
    why, listed = _refusal_parts(why, supported)
    raise ConfigError(f"config.json has no 'architectures' list (model_type={mt!r}){why}; "
                      f"{listed}", field="architectures", value=None, legal=HF_ARCHITECTURES)


def _as_granite4(spec: ModelSpec) -> ModelSpec:
    """``spec`` (read from :func:`dense_granite4`'s Granite config) with a source naming the checkpoint's class."""
    return spec.model_copy(update={"source": spec.source.replace(
        "(GraniteForCausalLM)", "(GraniteMoeHybridForCausalLM: every layer attention and no experts, read as the dense "
        "Granite decoder with its shared MLP)", 1)})


def _check_model_type(arch: str, model_type: Any) -> None:
    """Refuse a ``model_type`` that names another network than ``arch`` (:data:`HF_MODEL_TYPES`; case aside, as
    MPT's remote-code MPTForCausalLM): transformers' Auto classes build the model from ``model_type``
    (CONFIG_MAPPING), not from the architectures list, so a Mixtral config labelled LlamaForCausalLM loads as
    Mixtral (breaker pass 52: it was priced as a 7.2B dense Llama). A model_type the table does not know is left
    alone.

    Raises:
        ConfigError: naming both, the model_type values of ``arch`` and the architecture of ``model_type``.
    """
    if not isinstance(model_type, str) or HF_MODEL_TYPES.get(model_type, arch).lower() == arch.lower():
        return
    same = [k for k, v in HF_MODEL_TYPES.items() if v == arch]
    raise ConfigError(f"config.json: model_type={model_type!r} is the {HF_MODEL_TYPES[model_type]} network but "
                      f"architectures names {arch} (transformers builds the model from model_type); legal model_type "
                      f"for {arch}: {', '.join(repr(k) for k in same) or 'none listed'}, or architectures "
                      f"[{HF_MODEL_TYPES[model_type]!r}]", field="model_type", value=model_type, legal=same)


def model_from_hf_config(cfg: dict[str, Any], name: str = "hf-model") -> ModelSpec:
    """Translate a Hugging Face ``config.json`` mapping into a :class:`ModelSpec`.

    Supported ``architectures``: :data:`HF_ARCHITECTURES` (Llama 2/3/4, Mistral, Mixtral, Qwen2/2.5,
    Qwen3, Qwen1.5/2-MoE, Qwen3-MoE, Gemma 1/2/3, Phi-3/4, DeepSeek-V2/V3, GLM-4.5, GPT-OSS, OLMo 2/3,
    OLMoE, Granite 3 dense and MoE, Command-R, Command R7B / Command A (Cohere2), DBRX, ERNIE 4.5 dense and
    MoE, StarCoder2, SmolLM3, Seed-OSS, Falcon, GPT-2, GPT-NeoX, BLOOM, InternLM 1/2, MPT, OPT, GPT-J, Phi-2,
    Phi-3.5-MoE, Nemotron-4 / Minitron, StableLM, dots.llm1, EXAONE 4.0, Arcee AFM, MiniMax-M2); the translation of
    each is in :mod:`shardplan.hf_config`.

    Raises:
        ConfigError: for an unsupported architecture (named, with the supported list and the YAML
            route) or a missing key.
    """
    supported = f"supported: {', '.join(HF_ARCHITECTURES)}; {YAML_ROUTE}"
    archs = cfg.get("architectures")
    if isinstance(archs, str):
        archs = [archs]
    if archs is None and isinstance(cfg.get("model_type"), str) and cfg["model_type"] in HF_MODEL_TYPES:
        archs = [HF_MODEL_TYPES[cfg["model_type"]]]
    if archs is None:
        _refuse_without_architectures(cfg.get("model_type"), supported)
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise ConfigError(f"architectures must be a list of strings, got {short_repr(archs)}; {supported}",
                          field="architectures", value=archs, legal=HF_ARCHITECTURES)
    arch = archs[0] if archs else None
    dense = dense_granite4(cfg) if arch == "GraniteMoeHybridForCausalLM" else None
    if dense is not None:
        return _as_granite4(model_from_hf_config(dense, name))
    if arch not in HF_ARCHITECTURES:
        why, listed = _refusal_parts(arch, supported, cfg)
        raise ConfigError(f"architectures={short_repr(archs)} is not supported{why}; {listed}",
                          field="architectures", value=arch, legal=HF_ARCHITECTURES)
    _refuse_foreign(arch, cfg)
    check_hf_types(cfg, own=HF_OWN_FORMS.get(arch, ()))
    for key in ("text_config",) if arch in MULTIMODAL else HF_SUB_CONFIGS.get(arch, ()):
        if isinstance(cfg.get(key), dict):
            check_hf_types(cfg[key], f"config.json {key}")
    try:
        spec = spec_fields(arch, cfg)
    except KeyError as e:
        raise ConfigError(f"config.json for {arch} lacks the key {e.args[0]!r}", field=e.args[0]) from None
    text = cfg["text_config"] if arch in MULTIMODAL else cfg
    if text.get("max_position_embeddings") is not None:  # a whole number in range: check_hf_types
        spec.setdefault("context_length", text["max_position_embeddings"])
    try:
        notes = caveats(arch, cfg)
        return ModelSpec(name=name, source=f"Hugging Face config.json ({arch})"
                         + (SOURCE_NOTE + "; ".join(notes) if notes else ""), **spec)
    except ValidationError as e:
        raise hf_names(config_error(e, f"model {name}"), arch) from None


def _not_empty(what: str, name: object, presets: dict[str, Any]) -> None:
    """Refuse an empty (or blank, or non-string) preset name / path: ``Path('')`` is the current folder."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{what}={short_repr(name)} is empty; give a preset name or a file; presets: "
                          f"{', '.join(presets)}", field=what, value=name, legal=presets)


def load_model(name_or_path: str) -> ModelSpec:
    """A model from a preset name, a Hugging Face ``config.json`` (file or directory) or a YAML/JSON
    file with :class:`ModelSpec` fields.

    Raises:
        ConfigError: unknown preset (lists presets), unreadable file, unsupported architecture,
            or invalid fields.
    """
    if name_or_path in MODELS:
        return MODELS[name_or_path]
    _not_empty("model", name_or_path, MODELS)
    by_lower = {k.lower(): k for k in MODELS}
    if isinstance(name_or_path, str) and name_or_path.strip().lower() in by_lower and not _exists(Path(name_or_path)):
        return MODELS[by_lower[name_or_path.strip().lower()]]  # preset names in any case, as --hardware takes them
    path = Path(name_or_path)
    if _exists(path) and path.is_dir():
        if not (path / "config.json").exists():
            raise ConfigError(f"model={short_repr(name_or_path)} is a directory without config.json", field="model",
                              value=name_or_path)
        path = path / "config.json"
    if not _exists(path):
        looks_like_path = any(c in name_or_path for c in "/\\") or path.suffix in (".json", ".yaml", ".yml")
        what = "file not found" if looks_like_path else "not a preset"
        if not looks_like_path and hardware_preset_name(name_or_path) is not None:
            what = "not a model preset (it is a hardware preset: give it as --hardware)"
        route = "" if looks_like_path else ("; a model without a preset: its Hugging Face config.json (or the "
                                            "folder holding it), or a YAML/JSON file of ModelSpec fields")
        raise ConfigError(f"model={short_repr(name_or_path)}: {what}{did_you_mean(name_or_path, MODELS)}{route}; "
                          f"presets: {', '.join(MODELS)}",
                          field="model", value=name_or_path, legal=MODELS)
    data = _read_mapping(path, "model")
    if "architectures" in data or "model_type" in data:
        # "deepseek-v2-lite.config.json" names deepseek-v2-lite (the Hugging Face file name kept as a suffix)
        stem = path.stem.removesuffix(".config") or path.stem
        try:
            return model_from_hf_config(data, name=path.resolve().parent.name if path.name == "config.json" else stem)
        except ConfigError as e:  # name the file: "config.json for X lacks ..." alone does not say which one
            raise ConfigError(f"{path}: {e}", field=e.field, value=e.value, legal=e.legal) from None
    _not_another_kind(data, path)
    data = _model_base(data, path)
    data.setdefault("name", path.stem)
    try:
        return ModelSpec(**data)
    except ValidationError as e:
        raise config_error(e, f"model {path}") from None


def _model_base(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """A model file's fields over its ``base`` preset's (``base: gpt3-175b`` with ``max_position_embeddings: 32768``:
    the preset with a longer learned position table), as a hardware file's ``base`` works; ``data`` itself without
    ``base``. The result names the file (its stem) unless it gives ``name``, and its ``source`` says what it
    changed.

    Raises:
        ConfigError: ``base`` that is not a model preset (lists them)."""
    if "base" not in data:
        return data
    base, over = data["base"], {k: v for k, v in data.items() if k != "base"}
    name = base.strip().lower() if isinstance(base, str) else None
    by_lower = {k.lower(): k for k in MODELS}
    if name not in by_lower:
        raise ConfigError(f"model {path}: base={short_repr(base)} is not a model preset{did_you_mean(str(base), MODELS)}"
                          f"; legal: {', '.join(MODELS)}", field="base", value=base, legal=list(MODELS))
    preset = MODELS[by_lower[name]]
    changed = ", ".join(f"{k} {v}" for k, v in over.items() if k not in ("name", "source"))
    source = f"{preset.source} (file {path.name}: {changed or 'no field changed'})" if preset.source else path.name
    return {**preset.model_dump(), "name": path.stem, "source": source, **over}


#: keys of a Hugging Face config.json (transformers' PretrainedConfig names) that a shardplan model file does not use
_HF_KEYS = {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "num_key_value_heads"}


def _not_another_kind(data: dict[str, Any], path: Path) -> None:
    """Refuse, with what it looks like, a model file that is a hardware file (its keys are HardwareSpec's or it names a
    hardware preset as ``base``) or a Hugging Face config.json without ``architectures`` / ``model_type`` (which say
    how to read it), instead of listing the model fields it lacks.

    Raises:
        ConfigError: naming the file and what to do.
    """
    from shardplan.specs.hardware import HardwareSpec
    keys = set(data)
    model_keys = set(ModelSpec.model_fields) - {"name", "source"}
    if not keys & model_keys and (keys & (set(HardwareSpec.model_fields) - {"name", "source", "sources"})
                                  or str(data.get("base", "")).lower() in HARDWARE):
        raise ConfigError(f"model {path}: this is a hardware file (its fields are a HardwareSpec's); give it as "
                          "--hardware, and a model preset, a model YAML (n_layers, d_model, n_heads, ffn_dim, "
                          "vocab_size) or a Hugging Face config.json as --model", field="model", value=str(path))
    if keys & _HF_KEYS and not keys & {"n_layers", "d_model", "n_heads", "ffn_dim"}:
        raise ConfigError(f"model {path}: a Hugging Face config without 'architectures' or 'model_type', which say how "
                          "to read it; add one (e.g. \"model_type\": \"llama\"), or write the model's fields "
                          "(n_layers, d_model, n_heads, ffn_dim, vocab_size)", field="model", value=str(path))


def is_file(name: str) -> bool:
    """``name`` is an existing regular file (False for a name the OS cannot even look up, e.g. too long)."""
    return _exists(Path(name)) and Path(name).is_file()


def _exists(path: Path) -> bool:
    """``path`` exists (False for a name the OS cannot look up, e.g. longer than NAME_MAX)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def hardware_document(source: str | None, hw: HardwareSpec, name: str) -> dict:
    """The YAML document a command that writes a hardware file (``calibrate -o``, ``bench -o``) extends:
    the source file's own mapping when ``source`` is a hardware file (its ``base:`` and overrides kept, so
    a cluster file's NIC stays; its ``framework`` section dropped), else ``{"base": <preset name>}``;
    ``name`` set, ``sources`` present.

    Raises:
        ConfigError: ``source`` is an unreadable file.
    """
    if source is not None and hardware_preset_name(source) is None and is_file(source):
        doc: dict = {k: v for k, v in _read_mapping(Path(source), "hardware").items() if k != "framework"}
    else:
        doc = {"base": hw.name}
    doc["name"] = name
    doc["sources"] = dict(doc.get("sources") or {})
    return doc


def load_hardware(name_or_path: str, **overrides: Any) -> HardwareSpec:
    """Hardware from a preset name or a YAML/JSON file of :class:`HardwareSpec` fields. A file may
    name a preset in ``base:`` and override some of its fields (e.g. a custom cluster's NIC).

    Raises:
        ConfigError: unknown preset (lists presets), unreadable file or invalid fields.
    """
    # preset names in any case, as --framework takes them, and the names HARDWARE_ALIASES lists ("h100", "trillium")
    preset = hardware_preset_name(name_or_path) if isinstance(name_or_path, str) else None
    if preset is not None and not is_file(name_or_path):  # a folder named "a100" does not hide the preset
        base = HARDWARE[preset]
        data: dict[str, Any] = {}
    else:
        _not_empty("hardware", name_or_path, HARDWARE)
        path = Path(name_or_path)
        if not _exists(path):
            raise ConfigError(f"hardware={short_repr(name_or_path)} is neither a preset nor a file"
                              f"{did_you_mean(name_or_path, HARDWARE)}; presets: "
                              f"{', '.join(HARDWARE)} (also read: h100, a100, trillium, v5p, ...; a part without a "
                              "preset, e.g. H100 PCIe, takes a hardware file with base: and its datasheet's fields)",
                              field="hardware", value=name_or_path, legal=HARDWARE)
        data = _read_mapping(path, "hardware")
        data.pop("framework", None)  # the framework the cluster was calibrated with: hardware_framework()
        had_base, base_name = "base" in data, data.pop("base", None)
        if had_base and base_name in (None, ""):  # `base:` written without a value
            raise ConfigError(f"hardware {short_repr(name_or_path)}: base is empty; presets: {', '.join(HARDWARE)} (or "
                              "leave base out and give every field)", field="base", value=base_name, legal=HARDWARE)
        if isinstance(base_name, str) and hardware_preset_name(base_name) is not None:  # "base: h100" too
            base_name = hardware_preset_name(base_name)
        if base_name is not None and (not isinstance(base_name, str) or base_name not in HARDWARE):
            file_note = (" (base: names a preset, not a file: give that file's own base: here and copy the fields it "
                         "sets, e.g. a `shardplan bench` YAML's measured ones)"
                         if isinstance(base_name, str) and base_name.lower().endswith((".yaml", ".yml", ".json")) else "")
            guess = did_you_mean(base_name, HARDWARE, prefixes=True) if isinstance(base_name, str) else ""
            raise ConfigError(f"hardware {short_repr(name_or_path)}: base={short_repr(base_name)} is not a hardware "
                              f"preset{file_note}{guess}; presets: {', '.join(HARDWARE)}", field="base",
                              value=base_name, legal=HARDWARE)
        base = HARDWARE[base_name] if base_name else None
        data.setdefault("name", path.stem)
        check_number_types(data, HardwareSpec, f"hardware {short_repr(name_or_path)}")
        _tpu_without_fp8(base, data, name_or_path)
    flags = {k: v for k, v in overrides.items() if v is not None}
    try:
        spec = HardwareSpec(**data) if base is None else HardwareSpec(**with_fields(base, data))
        # a flag (--scale-up-size) over the file's hardware, as over a preset's: a file's own host memory is that of
        # the host it describes, scaled like a preset's when the flag changes the devices per host
        return HardwareSpec(**with_fields(spec, flags)) if flags else spec
    except ValidationError as e:
        raise config_error(e, f"hardware {name_or_path}") from None
    except ConfigError as e:  # with_fields' scaled host memory names the field the file set
        raise ConfigError(f"hardware {name_or_path}: {e}", field=e.field, value=e.value, legal=e.legal) from None


#: a hardware file over a TPU base without fp8 describes another generation (which may have fp8) when its bf16 peak is
#: above the base's by more than this factor (each TPU generation at least doubled it: v4 275, v5p 459, v6e 918, TPU7x
#: 2,307 TFLOP/s; Cloud TPU docs); a derated or corrected bf16 peak of the same chip stays the same generation
NEW_GENERATION_BF16 = 1.2


def _as_number(value: Any) -> float | None:
    """``value`` as a float when it is a number or a text pydantic reads as one ('1.8e15'), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip()) if isinstance(value, str) else None
    except ValueError:
        return None


def _tpu_without_fp8(base, data: dict, name_or_path: str) -> None:
    """Refuse an fp8 peak added to a TPU generation whose MXU has no fp8 mode. Every TPU preset shares the 'tpu'
    architecture (:data:`~shardplan.specs.hardware.FP8_ARCHS` admits it for TPU7x), so the generation is the base
    preset: a base without ``peak_flops_fp8`` (v4, v5e, v5p, v6e: bf16 and int8 only, Cloud TPU system-architecture
    pages) keeps its bf16 MXU unless the file also gives a ``peak_flops_bf16`` above :data:`NEW_GENERATION_BF16` x the
    base's (a generation described from its own datasheet). A quoted number counts (pydantic reads it as one).

    Raises:
        ConfigError: ``peak_flops_fp8`` over such a base (the base and the legal alternatives named).
    """
    fp8, bf16 = _as_number(data.get("peak_flops_fp8")), _as_number(data.get("peak_flops_bf16"))
    if base is None or base.kind != "tpu" or base.peak_flops_fp8 is not None or fp8 is None:
        return
    if bf16 is not None and bf16 > NEW_GENERATION_BF16 * base.peak_flops_bf16:  # another generation's datasheet
        return
    fp8_tpus = [k for k, h in HARDWARE.items() if h.kind == "tpu" and h.peak_flops_fp8]
    raise ConfigError(f"hardware {short_repr(name_or_path)}: peak_flops_fp8={fp8:.4g} on base={base.name}, "
                      f"whose MXU has no fp8 mode (bf16 and int8 only, Cloud TPU docs), so fp8 would run at the bf16 "
                      f"rate at best; legal: leave peak_flops_fp8 out, base: {', '.join(fp8_tpus)}, or give another "
                      f"generation's own peak_flops_bf16 (above {NEW_GENERATION_BF16:g} x {base.peak_flops_bf16:.4g}) "
                      "with it", field="peak_flops_fp8", value=data["peak_flops_fp8"], legal=fp8_tpus)


def hardware_framework(name_or_path: str) -> str | dict | None:
    """The framework profile a hardware *file* names in its ``framework:`` key (a profile name, a
    profile file, or a mapping of ``base`` plus FrameworkProfile fields, as ``shardplan calibrate -o``
    and ``benchmarks/usp_grid.py --fit -o`` write it: the constants were fitted with that profile, so
    the file predicts with it unless ``--framework`` says otherwise); None for presets and files
    without the key.

    Raises:
        ConfigError: an unreadable file or a ``framework`` value that is neither a string nor a mapping.
    """
    if name_or_path in HARDWARE or not Path(name_or_path).is_file():
        return None
    value = _read_mapping(Path(name_or_path), "hardware").get("framework")
    if value is not None and not isinstance(value, (str, dict)):
        raise ConfigError(f"framework={short_repr(value)} in hardware file {short_repr(name_or_path)}: give a profile "
                          "name, a profile file or a mapping of base + profile fields", field="framework", value=value)
    return value
