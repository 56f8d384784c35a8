"""The on-device SHA-256 (mb_table_sha256 in runtime/table/mb_table.c) against hashlib, at the
lengths where its padding changes (55/56/63/64 bytes in the last block) and on random data."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"
# Reads lengths-prefixed messages on stdin, prints one hex digest per line.
MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "microbuild/table.h"
const mb_table_kernel mb_table_kernels[1] = {{0u, 0u, NULL}};
const uint32_t mb_table_kernel_count = 0u;
const uint32_t mb_table_kernel_set_id = 0u;
int main(void)
{
    unsigned long n;
    while (fread(&n, sizeof n, 1, stdin) == 1) {
        uint8_t *data = malloc(n + 1u), digest[32];
        if (data == NULL || fread(data, 1, n, stdin) != n) return 1;
        mb_table_sha256(data, n, digest);
        for (int i = 0; i < 32; i++) printf("%02x", digest[i]);
        printf("\n");
        free(data);
    }
    return 0;
}
"""


def test_sha256_matches_hashlib(tmp_path):
    (tmp_path / "main.c").write_text(MAIN)
    program = tmp_path / "sha"
    subprocess.run(["gcc", "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    f"-I{RUNTIME / 'include'}", str(tmp_path / "main.c"),
                    str(RUNTIME / "table" / "mb_table.c"), "-o", str(program)], check=True)
    rng = np.random.default_rng(256)
    lengths = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 4099]
    messages = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]
    messages.append(b"abc")
    stdin = b"".join(np.array([len(m)], dtype=np.uint64).tobytes() + m for m in messages)
    result = subprocess.run([str(program)], input=stdin, capture_output=True, check=True)
    assert result.stdout.decode().split() == [hashlib.sha256(m).hexdigest() for m in messages]
