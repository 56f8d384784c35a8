"""FULLY_CONNECTED (int8 input/output, int8 weights per tensor or per channel, optional int32 bias).

Parameters follow TFLM's CalculateOpDataFullyConnected: the requantization multiplier is
input_scale * weight_scale / output_scale computed in double from the float32 scales, quantized
with QuantizeMultiplier, and applied with TFLM's double rounding. The input zero point is folded
into the bias here (see ``runtime/include/microbuild/kernels/fully_connected.h``).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler import f32
from microbuild.compiler.f32 import fully_connected as fc_f32
from microbuild.compiler.f32 import mve as f32_mve
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import activation_range_int8, quantize_multiplier
from microbuild.compiler.spatial import c_struct
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

FUSED_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def _f64(value: float) -> float:
    """A float32 scale as the double TFLM computes with."""
    return float(np.float32(value))


def requantization(op: Operator, graph: Graph) -> tuple[list[int], list[int]]:
    """(multipliers, shifts): one entry for per-tensor weights, output_depth entries otherwise."""
    x = graph.tensor(op.inputs[0])
    w = graph.tensor(op.inputs[1])
    y = graph.tensor(op.outputs[0])
    multipliers, shifts = [], []
    for weight_scale in w.quant.scale:
        real = _f64(x.scale) * _f64(weight_scale) / _f64(y.scale)
        m, s = quantize_multiplier(real)
        multipliers.append(m)
        shifts.append(s)
    return multipliers, shifts


def folded_bias(op: Operator, graph: Graph) -> np.ndarray:
    """bias[c] - input_zero_point * sum_d w[c][d], as int64 (the range is checked)."""
    w = graph.tensor(op.inputs[1]).data.astype(np.int64)
    bias = np.zeros(w.shape[0], dtype=np.int64)
    if len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias += graph.tensor(op.inputs[2]).data.astype(np.int64).reshape(-1)
    return bias - graph.tensor(op.inputs[0]).zero_point * w.sum(axis=1)


# The variants whose kernels read the requantization table below (fully_connected_dsp.c).
DSP_TABLE_VARIANTS = ("dsp", "dsp_wide")


def dsp_requant_table(op: Operator, graph: Graph) -> np.ndarray | None:
    """fully_connected_dsp.c's requantization table, 3 int32 per output row: 2 * multiplier -
    2^32, offset = 2^right + output_zero_point * 2^(right + 1), right + 1 (right: minus the
    row's shift). The kernel then requantizes a sum in 5 instructions: SMMLAR(acc, 2 * multiplier
    - 2^32, acc) = (2 * multiplier * acc + 2^31) >> 32 is the reference's rounding doubling high
    multiply hi, and (2 * hi + offset - (hi < 0)) >> (right + 1) its rounding right shift (half
    away from zero) plus the output zero point; SSAT and the activation range follow.
    None (the kernels use the generic requantization) unless every row has no left shift, a
    multiplier in [2^30, 2^31) (what QuantizeMultiplier gives a non-zero scale) and a worst sum
    that keeps |2 * hi| + |offset| below 2^31."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    y = graph.tensor(op.outputs[0])
    if x.dtype != "int8":
        return None
    out_depth, depth = w.shape
    multipliers, shifts = requantization(op, graph)
    if len(multipliers) == 1:
        multipliers, shifts = multipliers * out_depth, shifts * out_depth
    worst = int(np.abs(folded_bias(op, graph)).max()) + depth * 128 * 128
    table = []
    for m, s in zip(multipliers, shifts):
        right = -s
        if s > 0 or not (1 << 30) <= m < (1 << 31) or right > 29:
            return None
        offset = (1 << right) + y.zero_point * (1 << (right + 1))
        if 2 * (worst + 1) + abs(offset) + 1 >= 1 << 31:
            return None
        table += [2 * m - (1 << 32), offset, right + 1]
    return np.array(table, dtype=np.int64)


# The deepest input row the dsp kernels widen into scratch (2 bytes per value: 256 bytes here).
# Widening saves 2 of 20 instructions per 16 multiply-accumulates for every group of 4 rows after
# the first; a deeper row (micro_speech's 4,000) would cost kilobytes of workspace at the op that
# is often the model's peak, for a few percent.
WIDENED_INPUT_MAX_DEPTH = 128


