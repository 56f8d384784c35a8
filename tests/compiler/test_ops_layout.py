"""The data-movement operators (STRIDED_SLICE, SLICE, SPLIT, SPLIT_V, SQUEEZE, EXPAND_DIMS, PACK,
UNPACK, GATHER): the sweep bit-exact with TFLM, the element types TFLM moves besides int8/int16,
evaluation on constants of any type (the Keras Reshape/Flatten idiom's shape chain included),
GATHER's run-time index check, and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, run_on_host, run_tflm_many

from microbuild.compiler import compile_model
from microbuild.compiler.prepare import prepare_graph
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
PREFIXES = ("strided_slice_", "slice_", "split_", "squeeze_", "expand_dims_", "pack_",
            "unpack_", "gather_")
SWEEP = sorted(p for p in (MODELS / "ops").glob("*.tflite") if p.stem.startswith(PREFIXES))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_layout_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "strided_slice_step2", "strided_slice_masks_neg", "strided_slice_shrink",
        "strided_slice_ellipsis", "strided_slice_newaxis", "strided_slice_s16",
        "strided_slice_s32", "strided_slice_s32_rank3",  # int32 at run time (ops_signal.py)
        "slice_rank4", "slice_s16",
        "split_equal3", "split_axis1_s16", "split_v_uneven", "split_v_s16",
        "squeeze_axis2", "squeeze_two_dims_s16", "expand_dims_axis2", "expand_dims_s16",
        "unpack_axis1", "unpack_s16", "pack_axis2_slices", "pack_unpack_s16",
        "pack_two_inputs_axis1",
        "gather_axis1", "gather_axis3_2d", "gather_axis_neg"}


def test_the_sweep_runs_the_operators_it_is_named_after():
    opcode = {"strided_slice": "STRIDED_SLICE", "slice": "SLICE", "split_v": "SPLIT_V",
              "split": "SPLIT", "squeeze": "SQUEEZE", "expand_dims": "EXPAND_DIMS",
              "pack": "PACK", "unpack": "UNPACK", "gather": "GATHER"}
    for model in SWEEP:
        name = max((k for k in opcode if model.stem.startswith(k + "_")), key=len)
        ops = [op["opcode"] for op in compile_model(model).summary()["ops"]]
        assert opcode[name] in ops, (model.stem, ops)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_layout_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=6, seed=23, cc=cc, tmp_path=tmp_path)


def _random_strided_slices(seed: int, count: int, shape=(3, 5, 4, 6)):
    """``count`` random STRIDED_SLICE configurations of one input (begin/end anywhere in
    [-7, 7], strides +-1..3, random begin/end masks, some axes shrunk), each with the numpy
    slice that means the same."""
    rng = np.random.default_rng(seed)
    configs = []
    while len(configs) < count:
        begin, end, strides, slices = [], [], [], []
        masks = {"beginMask": 0, "endMask": 0, "shrinkAxisMask": 0}
        for axis, size in enumerate(shape):
            if rng.random() < 0.2:
                index = int(rng.integers(-size, size))
                begin.append(index), end.append(index + 1), strides.append(1)
                masks["shrinkAxisMask"] |= 1 << axis
                slices.append(index)
                continue
            b, e = (int(v) for v in rng.integers(-7, 8, 2))
            st = int(rng.choice([-3, -2, -1, 1, 2, 3]))
            begin.append(b), end.append(e), strides.append(st)
            if rng.random() < 0.3:
                masks["beginMask"] |= 1 << axis
                b = None
            if rng.random() < 0.3:
                masks["endMask"] |= 1 << axis
                e = None
            slices.append(slice(b, e, st))
        probe = np.zeros(shape)[tuple(slices)]
        if probe.size == 0:
            continue
        configs.append((begin, end, strides, masks, tuple(slices), probe.shape))
    return configs


def test_random_strided_slices_match_numpy_and_tflm(tmp_path):
    """16 random slices of one input in one model: TFLM gives numpy's x[...] for each, and the
    generated C gives TFLM's."""
    shape = (3, 5, 4, 6)
    configs = _random_strided_slices(7, 16, shape)
    b = ModelBuilder()
    x = b.tensor("x", shape, "int8", 0.1, 0)
    ys = []
    for k, (begin, end, strides, masks, _, out_shape) in enumerate(configs):
        ys.append(b.tensor(f"y{k}", out_shape, "int8", 0.1, 0))
        b.operator("STRIDED_SLICE", [x, b.constant(f"b{k}", np.array(begin, np.int32)),
                                     b.constant(f"e{k}", np.array(end, np.int32)),
                                     b.constant(f"s{k}", np.array(strides, np.int32))],
                   [ys[-1]], "StridedSliceOptions", **masks)
    path = tmp_path / "random_slices.tflite"
    path.write_bytes(b.build([x], ys))
    value = np.arange(np.prod(shape)).astype(np.int8).reshape(shape)
    (reference,) = run_tflm_many(path, [[value]])
    for (*_, slices, out_shape), got in zip(configs, reference):
        np.testing.assert_array_equal(np.asarray(got).reshape(out_shape), value[slices])
    assert_bit_exact(path, n=3, seed=4, tmp_path=tmp_path)


