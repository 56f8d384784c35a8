"""GATHER, bit-exact with TFLM's: slices of the input picked by int32 indices along ``axis``, with
``batch_dims`` leading dimensions shared by the input and the indices. At run time TFLM takes
int8 and float32 data and int32 indices, and so does microbuild; on constants (tables, shape
arithmetic) it is evaluated at compile time for any type and int32 or int64 indices.

Constant indices are checked at compile time (an out-of-range one is refused: TFLM would fail
every invocation). Run-time indices are checked by the kernel, as TFLM does: the first index
outside [0, axis size) stops the copy and the generated ``<prefix>_run`` returns
``MB_GATHER_INDEX_ERROR`` (-2) right away, where TFLM's Invoke returns kTfLiteError.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import ELEMENT_SIZES, type_reasons
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator


def index_checked(call: str, indices_are_constant: bool) -> str:
    """The C statement running ``call``, a kernel that returns non-zero on an index outside the
    input (GATHER, GATHER_ND, EMBEDDING_LOOKUP): constant indices were checked at compile time,
    so the result is ignored; run-time ones fail the run with MB_GATHER_INDEX_ERROR."""
    if indices_are_constant:
        return f"(void){call};"
    return f"if ({call} != 0) {{\n    return MB_GATHER_INDEX_ERROR;\n}}"


def _plan(op: Operator, graph: Graph) -> tuple[dict | None, list[str]]:
    """The kernel's sizes, or the reasons this GATHER cannot be compiled."""
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects an input and indices and one output, has inputs {op.inputs} "
                      f"and outputs {op.outputs}"]
    x, idx, y = (graph.tensor(t) for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if idx.dtype not in ("int32", "int64"):
        return None, [f"indices are {idx.dtype}; GATHER takes int32 (or int64) indices"]
    rank, idx_rank = len(x.shape), len(idx.shape)
    axis = int(op.options.get("axis", 0))
    batch_dims = int(op.options.get("batch_dims", 0))
    if axis < 0:
        axis += rank
    if batch_dims < 0:
        batch_dims += idx_rank
    if not 0 <= axis < rank:
        return None, [f"axis {op.options.get('axis', 0)} is outside the input's {rank} "
                      "dimensions"]
    if not 0 <= batch_dims <= min(axis, idx_rank) or batch_dims >= rank:
        return None, [f"batch_dims {op.options.get('batch_dims', 0)} must be in [0, axis "
                      f"{axis}] and at most the indices' rank {idx_rank}"]
    if tuple(x.shape[:batch_dims]) != tuple(idx.shape[:batch_dims]):
        return None, [f"the input {list(x.shape)} and the indices {list(idx.shape)} differ in "
                      f"their first {batch_dims} (batch) dimensions"]
    expected = tuple(x.shape[:axis]) + tuple(idx.shape[batch_dims:]) + tuple(x.shape[axis + 1:])
    if tuple(y.shape) != expected:
        return None, [f"output shape {list(y.shape)} is not {list(expected)} (input "
                      f"{list(x.shape)}, indices {list(idx.shape)}, axis {axis}, batch_dims "
                      f"{batch_dims})"]
    sizes = {
        "batch_size": int(np.prod(x.shape[:batch_dims], dtype=np.int64)),
        "outer_size": int(np.prod(x.shape[batch_dims:axis], dtype=np.int64)),
        "axis_size": int(x.shape[axis]),
        "coord_size": int(np.prod(idx.shape[batch_dims:], dtype=np.int64)),
        "inner_size": int(np.prod(x.shape[axis + 1:], dtype=np.int64)),
    }
    if idx.is_constant:
        values = np.asarray(idx.data).reshape(-1)
        bad = (values < 0) | (values >= sizes["axis_size"])
        if bad.any():
            return None, [f"index {int(values[np.argmax(bad)])} is outside [0, "
                          f"{sizes['axis_size']}) (axis {axis} of the input {list(x.shape)}); "
                          "TFLM would return an error on every invocation"]
    return sizes, []


class IndexedLookup(OpLowering):
    """What GATHER and GATHER_ND share: (data, indices) in, one output of the data's type; with
    both inputs constant the op is evaluated at compile time, whatever the element type; else one
    call of ``kernel`` with a constant ``<kernel>_params`` struct of the sizes ``plan`` gives."""

    kernel: str  # the C function

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        return (super().can_fold(op, graph) and len(op.inputs) == 2 and len(op.outputs) == 1
                and graph.tensor(op.inputs[0]).dtype in ELEMENT_SIZES
                and graph.tensor(op.inputs[0]).dtype == graph.tensor(op.outputs[0]).dtype)

    def plan(self, op: Operator, graph: Graph):
        """The kernel's sizes (a dict of its parameter struct's fields) and the reasons it cannot
        run; each op module has its own."""
        raise NotImplementedError

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        sizes, _ = self.plan(op, graph)
        x, idx = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        if graph.tensor(op.outputs[0]).num_elements == 0:
            return "/* nothing to gather: the output is empty */"
        fields = [("element_size", ELEMENT_SIZES[x.dtype])] + list(sizes.items())
        params = ctx.symbol("params")
        ctx.static(f"static const {self.kernel}_params {params} = {c_struct(fields)};")
        call = (f"{self.kernel}(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{ctx.ptr(op.outputs[0])})")
        return index_checked(call, idx.is_constant)


@register
class Gather(IndexedLookup):
    opcode = "GATHER"
    kernel = "mb_gather"
    kernel_sources = ("gather.c",)
    headers = ("microbuild/kernels/gather.h",)
    # TFLM's GATHER takes int8 and float32 data and int32 positions (int32 is here for the
    # positions). int16 passes the generic check only so that ``check`` can say that TFLM has no
    # int16 GATHER either (a 16x8 model's likeliest case).
    dtypes = frozenset({"int8", "float32", "int32", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        sizes, reasons = _plan(op, graph)
        if reasons:
            return reasons
        x, idx = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        reasons = type_reasons(op, graph, [op.inputs[0]])
        if x.dtype not in ("int8", "float32"):
            reasons.append(f"the data is {x.dtype}; TFLM's GATHER takes int8 and float32 only "
                           "(no kernel for this type either), so it runs only when it can be "
                           "evaluated at compile time")
        if idx.dtype != "int32":
            reasons.append(f"indices are {idx.dtype}; TFLM's GATHER takes int32 indices only")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        sizes, _ = _plan(op, graph)
        if sizes is None:
            return None  # check() says why
        x, idx = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        data = np.asarray(x.data).reshape(sizes["batch_size"], sizes["outer_size"],
                                          sizes["axis_size"], sizes["inner_size"])
        coords = np.asarray(idx.data).astype(np.int64).reshape(sizes["batch_size"],
                                                              sizes["coord_size"])
        out = np.stack([data[b][:, coords[b], :] for b in range(sizes["batch_size"])])
        return [np.ascontiguousarray(out).reshape(graph.tensor(op.outputs[0]).shape)]

    def plan(self, op: Operator, graph: Graph):
        return _plan(op, graph)
