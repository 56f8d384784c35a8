"""SUB, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE, the comparisons, SELECT_V2, PRELU and LEAKY_RELU:
the sweep bit-exact with TFLM, bool tensors at the model's edges, int16 kernels the converter does
not reach, evaluation of constants at compile time, and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm_many

from microbuild.compiler import compile_model
from microbuild.compiler.folding import fold_constants
from microbuild.compiler.quant import activation_range_int8
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

PREFIXES = ("sub_", "minimum_", "maximum_", "squared_difference_", "less_", "greater_",
            "equal_", "not_equal_", "prelu_", "leaky_relu_")
SWEEP = sorted(p for p in (MODELS / "ops").glob("*.tflite") if p.stem.startswith(PREFIXES))


def test_the_binary_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "sub_same", "sub_bcast_channel", "sub_bcast_general", "sub_const_first", "sub_relu",
        "sub_relu6_bcast", "sub_s16", "sub_s16_relu_bcast",
        "minimum_same", "maximum_same", "maximum_bcast", "minimum_const_channel",
        "maximum_const_scalar", "minimum_s16", "maximum_s16_bcast",
        "minimum_s32", "maximum_s32_const",  # int32 at run time (ops_signal.py)
        "squared_difference_same", "squared_difference_bcast", "squared_difference_const",
        "squared_difference_s16", "squared_difference_s16_bcast",
        "less_select", "less_equal_select_bcast", "greater_select_const",
        "greater_equal_select_bcast", "equal_select", "not_equal_select",
        "prelu_per_element", "prelu_shared_hw", "prelu_shared_all", "prelu_dense", "prelu_s16",
        "leaky_relu_0p1", "leaky_relu_default", "leaky_relu_0p01_wide", "leaky_relu_1p7",
        "leaky_relu_s16"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_binary_ops_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=8, seed=23, cc=cc, tmp_path=tmp_path)


def test_sub_applies_its_fused_relu6():
    path = MODELS / "ops" / "sub_relu6_bcast.tflite"
    graph = read_model(path)
    (op,) = graph.operators
    assert op.opcode == "SUB" and op.options["fused_activation_function"] == "RELU6"
    out = graph.tensor(op.outputs[0])
    low, high = activation_range_int8("RELU6", out.scale, out.zero_point)
    assert low == out.zero_point  # the quantized 0.0 (the converter fits the output to [0, 6])
    source = compile_model(path).sources["model.c"]
    assert f".activation_min = {low}, .activation_max = {high}" in source


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


def _compare(path: Path, input_sets, tmp_path: Path) -> None:
    want = run_tflm_many(path, input_sets)
    got = run_on_host(path, input_sets, workdir=tmp_path)
    for i, (w_set, g_set) in enumerate(zip(want, got)):
        for w, g in zip(w_set, g_set):
            w = np.asarray(w).reshape(g.shape)
            assert w.dtype == g.dtype, (i, w.dtype, g.dtype)
            assert np.array_equal(w, g), f"input set {i}: {np.count_nonzero(w != g)} differ"


# ---- bool tensors at the edges -------------------------------------------------------------
def _less_to_output() -> bytes:
    """A comparison whose bool result is the model's output: (4, 1, 3) < (5, 1) broadcast."""
    b = ModelBuilder()
    x = b.tensor("x", (4, 1, 3), "int8", 0.02, -5)
    y = b.tensor("y", (5, 1), "int8", 0.031, 7)
    out = b.tensor("x_lt_y", (4, 5, 3), "bool")
    b.operator("LESS", [x, y], [out])
    return b.build([x, y], [out])


def test_a_bool_output_is_one_byte_per_element(tmp_path):
    path = _write(tmp_path, "less_out", _less_to_output())
    compiled = compile_model(path, prefix="net")
    header = compiled.sources["net.h"]
    assert "#define NET_OUTPUT0_BYTES 60" in header
    assert '#define NET_OUTPUT0_DTYPE "bool"' in header
    assert "#define NET_OUTPUT0_TYPE uint8_t" in header
    assert "(uint8_t *)(ws + " in compiled.sources["net.c"]  # the kernel writes bytes
    rng = np.random.default_rng(4)
    sets = [[rng.integers(-128, 128, (4, 1, 3), dtype=np.int8),
             rng.integers(-128, 128, (5, 1), dtype=np.int8)] for _ in range(6)]
    _compare(path, sets, tmp_path)


