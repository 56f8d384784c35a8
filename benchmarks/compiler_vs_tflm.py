"""Compiler benchmark: microbuild's generated C against the TFLM interpreter, per test model.

For each model in tests/models/*.tflite it measures, in one run:
- RAM: our workspace, which holds every tensor, inputs and outputs included, as TFLM's arena does
  (the kernels keep no static state), against the smallest TFLM arena that works (found by
  bisection in child processes, benchmarks/tflm_reference.py);
- weights bytes (.mb_weights) and code bytes (.text of the model and its kernels), cross-compiled
  with arm-none-eabi-gcc -O2 for Cortex-M7;
- host time per inference: our C built natively with gcc -O2 against TFLM's invoke() (median).

Targets (issue 3): total RAM <= 0.7 x TFLM's arena, host time <= 0.5 x TFLM's, for every model.
Writes benchmarks/results/compiler_vs_tflm.json and .md and prints the table.

    .venv/bin/python benchmarks/compiler_vs_tflm.py [MODEL.tflite ...]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from elftools.elf.constants import SH_FLAGS
from elftools.elf.elffile import ELFFile

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tflm_reference import smallest_tflm_arena, tflm_seconds_per_inference  # noqa: E402

from microbuild.compiler import compile_model  # noqa: E402

RESULTS = HERE / "results"
CORTEX_M7 = ["arm-none-eabi-gcc", "-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard",
             "-O2", "-std=c99", "-ffunction-sections", "-fdata-sections"]
RAM_TARGET, TIME_TARGET = 0.7, 0.5


def _timing_main(prefix: str, n_inputs: int, n_outputs: int) -> str:
    P = prefix.upper()
    decls, fills, args = [], [], []
    for k in range(n_inputs):
        decls.append(f"static {P}_INPUT{k}_TYPE in{k}[{P}_INPUT{k}_SIZE];")
        fills.append(f"for (long i = 0; i < {P}_INPUT{k}_SIZE; i++) in{k}[i] = "
                     f"({P}_INPUT{k}_TYPE)((i * 37 + {k}) % 200 - 100) / ({P}_INPUT{k}_TYPE)"
                     f"(sizeof(in{k}[0]) == 4 ? 100 : 1);")
        args.append(f"in{k}")
    for k in range(n_outputs):
        decls.append(f"static {P}_OUTPUT{k}_TYPE out{k}[{P}_OUTPUT{k}_SIZE];")
        args.append(f"out{k}")
    call = f"{prefix}_run({', '.join(args + ['workspace'])})"
    return f"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include "{prefix}.h"
{chr(10).join(decls)}
static _Alignas(16) unsigned char workspace[{P}_WORKSPACE_SIZE + 16];
static double now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }}
static int cmp(const void *a, const void *b) {{ double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }}
int main(int argc, char **argv) {{
    int batches = 21, per_batch = argc > 1 ? atoi(argv[1]) : 10;
    double t[21];
    {chr(10).join(fills)}
    for (int i = 0; i < 3; i++) {call};
    for (int b = 0; b < batches; b++) {{
        double start = now();
        for (int i = 0; i < per_batch; i++) {call};
        t[b] = (now() - start) / per_batch;
    }}
    qsort(t, batches, sizeof t[0], cmp);
    printf("%.9f\\n", t[batches / 2]);
    return 0;
}}
"""


def _section_bytes(objects: list[Path]) -> dict[str, int]:
    sizes = {"code": 0, "weights": 0, "params": 0}
    for obj in objects:
        with obj.open("rb") as f:
            for section in ELFFile(f).iter_sections():
                flags = section["sh_flags"]
                if not flags & SH_FLAGS.SHF_ALLOC:
                    continue
                if section.name.startswith(".mb_weights"):
                    sizes["weights"] += section["sh_size"]
                elif flags & SH_FLAGS.SHF_EXECINSTR:
                    sizes["code"] += section["sh_size"]
                elif section.name.startswith(".rodata"):
                    sizes["params"] += section["sh_size"]
    return sizes


