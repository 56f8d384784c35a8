"""Small CLI behaviours: `compile` derives the C prefix from the file name as build and generate
do, and every path printed inside a suggested shell command is shell-quoted, so a folder with
spaces survives a copy and paste."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from microbuild.cli import main
from microbuild.tuning import TuningLog
from microbuild.compiler.tuning_log import TuningLogError

MODELS = Path(__file__).resolve().parents[1] / "models"


@pytest.fixture(autouse=True)
def isolated_search_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MICROBUILD_BOARDS_PATH", raising=False)


def test_compile_prefix_comes_from_the_file_name(tmp_path, capsys):
    model = tmp_path / "2-layer net.tflite"
    shutil.copy(MODELS / "tiny_fc.tflite", model)
    assert main(["compile", str(model), "-o", str(tmp_path / "c")]) == 0
    # The rule build and generate use: lower case, C identifier, no leading digit.
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        "m_2_layer_net.c", "m_2_layer_net.h", "m_2_layer_net_weights.c"]
    assert "m_2_layer_net_run(" in (tmp_path / "c" / "m_2_layer_net.h").read_text()
    assert main(["compile", str(model), "-o", str(tmp_path / "k"), "--prefix", "kws"]) == 0
    assert (tmp_path / "k" / "kws.h").is_file()


def command_in(line: str, marker: str) -> list[str]:
    """The words of the shell command that follows ``marker`` in a printed line (up to the
    closing backquote when the command is quoted that way)."""
    text = line.split(marker, 1)[1]
    return shlex.split(text.split("`", 1)[0] if marker.endswith("`") else text)


def test_generate_prints_a_quoted_cd(tmp_path, capsys):
    out = tmp_path / "my projects" / "kws app"
    assert main(["generate", "--board", "host", "--model", str(MODELS / "tiny_fc.tflite"),
                 "--format", "make", "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    build = next(line for line in lines if line.startswith("build: "))
    words = command_in(build, "build: ")
    assert words[:3] == ["cd", str(out), "&&"], build


def test_board_hints_quote_the_board_file(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "my boards"
    assert main(["boards", "new", "my-f746", "--from", "stm32f746", "-o", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert command_in(printed, "then `") == ["microbuild", "boards", "validate",
                                             str(folder / "my-f746.yaml")]
    written = (folder / "my-f746.yaml").read_text()
    assert command_in(written, "# `") == ["microbuild", "boards", "validate",
                                          str(folder / "my-f746.yaml")]
    # A broken board in that folder: boards list names the command that lists its problems.
    (folder / "broken.yaml").write_text("name: broken\nextends: stm32f746\ntitle: [1]\n")
    monkeypatch.setenv("MICROBUILD_BOARDS_PATH", str(folder))
    assert main(["boards", "list"]) == 0
    err = capsys.readouterr().err
    assert command_in(err, "; `") == ["microbuild", "boards", "validate",
                                      str(folder / "broken.yaml")]


def test_tuning_log_hint_quotes_the_log(tmp_path):
    log = tmp_path / "my logs" / "tune.json"
    with pytest.raises(TuningLogError) as info:
        TuningLog.load(log)
    assert command_in(str(info.value), "(make one with `")[-2:] == ["--log", str(log)]
