"""CAST of a constant, evaluated at compile time as TFLM's kernel does it: a C ``static_cast``
per element (float to integer truncates toward zero; anything non-zero to bool is true)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import CompileTimeLowering, register
from microbuild.model.ir import Graph, Operator

# The types TFLM's CAST reads and writes.
_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64",
          "bool")


@register
class Cast(CompileTimeLowering):
    opcode = "CAST"

    def fold(self, op: Operator, graph: Graph) -> list[np.ndarray] | None:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            raise ValueError(f"expects one input and one output, has {len(op.inputs)} and "
                             f"{len(op.outputs)}")
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype not in _TYPES or out.dtype not in _TYPES:
            raise ValueError(f"casts {src.dtype} to {out.dtype}; TFLM casts between "
                             f"{', '.join(_TYPES)}")
        value = src.data
        if out.dtype == "bool":
            return [value != 0]
        if np.issubdtype(value.dtype, np.floating) and out.dtype != "float32" \
                and out.dtype != "float64":
            info = np.iinfo(out.dtype)
            if not np.all(np.isfinite(value)) or value.min() < info.min or value.max() > info.max:
                raise ValueError(f"a value of the float constant is outside {out.dtype} "
                                 "(undefined in C)")
            value = np.trunc(value)
        return [value.astype(out.dtype)]
