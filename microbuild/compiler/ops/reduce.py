"""SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX and ARG_MIN, bit-exact with TFLM (constant axes, keep_dims
either way, negative and repeated axes).

- SUM (int8, int16): TFLM's reference_ops::QuantizedMeanOrSum with ``compute_sum``: the same sum,
  zero point correction and requantization as MEAN, with the multiplier quantized from
  input_scale / output_scale alone (no 1 / count). It subclasses MEAN's lowering and runs MEAN's
  kernel; like MEAN it reduces at most two distinct axes (TFLM resolves them into an array of
  two).
- REDUCE_MAX, REDUCE_MIN (int8): TFLM compares raw int8 values and insists that input and output
  are quantized alike (equal scale and zero point); any number of axes.
- ARG_MAX, ARG_MIN (int8 input, int32 indices): one axis; a value replaces the best so far only
  when strictly greater (smaller), so the first of equal values wins, as in TFLM.

TFLM has no int16 kernel for REDUCE_MAX/MIN or ARG_MAX/MIN and writes ARG_MAX/MIN indices only
as int32: those are refused with that reason. Each op is evaluated at compile time when its
input is a constant. Float32 SUM, REDUCE_MAX and REDUCE_MIN run microbuild/compiler/f32/reduce.py's
kernel.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import f32
from microbuild.compiler.f32 import is_float32, reduce as reduce_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.mean import (
    Mean,
    emit_layout_params,
    float32_emit,
    float32_reasons,
    rank_axis_reasons,
    reduced_shape,
    resolved_axes,
)
from microbuild.compiler.quant import multiply_by_quantized_multiplier, quantize_multiplier
from microbuild.compiler.spatial import (
    activation_reasons,
    c_struct,
    operand_count_reasons,
    same_quantization,
    shape_reason,
)
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

# runtime/include/microbuild/kernels/reduce.h: MB_REDUCE_MAX_DIMS.
MAX_DIMS = 6


def sum_multiplier(input_scale: float, output_scale: float) -> tuple[int, int]:
    """(multiplier, shift) applied to (sum - input_zero_point * count): TFLM's
    QuantizeMultiplier of the float32 scales' ratio, computed in double."""
    return quantize_multiplier(f32(input_scale) / f32(output_scale))


def shift_reasons(input_scale: float, output_scale: float, shift: int) -> list[str]:
    """TFLM's requantization shifts an int32 left by at most 30 (further is undefined in C)."""
    if shift > 30:
        return [f"input scale {input_scale} / output scale {output_scale} is too large a ratio "
                f"to requantize (a left shift of {shift} bits)"]
    return []


def _axes_of(op: Operator, graph: Graph) -> tuple[int, ...] | None:
    if len(op.inputs) != 2 or min(op.inputs) < 0 or not graph.tensor(op.inputs[1]).is_constant:
        return None
    return tuple(resolved_axes(op, graph))


