"""The table executor on the host, through the commands a user runs: `microbuild build
--executor table --kernels-for ds_cnn tiny_fc ...` prints the kernel set with its code size and
records it in the ELF's note; `microbuild pack` packs models against that firmware, including a
third one afterwards (no rebuild), and refuses at pack time what it could not run; the blobs run
bit-exact with TFLM, including the kinds of op code beyond one call with constant arguments
(a fused CONV_2D+ADD's residual struct, a concatenation's input list, state kept across
invocations, numbers passed by value, a resource variable's memcpy); the C validator refuses
damaged and foreign blobs.

The firmware is built once, for a board extending host with AddressSanitizer and
UndefinedBehaviorSanitizer, so a validator or runner that reads outside the blob fails a test."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from microbuild import api, cli
from microbuild.blob import KernelSet, pack_model, read_blob, write_blob
from microbuild.blob.format import (
    ARG_F32, ARG_INT, ARG_PARAMS, ARG_WORKSPACE, CRC_OFFSET, SHA_OFFSET, BlobArg, BlobError,
    BlobOp)
from microbuild.blob.kernel_set import kernel_id
from microbuild.blob.pack import blob_workspace_bytes
from microbuild.boards.loader import ENV_PATH
from microbuild.compiler import compile_model
from microbuild.firmware.note import read_note

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import SANITIZER_ENV, random_inputs, run_tflm_many  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
BOARD = """name: host-asan
extends: host
title: Host process with AddressSanitizer and UndefinedBehaviorSanitizer
toolchain:
  cflags: [-O1, -g, "-fsanitize=address,undefined", -fno-sanitize-recover=all]
