"""GATHER_ND, bit-exact with TFLM's: the last dimension of the int32 indices holds coordinates
into the input's first dimensions; each row of them picks the slice of the remaining dimensions.
At run time TFLM takes int8 and float32 data and int32 indices, and so does microbuild; on
constants it is evaluated at compile time.

TFLM checks only each row's flat position (at least 0, a whole slice inside the input), not each
coordinate against its dimension, and so does the kernel (runtime/kernels/gather_nd.c): an index
past its dimension that still lands inside the input reads where TFLM reads. Constant indices are
checked at compile time (a row outside is refused: TFLM would fail every invocation); run-time
ones by the kernel, the generated ``<prefix>_run`` then returning ``MB_GATHER_INDEX_ERROR``.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.gather import IndexedLookup
from microbuild.compiler.ops.strided_copy import row_major_strides, type_reasons
from microbuild.model.ir import Graph, Operator

MAX_DEPTH = 8  # MB_GATHER_ND_MAX_DEPTH


def _plan(op: Operator, graph: Graph) -> tuple[dict | None, list[str]]:
    """The kernel's sizes, or the reasons this GATHER_ND cannot be compiled."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input and indices and one output, has inputs {op.inputs} "
                      f"and outputs {op.outputs}"]
    x, idx, y = (graph.tensor(t) for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if idx.dtype != "int32":
        return None, [f"indices are {idx.dtype}; TFLM's GATHER_ND takes int32 indices only"]
    if len(x.shape) < 1 or len(idx.shape) < 1:
        return None, ["the input and the indices must have at least one dimension"]
    depth = int(idx.shape[-1])
    if not 1 <= depth <= min(len(x.shape), MAX_DEPTH):
        return None, [f"the indices' last dimension is {depth}; it must be between 1 and the "
                      f"input's rank {len(x.shape)} (at most {MAX_DEPTH})"]
    expected = tuple(idx.shape[:-1]) + tuple(x.shape[depth:])
    if tuple(y.shape) != expected:
        return None, [f"output shape {list(y.shape)} is not {list(expected)} (input "
                      f"{list(x.shape)}, indices {list(idx.shape)})"]
    strides = row_major_strides(x.shape)
    sizes = {"num_slices": int(np.prod(idx.shape[:-1], dtype=np.int64)),
             "index_depth": depth,
             "slice_size": int(np.prod(x.shape[depth:], dtype=np.int64)),
             "input_size": x.num_elements,
             "dim_strides": strides[:depth] + [0] * (MAX_DEPTH - depth)}
    if idx.is_constant:
        starts = _starts(sizes, np.asarray(idx.data))
        bad = (starts < 0) | (starts + sizes["slice_size"] > sizes["input_size"])
        if bad.any():
            row = np.asarray(idx.data).reshape(-1, depth)[int(np.argmax(bad))]
            return None, [f"index row {row.tolist()} is outside the input {list(x.shape)}; "
                          "TFLM would return an error on every invocation"]
    return sizes, []


def _starts(sizes: dict, indices: np.ndarray) -> np.ndarray:
    """Each index row's flat position in the input, as TFLM computes it."""
    rows = indices.astype(np.int64).reshape(-1, sizes["index_depth"])
    return rows @ np.asarray(sizes["dim_strides"][:sizes["index_depth"]], dtype=np.int64)


@register
class GatherNd(IndexedLookup):
    opcode = "GATHER_ND"
    kernel = "mb_gather_nd"
    kernel_sources = ("gather_nd.c",)
    headers = ("microbuild/kernels/gather_nd.h",)
    # int32 is here for the indices; the data is int8 or float32 (``check``).
    dtypes = frozenset({"int8", "float32", "int32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        sizes, reasons = _plan(op, graph)
        if reasons:
            return reasons
        x = graph.tensor(op.inputs[0])
        reasons = type_reasons(op, graph, [op.inputs[0]])
        if x.dtype not in ("int8", "float32"):
            reasons.append(f"the data is {x.dtype}; TFLM's GATHER_ND takes int8 and float32 "
                           "only, so it runs only when it can be evaluated at compile time")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        sizes, _ = _plan(op, graph)
        if sizes is None:
            return None  # check() says why
        x, idx = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        flat = np.asarray(x.data).reshape(-1)
        slices = [flat[s:s + sizes["slice_size"]] for s in _starts(sizes, np.asarray(idx.data))]
        out = np.concatenate(slices) if slices else flat[:0]
        return [out.reshape(graph.tensor(op.outputs[0]).shape)]

    def plan(self, op: Operator, graph: Graph):
        return _plan(op, graph)