@register
class Sum(Mean):
    opcode = "SUM"

    def multiplier(self, input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
        return sum_multiplier(input_scale, output_scale)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = super().check(op, graph)
        if not reasons and not is_float32(op, graph):
            x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
            reasons += shift_reasons(x.scale, out.scale, sum_multiplier(x.scale, out.scale)[1])
        return reasons

    def fold(self, op: Operator, graph: Graph):
        axes = _axes_of(op, graph)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if axes is None or len(axes) > 2 or x.dtype not in ("int8", "int16") \
                or out.dtype != x.dtype or x.quant is None or out.quant is None:
            return None  # (more than two axes: TFLM has no result to match, check() says so)
        count = int(np.prod([x.shape[a] for a in axes]))
        multiplier, shift = sum_multiplier(x.scale, out.scale)
        sums = x.data.reshape(x.shape).astype(np.int64).sum(axis=axes)
        info = np.iinfo(out.dtype)
        values = [min(max(multiply_by_quantized_multiplier(int(s) - x.zero_point * count,
                                                           multiplier, shift)
                          + out.zero_point, info.min), info.max)
                  for s in sums.reshape(-1)]
        return [np.asarray(values, dtype=out.dtype).reshape(out.shape)]


class _Extreme(OpLowering):
    """REDUCE_MAX / REDUCE_MIN on int8: raw values, equal quantization in and out."""

    kernel_sources = ("reduce.c",)
    float32_sources = reduce_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/reduce.h", reduce_f32.HEADER)
    dtypes = frozenset({"int8", "float32"})
    function = "mb_reduce_max_s8"
    numpy = staticmethod(np.max)

    @property
    def dtype_notes(self) -> dict[str, str]:  # type: ignore[override]
        return {"int16": f"TFLM's {self.opcode} has no int16 kernel either, only float32 and "
                         "int8",
                "int32": "its axis is computed at run time; microbuild needs constant axes"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or axis is missing"]
        if is_float32(op, graph):
            return float32_reasons(op, graph)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons += activation_reasons("input", x)
        reasons += activation_reasons("output", out)
        reasons += rank_axis_reasons(op, graph, MAX_DIMS)
        if reasons:
            return reasons
        if not same_quantization(x, out):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {out.scale}, zero point {out.zero_point}) are quantized "
                           f"differently; TFLM's int8 {self.opcode} requires them equal")
        keep = bool(op.options.get("keep_dims", False))
        reasons += shape_reason("output", out, reduced_shape(tuple(x.shape),
                                                             resolved_axes(op, graph), keep))
        return reasons

    def fold(self, op: Operator, graph: Graph):
        axes = _axes_of(op, graph)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if axes is None or x.dtype != out.dtype or x.dtype not in ("int8", "float32"):
            return None
        if x.dtype == "int8" and not same_quantization(x, out):
            return None
        data = x.data.reshape(x.shape)
        if x.dtype == "float32" and np.isnan(data).any():
            return None  # TFLM's comparisons skip NaNs, numpy's propagate them
        return [np.asarray(self.numpy(data, axis=axes), dtype=x.dtype).reshape(out.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return float32_emit(op, graph, ctx)
        params = emit_layout_params(op, graph, ctx, MAX_DIMS)
        return (f"{self.function}(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])});")


@register
class ReduceMax(_Extreme):
    opcode = "REDUCE_MAX"
    function = "mb_reduce_max_s8"
    numpy = staticmethod(np.max)


@register
class ReduceMin(_Extreme):
    opcode = "REDUCE_MIN"
    function = "mb_reduce_min_s8"
    numpy = staticmethod(np.min)


class _Arg(OpLowering):
    """ARG_MAX / ARG_MIN: int8 or float32 input (runtime/kernels/arg_f32.c, over the
    [outer][size][inner] view of ``_arg_walk``), int32 indices along one constant axis."""

    kernel_sources = ("reduce.c",)
    float32_sources = ("arg_f32.c",)
    headers = ("microbuild/kernels/reduce.h", "microbuild/kernels/arg_f32.h")
    dtypes = frozenset({"int8", "int32", "float32"})
    function = "mb_arg_max_s8"
    numpy = staticmethod(np.argmax)

    @property
    def dtype_notes(self) -> dict[str, str]:  # type: ignore[override]
        name = "argmax" if self.opcode == "ARG_MAX" else "argmin"
        return {"int64": f"TFLM's {self.opcode} writes int32 indices only; convert "
                         f"tf.math.{name}(..., output_type=tf.int32)",
                "int16": f"TFLM's {self.opcode} has no int16 kernel either, only float32 and "
                         "int8 input"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or axis is missing"]
        x, axis, out = (graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]),
                        graph.tensor(op.outputs[0]))
        if x.dtype not in ("int8", "float32"):
            reasons.append(f"input '{x.name}' is {x.dtype}; TFLM's {self.opcode} takes float32 "
                           "or int8 input")
        if out.dtype != "int32":
            reasons.append(f"output '{out.name}' is {out.dtype}; TFLM's {self.opcode} writes "
                           "int32 indices")
        reasons += rank_axis_reasons(op, graph, MAX_DIMS)
        if reasons:
            return reasons
        if axis.num_elements != 1:
            return [f"axis '{axis.name}' has {axis.num_elements} values; {self.opcode} takes "
                    "one axis"]
        reasons += shape_reason("output", out, reduced_shape(tuple(x.shape),
                                                             resolved_axes(op, graph), False))
        return reasons

    def fold(self, op: Operator, graph: Graph):
        axes = _axes_of(op, graph)
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if axes is None or len(axes) != 1 or out.dtype != "int32" \
                or x.dtype not in ("int8", "float32"):
            return None
        data = x.data.reshape(x.shape)
        if x.dtype == "float32" and np.isnan(data).any():
            return None
        # numpy's argmax/argmin return the first extreme, as TFLM's strict comparison does.
        return [self.numpy(data, axis=axes[0]).astype(np.int32).reshape(out.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        variant = getattr(ctx, "variant", None)
        x = graph.tensor(op.inputs[0])
        if variant is None and x.dtype != "float32":
            params = emit_layout_params(op, graph, ctx, MAX_DIMS)
            return (f"{self.function}(&{params}, {ctx.ptr(op.inputs[0])}, "
                    f"{ctx.ptr(op.outputs[0])});")
        # The variants and the float32 kernel: the [outer][size][inner] walk, fixed here.
        function = variant.function if variant is not None \
            else self.function.replace("_s8", "_f32")
        params = ctx.symbol("params")
        ctx.static(f"static const mb_arg_walk_params {params} = "
                   f"{c_struct(_arg_walk(op, graph))};")
        return f"{function}(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])});"


def _arg_walk(op: Operator, graph: Graph) -> list[tuple[str, int]]:
    """The input as [outer][size][inner] around the one reduced axis (arg_fast.c)."""
    shape = tuple(graph.tensor(op.inputs[0]).shape)
    (axis,) = resolved_axes(op, graph)
    return [("outer", int(np.prod(shape[:axis], dtype=np.int64))), ("size", int(shape[axis])),
            ("inner", int(np.prod(shape[axis + 1:], dtype=np.int64)))]


def _arg_byte_indices(op: Operator, graph: Graph) -> bool:
    """an axis of at most 256 values (the indices are kept in bytes)"""
    return dict(_arg_walk(op, graph))["size"] <= 256


def _arg_variants(opcode: str, function: str) -> tuple[KernelVariant, ...]:
    return (
        KernelVariant(
            opcode=opcode, name="fast", function=f"{function}_fast", sources=("arg_fast.c",),
            rank=10,
            description="portable C: the [outer][size][inner] walk fixed at compile time, rows "
                        "scanned two values a step, ARG_MIN as ARG_MAX of ~v"),
        KernelVariant(
            opcode=opcode, name="dsp", function=f"{function}_dsp",
            sources=("arg_fast.c", "arg_dsp.c"), features=frozenset({"dsp"}), rank=20,
            accepts=_arg_byte_indices,
            description="Arm DSP: along a strided axis four columns a word, SSUB8 and SEL keep "
                        "each lane's best value and byte index; rows as fast"),
    )


@register
class ArgMax(_Arg):
    opcode = "ARG_MAX"
    function = "mb_arg_max_s8"
    numpy = staticmethod(np.argmax)
    variants = _arg_variants("ARG_MAX", "mb_arg_max_s8")


@register
class ArgMin(_Arg):
    opcode = "ARG_MIN"
    function = "mb_arg_min_s8"
    numpy = staticmethod(np.argmin)
    variants = _arg_variants("ARG_MIN", "mb_arg_min_s8")
