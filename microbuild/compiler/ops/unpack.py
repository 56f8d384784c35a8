"""UNPACK, bit-exact with TFLM's (int8, int16, int32 and float32 at run time; any type on
constants): the ``num`` slices along ``axis``, each output the input without that axis. One
strided copy per output."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import (ELEMENT_SIZES, emit_copy, empty_output, flat,
                                                  split_walks, type_reasons)
from microbuild.model.ir import Graph, Operator


def _plan(op: Operator, graph: Graph):
    if len(op.inputs) != 1 or op.inputs[0] < 0 or not op.outputs:
        return None, [f"expects one input, has inputs {op.inputs}"]
    x = graph.tensor(op.inputs[0])
    rank = len(x.shape)
    axis = int(op.options.get("axis", 0))
    if not -rank <= axis < rank:
        return None, [f"axis {axis} is outside the input's {rank} dimensions"]
    axis %= rank
    num = int(op.options.get("num", len(op.outputs)))
    if num != len(op.outputs) or x.shape[axis] != num:
        return None, [f"num is {num}, the operator has {len(op.outputs)} outputs and axis "
                      f"{axis} of the input {list(x.shape)} has {x.shape[axis]} elements"]
    expected = tuple(x.shape[:axis]) + tuple(x.shape[axis + 1:])
    for k, t in enumerate(op.outputs):
        if tuple(graph.tensor(t).shape) != expected:
            return None, [f"output {k} has shape {list(graph.tensor(t).shape)}, not "
                          f"{list(expected)}"]
    return split_walks(x.shape, axis, [1] * num), []


@register
class Unpack(OpLowering):
    opcode = "UNPACK"
    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int16", "int32", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walks, reasons = _plan(op, graph)
        return reasons or type_reasons(op, graph, [op.inputs[0]])

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        if not super().can_fold(op, graph) or len(op.inputs) != 1:
            return False
        dtype = graph.tensor(op.inputs[0]).dtype
        return dtype in ELEMENT_SIZES and all(graph.tensor(t).dtype == dtype
                                              for t in op.outputs)

    def fold(self, op: Operator, graph: Graph):
        walks, _ = _plan(op, graph)
        if walks is None:
            return None  # check() says why
        data = flat(graph, op.inputs[0])
        results = []
        for t, walk in zip(op.outputs, walks):
            out = empty_output(graph, t)
            walk.apply(data, out)
            results.append(out.reshape(graph.tensor(t).shape))
        return results

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walks, _ = _plan(op, graph)
        x = graph.tensor(op.inputs[0])
        return "\n".join(emit_copy(ctx, walk, x, ctx.ptr(op.inputs[0]), ctx.ptr(t), f"part{k}")
                         for k, (t, walk) in enumerate(zip(op.outputs, walks)))
