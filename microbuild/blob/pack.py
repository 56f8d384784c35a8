"""Pack a compiled model into a blob for one kernel set.

The parameter structs must have exactly the layout the firmware's compiler gives them, so they
are not laid out here: the model's generated C is compiled with the firmware's compiler and
flags into object files, and each constant a kernel call names is read from them (pyelftools) —
its bytes, and its pointer fields from the relocations (a field pointing at a weights array
becomes "weights base + offset", set by the runner before the call).
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from microbuild.blob.calls import kernel_calls
from microbuild.blob.format import (
    ARG_NULL, ARG_PARAMS, ARG_WEIGHTS, ARG_WORKSPACE, WEIGHTS_ALIGN, Blob, BlobArg, BlobError,
    BlobOp, ParamBlock, params_section, write_blob)
from microbuild.blob.kernel_set import KernelSet, kernel_id
from microbuild.compiler.compiled_model import CompiledModel

# The relocation types that store a symbol's absolute address in a pointer field.
_ABSOLUTE = {"EM_X86_64": {1}, "EM_ARM": {2}, "EM_AARCH64": {257}, "EM_386": {1},
             "EM_RISCV": {1, 2}}


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
        relocs: dict[int, list[tuple[int, str, int, int]]] = {}
        for section in elf.iter_sections():
            if not isinstance(section, RelocationSection):
                continue
            table = elf.get_section(section["sh_link"])
            for r in section.iter_relocations():
                sym = table.get_symbol(r["r_info_sym"])
                addend = r["r_addend"] if r.is_RELA() else None
                relocs.setdefault(section["sh_info"], []).append(
                    (r["r_offset"], sym.name, r["r_info_type"], addend))
        for sym in symtab.iter_symbols():
            if sym["st_info"]["type"] != "STT_OBJECT" or not isinstance(sym["st_shndx"], int):
                continue
            section = elf.get_section(sym["st_shndx"])
            start, size = sym["st_value"], sym["st_size"]
            data = (bytes(size) if section["sh_type"] == "SHT_NOBITS"
                    else section.data()[start:start + size])
            data = bytearray(data)
            pointers = []
            for offset, target, rtype, addend in relocs.get(sym["st_shndx"], []):
                if not start <= offset < start + size:
                    continue
                at = offset - start
                if rtype not in _ABSOLUTE.get(machine, set()) or not target:
                    raise BlobError(f"{sym.name}: a field at byte {at} holds an address the "
                                    f"packer cannot express (relocation type {rtype} against "
                                    f"{target or 'a section'})")
                if addend is None:  # REL: the addend is the field's stored value
                    addend = int.from_bytes(data[at:at + pointer], "little", signed=True)
                data[at:at + pointer] = bytes(pointer)
                pointers.append((at, target, addend))
            found[sym.name] = _Constant(bytes(data), pointers,
                                        sym["st_info"]["bind"] == "STB_LOCAL")
    return found, pointer, machine


def _compile(model: CompiledModel, cc: Sequence[str], workdir: Path) -> dict[str, _Constant]:
    model.write(workdir)
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
    if workspace_limit is not None and model.workspace_bytes > workspace_limit:
        problems.append(f"needs {model.workspace_bytes} bytes of workspace, the firmware reserved "
                        f"{workspace_limit} ({model.workspace_bytes - workspace_limit} over)")
    if problems:
        raise BlobError(f"model {model.prefix} cannot run on this firmware:\n"
                        + "\n".join(f"  - {p}" for p in problems))
    with tempfile.TemporaryDirectory(prefix="mb-pack-") as tmp:
        constants = _compile(model, cc, Path(tmp))
    pointer = struct.unpack("<I", constants.pop("\0pointer").data)[0]

    weights, weight_at = bytearray(), {}

    def weights_offset(name: str) -> int:
        if name not in weight_at:
            const = constants.get(name)
            if const is None or const.defined_here:
                raise BlobError(f"{name} is not one of {model.prefix}'s constant arrays")
            weights.extend(bytes(-len(weights) % WEIGHTS_ALIGN))
            weight_at[name] = len(weights)
            weights.extend(const.data)
        return weight_at[name]

    blocks, block_of, ops = [], {}, []
    for op, op_calls in zip(model.ops, calls):
        for call in op_calls:
            args = []
            for a in call.args:
                if a.kind == "null":
                    args.append(BlobArg(ARG_NULL, 0))
                elif a.kind == "workspace":
                    args.append(BlobArg(ARG_WORKSPACE, a.offset))
                elif a.name in constants and constants[a.name].defined_here:
                    if a.name not in block_of:
                        const = constants[a.name]
                        fields = tuple((at, weights_offset(t) + add)
                                       for at, t, add in const.pointers)
                        block_of[a.name] = len(blocks)
                        blocks.append(ParamBlock(const.data, fields))
                    args.append(BlobArg(ARG_PARAMS, block_of[a.name]))
                elif a.name in constants:
                    args.append(BlobArg(ARG_WEIGHTS, weights_offset(a.name)))
                else:
                    raise BlobError(f"op {op['index']} {op['opcode']}: {call.function} is passed "
                                    f"{a.name}, which is no constant of {model.prefix}")
            ops.append(BlobOp(kernel_id(call.function), op["index"], tuple(args)))
    params, offsets = params_section(blocks)
    ops = [BlobOp(o.kernel_id, o.model_op,
                  tuple(BlobArg(a.kind, offsets[a.value]) if a.kind == ARG_PARAMS else a
                        for a in o.args)) for o in ops]
    locations = model.plan.locations
    blob = Blob(kernel_set_id=kernels.id, board=board, workspace_bytes=model.workspace_bytes,
                pointer_bytes=pointer, sequence=sequence,
                inputs=[(locations[s.tensor].offset, s.bytes) for s in model.inputs],
                outputs=[(locations[s.tensor].offset, s.bytes) for s in model.outputs],
                ops=ops, params=params, weights=bytes(weights))
    return write_blob(blob)
