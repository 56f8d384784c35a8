"""Float32 TRANSPOSE_CONV (``runtime/kernels/transpose_conv_f32.c``), bit-exact with TFLM's
reference_ops::TransposeConv on float: float32 input and output, a constant float32 filter
[output_c, h, w, input_c], an optional constant float32 bias, a fused activation. The output
shape operand and the padding are the integer path's (microbuild/compiler/ops/transpose_conv.py);
the kernel writes straight into the output, so it needs no scratch."""

from __future__ import annotations

from microbuild.compiler.f32 import activation_range, all_float32_reasons
from microbuild.compiler.spatial import c_struct, window_2d
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("transpose_conv_f32.c",)
HEADER = "microbuild/kernels/transpose_conv_f32.h"
FILTER, INPUT, BIAS = 1, 2, 3


def reasons(op: Operator, graph: Graph) -> list[str]:
    """Why this float32 instance cannot compile, beyond the shapes and the bias the integer path
    checks."""
    found = all_float32_reasons(op, graph, [FILTER, INPUT, BIAS])
    w = graph.tensor(op.inputs[FILTER])
    if not w.is_constant:
        found.append(f"filter '{w.name}' is computed at run time; only a constant filter is "
                     "supported")
    if activation_range(op) is None:
        found.append(f"fused activation {op.options.get('fused_activation_function')} is not "
                     "one TFLM's float kernels apply")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    x, w = graph.tensor(op.inputs[INPUT]), graph.tensor(op.inputs[FILTER])
    out = graph.tensor(op.outputs[0])
    batches, in_h, in_w, in_c = x.shape
    out_c, filter_h, filter_w, _ = w.shape
    _, out_h, out_w, _ = out.shape
    o = op.options
    # TFLM's Prepare: the padding of the convolution that maps the output to the input.
    win = window_2d(o, out_h, out_w, filter_h, filter_w)
    low, high = activation_range(op)
    fields = [("batches", batches), ("input_h", in_h), ("input_w", in_w), ("input_c", in_c),
              ("filter_h", filter_h), ("filter_w", filter_w), ("output_h", out_h),
              ("output_w", out_w), ("output_c", out_c), ("stride_h", o.get("stride_h", 1)),
              ("stride_w", o.get("stride_w", 1)), ("pad_top", win.pad_top),
              ("pad_left", win.pad_left), ("activation_min", low), ("activation_max", high)]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_transpose_conv_f32_params {params} = {c_struct(fields)};")
    has_bias = len(op.inputs) > BIAS and op.inputs[BIAS] >= 0
    bias = ctx.ptr(op.inputs[BIAS]) if has_bias else "NULL"
    return (f"mb_transpose_conv_f32(&{params}, {ctx.ptr(op.inputs[INPUT])}, "
            f"{ctx.ptr(op.inputs[FILTER])}, {bias}, {ctx.ptr(op.outputs[0])});")
