"""Models the compiler must refuse, with one message that lists every problem."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

OPS_DIR = Path(__file__).resolve().parent.parent / "models" / "ops"
sys.path.insert(0, str(OPS_DIR.parent / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def _message(path) -> str:
    with pytest.raises(ModelError) as info:
        compile_model(path)
    return str(info.value)


def _unsupported_model() -> bytes:
    """FC -> WHILE -> LSH_PROJECTION-like chain: WHILE twice (TFLM has it, microbuild not yet:
    no subgraphs), SKIP_GRAM (no kernel in TFLM either) and a custom operator, between supported
    FULLY_CONNECTEDs that must not be blamed."""
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", 0.05, 0)
    w = b.constant("w", np.ones((8, 8), np.int8), scale=0.01)
    ts = [b.tensor(f"t{k}", (1, 8), "int8", 0.05, 0) for k in range(6)]
    b.operator("FULLY_CONNECTED", [x, w, -1], [ts[0]], "FullyConnectedOptions")
    b.operator("WHILE", [ts[0]], [ts[1]])
    b.operator("SKIP_GRAM", [ts[1]], [ts[2]])
    b.operator("WHILE", [ts[2]], [ts[3]])
    b.operator("CUSTOM", [ts[3]], [ts[4]], custom="MyVendorOp")
    b.operator("FULLY_CONNECTED", [ts[4], w, -1], [ts[5]], "FullyConnectedOptions")
    return b.build(inputs=[x], outputs=[ts[5]])


def test_every_unsupported_op_is_listed_once_per_opcode_with_tflms_status():
    with pytest.raises(ModelError) as info:
        compile_model(_unsupported_model())
    lines = str(info.value).splitlines()
    assert lines[0] == "<bytes>: cannot compile this model:"
    assert "  WHILE (ops 1, 3): TFLM has a kernel for it, microbuild does not yet" in lines
    assert any(line.startswith("  SKIP_GRAM (op 2): TFLM has no kernel for it either")
               for line in lines)
    assert any(line.startswith("  custom operator 'MyVendorOp' (op 4): TFLM has no kernel")
               for line in lines)
    # The supported FULLY_CONNECTEDs around them are not blamed.
    assert not any("FULLY_CONNECTED" in line for line in lines)
    assert lines[-1].startswith("hint: `microbuild ops`")


def test_float_model_compiles_with_float_tensors_in_its_header():
    model = compile_model(OPS_DIR / "float_dense.tflite")
    assert [s.dtype for s in model.inputs + model.outputs] == ["float32", "float32"]


def test_float_op_without_a_float_kernel_is_named_with_a_float_hint():
    # float16 at run time: no TFLM kernel takes it (HARD_SWISH has a float32 one).
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "float16")
    y = b.tensor("y", (1, 8), "float16")
    b.operator("HARD_SWISH", [x], [y])
    lines = _message(b.build([x], [y])).splitlines()
    assert any(line.startswith("  HARD_SWISH (op 0): has float16 tensors at run time")
               for line in lines), lines
    assert lines[-1].startswith("hint: `microbuild ops` lists the operators microbuild compiles "
                                "in float32")


def test_hybrid_model_is_named_as_such():
    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "float32")
    w = b.constant("w", np.ones((4, 8), np.int8), scale=0.01)
    y = b.tensor("y", (1, 4), "float32")
    b.operator("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    message = _message(b.build([x], [y]))
    assert "dynamic-range (\"hybrid\") quantized model: 1 operators have int8 weights" in message


def test_an_open_batch_is_compiled_at_the_shape_tflm_allocates():
    model = compile_model(OPS_DIR / "dynamic_batch_fc.tflite")
    assert model.inputs[0].shape == (1, 8)
    assert any(note.startswith("batch fixed to 1") for note in model.summary()["notes"])


def test_a_negative_dimension_in_shape_is_refused():
    b = ModelBuilder()
    x = b.tensor("x", (-1, 8), "int8", 0.05, 0)
    w = b.constant("w", np.ones((4, 8), np.int8), scale=0.01)
    y = b.tensor("y", (-1, 4), "int8", 0.1, 0)
    b.operator("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions")
    message = _message(b.build([x], [y]))
    assert "tensor 0 'x' has shape [-1, 8]: a negative dimension" in message


def test_a_while_loop_with_a_compile_time_trip_count_is_unrolled(tmp_path):
    # tf.while_loop(i < 3, v * 2.0): three MULs, bit-exact with TFLM's WHILE
    from compiler_support import random_inputs
    from test_float_models import assert_same_bytes

    model = OPS_DIR / "while_loop.tflite"
    compiled = compile_model(model)
    assert [op.opcode for op in compiled.graph.operators] == ["MUL"] * 3
    assert_same_bytes(model, random_inputs(model, 2, seed=3), "gcc", tmp_path)


@pytest.mark.parametrize("prefix", ["", "1model", "my-model", "int", "a b"])
def test_prefix_must_be_a_c_identifier(prefix):
    with pytest.raises(ModelError, match="not a valid C identifier"):
        compile_model(OPS_DIR / "fc_bias_none_pc.tflite", prefix=prefix)


def test_garbage_bytes_are_a_model_error():
    with pytest.raises(ModelError, match="<bytes>"):
        compile_model(b"definitely not a flatbuffer")
