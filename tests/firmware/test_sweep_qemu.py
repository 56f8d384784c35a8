"""Every single-operator sweep model runs on the emulated Cortex-M7 (mps2-an500) bit for bit as in
TFLM, with the kernels a user gets by default for that board.

The host tests (tests/compiler/test_ops_*.py) run the same models as native x86-64 code; this is
the 32-bit Arm build of the same C: int being 32 bits, a different compiler, Thumb-2 code, the
board's default kernel variants. The models are split into a few RPC firmwares (one per test, so
pytest-xdist runs them side by side); each is driven over its UART on seeded random inputs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from microbuild import api
from microbuild.compiler import compile_model
from microbuild.errors import ModelError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from compiler_support import differences_on_device  # noqa: E402

BOARD = "mps2-an500"
SWEEP = sorted((Path(__file__).resolve().parent.parent / "models" / "ops").glob("*.tflite"))
# QUANTIZE/DEQUANTIZE pair models get inputs covering their types in one firmware of their own
# (test_quantize_qemu.py) rather than random ones here.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "models" / "generate"))
from ops_quantize import model_names as _quantize_models  # noqa: E402

SWEEP = [p for p in SWEEP if p.stem not in _quantize_models()]
# The sweep's models microbuild refuses on purpose (their tests check the messages).
REFUSED: set[str] = set()
# float32 models are compared on Arm with TFLM built for Arm (tests/firmware/
# test_float_sweep_qemu.py), not with TFLM-Python: fused multiply-adds differ from x86's.
FLOAT = {"float_dense", "while_loop"}
CHUNKS = 4
INPUT_SETS = 3


def _compilable() -> list[Path]:
    models, refused = [], set()
    for path in SWEEP:
        if path.stem in FLOAT:
            continue
        try:
            compile_model(path)
        except ModelError:
            refused.add(path.stem)
            continue
        models.append(path)
    assert refused == REFUSED, f"refused: {sorted(refused)}, expected {sorted(REFUSED)}"
    return models


def test_the_sweep_is_split_over_every_chunk():
    models = _compilable()
    assert len(models) > 100
    chunks = [models[k::CHUNKS] for k in range(CHUNKS)]
    assert sorted(p for chunk in chunks for p in chunk) == sorted(models)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_sweep_models_are_bit_exact_on_the_cortex_m7(chunk, tmp_path):
    models = _compilable()[chunk::CHUNKS]
    prefixes = {f"m_{path.stem}": path for path in models}
    build = api.build_firmware(BOARD, {p: str(path) for p, path in prefixes.items()},
                               tmp_path / "fw", executor="rpc")
    problems = []
    with api.connect(BOARD, build, timeout=10) as dev:
        for prefix, path in prefixes.items():
            problems += differences_on_device(dev, prefix, path, INPUT_SETS, seed=11)
    assert not problems, "\n".join(problems)


# On the Cortex-M55 some kernels that are not variants (so test_variants_qemu.py does not run
# them there) have Helium code of their own, which the M7 build above does not contain: the
# data-movement kernels' copies and fills (copy_bytes.h, pad.c: tail-predicated low-overhead
# loops), the int16 LOGISTIC / TANH (sigmoid16.c: 4 lanes, table gathers) and the int8
# BATCH_MATMUL's dot products (batch_matmul.c: VMLADAVA.S16), the int16 LEAKY_RELU (leaky_relu.c:
# quant_small.h's rescaling on 4 lanes). QUANTIZE's and DEQUANTIZE's lanes have
# test_quantize_qemu.py.
HELIUM_INSIDE = re.compile(r"pad|concat|transpose|depth_to|space_to|resize_nearest|batch_to|"
                           r"mirror|gather|tile|logistic|tanh|bmm|batch_matmul|leaky_relu_s16")


def test_helium_paths_of_other_kernels_are_bit_exact_on_the_cortex_m55(tmp_path):
    models = [p for p in _compilable() if HELIUM_INSIDE.search(p.stem)]
    assert len(models) > 40
    assert any("logistic_s16" in p.stem for p in models)
    prefixes = {f"m_{path.stem}": path for path in models}
    build = api.build_firmware("mps3-an547", {p: str(path) for p, path in prefixes.items()},
                               tmp_path / "fw", executor="rpc")
    problems = []
    with api.connect("mps3-an547", build, timeout=10) as dev:
        for prefix, path in prefixes.items():
            problems += differences_on_device(dev, prefix, path, INPUT_SETS, seed=11)
    assert not problems, "\n".join(problems)
