"""Models the compiler must refuse, with one message that lists every problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

OPS_DIR = Path(__file__).resolve().parent.parent / "models" / "ops"


def _message(path) -> str:
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def test_every_unsupported_op_is_listed_by_index_and_name():
    message = _message(OPS_DIR / "unsupported_sqdiff.tflite")
    lines = message.splitlines()
    assert "unsupported_sqdiff.tflite" in lines[0]
    assert "  op 1 SQUARED_DIFFERENCE: no kernel for this operator" in lines
    assert "  op 2 EXP: no kernel for this operator" in lines
    # The supported FULLY_CONNECTEDs around them are not blamed.
    assert not any(line.strip().startswith(("op 0", "op 3")) for line in lines)
    assert lines[-1].startswith("hint: supported operators are ") and "FULLY_CONNECTED" in lines[-1]


def test_float_model_is_refused_with_a_quantization_hint():
    message = _message(OPS_DIR / "float_dense.tflite")
    assert "op 0 FULLY_CONNECTED: input tensor 0" in message
    assert "is float32; only int8 activations are supported" in message
    assert "op 0 FULLY_CONNECTED: output tensor" in message
    assert "TFLITE_BUILTINS_INT8" in message


def test_dynamic_shapes_are_refused():
    message = _message(OPS_DIR / "dynamic_batch_fc.tflite")
    assert "graph input 0" in message and "dynamic shape [-1, 8]" in message
    assert "op 0 FULLY_CONNECTED: input tensor" in message


def test_several_subgraphs_are_refused():
    message = _message(OPS_DIR / "while_loop.tflite")
    assert "3 subgraphs" in message
    assert "op 0 WHILE: no kernel for this operator" in message


@pytest.mark.parametrize("prefix", ["", "1model", "my-model", "int", "a b"])
def test_prefix_must_be_a_c_identifier(prefix):
    with pytest.raises(ModelError, match="not a valid C identifier"):
        compile_model(OPS_DIR / "fc_bias_none_pc.tflite", prefix=prefix)


def test_garbage_bytes_are_a_model_error():
    with pytest.raises(ModelError, match="<bytes>"):
        compile_model(b"definitely not a flatbuffer")