def test_comparisons_rescale_even_with_one_quantization(tmp_path):
    """TFLM rescales both inputs (value * 2^8 * scale) before comparing, also when they share a
    quantization: with a scale of 0.001 the raw values 0 and 1 both rescale to 0, so TFLM calls
    them EQUAL. A kernel comparing raw values would not."""
    b = ModelBuilder()
    x = b.tensor("x", (64,), "int8", 0.001, 0)
    y = b.tensor("y", (64,), "int8", 0.001, 0)
    out = b.tensor("eq", (64,), "bool")
    b.operator("EQUAL", [x, y], [out])
    path = _write(tmp_path, "equal_fine", b.build([x, y], [out]))
    first = np.arange(-32, 32, dtype=np.int8)
    sets = [[first, first + 1], [first, first - 2], [first, first]]
    tflm = run_tflm_many(path, sets)
    assert np.count_nonzero(tflm[0][0]) > 0  # some x == y + 1 compare equal in TFLM
    assert np.all(tflm[2][0])
    _compare(path, sets, tmp_path)


def _select_s16(cond_shape=(2, 1, 6)) -> bytes:
    """int16 SELECT_V2 on a bool model input broadcast against x (2, 3, 6) and y (6,)."""
    b = ModelBuilder()
    c = b.tensor("cond", cond_shape, "bool")
    x = b.tensor("x", (2, 3, 6), "int16", 0.001, 0)
    y = b.tensor("y", (6,), "int16", 0.001, 0)
    out = b.tensor("out", (2, 3, 6), "int16", 0.001, 0)
    b.operator("SELECT_V2", [c, x, y], [out])
    return b.build([c, x, y], [out])


def test_select_v2_int16_with_a_bool_input(tmp_path):
    path = _write(tmp_path, "select_s16", _select_s16())
    compiled = compile_model(path, prefix="net")
    assert '#define NET_INPUT0_DTYPE "bool"' in compiled.sources["net.h"]
    rng = np.random.default_rng(5)
    sets = [[rng.integers(0, 2, (2, 1, 6)).astype(bool),
             rng.integers(-32768, 32768, (2, 3, 6), dtype=np.int16),
             rng.integers(-32768, 32768, (6,), dtype=np.int16)] for _ in range(6)]
    _compare(path, sets, tmp_path)


def test_select_v2_with_a_constant_scalar_and_a_broadcast_condition(tmp_path):
    """where(x <= t, x, 0.25) with x (3, 4, 5), t (4, 1) a model input, 0.25 a constant scalar:
    condition and y both broadcast, x's buffer may become the output's."""
    b = ModelBuilder()
    x = b.tensor("x", (3, 4, 5), "int8", 0.02, -3)
    t = b.tensor("t", (4, 1), "int8", 0.013, 11)
    c = b.tensor("c", (3, 4, 5), "bool")
    q = b.constant("quarter", np.array(np.int8(10)), 0.02, -3)
    out = b.tensor("out", (3, 4, 5), "int8", 0.02, -3)
    b.operator("LESS_EQUAL", [x, t], [c])
    b.operator("SELECT_V2", [c, x, q], [out])
    path = _write(tmp_path, "select_scalar", b.build([x, t], [out]))
    assert_bit_exact(path, n=8, seed=9, tmp_path=tmp_path)
    assert_bit_exact(path, n=8, seed=9, cc="clang", tmp_path=tmp_path)


def _prelu_s16() -> bytes:
    """16x8 PRELU (TFLM has the kernel; the converter does not quantize PRELU to 16x8)."""
    rng = np.random.default_rng(6)
    b = ModelBuilder()
    x = b.tensor("x", (1, 4, 3, 5), "int16", 0.0004, 0)
    alpha = b.constant("alpha", rng.integers(-128, 128, (1, 1, 5), dtype=np.int8), 0.004, 3)
    out = b.tensor("out", (1, 4, 3, 5), "int16", 0.0003, 0)
    b.operator("PRELU", [x, alpha], [out])
    return b.build([x], [out])


