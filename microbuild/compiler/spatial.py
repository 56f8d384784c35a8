"""Compile-time helpers shared by the NHWC operators (CONV_2D, DEPTHWISE_CONV_2D, pooling, PAD,
MEAN, CONCATENATION): TFLite's output-size and padding arithmetic, per-channel requantization
multipliers, and the operand checks these lowerings have in common.

The padding functions follow tensorflow/lite/kernels/padding.h: TFLM computes the same values in
its Prepare, and its reference kernels use only the leading (top/left) padding; the extra row or
column SAME may need at the end (the "offset") falls outside the input and is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microbuild.compiler.quant import quantize_multiplier
from microbuild.model.ir import Operator, Tensor

FUSED_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def effective_filter_size(filter_size: int, dilation: int) -> int:
    """Extent of a dilated filter: taps are ``dilation`` apart."""
    return (filter_size - 1) * dilation + 1


def output_size(padding: str, in_size: int, filter_size: int, stride: int,
                dilation: int = 1) -> int:
    """TFLite's ComputeOutSize: SAME keeps ceil(in / stride), VALID only whole windows."""
    if padding == "SAME":
        return (in_size + stride - 1) // stride
    if padding == "VALID":
        return (in_size + stride - effective_filter_size(filter_size, dilation)) // stride
    raise ValueError(f"unknown padding {padding}")


def padding_before(in_size: int, filter_size: int, stride: int, dilation: int,
                   out_size: int) -> tuple[int, int]:
    """TFLite's ComputePaddingWithOffset: (padding before the first element, extra padding after).

    The total padding needed to produce ``out_size`` outputs is split with the smaller half first,
    so an odd total puts the extra element at the end. A negative total (VALID, or SAME with
    stride > filter) means no padding."""
    total = (out_size - 1) * stride + effective_filter_size(filter_size, dilation) - in_size
    total = max(total, 0)
    return total // 2, total % 2


@dataclass(frozen=True)
class Window2D:
    """Geometry of a 2-D sliding window over an NHWC tensor, as TFLM's Prepare derives it."""

    out_h: int
    out_w: int
    pad_top: int
    pad_left: int


def window_2d(options: dict, in_h: int, in_w: int, filter_h: int, filter_w: int) -> Window2D:
    """Output size and leading padding from an operator's padding / stride / dilation options
    (TFLite's ComputePaddingHeightWidth)."""
    padding = options.get("padding", "SAME")
    stride_h, stride_w = options.get("stride_h", 1), options.get("stride_w", 1)
    dil_h, dil_w = options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1)
    out_h = output_size(padding, in_h, filter_h, stride_h, dil_h)
    out_w = output_size(padding, in_w, filter_w, stride_w, dil_w)
    pad_top, _ = padding_before(in_h, filter_h, stride_h, dil_h, out_h)
    pad_left, _ = padding_before(in_w, filter_w, stride_w, dil_w, out_w)
    return Window2D(out_h, out_w, pad_top, pad_left)


def window_option_reasons(options: dict, dilation: bool) -> list[str]:
    """Padding, stride and (when the op has it) dilation options outside what TFLite allows."""
    reasons = []
    if options.get("padding", "SAME") not in ("SAME", "VALID"):
        reasons.append(f"padding {options.get('padding')} is not supported (SAME or VALID)")
    names = ["stride_h", "stride_w"] + (["dilation_h_factor", "dilation_w_factor"] if dilation
                                        else [])
    for name in names:
        value = options.get(name, 1)
        if not isinstance(value, int) or value < 1:
            reasons.append(f"{name} is {value}; it must be at least 1")
    activation = options.get("fused_activation_function", "NONE")
    if activation not in FUSED_ACTIVATIONS:
        reasons.append(f"fused activation {activation} is not supported "
                       f"({', '.join(FUSED_ACTIVATIONS)})")
    return reasons


def shape_reason(role: str, tensor: Tensor, expected: tuple[int, ...]) -> list[str]:
    if tuple(tensor.shape) != tuple(expected):
        return [f"{role} '{tensor.name}' has shape {tuple(tensor.shape)}, expected "
                f"{tuple(expected)}"]
    return []


def activation_reasons(role: str, tensor: Tensor, rank: int | None = None,
                       dtypes: tuple[str, ...] = ("int8",)) -> list[str]:
    """A run-time tensor of one of ``dtypes`` (int8 unless said) quantized per tensor, optionally
    of a given rank. int16 activations (16x8 quantization) must have zero point 0, as TFLM's
    int16 kernels require. A float32 one (where ``dtypes`` has it) is a float model's: not
    quantized."""
    reasons = []
    if tensor.dtype not in dtypes:
        reasons.append(f"{role} '{tensor.name}' is {tensor.dtype}; only "
                       f"{' or '.join(dtypes)} is supported")
    elif tensor.dtype == "float32":
        pass
    elif tensor.quant is None:
        reasons.append(f"{role} '{tensor.name}' is {tensor.dtype} but not quantized")
    elif tensor.dtype == "int16" and np.any(tensor.quant.zero_point != 0):
        reasons.append(f"{role} '{tensor.name}' is int16 with zero point "
                       f"{tensor.zero_point}; TFLM's int16 kernels need zero point 0")
    elif tensor.quant.per_channel:
        reasons.append(f"{role} '{tensor.name}' is quantized per channel; activations must be "
                       "quantized per tensor")
    elif not tensor.scale > 0:
        reasons.append(f"{role} '{tensor.name}' has scale {tensor.scale}; it must be positive")
    if rank is not None and len(tensor.shape) != rank:
        reasons.append(f"{role} '{tensor.name}' has rank {len(tensor.shape)} {tensor.shape}; "
                       f"expected rank {rank}")
    if any(d < 1 for d in tensor.shape):
        reasons.append(f"{role} '{tensor.name}' has an empty dimension {tensor.shape}")
    return reasons


