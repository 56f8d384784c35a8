"""EXP, LOG, NEG, SQRT, SQUARE, SIN, COS, FLOOR, CEIL and ROUND: float32-only operators in TFLM
(exp.cc and elementwise.cc accept float32 alone, neg.cc too, and no int8 FLOOR/CEIL/ROUND exists
since an int8 value is already an integer on its own scale), although the converter emits int8
EXP and LOG (TFLite's own interpreter has table kernels for them) and an int8 model may keep a
float NEG between DEQUANTIZE and QUANTIZE. No TFLM kernel means no reference result to match, so
microbuild refuses them on quantized run-time values, saying so. On float32 run-time values they
run microbuild/compiler/f32/unary.py's kernel (the C library's expf/logf/sqrtf/sinf/cosf/floorf/
ceilf, as TFLM's, and TFLite's RoundToNearest, which rounds halves to even); on float32 constants
they are evaluated here: NEG, SQUARE, FLOOR, CEIL and ROUND exactly, EXP, LOG, SQRT, SIN and COS
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


# Each float-only operator is the shared lowering above with its own function on constants (in
# double, rounded to float32 by ``fold``; np.round rounds halves to even as TFLite's ROUND does);
# the C kernel is picked by opcode in f32/unary.py.
FLOAT_ONLY_FUNCTIONS = {
    "EXP": np.exp, "LOG": np.log, "NEG": np.negative, "SQRT": np.sqrt, "SQUARE": np.square,
    "SIN": np.sin, "COS": np.cos,
    "FLOOR": np.floor, "CEIL": np.ceil, "ROUND": np.round,
}

for _opcode, _function in FLOAT_ONLY_FUNCTIONS.items():
    register(type(_opcode.capitalize(), (FloatOnlyLowering,),
                  {"opcode": _opcode, "function": staticmethod(_function)}))
