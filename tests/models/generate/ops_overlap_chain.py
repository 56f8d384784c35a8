"""A MobileNet-like chain with trained-like quantization, for outputs written over their inputs.

Every layer's output may overlap the input it is the last reader of (the memory planner places it
a computed distance below; microbuild/compiler/overlap.py): a 3x3 convolution, a 3x3 depthwise
convolution (stride 1, then stride 2 on 24 channels: a pixel of 24 bytes, which the DSP depthwise
kernel's whole-pixel rule must respect), pointwise convolutions that widen and narrow the depth,
and average and max pooling. The quantization is what trained models carry and look-alike
models lack: per-channel filter scales, asymmetric activation zero points, large biases and
pruned channels (all-zero filter, bias exactly +-2^30).

    .venv/bin/python tests/models/generate/ops_overlap_chain.py   (numpy and the tflite-micro wheel)
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder

PRUNED_BIAS = 1 << 30


def _calibrate(real: np.ndarray) -> tuple[float, int]:
    """Scale and zero point covering the 1st..99th percentile of ``real`` (asymmetric)."""
    low, high = min(float(np.percentile(real, 1)), 0.0), max(float(np.percentile(real, 99)), 0.0)
    scale = (high - low) / 255.0
    return scale, int(np.clip(round(-128 - low / scale), -128, 127))


class _Chain:
    def __init__(self, seed: int, shape: tuple[int, int, int], scale: float, zero_point: int):
        self.rng = np.random.default_rng(seed)
        self.b = ModelBuilder()
        self.x = self.b.tensor("input", (1, *shape), "int8", scale, zero_point)
        self.input = self.x
        self.shape, self.scale, self.zp = shape, scale, zero_point
        # A float stand-in for the activations, to calibrate each layer's output like a converter.
        self.real = (self.rng.integers(-128, 128, (64, *shape)) - zero_point) * scale
        self.n = 0

    def _window(self, real: np.ndarray, kh: int, kw: int, stride: int) -> np.ndarray:
        """(batch, out_h, out_w, kh, kw, channels) windows, SAME padding with zeros."""
        _, h, w, _ = real.shape
        oh, ow = -(-h // stride), -(-w // stride)
        ph, pw = max((oh - 1) * stride + kh - h, 0), max((ow - 1) * stride + kw - w, 0)
        padded = np.pad(real, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
        win = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(1, 2))
        return win[:, ::stride, ::stride][:, :oh, :ow].transpose(0, 1, 2, 4, 5, 3)

    def _output(self, real_out: np.ndarray, channels: int, activation: int):
        if activation == 3:
            real_out = np.clip(real_out, 0.0, 6.0)
        scale, zp = _calibrate(real_out)
        self.n += 1
        y = self.b.tensor(f"t{self.n}", (1, *real_out.shape[1:3], channels), "int8", scale, zp)
        self.real, self.scale, self.zp, self.x = real_out, scale, zp, y
        self.shape = real_out.shape[1:]
        return y

    def _weights(self, shape, channels: int, pruned: dict[int, int], axis: int):
        scales = self.rng.uniform(0.004, 0.03, channels)
        q = self.rng.integers(-127, 128, shape, dtype=np.int8)
        bias = self.rng.integers(-40000, 40000, channels).astype(np.int32)  # large, trained-like
        for c, value in pruned.items():
            q[(slice(None),) * axis + (c,)] = 0
            bias[c] = value
        return q, scales, bias

    def conv(self, k: int, channels: int, stride: int = 1, activation: int = 0,
             pruned: dict[int, int] | None = None) -> None:
        depth = self.shape[-1]
        q, scales, bias = self._weights((channels, k, k, depth), channels, pruned or {}, 0)
        win = self._window(self.real, k, k, stride)
        w = q.astype(np.float64) * scales[:, None, None, None]
        real_out = np.einsum("bhwijc,oijc->bhwo", win, w) + bias * self.scale * scales
        x, s = self.x, self.scale
        f = self.b.constant(f"filter{self.n}", q, scale=scales, axis=0)
        bb = self.b.constant(f"bias{self.n}", bias, scale=s * scales, axis=0)
        y = self._output(real_out, channels, activation)
        self.b.operator("CONV_2D", [x, f, bb], [y], "Conv2DOptions", version=3, padding=0,
                        strideW=stride, strideH=stride, fusedActivationFunction=activation,
                        dilationWFactor=1, dilationHFactor=1)

    def depthwise(self, stride: int = 1, activation: int = 0,
                  pruned: dict[int, int] | None = None) -> None:
        channels = self.shape[-1]
        q, scales, bias = self._weights((1, 3, 3, channels), channels, pruned or {}, 3)
        win = self._window(self.real, 3, 3, stride)
        w = q[0].astype(np.float64) * scales
        real_out = np.einsum("bhwijc,ijc->bhwc", win, w) + bias * self.scale * scales
        x, s = self.x, self.scale
        f = self.b.constant(f"filter{self.n}", q, scale=scales, axis=3)
        bb = self.b.constant(f"bias{self.n}", bias, scale=s * scales, axis=0)
        y = self._output(real_out, channels, activation)
        self.b.operator("DEPTHWISE_CONV_2D", [x, f, bb], [y], "DepthwiseConv2DOptions",
                        version=3, padding=0, strideW=stride, strideH=stride, depthMultiplier=1,
                        fusedActivationFunction=activation, dilationWFactor=1, dilationHFactor=1)

    def pool(self, opcode: str, k: int, stride: int) -> None:
        # Pooling keeps the input's quantization (TFLM requires it).
        x, scale, zp = self.x, self.scale, self.zp
        win = self._window(self.real, k, k, stride)
        real_out = win.mean(axis=(3, 4)) if opcode == "AVERAGE_POOL_2D" else win.max(axis=(3, 4))
        self.n += 1
        y = self.b.tensor(f"t{self.n}", (1, *real_out.shape[1:]), "int8", scale, zp)
        self.real, self.x, self.shape = real_out, y, real_out.shape[1:]
        self.b.operator(opcode, [x], [y], "Pool2DOptions", padding=0, strideW=stride,
                        strideH=stride, filterWidth=k, filterHeight=k, fusedActivationFunction=0)

    def build(self) -> bytes:
        return self.b.build([self.input], [self.x])


def chain_model() -> bytes:
    c = _Chain(3301, (12, 12, 8), 0.02, -9)
    c.conv(3, 16, activation=3, pruned={5: PRUNED_BIAS})           # 12x12x8 -> 12x12x16
    c.depthwise(activation=3, pruned={2: -PRUNED_BIAS})            # in place, one row below
    c.conv(1, 24, activation=3, pruned={7: PRUNED_BIAS, 11: -PRUNED_BIAS})  # widen
    c.depthwise(stride=2, activation=3)                            # 24-byte pixels, stride 2
    c.pool("AVERAGE_POOL_2D", 3, 1)                                # 6x6x24 -> 6x6x24
    c.conv(1, 12)                                                  # narrow
    c.pool("MAX_POOL_2D", 2, 2)                                    # 6x6x12 -> 3x3x12
    return c.build()


if __name__ == "__main__":
    save("ops/chain_overlap_trained_pc.tflite", chain_model())
