"""--executor rpc on every built-in board: it builds and fits (real boards), and on the emulated
boards the run command does not cover it boots and answers bit-exact. atmega328p's 2 KiB of RAM
cannot hold the server's buffers: a fit error that says so."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.errors import FitError
from microbuild.tensor_files import random_inputs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import run_tflm  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
REAL = ["stm32f746", "nucleo-f746zg", "nucleo-h743zi", "nrf52840dk", "rp2040-pico",
        "sparkfun-edge"]
EMULATED = ["host-clang", "mps2-an386", "netduinoplus2"]


@pytest.mark.parametrize("board", REAL)
def test_rpc_firmware_builds_and_fits_real_boards(board, tmp_path):
    build = api.build_firmware(board, [MODELS / "ds_cnn.tflite"], tmp_path, executor="rpc")
    assert build.size["fits"]
    assert build.binary.stat().st_size > 10_000
    symbols = {s["name"] for r in build.size["regions"] for s in r.get("symbols", [])}
    assert "mb_rpc_arena" in symbols


@pytest.mark.parametrize("board", EMULATED)
def test_rpc_runs_bit_exact_on_more_boards(board, tmp_path):
    model = MODELS / "resnet8.tflite"
    build = api.build_firmware(board, [model], tmp_path, executor="rpc")
    with api.connect(board, build) as dev:
        x = random_inputs(dev.specs(model), 6)
        profile = dev.profile(model, x)
    np.testing.assert_array_equal(profile.outputs[0], run_tflm(model, x)[0])
    if board != "host-clang":
        assert abs(profile.ratio - 1) < 0.005


def test_atmega328p_says_the_rpc_server_does_not_fit(tmp_path):
    with pytest.raises(FitError, match="region ram overflows"):
        api.build_firmware("atmega328p", [MODELS / "tiny_fc.tflite"], tmp_path, executor="rpc")
