"""DEQUANTIZE int8 or int16 -> float32 (a quantized model's float output), bit-exact with TFLM's
reference_ops::Dequantize: ``mb_dequantize_s8_f32`` / ``mb_dequantize_s16_f32``."""

from __future__ import annotations

from microbuild.compiler.elementwise import c_float, operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


@register
class Dequantize(OpLowering):
    opcode = "DEQUANTIZE"
    kernel_sources = ("dequantize.c",)
    headers = ("microbuild/kernels/dequantize.h",)
    dtypes = frozenset({"int8", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        src = graph.tensor(op.inputs[0]) if op.inputs and op.inputs[0] >= 0 else None
        dtype = src.dtype if src is not None and src.dtype in ("int8", "int16") else "int8"
        reasons = operand_reasons(op, graph, 1, (dtype,), "float32")
        if not reasons and src.quant is None:
            reasons.append(f"input '{src.name}' is not quantized")
        if reasons:
            return reasons
        return same_shape_reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src = graph.tensor(op.inputs[0])
        function = "mb_dequantize_s16_f32" if src.dtype == "int16" else "mb_dequantize_s8_f32"
        return (f"{function}({c_float(src.scale)}, {src.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {src.num_elements});")

    # can_run_in_place stays False: each float output overwrites input bytes not read yet.
