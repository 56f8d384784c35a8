"""16x8 quantization (int16 activations, int8 weights, int64 biases): every operator microbuild
compiles with int16 activations, bit-exact with TFLM's int16 reference kernels.

Sweep models from tests/models/generate/ops_int16.py (Keras layers through the converter's
EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8). LOGISTIC and TANH are checked on
every one of the 65,536 int16 inputs, with power-of-two and general input scales."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm

from microbuild.compiler import compile_model

OPS = Path(__file__).resolve().parent.parent / "models" / "ops"
SWEEP = sorted(p for p in OPS.glob("*_s16*.tflite") if not p.stem.startswith("svdf"))
sys.path.insert(0, str(OPS.parent / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_int16_sweep_is_there():
    names = {p.stem for p in SWEEP}
    assert {"fc_s16_relu", "fc_s16_nobias", "conv_s16_3x3_same_relu", "conv_s16_5x3_valid_s2",
            "dw_s16_3x3_same_relu6", "dw_s16_3x3_valid_m2_s2", "add_s16", "add_s16_relu_bcast",
            "mul_s16", "logistic_s16", "tanh_s16", "avgpool_s16_2x2", "maxpool_s16_3x3_same_s2",
            "concat_s16", "pad_s16", "mean_s16", "quantize_s16_float_io"} <= names


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_int16_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=8, seed=16, cc=cc, tmp_path=tmp_path)


def test_int16_models_get_no_int8_kernel_variant():
    compiled = compile_model(OPS / "conv_s16_3x3_same_relu.tflite")
    assert [op["kernel"] for op in compiled.summary()["ops"]] == ["reference"]
    assert "mb_conv2d_s16(" in compiled.sources["model.c"]


def _unary_int16(opcode: str, input_scale: float) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (65536,), "int16", input_scale, 0)
    y = b.tensor("y", (65536,), "int16", 1.0 / 32768, 0)
    b.operator(opcode, [x], [y])
    return b.build([x], [y])


@pytest.mark.parametrize("opcode", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("input_scale", [2.0 ** -12, 2.0 ** -13, 1 / 3000, 0.0007, 8e-6])
def test_sigmoid_family_on_every_int16_input(opcode, input_scale, tmp_path):
    path = tmp_path / f"{opcode}.tflite"
    path.write_bytes(_unary_int16(opcode, input_scale))
    x = np.arange(-32768, 32768, dtype=np.int16)
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    want = np.asarray(run_tflm(path, [x])[0])
    assert np.array_equal(got, want), f"{np.count_nonzero(got != want)} of 65536 values differ"
    assert len(np.unique(got)) > 1000  # not a degenerate case
