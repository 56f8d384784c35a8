"""The host side of the RPC protocol: sessions, requests with retransmission, and the calls of
docs/rpc-protocol.md section 3 as methods.

Reliability comes from three rules: every request waits at most a timeout scaled to its size and
is then sent again with the same seq (the device answers a repeat from its reply cache, so nothing
runs twice); only packets with a good CRC, the live session id and the awaited seq count; and each
way of failing ends in its own error (DeviceTimeoutError, DeviceGarbageError, DeviceResetError,
TransportClosedError, RpcError), so a caller never hangs and always knows which it was.

On a noisy link it degrades instead of failing: the chance that a packet arrives whole falls
with its length, so the packet size both sides agreed on (START_INIT, PACKET_SIZE) is halved while
requests keep needing retransmissions and doubled again while they pass; and a reply seen damaged
is asked for again at once instead of after the timeout.
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
from microbuild.device.rpc.protocol import (MIN_PACKET, PROTOCOL_VERSION, REPLY_OVERHEAD,
                                            WRITE_OVERHEAD, DeviceInfo, Opcode, SessionType,
                                            Status, TimedEntry, parse_info_page, parse_reply,
                                            parse_session, parse_start_reply, parse_timed_call,
                                            request_body, session_payload, start_init_body,
                                            timed_call_arguments, timed_call_reply_bytes,
                                            write_payload)
from microbuild.device.transports.base import Transport

MIN_CHUNK = 256
# The packet size is judged every WINDOW requests: halved if more than SHRINK_SHARE of them needed
# a retransmission, doubled if fewer than GROW_SHARE did. A packet of P bytes carries P - 15 bytes
# of data and arrives whole with probability (1 - e)^P at e errors per byte, so the data moved per
# byte sent peaks where about 10-40 % of attempts fail (at 1e-3: 128-256 bytes; at 1e-2 the floor,
# 64). A request that needed SHRINK_ATTEMPTS attempts or gave up halves it at once: at 1e-2 a
# 512-byte packet almost never arrives whole, and waiting for a window would cost minutes.
WINDOW = 16
SHRINK_SHARE = 0.4
GROW_SHARE = 0.1
SHRINK_ATTEMPTS = 4
# While a reply is arriving, this long without a byte means part of it was lost: ask again.
REPLY_GAP = 0.02
# ``retries`` counts the attempts that met silence. An attempt answered by damaged packets shows
# the device alive and the link noisy: it is not counted, up to this many times the retries.
NOISY_ATTEMPTS = 8


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
        # The packet size: ``packet_bytes`` the largest reply this host expects (None: no
        # session), ``_agreed`` what the device last confirmed, ``_wanted`` what the host asks
        # for next (0: the device's largest). Kept across sessions: the link stays as noisy.
        self.packet_bytes: int | None = None
        self._agreed = 0
        self._wanted = 0
        self._negotiating = False
        self._judged = 0  # requests in the current window
        self._troubled = 0  # of them, those that needed a retransmission

    # ---- receiving ------------------------------------------------------------------------------
    def _next_packet(self, deadline: float, damage_mark: int | None = None
                     ) -> tuple[int, int, bytes] | None:
        """The next good session packet (LOG handled here), or None at ``deadline``. With
        ``damage_mark`` (the decoder's damaged-packet count when the wait began) also None as soon
        as a packet arrives damaged, or one stops arriving halfway: the reply awaited was
        probably that one, and asking again now beats waiting out the timeout."""
        last_byte = time.monotonic()
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
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                return None
            if damage_mark is not None:
                if self.decoder.stats.damaged() > damage_mark:
                    return None
                if self.decoder.in_packet:
                    if now - last_byte > REPLY_GAP:
                        return None
                    left = min(left, REPLY_GAP)
            data = self.transport.read(min(left, 0.5))
            if data:
                last_byte = time.monotonic()
            self.stats.bytes_in += len(data)
            self._pending.extend(self.decoder.feed(data))

    def _silence(self, what: str, bytes_before: int, packets_before: int, waited: float):
        got = self.stats.bytes_in - bytes_before
        s = self.decoder.stats
        if got and self._packets_in == packets_before and self.session_id is not None:
            # The device spoke the protocol earlier in this session: the link mangled it.
            return DeviceTimeoutError(
                f"{self.transport.describe()}: no intact reply to {what} in {waited:.1f} s "
                f"({self.retries + 1} attempts): {got} bytes arrived, every packet damaged (CRC "
                f"errors so far {s.crc_errors}, framing errors {s.framing_errors}) at a packet "
                f"size of {self.packet_bytes} bytes. The link is too noisy: check the cable and "
                "the baud rate, or raise the client's retries")
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
        """Start a session (START_INIT / START_REPLY, which agree the packet size) and read the
        device's INFO. If the link is too noisy for INFO's pages at that size, start again with
        packets a quarter as long."""
        previous = 0
        while True:
            try:
                return self._open_session_once()
            except (DeviceTimeoutError, DeviceGarbageError):
                tried = self._agreed if self.session_id is not None else 0
                if not tried or tried <= MIN_PACKET or tried == previous:
                    raise  # no session at all, or the device would not go any smaller
                previous = tried
                self._wanted = max(MIN_PACKET, tried // 4)

    def _open_session_once(self) -> DeviceInfo:
        self.session_id = None
        self.packet_bytes = None
        bytes_before, packets_before = self.stats.bytes_in, self._packets_in
        start = time.monotonic()
        for _ in range(self.retries + 1):
            nonce = self.random.randrange(1, 256)
            self.transport.write(NOP_SEQUENCE)  # see request(): resynchronises the decoder
            self._send(session_payload(SessionType.START_INIT, nonce << 8,
                                       start_init_body(self._wanted)))
            deadline = time.monotonic() + self.timeout
            while (packet := self._next_packet(deadline)) is not None:
                kind, sid, body = packet
                if kind == SessionType.START_REPLY and sid >> 8 == nonce and sid & 0xFF:
                    version, packet_bytes = parse_start_reply(body)
                    if version != PROTOCOL_VERSION or packet_bytes is None:
                        raise ProtocolError(
                            f"the device speaks RPC protocol version "
                            f"{version if version >= 0 else '?'}, this host version "
                            f"{PROTOCOL_VERSION}; rebuild the firmware with this microbuild")
                    self.session_id = sid
                    self.packet_bytes = self._agreed = self._wanted = packet_bytes
                    self._judged = self._troubled = 0
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
        if self._wanted != self._agreed and not self._negotiating:
            self._negotiate_packet()
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
        silent = attempt = 0
        while silent <= self.retries and attempt <= NOISY_ATTEMPTS * (self.retries + 1):
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
            damage_mark = self.decoder.stats.damaged()
            heard = self.stats.bytes_in
            while (packet := self._next_packet(deadline, damage_mark)) is not None:
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
                self._note_link(attempts=attempt + 1)
                if reply.status != Status.OK:
                    try:
                        status = Status(reply.status).name
                    except ValueError:
                        status = f"status {reply.status}"
                    raise RpcError(f"{_name(opcode)} failed on the device: {status}: "
                                   f"{reply.message}", reply.status, reply.message)
                return reply.result
            if self.stats.bytes_in == heard:
                silent += 1
            attempt += 1
        self._note_link(attempts=attempt, gave_up=True)
        raise self._silence(f"{_name(opcode)} (seq {seq})", bytes_before, packets_before,
                            time.monotonic() - start)

    # ---- the packet size ------------------------------------------------------------------------
    def _note_link(self, attempts: int, gave_up: bool = False) -> None:
        """Adapt the packet size to how the last request went (the change is agreed with the
        device before the next request)."""
        if self._negotiating or self.packet_bytes is None:
            return
        self._judged += 1
        self._troubled += attempts > 1
        if gave_up or attempts >= SHRINK_ATTEMPTS or (
                self._judged >= WINDOW and self._troubled > SHRINK_SHARE * self._judged):
            self._resize(max(MIN_PACKET, self._wanted // 2))
        elif self._judged >= WINDOW and self._troubled < GROW_SHARE * self._judged:
            # Before INFO's device record arrived, the size START_REPLY agreed is the ceiling.
            most = self.info.max_packet if self.info else self._agreed
            self._resize(min(most, self._wanted * 2))
        elif self._judged >= WINDOW:
            self._judged = self._troubled = 0

    def _resize(self, wanted: int) -> None:
        self._judged = self._troubled = 0
        self._wanted = wanted
        # Smaller at once on this side (READs, TIMED_CALL batches, WRITE chunks): the device
        # keeps to the larger size until it agrees, which this host accepts meanwhile.
        self.packet_bytes = min(self.packet_bytes or wanted, wanted)

    def _negotiate_packet(self) -> None:
        """PACKET_SIZE: ask the device for ``_wanted``; both sides use what it answers."""
        self._negotiating = True
        try:
            result = self.request(Opcode.PACKET_SIZE, struct.pack("<I", self._wanted))
        finally:
            self._negotiating = False
        agreed = struct.unpack_from("<I", result)[0]
        self.packet_bytes = self._agreed = self._wanted = agreed

    def _info(self) -> DeviceInfo:
        """INFO, a page at a time: the device keeps each reply within the packet size, so a
        firmware with many models or operators never sends one long, fragile reply."""
        info: DeviceInfo | None = None
        first, items = 0, 1
        while first < items:
            result = self.request(Opcode.INFO, struct.pack("<H", first),
                                  reply_bytes=self.packet_bytes or 512)
            try:
                info, items, at, got = parse_info_page(result, info)
            except (struct.error, ValueError) as err:
                raise ProtocolError(f"cannot decode the device's INFO page from item {first} "
                                    f"({err}): {result[:64].hex()}...") from None
            if at != first or (got == 0 and first < items):
                raise ProtocolError(f"the device's INFO page from item {first} starts at {at} "
                                    f"and lists {got} of the remaining {items - first} items")
            first += got
        if info is None:
            raise ProtocolError("the device's INFO lists no device record")
        return info

    def alloc(self, nbytes: int, align: int = 16) -> int:
        return struct.unpack("<I", self.request(Opcode.ALLOC, struct.pack("<II", nbytes, align)))[0]

    def free(self, offset: int) -> None:
        self.request(Opcode.FREE, struct.pack("<I", offset))

    def write(self, offset: int, data: bytes) -> None:
        """Store ``data`` at arena ``offset``, in chunks that shrink while the link loses them and
        grow back when it does not. The device streams a WRITE's data into place, so on a clean
        link a chunk may be far larger than the packet size; once the packet size came down, the
        chunks keep within it too."""
        pos, view = 0, memoryview(data)
        limit = max(MIN_CHUNK, self.transport.chunk_bytes)
        while pos < len(data) or (pos == 0 and not data):
            piece = bytes(view[pos:pos + min(self.chunk_bytes, self._write_chunk_cap())])
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

    def _write_chunk_cap(self) -> int:
        """The largest WRITE chunk: unbounded while the link runs at the device's max packet."""
        if self.info is None or self.packet_bytes is None or \
                self.packet_bytes >= self.info.max_packet:
            return 1 << 62
        return self.packet_bytes - WRITE_OVERHEAD

    def _packet(self) -> int:
        return self.packet_bytes or (self.info.max_packet if self.info else 512)

    def read(self, offset: int, nbytes: int) -> bytes:
        """Read ``nbytes`` at arena ``offset``, each reply within the packet size."""
        out = bytearray()
        while len(out) < nbytes:
            n = min(self._packet() - REPLY_OVERHEAD, nbytes - len(out))
            piece = self.request(Opcode.READ, struct.pack("<II", offset + len(out), n),
                                 reply_bytes=n + 16)
            if len(piece) != n:
                raise ProtocolError(f"READ of {n} bytes at {offset + len(out)} returned "
                                    f"{len(piece)}")
            out += piece
        return bytes(out)

    def call(self, function: int, timeout: float | None = None) -> int:
        return struct.unpack("<i", self.request(Opcode.CALL, struct.pack("<H", function),
                                                timeout=timeout))[0]

    def timed_call(self, entries: list[TimedEntry], timeout: float | None = None
                   ) -> list[TimedEntry]:
        """Time many functions in as few round trips as the packet size allows. An entry whose
        ticks do not fit one reply at the current packet size (a noisy link brought it down) is
        timed in parts, the warm-up runs before the first."""
        most = self.info.max_packet if self.info else 512
        batch: list[TimedEntry] = []
        parts: list[tuple[TimedEntry, TimedEntry]] = []  # (entry, one part of it)

        def flush() -> None:
            if batch:
                size = timed_call_reply_bytes(batch)
                result = self.request(Opcode.TIMED_CALL, timed_call_arguments(batch),
                                      reply_bytes=size, timeout=timeout)
                parse_timed_call(result, batch)
                batch.clear()

        for e in entries:
            if REPLY_OVERHEAD + timed_call_reply_bytes([e]) - 4 > most:
                raise RpcError(f"TIMED_CALL: {e.repeat} repeats do not fit the device's "
                               f"{most}-byte packets; use at most "
                               f"{(most - REPLY_OVERHEAD - 4) // 8} per entry")
            done = 0
            while done < e.repeat or (done == 0 and e.repeat == 0):
                limit = self._packet()
                fits = max(1, (limit - REPLY_OVERHEAD - 4) // 8)
                part = TimedEntry(e.function, e.warmup if done == 0 else 0,
                                  min(fits, e.repeat - done))
                if batch and (REPLY_OVERHEAD - 4 + timed_call_reply_bytes(batch + [part]) > limit
                              or len(batch) == 255 or 3 + 3 + 1 + 6 * (len(batch) + 1) > limit):
                    flush()
                batch.append(part)
                parts.append((e, part))
                done += part.repeat
                if e.repeat == 0:
                    break
        flush()
        for e in entries:
            e.status, e.ticks = 0, []
        for e, part in parts:
            if e.status != 0:  # the entry stopped at an earlier part's failure
                e.ticks += [0] * part.repeat
                continue
            e.status = part.status
            e.ticks += part.ticks
        return entries

    def run(self, model: int, timeout: float | None = None) -> tuple[int, int]:
        """Run a whole model on its workspace; (return value, ticks)."""
        status, ticks = struct.unpack("<iQ", self.request(Opcode.RUN, struct.pack("<B", model),
                                                          timeout=timeout))
        return status, ticks

    def blob_load(self, offset: int, nbytes: int, workspace_offset: int,
                  workspace_bytes: int) -> None:
        """Have the device's table runner check the model blob at arena ``offset`` (CRC-32,
        SHA-256, format version, kernel-set id, bounds) and reset its state; RpcError BAD_BLOB
        says why it was refused."""
        self.request(Opcode.BLOB_LOAD, struct.pack("<IIII", offset, nbytes, workspace_offset,
                                                   workspace_bytes))

    def blob_run(self, timeout: float | None = None) -> tuple[int, int]:
        """Run the loaded blob once; (return value, ticks)."""
        status, ticks = struct.unpack("<iQ", self.request(Opcode.BLOB_RUN, timeout=timeout))
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
