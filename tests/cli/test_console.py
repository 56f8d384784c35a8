"""What microbuild prints is never hard-wrapped: a long path or command in a message stays on one
line, whatever the console width, so it can be copied and searched in a CI log or under `| tee`."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.table import Table

from microbuild.cli.console import MessageConsole

REPO = Path(__file__).resolve().parents[2]


def _long_path(root: Path) -> Path:
    path = root.joinpath(*(["a-folder-with-a-long-name-" + "x" * 34] * 5), "model.tflite")
    assert len(str(path)) >= 300
    return path


def test_an_error_naming_a_300_character_path_is_one_line_on_a_pipe(tmp_path):
    missing = _long_path(tmp_path)
    result = subprocess.run([sys.executable, "-m", "microbuild", "build", "--board", "mps2-an500",
                             "--model", str(missing)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and str(missing) in lines[0]
    assert "Traceback" not in result.stderr


def test_messages_are_not_wrapped_at_the_console_width_but_tables_keep_their_layout():
    stream = io.StringIO()
    console = MessageConsole(file=stream, width=80, highlight=False)
    message = "[yellow]warning:[/] " + "/very/long/path" * 30 + " was built elsewhere; going ahead"
    console.print(message)
    table = Table("column", "another column")
    table.add_row("a cell " * 20, "b")
    console.print(table)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "warning: " + "/very/long/path" * 30 + " was built elsewhere; going ahead"
    # The table is laid out in 80 columns: its long cell wraps inside its column, nothing is cut.
    assert all(len(line) <= 80 for line in lines[1:])
    assert " ".join(lines[1:]).count("cell") == 20
