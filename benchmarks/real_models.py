"""Real models made by other people: does microbuild compile them, bit-exact with TFLM, and at
what cost? The coverage table of the real-world-models issues.

For every .tflite in ../shared/models (TFLM's own example models) and in any folder or file given
on the command line, it records:
- the operators (by opcode, with counts);
- compiled, or the first lines of the refusal;
- bit-exact with TFLM on the host (the generated C built with gcc, seeded inputs over the full
  input range, several input sets) and on mps2-an500 in QEMU with the reference kernels and with
  the board's default kernels;
- workspace bytes against the smallest arena TFLM works with (found by trial in child processes,
  benchmarks/tflm_reference.py);
- instructions per inference on mps2-an500 (`-icount shift=0`: timer ticks x 1e9 / timer Hz)
  with the reference kernels and the defaults, beside TFLM + CMSIS-NN's on the same board and
  input (../shared/anchors/tflm, run in the same run: benchmarks/tflm_anchor.py), with the ratio.

A float32 model (the "float32" column) is compared on mps2-an500 with TFLM built for the Cortex-M7
(the anchor firmware with TFLM's reference kernels, whose fused multiply-adds differ from x86's),
each input set from reset state as that firmware runs it.

Writes benchmarks/results/real_models.json and .md and prints the table.

    .venv/bin/python benchmarks/real_models.py [FOLDER_OR_MODEL ...] [--no-qemu] [--sets N]
        [--update]

--update measures only the models given and replaces their rows in the existing results (the
others stay as last measured), e.g. after a change to the float kernels:
`benchmarks/real_models.py --update ../shared/models/*float*.tflite ../shared/models/trained_lstm.tflite`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

from compiler_support import random_inputs, run_on_host, run_tflm_many  # noqa: E402
from tflm_anchor import run_anchor  # noqa: E402
from tflm_reference import smallest_tflm_arena  # noqa: E402

from microbuild import api  # noqa: E402
from microbuild.compiler import compile_model  # noqa: E402
from microbuild.errors import MicrobuildError, ModelError  # noqa: E402
from microbuild.model.reader import read_model  # noqa: E402

RESULTS = HERE / "results"
SHARED = ROOT.parent / "shared" / "models"
ANCHORS = ROOT.parent / "shared" / "anchors" / "tflm"
BOARD = "mps2-an500"


def _computes_in_float32(graph) -> bool:
    return any(graph.tensors[t].dtype == "float32" for op in graph.operators
               if op.opcode not in ("QUANTIZE", "DEQUANTIZE") for t in op.outputs)


def _tflm_on_arm(model: Path, sets) -> list:
    """TFLM's outputs for each input set (each from a fresh interpreter), from the anchor
    firmware with TFLM's reference kernels on mps2-an500."""
    sys.path.insert(0, str(ANCHORS))
    import run as anchor

    results = [anchor.run(str(model), BOARD, "ref", inputs=x) for x in sets]
    return [r["outputs"] for r in results]


def find_models(args: list[str]) -> list[Path]:
    places = [Path(a) for a in args] or [SHARED]
    models = []
    for place in places:
        models += sorted(place.glob("*.tflite")) if place.is_dir() else [place]
    return models


def _equal(got: list[list[np.ndarray]], want: list[list[np.ndarray]]) -> bool:
    return all(a.dtype == np.asarray(b).dtype and np.array_equal(a, np.asarray(b).reshape(a.shape))
               for gs, ws in zip(got, want) for a, b in zip(gs, ws))


def _on_board(model: Path, sets, expected, kernels: str, work: Path,
              from_reset: bool = False) -> dict:
    """Outputs equal to TFLM's, and instructions of one inference, with 'reference' or
    'default' kernels; ``from_reset``: each input set starts from reset state."""
    variants = {"m": {"*": "reference"}} if kernels == "reference" else None
    build = api.build_firmware(BOARD, {"m": str(model)}, work / kernels, executor="rpc",
                               model_variants=variants)
    with api.connect(BOARD, build, timeout=120) as dev:
        got, ticks = [], None
        for x in sets:
            if from_reset:
                dev.reset("m")
            outputs, t = dev.run_timed("m", x)
            got.append(outputs)
            ticks = t if ticks is None else min(ticks, t)
        instructions = round(ticks * 1e9 / dev.info.timer_hz)
    return {"bit_exact": _equal(got, expected), "instructions": instructions}


