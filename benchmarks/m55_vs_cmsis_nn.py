"""Per-layer instructions of TFLM + CMSIS-NN beside microbuild's, on one board (default
mps3-an547), for the CNNs of issue 27: where each whole-model ratio comes from.

The anchor firmware (../shared/anchors/tflm) counts one figure per inference, not per operator.
So each model is cut into its prefixes: the first k operators, the subgraph's output set to the
k-th operator's output (the rest of the model is dropped, the tensors and buffers are kept).
TFLM's cost of operator k is then prefix(k) - prefix(k-1), exact to one timer tick (31.25
instructions on the an547, 40 on the an500) apart from what one more operator adds to TFLM's
per-inference loop, which is part of that operator's cost anyway. microbuild's per-operator figures come
from `microbuild run --profile` of the whole model on the same board and seed-0 input; where
microbuild runs several operators as one row-streamed region, the region is compared with the
sum of TFLM's operators in it.

    nice -n 19 .venv/bin/python benchmarks/m55_vs_cmsis_nn.py [--board mps3-an547] [MODEL ...]

prints the per-layer table and writes benchmarks/results/m55_vs_cmsis_nn_BOARD.json and the
board's generated section of benchmarks/results/m55_vs_cmsis_nn.md (between its
`<!-- per-layer BOARD -->` markers, appended when missing; the analysis around it is written by
hand from the kernels' listings).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from tflite_builder import _schema  # noqa: E402
from tflm_anchor import ANCHOR_BOARDS, ANCHORS  # noqa: E402

MODELS = {
    "ds_cnn": ROOT / "tests/models/ds_cnn.tflite",
    "mobilenet_v1_025_vww": ROOT / "tests/models/mobilenet_v1_025_vww.tflite",
    "person_detect": ROOT.parent / "shared/models/person_detect.tflite",
    "resnet8": ROOT / "tests/models/resnet8.tflite",
}
RESULTS = ROOT / "benchmarks" / "results"


def load(path: Path):
    schema = _schema()
    return schema, schema.ModelT.InitFromPackedBuf(path.read_bytes(), 0)


def prefix_bytes(path: Path, k: int) -> bytes:
    """The model cut after its first k operators, whose last output becomes the model's."""
    import flatbuffers

    _, model = load(path)
    graph = model.subgraphs[0]
    graph.operators = graph.operators[:k]
    graph.outputs = [int(graph.operators[-1].outputs[0])]
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def describe(path: Path) -> list[str]:
    """One short description per operator, e.g. "CONV_2D 3x3x16->32 s2, 32x32 -> 16x16"
    (filter height x width x input channels -> output channels, stride, spatial sizes)."""
    schema, model = load(path)
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    graph = model.subgraphs[0]
    out = []
    for op in graph.operators:
        code = model.operatorCodes[op.opcodeIndex]
        name = names.get(max(code.builtinCode, code.deprecatedBuiltinCode), "?")
        x, y = graph.tensors[op.inputs[0]].shape, graph.tensors[op.outputs[0]].shape
        text = name
        if name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            f = graph.tensors[op.inputs[1]].shape
            depth = f[3] if name == "CONV_2D" else 1
            text += f" {f[1]}x{f[2]}x{depth}->{f[0] if name == 'CONV_2D' else f[3]}"
        elif name == "FULLY_CONNECTED":
            f = graph.tensors[op.inputs[1]].shape
            text += f" {f[1]}->{f[0]}"
        stride = getattr(op.builtinOptions, "strideH", None)
        if stride and stride != 1:
            text += f" s{stride}"
        if len(x) == 4:
            text += f", {x[1]}x{x[2]}x{x[3]} -> {'x'.join(str(int(d)) for d in y[1:])}"
        out.append(text)
    return out


def macs(path: Path) -> list[int]:
    """Multiply-accumulates of each CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED (0 else)."""
    schema, model = load(path)
    graph = model.subgraphs[0]
    out = []
    for op in graph.operators:
        code = model.operatorCodes[op.opcodeIndex]
        builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
        outs = int(np.prod(graph.tensors[op.outputs[0]].shape))
        if builtin == schema.BuiltinOperator.CONV_2D:
            f = graph.tensors[op.inputs[1]].shape
            out.append(outs * int(f[1] * f[2] * f[3]))
        elif builtin == schema.BuiltinOperator.DEPTHWISE_CONV_2D:
            f = graph.tensors[op.inputs[1]].shape
            out.append(outs * int(f[1] * f[2]))
        elif builtin == schema.BuiltinOperator.FULLY_CONNECTED:
            out.append(outs * int(graph.tensors[op.inputs[1]].shape[1]))
        else:
            out.append(0)
    return out


def tflm_per_operator(name: str, path: Path, board: str, work: Path) -> list[int]:
    """TFLM + CMSIS-NN's instructions of each operator, from the prefixes' differences."""
    sys.path.insert(0, str(ANCHORS))
    import run as anchor_run

    n = len(load(path)[1].subgraphs[0].operators)
    totals = [0]
    for k in range(1, n + 1):
        cut = work / f"{name}_{k}.tflite"
        cut.write_bytes(prefix_bytes(path, k))
        # The same seed-0 input every time: run.py draws it from the input tensor alone.
        totals.append(anchor_run.run(str(cut), board, "cmsis_nn", seed=0)["instructions"])
        print(f"  {name}: first {k} of {n} operators: {totals[-1]:,}", file=sys.stderr)
    return [b - a for a, b in zip(totals, totals[1:])]


