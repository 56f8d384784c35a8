"""The model blob's byte layout (format version 2): writer, reader and validator.

Everything is little-endian and position-independent: sections and arguments are byte offsets,
never addresses, so the same blob runs wherever it is loaded (at a 16-byte aligned address).
docs/model-blob.md describes the layout; runtime/table/mb_table.c reads the same bytes, and the
constants below are the ones runtime/include/microbuild/table.h defines.

    header (136 bytes)
    I/O table        per input, then per output: workspace offset u32, bytes u32
    op table         per op: kernel id u32, model op index u16, argument count u16, the
                     kernel's index in the firmware's table u32, then per argument: kind u32,
                     value u32
    parameter blocks per block: bytes u32, pointer-field count u32, per pointer field
                     (offset in the block u32, kind u32, value u32), the block's bytes; 8-aligned
    weights          the constant arrays, each 16-aligned, and the state's reset image

A model with state (variable tensors: LSTM, SVDF, resource variables) keeps it in the last
``state_bytes`` of its workspace, which the caller leaves alone between invocations and fills
from the reset image (``mb_table_reset_state``) when it loads a model.

CRC-32 (zlib's) covers the whole blob with its own field read as zero; SHA-256 covers the whole
blob with both the CRC and the SHA-256 fields read as zero.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass, field

from microbuild.errors import MicrobuildError

MAGIC = b"MBMODEL\0"
FORMAT_VERSION = 2
HEADER_BYTES = 136
BOARD_NAME_BYTES = 24
WEIGHTS_ALIGN = 16  # the widest load a kernel variant makes (MVE: 16 bytes)
PARAMS_ALIGN = 8
OP_BYTES = 12  # an op table entry before its arguments
MAX_ARGS = 16  # runtime/include/microbuild/table.h: MB_TABLE_MAX_ARGS

# Argument kinds: what an argument's value is an offset into, or the value itself (an int32 or
# a float32's bits, passed by value: a signal op's sizes, a softmax's beta).
ARG_NULL, ARG_WORKSPACE, ARG_WEIGHTS, ARG_PARAMS, ARG_INT, ARG_F32 = 0, 1, 2, 3, 4, 5
ARG_KIND_NAMES = {ARG_NULL: "null", ARG_WORKSPACE: "workspace", ARG_WEIGHTS: "weights",
                  ARG_PARAMS: "params", ARG_INT: "int32", ARG_F32: "float32"}
# What a parameter block's pointer field points into (the runner sets it before the call): the
# weights, the workspace (a fused op's second operand, a concatenation's input list) or another
# parameter block (a fused op's own parameters), which must have no pointer fields itself.
FIELD_KINDS = (ARG_WORKSPACE, ARG_WEIGHTS, ARG_PARAMS)

# magic, version, header bytes, kernel-set id, total bytes, crc32, sha256, board, workspace bytes,
# op count, ops offset, ops bytes, params offset, params bytes, weights offset, weights bytes,
# io offset, input count, output count, pointer bytes, 3 reserved bytes, sequence number,
# state bytes (the end of the workspace), the state's reset image (weights offset).
_HEADER = struct.Struct(f"<8sHHIII32s{BOARD_NAME_BYTES}sIIIIIIIIIHHB3xIII")
assert _HEADER.size == HEADER_BYTES
CRC_OFFSET, SHA_OFFSET, SEQUENCE_OFFSET = 20, 24, 124


class BlobError(MicrobuildError):
    """A model blob that cannot be written, or one that is not valid."""


@dataclass(frozen=True)
class BlobArg:
    kind: int  # ARG_*
    value: int  # an offset into the workspace, the weights or the parameter blocks (0 for null)


@dataclass(frozen=True)
class BlobOp:
    kernel_id: int
    model_op: int  # the op's index in the compiled model, for messages
    args: tuple[BlobArg, ...]
    # The kernel's place in the firmware's kernel table (the set's functions sorted by name),
    # which the set's id pins: the runner calls through it without looking the id up.
    kernel_index: int = 0


@dataclass(frozen=True)
class ParamBlock:
    """A kernel's constant parameter struct (or array), in the target's ABI; ``pointers`` are the
    fields the runner sets before the call, as (field offset, kind, offset): kind is one of
    FIELD_KINDS, the pointer that section's base + offset."""

    data: bytes
    pointers: tuple[tuple[int, int, int], ...] = ()


