"""Float32 RESIZE_BILINEAR (``runtime/kernels/resize_f32.c``), bit-exact with TFLM's
reference_ops::ResizeBilinear on float. The operand and size checks are the integer path's
(microbuild/compiler/ops/resize.py); the positions are computed on the device, since whether the
half-pixel offset is a fused multiply-add depends on the core (f32.h). A float position's floor
is clamped to >= 0 and its ceiling to the last pixel, so no output reads outside the input."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_float
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("resize_f32.c",)
HEADER = "microbuild/kernels/resize_f32.h"


def _scale(in_size: int, out_size: int, align_corners: bool) -> float:
    """TFLM's scale: static_cast<float>(in) / out, or (in - 1) / (out - 1) with align_corners."""
    if align_corners and out_size > 1:
        return float(np.float32(in_size - 1) / np.float32(out_size - 1))
    return float(np.float32(in_size) / np.float32(out_size))


def emit(op: Operator, graph: Graph, ctx, size: tuple[int, int],
         flags: tuple[bool, bool]) -> str:
    n, in_h, in_w, c = graph.tensor(op.inputs[0]).shape
    (out_h, out_w), (align, half) = size, flags
    fields = [("batches", n), ("input_h", in_h), ("input_w", in_w), ("channels", c),
              ("output_h", out_h), ("output_w", out_w),
              ("height_scale", c_float(_scale(in_h, out_h, align))),
              ("width_scale", c_float(_scale(in_w, out_w, align))),
              ("half_pixel_centers", int(half))]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_resize_bilinear_f32_params {params} = {c_struct(fields)};")
    return (f"mb_resize_bilinear_f32(&{params}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])});")