def measure(model: Path, n_sets: int, qemu: bool) -> dict:
    row: dict = {"model": model.stem, "bytes": model.stat().st_size}
    try:
        graph = read_model(model)
        row["operators"] = dict(sorted(Counter(op.opcode if op.opcode != "CUSTOM" else
                                               op.options.get("custom_code", "CUSTOM")
                                               for op in graph.operators).items()))
        compiled = compile_model(model)
    except ModelError as err:
        row["compiled"] = False
        row["why"] = " / ".join(line.strip() for line in str(err).splitlines()[1:4])
        return row
    row.update(compiled=True, workspace=compiled.workspace_bytes, weights=compiled.weights_bytes,
               state=compiled.state_bytes, notes=compiled.summary()["notes"],
               float32=_computes_in_float32(graph))
    sets = random_inputs(model, n_sets, seed=0)
    expected = run_tflm_many(model, sets)
    with tempfile.TemporaryDirectory(prefix="mb-real-") as tmp:
        row["host_bit_exact"] = _equal(run_on_host(model, sets, workdir=Path(tmp)), expected)
        on_arm = expected
        if qemu and row["float32"] and (ANCHORS / "run.py").is_file():
            on_arm = _tflm_on_arm(model, sets)
        if qemu:
            for kernels in ("reference", "default"):
                try:
                    result = _on_board(model, sets, on_arm, kernels, Path(tmp),
                                       from_reset=on_arm is not expected)
                except MicrobuildError as err:
                    result = {"error": str(err).splitlines()[0]}
                row[f"an500_{kernels}"] = result
            # TFLM + CMSIS-NN on the same board and first input set, in the same run.
            try:
                row["an500_tflm_cmsis_nn"] = run_anchor(BOARD, model, sets[0], on_arm[0])
            except Exception as err:  # noqa: BLE001 - the anchor failing is a row entry
                row["an500_tflm_cmsis_nn"] = {"error": str(err).splitlines()[0]}
    try:
        row["tflm_arena"] = smallest_tflm_arena(model)
    except Exception as err:  # noqa: BLE001 - TFLM failing is a row entry, not a crash
        row["tflm_arena"] = None
        row["tflm_error"] = str(err).splitlines()[0]
    return row


def _yes(value) -> str:
    return {True: "yes", False: "**NO**", None: "-"}.get(value, str(value))


def markdown(rows: list[dict]) -> str:
    compiled = sum(r.get("compiled", False) for r in rows)
    exact = sum(bool(r.get("host_bit_exact")) and all(
        r.get(f"an500_{k}", {}).get("bit_exact", True) for k in ("reference", "default"))
        for r in rows)
    lines = [f"# Real models: {compiled} of {len(rows)} compile, {exact} bit-exact with TFLM "
             f"on host and {BOARD}", "",
             "| model | operators | compiled | float32 | bit-exact host / an500 ref / an500 "
             "default | RAM: workspace + state / TFLM arena | instructions reference -> default "
             "(an500) | TFLM + CMSIS-NN instructions (default / TFLM), arena used, outputs equal |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ops = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in r.get("operators", {}).items())
        if not r.get("compiled"):
            lines.append(f"| {r['model']} | {ops} | no: {r.get('why', '')} | | | | | |")
            continue
        ref, default = r.get("an500_reference", {}), r.get("an500_default", {})
        exact = " / ".join(_yes(v) for v in (r.get("host_bit_exact"), ref.get("bit_exact"),
                                             default.get("bit_exact")))
        arena = r.get("tflm_arena")
        # TFLM's arena holds the variable tensors too; microbuild keeps them in a state buffer.
        ram = r["workspace"] + r.get("state", 0)
        held = f"{r['workspace']:,} + {r['state']:,}" if r.get("state") else f"{ram:,}"
        memory = f"{held} / {arena:,} ({ram / arena:.2f}x)" if arena else f"{held} / -"
        if "instructions" in ref and "instructions" in default:
            speed = (f"{ref['instructions']:,} -> {default['instructions']:,} "
                     f"({default['instructions'] / ref['instructions']:.3f}x)")
        else:
            speed = ref.get("error") or default.get("error") or "-"
        anchor = r.get("an500_tflm_cmsis_nn", {})
        if "instructions" in anchor and "instructions" in default:
            side = (f"{anchor['instructions']:,} "
                    f"({default['instructions'] / anchor['instructions']:.2f}x), "
                    f"{anchor['arena_used_bytes']:,} B, {_yes(anchor.get('outputs_equal'))}")
        else:
            side = anchor.get("error", "-")
        lines.append(f"| {r['model']} | {ops} | yes | {'yes' if r.get('float32') else ''} | "
                     f"{exact} | {memory} | {speed} | {side} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("places", nargs="*", help="folders of .tflite files, or files")
    parser.add_argument("--no-qemu", action="store_true", help="host only")
    parser.add_argument("--sets", type=int, default=3, help="input sets per model (default 3)")
    parser.add_argument("--update", action="store_true",
                        help="replace only these models' rows in the existing results")
    args = parser.parse_args()
    models = find_models(args.places)
    if not models:
        print(f"no .tflite models found in {args.places or [str(SHARED)]}", file=sys.stderr)
        return 2
    rows = []
    for model in models:
        print(f"{model.name} ...", file=sys.stderr, flush=True)
        rows.append(measure(model, args.sets, not args.no_qemu))
    RESULTS.mkdir(exist_ok=True)
    if args.update and (RESULTS / "real_models.json").is_file():
        measured = {r["model"] for r in rows}
        kept = [r for r in json.loads((RESULTS / "real_models.json").read_text())
                if r["model"] not in measured]
        rows = sorted(kept + rows, key=lambda r: r["model"])
    (RESULTS / "real_models.json").write_text(json.dumps(rows, indent=2) + "\n")
    text = markdown(rows)
    (RESULTS / "real_models.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
