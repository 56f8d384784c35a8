"""The TensorFlow Lite Micro side of the compiler benchmark: TFLM's arena need and host speed.

Runs under microbuild's own environment (numpy, tflite, tflite-micro); no TensorFlow.

    .venv/bin/python benchmarks/tflm_reference.py [MODEL.tflite ...] [--repeats N] [--upper BYTES]

prints, for every model (default: tests/models/*.tflite), the smallest arena TFLM works with, TFLM's
own "Arena allocation total" reading, and the median host time of one ``invoke()``.

Why the arena is found by trying sizes, each in a child process (see
/work/shared/notes/reference-interpreters.md):
  * TFLM has no Python call that returns its arena use. ``print_allocations()`` writes the
    RecordingMicroAllocator's totals to C stderr (fd 2), so a child's stderr is captured and parsed.
  * That recorded total can be below the smallest arena that works, so it is a reading to compare
    against, not the answer.
  * With an arena that is too small TFLM often crashes the process (SIGSEGV) instead of raising, so
    no trial may run in the calling process.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_UPPER = 4 * 1024 * 1024  # bytes; far above what any committed model needs
GRANULARITY = 16                 # TFLM aligns arena allocations to 16 bytes
INPUT_SEED = 0
TRIAL_TIMEOUT_S = 120
_RESULT_MARKER = "TFLM_TRIAL_RESULT "


@dataclass(frozen=True)
class ArenaReport:
    smallest: int         # smallest arena (bytes, multiple of 16) that allocates and invokes correctly
    recorded_total: int   # TFLM's "Arena allocation total", read with that smallest arena
    recorded_head: int    # ... its non-persistent part (activations and scratch)
    recorded_tail: int    # ... its persistent part (tensor structs, kernel data; x86-64 sized)
    trials: int           # child processes run to find ``smallest``


@dataclass(frozen=True)
class _Trial:
    ok: bool
    outputs: list[str] | None  # hex of each output tensor's bytes when invoke() succeeded
    allocations: dict[str, int]
    detail: str                # why a trial failed: exit status and the end of stderr


# --------------------------------------------------------------------------------------------------
# Model inputs


def _input_tensors(model_data: bytes) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Shape and numpy dtype of every input of subgraph 0, read from the flatbuffer."""
    import tflite

    dtypes = {tflite.TensorType.INT8: np.int8, tflite.TensorType.UINT8: np.uint8,
              tflite.TensorType.INT16: np.int16, tflite.TensorType.INT32: np.int32,
              tflite.TensorType.FLOAT32: np.float32}
    model = tflite.Model.GetRootAsModel(model_data, 0)
    graph = model.Subgraphs(0)
    result = []
    for i in range(graph.InputsLength()):
        tensor = graph.Tensors(graph.Inputs(i))
        shape = tuple(int(d) for d in tensor.ShapeAsNumpy()) if tensor.ShapeLength() else ()
        if tensor.Type() not in dtypes:
            raise ValueError(f"input {i} has tensor type {tensor.Type()}, not supported here")
        result.append((shape, np.dtype(dtypes[tensor.Type()])))
    return result


def seeded_inputs(model_data: bytes, seed: int = INPUT_SEED) -> list[np.ndarray]:
    """One fixed pseudo-random array per model input: full integer range, or [-1, 1) for floats."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in _input_tensors(model_data):
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            arrays.append(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))
    return arrays


def _output_count(model_data: bytes) -> int:
    import tflite

    return tflite.Model.GetRootAsModel(model_data, 0).Subgraphs(0).OutputsLength()


# --------------------------------------------------------------------------------------------------
# One trial, in a child process


def _child_trial(model_path: str, arena_size: int, seed: int) -> None:
    """Child side: allocate, invoke on the seeded inputs, print outputs; may well crash."""
    from tflite_micro import runtime

    data = Path(model_path).read_bytes()
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=arena_size)
    for index, array in enumerate(seeded_inputs(data, seed)):
        interpreter.set_input(array, index)
    interpreter.invoke()
    outputs = [np.ascontiguousarray(interpreter.get_output(i)).tobytes().hex()
               for i in range(_output_count(data))]
    interpreter.print_allocations()  # to fd 2, read by the parent
    print(_RESULT_MARKER + json.dumps({"outputs": outputs}), flush=True)


_ALLOCATION_LINE = re.compile(r"\[RecordingMicroAllocator\] Arena allocation (total|head|tail) (\d+) bytes")


def _run_trial(model_path: Path, arena_size: int, seed: int = INPUT_SEED) -> _Trial:
    """Parent side: run one trial in a fresh interpreter process and report what happened."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_trial", str(model_path),
           str(arena_size), str(seed)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TRIAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return _Trial(False, None, {}, f"timed out after {TRIAL_TIMEOUT_S} s")
    allocations = {m[1]: int(m[2]) for m in _ALLOCATION_LINE.finditer(proc.stderr)}
    result = next((line[len(_RESULT_MARKER):] for line in proc.stdout.splitlines()
                   if line.startswith(_RESULT_MARKER)), None)
    if proc.returncode != 0 or result is None:
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        return _Trial(False, None, allocations, f"exit status {proc.returncode}: {tail}")
    return _Trial(True, json.loads(result)["outputs"], allocations, "")


