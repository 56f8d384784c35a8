"""Byte counts in words, the one way every report and message writes them.

The lowest layer with ``errors``: the compiler, the firmware's fit report and the CLI's tables all
say sizes the same way, so this module imports nothing of microbuild.
"""

from __future__ import annotations


def kib(n: int) -> str:
    """Short form for tables: ``488 B``, ``55.0 KiB``, ``1.50 MiB``."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.2f} MiB"


def nbytes(n: int) -> str:
    """Long form for messages: ``488 bytes``, ``56,320 bytes (55.0 KiB)``."""
    unit = "byte" if n == 1 else "bytes"
    return f"{n:,} {unit}" if n < 1024 else f"{n:,} {unit} ({kib(n)})"
