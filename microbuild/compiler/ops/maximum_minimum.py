"""MAXIMUM and MINIMUM (int8, int16, and non-quantized int32 as the audio front end's
clip_by_value uses it; broadcasting), bit-exact with TFLM's MaximumMinimumBroadcastSlow, which
compares the raw values and copies one. The int32 path is microbuild/compiler/int32_arith.py.

TFLM does not rescale (its MAXIMUM/MINIMUM have no prepare step): the result means something only
when both inputs and the output share one quantization, which the converter arranges (inserting a
QUANTIZE where they would differ). microbuild refuses other instances rather than compute a
meaningless raw comparison. TFLM broadcasts over at most 5 dimensions.

int8 variants: "dsp" (four bytes per SSUB8 + SEL) and "mve" (sixteen lanes per VMAX/VMIN).

Constants are evaluated at compile time: int32/int64/float32 (e.g. the minimum of shape values)
and int8/int16 (the raw comparison TFLM does).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import f32, fold_arithmetic, plan_broadcast
from microbuild.compiler.f32 import arith as arith_f32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.broadcast_binary import BroadcastBinaryLowering
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

# TFLM's MaximumMinimumBroadcastSlow: NdArrayDesc<5> when the shapes differ.
MAX_BROADCAST_RANK = 5


def same_quantization_reasons(op: Operator, graph: Graph,
                              roles: list[tuple[str, int]]) -> list[str]:
    """TFLM copies raw values between these tensors: they must share scale and zero point."""
    tensors = [(role, graph.tensor(t)) for role, t in roles]
    first_role, first = tensors[0]
    reasons = []
    for role, t in tensors[1:]:
        if f32(t.scale) != f32(first.scale) or t.zero_point != first.zero_point:
            reasons.append(
                f"{role} '{t.name}' is quantized with scale {t.scale}, zero point {t.zero_point} "
                f"but {first_role} '{first.name}' with scale {first.scale}, zero point "
                f"{first.zero_point}; TFLM's {op.opcode} copies raw values without rescaling, "
                "so they must be quantized the same")
    return reasons


def broadcast_rank_reasons(op: Operator, graph: Graph, max_rank: int) -> list[str]:
    """TFLM's broadcasting kernels for this op handle at most ``max_rank`` dimensions (same-shape
    inputs take the flat path, which has no limit)."""
    shapes = [tuple(graph.tensor(t).shape) for t in op.inputs if t >= 0]
    if all(s == shapes[0] for s in shapes):
        return []
    rank = max(len(graph.tensor(t).shape) for t in [*op.inputs, *op.outputs] if t >= 0)
    if rank > max_rank:
        return [f"broadcasts over {rank} dimensions; TFLM's {op.opcode} broadcasts over at "
                f"most {max_rank}"]
    return []


def fold_raw(op: Operator, graph: Graph, compute) -> list[np.ndarray] | None:
    """int8/int16 constants compared raw, as TFLM does."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
        return None
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    if not a.dtype == b.dtype == out.dtype or out.dtype not in ("int8", "int16"):
        return None
    if same_quantization_reasons(op, graph, [("output", op.outputs[0]), ("input 0", op.inputs[0]),
                                             ("input 1", op.inputs[1])]):
        return None  # refused by check, with the reason
    return [np.asarray(compute(a.data, b.data)).astype(out.dtype)]


# The largest output a broadcast constant operand is expanded to (bytes of flash it costs).
EXPAND_LIMIT = 1024


def _expandable_constant(op: Operator, graph: Graph) -> int | None:
    """The input index of an int8 constant that varies along the last dimension only and is
    broadcast to a small output (each band of whole rows sees the same expanded values), or None."""
    out = graph.tensor(op.outputs[0])
    if out.dtype != "int8" or not out.shape or int(np.prod(out.shape)) > EXPAND_LIMIT:
        return None
    for k, t in enumerate(op.inputs):
        tensor = graph.tensor(t)
        shape = tuple(tensor.shape)
        inner = tuple(d for d in shape if d != 1)
        if (tensor.is_constant and shape != tuple(out.shape) and len(inner) == 1
                and shape[-1] == out.shape[-1] == inner[0]):
            return k
    return None


def _simd_variants(opcode: str, function: str) -> tuple[KernelVariant, ...]:
    return (
        KernelVariant(
            opcode=opcode, name="dsp", function=f"{function}_s8_dsp",
            sources=("maximum_minimum_dsp.c",), features=frozenset({"dsp"}), rank=20,
            description="Arm DSP: four bytes per SSUB8 + SEL, broadcast operands splatted"),
        KernelVariant(
            opcode=opcode, name="mve", function=f"{function}_s8_mve",
            sources=("maximum_minimum_mve.c",), features=frozenset({"mve"}), rank=30,
            description="Helium: sixteen lanes per VMAX/VMIN, tail-predicated"),
    )


class _MaximumMinimum(BroadcastBinaryLowering):
    kernel_sources = ("maximum_minimum.c", "broadcast.c") + int32_arith.KERNEL_SOURCES
    headers = ("microbuild/kernels/maximum_minimum.h", int32_arith.HEADER, arith_f32.HEADER)

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        reasons = same_quantization_reasons(op, graph, [("output", op.outputs[0]),
                                                        ("input 0", op.inputs[0]),
                                                        ("input 1", op.inputs[1])])
        return reasons + broadcast_rank_reasons(op, graph, MAX_BROADCAST_RANK)

    def fold(self, op: Operator, graph: Graph):
        compute = type(self).compute
        return fold_arithmetic(op, graph, compute) or fold_raw(op, graph, compute)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        variant = getattr(ctx, "variant", None)
        k = _expandable_constant(op, graph) if variant is not None else None
        if k is None:
            return super().emit(op, graph, ctx)
        # A per-channel constant expanded to the output's shape at compile time: one flat row
        # instead of a row per pixel.
        out = graph.tensor(op.outputs[0])
        expanded = np.broadcast_to(graph.tensor(op.inputs[k]).data, out.shape)
        args = [ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1])]
        args[k] = ctx.const_array(ctx.symbol("expanded"), expanded, "int8_t")
        shape = ctx.symbol("shape")
        plan = plan_broadcast(out.shape, out.shape, out.shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        return self.kernel_call(op, graph, ctx, f"{self.function}_s8",
                                [f"&{shape}", *args, ctx.ptr(op.outputs[0])])


@register
class Maximum(_MaximumMinimum):
    opcode = "MAXIMUM"
    function = "mb_maximum"
    variants = _simd_variants("MAXIMUM", "mb_maximum")
    # TFLM's MaximumOp: el1 > el2 ? el1 : el2 (so a NaN second operand wins, unlike np.maximum)
    compute = staticmethod(lambda a, b: np.where(a > b, a, b))


@register
class Minimum(_MaximumMinimum):
    opcode = "MINIMUM"
    function = "mb_minimum"
    variants = _simd_variants("MINIMUM", "mb_minimum")
    compute = staticmethod(lambda a, b: np.where(a < b, a, b))
