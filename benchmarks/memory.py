"""Workspace bytes against TFLM's arena: the memory-floor table of issue 17.

For the MLPerf-Tiny-like test models and every model in ../shared/models that compiles, it
records, per CPU (generic C, Cortex-M4 / M7 with the DSP extension, Cortex-M55 with Helium; the
board's default kernel variants, whose scratch areas count):
- the workspace op by op (outputs written over the inputs they consume,
  microbuild/compiler/overlap.py; ``compile_model(row_stream=False)``) and what the compiler
  chooses by default: a run of convolutions executed row by row where that needs less
  (microbuild/compiler/row_stream.py; the streamed ops are listed). The JSON also keeps the
  figure before outputs could overlap their inputs (``no_overlap``);
- the floor: the most bytes that must be alive at one op whatever the placement (an output
  allowed over its input counted by the least the pair can span), which op-by-op execution
  cannot go below (row streaming can);
- TFLM's smallest working arena, found by trial with the tflite-micro wheel in child processes
  (benchmarks/tflm_reference.py). Variable tensors are not in microbuild's workspace (they live
  in the model's state buffer), so the RAM compared with the arena is workspace + state.

Writes benchmarks/results/memory.json and .md and prints the table.

    .venv/bin/python benchmarks/memory.py [MODEL.tflite ...] [--reuse-tflm]

``--reuse-tflm`` takes TFLM's arena from the previous memory.json instead of measuring it again
(minutes for the large models).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from tflm_reference import smallest_tflm_arena  # noqa: E402

from microbuild.compiler import compile_model  # noqa: E402
from microbuild.compiler.planner import _overlaps, align, plan_memory  # noqa: E402
from microbuild.compiler.variants import Selection, Target  # noqa: E402
from microbuild.errors import ModelError  # noqa: E402

RESULTS = HERE / "results"
TEST_MODELS = [ROOT / "tests" / "models" / f"{name}.tflite"
               for name in ("ds_cnn", "resnet8", "mobilenet_v1_025_vww", "anomaly_ae")]
SHARED = ROOT.parent / "shared" / "models"
TARGETS = {
    "generic": Target(),
    "M4/M7 (dsp)": Target("cortex-m7", frozenset({"dsp"})),
    "M55 (mve)": Target("cortex-m55", frozenset({"dsp", "mve"})),
}
GOAL = 0.5


def _floor(compiled) -> tuple[int, int]:
    """(bytes, op): the most bytes that must be alive at one op, whatever the placement: every
    buffer alive there (rounded to 16), an output allowed over its input counted by the least
    the pair can span (the output's size, or the distance plus the input's size)."""
    plan = compiled.plan
    buffers = plan.buffers
    pairs, _ = _overlaps(compiled.graph, compiled.lowerings, buffers)
    best = (0, 0)
    for i in range(len(compiled.graph.operators)):
        live = sum(align(b.size) for b in buffers if b.first_op <= i <= b.last_op)
        for (out, inp), (distance, _) in pairs.items():
            if buffers[out].first_op == i:
                so, si = align(buffers[out].size), align(buffers[inp].size)
                live -= so + si - max(so, distance + si)
        best = max(best, (live, i))
    return best


def measure(model: Path, tflm: dict[str, int]) -> dict:
    row: dict = {"model": model.stem}
    for name, target in TARGETS.items():
        try:
            op_by_op = compile_model(model, selection=Selection(target), row_stream=False)
            compiled = compile_model(model, selection=Selection(target))
        except ModelError as err:
            row["error"] = str(err).splitlines()[0]
            return row
        no_overlap = plan_memory(op_by_op.graph, op_by_op.lowerings, overlap=False)
        floor, at = _floor(op_by_op)
        region = compiled.plan.row_region
        row[name] = {"no_overlap": no_overlap.workspace_bytes,
                     "before": op_by_op.workspace_bytes, "after": compiled.workspace_bytes,
                     "streamed_ops": [region.first, region.last] if region else None,
                     "state": compiled.state_bytes, "floor": floor,
                     "floor_op": f"{at} {op_by_op.graph.operators[at].opcode}"
                     if op_by_op.graph.operators else "",
                     "overlaps": len(op_by_op.plan.overlaps)}
    row["tflm_arena"] = tflm.get(model.stem) or smallest_tflm_arena(model)
    return row


def markdown(rows: list[dict]) -> str:
    names = list(TARGETS)
    lines = ["# Workspace against TFLM's arena (RAM = workspace + state)", "",
             f"Goal: at most {GOAL}x TFLM's smallest working arena. Before -> after: op by op "
             "(outputs written over the inputs they consume, microbuild/compiler/overlap.py) "
             "-> the compiler's default, which runs the ops in [brackets] row by row where that "
             "needs less (microbuild/compiler/row_stream.py). Floor (generic C): the "
             "most bytes that must be alive at one op whatever the placement, which op-by-op "
             "execution cannot go below.", "",
             "| model | TFLM arena | " + " | ".join(f"{n}: before -> after (ratio)" for n in names)
             + " | floor (generic), at op |",
             "|---|---|" + "---|" * len(names) + "---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | | {r['error']} |" + " |" * len(names))
            continue
        arena = r["tflm_arena"]
        cells = []
        for n in names:
            c = r[n]
            ram = c["after"] + c["state"]
            mark = "" if ram <= GOAL * arena else " **"
            ops = c.get("streamed_ops")
            streamed = f" [ops {ops[0]}-{ops[1]}]" if ops else ""
            cells.append(f"{c['before'] + c['state']:,} -> {ram:,} ({ram / arena:.2f}x)"
                         f"{streamed}{mark}")
        g = r["generic"]
        lines.append(f"| {r['model']} | {arena:,} | " + " | ".join(cells) +
                     f" | {g['floor'] + g['state']:,} ({(g['floor'] + g['state']) / arena:.2f}x),"
                     f" op {g['floor_op']} |")
    lines += ["", "** above the goal."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=".tflite files (default: the test models and "
                        "../shared/models/*.tflite)")
    parser.add_argument("--reuse-tflm", action="store_true",
                        help="TFLM's arena from the previous results/memory.json")
    args = parser.parse_args()
    models = [Path(m) for m in args.models] or TEST_MODELS + sorted(SHARED.glob("*.tflite"))
    tflm: dict[str, int] = {}
    previous = RESULTS / "memory.json"
    if args.reuse_tflm and previous.exists():
        tflm = {r["model"]: r["tflm_arena"] for r in json.loads(previous.read_text())
                if r.get("tflm_arena")}
    rows = []
    for model in models:
        print(f"{model.name} ...", file=sys.stderr, flush=True)
        rows.append(measure(model, tflm))
    RESULTS.mkdir(exist_ok=True)
    previous.write_text(json.dumps(rows, indent=2) + "\n")
    text = markdown(rows)
    (RESULTS / "memory.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
