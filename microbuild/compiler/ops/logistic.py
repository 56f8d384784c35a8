"""LOGISTIC (int8), bit-exact with TFLM: reference_integer_ops::Logistic evaluated for all 256
inputs at compile time.

TFLM's prepare (CalculateArithmeticOpDataLogistic) rescales the input to Q4.27 with
``input_multiplier``/``input_left_shift`` and saturates inputs beyond ``input_range_radius``; the
kernel runs gemmlowp's fixed-point logistic and rounds the Q0.31 result to 1/256 steps with the
output zero point -128.
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler import fixedpoint
from microbuild.compiler.elementwise import f32
from microbuild.compiler.elementwise import same_shape_reasons
from microbuild.compiler.ops import sigmoid16
from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, register
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


def logistic_table(input_scale: float, input_zero_point: int) -> np.ndarray:
    params = q4_input_params(input_scale)
    table = np.empty(256, dtype=np.int8)
    for k in range(256):
        value = k - 128
        q4, saturated = q4_input(value, input_zero_point, params)
        if saturated is not None:
            table[k] = saturated
            continue
        output_q0 = fixedpoint.logistic(q4, INPUT_INTEGER_BITS)
        # Q0.31 to 1/256 steps (8 integer bits dropped), then the output zero point -128.
        output = rounding_divide_by_pot(output_q0, 31 - 8) - 128
        table[k] = min(max(output, -128), 127)
    return table


@register
class Logistic(LutLowering):
    """int8: a lookup table computed here; int16 (16x8): TFLM's interpolating kernel
    (microbuild/compiler/ops/sigmoid16.py)."""

    opcode = "LOGISTIC"
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
        # TFLM refuses any other output zero point; the kernel's outputs are in 1/256 steps.
        if dst.zero_point != -128 or f32(dst.scale) != 1.0 / 256:
            reasons.append(f"output quantization (scale {dst.scale}, zero point {dst.zero_point})"
                           " must be scale 1/256, zero point -128 as TFLM's int8 LOGISTIC assumes")
        return reasons

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src = graph.tensor(op.inputs[0])
        return logistic_table(src.scale, src.zero_point)
