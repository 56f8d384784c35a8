"""Row-streamed ResNet-8 on the emulated boards with their fast kernels: the M7 (dsp variants,
their im2col columns and residual tables rebuilt per band) and the M55 (mve) give TFLM's outputs
bit for bit, in a workspace under half TFLM's arena (microbuild/compiler/row_stream.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api
from microbuild.compiler import compile_model
from microbuild.compiler.plan_check import verify_plan
from microbuild.compiler.variants import Selection, Target

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import random_inputs, run_tflm_many  # noqa: E402

RESNET8 = Path(__file__).resolve().parent.parent / "models" / "resnet8.tflite"
TFLM_ARENA_M7 = 54_340
FAST = {"mps2-an500": "dsp", "mps3-an547": "mve"}


@pytest.mark.parametrize("board", FAST)
def test_streamed_resnet8_is_bit_exact_on_the_board(board, tmp_path):
    target = Target.of_board(api.get_board(board))
    compiled = compile_model(RESNET8, selection=Selection(target))
    region = compiled.plan.region
    assert region is not None and (region.first, region.last) == (0, 5)
    assert compiled.workspace_bytes <= TFLM_ARENA_M7 // 2
    assert verify_plan(compiled.graph, compiled.plan, compiled.lowerings) == []
    assert {op["kernel"] for op in compiled.ops[:6]} == {FAST[board]}
    build = api.build_firmware(board, {"r8": str(RESNET8)}, tmp_path / "fw", executor="rpc")
    built, = build.models  # the firmware's model is the streamed one
    assert built["workspace_bytes"] == compiled.workspace_bytes
    assert built["row_stream"]["ops"] == [0, 5]
    sets = random_inputs(RESNET8, 4, seed=29)
    problems = []
    with api.connect(board, build, timeout=120) as dev:
        for i, (x, want) in enumerate(zip(sets, run_tflm_many(RESNET8, sets))):
            for k, (a, b) in enumerate(zip(dev.run("r8", x), want)):
                b = np.asarray(b).reshape(a.shape)
                if a.dtype != b.dtype or not np.array_equal(a, b):
                    problems.append(f"input set {i} output {k}: "
                                    f"{int(np.count_nonzero(a != b))} of {a.size} values differ")
    assert not problems, "\n".join(problems)
