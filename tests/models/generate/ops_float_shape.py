"""Single-operator float32 models (tests/models/float/) for the spatial, selection and layout
operators: TRANSPOSE_CONV, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, TRANSPOSE, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, BATCH_MATMUL, ARG_MAX/ARG_MIN,
FLOOR_DIV/FLOOR_MOD, SVDF, the six comparisons and SELECT_V2, in the variants their float kernels
distinguish, made with tflite_builder (numpy and the flatbuffer schema only)::

    .venv/bin/python tests/models/generate/ops_float_shape.py

They join ops_float.py's models in tests/models/float, so the host test
(tests/compiler/test_ops_float.py) and the shared Arm firmware
(tests/firmware/test_float_sweep_qemu.py) pick them up. SPACE_TO_BATCH_ND has no padding here:
TFLM fills padding with a value its Prepare never sets (microbuild/compiler/ops/space_batch.py).
"""

from __future__ import annotations

import numpy as np
from common import save
from ops_float import ACT, PADDING, _weights, binary
from tflite_builder import ModelBuilder


def _single(name, opcode, in_shape, out_shape, params=(), options=None, **fields):
    """x -> opcode(x, *constant params) -> y, all float32 but the int32 parameters."""
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    extra = [b.constant(f"p{k}", np.array(v, np.int32)) for k, v in enumerate(params)]
    y = b.tensor("y", out_shape, "float32")
    b.operator(opcode, [x, *extra], [y], options, **fields)
    save(f"float/{name}.tflite", b.build([x], [y]))


