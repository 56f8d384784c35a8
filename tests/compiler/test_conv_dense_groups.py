"""A grouped CONV_2D of 2-4 groups runs the dense kernels (dsp_groups on the DSP cores,
mve_groups on Helium) on its filter made dense: zeros at the other groups' depths. The outputs
stay TFLM's bit for bit on the boards (1x1 filters read in place, 3x3 ones through columns with
padding, a stride); 5 groups or more stay on the per-group kernel, which says why."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import differences_on_device

from microbuild import api
from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.ops.conv2d import _dense_filter
from microbuild.compiler.variants import Selection, Target
from microbuild.model.reader import read_model

GENERATE = Path(__file__).resolve().parent.parent / "models" / "generate"

# name -> (input h, w, c, output channels, filter h, w, stride, SAME padding?)
CASES = {
    "pointwise_2groups": (6, 5, 16, 24, 1, 1, 1, False),
    "conv3x3_4groups_s2": (9, 8, 12, 8, 3, 3, 2, True),
    "conv3x3_5groups": (5, 5, 10, 10, 3, 3, 1, True),
}


def _grouped_conv(path: Path, h, w, c, oc, fh, fw, stride, same) -> Path:
    sys.path.insert(0, str(GENERATE))
    from tflite_builder import ModelBuilder

    groups = {16: 2, 12: 4, 10: 5}[c]
    rng = np.random.default_rng(c)
    b = ModelBuilder()
    x = b.tensor("x", (1, h, w, c), "int8", 0.03, -7)
    f = b.constant("f", rng.integers(-127, 128, (oc, fh, fw, c // groups), dtype=np.int8),
                   scale=list(rng.uniform(0.002, 0.02, oc)))
    bias = b.constant("b", rng.integers(-3000, 3000, oc).astype(np.int32),
                      scale=[0.0002] * oc)
    out_h = -(-h // stride) if same else (h - fh) // stride + 1
    out_w = -(-w // stride) if same else (w - fw) // stride + 1
    y = b.tensor("y", (1, out_h, out_w, oc), "int8", 0.25, 3)
    b.operator("CONV_2D", [x, f, bias], [y], "Conv2DOptions", version=3,
               padding=0 if same else 1, strideW=stride, strideH=stride,
               fusedActivationFunction=0, dilationWFactor=1, dilationHFactor=1)
    path.write_bytes(b.build([x], [y]))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grouped")
    return {name: _grouped_conv(folder / f"{name}.tflite", *dims) for name, dims in CASES.items()}


def test_the_dense_filter_holds_each_channel_at_its_group_depths(models):
    model = models["conv3x3_4groups_s2"]
    graph = read_model(model)
    op = graph.operators[0]
    w = graph.tensor(op.inputs[1]).data
    dense = _dense_filter(w, op, graph)
    assert dense.shape == (8, 3, 3, 12)
    for c in range(8):  # 2 channels a group, 3 input channels a group
        g = c // 2
        assert np.array_equal(dense[c, :, :, 3 * g:3 * g + 3], w[c])
        assert not np.delete(dense[c], np.s_[3 * g:3 * g + 3], axis=2).any()


@pytest.mark.parametrize("board, kernel", [("mps2-an500", "dsp_groups"),
                                           ("mps3-an547", "mve_groups")])
def test_few_groups_take_the_dense_kernels_and_more_stay_grouped(models, board, kernel):
    selection = Selection(Target.of_board(load_board(board)))
    kernels = {name: compile_model(path, selection=selection).summary()["ops"][0]
               for name, path in models.items()}
    assert kernels["pointwise_2groups"]["kernel"] == kernel
    assert kernels["conv3x3_4groups_s2"]["kernel"] == kernel
    five = kernels["conv3x3_5groups"]
    assert five["kernel"] == "grouped"
    assert dict(five["variants_refused"])[kernel].startswith("5 groups: made dense, the filter "
                                                            "would take 5x its flash")


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_grouped_convolutions_are_bit_exact_on_the_board(models, board, tmp_path):
    build = api.build_firmware(board, {name: str(path) for name, path in models.items()},
                               tmp_path / "fw", executor="rpc")
    assert {m["prefix"]: m["ops"][0]["kernel"] for m in build.models} == {
        "pointwise_2groups": "dsp_groups" if board == "mps2-an386" else "mve_groups",
        "conv3x3_4groups_s2": "dsp_groups" if board == "mps2-an386" else "mve_groups",
        "conv3x3_5groups": "grouped"}
    problems = []
    with api.connect(board, build, timeout=10) as dev:
        for name, path in models.items():
            problems += differences_on_device(dev, name, path, 4, seed=3)
    assert not problems, "\n".join(problems)