@dataclass
class Blob:
    kernel_set_id: int
    board: str
    workspace_bytes: int
    pointer_bytes: int
    inputs: list[tuple[int, int]]  # (workspace offset, bytes)
    outputs: list[tuple[int, int]]
    ops: list[BlobOp]
    params: bytes  # the parameter blocks section, as laid out by ``params_section``
    weights: bytes
    # Which of two valid blobs in a board's model slots is newer: the firmware runs the higher.
    sequence: int = 0
    # State kept between invocations: the workspace's last ``state_bytes`` (16-aligned), reset
    # from the weights at ``state_image``.
    state_bytes: int = 0
    state_image: int = 0
    crc32: int = 0
    sha256: bytes = field(default=b"\0" * 32)


def params_section(blocks: list[ParamBlock]) -> tuple[bytes, list[int]]:
    """The parameter blocks laid out one after the other, and each one's offset."""
    out, offsets = bytearray(), []
    for block in blocks:
        offsets.append(len(out))
        out += struct.pack("<II", len(block.data), len(block.pointers))
        for where, kind, target in block.pointers:
            out += struct.pack("<III", where, kind, target)
        out += block.data
        out += b"\0" * (-len(out) % PARAMS_ALIGN)
    return bytes(out), offsets


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def write_blob(blob: Blob) -> bytes:
    """The blob's bytes, with its CRC-32 and SHA-256 filled in (also set on ``blob``)."""
    board = blob.board.encode()
    if len(board) >= BOARD_NAME_BYTES:
        raise BlobError(f"board name {blob.board!r} is longer than the blob's "
                        f"{BOARD_NAME_BYTES - 1} bytes for it")
    io = b"".join(struct.pack("<II", o, n) for o, n in [*blob.inputs, *blob.outputs])
    ops = bytearray()
    for op in blob.ops:
        if len(op.args) > MAX_ARGS:
            raise BlobError(f"op {op.model_op} passes {len(op.args)} arguments; the table runner "
                            f"takes at most {MAX_ARGS}")
        ops += struct.pack("<IHHI", op.kernel_id, op.model_op, len(op.args), op.kernel_index)
        for a in op.args:
            ops += struct.pack("<II", a.kind, a.value)
    io_offset = HEADER_BYTES
    ops_offset = _align(io_offset + len(io), 8)
    params_offset = _align(ops_offset + len(ops), PARAMS_ALIGN)
    weights_offset = _align(params_offset + len(blob.params), WEIGHTS_ALIGN)
    total = _align(weights_offset + len(blob.weights), WEIGHTS_ALIGN)
    out = bytearray(total)
    out[io_offset:io_offset + len(io)] = io
    out[ops_offset:ops_offset + len(ops)] = ops
    out[params_offset:params_offset + len(blob.params)] = blob.params
    out[weights_offset:weights_offset + len(blob.weights)] = blob.weights

    def header(crc: int, sha: bytes) -> bytes:
        return _HEADER.pack(MAGIC, FORMAT_VERSION, HEADER_BYTES, blob.kernel_set_id, total, crc,
                            sha, board, blob.workspace_bytes, len(blob.ops), ops_offset,
                            len(ops), params_offset, len(blob.params), weights_offset,
                            len(blob.weights), io_offset, len(blob.inputs), len(blob.outputs),
                            blob.pointer_bytes, blob.sequence, blob.state_bytes,
                            blob.state_image)

    out[:HEADER_BYTES] = header(0, b"\0" * 32)
    blob.sha256 = hashlib.sha256(out).digest()
    out[:HEADER_BYTES] = header(0, blob.sha256)
    blob.crc32 = zlib.crc32(out)
    out[:HEADER_BYTES] = header(blob.crc32, blob.sha256)
    return bytes(out)