@pytest.mark.parametrize("model", ["squeeze_axis2", "expand_dims_s16"])
def test_squeeze_and_expand_dims_share_their_input_buffer(model):
    compiled = compile_model(MODELS / "ops" / f"{model}.tflite")
    assert compiled.plan.aliases, "the output should be the input's bytes"
    assert "shares its input's buffer" in compiled.sources["model.c"]
    assert compiled.kernel_sources == []


# ---- element types other than int8/int16, at run time -------------------------------------
def _single(opcode, x_shape, dtype, consts, y_shapes, options_type=None, quantized=False,
            **options) -> bytes:
    """x -> opcode(x, *consts) -> outputs; ``consts`` are arrays placed after x."""
    b = ModelBuilder()
    q = (0.05, 3) if quantized else (None, None)
    x = b.tensor("x", x_shape, dtype, *q)
    ins = [x] + [b.constant(f"c{k}", c) for k, c in enumerate(consts)]
    ys = [b.tensor(f"y{k}", s, dtype, *q) for k, s in enumerate(y_shapes)]
    b.operator(opcode, ins, ys, options_type, **options)
    return b.build([x], ys)


def _i32(*values):
    return np.array(values, np.int32)


TYPED = {
    "strided_slice_int32": lambda: _single(
        "STRIDED_SLICE", (3, 8), "int32", [_i32(0, 7), _i32(3, 0), _i32(1, -3)], [(3, 3)],
        "StridedSliceOptions"),
    "strided_slice_bool": lambda: _single(
        "STRIDED_SLICE", (4, 5), "bool", [_i32(3, 1), _i32(0, 5), _i32(-2, 2)], [(2, 2)],
        "StridedSliceOptions"),
    "slice_int32": lambda: _single(
        "SLICE", (2, 3, 6), "int32", [_i32(1, 0, 2), _i32(1, -1, 3)], [(1, 3, 3)],
        "SliceOptions"),
    "unpack_int32": lambda: _single("UNPACK", (2, 3), "int32", [], [(2,)] * 3,
                                    "UnpackOptions", num=3, axis=1),
    "split_int32": lambda: _split_first(),
    "pack_int64": lambda: _pack_int64(),
}


def _split_first() -> bytes:
    b = ModelBuilder()
    axis = b.constant("axis", np.array(0, np.int32))
    x = b.tensor("x", (4, 3), "int32")
    ys = [b.tensor(f"y{k}", (2, 3), "int32") for k in range(2)]
    b.operator("SPLIT", [axis, x], ys, "SplitOptions", numSplits=2)
    return b.build([x], ys)


def _pack_int64() -> bytes:
    b = ModelBuilder()
    xs = [b.tensor(f"x{k}", (2, 3), "int64") for k in range(3)]
    y = b.tensor("y", (2, 3, 3), "int64")
    b.operator("PACK", xs, [y], "PackOptions", valuesCount=3, axis=-1)
    return b.build(xs, [y])


@pytest.mark.parametrize("name", TYPED)
def test_other_element_types_bit_exact_with_tflm(name, tmp_path):
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(TYPED[name]())
    assert_bit_exact(path, n=4, seed=5, tmp_path=tmp_path)


