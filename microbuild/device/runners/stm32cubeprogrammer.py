"""ST's STM32CubeProgrammer command line: ``STM32_Programmer_CLI -c port=SWD -w <firmware.elf>
-v -rst`` through an ST-LINK (or, with `port: USB1`, the chip's DFU bootloader).

Runner args:
  port      SWD (default), JTAG, USB1 (DFU), or a serial port for the UART bootloader
  serial    the ST-LINK's serial number (sn=...), when several are connected
  freq_khz  SWD clock (freq=...)
  mode      connect mode: UR (under reset) for a chip whose firmware disables SWD
  program   the STM32_Programmer_CLI executable (name or path)
The ELF carries its own addresses, so none is needed.
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import (
    Diagnosis,
    FirmwareImage,
    FlashToolRunner,
    board_usb,
)
from microbuild.device.runners.stlink import ST_LINK_IDS


class Stm32CubeProgrammerRunner(FlashToolRunner):
    name = "stm32cubeprogrammer"
    arguments = (
        RunnerArg("port", (str,), "SWD, JTAG, USB1 (DFU) or a serial port"),
        RunnerArg("serial", (str,), "the ST-LINK's serial number"),
        RunnerArg("freq_khz", (int,), "SWD clock"),
        RunnerArg("mode", (str,), "connect mode, e.g. UR (under reset)"),
    )
    program = "STM32_Programmer_CLI"
    install_hint = ("install STM32CubeProgrammer from st.com (STM32CubeProg; free, needs an ST "
                    "account) and put its bin/ folder, which holds STM32_Programmer_CLI, on PATH "
                    "(or give the full path in the runner's `program` arg); the stlink runner "
                    "(stlink-tools from Debian) flashes the same boards")
    udev_hint = ("install the ST-LINK udev rules that come with STM32CubeProgrammer (its "
                 "Drivers/rules folder) into /etc/udev/rules.d/, then `sudo udevadm control "
                 "--reload-rules && sudo udevadm trigger`, and unplug and replug the board")
    failure_patterns = (
        (r"No (?:ST-?LINK|debug probe) detected|No STLink available|Error: No debug probe",
         "no-probe"),
        (r"No DFU device found|No USB DFU", "no-probe"),
        (r"Unable to get core ID|No STM32 target found|Target device not found|"
         r"Error: Cannot connect to|DEV_CONNECT_ERR|Failed to connect", "target"),
        (r"Error: file does not exist|Error: Cannot open file|file not found", "file-not-found"),
        (r"Error: failed to download|Download verified .*failed|Verify failed", "target"),
    )

    def flash_command(self, image: FirmwareImage) -> list[str]:
        connect = [f"port={self.args.get('port', 'SWD')}"]
        for arg, key in (("serial", "sn"), ("freq_khz", "freq"), ("mode", "mode")):
            if self.args.get(arg):
                connect.append(f"{key}={self.args[arg]}")
        return [self.program_name, "-c", *connect, "-w", str(image.elf.resolve()), "-v", "-rst"]

    def write_command(self, data: Path, address: int) -> list[str]:
        command = self.flash_command(FirmwareImage(Path(data)))
        at = command.index("-w")
        return command[:at] + ["-w", str(Path(data).resolve()), f"{address:#010x}", "-v"]

    def probe_description(self) -> str:
        port = str(self.args.get("port", "SWD"))
        if port.upper().startswith("USB"):
            return "the chip's USB DFU bootloader (0483:df11)"
        if port.upper() in ("SWD", "JTAG"):
            return f"an ST-LINK (USB {board_usb(self.board, 0x0483) or ST_LINK_IDS}) over {port}"
        return f"the chip's UART bootloader on {port}"

    def describe(self, kind, image, match):
        if kind == "no-probe":
            return Diagnosis(kind, f"no {self.probe_description()} is connected",
                             "plug the board in by its ST-LINK USB port and check `lsusb | grep "
                             "0483`; for DFU (port USB1) start the chip with BOOT0 high")
        return super().describe(kind, image, match)
