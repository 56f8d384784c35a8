"""What every runner provides, and what each one declares about itself.

A runner is one class per tool (Zephyr's west runners are the model). The class declares:

- ``name``: the runner's name in a board YAML's ``flash:`` list;
- ``capabilities``: what it can do (:class:`Capability`); asking a runner for something it did not
  declare is a clear error naming the board's runners that can, never a surprise at run time;
- ``arguments``: its typed ``args`` (:class:`RunnerArg`), checked with the board file so that a
  misspelt or mistyped arg is reported with file:line and key path like every other board error
  (the board loader reads them as data: boards/runner_declarations.py);
- ``debian_packages`` / ``pypi_packages``: what installs its tool (install hints and generated
  projects' READMEs are derived from them).

Defining a subclass with a ``name`` registers it in :data:`RUNNERS`; the package imports every
module beside this one, so adding a runner is adding a file (docs/adding-a-runner.md).
"""

from __future__ import annotations

import enum
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from microbuild.boards import Board
from microbuild.boards.runner_declarations import RunnerArg, RunnerDeclaration, declare
from microbuild.errors import DeviceError


@dataclass
class CompletedRun:
    """A firmware that ran to its end: its exit status and console output."""

    status: int
    console: str
    stderr: str
    command: list[str]


class Capability(enum.Enum):
    """What a runner can do with a built firmware."""

    RUN = "run"  # boot it on this machine and wait for its end (run_to_exit)
    CONSOLE = "console"  # boot it on this machine with its console connected (start)
    FLASH = "flash"  # program it into a real board (flash)
    GDB_SERVER = "gdb-server"  # serve it to GDB (microbuild debug)

    @property
    def doing(self) -> str:
        """What the capability is, for messages."""
        return {"run": "run a firmware to its end on this machine",
                "console": "boot a firmware on this machine and connect to its console",
                "flash": "program a real board",
                "gdb-server": "start a GDB server"}[self.value]


# The method a class must define for each capability it declares (checked when it is defined).
_IMPLEMENTED_BY = {Capability.RUN: "command", Capability.CONSOLE: "start",
                   Capability.FLASH: "flash_command", Capability.GDB_SERVER: "gdb_server_command"}


#: every runner class by name, filled as the classes are defined
RUNNERS: dict[str, type[Runner]] = {}


class Runner:
    """Base of every runner; see the module docstring for what a subclass declares."""

    name: ClassVar[str] = ""
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    arguments: ClassVar[tuple[RunnerArg, ...]] = ()
    debian_packages: ClassVar[tuple[str, ...]] = ()
    pypi_packages: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for capability in cls.capabilities:
            method = _IMPLEMENTED_BY[capability]
            if getattr(cls, method) is getattr(Runner, method, None):
                raise TypeError(f"runner class {cls.__qualname__} declares {capability.value} "
                                f"but does not define {method}()")
        if "name" in cls.__dict__ and cls.name:
            known = RUNNERS.get(cls.name)
            if known is not None and (known.__module__, known.__qualname__) != (
                    cls.__module__, cls.__qualname__):
                raise TypeError(f"runner name '{cls.name}' is taken by {known.__module__}."
                                f"{known.__qualname__}; give {cls.__qualname__} another name")
            RUNNERS[cls.name] = cls
            declare(cls.declaration())

    def __init__(self, board: Board):
        self.board = board

    @classmethod
    def all_arguments(cls) -> dict[str, RunnerArg]:
        """Every argument this runner takes: its own and its base classes' (e.g. `program`)."""
        found: dict[str, RunnerArg] = {}
        for klass in reversed(cls.__mro__):
            for arg in klass.__dict__.get("arguments", ()):
                found[arg.name] = arg
        return found

    @classmethod
    def declaration(cls) -> RunnerDeclaration:
        """What a board file may say of this runner (its name and args), as the board loader
        reads it (boards/runner_declarations.py)."""
        return RunnerDeclaration(cls.name, f"{cls.__module__}.{cls.__qualname__}",
                                 cls.all_arguments())

    @classmethod
    def can(cls, capability: Capability) -> bool:
        return capability in cls.capabilities

    def require(self, capability: Capability) -> None:
        """Raise DeviceError, naming the board's runners that can, unless this runner declares
        ``capability``."""
        if self.can(capability):
            return
        able = [r.runner for r in self.board.runners
                if r.runner in RUNNERS and RUNNERS[r.runner].can(capability)]
        if able:
            advice = f"use one of the board's runners that can: {', '.join(able)} (--runner NAME)"
        else:
            advice = (f"no runner board '{self.board.name}' lists can; runners that can: "
                      f"{', '.join(sorted(n for n, c in RUNNERS.items() if c.can(capability)))}"
                      " (add one to the board YAML's `flash:`)")
        has = ", ".join(sorted(c.value for c in self.capabilities)) or "nothing"
        raise DeviceError(f"runner '{self.name}' cannot {capability.doing} (it declares: {has}); "
                          f"{advice}")

    def command(self, firmware: Path) -> list[str]:
        """The command line that starts ``firmware`` with its console on stdin/stdout."""
        self.require(Capability.RUN)
        raise NotImplementedError  # a class that declares RUN defines command()

    def start(self, firmware: Path):
        """Boot ``firmware`` on this machine and return a Transport to its console. Only the
        runners that boot firmware themselves (emulators, the host) can; a runner that programs a
        real board flashes it, and the console is then reached over serial or TCP."""
        if self.can(Capability.FLASH):
            raise DeviceError(f"runner '{self.name}' programs a real board; it does not run the "
                              "firmware here. Flash it, then connect to the board's serial port")
        self.require(Capability.CONSOLE)

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        """The command line of a GDB server for ``firmware`` on TCP ``port`` (microbuild debug)."""
        self.require(Capability.GDB_SERVER)
        raise NotImplementedError  # a class that declares GDB_SERVER defines this method

    def run_to_exit(self, firmware: Path, timeout: float = 120.0) -> CompletedRun:
        """Start ``firmware``, wait until it exits, and return what it printed. A firmware that
        does not finish within ``timeout`` seconds is killed and reported as such."""
        self.require(Capability.RUN)
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


def package_hint(cls: type[Runner]) -> str:
    """An install hint made from the packages a runner class declares ("" when it names none)."""
    hints = []
    if cls.debian_packages:
        hints.append(f"sudo apt-get install {' '.join(cls.debian_packages)}")
    if cls.pypi_packages:
        hints.append(f"pip install {' '.join(cls.pypi_packages)} (into the Python environment "
                     "microbuild runs in)")
    return f"install {cls.name}'s tool: {' or '.join(hints)}" if hints else ""
