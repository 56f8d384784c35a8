"""Test harness for the compiler: run a model in TFLM and as generated C on the host, compare.

Used by the test files in this folder as ``from compiler_support import ...``:

- ``run_tflm(model_path, inputs)``: the reference (tflite_micro's Python interpreter).
- ``random_inputs(model_path, n, seed)``: seeded input sets over the full int8 range.
- ``run_on_host(model_path, input_sets, cc, workdir)``: compile the generated C, the kernels the
  model needs and a small test main once, run every input set in one process (raw bytes over
  stdin/stdout).
- ``assert_bit_exact(model_path, n, seed, cc, tmp_path)``: both, with a readable failure.

Host binaries are built with ``-std=c99 -Wall -Wextra -Werror -O2`` plus AddressSanitizer and
UndefinedBehaviorSanitizer, so an out-of-bounds access or signed overflow in a kernel fails the
test, and are cached per (model bytes, compiler) for the test session.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from microbuild.compiler import CompiledModel, compile_model
from microbuild.compiler.variants import Selection
from microbuild.model.reader import read_model

PREFIX = "net"
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-g",
          "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
TFLM_ARENA_BYTES = 16 << 20

_binaries: dict[tuple[str, str], tuple[Path, CompiledModel]] = {}
_session_dir: Path | None = None
_header_digests: dict[tuple[str, ...], str] = {}


def _dtype(name: str) -> np.dtype:
    return np.dtype(name)


# ---- the reference --------------------------------------------------------------------------
def run_tflm(model_path: str | Path, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Outputs of one invocation of TFLM's reference kernels."""
    from tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(Path(model_path).read_bytes(),
                                                 arena_size=TFLM_ARENA_BYTES)
    return _invoke_tflm(interpreter, inputs, len(read_model(model_path).outputs))


def _invoke_tflm(interpreter, inputs: Sequence[np.ndarray], n_outputs: int) -> list[np.ndarray]:
    for k, value in enumerate(inputs):
        interpreter.set_input(value, k)
    interpreter.invoke()
    return [np.array(interpreter.get_output(k), copy=True) for k in range(n_outputs)]


def run_tflm_many(model_path: str | Path, input_sets: Sequence[Sequence[np.ndarray]]
                  ) -> list[list[np.ndarray]]:
    """``run_tflm`` for several input sets with one interpreter."""
    from tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(Path(model_path).read_bytes(),
                                                 arena_size=TFLM_ARENA_BYTES)
    n_outputs = len(read_model(model_path).outputs)
    return [_invoke_tflm(interpreter, inputs, n_outputs) for inputs in input_sets]


# ---- inputs ---------------------------------------------------------------------------------
def random_inputs(model_path: str | Path, n: int, seed: int) -> list[list[np.ndarray]]:
    """``n`` seeded input sets. Integer inputs cover their type's full range; float inputs cover
    the real range their QUANTIZE consumer can represent (plus a little beyond, to saturate)."""
    graph = read_model(model_path)
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(n):
        values = []
        for t in graph.inputs:
            tensor = graph.tensors[t]
            dtype = _dtype(tensor.dtype)
            if np.issubdtype(dtype, np.integer):
                info = np.iinfo(dtype)
                values.append(rng.integers(info.min, info.max, tensor.shape, dtype=dtype,
                                           endpoint=True))
            else:
                low, high = _float_range(graph, t)
                values.append(rng.uniform(low, high, tensor.shape).astype(dtype))
        sets.append(values)
    return sets


def _float_range(graph, t: int) -> tuple[float, float]:
    quant = graph.tensors[t].quant
    if quant is None:
        for op in graph.operators:
            if t in op.inputs and op.opcode == "QUANTIZE":
                quant = graph.tensors[op.outputs[0]].quant
                break
    if quant is None:
        return -1.0, 1.0
    scale, zp = float(quant.scale[0]), int(quant.zero_point[0])
    low, high = scale * (-128 - zp), scale * (127 - zp)
    margin = 0.05 * (high - low)
    return low - margin, high + margin