# ---- compile-time evaluation --------------------------------------------------------------
def _flatten_chain() -> bytes:
    """The Keras Flatten of an open batch, as the converter emits it: SHAPE -> STRIDED_SLICE
    (the batch) -> PACK([batch, -1]) -> RESHAPE, then FULLY_CONNECTED."""
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    x = b.tensor("x", (1, 3, 4, 2), "int8", 0.05, -3, signature=(-1, 3, 4, 2))
    shape = b.tensor("shape", (4,), "int32")
    batch = b.tensor("batch", (), "int32")
    packed = b.tensor("packed", (2,), "int32")
    flat = b.tensor("flat", (1, 24), "int8", 0.05, -3, signature=(-1, 24))
    w = b.constant("w", rng.integers(-127, 128, (5, 24), dtype=np.int8), scale=0.01)
    y = b.tensor("y", (1, 5), "int8", 0.1, 2, signature=(-1, 5))
    b.operator("SHAPE", [x], [shape], "ShapeOptions", outType=2)
    b.operator("STRIDED_SLICE", [shape, b.constant("b", _i32(0)), b.constant("e", _i32(1)),
                                 b.constant("s", _i32(1))], [batch], "StridedSliceOptions",
               shrinkAxisMask=1)
    b.operator("PACK", [batch, b.constant("minus1", np.array(-1, np.int32))], [packed],
               "PackOptions", valuesCount=2, axis=0)
    b.operator("RESHAPE", [x, packed], [flat])
    b.operator("FULLY_CONNECTED", [flat, w, -1], [y], "FullyConnectedOptions")
    return b.build([x], [y])


def test_keras_flatten_shape_chain_is_evaluated(tmp_path):
    path = tmp_path / "flatten.tflite"
    path.write_bytes(_flatten_chain())
    graph = prepare_graph(read_model(path))
    assert [op.opcode for op in graph.operators] == ["RESHAPE", "FULLY_CONNECTED"]
    reshape = graph.operators[0]
    # The shape operand is the chain's value, computed at compile time: [batch, -1].
    assert graph.tensors[reshape.inputs[1]].data.tolist() == [1, -1]
    assert any("3 operator(s) evaluated at compile time (PACK, SHAPE, STRIDED_SLICE)" in n
               for n in graph.notes)
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["RESHAPE", "FULLY_CONNECTED"]
    assert "mb_strided_copy" not in compiled.sources["model.c"]
    assert_bit_exact(path, n=4, seed=8, tmp_path=tmp_path)


def test_converted_keras_flatten_runs_only_its_real_operators():
    compiled = compile_model(MODELS / "keras_cnn_flatten.tflite")
    opcodes = [op["opcode"] for op in compiled.summary()["ops"]]
    assert not {"SHAPE", "STRIDED_SLICE", "PACK"} & set(opcodes)
    assert any("evaluated at compile time (PACK, SHAPE, STRIDED_SLICE)" in n
               for n in compiled.summary()["notes"])


def _fold_graph(ops: list[tuple], consts: dict[str, np.ndarray], outputs: dict[str, tuple]):
    """A graph whose operators read only constants; returns the prepared graph and the output
    tensor indices by name. ``ops``: (opcode, input names, output names, options type,
    options)."""
    b = ModelBuilder()
    index = {name: b.constant(name, value) for name, value in consts.items()}
    for name, (shape, dtype) in outputs.items():
        index[name] = b.tensor(name, shape, dtype)
    for opcode, ins, outs, options_type, options in ops:
        b.operator(opcode, [index[n] for n in ins], [index[n] for n in outs], options_type,
                   **options)
    # A run-time input and an operator that uses it, so the model is a model.
    x = b.tensor("x", (1, 2), "int8", 0.1, 0)
    y = b.tensor("y", (1, 2), "int8", 0.1, 0)
    b.operator("ADD", [x, x], [y], "AddOptions")
    finals = [index[n] for n in outputs if not any(n in ins for _, ins, _, _, _ in ops)]
    graph = prepare_graph(read_model(b.build([x], [y] + finals)))
    return graph, {n: index[n] for n in outputs}


