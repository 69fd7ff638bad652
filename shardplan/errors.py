"""Error types raised by shardplan.

Every configuration problem is a :class:`ConfigError`: a ``ValueError`` whose message names the
field, the value given and the legal alternatives, so that the CLI can print it and exit with
code 2 instead of showing a traceback.
"""

from __future__ import annotations

import functools
import reprlib
from collections.abc import Iterable

#: characters of an offending value echoed in a message
ECHO_CHARS = 80
#: divisors() refuses numbers above this (the physical ranges of shardplan.limits keep far below it)
MAX_DIVISOR_N = 2**44


class ConfigError(ValueError):
    """A model, hardware, training or parallel setting is invalid.

    Attributes:
        field: name of the offending field (e.g. ``"tp"``), or ``None`` when several are involved.
        value: the value that was given.
        legal: the legal alternatives, when they can be enumerated.
    """

    def __init__(self, message: str, *, field: str | None = None, value: object = None,
                 legal: Iterable[object] | None = None) -> None:
        self.field = field
        self.value = value
        self.legal = list(legal) if legal is not None else None
        super().__init__(message)


class NotCovered(ConfigError):
    """A plan that ``shardplan validate`` cannot score (the runtime runs it, but not the way the
    planner prices it): a negative result (exit code 1), not bad input."""


def fmt_legal(values: Iterable[object]) -> str:
    """Format legal alternatives as ``"1, 2, 4, 8"`` (empty list -> ``"none"``)."""
    values = list(values)
    return ", ".join(str(v) for v in values) if values else "none"


def did_you_mean(name: object, choices: Iterable[str], cutoff: float = 0.6, prefixes: bool = False) -> str:
    """``" (did you mean a, b?)"`` for the choices closest to ``name`` (case ignored; with ``prefixes`` first the
    choices it begins, ``bf16`` -> ``bf16-mixed``; else difflib's ratio >= ``cutoff``, at most 3), or ``""``."""
    import difflib
    key, options = str(name).strip().lower()[:200], list(choices)
    close = [c for c in options if prefixes and key and c.startswith(key)][:3] or difflib.get_close_matches(
        key, options, n=3, cutoff=cutoff)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def short_repr(value: object, limit: int = ECHO_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, bounded in time and depth for any value (deep nesting,
    YAML alias bombs, 10^400-digit integers): nested containers and long strings are abbreviated."""
    r = reprlib.Repr()
    r.maxlevel, r.maxlist, r.maxdict, r.maxtuple, r.maxset = 3, 6, 6, 6, 6
    r.maxstring, r.maxlong, r.maxother = limit, limit, limit
    try:
        text = r.repr(value)
    except (RecursionError, ValueError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


@functools.lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    factors: dict[int, int] = {}
    m, p = n, 2
    while p * p <= m:
        while m % p == 0:
            factors[p] = factors.get(p, 0) + 1
            m //= p
        p += 1 if p == 2 else 2
    if m > 1:
        factors[m] = factors.get(m, 0) + 1
    out = [1]
    for p, k in factors.items():
        out = [d * p**e for d in out for e in range(k + 1)]
    return tuple(sorted(out))


def divisors(n: int) -> list[int]:
    """All positive divisors of ``n`` in increasing order (cached; prime factorisation, so that
    ``n`` up to :data:`MAX_DIVISOR_N` takes milliseconds).

    Raises:
        ValueError: if ``n`` < 1.
        ConfigError: if ``n`` > :data:`MAX_DIVISOR_N` (a batch or device count beyond the physical ranges).
    """
    if n < 1:
        raise ValueError(f"divisors() needs n >= 1, got {n}")
    if n > MAX_DIVISOR_N:
        raise ConfigError(f"{n:.3g} is beyond the physical ranges (divisors of at most 2^44 are searched)",
                          field=None, value=n)
    return list(_divisors(n))
