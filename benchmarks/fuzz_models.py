"""Long fuzzing run over the model reader and compiler (the test suite runs a short one).

Mutates the test models and the real models in ../shared/models (and any .tflite given on the
command line) for a time budget, compiles every mutant in-process, and builds and runs the C of a
sample of the mutants that compile under ASan/UBSan. Targets: zero tracebacks, zero hangs, zero
sanitizer findings. Writes benchmarks/results/fuzz_models.json and .md, saves every finding's
mutant under benchmarks/results/fuzz_findings/, and prints the table.

    .venv/bin/python benchmarks/fuzz_models.py [--minutes 5] [--seed 1] [--check-c 40] [MODEL ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

from model_fuzz import fuzz  # noqa: E402

RESULTS = HERE / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check-c", type=int, default=40,
                        help="compiled mutants whose C is built and run under sanitizers")
    args = parser.parse_args()
    models = args.models or (sorted((ROOT / "tests" / "models").glob("*.tflite")) +
                             sorted((ROOT.parent / "shared" / "models").glob("*.tflite")))
    # A mutant of a multi-megabyte model takes seconds; the small ones cover the same structures.
    models = [m for m in models if m.stat().st_size < 1_000_000]
    deadline = time.monotonic() + args.minutes * 60
    start = time.monotonic()
    total = {"mutants": 0, "compiled": 0, "refused": 0, "c_checked": 0}
    findings = []
    rounds = 0
    with tempfile.TemporaryDirectory(prefix="mb-fuzz-") as tmp:
        while time.monotonic() < deadline:
            remaining_c = max(0, args.check_c - total["c_checked"])
            result = fuzz(models, 200, seed=args.seed * 1000 + rounds, check_c=remaining_c,
                          workdir=Path(tmp) / f"r{rounds}", deadline=deadline)
            rounds += 1
            for key in total:
                total[key] += getattr(result, key)
            findings += result.findings
    seconds = time.monotonic() - start
    out_dir = RESULTS / "fuzz_findings"
    for f in findings:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{f.model}-{f.kind}-{f.mutant}.tflite").write_bytes(f.data)
    report = {"seconds": round(seconds, 1), "models": [m.name for m in models], **total,
              "mutants_per_second": round(total["mutants"] / seconds, 1),
              "findings": [{"model": f.model, "kind": f.kind, "detail": f.detail[-800:]}
                           for f in findings]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "fuzz_models.json").write_text(json.dumps(report, indent=2) + "\n")
    kinds = {k: sum(f.kind == k for f in findings) for k in ("traceback", "hang", "c-build",
                                                              "sanitizer")}
    rows = [("mutants", total["mutants"]), ("seconds", f"{seconds:.0f}"),
            ("refused with a message", total["refused"]), ("compiled", total["compiled"]),
            ("compiled and run under ASan/UBSan", total["c_checked"]),
            *((f"findings: {k}", v) for k, v in kinds.items())]
    table = ["| measure | value |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    text = (f"# Fuzzing the reader and compiler\n\nModels: {', '.join(m.name for m in models)}\n\n"
            + "\n".join(table) + "\n")
    (RESULTS / "fuzz_models.md").write_text(text)
    print(text)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
