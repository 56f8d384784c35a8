"""TRANSPOSE (any element type TFLM moves: int8, int16, int32, float32, bool; up to 6 dimensions),
bit-exact with TFLM's reference Transpose, which copies values without rescaling (input and output
must be quantized alike). The permutation must be constant. On constants it is evaluated at
compile time; before a FULLY_CONNECTED it is folded into the weights
(microbuild/compiler/transpose_folding.py), so what runs on the device is the transpose at an
NCHW input (PyTorch exports)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.spatial import c_struct, same_quantization
from microbuild.model.ir import Graph, Operator

MAX_DIMS = 6


def permutation(op: Operator, graph: Graph) -> list[int] | None:
    if len(op.inputs) < 2 or op.inputs[1] < 0 or not graph.tensor(op.inputs[1]).is_constant:
        return None
    return [int(p) for p in np.asarray(graph.tensor(op.inputs[1]).data).reshape(-1)]


@register
class Transpose(OpLowering):
    opcode = "TRANSPOSE"
    kernel_sources = ("transpose.c",)
    headers = ("microbuild/kernels/transpose.h",)
    dtypes = frozenset({"int8", "int16", "int32", "float32", "bool"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 2 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects an input and a permutation, has inputs {op.inputs}"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        perm = permutation(op, graph)
        if perm is None:
            return ["the permutation is not constant; the output shape must be known at "
                    "compile time"]
        reasons = []
        rank = len(x.shape)
        if sorted(perm) != list(range(rank)):
            reasons.append(f"permutation {perm} is not a permutation of the input's {rank} "
                           "dimensions")
        elif not 1 <= rank <= MAX_DIMS:
            reasons.append(f"input has rank {rank}; TFLM transposes 1 to {MAX_DIMS} dimensions")
        elif tuple(y.shape) != tuple(x.shape[p] for p in perm):
            reasons.append(f"output shape {list(y.shape)} is not the input's {list(x.shape)} "
                           f"permuted by {perm}")
        if x.dtype != y.dtype:
            reasons.append(f"input is {x.dtype} but output is {y.dtype}")
        elif x.quant is not None and y.quant is None:
            reasons.append(f"input is quantized but output '{y.name}' has no scale and zero "
                           "point; TFLM moves values without rescaling")
        elif x.quant is not None and not same_quantization(x, y):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {y.scale}, zero point {y.zero_point}) are quantized "
                           "differently; TFLM moves values without rescaling")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        perm = permutation(op, graph)
        if perm is None:
            return None
        x = graph.tensor(op.inputs[0])
        return [np.ascontiguousarray(x.data.reshape(x.shape).transpose(perm))]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[0])
        return emit_transpose(tuple(x.shape), permutation(op, graph),
                              np.dtype(x.dtype).itemsize, ctx, op.inputs[0], op.outputs[0])


def merged_dims(shape: tuple[int, ...], perm) -> list[tuple[int, int]]:
    """The output's dimensions as (size, input elements per step), outermost first, with size-1
    dimensions dropped and every pair that walks the input as one dimension merged: an outer
    output dimension whose input step is the inner one's size times its step continues the inner
    one's walk. DEPTH_TO_SPACE's (block, C) rows become one contiguous run of block * C
    elements, and an identity permutation one run of the whole tensor, so the kernel's index
    arithmetic is per run, not per element."""
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    dims: list[tuple[int, int]] = []
    for p in perm:
        if shape[p] == 1:
            continue
        size, step = shape[p], strides[p]
        if dims and dims[-1][1] == size * step:
            dims[-1] = (dims[-1][0] * size, step)
        else:
            dims.append((size, step))
    return dims or [(1, 1)]


def emit_transpose(shape: tuple[int, ...], perm, element_size: int, ctx: EmitContext,
                   input_index: int, output_index: int) -> str:
    """The call of runtime/kernels/transpose.c moving `shape` into the order `perm` (TRANSPOSE,
    DEPTH_TO_SPACE and SPACE_TO_DEPTH all lower to it)."""
    dims = merged_dims(shape, perm)
    pad = MAX_DIMS - len(dims)
    fields = [("num_dims", len(dims)), ("element_size", element_size),
              ("output_dims", [d for d, _ in dims] + [1] * pad),
              ("input_strides", [s for _, s in dims] + [0] * pad)]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_transpose_params {params} = {c_struct(fields)};")
    return f"mb_transpose(&{params}, {ctx.ptr(input_index)}, {ctx.ptr(output_index)});"
