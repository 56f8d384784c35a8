"""Sweep models for kernel variants the Keras-made sweep has no instance of, so that the variant
QEMU tests (tests/firmware/test_variants_qemu.py) run every variant at least once:

- ``prelu_s16``: PRELU on int16 activations with an int8 alpha per channel (PRELU's variant
  fast_s16). The 16x8 converter keeps PReLU as its decomposition, not one PRELU.
- ``softmax_s8_s16``: int8 input, int16 output (scale 1/65536, zero point -32768), as the
  keyword-spotting models' last layer (SOFTMAX's variant fast with an int16 output).

    .venv/bin/python tests/models/generate/ops_variant_gaps.py   (numpy and flatbuffers only)

Built with tflite_builder with the converter's conventions: symmetric int16 activations, a
per-tensor int8 alpha, the softmax output quantization TFLM requires.
"""

from __future__ import annotations

import numpy as np
from common import save
from tflite_builder import ModelBuilder


def prelu_s16() -> None:
    rng = np.random.default_rng(3101)
    b = ModelBuilder()
    x = b.tensor("input", (1, 6, 5, 4), "int16", 3.0 / 32768, 0)
    alpha = b.constant("alpha", rng.integers(-60, 120, (1, 1, 4), dtype=np.int8), scale=0.005,
                       zero_point=0)
    y = b.tensor("output", (1, 6, 5, 4), "int16", 3.0 / 32768, 0)
    b.operator("PRELU", [x, alpha], [y])
    save("ops/prelu_s16.tflite", b.build([x], [y]))


def softmax_s8_s16() -> None:
    b = ModelBuilder()
    x = b.tensor("input", (1, 12), "int8", 0.0625, 9)
    y = b.tensor("output", (1, 12), "int16", 1.0 / 65536, -32768)
    b.operator("SOFTMAX", [x], [y], "SoftmaxOptions", version=2, beta=1.0)
    save("ops/softmax_s8_s16.tflite", b.build([x], [y]))


if __name__ == "__main__":
    prelu_s16()
    softmax_s8_s16()
