"""SELECT_V2 (bool condition; int8, int16 or float32 values; all three inputs broadcast), bit-exact
with TFLM's Select / BroadcastSelect5DSlow: ``out = condition ? x : y``, raw values copied.

TFLM copies raw values, so x, y and the output must share one quantization for the result to
mean anything; the converter arranges that, and microbuild refuses other instances. TFLM
broadcasts over at most 5 dimensions. Constant inputs are evaluated at compile time (any dtype).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microbuild.compiler.elementwise import MAX_BROADCAST_DIMS, broadcast_shape
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.maximum_minimum import (
    broadcast_rank_reasons,
    same_quantization_reasons,
)
from microbuild.model.ir import Graph, Operator


@dataclass(frozen=True)
class SelectPlan:
    """mb_select_shape: output extents and, per input, element strides (0 where broadcast),
    outermost first, after dropping size-1 output dimensions and merging dimensions every input
    steps through contiguously."""

    dims: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]  # condition, x, y

    def c_initializer(self) -> str:
        def arr(values) -> str:
            return "{" + ", ".join(str(v) for v in values) + "}"

        return f"{{{len(self.dims)}, {arr(self.dims)}, " + \
            ", ".join(arr(s) for s in self.strides) + "}"

    def is_full(self, k: int) -> bool:
        """Input k holds one element per output element, in order."""
        expected = 1
        for d, s in zip(reversed(self.dims), reversed(self.strides[k])):
            if s != expected:
                return False
            expected *= d
        return True


def plan_select(shapes: list[tuple[int, ...]], out: tuple[int, ...]) -> SelectPlan:
    rank = len(out)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]

    def strides(shape: tuple[int, ...]) -> list[int]:
        result, step = [0] * rank, 1
        for d in range(rank - 1, -1, -1):
            result[d] = step if shape[d] == out[d] else 0
            step *= shape[d]
        return result

    per_input = [strides(s) for s in padded]
    dims: list[int] = []
    merged: list[list[int]] = [[] for _ in shapes]
    for d in range(rank):
        if out[d] == 1:
            continue
        if dims and all(m[-1] == s[d] * out[d] for m, s in zip(merged, per_input)):
            dims[-1] *= out[d]
            for m, s in zip(merged, per_input):
                m[-1] = s[d]
        else:
            dims.append(out[d])
            for m, s in zip(merged, per_input):
                m.append(s[d])
    if not dims:
        dims, merged = [1], [[0] for _ in shapes]
    return SelectPlan(tuple(dims), tuple(tuple(m) for m in merged))


@register
class SelectV2(OpLowering):
    opcode = "SELECT_V2"
    kernel_sources = ("select_v2.c",)
    headers = ("microbuild/kernels/select_v2.h",)
    dtypes = frozenset({"bool", "int8", "int16", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects 3 inputs and 1 output, has {op.inputs} and {op.outputs}"]
        cond, x, y = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        reasons = []
        if cond.dtype != "bool":
            reasons.append(f"condition '{cond.name}' is {cond.dtype}; it must be bool")
        for role, t in (("x", x), ("y", y), ("output", out)):
            if t.dtype not in ("int8", "int16", "float32"):
                reasons.append(f"{role} '{t.name}' is {t.dtype}; only int8, int16 and float32 "
                               "values are supported")
            elif t.dtype != "float32" and (t.quant is None or t.quant.per_channel):
                reasons.append(f"{role} '{t.name}' must be quantized per tensor")
            if t.is_dynamic:
                reasons.append(f"{role} '{t.name}' has a dynamic shape {t.shape_signature}")
        if reasons:
            return reasons
        if not x.dtype == y.dtype == out.dtype:
            return [f"x, y and output types differ ({x.dtype}, {y.dtype}, {out.dtype})"]
        # A float model's values are copied as they are: nothing quantized to match.
        reasons = [] if out.dtype == "float32" else same_quantization_reasons(
            op, graph, [("output", op.outputs[0]), ("x", op.inputs[1]), ("y", op.inputs[2])])
        expected = broadcast_shape(cond.shape, x.shape)
        expected = None if expected is None else broadcast_shape(expected, y.shape)
        if expected is None:
            return reasons + [f"condition {cond.shape}, x {x.shape} and y {y.shape} do not "
                              "broadcast"]
        if tuple(out.shape) != expected:
            return reasons + [f"output shape {out.shape} is not the broadcast {expected} of the "
                              "inputs"]
        if len(plan_select([cond.shape, x.shape, y.shape], out.shape).dims) > MAX_BROADCAST_DIMS:
            reasons.append(f"the broadcast needs more than {MAX_BROADCAST_DIMS} dimensions")
        return reasons + broadcast_rank_reasons(op, graph, 5)

    def fold(self, op: Operator, graph: Graph):
        if len(op.inputs) != 3 or len(op.outputs) != 1 or min(op.inputs) < 0:
            return None
        cond, x, y = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        if cond.dtype != "bool" or not x.dtype == y.dtype == out.dtype:
            return None
        if out.dtype in ("int8", "int16") and self.check(op, graph):
            return None  # refused by check, with the reason
        return [np.where(cond.data.astype(bool), x.data, y.data).astype(out.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        cond, x, y = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        plan = plan_select([cond.shape, x.shape, y.shape], out.shape)
        shape = ctx.symbol("shape")
        ctx.static(f"static const mb_select_shape {shape} = {plan.c_initializer()};")
        suffix = {"int16": "s16", "float32": "f32"}.get(out.dtype, "s8")
        args = ", ".join(ctx.ptr(t) for t in [*op.inputs, *op.outputs])
        return f"mb_select_v2_{suffix}(&{shape}, {args});"

    def in_place_input(self, op: Operator, graph: Graph) -> int | None:
        # The kernel reads x[i] (and the others) before it writes out[i].
        cond, x, y = (graph.tensor(t) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        if x.is_constant or op.inputs[1] in (op.inputs[0], op.inputs[2]):
            return None
        plan = plan_select([cond.shape, x.shape, y.shape], out.shape)
        return 1 if plan.is_full(1) else None
