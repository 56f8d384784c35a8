"""BROADCAST_ARGS: the shape two shapes broadcast to (numpy's rules), int32 or int64 as its
inputs. Shapes are known at compile time here, so it is evaluated while compiling (the
``tf.broadcast_dynamic_shape`` of two static shapes) and never runs on the device."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import broadcast_shape
from microbuild.compiler.ops.base import CompileTimeLowering, register
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator


@register
class BroadcastArgs(CompileTimeLowering):
    opcode = "BROADCAST_ARGS"

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return (super().can_fold(op, graph) and len(op.inputs) == 2 and len(op.outputs) == 1
                and all(graph.tensor(t).dtype in ("int32", "int64") for t in op.inputs))

    def fold(self, op: Operator, graph: Graph):
        a, b = (np.asarray(graph.tensor(t).data).reshape(-1) for t in op.inputs)
        out = graph.tensor(op.outputs[0])
        shape = broadcast_shape(tuple(int(v) for v in a), tuple(int(v) for v in b))
        if shape is None:
            raise ModelError(f"{op.describe()}: shapes {a.tolist()} and {b.tolist()} do not "
                             "broadcast (TFLM fails such a model too)")
        return [np.asarray(shape, dtype=out.dtype)]
