"""Depthwise layers with exactly 8 channels and a 3x3 filter, stride 1 then stride 2, in one
model: the shape of MobileNet VWW's and person_detect's first depthwise layers, which the Helium
variant runs through its 8-channel copy with constant strides (depthwise_conv2d_mve.c,
dw_run_block8_kw3 with fstep 8).
The Keras sweep's depthwise models have 2-6, 16, 17, 20 and 24 channels, none exactly 8.

Also a 1-D temporal depthwise pair (W = 1, 5x1 filters, VALID: 1x28x1x18 -> 1x24x1x18 stride 1,
then -> 1x10x1x18 stride 2), the shape of streaming audio models' time convolutions, which the
dsp variant runs through its own path (depthwise_conv2d_dsp.c, dw_temporal_block); 18 channels:
four blocks of 4 and two left over.

And a 5x3 SAME pair (5 rows high, 3 taps wide) on 20 channels, stride 1 then 2: the Helium
variant's interior runs of a 3-wide filter with 5 filter rows (dw_run_block8_kw3 with nky 5) over
two blocks of 8 channels, each reading its own compile-time constant table, then a block of 4.

    .venv/bin/python tests/models/generate/ops_dw_channels.py   (numpy and the tflite-micro wheel)

Built with tflite_builder under the converter's quantization conventions (per-channel symmetric
int8 filters, bias scale = input scale x filter scale, zero bias zero points); each output's
scale and zero point come from its accumulators on random inputs, as calibration would give.
"""

from __future__ import annotations

import numpy as np
from common import save
from ops_pruned import _output_quantization
from tflite_builder import ModelBuilder

CHANNELS = 8


def _depthwise(b: ModelBuilder, rng, x: int, x_scale: float, x_zp: int, shape, stride: int,
               activation: int, kernel: tuple[int, int] = (3, 3)
               ) -> tuple[int, float, int, tuple[int, int, int]]:
    """A SAME depthwise layer (kernel: filter height, width) after tensor x; returns its output
    tensor, scale, zero point and shape (h, w, c)."""
    h, w, c = shape
    taps = kernel[0] * kernel[1]
    filter_scales = rng.uniform(0.004, 0.03, c)
    filters = rng.integers(-127, 128, (1, *kernel, c), dtype=np.int8)
    bias = rng.integers(-3000, 3000, c).astype(np.int32)
    xs = rng.integers(-128, 128, (256, taps, c)).astype(np.int64) - x_zp
    acc = (xs * filters.reshape(taps, c).astype(np.int64)).sum(axis=1) + bias
    out_scale, out_zp = _output_quantization(acc, x_scale * filter_scales)
    out_shape = (-(-h // stride), -(-w // stride), c)
    f = b.constant(f"filter{stride}", filters, scale=filter_scales, axis=3)
    bb = b.constant(f"bias{stride}", bias, scale=x_scale * filter_scales, axis=0)
    y = b.tensor(f"output{stride}", (1, *out_shape), "int8", out_scale, out_zp)
    b.operator("DEPTHWISE_CONV_2D", [x, f, bb], [y], "DepthwiseConv2DOptions", version=3,
               padding=0, strideW=stride, strideH=stride, depthMultiplier=1,
               fusedActivationFunction=activation, dilationWFactor=1, dilationHFactor=1)
    return y, out_scale, out_zp, out_shape


def _temporal(b: ModelBuilder, rng, x: int, x_scale: float, x_zp: int, h: int, c: int,
              stride: int, activation: int) -> tuple[int, float, int, int]:
    """A 5x1 VALID depthwise layer over time (W = 1) after tensor x; returns its output
    tensor, scale, zero point and height."""
    taps = 5
    filter_scales = rng.uniform(0.004, 0.03, c)
    filters = rng.integers(-127, 128, (1, taps, 1, c), dtype=np.int8)
    bias = rng.integers(-3000, 3000, c).astype(np.int32)
    xs = rng.integers(-128, 128, (256, taps, c)).astype(np.int64) - x_zp
    acc = (xs * filters.reshape(taps, c).astype(np.int64)).sum(axis=1) + bias
    out_scale, out_zp = _output_quantization(acc, x_scale * filter_scales)
    out_h = (h - taps) // stride + 1
    f = b.constant(f"time_filter{stride}", filters, scale=filter_scales, axis=3)
    bb = b.constant(f"time_bias{stride}", bias, scale=x_scale * filter_scales, axis=0)
    y = b.tensor(f"time_output{stride}", (1, out_h, 1, c), "int8", out_scale, out_zp)
    # Padding code 1: VALID.
    b.operator("DEPTHWISE_CONV_2D", [x, f, bb], [y], "DepthwiseConv2DOptions", version=3,
               padding=1, strideW=1, strideH=stride, depthMultiplier=1,
               fusedActivationFunction=activation, dilationWFactor=1, dilationHFactor=1)
    return y, out_scale, out_zp, out_h


def models() -> None:
    rng = np.random.default_rng(2201)
    b = ModelBuilder()
    shape = (11, 13, CHANNELS)  # odd sizes: a run of interior pixels between two border columns
    x = b.tensor("input", (1, *shape), "int8", 0.025, -9)
    # Activation codes in the schema: 0 NONE, 1 RELU, 3 RELU6.
    y1, s1, z1, shape1 = _depthwise(b, rng, x, 0.025, -9, shape, 1, 3)
    y2, _, _, _ = _depthwise(b, rng, y1, s1, z1, shape1, 2, 0)
    save("ops/dw_3x3_same_s1_s2_c8_pc.tflite", b.build([x], [y2]))

    b = ModelBuilder()
    x = b.tensor("input", (1, 28, 1, 18), "int8", 0.03, 5)
    t1, s1, z1, h1 = _temporal(b, rng, x, 0.03, 5, 28, 18, 1, 1)
    t2, _, _, _ = _temporal(b, rng, t1, s1, z1, h1, 18, 2, 0)
    save("ops/dw_5x1_valid_time_s1_s2_c18_pc.tflite", b.build([x], [t2]))

    rng = np.random.default_rng(2202)  # its own generator: the models above stay as they were
    b = ModelBuilder()
    shape = (9, 11, 20)  # rows 2-6 have all 5 filter rows inside, columns 1-9 all 3 taps
    x = b.tensor("input", (1, *shape), "int8", 0.02, 3)
    y1, s1, z1, shape1 = _depthwise(b, rng, x, 0.02, 3, shape, 1, 1, (5, 3))
    y2, _, _, _ = _depthwise(b, rng, y1, s1, z1, shape1, 2, 0, (5, 3))
    save("ops/dw_5x3_same_s1_s2_c20_pc.tflite", b.build([x], [y2]))


if __name__ == "__main__":
    models()
