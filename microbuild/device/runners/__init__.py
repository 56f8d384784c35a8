"""Runners: one small class per way of starting a firmware (Zephyr's west runners are the model).
Each is registered by name; the board's `flash:` list says which apply, the first is its default."""

from __future__ import annotations

from typing import Any

from microbuild.boards import Board
from microbuild.device.runners.avrdude import AvrdudeRunner
from microbuild.device.runners.base import CompletedRun, Runner
from microbuild.device.runners.dfu_util import DfuUtilRunner
from microbuild.device.runners.esptool import EsptoolRunner
from microbuild.device.runners.flash_tool import FirmwareImage, FlashError, FlashToolRunner
from microbuild.device.runners.host import HostRunner
from microbuild.device.runners.jlink import JlinkRunner
from microbuild.device.runners.nrf import NrfjprogRunner, NrfutilRunner
from microbuild.device.runners.openocd import OpenocdRunner
from microbuild.device.runners.picotool import PicotoolRunner
from microbuild.device.runners.platformio import PlatformioRunner
from microbuild.device.runners.probe_rs import ProbeRsRunner
from microbuild.device.runners.pyocd import PyocdRunner
from microbuild.device.runners.qemu import QemuRunner
from microbuild.device.runners.simavr import SimavrRunner
from microbuild.device.runners.stlink import StlinkRunner
from microbuild.device.runners.stm32cubeprogrammer import Stm32CubeProgrammerRunner
from microbuild.device.runners.uf2 import Uf2Runner
from microbuild.errors import MicrobuildError

RUNNERS: dict[str, type[Runner]] = {cls.name: cls for cls in (
    QemuRunner, HostRunner, SimavrRunner,
    OpenocdRunner, PyocdRunner, StlinkRunner, JlinkRunner, AvrdudeRunner, PlatformioRunner,
    EsptoolRunner, PicotoolRunner, Uf2Runner, NrfjprogRunner, NrfutilRunner, ProbeRsRunner,
    DfuUtilRunner, Stm32CubeProgrammerRunner)}


def runner_for(board: Board, name: str | None = None, **options: Any) -> Runner:
    """The runner ``name`` (or the board's default) for ``board``. ``options`` go to a flash
    runner's constructor: ``args`` (overriding the board YAML's runner args, e.g. a `port`) and,
    for platformio, ``project_dir``; emulator and host runners take none and ignore them."""
    listed = [r.runner for r in board.runners]
    name = name or board.default_runner
    if name not in listed:
        raise MicrobuildError(f"board '{board.name}' does not list runner '{name}'; it lists: "
                              f"{', '.join(listed)} (the board YAML's `flash:`)")
    if name not in RUNNERS:
        raise MicrobuildError(f"runner '{name}' cannot start firmware yet; runners available: "
                              f"{', '.join(RUNNERS)}")
    cls = RUNNERS[name]
    return cls(board, **options) if issubclass(cls, FlashToolRunner) else cls(board)


__all__ = ["AvrdudeRunner", "CompletedRun", "DfuUtilRunner", "EsptoolRunner", "FirmwareImage",
           "FlashError", "FlashToolRunner", "HostRunner", "JlinkRunner", "NrfjprogRunner",
           "NrfutilRunner", "OpenocdRunner", "PicotoolRunner", "PlatformioRunner", "ProbeRsRunner",
           "PyocdRunner", "QemuRunner", "RUNNERS", "Runner", "SimavrRunner", "StlinkRunner",
           "Stm32CubeProgrammerRunner", "Uf2Runner", "runner_for"]
