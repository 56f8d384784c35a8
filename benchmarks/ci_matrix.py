"""CI matrix benchmark: wall time of `microbuild ci --boards all` (every built-in board, every
toolchain it lists, every test model) on this machine, three ways:

- cold: empty output folder and empty build cache;
- rebuild: the same output folder again, nothing changed (SCons' dependency scan only);
- cached: a fresh output folder with the cache the cold run filled (a CI machine that restored
  its cache: every object and firmware is retrieved, nothing compiled).

Target (issue 7): the cached and rebuild runs under 10 % of the cold run. Writes
benchmarks/results/ci_matrix.json and .md and prints the table.

    .venv/bin/python benchmarks/ci_matrix.py [-j N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TARGET = 0.10


def run(out: Path, cache: Path, jobs: int, cells_json: Path) -> float:
    command = [sys.executable, "-m", "microbuild", "ci", "--boards", "all", "--out", str(out),
               "--cache", str(cache), "-j", str(jobs), "--json", str(cells_json), "-q"]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"microbuild ci failed:\n{result.stdout}\n{result.stderr}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mb-ci-bench-") as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        cells_json = tmp / "cells.json"
        cold = run(tmp / "a", cache, args.jobs, cells_json)
        cells = json.loads(cells_json.read_text())
        rebuild = run(tmp / "a", cache, args.jobs, cells_json)
        cached = run(tmp / "b", cache, args.jobs, cells_json)
    counts: dict[str, int] = {}
    for c in cells:
        counts[c["status"]] = counts.get(c["status"], 0) + 1
    figures = {"jobs": args.jobs, "cpus": os.cpu_count(), "cells": len(cells), "statuses": counts,
               "cold_seconds": round(cold, 1), "rebuild_seconds": round(rebuild, 1),
               "cached_seconds": round(cached, 1),
               "rebuild_ratio": round(rebuild / cold, 3), "cached_ratio": round(cached / cold, 3),
               "target_ratio": TARGET}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ci_matrix.json").write_text(json.dumps(figures, indent=1) + "\n")
    table = "\n".join([
        "| run | seconds | vs cold |", "|---|---:|---:|",
        f"| cold (empty output, empty cache) | {cold:.1f} | 1.00 |",
        f"| rebuild (same output, nothing changed) | {rebuild:.1f} | {rebuild / cold:.2f} |",
        f"| cached (fresh output, warm cache) | {cached:.1f} | {cached / cold:.2f} |",
    ]) + "\n"
    (RESULTS / "ci_matrix.md").write_text(
        f"# `microbuild ci --boards all`: {len(cells)} cells "
        f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))}), -j {args.jobs}\n\n"
        f"Target: rebuild and cached under {TARGET:.0%} of cold.\n\n" + table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
