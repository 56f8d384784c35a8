"""Shared by the validate tests: one host RPC firmware, built once per worker, with the project's
tiny_fc classifier and, where ../shared/models is here, hello_world_int8 (which has a float twin)
and person_detect (the Done-when model)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from test_shared_models import SHARED, shared_model  # noqa: E402,F401

ROOT = Path(__file__).resolve().parents[2]
TINY_FC = ROOT / "tests" / "models" / "tiny_fc.tflite"
SHARED_MODELS = ("hello_world_int8", "person_detect")


@pytest.fixture(scope="session")
def host_validate_firmware(tmp_path_factory):
    models = {"tiny_fc": str(TINY_FC)}
    models.update({name: str(SHARED / f"{name}.tflite") for name in SHARED_MODELS
                   if (SHARED / f"{name}.tflite").is_file()})
    return api.build_firmware("host", models, tmp_path_factory.mktemp("validate-host"),
                              executor="rpc")


@pytest.fixture
def host_device(host_validate_firmware):
    with api.connect("host", host_validate_firmware, timeout=5.0) as dev:
        yield dev
