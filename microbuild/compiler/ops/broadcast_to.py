"""BROADCAST_TO, bit-exact with TFLM's: the input repeated along every dimension where it has size
1 (or is missing) and the output does not. TFLM copies bytes without looking at them, for any type
(int8, int16, int32, int64, float32, bool here) and up to 5 dimensions; microbuild does the same with one strided copy whose source step is 0
along the broadcast dimensions. The target shape must be known at compile time (the output's
static shape; a constant shape operand must agree with it)."""

from __future__ import annotations

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.strided_copy import (SingleCopyLowering, Walk, constant_values,
                                                  row_major_strides, type_reasons)
from microbuild.model.ir import Graph, Operator

TFLM_MAX_DIMS = 5  # TFLM's broadcast_to.cc kMaxDims


def broadcast_walk(in_shape, out_shape) -> Walk | None:
    """The copy that repeats an input of ``in_shape`` into ``out_shape`` (numpy's broadcasting,
    the input aligned to the output's last dimensions), or None when it does not broadcast."""
    rank = len(out_shape)
    if len(in_shape) > rank:
        return None
    padded = [1] * (rank - len(in_shape)) + [int(d) for d in in_shape]
    strides = row_major_strides(padded)
    src_steps = []
    for d, (i, o) in enumerate(zip(padded, out_shape)):
        if i != o and i != 1:
            return None
        src_steps.append(strides[d] if i == o else 0)
    return Walk([int(d) for d in out_shape], src_steps, row_major_strides(out_shape))


def _plan(op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input and a shape and one output, has inputs {op.inputs} "
                      f"and outputs {op.outputs}"]
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    shape = constant_values(graph, op.inputs[1])
    if shape is not None and tuple(shape) != tuple(y.shape):
        return None, [f"the shape operand {shape} is not the output's shape {list(y.shape)}"]
    walk = broadcast_walk(x.shape, y.shape)
    if walk is None:
        return None, [f"the input's shape {list(x.shape)} does not broadcast to "
                      f"{list(y.shape)}"]
    return walk, []


@register
class BroadcastTo(SingleCopyLowering):
    opcode = "BROADCAST_TO"
    dtypes = frozenset({"int8", "int16", "int32", "int64", "float32", "bool"})
    parameter_inputs = (1,)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        walk, reasons = _plan(op, graph)
        if reasons:
            return reasons
        rank = len(graph.tensor(op.outputs[0]).shape)
        if rank > TFLM_MAX_DIMS:
            return [f"the output has rank {rank}; TFLM's BROADCAST_TO takes at most "
                    f"{TFLM_MAX_DIMS} dimensions"]
        return type_reasons(op, graph, [op.inputs[0]])

    def walk(self, op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
        return _plan(op, graph)
