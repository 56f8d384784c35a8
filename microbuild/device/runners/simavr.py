"""AVR boards in simavr (Debian package `simavr`): `simavr -m <cpu.core> -f <cpu.clock_hz> fw.elf`.

simavr itself shows what the firmware writes to USART0, so no bridge program is needed for
output (feeding the UART input would need one against libsimavr; the AOT firmware reads nothing).
It prints one line of its log on stderr per line the firmware sends: green (ANSI colour codes),
with every control character, the '\\n' included, replaced by '.', and a line longer than 256
characters cut into 256-character pieces. :func:`uart_text` turns that back into the console text.

A firmware ends by sleeping with interrupts off (exit driver `halt`), on which simavr stops with
status 0: mb_exit's status does not reach simavr, so a run's status is 0 when the firmware got
to its end (the AOT protocol's status lines carry the models' results).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from microbuild.device.runners.base import Capability, CompletedRun, Runner
from microbuild.errors import DeviceError, ToolchainError

_UART_LINE = re.compile(r"\x1b\[32m(.*?)\n\x1b\[0m", re.DOTALL)
_PIECE = 256  # simavr's line buffer


def uart_text(log: str) -> tuple[str, str]:
    """(console text, the rest of simavr's log) from simavr's stderr."""
    text = []
    for piece in _UART_LINE.findall(log):
        # Only the last piece of a line ends with the '.' standing for its '\n'; a full 256-byte
        # piece without it continues on the next.
        if len(piece) == _PIECE and not piece.endswith("."):
            text.append(piece)
        else:
            text.append(piece[:-1] + "\n" if piece.endswith(".") else piece + "\n")
    return "".join(text), _UART_LINE.sub("", log)


class SimavrRunner(Runner):
    name = "simavr"
    # simavr shows the UART on its own log; there is no console to connect to (no CONSOLE).
    capabilities = frozenset({Capability.RUN})
    debian_packages = ("simavr",)

    def command(self, firmware: Path) -> list[str]:
        program = shutil.which("simavr")
        if program is None:
            raise ToolchainError(f"board '{self.board.name}' runs in simavr, which is not "
                                 "installed; install it with: sudo apt-get install simavr")
        return [program, "-m", self.board.core, "-f", str(self.board.cpu["clock_hz"]),
                str(Path(firmware).resolve())]

    def run_to_exit(self, firmware: Path, timeout: float = 120.0) -> CompletedRun:
        command = self.command(Path(firmware))
        try:
            result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                                    timeout=timeout)
        except subprocess.TimeoutExpired as err:
            printed, _ = uart_text((err.stderr or b"").decode(errors="replace"))
            raise DeviceError(
                f"{self.board.name}: the firmware did not finish within {timeout:g} s in simavr "
                f"and was stopped; it printed:\n{printed[-2000:] or '(nothing)'}") from None
        console, log = uart_text(result.stderr.decode(errors="replace"))
        return CompletedRun(status=result.returncode, console=console,
                            stderr=result.stdout.decode(errors="replace") + log, command=command)
