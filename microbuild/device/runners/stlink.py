"""ST-LINK with stlink-tools' st-flash (Debian package `stlink-tools`):
``st-flash --reset write <firmware.bin> <address>``.

Runner args:
  address  where the binary goes (hex on the command line); default: the origin of the region
           the board places .text in (0x08000000 on STM32)
  reset    reset the chip after writing (default true)
  serial   which ST-LINK, when several are connected (--serial)
  freq_khz SWD clock (--freq)
  program  the st-flash executable (name or path)
Without a .bin, the .hex is written (--format ihex, no address).
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import Capability, RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashToolRunner,
    board_usb,
)

ST_LINK_IDS = "0483:3748, 374b, 374e, 374f or 3753"


class StlinkRunner(FlashToolRunner):
    """st-flash programs; st-util (same package) is the GDB server."""

    name = "stlink"
    capabilities = FlashToolRunner.capabilities | {Capability.GDB_SERVER}
    arguments = (
        RunnerArg("address", (int,), "where the binary goes"),
        RunnerArg("reset", (bool,), "reset the chip after writing"),
        RunnerArg("serial", (str,), "which ST-LINK, when several are connected"),
        RunnerArg("freq_khz", (int,), "SWD clock (--freq)"),
    )
    debian_packages = ("stlink-tools",)
    program = "st-flash"
    install_hint = "install stlink-tools: sudo apt-get install stlink-tools"
    udev_hint = ("install the ST-LINK udev rules (Debian's stlink-tools package puts them in "
                 "/lib/udev/rules.d/49-stlinkv*.rules), then `sudo udevadm control "
                 "--reload-rules && sudo udevadm trigger`, and unplug and replug the board")
    failure_patterns = (
        (r"LIBUSB_ERROR_ACCESS|libusb_open\(\) failed|insufficient permissions", "usb-permission"),
        (r"Couldn't find any ST-Link devices|No ST-?LINK (?:device )?found", "no-probe"),
        (r"open\((.+?)\) == -1|map_file\(\) == -1|Couldn't open file", "file-not-found"),
        (r"Unknown memory region|is not in (?:a )?(?:valid )?flash|outside of flash", "address"),
        (r"unknown chip id|Failed to enter SWD mode|Failed to connect to target|target voltage"
         r"|failed to read chip id|Can not connect to target|Failed to exit debug mode"
         r"|Flash memory is write protected|Flash programming error", "target"),
    )

    def address(self) -> int:
        if self.args.get("address") is not None:
            value = self.args["address"]
            return int(value, 0) if isinstance(value, str) else int(value)
        region = self.board.region_for("text")
        return region.origin if region is not None else 0x08000000

    def image_file(self, image: FirmwareImage) -> Path:
        if image.binary is not None:
            return Path(image.binary)
        if image.hex is not None:
            return Path(image.hex)
        return Path(image.elf).with_suffix(".bin")

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name]
        if self.args.get("reset", True):
            command.append("--reset")
        if self.args.get("serial"):
            command += ["--serial", str(self.args["serial"])]
        if self.args.get("freq_khz"):
            command.append(f"--freq={int(self.args['freq_khz'])}")
        path = self.image_file(image)
        if image.binary is None and image.hex is not None:
            return command + ["--format", "ihex", "write", str(path.resolve())]
        return command + ["write", str(path.resolve()), f"{self.address():#010x}"]

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data), binary=Path(data)))[:-2]
        return command + [str(Path(data).resolve()), f"{address:#010x}"]

    def gdb_server_command(self, firmware: Path, port: int) -> list[str]:
        command = ["st-util", "-p", str(port)]
        if self.args.get("serial"):
            command += ["--serial", str(self.args["serial"])]
        return command

    def probe_description(self) -> str:
        return f"an ST-LINK (USB {board_usb(self.board, 0x0483) or ST_LINK_IDS})"

    def describe(self, kind, image, match):
        if kind == "address":
            return Diagnosis(kind, f"st-flash rejected the address {self.address():#010x}: it is "
                             "not in the chip's flash",
                             "set `address` in the stlink runner's args in the board YAML to "
                             "the start of flash (0x08000000 on STM32)")
        return super().describe(kind, image, match)
