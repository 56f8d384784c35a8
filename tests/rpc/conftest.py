"""Shared by the RPC tests: one host RPC firmware with every test model, built once per worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from microbuild import api

MODELS = sorted((Path(__file__).resolve().parent.parent / "models").glob("*.tflite"))


@pytest.fixture(scope="session")
def host_rpc(tmp_path_factory):
    """A FirmwareBuild: the host board's RPC server with all five test models and a 64 KiB
    ALLOC pool (for the upload tests)."""
    return api.build_firmware("host", MODELS, tmp_path_factory.mktemp("host-rpc"),
                              executor="rpc", rpc_pool=64 * 1024)


@pytest.fixture
def device(host_rpc):
    with api.connect("host", host_rpc, timeout=2.0) as dev:
        yield dev
