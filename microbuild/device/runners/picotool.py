"""Raspberry Pi's picotool: ``picotool load -x -t elf <firmware.elf>`` into an RP2040 (or
RP2350) in BOOTSEL mode over USB, then run it.

Runner args:
  force    reboot a board running a firmware with USB stdio into BOOTSEL first (-f)
  bus, address  which device, when several are connected (--bus, --address)
  program  the picotool executable (name or path)
The ELF must carry a boot2 second-stage loader (the RP2040's boot ROM checks its CRC).
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import Diagnosis, FirmwareImage, FlashToolRunner

RP2040_BOOTSEL = "2e8a:0003"


class PicotoolRunner(FlashToolRunner):
    name = "picotool"
    arguments = (
        RunnerArg("force", (bool,), "reboot a running board into BOOTSEL first (-f)"),
        RunnerArg("bus", (int,), "the USB bus of the device (--bus)"),
        RunnerArg("address", (int,), "the USB address of the device (--address)"),
    )
    program = "picotool"
    install_hint = ("install picotool: build it from https://github.com/raspberrypi/picotool "
                    "(cmake, needs libusb-1.0-0-dev and the pico-sdk), or use the uf2 runner, "
                    "which needs no tool: it copies the .uf2 to the board's RPI-RP2 drive")
    udev_hint = ("install picotool's udev rules (udev/99-picotool.rules in its source tree) "
                 "into /etc/udev/rules.d/, then `sudo udevadm control --reload-rules && sudo "
                 "udevadm trigger`, and unplug and replug the board")
    failure_patterns = (
        (r"appears to be a RP2\d+ device in BOOTSEL mode, but\s+picotool was unable to connect",
         "usb-permission"),
        (r"with a USB serial connection, so consider -f", "not-bootsel"),
        (r"No accessible RP2\d+(?:/RP2\d+)? devices? in BOOTSEL mode (?:was|were) found",
         "no-probe"),
        (r"ERROR: The (?:RP2\d+ )?device returned an error|Verify failed", "target"),
    )

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "load"]
        if self.args.get("force"):
            command.append("-f")
        command += ["-x", str(image.elf.resolve()), "-t", "elf"]
        if self.args.get("bus") is not None:
            command += ["--bus", str(self.args["bus"])]
        if self.args.get("address") is not None:
            command += ["--address", str(self.args["address"])]
        return command

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data)))
        at = command.index("-x")
        # -o: where a raw binary goes (picotool load's offset); no -x: do not start it.
        return command[:at] + [str(Path(data).resolve()), "-t", "bin", "-o", f"{address:#x}"] \
            + command[at + 4:]

    def probe_description(self) -> str:
        return f"an RP2040 in BOOTSEL mode on USB ({RP2040_BOOTSEL}, the boot ROM's USB device)"

    def describe(self, kind, image, match):
        if kind == "no-probe":
            return Diagnosis(kind, "no RP2040 in BOOTSEL mode is connected",
                             "hold the board's BOOTSEL button while plugging it in (or while "
                             "pressing RUN), then run again; a board running a firmware with USB "
                             "stdio can be rebooted into BOOTSEL with `force: true` in the "
                             "runner's args")
        if kind == "not-bootsel":
            return Diagnosis(kind, "the RP2040 is running a firmware, not in BOOTSEL mode",
                             "set `force: true` in the picotool runner's args (picotool -f "
                             "reboots it into BOOTSEL), or hold BOOTSEL while plugging it in")
        return super().describe(kind, image, match)
