"""Resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, initialized by CALL_ONCE):
tf.Variable state in tf.Modules through the stock converter, kept in the model's state buffer
and streaming bit-exact with TFLM invoked the same way; the float32 variables the converter
keeps around int8 graphs are stored as int8; float32 state in a float model; refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

MODELS = Path(__file__).resolve().parent.parent / "models"
SWEEP = sorted((MODELS / "ops").glob("var_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
from tflite_builder import ModelBuilder  # noqa: E402


def test_the_variable_sweep_is_there():
    assert {p.stem for p in SWEEP} == {"var_smoother", "var_smoother_start", "var_two_stage",
                                       "var_s16_smoother"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_variables_stream_bit_exact_with_tflm(model, cc, tmp_path):
    # 12 consecutive invocations: each reads what the one before assigned.
    assert_bit_exact(model, n=12, seed=30, cc=cc, tmp_path=tmp_path)


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_float_variables_stream_bit_exact_with_tflm(cc, tmp_path):
    # A tf.Module's float32 state left unquantized (the stock converter, no optimizations):
    # READ/ASSIGN_VARIABLE copy float32 state, the MUL/ADD around them are float kernels.
    model = MODELS / "float" / "var_two_stage_float.tflite"
    compiled = compile_model(model, prefix="m")
    assert compiled.state_bytes == 2 * 32  # two float32[1, 6] variables, each 16-byte aligned
    assert_bit_exact(model, n=12, seed=31, cc=cc, tmp_path=tmp_path)


def test_variables_live_in_the_state_buffer_as_int8():
    compiled = compile_model(MODELS / "ops" / "var_two_stage.tflite", prefix="m")
    opcodes = [op["opcode"] for op in compiled.summary()["ops"]]
    # CALL_ONCE, VAR_HANDLE and the QUANTIZE/DEQUANTIZE around the float variables are gone.
    assert opcodes.count("READ_VARIABLE") == 2 and opcodes.count("ASSIGN_VARIABLE") == 2
    assert not {"CALL_ONCE", "VAR_HANDLE", "QUANTIZE", "DEQUANTIZE"} & set(opcodes)
    assert compiled.state_bytes == 2 * 16
    assert sum("kept as int8" in n for n in compiled.summary()["notes"]) == 2
    # Reset copies the initial values (one of them is -0.25, not the zero point) from flash.
    reset = compiled.sources["m.c"].split("void m_reset(void *state)")[1]
    assert reset.count("memcpy(st + ") == 2 and "memset" not in reset


def test_a_variable_without_an_initializer_is_refused(tmp_path):
    b = ModelBuilder()
    x = b.tensor("x", (1, 4), "int8", 0.1, 0)
    handle = b.tensor("handle", (), "int32")
    b.tensors[handle].type = b.schema.TensorType.RESOURCE  # the builder has no name for it
    v = b.tensor("v", (1, 4), "int8", 0.1, 0)
    y = b.tensor("y", (1, 4), "int8", 0.2, 0)
    b.operator("VAR_HANDLE", [], [handle], "VarHandleOptions", sharedName="state")
    b.operator("READ_VARIABLE", [handle], [v])
    b.operator("ADD", [x, v], [y], "AddOptions")
    b.operator("ASSIGN_VARIABLE", [handle, y], [])
    path = tmp_path / "uninitialized.tflite"
    path.write_bytes(b.build([x], [y]))
    with pytest.raises(ModelError) as info:
        compile_model(path)
    # Without a CALL_ONCE initializer the handle stays: microbuild resolves initialized
    # variables only (what the converter makes).
    assert "op 0 VAR_HANDLE: microbuild sets resource variables up while reading the model, " \
        "when a CALL_ONCE initializer" in str(info.value)
