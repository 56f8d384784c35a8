"""AVR boards with avrdude (Debian package `avrdude`):
``avrdude -p <part> -c <programmer> -P <port> -b <baud> -U flash:w:<firmware.hex>:i``.

For an Arduino Uno class board (atmega328p) the programmer is `arduino`: the serial bootloader on
the board's USB-serial port, which avrdude resets by toggling DTR.

Runner args:
  part        avrdude's part id (-p), e.g. m328p; default: the board's cpu core
  programmer  avrdude's programmer id (-c), e.g. arduino, usbasp; default arduino
  port        the serial port (-P); default: the first USB-serial port of an Arduino or of a
              usual USB-serial chip (or the board's transport.usb), else /dev/ttyACM0
  baud        the bootloader's baud rate (-b); default 115200 (Uno's optiboot)
  program     the avrdude executable (name or path)
"""

from __future__ import annotations

from pathlib import Path

from microbuild.device.runners.base import RunnerArg
from microbuild.device.runners.flash_tool import Diagnosis, FirmwareImage, FlashToolRunner

DEFAULT_PORT = "/dev/ttyACM0"
# Programmers that talk over a serial port (and so take -P <port> -b <baud>); the others are USB
# devices that avrdude finds by their USB id.
SERIAL_PROGRAMMERS = {"arduino", "urclock", "stk500", "stk500v1", "stk500v2", "avr109",
                      "butterfly", "wiring", "avrisp", "arduino_as_isp", "jtag2updi", "serialupdi"}
# USB vendor ids of Arduinos and of the USB-serial chips on their clones.
_SERIAL_VENDORS = (0x2341, 0x2A03, 0x1A86, 0x0403, 0x10C4)


def _detect_port(vid: int | None, pid: int | None) -> str | None:
    try:
        from serial.tools import list_ports
    except ImportError:  # pyserial is a dependency, but a port can always be given
        return None
    ports = [p for p in list_ports.comports() if p.vid is not None]
    if vid is not None:
        for port in ports:
            if port.vid == vid and (pid is None or port.pid == pid):
                return port.device
    for port in ports:
        if port.vid in _SERIAL_VENDORS:
            return port.device
    return None


class AvrdudeRunner(FlashToolRunner):
    name = "avrdude"
    arguments = (
        RunnerArg("part", (str,), "avrdude's part id (-p), e.g. m328p"),
        RunnerArg("programmer", (str,), "avrdude's programmer id (-c), e.g. arduino, usbasp"),
        RunnerArg("port", (str,), "the serial port (-P)"),
        RunnerArg("baud", (int,), "the bootloader's baud rate (-b)"),
    )
    debian_packages = ("avrdude",)
    program = "avrdude"
    install_hint = "install avrdude: sudo apt-get install avrdude"
    udev_hint = ("serial ports belong to the dialout group: `sudo usermod -aG dialout $USER`, "
                 "then log out and in again (check with `ls -l` on the port)")
    failure_patterns = (
        (r"(?:can't open device|cannot open port)[^\n]*(?:Permission denied|Access denied)",
         "usb-permission"),
        (r"(?:can't open device|cannot open port|ser_open\(\))[^\n]*"
         r"(?:No such file or directory|No such device)|cannot set attributes for port"
         r"|cannot find USB device|did not find any USB device|unable to open programmer",
         "no-probe"),
        (r"Expected signature for|Invalid device signature|Yikes!|signature .* doesn't match",
         "wrong-part"),
        (r"programmer is not responding|not in sync|initialization failed|"
         r"did not get a response", "target"),
        (r"can't open input file ?(\S*)|cannot open input file|can't open file ?(\S*)",
         "file-not-found"),
        (r"verification error|verification mismatch|content mismatch", "verify"),
    )

    @property
    def part(self) -> str:
        return str(self.args.get("part") or self.board.core)

    @property
    def programmer(self) -> str:
        return str(self.args.get("programmer") or "arduino")

    @property
    def baud(self) -> int:
        return int(self.args.get("baud") or 115200)

    def port(self) -> str:
        if self.args.get("port"):
            return str(self.args["port"])
        usb = self.board.transport.get("usb") or {}
        return _detect_port(usb.get("vid"), usb.get("pid")) or DEFAULT_PORT

    def image_file(self, image: FirmwareImage) -> Path:
        return Path(image.hex) if image.hex is not None else Path(image.elf).with_suffix(".hex")

    @property
    def serial(self) -> bool:
        return self.programmer in SERIAL_PROGRAMMERS

    def flash_command(self, image: FirmwareImage) -> list[str]:
        command = [self.program_name, "-p", self.part, "-c", self.programmer]
        if self.serial:
            command += ["-P", self.port(), "-b", str(self.baud)]
        elif self.args.get("port"):
            command += ["-P", str(self.args["port"])]
        return command + ["-U", f"flash:w:{self.image_file(image).resolve()}:i"]

    def probe_description(self) -> str:
        if self.programmer == "arduino":
            return (f"the board's serial bootloader on {self.port()} (programmer arduino, "
                    f"{self.baud} baud)")
        if self.serial:
            return f"the AVR programmer {self.programmer} on {self.port()}"
        return f"the AVR programmer {self.programmer} on USB"

    def target_text(self) -> str:
        return f"the part {self.part}"

    def describe(self, kind, image, match):
        port = self.port()
        if kind == "no-probe" and self.serial:
            return Diagnosis(kind, f"no probe found: {port} is not the serial port of a "
                             "connected board",
                             "plug the board in by USB and find its port (`ls /dev/ttyACM* "
                             "/dev/ttyUSB*`, or `dmesg | tail` right after plugging it in), then "
                             "pass it as the runner's `port` arg")
        if kind == "no-probe":
            return Diagnosis(kind, f"no probe found: avrdude did not find the {self.programmer} "
                             f"programmer", f"connect the {self.programmer} programmer (check "
                             "`lsusb` lists it) and wire it to the board's ISP header")
        if kind == "target":
            return Diagnosis(kind, f"the target is not responding: nothing on {port} answered as "
                             f"the {self.programmer} programmer" if self.serial else
                             f"the target is not responding to the {self.programmer} programmer",
                             f"check that {port} is this board's port (not another USB-serial "
                             f"device), that no serial monitor holds it, and the bootloader's "
                             f"baud rate (old Nano bootloaders use 57600, Uno's optiboot 115200: "
                             f"`baud` in the runner's args); press reset just before flashing "
                             f"if the board has no auto-reset")
        if kind == "wrong-part":
            return Diagnosis(kind, f"the chip on {port} is not a {self.part} (its signature "
                             "differs)", "set `part` in the avrdude runner's args to the chip on "
                             "the board (`avrdude -p ?` lists them), or pick the board YAML "
                             "that matches the board")
        if kind == "verify":
            return Diagnosis(kind, "what avrdude read back differs from the image",
                             "run again; if it repeats, lower `baud` or check the cable")
        return super().describe(kind, image, match)
