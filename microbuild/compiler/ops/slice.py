"""SLICE, bit-exact with TFLM's (int8, int16, int32, float32 and bool at run time, up to 5
dimensions; any type on constants). begin and size must be constant integers (TFLM reads them at
run time, microbuild needs the output's place in the input at compile time); they are validated as
TFLM does (0 <= begin <= dim, size -1 meaning "to the end", the slice inside the input) and the
slice becomes one strided copy."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.strided_copy import (SingleCopyLowering, Walk, constant_values,
                                                  row_major_strides, type_reasons)
from microbuild.model.ir import Graph, Operator

TFLM_MAX_DIMS = 5


def _plan(op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
    if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input, begin and size and one output, has inputs "
                      f"{op.inputs} and outputs {op.outputs}"]
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    begin, size = (constant_values(graph, t) for t in op.inputs[1:])
    missing = [name for name, v in (("begin", begin), ("size", size)) if v is None]
    if missing:
        return None, [f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                      "constant integers; microbuild needs the slice known at compile time"]
    rank = len(x.shape)
    if not len(begin) == len(size) == rank:
        return None, [f"begin and size have {len(begin)} and {len(size)} values for an input "
                      f"of rank {rank}"]
    counts = []
    for axis, (b, s, dim) in enumerate(zip(begin, size, x.shape)):
        resolved = dim - b if s == -1 else s
        if not 0 <= b <= dim or not 0 <= resolved <= dim - b:
            return None, [f"axis {axis}: begin {b} and size {s} are outside the input's {dim} "
                          "elements (TFLM returns an error for this slice)"]
        counts.append(resolved)
    if tuple(counts) != tuple(y.shape):
        return None, [f"output shape {list(y.shape)} is not the slice's {counts} (input "
                      f"{list(x.shape)}, begin {begin}, size {size})"]
    offset = sum(b * s for b, s in zip(begin, row_major_strides(x.shape)))
    return Walk(counts, row_major_strides(x.shape), row_major_strides(counts), offset, 0), []


@register
class Slice(SingleCopyLowering):
    opcode = "SLICE"
    dtypes = frozenset({"int8", "int16", "int32", "float32", "bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        rank = len(graph.tensor(op.inputs[0]).shape)
        if rank > TFLM_MAX_DIMS:
            return [f"input has rank {rank}; TFLM's SLICE takes at most {TFLM_MAX_DIMS} "
                    "dimensions"]
        return type_reasons(op, graph, [op.inputs[0]])

    def walk(self, op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
        return _plan(op, graph)
