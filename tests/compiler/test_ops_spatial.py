"""The spatial data-movement operators (SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, DEPTH_TO_SPACE,
SPACE_TO_DEPTH, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, MIRROR_PAD): the converter-made sweep
bit-exact with TFLM, evaluation on constants at compile time, SPACE_TO_BATCH_ND's padding, and
the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, random_inputs, run_on_host, run_tflm

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

MODELS = Path(__file__).resolve().parent.parent / "models"
PREFIXES = ("resize_", "depth_to_space_", "space_to_depth_", "space_to_batch_nd",
            "batch_to_space_nd", "mirror_pad_")
SWEEP = sorted(p for p in (MODELS / "ops").glob("*.tflite") if p.name.startswith(PREFIXES))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_spatial_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "resize_bilinear_upsampling2d", "resize_bilinear_half_pixel", "resize_bilinear_down",
        "resize_bilinear_align_corners", "resize_bilinear_asymmetric",
        "resize_nearest_half_pixel", "resize_nearest_down", "resize_nearest_align_corners",
        "resize_nearest_asymmetric", "resize_nearest_s16",
        "depth_to_space_b2", "depth_to_space_b3", "space_to_depth_b2", "space_to_depth_b3",
        "space_to_batch_nd", "space_to_batch_nd_3x2", "space_to_batch_nd_rank3",
        "batch_to_space_nd", "batch_to_space_nd_3x2", "batch_to_space_nd_rank3",
        "mirror_pad_reflect", "mirror_pad_symmetric", "mirror_pad_reflect_rank3"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_spatial_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=6, seed=23, cc=cc, tmp_path=tmp_path)


def test_the_sweep_covers_the_resize_options():
    from microbuild.model.reader import read_model

    seen = set()
    for model in SWEEP:
        op = read_model(model).operators[0]
        if op.opcode.startswith("RESIZE"):
            seen.add((op.opcode, op.options["align_corners"], op.options["half_pixel_centers"]))
    for opcode in ("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"):
        assert {(opcode, False, True), (opcode, True, False), (opcode, False, False)} <= seen


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(data)
    return path


# ---- evaluation of constants ----------------------------------------------------------------
def _constant_then_add(opcode, table_shape, out_shape, extra, options=None, **fields) -> bytes:
    """A constant int8 table -> opcode -> ADD with the model's input: the op folds, only ADD
    runs."""
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    table = b.constant("table", rng.integers(-128, 128, table_shape, dtype=np.int8), scale=0.1,
                       zero_point=3)
    inputs = [table] + [b.constant(f"c{k}", np.asarray(v, np.int32)) for k, v in enumerate(extra)]
    moved = b.tensor("moved", out_shape, "int8", 0.1, 3)
    x = b.tensor("x", out_shape, "int8", 0.1, 3)
    y = b.tensor("y", out_shape, "int8", 0.2, -1)
    b.operator(opcode, inputs, [moved], options, **fields)
    b.operator("ADD", [x, moved], [y], "AddOptions")
    return b.build([x], [y])


FOLDS = {
    "resize_nearest": ("RESIZE_NEAREST_NEIGHBOR", (1, 3, 5, 2), (1, 7, 4, 2), [[7, 4]],
                       "ResizeNearestNeighborOptions", {"halfPixelCenters": True}),
    "resize_bilinear": ("RESIZE_BILINEAR", (1, 3, 5, 2), (1, 7, 4, 2), [[7, 4]],
                        "ResizeBilinearOptions", {"alignCorners": True}),
    "mirror_pad": ("MIRROR_PAD", (1, 3, 5, 2), (1, 6, 7, 2), [[[0, 0], [2, 1], [1, 1], [0, 0]]],
                   "MirrorPadOptions", {"mode": 0}),
    "depth_to_space": ("DEPTH_TO_SPACE", (1, 2, 3, 8), (1, 4, 6, 2), [], "DepthToSpaceOptions",
                       {"blockSize": 2}),
    "space_to_depth": ("SPACE_TO_DEPTH", (1, 4, 6, 2), (1, 2, 3, 8), [], "SpaceToDepthOptions",
                       {"blockSize": 2}),
    "space_to_batch_nd": ("SPACE_TO_BATCH_ND", (1, 4, 6, 3), (4, 2, 3, 3),
                          [[2, 2], [[0, 0], [0, 0]]], "SpaceToBatchNDOptions", {}),
    "batch_to_space_nd": ("BATCH_TO_SPACE_ND", (4, 2, 3, 3), (1, 3, 5, 3),
                          [[2, 2], [[1, 0], [0, 1]]], "BatchToSpaceNDOptions", {}),
}


@pytest.mark.parametrize("name", FOLDS)
def test_constant_inputs_are_evaluated_at_compile_time(name, tmp_path):
    opcode, table_shape, out_shape, extra, options, fields = FOLDS[name]
    path = _write(tmp_path, name, _constant_then_add(opcode, table_shape, out_shape, extra,
                                                     options, **fields))
    compiled = compile_model(path)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == ["ADD"]
    assert any(opcode in note for note in compiled.summary()["notes"])
    # TFLM runs the op on the constant; the folded constant must be the same values.
    assert_bit_exact(path, n=3, seed=4, tmp_path=tmp_path)


# ---- SPACE_TO_BATCH_ND's padding ------------------------------------------------------------
def _padded_space_to_batch(tmp_path: Path) -> Path:
    b = ModelBuilder()
    x = b.tensor("x", (1, 5, 7, 3), "int8", 0.05, -19)
    block = b.constant("block", np.array([2, 2], np.int32))
    pads = b.constant("pads", np.array([[2, 1], [0, 1]], np.int32))
    y = b.tensor("y", (4, 4, 4, 3), "int8", 0.05, -19)
    b.operator("SPACE_TO_BATCH_ND", [x, block, pads], [y], "SpaceToBatchNDOptions")
    return _write(tmp_path, "padded_s2b", b.build([x], [y]))


def test_space_to_batch_padding_is_the_zero_point_and_the_rest_matches_tflm(tmp_path):
    """TFLM fills SPACE_TO_BATCH_ND's padding with a value its Prepare never sets (stale arena
    memory); microbuild fills it with the zero point. Every other element is TFLM's."""
    path = _padded_space_to_batch(tmp_path)
    inputs = random_inputs(path, 4, seed=8)
    ours = run_on_host(path, inputs, workdir=tmp_path)
    # Which output elements are padding: run the same layout on an input of all ones.
    ones = np.ones((1, 5, 7, 3), np.int8)
    from microbuild.compiler.ops.space_batch import SpaceToBatchND  # noqa: F401
    padded = np.zeros((1, 8, 8, 3), np.int8)
    padded[:, 2:7, 0:7] = ones
    layout = padded.reshape(1, 4, 2, 4, 2, 3).transpose(2, 4, 0, 1, 3, 5).reshape(4, 4, 4, 3)
    is_pad = layout == 0
    assert is_pad.sum() == 4 * 4 * 4 * 3 - ones.size
    for given, mine in zip(inputs, ours):
        tflm = run_tflm(path, given)[0]
        assert np.array_equal(mine[0][~is_pad], tflm[~is_pad])
        assert np.all(mine[0][is_pad] == -19)
        # The input values, moved: the layout's non-padding positions hold exactly the input.
        assert sorted(mine[0][~is_pad].tolist()) == sorted(given[0].reshape(-1).tolist())


