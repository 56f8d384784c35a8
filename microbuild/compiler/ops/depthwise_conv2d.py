"""DEPTHWISE_CONV_2D (int8 activations, int8 filters per channel or per tensor, optional int32
bias, any depth multiplier), bit-exact with TFLM's reference_integer_ops::DepthwiseConvPerChannel.

Like CONV_2D, the padding, per-channel multipliers and activation range are computed here; the
filter is [1, h, w, input_c * depth_multiplier] with per-channel scales on axis 3. The input
offset times each channel's filter sum is folded into an "interior" bias used for output pixels
whose window lies wholly inside the input (see ``runtime/include/microbuild/kernels/
depthwise_conv2d.h``).
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler.f32 import is_float32, spatial as spatial_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.conv_params import (
    checked_conv_operands,
    conv_fields,
    conv_window_overlap,
    emit_conv_params,
    emit_s16,
)
from microbuild.compiler.ops.conv2d import (
    dsp_layout,
    dsp_scratch_bytes,
    mve_layout,
    mve_requantize_fits,
    mve_scratch_bytes,
    with_mve_tables,
)
from microbuild.compiler.variants import KernelVariant, Refusal
from microbuild.compiler.spatial import (
    channel_multipliers,
    shape_reason,
    window_2d,
)
from microbuild.model.ir import Graph, Operator


def bias_and_interior_bias(op: Operator, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(bias, interior bias) per output channel as int64: the model's bias (zeros without one) and
    bias - input_zero_point * the sum of the channel's filter taps."""
    inputs = graph.input_tensors(op)
    x, w = inputs[0], inputs[1]
    out_c = w.shape[3]
    bias = np.zeros(out_c, dtype=np.int64)
    if len(inputs) > 2 and inputs[2] is not None:
        bias += inputs[2].data.astype(np.int64).reshape(-1)
    tap_sums = w.data.astype(np.int64).reshape(-1, out_c).sum(axis=0)
    return bias, bias - int(x.zero_point) * tap_sums


