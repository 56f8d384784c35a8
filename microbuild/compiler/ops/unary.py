"""Shared base classes for the int8 -> int8 unary lowerings (RELU, RELU6, LEAKY_RELU, LOGISTIC,
TANH, HARD_SWISH, ABS, RSQRT; QUANTIZE between 8-bit types uses the table emission). It registers
no operator itself.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.elementwise import operand_reasons, same_shape_reasons
from microbuild.compiler.ops.base import EmitContext, OpLowering
from microbuild.model.ir import Graph, Operator


class UnaryInt8Lowering(OpLowering):
    """An int8 -> int8 element-wise operator over a whole tensor. Subclasses add their own
    parameter checks in ``param_reasons``."""

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, 1, ("int8",), "int8")
        if reasons:
            return reasons
        return same_shape_reasons(op, graph) + self.param_reasons(op, graph)

    def param_reasons(self, op: Operator, graph: Graph) -> list[str]:
        return []

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        # Every kernel used here reads input[i] before it writes output[i] and nothing else.
        return not graph.tensor(op.inputs[0]).is_constant


class LutLowering(UnaryInt8Lowering):
    """An 8-bit unary operator computed at compile time for all 256 inputs (``table``) and looked
    up on the device by ``mb_lut_s8`` (four values per word): a function of one byte costs a
    load, a lookup and a store whatever TFLM's per-value arithmetic is, and is bit-exact by
    construction when ``table`` runs that arithmetic. Subclasses taking uint8 at either end
    (QUANTIZE) use ``emit_table`` directly."""

    kernel_sources = ("lut.c",)
    headers = ("microbuild/kernels/lut.h",)

    def table(self, op: Operator, graph: Graph) -> np.ndarray:
        """int8[256]: entry k is the output for input value k - 128."""
        raise NotImplementedError

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        return emit_table(op, graph, ctx, self.table(op, graph))


def emit_table(op: Operator, graph: Graph, ctx: EmitContext, outputs: np.ndarray) -> str:
    """``mb_lut_s8`` over the op's 8-bit input and output. ``outputs`` holds the output value
    for each input value in ascending order (-128..127 for int8, 0..255 for uint8), in the
    output's own type's range."""
    src, dst = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    outputs = np.asarray(outputs, dtype=np.int64)
    assert outputs.shape == (256,), outputs.shape
    lo, hi = (0, 255) if dst.dtype == "uint8" else (-128, 127)
    assert outputs.min() >= lo and outputs.max() <= hi, (dst.dtype, outputs.min(), outputs.max())
    if src.dtype == "uint8":
        # The kernel indexes by (input byte) ^ 0x80, which for an int8 byte v is v + 128; for a
        # uint8 byte u it is u ^ 0x80, so entry k must hold the output for u = k ^ 0x80.
        outputs = outputs[np.arange(256) ^ 0x80]
    table = (outputs & 0xFF).astype(np.uint8)
    # The same bytes whatever the C type of the pointers (uint8 tensors are uint8_t *).
    src_ptr, dst_ptr = ctx.ptr(op.inputs[0]), ctx.ptr(op.outputs[0])
    if src.dtype != "int8":
        src_ptr = f"(const int8_t *){src_ptr}"
    if dst.dtype != "int8":
        dst_ptr = f"(int8_t *){dst_ptr}"
    if np.array_equal(table, np.arange(256)):
        # Entry k = k: each byte only has its top bit flipped (uint8 <-> int8 at one scale, zero
        # points 128 apart), four values per XOR with no table.
        return f"mb_flip_sign_bits_s8({src_ptr}, {dst_ptr}, {src.num_elements});"
    name = ctx.const_array(ctx.symbol("lut"), table.view(np.int8), "int8_t")
    return f"mb_lut_s8({name}, {src_ptr}, {dst_ptr}, {src.num_elements});"


def input_values(dtype: str) -> np.ndarray:
    """Every value of an 8-bit input type in ascending order, the order ``emit_table`` takes."""
    return np.arange(0, 256) if dtype == "uint8" else np.arange(-128, 128)
