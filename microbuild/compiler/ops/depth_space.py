"""DEPTH_TO_SPACE and SPACE_TO_DEPTH (int8 or float32, NHWC), bit-exact with TFLM's reference kernels,
which copy values without rescaling in TensorFlow's DCR order: output pixel
(h * block + by, w * block + bx), channel c of DEPTH_TO_SPACE is input pixel (h, w), channel
(by * block + bx) * out_channels + c; SPACE_TO_DEPTH is the inverse. TFLM has them for float32 and
int8 only.

Both are one six-dimensional transpose: DEPTH_TO_SPACE reads the input as
[N, H, W, block, block, C] and writes it as [N, H, block, W, block, C]; SPACE_TO_DEPTH reads
[N, H, block, W, block, C] and writes [N, H, W, block, block, C]. Either way the permutation is
(0, 1, 3, 2, 4, 5), so they run on TRANSPOSE's kernel (runtime/kernels/transpose.c). On constants
they are evaluated at compile time.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.f32.layout import moved_value_reasons, same_values
from microbuild.compiler.ops.transpose import emit_transpose
from microbuild.compiler.spatial import operand_count_reasons
from microbuild.model.ir import Graph, Operator

PERMUTATION = (0, 1, 3, 2, 4, 5)


class _DepthSpace(OpLowering):
    # TFLM's kernel takes float32 and int8 only: a 16x8 model's is refused saying so.
    tflm_lacks = frozenset({"int16"})
    kernel_sources = ("transpose.c",)
    headers = ("microbuild/kernels/transpose.h",)
    dtypes = frozenset({"int8", "float32"})

    def block(self, op: Operator) -> int:
        return int(op.options.get("block_size", 0))

    def view(self, shape: tuple[int, ...], block: int) -> tuple[int, ...]:
        """The input shape as the six dimensions the transpose reads."""
        raise NotImplementedError

    def expected(self, shape: tuple[int, ...], block: int) -> tuple[tuple[int, ...] | None, str]:
        raise NotImplementedError

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (1,))
        if reasons or op.inputs[0] < 0:
            return reasons or ["the input is missing"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons += moved_value_reasons("input", x, rank=4)
        reasons += moved_value_reasons("output", y, rank=4, dtypes=(x.dtype,))
        block = self.block(op)
        if block < 1:
            reasons.append(f"block_size is {block}; it must be at least 1")
        if reasons:
            return reasons
        expected, why = self.expected(tuple(x.shape), block)
        if expected is None:
            return [why]
        if tuple(y.shape) != expected:
            return [f"output '{y.name}' has shape {tuple(y.shape)}, expected {expected} from the "
                    f"input {tuple(x.shape)} and block_size {block}"]
        if not same_values(x, y):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {y.scale}, zero point {y.zero_point}) are quantized "
                           "differently; TFLM copies values without rescaling")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        data = np.asarray(x.data).reshape(self.view(tuple(x.shape), self.block(op)))
        return [np.ascontiguousarray(data.transpose(PERMUTATION)).reshape(y.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[0])
        return emit_transpose(self.view(tuple(x.shape), self.block(op)), PERMUTATION,
                              np.dtype(x.dtype).itemsize, ctx, op.inputs[0], op.outputs[0])


@register
class DepthToSpace(_DepthSpace):
    opcode = "DEPTH_TO_SPACE"

    def view(self, shape, block):
        n, h, w, c = shape
        return (n, h, w, block, block, c // (block * block))

    def expected(self, shape, block):
        n, h, w, c = shape
        if c % (block * block):
            return None, (f"input channels {c} are not a multiple of block_size^2 "
                          f"({block}^2 = {block * block})")
        return (n, h * block, w * block, c // (block * block)), ""


@register
class SpaceToDepth(_DepthSpace):
    opcode = "SPACE_TO_DEPTH"

    def view(self, shape, block):
        n, h, w, c = shape
        return (n, h // block, block, w // block, block, c)

    def expected(self, shape, block):
        n, h, w, c = shape
        if h % block or w % block:
            return None, (f"input height {h} and width {w} must both be multiples of "
                          f"block_size {block}")
        return (n, h // block, w // block, c * block * block), ""
