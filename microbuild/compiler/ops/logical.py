"""LOGICAL_AND, LOGICAL_OR (bool inputs broadcast over at most 4 dimensions, as TFLM's
BroadcastBinaryFunction4DSlow; same shapes take its flat path) and LOGICAL_NOT, bit-exact with
TFLM: bool in, bool out (runtime/kernels/logical.c). On constants they are evaluated at compile
time."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import (binary_broadcast_reasons, operand_reasons,
                                             plan_broadcast, same_shape_reasons)
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.maximum_minimum import broadcast_rank_reasons
from microbuild.model.ir import Graph, Operator


class _LogicalBinary(OpLowering):
    kernel_sources = ("logical.c", "broadcast.c")
    headers = ("microbuild/kernels/logical.h",)
    dtypes = frozenset({"bool"})
    function: str
    numpy = None

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return (operand_reasons(op, graph, 2, ("bool", "bool"), "bool")
                or binary_broadcast_reasons(op, graph)
                or broadcast_rank_reasons(op, graph, 4))

    def fold(self, op: Operator, graph: Graph):
        if self.check(op, graph):
            return None
        a, b = (np.asarray(graph.tensor(t).data, dtype=bool) for t in op.inputs)
        return [np.asarray(type(self).numpy(a, b), dtype=bool)
                .reshape(graph.tensor(op.outputs[0]).shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        a, b = (graph.tensor(t) for t in op.inputs)
        plan = plan_broadcast(a.shape, b.shape, graph.tensor(op.outputs[0]).shape)
        shape = ctx.symbol("shape")
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        return (f"{self.function}(&{shape}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{ctx.ptr(op.outputs[0])});")


@register
class LogicalAnd(_LogicalBinary):
    opcode = "LOGICAL_AND"
    function = "mb_logical_and"
    numpy = staticmethod(np.logical_and)


@register
class LogicalOr(_LogicalBinary):
    opcode = "LOGICAL_OR"
    function = "mb_logical_or"
    numpy = staticmethod(np.logical_or)


@register
class LogicalNot(OpLowering):
    opcode = "LOGICAL_NOT"
    kernel_sources = ("logical.c", "broadcast.c")
    headers = ("microbuild/kernels/logical.h",)
    dtypes = frozenset({"bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return (operand_reasons(op, graph, 1, ("bool",), "bool")
                or same_shape_reasons(op, graph))

    def fold(self, op: Operator, graph: Graph):
        if self.check(op, graph):
            return None
        x = np.asarray(graph.tensor(op.inputs[0]).data, dtype=bool)
        return [np.logical_not(x).reshape(graph.tensor(op.outputs[0]).shape)]

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return True  # reads input[i] before writing output[i], nothing else

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        size = graph.tensor(op.outputs[0]).num_elements
        return f"mb_logical_not({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {size});"
