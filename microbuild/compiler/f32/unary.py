"""Float32 EXP, LOG, NEG, ABS and RSQRT (``runtime/kernels/unary_f32.c``): one libm call or float
operation per element, as TFLM's float kernels (std::exp, std::log, -x, std::abs,
1.f / std::sqrt)."""

from __future__ import annotations

from microbuild.compiler.f32 import all_float32_reasons
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("unary_f32.c",)
HEADER = "microbuild/kernels/unary_f32.h"
OPERATIONS = {"EXP": 0, "LOG": 1, "NEG": 2, "ABS": 3, "RSQRT": 4}


def reasons(op: Operator, graph: Graph) -> list[str]:
    if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
        return [f"expects 1 input and 1 output, has {op.inputs} and {op.outputs}"]
    found = all_float32_reasons(op, graph)
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if not found and x.num_elements != y.num_elements:
        found.append(f"input has {x.num_elements} values, output {y.num_elements}")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    size = graph.tensor(op.outputs[0]).num_elements
    return (f"mb_unary_f32({OPERATIONS[op.opcode]}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])}, {size});")
