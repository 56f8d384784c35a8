"""Nordic's programmers for nRF chips through the board's J-Link (on the nRF52840 DK: the
on-board J-Link OB, USB 1366:1015): nrfjprog (nRF Command Line Tools, now replaced by nrfutil)
and nrfutil's `device` command. Both write the Intel HEX.

nrfjprog: ``nrfjprog -f <family> --program <firmware.hex> --sectorerase --verify --reset``
  family   NRF52 (default), NRF53, NRF91, NRF51
  snr      the J-Link's serial number, when several are connected (--snr)
  erase    sectorerase (default: only the pages the image covers) or chiperase
nrfutil:  ``nrfutil device program --firmware <firmware.hex> --options
          chip_erase_mode=ERASE_RANGES_TOUCHED_BY_FIRMWARE,verify=VERIFY_READ,reset=RESET_SYSTEM``
  serial   the J-Link's serial number (--serial-number)
  erase    nrfutil's chip_erase_mode (default ERASE_RANGES_TOUCHED_BY_FIRMWARE)
Both take `program` (the executable, name or path).
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

_JLINK_UDEV = ("install SEGGER's J-Link software (it adds /etc/udev/rules.d/99-jlink.rules), "
               "then `sudo udevadm control --reload-rules && sudo udevadm trigger`, and unplug "
               "and replug the board")


class _NordicRunner(FlashToolRunner):
    udev_hint = _JLINK_UDEV

    def image_file(self, image: FirmwareImage) -> Path:
        return Path(image.hex) if image.hex is not None else Path(image.elf).with_suffix(".hex")

    def probe_description(self) -> str:
        ids = board_usb(self.board, 0x1366)
        return f"a SEGGER J-Link (USB {ids or 'vendor 1366'}) wired to the nRF chip's SWD"

    def describe(self, kind, image, match):
        if kind == "no-probe":
            return Diagnosis(kind, "no J-Link is connected",
                             "plug the board in by its J-Link USB port (on the nRF52840 DK the "
                             "one on the short side, with the board switched on), and check "
                             "`lsusb | grep 1366`")
        if kind == "target":
            return Diagnosis(kind, "the J-Link answered but the nRF chip did not",
                             "check that the board is powered; a chip with access port "
                             "protection on needs a recover first (`nrfjprog --recover` or "
                             "`nrfutil device recover`: it erases the chip)")
        return super().describe(kind, image, match)


class NrfjprogRunner(_NordicRunner):
    name = "nrfjprog"
    arguments = (
        RunnerArg("family", (str,), "NRF52, NRF53, NRF91 or NRF51"),
        RunnerArg("snr", (str, int), "the J-Link's serial number (--snr)"),
        RunnerArg("erase", (str,), "sectorerase or chiperase"),
    )
    program = "nrfjprog"
    install_hint = ("install Nordic's nRF Command Line Tools (nrfjprog) and SEGGER's J-Link "
                    "software from nordicsemi.com; Nordic now replaces nrfjprog with nrfutil: "
                    "the nrfutil runner does the same")
    failure_patterns = (
        (r"There is no debugger connected to the PC|ERROR: \[\s*-?\d+\]? ?No debugger"
         r"|NO_EMULATOR_CONNECTED|EmulatorNotFound", "no-probe"),
        (r"Could not connect to target|CouldNotConnectToDevice|Access protection is enabled"
         r"|ApprotectEnabled|WrongFamilyForDevice|device does not match", "target"),
        (r"The file (\S+) (?:specified )?(?:could not be found|does not exist)", "file-not-found"),
        (r"JLinkARM DLL|Could not load JLinkARM|JLinkARMDLLNotFound", "jlink-dll"),
    )

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "-f", str(self.args.get("family", "NRF52"))]
        if self.args.get("snr"):
            command += ["--snr", str(self.args["snr"])]
        erase = str(self.args.get("erase", "sectorerase"))
        return command + ["--program", str(self.image_file(image).resolve()), f"--{erase}",
                          "--verify", "--reset"]

    def describe(self, kind, image, match):
        if kind == "jlink-dll":
            return Diagnosis(kind, "nrfjprog cannot find SEGGER's J-Link library",
                             "install SEGGER's J-Link Software and Documentation Pack "
                             "(segger.com/downloads/jlink), which nrfjprog drives")
        return super().describe(kind, image, match)


class NrfutilRunner(_NordicRunner):
    name = "nrfutil"
    arguments = (
        RunnerArg("serial", (str, int), "the J-Link's serial number (--serial-number)"),
        RunnerArg("erase", (str,), "nrfutil's chip_erase_mode"),
    )
    program = "nrfutil"
    install_hint = ("install nrfutil from nordicsemi.com (a single binary: put it on PATH), "
                    "then its device command: `nrfutil install device`; it drives SEGGER's "
                    "J-Link software, which must be installed too")
    failure_patterns = (
        (r"[Nn]o devices? (?:were )?found|Found 0 supported devices|No J-Link"
         r"|no device (?:matching|with serial)", "no-probe"),
        (r"nrfutil-device is not installed|command .?device.? (?:is )?not (?:found|installed)"
         r"|unrecognized subcommand 'device'", "no-command"),
        (r"Failed to connect|ApprotectEnabled|access port protection|CouldNotConnect",
         "target"),
    )

    def flash_command(self, image: FirmwareImage) -> list[str]:
        erase = str(self.args.get("erase", "ERASE_RANGES_TOUCHED_BY_FIRMWARE"))
        command = [self.program_name, "device", "program", "--firmware",
                   str(self.image_file(image).resolve()), "--options",
                   f"chip_erase_mode={erase},verify=VERIFY_READ,reset=RESET_SYSTEM"]
        if self.args.get("serial"):
            command += ["--serial-number", str(self.args["serial"])]
        return command

    def describe(self, kind, image, match):
        if kind == "no-command":
            return Diagnosis(kind, "nrfutil is installed without its device command",
                             "run `nrfutil install device`")
        return super().describe(kind, image, match)
