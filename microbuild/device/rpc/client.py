"""The host side of the RPC protocol: sessions, requests with retransmission, and the calls of
docs/rpc-protocol.md section 3 as methods.

Reliability comes from three rules: every request waits at most a timeout scaled to its size and
is then sent again with the same seq (the device answers a repeat from its reply cache, so nothing
runs twice); only packets with a good CRC, the live session id and the awaited seq count; and each
way of failing ends in its own error (DeviceTimeoutError, DeviceGarbageError, DeviceResetError,
TransportClosedError, RpcError), so a caller never hangs and always knows which it was.
"""

from __future__ import annotations

import random
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from microbuild.device.errors import (DeviceGarbageError, DeviceResetError, DeviceTimeoutError,
                                      ProtocolError, RpcError)
from microbuild.device.rpc.framing import NOP_SEQUENCE, FrameDecoder, encode_packet
from microbuild.device.rpc.protocol import (PROTOCOL_VERSION, DeviceInfo,
                                            Opcode, SessionType, Status, TimedEntry, parse_info,
                                            parse_reply, parse_session, parse_timed_call,
                                            request_body, session_payload, timed_call_arguments,
                                            timed_call_reply_bytes, write_payload)
from microbuild.device.transports.base import Transport

MIN_CHUNK = 256


def _name(opcode: int) -> str:
    try:
        return Opcode(opcode).name
    except ValueError:
        return f"opcode 0x{opcode:02x}"


@dataclass
class LinkStats:
    """Counters for diagnostics and the robustness benchmark."""

    requests: int = 0
    frames_sent: int = 0
    retransmissions: int = 0
    stale_replies: int = 0  # good packets for an earlier seq or an old session
    bytes_in: int = 0
    bytes_out: int = 0
    logs: list[str] = field(default_factory=list)


