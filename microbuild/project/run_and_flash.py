"""The commands that run or flash a firmware from a project (the same as `microbuild run` and
`microbuild flash`), and the packages that install the tools they use."""

from __future__ import annotations

import shlex
from pathlib import Path

from microbuild.boards import Board
from microbuild.device.runners import RUNNERS, debian_package, FirmwareImage, FlashToolRunner
from microbuild.errors import MicrobuildError
from microbuild.firmware.toolchains import debian_packages, select_toolchain


def run_command(board: Board, firmware: str) -> list[str] | None:
    """The command line that runs ``firmware`` (a path as the build files name it) on an emulated
    board or the host, with programs named as on PATH (not where this machine has them), so
    that generated files do not depend on what is installed; None for a real board."""
    runner = board.default_runner
    if runner == "host":
        return [firmware]
    if runner == "qemu":
        from microbuild.device.runners.qemu import QemuRunner

        class Named(QemuRunner):
            def executable(self) -> str:
                default = "qemu-system-arm" if board.arch.startswith("armv") else \
                    "qemu-system-riscv32"
                return (board.qemu or {}).get("executable", default)

        command = Named(board).command(Path("FIRMWARE"))
        return command[:-1] + [firmware]
    if runner == "simavr":
        return ["simavr", "-m", board.core, "-f", str(board.cpu["clock_hz"]), firmware]
    return None


def flash_commands(board: Board, elf: str, binary: str, hexfile: str) -> list[tuple[str, str]]:
    """(runner, shell command) for each flash tool the board lists that a command line can
    drive, in the board's order of preference: the command lines of microbuild's own flash
    runners (microbuild/device/runners), so `make flash` and `microbuild flash` do the same."""
    image = FirmwareImage(Path(elf), Path(binary), Path(hexfile))
    found = []
    for listed in board.runners:
        cls = RUNNERS.get(listed.runner)
        # jlink needs a command file and platformio a project: neither is one command line here.
        if cls is None or not issubclass(cls, FlashToolRunner) or listed.runner in (
                "jlink", "platformio"):
            continue
        # A fixed port keeps the generated file the same on every machine (avrdude would
        # otherwise look for the board's serial port now).
        options = {"args": {"port": "/dev/ttyACM0"}} if listed.runner == "avrdude" else {}
        try:
            command = cls(board, **options).flash_command(image)
        except MicrobuildError:
            continue  # e.g. pyocd without a target in the YAML
        # The runners name files by absolute path; a project names them relative to itself.
        relative = {str(Path(f).resolve()): f for f in (elf, binary, hexfile)}
        parts = [str(part) for part in command]
        for absolute, rel in relative.items():
            parts = [part.replace(absolute, rel) for part in parts]
        found.append((listed.runner, shlex.join(parts)))
    return found


def console_hint(board: Board) -> str:
    """How to watch the console of a real board."""
    baud = board.transport.get("baud", 115200)
    return (f"open its console (`pio device monitor -b {baud}`, `picocom -b {baud} /dev/ttyACM0` "
            f"or any serial terminal at {baud} baud) and reset the board")


def toolchain_packages(board: Board, family: str | None) -> str:
    return " ".join(debian_packages(select_toolchain(board, family).family))


def flash_package(runner: str) -> str | None:
    """The Debian package of a flash runner's tool, as its class declares (None: not in Debian,
    e.g. pyocd, which is on PyPI)."""
    return debian_package(runner)


def emulator_package(board: Board) -> str | None:
    if board.default_runner == "qemu":
        program = (board.qemu or {}).get("executable", "qemu-system-arm")
        return "qemu-system-arm" if program == "qemu-system-arm" else "qemu-system-misc"
    if board.default_runner == "simavr":
        return "simavr"
    return None
