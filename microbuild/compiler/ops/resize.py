"""RESIZE_NEAREST_NEIGHBOR (int8, int16, float32) and RESIZE_BILINEAR (int8; float32 in
microbuild/compiler/f32/resize.py), bit-exact with TFLM.

Both take an NHWC input and a constant int32 ``size`` [new_height, new_width]; the options
``align_corners`` and ``half_pixel_centers`` place the output pixels on the input. The compiler
evaluates every position, so the device never sees the arithmetic:

- nearest neighbour: TFLM's GetNearestNeighbor in float32 (scale ``in / out``, or
  ``(in - 1) / (out - 1)`` with align_corners; ``+ 0.5`` with half-pixel centres; rounded half
  away from zero with align_corners, floored otherwise; clamped to the input). The kernel is the
  offset-table copy (microbuild/compiler/table_gather.py); values are not rescaled.
- bilinear: TFLM's ResizeBilinearInteger, the int8 path, which never uses float: positions in
  10-bit fixed point from a scale rounded to 1/1024, C's truncating division, four weights that sum
  to 2^20 and a result rounded half away from zero (TFLM's default double-rounding build). TFLM
  has no int16 RESIZE_BILINEAR (a 16x8 model's is refused).

On constants both are evaluated at compile time.
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.f32 import is_float32
from microbuild.compiler.f32 import resize as resize_f32
from microbuild.compiler.f32.layout import moved_value_reasons, same_values
from microbuild.compiler.spatial import c_struct, operand_count_reasons
from microbuild.compiler.table_gather import GatherPlan
from microbuild.model.ir import Graph, Operator


def _size(op: Operator, graph: Graph) -> tuple[int, int] | None:
    s = graph.tensor(op.inputs[1])
    if not s.is_constant or s.num_elements != 2:
        return None
    h, w = (int(v) for v in np.asarray(s.data).reshape(-1))
    return h, w


def _flags(op: Operator) -> tuple[bool, bool]:
    return (bool(op.options.get("align_corners", False)),
            bool(op.options.get("half_pixel_centers", False)))


def nearest_index(out_index: int, in_size: int, out_size: int, align_corners: bool,
                  half_pixel_centers: bool) -> int:
    """TFLM's GetNearestNeighbor, in float32 as it computes."""
    f32 = np.float32
    if align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    position = float((f32(out_index) + offset) * scale)  # exact in double
    if align_corners:  # TfLiteRound: half away from zero
        value = int(math.copysign(math.floor(abs(position) + 0.5), position))
    else:
        value = math.floor(position)
    value = min(value, in_size - 1)
    if half_pixel_centers:
        value = max(0, value)
    return value


def bilinear_axis(out_size: int, in_size: int, align_corners: bool,
                  half_pixel_centers: bool) -> list[tuple[int, int, int]]:
    """TFLM's ComputeInterpolationValuesInteger for every output position along one axis:
    (lower index, upper index, position minus 1024 * lower) in 1/1024 of a pixel."""
    def c_div(a: int, b: int) -> int:  # C's division truncates toward zero
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q

    scale = c_div((1 << 10) * in_size + out_size // 2, out_size)
    if align_corners and out_size > 1:
        scale = c_div((1 << 10) * (in_size - 1) + (out_size - 1) // 2, out_size - 1)
    result = []
    for i in range(out_size):
        position = i * scale + (scale // 2 - (1 << 9) if half_pixel_centers else 0)
        lower = max(c_div(position, 1 << 10), 0)
        upper = min(c_div(position + (1 << 10) - 1, 1 << 10), in_size - 1)
        result.append((lower, upper, position - (1 << 10) * lower))
    return result


class _Resize(OpLowering):
    # Read at compile time only; refused in check when not constant.
    parameter_inputs = (1,)
    value_kind = "values"

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or size is missing"]
        x, s, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), \
            graph.tensor(op.outputs[0])
        dtypes = tuple(sorted(self.dtypes))
        reasons += moved_value_reasons("input", x, rank=4, dtypes=dtypes)
        reasons += moved_value_reasons("output", y, rank=4, dtypes=(x.dtype,))
        if not s.is_constant:
            reasons.append(f"size '{s.name}' is not constant; the output height and width must "
                           "be known at compile time (TFLM requires a constant size too)")
            return reasons
        if s.dtype != "int32" or s.num_elements != 2:
            reasons.append(f"size '{s.name}' is {s.dtype} {list(s.shape)}; expected two int32 "
                           "values [height, width]")
            return reasons
        align, half = _flags(op)
        if align and half:
            reasons.append("align_corners and half_pixel_centers are both set; TFLM allows "
                           "half_pixel_centers only without align_corners")
        if reasons:
            return reasons
        out_h, out_w = _size(op, graph)
        n, _, _, c = x.shape
        if out_h < 1 or out_w < 1:
            reasons.append(f"size is {[out_h, out_w]}; both must be at least 1")
        elif tuple(y.shape) != (n, out_h, out_w, c):
            reasons.append(f"output '{y.name}' has shape {tuple(y.shape)}, expected "
                           f"{(n, out_h, out_w, c)} from the input {tuple(x.shape)} and size "
                           f"{[out_h, out_w]}")
        elif not same_values(x, y):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {y.scale}, zero point {y.zero_point}) are quantized "
                           f"differently; TFLM's kernel writes the interpolated {self.value_kind} "
                           "without rescaling")
        if not reasons:
            reasons += self.geometry_reasons(op, graph)
        return reasons

    def geometry_reasons(self, op: Operator, graph: Graph) -> list[str]:
        return []


