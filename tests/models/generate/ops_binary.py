"""Single-operator models for the element-wise operators with two inputs beyond ADD and MUL (SUB,
MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, the comparisons feeding SELECT_V2) and the parametric
activations PRELU and LEAKY_RELU, made as users make them: Keras layers (Subtract, Minimum,
Maximum, PReLU, LeakyReLU) and tf ops in Lambda layers through the stock int8 converter (16x8
where the converter quantizes the operator to int16), with broadcasting shapes and constant
operands.

    /work/tfenv/bin/python tests/models/generate/ops_binary.py

Quirks of the converter these models follow:

- a comparison only gets int8 inputs when its result feeds a quantized SELECT_V2 (tf.where), so
  every comparison model is <comparison> -> SELECT_V2 with an int8 output; NOT_EQUAL stays float
  even then (DEQUANTIZE -> NOT_EQUAL in float), so the int8 NOT_EQUAL model is assembled with
  tflite_builder.ModelBuilder;
- 16x8 quantization refuses PRELU and the comparisons ("not yet supported"), and gives MINIMUM and
  MAXIMUM one quantization for both inputs and the output by inserting an int16 QUANTIZE;
- tf.maximum(x, 0) would become RELU, so the scalar constant is 0.25.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402


def _convert(model, seed: int, ranges: list[tuple[float, float]], int16: bool) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in t.shape[1:]) for t in model.inputs]

    # Keyed by input name: the converter orders a model's inputs its own way.
    def representative():
        for _ in range(48):
            yield {f"in{k}": rng.uniform(lo, hi, (1,) + s).astype(np.float32)
                   for k, ((lo, hi), s) in enumerate(zip(ranges, shapes))}

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    if int16:
        converter.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int16
    else:
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int8
    return converter.convert()


def _check_and_save(name: str, data: bytes, expected: list[str]) -> None:
    ops = op_names(data)
    if ops != expected:
        raise SystemExit(f"{name}: expected operators {expected}, the converter emitted {ops}")
    save(f"ops/{name}.tflite", data)


def _not_equal_select() -> bytes:
    """int8 NOT_EQUAL of differently quantized inputs, (6, 5, 4) against (1, 1, 4), feeding a
    SELECT_V2: what the converter would emit if it quantized NOT_EQUAL like EQUAL."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 6, 5, 4), "int8", 0.011, 3)
    y = b.tensor("y", (1, 1, 1, 4), "int8", 0.027, -20)
    z = b.tensor("z", (1, 6, 5, 4), "int8", 0.011, 3)
    cond = b.tensor("x_ne_y", (1, 6, 5, 4), "bool")
    out = b.tensor("out", (1, 6, 5, 4), "int8", 0.011, 3)
    b.operator("NOT_EQUAL", [x, y], [cond])
    b.operator("SELECT_V2", [cond, x, z], [out])
    return b.build([x, y, z], [out])


