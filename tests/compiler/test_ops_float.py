"""Every single-operator float32 model (tests/models/float/, made by
tests/models/generate/ops_float.py) bit-exact (bytes) with TFLM on the host, over several
invocations (the LSTMs keep their states). The same models on the Arm boards in QEMU:
tests/firmware/test_float_sweep_qemu.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import random_inputs
from test_float_models import assert_same_bytes

FLOAT_DIR = Path(__file__).resolve().parent.parent / "models" / "float"
MODELS = sorted(FLOAT_DIR.glob("*.tflite"))


def test_the_float_sweep_covers_every_float_kernel():
    names = {p.stem for p in MODELS}
    for prefix in ("fc_", "add", "sub", "mul", "div", "minimum", "maximum", "logistic", "tanh",
                   "relu", "softmax", "cast_", "reshape", "lstm", "concatenation", "pad", "squared_difference", "exp", "log", "neg", "abs", "rsqrt", "conv_",
                   "depthwise_", "average_pool", "max_pool"):
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_float_op_is_bit_exact_with_tflm(model, tmp_path):
    # Alternate the compilers: every kernel file is compiled by both across the sweep.
    cc = "clang" if MODELS.index(model) % 2 else "gcc"
    assert_same_bytes(model, random_inputs(model, 3, seed=17), cc, tmp_path)


def test_the_float_sweep_covers_the_layout_and_selection_kernels():
    # tests/models/generate/ops_float_shape.py's models.
    names = {p.stem for p in MODELS}
    for prefix in ("transpose_conv", "transpose", "depth_to_space", "space_to_depth",
                   "space_to_batch_nd", "batch_to_space_nd", "mirror_pad", "resize_nearest",
                   "resize_bilinear", "batch_matmul", "arg_max", "arg_min", "floor_div",
                   "floor_mod", "svdf", "equal", "not_equal", "less", "less_equal", "greater",
                   "greater_equal", "select_v2"):
        assert any(n.startswith(prefix) for n in names), prefix
