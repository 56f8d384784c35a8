"""An emulated Arm board with its console on semihosting (QEMU's own stdin/stdout, a whole
buffer per guest read) instead of its one-byte UART: the board file that makes it, the QEMU
command line for it, and the boards it is refused for. Its traffic for real is
tests/validate/test_validate_qemu.py's (person_detect over RPC, bit-exact with TFLM)."""

from __future__ import annotations

import pytest

from microbuild.boards import resolve_board
from microbuild.device.runners.qemu import (QemuRunner, console_on_semihosting,
                                            semihosting_console_board)
from microbuild.errors import BoardError


def test_the_board_file_extends_the_board_and_moves_only_its_console(tmp_path):
    plain = resolve_board("mps2-an500")
    board = semihosting_console_board(plain, tmp_path)
    assert board.name == "mps2-an500" and board.files[0] == tmp_path / "mps2-an500.yaml"
    assert board.transport["driver"] == "semihosting"
    assert board.data["memory"] == plain.data["memory"] and board.cpu == plain.cpu
    assert semihosting_console_board(board, tmp_path / "again") is board
    elf = tmp_path / "firmware.elf"  # not built: the board alone says where the console is
    command = QemuRunner(board).command(elf)
    assert command[command.index("-serial") + 1] == "null"
    assert command[command.index("-semihosting-config") + 1] == "enable=on,target=native"
    assert console_on_semihosting(board, elf) and not console_on_semihosting(plain, elf)
    plain_command = QemuRunner(plain).command(elf, "tcp:127.0.0.1:9,nodelay=on")
    assert plain_command[plain_command.index("-serial") + 1] == "tcp:127.0.0.1:9,nodelay=on"


@pytest.mark.parametrize("name", ["host", "riscv32-virt", "nucleo-f746zg"])
def test_boards_without_arm_semihosting_in_qemu_are_refused(name, tmp_path):
    with pytest.raises(BoardError, match=rf"board '{name}': a semihosting console needs an "
                                         r"emulated Arm board that exits through semihosting"):
        semihosting_console_board(resolve_board(name), tmp_path)
    assert not list(tmp_path.iterdir())  # no board file written


def test_a_board_file_off_the_search_path_is_refused_and_validate_keeps_its_uart(tmp_path):
    from microbuild.validate.run import validation_board

    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "my-an500.yaml").write_text("extends: mps2-an500\nname: my-an500\n")
    board = resolve_board(tmp_path / "lab" / "my-an500.yaml")
    with pytest.raises(BoardError, match=r"board 'my-an500' \(.*my-an500.yaml\) is not the one "
                                         r"its name finds on the board search path"):
        semihosting_console_board(board, tmp_path / "out")
    assert validation_board(board, tmp_path / "out") is board
    assert validation_board(resolve_board("mps2-an500"), tmp_path / "out").transport["driver"] \
        == "semihosting"
