"""Framing, the lowest layer of the RPC protocol (docs/rpc-protocol.md, section 1).

A packet is ``FF FD``, then the escaped u32 payload length, the escaped payload and the escaped
CRC-16/CCITT-FALSE of length + payload. ``FF FE`` is a no-op; ``FF FF`` is a literal ``FF``.

The decoder takes bytes in any chunking and hands out whole payloads whose CRC matched. It works
on runs between escape bytes with ``bytes.find`` rather than byte by byte, so a large READ reply
costs no more Python time than copying it.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass, field

ESCAPE = 0xFF
START = 0xFD
NOP = 0xFE

START_SEQUENCE = bytes([ESCAPE, START])
NOP_SEQUENCE = bytes([ESCAPE, NOP])


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection): ``crc16(b"123456789")`` is
    0x29B1. Pass the previous result as ``crc`` to continue over more data. binascii's CRC-HQX is
    this same polynomial without reflection, in C: uploads are hashed at memory speed."""
    return binascii.crc_hqx(data, crc)


def escape(data: bytes) -> bytes:
    return data.replace(b"\xff", b"\xff\xff")


def encode_packet(payload: bytes) -> bytes:
    """The bytes on the wire for one packet carrying ``payload``."""
    length = struct.pack("<I", len(payload))
    crc = crc16(payload, crc16(length))
    return START_SEQUENCE + escape(length + payload + struct.pack("<H", crc))


@dataclass
class FramingStats:
    """What the decoder threw away, for diagnostics and the robustness benchmark."""

    packets: int = 0
    crc_errors: int = 0
    framing_errors: int = 0  # FF followed by a byte that is not FD, FE or FF
    aborted: int = 0  # a start sequence arrived before the packet was complete
    too_long: int = 0
    noise_bytes: int = 0  # bytes outside any packet
    nops: int = 0

    def damaged(self) -> int:
        """Packets that began but were not delivered whole."""
        return self.crc_errors + self.framing_errors + self.aborted + self.too_long


@dataclass
class FrameDecoder:
    """Turns a byte stream into payloads. ``max_payload`` bounds what it will buffer (a corrupted
    length field must not make the host wait for gigabytes)."""

    max_payload: int = 1 << 26
    stats: FramingStats = field(default_factory=FramingStats)

    def __post_init__(self) -> None:
        self._in_packet = False
        self._pending_escape = False
        self._body = bytearray()  # unescaped bytes of the current packet: length, payload, crc
        self._need = 0  # total unescaped bytes this packet has (4 until the length is known)

    @property
    def in_packet(self) -> bool:
        """A packet has begun and is not complete yet."""
        return self._in_packet

    def feed(self, data: bytes) -> list[bytes]:
        """Consume ``data``; return the payloads completed by it, oldest first."""
        out: list[bytes] = []
        i, n = 0, len(data)
        while i < n:
            if self._pending_escape:
                self._pending_escape = False
                self._control(data[i], out)
                i += 1
                continue
            j = data.find(b"\xff", i)
            end = n if j < 0 else j
            if end > i:
                self._plain(data, i, end, out)
            if j < 0:
                break
            self._pending_escape = True
            i = j + 1
        return out

    # A run of ordinary bytes [start, end).
    def _plain(self, data: bytes, start: int, end: int, out: list[bytes]) -> None:
        while start < end:
            if not self._in_packet:
                self.stats.noise_bytes += end - start
                return
            take = min(end - start, self._need - len(self._body))
            self._body += data[start:start + take]
            start += take
            self._progress(out)

    def _control(self, byte: int, out: list[bytes]) -> None:
        if byte == ESCAPE:
            if self._in_packet:
                self._body.append(ESCAPE)
                self._progress(out)
            else:
                self.stats.noise_bytes += 1
        elif byte == START:
            if self._in_packet:
                self.stats.aborted += 1
            self._in_packet = True
            self._body.clear()
            self._need = 4
        elif byte == NOP:
            self.stats.nops += 1
        else:
            if self._in_packet:
                self.stats.framing_errors += 1
                self._in_packet = False
            else:
                self.stats.noise_bytes += 2

    def _progress(self, out: list[bytes]) -> None:
        body = self._body
        if self._need == 4 and len(body) == 4:
            length = struct.unpack_from("<I", body)[0]
            if length > self.max_payload:
                self.stats.too_long += 1
                self._in_packet = False
                return
            self._need = 4 + length + 2
        if len(body) == self._need and self._need > 4:
            self._in_packet = False
            payload_end = self._need - 2
            expected = struct.unpack_from("<H", body, payload_end)[0]
            if crc16(memoryview(body)[:payload_end]) == expected:
                self.stats.packets += 1
                out.append(bytes(body[4:payload_end]))
            else:
                self.stats.crc_errors += 1
