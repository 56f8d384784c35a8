"""Runners that program a real board through an external flash tool (openocd, st-flash, pyOCD,
J-Link Commander, avrdude, PlatformIO), one small class each, as Zephyr's west runners do.

A runner's settings come from the board YAML's `flash:` entry (`args`), merged with what the
caller passes; :meth:`FlashToolRunner.flash_command` turns them into the tool's command line and
:meth:`FlashToolRunner.flash` runs it. Every failure is a :class:`FlashError` whose message names
the runner, the board, the probe it looked for, the full command, the tool's exit code and the end
of its output, says in plain words what went wrong when the output shows it (no probe, target not
answering, USB permission, missing file, tool not installed, timeout) and what to do about it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from microbuild.boards import Board
from microbuild.device.runners.base import (
    RUNNERS,
    Capability,
    CompletedRun,
    package_hint,
    Runner,
    RunnerArg,
)
from microbuild.errors import DeviceError
from microbuild.firmware.images import region_images

OUTPUT_LINES = 40  # how much of a tool's output a FlashError quotes

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FlashError(DeviceError):
    """Programming a real board failed; the message says why and what to do."""


@dataclass(frozen=True)
class FirmwareImage:
    """A built firmware's files: the ELF, and the raw binary and Intel HEX made from it (None
    where the build made none, as for the host)."""

    elf: Path
    binary: Path | None = None
    hex: Path | None = None

    @classmethod
    def from_build(cls, build: Any) -> FirmwareImage:
        """From a :class:`microbuild.firmware.build.FirmwareBuild` (or anything with elf,
        binary and hex)."""
        return cls(Path(build.elf), _path_or_none(build.binary), _path_or_none(build.hex))

    @classmethod
    def from_path(cls, path: str | Path) -> FirmwareImage:
        """From one of a firmware's files (``--firmware F``): ``F`` with its suffix replaced by
        .elf, .bin and .hex; the .bin and .hex are used when they exist, or when ``F`` is one."""
        path = Path(path)
        suffix = path.suffix.lower()
        elf = path if suffix not in (".bin", ".hex") else path.with_suffix(".elf")
        binary = path if suffix == ".bin" else path.with_suffix(".bin")
        hex_ = path if suffix == ".hex" else path.with_suffix(".hex")
        return cls(elf, binary if binary == path or binary.exists() else None,
                   hex_ if hex_ == path or hex_.exists() else None)


def _path_or_none(value: Any) -> Path | None:
    return None if value is None else Path(value)


@dataclass(frozen=True)
class Diagnosis:
    """What a tool's output says went wrong: a headline and what to do."""

    kind: str  # "no-probe", "target", "usb-permission", "file-not-found", ... or "unknown"
    headline: str
    advice: str


# Output patterns every tool shares (checked after a runner's own `failure_patterns`).
COMMON_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"LIBUSB_ERROR_ACCESS|insufficient permissions|Access denied|\[Errno 13\]"
     r"|Permission denied", "usb-permission"),
    (r"LIBUSB_ERROR_NO_DEVICE|No device found|no probe found|probe not found", "no-probe"),
    (r"No such file or directory|cannot open file|can't open file|could not open file",
     "file-not-found"),
)


def _format_command(command: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in command)


def _tail(output: str, lines: int = OUTPUT_LINES) -> str:
    kept = _ANSI.sub("", output).rstrip().splitlines()
    cut = len(kept) > lines
    kept = kept[-lines:]
    text = "\n".join(f"  | {line}" for line in kept) if kept else "  (it printed nothing)"
    return (f"  | ... (the first lines are left out)\n{text}" if cut else text)


