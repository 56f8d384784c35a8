"""`tune` speaks of speed one way: "N.NNx faster than the reference" in its progress lines and a
"speed-up over the reference" column with the same N.NNx (never a time ratio beside a speed-up),
and it says once that under QEMU -icount the ticks are instruction counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from microbuild import cli
from microbuild.tuning import tuner
from microbuild.tuning.tuner import Candidate, Measured, TuneReport

SIGNATURE = "CONV_2D int8 1x49x10x1 -> 1x25x5x64 {stride 2}"


def _measured() -> Measured:
    # 1,293 ticks on the reference, 100 with dsp16: dsp16 is 12.93 times as fast.
    return Measured(signature=SIGNATURE, opcode="CONV_2D", model="kws.tflite", position=0,
                    candidates=[Candidate("reference", 1293, True),
                                Candidate("dsp16", 100, True)])


def test_progress_line_says_faster_than_the_reference():
    line = tuner._progress_line(1, 1, _measured())
    assert line.endswith("-> best dsp16, 12.93x faster than the reference")


@pytest.mark.parametrize("board,icount", [("mps2-an500", True), ("host", False)])
def test_table_column_is_the_same_speed_up(board, icount, tmp_path, monkeypatch, capsys):
    def fake_tune(board_, models, log, **kwargs):
        kwargs["progress"](tuner._progress_line(1, 1, _measured()))
        return TuneReport(board=board_.name, cpu="cortex-m7", timer_hz=25_000_000,
                          log=Path(log), measured=[_measured()], firmware=tmp_path / "fw.elf")

    monkeypatch.setattr(tuner, "tune", fake_tune)
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["tune", "--board", board, "--model", "kws.tflite"]) == 0
    captured = capsys.readouterr()
    assert "12.93x faster than the reference" in captured.err
    header = next(line for line in captured.out.splitlines() if "operator signature" in line)
    assert "speed-up over the reference" in header
    row = next(line for line in captured.out.splitlines() if "CONV_2D" in line)
    assert row.rstrip(" │┃|").endswith("12.93x")
    assert "0.08x" not in captured.out  # the inverse (a time ratio) appears nowhere
    said = "the ticks count instructions (40 per tick)" in captured.out
    assert said == icount
