"""PACK, bit-exact with TFLM's (int8, int16, int32, int64 and float32 at run time; any type on
constants, e.g. the [batch, -1] shape operand of the Keras Reshape/Flatten idiom): ``values_count``
inputs of one shape stacked along a new ``axis``. One strided copy per input."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import (ELEMENT_SIZES, emit_copy, empty_output, flat,
                                                  pack_walks, type_reasons)
from microbuild.model.ir import Graph, Operator


def _plan(op: Operator, graph: Graph):
    if not op.inputs or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects inputs and one output, has inputs {op.inputs} and outputs "
                      f"{op.outputs}"]
    y = graph.tensor(op.outputs[0])
    n = int(op.options.get("values_count", len(op.inputs)))
    if n != len(op.inputs):
        return None, [f"values_count is {n} but the operator has {len(op.inputs)} inputs"]
    rank = len(y.shape)
    axis = int(op.options.get("axis", 0))
    if not -rank <= axis < rank:
        return None, [f"axis {axis} is outside the output's {rank} dimensions"]
    axis %= rank
    expected = tuple(y.shape[:axis]) + tuple(y.shape[axis + 1:])
    if y.shape[axis] != n:
        return None, [f"output shape {list(y.shape)} has {y.shape[axis]} elements along axis "
                      f"{axis}, not the {n} inputs"]
    for k, t in enumerate(op.inputs):
        if tuple(graph.tensor(t).shape) != expected:
            return None, [f"input {k} has shape {list(graph.tensor(t).shape)}, not "
                          f"{list(expected)}"]
    return pack_walks(y.shape, axis, n), []


@register
class Pack(OpLowering):
    opcode = "PACK"
    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int16", "int32", "int64", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walks, reasons = _plan(op, graph)
        return reasons or type_reasons(op, graph, list(op.inputs))

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        if not super().can_fold(op, graph) or len(op.outputs) != 1:
            return False
        dtype = graph.tensor(op.outputs[0]).dtype
        return dtype in ELEMENT_SIZES and all(graph.tensor(t).dtype == dtype
                                              for t in op.inputs)

    def fold(self, op: Operator, graph: Graph):
        walks, _ = _plan(op, graph)
        if walks is None:
            return None  # check() says why
        out = empty_output(graph, op.outputs[0])
        for t, walk in zip(op.inputs, walks):
            walk.apply(flat(graph, t), out)
        return [out.reshape(graph.tensor(op.outputs[0]).shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walks, _ = _plan(op, graph)
        y = graph.tensor(op.outputs[0])
        lines = []
        for k, (t, walk) in enumerate(zip(op.inputs, walks)):
            src = ctx.ptr(t)
            lines.append(emit_copy(ctx, walk, y, src, ctx.ptr(op.outputs[0]), f"value{k}"))
        return "\n".join(lines)