@register
class ResizeNearestNeighbor(_Resize):
    opcode = "RESIZE_NEAREST_NEIGHBOR"
    kernel_sources = ("table_gather.c",)
    headers = ("microbuild/kernels/table_gather.h",)
    dtypes = frozenset({"int8", "int16", "float32"})

    def plan(self, op: Operator, graph: Graph) -> GatherPlan:
        n, in_h, in_w, c = graph.tensor(op.inputs[0]).shape
        out_h, out_w = _size(op, graph)
        align, half = _flags(op)
        rows = [nearest_index(i, in_h, out_h, align, half) * in_w * c for i in range(out_h)]
        cols = [nearest_index(i, in_w, out_w, align, half) * c for i in range(out_w)]
        batches = [b * in_h * in_w * c for b in range(n)]
        return GatherPlan([np.array(batches), np.array(rows), np.array(cols)], c)

    def geometry_reasons(self, op: Operator, graph: Graph) -> list[str]:
        return self.plan(op, graph).reasons(graph.tensor(op.inputs[0]).num_elements)

    def fold(self, op: Operator, graph: Graph):
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if _size(op, graph) is None or x.data is None:
            return None
        return [self.plan(op, graph).apply(x.data, y.shape).astype(y.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        itemsize = np.dtype(graph.tensor(op.inputs[0]).dtype).itemsize
        return self.plan(op, graph).emit(ctx, itemsize, ctx.ptr(op.inputs[0]),
                                         ctx.ptr(op.outputs[0]))


@register
class ResizeBilinear(_Resize):
    # TFLM's kernel takes float32 and int8 only: a 16x8 model's is refused saying so.
    tflm_lacks = frozenset({"int16"})
    opcode = "RESIZE_BILINEAR"
    kernel_sources = ("resize_bilinear.c",)
    float32_sources = resize_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/resize_bilinear.h", resize_f32.HEADER)
    dtypes = frozenset({"int8", "float32"})

    def axes(self, op: Operator, graph: Graph):
        _, in_h, in_w, _ = graph.tensor(op.inputs[0]).shape
        out_h, out_w = _size(op, graph)
        align, half = _flags(op)
        return (bilinear_axis(out_h, in_h, align, half), bilinear_axis(out_w, in_w, align, half))

    def geometry_reasons(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            # Float positions are clamped to the input (microbuild/compiler/f32/resize.py).
            return []
        _, in_h, in_w, _ = graph.tensor(op.inputs[0]).shape
        reasons = []
        for name, axis, size in zip(("row", "column"), self.axes(op, graph), (in_h, in_w)):
            for i, (lower, upper, frac) in enumerate(axis):
                # TFLM clamps only the upper neighbour; a lower one past the edge (extreme
                # upscaling of a 1-pixel axis) would be read out of bounds there.
                if not 0 <= lower <= upper < size or not -512 <= frac < 1024 or \
                        (frac < 0 and lower != upper):
                    reasons.append(f"output {name} {i} maps to input {name}s {lower} and {upper} "
                                   f"(fraction {frac}/1024) of {size}: outside the input, which "
                                   "TFLM would read out of bounds")
                    break
        return reasons

    def fold(self, op: Operator, graph: Graph):
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if _size(op, graph) is None or x.data is None or x.dtype == "float32":
            return None  # a constant float input is resized on the device
        rows, cols = self.axes(op, graph)
        data = np.asarray(x.data, dtype=np.int64).reshape(x.shape)
        out = np.empty(y.shape, dtype=np.int64)
        for i, (y0, y1, dy) in enumerate(rows):
            for j, (x0, x1, dx) in enumerate(cols):
                total = (data[:, y0, x0] * ((1024 - dy) * (1024 - dx))
                         + data[:, y1, x0] * (dy * (1024 - dx))
                         + data[:, y0, x1] * ((1024 - dy) * dx) + data[:, y1, x1] * (dy * dx))
                rounded = np.where(total > 0, total + (1 << 19), total - (1 << 19))
                out[:, i, j] = np.sign(rounded) * (np.abs(rounded) >> 20)
        return [out.astype(y.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return resize_f32.emit(op, graph, ctx, _size(op, graph), _flags(op))
        n, in_h, in_w, c = graph.tensor(op.inputs[0]).shape
        rows, cols = self.axes(op, graph)
        row_table = [v for y0, y1, dy in rows for v in (y0 * in_w * c, y1 * in_w * c, dy)]
        col_table = [v for x0, x1, dx in cols for v in (x0 * c, x1 * c, dx)]
        fields = [("batches", n), ("image_elements", in_h * in_w * c), ("output_h", len(rows)),
                  ("output_w", len(cols)), ("channels", c)]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_resize_bilinear_params {params} = {c_struct(fields)};")
        r = ctx.const_array(ctx.symbol("rows"), np.array(row_table, dtype=np.int32), "int32_t")
        k = ctx.const_array(ctx.symbol("cols"), np.array(col_table, dtype=np.int32), "int32_t")
        return (f"mb_resize_bilinear_s8(&{params}, {r}, {k}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])});")
