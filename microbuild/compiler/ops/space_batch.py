"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (int8 or float32; 4-D NHWC, or 3-D NHC taken as width 1),
bit-exact with TFLM's reference kernels. TFLM has them for float32 and int8 only.

SPACE_TO_BATCH_ND pads the spatial dimensions and deals the pixels of each block out to
``block_h * block_w`` batches; BATCH_TO_SPACE_ND gathers them back and crops. ``block_shape``,
``paddings`` and ``crops`` must be constant, so every index is worked out at compile time:
SPACE_TO_BATCH_ND has a small kernel of its own (runtime/kernels/space_to_batch_nd.c),
BATCH_TO_SPACE_ND is the offset-table copy (microbuild/compiler/table_gather.py). Values are
copied, never rescaled. On constants both are evaluated at compile time.

TFLM quirk: its SPACE_TO_BATCH_ND fills the padding with ``SpaceToBatchParams::output_offset``,
which its Prepare never sets: the value is whatever the persistent arena buffer held (0, 9, ...
from one run to the next), so TFLM's padded elements are undefined. microbuild fills them with the
output zero point (real 0.0), as LiteRT does and as TFLM's reference kernel intends ("the correct
padding 'zero value' is the output offset"); every other element is bit-exact with TFLM. Without
padding the whole output is.

The converter's dilated-convolution pattern SPACE_TO_BATCH_ND -> CONV_2D -> BATCH_TO_SPACE_ND
appears for Keras models with an open batch size; the converter then records the intermediate
tensors with batch 1 where the operators produce ``block_h * block_w`` batches, so the stored
shapes contradict the operators. TFLM, which trusts the stored shapes, computes one batch of
four and leaves three quarters of the output unwritten (stale arena contents).
microbuild/compiler/dilated_conv.py fuses the pattern into one dilated convolution before these
lowerings see it; an operator whose recorded shape still contradicts what it computes is refused
here with a message saying how to convert the model instead.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.f32.layout import moved_value_reasons, same_values
from microbuild.compiler.spatial import c_struct, operand_count_reasons
from microbuild.compiler.table_gather import GatherPlan
from microbuild.model.ir import Graph, Operator

OPEN_BATCH_HINT = (
    "; the converter writes such shapes for the SPACE_TO_BATCH_ND -> CONV_2D -> "
    "BATCH_TO_SPACE_ND pattern of a dilated convolution in a model with an open batch size, and "
    "TFLM then computes a wrong result too (it leaves most of the output unwritten). Convert the "
    "model with a fixed batch size (e.g. keras.Input(shape, batch_size=1)): the converter then "
    "emits one CONV_2D with dilation")


def _constant_ints(op: Operator, graph: Graph, k: int) -> np.ndarray | None:
    t = graph.tensor(op.inputs[k])
    if not t.is_constant or t.dtype != "int32":
        return None
    return np.asarray(t.data, dtype=np.int64).reshape(-1)


