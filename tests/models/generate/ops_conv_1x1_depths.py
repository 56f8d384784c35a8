"""1x1 CONV_2D layers on exactly 32 and 48 input channels, in one model: the Helium variant reads
such pixels in place through its unrolled 2- and 3-chunk blocks (conv2d_mve.c,
fixed_chunks_block via run_direct_chunks), the shape of MobileNet VWW's 32-channel 1x1 layers.
The Keras sweep's 1x1 layers have depths of at most 24, or ones with a predicated tail.

    .venv/bin/python tests/models/generate/ops_conv_1x1_depths.py   (numpy and the tflite-micro wheel)

32 -> 48 channels at stride 1 on 5x5 (25 pixels: 6 blocks of 4 and one pixel alone), then
48 -> 6 at stride 2 (9 pixels; 6 channels: a tail-predicated block of 2). Built with
tflite_builder under the converter's quantization conventions (per-channel symmetric int8
filters, bias scale = input scale x filter scale); each output's scale and zero point come from
its accumulators on random inputs, as calibration would give.
"""

from __future__ import annotations

import numpy as np
from common import save
from ops_pruned import _output_quantization
from tflite_builder import ModelBuilder


def _conv_1x1(b: ModelBuilder, rng, x: int, x_scale: float, x_zp: int, shape, channels: int,
              stride: int, activation: int) -> tuple[int, float, int, tuple[int, int, int]]:
    """A 1x1 VALID CONV_2D after tensor x; returns its output tensor, scale, zero point and
    shape (h, w, c)."""
    h, w, depth = shape
    filter_scales = rng.uniform(0.002, 0.02, channels)
    filters = rng.integers(-127, 128, (channels, 1, 1, depth), dtype=np.int8)
    bias = rng.integers(-6000, 6000, channels).astype(np.int32)
    xs = rng.integers(-128, 128, (256, depth)).astype(np.int64) - x_zp
    acc = xs @ filters.reshape(channels, depth).astype(np.int64).T + bias
    out_scale, out_zp = _output_quantization(acc, x_scale * filter_scales)
    out_shape = (-(-h // stride), -(-w // stride), channels)
    f = b.constant(f"filter{depth}", filters, scale=filter_scales, axis=0)
    bb = b.constant(f"bias{depth}", bias, scale=x_scale * filter_scales, axis=0)
    y = b.tensor(f"output{depth}", (1, *out_shape), "int8", out_scale, out_zp)
    b.operator("CONV_2D", [x, f, bb], [y], "Conv2DOptions", version=3, padding=1,
               strideW=stride, strideH=stride, fusedActivationFunction=activation,
               dilationWFactor=1, dilationHFactor=1)
    return y, out_scale, out_zp, out_shape


def models() -> None:
    rng = np.random.default_rng(2301)
    b = ModelBuilder()
    shape = (5, 5, 32)
    x = b.tensor("input", (1, *shape), "int8", 0.02, -5)
    # Activation codes in the schema: 0 NONE, 1 RELU, 3 RELU6.
    y1, s1, z1, shape1 = _conv_1x1(b, rng, x, 0.02, -5, shape, 48, 1, 1)
    y2, _, _, _ = _conv_1x1(b, rng, y1, s1, z1, shape1, 6, 2, 0)
    save("ops/conv_1x1_c32_c48_s1_s2_pc.tflite", b.build([x], [y2]))

    # 40 -> 34 channels on 3x5 (15 pixels: 3 blocks of 4 and 3 alone): a depth over 16 and not a
    # multiple of 16 with 32 or more output channels, which the Helium variant copies into
    # columns padded to 48 taps (conv2d_mve.c is_direct) instead of reading it in place with a
    # predicated tail; 34 channels end in a block of 2.
    b = ModelBuilder()
    shape = (3, 5, 40)
    x = b.tensor("input", (1, *shape), "int8", 0.03, 7)
    y, _, _, _ = _conv_1x1(b, rng, x, 0.03, 7, shape, 34, 1, 3)
    save("ops/conv_1x1_c40_c34_padded_pc.tflite", b.build([x], [y]))


if __name__ == "__main__":
    models()
