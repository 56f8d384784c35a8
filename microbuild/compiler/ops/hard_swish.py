"""HARD_SWISH (int8), bit-exact with TFLM: reference_ops::HardSwish with TFLM's HardSwishParams,
evaluated for all 256 inputs at compile time.

x * relu6(x + 3) / 6 is computed in int16 fixed point: the input is moved to a "hires" scale
(x 128), a "reluish" factor in [0, 1] comes from rescaling x so that 3.0 maps to 32768 and
saturating, and the product is rescaled to the output. The int16 steps (saturating, rounding and
truncating multiplies) are reproduced exactly, including C's int16 narrowing.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import f32
from microbuild.compiler.f32 import is_float32, unary as unary_f32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.unary import LutLowering
from microbuild.compiler.quant import INT32_MAX, quantize_multiplier
from microbuild.model.ir import Graph, Operator

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1


def to_int16(x: int) -> int:
    """C's conversion of an int to int16_t (two's-complement wrap)."""
    x &= 0xFFFF
    return x - (1 << 16) if x & 0x8000 else x


def downscale_multiplier_to_int16(multiplier: int) -> int:
    """TFLM's DownScaleInt32ToInt16Multiplier: round a Q31 multiplier to Q15, saturating."""
    rounding_offset = 1 << 15
    if multiplier >= INT32_MAX - rounding_offset:
        return INT16_MAX
    return (multiplier + rounding_offset) >> 16


def saturating_rounding_doubling_high_mul_16(a: int, b: int) -> int:
    if a == b == INT16_MIN:
        return INT16_MAX
    ab = a * b
    num = ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14))
    q = abs(num) // (1 << 15)  # C division truncates toward zero
    return to_int16(q if num >= 0 else -q)


def saturating_doubling_high_mul_16(a: int, b: int) -> int:
    """Like the rounding version but truncating toward zero (ARM's SQDMULH)."""
    if a == b == INT16_MIN:
        return INT16_MAX
    ab = a * b
    q = abs(ab) // (1 << 15)
    return to_int16(q if ab >= 0 else -q)


def rounding_divide_by_pot_16(x: int, exponent: int) -> int:
    """gemmlowp's RoundingDivideByPOT on int16_t: the mask and threshold are int16 too."""
    mask = to_int16((1 << exponent) - 1)
    remainder = to_int16(x & mask)
    threshold = to_int16((mask >> 1) + (1 if x < 0 else 0))
    return to_int16((x >> exponent) + (1 if remainder > threshold else 0))


def saturating_left_shift_16(value: int, amount: int) -> int:
    return min(max(value * (1 << amount), INT16_MIN), INT16_MAX)


def hard_swish_params(input_scale: float, output_scale: float) -> dict[str, int]:
    """TFLM's HardSwishPrepare: float32 scale arithmetic, then Q31 multipliers cut to Q15."""
    hires_input_scale = np.float32(1.0 / 128.0) * np.float32(input_scale)
    reluish_scale = np.float32(3.0) / np.float32(32768.0)
    output_multiplier, output_exponent = quantize_multiplier(
        float(hires_input_scale / np.float32(output_scale)))
    reluish_multiplier, reluish_exponent = quantize_multiplier(
        float(hires_input_scale / reluish_scale))
    return {
        "output_multiplier": downscale_multiplier_to_int16(output_multiplier),
        "output_exponent": output_exponent,
        "reluish_multiplier": downscale_multiplier_to_int16(reluish_multiplier),
        "reluish_exponent": reluish_exponent,
    }


def hard_swish_table(input_scale: float, input_zero_point: int, output_scale: float,
                     output_zero_point: int) -> np.ndarray:
    p = hard_swish_params(input_scale, output_scale)
    table = np.empty(256, dtype=np.int8)
    for k in range(256):
        input_value = to_int16(k - 128 - input_zero_point)
        hires = to_int16(input_value * (1 << 7))
        # x on the output scale, before the final right shift: the result for x >= 3.
        preshift_output = saturating_rounding_doubling_high_mul_16(hires, p["output_multiplier"])
        # relu6(x + 3) / 6 as a Q15 factor: rescale so 3.0 is 32768 (saturating), then to [0, 1].
        reluish = hires
        if p["reluish_exponent"] > 0:
            reluish = saturating_left_shift_16(reluish, p["reluish_exponent"] - 1)
        reluish = saturating_rounding_doubling_high_mul_16(reluish, p["reluish_multiplier"])
        if p["reluish_exponent"] > 0:
            reluish = saturating_left_shift_16(reluish, 1)
        if p["reluish_exponent"] < 0:
            reluish = rounding_divide_by_pot_16(reluish, -p["reluish_exponent"])
        reluish = to_int16((reluish + (1 << 15)) >> 1)
        preshift = saturating_doubling_high_mul_16(reluish, preshift_output)
        output = rounding_divide_by_pot_16(preshift, -p["output_exponent"])
        output = to_int16(output + output_zero_point)
        table[k] = min(max(output, -128), 127)
    return table


@register
class HardSwish(LutLowering):
    opcode = "HARD_SWISH"
    dtypes = frozenset({"int8", "float32"})
    float32_sources = unary_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (unary_f32.HEADER,)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return unary_f32.reasons(op, graph)
        return super().check(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return unary_f32.emit(op, graph, ctx)
        return super().emit(op, graph, ctx)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        p = hard_swish_params(src.scale, dst.scale)
        if p["output_exponent"] > 0:  # TFLM's prepare refuses this too
            return [f"output scale {dst.scale} is smaller than input scale {src.scale} / 128 "
                    "(TFLM needs output_multiplier_exponent <= 0)"]
        if not -31 <= p["reluish_exponent"] <= 15:
            return [f"input scale {src.scale} is outside the range TFLM's int16 HARD_SWISH "
                    "arithmetic handles"]
        return []

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return hard_swish_table(f32(src.scale), src.zero_point, f32(dst.scale), dst.zero_point)
