"""A depthwise convolution over a one-channel input is a convolution.

DEPTHWISE_CONV_2D with one input channel and depth multiplier M computes, for each output channel
m, the sum over the window of ``(x + input_offset) * w[0, i, j, m]`` plus ``bias[m]``, requantized
with channel m's multiplier and shift. That is CONV_2D with M output channels over the same
one-channel input, with the filter ``[M, kh, kw, 1]`` (the depthwise filter's axes 0 and 3
swapped) and the same bias, per-channel scales, padding, strides, dilation and activation. TFLM's
reference kernels of both sum the same int32 products and requantize them with the same
arithmetic, so the outputs are identical bit for bit.

Why rewrite it: speed. The fast depthwise variants walk blocks of channels and take depth
multiplier 1 only, so such a layer ran the reference kernel; TFLM's micro_speech model starts
with one (a 49x40 spectrogram, 1 -> 8 channels, 10x8 filter): 98 % of its instructions. The
convolution variants (im2col + SMLAD, Helium) take it.

Only int8: the 16x8 kernels accumulate in int64 with their own bias type, and nothing here needed
them.
"""

from __future__ import annotations

import copy

import numpy as np

from microbuild.model.ir import Graph, Operator, Quantization


def depthwise_single_channel_as_conv(graph: Graph) -> Graph:
    """Turn every int8 DEPTHWISE_CONV_2D over a one-channel input with a constant filter into
    the equivalent CONV_2D (see the module docstring); notes which."""
    rewritten = []
    operators = []
    for op in graph.operators:
        conv = _as_conv(graph, op)
        operators.append(conv if conv is not None else op)
        if conv is not None:
            rewritten.append(str(op.model_index))
    if not rewritten:
        return graph
    graph.notes.append(
        f"DEPTHWISE_CONV_2D op{'s' if len(rewritten) > 1 else ''} {', '.join(rewritten)} "
        "(one input channel, depth multiplier > 1) compiled as the equivalent CONV_2D, so the "
        "convolution's fast kernels take it")
    return graph.replace_operators(operators)


def _as_conv(graph: Graph, op: Operator) -> Operator | None:
    if op.opcode != "DEPTHWISE_CONV_2D" or len(op.inputs) < 2 or len(op.outputs) != 1 \
            or min(op.inputs[:2]) < 0:
        return None
    x, w, y = (graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]],
               graph.tensors[op.outputs[0]])
    if x.dtype != "int8" or w.dtype != "int8" or y.dtype != "int8" or not w.is_constant:
        return None
    if len(x.shape) != 4 or x.shape[3] != 1 or len(w.shape) != 4 or w.shape[0] != 1 \
            or len(y.shape) != 4 or w.shape[3] != y.shape[3] or w.shape[3] < 2:
        return None
    if w.quant is None or (w.quant.per_channel and (w.quant.axis != 3
                                                   or len(w.quant.scale) != w.shape[3])):
        return None
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias = graph.tensors[op.inputs[2]]
        if bias.dtype != "int32" or not bias.is_constant:
            return None
    filters = copy.copy(w)
    filters.index = len(graph.tensors)
    filters.name = f"{w.name} (as a CONV_2D filter)"
    filters.shape = (w.shape[3], w.shape[1], w.shape[2], 1)
    filters.data = np.ascontiguousarray(np.asarray(w.data).reshape(w.shape).transpose(3, 1, 2, 0))
    filters.shape_signature = None
    filters.quant = Quantization(scale=w.quant.scale, zero_point=w.quant.zero_point,
                                 axis=0 if w.quant.per_channel else w.quant.axis)
    graph.tensors.append(filters)
    conv = copy.copy(op)
    conv.opcode = "CONV_2D"
    conv.version = 1
    conv.inputs = [op.inputs[0], filters.index, *op.inputs[2:]]
    options = {key: op.options[key] for key in
               ("padding", "stride_w", "stride_h", "fused_activation_function",
                "dilation_w_factor", "dilation_h_factor") if key in op.options}
    conv.options = options
    return conv
