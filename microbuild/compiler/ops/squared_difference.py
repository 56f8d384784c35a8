"""SQUARED_DIFFERENCE (int8, int16, broadcasting), bit-exact with TFLM's quantized kernel.

TFLM's PrepareQuantized: both inputs are rescaled to twice the larger input scale (multipliers
below 1, in double) after a left shift of 7 bits (int8; 0 for int16, whose zero points must be 0);
the difference of the two is squared in int32 and rescaled by
``twice_max_input_scale**2 / ((1 << 2 * left_shift) * output_scale)`` (the denominator is a
float32 product in TFLM) with QuantizeMultiplier, which may shift left. The output is clamped to the
type's range (no fused activation). TFLM broadcasts over at most 4 dimensions.

The int8 variant "lut" (every CPU, squared_difference_lut.c) looks each input's rescaled value up
in a 256-entry int16 table computed here with the kernel's integer arithmetic; the int16 variant
"fast_s16" (squared_difference_fast.c) takes the reference's arguments.

int32/float32 constants are evaluated at compile time.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import arith as arith_f32
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.broadcast_binary import BroadcastBinaryLowering, rescale_pair_params
from microbuild.compiler.ops.maximum_minimum import broadcast_rank_reasons
from microbuild.compiler.quant import multiply_by_quantized_multiplier, quantize_multiplier
from microbuild.compiler.elementwise import c_designated, plan_broadcast
from microbuild.compiler.ops.base import EmitContext
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

LEFT_SHIFT = {"int8": 7, "int16": 0}
_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767)}


def squared_difference_params(scale1: float, zp1: int, scale2: float, zp2: int,
                              scale_out: float, zp_out: int, dtype: str) -> dict[str, int]:
    left_shift = LEFT_SHIFT[dtype]
    fields, twice = rescale_pair_params(scale1, zp1, scale2, zp2, left_shift)
    denominator = float(np.float32(1 << (2 * left_shift)) * np.float32(scale_out))
    mo, sho = quantize_multiplier(twice * twice / denominator)
    low, high = _RANGE[dtype]
    return {
        **fields,
        "output_multiplier": mo, "output_shift": sho, "output_offset": zp_out,
        "activation_min": low, "activation_max": high,
    }

def _largest_difference(p: dict[str, int], dtype: str) -> int:
    """The largest |scaled1 - scaled2| any pair of input values gives."""
    low, high = _RANGE[dtype]

    def extremes(k: int) -> list[int]:
        return [multiply_by_quantized_multiplier((p[f"input{k}_offset"] + v) << p["left_shift"],
                                                 p[f"input{k}_multiplier"], p[f"input{k}_shift"])
                for v in (low, high)]

    e1, e2 = extremes(1), extremes(2)
    return max(abs(x - y) for x in e1 for y in e2)


def scaled_table(p: dict[str, int], k: int) -> np.ndarray:
    """Input ``k``'s rescaled values (offset, left shift, multiplier), indexed by value & 0xff."""
    table = np.zeros(256, np.int16)
    for v in range(-128, 128):
        table[v & 0xFF] = multiply_by_quantized_multiplier(
            (p[f"input{k}_offset"] + v) << p["left_shift"], p[f"input{k}_multiplier"],
            p[f"input{k}_shift"])
    return table


@register
class SquaredDifference(BroadcastBinaryLowering):
    opcode = "SQUARED_DIFFERENCE"
    kernel_sources = ("squared_difference.c", "broadcast.c")
    headers = ("microbuild/kernels/squared_difference.h", arith_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    int32_kernel = False
    function = "mb_squared_difference"
    params_type = "mb_squared_difference_params"
    # int32 (wrapping, as TFLM's int32 kernel) and float32 constants; int8 runs on the device.
    compute = staticmethod(lambda a, b: (a - b) * (a - b))
    variants = (
        KernelVariant(
            opcode="SQUARED_DIFFERENCE", name="lut", function="mb_squared_difference_s8_lut",
            sources=("squared_difference_lut.c",), rank=10, const_table=True,
            description="portable C: each input's rescaling looked up in a 256-entry int16 "
                        "table built at compile time (1 KiB per op)"),
        KernelVariant(
            opcode="SQUARED_DIFFERENCE", name="fast_s16",
            function="mb_squared_difference_s16_fast", sources=("squared_difference_fast.c",),
            rank=10, activation_dtype="int16",
            description="portable C, 16x8: quant_fast.h's exact requantization for the three "
                        "steps, a broadcast operand rescaled once"),
        KernelVariant(
            opcode="SQUARED_DIFFERENCE", name="dsp_s16",
            function="mb_squared_difference_s16_dsp", sources=("squared_difference_fast.c",),
            features=frozenset({"dsp"}), rank=20, activation_dtype="int16",
            description="Arm DSP, 16x8: fast_s16 with each input's rescaling one SMMULR"),
    )

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        variant = getattr(ctx, "variant", None)
        if variant is None or variant.name in ("fast_s16", "dsp_s16"):  # the reference's arguments
            return super().emit(op, graph, ctx)
        a, b = (graph.tensor(i) for i in op.inputs)
        p = self.quantized_params(op, graph)
        params, lut, shape = ctx.symbol("params"), ctx.symbol("lut"), ctx.symbol("shape")
        ctx.static(f"static const {self.params_type} {params} = {c_designated(p)};")
        tables = [ctx.const_array(ctx.symbol(f"scaled{k}"), scaled_table(p, k), "int16_t")
                  for k in (1, 2)]
        ctx.static(f"static const mb_squared_difference_lut {lut} = "
                   f"{{ &{params}, {tables[0]}, {tables[1]} }};")
        plan = plan_broadcast(a.shape, b.shape, graph.tensor(op.outputs[0]).shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        return (f"{variant.function}(&{lut}, &{shape}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])});")

    def quantized_params(self, op: Operator, graph: Graph) -> dict[str, int]:
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        return squared_difference_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale,
                                         out.zero_point, out.dtype)

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        reasons = broadcast_rank_reasons(op, graph, 4)
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        p = squared_difference_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale,
                                      out.zero_point, dtype)
        if p["output_shift"] > 0:
            square = _largest_difference(p, dtype) ** 2
            if square << p["output_shift"] >= 1 << 31:
                reasons.append(
                    f"output scale {out.scale} is so small against input scales {a.scale}, "
                    f"{b.scale} that the squared difference shifted left by "
                    f"{p['output_shift']} overflows int32 (as it would in TFLM)")
        return reasons
