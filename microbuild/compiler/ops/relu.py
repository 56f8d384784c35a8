"""RELU and RELU6 (int8), bit-exact with TFLM, which treats them differently:

- RELU (ReluQuantized) requantizes from the input to the output quantization and clamps below at
  the output's zero.
- RELU6 (Relu6Quantized) does not requantize at all: it clamps in the *input's* quantized domain
  between the input zero point and the input's quantized 6.0, and ignores the output's
  quantization (the converter gives both the same).

Both are functions of one int8 byte, so they compile to a 256-entry table (``LutLowering``) made
with TFLM's integer arithmetic: TFLM's per-value 64-bit rounding multiply becomes one lookup.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_designated, f32
from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, register
from microbuild.compiler.ops.unary import LutLowering, input_values
from microbuild.compiler.quant import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    tflite_round,
)
from microbuild.model.ir import Graph, Operator

def requantize_params(input_scale: float, input_zero_point: int, output_scale: float,
                      output_zero_point: int, activation_min: int = -128,
                      activation_max: int = 127) -> dict[str, int]:
    """mb_requantize_s8_params for input -> output rescaling (QuantizeMultiplier in double of the
    float32 scales, as TFLM's ReluPrepare and QUANTIZE's prepare do)."""
    multiplier, shift = quantize_multiplier(f32(input_scale) / f32(output_scale))
    return {"input_zero_point": input_zero_point, "multiplier": multiplier, "shift": shift,
            "output_zero_point": output_zero_point, "activation_min": activation_min,
            "activation_max": activation_max}


def requantize_table(p: dict[str, int], input_dtype: str = "int8") -> np.ndarray:
    """The output of TFLM's Requantize / ReluQuantized arithmetic (``requantize_params``) for
    every value of an 8-bit input type, in ascending input order (``emit_table``'s)."""
    return np.array([min(max(multiply_by_quantized_multiplier(int(v) - p["input_zero_point"],
                                                              p["multiplier"], p["shift"])
                             + p["output_zero_point"], p["activation_min"]), p["activation_max"])
                     for v in input_values(input_dtype)])


def requantize_shift_reasons(input_scale: float, output_scale: float,
                             input_bits: int = 8) -> list[str]:
    # (q - zero_point) has at most input_bits + 1 bits; TFLM shifts it left in int32 before the
    # Q31 multiply.
    _, shift = quantize_multiplier(f32(input_scale) / f32(output_scale))
    if shift > 31 - (input_bits + 1):
        return [f"input scale {input_scale} / output scale {output_scale} needs a left shift of "
                f"{shift}, which overflows int32"]
    return []


def emit_requantize(op: Operator, ctx: EmitContext, p: dict[str, int], size: int,
                    function: str = "mb_requantize_s8") -> str:
    params = ctx.symbol("params")
    ctx.static(f"static const mb_requantize_s8_params {params} = {c_designated(p)};")
    return (f"{function}(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, "
            f"{size});")


def relu_params(input_scale: float, input_zero_point: int, output_scale: float,
                output_zero_point: int) -> dict[str, int]:
    # TFLM's CalculateReluOpData: the lower bound is zp + roundf(0.0f / scale) = the output zero
    # point, the upper one the int8 maximum.
    return requantize_params(input_scale, input_zero_point, output_scale, output_zero_point,
                             activation_min=max(-128, output_zero_point), activation_max=127)


def relu6_bounds(input_scale: float, input_zero_point: int) -> tuple[int, int]:
    """(zero, six) in the input's quantized domain, TFLM's FloatToQuantizedType<int8_t>: the
    division is in float32, the rounding halves away from zero, then clamped to int8."""
    six = tflite_round(float(np.float32(6.0) / np.float32(input_scale))) + input_zero_point
    return input_zero_point, min(max(six, -128), 127)


@register
class Relu(LutLowering):
    opcode = "RELU"
    float32_sources = activations_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (activations_f32.HEADER,)
    dtypes = frozenset({"int8", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return activations_f32.reasons(op, graph)
        return super().check(op, graph)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return requantize_shift_reasons(src.scale, dst.scale)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return activations_f32.emit(op, graph, ctx)
        return super().emit(op, graph, ctx)

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return requantize_table(relu_params(src.scale, src.zero_point, dst.scale, dst.zero_point))


@register
class Relu6(LutLowering):
    opcode = "RELU6"
    float32_sources = activations_f32.KERNEL_SOURCES
    headers = LutLowering.headers + (activations_f32.HEADER,)
    dtypes = frozenset({"int8", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return activations_f32.reasons(op, graph)
        return super().check(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return activations_f32.emit(op, graph, ctx)
        return super().emit(op, graph, ctx)

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        src = graph.tensor(op.inputs[0])
        zero, six = relu6_bounds(src.scale, src.zero_point)
        return np.clip(input_values("int8"), zero, six)
