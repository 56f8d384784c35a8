"""Pack a compiled model into a blob for one kernel set.

The parameter structs must have exactly the layout the firmware's compiler gives them, so they
are not laid out here: the model's generated C is compiled with the firmware's compiler and
flags into object files, and each constant a kernel call names is read from them (pyelftools) —
its bytes, and its pointer fields from the relocations (a field pointing at a weights array
becomes "weights base + offset", one pointing into the workspace "workspace base + offset", one
pointing at another parameter struct "that block", each set by the runner before the call).

An op's local constants (a CONV_2D+ADD's residual struct, a concatenation's input list) are
compiled the same way: each is appended to the model's C file as a file-scope constant, its
``ws``/``st`` addresses rewritten against an external symbol standing for the workspace's base.

A model's state (variable tensors) is placed at the end of its workspace, after the
activations; its reset image goes into the weights.
"""

from __future__ import annotations

import re
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from microbuild.blob.calls import KernelCall, kernel_calls
from microbuild.blob.format import (
    ARG_F32, ARG_INT, ARG_NULL, ARG_PARAMS, ARG_WEIGHTS, ARG_WORKSPACE, WEIGHTS_ALIGN, Blob,
    BlobArg, BlobError, BlobOp, ParamBlock, params_section, write_blob)
from microbuild.blob.kernel_set import KernelSet, kernel_id
from microbuild.compiler.compiled_model import CompiledModel

# The relocation types that store a symbol's absolute address in a pointer field.
_ABSOLUTE = {"EM_X86_64": {1}, "EM_ARM": {2}, "EM_AARCH64": {257}, "EM_386": {1},
             "EM_RISCV": {1, 2}}
# The external symbol the op's local constants address the workspace through.
WORKSPACE_SYMBOL = "mb_table_ws_base"
LOCAL_PREFIX = "mb_table_local_"


def _align16(n: int) -> int:
    return (n + 15) // 16 * 16


def blob_workspace_bytes(model: CompiledModel) -> int:
    """The workspace a model's blob needs: its activations, then its state (16-aligned)."""
    return _align16(model.workspace_bytes) + _align16(model.state_bytes)


def _state_at(model: CompiledModel) -> int:
    return _align16(model.workspace_bytes)


def _state_image(model: CompiledModel) -> bytes:
    """The state's bytes after a reset, as ``<prefix>_reset`` writes them."""
    image = bytearray(_align16(model.state_bytes))
    for t in model.state_tensors():
        at, n = t["offset"], t["bytes"]
        image[at:at + n] = (bytes.fromhex(t["initial"]) if "initial" in t
                            else bytes([t["fill"] & 0xFF]) * n)
    return bytes(image)


def _local_name(op_index: int, name: str) -> str:
    return f"{LOCAL_PREFIX}op{op_index}_{name}"


def _locals_c(model: CompiledModel, calls: list[list[KernelCall]]) -> str:
    """The ops' local constants as file-scope definitions, appended to the model's C file."""
    state = f"({WORKSPACE_SYMBOL} + {_state_at(model)})"
    lines = [f"extern uint8_t {WORKSPACE_SYMBOL}[];"]
    for op, op_calls in zip(model.ops, calls):
        for local in {c.name: c for call in op_calls for c in call.locals}.values():
            init = re.sub(r"\bws\b", WORKSPACE_SYMBOL, local.init)
            init = re.sub(r"\bst\b", state, init)
            lines.append(f"{local.declaration} {_local_name(op['index'], local.name)}"
                         f"{local.dims} __attribute__((used)) = {init};")
    return "\n" + "\n".join(lines) + "\n"


@dataclass
class _Constant:
    data: bytes
    pointers: list[tuple[int, str, int]]  # (field offset, target symbol, addend)
    defined_here: bool  # a static of the model's own file (a parameter block), else weights


