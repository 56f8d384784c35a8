"""STRIDED_SLICE with constant begin, end and strides (any element type TFLM moves: int8, int16,
int32, float32; up to 5 dimensions), bit-exact with TFLM's reference StridedSlice, which copies
values (input and output quantized alike). begin_mask, end_mask and shrink_axis_mask follow
TFLite's StartForAxis / StopForAxis (negative indices count from the end, then clamp); the
ellipsis and new-axis masks and the 'offset' option are refused. The slice is computed at compile
time and runs as a strided gather (the TRANSPOSE kernel, runtime/kernels/transpose.c, which walks
any strides); on constants it is evaluated at compile time."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.spatial import c_struct, same_quantization
from microbuild.model.ir import Graph, Operator

MAX_DIMS = 5
_INT_MAX, _INT_MIN = (1 << 31) - 1, -(1 << 31)


def _clamp(v: int, low: int, high: int) -> int:
    return max(low, min(high, v))


def slice_axes(op: Operator, graph: Graph) -> list[tuple[int, int, int]] | str:
    """(start, stride, count) per input axis, or why they cannot be known."""
    if len(op.inputs) != 4 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return f"expects input, begin, end and strides, has inputs {op.inputs}"
    x = graph.tensor(op.inputs[0])
    arrays = []
    for name, t in zip(("begin", "end", "strides"), op.inputs[1:]):
        tensor = graph.tensor(t)
        if not tensor.is_constant:
            return f"{name} is not constant; the output shape must be known at compile time"
        values = [int(v) for v in np.asarray(tensor.data).reshape(-1)]
        if len(values) != len(x.shape):
            return f"{name} has {len(values)} entries for an input of rank {len(x.shape)}"
        arrays.append(values)
    begin, end, strides = arrays
    o = op.options
    for mask in ("ellipsis_mask", "new_axis_mask"):
        if int(o.get(mask, 0)):
            return f"{mask} {o.get(mask)} is not supported yet"
    if o.get("offset"):
        return "the 'offset' option (end relative to begin) is not supported yet"
    axes = []
    for axis, size in enumerate(x.shape):
        stride = strides[axis]
        if stride == 0:
            return f"stride 0 on axis {axis}"
        start = begin[axis]
        if int(o.get("begin_mask", 0)) >> axis & 1:
            start = _INT_MIN if stride > 0 else _INT_MAX
        if start < 0:
            start += size
        start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
        if int(o.get("shrink_axis_mask", 0)) >> axis & 1:
            stop = start + 1
        else:
            stop = end[axis]
            if int(o.get("end_mask", 0)) >> axis & 1:
                stop = _INT_MAX if stride > 0 else _INT_MIN
            if stop < 0:
                stop += size
            stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
        count = max(0, -(-(stop - start) // stride)) if stride > 0 else \
            max(0, -(-(start - stop) // -stride))
        axes.append((start, stride, count))
    return axes


@register
class StridedSlice(OpLowering):
    opcode = "STRIDED_SLICE"
    kernel_sources = ("transpose.c",)
    headers = ("microbuild/kernels/transpose.h",)
    dtypes = frozenset({"int8", "int16", "int32", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        axes = slice_axes(op, graph)
        if isinstance(axes, str):
            return [axes]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = []
        if not 1 <= len(x.shape) <= MAX_DIMS:
            reasons.append(f"input has rank {len(x.shape)}; TFLM slices 1 to {MAX_DIMS} "
                           "dimensions")
        counts = [c for axis, (_, _, c) in enumerate(axes)
                  if not int(op.options.get("shrink_axis_mask", 0)) >> axis & 1]
        if int(np.prod(counts)) != y.num_elements or any(c == 0 for c in counts):
            reasons.append(f"the slice has shape {counts} but the output has shape "
                           f"{list(y.shape)}")
        if x.dtype != y.dtype:
            reasons.append(f"input is {x.dtype} but output is {y.dtype}")
        elif x.quant is not None and not same_quantization(x, y):
            reasons.append("input and output are quantized differently; TFLM copies values "
                           "without rescaling")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        axes = slice_axes(op, graph)
        if isinstance(axes, str):
            return None
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        index = tuple(slice(start, start + stride * count if start + stride * count >= 0
                            else None, stride) for start, stride, count in axes)
        value = np.asarray(x.data).reshape(x.shape)[index]
        if value.size != y.num_elements:
            return None
        return [np.ascontiguousarray(value).reshape(y.shape).astype(y.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        axes = slice_axes(op, graph)
        x = graph.tensor(op.inputs[0])
        item = np.dtype(x.dtype).itemsize
        element_strides = [int(np.prod(x.shape[k + 1:])) for k in range(len(x.shape))]
        offset = sum(start * s for (start, _, _), s in zip(axes, element_strides))
        dims = [count for _, _, count in axes]
        strides = [stride * s for (_, stride, _), s in zip(axes, element_strides)]
        params = ctx.symbol("params")
        pad = 6 - len(dims)
        ctx.static(f"static const mb_transpose_params {params} = " + c_struct([
            ("num_dims", len(dims)), ("element_size", item),
            ("output_dims", dims + [1] * pad), ("input_strides", strides + [0] * pad)]) + ";")
        ctype = {1: "int8_t", 2: "int16_t", 4: "int32_t"}[item]
        source = f"(const {ctype} *)(const void *){ctx.ptr(op.inputs[0])} + {offset}"
        return f"mb_transpose(&{params}, {source}, {ctx.ptr(op.outputs[0])});"
