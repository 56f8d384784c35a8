"""The audio front end's operators: TFLM's signal-library custom operators (SignalWindow,
SignalFftAutoScale, SignalRfft, SignalEnergy, SignalFilterBank, SignalFilterBankSquareRoot,
SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog; the streaming SignalDelay,
SignalFramer, SignalStacker, SignalOverlapAdd) and the int32 run-time
operators it needs (CAST, STRIDED_SLICE, CONCATENATION, MUL, ADD, DIV, MINIMUM, MAXIMUM): the
sweep bit-exact with TFLM under gcc and clang, inputs that reach the paths full-range random ones
miss (quiet audio, the 32-bit square root, the int16 maximum that wraps), state kept between
invocations, folding on constants and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, random_inputs, run_on_host, run_tflm_many

from microbuild.compiler import compile_model
from microbuild.compiler.signal_library import kiss_factors, log_lut
from microbuild.errors import ModelError

MODELS = Path(__file__).resolve().parent.parent / "models"
# The stateful streaming operators run as their own sweep (test_streaming_ops_stream_like_tflm);
# the framers and stackers are outside ops/ (their frames are undefined when not valid).
STREAMING = sorted((MODELS / "ops").glob("signal_delay*.tflite")) + \
    sorted((MODELS / "ops").glob("signal_overlap_add*.tflite")) + \
    sorted((MODELS / "streaming").glob("signal_*.tflite"))
SIGNAL = sorted(set((MODELS / "ops").glob("signal_*.tflite")) - set(STREAMING))
INT32 = [MODELS / "ops" / f"{name}.tflite" for name in (
    "cast_s16_to_s32", "cast_s32_to_s8", "cast_u32_to_s32", "cast_s32_to_u32", "mul_s32_const",
    "add_s32_broadcast", "div_s32_const", "minimum_s32", "maximum_s32_const",
    "strided_slice_s32", "strided_slice_s32_rank3", "concatenation_s32")]
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_signal_sweep_is_there():
    assert {p.stem for p in SIGNAL} == {
        "signal_window_s16", "signal_window_saturating", "signal_fft_auto_scale",
        "signal_rfft_512", "signal_rfft_16", "signal_rfft_8", "signal_energy",
        "signal_filter_bank", "signal_filter_bank_square_root", "signal_spectral_subtraction",
        "signal_spectral_subtraction_clamping", "signal_pcan", "signal_filter_bank_log"}
    assert {p.stem for p in STREAMING} == {
        "signal_delay_3", "signal_delay_0", "signal_delay_longer_than_frame",
        "signal_framer_prefill", "signal_framer_fills_first", "signal_framer_step_over_frame",
        "signal_stacker", "signal_stacker_stride", "signal_overlap_add_s16",
        "signal_overlap_add_f32", "signal_overlap_add_f32_no_overlap"}
    assert all(p.is_file() for p in INT32)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SIGNAL + INT32, ids=lambda p: p.stem)
def test_bit_exact_with_tflm(model, cc, tmp_path):
    # Several invocations of one interpreter: the spectral subtraction's noise estimate carries
    # over from one to the next on both sides.
    assert_bit_exact(model, n=6, seed=23, cc=cc, tmp_path=tmp_path)


def assert_same(model: Path | bytes, sets, cc: str, tmp_path: Path) -> list:
    """The generated C equals TFLM on these input sets (one interpreter, in order)."""
    if isinstance(model, bytes):
        path = tmp_path / "model.tflite"
        path.write_bytes(model)
        model = path
    want = run_tflm_many(model, sets)
    got = run_on_host(model, sets, cc=cc, workdir=tmp_path)
    for i, (w, g) in enumerate(zip(want, got)):
        for k, (a, b) in enumerate(zip(w, g)):
            a = np.asarray(a).reshape(b.shape)
            assert a.dtype == b.dtype and np.array_equal(a, b), \
                f"{model.name} input set {i} output {k}: C {b.reshape(-1)[:8]} vs TFLM " \
                f"{a.reshape(-1)[:8]}"
    return got


def _audio(rng, n: int, amplitude: float) -> np.ndarray:
    t = np.arange(n)
    x = amplitude * np.sin(2 * np.pi * rng.uniform(0.002, 0.45) * t + rng.uniform(0, 6))
    x = x + rng.normal(0, amplitude / 8 + 0.3, n)
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_fft_auto_scale_shifts_quiet_audio_and_wraps_like_tflm(cc, tmp_path):
    rng = np.random.default_rng(4)
    sets = [[_audio(rng, 480, a)] for a in (0, 1, 2, 5, 40, 700, 5000, 16383, 16384)]
    # TFLM keeps its running maximum in an int16: -32768 wraps, and a later sample then
    # replaces it; the shift comes out of that wrapped maximum.
    for tail in (0, 1, -5, 300):
        x = _audio(rng, 480, 20)
        x[100] = -32768
        x[101:] = tail
        sets.append([x])
    got = assert_same(MODELS / "ops" / "signal_fft_auto_scale.tflite", sets, cc, tmp_path)
    shifts = {int(g[1]) for g in got}
    assert {0, 14} <= shifts and len(shifts) >= 6, shifts


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("n", [512, 16, 8])
def test_rfft_of_audio_at_every_level(n, cc, tmp_path):
    model = MODELS / "ops" / f"signal_rfft_{n}.tflite"
    shape = {512: (480,), 16: (3, 16), 8: (2, 5)}[n]
    rng = np.random.default_rng(n)
    sets = [[_audio(rng, int(np.prod(shape)), a).reshape(shape)]
            for a in (0, 3, 100, 4000, 30000, 32767)]
    sets.append([np.full(shape, -32768, np.int16)])  # every butterfly at its wrap-around
    assert_same(model, sets, cc, tmp_path)


def test_kiss_fft_factorisation_is_radix_4_then_2():
    assert kiss_factors(256) == [4, 64, 4, 16, 4, 4, 4, 1]
    assert kiss_factors(8) == [4, 2, 2, 1]
    assert kiss_factors(4) == [4, 1]


def test_log_table_is_the_rounded_log2_correction():
    lut = log_lut()
    assert len(lut) == 130 and lut[0] == 0 and lut[1] == 224 and lut[64] == 5568
    assert lut[128] == 0 and lut[129] == 0


def _square_root_model(runtime_scale: bool) -> bytes:
    b = ModelBuilder()
    x = b.tensor("channels", (16,), "uint64")
    scale = b.tensor("scale_bits", (), "int32") if runtime_scale else \
        b.constant("scale_bits", np.array(2, np.int32))
    y = b.tensor("roots", (16,), "uint32")
    b.operator("CUSTOM", [x, scale], [y], custom="SignalFilterBankSquareRoot", custom_options={})
    return b.build([x, scale] if runtime_scale else [x], [y])


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_square_root_32_and_64_bit_paths_and_run_time_shift(cc, tmp_path):
    rng = np.random.default_rng(9)
    sets = []
    for shift in range(16):
        values = np.concatenate([
            rng.integers(0, 1 << 32, 6, dtype=np.uint64),  # Sqrt32's shortcut
            np.array([0, 1, 2, 3, (1 << 32) - 1, 1 << 32, (1 << 64) - 1], np.uint64),
            rng.integers(1 << 32, 1 << 63, 3, dtype=np.uint64)])
        sets.append([values, np.array(shift, np.int32)])
    got = assert_same(_square_root_model(True), sets, cc, tmp_path)
    # sqrt(2^32 - 1) stays 65535 (Sqrt32 never rounds past 16 bits); sqrt(2^64 - 1) too.
    assert int(got[0][0][10]) == 65535 and int(got[0][0][12]) == (1 << 32) - 1


def _energy_model(start: int, end: int) -> bytes:
    b = ModelBuilder()
    x = b.tensor("spectrum", (66,), "int16")
    y = b.tensor("energy", (33,), "uint32")
    b.operator("CUSTOM", [x], [y], custom="SignalEnergy",
               custom_options={"end_index": end, "start_index": start})
    return b.build([x], [y])


def test_energy_of_a_band_matches_tflm_inside_it_and_is_zero_outside(tmp_path):
    path = tmp_path / "energy_band.tflite"
    path.write_bytes(_energy_model(3, 30))
    rng = np.random.default_rng(1)
    sets = [[rng.integers(-32768, 32768, 66).astype(np.int16)] for _ in range(4)]
    sets.append([np.full(66, -32768, np.int16)])  # 2^31: the largest energy
    want = run_tflm_many(path, sets)
    got = run_on_host(path, sets, workdir=tmp_path)
    for w, g in zip(want, got):
        assert np.array_equal(np.asarray(w[0])[3:30], g[0][3:30])
        assert not g[0][:3].any() and not g[0][30:].any()  # TFLM leaves these unwritten
    assert int(got[-1][0][5]) == 1 << 31


def test_spectral_subtraction_keeps_its_noise_estimate_in_the_state_buffer():
    compiled = compile_model(MODELS / "ops" / "signal_spectral_subtraction.tflite")
    assert compiled.state_bytes == 160
    [state] = compiled.state_tensors()
    assert state["name"].endswith("/noise_estimate_state") and state["fill"] == 0
    assert "void model_reset(void *state)" in compiled.sources["model.c"]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_spectral_subtraction_streams_like_tflm(cc, tmp_path):
    rng = np.random.default_rng(12)
    level = rng.integers(0, 1 << 20, 40, dtype=np.uint64)
    # A steady noise floor, then bursts: the estimate rises, then the signal drops below it.
    sets = [[(level + rng.integers(0, 1 << 12, 40)).astype(np.uint32)] for _ in range(12)]
    sets += [[(level * 50).astype(np.uint32)] for _ in range(3)]
    sets += [[(level // 4).astype(np.uint32)] for _ in range(3)]
    for name in ("signal_spectral_subtraction", "signal_spectral_subtraction_clamping"):
        assert_same(MODELS / "ops" / f"{name}.tflite", sets, cc, tmp_path / name)


@pytest.mark.parametrize("model", STREAMING, ids=lambda p: p.stem)
def test_streaming_ops_stream_like_tflm(model, tmp_path):
    """12 invocations of one interpreter: the delay line, the framer's held samples and the
    stacker's frames carry over. A framer or stacker leaves its frames as they were when its
    'valid' output is false (TFLM's then hold whatever its arena held), so those are compared
    only when TFLM says they are valid; the flag itself always."""
    sets = random_inputs(model, 12, seed=41)
    want = run_tflm_many(model, sets)
    got = run_on_host(model, sets, cc="gcc", workdir=tmp_path)
    flags = []
    for i, (w, g) in enumerate(zip(want, got)):
        valid = len(g) == 1 or bool(np.asarray(w[1]))
        flags.append(valid)
        for k, (a, b) in enumerate(zip(w, g)):
            if k == 0 and not valid:
                continue
            a = np.asarray(a).reshape(b.shape)
            assert a.dtype == b.dtype and np.array_equal(a, b), \
                f"{model.name} invocation {i} output {k}: C {b.reshape(-1)[:8]} vs TFLM " \
                f"{a.reshape(-1)[:8]}"
    # Each model's warm-up: how many stacks or framings are incomplete, as TFLM's own count.
    assert flags == {"signal_framer_fills_first": [False] + [True] * 11,
                     "signal_stacker": [False] + [True] * 11,
                     "signal_stacker_stride": [False, False, False] + [True, False] * 4 + [True]
                     }.get(model.stem, [True] * 12), flags


def test_streaming_ops_keep_their_state_in_the_state_buffer():
    """Every held sample is in the state buffer (zeroed by <prefix>_reset, TFLM's Reset)."""
    sizes = {}
    for name in ("signal_delay_3", "signal_delay_0", "signal_framer_fills_first",
                 "signal_framer_prefill", "signal_stacker_stride", "signal_overlap_add_f32"):
        [path] = [p for p in STREAMING if p.stem == name]
        compiled = compile_model(path)
        assert all(s["fill"] == 0 for s in compiled.state_tensors())
        sizes[name] = [s["bytes"] for s in compiled.state_tensors()]
    assert sizes["signal_delay_3"] == [2 * 2 * 3]  # 2 rows, 3 samples each
    assert sizes["signal_delay_0"] == [2]  # nothing held; one placeholder sample
    # frame 20, step 8: TFLM's 24-sample buffer less one step; then the held-sample count
    assert sorted(sizes["signal_framer_fills_first"]) == [2, 2 * 16]
    assert sorted(sizes["signal_framer_prefill"]) == [2, 2 * 2 * 8]  # 2 rows of 12 - 4
    assert sorted(sizes["signal_stacker_stride"]) == [2 * 2, 2 * 16]  # count and first-frame flag
    assert sizes["signal_overlap_add_f32"] == [4 * 6]  # one float frame being summed


# ---- compile-time evaluation -----------------------------------------------------------------
def _constant_int32_op(opcode: str, a: np.ndarray, b: np.ndarray | None = None,
                       **options) -> bytes:
    builder = ModelBuilder()
    x = builder.tensor("x", (4,), "int32")
    ca = builder.constant("a", a)
    inputs = [ca] if b is None else [ca, builder.constant("b", b)]
    folded = builder.tensor("folded", (4,), "int32")
    y = builder.tensor("y", (4,), "int32")
    if opcode == "STRIDED_SLICE":
        builder.operator(opcode, inputs, [folded], "StridedSliceOptions", **options)
    else:
        builder.operator(opcode, inputs, [folded])
    builder.operator("ADD", [x, folded], [y], "AddOptions")
    return builder.build([x], [y])


@pytest.mark.parametrize("opcode, a, b, expected", [
    ("MINIMUM", [1, -5, 7, 2], [3, -9, 7, 0], [1, -9, 7, 0]),
    ("MAXIMUM", [1, -5, 7, 2], [3, -9, 7, 0], [3, -5, 7, 2]),
    ("DIV", [7, -7, 100, -100], [2, 2, -3, 7], [3, -3, -33, -14]),
])
def test_int32_binary_ops_on_constants_fold(opcode, a, b, expected, tmp_path):
    path = tmp_path / "folded.tflite"
    path.write_bytes(_constant_int32_op(opcode, np.array(a, np.int32), np.array(b, np.int32)))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert compiled.graph.tensors[compiled.graph.operators[0].inputs[1]].data.tolist() == \
        expected
    assert_bit_exact(path, n=4, seed=1, tmp_path=tmp_path)


def test_strided_slice_of_a_constant_folds(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (3,), "int32")
    table = b.constant("table", np.arange(10, dtype=np.int32) * 3)
    begin = b.constant("begin", np.array([8], np.int32))
    end = b.constant("end", np.array([1], np.int32))
    strides = b.constant("strides", np.array([-3], np.int32))
    sliced = b.tensor("sliced", (3,), "int32")
    y = b.tensor("y", (3,), "int32")
    b.operator("STRIDED_SLICE", [table, begin, end, strides], [sliced], "StridedSliceOptions")
    b.operator("ADD", [x, sliced], [y], "AddOptions")
    path = tmp_path / "slice.tflite"
    path.write_bytes(b.build([x], [y]))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert compiled.graph.tensors[sliced].data.tolist() == [24, 15, 6]
    assert_bit_exact(path, n=4, seed=2, tmp_path=tmp_path)


# ---- refusals --------------------------------------------------------------------------------
def _refusal(data: bytes, tmp_path: Path) -> str:
    path = tmp_path / "refused.tflite"
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def _rfft(options: dict, length: int = 16, out: int | None = None) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (length,), "int16")
    y = b.tensor("y", (out or length + 2,), "int16")
    b.operator("CUSTOM", [x], [y], custom="SignalRfft", custom_options=options)
    return b.build([x], [y])


def test_refuses_rfft_it_does_not_have(tmp_path):
    assert "option T is 1: microbuild's SignalRfft is the int16 one" in _refusal(
        _rfft({"T": 1, "fft_length": 16}), tmp_path)
    assert "fft_length 12 is not a power of two" in _refusal(
        _rfft({"T": 7, "fft_length": 12}, length=12), tmp_path)
    assert "output frames have 16 values; fft_length 16 gives 9 complex bins (18 values)" in \
        _refusal(_rfft({"T": 7, "fft_length": 16}, out=16), tmp_path)


def test_refuses_options_tflm_would_read_at_other_positions(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (16,), "int16")
    w = b.constant("w", np.ones(16, np.int16))
    y = b.tensor("y", (16,), "int16")
    # An extra key sorts before 'shift': TFLM would read it as the shift.
    b.operator("CUSTOM", [x, w], [y], custom="SignalWindow",
               custom_options={"alpha": 3, "shift": 1})
    message = _refusal(b.build([x], [y]), tmp_path)
    assert "TFLM's kernel reads 'shift' at position 0 of the sorted keys" in message


def test_refuses_window_that_does_not_tile_the_input(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (10,), "int16")
    w = b.constant("w", np.ones(4, np.int16))
    y = b.tensor("y", (10,), "int16")
    b.operator("CUSTOM", [x, w], [y], custom="SignalWindow", custom_options={"shift": 40})
    message = _refusal(b.build([x], [y]), tmp_path)
    assert "the input's 10 samples are not whole frames of the window's 4" in message
    assert "shift 40 is outside 0..31" in message


def test_refuses_a_short_pcan_table_and_run_time_filter_bank_tables(tmp_path):
    b = ModelBuilder()
    x, noise = b.tensor("x", (4,), "uint32"), b.tensor("noise", (4,), "uint32")
    lut = b.constant("lut", np.ones(40, np.int16))
    y = b.tensor("y", (4,), "uint32")
    b.operator("CUSTOM", [x, noise, lut], [y], custom="SignalPCAN",
               custom_options={"snr_shift": 6})
    assert "the gain table has 40 entries; TFLM reads up to 125" in _refusal(
        b.build([x, noise], [y]), tmp_path)

    b = ModelBuilder()
    x = b.tensor("x", (8,), "uint32")
    weights = b.tensor("weights", (4,), "int16")
    tables = [b.constant(f"t{k}", np.zeros(3, np.int16)) for k in range(4)]
    y = b.tensor("y", (2,), "uint64")
    b.operator("CUSTOM", [x, weights] + tables, [y], custom="SignalFilterBank",
               custom_options={"num_channels": 2})
    assert "input 1 'weights' is computed at run time" in _refusal(
        b.build([x, weights], [y]), tmp_path)


def _streaming(custom: str, options: dict, x_shape: tuple, y_shape: tuple,
               valid: bool = True) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", x_shape, "int16")
    outs = [b.tensor("y", y_shape, "int16")] + ([b.tensor("valid", (), "bool")] if valid else [])
    b.operator("CUSTOM", [x], outs, custom=custom, custom_options=options)
    return b.build([x], outs)


def _streaming_overlap_add(step: int, out: tuple = (6,)) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (2, 8), "int16")
    y = b.tensor("y", out, "int16")
    b.operator("CUSTOM", [x], [y], custom="SignalOverlapAdd",
               custom_options={"T": 7, "frame_step": step})
    return b.build([x], [y])