def test_every_layout_operator_folds_on_constants_of_any_type():
    table16 = np.arange(-60, 60, dtype=np.int16).reshape(4, 5, 6) * 97
    f32 = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    i64 = np.arange(10, dtype=np.int64) * (1 << 40)
    mask = np.array([[True, False, True], [False, False, True]])
    consts = {
        "t16": table16, "f32": f32, "i64": i64, "mask": mask,
        "ss_b": _i32(1, 4, 5), "ss_e": _i32(3, 0, 0), "ss_s": _i32(1, -2, -3),
        "sl_b": _i32(0, 1, 1), "sl_s": _i32(2, -1, 2),
        "gi": np.array([[2, 0], [1, 1]], np.int64), "axis2": np.array(2, np.int32),
        "axis0": np.array([0], np.int32), "sizes": _i32(1, -1),
        "g16": _i32(3, 0, 3),
    }
    ops = [
        ("STRIDED_SLICE", ["t16", "ss_b", "ss_e", "ss_s"], ["ss"], "StridedSliceOptions",
         {"endMask": 6}),
        ("SLICE", ["f32", "sl_b", "sl_s"], ["sl"], "SliceOptions", {}),
        ("GATHER", ["f32", "gi"], ["ga"], "GatherOptions", {"axis": 2}),
        ("GATHER", ["t16", "g16"], ["ga16"], "GatherOptions", {"axis": 0}),
        ("SPLIT", ["axis2", "f32"], ["sp0", "sp1"], "SplitOptions", {"numSplits": 2}),
        ("SPLIT_V", ["i64", "sizes", "axis0"], ["sv0", "sv1"], "SplitVOptions",
         {"numSplits": 2}),
        ("UNPACK", ["mask"], ["up0", "up1"], "UnpackOptions", {"num": 2, "axis": 0}),
        ("PACK", ["mask", "mask"], ["pk"], "PackOptions", {"valuesCount": 2, "axis": 1}),
        ("EXPAND_DIMS", ["i64", "axis0"], ["ed"], "ExpandDimsOptions", {}),
        ("SQUEEZE", ["ed"], ["sq"], "SqueezeOptions", {"squeezeDims": [0]}),
    ]
    outputs = {"ss": ((2, 3, 2), "int16"), "sl": ((2, 2, 2), "float32"),
               "ga": ((2, 3, 2, 2), "float32"), "ga16": ((3, 5, 6), "int16"),
               "sp0": ((2, 3, 2), "float32"), "sp1": ((2, 3, 2), "float32"),
               "sv0": ((1,), "int64"), "sv1": ((9,), "int64"),
               "up0": ((3,), "bool"), "up1": ((3,), "bool"), "pk": ((2, 2, 3), "bool"),
               "ed": ((1, 10), "int64"), "sq": ((10,), "int64")}
    graph, t = _fold_graph(ops, consts, outputs)
    assert [op.opcode for op in graph.operators] == ["ADD"]
    value = {name: graph.tensors[i].data for name, i in t.items()}
    np.testing.assert_array_equal(value["ss"], table16[1:3, 4::-2, 5::-3])
    np.testing.assert_array_equal(value["sl"], f32[0:2, 1:, 1:3])
    np.testing.assert_array_equal(value["ga"], np.take(f32, [[2, 0], [1, 1]], axis=2))
    np.testing.assert_array_equal(value["ga16"], table16[[3, 0, 3]])
    np.testing.assert_array_equal(value["sp0"], f32[:, :, :2])
    np.testing.assert_array_equal(value["sp1"], f32[:, :, 2:])
    np.testing.assert_array_equal(value["sv0"], i64[:1])
    np.testing.assert_array_equal(value["sv1"], i64[1:])
    np.testing.assert_array_equal(value["up0"], mask[0])
    np.testing.assert_array_equal(value["pk"], np.stack([mask, mask], axis=1))
    np.testing.assert_array_equal(value["sq"], i64)
    assert value["ss"].dtype == np.int16 and value["ga"].dtype == np.float32


def test_slice_of_a_constant_table_feeding_the_device_is_folded(tmp_path):
    """STRIDED_SLICE + GATHER of a constant int8 table, added to the input: only ADD runs."""
    b = ModelBuilder()
    table = b.constant("table", np.arange(-40, 40, dtype=np.int8).reshape(8, 10), scale=0.1)
    sliced = b.tensor("sliced", (4, 10), "int8", 0.1, 0)
    rows = b.tensor("rows", (2, 10), "int8", 0.1, 0)
    b.operator("STRIDED_SLICE", [table, b.constant("b", _i32(7, 0)),
                                 b.constant("e", _i32(0, 10)), b.constant("s", _i32(-2, 1))],
               [sliced], "StridedSliceOptions")
    b.operator("GATHER", [sliced, b.constant("i", _i32(3, 1))], [rows], "GatherOptions")
    x = b.tensor("x", (2, 10), "int8", 0.1, 0)
    y = b.tensor("y", (2, 10), "int8", 0.2, 0)
    b.operator("ADD", [x, rows], [y], "AddOptions")
    path = tmp_path / "table.tflite"
    path.write_bytes(b.build([x], [y]))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert_bit_exact(path, n=4, seed=1, tmp_path=tmp_path)


