"""L2_NORMALIZATION (int8), bit-exact with TFLM's reference_integer_ops::L2Normalization along the
last axis: the int32 sum of squared (q - zero point) gives 1 / sqrt(sum) as a Q31 multiplier and
shift (GetInvSqrtQuantizedMultiplierExp, ``mb_inv_sqrt_multiplier`` in
runtime/kernels/inv_sqrt.c), applied to every (q - zero point) with 7 more bits of left shift:
outputs in 1/128 steps around 0, whatever the output tensor says, so microbuild insists the output
is quantized that way (scale 1/128, zero point 0), as the converter makes it.

TFLM has no int16 kernel (its prepare accepts float32 and int8 only); the option's fused
activation must be NONE, and the input has at most 4 dimensions, as in TFLM. Float32 runs
microbuild/compiler/f32/l2norm.py's kernel.
"""

from __future__ import annotations

from microbuild.compiler.elementwise import f32
from microbuild.compiler.f32 import is_float32, l2norm as l2norm_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.spatial import activation_reasons
from microbuild.model.ir import Graph, Operator

MAX_DIMS = 4  # TFLM's prepare: NumDimensions(input) <= 4


def _rank_and_activation_reasons(op: Operator, x) -> list[str]:
    """TFLM's limits for both the int8 and the float32 kernel."""
    reasons = []
    if not 1 <= len(x.shape) <= MAX_DIMS:
        reasons.append(f"input has rank {len(x.shape)}; TFLM's L2_NORMALIZATION takes 1 to "
                       f"{MAX_DIMS} dimensions")
    activation = op.options.get("fused_activation_function", "NONE")
    if activation != "NONE":
        reasons.append(f"fused activation {activation}: TFLM's L2_NORMALIZATION supports none")
    return reasons


@register
class L2Normalization(OpLowering):
    opcode = "L2_NORMALIZATION"
    kernel_sources = ("l2norm.c", "inv_sqrt.c")
    float32_sources = l2norm_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/l2norm.h", l2norm_f32.HEADER)
    dtypes = frozenset({"int8", "float32"})
    dtype_notes = {"int16": "TFLM's L2_NORMALIZATION has no int16 kernel either, only float32 "
                            "and int8"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return ["expects one input and one output"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if is_float32(op, graph):
            reasons = l2norm_f32.reasons(op, graph)
            return reasons or _rank_and_activation_reasons(op, x)
        reasons = activation_reasons("input", x) + activation_reasons("output", y)
        if reasons:
            return reasons
        if tuple(x.shape) != tuple(y.shape):
            reasons.append(f"input shape {list(x.shape)} and output shape {list(y.shape)} "
                           "differ")
        reasons += _rank_and_activation_reasons(op, x)
        if y.zero_point != 0 or f32(y.scale) != 1.0 / 128:
            reasons.append(f"output quantization (scale {y.scale}, zero point {y.zero_point}) "
                           "must be scale 1/128, zero point 0: TFLM's int8 kernel writes its "
                           "results that way whatever the output says")
        if x.shape and 255 * 255 * x.shape[-1] >= 2**31:
            reasons.append(f"depth {x.shape[-1]}: the int32 sum of squares could overflow")
        return reasons

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Each row is read whole (the sum of squares) before any of it is written, and row i's
        # outputs overwrite only row i's inputs.
        return not graph.tensor(op.inputs[0]).is_constant

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if is_float32(op, graph):
            return l2norm_f32.emit(op, graph, ctx)
        x = graph.tensor(op.inputs[0])
        depth = x.shape[-1]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_l2norm_s8_params {params} = {{.rows = "
                   f"{x.num_elements // depth}, .depth = {depth}, .input_zero_point = "
                   f"{x.zero_point}}};")
        return f"mb_l2norm_s8(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])});"
