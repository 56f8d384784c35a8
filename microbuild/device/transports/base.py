"""What every transport provides: bytes in, bytes out, with a timeout on every read."""

from __future__ import annotations


class Transport:
    """A byte pipe to a device. ``read`` returns what has arrived (at least one byte) or b""
    when ``timeout`` seconds pass with nothing; it raises TransportClosedError when the other
    end is gone. ``bytes_per_second`` is a conservative estimate of the link speed, so callers
    can scale timeouts to the size of what they send; ``chunk_bytes`` the upload size per
    request that keeps a retransmission cheap on this link."""

    name = ""
    bytes_per_second: float = 1e6
    chunk_bytes: int = 1 << 20

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self, timeout: float) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def describe(self) -> str:
        return self.name

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
