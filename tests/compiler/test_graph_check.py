"""A graph that is not a well-formed data flow (a tensor nobody writes, two writers, a reader
before its writer, an activation flagged as a variable) is refused before planning, naming the
tensor and the operator; the fuzzer's mutants of this kind ended in a KeyError in the planner."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "models" / "generate"))

from tflite_builder import ModelBuilder  # noqa: E402

Q = dict(scale=0.1, zero_point=0)


def _relu_chain(variant: str) -> bytes:
    """x -> RELU -> a -> RELU -> y, damaged as ``variant`` says."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", **Q)
    a = b.tensor("a", (1, 8), "int8", **Q, variable=variant == "variable activation")
    y = b.tensor("y", (1, 8), "int8", **Q)
    ghost = b.tensor("ghost", (1, 8), "int8", **Q)
    if variant == "unproduced input":
        b.operator("RELU", [x], [a])
        b.operator("ADD", [a, ghost], [y], "AddOptions")
    elif variant == "two writers":
        b.operator("RELU", [x], [a])
        b.operator("RELU", [x], [a])
        b.operator("RELU", [a], [y])
    elif variant == "out of order":
        b.operator("RELU", [a], [y])
        b.operator("RELU", [x], [a])
    elif variant == "writes a constant":
        w = b.constant("w", np.ones((1, 8), np.int8), **Q)
        b.operator("RELU", [x], [w])
        b.operator("RELU", [w], [y])
    else:
        b.operator("RELU", [x], [a])
        b.operator("RELU", [a], [y])
    outputs = [y, ghost] if variant == "unproduced output" else [y]
    return b.build([x], outputs)


@pytest.mark.parametrize("variant, expected", [
    ("unproduced input", "tensor 3 'ghost' is read by op 1 ADD but no operator produces it and "
                         "it is not a model input or constant"),
    ("unproduced output", "tensor 3 'ghost' is a model output but no operator produces it"),
    ("two writers", "tensor 1 'a' is written by both op 0 RELU and op 1 RELU"),
    ("out of order", "tensor 1 'a' is read by op 0 RELU before op 1 RELU produces it"),
    ("variable activation", "op 0 RELU writes tensor 1 'a' as its output, but it is marked as a "
                            "variable"),
    ("writes a constant", "op 0 RELU writes tensor 4 'w', which is a constant"),
])
def test_a_malformed_data_flow_is_refused_naming_tensor_and_op(variant, expected):
    with pytest.raises(ModelError) as info:
        compile_model(_relu_chain(variant))
    message = str(info.value)
    assert "the model's graph is malformed" in message and expected in message, message


def test_a_well_formed_chain_compiles():
    """The same builder without damage: the check refuses only what is broken."""
    compiled = compile_model(_relu_chain("none"))
    assert len(compiled.inputs) == 1 and len(compiled.outputs) == 1
