"""Small versions of the models users bring (issue 26's 34 published models: float image
classifiers, VWW, ResNet-8, an FC autoencoder, MNIST nets, a float LSTM, camera models with uint8
inputs, YOLO-like detectors, landmark regressors), made the way their authors make them: Keras
layers with the framework's defaults, trained a few epochs on seeded synthetic tasks, converted by
the stock converter in float32, float16, or full-integer int8 with
``inference_input_type = tf.uint8`` (and often ``inference_output_type = tf.uint8``). Written to
``tests/models/users/``; ``tests/compiler/test_user_models.py`` compares each with TFLM and
``benchmarks/user_models.py`` tabulates what runs where.

Run from the repository root with a Python that has tensorflow-cpu (not a microbuild dependency):

    .venv/bin/pip install tensorflow-cpu==2.21.0
    .venv/bin/python tests/models/generate/keras_user_zoo.py

Every model keeps the open batch of ``tf.keras.Input(shape=...)`` and its BatchNormalization and
LayerNormalization layers as written; nothing is arranged to suit microbuild. Each file stays under
~100 KB. Seeded, with op determinism: reruns give identical files on the same TensorFlow version.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402
from keras_uint8 import _tf  # noqa: E402  (TensorFlow with op determinism)


def _save(name: str, data: bytes) -> None:
    if len(data) > 100_000:
        raise SystemExit(f"{name}: {len(data)} bytes, over the 100 KB a test model may take")
    print(f"{name}: {' '.join(op_names(data))}")
    save(f"users/{name}.tflite", data)


def _float(model) -> bytes:
    """The stock converter with no options at all: float32 everywhere."""
    return _tf().lite.TFLiteConverter.from_keras_model(model).convert()


def _float16(model) -> bytes:
    tf = _tf()
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.target_spec.supported_types = [tf.float16]
    return converter.convert()


def _int8(model, samples: np.ndarray, io: str | None) -> bytes:
    """Full-integer quantization calibrated on training samples; ``io`` is "uint8" (camera
    apps: uint8 in and out), "uint8_in" (uint8 in, float32 out) or None (float32 I/O)."""
    tf = _tf()

    def representative():
        for x in samples[:100]:
            yield [x[None].astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if io in ("uint8", "uint8_in"):
        converter.inference_input_type = tf.uint8
    if io == "uint8":
        converter.inference_output_type = tf.uint8
    return converter.convert()


def _images(rng, n: int, size: int, channels: int, classes: int):
    """Frames in [0, 1] whose class is the horizontal band that is brightest."""
    x = rng.uniform(0.0, 0.6, (n, size, size, channels)).astype(np.float32)
    y = rng.integers(0, classes, n)
    band = size // classes
    for i, label in enumerate(y):
        x[i, label * band:(label + 1) * band] += 0.4
    return x, y


def _classifier(model, x, y, epochs: int = 2):
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    return model


def mobilenet_v2_like() -> None:
    """MobileNetV2's stem and inverted residual blocks (expand 1x1 + BN + ReLU6, depthwise 3x3 +
    BN + ReLU6, project 1x1 + BN, residual Add), alpha ~0.25 at 32x32: float32, and int8 with a
    uint8 camera input and uint8 output."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4100)
    x, y = _images(np.random.default_rng(4100), 400, 32, 3, 4)

    def block(h, expand: int, out: int, stride: int):
        inp = h
        h = L.Conv2D(expand, 1, use_bias=False)(h)
        h = L.ReLU(6.0)(L.BatchNormalization()(h))
        h = L.DepthwiseConv2D(3, strides=stride, padding="same", use_bias=False)(h)
        h = L.ReLU(6.0)(L.BatchNormalization()(h))
        h = L.BatchNormalization()(L.Conv2D(out, 1, use_bias=False)(h))
        if stride == 1 and inp.shape[-1] == out:
            h = L.Add()([inp, h])
        return h

    inputs = tf.keras.Input(shape=(32, 32, 3))
    h = L.Conv2D(8, 3, strides=2, padding="same", use_bias=False)(inputs)
    h = L.ReLU(6.0)(L.BatchNormalization()(h))
    h = block(h, 24, 8, 1)
    h = block(h, 24, 16, 2)
    h = block(h, 48, 16, 1)
    h = L.ReLU(6.0)(L.BatchNormalization()(L.Conv2D(64, 1, use_bias=False)(h)))
    h = L.Dropout(0.2)(L.GlobalAveragePooling2D()(h))
    model = _classifier(tf.keras.Model(inputs, L.Dense(4, activation="softmax")(h)), x, y)
    _save("mobilenet_v2_float", _float(model))
    _save("mobilenet_v2_uint8", _int8(model, x, "uint8"))


