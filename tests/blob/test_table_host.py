"""The table executor on the host: one runner built for the kernels of DS-CNN and a small
fully-connected model runs their blobs bit-exact with TFLM, runs a third model packed afterwards
(without rebuilding), and its C validator refuses damaged and foreign blobs. The runner is built
once, with AddressSanitizer and UndefinedBehaviorSanitizer, so a validator or runner that reads
outside the blob fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.blob import KernelSet, pack_model, read_blob, write_blob
from microbuild.blob.format import ARG_WORKSPACE, BlobArg, BlobError, BlobOp
from microbuild.blob.host import build_host_runner
from microbuild.compiler import compile_model

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import SANITIZER_ENV, random_inputs, run_tflm_many  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "models"
CFLAGS = ("-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-Werror",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all")
# runtime/include/microbuild/table.h's mb_table_status; the runner exits with 10 + it.
TRUNCATED, BAD_MAGIC, BAD_CRC, FOREIGN_KERNELS, BAD_LAYOUT, UNKNOWN_KERNEL = 1, 2, 5, 6, 9, 10


def _compile(path: Path):
    # Row streaming off: a row-streamed region is many calls per op, which blobs do not carry.
    return compile_model(path, prefix=path.stem, row_stream=False)


@pytest.fixture(scope="module")
def firmware(tmp_path_factory):
    """(runner program, kernel set, {model name: compiled model}) for ds_cnn + tiny_fc."""
    compiled = {p.stem: _compile(p) for p in (MODELS / "ds_cnn.tflite", MODELS / "tiny_fc.tflite")}
    kernels = KernelSet.for_models(compiled.values())
    program = build_host_runner(kernels, tmp_path_factory.mktemp("table"), cflags=CFLAGS)
    return program, kernels, compiled


def _run(program: Path, blob: bytes, tmp: Path, stdin: bytes = b"") -> subprocess.CompletedProcess:
    path = tmp / "model.mbm"
    path.write_bytes(blob)
    env = {**__import__("os").environ, **SANITIZER_ENV}
    return subprocess.run([str(program), str(path)], input=stdin, capture_output=True, env=env,
                          timeout=120)


def _assert_bit_exact(program, model_path: Path, compiled, blob: bytes, tmp: Path) -> None:
    input_sets = random_inputs(model_path, 4, seed=3)
    stdin = b"".join(np.ascontiguousarray(x, dtype=s.dtype).tobytes()
                     for inputs in input_sets for x, s in zip(inputs, compiled.inputs))
    result = _run(program, blob, tmp, stdin)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    want = b"".join(np.asarray(o).tobytes() for outs in run_tflm_many(model_path, input_sets)
                    for o in outs)
    assert result.stdout == want, f"{model_path.name}: the table runner differs from TFLM"


@pytest.mark.parametrize("name", ["ds_cnn", "tiny_fc"])
def test_blob_runs_bit_exact_with_tflm(firmware, name, tmp_path):
    program, kernels, compiled = firmware
    blob = pack_model(compiled[name], kernels, "host")
    assert read_blob(blob, kernels.id).workspace_bytes == compiled[name].workspace_bytes
    _assert_bit_exact(program, MODELS / f"{name}.tflite", compiled[name], blob, tmp_path)


def test_a_third_model_packed_afterwards_runs_without_rebuilding(firmware, tmp_path):
    path = SHARED / "micro_speech_quantized.tflite"
    if not path.exists():
        pytest.skip(f"{path} is not here: ../shared/models exists in the team's checkout only")
    program, kernels, _ = firmware
    compiled = _compile(path)
    _assert_bit_exact(program, path, compiled, pack_model(compiled, kernels, "host"), tmp_path)


def test_a_model_needing_a_missing_kernel_or_more_workspace_is_refused_at_pack_time(firmware):
    _, kernels, compiled = firmware
    add = _compile(MODELS / "ops" / "add_same.tflite")
    with pytest.raises(BlobError, match=r"kernel mb_add_s8\w* \(\d+ arguments\) is not in the "
                                        r"firmware's kernel set"):
        pack_model(add, kernels, "host")
    with pytest.raises(BlobError, match=r"needs 10304 bytes of workspace, the firmware reserved "
                                        r"4096 \(6208 over\)"):
        pack_model(compiled["ds_cnn"], kernels, "host", workspace_limit=4096)


def test_a_row_streamed_model_is_refused_by_op(firmware):
    _, kernels, _ = firmware
    streamed = compile_model(MODELS / "ds_cnn.tflite", prefix="ds_cnn")
    with pytest.raises(BlobError, match=r"op 1 DEPTHWISE_CONV_2D: runs row by row"):
        pack_model(streamed, kernels, "host")


def test_the_c_validator_refuses_bad_blobs(firmware, tmp_path):
    program, kernels, compiled = firmware
    good = pack_model(compiled["tiny_fc"], kernels, "host")

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
    # Packed for a firmware with another kernel set (tiny_fc's kernels alone).
    foreign = pack_model(compiled["tiny_fc"], KernelSet.for_models([compiled["tiny_fc"]]), "host")
    assert refused(foreign)[0] == FOREIGN_KERNELS
    # Well-formed (good CRC) but naming a kernel the firmware lacks, or a workspace offset
    # outside the workspace: refused with the op's index.
    blob = read_blob(good)
    blob.ops[1] = BlobOp(0xDEADBEEF, blob.ops[1].model_op, blob.ops[1].args)
    assert refused(write_blob(blob)) == (UNKNOWN_KERNEL, "mb-table refused: calls a kernel this "
                                                         "firmware lacks (op 1)\n")
    blob = read_blob(good)
    args = list(blob.ops[2].args)
    args[1] = BlobArg(ARG_WORKSPACE, blob.workspace_bytes)
    blob.ops[2] = BlobOp(blob.ops[2].kernel_id, 2, tuple(args))
    assert refused(write_blob(blob))[0] == BAD_LAYOUT
