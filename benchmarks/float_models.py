"""TFLM's float32 examples on the emulated Cortex-M7 (mps2-an500), side by side with TFLM built
for the M7 (the anchor firmware in ../shared/anchors/tflm, reference kernels): instructions per
inference (`-icount shift=0`), RAM (microbuild's workspace + state against TFLM's arena) and
whether the outputs are the same bytes. Besides TFLM's three float examples, the float test models
of tests/models whose operators carry the float kernels' inner loops (CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, LSTM). One RPC firmware holds them all; each is run from reset state on one
seeded input, as the anchor firmware runs it.

Writes benchmarks/results/float_models.json and .md and prints the table.

    .venv/bin/python benchmarks/float_models.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

from compiler_support import random_inputs  # noqa: E402

from microbuild import api  # noqa: E402
from microbuild.compiler import compile_model  # noqa: E402

RESULTS = HERE / "results"
SHARED = ROOT.parent / "shared" / "models"
ANCHORS = ROOT.parent / "shared" / "anchors" / "tflm"
BOARD = "mps2-an500"
TESTS = ROOT / "tests" / "models"
MODELS = [SHARED / f"{name}.tflite"
          for name in ("hello_world_float", "audio_preprocessor_float", "trained_lstm")] + [
    TESTS / "ops" / "float_dense.tflite"] + [
    TESTS / "float" / f"{name}.tflite"
    for name in ("conv_same_relu", "conv_valid_stride2_nobias", "depthwise_same",
                 "depthwise_mult2_stride2_relu", "fc_relu_batch3", "lstm_batch2_clip")]


def measure() -> list[dict]:
    sys.path.insert(0, str(ANCHORS))
    import run as anchor

    models = {f"m{k}": path for k, path in enumerate(MODELS)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="mb-float-") as tmp:
        build = api.build_firmware(BOARD, {p: str(m) for p, m in models.items()},
                                   Path(tmp) / "fw", executor="rpc")
        with api.connect(BOARD, build, timeout=120) as dev:
            for prefix, model in models.items():
                x = random_inputs(model, 1, seed=5)[0]
                dev.reset(prefix)
                outputs, ticks = dev.run_timed(prefix, x)
                tflm = anchor.run(str(model), BOARD, "ref", inputs=x)
                compiled = compile_model(model)
                same = all(a.tobytes() == b.reshape(a.shape).astype(a.dtype).tobytes()
                           for a, b in zip(outputs, tflm["outputs"]))
                rows.append({"model": model.stem,
                             "instructions": round(ticks * 1e9 / dev.info.timer_hz),
                             "tflm_instructions": tflm["instructions"],
                             "workspace": compiled.workspace_bytes,
                             "state": compiled.state_bytes,
                             "tflm_arena": tflm["arena_used_bytes"], "same_bytes": same})
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [f"# float32 models on {BOARD}: microbuild vs TFLM (reference kernels) on the same "
             "core", "",
             "| model | bit-exact | instructions (TFLM) | RAM: workspace + state (TFLM arena) |",
             "|---|---|---|---|"]
    for r in rows:
        ram = r["workspace"] + r["state"]
        lines.append(
            f"| {r['model']} | {'yes' if r['same_bytes'] else '**NO**'} | "
            f"{r['instructions']:,} ({r['tflm_instructions']:,}, "
            f"{r['instructions'] / r['tflm_instructions']:.2f}x) | "
            f"{r['workspace']:,} + {r['state']:,} ({r['tflm_arena']:,}, "
            f"{ram / r['tflm_arena']:.2f}x) |")
    return "\n".join(lines) + "\n"


def main() -> int:
    if not (ANCHORS / "run.py").is_file() or not SHARED.is_dir():
        print(f"needs {SHARED} and the TFLM anchor firmwares in {ANCHORS}", file=sys.stderr)
        return 2
    rows = measure()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "float_models.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = markdown(rows)
    (RESULTS / "float_models.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
