"""Row-streamed models on the emulated boards with their fast kernels: the M7 (dsp variants:
the conv's im2col columns and residual tables, the depthwise kernel's band ring, all rebuilt per
band call from a view) and the M55 (mve) give TFLM's outputs bit for bit
(microbuild/compiler/row_stream.py), a FULLY_CONNECTED summing its conv's rows band by band
included (row_stream_fc.py's band kernel on the DSP and on Helium). ResNet-8 fits in half TFLM's arena."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from microbuild import api
from microbuild.compiler import compile_model
from microbuild.compiler.plan_check import verify_plan
from microbuild.compiler.variants import Selection, Target

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import differences_on_device  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
SHARED = MODELS.parent.parent.parent / "shared" / "models"
RESNET8 = MODELS / "resnet8.tflite"
TFLM_ARENA_M7 = 54_340
FAST = {"mps2-an500": "dsp", "mps3-an547": "mve"}
# (model, the streamed ops on that board's CPU); person_detect may be absent in a user's clone.
CASES = {
    "mps2-an500": [(RESNET8, (0, 5)), (MODELS / "mobilenet_v1_025_vww.tflite", (1, 3)),
                   (MODELS / "ops" / "row_stream_odd_rows_pc.tflite", (0, 1)),
                   (SHARED / "person_detect.tflite", (0, 3)),
                   # conv -> FULLY_CONNECTED summing the conv's rows band by band
                   (SHARED / "micro_speech_quantized.tflite", (1, 2))],
    # (ds_cnn's region (0, 2) is no longer kept: 704 bytes for 74 band calls.)
    "mps3-an547": [(RESNET8, (0, 5)),
                   # (0, 1), workspace 3,472 bytes, since the Helium conv's scratch holds 4
                   # pixels' columns (conv2d_mve.c, run_columns); it was (0, 3), 3,136 bytes
                   (MODELS / "ops" / "row_stream_odd_rows_pc.tflite", (0, 1)),
                   # (VWW's region (2, 3) is no longer kept: its 48x48x8 depthwise layer runs
                   # mve_planar, whose plane in scratch and unshared input and output make
                   # op-by-op and streamed plans peak alike, 39,824 bytes; see the note.)
                   (SHARED / "micro_speech_quantized.tflite", (1, 2))],
}


@pytest.mark.parametrize("board", CASES)
def test_streamed_models_are_bit_exact_on_the_board(board, tmp_path):
    target = Target.of_board(api.get_board(board))
    cases = [(path, ops) for path, ops in CASES[board] if path.exists()]
    assert len(cases) >= 2
    prefixes = {}
    for i, (path, ops) in enumerate(cases):
        compiled = compile_model(path, selection=Selection(target))
        region = compiled.plan.row_region
        assert region is not None and (region.first, region.last) == ops, path.name
        assert verify_plan(compiled.graph, compiled.plan, compiled.lowerings) == []
        # The streamed ops run the board's fast kernels, per band.
        kernels = {compiled.ops[k]["kernel"] for k in range(ops[0], ops[1] + 1)}
        assert FAST[board] in kernels, (path.name, kernels)
        if path == RESNET8:
            assert kernels == {FAST[board]}
            assert compiled.workspace_bytes <= TFLM_ARENA_M7 // 2
        prefixes[f"m{i}"] = (path, compiled.workspace_bytes)
    build = api.build_firmware(board, {p: str(path) for p, (path, _) in prefixes.items()},
                               tmp_path / "fw", executor="rpc")
    for built in build.models:  # the firmware's models are the streamed ones
        assert built["row_stream"] is not None
        assert built["workspace_bytes"] == prefixes[built["prefix"]][1]
    problems = []
    with api.connect(board, build, timeout=120) as dev:
        for prefix, (path, _) in prefixes.items():
            problems += differences_on_device(dev, prefix, path, 3, seed=29)
    assert not problems, "\n".join(problems)
