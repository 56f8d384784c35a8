"""TRANSPOSE_CONV (int8 activations with int8 filters per channel or per tensor and an optional
int32 bias; 16x8: int16 activations, int8 filters, an optional int64 (or legacy int16) bias),
bit-exact with TFLM's reference_integer_ops::TransposeConv; float32 in
microbuild/compiler/f32/transpose_conv.py.

TFLM sums each output in a scratch buffer the size of the output (int32 for int8, int64 for
16x8) by scattering every input pixel through the filter, then requantizes with one multiplier
and shift per output channel (a per-tensor filter scale repeated, as for CONV_2D) and clamps to
the fused activation's range. The kernel does the same in the op's scratch area.

Input 0 (the output shape) is not read: the output tensor's static shape is what counts, so the
SHAPE -> STRIDED_SLICE -> PACK chain the converter emits for an open batch is dead code. When that
operand is a constant it must agree with the output tensor. Padding follows TFLM's Prepare: the
padding of a convolution from the output back to the input (window_2d over the output size).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from microbuild.compiler.f32 import is_float32
from microbuild.compiler.f32 import transpose_conv as transpose_conv_f32
from microbuild.compiler.f32.layout import moved_value_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.variants import KernelVariant, Refusal
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

OUTPUT_SHAPE, FILTER, INPUT, BIAS = 0, 1, 2, 3
INT32_LIMIT = 1 << 31


def _bias(op: Operator, graph: Graph):
    if len(op.inputs) > BIAS and op.inputs[BIAS] >= 0:
        return graph.tensor(op.inputs[BIAS])
    return None


def _sum_bound(op: Operator, graph: Graph) -> int:
    """The largest magnitude an int8 output sum (bias included) can reach: every tap of a channel
    times the largest |input - zero point| (255), plus the bias."""
    w = graph.tensor(op.inputs[FILTER])
    per_channel = np.abs(w.data.reshape(w.shape[0], -1).astype(np.int64)).sum(axis=1) * 255
    bias = _bias(op, graph)
    if bias is not None:
        per_channel = per_channel + np.abs(bias.data.astype(np.int64).reshape(-1))
    return int(per_channel.max())


def _scatter_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """int8 with no leading padding below zero: what the scatter variants
    (transpose_conv_scatter.h) handle."""
    x, w, out = graph.tensor(op.inputs[INPUT]), graph.tensor(op.inputs[FILTER]), \
        graph.tensor(op.outputs[0])
    if x.dtype != "int8" or len(w.shape) != 4 or len(out.shape) != 4:
        return Refusal("not an int8 TRANSPOSE_CONV with 4-D tensors")
    win = window_2d(op.options, out.shape[1], out.shape[2], w.shape[1], w.shape[2])
    if win.pad_top < 0 or win.pad_left < 0:
        return Refusal("negative padding")
    return True


def arrange_scatter(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """OHWI int8 -> int16 [h][w][out][in rounded up to even], the extra weight 0."""
    out_c, fh, fw, in_c = weights.shape
    wide = np.zeros((fh, fw, out_c, in_c + (in_c & 1)), dtype=np.int16)
    wide[..., :in_c] = np.transpose(weights.astype(np.int16), (1, 2, 0, 3))
    return wide


def arrange_channels_inner(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """OHWI int8 -> int16 [h][w][in rounded up to even][out] (the Helium variant's vectors of
    output channels), the extra depth's weights 0; with output channels not a multiple of 4 (the
    kernel then runs the DSP taps) arrange_scatter's layout."""
    if weights.shape[0] % 4:
        return arrange_scatter(weights, op, graph)
    return np.ascontiguousarray(np.swapaxes(arrange_scatter(weights, op, graph), 2, 3))


def _dsp_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """What the scatter variants take, and sums small enough for the SMMULR requantization
    (dsp_words.h's mb_rescale_small): every channel's largest sum, shifted left by its left
    shift + 1, within int32."""
    fits = _scatter_fits(op, graph)
    if not fits:
        return fits
    for c, bound, left, _ in _channel_bounds(op, graph):
        if bound << (left + 1) >= 1 << 31:
            return Refusal(f"channel {c}: a sum up to {bound:,} shifted left by {left + 1} "
                           "leaves int32 (the SMMULR requantization)")
    return True


