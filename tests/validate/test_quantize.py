"""`microbuild quantize`: float models through ai-edge-quantizer to full-integer ones, which
microbuild then runs bit-exact with TFLM and validates against the float model. A float
MNIST-style classifier is trained here (numpy, on synthetic 8x8 "digits") and written as a
.tflite, so the whole float -> int8 -> validated-with-labels path runs offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, shared_model
from microbuild import api
from microbuild.cli import main

pytest.importorskip("ai_edge_quantizer",
                    reason="ai-edge-quantizer (microbuild's [quantize] extra) quantizes")
sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402

CLASSES, PIXELS, HIDDEN = 10, 64, 32


def digits(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy 8x8 images of 10 fixed random strokes patterns, values in [0, 1]."""
    prototypes = np.random.default_rng(0).uniform(0, 1, (CLASSES, PIXELS)) > 0.6
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, n)
    images = prototypes[labels] * 0.8 + rng.normal(0, 0.25, (n, PIXELS))
    return np.clip(images, 0, 1).astype(np.float32), labels


def train(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """A 64 -> 32 (ReLU) -> 10 MLP by plain gradient descent on softmax cross-entropy."""
    rng = np.random.default_rng(1)
    w1, b1 = rng.normal(0, 0.2, (PIXELS, HIDDEN)), np.zeros(HIDDEN)
    w2, b2 = rng.normal(0, 0.2, (HIDDEN, CLASSES)), np.zeros(CLASSES)
    onehot = np.eye(CLASSES)[y]
    for _ in range(300):
        h = np.maximum(x @ w1 + b1, 0)
        logits = h @ w2 + b2
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - onehot) / len(x)
        gh = (g @ w2.T) * (h > 0)
        w2 -= 0.5 * h.T @ g
        b2 -= 0.5 * g.sum(0)
        w1 -= 0.5 * x.T @ gh
        b1 -= 0.5 * gh.sum(0)
    return w1, b1, w2, b2


def float_classifier(path: Path, w1, b1, w2, b2) -> Path:
    """The MLP as a float32 .tflite with a serving_default signature, as converters write it."""
    import flatbuffers

    b = ModelBuilder()
    x = b.tensor("x", (1, PIXELS), "float32")
    h = b.tensor("hidden", (1, HIDDEN), "float32")
    logits = b.tensor("logits", (1, CLASSES), "float32")
    probs = b.tensor("probs", (1, CLASSES), "float32")
    b.operator("FULLY_CONNECTED", [x, b.constant("w1", w1.T.astype(np.float32)),
                                   b.constant("b1", b1.astype(np.float32))], [h],
               "FullyConnectedOptions", fusedActivationFunction=1)  # RELU
    b.operator("FULLY_CONNECTED", [h, b.constant("w2", w2.T.astype(np.float32)),
                                   b.constant("b2", b2.astype(np.float32))], [logits],
               "FullyConnectedOptions", fusedActivationFunction=0)
    b.operator("SOFTMAX", [logits], [probs], "SoftmaxOptions", beta=1.0)
    schema = b.schema
    model = schema.ModelT.InitFromPackedBuf(b.build(inputs=[x], outputs=[probs]), 0)
    signature = schema.SignatureDefT()
    signature.signatureKey, signature.subgraphIndex = "serving_default", 0
    for side, name, index in (("inputs", "x", x), ("outputs", "probs", probs)):
        entry = schema.TensorMapT()
        entry.name, entry.tensorIndex = name, index
        setattr(signature, side, [entry])
    model.signatureDefs = [signature]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    path.write_bytes(bytes(builder.Output()))
    return path


@pytest.fixture(scope="module")
def quantized(tmp_path_factory):
    """Both float models quantized, and one host firmware with both int8 models."""
    root = tmp_path_factory.mktemp("quantize")
    x, y = digits(600, seed=2)
    weights = train(x, y)
    mnist = float_classifier(root / "digits_float.tflite", *weights)
    np.save(root / "calib.npy", x[:200])
    test_x, test_y = digits(60, seed=3)
    np.save(root / "test.npy", test_x)
    np.save(root / "test_labels.npy", test_y)
    hidden = np.maximum(test_x @ weights[0] + weights[1], 0)
    numpy_accuracy = float(np.mean(np.argmax(hidden @ weights[2] + weights[3], 1) == test_y))

    sine = np.linspace(0, 2 * np.pi, 100, dtype=np.float32).reshape(100, 1, 1)
    np.save(root / "sine.npy", sine)
    results = {
        "digits": api.quantize(mnist, root / "calib.npy", root / "digits_int8.tflite"),
        "sine": api.quantize(shared_model("hello_world_float"), root / "sine.npy",
                             root / "sine_int8.tflite"),
    }
    build = api.build_firmware("host", [r.model for r in results.values()],
                               root / "fw", executor="rpc")
    return {"root": root, "results": results, "build": build,
            "numpy_accuracy": numpy_accuracy}


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