def transpose_conv(name, in_shape, kernel, out_c, stride, padding="SAME", activation="NONE",
                   bias=True, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, c = in_shape
    kh, kw = kernel
    if padding == "SAME":
        oh, ow = h * stride, w * stride
    else:
        oh, ow = (h - 1) * stride + kh, (w - 1) * stride + kw
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    shape = b.constant("shape", np.array([n, oh, ow, out_c], np.int32))
    f = b.constant("f", _weights(rng, (out_c, kh, kw, c), 1 / np.sqrt(kh * kw * c)))
    inputs = [shape, f, x] + ([b.constant("bias", _weights(rng, (out_c,), 0.3))] if bias else [])
    y = b.tensor("y", (n, oh, ow, out_c), "float32")
    b.operator("TRANSPOSE_CONV", inputs, [y], "TransposeConvOptions", padding=PADDING[padding],
               strideH=stride, strideW=stride, fusedActivationFunction=ACT[activation])
    save(f"float/{name}.tflite", b.build([x], [y]))


def batch_matmul(name, lhs_shape, rhs_shape, out_shape, adj_x=False, adj_y=False,
                 constant_rhs=False, seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    lhs = b.tensor("lhs", lhs_shape, "float32")
    rhs = b.constant("rhs", _weights(rng, rhs_shape)) if constant_rhs \
        else b.tensor("rhs", rhs_shape, "float32")
    y = b.tensor("y", out_shape, "float32")
    b.operator("BATCH_MATMUL", [lhs, rhs], [y], "BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    save(f"float/{name}.tflite", b.build([lhs] if constant_rhs else [lhs, rhs], [y]))


def arg(name, opcode, in_shape, axis):
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    axis_t = b.constant("axis", np.array([axis], np.int32))
    y = b.tensor("y", tuple(d for k, d in enumerate(in_shape) if k != axis), "int32")
    options = "ArgMaxOptions" if opcode == "ARG_MAX" else "ArgMinOptions"
    b.operator(opcode, [x, axis_t], [y], options, outputType=2)  # TensorType INT32
    save(f"float/{name}.tflite", b.build([x], [y]))


def svdf(name, batches, input_size, units, rank, memory, activation="NONE", seed=0):
    """The state is a variable tensor: the tests' invocations carry it from one to the next."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    b = ModelBuilder()
    x = b.tensor("x", (batches, input_size), "float32")
    wf = b.constant("weights_feature", _weights(rng, (filters, input_size), 0.6))
    wt = b.constant("weights_time", _weights(rng, (filters, memory), 0.6))
    bias = b.constant("bias", _weights(rng, (units,), 0.3))
    state = b.tensor("state", (batches, filters * memory), "float32", variable=True)
    y = b.tensor("y", (batches, units), "float32")
    b.operator("SVDF", [x, wf, wt, bias, state], [y], "SVDFOptions", rank=rank,
               fusedActivationFunction=ACT[activation])
    save(f"float/{name}.tflite", b.build([x], [y]))


def comparison(name, opcode, a_shape, b_shape, out_shape):
    """opcode(max(a, 0), max(b, 0)): the MAXIMUMs make equal values (both 0) common enough for
    EQUAL and the *_EQUAL comparisons to see them."""
    b = ModelBuilder()
    zero = b.constant("zero", np.array(0.0, np.float32))
    a, c = b.tensor("a", a_shape, "float32"), b.tensor("b", b_shape, "float32")
    a0, c0 = b.tensor("a0", a_shape, "float32"), b.tensor("b0", b_shape, "float32")
    b.operator("MAXIMUM", [a, zero], [a0])
    b.operator("MAXIMUM", [c, zero], [c0])
    y = b.tensor("y", out_shape, "bool")
    b.operator(opcode, [a0, c0], [y])
    save(f"float/{name}.tflite", b.build([a, c], [y]))


def select_v2(name, cond_shape, x_shape, y_shape, out_shape):
    """SELECT_V2(a < b, x, y), the condition computed from two more float inputs."""
    b = ModelBuilder()
    a, c = b.tensor("a", cond_shape, "float32"), b.tensor("c", cond_shape, "float32")
    cond = b.tensor("cond", cond_shape, "bool")
    b.operator("LESS", [a, c], [cond])
    x, z = b.tensor("x", x_shape, "float32"), b.tensor("z", y_shape, "float32")
    y = b.tensor("y", out_shape, "float32")
    b.operator("SELECT_V2", [cond, x, z], [y])
    save(f"float/{name}.tflite", b.build([a, c, x, z], [y]))


def models() -> None:
    transpose_conv("transpose_conv_same_stride2", (1, 4, 5, 3), (3, 3), 4, 2, seed=21)
    transpose_conv("transpose_conv_valid_relu_batch2", (2, 3, 3, 5), (2, 4), 3, 1, "VALID",
                   "RELU", seed=22)
    transpose_conv("transpose_conv_nobias_relu6", (1, 5, 4, 2), (3, 3), 6, 2, activation="RELU6",
                   bias=False, seed=23)
    _single("transpose", "TRANSPOSE", (2, 3, 4, 5), (4, 2, 5, 3), [[2, 0, 3, 1]])
    _single("depth_to_space", "DEPTH_TO_SPACE", (1, 3, 4, 8), (1, 6, 8, 2),
            options="DepthToSpaceOptions", blockSize=2)
    _single("space_to_depth", "SPACE_TO_DEPTH", (2, 6, 4, 3), (2, 3, 2, 12),
            options="SpaceToDepthOptions", blockSize=2)
    _single("space_to_batch_nd", "SPACE_TO_BATCH_ND", (1, 4, 6, 3), (6, 2, 2, 3),
            [[2, 3], [[0, 0], [0, 0]]], options="SpaceToBatchNDOptions")
    _single("batch_to_space_nd_crop", "BATCH_TO_SPACE_ND", (4, 3, 3, 2), (1, 5, 4, 2),
            [[2, 2], [[0, 1], [1, 1]]], options="BatchToSpaceNDOptions")
    _single("mirror_pad_reflect", "MIRROR_PAD", (1, 4, 5, 3), (1, 7, 6, 3),
            [[[0, 0], [2, 1], [0, 1], [0, 0]]], options="MirrorPadOptions", mode=0)
    _single("mirror_pad_symmetric", "MIRROR_PAD", (3, 4), (6, 8), [[[1, 2], [3, 1]]],
            options="MirrorPadOptions", mode=1)
    _single("resize_nearest", "RESIZE_NEAREST_NEIGHBOR", (1, 3, 4, 2), (1, 7, 9, 2), [[7, 9]],
            options="ResizeNearestNeighborOptions", alignCorners=False, halfPixelCenters=False)
    _single("resize_nearest_half_pixel", "RESIZE_NEAREST_NEIGHBOR", (2, 5, 3, 3), (2, 3, 7, 3),
            [[3, 7]], options="ResizeNearestNeighborOptions", alignCorners=False,
            halfPixelCenters=True)
    _single("resize_nearest_align_corners", "RESIZE_NEAREST_NEIGHBOR", (1, 4, 4, 1),
            (1, 7, 5, 1), [[7, 5]], options="ResizeNearestNeighborOptions", alignCorners=True,
            halfPixelCenters=False)
    _single("resize_bilinear", "RESIZE_BILINEAR", (1, 3, 4, 2), (1, 7, 9, 2), [[7, 9]],
            options="ResizeBilinearOptions", alignCorners=False, halfPixelCenters=False)
    _single("resize_bilinear_half_pixel", "RESIZE_BILINEAR", (2, 5, 3, 3), (2, 8, 7, 3),
            [[8, 7]], options="ResizeBilinearOptions", alignCorners=False, halfPixelCenters=True)
    _single("resize_bilinear_align_corners", "RESIZE_BILINEAR", (1, 4, 5, 1), (1, 7, 3, 1),
            [[7, 3]], options="ResizeBilinearOptions", alignCorners=True, halfPixelCenters=False)
    batch_matmul("batch_matmul", (2, 3, 17), (2, 17, 4), (2, 3, 4))
    batch_matmul("batch_matmul_broadcast_adj", (2, 1, 6, 3), (4, 5, 6), (2, 4, 3, 5),
                 adj_x=True, adj_y=True)
    batch_matmul("batch_matmul_constant_rhs", (3, 9), (9, 7), (3, 7), constant_rhs=True, seed=24)
    arg("arg_max_last_axis", "ARG_MAX", (3, 4, 10), 2)
    arg("arg_min_middle_axis", "ARG_MIN", (2, 7, 5), 1)
    binary("floor_div", "FLOOR_DIV", (3, 8), (3, 8), (3, 8))
    binary("floor_mod_broadcast", "FLOOR_MOD", (4, 6), (6,), (4, 6), constant_b=True, seed=25)
    svdf("svdf", 1, 9, 4, 1, 5, seed=26)
    svdf("svdf_rank2_batch2_relu", 2, 6, 3, 2, 4, "RELU", seed=27)
    comparison("equal", "EQUAL", (3, 8), (3, 8), (3, 8))
    comparison("not_equal_broadcast", "NOT_EQUAL", (2, 3, 4), (4,), (2, 3, 4))
    comparison("less", "LESS", (20,), (20,), (20,))
    comparison("less_equal_broadcast", "LESS_EQUAL", (4, 1), (1, 5), (4, 5))
    comparison("greater", "GREATER", (2, 9), (2, 9), (2, 9))
    comparison("greater_equal_scalar", "GREATER_EQUAL", (3, 7), (), (3, 7))
    select_v2("select_v2", (2, 6), (2, 6), (2, 6), (2, 6))
    select_v2("select_v2_broadcast", (3, 1), (1, 4), (3, 4), (3, 4))


if __name__ == "__main__":
    models()