def _channel_bounds(op: Operator, graph: Graph):
    """(channel, largest |sum| bias included, left shift, right shift) per output channel."""
    x, w, out = graph.tensor(op.inputs[INPUT]), graph.tensor(op.inputs[FILTER]), \
        graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, w.shape[0])
    bounds = np.abs(w.data.reshape(w.shape[0], -1).astype(np.int64)).sum(axis=1) * 255
    bias = _bias(op, graph)
    if bias is not None:
        bounds = bounds + np.abs(bias.data.astype(np.int64).reshape(-1))
    return [(c, int(bounds[c]), max(int(shifts[c]), 0), max(-int(shifts[c]), 0))
            for c in range(w.shape[0])]


def _mve_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """What the scatter variants take, and sums small enough for the Helium
    requantization (requantize_mve.h): every channel's largest sum, shifted left by its left
    shift, below 2^30, and no right shift over 28."""
    fits = _scatter_fits(op, graph)
    if not fits:
        return fits
    for c, bound, left, right in _channel_bounds(op, graph):
        if bound << left >= 1 << 30 or right > 28:
            return Refusal(f"channel {c}: a sum up to {bound:,} (left shift {left}, right "
                           f"shift {right}) is beyond the Helium requantization's range")
    return True


def _scatter_scratch(op: Operator, graph: Graph) -> int:
    """One output row of int32 sums, then one batch's input widened to int16."""
    x, out = graph.tensor(op.inputs[INPUT]), graph.tensor(op.outputs[0])
    _, in_h, in_w, in_c = x.shape
    return 4 * out.shape[2] * out.shape[3] + 2 * in_h * in_w * (in_c + (in_c & 1))


def _variant(name: str, rank: int, features: frozenset, description: str,
             accepts=_scatter_fits, arrange=arrange_scatter) -> KernelVariant:
    return KernelVariant(
        opcode="TRANSPOSE_CONV", name=name, function=f"mb_transpose_conv_s8_{name}",
        sources=(f"transpose_conv_{name}.c",), features=features, rank=rank,
        accepts=accepts, arrange=arrange, scratch=_scatter_scratch, description=description)


VARIANTS = (
    _variant("fast", 10, frozenset(), "TFLM's scatter one output row at a time into int32 "
             "sums, input widened once to int16, int16 weights pre-arranged; any CPU"),
    _variant("dsp", 20, frozenset({"dsp"}), "the row scatter with SMLAD on int16 pairs, the "
             "pixel's pairs in registers for depths up to 8, SMMULR requantization",
             accepts=_dsp_fits),
    _variant("mve", 30, frozenset({"mve"}), "the scatter over vectors of 4 output channels "
             "(VMLA by each input value; other channel counts: the SMLAD taps), Helium "
             "requantization",
             accepts=_mve_fits, arrange=arrange_channels_inner),
)


