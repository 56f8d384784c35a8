"""Float32 UNIDIRECTIONAL_SEQUENCE_LSTM (``runtime/kernels/lstm_f32.c``), bit-exact with TFLM's
EvalLstm<float, float, float, float>: the standard (Keras) LSTM with float32 input, weights,
biases, states and output; the operator's shape and structure checks are the integer path's
(microbuild/compiler/ops/lstm.py), as TFLM's Prepare shares them."""

from __future__ import annotations

from microbuild.compiler.elementwise import c_float
from microbuild.compiler.overlap import Overlap, Window, window_distance
from microbuild.compiler.spatial import c_struct
from microbuild.model.ir import Graph, Operator

KERNEL_SOURCES = ("lstm_f32.c", "dot_f32.c", "activations_f32.c")
HEADER = "microbuild/kernels/lstm_f32.h"


def reasons(op: Operator, graph: Graph, tensors: dict[int, object], gates, indices) -> list[str]:
    """``tensors``: the op's inputs by position (None when absent); ``gates``, ``indices``:
    the gate names and the positions of (input weights, recurrent weights, biases) per gate."""
    found = []
    input_weights, recurrent_weights, biases = indices
    for gate in gates:
        for role, t in (("weights", tensors[input_weights[gate]]),
                        ("weights", tensors[recurrent_weights[gate]]),
                        ("bias", tensors[biases[gate]])):
            if t.dtype != "float32" or not t.is_constant:
                found.append(f"{role} '{t.name}' are {t.dtype}"
                             f"{'' if t.is_constant else ', not constant'}; TFLM's float LSTM "
                             "takes constant float32 weights and biases")
    activation = op.options.get("fused_activation_function", "NONE")
    if activation != "TANH":
        found.append(f"cell gate activation {activation}: TFLM's LSTM computes the cell gate "
                     "with TANH (other activations stop TFLM at an assertion)")
    return found


def emit(op: Operator, ctx, sizes: tuple[int, int, int, int], weight_ptrs: list[str],
         bias_ptrs: list[str], x: str, hidden: str, cell: str, out: str) -> str:
    batches, steps, units, depth = sizes
    fields = [("batches", batches), ("time_steps", steps), ("input_size", depth),
              ("units", units), ("time_major", int(bool(op.options.get("time_major", False)))),
              ("cell_gate_tanh", 1),
              ("cell_clip", c_float(max(float(op.options.get("cell_clip", 0.0)), 0.0)))]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_lstm_f32_params {params} = {c_struct(fields)};")
    weights = ctx.symbol("weights")
    ctx.static(f"static const float *const {weights}[8] = {{{', '.join(weight_ptrs)}}};")
    bias = ctx.symbol("bias")
    ctx.static(f"static const float *const {bias}[4] = {{{', '.join(bias_ptrs)}}};")
    return (f"mb_lstm_f32(&{params}, {x}, {weights}, {bias}, {hidden}, {cell}, {out}, "
            f"(float *){ctx.scratch_ptr()});")


def scratch_bytes(units: int) -> int:
    """One batch row's new hidden state (lstm_f32.h)."""
    return 4 * units


def overlap(sizes: tuple[int, int, int, int], time_major: bool, itemsize: int = 4
            ) -> Overlap | None:
    """How far below the input the output may start (microbuild/compiler/overlap.py).
    lstm_f32.c reads a step's whole input row (every gate) before it writes that step's output
    row, and never reads the row again; it walks the rows in memory order, unless the input is
    time-major with several batches (batch outer, step inner). Rows are the overlap's
    "pixels": trained_lstm's 28 x 28 input and 28 x 20 output then share all but one output
    row, 80 bytes."""
    batches, steps, units, depth = sizes
    if time_major and batches > 1:
        return None
    rows = batches * steps
    return Overlap(window_distance(Window(1, 1, rows, itemsize * depth, 1, rows,
                                          itemsize * units)))
