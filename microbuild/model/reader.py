"""Read a .tflite flatbuffer into the graph IR (:mod:`microbuild.model.ir`).

The ``tflite`` package provides generated flatbuffer accessors. This module is the only place that
touches them: everything after it works on plain ``Graph``/``Tensor``/``Operator`` objects.

Operator options are read generically, by introspecting the generated options class, so every
operator's options come out without a table to maintain: accessor names become snake_case keys
(``FusedActivationFunction`` -> ``fused_activation_function``), enum-typed fields become the enum's
upper-case name (``"RELU6"``), vectors become lists of ints.

A file that is not a valid TFLite model raises :class:`~microbuild.errors.ModelError` naming the
file, never a raw flatbuffer traceback.
"""

from __future__ import annotations

import importlib
import inspect
import re
import struct
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator, Quantization, Subgraph, Tensor

_IDENTIFIER = b"TFL3"

# TensorType enum value -> numpy dtype name. Types numpy has no dtype for keep a lower-case name
# ("int4", "string", ...): the compiler refuses them, but the reader still records them.
_TENSOR_TYPES = {
    0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool",
    7: "int16", 8: "complex64", 9: "int8", 10: "float64", 11: "complex128", 12: "uint64",
    13: "resource", 14: "variant", 15: "uint32", 16: "uint16", 17: "int4", 18: "bfloat16",
}
_NUMPY_TYPES = {"float32", "float16", "int32", "uint8", "int64", "bool", "int16", "complex64",
                "int8", "float64", "complex128", "uint64", "uint32", "uint16"}

# Options fields whose value is an enum but whose name does not say which one. Fields named after
# their enum (``padding`` -> ``Padding``, ``mode`` of MirrorPadOptions -> ``MirrorPadMode`` via the
# options-name prefix) are found without this table; see ``_enum_for``.
_FIELD_ENUMS = {
    "FusedActivationFunction": "ActivationFunctionType",
    "QuantizedBiasType": "TensorType",
    "OutputType": "TensorType",
    "InDataType": "TensorType",
    "OutDataType": "TensorType",
    "KeyDtype": "TensorType",
    "ValueDtype": "TensorType",
    "OutType": "TensorType",
    "IdxOutType": "TensorType",
    "Combiner": "CombinerType",
    "KernelType": "LSTMKernelType",
    "Algorithm": "RngAlgorithm",
    "Body": "ReduceWindowFunction",
}


