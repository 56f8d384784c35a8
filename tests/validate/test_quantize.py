"""`microbuild quantize`: float models through ai-edge-quantizer to full-integer ones, which
microbuild then runs bit-exact with TFLM and validates against the float model. A float
MNIST-style classifier is trained here (numpy, on synthetic 8x8 "digits") and written as a
.tflite, so the whole float -> int8 -> validated-with-labels path runs offline."""

from __future__ import annotations

import pytest

from microbuild import api
from microbuild.cli import main

pytest.importorskip("ai_edge_quantizer",
                    reason="ai-edge-quantizer (microbuild's [quantize] extra) quantizes")


@pytest.fixture(scope="module")
def quantized(quantized_models, host_validate_firmware):
    if quantized_models is None:
        pytest.skip("../shared/models/hello_world_float.tflite is not here (microbuild's CI "
                    "has it)")
    return {**quantized_models, "build": host_validate_firmware}


def test_hello_world_float_to_int8_shows_the_accuracy_cost(quantized):
    result = quantized["results"]["sine"]
    assert [(o.opcode, o.before, o.after) for o in result.ops] == \
        [("FULLY_CONNECTED", "float32 -> float32", "int8 -> int8")] * 3
    with api.connect("host", quantized["build"]) as dev:
        report = api.validate("host", result.model, quantized["root"] / "sine.npy",
                              float_model=result.float_model, device=dev)
    (figures,) = report.to_dict()["vs_float"]
    assert report.identical == report.ran == 100
    # Calibrated on the whole range: a few hundredths off sin(x), as TF's own int8 model.
    assert 0 < figures["max_abs_error"] < 0.1
    assert figures["snr_db"] > 20 and figures["cosine"] > 0.99


def test_float_digit_classifier_to_int8_validated_with_labels(quantized):
    result = quantized["results"]["digits"]
    assert [o.opcode for o in result.ops] == ["FULLY_CONNECTED", "FULLY_CONNECTED", "SOFTMAX"]
    assert all(o.after.startswith("int8") for o in result.ops)
    root = quantized["root"]
    with api.connect("host", quantized["build"]) as dev:
        report = api.validate("host", result.model, root / "test.npy",
                              labels=root / "test_labels.npy", float_model=result.float_model,
                              device=dev)
    labels = report.to_dict()["vs_labels"]
    assert report.identical == report.ran == 60
    assert labels["float_accuracy"] == pytest.approx(quantized["numpy_accuracy"])
    assert labels["float_accuracy"] > 0.9  # the classifier learned the digits
    assert abs(labels["deployed_accuracy"] - labels["float_accuracy"]) <= 0.05
    assert report.to_dict()["vs_float"][0]["top1_agreement"] >= 0.95


def test_cli_prints_what_it_did_per_op(quantized, tmp_path, capsys):
    root = quantized["root"]
    code = main(["quantize", str(root / "digits_float.tflite"), "--data",
                 str(root / "calib.npy"), "-o", str(tmp_path / "q16.tflite"),
                 "--int16-activations", "--per-tensor", "--no-validate"])
    shown = capsys.readouterr().out
    assert code == 0
    assert "int16 activations, int8 weights per tensor, calibrated on 200 samples" in shown
    assert "float32 -> float32 │ int16 -> int16" in shown
    from microbuild.model.reader import read_model

    graph = read_model(tmp_path / "q16.tflite")
    weights = [t for t in graph.tensors if t.is_constant and t.dtype == "int8"]
    assert weights and all(len(t.quant.scale) == 1 for t in weights)  # per tensor
    code = main(["quantize", str(root / "digits_int8.tflite"), "--data",
                 str(root / "calib.npy"), "-o", str(tmp_path / "again.tflite")])
    assert code == 1
    assert "is not float; quantize takes the float model" in capsys.readouterr().err
