"""Runners: one small class per way of starting a firmware (Zephyr's west runners are the model).
Each is registered by name; the board's `flash:` list says which apply, the first is its default."""

from __future__ import annotations

from microbuild.boards import Board
from microbuild.device.runners.base import CompletedRun, Runner
from microbuild.device.runners.host import HostRunner
from microbuild.device.runners.qemu import QemuRunner
from microbuild.device.runners.simavr import SimavrRunner
from microbuild.errors import MicrobuildError

RUNNERS: dict[str, type[Runner]] = {cls.name: cls for cls in (QemuRunner, HostRunner,
                                                               SimavrRunner)}


def runner_for(board: Board, name: str | None = None) -> Runner:
    """The runner ``name`` (or the board's default) for ``board``."""
    listed = [r.runner for r in board.runners]
    name = name or board.default_runner
    if name not in listed:
        raise MicrobuildError(f"board '{board.name}' does not list runner '{name}'; it lists: "
                              f"{', '.join(listed)} (the board YAML's `flash:`)")
    if name not in RUNNERS:
        raise MicrobuildError(f"runner '{name}' cannot start firmware yet; runners available: "
                              f"{', '.join(RUNNERS)}")
    return RUNNERS[name](board)


__all__ = ["CompletedRun", "HostRunner", "QemuRunner", "RUNNERS", "Runner", "SimavrRunner",
           "runner_for"]
