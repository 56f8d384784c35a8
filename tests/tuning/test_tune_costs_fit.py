"""What a tuned variant costs and whether the tuned firmware fits, on the emulated Cortex-M7
(QEMU icount: the ticks are exact instruction counts, so "dsp16 is fastest" is a fact here).

On DS-CNN, dsp16 (int16-widened filters) is the fastest CONV_2D kernel and grows the weights; the
default kernel (dsp) does not. `tune --max-flash 0` keeps dsp; the tuner refuses a choice whose
weights do not fit the board (choosing again within what fits), and when two copies of the model
do not fit the tuning firmware it times one copy per firmware instead of failing."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api, cli
from microbuild.boards import load_board, load_board_file
from microbuild.errors import FitError
from microbuild.tuning import TuningLog
from microbuild.tuning import tuner

REPO = Path(__file__).resolve().parents[2]
DS_CNN = REPO / "tests" / "models" / "ds_cnn.tflite"
sys.path.insert(0, str(REPO / "tests" / "compiler"))

from compiler_support import run_tflm  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("qemu-system-arm") is None
                                or shutil.which("arm-none-eabi-gcc") is None,
                                reason="qemu-system-arm or arm-none-eabi-gcc is not installed")


def test_tune_shows_costs_and_max_flash_0_keeps_weights_that_do_not_grow(tmp_path, capsys):
    log = tmp_path / "tune.json"
    assert cli.main(["tune", "--board", "mps2-an500", "--model", str(DS_CNN), "--log", str(log),
                     "-o", str(tmp_path / "fw"), "--trials", "3", "--repeat", "1",
                     "--max-flash", "0", "--no-fit-check", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["max_flash"] == 0
    assert report["flash_growth"] <= 0
    limited = []
    for s in report["signatures"]:
        for c in s["candidates"]:
            assert isinstance(c["flash"], int) and isinstance(c["scratch"], int), c
            assert isinstance(c["flash_growth"], int), c
        chosen = next(c for c in s["candidates"] if c["variant"] == s["best"])
        assert chosen["flash_growth"] <= 0, s
        if s["fastest"] != s["best"]:
            fastest = next(c for c in s["candidates"] if c["variant"] == s["fastest"])
            assert fastest["flash_growth"] > 0 and fastest["ticks"] < chosen["ticks"]
            assert "--max-flash" in s["why"]
            limited.append(s)
    # The CONV_2D signatures: dsp16 is the fastest and widens the filters; dsp is kept.
    conv = [s for s in limited if s["opcode"] == "CONV_2D"]
    assert conv and all(s["fastest"] == "dsp16" and s["best"] == "dsp" for s in conv), limited
    widened = next(c for c in conv[0]["candidates"] if c["variant"] == "dsp16")
    kept = next(c for c in conv[0]["candidates"] if c["variant"] == "dsp")
    assert widened["flash"] > kept["flash"]
    # The log records the choice within the budget, the fastest, and every candidate's cost.
    entry = TuningLog.load(log).entry("cortex-m7", conv[0]["signature"])
    assert entry["best"] == "dsp" and entry["fastest"] == "dsp16"
    assert entry["candidates"]["dsp16"]["flash"] == widened["flash"]
    assert entry["candidates"]["dsp16"]["flash_growth"] == widened["flash_growth"] > 0


def _tight_board(tmp_path: Path, weights_bytes: int) -> Path:
    """mps2-an500 whose weights go to a region of ``weights_bytes`` (carved out of the code
    SSRAM, so QEMU has memory there)."""
    path = tmp_path / "an500-tight.yaml"
    path.write_text(
        "name: an500-tight\nextends: mps2-an500\ntitle: AN500 with little room for weights\n"
        "memory:\n  regions:\n"
        "    code: {origin: 0x00000000, length: 2M, access: rx, description: code}\n"
        f"    wflash: {{origin: 0x00200000, length: {weights_bytes}, access: rx, "
        "description: weights}\n"
        "  placement:\n    weights: wflash\n")
    return path


def _room_for_half_the_growth(tmp_path: Path) -> tuple[Path, tuner.TuneReport]:
    """A tuning report on mps2-an500 with its fastest choices, and a board whose weights region
    holds the default kernels' weights plus half of what the fastest choices add."""
    report = tuner.tune(load_board("mps2-an500"), [DS_CNN], tmp_path / "fast.json",
                        out_dir=tmp_path / "fw", trials=3, repeat=1, check_fit=False)
    assert report.flash_growth > 4096, report.flash_growth  # dsp16's int16 filters
    default = api.build_firmware("mps2-an500", [DS_CNN], tmp_path / "default")
    room = default.size["totals"]["weights"] + report.flash_growth // 2
    return _tight_board(tmp_path, (room + 1023) // 1024 * 1024), report


def test_the_tuned_choice_is_brought_back_within_the_board(tmp_path):
    board_file, report = _room_for_half_the_growth(tmp_path)
    board = load_board_file(board_file)
    api.build_firmware(board, [DS_CNN], tmp_path / "default-tight")  # the default fits
    with pytest.raises(FitError):  # the fastest does not
        api.build_firmware(board, [DS_CNN], tmp_path / "fast-tight",
                           tuning=tmp_path / "fast.json")
    grown = report.flash_growth
    lines: list[str] = []
    tuner._fit_the_board(report, board, [DS_CNN], tmp_path / "fit", None, tmp_path / "t.json",
                         report.timer_hz, 1, 1, lines.append)
    assert any("overflow an500-tight by" in line for line in lines), lines
    assert 0 <= report.flash_growth < grown
    changed = [m for m in report.measured if m.why]
    assert changed and all("does not fit an500-tight" in m.why for m in changed)
    log = tuner._save(report, board, tmp_path / "fitted.json", report.timer_hz, 1, 1)
    build = api.build_firmware(board, [DS_CNN], tmp_path / "fitted", tuning=log)
    chosen = [e["kernel"] for e in build.models[0]["ops"] if e["kernel_choice"] == "tuned"]
    assert "dsp16" in chosen  # still some of the fastest: only what does not fit was taken back
    result = api.run_firmware(build)
    np.testing.assert_array_equal(result.outputs["ds_cnn"][0],
                                  run_tflm(DS_CNN, build.inputs("ds_cnn"))[0])


def test_copies_that_do_not_fit_together_are_timed_one_per_firmware(tmp_path):
    board_file, _ = _room_for_half_the_growth(tmp_path)
    board = load_board_file(board_file)
    lines: list[str] = []
    report = tuner.tune(board, [DS_CNN], tmp_path / "tight.json", out_dir=tmp_path / "fw-tight",
                        trials=3, repeat=1, progress=lines.append)
    assert any("trying 1 per firmware" in line for line in lines), lines
    # Copy 2 (dsp16 in every CONV_2D) does not fit even alone: never timed, never chosen.
    assert any("does not fit an500-tight even alone" in note for note in report.notes)
    for m in report.measured:
        assert m.reference.correct and m.reference.ticks
        assert m.best is not None and m.best.variant != "dsp16"
        if m.opcode == "CONV_2D":
            assert "does not fit" in m.candidates[2].problem
    build = api.build_firmware(board, [DS_CNN], tmp_path / "tuned", tuning=report.log)
    assert build.size["fits"]