def read_model(source: str | Path | bytes | bytearray) -> Graph:
    """Parse a .tflite file (path or bytes) into a :class:`Graph` of its first subgraph."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, name = bytes(source), "<bytes>"
    else:
        path = Path(source)
        name = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ModelError(f"{name}: no such file") from None
        except OSError as exc:
            raise ModelError(f"{name}: cannot read the model file: {exc.strerror or exc}") from None

    if len(data) == 0:
        raise ModelError(f"{name}: the file is empty, expected a .tflite model")
    if len(data) < 8 or data[4:8] != _IDENTIFIER:
        raise ModelError(
            f"{name}: not a TFLite model (the flatbuffer identifier at bytes 4..8 should be "
            f"'TFL3', found {data[4:8]!r}); convert the model with the TFLite converter")
    at = _Position()
    try:
        graph = _parse(data, at)
    except ModelError as exc:
        raise ModelError(f"{name}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any failure inside the flatbuffer means a broken file
        raise ModelError(
            f"{name}: the TFLite flatbuffer is corrupt in {at.part}: "
            f"{_flatbuffer_problem(exc, len(data))}; the file is truncated or not a .tflite "
            "model: convert or download it again") from None
    graph.source = name
    return graph


class _Position:
    """Which part of the flatbuffer the reader is in, for the message when reading it fails."""

    part = "the model's root table"


def _flatbuffer_problem(exc: Exception, size: int) -> str:
    """What a failure of the generated accessors means in the file's terms. They read offsets
    and lengths as they find them: an offset past the end fails in ``struct.unpack_from``, a
    vector longer than the file in ``numpy.frombuffer``, a negative offset in the number
    checks."""
    text = str(exc)
    past_end = re.search(r"at offset (-?\d+)", text)
    if isinstance(exc, struct.error) and past_end:
        return (f"an offset or length points to byte {int(past_end.group(1)):,}, outside the "
                f"{size:,}-byte file")
    if isinstance(exc, ValueError) and "smaller than requested" in text:
        return f"a vector's length runs past the end of the {size:,}-byte file"
    bad_number = re.search(r"bad number (-?\d+)", text)
    if bad_number:
        return f"an offset or length holds {int(bad_number.group(1)):,}, which no valid file has"
    return "an offset, length or index is out of range"


def _parse(data: bytes, at: _Position) -> Graph:
    from tflite.Model import Model

    model = Model.GetRootAs(data, 0)

    def count(n: int, what: str) -> int:
        # Every vector element takes at least 4 bytes; a larger count means garbage, and looping
        # over it would hang rather than fail.
        if n * 4 > len(data):
            raise ModelError(f"the model claims {n} {what} in {len(data)} bytes (corrupt file)")
        return n

    if count(model.SubgraphsLength(), "subgraphs") == 0:
        raise ModelError("the model has no subgraph")
    at.part = "subgraph 0"
    subgraph = model.Subgraphs(0)

    opcodes = []
    for i in range(count(model.OperatorCodesLength(), "operator codes")):
        at.part = f"operator code {i}"
        opcodes.append(_opcode_name(model.OperatorCodes(i)))
    at.part = "the buffers vector"
    buffers = [model.Buffers(i) for i in range(count(model.BuffersLength(), "buffers"))]

    tensors = []
    for i in range(count(subgraph.TensorsLength(), "tensors")):
        at.part = f"subgraph 0 tensor {i}"
        tensors.append(_read_tensor(subgraph.Tensors(i), i, buffers, data))
    n_tensors = len(tensors)

    operators = _read_operators(subgraph, 0, opcodes, n_tensors, count, at)

    at.part = "subgraph 0's inputs and outputs"
    graph_inputs = [int(t) for t in _int_vector(subgraph.InputsAsNumpy())]
    graph_outputs = [int(t) for t in _int_vector(subgraph.OutputsAsNumpy())]
    for t in graph_inputs + graph_outputs:
        if not 0 <= t < n_tensors:
            raise ModelError(f"a graph input/output refers to tensor {t}, the subgraph has "
                             f"{n_tensors}")
    at.part = "the model's description"
    description = model.Description()
    graph = Graph(tensors=tensors, operators=operators, inputs=graph_inputs, outputs=graph_outputs,
                  description=description.decode("utf-8", "replace") if description else "",
                  subgraph_count=model.SubgraphsLength())
    at.part = "the resource variables' initializer subgraphs"
    _resolve_resource_variables(graph, model, opcodes, buffers, data)
    for op in graph.operators:
        if op.opcode == "WHILE":  # the loop's subgraphs, for the compiler to unroll
            for key in ("cond_subgraph_index", "body_subgraph_index"):
                index = op.options.get(key)
                if isinstance(index, int) and 0 < index < model.SubgraphsLength() \
                        and index not in graph.subgraphs:
                    graph.subgraphs[index] = _read_subgraph(model, index, opcodes, buffers,
                                                            data, count, at)
    return graph


def _read_subgraph(model, index: int, opcodes, buffers, data: bytes, count, at: _Position
                   ) -> Subgraph:
    """Subgraph ``index`` (a WHILE loop's condition or body): its own tensors and operators."""
    at.part = f"subgraph {index}"
    sub = model.Subgraphs(index)
    tensors = []
    for i in range(count(sub.TensorsLength(), "tensors")):
        at.part = f"subgraph {index} tensor {i}"
        tensors.append(_read_tensor(sub.Tensors(i), i, buffers, data))
    operators = _read_operators(sub, index, opcodes, len(tensors), count, at)
    at.part = f"subgraph {index}'s inputs and outputs"
    inputs = [int(t) for t in _int_vector(sub.InputsAsNumpy())]
    outputs = [int(t) for t in _int_vector(sub.OutputsAsNumpy())]
    for t in inputs + outputs:
        if not 0 <= t < len(tensors):
            raise ModelError(f"subgraph {index}'s input/output refers to tensor {t}, the "
                             f"subgraph has {len(tensors)}")
    return Subgraph(tensors=tensors, operators=operators, inputs=inputs, outputs=outputs)


def _read_operators(subgraph, number: int, opcodes, n_tensors: int, count, at: _Position
                    ) -> list[Operator]:
    """The operators of one subgraph, their tensor references checked."""
    operators = []
    for i in range(count(subgraph.OperatorsLength(), "operators")):
        at.part = f"subgraph {number} operator {i}"
        op = subgraph.Operators(i)
        code_index = op.OpcodeIndex()
        if not 0 <= code_index < len(opcodes):
            raise ModelError(f"op {i} refers to operator code {code_index}, the model has "
                             f"{len(opcodes)}")
        opcode, version, custom_code = opcodes[code_index]
        inputs = [int(t) for t in _int_vector(op.InputsAsNumpy())]
        outputs = [int(t) for t in _int_vector(op.OutputsAsNumpy())]
        for t in inputs + outputs:
            if not -1 <= t < n_tensors:
                raise ModelError(f"op {i} {opcode} refers to tensor {t}, the subgraph has "
                                 f"{n_tensors}")
        options = _read_builtin_options(op)
        if custom_code is not None:
            options["custom_code"] = custom_code
            # A custom operator's options are a flexbuffer (custom_options), decoded by its
            # lowering; kept here as raw bytes.
            if op.CustomOptionsLength() > 0:
                options["custom_options"] = op.CustomOptionsAsNumpy().tobytes()
        operators.append(Operator(index=i, opcode=opcode, version=version, inputs=inputs,
                                  outputs=outputs, options=options))
    return operators


def _variable_key(options: dict[str, Any]) -> str:
    return f"{options.get('container') or ''}/{options.get('shared_name') or ''}"


def _resolve_resource_variables(graph: Graph, model, opcodes, buffers, data: bytes) -> None:
    """Resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, initialized by a
    CALL_ONCE subgraph that assigns constants) become variable tensors: one per variable, with
    the constant its initializer assigns as ``initial``; READ_VARIABLE and ASSIGN_VARIABLE then
    take that tensor instead of the handle, and CALL_ONCE and VAR_HANDLE go. The initializer
    subgraphs no longer count in ``subgraph_count``. Anything else (an initializer that computes,
    a variable without one) is left as it is, for the compiler to refuse."""
    ops = graph.operators
    once = [op for op in ops if op.opcode == "CALL_ONCE"]
    if not once or not any(op.opcode == "VAR_HANDLE" for op in ops):
        return
    initial: dict[str, Tensor] = {}
    init_subgraphs = set()
    for op in once:
        index = op.options.get("init_subgraph_index")
        if not isinstance(index, int) or not 0 < index < model.SubgraphsLength():
            return
        sub = model.Subgraphs(index)
        sub_tensors = [_read_tensor(sub.Tensors(i), i, buffers, data)
                       for i in range(sub.TensorsLength())]
        handles: dict[int, str] = {}
        for i in range(sub.OperatorsLength()):
            sub_op = sub.Operators(i)
            opcode = opcodes[sub_op.OpcodeIndex()][0]
            inputs = [int(t) for t in _int_vector(sub_op.InputsAsNumpy())]
            outputs = [int(t) for t in _int_vector(sub_op.OutputsAsNumpy())]
            if opcode == "VAR_HANDLE" and len(outputs) == 1:
                handles[outputs[0]] = _variable_key(_read_builtin_options(sub_op))
            elif (opcode == "ASSIGN_VARIABLE" and len(inputs) == 2 and inputs[0] in handles
                  and sub_tensors[inputs[1]].is_constant):
                initial[handles[inputs[0]]] = sub_tensors[inputs[1]]
            else:
                return  # an initializer that computes: not resolved
        init_subgraphs.add(index)
    variables: dict[str, int] = {}  # key -> the new variable tensor
    handle_of: dict[int, str] = {}  # handle tensor -> key
    for op in ops:
        if op.opcode == "VAR_HANDLE" and len(op.outputs) == 1:
            handle_of[op.outputs[0]] = _variable_key(op.options)
    if any(key not in initial for key in handle_of.values()):
        return
    for key in sorted(set(handle_of.values())):
        value = initial[key]
        variables[key] = len(graph.tensors)
        graph.tensors.append(Tensor(index=len(graph.tensors), name=f"variable {key}",
                                    shape=value.shape, dtype=value.dtype, quant=value.quant,
                                    is_variable=True, initial=value.data.copy()))
    kept = []
    for op in ops:
        if op.opcode in ("CALL_ONCE", "VAR_HANDLE"):
            continue
        if op.opcode in ("READ_VARIABLE", "ASSIGN_VARIABLE") and op.inputs \
                and op.inputs[0] in handle_of:
            op.inputs = [variables[handle_of[op.inputs[0]]]] + op.inputs[1:]
        kept.append(op)
    for i, op in enumerate(kept):
        op.index = i
    graph.operators = kept
    graph.subgraph_count -= len(init_subgraphs)


def _int_vector(values: Any) -> np.ndarray:
    """The generated ``XAsNumpy`` accessors return the int 0 for an absent vector."""
    if isinstance(values, np.ndarray):
        return values
    return np.zeros(0, dtype=np.int32)


@lru_cache(maxsize=None)
def _builtin_names() -> dict[int, str]:
    from tflite.BuiltinOperator import BuiltinOperator

    return {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}


def _opcode_name(code) -> tuple[str, int, str | None]:
    """(builtin name, version, custom code or None) of one OperatorCode.

    Codes above 127 live only in ``builtin_code``; older files set only the int8
    ``deprecated_builtin_code``. The larger of the two is the real one (the schema's rule).
    """
    name = resolve_opcode(code.DeprecatedBuiltinCode(), _raw_builtin_code(code))
    custom = code.CustomCode()
    return name, code.Version(), custom.decode("utf-8", "replace") if custom is not None else None


def resolve_opcode(deprecated_builtin_code: int, builtin_code: int) -> str:
    """The operator name from an OperatorCode's two fields: the larger one is the real code."""
    value = max(deprecated_builtin_code, builtin_code)
    return _builtin_names().get(value, f"UNKNOWN_{value}")


def _raw_builtin_code(code) -> int:
    # OperatorCode.BuiltinCode() of the generated package already mixes in the deprecated field;
    # read the stored int32 (field 3, vtable offset 10) directly so the max() rule above is explicit.
    import flatbuffers

    o = code._tab.Offset(10)
    if o == 0:
        return 0
    return code._tab.Get(flatbuffers.number_types.Int32Flags, o + code._tab.Pos)


def _read_tensor(t, index: int, buffers: list, data: bytes) -> Tensor:
    type_code = t.Type()
    name = t.Name()
    name = name.decode("utf-8", "replace") if name else f"tensor{index}"
    if type_code not in _TENSOR_TYPES:
        # Every later step sizes tensors by their type; a code outside the schema is damage.
        raise ModelError(f"tensor {index} '{name}' has type code {type_code}, not a TFLite tensor "
                         "type (the file is damaged, or from a newer TFLite schema)")
    dtype = _TENSOR_TYPES[type_code]
    shape = tuple(int(d) for d in _int_vector(t.ShapeAsNumpy()))
    signature = None
    if not t.ShapeSignatureIsNone():
        signature = tuple(int(d) for d in _int_vector(t.ShapeSignatureAsNumpy()))

    quant = None
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        with np.errstate(all="ignore"):  # a damaged file's NaN is reported by the compiler
            scale = np.asarray(q.ScaleAsNumpy(), dtype=np.float64)
        zero_point = np.asarray(_int_vector(q.ZeroPointAsNumpy()), dtype=np.int64)
        if len(zero_point) == 0:
            zero_point = np.zeros(len(scale), dtype=np.int64)
        if len(zero_point) != len(scale):
            raise ModelError(f"tensor {index} '{name}' has {len(scale)} scales but "
                             f"{len(zero_point)} zero points")
        quant = Quantization(scale=scale, zero_point=zero_point, axis=int(q.QuantizedDimension()))

    const = _read_buffer(t.Buffer(), buffers, data, f"tensor {index} '{name}'")
    array = None
    if const is not None:
        if dtype not in _NUMPY_TYPES:
            array = np.frombuffer(const, dtype=np.uint8).copy()  # kept raw: the compiler refuses
        else:
            count = 1
            for d in shape:
                count *= d
            itemsize = np.dtype(dtype).itemsize
            if any(d < 0 for d in shape):
                raise ModelError(f"constant tensor {index} '{name}' has shape {_shown(shape)}: "
                                 "a negative dimension")
            if len(const) != count * itemsize:
                raise ModelError(
                    f"tensor {index} '{name}' of shape {_shown(shape)} {dtype} needs "
                    f"{count * itemsize:,} bytes of constant data, its buffer has {len(const):,}")
            array = np.frombuffer(const, dtype=np.dtype(dtype).newbyteorder("<")).astype(
                dtype).reshape(shape)
    return Tensor(index=index, name=name, shape=shape, dtype=dtype, quant=quant, data=array,
                  shape_signature=signature, is_variable=bool(t.IsVariable()))


def _shown(shape: tuple[int, ...]) -> str:
    """A shape for a message; a damaged file's shape can have thousands of dimensions."""
    if len(shape) <= 8:
        return str(list(shape))
    return f"[{', '.join(map(str, shape[:8]))}, ... ({len(shape)} dimensions)]"


def _read_buffer(buffer_index: int, buffers: list, data: bytes, owner: str) -> bytes | None:
    """The constant bytes of a tensor, or None for a tensor computed at run time.

    Buffer 0 is the schema's empty sentinel. Models over 2 GB keep data outside the flatbuffer,
    addressed by ``offset``/``size`` from the start of the file.
    """
    if buffer_index == 0:
        return None
    if buffer_index >= len(buffers):
        raise ModelError(f"{owner} refers to buffer {buffer_index}, the model has "
                         f"{len(buffers)}")
    buffer = buffers[buffer_index]
    offset = buffer.Offset()
    if offset > 1:
        size = buffer.Size()
        if offset + size > len(data):
            raise ModelError(f"{owner}: its buffer {buffer_index} (bytes {offset:,}..."
                             f"{offset + size:,}) lies outside the {len(data):,}-byte file; the "
                             "file is truncated")
        return data[offset:offset + size]
    if buffer.DataIsNone() or buffer.DataLength() == 0:
        return None
    return buffer.DataAsNumpy().tobytes()


def _read_builtin_options(op) -> dict[str, Any]:
    from tflite.BuiltinOptions import BuiltinOptions
    from tflite.BuiltinOptions2 import BuiltinOptions2

    options: dict[str, Any] = {}
    for type_code, table, enum in ((op.BuiltinOptionsType(), op.BuiltinOptions(), BuiltinOptions),
                                   (op.BuiltinOptions2Type(), op.BuiltinOptions2(),
                                    BuiltinOptions2)):
        if type_code == 0 or table is None:
            continue
        class_name = _enum_names(enum).get(type_code)
        if class_name is None:
            continue
        cls = _options_class(class_name)
        if cls is None:
            continue
        obj = cls()
        obj.Init(table.Bytes, table.Pos)
        options.update(_table_to_dict(obj, class_name))
    return options


@lru_cache(maxsize=None)
def _enum_names(enum_cls) -> dict[int, str]:
    return {v: k for k, v in vars(enum_cls).items() if not k.startswith("_") and isinstance(v, int)}


@lru_cache(maxsize=None)
def _options_class(class_name: str):
    try:
        return getattr(importlib.import_module(f"tflite.{class_name}"), class_name)
    except (ImportError, AttributeError):
        return None


@lru_cache(maxsize=None)
def _accessors(cls) -> tuple[tuple[str, str], ...]:
    """(accessor name, kind) for every schema field of a generated table class.

    ``kind`` is "scalar" for ``X(self)`` and "vector" for ``X(self, j)`` with ``XLength``.
    """
    result = []
    names = {n for n, _ in inspect.getmembers(cls, inspect.isfunction)}
    for name in sorted(names):
        if name in ("Init",) or name.startswith("GetRootAs") or name.endswith("BufferHasIdentifier"):
            continue
        if name.endswith(("AsNumpy", "Length", "IsNone")) and _base_accessor(name) in names:
            continue
        params = list(inspect.signature(getattr(cls, name)).parameters)
        if params == ["self"]:
            result.append((name, "scalar"))
        elif params == ["self", "j"] and f"{name}Length" in names:
            result.append((name, "vector"))
    return tuple(result)


def _base_accessor(name: str) -> str:
    for suffix in ("AsNumpy", "Length", "IsNone"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _snake(name: str) -> str:
    """FusedActivationFunction -> fused_activation_function, StrideW -> stride_w."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _enum_for(class_name: str, field: str):
    """The generated enum class of an options field, or None when the field is a plain number."""
    candidates = [_FIELD_ENUMS.get(field), field, class_name + field,
                  class_name.removesuffix("Options") + field]
    for candidate in candidates:
        if not candidate:
            continue
        cls = _options_class(candidate)
        # Generated enums are plain classes of int constants; tables have Init.
        if cls is not None and not hasattr(cls, "Init"):
            return cls
    return None


def _table_to_dict(obj, class_name: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, kind in _accessors(type(obj)):
        if kind == "vector":
            length = getattr(obj, f"{name}Length")()
            values = [getattr(obj, name)(j) for j in range(length)]
            out[_snake(name)] = [_plain(v, name) for v in values]
            continue
        value = getattr(obj, name)()
        enum = _enum_for(class_name, name)
        if enum is not None and isinstance(value, int) and not isinstance(value, bool):
            value = _enum_names(enum).get(value, value)
        out[_snake(name)] = _plain(value, name)
    return out


def _plain(value: Any, name: str) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "_tab"):  # a nested table (a few StableHLO options)
        return _table_to_dict(value, type(value).__name__)
    if isinstance(value, np.generic):
        return value.item()
    return value
