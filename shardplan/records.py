"""Run records: one measured training run per line of a JSON Lines file (issue 10, part 1).

A :class:`RunRecord` says what ran (model, hardware, device count, sequence length, global batch,
the whole layout as a :class:`~shardplan.parallel.ParallelConfig`, precision policy, framework
profile) and what was measured (``status``; tokens/s per device, step time, allocator peak memory,
optional bus bandwidth per collective). The schema is this pydantic model; docs/calibration.md
describes it field by field. :func:`write_records` / :func:`read_records` round-trip a file;
``benchmarks/usp_grid.py --to-records`` converts the shared H100 grid as the worked example.

Units: seconds, bytes, tokens/s, bytes/s (bus bandwidth in nccl-tests' accounting).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shardplan.parallel import ParallelConfig
from shardplan.specs.model import ModelSpec

Status = Literal["ok", "oom", "failed"]


class RunRecord(BaseModel):
    """One measured run.

    Attributes:
        model: a preset name, a path to a model config, or the inline :class:`ModelSpec`.
        hardware: a hardware preset name or a hardware YAML path (``--hardware``).
        devices: accelerators the run used.
        seq_len: tokens per sequence.
        global_batch_size: sequences per optimizer step.
        layout: every layout field (dp, tp, pp, cp, ep, zero_stage, dp_shard, sp, microbatch_size,
            schedule, virtual_stages, pp_layers, recompute, ...).
        precision: precision policy name (``bf16-mixed``, ...).
        framework: framework profile name (``--framework``).
        status: 'ok' (finished), 'oom' (out of memory), 'failed' (crashed for another or an
            unknown reason).
        tokens_per_s_per_device: measured throughput (tokens/s per device), None unless ok.
        step_time_s: median step time after warm-up (seconds), None unless ok.
        peak_memory_bytes: allocator peak (``torch.cuda.max_memory_reserved`` or the compiled
            program's peak; bytes), None if not measured.
        busbw: optional measured bus bandwidth, ``{op: {group size: bytes/s}}``.
        source: where the measurement comes from (file, row, date).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str | ModelSpec
    hardware: str
    devices: int = Field(ge=1)
    seq_len: int = Field(ge=1)
    global_batch_size: int = Field(ge=1)
    layout: ParallelConfig
    precision: str = "bf16-mixed"
    framework: str = "megatron"
    status: Status
    tokens_per_s_per_device: float | None = Field(default=None, gt=0)
    step_time_s: float | None = Field(default=None, gt=0)
    peak_memory_bytes: float | None = Field(default=None, gt=0)
    busbw: dict[str, dict[int, float]] | None = None
    source: str = ""


def write_records(path: Path, records: Iterable[RunRecord], append: bool = False) -> int:
    """Write ``records`` to ``path`` as JSON Lines (one record per line); returns how many."""
    n = 0
    with Path(path).open("a" if append else "w") as f:
        for r in records:
            f.write(r.model_dump_json(exclude_none=True) + "\n")
            n += 1
    return n


def read_records(path: Path) -> list[RunRecord]:
    """The records of a JSON Lines file (blank lines skipped).

    Raises:
        pydantic.ValidationError: for a line that is not a valid record (the message names the field).
    """
    return [RunRecord.model_validate_json(line) for line in Path(path).read_text().splitlines() if line.strip()]
