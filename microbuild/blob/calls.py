"""The seam between the AOT code generator and the table executor: each op's generated C is one
or more kernel calls, ``function(arg, ...);``, optionally in a block that first declares local
constants the calls take the address of (a CONV_2D+ADD's residual struct, a concatenation's input
list). Arguments are workspace and state addresses, null pointers, integer and float literals,
constant arrays (weights, multipliers), constant parameter structs and those locals. This module
reads the calls back from the compiled model (``CompiledModel.op_code``) so the packer can store
them as data; what is not such code is refused by op.

A row-streamed region (compiler/emitter.py's ``_emit_region``) is one function, called in its
first op's code, running the region's ops band by band: a call per band of rows to a small
static function (a band shape's kernel call on operands at workspace offsets given as
arguments) and a ``memmove`` keeping the rows still needed. Its schedule is fixed when the model
is compiled, so it is expanded here into the calls it makes, in order: each band call becomes
its function's kernel call with the offsets written in, each row move a ``memmove`` call. The
blob then holds the region's schedule as data and calls the very kernels the AOT code does.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from microbuild.blob.format import BlobError
from microbuild.compiler.compiled_model import CompiledModel

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CAST = r"(?:\(\s*[\w\s]+\*(?:\s*const)?\s*\)\s*)"
_CALL = re.compile(r"^([A-Za-z_]\w*)\((.*)\)$", re.S)
_NULL = re.compile(rf"^{_CAST}*(?:0|NULL)$")
_WORKSPACE = re.compile(rf"^{_CAST}*\((ws|st) \+ (\d+)\)$")
_SYMBOL = re.compile(rf"^&?{_CAST}*([A-Za-z_]\w*)$")
_INT = re.compile(r"^-?\d+[uUlL]*$")
_FLOAT = re.compile(r"^-?(?:0x[0-9a-fA-F.]+p[+-]?\d+|[\d.]+(?:e[+-]?\d+)?|INFINITY)f$")
_STREAMED = re.compile(r"^(\w+_streamed_ops_\d+_\d+)\(ws\)$")
_LOCAL = re.compile(r"^(const\s[^=]*?)\b([A-Za-z_]\w*)\s*((?:\[\s*\d*\s*\])*)\s*=\s*(\{.*\})$",
                    re.S)


@dataclass(frozen=True)
class KernelArg:
    # "null"; "workspace" or "state" (offset: in the workspace or the state buffer); "symbol"
    # (name: a constant's C name); "local" (name: one of the op's LocalConstants); "int"
    # (value); "float" (value: the float32's bits).
    kind: str
    offset: int = 0
    name: str = ""
    value: int = 0


@dataclass(frozen=True)
class LocalConstant:
    """A constant an op's block declares for its calls, e.g. ``const mb_residual_add_s8
    residual = {&op2_add, (int8_t *)(ws + 0)};``: ``declaration`` is the part before the name
    (``const mb_residual_add_s8``), ``dims`` any array brackets, ``init`` the initializer."""

    name: str
    declaration: str
    dims: str
    init: str


@dataclass(frozen=True)
class KernelCall:
    function: str
    args: tuple[KernelArg, ...]
    locals: tuple[LocalConstant, ...] = ()


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at each ``sep`` outside parentheses and braces, stripped, empties dropped."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _split_args(text: str) -> list[str]:
    return _split(text, ",")


def _float_bits(text: str) -> int:
    body = text[:-1]
    value = float("inf") if body.lstrip("-") == "INFINITY" else (
        float.fromhex(body) if "0x" in body else float(body))
    value = -abs(value) if body.startswith("-") else value
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _arg(text: str, local_names: set[str]) -> KernelArg | None:
    if _NULL.match(text):
        return KernelArg("null")
    if m := _WORKSPACE.match(text):
        return KernelArg("workspace" if m.group(1) == "ws" else "state", offset=int(m.group(2)))
    if _INT.match(text):
        value = int(text.rstrip("uUlL"))
        return KernelArg("int", value=value) if -2**31 <= value < 2**32 else None
    if _FLOAT.match(text):
        return KernelArg("float", value=_float_bits(text))
    if m := _SYMBOL.match(text):
        kind = "local" if m.group(1) in local_names else "symbol"
        return KernelArg(kind, name=m.group(1))
    return None


def _op_statements(code: str) -> list[str]:
    """The op's C statements, comments dropped and one enclosing block opened."""
    text = _COMMENT.sub(" ", code).strip()
    while text.startswith("{") and text.endswith("}") and len(_split(text, ";")) == 1:
        text = text[1:-1].strip()
    return _split(text, ";")


