"""SignalRfft (TFLM signal-library custom operator), int16: a real FFT of 'fft_length' points per
frame, bit-exact with TFLM, which runs kiss_fft's 16-bit fixed-point real FFT. The kiss_fft
factorisation (radix 4 then 2) and its twiddle factors (floor(0.5 + 32767 cos/sin) in double) are
computed here; the kernel (runtime/kernels/signal_rfft.c) does the butterflies in kiss_fft's
order with its rounding and scaling. int32 and float32 RFFTs (TFLM has them) are refused."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import (
    kiss_factors,
    kiss_super_twiddles,
    kiss_twiddles,
    named_option,
    operand_reasons,
    signal_options,
)
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator

# Position 0 is 'T' (read by name), position 1 'fft_length'.
_OPTIONS = ("T", "fft_length")
_INT16 = 7  # TensorType INT16
MAX_STAGES = 16

@register
class SignalRfft(OpLowering):
    opcode = "SignalRfft"
    custom = True
    kernel_sources = ("signal_rfft.c",)
    headers = ("microbuild/kernels/signal_rfft.h",)
    dtypes = frozenset({"int16"})

    def check(self, op: Operator, graph: Graph) -> list[str]:
        kind = named_option(op, "T")
        if kind != _INT16:
            return [f"option T is {kind!r}: microbuild's SignalRfft is the int16 one (T = 7); "
                    "TFLM's int32 and float32 RFFTs are not supported yet"]
        reasons = operand_reasons(op, graph, ("*int16",), ("*int16",))
        options, option_reasons = signal_options(op, _OPTIONS)
        reasons += option_reasons
        if reasons:
            return reasons
        n = options["fft_length"]
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if n < 4 or n & (n - 1):
            return [f"fft_length {n} is not a power of two >= 4 (the only lengths supported)"]
        if len(x.shape) != len(y.shape) or not x.shape:
            return [f"input shape {list(x.shape)} and output shape {list(y.shape)} differ in "
                    "rank"]
        if x.shape[-1] > n or x.shape[-1] < 1:
            reasons.append(f"frames of {x.shape[-1]} samples do not fit fft_length {n}")
        if y.shape[-1] != n + 2:
            reasons.append(f"output frames have {y.shape[-1]} values; fft_length {n} gives "
                           f"{n // 2 + 1} complex bins ({n + 2} values)")
        if tuple(x.shape[:-1]) != tuple(y.shape[:-1]):
            reasons.append(f"input shape {list(x.shape)} and output shape {list(y.shape)} have "
                           "different frame counts")
        return reasons

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        options, _ = signal_options(op, _OPTIONS)
        # The half-length FFT's fft_length / 2 complex int16 values (the kernel reads the
        # frame's samples in place, zero past their end: no padded copy).
        return options["fft_length"] * 2

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        n = options["fft_length"]
        x = graph.tensor(op.inputs[0])
        factors = kiss_factors(n // 2)
        twiddles = ctx.const_array("rfft_twiddles", kiss_twiddles(n // 2).reshape(-1), "int16_t")
        supers = ctx.const_array("rfft_super_twiddles",
                                 kiss_super_twiddles(n // 2).reshape(-1), "int16_t")
        params = ctx.symbol("params")
        frames = x.num_elements // x.shape[-1]
        padded = factors + [0] * (2 * MAX_STAGES - len(factors))
        ctx.static(f"static const mb_signal_rfft_params {params} = " + c_struct([
            ("fft_length", n), ("input_length", x.shape[-1]), ("frames", frames),
            ("num_stages", len(factors) // 2), ("factors", padded),
            ("twiddles", twiddles), ("super_twiddles", supers)]) + ";")
        return (f"mb_signal_rfft(&{params}, {ctx.ptr(op.inputs[0])}, {ctx.ptr(op.outputs[0])}, "
                f"{ctx.scratch_ptr()});")