def read_blob(data: bytes, kernel_set_id: int | None = None) -> Blob:
    """Parse and check a blob (``check_blob``); raise BlobError with every problem found."""
    problems = check_blob(data, kernel_set_id)
    if problems:
        raise BlobError("not a valid model blob:\n" + "\n".join(f"  - {p}" for p in problems))
    return _parse(data)


def _parse(data: bytes) -> Blob:
    (_, _, _, kset, _, crc, sha, board, ws, n_ops, ops_off, _, par_off, par_n, w_off, w_n,
     io_off, n_in, n_out, ptr, seq, state, image) = _HEADER.unpack_from(data)
    io = [struct.unpack_from("<II", data, io_off + 8 * k) for k in range(n_in + n_out)]
    ops, pos = [], ops_off
    for _ in range(n_ops):
        kid, index, n, kernel = struct.unpack_from("<IHHI", data, pos)
        args = tuple(BlobArg(*struct.unpack_from("<II", data, pos + OP_BYTES + 8 * k))
                     for k in range(n))
        ops.append(BlobOp(kid, index, args, kernel))
        pos += OP_BYTES + 8 * n
    return Blob(kernel_set_id=kset, board=board.rstrip(b"\0").decode(errors="replace"),
                workspace_bytes=ws, pointer_bytes=ptr, inputs=io[:n_in], outputs=io[n_in:],
                ops=ops, params=bytes(data[par_off:par_off + par_n]),
                weights=bytes(data[w_off:w_off + w_n]), sequence=seq, state_bytes=state,
                state_image=image, crc32=crc, sha256=sha)


def _block_problem(data: bytes, par_off: int, par_n: int, at: int, pointer: int,
                   limits: dict[int, int], nested: bool = False) -> str | None:
    """What is wrong with the parameter block at ``at`` (as mb_table.c's check_params);
    ``limits`` are the bytes of what a pointer field may point into, by kind."""
    if at % PARAMS_ALIGN or at + 8 > par_n:
        return f"parameter block offset {at} is misaligned or past the {par_n}-byte section"
    size, fields = struct.unpack_from("<II", data, par_off + at)
    if at + 8 + 12 * fields + size > par_n:
        return f"parameter block at {at} ({size} bytes, {fields} pointers) runs past its section"
    if nested and fields:
        return f"parameter block at {at}, pointed to by another block, has pointer fields itself"
    for f in range(fields):
        where, kind, target = struct.unpack_from("<III", data, par_off + at + 8 + 12 * f)
        if where + pointer > size or kind not in FIELD_KINDS or target >= limits[kind]:
            return (f"parameter block at {at}: pointer field {f} (at {where}, to "
                    f"{ARG_KIND_NAMES.get(kind, f'kind {kind}')} offset {target}) is outside the "
                    "block or what it points into")
        if kind == ARG_PARAMS and (
                problem := _block_problem(data, par_off, par_n, target, pointer, limits, True)):
            return problem
    return None


