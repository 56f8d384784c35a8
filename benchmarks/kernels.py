"""Kernel variants benchmark: instructions per inference with the reference kernels, the default
variants (the heuristic per CPU) and the tuned variants (`microbuild tune` on that board), side
by side, plus weights and workspace bytes of each.

For each board it tunes the test models (one candidate firmware, timed over RPC), then builds two
RPC firmwares: the models with the reference kernels and with the defaults, and the models with
the tuning log. Each model's whole-model RUN is timed on the same seeded input, and every output
is checked equal across the three (each configuration is bit-exact with TFLM by the tests; this
guards the measurement). A model the tuner cannot time on the board (the reference and a
candidate do not fit one firmware) still gets its reference and default figures, marked "not
tuned"; one that does not fit the board at all gets a row saying so. Under QEMU's `-icount shift=0` one guest instruction is 1 ns of virtual
time, so `ticks * 1e9 / timer_hz` is the number of instructions executed, repeatable run to run.
The host row is wall-clock time (ns, the fastest of several runs), for scale only.

On the boards with a TFLM + CMSIS-NN anchor firmware (../shared/anchors/tflm: mps2-an386,
mps2-an500, mps3-an547) every model also runs on it, on the same input, in the same run: a second
table puts each figure beside TFLM's with the ratio (instructions, workspace against TFLM's
arena_used_bytes, code against the anchor's .text; how each is counted is under the table).

Writes benchmarks/results/kernels.json and .md (with the tuning logs as tune-<board>.json) and
prints the tables.

    .venv/bin/python benchmarks/kernels.py [BOARD ...]   (named boards: only their rows change)
    MB_BENCH_MODELS=ds_cnn,resnet8 ...                   (only those models' rows change)
    MB_BENCH_NO_TUNE=1 ...                               (default kernels only: no tuning, the
                                                          tuned columns say "not tuned")
    MB_BENCH_NO_REFERENCE=1 ...  (or --no-reference)     (leave the reference kernels out: the
                                                          side-by-side table does not need them,
                                                          and their runs and copies cost time)

Each step of each model (tune, build, run, TFLM anchor, code size) prints how long it took to
stderr, to see where a run's time goes. Builds share one compiled-object cache
(MICROBUILD_CACHE_DIR, a folder of the run unless already set): every firmware compiles the same
runtime objects, so only the first build of a board compiles them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from tflm_anchor import ANCHOR_BOARDS, run_anchor  # noqa: E402
RESULTS = HERE / "results"
# The MLPerf Tiny look-alikes, then TFLM's example models (../shared/models/: real, trained).
MODELS = [ROOT / "tests" / "models" / f"{name}.tflite"
          for name in ("ds_cnn", "resnet8", "mobilenet_v1_025_vww", "anomaly_ae")]
SHARED_MODELS = ROOT.parent / "shared" / "models"
MODELS += sorted(SHARED_MODELS.glob("*.tflite"))
ALL_MODELS = list(MODELS)
if os.environ.get("MB_BENCH_MODELS"):  # e.g. MB_BENCH_MODELS=ds_cnn,resnet8
    MODELS = [m for m in MODELS if m.stem in os.environ["MB_BENCH_MODELS"].split(",")]
BOARDS = ["mps2-an500", "mps2-an386", "mps3-an547", "mps2-an385", "riscv32-virt", "host"]
CONFIGS = ("reference", "default", "tuned")
KEYS = {"reference": "ref", "default": "def", "tuned": "tun"}  # each configuration's prefix
HOST_ROUNDS = 7
FIT_CHECK_BYTES = 1 << 20  # models above this size keep the tuner's fit check (see measure_board)


def _run_all(board: str, build, prefixes: dict[str, str], rounds: int) -> dict[str, dict]:
    """prefix -> {ticks (the fastest of ``rounds`` RUNs), outputs} on a seeded input."""
    from microbuild import api
    from microbuild.tensor_files import random_inputs

    out = {}
    with api.connect(board, build, timeout=30) as dev:
        hz = dev.info.timer_hz
        for prefix in prefixes:
            x = random_inputs(dev.specs(prefix), 1)
            best, outputs = None, None
            for _ in range(rounds):
                outputs, ticks = dev.run_timed(prefix, x)
                best = ticks if best is None else min(best, ticks)
            out[prefix] = {"ticks": best, "outputs": outputs, "timer_hz": hz, "inputs": x}
    return out


@contextmanager
def _step(board: str, model: str, what: str):
    """Print how long a step of a model's measurement took (host seconds, for finding where a
    run's time goes; not a result)."""
    start = time.monotonic()
    try:
        yield
    finally:
        print(f"[{board} {model}] {what}: {time.monotonic() - start:.0f} s", file=sys.stderr,
              flush=True)


