"""REVERSE_V2, bit-exact with TFLM's: the input with the order of its elements reversed along
constant axes. TFLM moves values without looking at them (float32, int8, int16, int32, int64, bool),
for inputs of up to 8 dimensions, and requires the reversed axes to be consecutive; microbuild
does the same with one strided copy that walks the source backwards (a negative step from the
last element) along each reversed axis."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.strided_copy import (MAX_DIMS, SingleCopyLowering, Walk,
                                                  constant_values, fits_kernel, row_major_strides,
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
class ReverseV2(SingleCopyLowering):
    opcode = "REVERSE_V2"
    dtypes = frozenset({"int8", "int16", "int32", "int64", "float32", "bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        if not fits_kernel(walk):
            return [f"the reversal needs more than {MAX_DIMS} dimensions after merging"]
        return type_reasons(op, graph, [op.inputs[0]])

    def walk(self, op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
        return _plan(op, graph)