def check_blob(data: bytes, kernel_set_id: int | None = None) -> list[str]:
    """Every reason ``data`` is not a valid blob (for ``kernel_set_id`` when given); [] if it is.
    The checks of mb_table_check in runtime/table/mb_table.c, in its order, except those only the
    firmware can make: the load address's alignment, its pointer size, its workspace size and
    which kernel ids it has."""
    if len(data) < HEADER_BYTES:
        return [f"truncated: {len(data)} bytes, shorter than the {HEADER_BYTES}-byte header"]
    (magic, version, hbytes, kset, total, crc, _, _, ws, n_ops, ops_off, ops_n, par_off, par_n,
     w_off, w_n, io_off, n_in, n_out, pointer, _, state, image) = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return [f"bad magic {magic!r} (expected {MAGIC!r}): not a model blob"]
    if version != FORMAT_VERSION or hbytes != HEADER_BYTES:
        return [f"format version {version} (header {hbytes} bytes); this microbuild reads "
                f"version {FORMAT_VERSION}: pack the model again"]
    if len(data) < total:
        return [f"truncated: {len(data)} of its {total} bytes"]
    zeroed = bytearray(data[:total])
    zeroed[CRC_OFFSET:CRC_OFFSET + 4] = b"\0\0\0\0"
    if zlib.crc32(zeroed) != crc:
        return [f"CRC-32 mismatch: header says {crc:#010x}, the bytes give "
                f"{zlib.crc32(zeroed):#010x} (corrupted or half-written)"]
    zeroed[SHA_OFFSET:SHA_OFFSET + 32] = bytes(32)
    if hashlib.sha256(zeroed).digest() != data[SHA_OFFSET:SHA_OFFSET + 32]:
        return ["SHA-256 mismatch: the bytes were changed and the CRC-32 recomputed"]
    problems = []
    if kernel_set_id is not None and kset != kernel_set_id:
        problems.append(f"kernel set {kset:#010x}, the firmware's is {kernel_set_id:#010x}: "
                        "packed for another firmware (pack it with --firmware for this one)")
    for name, off, n in [("I/O table", io_off, 8 * (n_in + n_out)), ("op table", ops_off, ops_n),
                         ("parameter blocks", par_off, par_n), ("weights", w_off, w_n)]:
        if off + n > total:
            problems.append(f"{name} [{off}, {off + n}) ends past the blob's {total} bytes")
    if w_off % WEIGHTS_ALIGN:
        problems.append(f"weights offset {w_off} is not {WEIGHTS_ALIGN}-byte aligned")
    if state > ws or state % WEIGHTS_ALIGN or (state and image + state > w_n):
        problems.append(f"state of {state} bytes (reset image at weights offset {image}) is not "
                        f"16-byte sized, over the {ws}-byte workspace or past the weights")
    if problems:
        return problems
    for k in range(n_in + n_out):
        o, n = struct.unpack_from("<II", data, io_off + 8 * k)
        if o + n > ws:
            problems.append(f"I/O {k}: [{o}, {o + n}) outside the {ws}-byte workspace")
    pos, end = ops_off, ops_off + ops_n
    for i in range(n_ops):
        if pos + OP_BYTES > end:
            problems.append(f"op table entry {i} runs past the op table")
            break
        _, index, n = struct.unpack_from("<IHH", data, pos)
        if n > MAX_ARGS or pos + OP_BYTES + 8 * n > end:
            problems.append(f"op {index}: {n} arguments run past the op table or over {MAX_ARGS}")
            break
        for k in range(n):
            kind, value = struct.unpack_from("<II", data, pos + OP_BYTES + 8 * k)
            limits = {ARG_WORKSPACE: ws, ARG_WEIGHTS: w_n, ARG_PARAMS: par_n}
            limit = {ARG_NULL: 1, ARG_INT: 1 << 32, ARG_F32: 1 << 32, **limits}.get(kind)
            if limit is None:
                problems.append(f"op {index} argument {k}: unknown kind {kind}")
            elif kind == ARG_PARAMS and (
                    problem := _block_problem(data, par_off, par_n, value, pointer, limits)):
                problems.append(f"op {index} argument {k}: {problem}")
            elif value >= max(limit, 1):
                problems.append(f"op {index} argument {k}: {ARG_KIND_NAMES[kind]} offset {value} "
                                f"past its {limit} bytes")
        pos += OP_BYTES + 8 * n
    return problems
