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


_UNITS = (("M", 1024 * 1024), ("K", 1024))


def format_size(n: int) -> str:
    """Short human form, as board files write sizes: 1M, 320K, 1500 B. A size that is not a whole
    number of M or K gets one decimal in the largest unit it reaches, counting rounding: 0xFFFE0
    (32 bytes short of 1 MiB) is 1.0M, never 1024.0K beside the 1M of other boards."""
    for unit, size in _UNITS:
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    for i, (unit, size) in enumerate(_UNITS):
        if n >= size:
            if i > 0 and round(n / size, 1) >= 1024:  # 1024.0K: say it in the unit above
                unit, size = _UNITS[i - 1]
            return f"{n / size:.1f}{unit}"
    return f"{n} B"
