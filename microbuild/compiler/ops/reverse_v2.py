"""REVERSE_V2, bit-exact with TFLM's: the input with the order of its elements reversed along
constant axes. TFLM moves values without looking at them (float32, int8, int16, int32, int64, bool),
for inputs of up to 8 dimensions, and requires the reversed axes to be consecutive; microbuild
does the same with one strided copy that walks the source backwards (a negative step from the
last element) along each reversed axis."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import (ELEMENT_SIZES, MAX_DIMS, Walk,
                                                  constant_values, emit_copy, empty_output,
                                                  fits_kernel, flat, row_major_strides,
                                                  type_reasons)
from microbuild.model.ir import Graph, Operator


def _plan(op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input and axes and one output, has inputs {op.inputs} and "
                      f"outputs {op.outputs}"]
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    axes = constant_values(graph, op.inputs[1])
    if axes is None:
        return None, ["the axes are not constant integers; microbuild needs them at compile "
                      "time"]
    rank = len(x.shape)
    resolved = sorted({a + rank if a < 0 else a for a in axes})
    if any(not 0 <= a < rank for a in resolved):
        return None, [f"axes {axes} are outside the input's {rank} dimensions"]
    if resolved and resolved[-1] - resolved[0] != len(resolved) - 1:
        return None, [f"axes {axes} are not consecutive; TFLM's REVERSE_V2 reverses "
                      "consecutive axes only"]
    if tuple(x.shape) != tuple(y.shape):
        return None, [f"output shape {list(y.shape)} is not the input's {list(x.shape)}"]
    strides = row_major_strides(x.shape)
    steps = [-s if d in resolved else s for d, s in enumerate(strides)]
    start = sum((int(x.shape[d]) - 1) * strides[d] for d in resolved if x.shape[d] > 0)
    return Walk([int(d) for d in x.shape], steps, strides, start, 0), []


@register
class ReverseV2(OpLowering):
    opcode = "REVERSE_V2"
    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int16", "int32", "int64", "float32", "bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        if not fits_kernel(walk):
            return [f"the reversal needs more than {MAX_DIMS} dimensions after merging"]
        return type_reasons(op, graph, [op.inputs[0]])

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return (super().can_fold(op, graph) and len(op.outputs) == 1
                and graph.tensor(op.inputs[0]).dtype in ELEMENT_SIZES
                and graph.tensor(op.inputs[0]).dtype == graph.tensor(op.outputs[0]).dtype)

    def fold(self, op: Operator, graph: Graph):
        walk, _ = _plan(op, graph)
        if walk is None:
            return None  # check() says why
        out = empty_output(graph, op.outputs[0])
        walk.apply(flat(graph, op.inputs[0]), out)
        return [out.reshape(graph.tensor(op.outputs[0]).shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walk, _ = _plan(op, graph)
        return emit_copy(ctx, walk, graph.tensor(op.inputs[0]), ctx.ptr(op.inputs[0]),
                         ctx.ptr(op.outputs[0]))
