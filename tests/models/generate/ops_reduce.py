"""Single-operator models for the reductions (SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN) and
the unary math operators TFLM has quantized kernels for (ABS, RSQRT, LOG_SOFTMAX,
L2_NORMALIZATION), made as users make them: tf ops in a tf.function (batch left open) through
the stock converter with a seeded representative dataset, int8 inputs and outputs, plus 16x8
models where TFLM has an int16 kernel (SUM, ABS).

    /work/tfenv/bin/python tests/models/generate/ops_reduce.py

Models the converter makes but TFLM cannot run (int8 EXP, LOG, NEG; int16 REDUCE_MAX/MIN; int64
ARG_MAX output) are not here: microbuild refuses them, and tests/compiler/test_ops_reduce.py
checks those refusals on models it builds itself.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _convert(fn, shape, seed: int, low: float, high: float, int16: bool = False) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(48):
            yield [rng.uniform(low, high, (1,) + shape).astype(np.float32)]

    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
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


def models() -> None:
    import tensorflow as tf

    seed = 2100
    # Every traced function stays referenced: the converter otherwise picked up an earlier
    # model's function now and then (a reused object id), REDUCE_MIN for a REDUCE_MAX.
    traced = []

    def build(name, op, shape, expected, low=-1.0, high=1.0, int16=False):
        nonlocal seed
        seed += 1
        seed_everything(seed)

        @tf.function(input_signature=[tf.TensorSpec((None,) + shape, tf.float32)])
        def fn(x):
            return op(x)

        traced.append(fn)
        data = _convert(fn, shape, seed, low, high, int16)
        if op_names(data) != expected:
            raise SystemExit(f"{name}: expected operators {expected}, the converter emitted "
                             f"{op_names(data)}")
        # The converted model must compute this op: its output shape is the op's.
        want = tuple(op(tf.zeros((1,) + shape)).shape)
        got = tuple(tf.lite.Interpreter(model_content=data).get_output_details()[0]["shape"])
        if got != want:
            raise SystemExit(f"{name}: the model's output shape is {got}, the op gives {want}")
        save(f"ops/{name}.tflite", data)

    # SUM: TFLM reduces at most two distinct axes.
    build("sum_hw", lambda x: tf.reduce_sum(x, axis=[1, 2]), (4, 6, 8), ["SUM"])
    build("sum_last_keepdims", lambda x: tf.reduce_sum(x, axis=-1, keepdims=True), (5, 7),
          ["SUM"], -0.5, 2.0)
    build("sum_neg_axes", lambda x: tf.reduce_sum(x, axis=[-1, 1]), (3, 4, 6), ["SUM"],
          -2.0, 1.0)
    build("sum_s16", lambda x: tf.reduce_sum(x, axis=[1], keepdims=True), (6, 5, 4), ["SUM"],
          -1.0, 1.5, int16=True)
    # REDUCE_MAX / REDUCE_MIN: any number of axes, raw values.
    build("reduce_max_axis1", lambda x: tf.reduce_max(x, axis=1), (4, 6, 8), ["REDUCE_MAX"])
    build("reduce_max_keepdims_neg", lambda x: tf.reduce_max(x, axis=[-1, -2], keepdims=True),
          (3, 5, 6), ["REDUCE_MAX"], -0.5, 3.0)
    build("reduce_min_all", lambda x: tf.reduce_min(x, axis=[1, 2, 3]), (4, 3, 5),
          ["REDUCE_MIN"])
    build("reduce_min_keepdims", lambda x: tf.reduce_min(x, axis=2, keepdims=True), (4, 6, 8),
          ["REDUCE_MIN"], -3.0, 1.0)
    # ARG_MAX / ARG_MIN with int32 indices (what TFLM writes).
    build("argmax_last", lambda x: tf.argmax(x, axis=-1, output_type=tf.int32), (4, 6, 8),
          ["ARG_MAX"])
    build("argmax_axis1", lambda x: tf.argmax(x, axis=1, output_type=tf.int32), (10, 3),
          ["ARG_MAX"])
    build("argmin_last", lambda x: tf.argmin(x, axis=-1, output_type=tf.int32), (12,),
          ["ARG_MIN"])
    build("argmin_axis2", lambda x: tf.argmin(x, axis=2, output_type=tf.int32), (4, 6, 8),
          ["ARG_MIN"])
    # Unary math: 256 elements each, so a test can feed every int8 value at once.
    build("abs", tf.abs, (16, 16), ["ABS"], -1.0, 2.0)
    build("abs_s16", tf.abs, (16, 16), ["ABS"], -1.0, 2.0, int16=True)
    build("rsqrt", tf.math.rsqrt, (16, 16), ["RSQRT"], 0.05, 4.0)
    # No rsqrt_s16: int16 is quantized symmetrically, so half the inputs are negative and TFLM
    # stops with an error on them; the test checks int16 RSQRT on non-negative inputs.
    build("log_softmax", tf.nn.log_softmax, (4, 10), ["LOG_SOFTMAX"], -3.0, 3.0)
    build("log_softmax_wide", tf.nn.log_softmax, (2, 40), ["LOG_SOFTMAX"], -8.0, 8.0)
    build("l2norm", lambda x: tf.math.l2_normalize(x, axis=-1), (6, 16), ["L2_NORMALIZATION"],
          -2.0, 2.0)
    build("l2norm_rank4", lambda x: tf.math.l2_normalize(x, axis=-1), (4, 4, 8),
          ["L2_NORMALIZATION"], -1.0, 3.0)
    # (Keras' UnitNormalization layer is not here: the converter decomposes it into a float
    # SQUARE between DEQUANTIZE and QUANTIZE, SUM, RSQRT, MINIMUM and MUL.)

if __name__ == "__main__":
    models()
