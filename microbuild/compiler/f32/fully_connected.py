"""Float32 FULLY_CONNECTED (``runtime/kernels/fully_connected_f32.c``), bit-exact with TFLM's
reference_ops::FullyConnected on float: float32 input, float32 weights [output_depth, input_depth],
optional float32 bias, float32 output, NONE/RELU/RELU6/RELU_N1_TO_1. Weights and bias may be
computed at run time, as TFLM's float kernel reads them like any tensor: litert-torch exports
attention's ``q @ k.T`` as a FULLY_CONNECTED whose weights are ``k``.
Int8 weights on float activations are a dynamic-range ("hybrid") model, which TFLM refuses and
microbuild/compiler/validate.py names before this is reached."""

from __future__ import annotations

from microbuild.compiler.f32 import activation_range, all_float32_reasons, mve
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("fully_connected_f32.c", "dot_f32.c")
HEADER = "microbuild/kernels/fully_connected_f32.h"


def reasons(op: Operator, graph: Graph) -> list[str]:
    if len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0 or len(op.outputs) != 1:
        return ["expected an input, weights, an optional bias and one output"]
    found = all_float32_reasons(op, graph)
    if found:
        return found
    x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    bias = graph.tensor(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else None
    if len(w.shape) != 2:
        return found + [f"weights have shape {list(w.shape)}; expected "
                        "[output_depth, input_depth]"]
    out_depth, depth = w.shape
    if x.num_elements % depth != 0:
        found.append(f"input of {x.num_elements} elements is not a whole number of rows of "
                     f"{depth}")
    elif y.num_elements != x.num_elements // depth * out_depth:
        found.append(f"output shape {list(y.shape)} does not match {x.num_elements // depth} "
                     f"rows x {out_depth} units")
    if bias is not None and bias.num_elements != out_depth:
        found.append(f"bias has {bias.num_elements} elements for {out_depth} units")
    if activation_range(op) is None:
        found.append(f"fused activation {op.options.get('fused_activation_function')} is not "
                     "supported")
    if op.options.get("weights_format", "DEFAULT") != "DEFAULT":
        found.append(f"weights format {op.options.get('weights_format')} is not supported")
    return found


def emit(op: Operator, graph: Graph, ctx) -> str:
    x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    out_depth, depth = w.shape
    low, high = activation_range(op)
    params = ctx.symbol("params")
    fields = [("batches", x.num_elements // depth), ("input_depth", depth),
              ("output_depth", out_depth), ("activation_min", low), ("activation_max", high)]
    ctx.static(f"static const mb_fully_connected_f32_params {params} = {c_struct(fields)};")
    bias = ctx.ptr(op.inputs[2]) if len(op.inputs) > 2 and op.inputs[2] >= 0 else "NULL"
    return mve.kernel_call(ctx, "mb_fully_connected_f32", [
        f"&{params}", ctx.ptr(x.index), ctx.ptr(w.index), bias, ctx.ptr(op.outputs[0])])
