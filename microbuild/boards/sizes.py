"""Byte sizes as board files write them: 4096, "256K", "1M", "64KiB"."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*(\d+)\s*([KkMm]?)(i?B?)\s*$")


def parse_size(value: int | str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a size (write bytes as an integer, or like 256K or 1M)")
    number, unit = int(match.group(1)), match.group(2).upper()
    return number * {"": 1, "K": 1024, "M": 1024 * 1024}[unit]


def format_size(n: int) -> str:
    """Short human form: 1M, 320K, 1500 B."""
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)}M"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024}K"
    if n >= 1024:
        return f"{n / 1024:.1f}K"
    return f"{n} B"
