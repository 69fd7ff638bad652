"""Physical ranges of every numeric input, checked before any arithmetic (issue 15).

The bounds are generous (far beyond any machine or model built so far) but finite, so that a typo
(``--global-batch 1000000000000000000``) is refused with a message instead of a search that never
returns or a step time of ``inf``. The spec fields (:mod:`shardplan.specs`) and the layout fields
(:class:`shardplan.parallel.ParallelConfig`) use them as pydantic ``le=`` bounds; the CLI checks the
remaining flags with :func:`check_range`.
"""

from __future__ import annotations

from shardplan.errors import ConfigError, short_repr

#: accelerators in one job, and any parallel degree (tp, pp, cp, ep, dp, dp_shard)
MAX_DEVICES = 2**20
#: tokens per sequence
MAX_SEQ_LEN = 2**24
#: tokens per optimizer step (global batch x seq_len); also caps the global batch in sequences
MAX_BATCH_TOKENS = 2**40
#: sequences per microbatch
MAX_MICROBATCH = 2**20
#: an MoE expert capacity factor (a multiple of an even share of the routed tokens): at least one share (the
#: capacity-factor pricing of shardplan.specs.training prices each expert's buffer at that capacity; below one, every
#: step drops tokens, which it does not price), at most 64 (far beyond the 1.0-2.0 of the Switch Transformer and
#: GShard recipes)
MIN_CAPACITY_FACTOR = 1.0
MAX_CAPACITY_FACTOR = 64.0
#: transformer blocks
MAX_LAYERS = 2**16
#: hidden size, query width, head count, key/value heads, head width
MAX_D_MODEL = 2**20
MAX_HEADS = 2**16
MAX_HEAD_DIM = 2**16
#: MLP / expert intermediate width
MAX_FFN = 2**24
#: vocabulary rows and learned position rows
MAX_VOCAB = 2**24
#: routed experts per MoE layer
MAX_EXPERTS = 2**16
#: efficiency factors (fraction of peak) are in [MIN_EFFICIENCY, 1]
MIN_EFFICIENCY = 0.01
#: FLOP/s of one device (an exaFLOP/s)
MAX_FLOPS = 1e18
#: bytes of memory of one device (a pebibyte)
MAX_MEMORY_BYTES = 2.0**50
#: bytes/s of any link or memory (a petabyte/s)
MAX_BANDWIDTH = 1e15


def check_range(field: str, value: int | float, lo: int | float, hi: int | float, unit: str = "") -> None:
    """Refuse ``value`` outside ``[lo, hi]`` (or not finite) with the usual ``field=value; legal: ...`` message.

    Raises:
        ConfigError: ``value`` is out of range, NaN or infinite.
    """
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and lo <= value <= hi
    if not ok:
        what = f" {unit}" if unit else ""
        raise ConfigError(f"{field}={short_repr(value)} is out of range; legal: {lo:,} to {hi:,}{what}",
                          field=field, value=value, legal=None)
