"""UNIDIRECTIONAL_SEQUENCE_LSTM, bit-exact with TFLM's integer kernel (lstm_eval.h's EvalLstm and
lstm_eval_common.cc's Prepare): int8 input/output with int8 weights and int32 biases, or int16
input/output (16x8) with int8 weights and int64 biases; int16 gates and cell state.

TFLM's kernel is the standard (Keras) LSTM only: every gate has its input and recurrent weights
(no CIFG), no peephole, no projection, no layer normalisation; those and a float or int8 cell
state are refused here as TFLM's Prepare refuses them. Parameters follow Prepare:

- each gate's two fully connected layers rescale to Q3.12 (scale 2^-12, int16): input scale x
  weight scale / 2^-12 (and hidden-state scale x recurrent weight scale / 2^-12), in double from
  the float32 scales, as CalculateOpDataFullyConnected does;
- the gate activations are TFLM's int16 sigmoid and tanh (the table interpolation shared with
  the int16 LOGISTIC/TANH, ``runtime/kernels/sigmoid16.c``) on Q3.12, giving Q0.15: sigmoid for
  the forget, input and output gates, tanh for the cell gate (the op's fused activation must be
  TANH: TFLM's kernel would take SIGMOID, but the flatbuffer's activation enum has no sigmoid,
  and anything else hits an assertion in TFLM);
- forget x cell, input x cell gate and tanh(cell) x output gate are TFLM's int16 Mul with
  multipliers 2^-15 x cell / cell, 2^-30 / cell scale and 2^-30 / hidden scale;
- tanh(cell) reads the cell state at its power-of-two scale 2^p: TFLM's Tanh with a left shift of
  15 + p - 3 (a right shift with multiplier 3 when negative);
- the cell clip is cell_clip / cell scale, truncated to int16, applied when cell_clip > 0.

The output state (hidden) and the cell state are variable tensors kept in the model's state
buffer, so a stateful model streams: each invocation starts where the last one ended, as TFLM's
interpreter does until it is reset. Nothing folds (the states are never constant).
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import lstm as lstm_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.fully_connected import (
    arrange_dsp_wide,
    arrange_rows,
    arrange_rows_s16,
)
from microbuild.compiler.ops.sigmoid16 import HEADER as SIGMOID16_HEADER
from microbuild.compiler.ops.sigmoid16 import KERNEL_SOURCES as SIGMOID16_SOURCES
from microbuild.compiler.ops.sigmoid16 import checked_log2
from microbuild.compiler.quant import quantize_multiplier
from microbuild.compiler.spatial import c_struct
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

# Input indices (TFLite's lstm_shared.h).
INPUT = 0
INPUT_WEIGHTS = {"input": 1, "forget": 2, "cell": 3, "output": 4}
RECURRENT_WEIGHTS = {"input": 5, "forget": 6, "cell": 7, "output": 8}
PEEPHOLE = (9, 10, 11)
BIASES = {"input": 12, "forget": 13, "cell": 14, "output": 15}
PROJECTION = (16, 17)
HIDDEN_STATE = 18
CELL_STATE = 19
LAYER_NORM = (20, 21, 22, 23)
# The kernel's gate order (runtime/include/microbuild/kernels/lstm.h), as TFLM computes them.
GATES = ("forget", "input", "cell", "output")

_Q3_12 = 2.0 ** -12
_Q0_15 = 2.0 ** -15
_BIAS_TYPE = {"int8": "int32", "int16": "int64"}


def _f32(value: float) -> float:
    return float(np.float32(value))


def _fc_multiplier(input_scale: float, weight_scale: float) -> tuple[int, int]:
    """A gate's fully connected layer rescaled to Q3.12 (CalculateOpDataFullyConnected)."""
    return quantize_multiplier(_f32(input_scale) * _f32(weight_scale) / _Q3_12)


def _mul_multiplier(scale1: float, scale2: float, output_scale: float) -> tuple[int, int]:
    """CreateInterGateMulParams: double(scale1) * double(scale2) / double(output_scale)."""
    return quantize_multiplier(_f32(scale1) * _f32(scale2) / _f32(output_scale))


def _tanh_rescale(cell_scale: float) -> tuple[int, int]:
    """(multiplier, right shift) of TFLM's Tanh on the cell state: left shift 15 + p - 3 for a
    cell scale of 2^p (CheckedLog2's rounded log2, used whether or not the scale is exact)."""
    _, power = checked_log2(cell_scale)
    left = 15 + power - 3
    if left < 0:
        return 3, -left
    return 3 << left, 0


