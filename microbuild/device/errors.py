"""What can go wrong talking to a device. Every wait has a timeout, and each way a device can
fail to answer is its own error so callers (and users) know which happened."""

from __future__ import annotations

from microbuild.errors import DeviceError


class TransportClosedError(DeviceError):
    """The other end went away: the emulator or host process exited, the socket closed."""


class DeviceTimeoutError(DeviceError):
    """The device stopped answering: nothing valid arrived within the timeout, after retries."""


class DeviceResetError(DeviceError):
    """The device reset during a session (it sent TERMINATE): allocations and uploads are gone."""


class DeviceGarbageError(DeviceError):
    """Bytes arrive but never a valid packet: wrong baud rate, wrong firmware, broken link."""


class RpcError(DeviceError):
    """The device answered a request with an error status."""

    def __init__(self, message: str, status: int = 0, device_message: str = ""):
        super().__init__(message)
        self.status = status
        self.device_message = device_message


class ProtocolError(DeviceError):
    """The device answered with something the protocol does not allow (wrong version, a reply
    that cannot be decoded, a build that is not the one the host expects)."""
