"""SVDF (int8 input and output, int8 feature weights, int16 or int8 time weights and activation
state, int32 bias), bit-exact with TFLM's integer reference (svdf_common.cc); float32 throughout
(runtime/kernels/svdf_f32.c), bit-exact with its EvalFloatSvdfReference.

The activation state is a variable tensor: it lives in the model's state buffer and carries the
last ``memory`` values of every filter from one invocation to the next (see
``runtime/include/microbuild/kernels/svdf.h``). TFLM computes the two rescaling factors in float32
(input scale x feature-weight scale / state scale, state scale x time-weight scale / output
scale) and then widens them to double; so does this. Its integer kernel applies no fused
activation beyond the int8 clamp, and neither does this one.
"""

from __future__ import annotations

import numpy as np

from microbuild.compiler.f32 import all_float32_reasons, is_float32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.fully_connected import arrange_dsp_wide, arrange_rows
from microbuild.compiler.quant import quantize_multiplier
from microbuild.compiler.spatial import c_struct
from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

_STATE_TYPES = ("int16", "int8")


def _effective_scale(a: float, b: float, c: float) -> float:
    """a * b / c in float32, as TFLM's Prepare computes it before widening to double."""
    return float(np.float32(np.float32(np.float32(a) * np.float32(b)) / np.float32(c)))


def _fast_scratch(op: Operator, graph: Graph) -> int:
    """The DSP variant's input row widened to int16 pairs (svdf_fast.c)."""
    return 2 * int(graph.tensor(op.inputs[0]).shape[-1]) + 8


def _folds(op: Operator, graph: Graph) -> np.ndarray:
    """svdf_fast.c's constants: -input zero point x each filter's feature-weight sum, then per
    unit -state zero point x the time-weight sum of its rank filters (their rows are consecutive,
    so the kernel takes a unit's time sum as one dot product), wrapped to int32 as the kernel's
    sums wrap (TFLM's int32 sums, modulo 2^32)."""
    x, wf, wt, state = (graph.tensor(op.inputs[i]) for i in (0, 1, 2, 4))
    rank = int(op.options.get("rank", 1))
    feature = -int(x.zero_point) * wf.data.astype(np.int64).sum(axis=1)
    time = -int(state.zero_point) * wt.data.astype(np.int64).reshape(-1, rank * wt.shape[1]).sum(
        axis=1)
    folds = np.concatenate([feature, time]) % (1 << 32)
    return np.where(folds >= 1 << 31, folds - (1 << 32), folds).astype(np.int32)


def _arrange_time_wide(weights: np.ndarray, rank: int) -> np.ndarray:
    """svdf_fast.c's dsp_wide time weights for an int8 state: widened to int16, each unit's run
    of rank x memory weights in chunks of four stored w0 w2 w1 w3 (the words SMLAD pairs with
    SXTB16's halves of a state word), the run's last run % 4 weights as they are."""
    w = np.asarray(weights, dtype=np.int8)
    runs = w.reshape(-1, rank * w.shape[1]).astype(np.int16)
    full = runs.shape[1] // 4 * 4
    chunks = runs[:, :full].reshape(runs.shape[0], -1, 4)[:, :, [0, 2, 1, 3]]
    return np.concatenate([chunks.reshape(runs.shape[0], full), runs[:, full:]], axis=1).ravel()


def _small_sums(op: Operator, graph: Graph, s1: int, s2: int) -> int:
    """Which sums the fast kernels may rescale with SMMULR (dsp_words.h: mb_rescale_small),
    those that, shifted left by their scale's left shift + 1, fit in int32: bit 0 the feature
    sums, bit 1 the time sums. The sums the kernels end with are TFLM's (their wrapping partial
    sums are equal modulo 2^32), bounded by the weights' magnitudes times the largest (value -
    zero point), plus the bias."""
    x, wf, wt, state = (graph.tensor(op.inputs[i]) for i in (0, 1, 2, 4))
    rank = int(op.options.get("rank", 1))
    feature = np.abs(wf.data.astype(np.int64)).sum(axis=1) * 255
    state_span = 65535 if state.dtype == "int16" else 255
    time = np.abs(wt.data.astype(np.int64)).reshape(-1, rank * wt.shape[1]).sum(axis=1)
    time = time * state_span
    if op.inputs[3] >= 0:
        time = time + np.abs(graph.tensor(op.inputs[3]).data.astype(np.int64)).reshape(-1)
    # The time sums' bit also carries the output zero point into the rounding constant
    # (zp x 2^right), which fits for right shifts up to 22.
    return (int(int(feature.max()) << (1 + max(s1, 0)) < 2 ** 31)
            | int(int(time.max()) << (1 + max(s2, 0)) < 2 ** 31 and s2 >= -22) << 1)