def _no_reference() -> bool:
    return bool(os.environ.get("MB_BENCH_NO_REFERENCE"))


class _NotTuned(Exception):
    """MB_BENCH_NO_TUNE: the model is measured with the reference and default kernels only."""


def _skipped(board, model: Path, why: str, err: Exception) -> dict:
    """A row for a model the board could not measure, with why (also printed)."""
    print(f"{board.name} {model.stem}: {why}: {str(err).splitlines()[0]}", file=sys.stderr)
    row = {"board": board.name, "model": model.stem, "emulated": board.is_emulated,
           "skipped": why}
    _record([row])
    return row


def measure_board(board: str) -> list[dict]:
    from microbuild import api
    from microbuild.boards import load_board
    from microbuild.compiler.variants import Target
    from microbuild.errors import FitError, MicrobuildError
    from microbuild.tuning.tuner import tune

    b = load_board(board)
    rounds = 1 if b.is_emulated else HOST_ROUNDS
    log = RESULTS / f"tune-{board}.json"
    if not os.environ.get("MB_BENCH_MODELS"):  # a run of some models keeps the others' entries
        log.unlink(missing_ok=True)
    rows = []
    configs = [c for c in CONFIGS if c != "reference" or not _no_reference()]
    # Smallest model first: a run stopped early (MobileNetV2's 3.4 MB of weights take the longest
    # to tune and build) keeps the rows of every smaller model.
    with tempfile.TemporaryDirectory(prefix=f"mb-kernels-{board}-") as tmp:
        # One model at a time (tune splits a model's candidates over several firmwares when
        # they do not fit one).
        for model in sorted(MODELS, key=lambda m: m.stat().st_size):
            work = Path(tmp) / model.stem
            untuned = None  # why the model has no tuned figures, when it has none
            try:
                if os.environ.get("MB_BENCH_NO_TUNE"):
                    # A quick look at the defaults (a kernel change measured beside TFLM):
                    # tuning a model takes most of a board's time.
                    untuned = "MB_BENCH_NO_TUNE"
                    raise _NotTuned
                with _step(board, model.stem, "tune"):
                    # The tuner's own fit check (a build of the tuned firmware) only where the
                    # weights are a large part of a board's flash (MobileNetV2): elsewhere the
                    # measurement firmware below builds the tuned copy anyway, and one that
                    # does not fit gets a row saying so.
                    report = tune(b, [model], log, out_dir=work / "tune",
                                  repeat=1 if b.is_emulated else 9,
                                  check_fit=model.stat().st_size > FIT_CHECK_BYTES)
                cpu = report.cpu
            except _NotTuned:
                cpu = Target.of_board(b).cpu
            except FitError as err:
                # Measured without tuning if the model itself fits (then skipped below if not).
                untuned = "the reference and one candidate do not fit one tuning firmware"
                print(f"{b.name} {model.stem}: {untuned}: {str(err).splitlines()[0]}",
                      file=sys.stderr)
                cpu = Target.of_board(b).cpu
            except MicrobuildError as err:
                if not str(err).startswith("nothing to tune"):
                    raise
                # No op with a variant this CPU runs (the audio front end): tuned = default.
                cpu = Target.of_board(b).cpu
            keys = [KEYS[c] for c in configs if c != "tuned" or untuned is None]
            # (No log yet when nothing was tuned so far: the tuned copy is the default one.)
            options = {"executor": "rpc", "model_variants": {"ref": {"*": "reference"}},
                       "model_tuning": {"tun": log} if log.is_file() else None}
            try:
                # Every configuration's copy in one firmware (one build), or where they do not
                # fit the board together (the M55's 512 KiB ITCM and VWW, MobileNetV2's weights),
                # one firmware each.
                with _step(board, model.stem, f"build ({'+'.join(keys)})"):
                    try:
                        firmwares = [(api.build_firmware(
                            board, {k: str(model) for k in keys}, work / "all", **options),
                            keys)]
                    except FitError:
                        firmwares = []
                        for key in keys:
                            try:
                                firmwares.append((api.build_firmware(
                                    board, {key: str(model)}, work / key, **options), [key]))
                            except FitError as err:
                                if key != "tun":
                                    raise
                                untuned = ("the tuned firmware (faster, larger kernels) does "
                                           "not fit")
                                print(f"{b.name} {model.stem}: {untuned}: "
                                      f"{str(err).splitlines()[0]}", file=sys.stderr)
            except FitError as err:
                rows.append(_skipped(b, model, "the model does not fit the board", err))
                continue
            results, sizes = {}, {}
            with _step(board, model.stem, "run"):
                for firmware, here in firmwares:
                    results |= _run_all(board, firmware, {k: model for k in here}, rounds)
                    sizes |= {m["prefix"]: m for m in firmware.models}
            row = {"board": board, "cpu": cpu, "model": model.stem,
                   "emulated": b.is_emulated}
            # Every configuration's outputs are checked against the reference kernels', or
            # without them against the defaults' (the tests check both against TFLM).
            check = results["ref" if "ref" in results else "def"]
            reference = results.get("ref")
            for config in CONFIGS:
                key = KEYS[config]
                if key not in results:
                    row[config] = None
                    if config == "tuned":
                        row["untuned"] = untuned
                    continue
                r = results[key]
                for a, c in zip(r["outputs"], check["outputs"]):
                    if not (a == c).all():
                        raise SystemExit(f"{board} {model.stem}: {config} outputs differ from "
                                         "the reference kernels'" if reference else
                                         "the default kernels'")
                row[config] = {
                    "ticks": r["ticks"], "timer_hz": r["timer_hz"],
                    "instructions": (round(r["ticks"] * 1e9 / r["timer_hz"])
                                     if b.is_emulated else None),
                    "ratio": r["ticks"] / reference["ticks"] if reference else None,
                    "weights_bytes": sizes[key]["weights_bytes"],
                    "workspace_bytes": sizes[key]["workspace_bytes"],
                    "kernels": sorted({e["kernel"] for e in sizes[key]["ops"]
                                       if e["kernel"] != "reference"}),
                    "on_reference": _left_on_reference(sizes[key]["ops"]),
                }
            row["tflm_arena"] = _tflm_arena(model)
            if board in ANCHOR_BOARDS:
                with _step(board, model.stem, "TFLM + CMSIS-NN anchor"):
                    try:
                        row["anchor"] = run_anchor(board, model, check["inputs"],
                                                   expected=check["outputs"])
                    except (RuntimeError, ValueError) as err:
                        # The anchor firmware refuses the model (an operator TFLM's build does
                        # not register, a model over its loader window): the row says why.
                        row["anchor_error"] = str(err).splitlines()[0][:200]
                        print(f"{board} {model.stem}: TFLM + CMSIS-NN: {row['anchor_error']}",
                              file=sys.stderr)
                with _step(board, model.stem, "code size (AOT build)"):
                    row["code_bytes"] = _code_bytes(board, model, work / "aot")
            rows.append(row)
            _record([row])
    return rows


