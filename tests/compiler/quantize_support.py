"""Inputs that cover a QUANTIZE/DEQUANTIZE model's input type, shared by the host tests
(test_ops_quantize.py) and the Cortex-M7 ones (tests/firmware/test_quantize_qemu.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from microbuild.model.reader import read_model


def covering_input(dtype: str, shape: tuple[int, ...], scale: float | None) -> np.ndarray:
    """Values that cover ``dtype``: all of uint8/int8 (256 elements or more); int16/int32 values
    of every magnitude (both signs, the extremes); float32 values on the output's rounding ties,
    signed zeros and far beyond its range (``scale``: the output's)."""
    n = int(np.prod(shape))
    rng = np.random.default_rng(3)
    if dtype in ("uint8", "int8"):
        info = np.iinfo(dtype)
        values = np.resize(np.arange(info.min, info.max + 1), n)
    elif dtype in ("int16", "int32"):
        info = np.iinfo(dtype)
        bits = 15 if dtype == "int16" else 31
        magnitudes = 2.0 ** rng.uniform(0, bits, n - 4)
        signs = rng.choice([-1, 1], n - 4)
        values = np.concatenate([[info.min, info.max, 0, -1],
                                 np.clip(signs * magnitudes, info.min, info.max)])
    else:
        halves = np.arange(-64, 64) + 0.5
        ties = (halves * scale).astype(np.float32)
        # The floats next to 16 ties, and quotients 2^-19 (relative) from 16 others: on either
        # side of where quantize.c's Helium path stops trusting x * (1 / scale) and divides.
        near = np.concatenate([np.nextafter(ties[56:72], np.float32(np.inf)),
                               np.nextafter(ties[56:72], np.float32(-np.inf))])
        edges = np.concatenate([halves[40:48] * (1 + 2.0 ** -19), halves[40:48] * (1 - 2.0 ** -19),
                                halves[80:88] * (1 + 2.0 ** -19), halves[80:88] * (1 - 2.0 ** -19)
                                ]) * scale
        # And floats whose quotient rounds to another integer than x * (1 / scale) does
        # (reciprocal_disagreements): the Helium path must notice them and divide (these
        # models' scales have few, all saturating; test_quantize_qemu.py adds models full of them).
        disagree = reciprocal_disagreements(np.float32(scale), 8 if dtype == "int8" else 16)
        near = np.concatenate([near, disagree[:16]])
        # Beyond the int32 range after the division TFLM's float -> int conversion is undefined
        # (x86 gives INT_MIN, Arm saturates; quantize.c saturates), so the extremes stay inside.
        extremes = [0.0, -0.0, 2e9 * scale, -2e9 * scale, 3e4 * scale, -3e4 * scale, 1e-30,
                    -1e-30]
        fixed = len(ties) + len(near) + len(edges) + len(extremes)
        rest = rng.uniform(-40000, 40000, n - fixed) * scale
        values = np.concatenate([ties, near, edges, extremes, rest])
    return np.asarray(values).astype(dtype).reshape(shape)


def _half_away(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def reciprocal_disagreements(scale: np.float32, bits: int) -> np.ndarray:
    """Floats within 3 ulps of a tie x = (k + 0.5) * scale, |k| up to the output range plus 128,
    whose float32 quotient x / scale (TFLM's) rounds, halves away from zero, to another integer
    than x * float32(1 / scale) when that product is not itself a tie."""
    k = np.arange(-(1 << (bits - 1)) - 128, (1 << (bits - 1)) + 128) + 0.5
    ties = (k * np.float64(scale)).astype(np.float32)
    candidates, up, down = [ties], ties, ties
    for _ in range(3):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(-np.inf))
        candidates += [up, down]
    x = np.concatenate(candidates)
    quotient, product = x / scale, x * (np.float32(1) / scale)
    differ = (_half_away(quotient) != _half_away(product)) & \
        (np.abs(product - _half_away(product)) != 0.5)
    return x[differ]


def covering_inputs(path: str | Path) -> list[np.ndarray]:
    """Two input sets for a one-input model: ``covering_input`` in order, then shuffled."""
    graph = read_model(path)
    x_tensor = graph.tensor(graph.inputs[0])
    first = graph.operators[0]
    scale = graph.tensor(first.outputs[0]).scale if x_tensor.dtype == "float32" else None
    x = covering_input(x_tensor.dtype, x_tensor.shape, scale)
    shuffled = np.random.default_rng(5).permutation(x.ravel()).reshape(x.shape)
    return [x, shuffled]


def bits(a: np.ndarray) -> np.ndarray:
    """Floats as their bit patterns, so -0.0 vs 0.0 and NaN payloads count as differences."""
    a = np.asarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a
