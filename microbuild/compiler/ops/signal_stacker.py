"""SignalStacker (TFLM signal-library custom operator): stacks the last
'stacker_left_context' + 1 + 'stacker_right_context' frames of 'num_channels' int16 values (one
frame per invocation) into one output, every 'stacker_step' frames. Output 1 is a bool: false
on the invocations that complete no stack (as in TFLM, the output is then left as it was). The
first frame after a reset is repeated 'stacker_left_context' more times, to pad the left context.

TFLM keeps a circular buffer inside the kernel; microbuild keeps the held frames in an int16
variable tensor and (how many values it holds, whether the first frame came) in an int16 one
(``add_state``), in the model's state buffer: ``<prefix>_reset`` zeroes both, which is TFLM's
Reset."""

from __future__ import annotations

from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.signal_library import (append_state, operand_reasons, signal_options,
                                                state_reasons)
from microbuild.model.ir import Graph, Operator

_OPTIONS = ("num_channels", "stacker_left_context", "stacker_right_context", "stacker_step")
HISTORY_SUFFIX = "/stacker_history"
COUNT_SUFFIX = "/stacker_count"
MAX_VALUES = 32767  # the count of held values is an int16 in the state buffer


def _frames(o: dict[str, int]) -> int:
    return o["stacker_left_context"] + 1 + o["stacker_right_context"]


def _option_reasons(o: dict[str, int]) -> list[str]:
    reasons = []
    if o["num_channels"] < 1:
        reasons.append(f"num_channels {o['num_channels']} is not positive")
    if o["stacker_left_context"] < 0 or o["stacker_right_context"] < 0:
        reasons.append(f"stacker_left_context {o['stacker_left_context']} and "
                       f"stacker_right_context {o['stacker_right_context']} must not be negative")
    elif o["num_channels"] * _frames(o) > MAX_VALUES:
        reasons.append(f"a stack of {_frames(o)} frames of {o['num_channels']} values is "
                       f"{o['num_channels'] * _frames(o)} values; microbuild's stacker holds at "
                       f"most {MAX_VALUES}")
    elif not 1 <= o["stacker_step"] <= _frames(o):
        reasons.append(f"stacker_step {o['stacker_step']} is outside 1..{_frames(o)} (the "
                       "frames in a stack): TFLM would discard frames it does not hold")
    return reasons


@register
class SignalStacker(OpLowering):
    opcode = "SignalStacker"
    custom = True
    kernel_sources = ("signal_stacker.c",)
    headers = ("microbuild/kernels/signal_stacker.h",)
    dtypes = frozenset({"int16", "bool"})

    def add_state(self, op: Operator, graph: Graph) -> None:
        o, reasons = signal_options(op, _OPTIONS)
        if reasons or len(op.inputs) != 1 or op.inputs[0] < 0 or _option_reasons(o):
            return  # check() says what is wrong
        append_state(op, graph, HISTORY_SUFFIX, o["num_channels"] * _frames(o), "int16")
        append_state(op, graph, COUNT_SUFFIX, 2, "int16")

    def check(self, op: Operator, graph: Graph) -> list[str]:
        o, reasons = signal_options(op, _OPTIONS)
        if reasons:
            return reasons
        reasons = _option_reasons(o) or state_reasons(op, graph, (HISTORY_SUFFIX, COUNT_SUFFIX), 1)
        if reasons:
            return reasons
        reasons = operand_reasons(op, graph, ("int16", "int16", "int16"), ("int16", "0bool"))
        if reasons:
            return reasons
        x, y = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
        if x.num_elements != o["num_channels"]:
            reasons.append(f"input has {x.num_elements} values; num_channels is "
                           f"{o['num_channels']}")
        if y.num_elements != o["num_channels"] * _frames(o):
            reasons.append(f"output 0 has {y.num_elements} values; a stack of {_frames(o)} "
                           f"frames of {o['num_channels']} has {o['num_channels'] * _frames(o)}")
        return reasons

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        o, _ = signal_options(op, _OPTIONS)
        return (f"mb_signal_stacker({ctx.ptr(op.inputs[0])}, {ctx.ptr(op.inputs[1])}, "
                f"{ctx.ptr(op.inputs[2])}, {o['num_channels']}, {_frames(o)}, "
                f"{o['stacker_left_context']}, {o['stacker_step']}, {ctx.ptr(op.outputs[0])}, "
                f"{ctx.ptr(op.outputs[1])});")
