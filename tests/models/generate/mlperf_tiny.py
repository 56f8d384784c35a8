"""Make int8 test models with the architectures of the MLPerf Tiny benchmarks, plus a tiny MLP.

Run from the repository root with a Python that has tensorflow-cpu:

    /tmp/tfvenv/bin/python tests/models/generate/mlperf_tiny.py

The models are untrained: weights come from seeded Keras initializers and batch-norm statistics from
``randomize_batchnorm``, so the files are byte-identical run after run. What matters for microbuild's
tests is the graph (operators, shapes, quantization parameters), not accuracy.

Architectures follow the MLPerf Tiny v0.1 reference training code (mlcommons/tiny):
  * keyword spotting: DS-CNN small,
  * image classification: ResNet-8 (the EEMBC ResNet v1 with 16/32/64 filters),
  * visual wake words: MobileNetV1 with width multiplier 0.25 at 96x96,
  * anomaly detection: the fully-connected autoencoder (640 -> 128x4 -> 8 -> 128x4 -> 640),
  * streaming wake word (v1.3): the DS-TCN of 30 frames x 40 features, four blocks of a
    temporal depthwise (Hx1 on a 1-wide input, no bias) and a pointwise conv with batch norm.

Every model uses a fixed batch size of 1. With a dynamic batch, Keras' Flatten becomes
SHAPE/STRIDED_SLICE/PACK/RESHAPE in the converted graph; with batch 1 it is a single RESHAPE with a
constant shape, which is all microbuild needs to support.
"""

from __future__ import annotations

import contextlib
import io
import os
import warnings
from dataclasses import dataclass
from typing import Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep TensorFlow's C++ start-up chatter out
# oneDNN kernels may round differently from TensorFlow's own; the plain kernels make the float
# graph (batch-norm folding, calibration statistics) depend less on which x86 CPU runs the script.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

# Run as a script: this file's folder is sys.path[0], so the shared helpers import directly.
from common import check_supported_ops, quantize_int8, randomize_batchnorm, save, seed_everything


def _layers():
    import tensorflow as tf

    return tf.keras.layers


def ds_cnn():
    """DS-CNN small for keyword spotting: 49 MFCC frames x 10 coefficients -> 12 classes."""
    import tensorflow as tf

    L = _layers()
    filters = 64
    inputs = tf.keras.Input(shape=(49, 10, 1), batch_size=1)
    # 'same' padding with stride 2 takes 49x10 to 25x5.
    x = L.Conv2D(filters, (10, 4), strides=(2, 2), padding="same")(inputs)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    x = L.Dropout(0.2)(x)  # identity at inference; kept so the layer list matches the reference
    for _ in range(4):
        x = L.DepthwiseConv2D((3, 3), padding="same")(x)
        x = L.BatchNormalization()(x)
        x = L.ReLU()(x)
        x = L.Conv2D(filters, (1, 1), padding="same")(x)
        x = L.BatchNormalization()(x)
        x = L.ReLU()(x)
    x = L.Dropout(0.4)(x)
    x = L.AveragePooling2D(pool_size=(25, 5))(x)
    x = L.Flatten()(x)
    outputs = L.Dense(12, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs, name="ds_cnn")


def resnet8():
    """ResNet-8 for CIFAR-10: 32x32x3 -> 10 classes; three residual stacks of 16, 32, 64 filters."""
    import tensorflow as tf

    L = _layers()

    def conv(filters, kernel, strides, x):
        return L.Conv2D(filters, kernel, strides=strides, padding="same",
                        kernel_initializer="he_normal")(x)

    inputs = tf.keras.Input(shape=(32, 32, 3), batch_size=1)
    x = conv(16, 3, 1, inputs)
    x = L.BatchNormalization()(x)
    x = L.ReLU()(x)
    for filters, strides in ((16, 1), (32, 2), (64, 2)):
        y = conv(filters, 3, strides, x)
        y = L.BatchNormalization()(y)
        y = L.ReLU()(y)
        y = conv(filters, 3, 1, y)
        y = L.BatchNormalization()(y)
        if strides != 1:
            # The identity path must be downsampled and widened to match: a strided 1x1 conv.
            x = conv(filters, 1, strides, x)
        x = L.Add()([x, y])
        x = L.ReLU()(x)  # the converter fuses this into the ADD
    x = L.AveragePooling2D(pool_size=int(x.shape[1]))(x)
    x = L.Flatten()(x)
    outputs = L.Dense(10, activation="softmax", kernel_initializer="he_normal")(x)
    return tf.keras.Model(inputs, outputs, name="resnet8")


