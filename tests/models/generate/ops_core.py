"""Single-operator test models for FULLY_CONNECTED, RESHAPE and SOFTMAX, plus models the compiler
must refuse.

Run with a Python that has tensorflow-cpu:  /tmp/tfvenv/bin/python tests/models/generate/ops_core.py
Writes tests/models/ops/*.tflite. Every model is seeded, so reruns give byte-identical files.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import quantize_int8, save, seed_everything  # noqa: E402


def _convert(model, seed: int, per_channel_dense: bool = True, low=-1.0, high=1.0,
             inputs_int8: bool = True) -> bytes:
    """quantize_int8, with the option to make FULLY_CONNECTED weights per tensor (TF 2.21's
    converter makes Dense weights per channel unless told otherwise)."""
    options = None if per_channel_dense else {
        "_experimental_disable_per_channel_quantization_for_dense_layers": True}
    return quantize_int8(model, seed, low=low, high=high, inputs_int8=inputs_int8,
                         converter_options=options)


def _dense_model(seed: int, input_shape, units: int, use_bias: bool, activation: str | None,
                 zero_bias: bool = False):
    import tensorflow as tf

    seed_everything(seed)
    inp = tf.keras.Input(shape=input_shape, batch_size=1)
    layer = tf.keras.layers.Dense(units, use_bias=use_bias, activation=activation)
    out = layer(inp)
    model = tf.keras.Model(inp, out)
    if use_bias:
        kernel, bias = layer.get_weights()
        rng = np.random.default_rng(seed + 1)
        bias = np.zeros_like(bias) if zero_bias else rng.uniform(-0.5, 0.5, bias.shape)
        layer.set_weights([kernel, bias.astype(np.float32)])
    return model


def fully_connected_models() -> None:
    cases = [
        # name, input shape, units, bias, activation, per-channel
        ("fc_bias_none_pc", (16,), 8, True, None, True),
        ("fc_bias_relu_pc", (32,), 10, True, "relu", True),
        ("fc_bias_relu6_pt", (24,), 12, True, "relu6", False),
        ("fc_bias_none_pt", (16,), 8, True, None, False),
        ("fc_nobias_none_pc", (20,), 6, False, None, True),
        ("fc_nobias_relu_pt", (20,), 6, False, "relu", False),
        ("fc_keepdims_pc", (3, 12), 5, True, None, True),
        ("fc_wide_pc", (256,), 64, True, "relu", True),
        # depth 39: an odd count of 4-byte chunks and a 3-byte tail; 7 units: a group of 4 rows
        # and 3 rows left over (every path of the 4-rows-per-pass variants).
        ("fc_odd_depth_pt", (39,), 7, True, None, False),
    ]
    for i, (name, shape, units, bias, act, per_channel) in enumerate(cases):
        model = _dense_model(100 + i, shape, units, bias, act)
        save(f"ops/{name}.tflite", _convert(model, 100 + i, per_channel_dense=per_channel))
    # An all-zero bias: the converter drops the bias input (index -1).
    model = _dense_model(120, (16,), 8, True, None, zero_bias=True)
    save("ops/fc_zero_bias_pc.tflite", _convert(model, 120))


def _patch_softmax_beta(data: bytes, beta: float) -> bytes:
    """Set SoftmaxOptions.beta in place. Keras' Softmax layer always converts with beta = 1, and
    the converter's scale-folding is not guaranteed, so the field is overwritten directly."""
    from tensorflow.lite.python.schema_py_generated import Model

    buf = bytearray(data)
    model = Model.GetRootAs(buf, 0)
    sub = model.Subgraphs(0)
    patched = 0
    for i in range(sub.OperatorsLength()):
        op = sub.Operators(i)
        table = op.BuiltinOptions()
        if op.BuiltinOptionsType() != 9 or table is None:  # 9 = SoftmaxOptions
            continue
        field = table.Offset(4)  # beta is field 0 (vtable offset 4)
        if field == 0:
            raise RuntimeError("softmax options store no beta field to patch")
        struct.pack_into("<f", buf, table.Pos + field, beta)
        patched += 1
    if patched == 0:
        raise RuntimeError("no SOFTMAX with options found")
    return bytes(buf)


