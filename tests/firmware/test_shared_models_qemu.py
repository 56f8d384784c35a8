"""The real models of ../shared/models that compile (see tests/compiler/test_shared_models.py),
on the emulated Cortex-M7 (mps2-an500) with the board's default kernels, bit-exact with TFLM.
MobileNetV2 (3.4 MB of weights) gets a firmware of its own; the small ones share one."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import random_inputs, run_tflm_many  # noqa: E402
from test_shared_models import shared_model  # noqa: E402

BOARD = "mps2-an500"
FIRMWARES = {
    "small": ["hello_world_int8", "simple_add_model", "micro_speech_quantized", "person_detect"],
    "mobilenet_v2": ["mobilenet_v2_quantized_1x3x224x224"],
    "stateful": ["keyword_scrambled", "keyword_scrambled_8bit"],
    "lstm": ["trained_lstm_int8", "micro_speech_lstm", "dtln_noise_suppression"],
}
# Consecutive invocations per model: the stateful ones stream (their state carries over).
INVOCATIONS = {"stateful": 6, "lstm": 6}


@pytest.mark.parametrize("firmware", FIRMWARES)
def test_real_models_are_bit_exact_on_the_cortex_m7(firmware, tmp_path):
    models = {f"m{k}": shared_model(name) for k, name in enumerate(FIRMWARES[firmware])}
    build = api.build_firmware(BOARD, {p: str(m) for p, m in models.items()}, tmp_path / "fw",
                               executor="rpc")
    problems = []
    with api.connect(BOARD, build, timeout=120) as dev:
        for prefix, model in models.items():
            sets = random_inputs(model, INVOCATIONS.get(firmware, 2), seed=21)
            for i, (x, want) in enumerate(zip(sets, run_tflm_many(model, sets))):
                for k, (a, b) in enumerate(zip(dev.run(prefix, x), want)):
                    if not np.array_equal(a, np.asarray(b).reshape(a.shape)):
                        problems.append(f"{model.name} input set {i} output {k}: "
                                        f"{int(np.count_nonzero(a != np.asarray(b).reshape(a.shape)))}"
                                        f" of {a.size} values differ from TFLM")
    assert not problems, "\n".join(problems)
