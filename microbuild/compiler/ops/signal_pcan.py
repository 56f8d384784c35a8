"""SignalPCAN (TFLM signal-library custom operator): per-channel automatic gain control of uint32
filter bank channels from their noise estimate and an int16 gain table, bit-exact with TFLM's
ApplyPcanAutoGainControlFixed. The table is read at 4 entries per octave of the noise estimate:
TFLM reads up to entry 124 for the largest uint32 estimates, so a shorter table is refused."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons, signal_options
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("snr_shift",)
LUT_ENTRIES = 4 * 32 - 6 + 3  # the last octave's three coefficients


@register
class SignalPCAN(OpLowering):
    opcode = "SignalPCAN"
    custom = True
    kernel_sources = ("signal_pcan.c",)
    headers = ("microbuild/kernels/signal_pcan.h",)
    dtypes = frozenset({"uint32", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("uint32", "uint32", "int16"), ("uint32",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        x, noise, lut = (graph.tensor(i) for i in op.inputs)
        y = graph.tensor(op.outputs[0])
        if not x.num_elements == noise.num_elements == y.num_elements > 0:
            reasons.append(f"input ({x.num_elements}), noise estimate ({noise.num_elements}) and "
                           f"output ({y.num_elements}) must have the same channels, as TFLM "
                           "requires")
        if lut.num_elements < LUT_ENTRIES:
            reasons.append(f"the gain table has {lut.num_elements} entries; TFLM reads up to "
                           f"{LUT_ENTRIES} (out of bounds for large noise estimates)")
        if not 0 <= options["snr_shift"] < 64:
            reasons.append(f"snr_shift {options['snr_shift']} is outside 0..63")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        x = graph.tensor(op.inputs[0])
        return (f"mb_signal_pcan({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{ctx.ptr(op.inputs[2])}, {options['snr_shift']}, {x.num_elements}, "
                f"{ctx.ptr(op.outputs[0])});")

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        return not graph.tensor(op.inputs[0]).is_constant
