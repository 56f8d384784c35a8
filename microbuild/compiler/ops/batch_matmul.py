"""BATCH_MATMUL (int8; 16x8's int16 with zero points 0; float32:
runtime/kernels/batch_matmul_f32.c, TFLM's float sums `total += lhs * rhs` over the inner dimension
in order), bit-exact with TFLM's reference BatchMatMul. Integer: sums of (lhs - lhs zero point) *
(rhs - rhs zero point) in int32 (int64 for int16), one per-tensor multiplier (lhs scale * rhs scale
/ output scale in double, TFLM's GetQuantizedConvolutionMultipler), the output type's full range
(no fused activation).

Ranks 2 to 5 as TFLM; the leading (batch) dimensions broadcast where one side has 1. adj_x /
adj_y are strides. Two int8 constants are multiplied at compile time. A constant rhs (the
converter's tf.matmul with a weight) is stored transposed at compile time so the inner loop reads
both operands contiguously.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import all_float32_reasons, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.quant import multiply_by_quantized_multiplier
from microbuild.compiler.spatial import activation_reasons, c_struct, channel_multipliers
from microbuild.model.ir import Graph, Operator

MAX_RANK = 5
INT32_LIMIT = 1 << 31


def _extended(shape, rank: int) -> list[int]:
    return [1] * (rank - len(shape)) + [int(d) for d in shape]


def _geometry(op: Operator, graph: Graph):
    """(batch dims of the output, extended lhs shape, extended rhs shape, rows, cols, depth of
    lhs, depth of rhs), all over the output's rank."""
    lhs, rhs = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
    rank = max(len(lhs.shape), len(rhs.shape))
    ls, rs = _extended(lhs.shape, rank), _extended(rhs.shape, rank)
    adj_x, adj_y = bool(op.options.get("adj_x")), bool(op.options.get("adj_y"))
    rows, depth_l = (ls[-1], ls[-2]) if adj_x else (ls[-2], ls[-1])
    depth_r, cols = (rs[-1], rs[-2]) if adj_y else (rs[-2], rs[-1])
    batch = [max(a, b) for a, b in zip(ls[:-2], rs[:-2])]
    return batch, ls, rs, rows, cols, depth_l, depth_r


def _batch_strides(shape: list[int]) -> list[int]:
    """Elements to step per step of each batch dimension; 0 where the dimension is 1
    (broadcast), as TFLM's extent()."""
    strides = []
    for d in range(len(shape) - 2):
        strides.append(0 if shape[d] == 1 else int(np.prod(shape[d + 1:])))
    return strides