class RpcClient:
    """One link to one device. ``timeout`` is the base wait for a reply (seconds; the time to
    move the request and the reply over the link is added); ``retries`` how many times a request
    is sent again before giving up; ``on_log`` receives the device's LOG lines."""

    def __init__(self, transport: Transport, timeout: float = 5.0, retries: int = 4,
                 on_log: Callable[[str], None] | None = None, seed: int | None = None):
        self.transport = transport
        self.timeout = timeout
        self.retries = retries
        self.on_log = on_log
        self.random = random.Random(seed)
        self.decoder = FrameDecoder()
        self.stats = LinkStats()
        self.session_id: int | None = None
        self.info: DeviceInfo | None = None
        self._pending: deque[bytes] = deque()
        self._seq = self.random.randrange(1, 0x10000)
        self._packets_in = 0
        self.chunk_bytes = transport.chunk_bytes

    # ---- receiving ------------------------------------------------------------------------------
    def _next_packet(self, deadline: float) -> tuple[int, int, bytes] | None:
        """The next good session packet (LOG handled here), or None at ``deadline``."""
        while True:
            while self._pending:
                parsed = parse_session(self._pending.popleft())
                if parsed is None:
                    continue
                self._packets_in += 1
                kind, _, body = parsed
                if kind == SessionType.LOG:
                    text = body.decode("utf-8", errors="replace")
                    self.stats.logs.append(text)
                    if self.on_log:
                        self.on_log(text)
                    continue
                return parsed
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            data = self.transport.read(min(left, 0.5))
            self.stats.bytes_in += len(data)
            self._pending.extend(self.decoder.feed(data))

    def _silence(self, what: str, bytes_before: int, packets_before: int, waited: float):
        got = self.stats.bytes_in - bytes_before
        s = self.decoder.stats
        if got and self._packets_in == packets_before:
            return DeviceGarbageError(
                f"{self.transport.describe()}: {got} bytes arrived in {waited:.1f} s while "
                f"waiting for {what}, but no valid packet (CRC errors so far {s.crc_errors}, "
                f"framing errors {s.framing_errors}): the device does not speak the microbuild "
                "RPC protocol on this link. Check the baud rate and that the firmware was built "
                "with --executor rpc")
        return DeviceTimeoutError(
            f"{self.transport.describe()}: the device stopped answering: no reply to {what} in "
            f"{waited:.1f} s ({self.retries + 1} attempts)")

    # ---- session --------------------------------------------------------------------------------
    def wait_for_boot(self, timeout: float = 15.0) -> None:
        """Wait for the device's first traffic after boot (its TERMINATE and LOG): input sent
        before a UART is initialised can be lost."""
        start, bytes_before = time.monotonic(), self.stats.bytes_in
        packets_before = self._packets_in
        while time.monotonic() - start < timeout:
            # Short slices: a LOG line (handled inside) ends the wait as well as a packet.
            if (self._next_packet(min(start + timeout, time.monotonic() + 0.05)) is not None
                    or self._packets_in != packets_before):
                return
        if self.stats.bytes_in != bytes_before:
            raise self._silence("the boot message", bytes_before, packets_before, timeout)
        raise DeviceTimeoutError(
            f"{self.transport.describe()}: the device sent nothing within {timeout:g} s of "
            "starting; is an RPC firmware (--executor rpc) running on it?")

    def open_session(self) -> DeviceInfo:
        """Start a session (START_INIT / START_REPLY) and read the device's INFO."""
        self.session_id = None
        bytes_before, packets_before = self.stats.bytes_in, self._packets_in
        start = time.monotonic()
        for _ in range(self.retries + 1):
            nonce = self.random.randrange(1, 256)
            self.transport.write(NOP_SEQUENCE)  # see request(): resynchronises the decoder
            self._send(session_payload(SessionType.START_INIT, nonce << 8,
                                       bytes([PROTOCOL_VERSION])))
            deadline = time.monotonic() + self.timeout
            while (packet := self._next_packet(deadline)) is not None:
                kind, sid, body = packet
                if kind == SessionType.START_REPLY and sid >> 8 == nonce and sid & 0xFF:
                    if body[:1] != bytes([PROTOCOL_VERSION]):
                        raise ProtocolError(
                            f"the device speaks RPC protocol version {body[:1].hex() or '?'}, "
                            f"this host version {PROTOCOL_VERSION}; rebuild the firmware with "
                            "this microbuild")
                    self.session_id = sid
                    self.info = self._info()
                    return self.info
            self.stats.retransmissions += 1
        raise self._silence("START_INIT (opening a session)", bytes_before, packets_before,
                            time.monotonic() - start)

    def _send(self, payload: bytes) -> int:
        frame = encode_packet(payload)
        self.transport.write(frame)
        self.stats.frames_sent += 1
        self.stats.bytes_out += len(frame)
        return len(frame)

    def _next_seq(self) -> int:
        self._seq = self._seq % 0xFFFF + 1
        return self._seq

    # ---- requests -------------------------------------------------------------------------------
    def request(self, opcode: Opcode, arguments: bytes = b"", *, reply_bytes: int = 16,
                payload: Callable[[int, int], bytes] | None = None,
                timeout: float | None = None) -> bytes:
        """Send one request and return its result; retransmit on silence. ``payload(session,
        seq)`` builds the session payload when it is not the plain header + arguments (WRITE);
        ``reply_bytes`` the expected reply size, to scale the timeout."""
        if self.session_id is None:
            raise DeviceResetError("no session with the device (it reset, or open_session() was "
                                   "not called)")
        seq = self._next_seq()
        sid = self.session_id
        body = (payload(sid, seq) if payload else
                session_payload(SessionType.NORMAL, sid, request_body(opcode, seq, arguments)))
        frame = encode_packet(body)
        self.stats.requests += 1
        wait = ((timeout if timeout is not None else self.timeout)
                + 2 * (len(frame) + reply_bytes) / self.transport.bytes_per_second)
        bytes_before, packets_before = self.stats.bytes_in, self._packets_in
        start = time.monotonic()
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retransmissions += 1
                if attempt == 1:
                    # A no-op first: if the device's decoder was left holding half an escape
                    # pair (a lost byte), FF FE completes it harmlessly, so our FF FD still
                    # starts a packet instead of being read as a literal FF.
                    frame = NOP_SEQUENCE + frame
            self.transport.write(frame)
            self.stats.frames_sent += 1
            self.stats.bytes_out += len(frame)
            deadline = time.monotonic() + wait
            while (packet := self._next_packet(deadline)) is not None:
                kind, psid, pbody = packet
                if kind == SessionType.TERMINATE:
                    self.session_id = None
                    raise DeviceResetError(
                        f"{self.transport.describe()}: the device reset during "
                        f"{_name(opcode)} (it sent TERMINATE): its allocations and "
                        "uploaded tensors are gone; open a new session")
                if kind != SessionType.NORMAL or psid != sid:
                    self.stats.stale_replies += 1
                    continue
                reply = parse_reply(pbody)
                if reply is None or reply.seq != seq or reply.opcode != opcode:
                    self.stats.stale_replies += 1
                    continue
                if reply.status != Status.OK:
                    try:
                        status = Status(reply.status).name
                    except ValueError:
                        status = f"status {reply.status}"
                    raise RpcError(f"{_name(opcode)} failed on the device: {status}: "
                                   f"{reply.message}", reply.status, reply.message)
                return reply.result
        raise self._silence(f"{_name(opcode)} (seq {seq})", bytes_before, packets_before,
                            time.monotonic() - start)

    def _info(self) -> DeviceInfo:
        """INFO, a page at a time: the device keeps each reply within its max packet, so a
        firmware with many models or operators never sends one long, fragile reply."""
        info: DeviceInfo | None = None
        items = 1
        while info is None or len(info.models) + len(info.functions) < items:
            first = 0 if info is None else len(info.models) + len(info.functions)
            result = self.request(Opcode.INFO, struct.pack("<H", first), reply_bytes=512)
            try:
                page, models, functions, at = parse_info(result)
            except struct.error as err:
                raise ProtocolError(f"cannot decode the device's INFO reply ({err}): "
                                    f"{result[:64].hex()}...") from None
            items = models + functions
            got = len(page.models) + len(page.functions)
            if at != first or (got == 0 and first < items):
                raise ProtocolError(f"the device's INFO page from item {first} starts at {at} "
                                    f"and lists {got} of the remaining {items - first} items")
            if info is None:
                info = page
            else:
                info.models.extend(page.models)
                info.functions.extend(page.functions)
        return info

    def alloc(self, nbytes: int, align: int = 16) -> int:
        return struct.unpack("<I", self.request(Opcode.ALLOC, struct.pack("<II", nbytes, align)))[0]

    def free(self, offset: int) -> None:
        self.request(Opcode.FREE, struct.pack("<I", offset))

    def write(self, offset: int, data: bytes) -> None:
        """Store ``data`` at arena ``offset``, in chunks that shrink while the link loses them and
        grow back when it does not."""
        pos, view = 0, memoryview(data)
        limit = max(MIN_CHUNK, self.transport.chunk_bytes)
        while pos < len(data) or (pos == 0 and not data):
            piece = bytes(view[pos:pos + self.chunk_bytes])
            at = offset + pos
            before = self.stats.retransmissions
            self.request(Opcode.WRITE, payload=lambda sid, seq: write_payload(sid, seq, at, piece),
                         reply_bytes=16)
            pos += len(piece)
            if self.stats.retransmissions > before:
                self.chunk_bytes = max(MIN_CHUNK, self.chunk_bytes // 2)
            else:
                self.chunk_bytes = min(limit, self.chunk_bytes * 2)
            if not data:
                break

    def read(self, offset: int, nbytes: int) -> bytes:
        out = bytearray()
        while len(out) < nbytes:
            n = min(self.chunk_bytes, nbytes - len(out))
            before = self.stats.retransmissions
            piece = self.request(Opcode.READ, struct.pack("<II", offset + len(out), n),
                                 reply_bytes=n + 16)
            if len(piece) != n:
                raise ProtocolError(f"READ of {n} bytes at {offset + len(out)} returned "
                                    f"{len(piece)}")
            out += piece
            if self.stats.retransmissions > before:
                self.chunk_bytes = max(MIN_CHUNK, self.chunk_bytes // 2)
        return bytes(out)

    def call(self, function: int, timeout: float | None = None) -> int:
        return struct.unpack("<i", self.request(Opcode.CALL, struct.pack("<H", function),
                                                timeout=timeout))[0]

    def timed_call(self, entries: list[TimedEntry], timeout: float | None = None
                   ) -> list[TimedEntry]:
        """Time many functions in as few round trips as the device's max packet allows."""
        limit = self.info.max_packet if self.info else 512
        batch: list[TimedEntry] = []

        def flush() -> None:
            if batch:
                size = timed_call_reply_bytes(batch)
                result = self.request(Opcode.TIMED_CALL, timed_call_arguments(batch),
                                      reply_bytes=size, timeout=timeout)
                parse_timed_call(result, batch)
                batch.clear()

        for e in entries:
            if 3 + timed_call_reply_bytes([e]) > limit:
                raise RpcError(f"TIMED_CALL: {e.repeat} repeats do not fit the device's "
                               f"{limit}-byte packets; use at most "
                               f"{(limit - 3 - 4 - 4) // 8} per entry")
            if batch and (3 + timed_call_reply_bytes(batch + [e]) > limit or len(batch) == 255
                          or 3 + 3 + 1 + 6 * (len(batch) + 1) > limit):
                flush()
            batch.append(e)
        flush()
        return entries

    def run(self, model: int, timeout: float | None = None) -> tuple[int, int]:
        """Run a whole model on its workspace; (return value, ticks)."""
        status, ticks = struct.unpack("<iQ", self.request(Opcode.RUN, struct.pack("<B", model),
                                                          timeout=timeout))
        return status, ticks

    def reset(self) -> None:
        """Restart the device's server; the session ends (open a new one)."""
        self.request(Opcode.RESET)
        self.session_id = None

    def raw_receive(self, nbytes: int, data: bytes | None = None) -> None:
        """Send ``nbytes`` unframed bytes the device reads and discards (link measurement)."""
        seq = self._next_seq()
        sid = self.session_id
        self._send(session_payload(SessionType.NORMAL, sid, request_body(
            Opcode.RAW_RECEIVE, seq, struct.pack("<I", nbytes))))
        self.transport.write(data if data is not None else bytes(nbytes))
        deadline = time.monotonic() + self.timeout + 2 * nbytes / self.transport.bytes_per_second
        while (packet := self._next_packet(deadline)) is not None:
            kind, psid, pbody = packet
            reply = parse_reply(pbody) if kind == SessionType.NORMAL and psid == sid else None
            if reply and reply.seq == seq and reply.opcode == Opcode.RAW_RECEIVE:
                return
        raise DeviceTimeoutError(f"no reply to RAW_RECEIVE of {nbytes} bytes")


__all__ = ["LinkStats", "RpcClient"]
