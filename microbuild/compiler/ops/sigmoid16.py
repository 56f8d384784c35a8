"""The int16 (16x8) forms of LOGISTIC and TANH: TFLM's table-interpolation kernels
(runtime/kernels/sigmoid16.c). The LOGISTIC and TANH lowerings use this for int16 operands and
their int8 lookup tables otherwise. Parameters follow TFLM's int16 Prepare: the input's scale is
mapped to the table's fixed point, 1 / (3 * 4096) per step, by a multiplier below 2^15 and a
right shift, or (a power-of-two scale of exactly the table's unit) by 3 << shift."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("sigmoid16.c", "sigmoid_table.c")
HEADER = "microbuild/kernels/sigmoid16.h"
_INPUT_INTEGER_BITS = 3
_OUTPUT_FRACTIONAL_BITS = 15


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLite's CheckedLog2 in float32: (x is a power of two within 1e-3 in log2, rounded log2)."""
    log2 = np.float32(np.log(np.float32(x))) * np.float32(1.0 / np.log(np.float32(2.0)))
    rounded = np.round(log2)  # std::round on the float: halves away from zero (no halves here)
    return bool(abs(np.float32(log2 - rounded)) < np.float32(1e-3)), int(rounded)


def s16_params(input_scale: float, tanh: bool) -> tuple[int, int]:
    """(multiplier, shift) of the rescaling, the power-of-two case already resolved."""
    pot, log2 = checked_log2(input_scale)
    shift = (15 - _INPUT_INTEGER_BITS) + log2
    # TANH takes a power-of-two scale one step finer than LOGISTIC does.
    pot = pot and (shift in (0, 1) if tanh else shift == 0)
    if pot:
        return 3 << shift, 0
    multiplier = float(np.float32(input_scale)) * 4096.0 * 3.0
    shift = 0
    while multiplier <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        multiplier *= 2.0
    return int(multiplier), shift


def s16_reasons(op: Operator, graph: Graph) -> list[str]:
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    reasons = []
    if y.dtype != "int16":
        return [f"input is int16 but output is {y.dtype}; TFLM requires the same type"]
    if x.quant is None or y.quant is None or x.zero_point != 0 or y.zero_point != 0:
        reasons.append("int16 input and output must be quantized with zero point 0")
        return reasons
    pot, log2 = checked_log2(y.scale)
    if not pot or log2 != -_OUTPUT_FRACTIONAL_BITS:
        reasons.append(f"output scale {y.scale} must be 2^-15 as TFLM's int16 {op.opcode} "
                       "requires")
    multiplier, _ = s16_params(x.scale, op.opcode == "TANH")
    if multiplier > 32767:
        reasons.append(f"input scale {x.scale} is too large for TFLM's int16 {op.opcode} "
                       "(the rescaling multiplier exceeds 32767)")
    return reasons


def emit_s16(op: Operator, graph: Graph, ctx: EmitContext) -> str:
    x = graph.tensor(op.inputs[0])
    tanh = op.opcode == "TANH"
    multiplier, shift = s16_params(x.scale, tanh)
    function = "mb_tanh_s16" if tanh else "mb_logistic_s16"
    return (f"{function}({multiplier}, {shift}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])}, {x.num_elements});")
