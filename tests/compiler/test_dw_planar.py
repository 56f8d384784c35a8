"""DEPTHWISE_CONV_2D "mve_planar" (runtime/kernels/depthwise_conv2d_mve_planar.c): one channel at a
time gathered into a zero-point-padded plane whose contiguous axis has stride 1, walked as one
sequence of 8-output blocks (flat) or row by row. The sweep's dw_3x3_same_s1_* models exercise it
along x only; here the other shapes it takes — the plane along y (a tall input, and x strided),
a dilation and a stride across the vectors' axis, VALID padding, two batch images, rows that are
not a multiple of 8, an image too large for the flat walk — bit-exact with TFLM on the M55, and
the shapes it refuses with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import differences_on_device

from microbuild import api
from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.ops.depthwise_conv2d import _planar_axes
from microbuild.compiler.variants import Selection, Target
from microbuild.model.reader import read_model

GENERATE = Path(__file__).resolve().parent.parent / "models" / "generate"

# name -> (batches, input h, w, channels, stride h, w, dilation h, w, SAME padding?)
TAKEN = {
    # The flat walk (stride 1 both ways): the plane along y, 21 rows of 6 (one sequence of
    # 8-blocks over the rows' ends); along x with a dilation across rows; 2 batch images.
    "tall_y_same_c5": (1, 21, 6, 5, 1, 1, 1, 1, True),
    "wide_x_dil_h2_c6": (1, 10, 16, 6, 1, 1, 2, 1, True),
    "batch2_same_c16": (2, 9, 10, 16, 1, 1, 1, 1, True),
    # Row by row: a stride across the rows (the plane along y when x is strided), and an image
    # whose outputs are too far apart for the flat walk's 16-bit offsets (200 x 40 x 9 bytes).
    "x_strided_y_c3": (1, 17, 12, 3, 1, 2, 1, 1, True),
    "wide_x_dil_h2_s2_valid_c7": (1, 12, 19, 7, 2, 1, 2, 1, False),
    "large_rows_c9": (1, 40, 200, 9, 1, 1, 1, 1, True),
}
REFUSED = {
    "both_strided": ((1, 9, 10, 6, 2, 2, 1, 1, True), "stride 2x2: neither axis has stride 1"),
    "dilated_along_v": ((1, 9, 12, 6, 1, 1, 1, 2, True), "dilation 2 along the vectors' axis"),
    "short_rows": ((1, 6, 5, 6, 1, 1, 1, 1, True), "6 outputs along the longer axis"),
}


def _depthwise(path: Path, batches, h, w, c, sh, sw, dh, dw, same) -> Path:
    sys.path.insert(0, str(GENERATE))
    from tflite_builder import ModelBuilder

    rng = np.random.default_rng(h * 100 + w * 10 + c)
    b = ModelBuilder()
    x = b.tensor("x", (batches, h, w, c), "int8", 0.04, -9)
    scales = list(rng.uniform(0.003, 0.02, c))
    f = b.constant("f", rng.integers(-127, 128, (1, 3, 3, c), dtype=np.int8), scale=scales,
                   axis=3)
    bias = b.constant("b", rng.integers(-2000, 2000, c).astype(np.int32),
                      scale=[0.04 * s for s in scales], axis=0)
    span_h, span_w = 2 * dh + 1, 2 * dw + 1
    out_h = -(-h // sh) if same else (h - span_h) // sh + 1
    out_w = -(-w // sw) if same else (w - span_w) // sw + 1
    y = b.tensor("y", (batches, out_h, out_w, c), "int8", 0.2, 4)
    b.operator("DEPTHWISE_CONV_2D", [x, f, bias], [y], "DepthwiseConv2DOptions", version=3,
               padding=0 if same else 1, strideW=sw, strideH=sh, depthMultiplier=1,
               fusedActivationFunction=3, dilationWFactor=dw, dilationHFactor=dh)
    path.write_bytes(b.build([x], [y]))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planar")
    cases = {**TAKEN, **{name: dims for name, (dims, _) in REFUSED.items()}}
    return {name: _depthwise(folder / f"{name}.tflite", *dims) for name, dims in cases.items()}


def test_the_variant_takes_these_shapes_and_says_why_it_refuses_others(models):
    selection = Selection(Target.of_board(load_board("mps3-an547")))
    walks = {}
    for name in TAKEN:
        graph = read_model(models[name])
        walks[name] = _planar_axes(graph.operators[0], graph)["flat"]
        op = compile_model(models[name], selection=selection).summary()["ops"][0]
        assert op["kernel"] == "mve_planar", (name, op)
    assert [name for name, flat in walks.items() if flat] == list(TAKEN)[:3]  # both walks
    # The two-image model's output lies over its input, starting whole pixels before it: the
    # kernel's channel-at-a-time walk must not overwrite a channel it has not read.
    batch2 = compile_model(models["batch2_same_c16"], selection=selection)
    ((_, src, dst, _, pixel),) = batch2.plan.overlaps
    gap = batch2.plan.locations[src].offset - batch2.plan.locations[dst].offset
    assert pixel == 16 and gap >= 0 and gap % 16 == 0, (gap, pixel)
    for name, (_, reason) in REFUSED.items():
        op = compile_model(models[name], selection=selection).summary()["ops"][0]
        assert op["kernel"] != "mve_planar", name
        assert reason in dict(op["variants_refused"])["mve_planar"], (name, op)


def test_planar_depthwise_is_bit_exact_on_the_m55(models, tmp_path):
    build = api.build_firmware("mps3-an547", {name: str(models[name]) for name in TAKEN},
                               tmp_path / "fw", executor="rpc")
    assert {m["prefix"]: m["ops"][0]["kernel"] for m in build.models} == \
        dict.fromkeys(TAKEN, "mve_planar")
    problems = []
    with api.connect("mps3-an547", build, timeout=10) as dev:
        for name in TAKEN:
            problems += differences_on_device(dev, name, models[name], 4, seed=5)
    assert not problems, "\n".join(problems)
