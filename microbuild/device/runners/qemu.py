"""Emulated boards: QEMU with the board's machine, its console UART on stdio.

The QEMU facts this relies on (../shared/notes/qemu-boards.md): `-serial stdio -monitor none`
carries the console without the monitor multiplexer (which would eat byte 0x01); semihosting must
be enabled explicitly or the exit `bkpt` faults; `-icount shift=0` (in the boards' qemu.args)
makes timer counts repeatable.

A firmware whose console driver is ``semihosting`` (runtime/drivers/console/semihosting.c: the
semihosting ``:tt`` stream, which QEMU 7.2 with target=native maps to its own stdin and stdout)
talks on QEMU's standard streams instead of its UART: a guest read then takes whatever the pipe
holds, up to 1 KiB, instead of one byte per turn of QEMU's I/O loop. ``semihosting_console_board``
makes such a board from any emulated Arm one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from microbuild.device.runners.base import Capability, Runner
from microbuild.device.transports.process import ProcessStdioTransport, QemuTransport
from microbuild.errors import BoardError, MicrobuildError, ToolchainError

# Debian package per QEMU system emulator.
_PACKAGES = {"qemu-system-arm": "qemu-system-arm", "qemu-system-riscv32": "qemu-system-misc",
             "qemu-system-riscv64": "qemu-system-misc"}


SEMIHOSTING_CONSOLE = "semihosting"
# Defined by runtime/drivers/console/semihosting.c only: a firmware built with that console says
# so itself, whichever board object the caller has at hand.
_SEMIHOSTING_CONSOLE_SYMBOL = "mb_semihosting_console_input"


def console_on_semihosting(board, firmware: str | Path) -> bool:
    """Does ``firmware`` (an ELF for ``board``) talk on the semihosting console?"""
    if board.transport["driver"] == SEMIHOSTING_CONSOLE:
        return True
    if board.exit["driver"] != SEMIHOSTING_CONSOLE or not Path(firmware).is_file():
        return False
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        with open(firmware, "rb") as f:
            symbols = ELFFile(f).get_section_by_name(".symtab")
            return bool(symbols and symbols.get_symbol_by_name(_SEMIHOSTING_CONSOLE_SYMBOL))
    except (ELFError, OSError):
        return False  # not an ELF: QEMU itself will say what is wrong with it


def supports_semihosting_console(board) -> bool:
    """Can ``board`` run with its console on semihosting: an emulated Arm board that exits
    through semihosting already (the mps2/mps3 boards), or one whose console is on it."""
    return (board.is_emulated and board.arch.startswith("armv")
            and board.exit["driver"] == SEMIHOSTING_CONSOLE)


def semihosting_console_board(board, folder: str | Path):
    """``board`` with its console on Arm semihosting, as a board file in ``folder`` that extends
    it (the build reads the board from its file): same name, memory and drivers otherwise. For a
    board that ``supports_semihosting_console``."""
    from microbuild.boards import resolve_board

    if not supports_semihosting_console(board):
        raise BoardError(f"board '{board.name}': a semihosting console needs an emulated Arm "
                         "board that exits through semihosting (the mps2/mps3 boards)")
    if board.transport["driver"] == SEMIHOSTING_CONSOLE:
        return board
    from microbuild.boards.loader import find_board_file

    found = find_board_file(board.name)
    if found is None or found.resolve() != Path(board.files[0]).resolve():
        raise BoardError(f"board '{board.name}' ({board.files[0]}) is not the one its name finds "
                         "on the board search path, so a board file cannot extend it by name; "
                         "put its folder on MICROBUILD_BOARDS_PATH")
    path = Path(folder) / f"{board.name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {board.name} with its console on Arm semihosting instead of its UART "
                    "(written by microbuild).\n"
                    f"extends: {board.name}\n"
                    f"transport:\n  driver: {SEMIHOSTING_CONSOLE}\n")
    return resolve_board(path)


def qemu_program(board) -> str:
    """The QEMU system emulator ``board`` runs in."""
    default = "qemu-system-arm" if board.arch.startswith("armv") else "qemu-system-riscv32"
    return (board.qemu or {}).get("executable", default)


def debian_package(program: str) -> str:
    """The Debian package that installs the QEMU system emulator ``program``."""
    return _PACKAGES.get(program, program)


class QemuRunner(Runner):
    name = "qemu"
    capabilities = frozenset({Capability.RUN, Capability.CONSOLE, Capability.GDB_SERVER})
    # One of them, by the board's emulator: debian_package(qemu_program(board)).
    debian_packages = tuple(sorted(set(_PACKAGES.values())))

    def executable(self) -> str:
        qemu = self.board.qemu
        if not qemu:
            raise MicrobuildError(f"board '{self.board.name}' has no `qemu:` section; it cannot "
                                  "be emulated")
        program = qemu_program(self.board)
        path = shutil.which(program)
        if path is None:
            raise ToolchainError(f"board '{self.board.name}' runs in {program}, which is not "
                                 f"installed; install it with: sudo apt-get install "
                                 f"{debian_package(program)}")
        return path

    def command(self, firmware: Path, serial: str = "stdio") -> list[str]:
        qemu = self.board.qemu or {}
        command = [self.executable(), "-M", qemu["machine"]]
        if "cpu" in qemu:
            command += ["-cpu", qemu["cpu"]]
        command += ["-display", "none", "-monitor", "none", "-no-reboot"]
        # A semihosting console is QEMU's own stdin/stdout: the UART stays unconnected.
        command += ["-serial", "null" if console_on_semihosting(self.board, firmware) else serial]
        if self.board.exit["driver"] == "semihosting":
            command += ["-semihosting-config", "enable=on,target=native"]
        command += list(qemu.get("args", []))
        return command + ["-kernel", str(Path(firmware).resolve())]

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        """QEMU halted before the first instruction (-S) with its GDB stub on ``port``, the
        console on this terminal."""
        return self.command(firmware) + ["-gdb", f"tcp:127.0.0.1:{port}", "-S"]

    def start(self, firmware: Path) -> QemuTransport:
        """Boot ``firmware`` with its console on a socket this process listens on (binary-safe,
        nothing sent at boot is lost)."""
        executable = self.executable()  # a missing QEMU is reported before anything starts
        del executable
        if console_on_semihosting(self.board, firmware):
            return ProcessStdioTransport(self.command(firmware, "null"),
                                         what=f"QEMU ({self.board.name})")
        return QemuTransport(lambda port: self.command(firmware, f"tcp:127.0.0.1:{port},nodelay=on"),
                             what=f"QEMU ({self.board.name})")
