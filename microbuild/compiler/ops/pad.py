"""PAD and PADV2 (int8, up to five dimensions), bit-exact with TFLM's reference Pad.

The input is copied unchanged and the border filled with one int8 value: the output zero point
for PAD (the quantized 0.0) and the raw constant for PADV2, which TFLM requires to share the
output's scale and zero point. The paddings tensor must be constant so the output shape and the
kernel's parameters are fixed at compile time.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_float
from microbuild.compiler.f32 import is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.overlap import Overlap, pad_distance
from microbuild.compiler.spatial import (
    activation_reasons,
    c_struct,
    operand_count_reasons,
    same_quantization,
    shape_reason,
)
from microbuild.model.ir import Graph, Operator

# runtime/include/microbuild/kernels/pad.h: MB_PAD_MAX_DIMS, TFLM's own limit.
MAX_DIMS = 5


def _paddings(op: Operator, graph: Graph) -> np.ndarray:
    return np.asarray(graph.tensor(op.inputs[1]).data, dtype=np.int64).reshape(-1, 2)


def merged_dims(shape, paddings) -> tuple[list[int], list[int], list[int]]:
    """(dims, pad before, pad after) with every unpadded dimension merged into the one above
    it: the same bytes in the same order, in fewer, longer rows. The kernel's cost is per
    innermost row (one range check per outer dimension, two fills, one copy), so an NHWC pad
    of H and W with C = 3 goes from H*W rows of 3 bytes to H rows of W*3."""
    dims, before, after = [], [], []
    for d, (b, a) in zip(shape, paddings):
        d, b, a = int(d), int(b), int(a)
        if dims and b == 0 and a == 0:  # the previous dimension's rows get d times longer
            dims[-1], before[-1], after[-1] = dims[-1] * d, before[-1] * d, after[-1] * d
        else:
            dims.append(d), before.append(b), after.append(a)
    return dims, before, after


class _Pad(OpLowering):
    kernel_sources = ("pad.c",)
    float32_sources = ("pad_f32.c",)
    headers = ("microbuild/kernels/pad.h", "microbuild/kernels/pad_f32.h")
    dtypes = frozenset({"int8", "int16", "float32"})
    input_counts: tuple[int, ...]

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, self.input_counts)
        if reasons or op.inputs[0] < 0 or op.inputs[1] < 0:
            return reasons or ["input or paddings is missing"]
        x, pads, out = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), \
            graph.tensor(op.outputs[0])
        if x.dtype == "float32":  # a float model's: nothing quantized
            reasons += [f"output '{out.name}' is {out.dtype}; the input is float32"
                        for _ in [0] if out.dtype != "float32"]
        else:
            reasons += activation_reasons("input", x, dtypes=("int8", "int16"))
            reasons += activation_reasons("output", out, dtypes=(x.dtype,))
        rank = len(x.shape)
        if not 1 <= rank <= MAX_DIMS:
            reasons.append(f"input has rank {rank}; 1 to {MAX_DIMS} dimensions are supported")
        if not pads.is_constant:
            reasons.append(f"paddings '{pads.name}' is not constant; the output shape must be "
                           "known at compile time")
        elif pads.dtype not in ("int32", "int64") or pads.num_elements != 2 * rank:
            reasons.append(f"paddings '{pads.name}' is {pads.dtype} {pads.shape}; expected int32 "
                           f"or int64 of shape [{rank}, 2]")
        if reasons:
            return reasons
        p = _paddings(op, graph)
        if np.any(p < 0):
            reasons.append(f"paddings {p.tolist()} has negative entries")
            return reasons
        expected = tuple(int(d + b + a) for d, (b, a) in zip(x.shape, p))
        reasons += shape_reason("output", out, expected)
        if x.dtype != "float32" and not same_quantization(x, out):
            reasons.append(
                f"input (scale {x.scale}, zero point {x.zero_point}) and output (scale "
                f"{out.scale}, zero point {out.zero_point}) are quantized differently; TFLM copies "
                "int8 values unchanged, so they must match")
        reasons += self.pad_value_reasons(op, graph)
        return reasons

    def pad_value_reasons(self, op: Operator, graph: Graph) -> list[str]:
        return []

    def pad_value(self, op: Operator, graph: Graph) -> int:
        return graph.tensor(op.outputs[0]).zero_point

    def float_pad_value(self, op: Operator, graph: Graph) -> float:
        """PAD fills a float tensor with 0.0; PADV2 with its constant."""
        return 0.0

    def overlap(self, op: Operator, graph: Graph, k: int, variant=None):
        """The kernel walks the output in order, reading each input element just before writing
        it: the output may lie over the dying input, shifted down by the padding written ahead
        of the input's bytes (microbuild/compiler/overlap.py)."""
        if k != 0 or is_float32(op, graph):
            return None
        x = graph.tensor(op.inputs[0])
        return Overlap(pad_distance(x.shape, _paddings(op, graph),
                                    np.dtype(x.dtype).itemsize))

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[0])
        dims, before, after = merged_dims(x.shape, _paddings(op, graph))
        # Left-extend to the kernel's five dimensions with size-1, unpadded dimensions.
        lead = MAX_DIMS - len(dims)
        dims, before, after = [1] * lead + dims, [0] * lead + before, [0] * lead + after
        params = ctx.symbol("params")
        fields = [("input_dims", dims), ("pad_before", before), ("pad_after", after),
                  ("pad_value", 0 if x.dtype == "float32" else self.pad_value(op, graph))]
        if x.dtype == "float32":
            ctx.static(f"static const mb_pad_s8_params {params} = {c_struct(fields)};")
            return (f"mb_pad_f32(&{params}, {c_float(self.float_pad_value(op, graph))}, "
                    f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])});")
        ctx.static(f"static const mb_pad_s8_params {params} = {c_struct(fields)};")
        function = "mb_pad_s16" if x.dtype == "int16" else "mb_pad_s8"
        return f"{function}(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])});"


@register
class Pad(_Pad):
    opcode = "PAD"
    input_counts = (2,)


@register
class PadV2(_Pad):
    opcode = "PADV2"
    input_counts = (2, 3)

    def _constant(self, op: Operator, graph: Graph):
        if len(op.inputs) < 3 or op.inputs[2] < 0:
            return None
        return graph.tensor(op.inputs[2])

    def pad_value_reasons(self, op: Operator, graph: Graph) -> list[str]:
        c = self._constant(op, graph)
        if c is None:
            return []
        out = graph.tensor(op.outputs[0])
        reasons = []
        if not c.is_constant or c.dtype != out.dtype or c.num_elements != 1:
            reasons.append(f"constant_values '{c.name}' must be one constant {out.dtype} value, is "
                           f"{c.dtype} {c.shape}{'' if c.is_constant else ' (not constant)'}")
        elif out.dtype != "float32" and not same_quantization(c, out):
            reasons.append(f"constant_values '{c.name}' is quantized differently from the output; "
                           "TFLM requires the same scale and zero point")
        return reasons

    def pad_value(self, op: Operator, graph: Graph) -> int:
        c = self._constant(op, graph)
        if c is None:
            return super().pad_value(op, graph)
        return int(np.asarray(c.data).reshape(-1)[0])

    def float_pad_value(self, op: Operator, graph: Graph) -> float:
        c = self._constant(op, graph)
        return 0.0 if c is None else float(np.asarray(c.data).reshape(-1)[0])
