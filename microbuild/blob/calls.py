"""The seam between the AOT code generator and the table executor: each op's generated C is one
kernel call, ``function(arg, ...);``, whose arguments are workspace addresses, null pointers,
constant arrays (weights, multipliers) and constant parameter structs. This module reads those
calls back from the compiled model (``CompiledModel.op_code``) so the packer can store them as
data; what is not such a call (a row-streamed region, model state) is refused by op.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from microbuild.blob.format import BlobError
from microbuild.compiler.compiled_model import CompiledModel

_CALL = re.compile(r"^\s*(?:/\*.*?\*/\s*)*([A-Za-z_]\w*)\((.*)\);\s*$", re.S)
_NULL = re.compile(r"^(?:\(\s*[\w\s]+\*\s*\)\s*)?(?:0|NULL)$")
_WORKSPACE = re.compile(r"^\(\s*[\w\s]+\*\s*\)\s*\(ws \+ (\d+)\)$")
_SYMBOL = re.compile(r"^&?(?:\(\s*[\w\s]+\*\s*\)\s*)*([A-Za-z_]\w*)$")


@dataclass(frozen=True)
class KernelArg:
    kind: str  # "null", "workspace" (value: offset) or "symbol" (name: a constant's C name)
    offset: int = 0
    name: str = ""


@dataclass(frozen=True)
class KernelCall:
    function: str
    args: tuple[KernelArg, ...]


def _split_args(text: str) -> list[str]:
    args, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        args.append(text[start:].strip())
    return args


def _arg(text: str) -> KernelArg | None:
    if _NULL.match(text):
        return KernelArg("null")
    if m := _WORKSPACE.match(text):
        return KernelArg("workspace", offset=int(m.group(1)))
    if m := _SYMBOL.match(text):
        return KernelArg("symbol", name=m.group(1))
    return None


def kernel_calls(model: CompiledModel) -> list[list[KernelCall]]:
    """Per op, its kernel calls (one; none for an op that needs no code). Raises BlobError
    naming every op whose code is something else."""
    problems, calls = [], []
    if model.state_bytes:
        problems.append(f"the model keeps {model.state_bytes} bytes of state between "
                        "invocations (variable tensors), which blobs do not carry yet")
    if len(model.plan.regions) > 1:
        problems.append("the workspace is split across memory regions, which blobs do not "
                        "carry yet: give the board one workspace region large enough")
    for op, code in zip(model.ops, model.op_code):
        where = f"op {op['index']} {op['opcode']}"
        statements = [s for s in code.strip().splitlines() if s.strip()]
        if not statements or all(s.strip().startswith("/*") for s in statements):
            if "streamed" in code:
                problems.append(f"{where}: runs row by row with other ops; pack with row "
                                "streaming off")
            calls.append([])
            continue
        m = _CALL.match(code.strip()) if len(statements) == 1 else None
        if m is None:
            first = next((s.strip() for s in statements if s.strip() not in "{}"), "")
            first = first if len(first) <= 60 else first[:57] + "..."
            problems.append(f"{where}: its code is {len(statements)} lines, not one kernel call "
                            f"(it starts `{first}`)")
            calls.append([])
            continue
        args = []
        for k, text in enumerate(_split_args(m.group(2))):
            arg = _arg(text)
            if arg is None:
                problems.append(f"{where}: argument {k} of {m.group(1)} ({text}) is neither a "
                                "workspace address, a constant nor a null pointer")
            args.append(arg)
        calls.append([KernelCall(m.group(1), tuple(args))])
    if problems:
        raise BlobError(f"model {model.prefix} cannot be packed as a blob:\n"
                        + "\n".join(f"  - {p}" for p in problems)
                        + "\nblobs carry only ops whose code is one kernel call, so far "
                          "(docs/model-blob.md); run this model with --executor aot")
    return calls
