"""Shared base classes for the int8 -> int8 unary lowerings (RELU, RELU6, LOGISTIC, TANH,
HARD_SWISH). It registers no operator itself.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering
from microbuild.model.ir import Graph, Operator


class UnaryInt8Lowering(OpLowering):
    """An int8 -> int8 element-wise operator over a whole tensor. Subclasses add their own
    parameter checks in ``param_reasons``."""

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, 1, ("int8",), "int8")
        if reasons:
            return reasons
        return same_shape_reasons(op, graph) + self.param_reasons(op, graph)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        return []

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Every kernel used here reads input[i] before it writes output[i] and nothing else.
        return not graph.tensor(op.inputs[0]).is_constant


class LutLowering(UnaryInt8Lowering):
    """An int8 unary operator computed at compile time for all 256 inputs (``table``) and looked
    up on the device by ``mb_lut_s8``."""

    kernel_sources = ("lut.c",)
    headers = ("microbuild/kernels/lut.h",)

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        """int8[256]: entry k is the output for input value k - 128."""
        raise NotImplementedError

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        table = np.asarray(self.table(op, graph), dtype=np.int8)
        assert table.shape == (256,), table.shape
        name = ctx.const_array(ctx.symbol("lut"), table, "int8_t")
        size = graph.tensor(op.inputs[0]).num_elements
        return f"mb_lut_s8({name}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, {size});"
