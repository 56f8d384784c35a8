"""Float32 MEAN, SUM, REDUCE_MAX and REDUCE_MIN (``runtime/kernels/reduce_f32.c``), bit-exact with
TFLM's float reductions: each output reduces its inputs in the input's row-major order from the
reducer's initial value; MEAN divides the float sum by the count. The axes are checked and laid
out as for the integer kernels (microbuild/compiler/ops/mean.py), whose walk (mb_reduce_step in
reduce.c) the float kernel shares."""

from __future__ import annotations


KERNEL_SOURCES = ("reduce_f32.c", "reduce.c")
HEADER = "microbuild/kernels/reduce_f32.h"
OPERATIONS = {"SUM": 0, "MEAN": 1, "REDUCE_MAX": 2, "REDUCE_MIN": 3}
