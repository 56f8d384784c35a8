"""Suite-wide guard: no test file may sit where pytest silently skips it.

pytest does not descend into folders matching `norecursedirs` (build, dist, venv, ...), so a
tests/build/ folder would simply never run, and the suite would pass without it. Refuse to start
instead."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def pytest_sessionstart(session):
    patterns = session.config.getini("norecursedirs")
    hidden = []
    for path in TESTS.rglob("test_*.py"):
        folders = path.relative_to(TESTS).parts[:-1]
        if any(fnmatch.fnmatch(folder, pattern) for folder in folders for pattern in patterns):
            hidden.append(str(path.relative_to(TESTS)))
    if hidden:
        raise pytest.UsageError(
            "pytest would never run these test files (their folder matches norecursedirs "
            f"{patterns}): {', '.join(sorted(hidden))}; rename the folder")