def test_refuses_streaming_options_tflm_would_misrun(tmp_path):
    assert "op 0 SignalDelay: delay_length -1 is negative" in _refusal(
        _streaming("SignalDelay", {"delay_length": -1}, (8,), (8,), valid=False), tmp_path)
    framer = {"frame_size": 8, "frame_step": 3, "prefill": False}
    assert "needs its last dimension to be a positive multiple of frame_step 3" in _refusal(
        _streaming("SignalFramer", framer, (10,), (3, 8)), tmp_path)
    assert "3 frames of 8 per row make [3, 8]" in _refusal(
        _streaming("SignalFramer", framer, (9,), (3, 9)), tmp_path)
    assert "TFLM would prefill a negative number of zeros" in _refusal(
        _streaming("SignalFramer", dict(framer, frame_size=2, prefill=True), (9,), (3, 2)),
        tmp_path)
    stacker = {"num_channels": 4, "stacker_left_context": 1, "stacker_right_context": 0,
               "stacker_step": 3}
    assert "stacker_step 3 is outside 1..2" in _refusal(
        _streaming("SignalStacker", stacker, (4,), (8,)), tmp_path)
    assert "output 0 has 12 values; a stack of 2 frames of 4 has 8" in _refusal(
        _streaming("SignalStacker", dict(stacker, stacker_step=1), (4,), (12,)), tmp_path)
    assert "frame_step 9 is outside 1..8 (frame_size)" in _refusal(
        _streaming_overlap_add(9), tmp_path)
    assert "2 frames of 3 new samples per row make [6]" in _refusal(
        _streaming_overlap_add(3, out=(8,)), tmp_path)
    assert "expects 2 output(s), has 1" in _refusal(
        _streaming("SignalStacker", dict(stacker, stacker_step=1), (4,), (8,), valid=False),
        tmp_path)


