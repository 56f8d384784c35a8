"""LOGISTIC (int8, int16, float32), bit-exact with TFLM: reference_integer_ops::Logistic evaluated
for all 256 int8 inputs at compile time (microbuild/compiler/ops/q4_activation.py).

The kernel runs gemmlowp's fixed-point logistic on the Q4.27 input and rounds the Q0.31 result
to 1/256 steps with the output zero point -128; TFLM refuses any other output zero point.
"""

from __future__ import annotations

from microbuild.compiler import fixedpoint
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.q4_activation import Q4ActivationLowering, q4_input_params

__all__ = ["Logistic", "q4_input_params"]


@register
class Logistic(Q4ActivationLowering):
    opcode = "LOGISTIC"
    fixed_point_function = staticmethod(fixedpoint.logistic)
    output_fraction_bits = 8
    output_zero_point = -128