# ---- refusals -------------------------------------------------------------------------------
DILATED = ["conv", "depthwise", "conv_valid"]


@pytest.mark.parametrize("name", DILATED)
def test_keras_open_batch_dilated_conv_runs_as_the_fixed_batch_conversion(name, tmp_path):
    """Keras Conv2D / DepthwiseConv2D(dilation_rate) with an open batch converts to
    SPACE_TO_BATCH_ND -> convolution -> BATCH_TO_SPACE_ND with batch-1 shapes where the ops make
    block_h * block_w batches, and TFLM leaves most of that model's output unwritten. microbuild
    fuses the pattern into one dilated convolution: bit for bit what TFLM computes for the same
    layer converted with a fixed batch size (same weights, same calibration data)."""
    from microbuild.model.reader import read_model

    opened = MODELS / "dilated" / f"keras_dilated_{name}_open_batch.tflite"
    fixed = MODELS / "dilated" / f"keras_dilated_{name}_fixed_batch.tflite"
    conv = "DEPTHWISE_CONV_2D" if name == "depthwise" else "CONV_2D"
    assert [op.opcode for op in read_model(opened).operators] == [
        "SPACE_TO_BATCH_ND", conv, "BATCH_TO_SPACE_ND"]
    compiled = compile_model(opened)
    assert [op["opcode"] for op in compiled.summary()["ops"]] == [conv]
    assert any(f"BATCH_TO_SPACE_ND op 2 into one {conv} with dilation" in note
               for note in compiled.summary()["notes"])
    inputs = random_inputs(opened, 6, seed=31)
    ours = run_on_host(opened, inputs, workdir=tmp_path)
    for given, mine in zip(inputs, ours):
        assert np.array_equal(mine[0], run_tflm(fixed, given)[0])
    # The stock pattern run by TFLM itself is not that (stale arena memory in most outputs).
    assert not all(np.array_equal(mine[0], run_tflm(opened, given)[0])
                   for given, mine in zip(inputs, ours))