def _constants(obj: Path) -> tuple[dict[str, _Constant], int, str]:
    """Every defined data symbol of an object file, the pointer size and the machine."""
    found: dict[str, _Constant] = {}
    with obj.open("rb") as f:
        elf = ELFFile(f)
        if not elf.little_endian:
            raise BlobError(f"{obj}: big-endian targets are not supported by blobs yet")
        machine = elf["e_machine"]
        pointer = 8 if elf.elfclass == 64 else 4
        symtab = elf.get_section_by_name(".symtab")
        # A relocation against a section (as compilers write one to a file's own statics) is
        # named by the symbol at its addend.
        by_place = {(s["st_shndx"], s["st_value"]): s.name for s in symtab.iter_symbols()
                    if s["st_info"]["type"] == "STT_OBJECT" and isinstance(s["st_shndx"], int)}
        relocs: dict[int, list[tuple[int, str, int, int]]] = {}
        for section in elf.iter_sections():
            if not isinstance(section, RelocationSection):
                continue
            table = elf.get_section(section["sh_link"])
            for r in section.iter_relocations():
                sym = table.get_symbol(r["r_info_sym"])
                addend = r["r_addend"] if r.is_RELA() else None
                relocs.setdefault(section["sh_info"], []).append(
                    (r["r_offset"], sym, r["r_info_type"], addend))
        for sym in symtab.iter_symbols():
            if sym["st_info"]["type"] != "STT_OBJECT" or not isinstance(sym["st_shndx"], int):
                continue
            section = elf.get_section(sym["st_shndx"])
            start, size = sym["st_value"], sym["st_size"]
            data = (bytes(size) if section["sh_type"] == "SHT_NOBITS"
                    else section.data()[start:start + size])
            data = bytearray(data)
            pointers = []
            for offset, rsym, rtype, addend in relocs.get(sym["st_shndx"], []):
                if not start <= offset < start + size:
                    continue
                at = offset - start
                if addend is None:  # REL: the addend is the field's stored value
                    addend = int.from_bytes(data[at:at + pointer], "little", signed=True)
                target = rsym.name
                if rsym["st_info"]["type"] == "STT_SECTION":
                    target = by_place.get((rsym["st_shndx"], addend), "")
                    addend = 0
                if rtype not in _ABSOLUTE.get(machine, set()) or not target:
                    raise BlobError(f"{sym.name}: a field at byte {at} holds an address the "
                                    f"packer cannot express (relocation type {rtype} against "
                                    f"{target or 'a section'})")
                data[at:at + pointer] = bytes(pointer)
                pointers.append((at, target, addend))
            found[sym.name] = _Constant(bytes(data), pointers,
                                        sym["st_info"]["bind"] == "STB_LOCAL"
                                        or sym.name.startswith(LOCAL_PREFIX))
    return found, pointer, machine


def _compile(model: CompiledModel, calls: list[list[KernelCall]], cc: Sequence[str],
             workdir: Path) -> dict[str, _Constant]:
    model.write(workdir)
    with (workdir / f"{model.prefix}.c").open("a") as f:
        f.write(_locals_c(model, calls))
    constants: dict[str, _Constant] = {}
    for name in (f"{model.prefix}.c", f"{model.prefix}_weights.c"):
        obj = workdir / (name + ".o")
        command = [*cc, "-c", "-O0", f"-I{workdir}",
                   *(f"-I{d}" for d in model.include_dirs), str(workdir / name), "-o", str(obj)]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise BlobError(f"compiling {name} to read its constants failed:\n$ "
                            f"{' '.join(command)}\n{result.stderr}")
        found, pointer, _ = _constants(obj)
        constants.update(found)  # the model's statics (local) and the weights (global)
        constants["\0pointer"] = _Constant(struct.pack("<I", pointer), [], False)
    return constants


