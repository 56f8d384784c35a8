"""Every test model side by side with TFLM + CMSIS-NN on mps2-an386 (M4F), mps2-an500 (M7) and
mps3-an547 (M55): instructions per inference of microbuild (default kernels) and of the TFLM
anchor firmware (../shared/anchors/tflm) on the same seeded input, the ratio, whether the outputs
are equal, and microbuild's workspace against TFLM's arena_used_bytes (issue 27).

Cheap on purpose: per board, the models go into a few RPC firmwares of up to CHUNK models each
(as the sweep tests pack them; a chunk that does not fit the board is split in two), and each
model is profiled over RPC (one whole-model RUN, then every operator timed on the same input, so
an outlier's dominant operator comes from its own instruction counts). The anchor runs go to a
process pool of 2 while the RPC firmware runs, and are cached under build/ by model, input and
board (the anchor firmwares never change), so a rerun after a kernel change only reruns
microbuild. Models microbuild refuses, and models the anchor refuses (TFLM cannot run them), are
listed as such and not counted.

Writes benchmarks/results/test_models_vs_tflm.{json,md} and prints the summary.

    nice -n 19 .venv/bin/python benchmarks/test_models_vs_tflm.py [BOARD ...]
    MB_BENCH_MODELS='ops/conv*,dilated/*' ...   (globs under tests/models: only those rows change)
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import statistics
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from tflm_anchor import ANCHOR_BOARDS, ANCHORS  # noqa: E402

RESULTS = HERE / "results"
MODELS_DIR = ROOT / "tests" / "models"
WORK = ROOT / "build" / "test_models_vs_tflm"  # firmwares and the anchor cache (gitignored)
CHUNK = 120  # models per RPC firmware (the model table holds 255)
SEED = 0
TARGET, LIMIT = 0.6, 0.8  # issue 27: default kernels <= 0.6x TFLM + CMSIS-NN, no row above 0.8x


def test_models() -> list[Path]:
    """Every .tflite under tests/models, or those matching MB_BENCH_MODELS's globs."""
    models = sorted(MODELS_DIR.rglob("*.tflite"))
    globs = [g for g in os.environ.get("MB_BENCH_MODELS", "").split(",") if g]
    if globs:
        models = [m for m in models if any(fnmatch.fnmatch(_name(m), g) for g in globs)]
    return models


def _name(model: Path) -> str:
    return model.relative_to(MODELS_DIR).with_suffix("").as_posix()


def _prefix(model: Path) -> str:
    """A C identifier per model (names repeat across folders)."""
    return "m_" + "".join(c if c.isalnum() else "_" for c in _name(model))


# --- the anchor, cached --------------------------------------------------------------------------

def _anchor_cached(board: str, model: str, inputs: list[np.ndarray]) -> dict:
    """TFLM + CMSIS-NN's instructions, arena_used_bytes and outputs for ``model`` on ``inputs``
    on ``board``, from the cache when this model, input and board ran before; {"refused": why}
    when TFLM cannot run the model (its firmware's error line)."""
    h = hashlib.sha256(Path(model).read_bytes())
    for x in inputs:
        h.update(np.ascontiguousarray(x).tobytes())
    cache = WORK / "anchor-cache" / f"{board}-{h.hexdigest()[:24]}.json"
    if cache.is_file():
        return json.loads(cache.read_text())
    sys.path.insert(0, str(ANCHORS))
    import run as anchor_run

    try:
        r = anchor_run.run(str(model), board, "cmsis_nn", inputs=inputs, timeout=300)
        got = {"instructions": r["instructions"], "arena_used_bytes": r["arena_used_bytes"],
               "outputs": [[str(np.asarray(o).dtype), np.asarray(o).tobytes().hex()]
                           for o in r["outputs"]]}
    except (RuntimeError, ValueError) as err:  # unsupported op or type, arena, fault, timeout
        got = {"refused": " ".join(str(err).split())[:240]}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(got))
    return got


# --- microbuild, many models per RPC firmware ----------------------------------------------------

