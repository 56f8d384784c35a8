"""The variants' requantization (runtime/include/microbuild/quant_fast.h) gives exactly what the
reference's (quant.h, bit-exact with TFLM) gives, compiled with gcc and clang under UBSan."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent.parent / "runtime" / "include"


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_fast_requantize_equals_the_reference(cc, tmp_path):
    binary = tmp_path / "quant_fast_test"
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=undefined", "-fno-sanitize-recover=all", f"-I{INCLUDE}",
                    str(HERE / "quant_fast_test.c"), "-o", str(binary)], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "mismatches 0" in result.stdout, result.stdout + \
        result.stderr


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_requantize_of_small_inputs_equals_the_reference(cc, tmp_path):
    """requantize.c's SMMULR / VQRDMULH scale of 8- and 16-bit inputs, the instructions emulated
    by their definitions, over every input value and every shift the kernel takes that path for."""
    binary = tmp_path / "requantize_small_test"
    subprocess.run([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=undefined", "-fno-sanitize-recover=all", f"-I{INCLUDE}",
                    str(HERE / "requantize_small_test.c"), "-o", str(binary)], check=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "mismatches 0" in result.stdout, result.stdout + \
        result.stderr
    assert int(result.stdout.split()[1]) > 10_000_000, result.stdout
