"""pyOCD (pip package `pyocd`): ``pyocd flash -t <target> <firmware.elf>``.

pyOCD is a Python package: when `pyocd` is not on PATH (a venv that is not activated), the one
beside this interpreter, or ``python -m pyocd`` when this interpreter can import it, is used.

Runner args:
  target         pyOCD's target type (`pyocd list --targets`), e.g. stm32f746xg
  frequency_hz   SWD clock (-f)
  probe          the unique id of the probe to use, when several are connected (-u)
  program        the pyocd executable (name or path)
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import Capability, RunnerArg
from microbuild.device.runners.flash_tool import (
    PROBE_VENDORS,
    Diagnosis,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    board_usb,
    module_command,
)


class PyocdRunner(FlashToolRunner):
    name = "pyocd"
    capabilities = FlashToolRunner.capabilities | {Capability.GDB_SERVER}
    arguments = (
        RunnerArg("target", (str,), "pyOCD's target type, e.g. stm32f746xg"),
        RunnerArg("frequency_hz", (int,), "SWD clock (-f)"),
        RunnerArg("probe", (str,), "the unique id of the probe (-u)"),
    )
    pypi_packages = ("pyocd",)
    program = "pyocd"
    install_hint = "install pyOCD into the Python environment microbuild runs in: pip install pyocd"
    udev_hint = ("install udev rules for the probe: Debian's openocd package ships rules for "
                 "ST-LINK, J-Link and CMSIS-DAP probes (/lib/udev/rules.d/60-openocd.rules; "
                 "sudo apt-get install openocd), pyOCD's own are in its source tree under udev/; "
                 "then `sudo udevadm control --reload-rules && sudo udevadm trigger`, and unplug "
                 "and replug the board")
    failure_patterns = (
        (r"LIBUSB_ERROR_ACCESS|Access denied|insufficient permissions|\[Errno 13\]",
         "usb-permission"),
        (r"No (?:connected|available) debug probes|No debug probes? (?:are )?connected"
         r"|No matching (?:debug )?probe", "no-probe"),
        (r"Target type '?([\w.-]+?)'? not recognized", "unknown-target"),
        (r"No ACK|Could not connect to (?:the )?target|Unable to connect|TransferFaultError"
         r"|Memory transfer fault|Unable to read AP|Failed to connect|Target is locked"
         r"|DP IDR", "target"),
        (r"No such file or directory: '([^']+)'|FileNotFoundError", "file-not-found"),
    )

    def fallback_command(self) -> list[str] | None:
        return module_command("pyocd") if self.program_name == self.program else None

    @property
    def target(self) -> str:
        target = self.args.get("target")
        if not target:
            raise FlashError(
                f"board '{self.board.name}': runner pyocd has no `target` (pyOCD's name for "
                f"the chip, from `pyocd list --targets`); add it to its entry in the board YAML's "
                f"`flash:`, e.g. `args: {{target: stm32f746xg}}`{self._others_hint()}")
        return str(target)

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "flash", "-t", self.target]
        if self.args.get("frequency_hz"):
            command += ["-f", str(int(self.args["frequency_hz"]))]
        if self.args.get("probe"):
            command += ["-u", str(self.args["probe"])]
        return command + [str(image.elf.resolve())]

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data)))[:-1]
        return command + ["--format", "bin", "--base-address", f"{address:#x}",
                          str(Path(data).resolve())]

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        command = [self.program_name, "gdbserver", "-t", self.target, "-p", str(port)]
        if self.args.get("probe"):
            command += ["-u", str(self.args["probe"])]
        return command

    def probe_description(self) -> str:
        ids = board_usb(self.board)
        if ids:
            return f"{PROBE_VENDORS[int(ids[:4], 16)]} (USB {ids})"
        return ("a CMSIS-DAP, ST-LINK or J-Link debug probe on the board's SWD header (pyOCD "
                "takes any of them)")

    def target_text(self) -> str:
        return f"pyOCD's target {self.args.get('target', '(none)')}"

    def describe(self, kind, image, match):
        if kind == "unknown-target":
            return Diagnosis(kind, f"pyOCD does not know the target {match.group(1)}",
                             f"targets outside pyOCD's built-in list come from a CMSIS-Pack: "
                             f"`pyocd pack install {match.group(1)}` installs it; or check the "
                             f"`target` in the board YAML against `pyocd list --targets`")
        return super().describe(kind, image, match)
