"""STRIDED_SLICE, bit-exact with TFLM's (int8, int16, int32, float32 and bool at run time, up to 4
dimensions; any type and rank on constants, e.g. the int32 shape arithmetic of the Keras
Reshape/Flatten idiom SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE).

begin, end and strides must be constant (TFLM requires it too). Each axis is resolved as TFLM's
reference kernel does it (``StridedSliceStartForAxis`` / ``StridedSliceEndForAxis``): a negative
index counts from the end, the result is clamped to [0, size] (to [-1, size - 1] for a negative
stride), ``begin_mask`` / ``end_mask`` take the whole axis in the stride's direction and
``shrink_axis_mask`` takes the one element at begin and drops the axis. TFLM forces
``ellipsis_mask`` and ``new_axis_mask`` to 0 and never reads ``offset``, so a model that sets them
would not compute what it means in TFLM: those are refused (converters resolve ellipses and new
axes themselves, into the masks above and a RESHAPE). The slice becomes one strided copy, its
start, counts and (possibly negative) steps computed here.
"""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.strided_copy import (SingleCopyLowering, Walk, constant_values,
                                                  row_major_strides, type_reasons)
from microbuild.model.ir import Graph, Operator

TFLM_MAX_DIMS = 4  # TFLM's Prepare: "input dim should not exceed 4"


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else lo if v < lo else v


def _plan(op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
    """The copy this STRIDED_SLICE does, or the reasons it cannot be compiled."""
    if len(op.inputs) != 4 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input, begin, end and strides and one output, has inputs "
                      f"{op.inputs} and outputs {op.outputs}"]
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    values = [constant_values(graph, t) for t in op.inputs[1:]]
    missing = [name for name, v in zip(("begin", "end", "strides"), values) if v is None]
    if missing:
        return None, [f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                      "constant integers; microbuild (like TFLM) needs the slice known at "
                      "compile time"]
    begin, end, strides = values
    rank = len(x.shape)
    if not len(begin) == len(end) == len(strides) == rank:
        return None, [f"begin, end and strides have {len(begin)}, {len(end)} and "
                      f"{len(strides)} values for an input of rank {rank}"]
    opts = op.options
    unsupported = [name for name in ("ellipsis_mask", "new_axis_mask") if opts.get(name)]
    if opts.get("offset"):
        unsupported.append("offset")
    if unsupported:
        return None, [f"sets {' and '.join(unsupported)}, which TFLM's STRIDED_SLICE ignores "
                      "(it would compute another slice than the model means); convert the "
                      "model so that the slice uses begin/end/strides and the begin, end and "
                      "shrink-axis masks only"]
    begin_mask = int(opts.get("begin_mask", 0))
    end_mask = int(opts.get("end_mask", 0))
    shrink_mask = int(opts.get("shrink_axis_mask", 0))
    in_strides = row_major_strides(x.shape)
    counts, steps, kept = [], [], []
    offset = 0
    for axis in range(rank):
        size, stride = int(x.shape[axis]), strides[axis]
        if stride == 0:
            return None, [f"stride of axis {axis} is 0"]
        start = begin[axis] + (size if begin[axis] < 0 else 0)
        start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
        if begin_mask >> axis & 1:
            start = 0 if stride > 0 else size - 1
        if shrink_mask >> axis & 1:
            if not 0 <= start < size:
                return None, [f"axis {axis} is shrunk to index {begin[axis]}, outside its size "
                              f"{size} (TFLM would leave the output unwritten)"]
            count = 1
        else:
            stop = end[axis] + (size if end[axis] < 0 else 0)
            stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
            if end_mask >> axis & 1:
                stop = size if stride > 0 else -1
            count = max(0, -(-(stop - start) // stride))  # ceil((stop - start) / stride)
            kept.append(count)
        if count > 0:
            offset += start * in_strides[axis]
        counts.append(count)
        steps.append(stride * in_strides[axis])
    if tuple(kept) != tuple(y.shape):
        return None, [f"output shape {list(y.shape)} is not the slice's {kept} (input "
                      f"{list(x.shape)}, begin {begin}, end {end}, strides {strides}, masks "
                      f"begin {begin_mask} end {end_mask} shrink {shrink_mask})"]
    if 0 in counts:
        offset = 0
    return Walk(counts, steps, row_major_strides(counts), offset, 0), []


@register
class StridedSlice(SingleCopyLowering):
    opcode = "STRIDED_SLICE"
    dtypes = frozenset({"int8", "int16", "int32", "float32", "bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        x = graph.tensor(op.inputs[0])
        if len(x.shape) > TFLM_MAX_DIMS:
            return [f"input has rank {len(x.shape)}; TFLM's STRIDED_SLICE takes at most "
                    f"{TFLM_MAX_DIMS} dimensions"]
        return type_reasons(op, graph, [op.inputs[0]])

    def walk(self, op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
        return _plan(op, graph)
