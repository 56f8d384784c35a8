"""MEAN (int8, constant axes, keep_dims either way), bit-exact with TFLM's
reference_ops::QuantizedMeanOrSum, which TFLM uses for every int8 MEAN (also when input and output
share scale and zero point).

TFLM folds input_scale / output_scale and 1 / count into one multiplier: it quantizes the scale
ratio, then divides the Q31 multiplier by the element count after shifting it left by up to
floor(log2(count)) bits (at most 32, and never past a total right shift of 31) to keep precision.
All of that happens here; the device sums, subtracts zero point x count, and requantizes.

SUM (microbuild/compiler/ops/reduce.py) is the same computation without the 1 / count, so it
subclasses this lowering and shares the kernel; the walk over kept and reduced dimensions is
``mb_reduce_step`` in runtime/kernels/reduce.c, which REDUCE_MAX/MIN and ARG_MAX/MIN use too.
Float32 MEAN (and SUM/REDUCE_MAX/MIN) run reduce_f32.c (constants in
microbuild/compiler/f32/reduce.py), checked and laid out by float32_reasons/float32_emit below.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import all_float32_reasons, is_float32, reduce as reduce_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import quantize_multiplier
from microbuild.compiler.spatial import (
    activation_reasons,
    c_struct,
    operand_count_reasons,
    shape_reason,
)
from microbuild.model.ir import Graph, Operator

# runtime/include/microbuild/kernels/mean.h: MB_MEAN_MAX_DIMS; TFLM's reduce kernels also stop at 5.
MAX_DIMS = 5
# TFLM resolves the axes into a fixed array of two (kMaxNumberOfReducedAxis).
MAX_REDUCED_AXES = 2


def mean_multiplier(input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
    """(multiplier, shift) applied to (sum - input_zero_point * count), as TFLM derives them."""
    real = float(np.float32(input_scale)) / float(np.float32(output_scale))
    multiplier, shift = quantize_multiplier(real)
    pre_shift = min(count.bit_length() - 1, 32, 31 + shift)
    # int64 arithmetic in TFLM; both operands are positive, so floor division truncates the same.
    multiplier = (multiplier << pre_shift) // count
    return int(multiplier), int(shift - pre_shift)


def resolved_axes(op: Operator, graph: Graph) -> list[int]:
    """Axes made non-negative and de-duplicated, in first-seen order (TFLM's ResolveAxis)."""
    rank = len(graph.tensor(op.inputs[0]).shape)
    axes: list[int] = []
    for a in np.asarray(graph.tensor(op.inputs[1]).data).reshape(-1):
        a = int(a) + rank if a < 0 else int(a)
        if a not in axes:
            axes.append(a)
    return axes


def _row_major_strides(shape: tuple[int, ...]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def layout_fields(shape: tuple[int, ...], axes: list[int], max_dims: int) -> list[tuple]:
    """The kept/reduced description of a reduction over ``axes`` that mb_mean_s8_params and
    mb_reduce_params begin with: kept dimensions in order (the output's order) and reduced ones,
    each with its input strides, padded to ``max_dims``."""
    strides = _row_major_strides(tuple(shape))
    kept = [i for i in range(len(shape)) if i not in axes]
    reduced = sorted(axes)

    def padded(values: list[int]) -> list[int]:
        return values + [0] * (max_dims - len(values))

    return [
        ("kept_count", len(kept)),
        ("kept_dims", padded([shape[i] for i in kept])),
        ("kept_strides", padded([strides[i] for i in kept])),
        ("reduced_count", len(reduced)),
        ("reduced_dims", padded([shape[i] for i in reduced])),
        ("reduced_strides", padded([strides[i] for i in reduced])),
    ]


def reduced_shape(shape: tuple[int, ...], axes: list[int], keep_dims: bool) -> tuple[int, ...]:
    """The output shape of a reduction: reduced axes become 1 (keep_dims) or disappear."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape) if keep_dims or i not in axes)


def axis_reasons(op: Operator, graph: Graph, rank: int) -> list[str]:
    """The axis operand (input 1) must be a constant int32 tensor (TFLM's reduce kernels take
    only int32) whose values lie in [-rank, rank)."""
    axis = graph.tensor(op.inputs[1])
    if not axis.is_constant or axis.dtype != "int32":
        return [f"axis '{axis.name}' must be a constant int32 tensor"]
    raw = [int(a) for a in np.asarray(axis.data).reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        return [f"axis {raw} is out of range for rank {rank}"]
    return []


def rank_axis_reasons(op: Operator, graph: Graph, max_dims: int = MAX_DIMS) -> list[str]:
    """Every reduction's check of its input's rank (up to its kernel's ``max_dims``) and constant
    axes."""
    rank = len(graph.tensor(op.inputs[0]).shape)
    found = []
    if not 1 <= rank <= max_dims:
        found.append(f"input has rank {rank}; 1 to {max_dims} dimensions are supported")
    return found + axis_reasons(op, graph, rank)


def emit_layout_params(op: Operator, graph: Graph, ctx: EmitContext,
                       max_dims: int = MAX_DIMS) -> str:
    """Emits the ``mb_reduce_params`` walk over the input's kept and reduced dimensions (every
    reduction kernel but int8 MEAN/SUM, whose struct adds the requantization) and returns its
    symbol."""
    x = graph.tensor(op.inputs[0])
    params = ctx.symbol("params")
    fields = layout_fields(tuple(x.shape), resolved_axes(op, graph), max_dims)
    ctx.static(f"static const mb_reduce_params {params} = {c_struct(fields)};")
    return params


@register
class Mean(OpLowering):
    opcode = "MEAN"
    kernel_sources = ("mean.c", "reduce.c")
    float32_sources = reduce_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/mean.h", reduce_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    dtype_notes = {"int32": "its axis is computed at run time; microbuild needs constant axes"}

    def multiplier(self, input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
        return mean_multiplier(input_scale, output_scale, count)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if op.inputs and op.inputs[0] >= 0 and is_float32(op, graph):
            return float32_reasons(op, graph)
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or axis is missing"]
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons += activation_reasons("input", x, dtypes=("int8", "int16"))
        reasons += activation_reasons("output", out, dtypes=(x.dtype,))
        reasons += rank_axis_reasons(op, graph)
        if reasons:
            return reasons
        axes = resolved_axes(op, graph)
        if not axes:
            reasons.append("no axis to reduce (an empty axis list)")
        if len(axes) > MAX_REDUCED_AXES:
            reasons.append(f"reduces {len(axes)} axes {axes}; TFLM's kernel handles at most "
                           f"{MAX_REDUCED_AXES}, so there is no reference result to match")
        count = int(np.prod([x.shape[a] for a in axes]))
        # The int32 sum and sum - zero point x count must not overflow (UB in C, and in TFLM).
        largest = (1 << 15) if x.dtype == "int16" else (1 << 7)
        if (largest + abs(x.zero_point)) * count >= 2**31:
            reasons.append(f"reduces {count} elements; the int32 sum could overflow")
        keep = bool(op.options.get("keep_dims", False))
        reasons += shape_reason("output", out, reduced_shape(tuple(x.shape), axes, keep))
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return float32_emit(op, graph, ctx)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        axes = resolved_axes(op, graph)
        count = int(np.prod([x.shape[a] for a in axes]))
        multiplier, shift = self.multiplier(x.scale, out.scale, count)
        params = ctx.symbol("params")
        fields = layout_fields(tuple(x.shape), axes, MAX_DIMS) + [
            ("input_zero_point_sum", x.zero_point * count),
            ("multiplier", multiplier), ("shift", shift),
            ("output_offset", out.zero_point),
        ]
        ctx.static(f"static const mb_mean_s8_params {params} = {c_struct(fields)};")
        function = "mb_mean_s16" if out.dtype == "int16" else "mb_mean_s8"
        return f"{function}(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])});"


# --- float32: TFLM's float reductions, on the same axis checks and layout ---


def float32_reasons(op: Operator, graph: Graph) -> list[str]:
    found = operand_count_reasons(op, (2,))
    if found or min(op.inputs) < 0:
        return found or ["input or axis is missing"]
    found = all_float32_reasons(op, graph, inputs=[0])
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    found += rank_axis_reasons(op, graph)
    if found:
        return found
    axes = resolved_axes(op, graph)
    # TFLM's MEAN and SUM resolve the axes into an array of two; REDUCE_MAX/MIN take any number.
    if op.opcode in ("MEAN", "SUM") and len(axes) > MAX_REDUCED_AXES:
        found.append(f"reduces {len(axes)} axes {axes}; TFLM's kernel handles at most "
                     f"{MAX_REDUCED_AXES}, so there is no reference result to match")
    keep = bool(op.options.get("keep_dims", False))
    return found + shape_reason("output", out, reduced_shape(tuple(x.shape), axes, keep))


def float32_emit(op: Operator, graph: Graph, ctx) -> str:
    params = emit_layout_params(op, graph, ctx)
    return (f"mb_reduce_f32(&{params}, {reduce_f32.OPERATIONS[op.opcode]}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])});")
