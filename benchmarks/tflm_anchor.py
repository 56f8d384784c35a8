"""TFLM + CMSIS-NN beside microbuild: the prebuilt TFLM firmwares of ../shared/anchors/tflm run
any .tflite in QEMU and count instructions exactly as microbuild's figures are counted
(`-icount shift=0`), on mps2-an386 (M4F), mps2-an500 (M7) and mps3-an547 (M55). The benchmarks
run a model on them on the same input they give microbuild, in the same run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

ANCHORS = Path(__file__).resolve().parent.parent.parent / "shared" / "anchors" / "tflm"
ANCHOR_BOARDS = ("mps2-an386", "mps2-an500", "mps3-an547")


def run_anchor(board: str, model: Path, inputs: list[np.ndarray],
               expected: list[np.ndarray] | None = None) -> dict:
    """Instructions per inference of TFLM + CMSIS-NN on ``board`` for ``model`` on ``inputs``,
    its arena (`arena_used_bytes`: tensors, scratch and its bookkeeping), its code (the ELF's
    `text`) and, given ``expected``, whether its outputs equal those."""
    sys.path.insert(0, str(ANCHORS))
    import run as anchor_run

    r = anchor_run.run(str(model), board, "cmsis_nn", inputs=[np.asarray(x) for x in inputs])
    out = {"instructions": r["instructions"], "arena_used_bytes": r["arena_used_bytes"],
           "text_bytes": elf_text(Path(anchor_run.elf_path(board, "cmsis_nn")))}
    if expected is not None:
        out["outputs_equal"] = len(r["outputs"]) == len(expected) and all(
            np.array_equal(np.asarray(a).reshape(-1), np.asarray(b).reshape(-1))
            for a, b in zip(r["outputs"], expected))
    return out


def elf_text(elf: Path) -> int:
    """The ELF's code and read-only data: the `text` column of `arm-none-eabi-size`."""
    out = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    return int(out.splitlines()[1].split()[0])
