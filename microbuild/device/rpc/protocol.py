"""The session and RPC layers of the protocol as data: constants, encoders, decoders
(docs/rpc-protocol.md, sections 2 and 3). No I/O here; microbuild/device/rpc/client.py does that."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

from microbuild.device.rpc.framing import crc16

PROTOCOL_VERSION = 2
# The smallest packet size a host asks for (a device may insist on more: see PACKET_SIZE).
MIN_PACKET = 64


class SessionType(IntEnum):
    START_INIT = 0x01
    START_REPLY = 0x02
    TERMINATE = 0x03
    LOG = 0x04
    NORMAL = 0x05


class Opcode(IntEnum):
    INFO = 0x01
    ALLOC = 0x02
    FREE = 0x03
    WRITE = 0x04
    READ = 0x05
    CALL = 0x06
    TIMED_CALL = 0x07
    RUN = 0x08
    RESET = 0x09
    RAW_RECEIVE = 0x0A
    PACKET_SIZE = 0x0B
    BLOB_LOAD = 0x0C
    BLOB_RUN = 0x0D


REPLY_FLAG = 0x80


class Status(IntEnum):
    OK = 0
    BAD_MESSAGE = 1
    UNKNOWN_OPCODE = 2
    BAD_ADDRESS = 3
    NO_MEMORY = 4
    BAD_FUNCTION = 5
    TOO_LARGE = 6
    BAD_BLOB = 7


# Bytes of a WRITE payload before its data: session header 3, opcode + seq 3, offset 4,
# length 4, header CRC 2.
WRITE_OVERHEAD = 16
SESSION_HEADER = struct.Struct("<BH")
REQUEST_HEADER = struct.Struct("<BH")
REPLY_HEADER = struct.Struct("<BHB")
# Bytes of a reply payload before its result: session header 3, opcode + seq + status 4.
REPLY_OVERHEAD = SESSION_HEADER.size + REPLY_HEADER.size


def session_payload(kind: SessionType, session_id: int, body: bytes = b"") -> bytes:
    return SESSION_HEADER.pack(kind, session_id) + body


def parse_session(payload: bytes) -> tuple[int, int, bytes] | None:
    """(type, session id, body), or None for a payload too short to be one."""
    if len(payload) < SESSION_HEADER.size:
        return None
    kind, session_id = SESSION_HEADER.unpack_from(payload)
    return kind, session_id, payload[SESSION_HEADER.size:]


def request_body(opcode: Opcode, seq: int, arguments: bytes = b"") -> bytes:
    return REQUEST_HEADER.pack(opcode, seq) + arguments


def write_payload(session_id: int, seq: int, offset: int, data: bytes) -> bytes:
    """The whole session payload of a WRITE, with the CRC that guards its header."""
    header = (session_payload(SessionType.NORMAL, session_id)
              + request_body(Opcode.WRITE, seq, struct.pack("<II", offset, len(data))))
    return header + struct.pack("<H", crc16(header)) + data


@dataclass
class Reply:
    opcode: int
    seq: int
    status: int
    result: bytes

    @property
    def message(self) -> str:
        return self.result.decode("utf-8", errors="replace")


def parse_reply(body: bytes) -> Reply | None:
    if len(body) < REPLY_HEADER.size:
        return None
    opcode, seq, status = REPLY_HEADER.unpack_from(body)
    if not opcode & REPLY_FLAG:
        return None
    return Reply(opcode & ~REPLY_FLAG, seq, status, body[REPLY_HEADER.size:])


@dataclass
class FunctionInfo:
    index: int
    kind: int  # 0 whole model, 1 operator
    model: int
    op_index: int
    inputs: int
    outputs: int
    name: str

    @property
    def is_model(self) -> bool:
        return self.kind == 0


@dataclass
class ModelInfo:
    index: int
    name: str
    workspace_offset: int
    workspace_bytes: int


@dataclass
class DeviceInfo:
    """The INFO reply: what the firmware on the other end is."""

    version: int
    max_packet: int
    arena_bytes: int
    timer_hz: int
    build_id: bytes
    board: str
    models: list[ModelInfo] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    model_count: int = 0  # as announced; ``models`` fills up as INFO's pages arrive
    function_count: int = 0

    def model(self, name: str) -> ModelInfo:
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    def functions_of(self, model: int) -> list[FunctionInfo]:
        return [f for f in self.functions if f.model == model and not f.is_model]

    def model_function(self, model: int) -> FunctionInfo:
        return next(f for f in self.functions if f.model == model and f.is_model)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def str8(self) -> str:
        n = self.take("B")
        text = self.data[self.pos:self.pos + n]
        if len(text) != n:
            raise struct.error("string runs past the end")
        self.pos += n
        return text.decode("utf-8", errors="replace")

    def done(self) -> bool:
        return self.pos >= len(self.data)

    def raw(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        if len(out) != n:
            raise struct.error("field runs past the end")
        self.pos += n
        return out


def start_init_body(packet_bytes: int) -> bytes:
    """START_INIT's body: the protocol version and the packet size proposed (0: the device's
    largest)."""
    return struct.pack("<BI", PROTOCOL_VERSION, packet_bytes)


def parse_start_reply(body: bytes) -> tuple[int, int | None]:
    """(version, packet size agreed); the size is None from a device too old to send it."""
    version = body[0] if body else -1
    packet = struct.unpack_from("<I", body, 1)[0] if len(body) >= 5 else None
    return version, packet


def parse_info_page(result: bytes, info: DeviceInfo | None
                    ) -> tuple[DeviceInfo | None, int, int, int]:
    """Decode one page of INFO into ``info`` (None before the page holding item 0, the device
    record): (info, items in the table, the page's first item, items on this page). The table
    lists the device record, the models, then the functions. Raises struct.error if truncated
    and ValueError if the page does not follow what ``info`` already holds."""
    r = _Reader(result)
    items, first = r.take("HH")
    item, got = first, 0
    while not r.done():
        if item == 0:
            version, max_packet, arena_bytes, timer_hz = r.take("BIIQ")
            info = DeviceInfo(version=version, max_packet=max_packet, arena_bytes=arena_bytes,
                              timer_hz=timer_hz, build_id=r.raw(8), board=r.str8())
            info.model_count, info.function_count = r.take("BH")
        elif info is None:
            raise ValueError(f"item {item} before the device record")
        elif item <= info.model_count:
            name = r.str8()
            offset, size = r.take("II")
            info.models.append(ModelInfo(item - 1, name, offset, size))
        else:
            kind, model, op_index, inputs, outputs = r.take("BBHBB")
            info.functions.append(FunctionInfo(item - 1 - info.model_count, kind, model,
                                               op_index, inputs, outputs, r.str8()))
        item += 1
        got += 1
    return info, items, first, got


@dataclass
class TimedEntry:
    """One TIMED_CALL entry's request and, after the call, its result."""

    function: int
    warmup: int = 1
    repeat: int = 1
    status: int = 0
    ticks: list[int] = field(default_factory=list)

    @property
    def median(self) -> int:
        s = sorted(self.ticks)
        return s[len(s) // 2] if s else 0


def timed_call_arguments(entries: list[TimedEntry]) -> bytes:
    return struct.pack("<B", len(entries)) + b"".join(
        struct.pack("<HHH", e.function, e.warmup, e.repeat) for e in entries)


def timed_call_reply_bytes(entries: list[TimedEntry]) -> int:
    """Bytes of the reply body to a TIMED_CALL (checked against the device's max packet)."""
    return REPLY_HEADER.size + sum(4 + 8 * e.repeat for e in entries)


def parse_timed_call(result: bytes, entries: list[TimedEntry]) -> None:
    """Fill each entry's status and ticks. An entry that failed carries fewer ticks: the device
    stops it at the first non-zero return, and sends zeros for the runs it did not make."""
    r = _Reader(result)
    for e in entries:
        e.status = r.take("i")
        e.ticks = [r.take("Q") for _ in range(e.repeat)]