def _geometry_4d(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """N, H, W, C of a 3-D NHC or 4-D NHWC shape (TFLM's ExtendShapeSpaceToBatch)."""
    if len(shape) == 3:
        return shape[0], shape[1], 1, shape[2]
    return tuple(shape)  # type: ignore[return-value]


class _SpaceBatch(OpLowering):
    # TFLM's kernel takes float32 and int8 only: a 16x8 model's is refused saying so.
    tflm_lacks = frozenset({"int16"})
    # Read at compile time only; refused in check when not constant.
    parameter_inputs = (1, 2)
    dtypes = frozenset({"int8", "float32"})
    third = "paddings"

    def operand_reasons(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_count_reasons(op, (3,))
        if reasons or min(op.inputs) < 0:
            return reasons or ["an input is missing"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        reasons += moved_value_reasons("input", x)
        reasons += moved_value_reasons("output", y, dtypes=(x.dtype,))
        if len(x.shape) not in (3, 4) or len(y.shape) != len(x.shape):
            reasons.append(f"input {tuple(x.shape)} and output {tuple(y.shape)} must both be 3-D "
                           "(NHC) or 4-D (NHWC), as in TFLM")
        spatial = len(x.shape) - 2
        for k, name, count in ((1, "block_shape", spatial), (2, self.third, 2 * spatial)):
            t = graph.tensor(op.inputs[k])
            if not t.is_constant:
                reasons.append(f"{name} '{t.name}' is not constant; the output shape must be "
                               "known at compile time")
            elif t.dtype != "int32" or t.num_elements != count:
                reasons.append(f"{name} '{t.name}' is {t.dtype} {list(t.shape)}; expected "
                               f"{count} int32 values")
        if reasons:
            return reasons
        block = _constant_ints(op, graph, 1)
        edges = _constant_ints(op, graph, 2)
        if np.any(block < 1):
            reasons.append(f"block_shape {block.tolist()} must be at least 1")
        if np.any(edges < 0):
            reasons.append(f"{self.third} {edges.reshape(-1, 2).tolist()} has negative entries")
        if not same_values(x, y):
            reasons.append(f"input (scale {x.scale}, zero point {x.zero_point}) and output "
                           f"(scale {y.scale}, zero point {y.zero_point}) are quantized "
                           "differently; TFLM copies values without rescaling")
        return reasons

    def blocks(self, op: Operator, graph: Graph) -> tuple[int, int, int, int, int, int]:
        """block_h, block_w, then the leading and trailing edge of H and of W."""
        block = [int(v) for v in _constant_ints(op, graph, 1)]
        edges = [int(v) for v in _constant_ints(op, graph, 2)]
        if len(block) == 1:
            return block[0], 1, edges[0], edges[1], 0, 0
        return block[0], block[1], edges[0], edges[1], edges[2], edges[3]

    def shape_reasons(self, op: Operator, graph: Graph, expected: tuple[int, ...] | None,
                      why: str) -> list[str]:
        y = graph.tensor(op.outputs[0])
        if expected is None:
            return [why]
        if tuple(y.shape) != expected:
            reason = (f"output '{y.name}' is recorded with shape {tuple(y.shape)}, but the "
                      f"operator produces {expected} from the input "
                      f"{tuple(graph.tensor(op.inputs[0]).shape)}")
            if tuple(y.shape[1:]) == expected[1:]:
                reason += OPEN_BATCH_HINT
            return [reason]
        return []


@register
class SpaceToBatchND(_SpaceBatch):
    opcode = "SPACE_TO_BATCH_ND"
    kernel_sources = ("space_to_batch_nd.c",)
    headers = ("microbuild/kernels/space_to_batch_nd.h",)

    def expected_shape(self, op: Operator, graph: Graph) -> tuple[tuple[int, ...] | None, str]:
        x = graph.tensor(op.inputs[0])
        n, h, w, c = _geometry_4d(x.shape)
        bh, bw, top, bottom, left, right = self.blocks(op, graph)
        if (h + top + bottom) % bh or (w + left + right) % bw:
            return None, (f"padded size {[h + top + bottom, w + left + right]} is not a multiple "
                          f"of block_shape {[bh, bw]}")
        out = (n * bh * bw, (h + top + bottom) // bh, (w + left + right) // bw, c)
        return ((out[0], out[1], out[3]) if len(x.shape) == 3 else out), ""

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = self.operand_reasons(op, graph)
        if reasons:
            return reasons
        return self.shape_reasons(op, graph, *self.expected_shape(op, graph))

    def fold(self, op: Operator, graph: Graph):
        if _constant_ints(op, graph, 1) is None or _constant_ints(op, graph, 2) is None:
            return None
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        n, h, w, c = _geometry_4d(x.shape)
        bh, bw, top, bottom, left, right = self.blocks(op, graph)
        fill = y.zero_point if y.quant is not None else 0
        padded = np.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.data.dtype)
        padded[:, top:top + h, left:left + w] = np.asarray(x.data).reshape(n, h, w, c)
        oh, ow = padded.shape[1] // bh, padded.shape[2] // bw
        # (n, oh, sh, ow, sw, c) -> (sh, sw, n, oh, ow, c): batch (sh * bw + sw) * n + b
        out = padded.reshape(n, oh, bh, ow, bw, c).transpose(2, 4, 0, 1, 3, 5)
        return [np.ascontiguousarray(out).reshape(y.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        n, h, w, c = _geometry_4d(x.shape)
        _, oh, ow, _ = _geometry_4d(y.shape)
        bh, bw, top, _, left, _ = self.blocks(op, graph)
        fields = [("batches", n), ("input_h", h), ("input_w", w),
                  ("pixel_bytes", c * np.dtype(x.dtype).itemsize), ("output_h", oh),
                  ("output_w", ow), ("block_h", bh), ("block_w", bw), ("pad_top", top),
                  ("pad_left", left), ("pad_value", y.zero_point if y.quant is not None else 0)]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_space_to_batch_nd_params {params} = {c_struct(fields)};")
        return (f"mb_space_to_batch_nd(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])});")


@register
class BatchToSpaceND(_SpaceBatch):
    opcode = "BATCH_TO_SPACE_ND"
    kernel_sources = ("table_gather.c",)
    headers = ("microbuild/kernels/table_gather.h",)
    third = "crops"

    def expected_shape(self, op: Operator, graph: Graph) -> tuple[tuple[int, ...] | None, str]:
        x = graph.tensor(op.inputs[0])
        n, h, w, c = _geometry_4d(x.shape)
        bh, bw, top, bottom, left, right = self.blocks(op, graph)
        if n % (bh * bw):
            return None, (f"input batch {n} is not a multiple of the block size {bh} x {bw}"
                          + (OPEN_BATCH_HINT if n == 1 else ""))
        oh, ow = h * bh - top - bottom, w * bw - left - right
        if oh < 1 or ow < 1:
            return None, f"crops {[[top, bottom], [left, right]]} leave no output"
        out = (n // (bh * bw), oh, ow, c)
        return ((out[0], out[1], out[3]) if len(x.shape) == 3 else out), ""

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = self.operand_reasons(op, graph)
        if reasons:
            return reasons
        return self.shape_reasons(op, graph, *self.expected_shape(op, graph))

    def plan(self, op: Operator, graph: Graph) -> GatherPlan:
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        n, h, w, c = _geometry_4d(x.shape)
        on, oh, ow, _ = _geometry_4d(y.shape)
        bh, bw, top, _, left, _ = self.blocks(op, graph)
        image = h * w * c
        # Output (b, oh, ow) reads input batch ((oh + top) % bh * bw + (ow + left) % bw) * on + b,
        # row (oh + top) // bh, column (ow + left) // bw: one term per output dimension.
        batches = np.arange(on) * image
        rows = np.array([((r + top) % bh) * bw * on * image + ((r + top) // bh) * w * c
                         for r in range(oh)])
        cols = np.array([((q + left) % bw) * on * image + ((q + left) // bw) * c
                         for q in range(ow)])
        return GatherPlan([batches, rows, cols], c)

    def fold(self, op: Operator, graph: Graph):
        if _constant_ints(op, graph, 1) is None or _constant_ints(op, graph, 2) is None:
            return None
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        return [self.plan(op, graph).apply(x.data, y.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        itemsize = np.dtype(graph.tensor(op.inputs[0]).dtype).itemsize
        return self.plan(op, graph).emit(ctx, itemsize, ctx.ptr(op.inputs[0]),
                                         ctx.ptr(op.outputs[0]))