def test_a_pattern_that_is_no_dilated_conv_is_refused_with_the_fix(tmp_path):
    """With a strided convolution in between the pattern is no dilated convolution: it is not
    fused, and the contradictory batch-1 shapes are refused with the way out."""
    rng = np.random.default_rng(2)
    b = ModelBuilder()
    x = b.tensor("x", (1, 9, 11, 3), "int8", 0.05, -19)
    block = b.constant("block", np.array([2, 2], np.int32))
    pads = b.constant("pads", np.array([[2, 3], [2, 3]], np.int32))
    t1 = b.tensor("spread", (1, 7, 8, 3), "int8", 0.05, -19)
    w = b.constant("w", rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8), scale=0.01)
    bias = b.constant("bias", np.zeros(4, np.int32))
    t2 = b.tensor("conv", (1, 3, 3, 4), "int8", 0.1, 2)
    crops = b.constant("crops", np.zeros((2, 2), np.int32))
    y = b.tensor("y", (1, 6, 6, 4), "int8", 0.1, 2)
    b.operator("SPACE_TO_BATCH_ND", [x, block, pads], [t1], "SpaceToBatchNDOptions")
    b.operator("CONV_2D", [t1, w, bias], [t2], "Conv2DOptions", padding=1, strideH=2, strideW=2)
    b.operator("BATCH_TO_SPACE_ND", [t2, block, crops], [y], "BatchToSpaceNDOptions")
    with pytest.raises(ModelError) as error:
        compile_model(_write(tmp_path, "strided", b.build([x], [y])))
    message = str(error.value)
    assert "recorded with shape (1, 7, 8, 3), but the operator produces (4, 7, 8, 3)" in message
    assert "open batch size" in message and "batch_size=1" in message
    assert "BATCH_TO_SPACE_ND: input batch 1 is not a multiple of the block size 2 x 2" in message


def _resize(tmp_path, opcode="RESIZE_BILINEAR", dtype="int8", size_constant=True, **flags):
    b = ModelBuilder()
    zero = 0 if dtype == "int16" else -4
    x = b.tensor("x", (1, 3, 4, 2), dtype, 0.05, zero)
    inputs = [x]
    if size_constant:
        size = b.constant("size", np.array([6, 8], np.int32))
    else:
        size = b.tensor("size", (2,), "int32")
        inputs.append(size)
    y = b.tensor("y", (1, 6, 8, 2), dtype, 0.05, zero)
    options = ("ResizeBilinearOptions" if opcode == "RESIZE_BILINEAR"
               else "ResizeNearestNeighborOptions")
    b.operator(opcode, [x, size], [y], options, **flags)
    return _write(tmp_path, "resize", b.build(inputs, [y]))


def test_int16_bilinear_is_refused_as_tflm_has_no_such_kernel(tmp_path):
    with pytest.raises(ModelError, match="RESIZE_BILINEAR .*has int16 tensors at run time") \
            as error:
        compile_model(_resize(tmp_path, dtype="int16"))
    assert "TFLM has no int16 RESIZE_BILINEAR kernel either" in str(error.value)
    assert "16x8" in str(error.value)
    # int16 nearest neighbour is supported (TFLM has it).
    compile_model(_resize(tmp_path, "RESIZE_NEAREST_NEIGHBOR", dtype="int16"))


