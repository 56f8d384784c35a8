"""AVERAGE_POOL_2D's dsp and mve kernels divide a window of at most 256 positions straight from
its 16-bit sums, and move a larger one's sums to int32 totals every 256 positions. The sweep's
pooling models all have small windows; this one's SAME windows (17x17, stride 7, 36 channels:
the kernels' 16 / 32-channel blocks and a 4-channel rest) are clipped to 81-289 positions, so one
op takes both paths, and both equal TFLM on the boards."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from compiler_support import differences_on_device

from microbuild import api

GENERATE = Path(__file__).resolve().parent.parent / "models" / "generate"


def _pool(path: Path, relu6: bool) -> Path:
    sys.path.insert(0, str(GENERATE))
    from tflite_builder import ModelBuilder

    b = ModelBuilder()
    x = b.tensor("x", (1, 24, 24, 36), "int8", 0.05, -3)
    y = b.tensor("y", (1, 4, 4, 36), "int8", 0.05, -3)
    b.operator("AVERAGE_POOL_2D", [x], [y], "Pool2DOptions", padding=0, strideW=7, strideH=7,
               filterWidth=17, filterHeight=17, fusedActivationFunction=3 if relu6 else 0)
    path.write_bytes(b.build([x], [y]))
    return path


@pytest.mark.parametrize("board, kernel", [("mps2-an386", "dsp"), ("mps3-an547", "mve")])
def test_windows_over_256_positions_are_bit_exact(board, kernel, tmp_path):
    models = {name: _pool(tmp_path / f"{name}.tflite", relu6=name.endswith("relu6"))
              for name in ("avgpool_17x17", "avgpool_17x17_relu6")}
    build = api.build_firmware(board, {n: str(p) for n, p in models.items()}, tmp_path / "fw",
                               executor="rpc")
    assert {m["prefix"]: m["ops"][0]["kernel"] for m in build.models} == \
        dict.fromkeys(models, kernel)
    problems = []
    with api.connect(board, build, timeout=10) as dev:
        for name, path in models.items():
            problems += differences_on_device(dev, name, path, 4, seed=11)
    assert not problems, "\n".join(problems)
