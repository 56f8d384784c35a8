"""What the validate tests import by name (a module of its own: ``from conftest import ...`` gets
whichever folder's conftest Python imported first when several test folders run together)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from test_shared_models import SHARED, shared_model  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
TINY_FC = ROOT / "tests" / "models" / "tiny_fc.tflite"
