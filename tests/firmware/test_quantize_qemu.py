"""QUANTIZE and DEQUANTIZE in every pair TFLM takes, the mixed graph and the stock converter's
uint8 camera models (keras_camera_uint8 and tests/models/users/mobilenet_v2_uint8), on the
emulated Cortex-M7 (mps2-an500) in one shared RPC firmware, bit for bit as in TFLM: uint8 and
float32 tensors go over RPC both ways, and the inputs cover each input type as on the host
(tests/compiler/quantize_support.py). These models are left out of the generic
sweep (tests/firmware/test_sweep_qemu.py), whose random inputs would saturate most of an int32
input, so they are built once, here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models" / "generate"))
from compiler_support import run_tflm  # noqa: E402
from ops_quantize import model_names  # noqa: E402
from quantize_support import bits, covering_inputs  # noqa: E402

BOARD = "mps2-an500"
MODELS = Path(__file__).resolve().parent.parent / "models"
CAMERA = MODELS / "boundaries" / "keras_camera_uint8.tflite"
# A MobileNetV2-like int8 CNN with uint8 camera input and output (tests/models/users/), on the
# same 32x32 RGB frames.
CAMERA_CNN = MODELS / "users" / "mobilenet_v2_uint8.tflite"


def test_quantize_pairs_and_uint8_camera_model_on_the_cortex_m7(tmp_path):
    paths = {f"m_{name}": MODELS / "ops" / f"{name}.tflite" for name in model_names()}
    paths["camera"] = CAMERA
    paths["camera_cnn"] = CAMERA_CNN
    build = api.build_firmware(BOARD, {p: str(path) for p, path in paths.items()},
                               tmp_path / "fw", executor="rpc")
    frames = np.random.default_rng(21).integers(0, 256, (2, 1, 32, 32, 3), dtype=np.uint8)
    problems = []
    with api.connect(BOARD, build, timeout=10) as dev:
        for prefix, path in paths.items():
            inputs = list(frames) if path in (CAMERA, CAMERA_CNN) else covering_inputs(path)
            for i, x in enumerate(inputs):
                (got,) = dev.run(prefix, [x])
                want = np.asarray(run_tflm(path, [x])[0]).reshape(got.shape)
                if got.dtype != want.dtype or not np.array_equal(bits(got), bits(want)):
                    problems.append(f"{path.name} input set {i}: "
                                    f"{int(np.count_nonzero(bits(got) != bits(want)))} of "
                                    f"{got.size} values differ from TFLM ({got.dtype})")
    assert not problems, "\n".join(problems)
