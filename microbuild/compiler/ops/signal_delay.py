"""SignalDelay (TFLM signal-library custom operator): delays every row of an int16 tensor (its
last dimension is one frame) by 'delay_length' samples across invocations, as TFLM's delay line
does: each output row is the row's last 'delay_length' samples of earlier invocations followed by
the start of this one's (zeros after a reset).

TFLM keeps one circular buffer per row inside the kernel; microbuild keeps each row's last
'delay_length' samples in a variable tensor (``add_state``) in the model's state buffer, so
``<prefix>_reset`` clears them as TFLM's Reset does."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import (append_state, operand_reasons, signal_options,
                                                state_reasons)
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("delay_length",)
STATE_SUFFIX = "/delay_state"


def _rows_and_frame(op: Operator, graph: Graph) -> tuple[int, int]:
    shape = graph.tensor(op.inputs[0]).shape
    frame = shape[-1] if shape else 1
    return (graph.tensor(op.inputs[0]).num_elements // frame if frame else 0), frame


@register
class SignalDelay(OpLowering):
    opcode = "SignalDelay"
    custom = True
    kernel_sources = ("signal_delay.c",)
    headers = ("microbuild/kernels/signal_delay.h",)
    dtypes = frozenset({"int16"})

    def add_state(self, op: Operator, graph: Graph) -> None:
        options, reasons = signal_options(op, _OPTIONS)
        if reasons or len(op.inputs) != 1 or op.inputs[0] < 0 or options["delay_length"] < 0:
            return  # check() says what is wrong
        rows, _ = _rows_and_frame(op, graph)
        append_state(op, graph, STATE_SUFFIX, rows * options["delay_length"], "int16")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        options, reasons = signal_options(op, _OPTIONS)
        if reasons:
            return reasons
        if options["delay_length"] < 0:
            return [f"delay_length {options['delay_length']} is negative"]
        reasons = state_reasons(op, graph, (STATE_SUFFIX,), 1)
        if reasons:
            return reasons
        reasons = operand_reasons(op, graph, ("*int16", "int16"), ("*int16",))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if not x.shape or x.num_elements == 0:
            reasons.append(f"input has shape {list(x.shape)}; TFLM's kernel delays the rows of "
                           "its last dimension, so it needs rank >= 1 and some elements")
        elif tuple(y.shape) != tuple(x.shape):
            reasons.append(f"output has shape {list(y.shape)}, input {list(x.shape)}; a delay "
                           "line keeps the shape")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        options, _ = signal_options(op, _OPTIONS)
        rows, frame = _rows_and_frame(op, graph)
        return (f"mb_signal_delay({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, {rows}, "
                f"{frame}, {options['delay_length']}, {ctx.ptr(op.outputs[0])});")