# ---- kernel variants (runtime/kernels/depthwise_conv2d_{portable,dsp,mve}.c) --------------------
def _plain(op: Operator, graph: Graph) -> bool | Refusal:
    """Depth multiplier 1: what every variant handles (the rest stays on the reference kernel;
    a one-channel input with a larger multiplier is a CONV_2D by then)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if len(x.shape) != 4 or len(w.shape) != 4:
        return Refusal("input or filter is not 4-D")
    if w.shape[3] != x.shape[3]:
        return Refusal(f"depth multiplier {w.shape[3] // max(x.shape[3], 1)}")
    return True


def _fast_requantize_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """The DSP and Helium variants requantize with a 32-bit rounding multiply-high (SMMULR /
    VQRDMULH) and a 32-bit rounding shift: exact when every accumulator, shifted left by its
    channel's left shift, stays below 2^28 in magnitude and no right shift exceeds 28. The
    bound per channel: the larger bias in magnitude plus taps * 128 * 255."""
    plain = _plain(op, graph)
    if not plain:
        return plain
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    out_c = w.shape[3]
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
    bias, interior = bias_and_interior_bias(op, graph)
    taps = int(w.shape[1]) * int(w.shape[2])
    for c in range(out_c):
        bound = max(abs(int(bias[c])), abs(int(interior[c]))) + taps * 128 * 255
        left, right = max(int(shifts[c]), 0), max(-int(shifts[c]), 0)
        if (bound << left) >= 1 << 28:
            return Refusal(f"channel {c}: the accumulator may reach {bound:,} (bias "
                           f"{int(bias[c]):,}), which shifted left by {left} is over the 2^28 "
                           "the 32-bit requantization allows")
        if right > 28:
            return Refusal(f"channel {c}: right shift {right} is over the 28 the 32-bit "
                           "requantization allows")
    return True


def _dsp_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """What the DSP variant adds to _fast_requantize_fits: no dilation; its taps are stored as
    int16 times 2^(left shift + 1), so no left shift exceeds 7, and it adds the output zero point
    times 2^(right shift + 1) before the final shift, which stays in int32 while no right shift
    exceeds 22 (see depthwise_conv2d_dsp.c)."""
    fits = _fast_requantize_fits(op, graph)
    if not fits:
        return fits
    o = op.options
    if o.get("dilation_h_factor", 1) != 1 or o.get("dilation_w_factor", 1) != 1:
        # Its band holds pairs of adjacent pixels for SMLAD; dilated taps are not adjacent.
        return Refusal(f"dilation {o.get('dilation_h_factor', 1)}x"
                       f"{o.get('dilation_w_factor', 1)}")
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, w.shape[3])
    for c, shift in enumerate(int(s) for s in shifts):
        if not -22 <= shift <= 7:
            return Refusal(f"channel {c}: shift {shift} is outside the -22..7 the int16 taps "
                           "and the folded zero point allow")
    return True


def mve_block_tables(op: Operator, graph: Graph, interior: np.ndarray,
                     bias: np.ndarray) -> np.ndarray:
    """The Helium variant's constants per block of 8 channels, laid out as its kernel reads them
    (depthwise_conv2d_mve.c, enum dw_table): the block's 2 accumulators hold the even and the
    odd channels, so each constant comes as 4 even then 4 odd lanes: interior biases, biases,
    multipliers, left shifts, -(right shift + 1) (mb_mve_split_shifts), then the activation
    bounds as 8 int16 lanes. 48 int32 per block; the last 1-7 channels have none."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    out_c = int(w.shape[3])
    multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
    shifts = np.asarray(shifts, dtype=np.int64)
    fields = dict(conv_fields(op, graph, True))
    bounds = [np.full(8, int(fields[name]), dtype=np.int16).view(np.int32).astype(np.int64)
              for name in ("activation_min", "activation_max")]
    per_channel = (np.asarray(interior, dtype=np.int64), np.asarray(bias, dtype=np.int64),
                   np.asarray(multipliers, dtype=np.int64), np.maximum(shifts, 0),
                   np.minimum(shifts, 0) - 1)
    blocks = []
    for c0 in range(0, out_c - 7, 8):
        for values in per_channel:
            blocks += [values[c0:c0 + 8:2], values[c0 + 1:c0 + 8:2]]
        blocks += bounds
    return np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.int64)


# ---- "mve_planar" (depthwise_conv2d_mve_planar.c): one channel at a time in a plane ------------


