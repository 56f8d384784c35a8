"""SPLIT_V, bit-exact with TFLM's (int8, int16, int32 and float32 at run time; any type on
constants): the input cut along a constant axis into parts of the sizes ``size_splits`` gives (one
of them may be -1, "the rest"); TFLM takes the sizes from the output shapes, and microbuild checks
both agree. One strided copy per output."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.split import SplitLike
from microbuild.compiler.ops.strided_copy import axis_value, constant_values
from microbuild.model.ir import Graph, Operator


@register
class SplitV(SplitLike):
    opcode = "SPLIT_V"

    def operands(self, op: Operator, graph: Graph):
        if len(op.inputs) != 3 or min(op.inputs) < 0 or not op.outputs:
            return [f"expects an input, size_splits and an axis, has inputs {op.inputs}"]
        sizes = constant_values(graph, op.inputs[1])
        if sizes is None:
            return ["size_splits is not constant; TFLM sizes the outputs from their shapes, "
                    "microbuild needs the sizes known at compile time"]
        if len(sizes) != len(op.outputs):
            return [f"size_splits has {len(sizes)} values for {len(op.outputs)} outputs"]
        x = graph.tensor(op.inputs[0])
        axis = axis_value(graph, op.inputs[2])
        if sizes.count(-1) == 1 and axis is not None and -len(x.shape) <= axis < len(x.shape):
            rest = x.shape[axis % len(x.shape)] - sum(s for s in sizes if s != -1)
            sizes = [rest if s == -1 else s for s in sizes]
        if any(s < 0 for s in sizes):
            return [f"size_splits {constant_values(graph, op.inputs[1])} has negative sizes"]
        return op.inputs[0], op.inputs[2], sizes
