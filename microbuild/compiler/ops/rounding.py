"""FLOOR, CEIL and ROUND: float32 operators in TFLM (no int8 kernel exists, since an int8 value
is already an integer on its own scale), so microbuild evaluates them on constants only. ROUND
rounds halves to even, as TFLite's RoundToNearest does."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import CompileTimeLowering, register
from microbuild.model.ir import Graph, Operator


class _FloatRounding(CompileTimeLowering):
    function = staticmethod(np.floor)

    def fold(self, op: Operator, graph: Graph):
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return None
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype != "float32" or out.dtype != "float32":
            return None
        return [self.function(src.data).astype(np.float32)]


@register
class Floor(_FloatRounding):
    opcode = "FLOOR"
    function = staticmethod(np.floor)


@register
class Ceil(_FloatRounding):
    opcode = "CEIL"
    function = staticmethod(np.ceil)


@register
class Round(_FloatRounding):
    opcode = "ROUND"
    function = staticmethod(np.round)  # halves to even
