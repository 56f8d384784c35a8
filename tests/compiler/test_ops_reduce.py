"""Reductions (SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN) and unary math (ABS, RSQRT,
LOG_SOFTMAX, L2_NORMALIZATION; EXP, LOG and NEG refused as TFLM has no quantized kernel): the
sweep bit-exact with TFLM, the table-based ops on every int8 input, ties, folding of constants,
and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm

from microbuild.compiler import compile_model
from microbuild.compiler.ops import REGISTRY
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

OPS = Path(__file__).resolve().parent.parent / "models" / "ops"
NAMES = {"sum_hw", "sum_last_keepdims", "sum_neg_axes", "sum_s16", "reduce_max_axis1",
         "reduce_max_keepdims_neg", "reduce_min_all", "reduce_min_keepdims", "argmax_last",
         "argmax_axis1", "argmin_last", "argmin_axis2", "abs", "abs_s16", "rsqrt",
         "log_softmax", "log_softmax_wide", "l2norm", "l2norm_rank4"}
SWEEP = sorted(OPS / f"{name}.tflite" for name in NAMES)
sys.path.insert(0, str(OPS.parent / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

ALL_INT8 = np.arange(-128, 128, dtype=np.int8)


def test_the_reduce_sweep_is_there():
    assert all(p.exists() for p in SWEEP), [p.name for p in SWEEP if not p.exists()]
    ops = {p.stem: [op.opcode for op in read_model(p).operators] for p in SWEEP}
    assert ops["sum_s16"] == ["SUM"] and ops["argmin_axis2"] == ["ARG_MIN"]
    assert ops["l2norm_rank4"] == ["L2_NORMALIZATION"] and ops["rsqrt"] == ["RSQRT"]


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_reduce_and_math_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=8, seed=21, cc=cc, tmp_path=tmp_path)


# ---- table-based operators: every int8 input ------------------------------------------------
@pytest.mark.parametrize("name", ["abs", "rsqrt"])
def test_sweep_tables_on_every_int8_input(name, tmp_path):
    path = OPS / f"{name}.tflite"
    x = ALL_INT8.reshape(1, 16, 16)
    want = run_tflm(path, [x])[0]
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got.reshape(-1), np.asarray(want).reshape(-1))


def _unary(opcode: str, dtype: str, n: int, in_q: tuple, out_q: tuple) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (n,), dtype, *in_q)
    y = b.tensor("y", (n,), dtype, *out_q)
    b.operator(opcode, [x], [y])
    return b.build([x], [y])


@pytest.mark.parametrize("in_q,out_q", [
    ((0.05, 0), (0.05, 0)),       # equal scales: no rescaling, only the offset
    ((0.05, -20), (0.05, -128)),
    ((0.0123, 37), (0.0071, -100)),
    ((0.2, -128), (0.9, 5)),
])
def test_abs_table_on_every_int8_input(in_q, out_q, tmp_path):
    path = tmp_path / "abs.tflite"
    path.write_bytes(_unary("ABS", "int8", 256, in_q, out_q))
    want = run_tflm(path, [ALL_INT8])[0]
    got = run_on_host(path, [[ALL_INT8]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("in_q,out_q", [
    ((0.0157, -128), (0.0124, -128)),
    ((0.5, -128), (0.003, -128)),
    ((0.001, -128), (0.25, 10)),
    ((0.02, -10), (0.05, -128)),   # zero point -10: TFLM fails on inputs below it
])
def test_rsqrt_table_on_every_valid_int8_input(in_q, out_q, tmp_path):
    """TFLM stops with an error on inputs below the zero point (negative reals), so those are
    the inputs it cannot be compared on; every other int8 value is."""
    path = tmp_path / "rsqrt.tflite"
    path.write_bytes(_unary("RSQRT", "int8", 256, in_q, out_q))
    x = np.clip(ALL_INT8, in_q[1], 127).astype(np.int8)
    want = run_tflm(path, [x])[0]
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)


def test_rsqrt_below_the_zero_point_gives_the_largest_output(tmp_path):
    path = tmp_path / "rsqrt.tflite"
    path.write_bytes(_unary("RSQRT", "int8", 4, (0.02, -10), (0.05, -128)))
    x = np.array([-128, -11, -10, -9], np.int8)
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    assert got[:3].tolist() == [127, 127, 127] and got[3] < 127


def test_abs_s16_on_the_whole_range_with_rescaling(tmp_path):
    path = tmp_path / "abs16.tflite"
    path.write_bytes(_unary("ABS", "int16", 65536, (0.001, 0), (0.0007, 0)))
    x = np.arange(-32768, 32768, dtype=np.int16)
    want = run_tflm(path, [x])[0]
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)
    assert got[0] == 32767  # |-32768| saturates


@pytest.mark.parametrize("in_scale,out_scale", [(1.2e-4, 9.6e-5), (3e-5, 0.002), (0.01, 4e-4)])
def test_rsqrt_s16_on_every_non_negative_input(in_scale, out_scale, tmp_path):
    path = tmp_path / "rsqrt16.tflite"
    path.write_bytes(_unary("RSQRT", "int16", 32768, (in_scale, 0), (out_scale, 0)))
    x = np.arange(0, 32768, dtype=np.int16)
    want = run_tflm(path, [x])[0]
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)


# ---- rows with structure random inputs rarely have -------------------------------------------
def _arg(opcode: str, shape, axis: int, out_dtype: str = "int32") -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", shape, "int8", 0.1, 3)
    ax = b.constant("axis", np.array([axis], np.int32))
    out_shape = [d for i, d in enumerate(shape) if i != axis % len(shape)]
    y = b.tensor("y", out_shape, out_dtype)
    options = "ArgMaxOptions" if opcode == "ARG_MAX" else "ArgMinOptions"
    b.operator(opcode, [x, ax], [y], options, outputType=2 if out_dtype == "int32" else 4)
    return b.build([x], [y])


@pytest.mark.parametrize("opcode", ["ARG_MAX", "ARG_MIN"])
def test_ties_go_to_the_first_index(opcode, tmp_path):
    path = tmp_path / "arg.tflite"
    path.write_bytes(_arg(opcode, (6, 9), 1))
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 2, (6, 9)).astype(np.int8)  # four values: many ties per row
    x[0] = 7  # all equal: index 0
    x[1] = [0, 5, 1, 5, -4, 5, -4, 0, 0]
    want = run_tflm(path, [x])[0]
    got = run_on_host(path, [[x]], workdir=tmp_path)[0][0]
    np.testing.assert_array_equal(got, want)
    assert got[0] == 0 and got[1] == (1 if opcode == "ARG_MAX" else 4)


def test_log_softmax_and_l2norm_on_flat_and_extreme_rows(tmp_path):
    for name in ("log_softmax_wide", "l2norm"):
        path = OPS / f"{name}.tflite"
        graph = read_model(path)
        x = np.zeros(graph.tensor(graph.inputs[0]).shape, np.int8)
        zero_point = graph.tensor(graph.inputs[0]).zero_point
        x[..., :] = zero_point  # all at the zero point: L2 sum 0, equal log-softmax
        y = x.copy()
        y[0, 0] = 127
        y[0, 1:] = -128
        y[-1, -1] = -128
        for inputs in (x, y):
            want = run_tflm(path, [inputs])[0]
            got = run_on_host(path, [[inputs]], workdir=tmp_path)[0][0]
            np.testing.assert_array_equal(got, np.asarray(want).reshape(got.shape))


# ---- compile-time evaluation ------------------------------------------------------------------
def _reduce_of_constant(opcode: str) -> bytes:
    b = ModelBuilder()
    table = b.constant("table", np.arange(-60, 60, dtype=np.int8).reshape(4, 5, 6), scale=0.05,
                       zero_point=2)
    axis = b.constant("axis", np.array([1, -1], np.int32))
    out_q = (0.05, 2) if opcode != "SUM" else (0.4, -7)
    t = b.tensor("t", (4,), "int8", *out_q)
    x = b.tensor("x", (4,), "int8", *out_q)
    y = b.tensor("y", (4,), "int8", 0.5, 0)
    b.operator(opcode, [table, axis], [t], "ReducerOptions", keepDims=False)
    b.operator("ADD", [x, t], [y], "AddOptions")
    return b.build([x], [y])


@pytest.mark.parametrize("opcode", ["SUM", "REDUCE_MAX", "REDUCE_MIN"])
def test_reduction_of_a_constant_is_evaluated_at_compile_time(opcode, tmp_path):
    path = tmp_path / "const.tflite"
    path.write_bytes(_reduce_of_constant(opcode))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert_bit_exact(path, n=4, seed=1, tmp_path=tmp_path)


def test_sum_fold_matches_the_kernel_arithmetic():
    graph = read_model(OPS / "sum_hw.tflite")
    op = graph.operators[0]
    x = graph.tensor(op.inputs[0])
    rng = np.random.default_rng(2)
    data = rng.integers(-128, 128, x.shape, dtype=np.int8)
    x.data = data
    folded = REGISTRY["SUM"].fold(op, graph)[0]
    want = run_tflm(OPS / "sum_hw.tflite", [data])[0]
    np.testing.assert_array_equal(folded, np.asarray(want).reshape(folded.shape))


@pytest.mark.parametrize("opcode", ["ARG_MAX", "ARG_MIN"])
def test_arg_of_a_constant_folds_to_the_first_extreme(opcode, tmp_path):
    path = tmp_path / "arg.tflite"
    path.write_bytes(_arg(opcode, (3, 5), -1))
    graph = read_model(path)
    op = graph.operators[0]
    data = np.array([[1, 4, 4, 0, 0], [2, 2, 2, 2, 2], [-5, 3, -5, 3, 1]], np.int8)
    graph.tensor(op.inputs[0]).data = data
    folded = REGISTRY[opcode].fold(op, graph)[0]
    want = [1, 0, 1] if opcode == "ARG_MAX" else [3, 0, 0]
    assert folded.dtype == np.int32 and folded.tolist() == want


def test_abs_and_neg_fold_on_constants():
    graph = read_model(OPS / "abs.tflite")
    op = graph.operators[0]
    x = graph.tensor(op.inputs[0])
    x.data = ALL_INT8.reshape(x.shape)
    folded = REGISTRY["ABS"].fold(op, graph)[0]
    want = run_tflm(OPS / "abs.tflite", [ALL_INT8.reshape(x.shape)])[0]
    np.testing.assert_array_equal(folded, np.asarray(want).reshape(folded.shape))
    b = ModelBuilder()
    c = b.constant("c", np.array([1.5, -0.0, -3.25], np.float32))
    y = b.tensor("y", (3,), "float32")
    b.operator("NEG", [c], [y])
    graph = read_model(b.build([], [y]))
    assert REGISTRY["NEG"].fold(graph.operators[0], graph)[0].tolist() == [-1.5, 0.0, 3.25]


# ---- refusals ---------------------------------------------------------------------------------
def _refusal(data: bytes, tmp_path) -> str:
    path = tmp_path / "refused.tflite"
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_int64_arg_max_output_is_refused_with_the_fix(tmp_path):
    message = _refusal(_arg("ARG_MAX", (4, 6), -1, out_dtype="int64"), tmp_path)
    assert "TFLM's ARG_MAX writes int32 indices only" in message
    assert "output_type=tf.int32" in message


def test_int16_reduce_max_is_refused_as_tflm_has_no_kernel(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4, 6), "int16", 0.001, 0)
    axis = b.constant("axis", np.array([1], np.int32))
    y = b.tensor("y", (4,), "int16", 0.001, 0)
    b.operator("REDUCE_MAX", [x, axis], [y], "ReducerOptions", keepDims=False)
    message = _refusal(b.build([x], [y]), tmp_path)
    assert "TFLM's REDUCE_MAX has no int16 kernel either" in message


def _reduce(opcode: str, axes, out_q=(0.05, 0), axis_constant=True, keep=False) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", (3, 4, 5, 2), "int8", 0.05, 0)
    if axis_constant:
        axis = b.constant("axis", np.array(axes, np.int32))
    else:
        axis = b.tensor("axis", (len(axes),), "int32")
    shape = [1 if i in axes else d for i, d in enumerate((3, 4, 5, 2)) if keep or i not in axes]
    y = b.tensor("y", shape, "int8", *out_q)
    b.operator(opcode, [x, axis], [y], "ReducerOptions", keepDims=keep)
    return b.build([x] + ([] if axis_constant else [axis]), [y])


def test_reduce_max_with_other_output_quantization_is_refused(tmp_path):
    message = _refusal(_reduce("REDUCE_MAX", [1], out_q=(0.06, 0)), tmp_path)
    assert "quantized differently; TFLM's int8 REDUCE_MAX requires them equal" in message


def test_sum_over_three_axes_is_refused(tmp_path):
    message = _refusal(_reduce("SUM", [1, 2, 3], out_q=(0.5, 0)), tmp_path)
    assert "TFLM's kernel handles at most 2" in message


def test_reduce_min_over_three_axes_compiles_and_matches(tmp_path):
    path = tmp_path / "min3.tflite"
    path.write_bytes(_reduce("REDUCE_MIN", [0, 1, 3], keep=True))
    assert_bit_exact(path, n=4, seed=3, tmp_path=tmp_path)


@pytest.mark.parametrize("opcode", ["REDUCE_MIN", "SUM"])
def test_run_time_axes_are_refused(opcode, tmp_path):
    message = _refusal(_reduce(opcode, [1], axis_constant=False), tmp_path)
    assert "its axis is computed at run time; microbuild needs constant axes" in message


def test_run_time_arg_max_axis_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4, 6), "int8", 0.1, 0)
    axis = b.tensor("axis", (1,), "int32")
    y = b.tensor("y", (4,), "int32")
    b.operator("ARG_MAX", [x, axis], [y], "ArgMaxOptions", outputType=2)
    message = _refusal(b.build([x, axis], [y]), tmp_path)
    assert "axis 'axis' must be a constant int32 tensor" in message


@pytest.mark.parametrize("opcode", ["EXP", "LOG", "NEG"])
def test_int8_exp_log_neg_are_refused_as_tflm_is_float_only(opcode, tmp_path):
    message = _refusal(_unary(opcode, "int8", 8, (0.05, 0), (0.05, -128)), tmp_path)
    assert f"TFLM's {opcode} kernel computes in float32 only; it has no kernel for int8" \
        in message


def test_log_softmax_needs_tflm_output_quantization(tmp_path):
    message = _refusal(_unary("LOG_SOFTMAX", "int8", 8, (0.05, 0), (0.05, 127)), tmp_path)
    assert "TFLM's int8 LOG_SOFTMAX requires scale 16/256, zero point 127" in message


def test_l2norm_needs_its_fixed_output_quantization(tmp_path):
    message = _refusal(_unary("L2_NORMALIZATION", "int8", 8, (0.05, 0), (0.01, 0)), tmp_path)
    assert "must be scale 1/128, zero point 0" in message


@pytest.mark.parametrize("opcode", ["LOG_SOFTMAX", "L2_NORMALIZATION"])
def test_int16_log_softmax_and_l2norm_are_refused(opcode, tmp_path):
    message = _refusal(_unary(opcode, "int16", 8, (0.001, 0), (0.001, 0)), tmp_path)
    assert f"TFLM's {opcode} has no int16 kernel either" in message


def test_requantizing_by_a_huge_ratio_is_refused(tmp_path):
    message = _refusal(_reduce("SUM", [1], out_q=(1e-12, 0)), tmp_path)
    assert "too large a ratio to requantize" in message
    message = _refusal(_unary("ABS", "int16", 8, (1.0, 0), (1e-12, 0)), tmp_path)
    assert "too large a ratio to requantize" in message
