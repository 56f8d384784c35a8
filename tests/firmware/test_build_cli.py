"""`microbuild build` through microbuild.cli.main, and the API it stands on: firmware built and run
on the host (and in QEMU), outputs checked against TFLM, and every user mistake reported as one
clear message with exit code 1."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.cli import main

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models"
TINY = MODELS / "tiny_fc.tflite"
DS_CNN = MODELS / "ds_cnn.tflite"
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm  # noqa: E402

needs_arm = pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                               reason="arm-none-eabi-gcc is not installed")
needs_qemu = pytest.mark.skipif(shutil.which("qemu-system-arm") is None,
                                reason="qemu-system-arm is not installed")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("MICROBUILD_BOARDS_PATH", "MICROBUILD_VERBOSE", "MICROBUILD_ERROR_LOG"):
        monkeypatch.delenv(var, raising=False)


def build(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["build", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def failed(capsys, *args: str) -> str:
    """Run a build that must fail as a user's mistake; its message, checked to be one clean one."""
    code, out, err = build(capsys, *args)
    assert code == 1, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err and "Traceback" not in out
    assert err.startswith("error: "), err
    return err


def write_board(name: str, body: str, base: str = "mps2-an385") -> Path:
    path = Path("boards") / f"{name}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"name: {name}\nextends: {base}\n" + textwrap.dedent(body))
    return path


def embedded_input(out_dir: Path, prefix: str) -> np.ndarray:
    with np.load(out_dir / "firmware.input.npz") as saved:
        assert sorted(saved.files) == [f"{prefix}.input0"]
        return saved[f"{prefix}.input0"]


def run_values(document: dict, prefix: str) -> np.ndarray:
    (output,) = document["run"]["models"][prefix]["outputs"]
    return np.array(output["values"], dtype=output["dtype"]).reshape(output["shape"])


# ---- building and running on the host ---------------------------------------------------------

def test_build_run_json_on_host_matches_tflm(tmp_path, capsys):
    code, out, err = build(capsys, "--board", "host", "--model", str(TINY), "--run", "--json",
                           "-o", str(tmp_path / "fw"))
    assert code == 0, err
    document = json.loads(out)
    assert document["board"] == "host" and document["toolchain"] == "host-gcc"
    assert document["elf"] == str(tmp_path / "fw" / "firmware")
    assert document["input"] == str(tmp_path / "fw" / "firmware.input.npz")
    assert document["bin"] is None and document["hex"] is None  # none on the host

    x = embedded_input(tmp_path / "fw", "tiny_fc")
    assert x.dtype == np.int8 and x.shape == (1, 16)
    (want,) = run_tflm(TINY, [x])
    got = run_values(document, "tiny_fc")
    assert got.dtype == np.int8 and got.shape == (1, 4)
    np.testing.assert_array_equal(got, want)

    model = document["run"]["models"]["tiny_fc"]
    assert model["status"] == 0
    assert model["ticks_per_inference"] > 0
    assert document["run"]["timer_hz"] == 1_000_000_000
    assert model["seconds_per_inference"] == pytest.approx(model["ticks_per_inference"] / 1e9)

    totals = document["size"]["totals"]
    for key in ("text", "rodata", "weights", "data", "bss", "workspace", "stack"):
        assert key in totals
    assert totals["text"] > 0
    # tiny_fc's 304 bytes and SOFTMAX fast's exp() table (256 int32)
    assert totals["weights"] == document["models"][0]["weights_bytes"] == 304 + 1024
    assert document["size"]["fits"] is True
    assert document["models"][0]["prefix"] == "tiny_fc"
    assert document["models"][0]["model"] == str(TINY)


def test_input_file_is_embedded_and_output_saved(tmp_path, capsys):
    x = np.random.default_rng(1234).integers(-128, 127, size=(1, 16), endpoint=True,
                                             dtype=np.int8)
    np.save("x.npy", x)
    code, out, err = build(capsys, "--board", "host", "--model", str(TINY), "--input", "x.npy",
                           "--run", "--output", "y.npy", "-o", "fw")
    assert code == 0, err
    np.testing.assert_array_equal(embedded_input(tmp_path / "fw", "tiny_fc"), x)
    (want,) = run_tflm(TINY, [x])
    y = np.load("y.npy")
    assert y.dtype == np.int8 and y.shape == (1, 4)
    np.testing.assert_array_equal(y, want)
    assert "outputs saved to y.npy" in out
    # The table shows the same values.
    assert " ".join(str(v) for v in want.reshape(-1)) in out


