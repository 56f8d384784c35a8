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
from microbuild.compiler.elementwise import (
    binary_reasons,
    c_designated,
    f32,
    fold_arithmetic,
    fused_activation,
    input0_not_broadcast,
    plan_broadcast,
)
from microbuild.compiler.ops.add import LEFT_SHIFT, LEFT_SHIFT_INT16, add_params
from microbuild.compiler.f32 import arith as arith_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT32_ACTIVATION_RANGE = {"NONE": (_INT32_MIN, _INT32_MAX), "RELU": (0, _INT32_MAX),
                           "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}


@register
class Sub(OpLowering):
    opcode = "SUB"
    # arith_s32.c: the int32 path (microbuild/compiler/int32_arith.py).
    kernel_sources = ("sub.c", "broadcast.c") + int32_arith.KERNEL_SOURCES
    float32_sources = arith_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/sub.h", int32_arith.HEADER, arith_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "int32", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if int32_arith.is_int32(op, graph):
            return int32_arith.int32_reasons(op, graph)
        if is_float32(op, graph):
            return arith_f32.reasons(op, graph)
        dtype = graph.tensor(op.outputs[0]).dtype if op.outputs else "int8"
        reasons = binary_reasons(op, graph, dtype if dtype in self.dtypes else "int8")
        if reasons:
            return reasons
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        left_shift = LEFT_SHIFT_INT16 if dtype == "int16" else LEFT_SHIFT
        # TFLM requires every multiplier below 1 (QuantizeMultiplierSmallerThanOneExp).
        if 2.0 * max(f32(a.scale), f32(b.scale)) >= (1 << left_shift) * f32(out.scale):
            reasons.append(f"output scale {out.scale} is too small against input scales "
                           f"{a.scale}, {b.scale} (TFLM needs an output multiplier below 1)")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        # int32/float32 arithmetic on constants (shape computations); int8 runs on the device.
        values = fold_arithmetic(op, graph, lambda a, b: a - b)
        if values is not None and values[0].dtype == np.int32:
            # Unlike ADD, TFLM's int32 SUB applies the fused activation (SubWithActivation,
            # CalculateActivationRange): to the wrapped int32 difference.
            low, high = _INT32_ACTIVATION_RANGE.get(fused_activation(op),
                                                    (_INT32_MIN, _INT32_MAX))
            values = [np.clip(values[0], low, high).astype(np.int32)]
        return values

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if int32_arith.is_int32(op, graph):
            return int32_arith.emit_int32(op, graph, ctx)
        if is_float32(op, graph):
            return arith_f32.emit(op, graph, ctx)
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        p = add_params(a.scale, a.zero_point, b.scale, b.zero_point, out.scale, out.zero_point,
                       fused_activation(op), out.dtype)
        params, shape = ctx.symbol("params"), ctx.symbol("shape")
        ctx.static(f"static const mb_add_s8_params {params} = {c_designated(p)};")
        plan = plan_broadcast(a.shape, b.shape, out.shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        function = "mb_sub_s16" if out.dtype == "int16" else "mb_sub_s8"
        return (f"{function}(&{params}, &{shape}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return input0_not_broadcast(op, graph)
