"""TANH (int8, int16, float32), bit-exact with TFLM: reference_integer_ops::Tanh evaluated for all
256 int8 inputs at compile time (microbuild/compiler/ops/q4_activation.py).

The input rescaling to Q4.27 and the saturation radius are LOGISTIC's (TFLM's TanhPrepare computes
them the same way); the kernel runs gemmlowp's fixed-point tanh and rounds the Q0.31 result to
1/128 steps with output zero point 0. TFLM does not look at the output quantization.
"""

from __future__ import annotations

from microbuild.compiler import fixedpoint
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.q4_activation import Q4ActivationLowering


@register
class Tanh(Q4ActivationLowering):
    opcode = "TANH"
    fixed_point_function = staticmethod(fixedpoint.tanh)
    output_fraction_bits = 7
    output_zero_point = 0