def test_build_then_run_through_the_api_is_incremental(tmp_path):
    first = api.build_firmware("host", [TINY], tmp_path / "fw", seed=7)
    assert "  LINK    " in first.log and "  CC      " in first.log
    x = first.inputs("tiny_fc")
    assert len(x) == 1 and x[0].shape == (1, 16)
    result = api.run_firmware(first)
    (want,) = run_tflm(TINY, x)
    np.testing.assert_array_equal(result.outputs["tiny_fc"][0], want)
    assert result.ticks["tiny_fc"] > 0 and result.status == {"tiny_fc": 0}

    # The same build again does nothing; another seed regenerates only the input table and relinks.
    again = api.build_firmware("host", [TINY], tmp_path / "fw", seed=7)
    assert again.log.strip() == "scons: `.' is up to date."
    reseeded = api.build_firmware("host", [TINY], tmp_path / "fw", seed=8)
    assert "  CC      build/host/obj" not in reseeded.log
    assert "  GEN     firmware.src/mb_aot_models.c" in reseeded.log
    assert "  LINK    firmware" in reseeded.log
    assert not np.array_equal(reseeded.inputs("tiny_fc")[0], x[0])


# ---- input and output files the user got wrong ------------------------------------------------

def _float_input():
    np.save("bad.npy", np.zeros((1, 16), np.float32))
    return ["dtype is float32", "int8 [1, 16]", "astype(np.int8)"]


def _wrong_shape():
    np.save("bad.npy", np.zeros((4, 4), np.int8))
    return ["shape is [4, 4]", "int8 [1, 16]", "element count must be 16"]


def _missing_key():
    np.savez("bad.npz", features=np.zeros((1, 16), np.int8))
    return ["no array for input 0", "int8 [1, 16]", "the file has features", "arr_0"]


def _not_numpy():
    Path("bad.npy").write_text("0.5, 0.25, 1.0\n")
    return ["not a NumPy .npy or .npz file"]


@pytest.mark.parametrize("make", [_float_input, _wrong_shape, _missing_key, _not_numpy],
                         ids=["dtype", "shape", "npz-key", "not-numpy"])
def test_bad_input_file_is_a_clear_error(tmp_path, capsys, make):
    expected = make()
    (bad,) = Path(".").glob("bad.*")
    err = failed(capsys, "--board", "host", "--model", str(TINY), "--input", str(bad),
                 "-o", "fw")
    assert err.startswith(f"error: {bad}"), err
    for text in expected:
        assert text in err, f"{text!r} not in {err!r}"
    # Checked before anything was built.
    assert not (tmp_path / "fw").exists()


def test_output_needs_run(tmp_path, capsys):
    err = failed(capsys, "--board", "host", "--model", str(TINY), "--output", "y.npy", "-o", "fw")
    assert "--output" in err and "--run" in err
    assert not (tmp_path / "fw").exists() and not (tmp_path / "y.npy").exists()


def test_unknown_board(capsys):
    err = failed(capsys, "--board", "no-such-board", "--model", str(TINY))
    assert "no board named 'no-such-board'" in err
    assert "microbuild boards list" in err
    assert not Path("build").exists()


def test_missing_model(capsys):
    err = failed(capsys, "--board", "host", "--model", "missing.tflite")
    assert "missing.tflite: no such model file" in err


def test_default_out_dir_is_build_slash_board(capsys):
    code, out, err = build(capsys, "--board", "host", "--model", str(TINY))
    assert code == 0, err
    assert f"firmware: {Path('build/host/firmware').resolve()}" in out
    # A board given as a YAML file: build/<its file name>, not a folder called "mine.yaml".
    path = write_board("mine", "title: my host\n", base="host")
    code, out, err = build(capsys, "--board", str(path), "--model", str(TINY))
    assert code == 0, err
    assert Path("build/mine/firmware").is_file()
    assert not Path("build/boards").exists()


# ---- toolchains -------------------------------------------------------------------------------

def test_missing_toolchain_names_the_debian_package(capsys):
    write_board("badtc", "toolchain:\n  prefix: nonexistent-\n")
    err = failed(capsys, "--board", "badtc", "--model", str(TINY), "-o", "fw")
    assert "board 'badtc'" in err
    assert "'nonexistent-gcc' is not installed" in err
    assert "apt-get install gcc-arm-none-eabi" in err
    assert not Path("fw").exists()


