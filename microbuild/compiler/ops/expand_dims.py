"""EXPAND_DIMS: a size-1 dimension inserted at a constant axis. The bytes do not change, so it is
a RESHAPE: the output shares the input's buffer and nothing runs. At run time it takes int8,
int16 and float32, as TFLM's kernel does; on a constant of any type it is evaluated at compile
time."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.reshape import Reshape
from microbuild.compiler.ops.strided_copy import axis_value
from microbuild.model.ir import Graph, Operator


@register
class ExpandDims(Reshape):
    opcode = "EXPAND_DIMS"
    dtypes = frozenset({"int8", "int16", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects an input and an axis, has inputs {op.inputs}"]
        reasons = super().check(op, graph)
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        axis = axis_value(graph, op.inputs[1])
        if axis is None:
            return reasons + ["the axis is not a constant integer; the output shape must be "
                              "known at compile time"]
        rank = len(x.shape)
        if not -rank - 1 <= axis <= rank:
            return reasons + [f"axis {axis} is outside [{-rank - 1}, {rank}] for an input of "
                              f"rank {rank}"]
        axis = axis + rank + 1 if axis < 0 else axis
        expected = list(x.shape[:axis]) + [1] + list(x.shape[axis:])
        if list(y.shape) != expected:
            reasons.append(f"output shape {list(y.shape)} is not the input {list(x.shape)} "
                           f"with a dimension inserted at {axis}")
        return reasons

    def used_inputs(self, op: Operator, graph: Graph) -> list[int]:
        return list(op.inputs)
