"""BROADCAST_TO, FILL, ZEROS_LIKE, REVERSE_V2, LOGICAL_AND/OR/NOT, REDUCE_ALL, GATHER_ND, CUMSUM,
DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP, BROADCAST_ARGS (the models of tests/models/generate/ops_tensor_builtins.py): the int8 models bit-exact with TFLM
on the host (the float32 ones are in the float sweep, tests/compiler/test_ops_float.py; both
sweeps also run on the Arm boards in QEMU), the other types TFLM's kernels take, and the
refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm_many

from microbuild.compiler import compile_model
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

# The models of tests/models/generate/ops_tensor_builtins.py hold several operators each.
SWEEP = sorted((MODELS / "ops").glob("tensor_builtins_*.tflite"))
FLOAT = sorted((MODELS / "float").glob("tensor_builtins_*.tflite")) + [
    MODELS / "float" / "zeros_like_open_batch.tflite"]
NEW_OPCODES = {"BROADCAST_TO", "FILL", "ZEROS_LIKE", "REVERSE_V2", "LOGICAL_AND", "LOGICAL_OR",
               "LOGICAL_NOT", "REDUCE_ALL", "GATHER_ND", "CUMSUM"}


def _opcodes(paths) -> set[str]:
    return {op.opcode for p in paths for op in read_model(p).operators}


def test_the_models_hold_every_new_operator():
    assert _opcodes(FLOAT) >= NEW_OPCODES
    # The int8 converter keeps ZEROS_LIKE in float (TFLM has no int8 one to convert to).
    assert _opcodes(SWEEP) >= NEW_OPCODES - {"ZEROS_LIKE"}


@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_int8_model_is_bit_exact_with_tflm(model, tmp_path):
    # Alternate the compilers: both compile the new kernels across the two models.
    cc = "clang" if SWEEP.index(model) % 2 else "gcc"
    assert_bit_exact(model, n=3, seed=29, cc=cc, tmp_path=tmp_path)


def _other_types_model(path: Path) -> list[list[np.ndarray]]:
    """One model with an int16, an int32 and a bool input, each broadcast, reversed and used as
    an int32 FILL of a scalar input and an int32 ZEROS_LIKE; returns seeded input sets for it."""
    b = ModelBuilder()
    s16 = b.tensor("s16", (3, 1, 4), "int16", scale=0.01, zero_point=0)
    s32 = b.tensor("s32", (1, 5), "int32")
    flag = b.tensor("flag", (2, 1), "bool")
    value = b.tensor("value", (), "int32")
    outputs = []

    def op(opcode, name, inputs, shape, dtype, **q):
        y = b.tensor(name, shape, dtype, **q)
        b.operator(opcode, inputs, [y])
        outputs.append(y)
        return y

    q16 = {"scale": 0.01, "zero_point": 0}
    op("BROADCAST_TO", "s16_bcast", [s16, b.constant("shape0", np.array([2, 3, 2, 4], np.int32))],
       (2, 3, 2, 4), "int16", **q16)
    op("BROADCAST_TO", "s32_bcast", [s32, b.constant("shape1", np.array([3, 5], np.int32))],
       (3, 5), "int32")
    op("BROADCAST_TO", "bool_bcast", [flag, b.constant("shape2", np.array([2, 3], np.int32))],
       (2, 3), "bool")
    op("REVERSE_V2", "s16_rev", [s16, b.constant("axes0", np.array([0], np.int32))], (3, 1, 4),
       "int16", **q16)
    op("REVERSE_V2", "s32_rev", [s32, b.constant("axes1", np.array([-1], np.int32))], (1, 5),
       "int32")
    op("REVERSE_V2", "bool_rev", [flag, b.constant("axes2", np.array([0], np.int32))], (2, 1),
       "bool")
    op("ZEROS_LIKE", "s32_zeros", [s32], (1, 5), "int32")
    # TFLM's FILL has no int16 or bool kernel; int8 and float32 come from the converter's models.
    op("FILL", "s32_fill", [b.constant("dims", np.array([2, 3], np.int32)), value], (2, 3),
       "int32")
    path.write_bytes(b.build([s16, s32, flag, value], outputs))
    rng = np.random.default_rng(31)
    return [[rng.integers(-32768, 32767, (3, 1, 4), dtype=np.int16),
             rng.integers(-2**31, 2**31 - 1, (1, 5), dtype=np.int32),
             rng.integers(0, 2, (2, 1)).astype(bool),
             np.array(rng.integers(-2**31, 2**31 - 1), np.int32)] for _ in range(3)]


def test_int16_int32_and_bool_are_bit_exact_with_tflm(tmp_path):
    path = tmp_path / "other_types.tflite"
    inputs = _other_types_model(path)
    want = run_tflm_many(path, inputs)
    got = run_on_host(path, inputs, cc="gcc", workdir=tmp_path)
    for want_set, got_set in zip(want, got):
        for k, (w, h) in enumerate(zip(want_set, got_set)):
            assert np.array_equal(np.asarray(w).reshape(h.shape), h), (k, w, h)


def _refusal(tmp_path, opcode, inputs, out_shape) -> str:
    b = ModelBuilder()
    x = b.tensor("x", (2, 3, 4), "float32")
    y = b.tensor("y", out_shape, "float32")
    b.operator(opcode, [x if i is None else b.constant(f"c{k}", i) for k, i in
                        enumerate(inputs)], [y])
    path = tmp_path / "refused.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_reverse_of_axes_that_are_not_consecutive_is_refused_as_tflm_does(tmp_path):
    message = _refusal(tmp_path, "REVERSE_V2", [None, np.array([0, 2], np.int32)], (2, 3, 4))
    assert "op 0 REVERSE_V2:" in message and "not consecutive" in message


def test_broadcast_to_a_shape_the_input_does_not_broadcast_to_is_refused(tmp_path):
    message = _refusal(tmp_path, "BROADCAST_TO", [None, np.array([2, 5, 4], np.int32)],
                       (2, 5, 4))
    assert "op 0 BROADCAST_TO:" in message and "does not broadcast to [2, 5, 4]" in message


def _runtime_gather_nd(path: Path) -> None:
    """int8 data [2, 3, 4] gathered by run-time int32 index rows of depth 2: [3, 2] -> [3, 4]."""
    b = ModelBuilder()
    x = b.tensor("x", (2, 3, 4), "int8", scale=0.05, zero_point=3)
    i = b.tensor("i", (3, 2), "int32")
    y = b.tensor("y", (3, 4), "int8", scale=0.05, zero_point=3)
    b.operator("GATHER_ND", [x, i], [y])
    path.write_bytes(b.build([x, i], [y]))


def test_runtime_gather_nd_indices_bit_exact_with_tflm_even_past_a_dimension(tmp_path):
    path = tmp_path / "gather_nd.tflite"
    _runtime_gather_nd(path)
    rng = np.random.default_rng(13)
    x = rng.integers(-128, 128, (2, 3, 4), dtype=np.int8)
    # [0, 4] is past dimension 1 (3) but its flat position (row 4 of 6) is inside the input:
    # TFLM checks only that, and reads row 4; so must microbuild.
    sets = [[x, rng.integers(0, [2, 3], (3, 2), dtype=np.int32)] for _ in range(3)]
    sets.append([x, np.array([[0, 4], [1, 2], [0, 0]], np.int32)])
    want = run_tflm_many(path, sets)
    got = run_on_host(path, sets, workdir=tmp_path)
    for w, h in zip(want, got):
        np.testing.assert_array_equal(np.asarray(w[0]).reshape(h[0].shape), h[0])
    assert np.array_equal(got[-1][0][0], x.reshape(6, 4)[4])
    # A row past the whole input fails the run in both (the test main exits with 2).
    bad = [[x, np.array([[0, 0], [1, 3], [0, 0]], np.int32)]]
    with pytest.raises(Exception, match="nvoc"):  # TFLM: "Interpreter invocation failed"
        run_tflm_many(path, bad)
    with pytest.raises(AssertionError, match="exited with 2"):
        run_on_host(path, bad, workdir=tmp_path)


def test_gather_nd_constant_row_outside_the_input_is_refused(tmp_path):
    message = _refusal(tmp_path, "GATHER_ND", [None, np.array([[1, 3]], np.int32)], (1, 4))
    assert "op 0 GATHER_ND:" in message and "index row [1, 3] is outside" in message


def _hand_built_model(path: Path) -> list[list[np.ndarray]]:
    """The operators no converter emits from tf ops alone, in one model: DYNAMIC_UPDATE_SLICE
    (float32 and int16 with run-time int32 starts, int8 with a constant int64 start TFLM
    clamps), EMBEDDING_LOOKUP (float32 and int8 tables, an int8 table
    dequantized into float32 rows, run-time ids) and BROADCAST_ARGS (of two
    constant shapes). Returns seeded input sets, starts in [-3, 6] so that clamping
    happens on both sides."""
    b = ModelBuilder()
    q16, q8 = {"scale": 0.01, "zero_point": 0}, {"scale": 0.05, "zero_point": -3}
    operand = b.tensor("operand", (4, 5), "float32")
    update = b.tensor("update", (2, 3), "float32")
    start = b.tensor("start", (2,), "int32")
    operand16 = b.tensor("operand16", (4, 5), "int16", **q16)
    update16 = b.tensor("update16", (3, 2), "int16", **q16)
    ids = b.tensor("ids", (3,), "int32")
    outputs = [b.tensor(n, s, d, **q) for n, s, d, q in (
        ("dus_f32", (4, 5), "float32", {}), ("dus_s16", (4, 5), "int16", q16),
        ("dus_s8_const", (4, 5), "int8", q8), ("emb_f32", (3, 4), "float32", {}),
        ("emb_s8", (3, 2, 3), "int8", q8), ("shape", (3,), "int32", {}),
        ("emb_hybrid", (3, 4), "float32", {}))]
    rng = np.random.default_rng(37)
    b.operator("DYNAMIC_UPDATE_SLICE", [operand, update, start], [outputs[0]])
    b.operator("DYNAMIC_UPDATE_SLICE", [operand16, update16, start], [outputs[1]])
    b.operator("DYNAMIC_UPDATE_SLICE", [
        b.constant("operand8", rng.integers(-128, 128, (4, 5), dtype=np.int8), **q8),
        b.constant("update8", rng.integers(-128, 128, (3, 3), dtype=np.int8), **q8),
        b.constant("start8", np.array([3, -1], np.int64))], [outputs[2]])
    b.operator("EMBEDDING_LOOKUP", [ids, b.constant("table_f32", rng.standard_normal(
        (5, 4)).astype(np.float32))], [outputs[3]])
    b.operator("EMBEDDING_LOOKUP", [ids, b.constant("table_s8", rng.integers(
        -128, 128, (5, 2, 3), dtype=np.int8), **q8)], [outputs[4]])
    b.operator("EMBEDDING_LOOKUP", [ids, b.constant("table_hybrid", rng.integers(
        -128, 128, (5, 4), dtype=np.int8), scale=0.0371, zero_point=0)], [outputs[6]])
    # (TFLM's BROADCAST_TO refuses a shape that is not a constant, so the shape is an output.)
    b.operator("BROADCAST_ARGS", [b.constant("s0", np.array([3, 1], np.int32)),
                                  b.constant("s1", np.array([2, 1, 4], np.int32))],
               [outputs[5]])
    path.write_bytes(b.build([operand, update, start, operand16, update16, ids], outputs))
    return [[rng.standard_normal((4, 5)).astype(np.float32),
             rng.standard_normal((2, 3)).astype(np.float32),
             rng.integers(-3, 7, 2, dtype=np.int32),
             rng.integers(-32768, 32768, (4, 5), dtype=np.int16),
             rng.integers(-32768, 32768, (3, 2), dtype=np.int16),
             rng.integers(0, 5, 3, dtype=np.int32)] for _ in range(4)]


def test_dynamic_update_slice_embedding_lookup_broadcast_args_bit_exact_with_tflm(tmp_path):
    path = tmp_path / "hand_built.tflite"
    inputs = _hand_built_model(path)
    compiled = compile_model(path)
    ops = [op["opcode"] for op in compiled.summary()["ops"]]
    # BROADCAST_ARGS of two constant shapes is evaluated while compiling; the rest run.
    assert "BROADCAST_ARGS" not in ops
    assert {"DYNAMIC_UPDATE_SLICE", "EMBEDDING_LOOKUP"} <= set(ops)
    want = run_tflm_many(path, inputs)
    got = run_on_host(path, inputs, cc="clang", workdir=tmp_path)
    for i, (want_set, got_set) in enumerate(zip(want, got)):
        for k, (w, h) in enumerate(zip(want_set, got_set)):
            w = np.asarray(w).reshape(h.shape)
            assert w.dtype == h.dtype and w.tobytes() == h.tobytes(), (i, k, w, h)


def test_broadcast_args_of_shapes_that_do_not_broadcast_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (2, 3), "float32")
    shape = b.tensor("shape", (2,), "int32")
    y = b.tensor("y", (2, 3), "float32")
    b.operator("BROADCAST_ARGS", [b.constant("a", np.array([2, 3], np.int32)),
                                  b.constant("b", np.array([4, 3], np.int32))], [shape])
    b.operator("BROADCAST_TO", [x, shape], [y])
    path = tmp_path / "refused.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError, match=r"op 0 BROADCAST_ARGS.*\[2, 3\] and \[4, 3\] do not "
                                         "broadcast"):
        compile_model(path)
