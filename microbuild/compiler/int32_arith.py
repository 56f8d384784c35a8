"""The int32 path of the element-wise binary operators (ADD, SUB, MUL, DIV, MINIMUM, MAXIMUM on
non-quantized int32 tensors, as the audio front end's feature scaling computes at run time): one
kernel, ``runtime/kernels/arith_s32.c``, with TFLite broadcasting. TFLM's int32 SUB, MUL and DIV
compute in int32 and clamp to the fused activation's range (CalculateActivationRange<int32_t>:
none, RELU [0, max], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1]); its int32 ADD ignores the fused
activation (checked against the interpreter: ADD with RELU6 gives -49 for -50 + 1), and MINIMUM
and MAXIMUM have none.

Lowerings call :func:`int32_reasons` from ``check`` and :func:`emit_int32` from ``emit`` when
their output is int32, keeping their int8/int16 paths as they are."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import (
    binary_broadcast_reasons,
    c_designated,
    fused_activation,
    plan_broadcast,
)
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("arith_s32.c", "broadcast.c")  # broadcast.c: the walk
HEADER = "microbuild/kernels/arith_s32.h"
OPERATIONS = {"ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3, "MINIMUM": 4, "MAXIMUM": 5}
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
# The operators whose int32 kernel applies the fused activation.
_CLAMPED = frozenset({"SUB", "MUL", "DIV"})
_RANGES = {"NONE": (_INT32_MIN, _INT32_MAX), "RELU": (0, _INT32_MAX), "RELU6": (0, 6),
           "RELU_N1_TO_1": (-1, 1)}


def is_int32(op: Operator, graph: Graph) -> bool:
    return bool(op.outputs) and graph.tensor(op.outputs[0]).dtype == "int32"


def int32_reasons(op: Operator, graph: Graph) -> list[str]:
    """Why this int32 instance cannot compile (empty when it can)."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return [f"expects 2 inputs and 1 output, has {op.inputs} and {op.outputs}"]
    reasons = []
    for role, t in (("input 0", op.inputs[0]), ("input 1", op.inputs[1]),
                    ("output", op.outputs[0])):
        tensor = graph.tensor(t)
        if tensor.dtype != "int32":
            reasons.append(f"{role} '{tensor.name}' is {tensor.dtype}; the int32 kernel needs "
                           "int32 on every operand, as TFLM does")
        elif tensor.quant is not None and op.opcode in ("DIV", "MUL") and \
                (np.any(tensor.quant.scale != 1.0) or np.any(tensor.quant.zero_point != 0)):
            reasons.append(f"{role} '{tensor.name}' is a quantized int32 tensor; TFLM's int32 "
                           f"{op.opcode} computes on raw values (microbuild only compiles the "
                           "non-quantized case)")
    if reasons:
        return reasons
    reasons = binary_broadcast_reasons(op, graph)
    activation = fused_activation(op)
    if op.opcode in _CLAMPED and activation not in _RANGES:
        reasons.append(f"fused activation {activation} is not one TFLM applies to int32")
    return reasons


def emit_int32(op: Operator, graph: Graph, ctx) -> str:
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    low, high = (_RANGES[fused_activation(op)] if op.opcode in _CLAMPED else _RANGES["NONE"])
    params = ctx.symbol("params")
    shape = ctx.symbol("shape")
    fields = {"operation": OPERATIONS[op.opcode],
              "activation_min": "(-2147483647 - 1)" if low == _INT32_MIN else low,
              "activation_max": high}
    ctx.static(f"static const mb_arith_s32_params {params} = {c_designated(fields)};")
    plan = plan_broadcast(a.shape, b.shape, out.shape)
    ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
    return (f"mb_arith_s32(&{params}, &{shape}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])});")
