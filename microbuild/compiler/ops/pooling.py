"""AVERAGE_POOL_2D and MAX_POOL_2D (int8), bit-exact with TFLM's reference_integer_ops::AveragePool
and MaxPool.

TFLM pools the raw int8 values without rescaling, which is only meaningful when input and output
share scale and zero point (the converter always makes them so); anything else is refused rather
than reproduced. The window geometry and the fused activation's clamp are computed here.
"""

from __future__ import annotations

from microbuild.compiler.f32 import is_float32, spatial as spatial_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.overlap import sliding_window_overlap
from microbuild.compiler.quant import activation_range_int8
from microbuild.compiler.spatial import (
    Window2D,
    activation_reasons,
    c_struct,
    operand_count_reasons,
    same_quantization,
    shape_reason,
    window_2d,
    window_option_reasons,
)
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator


def _empty_windows(win: Window2D, options: dict, in_h: int, in_w: int) -> bool:
    """True when some output's window lies entirely in the padding: TFLM's average pool then
    fails (it would divide by zero)."""
    fh, fw = options["filter_height"], options["filter_width"]
    for out, in_size, f, stride, pad in ((win.out_h, in_h, fh, options.get("stride_h", 1),
                                          win.pad_top),
                                         (win.out_w, in_w, fw, options.get("stride_w", 1),
                                          win.pad_left)):
        # Window i starts at i * stride - pad, growing with i: only the first can lie wholly
        # in the top/left padding and only the last wholly past the input (checking the two
        # ends, not every output: a damaged shape can have billions of outputs).
        if out > 0 and (f - pad <= 0 or (out - 1) * stride - pad >= in_size):
            return True
    return False


class _Pool2D(OpLowering):
    kernel_sources = ("pooling.c",)
    float32_sources = spatial_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/pooling.h", spatial_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    function: str

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (1,))
        if reasons:
            return reasons
        if is_float32(op, graph):
            return spatial_f32.reasons(op, graph)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons += activation_reasons("input", x, rank=4, dtypes=("int8", "int16"))
        reasons += activation_reasons("output", out, rank=4, dtypes=(x.dtype,))
        reasons += window_option_reasons(op.options, dilation=False)
        for name in ("filter_height", "filter_width"):
            value = op.options.get(name, 0)
            if not isinstance(value, int) or value < 1:
                reasons.append(f"{name} is {value}; it must be at least 1")
        if reasons:
            return reasons
        if not same_quantization(x, out):
            reasons.append(
                f"input (scale {x.scale}, zero point {x.zero_point}) and output (scale "
                f"{out.scale}, zero point {out.zero_point}) are quantized differently; TFLM pools "
                "raw int8 values without rescaling, so they must match")
        batches, in_h, in_w, channels = x.shape
        win = window_2d(op.options, in_h, in_w, op.options["filter_height"],
                        op.options["filter_width"])
        reasons += shape_reason("output", out, (batches, win.out_h, win.out_w, channels))
        if _empty_windows(win, op.options, in_h, in_w):
            reasons.append("some pooling window lies entirely in the padding")
        return reasons

    def overlap(self, op: Operator, graph: Graph, k: int, variant=None):
        """Every pooling kernel walks output pixels in order, reading only that pixel's window:
        the output may lie over the dying input, shifted down (microbuild/compiler/overlap.py).
        The float kernels (spatial_f32.c) walk them the same way, channel by channel."""
        o = op.options
        return sliding_window_overlap(op, graph, k, int(o.get("filter_height", 1)),
                                      int(o.get("filter_width", 1)), variant)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return spatial_f32.emit(op, graph, ctx)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        o = op.options
        batches, in_h, in_w, channels = x.shape
        win = window_2d(o, in_h, in_w, o["filter_height"], o["filter_width"])
        act_min, act_max = activation_range_int8(o.get("fused_activation_function", "NONE"),
                                                 out.scale, out.zero_point, out.dtype)
        params = ctx.symbol("params")
        fields = [
            ("batches", batches), ("input_h", in_h), ("input_w", in_w), ("channels", channels),
            ("output_h", win.out_h), ("output_w", win.out_w),
            ("filter_h", o["filter_height"]), ("filter_w", o["filter_width"]),
            ("stride_h", o.get("stride_h", 1)), ("stride_w", o.get("stride_w", 1)),
            ("pad_top", win.pad_top), ("pad_left", win.pad_left),
            ("activation_min", act_min), ("activation_max", act_max),
        ]
        ctx.static(f"static const mb_pool2d_s8_params {params} = {c_struct(fields)};")
        function = self.function if x.dtype == "int8" else self.function.replace("_s8", "_s16")
        return self.kernel_call(op, graph, ctx, function,
                                [f"&{params}", ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])])


def _dsp_accepts(op: Operator, graph: Graph) -> bool:
    """more than 8 channels (the reference keeps 1 to 8 channels' sums in registers, faster than
    the dsp kernel's per-pixel setup and its channel-by-channel remainder)."""
    return graph.tensor(op.inputs[0]).shape[-1] > 8


def _mve_accepts(op: Operator, graph: Graph) -> bool:
    """16 channels or more (fewer run faster on the dsp kernel or the reference)."""
    return graph.tensor(op.inputs[0]).shape[-1] >= 16


@register
class AveragePool2D(_Pool2D):
    opcode = "AVERAGE_POOL_2D"
    function = "mb_avgpool2d_s8"
    variants = (
        KernelVariant(
            opcode="AVERAGE_POOL_2D", name="swar", function="mb_avgpool2d_s8_swar",
            sources=("pooling_portable.c",), rank=10,
            # Other channel counts run the reference from inside the kernel: no gain to offer;
            # nor for 4 or 8 channels, which the reference sums in registers.
            accepts=lambda op, graph: graph.tensor(op.inputs[0]).shape[-1] % 4 == 0 and
            _dsp_accepts(op, graph),
            overlap_group=1,
            description="portable C: 4 channels per 32-bit word, 16-bit lanes (SWAR)"),
        KernelVariant(
            opcode="AVERAGE_POOL_2D", name="dsp", function="mb_avgpool2d_s8_dsp",
            sources=("pooling_dsp.c",), features=frozenset({"dsp"}), rank=20,
            accepts=_dsp_accepts, overlap_group=1,
            description="Arm DSP: SXTAB16 sums 4 channels per load into 16-bit lanes"),
        KernelVariant(
            opcode="AVERAGE_POOL_2D", name="mve", function="mb_avgpool2d_s8_mve",
            sources=("pooling_mve.c",), features=frozenset({"mve"}), rank=30,
            accepts=_mve_accepts, overlap_group=1,
            description="Helium: widening loads and 16-bit vector adds, 32 channels per pass"),
    )


@register
class MaxPool2D(_Pool2D):
    opcode = "MAX_POOL_2D"
    function = "mb_maxpool2d_s8"
    variants = (
        KernelVariant(
            opcode="MAX_POOL_2D", name="mve", function="mb_maxpool2d_s8_mve",
            sources=("pooling_mve.c",), features=frozenset({"mve"}), rank=30,
            overlap_group=1,
            description="Helium: 16 channels per VMAX.S8, the last ones tail-predicated"),
    )