# ---- the generated C on the host ------------------------------------------------------------
def _test_main(model: CompiledModel, io: str = "buffers") -> str:
    """A main() that runs the model once per input set read from stdin, outputs to stdout.

    ``io="buffers"`` passes separately allocated input/output buffers (run() copies them in and
    out); ``io="slots"`` writes inputs straight into their workspace slots and reads outputs from
    theirs, the zero-copy way the generated header documents.
    """
    P = PREFIX.upper()
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", "",
             f'#include "{PREFIX}.h"', "", "int main(void)", "{"]
    n_in, n_out = len(model.inputs), len(model.outputs)
    # Exactly the advertised size, so AddressSanitizer catches a kernel writing past it; filled
    # with a pattern each run so a kernel reading memory it never wrote shows up as a mismatch.
    lines += [f"    size_t ws_size = {P}_WORKSPACE_SIZE;",
              "    unsigned char *ws = ws_size ? malloc(ws_size) : NULL;"]
    if model.state_bytes:
        # State carries over from one input set to the next, as in one TFLM interpreter invoked
        # repeatedly (run_tflm_many); reset once, as TFLM's AllocateTensors does.
        lines += [f"    unsigned char *st = malloc({P}_STATE_SIZE);", f"    {PREFIX}_reset(st);"]
    for k in range(n_in):
        where = f"{PREFIX}_input{k}(ws)" if io == "slots" else f"malloc({P}_INPUT{k}_BYTES)"
        lines.append(f"    {P}_INPUT{k}_TYPE *in{k} = {where};")
    for k in range(n_out):
        where = f"{PREFIX}_output{k}(ws)" if io == "slots" else f"malloc({P}_OUTPUT{k}_BYTES)"
        lines.append(f"    {P}_OUTPUT{k}_TYPE *out{k} = {where};")
    lines += ["    for (;;) {", "        if (ws) memset(ws, 0xA5, ws_size);"]
    for k in range(n_in):
        lines.append(f"        if (fread(in{k}, 1, {P}_INPUT{k}_BYTES, stdin) != "
                     f"{P}_INPUT{k}_BYTES) break;")
    args = [f"in{k}" for k in range(n_in)] + [f"out{k}" for k in range(n_out)] + ["ws"]
    if model.state_bytes:
        args.append("st")
    if io == "buffers":
        lines += [f"        memset(out{k}, 0x5A, {P}_OUTPUT{k}_BYTES);" for k in range(n_out)]
    lines += [f"        if ({PREFIX}_run({', '.join(args)}) != 0) return 2;"]
    for k in range(n_out):
        lines.append(f"        fwrite(out{k}, 1, {P}_OUTPUT{k}_BYTES, stdout);")
    lines += ["    }", "    fflush(stdout);", "    return 0;", "}", ""]
    return "\n".join(lines)


def _session_tmp() -> Path:
    global _session_dir
    if _session_dir is None:
        _session_dir = Path(tempfile.mkdtemp(prefix="mb-host-"))
    return _session_dir


def _headers_digest(include_dirs: Sequence[Path]) -> str:
    """A digest of every runtime header: a kernel object depends on the headers it includes."""
    key = tuple(map(str, include_dirs))
    if key not in _header_digests:
        digest = hashlib.sha256()
        for folder in include_dirs:
            for header in sorted(Path(folder).rglob("*.h")):
                digest.update(str(header.relative_to(folder)).encode() + b"\0")
                digest.update(header.read_bytes())
        _header_digests[key] = digest.hexdigest()
    return _header_digests[key]