def ours_per_operator(name: str, path: Path, board: str, work: Path,
                      whole: bool = False) -> list[tuple[str, int]]:
    """microbuild's profile rows: (operators it covers, instructions); ``whole``: with
    --no-row-stream (every operator run whole, so each gets its own figure)."""
    extra, tag = (["--no-row-stream"], "-whole") if whole else ([], "")
    out = subprocess.run([str(ROOT / ".venv/bin/microbuild"), "run", "--board", board,
                          "--model", str(path), "--profile", *extra,
                          "-o", str(work / f"prof-{board}-{name}{tag}")],
                         capture_output=True, text=True, check=True).stdout
    return parse_profile(out)


def parse_profile(text: str) -> list[tuple[str, int]]:
    """The (operator, instructions) rows of `run --profile`'s per-operator table."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) >= 6 and cells[0].isdigit():
            rows.append((cells[1], int(cells[5].replace(",", ""))))
    if not rows:
        raise SystemExit("microbuild run --profile printed no per-operator table:\n" + text)
    return rows


def layers(name: str, path: Path, tflm: list[int], ours: list[tuple[str, int]]) -> list[dict]:
    """TFLM's operators matched with microbuild's profile rows. A row named "X+ADD" is an
    operator with the following ADD fused into it (two of TFLM's operators). A row with under
    1 % of TFLM's instructions for the same operators runs inside the row-streamed region of
    the row before it (the profile books the whole region on its first operator): it is merged
    into that row."""
    text, mac = describe(path), macs(path)
    groups, op = [], 0
    for row, count in ours:
        n = 2 if row.endswith("+ADD") else 1
        ops = list(range(op, op + n))
        op += n
        entry = {"ops": ops, "ours": count, "tflm": sum(tflm[i] for i in ops), "fused": n == 2}
        if groups and count * 100 < entry["tflm"]:
            last = groups[-1]
            last["ops"] += ops
            last["ours"] += count
            last["tflm"] += entry["tflm"]
            last["fused"] = False
        else:
            groups.append(entry)
    if op != len(tflm):
        raise SystemExit(f"{name}: the profile's rows cover {op} operators, the model has "
                         f"{len(tflm)}; the row-to-operator matching needs updating")
    for g in groups:
        g["layers"] = [f"{i} {text[i]}" for i in g["ops"]]
        g["macs"] = sum(mac[i] for i in g["ops"])
    return groups


def table(name: str, groups: list[dict], title: str = "") -> list[str]:
    lines = [f"### {name}{title}", "",
             "| ops | layer(s) | MACs | TFLM + CMSIS-NN | / MAC | microbuild | / MAC | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    per_mac = lambda n, m: f"{n / m:.2f}" if m else ""  # noqa: E731
    for g in groups:
        ops = ",".join(str(i) for i in g["ops"])
        layer = "; ".join(t.split(" ", 1)[1] for t in g["layers"])
        lines.append(f"| {ops} | {layer} | {g['macs']:,} | {g['tflm']:,} | "
                     f"{per_mac(g['tflm'], g['macs'])} | {g['ours']:,} | "
                     f"{per_mac(g['ours'], g['macs'])} | {g['ours'] / g['tflm']:.2f} |")
    tflm, ours = sum(g["tflm"] for g in groups), sum(g["ours"] for g in groups)
    lines += [f"| | sum | | {tflm:,} | | {ours:,} | | {ours / tflm:.2f} |", ""]
    return lines


def write_markdown(board: str, results: dict) -> None:
    """Replace the generated part of the note (between the markers), keep the rest."""
    note = RESULTS / "m55_vs_cmsis_nn.md"
    begin, end = f"<!-- per-layer {board}: begin -->", f"<!-- per-layer {board}: end -->"
    body = [begin, "", f"Board {board}; generated by `benchmarks/m55_vs_cmsis_nn.py`.", ""]
    for name, groups in results.items():
        body += table(name, groups)
    body.append(end)
    text = note.read_text() if note.exists() else ""
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    note.write_text(head + "\n".join(body) + rest.split(end, 1)[1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="mps3-an547", choices=ANCHOR_BOARDS)
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        raise SystemExit(f"unknown model(s) {unknown}; choose from {list(MODELS)}")
    work = ROOT / "build" / "m55_vs_cmsis_nn"
    work.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"m55_vs_cmsis_nn_{args.board}.json"
    # A run of some of the models keeps the others' earlier figures in the file and the note.
    results = json.loads(out.read_text())["models"] if out.exists() else {}
    for name in args.models:
        path = MODELS[name]
        tflm = tflm_per_operator(name, path, args.board, work)
        ours = ours_per_operator(name, path, args.board, work)
        results[name] = layers(name, path, tflm, ours)
        print("\n".join(table(name, results[name])))
        if any(len(g["ops"]) > 1 and not g.get("fused") for g in results[name]):
            # A row-streamed region: its operators each run whole, for a figure per operator.
            whole = layers(name, path, tflm, ours_per_operator(name, path, args.board, work, True))
            results[name + " (--no-row-stream)"] = whole
            print("\n".join(table(name, whole, " (--no-row-stream)")))
    out.write_text(json.dumps({"board": args.board, "models": results}, indent=1) + "\n")
    write_markdown(args.board, results)


if __name__ == "__main__":
    main()
