"""float32 models on the emulated Arm boards with an FPU, bit-exact (bytes) with TFLM built for the
same core: the anchor firmwares in ../shared/anchors/tflm (TFLM's reference float kernels, GCC
-O2 -std=c++17, newlib's libm), run by their run.py on the same inputs.

One RPC firmware per board holds every float sweep model (tests/models/float), the float test
model of tests/models/ops and TFLM's three float examples from ../shared/models. On these cores
GCC fused TFLM's `sum += a * b` into VFMA, so the results differ from TFLM-Python on x86-64 by an
ULP here and there (the anchors README notes it for hello_world_float and trained_lstm): here the
reference is TFLM on Arm, on the host it is TFLM-Python (tests/compiler/test_ops_float.py).

The anchor firmware runs one Invoke on a fresh interpreter (it resets after a warm-up), so each
run here starts from reset state too (dev.reset): the LSTMs' state carried across invocations is
compared with TFLM on the host, and within an invocation over every time step here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "compiler"))
from compiler_support import random_inputs, run_tflm_many  # noqa: E402

ANCHORS = HERE.parents[2] / "shared" / "anchors" / "tflm"
SHARED = HERE.parents[2] / "shared" / "models"
SWEEP = sorted((HERE.parent / "models" / "float").glob("*.tflite")) + [
    HERE.parent / "models" / "ops" / "float_dense.tflite"]
TFLM_FLOAT_EXAMPLES = ["hello_world_float", "audio_preprocessor_float", "trained_lstm"]
OPS = HERE.parent / "models" / "ops"
# The audio front end's integer signal kernels have DSP-extension paths on these cores; integer,
# so TFLM on the host gives their bits. Seeded random samples rarely reach -32768, where
# FftAutoScale falls back to TFLM's wrapping scan and every butterfly wraps: these do.
_QUIET = (np.arange(480) % 7 - 3).astype(np.int16)
SIGNAL_EDGES = {
    "signal_fft_auto_scale": [np.full(480, -32768, np.int16),
                              np.concatenate([_QUIET[:100], [-32768], np.full(379, 300)])
                              .astype(np.int16), _QUIET],
    "signal_rfft_512": [np.full(480, -32768, np.int16),
                        np.where(np.arange(480) % 3 == 0, -32768, 32767).astype(np.int16)],
}
# Resource variables initialized by CALL_ONCE: the anchor's Reset() after its warm-up zeroes them
# and CALL_ONCE does not run again, so its timed Invoke starts from zero state, not from the
# initial values a fresh interpreter (and microbuild's reset) starts from. These are compared with
# TFLM on the host, fresh; their float MUL and ADD are separate kernels (nothing to contract into
# a VFMA), so the host's bits are the Arm core's.
FRESH_STATE_ON_HOST = {"var_two_stage_float"}
# Boards with a single-precision FPU, and their anchor firmware.
BOARDS = ["mps2-an386", "mps2-an500", "mps3-an547"]


def _anchor():
    if not (ANCHORS / "run.py").is_file():
        pytest.skip(f"{ANCHORS} is not here: the TFLM anchor firmwares exist in microbuild's CI, "
                    "not in every clone")
    sys.path.insert(0, str(ANCHORS))
    import run

    return run


@pytest.mark.parametrize("board", BOARDS)
def test_float_models_are_bit_exact_with_tflm_on_the_arm_board(board, tmp_path):
    anchor = _anchor()
    models = {f"f_{p.stem}": p for p in SWEEP}
    models.update({f"t_{name}": SHARED / f"{name}.tflite" for name in TFLM_FLOAT_EXAMPLES
                   if (SHARED / f"{name}.tflite").is_file()})
    models.update({f"s_{name}": OPS / f"{name}.tflite" for name in SIGNAL_EDGES})
    build = api.build_firmware(board, {p: str(m) for p, m in models.items()}, tmp_path / "fw",
                               executor="rpc")
    problems, compared = [], 0
    with api.connect(board, build, timeout=120) as dev:
        for name, samples in SIGNAL_EDGES.items():
            sets = [[x.reshape(-1)] for x in samples]
            for i, (x, want) in enumerate(zip(sets, run_tflm_many(OPS / f"{name}.tflite", sets))):
                for k, (g, w) in enumerate(zip(dev.run(f"s_{name}", x), want)):
                    compared += 1
                    if not np.array_equal(g, np.asarray(w).reshape(g.shape)):
                        problems.append(f"{name} edge input {i} output {k} differs from TFLM")
        for prefix, model in models.items():
            if prefix.startswith("s_"):
                continue
            # TFLM's examples on two inputs (for audio: int16 samples over the whole range).
            for x in random_inputs(model, 2 if prefix.startswith("t_") else 1, seed=23):
                dev.reset(prefix)
                got = dev.run(prefix, x)
                if model.stem in FRESH_STATE_ON_HOST:
                    want = run_tflm_many(model, [x])[0]
                else:
                    want = anchor.run(str(model), board, "ref", inputs=x)["outputs"]
                for k, (g, w) in enumerate(zip(got, want)):
                    w = np.ascontiguousarray(np.asarray(w).reshape(g.shape))
                    compared += 1
                    if w.dtype != g.dtype or w.tobytes() != g.tobytes():
                        diff = np.abs(w.astype(np.float64) - g.astype(np.float64)).max()
                        problems.append(f"{model.name} output {k}: "
                                        f"{int(np.count_nonzero(w != g))} of {g.size} differ "
                                        f"from TFLM on {board} (max abs diff {diff:g})")
        # A stateful model profiled operator by operator (run --profile) starts both its runs
        # from the same state: profile() compares their outputs and raises when they differ,
        # as it did once the whole-model run had moved the LSTM's state on.
        x = random_inputs(models["f_lstm"], 1, seed=3)[0]
        dev.run("f_lstm", x)
        profile = dev.profile("f_lstm", x)
        assert profile.model_ticks > 0 and profile.ops
    assert not problems, "\n".join(problems)
    assert compared >= len(SWEEP)