def _builds(board: str, models: list[Path], rows: dict[str, dict]):
    """Yield (FirmwareBuild, prefixes) for RPC firmwares holding the models, CHUNK at a time. A
    chunk that does not fit the board, or that microbuild refuses, is split in two (the objects
    come from the object cache, only the link is redone) down to one model, whose row then says
    why."""
    from microbuild import api
    from microbuild.errors import FitError, MicrobuildError

    by_prefix = {_prefix(m): m for m in models}
    pending = [list(by_prefix)[i:i + CHUNK] for i in range(0, len(by_prefix), CHUNK)]
    while pending:
        chunk = pending.pop(0)
        try:
            build = api.build_firmware(board, {p: str(by_prefix[p]) for p in chunk},
                                       WORK / board / _chunk_dir(chunk), executor="rpc")
        except MicrobuildError as err:
            if len(chunk) > 1:
                pending[:0] = [chunk[:len(chunk) // 2], chunk[len(chunk) // 2:]]
                continue
            why = "does not fit the board" if isinstance(err, FitError) else "microbuild refuses"
            rows[chunk[0]]["microbuild_refuses"] = f"{why}: {str(err).splitlines()[0][:240]}"
            continue
        yield build, chunk


def _chunk_dir(chunk: list[str]) -> str:
    """A firmware folder per set of models: runs of different models (MB_BENCH_MODELS) at the
    same time do not share one."""
    return "fw-" + hashlib.sha256(" ".join(chunk).encode()).hexdigest()[:12]


def _dominant(ops: list[dict]) -> str:
    """The operator kind with the most instructions, and its share of the model's."""
    by_kind: dict[str, int] = {}
    for o in ops:
        by_kind[o["opcode"]] = by_kind.get(o["opcode"], 0) + o["instructions"]
    total = sum(by_kind.values()) or 1
    kind = max(by_kind, key=by_kind.get)
    return f"{kind} {by_kind[kind] / total:.0%}"


def measure_board(board: str, models: list[Path]) -> list[dict]:
    """One row per model: microbuild's profile on the board beside the anchor's run."""
    from microbuild.compiler import lowered_graph
    from microbuild.errors import MicrobuildError
    from microbuild import api
    from microbuild.device.device import Profile
    from microbuild.device.errors import ProtocolError
    from microbuild.tensor_files import random_inputs

    rows = {_prefix(m): {"board": board, "model": _name(m)} for m in models}
    candidates = []
    for m in models:
        try:  # what microbuild refuses on purpose (the sweep holds a few) needs no build
            lowered_graph(m)
            candidates.append(m)
        except MicrobuildError as err:
            rows[_prefix(m)]["microbuild_refuses"] = str(err).splitlines()[0][:240]
    anchors: dict[str, Future] = {}
    with ProcessPoolExecutor(max_workers=2) as pool:
        for build, chunk in _builds(board, candidates, rows):
            info = {m["prefix"]: m for m in build.models}
            with api.connect(board, build, timeout=60) as dev:
                hz = dev.info.timer_hz
                for prefix in chunk:
                    x = random_inputs(dev.specs(prefix), SEED)
                    anchors[prefix] = pool.submit(_anchor_cached, board,
                                                  str(MODELS_DIR / f"{rows[prefix]['model']}.tflite"),
                                                  x)
                    try:
                        prof = dev.profile(prefix, x)
                    except ProtocolError as err:
                        # Operator by operator gave other outputs than the whole-model RUN
                        # (reported here): the RUN alone is still measured.
                        rows[prefix]["profile_failed"] = str(err)
                        outputs, ticks = dev.run_timed(prefix, x)
                        prof = Profile(prefix, board, hz, [], ticks, outputs)
                    except MicrobuildError as err:
                        rows[prefix]["microbuild_refuses"] = f"failed on the device: {err}"
                        continue
                    kinds = {o["index"]: o for o in info[prefix]["ops"]}
                    ops = [{"index": o.op_index,
                            "opcode": kinds.get(o.op_index, {}).get("opcode", o.opcode),
                            "kernel": kinds.get(o.op_index, {}).get("kernel", "?"),
                            "instructions": round(o.ticks * 1e9 / hz)} for o in prof.ops]
                    rows[prefix].update({
                        "instructions": round(prof.model_ticks * 1e9 / hz),
                        "workspace_bytes": info[prefix]["workspace_bytes"],
                        "ops": ops, "dominant": _dominant(ops) if ops else "",
                        "outputs": [[str(o.dtype), o.tobytes().hex()] for o in prof.outputs]})
            # Each firmware's rows are recorded as soon as they are complete: a long run that
            # is stopped keeps what it measured.
            record([_beside_anchor(rows[p], anchors.pop(p).result()) for p in chunk])
    return list(rows.values())


def _beside_anchor(row: dict, a: dict) -> dict:
    """The row with the anchor's figures and the ratio, or why the anchor could not run it."""
    if "refused" in a:
        row["anchor_refuses"] = a["refused"]
    if "refused" in a or "instructions" not in row:
        row.pop("outputs", None)
        return row
    row.update({"tflm_instructions": a["instructions"],
                "tflm_arena_used_bytes": a["arena_used_bytes"],
                "ratio": row["instructions"] / a["instructions"]})
    row.update(_compare(row.pop("outputs"), a["outputs"]))
    return row


def _compare(mine: list, theirs: list) -> dict:
    """outputs_equal, and when not, which outputs differ. A framer or stacker (streaming/)
    leaves its frame output undefined while its bool "valid" output is false (TFLM leaves
    whatever the arena held): such a difference is "undefined", not a wrong value."""
    if len(mine) != len(theirs):
        return {"outputs_equal": False, "outputs_differ": "output count"}
    differ = [k for k, (a, b) in enumerate(zip(mine, theirs)) if a != b]
    if not differ:
        return {"outputs_equal": True}
    valid_false = any(d == "bool" and h.strip("0") == "" for d, h in mine) and \
        all(mine[k][0] != "bool" for k in differ)
    return {"outputs_equal": False, "outputs_differ":
            f"outputs {differ}" + (" (undefined: the valid output is false)" if valid_false
                                   else "")}


# --- results -------------------------------------------------------------------------------------

def summary(rows: list[dict]) -> list[dict]:
    """Per board: how many models were compared, median and worst ratio, how many above 0.6 and
    0.8, how many with equal outputs; and how many each side could not run."""
    out = []
    for board in ANCHOR_BOARDS:
        mine = [r for r in rows if r["board"] == board]
        if not mine:
            continue
        compared = sorted((r for r in mine if "ratio" in r), key=lambda r: r["ratio"])
        ratios = [r["ratio"] for r in compared]
        out.append({
            "board": board, "models": len(mine), "compared": len(compared),
            "median": statistics.median(ratios) if ratios else None,
            "worst": ratios[-1] if ratios else None,
            "worst_model": compared[-1]["model"] if compared else None,
            "above_target": sum(r > TARGET for r in ratios),
            "above_limit": sum(r > LIMIT for r in ratios),
            "outputs_equal": sum(r["outputs_equal"] for r in compared),
            "anchor_refuses": sum("anchor_refuses" in r for r in mine),
            "microbuild_refuses": sum("microbuild_refuses" in r for r in mine)})
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["# Every test model beside TFLM + CMSIS-NN", "",
             "tests/models/**.tflite, microbuild's default kernels over RPC and the TFLM + "
             "CMSIS-NN anchor firmware (../shared/anchors/tflm), same board and seeded input, "
             "instructions per inference under QEMU `-icount shift=0` (ratio = microbuild / "
             f"TFLM; issue 27's target is <= {TARGET}, no row above {LIMIT}). Written by "
             "`benchmarks/test_models_vs_tflm.py`.", "",
             "| board | models | compared | median | worst | above 0.6 | above 0.8 | "
             "outputs equal | TFLM refuses | microbuild refuses |", "|" + "---|" * 10]
    for s in summary(rows):
        lines.append(
            f"| {s['board']} | {s['models']} | {s['compared']} | "
            + (f"{s['median']:.2f} | {s['worst']:.2f} ({s['worst_model']}) | "
               if s["compared"] else "- | - | ")
            + f"{s['above_target']} | {s['above_limit']} | {s['outputs_equal']} | "
              f"{s['anchor_refuses']} | {s['microbuild_refuses']} |")
    lines += ["", f"## Rows above {TARGET}", "",
              "Ops: the model's operator kinds; dominant: the kind with most of microbuild's "
              "instructions (`run --profile`: each operator timed over RPC on the same input).",
              "", "| board | model | TFLM + CMSIS-NN | microbuild (ratio) | workspace / TFLM arena "
              "| outputs equal | dominant | ops (kernel) |", "|" + "---|" * 8]
    for r in sorted((r for r in rows if r.get("ratio", 0) > TARGET),
                    key=lambda r: (r["board"], -r["ratio"])):
        ops = ", ".join(sorted({f"{o['opcode']} ({o['kernel']})" for o in r["ops"]}))
        lines.append(
            f"| {r['board']} | {r['model']} | {r['tflm_instructions']:,} | "
            f"{r['instructions']:,} ({r['ratio']:.2f}) | "
            f"{r['workspace_bytes']:,} / {r['tflm_arena_used_bytes']:,} | "
            f"{'yes' if r['outputs_equal'] else 'NO'} | {r['dominant']} | {ops} |")
    lines += groups(rows)
    differ = [r for r in rows if r.get("outputs_equal") is False]
    if differ:
        lines += ["", "## Outputs not equal to TFLM + CMSIS-NN's", ""]
        lines += [f"- {r['board']} {r['model']} ({r['ratio']:.2f}): {r.get('outputs_differ', 'outputs differ')}"
                  for r in differ]
    for key, title in (("anchor_refuses", "TFLM's anchor cannot run (not counted)"),
                       ("microbuild_refuses", "microbuild does not build (not counted)")):
        refused = [r for r in rows if key in r]
        if refused:
            lines += ["", f"## {title}", ""]
            lines += [f"- {r['board']} {r['model']}: {r[key]}" for r in refused]
    return "\n".join(lines) + "\n"


TINY = 20_000  # TFLM instructions under which a model is mostly fixed per-call costs


def _cause(row: dict) -> str:
    """An outlier's group: its dominant operator kind and activation type, or "tiny" when
    TFLM runs it in under TINY instructions (call, parameter and loop set-up costs then weigh
    as much as the arithmetic)."""
    from microbuild.compiler import lowered_graph

    graph = lowered_graph(MODELS_DIR / f"{row['model']}.tflite")
    dtype = graph.tensors[graph.inputs[0]].dtype if graph.inputs else "?"
    kind = f"{(row['dominant'] or 'unprofiled').split()[0]} {dtype}"
    return f"{kind}, tiny" if row["tflm_instructions"] < TINY else kind


def groups(rows: list[dict]) -> list[str]:
    """The rows above the target grouped by cause, per board, largest group first."""
    found: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if r.get("ratio", 0) > TARGET:
            found.setdefault((r["board"], _cause(r)), []).append(r)
    if not found:
        return []
    lines = ["", f"## Rows above {TARGET} by cause", "",
             "| board | cause (dominant op, input type) | rows | worst | models |",
             "|" + "---|" * 5]
    for (board, cause), members in sorted(found.items(), key=lambda kv: (kv[0][0],
                                                                          -len(kv[1]))):
        members.sort(key=lambda r: -r["ratio"])
        names = ", ".join(r["model"] for r in members[:6]) + (", ..." if len(members) > 6
                                                              else "")
        lines.append(f"| {board} | {cause} | {len(members)} | {members[0]['ratio']:.2f} | "
                     f"{names} |")
    return lines


def record(new_rows: list[dict]) -> str:
    """Merge rows into the JSON (replacing the same board and model) and rewrite the markdown."""
    path = RESULTS / "test_models_vs_tflm.json"
    new = {(r["board"], r["model"]) for r in new_rows}
    rows = [r for r in (json.loads(path.read_text()) if path.is_file() else [])
            if (r["board"], r["model"]) not in new] + new_rows
    order = {b: i for i, b in enumerate(ANCHOR_BOARDS)}
    rows.sort(key=lambda r: (order[r["board"]], r["model"]))
    path.write_text(json.dumps(rows, indent=0) + "\n")
    text = markdown(rows)
    (RESULTS / "test_models_vs_tflm.md").write_text(text)
    return text


def main(argv: list[str]) -> int:
    boards = argv or list(ANCHOR_BOARDS)
    unknown = [b for b in boards if b not in ANCHOR_BOARDS]
    if unknown:
        print(f"no TFLM anchor firmware for {', '.join(unknown)}: the boards are "
              f"{', '.join(ANCHOR_BOARDS)}", file=sys.stderr)
        return 2
    RESULTS.mkdir(parents=True, exist_ok=True)
    models = test_models()
    for board in boards:  # one board at a time: each already runs three QEMUs at once
        text = record(measure_board(board, models))
    print(text.split("\n## ")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
