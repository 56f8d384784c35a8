"""The table executor's firmware and `pack` (issue 31, docs/model-blob.md).

``build_table_firmware`` links the kernels a list of models needs (the kernel set) with the
table runner, and records the set and the workspace it reserves in the ELF's
``.note.microbuild``; ``pack_for_firmware`` reads them back to pack another model against that
firmware, refusing at pack time what it could not run. The host board only, so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from microbuild.blob import KernelSet, pack_model
from microbuild.blob.host import build_host_runner
from microbuild.boards import Board, resolve_board
from microbuild.compiler import compile_model
from microbuild.compiler.c_names import model_prefix
from microbuild.compiler.compiled_model import CompiledModel
from microbuild.compiler.variants import Selection, Target
from microbuild.errors import MicrobuildError
from microbuild.firmware.note import add_note, read_note
from microbuild.firmware.toolchains import toolchain_setup
from microbuild.paths import runtime_dir

EXECUTOR = "table"


@dataclass
class TableFirmware:
    board: Board
    elf: Path
    toolchain: str
    kernels: KernelSet
    workspace_bytes: int
    code_bytes: dict[str, int]  # per source (kernels, runner, thunk table): .text + .rodata


def compile_for_table(board: Board, model: str | Path) -> CompiledModel:
    """A model compiled as a table firmware for ``board`` runs it: the board's kernel variants,
    and no row streaming (a streamed region is many calls per op, which blobs do not carry)."""
    return compile_model(model, prefix=model_prefix(model),
                         selection=Selection(Target.of_board(board)), row_stream=False)


def _host_only(board: Board) -> None:
    if not board.is_host:
        raise MicrobuildError(f"the table executor builds for the host board only so far, not "
                              f"{board.name} (issue 31): use --board host, or --executor aot")


def build_table_firmware(board: str | Path | Board, kernels_for: Sequence[str | Path],
                         out_dir: str | Path, toolchain: str | None = None) -> TableFirmware:
    """A table-executor firmware whose kernel set is what the ``kernels_for`` models call, with
    a workspace as large as the largest of theirs."""
    board = resolve_board(board)
    _host_only(board)
    if not kernels_for:
        raise MicrobuildError("the table executor needs the models its kernels are chosen for: "
                              "--kernels-for a.tflite [b.tflite ...]")
    compiled = [compile_for_table(board, m) for m in kernels_for]
    kernels = KernelSet.for_models(compiled)
    workspace = max(c.workspace_bytes for c in compiled)
    setup = toolchain_setup(board, toolchain)
    # The board toolchain's flags (the common ones, -std=c99 -Wall -Wextra, among them).
    cflags = [*setup.cflags, "-Werror", f"-DMB_TABLE_WORKSPACE_BYTES={workspace}u"]
    runner = build_host_runner(kernels, Path(out_dir), cc=[setup.cc], cflags=cflags)
    table = {**kernels.describe(), "headers": list(kernels.headers),
             "sources": list(kernels.sources), "workspace_bytes": workspace}
    add_note(runner.program, board.name, [], EXECUTOR, setup.family, "objcopy", table)
    return TableFirmware(board, runner.program, setup.family, kernels, workspace,
                         runner.code_bytes)


@dataclass
class PackedModel:
    blob: bytes
    path: Path
    workspace_bytes: int
    firmware_workspace_bytes: int
    ops: int


def pack_for_firmware(firmware: str | Path, model: str | Path, out: str | Path) -> PackedModel:
    """Pack ``model`` into ``out`` (.mbm) for the table firmware ``firmware`` (its ELF)."""
    note = read_note(firmware)
    if note is None or note.executor != EXECUTOR or not note.table:
        has = "no microbuild note" if note is None else f"the {note.executor} executor"
        raise MicrobuildError(f"{firmware} is not a table-executor firmware (it has {has}); "
                              "build one with `microbuild build --executor table`")
    table = note.table
    kernels = KernelSet(dict(table["functions"]), list(table["headers"]), list(table["sources"]),
                        runtime_dir())
    if f"{kernels.id:#010x}" != table["id"]:
        raise MicrobuildError(f"{firmware}'s kernel set {table['id']} was built from other kernel "
                              f"headers than this microbuild's ({kernels.id:#010x}): rebuild the "
                              "firmware with this microbuild, or pack with the one that built it")
    board = resolve_board(note.board)
    _host_only(board)
    setup = toolchain_setup(board, note.toolchain)
    compiled = compile_for_table(board, model)
    blob = pack_model(compiled, kernels, board.name, cc=[setup.cc, *setup.cflags],
                      workspace_limit=int(table["workspace_bytes"]))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(blob)
    return PackedModel(blob, out, compiled.workspace_bytes, int(table["workspace_bytes"]),
                       sum(1 for code in compiled.op_code if code.strip()))