def test_prelu_int16(tmp_path):
    path = _write(tmp_path, "prelu_s16", _prelu_s16())
    assert_bit_exact(path, n=6, seed=3, tmp_path=tmp_path)


def _leaky(alpha: float, in_scale=0.05, out_scale=0.03) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (3, 7), "int8", in_scale, 9)
    out = b.tensor("out", (3, 7), "int8", out_scale, -4)
    b.operator("LEAKY_RELU", [x], [out], "LeakyReluOptions", alpha=alpha)
    return b.build([x], [out])


def test_leaky_relu_negative_alpha(tmp_path):
    """tf.nn.leaky_relu takes any alpha; a negative one gives a negative Q31 multiplier."""
    path = _write(tmp_path, "leaky_neg", _leaky(-0.4))
    assert_bit_exact(path, n=6, seed=8, tmp_path=tmp_path)


# ---- compile-time evaluation ---------------------------------------------------------------
def _constant_chain() -> bytes:
    """Shape-style int32 arithmetic and int8 constants, all evaluated at compile time, feeding
    the only run-time op, an ADD:

        d = min(max((c1 - c2) squared_difference c3, c4), c5)         int32
        g = d > c6                                                   bool
        s = select_v2(g, p, q)                                       int8, same quantization
        e = p >= r                                                   int8 p, r quantized apart
        t = select_v2(e, s, q)
        y = x + t
    """
    b = ModelBuilder()
    i32 = lambda name, v: b.constant(name, np.array(v, np.int32))  # noqa: E731
    c1, c2, c3 = i32("c1", [9, -4, 7, 30]), i32("c2", [2]), i32("c3", [1, 1, -3, 20])
    c4, c5, c6 = i32("c4", [5]), i32("c5", [40, 40, 40, 40]), i32("c6", [30])
    sub = b.tensor("sub", (4,), "int32")
    sqd = b.tensor("sqd", (4,), "int32")
    mx = b.tensor("mx", (4,), "int32")
    mn = b.tensor("mn", (4,), "int32")
    g = b.tensor("g", (4,), "bool")
    b.operator("SUB", [c1, c2], [sub], "SubOptions")
    b.operator("SQUARED_DIFFERENCE", [sub, c3], [sqd])
    b.operator("MAXIMUM", [sqd, c4], [mx])
    b.operator("MINIMUM", [mx, c5], [mn])
    b.operator("GREATER", [mn, c6], [g])
    p = b.constant("p", np.array([[-100, 3, 50, 127]], np.int8), 0.05, 2)
    q = b.constant("q", np.array([[7, -7, 70, -70]], np.int8), 0.05, 2)
    r = b.constant("r", np.array([[-20, 10, 11, 64]], np.int8), 0.1, -3)
    s = b.tensor("s", (1, 4), "int8", 0.05, 2)
    e = b.tensor("e", (1, 4), "bool")
    t = b.tensor("t", (1, 4), "int8", 0.05, 2)
    b.operator("SELECT_V2", [g, p, q], [s])
    b.operator("GREATER_EQUAL", [p, r], [e])
    b.operator("SELECT_V2", [e, s, q], [t])
    x = b.tensor("x", (3, 4), "int8", 0.05, 2)
    y = b.tensor("y", (3, 4), "int8", 0.1, -1)
    b.operator("ADD", [x, t], [y], "AddOptions")
    return b.build([x], [y])


def test_constants_are_evaluated_at_compile_time(tmp_path):
    path = _write(tmp_path, "const_chain", _constant_chain())
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    note = next(n for n in compiled.summary()["notes"] if "evaluated at compile time" in n)
    for opcode in ("SUB", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM", "GREATER",
                   "GREATER_EQUAL", "SELECT_V2"):
        assert opcode in note, note
    # TFLM computes the whole chain at run time: the folded constant must equal its result.
    assert_bit_exact(path, n=4, seed=2, tmp_path=tmp_path)


