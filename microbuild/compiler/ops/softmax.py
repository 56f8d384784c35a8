"""SOFTMAX (int8 in, int8 out with scale 1/256 and zero point -128, any beta).

TFLM prepares three integers from beta and the input scale (softmax_common.cc,
CalculateSoftmaxParams): a Q31 multiplier and left shift that turn an input difference into a
Q5.26 value (PreprocessSoftmaxScaling with 5 integer bits), and the smallest difference worth
computing (diff_min, from CalculateInputRadius). They are computed here; the kernel in
``runtime/kernels/softmax.c`` does the fixed-point exp and reciprocal.
"""

from __future__ import annotations

import math

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import quantize_multiplier
from microbuild.model.ir import Graph, Operator

SCALED_DIFF_INTEGER_BITS = 5


def softmax_params(input_scale: float, beta: float) -> tuple[int, int, int]:
    """(input_multiplier, input_left_shift, diff_min) exactly as TFLM computes them."""
    # beta and the scale are float32 in the model; TFLM widens both to double.
    real = float(np.float32(beta)) * float(np.float32(input_scale)) * \
        (1 << (31 - SCALED_DIFF_INTEGER_BITS))
    real = min(real, (1 << 31) - 1.0)
    multiplier, left_shift = quantize_multiplier(real)
    # CalculateInputRadius: the largest |difference| whose rescaled value still fits in int32.
    max_input_rescaled = (1.0 * ((1 << SCALED_DIFF_INTEGER_BITS) - 1)
                          * (1 << (31 - SCALED_DIFF_INTEGER_BITS)) / (1 << left_shift))
    return multiplier, left_shift, -int(math.floor(max_input_rescaled))


@register
class Softmax(OpLowering):
    opcode = "SOFTMAX"
    kernel_sources = ("softmax.c",)
    headers = ("microbuild/kernels/softmax.h",)
    dtypes = frozenset({"int8", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return ["expected one input and one output"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = []
        if x.dtype != "int8":
            return [f"input is {x.dtype}; microbuild's SOFTMAX takes int8 input (with an int8 or "
                    "int16 output)"]
        if x.quant is None or y.quant is None:
            return ["input and output must be quantized"]
        if x.shape != y.shape or len(x.shape) == 0:
            reasons.append(f"input shape {list(x.shape)} and output shape {list(y.shape)} must "
                           "be equal and at least 1-D")
        # TFLM's integer softmax insists on this output quantization (what the converter makes).
        if y.dtype == "int16":
            if y.zero_point != -32768 or abs(float(y.scale) - 1 / 65536) > 0.001 / 65536:
                reasons.append(f"output quantization is scale {y.scale}, zero point "
                               f"{y.zero_point}; an int16 softmax output needs scale 1/65536 "
                               "and zero point -32768")
        elif y.zero_point != -128 or np.float32(y.scale) != np.float32(1.0 / 256):
            reasons.append(f"output quantization is scale {y.scale}, zero point {y.zero_point}; "
                           "int8 softmax needs scale 1/256 and zero point -128")
        beta = float(op.options.get("beta", 1.0))
        if not beta > 0 or not math.isfinite(beta):
            reasons.append(f"beta {beta} must be a positive number")
        elif float(np.float32(beta)) * float(np.float32(x.scale)) * \
                (1 << (31 - SCALED_DIFF_INTEGER_BITS)) <= 1.0:
            # TFLM's QuantizeMultiplierGreaterThanOne refuses this; so must we.
            reasons.append(f"beta {beta} x input scale {x.scale} is too small (TFLM requires "
                           "beta * scale * 2^26 > 1)")
        return reasons

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return True  # the kernel reads each element before writing it (see softmax.h)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        multiplier, left_shift, diff_min = softmax_params(x.scale, op.options.get("beta", 1.0))
        depth = x.shape[-1]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_softmax_s8_params {params} = "
                   f"{{{x.num_elements // depth}, {depth}, {multiplier}, {left_shift}, "
                   f"{diff_min}}};")
        function = "mb_softmax_s8_s16" if y.dtype == "int16" else "mb_softmax_s8"
        return f"{function}(&{params}, {ctx.ptr(x.index)}, {ctx.ptr(y.index)});"