def softmax_models() -> None:
    import tensorflow as tf

    cases = [
        ("softmax_1x10", (10,), 1.0, 4.0),
        ("softmax_1x10_beta0p5", (10,), 0.5, 4.0),
        ("softmax_1x10_beta2", (10,), 2.0, 4.0),
        ("softmax_5x12", (5, 12), 1.0, 8.0),
        ("softmax_1x64_narrow", (64,), 1.0, 0.5),
        ("softmax_1x7_wide", (7,), 1.0, 30.0),
    ]
    for i, (name, shape, beta, span) in enumerate(cases):
        seed_everything(200 + i)
        inp = tf.keras.Input(shape=shape, batch_size=1)
        out = tf.keras.layers.Softmax()(inp)
        model = tf.keras.Model(inp, out)
        data = _convert(model, 200 + i, low=-span, high=span)
        if beta != 1.0:
            data = _patch_softmax_beta(data, beta)
        save(f"ops/{name}.tflite", data)


def reshape_models() -> None:
    import tensorflow as tf

    # RESHAPE alone: graph input to graph output (the code generator copies).
    seed_everything(300)
    inp = tf.keras.Input(shape=(4, 8), batch_size=1)
    out = tf.keras.layers.Reshape((32,))(inp)
    save("ops/reshape_only.tflite", _convert(tf.keras.Model(inp, out), 300))

    # FC -> RESHAPE -> FC -> RESHAPE -> SOFTMAX: the reshapes alias intermediates.
    seed_everything(301)
    inp = tf.keras.Input(shape=(24,), batch_size=1)
    x = tf.keras.layers.Dense(32, activation="relu")(inp)
    x = tf.keras.layers.Reshape((4, 8))(x)
    x = tf.keras.layers.Dense(6)(x)
    x = tf.keras.layers.Reshape((24,))(x)
    x = tf.keras.layers.Dense(10)(x)
    out = tf.keras.layers.Softmax()(x)
    save("ops/fc_reshape_chain.tflite", _convert(tf.keras.Model(inp, out), 301))

    # Two outputs, one of them also feeding a later op.
    seed_everything(302)
    inp = tf.keras.Input(shape=(16,), batch_size=1)
    hidden = tf.keras.layers.Dense(12, activation="relu")(inp)
    logits = tf.keras.layers.Dense(5)(hidden)
    probs = tf.keras.layers.Softmax()(logits)
    save("ops/fc_two_outputs.tflite", _convert(tf.keras.Model(inp, [hidden, probs]), 302))


def unsupported_models() -> None:
    import tensorflow as tf

    # Unsupported operators are made with tflite_builder in the tests (test_compile_errors.py):
    # any operator a Keras model can produce may be supported by the time a test runs.

    # A float model: nothing quantized at all.
    seed_everything(401)
    inp = tf.keras.Input(shape=(8,), batch_size=1)
    out = tf.keras.layers.Dense(4)(inp)
    converter = tf.lite.TFLiteConverter.from_keras_model(tf.keras.Model(inp, out))
    save("ops/float_dense.tflite", converter.convert())

    # A batch dimension left open: shape_signature [-1, 8].
    seed_everything(402)
    inp = tf.keras.Input(shape=(8,))
    out = tf.keras.layers.Dense(4)(inp)
    save("ops/dynamic_batch_fc.tflite", _convert(tf.keras.Model(inp, out), 402))

    # Control flow: a WHILE op whose condition and body are further subgraphs.
    @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32)])
    def loop(x):
        return tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0),
                             [tf.constant(0), x])[1]

    converter = tf.lite.TFLiteConverter.from_concrete_functions([loop.get_concrete_function()])
    save("ops/while_loop.tflite", converter.convert())


if __name__ == "__main__":
    fully_connected_models()
    softmax_models()
    reshape_models()
    unsupported_models()
