"""Make int8 test models the way Keras users make them: Keras defaults, trained, the stock
converter.

Run from the repository root with a Python that has tensorflow-cpu:

    /work/tfenv/bin/python tests/models/generate/keras_users.py

Unlike the other generators, nothing here is set to suit microbuild:
- ``tf.keras.Input(shape=...)`` without ``batch_size``: the batch dimension stays open (-1 in the
  converted model's ``shape_signature``), and ``Flatten`` / ``Reshape`` become the
  SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE chain the converter emits for an open batch;
- the models are trained (a few epochs on seeded synthetic tasks), so biases, scales and zero
  points have the magnitudes and asymmetries of real models rather than initializer noise;
- the converter runs with its defaults plus a representative dataset: float32 inputs and outputs
  (QUANTIZE / DEQUANTIZE at the edges) unless the model is meant to show int8 I/O.
Seeded and with op determinism, so reruns give identical files on the same TensorFlow version.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _tf():
    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()
    return tf


def _convert(model, samples: np.ndarray, int8_io: bool) -> bytes:
    tf = _tf()

    def representative():
        for x in samples[:100]:
            yield [x[None].astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    if int8_io:
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8
    return converter.convert()


def _save(name: str, data: bytes) -> None:
    print(f"{name}: {' '.join(op_names(data))}")
    save(f"{name}.tflite", data)


def keyword_spotter() -> None:
    """A DS-CNN-like keyword spotter on 49x10 'MFCC' frames (4 classes: where in time a burst of
    energy sits), float32 in and out as the converter gives by default; global average pooling
    and a Dense softmax head."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(1600)
    rng = np.random.default_rng(1600)
    x = rng.normal(0.0, 1.0, (1200, 49, 10, 1)).astype(np.float32)
    y = rng.integers(0, 4, 1200)
    for i, label in enumerate(y):
        x[i, label * 12:label * 12 + 12, :, 0] += 2.5
    inputs = tf.keras.Input(shape=(49, 10, 1))
    h = L.Conv2D(16, (10, 4), strides=(2, 2), padding="same")(inputs)
    h = L.BatchNormalization()(h)
    h = L.ReLU()(h)
    for _ in range(2):
        h = L.DepthwiseConv2D((3, 3), padding="same")(h)
        h = L.BatchNormalization()(h)
        h = L.ReLU()(h)
        h = L.Conv2D(16, (1, 1))(h)
        h = L.BatchNormalization()(h)
        h = L.ReLU()(h)
    h = L.GlobalAveragePooling2D()(h)
    outputs = L.Dense(4, activation="softmax")(h)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=4, batch_size=32, verbose=0, shuffle=False)
    _save("keras_kws_float_io", _convert(model, x, int8_io=False))


def image_classifier() -> None:
    """A small CNN on 24x24 RGB images (3 classes by dominant colour) with MaxPooling, Flatten
    and Dense layers, int8 in and out; the open batch turns Flatten into the SHAPE chain."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(1610)
    rng = np.random.default_rng(1610)
    x = rng.uniform(0.0, 0.6, (900, 24, 24, 3)).astype(np.float32)
    y = rng.integers(0, 3, 900)
    for i, label in enumerate(y):
        x[i, :, :, label] += 0.4
    inputs = tf.keras.Input(shape=(24, 24, 3))
    h = L.Conv2D(8, 3, activation="relu")(inputs)
    h = L.MaxPooling2D()(h)
    h = L.Conv2D(16, 3, activation="relu")(h)
    h = L.MaxPooling2D()(h)
    h = L.Flatten()(h)
    h = L.Dense(16, activation="relu")(h)
    outputs = L.Dense(3, activation="softmax")(h)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.Adam(3e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=3, batch_size=32, verbose=0, shuffle=False)
    _save("keras_cnn_flatten", _convert(model, x, int8_io=True))


def regression() -> None:
    """hello_world's recipe: a 1 -> 16 -> 16 -> 1 MLP fitted to sin(x), int8 I/O."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(1620)
    rng = np.random.default_rng(1620)
    x = rng.uniform(0, 2 * np.pi, (1000, 1)).astype(np.float32)
    y = np.sin(x) + rng.normal(0, 0.05, x.shape).astype(np.float32)
    model = tf.keras.Sequential([tf.keras.Input(shape=(1,)), L.Dense(16, activation="relu"),
                                 L.Dense(16, activation="relu"), L.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, y, epochs=40, batch_size=32, verbose=0, shuffle=False)
    _save("keras_sine", _convert(model, x, int8_io=True))


if __name__ == "__main__":
    keyword_spotter()
    image_classifier()
    regression()
