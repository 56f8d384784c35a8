"""TensorFlow Lite Micro as the reference microbuild's outputs must equal bit for bit.

Only `microbuild ci --emulate` (and the tests) need it; it is the `tflite-micro` package, not a
dependency of building firmware.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from microbuild.errors import MicrobuildError

ARENA_BYTES = 4 * 1024 * 1024  # generous: the reference's arena size does not change its outputs


def tflm_outputs(model_path: str | Path, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The outputs of one invocation of TFLM's interpreter on ``inputs``."""
    try:
        from tflite_micro import runtime
    except ImportError:
        raise MicrobuildError("comparing with TFLM needs the tflite-micro package: "
                              "pip install tflite-micro (setup.sh installs it in .venv)") from None
    from microbuild.model.reader import read_model

    interpreter = runtime.Interpreter.from_bytes(Path(model_path).read_bytes(),
                                                 arena_size=ARENA_BYTES)
    for k, value in enumerate(inputs):
        interpreter.set_input(value, k)
    interpreter.invoke()
    return [np.array(interpreter.get_output(k), copy=True)
            for k in range(len(read_model(model_path).outputs))]