def _left_on_reference(ops: list[dict]) -> list[str]:
    """The layers that have fast variants for this CPU but run the reference kernel, with the
    reason each variant gave (compile --json's variants_refused). Not counted: a layer whose
    only kernel is the reference, and one the tuner timed fastest on it (a choice, not a
    fallback: e.g. a 1x1 conv of 512 multiply-accumulates on rv32)."""
    left = []
    for op in ops:
        if op["kernel"] != "reference" or op.get("kernel_choice") in ("only kernel", "tuned"):
            continue
        refused = "; ".join(f"{v}: {why}" for v, why in op.get("variants_refused", {}).items())
        left.append(f"#{op['index']} {op['opcode']}" + (f" ({refused})" if refused else ""))
    return left


def _code_bytes(board: str, model: Path, out_dir: Path) -> int:
    """microbuild's code for the model with the default kernels, weights excluded: .text +
    .rodata of a standalone (AOT) firmware of it, less the input it embeds in .rodata."""
    from microbuild import api

    build = api.build_firmware(board, {"def": str(model)}, out_dir, executor="aot")
    inputs = sum(np.asarray(x).nbytes for x in build.inputs("def"))
    return build.size["totals"]["text"] + build.size["totals"]["rodata"] - inputs


_ARENAS: dict[str, int] = {}


