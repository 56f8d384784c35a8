"""Single-operator TRANSPOSE_CONV, BATCH_MATMUL and 16x8 SOFTMAX models, made as users make them:
Keras layers (and tf ops in a tf.function where Keras has no layer) through the stock converter
with a seeded representative dataset, int8 (or, for the _s16 models, 16x8 with int16) inputs
and outputs, the batch left open as Keras leaves it.

    /work/tfenv/bin/python tests/models/generate/ops_tconv.py

Conv2DTranspose with an open batch comes out as SHAPE -> STRIDED_SLICE -> PACK -> TRANSPOSE_CONV
(the output shape computed from the batch); with a fixed batch the output shape is a constant.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, randomize_biases, save, seed_everything  # noqa: E402

OPEN_BATCH_TCONV = ["SHAPE", "STRIDED_SLICE", "PACK", "TRANSPOSE_CONV"]


def _convert(model_or_fn, seed: int, shapes, ranges, int16: bool = False,
             options: dict | None = None) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(40):
            yield [rng.uniform(lo, hi, s).astype(np.float32) for (lo, hi), s in zip(ranges, shapes)]

    if isinstance(model_or_fn, tf.keras.Model):
        converter = tf.lite.TFLiteConverter.from_keras_model(model_or_fn)
    else:
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [model_or_fn.get_concrete_function()], model_or_fn)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    if int16:
        converter.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int16
    else:
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int8
    for name, value in (options or {}).items():
        setattr(converter, name, value)
    return converter.convert()


def _save(name: str, data: bytes, expected: list[str]) -> None:
    ops = op_names(data)
    if ops != expected:
        raise SystemExit(f"{name}: expected operators {expected}, the converter emitted {ops}")
    save(f"ops/{name}.tflite", data)


class _Seeds:
    def __init__(self, first: int) -> None:
        self.value = first

    def next(self) -> int:
        self.value += 1
        seed_everything(self.value)
        return self.value


def transpose_conv_models() -> None:
    import tensorflow as tf

    L = tf.keras.layers
    seeds = _Seeds(2600)
    per_tensor = {"_experimental_disable_per_channel": True}
    # name, input (h, w, c), filters, kernel, strides, padding, bias, activation, 16x8, options
    configs = [
        ("tconv_3x3_same_s2_relu_pc", (5, 6, 3), 4, 3, 2, "same", True, "relu", False, None),
        ("tconv_3x3_same_s1_pc", (6, 5, 4), 5, 3, 1, "same", True, None, False, None),
        ("tconv_4x4_valid_s2_pc", (4, 5, 3), 6, 4, 2, "valid", True, None, False, None),
        ("tconv_4x4_same_s2_nobias_pc", (5, 4, 6), 3, 4, 2, "same", False, None, False, None),
        ("tconv_3x3_valid_s1_nobias_pt", (5, 5, 2), 4, 3, 1, "valid", False, None, False,
         per_tensor),
        ("tconv_3x3_same_s2_relu_pt", (4, 6, 5), 3, 3, 2, "same", True, "relu", False,
         per_tensor),
        ("tconv_2x3_same_s2x1_relu6_pc", (4, 5, 3), 4, (2, 3), (2, 1), "same", True, "relu6",
         False, None),
        ("tconv_3x3_valid_s3_pc", (3, 4, 4), 4, 3, 3, "valid", True, None, False, None),
        ("tconv_s16_3x3_same_s2_relu", (5, 4, 3), 4, 3, 2, "same", True, "relu", True, None),
        ("tconv_s16_4x4_valid_s2_nobias", (4, 4, 5), 3, 4, 2, "valid", False, None, True, None),
        ("tconv_s16_3x3_same_s1", (5, 6, 4), 6, 3, 1, "same", True, None, True, None),
    ]
    for (name, shape, filters, kernel, strides, padding, bias, activation, int16,
         options) in configs:
        seed = seeds.next()
        x = tf.keras.Input(shape=shape)
        y = L.Conv2DTranspose(filters, kernel, strides=strides, padding=padding, use_bias=bias,
                              activation=activation)(x)
        model = tf.keras.Model(x, y)
        randomize_biases(model, seed)
        _save(name, _convert(model, seed, [(1,) + shape], [(-1.0, 1.5)], int16, options),
              OPEN_BATCH_TCONV)
    # A fixed batch: the converter makes the output shape a constant operand.
    seed = seeds.next()
    x = tf.keras.Input(shape=(4, 4, 3), batch_size=1)
    model = tf.keras.Model(x, L.Conv2DTranspose(5, 3, strides=2, padding="same")(x))
    randomize_biases(model, seed)
    _save("tconv_3x3_same_s2_fixed_batch_pc",
          _convert(model, seed, [(1, 4, 4, 3)], [(-2.0, 1.0)]), ["TRANSPOSE_CONV"])


def models() -> None:
    transpose_conv_models()


if __name__ == "__main__":
    models()
