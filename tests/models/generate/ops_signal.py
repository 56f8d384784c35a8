"""Single-operator models of the audio front end (TFLM's micro_speech audio_preprocessor): the
signal-library custom operators (Signal*), hand-built with tflite_builder since no converter
emits them on their own, and the plain int32 operators it runs at run time (CAST, STRIDED_SLICE,
CONCATENATION, MUL, ADD, DIV, MINIMUM, MAXIMUM), made from tf.functions through the stock
converter as the front end's own export does.

    /work/tfenv/bin/python tests/models/generate/ops_signal.py

Every model accepts any value of its inputs (the tests feed full-range random ones; a DIV's
divisor is a non-zero constant, as TFLM's kernel would trap on zero).
"""

from __future__ import annotations

import math
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from common import op_names, save  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402

CHANNELS = 40


def _save(name: str, data: bytes, expected: list[str], folder: str = "ops") -> None:
    if op_names(data) != expected:
        raise SystemExit(f"{name}: expected {expected}, got {op_names(data)}")
    save(f"{folder}/{name}.tflite", data)


# ---- signal-library custom operators (hand-built) --------------------------------------------
def _single(custom: str, inputs: list[tuple], outputs: list[tuple], options: dict) -> bytes:
    """One custom op; inputs are (name, shape, dtype) for run-time tensors or (name, array) for
    constants; outputs (name, shape, dtype)."""
    b = ModelBuilder(f"microbuild test model: {custom}")
    ins, graph_inputs = [], []
    for spec in inputs:
        if len(spec) == 2:
            ins.append(b.constant(spec[0], spec[1]))
        else:
            ins.append(b.tensor(*spec))
            graph_inputs.append(ins[-1])
    outs = [b.tensor(*spec) for spec in outputs]
    b.operator("CUSTOM", ins, outs, custom=custom, custom_options=options)
    return b.build(graph_inputs, outs)


def _hann_q(n: int, bits: int) -> np.ndarray:
    return np.array([round((1 << bits) * 0.5 * (1 - math.cos(2 * math.pi * i / n)))
                     for i in range(n)], dtype=np.int16)


def _mel_tables(bins: int, channels: int) -> list[np.ndarray]:
    """A triangular filter bank in the layout TFLM's FilterbankAccumulateChannels reads: per
    channel (num_channels + 1 entries, entry 0 the scratch channel) its first spectrum bin, first
    weight and width; weights in Q12 and unweights = 4096 - weights."""
    edges = np.linspace(3, bins - 2, channels + 2).round().astype(int)
    starts, weight_starts, widths, weights = [], [], [], []
    for ch in range(channels + 1):
        lo, hi = edges[ch], edges[ch + 1]
        starts.append(lo)
        weight_starts.append(len(weights))
        widths.append(hi - lo)
        weights += [round(4096 * (hi - f) / (hi - lo)) for f in range(lo, hi)]
    weights = np.array(weights, dtype=np.int16)
    return [weights, (4096 - weights).astype(np.int16), np.array(starts, np.int16),
            np.array(weight_starts, np.int16), np.array(widths, np.int16)]


def _pcan_lut(strength: float = 0.95, offset: float = 80.0, gain_bits: int = 21,
              input_bits: int = 7) -> np.ndarray:
    """The gain table's layout: entries 0..2 the gains at 0, 1, 2, then per octave 2..32 the
    gain at its start and two quadratic coefficients (TFLM's WideDynamicFunction reads them)."""
    def f(x: int) -> int:
        value = (x / (1 << input_bits) + offset) ** -strength * (1 << gain_bits)
        return int(max(-32768, min(32767, round(value))))

    lut = np.zeros(4 * 32 - 6 + 3, dtype=np.int64)
    lut[0], lut[1], lut[2] = f(0), f(1), f(2)
    for interval in range(2, 33):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if interval == 32 else 2 * x0
        y0, y1, y2 = f(x0), f(x1), f(x2)
        a1 = 4 * (y1 - y0) - (y2 - y0)
        a2 = (y2 - y0) - a1
        base = 4 * interval - 6
        lut[base:base + 3] = [y0, a1, a2]
    return np.clip(lut, -32768, 32767).astype(np.int16)


