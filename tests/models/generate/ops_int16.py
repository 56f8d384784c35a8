"""Single-operator models with 16-bit activations and 8-bit weights ("16x8" quantization, the
converter's EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8), made the way users make
them: Keras layers with Keras defaults, the stock converter with a seeded representative dataset,
int16 inputs and outputs.

    /work/tfenv/bin/python tests/models/generate/ops_int16.py

The converter quantizes int16 activations symmetrically (zero point 0), weights per channel, and
biases as int64. Each model's name says its operator and configuration, suffix _s16.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, randomize_biases, save, seed_everything  # noqa: E402


def _convert(model, seed: int, ranges: list[tuple[float, float]],
             float_io: bool = False) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in t.shape[1:]) for t in model.inputs]

    def representative():
        for _ in range(48):
            yield [rng.uniform(lo, hi, (1,) + s).astype(np.float32)
                   for (lo, hi), s in zip(ranges, shapes)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
    if not float_io:
        converter.inference_input_type = tf.int16
        converter.inference_output_type = tf.int16
    return converter.convert()


def _save(name: str, model, seed: int, ranges, expected: list[str], float_io: bool = False):
    data = _convert(model, seed, ranges, float_io)
    ops = op_names(data)
    if ops != expected:
        raise SystemExit(f"{name}: expected operators {expected}, the converter emitted {ops}")
    save(f"ops/{name}.tflite", data)


def models() -> None:
    import tensorflow as tf

    L = tf.keras.layers
    seed = 1800

    def inp(*shape):
        return tf.keras.Input(shape=shape)

    def build(name, make, shapes, ranges, expected, float_io=False):
        nonlocal seed
        seed += 1
        seed_everything(seed)
        inputs = [inp(*s) for s in shapes]
        outputs = make(*inputs)
        model = tf.keras.Model(inputs, outputs)
        randomize_biases(model, seed)
        _save(name, model, seed, ranges, expected, float_io)

    build("fc_s16_relu", lambda x: L.Dense(12, activation="relu")(x), [(20,)], [(-2, 1.5)],
          ["FULLY_CONNECTED"])
    build("fc_s16_nobias", lambda x: L.Dense(7, use_bias=False)(x), [(33,)], [(-1, 1)],
          ["FULLY_CONNECTED"])
    build("conv_s16_3x3_same_relu", lambda x: L.Conv2D(6, 3, padding="same",
                                                       activation="relu")(x),
          [(9, 7, 4)], [(-1, 2)], ["CONV_2D"])
    build("conv_s16_5x3_valid_s2", lambda x: L.Conv2D(5, (5, 3), strides=2)(x),
          [(13, 11, 3)], [(-0.5, 0.5)], ["CONV_2D"])
    build("dw_s16_3x3_same_relu6", lambda x: L.DepthwiseConv2D(3, padding="same",
                                                               activation="relu6")(x),
          [(8, 8, 5)], [(-1, 3)], ["DEPTHWISE_CONV_2D"])
    build("dw_s16_3x3_valid_m2_s2", lambda x: L.DepthwiseConv2D(3, strides=2,
                                                                depth_multiplier=2)(x),
          [(11, 9, 3)], [(-2, 2)], ["DEPTHWISE_CONV_2D"])
    build("add_s16", lambda a, b: L.Add()([a, b]), [(6, 5, 4), (6, 5, 4)],
          [(-2, 1), (-0.3, 0.7)], ["ADD"])
    build("add_s16_relu_bcast", lambda a, b: L.ReLU()(L.Add()([a, b])), [(6, 5, 4), (1, 1, 4)],
          [(-2, 1), (-1, 1)], ["ADD"])
    build("mul_s16", lambda a, b: L.Multiply()([a, b]), [(4, 6, 3), (4, 6, 3)],
          [(-3, 1), (-1, 2)], ["MUL"])
    build("logistic_s16", lambda x: L.Activation("sigmoid")(x), [(4, 8, 8)], [(-6, 6)],
          ["LOGISTIC"])
    build("tanh_s16", lambda x: L.Activation("tanh")(x), [(4, 8, 8)], [(-3, 4)], ["TANH"])
    # The int16 -> int16 SOFTMAX models are made by ops_tconv.py (softmax_s16_*).
    build("avgpool_s16_2x2", lambda x: L.AveragePooling2D(2)(x), [(8, 6, 5)], [(-1, 1)],
          ["AVERAGE_POOL_2D"])
    build("maxpool_s16_3x3_same_s2", lambda x: L.MaxPooling2D(3, strides=2, padding="same")(x),
          [(9, 9, 3)], [(-1, 1)], ["MAX_POOL_2D"])
    build("concat_s16", lambda a, b: L.Concatenate()([a, b]), [(4, 4, 3), (4, 4, 5)],
          [(-1, 1), (-0.5, 2)], ["QUANTIZE", "CONCATENATION"])
    build("pad_s16", lambda x: L.ZeroPadding2D(((1, 2), (0, 3)))(x), [(5, 5, 2)], [(-1, 1)],
          ["PAD"])
    build("mean_s16", lambda x: L.GlobalAveragePooling2D()(x), [(6, 6, 8)], [(-1, 2)],
          ["MEAN"])
    # No HARD_SWISH: the converter refuses it in 16x8 ("not yet supported"), so no user has one.
    build("quantize_s16_float_io", lambda x: L.Dense(6)(x), [(10,)], [(-1, 1)],
          ["QUANTIZE", "FULLY_CONNECTED", "DEQUANTIZE"], float_io=True)


if __name__ == "__main__":
    models()
