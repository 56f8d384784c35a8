"""Compile-time helpers shared by the element-wise operator lowerings (ADD, MUL, activations,
QUANTIZE, DEQUANTIZE): operand checks, TFLite broadcasting reduced to the runtime's
``mb_broadcast_shape``, and C literals for float parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microbuild.model.ir import Graph, Operator, Tensor

# runtime/include/microbuild/kernels/broadcast.h: MB_BROADCAST_MAX_DIMS (TFLM's own limit).
MAX_BROADCAST_DIMS = 6


def f32(value: float) -> float:
    """The float32 value TFLM holds (TfLiteQuantizationParams.scale is a float), as a Python float."""
    return float(np.float32(value))


def c_float(value: float) -> str:
    """An exact C99 float literal: a hex float, so the compiler cannot round it differently,
    with the decimal value alongside for the reader."""
    v = f32(value)
    mantissa, exponent = v.hex().split("p")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}f /* {v!r} */"


def c_designated(fields: dict[str, int]) -> str:
    """A C99 designated initializer, ``{.name = value, ...}``, so generated code reads as the
    parameter names rather than a row of numbers."""
    return "{" + ", ".join(f".{name} = {value}" for name, value in fields.items()) + "}"


def operand_reasons(op: Operator, graph: Graph, n_inputs: int, input_dtypes: tuple[str, ...],
                    output_dtype: str) -> list[str]:
    """Reasons the op's operand count, dtypes or quantization are outside what these kernels do.

    Every quantized operand must be quantized per tensor (one scale, one zero point)."""
    reasons: list[str] = []
    if len(op.inputs) != n_inputs or any(i < 0 for i in op.inputs):
        reasons.append(f"expects {n_inputs} input(s), has {len(op.inputs)} ({op.inputs})")
        return reasons
    if len(op.outputs) != 1:
        reasons.append(f"expects 1 output, has {len(op.outputs)}")
        return reasons
    operands = [(f"input {k}", graph.tensor(i), dt)
                for k, (i, dt) in enumerate(zip(op.inputs, input_dtypes))]
    operands.append(("output", graph.tensor(op.outputs[0]), output_dtype))
    for role, t, dtype in operands:
        if t.dtype != dtype:
            reasons.append(f"{role} '{t.name}' is {t.dtype}; only {dtype} is supported")
        elif dtype == "int8":
            reasons.extend(_per_tensor_reasons(role, t))
        if t.is_dynamic:
            reasons.append(f"{role} '{t.name}' has a dynamic shape {t.shape_signature}")
    return reasons


def _per_tensor_reasons(role: str, t: Tensor) -> list[str]:
    if t.quant is None:
        return [f"{role} '{t.name}' is int8 but not quantized"]
    if t.quant.per_channel:
        return [f"{role} '{t.name}' is quantized per channel; only per-tensor is supported"]
    if not t.scale > 0:
        return [f"{role} '{t.name}' has scale {t.scale}; it must be positive"]
    return []


def same_shape_reasons(op: Operator, graph: Graph) -> list[str]:
    """A unary element-wise op's output must hold exactly its input's elements."""
    src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if src.num_elements != dst.num_elements:
        return [f"input has {src.num_elements} elements {src.shape} but output has "
                f"{dst.num_elements} {dst.shape}"]
    return []


# The fused activations TFLM's int8 ADD and MUL apply (CalculateActivationRangeQuantized).
FUSED_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def fused_activation(op: Operator) -> str:
    return str(op.options.get("fused_activation_function", "NONE"))


def binary_reasons(op: Operator, graph: Graph, dtype: str) -> list[str]:
    """What ADD and MUL both refuse for operands of ``dtype`` (int8, or int16 in 16x8 models,
    whose operands TFLM requires to have zero point 0): other operand types, shapes that do not
    broadcast, fused activations TFLM's kernels do not apply. Empty when the op is usable."""
    reasons = operand_reasons(op, graph, 2, (dtype, dtype), dtype)
    if reasons:
        return reasons
    if dtype == "int16":
        for t in [*op.inputs, *op.outputs]:
            tensor = graph.tensor(t)
            if tensor.quant is None or np.any(tensor.quant.zero_point != 0):
                reasons.append(f"int16 tensor '{tensor.name}' needs zero point 0 (TFLM's int16 "
                               "kernels)")
        if reasons:
            return reasons
    reasons = binary_broadcast_reasons(op, graph)
    activation = fused_activation(op)
    if activation not in FUSED_ACTIVATIONS:
        reasons.append(f"fused activation {activation} is not supported")
    return reasons


