"""Outputs written over the inputs they consume, on the emulated boards with their default (fast)
kernels: DS-CNN, the VWW MobileNet, person detection and the trained-like chain give TFLM's
outputs bit for bit, with plans that really overlap (microbuild/compiler/overlap.py)."""

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
CASES = {
    "mps2-an500": [MODELS / "ds_cnn.tflite", MODELS / "mobilenet_v1_025_vww.tflite",
                   MODELS / "ops" / "chain_overlap_trained_pc.tflite",
                   SHARED / "person_detect.tflite"],
    "mps3-an547": [MODELS / "ds_cnn.tflite", MODELS / "ops" / "chain_overlap_trained_pc.tflite"],
}


@pytest.mark.parametrize("board", CASES)
def test_overlapping_plans_are_bit_exact_on_the_board(board, tmp_path):
    models = [p for p in CASES[board] if p.exists()]
    assert len(models) >= 2  # person_detect may be absent in a user's clone; the rest is not
    target = Target.of_board(api.get_board(board))
    kernels = {}
    for path in models:
        compiled = compile_model(path, selection=Selection(target))
        assert compiled.plan.overlaps, f"{path.name}: no output written over its input"
        assert verify_plan(compiled.graph, compiled.plan, compiled.lowerings) == []
        kernels[path.stem] = {op["kernel"] for op in compiled.ops}
    # The fast kernels are the ones under test.
    fast = {"dsp"} if board == "mps2-an500" else {"mve"}
    assert all(ks & fast for ks in kernels.values()), kernels
    prefixes = {f"m{i}": path for i, path in enumerate(models)}
    build = api.build_firmware(board, {p: str(path) for p, path in prefixes.items()},
                               tmp_path / "fw", executor="rpc")
    problems = []
    with api.connect(board, build, timeout=120) as dev:
        for prefix, path in prefixes.items():
            problems += differences_on_device(dev, prefix, path, 3, seed=17)
    assert not problems, "\n".join(problems)
