"""QUANTIZE, bit-exact with TFLM, in every (input, output) dtype pair TFLM's kernel takes
(quantize_common.cc), and only those:

- float32 -> int8 / int16 (a float model's input, or the float part of a mixed graph handing over
  to an integer part): reference_ops::AffineQuantize, ``mb_quantize_f32_*``. TFLM has no float32
  -> uint8 or -> int32.
- between integer types, reference_ops::Requantize with the effective scale in_scale / out_scale
  (``mb_requantize_*``), clamped to the output type's range:
  uint8 -> int8 (a camera frame into an int8 model: the converter's
  ``inference_input_type=tf.uint8``), int8 -> uint8 (``inference_output_type=tf.uint8``),
  int8 -> int8 / int16 / int32, int16 -> int8 / int16 / int32 (16x8 models),
  int32 -> int8 / int16 (an accumulator requantized, TFLM's int16 test ``quantize0``).
  Between 8-bit types (int8 -> int8, uint8 <-> int8) the output is a function of one byte: a
  256-entry table made with the same Requantize arithmetic at compile time (``emit_table``).
"""

from __future__ import annotations

from microbuild.compiler.elementwise import c_float, operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.relu import (
    emit_requantize,
    requantize_params,
    requantize_shift_reasons,
    requantize_table,
)
from microbuild.compiler.ops.unary import LutLowering, emit_table
from microbuild.model.ir import Graph, Operator

# (input, output) dtype -> the kernel; float32 inputs are AffineQuantize, the rest Requantize.
_KERNELS = {
    ("float32", "int8"): "mb_quantize_f32_s8",
    ("float32", "int16"): "mb_quantize_f32_s16",
    ("uint8", "int8"): "mb_requantize_u8_s8",
    ("int8", "uint8"): "mb_requantize_s8_u8",
    ("int8", "int8"): "mb_requantize_s8",
    ("int8", "int16"): "mb_requantize_s8_s16",
    ("int8", "int32"): "mb_requantize_s8_s32",
    ("int16", "int8"): "mb_requantize_s16_s8",
    ("int16", "int16"): "mb_requantize_s16_s16",
    ("int16", "int32"): "mb_requantize_s16_s32",
    ("int32", "int8"): "mb_requantize_s32_s8",
    ("int32", "int16"): "mb_requantize_s32_s16",
}
# Bits of the integer inputs whose (q - zero_point) TFLM shifts left in int32 before the Q31
# multiply; an int32 input wraps there as it does in TFLM (requantize.c), so it has no limit.
# Pairs computed by table lookup (mb_lut_s8) rather than by their requantize kernel.
_TABLE_PAIRS = frozenset({("int8", "int8"), ("uint8", "int8"), ("int8", "uint8")})
_SHIFTED_BITS = {"int8": 8, "uint8": 8, "int16": 16}
# Pairs whose kernel reads each element before writing the one at the same place and whose
# output element is no wider than the input's: the planner may give them one buffer.
_IN_PLACE = frozenset({("float32", "int8"), ("float32", "int16"), ("int8", "int8"),
                       ("uint8", "int8"), ("int8", "uint8")})


@register
class Quantize(OpLowering):
    opcode = "QUANTIZE"
    kernel_sources = ("quantize.c", "requantize.c") + LutLowering.kernel_sources
    headers = ("microbuild/kernels/quantize.h", "microbuild/kernels/requantize.h") + \
        LutLowering.headers
    # float32 anywhere, not only at the graph's inputs: a mixed graph's float part hands over to
    # its integer part through a QUANTIZE, as TFLM allows.
    dtypes = frozenset({"float32", "uint8", "int8", "int16", "int32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects 1 input and 1 output, has {op.inputs} and {op.outputs}"]
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if (src.dtype, dst.dtype) not in _KERNELS:
            pairs = ", ".join(f"{a} -> {b}" for a, b in _KERNELS)
            return [f"converts {src.dtype} to {dst.dtype}, which TFLM's QUANTIZE does not "
                    f"either; it converts {pairs}"]
        reasons = operand_reasons(op, graph, 1, (src.dtype,), dst.dtype)
        if reasons:
            return reasons
        for role, t in (("input", src), ("output", dst)):
            if t.dtype == "float32":
                continue
            if t.quant is None:
                reasons.append(f"{role} '{t.name}' is {t.dtype} but not quantized")
            elif t.quant.per_channel:
                reasons.append(f"{role} '{t.name}' is quantized per channel; TFLM's QUANTIZE "
                               "takes one scale and zero point")
        if reasons:
            return reasons
        reasons = same_shape_reasons(op, graph)
        if src.dtype in _SHIFTED_BITS:
            reasons += requantize_shift_reasons(src.scale, dst.scale, _SHIFTED_BITS[src.dtype])
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        size = src.num_elements
        function = _KERNELS[(src.dtype, dst.dtype)]
        if src.dtype != "float32":
            p = requantize_params(src.scale, src.zero_point, dst.scale, dst.zero_point)
            if (src.dtype, dst.dtype) in _TABLE_PAIRS:
                lo, hi = (0, 255) if dst.dtype == "uint8" else (-128, 127)
                return emit_table(op, graph, ctx, requantize_table(
                    {**p, "activation_min": lo, "activation_max": hi}, src.dtype))
            return emit_requantize(op, ctx, p, size, function)
        return (f"{function}({c_float(dst.scale)}, {dst.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {size});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # The in-place kernels write output[i] after reading input[i]; a float -> int8 output is
        # 4 times smaller, so output[i] only ever overwrites bytes of input[i / 4], already read.
        # A widening conversion would write past what it has read.
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return not src.is_constant and (src.dtype, dst.dtype) in _IN_PLACE
