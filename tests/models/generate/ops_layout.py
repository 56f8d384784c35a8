"""Data-movement operator models, made as users make them: Keras models (``Input`` without a batch
size, so the batch stays open) whose layers are ``tf`` slicing, splitting, stacking and gathering
ops, through the stock int8 converter (and the 16x8 one for ``_s16``). Each model's operator list
is checked: these are the STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, SQUEEZE, EXPAND_DIMS, PACK, UNPACK
and GATHER that converted models carry.

    /work/tfenv/bin/python tests/models/generate/ops_layout.py

``gather_runtime_indices.tflite`` (int32 indices as a second model input) goes to
``tests/models/indices/``, apart from the models every suite feeds random inputs (``ops/`` and
``tests/models/*.tflite``): random int32 indices would be out of range, which TFLM answers with an
error status. tests/compiler/test_ops_layout.py feeds it valid and invalid indices itself.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
from common import op_names, save, seed_everything  # noqa: E402


def _convert(model, seed: int, int16: bool = False, index_input: int | None = None) -> bytes:
    """``index_input``: the position of an int32 input (indices) that stays int32, fed seeded
    valid indices below that bound during calibration."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    specs = [(tuple(int(d) for d in t.shape[1:]), t.dtype) for t in model.inputs]

    def representative():
        for _ in range(32):
            sample = []
            for k, (shape, dtype) in enumerate(specs):
                if k == index_input:
                    sample.append(rng.integers(0, 4, (1,) + shape).astype(np.int32))
                else:
                    sample.append(rng.uniform(-1.5, 2.0, (1,) + shape).astype(np.float32))
            yield sample

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
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


_PROBLEMS: list[str] = []


def _save(name: str, data: bytes, expected: list[str], where: str = "ops") -> None:
    ops = op_names(data)
    if ops != expected:
        _PROBLEMS.append(f"{name}: expected operators {expected}, the converter emitted {ops}")
        print(_PROBLEMS[-1])
        return
    save(f"{where}/{name}.tflite", data)


class _Fn:
    """A Keras layer applying a tf function (Lambda without its serialization warnings)."""

    def __new__(cls, fn, name):
        import tensorflow as tf

        class Apply(tf.keras.layers.Layer):
            def call(self, *args):
                return fn(*args)

        return Apply(name=name)


