"""MUL (int8, broadcasting, fused activation), bit-exact with TFLM's reference_integer_ops::Mul.

Parameters follow TFLM's CalculateOpDataMul: the product of the zero-point-corrected inputs is
rescaled by input1_scale * input2_scale / output_scale (QuantizeMultiplier, may shift left).
"""

from __future__ import annotations

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import f32, fused_activation
from microbuild.compiler.f32 import arith as arith_f32
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.broadcast_binary import BroadcastBinaryLowering
from microbuild.compiler.quant import activation_range_int8, quantize_multiplier
from microbuild.compiler.variants import KernelVariant, Refusal
from microbuild.model.ir import Graph, Operator


def mul_params(scale1: float, zp1: int, scale2: float, zp2: int, scale_out: float, zp_out: int,
               activation: str, dtype: str = "int8") -> dict[str, int]:
    """The mb_mul_s8_params fields, computed in double from the float32 scales as TFLM does."""
    real_multiplier = f32(scale1) * f32(scale2) / f32(scale_out)
    multiplier, shift = quantize_multiplier(real_multiplier)
    act_min, act_max = activation_range_int8(activation, f32(scale_out), zp_out, dtype)
    return {
        "input1_offset": -zp1, "input2_offset": -zp2,
        "output_multiplier": multiplier, "output_shift": shift, "output_offset": zp_out,
        "activation_min": act_min, "activation_max": act_max,
    }


def _smmulr_fits(op: Operator, graph: Graph) -> bool | Refusal:
    """The output shift's left part at most 14: mul_dsp.c's SMMULR doubles the shifted product
    (at most 255 * 255 before the shift), which must stay in int32."""
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    _, shift = quantize_multiplier(f32(a.scale) * f32(b.scale) / f32(out.scale))
    if shift > 14:
        return Refusal(f"a left shift of {shift} (the doubled product would overflow int32)")
    return True


@register
class Mul(BroadcastBinaryLowering):
    opcode = "MUL"
    # arith_s32.c: the int32 path (microbuild/compiler/int32_arith.py).
    kernel_sources = ("mul.c", "broadcast.c") + int32_arith.KERNEL_SOURCES
    headers = ("microbuild/kernels/mul.h", int32_arith.HEADER, arith_f32.HEADER)
    variants = (
        KernelVariant(
            opcode="MUL", name="fast", function="mb_mul_s8_fast", sources=("mul_portable.c",),
            rank=10,
            description="portable C: quant_fast.h's exact requantization, parameters in "
                        "registers"),
        KernelVariant(
            opcode="MUL", name="dsp", function="mb_mul_s8_dsp", sources=("mul_dsp.c",),
            features=frozenset({"dsp"}), rank=20, accepts=_smmulr_fits,
            description="Arm DSP: 4 elements a word (SXTAB16 adds the offsets, SMULBB/SMULTT "
                        "multiply), one SMMULR per requantization"),
        KernelVariant(
            opcode="MUL", name="dsp_s16", function="mb_mul_s16_dsp", sources=("mul_dsp.c",),
            features=frozenset({"dsp"}), rank=20, activation_dtype="int16",
            description="Arm DSP, 16x8: 2 elements a word (SMULBB/SMULTT), SMLAL's 64-bit "
                        "requantization"),
        KernelVariant(
            opcode="MUL", name="mve", function="mb_mul_s8_mve", sources=("mul_mve.c",),
            features=frozenset({"mve"}), rank=30,
            description="Helium: 4 int32 lanes (VMUL, VQRDMULH, VRSHL), tail-predicated"),
        KernelVariant(
            opcode="MUL", name="fast_s16", function="mb_mul_s16_fast",
            sources=("mul_portable.c",), rank=10, activation_dtype="int16",
            description="portable C, 16x8: fast's row on int16 elements"),
        KernelVariant(
            opcode="MUL", name="mve_s16", function="mb_mul_s16_mve", sources=("mul_mve.c",),
            features=frozenset({"mve"}), rank=30, activation_dtype="int16",
            description="Helium, 16x8: mve's lanes with halfword loads and stores"),
    )
    function = "mb_mul"
    params_type = "mb_mul_s8_params"
    compute = staticmethod(lambda a, b: a * b)

    def quantized_params(self, op: Operator, graph: Graph) -> dict[str, int]:
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        return mul_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale,
                          out.zero_point, fused_activation(op), out.dtype)

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        # (in1 - zp1) * (in2 - zp2) is at most 2^16 in magnitude; TFLM shifts it left in int32
        # before the Q31 multiply, so a left shift beyond 15 would overflow.
        # For int16 operands the product already has 31 bits: no left shift at all.
        _, shift = quantize_multiplier(f32(a.scale) * f32(b.scale) / f32(out.scale))
        if shift > (0 if out.dtype == "int16" else 15):
            return [f"rescale multiplier {a.scale} * {b.scale} / {out.scale} needs a left "
                    f"shift of {shift}, which overflows int32"]
        return []