class FlashToolRunner(Runner):
    """Base of the runners that program a real board with an external tool.

    Subclasses set ``name`` (the runner's name in the board YAML), ``program`` (the executable),
    ``install_hint`` and ``udev_hint``, and implement :meth:`flash_command`,
    :meth:`probe_description` and :meth:`image_file`.
    """

    capabilities = frozenset({Capability.FLASH})
    arguments = (RunnerArg("program", (str,), "the tool's executable, a name on PATH or a path"),)
    program = ""
    # How to install the tool, when the declared packages do not say it all (package_hint).
    install_hint = ""
    # What to do when the tool may not open the probe's USB device.
    udev_hint = ("install the udev rules for the probe (Debian's openocd and stlink-tools "
                 "packages ship them in /lib/udev/rules.d/), then `sudo udevadm control "
                 "--reload-rules && sudo udevadm trigger`, unplug and replug the board, and make "
                 "sure your user is in the plugdev group (log in again after `sudo usermod -aG "
                 "plugdev $USER`)")
    # Seconds a timed-out tool gets after SIGTERM to let go of the probe before SIGKILL.
    kill_grace = 3.0
    # (regex on the tool's output, kind): this tool's own wording, checked before COMMON_PATTERNS.
    failure_patterns: tuple[tuple[str, str], ...] = ()
    # What the runner arg `external_loader` is for this tool, when it can program a region on an
    # external flash device (memory.regions.*.external: QSPI/OSPI); "" when it cannot.
    external_loader_help = ""

    def __init__(self, board: Board, args: dict[str, Any] | None = None):
        super().__init__(board)
        listed = next((r.args for r in board.runners if r.runner == self.name), {})
        #: the runner's settings: the board YAML's `args`, overridden by ``args``
        self.args: dict[str, Any] = {**listed, **(args or {})}

    # --- what a subclass provides -----------------------------------------------------------

    def flash_command(self, image: FirmwareImage) -> list[str]:
        """The tool's command line that programs ``image``; its first word is the program as
        configured (``program`` or the `program` arg), resolved to a path by :meth:`flash`."""
        raise NotImplementedError

    def write_command(self, data: Path, address: int) -> list[str]:
        """The command line that writes the raw binary ``data`` at ``address`` and leaves the
        rest of the flash alone (a model blob into a model slot: `microbuild update`). Runners
        whose tool cannot say so raise FlashError."""
        raise FlashError(f"runner {self.name} cannot write a binary at an address (to update a "
                         f"model slot){self._others_hint()}")

    def write_at(self, data: Path, address: int, timeout: float = 120.0) -> CompletedRun:
        """Run ``write_command``: as ``flash``, its failures diagnosed and explained."""
        words = self.write_command(Path(data), address)
        return self._run_tool(self.executable(words) + words[1:],
                              FirmwareImage(Path(data), binary=Path(data)), timeout)

    def probe_description(self) -> str:
        """The probe (or port) the tool looks for, e.g. "an ST-LINK (USB 0483:374b)"."""
        raise NotImplementedError

    def image_file(self, image: FirmwareImage) -> Path:
        """The file of ``image`` that the tool writes to the board (checked before running)."""
        return Path(image.elf)

    def check_image(self, image: FirmwareImage) -> None:
        """Raise FlashError (file not found) unless what the tool needs exists."""
        path = self.image_file(image)
        if not Path(path).is_file():
            raise self._error(
                Diagnosis("file-not-found", f"file not found: the firmware file {path} does not "
                          "exist", self._file_advice(path)),
                command=None, returncode=None, output=None)

    def prepare(self, image: FirmwareImage) -> None:
        """Write anything the command needs besides the image (e.g. a command file)."""

    def failed(self, returncode: int, output: str) -> bool:
        """Whether a run failed; a tool that exits 0 on some failures refines this."""
        return returncode != 0

    # --- shared machinery ---------------------------------------------------------------------

    @property
    def program_name(self) -> str:
        """The program as configured: the `program` arg (a name or path), else ``program``."""
        return str(self.args.get("program") or self.program)

    def fallback_command(self) -> list[str] | None:
        """How to start the tool when it is not on PATH (e.g. ``python -m tool``), or None."""
        return None

    def executable(self, planned: list[str] | None = None) -> list[str]:
        """The words that start the tool (usually its full path). A missing or non-executable
        program raises FlashError with the install hint (and the ``planned`` command line)."""
        configured = self.program_name
        if os.sep in configured or (os.altsep and os.altsep in configured):
            path = Path(configured).expanduser()
            if not path.exists():
                raise self.missing_program(f"{path} does not exist", planned)
            if path.is_dir() or not os.access(path, os.X_OK):
                raise self.missing_program(
                    f"{path} is not an executable file (`chmod +x {shlex.quote(str(path))}` if it is the tool)",
                    planned, installed=True)
            return [str(path)]
        found = shutil.which(configured)
        if found is None:
            # A pip-installed tool in this interpreter's venv whose bin/ is not on PATH.
            beside = Path(sys.executable).parent / configured
            if beside.is_file() and os.access(beside, os.X_OK):
                found = str(beside)
        if found is not None:
            return [found]
        fallback = self.fallback_command()
        if fallback is not None:
            return fallback
        raise self.missing_program(f"`{configured}` is not on PATH", planned)

    def missing_program(self, why: str, planned: list[str] | None = None,
                        installed: bool = False) -> FlashError:
        """The error for a tool that is not installed (or, ``installed``, cannot be started)."""
        state = "cannot be started" if installed else "is not installed"
        lines = [f"flashing board '{self.board.name}' with runner {self.name} failed: its tool "
                 f"{self.program_name} {state}: {why}.",
                 *self._context()]
        if planned:
            lines.append(_field("command", f"{_format_command(planned)} (not run)"))
        advice = self.install_hint or package_hint(type(self))
        if self.args.get("program"):
            advice = (f"fix the runner's `program` arg ({self.args['program']}), or drop it to "
                      f"use {self.program} from PATH. {advice[0].upper()}{advice[1:]}")
        lines.append(f"What to do: {advice}{self._others_hint()}.")
        return FlashError("\n".join(lines))

    def _context(self) -> list[str]:
        where = self.board.files[0] if self.board.files else "the board YAML"
        return [_field("runner", f"{self.name}, args {_format_args(self.args)} (board file "
                                 f"{where})"),
                _field("board", f"{self.board.name}, {self.board.title}"),
                _field("looked for", self.probe_description())]

    def _others_hint(self) -> str:
        others = [r.runner for r in self.board.runners if r.runner != self.name]
        if not others:
            return ""
        return (f". Or use another runner this board lists: {', '.join(others)} "
                f"(--runner NAME)")

    def command(self, firmware: Path) -> list[str]:
        """The Runner interface: the command line that flashes the ELF ``firmware`` (its .bin and
        .hex beside it are used where the tool wants them)."""
        image = FirmwareImage.from_path(firmware)
        return self.executable() + self.flash_command(image)[1:]

    def run_to_exit(self, firmware: Path, timeout: float = 120.0) -> CompletedRun:
        raise DeviceError(
            f"runner {self.name} programs a real board ({self.board.name}); it does not run a "
            f"firmware to its end here. Flash it (`microbuild flash --board {self.board.name} "
            f"--runner {self.name}`), then read its console on the board's serial port at "
            f"{self.board.transport.get('baud', 115200)} baud")

    def check_external_regions(self, image: FirmwareImage) -> None:
        """Refuse, naming the region, when the image has bytes in an external flash region
        (QSPI/OSPI) that this runner cannot program: without an external loader the tool would
        fail half-way, or write only the internal flash and leave the board without its
        weights."""
        external = {r.name: r for r in self.board.regions.values() if r.external}
        if not external or not Path(image.elf).is_file():
            return
        held = {name: data for name, (_, data) in region_images(image.elf, self.board).items()
                if name in external}
        if not held or (self.external_loader_help and self.args.get("external_loader")):
            return
        where = ", ".join(f"'{name}' ({external[name].origin:#010x}: {len(data):,} bytes)"
                          for name, data in held.items())
        capable = [r.runner for r in self.board.runners
                   if getattr(_runner_class(r.runner), "external_loader_help", "")]
        if self.external_loader_help:
            advice = (f"add `external_loader` to runner {self.name}'s args in the board YAML: "
                      f"{self.external_loader_help}")
        else:
            advice = (f"{self.name} programs the chip's internal flash only. Use a runner that "
                      "takes an external loader"
                      + (f" (this board lists {', '.join(capable)})" if capable else
                         " (openocd, with args.external_loader)")
                      + ", or place those sections in internal flash (memory.placement)")
        raise FlashError(
            f"flashing board '{self.board.name}' with runner {self.name} refused: the firmware "
            f"has bytes in external flash region {where}, marked `external: true` in "
            f"{self.board.files[0]}, and {self.name} has no external loader for it.\n"
            f"What to do: {advice}.")

    def flash(self, image: FirmwareImage, timeout: float = 120.0) -> CompletedRun:
        """Program ``image`` into the board. Returns the tool's run (its output in ``console``);
        raises FlashError on any problem."""
        self.check_image(image)
        self.check_external_regions(image)
        words = self.flash_command(image)
        command = self.executable(words) + words[1:]
        self.prepare(image)
        return self._run_tool(command, image, timeout)

    def _run_tool(self, command: list[str], image: FirmwareImage,
                  timeout: float) -> CompletedRun:
        """Run the tool's ``command`` (flashing ``image`` or writing a binary), killing it after
        ``timeout``; a failure is diagnosed from its output and raised as FlashError."""
        try:
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as err:  # e.g. exists but not executable, or a bad interpreter line
            raise self.missing_program(f"starting {command[0]} failed: {err.strerror or err}",
                                       command, installed=True) from None
        try:
            raw, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raw = self._kill(process)
            output = raw.decode(errors="replace")
            raise self._error(
                Diagnosis("timeout",
                          f"{self.program_name} did not finish within {timeout:g} s and was "
                          "stopped (killed)",
                          "a flash of this size takes seconds: the probe or the target is "
                          "probably stuck. Unplug and replug the board (and the probe), close "
                          "other programs using it, and run again; if the flash is really that "
                          "slow, pass a longer timeout"),
                command=command, returncode=None, output=output) from None
        output = raw.decode(errors="replace")
        if self.failed(process.returncode, output):
            raise self._error(self.diagnose(output, image), command=command,
                              returncode=process.returncode, output=output)
        return CompletedRun(status=process.returncode, console=output, stderr="",
                            command=command)

    def _kill(self, process: subprocess.Popen) -> bytes:
        """Stop the tool and everything it started (it runs in its own session); what it
        printed so far."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                raw, _ = process.communicate(timeout=self.kill_grace)
                return raw or b""
            except subprocess.TimeoutExpired:
                continue
        raw, _ = process.communicate()
        return raw or b""

    # --- diagnosis ----------------------------------------------------------------------------

    def diagnose(self, output: str, image: FirmwareImage) -> Diagnosis:
        """What the tool's output says went wrong."""
        text = _ANSI.sub("", output)
        for pattern, kind in (*self.failure_patterns, *COMMON_PATTERNS):
            match = re.search(pattern, text, re.IGNORECASE)
            if match:
                return self.describe(kind, image, match)
        return self.describe("unknown", image, None)

    def describe(self, kind: str, image: FirmwareImage, match: re.Match | None) -> Diagnosis:
        """The headline and advice for a kind of failure; runners add their own kinds."""
        probe = self.probe_description()
        if kind == "no-probe":
            return Diagnosis(kind, f"no probe found: {self.program_name} did not find {probe}",
                             "connect the board's debug USB port to this machine with a data "
                             "cable (not a charge-only one) and check that `lsusb` lists the "
                             "probe; in a container or VM, pass the USB device through to it. "
                             "If it is connected, another program (an IDE, a debugger, a "
                             "serial monitor or another flash) may hold it: close that")
        if kind == "target":
            return Diagnosis(kind, "the target is not responding: the probe answered but the "
                             f"chip did not (or it is not {self.target_text()})",
                             "check that the board is powered, that the probe is wired to its "
                             "SWD header (for an external probe), and that the board YAML's "
                             "runner args name this chip; hold the reset button while the tool "
                             "connects if the firmware on it puts the core to sleep or reuses "
                             "the SWD pins")
        if kind == "usb-permission":
            return Diagnosis(kind, f"permission denied: {self.program_name} found the probe "
                             "but may not open its USB device", self.udev_hint)
        if kind == "file-not-found":
            missing = match.group(1) if match is not None and match.groups() else None
            path = missing or str(self.image_file(image))
            return Diagnosis(kind, f"file not found: {self.program_name} could not open "
                             f"{path}", self._file_advice(path))
        return Diagnosis("unknown", f"{self.program_name} failed",
                         f"{self.program_name}'s output above says why (this runner does not "
                         "recognise it); run the command by hand to try a fix")

    def target_text(self) -> str:
        """The target chip as the runner's args name it, for messages."""
        return f"the chip of the {self.board.title}"

    def _file_advice(self, path: str | Path) -> str:
        suffix = Path(path).suffix
        made = (f" ({self.name} writes the firmware's {suffix} file, which the build makes "
                f"beside the .elf)" if suffix not in ("", ".elf") else "")
        return (f"build the firmware first (`microbuild build --board {self.board.name} --model "
                f"MODEL.tflite`), "
                f"or pass the right .elf with --firmware{made}")

    def _error(self, diagnosis: Diagnosis, *, command: list[str] | None, returncode: int | None,
               output: str | None) -> FlashError:
        lines = [f"flashing board '{self.board.name}' with runner {self.name} failed: "
                 f"{diagnosis.headline}.", *self._context()]
        if command is not None:
            lines.append(_field("command", _format_command(command)))
            lines.append(_field("exit code", "none: stopped" if returncode is None
                                else str(returncode)))
        if output is not None:
            lines.append(f"{self.program_name} printed (its last {OUTPUT_LINES} lines at most):")
            lines.append(_tail(output))
        lines.append(f"What to do: {diagnosis.advice}{self._others_hint()}.")
        return FlashError("\n".join(lines))


