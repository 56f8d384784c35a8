"""The board loader's copy of the runner declarations (schema/runners.json) is what the runner
classes declare, and a runner class defined at run time is known to board files too."""

from __future__ import annotations

import json
from pathlib import Path

from microbuild.boards.runner_declarations import (RUNNERS_FILE, RunnerArg, flash_entry_problems,
                                                   runner_declarations, undeclare)
from microbuild.device.runners import RUNNERS, Runner, built_in_declarations_text

PACKAGE = Path(__file__).resolve().parents[2] / "microbuild"


def test_runners_json_is_what_the_runner_classes_declare():
    assert (PACKAGE / RUNNERS_FILE).read_text() == built_in_declarations_text(), (
        "microbuild/schema/runners.json is stale: run .venv/bin/python "
        "tools/update_runner_declarations.py")
    names = set(json.loads((PACKAGE / RUNNERS_FILE).read_text())["runners"])
    assert names == set(RUNNERS) and {"openocd", "qemu", "host"} <= names
    assert list(runner_declarations()["openocd"].arguments)[0] == "program"  # inherited


def test_a_runner_class_defined_at_run_time_is_checked_with_its_args():
    entry = [{"runner": "bench", "args": {"rate": "fast"}}]
    ((key_path, message),) = flash_entry_problems(entry)
    assert key_path == ("flash", 0, "runner") and message.startswith("no runner 'bench'")
    type("BenchRunner", (Runner,), {"name": "bench", "__module__": "somewhere",
                                    "arguments": (RunnerArg("rate", (int,), "samples/s"),)})
    try:
        assert flash_entry_problems(entry) == [(
            ("flash", 0, "args", "rate"),
            "runner bench: `rate` takes an integer, not the string 'fast' (samples/s)")]
    finally:
        RUNNERS.pop("bench")
        undeclare("bench")
    assert "no runner 'bench'" in flash_entry_problems(entry)[0][1]
