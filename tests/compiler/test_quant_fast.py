"""The variants' requantization (runtime/include/microbuild/quant_fast.h, quant_small.h) gives
exactly what the reference's (quant.h, bit-exact with TFLM) gives, compiled with gcc and clang
under UBSan."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent.parent / "runtime" / "include"


def _run_check(cc: str, source: str, tmp_path: Path) -> str:
    """Build tests/compiler/SOURCE with CC under UBSan, run it, and return what it printed once
    it has reported no mismatch."""
    binary = tmp_path / Path(source).stem
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=undefined", "-fno-sanitize-recover=all", f"-I{INCLUDE}",
                    str(HERE / source), "-o", str(binary)], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "mismatches 0" in result.stdout, result.stdout + \
        result.stderr
    return result.stdout


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_fast_requantize_equals_the_reference(cc, tmp_path):
    _run_check(cc, "quant_fast_test.c", tmp_path)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_requantize_of_small_inputs_equals_the_reference(cc, tmp_path):
    """quant_small.h's SMMULR / VQRDMULH scale, the instructions emulated by their definitions,
    over every 8- and 16-bit input value and every shift the kernels take that path for."""
    out = _run_check(cc, "requantize_small_test.c", tmp_path)
    assert int(out.split()[1]) > 10_000_000, out
