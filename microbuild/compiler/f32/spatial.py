"""Float32 CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D
(``runtime/kernels/spatial_f32.c``), bit-exact with TFLM's float reference kernels. The window
geometry is the integer paths' (microbuild/compiler/spatial.py: TFLM's padding arithmetic)."""

from __future__ import annotations

from microbuild.compiler.f32 import activation_range, all_float32_reasons, mve
from microbuild.compiler.spatial import (
    c_struct,
    shape_reason,
    window_2d,
    window_option_reasons,
)
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("spatial_f32.c", "dot_f32.c")
HEADER = "microbuild/kernels/spatial_f32.h"


def reasons(op: Operator, graph: Graph) -> list[str]:
    """Why this float32 instance cannot compile; the operand count is checked by the caller."""
    found = all_float32_reasons(op, graph)
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    pool = op.opcode.endswith("POOL_2D")
    found += window_option_reasons(op.options, dilation=not pool)
    if len(x.shape) != 4:
        found.append(f"input '{x.name}' has shape {list(x.shape)}; expected NHWC (rank 4)")
    if found:
        return found
    batches, in_h, in_w, in_c = x.shape
    if pool:
        filter_h, filter_w = op.options.get("filter_height", 0), op.options.get("filter_width", 0)
        if min(filter_h, filter_w) < 1:
            return [f"pooling window {filter_h}x{filter_w} is empty"]
        out_c = in_c
    else:
        w = graph.tensor(op.inputs[1])
        if not w.is_constant or len(w.shape) != 4:
            return [f"filter '{w.name}' must be a constant rank-4 tensor"]
        bias = graph.tensor(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
        if bias is not None and not bias.is_constant:
            found.append(f"bias '{bias.name}' is computed at run time; only a constant bias is "
                         "supported")
        if op.opcode == "CONV_2D":
            out_c, filter_h, filter_w, filter_c = w.shape
            if in_c % filter_c or out_c % (in_c // filter_c):
                found.append(f"input depth {in_c}, filter depth {filter_c} and {out_c} filters "
                             "do not make whole groups")
        else:
            _, filter_h, filter_w, out_c = w.shape
            if w.shape[0] != 1 or out_c % in_c:
                found.append(f"filter shape {list(w.shape)} does not fit {in_c} input channels")
            elif op.options.get("depth_multiplier", out_c // in_c) != out_c // in_c:
                found.append(f"depth_multiplier option is {op.options.get('depth_multiplier')} "
                             f"but the shapes say {out_c // in_c}")
        if bias is not None and bias.num_elements != out_c:
            found.append(f"bias has {bias.num_elements} values for {out_c} channels")
    win = window_2d(op.options, in_h, in_w, filter_h, filter_w)
    found += shape_reason("output", out, (batches, win.out_h, win.out_w, out_c))
    if activation_range(op) is None:
        found.append(f"fused activation {op.options.get('fused_activation_function')} is not "
                     "supported")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    o = op.options
    batches, in_h, in_w, in_c = x.shape
    if op.opcode.endswith("POOL_2D"):
        filter_h, filter_w, filter_c, out_c = o["filter_height"], o["filter_width"], 1, in_c
    elif op.opcode == "CONV_2D":
        out_c, filter_h, filter_w, filter_c = graph.tensor(op.inputs[1]).shape
    else:
        _, filter_h, filter_w, out_c = graph.tensor(op.inputs[1]).shape
        filter_c = 1
    win = window_2d(o, in_h, in_w, filter_h, filter_w)
    low, high = activation_range(op)
    fields = [("batches", batches), ("input_h", in_h), ("input_w", in_w), ("input_c", in_c),
              ("filter_h", filter_h), ("filter_w", filter_w), ("filter_c", filter_c),
              ("output_h", win.out_h), ("output_w", win.out_w), ("output_c", out_c),
              ("stride_h", o.get("stride_h", 1)), ("stride_w", o.get("stride_w", 1)),
              ("dilation_h", o.get("dilation_h_factor", 1)),
              ("dilation_w", o.get("dilation_w_factor", 1)),
              ("pad_top", win.pad_top), ("pad_left", win.pad_left),
              ("depth_multiplier", max(out_c // in_c, 1)),
              ("activation_min", low), ("activation_max", high)]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_spatial_f32_params {params} = {c_struct(fields)};")
    src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
    if op.opcode == "AVERAGE_POOL_2D":
        return f"mb_average_pool_f32(&{params}, {src}, {dst});"
    if op.opcode == "MAX_POOL_2D":
        return f"mb_max_pool_f32(&{params}, {src}, {dst});"
    if op.opcode == "L2_POOL_2D":
        return f"mb_l2_pool_f32(&{params}, {src}, {dst});"
    bias = ctx.ptr(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else "NULL"
    function = "mb_conv2d_f32" if op.opcode == "CONV_2D" else "mb_depthwise_conv2d_f32"
    return mve.kernel_call(ctx, function, [f"&{params}", src, ctx.ptr(op.inputs[1]), bias, dst])
