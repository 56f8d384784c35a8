"""The device side of the RPC protocol (runtime/rpc/, docs/rpc-protocol.md), tested in C.

Each test compiles a C program from this folder together with runtime/rpc/ using the host GCC and
clang with ASan and UBSan (any report fails the run), runs it and checks what it printed:

- vectors_test.c: CRC and framing against docs/rpc-vectors.json (and against a small vector set
  written here, from hand-known values and an independent Python framer);
- server_test.c: a scripted session with the server on a fake board (fake_platform.c,
  fake_models.c), built with the default and with a small MB_RPC_MAX_PACKET;
- fuzz_test.c: seeded random fuzzing of the decoder and the server; fuzz_libfuzzer.c: the same
  under libFuzzer for a bounded number of runs;
- the real host firmware (runtime/rpc/main.c with the posix console driver) answering on stdin
  and stdout and exiting at the end of its input.

Plus: runtime/rpc/ compiles warning-free for every architecture it serves. No test skips: a missing
compiler is a failure."""

from __future__ import annotations

import json
import os
import random
import re
import select
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RUNTIME = REPO / "runtime"
INCLUDE = RUNTIME / "include"
VECTORS = REPO / "docs" / "rpc-vectors.json"

FRAMING_SOURCES = [RUNTIME / "rpc" / "crc16.c", RUNTIME / "rpc" / "framing.c"]
RPC_SOURCES = [*FRAMING_SOURCES, RUNTIME / "rpc" / "server.c"]
FAKE_BOARD = [HERE / "fake_platform.c", HERE / "fake_models.c"]

WARNINGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
            "-g", "-O1"]
HOST_COMPILERS = ["gcc", "clang"]
SANITIZER_ENV = {"ASAN_OPTIONS": "abort_on_error=0:detect_leaks=1",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}


