"""The Python framing decoder against the shared byte vectors (docs/rpc-vectors.json, also read by
the C tests in tests/rpc_c) and under hypothesis: any chunking, noise, and damage."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from microbuild.device.rpc.framing import NOP_SEQUENCE, FrameDecoder, crc16, encode_packet
from microbuild.device.rpc.protocol import parse_session

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "docs" / "rpc-vectors.json").read_text())


def test_vector_file_is_current():
    sys.path.insert(0, str(ROOT / "tools"))
    import make_rpc_vectors

    assert make_rpc_vectors.render() == (ROOT / "docs" / "rpc-vectors.json").read_text(), \
        "run tools/make_rpc_vectors.py"


def test_crc_vectors():
    assert crc16(b"123456789") == 0x29B1  # the published check value
    for v in VECTORS["crc16"]:
        assert crc16(bytes.fromhex(v["data"])) == v["crc"]


def test_frame_vectors_encode_and_decode():
    for v in VECTORS["frames"]:
        payload, wire = bytes.fromhex(v["payload"]), bytes.fromhex(v["wire"])
        assert encode_packet(payload) == wire
        assert FrameDecoder().feed(wire) == [payload]


def test_stream_vectors_byte_by_byte_and_whole():
    for v in VECTORS["streams"]:
        wire = bytes.fromhex(v["wire"])
        want = [bytes.fromhex(p) for p in v["payloads"]]
        assert FrameDecoder().feed(wire) == want, v["note"]
        decoder, got = FrameDecoder(), []
        for b in wire:
            got += decoder.feed(bytes([b]))
        assert got == want, v["note"]


def test_write_header_vectors():
    for v in VECTORS["write_headers"]:
        header = bytes.fromhex(v["header"])
        assert len(header) == 14 and crc16(header) == v["crc"]
        assert parse_session(header)[0] == 0x05


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8), st.lists(st.integers(0, 10_000),
                                                                  max_size=20))
def test_any_payloads_in_any_chunking_arrive_intact(payloads, cuts):
    wire = b"".join(encode_packet(p) for p in payloads)
    decoder, got = FrameDecoder(), []
    for chunk in _chunks(wire, cuts):
        got += decoder.feed(chunk)
    assert got == payloads


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=100))
def test_after_any_garbage_a_noop_and_a_packet_resynchronise(garbage, payload):
    # Whatever the decoder was left in (half an escape, a packet claiming 4 GiB), FF FE then a
    # packet delivers that packet: the client sends FF FE before every retransmission.
    decoder = FrameDecoder()
    decoder.feed(garbage)
    assert decoder.feed(NOP_SEQUENCE + encode_packet(payload))[-1:] == [payload]


@settings(max_examples=500, deadline=None)
@given(st.binary(min_size=1, max_size=200), st.data())
def test_a_damaged_byte_in_payload_or_crc_is_never_accepted(payload, data):
    wire = bytearray(encode_packet(payload))
    # Damage one byte after the length field; CRC-16 catches every error burst of <= 16 bits.
    # (Bytes that are or become FF change the escaping; those are the fuzzers' job.)
    start = 2 + 4 + sum(1 for b in wire[2:6] if b == 0xFF)  # escaped length bytes
    candidates = [i for i in range(start, len(wire)) if wire[i] != 0xFF
                  and (i == 0 or wire[i - 1] != 0xFF or i == start)]
    if not candidates:
        return
    i = data.draw(st.sampled_from(candidates))
    new = data.draw(st.integers(0, 254).filter(lambda b: b != wire[i]))
    wire[i] = new
    assert FrameDecoder().feed(bytes(wire)) == []


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_never_crash_the_decoder(noise):
    decoder = FrameDecoder(max_payload=512)
    for payload in decoder.feed(noise):
        assert len(payload) <= 512
    s = decoder.stats
    assert s.packets + s.crc_errors + s.framing_errors + s.aborted + s.too_long >= 0
