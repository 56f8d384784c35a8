"""SignalOverlapAdd (TFLM signal-library custom operator): the inverse of framing. Each row's
frames of 'frame_size' samples (input shape [..., frames, frame_size]) are added into a running
buffer that overlaps them, and every frame releases its first 'frame_step' samples (output
[..., frames * frame_step]). int16 adds saturate; float32 adds are one add per sample, as TFLM's.

TFLM keeps each row's buffer of frame_size samples inside the kernel; microbuild keeps it in a
variable tensor of the op's type (``add_state``) in the model's state buffer, so
``<prefix>_reset`` zeroes it, which is TFLM's Reset."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import (append_state, named_option, operand_reasons,
                                                signal_options, state_reasons)
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("T", "frame_step")
STATE_SUFFIX = "/overlap_add_state"
# TensorType codes TFLM's kernel takes in option 'T' (it picks its template by it).
_TYPES = {7: "int16", 0: "float32"}
_C_NAMES = {"int16": "mb_signal_overlap_add_s16", "float32": "mb_signal_overlap_add_f32"}


def _geometry(op: Operator, graph: Graph) -> tuple[int, int, int]:
    """(rows, frames per row, frame_size) of the input."""
    shape = graph.tensor(op.inputs[0]).shape
    if len(shape) < 2 or not shape[-1] or not shape[-2]:
        return 0, 0, 0
    return graph.tensor(op.inputs[0]).num_elements // (shape[-1] * shape[-2]), shape[-2], \
        shape[-1]


@register
class SignalOverlapAdd(OpLowering):
    opcode = "SignalOverlapAdd"
    custom = True
    kernel_sources = ("signal_overlap_add.c",)
    headers = ("microbuild/kernels/signal_overlap_add.h",)
    dtypes = frozenset({"int16", "float32"})

    def add_state(self, op: Operator, graph: Graph) -> None:
        dtype = _TYPES.get(named_option(op, "T"))
        if dtype is None or len(op.inputs) != 1 or op.inputs[0] < 0:
            return  # check() says what is wrong
        rows, _, size = _geometry(op, graph)
        append_state(op, graph, STATE_SUFFIX, rows * size, dtype)

    def check(self, op: Operator, graph: Graph) -> list[str]:
        o, reasons = signal_options(op, _OPTIONS)
        if reasons:
            return reasons
        dtype = _TYPES.get(o["T"])
        if dtype is None:
            return [f"option T is {o['T']}: TFLM's SignalOverlapAdd takes int16 (T = 7) or "
                    "float32 (T = 0)"]
        reasons = state_reasons(op, graph, (STATE_SUFFIX,), 1)
        if reasons:
            return reasons
        reasons = operand_reasons(op, graph, ("*" + dtype, dtype), ("*" + dtype,))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        rows, frames, size = _geometry(op, graph)
        if not size:
            return [f"input has shape {list(x.shape)}; TFLM's kernel takes [..., frames, "
                    "frame_size], rank >= 2 and not empty"]
        if not 1 <= o["frame_step"] <= size:
            return [f"frame_step {o['frame_step']} is outside 1..{size} (frame_size): TFLM "
                    "would move a negative number of samples"]
        want = tuple(x.shape[:-2]) + (frames * o["frame_step"],)
        if tuple(y.shape) != want:
            reasons.append(f"output has shape {list(y.shape)}; {frames} frames of "
                           f"{o['frame_step']} new samples per row make {list(want)}")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        o, _ = signal_options(op, _OPTIONS)
        rows, frames, size = _geometry(op, graph)
        return (f"{_C_NAMES[_TYPES[o['T']]]}({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{rows}, {frames}, {size}, {o['frame_step']}, {ctx.ptr(op.outputs[0])});")
