"""Run records: what a user measured, in one documented format (issue 10).

One JSON object per line (JSON Lines). The schema is :class:`RunRecord` (docs/calibration.md lists
every field): the model (a preset name, a config path, or an inline :class:`ModelSpec`), the
hardware, the device count, the batch, the layout (every :class:`~shardplan.parallel.ParallelConfig`
field), precision and framework, and what happened: ``status`` ('ok', 'oom' or 'failed'), the
measured tokens/s per device, step time and peak memory, optionally the bus bandwidth per
collective. ``shardplan calibrate`` fits a cluster's constants to them; ``shardplan train --record``
and ``benchmarks/usp_grid.py --to-records`` write them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from shardplan import limits as L
from shardplan.errors import ConfigError
from shardplan.parallel import ParallelConfig
from shardplan.specs.model import ModelSpec
from shardplan.specs.training import OptimizerDtype

#: cap on a records file (bytes): a calibration needs thousands of lines, not gigabytes
MAX_RECORDS_BYTES = 64 * 2**20
#: a record may give both tokens_per_s_per_device and step_time_s; they must agree this closely (the step time a
#: framework logs is rounded, and a median step against a mean throughput differs by a few percent)
THROUGHPUT_AGREEMENT = 0.10
#: smallest peak_memory_bytes a record may hold (1 MiB): below it the number is not a device peak in bytes
MIN_PEAK_BYTES = 2**20
#: smallest bus bandwidth a record's ``busbw`` may hold (1 MB/s): below it the number is not bytes/s (a GB/s figure)
MIN_BUSBW = 1e6
#: the ``sources`` key under which ``calibrate --force`` records why the fit it wrote was poor
#: (``shardplan.cli.common.hardware_file_notes`` repeats it on every use of the file; the 80% band then quotes no
#: in-sample error of the file, :func:`shardplan.accuracy_band.band_for`)
POOR_FIT_SOURCE = "poor_fit"
#: the ``sources`` key of a hardware file ``calibrate --no-cross-validation`` wrote: its held-out error was not checked
#: (new-user pass 54b: the check that refused a fit was skipped and the file looked clean)
UNCHECKED_SOURCE = "not_cross_validated"


class RunRecord(BaseModel):
    """One measured training run.

    Attributes:
        model: preset name or config path (as ``--model`` takes it), or an inline ModelSpec.
        hardware: preset name or hardware YAML path (as ``--hardware`` takes it).
        devices: accelerators in the run.
        seq_len: tokens per sequence.
        global_batch_size: sequences per optimizer step.
        parallel: the layout (ParallelConfig fields; ``dp`` may be omitted).
        precision: precision policy name (``--precision``, any case; absent: the framework profile's default,
            ``FrameworkProfile.default_precision`` (maxtext: fp32-params), else bf16-mixed; on hardware without
            bf16 its fp16 counterpart, ``shardplan.inputs.fp16_counterpart``).
        optimizer_dtype: optimizer-state dtype (``--optimizer-dtype``: fp32, bf16-moments or bf16; absent:
            the framework profile's, else fp32).
        moe_routing: MoE routing of the run (``--moe-routing``: uniform, or round_robin for a synthetic balanced
            gate that sends each token to contiguous experts).
        moe_capacity_factor: the run's MoE token capacity (``--moe-capacity-factor``: tokens each expert takes, as a
            multiple of an even share; a token-dropping run such as MaxText's ``capacity_factor: 1.25`` recipes);
            absent: dropless.
        dropout: the run kept dropout on (stock Megatron-LM's ``--hidden-dropout`` / ``--attention-dropout`` 0.1,
            what ``shardplan import`` reads as ``dropout``: their masks are stored and their element-wise traffic
            counted, as ``--dropout`` prices it); absent: off.
        framework: framework profile name (``--framework``); absent: the profile ``shardplan calibrate`` fits with
            (its --framework, the hardware file's, else megatron on GPUs and maxtext on TPUs: a TPU user's records
            without the field were priced with the megatron profile, the record's old default).
        status: 'ok' (ran), 'oom' (out of memory) or 'failed' (crashed for another reason).
        tokens_per_s_per_device: measured throughput (tokens/s per device), when it ran.
        step_time_s: measured median step time (seconds), when it ran.
        peak_memory_bytes: measured peak device memory (bytes, at least 1 MiB: a smaller number is GB or GiB
            given as bytes; allocator reserved peak), if known.
        busbw: optional bus bandwidth the run's job measured, ``{op: {group size: bytes/s}}`` (nccl-tests
            accounting; op one of AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv). ``shardplan
            calibrate`` reads it only to leave out runs on degraded hardware (below a third of the records'
            median for the same op and group size, :func:`shardplan.calibrate.degraded_cases`); a cluster's
            bandwidth table goes in the hardware file's ``measured_busbw``, which ``shardplan bench`` writes.
        source: where the numbers come from (free text).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str | ModelSpec
    hardware: str
    devices: int = Field(ge=1, le=2**20)
    seq_len: int = Field(ge=1, le=2**24)
    global_batch_size: int = Field(ge=1, le=2**32)
    parallel: ParallelConfig
    precision: str | None = None
    optimizer_dtype: OptimizerDtype | None = None
    moe_routing: Literal["uniform", "round_robin"] = "uniform"
    moe_capacity_factor: float | None = Field(default=None, ge=L.MIN_CAPACITY_FACTOR, le=L.MAX_CAPACITY_FACTOR)
    dropout: bool = False
    framework: str | None = None
    status: Literal["ok", "oom", "failed"] = "ok"
    # physical ranges (a record outside them is a typo or a unit mix-up, not a run): 1e-3 to 1e9 tokens/s per
    # device, 1 us to 1e7 s per step, 1 MiB to 2^50 B of peak memory (shardplan.limits' memory bound; no device
    # peaks below 1 MiB, so a smaller number is GB or GiB given as bytes: _peak_in_bytes)
    tokens_per_s_per_device: float | None = Field(default=None, ge=1e-3, le=1e9)
    step_time_s: float | None = Field(default=None, ge=1e-6, le=1e7)
    peak_memory_bytes: float | None = Field(default=None, le=2**50)
    busbw: dict[Literal["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv"],
                dict[Annotated[int, Field(ge=2, le=2**20)], Annotated[float, Field(gt=0, le=1e15, allow_inf_nan=False)]]
                ] | None = None
    source: str = ""
    #: where the record was read ("runs.jsonl:3", a CSV's "runs.csv:5"); not part of the record
    _origin: str | None = PrivateAttr(default=None)

    @property
    def origin(self) -> str | None:
        """The file and line the record was read from (:func:`read_records`, the CSV import), or None."""
        return self._origin

    def at(self, origin: str) -> "RunRecord":
        """This record, marked as read from ``origin`` (a file and line); returns itself."""
        self._origin = origin
        return self

    def __eq__(self, other: object) -> bool:
        """Records are equal when their fields are (where each was read from is not part of the record)."""
        if not isinstance(other, RunRecord):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, v: Any) -> Any:
        """``status`` in any case ('OK' is 'ok'), as ``record import`` reads a CSV's status column and the records'
        precision and framework names are read."""
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("model", mode="before")
    @classmethod
    def _model(cls, v: Any) -> Any:
        """An inline model (an object) is validated as a ModelSpec here, so that its error names the spec's field
        (``d_model is missing``), not the text branch of ``str | ModelSpec``; a name stays text."""
        if isinstance(v, dict):
            try:
                return ModelSpec.model_validate(v)
            except ValidationError as e:
                from shardplan.loaders import config_error
                err = config_error(e)
                raise ConfigError(f"model (an inline ModelSpec): {err}; legal: a preset name, a config file path, or an "
                                  "object with ModelSpec's fields (n_layers, d_model, n_heads, ffn_dim, vocab_size, ...)",
                                  field=f"model.{err.field}", value=err.value, legal=err.legal) from None
        return v

    @field_validator("parallel", mode="before")
    @classmethod
    def _virtual_stages_mean_interleaved(cls, v: Any) -> Any:
        """A layout with ``virtual_stages`` > 1 and no ``schedule`` runs the interleaved schedule, as ``shardplan
        estimate`` reads it (virtual stages are its model chunks, Narayanan et al. 2021 Sec. 2.2.2): a new user's
        NeMo records with a VPP column and no schedule were left out of the fit as "needs schedule='interleaved'"."""
        if (isinstance(v, dict) and "schedule" not in v and isinstance(v.get("virtual_stages"), int)
                and not isinstance(v.get("virtual_stages"), bool) and v["virtual_stages"] > 1):
            return {**v, "schedule": "interleaved"}
        return v

    @field_validator("optimizer_dtype", "moe_routing", mode="before")
    @classmethod
    def _choice_case(cls, v):
        """Choice names in any case, as the command-line flags take them (``BF16`` is ``bf16``)."""
        return v.lower() if isinstance(v, str) else v

    @field_validator("precision", mode="before")
    @classmethod
    def _known_precision(cls, v):
        """A precision policy name (any case, as ``--precision`` takes it: ``FP16-Mixed`` is ``fp16-mixed``); an
        unknown one is refused when the record is read, naming the legal policies."""
        from shardplan.specs.training import precision_policy
        if isinstance(v, str):
            v = v.lower()
            precision_policy(v)  # ConfigError naming the legal policies for an unknown name
        return v

    @field_validator("framework")
    @classmethod
    def _known_framework(cls, v: str | None) -> str | None:
        """A built-in profile name (case-insensitive) or a profile file name (.yaml / .yml / .json), read
        when the record is used; None (absent) leaves it to calibrate."""
        from shardplan.presets.frameworks import framework_profile
        if v is not None and not v.lower().endswith((".yaml", ".yml", ".json")):
            framework_profile(v)  # ConfigError naming the legal profiles for an unknown name
        return v

    @field_validator("busbw", mode="before")
    @classmethod
    def _busbw_strict(cls, v: Any) -> Any:
        """Group sizes written as whole numbers once each (``"8"``, not ``"08"``, ``" 8"`` or ``"8.0"``, which would
        merge with it) and bandwidths that are numbers of at least :data:`MIN_BUSBW` bytes/s (not booleans or
        text: ``true`` would read as 1 B/s). Other shapes go to the field's own validation.

        Raises:
            ConfigError: naming ``busbw.OP.SIZE`` and the value."""
        if not isinstance(v, dict):
            return v
        for op, sizes in v.items():
            if not isinstance(sizes, dict):
                continue
            for n, bw in sizes.items():
                where = f"busbw.{op}.{n}"
                if isinstance(n, str) and not (n.isdigit() and str(int(n)) == n):
                    raise ConfigError(f"{where}: group size {n!r} is not written as a whole number; legal: a group "
                                      "size such as \"8\" (once per collective)", field=where, value=n)
                if isinstance(bw, bool) or not isinstance(bw, (int, float)):
                    raise ConfigError(f"{where}={bw!r} is not a number; legal: bytes/s, e.g. 4.5e11", field=where,
                                      value=str(bw))
                if bw < MIN_BUSBW:
                    raise ConfigError(f"{where}={bw:g} is below {MIN_BUSBW:g} B/s (1 MB/s): not a bus bandwidth in "
                                      "bytes/s (did you give GB/s? 450 GB/s is 4.5e11); legal: at least "
                                      f"{MIN_BUSBW:g}", field=where, value=bw, legal=[MIN_BUSBW, 1e15])
        return v

    @field_validator("peak_memory_bytes")
    @classmethod
    def _peak_in_bytes(cls, v: float | None) -> float | None:
        """A peak of at least :data:`MIN_PEAK_BYTES` (1 MiB): a training run's device peak is never smaller, so a
        smaller number is in other units (80 for 80 GB)."""
        if v is not None and v < MIN_PEAK_BYTES:
            raise ConfigError(f"peak_memory_bytes={v:g} is below 1 MiB: not a device peak in bytes (did you give GB or "
                              f"GiB? 80 GB is 8e10); legal: {MIN_PEAK_BYTES:,} to {2**50:,} B (bytes)",
                              field="peak_memory_bytes", value=v, legal=[MIN_PEAK_BYTES, 2**50])
        return v

    @model_validator(mode="after")
    def _busbw_groups(self) -> "RunRecord":
        """A measured group is at most the run's devices."""
        for op, sizes in (self.busbw or {}).items():
            for n in sizes:
                if n > self.devices:
                    raise ConfigError(f"busbw.{op}.{n}: a group of {n:,} devices in a run of {self.devices:,}; legal: "
                                      f"group sizes 2 to {self.devices:,}", field=f"busbw.{op}.{n}", value=n,
                                      legal=[2, self.devices])
        return self

    @model_validator(mode="after")
    def _outcome(self) -> "RunRecord":
        if self.status == "ok" and self.tokens_per_s_per_device is None and self.step_time_s is None:
            raise ConfigError("a record with status 'ok' needs tokens_per_s_per_device or step_time_s",
                              field="status", value=self.status)
        if self.status != "ok" and (self.tokens_per_s_per_device is not None or self.step_time_s is not None):
            raise ConfigError(f"a record with status {self.status!r} has a throughput or step time: a run that did "
                              "not finish has none; legal: status 'ok', or drop tokens_per_s_per_device / "
                              "step_time_s", field="status", value=self.status)
        if self.tokens_per_s_per_device is not None and self.step_time_s is not None:
            implied = self.seq_len * self.global_batch_size / self.step_time_s / self.devices
            if abs(implied / self.tokens_per_s_per_device - 1) > THROUGHPUT_AGREEMENT:
                raise ConfigError(
                    f"tokens_per_s_per_device={self.tokens_per_s_per_device:g} but step_time_s={self.step_time_s:g} "
                    f"gives seq_len x global_batch_size / step_time_s / devices = {implied:,.6g}: the two disagree by "
                    f"more than {THROUGHPUT_AGREEMENT:.0%}; legal: one of them, or values of the same run",
                    field="step_time_s", value=self.step_time_s)
        return self

    def measured_tokens_per_s_per_device(self) -> float | None:
        """Tokens/s per device: the recorded value, or ``seq_len x global_batch_size / step_time_s /
        devices``; None when the run did not finish."""
        if self.tokens_per_s_per_device is not None:
            return self.tokens_per_s_per_device
        if self.step_time_s is not None:
            return self.seq_len * self.global_batch_size / self.step_time_s / self.devices
        return None