@register
class TransposeConv(OpLowering):
    opcode = "TRANSPOSE_CONV"
    kernel_sources = ("transpose_conv.c",)
    float32_sources = transpose_conv_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/transpose_conv.h", transpose_conv_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    variants = VARIANTS

    def kernel_op(self, op: Operator) -> Operator:
        """The op with the activations in slot 0, where the variant choice looks for their type
        (input 0 is the output shape)."""
        inputs = list(op.inputs)
        if len(inputs) > INPUT:
            inputs[OUTPUT_SHAPE] = inputs[INPUT]
        return dataclasses.replace(op, inputs=inputs)

    def used_inputs(self, op: Operator, graph: Graph) -> list[int]:
        inputs = list(op.inputs)
        # The output shape is static; a computed one (an open batch) is only plumbing.
        if inputs and inputs[OUTPUT_SHAPE] >= 0 \
                and not graph.tensor(inputs[OUTPUT_SHAPE]).is_constant:
            inputs[OUTPUT_SHAPE] = -1
        return inputs

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (3, 4))
        if reasons or op.inputs[FILTER] < 0 or op.inputs[INPUT] < 0:
            return reasons or ["input or filter is missing"]
        x, w = graph.tensor(op.inputs[INPUT]), graph.tensor(op.inputs[FILTER])
        bias, out = _bias(op, graph), graph.tensor(op.outputs[0])
        float32 = is_float32(op, graph)
        if float32:
            reasons += transpose_conv_f32.reasons(op, graph)
            reasons += moved_value_reasons("input", x, rank=4, dtypes=("float32",))
            reasons += moved_value_reasons("output", out, rank=4, dtypes=("float32",))
        else:
            reasons += activation_reasons("input", x, rank=4, dtypes=("int8", "int16"))
            reasons += activation_reasons("output", out, rank=4, dtypes=(x.dtype,))
        if len(w.shape) != 4:
            reasons.append(f"filter '{w.name}' has shape {w.shape}; expected [out, h, w, in]")
        reasons += window_option_reasons(op.options, dilation=False)
        if reasons:
            return reasons
        if not float32:
            reasons += filter_reasons(w, channel_axis=0)
        out_c, _, _, filter_c = w.shape
        # 16x8: an int64 bias, or the int16 one older converters made (TFLM widens it to int64
        # at every invocation; here it is widened once, at compile time).
        bias_dtype = "int32"
        if x.dtype == "int16":
            bias_dtype = "int16" if bias is not None and bias.dtype == "int16" else "int64"
        elif float32:
            bias_dtype = "float32"
        reasons += bias_reasons(bias, out_c, bias_dtype)
        if x.shape[3] != filter_c:
            reasons.append(f"input depth {x.shape[3]} differs from the filter depth {filter_c}")
        if out.shape[0] != x.shape[0] or out.shape[3] != out_c:
            reasons.append(f"output '{out.name}' has shape {tuple(out.shape)}; expected batch "
                           f"{x.shape[0]} and {out_c} channels")
        if op.inputs[OUTPUT_SHAPE] >= 0:
            given = graph.tensor(op.inputs[OUTPUT_SHAPE])
            values = [int(v) for v in np.asarray(given.data).reshape(-1)]
            if values != [int(d) for d in out.shape]:
                reasons.append(f"the output shape operand says {values} but the output tensor "
                               f"has shape {list(out.shape)}")
        if reasons:
            return reasons
        if x.dtype == "int8" and _sum_bound(op, graph) >= INT32_LIMIT:
            reasons.append(f"an output's sum could reach {_sum_bound(op, graph)}, beyond int32; "
                           "TFLM's int32 sums would overflow (undefined) for such inputs")
        return reasons

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        x = graph.tensor(op.inputs[INPUT])
        if is_float32(op, graph):
            return 0  # the float kernel sums in the output itself, as TFLM's does
        return graph.tensor(op.outputs[0]).num_elements * (8 if x.dtype == "int16" else 4)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return transpose_conv_f32.emit(op, graph, ctx)
        x, w = graph.tensor(op.inputs[INPUT]), graph.tensor(op.inputs[FILTER])
        bias, out = _bias(op, graph), graph.tensor(op.outputs[0])
        batches, in_h, in_w, in_c = x.shape
        out_c, filter_h, filter_w, _ = w.shape
        _, out_h, out_w, _ = out.shape
        o = op.options
        # TFLM's Prepare: the padding of the convolution that maps the output to the input.
        win = window_2d(o, out_h, out_w, filter_h, filter_w)
        s16 = x.dtype == "int16"
        act_min, act_max = activation_range_int8(o.get("fused_activation_function", "NONE"),
                                                 out.scale, out.zero_point, x.dtype)
        multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
        fields = [("batches", batches), ("input_h", in_h), ("input_w", in_w),
                  ("input_c", in_c), ("filter_h", filter_h), ("filter_w", filter_w),
                  ("output_h", out_h), ("output_w", out_w), ("output_c", out_c),
                  ("stride_h", o.get("stride_h", 1)), ("stride_w", o.get("stride_w", 1)),
                  ("pad_top", win.pad_top), ("pad_left", win.pad_left),
                  ("input_offset", 0 if s16 else -x.zero_point),
                  ("output_offset", 0 if s16 else out.zero_point),
                  ("activation_min", act_min), ("activation_max", act_max)]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_transpose_conv_params {params} = {c_struct(fields)};")
        mult = ctx.const_array(ctx.symbol("multipliers"), int32_array(multipliers), "int32_t")
        shift = ctx.const_array(ctx.symbol("shifts"), int32_array(shifts), "int32_t")
        acc = "int64_t" if s16 else "int32_t"
        if bias is None:
            bias_ptr = f"(const {acc} *)0"
        elif bias.dtype == "int16":
            bias_ptr = ctx.const_array(ctx.symbol("bias_s64"),
                                       bias.data.reshape(-1).astype(np.int64), "int64_t")
        else:
            bias_ptr = ctx.ptr(op.inputs[BIAS])
        function = "mb_transpose_conv_s16" if s16 else "mb_transpose_conv_s8"
        args = [f"&{params}", ctx.ptr(op.inputs[INPUT]), ctx.ptr(op.inputs[FILTER]), bias_ptr,
                mult, shift, ctx.ptr(op.outputs[0]), f"({acc} *){ctx.scratch_ptr()}"]
        return self.kernel_call(op, graph, ctx, function, args, weights=2)
