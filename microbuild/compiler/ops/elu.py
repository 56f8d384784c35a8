"""ELU on float32, bit-exact with TFLM's reference_ops::Elu: x below 0 becomes expm1f(x) (the
C library's, as TFLM's TfLiteExpm1 calls std::expm1), the rest passes through
(microbuild/compiler/f32/unary.py's kernel). TFLM's int8 ELU (a table) is not compiled yet."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import register
from microbuild.compiler.ops.float_math import FloatOnlyLowering


@register
class Elu(FloatOnlyLowering):
    opcode = "ELU"
    function = staticmethod(lambda x: np.where(x < 0, np.expm1(x), x))

    def dtype_note(self, dtype: str) -> str | None:
        if dtype == "int8":
            return "microbuild compiles TFLM's float32 ELU; its int8 table kernel is not done yet"
        return super().dtype_note(dtype)
