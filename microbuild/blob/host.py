"""The table executor built for the host (runtime/table/host_main.c): one native program per
kernel set that runs any blob packed for that set. What `--executor table` links on a board,
minus the board: the runner, the kernel set's thunks and the kernels' sources."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Sequence

from microbuild.blob.kernel_set import KernelSet
from microbuild.errors import BuildError

RUNNER_SOURCES = ("table/mb_table.c", "table/host_main.c")


def build_host_runner(kernels: KernelSet, out_dir: Path, cc: Sequence[str] = ("gcc",),
                      cflags: Sequence[str] = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"),
                      ) -> Path:
    """Compile the host table runner for ``kernels`` into ``out_dir``; return the program."""
    if kernels.runtime_dir is None:
        raise BuildError("the kernel set names no runtime folder (it was made from no model)")
    out_dir.mkdir(parents=True, exist_ok=True)
    table = out_dir / "mb_table_kernels.c"
    table.write_text(kernels.c_source())
    runtime = kernels.runtime_dir
    sources = [runtime / s for s in (*RUNNER_SOURCES, *kernels.sources)] + [table]
    program = out_dir / "mb_table_runner"
    command = [*cc, *cflags, f"-I{runtime / 'include'}", *map(str, sources), "-o", str(program),
               "-lm"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"building the host table runner failed:\n$ {' '.join(command)}\n"
                         f"{result.stderr}")
    return program
