"""Remake every committed test model by running each generator script in this folder.

From the repository root, with a Python that has tensorflow-cpu:

    /tmp/tfvenv/bin/python -m tests.models.generate              # all generators
    /tmp/tfvenv/bin/python -m tests.models.generate mlperf_tiny  # only the ones named
    /tmp/tfvenv/bin/python tests/models/generate/__main__.py     # same, as a plain script

A generator is any ``*.py`` file here except the shared helpers and this runner; new ones are picked
up without being listed. Each runs in its own interpreter, the way it is documented to be run
(``python tests/models/generate/<name>.py``): that keeps TensorFlow and Keras state (name counters,
seeds, graph caches) from leaking from one generator into the next, so every model's bytes depend
only on its own script.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent.parent
NOT_GENERATORS = {"common.py", "__init__.py", "__main__.py", "make_all.py", "tflite_builder.py"}


def generators() -> list[Path]:
    return sorted(p for p in HERE.glob("*.py")
                  if p.name not in NOT_GENERATORS and not p.name.startswith("_"))


def main(argv: list[str]) -> int:
    found = generators()
    if argv:
        wanted = {a.removesuffix(".py") for a in argv}
        unknown = wanted - {p.stem for p in found}
        if unknown:
            print(f"no such generator: {', '.join(sorted(unknown))}; "
                  f"have {', '.join(p.stem for p in found)}", file=sys.stderr)
            return 2
        found = [p for p in found if p.stem in wanted]

    failed = []
    for script in found:
        print(f"== {script.relative_to(REPO_ROOT)}", flush=True)
        start = time.monotonic()
        result = subprocess.run([sys.executable, str(script)], cwd=REPO_ROOT)
        print(f"   {'ok' if result.returncode == 0 else f'FAILED ({result.returncode})'} "
              f"in {time.monotonic() - start:.1f} s", flush=True)
        if result.returncode != 0:
            failed.append(script.stem)

    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
