"""Models with the boundaries the stock converter gives a camera app and a float16-quantized
model, made the way users make them (Keras, trained a few epochs, default converter settings plus
the one option that matters here).

Run from the repository root with a Python that has tensorflow-cpu (not a microbuild dependency):

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu
    /tmp/tfvenv/bin/python tests/models/generate/keras_uint8.py

- ``keras_camera_uint8.tflite``: a small image classifier on 32x32 RGB frames, full-integer
  quantized with ``inference_input_type = tf.uint8`` and ``inference_output_type = tf.uint8``:
  the converter puts a uint8 -> int8 QUANTIZE at the input (camera frames are bytes) and an
  int8 -> uint8 QUANTIZE after the softmax.
- ``keras_float16.tflite``: a small MLP with ``target_spec.supported_types = [tf.float16]``: the
  weights are stored as float16, each behind a DEQUANTIZE to float32; the rest is float32.
Seeded, with op determinism: reruns give identical files on the same TensorFlow version.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _tf():
    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()
    return tf


def _save(name: str, data: bytes) -> None:
    print(f"{name}: {' '.join(op_names(data))}")
    save(f"boundaries/{name}.tflite", data)


def camera_classifier() -> None:
    """3 classes of 32x32 frames (which third of the frame is brightest), pixels in [0, 1]."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(2600)
    rng = np.random.default_rng(2600)
    x = rng.uniform(0.0, 0.6, (900, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 3, 900)
    for i, label in enumerate(y):
        x[i, :, label * 10:label * 10 + 10, :] += 0.4
    inputs = tf.keras.Input(shape=(32, 32, 3), batch_size=1)
    h = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inputs)
    h = L.DepthwiseConv2D(3, padding="same", activation="relu")(h)
    h = L.Conv2D(16, 1, activation="relu")(h)
    h = L.GlobalAveragePooling2D()(h)
    outputs = L.Dense(3, activation="softmax")(h)
    model = tf.keras.Model(inputs, outputs)
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=3, batch_size=32, verbose=0)

    def representative():
        for frame in x[:100]:
            yield [frame[None]]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.uint8
    converter.inference_output_type = tf.uint8
    _save("keras_camera_uint8", converter.convert())


def float16_mlp() -> None:
    """16 -> 32 -> 8 regression MLP, float16-quantized weights."""
    tf = _tf()
    L = tf.keras.layers
    seed_everything(2700)
    rng = np.random.default_rng(2700)
    x = rng.normal(0.0, 1.0, (600, 16)).astype(np.float32)
    y = np.tanh(x[:, :8] - x[:, 8:])
    inputs = tf.keras.Input(shape=(16,), batch_size=1)
    h = L.Dense(32, activation="relu")(inputs)
    outputs = L.Dense(8)(h)
    model = tf.keras.Model(inputs, outputs)
    model.compile("adam", "mse")
    model.fit(x, y, epochs=3, batch_size=32, verbose=0)
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.target_spec.supported_types = [tf.float16]
    data = converter.convert()
    _save("keras_float16", data)
    _save_tflite_dequantized(data, "keras_float16_dequantized.npz")


def _save_tflite_dequantized(data: bytes, name: str) -> None:
    """What TFLite's own DEQUANTIZE kernel makes of the float16 weights, keyed by the output
    tensor's name: the reference for microbuild's compile-time folding (TFLM's DEQUANTIZE has
    no float16 input, so TFLM does not run float16 models at all)."""
    tf = _tf()
    # Without XNNPACK, which would take the DEQUANTIZEs over: TFLite's reference kernel runs.
    resolver = tf.lite.experimental.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interpreter = tf.lite.Interpreter(model_content=data, experimental_op_resolver_type=resolver,
                                      experimental_preserve_all_tensors=True)
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    interpreter.set_tensor(detail["index"], np.zeros(detail["shape"], np.float32))
    interpreter.invoke()
    by_index = {t["index"]: t["name"] for t in interpreter.get_tensor_details()}
    arrays = {}
    for op in interpreter._get_ops_details():
        if op["op_name"] == "DEQUANTIZE":
            out = int(op["outputs"][0])
            arrays[by_index[out]] = interpreter.get_tensor(out)
    path = Path(__file__).resolve().parent.parent / "boundaries" / name
    np.savez(path, **arrays)
    print(f"wrote {path.name}: {len(arrays)} dequantized constants")


if __name__ == "__main__":
    camera_classifier()
    float16_mlp()
