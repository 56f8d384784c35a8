"""Float32 LOGISTIC, TANH, RELU, RELU6, SOFTMAX, LEAKY_RELU and LOG_SOFTMAX
(``runtime/kernels/activations_f32.c``), bit-exact with TFLM's float reference kernels: the C
library's expf, logf and tanhf, as TFLM's std::exp/std::log/std::tanh on float call them."""

from __future__ import annotations

import math

from microbuild.compiler.elementwise import c_float
from microbuild.compiler.f32 import FLT_MAX, all_float32_reasons
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("activations_f32.c",)
HEADER = "microbuild/kernels/activations_f32.h"
# TFLM's ReluFloat / Relu6Float bounds.
_RELU_RANGES = {"RELU": (0.0, FLT_MAX), "RELU6": (0.0, 6.0)}


def reasons(op: Operator, graph: Graph) -> list[str]:
    if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
        return [f"expects 1 input and 1 output, has {op.inputs} and {op.outputs}"]
    found = all_float32_reasons(op, graph)
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if not found and x.num_elements != y.num_elements:
        found.append(f"input has {x.num_elements} values, output {y.num_elements}")
    if not found and op.opcode in ("SOFTMAX", "LOG_SOFTMAX") and not x.shape:
        found.append(f"input is a scalar; TFLM's {op.opcode} needs at least one dimension")
    # The option becomes a C float literal; a damaged file can hold NaN or infinity there, which
    # no trained model does and which has no literal.
    option = {"LEAKY_RELU": "alpha", "SOFTMAX": "beta"}.get(op.opcode)
    if option and not math.isfinite(float(op.options.get(option, 1.0))):
        found.append(f"{option} is {op.options[option]}: the file is damaged (a trained model's "
                     f"{option} is a finite number)")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    x, y = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
    tensor = graph.tensor(op.inputs[0])
    size = tensor.num_elements
    if op.opcode == "LOGISTIC":
        return f"mb_logistic_f32({x}, {y}, {size});"
    if op.opcode == "TANH":
        return f"mb_tanh_f32({x}, {y}, {size});"
    if op.opcode in _RELU_RANGES:
        low, high = (c_float(v) for v in _RELU_RANGES[op.opcode])
        return f"mb_relu_f32({x}, {y}, {size}, {low}, {high});"
    if op.opcode == "LEAKY_RELU":
        alpha = float(op.options.get("alpha", 0.0))
        return f"mb_leaky_relu_f32({x}, {y}, {size}, {c_float(alpha)});"
    depth = tensor.shape[-1]
    if op.opcode == "LOG_SOFTMAX":
        return f"mb_log_softmax_f32({x}, {y}, {size // depth}, {depth});"
    # SOFTMAX: TFLM casts the model's beta (a float) to double and back: the same float.
    beta = float(op.options.get("beta", 1.0))
    return f"mb_softmax_f32({x}, {y}, {size // depth}, {depth}, {c_float(beta)});"
