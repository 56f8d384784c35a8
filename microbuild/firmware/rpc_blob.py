"""An RPC firmware with the table runner (issue 31): besides its models' AOT code, which the host
drives as in any RPC firmware, it links a kernel set and a RAM slot, so the host can upload a
model blob and run it at once (`microbuild run --blob`, docs/rpc-protocol.md BLOB_LOAD and
BLOB_RUN), trying models without flashing.

The RAM slot is the RPC arena's ALLOC pool: the host allocates the blob and its workspace there.
Its size is a build option (``blob_slot``), by default room for a model as large as the largest
``kernels_for`` one; the pool is in the arena, so the link's fit check covers it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from microbuild.blob import KernelSet
from microbuild.blob.host import THUNKS
from microbuild.blob.pack import blob_workspace_bytes
from microbuild.boards import Board, resolve_board
from microbuild.errors import MicrobuildError
from microbuild.firmware.note import add_note, read_note
from microbuild.firmware.table import compile_for_table
from microbuild.firmware.toolchains import toolchain_setup
from microbuild.paths import runtime_dir

# Beyond the largest kernels_for model's blob and workspace, what the default slot leaves for
# a somewhat larger model (a quarter more) and for the blob's tables; rounded up to 4 KiB.
_SLOT_SPARE = 1.25
_SLOT_ROUND = 4096


def default_slot_bytes(model_bytes: Sequence[int], workspaces: Sequence[int]) -> int:
    """Room for a blob about as large as the largest model file (a blob holds its weights, as
    the .tflite does) and its workspace, with a quarter to spare."""
    need = int((max(model_bytes) + max(workspaces)) * _SLOT_SPARE) + _SLOT_ROUND
    return -(-need // _SLOT_ROUND) * _SLOT_ROUND


def build_rpc_blob_firmware(board: str | Path | Board, kernels_for: Sequence[str | Path],
                            out_dir: str | Path, blob_slot: int | None = None,
                            toolchain: str | None = None, jobs: int | None = None):
    """An RPC firmware running the ``kernels_for`` models (AOT) with their kernel set and a RAM
    slot of ``blob_slot`` bytes for uploaded blobs. Returns the FirmwareBuild; its ELF's note
    records the kernel set (as a table firmware's), so `microbuild pack --firmware` packs for it."""
    # Imported here: build_firmware pulls in the SCons front end.
    from microbuild.firmware.build import build_firmware

    board = resolve_board(board)
    if not kernels_for:
        raise MicrobuildError("an RPC firmware that runs model blobs needs the models its "
                              "kernels are chosen for: --kernels-for a.tflite [b.tflite ...]")
    compiled = [compile_for_table(board, m) for m in kernels_for]
    kernels = KernelSet.for_models(compiled)
    workspaces = [blob_workspace_bytes(c) for c in compiled]
    if blob_slot is None:
        blob_slot = default_slot_bytes([Path(m).stat().st_size for m in kernels_for], workspaces)
    elif blob_slot < 4096:
        raise MicrobuildError(f"--blob-slot {blob_slot}: a RAM slot of under 4 KiB holds no "
                              "useful model; give at least 4K")
    generated = Path(out_dir) / "table"
    generated.mkdir(parents=True, exist_ok=True)
    (generated / THUNKS).write_text(kernels.c_source())
    runtime = runtime_dir()
    build = build_firmware(
        board, list(kernels_for), out_dir, executor="rpc", toolchain=toolchain, jobs=jobs,
        row_stream=False, rpc_pool=blob_slot,
        sources=[runtime / "table" / "mb_table.c", runtime / "table" / "rpc_runner.c",
                 generated / THUNKS],
        include_dirs=[generated])
    setup = toolchain_setup(board, toolchain)
    # Packing for this firmware needs the kernel set; its workspace limit is the whole slot
    # (the blob and its workspace share it: `run --blob` checks the sum).
    table = {**kernels.describe(), "headers": list(kernels.headers),
             "sources": list(kernels.sources), "workspace_bytes": blob_slot, "rpc_slot": blob_slot}
    linked = read_note(build.elf)
    add_note(build.elf, board.name, linked.models if linked else [], "rpc", setup.family,
             setup.objcopy or "objcopy", table)
    return build
