"""A transport wrapper that damages the byte stream on purpose: the robustness tests and the
link benchmark run the real client and the real device through it.

Each fault kind acts on single bytes at a given rate, in both directions unless told otherwise:
drop a byte, corrupt it (flip one bit), duplicate it, insert a random byte after it. `reset_rate`
restarts the device (a transport with ``restart()``) in the middle of a packet the host is
sending, the way a board's reset button or a brown-out would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from microbuild.device.transports.base import Transport

FAULT_KINDS = ("drop", "corrupt", "duplicate", "insert")


@dataclass
class FaultCounts:
    drop: int = 0
    corrupt: int = 0
    duplicate: int = 0
    insert: int = 0
    reset: int = 0

    def total(self) -> int:
        return self.drop + self.corrupt + self.duplicate + self.insert + self.reset


@dataclass
class FaultyTransport(Transport):
    inner: Transport
    kind: str = "corrupt"
    rate: float = 1e-3  # per byte
    reset_rate: float = 0.0  # per packet sent by the host
    directions: tuple[str, ...] = ("to_device", "from_device")
    seed: int = 0
    injected: FaultCounts = field(default_factory=FaultCounts)

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"fault kind {self.kind!r}: one of {FAULT_KINDS}")
        self.random = random.Random(self.seed)
        self.name = f"faulty {self.inner.name}"
        self.bytes_per_second = self.inner.bytes_per_second
        self.chunk_bytes = self.inner.chunk_bytes

    def _damage(self, data: bytes) -> bytes:
        if self.rate <= 0 or not data:
            return data
        rnd, out, i = self.random, bytearray(), 0
        # Skip ahead geometrically to the next faulty byte: a low rate costs nothing per byte.
        while True:
            gap = int(rnd.expovariate(self.rate)) if self.rate < 1 else 0
            if i + gap >= len(data):
                out += data[i:]
                return bytes(out)
            out += data[i:i + gap]
            i += gap
            b = data[i]
            if self.kind == "drop":
                pass
            elif self.kind == "corrupt":
                out.append(b ^ (1 << rnd.randrange(8)))
            elif self.kind == "duplicate":
                out += bytes([b, b])
            else:
                out += bytes([b, rnd.randrange(256)])
            setattr(self.injected, self.kind, getattr(self.injected, self.kind) + 1)
            i += 1

    def write(self, data: bytes) -> None:
        if self.reset_rate and data[:2] == b"\xff\xfd" and self.random.random() < self.reset_rate:
            cut = self.random.randrange(2, max(3, len(data)))
            self.inner.write(data[:cut])
            self.inner.restart()  # type: ignore[attr-defined]
            self.injected.reset += 1
            return
        if "to_device" in self.directions:
            data = self._damage(data)
        self.inner.write(data)

    def read(self, timeout: float) -> bytes:
        data = self.inner.read(timeout)
        if "from_device" in self.directions:
            data = self._damage(data)
        return data

    def restart(self) -> None:
        self.inner.restart()  # type: ignore[attr-defined]

    def close(self) -> None:
        self.inner.close()

    def describe(self) -> str:
        return f"{self.inner.describe()} with {self.kind} faults at {self.rate:g}/byte"
