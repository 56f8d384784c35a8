"""A float MNIST-style classifier made offline: noisy 8x8 "digits" (10 fixed random stroke
patterns), a 64 -> 32 (ReLU) -> 10 MLP trained with numpy, written as a float32 .tflite with a
serving_default signature as converters write it (ai-edge-quantizer feeds data by signature)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models" / "generate"))
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


def write_example(folder: Path) -> tuple[np.ndarray, ...]:
    """The README's quantize walk-through, and test_quantize's models: the float classifier
    trained here (digits_float.tflite), a calibration set (calib.npy) and a labelled test set
    (test.npy, test_labels.npy), all made offline. Returns the trained weights."""
    folder.mkdir(parents=True, exist_ok=True)
    x, y = digits(600, seed=2)
    weights = train(x, y)
    float_classifier(folder / "digits_float.tflite", *weights)
    np.save(folder / "calib.npy", x[:200])
    test_x, test_y = digits(60, seed=3)
    np.save(folder / "test.npy", test_x)
    np.save(folder / "test_labels.npy", test_y)
    return weights


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "digits")
    write_example(target)
    print(f"wrote {target}/digits_float.tflite, calib.npy (200 samples), test.npy and "
          "test_labels.npy (60 labelled samples)")
