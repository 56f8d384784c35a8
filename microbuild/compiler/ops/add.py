"""ADD (int8, broadcasting, fused activation), bit-exact with TFLM's reference_integer_ops::Add.

Parameters follow TFLM's CalculateOpDataAdd: both inputs are rescaled to twice the larger input
scale with 20 bits of headroom (left_shift), and the int32 sum is rescaled to the output scale.
"""

from __future__ import annotations

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import f32, fused_activation
from microbuild.compiler.f32 import arith as arith_f32
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.broadcast_binary import BroadcastBinaryLowering, rescale_pair_params
from microbuild.compiler.quant import activation_range_int8, quantize_multiplier_smaller_than_one
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

# TFLM uses 20 for int8 (15 for int16): inputs of at most 9 bits keep 2 bits of int32 headroom.
LEFT_SHIFT = 20
LEFT_SHIFT_INT16 = 15


def add_params(scale1: float, zp1: int, scale2: float, zp2: int, scale_out: float, zp_out: int,
               activation: str, dtype: str = "int8") -> dict[str, int]:
    """The mb_add_s8_params fields, computed in double from the float32 scales as TFLM does (for
    int16 operands: 15 bits of left shift instead of 20, and the int16 range)."""
    left_shift = LEFT_SHIFT_INT16 if dtype == "int16" else LEFT_SHIFT
    so = f32(scale_out)
    fields, twice_max_input_scale = rescale_pair_params(scale1, zp1, scale2, zp2, left_shift)
    mo, sho = quantize_multiplier_smaller_than_one(
        twice_max_input_scale / ((1 << left_shift) * so))
    act_min, act_max = activation_range_int8(activation, so, zp_out, dtype)
    return {
        **fields,
        "output_multiplier": mo, "output_shift": sho, "output_offset": zp_out,
        "activation_min": act_min, "activation_max": act_max,
    }


def add_operand_params(op: Operator, graph: Graph) -> dict[str, int]:
    """``add_params`` for this op's operands (ADD and SUB share them)."""
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    return add_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point,
                      fused_activation(op), out.dtype)


def add_scale_reasons(op: Operator, graph: Graph, dtype: str) -> list[str]:
    """TFLM requires every multiplier below 1 (QuantizeMultiplierSmallerThanOneExp); ADD's and
    SUB's output one is not when the output scale is under 2^-19 of the larger input scale."""
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    left_shift = LEFT_SHIFT_INT16 if dtype == "int16" else LEFT_SHIFT
    if 2.0 * max(f32(a.scale), f32(b.scale)) >= (1 << left_shift) * f32(out.scale):
        return [f"output scale {out.scale} is too small against input scales "
                f"{a.scale}, {b.scale} (TFLM needs an output multiplier below 1)"]
    return []


# add_dsp.c's dsp_lut tables: 256 int32 per input.
LUT_SCRATCH_BYTES = 2 * 256 * 4


@register
class Add(BroadcastBinaryLowering):
    opcode = "ADD"
    # arith_s32.c: the int32 path (microbuild/compiler/int32_arith.py).
    kernel_sources = ("add.c", "broadcast.c") + int32_arith.KERNEL_SOURCES
    float32_sources = arith_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/add.h", int32_arith.HEADER, arith_f32.HEADER)
    # Every variant walks broadcasts like the reference (a stride-0 operand is rescaled once per
    # run); their exactness argument needs LEFT_SHIFT < 23 (add_portable.c).
    variants = (
        KernelVariant(
            opcode="ADD", name="fast", function="mb_add_s8_fast", sources=("add_portable.c",),
            rank=10,
            description="portable C: 32-bit exact rescaling steps, broadcast operand rescaled "
                        "once"),
        KernelVariant(
            opcode="ADD", name="dsp", function="mb_add_s8_dsp", sources=("add_dsp.c",),
            features=frozenset({"dsp"}), rank=20,
            description="Arm DSP: one SMMULR per rescaling step, 2 elements per iteration"),
        KernelVariant(
            opcode="ADD", name="dsp_lut", function="mb_add_s8_dsp_lut", sources=("add_dsp.c",),
            features=frozenset({"dsp"}), rank=15, scratch=lambda op, graph: LUT_SCRATCH_BYTES,
            description="Arm DSP: dsp's arithmetic with each input's rescaling looked up in two "
                        "256-entry tables built in scratch per call (2 KiB): faster on large "
                        "ADDs, slower on small ones (the default stays dsp; tuning picks it "
                        "where it measures faster)"),
        KernelVariant(
            opcode="ADD", name="mve", function="mb_add_s8_mve", sources=("add_mve.c",),
            features=frozenset({"mve"}), rank=30,
            description="Helium: 4 int32 lanes (VMLA, VQRDMULH, VRSHL), tail-predicated"),
        KernelVariant(
            opcode="ADD", name="fast_s16", function="mb_add_s16_fast",
            sources=("add_portable.c",), rank=10, activation_dtype="int16",
            description="portable C, 16x8: fast's 32-bit exact steps on int16 elements"),
        KernelVariant(
            opcode="ADD", name="dsp_s16", function="mb_add_s16_dsp", sources=("add_dsp.c",),
            features=frozenset({"dsp"}), rank=20, activation_dtype="int16",
            description="Arm DSP, 16x8: one SMMULR per step, two elements a word (each "
                        "element's x * 2^16 is one shift or mask of the loaded word)"),
        KernelVariant(
            opcode="ADD", name="mve_s16", function="mb_add_s16_mve", sources=("add_mve.c",),
            features=frozenset({"mve"}), rank=30, activation_dtype="int16",
            description="Helium, 16x8: mve's lanes with halfword loads and stores"),
    )

    function = "mb_add"
    params_type = "mb_add_s8_params"
    compute = staticmethod(lambda a, b: a + b)

    def quantized_params(self, op: Operator, graph: Graph) -> dict[str, int]:
        return add_operand_params(op, graph)

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        return add_scale_reasons(op, graph, dtype)
