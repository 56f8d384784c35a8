"""Single-operator TRANSPOSE models, made as users make them: Keras Permute layers (and a
tf.transpose in a tf.function for ranks Keras does not give) through the stock int8 converter,
plus one 16x8 model.

    /work/tfenv/bin/python tests/models/generate/ops_transpose.py
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


def _save(name: str, data: bytes) -> None:
    if op_names(data) != ["TRANSPOSE"]:
        raise SystemExit(f"{name}: expected one TRANSPOSE, got {op_names(data)}")
    save(f"ops/{name}.tflite", data)


def models() -> None:
    import tensorflow as tf

    seed = 1900
    for name, shape, dims in (("transpose_nhwc_to_nchw", (6, 5, 4), (3, 1, 2)),
                              ("transpose_hw_swap", (5, 7, 3), (2, 1, 3)),
                              ("transpose_rank3", (9, 4), (2, 1))):
        seed += 1
        seed_everything(seed)
        x = tf.keras.Input(shape=shape)
        _save(name, _convert(tf.keras.Model(x, tf.keras.layers.Permute(dims)(x)),
                             (1,) + shape, seed))
    seed += 1
    seed_everything(seed)
    x = tf.keras.Input(shape=(4, 6, 5))
    _save("transpose_s16", _convert(tf.keras.Model(x, tf.keras.layers.Permute((3, 1, 2))(x)),
                                    (1, 4, 6, 5), seed, int16=True))

    @tf.function(input_signature=[tf.TensorSpec([2, 3, 4, 2, 3], tf.float32)])
    def rank5(t):
        return tf.transpose(t, [4, 2, 0, 3, 1])

    _save("transpose_rank5", _convert(rank5, (2, 3, 4, 2, 3), 1999))


if __name__ == "__main__":
    models()