def test_unknown_toolchain_lists_the_boards_toolchains(capsys):
    err = failed(capsys, "--board", "mps2-an500", "--model", str(TINY), "--toolchain",
                 "nonsense")
    assert "'nonsense'" in err
    assert "gcc-arm-none-eabi, clang" in err


@needs_arm
@needs_qemu
@pytest.mark.skipif(shutil.which("clang") is None, reason="clang is not installed")
def test_clang_on_mps2_an500_runs_like_tflm(tmp_path, capsys):
    code, out, err = build(capsys, "--board", "mps2-an500", "--model", str(DS_CNN),
                           "--toolchain", "clang", "--run", "--json", "-o", "fw")
    assert code == 0, err
    document = json.loads(out)
    assert document["toolchain"] == "clang"
    x = embedded_input(tmp_path / "fw", "ds_cnn")
    (want,) = run_tflm(DS_CNN, [x])
    got = run_values(document, "ds_cnn")
    assert got.shape == (1, 12)
    np.testing.assert_array_equal(got, want)
    assert document["run"]["timer_hz"] == 25_000_000
    assert document["run"]["models"]["ds_cnn"]["ticks_per_inference"] > 0
    # The ELF really came from clang.
    from elftools.elf.elffile import ELFFile

    with open(document["elf"], "rb") as f:
        comment = ELFFile(f).get_section_by_name(".comment").data()
    assert b"clang" in comment
    assert Path(document["bin"]).stat().st_size > 0 and Path(document["hex"]).is_file()


@needs_arm
@needs_qemu
def test_no_row_stream_runs_every_op_whole(tmp_path, capsys):
    """ResNet-8 on the M55 runs its first two blocks row by row by default; --no-row-stream, into
    the same build folder, rebuilds with every op whole: the op-by-op workspace, the same
    outputs. (DS-CNN's region is no longer kept: it saved 704 bytes for 74 band calls.)"""
    resnet8 = MODELS / "resnet8.tflite"
    workspaces = {}
    for flags in ((), ("--no-row-stream",)):
        code, out, err = build(capsys, "--board", "mps3-an547", "--model", str(resnet8), "--run",
                               "--json", "-o", "fw", *flags)
        assert code == 0, err
        document = json.loads(out)
        (model,) = document["models"]
        workspaces[flags] = model["workspace_bytes"]
        (want,) = run_tflm(resnet8, [embedded_input(tmp_path / "fw", "resnet8")])
        np.testing.assert_array_equal(run_values(document, "resnet8"), want)
    from microbuild.compiler import compile_model
    from microbuild.compiler.variants import Selection, Target

    selection = Selection(Target.of_board(api.get_board("mps3-an547")))
    streamed, whole = workspaces[()], workspaces[("--no-row-stream",)]
    assert streamed == compile_model(resnet8, selection=selection).workspace_bytes
    assert whole == compile_model(resnet8, selection=selection, row_stream=False).workspace_bytes
    assert streamed < whole, workspaces


# ---- the fit check ----------------------------------------------------------------------------

def ld_overflow(out_dir: Path, tmp_path: Path) -> int:
    """Link the failed firmware again with the tool's own link line and return what ld says."""
    env = {k: v for k, v in os.environ.items() if k != "MICROBUILD_ERROR_LOG"}
    env["MICROBUILD_VERBOSE"] = "1"
    dry = subprocess.run([sys.executable, "-m", "SCons", "-Q", "-n"], cwd=out_dir, env=env,
                         capture_output=True, text=True, timeout=120)
    (line,) = [ln for ln in dry.stdout.splitlines() if " -o firmware.elf " in ln]
    command = shlex.split(line)
    command[command.index("-o") + 1] = str(tmp_path / "by-ld.elf")
    link = subprocess.run(command, cwd=out_dir, capture_output=True, text=True, timeout=120)
    assert link.returncode != 0
    match = re.search(r"region `sram' overflowed by (\d+) bytes", link.stderr)
    assert match, link.stderr
    return int(match.group(1))