def test_refuses_division_by_a_constant_zero(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4,), "int32")
    d = b.constant("d", np.array([1, 0, 2, 3], np.int32))
    y = b.tensor("y", (4,), "int32")
    b.operator("DIV", [x, d], [y], "DivOptions")
    assert "the constant divisor 'd' has a zero" in _refusal(b.build([x], [y]), tmp_path)


def test_a_float_cast_at_run_time_is_bit_exact(tmp_path):
    """The int32 arithmetic of an audio front end ending in a CAST to float32 (as TFLM's
    audio_preprocessor_float has them), which microbuild once refused."""
    b = ModelBuilder()
    x = b.tensor("x", (4,), "int32")
    doubled, squared = b.tensor("doubled", (4,), "int32"), b.tensor("squared", (4,), "int32")
    f = b.tensor("f", (4,), "float32")
    b.operator("ADD", [x, x], [doubled], "AddOptions")
    b.operator("MUL", [doubled, doubled], [squared], "MulOptions")
    b.operator("CAST", [squared], [f])
    # Values whose squares need more than float32's 24 bits of mantissa: the cast rounds.
    sets = [[np.array([0, -3, 4097, 23170], dtype=np.int32)],
            [np.array([12345, -12345, 1, 2], dtype=np.int32)]]
    got = assert_same(b.build([x], [f]), sets, "gcc", tmp_path)
    assert got[0][0].dtype == np.float32


