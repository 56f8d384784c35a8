"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: int8 inputs (broadcasting), bool
output, bit-exact with TFLM's *WithScaling comparisons; float32 inputs compared as they are
(TFLM's ComparisonImpl<float>, runtime/kernels/compare_f32.c).

TFLM's ComparisonsPrepare gives each int8 input an offset (minus its zero point), a left shift of
8 and a multiplier from the input's *own scale* (QuantizeMultiplierSmallerThanOneExp(scale), so
every scale must be below 1); both inputs are rescaled so and the int32 results compared. It does
this even when the two inputs share a quantization, and with scales below 2^-8 neighbouring
values can rescale to one number, so the kernels always rescale. TFLM broadcasts comparisons
over at most 4 dimensions.

The "keys" variant (every CPU, comparisons_keys.c) does the rescaling at compile time: each input
gets a 256-entry table of its values' ranks among both inputs' rescaled values, so the device
compares two looked-up keys; the ranks order and tie exactly as the rescaled int32 values do.

Constants are evaluated at compile time: int32/int64/float32/bool values compared directly (shape
arithmetic), int8 values with the same rescaling as the kernel.
"""

from __future__ import annotations

import operator

import numpy as np

from microbuild.compiler.elementwise import (
    binary_broadcast_reasons,
    c_designated,
    f32,
    operand_reasons,
    plan_broadcast,
)
from microbuild.compiler.f32 import is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.maximum_minimum import broadcast_rank_reasons
from microbuild.compiler.quant import (
    multiply_by_quantized_multiplier,
    quantize_multiplier_smaller_than_one,
)
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

LEFT_SHIFT = 8


def comparison_params(scale1: float, zp1: int, scale2: float, zp2: int) -> dict[str, int]:
    m1, sh1 = quantize_multiplier_smaller_than_one(f32(scale1))
    m2, sh2 = quantize_multiplier_smaller_than_one(f32(scale2))
    return {"input1_offset": -zp1, "input1_multiplier": m1, "input1_shift": sh1,
            "input2_offset": -zp2, "input2_multiplier": m2, "input2_shift": sh2,
            "left_shift": LEFT_SHIFT}


def _rescaled(values: np.ndarray, offset: int, multiplier: int, shift: int) -> np.ndarray:
    table = {v: multiply_by_quantized_multiplier((offset + v) << LEFT_SHIFT, multiplier, shift)
             for v in range(-128, 128)}
    return np.vectorize(table.__getitem__, otypes=[np.int64])(values.astype(np.int64))


def comparison_keys(p: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Both inputs' key tables, indexed by the int8 value's byte (value & 0xff): the rank of the
    value's rescaling among the 512 rescaled values of both inputs."""
    values = np.arange(-128, 128, dtype=np.int64)
    x = _rescaled(values, p["input1_offset"], p["input1_multiplier"], p["input1_shift"])
    y = _rescaled(values, p["input2_offset"], p["input2_multiplier"], p["input2_shift"])
    ranks = np.unique(np.concatenate([x, y]))
    index = values & 0xFF
    keys1, keys2 = np.zeros(256, np.uint16), np.zeros(256, np.uint16)
    keys1[index] = np.searchsorted(ranks, x)
    keys2[index] = np.searchsorted(ranks, y)
    return keys1, keys2


def _int8_instance(op: Operator, graph: Graph) -> bool:
    """The keys variant takes the int8 comparisons (float32 ones run compare_f32.c)."""
    return all(graph.tensor(t).dtype == "int8" for t in op.inputs)


def _keys_variant(opcode: str, function: str) -> tuple[KernelVariant, ...]:
    return (KernelVariant(
        opcode=opcode, name="keys", function=function, sources=("comparisons_keys.c",),
        rank=10, accepts=_int8_instance, const_table=True,
        description="portable C: each input's rescaling looked up as a 16-bit rank in a "
                    "256-entry table built at compile time (1 KiB per op)"),)


