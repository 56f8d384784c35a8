"""EMBEDDING_LOOKUP, bit-exact with TFLM's: rows of a table (input 1, at least 2-D) picked by a
1-D tensor of int32 ids (input 0). A float32 table gives float32 rows and an int8 table int8
rows, copied as TFLM copies them: GATHER's kernel (runtime/kernels/gather.c) along axis 0. An id
outside the table stops the copy and ``<prefix>_run`` returns ``MB_GATHER_INDEX_ERROR``, where
TFLM's Invoke fails; constant ids are checked at compile time.

TFLM also dequantizes an int8 table into float32 rows (a hybrid model); that is not here yet."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.gather import index_checked
from microbuild.compiler.ops.strided_copy import ELEMENT_SIZES
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator


def _sizes(op: Operator, graph: Graph) -> tuple[dict | None, list[str]]:
    if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
        return None, [f"expects ids and a table and one output, has inputs {op.inputs} and "
                      f"outputs {op.outputs}"]
    ids, table, y = (graph.tensor(t) for t in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if ids.dtype != "int32" or len(ids.shape) != 1:
        return None, [f"ids are {ids.dtype} {list(ids.shape)}; TFLM takes a 1-D int32 tensor"]
    if len(table.shape) < 2:
        return None, [f"the table has shape {list(table.shape)}; TFLM needs at least 2-D"]
    if table.dtype == "int8" and y.dtype == "float32":
        return None, ["an int8 table with float32 output (TFLM's hybrid lookup, which "
                      "dequantizes rows) is not supported yet; keep the table float32 or the "
                      "output int8"]
    if table.dtype not in ("int8", "float32") or y.dtype != table.dtype:
        return None, [f"table {table.dtype} and output {y.dtype}: TFLM copies float32 or int8 "
                      "rows into an output of the same type"]
    expected = (int(ids.shape[0]), *table.shape[1:])
    if tuple(y.shape) != expected:
        return None, [f"output shape {list(y.shape)} is not {list(expected)}"]
    if table.dtype == "int8" and (table.scale, table.zero_point) != (y.scale, y.zero_point):
        return None, ["the table and the output are quantized differently; the rows are "
                      "copied as they are"]
    rows = int(table.shape[0])
    if ids.is_constant:
        values = np.asarray(ids.data).reshape(-1)
        bad = (values < 0) | (values >= rows)
        if bad.any():
            return None, [f"id {int(values[np.argmax(bad)])} is outside the table's {rows} "
                          "rows; TFLM would return an error on every invocation"]
    return {"element_size": ELEMENT_SIZES[table.dtype], "batch_size": 1, "outer_size": 1,
            "axis_size": rows, "coord_size": int(ids.shape[0]),
            "inner_size": int(np.prod(table.shape[1:], dtype=np.int64))}, []


@register
class EmbeddingLookup(OpLowering):
    opcode = "EMBEDDING_LOOKUP"
    kernel_sources = ("gather.c",)
    headers = ("microbuild/kernels/gather.h",)
    dtypes = frozenset({"int8", "float32", "int32"})  # int32: the ids

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return _sizes(op, graph)[1]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        sizes, _ = _sizes(op, graph)
        params = ctx.symbol("params")
        ctx.static(f"static const mb_gather_params {params} = "
                   f"{c_struct(list(sizes.items()))};")
        call = (f"mb_gather(&{params}, {ctx.ptr(op.inputs[1])}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])})")
        return index_checked(call, graph.tensor(op.inputs[0]).is_constant)
