"""QUANTIZE, bit-exact with TFLM, in the two forms int8 models use:

- float32 -> int8 (a float model's input): reference_ops::AffineQuantize, ``mb_quantize_f32_s8``.
- int8 -> int8 (a change of scale or zero point): reference_ops::Requantize, ``mb_requantize_s8``
  with the full int8 range as the clamp.
"""

from __future__ import annotations

from microbuild.compiler.elementwise import c_float, operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.relu import (
    emit_requantize,
    requantize_params,
    requantize_shift_reasons,
)
from microbuild.model.ir import Graph, Operator

INPUT_DTYPES = ("float32", "int8")


@register
class Quantize(OpLowering):
    opcode = "QUANTIZE"
    kernel_sources = ("quantize.c", "requantize.c")
    headers = ("microbuild/kernels/quantize.h", "microbuild/kernels/requantize.h")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0:
            return [f"expects 1 input, has {op.inputs}"]
        src = graph.tensor(op.inputs[0])
        if src.dtype not in INPUT_DTYPES:
            return [f"input '{src.name}' is {src.dtype}; only float32 or int8 inputs are supported"]
        reasons = operand_reasons(op, graph, 1, (src.dtype,), "int8")
        if reasons:
            return reasons
        reasons = same_shape_reasons(op, graph)
        if src.dtype == "int8":
            reasons += requantize_shift_reasons(src.scale, graph.tensor(op.outputs[0]).scale)
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        size = src.num_elements
        if src.dtype == "int8":
            p = requantize_params(src.scale, src.zero_point, dst.scale, dst.zero_point)
            return emit_requantize(op, ctx, p, size)
        return (f"mb_quantize_f32_s8({c_float(dst.scale)}, {dst.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {size});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Both kernels write output[i] after reading input[i]; a float -> int8 output is 4 times
        # smaller, so output[i] only ever overwrites bytes of input[i / 4], already read.
        return not graph.tensor(op.inputs[0]).is_constant
