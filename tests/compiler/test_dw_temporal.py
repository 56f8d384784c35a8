"""DEPTHWISE_CONV_2D "mve_temporal" (runtime/kernels/depthwise_conv2d_mve_temporal.c): 1-D time
convolutions, 16 channels at a time transposed into a plane of channel rows, one VMLADAV.S8 per
output. The streaming wake word model (tests/models/str_ww.tflite) takes it with 'valid' windows
of 3, 5, 10 and 15 taps and stride 1; here the rest of what it takes — SAME padding (zero point
rows in the plane), a stride of 2 along time (the copy whose loads are not at immediate
offsets), a channel count that is not a multiple of 16 (a partial last group, its channels 8-15
and 0-7 predicated apart), 16 taps, fewer than 4 output times (the predicated last block), two
batch images, an output lying over its input — bit-exact with TFLM on the M55, and the shapes it
refuses with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import differences_on_device

from microbuild import api
from microbuild.boards import load_board
from microbuild.compiler import compile_model
from microbuild.compiler.variants import Selection, Target

GENERATE = Path(__file__).resolve().parent.parent / "models" / "generate"

# name -> (batches, time, width, channels, filter h, w, stride h, dilation h, SAME padding?)
TAKEN = {
    "same_k5_c20": (1, 17, 1, 20, 5, 1, 1, 1, True),
    "valid_k3_s2_c9": (1, 23, 1, 9, 3, 1, 2, 1, False),
    "valid_k16_c33": (1, 19, 1, 33, 16, 1, 1, 1, False),
    "short_k4_c8": (1, 6, 1, 8, 4, 1, 1, 1, False),      # 3 output times: one partial block
    "batch2_k7_c24": (2, 12, 1, 24, 7, 1, 1, 1, True),
}
REFUSED = {
    "two_wide": ((1, 12, 2, 8, 3, 1, 1, 1, False), "input 2, output 2 and filter 1 pixels wide"),
    "taps_17": ((1, 20, 1, 8, 17, 1, 1, 1, False), "17 taps, over the 16"),
    "dilated": ((1, 20, 1, 8, 3, 1, 1, 2, False), "dilation 2 along time"),
}


def _temporal(path: Path, batches, t, w, c, kh, kw, sh, dh, same) -> Path:
    sys.path.insert(0, str(GENERATE))
    from tflite_builder import ModelBuilder

    rng = np.random.default_rng(t * 100 + kh * 10 + c)
    b = ModelBuilder()
    x = b.tensor("x", (batches, t, w, c), "int8", 0.05, 7)
    scales = list(rng.uniform(0.002, 0.02, c))
    f = b.constant("f", rng.integers(-127, 128, (1, kh, kw, c), dtype=np.int8), scale=scales,
                   axis=3)
    bias = b.constant("b", rng.integers(-3000, 3000, c).astype(np.int32),
                      scale=[0.05 * s for s in scales], axis=0)
    span = (kh - 1) * dh + 1
    out_t = -(-t // sh) if same else (t - span) // sh + 1
    out_w = w if same else w - kw + 1
    y = b.tensor("y", (batches, out_t, out_w, c), "int8", 0.15, -3)
    b.operator("DEPTHWISE_CONV_2D", [x, f, bias], [y], "DepthwiseConv2DOptions", version=3,
               padding=0 if same else 1, strideW=1, strideH=sh, depthMultiplier=1,
               fusedActivationFunction=1, dilationWFactor=1, dilationHFactor=dh)
    path.write_bytes(b.build([x], [y]))
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("temporal")
    cases = {**TAKEN, **{name: dims for name, (dims, _) in REFUSED.items()}}
    return {name: _temporal(folder / f"{name}.tflite", *dims) for name, dims in cases.items()}


def test_the_variant_takes_these_shapes_and_says_why_it_refuses_others(models):
    selection = Selection(Target.of_board(load_board("mps3-an547")))
    for name in TAKEN:
        op = compile_model(models[name], selection=selection).summary()["ops"][0]
        assert op["kernel"] == "mve_temporal", (name, op)
    # The two-image model's output lies over its input, starting whole pixels before it: the
    # kernel's 16-channel groups must not overwrite a channel they have not read.
    batch2 = compile_model(models["batch2_k7_c24"], selection=selection)
    ((_, src, dst, _, pixel),) = batch2.plan.overlaps
    gap = batch2.plan.locations[src].offset - batch2.plan.locations[dst].offset
    assert pixel == 24 and gap >= 0 and gap % 24 == 0, (gap, pixel)
    for name, (_, reason) in REFUSED.items():
        op = compile_model(models[name], selection=selection).summary()["ops"][0]
        assert op["kernel"] != "mve_temporal", name
        assert reason in dict(op["variants_refused"])["mve_temporal"], (name, op)


def test_temporal_depthwise_is_bit_exact_on_the_m55(models, tmp_path):
    build = api.build_firmware("mps3-an547", {name: str(models[name]) for name in TAKEN},
                               tmp_path / "fw", executor="rpc")
    assert {m["prefix"]: m["ops"][0]["kernel"] for m in build.models} == \
        dict.fromkeys(TAKEN, "mve_temporal")
    problems = []
    with api.connect("mps3-an547", build, timeout=10) as dev:
        for name in TAKEN:
            problems += differences_on_device(dev, name, models[name], 4, seed=7)
    assert not problems, "\n".join(problems)


def test_the_streaming_wake_word_model_runs_its_time_convolutions_on_the_variant():
    model = Path(__file__).resolve().parent.parent / "models" / "str_ww.tflite"
    selection = Selection(Target.of_board(load_board("mps3-an547")))
    ops = compile_model(model, selection=selection).summary()["ops"]
    assert [op["kernel"] for op in ops if op["opcode"] == "DEPTHWISE_CONV_2D"] == \
        ["mve_temporal"] * 4
