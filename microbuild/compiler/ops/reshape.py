"""RESHAPE: the bytes do not change, only the shape, so there is no kernel.

The memory planner makes the output share the input's buffer (``aliases_input``); then nothing runs.
Only when the two must live in different buffers (a graph input reshaped straight into a graph
output, both owned by the caller) is the reshape a copy.
"""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


@register
class Reshape(OpLowering):
    opcode = "RESHAPE"
    # Only the shape changes: the bytes are the same whatever they hold.
    dtypes = frozenset({"int8", "int16", "int32", "uint8", "bool", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
            return ["expected a data input and one output"]
        src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = []
        if src.dtype != dst.dtype:
            reasons.append(f"input is {src.dtype} but output is {dst.dtype}")
        if src.num_elements != dst.num_elements:
            reasons.append(f"input shape {list(src.shape)} and output shape {list(dst.shape)} "
                           "have different element counts")
        return reasons

    def aliases_input(self, op: Operator, graph: Graph) -> bool:
        return True

    def used_inputs(self, op: Operator, graph: Graph) -> list[int]:
        # TFLM sizes the output from the output tensor's own shape, never from the shape
        # operand. Called after constant folding: an operand that was evaluated (the SHAPE ->
        # STRIDED_SLICE -> PACK chain of an open batch folds completely) stays attached as the
        # constant it is; one that could not be evaluated is detached, so what computes it dies.
        shape = [t for t in op.inputs[1:2] if t >= 0 and graph.tensors[t].is_constant]
        return list(op.inputs[:1]) + shape

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        # The shape operand (input 1) never matters: the output tensor's shape is what counts.
        return bool(op.inputs) and op.inputs[0] >= 0 and graph.tensor(op.inputs[0]).is_constant

    def fold(self, op: Operator, graph: Graph):
        src = graph.tensor(op.inputs[0])
        return [src.data.reshape(graph.tensor(op.outputs[0]).shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src, dst = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
        if src == dst:
            return "/* shares its input's buffer: nothing to do */"
        nbytes = graph.tensor(op.outputs[0]).nbytes
        return f"memcpy({dst}, {src}, {nbytes});"
