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
