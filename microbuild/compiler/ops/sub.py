"""SUB (int8 and 16x8, broadcasting, fused activation), bit-exact with TFLM's SUB.

TFLM's SUB is ADD's arithmetic with the rescaled second input subtracted rather than added
(reference_ops::Sub and BroadcastQuantSubSlow): both inputs are rescaled to twice the larger input
scale after a left shift of 20 bits (15 for int16), the difference is rescaled to the output and
clamped to the fused activation's range. Negating the second multiplier and adding instead would
round ties differently, so the kernel subtracts.

The parameters are ADD's (``add_params``, in double). tflite-micro's current sub_common.cc writes
them as float32 expressions, but the interpreter microbuild is checked against (the tflite_micro
wheel) rounds 16x8 models' multipliers as double arithmetic does: the float32 version is off by
one in some int16 outputs, the double one matches. int16 always takes the general path: TFLM has
no power-of-two int16 SUB and ignores the converter's ``pot_scale_int16`` option.

int32/float32 subtraction of constants (shape arithmetic) is evaluated at compile time, with the
fused activation applied as TFLM's SUB does for both types (its int32 ADD ignores it).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import fused_activation
from microbuild.compiler.f32 import arith as arith_f32
from microbuild.compiler.ops.add import add_operand_params, add_scale_reasons
from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.broadcast_binary import BroadcastBinaryLowering
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT32_ACTIVATION_RANGE = {"NONE": (_INT32_MIN, _INT32_MAX), "RELU": (0, _INT32_MAX),
                           "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}


@register
class Sub(BroadcastBinaryLowering):
    opcode = "SUB"
    # arith_s32.c: the int32 path (microbuild/compiler/int32_arith.py).
    kernel_sources = ("sub.c", "broadcast.c") + int32_arith.KERNEL_SOURCES
    headers = ("microbuild/kernels/sub.h", int32_arith.HEADER, arith_f32.HEADER)
    # ADD's variant rows subtracting the second rescaled input (add_portable.c: why exact).
    variants = (
        KernelVariant(
            opcode="SUB", name="fast", function="mb_sub_s8_fast", sources=("add_portable.c",),
            rank=10,
            description="portable C: ADD's 32-bit exact rescaling steps, broadcast operand "
                        "rescaled once"),
        KernelVariant(
            opcode="SUB", name="dsp", function="mb_sub_s8_dsp", sources=("add_dsp.c",),
            features=frozenset({"dsp"}), rank=20,
            description="Arm DSP: one SMMULR per rescaling step, 2 elements per iteration"),
        KernelVariant(
            opcode="SUB", name="mve", function="mb_sub_s8_mve", sources=("add_mve.c",),
            features=frozenset({"mve"}), rank=30,
            description="Helium: ADD's mve lanes subtracting (VSUB), tail-predicated"),
        KernelVariant(
            opcode="SUB", name="fast_s16", function="mb_sub_s16_fast",
            sources=("add_portable.c",), rank=10, activation_dtype="int16",
            description="portable C, 16x8: fast's 32-bit exact steps on int16 elements"),
        KernelVariant(
            opcode="SUB", name="dsp_s16", function="mb_sub_s16_dsp", sources=("add_dsp.c",),
            features=frozenset({"dsp"}), rank=20, activation_dtype="int16",
            description="Arm DSP, 16x8: ADD's dsp_s16 row subtracting, two elements a word"),
        KernelVariant(
            opcode="SUB", name="mve_s16", function="mb_sub_s16_mve", sources=("add_mve.c",),
            features=frozenset({"mve"}), rank=30, activation_dtype="int16",
            description="Helium, 16x8: mve's lanes with halfword loads and stores"),
    )
    function = "mb_sub"
    params_type = "mb_add_s8_params"
    compute = staticmethod(lambda a, b: a - b)

    def quantized_params(self, op: Operator, graph: Graph) -> dict[str, int]:
        return add_operand_params(op, graph)

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        return add_scale_reasons(op, graph, dtype)

    def fold(self, op: Operator, graph: Graph):
        values = super().fold(op, graph)
        if values is not None and values[0].dtype == np.int32:
            # Unlike ADD, TFLM's int32 SUB applies the fused activation (SubWithActivation,
            # CalculateActivationRange): to the wrapped int32 difference.
            low, high = _INT32_ACTIVATION_RANGE.get(fused_activation(op),
                                                    (_INT32_MIN, _INT32_MAX))
            values = [np.clip(values[0], low, high).astype(np.int32)]
        return values
