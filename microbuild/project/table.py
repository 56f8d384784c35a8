"""The table executor in generated projects (issue 31, docs/model-blob.md).

A table project links the kernel set the project's models call (as `microbuild build --executor
table --kernels-for` chooses it), the table runner (runtime/table/) and, on an embedded board,
the board's model slots (memory.placement.model_slots) as defines in generated/mb_table_slots.h.
The models themselves are data: each is packed now into model/<prefix>.mbm, and the project's
own build never compiles them to C. Its build adds the firmware's ``.note.microbuild`` (kernel
set and workspace) after linking, from generated/firmware.note, so that `microbuild pack
--firmware` and `microbuild update --firmware` work on the firmware the project builds as on one
microbuild built.
"""

from __future__ import annotations

import dataclasses
import json
import struct
from pathlib import Path
from typing import Any

from microbuild.blob import KernelSet, pack_model
from microbuild.blob.host import THUNKS
from microbuild.boards import Board
from microbuild.firmware.executors import Executor
from microbuild.firmware.note import SECTION, FirmwareNote, note_bytes
from microbuild.firmware.table import EXECUTOR as TABLE, slots_header
from microbuild.firmware.table import _check_board as check_table_board
from microbuild.firmware.toolchains import toolchain_setup
from microbuild.project.files import BOARD_DIR, GENERATED_DIR, MODEL_DIR

# The formats whose generators know the table executor (the others refuse it, saying so).
FORMATS = ("make", "scons", "platformio", "zephyr")
NOTE_FILE = f"{GENERATED_DIR}/firmware.note"
SLOTS_HEADER = "mb_table_slots.h"
# The build id a project's note carries: the project's build computes none (make runs no
# microbuild), and `pack` / `update` read only the board, executor and kernel set.
PROJECT_BUILD_ID = "0" * 16

# What `generate --executor table` finds before the models are compiled: the board-specific main
# and the kernel set come in table_executor().
PLACEHOLDER = Executor(
    name=TABLE,
    description="models as data: links the kernels the given models call and runs a model "
                "blob (`microbuild pack`), from the board's model slots or, on the host, a file",
    main="table/host_main.c", zephyr_main="main_table.c", runtime_sources=("table/mb_table.c",),
    table_file=THUNKS, table=lambda *args, **kwargs: "", embeds_inputs=False, formats=FORMATS)


def check_board(board: Board) -> None:
    """An embedded board needs model slots to read blobs from (the check `build` makes)."""
    check_table_board(board)


def table_executor(board: Board, compiled: dict[str, Any]) -> Executor:
    """The table executor for ``board`` and the project's models (prefix -> CompiledModel,
    compiled without row streaming): its main reads the board's slots (or, on the host, a blob
    file), and its generated table is the kernel set's thunks."""
    kernels = KernelSet.for_models(compiled.values())
    return dataclasses.replace(
        PLACEHOLDER, main="table/host_main.c" if board.is_host else "table/slots_main.c",
        runtime_sources=(*PLACEHOLDER.runtime_sources, *kernels.sources),
        table=lambda *args, **kwargs: kernels.c_source())


def kernel_headers(compiled: dict[str, Any]) -> list[str]:
    """The kernel set's headers (relative to runtime/), which the generated thunks include: a
    project copying only the runtime files its sources include needs them too."""
    return [f"include/{h}" for h in KernelSet.for_models(compiled.values()).headers]


def workspace_bytes(compiled: dict[str, Any]) -> int:
    """The workspace the firmware reserves: the largest of its models' (as build does)."""
    return max(model.workspace_bytes for model in compiled.values())


def add_table_files(spec, files) -> list[str]:
    """Add generated/mb_table_slots.h (embedded boards), generated/firmware.note and each model
    packed as model/<prefix>.mbm (and, on the host, model/<prefix>.inputs.bin: the fixed input
    pattern slots_main.c uses, for `make run`); returns the compiler flags the table sources
    need beyond the board's."""
    board = spec.board
    kernels = KernelSet.for_models(spec.compiled.values())
    workspace = workspace_bytes(spec.compiled)
    setup = toolchain_setup(board, spec.toolchain)
    table = {**kernels.describe(), "headers": list(kernels.headers),
             "sources": list(kernels.sources), "workspace_bytes": workspace}
    note = FirmwareNote(board.name, PROJECT_BUILD_ID, [], TABLE, setup.family, table)
    files.add(NOTE_FILE, note_bytes(note))
    for prefix, model in spec.compiled.items():
        # Sequence 1: generating twice gives the same bytes; `pack --sequence` sets newer ones.
        files.add(f"{MODEL_DIR}/{prefix}.mbm",
                  pack_model(model, kernels, board.name, cc=[setup.cc, *setup.cflags],
                             workspace_limit=workspace, sequence=1))
        if board.is_host:
            files.add(f"{MODEL_DIR}/{prefix}.inputs.bin", fixed_inputs(model))
    if board.is_host:
        return [f"-DMB_TABLE_WORKSPACE_BYTES={workspace}u"]
    files.add(f"{GENERATED_DIR}/{SLOTS_HEADER}", slots_header(board, workspace))
    return []


