"""The float32 path of the operator lowerings: one module per kind of float kernel, each bit-exact
with TFLM's float reference kernel (the same float operations in the same order; where TFLM's
build fuses a multiply-add, so do ours: runtime/include/microbuild/kernels/f32.h says why and
where).

An operator's lowering (microbuild/compiler/ops/<op>.py) keeps its integer paths and calls into
these modules when the operator computes in float32 (:func:`is_float32`), as it calls
microbuild/compiler/int32_arith.py for int32.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_float
from microbuild.model.ir import Graph, Operator

HEADER = "microbuild/kernels/f32.h"
FLT_MAX = float(np.finfo(np.float32).max)

# CalculateActivationRange<float> for each fused activation TFLM's float kernels apply.
ACTIVATION_RANGES = {"NONE": (-FLT_MAX, FLT_MAX), "RELU": (0.0, FLT_MAX), "RELU6": (0.0, 6.0),
                     "RELU_N1_TO_1": (-1.0, 1.0)}


def is_float32(op: Operator, graph: Graph) -> bool:
    """True when the operator computes in float32: its first run-time input or its first output
    is float32 (a CAST to or from float32 counts; QUANTIZE and DEQUANTIZE have their own
    lowerings)."""
    tensors = [t for t in list(op.inputs[:1]) + list(op.outputs[:1]) if t >= 0]
    return any(graph.tensors[t].dtype == "float32" for t in tensors)


def activation_range(op: Operator) -> tuple[str, str] | None:
    """The fused activation's (min, max) as C float literals, or None for one TFLM's float
    kernels do not apply (TANH, SIGN_BIT)."""
    bounds = ACTIVATION_RANGES.get(op.options.get("fused_activation_function", "NONE"))
    if bounds is None:
        return None
    return tuple(c_float(v) for v in bounds)


def all_float32_reasons(op: Operator, graph: Graph, inputs: list[int] | None = None
                        ) -> list[str]:
    """One line per operand (the given inputs, default all present, and the outputs) that is not
    float32: TFLM's float kernels take float32 throughout."""
    reasons = []
    chosen = op.inputs if inputs is None else [op.inputs[k] for k in inputs
                                               if k < len(op.inputs)]
    for role, indices in (("input", chosen), ("output", op.outputs)):
        for t in indices:
            if t < 0:
                continue
            tensor = graph.tensors[t]
            if tensor.dtype != "float32":
                reasons.append(f"{role} '{tensor.name}' is {tensor.dtype}; TFLM's float32 "
                               f"{op.opcode} needs float32 there too")
    return reasons