class _Comparison(OpLowering):
    kernel_sources = ("comparisons.c", "broadcast.c")
    float32_sources = ("compare_f32.c",)
    headers = ("microbuild/kernels/comparisons.h", "microbuild/kernels/compare_f32.h")
    dtypes = frozenset({"int8", "bool", "float32"})
    function: str
    compare = None

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return (operand_reasons(op, graph, 2, ("float32", "float32"), "bool")
                    or binary_broadcast_reasons(op, graph)
                    or broadcast_rank_reasons(op, graph, 4))
        reasons = operand_reasons(op, graph, 2, ("int8", "int8"), "bool")
        if reasons:
            return reasons
        reasons = binary_broadcast_reasons(op, graph) or broadcast_rank_reasons(op, graph, 4)
        for k, t in enumerate(op.inputs):
            tensor = graph.tensor(t)
            if not f32(tensor.scale) < 1.0:
                reasons.append(f"input {k} '{tensor.name}' has scale {tensor.scale}; TFLM's "
                               "int8 comparisons use the scale as a multiplier and need it "
                               "below 1")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
            return None
        a, b = (graph.tensor(i) for i in op.inputs)
        compare = type(self).compare
        if a.dtype != b.dtype or graph.tensor(op.outputs[0]).dtype != "bool":
            return None
        if a.dtype in ("int32", "int64", "float32", "bool"):
            return [np.asarray(compare(a.data, b.data), dtype=bool)]
        if a.dtype == "int8" and not self.check(op, graph):
            p = comparison_params(a.scale, a.zero_point, b.scale, b.zero_point)
            x = _rescaled(a.data, p["input1_offset"], p["input1_multiplier"], p["input1_shift"])
            y = _rescaled(b.data, p["input2_offset"], p["input2_multiplier"], p["input2_shift"])
            return [np.asarray(compare(x, y), dtype=bool)]
        return None

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        if a.dtype == "float32":
            shape = ctx.symbol("shape")
            plan = plan_broadcast(a.shape, b.shape, out.shape)
            ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
            return (f"mb_compare_f32(MB_COMPARE_F32_{self.opcode}, &{shape}, "
                    f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                    f"{ctx.ptr(op.outputs[0])});")
        p = comparison_params(a.scale, a.zero_point, b.scale, b.zero_point)
        params, shape = ctx.symbol("params"), ctx.symbol("shape")
        variant = getattr(ctx, "variant", None)
        function = self.function
        if variant is not None:  # keys: the rescaling as two rank tables
            function = variant.function
            keys = [ctx.const_array(ctx.symbol(f"keys{k}"), table, "uint16_t")
                    for k, table in enumerate(comparison_keys(p), 1)]
            ctx.static(f"static const mb_comparison_keys {params} = "
                       f"{{ {keys[0]}, {keys[1]} }};")
        else:
            ctx.static(f"static const mb_comparison_s8_params {params} = {c_designated(p)};")
        plan = plan_broadcast(a.shape, b.shape, out.shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        return (f"{function}(&{params}, &{shape}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])});")


@register
class Equal(_Comparison):
    opcode = "EQUAL"
    function = "mb_equal_s8"
    variants = _keys_variant("EQUAL", "mb_equal_s8_keys")
    compare = staticmethod(operator.eq)


@register
class NotEqual(_Comparison):
    opcode = "NOT_EQUAL"
    function = "mb_not_equal_s8"
    variants = _keys_variant("NOT_EQUAL", "mb_not_equal_s8_keys")
    compare = staticmethod(operator.ne)


@register
class Less(_Comparison):
    opcode = "LESS"
    function = "mb_less_s8"
    variants = _keys_variant("LESS", "mb_less_s8_keys")
    compare = staticmethod(operator.lt)


@register
class LessEqual(_Comparison):
    opcode = "LESS_EQUAL"
    function = "mb_less_equal_s8"
    variants = _keys_variant("LESS_EQUAL", "mb_less_equal_s8_keys")
    compare = staticmethod(operator.le)


@register
class Greater(_Comparison):
    opcode = "GREATER"
    function = "mb_greater_s8"
    variants = _keys_variant("GREATER", "mb_greater_s8_keys")
    compare = staticmethod(operator.gt)


@register
class GreaterEqual(_Comparison):
    opcode = "GREATER_EQUAL"
    function = "mb_greater_equal_s8"
    variants = _keys_variant("GREATER_EQUAL", "mb_greater_equal_s8_keys")
    compare = staticmethod(operator.ge)
