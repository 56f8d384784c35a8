"""CAST, as TFLM's kernel does it: a C ``static_cast`` per element (float to integer truncates
toward zero; anything non-zero to bool is true; a narrower or differently signed integer type
keeps the value modulo 2^bits). On constants it is evaluated at compile time (any of TFLM's
types); at run time microbuild's kernel (runtime/kernels/cast.c) converts between the integer
types int8, uint8, int16, int32 and uint32 (the audio front end's int16/uint32 -> int32 -> int8
casts)."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import cast as cast_f32
from microbuild.compiler.ops.base import ANY_DTYPE, EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator

# The types TFLM's CAST reads and writes.
_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64",
          "bool")
# Run-time casts: the kernel's type codes (size in bytes, negative when signed).
RUNTIME_TYPES = {"int8": -1, "uint8": 1, "int16": -2, "int32": -4, "uint32": 4}
# The integer kernels' names for them: mb_cast_<from>_to_<to> (runtime/include/.../cast.h).
KERNEL_TYPE_NAMES = {"int8": "s8", "uint8": "u8", "int16": "s16", "int32": "s32", "uint32": "u32"}


@register
class Cast(OpLowering):
    opcode = "CAST"
    kernel_sources = ("cast.c",)
    float32_sources = cast_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/cast.h", cast_f32.HEADER)
    # Every type passes the generic check; check() names what cannot run on the device.
    dtypes = ANY_DTYPE

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 1 or op.inputs[0] < 0 or len(op.outputs) != 1:
            return [f"expects one input and one output, has {len(op.inputs)} and "
                    f"{len(op.outputs)}"]
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons = []
        for role, t in (("input", src), ("output", out)):
            if t.dtype not in RUNTIME_TYPES and t.dtype != "float32":
                reasons.append(f"{role} is {t.dtype}; microbuild casts between "
                               f"{', '.join(RUNTIME_TYPES)} and float32 at run time (other "
                               "types only on constants, at compile time)")
        if src.num_elements != out.num_elements:
            reasons.append(f"input has {src.num_elements} elements, output {out.num_elements}")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if "float32" in (src.dtype, out.dtype):
            return cast_f32.emit(ctx.ptr(op.inputs[0]), RUNTIME_TYPES.get(src.dtype),
                                 ctx.ptr(op.outputs[0]), RUNTIME_TYPES.get(out.dtype),
                                 out.num_elements)
        src_ptr, out_ptr = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
        width = abs(RUNTIME_TYPES[src.dtype])
        if width == abs(RUNTIME_TYPES[out.dtype]):
            return f"mb_cast_same_width({src_ptr}, {out_ptr}, {out.num_elements * width});"
        return (f"mb_cast_{KERNEL_TYPE_NAMES[src.dtype]}_to_{KERNEL_TYPE_NAMES[out.dtype]}"
                f"({src_ptr}, {out_ptr}, {out.num_elements});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Element i is read before it is written; in place only when both have the same size
        # (the planner checks the byte counts).
        return not graph.tensor(op.inputs[0]).is_constant

    def fold(self, op: Operator, graph: Graph) -> list[np.ndarray] | None:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            raise ValueError(f"expects one input and one output, has {len(op.inputs)} and "
                             f"{len(op.outputs)}")
        src, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if src.dtype not in _TYPES or out.dtype not in _TYPES:
            raise ValueError(f"casts {src.dtype} to {out.dtype}; TFLM casts between "
                             f"{', '.join(_TYPES)}")
        value = src.data
        if out.dtype == "bool":
            return [value != 0]
        if np.issubdtype(value.dtype, np.floating) and out.dtype != "float32" \
                and out.dtype != "float64":
            info = np.iinfo(out.dtype)
            if not np.all(np.isfinite(value)) or value.min() < info.min or value.max() > info.max:
                raise ValueError(f"a value of the float constant is outside {out.dtype} "
                                 "(undefined in C)")
            value = np.trunc(value)
        return [value.astype(out.dtype)]