def fixed_inputs(model) -> bytes:
    """The inputs' bytes in order, byte i of input k being (i * 37 + k + 5) mod 256: the pattern
    runtime/table/slots_main.c feeds, so host and board runs of one blob print the same."""
    return b"".join(bytes((i * 37 + k + 5) & 0xFF for i in range(spec.bytes))
                    for k, spec in enumerate(model.inputs))


# The name slots_main.c's main() takes in a Zephyr application, whose src/main.c (the template
# zephyr/main_table.c) sets up the console and calls it.
ZEPHYR_SLOTS_MAIN = "mb_table_slots_main"


def zephyr_overlay(board: Board) -> str:
    """app.overlay: the board's model slots in the Zephyr way. A slot in the region the board
    places code in (its flash) becomes a fixed partition of Zephyr's flash (`&flash0`), so that
    Zephyr's flash map and tools know the bytes are not the image's; a slot elsewhere (external
    RAM Zephyr does not use) needs no devicetree node, and a comment says where it is."""
    code_region = board.placement.get("text")
    origin = board.regions[code_region].origin if code_region in board.regions else 0
    partitions, elsewhere = [], []
    for k, slot in enumerate(board.model_slots):
        if slot.region == code_region:
            offset = slot.address - origin
            partitions += [f"\t\tmb_model_slot{k}: partition@{offset:x} {{",
                           f'\t\t\tlabel = "microbuild-model-slot-{k}";',
                           f"\t\t\treg = <{offset:#x} {slot.size:#x}>;", "\t\t};"]
        else:
            elsewhere.append(f" * model slot {k}: {slot.region} {slot.address:#010x}, "
                             f"{slot.size:,} bytes (no node: Zephyr places nothing there)")
    lines = ["/* The model slots of board " + board.name + " (memory.placement.model_slots), "
             "generated by microbuild;",
             " * regenerating replaces this file. The firmware reads them at the addresses in",
             " * modules/microbuild/generated/mb_table_slots.h; `microbuild update` writes blobs "
             "there.", *elsewhere, " */"]
    if partitions:
        lines += ["&flash0 {", "\tpartitions {", '\t\tcompatible = "fixed-partitions";',
                  "\t\t#address-cells = <1>;", "\t\t#size-cells = <1>;", "",
                  *partitions, "\t};", "};"]
    return "\n".join(lines) + "\n"


def zephyr_note_step() -> str:
    """The lines of a Zephyr application's CMakeLists.txt that put the firmware note into
    zephyr.elf after Zephyr's final link, as a Make project's post-link objcopy does."""
    return "\n".join([
        "",
        "# The table executor's firmware note (kernel set, workspace: generated/firmware.note),",
        "# added to zephyr.elf after the link so that `microbuild pack --firmware` and `microbuild",
        "# update --firmware` read it from build/zephyr/zephyr.elf.",
        "function(microbuild_note_step)",
        "  if(TARGET zephyr_final)",
        "    add_custom_command(TARGET zephyr_final POST_BUILD",
        f"      COMMAND ${{CMAKE_OBJCOPY}} --remove-section {SECTION} --add-section",
        f"              {SECTION}=${{CMAKE_CURRENT_SOURCE_DIR}}/{NOTE_FILE}",
        "              $<TARGET_FILE:zephyr_final>",
        '      COMMENT "microbuild: firmware note (kernel set) into zephyr.elf"',
        "      VERBATIM)",
        "  endif()",
        "endfunction()",
        "cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL microbuild_note_step)", ""])


def add_generated_sources(spec, files) -> list[str]:
    """generated/mb_table_kernels.c (the kernel set's thunks) and the files add_table_files
    writes; returns the compiler flags the table sources need beyond the board's."""
    files.add(f"{GENERATED_DIR}/{THUNKS}", spec.executor.table())
    return add_table_files(spec, files)


def read_project_note(path: str | Path) -> dict[str, Any]:
    """The note description (JSON) in a project's generated/firmware.note, which its SCons build
    reads the kernel set from."""
    data = Path(path).read_bytes()
    namesz, descsz = struct.unpack_from("<II", data)
    start = 12 + namesz + (-namesz % 4)
    return json.loads(data[start:start + descsz].decode())


