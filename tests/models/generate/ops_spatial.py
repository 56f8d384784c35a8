"""Single-operator models for the spatial data-movement operators, made as users make them:
Keras layers and tf ops through the stock int8 converter (one 16x8 model), odd shapes and several
channel counts. Each model's operator list is checked.

- RESIZE_BILINEAR: Keras UpSampling2D(interpolation="bilinear") and tf.image.resize (both emit
  half_pixel_centers), tf.compat.v1.image.resize_bilinear for align_corners and for neither flag.
- RESIZE_NEAREST_NEIGHBOR: tf.image.resize(method="nearest") and the tf.compat.v1 forms, int8 and
  16x8. (Keras 3's UpSampling2D(interpolation="nearest") converts to EXPAND_DIMS/TILE/RESHAPE, not
  to a resize, so it is not here.)
- DEPTH_TO_SPACE / SPACE_TO_DEPTH: tf.nn.depth_to_space / space_to_depth, blocks 2 and 3.
- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: tf.space_to_batch_nd / tf.compat.v1.batch_to_space_nd,
  4-D and 3-D. The SPACE_TO_BATCH_ND models have no padding: TFLM fills padding with an
  uninitialized value (see microbuild/compiler/ops/space_batch.py), so padded outputs cannot be
  compared with it; tests/compiler/test_ops_spatial.py checks padding with a hand-built model.
- MIRROR_PAD: tf.pad(mode="REFLECT" / "SYMMETRIC"), also padding the channels.

Also ``dilated/``: Keras Conv2D / DepthwiseConv2D with ``dilation_rate``, each converted twice
with the same weights and calibration data: with Keras' open batch size the converter emits
SPACE_TO_BATCH_ND -> convolution -> BATCH_TO_SPACE_ND with contradictory shapes (TFLM computes it
wrongly, so these are not in ops/ and not in the sweep; microbuild fuses the pattern back into a
dilated convolution), with a fixed batch size one dilated convolution: the reference.

    /work/tfenv/bin/python tests/models/generate/ops_spatial.py
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _convert(model_or_fn, shape, seed: int, int16: bool = False) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(32):
            yield [rng.uniform(-1.5, 2.0, shape).astype(np.float32)]

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
    return converter.convert()


def _save(name: str, data: bytes, ops: list[str], folder: str = "ops") -> None:
    if op_names(data) != ops:
        raise SystemExit(f"{name}: expected {ops}, got {op_names(data)}")
    save(f"{folder}/{name}.tflite", data)


def _function(shape, body):
    import tensorflow as tf

    return tf.function(body, input_signature=[tf.TensorSpec(shape, tf.float32)])


def models() -> None:
    import tensorflow as tf

    v1 = tf.compat.v1.image
    seed = 2300

    def one(name, fn_or_model, shape, op, int16=False):
        nonlocal seed
        seed += 1
        seed_everything(seed)
        _save(name, _convert(fn_or_model, shape, seed, int16), [op])

    # RESIZE_BILINEAR
    seed_everything(seed)
    x = tf.keras.Input(shape=(5, 7, 3))
    up = tf.keras.layers.UpSampling2D(2, interpolation="bilinear")
    one("resize_bilinear_upsampling2d", tf.keras.Model(x, up(x)), (1, 5, 7, 3), "RESIZE_BILINEAR")
    one("resize_bilinear_half_pixel",
        _function([1, 5, 7, 3], lambda t: tf.image.resize(t, (8, 11), method="bilinear")),
        (1, 5, 7, 3), "RESIZE_BILINEAR")
    one("resize_bilinear_down",
        _function([1, 9, 11, 5], lambda t: tf.image.resize(t, (4, 6), method="bilinear")),
        (1, 9, 11, 5), "RESIZE_BILINEAR")
    one("resize_bilinear_align_corners",
        _function([1, 6, 5, 4], lambda t: v1.resize_bilinear(t, (11, 9), align_corners=True)),
        (1, 6, 5, 4), "RESIZE_BILINEAR")
    one("resize_bilinear_asymmetric",
        _function([1, 5, 7, 2], lambda t: v1.resize_bilinear(t, (8, 13))),
        (1, 5, 7, 2), "RESIZE_BILINEAR")

    # RESIZE_NEAREST_NEIGHBOR
    one("resize_nearest_half_pixel",
        _function([1, 5, 7, 3], lambda t: tf.image.resize(t, (8, 11), method="nearest")),
        (1, 5, 7, 3), "RESIZE_NEAREST_NEIGHBOR")
    one("resize_nearest_down",
        _function([1, 9, 11, 2], lambda t: tf.image.resize(t, (4, 5), method="nearest")),
        (1, 9, 11, 2), "RESIZE_NEAREST_NEIGHBOR")
    one("resize_nearest_align_corners",
        _function([1, 6, 5, 4],
                  lambda t: v1.resize_nearest_neighbor(t, (11, 9), align_corners=True)),
        (1, 6, 5, 4), "RESIZE_NEAREST_NEIGHBOR")
    one("resize_nearest_asymmetric",
        _function([1, 5, 7, 3], lambda t: v1.resize_nearest_neighbor(t, (10, 14))),
        (1, 5, 7, 3), "RESIZE_NEAREST_NEIGHBOR")
    one("resize_nearest_s16",
        _function([1, 5, 7, 3], lambda t: tf.image.resize(t, (8, 11), method="nearest")),
        (1, 5, 7, 3), "RESIZE_NEAREST_NEIGHBOR", int16=True)

    # DEPTH_TO_SPACE / SPACE_TO_DEPTH
    one("depth_to_space_b2", _function([1, 4, 6, 8], lambda t: tf.nn.depth_to_space(t, 2)),
        (1, 4, 6, 8), "DEPTH_TO_SPACE")
    one("depth_to_space_b3", _function([1, 3, 5, 18], lambda t: tf.nn.depth_to_space(t, 3)),
        (1, 3, 5, 18), "DEPTH_TO_SPACE")
    one("space_to_depth_b2", _function([1, 6, 4, 3], lambda t: tf.nn.space_to_depth(t, 2)),
        (1, 6, 4, 3), "SPACE_TO_DEPTH")
    one("space_to_depth_b3", _function([1, 9, 6, 5], lambda t: tf.nn.space_to_depth(t, 3)),
        (1, 9, 6, 5), "SPACE_TO_DEPTH")

    # SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND
    one("space_to_batch_nd",
        _function([1, 6, 8, 3], lambda t: tf.space_to_batch_nd(t, [2, 2], [[0, 0], [0, 0]])),
        (1, 6, 8, 3), "SPACE_TO_BATCH_ND")
    one("space_to_batch_nd_3x2",
        _function([2, 9, 4, 5], lambda t: tf.space_to_batch_nd(t, [3, 2], [[0, 0], [0, 0]])),
        (2, 9, 4, 5), "SPACE_TO_BATCH_ND")
    one("space_to_batch_nd_rank3",
        _function([1, 9, 5], lambda t: tf.space_to_batch_nd(t, [3], [[0, 0]])),
        (1, 9, 5), "SPACE_TO_BATCH_ND")
    one("batch_to_space_nd",
        _function([4, 3, 4, 3],
                  lambda t: tf.compat.v1.batch_to_space_nd(t, [2, 2], [[1, 0], [0, 1]])),
        (4, 3, 4, 3), "BATCH_TO_SPACE_ND")
    one("batch_to_space_nd_3x2",
        _function([12, 3, 4, 2],
                  lambda t: tf.compat.v1.batch_to_space_nd(t, [3, 2], [[1, 1], [0, 1]])),
        (12, 3, 4, 2), "BATCH_TO_SPACE_ND")
    one("batch_to_space_nd_rank3",
        _function([3, 3, 5], lambda t: tf.compat.v1.batch_to_space_nd(t, [3], [[1, 2]])),
        (3, 3, 5), "BATCH_TO_SPACE_ND")

    # MIRROR_PAD
    one("mirror_pad_reflect",
        _function([1, 5, 7, 3],
                  lambda t: tf.pad(t, [[0, 0], [2, 1], [1, 3], [0, 0]], mode="REFLECT")),
        (1, 5, 7, 3), "MIRROR_PAD")
    one("mirror_pad_symmetric",
        _function([1, 5, 4, 6],
                  lambda t: tf.pad(t, [[0, 0], [1, 2], [4, 0], [1, 1]], mode="SYMMETRIC")),
        (1, 5, 4, 6), "MIRROR_PAD")
    one("mirror_pad_reflect_rank3",
        _function([1, 9, 4], lambda t: tf.pad(t, [[0, 0], [3, 8], [0, 0]], mode="REFLECT")),
        (1, 9, 4), "MIRROR_PAD")

    # The converter's dilated-convolution pattern: Keras' open batch gives SPACE_TO_BATCH_ND ->
    # convolution -> BATCH_TO_SPACE_ND (TFLM computes it wrongly: not in ops/, so not in the
    # sweep); the same layer with a fixed batch gives one dilated convolution, the reference.
    for name, make in (
            ("conv", lambda: tf.keras.layers.Conv2D(4, 3, dilation_rate=2, padding="same")),
            ("depthwise", lambda: tf.keras.layers.DepthwiseConv2D(3, dilation_rate=(2, 3),
                                                                  padding="same")),
            ("conv_valid", lambda: tf.keras.layers.Conv2D(5, (3, 2), dilation_rate=(3, 2)))):
        seed += 1
        seed_everything(seed)
        layer = make()
        x = tf.keras.Input(shape=(9, 11, 3))
        opened = tf.keras.Model(x, layer(x))
        x1 = tf.keras.Input(shape=(9, 11, 3), batch_size=1)
        fixed = tf.keras.Model(x1, layer(x1))
        op = "DEPTHWISE_CONV_2D" if name == "depthwise" else "CONV_2D"
        _save(f"keras_dilated_{name}_open_batch", _convert(opened, (1, 9, 11, 3), seed),
              ["SPACE_TO_BATCH_ND", op, "BATCH_TO_SPACE_ND"], folder="dilated")
        _save(f"keras_dilated_{name}_fixed_batch", _convert(fixed, (1, 9, 11, 3), seed), [op],
              folder="dilated")

if __name__ == "__main__":
    models()
