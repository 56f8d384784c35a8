"""Float32 element-wise binary operators with TFLite broadcasting (ADD, SUB, MUL, DIV, MINIMUM,
MAXIMUM, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD, and PRELU with alpha as the second operand): one
kernel, ``runtime/kernels/arith_f32.c`` over broadcast.c's walk, one float operation per element
then TFLM's ActivationFunctionWithMinMax to the fused activation's range (the reference kernels
clamp even without one, to +-FLT_MAX; MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, FLOOR_DIV, FLOOR_MOD
and PRELU do not clamp)."""

from __future__ import annotations

from microbuild.compiler.elementwise import (
    binary_broadcast_reasons,
    c_designated,
    plan_broadcast,
)
from microbuild.compiler.f32 import activation_range, all_float32_reasons
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("arith_f32.c", "broadcast.c")
HEADER = "microbuild/kernels/arith_f32.h"
OPERATIONS = {"ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3, "MINIMUM": 4, "MAXIMUM": 5,
              "SQUARED_DIFFERENCE": 6, "PRELU": 7, "FLOOR_DIV": 8, "FLOOR_MOD": 9}
_CLAMPED = frozenset({"ADD", "SUB", "MUL", "DIV"})


def reasons(op: Operator, graph: Graph) -> list[str]:
    """Why this float32 instance cannot compile (empty when it can)."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return [f"expects 2 inputs and 1 output, has {op.inputs} and {op.outputs}"]
    found = all_float32_reasons(op, graph)
    if found:
        return found
    found = binary_broadcast_reasons(op, graph)
    if op.opcode in _CLAMPED and activation_range(op) is None:
        found.append(f"fused activation {op.options.get('fused_activation_function')} is not "
                     "one TFLM's float kernels apply")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    clamped = op.opcode in _CLAMPED
    low, high = activation_range(op) if clamped else ("0.0f", "0.0f")
    params = ctx.symbol("params")
    shape = ctx.symbol("shape")
    fields = {"operation": OPERATIONS[op.opcode], "clamped": int(clamped),
              "activation_min": low, "activation_max": high}
    ctx.static(f"static const mb_arith_f32_params {params} = {c_designated(fields)};")
    plan = plan_broadcast(a.shape, b.shape, out.shape)
    ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
    return (f"mb_arith_f32(&{params}, &{shape}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])});")
