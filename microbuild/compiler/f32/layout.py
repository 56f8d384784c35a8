"""The float32 path of the operators that move values without computing on them (DEPTH_TO_SPACE,
SPACE_TO_DEPTH, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, MIRROR_PAD, RESIZE_NEAREST_NEIGHBOR,
SELECT_V2). TFLM's float kernels for them copy 4-byte elements exactly as its int8 kernels copy
bytes, so the int8 lowerings run float32 models unchanged, with the element size taken from the
dtype; only their operand checks differ: a float tensor has no quantization to match."""

from __future__ import annotations

from microbuild.compiler.spatial import activation_reasons, same_quantization
from microbuild.model.ir import Tensor


def moved_value_reasons(role: str, tensor: Tensor, rank: int | None = None,
                        dtypes: tuple[str, ...] = ("int8", "float32")) -> list[str]:
    """activation_reasons for an operand whose values are only moved: a float32 tensor (of a
    float model: not quantized) passes when float32 is among ``dtypes``."""
    if tensor.dtype != "float32" or "float32" not in dtypes:
        return activation_reasons(role, tensor, rank, tuple(dtypes))
    reasons = []
    if rank is not None and len(tensor.shape) != rank:
        reasons.append(f"{role} '{tensor.name}' has rank {len(tensor.shape)} {tensor.shape}; "
                       f"expected rank {rank}")
    if any(d < 1 for d in tensor.shape):
        reasons.append(f"{role} '{tensor.name}' has an empty dimension {tensor.shape}")
    return reasons


def same_values(a: Tensor, b: Tensor) -> bool:
    """A raw copy from ``a`` to ``b`` keeps the values: both float32, or quantized alike."""
    if a.dtype == "float32" or b.dtype == "float32":
        return a.dtype == b.dtype
    return same_quantization(a, b)
