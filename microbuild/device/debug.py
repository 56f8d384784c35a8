"""`microbuild debug`: a GDB server for the board and the command that attaches GDB to it.

Emulated boards: QEMU started halted before the first instruction (-S) with its GDB stub on a
free local port. Real boards: the GDB server of the board's flash runner (OpenOCD, pyOCD,
SEGGER's JLinkGDBServerCLExe, st-util), which connects through the debug probe.
"""

from __future__ import annotations

import shlex
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from microbuild.boards import Board
from microbuild.device.runners import runner_for
from microbuild.errors import DeviceError, ToolchainError


def free_port() -> int:
    """A local TCP port nothing listens on now (the server binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Per architecture, the GDBs that can debug it, best first: the toolchain's own, then Debian's
# gdb-multiarch (every architecture).
_GDBS = {"arm": ["arm-none-eabi-gdb", "gdb-multiarch"],
         "riscv": ["riscv64-unknown-elf-gdb", "riscv32-unknown-elf-gdb", "gdb-multiarch"],
         "avr": ["avr-gdb", "gdb-multiarch"]}


def gdb_program(board: Board) -> str:
    if board.is_host:
        raise DeviceError(f"board '{board.name}' is the host: debug its firmware with gdb "
                          "directly (gdb build/host/firmware)")
    family = ("arm" if board.arch.startswith("armv") else "riscv" if board.arch.startswith("rv")
              else "avr")
    for name in _GDBS[family]:
        if shutil.which(name):
            return name
    raise ToolchainError(f"no GDB for {board.arch} is installed (looked for "
                         f"{', '.join(_GDBS[family])}); install one: sudo apt-get install "
                         "gdb-multiarch")


@dataclass
class DebugSession:
    board: Board
    elf: Path
    port: int
    server: list[str]  # the GDB server's command line
    runner: str

    def gdb_command(self, gdb: str) -> list[str]:
        """The command that attaches ``gdb`` to the server, with the ELF's symbols loaded."""
        return [gdb, "-q", str(self.elf.resolve()), "-ex",
                f"target remote localhost:{self.port}"]

    def gdb_command_text(self, gdb: str) -> str:
        return shlex.join(self.gdb_command(gdb))


def debug_session(board: Board, elf: Path, runner: str | None = None,
                  port: int | None = None) -> DebugSession:
    """What `microbuild debug` runs: the board's (or ``runner``'s) GDB server for ``elf``."""
    if board.is_host:
        gdb_program(board)  # raises: the host needs no server
    chosen = runner_for(board, runner)
    port = port or free_port()
    return DebugSession(board, Path(elf), port, chosen.gdb_server_command(Path(elf), port),
                        chosen.name)
