"""What every runner provides."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from microbuild.boards import Board
from microbuild.errors import DeviceError


@dataclass
class CompletedRun:
    """A firmware that ran to its end: its exit status and console output."""

    status: int
    console: str
    stderr: str
    command: list[str]


class Runner:
    name = ""

    def __init__(self, board: Board):
        self.board = board

    def command(self, firmware: Path) -> list[str]:
        """The command line that starts ``firmware`` with its console on stdin/stdout."""
        raise NotImplementedError

    def start(self, firmware: Path):
        """Boot ``firmware`` on this machine and return a Transport to its console. Only the
        runners that boot firmware themselves (emulators, the host) can; a runner that programs a
        real board flashes it, and the console is then reached over serial or TCP."""
        raise DeviceError(f"runner '{self.name}' programs a real board; it does not run the "
                          "firmware here. Flash it, then connect to the board's serial port")

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        """The command line of a GDB server for ``firmware`` on TCP ``port`` (microbuild debug)."""
        raise DeviceError(f"runner '{self.name}' cannot start a GDB server; use another of the "
                          f"board's runners (--runner)")

    def run_to_exit(self, firmware: Path, timeout: float = 120.0) -> CompletedRun:
        """Start ``firmware``, wait until it exits, and return what it printed. A firmware that
        does not finish within ``timeout`` seconds is killed and reported as such."""
        command = self.command(Path(firmware))
        try:
            result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                    timeout=timeout)
        except subprocess.TimeoutExpired as err:
            # subprocess.run kills the child before raising: no busy emulator is left behind.
            printed = (err.stdout or b"").decode(errors="replace")[-2000:]
            raise DeviceError(
                f"{self.board.name}: the firmware did not finish within {timeout:g} s and was "
                f"stopped; it printed:\n{printed or '(nothing)'}") from None
        return CompletedRun(status=result.returncode,
                            console=result.stdout.decode(errors="replace"),
                            stderr=result.stderr.decode(errors="replace"), command=command)
