"""The lowering ADD, SUB, MUL, MAXIMUM/MINIMUM and SQUARED_DIFFERENCE share: two inputs that
broadcast against each other (TFLite's rules, reduced to the runtime's ``mb_broadcast_shape``),
one output of the same dtype.

They differ only in data and in their quantized parameters, so each operator's module is a
subclass that fills in:

- ``function``: the C kernel's name without its type suffix (``mb_add`` runs ``mb_add_s8`` or
  ``mb_add_s16``);
- ``params_type`` and ``quantized_params``: the C struct of the int8/int16 rescaling parameters and
  their values, or ``None`` when the kernel takes none (MAXIMUM/MINIMUM copy raw values);
- ``quantized_reasons``: what TFLM's prepare step refuses beyond the generic operand checks;
- ``compute``: the arithmetic on numpy arrays that folds int32/float32 constants;
- ``int32_kernel``: whether int32 run-time values run microbuild/compiler/int32_arith.py's kernel
  (SQUARED_DIFFERENCE has none in TFLM's int32 form here).

float32 run-time values always run microbuild/compiler/f32/arith.py's kernel.
"""

from __future__ import annotations

from microbuild.compiler import int32_arith
from microbuild.compiler.elementwise import (
    binary_reasons,
    c_designated,
    f32,
    fold_arithmetic,
    input0_not_broadcast,
    plan_broadcast,
)
from microbuild.compiler.f32 import arith as arith_f32, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering
from microbuild.compiler.quant import quantize_multiplier_smaller_than_one
from microbuild.model.ir import Graph, Operator


def rescale_pair_params(scale1: float, zp1: int, scale2: float, zp2: int,
                        left_shift: int) -> tuple[dict[str, int], float]:
    """The fields runtime/include/microbuild/kernels/rescale_pair.h declares for ADD, SUB and
    SQUARED_DIFFERENCE: both inputs brought to twice the larger input scale (multipliers below
    1, computed in double from the float32 scales as TFLM does). Returns them and that common
    scale, from which each operator derives its output multiplier."""
    s1, s2 = f32(scale1), f32(scale2)
    twice_max_input_scale = 2.0 * max(s1, s2)
    m1, sh1 = quantize_multiplier_smaller_than_one(s1 / twice_max_input_scale)
    m2, sh2 = quantize_multiplier_smaller_than_one(s2 / twice_max_input_scale)
    return {
        "input1_offset": -zp1, "input1_multiplier": m1, "input1_shift": sh1,
        "input2_offset": -zp2, "input2_multiplier": m2, "input2_shift": sh2,
        "left_shift": left_shift,
    }, twice_max_input_scale


class BroadcastBinaryLowering(OpLowering):
    function: str
    params_type: str | None = None
    int32_kernel = True
    float32_sources = arith_f32.KERNEL_SOURCES
    dtypes = frozenset({"int8", "int16", "int32", "float32"})
    compute = None

    def quantized_params(self, op: Operator, graph: Graph) -> dict[str, int] | None:
        """The ``params_type`` fields for an int8/int16 instance (None: the kernel takes none)."""
        return None

    def quantized_reasons(self, op: Operator, graph: Graph, dtype: str) -> list[str]:
        """What TFLM refuses for an int8/int16 instance whose operands are otherwise fine."""
        return []

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if self.int32_kernel and int32_arith.is_int32(op, graph):
            return int32_arith.int32_reasons(op, graph)
        if is_float32(op, graph):
            return arith_f32.reasons(op, graph)
        dtype = graph.tensor(op.outputs[0]).dtype if op.outputs else "int8"
        reasons = binary_reasons(op, graph, dtype if dtype in self.dtypes else "int8")
        if reasons:
            return reasons
        return self.quantized_reasons(op, graph, dtype)

    def fold(self, op: Operator, graph: Graph):
        # int32/float32 arithmetic on constants (shape computations); int8 runs on the device.
        return fold_arithmetic(op, graph, type(self).compute)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        if self.int32_kernel and int32_arith.is_int32(op, graph):
            return int32_arith.emit_int32(op, graph, ctx)
        if is_float32(op, graph):
            return arith_f32.emit(op, graph, ctx)
        a, b = (graph.tensor(i) for i in op.inputs)
        out = graph.tensor(op.outputs[0])
        args = []
        fields = self.quantized_params(op, graph)
        if fields is not None:
            params = ctx.symbol("params")
            ctx.static(f"static const {self.params_type} {params} = {c_designated(fields)};")
            args.append(f"&{params}")
        shape = ctx.symbol("shape")
        plan = plan_broadcast(a.shape, b.shape, out.shape)
        ctx.static(f"static const mb_broadcast_shape {shape} = {plan.c_initializer()};")
        suffix = "s16" if out.dtype == "int16" else "s8"
        return self.kernel_call(op, graph, ctx, f"{self.function}_{suffix}", [
            *args, f"&{shape}", ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1]),
            ctx.ptr(op.outputs[0])])

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return input0_not_broadcast(op, graph)
