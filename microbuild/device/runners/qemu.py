"""Emulated boards: QEMU with the board's machine, its console UART on stdio.

The QEMU facts this relies on (../shared/notes/qemu-boards.md): `-serial stdio -monitor none`
carries the console without the monitor multiplexer (which would eat byte 0x01); semihosting must
be enabled explicitly or the exit `bkpt` faults; `-icount shift=0` (in the boards' qemu.args)
makes timer counts repeatable.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from microbuild.device.runners.base import Capability, Runner
from microbuild.device.transports.process import QemuTransport
from microbuild.errors import MicrobuildError, ToolchainError

# Debian package per QEMU system emulator.
_PACKAGES = {"qemu-system-arm": "qemu-system-arm", "qemu-system-riscv32": "qemu-system-misc",
             "qemu-system-riscv64": "qemu-system-misc"}


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
        command += ["-display", "none", "-monitor", "none", "-serial", serial, "-no-reboot"]
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
        return QemuTransport(lambda port: self.command(firmware, f"tcp:127.0.0.1:{port},nodelay=on"),
                             what=f"QEMU ({self.board.name})")