# ---- GATHER with run-time indices ---------------------------------------------------------
RUNTIME_GATHER = MODELS / "indices" / "gather_runtime_indices.tflite"


def test_runtime_gather_indices_bit_exact_with_tflm(tmp_path):
    rng = np.random.default_rng(11)
    sets = [[rng.integers(-128, 128, (1, 6, 5), dtype=np.int8),
             rng.integers(0, 6, (1, 3), dtype=np.int32)] for _ in range(8)]
    sets.append([sets[0][0], np.array([[5, 0, 5]], np.int32)])
    expected = run_tflm_many(RUNTIME_GATHER, sets)
    got = run_on_host(RUNTIME_GATHER, sets, workdir=tmp_path)
    for want, have in zip(expected, got):
        np.testing.assert_array_equal(np.asarray(want[0]).reshape(have[0].shape), have[0])


@pytest.mark.parametrize("bad", [6, -1, 1 << 30])
def test_runtime_gather_index_out_of_range_fails_the_run_like_tflm(bad, tmp_path):
    x = np.zeros((1, 6, 5), np.int8)
    indices = np.array([[0, bad, 1]], np.int32)
    with pytest.raises(Exception, match="nvoc"):  # TFLM: "Interpreter invocation failed"
        run_tflm_many(RUNTIME_GATHER, [[x, indices]])
    compiled = compile_model(RUNTIME_GATHER)
    assert "return MB_GATHER_INDEX_ERROR;" in compiled.sources["model.c"]
    # The test main exits with 2 when <prefix>_run returns non-zero.
    with pytest.raises(AssertionError, match="exited with 2"):
        run_on_host(RUNTIME_GATHER, [[x, indices]], workdir=tmp_path)


@pytest.mark.parametrize("axis, batch_dims, indices, out_shape", [
    (2, 1, [[3, 0, 3], [1, 2, 0]], (2, 3, 3, 5)),
    (-1, -1, [[4, 0], [2, 2]], (2, 3, 4, 2)),
    (1, 0, [[[2]], [[0]]], (2, 2, 1, 1, 4, 5)),
], ids=["batch1_axis2", "negative_batch_and_axis", "3d_indices"])
def test_gather_batch_dims_and_axes_bit_exact(axis, batch_dims, indices, out_shape, tmp_path):
    data = _single("GATHER", (2, 3, 4, 5), "int8", [np.array(indices, np.int32)], [out_shape],
                   "GatherOptions", quantized=True, axis=axis, batchDims=batch_dims)
    path = tmp_path / "gather.tflite"
    path.write_bytes(data)
    assert_bit_exact(path, n=3, seed=9, tmp_path=tmp_path)


def test_embedding_lookup_constant_table_runtime_indices(tmp_path):
    """GATHER from a constant int8 table by run-time int32 indices (an embedding layer)."""
    rng = np.random.default_rng(6)
    b = ModelBuilder()
    table = b.constant("table", rng.integers(-128, 128, (10, 4), dtype=np.int8), scale=0.02,
                       zero_point=-5)
    i = b.tensor("i", (1, 3), "int32")
    y = b.tensor("y", (1, 3, 4), "int8", 0.02, -5)
    b.operator("GATHER", [table, i], [y], "GatherOptions", axis=0)
    path = tmp_path / "embedding.tflite"
    path.write_bytes(b.build([i], [y]))
    sets = [[rng.integers(0, 10, (1, 3), dtype=np.int32)] for _ in range(6)]
    expected = run_tflm_many(path, sets)
    got = run_on_host(path, sets, workdir=tmp_path)
    for want, have in zip(expected, got):
        np.testing.assert_array_equal(np.asarray(want[0]).reshape(have[0].shape), have[0])


# ---- refusals -----------------------------------------------------------------------------
def _refusal(data: bytes, tmp_path) -> str:
    path = tmp_path / "refused.tflite"
    path.write_bytes(data)
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def _strided(x_shape, begin, end, strides, y_shape, runtime_begin=False, **options) -> bytes:
    b = ModelBuilder()
    x = b.tensor("x", x_shape, "int8", 0.1, 0)
    inputs = [x]
    if runtime_begin:
        begin_t = b.tensor("begin", (len(begin),), "int32")
        inputs.append(begin_t)
    else:
        begin_t = b.constant("b", np.array(begin, np.int32))
    y = b.tensor("y", y_shape, "int8", 0.1, 0)
    b.operator("STRIDED_SLICE", [x, begin_t, b.constant("e", np.array(end, np.int32)),
                                 b.constant("s", np.array(strides, np.int32))], [y],
               "StridedSliceOptions", **options)
    return b.build(inputs, [y])


