"""SEGGER J-Link with J-Link Commander: ``JLinkExe -NoGui 1 -CommandFile <firmware>.jlink``,
the command file (written beside the firmware) selecting the device, SWD and the speed, loading
the .hex (else the .bin at the flash origin, else the .elf), resetting the core and starting it.

J-Link Commander is SEGGER's proprietary software: no Debian or pip package has it.

Runner args:
  device     J-Link's device name, e.g. nRF52840_xxAA (J-Link Commander's `device` list)
  interface  SWD (default) or JTAG
  speed      interface clock in kHz (default 4000), or "auto"
  serial     the J-Link's serial number, when several are connected (-SelectEmuBySN)
  program    the J-Link Commander executable (name or path)
"""

from __future__ import annotations

import re
from pathlib import Path

from microbuild.device.runners.base import Capability, RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashError,
    FlashToolRunner,
    board_usb,
)

DEFAULT_SPEED_KHZ = 4000


class JlinkRunner(FlashToolRunner):
    name = "jlink"
    capabilities = FlashToolRunner.capabilities | {Capability.GDB_SERVER}
    arguments = (
        RunnerArg("device", (str,), "J-Link's device name, e.g. nRF52840_xxAA"),
        RunnerArg("interface", (str,), "SWD or JTAG"),
        RunnerArg("speed", (int, str), "interface clock in kHz, or \"auto\""),
        RunnerArg("serial", (str, int), "the J-Link's serial number"),
    )
    program = "JLinkExe"
    install_hint = ("J-Link Commander (JLinkExe) is SEGGER's software and is not in Debian or on "
                    "PyPI: download the \"J-Link Software and Documentation Pack\" for Linux (the "
                    ".deb) from SEGGER, https://www.segger.com/downloads/jlink/, and install it "
                    "with `sudo dpkg -i JLink_Linux_*.deb` (it puts JLinkExe on PATH and installs "
                    "its udev rules)")
    udev_hint = ("install the J-Link udev rules: SEGGER's .deb installs "
                 "/etc/udev/rules.d/99-jlink.rules (reinstall it, or copy the rules file from "
                 "/opt/SEGGER/JLink/), then `sudo udevadm control --reload-rules && sudo "
                 "udevadm trigger`, and unplug and replug the board")
    failure_patterns = (
        (r"LIBUSB_ERROR_ACCESS|insufficient permissions|Access denied", "usb-permission"),
        (r"Connecting to J-Link via USB\.+ ?FAILED|Cannot connect to J-Link|No emulators? "
         r"(?:connected|found)|Could not open J-Link", "no-probe"),
        (r"Unknown device|device .* is unknown|Unsupported device|No device found matching",
         "unknown-device"),
        (r"Could not open file|File not found|Failed to open file|Cannot open file",
         "file-not-found"),
        (r"Cannot connect to target|Could not connect to target|Failed to attach to CPU"
         r"|Failed to connect|Target voltage too low|No target voltage|Could not find core"
         r"|Failed to halt CPU", "target"),
        (r"Verify failed|Verification failed|Programming failed", "verify"),
    )

    @property
    def device(self) -> str:
        device = self.args.get("device")
        if not device:
            raise FlashError(
                f"board '{self.board.name}': runner jlink has no `device` (J-Link's name for the "
                f"chip, e.g. nRF52840_xxAA); add it to its entry in the board YAML's `flash:`"
                f"{self._others_hint()}")
        return str(device)

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        # SEGGER's command-line GDB server, from the same software pack as JLinkExe.
        command = ["JLinkGDBServerCLExe", "-device", self.device, "-if",
                   str(self.args.get("interface", "SWD")), "-speed",
                   str(self.args.get("speed", DEFAULT_SPEED_KHZ)), "-port", str(port)]
        if self.args.get("serial"):
            command += ["-select", f"USB={self.args['serial']}"]
        return command

    def image_file(self, image: FirmwareImage) -> Path:
        if image.hex is not None:
            return Path(image.hex)
        if image.binary is not None:
            return Path(image.binary)
        return Path(image.elf)

    def command_file(self, image: FirmwareImage) -> Path:
        """Where the J-Link Commander script for ``image`` is written: beside the firmware."""
        return Path(image.elf).resolve().with_suffix(".jlink")

    def script(self, image: FirmwareImage) -> str:
        """The J-Link Commander script that flashes ``image``."""
        path = self.image_file(image).resolve()
        load = f"loadfile {path}"
        if path.suffix.lower() == ".bin":
            region = self.board.region_for("text")
            load += f" {region.origin if region is not None else 0:#x}"
        return "\n".join([
            f"device {self.device}",
            f"si {self.args.get('interface', 'SWD')}",
            f"speed {self.args.get('speed', DEFAULT_SPEED_KHZ)}",
            "connect",
            "r",
            "h",
            load,
            "r",
            "g",
            "exit",
        ]) + "\n"

    def write_script(self, data: Path, address: int) -> str:
        """The J-Link Commander script that writes the binary ``data`` at ``address``."""
        return "\n".join([f"device {self.device}", f"si {self.args.get('interface', 'SWD')}",
                          f"speed {self.args.get('speed', DEFAULT_SPEED_KHZ)}", "connect", "r",
                          "h", f"loadfile {Path(data).resolve()} {address:#x}", "r", "g",
                          "exit"]) + "\n"

    def write_command(self, data: Path, address: int) -> list[str]:
        # The script is written beside the blob now: write_at runs the command right after.
        script = Path(data).resolve().with_suffix(".jlink")
        script.write_text(self.write_script(data, address))
        return self.flash_command(FirmwareImage(Path(data)))[:-1] + [str(script)]

    def flash_command(self, image: FirmwareImage) -> list[str]:
        self.device  # noqa: B018 - a runner without `device` cannot write its command file
        command = [self.program_name, "-NoGui", "1", "-ExitOnError", "1"]
        if self.args.get("serial"):
            command += ["-SelectEmuBySN", str(self.args["serial"])]
        return command + ["-CommandFile", str(self.command_file(image))]

    def prepare(self, image: FirmwareImage) -> None:
        self.command_file(image).write_text(self.script(image))

    def failed(self, returncode: int, output: str) -> bool:
        # Older J-Link Commanders exit 0 after a failed command.
        return returncode != 0 or any(re.search(p, output, re.IGNORECASE)
                                      for p, kind in self.failure_patterns)

    def probe_description(self) -> str:
        ids = board_usb(self.board, 0x1366)
        if ids:
            return f"a SEGGER J-Link (USB {ids})"
        return "a SEGGER J-Link (USB vendor 1366) on the board's SWD header"

    def target_text(self) -> str:
        return f"the J-Link device {self.args.get('device', '(none)')}"

    def describe(self, kind, image, match):
        if kind == "unknown-device":
            return Diagnosis(kind, f"J-Link does not know the device {self.args.get('device')}",
                             "check `device` in the jlink runner's args in the board YAML against "
                             "SEGGER's list (J-Link Commander: `device ?`); a newer J-Link "
                             "software pack may be needed for new chips")
        if kind == "verify":
            return Diagnosis(kind, "J-Link could not program or verify the flash",
                             "run again; if it repeats, the chip's flash may be protected (a "
                             "mass erase with `erase` in J-Link Commander), or lower `speed`")
        return super().describe(kind, image, match)
