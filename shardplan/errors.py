"""Error types raised by shardplan.

Every configuration problem is a :class:`ConfigError`: a ``ValueError`` whose message names the
field, the value given and the legal alternatives, so that the CLI can print it and exit with
code 2 instead of showing a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable


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


def fmt_legal(values: Iterable[object]) -> str:
    """Format legal alternatives as ``"1, 2, 4, 8"`` (empty list -> ``"none"``)."""
    values = list(values)
    return ", ".join(str(v) for v in values) if values else "none"


def divisors(n: int) -> list[int]:
    """All positive divisors of ``n`` in increasing order.

    Raises:
        ValueError: if ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"divisors() needs n >= 1, got {n}")
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))
