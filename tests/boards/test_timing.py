"""Timer ticks shown for what they are on each kind of board: instructions under QEMU icount,
cycles and milliseconds at the CPU clock on a real board, wall-clock milliseconds on the host."""

from __future__ import annotations

from microbuild.boards import load_board
from microbuild.device.timing import duration, icount_shift


def test_emulated_boards_count_instructions():
    assert icount_shift(load_board("mps2-an500")) == 0
    assert icount_shift(load_board("riscv32-virt")) == 0
    d = duration(103_348, 25_000_000, load_board("mps2-an500"))
    assert d.kind == "instructions" and d.instructions == 103_348 * 40
    assert str(d) == "4.13 M instructions (QEMU icount: a count, not a time)"
    assert "ms" not in str(d)
    assert d.column() == ("instructions", "4,133,920")
    # RV32 mcycle under icount: one count per instruction at an effective 1 GHz.
    assert duration(5_000, 1_000_000_000, load_board("riscv32-virt")).instructions == 5_000


def test_icount_shift_is_read_from_the_boards_qemu_arguments():
    class Emulated:
        def __init__(self, args):
            self.data = {"qemu": {"machine": "m", "args": args}}

    assert icount_shift(Emulated(["-icount", "shift=3"])) == 3
    assert icount_shift(Emulated(["-icount", "shift=2,align=off"])) == 2
    assert icount_shift(Emulated(["-icount", "4"])) == 4
    assert icount_shift(Emulated(["-icount", "shift=auto"])) is None
    assert icount_shift(Emulated([])) is None
    # shift=3: 8 ns of virtual time per instruction.
    assert duration(1_000, 25_000_000, Emulated(["-icount", "shift=3"])).instructions == 5_000


def test_real_boards_show_cycles_and_ms_at_their_clock():
    board = load_board("stm32f746")
    clock = int(board.cpu["clock_hz"])
    d = duration(clock // 1000, int(board.timer["frequency_hz"]), board)
    assert d.kind == "cycles" and d.clock_hz == clock
    assert str(d).endswith(f"ms at {clock / 1e6:g} MHz")


def test_the_host_shows_wall_clock_milliseconds():
    d = duration(2_500_000, 1_000_000_000, load_board("host"))
    assert str(d) == "2.500 ms (host wall clock)" and d.column() == ("ms", "2.500")
