"""The RPC executor end to end on the host board: the real C server (runtime/rpc) as a process,
the real Python client, every request kind, and each way of failing as its own error."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.device.errors import (DeviceGarbageError, DeviceResetError, DeviceTimeoutError,
                                      ProtocolError, RpcError, TransportClosedError)
from microbuild.device.rpc.client import RpcClient
from microbuild.device.rpc.framing import encode_packet
from microbuild.device.rpc.protocol import (PROTOCOL_VERSION, Opcode, SessionType, Status,
                                            TimedEntry, request_body, session_payload)
from microbuild.device.transports.process import ProcessStdioTransport
from microbuild.tensor_files import TensorFileError, random_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

# The same list the host_rpc fixture builds (tests/rpc/conftest.py); not imported from there,
# since `conftest` is an ambiguous module name in a suite with several.
MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.tflite"))


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_every_model_is_bit_exact_with_tflm(device, model):
    specs = device.specs(model)
    for seed in (1, 2):
        x = random_inputs(specs, seed)
        got = device.run(model, x)
        want = run_tflm(model, x)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_profile_accounts_for_the_whole_model(device):
    x = random_inputs(device.specs("ds_cnn"), 3)
    profile = device.profile("ds_cnn", x, repeat=9, warmup=1)
    assert [o.opcode for o in profile.ops][:2] == ["CONV_2D", "DEPTHWISE_CONV_2D"]
    assert len(profile.ops) == 12 and all(o.ticks > 0 for o in profile.ops)
    # The host's ticks are wall-clock nanoseconds: no assertion on how they add up (that is
    # checked exactly on the emulated boards under -icount, tests/rpc/test_run_command.py).
    assert profile.model_ticks > 0 and profile.rounds == 9
    # One repeat and no warm-up: the operator-by-operator outputs are checked against RUN's.
    single = device.profile("ds_cnn", x)
    np.testing.assert_array_equal(single.outputs[0], run_tflm(MODELS[1], x)[0])


def test_info_describes_the_firmware(device, host_rpc):
    info = device.info
    assert info.board == "host" and info.version == PROTOCOL_VERSION and info.max_packet == 512
    assert info.timer_hz == 1_000_000_000
    assert info.build_id.hex() == host_rpc.rpc_description["build_id"]
    assert [m.name for m in info.models] == [m["prefix"] for m in host_rpc.models]
    ds = info.model("ds_cnn")
    names = [f.name for f in info.functions_of(ds.index)]
    assert names[0] == "ds_cnn.0.CONV_2D" and names[-1] == "ds_cnn.11.SOFTMAX"
    assert info.model_function(ds.index).name == "ds_cnn"
    conv = info.functions_of(ds.index)[0]
    assert (conv.inputs, conv.outputs) == (3, 1)
    # Workspaces are laid out one after another, the ALLOC pool after them.
    layout = host_rpc.rpc_description["arena"]
    assert info.arena_bytes == layout["arena_bytes"] == layout["pool_offset"] + 64 * 1024


def test_write_read_alloc_free(device):
    c = device.client
    a = c.alloc(40_000, 64)
    assert a % 64 == 0
    data = np.random.default_rng(0).integers(0, 256, 40_000, dtype=np.uint8).tobytes()
    c.write(a, data)
    assert c.read(a, 40_000) == data
    b = c.alloc(1000)
    c.free(a)
    again = c.alloc(30_000)
    assert again <= a < b  # first fit reuses the freed block (and its alignment padding)
    c.free(b)
    c.free(again)


def test_errors_come_back_as_codes_with_a_message(device):
    c = device.client
    arena = device.info.arena_bytes
    with pytest.raises(RpcError) as e:
        c.read(arena - 4, 8)
    assert e.value.status == Status.BAD_ADDRESS and "arena" in e.value.device_message
    with pytest.raises(RpcError) as e:
        c.write(arena, b"x")
    assert e.value.status == Status.BAD_ADDRESS
    with pytest.raises(RpcError) as e:
        c.alloc(10 * 1024 * 1024)
    assert e.value.status == Status.NO_MEMORY
    with pytest.raises(RpcError) as e:
        c.free(12345)
    assert e.value.status == Status.BAD_ADDRESS
    with pytest.raises(RpcError) as e:
        c.call(len(device.info.functions))
    assert e.value.status == Status.BAD_FUNCTION
    with pytest.raises(RpcError) as e:
        c.run(200)
    assert e.value.status == Status.BAD_FUNCTION
    with pytest.raises(RpcError) as e:
        c.request(0x42)
    assert e.value.status == Status.UNKNOWN_OPCODE
    with pytest.raises(RpcError) as e:  # ALLOC without its arguments
        c.request(Opcode.ALLOC, b"\x01")
    assert e.value.status == Status.BAD_MESSAGE
    with pytest.raises(RpcError) as e:  # a reply that cannot fit the device's packets
        c.request(Opcode.TIMED_CALL, struct.pack("<BHHH", 1, 0, 0, 1000))
    assert e.value.status == Status.TOO_LARGE
    # The session survives every error.
    assert device.run("tiny_fc", random_inputs(device.specs("tiny_fc"), 0))


def test_timed_call_batches_across_packets(device):
    ds = device.info.model("ds_cnn")
    ops = device.info.functions_of(ds.index)
    entries = [TimedEntry(f.index, warmup=1, repeat=20) for f in ops]
    before = device.client.stats.requests
    device.client.timed_call(entries)
    # 12 entries x (4 + 20 x 8) bytes do not fit one 512-byte reply: several requests, in order.
    assert 1 < device.client.stats.requests - before < len(entries)
    assert all(e.status == 0 and len(e.ticks) == 20 and min(e.ticks) > 0 for e in entries)


def test_a_repeated_request_is_answered_from_the_cache_not_run_again(device):
    c = device.client
    pool_free = device.info.arena_bytes - device.description["arena"]["pool_offset"]
    seq = c._next_seq()
    frame = encode_packet(session_payload(SessionType.NORMAL, c.session_id, request_body(
        Opcode.ALLOC, seq, struct.pack("<II", 1024, 16))))
    c.transport.write(frame + frame)  # as if the first reply had been lost
    replies = []
    while len(replies) < 2:
        packet = c._next_packet(__import__("time").monotonic() + 2)
        assert packet is not None
        replies.append(packet[2])
    assert replies[0] == replies[1]
    offset = struct.unpack_from("<I", replies[0], 4)[0]
    # Had the ALLOC run twice, 2 KiB would be gone and this would not fit.
    rest = c.alloc(pool_free - 1024 - 64)
    c.free(rest)
    c.free(offset)


def test_stale_session_traffic_is_dropped(device):
    c = device.client
    stale = (c.session_id + 1) & 0xFFFF or 1
    c.transport.write(encode_packet(session_payload(SessionType.NORMAL, stale, request_body(
        Opcode.INFO, c._next_seq(), b"\0\0"))))
    assert c._next_packet(__import__("time").monotonic() + 0.3) is None
    assert device.client.alloc(16) >= 0  # the live session still works


def test_reset_ends_the_session_and_a_new_one_starts(device):
    c = device.client
    kept = c.alloc(256)
    c.reset()
    with pytest.raises(DeviceResetError):
        c.alloc(16)
    c.open_session()
    assert c.alloc(256) == kept  # the allocator started over
    assert any("microbuild rpc: board host" in line for line in c.stats.logs)


def test_a_device_that_restarts_is_reported_as_a_reset(device):
    device.client.transport.restart()  # the process is killed and started again
    with pytest.raises(DeviceResetError, match="reset during"):
        device.client.alloc(16)


def test_a_device_that_dies_is_reported_with_its_exit_status(device):
    device.client.transport.child.proc.kill()
    with pytest.raises(TransportClosedError, match="exited with status -9"):
        device.client.alloc(16)


def test_silence_is_a_timeout_not_a_hang():
    transport = ProcessStdioTransport(["sleep", "30"], what="a silent program")
    with transport:
        client = RpcClient(transport, timeout=0.2, retries=1)
        with pytest.raises(DeviceTimeoutError, match="sent nothing within 0.5 s"):
            client.wait_for_boot(0.5)
        with pytest.raises(DeviceTimeoutError, match="stopped answering.*2 attempts"):
            client.open_session()


def test_garbage_is_reported_as_garbage(tmp_path):
    # A standalone (AOT) firmware prints text lines, not packets.
    aot = api.build_firmware("host", [MODELS[-1]], tmp_path)
    transport = ProcessStdioTransport([str(aot.elf)])
    with transport:
        client = RpcClient(transport, timeout=0.2, retries=0)
        with pytest.raises((DeviceGarbageError, TransportClosedError)) as e:
            client.wait_for_boot(2.0)
        if isinstance(e.value, DeviceGarbageError):
            assert "--executor rpc" in str(e.value)
    # Garbage that keeps coming (a wrong baud rate) with the process alive:
    noisy = ProcessStdioTransport([sys.executable, "-c",
                                   "import sys,time\nwhile True:\n sys.stdout.buffer.write("
                                   "bytes(range(200)));sys.stdout.flush();time.sleep(0.01)"])
    with noisy:
        client = RpcClient(noisy, timeout=0.2, retries=0)
        with pytest.raises(DeviceGarbageError, match="no valid packet"):
            client.wait_for_boot(0.5)


def test_a_different_build_is_refused(host_rpc, tmp_path):
    other = api.build_firmware("host", [MODELS[-1]], tmp_path, executor="rpc")
    import shutil
    shutil.copyfile(other.elf, tmp_path / "impostor")
    (tmp_path / "impostor").chmod(0o755)
    shutil.copyfile(host_rpc.rpc_file, tmp_path / "impostor.rpc.json")
    with pytest.raises(ProtocolError, match="runs firmware build .* not the build"):
        api.connect("host", tmp_path / "impostor")


def test_inputs_are_checked_before_anything_is_sent(device):
    with pytest.raises(TensorFileError, match="dtype is float32"):
        device.run("ds_cnn", np.zeros((1, 49, 10, 1), np.float32))
    with pytest.raises(TensorFileError, match="shape is"):
        device.run("ds_cnn", np.zeros((1, 10), np.int8))


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_operator_by_operator_equals_the_whole_model(device, model):
    # profile() checks the op-by-op outputs against RUN's (fused residual blocks in resnet8
    # write in place: the slots must be exactly the plan's).
    x = random_inputs(device.specs(model), 5)
    profile = device.profile(model, x)
    np.testing.assert_array_equal(profile.outputs[0], run_tflm(model, x)[0])
    assert len(profile.ops) == len(device.info.functions_of(device.info.model(
        model.stem).index))
