"""`microbuild run --blob`: a model blob uploaded over RPC into an RPC firmware's RAM slot and run
at once, without flashing (docs/rpc-protocol.md BLOB_LOAD / BLOB_RUN, docs/model-blob.md).

Two firmwares, each built once: the host board's with tiny_fc's kernels and a 4 KiB slot (so a
larger model is too large for it), and mps2-an500's with DS-CNN's (QEMU). On each the blob's
outputs are the same bytes as the AOT code of the same model in the same firmware and as TFLM's;
the device's own validator refuses a corrupted or foreign blob that the host did not check, and
the host says what was wrong before uploading anything."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from microbuild import api, cli
from microbuild.blob.format import CRC_OFFSET, SHA_OFFSET
from microbuild.device.blob_run import run_blob
from microbuild.device.errors import RpcError
from microbuild.device.rpc.protocol import Status
from microbuild.firmware.note import add_note, read_note

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import random_inputs, run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
TINY_FC = MODELS / "tiny_fc.tflite"
TORCH_MLP = MODELS / "torch_mlp.tflite"
DS_CNN = MODELS / "ds_cnn.tflite"
ANOMALY_AE = MODELS / "anomaly_ae.tflite"  # fully connected only, 285 KB of weights
SIMPLE_ADD = MODELS / "ops" / "add_same.tflite"  # ADD: not in tiny_fc's kernel set


def _build(board: str, kernels_for: Path, out: Path, *extra: str) -> Path:
    assert cli.main(["build", "--board", board, "--executor", "rpc", "--kernels-for",
                     str(kernels_for), *extra, "--json", "-o", str(out)]) == 0
    return out / ("firmware" if board == "host" else "firmware.elf")


@pytest.fixture(scope="module")
def host_fw(tmp_path_factory):
    return _build("host", TINY_FC, tmp_path_factory.mktemp("blob-host"), "--blob-slot", "4K")


@pytest.fixture(scope="module")
def an500_fw(tmp_path_factory):
    return _build("mps2-an500", DS_CNN, tmp_path_factory.mktemp("blob-an500"))


def _sealed(blob: bytearray) -> bytes:
    """``blob`` with its SHA-256 and CRC-32 recomputed, as a blob damaged on purpose would be."""
    blob[CRC_OFFSET:SHA_OFFSET + 32] = bytes(36)
    blob[SHA_OFFSET:SHA_OFFSET + 32] = hashlib.sha256(blob).digest()
    blob[CRC_OFFSET:CRC_OFFSET + 4] = zlib.crc32(blob).to_bytes(4, "little")
    return bytes(blob)


def _device_refuses(dev, data: bytes) -> str:
    """Upload ``data`` past the host's checks and return the device's BLOB_LOAD refusal."""
    client = dev.client
    at = client.alloc(len(data), 16)
    workspace = client.alloc(512, 16)
    try:
        client.write(at, data)
        with pytest.raises(RpcError) as refused:
            client.blob_load(at, len(data), workspace, 512)
        assert refused.value.status == Status.BAD_BLOB
        return refused.value.device_message
    finally:
        client.free(workspace)
        client.free(at)


def _blob_and_aot(dev, firmware: Path, model: Path, tmp_path: Path, seed: int):
    """(the blob's outputs, its ticks, the AOT code's outputs, its ticks, the inputs) for one
    seeded input, both run on ``dev``."""
    blob = api.pack(firmware, model, tmp_path / f"{model.stem}.mbm").blob
    x = random_inputs(model, 1, seed)[0]
    kernel_set = int(read_note(firmware).table["id"], 16)
    ran = run_blob(dev, blob, [a.tobytes() for a in x], kernel_set)
    aot, aot_ticks = dev.run_timed(model.stem, x)
    return ran.outputs, ran.ticks, [a.tobytes() for a in aot], aot_ticks, x


def test_host_blob_is_bit_exact_and_the_device_checks_what_it_runs(host_fw, tmp_path):
    with api.connect("host", host_fw, timeout=5.0) as dev:
        outputs, _, aot, _, _ = _blob_and_aot(dev, host_fw, TINY_FC, tmp_path, seed=3)
        assert outputs == aot
        # A model packed afterwards, whose AOT code is not in the firmware: TFLM's outputs.
        blob = api.pack(host_fw, TORCH_MLP, tmp_path / "mlp.mbm").blob
        for seed in (1, 2):
            x = random_inputs(TORCH_MLP, 1, seed)[0]
            ran = run_blob(dev, blob, [a.tobytes() for a in x])
            assert ran.outputs == [y.tobytes() for y in run_tflm(TORCH_MLP, x)]

        # run_blob freed the slot, which unloads the blob: BLOB_RUN has nothing to run.
        with pytest.raises(RpcError, match="no model blob loaded") as none:
            dev.client.blob_run()
        assert none.value.status == Status.BAD_BLOB
        # The device's validator, for blobs the host did not check.
        corrupted = bytearray(blob)
        corrupted[len(blob) - 20] ^= 0x40
        assert _device_refuses(dev, bytes(corrupted)) == "model blob refused: CRC-32 mismatch"
        foreign = bytearray(blob)
        foreign[12:16] = (int.from_bytes(blob[12:16], "little") ^ 1).to_bytes(4, "little")
        assert "kernel set" in _device_refuses(dev, _sealed(foreign))
        changed = bytearray(blob)
        changed[len(blob) - 20] ^= 0x40
        changed[CRC_OFFSET:CRC_OFFSET + 4] = zlib.crc32(
            bytes(changed[:CRC_OFFSET]) + bytes(4) + bytes(changed[CRC_OFFSET + 4:])
        ).to_bytes(4, "little")
        assert _device_refuses(dev, bytes(changed)) == "model blob refused: SHA-256 mismatch"

        # A WRITE into a loaded blob unloads it: BLOB_RUN never runs bytes nobody checked.
        client = dev.client
        at, workspace = client.alloc(len(blob), 16), client.alloc(64, 16)
        client.write(at, blob)
        client.blob_load(at, len(blob), workspace, 64)
        assert client.blob_run()[0] == 0
        client.write(at + 200, blob[200:201])
        with pytest.raises(RpcError, match="no model blob loaded"):
            client.blob_run()


def test_run_blob_says_what_is_wrong(host_fw, tmp_path, capsys):
    def run(blob: Path, firmware: Path = host_fw) -> str:
        status = cli.main(["run", "--board", "host", "--firmware", str(firmware), "--blob",
                           str(blob)])
        captured = capsys.readouterr()
        assert status != 0 and "Traceback" not in captured.err
        return " ".join(captured.err.split())

    # Packed now for the firmware; 285,888 bytes of blob and 768 of workspace in a 4 KiB slot.
    assert ("anomaly_ae.tflite is too large for the firmware's RAM slot by 282,560 bytes: it "
            "needs 286,656 (285,888 of blob and 768 of workspace), the slot holds 4,096; build "
            "the firmware with --blob-slot 286656 or more") in run(ANOMALY_AE)
    assert "kernel mb_add_s8_fast (6 arguments) is not in the firmware's kernel set" in \
        run(SIMPLE_ADD)
    good = api.pack(host_fw, TINY_FC, tmp_path / "tiny.mbm").blob
    (tmp_path / "cut.mbm").write_bytes(good[:-40])
    assert f"truncated: {len(good) - 40} of its {len(good)} bytes" in run(tmp_path / "cut.mbm")
    # An RPC firmware without the table runner: said from its note, before starting it.
    plain = tmp_path / "plain" / "firmware"
    shutil.copytree(host_fw.parent, plain.parent)
    add_note(plain, "host", [], "rpc", "gcc", "objcopy")
    assert "an rpc firmware without a table runner; build one with `microbuild build --board " \
        "host --executor rpc --kernels-for MODEL.tflite ...`" in run(tmp_path / "tiny.mbm", plain)

    # And one that works, through the command line: the blob's bytes as the outputs.
    assert cli.main(["run", "--board", "host", "--firmware", str(host_fw), "--blob",
                     str(tmp_path / "tiny.mbm"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    x = np.random.default_rng(0).integers(0, 256, 16, dtype=np.uint8)
    want = run_tflm(TINY_FC, [x.view(np.int8).reshape(1, 16)])[0]
    assert document["outputs"] == [want.tobytes().hex()]


def test_an500_blob_is_bit_exact_with_aot_and_tflm(an500_fw, tmp_path):
    with api.connect("mps2-an500", an500_fw, timeout=20.0) as dev:
        outputs, ticks, aot, aot_ticks, x = _blob_and_aot(dev, an500_fw, DS_CNN, tmp_path,
                                                          seed=5)
    assert outputs == aot == [y.tobytes() for y in run_tflm(DS_CNN, x)]
    # -icount shift=0: instruction counts, exact. The table runner's dispatch costs DS-CNN
    # well under the 3 % issue 31 allows over the AOT code.
    assert aot_ticks < ticks < aot_ticks * 1.03, (ticks, aot_ticks)
