"""Long fuzzing run over the model reader and compiler (the test suite runs a short one).

Mutates every model available -- tests/models/**/*.tflite, ../shared/models/*.tflite and the
inputs that once broke microbuild in ../shared/regressions/ (or the .tflite files given on the
command line) -- for a time budget, round-robin (a few mutants of every model per round, the
models in a new order each round), compiles every mutant in-process, and builds and runs the C of
a sample of the mutants that compile under ASan/UBSan on the host. Targets: zero tracebacks, zero
hangs, zero sanitizer findings. A clean refusal (a ModelError: "corrupt", "not supported", a float
or uint8 model the compiler does not take yet) is an answer, not a finding. Writes
benchmarks/results/fuzz_models.json and .md, saves every finding's mutant under
benchmarks/results/fuzz_findings/, and prints the table.

    nice -n 19 .venv/bin/python benchmarks/fuzz_models.py [--minutes 30] [--seed 1]
        [--check-c 150] [--name fuzz_models] [MODEL ...]

A run over chosen models (a new model family, say) writes under its own --name, so that it does
not replace the figures of the run over every model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "tests" / "compiler"))

from model_fuzz import FuzzResult, fuzz  # noqa: E402

RESULTS = HERE / "results"
KINDS = ("traceback", "hang", "c-build", "sanitizer")
MUTANTS_PER_ROUND = 4  # per model: every model is reached early, whatever the budget


def every_model() -> dict[str, list[Path]]:
    """The models to mutate, by where they come from (a missing folder gives none)."""
    return {
        "tests/models": sorted((ROOT / "tests" / "models").rglob("*.tflite")),
        "../shared/models": sorted((SHARED / "models").glob("*.tflite")),
        "../shared/regressions": sorted((SHARED / "regressions").glob("*.tflite")),
    }


def seconds_allowed(model: Path) -> int:
    """A mutant's time budget before it counts as a hang: a 4 MB model takes seconds to compile
    on a loaded machine, so the budget grows with the file."""
    return 20 + 20 * (model.stat().st_size // 1_000_000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check-c", type=int, default=150,
                        help="compiled mutants whose C is built and run under sanitizers")
    parser.add_argument("--name", default="fuzz_models",
                        help="results file name (benchmarks/results/NAME.json and .md)")
    args = parser.parse_args()
    groups = {"command line": args.models} if args.models else every_model()
    missing = [name for name, models in groups.items() if not models]
    for name in missing:
        print(f"note: no .tflite under {name}; fuzzing without it")
    group_of = {m: name for name, models in groups.items() for m in models}
    models = list(group_of)
    if not models:
        print("no models to fuzz")
        return 2

    rng = np.random.default_rng(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    start = time.monotonic()
    total = FuzzResult()
    by_group: dict[str, Counter] = {name: Counter() for name in groups}
    rounds = 0
    with tempfile.TemporaryDirectory(prefix="mb-fuzz-") as tmp:
        while time.monotonic() < deadline:
            order = [models[i] for i in rng.permutation(len(models))]
            for k, model in enumerate(order):
                if time.monotonic() >= deadline:
                    break
                # Spread the sanitizer builds over the run and the models: a few per round.
                check_c = min(1 if k % 25 == 0 else 0, args.check_c - total.c_checked)
                result = fuzz([model], MUTANTS_PER_ROUND, seed=args.seed * 100_000 + rounds,
                              seconds_per_mutant=seconds_allowed(model), check_c=check_c,
                              workdir=Path(tmp) / f"r{rounds}", deadline=deadline)
                _add(total, result)
                counts = by_group[group_of[model]]
                counts.update(mutants=result.mutants, refused=result.refused,
                              compiled=result.compiled, c_checked=result.c_checked)
                counts.update(f.kind for f in result.findings)
            rounds += 1
    seconds = time.monotonic() - start
    findings = total.findings
    out_dir = RESULTS / ("fuzz_findings" if args.name == "fuzz_models" else f"{args.name}_findings")
    for old in out_dir.glob("*.tflite"):  # this run's findings only
        old.unlink()
    for f in findings:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{f.model}-{f.kind}-{f.mutant}.tflite").write_bytes(f.data)

    kinds = {k: sum(f.kind == k for f in findings) for k in KINDS}
    report = {"seconds": round(seconds, 1), "rounds": rounds, "seed": args.seed,
              "models": {name: len(ms) for name, ms in groups.items()},
              "mutants": total.mutants, "refused": total.refused, "compiled": total.compiled,
              "c_checked": total.c_checked, "mutants_per_second": round(total.mutants / seconds, 1),
              "findings_by_kind": kinds,
              "by_source": {name: dict(c) for name, c in by_group.items()},
              "findings": [{"model": f.model, "mutant": f.mutant, "kind": f.kind,
                            "detail": f.detail[-800:]} for f in findings]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")

    columns = ("mutants", "refused", "compiled", "c_checked", *KINDS)
    header = ("source", "models", "mutants", "refused with a message", "compiled",
              "C run under ASan/UBSan", "tracebacks", "hangs", "C build failures",
              "sanitizer findings")
    rows = [(name, len(groups[name]), *(by_group[name][c] for c in columns)) for name in groups]
    rows.append(("all", len(models), total.mutants, total.refused, total.compiled,
                 total.c_checked, *kinds.values()))
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    name_args = (f" --name {args.name}" if args.name != "fuzz_models" else "") + \
        (" MODEL..." if args.models else "")
    text = (f"# Fuzzing the reader and compiler\n\n"
            f"`nice -n 19 .venv/bin/python benchmarks/fuzz_models.py --minutes {args.minutes:g} "
            f"--seed {args.seed}{name_args}`: {seconds:.0f} s, {rounds} round(s) of "
            f"{MUTANTS_PER_ROUND} mutants per model, {total.mutants / seconds:.1f} mutants/s.\n\n"
            + "\n".join(table) + "\n")
    if args.models:
        text += "\nModels: " + ", ".join(_shown(m) for m in args.models) + "\n"
    if findings:
        text += "\n## Findings\n\n" + "\n".join(
            f"- {f.model} mutant {f.mutant}: {f.kind}: "
            f"{f.detail.strip().splitlines()[-1][:200] if f.detail.strip() else ''}"
            for f in findings[:50]) + "\n"
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)
    return 1 if findings else 0


def _shown(model: Path) -> str:
    """A model's path as the project's tests reach it: from the repository root."""
    path = model.resolve()
    for base, prefix in ((ROOT, ""), (SHARED, "../shared/")):
        if path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return str(model)


def _add(total: FuzzResult, result: FuzzResult) -> None:
    total.mutants += result.mutants
    total.refused += result.refused
    total.compiled += result.compiled
    total.c_checked += result.c_checked
    total.findings += result.findings


if __name__ == "__main__":
    sys.exit(main())
