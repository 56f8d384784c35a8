"""SignalFramer (TFLM signal-library custom operator): cuts every row of an int16 stream (its
last dimension, a multiple of 'frame_step') into overlapping frames of 'frame_size' samples, one
every 'frame_step' samples, carrying the samples a later frame still needs across invocations.
Output 1 is a bool: false when some frame of this invocation had too few samples yet (only before
the stream has filled a frame; with 'prefill' the first frame starts with frame_size - frame_step
zeros and every frame is valid). As in TFLM, an invalid frame's output is left as it was.

TFLM keeps one circular buffer per row inside the kernel; microbuild keeps each row's held
samples in an int16 variable tensor and how many it holds (beyond the prefill) in an int16 one
(``add_state``), in the model's state buffer: ``<prefix>_reset`` zeroes both, which is TFLM's
Reset."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import (append_state, operand_reasons, signal_options,
                                                state_reasons)
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("frame_size", "frame_step", "prefill")
HISTORY_SUFFIX = "/framer_history"
COUNT_SUFFIX = "/framer_count"
MAX_HELD = 32767  # the count of held samples is an int16 in the state buffer


def held_samples(frame_size: int, frame_step: int) -> int:
    """The most samples a row holds between frames: TFLM's buffer capacity (frame_size rounded
    up to a multiple of frame_step) less the step written before each frame."""
    return -(-frame_size // frame_step) * frame_step - frame_step


def _geometry(op: Operator, graph: Graph) -> tuple[int, int]:
    """(rows, samples per row) of the input."""
    shape = graph.tensor(op.inputs[0]).shape
    per_row = shape[-1] if shape else 0
    return (graph.tensor(op.inputs[0]).num_elements // per_row if per_row else 0), per_row


def _usable(options: dict[str, int]) -> bool:
    return options["frame_size"] >= 1 and options["frame_step"] >= 1 and \
        (not options["prefill"] or options["frame_size"] >= options["frame_step"]) and \
        held_samples(options["frame_size"], options["frame_step"]) <= MAX_HELD


@register
class SignalFramer(OpLowering):
    opcode = "SignalFramer"
    custom = True
    kernel_sources = ("signal_framer.c",)
    headers = ("microbuild/kernels/signal_framer.h",)
    dtypes = frozenset({"int16", "bool"})

    def add_state(self, op: Operator, graph: Graph) -> None:
        options, reasons = signal_options(op, _OPTIONS)
        if reasons or len(op.inputs) != 1 or op.inputs[0] < 0 or not _usable(options):
            return  # check() says what is wrong
        rows, _ = _geometry(op, graph)
        held = held_samples(options["frame_size"], options["frame_step"])
        append_state(op, graph, HISTORY_SUFFIX, rows * held, "int16")
        append_state(op, graph, COUNT_SUFFIX, 1, "int16")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        o, reasons = signal_options(op, _OPTIONS)
        if reasons:
            return reasons
        if o["frame_size"] < 1 or o["frame_step"] < 1:
            return [f"frame_size {o['frame_size']} and frame_step {o['frame_step']} must be "
                    "positive"]
        if o["prefill"] and o["frame_size"] < o["frame_step"]:
            return [f"prefill with frame_size {o['frame_size']} < frame_step {o['frame_step']}: "
                    "TFLM would prefill a negative number of zeros"]
        if held_samples(o["frame_size"], o["frame_step"]) > MAX_HELD:
            return [f"frame_size {o['frame_size']} with frame_step {o['frame_step']} holds "
                    f"{held_samples(o['frame_size'], o['frame_step'])} samples per row between "
                    f"frames; microbuild's framer holds at most {MAX_HELD}"]
        reasons = state_reasons(op, graph, (HISTORY_SUFFIX, COUNT_SUFFIX), 1)
        if reasons:
            return reasons
        reasons = operand_reasons(op, graph, ("*int16", "int16", "int16"), ("*int16", "0bool"))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        rows, per_row = _geometry(op, graph)
        if not x.shape or per_row < o["frame_step"] or per_row % o["frame_step"]:
            return [f"input has shape {list(x.shape)}; TFLM's kernel needs its last dimension "
                    f"to be a positive multiple of frame_step {o['frame_step']}"]
        want = tuple(x.shape[:-1]) + (per_row // o["frame_step"], o["frame_size"])
        if tuple(y.shape) != want:
            reasons.append(f"output 0 has shape {list(y.shape)}; {per_row // o['frame_step']} "
                           f"frames of {o['frame_size']} per row make {list(want)}")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        o, _ = signal_options(op, _OPTIONS)
        rows, per_row = _geometry(op, graph)
        prefilled = o["frame_size"] - o["frame_step"] if o["prefill"] else 0
        return (f"mb_signal_framer({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{ctx.ptr(op.inputs[2])}, {rows}, {per_row // o['frame_step']}, "
                f"{o['frame_size']}, {o['frame_step']}, "
                f"{held_samples(o['frame_size'], o['frame_step'])}, {prefilled}, "
                f"{ctx.ptr(op.outputs[0])}, {ctx.ptr(op.outputs[1])});")
