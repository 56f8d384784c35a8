"""Single-operator TRANSPOSE_CONV, BATCH_MATMUL and 16x8 SOFTMAX models, and resource-variable
models (tf.Variable state in a tf.Module, variable_models), made as users make them:
Keras layers (and tf ops in a tf.function where Keras has no layer) through the stock converter
with a seeded representative dataset, int8 (or, for the _s16 models, 16x8 with int16) inputs
and outputs, the batch left open as Keras leaves it.

    /work/tfenv/bin/python tests/models/generate/ops_tconv.py

Conv2DTranspose with an open batch comes out as SHAPE -> STRIDED_SLICE -> PACK -> TRANSPOSE_CONV
(the output shape computed from the batch); with a fixed batch the output shape is a constant.
Besides the single-operator models, a small convolutional autoencoder (int8 and 16x8) puts two
TRANSPOSE_CONVs between convolutions; it is made last so that the Keras name counters, which end
up in tensor names, leave the other models' bytes as they are.
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
    import tensorflow as tf

    ops = op_names(data)
    if ops != expected:
        raise SystemExit(f"{name}: expected operators {expected}, the converter emitted {ops}")
    # A calibration gone wrong shows as an absurd output scale (every output value 0).
    for detail in tf.lite.Interpreter(model_content=data).get_output_details():
        scale = detail["quantization"][0]
        if not 0 < scale < 1e3:
            raise SystemExit(f"{name}: output scale {scale} from the converter's calibration")
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


def _matmul_layers():
    import tensorflow as tf

    class MatMul(tf.keras.layers.Layer):
        """tf.linalg.matmul of two model inputs (what tf.matmul in a Keras model does)."""

        def __init__(self, adj_x: bool = False, adj_y: bool = False, **kwargs):
            super().__init__(**kwargs)
            self.adj_x, self.adj_y = adj_x, adj_y

        def call(self, a, b):
            return tf.linalg.matmul(a, b, adjoint_a=self.adj_x, adjoint_b=self.adj_y)

    class ConstMatMul(tf.keras.layers.Layer):
        """An input times a weight of its own (rank 2 or more): a constant rhs."""

        def __init__(self, shape, adj_y: bool = False, **kwargs):
            super().__init__(**kwargs)
            self.rhs_shape, self.adj_y = tuple(shape), adj_y

        def build(self, input_shape):
            self.w = self.add_weight(shape=self.rhs_shape, initializer="glorot_uniform")

        def call(self, a):
            return tf.linalg.matmul(a, self.w, adjoint_b=self.adj_y)

    return MatMul, ConstMatMul


def batch_matmul_models() -> None:
    import tensorflow as tf

    MatMul, ConstMatMul = _matmul_layers()
    seeds = _Seeds(2700)
    # Inputs are named in order: the converter orders a model's inputs by name.
    two = [
        # name, lhs shape, rhs shape (both without the batch), adj_x, adj_y, 16x8
        ("bmm_3x4_4x5", (3, 4), (4, 5), False, False, False),
        ("bmm_adj_x", (6, 3), (6, 5), True, False, False),
        ("bmm_adj_y", (3, 7), (4, 7), False, True, False),
        ("bmm_adj_xy", (4, 3), (5, 4), True, True, False),
        ("bmm_bcast_rank4", (2, 3, 4), (1, 4, 5), False, False, False),
        ("bmm_bcast_rank5", (1, 3, 2, 5), (2, 1, 3, 5), False, True, False),
        ("bmm_s16_3x4_4x5", (3, 4), (4, 5), False, False, True),
        # 16x8 with adj_x and a broadcast batch is left out: TF 2.21's calibration of it gives
        # a garbage output scale (1e21 one run, sensible the next).
        ("bmm_s16_adj_y_bcast", (2, 3, 6), (1, 4, 6), False, True, True),
        ("bmm_s16_adj_x", (6, 3), (6, 4), True, False, True),
    ]
    for name, ls, rs, adj_x, adj_y, int16 in two:
        seed = seeds.next()
        a, b = tf.keras.Input(ls, name="lhs"), tf.keras.Input(rs, name="rhs")
        model = tf.keras.Model([a, b], MatMul(adj_x, adj_y)(a, b))
        _save(name, _convert(model, seed, [(1,) + ls, (1,) + rs], [(-1.0, 1.5), (-2.0, 1.0)],
                             int16), ["BATCH_MATMUL"])
    const = [
        # name, lhs shape (without the batch), rhs (constant) shape, adj_y, 16x8
        ("bmm_const_rhs_bcast", (2, 3, 4), (2, 4, 6), False, False),
        ("bmm_const_rhs_adj_y", (5, 8), (1, 6, 8), True, False),
    ]
    for name, ls, rs, adj_y, int16 in const:
        seed = seeds.next()
        a = tf.keras.Input(ls, name="lhs")
        model = tf.keras.Model(a, ConstMatMul(rs, adj_y)(a))
        _save(name, _convert(model, seed, [(1,) + ls], [(-1.0, 1.0)], int16), ["BATCH_MATMUL"])

    # tf.matmul of a matrix by a stack of matrices (ranks 2 and 3, the lhs broadcast), fixed
    # shapes in a tf.function.
    seeds.next()

    @tf.function(input_signature=[tf.TensorSpec([3, 4], tf.float32, name="lhs"),
                                  tf.TensorSpec([2, 4, 5], tf.float32, name="rhs")])
    def rank2_by_rank3(lhs, rhs):
        return tf.matmul(lhs, rhs)

    _save("bmm_rank2_by_rank3", _convert(rank2_by_rank3, seeds.value, [(3, 4), (2, 4, 5)],
                                         [(-1.0, 1.0), (-1.5, 1.5)]), ["BATCH_MATMUL"])


def softmax_s16_models() -> None:
    import tensorflow as tf
    from ops_core import _patch_softmax_beta

    class ScaledSoftmax(tf.keras.layers.Layer):
        """softmax(beta * x)."""

        def __init__(self, beta: float, **kwargs):
            super().__init__(**kwargs)
            self.beta = beta

        def call(self, x):
            return tf.nn.softmax(self.beta * x)

    seeds = _Seeds(2800)
    cases = [
        # name, shape (without the batch), calibration span, beta (patched into the options)
        ("softmax_s16_1x10", (10,), 4.0, 1.0),
        ("softmax_s16_5x12", (5, 12), 8.0, 1.0),
        ("softmax_s16_3x4x7_wide", (3, 4, 7), 30.0, 1.0),
        ("softmax_s16_1x64_narrow", (64,), 0.5, 1.0),
        ("softmax_s16_1x10_beta0p5", (10,), 4.0, 0.5),
        ("softmax_s16_1x10_beta2", (10,), 4.0, 2.0),
        ("softmax_s16_1x300", (300,), 6.0, 1.0),
    ]
    for name, shape, span, beta in cases:
        seed = seeds.next()
        x = tf.keras.Input(shape=shape)
        model = tf.keras.Model(x, tf.keras.layers.Softmax()(x))
        data = _convert(model, seed, [(1,) + shape], [(-span, span)], int16=True)
        if beta != 1.0:
            data = _patch_softmax_beta(data, beta)
        _save(name, data, ["SOFTMAX"])
    # softmax(3 * x): the 16x8 converter keeps the multiplication (int8 would fold it into beta).
    seed = seeds.next()
    x = tf.keras.Input(shape=(12,))
    model = tf.keras.Model(x, ScaledSoftmax(3.0)(x))
    _save("softmax_s16_1x12_times3",
          _convert(model, seed, [(1, 12)], [(-2.0, 2.0)], int16=True), ["MUL", "SOFTMAX"])


def autoencoder_models() -> None:
    """Last, so that the Keras name counters of the models before stay as they were."""
    import tensorflow as tf

    L = tf.keras.layers
    seeds = _Seeds(2900)
    # A small convolutional autoencoder: two strided convolutions down, two transposed ones up.
    for name, int16 in (("tconv_autoencoder_pc", False), ("tconv_s16_autoencoder", True)):
        seed = seeds.next()
        x = tf.keras.Input(shape=(16, 16, 3))
        h = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
        h = L.Conv2D(16, 3, strides=2, padding="same", activation="relu")(h)
        h = L.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(h)
        h = L.Conv2DTranspose(4, 4, strides=2, padding="same")(h)
        y = L.Conv2D(3, 3, padding="same", activation="sigmoid")(h)
        model = tf.keras.Model(x, y)
        randomize_biases(model, seed)
        _save(name, _convert(model, seed, [(1, 16, 16, 3)], [(0.0, 1.0)], int16),
              ["CONV_2D", "CONV_2D"] + OPEN_BATCH_TCONV + OPEN_BATCH_TCONV
              + ["CONV_2D", "LOGISTIC"])


def variable_models() -> None:
    """Resource variables: tf.Variable state in a tf.Module, assigned on every call, converted
    with experimental_enable_resource_variables (CALL_ONCE initializes the variables; the
    converter keeps them float32 between a DEQUANTIZE and a QUANTIZE). Fixed shapes."""
    import tensorflow as tf

    class Smoother(tf.Module):
        """v = decay * v + x, returned; v starts at ``start``."""

        def __init__(self, shape, decay: float, start: float):
            super().__init__()
            self.decay = decay
            self.v = tf.Variable(tf.fill(shape, start))
            self.call = tf.function(self._call, input_signature=[tf.TensorSpec(shape, tf.float32)])

        def _call(self, x):
            v = self.v * self.decay + x
            self.v.assign(v)
            return v

    class TwoStage(tf.Module):
        """Two chained smoothers, both kept between calls."""

        def __init__(self, shape):
            super().__init__()
            self.a = tf.Variable(tf.zeros(shape))
            self.b = tf.Variable(tf.fill(shape, -0.25))
            self.call = tf.function(self._call, input_signature=[tf.TensorSpec(shape, tf.float32)])

        def _call(self, x):
            a = self.a * 0.5 + x
            b = self.b * 0.75 + a * 0.25
            self.a.assign(a)
            self.b.assign(b)
            return b

    seeds = _Seeds(3000)
    cases = [("var_smoother", Smoother((1, 8), 0.5, 0.0), (1, 8), False),
             ("var_smoother_start", Smoother((2, 5), 0.8, 0.4), (2, 5), False),
             ("var_two_stage", TwoStage((1, 6)), (1, 6), False),
             ("var_s16_smoother", Smoother((1, 8), 0.5, 0.1), (1, 8), True)]
    for name, module, shape, int16 in cases:
        seed = seeds.next()
        rng = np.random.default_rng(seed)

        def representative():
            for _ in range(40):
                yield [rng.uniform(-1.0, 1.0, shape).astype(np.float32)]

        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [module.call.get_concrete_function()], module)
        converter.experimental_enable_resource_variables = True
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        if int16:
            converter.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
            converter.inference_input_type = converter.inference_output_type = tf.int16
        else:
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            converter.inference_input_type = converter.inference_output_type = tf.int8
        data = converter.convert()
        ops = op_names(data)
        if ops[:1] != ["CALL_ONCE"] or "VAR_HANDLE" not in ops or "ASSIGN_VARIABLE" not in ops:
            raise SystemExit(f"{name}: expected resource variables, the converter emitted {ops}")
        print(f"{name}: {ops}")
        _save(name, data, ops)
    # Left in float32 (no optimizations): the variables stay float32 state, read and assigned
    # as they are; tests/models/float/var_two_stage_float.tflite.
    module = TwoStage((1, 6))
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [module.call.get_concrete_function()], module)
    converter.experimental_enable_resource_variables = True
    data = converter.convert()
    ops = op_names(data)
    if ops[:1] != ["CALL_ONCE"] or ops.count("ASSIGN_VARIABLE") != 2:
        raise SystemExit(f"var_two_stage_float: expected resource variables, got {ops}")
    print(f"var_two_stage_float: {ops}")
    save("float/var_two_stage_float.tflite", data)


def models() -> None:
    transpose_conv_models()
    batch_matmul_models()
    softmax_s16_models()
    autoencoder_models()
    variable_models()


if __name__ == "__main__":
    models()
