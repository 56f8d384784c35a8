"""What a count of timer ticks means on the board that produced it, said honestly.

- Under QEMU with ``-icount shift=N`` virtual time advances 2^N ns per instruction, so the timer
  counts instructions, not time: 25 MHz SysTick ticks are 40 instructions each at shift=0. The
  figure is shown as instructions ("4.13 M instructions (QEMU icount)"), never as milliseconds a
  real chip would not match.
- On a real board the timer runs off the CPU clock (``cpu.clock_hz``): cycles and milliseconds at
  that clock.
- The host measures wall-clock time: milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NS_PER_SECOND = 1_000_000_000


def icount_shift(board: Any) -> int | None:
    """N of the board's ``-icount shift=N`` (or ``-icount N``), None when its emulator does not
    count instructions (no icount, ``shift=auto``) or the board is not emulated by QEMU."""
    qemu = board.data.get("qemu") if hasattr(board, "data") else None
    args = [str(a) for a in (qemu or {}).get("args", []) or []]
    for flag, value in zip(args, args[1:]):
        if flag.lstrip("-") != "icount":
            continue
        for part in value.split(","):
            part = part.removeprefix("shift=")
            if part.isdigit():
                return int(part)
    return None


@dataclass(frozen=True)
class Duration:
    """``ticks`` of a ``timer_hz`` timer on ``board``, with what they stand for there."""

    ticks: int
    timer_hz: int
    kind: str  # "instructions" (QEMU icount), "cycles" (a real board), "wall clock" (host)
    instructions: float | None = None
    cycles: float | None = None
    seconds: float | None = None
    clock_hz: int | None = None

    def __str__(self) -> str:
        if self.kind == "instructions":
            return f"{_si(self.instructions)} instructions (QEMU icount: a count, not a time)"
        if self.kind == "cycles":
            return (f"{_si(self.cycles)} cycles = {self.seconds * 1e3:.3f} ms at "
                    f"{self.clock_hz / 1e6:g} MHz")
        return f"{self.seconds * 1e3:.3f} ms (host wall clock)"

    def column(self) -> tuple[str, str]:
        """(heading, value) for a table column: instructions, or milliseconds."""
        if self.kind == "instructions":
            return "instructions", f"{self.instructions:,.0f}"
        return "ms", f"{self.seconds * 1e3:.3f}"


def duration(ticks: int, timer_hz: int, board: Any) -> Duration:
    shift = icount_shift(board)
    if shift is not None:
        instructions = ticks * NS_PER_SECOND / (timer_hz * (1 << shift))
        return Duration(ticks, timer_hz, "instructions", instructions=instructions)
    seconds = ticks / timer_hz
    if getattr(board, "is_host", False):
        return Duration(ticks, timer_hz, "wall clock", seconds=seconds)
    clock = int((board.cpu or {}).get("clock_hz") or timer_hz)
    return Duration(ticks, timer_hz, "cycles", cycles=seconds * clock, seconds=seconds,
                    clock_hz=clock)


def _si(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f} M"
    if value >= 1e4:
        return f"{value / 1e3:.1f} k"
    return f"{value:,.0f}"