@needs_arm
def test_firmware_too_big_for_ram_is_a_fit_error(tmp_path, capsys):
    write_board("tiny-ram", """\
        memory:
          regions:
            sram: {length: 16K}
          stack_size: 2K
        """)
    err = failed(capsys, "--board", "tiny-ram", "--model",
                 str(MODELS / "mobilenet_v1_025_vww.tflite"), "-o", "fw")
    first = err.splitlines()[0]
    match = re.fullmatch(r"error: The firmware does not fit on board tiny-ram: region sram "
                         r"overflows by ([\d,]+) bytes \(.*\)\.", first)
    assert match, first
    over = int(match.group(1).replace(",", ""))
    # The workspace for the board's CPU (mps2-an385: Cortex-M3, so the portable kernels; about
    # 29 KiB since outputs are written over the inputs they consume and the first layers run
    # row by row) + stack 2,048 + .bss, in 16 KiB.
    from microbuild.compiler import compile_model
    from microbuild.compiler.variants import Selection, Target

    workspace = compile_model(MODELS / "mobilenet_v1_025_vww.tflite", selection=Selection(
        Target.of_board(api.get_board("mps2-an385")))).workspace_bytes
    assert 28_000 < workspace < 32_000
    assert over > workspace + 2_048 - 16_384
    assert over == ld_overflow(tmp_path / "fw", tmp_path)
    assert "workspace" in err and f"{workspace:,} bytes" in err
    assert "sram" in err and "16,384 bytes" in err
    assert "memory.placement.workspace" in err
    assert not (tmp_path / "fw" / "firmware.elf").exists()


@needs_arm
def test_widened_weights_that_do_not_fit_name_the_compact_variant(tmp_path, capsys):
    """dsp16 (which a tuning log may pick, as it is fastest) stores CONV_2D filters as int16: on a
    160 KiB flash ResNet-8 then overflows, the error says which variant to force instead and
    what it saves, and following it builds."""
    write_board("m7-160k", """\
        memory:
          regions:
            code: {length: 160K}
        """, base="mps2-an500")
    model = str(MODELS / "resnet8.tflite")
    err = " ".join(failed(capsys, "--board", "m7-160k", "--model", model,
                          "--variant", "CONV_2D=dsp16", "-o", "fw").split())
    assert "region code overflows" in err
    widened = re.search(r"build with `--variant CONV_2D=dsp` \(dsp16 stores the CONV_2D weights "
                        r"of ops 0-8 widened to int16, ([\d.]+) KiB; dsp runs the same "
                        r"arithmetic on int8 weights, ([\d.]+) KiB less", err)
    assert widened, err
    assert float(widened.group(2)) == pytest.approx(float(widened.group(1)) / 2, abs=0.1)
    code, out, err = build(capsys, "--board", "m7-160k", "--model", model,
                           "--variant", "CONV_2D=dsp", "-o", "fw")
    assert code == 0, err
    assert (tmp_path / "fw" / "firmware.elf").is_file()


# ---- the human output -------------------------------------------------------------------------

def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of rich's tables by their first cell."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│┃|]", line)[1:-1]]
        if cells and cells[0]:
            rows[cells[0]] = cells[1:]
    return rows


@needs_arm
@needs_qemu
def test_human_output_has_the_region_table_and_ticks(tmp_path, capsys):
    code, out, err = build(capsys, "--board", "mps2-an500", "--model", str(TINY), "--run",
                           "-o", "fw")
    assert code == 0, err
    assert "running on mps2-an500" in err
    assert "mps2-an500 (gcc-arm-none-eabi)" in out
    assert f"firmware: {tmp_path / 'fw' / 'firmware.elf'} (+ .bin, .hex)\n" in out
    rows = table_rows(out)
    assert rows["Region"][:3] == ["Used", "Size", "Use%"]
    # tiny_fc's 304 bytes, the M7 FC kernel's requantization table (3 int32 per row) and
    # SOFTMAX fast's exp() table (256 int32): 1,376 B
    assert rows["code"][1] == "4.00 MiB" and "weights 1.3 KiB" in rows["code"][3]
    assert rows["sram"][1] == "4.00 MiB" and "stack 16.0 KiB" in rows["sram"][3]
    assert rows["psram"][1] == "16.00 MiB"
    assert re.search(r"^text [\d,]+ B  rodata [\d,]+ B  weights 1,376 B", out, re.M)
    # Under QEMU -icount the timer counts instructions (40 per 25 MHz tick), shown as such.
    ticks = re.search(r"^tiny_fc: ([\d,]+) timer ticks per inference at 25,000,000 Hz = "
                      r"([\d,]+) instructions \(QEMU icount: a count, not a time\)$", out, re.M)
    assert ticks, out
    n = int(ticks.group(1).replace(",", ""))
    assert n > 0 and int(ticks.group(2).replace(",", "")) == 40 * n
    (want,) = run_tflm(TINY, [embedded_input(tmp_path / "fw", "tiny_fc")])
    assert rows["0"][:2] == ["int8", "[1, 4]"]
    assert rows["0"][2] == " ".join(str(v) for v in want.reshape(-1))