def models() -> None:
    import tensorflow as tf

    seed = 2300

    def one(name, shape, fn, expected, int16=False):
        nonlocal seed
        seed += 1
        seed_everything(seed)
        x = tf.keras.Input(shape=shape)
        y = _Fn(fn, name)(x)
        outputs = list(y) if isinstance(y, (list, tuple)) else y
        _save(name, _convert(tf.keras.Model(x, outputs), seed, int16), expected)

    # STRIDED_SLICE: steps, masks, negative strides, shrinking an axis, ellipsis
    one("strided_slice_step2", (9, 4), lambda t: t[:, 1:8:2, :], ["STRIDED_SLICE"])
    one("strided_slice_masks_neg", (6, 7, 5), lambda t: t[:, 1:, ::-2, :3], ["STRIDED_SLICE"])
    one("strided_slice_shrink", (5, 6, 3), lambda t: t[:, 2, -5:-1, 1], ["STRIDED_SLICE"])
    one("strided_slice_ellipsis", (4, 5, 8), lambda t: t[..., 6:1:-3], ["STRIDED_SLICE"])
    one("strided_slice_newaxis", (5, 6), lambda t: t[:, tf.newaxis, 1:4],
        ["RESHAPE", "STRIDED_SLICE"])
    one("strided_slice_s16", (7, 6), lambda t: t[:, ::-3, 1:5], ["STRIDED_SLICE"], int16=True)
    # SLICE
    one("slice_rank4", (6, 5, 7), lambda t: tf.slice(t, [0, 1, 2, 3], [-1, 4, 2, 4]),
        ["SLICE"])
    one("slice_s16", (9, 6), lambda t: tf.slice(t, [0, 3, 1], [-1, 5, -1]), ["SLICE"],
        int16=True)
    # SPLIT (equal parts) and SPLIT_V (uneven)
    one("split_equal3", (4, 9), lambda t: tf.split(t, 3, axis=-1), ["SPLIT"])
    one("split_axis1_s16", (6, 3, 2), lambda t: tf.split(t, 2, axis=1), ["SPLIT"], int16=True)
    one("split_v_uneven", (8, 3), lambda t: tf.split(t, [2, 5, 1], axis=1), ["SPLIT_V"])
    one("split_v_s16", (4, 7), lambda t: tf.split(t, [4, 3], axis=2), ["SPLIT_V"], int16=True)
    # EXPAND_DIMS (SQUEEZE: below)
    one("expand_dims_axis2", (5, 6), lambda t: tf.expand_dims(t, 2), ["EXPAND_DIMS"])
    one("expand_dims_s16", (4, 3), lambda t: tf.expand_dims(t, -1), ["EXPAND_DIMS"], int16=True)
    # PACK, UNPACK
    one("unpack_axis1", (3, 4, 2), lambda t: tf.unstack(t, axis=1), ["UNPACK"])
    one("unpack_s16", (2, 5), lambda t: tf.unstack(t, axis=2), ["UNPACK"], int16=True)
    one("pack_axis2_slices", (4, 6), lambda t: tf.stack([t[:, 0], t[:, 3], t[:, 1]], axis=2),
        ["STRIDED_SLICE"] * 3 + ["PACK"])
    one("pack_unpack_s16", (3, 4, 2), lambda t: tf.stack(tf.unstack(t, axis=1)[::-1], axis=-1),
        ["UNPACK", "PACK"], int16=True)
    seed += 1
    seed_everything(seed)
    a, b = tf.keras.Input(shape=(4, 3)), tf.keras.Input(shape=(4, 3))
    _save("pack_two_inputs_axis1",
          _convert(tf.keras.Model([a, b], _Fn(lambda u, v: tf.stack([u, v], axis=1),
                                              "pack")(a, b)), seed), ["PACK"])
    # GATHER with constant indices
    one("gather_axis1", (6, 5), lambda t: tf.gather(t, [4, 0, 2, 2, 5], axis=1), ["GATHER"])
    one("gather_axis3_2d", (3, 2, 7),
        lambda t: tf.gather(t, np.array([[6, 1], [0, 0], [3, 5]], np.int32), axis=3),
        ["GATHER"])
    one("gather_axis_neg", (4, 3, 5), lambda t: tf.gather(t, [1, 0], axis=-2), ["GATHER"])
    # GATHER with run-time indices (an int32 model input), batch_dims 1: not a sweep model.
    seed += 1
    seed_everything(seed)
    # Named so that the converter's (alphabetical) input order is the model's.
    x = tf.keras.Input(shape=(6, 5), name="data")
    i = tf.keras.Input(shape=(3,), dtype="int32", name="indices")
    y = _Fn(lambda t, k: tf.gather(t, k, axis=1, batch_dims=1), "gather")(x, i)
    _save("gather_runtime_indices", _convert(tf.keras.Model([x, i], y), seed, index_input=1),
          ["GATHER"], where="indices")
    # SQUEEZE: the converter turns tf.squeeze into RESHAPE, but other exporters and older
    # converters emit SQUEEZE; hand-built, shaped as a converter shapes them (open batch).
    _save("squeeze_axis2", _squeeze((5, 1, 6), [2], "int8", 0.0137, -19), ["SQUEEZE"])
    _save("squeeze_two_dims_s16", _squeeze((1, 4, 1, 3), [1, -2], "int16", 6.1e-05, 0),
          ["SQUEEZE"])


def _squeeze(shape, dims: list[int], dtype: str, scale: float, zero_point: int) -> bytes:
    """x (batch open, then ``shape``) -> SQUEEZE(squeeze_dims=``dims``, axes of the full shape
    as tf.squeeze counts them)."""
    from tflite_builder import ModelBuilder

    full = (1,) + tuple(shape)
    gone = {d % len(full) for d in dims}
    out = tuple(d for k, d in enumerate(full) if k not in gone)
    b = ModelBuilder("microbuild test model: SQUEEZE")
    x = b.tensor("x", full, dtype, scale, zero_point, signature=(-1,) + tuple(shape))
    y = b.tensor("y", out, dtype, scale, zero_point, signature=(-1,) + out[1:])
    b.operator("SQUEEZE", [x], [y], "SqueezeOptions", squeezeDims=list(dims))
    return b.build([x], [y])


if __name__ == "__main__":
    models()
    if _PROBLEMS:
        raise SystemExit("\n".join(_PROBLEMS))