def _quantized_cell_clip(cell_clip: float, cell_scale: float) -> int:
    if not cell_clip > 0:
        return 0
    value = min(max(_f32(cell_clip) / _f32(cell_scale), -32768.0), 32767.0)
    return int(value)  # static_cast<int16_t>: truncation toward zero


def _arrange_dsp_wide_padded(weights: np.ndarray, op: Operator, graph: Graph) -> np.ndarray:
    """dsp_wide's layout (lstm_dsp.c): every row padded with zero weights to whole 4-value chunks,
    then FULLY_CONNECTED's arrange_dsp_wide: every group of four rows is whole chunks, which one
    call runs group after group (the kernel pads the vector's last chunk with zeros)."""
    w = np.asarray(weights, dtype=np.int8)
    pad = -w.shape[1] % 4
    return arrange_dsp_wide(np.pad(w, ((0, 0), (0, pad))), op, graph)


def _prepared_scratch(op: Operator, graph: Graph) -> int:
    """The gates' scratch, 8 bytes of alignment and the input row and hidden state widened to
    int16 once per time step (lstm.h: mb_lstm_prepared_bytes)."""
    x = graph.tensor(op.inputs[INPUT])
    units = graph.tensor(op.inputs[RECURRENT_WEIGHTS["forget"]]).shape[-1]

    def prepared(cols: int) -> int:
        return (2 * cols + 7) & ~7

    return 3 * 2 * units + 8 + prepared(int(x.shape[-1])) + prepared(int(units))


