"""Rewrite microbuild/schema/runners.json, the board loader's copy of what the runner classes
declare (their names and typed args), from the classes in microbuild/device/runners.

    .venv/bin/python tools/update_runner_declarations.py

tests/boards/test_runner_declarations.py fails while the file differs from what this writes.
"""

from pathlib import Path

from microbuild.boards.runner_declarations import RUNNERS_FILE
from microbuild.device.runners import built_in_declarations_text

PACKAGE = Path(__file__).resolve().parent.parent / "microbuild"

if __name__ == "__main__":
    (PACKAGE / RUNNERS_FILE).write_text(built_in_declarations_text())
    print(f"updated {PACKAGE / RUNNERS_FILE}")
