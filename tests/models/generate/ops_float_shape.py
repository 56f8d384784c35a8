"""Float32 models (tests/models/float/) for the spatial, selection and layout operators:
TRANSPOSE_CONV, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, TRANSPOSE, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, BATCH_MATMUL, ARG_MAX/ARG_MIN,
FLOOR_DIV/FLOOR_MOD, SVDF, the six comparisons and SELECT_V2, in the variants their float kernels
distinguish, made with tflite_builder (numpy and the flatbuffer schema only)::

    .venv/bin/python tests/models/generate/ops_float_shape.py

To keep the test time down, each model holds one family of operators side by side (one instance
per variant, each its own model output), so one compile and one TFLM run check them all. They
join ops_float.py's models in tests/models/float, so the host test
(tests/compiler/test_ops_float.py) and the shared Arm firmware
(tests/firmware/test_float_sweep_qemu.py) pick them up. SPACE_TO_BATCH_ND has no padding here:
TFLM fills padding with a value its Prepare never sets (microbuild/compiler/ops/space_batch.py).
"""

from __future__ import annotations

import numpy as np
from common import save
from ops_float import ACT, PADDING, _weights
from tflite_builder import ModelBuilder


def _params(b, name, values):
    return b.constant(name, np.array(values, np.int32))


def layout_ops():
    """Every value-moving operator on one input [2, 4, 6, 4]."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 4, 6, 4), "float32")
    outputs = []

    def op(name, opcode, out_shape, params=(), options=None, **fields):
        y = b.tensor(name, out_shape, "float32")
        extra = [_params(b, f"{name}_p{k}", v) for k, v in enumerate(params)]
        b.operator(opcode, [x, *extra], [y], options, **fields)
        outputs.append(y)

    op("transpose", "TRANSPOSE", (6, 2, 4, 4), [[2, 0, 3, 1]])
    op("depth_to_space", "DEPTH_TO_SPACE", (2, 8, 12, 1), options="DepthToSpaceOptions",
       blockSize=2)
    op("space_to_depth", "SPACE_TO_DEPTH", (2, 2, 3, 16), options="SpaceToDepthOptions",
       blockSize=2)
    op("space_to_batch_nd", "SPACE_TO_BATCH_ND", (12, 2, 2, 4), [[2, 3], [[0, 0], [0, 0]]],
       options="SpaceToBatchNDOptions")
    op("batch_to_space_nd", "BATCH_TO_SPACE_ND", (1, 7, 6, 4), [[2, 1], [[0, 1], [0, 0]]],
       options="BatchToSpaceNDOptions")
    op("mirror_pad_reflect", "MIRROR_PAD", (2, 7, 7, 4), [[[0, 0], [2, 1], [0, 1], [0, 0]]],
       options="MirrorPadOptions", mode=0)
    op("mirror_pad_symmetric", "MIRROR_PAD", (3, 4, 10, 6), [[[1, 0], [0, 0], [3, 1], [0, 2]]],
       options="MirrorPadOptions", mode=1)
    for name, size, align, half in (("resize_nearest", (7, 9), False, False),
                                    ("resize_nearest_half_pixel", (3, 7), False, True),
                                    ("resize_nearest_align_corners", (7, 5), True, False)):
        op(name, "RESIZE_NEAREST_NEIGHBOR", (2, *size, 4), [list(size)],
           options="ResizeNearestNeighborOptions", alignCorners=align, halfPixelCenters=half)
    save("float/layout_ops.tflite", b.build([x], outputs))


def resize_bilinear():
    """Plain, half-pixel and align-corners resizes of one input [2, 5, 3, 3]."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 5, 3, 3), "float32")
    outputs = []
    for name, size, align, half in (("plain", (7, 9), False, False),
                                    ("half_pixel", (8, 7), False, True),
                                    ("align_corners", (7, 2), True, False)):
        y = b.tensor(name, (2, *size, 3), "float32")
        b.operator("RESIZE_BILINEAR", [x, _params(b, f"{name}_size", list(size))], [y],
                   "ResizeBilinearOptions", alignCorners=align, halfPixelCenters=half)
        outputs.append(y)
    save("float/resize_bilinear.tflite", b.build([x], outputs))


