"""ZEROS_LIKE, bit-exact with TFLM's: zeros of the input's shape and type (TFLM takes int8,
int32, int64 and float32, and never reads the input's values). The output does not depend on the
input, so nothing reads it: one strided copy repeats a single zero from the weights (source step
0) over the output, which is zero bytes for every type TFLM has."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import Walk, emit_copy, row_major_strides
from microbuild.model.ir import Graph, Operator

_ZERO_CTYPES = {"int8": "int8_t", "int32": "int32_t", "int64": "int64_t", "float32": "float"}


@register
class ZerosLike(OpLowering):
    opcode = "ZEROS_LIKE"
    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int32", "int64", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects one input and one output, has inputs {op.inputs} and outputs "
                    f"{op.outputs}"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if (x.dtype, tuple(x.shape)) != (y.dtype, tuple(y.shape)):
            return [f"the output ({y.dtype} {list(y.shape)}) is not of the input's type and "
                    f"shape ({x.dtype} {list(x.shape)})"]
        return []

    def fold(self, op: Operator, graph: Graph):
        y = graph.tensor(op.outputs[0])
        return [np.zeros(y.shape, dtype=np.dtype(y.dtype))]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        y = graph.tensor(op.outputs[0])
        zero = ctx.const_array(ctx.symbol("zero"), np.zeros(1, np.dtype(y.dtype)),
                               _ZERO_CTYPES[y.dtype])
        walk = Walk([int(d) for d in y.shape], [0] * len(y.shape), row_major_strides(y.shape))
        return emit_copy(ctx, walk, y, zero, ctx.ptr(op.outputs[0]))
