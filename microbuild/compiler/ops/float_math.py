"""EXP, LOG, NEG, SQRT, SQUARE, SIN and COS: float32-only operators in TFLM (exp.cc and
elementwise.cc accept float32 alone, neg.cc too), although the converter emits int8 EXP and LOG
(TFLite's own interpreter has table kernels for them) and an int8 model may keep a float NEG
between DEQUANTIZE and QUANTIZE. No TFLM kernel means no reference result to match, so microbuild
refuses them on quantized run-time values, saying so. On float32 run-time values they run
microbuild/compiler/f32/unary.py's kernel (the C library's expf/logf/sqrtf/sinf/cosf, as TFLM's);
on float32 constants they are evaluated here: NEG and SQUARE exactly, EXP, LOG, SQRT, SIN and COS
in double rounded to float32, the correctly rounded result (a libm whose expf/logf/sinf/cosf is
not correctly rounded, which TFLM's float kernel calls, can differ from it by one float32
step)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import unary as unary_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


class FloatOnlyLowering(OpLowering):
    function = staticmethod(np.negative)
    kernel_sources = unary_f32.KERNEL_SOURCES
    headers = (unary_f32.HEADER,)
    dtypes = frozenset({"float32"})

    def dtype_note(self, dtype: str) -> str | None:
        return (f"TFLM's {self.opcode} kernel computes in float32 only; it has no kernel for "
                f"{dtype} either, so no microcontroller runtime runs this operator as it is")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return unary_f32.reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return unary_f32.emit(op, graph, ctx)

    def fold(self, op: Operator, graph: Graph):
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return None
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype != "float32" or out.dtype != "float32":
            return None
        with np.errstate(all="ignore"):
            return [self.function(src.data.astype(np.float64)).astype(np.float32)]


@register
class Exp(FloatOnlyLowering):
    opcode = "EXP"
    function = staticmethod(np.exp)


@register
class Log(FloatOnlyLowering):
    opcode = "LOG"
    function = staticmethod(np.log)


@register
class Neg(FloatOnlyLowering):
    opcode = "NEG"
    function = staticmethod(np.negative)


@register
class Sqrt(FloatOnlyLowering):
    opcode = "SQRT"
    function = staticmethod(np.sqrt)


@register
class Square(FloatOnlyLowering):
    opcode = "SQUARE"
    function = staticmethod(np.square)


@register
class Sin(FloatOnlyLowering):
    opcode = "SIN"
    function = staticmethod(np.sin)


@register
class Cos(FloatOnlyLowering):
    opcode = "COS"
    function = staticmethod(np.cos)
