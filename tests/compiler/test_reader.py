"""Reading .tflite files into the IR: good files come out right, bad files give ModelError."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from microbuild.errors import ModelError
from microbuild.model.reader import read_model, resolve_opcode

OPS_DIR = Path(__file__).resolve().parent.parent / "models" / "ops"
GOOD = OPS_DIR / "fc_bias_relu_pc.tflite"


@pytest.mark.parametrize("content, expected", [
    (b"", "empty"),
    (b"\x00" * 3, "not a TFLite model"),
    (b"1234ABCD" + b"\x00" * 64, "not a TFLite model"),
    (np.random.default_rng(0).bytes(4096), "not a TFLite model"),
    (b"\x10\x00\x00\x00TFL3" + np.random.default_rng(1).bytes(200), "corrupt"),
])
def test_bad_files_raise_model_error_naming_the_file(tmp_path, content, expected):
    path = tmp_path / "broken_model.tflite"
    path.write_bytes(content)
    with pytest.raises(ModelError) as info:
        read_model(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


# What the generated flatbuffer accessors and numpy say when an offset is out of range: a
# message in these terms tells a user nothing about their file.
_PYTHON_INTERNALS = re.compile(r"unpack_from|bad number|requested size|Error\b|Traceback")


@pytest.mark.parametrize("keep", [8, 64, 300, 1000])
def test_truncated_files_raise_model_error(tmp_path, keep):
    path = tmp_path / "truncated.tflite"
    path.write_bytes(GOOD.read_bytes()[:keep])
    with pytest.raises(ModelError, match="truncated.tflite") as info:
        read_model(path)
    assert not _PYTHON_INTERNALS.search(str(info.value)), str(info.value)


@pytest.mark.parametrize("vtable, expected", [
    # The root table's offset to its vtable pointing past the end, then before the start.
    (-5000, "in the model's root table: an offset or length points to byte 5,"),
    (5000, "in the model's root table: an offset or length holds -4,"),
])
def test_corrupt_offsets_are_described_in_the_files_terms(vtable, expected):
    data = bytearray(GOOD.read_bytes())
    struct.pack_into("<i", data, struct.unpack_from("<I", data, 0)[0], vtable)
    with pytest.raises(ModelError) as info:
        read_model(bytes(data))
    message = str(info.value)
    assert expected in message and "the file is truncated or not a .tflite model" in message
    assert not _PYTHON_INTERNALS.search(message), message


def test_a_damaged_tensor_is_named_with_the_part_of_the_file():
    """Every vector offset of the file in turn set past its end: each message names the table
    it was reading (a tensor, an operator, ...) and says nothing of Python."""
    data = GOOD.read_bytes()
    parts = set()
    for pos in range(8, len(data) - 4, 4):
        damaged = bytearray(data)
        struct.pack_into("<I", damaged, pos, 0x00FFFFF0)
        try:
            read_model(bytes(damaged))
        except ModelError as exc:
            message = str(exc)
            assert not _PYTHON_INTERNALS.search(message), message
            found = re.search(r"corrupt in (\w+ \d+ \w+|\w+ \w+)", message)
            if found:
                parts.add(found.group(1).split()[-1] if found.group(1)[0] == "s" else
                          found.group(1))
    assert {"tensor", "operator"} <= parts, parts


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        read_model(tmp_path / "nope.tflite")


def test_fully_connected_graph():
    graph = read_model(GOOD)
    assert graph.subgraph_count == 1 and graph.source == str(GOOD)
    (op,) = graph.operators
    assert op.opcode == "FULLY_CONNECTED"
    assert op.options["fused_activation_function"] == "RELU"
    assert op.options["keep_num_dims"] is False
    assert op.options["weights_format"] == "DEFAULT"
    x, w, b = graph.input_tensors(op)
    assert (x.dtype, x.shape, x.is_constant) == ("int8", (1, 32), False)
    assert w.dtype == "int8" and w.data.dtype == np.int8 and w.data.shape == (10, 32)
    assert w.quant.per_channel and len(w.quant.scale) == 10 and w.quant.axis == 0
    assert b.dtype == "int32" and b.data.dtype == np.int32 and b.data.shape == (10,)
    assert not x.quant.per_channel and x.scale > 0
    assert graph.inputs == [x.index] and graph.outputs == op.outputs


def test_absent_bias_is_minus_one():
    (op,) = read_model(OPS_DIR / "fc_zero_bias_pc.tflite").operators
    assert op.inputs[2] == -1


def test_softmax_beta_and_keep_num_dims():
    assert read_model(OPS_DIR / "softmax_1x10_beta0p5.tflite").operators[0].options == \
        {"beta": 0.5}
    assert read_model(OPS_DIR / "fc_keepdims_pc.tflite").operators[0].options["keep_num_dims"]


def test_padding_and_strides_come_out_as_schema_names():
    graph = read_model(OPS_DIR / "conv_3x3_valid_s2_relu6_pc.tflite")
    conv = next(op for op in graph.operators if op.opcode == "CONV_2D")
    assert conv.options["padding"] == "VALID"
    assert conv.options["fused_activation_function"] == "RELU6"
    assert (conv.options["stride_w"], conv.options["stride_h"]) == (2, 2)
    assert conv.options["dilation_w_factor"] == 1


def test_opcode_is_the_larger_of_the_two_fields():
    assert resolve_opcode(9, 9) == "FULLY_CONNECTED"
    assert resolve_opcode(9, 0) == "FULLY_CONNECTED"  # files older than builtin_code
    assert resolve_opcode(127, 150) == "GELU"  # codes above 127 live only in builtin_code
    assert resolve_opcode(127, 100000) == "UNKNOWN_100000"


def test_dynamic_shapes_and_subgraphs_are_recorded():
    graph = read_model(OPS_DIR / "dynamic_batch_fc.tflite")
    x = graph.tensors[graph.inputs[0]]
    assert x.is_dynamic and x.shape_signature[0] == -1
    assert read_model(OPS_DIR / "while_loop.tflite").subgraph_count == 3
    assert not read_model(GOOD).tensors[0].is_dynamic
