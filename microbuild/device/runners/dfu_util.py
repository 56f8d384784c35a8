"""dfu-util (Debian package `dfu-util`): ``dfu-util -d <vid:pid> -a <alt> -s <address>:leave -D
<firmware.bin>`` into a chip's USB DFU bootloader (STM32's system memory bootloader: BOOT0 high
at reset; USB 0483:df11).

Runner args:
  device    USB vid:pid of the DFU device (default 0483:df11, the STM32 ROM bootloader)
  alt       DFU alternate setting (default 0: internal flash on STM32)
  address   where the binary goes; default: the origin of the region .text is placed in
  leave     leave DFU and start the firmware afterwards (default true)
  serial    which device, when several are connected (-S)
  program   the dfu-util executable (name or path)
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import Diagnosis, FirmwareImage, FlashToolRunner

STM32_DFU = "0483:df11"


class DfuUtilRunner(FlashToolRunner):
    name = "dfu-util"
    arguments = (
        RunnerArg("device", (str,), "USB vid:pid of the DFU device"),
        RunnerArg("alt", (int,), "DFU alternate setting"),
        RunnerArg("address", (int,), "where the binary goes"),
        RunnerArg("leave", (bool,), "leave DFU and start the firmware afterwards"),
        RunnerArg("serial", (str,), "which device, when several are connected"),
    )
    debian_packages = ("dfu-util",)
    program = "dfu-util"
    install_hint = "install dfu-util: sudo apt-get install dfu-util"
    udev_hint = ("add a udev rule giving your user the DFU device, e.g. /etc/udev/rules.d/"
                 "50-dfu.rules with `SUBSYSTEMS==\"usb\", ATTRS{idVendor}==\"0483\", "
                 "ATTRS{idProduct}==\"df11\", MODE=\"0666\"`, then `sudo udevadm control "
                 "--reload-rules && sudo udevadm trigger`, and replug the board")
    failure_patterns = (
        (r"No DFU capable USB device available|No DFU capable USB device found", "no-probe"),
        (r"Cannot open DFU device|LIBUSB_ERROR_ACCESS", "usb-permission"),
        (r"Could not open file (\S+) for reading", "file-not-found"),
        (r"More than one DFU capable USB device found", "several"),
        (r"Error during download|ERASE_PAGE not correctly executed|Last page at .* is not "
         r"writeable|DFU state\(\d+\) = dfuERROR", "target"),
    )

    def address(self) -> int:
        if self.args.get("address") is not None:
            value = self.args["address"]
            return int(value, 0) if isinstance(value, str) else int(value)
        region = self.board.region_for("text")
        return region.origin if region is not None else 0x08000000

    def image_file(self, image: FirmwareImage) -> Path:
        return Path(image.binary) if image.binary is not None else Path(image.elf).with_suffix(".bin")

    def flash_command(self, image: FirmwareImage) -> list[str]:
        return self._download(self.image_file(image), self.address())

    def write_command(self, data: Path, address: int) -> list[str]:
        """A DfuSe download at ``address`` erases only the pages it writes (a model slot)."""
        return self._download(Path(data), address)

    def _download(self, data: Path, address: int) -> list[str]:
        command = [self.program_name, "-d", str(self.args.get("device", STM32_DFU)),
                   "-a", str(self.args.get("alt", 0))]
        if self.args.get("serial"):
            command += ["-S", str(self.args["serial"])]
        where = f"{address:#010x}" + (":leave" if self.args.get("leave", True) else "")
        return command + ["-s", where, "-D", str(data.resolve())]

    def probe_description(self) -> str:
        return (f"a USB DFU bootloader ({self.args.get('device', STM32_DFU)}"
                f"{', the STM32 system bootloader' if 'device' not in self.args else ''})")

    def describe(self, kind, image, match):
        if kind == "no-probe":
            return Diagnosis(kind, f"no USB DFU device {self.args.get('device', STM32_DFU)} is "
                             "connected", "start the chip in its DFU bootloader: on STM32 hold "
                             "BOOT0 high (the BOOT button or jumper) while resetting, with the "
                             "chip's own USB port (not the ST-LINK's) plugged in; `dfu-util -l` "
                             "lists what it sees")
        if kind == "several":
            return Diagnosis(kind, "several DFU devices are connected",
                             "pick one with the runner's `serial` arg (`dfu-util -l` lists them)")
        return super().describe(kind, image, match)