def widened_input_scratch(op: Operator, graph: Graph) -> int:
    """Scratch bytes of the dsp and dsp_wide kernels: the input row widened to int16 pairs
    (fully_connected_dsp.c's fc_widen_row) when their table fast path runs, the row is at most
    WIDENED_INPUT_MAX_DEPTH deep and there are at least two groups of 4 rows to share it; else 0."""
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    if x.dtype != "int8" or len(w.shape) != 2:
        return 0
    out_depth, depth = w.shape
    if (depth % 4 or depth > WIDENED_INPUT_MAX_DEPTH or out_depth < 8
            or dsp_requant_table(op, graph) is None):
        return 0
    return 2 * depth


def arrange_rows(rows: int, chunk: int):
    """The weights layout of the FULLY_CONNECTED variants (same size as the original): every group
    of ``rows`` output rows interleaved chunk by chunk ([depth // chunk][rows][chunk]), then the
    group's last depth % chunk bytes row after row ([rows][depth % chunk]); the output_depth %
    rows rows left over follow as the model stores them."""

    def arrange(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
        w = np.asarray(weights, dtype=np.int8)
        out_depth, depth = w.shape
        groups = out_depth // rows
        full = depth // chunk * chunk
        parts = []
        for g in range(groups):
            block = w[g * rows:(g + 1) * rows]
            parts.append(block[:, :full].reshape(rows, full // chunk, chunk)
                         .transpose(1, 0, 2).reshape(-1))
            parts.append(block[:, full:].reshape(-1))
        parts.append(w[groups * rows:].reshape(-1))
        arranged = np.concatenate(parts).astype(np.int8)
        assert arranged.size == w.size
        return arranged

    return arrange


def arrange_rows_s16(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """fully_connected_s16_dsp.c's layout: arrange_rows(4, 4), each whole 4-byte chunk's bytes
    stored w0 w2 w1 w3 (so SXTB16 gives the pairs (w0, w1) and (w2, w3))."""
    w = np.asarray(weights, dtype=np.int8)
    out_depth, depth = w.shape
    arranged = arrange_rows(4, 4)(w, op, graph).copy()
    full = depth // 4 * 4
    group_bytes = 4 * depth
    for g in range(out_depth // 4):
        chunks = arranged[g * group_bytes:g * group_bytes + 4 * full].reshape(-1, 4)
        chunks[:] = chunks[:, [0, 2, 1, 3]]
    return arranged


def arrange_dsp_wide(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """fully_connected_dsp.c's dsp_wide layout: arrange_rows(4, 4) with every whole 4-byte chunk
    (the groups' and the left-over rows') stored w0 w2 w1 w3, widened to int16: each chunk is
    then the two words SMLAD pairs with the input's (x0, x2) and (x1, x3)."""
    w = np.asarray(weights, dtype=np.int8)
    out_depth, depth = w.shape
    arranged = arrange_rows(4, 4)(w, op, graph).copy()
    full = depth // 4 * 4
    groups = out_depth // 4
    starts = [g * 4 * depth for g in range(groups)]
    lengths = [4 * full] * groups
    starts += [groups * 4 * depth + r * depth for r in range(out_depth - groups * 4)]
    lengths += [full] * (out_depth - groups * 4)
    for start, length in zip(starts, lengths):
        chunks = arranged[start:start + length].reshape(-1, 4)
        chunks[:] = chunks[:, [0, 2, 1, 3]]
    return arranged.astype(np.int16)


def emit_params_s8(op: Operator, graph: Graph, ctx: EmitContext, dsp_table: bool
                   ) -> tuple[str, str]:
    """The int8 kernels' parameter struct and folded bias as C constants: (params, bias)
    symbols. ``dsp_table``: the dsp variants' requantization table in place of the multipliers
    and shifts where it is exact. Shared with the band kernel of row_stream_fc.py."""
    x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    out_depth, depth = w.shape
    act_min, act_max = activation_range_int8(
        op.options.get("fused_activation_function", "NONE"), y.scale, y.zero_point)
    multipliers, shifts = requantization(op, graph)
    bias = ctx.const_array(ctx.symbol("bias"), folded_bias(op, graph), "int32_t")
    table = dsp_requant_table(op, graph) if dsp_table else None
    requant = "NULL"
    if table is not None:
        # The table replaces the multipliers and shifts (the dsp kernels read only it).
        requant = ctx.const_array(ctx.symbol("requant"), table, "int32_t")
        per_tensor, per_channel = "0, 0", "NULL, NULL"
    elif len(multipliers) > 1:
        per_tensor = "0, 0"
        per_channel = (f"{ctx.const_array(ctx.symbol('multipliers'), np.array(multipliers), 'int32_t')}, "
                       f"{ctx.const_array(ctx.symbol('shifts'), np.array(shifts), 'int32_t')}")
    else:
        per_tensor = f"{multipliers[0]}, {shifts[0]}"
        per_channel = "NULL, NULL"
    params = ctx.symbol("params")
    ctx.static(
        f"static const mb_fully_connected_s8_params {params} = {{\n"
        f"    {x.num_elements // depth}, {depth}, {out_depth}, {y.zero_point}, {act_min}, "
        f"{act_max},\n"
        f"    {per_tensor}, {per_channel}, {requant}\n"
        "};")
    return params, bias


@register
class FullyConnected(OpLowering):
    opcode = "FULLY_CONNECTED"
    kernel_sources = ("fully_connected.c", "fully_connected_s16.c", "fully_connected_band.c")
    float32_sources = fc_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/fully_connected.h", fc_f32.HEADER, f32_mve.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    variants = (
        KernelVariant(
            opcode="FULLY_CONNECTED", name="rows4", function="mb_fully_connected_s8_rows4",
            sources=("fully_connected_portable.c",), rank=10, arrange=arrange_rows(4, 16),
            description="portable C: 4 output rows per pass, weights interleaved in 16-byte "
                        "chunks"),
        KernelVariant(
            opcode="FULLY_CONNECTED", name="dsp", function="mb_fully_connected_s8_dsp",
            sources=("fully_connected_dsp.c",), features=frozenset({"dsp"}), rank=20,
            arrange=arrange_rows(4, 4), scratch=widened_input_scratch,
            description="Arm DSP: SXTB16 + SMLAD, 4 output rows per pass, weights interleaved "
                        "in 4-byte chunks, a short input row widened once into scratch"),
        KernelVariant(
            opcode="FULLY_CONNECTED", name="dsp_wide", function="mb_fully_connected_s8_dsp_wide",
            sources=("fully_connected_dsp.c",), features=frozenset({"dsp"}), rank=15,
            arrange=arrange_dsp_wide, compact="dsp", scratch=widened_input_scratch,
            description="Arm DSP on weights widened to int16 at compile time: no SXTB16 on the "
                        "weights (13 instructions per 16 MACs instead of 20) for twice the "
                        "weights' flash (the default stays dsp; tuning picks it when it "
                        "measures faster)"),
        KernelVariant(
            opcode="FULLY_CONNECTED", name="mve", function="mb_fully_connected_s8_mve",
            sources=("fully_connected_mve.c",), features=frozenset({"mve"}), rank=30,
            arrange=arrange_rows(4, 16),
            description="Helium: VMLADAVA on 16 int8 lanes, 4 output rows per pass, weights "
                        "interleaved in 16-byte chunks"),
        KernelVariant(
            opcode="FULLY_CONNECTED", name="dsp_s16", function="mb_fully_connected_s16_dsp",
            sources=("fully_connected_s16_dsp.c",), features=frozenset({"dsp"}), rank=20,
            arrange=arrange_rows_s16, activation_dtype="int16",
            description="16x8, Arm DSP: int16 input pairs against SXTB16-widened weight pairs, "
                        "SMLALD into int64, 4 output rows per pass"),
        f32_mve.FULLY_CONNECTED,
    )

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0 or len(op.outputs) != 1:
            return ["expected an input, weights, an optional bias and one output"]
        if f32.is_float32(op, graph):
            return fc_f32.reasons(op, graph)
        x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
        bias = graph.tensor(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
        reasons = []
        if not w.is_constant:
            reasons.append(f"weights (tensor {w.index}) are computed at run time; only constant "
                           "weights are supported")
        if w.dtype != "int8":
            reasons.append(f"weights are {w.dtype}; only int8 weights are supported")
        bias_type = "int64" if x.dtype == "int16" else "int32"
        if x.dtype != y.dtype:
            reasons.append(f"input is {x.dtype} but output is {y.dtype}; TFLM requires the same")
        if bias is not None and (bias.dtype != bias_type or not bias.is_constant):
            reasons.append(f"bias (tensor {bias.index}) must be a constant {bias_type} tensor "
                           f"for {x.dtype} activations, it is "
                           f"{'constant ' if bias.is_constant else ''}{bias.dtype}")
        if x.dtype == "int16" and x.quant is not None and y.quant is not None and (
                x.zero_point != 0 or y.zero_point != 0):
            reasons.append("int16 input and output need zero point 0 (TFLM's 16x8 kernels)")
        for role, t in (("input", x), ("weights", w), ("output", y)):
            if t.quant is None:
                reasons.append(f"{role} tensor {t.index} is not quantized")
        if reasons:
            return reasons

        if len(w.shape) != 2:
            return [f"weights have shape {list(w.shape)}; expected [output_depth, input_depth]"]
        out_depth, depth = w.shape
        if x.num_elements % depth != 0:
            reasons.append(f"input of {x.num_elements} elements is not a whole number of rows "
                           f"of {depth}")
        elif y.num_elements != x.num_elements // depth * out_depth:
            reasons.append(f"output shape {list(y.shape)} does not match "
                           f"{x.num_elements // depth} rows x {out_depth} units")
        if x.quant.per_channel or y.quant.per_channel:
            reasons.append("input and output must be quantized per tensor")
        if w.quant.per_channel and (len(w.quant.scale) != out_depth or w.quant.axis != 0):
            reasons.append(f"per-channel weights need {out_depth} scales on axis 0, found "
                           f"{len(w.quant.scale)} on axis {w.quant.axis}")
        if np.any(w.quant.zero_point != 0):
            reasons.append("weights have a non-zero zero point; TFLM requires symmetric int8 "
                           "weights")
        if bias is not None and bias.num_elements != out_depth:
            reasons.append(f"bias has {bias.num_elements} elements for {out_depth} units")
        activation = op.options.get("fused_activation_function", "NONE")
        if activation not in FUSED_ACTIVATIONS:
            reasons.append(f"fused activation {activation} is not supported")
        weights_format = op.options.get("weights_format", "DEFAULT")
        if weights_format != "DEFAULT":
            reasons.append(f"weights format {weights_format} is not supported")
        if reasons or x.dtype == "int16":
            return reasons  # 16x8: TFLM's int64 accumulator cannot overflow here
        # The folded sum must stay in int32, as TFLM's own accumulator does.
        worst = int(np.abs(folded_bias(op, graph)).max()) + depth * 127 * 128
        if worst >= 1 << 31:
            reasons.append(f"input depth {depth} and bias could overflow the int32 accumulator")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
        if x.dtype == "float32":
            return fc_f32.emit(op, graph, ctx)
        if x.dtype == "int16":
            return self._emit_s16(op, graph, ctx)
        variant = getattr(ctx, "variant", None)
        params, bias = emit_params_s8(
            op, graph, ctx, variant is not None and variant.name in DSP_TABLE_VARIANTS)
        # A variant that pre-arranges the weights gets them in place of this argument: asking
        # ctx.ptr() for the original layout would store it as well, unused.
        weights = ("0" if variant is not None and variant.arrange is not None
                   else ctx.ptr(w.index))
        return self.kernel_call(op, graph, ctx, "mb_fully_connected_s8", [
            f"&{params}", ctx.ptr(x.index), weights, bias, ctx.ptr(y.index)], weights=2)

    def _emit_s16(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
        out_depth, depth = w.shape
        act_min, act_max = activation_range_int8(
            op.options.get("fused_activation_function", "NONE"), y.scale, y.zero_point, "int16")
        multipliers, shifts = requantization(op, graph)
        if len(multipliers) > 1:
            per_tensor = [("output_multiplier", 0), ("output_shift", 0)]
            per_channel = [
                ("output_multipliers", ctx.const_array(ctx.symbol("multipliers"),
                                                       np.array(multipliers), "int32_t")),
                ("output_shifts", ctx.const_array(ctx.symbol("shifts"), np.array(shifts),
                                                  "int32_t"))]
        else:
            per_tensor = [("output_multiplier", multipliers[0]), ("output_shift", shifts[0])]
            per_channel = [("output_multipliers", "NULL"), ("output_shifts", "NULL")]
        params = ctx.symbol("params")
        fields = [("batches", x.num_elements // depth), ("input_depth", depth),
                  ("output_depth", out_depth), ("activation_min", act_min),
                  ("activation_max", act_max)] + per_tensor + per_channel
        ctx.static(f"static const mb_fully_connected_s16_params {params} = {c_struct(fields)};")
        bias = ctx.ptr(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else "NULL"
        variant = getattr(ctx, "variant", None)
        weights = ("0" if variant is not None and variant.arrange is not None
                   else ctx.ptr(w.index))
        return self.kernel_call(op, graph, ctx, "mb_fully_connected_s16", [
            f"&{params}", ctx.ptr(x.index), weights, bias, ctx.ptr(y.index)], weights=2)
