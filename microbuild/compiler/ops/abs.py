"""ABS (int8, int16), bit-exact with TFLM's elementwise.cc AbsEvalQuantized: |q - input zero
point|, rescaled by input_scale / output_scale (TFLM's QuantizeMultiplier, double rounding) only
when the two float32 scales differ, plus the output zero point, saturated.

int8 is a 256-entry table computed here; int16 (16x8, zero points 0) runs the same arithmetic in
``runtime/kernels/abs.c``. On constants it is evaluated at compile time.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import f32, same_shape_reasons
from microbuild.compiler.f32 import is_float32, unary as unary_f32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.unary import LutLowering
from microbuild.compiler.quant import multiply_by_quantized_multiplier, quantize_multiplier
from microbuild.compiler.spatial import activation_reasons
from microbuild.model.ir import Graph, Operator, Tensor


def abs_params(src: Tensor, dst: Tensor) -> tuple[bool, int, int]:
    """(needs_rescale, multiplier, shift) as TFLM's PrepareAbsRsqrt computes them."""
    if f32(src.scale) == f32(dst.scale):
        return False, 0, 0
    multiplier, shift = quantize_multiplier(f32(src.scale) / f32(dst.scale))
    return True, multiplier, shift


def abs_values(values: np.ndarray, src: Tensor, dst: Tensor) -> np.ndarray:
    rescale, multiplier, shift = abs_params(src, dst)
    info = np.iinfo(dst.dtype)
    out = []
    for q in np.asarray(values).reshape(-1).tolist():
        v = abs(int(q) - src.zero_point)
        if rescale:
            v = multiply_by_quantized_multiplier(v, multiplier, shift)
        out.append(min(max(v + dst.zero_point, info.min), info.max))
    return np.asarray(out, dtype=dst.dtype).reshape(np.shape(values))


@register
class Abs(LutLowering):
    opcode = "ABS"
    dtypes = frozenset({"int8", "int16", "float32"})
    kernel_sources = LutLowering.kernel_sources + ("abs.c",)
    float32_sources = unary_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (unary_f32.HEADER, "microbuild/kernels/abs.h")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return unary_f32.reasons(op, graph)
        if op.inputs and op.inputs[0] >= 0 and graph.tensor(op.inputs[0]).dtype == "int16":
            if len(op.inputs) != 1 or len(op.outputs) != 1:
                return ["expects one input and one output"]
            src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
            reasons = activation_reasons("input", src, dtypes=("int16",))
            reasons += activation_reasons("output", dst, dtypes=("int16",))
            if not reasons and abs_params(src, dst)[2] > 30:
                reasons.append(f"input scale {src.scale} / output scale {dst.scale} is too large "
                               "a ratio to requantize (a left shift of more than 30 bits)")
            return reasons or same_shape_reasons(op, graph)
        return super().check(op, graph)

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return abs_values(np.arange(-128, 128), src, dst)

    def fold(self, op: Operator, graph: Graph):
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return None
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype == dst.dtype == "float32":
            return [np.abs(src.data).astype(np.float32)]
        if src.dtype != dst.dtype or src.dtype not in ("int8", "int16") or src.quant is None \
                or dst.quant is None:
            return None
        return [abs_values(src.data, src, dst).reshape(dst.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return unary_f32.emit(op, graph, ctx)
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype != "int16":
            return super().emit(op, graph, ctx)
        rescale, multiplier, shift = abs_params(src, dst)
        params = ctx.symbol("params")
        ctx.static(f"static const mb_abs_s16_params {params} = {{.rescale = {int(rescale)}, "
                   f".multiplier = {multiplier}, .shift = {shift}}};")
        return (f"mb_abs_s16(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, "
                f"{src.num_elements});")
