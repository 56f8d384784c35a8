"""CONV_2D (int8 activations, int8 filters per channel or per tensor, optional int32 bias),
bit-exact with TFLM's reference_integer_ops::ConvPerChannel.

Everything but the multiply-accumulate is settled here: the SAME padding TFLite would compute,
one Q31 multiplier and shift per output channel (TFLM expands a per-tensor filter scale to every
channel, and so do we), and the fused activation's clamp range.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.fusion import RESIDUAL_ADD
from microbuild.compiler.f32 import is_float32, spatial as spatial_f32
from microbuild.compiler.f32 import mve as f32_mve
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.conv_params import (
    checked_conv_operands,
    conv_window_overlap,
    emit_conv_params,
    emit_s16,
)
from microbuild.compiler.variants import KernelVariant, Refusal
from microbuild.compiler.spatial import (
    channel_multipliers,
    shape_reason,
    window_2d,
)
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator


# ---- kernel variants (runtime/kernels/conv2d_*.c) -------------------------------------------------
# Each computes every output pixel as sum(filter * column) + interior_bias over an im2col column in
# which taps in the padding hold the input zero point (so they add nothing), on a filter arranged
# here at compile time. A grouped convolution of a few groups runs the same kernels on its filter
# made dense (_dense_filter): every channel's row spans the whole input depth, zero outside its
# group, so the kernels (which read the input's depth, never filter_c) see a one-group
# convolution with the same int32 sums.
def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def _groups(op: Operator, graph: Graph) -> int:
    return int(graph.tensor(op.inputs[0]).shape[3] // graph.tensor(op.inputs[1]).shape[3])


def _dense_filter(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """The filter [output_c, h, w, filter_c] as [output_c, h, w, input_c]: channel c's taps at
    its group's depths, zeros at the other groups' (the same array for one group)."""
    groups = _groups(op, graph)
    if groups == 1:
        return weights
    oc, fh, fw, fc = weights.shape
    dense = np.zeros((oc, fh, fw, fc * groups), dtype=weights.dtype)
    per_group = oc // groups
    for c in range(oc):
        g = c // per_group
        dense[c, :, :, g * fc:(g + 1) * fc] = weights[c]
    return dense


def _dims(op: Operator, graph: Graph) -> tuple[int, int, int]:
    """(output channels, taps per output = filter_h * filter_w * input depth, output pixels):
    the dense filter's taps (_dense_filter) for a grouped convolution."""
    w = graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    depth = int(graph.tensor(op.inputs[0]).shape[3])
    return int(w.shape[0]), int(w.shape[1] * w.shape[2]) * depth, int(np.prod(out.shape[:3]))


