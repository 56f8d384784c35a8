"""SQUEEZE: size-1 dimensions removed. The bytes do not change, so it is a RESHAPE: the output
shares the input's buffer and nothing runs (TFLM copies; it takes any type, as here). On a
constant it is evaluated at compile time."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.reshape import Reshape
from microbuild.model.ir import Graph, Operator


@register
class Squeeze(Reshape):
    opcode = "SQUEEZE"
    dtypes = frozenset({"int8", "int16", "int32", "int64", "uint8", "bool", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects one input and one output, has inputs {op.inputs} and outputs "
                    f"{op.outputs}"]
        reasons = super().check(op, graph)
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        rank = len(x.shape)
        dims = [int(d) for d in op.options.get("squeeze_dims") or []]
        if any(not -rank <= d < rank for d in dims):
            return reasons + [f"squeeze_dims {dims} are outside the input's {rank} dimensions"]
        dims = {d % rank for d in dims} or {d for d in range(rank) if x.shape[d] == 1}
        if any(x.shape[d] != 1 for d in dims):
            return reasons + [f"squeeze_dims {sorted(dims)} name dimensions of the input "
                              f"{list(x.shape)} that are not 1"]
        expected = [x.shape[d] for d in range(rank) if d not in dims]
        if list(y.shape) != expected:
            reasons.append(f"output shape {list(y.shape)} is not the input {list(x.shape)} "
                           f"without dimensions {sorted(dims)}")
        return reasons

    def used_inputs(self, op: Operator, graph: Graph) -> list[int]:
        return list(op.inputs)
