"""Models made the way users make them (tests/models/users/, made by
tests/models/generate/keras_user_zoo.py and pytorch_user_zoo.py): for each, how it was made,
whether TFLM's interpreter (the tflite-micro wheel) runs it, whether microbuild compiles and runs
it on the host board, and whether the outputs are the same bytes as TFLM's over three seeded
input sets (one process each, state carried over as TFLM carries it). A refusal is shown with
the first line of its message.

Writes benchmarks/results/user_models.json and .md and prints the table.

    .venv/bin/python benchmarks/user_models.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

import numpy as np  # noqa: E402
from compiler_support import random_inputs, run_on_host, run_tflm_many  # noqa: E402

from microbuild.compiler import compile_model  # noqa: E402
from microbuild.errors import ModelError  # noqa: E402
from microbuild.model.reader import read_model  # noqa: E402

RESULTS = HERE / "results"
USERS = ROOT / "tests" / "models" / "users"

# How each file was made (the generator's docstrings say more).
MADE = {
    "mobilenet_v2": "Keras, MobileNetV2 blocks (BN, ReLU6, residual Add), 32x32x3",
    "mobilenet_v3": "Keras, MobileNetV3 pieces (hard-swish, squeeze-excite), 32x32x3",
    "yolo_like": "Keras, 2-scale detector: resize nearest, concat, reshape, sigmoid, permute",
    "landmarks": "Keras, PReLU/hard-swish landmark regressor, 21 points",
    "fc_autoencoder": "Keras, MLPerf-Tiny AE shape at 1/5 width with BatchNorm",
    "mnist_cnn": "Keras MNIST example CNN at 1/4 width",
    "gru": "Keras 3 GRU(10), default conversion (WHILE loop)",
    "lstm": "Keras 3 LSTM(10), default conversion (WHILE loop)",
    "layernorm": "Keras Dense + LayerNormalization x2 + residual",
    "dense_hybrid": "Keras MLP, dynamic-range quantization (no representative data)",
    "torch_attention": "PyTorch self-attention + LayerNorm + MLP, litert-torch",
    "upsampling_tile": "Keras 3 UpSampling2D + Conv2D (untrained)",
    "torch_cnn": "PyTorch conv-BN-ReLU, depthwise + Hardswish, litert-torch",
}
CONVERSION = {
    "_float": "float32 (converter defaults)",
    "_float16": "float16 weights (supported_types=[tf.float16])",
    "_uint8": "int8, inference_input_type = inference_output_type = tf.uint8",
    "_uint8_in": "int8, inference_input_type = tf.uint8, float32 output",
    "_int8_float_io": "int8 full-integer, float32 I/O",
    "_int8": "int8 (PT2E, litert-torch)",
    "_hybrid": "dynamic-range",
}


def _how(stem: str) -> str:
    base = next((k for k in sorted(MADE, key=len, reverse=True) if stem.startswith(k)), "")
    suffix = next((s for s in sorted(CONVERSION, key=len, reverse=True) if stem.endswith(s)), "")
    return f"{MADE.get(base, '?')}; {CONVERSION.get(suffix, '?')}"


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    # a compile refusal's first line names the file; the reasons follow
    return lines[1] if len(lines) > 1 and lines[0].endswith("cannot compile this model:") \
        else lines[0].split(": ", 1)[-1]


def measure(path: Path, workdir: Path) -> dict:
    sets = random_inputs(path, 3, seed=26)
    row = {"model": path.stem, "how": _how(path.stem), "bytes": path.stat().st_size,
           "ops": len(read_model(path).operators)}
    try:
        want = run_tflm_many(path, sets)
        row["tflm"] = "yes"
    except Exception as exc:  # noqa: BLE001 - TFLM reports a refusal as RuntimeError
        want, row["tflm"] = None, f"no: {str(exc).splitlines()[0]}"
    try:
        compile_model(path)
    except ModelError as exc:
        row["microbuild"] = f"refused: {_first_line(exc)}"
        row["bit_exact"] = "-"
        return row
    got = run_on_host(path, sets, cc="gcc", workdir=workdir / path.stem)
    row["microbuild"] = "yes"
    if want is None:
        row["bit_exact"] = "- (no TFLM result)"
        return row
    same = all(np.asarray(w).reshape(g.shape).tobytes() == g.tobytes() and
               np.asarray(w).dtype == g.dtype
               for w_set, g_set in zip(want, got) for w, g in zip(w_set, g_set))
    row["bit_exact"] = "yes" if same else "NO"
    return row


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(USERS.glob("*.tflite")):
            rows.append(measure(path, Path(tmp)))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "user_models.json").write_text(json.dumps(rows, indent=1) + "\n")
    runs_in_tflm = [r for r in rows if r["tflm"] == "yes"]
    lines = [
        "# Models made the way users make them",
        "",
        "`.venv/bin/python benchmarks/user_models.py` over tests/models/users/ (generators: "
        "tests/models/generate/keras_user_zoo.py, pytorch_user_zoo.py). TFLM: the tflite-micro "
        "wheel's interpreter; microbuild: compiled and run on the host board (gcc); bit-exact: "
        "the same output bytes as TFLM over 3 seeded input sets.",
        "",
        f"TFLM runs {len(runs_in_tflm)} of {len(rows)}; microbuild runs "
        f"{sum(r['microbuild'] == 'yes' for r in runs_in_tflm)} of those, "
        f"{sum(r['bit_exact'] == 'yes' for r in runs_in_tflm)} bit-exact.",
        "",
        "| model | how it was made | bytes | ops | TFLM runs it? | microbuild runs it? | "
        "bit-exact? |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['model']} | {r['how']} | {r['bytes']:,} | {r['ops']} | {r['tflm']} | "
                     f"{r['microbuild']} | {r['bit_exact']} |")
    text = "\n".join(lines) + "\n"
    (RESULTS / "user_models.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