def same_quantization(a: Tensor, b: Tensor) -> bool:
    """Equal scale and zero point: the raw int8 values mean the same real numbers."""
    return (a.quant is not None and b.quant is not None
            and np.float32(a.scale) == np.float32(b.scale) and a.zero_point == b.zero_point)


def operand_count_reasons(op: Operator, inputs: tuple[int, ...], outputs: int = 1) -> list[str]:
    """``inputs`` lists the allowed input counts."""
    reasons = []
    if len(op.inputs) not in inputs:
        allowed = " or ".join(str(n) for n in inputs)
        reasons.append(f"expects {allowed} inputs, has {len(op.inputs)}")
    if len(op.outputs) != outputs:
        reasons.append(f"expects {outputs} output(s), has {len(op.outputs)}")
    return reasons


def filter_reasons(filter_t: Tensor, channel_axis: int) -> list[str]:
    """A constant int8 filter quantized per tensor or per channel along ``channel_axis``, with
    zero points of 0 (TFLM ignores the filter zero point, so only symmetric filters are exact)."""
    reasons = []
    if not filter_t.is_constant:
        reasons.append(f"filter '{filter_t.name}' is not a constant tensor")
    if filter_t.dtype != "int8":
        reasons.append(f"filter '{filter_t.name}' is {filter_t.dtype}; only int8 is supported")
        return reasons
    q = filter_t.quant
    if q is None:
        reasons.append(f"filter '{filter_t.name}' is not quantized")
        return reasons
    channels = filter_t.shape[channel_axis] if len(filter_t.shape) > channel_axis else -1
    if q.per_channel and (q.axis != channel_axis or len(q.scale) != channels):
        reasons.append(f"filter '{filter_t.name}' has {len(q.scale)} scales on axis {q.axis}; "
                       f"per-channel filters need one per output channel ({channels}) on axis "
                       f"{channel_axis}")
    if np.any(np.asarray(q.zero_point) != 0):
        reasons.append(f"filter '{filter_t.name}' has non-zero zero points; TFLM requires "
                       "symmetric int8 filters")
    if not np.all(np.asarray(q.scale) > 0):
        reasons.append(f"filter '{filter_t.name}' has a scale that is not positive")
    return reasons


def bias_reasons(bias: Tensor | None, channels: int, dtype: str = "int32") -> list[str]:
    """A constant bias of ``dtype`` (int32; int64 with int16 activations), one per channel."""
    if bias is None:
        return []
    reasons = []
    if not bias.is_constant:
        reasons.append(f"bias '{bias.name}' is not a constant tensor")
    if bias.dtype != dtype:
        reasons.append(f"bias '{bias.name}' is {bias.dtype}; {dtype} is expected here")
    if bias.num_elements != channels:
        reasons.append(f"bias '{bias.name}' has {bias.num_elements} elements, expected one per "
                       f"output channel ({channels})")
    return reasons


def channel_multipliers(input_scale: float, filter_scales: np.ndarray, output_scale: float,
                        channels: int) -> tuple[list[int], list[int]]:
    """Per-output-channel (multiplier, shift) lists, as TFLM's PopulateConvolutionQuantizationParams
    computes them: input_scale * filter_scale / output_scale in double from the float32 scales. A
    per-tensor filter repeats its one scale for every channel."""
    scales = np.asarray(filter_scales, dtype=np.float64)
    multipliers, shifts = [], []
    for c in range(channels):
        filter_scale = float(np.float32(scales[c] if len(scales) > 1 else scales[0]))
        effective = float(np.float32(input_scale)) * filter_scale / float(np.float32(output_scale))
        m, s = quantize_multiplier(effective)
        multipliers.append(m)
        shifts.append(s)
    return multipliers, shifts


def int32_array(values: list[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int32)


def c_struct(fields: list[tuple[str, object]]) -> str:
    """A designated-initializer body ``{.a = 1, .b = {2, 3}}`` (C99) so the emitted parameters
    read by name."""
    parts = []
    for name, value in fields:
        if isinstance(value, (list, tuple)):
            value = "{" + ", ".join(str(int(v)) for v in value) + "}"
        parts.append(f".{name} = {value}")
    return "{" + ", ".join(parts) + "}"
