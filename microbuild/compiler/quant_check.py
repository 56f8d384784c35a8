"""Whether a tensor's scale and zero point are ones TFLM's kernels can use: prepare refuses a model
with any that are not (a damaged or hand-edited file), and the variables pass leaves such a
variable as it is. Below both, so neither imports the other for it."""

from __future__ import annotations

import math

import numpy as np

from microbuild.model.ir import Tensor

# The integer types a zero point may be stored for, and their ranges.
_ZERO_POINT_RANGE = {
    "int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
    "int32": (-(1 << 31), (1 << 31) - 1), "int4": (-8, 7),
}


def quantization_problem(tensor: Tensor) -> str | None:
    """Why a tensor's scale/zero point cannot be used, or None."""
    q = tensor.quant
    # TFLM never reads a constant bias's quantization (the kernels use input x filter scale), and
    # converters write all sorts there (per-channel axis 3 on a rank-1 bias, scale 0).
    if q is None or (tensor.is_constant and tensor.dtype in ("int32", "int64")):
        return None
    scale = np.asarray(q.scale, dtype=np.float64)
    zero_point = np.asarray(q.zero_point)
    if not np.all(np.isfinite(scale)):
        return f"scale {_first(scale, ~np.isfinite(scale))} is not a finite number"
    if np.any(scale <= 0):
        return f"scale {_first(scale, scale <= 0)} is not positive"
    if np.any(scale > 0) and (np.min(scale[scale > 0]) < 1e-30 or np.max(scale) > 1e30):
        return f"scale {float(np.max(scale)) if np.max(scale) > 1e30 else float(np.min(scale))} " \
               "is outside what int8 arithmetic can represent"
    bounds = _ZERO_POINT_RANGE.get(tensor.dtype)
    if bounds is not None and zero_point.size:
        low, high = bounds
        bad = (zero_point < low) | (zero_point > high)
        if np.any(bad):
            return (f"zero point {_first(zero_point, bad)} is outside {tensor.dtype}'s range "
                    f"[{low}, {high}]")
    if len(scale) > 1:
        rank = len(tensor.shape)
        if not 0 <= q.axis < max(rank, 1):
            return (f"quantized per channel along axis {q.axis}, but the tensor has rank "
                    f"{rank}")
        if rank and tensor.shape[q.axis] != len(scale):
            return (f"has {len(scale)} per-channel scales along axis {q.axis}, but that "
                    f"dimension has {tensor.shape[q.axis]} channels")
    return None


def _first(values: np.ndarray, mask: np.ndarray):
    value = values[np.argmax(mask)]
    if isinstance(value, np.floating):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    return int(value)
