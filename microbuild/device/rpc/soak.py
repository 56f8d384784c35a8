"""A soak test of a link: thousands of requests through a (possibly fault-injecting) transport,
checking every byte that comes back against what was written. Used by the robustness tests and
benchmarks/rpc_link.py; it works on any connected device with an ALLOC pool.

Counts what matters: frames sent, faults injected, retransmissions, the operations that failed
with a specific error (and which), and corrupted payloads accepted (data read back that differs
from what the device was told to store). The last must be zero.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from microbuild.device.errors import (DeviceGarbageError, DeviceResetError, DeviceTimeoutError,
                                      RpcError)
from microbuild.device.rpc.client import RpcClient

SPECIFIC_ERRORS = (DeviceTimeoutError, DeviceResetError, DeviceGarbageError)


@dataclass
class SoakResult:
    frames: int = 0
    operations: int = 0
    retransmissions: int = 0
    corrupted_accepted: int = 0
    errors: Counter = field(default_factory=Counter)  # error class name -> count
    seconds: float = 0.0
    requests: int = 0  # requests answered (a frame sent again is one request)
    payload_bytes: int = 0  # data written and read back by the operations that succeeded

    def to_dict(self) -> dict:
        return {"frames": self.frames, "operations": self.operations,
                "requests": self.requests, "payload_bytes": self.payload_bytes,
                "retransmissions": self.retransmissions,
                "corrupted_accepted": self.corrupted_accepted, "errors": dict(self.errors),
                "seconds": round(self.seconds, 2)}


def soak(client: RpcClient, region: tuple[int, int], frames: int, seed: int = 0,
         reopen: Callable[[], None] | None = None, max_write: int = 300) -> SoakResult:
    """Write and read back random data in arena ``region`` (start, end) until ``frames`` frames
    were sent. A DeviceResetError reopens the session (``reopen``, default open_session); every
    other failure must be one of the specific device errors."""
    rnd = random.Random(seed)
    start_offset, end_offset = region
    size = end_offset - start_offset
    mirror = bytearray(size)
    known = bytearray(size)  # 1 where the device's content is known
    result = SoakResult()
    t0 = time.monotonic()
    frames_before = client.stats.frames_sent
    retrans_before = client.stats.retransmissions
    requests_before = client.stats.requests
    while client.stats.frames_sent - frames_before < frames:
        result.operations += 1
        n = rnd.randrange(1, max_write)
        at = rnd.randrange(0, size - n)
        try:
            if rnd.random() < 0.5:
                data = rnd.randbytes(n)
                known[at:at + n] = bytes(n)  # unknown until the device confirms
                client.write(start_offset + at, data)
                mirror[at:at + n] = data
                known[at:at + n] = b"\x01" * n
                result.payload_bytes += n
            else:
                got = client.read(start_offset + at, n)
                result.payload_bytes += n
                for i in range(n):
                    if known[at + i] and got[i] != mirror[at + i]:
                        result.corrupted_accepted += 1
                        break
        except DeviceResetError:
            result.errors["DeviceResetError"] += 1
            known[:] = bytes(size)  # the device's memory is gone
            for _ in range(5):
                try:
                    (reopen or client.open_session)()
                    break
                except SPECIFIC_ERRORS as err:
                    result.errors[type(err).__name__] += 1
        except SPECIFIC_ERRORS as err:
            result.errors[type(err).__name__] += 1
        except RpcError as err:  # a damaged request the device could parse but refused
            result.errors[f"RpcError {err.status}"] += 1
    result.frames = client.stats.frames_sent - frames_before
    result.retransmissions = client.stats.retransmissions - retrans_before
    result.requests = client.stats.requests - requests_before
    result.seconds = time.monotonic() - t0
    return result
