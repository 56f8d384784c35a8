"""The int8 LOGISTIC and TANH share everything but their fixed-point function and output format:
TFLM's prepare (CalculateArithmeticOpDataLogistic, TanhPrepare) rescales the input to Q4.27 with
``input_multiplier``/``input_left_shift`` and saturates inputs beyond ``input_range_radius``; the
kernel runs gemmlowp's fixed-point function and rounds the Q0.31 result to the output's steps.
Here that is evaluated for all 256 inputs at compile time into a lookup table. int16 (16x8)
operands run TFLM's interpolating kernel (microbuild/compiler/ops/sigmoid16.py), float32 ones
microbuild/compiler/f32/activations.py's kernel.

``Q4ActivationLowering`` is the shared lowering; logistic.py and tanh.py fill in its data. It
registers no operator itself.
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler.elementwise import f32, same_shape_reasons
from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.ops import sigmoid16
from microbuild.compiler.ops.base import EmitContext
from microbuild.compiler.ops.unary import LutLowering
from microbuild.compiler.quant import (
    multiply_by_quantized_multiplier,
    rounding_divide_by_pot,
    tflite_round,
)
from microbuild.model.ir import Graph, Operator

INPUT_INTEGER_BITS = 4  # the Q4.27 input format of TFLM's int8 LOGISTIC and TANH


def q4_input_params(input_scale: float) -> tuple[int, int, int]:
    """(input_multiplier, input_left_shift, input_range_radius) as TFLM's int8 LOGISTIC/TANH
    prepare computes them: the multiplier maps (q - zero_point) to Q4.27, and inputs at or beyond
    the radius saturate the output (their Q4.27 value would not fit)."""
    real_multiplier = f32(input_scale) * float(1 << (31 - INPUT_INTEGER_BITS))
    q, left_shift = math.frexp(real_multiplier)
    multiplier = tflite_round(q * (1 << 31))
    # CalculateInputRadius(4, left_shift, 31), in double, floored.
    max_input_rescaled = (1.0 * ((1 << INPUT_INTEGER_BITS) - 1)
                          * (1 << (31 - INPUT_INTEGER_BITS)) / (1 << left_shift))
    return multiplier, left_shift, int(math.floor(max_input_rescaled))


def q4_param_reasons(input_scale: float) -> list[str]:
    """TFLM's arithmetic is only defined for a left shift in [0, 31] (input scales of about
    2^-28 up to 16): outside it the shifts are undefined behaviour in C."""
    multiplier, left_shift, _ = q4_input_params(input_scale)
    if not 0 <= left_shift <= 31 or multiplier >= (1 << 31):
        return [f"input scale {input_scale} gives input_left_shift {left_shift}, outside the "
                f"0..31 TFLM's int8 fixed-point path handles"]
    return []


def q4_input(value: int, zero_point: int, params: tuple[int, int, int]) -> tuple[int, int | None]:
    """(Q4.27 input, None) as TFLM feeds it to the fixed-point function, or (0, saturated int8
    output) for inputs at or beyond the radius, tested in TFLM's order (low end first)."""
    multiplier, left_shift, radius = params
    x = value - zero_point
    if x <= -radius:
        return 0, -128
    if x >= radius:
        return 0, 127
    return multiply_by_quantized_multiplier(x, multiplier, left_shift), None


def q4_table(input_scale: float, input_zero_point: int, fixed_point_function,
             output_fraction_bits: int, output_zero_point: int) -> np.ndarray:
    """int8[256]: TFLM's int8 kernel for every input value k - 128, the Q0.31 result of
    ``fixed_point_function`` rounded to 1 / 2**output_fraction_bits steps around the output zero
    point."""
    params = q4_input_params(input_scale)
    table = np.empty(256, dtype=np.int8)
    for k in range(256):
        value = k - 128
        q4, saturated = q4_input(value, input_zero_point, params)
        if saturated is not None:
            table[k] = saturated
            continue
        output_q0 = fixed_point_function(q4, INPUT_INTEGER_BITS)
        output = rounding_divide_by_pot(output_q0, 31 - output_fraction_bits) + output_zero_point
        table[k] = min(max(output, -128), 127)
    return table


class Q4ActivationLowering(LutLowering):
    """int8: a lookup table computed here; int16 (16x8): TFLM's interpolating kernel
    (microbuild/compiler/ops/sigmoid16.py); float32: the C library's function."""

    # gemmlowp's function of a Q4.27 value giving Q0.31 (microbuild/compiler/fixedpoint.py)
    fixed_point_function = None
    # The int8 output TFLM's kernel writes: 1 / 2**output_fraction_bits steps around this zero
    # point; TFLM assumes (LOGISTIC) or refuses (TANH) any other output quantization.
    output_fraction_bits: int
    output_zero_point: int

    dtypes = frozenset({"int8", "int16", "float32"})
    kernel_sources = LutLowering.kernel_sources + sigmoid16.KERNEL_SOURCES
    float32_sources = activations_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (sigmoid16.HEADER, activations_f32.HEADER)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return activations_f32.reasons(op, graph)
        if op.inputs and op.inputs[0] >= 0 and graph.tensor(op.inputs[0]).dtype == "int16":
            return same_shape_reasons(op, graph) + sigmoid16.s16_reasons(op, graph)
        return super().check(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return activations_f32.emit(op, graph, ctx)
        if graph.tensor(op.inputs[0]).dtype == "int16":
            return sigmoid16.emit_s16(op, graph, ctx)
        return super().emit(op, graph, ctx)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = q4_param_reasons(src.scale)
        steps = 1 << self.output_fraction_bits
        if dst.zero_point != self.output_zero_point or f32(dst.scale) != 1.0 / steps:
            reasons.append(f"output quantization (scale {dst.scale}, zero point {dst.zero_point})"
                           f" must be scale 1/{steps}, zero point {self.output_zero_point} as "
                           f"TFLM's int8 {self.opcode} assumes")
        return reasons

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src = graph.tensor(op.inputs[0])
        return q4_table(src.scale, src.zero_point, type(self).fixed_point_function,
                        self.output_fraction_bits, self.output_zero_point)