def _tflm_arena(model: Path) -> int:
    """TFLM's smallest working arena for the model: memory.json's figure when it has one
    (benchmarks/memory.py measured it with the tflite-micro wheel), else measured here."""
    if not _ARENAS and (RESULTS / "memory.json").is_file():
        _ARENAS.update({r["model"]: r["tflm_arena"]
                        for r in json.loads((RESULTS / "memory.json").read_text())
                        if r.get("tflm_arena")})
    if model.stem not in _ARENAS:
        sys.path.insert(0, str(HERE))
        from tflm_reference import smallest_tflm_arena

        _ARENAS[model.stem] = smallest_tflm_arena(model)
    return _ARENAS[model.stem]


def markdown(rows: list[dict]) -> str:
    header = ["board (cpu)", "model", "reference", "default", "tuned", "default / ref",
              "tuned / ref", "weights ref → tuned", "workspace ref → tuned",
              "tuned workspace / TFLM arena", "layers left on reference: default / tuned"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['board']} | {r['model']} | {r['skipped']} |" + " |" * 8)
            continue
        arena = r.get("tflm_arena")
        # A model tuning could not take (r["untuned"] says why): its default in the tuned
        # columns' place, marked.
        last = "tuned" if r.get("tuned") else "default"
        on_ref = [len(r[c].get("on_reference", ())) for c in ("default", last)]
        value = (lambda c: "-" if not r.get(c) else f"{r[c]['instructions']:,}"
                 if r["emulated"] else f"{r[c]['ticks']:,} ns")
        # Without the reference kernels (MB_BENCH_NO_REFERENCE) the ratios to them are "-" and
        # the weights and workspace columns start from the defaults'.
        ratio = (lambda c: f"{r[c]['ratio']:.3f}" if r.get(c) and r[c].get("ratio") else "-")
        first = "reference" if r.get("reference") else "default"
        lines.append("| " + " | ".join([
            f"{r['board']} ({r['cpu']})", r["model"], value("reference"), value("default"),
            value("tuned") if r.get("tuned") else f"not tuned: {r['untuned']}",
            ratio("default"), ratio("tuned") if r.get("tuned") else "",
            f"{r[first]['weights_bytes']:,} → {r[last]['weights_bytes']:,}",
            f"{r[first]['workspace_bytes']:,} → {r[last]['workspace_bytes']:,}",
            f"{r[last]['workspace_bytes'] / arena:.2f}x of {arena:,}" if arena else "",
            f"{on_ref[0]} / {on_ref[1] if r.get('tuned') else '-'}",
        ]) + " |")
    lines.append("")
    lines.append("Emulated boards: instructions per inference under QEMU `-icount shift=0`. "
                 "host: wall-clock ns, fastest of several runs. Workspace: the model's activation "
                 "workspace with every kernel's scratch (state buffers not included); TFLM "
                 "arena: its smallest working arena (tflite-micro wheel, x86-64). Layers left "
                 "on reference: layers with fast variants for the CPU that none of them took (not "
                 "counted: one the tuner timed fastest on the reference kernel).")
    lines += side_by_side(rows)
    left = [(r["board"], r["model"], c, layer) for r in rows if "skipped" not in r
            for c in ("default", "tuned") if r.get(c)
            for layer in r[c].get("on_reference", ())]
    if left:
        lines += ["", "Layers left on the reference kernel, and why:", ""]
        lines += [f"- {board} {model} ({config}): {layer}" for board, model, config, layer in left]
    return "\n".join(lines) + "\n"


