"""Shared by the validate tests: one host RPC firmware, built once per worker, with the project's
tiny_fc classifier and, where ../shared/models is here, hello_world_int8 (which has a float twin),
person_detect (the Done-when model) and the two models test_quantize makes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
from validate_support import ROOT, SHARED, TINY_FC, shared_model  # noqa: E402,F401
SHARED_MODELS = ("hello_world_int8", "person_detect")


@pytest.fixture(scope="session")
def quantized_models(tmp_path_factory):
    """The float digit classifier (trained here) and hello_world_float quantized to int8 with
    ai-edge-quantizer, with their calibration and test sets; None without the quantizer or
    ../shared/models. They go into the one host firmware below rather than one of their own."""
    import numpy as np

    floating = SHARED / "hello_world_float.tflite"
    try:
        import ai_edge_quantizer  # noqa: F401
    except ImportError:
        return None
    if not floating.is_file():
        return None
    from digits_model import write_example

    root = tmp_path_factory.mktemp("quantize")
    weights = write_example(root)  # what the README's walk-through writes
    mnist = root / "digits_float.tflite"
    test_x, test_y = np.load(root / "test.npy"), np.load(root / "test_labels.npy")
    hidden = np.maximum(test_x @ weights[0] + weights[1], 0)
    numpy_accuracy = float(np.mean(np.argmax(hidden @ weights[2] + weights[3], 1) == test_y))
    sine = np.linspace(0, 2 * np.pi, 100, dtype=np.float32).reshape(100, 1, 1)
    np.save(root / "sine.npy", sine)
    results = {
        "digits": api.quantize(mnist, root / "calib.npy", root / "digits_int8.tflite"),
        "sine": api.quantize(floating, root / "sine.npy", root / "sine_int8.tflite"),
    }
    return {"root": root, "results": results, "numpy_accuracy": numpy_accuracy}


@pytest.fixture(scope="session")
def host_validate_firmware(tmp_path_factory, quantized_models):
    models = {"tiny_fc": str(TINY_FC)}
    models.update({name: str(SHARED / f"{name}.tflite") for name in SHARED_MODELS
                   if (SHARED / f"{name}.tflite").is_file()})
    if quantized_models is not None:
        models.update({r.model.stem: str(r.model) for r in quantized_models["results"].values()})
    return api.build_firmware("host", models, tmp_path_factory.mktemp("validate-host"),
                              executor="rpc")


@pytest.fixture
def host_device(host_validate_firmware):
    with api.connect("host", host_validate_firmware, timeout=5.0) as dev:
        yield dev
