"""CAST to and from float32 at run time (``runtime/kernels/cast_f32.c``): a C cast per element,
as TFLM's static_cast."""

from __future__ import annotations

KERNEL_SOURCES = ("cast_f32.c",)
HEADER = "microbuild/kernels/cast_f32.h"


def emit(src_ptr: str, src_type: int | None, dst_ptr: str, dst_type: int | None, size: int) -> str:
    """``src_type``/``dst_type``: cast.h's integer type code, None for float32."""
    if src_type is None and dst_type is None:
        # memmove: the planner may put the output on the input (a float-to-float CAST copies in
        # place), and memcpy's restrict arguments may not be the same buffer.
        return f"memmove({dst_ptr}, {src_ptr}, {4 * size});"
    if src_type is None:
        return f"mb_cast_f32_to_int({src_ptr}, {dst_ptr}, {dst_type}, {size});"
    return f"mb_cast_int_to_f32({src_ptr}, {src_type}, {dst_ptr}, {size});"
