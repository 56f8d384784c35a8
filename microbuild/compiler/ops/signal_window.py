"""SignalWindow (TFLM signal-library custom operator, int16): each frame of the input multiplied
by the window weights, shifted right by the 'shift' option and saturated, bit-exact with TFLM's
ApplyWindow. The output may overwrite the input (each sample is read before it is written)."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons, signal_options
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("shift",)


@register
class SignalWindow(OpLowering):
    opcode = "SignalWindow"
    custom = True
    kernel_sources = ("signal_window.c",)
    headers = ("microbuild/kernels/signal_window.h",)
    dtypes = frozenset({"int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("*int16", "int16"), ("*int16",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), \
            graph.tensor(op.outputs[0])
        if tuple(x.shape) != tuple(y.shape):
            reasons.append(f"output shape {list(y.shape)} differs from the input's "
                           f"{list(x.shape)}")
        if w.num_elements == 0 or x.num_elements % w.num_elements:
            reasons.append(f"the input's {x.num_elements} samples are not whole frames of the "
                           f"window's {w.num_elements}")
        if not 0 <= options["shift"] < 32:
            reasons.append(f"shift {options['shift']} is outside 0..31 (an int32 shift)")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        x, w = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1])
        return (f"mb_signal_window({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{x.num_elements}, {w.num_elements}, {options['shift']}, "
                f"{ctx.ptr(op.outputs[0])});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return not graph.tensor(op.inputs[0]).is_constant