"""
# runtime/include/microbuild/table.h's mb_table_status; the runner exits with 10 + it.
TRUNCATED, BAD_MAGIC, BAD_CRC, FOREIGN_KERNELS, WORKSPACE, BAD_LAYOUT, UNKNOWN_KERNEL = (
    1, 2, 5, 6, 8, 9, 10)
BAD_SHA256 = 11


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("boards")
    (folder / "host-asan.yaml").write_text(BOARD)
    return folder


@pytest.fixture(autouse=True)
def _board_path(boards, monkeypatch):
    monkeypatch.setenv(ENV_PATH, str(boards))


# Beyond ds_cnn and tiny_fc (one kernel call per op, constant arguments), each of these brings
# a kind of op code the table must carry: a CONV_2D+ADD with its residual struct (resnet8),
# a concatenation's local input list, SVDF state and sizes by value, a resource variable's
# memcpy to and from the state with a starting value, a float softmax's beta by value, a
# FULLY_CONNECTED summing a row-streamed conv's output band by band (row_stream_fc.py).
KINDS = {"resnet8": MODELS / "resnet8.tflite",
         "row_stream_conv_fc_tall_pc": MODELS / "ops" / "row_stream_conv_fc_tall_pc.tflite",
         "concat_inputs3_h": MODELS / "ops" / "concat_inputs3_h.tflite",
         "svdf_s16_rank1_bias": MODELS / "ops" / "svdf_s16_rank1_bias.tflite",
         "var_smoother": MODELS / "ops" / "var_smoother.tflite",
         "softmax_beta": MODELS / "float" / "softmax_beta.tflite"}


@pytest.fixture(scope="module")
def firmware(tmp_path_factory, boards):
    """(the ELF, what `microbuild build` printed) for the kernels of ds_cnn, tiny_fc and KINDS."""
    out = tmp_path_factory.mktemp("table")
    result = subprocess.run(
        [sys.executable, "-m", "microbuild", "build", "--board", "host-asan", "--executor",
         "table", "--kernels-for", str(MODELS / "ds_cnn.tflite"), str(MODELS / "tiny_fc.tflite"),
         *map(str, KINDS.values()), "-o", str(out)],
        capture_output=True, text=True, env={**os.environ, ENV_PATH: str(boards)})
    assert result.returncode == 0, result.stderr
    return out / "mb_table_runner", result.stdout


def _compile(path: Path):
    # Row streaming at its default, as the table firmware compiles (microbuild/firmware/table.py).
    return compile_model(path, prefix=path.stem)


def _run(program: Path, blob: bytes, tmp: Path, stdin: bytes = b"") -> subprocess.CompletedProcess:
    path = tmp / "model.mbm"
    path.write_bytes(blob)
    env = {**os.environ, **SANITIZER_ENV}
    return subprocess.run([str(program), str(path)], input=stdin, capture_output=True, env=env,
                          timeout=120)


def _assert_bit_exact(program, model_path: Path, blob: bytes, tmp: Path) -> None:
    input_sets = random_inputs(model_path, 4, seed=3)
    stdin = b"".join(np.ascontiguousarray(x).tobytes() for inputs in input_sets for x in inputs)
    result = _run(program, blob, tmp, stdin)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    want = b"".join(np.asarray(o).tobytes() for outs in run_tflm_many(model_path, input_sets)
                    for o in outs)
    assert result.stdout == want, f"{model_path.name}: the table runner differs from TFLM"


def test_build_prints_the_kernel_set_and_records_it_in_the_note(firmware):
    elf, printed = firmware
    note = read_note(elf)
    assert (note.board, note.executor) == ("host-asan", "table")
    functions = set(note.table["functions"])
    assert {"mb_conv2d_s8_gemm", "mb_depthwise_conv2d_s8_portable", "mb_avgpool2d_s8_swar",
            "mb_fully_connected_s8_rows4", "mb_softmax_s8_fast", "mb_concatenation_s8", "memcpy",
            "mb_softmax_f32"} <= functions
    # The largest workspace of the models, state included (at its end, 16-aligned).
    assert note.table["workspace_bytes"] == max(
        blob_workspace_bytes(_compile(p)) for p in [MODELS / "ds_cnn.tflite", *KINDS.values()])
    assert f"kernel set {note.table['id']}: {len(functions)} kernel functions" in printed
    assert "kernels/conv2d_gemm.c" in printed and "total" in printed


@pytest.mark.parametrize("name", ["ds_cnn", "tiny_fc", *KINDS])
def test_blob_runs_bit_exact_with_tflm(firmware, name, tmp_path):
    """Four input sets through one runner process and one TFLM interpreter: a model's state
    carries over from one set to the next in both."""
    elf, _ = firmware
    path = KINDS.get(name, MODELS / f"{name}.tflite")
    packed = api.pack(elf, path, tmp_path / f"{name}.mbm")
    assert read_blob(packed.blob).workspace_bytes == packed.workspace_bytes
    _assert_bit_exact(elf, path, packed.blob, tmp_path)


def test_state_fused_ops_and_numbers_are_carried_as_data(firmware):
    """What makes KINDS run through the table: checked on the blobs themselves, so that a
    packer that dropped the state or inlined something else could not pass unnoticed."""
    kernels = _firmware_kernels(firmware[0])
    resnet = read_blob(pack_model(_compile(KINDS["resnet8"]), kernels, "host-asan"))
    # op 2 CONV_2D+ADD, row-streamed (its band calls are under op 0, the region's first): each
    # band's residual struct points at ADD's parameters and into the workspace at that band's
    # rows, so the bands have residual blocks of their own.
    def field_kinds(block: int) -> set[int]:
        fields = struct.unpack_from("<I", resnet.params, block + 4)[0]
        return {struct.unpack_from("<III", resnet.params, block + 8 + 12 * f)[1]
                for f in range(fields)}

    residuals = {a.value for op in resnet.ops for a in op.args
                 if a.kind == ARG_PARAMS and ARG_PARAMS in field_kinds(a.value)}
    assert len(residuals) > 10
    assert all(field_kinds(block) == {ARG_PARAMS, ARG_WORKSPACE} for block in residuals)
    svdf = _compile(KINDS["svdf_s16_rank1_bias"])
    blob = read_blob(pack_model(svdf, kernels, "host-asan"))
    assert blob.state_bytes == 96 and blob.workspace_bytes == blob_workspace_bytes(svdf)
    assert blob.weights[blob.state_image:blob.state_image + 96] == bytes(96)
    smoother = _compile(KINDS["var_smoother"])
    image = read_blob(pack_model(smoother, kernels, "host-asan"))
    start = smoother.state_tensors()[0]
    assert "initial" in start  # the variable's starting value is the reset image, not zeros
    assert image.weights[image.state_image:image.state_image + start["bytes"]].hex() == \
        start["initial"]
    concat = read_blob(pack_model(_compile(KINDS["concat_inputs3_h"]), kernels, "host-asan"))
    assert [a.kind for a in concat.ops[0].args[:2]] == [ARG_INT, ARG_INT]  # outer, input count
    assert concat.ops[0].args[1].value == 3
    softmax = read_blob(pack_model(_compile(KINDS["softmax_beta"]), kernels, "host-asan"))
    beta = [a.value for op in softmax.ops for a in op.args if a.kind == ARG_F32]
    assert len(beta) == 1 and beta[0] != 0x3F800000  # a beta other than 1.0, by value


def test_a_third_model_packed_afterwards_runs_without_rebuilding(firmware, tmp_path, capsys):
    path = SHARED / "micro_speech_quantized.tflite"
    if not path.exists():
        pytest.skip(f"{path} is not here: ../shared/models exists in the team's checkout only")
    elf, _ = firmware
    status = cli.main(["pack", "--firmware", str(elf), "--model", str(path), "-o",
                       str(tmp_path / "speech.mbm")])
    assert status == 0 and "wrote" in capsys.readouterr().out
    _assert_bit_exact(elf, path, (tmp_path / "speech.mbm").read_bytes(), tmp_path)


def test_a_model_needing_a_missing_kernel_or_more_workspace_is_refused_at_pack_time(
        firmware, tmp_path, capsys):
    elf, _ = firmware
    status = cli.main(["pack", "--firmware", str(elf), "--model",
                       str(MODELS / "ops" / "maxpool_2x2_valid_s2.tflite"), "-o",
                       str(tmp_path / "pool.mbm")])
    message = capsys.readouterr().err
    assert status != 0 and not (tmp_path / "pool.mbm").exists()
    assert "cannot run on this firmware" in message
    assert "kernel mb_maxpool" in message and "is not in the firmware's kernel set" in message
    kernels = _firmware_kernels(elf)
    with pytest.raises(BlobError, match=r"needs 10304 bytes of workspace, the firmware reserved "
                                        r"4096 \(6208 over\)"):
        pack_model(_compile(MODELS / "ds_cnn.tflite"), kernels, "host-asan", workspace_limit=4096)


def test_a_row_streamed_region_is_carried_as_its_band_calls(firmware):
    """resnet8's first two blocks run row by row by default (test_blob_runs_bit_exact_with_tflm runs its
    blob): the blob holds the region's schedule as calls of the AOT code's band kernels and row
    moves, all under the region's first op, and needs the AOT code's workspace, less than the
    same model with every op whole."""
    streamed = _compile(KINDS["resnet8"])
    region = [op["index"] for op, code in zip(streamed.ops, streamed.op_code)
              if "_streamed_ops_" in code]
    assert len(region) == 1
    kernels = _firmware_kernels(firmware[0])
    blob = read_blob(pack_model(streamed, kernels, "host-asan"))
    band_calls = [op for op in blob.ops if op.model_op == region[0]]
    ids = {op.kernel_id for op in band_calls}
    assert len(band_calls) > 10 and len(ids) >= 2  # many bands, more than one op's kernel
    assert kernel_id("memmove") in ids  # the rows a later band still needs are moved
    whole = compile_model(KINDS["resnet8"], prefix="resnet8", row_stream=False)
    assert blob.workspace_bytes == blob_workspace_bytes(streamed) < blob_workspace_bytes(whole)


def _firmware_kernels(elf: Path) -> KernelSet:
    table = read_note(elf).table
    return KernelSet(dict(table["functions"]), list(table["headers"]), list(table["sources"]),
                     MODELS.parents[1] / "runtime")


def test_the_c_validator_refuses_bad_blobs(firmware, tmp_path):
    program, _ = firmware
    tiny = _compile(MODELS / "tiny_fc.tflite")
    kernels = _firmware_kernels(program)
    good = pack_model(tiny, kernels, "host-asan")
    assert _run(program, good, tmp_path).returncode == 0

    def refused(blob: bytes) -> tuple[int, str]:
        result = _run(program, blob, tmp_path)
        return result.returncode - 10, result.stderr.decode(errors="replace")

    assert refused(good[:-16])[0] == TRUNCATED
    assert refused(good[:60])[0] == TRUNCATED
    assert refused(b"TFL3" + good[4:])[0] == BAD_MAGIC
    for at in (40, 200, len(good) - 20):  # header, op table, weights
        corrupted = bytearray(good)
        corrupted[at] ^= 0x10
        assert refused(bytes(corrupted)) == (BAD_CRC, "mb-table refused: CRC-32 mismatch (op -1)\n")
    # A weight changed and the CRC-32 recomputed (as a tool that knows only the CRC would):
    # the SHA-256 no longer matches.
    forged = bytearray(good)
    forged[len(good) - 20] ^= 0x10
    forged[CRC_OFFSET:CRC_OFFSET + 4] = bytes(4)
    forged[CRC_OFFSET:CRC_OFFSET + 4] = zlib.crc32(forged).to_bytes(4, "little")
    assert refused(bytes(forged)) == (BAD_SHA256, "mb-table refused: SHA-256 mismatch (op -1)\n")
    # Packed for a firmware with another kernel set (tiny_fc's kernels alone).
    foreign = pack_model(tiny, KernelSet.for_models([tiny]), "host-asan")
    assert refused(foreign)[0] == FOREIGN_KERNELS
    # Well-formed (good CRC) but naming a kernel the firmware lacks, or a workspace offset
    # outside the workspace: refused with the op's index.
    blob = read_blob(good)
    blob.ops[1] = BlobOp(0xDEADBEEF, blob.ops[1].model_op, blob.ops[1].args,
                         blob.ops[1].kernel_index)
    assert refused(write_blob(blob)) == (UNKNOWN_KERNEL, "mb-table refused: calls a kernel this "
                                                         "firmware lacks (op 1)\n")
    # The right kernel id at another kernel's index (the runner calls by index), or past the
    # table: refused too.
    good_index = read_blob(good).ops[1].kernel_index
    for index in (good_index + 1, 1 << 20):
        blob = read_blob(good)
        blob.ops[1] = BlobOp(blob.ops[1].kernel_id, blob.ops[1].model_op, blob.ops[1].args, index)
        assert refused(write_blob(blob))[0] == UNKNOWN_KERNEL, (good_index, index)
    blob = read_blob(good)
    args = list(blob.ops[2].args)
    args[1] = BlobArg(ARG_WORKSPACE, blob.workspace_bytes)
    blob.ops[2] = BlobOp(blob.ops[2].kernel_id, 2, tuple(args), blob.ops[2].kernel_index)
    assert refused(write_blob(blob))[0] == BAD_LAYOUT


def test_the_c_validator_survives_header_fields_rewritten_with_a_good_crc(firmware, tmp_path):
    """A blob whose sizes, offsets and counts were rewritten (CRC-32 recomputed, as a buggy or
    hostile packer would write it) is refused or, when the change is harmless, runs: never a
    read outside the blob (AddressSanitizer would stop the runner)."""
    program, _ = firmware
    good = pack_model(_compile(MODELS / "tiny_fc.tflite"), _firmware_kernels(program), "host-asan")
    rng = np.random.default_rng(31)
    fields = [16, 80, 84, 88, 92, 96, 100, 104, 108, 112]  # u32: total .. io offset
    # Then the state's bytes and reset image (u32 at 128 and 132) over the same values.
    for k in range(24 + 2 * 4):
        blob = bytearray(good)
        at = fields[k % len(fields)] if k < 24 else 128 + 4 * (k % 2)
        value = int(rng.choice([0, 1, 7, 8, 16, len(good) - 8, len(good), 1 << 31, 0xFFFFFFF8,
                                int(rng.integers(0, 1 << 32))]))
        blob[at:at + 4] = value.to_bytes(4, "little")
        if k % 3 == 0:  # the 16-bit I/O counts too
            blob[116:118] = int(rng.integers(0, 1 << 16)).to_bytes(2, "little")
        blob[CRC_OFFSET:SHA_OFFSET + 32] = bytes(36)
        # Over the bytes the header says the blob has, as the validator computes them.
        total = min(int.from_bytes(blob[16:20], "little"), len(blob))
        blob[SHA_OFFSET:SHA_OFFSET + 32] = hashlib.sha256(blob[:total]).digest()
        blob[CRC_OFFSET:CRC_OFFSET + 4] = zlib.crc32(blob[:total]).to_bytes(4, "little")
        result = _run(program, bytes(blob), tmp_path, stdin=bytes(16))
        assert result.returncode in (0, 10 + TRUNCATED, 10 + BAD_LAYOUT, 10 + FOREIGN_KERNELS,
                                     10 + UNKNOWN_KERNEL, 10 + WORKSPACE), (
            f"header byte {at} = {value:#x}: exit {result.returncode}\n"
            f"{result.stderr.decode(errors='replace')[-2000:]}")
