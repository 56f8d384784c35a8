"""A small graph IR for one int8 TFLite subgraph.

The reader (``microbuild.model.reader``) turns a .tflite flatbuffer into these objects; the compiler
only ever sees these, never the flatbuffer. Everything here is plain data: shapes are tuples,
constant data is a numpy array, operator options are a dict with the TFLite schema's snake_case field
names and enum values as upper-case strings (e.g. ``{"padding": "SAME", "stride_w": 2,
"fused_activation_function": "RELU6"}``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel on ``axis``."""

    scale: np.ndarray  # float64, shape (1,) per tensor or (channels,) per channel
    zero_point: np.ndarray  # int64, same length as scale
    axis: int = 0  # the quantized dimension when per channel

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str  # numpy dtype name: "int8", "int16", "int32", "int64", "uint8", "float32", "bool"
    quant: Quantization | None = None
    data: np.ndarray | None = None  # constant data (weights, biases, shape tensors), else None
    # The shape with -1 for dimensions only known at run time (TFLite's shape_signature); None when
    # the file gives none, which means the shape is static.
    shape_signature: tuple[int, ...] | None = None
    is_variable: bool = False  # a TFLite variable tensor (state kept between invocations)
    # A variable's starting value (a resource variable's initializer), which reset copies in;
    # None: reset fills the tensor as TFLM resets variable tensors.
    initial: np.ndarray | None = None

    @property
    def is_dynamic(self) -> bool:
        """True when some dimension is only known at run time; the compiler needs static shapes."""
        return self.shape_signature is not None and any(d < 0 for d in self.shape_signature)

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        return self.num_elements * np.dtype(self.dtype).itemsize

    @property
    def scale(self) -> float:
        """The per-tensor scale (first one when per channel)."""
        assert self.quant is not None, f"tensor {self.index} '{self.name}' is not quantized"
        return float(self.quant.scale[0])

    @property
    def zero_point(self) -> int:
        assert self.quant is not None, f"tensor {self.index} '{self.name}' is not quantized"
        return int(self.quant.zero_point[0])


@dataclass
class Operator:
    index: int  # position in execution order
    opcode: str  # builtin operator name as in the TFLite schema, e.g. "CONV_2D"
    version: int
    inputs: list[int]  # tensor indices; -1 marks an absent optional input (e.g. no bias)
    outputs: list[int]
    options: dict[str, Any] = field(default_factory=dict)
    # The operator's index in the .tflite file. Compile-time passes (constant folding, dead-code
    # removal, fusion) renumber ``index`` to the position in the generated code; messages about
    # the model name this one, which is what a model viewer (Netron) shows.
    model_index: int | None = None

    def __post_init__(self) -> None:
        if self.model_index is None:
            self.model_index = self.index

    def describe(self) -> str:
        return f"op {self.model_index} {self.opcode}"


@dataclass
class Subgraph:
    """A subgraph other than the first, as the file has it: a WHILE loop's condition or body.
    Tensor indices are the subgraph's own."""
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: list[int]
    outputs: list[int]


@dataclass
class Graph:
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: list[int]
    outputs: list[int]
    description: str = ""
    # How many subgraphs the file has; the graph holds subgraph 0 only, so the compiler refuses
    # files with more (control flow such as WHILE/IF lives in the others).
    subgraph_count: int = 1
    source: str = ""  # the file name (or "<bytes>") the graph was read from, for messages
    # What the compile-time passes changed that a user should know (e.g. "batch fixed to 1"),
    # shown once in the compile summary.
    notes: list[str] = field(default_factory=list)
    # The subgraphs WHILE operators name, by index (microbuild/compiler/while_loops.py unrolls
    # the loops into this graph's operators before anything else).
    subgraphs: dict[int, Subgraph] = field(default_factory=dict)

    def replace_operators(self, operators: list[Operator]) -> "Graph":
        """A graph with these operators (renumbered in order) and everything else shared."""
        for i, op in enumerate(operators):
            op.index = i
        return Graph(tensors=self.tensors, operators=operators, inputs=list(self.inputs),
                     outputs=list(self.outputs), description=self.description,
                     subgraph_count=self.subgraph_count, source=self.source,
                     notes=list(self.notes))

    def tensor(self, index: int) -> Tensor:
        return self.tensors[index]

    def input_tensors(self, op: Operator) -> list[Tensor | None]:
        return [self.tensors[i] if i >= 0 else None for i in op.inputs]

    def output_tensors(self, op: Operator) -> list[Tensor]:
        return [self.tensors[i] for i in op.outputs]
