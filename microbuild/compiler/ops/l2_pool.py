"""L2_POOL_2D: a float32-only operator in TFLM (its prepare takes float32 alone). The square root
of the mean of the squares over each window clipped to the input, with the fused activation,
run by microbuild/compiler/f32/spatial.py's kernel with the other pools' window geometry."""

from __future__ import annotations

from microbuild.compiler.f32 import spatial as spatial_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.spatial import operand_count_reasons
from microbuild.model.ir import Graph, Operator


@register
class L2Pool2D(OpLowering):
    opcode = "L2_POOL_2D"
    kernel_sources = spatial_f32.KERNEL_SOURCES
    headers = (spatial_f32.HEADER,)
    dtypes = frozenset({"float32"})

    def dtype_note(self, dtype: str) -> str | None:
        return f"TFLM's L2_POOL_2D computes in float32 only; it has no {dtype} kernel either"

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return operand_count_reasons(op, (1,)) or spatial_f32.reasons(op, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return spatial_f32.emit(op, graph, ctx)
