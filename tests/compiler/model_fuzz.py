"""A seeded mutation fuzzer for the model reader and compiler.

Hostile or damaged .tflite files must give a clear error (``ModelError``) or compile, never a
Python traceback or a hang, and a mutant that compiles must give C that builds warning-free and
runs clean under AddressSanitizer and UndefinedBehaviorSanitizer. ``fuzz`` mutates real models
(bit flips, overwritten bytes, truncation, corrupted flatbuffer offsets and vector lengths,
non-finite and extreme floats where the quantization scales are, spliced chunks), compiles each
mutant in-process with ``compile_model`` under a per-mutant alarm (on CPU time, so a machine
busy with other work does not turn a slow compile into a "hang"), and classifies the outcome.

Used by ``tests/compiler/test_fuzz.py`` (a bounded run in the test suite) and
``benchmarks/fuzz_models.py`` (long runs). Deterministic: the same seed, models and count give
the same mutants.
"""

from __future__ import annotations

import signal
import struct
import subprocess
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

# Values worth writing over a 32-bit word: flatbuffer offsets and lengths at their limits, and the
# float bit patterns of NaN, infinities, zero, negative and extreme scales.
_WORDS = [0, 1, 4, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF, 0x10000, 0x7FC00000, 0x7F800000,
          0xFF800000, 0x80000001, 0xBF800000, 0x00000001, 0x7F7FFFFF, 0x0000FFFF]
_FLOATS = [float("nan"), float("inf"), float("-inf"), 0.0, -1.0, 1e-45, 3.4e38, -0.0]


class MutantTimeout(Exception):
    pass


@dataclass
class Finding:
    model: str
    mutant: int
    kind: str  # "traceback", "hang", "c-build", "sanitizer"
    detail: str
    data: bytes = field(repr=False, default=b"")


