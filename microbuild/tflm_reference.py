"""TensorFlow Lite Micro as the reference microbuild's outputs must equal bit for bit.

Only `microbuild ci --emulate` (and the tests) need it; it is the `tflite-micro` package, not a
dependency of building firmware.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from microbuild.errors import MicrobuildError

ARENA_BYTES = 4 * 1024 * 1024  # generous: the reference's arena size does not change its outputs


def tflm_outputs(model_path: str | Path, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The outputs of one invocation of TFLM's interpreter on ``inputs``."""
    return next(tflm_outputs_many(model_path, [inputs]))


def tflm_outputs_many(model_path: str | Path, input_sets: Iterable[Sequence[np.ndarray]]
                      ) -> Iterator[list[np.ndarray]]:
    """The outputs of TFLM's interpreter on each of ``input_sets`` in turn, one interpreter for
    them all (a stateful model's state carries over, as on a device that runs them in order)."""
    try:
        from tflite_micro import runtime
    except ImportError:
        raise MicrobuildError("comparing with TFLM needs the tflite-micro package: "
                              "pip install tflite-micro (setup.sh installs it in .venv)") from None
    from microbuild.model.reader import read_model

    interpreter = runtime.Interpreter.from_bytes(Path(model_path).read_bytes(),
                                                 arena_size=ARENA_BYTES)
    outputs = len(read_model(model_path).outputs)
    for inputs in input_sets:
        for k, value in enumerate(inputs):
            interpreter.set_input(value, k)
        interpreter.invoke()
        yield [np.array(interpreter.get_output(k), copy=True) for k in range(outputs)]
