"""Runners: one small class per way of starting a firmware (Zephyr's west runners are the model).

Importing this package imports every module in it; each runner class registers itself in
:data:`RUNNERS` by its ``name`` as it is defined (base.py), so adding a runner is adding a file
(docs/adding-a-runner.md). The board's `flash:` list says which runners apply, the first is its
default.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from microbuild.device.runners.base import (RUNNERS, Capability, CompletedRun, Runner, RunnerArg,
                                            package_hint)
from microbuild.device.runners.flash_tool import FirmwareImage, FlashError, FlashToolRunner
from microbuild.boards.runner_declarations import declarations_text
from microbuild.errors import MicrobuildError

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

# The classes by their names, for `from microbuild.device.runners import OpenocdRunner`.
from microbuild.device.runners.avrdude import AvrdudeRunner  # noqa: E402
from microbuild.device.runners.dfu_util import DfuUtilRunner  # noqa: E402
from microbuild.device.runners.esptool import EsptoolRunner  # noqa: E402
from microbuild.device.runners.host import HostRunner  # noqa: E402
from microbuild.device.runners.jlink import JlinkRunner  # noqa: E402
from microbuild.device.runners.nrf import NrfjprogRunner, NrfutilRunner  # noqa: E402
from microbuild.device.runners.openocd import OpenocdRunner  # noqa: E402
from microbuild.device.runners.picotool import PicotoolRunner  # noqa: E402
from microbuild.device.runners.platformio import PlatformioRunner  # noqa: E402
from microbuild.device.runners.probe_rs import ProbeRsRunner  # noqa: E402
from microbuild.device.runners.pyocd import PyocdRunner  # noqa: E402
from microbuild.device.runners.qemu import QemuRunner  # noqa: E402
from microbuild.device.runners.simavr import SimavrRunner  # noqa: E402
from microbuild.device.runners.stlink import StlinkRunner  # noqa: E402
from microbuild.device.runners.stm32cubeprogrammer import Stm32CubeProgrammerRunner  # noqa: E402
from microbuild.device.runners.uf2 import Uf2Runner  # noqa: E402


def runner_for(board, name: str | None = None, **options: Any) -> Runner:
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


def built_in_declarations_text() -> str:
    """schema/runners.json as this package's runner classes declare it: the board loader's copy
    of their names and args (boards/runner_declarations.py; tools/update_runner_declarations.py
    writes it)."""
    return declarations_text([cls.declaration() for cls in RUNNERS.values()
                              if cls.__module__.startswith(f"{__name__}.")])


def install_hint(name: str) -> str:
    """How to install runner ``name``'s tool ("" for an unknown runner or one with no tool)."""
    cls = RUNNERS.get(name)
    if cls is None:
        return ""
    return getattr(cls, "install_hint", "") or package_hint(cls)


def debian_package(name: str) -> str | None:
    """The Debian package that installs runner ``name``'s tool, or None (not in Debian, or no
    such runner)."""
    cls = RUNNERS.get(name)
    return cls.debian_packages[0] if cls is not None and cls.debian_packages else None


__all__ = ["AvrdudeRunner", "Capability", "CompletedRun", "DfuUtilRunner", "EsptoolRunner",
           "FirmwareImage", "FlashError", "FlashToolRunner", "HostRunner", "JlinkRunner",
           "NrfjprogRunner", "NrfutilRunner", "OpenocdRunner", "PicotoolRunner",
           "PlatformioRunner", "ProbeRsRunner", "PyocdRunner", "QemuRunner", "RUNNERS", "Runner",
           "RunnerArg", "SimavrRunner", "StlinkRunner", "Stm32CubeProgrammerRunner", "Uf2Runner",
           "built_in_declarations_text", "debian_package", "install_hint", "package_hint", "runner_for"]
