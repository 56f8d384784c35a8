"""Every float32 sweep model (tests/models/float/, made by tests/models/generate/ops_float.py, one
operator each, and ops_float_math.py, several operators side by side) bit-exact (bytes) with TFLM
on the host, over several
invocations (the LSTMs keep their states). The same models on the Arm boards in QEMU:
tests/firmware/test_float_sweep_qemu.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import random_inputs
from test_float_models import assert_same_bytes

from microbuild.compiler import compile_model
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

FLOAT_DIR = Path(__file__).resolve().parent.parent / "models" / "float"
sys.path.insert(0, str(FLOAT_DIR.parent / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

MODELS = sorted(FLOAT_DIR.glob("*.tflite"))


def test_the_float_sweep_covers_every_float_kernel():
    names = {p.stem for p in MODELS}
    for prefix in ("fc_", "add", "sub", "mul", "div", "minimum", "maximum", "logistic", "tanh",
                   "relu", "softmax", "cast_", "reshape", "lstm", "concatenation", "pad", "squared_difference", "exp", "log", "neg", "abs", "rsqrt", "conv_",
                   "depthwise_", "average_pool", "max_pool"):
        assert any(n.startswith(prefix) for n in names), prefix
    # The math and reduction operators share models (ops_float_math.py): look at their ops.
    opcodes = {op.opcode for p in MODELS for op in read_model(p).operators}
    for opcode in ("MEAN", "SUM", "REDUCE_MAX", "REDUCE_MIN", "LEAKY_RELU", "HARD_SWISH", "PRELU",
                   "LOG_SOFTMAX", "SQRT", "SQUARE", "ELU", "FLOOR", "CEIL", "ROUND", "SIN", "COS",
                   "L2_NORMALIZATION", "L2_POOL_2D", "ADD_N"):
        assert opcode in opcodes, opcode


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_float_op_is_bit_exact_with_tflm(model, tmp_path):
    # Alternate the compilers: every kernel file is compiled by both across the sweep.
    cc = "clang" if MODELS.index(model) % 2 else "gcc"
    assert_same_bytes(model, random_inputs(model, 3, seed=17), cc, tmp_path)


def test_the_float_sweep_covers_the_layout_and_selection_kernels():
    # tests/models/generate/ops_float_shape.py's models hold several operators each.
    opcodes = {op.opcode for p in MODELS for op in read_model(p).operators}
    for opcode in ("TRANSPOSE_CONV", "TRANSPOSE", "DEPTH_TO_SPACE", "SPACE_TO_DEPTH",
                   "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND", "MIRROR_PAD",
                   "RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR", "BATCH_MATMUL", "ARG_MAX",
                   "ARG_MIN", "FLOOR_DIV", "FLOOR_MOD", "SVDF", "EQUAL", "NOT_EQUAL", "LESS",
                   "LESS_EQUAL", "GREATER", "GREATER_EQUAL", "SELECT_V2"):
        assert opcode in opcodes, opcode


def _float_refusal(tmp_path, build) -> str:
    """The compile error of a one-operator float model ``build(builder)`` returns (x, y) of."""
    b = ModelBuilder()
    x, y = build(b)
    path = tmp_path / "refused.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_a_float_svdf_with_an_activation_it_lacks_is_refused_naming_it(tmp_path):
    def build(b):
        x = b.tensor("x", (1, 4), "float32")
        wf = b.constant("wf", np.ones((3, 4), np.float32))
        wt = b.constant("wt", np.ones((3, 2), np.float32))
        state = b.tensor("state", (1, 6), "float32", variable=True)
        y = b.tensor("y", (1, 3), "float32")
        b.operator("SVDF", [x, wf, wt, -1, state], [y], "SVDFOptions", rank=1,
                   fusedActivationFunction=4)  # TANH
        return x, y

    message = _float_refusal(tmp_path, build)
    assert "SVDF" in message and "fused activation TANH is not supported for float SVDF" \
        in message


def test_a_float_transpose_conv_with_an_int8_filter_is_refused_as_hybrid(tmp_path):
    def build(b):
        x = b.tensor("x", (1, 2, 2, 3), "float32")
        shape = b.constant("shape", np.array([1, 4, 4, 2], np.int32))
        w = b.constant("w", np.ones((2, 3, 3, 3), np.int8), scale=0.1, zero_point=0)
        y = b.tensor("y", (1, 4, 4, 2), "float32")
        b.operator("TRANSPOSE_CONV", [shape, w, x], [y], "TransposeConvOptions", padding=0,
                   strideH=2, strideW=2)
        return x, y

    message = _float_refusal(tmp_path, build)
    # validate.py names the hybrid model before the lowering is reached, as TFLM refuses it.
    assert "hybrid" in message