def _kernel_object(cc: str, source: Path, include_dirs: Sequence[Path]) -> Path:
    """The runtime kernel ``source`` compiled once per run and compiler, shared by every model.

    Hundreds of test models need the same few dozen kernel files; compiling them again for each
    model (with the sanitizers, gcc and clang) was most of this folder's CPU time. The objects go
    to the run's MICROBUILD_CACHE_DIR (one per test run, shared by the xdist workers: see
    tests/conftest.py), keyed by compiler, flags, the source and every runtime header. A worker
    writes a temporary file and renames it, so two workers compiling the same kernel at once
    both end up with a whole object."""
    digest = hashlib.sha256("\0".join([cc, *CFLAGS, _headers_digest(include_dirs)]).encode())
    digest.update(source.read_bytes())
    root = os.environ.get("MICROBUILD_CACHE_DIR")
    folder = (Path(root) if root else _session_tmp()) / "host-kernels"
    folder.mkdir(parents=True, exist_ok=True)
    obj = folder / f"{source.stem}-{cc}-{digest.hexdigest()[:16]}.o"
    if obj.exists():
        return obj
    partial = folder / f".{obj.name}.{os.getpid()}.tmp"
    command = [cc, *CFLAGS, *(f"-I{d}" for d in include_dirs), "-c", str(source),
               "-o", str(partial)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        partial.unlink(missing_ok=True)
        raise AssertionError(f"{cc} failed to compile {source}:\n$ {' '.join(command)}\n"
                             f"{result.stderr}")
    os.replace(partial, obj)
    return obj


def _selection(variants: dict | None) -> Selection | None:
    return Selection(force=dict(variants)) if variants else None


def build_on_host(model_path: str | Path, cc: str = "gcc", workdir: str | Path | None = None,
                  io: str = "buffers", variants: dict | None = None
                  ) -> tuple[Path, CompiledModel]:
    """Compile the model's C with a test main into a native executable (cached per session).
    ``variants`` forces kernel variants ({"CONV_2D": "name"} or {"*": "reference"}); without
    it each op gets the default for a generic CPU."""
    data = Path(model_path).read_bytes()
    chosen = json.dumps(variants or {}, sort_keys=True)
    key = (hashlib.sha256(data).hexdigest(), cc, io, chosen)
    if key in _binaries and _binaries[key][0].exists():
        return _binaries[key]
    model = compile_model(model_path, prefix=PREFIX, selection=_selection(variants))
    out = Path(workdir) if workdir is not None else _session_tmp()
    tag = hashlib.sha256(chosen.encode()).hexdigest()[:6]
    out = out / f"{Path(model_path).stem}-{cc}-{io}-{key[0][:8]}-{tag}"
    model.write(out)
    (out / "main.c").write_text(_test_main(model, io))
    sources = [out / name for name in model.sources if name.endswith(".c")]
    sources.append(out / "main.c")
    kernels = [_kernel_object(cc, model.runtime_dir / k, model.include_dirs)
               for k in model.kernel_sources]
    binary = out / "model_test"
    command = [cc, *CFLAGS, f"-I{out}", *(f"-I{d}" for d in model.include_dirs),
               *map(str, sources), *map(str, kernels), "-o", str(binary),
               "-lm"]  # expf/tanhf of float kernels
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"{cc} failed to compile the C generated for {model_path} "
                             f"(sources in {out}):\n$ {' '.join(command)}\n{result.stderr}")
    _binaries[key] = (binary, model)
    return binary, model


def run_on_host(model_path: str | Path, input_sets: Sequence[Sequence[np.ndarray]],
                cc: str = "gcc", workdir: str | Path | None = None,
                io: str = "buffers", variants: dict | None = None) -> list[list[np.ndarray]]:
    """Outputs of the generated C for every input set, from one process."""
    binary, model = build_on_host(model_path, cc, workdir, io, variants)
    stdin = bytearray()
    for inputs in input_sets:
        if len(inputs) != len(model.inputs):
            raise ValueError(f"{model_path} has {len(model.inputs)} inputs, got {len(inputs)}")
        for spec, value in zip(model.inputs, inputs):
            stdin += np.ascontiguousarray(value, dtype=spec.dtype).tobytes()
    env = dict(os.environ, **SANITIZER_ENV)
    result = subprocess.run([str(binary)], input=bytes(stdin), capture_output=True, env=env,
                            timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"the host build of {model_path} ({cc}) exited with "
                             f"{result.returncode}:\n{result.stderr.decode(errors='replace')}")
    out_bytes = sum(s.bytes for s in model.outputs)
    expected = out_bytes * len(input_sets)
    if len(result.stdout) != expected:
        raise AssertionError(f"the host build of {model_path} wrote {len(result.stdout)} bytes, "
                             f"expected {expected}")
    outputs, pos = [], 0
    for _ in input_sets:
        one = []
        for spec in model.outputs:
            one.append(np.frombuffer(result.stdout, dtype=spec.dtype, count=spec.bytes //
                                     _dtype(spec.dtype).itemsize, offset=pos)
                       .reshape(spec.shape).copy())
            pos += spec.bytes
        outputs.append(one)
    return outputs


