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
    FlashError,
    FlashToolRunner,
    board_usb,
)

_JLINK_UDEV = ("install SEGGER's J-Link software (it adds /etc/udev/rules.d/99-jlink.rules), "
               "then `sudo udevadm control --reload-rules && sudo udevadm trigger`, and unplug "
               "and replug the board")


def intel_hex(data: bytes, address: int) -> str:
    """``data`` placed at ``address`` as Intel HEX text: 16-byte data records, an extended linear
    address record wherever the upper 16 address bits change, and the end-of-file record."""

    def record(kind: int, offset: int, payload: bytes) -> str:
        body = bytes([len(payload), offset >> 8, offset & 0xFF, kind]) + payload
        return ":" + (body + bytes([-sum(body) & 0xFF])).hex().upper()

    lines, upper = [], None
    for at in range(0, len(data), 16):
        where = address + at
        if where >> 16 != upper:
            upper = where >> 16
            lines.append(record(4, 0, upper.to_bytes(2, "big")))
        # A record never crosses a 64 KiB boundary: slots are 16-byte aligned, so 16 bytes fit.
        lines.append(record(0, where & 0xFFFF, data[at:at + 16]))
    return "\n".join([*lines, record(1, 0, b"")]) + "\n"


class _NordicRunner(FlashToolRunner):
    udev_hint = _JLINK_UDEV

    def image_file(self, image: FirmwareImage) -> Path:
        return Path(image.hex) if image.hex is not None else Path(image.elf).with_suffix(".hex")

    # How the tool erases by default, and when it writes a model blob: only the pages the data
    # covers, whatever the `erase` arg says for a whole firmware (a chip erase would wipe the
    # firmware too).
    erase = ""

    def write_command(self, data: Path, address: int) -> list[str]:
        """Both tools program Intel HEX only: the binary is written beside ``data`` as a .hex
        placed at ``address`` (`microbuild update` keeps ``data`` in a folder of its own)."""
        if address % 16:
            raise FlashError(f"{self.name}: {address:#x} is not 16-byte aligned")
        hexfile = Path(data).with_suffix(".hex")
        hexfile.write_text(intel_hex(Path(data).read_bytes(), address))
        return self._program(hexfile, self.erase)

    def flash_command(self, image: FirmwareImage) -> list[str]:
        return self._program(self.image_file(image), str(self.args.get("erase", self.erase)))

    def _program(self, hexfile: Path, erase: str) -> list[str]:
        """The tool's command line that programs ``hexfile``, erasing as ``erase`` says."""
        raise NotImplementedError

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
    erase = "sectorerase"
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

    def _program(self, hexfile: Path, erase: str) -> list[str]:
        command = [self.program_name, "-f", str(self.args.get("family", "NRF52"))]
        if self.args.get("snr"):
            command += ["--snr", str(self.args["snr"])]
        return command + ["--program", str(hexfile.resolve()), f"--{erase}", "--verify",
                          "--reset"]

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
    erase = "ERASE_RANGES_TOUCHED_BY_FIRMWARE"
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

    def _program(self, hexfile: Path, erase: str) -> list[str]:
        command = [self.program_name, "device", "program", "--firmware",
                   str(hexfile.resolve()), "--options",
                   f"chip_erase_mode={erase},verify=VERIFY_READ,reset=RESET_SYSTEM"]
        if self.args.get("serial"):
            command += ["--serial-number", str(self.args["serial"])]
        return command

    def describe(self, kind, image, match):
        if kind == "no-command":
            return Diagnosis(kind, "nrfutil is installed without its device command",
                             "run `nrfutil install device`")
        return super().describe(kind, image, match)
