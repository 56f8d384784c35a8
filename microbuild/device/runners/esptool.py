"""Espressif's esptool (pip package `esptool`): ``esptool --chip <chip> --port <port> --baud
<baud> write-flash <address> <firmware.bin>`` over the chip's ROM serial bootloader.

esptool is a Python package: when it is not on PATH (a venv that is not activated), the one
beside this interpreter, or ``python -m esptool`` when this interpreter can import it, is used.

Runner args:
  chip      esptool's chip name (esp32, esp32c3, esp32s3, ...); default auto (esptool detects it)
  port      the serial port of the board's USB-UART or USB-Serial/JTAG (default: esptool tries
            every port it finds)
  baud      baud rate while writing (default 460800)
  address   where the image goes (default 0x0: an image that starts with the bootloader)
  program   the esptool executable (name or path)
The esptool app image beside the ELF (``<name>.app-image.bin``, written by the board's
``esp_app_image`` image step) is written when there is one, else the .bin beside the ELF.
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashToolRunner,
    module_command,
)


class EsptoolRunner(FlashToolRunner):
    name = "esptool"
    arguments = (
        RunnerArg("chip", (str,), "esptool's chip name, e.g. esp32c3"),
        RunnerArg("port", (str,), "the serial port"),
        RunnerArg("baud", (int,), "baud rate while writing"),
        RunnerArg("address", (int,), "where the image goes"),
    )
    pypi_packages = ("esptool",)
    program = "esptool"
    install_hint = ("install esptool into the Python environment microbuild runs in: "
                    "pip install esptool")
    udev_hint = ("add your user to the dialout group, which owns serial ports (`sudo usermod "
                 "-aG dialout $USER`, then log in again)")
    failure_patterns = (
        # esptool 4/5 on a port that does not exist, or that another program holds.
        (r"Could not open (\S+?),? the port (?:is busy or )?doesn'?t exist"
         r"|could not open port '?([^':\s]+)", "no-port"),
        (r"No serial ports found", "no-probe"),
        (r"\[Errno 13\] Permission denied|Permission denied: '(/dev/[^']+)'", "usb-permission"),
        (r"Failed to connect to (?:Espressif device|ESP[\w-]*)|No serial data received"
         r"|Wrong boot mode detected|Invalid head of packet", "target"),
        (r"This chip is (ESP[\w-]+),? not (ESP[\w-]+)|Wrong --chip argument", "wrong-chip"),
    )

    def fallback_command(self) -> list[str] | None:
        return module_command("esptool") if self.program_name == self.program else None

    def address(self) -> int:
        value = self.args.get("address", 0)
        return int(value, 0) if isinstance(value, str) else int(value)

    def image_file(self, image: FirmwareImage) -> Path:
        # The board's esp_app_image step writes <name>.app-image.bin beside the ELF: that, not
        # the raw objcopy .bin, is what the ESP boot loader reads.
        app_image = Path(image.elf).with_suffix(".app-image.bin")
        if app_image.is_file():
            return app_image
        return Path(image.binary) if image.binary is not None else Path(image.elf).with_suffix(".bin")

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "--chip", str(self.args.get("chip", "auto"))]
        if self.args.get("port"):
            command += ["--port", str(self.args["port"])]
        command += ["--baud", str(int(self.args.get("baud", 460800)))]
        return command + ["write-flash", f"{self.address():#x}",
                          str(self.image_file(image).resolve())]

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data), binary=Path(data)))[:-2]
        return command + [f"{address:#x}", str(Path(data).resolve())]

    def probe_description(self) -> str:
        port = self.args.get("port")
        chip = self.args.get("chip", "an ESP chip")
        where = f"serial port {port}" if port else "any serial port (no `port` arg)"
        return f"{chip}'s ROM bootloader on {where}"

    def describe(self, kind, image, match):
        if kind == "no-port":
            port = next((g for g in match.groups() if g), self.args.get("port", "?"))
            return Diagnosis(kind, f"the serial port {port} does not exist or another program "
                             "holds it (no board is plugged in there)",
                             f"plug the board in and give its port in the esptool runner's "
                             f"`port` arg (`ls /dev/ttyUSB* /dev/ttyACM*` lists them; the "
                             f"ESP32-C3's built-in USB is a /dev/ttyACM*), or pass "
                             f"--port; close any serial monitor using {port}")
        if kind == "no-probe":
            return Diagnosis(kind, "esptool found no serial port at all: no board is plugged in",
                             "plug the board in by USB (a data cable, not a charge-only one) and "
                             "check `ls /dev/ttyUSB* /dev/ttyACM*`")
        if kind == "target":
            return Diagnosis(kind, "the port answered but the chip's ROM bootloader did not",
                             "hold the BOOT button (GPIO9 on the ESP32-C3, GPIO0 on the ESP32) "
                             "while pressing RESET to enter download mode, then run again; or "
                             "lower `baud` in the runner's args")
        if kind == "wrong-chip":
            return Diagnosis(kind, "the chip on the port is not the one the runner's `chip` arg "
                             "names", "set `chip` in the esptool runner's args to the chip "
                             "esptool reports (or `auto`)")
        return super().describe(kind, image, match)
