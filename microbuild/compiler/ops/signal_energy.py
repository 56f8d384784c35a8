"""SignalEnergy (TFLM signal-library custom operator): re^2 + im^2 (uint32) of complex int16 bins
'start_index' .. 'end_index' - 1, bit-exact with TFLM's SpectrumToEnergy. TFLM leaves the output's
other elements as the arena held them; microbuild writes 0 there (the micro_speech front end
slices them away)."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons, signal_options
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("end_index", "start_index")


@register
class SignalEnergy(OpLowering):
    opcode = "SignalEnergy"
    custom = True
    kernel_sources = ("signal_energy.c",)
    headers = ("microbuild/kernels/signal_energy.h",)
    dtypes = frozenset({"int16", "uint32"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("int16",), ("uint32",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        start, end = options["start_index"], options["end_index"]
        bins = x.num_elements // 2
        if not 0 <= start <= end <= min(bins, y.num_elements):
            reasons.append(f"bins {start}..{end - 1} are outside the input's {bins} complex bins "
                           f"or the output's {y.num_elements} elements")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        y = graph.tensor(op.outputs[0])
        return (f"mb_signal_energy({ctx.ptr(op.inputs[0])}, {options['start_index']}, "
                f"{options['end_index']}, {y.num_elements}, {ctx.ptr(op.outputs[0])});")