def test_float_constants_are_evaluated_with_tflm_semantics(tmp_path):
    """float32 MINIMUM/MAXIMUM/SUB/SQUARED_DIFFERENCE, comparisons and SELECT_V2 of constants;
    TFLM's MaximumOp is ``a > b ? a : b``, so a NaN in the first operand loses."""
    b = ModelBuilder()
    f = lambda name, v: b.constant(name, np.array(v, np.float32))  # noqa: E731
    c1, c2 = f("c1", [1.5, -2.0, np.nan, 4.0]), f("c2", [0.5, 3.0, 1.0, 4.0])
    mx, mn = b.tensor("mx", (4,), "float32"), b.tensor("mn", (4,), "float32")
    sub, sqd = b.tensor("sub", (4,), "float32"), b.tensor("sqd", (4,), "float32")
    le, sel = b.tensor("le", (4,), "bool"), b.tensor("sel", (4,), "float32")
    b.operator("MAXIMUM", [c1, c2], [mx])
    b.operator("MINIMUM", [mx, c2], [mn])
    b.operator("SUB", [mx, c2], [sub], "SubOptions", fusedActivationFunction=1)  # RELU
    b.operator("SQUARED_DIFFERENCE", [sub, c1], [sqd])
    b.operator("LESS_EQUAL", [mn, c2], [le])
    b.operator("SELECT_V2", [le, sqd, c1], [sel])
    x = b.tensor("x", (4,), "int8", 0.1, 0)
    y = b.tensor("y", (4,), "int8", 0.1, 0)
    b.operator("RELU", [x], [y])
    path = _write(tmp_path, "float_consts", b.build([x], [y, sel]))
    graph = fold_constants(read_model(path))
    assert [op.opcode for op in graph.operators] == ["RELU"]
    by_name = {t.name: t.data for t in graph.tensors if t.data is not None}
    np.testing.assert_array_equal(by_name["mx"], [1.5, 3.0, 1.0, 4.0])
    np.testing.assert_array_equal(by_name["mn"], [0.5, 3.0, 1.0, 4.0])
    np.testing.assert_array_equal(by_name["sub"], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(by_name["le"], [True, True, True, True])
    np.testing.assert_array_equal(by_name["sel"][[0, 1, 3]], [0.25, 4.0, 16.0])
    assert np.isnan(by_name["sel"][2])


@pytest.mark.parametrize("activation", [0, 1, 3])  # NONE, RELU, RELU6
def test_int32_sub_of_constants_applies_the_fused_activation_as_tflm(activation, tmp_path):
    """TFLM's int32 SUB clamps its (wrapping) difference to the fused activation's range, unlike
    its int32 ADD; the same subtraction run by TFLM on a model input gives the folded value."""
    c1 = np.array([9, -4, 2, -(1 << 31), 5], np.int32)
    c2 = np.array([2, 3, -3, 1, -(1 << 31) + 2], np.int32)

    def model(first_is_input: bool) -> bytes:
        b = ModelBuilder()
        x = b.tensor("x", (5,), "int32") if first_is_input else b.constant("x", c1)
        y = b.constant("y", c2)
        d = b.tensor("d", (5,), "int32")
        b.operator("SUB", [x, y], [d], "SubOptions", fusedActivationFunction=activation)
        return b.build([x] if first_is_input else [], [d])

    reference = run_tflm_many(_write(tmp_path, "run", model(True)), [[c1]])[0][0]
    graph = fold_constants(read_model(_write(tmp_path, "folded", model(False))))
    assert not list(graph.operators)
    folded = next(t.data for t in graph.tensors if t.name == "d")
    np.testing.assert_array_equal(folded, reference)


# ---- refusals ------------------------------------------------------------------------------
def _refusal(tmp_path: Path, data: bytes) -> str:
    path = _write(tmp_path, "refused", data)
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def _binary(opcode: str, shapes, quants, out_shape, out_quant, out_dtype="int8",
            dtype="int8", options_type=None) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", shapes[0], dtype, *quants[0])
    y = b.tensor("y", shapes[1], dtype, *quants[1])
    out = b.tensor("out", out_shape, out_dtype, *out_quant)
    b.operator(opcode, [x, y], [out], options_type)
    return b.build([x, y], [out])


def test_maximum_of_differently_quantized_inputs_is_refused(tmp_path):
    text = _refusal(tmp_path, _binary("MAXIMUM", [(2, 3), (2, 3)], [(0.1, 0), (0.2, 0)],
                                      (2, 3), (0.1, 0)))
    assert "input 1 'y' is quantized with scale 0.2" in text
    assert "copies raw values without rescaling" in text


def test_select_v2_of_differently_quantized_values_is_refused(tmp_path):
    b = ModelBuilder()
    c = b.tensor("cond", (4,), "bool")
    x = b.tensor("x", (4,), "int8", 0.1, 0)
    y = b.tensor("y", (4,), "int8", 0.1, 5)
    out = b.tensor("out", (4,), "int8", 0.1, 0)
    b.operator("SELECT_V2", [c, x, y], [out])
    text = _refusal(tmp_path, b.build([c, x, y], [out]))
    assert "y 'y' is quantized with scale 0.1" in text and "zero point 5" in text


def test_comparison_with_a_scale_of_one_or_more_is_refused(tmp_path):
    text = _refusal(tmp_path, _binary("GREATER", [(4,), (4,)], [(1.5, 0), (0.5, 0)], (4,), (),
                                      out_dtype="bool"))
    assert "input 0 'x' has scale 1.5" in text and "below 1" in text


def test_comparison_broadcast_over_five_dimensions_is_refused(tmp_path):
    text = _refusal(tmp_path, _binary("LESS", [(2, 1, 2, 1, 3), (1, 2, 1, 2, 3)],
                                      [(0.1, 0), (0.1, 0)], (2, 2, 2, 2, 3), (),
                                      out_dtype="bool"))
    assert "broadcasts over 5 dimensions; TFLM's LESS broadcasts over at most 4" in text


def test_prelu_over_five_dimensions_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 2, 2, 3), "int8", 0.1, 0)
    alpha = b.constant("alpha", np.ones((3,), np.int8), 0.01, 0)
    out = b.tensor("out", (1, 2, 2, 2, 3), "int8", 0.1, 0)
    b.operator("PRELU", [x, alpha], [out])
    text = _refusal(tmp_path, b.build([x], [out]))
    assert "has 5 dimensions; TFLM's PRELU handles at most 4" in text


