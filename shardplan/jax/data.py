"""Byte-level text data, packed to ``seq_len + 1`` tokens and sharded over the batch mesh axes.

Tokenizer: one token per byte (vocabulary 256), so no tokenizer files are needed. The default
corpus is the Python standard library's own source files, which exist offline on every machine;
any text files or directories can be passed instead.

Every process builds the same global batch deterministically (seeded) and contributes only the
rows its devices hold (:func:`jax.make_array_from_callback`), so single- and multi-process runs see
identical data.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterator, Sequence
from pathlib import Path

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from shardplan.errors import ConfigError
from shardplan.jax.mesh import BATCH_AXES

BYTE_VOCAB = 256


def stdlib_files() -> list[Path]:
    """The standard library's top-level ``*.py`` files, sorted (the default corpus)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    if not root.is_dir():
        root = Path(os.__file__).parent
    return sorted(root.glob("*.py"))


def _expand(paths: Sequence[str | os.PathLike]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += sorted(f for f in path.rglob("*") if f.is_file())
        elif path.is_file():
            out.append(path)
        else:
            raise ConfigError(f"data={str(p)!r} is neither a file nor a directory", field="data", value=str(p))
    return out


def load_tokens(paths: Sequence[str | os.PathLike] | None = None, max_bytes: int = 8 << 20) -> np.ndarray:
    """Read text files as bytes (the tokens), documents joined by a NUL byte.

    Args:
        paths: files or directories (recursively); default :func:`stdlib_files`.
        max_bytes: stop after this many bytes.

    Returns:
        uint8 array of tokens.

    Raises:
        ConfigError: a path that does not exist, or a corpus with no bytes.
    """
    files = stdlib_files() if not paths else _expand(paths)
    chunks, total = [], 0
    for f in files:
        try:
            b = f.read_bytes()
        except OSError:
            continue
        chunks.append(b + b"\0")
        total += len(b) + 1
        if total >= max_bytes:
            break
    data = np.frombuffer(b"".join(chunks)[:max_bytes], dtype=np.uint8)
    if data.size == 0:
        raise ConfigError(f"the corpus {[str(p) for p in (paths or [])] or 'stdlib'} has no bytes",
                          field="data", value=[str(p) for p in (paths or [])])
    return data


class PackedBatches:
    """Deterministic batches of packed sequences.

    The token stream is cut into consecutive windows of ``seq_len + 1`` tokens (inputs and shifted
    targets), shuffled once per epoch with ``seed``.

    Args:
        tokens: uint8 token stream.
        seq_len: tokens per sequence s.
        global_batch_size: sequences per step B.
        seed: shuffle seed.

    Raises:
        ConfigError: fewer tokens than one global batch needs.
    """

    def __init__(self, tokens: np.ndarray, seq_len: int, global_batch_size: int, seed: int = 0):
        n = tokens.size // (seq_len + 1)
        if n < global_batch_size:
            raise ConfigError(f"the corpus gives {tokens.size:,} tokens (its bytes and one separator per file) = {n} "
                              f"sequences of seq_len+1 = {seq_len + 1}, fewer than global_batch_size="
                              f"{global_batch_size}; legal: at least {global_batch_size * (seq_len + 1):,} tokens "
                              "(more text), or a smaller --seq-len / --global-batch", field="data", value=tokens.size)
        self.windows = tokens[: n * (seq_len + 1)].reshape(n, seq_len + 1).astype(np.int32)
        self.B, self.seed = global_batch_size, seed

    def batch(self, step: int) -> np.ndarray:
        """The global batch of step ``step``: int32 array (B, seq_len + 1)."""
        per_epoch = self.windows.shape[0] // self.B
        epoch, i = divmod(step, per_epoch)
        perm = np.random.default_rng(self.seed + epoch).permutation(self.windows.shape[0])
        return self.windows[perm[i * self.B:(i + 1) * self.B]]

    def __iter__(self) -> Iterator[np.ndarray]:
        step = 0
        while True:
            yield self.batch(step)
            step += 1


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """``P(("dp", "fsdp", "ep"), None)`` on ``mesh`` (size-1 axes dropped) for (B, s+1) token arrays."""
    axes = tuple(a for a in BATCH_AXES if mesh.shape[a] > 1)
    return NamedSharding(mesh, P(axes if axes else None, None))


def shard_batch(batch: np.ndarray, mesh: Mesh) -> jax.Array:
    """Place a host global batch on the mesh, sharded over the batch axes (multi-process safe).

    Raises:
        ConfigError: the batch is not divisible by dp*fsdp*ep.
    """
    sharding = batch_sharding(mesh)
    n = int(np.prod([mesh.shape[a] for a in BATCH_AXES]))
    if batch.shape[0] % n:
        raise ConfigError(f"global batch {batch.shape[0]} is not divisible by dp*fsdp*ep = {n}",
                          field="global_batch_size", value=batch.shape[0])
    return jax.make_array_from_callback(batch.shape, sharding, lambda idx: batch[idx])
