"""The float32 path of the operators that move values without computing on them (DEPTH_TO_SPACE,
SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, RESIZE_NEAREST_NEIGHBOR).
TFLM's float kernels for them copy 4-byte elements exactly as its int8 kernels copy
bytes, so the int8 lowerings run float32 models unchanged, with the element size taken from the
dtype; only their operand checks differ: a float tensor has no quantization to match."""

from __future__ import annotations

from microbuild.compiler.spatial import activation_reasons, same_quantization
from microbuild.model.ir import Tensor


def moved_value_reasons(role: str, tensor: Tensor, rank: int | None = None,
                        dtypes: tuple[str, ...] = ("int8", "float32")) -> list[str]:
    """activation_reasons for an operand whose values are only moved, float32 allowed unless
    ``dtypes`` says otherwise."""
    return activation_reasons(role, tensor, rank, tuple(dtypes))


def same_values(a: Tensor, b: Tensor) -> bool:
    """A raw copy from ``a`` to ``b`` keeps the values: both float32, or quantized alike."""
    if a.dtype == "float32" or b.dtype == "float32":
        return a.dtype == b.dtype
    return same_quantization(a, b)
