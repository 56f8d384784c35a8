"""SignalFilterBankSpectralSubtraction (TFLM signal-library custom operator): per-channel noise
estimate (a low-pass filter of the uint32 channels, alternating smoothing constants on odd
channels) subtracted from the signal, floored at 'min_signal_remaining' of it; outputs the cleaned
channels and the noise estimate. Bit-exact with TFLM's FilterbankSpectralSubtraction.

TFLM keeps the noise estimate inside the kernel between invocations (cleared by Prepare and by
the interpreter's Reset), not in a variable tensor; microbuild gives the op a variable tensor for
it (``add_state``), so it lives in the model's state buffer and ``<prefix>_reset`` clears it."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import operand_reasons, signal_options
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator, Tensor

_OPTIONS = ("alternate_one_minus_smoothing", "alternate_smoothing", "clamping",
            "min_signal_remaining", "num_channels", "one_minus_smoothing", "smoothing",
            "smoothing_bits", "spectral_subtraction_bits")
STATE_SUFFIX = "/noise_estimate_state"


def _u32(value: int) -> str:
    return f"{value & 0xFFFFFFFF}u"


@register
class SignalFilterBankSpectralSubtraction(OpLowering):
    opcode = "SignalFilterBankSpectralSubtraction"
    custom = True
    kernel_sources = ("signal_filter_bank_spectral_subtraction.c",)
    headers = ("microbuild/kernels/signal_filter_bank_spectral_subtraction.h",)
    dtypes = frozenset({"uint32"})

    def add_state(self, op: Operator, graph: Graph) -> None:
        options, reasons = signal_options(op, _OPTIONS)
        if reasons or len(op.inputs) != 1 or op.inputs[0] < 0 or options["num_channels"] < 1:
            return  # check() says what is wrong
        state = Tensor(index=len(graph.tensors),
                       name=graph.tensor(op.outputs[0]).name + STATE_SUFFIX if op.outputs
                       else f"op{op.model_index}{STATE_SUFFIX}",
                       shape=(options["num_channels"],), dtype="uint32", is_variable=True)
        graph.tensors.append(state)
        op.inputs = list(op.inputs) + [state.index]

    def check(self, op: Operator, graph: Graph) -> list[str]:
        options, reasons = signal_options(op, _OPTIONS)
        if reasons:
            return reasons
        if options["num_channels"] < 1:
            return [f"num_channels {options['num_channels']} is not positive"]
        state = op.inputs[-1] if op.inputs else -1
        has_state = state >= 0 and graph.tensor(state).is_variable and \
            graph.tensor(state).name.endswith(STATE_SUFFIX)
        if not has_state or len(op.inputs) != 2:
            return [f"expects 1 input, has {len(op.inputs) - has_state}"]
        reasons = operand_reasons(op, graph, ("uint32", "uint32"), ("uint32", "uint32"))
        if reasons:
            return reasons
        channels = options["num_channels"]
        for role, t in (("input", op.inputs[0]), ("output 0", op.outputs[0]),
                        ("output 1", op.outputs[1])):
            if graph.tensor(t).num_elements != channels:
                reasons.append(f"{role} has {graph.tensor(t).num_elements} elements; "
                               f"num_channels is {channels}")
        if not 0 <= options["smoothing_bits"] < 32:
            reasons.append(f"smoothing_bits {options['smoothing_bits']} is outside 0..31")
        if not 0 <= options["spectral_subtraction_bits"] < 64:
            reasons.append(f"spectral_subtraction_bits {options['spectral_subtraction_bits']} "
                           "is outside 0..63")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        o, _ = signal_options(op, _OPTIONS)
        params = ctx.symbol("params")
        ctx.static(f"static const mb_signal_spectral_subtraction_params {params} = " + c_struct([
            ("num_channels", o["num_channels"]), ("smoothing", _u32(o["smoothing"])),
            ("one_minus_smoothing", _u32(o["one_minus_smoothing"])),
            ("alternate_smoothing", _u32(o["alternate_smoothing"])),
            ("alternate_one_minus_smoothing", _u32(o["alternate_one_minus_smoothing"])),
            ("min_signal_remaining", _u32(o["min_signal_remaining"])),
            ("smoothing_bits", o["smoothing_bits"]),
            ("spectral_subtraction_bits", o["spectral_subtraction_bits"]),
            ("clamping", 1 if o["clamping"] else 0)]) + ";")
        return (f"mb_signal_filter_bank_spectral_subtraction(&{params}, "
                f"{ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, {ctx.ptr(op.outputs[0])}, "
                f"{ctx.ptr(op.outputs[1])});")
