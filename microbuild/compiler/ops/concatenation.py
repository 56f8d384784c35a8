"""CONCATENATION (int8, any axis, up to ten inputs of up to four dimensions, TFLM's limits),
bit-exact with TFLM.

TFLM copies int8 inputs byte for byte: it does not requantize, even though it records each input's
scale. The TFLite converter therefore gives every input the output's scale and zero point
(inserting a requantizing op on a branch when needed). An input quantized differently would be
misread by TFLM, so such a model is refused rather than reproduced.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.spatial import activation_reasons, same_quantization, shape_reason
from microbuild.model.ir import Graph, Operator

MAX_INPUTS = 10
MAX_DIMS = 4


def positive_axis(op: Operator, rank: int) -> int:
    axis = int(op.options.get("axis", 0))
    return axis + rank if axis < 0 else axis


@register
class Concatenation(OpLowering):
    opcode = "CONCATENATION"
    kernel_sources = ("concatenation.c",)
    headers = ("microbuild/kernels/concatenation.h",)
    # The kernel moves bytes: int16 (16x8 models) and int32 (non-quantized, e.g. the audio
    # front end's spectrum) blocks are passed in bytes.
    # float32 (a float model's) blocks too: TFLM copies them as they are.
    dtypes = frozenset({"int8", "int16", "int32", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = []
        if not 1 <= len(op.inputs) <= MAX_INPUTS or min(op.inputs) < 0:
            reasons.append(f"expects 1 to {MAX_INPUTS} inputs, has {op.inputs}")
        if len(op.outputs) != 1:
            reasons.append(f"expects 1 output, has {len(op.outputs)}")
        if reasons:
            return reasons
        out = graph.tensor(op.outputs[0])
        # Plain integers and floats: TFLM copies them, nothing is quantized.
        raw = out.dtype in ("int32", "float32")
        if raw:
            reasons += [f"input {k} '{graph.tensor(i).name}' is {graph.tensor(i).dtype}; the "
                        f"output is {out.dtype}" for k, i in enumerate(op.inputs)
                        if graph.tensor(i).dtype != out.dtype]
        else:
            reasons += activation_reasons("output", out, dtypes=("int8", "int16"))
            for k, i in enumerate(op.inputs):
                reasons += activation_reasons(f"input {k}", graph.tensor(i),
                                              dtypes=(out.dtype,))
        activation = op.options.get("fused_activation_function", "NONE")
        if activation != "NONE":
            reasons.append(f"fused activation {activation}; TFLM allows none on CONCATENATION")
        rank = len(out.shape)
        if not 1 <= rank <= MAX_DIMS:
            reasons.append(f"output has rank {rank}; 1 to {MAX_DIMS} dimensions are supported")
        if reasons:
            return reasons
        axis = positive_axis(op, rank)
        if not 0 <= axis < rank:
            return [f"axis {op.options.get('axis')} is out of range for rank {rank}"]
        total = 0
        for k, i in enumerate(op.inputs):
            t = graph.tensor(i)
            expected = tuple(out.shape[:axis]) + (t.shape[axis] if len(t.shape) == rank else -1,) \
                + tuple(out.shape[axis + 1:])
            reasons += shape_reason(f"input {k}", t, expected)
            total += t.shape[axis] if len(t.shape) == rank else 0
            if not raw and not same_quantization(t, out):
                reasons.append(
                    f"input {k} '{t.name}' (scale {t.scale}, zero point {t.zero_point}) is "
                    f"quantized differently from the output (scale {out.scale}, zero point "
                    f"{out.zero_point}); TFLM copies int8 inputs without requantizing, so they "
                    "must match")
        if not reasons and total != out.shape[axis]:
            reasons.append(f"inputs add up to {total} along axis {axis}, output has "
                           f"{out.shape[axis]}")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        # Constants of any type are joined as they are; int8 ones only when nothing would need
        # requantizing (the check below refuses those anyway).
        out = graph.tensor(op.outputs[0])
        parts = [graph.tensor(i) for i in op.inputs]
        if any(p.dtype != out.dtype for p in parts) or (
                out.quant is not None and not all(same_quantization(p, out) for p in parts)):
            return None
        axis = positive_axis(op, len(out.shape))
        return [np.concatenate([p.data.reshape(p.shape) for p in parts], axis=axis)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        out = graph.tensor(op.outputs[0])
        axis = positive_axis(op, len(out.shape))
        outer = int(np.prod(out.shape[:axis]))
        inner = int(np.prod(out.shape[axis + 1:]))
        itemsize = np.dtype(out.dtype).itemsize
        blocks = [graph.tensor(i).shape[axis] * inner * itemsize for i in op.inputs]
        sizes = ctx.symbol("block_sizes")
        ctx.static(f"static const int32_t {sizes}[{len(blocks)}] = "
                   f"{{{', '.join(str(b) for b in blocks)}}};")
        # The input pointers may depend on the run-time workspace address, so the array is a
        # local (C99 allows non-constant initializers for automatic arrays).
        inputs = ctx.symbol("inputs")
        pointers = ", ".join(f"(const int8_t *){ctx.ptr(i)}" for i in op.inputs)
        return (f"{{ const int8_t *const {inputs}[{len(blocks)}] = {{{pointers}}}; "
                f"mb_concatenation_s8({outer}, {len(blocks)}, {inputs}, {sizes}, "
                f"(int8_t *){ctx.ptr(op.outputs[0])}); }}")