def _require(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not on PATH: these tests need it (they never skip)")


def _build(compiler: str, sources: list[Path], output: Path, extra: list[str] = ()) -> Path:
    _require(compiler)
    command = [compiler, *WARNINGS, *SANITIZE, *extra, f"-I{HERE}", f"-I{INCLUDE}",
               *map(str, sources), "-o", str(output)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stderr}"
    return output


def _run(command: list, *, stdin: bytes = b"", timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, **SANITIZER_ENV)
    result = subprocess.run([str(c) for c in command], input=stdin, capture_output=True, env=env,
                            timeout=timeout, check=False)
    assert result.returncode == 0, (
        f"{command[0]} exited with {result.returncode}\nstdout:\n{result.stdout.decode(errors='replace')}"
        f"\nstderr:\n{result.stderr.decode(errors='replace')}")
    return result


# ---------------------------------------------------------------------------------------------
# An independent Python framer (bit by bit, from the protocol text), for the test's own vectors
# and for talking to the host firmware.

def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def escape(data: bytes) -> bytes:
    return data.replace(b"\xff", b"\xff\xff")


def frame(payload: bytes, crc_xor: int = 0) -> bytes:
    length = struct.pack("<I", len(payload))
    crc = crc16(length + payload) ^ crc_xor
    return b"\xff\xfd" + escape(length + payload + struct.pack("<H", crc))


def unframe_all(wire: bytes) -> list[bytes]:
    """Good packets in a device's output; anything malformed fails (a device never sends it)."""
    packets, i = [], 0
    while i < len(wire):
        if wire[i:i + 2] == b"\xff\xfe":
            i += 2
            continue
        assert wire[i:i + 2] == b"\xff\xfd", f"junk at {i}: {wire[i:i + 16].hex()}"
        i += 2

        def take() -> int:
            nonlocal i
            byte = wire[i]
            if byte == 0xFF:
                assert wire[i + 1] == 0xFF, f"bad escape at {i}"
                i += 2
            else:
                i += 1
            return byte

        length = struct.unpack("<I", bytes(take() for _ in range(4)))[0]
        payload = bytes(take() for _ in range(length))
        crc = struct.unpack("<H", bytes(take() for _ in range(2)))[0]
        assert crc == crc16(struct.pack("<I", length) + payload)
        packets.append(payload)
    return packets


def vectors_to_records(vectors: dict) -> bytes:
    """The JSON vectors as the whitespace-separated records vectors_test.c reads."""
    def h(text: str) -> str:
        bytes.fromhex(text)  # validate
        return text or "-"

    lines = []
    for entry in vectors["crc16"]:
        lines.append(f"crc16 {h(entry['data'])} {int(entry['crc'])}")
    for entry in vectors["frames"]:
        lines.append(f"frame {h(entry['payload'])} {h(entry['wire'])}")
    for entry in vectors["streams"]:
        payloads = " ".join(h(p) for p in entry["payloads"])
        lines.append(f"stream {h(entry['wire'])} {len(entry['payloads'])} {payloads}".rstrip())
    for entry in vectors["write_headers"]:
        lines.append(f"header {h(entry['header'])} {int(entry['crc'])}")
    return ("\n".join(lines) + "\n").encode()


def own_vectors() -> dict:
    """A small vector set: the documented check values written out by hand, the rest from the
    framer above."""
    rng = random.Random(7)
    crcs = [{"data": b"123456789".hex(), "crc": 0x29B1},  # the doc's check value
            {"data": "", "crc": 0xFFFF},                    # nothing: the initial value
            {"data": b"A".hex(), "crc": 0xB915}]            # the classic CCITT-FALSE "A"
    for length in (1, 2, 14, 100, 1000):
        data = bytes(rng.choice([0xFF, 0x00, rng.randrange(256)]) for _ in range(length))
        crcs.append({"data": data.hex(), "crc": crc16(data)})

    # The doc's example, written out: 01 FF -> FF FD 02 00 00 00 01 FF FF <crc lo> <crc hi>.
    example_crc = crc16(bytes.fromhex("0200000001ff"))
    example = "fffd0200000001ffff" + escape(struct.pack("<H", example_crc)).hex()
    frames = [{"payload": "01ff", "wire": example}]
    for payload in (b"", b"\xff", b"\xff" * 3, bytes(range(256)), b"\xfd\xfe\xff" * 90,
                    bytes([0x05, 0xFF, 0x42]) + bytes(300)):
        frames.append({"payload": payload.hex(), "wire": frame(payload).hex()})

    a, b, c = b"\x01\x02", b"\xff\xfd\xff", b""
    streams = [
        {"note": "two packets back to back", "wire": (frame(a) + frame(b)).hex(),
         "payloads": [a.hex(), b.hex()]},
        {"note": "a bad CRC delivers nothing", "wire": (frame(a, 1) + frame(b)).hex(),
         "payloads": [b.hex()]},
        {"note": "a start inside a packet drops it", "wire": (frame(b)[:8] + frame(a)).hex(),
         "payloads": [a.hex()]},
        {"note": "a framing error drops the packet", "wire": (frame(a)[:5] + b"\xff\x01" + frame(c)).hex(),
         "payloads": [c.hex()]},
        {"note": "no-ops inside and outside", "wire": (b"\xff\xfe" + frame(a)[:4] + b"\xff\xfe" + frame(a)[4:]).hex(),
         "payloads": [a.hex()]},
        {"note": "noise between packets", "wire": (b"\x00\x42\xfd" + frame(a) + b"\x13\xff\x00" + frame(b)).hex(),
         "payloads": [a.hex(), b.hex()]},
        {"note": "a huge length swallows until the next start",
         "wire": (b"\xff\xfd\x00\x00\x00\x7f" + b"\x01" * 40 + frame(a)).hex(), "payloads": [a.hex()]},
        {"note": "truncated at the end", "wire": frame(b)[:-1].hex(), "payloads": []},
        {"note": "a lone FF before a start pairs with it: that packet is lost",
         "wire": (frame(b)[:7] + frame(a) + frame(c)).hex(), "payloads": [c.hex()]},
    ]

    header = struct.pack("<BHBHII", 5, 0x42A7, 4, 9, 4096, 64)
    headers = [{"header": header.hex(), "crc": crc16(header)},
               {"header": bytes(14).hex(), "crc": crc16(bytes(14))}]
    return {"crc16": crcs, "frames": frames, "streams": streams, "write_headers": headers}


def _check_vectors(compiler: str, vectors: dict, tmp_path: Path) -> None:
    program = _build(compiler, [HERE / "vectors_test.c", *FRAMING_SOURCES], tmp_path / "vectors_test")
    out = _run([program], stdin=vectors_to_records(vectors)).stdout.decode()
    counts = {key: len(vectors[key]) for key in ("crc16", "frames", "streams", "write_headers")}
    assert out.strip() == ("vectors ok: crc16 {crc16} frames {frames} streams {streams} "
                           "write_headers {write_headers}").format(**counts)


# ---------------------------------------------------------------------------------------------

def _clang_arm(target: str, *cpu: str) -> list[str]:
    picolibc = "/usr/lib/picolibc/arm-none-eabi"
    resource = subprocess.run(["clang", "-print-resource-dir"], capture_output=True, text=True,
                              check=True).stdout.strip()
    return ["clang", f"--target={target}", *cpu, "-nostdinc", "-isystem", f"{picolibc}/include",
            "-isystem", f"{resource}/include"]


RV32_GCC = ["riscv64-unknown-elf-gcc", "--specs=picolibc.specs", "-march=rv32imac", "-mabi=ilp32"]
CROSS = {
    "host-gcc": lambda: ["gcc"],
    "host-clang": lambda: ["clang"],
    "cortex-m0plus-gcc": lambda: ["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m0plus"],
    "cortex-m3-gcc": lambda: ["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m3"],
    "cortex-m55-gcc": lambda: ["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m55", "-mfloat-abi=hard"],
    "cortex-m3-clang": lambda: _clang_arm("thumbv7m-none-eabi", "-mcpu=cortex-m3", "-mfloat-abi=soft"),
    "cortex-m55-clang": lambda: _clang_arm("thumbv8.1m.main-none-eabihf", "-mcpu=cortex-m55",
                                           "-mfloat-abi=hard"),
    "rv32imac-gcc": lambda: [*RV32_GCC, "-misa-spec=2.2"],
    "rv32imac-gcc-isa20191213": lambda: RV32_GCC,
}


@pytest.mark.parametrize("target", CROSS)
def test_runtime_rpc_compiles_warning_free(target, tmp_path):
    compiler = CROSS[target]()
    _require(compiler[0])
    sources = sorted((RUNTIME / "rpc").glob("*.c"))
    assert {s.name for s in sources} >= {"crc16.c", "framing.c", "server.c", "main.c"}
    for level in ("-O0", "-Os", "-O3"):  # GCC's flow warnings differ by level
        for source in sources:
            command = [*compiler, *WARNINGS, level, "-c", f"-I{HERE}", f"-I{INCLUDE}", str(source),
                       "-o", str(tmp_path / f"{source.stem}.o")]
            result = subprocess.run(command, capture_output=True, text=True, check=False)
            assert result.returncode == 0, f"{' '.join(command)}\n{result.stderr}"


@pytest.mark.parametrize("compiler", HOST_COMPILERS)
def test_own_vectors(compiler, tmp_path):
    vectors = own_vectors()
    assert crc16(b"123456789") == 0x29B1 and crc16(b"A") == 0xB915  # the Python framer itself
    path = tmp_path / "vectors.json"  # through JSON, as the real file goes
    path.write_text(json.dumps(vectors))
    _check_vectors(compiler, json.loads(path.read_text()), tmp_path)


@pytest.mark.parametrize("compiler", HOST_COMPILERS)
def test_protocol_vectors(compiler, tmp_path):
    assert VECTORS.is_file(), (f"{VECTORS.relative_to(REPO)} is missing: it is generated by "
                               "tools/make_rpc_vectors.py")
    vectors = json.loads(VECTORS.read_text())
    for key in ("crc16", "frames", "streams", "write_headers"):
        assert vectors.get(key), f"{VECTORS.name} has no {key!r} vectors"
    _check_vectors(compiler, vectors, tmp_path)


@pytest.mark.parametrize("max_packet", [512, 64])
@pytest.mark.parametrize("compiler", HOST_COMPILERS)
def test_scripted_session(compiler, max_packet, tmp_path):
    program = _build(compiler, [HERE / "server_test.c", *FAKE_BOARD, *RPC_SOURCES],
                     tmp_path / "server_test", [f"-DMB_RPC_MAX_PACKET={max_packet}u"])
    out = _run([program]).stdout.decode()
    assert out.startswith(f"server ok: max packet {max_packet},"), out


@pytest.mark.parametrize("compiler, seed", [("gcc", 1), ("clang", 2)])
def test_seeded_fuzz(compiler, seed, tmp_path):
    program = _build(compiler, [HERE / "fuzz_test.c", *FAKE_BOARD, *RPC_SOURCES], tmp_path / "fuzz_test")
    out = _run([program, seed, 4_000_000, 6_000_000], timeout=120).stdout.decode()
    assert out.rstrip().endswith("fuzz ok"), out
    decoder, server = ({key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", line)}
                       for line in out.splitlines()[:2])
    assert decoder["bytes"] >= 4_000_000 and server["bytes"] >= 6_000_000
    # The run reached the interesting paths, not only the framing's error handling.
    assert decoder["intact"] > 1000 and decoder["mutated"] > 1000 and decoder["delivered"] > 1000
    for name in ("ok", "bad_message", "unknown_opcode", "bad_address", "no_memory", "bad_function",
                 "too_large"):
        assert server[name] > 0, out
    assert server["writes_ok"] > 1000 and server["reads_ok"] > 500, out
    assert server["read_bytes_checked"] > 10_000, out


def test_libfuzzer(tmp_path):
    _require("clang")
    probe = tmp_path / "probe.c"
    probe.write_text("int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)"
                     "{ (void)d; (void)n; return 0; }\n")
    result = subprocess.run(["clang", "-fsanitize=fuzzer", str(probe), "-o", str(tmp_path / "probe")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"clang cannot build libFuzzer targets here:\n{result.stderr}"

    program = tmp_path / "fuzz_libfuzzer"
    command = ["clang", *WARNINGS, "-fsanitize=fuzzer,address,undefined", *SANITIZE[1:], f"-I{HERE}",
               f"-I{INCLUDE}", str(HERE / "fuzz_libfuzzer.c"), *map(str, FAKE_BOARD), *map(str, RPC_SOURCES), "-o",
               str(program)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    done = _run([program, "-runs=200000", "-seed=1", "-max_len=2048", "-print_final_stats=1", corpus],
                timeout=120)
    log = done.stderr.decode(errors="replace")
    assert "Done 200000 runs" in log, log[-2000:]


class _Device:
    """The host firmware as a child process, talked to over its stdin and stdout."""

    def __init__(self, program: Path):
        self.process = subprocess.Popen([str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=dict(os.environ, **SANITIZER_ENV))
        self.received = b""
        self.taken = 0

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def packets(self, count: int, timeout: float = 10) -> list[bytes]:
        """The next `count` packets the device sends (FF FE no-ops skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                packets = unframe_all(self.received)
            except IndexError:  # a packet still arriving
                packets = []
            if len(packets) >= self.taken + count:
                self.taken += count
                return packets[self.taken - count:self.taken]
            left = deadline - time.monotonic()
            assert left > 0, f"no reply from the device; it sent {self.received.hex()}"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, f"the device exited ({self.process.wait()}): {self.process.stderr.read()!r}"
                self.received += chunk

    def close_input(self) -> int:
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError("the device kept running after the end of its input")
        stderr = self.process.stderr.read().decode(errors="replace")
        assert stderr == "", stderr
        self.process.stdout.close()
        self.process.stderr.close()
        return status


def test_host_firmware_serves_stdin_and_exits_at_eof(tmp_path):
    """runtime/rpc/main.c with the host board's drivers (posix_stdio console): the boot sequence, a
    session, requests over stdin/stdout, and a clean exit (status 0, no spinning) when stdin ends."""
    drivers = [RUNTIME / "drivers/console/posix_stdio.c", RUNTIME / "drivers/timer/clock_gettime.c",
               RUNTIME / "drivers/exit/process.c"]
    program = _build("gcc", [RUNTIME / "rpc" / "main.c", *RPC_SOURCES, *drivers, HERE / "fake_models.c"],
                     tmp_path / "rpc_host")
    log = b"\x04\x00\x00microbuild rpc: board test-board, build 0102030405060708, max packet 512"

    # Input already at its end: the boot sequence, then exit 0.
    done = _run([program], stdin=b"", timeout=10)
    assert done.stdout.startswith(b"\xff\xfe")
    assert unframe_all(done.stdout) == [b"\x03\x00\x00", log]

    device = _Device(program)
    assert device.packets(2) == [b"\x03\x00\x00", log]
    device.send(frame(b"\x05\x11\x22\x01\x01\x00"))  # no session yet
    assert device.packets(1) == [b"\x03\x00\x00"]
    device.send(frame(bytes([1, 0x00, 0x77, 2])))  # START_INIT, no packet size proposed
    (reply,) = device.packets(1)
    assert reply[0] == 2 and reply[2] == 0x77 and reply[1] != 0 and reply[3] == 2
    assert struct.unpack_from("<I", reply, 4)[0] == 512  # the largest, when none was proposed
    session = reply[1:3]

    device.send(frame(b"\x05" + session + b"\x01\x01\x00\x00\x00"))  # INFO from 0, seq 1
    (info,) = device.packets(1)
    assert info[:7] == b"\x05" + session + b"\x81\x01\x00\x00"
    items, first, version, max_packet, arena, hz = struct.unpack_from("<HHBIIQ", info, 7)
    assert (items, first) == (8, 0)  # the device record, 2 models, 5 functions
    assert (version, max_packet, arena, hz) == (2, 512, 4000, 1_000_000)

    stale = bytes([session[0] ^ 1, session[1]])
    device.send(frame(b"\x05" + stale + b"\x06\x02\x00\x01\x00"))  # dropped
    device.send(frame(b"\x05" + session + b"\x06\x03\x00\x01\x00"))  # CALL function 1, seq 3
    (call,) = device.packets(1)
    assert call == b"\x05" + session + b"\x86\x03\x00\x00" + bytes(4)
    assert device.close_input() == 0
