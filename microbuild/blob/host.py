"""The table executor built for the host (runtime/table/host_main.c): one native program per
kernel set that runs any blob packed for that set. What `--executor table` links on a board,
minus the board: the runner, the kernel set's thunks and the kernels' sources."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from elftools.elf.elffile import ELFFile

from microbuild.blob.kernel_set import KernelSet
from microbuild.errors import BuildError

RUNNER_SOURCES = ("table/mb_table.c", "table/host_main.c")
THUNKS = "mb_table_kernels.c"


@dataclass
class HostRunner:
    program: Path
    # Code and constant bytes (.text*, .rodata*) per source: the kernels' runtime/-relative
    # paths, the runner's, and THUNKS for the kernel set's table.
    code_bytes: dict[str, int]


def object_code_bytes(obj: Path) -> int:
    with obj.open("rb") as f:
        return sum(s["sh_size"] for s in ELFFile(f).iter_sections()
                   if s.name.startswith((".text", ".rodata")))


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"building the host table runner failed:\n$ {' '.join(command)}\n"
                         f"{result.stderr}")


def build_host_runner(kernels: KernelSet, out_dir: Path, cc: Sequence[str] = ("gcc",),
                      cflags: Sequence[str] = ("-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"),
                      ) -> HostRunner:
    """Compile the host table runner for ``kernels`` into ``out_dir``, one object per source
    (to report each one's size), and link it."""
    if kernels.runtime_dir is None:
        raise BuildError("the kernel set names no runtime folder (it was made from no model)")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / THUNKS).write_text(kernels.c_source())
    runtime = kernels.runtime_dir
    sources = {s: runtime / s for s in (*RUNNER_SOURCES, *kernels.sources)}
    sources[THUNKS] = out_dir / THUNKS
    objects, sizes = [], {}
    for name, path in sources.items():
        obj = out_dir / "obj" / (name.replace("/", "_") + ".o")
        obj.parent.mkdir(exist_ok=True)
        _run([*cc, *cflags, f"-I{runtime / 'include'}", "-c", str(path), "-o", str(obj)])
        objects.append(str(obj))
        sizes[name] = object_code_bytes(obj)
    program = out_dir / "mb_table_runner"
    _run([*cc, *cflags, *objects, "-o", str(program), "-lm"])
    return HostRunner(program, sizes)