# ---- comparison -----------------------------------------------------------------------------
def assert_bit_exact(model_path: str | Path, n: int = 10, seed: int = 0, cc: str = "gcc",
                     tmp_path: str | Path | None = None, io: str = "buffers",
                     variants: dict | None = None) -> None:
    """Fail with a readable message unless the generated C equals TFLM on ``n`` seeded inputs."""
    input_sets = random_inputs(model_path, n, seed)
    expected = run_tflm_many(model_path, input_sets)
    got = run_on_host(model_path, input_sets, cc=cc, workdir=tmp_path, io=io, variants=variants)
    problems = []
    for i, (want_set, got_set) in enumerate(zip(expected, got)):
        for k, (want, have) in enumerate(zip(want_set, got_set)):
            want = np.asarray(want).reshape(have.shape)
            if want.dtype == have.dtype and np.array_equal(want, have):
                continue
            problems.append(_describe_difference(i, k, want, have))
    if problems:
        graph = read_model(model_path)
        ops = ", ".join(f"{op.index}:{op.opcode}" for op in graph.operators)
        shown = "\n".join(problems[:5])
        more = f"\n... and {len(problems) - 5} more" if len(problems) > 5 else ""
        kernels = f", kernels {variants}" if variants else ""
        raise AssertionError(
            f"{Path(model_path).name} ({cc}{kernels}): generated C differs from TFLM in "
            f"{len(problems)} of {n * len(graph.outputs)} outputs (seed {seed}; ops {ops})\n"
            f"{shown}{more}")


def differences_on_device(dev, prefix: str, model_path: str | Path, n: int, seed: int,
                          label: str | None = None,
                          tflm_outputs: dict | None = None) -> list[str]:
    """Run ``n`` seeded input sets through model ``prefix`` on a connected device (the RPC
    firmware) and through TFLM; one line per output that differs in dtype or in any value.
    ``tflm_outputs`` caches TFLM's outputs per model for callers that run one model as several
    copies (same ``n`` and ``seed``)."""
    sets = random_inputs(model_path, n, seed)
    cache = tflm_outputs if tflm_outputs is not None else {}
    if model_path not in cache:
        cache[model_path] = run_tflm_many(model_path, sets)
    problems = []
    for i, (x, want) in enumerate(zip(sets, cache[model_path])):
        for k, (got, expected) in enumerate(zip(dev.run(prefix, x), want)):
            expected = np.asarray(expected).reshape(got.shape)
            if got.dtype != expected.dtype or not np.array_equal(got, expected):
                problems.append(f"{label or Path(model_path).name} input set {i} output {k}: "
                                f"{int(np.count_nonzero(got != expected))} of {got.size} "
                                "values differ from TFLM")
    return problems


def _describe_difference(i: int, k: int, want: np.ndarray, have: np.ndarray) -> str:
    if want.dtype != have.dtype:
        return f"input set {i}, output {k}: dtype {have.dtype}, TFLM gives {want.dtype}"
    diff = np.abs(want.astype(np.float64) - have.astype(np.float64))
    bad = np.argwhere(want != have)
    first = "; ".join(f"{tuple(int(x) for x in idx)}: C {have[tuple(idx)]} vs TFLM "
                      f"{want[tuple(idx)]}" for idx in bad[:4])
    return (f"input set {i}, output {k}: {len(bad)} of {want.size} elements differ, "
            f"max abs diff {diff.max():g}; first at {first}")
