"""Float32 L2_NORMALIZATION along the last axis (``runtime/kernels/l2norm_f32.c``), bit-exact
with TFLM's reference_ops::L2Normalization on float (epsilon 1e-6, no fused activation)."""

from __future__ import annotations

from microbuild.compiler.f32.activations import reasons as same_size_reasons
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("l2norm_f32.c",)
HEADER = "microbuild/kernels/l2norm_f32.h"
# One float32 input and output of as many values: the activations' checks (the rank and fused
# activation limits are the operator's, in microbuild/compiler/ops/l2norm.py).
reasons = same_size_reasons


def emit(op: Operator, graph: Graph, ctx) -> str:
    x = graph.tensor(op.inputs[0])
    depth = x.shape[-1]
    return (f"mb_l2_normalization_f32({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, "
            f"{x.num_elements // depth}, {depth});")