@dataclass
class FuzzResult:
    mutants: int = 0
    compiled: int = 0
    refused: int = 0
    c_checked: int = 0
    findings: list[Finding] = field(default_factory=list)


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """One mutant of ``data``: one to three mutations of random kinds."""
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(0, 7))
        n = len(buf)
        if n < 16:
            break
        if kind == 0:  # bit flips
            for _ in range(int(rng.integers(1, 9))):
                pos = int(rng.integers(0, n))
                buf[pos] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:  # bytes overwritten
            pos = int(rng.integers(0, n))
            for k in range(int(rng.integers(1, 5))):
                if pos + k < n:
                    buf[pos + k] = int(rng.choice([0, 0xFF, 0x7F, 0x80, int(rng.integers(256))]))
        elif kind == 2:  # truncated
            buf = buf[:int(rng.integers(8, n))]
        elif kind == 3:  # a 32-bit word (offset, length, count) replaced
            pos = int(rng.integers(0, n // 4)) * 4
            word = int(rng.choice(_WORDS)) if rng.random() < 0.6 else \
                (struct.unpack_from("<I", buf, pos)[0] + int(rng.integers(-64, 65))) & 0xFFFFFFFF
            struct.pack_into("<I", buf, pos, word)
        elif kind == 4:  # a float that looks like a quantization scale replaced
            pos = _find_scale_like(buf, rng)
            if pos is not None:
                struct.pack_into("<f", buf, pos, float(rng.choice(_FLOATS)))
        elif kind == 5:  # a chunk copied over another place
            length = int(rng.integers(4, 65))
            src, dst = int(rng.integers(0, n)), int(rng.integers(0, n))
            chunk = buf[src:src + length]
            buf[dst:dst + len(chunk)] = chunk
            del buf[n:]
        else:  # an int64 zero point or int32 value pushed to an extreme
            pos = int(rng.integers(0, n // 8)) * 8
            struct.pack_into("<q", buf, pos, int(rng.choice([-(1 << 63), (1 << 63) - 1, 300,
                                                              -300, 1 << 40])))
    return bytes(buf)


def _find_scale_like(buf: bytearray, rng: np.random.Generator) -> int | None:
    """A 4-aligned position holding a small positive float32 (what scales look like)."""
    n = len(buf) // 4
    for _ in range(64):
        pos = int(rng.integers(0, n)) * 4
        (value,) = struct.unpack_from("<f", buf, pos)
        if 1e-12 < value < 1.0:
            return pos
    return None


def _set_alarm(seconds: float) -> None:
    """Raise MutantTimeout after ``seconds`` of this process's CPU time (0: cancel)."""
    signal.setitimer(signal.ITIMER_VIRTUAL, seconds)


def _alarm(signum, frame):
    raise MutantTimeout()


def fuzz(models: list[Path], mutants_per_model: int, seed: int, seconds_per_mutant: int = 20,
         check_c: int = 0, workdir: Path | None = None, deadline: float | None = None
         ) -> FuzzResult:
    """Mutate each model ``mutants_per_model`` times; compile each mutant in-process.

    ``check_c``: how many compiled mutants (the first ones) also get their C built with gcc
    -Wall -Wextra -Werror and ASan+UBSan and run on random inputs. ``deadline``: a
    ``time.monotonic()`` value after which no new mutant starts."""
    import time

    result = FuzzResult()
    old = signal.signal(signal.SIGVTALRM, _alarm)
    try:
        for model in models:
            data = model.read_bytes()
            rng = np.random.default_rng([seed, len(data)])
            for k in range(mutants_per_model):
                if deadline is not None and time.monotonic() > deadline:
                    return result
                mutant = mutate(data, rng)
                result.mutants += 1
                _set_alarm(seconds_per_mutant)
                try:
                    compiled = compile_model(mutant, prefix="fz")
                except ModelError:
                    result.refused += 1
                    continue
                except MutantTimeout:
                    result.findings.append(Finding(model.name, k, "hang",
                                                   f"no answer in {seconds_per_mutant} s of CPU "
                                                   "time", mutant))
                    continue
                except Exception:  # noqa: BLE001 - any other exception is the finding
                    result.findings.append(Finding(model.name, k, "traceback",
                                                   traceback.format_exc(limit=6), mutant))
                    continue
                finally:
                    _set_alarm(0)
                result.compiled += 1
                if result.c_checked < check_c and workdir is not None:
                    result.c_checked += 1
                    problem = check_generated_c(compiled, workdir / f"{model.stem}-{k}")
                    if problem:
                        result.findings.append(Finding(model.name, k, problem[0], problem[1],
                                                       mutant))
    finally:
        signal.signal(signal.SIGVTALRM, old)
    return result


_CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-g", "-fsanitize=address,undefined",
           "-fno-sanitize-recover=all"]


def check_generated_c(compiled, out: Path) -> tuple[str, str] | None:
    """Build the mutant's C with a main that runs it on random inputs; (kind, detail) on a
    finding, else None."""
    compiled.write(out)
    P = compiled.prefix.upper()
    lines = ["#include <stdlib.h>", "#include <string.h>", f'#include "{compiled.prefix}.h"',
             "int main(void)", "{", f"    unsigned char *ws = malloc({P}_WORKSPACE_SIZE + 1);",
             "    srand(1);"]
    args = []
    for k in range(len(compiled.inputs)):
        lines += [f"    unsigned char *in{k} = malloc({P}_INPUT{k}_BYTES);",
                  f"    for (long i = 0; i < {P}_INPUT{k}_BYTES; i++) in{k}[i] = (unsigned char)rand();"]
        args.append(f"(const void *)in{k}")
    for k in range(len(compiled.outputs)):
        lines.append(f"    unsigned char *out{k} = malloc({P}_OUTPUT{k}_BYTES + 1);")
        args.append(f"(void *)out{k}")
    args.append("ws")
    if compiled.state_bytes:  # a stateful model (LSTM, SVDF, signal filters): reset, then run
        lines += [f"    unsigned char *st = malloc({P}_STATE_SIZE);",
                  f"    {compiled.prefix}_reset(st);"]
        args.append("st")
    lines += [f"    return {compiled.prefix}_run({', '.join(args)}) == 0 ? 0 : 3;", "}"]
    (out / "main.c").write_text("\n".join(lines) + "\n")
    sources = [out / n for n in compiled.sources if n.endswith(".c")] + \
        [compiled.runtime_dir / k for k in compiled.kernel_sources] + [out / "main.c"]
    binary = out / "mutant"
    build = subprocess.run(["gcc", *_CFLAGS, f"-I{out}", f"-I{compiled.runtime_dir / 'include'}",
                            *map(str, sources), "-o", str(binary), "-lm"],  # float kernels: libm
                           capture_output=True, text=True)
    if build.returncode != 0:
        return "c-build", build.stderr[-2000:]
    try:
        run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60,
                             env={"ASAN_OPTIONS": "detect_leaks=0",
                                  "UBSAN_OPTIONS": "print_stacktrace=1"})
    except subprocess.TimeoutExpired:
        return "hang", "the generated C ran for over 60 s"
    if run.returncode != 0:
        return "sanitizer", f"exit {run.returncode}: {run.stderr[-2000:]}"
    return None