def executor_from_note(board: Board, note: dict[str, Any]) -> Executor:
    """At build time (SCons): the table executor for the kernel set the project's note names."""
    table = note["table"]
    return dataclasses.replace(
        PLACEHOLDER, main="table/host_main.c" if board.is_host else "table/slots_main.c",
        runtime_sources=(*PLACEHOLDER.runtime_sources, *table["sources"]))


def build_flags(board: Board, note: dict[str, Any]) -> list[str]:
    """The flags add_table_files returned, again from the note (SCons builds)."""
    return ([f"-DMB_TABLE_WORKSPACE_BYTES={note['table']['workspace_bytes']}u"]
            if board.is_host else [])


def add_note_command(objcopy: str, target: str, note: str | Path = NOTE_FILE) -> str:
    """The shell command that puts the firmware note (``note``: the project's, relative to the
    folder the build runs in, or absolute) into ``target`` after linking."""
    return (f"{objcopy} --remove-section {SECTION} --add-section {SECTION}={note} "
            f"{target}")


def run_words(board: Board, prefix: str, run: list[str]) -> list[str]:
    """``run`` (the board's run command for the firmware) with the blob of model ``prefix``: on
    the host as the runner's argument (inputs on stdin, outputs in hex: shell words), on an
    emulated board written into model slot 0 by QEMU's loader device."""
    blob = f"{MODEL_DIR}/{prefix}.mbm"
    if board.is_host:
        return [*run, blob, "<", f"{MODEL_DIR}/{prefix}.inputs.bin", "|", "od", "-An", "-tx1",
                "-v"]
    address = board.model_slots[0].address
    return [*run, "-device", f"loader,file={blob},addr={address:#x},force-raw=on"]


def run_section(spec, firmware: str, run_line: str | None, flash_line: str | None) -> str:
    """The README's "Run" section: running the packed model, then packing another one and
    writing it into a slot (`microbuild pack` / `microbuild update`) without rebuilding."""
    board = spec.board
    prefix = next(iter(spec.compiled))
    slots = board.model_slots
    lines = []
    if run_line:
        where = ("runs the packed first model on the inputs in "
                 f"`{MODEL_DIR}/{prefix}.inputs.bin` and prints the outputs' bytes in hex"
                 if board.is_host else
                 f"boots it with `{MODEL_DIR}/{prefix}.mbm` in model slot 0 (QEMU's loader "
                 "device); the firmware checks every slot, runs the newest valid blob on a fixed "
                 "input pattern and prints `mb-table output` lines")
        lines += [f"```sh\n{run_line}\n```\n", f"{where}.\n"]
    elif flash_line:
        lines += [f"```sh\n{flash_line}\n```\n",
                  "flashes the firmware; the model is not in it: write a blob into a slot "
                  "(below).\n"]
    lines += ["The firmware holds the kernels the models in `model/` call, not the models: "
              "every `model/*.mbm` (packed when the project was generated) runs on it, and so "
              "does any other model that needs only those kernels, packed against the firmware "
              "you built:\n",
              f"```sh\nmicrobuild pack --firmware {firmware} --model other.tflite -o "
              "other.mbm\n```\n",
              "A model needing a kernel the firmware lacks, or more workspace than it reserves, "
              "is refused there with the list of what is missing.\n"]
    if board.is_host:
        lines += [f"```sh\n{firmware} other.mbm < inputs.bin > outputs.bin\n```\n",
                  "runs it: the inputs' bytes in, the outputs' bytes out, once per input set.\n"]
    else:
        where = ", ".join(f"{s.region} {s.address:#010x} ({s.size:,} bytes)" for s in slots)
        slot_arg = " --slot 1" if len(slots) > 1 else ""
        lines += [f"The board's model slots ({where}) are in `generated/{SLOTS_HEADER}`. Write "
                  "a blob into one without reflashing the firmware:\n",
                  f"```sh\nmicrobuild update --board {BOARD_DIR}/{board.name}.yaml --firmware "
                  f"{firmware} --blob other.mbm{slot_arg}\n```\n",
                  ("(with two slots, write the one not running now: an interrupted write "
                   "leaves the other to fall back to). " if len(slots) > 1 else "")
                  + ("On this emulated board `update` boots the firmware with the blob in the "
                     "slot and prints its console." if board.is_emulated else
                     "`update` writes it with the board's flash runner (`--runner` picks "
                     "another).") + "\n"]
    return "\n".join(lines)