def mobilenet_v3_like() -> None:
    """MobileNetV3-small's pieces: hard-swish, squeeze-and-excite (global pool, Dense ReLU, Dense
    hard-sigmoid, Multiply), at 32x32: float32, and int8 with uint8 input and float32 output."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4200)
    x, y = _images(np.random.default_rng(4200), 400, 32, 3, 4)

    def hard_swish(h):
        return L.Activation("hard_swish")(h)

    def squeeze_excite(h, channels: int):
        s = L.GlobalAveragePooling2D(keepdims=True)(h)
        s = L.Conv2D(channels // 4, 1, activation="relu")(s)
        s = L.Conv2D(channels, 1, activation="hard_sigmoid")(s)
        return L.Multiply()([h, s])

    inputs = tf.keras.Input(shape=(32, 32, 3))
    h = L.Rescaling(2.0, offset=-1.0)(inputs)
    h = hard_swish(L.BatchNormalization()(L.Conv2D(8, 3, strides=2, padding="same",
                                                    use_bias=False)(h)))
    h = L.DepthwiseConv2D(3, strides=2, padding="same", use_bias=False)(h)
    h = L.ReLU()(L.BatchNormalization()(h))
    h = squeeze_excite(h, 8)
    h = L.BatchNormalization()(L.Conv2D(16, 1, use_bias=False)(h))
    h = hard_swish(L.BatchNormalization()(L.Conv2D(32, 1, use_bias=False)(h)))
    h = L.DepthwiseConv2D(5, padding="same", use_bias=False)(h)
    h = hard_swish(L.BatchNormalization()(h))
    h = squeeze_excite(h, 32)
    h = L.GlobalAveragePooling2D()(h)
    h = hard_swish(L.Dense(32)(h))
    model = _classifier(tf.keras.Model(inputs, L.Dense(4, activation="softmax")(h)), x, y)
    _save("mobilenet_v3_float", _float(model))
    _save("mobilenet_v3_uint8_in", _int8(model, x, "uint8_in"))


def yolo_like() -> None:
    """A two-scale YOLO-like detector on 48x48 frames: a strided conv backbone, the coarse map
    upsampled with tf.image.resize's nearest neighbour (RESIZE_NEAREST_NEIGHBOR; Keras 3's
    UpSampling2D converts to TILE, which TFLM has no kernel for), concatenated with the fine
    one, 1x1 heads reshaped to (boxes, 4 + 1 + 2 classes), LOGISTIC,
    transposed to (values, boxes) as exported detectors do. int8 with uint8 in and out."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4300)
    rng = np.random.default_rng(4300)
    x = rng.uniform(0, 1, (300, 48, 48, 3)).astype(np.float32)
    targets = rng.uniform(0, 1, (300, 7, 6 * 6 * 2 + 12 * 12 * 2)).astype(np.float32)

    def conv(h, filters, stride=1):
        h = L.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(h)
        return L.LeakyReLU(0.1)(L.BatchNormalization()(h))

    inputs = tf.keras.Input(shape=(48, 48, 3))
    h = conv(inputs, 8, 2)
    h = conv(h, 16, 2)                           # 12x12
    fine = h
    h = conv(h, 24, 2)                           # 6x6
    coarse_head = L.Conv2D(2 * 7, 1)(h)
    up = L.Lambda(lambda t: tf.image.resize(t, (12, 12), method="nearest"))(L.Conv2D(8, 1)(h))
    h = L.Concatenate()([fine, up])
    fine_head = L.Conv2D(2 * 7, 1)(conv(h, 16))
    boxes = L.Concatenate(axis=1)([L.Reshape((-1, 7))(coarse_head),
                                   L.Reshape((-1, 7))(fine_head)])
    outputs = L.Permute((2, 1))(L.Activation("sigmoid")(boxes))
    model = tf.keras.Model(inputs, outputs)
    model.compile("adam", "mse")
    model.fit(x, targets, epochs=2, batch_size=32, verbose=0)
    _save("yolo_like_uint8", _int8(model, x, "uint8"))
    _save("yolo_like_float", _float(model))


def landmark_regressor() -> None:
    """A hand-landmark-like regressor (BlazePalm / MediaPipe style): PReLU convolutions, a
    hard-swish, a residual Add and max pooling, 21 (x, y) points from a sigmoid-free Dense head.
    int8 with a uint8 input and uint8 output, and float32."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4400)
    rng = np.random.default_rng(4400)
    x = rng.uniform(0, 1, (300, 32, 32, 3)).astype(np.float32)
    y = rng.uniform(0, 1, (300, 42)).astype(np.float32)
    inputs = tf.keras.Input(shape=(32, 32, 3))
    h = L.PReLU(shared_axes=[1, 2])(L.Conv2D(8, 3, strides=2, padding="same")(inputs))
    r = L.DepthwiseConv2D(3, padding="same")(h)
    r = L.PReLU(shared_axes=[1, 2])(L.Conv2D(8, 1)(r))
    h = L.Add()([h, r])
    h = L.MaxPooling2D(2)(h)
    h = L.Activation("hard_swish")(L.Conv2D(16, 3, padding="same")(h))
    h = L.Flatten()(L.MaxPooling2D(2)(h))
    outputs = L.Dense(42)(L.PReLU()(L.Dense(24)(h)))
    model = tf.keras.Model(inputs, outputs)
    model.compile("adam", "mse")
    model.fit(x, y, epochs=2, batch_size=32, verbose=0)
    _save("landmarks_uint8", _int8(model, x, "uint8"))
    _save("landmarks_float", _float(model))


def fc_autoencoder() -> None:
    """MLPerf Tiny's anomaly-detection autoencoder shape at 1/5 width, BatchNorm between Dense
    and ReLU as in the reference: float32 and float16-quantized."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4500)
    x = np.random.default_rng(4500).normal(0, 1, (500, 128)).astype(np.float32)
    inputs = tf.keras.Input(shape=(128,))
    h = inputs
    for units in (32, 32, 8, 32, 32):
        h = L.ReLU()(L.BatchNormalization()(L.Dense(units)(h)))
    model = tf.keras.Model(inputs, L.Dense(128)(h))
    model.compile("adam", "mse")
    model.fit(x, x, epochs=2, batch_size=32, verbose=0)
    _save("fc_autoencoder_float", _float(model))
    _save("fc_autoencoder_float16", _float16(model))


