"""SignalFilterBankSquareRoot (TFLM signal-library custom operator): the rounded square root of
each uint64 channel, shifted right by the run-time int32 'scale_bits' input (SignalFftAutoScale's
shift), bit-exact with TFLM's FilterbankSqrt (and its 32-bit shortcut when the upper word is
clear)."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons
from microbuild.model.ir import Graph, Operator


@register
class SignalFilterBankSquareRoot(OpLowering):
    opcode = "SignalFilterBankSquareRoot"
    custom = True
    kernel_sources = ("signal_filter_bank_square_root.c",)
    headers = ("microbuild/kernels/signal_filter_bank_square_root.h",)
    dtypes = frozenset({"uint64", "int32", "uint32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("uint64", "0int32"), ("uint32",))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if y.num_elements < x.num_elements:
            reasons.append(f"output has {y.num_elements} elements for {x.num_elements} channels")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[0])
        return (f"mb_signal_filter_bank_square_root({ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.inputs[1])}, {x.num_elements}, {ctx.ptr(op.outputs[0])});")
