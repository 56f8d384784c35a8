"""Every float32 sweep model (tests/models/float/, made by tests/models/generate/ops_float.py, one
operator each, and ops_float_math.py, several operators side by side) bit-exact (bytes) with TFLM
on the host, over several
invocations (the LSTMs keep their states). The same models on the Arm boards in QEMU:
tests/firmware/test_float_sweep_qemu.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import random_inputs
from test_float_models import assert_same_bytes

from microbuild.model.reader import read_model

FLOAT_DIR = Path(__file__).resolve().parent.parent / "models" / "float"
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