def test_int16_comparison_is_refused_with_its_dtype(tmp_path):
    text = _refusal(tmp_path, _binary("LESS", [(4,), (4,)], [(0.001, 0), (0.001, 0)], (4,), (),
                                      out_dtype="bool", dtype="int16"))
    assert "LESS (op 0): has int16 tensors at run time" in text


def test_sub_with_a_tiny_output_scale_is_refused(tmp_path):
    text = _refusal(tmp_path, _binary("SUB", [(4,), (4,)], [(1.0, 0), (0.5, 0)], (4,),
                                      (1e-7, 0), options_type="SubOptions"))
    assert "is too small against input scales 1.0, 0.5 (TFLM needs an output multiplier" in text


def test_comparison_of_run_time_bools_is_refused(tmp_path):
    text = _refusal(tmp_path, _binary("NOT_EQUAL", [(4,), (4,)], [(), ()], (4,), (),
                                      out_dtype="bool", dtype="bool"))
    assert "input 0 'x' is bool; only int8 is supported" in text


def test_int32_run_time_arithmetic_matches_tflm_activations_included(tmp_path):
    """int32 tensors at run time (the audio front end's feature scaling): ADD, SUB, MUL, DIV,
    MINIMUM, MAXIMUM with RELU6 fused where the op has options. TFLM's int32 SUB, MUL and DIV
    clamp to the activation; its int32 ADD ignores it."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 6), "int32")
    c = b.constant("c", np.array([3, -7, 11, 2, -5, 9], np.int32))
    outputs = []
    for opcode, options in (("ADD", "AddOptions"), ("SUB", "SubOptions"),
                            ("MUL", "MulOptions"), ("DIV", "DivOptions"),
                            ("MINIMUM", None), ("MAXIMUM", None)):
        y = b.tensor(f"{opcode.lower()}_out", (2, 6), "int32")
        kwargs = {"fusedActivationFunction": 3} if options else {}
        b.operator(opcode, [x, c], [y], options, **kwargs)
        outputs.append(y)
    path = tmp_path / "int32_ops.tflite"
    path.write_bytes(b.build([x], outputs))
    assert_bit_exact(path, n=6, seed=8, tmp_path=tmp_path)
