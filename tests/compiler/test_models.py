"""The MLPerf-Tiny-like models end to end: generated C bit-exact with TFLM, plans verified."""

from __future__ import annotations

from pathlib import Path

import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model
from microbuild.compiler.plan_check import verify_plan

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
MODELS = sorted(MODELS_DIR.glob("*.tflite"))


def test_all_models_are_there():
    assert {p.stem for p in MODELS} >= {"ds_cnn", "resnet8", "mobilenet_v1_025_vww", "anomaly_ae",
                                        "tiny_fc"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_bit_exact_with_tflm(model, cc, tmp_path):
    assert_bit_exact(model, n=10, seed=11, cc=cc, tmp_path=tmp_path)


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_zero_copy_io_through_the_workspace_slots(model, tmp_path):
    """Inputs written straight into their workspace slots, outputs read from theirs."""
    assert_bit_exact(model, n=3, seed=5, cc="gcc", tmp_path=tmp_path, io="slots")


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_plan_is_sound_and_io_is_planned(model):
    compiled = compile_model(model, prefix="m")
    assert verify_plan(compiled.graph, compiled.plan) == []
    for t in compiled.graph.inputs + compiled.graph.outputs:
        offset = compiled.plan.locations[t].offset
        assert offset + compiled.graph.tensors[t].nbytes <= compiled.workspace_bytes
    # the workspace can never be smaller than the largest single tensor it holds whole (a
    # row-streamed region's inner tensors only ever exist a few rows at a time)
    biggest = max(compiled.graph.tensors[t].nbytes for t in compiled.plan.locations)
    assert compiled.workspace_bytes >= biggest


def test_input_bytes_are_reused_once_dead():
    """VWW's 96x96x3 input is dead after the first conv; its bytes must serve later tensors."""
    compiled = compile_model(MODELS_DIR / "mobilenet_v1_025_vww.tflite", prefix="vww")
    graph, plan = compiled.graph, compiled.plan
    inp = graph.inputs[0]
    start, size = plan.locations[inp].offset, graph.tensors[inp].nbytes
    later = [t for t, loc in plan.locations.items()
             if t != inp and loc.offset < start + size and start < loc.offset + graph.tensors[t].nbytes]
    assert later, "no later tensor reuses the input's bytes"
