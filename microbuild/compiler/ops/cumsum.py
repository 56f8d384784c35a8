"""CUMSUM, bit-exact with TFLM's: running sums along one constant axis (exclusive and reverse
options), int8 and float32 as TFLM's kernel takes (runtime/kernels/cumsum.c, cumsum_f32.c).

int8 is TFLM's ADD-like rescaling, derived here as its Prepare does: left shift 20, the input
multiplier from scale / (2 * scale) = 0.5 and the output multiplier from 2 * input scale /
(2^20 * output scale), both with QuantizeMultiplierSmallerThanOneExp (so the output scale must
exceed 2 * input scale / 2^20), the full int8 range as the activation range.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import c_designated, f32
from microbuild.compiler.f32 import is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.strided_copy import axis_value
from microbuild.compiler.quant import quantize_multiplier_smaller_than_one
from microbuild.model.ir import Graph, Operator

LEFT_SHIFT = 20  # TFLM's kCumSumIntegerShift


def _shape_fields(op: Operator, graph: Graph) -> dict[str, int]:
    shape = [int(d) for d in graph.tensor(op.inputs[0]).shape]
    axis = axis_value(graph, op.inputs[1])
    axis = axis + len(shape) if axis < 0 else axis
    return {"outer": int(np.prod(shape[:axis], dtype=np.int64)), "depth": shape[axis],
            "inner": int(np.prod(shape[axis + 1:], dtype=np.int64)),
            "exclusive": int(bool(op.options.get("exclusive", False))),
            "reverse": int(bool(op.options.get("reverse", False)))}


def _int8_params(op: Operator, graph: Graph) -> dict[str, int]:
    x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    twice_input_scale = 2 * f32(x.scale)
    input_multiplier, input_shift = quantize_multiplier_smaller_than_one(
        f32(x.scale) / twice_input_scale)
    output_multiplier, output_shift = quantize_multiplier_smaller_than_one(
        twice_input_scale / ((1 << LEFT_SHIFT) * f32(y.scale)))
    return {"input_offset": -x.zero_point, "left_shift": LEFT_SHIFT,
            "input_multiplier": input_multiplier, "input_shift": input_shift,
            "output_multiplier": output_multiplier, "output_shift": output_shift,
            "output_offset": y.zero_point, "activation_min": -128, "activation_max": 127}


@register
class CumSum(OpLowering):
    opcode = "CUMSUM"
    kernel_sources = ("cumsum.c",)
    float32_sources = ("cumsum_f32.c",)
    headers = ("microbuild/kernels/cumsum.h",)
    dtypes = frozenset({"int8", "float32"})
    parameter_inputs = (1,)
    tflm_lacks = frozenset({"int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        dtype = "float32" if is_float32(op, graph) else "int8"
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects an input and an axis and one output, has inputs {op.inputs} and "
                    f"outputs {op.outputs}"]
        x, axis_tensor = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        axis = axis_value(graph, op.inputs[1])
        if axis is None or axis_tensor.dtype != "int32":
            return ["the axis is not a constant int32 scalar; microbuild needs it at compile "
                    "time (and TFLM takes int32 only)"]
        rank = len(x.shape)
        if rank < 1 or not -rank <= axis < rank:
            return [f"axis {axis} is outside the input's {rank} dimensions"]
        reasons: list[str] = []
        y = graph.tensor(op.outputs[0])
        if (x.dtype, tuple(x.shape)) != (y.dtype, tuple(y.shape)):
            return [f"the output ({y.dtype} {list(y.shape)}) is not of the input's type and "
                    f"shape ({x.dtype} {list(x.shape)})"]
        if dtype == "int8":
            if x.quant is None or y.quant is None or len(np.atleast_1d(x.quant.scale)) != 1 \
                    or len(np.atleast_1d(y.quant.scale)) != 1:
                return ["the input and the output must be quantized per tensor"]
            ratio = 2 * f32(x.scale) / ((1 << LEFT_SHIFT) * f32(y.scale))
            if not 0 < ratio < 1:
                reasons.append(f"output scale {y.scale} is too small for input scale "
                               f"{x.scale}: TFLM's CUMSUM needs 2 * input scale / 2^20 below it")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        shape = ctx.symbol("shape")
        ctx.static(f"static const mb_cumsum_shape {shape} = "
                   f"{c_designated(_shape_fields(op, graph))};")
        x, y = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
        if is_float32(op, graph):
            return f"mb_cumsum_f32(&{shape}, {x}, {y});"
        params = ctx.symbol("params")
        ctx.static(f"static const mb_cumsum_s8_params {params} = "
                   f"{c_designated(_int8_params(op, graph))};")
        return f"mb_cumsum_s8(&{shape}, &{params}, {x}, {y});"
