"""QUANTIZE and DEQUANTIZE in every pair TFLM takes, the mixed graph and the stock converter's
uint8 camera models (keras_camera_uint8 and tests/models/users/mobilenet_v2_uint8), on the
emulated Cortex-M7 (mps2-an500) and Cortex-M55 (mps3-an547), each in one shared RPC firmware, bit for bit as in TFLM: uint8 and
float32 tensors go over RPC both ways, and the inputs cover each input type as on the host
(tests/compiler/quantize_support.py). These models are left out of the generic
sweep (tests/firmware/test_sweep_qemu.py), whose random inputs would saturate most of an int32
input, so they are built once, here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild import api

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models" / "generate"))
from compiler_support import run_tflm  # noqa: E402
from ops_quantize import model_names  # noqa: E402
from quantize_support import bits, covering_inputs, reciprocal_disagreements  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402

MODELS = Path(__file__).resolve().parent.parent / "models"
CAMERA = MODELS / "boundaries" / "keras_camera_uint8.tflite"
# A MobileNetV2-like int8 CNN with uint8 camera input and output (tests/models/users/), on the
# same 32x32 RGB frames.
CAMERA_CNN = MODELS / "users" / "mobilenet_v2_uint8.tflite"


# Output scales whose ties are full of floats where x * (1 / scale) rounds to another integer
# than TFLM's x / scale does (found with reciprocal_disagreements), inside the output range.
RECIPROCAL_SCALES = {"int8": (0.058267589658498764, 3), "int16": (0.0009546098299324512, 0)}


def _reciprocal_model(path: Path, dtype: str) -> tuple[Path, list[np.ndarray]]:
    """QUANTIZE float32 [1, 256] -> dtype at a scale of RECIPROCAL_SCALES, and 256 inputs on
    which multiplying by the reciprocal would round wrong."""
    scale, zero_point = RECIPROCAL_SCALES[dtype]
    b = ModelBuilder()
    x = b.tensor("x", (1, 256), "float32")
    y = b.tensor("y", (1, 256), dtype, scale, zero_point)
    b.operator("QUANTIZE", [x], [y])
    path.write_bytes(b.build([x], [y]))
    values = reciprocal_disagreements(np.float32(scale), 8 if dtype == "int8" else 16)
    values = values[np.abs(values / np.float32(scale)) < 120]  # unsaturated: differences show
    assert len(values) >= 64, len(values)
    rng = np.random.default_rng(9)
    return path, [rng.choice(values, 256).astype(np.float32).reshape(1, 256)]


# quantize.c's three float -> int paths: the Cortex-M4F's FPv4 reciprocal, the Cortex-M7's FPv5
# division, the Cortex-M55's Helium reciprocal on 4 lanes.
@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500", "mps3-an547"])
def test_quantize_pairs_and_uint8_camera_model_on_the_board(board, tmp_path):
    paths = {f"m_{name}": MODELS / "ops" / f"{name}.tflite" for name in model_names()}
    paths["camera"] = CAMERA
    paths["camera_cnn"] = CAMERA_CNN
    frames = np.random.default_rng(21).integers(0, 256, (2, 1, 32, 32, 3), dtype=np.uint8)
    inputs = {p: list(frames) if path in (CAMERA, CAMERA_CNN) else covering_inputs(path)
              for p, path in paths.items()}
    for dtype in RECIPROCAL_SCALES:
        prefix = f"reciprocal_{dtype}"
        paths[prefix], inputs[prefix] = _reciprocal_model(tmp_path / f"{prefix}.tflite", dtype)
    build = api.build_firmware(board, {p: str(path) for p, path in paths.items()},
                               tmp_path / "fw", executor="rpc")
    problems = []
    with api.connect(board, build, timeout=10) as dev:
        for prefix, path in paths.items():
            for i, x in enumerate(inputs[prefix]):
                (got,) = dev.run(prefix, [x])
                want = np.asarray(run_tflm(path, [x])[0]).reshape(got.shape)
                if got.dtype != want.dtype or not np.array_equal(bits(got), bits(want)):
                    problems.append(f"{path.name} input set {i}: "
                                    f"{int(np.count_nonzero(bits(got) != bits(want)))} of "
                                    f"{got.size} values differ from TFLM ({got.dtype})")
    assert not problems, "\n".join(problems)