# svdf_f32.h's codes for the fused activations TFLM's ActivationValFloat applies here.
_FLOAT_ACTIVATIONS = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def _float32_reasons(op: Operator, graph: Graph) -> list[str]:
    """A float SVDF: float32 throughout (an optional bias), a fused activation svdf_f32.c has."""
    reasons = all_float32_reasons(op, graph)
    activation = op.options.get("fused_activation_function", "NONE")
    if activation not in _FLOAT_ACTIVATIONS:
        reasons.append(f"fused activation {activation} is not supported for float SVDF "
                       f"({', '.join(_FLOAT_ACTIVATIONS)})")
    return reasons


def _emit_float32(op: Operator, graph: Graph, ctx: EmitContext) -> str:
    x, wt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[2])
    rank = int(op.options.get("rank", 1))
    filters, memory = wt.shape
    fields = [("batches", x.shape[0]), ("input_size", x.shape[1]), ("filters", filters),
              ("units", filters // rank), ("rank", rank), ("memory", memory),
              ("activation",
               _FLOAT_ACTIVATIONS[op.options.get("fused_activation_function", "NONE")])]
    params = ctx.symbol("params")
    ctx.static(f"static const mb_svdf_f32_params {params} = {c_struct(fields)};")
    bias = ctx.ptr(op.inputs[3]) if op.inputs[3] >= 0 else "NULL"
    args = [f"&{params}", *(ctx.ptr(op.inputs[k]) for k in (0, 1, 2)), bias,
            ctx.ptr(op.inputs[4]), ctx.ptr(op.outputs[0]), f"(float *){ctx.scratch_ptr()}"]
    return f"mb_svdf_f32({', '.join(args)});"


@register
class Svdf(OpLowering):
    opcode = "SVDF"
    kernel_sources = ("svdf.c",)
    float32_sources = ("svdf_f32.c",)
    headers = ("microbuild/kernels/svdf.h", "microbuild/kernels/svdf_f32.h")
    dtypes = frozenset({"int8", "int16", "float32"})
    state_inputs = (4,)
    # The same arithmetic with the zero points folded out of the loops and the dot products on
    # the DSP / Helium instructions (runtime/kernels/svdf_fast.c); the function is chosen by the
    # state type at emit time (an _s16 or _s8 suffix of the name below).
    variants = (
        KernelVariant(
            opcode="SVDF", name="dsp", function="mb_svdf_s8_{state}_dsp",
            sources=("svdf_fast.c", "lstm_dsp.c"), features=frozenset({"dsp"}), rank=20,
            scratch=_fast_scratch, arrange=arrange_rows(4, 4),
            description="Arm DSP: the input widened once, SMLAD feature and time dot products, "
                        "zero points folded at compile time, word-wise state shift"),
        KernelVariant(
            opcode="SVDF", name="dsp_wide", function="mb_svdf_s8_{state}_dsp_wide",
            sources=("svdf_fast.c", "lstm_dsp.c"), features=frozenset({"dsp"}), rank=25,
            scratch=_fast_scratch, arrange=arrange_dsp_wide, compact="dsp",
            description="Arm DSP on feature weights (and an int8 state's time weights) widened "
                        "to int16 at compile time: no SXTB16 in the feature loop (12 "
                        "instructions per 16 MACs instead of 20, 64 filters per call), SMMULR "
                        "rescaling where the sums are bounded, for twice those weights' flash"),
        KernelVariant(
            opcode="SVDF", name="mve", function="mb_svdf_s8_{state}_mve",
            sources=("svdf_fast.c", "lstm_dsp.c"), features=frozenset({"mve"}), rank=30,
            scratch=_fast_scratch,
            description="Helium: VMLADAVA feature (16 int8 lanes, 4 filters per pass) and time "
                        "(8 int16 lanes) dot products, tail-predicated, rescaling of 4 filters / "
                        "units at once (VQRDMULH/VRSHL), vector state shift, zero points folded "
                        "at compile time"),
    )

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) != 5 or len(op.outputs) != 1 or min(op.inputs[:3] + op.inputs[4:]) < 0:
            return [f"expects input, feature weights, time weights, bias (optional) and state: "
                    f"has inputs {op.inputs}"]
        x, wf, wt, state = (graph.tensor(op.inputs[i]) for i in (0, 1, 2, 4))
        y = graph.tensor(op.outputs[0])
        bias = graph.tensor(op.inputs[3]) if op.inputs[3] >= 0 else None
        float32 = is_float32(op, graph)
        # A float SVDF: every operand float32, nothing quantized, the bias optional.
        reasons = _float32_reasons(op, graph) if float32 else []
        if not float32 and (x.dtype != "int8" or y.dtype != "int8" or wf.dtype != "int8"):
            reasons.append(f"input, feature weights and output must be int8 (or all float32): "
                           f"they are {x.dtype}, {wf.dtype}, {y.dtype}")
        if not float32 and (state.dtype not in _STATE_TYPES or wt.dtype != state.dtype):
            reasons.append(f"time weights ({wt.dtype}) and state ({state.dtype}) must both be "
                           "int16 or both int8")
        if not state.is_variable:
            reasons.append(f"state '{state.name}' is not a variable tensor; TFLM requires one")
        if not (wf.is_constant and wt.is_constant and (bias is None or bias.is_constant)):
            reasons.append("the weights and bias must be constant")
        if bias is None and not float32:
            reasons.append("has no bias; TFLM's SVDF reads the bias's scale in Prepare and cannot "
                           "run without one")
        elif not float32 and bias.dtype != "int32":
            reasons.append(f"bias is {bias.dtype}; int32 expected")
        if not float32 and any(t.quant is None for t in (x, wf, wt, state, y)):
            reasons.append("every tensor but the bias must be quantized")
        if reasons:
            return reasons
        rank = int(op.options.get("rank", 1))
        if len(x.shape) != 2 or len(wf.shape) != 2 or len(wt.shape) != 2 or len(y.shape) != 2:
            return ["input, weights and output must be 2-D as TFLM requires"]
        batches, input_size = x.shape
        filters, memory = wt.shape
        if rank < 1 or filters % rank:
            return [f"rank {rank} does not divide the {filters} filters"]
        units = filters // rank
        if wf.shape != (filters, input_size):
            reasons.append(f"feature weights are {list(wf.shape)}, expected [{filters}, "
                           f"{input_size}]")
        if tuple(y.shape) != (batches, units):
            reasons.append(f"output is {list(y.shape)}, expected [{batches}, {units}]")
        if bias is not None and bias.num_elements != units:
            reasons.append(f"bias has {bias.num_elements} values for {units} units")
        if state.num_elements != batches * filters * memory:
            reasons.append(f"state has {state.num_elements} values, expected batches x filters "
                           f"x memory = {batches * filters * memory}")
        if not float32 and (x.quant.per_channel or wf.quant.per_channel
                            or wt.quant.per_channel):
            reasons.append("TFLM's SVDF takes per-tensor quantization only")
        return reasons

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        x, wt = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[2])
        batches, filters = x.shape[0], wt.shape[0]
        units = filters // int(op.options.get("rank", 1))
        if is_float32(op, graph):
            return 4 * batches * filters  # svdf_f32.h: the time dot products
        return 4 * batches * (filters + units)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        x, wf, wt, state = (graph.tensor(op.inputs[i]) for i in (0, 1, 2, 4))
        y = graph.tensor(op.outputs[0])
        rank = int(op.options.get("rank", 1))
        filters, memory = wt.shape
        if is_float32(op, graph):
            return _emit_float32(op, graph, ctx)
        m1, s1 = quantize_multiplier(_effective_scale(x.scale, wf.scale, state.scale))
        m2, s2 = quantize_multiplier(_effective_scale(state.scale, wt.scale, y.scale))
        params = ctx.symbol("params")
        fields = [("batches", x.shape[0]), ("input_size", x.shape[1]), ("filters", filters),
                  ("units", filters // rank), ("rank", rank), ("memory", memory),
                  ("input_zero_point", x.zero_point), ("state_zero_point", state.zero_point),
                  ("output_zero_point", y.zero_point), ("scale1_multiplier", m1),
                  ("scale1_shift", s1), ("scale2_multiplier", m2), ("scale2_shift", s2),
                  ("small_sums", _small_sums(op, graph, s1, s2))]
        ctx.static(f"static const mb_svdf_params {params} = {c_struct(fields)};")
        bias = ctx.ptr(op.inputs[3])
        args = [f"&{params}", ctx.ptr(op.inputs[0]), ctx.ptr(op.inputs[1]),
                ctx.ptr(op.inputs[2]), bias, ctx.ptr(op.inputs[4]), ctx.ptr(op.outputs[0])]
        state_type = "s16" if state.dtype == "int16" else "s8"
        variant = getattr(ctx, "variant", None)
        if variant is not None:
            if variant.arrange is not None:  # only the arranged feature weights are stored
                arranged = np.ascontiguousarray(variant.arrange(wf.data, op, graph))
                ctype = "int16_t" if arranged.dtype == np.int16 else "int8_t"
                symbol = ctx.const_array(ctx.symbol(f"weights_{variant.name}"), arranged, ctype)
                args[2] = (symbol if ctype == "int8_t"
                           else f"(const int8_t *)(const void *){symbol}")
            if variant.name == "dsp_wide" and state.dtype == "int8":
                wide = ctx.const_array(ctx.symbol("time_weights_wide"),
                                       _arrange_time_wide(wt.data, rank), "int16_t")
                args[3] = f"(const int8_t *)(const void *){wide}"
            args.append(ctx.const_array(ctx.symbol("folds"), _folds(op, graph), "int32_t"))
            function = variant.function.format(state=state_type)
        else:
            function = f"mb_svdf_s8_{state_type}"
        return f"{function}({', '.join(args + [ctx.scratch_ptr()])});"
