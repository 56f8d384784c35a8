"""The table executor on mps2-an500 in QEMU (issue 31): one firmware, built once for this module
with `microbuild build --executor table --kernels-for ds_cnn tiny_fc`, reads its model from the
board's two model slots (memory.placement.model_slots in board_defs/mps2-an500.yaml), where
QEMU's loader device writes the blobs. It runs the newest valid blob, bit-exact with TFLM, and
falls back to the other slot, saying why, when the newest is half-written, corrupted (CRC-32, or
SHA-256 when the CRC was recomputed) or packed for another firmware."""

from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from microbuild import api, cli
from microbuild.blob import KernelSet, pack_model
from microbuild.blob.format import CRC_OFFSET
from microbuild.boards import resolve_board
from microbuild.device.runners.qemu import QemuRunner
from microbuild.firmware.note import read_note
from microbuild.firmware.table import compile_for_table
from microbuild.firmware.toolchains import toolchain_setup

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import random_inputs, run_tflm_many  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
BOARD = "mps2-an500"


@pytest.fixture(scope="module")
def firmware(tmp_path_factory):
    """(the ELF, what `microbuild build` printed)."""
    out = tmp_path_factory.mktemp("table-an500")
    result = subprocess.run(
        [sys.executable, "-m", "microbuild", "build", "--board", BOARD, "--executor", "table",
         "--kernels-for", str(MODELS / "ds_cnn.tflite"), str(MODELS / "tiny_fc.tflite"),
         "-o", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out / "mb_table_firmware.elf", result.stdout


@pytest.fixture(scope="module")
def blobs(firmware, tmp_path_factory):
    """name -> packed blob bytes, sequence 1 (ds_cnn) and 2 (tiny_fc)."""
    elf, _ = firmware
    out = tmp_path_factory.mktemp("blobs")
    return {name: api.pack(elf, MODELS / f"{name}.tflite", out / f"{name}.mbm", sequence=seq).blob
            for seq, name in enumerate(["ds_cnn", "tiny_fc"], start=1)}


def _boot(elf: Path, slots: dict[int, bytes], tmp: Path) -> subprocess.CompletedProcess:
    """Boot the firmware with ``slots`` (slot index -> bytes) written by QEMU's loader."""
    board = resolve_board(BOARD)
    command = QemuRunner(board).command(elf)
    for k, data in slots.items():
        path = tmp / f"slot{k}.bin"
        path.write_bytes(data)
        command += ["-device", f"loader,file={path},addr=0x{board.model_slots[k].address:08x},"
                               "force-raw=on"]
    # subprocess.run kills QEMU if it outlives the timeout.
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def _pattern_inputs(name: str) -> list[np.ndarray]:
    """The inputs slots_main.c fills: byte i of input k is i * 37 + k + 5."""
    shaped = random_inputs(MODELS / f"{name}.tflite", 1, seed=0)[0]
    return [np.frombuffer(bytes((i * 37 + k + 5) & 0xFF for i in range(x.nbytes)),
                          dtype=x.dtype).reshape(x.shape) for k, x in enumerate(shaped)]


def _assert_runs_bit_exact(result: subprocess.CompletedProcess, name: str) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    got = dict(re.findall(r"^mb-table output (\d+) ([0-9a-f]*)$", result.stdout, re.M))
    want = run_tflm_many(MODELS / f"{name}.tflite", [_pattern_inputs(name)])[0]
    assert len(got) == len(want), result.stdout
    for k, w in enumerate(want):
        assert got[str(k)] == np.ascontiguousarray(w).tobytes().hex(), (
            f"{name} output {k}: the table executor on {BOARD} differs from TFLM")


def test_build_records_the_table_executor_and_prints_the_kernel_set(firmware):
    elf, printed = firmware
    note = read_note(elf)
    assert (note.board, note.executor) == (BOARD, "table")
    assert f"kernel set {note.table['id']}" in printed and "table/slots_main.c" in printed
    assert "microbuild update --board mps2-an500" in printed
    # The board has two slots, where update refuses to guess: the printed command names one.
    assert "--blob M.mbm --slot 0`" in printed


def _with_crc_recomputed(blob: bytearray) -> bytes:
    """A changed blob whose CRC-32 was recomputed, as a tool knowing only the CRC would."""
    blob = bytearray(blob)
    blob[CRC_OFFSET:CRC_OFFSET + 4] = bytes(4)
    blob[CRC_OFFSET:CRC_OFFSET + 4] = zlib.crc32(blob).to_bytes(4, "little")
    return bytes(blob)


def test_the_newest_slot_runs_bit_exact_with_tflm(firmware, blobs, tmp_path):
    elf, _ = firmware
    # tiny_fc (sequence 2) in slot 0 is newer than ds_cnn (sequence 1) in slot 1.
    result = _boot(elf, {0: blobs["tiny_fc"], 1: blobs["ds_cnn"]}, tmp_path)
    assert "mb-table running slot 0 (seq 2)" in result.stdout
    _assert_runs_bit_exact(result, "tiny_fc")
    # ds_cnn alone in slot 1; slot 0 holds zeros (QEMU's RAM at reset).
    result = _boot(elf, {1: blobs["ds_cnn"]}, tmp_path)
    assert "mb-table slot 0 at 0x60000000: not a model blob" in result.stdout
    assert "mb-table running slot 1 (seq 1)" in result.stdout
    _assert_runs_bit_exact(result, "ds_cnn")


def test_a_bad_newest_slot_falls_back_to_the_other_saying_why(firmware, blobs, tmp_path):
    elf, _ = firmware
    newest, older = blobs["tiny_fc"], blobs["ds_cnn"]
    corrupted = bytearray(newest)
    corrupted[len(newest) // 2] ^= 0x01
    board = resolve_board(BOARD)
    tiny = compile_for_table(board, MODELS / "tiny_fc.tflite")
    setup = toolchain_setup(board)
    # Packed for a firmware with another kernel set (tiny_fc's kernels alone), sequence 9.
    foreign = pack_model(tiny, KernelSet.for_models([tiny]), BOARD,
                         cc=[setup.cc, *setup.cflags], sequence=9)
    # A half-written update (the first half of the blob, the rest of the slot still blank):
    # the header's size is inside the slot, so the CRC over those bytes is what fails.
    for bad, reason in [(newest[:len(newest) // 2], "CRC-32 mismatch"),
                        (bytes(corrupted), "CRC-32 mismatch"),
                        (_with_crc_recomputed(corrupted), "SHA-256 mismatch"),
                        (foreign, "packed for another kernel set")]:
        result = _boot(elf, {0: bad, 1: older}, tmp_path)
        assert f"mb-table slot 0 at 0x60000000: {reason}\n" in result.stdout, result.stdout
        assert "mb-table running slot 1 (seq 1)" in result.stdout
        _assert_runs_bit_exact(result, "ds_cnn")


def test_with_no_valid_slot_nothing_runs_and_the_firmware_says_so(firmware, blobs, tmp_path):
    elf, _ = firmware
    result = _boot(elf, {0: blobs["tiny_fc"][:100], 1: b"TFL3" + blobs["ds_cnn"][4:]}, tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "mb-table slot 0 at 0x60000000: CRC-32 mismatch\n" in result.stdout
    assert "mb-table slot 1 at 0x60100000: not a model blob\n" in result.stdout
    assert "mb-table no valid model in any slot" in result.stdout
    assert "mb-table output" not in result.stdout


def test_update_packs_a_model_and_boots_the_emulated_board_with_it(firmware, capsys):
    elf, _ = firmware
    status = cli.main(["update", "--board", BOARD, "--firmware", str(elf), "--model",
                       str(MODELS / "tiny_fc.tflite"), "--slot", "1"])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "model slot 1 at 0x60100000" in printed and "mb-table running slot 1" in printed
    _assert_runs_bit_exact(subprocess.CompletedProcess([], 0, printed, ""), "tiny_fc")
    # Two slots and no --slot: the user is asked which (the one not running now).
    assert cli.main(["update", "--board", BOARD, "--firmware", str(elf), "--model",
                     str(MODELS / "tiny_fc.tflite")]) == 1
    assert "say which one to write (--slot 0 or --slot 1)" in capsys.readouterr().err
