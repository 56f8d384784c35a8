"""DEQUANTIZE int8 -> float32 (a float model's output), bit-exact with TFLM's
reference_ops::Dequantize: ``mb_dequantize_s8_f32``."""

from __future__ import annotations

from microbuild.compiler.elementwise import c_float, operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


@register
class Dequantize(OpLowering):
    opcode = "DEQUANTIZE"
    kernel_sources = ("dequantize.c",)
    headers = ("microbuild/kernels/dequantize.h",)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, 1, ("int8",), "float32")
        if reasons:
            return reasons
        return same_shape_reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src = graph.tensor(op.inputs[0])
        return (f"mb_dequantize_s8_f32({c_float(src.scale)}, {src.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {src.num_elements});")

    # can_run_in_place stays False: each float output overwrites input bytes not read yet.
