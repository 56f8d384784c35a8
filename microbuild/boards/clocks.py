"""Checks that a board's clock figures agree with each other and with its CPU.

- ``timer.frequency_hz`` against ``cpu.clock_hz``: the built-in timers count core cycles (SysTick
  on the processor clock, the DWT cycle counter, RISC-V ``mcycle``) or a power-of-two division of
  them (AVR Timer1's prescaler), so a mismatch means every figure the board measures is wrong.
  Timers that legitimately differ: the host's ``clock_gettime`` (nanoseconds), ``mcycle`` under
  QEMU's ``-icount shift=N`` (it counts instructions: 10^9 / 2^N per second of virtual time), and
  a driver microbuild does not know (a board's own), which is not checked.
- ``cpu.irq_count`` against the architecture's limit on external interrupts.
"""

from __future__ import annotations

from typing import Any, Callable

NS_PER_SECOND = 1_000_000_000

# Timers whose counter runs on the core clock itself.
CORE_CLOCK_TIMERS = ("systick", "dwt", "mcycle")
# AVR Timer1 counts the CPU clock through one of these prescalers (ATmega328P datasheet 15.11.2).
AVR_TIMER1_PRESCALERS = (1, 8, 64, 256, 1024)
# Most external interrupts a vector table can have, by architecture (Armv6-M ARM B3.4: 32;
# Armv7-M ARM B3.4: 496; Armv8-M: 480).
MAX_IRQS = {"armv6-m": 32, "armv7-m": 496, "armv7e-m": 496, "armv8-m.main": 480,
            "armv8.1-m.main": 480}


def _icount_shift(data: dict[str, Any]) -> int | None:
    """N of ``-icount shift=N`` (or ``-icount N``) in the board's qemu.args; None without icount
    or with shift=auto. (microbuild.device.timing reads the same flag to label measurements; the
    boards room does not depend on the device room, hence this small reader of its own.)"""
    args = [str(a) for a in (data.get("qemu") or {}).get("args", []) or []]
    for flag, value in zip(args, args[1:]):
        if flag.lstrip("-") == "icount":
            for part in value.split(","):
                part = part.removeprefix("shift=")
                if part.isdigit():
                    return int(part)
    return None


def clock_problems(data: dict[str, Any], add: Callable[[tuple, str], None],
                   where: Callable[[tuple], str]) -> None:
    """Call ``add(key_path, message)`` for each disagreement in the resolved board ``data``;
    ``where(key_path)`` gives the file:line that set a key (for naming the other side)."""
    _timer_problems(data, add, where)
    _irq_count_problems(data["cpu"], add)


def _timer_problems(data: dict[str, Any], add: Callable[[tuple, str], None],
                    where: Callable[[tuple], str]) -> None:
    cpu, timer = data["cpu"], data["timer"]
    clock, frequency, driver = cpu["clock_hz"], timer["frequency_hz"], timer["driver"]
    clock_at = f"cpu.clock_hz is {clock} Hz ({where(('cpu', 'clock_hz'))})"

    if driver == "mcycle" and "qemu" in data:
        # Without icount, QEMU's mcycle follows the host: nothing to compare.
        shift = _icount_shift(data)
        if shift is not None and frequency != NS_PER_SECOND >> shift:
            add(("timer", "frequency_hz"),
                f"{frequency} Hz, but under QEMU's -icount shift={shift} mcycle advances once "
                f"per instruction of 2^{shift} ns: set it to {NS_PER_SECOND >> shift}")
        return
    if driver in CORE_CLOCK_TIMERS and frequency != clock:
        add(("timer", "frequency_hz"),
            f"{frequency} Hz differs from the core clock: the {driver} timer counts core cycles "
            f"and {clock_at}. Set both to the clock the init snippet leaves the core at")
    elif driver == "avr_timer1" and not any(frequency * p == clock for p in AVR_TIMER1_PRESCALERS):
        choices = ", ".join(str(clock // p) for p in AVR_TIMER1_PRESCALERS if clock % p == 0)
        add(("timer", "frequency_hz"),
            f"{frequency} Hz is not the CPU clock divided by a Timer1 prescaler "
            f"({'/'.join(map(str, AVR_TIMER1_PRESCALERS))}); {clock_at}, so it can be {choices}")


def _irq_count_problems(cpu: dict[str, Any], add: Callable[[tuple, str], None]) -> None:
    irq_count = cpu.get("irq_count")
    limit = MAX_IRQS.get(cpu["arch"])
    if irq_count is not None:
        if limit is None:
            add(("cpu", "irq_count"),
                f"irq_count sizes a Cortex-M vector table; this board is {cpu['arch']}: remove it")
        elif irq_count > limit:
            add(("cpu", "irq_count"),
                f"{irq_count} interrupts, but {cpu['arch']} has at most {limit}")
