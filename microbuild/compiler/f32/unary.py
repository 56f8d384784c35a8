"""Float32 EXP, LOG, NEG, ABS, RSQRT, SQRT, SQUARE, SIN, COS, FLOOR, CEIL, ROUND, ELU and
HARD_SWISH (``runtime/kernels/unary_f32.c``): one libm call or float expression per element, as
TFLM's float kernels (std::exp, std::log, -x, std::abs, 1.f / std::sqrt, std::sqrt, x * x,
std::sin, std::cos, std::floor, std::ceil, RoundToNearest, std::expm1 below 0, and HardSwish's
x * min(6, max(0, x + 3)) / 6)."""

from __future__ import annotations

# One float32 input, one float32 output of as many values: the activations' checks.
from microbuild.compiler.f32.activations import reasons  # noqa: F401
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("unary_f32.c",)
HEADER = "microbuild/kernels/unary_f32.h"
OPERATIONS = {"EXP": 0, "LOG": 1, "NEG": 2, "ABS": 3, "RSQRT": 4, "SQRT": 5, "SQUARE": 6,
              "SIN": 7, "COS": 8, "FLOOR": 9, "CEIL": 10, "ROUND": 11, "ELU": 12,
              "HARD_SWISH": 13}


def emit(op: Operator, graph: Graph, ctx) -> str:
    size = graph.tensor(op.outputs[0]).num_elements
    return (f"mb_unary_f32({OPERATIONS[op.opcode]}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])}, {size});")
