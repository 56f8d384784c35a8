"""SignalFftAutoScale (TFLM signal-library custom operator, int16): the samples shifted left by
the headroom their largest magnitude leaves, and that shift as an int32 scalar (which
SignalFilterBankSquareRoot later undoes), bit-exact with TFLM, whose running maximum is an int16
(-32768 wraps; the kernel reproduces it)."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons
from microbuild.model.ir import Graph, Operator


@register
class SignalFftAutoScale(OpLowering):
    opcode = "SignalFftAutoScale"
    custom = True
    kernel_sources = ("signal_fft_auto_scale.c",)
    headers = ("microbuild/kernels/signal_fft_auto_scale.h",)
    dtypes = frozenset({"int16", "int32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("int16",), ("int16", "0int32"))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if tuple(x.shape) != tuple(y.shape):
            reasons.append(f"output shape {list(y.shape)} differs from the input's "
                           f"{list(x.shape)}")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        y = graph.tensor(op.outputs[0])
        return (f"mb_signal_fft_auto_scale({ctx.ptr(op.inputs[0])}, {y.shape[0]}, "
                f"{ctx.ptr(op.outputs[0])}, {ctx.ptr(op.outputs[1])});")
