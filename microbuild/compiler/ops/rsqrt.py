"""RSQRT (int8, int16), bit-exact with TFLM's elementwise.cc RsqrtEvalQuantized.

For v = q - input zero point TFLM takes 1 / sqrt(v) as a Q31 multiplier and shift
(GetInvSqrtQuantizedMultiplierExp, gemmlowp's Newton-Raphson), applies it to 1 with 20 extra
bits, then rescales by 1 / (sqrt(input_scale) * output_scale) (QuantizeMultiplier in double) and
adds the output zero point. v = 0 gives the largest output. TFLM stops the whole invocation with
an error for v < 0 ("Rsqrt is only defined for positive values"); microbuild's kernels cannot
fail, and give the largest output there too.

int8 is a 256-entry table computed here; int16 (16x8, zero points 0) runs the arithmetic in
``runtime/kernels/rsqrt.c`` with ``mb_inv_sqrt_multiplier`` (runtime/kernels/inv_sqrt.c), which
L2_NORMALIZATION uses too.
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler import fixedpoint
from microbuild.compiler.elementwise import f32, same_shape_reasons
from microbuild.compiler.f32 import is_float32, unary as unary_f32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.unary import LutLowering
from microbuild.compiler.quant import (
    INT32_MAX,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
)
from microbuild.compiler.spatial import activation_reasons
from microbuild.model.ir import Graph, Operator, Tensor

EXTRA_BITS = 20  # TFLM's kShift: 1 / sqrt(v) is applied to 1 << 20, then shifted back


def inv_sqrt_multiplier(value: int) -> tuple[int, int]:
    """TFLite's GetInvSqrtQuantizedMultiplierExp(value, kReverseShift = -1): (Q31 multiplier,
    shift with > 0 a left shift) approximating 1 / sqrt(value), as int32 arithmetic."""
    if value <= 1:
        return INT32_MAX, 0
    right_shift = 11
    while value >= (1 << 29):
        value //= 4
        right_shift += 1
    pairs = (32 - value.bit_length() - 1) // 2 - 1
    right_shift -= pairs
    value <<= 2 * pairs
    half_input = fixedpoint.saturating_rounding_mul_by_pot(value >> 1, -1)  # Q3.28
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28  # 1.0 in Q3.28
    for _ in range(5):
        x3 = fixedpoint.rescale(fixedpoint.mul(fixedpoint.mul(x, x), x), 9, 3)
        x = fixedpoint.rescale(fixedpoint.sub(fixedpoint.mul(half_three, x),
                                              fixedpoint.mul(half_input, x3)), 6, 3)
    x = fixedpoint.mul(x, 1518500250)  # sqrt(2) / 2 in Q0.31
    if right_shift < 0:
        x = fixedpoint.wrap32(x << -right_shift)
        right_shift = 0
    return x, -right_shift


def rsqrt_params(src: Tensor, dst: Tensor) -> tuple[int, int]:
    """TFLM's SetRsqrtOutputMultiplier: 1 / (sqrt(input_scale) * output_scale) in double."""
    return quantize_multiplier(1.0 / (math.sqrt(f32(src.scale)) * f32(dst.scale)))


def rsqrt_values(values: np.ndarray, src: Tensor, dst: Tensor) -> np.ndarray:
    multiplier, shift = rsqrt_params(src, dst)
    info = np.iinfo(dst.dtype)
    out = []
    for q in np.asarray(values).reshape(-1).tolist():
        v = int(q) - src.zero_point
        if v <= 0:  # 0: TFLM's largest output; < 0: TFLM fails, microbuild does the same as 0
            out.append(info.max)
            continue
        inv, inv_shift = inv_sqrt_multiplier(v)
        data = multiply_by_quantized_multiplier(1, inv, inv_shift + EXTRA_BITS)
        result = multiply_by_quantized_multiplier(data, multiplier, shift - EXTRA_BITS)
        out.append(min(max(result + dst.zero_point, info.min), info.max))
    return np.asarray(out, dtype=dst.dtype).reshape(np.shape(values))


@register
class Rsqrt(LutLowering):
    opcode = "RSQRT"
    dtypes = frozenset({"int8", "int16", "float32"})
    kernel_sources = LutLowering.kernel_sources + ("rsqrt.c", "inv_sqrt.c")
    float32_sources = unary_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (unary_f32.HEADER, "microbuild/kernels/rsqrt.h")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return unary_f32.reasons(op, graph)
        if op.inputs and op.inputs[0] >= 0 and graph.tensor(op.inputs[0]).dtype == "int16":
            if len(op.inputs) != 1 or len(op.outputs) != 1:
                return ["expects one input and one output"]
            src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
            reasons = activation_reasons("input", src, dtypes=("int16",))
            reasons += activation_reasons("output", dst, dtypes=("int16",))
            return reasons or same_shape_reasons(op, graph) + self.param_reasons(op, graph)
        return super().check(op, graph)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        _, shift = rsqrt_params(src, dst)
        if not -31 <= shift - EXTRA_BITS <= 30:
            return [f"input scale {src.scale} and output scale {dst.scale} give a rescaling "
                    f"shift of {shift - EXTRA_BITS}, outside the -31..30 TFLM's arithmetic "
                    "defines"]
        return []

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return rsqrt_values(np.arange(-128, 128), src, dst)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return unary_f32.emit(op, graph, ctx)
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype != "int16":
            return super().emit(op, graph, ctx)
        multiplier, shift = rsqrt_params(src, dst)
        params = ctx.symbol("params")
        ctx.static(f"static const mb_rsqrt_s16_params {params} = {{.multiplier = {multiplier}, "
                   f".shift = {shift - EXTRA_BITS}}};")
        return (f"mb_rsqrt_s16(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, "
                f"{src.num_elements});")