def pack_model(model: CompiledModel, kernels: KernelSet, board: str,
               cc: Sequence[str] = ("gcc",), workspace_limit: int | None = None,
               sequence: int = 0) -> bytes:
    """The blob of ``model`` for a firmware linking ``kernels``, compiled with ``cc`` (the
    firmware's compiler and its ABI flags); ``sequence`` orders blobs in a board's model slots
    (the firmware runs the valid one with the highest). Refused, with the list, when the model
    calls a kernel the set lacks or needs more than ``workspace_limit`` bytes of workspace."""
    calls = kernel_calls(model)
    needed = KernelSet()
    for op_calls in calls:
        for call in op_calls:
            needed.add(call)
    problems = [f"kernel {m} is not in the firmware's kernel set" for m in kernels.missing(needed)]
    workspace = blob_workspace_bytes(model)
    if workspace_limit is not None and workspace > workspace_limit:
        problems.append(f"needs {workspace} bytes of workspace, the firmware reserved "
                        f"{workspace_limit} ({workspace - workspace_limit} over)")
    if problems:
        raise BlobError(f"model {model.prefix} cannot run on this firmware:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    with tempfile.TemporaryDirectory(prefix="mb-pack-") as tmp:
        constants = _compile(model, calls, cc, Path(tmp))
    pointer = struct.unpack("<I", constants.pop("\0pointer").data)[0]
    state_at = _state_at(model)

    weights, weight_at = bytearray(), {}

    def add_weights(data: bytes) -> int:
        weights.extend(bytes(-len(weights) % WEIGHTS_ALIGN))
        at = len(weights)
        weights.extend(data)
        return at

    def weights_offset(name: str) -> int:
        if name not in weight_at:
            const = constants.get(name)
            if const is None or const.defined_here:
                raise BlobError(f"{name} is not one of {model.prefix}'s constant arrays")
            weight_at[name] = add_weights(const.data)
        return weight_at[name]

    blocks: list[ParamBlock] = []
    block_of: dict[str, int] = {}

    def block(name: str) -> int:
        """The index of the parameter block of constant ``name`` (its pointer fields' values
        are block indexes for ARG_PARAMS until the section is laid out)."""
        if name not in block_of:
            const = constants[name]
            fields = []
            for at, target, add in const.pointers:
                if target == WORKSPACE_SYMBOL:
                    fields.append((at, ARG_WORKSPACE, add))
                elif target in constants and constants[target].defined_here:
                    if add != 0 or constants[target].pointers:
                        raise BlobError(f"{name}: the field at byte {at} points into {target}, "
                                        "which blobs carry only as a whole struct without "
                                        "pointers")
                    fields.append((at, ARG_PARAMS, block(target)))
                else:
                    fields.append((at, ARG_WEIGHTS, weights_offset(target) + add))
            block_of[name] = len(blocks)
            blocks.append(ParamBlock(const.data, tuple(fields)))
        return block_of[name]

    ops = []
    for op, op_calls in zip(model.ops, calls):
        for call in op_calls:
            args = []
            for a in call.args:
                if a.kind == "null":
                    args.append(BlobArg(ARG_NULL, 0))
                elif a.kind == "workspace":
                    args.append(BlobArg(ARG_WORKSPACE, a.offset))
                elif a.kind == "state":
                    args.append(BlobArg(ARG_WORKSPACE, state_at + a.offset))
                elif a.kind == "int":
                    args.append(BlobArg(ARG_INT, a.value & 0xFFFFFFFF))
                elif a.kind == "float":
                    args.append(BlobArg(ARG_F32, a.value))
                elif a.kind == "local":
                    args.append(BlobArg(ARG_PARAMS, block(_local_name(op["index"], a.name))))
                elif a.name in constants and constants[a.name].defined_here:
                    args.append(BlobArg(ARG_PARAMS, block(a.name)))
                elif a.name in constants:
                    args.append(BlobArg(ARG_WEIGHTS, weights_offset(a.name)))
                else:
                    raise BlobError(f"op {op['index']} {op['opcode']}: {call.function} is passed "
                                    f"{a.name}, which is no constant of {model.prefix}")
            ops.append(BlobOp(kernel_id(call.function), op["index"], tuple(args),
                              kernels.index(call.function)))
    state_image = add_weights(_state_image(model)) if model.state_bytes else 0
    # Lay the blocks out, then point the fields that name a block at its offset.
    _, offsets = params_section(blocks)
    blocks = [ParamBlock(b.data, tuple((at, kind, offsets[v] if kind == ARG_PARAMS else v)
                                       for at, kind, v in b.pointers)) for b in blocks]
    params, offsets = params_section(blocks)
    ops = [BlobOp(o.kernel_id, o.model_op,
                  tuple(BlobArg(a.kind, offsets[a.value]) if a.kind == ARG_PARAMS else a
                        for a in o.args), o.kernel_index) for o in ops]
    locations = model.plan.locations
    blob = Blob(kernel_set_id=kernels.id, board=board, workspace_bytes=workspace,
                pointer_bytes=pointer, sequence=sequence,
                inputs=[(locations[s.tensor].offset, s.bytes) for s in model.inputs],
                outputs=[(locations[s.tensor].offset, s.bytes) for s in model.outputs],
                ops=ops, params=params, weights=bytes(weights),
                state_bytes=_align16(model.state_bytes), state_image=state_image)
    return write_blob(blob)