SUBTRACTION = {"alternate_one_minus_smoothing": 15401, "alternate_smoothing": 983,
               "clamping": False, "min_signal_remaining": 819, "num_channels": CHANNELS,
               "one_minus_smoothing": 15975, "smoothing": 409, "smoothing_bits": 10,
               "spectral_subtraction_bits": 14}


def signal_models() -> None:
    _save("signal_window_s16", _single(
        "SignalWindow", [("x", (3, 64), "int16"), ("window", _hann_q(64, 14))],
        [("y", (3, 64), "int16")], {"shift": 14}), ["CUSTOM"])
    rng = np.random.default_rng(2024)
    _save("signal_window_saturating", _single(
        "SignalWindow", [("x", (1, 48), "int16"),
                         ("window", rng.integers(-32768, 32768, 48).astype(np.int16))],
        [("y", (1, 48), "int16")], {"shift": 3}), ["CUSTOM"])
    _save("signal_fft_auto_scale", _single(
        "SignalFftAutoScale", [("x", (480,), "int16")],
        [("y", (480,), "int16"), ("scale_bits", (), "int32")], {}), ["CUSTOM"])
    for n, shape in ((512, (480,)), (16, (3, 16)), (8, (2, 5))):
        _save(f"signal_rfft_{n}", _single(
            "SignalRfft", [("x", shape, "int16")],
            [("spectrum", shape[:-1] + (n + 2,), "int16")], {"T": 7, "fft_length": n}),
            ["CUSTOM"])
    _save("signal_energy", _single(
        "SignalEnergy", [("spectrum", (514,), "int16")], [("energy", (257,), "uint32")],
        {"end_index": 257, "start_index": 0}), ["CUSTOM"])
    tables = _mel_tables(257, CHANNELS)
    _save("signal_filter_bank", _single(
        "SignalFilterBank", [("energy", (257,), "uint32")] +
        [(name, t) for name, t in zip(("weights", "unweights", "starts", "weight_starts",
                                       "widths"), tables)],
        [("channels", (CHANNELS,), "uint64")], {"num_channels": CHANNELS}), ["CUSTOM"])
    _save("signal_filter_bank_square_root", _single(
        "SignalFilterBankSquareRoot",
        [("channels", (CHANNELS,), "uint64"), ("scale_bits", np.array(3, np.int32))],
        [("roots", (CHANNELS,), "uint32")], {}), ["CUSTOM"])
    for name, clamping in (("signal_spectral_subtraction", False),
                           ("signal_spectral_subtraction_clamping", True)):
        _save(name, _single(
            "SignalFilterBankSpectralSubtraction", [("channels", (CHANNELS,), "uint32")],
            [("cleaned", (CHANNELS,), "uint32"), ("noise", (CHANNELS,), "uint32")],
            dict(SUBTRACTION, clamping=clamping)), ["CUSTOM"])
    _save("signal_pcan", _single(
        "SignalPCAN", [("channels", (CHANNELS,), "uint32"), ("noise", (CHANNELS,), "uint32"),
                       ("gain_lut", _pcan_lut())],
        [("normalized", (CHANNELS,), "uint32")], {"snr_shift": 6}), ["CUSTOM"])
    _save("signal_filter_bank_log", _single(
        "SignalFilterBankLog", [("channels", (CHANNELS,), "uint32")],
        [("log", (CHANNELS,), "int16")], {"input_correction_bits": 3, "output_scale": 64}),
        ["CUSTOM"])


