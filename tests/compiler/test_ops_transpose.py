"""TRANSPOSE: the sweep bit-exact with TFLM, evaluation of constants at compile time, and the
PyTorch export pattern TRANSPOSE -> RESHAPE -> FULLY_CONNECTED folded into the weights."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model

MODELS = Path(__file__).resolve().parent.parent / "models"
SWEEP = sorted((MODELS / "ops").glob("transpose_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_transpose_sweep_is_there():
    assert {p.stem for p in SWEEP} == {"transpose_nhwc_to_nchw", "transpose_hw_swap",
                                       "transpose_rank3", "transpose_rank5", "transpose_s16"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_transpose_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=6, seed=19, cc=cc, tmp_path=tmp_path)


def _flatten_before_linear(quant_matches: bool = True) -> bytes:
    """x (1,4,4,6) -> TRANSPOSE to NCHW -> RESHAPE (1,96) -> FULLY_CONNECTED (5 units)."""
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 4, 6), "int8", 0.05, -7)
    perm = b.constant("perm", np.array([0, 3, 1, 2], np.int32))
    t = b.tensor("nchw", (1, 6, 4, 4), "int8", 0.05 if quant_matches else 0.06, -7)
    shape = b.constant("shape", np.array([1, 96], np.int32))
    r = b.tensor("flat", (1, 96), "int8", 0.05 if quant_matches else 0.06, -7)
    w = b.constant("w", rng.integers(-127, 128, (5, 96), dtype=np.int8),
                   scale=rng.uniform(0.002, 0.01, 5), axis=0)
    bias = b.constant("bias", rng.integers(-3000, 3000, 5, dtype=np.int32))
    y = b.tensor("y", (1, 5), "int8", 0.2, 3)
    b.operator("TRANSPOSE", [x, perm], [t])
    b.operator("RESHAPE", [t, shape], [r], "ReshapeOptions", newShape=[1, 96])
    b.operator("FULLY_CONNECTED", [r, w, bias], [y], "FullyConnectedOptions")
    return b.build([x], [y])


def test_transpose_before_linear_is_folded_into_the_weights(tmp_path):
    path = tmp_path / "flatten_linear.tflite"
    path.write_bytes(_flatten_before_linear())
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["FULLY_CONNECTED"]
    assert any("folded TRANSPOSE op 0 into FULLY_CONNECTED op 2" in n
               for n in compiled.summary()["notes"])
    assert "mb_transpose" not in compiled.sources["model.c"]
    assert_bit_exact(path, n=8, seed=2, tmp_path=tmp_path)


def test_transpose_with_other_quantization_is_not_folded(tmp_path):
    """TFLM's TRANSPOSE copies raw values; a FULLY_CONNECTED that reads them with another zero
    point must keep reading the transposed tensor's parameters: no folding then."""
    path = tmp_path / "requantizing.tflite"
    path.write_bytes(_flatten_before_linear(quant_matches=False))
    with pytest.raises(Exception, match="quantized differently"):
        compile_model(path)


def test_pytorch_export_runs_only_the_input_transpose():
    compiled = compile_model(MODELS / "torch_cnn_flatten.tflite")
    opcodes = [op["opcode"] for op in compiled.summary()["ops"]]
    assert opcodes.count("TRANSPOSE") == 1 and opcodes[0] == "TRANSPOSE"
    assert "RESHAPE" not in opcodes


def test_constant_transpose_is_evaluated_at_compile_time(tmp_path):
    b = ModelBuilder()
    table = b.constant("table", np.arange(24, dtype=np.int8).reshape(2, 3, 4), scale=0.1)
    perm = b.constant("perm", np.array([2, 0, 1], np.int32))
    t = b.tensor("t", (4, 2, 3), "int8", 0.1, 0)
    x = b.tensor("x", (4, 2, 3), "int8", 0.1, 0)
    y = b.tensor("y", (4, 2, 3), "int8", 0.1, 0)
    b.operator("TRANSPOSE", [table, perm], [t])
    b.operator("ADD", [x, t], [y], "AddOptions")
    path = tmp_path / "const.tflite"
    path.write_bytes(b.build([x], [y]))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert_bit_exact(path, n=4, seed=1, tmp_path=tmp_path)


def test_dimensions_that_walk_the_input_as_one_are_merged():
    """The kernel's index arithmetic is per run: pairs of output dimensions that continue each
    other's input walk become one, size-1 dimensions vanish."""
    from microbuild.compiler.ops.depth_space import PERMUTATION
    from microbuild.compiler.ops.transpose import merged_dims
    # DEPTH_TO_SPACE of (1, 4, 6, 8), block 2: rows of block * C = 4 contiguous elements.
    assert merged_dims((1, 4, 6, 2, 2, 2), PERMUTATION) == [(4, 48), (2, 4), (6, 8), (4, 1)]
    # NHWC -> NCHW: H and W walk the input as one dimension of 30 steps of C.
    assert merged_dims((1, 6, 5, 4), (0, 3, 1, 2)) == [(4, 1), (30, 4)]
    # A permutation that only moves size-1 dimensions is one run of the whole tensor.
    assert merged_dims((1, 3, 1, 5), (2, 1, 0, 3)) == [(15, 1)]
    assert merged_dims((1, 1), (1, 0)) == [(1, 1)]
