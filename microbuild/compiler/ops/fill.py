"""FILL, bit-exact with TFLM's: an output of the shape ``dims`` with every element the scalar
``value``. TFLM requires ``dims`` to be a constant (int32 or int64) and copies the value for
float32, int8 and int32 (the tflite-micro build's kernel refuses int16, int64 and bool), the output's
type being the value's; an int8 value keeps its quantization (the converter gives both the same). With a constant value it is
evaluated at compile time; a value computed at run time is copied by one strided copy whose
source step is 0."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import (ELEMENT_SIZES, Walk, constant_values,
                                                  emit_copy, row_major_strides, type_reasons)
from microbuild.model.ir import Graph, Operator


def _plan(op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects dims and a value and one output, has inputs {op.inputs} and "
                      f"outputs {op.outputs}"]
    value, y = graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    dims = constant_values(graph, op.inputs[0])
    if dims is None:
        return None, ["dims is not a constant integer tensor; TFLM's FILL takes constant dims "
                      "only (it refuses the model at Prepare)"]
    if tuple(dims) != tuple(y.shape):
        return None, [f"dims {dims} is not the output's shape {list(y.shape)}"]
    if value.num_elements != 1 or len(value.shape) > 0 and any(d != 1 for d in value.shape):
        return None, [f"the value has shape {list(value.shape)}; FILL takes a scalar"]
    return Walk([int(d) for d in y.shape], [0] * len(y.shape), row_major_strides(y.shape)), []


@register
class Fill(OpLowering):
    opcode = "FILL"
    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)
    dtypes = frozenset({"int8", "int32", "float32"})
    parameter_inputs = (0,)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        reasons = type_reasons(op, graph, [op.inputs[1]])
        value, y = graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
        if not reasons and value.dtype == "int8" and (
                value.scale != y.scale or value.zero_point != y.zero_point):
            reasons.append(f"the value (scale {value.scale}, zero point {value.zero_point}) and "
                           f"the output (scale {y.scale}, zero point {y.zero_point}) are "
                           "quantized differently; FILL copies the value as it is")
        return reasons

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return (super().can_fold(op, graph) and len(op.inputs) == 2 and len(op.outputs) == 1
                and graph.tensor(op.inputs[1]).dtype in ELEMENT_SIZES
                and graph.tensor(op.inputs[1]).dtype == graph.tensor(op.outputs[0]).dtype)

    def fold(self, op: Operator, graph: Graph):
        walk, _ = _plan(op, graph)
        if walk is None:
            return None  # check() says why
        value = np.asarray(graph.tensor(op.inputs[1]).data).reshape(-1)[0]
        return [np.full(graph.tensor(op.outputs[0]).shape, value, dtype=value.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walk, _ = _plan(op, graph)
        return emit_copy(ctx, walk, graph.tensor(op.outputs[0]), ctx.ptr(op.inputs[1]),
                         ctx.ptr(op.outputs[0]))
