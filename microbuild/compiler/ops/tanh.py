"""TANH (int8), bit-exact with TFLM: reference_integer_ops::Tanh evaluated for all 256 inputs at
compile time.

The input rescaling to Q4.27 and the saturation radius are LOGISTIC's (TFLM's TanhPrepare computes
them the same way); the kernel runs gemmlowp's fixed-point tanh and rounds the Q0.31 result to
1/128 steps with output zero point 0.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler import fixedpoint
from microbuild.compiler.elementwise import f32
from microbuild.compiler.elementwise import same_shape_reasons
from microbuild.compiler.ops import sigmoid16
from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.logistic import (
    INPUT_INTEGER_BITS,
    q4_input,
    q4_input_params,
    q4_param_reasons,
)
from microbuild.compiler.ops.unary import LutLowering
from microbuild.compiler.quant import rounding_divide_by_pot
from microbuild.model.ir import Graph, Operator


def tanh_table(input_scale: float, input_zero_point: int) -> np.ndarray:
    params = q4_input_params(input_scale)
    table = np.empty(256, dtype=np.int8)
    for k in range(256):
        value = k - 128
        q4, saturated = q4_input(value, input_zero_point, params)
        if saturated is not None:
            table[k] = saturated
            continue
        output_q0 = fixedpoint.tanh(q4, INPUT_INTEGER_BITS)
        output = rounding_divide_by_pot(output_q0, 31 - 7)  # Q0.31 to 1/128 steps
        table[k] = min(max(output, -128), 127)
    return table


@register
class Tanh(LutLowering):
    """int8: a lookup table computed here; int16 (16x8): TFLM's interpolating kernel
    (microbuild/compiler/ops/sigmoid16.py)."""

    opcode = "TANH"
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
        # TFLM does not look at the output quantization: its results are in 1/128 steps around 0.
        if dst.zero_point != 0 or f32(dst.scale) != 1.0 / 128:
            reasons.append(f"output quantization (scale {dst.scale}, zero point {dst.zero_point})"
                           " must be scale 1/128, zero point 0 as TFLM's int8 TANH assumes")
        return reasons

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src = graph.tensor(op.inputs[0])
        return tanh_table(src.scale, src.zero_point)
