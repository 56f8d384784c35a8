"""Data movement as a sum of per-dimension offsets (runtime/kernels/table_gather.c).

RESIZE_NEAREST_NEIGHBOR, MIRROR_PAD and BATCH_TO_SPACE_ND each copy, for every output index
(o0, ..., o{n-1}), a run of ``unit`` contiguous input elements starting at
``table_0[o0] + ... + table_{n-1}[o{n-1}]``. The lowerings work the tables out from TFLM's index
arithmetic; this module checks a plan, evaluates it on constants (folding) and emits the call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microbuild.compiler.spatial import c_struct

# runtime/include/microbuild/kernels/table_gather.h
MAX_DIMS = 6


@dataclass
class GatherPlan:
    """``tables[d][o]``: input element offset contributed by output index ``o`` of dimension d;
    each step copies ``unit`` elements. The output is the tabled dimensions then ``unit``."""

    tables: list[np.ndarray]
    unit: int

    @property
    def dims(self) -> list[int]:
        return [len(t) for t in self.tables]

    def offsets(self) -> np.ndarray:
        """The element offset of every step, in output order."""
        total = np.zeros((), dtype=np.int64)
        for d, table in enumerate(self.tables):
            shape = [1] * len(self.tables)
            shape[d] = len(table)
            total = total + np.asarray(table, dtype=np.int64).reshape(shape)
        return total.reshape(-1)

    def reasons(self, input_elements: int) -> list[str]:
        """Why the kernel could not run this plan (none for a well-formed operator)."""
        if not 1 <= len(self.tables) <= MAX_DIMS:
            return [f"needs {len(self.tables)} indexed dimensions; the kernel takes 1 to "
                    f"{MAX_DIMS}"]
        if any(len(t) == 0 for t in self.tables) or self.unit < 1:
            return ["the output is empty"]
        steps = self.offsets()
        low, high = int(steps.min()), int(steps.max()) + self.unit
        if low < 0 or high > input_elements:
            return [f"reads input elements {low} to {high - 1}, outside the input's "
                    f"{input_elements} (TFLM would read out of bounds)"]
        return []

    def apply(self, data: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
        flat = np.asarray(data).reshape(-1)
        index = self.offsets()[:, None] + np.arange(self.unit)[None, :]
        return np.ascontiguousarray(flat[index].reshape(out_shape))

    def emit(self, ctx, itemsize: int, input_ptr: str, output_ptr: str) -> str:
        # A dimension of one output index adds the same term to every step: it is folded into
        # another table, so the kernel's inner loop runs over a real dimension (a rank-3
        # BATCH_TO_SPACE_ND's [1, 6, 1] plan is one loop of 6).
        tables = [np.asarray(t, dtype=np.int64) for t in self.tables]
        constant = sum(int(t[0]) for t in tables if len(t) == 1)
        tables = [t for t in tables if len(t) != 1] or [np.zeros(1, dtype=np.int64)]
        tables[0] = tables[0] + constant
        dims = [len(t) for t in tables]
        pad = MAX_DIMS - len(dims)
        fields = [("num_dims", len(dims)), ("unit_bytes", self.unit * itemsize),
                  ("output_dims", dims + [1] * pad)]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_table_gather_params {params} = {c_struct(fields)};")
        offsets = np.concatenate(tables) * itemsize
        table = ctx.const_array(ctx.symbol("offsets"), offsets.astype(np.int32), "int32_t")
        return f"mb_table_gather(&{params}, {table}, {input_ptr}, {output_ptr});"
