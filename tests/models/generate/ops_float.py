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
    unary("logistic", "LOGISTIC", (3, 21), scale=20.0)
    unary("tanh", "TANH", (50,), scale=6.0)
    unary("relu", "RELU", (2, 10))
    unary("relu6", "RELU6", (2, 10), scale=8.0)
    unary("softmax", "SOFTMAX", (3, 10), scale=30.0, options="SoftmaxOptions", beta=1.0)
    unary("softmax_beta", "SOFTMAX", (2, 17), scale=4.0, options="SoftmaxOptions", beta=0.37)
    cast("cast_s16_f32", "int16", "float32")
    cast("cast_f32_s32", "float32", "int32")
    reshape("reshape")
    lstm("lstm", 1, 6, 5, 7, seed=8)
    lstm("lstm_batch2_clip", 2, 4, 3, 6, cell_clip=0.75, seed=9)
    lstm("lstm_time_major", 2, 3, 4, 5, time_major=True, seed=10)


if __name__ == "__main__":
    models()
