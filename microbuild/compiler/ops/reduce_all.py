"""REDUCE_ALL, bit-exact with TFLM's: a bool tensor reduced with logical AND over constant axes
(keep_dims either way). A bool is one byte holding 0 or 1, so "all" is the minimum of the bytes:
the int8 REDUCE_MIN kernel (runtime/kernels/reduce.c) computes it with the same walk. On a
constant input it is evaluated at compile time."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.mean import axis_reasons, layout_fields, reduced_shape, resolved_axes
from microbuild.compiler.ops.reduce import MAX_DIMS
from microbuild.compiler.spatial import c_struct, operand_count_reasons, shape_reason
from microbuild.model.ir import Graph, Operator


@register
class ReduceAll(OpLowering):
    opcode = "REDUCE_ALL"
    kernel_sources = ("reduce.c",)
    headers = ("microbuild/kernels/reduce.h",)
    dtypes = frozenset({"bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or axis is missing"]
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if x.dtype != "bool" or out.dtype != "bool":
            return [f"input and output are {x.dtype} and {out.dtype}; REDUCE_ALL takes and "
                    "gives bool"]
        rank = len(x.shape)
        if not 1 <= rank <= MAX_DIMS:
            return [f"input has rank {rank}; 1 to {MAX_DIMS} dimensions are supported"]
        reasons = axis_reasons(op, graph, rank)
        if reasons:
            return reasons
        axes = resolved_axes(op, graph)
        if any(x.shape[a] == 0 for a in axes):
            return ["a reduced axis is empty"]
        keep = bool(op.options.get("keep_dims", False))
        return shape_reason("output", out, reduced_shape(tuple(x.shape), axes, keep))

    def fold(self, op: Operator, graph: Graph):
        if self.check(op, graph):
            return None
        x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        data = np.asarray(x.data, dtype=bool).reshape(x.shape)
        return [np.all(data, axis=tuple(resolved_axes(op, graph))).reshape(out.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[0])
        params = ctx.symbol("params")
        fields = layout_fields(tuple(x.shape), resolved_axes(op, graph), MAX_DIMS)
        ctx.static(f"static const mb_reduce_params {params} = {c_struct(fields)};")
        # bool bytes are 0 or 1: the smallest is 1 exactly when every one is.
        return (f"mb_reduce_min_s8(&{params}, (const int8_t *){ctx.ptr(op.inputs[0])}, "
                f"(int8_t *){ctx.ptr(op.outputs[0])});")
