"""Pruned channels: a convolution output channel whose filter is all zeros outputs a constant.

Trained and pruned models (MobileNet VWW, ResNet-8-large from MLPerf Tiny) carry such channels
with a bias of exactly +-2^30: the channel's output is just its requantized bias, saturated. The
accumulator of that channel is the bias whatever the input (every product is 0), so any other bias
that requantizes (with the channel's multiplier, shift, output zero point and activation clamp) to
the same int8 value gives the same output, bit for bit, in TFLM's arithmetic and ours.

``shrink_pruned_channel_biases`` replaces each such bias by the equivalent value nearest zero.
Nothing changes numerically; what changes is that the fast kernel variants, whose exact
requantization needs every pre-requantization value below 2^30 in magnitude, no longer see one
huge bias and refuse the whole layer (the reference kernel was taking 82 % of a model's time).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.quant import activation_range_int8, multiply_by_quantized_multiplier
from microbuild.compiler.spatial import channel_multipliers
from microbuild.model.ir import Graph, Operator

INT32_MAX = (1 << 31) - 1

# opcode -> the filter's output-channel axis (CONV_2D: OHWI; DEPTHWISE_CONV_2D: 1HW(I*M)).
_CHANNEL_AXIS = {"CONV_2D": 0, "DEPTHWISE_CONV_2D": 3}


def shrink_pruned_channel_biases(graph: Graph) -> Graph:
    """Give every all-zero-filter channel of an int8 CONV_2D / DEPTHWISE_CONV_2D the smallest
    bias with the same output (see the module docstring); notes how many changed."""
    readers: dict[int, int] = {}
    for op in graph.operators:
        for t in op.inputs:
            readers[t] = readers.get(t, 0) + 1
    changed_ops = changed_channels = 0
    for op in graph.operators:
        bias = _pruned_channel_bias(op, graph, readers)
        if bias is None:
            continue
        tensor = graph.tensor(op.inputs[2])
        changed = int(np.count_nonzero(bias != tensor.data.reshape(-1)))
        if changed:
            # A new array: the tensor's data may be shared with the graph read from the file.
            tensor.data = bias.reshape(tensor.data.shape)
            changed_ops += 1
            changed_channels += changed
    if changed_channels:
        graph.notes.append(
            f"{changed_channels} pruned channel(s) (all-zero filter) in {changed_ops} "
            "operator(s): bias replaced by the smallest value with the same output, so fast "
            "kernels can take those layers")
    return graph


def _pruned_channel_bias(op: Operator, graph: Graph, readers: dict[int, int]) -> np.ndarray | None:
    """The op's bias with its zero-filter channels' entries shrunk, or None when the op is not
    an int8 convolution with a constant, unshared int32 bias and per-channel parameters."""
    axis = _CHANNEL_AXIS.get(op.opcode)
    if axis is None or len(op.inputs) < 3 or min(op.inputs[:3]) < 0 or len(op.outputs) != 1:
        return None
    x, w, b = (graph.tensor(t) for t in op.inputs[:3])
    out = graph.tensor(op.outputs[0])
    if (x.dtype, w.dtype, b.dtype, out.dtype) != ("int8", "int8", "int32", "int8"):
        return None
    if w.data is None or b.data is None or readers.get(op.inputs[2], 0) != 1:
        return None
    if x.quant is None or w.quant is None or out.quant is None or len(w.shape) != 4:
        return None
    channels = w.shape[axis]
    bias = b.data.reshape(-1).astype(np.int64)
    if bias.size != channels:
        return None
    zero = ~np.any(np.moveaxis(w.data.reshape(w.shape), axis, 0).reshape(channels, -1), axis=1)
    if not zero.any():
        return None
    low, high = activation_range_int8(str(op.options.get("fused_activation_function", "NONE")),
                                      out.scale, out.zero_point)
    multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, channels)
    shrunk = bias.copy()
    for c in np.flatnonzero(zero):
        shrunk[c] = _nearest_equivalent(int(bias[c]), multipliers[c], shifts[c],
                                        out.zero_point, low, high)
    return shrunk.astype(np.int32)


def _nearest_equivalent(bias: int, multiplier: int, shift: int, zero_point: int, low: int,
                        high: int) -> int:
    """The value nearest 0 whose output (requantized, offset, clamped) equals ``bias``'s."""

    def output(acc: int) -> int:
        return min(high, max(low, multiply_by_quantized_multiplier(acc, multiplier, shift)
                             + zero_point))

    if shift > 0:
        # TFLM shifts the accumulator left in int32 first: a bias for which that wraps is left
        # exactly as it is (between it and 0 nothing wraps, so the search below is monotonic).
        if abs(bias) > INT32_MAX >> shift:
            return bias
    want = output(bias)
    if output(0) == want:
        return 0
    # output() never decreases as the accumulator grows: search between 0 and the bias for the
    # first value (from 0's side) that gives the same output.
    if bias > 0:
        lo, hi = 0, bias  # output(lo) < want == output(hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if output(mid) >= want:
                hi = mid
            else:
                lo = mid
        return hi
    lo, hi = bias, 0  # output(lo) == want < output(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if output(mid) <= want:
            lo = mid
        else:
            hi = mid
    return lo