def test_strided_slice_with_runtime_begin_is_refused(tmp_path):
    message = _refusal(_strided((4, 6), [0, 1], [4, 5], [1, 1], (4, 4), runtime_begin=True),
                       tmp_path)
    assert "STRIDED_SLICE: begin is not constant" in message


@pytest.mark.parametrize("option", ["ellipsisMask", "newAxisMask", "offset"])
def test_strided_slice_options_tflm_ignores_are_refused(option, tmp_path):
    value = True if option == "offset" else 1
    message = _refusal(_strided((4, 6), [0, 1], [1, 3], [1, 1], (1, 2), **{option: value}),
                       tmp_path)
    name = {"ellipsisMask": "ellipsis_mask", "newAxisMask": "new_axis_mask"}.get(option, option)
    assert f"sets {name}, which TFLM's STRIDED_SLICE ignores" in message


def test_strided_slice_rank_5_is_refused(tmp_path):
    message = _refusal(_strided((1, 2, 1, 2, 4), [0] * 5, [1, 2, 1, 2, 2], [1] * 5,
                                (1, 2, 1, 2, 2)), tmp_path)
    assert "input has rank 5; TFLM's STRIDED_SLICE takes at most 4 dimensions" in message


def test_strided_slice_shrinking_past_the_end_is_refused(tmp_path):
    message = _refusal(_strided((6,), [6], [7], [1], (), shrinkAxisMask=1), tmp_path)
    assert "axis 0 is shrunk to index 6, outside its size 6" in message


def test_strided_slice_wrong_output_shape_is_refused(tmp_path):
    message = _refusal(_strided((4, 6), [0, 1], [4, 5], [1, 2], (4, 3)), tmp_path)
    assert "output shape [4, 3] is not the slice's [4, 2]" in message


def test_slice_outside_the_input_is_refused(tmp_path):
    data = _single("SLICE", (4, 6), "int8", [_i32(1, 4), _i32(2, 3)], [(2, 3)], "SliceOptions",
                   quantized=True)
    message = _refusal(data, tmp_path)
    assert "axis 1: begin 4 and size 3 are outside the input's 6 elements" in message


def test_gather_constant_index_out_of_range_is_refused(tmp_path):
    data = _single("GATHER", (3, 5), "int8", [_i32(1, 5)], [(3, 2)], "GatherOptions",
                   quantized=True, axis=1)
    message = _refusal(data, tmp_path)
    assert "index 5 is outside [0, 5)" in message and "TFLM would return an error" in message


def test_gather_of_int16_data_is_refused_as_tflm_has_no_kernel(tmp_path):
    data = _single("GATHER", (3, 5), "int16", [_i32(1, 0)], [(2, 5)], "GatherOptions",
                   quantized=True)
    message = _refusal(data, tmp_path)
    assert "the data is int16; TFLM's GATHER takes int8 and float32 only" in message


def test_gather_int64_runtime_indices_are_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4, 3), "int8", 0.1, 0)
    i = b.tensor("i", (2,), "int64")
    y = b.tensor("y", (2, 3), "int8", 0.1, 0)
    b.operator("GATHER", [x, i], [y], "GatherOptions")
    message = _refusal(b.build([x, i], [y]), tmp_path)
    assert "GATHER" in message and "int64" in message


def test_split_with_runtime_axis_is_refused(tmp_path):
    b = ModelBuilder()
    axis = b.tensor("axis", (), "int32")
    x = b.tensor("x", (4, 6), "int8", 0.1, 0)
    ys = [b.tensor(f"y{k}", (4, 3), "int8", 0.1, 0) for k in range(2)]
    b.operator("SPLIT", [axis, x], ys, "SplitOptions", numSplits=2)
    message = _refusal(b.build([axis, x], ys), tmp_path)
    assert "SPLIT: the axis is not a constant integer; TFLM requires it constant too" in message


def test_expand_dims_of_int32_at_run_time_is_refused(tmp_path):
    data = _single("EXPAND_DIMS", (4, 6), "int32", [_i32(0)], [(1, 4, 6)],
                   "ExpandDimsOptions")
    message = _refusal(data, tmp_path)
    assert "EXPAND_DIMS (op 0): has int32 tensors at run time" in message
