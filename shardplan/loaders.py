"""Read the input files: models and hardware from preset names, Hugging Face ``config.json`` files or
YAML/JSON specs, and plan JSON files. :mod:`shardplan.inputs` turns command-line values into specs
with these.

Nothing here touches the network: a Hugging Face config must be a local file (or a directory that
contains ``config.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from shardplan.errors import ConfigError
from shardplan.hf_config import FAMILIES, YAML_ROUTE, spec_fields
from shardplan.presets.hardware import HARDWARE
from shardplan.presets.models import MODELS
from shardplan.specs.hardware import HardwareSpec
from shardplan.specs.model import ModelSpec

#: ``architectures`` values understood by :func:`model_from_hf_config` (:mod:`shardplan.hf_config`).
HF_ARCHITECTURES = tuple(FAMILIES)


def _read_mapping(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}", field="path", value=str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text", field="path", value=str(path)) from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path} is not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {e}",
                          field="path", value=str(path)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must contain a mapping of fields, got {type(data).__name__}",
                          field="path", value=str(path))
    return data


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
    where = f"field {loc!r}" if context else loc
    return ConfigError(f"{prefix}{where}: {first['msg']} (got {first.get('input')!r})", field=loc,
                       value=first.get("input"))


def read_plan_file(path: str | Path) -> dict[str, Any]:
    """The ``parallel`` object of a plan JSON file: ``{"parallel": {...}}`` (one plan of
    ``shardplan plan --json``), ``{"plans": [{...}]}`` (its first plan) or a bare mapping of
    ParallelConfig fields.

    Raises:
        ConfigError: unreadable file, invalid JSON, or no parallel object.
    """
    def err(msg: str) -> ConfigError:
        return ConfigError(f"--plan {path} {msg}", field="plan", value=str(path))
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigError(f"cannot read --plan {path}: {e.strerror}", field="plan", value=str(path)) from None
    except json.JSONDecodeError as e:
        raise err(f"is not valid JSON: {e}") from None
    except UnicodeDecodeError:
        raise err("is not UTF-8 text") from None
    if isinstance(data, dict) and "plans" in data:
        if not isinstance(data["plans"], list) or not all(isinstance(x, dict) for x in data["plans"]):
            raise ConfigError(f"--plan {path}: 'plans' must be a list of plan objects", field="plan", value=str(path))
        if not data["plans"]:
            raise err("has an empty 'plans' list")
        data = data["plans"][0]
    if isinstance(data, dict) and "parallel" in data:
        data = data["parallel"]
    if not isinstance(data, dict):
        raise err("holds no parallel object")
    return data


def model_from_hf_config(cfg: dict[str, Any], name: str = "hf-model") -> ModelSpec:
    """Translate a Hugging Face ``config.json`` mapping into a :class:`ModelSpec`.

    Supported ``architectures``: :data:`HF_ARCHITECTURES` (Llama 2/3/4, Mistral, Mixtral, Qwen2/2.5,
    Qwen3, Qwen3-MoE, Gemma 1/2/3, Phi-3/4, DeepSeek-V2/V3, GPT-OSS, OLMo 2, Falcon, GPT-2,
    GPT-NeoX, BLOOM); the translation of each is in :mod:`shardplan.hf_config`.

    Raises:
        ConfigError: for an unsupported architecture (named, with the supported list and the YAML
            route) or a missing key.
    """
    supported = f"supported: {', '.join(HF_ARCHITECTURES)}; {YAML_ROUTE}"
    archs = cfg.get("architectures")
    if isinstance(archs, str):
        archs = [archs]
    if archs is None:
        raise ConfigError(f"config.json has no 'architectures' list (model_type={cfg.get('model_type')!r}); "
                          f"{supported}", field="architectures", value=None, legal=HF_ARCHITECTURES)
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise ConfigError(f"architectures must be a list of strings, got {archs!r}; {supported}",
                          field="architectures", value=archs, legal=HF_ARCHITECTURES)
    arch = archs[0] if archs else None
    if arch not in HF_ARCHITECTURES:
        raise ConfigError(f"architectures={archs!r} is not supported; {supported}",
                          field="architectures", value=arch, legal=HF_ARCHITECTURES)
    try:
        spec = spec_fields(arch, cfg)
    except KeyError as e:
        raise ConfigError(f"config.json for {arch} lacks the key {e.args[0]!r}", field=e.args[0]) from None
    try:
        return ModelSpec(name=name, source=f"Hugging Face config.json ({arch})", **spec)
    except ValidationError as e:
        raise config_error(e, f"model {name}") from None


def load_model(name_or_path: str) -> ModelSpec:
    """A model from a preset name, a Hugging Face ``config.json`` (file or directory) or a YAML/JSON
    file with :class:`ModelSpec` fields.

    Raises:
        ConfigError: unknown preset (lists presets), unreadable file, unsupported architecture,
            or invalid fields.
    """
    if name_or_path in MODELS:
        return MODELS[name_or_path]
    path = Path(name_or_path)
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ConfigError(f"model={name_or_path!r} is a directory without config.json", field="model",
                              value=name_or_path)
        path = path / "config.json"
    if not path.exists():
        looks_like_path = any(c in name_or_path for c in "/\\") or path.suffix in (".json", ".yaml", ".yml")
        what = "file not found" if looks_like_path else "not a preset"
        raise ConfigError(f"model={name_or_path!r}: {what}; presets: {', '.join(MODELS)}",
                          field="model", value=name_or_path, legal=MODELS)
    data = _read_mapping(path)
    if "architectures" in data or "model_type" in data:
        return model_from_hf_config(data, name=path.parent.name if path.name == "config.json" else path.stem)
    data.setdefault("name", path.stem)
    try:
        return ModelSpec(**data)
    except ValidationError as e:
        raise config_error(e, f"model {path}") from None


def load_hardware(name_or_path: str, **overrides: Any) -> HardwareSpec:
    """Hardware from a preset name or a YAML/JSON file of :class:`HardwareSpec` fields. A file may
    name a preset in ``base:`` and override some of its fields (e.g. a custom cluster's NIC).

    Raises:
        ConfigError: unknown preset (lists presets), unreadable file or invalid fields.
    """
    if name_or_path in HARDWARE:
        base = HARDWARE[name_or_path]
        data: dict[str, Any] = {}
    else:
        path = Path(name_or_path)
        if not path.exists():
            raise ConfigError(f"hardware={name_or_path!r} is neither a preset nor a file; presets: "
                              f"{', '.join(HARDWARE)}", field="hardware", value=name_or_path, legal=HARDWARE)
        data = _read_mapping(path)
        base_name = data.pop("base", None)
        if base_name is not None and (not isinstance(base_name, str) or base_name not in HARDWARE):
            raise ConfigError(f"base={base_name!r} is not a hardware preset; presets: {', '.join(HARDWARE)}",
                              field="base", value=base_name, legal=HARDWARE)
        base = HARDWARE[base_name] if base_name else None
        data.setdefault("name", path.stem)
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        if base is None:
            return HardwareSpec(**data)
        return HardwareSpec(**{**base.model_dump(), **data})
    except ValidationError as e:
        raise config_error(e, f"hardware {name_or_path}") from None
