"""SignalFilterBank (TFLM signal-library custom operator): mel filter bank channels (uint64) from
a uint32 energy spectrum, bit-exact with TFLM's FilterbankAccumulateChannels. The five channel
tables (weights, unweights, per-channel frequency start, weight start and width, num_channels + 1
entries each but the weights) must be constants, so every index they produce is checked here."""

from __future__ import annotations

import numpy as np

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import constant_reasons, operand_reasons, signal_options
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("num_channels",)
_TABLES = ("weights", "unweights", "channel_frequency_starts", "channel_weight_starts",
           "channel_widths")


@register
class SignalFilterBank(OpLowering):
    opcode = "SignalFilterBank"
    custom = True
    kernel_sources = ("signal_filter_bank.c",)
    headers = ("microbuild/kernels/signal_filter_bank.h",)
    # int16: the channel tables, which check() requires constant (and says so).
    dtypes = frozenset({"uint32", "uint64", "int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        reasons = operand_reasons(op, graph, ("uint32",) + ("int16",) * 5, ("uint64",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        reasons = constant_reasons(graph, op, (1, 2, 3, 4, 5))
        if reasons:
            return reasons
        channels = options["num_channels"]
        spectrum = graph.tensor(op.inputs[0]).num_elements
        weights, unweights, freq, first, width = (
            np.asarray(graph.tensor(i).data, dtype=np.int64).reshape(-1) for i in op.inputs[1:])
        out = graph.tensor(op.outputs[0])
        if channels < 1 or out.num_elements != channels:
            return [f"num_channels {channels} does not match the output's {out.num_elements} "
                    "channels"]
        for name, table in zip(_TABLES[2:], (freq, first, width)):
            if len(table) < channels + 1:
                reasons.append(f"{name} has {len(table)} entries; {channels + 1} are read")
        if reasons:
            return reasons
        for ch in range(channels + 1):
            if width[ch] > 0 and (freq[ch] < 0 or freq[ch] + width[ch] > spectrum):
                reasons.append(f"channel {ch} reads spectrum bins {freq[ch]}.."
                               f"{freq[ch] + width[ch] - 1}, outside the input's {spectrum}")
                break
            if width[ch] > 0 and (first[ch] < 0 or first[ch] + width[ch] >
                                  min(len(weights), len(unweights))):
                reasons.append(f"channel {ch} reads weights {first[ch]}.."
                               f"{first[ch] + width[ch] - 1}, outside the {len(weights)} weights")
                break
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        params = ctx.symbol("params")
        fields = [("num_channels", options["num_channels"])]
        fields += [(name, ctx.ptr(i)) for name, i in zip(_TABLES, op.inputs[1:])]
        ctx.static(f"static const mb_signal_filter_bank_params {params} = "
                   f"{c_struct(fields)};")
        return (f"mb_signal_filter_bank(&{params}, {ctx.ptr(op.inputs[0])}, "
                f"{ctx.ptr(op.outputs[0])});")