def models() -> None:
    import tensorflow as tf

    L = tf.keras.layers
    seed = 2300

    def build(name, make, shapes, ranges, expected, int16=False, prelu_alpha=None):
        nonlocal seed
        seed += 1
        seed_everything(seed)
        inputs = [tf.keras.Input(shape=s, name=f"in{k}") for k, s in enumerate(shapes)]
        model = tf.keras.Model(inputs, make(*inputs))
        if prelu_alpha is not None:  # Keras initializes alpha to zeros: give it seeded values
            rng = np.random.default_rng(seed)
            for layer in model.layers:
                if isinstance(layer, L.PReLU):
                    shape = layer.get_weights()[0].shape
                    layer.set_weights([rng.uniform(*prelu_alpha, shape).astype(np.float32)])
        _check_and_save(name, _convert(model, seed, ranges, int16), expected)

    def fn(f):
        return lambda *xs: L.Lambda(lambda z: f(*z) if isinstance(z, (list, tuple)) else f(z))(
            list(xs) if len(xs) > 1 else xs[0])

    channel = tf.constant([0.3, -0.2, 0.1, 0.5])

    # SUB
    build("sub_same", lambda a, b: L.Subtract()([a, b]), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.5, 1)], ["SUB"])
    build("sub_bcast_channel", lambda a, b: L.Subtract()([a, b]), [(6, 5, 4), (1, 1, 4)],
          [(-2, 1), (-0.5, 1)], ["SUB"])
    build("sub_bcast_general", fn(lambda a, b: a - b), [(1, 5, 4), (6, 1, 4)],
          [(-1, 3), (-2, 2)], ["SUB"])
    build("sub_const_first", fn(lambda x: channel - x), [(6, 5, 4)], [(-2, 1)], ["SUB"])
    build("sub_relu", lambda a, b: L.ReLU()(L.Subtract()([a, b])), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.5, 1)], ["SUB"])
    build("sub_relu6_bcast", lambda a, b: L.ReLU(max_value=6.0)(L.Subtract()([a, b])),
          [(4, 4, 8), (1, 1, 8)], [(-8, 8), (-4, 4)], ["SUB"])
    build("sub_s16", lambda a, b: L.Subtract()([a, b]), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.5, 1)], ["SUB"], int16=True)
    build("sub_s16_relu_bcast", fn(lambda a, b: tf.nn.relu(a - b)), [(6, 5, 4), (1, 1, 4)],
          [(-2, 1), (-0.5, 1)], ["SUB"], int16=True)

    # MINIMUM, MAXIMUM
    build("minimum_same", lambda a, b: L.Minimum()([a, b]), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.5, 1)], ["MINIMUM"])
    build("maximum_same", lambda a, b: L.Maximum()([a, b]), [(5, 7), (5, 7)],
          [(-1, 1), (-3, 0.5)], ["MAXIMUM"])
    build("maximum_bcast", fn(lambda a, b: tf.maximum(a, b)), [(6, 5, 4), (1, 5, 1)],
          [(-2, 1), (-0.5, 1)], ["MAXIMUM"])
    build("minimum_const_channel", fn(lambda x: tf.minimum(x, channel)), [(6, 5, 4)],
          [(-2, 1)], ["MINIMUM"])
    build("maximum_const_scalar", fn(lambda x: tf.maximum(x, 0.25)), [(6, 5, 4)], [(-2, 1)],
          ["MAXIMUM"])
    build("minimum_s16", lambda a, b: L.Minimum()([a, b]), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.5, 1)], ["QUANTIZE", "MINIMUM"], int16=True)
    build("maximum_s16_bcast", fn(lambda a, b: tf.maximum(a, b)), [(6, 5, 4), (1, 5, 1)],
          [(-2, 1), (-0.5, 1)], ["QUANTIZE", "QUANTIZE", "MAXIMUM"], int16=True)

    # SQUARED_DIFFERENCE
    sqd = fn(lambda a, b: tf.math.squared_difference(a, b))
    build("squared_difference_same", sqd, [(6, 5, 4), (6, 5, 4)], [(-2, 1), (-0.5, 1)],
          ["SQUARED_DIFFERENCE"])
    build("squared_difference_bcast", sqd, [(6, 5, 4), (1, 1, 4)], [(-2, 1), (-0.5, 1)],
          ["SQUARED_DIFFERENCE"])
    build("squared_difference_const", fn(lambda x: tf.math.squared_difference(x, channel)),
          [(6, 5, 4)], [(-2, 1)], ["SQUARED_DIFFERENCE"])
    build("squared_difference_s16", sqd, [(6, 5, 4), (6, 5, 4)], [(-2, 1), (-0.5, 1)],
          ["SQUARED_DIFFERENCE"], int16=True)
    build("squared_difference_s16_bcast", sqd, [(6, 5, 4), (1, 1, 4)], [(-2, 1), (-0.5, 1)],
          ["SQUARED_DIFFERENCE"], int16=True)

    # Comparisons -> SELECT_V2 (the compared tensors quantized differently from each other)
    build("less_select", fn(lambda a, b, c: tf.where(tf.less(a, b), a, c)),
          [(6, 5, 4), (6, 5, 4), (6, 5, 4)], [(-2, 1), (-0.5, 1), (-1, 3)],
          ["LESS", "SELECT_V2"])
    build("less_equal_select_bcast", fn(lambda a, b, c: tf.where(tf.less_equal(a, b), c, b)),
          [(1, 5, 1), (1, 5, 4), (6, 5, 4)], [(-2, 1), (-0.5, 1), (-1, 3)],
          ["LESS_EQUAL", "SELECT_V2"])
    build("greater_select_const", fn(lambda a, b: tf.where(tf.greater(a, channel), a, b)),
          [(6, 5, 4), (6, 5, 4)], [(-2, 1), (-1, 1)], ["GREATER", "SELECT_V2"])
    build("greater_equal_select_bcast",
          fn(lambda a, b, c: tf.where(tf.greater_equal(a, b), c, a)),
          [(6, 5, 4), (1, 1, 4), (6, 5, 4)], [(-2, 1), (-0.5, 1), (-1, 3)],
          ["GREATER_EQUAL", "SELECT_V2"])
    build("equal_select", fn(lambda a, b, c: tf.where(tf.equal(a, b), c, a)),
          [(6, 5, 4), (6, 5, 4), (6, 5, 4)], [(-1, 1), (-0.5, 0.5), (-1, 3)],
          ["EQUAL", "SELECT_V2"])
    save("ops/not_equal_select.tflite", _not_equal_select())

    # PRELU (alpha constant: per element, or shared over axes)
    build("prelu_per_element", lambda x: L.PReLU()(x), [(6, 5, 4)], [(-2, 1)], ["PRELU"],
          prelu_alpha=(-0.5, 0.8))
    build("prelu_shared_hw", lambda x: L.PReLU(shared_axes=[1, 2])(x), [(6, 5, 4)], [(-2, 1)],
          ["PRELU"], prelu_alpha=(0.0, 0.5))
    build("prelu_shared_all", lambda x: L.PReLU(shared_axes=[1, 2, 3])(x), [(6, 5, 4)],
          [(-3, 2)], ["PRELU"], prelu_alpha=(0.1, 0.3))
    build("prelu_dense", lambda x: L.PReLU()(x), [(10,)], [(-2, 1)], ["PRELU"],
          prelu_alpha=(-1.5, 1.5))

    # LEAKY_RELU
    build("leaky_relu_0p1", lambda x: L.LeakyReLU(negative_slope=0.1)(x), [(6, 5, 4)],
          [(-2, 1)], ["LEAKY_RELU"])
    build("leaky_relu_default", lambda x: L.LeakyReLU()(x), [(8, 8, 3)], [(-4, 4)],
          ["LEAKY_RELU"])
    build("leaky_relu_0p01_wide", lambda x: L.LeakyReLU(negative_slope=0.01)(x), [(40,)],
          [(-20, 6)], ["LEAKY_RELU"])
    build("leaky_relu_1p7", lambda x: L.LeakyReLU(negative_slope=1.7)(x), [(6, 5, 4)],
          [(-2, 1)], ["LEAKY_RELU"])
    build("leaky_relu_s16", lambda x: L.LeakyReLU(negative_slope=0.2)(x), [(6, 5, 4)],
          [(-2, 1)], ["LEAKY_RELU"], int16=True)


if __name__ == "__main__":
    models()
