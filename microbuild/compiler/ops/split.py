"""SPLIT, bit-exact with TFLM's (int8, int16, int32 and float32 at run time; any type on
constants): the input cut into ``num_splits`` equal parts along a constant axis (TFLM requires it
constant too), one strided copy per output."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import (ELEMENT_SIZES, axis_value, emit_copy,
                                                  empty_output, flat, split_walks, type_reasons)
from microbuild.model.ir import Graph, Operator


def split_plan(graph: Graph, op: Operator, data: int, axis_t: int, sizes: list[int] | None):
    """(axis, walks) or (None, reasons) for a split of tensor ``data`` into ``op.outputs``,
    part sizes from the outputs' shapes unless ``sizes`` is given."""
    x = graph.tensor(data)
    axis = axis_value(graph, axis_t)
    if axis is None:
        return None, ["the axis is not a constant integer; TFLM requires it constant too"]
    rank = len(x.shape)
    if not -rank <= axis < rank:
        return None, [f"axis {axis} is outside the input's {rank} dimensions"]
    axis %= rank
    outs = [graph.tensor(t) for t in op.outputs]
    parts = []
    for k, y in enumerate(outs):
        expected = list(x.shape)
        expected[axis] = y.shape[axis] if len(y.shape) == rank else -1
        if tuple(y.shape) != tuple(expected):
            return None, [f"output {k} has shape {list(y.shape)}, not the input's "
                          f"{list(x.shape)} cut along axis {axis}"]
        parts.append(int(y.shape[axis]))
    if sizes is not None and parts != sizes:
        return None, [f"the outputs' sizes along axis {axis} are {parts}, not {sizes}"]
    if sum(parts) != x.shape[axis]:
        return None, [f"the outputs' sizes along axis {axis} add up to {sum(parts)}, the "
                      f"input has {x.shape[axis]}"]
    return split_walks(x.shape, axis, parts), []


class SplitLike(OpLowering):
    """Shared by SPLIT and SPLIT_V: which input is the data, the axis, the part sizes."""

    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int16", "int32", "float32"})

    def operands(self, op: Operator, graph: Graph):
        """(data input, axis input, sizes or None) or a list of reasons."""
        raise NotImplementedError

    def plan(self, op: Operator, graph: Graph):
        operands = self.operands(op, graph)
        if isinstance(operands, list):
            return None, operands
        data, axis_t, sizes = operands
        return split_plan(graph, op, data, axis_t, sizes)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walks, reasons = self.plan(op, graph)
        if reasons:
            return reasons
        return type_reasons(op, graph, [self.operands(op, graph)[0]])

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        operands = self.operands(op, graph)
        if isinstance(operands, list) or not super().can_fold(op, graph):
            return False
        dtype = graph.tensor(operands[0]).dtype
        return dtype in ELEMENT_SIZES and all(graph.tensor(t).dtype == dtype
                                              for t in op.outputs)

    def fold(self, op: Operator, graph: Graph):
        walks, _ = self.plan(op, graph)
        if walks is None:
            return None  # check() says why
        data = flat(graph, self.operands(op, graph)[0])
        results = []
        for t, walk in zip(op.outputs, walks):
            out = empty_output(graph, t)
            walk.apply(data, out)
            results.append(out.reshape(graph.tensor(t).shape))
        return results

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walks, _ = self.plan(op, graph)
        data = self.operands(op, graph)[0]
        return "\n".join(emit_copy(ctx, walk, graph.tensor(data), ctx.ptr(data), ctx.ptr(t),
                                   f"part{k}")
                         for k, (t, walk) in enumerate(zip(op.outputs, walks)))


@register
class Split(SplitLike):
    opcode = "SPLIT"

    def operands(self, op: Operator, graph: Graph):
        if len(op.inputs) != 2 or min(op.inputs) < 0 or not op.outputs:
            return [f"expects an axis and an input, has inputs {op.inputs}"]
        n = op.options.get("num_splits", len(op.outputs))
        if n != len(op.outputs):
            return [f"num_splits is {n} but the operator has {len(op.outputs)} outputs"]
        x = graph.tensor(op.inputs[1])
        axis = axis_value(graph, op.inputs[0])
        if axis is not None and -len(x.shape) <= axis < len(x.shape):
            size = x.shape[axis % len(x.shape)]
            if size % n:
                return [f"axis {axis} has {size} elements, which do not split into {n} equal "
                        "parts"]
            return op.inputs[1], op.inputs[0], [size // n] * n
        return op.inputs[1], op.inputs[0], None
