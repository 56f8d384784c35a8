"""QUANTIZE and DEQUANTIZE in every dtype pair TFLM's kernels take, as single-op models, plus one
mixed graph (uint8 camera input, an int8 part, a float32 hand-over in the middle, an int16 and an
int32 step, a float32 output).

Numpy only (tests/models/generate/tflite_builder.py), so it runs in the test venv:
    .venv/bin/python tests/models/generate/ops_quantize.py
Writes tests/models/ops/quantize_*.tflite, dequantize_*.tflite and mixed_quantize_chain.tflite.
The files are deterministic (no randomness at all).

Every single-op model has 256 elements, room for every uint8 / int8 value in one tensor. The
scales are chosen so that the requantizations round (effective scales that are not powers of two)
and, for the camera pairs, so that one model takes TFLM's "same scale, zero points 128 apart"
fast path (an exclusive-or) and one the general path.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import save  # noqa: E402
from tflite_builder import ModelBuilder  # noqa: E402

SHAPE = (1, 4, 8, 8)

# name -> (input dtype, (scale, zero point) or None for float32, output dtype, its quantization)
QUANTIZE_PAIRS = {
    "quantize_f32_s8": ("float32", None, "int8", (0.0173, -9)),
    "quantize_f32_s16": ("float32", None, "int16", (0.00041, 0)),
    # The converter's uint8 camera input: same scale, zero points 0 and -128.
    "quantize_u8_s8_camera": ("uint8", (1 / 255, 0), "int8", (1 / 255, -128)),
    "quantize_u8_s8": ("uint8", (0.0213, 121), "int8", (0.0371, -6)),
    # The converter's uint8 output of a softmax: 1/256, zero points -128 and 0.
    "quantize_s8_u8_softmax": ("int8", (1 / 256, -128), "uint8", (1 / 256, 0)),
    "quantize_s8_u8": ("int8", (0.0417, 11), "uint8", (0.0291, 130)),
    "quantize_s8_s8": ("int8", (0.0417, 11), "int8", (0.0291, -20)),
    "quantize_s8_s16": ("int8", (0.0417, 11), "int16", (0.00093, 0)),
    "quantize_s8_s32": ("int8", (0.0417, 11), "int32", (0.00013, 0)),
    "quantize_s16_s8": ("int16", (0.00093, 0), "int8", (0.117, 3)),
    "quantize_s16_s16": ("int16", (0.00093, 0), "int16", (0.00071, 0)),
    "quantize_s16_s32": ("int16", (0.00093, 0), "int32", (0.000061, 0)),
    # An accumulator's int32 requantized (TFLM's int16 integration test quantize0 has one).
    "quantize_s32_s16": ("int32", (0.0000137, 0), "int16", (0.0173, 0)),
    "quantize_s32_s8": ("int32", (0.0000137, 5), "int8", (2.31, -7)),
}
DEQUANTIZE_INPUTS = {
    "dequantize_u8": ("uint8", (0.0213, 121)),
    "dequantize_s8": ("int8", (0.0417, 11)),
    "dequantize_s16": ("int16", (0.00093, 0)),
}


def _tensor(b: ModelBuilder, name: str, dtype: str, quant) -> int:
    if quant is None:
        return b.tensor(name, SHAPE, dtype)
    return b.tensor(name, SHAPE, dtype, scale=quant[0], zero_point=quant[1])


def single_op(opcode: str, src: str, src_q, dst: str, dst_q) -> bytes:
    b = ModelBuilder(f"microbuild test: {opcode} {src} -> {dst}")
    x = _tensor(b, "x", src, src_q)
    y = _tensor(b, "y", dst, dst_q)
    b.operator(opcode, [x], [y])
    return b.build(inputs=[x], outputs=[y])


def mixed_chain() -> bytes:
    """uint8 -> int8 -> RELU (int8) -> float32 -> int16 -> int32 -> int16 -> float32."""
    b = ModelBuilder("microbuild test: QUANTIZE/DEQUANTIZE between integer and float parts")
    chain = [
        ("camera", "uint8", (1 / 255, 0)),
        ("image", "int8", (1 / 255, -128)),
        ("relu", "int8", (1 / 255, -128)),
        ("float", "float32", None),
        ("wide", "int16", (0.0000611, 0)),
        ("acc", "int32", (0.0000019, 0)),
        ("narrow", "int16", (0.000033, 0)),
        ("out", "float32", None),
    ]
    ids = [_tensor(b, name, dtype, q) for name, dtype, q in chain]
    ops = ["QUANTIZE", "RELU", "DEQUANTIZE", "QUANTIZE", "QUANTIZE", "QUANTIZE", "DEQUANTIZE"]
    for k, opcode in enumerate(ops):
        b.operator(opcode, [ids[k]], [ids[k + 1]])
    return b.build(inputs=[ids[0]], outputs=[ids[-1]])


def model_names() -> list[str]:
    """The names of every model this script writes (tests/models/ops/<name>.tflite)."""
    return sorted([*QUANTIZE_PAIRS, *DEQUANTIZE_INPUTS, "mixed_quantize_chain"])


def main() -> None:
    for name, (src, src_q, dst, dst_q) in QUANTIZE_PAIRS.items():
        save(f"ops/{name}.tflite", single_op("QUANTIZE", src, src_q, dst, dst_q))
    for name, (src, src_q) in DEQUANTIZE_INPUTS.items():
        save(f"ops/{name}.tflite", single_op("DEQUANTIZE", src, src_q, "float32", None))
    save("ops/mixed_quantize_chain.tflite", mixed_chain())


if __name__ == "__main__":
    main()
