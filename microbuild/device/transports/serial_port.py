"""A real board's console UART through a USB serial adapter (pyserial). The port is the one named
by the user, or found from the board YAML's `transport.usb` (vid, pid, serial_pattern)."""

from __future__ import annotations

import fnmatch
import time

from microbuild.boards import Board
from microbuild.device.errors import TransportClosedError
from microbuild.device.transports.base import Transport
from microbuild.errors import DeviceError


def _ports():
    from serial.tools import list_ports

    return list(list_ports.comports())


def find_port(board: Board) -> str:
    """The serial port of ``board`` from its USB ids; a clear error when none or several match."""
    usb = (board.data.get("transport") or {}).get("usb") or {}
    if not usb:
        raise DeviceError(f"board '{board.name}' names no USB ids (transport.usb in its YAML) to "
                          "find its serial port by; pass --port (e.g. --port /dev/ttyACM0)")
    vid, pid, pattern = usb.get("vid"), usb.get("pid"), usb.get("serial_pattern")
    wanted = (f"USB {vid:04x}:{pid:04x}" if vid is not None and pid is not None
              else f"USB vendor {vid:04x}" if vid is not None else "USB device")
    if pattern:
        wanted += f" with serial number matching '{pattern}'"
    ports = _ports()
    matches = [p for p in ports
               if (vid is None or p.vid == vid) and (pid is None or p.pid == pid)
               and (not pattern or fnmatch.fnmatch(p.serial_number or "", pattern))]
    if len(matches) == 1:
        return matches[0].device
    seen = ", ".join(f"{p.device} ({p.vid:04x}:{p.pid:04x})" if p.vid is not None else p.device
                     for p in ports) or "none"
    if not matches:
        raise DeviceError(f"no serial port for board '{board.name}': looked for {wanted}; serial "
                          f"ports present: {seen}. Connect the board (and its debug probe's USB), "
                          "or pass --port")
    raise DeviceError(f"several serial ports match board '{board.name}' ({wanted}): "
                      f"{', '.join(p.device for p in matches)}; pass --port to choose one")


class SerialTransport(Transport):
    name = "serial"
    chunk_bytes = 1024

    def __init__(self, port: str, baud: int = 115200):
        import serial

        self.port, self.baud = port, baud
        # 8N1: ten bits per byte; half of it as the estimate leaves room for a slow device.
        self.bytes_per_second = baud / 20
        try:
            self.serial = serial.Serial(port, baud, timeout=0, write_timeout=30)
        except serial.SerialException as err:
            raise TransportClosedError(f"cannot open serial port {port}: {err}") from None

    def write(self, data: bytes) -> None:
        import serial

        try:
            self.serial.write(data)
        except serial.SerialException as err:
            raise TransportClosedError(f"serial port {self.port}: {err}") from None

    def read(self, timeout: float) -> bytes:
        import serial

        deadline = time.monotonic() + timeout
        try:
            while True:
                waiting = self.serial.in_waiting
                if waiting:
                    return self.serial.read(waiting)
                left = deadline - time.monotonic()
                if left <= 0:
                    return b""
                self.serial.timeout = min(left, 0.05)
                data = self.serial.read(1)
                if data:
                    return data + self.serial.read(self.serial.in_waiting)
        except serial.SerialException as err:
            raise TransportClosedError(f"serial port {self.port}: {err}") from None

    def close(self) -> None:
        self.serial.close()

    def describe(self) -> str:
        return f"serial {self.port} at {self.baud} baud"
