"""DEQUANTIZE to float32, bit-exact with TFLM's reference_ops::Dequantize, in the forms TFLM's
kernel takes: int8, uint8 and int16 inputs (``mb_dequantize_*_f32``), at a quantized model's float
output or between the integer and the float part of a mixed graph.

A DEQUANTIZE of a constant is evaluated at compile time (``fold``), which is how a float16
model's weights become float32: the converter's float16 quantization (``target_spec.
supported_types = [tf.float16]``) stores them as float16 behind a DEQUANTIZE. TFLM's kernel has
no float16 input at run time, so a float16 tensor computed at run time is refused.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_float, f32, operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator

_KERNELS = {"int8": "mb_dequantize_s8_f32", "uint8": "mb_dequantize_u8_f32",
            "int16": "mb_dequantize_s16_f32"}


@register
class Dequantize(OpLowering):
    opcode = "DEQUANTIZE"
    kernel_sources = ("dequantize.c",)
    headers = ("microbuild/kernels/dequantize.h",)
    # float32 anywhere, not only at the graph's outputs (mixed graphs).
    dtypes = frozenset({"int8", "uint8", "int16", "float32"})
    dtype_notes = {"float16": "TFLM's DEQUANTIZE takes float16 only as a constant (weights), "
                              "which microbuild evaluates at compile time"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        src = graph.tensor(op.inputs[0]) if op.inputs and op.inputs[0] >= 0 else None
        if src is not None and src.dtype not in _KERNELS:
            return [f"converts {src.dtype}, which TFLM's DEQUANTIZE does not either; it converts "
                    f"{', '.join(_KERNELS)} to float32"]
        reasons = operand_reasons(op, graph, 1, (src.dtype if src else "int8",), "float32")
        if not reasons and src.quant is None:
            reasons.append(f"input '{src.name}' is not quantized")
        elif not reasons and src.quant.per_channel:
            reasons.append(f"input '{src.name}' is quantized per channel; TFLM's DEQUANTIZE "
                           "takes one scale and zero point")
        if reasons:
            return reasons
        return same_shape_reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src = graph.tensor(op.inputs[0])
        return (f"{_KERNELS[src.dtype]}({c_float(src.scale)}, {src.zero_point}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {src.num_elements});")

    # can_run_in_place stays False: each float output overwrites input bytes not read yet.

    def fold(self, op: Operator, graph: Graph) -> list[np.ndarray] | None:
        """A constant's float32 values: float16 widened (exact: every float16 is a float32), an
        integer one as the kernel computes it (the float product of the float32 scale and the
        exact q - zero_point, which equals TFLM's double product rounded to float once)."""
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if dst.dtype != "float32" or src.data is None:
            return None
        if src.dtype == "float16":
            return [np.asarray(src.data, dtype=np.float16).astype(np.float32)]
        if src.dtype not in _KERNELS or src.quant is None or src.quant.per_channel:
            return None  # check() says why
        q = np.asarray(src.data).astype(np.int32) - np.int32(src.zero_point)
        return [np.float32(f32(src.scale)) * q.astype(np.float32)]
