"""DIV, FLOOR_DIV and FLOOR_MOD of constants, evaluated at compile time (shape arithmetic in
int32, float32 tables): DIV truncates integers toward zero as C's ``/`` does, FLOOR_DIV rounds
toward minus infinity, FLOOR_MOD takes the divisor's sign (TFLite's FloorMod)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import fold_arithmetic
from microbuild.compiler.ops.base import CompileTimeLowering, register
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
class Div(CompileTimeLowering):
    opcode = "DIV"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _truncating)


@register
class FloorDiv(CompileTimeLowering):
    opcode = "FLOOR_DIV"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _flooring)


@register
class FloorMod(CompileTimeLowering):
    opcode = "FLOOR_MOD"

    def fold(self, op: Operator, graph: Graph):
        return fold_arithmetic(op, graph, _floor_mod)