@register
class UnidirectionalSequenceLstm(OpLowering):
    opcode = "UNIDIRECTIONAL_SEQUENCE_LSTM"
    kernel_sources = ("lstm.c",) + SIGMOID16_SOURCES
    float32_sources = lstm_f32.KERNEL_SOURCES
    headers = ("microbuild/kernels/lstm.h", SIGMOID16_HEADER, lstm_f32.HEADER)
    dtypes = frozenset({"int8", "int16", "float32"})
    state_inputs = (HIDDEN_STATE, CELL_STATE)
    # DSP: the same body (lstm.c) around faster row products; Helium: the whole step vectorised.
    # Same arguments as the reference, whose scratch they share (lstm_dsp.c, lstm_mve.c).
    variants = (
        KernelVariant(
            opcode="UNIDIRECTIONAL_SEQUENCE_LSTM", name="dsp", function="mb_lstm_s8_dsp",
            sources=("lstm_dsp.c",), features=frozenset({"dsp"}), rank=20,
            scratch=_prepared_scratch, overlap_group=1,
            description="Arm DSP: the gates' input and recurrent row products with SXTB16 + "
                        "SMLAD, 4 rows per pass, the input and hidden state widened once per "
                        "time step"),
        KernelVariant(
            opcode="UNIDIRECTIONAL_SEQUENCE_LSTM", name="dsp_wide",
            function="mb_lstm_s8_dsp_wide", sources=("lstm_dsp.c",),
            features=frozenset({"dsp"}), rank=25, scratch=_prepared_scratch, compact="dsp",
            overlap_group=1,
            description="Arm DSP on weights widened to int16 and rows padded to whole 4-value "
                        "chunks at compile time: no SXTB16 in the loop (13 instructions per 16 "
                        "MACs instead of 20), all groups of a gate in one call, for twice the "
                        "weights' flash"),
        KernelVariant(
            opcode="UNIDIRECTIONAL_SEQUENCE_LSTM", name="dsp_s16", function="mb_lstm_s16_dsp",
            sources=("lstm_dsp.c",), features=frozenset({"dsp"}), rank=20,
            activation_dtype="int16", overlap_group=1,
            description="16x8, Arm DSP: int16 pairs against SXTB16-widened weights, SMLALD "
                        "into int64, 4 rows per pass"),
        KernelVariant(
            opcode="UNIDIRECTIONAL_SEQUENCE_LSTM", name="mve", function="mb_lstm_s8_mve",
            sources=("lstm_mve.c",), features=frozenset({"mve"}), rank=30, overlap_group=1,
            description="Helium: VMLADAVA on 16 int8 lanes, 4 rows per pass, tail-predicated; "
                        "rescaling, sigmoid/tanh (VLDRH gathers), cell and hidden state of 4 "
                        "units at once on int32 lanes"),
        KernelVariant(
            opcode="UNIDIRECTIONAL_SEQUENCE_LSTM", name="mve_s16", function="mb_lstm_s16_mve",
            sources=("lstm_mve.c",), features=frozenset({"mve"}), rank=30,
            activation_dtype="int16", overlap_group=1,
            description="16x8, Helium: VMLALDAVA on 8 int16 lanes against VLDRB.S16-widened "
                        "weights, 4 rows per pass, tail-predicated; sigmoid/tanh, cell and "
                        "hidden state of 4 units at once on int32 lanes"),
    )

    # How each variant wants the 8 weight matrices laid out (the kernel files say why): the
    # arranged copies replace the model's, and each group of 4 rows starts where it did.
    arrangements = {"dsp": arrange_rows(4, 4), "dsp_wide": _arrange_dsp_wide_padded,
                    "dsp_s16": arrange_rows_s16, "mve": arrange_rows(4, 16)}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 24 or len(op.outputs) != 1:
            return [f"expects 24 inputs and 1 output as TFLM requires: has {len(op.inputs)} "
                    f"inputs and {len(op.outputs)} outputs"]
        t = {i: (graph.tensor(op.inputs[i]) if op.inputs[i] >= 0 else None) for i in range(24)}
        reasons = []
        missing = [name for name, i in (("input", INPUT), ("output state", HIDDEN_STATE),
                                        ("cell state", CELL_STATE)) if t[i] is None]
        if missing:
            return [f"has no {', '.join(missing)} tensor; TFLM requires them"]
        if any(t[i] is None for i in INPUT_WEIGHTS.values()) or any(
                t[i] is None for i in RECURRENT_WEIGHTS.values()):
            reasons.append("has no input gate weights (CIFG, coupled input and forget gates): "
                           "TFLM's LSTM kernel requires all eight weight matrices")
        if any(t[i] is not None for i in PEEPHOLE):
            reasons.append("uses peephole connections (cell-to-gate weights): TFLM's LSTM kernel "
                           "has none")
        if any(t[i] is not None for i in PROJECTION):
            reasons.append("uses a projection layer: TFLM's LSTM kernel has none")
        if any(t[i] is not None for i in LAYER_NORM):
            reasons.append("uses layer normalisation: TFLM's LSTM kernel has none")
        if any(t[i] is None for i in BIASES.values()):
            reasons.append("lacks a gate bias: TFLM's LSTM kernel requires all four")
        if reasons:
            return reasons

        x, hidden, cell = t[INPUT], t[HIDDEN_STATE], t[CELL_STATE]
        y = graph.tensor(op.outputs[0])
        act = x.dtype
        if act == "float32":
            reasons = [f"{role} '{tensor.name}' is {tensor.dtype}; TFLM's float LSTM needs float32"
                       for role, tensor in (("output", y), ("output state", hidden),
                                            ("cell state", cell)) if tensor.dtype != act]
            reasons += lstm_f32.reasons(op, graph, t, GATES,
                                        (INPUT_WEIGHTS, RECURRENT_WEIGHTS, BIASES))
            return reasons + self._shape_reasons(op, graph, t)
        if act not in _BIAS_TYPE:
            return [f"input is {act}; TFLM's LSTM runs int8 or int16 (16x8) activations"]
        for role, tensor in (("output", y), ("output state", hidden)):
            if tensor.dtype != act:
                reasons.append(f"{role} '{tensor.name}' is {tensor.dtype} but the input is {act}; "
                               "TFLM requires the same type")
        if cell.dtype != "int16":
            reasons.append(f"cell state '{cell.name}' is {cell.dtype}; TFLM's quantized LSTM only "
                           "supports an int16 cell state")
        for tensor in (x, hidden, cell, y):
            if tensor.quant is None or tensor.quant.per_channel or not tensor.scale > 0:
                reasons.append(f"'{tensor.name}' must be quantized per tensor with a positive "
                               "scale")
            elif act == "int16" and tensor.zero_point != 0:
                reasons.append(f"'{tensor.name}' is int16 with zero point {tensor.zero_point}; "
                               "16x8 quantization needs zero point 0")
        if cell.quant is not None and cell.zero_point != 0:
            reasons.append(f"cell state '{cell.name}' has zero point {cell.zero_point}; TFLM's "
                           "LSTM treats the cell state as symmetric (zero point 0)")
        for gate in GATES:
            for w in (t[INPUT_WEIGHTS[gate]], t[RECURRENT_WEIGHTS[gate]]):
                if w.dtype != "int8" or not w.is_constant:
                    reasons.append(f"weights '{w.name}' are {w.dtype}"
                                   f"{'' if w.is_constant else ', not constant'}; TFLM's "
                                   "integer LSTM takes constant int8 weights")
                elif w.quant is None or w.quant.per_channel:
                    reasons.append(f"weights '{w.name}' must be quantized per tensor (TFLM's "
                                   "LSTM applies one multiplier per gate)")
                elif w.zero_point != 0:
                    reasons.append(f"weights '{w.name}' have zero point {w.zero_point}; TFLM "
                                   "requires symmetric int8 weights")
            bias = t[BIASES[gate]]
            if bias.dtype != _BIAS_TYPE[act] or not bias.is_constant:
                reasons.append(f"bias '{bias.name}' is {bias.dtype}"
                               f"{'' if bias.is_constant else ', not constant'}; TFLM's "
                               f"{act} LSTM takes constant {_BIAS_TYPE[act]} biases")
        activation = op.options.get("fused_activation_function", "NONE")
        if activation != "TANH":
            reasons.append(f"cell gate activation {activation}: TFLM's integer LSTM computes the "
                           "cell gate only with TANH (other activations stop TFLM at an assertion)")
        if not float(op.options.get("cell_clip", 0.0)) >= 0:
            reasons.append(f"cell_clip {op.options.get('cell_clip')} is negative; TFLM requires "
                           ">= 0")
        if reasons:
            return reasons
        reasons = self._shape_reasons(op, graph, t)
        if reasons:
            return reasons
        batches, steps, units, depth = self._sizes(op, graph)
        if act == "int8":
            # The int32 sums (TFLM's, and the kernel's with the zero point folded in) must not
            # overflow, which only absurd sizes or biases could make them.
            biases = self._biases(op, graph)
            bound = int(np.max(np.abs(biases))) + max(depth, units) * 128 * 128
            if bound >= 2 ** 31:
                reasons.append(f"{max(depth, units)} inputs per unit with these biases can "
                               "overflow the int32 sums")
        else:
            # The 16x8 gates' int64 sums are multiplied by a 16-bit multiplier (TFLM's
            # MultiplyByQuantizedMultiplier for int64), so a sum beyond 2^47 overflows there: only
            # a damaged bias comes near that.
            largest, name = max((abs(int(v)), t[BIASES[g]].name) for g in GATES
                                for v in t[BIASES[g]].data.ravel())
            if largest + max(depth, units) * 32768 * 128 >= 2 ** 47:
                reasons.append(f"bias '{name}' holds a value of magnitude {largest:,}: the int64 "
                               "sums it starts would overflow when requantized (the file is "
                               "probably damaged)")
        return reasons

    def _shape_reasons(self, op: Operator, graph: Graph, t: dict) -> list[str]:
        """Shapes, as TFLM's ValidateTensorSize checks them."""
        x, hidden, cell = t[INPUT], t[HIDDEN_STATE], t[CELL_STATE]
        y = graph.tensor(op.outputs[0])
        reasons = []
        for role, tensor in (("output state", hidden), ("cell state", cell)):
            if not tensor.is_variable:
                reasons.append(f"{role} '{tensor.name}' is not a variable tensor; TFLM requires "
                               "one")
        if len(x.shape) != 3:
            return reasons + [f"input '{x.name}' has rank {len(x.shape)}; TFLM's LSTM takes a "
                              "rank-3 input"]
        for role, tensor in (("output state", hidden), ("cell state", cell)):
            if not tensor.shape:
                return reasons + [f"{role} '{tensor.name}' is a scalar; TFLM's LSTM keeps it as "
                                  "[batches, units]"]
        batches, steps, units, depth = self._sizes(op, graph)
        for gate in GATES:
            for w, shape in ((t[INPUT_WEIGHTS[gate]], (units, depth)),
                             (t[RECURRENT_WEIGHTS[gate]], (units, units))):
                if tuple(w.shape) != shape:
                    reasons.append(f"weights '{w.name}' have shape {w.shape}, expected {shape}")
            if tuple(t[BIASES[gate]].shape) != (units,):
                reasons.append(f"bias '{t[BIASES[gate]].name}' has shape {t[BIASES[gate]].shape}, "
                               f"expected ({units},)")
        for role, tensor in (("output state", hidden), ("cell state", cell)):
            if tensor.num_elements != batches * units:
                reasons.append(f"{role} '{tensor.name}' has {tensor.num_elements} values, "
                               f"expected batch x units = {batches * units}")
        if len(y.shape) != 3 or tuple(y.shape) != (x.shape[0], x.shape[1], units):
            reasons.append(f"output '{y.name}' has shape {y.shape}, expected "
                           f"{(x.shape[0], x.shape[1], units)}")
        return reasons

    def _sizes(self, op: Operator, graph: Graph) -> tuple[int, int, int, int]:
        """(batches, time steps, units, input size), as TFLM's CreateLstmSizeInfo reads them."""
        x = graph.tensor(op.inputs[INPUT])
        time_major = bool(op.options.get("time_major", False))
        batches, steps = (x.shape[1], x.shape[0]) if time_major else (x.shape[0], x.shape[1])
        hidden = graph.tensor(op.inputs[HIDDEN_STATE])
        units = hidden.shape[1] if len(hidden.shape) > 1 else hidden.shape[0]
        return batches, steps, units, x.shape[2]

    def _biases(self, op: Operator, graph: Graph) -> np.ndarray:
        """The kernel's 8 x units biases (gates in GATES order, input layers then recurrent
        layers); for int8, with the input and hidden zero points folded in (bias - zp x row
        sum; TFLM's recurrent layers have no bias, so theirs is that term alone)."""
        x = graph.tensor(op.inputs[INPUT])
        hidden = graph.tensor(op.inputs[HIDDEN_STATE])
        rows = []
        for gate in GATES:
            w = graph.tensor(op.inputs[INPUT_WEIGHTS[gate]]).data.astype(np.int64)
            bias = graph.tensor(op.inputs[BIASES[gate]]).data.astype(np.int64).reshape(-1)
            if x.dtype == "int8":
                bias = bias - x.zero_point * w.sum(axis=1)
            rows.append(bias)
        for gate in GATES:
            w = graph.tensor(op.inputs[RECURRENT_WEIGHTS[gate]]).data.astype(np.int64)
            zp = hidden.zero_point if x.dtype == "int8" else 0
            rows.append(-zp * w.sum(axis=1))
        return np.concatenate(rows)

    def _small_sums(self, op: Operator, graph: Graph, in_shifts: list[int],
                    rec_shifts: list[int]) -> bool:
        """Whether every int8 gate sum, shifted left by its layer's left shift + 1, fits in
        int32, so the kernel may rescale it with SMMULR (dsp_words.h: mb_rescale_small): the
        bound is the largest folded bias plus cols x 128 x 128."""
        _, _, units, depth = self._sizes(op, graph)
        biases = np.abs(self._biases(op, graph)).reshape(8, units).max(axis=1)
        for layer, (cols, shifts) in enumerate(((depth, in_shifts), (units, rec_shifts))):
            for g, shift in enumerate(shifts):
                bound = int(biases[4 * layer + g]) + cols * 128 * 128
                if bound << (1 + max(shift, 0)) >= 2 ** 31:
                    return False
        return True

    def overlap(self, op: Operator, graph: Graph, k: int, variant=None):
        """The output may lie over the dying input, one output row (time step) below it at
        most: every kernel (lstm.c's body, which the DSP variants run too, lstm_mve.c's steps,
        lstm_f32.c) reads a step's input row for its gates before it writes any byte of that
        step's output row that could land on the row, and never reads the row again. A variant
        that does not declare ``overlap_group`` is kept apart. micro_speech_lstm: 49 x 257 in,
        49 x 80 out, the output 80 bytes below the input instead of beside it."""
        if k != INPUT or (variant is not None and variant.overlap_group <= 0):
            return None
        itemsize = np.dtype(graph.tensor(op.inputs[INPUT]).dtype).itemsize
        if np.dtype(graph.tensor(op.outputs[0]).dtype).itemsize != itemsize:
            return None
        return lstm_f32.overlap(self._sizes(op, graph), bool(op.options.get("time_major", False)),
                                itemsize)

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        if graph.tensor(op.inputs[INPUT]).dtype == "float32":
            return lstm_f32.scratch_bytes(self._sizes(op, graph)[2])
        return 3 * 2 * self._sizes(op, graph)[2]

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x = graph.tensor(op.inputs[INPUT])
        hidden = graph.tensor(op.inputs[HIDDEN_STATE])
        cell = graph.tensor(op.inputs[CELL_STATE])
        if x.dtype == "float32":
            return lstm_f32.emit(
                op, ctx, self._sizes(op, graph),
                [ctx.ptr(op.inputs[INPUT_WEIGHTS[g]]) for g in GATES]
                + [ctx.ptr(op.inputs[RECURRENT_WEIGHTS[g]]) for g in GATES],
                [ctx.ptr(op.inputs[BIASES[g]]) for g in GATES], ctx.ptr(op.inputs[INPUT]),
                ctx.ptr(op.inputs[HIDDEN_STATE]), ctx.ptr(op.inputs[CELL_STATE]),
                ctx.ptr(op.outputs[0]))
        batches, steps, units, depth = self._sizes(op, graph)
        in_fc = [_fc_multiplier(x.scale, graph.tensor(op.inputs[INPUT_WEIGHTS[g]]).scale)
                 for g in GATES]
        rec_fc = [_fc_multiplier(hidden.scale, graph.tensor(op.inputs[RECURRENT_WEIGHTS[g]]).scale)
                  for g in GATES]
        forget_m, forget_s = _mul_multiplier(_Q0_15, cell.scale, cell.scale)
        update_m, update_s = _mul_multiplier(_Q0_15, _Q0_15, cell.scale)
        hidden_m, hidden_s = _mul_multiplier(_Q0_15, _Q0_15, hidden.scale)
        tanh_m, tanh_s = _tanh_rescale(cell.scale)
        clip = _quantized_cell_clip(float(op.options.get("cell_clip", 0.0)), cell.scale)
        fields = [("batches", batches), ("time_steps", steps), ("input_size", depth),
                  ("units", units), ("time_major", int(bool(op.options.get("time_major", False)))),
                  ("input_multiplier", [m for m, _ in in_fc]),
                  ("input_shift", [s for _, s in in_fc]),
                  ("recurrent_multiplier", [m for m, _ in rec_fc]),
                  ("recurrent_shift", [s for _, s in rec_fc]),
                  ("forget_multiplier", forget_m), ("forget_shift", forget_s),
                  ("update_multiplier", update_m), ("update_shift", update_s),
                  ("hidden_multiplier", hidden_m), ("hidden_shift", hidden_s),
                  ("hidden_zero_point", hidden.zero_point if x.dtype == "int8" else 0),
                  ("cell_clip", clip), ("tanh_multiplier", tanh_m), ("tanh_shift", tanh_s),
                  ("small_sums", int(x.dtype == "int8" and self._small_sums(
                      op, graph, [s for _, s in in_fc], [s for _, s in rec_fc])))]
        params = ctx.symbol("params")
        ctx.static(f"static const mb_lstm_params {params} = {c_struct(fields)};")
        variant = getattr(ctx, "variant", None)
        arrange = self.arrangements.get(variant.name) if variant is not None else None
        weight_ptrs = []
        for index in [op.inputs[INPUT_WEIGHTS[g]] for g in GATES] + [
                op.inputs[RECURRENT_WEIGHTS[g]] for g in GATES]:
            if arrange is None:
                weight_ptrs.append(ctx.ptr(index))
            else:  # only the arranged copy is stored
                arranged = np.ascontiguousarray(arrange(graph.tensors[index].data, op, graph))
                ctype = "int16_t" if arranged.dtype == np.int16 else "int8_t"
                symbol = ctx.const_array(ctx.symbol(f"weights_{variant.name}"), arranged, ctype)
                weight_ptrs.append(symbol if ctype == "int8_t"
                                   else f"(const int8_t *)(const void *){symbol}")
        weights = ctx.symbol("weights")
        ctx.static(f"static const int8_t *const {weights}[8] = {{{', '.join(weight_ptrs)}}};")
        s16 = x.dtype == "int16"
        bias_type = "int64_t" if s16 else "int32_t"
        bias = ctx.const_array(ctx.symbol("bias"), self._biases(op, graph), bias_type)
        function = (variant.function if variant is not None
                    else "mb_lstm_s16" if s16 else "mb_lstm_s8")
        return (f"{function}(&{params}, {ctx.ptr(op.inputs[INPUT])}, {weights}, {bias}, "
                f"{ctx.ptr(op.inputs[HIDDEN_STATE])}, {ctx.ptr(op.inputs[CELL_STATE])}, "
                f"{ctx.ptr(op.outputs[0])}, {ctx.scratch_ptr()});")