def _strict_types(data):
    """``data`` (a record's parsed JSON) after refusing a boolean for a number and anything but a boolean for a
    switch, in the record and its ``parallel`` layout (``"tp": true`` would be read as tp=1, ``"sp": "false"`` as
    True: :func:`shardplan.loaders.check_number_types`, as for hardware and profile files).

    Raises:
        ConfigError: naming the field (``parallel`` for a layout field) and the value.
    """
    from shardplan.loaders import check_number_types
    if isinstance(data, dict):
        # the nested specs first, against their own fields (the record's check would see their booleans)
        if isinstance(data.get("parallel"), dict):
            check_number_types(data["parallel"], ParallelConfig, "parallel")
        if isinstance(data.get("model"), dict):
            check_number_types(data["model"], ModelSpec, "model")
        # a mapping where a name belongs (an inline hardware spec) is left to the record's own type error
        check_number_types({k: v for k, v in data.items() if k not in ("parallel", "model") and not isinstance(v, dict)},
                           RunRecord, "record")
    return data


def _whole_json_hint(text: str) -> str:
    """A hint when ``text`` is one pretty-printed JSON document (a ``plan --json`` / ``estimate --json`` output, a
    spec file) or a YAML mapping (a hardware or cluster file: calibrate's arguments swapped) rather than JSON Lines:
    '' otherwise."""
    from shardplan.loaders import PLAN_DOCUMENT, document_kind
    try:
        doc = json.loads(text)
    except ValueError:
        return _yaml_hint(text)
    what = PLAN_DOCUMENT if document_kind(doc) == PLAN_DOCUMENT else "one JSON document"
    return (f"; the file is {what} spread over several lines, not run records: a records file holds one JSON "
            "object per line (docs/calibration.md; `shardplan train --record` and `record import` write one)")


