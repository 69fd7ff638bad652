"""Human formatting of the planner's units (seconds, bytes), shared by the CLI and the reports."""

from __future__ import annotations

GiB = 2**30


def fmt_seconds(x: float) -> str:
    """Human time: ``1.234 s``, ``12.35 ms`` or ``123.4 us`` (``x`` in seconds)."""
    if x >= 1:
        return f"{x:,.3f} s"
    if x >= 1e-3:
        return f"{x * 1e3:,.2f} ms"
    return f"{x * 1e6:,.1f} us"


def fmt_gib(x: float) -> str:
    """Bytes as ``12.34 GiB``."""
    return f"{x / GiB:,.2f} GiB"


def fmt_rate(x: float) -> str:
    """A rate (tokens/s) with thousands separators: whole numbers from 100 up, three significant digits below
    (``0.156``, ``12.3``), so that a rate under one is not printed as ``0`` (a million devices at one token each)."""
    if x >= 100 or x == 0:
        return f"{x:,.0f}"
    return f"{x:.3g}"