def transpose_conv(seed=21):
    """SAME stride 2 with a bias, VALID stride 1 RELU, SAME stride 2 RELU6 without a bias, on one
    input [2, 4, 5, 3]."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    n, h, w, c = 2, 4, 5, 3
    x = b.tensor("x", (n, h, w, c), "float32")
    outputs = []
    for name, kernel, out_c, stride, padding, activation, bias in (
            ("same_stride2", (3, 3), 4, 2, "SAME", "NONE", True),
            ("valid_relu", (2, 4), 3, 1, "VALID", "RELU", True),
            ("nobias_relu6", (3, 3), 6, 2, "SAME", "RELU6", False)):
        kh, kw = kernel
        oh, ow = (h * stride, w * stride) if padding == "SAME" else \
            ((h - 1) * stride + kh, (w - 1) * stride + kw)
        shape = _params(b, f"{name}_shape", [n, oh, ow, out_c])
        f = b.constant(f"{name}_f", _weights(rng, (out_c, kh, kw, c), 1 / np.sqrt(kh * kw * c)))
        inputs = [shape, f, x]
        if bias:
            inputs.append(b.constant(f"{name}_bias", _weights(rng, (out_c,), 0.3)))
        y = b.tensor(name, (n, oh, ow, out_c), "float32")
        b.operator("TRANSPOSE_CONV", inputs, [y], "TransposeConvOptions",
                   padding=PADDING[padding], strideH=stride, strideW=stride,
                   fusedActivationFunction=ACT[activation])
        outputs.append(y)
    save("float/transpose_conv.tflite", b.build([x], outputs))


def batch_matmul(seed=24):
    """lhs x rhs, both inputs; the adj_x / adj_y case with broadcast batches; lhs x a constant."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    lhs, rhs = b.tensor("lhs", (2, 3, 17), "float32"), b.tensor("rhs", (2, 17, 4), "float32")
    lhs_t = b.tensor("lhs_t", (2, 1, 6, 3), "float32")
    rhs_t = b.tensor("rhs_t", (4, 5, 6), "float32")
    weights = b.constant("weights", _weights(rng, (17, 7)))
    plain = b.tensor("plain", (2, 3, 4), "float32")
    b.operator("BATCH_MATMUL", [lhs, rhs], [plain], "BatchMatMulOptions", adjX=False, adjY=False)
    adjoint = b.tensor("adjoint_broadcast", (2, 4, 3, 5), "float32")
    b.operator("BATCH_MATMUL", [lhs_t, rhs_t], [adjoint], "BatchMatMulOptions", adjX=True,
               adjY=True)
    constant = b.tensor("constant_rhs", (2, 3, 7), "float32")
    b.operator("BATCH_MATMUL", [lhs, weights], [constant], "BatchMatMulOptions", adjX=False,
               adjY=False)
    save("float/batch_matmul.tflite", b.build([lhs, rhs, lhs_t, rhs_t],
                                              [plain, adjoint, constant]))


def arg_max_min():
    b = ModelBuilder()
    x = b.tensor("x", (3, 4, 10), "float32")
    arg_max, arg_min = b.tensor("arg_max", (3, 4), "int32"), b.tensor("arg_min", (3, 10), "int32")
    # outputType 2: TensorType INT32.
    b.operator("ARG_MAX", [x, _params(b, "axis2", [2])], [arg_max], "ArgMaxOptions", outputType=2)
    b.operator("ARG_MIN", [x, _params(b, "axis1", [1])], [arg_min], "ArgMinOptions", outputType=2)
    save("float/arg_max_min.tflite", b.build([x], [arg_max, arg_min]))