def _yaml_hint(text: str) -> str:
    """The hint of :func:`_whole_json_hint` for YAML text: a mapping with a hardware file's keys names it as one."""
    import yaml
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return ""
    if isinstance(doc, dict) and ({"base", "name", "matmul_efficiency", "hbm_bytes", "framework"} & set(doc)):
        return ("; the file is a hardware or cluster file (YAML), not run records: were the arguments swapped? "
                "`shardplan calibrate RECORDS --hardware FILE`")
    return ""


def read_records(path: str | Path) -> list[RunRecord]:
    """Records of a JSON Lines file (blank lines and ``#`` comments skipped).

    Raises:
        ConfigError: unreadable, too large (:data:`MAX_RECORDS_BYTES`) or a line that is not a
            valid record (names the line).
    """
    from shardplan.loaders import no_repeated_json_keys

    p = Path(path)
    if not p.exists():
        raise ConfigError(f"records file {str(path)[:80]!r} does not exist", field="records", value=str(path))
    if not p.is_file():
        raise ConfigError(f"records file {str(path)[:80]!r} is not a regular file", field="records", value=str(path))
    if p.stat().st_size > MAX_RECORDS_BYTES:
        raise ConfigError(f"records file {p} is larger than {MAX_RECORDS_BYTES // 2**20} MiB",
                          field="records", value=str(p))
    try:
        text = p.read_text(encoding="utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise ConfigError(f"records file {p} is not UTF-8 text ({e.reason} at byte {e.start})", field="records",
                          value=str(p)) from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            data = json.loads(line, object_pairs_hook=no_repeated_json_keys)  # as every plan / spec file
            out.append(_model_beside(RunRecord.model_validate(_strict_types(data)), p).at(f"{p}:{i}"))
        except ValidationError as e:
            from shardplan.loaders import config_error
            err = config_error(e)
            raise ConfigError(f"{p}:{i}: not a run record: {err}", field=err.field, value=err.value,
                              legal=err.legal) from None
        except (ValueError, ConfigError) as e:  # JSONDecodeError, or a key given twice
            # the whole-file hint only for a line that is not JSON (a pretty-printed document's first line), not for
            # a line that is one object with a repeated key (breaker 58)
            hint = _whole_json_hint(text) if isinstance(e, json.JSONDecodeError) else (
                "; give each key once per record" if "given twice" in str(e) else "")
            raise ConfigError(f"{p}:{i}: not a run record: {str(e).splitlines()[0][:160]}{hint}",
                              field="records", value=f"{p}:{i}") from None
        except RecursionError:
            raise ConfigError(f"{p}:{i}: not a run record: the JSON nests too deeply", field="records",
                              value=f"{p}:{i}") from None
    if not out:
        raise ConfigError(f"{p} holds no run records", field="records", value=str(p))
    return out