def measure(model: Path, work: Path) -> dict:
    prefix = "bench"
    compiled = compile_model(model, prefix=prefix)
    src = work / model.stem
    compiled.write(src)
    runtime = compiled.runtime_dir
    kernels = [runtime / k for k in compiled.kernel_sources]
    model_c = [src / f"{prefix}.c", src / f"{prefix}_weights.c"]
    include = ["-I", str(src), "-I", str(runtime / "include")]

    objects = []
    for c in model_c + kernels:
        obj = src / (c.stem + ".m7.o")
        subprocess.run(CORTEX_M7 + include + ["-c", str(c), "-o", str(obj)], check=True)
        objects.append(obj)
    sizes = _section_bytes(objects)

    main_c = src / "timing_main.c"
    main_c.write_text(_timing_main(prefix, len(compiled.inputs), len(compiled.outputs)))
    exe = src / "timing"
    subprocess.run(["gcc", "-O2", "-std=c11", *include, str(main_c), *map(str, model_c + kernels),
                    "-o", str(exe), "-lm"], check=True)
    ours_s = float(subprocess.run([str(exe), "20"], check=True, capture_output=True, text=True).stdout)
    tflm_s = tflm_seconds_per_inference(model, repeats=50)

    io_bytes = sum(t.bytes for t in compiled.inputs) + sum(t.bytes for t in compiled.outputs)
    ours_ram = compiled.workspace_bytes
    tflm_arena = smallest_tflm_arena(model)
    return {
        "model": model.name,
        "ops": len(compiled.ops),
        "workspace_bytes": compiled.workspace_bytes,
        "io_bytes": io_bytes,
        "ram_bytes": ours_ram,
        "tflm_arena_bytes": tflm_arena,
        "ram_ratio": round(ours_ram / tflm_arena, 3),
        "weights_bytes": compiled.weights_bytes,
        "m7_weights_section_bytes": sizes["weights"],
        "m7_code_bytes": sizes["code"],
        "m7_params_bytes": sizes["params"],
        "host_us_per_inference": round(ours_s * 1e6, 2),
        "tflm_us_per_inference": round(tflm_s * 1e6, 2),
        "time_ratio": round(ours_s / tflm_s, 3),
    }


def main(argv: list[str]) -> int:
    models = [Path(a) for a in argv] or sorted((HERE.parent / "tests" / "models").glob("*.tflite"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="mb-bench-") as tmp:
        for model in models:
            print(f"measuring {model.name} ...", file=sys.stderr, flush=True)
            rows.append(measure(model, Path(tmp)))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compiler_vs_tflm.json").write_text(json.dumps(rows, indent=2) + "\n")
    header = ("| model | ops | workspace B (I/O incl.) | of which I/O B | our RAM B | TFLM arena B | RAM ratio | weights B "
              "| code B (M7) | params B (M7) | ours µs | TFLM µs | time ratio |")
    lines = [header, "|" + "---|" * 13]
    for r in rows:
        lines.append(f"| {r['model']} | {r['ops']} | {r['workspace_bytes']:,} | {r['io_bytes']:,} | "
                     f"{r['ram_bytes']:,} | {r['tflm_arena_bytes']:,} | {r['ram_ratio']:.3f} | "
                     f"{r['weights_bytes']:,} | {r['m7_code_bytes']:,} | {r['m7_params_bytes']:,} | "
                     f"{r['host_us_per_inference']:.1f} | {r['tflm_us_per_inference']:.1f} | {r['time_ratio']:.3f} |")
    ok = all(r["ram_ratio"] <= RAM_TARGET and r["time_ratio"] <= TIME_TARGET for r in rows)
    lines.append("")
    lines.append(f"targets: RAM ratio <= {RAM_TARGET}, time ratio <= {TIME_TARGET}: "
                 f"{'all met' if ok else 'NOT all met'}")
    table = "\n".join(lines)
    (RESULTS / "compiler_vs_tflm.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