def test_an_unknown_custom_operator_is_still_named(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4,), "int16")
    y = b.tensor("y", (4,), "int16")
    b.operator("CUSTOM", [x], [y], custom="SignalMystery", custom_options={})
    assert "custom operator 'SignalMystery' (op 0): TFLM has no kernel for it either" in \
        _refusal(b.build([x], [y]), tmp_path)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_strided_slice_of_int8_and_int16_with_masks(cc, tmp_path):
    """The same gather moves 1- and 2-byte values: begin_mask, end_mask, shrink_axis_mask and a
    negative stride on a 4-D tensor."""
    for dtype, scale in (("int8", 0.05), ("int16", 0.001)):
        b = ModelBuilder()
        x = b.tensor("x", (2, 5, 6, 3), dtype, scale, 0)
        begin = b.constant("begin", np.array([1, -1, 1, 0], np.int32))
        end = b.constant("end", np.array([2, 0, -1, 3], np.int32))
        strides = b.constant("strides", np.array([1, -2, 2, 1], np.int32))
        y = b.tensor("y", (3, 3, 3), dtype, scale, 0)
        # axis 0 shrinks to index 1; axis 1 runs 4, 2, 0 (end_mask); axis 2 starts at 0
        # (begin_mask) in steps of 2 up to 5.
        b.operator("STRIDED_SLICE", [x, begin, end, strides], [y], "StridedSliceOptions",
                   beginMask=0b0100, endMask=0b0010, shrinkAxisMask=0b0001)
        path = tmp_path / f"slice_{dtype}_{cc}.tflite"
        path.write_bytes(b.build([x], [y]))
        assert_bit_exact(path, n=3, seed=5, cc=cc, tmp_path=tmp_path)