def _model_beside(rec: "RunRecord", records_path: Path) -> "RunRecord":
    """``rec`` with a relative model path that names no file from the working directory but one beside the records
    file read as that file (records kept next to their model YAMLs work from any folder); presets and other names
    are left alone."""
    if not isinstance(rec.model, str) or Path(rec.model).is_absolute() or Path(rec.model).exists():
        return rec
    beside = records_path.parent / rec.model
    return rec.model_copy(update={"model": str(beside)}) if beside.is_file() else rec


def check_records_target(flag: str, path: str | Path) -> None:
    """Before a run appends to ``path``: a file that exists and is not empty must hold run records
    (:func:`read_records`), or the appended line would be lost in it (a plan JSON, a metrics file).

    Raises:
        ConfigError: naming the option, the file and its first bad line.
    """
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return
    try:
        read_records(p)
    except ConfigError as e:
        raise ConfigError(f"{flag} {p} holds something other than run records ({str(e)[:200]}); a record appended to "
                          "it could not be read back; legal: a JSON Lines file of run records, or a new file",
                          field=flag.lstrip("-"), value=str(p)) from None


def write_records(path: str | Path, records: Iterable[RunRecord], append: bool = False) -> int:
    """Write (or with ``append`` add) records as JSON Lines; returns how many. A record's ``parallel`` holds the layout
    fields it was given (``model_fields_set``); give every field to record a layout whole (``train --record`` does).
    Appending to a file whose last line has no newline first ends that line (a hand-edited file), so the new record
    starts a line of its own."""
    n = 0
    p = Path(path)
    if append and p.is_file() and p.stat().st_size > 0:
        with p.open("rb") as f:
            f.seek(-1, 2)
            if f.read(1) != b"\n":
                with p.open("a", encoding="utf-8") as g:
                    g.write("\n")
    with p.open("a" if append else "w", encoding="utf-8") as f:
        for r in records:
            data = r.model_dump(mode="json", exclude_none=True)
            # the layout fields the record was given, not the ParallelConfig defaults of the others: calibrate sets
            # those as `estimate` does under the fitted profile (calibrate.with_layout_defaults: its ZeRO stage, sp
            # with tp > 1), which a written default (zero_stage 0, sp false) would override (a new user's imported
            # CSV was fitted as DDP without sp: memory median |error| 80% against 12.5% from the same CSV directly)
            data["parallel"] = r.parallel.model_dump(mode="json", exclude_unset=True, exclude_none=True)
            f.write(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
            n += 1
    return n