def _function_body(source: str, header: str) -> str:
    """The body of the function ``header`` (up to its parameter list's opening parenthesis)
    defines in generated C, whose closing brace is alone at the start of a line."""
    m = re.search(rf"^{re.escape(header)}\(.*?\)\n\{{\n(.*?)\n\}}$", source, re.S | re.M)
    if m is None:
        raise BlobError(f"generated code: no definition of {header.split()[-1]}")
    return m.group(1)


def _streamed_statements(model: CompiledModel, function: str) -> list[str]:
    """A row-streamed region's function expanded into the statements it runs, in order: each
    band call's kernel call(s) with the band's offsets written in (its local constants renamed
    per call: every band call declares its own), each row move a ``memmove`` on workspace
    addresses."""
    source = model.sources[f"{model.prefix}.c"]
    bands: dict[str, str] = {}
    statements = []
    for k, statement in enumerate(_op_statements(
            _function_body(source, f"static void {function}"))):
        m = _CALL.match(statement)
        args = _split_args(m.group(2)) if m else []
        if m and m.group(1) in ("memmove", "mb_move_rows"):  # the AOT code's row move
            statements.append("memmove(" + ", ".join(
                f"({a})" if a.startswith("ws + ") else a for a in args) + ")")
            continue
        if m is None or not args or args[0] != "ws":
            statements.append(statement)  # refused by the caller, quoted
            continue
        band = m.group(1)
        if band not in bands:
            bands[band] = _function_body(source, f"MB_BAND_FUNCTION {band}")
        body = re.sub(r"\bat(\d+)\b", lambda a: args[1 + int(a.group(1))], bands[band])
        for local in (_LOCAL.match(t) for t in _op_statements(body)):
            if local:
                body = re.sub(rf"\b{local.group(2)}\b", f"{local.group(2)}_call{k}", body)
        statements += _op_statements(body)
    return statements


def kernel_calls(model: CompiledModel) -> list[list[KernelCall]]:
    """Per op, its kernel calls (none for an op that needs no code). Raises BlobError naming
    every op whose code is something else."""
    problems, calls = [], []
    if len(model.plan.regions) > 1:
        problems.append("the workspace is split across memory regions, which blobs do not "
                        "carry yet: give the board one workspace region large enough")
    for op, code in zip(model.ops, model.op_code):
        where = f"op {op['index']} {op['opcode']}"
        statements = _op_statements(code)
        if len(statements) == 1 and (streamed := _STREAMED.match(statements[0])):
            statements = _streamed_statements(model, streamed.group(1))
        if not statements:  # no code, or streamed within an earlier op's region
            calls.append([])
            continue
        op_calls, local_consts = [], []
        for statement in statements:
            if m := _LOCAL.match(statement):
                local_consts.append(LocalConstant(m.group(2), m.group(1).strip(), m.group(3),
                                                  m.group(4)))
                continue
            m = _CALL.match(statement)
            if m is None:
                first = statement if len(statement) <= 60 else statement[:57] + "..."
                problems.append(f"{where}: `{first}` is neither a kernel call nor a local "
                                "constant")
                continue
            names = {c.name for c in local_consts}
            args = []
            for k, text in enumerate(_split_args(m.group(2))):
                arg = _arg(text, names)
                if arg is None:
                    problems.append(f"{where}: argument {k} of {m.group(1)} ({text}) is neither "
                                    "an address, a constant, a number nor a null pointer")
                args.append(arg)
            used = {a.name for a in args if a is not None and a.kind == "local"}
            op_calls.append(KernelCall(m.group(1), tuple(args),
                                       tuple(c for c in local_consts if c.name in used)))
        calls.append(op_calls)
    if problems:
        raise BlobError(f"model {model.prefix} cannot be packed as a blob:\n"
                        + "\n".join(f"  - {p}" for p in problems)
                        + "\nblobs carry only ops whose code is kernel calls (docs/model-blob.md); "
                          "run this model with --executor aot")
    return calls
