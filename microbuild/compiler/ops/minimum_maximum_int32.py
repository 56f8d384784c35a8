"""MINIMUM and MAXIMUM of non-quantized int32 tensors (with broadcasting), bit-exact with TFLM's
reference MaximumMinimum, as the audio front end's clip_by_value needs at run time; evaluated at
compile time on constants. Only the int32 path: the int8/int16 ones are another lowering's (when
merging, that lowering should call microbuild/compiler/int32_arith.py for int32 outputs, as ADD,
MUL and DIV do)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import fold_arithmetic
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


class _MinMaxInt32(OpLowering):
    kernel_sources = int32_arith.KERNEL_SOURCES
    headers = (int32_arith.HEADER,)
    dtypes = frozenset({"int32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return int32_arith.int32_reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return int32_arith.emit_int32(op, graph, ctx)

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        from microbuild.compiler.elementwise import input0_not_broadcast

        return input0_not_broadcast(op, graph)


@register
class MinimumInt32(_MinMaxInt32):
    opcode = "MINIMUM"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, np.minimum)


@register
class MaximumInt32(_MinMaxInt32):
    opcode = "MAXIMUM"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, np.maximum)
