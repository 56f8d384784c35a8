"""Float32 models of the math and reduction operators (tests/models/float/, beside
ops_float.py's single-operator models), made with tflite_builder::

    .venv/bin/python tests/models/generate/ops_float_math.py

Each model holds several operators side by side, each reading the input and writing a model
output of its own, so that one build checks them all (the sweeps build and run each model on the
host and on three QEMU boards):

- math_unary: LEAKY_RELU, HARD_SWISH, LOG_SOFTMAX, SQRT, SQUARE, ELU, FLOOR, CEIL, ROUND, SIN,
  COS and L2_NORMALIZATION. The tests feed inputs uniform in [-1, 1), so each operator reads the
  input times a constant of its own that reaches its interesting range (SIN and COS over several
  periods, ELU's and HARD_SWISH's bends, LOG_SOFTMAX's large logits; SQRT of negative values too:
  NaN, as TFLM's). ROUND reads floor(8 x) / 2: many exact halves, which it rounds to even.
- math_reduce: MEAN over H and W with keep_dims (TFLM's special case) and over the last axis (its
  generic reduction), SUM over two axes, REDUCE_MAX over one and over three axes, REDUCE_MIN over
  two axes given out of order.
- math_multi: PRELU with a broadcast constant alpha, ADD_N of three inputs, L2_POOL_2D with SAME
  padding and VALID with a fused RELU.
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder

PADDING = {"SAME": 0, "VALID": 1}


class _Model:
    """A model under construction whose operators each add one output."""

    def __init__(self):
        self.b = ModelBuilder()
        self.outputs: list[int] = []

    def scaled(self, x: int, shape, scale: float, tag: str) -> int:
        k = self.b.constant(f"k_{tag}", np.array(scale, np.float32))
        y = self.b.tensor(f"x_times_{tag}", shape, "float32")
        self.b.operator("MUL", [x, k], [y], "MulOptions", fusedActivationFunction=0)
        return y

    def op(self, opcode: str, inputs: list[int], out_shape, options=None, **fields) -> int:
        y = self.b.tensor(f"{opcode.lower()}_{len(self.outputs)}", out_shape, "float32")
        self.b.operator(opcode, inputs, [y], options, **fields)
        self.outputs.append(y)
        return y


def math_unary() -> None:
    m = _Model()
    shape = (4, 10)
    x = m.b.tensor("x", shape, "float32")
    for opcode, scale, options, fields in (
            ("LEAKY_RELU", 3.0, "LeakyReluOptions", {"alpha": 0.2}),
            ("HARD_SWISH", 5.0, None, {}),
            ("LOG_SOFTMAX", 20.0, "LogSoftmaxOptions", {}),
            ("SQRT", 4.0, None, {}),
            ("SQUARE", 10.0, None, {}),
            ("ELU", 4.0, None, {}),
            ("FLOOR", 6.0, None, {}),
            ("CEIL", 6.0, None, {}),
            ("SIN", 12.0, None, {}),
            ("COS", 12.0, None, {}),
            ("L2_NORMALIZATION", 1.0, "L2NormOptions", {"fusedActivationFunction": 0})):
        m.op(opcode, [m.scaled(x, shape, scale, opcode.lower())], shape, options, **fields)
    floored = m.b.tensor("floor_8x", shape, "float32")
    m.b.operator("FLOOR", [m.scaled(x, shape, 8.0, "eight")], [floored])
    m.op("ROUND", [m.scaled(floored, shape, 0.5, "half")], shape)
    save("float/math_unary.tflite", m.b.build([x], m.outputs))


def math_reduce() -> None:
    m = _Model()
    in_shape = (2, 5, 6, 4)
    x = m.b.tensor("x", in_shape, "float32")
    for opcode, axes, keep in (("MEAN", [1, 2], True), ("MEAN", [-1], False),
                               ("SUM", [0, 2], True), ("REDUCE_MAX", [1], False),
                               ("REDUCE_MAX", [0, 1, 3], True), ("REDUCE_MIN", [3, 0], False)):
        axis = m.b.constant(f"axis_{len(m.outputs)}", np.array(axes, np.int32))
        resolved = {a % len(in_shape) for a in axes}
        out_shape = tuple(1 if i in resolved else d for i, d in enumerate(in_shape)
                          if keep or i not in resolved)
        m.op(opcode, [x, axis], out_shape, "ReducerOptions", keepDims=keep)
    save("float/math_reduce.tflite", m.b.build([x], m.outputs))


def math_multi() -> None:
    m = _Model()
    shape = (2, 6, 7, 3)
    xs = [m.b.tensor(f"x{k}", shape, "float32") for k in range(3)]
    rng = np.random.default_rng(26)
    alpha = m.b.constant("alpha", rng.uniform(-1.5, 1.5, (1, 1, 3)).astype(np.float32))
    m.op("PRELU", [xs[0], alpha], shape)
    m.op("ADD_N", xs, shape)
    for padding, window, stride, out_hw, activation in (("SAME", 3, 2, (3, 4), 0),
                                                         ("VALID", 2, 2, (3, 3), 1)):
        m.op("L2_POOL_2D", [xs[1]], (2, *out_hw, 3), "Pool2DOptions",
             padding=PADDING[padding], strideH=stride, strideW=stride, filterHeight=window,
             filterWidth=window, fusedActivationFunction=activation)
    save("float/math_multi.tflite", m.b.build(xs, m.outputs))


def models() -> None:
    math_unary()
    math_reduce()
    math_multi()


if __name__ == "__main__":
    models()