def test_run_time_size_is_refused(tmp_path):
    with pytest.raises(ModelError, match="size 'size' is not constant"):
        compile_model(_resize(tmp_path, "RESIZE_NEAREST_NEIGHBOR", size_constant=False))


def test_align_corners_with_half_pixel_centers_is_refused(tmp_path):
    with pytest.raises(ModelError, match="align_corners and half_pixel_centers are both set"):
        compile_model(_resize(tmp_path, alignCorners=True, halfPixelCenters=True))


def test_mirror_pad_wider_than_the_input_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 3, 4, 2), "int8", 0.05, 1)
    pads = b.constant("pads", np.array([[0, 0], [3, 0], [0, 0], [0, 0]], np.int32))
    y = b.tensor("y", (1, 6, 4, 2), "int8", 0.05, 1)
    b.operator("MIRROR_PAD", [x, pads], [y], "MirrorPadOptions", mode=0)
    with pytest.raises(ModelError, match=r"dimension 1 of size 3 is padded by \[3, 0\]; REFLECT "
                                         "allows at most 2"):
        compile_model(_write(tmp_path, "mirror", b.build([x], [y])))


def test_run_time_block_shape_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (4, 2, 3, 3), "int8", 0.05, 1)
    block = b.tensor("block", (2,), "int32")
    crops = b.constant("crops", np.zeros((2, 2), np.int32))
    y = b.tensor("y", (1, 4, 6, 3), "int8", 0.05, 1)
    b.operator("BATCH_TO_SPACE_ND", [x, block, crops], [y], "BatchToSpaceNDOptions")
    with pytest.raises(ModelError, match="block_shape 'block' is not constant"):
        compile_model(_write(tmp_path, "b2s", b.build([x, block], [y])))


def test_requantizing_depth_to_space_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 2, 3, 8), "int8", 0.05, 1)
    y = b.tensor("y", (1, 4, 6, 2), "int8", 0.07, 1)
    b.operator("DEPTH_TO_SPACE", [x], [y], "DepthToSpaceOptions", blockSize=2)
    with pytest.raises(ModelError, match="quantized differently; TFLM copies values"):
        compile_model(_write(tmp_path, "d2s", b.build([x], [y])))


# ---- resize geometry ------------------------------------------------------------------------
GEOMETRIES = {(1, 3, 4, 2): [(1, 1), (2, 3), (6, 8), (5, 13), (13, 5), (3, 4), (2, 2), (1, 9)],
              (1, 1, 5, 3): [(1, 5), (4, 9), (7, 2), (3, 1)],
              (2, 7, 2, 1): [(3, 3), (20, 5)]}


@pytest.mark.parametrize("flags", [(False, False), (True, False), (False, True)],
                         ids=["asymmetric", "align_corners", "half_pixel"])