# --------------------------------------------------------------------------------------------------
# Public API


def tflm_arena_report(model_path, upper: int = DEFAULT_UPPER) -> ArenaReport:
    """Smallest working TFLM arena for ``model_path`` by bisection, with TFLM's own reading.

    A size "works" when the child allocates, invokes, exits cleanly, and produces the same outputs
    as with the ``upper`` arena (so a too-small arena that silently overlapped buffers would not
    count). Bisection assumes any size at or above the smallest one works, as TFLM's allocator does.
    """
    model_path = Path(model_path)
    reference = _run_trial(model_path, upper)
    if not reference.ok:
        raise RuntimeError(f"{model_path}: TFLM fails even with a {upper}-byte arena "
                           f"({reference.detail}); raise `upper`")
    trials = 1

    # Invariant: `low` units of 16 bytes fail (0 trivially does), `high` units work.
    low, high = 0, upper // GRANULARITY
    best = reference
    while high - low > 1:
        mid = (low + high) // 2
        trial = _run_trial(model_path, mid * GRANULARITY)
        trials += 1
        if trial.ok and trial.outputs == reference.outputs:
            high, best = mid, trial
        else:
            low = mid
    return ArenaReport(smallest=high * GRANULARITY,
                       recorded_total=best.allocations.get("total", -1),
                       recorded_head=best.allocations.get("head", -1),
                       recorded_tail=best.allocations.get("tail", -1),
                       trials=trials)


def smallest_tflm_arena(model_path, upper: int = DEFAULT_UPPER, verbose: bool = False) -> int:
    """Smallest arena in bytes (multiple of 16) with which TFLM allocates and invokes correctly.

    With ``verbose`` it also prints TFLM's own "Arena allocation total" reading for comparison;
    ``tflm_arena_report`` returns that reading as data.
    """
    report = tflm_arena_report(model_path, upper)
    if verbose:
        print(f"{Path(model_path).name}: smallest working arena {report.smallest} B; "
              f"TFLM records {report.recorded_total} B "
              f"(head {report.recorded_head} + tail {report.recorded_tail}) "
              f"after {report.trials} trials")
    return report.smallest


def tflm_seconds_per_inference(model_path, repeats: int = 50, arena_size: int = DEFAULT_UPPER,
                               seed: int = INPUT_SEED) -> float:
    """Median host wall time of one TFLM ``invoke()`` on a fixed seeded input, in seconds.

    Runs in this process: with an ample arena TFLM does not crash. One untimed invoke first, so
    one-time costs (page faults on the arena, lazy kernel setup) are not counted.
    """
    from tflite_micro import runtime

    data = Path(model_path).read_bytes()
    interpreter = runtime.Interpreter.from_bytes(data, arena_size=arena_size)
    for index, array in enumerate(seeded_inputs(data, seed)):
        interpreter.set_input(array, index)
    interpreter.invoke()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        interpreter.invoke()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# --------------------------------------------------------------------------------------------------
# Command line


def main(argv: list[str]) -> int:
    if argv[:1] == ["--_trial"]:
        _child_trial(argv[1], int(argv[2]), int(argv[3]))
        return 0

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path,
                        help="models to measure (default: tests/models/*.tflite)")
    parser.add_argument("--repeats", type=int, default=50, help="timed invokes per model")
    parser.add_argument("--upper", type=int, default=DEFAULT_UPPER,
                        help="arena size known to be enough (bytes)")
    args = parser.parse_args(argv)
    models = args.models or sorted((REPO_ROOT / "tests" / "models").glob("*.tflite"))

    header = (f"{'model':<28} {'file B':>8} {'TFLM total':>10} {'head':>8} {'tail':>7} "
              f"{'smallest':>9} {'+B':>6} {'trials':>6} {'us/inf':>10}")
    print(header)
    print("-" * len(header))
    for path in models:
        report = tflm_arena_report(path, args.upper)
        seconds = tflm_seconds_per_inference(path, args.repeats)
        print(f"{path.name:<28} {path.stat().st_size:>8} {report.recorded_total:>10} "
              f"{report.recorded_head:>8} {report.recorded_tail:>7} {report.smallest:>9} "
              f"{report.smallest - report.recorded_total:>6} {report.trials:>6} "
              f"{seconds * 1e6:>10.1f}", flush=True)
    print("\nTFLM total/head/tail: RecordingMicroAllocator's reading with the smallest arena "
          "(tail is x86-64 sized);\nsmallest: least 16-byte-multiple arena that allocates and "
          "invokes with the same outputs; +B = smallest - total;\nus/inf: median host time of "
          f"invoke() over {args.repeats} runs (TFLM reference kernels).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