def _planar_axes(op: Operator, graph: Graph) -> dict[str, int]:
    """The plane the kernel builds (depthwise_conv2d_mve_planar.c plane_of, which this mirrors):
    v, the vectors' axis, is x when x has stride 1 and is at least as long as y (or y is
    strided), else y; the plane has `rows` rows of `pitch` bytes."""
    f = dict(conv_fields(op, graph, True))
    along_x = f["stride_w"] == 1 and (f["output_w"] >= f["output_h"] or f["stride_h"] != 1)
    x_axis = dict(out_u=f["output_h"], out_v=f["output_w"], ku=f["filter_h"], kv=f["filter_w"],
                  stride_u=f["stride_h"], stride_v=f["stride_w"], dil_u=f["dilation_h"],
                  dil_v=f["dilation_w"], in_step_v=f["input_c"],
                  out_step_v=f["input_c"])
    y_axis = dict(out_u=f["output_w"], out_v=f["output_h"], ku=f["filter_w"], kv=f["filter_h"],
                  stride_u=f["stride_w"], stride_v=f["stride_h"], dil_u=f["dilation_w"],
                  dil_v=f["dilation_h"], in_step_v=f["input_w"] * f["input_c"],
                  out_step_v=f["output_w"] * f["input_c"])
    g = x_axis if along_x else y_axis
    g["rows"] = (g["out_u"] - 1) * g["stride_u"] + (g["ku"] - 1) * g["dil_u"] + 1
    # Flat: the outputs walked as one sequence of blocks of 8 (stride 1 across rows, every
    # output offset of an image in 16 bits); else row by row, each row whole blocks of 8.
    g["flat"] = g["stride_u"] == 1 and f["output_h"] * f["output_w"] * f["input_c"] <= 0x10000
    if g["flat"]:
        g["pitch"] = g["out_v"] + (g["kv"] - 1) * g["dil_v"]
        blocks = -(-((g["out_u"] - 1) * g["pitch"] + g["out_v"]) // 8)
        # The store table covers one period: the lanes' columns repeat every
        # pitch / gcd(pitch, 8) blocks.
        g["table_blocks"] = min(blocks, g["pitch"] // math.gcd(g["pitch"], 8))
    else:
        g["pitch"] = -(-g["out_v"] // 8) * 8 + (g["kv"] - 1) * g["dil_v"]
        g["table_blocks"] = 0
    return g


def _planar_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """_fast_requantize_fits; a 3x3 filter with stride 1 and no dilation along x or y (the
    vectors' axis); 16-bit gather and scatter offsets (7 pixels along that axis within 65,535
    bytes); and at least 8 outputs along it (shorter rows waste most of each block of 8)."""
    fits = _fast_requantize_fits(op, graph)
    if not fits:
        return fits
    o = op.options
    if o.get("stride_w", 1) != 1 and o.get("stride_h", 1) != 1:
        return Refusal(f"stride {o.get('stride_h', 1)}x{o.get('stride_w', 1)}: neither axis has "
                       "stride 1")
    g = _planar_axes(op, graph)
    if (g["ku"], g["kv"], g["dil_v"]) != (3, 3, 1):
        return Refusal(f"a {g['ku']}x{g['kv']} filter, dilation {g['dil_v']} along the vectors' "
                       "axis (3x3 without dilation along it)")
    if 7 * max(g["in_step_v"], g["out_step_v"]) > 0xFFFF:
        return Refusal(f"pixels {max(g['in_step_v'], g['out_step_v'])} bytes apart along the "
                       "vectors' axis: over the 16-bit gather offsets")
    if g["out_v"] < 8:
        return Refusal(f"{g['out_v']} outputs along the longer axis of stride 1, under 8")
    return True


def _planar_scratch(op: Operator, graph: Graph) -> int:
    """The flat walk's store table (16 bytes of output offsets and a 2-byte predicate per block
    of 8 outputs of one period, rounded up to 4), then the plane, rows x pitch bytes and 8 of
    slack (_planar_axes; the kernel's mb_depthwise_conv2d_s8_mve_planar lays it out so)."""
    g = _planar_axes(op, graph)
    return (18 * g["table_blocks"] + 3) // 4 * 4 + g["rows"] * g["pitch"] + 8


# ---- "mve_temporal" (depthwise_conv2d_mve_temporal.c): 1-D time convolutions ------------------

_TEMPORAL_TAPS = 16  # one VMLADAV.S8 per output


def _temporal_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """_fast_requantize_fits; input and output one pixel wide, an H x 1 filter of at most 16
    taps without dilation (one 16-byte dot product per output)."""
    fits = _fast_requantize_fits(op, graph)
    if not fits:
        return fits
    f = dict(conv_fields(op, graph, True))
    if (f["input_w"], f["output_w"], f["filter_w"]) != (1, 1, 1):
        return Refusal(f"input {f['input_w']}, output {f['output_w']} and filter "
                       f"{f['filter_w']} pixels wide (a time convolution has 1, 1, 1)")
    if f["filter_h"] > _TEMPORAL_TAPS:
        return Refusal(f"{f['filter_h']} taps, over the {_TEMPORAL_TAPS} of one dot product")
    if f["dilation_h"] != 1:
        return Refusal(f"dilation {f['dilation_h']} along time")
    return True


def _temporal_scratch(op: Operator, graph: Graph) -> int:
    """The plane of 16 channel rows, each the input times the windows reach (pitch), and the
    slack the last rows' dot products read past it: a 4-time block's last 3 times and 16 bytes
    (depthwise_conv2d_mve_temporal.c plane_pitch)."""
    f = dict(conv_fields(op, graph, True))
    pitch = (f["output_h"] - 1) * f["stride_h"] + f["filter_h"]
    return 16 * pitch + 3 * f["stride_h"] + 16


def _temporal_table(op: Operator, graph: Graph, interior: np.ndarray) -> np.ndarray:
    """Per channel, what depthwise_conv2d_mve_temporal.c reads after the interior biases:
    interior bias, multiplier, left shift, minus the right shift (one pointer walks them; with
    three arrays and the shifts split per channel GCC spilled around every channel)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[3]))
    shifts = np.asarray(shifts, dtype=np.int64)
    return np.stack([np.asarray(interior, dtype=np.int64),
                     np.asarray(multipliers, dtype=np.int64),
                     np.maximum(shifts, 0), np.minimum(shifts, 0)], axis=1).reshape(-1)


def _arrange_temporal(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """[1, h, 1, channels] as [channels][16]: channel c's taps in time order, then zeros."""
    taps = weights.reshape(weights.shape[1], weights.shape[3]).T
    out = np.zeros((taps.shape[0], _TEMPORAL_TAPS), dtype=np.int8)
    out[:, :taps.shape[1]] = taps
    return out.reshape(-1)


def _dsp_scratch(op: Operator, graph: Graph) -> int:
    """48 bytes of row description, the block's constants (16 bytes of biases, 16 per filter
    tap, 48 of requantization), a row pointer per filter row and the band:
    filter_h rows of at most one 16-byte entry per padded input pixel, and when the depth leaves
    2 or 3 channels after its blocks of 4 the tail block's output row as 4-byte pixels (see
    depthwise_conv2d_dsp.c; a lone last channel takes the path without scratch)."""
    w, out = graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    kh, kw = int(w.shape[1]), int(w.shape[2])
    out_w = int(out.shape[2])
    padded_w = (out_w - 1) * int(op.options.get("stride_w", 1)) + kw
    tail_row = 4 * out_w if int(w.shape[3]) % 4 >= 2 else 0
    return 48 + 16 + 16 * kh * kw + 48 + 4 * kh + 16 * kh * padded_w + tail_row


def _s16_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """16x8: at most 511 taps per window (int32 sums exact) and no channel's shift over 14 (the
    int64 requantization's right shift, 15 - shift, at least 1)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if len(w.shape) != 4:
        return Refusal("the filter is not 4-D")
    taps = int(w.shape[1]) * int(w.shape[2])
    if taps > 511:
        return Refusal(f"{taps} taps per window, over the 511 an int32 sum holds exactly")
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[3]))
    if max(int(s) for s in shifts) > 14:
        return Refusal(f"a channel's shift is {max(int(s) for s in shifts)}, over 14")
    return True


# A depth multiplier above 1 on a few input channels runs as the CONV_2D it equals, on the
# filter made dense: input_c times the multiply-accumulates, which the CONV_2D kernels' 2- and
# 16-lane dot products still do several times faster than the reference's one tap at a time
# (dw_3x3_same_s2_m3_pc, dw_3x3_dil2_same_m2_pc). Beyond 4 input channels the waste grows.
_MAX_DENSE_CHANNELS = 4


def _as_dense(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """The filter [1, h, w, output_c] as a CONV_2D's [output_c, h, w, input_c]: output channel
    o's taps at input channel o / depth_multiplier, zeros at the others."""
    in_c = int(graph.tensor(op.inputs[0]).shape[3])
    _, h, w, out_c = weights.shape
    multiplier = out_c // in_c
    dense = np.zeros((out_c, h, w, in_c), dtype=weights.dtype)
    for o in range(out_c):
        dense[o, :, :, o // multiplier] = weights[0, :, :, o]
    return dense


def _dense_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """A depth multiplier above 1 on at most 4 input channels, every value before
    requantization below 2^30 in magnitude (the CONV_2D kernels' bound, conv2d.py _plain)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if len(x.shape) != 4 or len(w.shape) != 4:
        return Refusal("input or filter is not 4-D")
    in_c, out_c = int(x.shape[3]), int(w.shape[3])
    if out_c == in_c:
        return Refusal("depth multiplier 1 (the depthwise kernels take it)")
    if in_c > _MAX_DENSE_CHANNELS:
        return Refusal(f"{in_c} input channels: made dense, the filter would take {in_c}x the "
                       f"multiply-accumulates (up to {_MAX_DENSE_CHANNELS})")
    for c, bound in enumerate(_dense_bounds(op, graph)):
        if bound >= 1 << 30:
            return Refusal(f"channel {c}: |sum(filter x column) + bias| may reach {bound:,}, "
                           "over the 2^30 the CONV_2D kernels' requantization allows")
    return True


def _dense_bounds(op: Operator, graph: Graph) -> list[int]:
    """Per output channel, the largest |sum(filter * column) + interior bias| (column values
    are int8: the input, or its zero point in the padding)."""
    w = graph.tensor(op.inputs[1])
    _, interior = bias_and_interior_bias(op, graph)
    taps = np.abs(w.data.astype(np.int64)).reshape(-1, w.shape[3]).sum(axis=0)
    return [int(t) * 128 + abs(int(i)) for t, i in zip(taps, interior)]


def _mve_dense_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """_dense_fits, and the 4-lane requantization's bounds (conv2d.py _mve_fits): every value
    shifted left by its channel's left shift below 2^30, no right shift over 28."""
    fits = _dense_fits(op, graph)
    if not fits:
        return fits
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[3]))
    return mve_requantize_fits(_dense_bounds(op, graph), shifts)


def _dense_taps(op: Operator, graph: Graph) -> int:
    w = graph.tensor(op.inputs[1])
    return int(w.shape[1] * w.shape[2]) * int(graph.tensor(op.inputs[0]).shape[3])


def _dense_dsp_scratch(op: Operator, graph: Graph) -> int:
    """conv2d_dsp.c's scratch for the dense filter (conv2d.py dsp_scratch_bytes)."""
    return dsp_scratch_bytes(int(graph.tensor(op.inputs[1]).shape[3]), _dense_taps(op, graph),
                             int(graph.tensor(op.inputs[0]).shape[3]), residual=False)


def _dense_mve_scratch(op: Operator, graph: Graph) -> int:
    """conv2d_mve.c's scratch for the dense filter (conv2d.py mve_scratch_bytes)."""
    w = graph.tensor(op.inputs[1])
    return mve_scratch_bytes(int(w.shape[3]), _dense_taps(op, graph),
                             w.shape[1] == 1 and w.shape[2] == 1, residual=False)


def _s16_scratch(op: Operator, graph: Graph) -> int:
    """16 bytes of requantization constants per output channel."""
    return 16 * int(graph.tensor(op.inputs[1]).shape[3])


VARIANTS = (
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="portable",
        function="mb_depthwise_conv2d_s8_portable", sources=("depthwise_conv2d_portable.c",),
        rank=10, accepts=_plain,
        overlap_group=1,
        description="channels innermost, 4 int32 accumulators per block, interior pixels "
                    "without bounds checks; any CPU"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="dsp",
        function="mb_depthwise_conv2d_s8_dsp", sources=("depthwise_conv2d_dsp.c",),
        features=frozenset({"dsp"}), rank=20, accepts=_dsp_fits, scratch=_dsp_scratch,
        overlap_group=1, overlap_whole_pixels=True,
        description="blocks of 4 channels outermost, input rows widened once into int16 pairs "
                    "of adjacent pixels, SMLAD on two taps (3x3: an assembly row loop), SMMULR "
                    "requantization"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="mve",
        function="mb_depthwise_conv2d_s8_mve", sources=("depthwise_conv2d_mve.c",),
        features=frozenset({"mve"}), rank=30, accepts=_fast_requantize_fits,
        overlap_group=1, overlap_whole_pixels=True,
        description="Helium: blocks of 8 channels outermost (constants once per block), int16 "
                    "lanes from widening byte loads, VMULLB/VMULLT, tail-predicated, VQRDMULH "
                    "requantization"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="mve_planar",
        function="mb_depthwise_conv2d_s8_mve_planar",
        sources=("depthwise_conv2d_mve_planar.c",), features=frozenset({"mve"}), rank=31,
        accepts=_planar_fits, scratch=_planar_scratch, overlap_group=1,
        overlap_whole_pixels=True,
        description="Helium: one channel at a time gathered into a zero-point-padded plane, "
                    "lanes along an axis of stride 1, VMLA by each tap's scalar, scatter "
                    "stores"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="mve_temporal",
        function="mb_depthwise_conv2d_s8_mve_temporal",
        sources=("depthwise_conv2d_mve_temporal.c",), features=frozenset({"mve"}), rank=32,
        accepts=_temporal_fits, scratch=_temporal_scratch, arrange=_arrange_temporal,
        overlap_group=1, overlap_whole_pixels=True,
        description="Helium, 1-D time convolutions (1 pixel wide, H x 1 filter of up to 16 "
                    "taps): 16 channels transposed into rows, one VMLADAV.S8 per output, 4 "
                    "times requantized together, scatter stores"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="dsp_dense",
        function="mb_depthwise_conv2d_s8_dense_dsp",
        sources=("depthwise_conv2d_dense.c", "conv2d_dsp.c"), features=frozenset({"dsp"}),
        rank=20, accepts=_dense_fits, scratch=_dense_dsp_scratch,
        arrange=lambda weights, op, graph: dsp_layout(_as_dense(weights, op, graph)),
        description="Arm DSP, depth multiplier above 1 on up to 4 input channels: CONV_2D's dsp "
                    "kernel on the filter made dense (input_c times its flash)"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="mve_dense",
        function="mb_depthwise_conv2d_s8_dense_mve",
        sources=("depthwise_conv2d_dense.c", "conv2d_mve.c"), features=frozenset({"mve"}),
        rank=30, accepts=_mve_dense_fits, scratch=_dense_mve_scratch,
        arrange=lambda weights, op, graph: mve_layout(_as_dense(weights, op, graph)),
        description="Helium, depth multiplier above 1 on up to 4 input channels: CONV_2D's mve "
                    "kernel on the filter made dense (input_c times its flash)"),
    KernelVariant(
        opcode="DEPTHWISE_CONV_2D", name="fast_s16",
        function="mb_depthwise_conv2d_s16_fast", sources=("depthwise_conv2d_s16_fast.c",),
        rank=10, accepts=_s16_fits, scratch=_s16_scratch, activation_dtype="int16",
        overlap_group=1,
        description="16x8, portable: windows clipped once per pixel, int32 sums, "
                    "requantization constants once per call (one 32x32->64 multiply a value)"),
)


@register
class DepthwiseConv2D(OpLowering):
    opcode = "DEPTHWISE_CONV_2D"
    kernel_sources = ("depthwise_conv2d.c", "conv2d_s16.c")
    float32_sources = spatial_f32.KERNEL_SOURCES
    dtypes = frozenset({"int8", "int16", "float32"})
    headers = ("microbuild/kernels/depthwise_conv2d.h", spatial_f32.HEADER)
    variants = VARIANTS

    def overlap(self, op: Operator, graph: Graph, k: int, variant=None):
        """The reference and portable kernels walk output pixels in order; the DSP and Helium
        kernels walk them once per block of 4 / 8 channels, so their output must start a whole
        number of pixels below the input (microbuild/compiler/overlap.py)."""
        return conv_window_overlap(op, graph, k, variant)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons, operands = checked_conv_operands(op, graph, depthwise=True)
        if operands is None:
            return reasons
        x, w, bias, out = operands
        _, filter_h, filter_w, out_c = w.shape
        batches, in_h, in_w, in_c = x.shape
        if out_c % in_c != 0:
            reasons.append(f"filter has {out_c} channels, not a multiple of the input's {in_c}")
            return reasons
        # TFLM loops over the option's depth_multiplier, assuming it matches the shapes; a model
        # where it does not has no well-defined TFLM result.
        multiplier = op.options.get("depth_multiplier", out_c // in_c)
        if multiplier != out_c // in_c:
            reasons.append(f"depth_multiplier option is {multiplier} but the shapes say "
                           f"{out_c // in_c} ({out_c} output / {in_c} input channels)")
        win = window_2d(op.options, in_h, in_w, filter_h, filter_w)
        reasons += shape_reason("output", out, (batches, win.out_h, win.out_w, out_c))
        if reasons or x.dtype == "int16":
            return reasons  # 16x8: TFLM's int64 accumulator cannot overflow here
        # Every partial sum, from either bias, must stay in int32 as TFLM's accumulator does.
        bias, interior = bias_and_interior_bias(op, graph)
        worst = (max(int(np.abs(bias).max()), int(np.abs(interior).max()))
                 + filter_h * filter_w * 128 * 255)
        if worst >= 1 << 31:
            reasons.append("the bias and filter sums could overflow the int32 accumulator")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return spatial_f32.emit(op, graph, ctx)
        if graph.tensor(op.inputs[0]).dtype == "int16":
            return emit_s16(self, op, graph, ctx, "mb_depthwise_conv2d_s16",
                            "mb_depthwise_conv2d_s8_params", depthwise=True)
        inputs = graph.input_tensors(op)
        has_bias = len(inputs) > 2 and inputs[2] is not None
        zero_bias, interior_bias = bias_and_interior_bias(op, graph)
        params, mult, shift = emit_conv_params(op, graph, ctx, "mb_depthwise_conv2d_s8_params",
                                               depthwise=True)
        bias = (ctx.ptr(op.inputs[2]) if has_bias
                else ctx.const_array(ctx.symbol("bias"), zero_bias.astype(np.int32), "int32_t"))
        interior_values = interior_bias
        variant = getattr(ctx, "variant", None)
        if variant is not None and variant.name == "mve_dense":
            # conv2d_mve.c's per-block tables after the interior biases (conv2d.py).
            x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
            out = graph.tensor(op.outputs[0])
            multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale,
                                                      int(w.shape[3]))
            interior_values = with_mve_tables(interior_bias, multipliers, shifts)
        if variant is not None and variant.name == "mve":
            # The Helium kernel finds its block tables after the interior biases, padded to a
            # whole vector (so a 16-byte aligned array gives 16-byte aligned tables).
            pad = np.zeros(-len(interior_bias) % 4, dtype=np.int64)
            interior_values = np.concatenate([
                interior_bias, pad, mve_block_tables(op, graph, interior_bias, zero_bias)])
        if variant is not None and variant.name == "mve_temporal":
            interior_values = np.concatenate([interior_bias,
                                              _temporal_table(op, graph, interior_bias)])
        interior = ctx.const_array(ctx.symbol("interior_bias"), interior_values.astype(np.int32),
                                   "int32_t")
        # A variant that arranges the weights gets its own array (kernel_call): do not emit the
        # original as well.
        weights = (ctx.ptr(op.inputs[1]) if variant is None or variant.arrange is None
                   else "(const int8_t *)0")
        return self.kernel_call(op, graph, ctx, "mb_depthwise_conv2d_s8", [
            f"&{params}", ctx.ptr(op.inputs[0]), weights, bias, interior, mult,
            shift, ctx.ptr(op.outputs[0])], weights=2)
