"""Resource variables: READ_VARIABLE and ASSIGN_VARIABLE on the model's state buffer.

The reader has already turned each resource variable (VAR_HANDLE, initialized once by a CALL_ONCE
subgraph assigning a constant) into a variable tensor whose ``initial`` value ``<prefix>_reset``
copies in, as TFLM's CALL_ONCE assigns it before the first invocation reads it. READ_VARIABLE
copies the variable into its output and ASSIGN_VARIABLE copies its input into the variable, as
TFLM's kernels copy the resource buffer.

The stock converter keeps variables float32 around an int8 graph (READ_VARIABLE -> QUANTIZE,
DEQUANTIZE -> ASSIGN_VARIABLE). When both sides use one quantization, ``quantize_variables``
stores the variable as int8 with it instead: DEQUANTIZE then QUANTIZE with the same scale and zero
point gives back every int8 value exactly, so the int8 state is what TFLM's float state
requantizes to, and the initial value is quantized at compile time as TFLM's QUANTIZE does.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant_check import quantization_problem
from microbuild.model.ir import Graph, Operator

_DTYPES = frozenset({"float32", "int8", "int16", "int32"})


def _quantize_like_tflm(values: np.ndarray, scale: float, zero_point: int, dtype: str
                        ) -> np.ndarray:
    """TFLM's AffineQuantize: round(value / scale) in float32, halves away from zero."""
    with np.errstate(over="ignore"):  # a value beyond float32 saturates below
        q = np.asarray(values, np.float32) / np.float32(scale)
    rounded = np.where(q >= 0, np.floor(q + np.float32(0.5)), -np.floor(-q + np.float32(0.5)))
    info = np.iinfo(dtype)
    # Clipped before the cast too: an infinite value (or one over the int64 range) saturates.
    rounded = np.clip(rounded, -2.0 ** 62, 2.0 ** 62)
    return np.clip(rounded.astype(np.int64) + zero_point, info.min, info.max).astype(dtype)


def quantize_variables(graph: Graph) -> None:
    """Store each float32 variable read only through QUANTIZE and assigned only from
    DEQUANTIZE, both quantized alike, as that quantized type (see the module docstring)."""
    for var in [t for t in graph.tensors if t.is_variable and t.dtype == "float32"]:
        found = _quantized_access(graph, var)
        if found is not None:
            _store_quantized(graph, var, *found)


def _quantized_access(graph: Graph, var):
    """(reads, their QUANTIZEs, assigns, their DEQUANTIZEs) when every access goes through one
    quantization, else None."""
    reads = [op for op in graph.operators
             if op.opcode == "READ_VARIABLE" and op.inputs[:1] == [var.index]]
    assigns = [op for op in graph.operators
               if op.opcode == "ASSIGN_VARIABLE" and op.inputs[:1] == [var.index]]
    quantizes, dequantizes, quants = [], [], []
    for op in reads:
        if len(op.outputs) != 1:
            return None  # READ_VARIABLE's own check says what is wrong
        users = [u for u in graph.operators if op.outputs[0] in u.inputs]
        if op.outputs[0] in graph.outputs or len(users) != 1 or users[0].opcode != "QUANTIZE":
            return None
        quantizes.append(users[0])
        quants.append(graph.tensors[users[0].outputs[0]])
    for op in assigns:
        producers = [p for p in graph.operators if len(op.inputs) > 1 and op.inputs[1] in p.outputs]
        if len(producers) != 1 or producers[0].opcode != "DEQUANTIZE":
            return None
        dequantizes.append(producers[0])
        quants.append(graph.tensors[producers[0].inputs[0]])
    if not quants or any(t.quant is None or t.quant.per_channel for t in quants):
        return None
    # A damaged scale or zero point is refused by prepare's quantization check, not used here.
    if any(quantization_problem(t) for t in quants) or (
            var.initial is not None and np.isnan(np.asarray(var.initial, np.float32)).any()):
        return None
    if len({(t.dtype, float(np.float32(t.scale)), t.zero_point) for t in quants}) != 1:
        return None
    return reads, quantizes, assigns, dequantizes


def _store_quantized(graph, var, reads, quantizes, assigns, dequantizes) -> None:
    like = (graph.tensors[quantizes[0].outputs[0]] if quantizes
            else graph.tensors[dequantizes[0].inputs[0]])
    if var.initial is not None:
        var.initial = _quantize_like_tflm(var.initial, like.scale, like.zero_point, like.dtype)
    var.dtype, var.quant = like.dtype, like.quant
    for read, quantize in zip(reads, quantizes):
        read.outputs = [quantize.outputs[0]]
    for assign, dequantize in zip(assigns, dequantizes):
        assign.inputs = [var.index, dequantize.inputs[0]]
    gone = {id(q) for q in quantizes}
    graph.operators[:] = [op for op in graph.operators if id(op) not in gone]
    for i, op in enumerate(graph.operators):
        op.index = i
    graph.notes.append(f"variable '{var.name}' kept as {var.dtype} (scale {like.scale:g}, zero "
                       f"point {like.zero_point}): the model reads it through QUANTIZE and "
                       "assigns it through DEQUANTIZE")


def _variable_reasons(op: Operator, graph: Graph, value: int) -> list[str]:
    var = graph.tensor(op.inputs[0])
    if not var.is_variable:
        return [f"tensor {var.index} '{var.name}' is not a variable microbuild could resolve "
                "(a resource variable needs a CALL_ONCE initializer that assigns a constant)"]
    other = graph.tensor(value)
    if other.dtype != var.dtype or other.shape != var.shape:
        return [f"variable '{var.name}' is {var.dtype} {list(var.shape)} but the value is "
                f"{other.dtype} {list(other.shape)}"]
    if var.quant is not None and other.quant is not None and (
            np.float32(var.scale) != np.float32(other.scale)
            or var.zero_point != other.zero_point):
        return [f"variable '{var.name}' and the value are quantized differently; TFLM copies "
                "the values as they are"]
    return []


@register
class ReadVariable(OpLowering):
    opcode = "READ_VARIABLE"
    dtypes = _DTYPES

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return ["expects one variable and one output"]
        return _variable_reasons(op, graph, op.outputs[0])

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return False

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        nbytes = graph.tensor(op.outputs[0]).nbytes
        return f"memcpy({ctx.ptr(op.outputs[0])}, {ctx.ptr(op.inputs[0])}, {nbytes});"


@register
class AssignVariable(OpLowering):
    opcode = "ASSIGN_VARIABLE"
    dtypes = _DTYPES

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 2 or op.outputs:
            return ["expects a variable and a value, and no output"]
        return _variable_reasons(op, graph, op.inputs[1])

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return False

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        nbytes = graph.tensor(op.inputs[1]).nbytes
        return f"memcpy({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, {nbytes});"
