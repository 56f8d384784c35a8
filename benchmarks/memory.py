"""Workspace bytes against TFLM's arena: the memory-floor table of issues 17 and 27.

For every model in tests/models/*.tflite, tests/models/float/ and ../shared/models that compiles,
it records, per CPU (generic C, Cortex-M4 / M7 with the DSP extension, Cortex-M55 with Helium; the
board's default kernel variants, whose scratch areas count):
- the workspace op by op (outputs written over the inputs they consume,
  microbuild/compiler/overlap.py; ``compile_model(row_stream=False)``) and what the compiler
  chooses by default: a run of convolutions executed row by row where that needs less
  (microbuild/compiler/row_stream.py; the streamed ops are listed). The JSON also keeps the
  figure before outputs could overlap their inputs (``no_overlap``);
- the floor: the most bytes that must be alive at one op whatever the placement (an output
  allowed over its input counted by the least the pair can span), which op-by-op execution
  cannot go below (row streaming can);
- the denominator: TFLM's ``arena_used_bytes`` on the anchor firmware of
  ../shared/anchors/tflm (TFLM + CMSIS-NN built for the board: tensors, CMSIS-NN's scratch and
  TFLM's bookkeeping), mps2-an500 (Cortex-M7) for the generic and M4/M7 columns, mps3-an547
  (Cortex-M55, Helium) for the M55 column. Beside it, for reference, TFLM's smallest working
  arena with the x86-64 tflite-micro wheel (benchmarks/tflm_reference.py), taken from the
  previous memory.json or measured with ``--wheel`` (minutes for the large models).
  Variable tensors are not in microbuild's workspace (they live in the model's state buffer),
  so the RAM compared with the arena is workspace + state.

Writes benchmarks/results/memory.json and .md and prints the table.

    .venv/bin/python benchmarks/memory.py [MODEL.tflite ...] [--wheel]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from tflm_anchor import ANCHORS  # noqa: E402
from tflm_reference import smallest_tflm_arena  # noqa: E402

from microbuild.compiler import compile_model  # noqa: E402
from microbuild.compiler.planner import _overlaps, align, plan_memory  # noqa: E402
from microbuild.compiler.variants import Selection, Target  # noqa: E402
from microbuild.errors import ModelError  # noqa: E402

RESULTS = HERE / "results"
TEST_MODELS = (sorted((ROOT / "tests" / "models").glob("*.tflite"))
               + sorted((ROOT / "tests" / "models" / "float").glob("*.tflite")))
SHARED = ROOT.parent / "shared" / "models"
TARGETS = {
    "generic": Target(),
    "M4/M7 (dsp)": Target("cortex-m7", frozenset({"dsp"})),
    "M55 (mve)": Target("cortex-m55", frozenset({"dsp", "mve"})),
}
# The anchor firmware whose arena each column is compared with.
ANCHOR_BOARD = {"generic": "mps2-an500", "M4/M7 (dsp)": "mps2-an500", "M55 (mve)": "mps3-an547"}
GOAL = 0.5
ANCHOR_TIMEOUT = 120  # seconds of one QEMU run of the anchor firmware


def anchor_arena(model: Path, board: str) -> int | str:
    """TFLM + CMSIS-NN's ``arena_used_bytes`` for ``model`` on ``board``'s anchor firmware, or
    why it did not run. The firmware's "info" pass (header flag bit 0: AllocateTensors, report,
    exit; ../shared/anchors/tflm/README.md) reports the same figure as a full run (micro_speech_lstm
    on mps2-an500: 21,668 both), without running the model."""
    sys.path.insert(0, str(ANCHORS))
    import run as anchor_run

    try:
        with tempfile.TemporaryDirectory(prefix="mb-memory-") as tmp:
            header = Path(tmp) / "header.bin"
            header.write_bytes(anchor_run._header(model.stat().st_size, [], 1))
            info, _ = anchor_run._qemu(board, anchor_run.elf_path(board, "cmsis_nn"),
                                       [(str(header), anchor_run.HDR_OFF),
                                        (str(model), anchor_run.MODEL_OFF)],
                                       ANCHOR_TIMEOUT, "qemu-system-arm")
        return int(info["arena_used_bytes"])
    except (RuntimeError, ValueError, OSError, KeyError) as err:
        return f"TFLM: {str(err).splitlines()[0][:80]}"


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


def measure(model: Path, wheel: dict[str, int], measure_wheel: bool) -> dict:
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
    # The graph's inputs are in the workspace (as in TFLM's arena) and all alive before the
    # first op: no plan goes below them.
    row["input_bytes"] = sum(align(compiled.graph.tensors[t].nbytes)
                             for t in compiled.graph.inputs)
    row["anchor_arena"] = {board: anchor_arena(model, board)
                           for board in sorted(set(ANCHOR_BOARD.values()))}
    row["tflm_arena"] = wheel.get(model.stem) or (smallest_tflm_arena(model) if measure_wheel
                                                  else None)
    return row


# Models above the goal whose plan was read op by op (`microbuild compile --json`, the plan's
# buffers): what holds the bytes at the floor, and why no plan goes lower (issue 27).
AT_FLOOR_BECAUSE = {
    "keyword_scrambled": "the 7 SVDF states (4 x 1,024 + 3 x 2,048 bytes of int16 = 10,240) "
                         "are the model's memory of past frames, kept between invocations (in "
                         "TFLM's arena too); the workspace is op 1's 96-byte input, 64-byte "
                         "output and 512-byte scratch (672). Only smaller state could reach "
                         "0.5x: the state alone is 0.77x",
    "keyword_scrambled_8bit": "the same 7 SVDF states in int8 (5,120 bytes, 0.62x alone) plus "
                              "op 1's 672 bytes",
    "micro_speech_lstm": "the graph's input (49x257 int8, 12,593 bytes, 0.58x alone) is in the "
                         "workspace from the start, as in TFLM's arena; the LSTM writes its "
                         "49x80 output 80 bytes below it, over the steps it has read, and its "
                         "480-byte scratch follows (13,168 in all)",
    "simple_add_model": "its one op adds the graph's two 128x128 int8 inputs (16,384 bytes "
                        "each), both in the workspace from the start; the output is written over "
                        "one of them (32,768 in all)",
}


def markdown(rows: list[dict]) -> str:
    names = list(TARGETS)
    boards = sorted(set(ANCHOR_BOARD.values()))
    lines = ["# Workspace against TFLM's arena (RAM = workspace + state)", "",
             f"Goal: at most {GOAL}x TFLM's arena. The ratio's denominator is TFLM + CMSIS-NN's "
             "`arena_used_bytes` on the anchor firmware (../shared/anchors/tflm) of "
             + ", ".join(f"{b} for {n}" for n, b in ANCHOR_BOARD.items())
             + "; the x86-64 tflite-micro wheel's smallest working arena is shown for reference. "
             "Before -> after: op by op (outputs written over the inputs they consume, "
             "microbuild/compiler/overlap.py) -> the compiler's default, which runs the ops in "
             "[brackets] row by row where that needs less (microbuild/compiler/row_stream.py). "
             "Floor (generic C): the most bytes that must be alive at one op whatever the "
             "placement, which op-by-op execution cannot go below.", "",
             "| model | TFLM arena: " + ", ".join(boards) + " (x86-64 wheel) | "
             + " | ".join(f"{n}: before -> after (/ {ANCHOR_BOARD[n]})" for n in names)
             + " | floor (generic), at op |",
             "|---|---|" + "---|" * len(names) + "---|"]
    above = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | | {r['error']} |" + " |" * len(names))
            continue
        arenas = r.get("anchor_arena", {})
        wheel = f" ({r['tflm_arena']:,})" if r.get("tflm_arena") else ""
        shown = ", ".join(f"{a:,}" if isinstance(a, int) else str(a) for a in arenas.values())
        cells = []
        for n in names:
            c = r[n]
            ram = c["after"] + c["state"]
            arena = arenas.get(ANCHOR_BOARD[n])
            ops = c.get("streamed_ops")
            streamed = f" [ops {ops[0]}-{ops[1]}]" if ops else ""
            if isinstance(arena, int) and arena > 0:
                mark = "" if ram <= GOAL * arena else " **"
                if mark and r["model"] not in above:
                    above.append(r["model"])
                ratio = f" ({ram / arena:.2f}x)"
            else:
                mark, ratio = "", ""
            cells.append(f"{c['before'] + c['state']:,} -> {ram:,}{ratio}{streamed}{mark}")
        g = r["generic"]
        generic_arena = arenas.get(ANCHOR_BOARD["generic"])
        floor = g["floor"] + g["state"]
        floor_ratio = (f" ({floor / generic_arena:.2f}x)" if isinstance(generic_arena, int)
                       and generic_arena > 0 else "")
        lines.append(f"| {r['model']} | {shown}{wheel} | " + " | ".join(cells) +
                     f" | {floor:,}{floor_ratio}, op {g['floor_op']} |")
    lines += ["", f"** above the goal ({len(above)} models: {', '.join(above) or 'none'})."]
    lines += ["", "Why each model above the goal stays there (generic C): whether the placement "
              "is at the op-by-op floor (no placement does better with today's aliasing rules: "
              "only a new rule, row streaming or fusion can), the op of the floor, the share of "
              "the arena the graph's inputs take alone (in the workspace from the start, as in "
              "TFLM's arena: no plan goes below them) and the state (variable tensors, in TFLM's "
              "arena too).", ""]
    for r in rows:
        arena = r.get("anchor_arena", {}).get(ANCHOR_BOARD["generic"])
        if r["model"] not in above or not isinstance(arena, int):
            continue
        g = r["generic"]
        at_floor = ("at the op-by-op floor" if g["after"] <= g["floor"]
                    else f"{g['after'] - g['floor']:,} bytes over the floor")
        lines.append(f"- {r['model']}: {at_floor}, op {g['floor_op']}; inputs "
                     f"{r['input_bytes']:,} bytes = {r['input_bytes'] / arena:.2f}x the arena; "
                     f"state {g['state']:,} bytes = {g['state'] / arena:.2f}x."
                     + (f" Read from the plan: {AT_FLOOR_BECAUSE[r['model']]}."
                        if r["model"] in AT_FLOOR_BECAUSE else ""))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=".tflite files (default: tests/models/*.tflite, "
                        "tests/models/float/*.tflite and ../shared/models/*.tflite)")
    parser.add_argument("--wheel", action="store_true",
                        help="measure the x86-64 wheel's smallest arena of the models the "
                             "previous results/memory.json lacks (minutes for the large ones)")
    args = parser.parse_args()
    # The real models first: a run cut short still has them.
    models = [Path(m) for m in args.models] or sorted(SHARED.glob("*.tflite")) + TEST_MODELS
    previous = RESULTS / "memory.json"
    old_rows = json.loads(previous.read_text()) if previous.exists() else []
    wheel = {r["model"]: r["tflm_arena"] for r in old_rows if r.get("tflm_arena")}
    # Given models replace their rows; the others' rows are kept (one model can be re-measured).
    rows = {r["model"]: r for r in old_rows} if args.models else {}
    RESULTS.mkdir(exist_ok=True)
    for model in models:
        print(f"{model.name} ...", file=sys.stderr, flush=True)
        rows[model.stem] = measure(model, wheel, args.wheel)
        previous.write_text(json.dumps(list(rows.values()), indent=2) + "\n")
    rows = list(rows.values())
    text = markdown(rows)
    (RESULTS / "memory.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
