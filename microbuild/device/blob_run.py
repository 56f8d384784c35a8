"""`microbuild run --blob`: upload a model blob into an RPC firmware's RAM slot and run it at once
(docs/rpc-protocol.md, BLOB_LOAD and BLOB_RUN), for trying a model without flashing.

The host checks the blob first (microbuild.blob.check_blob: valid, packed for this firmware's
kernel set, fits the slot), so what it can tell is said before anything is sent; the device
checks it again with the firmware's own validator (mb_table_check) before it runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from microbuild.blob.format import BlobError, read_blob
from microbuild.device.device import Device
from microbuild.device.errors import RpcError
from microbuild.device.rpc.protocol import Status
from microbuild.errors import MicrobuildError

_ALIGN = 16  # the blob's weights' alignment, and the workspace's


def _align(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


@dataclass
class BlobRun:
    outputs: list[bytes]  # each output's bytes, in the blob's order
    ticks: int            # BLOB_RUN's ticks at the device's timer frequency


def slot_bytes(description: dict) -> int:
    """The RAM slot of the RPC firmware ``description`` (<firmware>.rpc.json) tells: the arena's
    ALLOC pool."""
    arena = description["arena"]
    return int(arena["arena_bytes"]) - int(arena["pool_offset"])


def check_for_firmware(description: dict, data: bytes, kernel_set_id: int | None, name: str):
    """The parsed blob, or a MicrobuildError saying why the RPC firmware ``description`` tells of
    cannot run it: said before the firmware is even started."""
    try:
        blob = read_blob(data, kernel_set_id)
    except BlobError as err:
        raise MicrobuildError(f"{name} cannot run on this firmware: {err}") from None
    board = description["board"]
    if blob.board != board:
        raise MicrobuildError(f"{name} was packed for board {blob.board}, not {board}: "
                              "pack it with --firmware for this firmware")
    need, slot = _align(len(data)) + blob.workspace_bytes, slot_bytes(description)
    if need > slot:
        raise MicrobuildError(
            f"{name} is too large for the firmware's RAM slot by {need - slot:,} bytes: it needs "
            f"{need:,} ({len(data):,} of blob and {blob.workspace_bytes:,} of workspace), the "
            f"slot holds {slot:,}; build the firmware with --blob-slot {need} or more")
    return blob


def run_blob(dev: Device, data: bytes, inputs: list[bytes], kernel_set_id: int | None = None,
             name: str = "the blob") -> BlobRun:
    """Upload ``data`` (a .mbm's bytes) into the RAM slot, have the device check it, write
    ``inputs`` (one bytes per blob input) and run it once; the slot is freed afterwards."""
    blob = check_for_firmware(dev.description, data, kernel_set_id, name)
    if len(inputs) != len(blob.inputs):
        raise MicrobuildError(f"{name} has {len(blob.inputs)} inputs, {len(inputs)} were given")
    for k, ((_, size), x) in enumerate(zip(blob.inputs, inputs)):
        if len(x) != size:
            raise MicrobuildError(f"{name}: input {k} takes {size} bytes, got {len(x)}")
    client = dev.client
    at = client.alloc(len(data), _ALIGN)
    try:
        workspace = client.alloc(max(blob.workspace_bytes, 1), _ALIGN)
        try:
            client.write(at, data)
            try:
                client.blob_load(at, len(data), workspace, blob.workspace_bytes)
            except RpcError as err:
                if err.status in (Status.BAD_BLOB, Status.UNKNOWN_OPCODE):
                    raise MicrobuildError(f"{name}: the device refused it: {err.device_message}"
                                          ) from None
                raise
            for (offset, _), x in zip(blob.inputs, inputs):
                client.write(workspace + offset, x)
            status, ticks = client.blob_run()
            if status != 0:
                raise MicrobuildError(f"{name} returned {status} on the device")
            outputs = [client.read(workspace + offset, size) for offset, size in blob.outputs]
        finally:
            client.free(workspace)
    finally:
        client.free(at)
    return BlobRun(outputs, ticks)


def blob_inputs(data: bytes, input_file: str | Path | None, seed: int) -> list[bytes]:
    """The bytes of each blob input: from a .npy (one input) or .npz (``input0``, ``input1``...,
    or its arrays in order), else seeded random bytes."""
    sizes = [size for _, size in read_blob(data).inputs]
    if input_file is None:
        rng = np.random.default_rng(seed)
        return [rng.integers(0, 256, size, dtype=np.uint8).tobytes() for size in sizes]
    loaded = np.load(input_file)
    if isinstance(loaded, np.ndarray):
        arrays = [loaded]
    else:
        keys = [f"input{k}" for k in range(len(sizes))]
        arrays = [loaded[k] for k in keys] if all(k in loaded for k in keys) else \
            [loaded[k] for k in loaded.files]
    return [np.ascontiguousarray(a).tobytes() for a in arrays]
