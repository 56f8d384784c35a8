"""MIRROR_PAD (int8 or float32, modes REFLECT and SYMMETRIC, up to six dimensions), bit-exact with TFLM.

Every output element is an input element: along each dimension, index ``p`` of the padded output
reads ``p - before`` inside the input, and mirrors across the edge outside it (REFLECT excludes the
edge element, SYMMETRIC repeats it), by TFLM's GetInputDimension. The paddings must be constant;
the compiler works out each dimension's mirrored indices and the kernel is the offset-table copy
(microbuild/compiler/table_gather.py), moving the unpadded trailing dimensions (usually the
channels) as one run. Values are copied, never rescaled. TFLM has MIRROR_PAD for float32 and int8
only. On constants it is evaluated at compile time.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.f32.layout import moved_value_reasons, same_values
from microbuild.compiler.spatial import operand_count_reasons
from microbuild.compiler.table_gather import MAX_DIMS, GatherPlan
from microbuild.model.ir import Graph, Operator

MODES = ("REFLECT", "SYMMETRIC")


def mirror_index(p: int, before: int, size: int, reflect: bool) -> int:
    """TFLM's GetInputDimension: the input index output index ``p`` reads along one axis."""
    offset = 1 if reflect else 0
    if p < before:
        original = before + offset - 1
        return original - min(p, original - offset)
    p -= before
    if p >= size:
        p -= size
        original = size - (1 + offset)
        return original - min(p, original)
    return p


def _paddings(op: Operator, graph: Graph) -> np.ndarray | None:
    t = graph.tensor(op.inputs[1])
    if not t.is_constant:
        return None
    return np.asarray(t.data, dtype=np.int64).reshape(-1, 2)


@register
class MirrorPad(OpLowering):
    # TFLM's kernel takes float32 and int8 only: a 16x8 model's is refused saying so.
    tflm_lacks = frozenset({"int16"})
    # Read at compile time only; refused in check when not constant.
    parameter_inputs = (1,)
    opcode = "MIRROR_PAD"
    kernel_sources = ("table_gather.c",)
    headers = ("microbuild/kernels/table_gather.h",)
    dtypes = frozenset({"int8", "float32"})

    def plan(self, op: Operator, graph: Graph) -> GatherPlan:
        x = graph.tensor(op.inputs[0])
        pads = _paddings(op, graph)
        reflect = op.options.get("mode", "REFLECT") == "REFLECT"
        shape = list(x.shape) or [1]
        padded = [d for d in range(len(shape)) if pads[d].any()]
        # Dimensions after the last padded one move unchanged: one run per step.
        last = padded[-1] if padded else 0
        unit = int(np.prod(shape[last + 1:], dtype=np.int64))
        strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
        tables = []
        for d in range(last + 1):
            before, after = (int(v) for v in pads[d])
            tables.append(np.array([mirror_index(p, before, shape[d], reflect) * strides[d]
                                    for p in range(before + shape[d] + after)], dtype=np.int64))
        return GatherPlan(tables, unit)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (2,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["input or paddings is missing"]
        x, pads_t, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), \
            graph.tensor(op.outputs[0])
        reasons += moved_value_reasons("input", x)
        reasons += moved_value_reasons("output", y, dtypes=(x.dtype,))
        mode = op.options.get("mode", "REFLECT")
        if mode not in MODES:
            reasons.append(f"mode {mode} is not supported ({' or '.join(MODES)})")
        rank = len(x.shape)
        if not 1 <= rank <= MAX_DIMS:
            reasons.append(f"input has rank {rank}; 1 to {MAX_DIMS} dimensions are supported")
        if not pads_t.is_constant:
            reasons.append(f"paddings '{pads_t.name}' is not constant; the output shape must be "
                           "known at compile time")
        elif pads_t.dtype not in ("int32", "int64") or pads_t.num_elements != 2 * rank:
            reasons.append(f"paddings '{pads_t.name}' is {pads_t.dtype} {list(pads_t.shape)}; "
                           f"expected int32 or int64 of shape [{rank}, 2]")
        if reasons:
            return reasons
        pads = _paddings(op, graph)
        if np.any(pads < 0):
            return [f"paddings {pads.tolist()} has negative entries"]
        expected = tuple(int(d + b + a) for d, (b, a) in zip(x.shape, pads))
        if tuple(y.shape) != expected:
            return [f"output '{y.name}' has shape {tuple(y.shape)}, expected {expected} from the "
                    f"input {tuple(x.shape)} and paddings {pads.tolist()}"]
        limit = 0 if mode == "REFLECT" else 1
        for d, (size, (before, after)) in enumerate(zip(x.shape, pads)):
            if max(before, after) > size - 1 + limit:
                reasons.append(f"dimension {d} of size {size} is padded by {[int(before), int(after)]}"
                               f"; {mode} allows at most {size - 1 + limit} on each side")
        if not same_values(x, y):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {y.scale}, zero point {y.zero_point}) are quantized "
                           "differently; TFLM copies values without rescaling")
        if not reasons:
            reasons += self.plan(op, graph).reasons(x.num_elements)
        return reasons

    def fold(self, op: Operator, graph: Graph):
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if _paddings(op, graph) is None:
            return None
        return [self.plan(op, graph).apply(x.data, y.shape).astype(y.dtype)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        itemsize = np.dtype(graph.tensor(op.inputs[0]).dtype).itemsize
        return self.plan(op, graph).emit(ctx, itemsize, ctx.ptr(op.inputs[0]),
                                         ctx.ptr(op.outputs[0]))
