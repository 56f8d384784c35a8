"""Which console, timer, exit and init code a board uses: a built-in driver by name, or a C file
of its own.

A board names its drivers in ``transport.driver``, ``timer.driver`` and ``exit.driver``. A plain
name (``cmsdk_uart``) is one of microbuild's drivers, ``runtime/drivers/<kind>/<name>.c``; a name
ending in ``.c`` (``pl011_console.c``, ``drivers/my_uart.c``) is a file of the board's own, relative
to the board file that wrote the key, implementing the same functions of
``runtime/include/microbuild/platform.h``. ``init_source:`` likewise names a C file that defines
``mb_board_init`` in place of the generated one from the ``init:`` snippet.
"""

from __future__ import annotations

from pathlib import Path

from microbuild.paths import runtime_dir

# kind -> the key path in the board YAML that names its driver
DRIVER_KEYS = {
    "console": ("transport", "driver"),
    "timer": ("timer", "driver"),
    "exit": ("exit", "driver"),
}
INIT_KEY = ("init_source",)
# Every key that may name a C file of the board's own, by kind.
SOURCE_KEYS = {**DRIVER_KEYS, "init": INIT_KEY}
SOURCE_SUFFIX = ".c"


def names_a_file(value: str) -> bool:
    """True when a driver value is a C file of the board's own rather than a built-in name."""
    return value.endswith(SOURCE_SUFFIX)


def builtin_drivers(kind: str) -> list[str]:
    """The names of microbuild's own drivers of ``kind`` (console, timer, exit)."""
    return sorted(p.stem for p in (runtime_dir() / "drivers" / kind).glob("*.c"))


def value_at(data: dict, key_path: tuple) -> str | None:
    value = data
    for key in key_path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, str) else None


__all__ = ["DRIVER_KEYS", "INIT_KEY", "SOURCE_KEYS", "builtin_drivers", "names_a_file",
           "value_at"]
