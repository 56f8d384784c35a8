"""`microbuild run` (and `build --run`) of your own application (executor app) on a real board:
nothing can be started here, so the answer names `microbuild flash` and `microbuild monitor`
with the firmware that was built (not `--run`, an option of another command)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from microbuild import cli
from microbuild.boards import load_board


def test_run_app_on_stm32f746_names_flash_and_monitor(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "model.tflite").write_bytes(b"")
    (tmp_path / "microbuild.yaml").write_text(
        "board: stm32f746\nmodels: [model.tflite]\nsources: [src/]\n")
    elf = tmp_path / "build" / "my fw" / "firmware.elf"
    built = []

    def build_incrementally(args, executor, inputs):  # the build itself is tested elsewhere
        built.append(executor)
        return SimpleNamespace(board=load_board("stm32f746"), elf=elf, executor=executor)

    monkeypatch.setattr("microbuild.cli.run.build_incrementally", build_incrementally)
    monkeypatch.setenv("COLUMNS", "300")
    assert cli.main(["run"]) == 1
    assert built == ["app"]
    err = capsys.readouterr().err
    assert f"microbuild flash --board stm32f746 --firmware '{elf}'" in err
    assert "microbuild monitor --board stm32f746" in err
    assert "--run" not in err and "Traceback" not in err
