"""Float32 EXP, LOG, NEG, ABS and RSQRT (``runtime/kernels/unary_f32.c``): one libm call or float
operation per element, as TFLM's float kernels (std::exp, std::log, -x, std::abs,
1.f / std::sqrt)."""

from __future__ import annotations

# One float32 input, one float32 output of as many values: the activations' checks.
from microbuild.compiler.f32.activations import reasons  # noqa: F401
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("unary_f32.c",)
HEADER = "microbuild/kernels/unary_f32.h"
OPERATIONS = {"EXP": 0, "LOG": 1, "NEG": 2, "ABS": 3, "RSQRT": 4}


def emit(op: Operator, graph: Graph, ctx) -> str:
    size = graph.tensor(op.outputs[0]).num_elements
    return (f"mb_unary_f32({OPERATIONS[op.opcode]}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])}, {size});")