def _field(label: str, value: str) -> str:
    return f"  {label + ':':<11} {value}"


def _format_args(args: dict[str, Any]) -> str:
    """Runner args as in the YAML, addresses in hex."""
    if not args:
        return "{}"
    shown = {key: f"{value:#010x}" if key == "address" and isinstance(value, int) else value
             for key, value in args.items()}
    return "{" + ", ".join(f"{key}: {value}" for key, value in shown.items()) + "}"


# --- helpers the runners share -------------------------------------------------------------

# USB vendor ids of debug probes, and what to call them.
PROBE_VENDORS = {0x0483: "an ST-LINK", 0x1366: "a SEGGER J-Link",
                 0x2E8A: "a Raspberry Pi Debug Probe (CMSIS-DAP)", 0x0D28: "a DAPLink probe"}


def board_usb(board: Board, vendor: int | None = None) -> str | None:
    """The board's console USB id "vvvv:pppp" when it is a debug probe's (of ``vendor`` if
    given): on boards with an on-board probe the console is the probe's virtual COM port."""
    usb = board.transport.get("usb") or {}
    vid, pid = usb.get("vid"), usb.get("pid")
    if vid is None or pid is None:
        return None
    if vendor is not None and vid != vendor:
        return None
    if vendor is None and vid not in PROBE_VENDORS:
        return None
    return f"{vid:04x}:{pid:04x}"


def module_command(module: str) -> list[str] | None:
    """``[python, -m, module]`` when ``module`` is importable by this interpreter."""
    if importlib.util.find_spec(module) is None:
        return None
    return [sys.executable, "-m", module]


def _runner_class(name: str):
    """The runner class called ``name`` (None when there is none)."""
    return RUNNERS.get(name)
