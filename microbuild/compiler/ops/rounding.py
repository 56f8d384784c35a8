"""FLOOR, CEIL and ROUND: float32 operators in TFLM (no int8 kernel exists, since an int8 value
is already an integer on its own scale). On float32 run-time values they run
microbuild/compiler/f32/unary.py's kernel (floorf, ceilf, and TFLite's RoundToNearest, which
rounds halves to even); on constants they are evaluated at compile time, exactly."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.float_math import FloatOnlyLowering


@register
class Floor(FloatOnlyLowering):
    opcode = "FLOOR"
    function = staticmethod(np.floor)


@register
class Ceil(FloatOnlyLowering):
    opcode = "CEIL"
    function = staticmethod(np.ceil)


@register
class Round(FloatOnlyLowering):
    opcode = "ROUND"
    function = staticmethod(np.round)  # halves to even