@register
class BatchMatMul(OpLowering):
    opcode = "BATCH_MATMUL"
    kernel_sources = ("batch_matmul.c",)
    float32_sources = ("batch_matmul_f32.c",)
    headers = ("microbuild/kernels/batch_matmul.h", "microbuild/kernels/batch_matmul_f32.h")
    dtypes = frozenset({"int8", "int16", "float32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects two inputs and one output, has inputs {op.inputs} and outputs "
                    f"{op.outputs}"]
        lhs, rhs = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        out = graph.tensor(op.outputs[0])
        float32 = is_float32(op, graph)
        # A float model's operands: float32 throughout, nothing quantized.
        reasons = all_float32_reasons(op, graph) if float32 else []
        for role, t in () if float32 else (("lhs", lhs), ("rhs", rhs), ("output", out)):
            if t.is_constant and role == "rhs":
                if t.dtype != lhs.dtype:
                    reasons.append(f"rhs '{t.name}' is {t.dtype} but lhs is {lhs.dtype}; TFLM "
                                   "needs both operands of one type (no hybrid models)")
                elif t.quant is None or t.quant.per_channel:
                    reasons.append(f"rhs '{t.name}' must be quantized per tensor (TFLM reads "
                                   "one scale and zero point)")
                continue
            reasons += activation_reasons(role, t, dtypes=(lhs.dtype,) if role != "lhs"
                                          else ("int8", "int16"))
        if reasons:
            return reasons
        for role, t in (("lhs", lhs), ("rhs", rhs)):
            if not 2 <= len(t.shape) <= MAX_RANK:
                reasons.append(f"{role} '{t.name}' has rank {len(t.shape)}; TFLM multiplies "
                               f"ranks 2 to {MAX_RANK}")
        if reasons:
            return reasons
        if lhs.dtype == "int16" and (rhs.zero_point != 0 or out.zero_point != 0):
            reasons.append("int16 BATCH_MATMUL needs zero points 0 (TFLM checks it)")
        batch, ls, rs, rows, cols, depth_l, depth_r = _geometry(op, graph)
        for d, (a, b) in enumerate(zip(ls[:-2], rs[:-2])):
            if a != b and a != 1 and b != 1:
                reasons.append(f"batch dimension {d} is {a} in lhs {list(lhs.shape)} and {b} in "
                               f"rhs {list(rhs.shape)}; they do not broadcast")
        if depth_l != depth_r:
            reasons.append(f"lhs {list(lhs.shape)} (adj_x {bool(op.options.get('adj_x'))}) and "
                           f"rhs {list(rhs.shape)} (adj_y {bool(op.options.get('adj_y'))}) "
                           f"have different inner dimensions {depth_l} and {depth_r}")
        if reasons:
            return reasons
        expected = batch + [rows, cols]
        if list(out.shape) != expected:
            reasons.append(f"output '{out.name}' has shape {list(out.shape)}, expected "
                           f"{expected}")
        if lhs.dtype == "int8" and depth_l * 255 * 255 >= INT32_LIMIT:
            reasons.append(f"inner dimension {depth_l} is too long: TFLM's int32 sums could "
                           "overflow (undefined) for some inputs")
        return reasons

    def fold(self, op: Operator, graph: Graph):
        lhs, rhs = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        out = graph.tensor(op.outputs[0])
        if lhs.dtype != "int8" or self.check(op, graph):
            return None  # int16 constants run on the device; a malformed op is refused later
        _, ls, rs, _, _, _, _ = _geometry(op, graph)
        a = lhs.data.reshape(ls).astype(np.int64) - lhs.zero_point
        b = rhs.data.reshape(rs).astype(np.int64) - rhs.zero_point
        if op.options.get("adj_x"):
            a = np.swapaxes(a, -1, -2)
        if op.options.get("adj_y"):
            b = np.swapaxes(b, -1, -2)
        sums = np.matmul(a, b)
        (multiplier,), (shift,) = channel_multipliers(lhs.scale, np.array([rhs.scale]),
                                                      out.scale, 1)
        scaled = [multiply_by_quantized_multiplier(int(v), multiplier, shift)
                  for v in sums.reshape(-1)]
        values = np.clip(np.asarray(scaled, np.int64) + out.zero_point, -128, 127)
        return [values.astype(np.int8).reshape(out.shape)]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        lhs, rhs = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        out = graph.tensor(op.outputs[0])
        batch, ls, rs, rows, cols, depth, _ = _geometry(op, graph)
        adj_x, adj_y = bool(op.options.get("adj_x")), bool(op.options.get("adj_y"))
        rhs_ptr = ctx.ptr(op.inputs[1])
        if rhs.is_constant and not adj_y:
            # Store the constant [.., depth, cols] matrices as [.., cols, depth] (adj_y's layout).
            data = np.asarray(rhs.data).reshape(rs)
            arranged = np.ascontiguousarray(np.swapaxes(data, -1, -2))
            ctype = {"int16": "int16_t", "float32": "float"}.get(rhs.dtype, "int8_t")
            rhs_ptr = ctx.const_array(ctx.symbol("rhs_transposed"), arranged, ctype)
            adj_y = True
        pad = 3 - len(batch)
        lhs_strides = [0] * pad + _batch_strides(ls)
        rhs_strides = [0] * pad + _batch_strides(rs)
        batch = [1] * pad + batch
        fields = [("batch_dims", batch), ("lhs_batch_strides", lhs_strides),
                  ("rhs_batch_strides", rhs_strides),
                  ("rows", rows), ("cols", cols), ("depth", depth),
                  ("lhs_row_stride", 1 if adj_x else depth),
                  ("lhs_depth_stride", rows if adj_x else 1),
                  ("rhs_depth_stride", 1 if adj_y else cols),
                  ("rhs_col_stride", depth if adj_y else 1)]
        if lhs.dtype == "float32":
            function = "mb_batch_matmul_f32"  # reads the layout fields only
        else:
            s16 = lhs.dtype == "int16"
            (multiplier,), (shift,) = channel_multipliers(lhs.scale, np.array([rhs.scale]),
                                                          out.scale, 1)
            lo, hi = (-32768, 32767) if s16 else (-128, 127)
            fields += [("lhs_offset", -lhs.zero_point), ("rhs_offset", -rhs.zero_point),
                       ("output_offset", out.zero_point),
                       ("multiplier", multiplier), ("shift", shift),
                       ("activation_min", lo), ("activation_max", hi)]
            function = "mb_batch_matmul_s16" if s16 else "mb_batch_matmul_s8"
        params = ctx.symbol("params")
        ctx.static(f"static const mb_batch_matmul_params {params} = {c_struct(fields)};")
        return (f"{function}(&{params}, {ctx.ptr(op.inputs[0])}, {rhs_ptr}, "
                f"{ctx.ptr(op.outputs[0])});")
