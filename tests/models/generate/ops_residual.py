"""Small residual-block models for the fused CONV_2D+ADD (microbuild/compiler/fusion.py).

Run with a Python that has tensorflow-cpu:
    /tmp/tfvenv/bin/python tests/models/generate/ops_residual.py
Writes tests/models/ops/residual_*.tflite. Every model is seeded, so reruns give byte-identical
files. They cover the conv as the ADD's first and second input, an identity block (the sum
overwrites x in place), a projection block (both ADD inputs are convolutions, as in ResNet-8), a
channel count that is not a multiple of the kernel's 4-channel block, and a conv whose output is
also read elsewhere (must not be fused).
"""

from __future__ import annotations

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import op_names, quantize_int8, randomize_biases, save, seed_everything  # noqa: E402


def _emit(name: str, model, seed: int, expect: list[str]) -> None:
    randomize_biases(model, seed + 1)
    data = quantize_int8(model, seed)
    got = op_names(data)
    if got != expect:
        raise SystemExit(f"{name}: expected operators {expect}, the converter emitted {got}")
    save(f"ops/{name}.tflite", data)


def residual_models() -> None:
    import tensorflow as tf

    L = tf.keras.layers

    # Identity block, conv output as the ADD's second input: x = conv(in); y = conv(x);
    # out = relu(x + conv(y)).
    for name, channels, conv_first, seed in (("residual_identity_c8", 8, False, 1600),
                                             ("residual_identity_c6_convfirst", 6, True, 1610)):
        seed_everything(seed)
        inp = tf.keras.Input(shape=(8, 8, 3), batch_size=1)
        x = L.Conv2D(channels, 3, padding="same", activation="relu")(inp)
        y = L.Conv2D(channels, 3, padding="same", activation="relu")(x)
        z = L.Conv2D(channels, 3, padding="same")(y)
        s = L.Add()([z, x] if conv_first else [x, z])
        model = tf.keras.Model(inp, L.Activation("relu")(s))
        _emit(name, model, seed, ["CONV_2D", "CONV_2D", "CONV_2D", "ADD"])

    # Projection block as in ResNet-8: stride-2 3x3 path and a 1x1 stride-2 shortcut.
    seed = 1620
    seed_everything(seed)
    inp = tf.keras.Input(shape=(8, 8, 4), batch_size=1)
    y = L.Conv2D(8, 3, strides=2, padding="same", activation="relu")(inp)
    z = L.Conv2D(8, 3, padding="same")(y)
    shortcut = L.Conv2D(8, 1, strides=2)(inp)
    model = tf.keras.Model(inp, L.Activation("relu")(L.Add()([shortcut, z])))
    _emit("residual_projection", model, seed, ["CONV_2D", "CONV_2D", "CONV_2D", "ADD"])

    # The conv's output is also read by another conv: no fusion, still exact.
    seed = 1630
    seed_everything(seed)
    inp = tf.keras.Input(shape=(6, 6, 4), batch_size=1)
    x = L.Conv2D(4, 3, padding="same", activation="relu")(inp)
    z = L.Conv2D(4, 3, padding="same")(x)
    s = L.Add()([x, z])
    model = tf.keras.Model(inp, L.Concatenate(axis=3)([s, L.Conv2D(4, 1)(z)]))
    _emit("residual_shared_output", model, seed,
          ["CONV_2D", "CONV_2D", "ADD", "CONV_2D", "CONCATENATION"])


if __name__ == "__main__":
    residual_models()
