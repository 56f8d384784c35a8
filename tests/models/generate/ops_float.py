"""Single-operator float32 models (tests/models/float/): every operator microbuild compiles in
float32, in the variants its float kernel distinguishes (fused activations, broadcasting, bias or
none, batches, a stateful LSTM with a cell clip, time-major), made with tflite_builder (numpy and
the flatbuffer schema only: no TensorFlow needed)::

    .venv/bin/python tests/models/generate/ops_float.py

The tests feed them seeded inputs uniform in [-1, 1) (tests/compiler/compiler_support.py), so a
model that needs larger values to reach a kernel's edge cases (LOGISTIC's cut-offs at -9 and
16.6, TANH's saturation, SOFTMAX with large logits) scales its input by a constant first.
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder

ACT = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4}


def _weights(rng, shape, spread=1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * spread).astype(np.float32)


def fully_connected(name, batches, depth, units, bias=True, activation="NONE", seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.tensor("x", (batches, depth), "float32")
    w = b.constant("w", _weights(rng, (units, depth), 1 / np.sqrt(depth)))
    bias_t = b.constant("b", _weights(rng, (units,), 0.5)) if bias else -1
    y = b.tensor("y", (batches, units), "float32")
    b.operator("FULLY_CONNECTED", [x, w, bias_t], [y], "FullyConnectedOptions",
               fusedActivationFunction=ACT[activation])
    save(f"float/{name}.tflite", b.build([x], [y]))


def binary(name, opcode, a_shape, b_shape, out_shape, activation=None, constant_b=False,
           seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    a = b.tensor("a", a_shape, "float32")
    if constant_b:
        other = b.constant("b", _weights(rng, b_shape))
    else:
        other = b.tensor("b", b_shape, "float32")
    y = b.tensor("y", out_shape, "float32")
    options = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
               "DIV": "DivOptions"}.get(opcode)
    if options is not None:
        b.operator(opcode, [a, other], [y], options,
                   fusedActivationFunction=ACT[activation or "NONE"])
    else:
        b.operator(opcode, [a, other], [y])
    save(f"float/{name}.tflite", b.build([a] if constant_b else [a, other], [y]))


def unary(name, opcode, shape, scale=None, options=None, **fields):
    """``opcode`` on the input, first multiplied by the constant ``scale`` when given."""
    b = ModelBuilder()
    x = b.tensor("x", shape, "float32")
    src = x
    if scale is not None:
        k = b.constant("k", np.array(scale, np.float32))
        src = b.tensor("scaled", shape, "float32")
        b.operator("MUL", [x, k], [src], "MulOptions", fusedActivationFunction=0)
    y = b.tensor("y", shape, "float32")
    b.operator(opcode, [src], [y], options, **fields)
    save(f"float/{name}.tflite", b.build([x], [y]))


def cast(name, src_dtype, dst_dtype, shape=(2, 7)):
    """A float model's CASTs: int16 in -> float32 (the audio front end's), or float32 scaled by
    100 -> int32."""
    b = ModelBuilder()
    x = b.tensor("x", shape, src_dtype)
    src = x
    if src_dtype == "float32":
        k = b.constant("k", np.array(100.0, np.float32))
        src = b.tensor("scaled", shape, "float32")
        b.operator("MUL", [x, k], [src], "MulOptions", fusedActivationFunction=0)
    y = b.tensor("y", shape, dst_dtype)
    b.operator("CAST", [src], [y])
    save(f"float/{name}.tflite", b.build([x], [y]))


def lstm(name, batch, steps, depth, units, cell_clip=0.0, time_major=False, seed=0):
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    shape = (steps, batch, depth) if time_major else (batch, steps, depth)
    x = b.tensor("x", shape, "float32")
    gates = ("input", "forget", "cell", "output")
    w_in = [b.constant(f"{g}_w", _weights(rng, (units, depth), 0.8)) for g in gates]
    w_rec = [b.constant(f"{g}_r", _weights(rng, (units, units), 0.8)) for g in gates]
    biases = [b.constant(f"{g}_b", _weights(rng, (units,), 0.5)) for g in gates]
    hidden = b.tensor("output_state", (batch, units), "float32", variable=True)
    cell = b.tensor("cell_state", (batch, units), "float32", variable=True)
    inputs = [x] + w_in + w_rec + [-1, -1, -1] + biases + [-1, -1] + [hidden, cell] + [-1] * 4
    out_shape = (steps, batch, units) if time_major else (batch, steps, units)
    y = b.tensor("y", out_shape, "float32")
    b.operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], "UnidirectionalSequenceLSTMOptions",
               fusedActivationFunction=ACT["TANH"], cellClip=cell_clip, projClip=0.0,
               timeMajor=time_major)
    save(f"float/{name}.tflite", b.build([x], [y]))


PADDING = {"SAME": 0, "VALID": 1}


def conv(name, opcode, in_shape, filter_hw, out_c, stride=1, padding="SAME", dilation=1,
         activation="NONE", bias=True, groups=1, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, c = in_shape
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    fh, fw = filter_hw
    if opcode == "CONV_2D":
        f = b.constant("f", _weights(rng, (out_c, fh, fw, c // groups), 1 / np.sqrt(fh * fw * c)))
    else:
        f = b.constant("f", _weights(rng, (1, fh, fw, out_c), 1 / np.sqrt(fh * fw)))
    bias_t = b.constant("bias", _weights(rng, (out_c,), 0.3)) if bias else -1
    eff_h, eff_w = (fh - 1) * dilation + 1, (fw - 1) * dilation + 1
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
    else:
        oh, ow = (h - eff_h) // stride + 1, (w - eff_w) // stride + 1
    y = b.tensor("y", (n, oh, ow, out_c), "float32")
    common = dict(padding=PADDING[padding], strideH=stride, strideW=stride,
                  dilationHFactor=dilation, dilationWFactor=dilation,
                  fusedActivationFunction=ACT[activation])
    if opcode == "CONV_2D":
        b.operator(opcode, [x, f, bias_t], [y], "Conv2DOptions", **common)
    else:
        b.operator(opcode, [x, f, bias_t], [y], "DepthwiseConv2DOptions",
                   depthMultiplier=out_c // c, **common)
    save(f"float/{name}.tflite", b.build([x], [y]))


def pool(name, opcode, in_shape, window, stride, padding="SAME", activation="NONE"):
    n, h, w, c = in_shape
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-w // stride)
    else:
        oh, ow = (h - window) // stride + 1, (w - window) // stride + 1
    y = b.tensor("y", (n, oh, ow, c), "float32")
    b.operator(opcode, [x], [y], "Pool2DOptions", padding=PADDING[padding], strideH=stride,
               strideW=stride, filterHeight=window, filterWidth=window,
               fusedActivationFunction=ACT[activation])
    save(f"float/{name}.tflite", b.build([x], [y]))


def concatenation(name):
    b = ModelBuilder()
    a = b.tensor("a", (2, 3, 4), "float32")
    c = b.tensor("c", (2, 5, 4), "float32")
    y = b.tensor("y", (2, 8, 4), "float32")
    b.operator("CONCATENATION", [a, c], [y], "ConcatenationOptions", axis=1,
               fusedActivationFunction=0)
    save(f"float/{name}.tflite", b.build([a, c], [y]))


def pad(name, opcode, in_shape, paddings, value=None):
    b = ModelBuilder()
    x = b.tensor("x", in_shape, "float32")
    pads = b.constant("paddings", np.array(paddings, np.int32))
    out_shape = tuple(d + lo + hi for d, (lo, hi) in zip(in_shape, paddings))
    inputs = [x, pads]
    if value is not None:
        inputs.append(b.constant("value", np.array(value, np.float32)))
    y = b.tensor("y", out_shape, "float32")
    b.operator(opcode, inputs, [y])
    save(f"float/{name}.tflite", b.build([x], [y]))


def reshape(name):
    b = ModelBuilder()
    x = b.tensor("x", (2, 3, 4), "float32")
    shape = b.constant("shape", np.array([6, 4], np.int32))
    y = b.tensor("y", (6, 4), "float32")
    b.operator("RESHAPE", [x, shape], [y])
    save(f"float/{name}.tflite", b.build([x], [y]))


def models() -> None:
    fully_connected("fc_bias", 1, 37, 9, seed=1)
    fully_connected("fc_relu_batch3", 3, 16, 13, activation="RELU", seed=2)
    fully_connected("fc_nobias_relu6", 2, 64, 5, bias=False, activation="RELU6", seed=3)
    fully_connected("fc_relu_n1_to_1", 1, 8, 4, activation="RELU_N1_TO_1", seed=4)
    binary("add", "ADD", (2, 3, 5), (2, 3, 5), (2, 3, 5))
    binary("add_broadcast_relu6", "ADD", (2, 3, 5), (1, 1, 5), (2, 3, 5), "RELU6", True, seed=5)
    binary("sub_broadcast", "SUB", (4, 1), (1, 6), (4, 6))
    binary("mul_scalar", "MUL", (40,), (), (40,), constant_b=True, seed=6)
    binary("mul_relu", "MUL", (3, 8), (3, 8), (3, 8), "RELU")
    binary("div", "DIV", (2, 9), (2, 9), (2, 9))
    binary("minimum_broadcast", "MINIMUM", (3, 4), (4,), (3, 4), constant_b=True, seed=7)
    binary("maximum", "MAXIMUM", (12,), (12,), (12,))
    binary("squared_difference_broadcast", "SQUARED_DIFFERENCE", (2, 5), (1, 5), (2, 5))
    unary("logistic", "LOGISTIC", (3, 21), scale=20.0)
    unary("tanh", "TANH", (50,), scale=6.0)
    unary("relu", "RELU", (2, 10))
    unary("exp", "EXP", (3, 11), scale=12.0)
    unary("neg", "NEG", (9,))
    unary("abs", "ABS", (4, 6))
    # LOG and RSQRT of |x| (and of x < 0 too: NaN, as TFLM's).
    unary("log", "LOG", (40,), scale=50.0)
    unary("rsqrt", "RSQRT", (33,), scale=3.0)
    unary("relu6", "RELU6", (2, 10), scale=8.0)
    unary("softmax", "SOFTMAX", (3, 10), scale=30.0, options="SoftmaxOptions", beta=1.0)
    unary("softmax_beta", "SOFTMAX", (2, 17), scale=4.0, options="SoftmaxOptions", beta=0.37)
    cast("cast_s16_f32", "int16", "float32")
    cast("cast_f32_s32", "float32", "int32")
    reshape("reshape")
    concatenation("concatenation")
    pad("pad", "PAD", (1, 4, 5, 3), [[0, 0], [1, 2], [2, 0], [0, 1]])
    pad("padv2_value", "PADV2", (3, 4), [[1, 1], [0, 3]], value=-2.5)
    conv("conv_same_relu", "CONV_2D", (1, 7, 6, 3), (3, 3), 5, activation="RELU", seed=11)
    conv("conv_valid_stride2_nobias", "CONV_2D", (2, 9, 8, 4), (3, 2), 6, stride=2,
         padding="VALID", bias=False, seed=12)
    conv("conv_dilated_relu6", "CONV_2D", (1, 8, 8, 2), (3, 3), 4, dilation=2,
         activation="RELU6", seed=13)
    conv("conv_pointwise_grouped", "CONV_2D", (1, 4, 5, 8), (1, 1), 6, groups=2, seed=14)
    conv("depthwise_same", "DEPTHWISE_CONV_2D", (1, 6, 7, 4), (3, 3), 4, seed=15)
    conv("depthwise_mult2_stride2_relu", "DEPTHWISE_CONV_2D", (1, 9, 9, 3), (3, 3), 6,
         stride=2, activation="RELU", seed=16)
    # With a bias: TFLM-Python's float DEPTHWISE_CONV_2D without one crashes (segmentation
    # fault) on this model.
    conv("depthwise_valid_dilated", "DEPTHWISE_CONV_2D", (1, 8, 7, 2), (2, 3), 2, dilation=2,
         padding="VALID", seed=17)
    pool("average_pool_same", "AVERAGE_POOL_2D", (1, 7, 7, 3), 3, 2)
    pool("average_pool_valid_relu6", "AVERAGE_POOL_2D", (2, 6, 6, 2), 2, 2, "VALID", "RELU6")
    pool("max_pool_same", "MAX_POOL_2D", (1, 5, 6, 4), 3, 2)
    pool("max_pool_valid", "MAX_POOL_2D", (1, 8, 8, 2), 2, 2, "VALID")
    # depths past one block of 4 channels (spatial_f32.c's pooling: a block, then 1-3 lanes)
    pool("max_pool_same_c5", "MAX_POOL_2D", (1, 6, 5, 5), 3, 2)
    pool("average_pool_valid_c7_relu", "AVERAGE_POOL_2D", (1, 6, 6, 7), 3, 1, "VALID", "RELU")
    lstm("lstm", 1, 6, 5, 7, seed=8)
    lstm("lstm_batch2_clip", 2, 4, 3, 6, cell_clip=0.75, seed=9)
    lstm("lstm_time_major", 2, 3, 4, 5, time_major=True, seed=10)


if __name__ == "__main__":
    models()
