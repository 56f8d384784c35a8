"""LEAKY_RELU (int8, int16), bit-exact with TFLM's QuantizeLeakyRelu.

Two multipliers from TFLM's CalculateOpDataLeakyRelu (QuantizeMultiplier, either may shift
left): identity = input_scale / output_scale for (input - zp) >= 0, alpha =
input_scale * alpha / output_scale for negative values. tflite-micro's current source writes
both as float32 expressions, but the interpreter microbuild is checked against (the tflite_micro
wheel) gives results that only the double-precision quotients reproduce (the float32 ones are
off by one in some int16 outputs), so they are computed in double from the float32 scales and
alpha.

int8 compiles to a 256-entry table made with that arithmetic (``emit_table``: one lookup per
value instead of a 64-bit rounding multiply); int16 runs ``mb_leaky_relu_s16``.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_designated, f32, operand_reasons, same_shape_reasons
from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.unary import LutLowering, emit_table, input_values
from microbuild.compiler.quant import multiply_by_quantized_multiplier, quantize_multiplier
from microbuild.model.ir import Graph, Operator

_VALUE_BITS = {"int8": 9, "int16": 17}


def leaky_relu_params(input_scale: float, input_zp: int, output_scale: float, output_zp: int,
                      alpha: float) -> dict[str, int]:
    s_in, s_out = f32(input_scale), f32(output_scale)
    m_alpha, sh_alpha = quantize_multiplier(s_in * f32(alpha) / s_out)
    m_id, sh_id = quantize_multiplier(s_in / s_out)
    return {"input_zero_point": input_zp, "output_zero_point": output_zp,
            "multiplier_identity": m_id, "shift_identity": sh_id,
            "multiplier_alpha": m_alpha, "shift_alpha": sh_alpha}


def leaky_relu_table(p: dict[str, int]) -> np.ndarray:
    """TFLM's QuantizeLeakyRelu<int8_t> for every int8 input, in ascending order."""
    out = []
    for v in input_values("int8"):
        x = int(v) - p["input_zero_point"]
        kind = "identity" if x >= 0 else "alpha"
        scaled = multiply_by_quantized_multiplier(x, p[f"multiplier_{kind}"], p[f"shift_{kind}"])
        out.append(min(max(p["output_zero_point"] + scaled, -128), 127))
    return np.array(out)


def _alpha(op: Operator) -> float:
    return float(op.options.get("alpha", 0.0))


@register
class LeakyRelu(OpLowering):
    opcode = "LEAKY_RELU"
    kernel_sources = LutLowering.kernel_sources + ("leaky_relu.c",)
    float32_sources = activations_f32.KERNEL_SOURCES
    headers = LutLowering.headers + ("microbuild/kernels/leaky_relu.h", activations_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return activations_f32.reasons(op, graph)
        dtype = graph.tensor(op.inputs[0]).dtype if op.inputs and op.inputs[0] >= 0 else "int8"
        reasons = operand_reasons(op, graph, 1, (dtype,), dtype)
        if reasons:
            return reasons
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        for role, t in (("input", src), ("output", dst)):
            if t.quant is None or t.quant.per_channel:
                reasons.append(f"{role} '{t.name}' must be quantized per tensor")
        if reasons:
            return reasons
        reasons = same_shape_reasons(op, graph)
        p = leaky_relu_params(src.scale, src.zero_point, dst.scale, dst.zero_point, _alpha(op))
        limit = 31 - _VALUE_BITS[dtype]
        if p["shift_identity"] > limit or p["shift_alpha"] > limit:
            reasons.append(f"input scale {src.scale}, output scale {dst.scale} and alpha "
                           f"{_alpha(op)} need a left shift that overflows int32")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return activations_f32.emit(op, graph, ctx)
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        p = leaky_relu_params(src.scale, src.zero_point, dst.scale, dst.zero_point, _alpha(op))
        if src.dtype == "int8":
            return emit_table(op, graph, ctx, leaky_relu_table(p))
        params = ctx.symbol("params")
        ctx.static(f"static const mb_leaky_relu_params {params} = {c_designated(p)};")
        return (f"mb_leaky_relu_s16(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])}, {src.num_elements});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return not graph.tensor(op.inputs[0]).is_constant
