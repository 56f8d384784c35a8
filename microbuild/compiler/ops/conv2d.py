"""CONV_2D (int8 activations, int8 filters per channel or per tensor, optional int32 bias),
bit-exact with TFLM's reference_integer_ops::ConvPerChannel.

Everything but the multiply-accumulate is settled here: the SAME padding TFLite would compute,
one Q31 multiplier and shift per output channel (TFLM expands a per-tensor filter scale to every
channel, and so do we), and the fused activation's clamp range.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import activation_range_int8
from microbuild.compiler.spatial import (
    activation_reasons,
    bias_reasons,
    c_struct,
    channel_multipliers,
    filter_reasons,
    int32_array,
    operand_count_reasons,
    shape_reason,
    window_2d,
    window_option_reasons,
)
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator


@register
class Conv2D(OpLowering):
    opcode = "CONV_2D"
    kernel_sources = ("conv2d.c",)
    headers = ("microbuild/kernels/conv2d.h",)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2, 3))
        if reasons or op.inputs[0] < 0 or op.inputs[1] < 0:
            return reasons or ["input or filter is missing"]
        inputs = graph.input_tensors(op)
        x, w = inputs[0], inputs[1]
        bias = inputs[2] if len(inputs) > 2 else None
        out = graph.tensor(op.outputs[0])
        reasons += activation_reasons("input", x, rank=4)
        reasons += activation_reasons("output", out, rank=4)
        if len(w.shape) != 4:
            reasons.append(f"filter '{w.name}' has shape {w.shape}; expected [out, h, w, in]")
        reasons += window_option_reasons(op.options, dilation=True)
        if reasons:
            return reasons
        reasons += filter_reasons(w, channel_axis=0)
        out_c, filter_h, filter_w, filter_c = w.shape
        reasons += bias_reasons(bias, out_c)
        batches, in_h, in_w, in_c = x.shape
        if in_c % filter_c != 0:
            reasons.append(f"input depth {in_c} is not a multiple of the filter depth {filter_c}")
        elif out_c % (in_c // filter_c) != 0:
            reasons.append(f"{out_c} filters do not split into {in_c // filter_c} groups")
        win = window_2d(op.options, in_h, in_w, filter_h, filter_w)
        reasons += shape_reason("output", out, (batches, win.out_h, win.out_w, out_c))
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return self.emit_call(op, graph, ctx, "(const mb_residual_add_s8 *)0",
                              ctx.ptr(op.outputs[0]))

    def emit_call(self, op: Operator, graph: Graph, ctx: EmitContext, residual: str,
                  output: str) -> str:
        """The mb_conv2d_s8 call for ``op`` with the given residual epilogue and output pointer
        (also used by the fused CONV_2D+ADD lowering)."""
        inputs = graph.input_tensors(op)
        x, w = inputs[0], inputs[1]
        has_bias = len(inputs) > 2 and inputs[2] is not None
        out = graph.tensor(op.outputs[0])
        batches, in_h, in_w, in_c = x.shape
        out_c, filter_h, filter_w, filter_c = w.shape
        o = op.options
        win = window_2d(o, in_h, in_w, filter_h, filter_w)
        act_min, act_max = activation_range_int8(o.get("fused_activation_function", "NONE"),
                                                 out.scale, out.zero_point)
        multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
        # Interior pixels (every tap inside the input): bias + input_offset * sum(filter), once
        # per channel, so the kernel's inner loop is a pure int8 dot product.
        filter_sums = w.data.reshape(out_c, -1).astype(np.int64).sum(axis=1)
        bias_values = (inputs[2].data.astype(np.int64) if has_bias
                       else np.zeros(out_c, dtype=np.int64))
        interior = bias_values + (-x.zero_point) * filter_sums
        if interior.min() < -(1 << 31) or interior.max() >= (1 << 31):
            raise ModelError(f"{op.describe()}: bias + input offset x filter sum overflows int32")

        params = ctx.symbol("params")
        fields = [
            ("batches", batches), ("input_h", in_h), ("input_w", in_w), ("input_c", in_c),
            ("filter_h", filter_h), ("filter_w", filter_w), ("filter_c", filter_c),
            ("output_h", win.out_h), ("output_w", win.out_w), ("output_c", out_c),
            ("stride_h", o.get("stride_h", 1)), ("stride_w", o.get("stride_w", 1)),
            ("dilation_h", o.get("dilation_h_factor", 1)),
            ("dilation_w", o.get("dilation_w_factor", 1)),
            ("pad_top", win.pad_top), ("pad_left", win.pad_left),
            ("input_offset", -x.zero_point), ("output_offset", out.zero_point),
            ("activation_min", act_min), ("activation_max", act_max),
        ]
        ctx.static(f"static const mb_conv2d_s8_params {params} = {c_struct(fields)};")
        mult = ctx.const_array(ctx.symbol("multipliers"), int32_array(multipliers), "int32_t")
        shift = ctx.const_array(ctx.symbol("shifts"), int32_array(shifts), "int32_t")
        interior_bias = ctx.const_array(ctx.symbol("interior_bias"), interior.astype(np.int32),
                                        "int32_t")
        bias = ctx.ptr(op.inputs[2]) if has_bias else "(const int32_t *)0"
        return self.kernel_call(op, graph, ctx, "mb_conv2d_s8", [
            f"&{params}", ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1]), bias, interior_bias, mult,
            shift, residual, output], weights=2)
