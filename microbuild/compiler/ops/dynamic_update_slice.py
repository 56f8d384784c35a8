"""DYNAMIC_UPDATE_SLICE, bit-exact with TFLM's: the operand with ``update`` written over it at
``start`` (int32 or int64 indices, constant or computed at run time), each index clamped into
[0, operand_dim - update_dim] as TFLM does. TFLM takes float32, int8, int16 and int32 data, and so
does microbuild (runtime/kernels/dynamic_update_slice.c, one strided copy for the update)."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import ELEMENT_SIZES, MAX_DIMS, type_reasons
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator


@register
class DynamicUpdateSlice(OpLowering):
    opcode = "DYNAMIC_UPDATE_SLICE"
    kernel_sources = ("dynamic_update_slice.c", "strided_copy.c")
    headers = ("microbuild/kernels/dynamic_update_slice.h",)
    # int32 covers the start indices as well as int32 data; int64 is for the indices only.
    dtypes = frozenset({"int8", "int16", "int32", "float32", "int64"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 3 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects an operand, an update and start indices and one output, has "
                    f"inputs {op.inputs} and outputs {op.outputs}"]
        x, update, start, y = (graph.tensor(t) for t in (*op.inputs, op.outputs[0]))
        rank = len(x.shape)
        if x.dtype not in ("int8", "int16", "int32", "float32"):
            return [f"the operand is {x.dtype}; TFLM's DYNAMIC_UPDATE_SLICE takes float32, "
                    "int8, int16 and int32"]
        if start.dtype not in ("int32", "int64") or tuple(start.shape) != (rank,):
            return [f"start indices are {start.dtype} {list(start.shape)}; they must be int32 "
                    f"or int64 of shape [{rank}]"]
        if not 1 <= rank <= MAX_DIMS:
            return [f"the operand has rank {rank}; 1 to {MAX_DIMS} dimensions are supported"]
        if len(update.shape) != rank or any(u > o for u, o in zip(update.shape, x.shape)):
            return [f"the update {list(update.shape)} does not fit in the operand "
                    f"{list(x.shape)}"]
        if tuple(y.shape) != tuple(x.shape):
            return [f"output shape {list(y.shape)} is not the operand's {list(x.shape)}"]
        reasons = type_reasons(op, graph, list(op.inputs[:2]))
        if not reasons and x.dtype in ("int8", "int16") and (
                (x.scale, x.zero_point) != (update.scale, update.zero_point)
                or (x.scale, x.zero_point) != (y.scale, y.zero_point)):
            reasons.append("the operand, the update and the output are quantized differently; "
                           "DYNAMIC_UPDATE_SLICE moves values without requantizing them")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, update, start = (graph.tensor(t) for t in op.inputs)
        pad = [1] * (MAX_DIMS - len(x.shape))
        fields = [("rank", len(x.shape)), ("element_size", ELEMENT_SIZES[x.dtype]),
                  ("start_is_int64", int(start.dtype == "int64")),
                  ("operand_dims", [int(d) for d in x.shape] + pad),
                  ("update_dims", [int(d) for d in update.shape] + pad)]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_dynamic_update_slice_params {params} = {c_struct(fields)};")
        return (f"mb_dynamic_update_slice(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.inputs[1])}, {ctx.ptr(op.inputs[2])}, {ctx.ptr(op.outputs[0])});")
