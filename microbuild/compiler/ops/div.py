"""DIV, FLOOR_DIV and FLOOR_MOD of constants, evaluated at compile time (shape arithmetic in int32,
float32 tables); float32 ones at run time on the float arithmetic kernel
(microbuild/compiler/f32/arith.py, TFLM's float FloorDiv and FloorMod): DIV truncates integers
toward zero as C's ``/`` does, FLOOR_DIV rounds toward minus infinity, FLOOR_MOD takes the
divisor's sign (TFLite's FloorMod).

DIV of non-quantized int32 tensors also runs on the device (TFLM's int32 reference Div, with
broadcasting and the fused activation's clamp; microbuild/compiler/int32_arith.py), as the
audio front end's feature scaling needs. A constant divisor with a zero is refused (TFLM's
kernel would trap); a zero divisor at run time gives 0."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import fold_arithmetic
from microbuild.compiler import int32_arith
from microbuild.compiler.f32 import arith as arith_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.maximum_minimum import broadcast_rank_reasons
from microbuild.model.ir import Graph, Operator


def _no_zero_divisor(b: np.ndarray) -> None:
    if np.any(b == 0):
        raise ZeroDivisionError("the divisor has a zero element")


def _truncating(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.floating):
        return a / b
    _no_zero_divisor(b)
    quotient = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -quotient, quotient)


def _flooring(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.floating):
        return np.floor(a / b)
    _no_zero_divisor(b)
    return a // b


def _floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.floating):
        return np.mod(a, b)
    _no_zero_divisor(b)
    return a % b


@register
class Div(OpLowering):
    opcode = "DIV"
    kernel_sources = int32_arith.KERNEL_SOURCES
    float32_sources = arith_f32.KERNEL_SOURCES
    headers = (int32_arith.HEADER, arith_f32.HEADER)
    dtypes = frozenset({"int32", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if is_float32(op, graph):
            return arith_f32.reasons(op, graph)  # x / 0 is an infinity or NaN, as in TFLM
        reasons = int32_arith.int32_reasons(op, graph)
        if not reasons:
            divisor = graph.tensor(op.inputs[1])
            if divisor.is_constant and np.any(divisor.data == 0):
                reasons.append(f"the constant divisor '{divisor.name}' has a zero; TFLM's int32 "
                               "DIV would divide by zero")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return arith_f32.emit(op, graph, ctx)
        return int32_arith.emit_int32(op, graph, ctx)

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _truncating)


class _Flooring(OpLowering):
    """FLOOR_DIV / FLOOR_MOD: constants of any type at compile time; float32 at run time (the only
    type TFLM's kernels take), on the float arithmetic kernel."""

    float32_sources = arith_f32.KERNEL_SOURCES
    headers = (arith_f32.HEADER,)
    dtypes = frozenset({"float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        # TFLM broadcasts these over at most 4 dimensions (BroadcastBinaryFunction4DSlow).
        return arith_f32.reasons(op, graph) or broadcast_rank_reasons(op, graph, 4)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return arith_f32.emit(op, graph, ctx)


@register
class FloorDiv(_Flooring):
    opcode = "FLOOR_DIV"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _flooring)


@register
class FloorMod(_Flooring):
    opcode = "FLOOR_MOD"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _floor_mod)
