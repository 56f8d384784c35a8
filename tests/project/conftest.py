"""Fixtures of the project-generator tests; helpers are in project_support.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from project_support import PlatformIO, offline_platformio


@pytest.fixture(scope="session")
def pio(tmp_path_factory) -> PlatformIO:
    """`pio` with a core dir seeded in a temporary folder (one per pytest-xdist worker)."""
    return offline_platformio(tmp_path_factory.mktemp("platformio"))
