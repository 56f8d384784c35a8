"""LOG_SOFTMAX (int8 in and out, output scale 16/256 and zero point 127 as TFLM requires),
bit-exact with TFLM's LogSoftmaxQuantized along the last axis.

TFLM's prepare (PreprocessLogSoftmaxScalingExp with beta 1 and 5 integer bits) gives SOFTMAX's
input multiplier, left shift and diff_min, plus the reverse scaling (2^(31 - left shift) /
multiplier, quantized) that maps the log of the sum back to input steps; all are computed here.
The kernel (``mb_log_softmax_s8`` in runtime/kernels/softmax.c) shares SOFTMAX's fixed-point exp.
TFLM has no int16 LOG_SOFTMAX.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import activations as activations_f32, is_float32
from microbuild.compiler.fixedpoint import exp_on_negative_values
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.softmax import SCALED_DIFF_INTEGER_BITS, softmax_params
from microbuild.compiler.quant import (
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    rounding_divide_by_pot,
)
from microbuild.compiler.spatial import activation_reasons, c_struct
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

OUTPUT_SCALE = 16.0 / 256
OUTPUT_ZERO_POINT = 127


def log_softmax_params(input_scale: float) -> tuple[int, int, int, int, int]:
    """(input_multiplier, input_left_shift, reverse_scaling_divisor, reverse_scaling_shift,
    diff_min) as TFLM's LOG_SOFTMAX prepare computes them (beta 1)."""
    multiplier, left_shift, diff_min = softmax_params(input_scale, 1.0)
    reverse = (1 << (31 - left_shift)) / multiplier
    divisor, reverse_shift = quantize_multiplier(reverse)
    return multiplier, left_shift, divisor, reverse_shift, diff_min


def log_softmax_table(input_scale: float) -> np.ndarray:
    """The fast variant's table: for every difference d = max - x with -d >= diff_min (at most
    256), the reference kernel's rescaled difference (Q5.26) and its exp() as a term of the sum
    of exps (Q12.19), interleaved."""
    multiplier, left_shift, _, _, diff_min = log_softmax_params(input_scale)
    rows = []
    for d in range(min(256, 1 - diff_min)):
        scaled = multiply_by_quantized_multiplier(-d, multiplier, left_shift)
        term = rounding_divide_by_pot(exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS), 12)
        rows.append((scaled, term))
    return np.asarray(rows, dtype=np.int32).reshape(-1)


@register
class LogSoftmax(OpLowering):
    opcode = "LOG_SOFTMAX"
    # softmax.c shares SOFTMAX's fixed-point exp; it also holds the int16 SOFTMAX, which reads
    # the tables file (a linker that drops unused sections drops both).
    kernel_sources = ("softmax.c", "softmax16_tables.c")
    float32_sources = activations_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/softmax.h", activations_f32.HEADER)
    dtypes = frozenset({"int8", "float32"})
    variants = (
        KernelVariant(
            opcode="LOG_SOFTMAX", name="fast", function="mb_log_softmax_s8_fast",
            sources=("log_softmax_fast.c",), rank=10, const_table=True,
            description="portable C: each difference's rescaled value and exp() looked up in a "
                        "table computed at compile time; only the log of each row's sum at run "
                        "time"),
    )
    dtype_notes = {"int16": "TFLM's LOG_SOFTMAX has no int16 kernel either, only float32 and "
                            "int8"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return ["expects one input and one output"]
        if is_float32(op, graph):
            return activations_f32.reasons(op, graph)
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = activation_reasons("input", x) + activation_reasons("output", y)
        if reasons:
            return reasons
        if tuple(x.shape) != tuple(y.shape) or not x.shape:
            reasons.append(f"input shape {list(x.shape)} and output shape {list(y.shape)} must "
                           "be equal and at least 1-D")
        if np.float32(y.scale) != np.float32(OUTPUT_SCALE) or y.zero_point != OUTPUT_ZERO_POINT:
            reasons.append(f"output quantization is scale {y.scale}, zero point {y.zero_point}; "
                           "TFLM's int8 LOG_SOFTMAX requires scale 16/256, zero point 127")
        real = float(np.float32(x.scale)) * (1 << (31 - SCALED_DIFF_INTEGER_BITS))
        if real <= 1.0:
            reasons.append(f"input scale {x.scale} is too small (TFLM requires scale * 2^26 > 1)")
        else:
            multiplier, left_shift, _, reverse_shift, _ = log_softmax_params(x.scale)
            if not (1 << (31 - left_shift)) < multiplier or reverse_shift > 0:
                reasons.append(f"input scale {x.scale} gives a reverse scaling of 1 or more, "
                               "which TFLM's prepare rejects")
        return reasons

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return not graph.tensor(op.inputs[0]).is_constant  # rows are read before written

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return activations_f32.emit(op, graph, ctx)
        x = graph.tensor(op.inputs[0])
        multiplier, left_shift, divisor, reverse_shift, diff_min = log_softmax_params(x.scale)
        depth = x.shape[-1]
        fields = [("rows", x.num_elements // depth), ("depth", depth),
                  ("input_multiplier", multiplier), ("input_left_shift", left_shift),
                  ("reverse_scaling_divisor", divisor), ("reverse_scaling_shift", reverse_shift),
                  ("diff_min", diff_min)]
        params = ctx.symbol("params")
        variant = getattr(ctx, "variant", None)
        if variant is not None:
            table = log_softmax_table(x.scale)
            fields[2:4] = [("table_len", len(table) // 2)]
            ctx.static(f"static const mb_log_softmax_s8_fast_params {params} = "
                       f"{c_struct(fields)};")
            symbol = ctx.const_array(ctx.symbol("table"), table, "int32_t")
            return (f"{variant.function}(&{params}, {symbol}, {ctx.ptr(op.inputs[0])}, "
                    f"{ctx.ptr(op.outputs[0])});")
        ctx.static(f"static const mb_log_softmax_s8_params {params} = {c_struct(fields)};")
        return (f"mb_log_softmax_s8(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])});")
