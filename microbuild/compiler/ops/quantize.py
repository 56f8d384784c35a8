"""QUANTIZE, bit-exact with TFLM, in the forms quantized models use:

- float32 -> int8 (a float model's input): reference_ops::AffineQuantize, ``mb_quantize_f32_s8``.
- between integer types (a change of scale, zero point or width: int8 -> int8, int16 <-> int8,
  int16 -> int16, int8/int16 -> int32, as the 16x8 and keyword-spotting models use them):
  reference_ops::Requantize, ``mb_requantize_*``, clamped to the output type's range.
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

# (input, output) dtype -> the kernel; float32 -> int8 is AffineQuantize, the rest Requantize.
_KERNELS = {
    ("float32", "int8"): "mb_quantize_f32_s8",
    ("float32", "int16"): "mb_quantize_f32_s16",
    ("int8", "int8"): "mb_requantize_s8",
    ("int16", "int8"): "mb_requantize_s16_s8",
    ("int8", "int16"): "mb_requantize_s8_s16",
    ("int16", "int16"): "mb_requantize_s16_s16",
    ("int8", "int32"): "mb_requantize_s8_s32",
    ("int16", "int32"): "mb_requantize_s16_s32",
}
_BITS = {"int8": 8, "int16": 16}


@register
class Quantize(OpLowering):
    opcode = "QUANTIZE"
    kernel_sources = ("quantize.c", "requantize.c")
    headers = ("microbuild/kernels/quantize.h", "microbuild/kernels/requantize.h")
    dtypes = frozenset({"int8", "int16", "int32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects 1 input and 1 output, has {op.inputs} and {op.outputs}"]
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if (src.dtype, dst.dtype) not in _KERNELS:
            pairs = ", ".join(f"{a} -> {b}" for a, b in _KERNELS)
            return [f"converts {src.dtype} to {dst.dtype}; microbuild's QUANTIZE converts {pairs}"]
        reasons = operand_reasons(op, graph, 1, (src.dtype,), dst.dtype)
        if reasons:
            return reasons
        if any(t.quant is None for t in (src, dst) if t.dtype != "float32"):
            return ["the integer input and output must be quantized"]
        reasons = same_shape_reasons(op, graph)
        if src.dtype in _BITS:
            reasons += requantize_shift_reasons(src.scale, dst.scale, _BITS[src.dtype])
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        size = src.num_elements
        function = _KERNELS[(src.dtype, dst.dtype)]
        if src.dtype != "float32":
            p = requantize_params(src.scale, src.zero_point, dst.scale, dst.zero_point)
            return emit_requantize(op, ctx, p, size, function)
        return (f"{function}({c_float(dst.scale)}, {dst.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {size});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Both in-place kernels write output[i] after reading input[i]; a float -> int8 output is
        # 4 times smaller, so output[i] only ever overwrites bytes of input[i / 4], already read.
        # A widening conversion would write past what it has read.
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return not src.is_constant and (src.dtype, dst.dtype) in (
            ("float32", "int8"), ("float32", "int16"), ("int8", "int8"))
