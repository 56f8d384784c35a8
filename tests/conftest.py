"""Suite-wide set-up.

- A guard: no test file may sit where pytest silently skips it. pytest does not descend into
  folders matching `norecursedirs` (build, dist, venv, ...), so a tests/build/ folder would simply
  never run, and the suite would pass without it. Refuse to start instead.
- One compiled-object cache for the whole run (MICROBUILD_CACHE_DIR, microbuild/firmware/
  object_cache.py): the suite builds several hundred firmwares, and each would otherwise compile
  the same ~90 runtime files again. Every firmware is still built and linked; only identical
  compiles are shared. The controller makes the folder before pytest-xdist starts its workers,
  which inherit the variable. A variable set by the caller is left as it is."""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


_OWN_CACHE: list[str] = []


def pytest_configure(config):
    if os.environ.get("MICROBUILD_CACHE_DIR") or hasattr(config, "workerinput"):
        return
    folder = tempfile.mkdtemp(prefix="microbuild-test-objects-")
    os.environ["MICROBUILD_CACHE_DIR"] = folder
    _OWN_CACHE.append(folder)


def pytest_unconfigure(config):
    for folder in _OWN_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("MICROBUILD_CACHE_DIR", None)


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
