"""The real models of ../shared/models side by side with TFLM + CMSIS-NN (issue 27): on each of
mps2-an386 (M4F), mps2-an500 (M7) and mps3-an547 (M55), microbuild's default kernels over RPC
(one firmware per board holding every model) and the TFLM anchor firmware
(../shared/anchors/tflm, benchmarks/tflm_anchor.py) in the same run, on the same seeded input:
instructions per inference under QEMU `-icount shift=0`, the ratio, and whether the outputs are
equal.

The default models are every model of ../shared/models except the 224x224 MobileNetV2 (minutes
per board: name it to include it): the int8 / int16 ones of the issue's table, the float32 ones
and the audio front ends. Writes
benchmarks/results/shared_models_vs_tflm.{json,md} and prints the table.

    .venv/bin/python benchmarks/shared_models_vs_tflm.py [--boards B ...] [MODEL.tflite ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tflm_anchor import ANCHOR_BOARDS, run_anchor  # noqa: E402

SHARED = HERE.parent.parent / "shared" / "models"
DEFAULT = ("micro_speech_quantized", "micro_speech_lstm", "trained_lstm_int8",
           "dtln_noise_suppression", "keyword_scrambled", "keyword_scrambled_8bit",
           "person_detect", "hello_world_int8", "audio_preprocessor_int8",
           "audio_preprocessor_float", "hello_world_float", "simple_add_model", "trained_lstm")
RESULTS = HERE / "results"
WORK = HERE.parent / "build" / "shared_models_vs_tflm"
SEED = 0


def measure(board: str, models: dict[str, Path]) -> list[dict]:
    """The rows of ``models`` on ``board``; models that do not fit one firmware together (the
    M55's 512 KiB ITCM) are measured in two halves."""
    from microbuild import api
    from microbuild.errors import FitError
    from microbuild.tensor_files import random_inputs

    try:
        build = api.build_firmware(board, {name: str(p) for name, p in models.items()},
                                   WORK / board, executor="rpc")
    except FitError:
        if len(models) == 1:
            raise
        names = list(models)
        half = len(names) // 2
        return (measure(board, {n: models[n] for n in names[:half]})
                + measure(board, {n: models[n] for n in names[half:]}))
    rows = []
    with api.connect(board, build, timeout=120) as dev:
        for name, path in models.items():
            x = random_inputs(dev.specs(name), SEED)
            outputs, ticks = dev.run_timed(name, x)
            ours = round(ticks * 1e9 / (dev.info.timer_hz or 1))
            anchor = run_anchor(board, path, x, outputs)
            rows.append({"board": board, "model": name, "instructions": ours,
                         "tflm_instructions": anchor["instructions"],
                         "ratio": ours / anchor["instructions"],
                         "outputs_equal": anchor.get("outputs_equal")})
            print(f"{board:11} {name:28} {ours:>12,} {anchor['instructions']:>12,} "
                  f"{ours / anchor['instructions']:6.2f}  outputs equal: "
                  f"{anchor.get('outputs_equal')}", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--boards", nargs="+", default=list(ANCHOR_BOARDS))
    args = parser.parse_args()
    paths = args.models or [SHARED / f"{name}.tflite" for name in DEFAULT]
    models = {p.stem: p for p in paths}
    rows = [row for board in args.boards for row in measure(board, models)]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "shared_models_vs_tflm.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# ../shared/models side by side with TFLM + CMSIS-NN",
             "",
             "Instructions per inference under QEMU `-icount shift=0`, microbuild's default "
             "kernels and the TFLM + CMSIS-NN anchor firmware, same board, same run, same seeded "
             "input. Written by `benchmarks/shared_models_vs_tflm.py`.",
             "",
             "| model | " + " | ".join(args.boards) + " |",
             "|---|" + "---|" * len(args.boards)]
    for name in models:
        cells = []
        for board in args.boards:
            r = next(r for r in rows if r["board"] == board and r["model"] == name)
            equal = "" if r["outputs_equal"] else " (outputs differ)"
            cells.append(f"{r['instructions']:,} / {r['tflm_instructions']:,} = "
                         f"{r['ratio']:.2f}{equal}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (RESULTS / "shared_models_vs_tflm.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
