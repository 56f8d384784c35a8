"""Transports backed by a child process the host started: the host board's firmware (console on
the process's stdin/stdout) and QEMU (console on a local TCP socket microbuild listens on).

Both own their process: closing the transport stops it, and a process that exits while the host
waits is reported with its exit status and the end of its stderr, never as a silent hang.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import tempfile
import time
from typing import Sequence

from microbuild.device.errors import TransportClosedError
from microbuild.device.transports.base import Transport


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()  # a busy-polling emulator left behind would eat a whole core
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class _ChildProcess:
    """A started command whose stderr goes to a temporary file (read back when it dies)."""

    def __init__(self, command: Sequence[str], what: str, **popen):
        self.command, self.what = list(command), what
        self.stderr_file = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(self.command, stderr=self.stderr_file, **popen)
        except OSError as err:
            raise TransportClosedError(f"could not start {what}: {err}") from None

    def closed_error(self) -> TransportClosedError:
        try:
            status = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        self.stderr_file.seek(0)
        tail = self.stderr_file.read()[-2000:].decode(errors="replace").strip()
        how = "is gone" if status is None else f"exited with status {status}"
        return TransportClosedError(f"{self.what} {how}" + (f"; its stderr:\n{tail}" if tail
                                                            else ""))

    def stop(self) -> None:
        _stop(self.proc)
        self.stderr_file.close()


class ProcessStdioTransport(Transport):
    """A firmware running as a host process, its console on stdin/stdout (the `host` board)."""

    name = "stdio"
    bytes_per_second = 50e6
    chunk_bytes = 1 << 20

    def __init__(self, command: Sequence[str], what: str = "the firmware process"):
        self.child = _ChildProcess(command, what, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   bufsize=0)
        self._out = self.child.proc.stdout.fileno()
        self._in = self.child.proc.stdin

    def write(self, data: bytes) -> None:
        try:
            self._in.write(data)
        except (BrokenPipeError, ValueError):
            raise self.child.closed_error() from None

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self._out], [], [], max(0.0, timeout))
        if not ready:
            return b""
        data = os.read(self._out, 1 << 16)
        if not data:
            raise self.child.closed_error()
        return data

    def restart(self) -> None:
        """Kill the firmware and start it again, like pressing a board's reset button."""
        command, what = self.child.command, self.child.what
        self.close()
        self.__init__(command, what)

    def close(self) -> None:
        try:
            self._in.close()
        except OSError:
            pass
        self.child.stop()

    def describe(self) -> str:
        return f"process {self.child.proc.pid} ({os.path.basename(self.child.command[0])})"


class SocketTransport(Transport):
    """A connected TCP socket (a device behind a serial-to-TCP bridge, or QEMU's serial)."""

    name = "tcp"
    bytes_per_second = 10e3
    chunk_bytes = 4096

    def __init__(self, sock: socket.socket, peer: str):
        self.sock, self.peer = sock, peer
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @classmethod
    def connect(cls, host: str, port: int, timeout: float = 10.0) -> "SocketTransport":
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as err:
            raise TransportClosedError(f"cannot connect to {host}:{port}: {err}") from None
        return cls(sock, f"{host}:{port}")

    def _closed(self) -> TransportClosedError:
        return TransportClosedError(f"the connection to {self.peer} closed")

    def write(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError:
            raise self._closed() from None

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        if not ready:
            return b""
        try:
            data = self.sock.recv(1 << 16)
        except OSError:
            data = b""
        if not data:
            raise self._closed()
        return data

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def describe(self) -> str:
        return f"tcp {self.peer}"


class QemuTransport(SocketTransport):
    """QEMU with the board's console UART on a TCP socket the host listens on before QEMU starts,
    so no byte the firmware sends at boot is lost and there is no port race
    (../shared/notes/qemu-boards.md)."""

    name = "qemu"

    def __init__(self, command_for_port, what: str = "QEMU", connect_timeout: float = 20.0):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        self.child = _ChildProcess(command_for_port(port), what, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + connect_timeout
        try:
            while True:
                ready, _, _ = select.select([listener], [], [], 0.1)
                if ready:
                    sock, _ = listener.accept()
                    break
                if self.child.proc.poll() is not None:
                    raise self.child.closed_error()
                if time.monotonic() > deadline:
                    self.child.stop()
                    raise TransportClosedError(
                        f"{what} did not connect its serial port to 127.0.0.1:{port} within "
                        f"{connect_timeout:g} s")
        finally:
            listener.close()
        super().__init__(sock, f"127.0.0.1:{port}")

    def read(self, timeout: float) -> bytes:
        try:
            return super().read(timeout)
        except TransportClosedError:
            raise self.child.closed_error() from None

    def write(self, data: bytes) -> None:
        try:
            super().write(data)
        except TransportClosedError:
            raise self.child.closed_error() from None

    def close(self) -> None:
        super().close()
        self.child.stop()

    def describe(self) -> str:
        return f"QEMU (pid {self.child.proc.pid}) serial on {self.peer}"
