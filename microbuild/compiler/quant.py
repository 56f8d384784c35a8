"""Quantization arithmetic done at compile time, exactly as TFLite/TFLM do it.

``quantize_multiplier`` is TFLite's ``QuantizeMultiplier``: a real multiplier becomes a Q31 integer
and a power-of-two exponent. The device applies it with ``mb_mul_by_quantized_multiplier`` in
``runtime/include/microbuild/quant.h`` (TFLM's double rounding). ``multiply_by_quantized_multiplier``
here is the same arithmetic in Python, for tests and for constants folded at compile time.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def tflite_round(x: float) -> int:
    """std::round: halves away from zero (Python's round() rounds halves to even)."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def quantize_multiplier(real_multiplier: float) -> tuple[int, int]:
    """(quantized_multiplier, shift) with real ~= q / 2**31 * 2**shift; shift > 0 is a left shift."""
    if real_multiplier == 0.0:
        return 0, 0
    q, shift = math.frexp(real_multiplier)
    q_fixed = tflite_round(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        shift = 0
        q_fixed = 0
    return int(q_fixed), int(shift)


def quantize_multiplier_smaller_than_one(real_multiplier: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplierSmallerThanOneExp: same as quantize_multiplier, checked < 1."""
    assert 0.0 <= real_multiplier < 1.0, real_multiplier
    return quantize_multiplier(real_multiplier)


def saturating_rounding_doubling_high_mul(a: int, b: int) -> int:
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else (1 - (1 << 30))
    # C's int64 division truncates toward zero.
    num = ab + nudge
    q = abs(num) // (1 << 31)
    return q if num >= 0 else -q


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def multiply_by_quantized_multiplier(x: int, quantized_multiplier: int, shift: int) -> int:
    """TFLM's MultiplyByQuantizedMultiplier (double rounding), on Python ints."""
    left = shift if shift > 0 else 0
    right = -shift if shift < 0 else 0
    # TFLM computes x * (1 << left) in int32; keep the same wrap-around.
    v = (x * (1 << left)) & 0xFFFFFFFF
    v = v - (1 << 32) if v & 0x80000000 else v
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(v, quantized_multiplier), right)


def activation_range_int8(activation: str, scale: float, zero_point: int,
                          dtype: str = "int8") -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized for int8 (or, with ``dtype``, int16)
    outputs."""
    qmin, qmax = (-32768, 32767) if dtype == "int16" else (-128, 127)

    def quantize(v: float) -> int:
        # TFLM divides in float32 (the tensor's scale is a float); in double the quotient can land
        # on the other side of .5 and the range would be off by one.
        return zero_point + tflite_round(float(np.float32(v) / np.float32(scale)))

    if activation == "NONE":
        return qmin, qmax
    if activation == "RELU":
        return max(qmin, quantize(0.0)), qmax
    if activation == "RELU6":
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))
    raise ValueError(f"unsupported fused activation {activation}")
