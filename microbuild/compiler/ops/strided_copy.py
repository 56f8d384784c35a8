"""The compile-time half of ``runtime/kernels/strided_copy.c``, shared by the data-movement
operators (STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, PACK, UNPACK). It registers no operator.

Each of them copies values without looking at them, so one description fits all: a box of
``counts`` iterations, each step moving the source and the destination by their own strides (in
elements), from start offsets. The lowering states the copy in the tensors' own dimensions; here
size-1 dimensions are dropped and dimensions that are contiguous on both sides merged, so the
kernel loops as little as possible, and the result becomes a ``static const`` params struct.
Folding uses the same description on numpy arrays, so what the device runs and what is evaluated
at compile time are the same walk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator, Tensor

MAX_DIMS = 6  # MB_STRIDED_COPY_MAX_DIMS

# The tensor types whose values these kernels move, and their sizes in bytes.
ELEMENT_SIZES = {"int8": 1, "uint8": 1, "bool": 1, "int16": 2, "int32": 4, "float32": 4,
                 "int64": 8}


def row_major_strides(shape) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * int(shape[d + 1])
    return strides


@dataclass
class Walk:
    """Copy ``prod(counts)`` elements: element (i0, i1, ...) goes from source element
    ``src_offset + sum(i_d * src_steps[d])`` to destination ``dst_offset + sum(i_d *
    dst_steps[d])``."""

    counts: list[int]
    src_steps: list[int]
    dst_steps: list[int]
    src_offset: int = 0
    dst_offset: int = 0

    @property
    def size(self) -> int:
        return int(np.prod(self.counts, dtype=np.int64)) if self.counts else 1

    def simplified(self) -> "Walk":
        """The same copy with size-1 dimensions dropped and contiguous neighbours merged."""
        dims = [(c, s, d) for c, s, d in zip(self.counts, self.src_steps, self.dst_steps)
                if c != 1]
        merged: list[tuple[int, int, int]] = []
        for c, s, d in dims:
            if merged:
                pc, ps, pd = merged[-1]
                if ps == s * c and pd == d * c:
                    merged[-1] = (pc * c, s, d)
                    continue
            merged.append((c, s, d))
        if not merged:
            merged = [(1, 1, 1)]
        return Walk([m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged],
                    self.src_offset, self.dst_offset)

    def apply(self, src: np.ndarray, dst: np.ndarray) -> None:
        """Do the copy on flat numpy arrays (compile-time evaluation)."""
        if self.size == 0:
            return
        src_index = np.full((), self.src_offset, dtype=np.int64)
        dst_index = np.full((), self.dst_offset, dtype=np.int64)
        for c, s, d in zip(self.counts, self.src_steps, self.dst_steps):
            steps = np.arange(c, dtype=np.int64)
            src_index = src_index[..., None] + steps * s
            dst_index = dst_index[..., None] + steps * d
        dst[dst_index.reshape(-1)] = src[src_index.reshape(-1)]


def emit_copy(ctx: EmitContext, walk: Walk, tensor: Tensor, src: str, dst: str,
              name: str = "copy") -> str:
    """``mb_strided_copy(...)`` for ``walk`` over elements of ``tensor``'s type."""
    if walk.size == 0:
        return "/* nothing to copy: the slice is empty */"
    w = walk.simplified()
    if len(w.counts) > MAX_DIMS:
        raise RuntimeError(f"a strided copy of {len(w.counts)} dimensions (at most {MAX_DIMS})")
    pad = MAX_DIMS - len(w.counts)
    fields = [("num_dims", len(w.counts)), ("element_size", ELEMENT_SIZES[tensor.dtype]),
              ("src_offset", w.src_offset), ("dst_offset", w.dst_offset),
              ("counts", w.counts + [1] * pad), ("src_steps", w.src_steps + [0] * pad),
              ("dst_steps", w.dst_steps + [0] * pad)]
    params = ctx.symbol(name)
    ctx.static(f"static const mb_strided_copy_params {params} = {c_struct(fields)};")
    return f"mb_strided_copy(&{params}, {src}, {dst});"