def mnist_cnn() -> None:
    """The Keras MNIST example's CNN at a quarter width (Conv-MaxPool twice, Flatten, Dropout,
    Dense softmax) on 28x28 digits-like blobs: float32, and int8 with float I/O."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4600)
    x, y = _images(np.random.default_rng(4600), 400, 28, 1, 7)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28, 28, 1)),
        L.Conv2D(8, 3, activation="relu"), L.MaxPooling2D(2),
        L.Conv2D(16, 3, activation="relu"), L.MaxPooling2D(2),
        L.Flatten(), L.Dropout(0.5), L.Dense(10, activation="softmax")])
    model = _classifier(model, x, y)
    _save("mnist_cnn_float", _float(model))
    _save("mnist_cnn_int8_float_io", _int8(model, x, None))


def recurrent() -> None:
    """Keras 3's GRU and LSTM layers converted the default way (float32), on 12 steps of 6
    features: each becomes a WHILE loop over a body subgraph (TF 2.21 fuses only Keras 2 layers).
    And a LayerNormalization + Dense 'transformer MLP' block on the sequence, batch fixed at 1
    (with an open batch a Dense on a rank-3 input computes its shape with REDUCE_PROD, which
    TFLM has no kernel for) and a ReLU MLP (Keras' gelu converts to GELU, which TFLM has no
    kernel for)."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4700)
    rng = np.random.default_rng(4700)
    x = rng.normal(0, 1, (300, 12, 6)).astype(np.float32)
    y = rng.integers(0, 3, 300)
    for name, layer in (("gru_float", L.GRU), ("lstm_float", L.LSTM)):
        inputs = tf.keras.Input(shape=(12, 6), batch_size=1)
        h = layer(10)(inputs)
        model = _classifier(tf.keras.Model(inputs, L.Dense(3, activation="softmax")(h)), x, y)
        _save(name, _float(model))
    inputs = tf.keras.Input(shape=(12, 6), batch_size=1)
    h = L.Dense(16)(inputs)
    h = L.LayerNormalization()(h)
    h = L.Add()([h, L.Dense(16, activation="relu")(h)])
    h = L.LayerNormalization()(h)
    h = L.GlobalAveragePooling1D()(h)
    model = _classifier(tf.keras.Model(inputs, L.Dense(3, activation="softmax")(h)), x, y)
    _save("layernorm_float", _float(model))
    _save("layernorm_int8_float_io", _int8(model, x, None))


def hybrid() -> None:
    """Dynamic-range quantization (Optimize.DEFAULT without a representative dataset): int8
    weights, float activations, hybrid kernels. TFLM refuses it; so must microbuild, clearly."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4800)
    x = np.random.default_rng(4800).normal(0, 1, (200, 64)).astype(np.float32)
    inputs = tf.keras.Input(shape=(64,))
    model = tf.keras.Model(inputs, L.Dense(4)(L.Dense(512, activation="relu")(inputs)))
    model.compile("adam", "mse")
    model.fit(x, x[:, :4], epochs=1, verbose=0)
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    _save("dense_hybrid", converter.convert())


def upsampling_tile() -> None:
    """Keras 3's UpSampling2D as a user's decoder writes it: it converts to TILE, which TFLM has
    no kernel for, so neither TFLM nor microbuild runs it (microbuild says so, naming TILE).
    Untrained: only the refusal matters."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(4900)
    inputs = tf.keras.Input(shape=(6, 6, 4))
    model = tf.keras.Model(inputs, L.Conv2D(3, 1)(L.UpSampling2D(2)(inputs)))
    _save("upsampling_tile_float", _float(model))


GENERATORS = (mobilenet_v2_like, mobilenet_v3_like, yolo_like, landmark_regressor,
              fc_autoencoder, mnist_cnn, recurrent, hybrid, upsampling_tile)

if __name__ == "__main__":
    import sys

    wanted = set(sys.argv[1:])  # function names; none: all of them
    for make in GENERATORS:
        if not wanted or make.__name__ in wanted:
            make()
