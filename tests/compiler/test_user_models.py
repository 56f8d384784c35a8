"""Models made the way users make them (tests/models/users/, made by
tests/models/generate/keras_user_zoo.py and pytorch_user_zoo.py): MobileNetV2/V3-like
classifiers, a YOLO-like detector, a landmark regressor, an FC autoencoder, an MNIST CNN, Keras 3
GRU/LSTM layers (WHILE loops), LayerNorm, in float32 and in int8 with uint8 camera boundaries,
PyTorch attention and CNN exports. What TFLM runs, microbuild runs, with the same bytes (on the
host). benchmarks/user_models.py tabulates them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from compiler_support import random_inputs
from test_float_models import assert_same_bytes

from microbuild.compiler import compile_model
from microbuild.errors import ModelError

USERS = Path(__file__).resolve().parent.parent / "models" / "users"
# TFLM refuses these (float16 weights: its DEQUANTIZE takes no float16; hybrid: int8 weights on
# float activations; TILE: no kernel), so there is nothing to be bit-exact with.
NOT_IN_TFLM = {"fc_autoencoder_float16", "dense_hybrid", "upsampling_tile_float"}
MODELS = sorted(p for p in USERS.glob("*.tflite") if p.stem not in NOT_IN_TFLM)


def test_the_user_models_are_there_and_small():
    names = {p.stem for p in MODELS}
    assert {"mobilenet_v2_uint8", "yolo_like_uint8", "landmarks_uint8", "gru_float",
            "lstm_float", "layernorm_float", "fc_autoencoder_float", "mnist_cnn_float"} <= names
    sizes = [p.stat().st_size for p in USERS.glob("*.tflite")]
    assert max(sizes) < 100_000 and sum(sizes) < 1_000_000


@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.stem)
def test_user_model_is_bit_exact_with_tflm(model, tmp_path):
    cc = "clang" if MODELS.index(model) % 2 else "gcc"
    got = assert_same_bytes(model, random_inputs(model, 2, seed=26), cc, tmp_path)
    if model.stem.endswith("_uint8"):  # camera boundaries: uint8 in, uint8 out
        assert got[0][0].dtype == np.uint8


def test_keras_recurrent_layers_are_unrolled_with_weights_shared():
    # Keras 3's GRU converts to a 12-step WHILE loop; unrolled, every step's FULLY_CONNECTEDs
    # read the same weight tensors, so the weights are stored once.
    compiled = compile_model(USERS / "gru_float.tflite")
    assert compiled.graph.subgraph_count == 1
    assert not any(op.opcode == "WHILE" for op in compiled.graph.operators)
    fcs = [op for op in compiled.graph.operators if op.opcode == "FULLY_CONNECTED"]
    assert len(fcs) == 2 * 12 + 1
    assert len({op.inputs[1] for op in fcs}) == 3
    assert compiled.weights_bytes < 4 * (30 * 10 + 30 * 6 + 2 * 30 + 3 * 10 + 3) + 1024
    assert any("WHILE x12" in note for note in compiled.graph.notes)


def test_a_loop_whose_trip_count_is_a_run_time_value_is_refused_naming_the_while():
    from microbuild.model.ir import Tensor
    from microbuild.model.reader import read_model

    # The loop's step counter starts at a model input instead of the constant 0.
    graph = read_model(USERS / "lstm_float.tflite")
    start = Tensor(index=len(graph.tensors), name="start", shape=(), dtype="int32")
    graph.tensors.append(start)
    graph.inputs.append(start.index)
    graph.operators[1].inputs[0] = start.index
    with pytest.raises(ModelError) as info:
        compile_model(graph)
    message = str(info.value)
    assert "op 1 WHILE" in message and "known only at run time" in message
    assert "Traceback" not in message


def test_float16_weights_fold_where_tflm_refuses_the_model():
    compiled = compile_model(USERS / "fc_autoencoder_float16.tflite")
    assert not any(op.opcode == "DEQUANTIZE" for op in compiled.graph.operators)
    assert compiled.inputs[0].dtype == "float32"


def test_a_hybrid_model_is_refused_as_tflm_refuses_it():
    with pytest.raises(ModelError) as info:
        compile_model(USERS / "dense_hybrid.tflite")
    message = str(info.value)
    assert "dynamic-range" in message and "representative_dataset" in message


def test_an_operator_tflm_lacks_too_is_named_without_noise_from_the_ops_after_it():
    # Keras 3's UpSampling2D is TILE; the RESHAPEs and CONCATENATION reading its results would
    # see shapes nobody computed, and are not blamed.
    with pytest.raises(ModelError) as info:
        compile_model(USERS / "upsampling_tile_float.tflite")
    lines = str(info.value).splitlines()
    assert lines[1].startswith("  TILE (ops 1, 7): TFLM has no kernel for it either")
    assert len(lines) == 3 and lines[2].startswith("hint: `microbuild ops`")