def fits_kernel(walk: Walk) -> bool:
    return len(walk.simplified().counts) <= MAX_DIMS


def constant_values(graph: Graph, t: int) -> list[int] | None:
    """The integer values of constant tensor ``t`` (flattened), or None when it is not constant
    or absent."""
    if t < 0 or not graph.tensors[t].is_constant:
        return None
    data = np.asarray(graph.tensors[t].data)
    if not np.issubdtype(data.dtype, np.integer):
        return None
    return [int(v) for v in data.reshape(-1)]


def flat(graph: Graph, t: int) -> np.ndarray:
    tensor = graph.tensors[t]
    return np.ascontiguousarray(np.asarray(tensor.data)).reshape(-1)


def empty_output(graph: Graph, t: int) -> np.ndarray:
    tensor = graph.tensors[t]
    dtype = np.bool_ if tensor.dtype == "bool" else np.dtype(tensor.dtype)
    return np.zeros(tensor.num_elements, dtype=dtype)


def type_reasons(op: Operator, graph: Graph, data_inputs: list[int]) -> list[str]:
    """Every data input and output the same type (these kernels move values; TFLM requires
    it too)."""
    types = {graph.tensors[t].dtype for t in data_inputs + list(op.outputs) if t >= 0}
    if len(types) > 1:
        return [f"its data tensors have different types ({', '.join(sorted(types))}); it "
                "moves values without converting them"]
    return []


def split_walks(shape, axis: int, sizes: list[int]) -> list[Walk]:
    """The copies that cut ``shape`` along ``axis`` into consecutive parts of ``sizes``
    (SPLIT, SPLIT_V, UNPACK): part k is [outer][size_k * inner] from [outer][axis * inner]."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    row = int(shape[axis]) * inner
    walks, start = [], 0
    for size in sizes:
        walks.append(Walk([outer, size * inner], [row, 1], [size * inner, 1], start * inner, 0))
        start += size
    return walks


def pack_walks(shape, axis: int, count: int) -> list[Walk]:
    """The copies that put ``count`` inputs side by side along ``axis`` of an output of ``shape``
    (PACK: the inputs have ``shape`` without ``axis``)."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return [Walk([outer, inner], [inner, 1], [count * inner, 1], 0, k * inner)
            for k in range(count)]


def axis_value(graph: Graph, t: int) -> int | None:
    """A constant scalar (or one-element) axis operand, or None."""
    values = constant_values(graph, t)
    return values[0] if values is not None and len(values) == 1 else None


class SingleCopyLowering(OpLowering):
    """An operator that is one strided copy of input 0 into its output (SLICE, STRIDED_SLICE,
    BROADCAST_TO, REVERSE_V2): the subclass says which copy (``walk``); evaluating it on a
    constant and emitting it are the same for all."""

    kernel_sources = ("strided_copy.c",)
    headers = ("microbuild/kernels/strided_copy.h",)

    def walk(self, op: Operator, graph: Graph) -> tuple[Walk | None, list[str]]:
        """The copy, or None and the reasons this instance cannot be compiled."""
        raise NotImplementedError

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return (super().can_fold(op, graph) and len(op.outputs) == 1
                and graph.tensors[op.inputs[0]].dtype in ELEMENT_SIZES
                and graph.tensors[op.inputs[0]].dtype == graph.tensors[op.outputs[0]].dtype)

    def fold(self, op: Operator, graph: Graph):
        walk, _ = self.walk(op, graph)
        if walk is None:
            return None  # check() says why
        out = empty_output(graph, op.outputs[0])
        walk.apply(flat(graph, op.inputs[0]), out)
        return [out.reshape(graph.tensors[op.outputs[0]].shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        walk, _ = self.walk(op, graph)
        return emit_copy(ctx, walk, graph.tensors[op.inputs[0]], ctx.ptr(op.inputs[0]),
                         ctx.ptr(op.outputs[0]))
