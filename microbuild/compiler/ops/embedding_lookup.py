"""EMBEDDING_LOOKUP, bit-exact with TFLM's: rows of a table (input 1, at least 2-D) picked by a
1-D tensor of int32 ids (input 0). A float32 table gives float32 rows and an int8 table int8
rows, copied as TFLM copies them: GATHER's kernel (runtime/kernels/gather.c) along axis 0. An id
outside the table stops the copy and ``<prefix>_run`` returns ``MB_GATHER_INDEX_ERROR``, where
TFLM's Invoke fails; constant ids are checked at compile time.

An int8 table with a float32 output is TFLM's hybrid lookup: each picked row dequantized as TFLM
does, value times the table's scale in float32 (TFLM requires zero point 0),
runtime/kernels/embedding_lookup_f32.c."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_float
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
    hybrid = table.dtype == "int8" and y.dtype == "float32"
    if not hybrid and (table.dtype not in ("int8", "float32") or y.dtype != table.dtype):
        return None, [f"table {table.dtype} and output {y.dtype}: TFLM takes float32 or int8 "
                      "rows into an output of the same type, or int8 rows into float32"]
    if hybrid and (table.quant is None or len(np.atleast_1d(table.quant.scale)) != 1
                   or table.zero_point != 0):
        return None, ["an int8 table dequantized into float32 needs one scale and zero point 0 "
                      "(TFLM's hybrid lookup refuses others)"]
    expected = (int(ids.shape[0]), *table.shape[1:])
    if tuple(y.shape) != expected:
        return None, [f"output shape {list(y.shape)} is not {list(expected)}"]
    if table.dtype == "int8" and not hybrid and (table.scale, table.zero_point) != (y.scale, y.zero_point):
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
    float32_sources = ("embedding_lookup_f32.c",)
    headers = ("microbuild/kernels/gather.h", "microbuild/kernels/embedding_lookup.h")
    dtypes = frozenset({"int8", "float32", "int32"})  # int32: the ids

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return _sizes(op, graph)[1]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        sizes, _ = _sizes(op, graph)
        ids, table = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        if graph.tensor(op.outputs[0]).dtype != table.dtype:  # int8 rows into float32
            call = (f"mb_embedding_lookup_hybrid({ctx.ptr(op.inputs[0])}, "
                    f"{sizes['coord_size']}, {ctx.ptr(op.inputs[1])}, {sizes['axis_size']}, "
                    f"{sizes['inner_size']}, {c_float(table.scale)}, {ctx.ptr(op.outputs[0])})")
            return index_checked(call, ids.is_constant)
        params = ctx.symbol("params")
        ctx.static(f"static const mb_gather_params {params} = "
                   f"{c_struct(list(sizes.items()))};")
        call = (f"mb_gather(&{params}, {ctx.ptr(op.inputs[1])}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])})")
        return index_checked(call, ids.is_constant)
