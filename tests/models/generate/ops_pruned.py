"""Convolutions with pruned channels, as trained and pruned models carry them (MLPerf Tiny's
MobileNet VWW and ResNet-8-large): a channel whose filter is all zeros and whose bias is exactly
+-2^30, beside ordinary channels with trained-like per-channel scales and biases. Such a channel
outputs its requantized bias; the compiler shrinks that bias to the smallest equivalent value so
the fast kernels take the layer (microbuild/compiler/pruned_channels.py).

    .venv/bin/python tests/models/generate/ops_pruned.py   (numpy and the tflite-micro wheel)

The converter does not make such channels from a Keras model on demand, so the models are built
with tflite_builder, with the converter's quantization conventions (per-channel symmetric int8
filters, bias scale = input scale x filter scale, zero bias zero points).
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder

PRUNED_BIAS = 1 << 30


def _output_quantization(acc: np.ndarray, real_scale: np.ndarray) -> tuple[float, int]:
    """A scale and zero point covering the layer's real outputs on random inputs, as a
    converter's calibration would give."""
    real = acc * real_scale
    low, high = min(float(np.percentile(real, 1)), 0.0), max(float(np.percentile(real, 99)), 0.0)
    scale = (high - low) / 255.0
    return scale, int(np.clip(round(-128 - low / scale), -128, 127))


def conv_model(name: str, seed: int, activation: str) -> None:
    rng = np.random.default_rng(seed)
    h = w = 8
    depth, channels, pruned = 16, 12, {3: PRUNED_BIAS, 7: -PRUNED_BIAS}
    in_scale, in_zp = 0.02, -5
    filter_scales = rng.uniform(0.002, 0.02, channels)
    filters = rng.integers(-127, 128, (channels, 3, 3, depth), dtype=np.int8)
    bias = rng.integers(-6000, 6000, channels).astype(np.int32)
    for c, value in pruned.items():
        filters[c] = 0
        bias[c] = value
    # Calibrate the output on the ordinary channels (pruned ones saturate whatever the scale).
    xs = rng.integers(-128, 128, (256, 3 * 3 * depth)).astype(np.int64) - in_zp
    acc = xs @ filters.reshape(channels, -1).astype(np.int64).T + bias
    keep = [c for c in range(channels) if c not in pruned]
    out_scale, out_zp = _output_quantization(acc[:, keep], in_scale * filter_scales[keep])
    b = ModelBuilder()
    x = b.tensor("input", (1, h, w, depth), "int8", in_scale, in_zp)
    f = b.constant("filter", filters, scale=filter_scales, axis=0)
    bb = b.constant("bias", bias, scale=in_scale * filter_scales, axis=0)
    y = b.tensor("output", (1, h, w, channels), "int8", out_scale, out_zp)
    b.operator("CONV_2D", [x, f, bb], [y], "Conv2DOptions", version=3, padding=0, strideW=1,
               strideH=1, fusedActivationFunction=activation, dilationWFactor=1,
               dilationHFactor=1)
    save(f"ops/{name}.tflite", b.build([x], [y]))


def depthwise_model(name: str, seed: int, activation: str) -> None:
    rng = np.random.default_rng(seed)
    h = w = 9
    depth, multiplier = 16, 1  # what the fast depthwise variants take
    channels, pruned = depth * multiplier, {5: PRUNED_BIAS, 10: -PRUNED_BIAS}
    in_scale, in_zp = 0.03, 7
    filter_scales = rng.uniform(0.003, 0.03, channels)
    filters = rng.integers(-127, 128, (1, 3, 3, channels), dtype=np.int8)
    bias = rng.integers(-3000, 3000, channels).astype(np.int32)
    for c, value in pruned.items():
        filters[..., c] = 0
        bias[c] = value
    xs = rng.integers(-128, 128, (256, 9, depth)).astype(np.int64) - in_zp
    taps = np.repeat(xs, multiplier, axis=2)  # output channel c reads input c // multiplier
    acc = (taps * filters.reshape(9, channels).astype(np.int64)).sum(axis=1) + bias
    keep = [c for c in range(channels) if c not in pruned]
    out_scale, out_zp = _output_quantization(acc[:, keep], in_scale * filter_scales[keep])
    b = ModelBuilder()
    x = b.tensor("input", (1, h, w, depth), "int8", in_scale, in_zp)
    f = b.constant("filter", filters, scale=filter_scales, axis=3)
    bb = b.constant("bias", bias, scale=in_scale * filter_scales, axis=0)
    y = b.tensor("output", (1, h, w, channels), "int8", out_scale, out_zp)
    b.operator("DEPTHWISE_CONV_2D", [x, f, bb], [y], "DepthwiseConv2DOptions", version=3,
               padding=0, strideW=1, strideH=1, depthMultiplier=multiplier,
               fusedActivationFunction=activation, dilationWFactor=1, dilationHFactor=1)
    save(f"ops/{name}.tflite", b.build([x], [y]))


def models() -> None:
    # Activation codes in the schema: 0 NONE, 1 RELU, 3 RELU6.
    conv_model("conv_3x3_same_pruned_channels_pc", 2101, 0)
    conv_model("conv_3x3_same_pruned_channels_relu6_pc", 2102, 3)
    depthwise_model("dw_3x3_same_pruned_channels_pc", 2103, 0)
    depthwise_model("dw_3x3_same_pruned_channels_relu_pc", 2104, 1)


if __name__ == "__main__":
    models()