def _value_bound(op: Operator, graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """(bias, bound) per output channel: bound is the largest |sum(filter * column) +
    interior_bias| any pixel can reach."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    flat = w.data.reshape(w.shape[0], -1).astype(np.int64)
    bias = (graph.tensor(op.inputs[2]).data.astype(np.int64)
            if len(op.inputs) > 2 and op.inputs[2] >= 0 else np.zeros(w.shape[0], np.int64))
    interior = bias + (-x.zero_point) * flat.sum(axis=1)
    # Column values (the input, or the zero point in the padding) are int8: |value| <= 128.
    return bias, np.abs(flat).sum(axis=1) * 128 + np.abs(interior)


# A grouped convolution made dense multiplies its filter's flash and its multiply-accumulates by
# the number of groups; up to 4, the dense int8 dot products (16 a Helium instruction, 4 a DSP
# pair of SMLADs) still beat the per-group kernel several times over (conv_3x3_same_groups3_pc).
_MAX_DENSE_GROUPS = 4


def _plain(op: Operator, graph: Graph) -> bool | Refusal:
    """What every variant handles: one group (any dilation: the im2col column gathers the
    dilated taps), and every value before
    requantization (sum(filter * column) + interior_bias) below 2^30 in magnitude, so the kernels
    may double it (their requantization takes 2x)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if not (len(w.shape) == 4 and w.data is not None):
        return Refusal("the filter is not a constant 4-D tensor")
    if x.shape[3] != w.shape[3]:
        return Refusal(f"grouped convolution ({x.shape[3] // w.shape[3]} groups)")
    return _sums_bounded(op, graph)


def _few_groups(op: Operator, graph: Graph) -> bool | Refusal:
    """A grouped convolution of 2 to 4 groups (made dense: _dense_filter), every value before
    requantization below 2^30 in magnitude."""
    w = graph.tensor(op.inputs[1])
    if not (len(w.shape) == 4 and w.data is not None):
        return Refusal("the filter is not a constant 4-D tensor")
    groups = _groups(op, graph)
    if groups == 1:
        return Refusal("one group")
    if groups > _MAX_DENSE_GROUPS:
        return Refusal(f"{groups} groups: made dense, the filter would take {groups}x its "
                       f"flash and multiply-accumulates (up to {_MAX_DENSE_GROUPS} groups)")
    return _sums_bounded(op, graph)


def _sums_bounded(op: Operator, graph: Graph) -> bool | Refusal:
    """Every value before requantization below 2^30 in magnitude."""
    bias, bound = _value_bound(op, graph)
    if bound.max() >= (1 << 30):
        c = int(bound.argmax())
        return Refusal(f"channel {c}: |sum(filter x column) + bias| may reach {int(bound[c]):,} "
                       f"(bias {int(bias[c]):,}), over the 2^30 the variants' requantization "
                       f"allows ({int(np.count_nonzero(bound >= (1 << 30)))} channel(s) over)")
    return True


def _is_direct(op: Operator, graph: Graph, kp: int) -> bool:
    """A 1x1 filter whose padded depth is the depth: the kernels read pixels in place."""
    w = graph.tensor(op.inputs[1])
    return w.shape[1] == 1 and w.shape[2] == 1 and kp == graph.tensor(op.inputs[0]).shape[3]


def _padded_rows(weights: np.ndarray, rows: int, taps: int) -> np.ndarray:
    """The filter as [rows, taps] int8, zero rows and zero taps appended."""
    flat = weights.reshape(weights.shape[0], -1).astype(np.int8)
    out = np.zeros((rows, taps), dtype=np.int8)
    out[:flat.shape[0], :flat.shape[1]] = flat
    return out


_GEMM_CB, _GEMM_CHUNK = 4, 16


def _arrange_gemm(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """conv2d_gemm.c's layout: channel blocks of 4, each chunk by chunk (16 taps, the last one
    4, 8 or 12), the block's 4 rows of that chunk one after the other."""
    oc, k, _ = _dims(op, graph)
    kp = _round_up(k, 4)
    rows = _padded_rows(_dense_filter(weights, op, graph), _round_up(oc, _GEMM_CB), kp)
    parts = []
    for c0 in range(0, rows.shape[0], _GEMM_CB):
        block = rows[c0:c0 + _GEMM_CB]
        for k0 in range(0, kp, _GEMM_CHUNK):
            parts.append(block[:, k0:k0 + _GEMM_CHUNK].reshape(-1))
    return np.concatenate(parts)


def _scratch_gemm(op: Operator, graph: Graph) -> int:
    _, k, _ = _dims(op, graph)
    kp = _round_up(k, 4)
    return 0 if _is_direct(op, graph, kp) else 2 * kp


_DSP_CB = 2
_RESIDUAL_TABLES = 2 * 256 * 4  # conv2d_dsp.c: the fused ADD's two rescaling tables (int32)


def dsp_layout(dense: np.ndarray) -> np.ndarray:
    """conv2d_dsp.c's layout of a one-group filter [output_c, h, w, input_c]: channel pairs,
    each group of 4 taps by group: the first channel's 4 taps, then the second's (one 8-byte
    load feeds both)."""
    oc, k = int(dense.shape[0]), int(np.prod(dense.shape[1:]))
    kp = _round_up(k, 4)
    rows = _padded_rows(dense, _round_up(oc, _DSP_CB), kp)
    blocks = rows.reshape(-1, _DSP_CB, kp // 4, 4).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks).reshape(-1)


def _arrange_dsp(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    return dsp_layout(_dense_filter(weights, op, graph))


def _arrange_dsp16(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """dsp16's layout: dsp's, widened to int16, each group's taps in the order 0, 2, 1, 3 (the
    words SMLAD pairs with the columns' (x0, x2) and (x1, x3))."""
    groups = _arrange_dsp(weights, op, graph).reshape(-1, 4)
    return np.ascontiguousarray(groups[:, [0, 2, 1, 3]]).astype(np.int16).reshape(-1)


def dsp_scratch_bytes(oc: int, k: int, depth: int, residual: bool) -> int:
    """The 2 pixels' int16 columns, a dummy output row (the second pixel of an odd last pair),
    an int8 staging column when the depth is not a multiple of 4, 16 bytes of requantization
    constants per channel, and the residual ADD's tables when an ADD is fused."""
    kp = _round_up(k, 4)
    return (2 * kp * 2 + _round_up(oc, 4) + (kp if depth % 4 else 0) + 16 * oc
            + (_RESIDUAL_TABLES if residual else 0))


def _scratch_dsp(op: Operator, graph: Graph) -> int:
    oc, k, _ = _dims(op, graph)
    return dsp_scratch_bytes(oc, k, int(graph.tensor(op.inputs[0]).shape[3]),
                             bool(op.options.get(RESIDUAL_ADD)))


_MVE_CB, _MVE_CHUNK = 4, 16


def mve_layout(dense: np.ndarray) -> np.ndarray:
    """conv2d_mve.c's layout of a one-group filter [output_c, h, w, input_c]: rows padded with
    zeros to a multiple of 16 taps and of 4 channels; per block of 4 channels, chunk by chunk
    (16 taps), the 4 rows' chunk one after the other."""
    oc, k = int(dense.shape[0]), int(np.prod(dense.shape[1:]))
    kp = _round_up(k, _MVE_CHUNK)
    rows = _padded_rows(dense, _round_up(oc, _MVE_CB), kp)
    blocks = rows.reshape(-1, _MVE_CB, kp // _MVE_CHUNK, _MVE_CHUNK).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(blocks).reshape(-1)


def _arrange_mve(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    return mve_layout(_dense_filter(weights, op, graph))


def _mve_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """What the Helium variant adds to _plain: its 4-lane requantization
    (runtime/include/microbuild/kernels/requantize_mve.h) needs every value before
    requantization, shifted left by its channel's left shift, below 2^30 in magnitude and no
    right shift over 28."""
    plain = _plain(op, graph)
    return plain if not plain else _mve_bounds(op, graph)


def _mve_few_groups(op: Operator, graph: Graph) -> bool | Refusal:
    """_few_groups and the 4-lane requantization's bounds (_mve_fits)."""
    few = _few_groups(op, graph)
    return few if not few else _mve_bounds(op, graph)


def _mve_bounds(op: Operator, graph: Graph) -> bool | Refusal:
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[0]))
    _, bound = _value_bound(op, graph)
    return mve_requantize_fits(bound, shifts)


def mve_requantize_fits(bounds, shifts) -> bool | Refusal:
    """requantize_mve.h's 4-lane requantization: per channel, the largest |sum(filter x column)
    + bias| shifted left by the channel's left shift below 2^30, and no right shift over 28."""
    for c, (bound, shift) in enumerate(zip((int(b) for b in bounds), (int(s) for s in shifts))):
        left, right = max(shift, 0), max(-shift, 0)
        if bound << left >= 1 << 30:
            return Refusal(f"channel {c}: |sum(filter x column) + bias| may reach {bound:,}, "
                           f"which shifted left by {left} is over the 2^30 the 4-lane "
                           "requantization allows")
        if right > 28:
            return Refusal(f"channel {c}: right shift {right} is over the 28 the 4-lane "
                           "requantization allows")
    return True


MVE_TABLE_VARIANTS = frozenset({"mve", "mve_groups"})  # CONV_2D variants on conv2d_mve.c


def with_mve_tables(interior: np.ndarray, multipliers, shifts) -> np.ndarray:
    """The interior biases as conv2d_mve.c reads them: padded to a whole block of 4 channels,
    then per block of 4 channels one 16-int32 table it loads with 4 VLDRW: the interior biases,
    the multipliers, the left shifts max(shift, 0) and -(max(-shift, 0) + 1) (requantize_mve.h
    mb_mve_split_shifts, done here instead of per block at run time). Padding channels get
    zeros and a -1 shift: their lanes are never stored."""
    oc = len(interior)
    pad = -oc % 4
    def padded(values, fill):
        return np.concatenate([np.asarray(values, dtype=np.int64),
                               np.full(pad, fill, dtype=np.int64)])
    ib, m = padded(interior, 0), padded(multipliers, 0)
    sh = padded(shifts, 0)
    left, neg_right1 = np.maximum(sh, 0), np.minimum(sh, 0) - 1
    tables = np.stack([v.reshape(-1, 4) for v in (ib, m, left, neg_right1)], axis=1).reshape(-1)
    return np.concatenate([ib, tables])


def mve_scratch_bytes(oc: int, k: int, one_by_one: bool, residual: bool) -> int:
    """The 4 pixels' int8 columns of run_columns, each padded to 16 taps; none for a 1x1
    filter whose depth is at most 16 or a multiple of 16, or with under 32 output channels: the
    kernel reads its pixels in place (TFLite never pads a 1x1 filter; conv2d_mve.c is_direct
    copies other depths into padded columns). With a fused residual ADD, then the 4 pixels'
    requantized conv values, which the ADD reads in a pass of its own."""
    in_place = one_by_one and (k <= 16 or k % 16 == 0 or oc < 32)
    return (0 if in_place else 4 * _round_up(k, 16)) + (4 * oc if residual else 0)


def _scratch_mve(op: Operator, graph: Graph) -> int:
    w = graph.tensor(op.inputs[1])
    oc, k, _ = _dims(op, graph)
    return mve_scratch_bytes(oc, k, w.shape[1] == 1 and w.shape[2] == 1,
                             bool(op.options.get(RESIDUAL_ADD)))


def _one_group(op: Operator, graph: Graph) -> bool | Refusal:
    """One group (the filter's depth is the input's)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if len(w.shape) != 4 or w.data is None:
        return Refusal("the filter is not a constant 4-D tensor")
    if x.shape[3] != w.shape[3]:
        return Refusal(f"grouped convolution ({x.shape[3] // w.shape[3]} groups)")
    return True


def _grouped(op: Operator, graph: Graph) -> bool | Refusal:
    """Two groups or more (the other variants take one)."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if len(w.shape) != 4 or w.data is None:
        return Refusal("the filter is not a constant 4-D tensor")
    if x.shape[3] == w.shape[3]:
        return Refusal("one group")
    if max(w.shape[1], w.shape[2]) > 255:
        return Refusal(f"a {w.shape[1]}x{w.shape[2]} filter (its taps' rows and columns are "
                       "bytes)")
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[0]))
    bias = (graph.tensor(op.inputs[2]).data.astype(np.int64)
            if len(op.inputs) > 2 and op.inputs[2] >= 0 else np.zeros(w.shape[0], np.int64))
    flat = w.data.reshape(w.shape[0], -1).astype(np.int64)
    for c, shift in enumerate(int(s) for s in shifts):
        # |sum(filter * (x + offset)) + bias| <= sum|filter| * 255 + |bias|, shifted left by
        # the channel's left shift, must stay in int32 for quant_fast.h's requantization.
        worst = int(np.abs(flat[c]).sum()) * 255 + abs(int(bias[c]))
        if worst << max(shift, 0) >= 1 << 31:
            return Refusal(f"channel {c}: |sum + bias| may reach {worst:,}, which shifted left "
                           f"by {max(shift, 0)} is over int32")
    return True


def _scratch_grouped(op: Operator, graph: Graph) -> int:
    """The int16 column of one group's window (an even count), a table of as many int32 tap
    offsets, then the taps' filter rows and columns (a byte each)."""
    k = int(np.prod(graph.tensor(op.inputs[1]).shape[1:]))
    return 2 * _round_up(k, 2) + 6 * k


def _arrange_s16_dsp(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """conv2d_s16_dsp.c's layout: dsp's (channel pairs, group by group of 4 taps), widened to
    int16 with the taps in their natural order (the int16 column's words are (x0, x1), (x2, x3))."""
    return _arrange_dsp(weights, op, graph).astype(np.int16)


def _scratch_s16_dsp(op: Operator, graph: Graph) -> int:
    """The 2 pixels' interleaved int16 columns, their 2 linear int16 columns, then 16 bytes of
    requantization constants per channel."""
    oc, k, _ = _dims(op, graph)
    return 8 * _round_up(k, 4) + 16 * oc


def _arrange_s16_mve(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """conv2d_s16_mve.c's layout: one int8 row of taps per output channel, padded with zeros to
    a multiple of 8 taps (a VLDRB.S16 load)."""
    oc, k, _ = _dims(op, graph)
    rows = np.zeros((oc, _round_up(k, 8)), dtype=np.int8)
    rows[:, :k] = np.asarray(weights, dtype=np.int8).reshape(oc, k)
    return rows.reshape(-1)


def _scratch_s16_mve(op: Operator, graph: Graph) -> int:
    """The 2 pixels' int16 columns (taps padded to a multiple of 8), then 16 bytes of
    requantization constants per channel."""
    oc, k, _ = _dims(op, graph)
    return 4 * _round_up(k, 8) + 16 * oc


def _s16_dsp_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """One group, and no channel's shift over 14 (the int64 requantization's right shift,
    15 - shift, at least 1, as TFLM's rounding term assumes)."""
    one = _one_group(op, graph)
    if not one:
        return one
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out = graph.tensor(op.outputs[0])
    _, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, int(w.shape[0]))
    if max(int(s) for s in shifts) > 14:
        return Refusal(f"a channel's shift is {max(int(s) for s in shifts)}, over 14")
    return True


VARIANTS = (
    KernelVariant(
        opcode="CONV_2D", name="gemm", function="mb_conv2d_s8_gemm",
        sources=("conv2d_gemm.c",), rank=10, accepts=_plain, arrange=_arrange_gemm,
        scratch=_scratch_gemm,
        overlap_group=2,
        description="portable C: im2col (zero-point padding) + GEMM, 2 pixels x 4 channels"),
    KernelVariant(
        opcode="CONV_2D", name="dsp", function="mb_conv2d_s8_dsp",
        sources=("conv2d_dsp.c",), features=frozenset({"dsp"}), rank=20, accepts=_plain,
        arrange=_arrange_dsp, scratch=_scratch_dsp,
        overlap_group=2,
        description="Arm DSP: int16 im2col columns in scratch, SMLAD, 2 pixels x 2 channels"),
    KernelVariant(
        opcode="CONV_2D", name="dsp16", function="mb_conv2d_s8_dsp16",
        sources=("conv2d_dsp.c",), features=frozenset({"dsp"}), rank=15, accepts=_plain,
        arrange=_arrange_dsp16, scratch=_scratch_dsp, compact="dsp",
        overlap_group=2,
        description="Arm DSP on a filter widened to int16 at compile time: fewer instructions "
                    "than dsp for twice the filter's flash (the default stays dsp; tuning "
                    "picks it when it measures faster)"),
    KernelVariant(
        opcode="CONV_2D", name="mve", function="mb_conv2d_s8_mve",
        sources=("conv2d_mve.c",), features=frozenset({"mve"}), rank=30, accepts=_mve_fits,
        arrange=_arrange_mve, scratch=_scratch_mve,
        overlap_group=4,  # 1x1 filters: blocks of 4 pixels (conv2d_mve.c, run_direct)
        description="Helium: VMLADAVA.S8 on int8 im2col columns, 2 pixels x 4 channels "
                    "(1x1: 4 pixels x 4 channels read in place), 4-lane VQRDMULH "
                    "requantization"),
    KernelVariant(
        opcode="CONV_2D", name="dsp_groups", function="mb_conv2d_s8_dsp",
        sources=("conv2d_dsp.c",), features=frozenset({"dsp"}), rank=20, accepts=_few_groups,
        arrange=_arrange_dsp, scratch=_scratch_dsp,
        overlap_group=2,
        description="Arm DSP, grouped convolution of 2-4 groups: dsp's kernel on the filter "
                    "made dense (zeros outside each channel's group; groups x its flash)"),
    KernelVariant(
        opcode="CONV_2D", name="mve_groups", function="mb_conv2d_s8_mve",
        sources=("conv2d_mve.c",), features=frozenset({"mve"}), rank=30,
        accepts=_mve_few_groups, arrange=_arrange_mve, scratch=_scratch_mve,
        overlap_group=4,
        description="Helium, grouped convolution of 2-4 groups: mve's kernel on the filter "
                    "made dense (zeros outside each channel's group; groups x its flash)"),
    KernelVariant(
        opcode="CONV_2D", name="grouped", function="mb_conv2d_s8_grouped",
        sources=("conv2d_grouped.c",), rank=10, accepts=_grouped, scratch=_scratch_grouped,
        overlap_group=1,
        description="portable C, grouped convolution: each group's window as an int16 column "
                    "of offset inputs (0 in the padding), shared by 2 channels at a time"),
    KernelVariant(
        opcode="CONV_2D", name="dsp_s16", function="mb_conv2d_s16_dsp",
        sources=("conv2d_s16_dsp.c", "conv2d_dsp.c"), features=frozenset({"dsp"}),
        rank=20, accepts=_s16_dsp_fits, arrange=_arrange_s16_dsp, scratch=_scratch_s16_dsp,
        activation_dtype="int16",
        overlap_group=2,
        description="16x8, Arm DSP: int16 window columns of 2 pixels, the filter widened to "
                    "int16 at compile time, dsp16's SMLAD block (2 pixels x 2 channels) in int32 "
                    "chunks of 508 taps added in int64"),
    KernelVariant(
        opcode="CONV_2D", name="mve_s16", function="mb_conv2d_s16_mve",
        sources=("conv2d_s16_mve.c",), features=frozenset({"mve"}), rank=30,
        accepts=_s16_dsp_fits, arrange=_arrange_s16_mve, scratch=_scratch_s16_mve,
        activation_dtype="int16",
        overlap_group=2,
        description="16x8, Helium: int16 window columns of 2 pixels, VMLALDAVA.S16 on the int8 "
                    "filter widened by VLDRB.S16 (exact int64 sums), 2 pixels x 2 channels"),
    f32_mve.CONV_2D,
)


@register
class Conv2D(OpLowering):
    opcode = "CONV_2D"
    kernel_sources = ("conv2d.c", "conv2d_s16.c")
    float32_sources = spatial_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/conv2d.h", spatial_f32.HEADER, f32_mve.HEADER)
    variants = VARIANTS
    dtypes = frozenset({"int8", "int16", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons, operands = checked_conv_operands(op, graph, depthwise=False)
        if operands is None:
            return reasons
        x, w, bias, out = operands
        out_c, filter_h, filter_w, filter_c = w.shape
        batches, in_h, in_w, in_c = x.shape
        if in_c % filter_c != 0:
            reasons.append(f"input depth {in_c} is not a multiple of the filter depth {filter_c}")
        elif out_c % (in_c // filter_c) != 0:
            reasons.append(f"{out_c} filters do not split into {in_c // filter_c} groups")
        win = window_2d(op.options, in_h, in_w, filter_h, filter_w)
        reasons += shape_reason("output", out, (batches, win.out_h, win.out_w, out_c))
        return reasons

    def overlap(self, op: Operator, graph: Graph, k: int, variant=None):
        """Every CONV_2D kernel walks output pixels in order (the GEMM ones two at a time): the
        output may lie over the dying input, shifted down (microbuild/compiler/overlap.py)."""
        return conv_window_overlap(op, graph, k, variant)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return spatial_f32.emit(op, graph, ctx)
        if graph.tensor(op.inputs[0]).dtype == "int16":
            return emit_s16(self, op, graph, ctx, "mb_conv2d_s16", "mb_conv2d_s8_params",
                            depthwise=False)
        return self.emit_call(op, graph, ctx, "(const mb_residual_add_s8 *)0",
                              ctx.ptr(op.outputs[0]))

    def emit_call(self, op: Operator, graph: Graph, ctx: EmitContext, residual: str,
                  output: str) -> str:
        """The mb_conv2d_s8 call for ``op`` with the given residual epilogue and output pointer
        (also used by the fused CONV_2D+ADD lowering)."""
        inputs = graph.input_tensors(op)
        x, w = inputs[0], inputs[1]
        has_bias = len(inputs) > 2 and inputs[2] is not None
        out_c = int(w.shape[0])
        # Interior pixels (every tap inside the input): bias + input_offset * sum(filter), once
        # per channel, so the kernel's inner loop is a pure int8 dot product.
        filter_sums = w.data.reshape(out_c, -1).astype(np.int64).sum(axis=1)
        bias_values = (inputs[2].data.astype(np.int64) if has_bias
                       else np.zeros(out_c, dtype=np.int64))
        interior = bias_values + (-x.zero_point) * filter_sums
        if interior.min() < -(1 << 31) or interior.max() >= (1 << 31):
            raise ModelError(f"{op.describe()}: bias + input offset x filter sum overflows int32")
        params, mult, shift = emit_conv_params(op, graph, ctx, "mb_conv2d_s8_params",
                                               depthwise=False)
        variant = getattr(ctx, "variant", None)
        if variant is not None and variant.name in MVE_TABLE_VARIANTS:
            out = graph.tensor(op.outputs[0])
            multipliers, shifts = channel_multipliers(x.scale, w.quant.scale, out.scale, out_c)
            interior = with_mve_tables(interior, multipliers, shifts)
        interior_bias = ctx.const_array(ctx.symbol("interior_bias"), interior.astype(np.int32),
                                        "int32_t")
        # A variant that arranges the weights gets its own array instead (kernel_call): do not
        # emit the original as well. The variants read interior_bias only, not the bias (but
        # for grouped, which sums like the reference).
        reads_bias = variant is None or variant.name == "grouped"
        bias = ctx.ptr(op.inputs[2]) if has_bias and reads_bias else "(const int32_t *)0"
        weights = (ctx.ptr(op.inputs[1]) if variant is None or variant.arrange is None
                   else "(const int8_t *)0")
        return self.kernel_call(op, graph, ctx, "mb_conv2d_s8", [
            f"&{params}", ctx.ptr(op.inputs[0]), weights, bias, interior_bias, mult,
            shift, residual, output], weights=2)

