"""Standalone firmware on every buildable board: each test model is built with the board's own
toolchain, linked with the generated linker script, booted in QEMU (or run as a host process),
and its printed outputs must equal TFLM's for the same embedded input. Real boards, which cannot
run here, must build and pass the fit check.

One test per board builds every model into one folder, so the board's runtime library is compiled
once; pytest-xdist spreads the boards over the cores."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.boards import load_board
from microbuild.errors import DeviceError
from microbuild.firmware import image_steps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.tflite"))
EMULATED = ["host", "host-clang", "mps2-an385", "mps2-an386", "mps2-an500", "mps3-an547",
            "netduinoplus2", "riscv32-virt"]
REAL = ["stm32f746", "nucleo-f746zg", "nucleo-h743zi", "nrf52840dk", "rp2040-pico",
        "sparkfun-edge"]


def _build_and_check(board: str, out: Path, toolchain: str | None = None, seed: int = 1) -> dict:
    ticks = {}
    for model in MODELS:
        build = api.build_firmware(board, [model], out, name=model.stem, toolchain=toolchain,
                                   seed=seed)
        assert build.size["fits"], build.size
        result = api.run_firmware(build, timeout=120)
        prefix = build.models[0]["prefix"]
        expected = run_tflm(model, build.inputs(prefix))
        assert len(result.outputs[prefix]) == len(expected)
        for got, want in zip(result.outputs[prefix], expected):
            assert got.dtype == want.dtype and got.shape == want.shape, (model.name, got, want)
            np.testing.assert_array_equal(got, want, err_msg=f"{board}: {model.name}")
        assert result.ticks[prefix] > 0
        ticks[model.stem] = result.ticks[prefix]
    return ticks


@pytest.mark.parametrize("board", EMULATED)
def test_every_model_runs_bit_exact_with_tflm(board, tmp_path):
    ticks = _build_and_check(board, tmp_path)
    if not board.startswith("host"):
        # Bigger models take longer: a sanity check that the timer measured the inference. Only
        # in QEMU, whose icount time is exact; the host boards' timer is the host's wall clock.
        assert ticks["tiny_fc"] < ticks["ds_cnn"] < ticks["resnet8"]


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547", "netduinoplus2"])
def test_clang_with_picolibc_runs_bit_exact(board, tmp_path):
    _build_and_check(board, tmp_path, toolchain="clang", seed=2)


@pytest.mark.parametrize("board", REAL)
def test_real_board_builds_and_fits(board, tmp_path):
    b = load_board(board)
    text_region = b.region_for("text")
    stack_region = b.region_for("stack")
    for model in MODELS:
        build = api.build_firmware(board, [model], tmp_path, name=model.stem)
        assert build.size["fits"]
        assert build.binary.is_file() and build.hex.is_file()
        assert build.hex.read_text().startswith(":")
        # The image starts with the vector table (after a boot header: the RP2040's boot2):
        # initial SP at the top of the stack, then the reset handler (Thumb bit set) inside the
        # code region.
        header = image_steps.boot_header(b)
        skip = header[1] if header else 0
        sp, reset = struct.unpack("<II", build.binary.read_bytes()[skip:skip + 8])
        assert stack_region.origin < sp <= stack_region.end
        assert sp % 8 == 0
        assert reset & 1 and text_region.origin <= reset < text_region.end
        regions = {r["name"]: r for r in build.size["regions"]}
        workspace_region = regions[b.placement["workspace"]]
        assert any(c["section"] == ".mb_workspace" for c in workspace_region["contributions"])
        assert build.size["workspace_bytes"] >= build.models[0]["workspace_bytes"]


def test_icount_makes_ticks_repeatable(tmp_path):
    model = next(m for m in MODELS if m.stem == "ds_cnn")
    build = api.build_firmware("mps2-an500", [model], tmp_path)
    first = api.run_firmware(build).ticks["ds_cnn"]
    second = api.run_firmware(build).ticks["ds_cnn"]
    assert abs(first - second) <= 1


def test_weights_and_workspace_in_another_region_are_copied_and_run(tmp_path, monkeypatch):
    """Weights placed in writable PSRAM get a load image in the code region and are copied
    there by the start-up code's copy table."""
    (tmp_path / "boards").mkdir()
    (tmp_path / "boards" / "an500-psram.yaml").write_text(
        "name: an500-psram\nextends: mps2-an500\ntitle: AN500, weights and workspace in PSRAM\n"
        "memory:\n  placement:\n    weights: psram\n    workspace: psram\n")
    monkeypatch.chdir(tmp_path)
    model = next(m for m in MODELS if m.stem == "ds_cnn")
    build = api.build_firmware("an500-psram", [model], tmp_path / "out")
    regions = {r["name"]: r for r in build.size["regions"]}
    roles = {(c["section"], c["role"]) for c in regions["psram"]["contributions"]}
    assert (".mb_weights", "run") in roles and (".mb_workspace", "run") in roles
    assert (".mb_weights", "load") in {(c["section"], c["role"])
                                        for c in regions["code"]["contributions"]}
    result = api.run_firmware(build)
    np.testing.assert_array_equal(result.outputs["ds_cnn"][0],
                                  run_tflm(model, build.inputs("ds_cnn"))[0])


def test_a_faulting_init_snippet_is_reported_as_a_fault(tmp_path, monkeypatch):
    (tmp_path / "boards").mkdir()
    (tmp_path / "boards" / "faulty.yaml").write_text(
        "name: faulty\nextends: mps2-an385\ntitle: writes to an address nothing answers\n"
        "init: |\n  *(volatile unsigned int *)0xF0000000u = 1u;\n")
    monkeypatch.chdir(tmp_path)
    model = next(m for m in MODELS if m.stem == "tiny_fc")
    build = api.build_firmware("faulty", [model], tmp_path / "out")
    with pytest.raises(DeviceError, match="HardFault|BusFault"):
        api.run_firmware(build, timeout=30)
