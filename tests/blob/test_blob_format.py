"""The model blob's layout in Python (microbuild/blob/format.py): what is written reads back, and
the validator names what is wrong with a damaged blob."""

from __future__ import annotations

import struct

import pytest

from microbuild.blob.format import (
    ARG_F32, ARG_INT, ARG_NULL, ARG_PARAMS, ARG_WEIGHTS, ARG_WORKSPACE, CRC_OFFSET, Blob, BlobArg,
    BlobError, BlobOp, ParamBlock, check_blob, params_section, read_blob, write_blob)


def _blob() -> Blob:
    params, offsets = params_section([ParamBlock(b"\1\2\3\4\5\6\7\10", ((0, ARG_WEIGHTS, 16),)),
                                      ParamBlock(b"\7" * 12)])
    ops = [BlobOp(0x1234, 0, (BlobArg(ARG_PARAMS, offsets[0]), BlobArg(ARG_WORKSPACE, 8),
                             BlobArg(ARG_WEIGHTS, 16), BlobArg(ARG_NULL, 0))),
           BlobOp(0x5678, 2, (BlobArg(ARG_PARAMS, offsets[1]),))]
    return Blob(kernel_set_id=0xCAFE, board="host", workspace_bytes=64, pointer_bytes=8,
                inputs=[(0, 16)], outputs=[(32, 4)], ops=ops, params=params,
                weights=bytes(range(40)))


def test_written_blob_reads_back_with_its_crc_and_sha():
    blob = _blob()
    data = write_blob(blob)
    assert len(data) % 16 == 0 and data[:8] == b"MBMODEL\0"
    back = read_blob(data, kernel_set_id=0xCAFE)
    assert back.ops == blob.ops and back.params == blob.params and back.weights == blob.weights
    assert (back.inputs, back.outputs, back.board) == ([(0, 16)], [(32, 4)], "host")
    assert back.crc32 == blob.crc32 and back.sha256 == blob.sha256 and back.sha256 != b"\0" * 32
    # The second block starts after 8 (size, count) + 12 (one pointer field) + 8 bytes + 4 pad.
    assert back.ops[1].args[0].value == 32


def test_damaged_blobs_are_named():
    data = write_blob(_blob())
    assert "truncated" in check_blob(data[:-16])[0]
    assert "truncated" in check_blob(data[:100])[0]
    flipped = bytearray(data)
    flipped[-20] ^= 0x40
    assert "CRC-32 mismatch" in check_blob(bytes(flipped))[0]
    assert "another firmware" in check_blob(data, kernel_set_id=0xBEEF)[0]
    assert "bad magic" in check_blob(b"TFL3" + data[4:])[0]
    with pytest.raises(BlobError, match="CRC-32"):
        read_blob(bytes(flipped))


def test_an_argument_out_of_bounds_is_named_even_with_a_good_crc():
    blob = _blob()
    blob.ops[0] = BlobOp(0x1234, 0, (BlobArg(ARG_WORKSPACE, 64),))
    problems = check_blob(write_blob(blob))
    assert problems == ["op 0 argument 0: workspace offset 64 past its 64 bytes"]


def test_crc_field_itself_is_covered_as_zero():
    data = bytearray(write_blob(_blob()))
    (crc,) = struct.unpack_from("<I", data, CRC_OFFSET)
    struct.pack_into("<I", data, CRC_OFFSET, crc ^ 1)
    assert "CRC-32 mismatch" in check_blob(bytes(data))[0]


def test_a_parameter_block_pointing_outside_the_weights_is_named():
    blob = _blob()
    # weights are 40 bytes
    blob.params, _ = params_section([ParamBlock(b"\0" * 8, ((0, ARG_WEIGHTS, 40),))])
    blob.ops = [BlobOp(0x1234, 3, (BlobArg(ARG_PARAMS, 0),))]
    assert check_blob(write_blob(blob)) == [
        "op 3 argument 0: parameter block at 0: pointer field 0 (at 0, to weights offset 40) is "
        "outside the block or what it points into"]
    blob.ops = [BlobOp(0x1234, 3, (BlobArg(ARG_PARAMS, 4),))]
    assert "misaligned" in check_blob(write_blob(blob))[0]


def test_fused_op_blocks_state_and_numbers_read_back_and_are_checked():
    """A fused op's block points into the workspace and at another (pointer-free) block; a
    number passed by value needs no bounds; the state lies in the workspace's last bytes and
    its reset image in the weights."""
    blob = _blob()
    inner = ParamBlock(b"\5" * 8)
    fused = ParamBlock(b"\0" * 16, ((0, ARG_PARAMS, 0), (8, ARG_WORKSPACE, 48)))
    blob.params, offsets = params_section([inner, fused])
    blob.ops = [BlobOp(0x1234, 0, (BlobArg(ARG_PARAMS, offsets[1]), BlobArg(ARG_INT, 0xFFFFFFFC),
                                   BlobArg(ARG_F32, 0x3F800000)))]
    blob.state_bytes, blob.state_image = 16, 16
    back = read_blob(write_blob(blob))
    assert (back.state_bytes, back.state_image, back.ops) == (16, 16, blob.ops)
    blob.state_image = 32  # 32 + 16 is past the 40 bytes of weights
    assert "state of 16 bytes (reset image at weights offset 32)" in check_blob(write_blob(blob))[0]
    blob.state_image = 16
    blob.params, offsets = params_section(
        [fused, ParamBlock(b"\0" * 16, ((0, ARG_PARAMS, 0),))])  # nests a block with pointers
    blob.ops = [BlobOp(0x1234, 0, (BlobArg(ARG_PARAMS, offsets[1]),))]
    assert check_blob(write_blob(blob)) == [
        "op 0 argument 0: parameter block at 0, pointed to by another block, has pointer fields "
        "itself"]
    blob.params, _ = params_section([ParamBlock(b"\0" * 8, ((0, ARG_WORKSPACE, 64),))])
    blob.ops = [BlobOp(0x1234, 0, (BlobArg(ARG_PARAMS, 0),))]
    assert "to workspace offset 64) is outside" in check_blob(write_blob(blob))[0]
