"""The operand checks, overlap rule, parameter struct, per-channel requantization and 16x8 call
that CONV_2D and DEPTHWISE_CONV_2D share. The two kernels' structs (runtime/include/microbuild/kernels/conv2d.h,
depthwise_conv2d.h) differ only in the filter's channel fields: CONV_2D names ``filter_c`` and
``output_c``, DEPTHWISE_CONV_2D a ``depth_multiplier`` instead. It registers no operator itself.
"""

from __future__ import annotations

from microbuild.compiler.f32 import is_float32, spatial as spatial_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering
from microbuild.compiler.overlap import sliding_window_overlap
from microbuild.compiler.quant import activation_range_int8
from microbuild.compiler.spatial import (
    activation_reasons,
    bias_reasons,
    c_struct,
    channel_multipliers,
    filter_reasons,
    int32_array,
    operand_count_reasons,
    window_2d,
    window_option_reasons,
)
from microbuild.model.ir import Graph, Operator


def conv_operand_reasons(op: Operator, graph: Graph, depthwise: bool) -> list[str]:
    """The checks both make before their filter's own: operand count, the float32 kernel's whole
    check for float32 instances, int8/int16 rank-4 activations, the filter's layout ([out, h, w,
    in], or [1, h, w, channels] for depthwise) and the window options. The caller stops when
    this finds something or the op is float32."""
    reasons = operand_count_reasons(op, (2, 3))
    if reasons or op.inputs[0] < 0 or op.inputs[1] < 0:
        return reasons or ["input or filter is missing"]
    if is_float32(op, graph):
        return spatial_f32.reasons(op, graph)
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    reasons += activation_reasons("input", x, rank=4, dtypes=("int8", "int16"))
    reasons += activation_reasons("output", out, rank=4, dtypes=(x.dtype,))
    if depthwise and (len(w.shape) != 4 or w.shape[0] != 1):
        reasons.append(f"filter '{w.name}' has shape {w.shape}; expected [1, h, w, channels]")
    elif not depthwise and len(w.shape) != 4:
        reasons.append(f"filter '{w.name}' has shape {w.shape}; expected [out, h, w, in]")
    return reasons + window_option_reasons(op.options, dilation=True)


def checked_conv_operands(op: Operator, graph: Graph, depthwise: bool) -> tuple[list[str], tuple | None]:
    """conv_operand_reasons, then for an int8/int16 instance that passed them the filter's
    quantization and the bias (one per output channel: the filter's axis 3 for depthwise, 0 for
    CONV_2D; int64 with int16 activations). Returns the reasons and, when the caller's own shape
    checks follow, the operands (input, filter, bias or None, output)."""
    reasons = conv_operand_reasons(op, graph, depthwise)
    if reasons or is_float32(op, graph):
        return reasons, None
    inputs = graph.input_tensors(op)
    x, w = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    axis = 3 if depthwise else 0
    reasons += filter_reasons(w, channel_axis=axis)
    reasons += bias_reasons(bias, w.shape[axis], "int64" if x.dtype == "int16" else "int32")
    return reasons, (x, w, bias, graph.tensor(op.outputs[0]))


def conv_window_overlap(op: Operator, graph: Graph, k: int, variant=None):
    """The output may lie over the dying input, shifted down, as far as the kernel's walk over
    the filter window allows (microbuild/compiler/overlap.py). The exact float kernels
    (spatial_f32.c) walk output pixels one at a time too and finish reading a pixel's window
    before writing that pixel's last channel; a float variant that does not declare an
    ``overlap_group`` (conv2d_f32_mve.c) is never overlapped."""
    w = graph.tensor(op.inputs[1])
    return sliding_window_overlap(op, graph, k, int(w.shape[1]), int(w.shape[2]), variant)


def conv_fields(op: Operator, graph: Graph, depthwise: bool) -> list[tuple[str, int]]:
    """The parameter struct's fields in declaration order. int16 (16x8) operands have zero
    offsets and the int16 activation range."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    batches, in_h, in_w, in_c = x.shape
    o = op.options
    if depthwise:
        _, filter_h, filter_w, out_c = w.shape
        channels = [("depth_multiplier", out_c // in_c)]
    else:
        out_c, filter_h, filter_w, filter_c = w.shape
        channels = [("filter_c", filter_c)]
    win = window_2d(o, in_h, in_w, filter_h, filter_w)
    int16 = x.dtype == "int16"
    act_min, act_max = activation_range_int8(o.get("fused_activation_function", "NONE"),
                                             out.scale, out.zero_point,
                                             "int16" if int16 else "int8")
    return [
        ("batches", batches), ("input_h", in_h), ("input_w", in_w), ("input_c", in_c),
        ("filter_h", filter_h), ("filter_w", filter_w), *channels,
        ("output_h", win.out_h), ("output_w", win.out_w),
        *([] if depthwise else [("output_c", out_c)]),
        ("stride_h", o.get("stride_h", 1)), ("stride_w", o.get("stride_w", 1)),
        ("dilation_h", o.get("dilation_h_factor", 1)),
        ("dilation_w", o.get("dilation_w_factor", 1)),
        ("pad_top", win.pad_top), ("pad_left", win.pad_left),
        ("input_offset", 0 if int16 else -x.zero_point),
        ("output_offset", 0 if int16 else out.zero_point),
        ("activation_min", act_min), ("activation_max", act_max),
    ]


def emit_conv_params(op: Operator, graph: Graph, ctx: EmitContext, params_type: str,
                     depthwise: bool) -> tuple[str, str, str]:
    """Emits the parameter struct and the per-channel multipliers and shifts; returns their
    three symbols. A band of output rows on a view of the input (row_stream.py, int8 only)
    replaces the rows the band changes."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    out_c = int(w.shape[3] if depthwise else w.shape[0])
    multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
    fields = conv_fields(op, graph, depthwise)
    band = getattr(ctx, "band", None)
    if band is not None:
        rows = {"input_h": band.input_h, "output_h": band.output_h, "pad_top": band.pad_top}
        fields = [(name, rows.get(name, value)) for name, value in fields]
    params = ctx.symbol("params")
    ctx.static(f"static const {params_type} {params} = {c_struct(fields)};")
    mult = ctx.const_array(ctx.symbol("multipliers"), int32_array(multipliers), "int32_t")
    shift = ctx.const_array(ctx.symbol("shifts"), int32_array(shifts), "int32_t")
    return params, mult, shift


def emit_s16(lowering: OpLowering, op: Operator, graph: Graph, ctx: EmitContext,
             function: str, params_type: str, depthwise: bool) -> str:
    """The call of a 16x8 convolution kernel (conv2d_s16.c): the int8 kernels' parameter struct
    with zero offsets, the per-channel requantization, the model's int64 bias as it is."""
    inputs = graph.input_tensors(op)
    params, mult, shift = emit_conv_params(op, graph, ctx, params_type, depthwise)
    bias = ctx.ptr(op.inputs[2]) if len(inputs) > 2 and inputs[2] is not None \
        else "(const int64_t *)0"
    # A variant that arranges the filter gets it in place of this argument (the model's layout
    # is then not stored at all).
    variant = getattr(ctx, "variant", None)
    filter_arg = ("0" if variant is not None and variant.arrange is not None
                  else ctx.ptr(op.inputs[1]))
    return lowering.kernel_call(op, graph, ctx, function, [
        f"&{params}", ctx.ptr(op.inputs[0]), filter_arg, bias, mult, shift,
        ctx.ptr(op.outputs[0])], weights=2)