def mobilenet_v1_025_vww():
    """MobileNetV1, width 0.25, for visual wake words: 96x96x3 -> person / no person."""
    import tensorflow as tf

    L = _layers()

    def bn_relu(x):
        return L.ReLU()(L.BatchNormalization()(x))

    inputs = tf.keras.Input(shape=(96, 96, 3), batch_size=1)
    filters = 8  # 32 * 0.25
    x = bn_relu(L.Conv2D(filters, 3, strides=2, padding="same", kernel_initializer="he_normal")(inputs))
    # The 13 depthwise-separable blocks of MobileNetV1: (depthwise stride, pointwise filters).
    blocks = [(1, 16), (2, 32), (1, 32), (2, 64), (1, 64), (2, 128),
              (1, 128), (1, 128), (1, 128), (1, 128), (1, 128), (2, 256), (1, 256)]
    for strides, filters in blocks:
        x = bn_relu(L.DepthwiseConv2D(3, strides=strides, padding="same",
                                      depthwise_initializer="he_normal")(x))
        x = bn_relu(L.Conv2D(filters, 1, padding="same", kernel_initializer="he_normal")(x))
    x = L.AveragePooling2D(pool_size=tuple(int(d) for d in x.shape[1:3]))(x)
    x = L.Flatten()(x)
    outputs = L.Dense(2, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs, name="mobilenet_v1_025_vww")


def anomaly_ae():
    """The anomaly-detection autoencoder: 640 log-mel features in, their reconstruction out."""
    import tensorflow as tf

    L = _layers()
    inputs = tf.keras.Input(shape=(640,), batch_size=1)
    x = inputs
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = L.Dense(units)(x)
        x = L.BatchNormalization()(x)
        x = L.ReLU()(x)
    outputs = L.Dense(640)(x)
    return tf.keras.Model(inputs, outputs, name="anomaly_ae")


def str_ww():
    """The streaming wake word DS-TCN: 30 frames (64 ms windows every 32 ms over 1 s) of 40
    features, as [time, 1, features] -> 3 classes. Each block is a DepthwiseConv2D of (k, 1) with
    'valid' padding and no bias, then a 1x1 Conv2D without bias, batch norm and ReLU; the time
    kernels 3, 5, 10, 15 take 30 frames down to 1, so Flatten sees 32 values."""
    import tensorflow as tf

    L = _layers()
    inputs = tf.keras.Input(shape=(30, 1, 40), batch_size=1)
    x = inputs
    for filters, kernel in ((128, 3), (64, 5), (64, 10), (32, 15)):
        x = L.DepthwiseConv2D((kernel, 1), padding="valid", use_bias=False)(x)
        x = L.Conv2D(filters, 1, use_bias=False, padding="valid")(x)
        x = L.BatchNormalization()(x)
        x = L.ReLU()(x)
    x = L.Flatten()(x)
    outputs = L.Dense(3)(x)
    return tf.keras.Model(inputs, outputs, name="str_ww")


def tiny_fc():
    """A 16 -> 8 -> 4 MLP (172 weight and bias bytes) small enough for an ATmega328P."""
    import tensorflow as tf

    L = _layers()
    inputs = tf.keras.Input(shape=(16,), batch_size=1)
    x = L.Dense(8, activation="relu")(inputs)
    x = L.Dense(4)(x)
    outputs = L.Softmax()(x)
    return tf.keras.Model(inputs, outputs, name="tiny_fc")


@dataclass(frozen=True)
class Spec:
    filename: str
    build: Callable
    seed: int
    low: float   # calibration inputs are uniform in [low, high]: the range the real input would have
    high: float


MODELS = [
    # MFCCs are not centred on zero; an asymmetric range gives an input zero point other than 0/-128.
    Spec("ds_cnn.tflite", ds_cnn, seed=1, low=-3.0, high=1.5),
    Spec("resnet8.tflite", resnet8, seed=2, low=0.0, high=1.0),                 # pixels / 255
    Spec("mobilenet_v1_025_vww.tflite", mobilenet_v1_025_vww, seed=3, low=-1.0, high=1.0),  # MobileNet preprocessing
    Spec("anomaly_ae.tflite", anomaly_ae, seed=4, low=-1.0, high=1.0),         # normalised log-mel
    Spec("tiny_fc.tflite", tiny_fc, seed=5, low=-1.0, high=1.0),
    # log filterbank energies: non-negative, a few units wide
    Spec("str_ww.tflite", str_ww, seed=6, low=0.0, high=4.0),
]


def make(spec: Spec) -> bytes:
    import tensorflow as tf

    # Layer names (conv2d_3, ...) end up as tensor names in the file. Clearing the session restarts
    # Keras' name counters, so each model's bytes do not depend on which models were built before it.
    tf.keras.backend.clear_session()
    seed_everything(spec.seed)
    model = spec.build()
    randomize_batchnorm(model, spec.seed)
    # The Keras export step prints the whole SavedModel signature; only our own summary is useful.
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = quantize_int8(model, spec.seed, low=spec.low, high=spec.high)
    check_supported_ops(spec.filename, data)
    return data


def main() -> None:
    for spec in MODELS:
        save(spec.filename, make(spec))


if __name__ == "__main__":
    main()
