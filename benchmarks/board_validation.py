"""How long validating a hostile or huge board file takes (issue 28: under a second for any file
under 1 MB), with the limits of microbuild/boards/source.py (no aliases, 1 MiB, 20,000 nodes, 64
levels) and the 100-problem cap of microbuild/boards/loader.py.

Each case is a board file written to a temporary folder, extending mps2-an500 as a user's file
would, then checked with ``check_board_file`` (read, extends resolved, schema and semantic
checks) the way `microbuild boards validate` does. The figure is the best of five runs, in
seconds of this process's CPU time (the machine may be shared), and the outcome: the problems
found, or the error that refused the file.

Writes benchmarks/results/board_validation.json and .md and prints the table.

    .venv/bin/python benchmarks/board_validation.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from microbuild.boards.loader import check_board_file  # noqa: E402
from microbuild.boards.source import MAX_YAML_NODES  # noqa: E402
from microbuild.errors import BoardError  # noqa: E402

RESULTS = HERE / "results"
HEADER = "name: case\nextends: mps2-an500\n"


def laughs() -> str:
    lines = ["lol0: &lol0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return HEADER + "\n".join(lines) + "\n"


def cases() -> dict[str, str]:
    """Name -> board file text; each as large as the limits let it be, or larger."""
    half = MAX_YAML_NODES // 2 - 10  # keys and values are both nodes
    return {
        "billion laughs (10 levels of 10 aliases)": laughs(),
        "1 MiB + 1 byte": HEADER + "init: |\n" + "  /* padding padding */\n" * 43_691,
        "1 MB init snippet (valid)": HEADER + "init: |\n" + "  /* a comment */\n" * 55_000,
        f"{half:,} unknown top-level keys": HEADER + "".join(f"k{i}: {i}\n" for i in range(half)),
        f"{half:,} keys in one mapping": HEADER + "x:\n" + "".join(
            f"  k{i}: {i}\n" for i in range(half)),
        "1,500 regions, all overlapping": HEADER + "memory:\n  regions:\n" + "".join(
            f"    r{i}: {{origin: 0, length: 16, access: rw}}\n" for i in range(1500)),
        "1,500 regions, disjoint": HEADER + "memory:\n  regions:\n" + "".join(
            f"    r{i}: {{origin: {0x30000000 + 16 * i}, length: 16, access: rw}}\n"
            for i in range(1500)),
        "6,000 unknown runners": HEADER + "flash: [" + ", ".join(
            f"{{runner: run{i}}}" for i in range(6000)) + "]\n",
        "30,000 nodes in one list": HEADER + "qemu:\n  args: [" + ", ".join(
            ["x"] * 30_000) + "]\n",
        "nesting 100 levels deep": HEADER + "x: " + "[" * 100 + "]" * 100 + "\n",
        "nesting 10,000 levels deep": HEADER + "x: " + "[" * 10_000 + "]" * 10_000 + "\n",
    }


def measure(path: Path) -> tuple[float, str]:
    best, outcome = float("inf"), ""
    for _ in range(5):
        start = time.process_time()
        try:
            _, problems = check_board_file(path)
            outcome = f"{len(problems)} problem(s)" if problems else "valid"
        except BoardError as exc:
            outcome = "refused: " + str(exc).split(": ", 1)[1][:70]
        best = min(best, time.process_time() - start)
    return best, outcome


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cases().items():
            path = Path(tmp) / "case.yaml"
            path.write_text(text)
            seconds, outcome = measure(path)
            rows.append({"case": name, "bytes": len(text.encode()), "cpu_seconds": round(seconds, 3),
                         "outcome": outcome})
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "board_validation.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["# Validating hostile and huge board files",
             "",
             "`check_board_file` (what `microbuild boards validate` runs), best of 5, CPU seconds. "
             "Goal: under a second for any file under 1 MB. Written by "
             "benchmarks/board_validation.py.",
             "",
             "| case | bytes | CPU s | outcome |",
             "|---|---|---|---|"]
    lines += [f"| {r['case']} | {r['bytes']:,} | {r['cpu_seconds']:.3f} | {r['outcome']} |"
              for r in rows]
    (RESULTS / "board_validation.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[4:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