@dataclass(frozen=True)
class BroadcastPlan:
    """The walk ``mb_broadcast_binary_s8`` does: output extents and per-input element strides
    (0 where an input is broadcast), outermost first, after dropping size-1 dimensions and merging
    dimensions that both inputs step through contiguously."""

    dims: tuple[int, ...]
    a_strides: tuple[int, ...]
    b_strides: tuple[int, ...]

    @property
    def a_is_full(self) -> bool:
        """True when input a is not broadcast: it has one element per output element, in order."""
        expected = 1
        for d, s in zip(reversed(self.dims), reversed(self.a_strides)):
            if s != expected:
                return False
            expected *= d
        return True

    def c_initializer(self) -> str:
        def arr(values: tuple[int, ...]) -> str:
            return "{" + ", ".join(str(v) for v in values) + "}"

        return (f"{{{len(self.dims)}, {arr(self.dims)}, {arr(self.a_strides)}, "
                f"{arr(self.b_strides)}}}")


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy/TFLite broadcasting of two shapes, or None when they are incompatible."""
    rank = max(len(a), len(b))
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return tuple(out)


def plan_broadcast(a: tuple[int, ...], b: tuple[int, ...], out: tuple[int, ...]) -> BroadcastPlan:
    """Reduce ``a (op) b -> out`` to the fewest dimensions the runtime walker needs.

    The caller has checked ``broadcast_shape(a, b) == out``."""
    rank = len(out)
    pa = (1,) * (rank - len(a)) + tuple(a)
    pb = (1,) * (rank - len(b)) + tuple(b)

    def strides(shape: tuple[int, ...]) -> list[int]:
        result, step = [0] * rank, 1
        for d in range(rank - 1, -1, -1):
            # A size-1 dimension against a longer output dimension is broadcast: stride 0.
            result[d] = step if shape[d] == out[d] else 0
            step *= shape[d]
        return result

    sa, sb = strides(pa), strides(pb)
    dims: list[int] = []
    a_str: list[int] = []
    b_str: list[int] = []
    for d in range(rank):
        if out[d] == 1:
            continue  # contributes nothing to any offset
        if dims and a_str[-1] == sa[d] * out[d] and b_str[-1] == sb[d] * out[d]:
            # The previous dimension steps over exactly one run of this one in both inputs:
            # the two are one longer dimension.
            dims[-1] *= out[d]
            a_str[-1], b_str[-1] = sa[d], sb[d]
        else:
            dims.append(out[d])
            a_str.append(sa[d])
            b_str.append(sb[d])
    if not dims:  # a one-element output
        dims, a_str, b_str = [1], [0], [0]
    return BroadcastPlan(tuple(dims), tuple(a_str), tuple(b_str))


def binary_broadcast_reasons(op: Operator, graph: Graph) -> list[str]:
    """Shape checks for a broadcasting binary op (after operand_reasons passed)."""
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    expected = broadcast_shape(a.shape, b.shape)
    if expected is None:
        return [f"input shapes {a.shape} and {b.shape} do not broadcast"]
    if tuple(out.shape) != expected:
        return [f"output shape {out.shape} is not the broadcast {expected} of the inputs"]
    plan = plan_broadcast(a.shape, b.shape, out.shape)
    if len(plan.dims) > MAX_BROADCAST_DIMS:
        return [f"broadcasting {a.shape} with {b.shape} needs {len(plan.dims)} dimensions; "
                f"at most {MAX_BROADCAST_DIMS} are supported"]
    return []


def input0_not_broadcast(op: Operator, graph: Graph) -> bool:
    """Whether a broadcasting binary op may write its output over input 0's buffer.

    The row walker reads a[i] and b[...] before it writes out[i], so sharing is safe when input 0
    is not broadcast: it then holds exactly the output's elements, in the same order."""
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    if a.is_constant:
        return False
    return plan_broadcast(a.shape, b.shape, out.shape).a_is_full



# ---- compile-time evaluation of non-quantized arithmetic (shape math, int32 index tensors) ----
_FLOAT_ACTIVATION_RANGE = {"NONE": (None, None), "RELU": (0.0, None), "RELU6": (0.0, 6.0),
                           "RELU_N1_TO_1": (-1.0, 1.0)}


def fold_arithmetic(op: Operator, graph: Graph, compute) -> list[np.ndarray] | None:
    """Outputs of a binary arithmetic op on constant int32/int64/float32 inputs (broadcasting
    like TFLite), or None for quantized operands (those run on the device).

    ``compute(a, b)`` gets int64 (for integer types) or float32 arrays; integer results wrap to
    the output type as the C kernels' two's-complement arithmetic does. A float32 result gets the
    op's fused activation; TFLM's integer kernels clamp only to the type's own range."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or min(op.inputs) < 0:
        return None
    a, b = (graph.tensor(i) for i in op.inputs)
    out = graph.tensor(op.outputs[0])
    if not a.dtype == b.dtype == out.dtype or out.dtype not in ("int32", "int64", "float32"):
        return None
    if broadcast_shape(a.shape, b.shape) is None:
        raise ValueError(f"input shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    if out.dtype == "float32":
        with np.errstate(all="ignore"):
            value = np.asarray(compute(a.data.astype(np.float32), b.data.astype(np.float32)),
                               dtype=np.float32)
        low, high = _FLOAT_ACTIVATION_RANGE.get(fused_activation(op), (None, None))
        if low is not None or high is not None:
            value = np.clip(value, low, high).astype(np.float32)
        return [value]
    value = np.asarray(compute(a.data.astype(np.int64), b.data.astype(np.int64)), dtype=np.int64)
    return [value.astype(out.dtype)]  # wraps, as int32 arithmetic in C does
