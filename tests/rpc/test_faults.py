"""Robustness of the link, measured: 10,000 frames per fault kind through a transport that drops,
corrupts, duplicates or inserts bytes (both directions), or restarts the device in the middle of
a packet; and at 1e-2 faults per byte, where only small packets get through, a session that opens
and holds. The real C server runs as a host process; every byte read back is checked against what
was written. Zero corrupted payloads may be accepted, and every fault must end either recovered
(a retransmission) or as one of the specific device errors."""

from __future__ import annotations

import struct

import pytest

from microbuild.device.errors import RpcError
from microbuild.device.rpc.client import RpcClient
from microbuild.device.rpc.protocol import REPLY_OVERHEAD, Opcode, Status, TimedEntry
from microbuild.device.rpc.soak import soak
from microbuild.device.transports.faults import FAULT_KINDS, FaultyTransport
from microbuild.device.runners import runner_for
from microbuild.boards import load_board

FRAMES = 10_000
# At 1e-2 per byte: enough frames that thousands of bytes are damaged each way (the 10,000-frame
# run is benchmarks/rpc_link.py's).
HARSH_FRAMES = 150


def _client(host_rpc, kind: str, rate: float, reset_rate: float = 0.0, seed: int = 1):
    transport = runner_for(load_board("host")).start(host_rpc.elf)
    faulty = FaultyTransport(transport, kind=kind, rate=rate, reset_rate=reset_rate, seed=seed)
    # 100 ms: long enough that a loaded CI machine does not turn a slow reply into a timeout,
    # short enough that the few hundred lost frames cost seconds.
    client = RpcClient(faulty, timeout=0.1, retries=6, seed=seed)
    return faulty, client


def _pool(host_rpc) -> tuple[int, int]:
    arena = host_rpc.rpc_description["arena"]
    return arena["pool_offset"], arena["arena_bytes"]


@pytest.mark.parametrize("kind", ["drop", "corrupt", "duplicate", "insert"])
def test_byte_faults_never_deliver_corrupted_data(host_rpc, kind):
    faulty, client = _client(host_rpc, kind, rate=2.5e-4)
    with faulty:
        client.wait_for_boot(10)
        client.open_session()
        result = soak(client, _pool(host_rpc), FRAMES, seed=7)
    assert result.frames >= FRAMES
    assert result.corrupted_accepted == 0, result.to_dict()
    injected = getattr(faulty.injected, kind)
    assert injected > 100, (injected, result.to_dict())  # the faults really happened
    # Recovered by resending: a lost or damaged frame costs a retransmission, rarely more.
    assert result.retransmissions > 0
    assert set(result.errors) <= {"DeviceTimeoutError", "RpcError 1"}, result.to_dict()
    assert sum(result.errors.values()) <= injected // 20, result.to_dict()


def test_resets_in_the_middle_of_a_packet_are_reported_as_resets(host_rpc):
    faulty, client = _client(host_rpc, "corrupt", rate=0.0, reset_rate=0.005)
    with faulty:
        client.wait_for_boot(10)
        client.open_session()
        result = soak(client, _pool(host_rpc), FRAMES, seed=8,
                      reopen=lambda: (client.wait_for_boot(10), client.open_session()))
    assert result.corrupted_accepted == 0, result.to_dict()
    assert faulty.injected.reset > 20
    # Every reset is reported as what it is, none as a timeout or garbage.
    assert result.errors["DeviceResetError"] == faulty.injected.reset, result.to_dict()
    assert set(result.errors) == {"DeviceResetError"}, result.to_dict()


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_at_1e_2_faults_per_byte_the_packet_size_adapts_and_nothing_corrupt_gets_through(
        host_rpc, kind):
    faulty, client = _client(host_rpc, kind, rate=1e-2)
    with faulty:
        client.wait_for_boot(10)
        # The session opens although INFO's 120 items at 512-byte pages almost never arrive whole:
        # the host went down to small pages.
        info = client.open_session()
        assert len(info.functions) == info.function_count and info.max_packet == 512
        assert client.packet_bytes < 512
        result = soak(client, _pool(host_rpc), HARSH_FRAMES, seed=7)
        assert result.frames >= HARSH_FRAMES
        assert result.corrupted_accepted == 0, result.to_dict()
        injected = getattr(faulty.injected, kind)
        assert injected > 300, (injected, result.to_dict())
        assert result.retransmissions > HARSH_FRAMES // 5, result.to_dict()
        # Requests get through in the end: rarely, seven attempts in a row meet silence (a lost
        # byte of the request leaves the device waiting) and the request reports a timeout.
        assert set(result.errors) <= {"DeviceTimeoutError"}, result.to_dict()
        assert sum(result.errors.values()) <= 2, result.to_dict()
        assert client.packet_bytes == 64  # the size that passes best at this rate
        # 9 timed runs need 83 bytes of reply: timed in parts that fit 64.
        entry = TimedEntry(function=1, warmup=1, repeat=9)
        client.timed_call([entry])
        assert entry.status == 0 and len(entry.ticks) == 9 and all(entry.ticks), entry

        # The line clears: the packet size climbs back to the device's largest, and the device
        # agreed to every step (a READ one byte longer than the size is refused).
        faulty.rate = 0.0
        pool = _pool(host_rpc)[0]
        for _ in range(4 * 32 + 8):
            client.read(pool, 8)
        assert client.packet_bytes == 512
        whole = client.request(Opcode.READ, struct.pack("<II", pool, 512 - REPLY_OVERHEAD),
                               reply_bytes=512)
        assert len(whole) == 512 - REPLY_OVERHEAD
        with pytest.raises(RpcError) as refused:
            client.request(Opcode.READ, struct.pack("<II", pool, 512 - REPLY_OVERHEAD + 1))
        assert refused.value.status == Status.TOO_LARGE