# ---- streaming signal operators (stateful, hand-built) ----------------------------------------
def streaming_signal_models() -> None:
    """The delay line, framer and stacker of streaming front ends, each with an edge option:
    delay 0 and a delay longer than the frame, a framer step smaller and larger than the frame
    with and without prefill, a stacker with a stride and with left context. The framers and
    stackers go to streaming/, outside the ops/ sweep: when their 'valid' output is false they
    leave their frames as they were, which TFLM's are then whatever its arena held."""
    for name, shape, delay in (("signal_delay_3", (2, 16), 3), ("signal_delay_0", (1, 10), 0),
                               ("signal_delay_longer_than_frame", (3, 4), 10)):
        _save(name, _single("SignalDelay", [("x", shape, "int16")], [("y", shape, "int16")],
                            {"delay_length": delay}), ["CUSTOM"])
    for name, shape, size, step, prefill in (
            ("signal_framer_prefill", (2, 8), 12, 4, True),
            ("signal_framer_fills_first", (16,), 20, 8, False),
            ("signal_framer_step_over_frame", (12,), 3, 4, False)):
        frames = shape[-1] // step
        _save(name, _single("SignalFramer", [("x", shape, "int16")],
                            [("frames", shape[:-1] + (frames, size), "int16"),
                             ("valid", (), "bool")],
                            {"frame_size": size, "frame_step": step, "prefill": prefill}),
              ["CUSTOM"], "streaming")
    for name, channels, left, right, step in (("signal_stacker", 5, 2, 1, 1),
                                              ("signal_stacker_stride", 4, 0, 3, 2)):
        _save(name, _single("SignalStacker", [("x", (channels,), "int16")],
                            [("stack", (channels * (left + 1 + right),), "int16"),
                             ("valid", (), "bool")],
                            {"num_channels": channels, "stacker_left_context": left,
                             "stacker_right_context": right, "stacker_step": step}),
              ["CUSTOM"], "streaming")

    # Overlap-add, the inverse of the framer: int16 (saturating) with frames overlapping by
    # half, float32 with no overlap (step == frame) and with a step of one sample.
    for name, shape, step, dtype, folder in (
            ("signal_overlap_add_s16", (2, 3, 8), 4, "int16", "ops"),
            ("signal_overlap_add_f32", (3, 6), 2, "float32", "streaming"),
            ("signal_overlap_add_f32_no_overlap", (2, 2, 5), 5, "float32", "streaming")):
        out = shape[:-2] + (shape[-2] * step,)
        _save(name, _single("SignalOverlapAdd", [("x", shape, dtype)], [("y", out, dtype)],
                            {"T": 7 if dtype == "int16" else 0, "frame_step": step}),
              ["CUSTOM"], folder)

# ---- int32 operators through the converter ---------------------------------------------------
def _convert(fn, specs) -> bytes:
    import tensorflow as tf

    function = tf.function(fn, input_signature=specs)
    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [function.get_concrete_function()], function)
    return converter.convert()


def int32_models() -> None:
    import tensorflow as tf

    def spec(shape, dtype=tf.int32):
        return tf.TensorSpec(shape, dtype)

    for name, fn, specs, op in (
            ("cast_s16_to_s32", lambda x: tf.cast(x, tf.int32), [spec([40], tf.int16)], "CAST"),
            ("cast_s32_to_s8", lambda x: tf.cast(x, tf.int8), [spec([40])], "CAST"),
            ("cast_u32_to_s32", lambda x: tf.cast(x, tf.int32), [spec([40], tf.uint32)],
             "CAST"),
            ("cast_s32_to_u32", lambda x: tf.cast(x, tf.uint32), [spec([40])], "CAST"),
            ("mul_s32_const", lambda x: x * 256, [spec([40])], "MUL"),
            ("add_s32_broadcast", lambda x, y: x + y, [spec([4, 10]), spec([10])], "ADD"),
            ("div_s32_const", lambda x: tf.truncatediv(x, -666), [spec([2, 20])], "DIV"),
            ("minimum_s32", lambda x, y: tf.minimum(x, y), [spec([40]), spec([40])],
             "MINIMUM"),
            ("maximum_s32_const", lambda x: tf.maximum(x, -128), [spec([40])], "MAXIMUM"),
            ("strided_slice_s32", lambda x: x[5:-16],
             [spec([257])], "STRIDED_SLICE"),
            ("strided_slice_s32_rank3", lambda x: x[1:, ::-2, 3], [spec([3, 9, 5])],
             "STRIDED_SLICE"),
            ("concatenation_s32",
             lambda x: tf.concat([tf.zeros([5], tf.int32), x, tf.ones([3], tf.int32)], 0),
             [spec([20])], "CONCATENATION")):
        _save(name, _convert(fn, specs), [op])


if __name__ == "__main__":
    signal_models()
    streaming_signal_models()
    int32_models()