@pytest.mark.parametrize("opcode", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
def test_resize_geometries_bit_exact_with_tflm(opcode, flags, tmp_path):
    """Up- and downscaling, to and from one pixel, both axes at once: one model with a resize
    per geometry (TFLM's float and fixed-point positions are where such cases differ)."""
    align, half = flags
    options = ("ResizeBilinearOptions" if opcode == "RESIZE_BILINEAR"
               else "ResizeNearestNeighborOptions")
    b = ModelBuilder()
    inputs, outputs = [], []
    for k, (shape, sizes) in enumerate(GEOMETRIES.items()):
        x = b.tensor(f"x{k}", shape, "int8", 0.05, -7)
        inputs.append(x)
        for j, (h, w) in enumerate(sizes):
            size = b.constant(f"size{k}_{j}", np.array([h, w], np.int32))
            y = b.tensor(f"y{k}_{j}", (shape[0], h, w, shape[3]), "int8", 0.05, -7)
            b.operator(opcode, [x, size], [y], options, alignCorners=align,
                       halfPixelCenters=half)
            outputs.append(y)
    path = _write(tmp_path, "geometries", b.build(inputs, outputs))
    assert_bit_exact(path, n=5, seed=11, tmp_path=tmp_path)


def test_a_chain_of_the_spatial_ops_is_bit_exact_with_tflm(tmp_path):
    """Every operator of the group in one graph, each reading the previous one's output (and one
    intermediate also a graph output), so the planner's buffer sharing meets the kernels."""
    b = ModelBuilder()
    q = (0.05, -7)

    def t(name, shape):
        return b.tensor(name, shape, "int8", *q)

    def ints(name, values):
        return b.constant(name, np.array(values, np.int32))

    x = t("x", (1, 6, 5, 8))
    d2s, mp, s2d = t("d2s", (1, 12, 10, 2)), t("mp", (1, 14, 12, 2)), t("s2d", (1, 7, 6, 8))
    bl, nn = t("bl", (1, 9, 4, 8)), t("nn", (1, 3, 8, 8))
    s2b, y = t("s2b", (6, 1, 4, 8)), t("y", (1, 1, 6, 8))
    b.operator("DEPTH_TO_SPACE", [x], [d2s], "DepthToSpaceOptions", blockSize=2)
    b.operator("MIRROR_PAD", [d2s, ints("p", [[0, 0], [1, 1], [2, 0], [0, 0]])], [mp],
               "MirrorPadOptions", mode=0)
    b.operator("SPACE_TO_DEPTH", [mp], [s2d], "SpaceToDepthOptions", blockSize=2)
    b.operator("RESIZE_BILINEAR", [s2d, ints("s1", [9, 4])], [bl], "ResizeBilinearOptions",
               halfPixelCenters=True)
    b.operator("RESIZE_NEAREST_NEIGHBOR", [bl, ints("s2", [3, 8])], [nn],
               "ResizeNearestNeighborOptions", alignCorners=True)
    b.operator("SPACE_TO_BATCH_ND", [nn, ints("block", [3, 2]), ints("pads", [[0, 0], [0, 0]])],
               [s2b], "SpaceToBatchNDOptions")
    b.operator("BATCH_TO_SPACE_ND", [s2b, ints("block2", [3, 2]), ints("crops", [[1, 1], [0, 2]])],
               [y], "BatchToSpaceNDOptions")
    path = _write(tmp_path, "chain", b.build([x], [y, mp]))
    compiled = compile_model(path)
    assert len(compiled.summary()["ops"]) == 7
    assert_bit_exact(path, n=6, seed=17, tmp_path=tmp_path)


def test_pooling_empty_window_check_agrees_with_walking_every_output():
    """The pool check asks whether some window lies wholly in the padding (TFLM's average pool
    would divide by zero). It looks at the first and last windows only, so that a damaged shape
    with a billion outputs is answered at once; here it is compared with walking every output."""
    from types import SimpleNamespace

    from microbuild.compiler.ops.pooling import _empty_windows

    def walked(out, in_size, f, stride, pad):
        return any(min(i * stride - pad + f, in_size) <= max(i * stride - pad, 0)
                   for i in range(out))

    for in_size in range(1, 7):
        for f in range(1, 5):
            for stride in range(1, 4):
                for pad in range(0, 5):
                    for out in range(0, 6):
                        win = SimpleNamespace(out_h=out, out_w=1, pad_top=pad, pad_left=0)
                        options = {"filter_height": f, "filter_width": 1, "stride_h": stride,
                                   "stride_w": 1}
                        want = walked(out, in_size, f, stride, pad)
                        assert _empty_windows(win, options, in_size, 1) == want, (
                            in_size, f, stride, pad, out)


def test_gather_tables_of_one_index_are_folded_away():
    """A rank-3 BATCH_TO_SPACE_ND's plan is [1, 6, 1] units: the size-1 tables add a constant, so
    the kernel gets one dimension of 6 and its inner loop runs over all of them (bit-exactness of
    the folded offsets: test_spatial_bit_exact_with_tflm[batch_to_space_nd_rank3])."""
    source = compile_model(MODELS / "ops" / "batch_to_space_nd_rank3.tflite").sources["model.c"]
    assert ".num_dims = 1, .unit_bytes = 5, .output_dims = {6, 1, 1, 1, 1, 1}" in source
