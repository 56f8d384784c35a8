"""Write docs/rpc-vectors.json: byte vectors that the C (runtime/rpc/) and Python
(microbuild/device/rpc/) implementations of docs/rpc-protocol.md are both tested against.

Run: .venv/bin/python tools/make_rpc_vectors.py   (tests/rpc/test_vectors.py checks the file is
current). The CRC check values are the published ones for CRC-16/CCITT-FALSE, so the vectors do not
only agree with the Python code that wrote them.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from microbuild.device.rpc.framing import crc16, encode_packet  # noqa: E402
from microbuild.device.rpc.protocol import (  # noqa: E402
    Opcode, SessionType, request_body, session_payload, start_init_body, write_payload)

OUT = Path(__file__).resolve().parents[1] / "docs" / "rpc-vectors.json"


def vectors() -> dict:
    crcs = [(b"", 0xFFFF), (b"123456789", 0x29B1), (b"A", 0xB915), (bytes(range(256)), None)]
    crc_entries = []
    for data, known in crcs:
        value = crc16(data)
        assert known is None or value == known, (data, hex(value))
        crc_entries.append({"data": data.hex(), "crc": value})

    sid = 0x2A7C
    payloads = [
        b"",
        b"\x01\xff",
        bytes([0xFF] * 6),
        bytes([0xFF, 0xFD, 0xFF, 0xFE]),  # control sequences as data must arrive intact
        session_payload(SessionType.START_INIT, 0x2A00, start_init_body(128)),
        session_payload(SessionType.START_REPLY, 0x2A7C, struct.pack("<BI", 2, 128)),
        session_payload(SessionType.TERMINATE, 0),
        session_payload(SessionType.LOG, 0, b"microbuild rpc: board host"),
        session_payload(SessionType.NORMAL, sid, request_body(Opcode.INFO, 1, b"\0\0")),
        session_payload(SessionType.NORMAL, sid, request_body(Opcode.PACKET_SIZE, 2,
                                                              struct.pack("<I", 64))),
        session_payload(SessionType.NORMAL, sid, request_body(Opcode.READ, 0xFFFF,
                                                              struct.pack("<II", 64, 16))),
        write_payload(sid, 0x1FF, 0xFF, bytes(range(250, 256)) + bytes(range(6))),
        bytes(range(256)),
    ]
    frames = [{"payload": p.hex(), "wire": encode_packet(p).hex()} for p in payloads]

    a, b, c = (encode_packet(p) for p in (b"\x10\x20", b"\xff\x01", b"hello"))
    bad_crc = bytearray(a)
    bad_crc[-1] ^= 0x01
    streams = [
        ("back to back", a + b + c, [b"\x10\x20", b"\xff\x01", b"hello"]),
        ("noise before, between and after", b"\x00\x13\xfd" + a + b"\x7f\xfe" + b + b"\x01",
         [b"\x10\x20", b"\xff\x01"]),
        ("a CRC error drops that packet only", bytes(bad_crc) + c, [b"hello"]),
        ("a start inside a packet drops the partial one", a[:5] + b, [b"\xff\x01"]),
        ("FF then an undefined byte is a framing error", a[:4] + b"\xff\x01" + a[4:] + c,
         [b"hello"]),
        ("a no-op inside a packet is ignored", a[:4] + b"\xff\xfe" + a[4:], [b"\x10\x20"]),
        ("no-ops and a device reset before a packet", b"\xff\xfe\xff\xfe" + c, [b"hello"]),
        ("truncated packet at the end delivers nothing", c + a[:-1], [b"hello"]),
        ("one flipped payload bit", c[:6] + bytes([c[6] ^ 0x04]) + c[7:] + a, [b"\x10\x20"]),
    ]
    stream_entries = [{"note": note, "wire": wire.hex(), "payloads": [p.hex() for p in good]}
                      for note, wire, good in streams]

    write_headers = []
    for session_id, seq, offset, length in ((0x2A7C, 1, 0, 16), (0xFF01, 0xFFFF, 0xFFFFFFF0, 1),
                                            (0x0102, 300, 4096, 0)):
        header = (session_payload(SessionType.NORMAL, session_id)
                  + request_body(Opcode.WRITE, seq, struct.pack("<II", offset, length)))
        write_headers.append({"header": header.hex(), "crc": crc16(header)})
    return {"crc16": crc_entries, "frames": frames, "streams": stream_entries,
            "write_headers": write_headers}


def render() -> str:
    return json.dumps(vectors(), indent=1) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
    print(f"wrote {OUT}")
