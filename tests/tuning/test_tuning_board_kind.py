"""A tuning log says what kind of board it was measured on, and using measurements from an
emulator for real hardware is warned about in every command that takes --tuning; a log written
before the field existed is used as before, without a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from microbuild import cli
from microbuild.api import get_board
from microbuild.tuning import TuningLog

MODELS = Path(__file__).resolve().parent.parent / "models"
DS_CNN = MODELS / "ds_cnn.tflite"
WARNING = "measurements were made on an emulator (mps2-an500), and stm32f746 is real hardware"


@pytest.fixture(scope="module")
def qemu_log(tmp_path_factory) -> Path:
    """A log tuned for real on the emulated Cortex-M7 (mps2-an500)."""
    where = tmp_path_factory.mktemp("tune")
    log = where / "tune.json"
    assert cli.main(["tune", "--board", "mps2-an500", "--model", str(DS_CNN), "--log",
                     str(log), "-o", str(where / "fw"), "--repeat", "1", "--json"]) == 0
    return log


@pytest.fixture
def old_log(qemu_log, tmp_path) -> Path:
    """The same measurements as a log from before `board_kind` was recorded."""
    data = json.loads(qemu_log.read_text())
    for entries in data["cpus"].values():
        for entry in entries.values():
            del entry["board_kind"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    return path


def test_tune_records_the_board_kind(qemu_log):
    log = TuningLog.load(qemu_log)
    entries = list(log.cpus["cortex-m7"].values())
    assert entries and {e["board_kind"] for e in entries} == {"emulated"}
    assert {e["board"] for e in entries} == {"mps2-an500"}
    # Only a real board of that CPU gets the warning.
    assert log.emulator_warning(get_board("stm32f746"), "cortex-m7") is not None
    assert log.emulator_warning(get_board("mps2-an500"), "cortex-m7") is None
    assert log.emulator_warning(get_board("host"), "host") is None
    assert log.emulator_warning(get_board("nrf52840dk"), "cortex-m4") is None  # no M4 entries


def test_build_compile_generate_and_run_for_a_real_board_warn(qemu_log, tmp_path, capsys):
    commands = {
        "build": ["build", "--board", "stm32f746", "--model", str(DS_CNN), "-o",
                  str(tmp_path / "b")],
        "compile": ["compile", str(DS_CNN), "--board", "stm32f746", "-o", str(tmp_path / "c")],
        "generate": ["generate", "--board", "stm32f746", "--model", str(DS_CNN), "--format",
                     "make", "-o", str(tmp_path / "g")],
        # run builds, warns, then flashes: st-flash finds no probe here.
        "run": ["run", "--board", "stm32f746", "--model", str(DS_CNN), "--runner", "stlink",
                "-o", str(tmp_path / "r")],
    }
    for name, argv in commands.items():
        status = cli.main(argv + ["--tuning", str(qemu_log)])
        err = capsys.readouterr().err
        assert WARNING in err.replace("\n", " "), (name, err)
        assert err.count(WARNING) == 1, name
        assert f"--log {qemu_log}" in err  # says how to tune on the board
        assert status == (1 if name == "run" else 0), (name, err)
        assert "Traceback" not in err


def test_the_emulated_board_itself_gets_no_warning(qemu_log, tmp_path, capsys):
    assert cli.main(["build", "--board", "mps2-an500", "--model", str(DS_CNN), "-o",
                     str(tmp_path / "b"), "--tuning", str(qemu_log)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_an_old_log_without_board_kind_is_used_without_a_warning(old_log, tmp_path, capsys):
    assert cli.main(["build", "--board", "stm32f746", "--model", str(DS_CNN), "-o",
                     str(tmp_path / "b"), "--tuning", str(old_log), "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err
    assert json.loads(captured.out)["board"] == "stm32f746"
    # The winners are still applied.
    summary = json.loads((tmp_path / "b" / "firmware.src" / "ds_cnn" / "ds_cnn.json")
                         .read_text())
    assert any(op["kernel_choice"] == "tuned" for op in summary["ops"])
    assert TuningLog.load(old_log).emulator_warning(get_board("stm32f746"), "cortex-m7") is None
