"""The tuning log: JSON keyed by CPU and op signature, merged across runs, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from microbuild import cli
from microbuild.tuning import TuningLog, TuningLogError


def _entry(best: str, ticks: int) -> dict:
    return {"best": best, "candidates": {best: {"ticks": ticks, "correct": True}}}


def test_save_merges_with_what_the_file_holds(tmp_path):
    path = tmp_path / "tune.json"
    first = TuningLog()
    first.record("cortex-m7", "CONV_2D a", _entry("dsp", 10))
    first.record("cortex-m7", "ADD b", _entry("portable", 5))
    first.save(path)
    # A second run (another model, another board of another CPU) keeps the first run's entries
    # and replaces only what it measured again.
    second = TuningLog()
    second.record("cortex-m7", "CONV_2D a", _entry("gemm", 8))
    second.record("cortex-m55", "CONV_2D a", _entry("mve", 3))
    second.save(path)
    log = TuningLog.load(path)
    assert log.best("cortex-m7", "CONV_2D a") == "gemm"
    assert log.best("cortex-m7", "ADD b") == "portable"
    assert log.best("cortex-m55", "CONV_2D a") == "mve"
    assert log.best("cortex-m4", "CONV_2D a") is None
    assert len(log) == 3
    assert json.loads(path.read_text())["format"] == "microbuild-tuning"
    assert not list(tmp_path.glob(".tune.json.*")), "the temporary file was left behind"


@pytest.mark.parametrize("text, message", [
    ("{", r"tune.json:1:2: not valid JSON"),
    ('{"format": "other"}', r'not a microbuild tuning log \(expected "format": '
                            r'"microbuild-tuning"'),
    ('{"format": "microbuild-tuning", "version": 9, "cpus": {}}', r"version 9; this microbuild "
                                                                  r"reads version 1"),
    ('{"format": "microbuild-tuning", "version": 1, "cpus": {"m7": {"sig": {"x": 1}}}}',
     r'cpus.m7\["sig"\] has no "best" variant name'),
])
def test_broken_logs_say_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "tune.json"
    path.write_text(text)
    with pytest.raises(TuningLogError, match=message):
        TuningLog.load(path)


def test_a_missing_log_says_how_to_make_one(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    model = Path(__file__).resolve().parent.parent / "models" / "ds_cnn.tflite"
    status = cli.main(["compile", str(model), "-o", str(tmp_path / "out"),
                       "--tuning", str(missing)])
    assert status != 0
    err = capsys.readouterr().err
    assert f"{missing}: no such tuning log (make one with `microbuild tune" in err
    assert "Traceback" not in err


def test_a_saved_log_has_the_permissions_of_any_new_file(tmp_path):
    """Written through a private temporary file, the log still ends up as a plain open() would
    create it under the user's umask (readable by the team that shares it), not 0600."""
    import os
    import stat

    previous = os.umask(0o022)
    try:
        path = TuningLog().save(tmp_path / "tune.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
