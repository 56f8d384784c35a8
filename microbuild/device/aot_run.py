"""Running a standalone (AOT) firmware to its end: boot it on its emulated board (or as a host
process), collect its console, parse the outputs and timer ticks it prints. Used by the API
(``microbuild.api.run_firmware``) and by the CI room, which depends on this room rather than on
the API facade."""

from __future__ import annotations

import shlex

from microbuild.device.aot_output import parse_aot_output
from microbuild.device.runners import runner_for
from microbuild.errors import DeviceError


def run_aot_firmware(build, runner: str | None = None, timeout: float = 300.0):
    """The AotResult of one run of ``build`` (a FirmwareBuild with the aot executor)."""
    run = run_to_exit(build, runner, timeout)
    return parse_aot_output(run.console, build.models, build.board, run.status)


def run_to_exit(build, runner: str | None = None, timeout: float = 300.0):
    """Boot ``build`` (any executor that ends by itself: aot, or your own app) and return the
    CompletedRun: its console and exit status."""
    board = build.board
    if runner is None and not (board.is_host or board.is_emulated):
        runners = ", ".join(r.runner for r in board.runners) or "none listed in its YAML"
        raise DeviceError(
            f"board '{board.name}' is real hardware: microbuild starts only emulated boards and "
            f"the host itself. The firmware is built ({build.elf}): put it on the board with "
            f"`microbuild flash --board {shlex.quote(board.name)} --firmware "
            f"{shlex.quote(str(build.elf))}` (runners: {runners}), then watch its console with "
            f"`microbuild monitor --board {shlex.quote(board.name)}` "
            f"({board.transport.get('baud', 115200)} baud)")
    return runner_for(board, runner).run_to_exit(build.elf, timeout=timeout)
