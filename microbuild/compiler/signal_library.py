"""Compile-time helpers for TFLM's signal-library custom operators (``Signal*``: the audio front
end of micro_speech): their flexbuffer options, the fixed-point FFT's twiddle factors and the log
table, all computed here so the kernels in ``runtime/kernels/signal_*.c`` only do arithmetic.

Options. A custom operator carries its attributes as a flexbuffer map (``custom_options``; the
reader keeps the raw bytes). TFLM's kernels read them *by position* in the map, whose keys are
sorted (``FlexbufferWrapper::ElementAsInt32(i)``), not by name. :func:`signal_options` reads the
same positions and checks the key at each is the one the kernel means, so a map with other keys
is refused instead of being read differently from TFLM.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from microbuild.model.ir import Graph, Operator


def _decode(raw: bytes) -> dict[str, Any]:
    from flatbuffers import flexbuffers  # the flatbuffers package (a dependency of tflite)

    value = flexbuffers.Loads(bytes(raw))
    if not isinstance(value, dict):
        raise ValueError(f"the options are a flexbuffer {type(value).__name__}, not a map")
    return value


def signal_options(op: Operator, names: tuple[str, ...]) -> tuple[dict[str, int], list[str]]:
    """The integer options at positions 0.. of the op's flexbuffer map, keyed by ``names`` (the
    parameter TFLM's kernel reads at each position, in order), and the reasons they cannot be
    read (empty when they can). Booleans read as 0/1, as ElementAsInt32 and ElementAsBool do."""
    raw = op.options.get("custom_options", b"")
    if not names:
        return {}, []
    if not raw:
        return {}, [f"has no custom options; TFLM's kernel reads {', '.join(names)} from them"]
    try:
        mapping = _decode(raw)
    except Exception as exc:  # noqa: BLE001 - a damaged flexbuffer, whatever the exception
        return {}, [f"its custom options are not a readable flexbuffer map ({exc})"]
    keys = sorted(mapping)
    values: dict[str, int] = {}
    reasons = []
    for position, name in enumerate(names):
        if name is None:
            continue
        if position >= len(keys) or keys[position] != name:
            reasons.append(
                f"custom options have keys {keys}; TFLM's kernel reads '{name}' at position "
                f"{position} of the sorted keys, so these options would be misread")
            continue
        value = mapping[name]
        if isinstance(value, bool):
            value = int(value)
        if not isinstance(value, int) or not -(1 << 31) <= value < (1 << 31):
            reasons.append(f"option '{name}' is {value!r}; TFLM reads it as an int32")
            continue
        values[name] = value
    return values, reasons


def named_option(op: Operator, name: str) -> Any:
    """One option read by name (TFLM's SignalRfft reads its type 'T' this way), or None."""
    raw = op.options.get("custom_options", b"")
    try:
        return _decode(raw).get(name) if raw else None
    except Exception:  # noqa: BLE001
        return None


# ---- operand checks --------------------------------------------------------------------------
def operand_reasons(op: Operator, graph: Graph, inputs: tuple[str, ...],
                    outputs: tuple[str, ...]) -> list[str]:
    """Operand counts and dtypes (the types TFLM's Prepare insists on), every tensor of rank 1
    unless its expected dtype is prefixed with '*' (any rank) or '0' (a scalar)."""
    if len(op.inputs) != len(inputs) or any(i < 0 for i in op.inputs):
        return [f"expects {len(inputs)} input(s), has {len(op.inputs)}"]
    if len(op.outputs) != len(outputs):
        return [f"expects {len(outputs)} output(s), has {len(op.outputs)}"]
    reasons = []
    for role, indices, specs in (("input", op.inputs, inputs), ("output", op.outputs, outputs)):
        for k, (t, spec) in enumerate(zip(indices, specs)):
            tensor = graph.tensor(t)
            rank = 1
            if spec[0] == "*":
                spec, rank = spec[1:], None
            elif spec[0] == "0":
                spec, rank = spec[1:], 0
            if tensor.dtype != spec:
                reasons.append(f"{role} {k} '{tensor.name}' is {tensor.dtype}; TFLM's kernel "
                               f"takes {spec}")
            if rank is not None and len(tensor.shape) != rank:
                reasons.append(f"{role} {k} '{tensor.name}' has shape {list(tensor.shape)}; "
                               f"TFLM's kernel takes rank {rank}")
    return reasons


def constant_reasons(graph: Graph, op: Operator, positions: tuple[int, ...]) -> list[str]:
    return [f"input {k} '{graph.tensor(op.inputs[k]).name}' is computed at run time; microbuild "
            "needs it constant to check its indices at compile time"
            for k in positions if not graph.tensor(op.inputs[k]).is_constant]


# ---- kiss_fft (fixed point, 16 bits): what TFLM's SignalRfft runs -----------------------------
def kiss_factors(n: int) -> list[int]:
    """kiss_fft's factorisation of a complex FFT length: radix 4 first, then 2, then odd primes;
    returned as pairs (radix p, remaining length m)."""
    factors = []
    p = 4
    floor_sqrt = math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = {4: 2, 2: 3}.get(p, p + 2)
            if p > floor_sqrt:
                p = n
        n //= p
        factors += [p, n]
        if n <= 1:
            return factors


def _kiss_cexp(phase: float) -> tuple[int, int]:
    # floor(0.5 + SAMP_MAX * cos(phase)) in double, stored in an int16 (SAMP_MAX = 32767).
    return (int(math.floor(0.5 + 32767 * math.cos(phase))),
            int(math.floor(0.5 + 32767 * math.sin(phase))))


def kiss_twiddles(n: int) -> np.ndarray:
    """The forward complex FFT's twiddles, (n, 2) int16 as kiss_fft_alloc rounds them."""
    pi = 3.141592653589793238462643383279502884197169399375105820974944
    return np.array([_kiss_cexp(-2 * pi * i / n) for i in range(n)], dtype=np.int16)


def kiss_super_twiddles(ncfft: int) -> np.ndarray:
    """kiss_fftr's twiddles for splitting the packed real FFT, (ncfft / 2, 2) int16."""
    pi = 3.14159265358979323846264338327
    return np.array([_kiss_cexp(-pi * ((i + 1) / ncfft + 0.5)) for i in range(ncfft // 2)],
                    dtype=np.int16).reshape(-1, 2)


# ---- the log table of SignalFilterBankLog ----------------------------------------------------
LOG_SEGMENTS = 128


def log_lut() -> np.ndarray:
    """The 129 + 1 entries of the piecewise-linear correction log2(1 + x) - x, x = i / 128, in
    units of 2^-16 (rounded), the last one a padding 0: the table TFLM's Log32 interpolates."""
    values = [int(math.floor(65536 * (math.log2(1 + i / LOG_SEGMENTS) - i / LOG_SEGMENTS) + 0.5))
              for i in range(LOG_SEGMENTS + 1)]
    return np.array(values + [0], dtype=np.uint16)


# ---- state TFLM's stateful signal kernels keep inside the kernel ------------------------------
def append_state(op: Operator, graph: Graph, suffix: str, elements: int, dtype: str) -> None:
    """Give ``op`` a variable tensor of ``elements`` (at least 1) ``dtype`` values for state its
    TFLM kernel keeps between invocations in persistent memory: it lives in the model's state
    buffer and ``<prefix>_reset`` zeroes it, so a zero state must mean "as after Reset"."""
    from microbuild.model.ir import Tensor

    base = graph.tensor(op.outputs[0]).name if op.outputs else f"op{op.model_index}"
    state = Tensor(index=len(graph.tensors), name=base + suffix, shape=(max(elements, 1),),
                   dtype=dtype, is_variable=True)
    graph.tensors.append(state)
    op.inputs = list(op.inputs) + [state.index]


def state_reasons(op: Operator, graph: Graph, suffixes: tuple[str, ...], n_inputs: int
                  ) -> list[str]:
    """Why ``op`` lacks the state tensors ``append_state`` gave it (its own inputs are the first
    ``n_inputs``): a model whose op has a different input count than TFLM's kernel takes."""
    states = op.inputs[n_inputs:]
    if len(op.inputs) == n_inputs + len(suffixes) and all(
            t >= 0 and graph.tensor(t).is_variable and graph.tensor(t).name.endswith(suffix)
            for t, suffix in zip(states, suffixes)):
        return []
    # add_state appends nothing to an op whose own input count is wrong: they are all its own.
    return [f"expects {n_inputs} input(s), has {len(op.inputs)}"]
