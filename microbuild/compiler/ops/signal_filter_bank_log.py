"""SignalFilterBankLog (TFLM signal-library custom operator): output_scale * ln(x <<
input_correction_bits) of each uint32 channel in fixed point, saturated to int16, bit-exact with
TFLM's FilterbankLog / Log32. Its 128-segment correction table is computed here
(round(2^16 (log2(1 + i/128) - i/128))) and stored with the weights."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import log_lut, operand_reasons, signal_options
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("input_correction_bits", "output_scale")


@register
class SignalFilterBankLog(OpLowering):
    opcode = "SignalFilterBankLog"
    custom = True
    kernel_sources = ("signal_filter_bank_log.c",)
    headers = ("microbuild/kernels/signal_filter_bank_log.h",)
    dtypes = frozenset({"uint32", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("uint32",), ("int16",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if y.num_elements < x.num_elements:
            reasons.append(f"output has {y.num_elements} elements for {x.num_elements} channels")
        if not 0 <= options["input_correction_bits"] < 32:
            reasons.append(f"input_correction_bits {options['input_correction_bits']} is "
                           "outside 0..31")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        x = graph.tensor(op.inputs[0])
        lut = ctx.const_array("log_lut", log_lut(), "uint16_t")
        return (f"mb_signal_filter_bank_log({ctx.ptr(op.inputs[0])}, {x.num_elements}, "
                f"{options['output_scale'] & 0xFFFFFFFF}u, {options['input_correction_bits']}, "
                f"{lut}, {ctx.ptr(op.outputs[0])});")
