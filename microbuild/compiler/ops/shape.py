"""SHAPE: the static shape of its input, as int32 or int64. Always known at compile time (every
tensor has a static shape here), so it never runs on the device; the Keras Reshape/Flatten idiom
(SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE) folds away completely."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import CompileTimeLowering, register
from microbuild.model.ir import Graph, Operator


@register
class Shape(CompileTimeLowering):
    opcode = "SHAPE"

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return len(op.inputs) == 1 and op.inputs[0] >= 0 and len(op.outputs) == 1

    def fold(self, op: Operator, graph: Graph) -> list[np.ndarray] | None:
        out = graph.tensor(op.outputs[0])
        if out.dtype not in ("int32", "int64"):
            raise ValueError(f"output is {out.dtype}; SHAPE gives int32 or int64")
        return [np.asarray(graph.tensor(op.inputs[0]).shape, dtype=out.dtype)]
