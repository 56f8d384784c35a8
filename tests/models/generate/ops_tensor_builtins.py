"""Models for the tensor-building, logical and indexing operators (BROADCAST_TO, FILL, ZEROS_LIKE,
LOGICAL_AND/OR/NOT, REDUCE_ALL, GATHER_ND, REVERSE_V2) and CUMSUM, made as users make them: tf ops
in a tf.function through the stock converter, int8 (tests/models/ops/, with a seeded representative
dataset) and float32 (tests/models/float/, no quantization)::

    /work/tfenv/bin/python tests/models/generate/ops_tensor_builtins.py

The logical operators and REDUCE_ALL give bool; each model ends in a SELECT_V2 (tf.where) so its
output is a number, the way a model uses a mask. The generator checks every model's operator list:
the converter folds what it can (a FILL or ZEROS_LIKE of a fixed shape becomes a constant), so the
shapes that must stay open are left open.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _convert(fn, shapes, seed: int, quantize: bool) -> bytes:
    import tensorflow as tf

    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(48):
            yield [rng.uniform(-1.0, 1.0, (1,) + s).astype(np.float32) for s in shapes]

    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
    if quantize:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int8
    return converter.convert()


def models() -> None:
    import tensorflow as tf

    seed = 2600
    traced = []  # keep every traced function alive (see ops_reduce.py)

    def build(name, op, shapes, expected, kinds=("int8", "float32")):
        nonlocal seed
        for quantize in (kind == "int8" for kind in kinds):
            seed += 1
            seed_everything(seed)
            spec = [tf.TensorSpec((None,) + s, tf.float32) for s in shapes]

            @tf.function(input_signature=spec)
            def fn(*xs):
                return op(*xs)

            traced.append(fn)
            data = _convert(fn, shapes, seed, quantize)
            ops = [o for o in op_names(data) if o not in ("QUANTIZE", "DEQUANTIZE")]
            if sorted(ops) != sorted(expected):
                raise SystemExit(f"{name}: expected operators {expected}, the converter emitted "
                                 f"{op_names(data)}")
            save(f"ops/{name}.tflite" if quantize else f"float/{name}.tflite", data)

    # Each model holds a family of operators side by side (one output each), so one compile
    # and one TFLM run check them all.
    build("tensor_builtins_layout",
          lambda x, y, z: (tf.broadcast_to(y, (1, 4, 3, 6)),
                           tf.broadcast_to(z, (1, 2, 3, 2, 5)),
                           tf.reverse(x, [1]),
                           tf.reverse(x, [2, 3]),
                           # TFLM's FILL takes constant dims only (not tf.shape of an open batch).
                           tf.fill((2, 3, 4), tf.reduce_max(x)),
                           tf.gather_nd(x, [[0, 1, 2], [0, 3, 0], [0, 4, 3]])),
          [(5, 4, 3), (3, 1), (3, 1, 5)],
          ["BROADCAST_TO", "BROADCAST_TO", "REVERSE_V2", "REVERSE_V2", "REDUCE_MAX", "FILL",
           "GATHER_ND"])
    # tf.math.logical_xor is (a or b) and not (a and b): the three logical operators at once
    # (the converter turns a plain not(x > 0) into x <= 0).
    build("tensor_builtins_logical",
          lambda x, y: (tf.where(tf.math.logical_xor(x > 0.0, y > x), x, y),
                        tf.where(tf.logical_and(x > 0.25, y < 0.5), x, y),
                        tf.where(tf.reduce_all(x > -0.5, axis=-1, keepdims=True), x, y)),
          [(3, 5), (1, 5)],
          ["GREATER", "GREATER", "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR", "LOGICAL_AND",
           "SELECT_V2", "GREATER", "LESS", "LOGICAL_AND", "SELECT_V2", "GREATER", "REDUCE_ALL",
           "SELECT_V2"])
    # With the batch open the converter keeps ZEROS_LIKE; the int8 converter leaves it in float
    # between DEQUANTIZE and QUANTIZE, so only the float model.
    build("zeros_like_open_batch", lambda x: tf.concat([x, tf.zeros_like(x)], axis=-1),
          [(3, 4)], ["ZEROS_LIKE", "CONCATENATION"], kinds=("float32",))
    build("tensor_builtins_cumsum",
          lambda x: (tf.math.cumsum(x, axis=1),
                     tf.math.cumsum(x, axis=-1, exclusive=True, reverse=True),
                     tf.math.cumsum(x, axis=2, reverse=True)),
          [(6, 5, 4)], ["CUMSUM", "CUMSUM", "CUMSUM"])
    for fn in traced:
        del fn


if __name__ == "__main__":
    models()
