"""PRELU (int8; int16 input with int8 alpha), alpha broadcast against the input, bit-exact with
TFLM's BroadcastPrelu4DSlow.

TFLM's CalculatePreluParams (in double, QuantizeMultiplier, either may shift left):
multiplier 1 = input_scale / output_scale for (input - zp) >= 0, multiplier 2 =
input_scale * alpha_scale / output_scale for the product (input - zp) * (alpha - alpha_zp) when
negative. TFLM's kernel handles at most 4 dimensions. Keras' PReLU gives a constant alpha of the
input's shape, or with size-1 dimensions along ``shared_axes``.

The int16 kernel takes alpha widened to int16 at compile time (so it must be constant there).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import (
    binary_broadcast_reasons,
    c_designated,
    f32,
    input0_not_broadcast,
    plan_broadcast,
)
from microbuild.compiler.f32 import arith as arith_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import quantize_multiplier
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

MAX_RANK = 4
_VALUE_BITS = {"int8": 9, "int16": 17}  # |input - zero point| fits in this many bits


def prelu_params(input_scale: float, input_zp: int, alpha_scale: float, alpha_zp: int,
                 output_scale: float, output_zp: int) -> dict[str, int]:
    m1, s1 = quantize_multiplier(f32(input_scale) / f32(output_scale))
    m2, s2 = quantize_multiplier(f32(input_scale) * f32(alpha_scale) / f32(output_scale))
    return {"input_offset": -input_zp, "alpha_offset": -alpha_zp, "output_offset": output_zp,
            "output_multiplier_1": m1, "output_shift_1": s1,
            "output_multiplier_2": m2, "output_shift_2": s2}


@register
class Prelu(OpLowering):
    opcode = "PRELU"
    kernel_sources = ("prelu.c", "broadcast.c")
    float32_sources = arith_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/prelu.h", arith_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    variants = (
        KernelVariant(
            opcode="PRELU", name="fast", function="mb_prelu_s8_fast", sources=("prelu_fast.c",),
            rank=10,
            description="portable C: quant_fast.h's exact requantization, parameters in "
                        "registers"),
        KernelVariant(
            opcode="PRELU", name="fast_s16", function="mb_prelu_s16_fast",
            sources=("prelu_fast.c",), rank=10, activation_dtype="int16",
            description="portable C, 16x8: fast's row on int16 elements"),
        KernelVariant(
            opcode="PRELU", name="mve", function="mb_prelu_s8_mve", sources=("prelu_mve.c",),
            features=frozenset({"mve"}), rank=30,
            description="Helium: 4 int32 lanes, both rescalings computed, VPSEL keeps one"),
        KernelVariant(
            opcode="PRELU", name="mve_s16", function="mb_prelu_s16_mve",
            sources=("prelu_mve.c",), features=frozenset({"mve"}), rank=30,
            activation_dtype="int16",
            description="Helium, 16x8: mve's lanes with halfword loads and stores"),
    )

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects 2 inputs and 1 output, has {op.inputs} and {op.outputs}"]
        if is_float32(op, graph):
            rank = max(len(graph.tensor(t).shape) for t in (*op.inputs, *op.outputs))
            if rank > MAX_RANK:
                return [f"has {rank} dimensions; TFLM's PRELU handles at most {MAX_RANK}"]
            return arith_f32.reasons(op, graph)
        x, alpha = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        reasons = []
        if x.dtype != out.dtype:
            reasons.append(f"input is {x.dtype} but output {out.dtype}")
        if alpha.dtype != "int8":
            reasons.append(f"alpha '{alpha.name}' is {alpha.dtype}; TFLM's quantized PRELU "
                           "takes int8 alpha")
        for role, t in (("input", x), ("alpha", alpha), ("output", out)):
            if t.quant is None or t.quant.per_channel:
                reasons.append(f"{role} '{t.name}' must be quantized per tensor")
            if t.is_dynamic:
                reasons.append(f"{role} '{t.name}' has a dynamic shape {t.shape_signature}")
        if reasons:
            return reasons
        if x.dtype == "int16" and not alpha.is_constant:
            reasons.append("int16 PRELU needs a constant alpha (microbuild widens it to int16 at "
                           "compile time)")
        rank = max(len(t.shape) for t in (x, alpha, out))
        if rank > MAX_RANK:
            reasons.append(f"has {rank} dimensions; TFLM's PRELU handles at most {MAX_RANK}")
        reasons += binary_broadcast_reasons(op, graph)
        p = prelu_params(x.scale, x.zero_point, alpha.scale, alpha.zero_point, out.scale,
                         out.zero_point)
        bits = _VALUE_BITS[x.dtype]
        if p["output_shift_1"] > 31 - bits or p["output_shift_2"] > 31 - bits - 9:
            reasons.append(f"input scale {x.scale}, alpha scale {alpha.scale} and output scale "
                           f"{out.scale} need a left shift that overflows int32")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return arith_f32.emit(op, graph, ctx)
        x, alpha = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        p = prelu_params(x.scale, x.zero_point, alpha.scale, alpha.zero_point, out.scale,
                         out.zero_point)
        params, shape = ctx.symbol("params"), ctx.symbol("shape")
        ctx.static(f"static const mb_prelu_params {params} = {c_designated(p)};")
        plan = plan_broadcast(x.shape, alpha.shape, out.shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        if out.dtype == "int16":
            widened = ctx.const_array(ctx.symbol("alpha_s16"),
                                      np.asarray(alpha.data, dtype=np.int16), "int16_t")
            return self.kernel_call(op, graph, ctx, "mb_prelu_s16", [
                f"&{params}", f"&{shape}", ctx.ptr(op.inputs[0]), widened,
                ctx.ptr(op.outputs[0])])
        return self.kernel_call(op, graph, ctx, "mb_prelu_s8", [
            f"&{params}", f"&{shape}", ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1]),
            ctx.ptr(op.outputs[0])])

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return input0_not_broadcast(op, graph)
