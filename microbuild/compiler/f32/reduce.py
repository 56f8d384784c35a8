"""Float32 MEAN, SUM, REDUCE_MAX and REDUCE_MIN (``runtime/kernels/reduce_f32.c``), bit-exact with
TFLM's float reductions: each output reduces its inputs in the input's row-major order from the
reducer's initial value; MEAN divides the float sum by the count. The axes are checked and laid
out as for the integer kernels (microbuild/compiler/ops/mean.py), whose walk (mb_reduce_step in
reduce.c) the float kernel shares."""

from __future__ import annotations

from microbuild.compiler.f32 import all_float32_reasons
from microbuild.compiler.spatial import c_struct, operand_count_reasons, shape_reason
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("reduce_f32.c", "reduce.c")
HEADER = "microbuild/kernels/reduce_f32.h"
OPERATIONS = {"SUM": 0, "MEAN": 1, "REDUCE_MAX": 2, "REDUCE_MIN": 3}


def reasons(op: Operator, graph: Graph) -> list[str]:
    # Imported here: microbuild/compiler/ops/mean.py imports this module.
    from microbuild.compiler.ops import mean

    found = operand_count_reasons(op, (2,))
    if found or min(op.inputs) < 0:
        return found or ["input or axis is missing"]
    found = all_float32_reasons(op, graph, inputs=[0])
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    rank = len(x.shape)
    if not 1 <= rank <= mean.MAX_DIMS:
        found.append(f"input has rank {rank}; 1 to {mean.MAX_DIMS} dimensions are supported")
    found += mean.axis_reasons(op, graph, rank)
    if found:
        return found
    axes = mean.resolved_axes(op, graph)
    # TFLM's MEAN and SUM resolve the axes into an array of two; REDUCE_MAX/MIN take any number.
    if op.opcode in ("MEAN", "SUM") and len(axes) > mean.MAX_REDUCED_AXES:
        found.append(f"reduces {len(axes)} axes {axes}; TFLM's kernel handles at most "
                     f"{mean.MAX_REDUCED_AXES}, so there is no reference result to match")
    keep = bool(op.options.get("keep_dims", False))
    return found + shape_reason("output", out, mean.reduced_shape(tuple(x.shape), axes, keep))


def emit(op: Operator, graph: Graph, ctx) -> str:
    from microbuild.compiler.ops import mean

    x = graph.tensor(op.inputs[0])
    params = ctx.symbol("params")
    fields = mean.layout_fields(tuple(x.shape), mean.resolved_axes(op, graph), mean.MAX_DIMS)
    ctx.static(f"static const mb_reduce_params {params} = {c_struct(fields)};")
    return (f"mb_reduce_f32(&{params}, {OPERATIONS[op.opcode]}, {ctx.ptr(op.inputs[0])}, "
            f"{ctx.ptr(op.outputs[0])});")

