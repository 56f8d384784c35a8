"""UNIDIRECTIONAL_SEQUENCE_LSTM: the sweep (Keras LSTM layers through the stock int8 converter,
16x8 and a clipped zero-point LSTM built with tflite_builder) streams bit-exact with TFLM over
consecutive invocations, the hidden and cell states live in the state buffer, and the LSTM
variants TFLM's kernel does not run are refused with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from compiler_support import assert_bit_exact, random_inputs, run_tflm_many

from microbuild.compiler import compile_model
from microbuild.compiler.ops.base import REGISTRY
from microbuild.errors import ModelError
from microbuild.model.reader import read_model

MODELS = Path(__file__).resolve().parent.parent / "models"
SWEEP = sorted((MODELS / "ops").glob("lstm_*.tflite"))
sys.path.insert(0, str(MODELS / "generate"))
from ops_lstm import build_lstm  # noqa: E402


def test_the_lstm_sweep_is_there():
    assert {p.stem for p in SWEEP} == {
        "lstm_u8", "lstm_u1", "lstm_u32_t12", "lstm_b2_u12", "lstm_time_major_u8",
        "lstm_saturated_u16", "lstm_s16_u8", "lstm_s16_b2_u6", "lstm_clip_zp_u8"}


@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("model", SWEEP, ids=lambda p: p.stem)
def test_lstm_streams_bit_exact_with_tflm(model, cc, tmp_path):
    # 6 consecutive invocations: each starts from the hidden and cell states the last one left.
    assert_bit_exact(model, n=6, seed=23, cc=cc, tmp_path=tmp_path)


def test_the_states_carry_over_between_invocations():
    """The same input twice gives different outputs in TFLM (the states moved on): the
    bit-exact streams above do test the state buffer, not just one invocation."""
    path = MODELS / "ops" / "lstm_u8.tflite"
    x = random_inputs(path, 1, seed=1)[0]
    first, second = run_tflm_many(path, [x, x])
    assert not np.array_equal(first[0], second[0])


def test_hidden_and_cell_states_are_in_the_state_buffer():
    model = compile_model(MODELS / "ops" / "lstm_b2_u12.tflite", prefix="rnn")
    # int8 hidden state and int16 cell state, 2 batches x 12 units each (each placed aligned).
    assert model.state_bytes == model.summary()["state_bytes"] >= 2 * 12 * 1 + 2 * 12 * 2
    fills = sorted((e["bytes"], e["fill"]) for e in model.summary()["state"])
    graph = read_model(MODELS / "ops" / "lstm_b2_u12.tflite")
    (hidden,) = [t for t in graph.tensors if t.is_variable and t.dtype == "int8"]
    assert hidden.zero_point != 0
    assert fills == [(24, hidden.zero_point & 0xFF), (48, 0)]  # TFLM resets int8 to its zp
    assert "mb_lstm_s8(" in model.sources["rnn.c"]


def test_16x8_lstm_uses_the_int16_kernel_with_int64_biases():
    model = compile_model(MODELS / "ops" / "lstm_s16_u8.tflite", prefix="rnn")
    assert "mb_lstm_s16(" in model.sources["rnn.c"]
    assert model.state_bytes >= 8 * 2 + 8 * 2
    assert sorted(e["bytes"] for e in model.summary()["state"]) == [16, 16]


def test_clip_is_the_cell_clip_over_the_cell_scale_truncated():
    model = compile_model(MODELS / "ops" / "lstm_clip_zp_u8.tflite", prefix="rnn")
    # cell_clip 2.0 at a cell scale of 2^-13; the converter's 10.0 at 2^-11 saturates to 20480.
    assert ".cell_clip = 16384" in model.sources["rnn.c"]
    keras = compile_model(MODELS / "ops" / "lstm_saturated_u16.tflite", prefix="rnn")
    assert ".cell_clip = 20480" in keras.sources["rnn.c"]


def test_return_sequences_false_is_the_lstm_then_a_strided_slice():
    """Keras's return_sequences=False converts to the LSTM and a STRIDED_SLICE of its last step.
    The model waits in tests/models/lstm/ until STRIDED_SLICE has a lowering; the LSTM itself
    compiles (only STRIDED_SLICE is refused) and once it does, the whole model is bit-exact."""
    path = MODELS / "lstm" / "lstm_last_u16.tflite"
    if "STRIDED_SLICE" in REGISTRY:
        assert_bit_exact(path, n=6, seed=23)
        return
    with pytest.raises(ModelError) as err:
        compile_model(path)
    refused = [line.strip() for line in str(err.value).splitlines()[1:]
               if line.strip() and not line.startswith("hint:")]
    assert len(refused) == 1 and refused[0].startswith("STRIDED_SLICE"), refused


def _refusal(tmp_path, **kwargs) -> str:
    path = tmp_path / "lstm.tflite"
    path.write_bytes(build_lstm(seed=5, units=4, steps=3, features=5, batch=1,
                                act=kwargs.pop("act", "int8"), **kwargs))
    with pytest.raises(ModelError) as err:
        compile_model(path)
    return str(err.value)


@pytest.mark.parametrize("variant, message", [
    ({"peephole": True}, "uses peephole connections (cell-to-gate weights): TFLM's LSTM kernel "
                         "has none"),
    ({"projection": True}, "uses a projection layer: TFLM's LSTM kernel has none"),
    ({"layer_norm": True}, "uses layer normalisation: TFLM's LSTM kernel has none"),
    ({"cifg": True}, "has no input gate weights (CIFG, coupled input and forget gates)"),
    ({"cell_dtype": "int8"}, "cell state 'cell_state' is int8; TFLM's quantized LSTM only "
                             "supports an int16 cell state"),
    ({"variable_states": False}, "output state 'output_state' is not a variable tensor"),
    ({"per_channel": True}, "weights 'recurrent_to_input' must be quantized per tensor"),
    ({"activation": 1}, "cell gate activation RELU: TFLM's integer LSTM computes the cell gate "
                        "only with TANH"),
    ({"act": "int16", "hidden_zp": 3}, "'output_state' is int16 with zero point 3; 16x8 "
                                       "quantization needs zero point 0"),
])
def test_what_tflm_does_not_run_is_refused(variant, message, tmp_path):
    text = _refusal(tmp_path, **variant)
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" in text and message in text, text
