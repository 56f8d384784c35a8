"""Assemble small .tflite flatbuffers directly, for models a converter will not emit.

The TFLite converter decides on its own which operators, options and quantization a graph gets,
so some cases can only be made by hand: an operator configuration real exporters produce but
Keras does not (PyTorch's NCHW transposes, a SHAPE -> STRIDED_SLICE -> PACK chain on a fixed
shape), a deliberately unsupported operator, a broken quantization parameter. This writes them
with the schema's object API from the ``tflite-micro`` wheel (a test dependency), so both the
generators (run with tensorflow) and the tests (run in .venv) can use it:

    b = ModelBuilder()
    x = b.tensor("x", (1, 8), "int8", scale=0.05, zero_point=-3)
    w = b.constant("w", np.ones((4, 8), np.int8), scale=0.01)
    y = b.tensor("y", (1, 4), "int8", scale=0.1, zero_point=2)
    b.operator("FULLY_CONNECTED", [x, w, -1], [y], "FullyConnectedOptions",
               fusedActivationFunction=0)
    data = b.build(inputs=[x], outputs=[y])
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def _schema():
    try:
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema
    except ImportError:  # a tensorflow environment without the tflite-micro wheel
        from tensorflow.lite.python import schema_py_generated as schema
    return schema


_TYPES = {"float32": 0, "float16": 1, "int32": 2, "uint8": 3, "int64": 4, "bool": 6,
          "int16": 7, "int8": 9, "uint64": 12, "uint32": 15}


class ModelBuilder:
    """One subgraph: tensors, constant buffers, operators; ``build`` gives the file's bytes."""

    def __init__(self, description: str = "microbuild test model") -> None:
        self.schema = _schema()
        self.description = description
        self.tensors: list[Any] = []
        self.buffers: list[Any] = [self.schema.BufferT()]  # buffer 0: the empty sentinel
        self.operators: list[Any] = []
        self.opcodes: list[tuple[int, str | None, int]] = []

    def tensor(self, name: str, shape: Sequence[int], dtype: str, scale=None, zero_point=None,
               axis: int = 0, signature: Sequence[int] | None = None,
               data: np.ndarray | None = None, variable: bool = False) -> int:
        """A tensor (constant when ``data`` is given); scale/zero_point may be lists (per
        channel along ``axis``). Returns its index."""
        s = self.schema
        t = s.TensorT()
        t.name = name
        t.shape = [int(d) for d in shape]
        if signature is not None:
            t.shapeSignature = [int(d) for d in signature]
        t.type = _TYPES[dtype]
        t.isVariable = variable
        if scale is not None:
            q = s.QuantizationParametersT()
            q.scale = [float(v) for v in np.atleast_1d(scale)]
            zp = np.atleast_1d(0 if zero_point is None else zero_point)
            if len(zp) == 1 and len(q.scale) > 1:
                zp = np.repeat(zp, len(q.scale))
            q.zeroPoint = [int(v) for v in zp]
            q.quantizedDimension = axis
            t.quantization = q
        t.buffer = 0
        if data is not None:
            buf = s.BufferT()
            raw = np.ascontiguousarray(np.asarray(data, dtype=dtype)).astype(
                np.dtype(dtype).newbyteorder("<"))
            buf.data = list(raw.tobytes())
            self.buffers.append(buf)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def constant(self, name: str, data: np.ndarray, scale=None, zero_point=None,
                 axis: int = 0) -> int:
        data = np.asarray(data)
        return self.tensor(name, data.shape, data.dtype.name, scale, zero_point, axis, data=data)

    def _opcode(self, opcode: str, custom: str | None, version: int) -> int:
        key = (getattr(self.schema.BuiltinOperator, opcode), custom, version)
        if key not in self.opcodes:
            self.opcodes.append(key)
        return self.opcodes.index(key)

    def operator(self, opcode: str, inputs: Sequence[int], outputs: Sequence[int],
                 options_type: str | None = None, version: int = 1, custom: str | None = None,
                 custom_options: dict | None = None, **options: Any) -> None:
        """An operator; ``options_type`` names the schema table (e.g. "Conv2DOptions") whose
        fields are set from ``options`` (the schema's camelCase names). A custom operator is
        ``opcode="CUSTOM"`` with its ``custom`` code; ``custom_options`` (a dict of ints/bools)
        becomes its flexbuffer map, as TFLM's custom kernels read it."""
        s = self.schema
        op = s.OperatorT()
        op.opcodeIndex = self._opcode(opcode, custom, version)
        op.inputs = [int(i) for i in inputs]
        op.outputs = [int(i) for i in outputs]
        if custom_options is not None:
            from flatbuffers import flexbuffers

            op.customOptions = list(flexbuffers.Dumps(custom_options))
            op.customOptionsFormat = 0  # FLEXBUFFERS
        if options_type is not None:
            table = getattr(s, options_type + "T")()
            for key, value in options.items():
                if not hasattr(table, key):
                    raise AttributeError(f"{options_type} has no field {key}")
                setattr(table, key, value)
            op.builtinOptionsType = getattr(s.BuiltinOptions, options_type)
            op.builtinOptions = table
        self.operators.append(op)

    def build(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        import flatbuffers

        s = self.schema
        graph = s.SubGraphT()
        graph.tensors = self.tensors
        graph.operators = self.operators
        graph.inputs = [int(i) for i in inputs]
        graph.outputs = [int(i) for i in outputs]
        graph.name = "main"
        model = s.ModelT()
        model.version = 3
        model.description = self.description
        codes = []
        for builtin, custom, version in self.opcodes:
            code = s.OperatorCodeT()
            code.builtinCode = builtin
            code.deprecatedBuiltinCode = min(builtin, 127)
            code.version = version
            if custom is not None:
                code.customCode = custom
            codes.append(code)
        model.operatorCodes = codes
        model.subgraphs = [graph]
        model.buffers = self.buffers
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())
