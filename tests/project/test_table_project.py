"""`microbuild generate --executor table`: projects whose firmware links the kernels their models
call and runs models packed as data (docs/model-blob.md, issue 31).

The Make project for the host is built with make and runs its packed blob bit-exact with TFLM;
a model packed afterwards against the firmware make built (its note added by the Makefile) runs
too. The mps2-an500 one is built with make and boots in QEMU with a blob in a model slot through
`microbuild update`, printing the same outputs as the host. The SCons and PlatformIO host
projects are built with scons and `pio run` (offline) and run their blob; Zephyr refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from microbuild import cli
from microbuild.compiler import compile_model
from microbuild.firmware.note import read_note
from microbuild.errors import BoardError, MicrobuildError
from microbuild.project import build_project, generate_project
from microbuild.project.files import ProjectError
from microbuild.project.table import fixed_inputs
from microbuild.tflm_reference import tflm_outputs

from project_support import DS_CNN, TINY_FC


def _tflm_bytes(model: Path, inputs: bytes) -> bytes:
    """TFLM's outputs' bytes for the inputs' bytes ``inputs`` (each input in order)."""
    compiled = compile_model(model, prefix="m", row_stream=False)
    arrays, at = [], 0
    for spec in compiled.inputs:
        arrays.append(np.frombuffer(inputs[at:at + spec.bytes], dtype=spec.dtype)
                      .reshape(spec.shape))
        at += spec.bytes
    return b"".join(np.asarray(o).tobytes() for o in tflm_outputs(model, arrays))


def _make(project: Path) -> None:
    done = subprocess.run(["make", "-j2"], cwd=project, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def host_project(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("table-host") / "project"
    generate_project("host", DS_CNN, "make", out, executor="table")
    _make(out)
    return out


def _run(program: Path, blob: Path, inputs: bytes) -> bytes:
    done = subprocess.run([str(program), str(blob)], input=inputs, capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def test_make_host_project_runs_its_packed_model_bit_exact_with_tflm(host_project):
    out = host_project
    # Only the kernels the model calls are in the project, and its model is data, not C.
    assert not list((out / "generated").glob("ds_cnn*.c"))
    kernels = {p.name for p in (out / "runtime" / "kernels").glob("*.c")}
    assert "conv2d_gemm.c" in kernels and "lstm.c" not in kernels
    inputs = (out / "model" / "ds_cnn.inputs.bin").read_bytes()
    assert _run(out / "build" / "firmware", out / "model" / "ds_cnn.mbm", inputs) == \
        _tflm_bytes(DS_CNN, inputs)
    note = read_note(out / "build" / "firmware")
    assert note.executor == "table" and "mb_conv2d_s8_gemm" in note.table["functions"]
    readme = (out / "README.md").read_text()
    assert "microbuild pack --firmware build/firmware --model other.tflite" in readme


def test_a_model_packed_against_the_project_firmware_runs_without_rebuilding(
        host_project, tmp_path, capsys):
    firmware = host_project / "build" / "firmware"
    blob = tmp_path / "tiny.mbm"
    status = cli.main(["pack", "--firmware", str(firmware), "--model", str(TINY_FC), "-o",
                       str(blob)])
    assert status == 0, capsys.readouterr().err
    inputs = fixed_inputs(compile_model(TINY_FC, prefix="m", row_stream=False))
    assert _run(firmware, blob, inputs) == _tflm_bytes(TINY_FC, inputs)


def test_make_mps2_an500_project_boots_a_blob_written_into_a_slot(host_project, tmp_path,
                                                                  capsys):
    out = tmp_path / "an500"
    generate_project("mps2-an500", DS_CNN, "make", out, executor="table")
    header = (out / "generated" / "mb_table_slots.h").read_text()
    assert "#define MB_TABLE_SLOT_ADDRESSES {0x60000000u, 0x60100000u}" in header
    readme = (out / "README.md").read_text()
    assert ("microbuild update --board board/mps2-an500.yaml --firmware build/firmware.elf "
            "--blob other.mbm --slot 1") in readme
    _make(out)
    status = cli.main(["update", "--board", str(out / "board" / "mps2-an500.yaml"),
                       "--firmware", str(out / "build" / "firmware.elf"),
                       "--blob", str(out / "model" / "ds_cnn.mbm"), "--slot", "1"])
    console = capsys.readouterr().out
    assert status == 0, console
    assert "mb-table running slot 1" in console
    inputs = (host_project / "model" / "ds_cnn.inputs.bin").read_bytes()
    assert f"mb-table output 0 {_tflm_bytes(DS_CNN, inputs).hex()}" in console


def test_table_projects_refuse_what_they_cannot_do(tmp_path):
    with pytest.raises(MicrobuildError, match="no model slots for the table executor"):
        generate_project("nucleo-f746zg", TINY_FC, "make", tmp_path / "a", executor="table")
    # Zephyr needs the board's Zephyr name, as for the other executors (tests/project/
    # test_zephyr_table.py generates and builds a Zephyr table application).
    with pytest.raises(BoardError, match="board 'mps2-an500' has no Zephyr board name"):
        generate_project("mps2-an500", TINY_FC, "zephyr", tmp_path / "b", executor="table")


def test_scons_host_project_builds_the_kernel_set_from_its_note_and_runs_its_blob(tmp_path):
    # tiny_fc: few kernels to compile; ds_cnn's are built by the Make tests.
    out = tmp_path / "scons"
    generate_project("host", TINY_FC, "scons", out, executor="table")
    build_project(out)
    firmware = out / "build" / "firmware"
    assert read_note(firmware).table["functions"] == read_note_table(out)["functions"]
    inputs = (out / "model" / "tiny_fc.inputs.bin").read_bytes()
    assert _run(firmware, out / "model" / "tiny_fc.mbm", inputs) == _tflm_bytes(TINY_FC, inputs)


def read_note_table(project: Path) -> dict:
    from microbuild.project.table import NOTE_FILE, read_project_note

    return read_project_note(project / NOTE_FILE)["table"]


def test_platformio_host_project_builds_with_pio_run_and_packs_against_its_firmware(
        pio, tmp_path, capsys):
    out = tmp_path / "pio"
    generate_project("host", TINY_FC, "platformio", out, executor="table")
    pio(out, "run", "-e", "host")
    firmware = out / ".pio" / "build" / "host" / "firmware"
    inputs = (out / "model" / "tiny_fc.inputs.bin").read_bytes()
    assert _run(firmware, out / "model" / "tiny_fc.mbm", inputs) == _tflm_bytes(TINY_FC, inputs)
    # The note pio's build added: pack reads the kernel set from it (and refuses ds_cnn, whose
    # convolutions tiny_fc's firmware lacks).
    status = cli.main(["pack", "--firmware", str(firmware), "--model", str(TINY_FC), "-o",
                       str(tmp_path / "tiny.mbm")])
    assert status == 0, capsys.readouterr().err
    assert cli.main(["pack", "--firmware", str(firmware), "--model", str(DS_CNN), "-o",
                     str(tmp_path / "ds.mbm")]) != 0
    assert "mb_conv2d_s8_gemm" in capsys.readouterr().err
