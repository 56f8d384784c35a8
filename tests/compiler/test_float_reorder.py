"""The Helium float variants (mve_f32) reorder float sums: never chosen unless the user allows it
(--allow-float-reorder), and then the difference from TFLM is measured on the device, not
promised. One RPC firmware on mps3-an547 (QEMU) holds every measured model twice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from microbuild.boards import resolve_board
from microbuild.compiler import compile_model, lowered_graph
from microbuild.compiler.forced_variants import parse_variants
from microbuild.compiler.tuning_log import TuningLog
from microbuild.compiler.variants import (FLOAT_REORDER_KEY, Selection, Target,
                                          allowing_float_reorder, op_signature)
from microbuild.errors import ModelError
from microbuild.tuning import float_reorder
from microbuild.tuning.float_reorder import compare_outputs, ulp_distance
from microbuild.tflm_reference import tflm_outputs
from microbuild.tuning.on_device import floats_close

FLOAT = Path(__file__).resolve().parent.parent / "models" / "float"
FC = FLOAT / "fc_bias.tflite"  # depth 37: four-lane chunks and a predicated tail
CONV = FLOAT / "conv_valid_stride2_nobias.tflite"  # 4 channels per tap, 2 batches
THIN_CONV = FLOAT / "conv_same_relu.tflite"  # 3 channels per tap: the exact kernel is faster
M55 = Target.of_board(resolve_board("mps3-an547"))


def _kernels(model: Path, selection: Selection) -> list[str]:
    return [op["kernel"] for op in compile_model(model, selection=selection).summary()["ops"]]


def _code(model: Path, selection: Selection, tmp_path: Path) -> str:
    compile_model(model, prefix="m", selection=selection).write(tmp_path)
    return (tmp_path / "m.c").read_text()


def test_never_chosen_without_the_flag(tmp_path):
    for model in (FC, CONV):
        summary = compile_model(model, selection=Selection(M55)).summary()
        assert [op["kernel"] for op in summary["ops"]] == ["reference"]
        # The compile table's note says why, and how to allow it.
        assert "--allow-float-reorder" in summary["ops"][0]["variants_refused"]["mve_f32"]
        assert "_f32_mve" not in _code(model, Selection(M55), tmp_path)
    # A tuning log that measured mve_f32 fastest does not choose it either.
    graph = lowered_graph(FC)
    log = TuningLog()
    log.record(M55.cpu, op_signature(graph.operators[0], graph), {"best": "mve_f32"})
    assert _kernels(FC, Selection(M55, tuning=log)) == ["reference"]
    assert _kernels(FC, Selection(M55, tuning=log, allow_float_reorder=True)) == ["mve_f32"]
    # Nor does --variant: forcing it is an error that says what to add.
    with pytest.raises(ModelError, match="not bit-exact.*--allow-float-reorder"):
        compile_model(FC, selection=Selection(M55, force={"FULLY_CONNECTED": "mve_f32"}))


def test_chosen_with_the_flag_on_a_helium_cpu_only(tmp_path):
    allowed = Selection(M55, force=allowing_float_reorder({}))
    assert allowed.allow_float_reorder and FLOAT_REORDER_KEY not in allowed.force
    assert _kernels(FC, allowed) == _kernels(CONV, allowed) == ["mve_f32"]
    code = _code(CONV, allowed, tmp_path)
    assert "mb_conv2d_f32_mve(" in code and "mb_conv2d_f32(" not in code
    summary = compile_model(THIN_CONV, selection=allowed).summary()
    assert summary["ops"][0]["kernel"] == "reference"
    assert "3 input channels per filter tap" in summary["ops"][0]["variants_refused"]["mve_f32"]
    # No Helium (Cortex-M7): the flag changes nothing.
    m7 = Target.of_board(resolve_board("mps2-an500"))
    assert _kernels(FC, Selection(m7, allow_float_reorder=True)) == ["reference"]
    with pytest.raises(ModelError, match="cannot run this op on cortex-m7"):
        compile_model(FC, selection=Selection(m7, force={"FULLY_CONNECTED": "mve_f32"}))
    # The flag as a generated project or a ci job writes it (--variant text) parses back.
    assert parse_variants(["float_reorder=allow", "CONV_2D=mve_f32"]) == {
        FLOAT_REORDER_KEY: "allow", "CONV_2D": "mve_f32"}


def test_ulps_and_the_comparison():
    one = np.float32(1.0)
    assert ulp_distance(np.array([one]), np.array([np.nextafter(one, np.float32(2))]))[0] == 1
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    assert ulp_distance(np.array([-tiny]), np.array([tiny]))[0] == 2  # across zero
    assert ulp_distance(np.array([-0.0], np.float32), np.array([0.0], np.float32))[0] == 0
    a = np.array([1.0, 2.0, -4.0], np.float32)
    b = a.copy()
    b[2] = np.nextafter(b[2], np.float32(0)) ; b[2] = np.nextafter(b[2], np.float32(0))
    elements, differing, max_abs, max_ulp, max_rel = compare_outputs([a], [b])
    assert (elements, differing, max_ulp) == (3, 1, 2)
    assert max_abs == pytest.approx(2 * 2.0 ** -22) and max_rel == pytest.approx(max_abs / 4)


def test_the_tuner_checks_a_reordering_candidate_within_a_tolerance():
    want = np.array([100.0, -3.0, 0.0], np.float32)
    assert floats_close(want + np.float32(1e-3), want)  # 1e-5 of the largest output
    assert not floats_close(want + np.float32(0.1), want)
    assert not floats_close(np.array([np.nan, -3.0, 0.0], np.float32), want)


@pytest.fixture(scope="module")
def measured():
    """The float sweep models with mve_f32 ops, each with and without it, one firmware."""
    if shutil.which("qemu-system-arm") is None:
        pytest.fail("qemu-system-arm is missing: ./setup.sh installs it")
    models = [FC, CONV]
    return float_reorder.measure_float_reorder_many(
        "mps3-an547", models, seed=4, ops=[["op 0"]] * len(models))


def test_the_reported_difference_is_measured_on_the_m55(measured):
    by_model = {r.model: r for r in measured}
    for report in measured:
        reordered, exact = report.outputs["reordered"], report.outputs["exact"]
        # The figures are the outputs' own, and small: a reordered float sum.
        assert report.elements == sum(o.size for o in exact) > 0
        assert report.max_ulp == max(int(ulp_distance(a, b).max())
                                     for a, b in zip(reordered, exact))
        assert report.max_relative < 1e-5
        # Both copies are close to TFLM's interpreter (x86: no fused multiply-adds).
        x = [np.random.default_rng(4).standard_normal((1, 37)).astype(np.float32)] \
            if report.model == FC.name else None
        if x is not None:
            assert np.allclose(reordered[0], tflm_outputs(FC, x)[0], rtol=1e-5, atol=1e-6)
        assert report.board == "mps3-an547" and report.ticks_exact > 0
    # The variant really ran: the convolution's sums moved, and it ran other instructions.
    conv = by_model[CONV.name]
    assert conv.differing > 0 and conv.ticks_reordered != conv.ticks_exact
    assert by_model[FC.name].ticks_reordered != by_model[FC.name].ticks_exact


def test_compile_reports_the_measured_difference(monkeypatch, tmp_path, capsys):
    """The CLI's plumbing: the flag reaches the kernel choice and the measurement, whose figures
    land in --json (the measurement itself is the test above's)."""
    from microbuild.cli import main

    calls = []

    def fake_measure(board, model, **kwargs):
        calls.append((board.name, Path(model).name, kwargs))
        return float_reorder.ReorderReport(Path(model).name, board.name, kwargs["ops"], 0, 9,
                                           5, 1.2e-7, 4, 2.8e-7, 27, 40)

    monkeypatch.setattr(float_reorder, "measure_float_reorder", fake_measure)
    assert main(["compile", str(FC), "--board", "mps3-an547", "-o", str(tmp_path / "a"),
                 "--json"]) == 0
    assert calls == [] and "float_reorder" not in json.loads(capsys.readouterr().out)
    assert main(["compile", str(FC), "--board", "mps3-an547", "-o", str(tmp_path / "b"),
                 "--json", "--allow-float-reorder"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ops"][0]["kernel"] == "mve_f32"
    assert summary["float_reorder"]["max_ulp"] == 4
    (board, model, kwargs), = calls
    assert (board, model) == ("mps3-an547", FC.name)
    assert kwargs["ops"] == ["op 0 FULLY_CONNECTED (mve_f32)"]
    assert kwargs["variants"] == {FLOAT_REORDER_KEY: "allow"}
    # Printed for a person: it says plainly that the outputs are not TFLM's bits.
    assert main(["compile", str(FC), "--board", "mps3-an547", "-o", str(tmp_path / "c"),
                 "--allow-float-reorder"]) == 0
    assert "NOT bit-exact with TFLM" in capsys.readouterr().out


def test_the_tuner_measures_mve_f32_only_when_allowed(tmp_path):
    from microbuild.errors import MicrobuildError
    from microbuild.tuning.tuner import plan_tuning, tune

    board = resolve_board("mps3-an547")
    with pytest.raises(MicrobuildError, match="nothing to tune"):
        tune(board, [FC], tmp_path / "tune.json")  # no bit-exact float variant to measure
    plan = plan_tuning(board, [FC, CONV], allow_float_reorder=True)
    assert plan.allow_float_reorder
    assert [(m.opcode, [c.variant for c in m.candidates], m.default) for m in plan.measured] == [
        ("FULLY_CONNECTED", ["reference", "mve_f32"], "reference"),
        ("CONV_2D", ["reference", "mve_f32"], "reference")]