def floor_div_mod(seed=25):
    """FLOOR_DIV of two inputs; FLOOR_MOD by a constant broadcast along the rows."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    a, d = b.tensor("a", (4, 6), "float32"), b.tensor("d", (4, 6), "float32")
    div, mod = b.tensor("floor_div", (4, 6), "float32"), b.tensor("floor_mod", (4, 6), "float32")
    b.operator("FLOOR_DIV", [a, d], [div])
    b.operator("FLOOR_MOD", [a, b.constant("m", _weights(rng, (6,)))], [mod])
    save("float/floor_div_mod.tflite", b.build([a, d], [div, mod]))


def svdf(seed=26):
    """Rank 1 without activation; rank 2, two batches, RELU. The states are variable tensors:
    the tests' invocations carry them from one to the next."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    inputs, outputs = [], []
    for name, batches, input_size, units, rank, memory, activation in (
            ("rank1", 1, 9, 4, 1, 5, "NONE"), ("rank2_relu", 2, 6, 3, 2, 4, "RELU")):
        filters = units * rank
        x = b.tensor(f"{name}_x", (batches, input_size), "float32")
        wf = b.constant(f"{name}_wf", _weights(rng, (filters, input_size), 0.6))
        wt = b.constant(f"{name}_wt", _weights(rng, (filters, memory), 0.6))
        bias = b.constant(f"{name}_bias", _weights(rng, (units,), 0.3))
        state = b.tensor(f"{name}_state", (batches, filters * memory), "float32", variable=True)
        y = b.tensor(name, (batches, units), "float32")
        b.operator("SVDF", [x, wf, wt, bias, state], [y], "SVDFOptions", rank=rank,
                   fusedActivationFunction=ACT[activation])
        inputs.append(x)
        outputs.append(y)
    save("float/svdf.tflite", b.build(inputs, outputs))


def comparisons():
    """The six comparisons of max(a, 0) and max(c, 0), c broadcast along a's rows: the MAXIMUMs
    make equal values (both 0) common enough for EQUAL and the *_EQUAL ones to see them."""
    b = ModelBuilder()
    zero = b.constant("zero", np.array(0.0, np.float32))
    a, c = b.tensor("a", (2, 3, 4), "float32"), b.tensor("c", (3, 1), "float32")
    a0, c0 = b.tensor("a0", (2, 3, 4), "float32"), b.tensor("c0", (3, 1), "float32")
    b.operator("MAXIMUM", [a, zero], [a0])
    b.operator("MAXIMUM", [c, zero], [c0])
    outputs = []
    for opcode in ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL"):
        y = b.tensor(opcode.lower(), (2, 3, 4), "bool")
        b.operator(opcode, [a0, c0], [y])
        outputs.append(y)
    save("float/comparisons.tflite", b.build([a, c], outputs))


def select_v2():
    """SELECT_V2(a < c, x, z) with all three broadcast, and with none broadcast."""
    b = ModelBuilder()
    a, c = b.tensor("a", (3, 1), "float32"), b.tensor("c", (3, 1), "float32")
    x, z = b.tensor("x", (1, 4), "float32"), b.tensor("z", (3, 4), "float32")
    cond = b.tensor("cond", (3, 1), "bool")
    b.operator("LESS", [a, c], [cond])
    broadcast = b.tensor("broadcast", (3, 4), "float32")
    b.operator("SELECT_V2", [cond, x, z], [broadcast])
    full_cond = b.tensor("full_cond", (3, 4), "bool")
    b.operator("LESS", [z, broadcast], [full_cond])
    same_shape = b.tensor("same_shape", (3, 4), "float32")
    b.operator("SELECT_V2", [full_cond, broadcast, z], [same_shape])
    save("float/select_v2.tflite", b.build([a, c, x, z], [broadcast, same_shape]))


def models() -> None:
    layout_ops()
    resize_bilinear()
    transpose_conv()
    batch_matmul()
    arg_max_min()
    floor_div_mod()
    svdf()
    comparisons()
    select_v2()


if __name__ == "__main__":
    models()