def side_by_side(rows: list[dict]) -> list[str]:
    """The rows measured beside TFLM + CMSIS-NN, each figure with its ratio to TFLM's."""
    refused = [r for r in rows if r.get("anchor_error")]
    rows = [r for r in rows if r.get("anchor")]
    if not rows:
        return []
    header = ["board", "model", "TFLM + CMSIS-NN instructions", "default (/ TFLM)",
              "tuned (/ TFLM)", "workspace (/ TFLM arena used)", "code (/ TFLM .text)",
              "outputs = TFLM + CMSIS-NN"]
    lines = ["", "Side by side with TFLM + CMSIS-NN (../shared/anchors/tflm, same board, model "
             "and input, in the same run):", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        a = r["anchor"]
        last = "tuned" if r.get("tuned") else "default"

        def ratio(mine: int, theirs: int) -> str:
            return f"{mine:,} ({mine / theirs:.2f})"

        lines.append("| " + " | ".join([
            r["board"], r["model"], f"{a['instructions']:,}",
            ratio(r["default"]["instructions"], a["instructions"]),
            ratio(r["tuned"]["instructions"], a["instructions"]) if r.get("tuned") else "-",
            ratio(r[last]["workspace_bytes"], a["arena_used_bytes"]),
            ratio(r["code_bytes"], a["text_bytes"]),
            "yes" if a["outputs_equal"] else "NO",
        ]) + " |")
    if refused:
        lines += ["", "Not run on TFLM + CMSIS-NN (the anchor firmware refused the model):", ""]
        lines += [f"- {r['board']} {r['model']}: {r['anchor_error']}" for r in refused]
    lines += ["", "Instructions per inference under QEMU `-icount shift=0`, both. Workspace: "
              "microbuild's activation workspace with every kernel's scratch (tuned kernels, or "
              "the defaults when not tuned) against TFLM's `arena_used_bytes` (its arena: "
              "tensors, scratch and its own bookkeeping). Code: microbuild's .text + .rodata of "
              "a standalone (AOT) firmware of the model with the default kernels, weights and "
              "the embedded input excluded (startup, executor and the model's kernels only), "
              "against the `text` of `arm-none-eabi-size` of the anchor firmware (TFLM's "
              "interpreter with every operator it registers and CMSIS-NN; weights are not in "
              "it, the model is loaded at run time)."]
    return lines


def _record(new_rows: list[dict]) -> str:
    """Merge rows into kernels.json (replacing the same board and model) and rewrite
    kernels.md; returns the table. Each board's worker records every model as soon as it is
    measured, so a long run that is stopped keeps what it measured (a lock file serialises
    the workers)."""
    import fcntl

    board_order = {b: i for i, b in enumerate(BOARDS)}
    model_order = {m.stem: i for i, m in enumerate(ALL_MODELS)}
    path = RESULTS / "kernels.json"
    with open(Path(tempfile.gettempdir()) / "mb-kernels-results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        new = {(r["board"], r["model"]) for r in new_rows}
        rows = [r for r in (json.loads(path.read_text()) if path.is_file() else [])
                if (r["board"], r["model"]) not in new] + new_rows
        rows.sort(key=lambda r: (board_order.get(r["board"], len(BOARDS)),
                                 model_order.get(r["model"], len(ALL_MODELS))))
        path.write_text(json.dumps(rows, indent=1) + "\n")
        text = markdown(rows)
        (RESULTS / "kernels.md").write_text(text)
    return text


def main(argv: list[str]) -> int:
    if "--no-reference" in argv:
        argv = [a for a in argv if a != "--no-reference"]
        os.environ["MB_BENCH_NO_REFERENCE"] = "1"  # the board workers read it
    boards = argv or BOARDS
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mb-kernels-objects-") as objects:
        # The workers inherit it: one object cache for every build of the run.
        os.environ.setdefault("MICROBUILD_CACHE_DIR", objects)
        return _measure(argv, boards)


def _measure(argv: list[str], boards: list[str]) -> int:
    if not argv and not os.environ.get("MB_BENCH_MODELS"):
        (RESULTS / "kernels.json").unlink(missing_ok=True)  # a full run starts afresh
    # Emulated boards count instructions, so two can share the machine; the host's wall-clock
    # times are taken afterwards, alone. Rows not measured this time (other boards, models
    # outside MB_BENCH_MODELS) keep their figures.
    emulated = [b for b in boards if b != "host"]
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(measure_board, emulated))
    if "host" in boards:
        measure_board("host")
    print(_record([]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