def test_the_operator_table_lists_the_signal_operators_as_tflm_custom_kernels():
    from microbuild.compiler.op_table import operator_rows

    rows = {r.opcode: r for r in operator_rows()}
    for name in ("SignalWindow", "SignalRfft", "SignalFilterBankSpectralSubtraction",
                 "SignalDelay", "SignalFramer", "SignalStacker", "SignalOverlapAdd"):
        assert rows[name].status == "kernel" and rows[name].in_tflm, rows[name]
    assert rows["CAST"].status == "kernel" and rows["DIV"].status == "kernel"
    assert rows["SHAPE"].status == "compile time"


def _every_integer_cast_pair() -> tuple[bytes, int]:
    """A model casting each integer type TFLM's CAST takes (not uint8) to each other one."""
    types = ("int8", "int16", "int32", "uint32")
    b = ModelBuilder()
    inputs = {t: b.tensor(f"x_{t}", (2, 9), t) for t in types}
    outputs = []
    for src in types:
        for dst in types:
            if dst != src:
                y = b.tensor(f"{src}_to_{dst}", (2, 9), dst)
                b.operator("CAST", [inputs[src]], [y])
                outputs.append(y)
    return b.build(list(inputs.values()), outputs), len(outputs)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_every_integer_cast_pair_is_bit_exact(cc, tmp_path):
    """Each of the kernel's per-pair CAST loops (runtime/kernels/cast.c) against TFLM on
    full-range inputs: widening sign- or zero-extends, narrowing keeps the value modulo 2^bits,
    the same width copies the bits."""
    model, count = _every_integer_cast_pair()
    path = tmp_path / "casts.tflite"
    path.write_bytes(model)
    assert count == 12
    assert_bit_exact(path, n=4, seed=5, cc=cc, tmp_path=tmp_path)


def test_the_table_executor_finds_every_cast_kernel(tmp_path):
    """The table executor's thunks are written from the prototypes in cast.h (read as text), so
    each per-pair function must be declared there, not generated by a macro."""
    from microbuild.blob.kernel_set import KernelSet
    path = tmp_path / "casts.tflite"
    path.write_bytes(_every_integer_cast_pair()[0])
    source = KernelSet.for_models([compile_model(path)]).c_source()
    # 10 pairs of different widths, and int32 <-> uint32 both through mb_cast_same_width.
    assert source.count("/* mb_cast_") == 11 and "/* mb_cast_same_width */" in source
