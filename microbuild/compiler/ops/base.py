"""The seam between the compiler and one operator.

Each supported TFLite operator is one module in this package defining a subclass of
:class:`OpLowering` decorated with :func:`register`. The lowering

- ``check``s whether it can compile a given operator instance (returning every reason it cannot),
- derives all kernel parameters in Python at compile time (multipliers, shifts, padding, ranges),
- ``emit``s the C for one call to its kernel in ``runtime/kernels/<kernel>.c``, using an
  :class:`EmitContext` supplied by the code generator for pointers and constant data.

Adding an operator touches nothing else: a module here, a kernel file and a header in ``runtime/``,
and tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

import numpy as np

from microbuild.compiler.variants import KernelVariant
from microbuild.model.ir import Graph, Operator

if TYPE_CHECKING:
    from microbuild.compiler.overlap import Overlap

_CTYPE_OF_DTYPE = {"int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "uint8": "uint8_t"}


class EmitContext(Protocol):
    """What the code generator offers a lowering while it emits one operator."""

    prefix: str  # the model's symbol prefix, e.g. "kws"

    def ptr(self, tensor_index: int) -> str:
        """A C expression for the tensor's data, typed by its dtype (e.g. ``(int8_t *)(ws + 64)``,
        ``in0``, ``kws_t3``). Constants come out as ``const`` pointers."""
        ...

    def const_array(self, name: str, values: np.ndarray, ctype: str) -> str:
        """Emit ``values`` as an aligned const array in ``<prefix>_weights.c`` (placed in the
        weights section) and return its global symbol name, which carries the prefix."""
        ...

    def static(self, declaration: str) -> None:
        """Add a file-scope declaration (e.g. a ``static const`` params struct) to ``<prefix>.c``."""
        ...

    def symbol(self, name: str) -> str:
        """A file-unique C identifier for this operator, e.g. ``op3_params``."""
        ...

    def scratch_ptr(self) -> str:
        """A C ``void *`` expression for this operator's scratch area in the workspace (only valid
        when ``scratch_bytes`` returned more than 0)."""
        ...

    # The kernel variant chosen for the op being emitted (None: the reference kernel).
    variant: KernelVariant | None


class OpLowering:
    """Compile-time half of one operator. Subclasses set ``opcode``, ``kernel`` and ``headers``."""

    opcode: ClassVar[str]  # TFLite builtin name, e.g. "CONV_2D"
    kernel_sources: ClassVar[tuple[str, ...]] = ()  # runtime/kernels/*.c files the op needs
    # The files only a float32 instance of the op needs (runtime/kernels/*_f32.c): an integer
    # model's sources leave them out, so a program linking it needs no libm (``sources_for``).
    float32_sources: ClassVar[tuple[str, ...]] = ()
    headers: ClassVar[tuple[str, ...]] = ()  # e.g. ("microbuild/kernels/conv2d.h",)
    # Faster implementations beside the reference kernel (see microbuild/compiler/variants.py).
    variants: ClassVar[tuple[KernelVariant, ...]] = ()
    # The dtypes this operator's run-time (non-constant) tensors may have; the generic check in
    # microbuild/compiler/validate.py refuses others before ``check`` runs, so a lowering written
    # for int8 never sees an int16 tensor by accident.
    dtypes: ClassVar[frozenset[str]] = frozenset({"int8"})
    # Why a dtype outside ``dtypes`` is refused, when there is more to say than "not supported":
    # e.g. {"int16": "TFLM's REDUCE_MAX has no int16 kernel either"}. Shown in the refusal.
    dtype_notes: ClassVar[dict[str, str]] = {}
    # The dtypes TFLM itself has no kernel for (the usual note, worded once in ``dtype_note``).
    tflm_lacks: ClassVar[frozenset[str]] = frozenset()
    # Inputs read only at compile time (sizes, paddings, block shapes): the generic dtype check
    # skips them, so a non-constant one gets the lowering's own message from ``check``.
    parameter_inputs: ClassVar[tuple[int, ...]] = ()
    # Inputs TFLM requires to be variable tensors (state kept between invocations: an LSTM's
    # hidden and cell state, SVDF's memory). The data-flow check (compiler/graph_check.py) leaves a
    # non-variable one to ``check``, whose refusal says what TFLM requires of it.
    state_inputs: ClassVar[tuple[int, ...]] = ()
    # False for operators that are only ever evaluated at compile time (SHAPE): no kernel exists.
    runs_on_device: ClassVar[bool] = True
    # True for a TFLite CUSTOM operator's lowering: ``opcode`` is then its custom code (e.g.
    # "SignalRfft"), and microbuild/compiler/prepare.py names such ops by it.
    custom: ClassVar[bool] = False

    def add_state(self, op: Operator, graph: Graph) -> None:
        """For an operator that keeps state between invocations inside its TFLM kernel (not in a
        variable tensor of the model, e.g. SignalFilterBankSpectralSubtraction's noise
        estimate): append a variable tensor for it to ``graph.tensors`` and to ``op.inputs``, so
        it lives in the model's state buffer and ``<prefix>_reset`` clears it. Called once per
        op by prepare_graph, before folding."""

    def check(self, op: Operator, graph: Graph) -> list[str]:
        """Every reason this op instance cannot be compiled; empty when it can."""
        return []

    def dtype_note(self, dtype: str) -> str | None:
        """Why run-time tensors of ``dtype`` are refused, beyond "not supported", or None."""
        if dtype in self.dtype_notes:
            return self.dtype_notes[dtype]
        if dtype in self.tflm_lacks:
            return (f"TFLM has no {dtype} {self.opcode} kernel either"
                    + ("; the converter's 16x8 quantization cannot be used for it"
                       if dtype == "int16" else ""))
        return None

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        """C statement(s) that run this operator; parameters are literal constants."""
        raise NotImplementedError

    def used_inputs(self, op: Operator, graph: Graph) -> list[int]:
        """The op's inputs without the ones its kernel never reads. Called after constant
        folding: RESHAPE keeps its shape operand only when it was evaluated (the SHAPE ->
        STRIDED_SLICE -> PACK chain of an open batch folds); one that could not be is detached,
        the output shape being static, so whatever computes it is dead code."""
        return list(op.inputs)

    def can_fold(self, op: Operator, graph: Graph) -> bool:
        """True when the result is known at compile time: by default, when every input is a
        constant (SHAPE, which reads only its input's static shape, says so itself)."""
        present = [t for t in op.inputs if t >= 0]
        return bool(present) and all(graph.tensors[t].is_constant for t in present)

    def fold(self, op: Operator, graph: Graph) -> list[np.ndarray] | None:
        """The op's outputs computed in Python with TFLM's semantics, one array per output with
        the output tensor's dtype, or None when this lowering cannot evaluate it (it then runs on
        the device). Called only when ``can_fold``. Raise ModelError for a malformed op."""
        return None

    def aliases_input(self, op: Operator, graph: Graph) -> bool:
        """True when the output is byte-for-byte the input (RESHAPE): no copy, same buffer."""
        return False

    def can_run_in_place(self, op: Operator, graph: Graph) -> bool:
        """True when the output may share input 0's buffer if input 0 dies here (element-wise ops
        that read each element before writing it)."""
        return False

    def in_place_input(self, op: Operator, graph: Graph) -> int | None:
        """Which input the output may overwrite when that input dies at this op (the planner
        then gives both one buffer), or None. The kernel must read each element of that input
        before writing the output element at the same place, and read nothing else of it."""
        return 0 if self.can_run_in_place(op, graph) else None

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        """Temporary workspace bytes the kernel needs during this op only."""
        return 0

    def sources_for(self, op: Operator, graph: Graph) -> tuple[str, ...]:
        """The kernel files this op instance needs: ``float32_sources`` too when one of its
        run-time tensors is float32."""
        computes_in_float = any(
            t >= 0 and graph.tensors[t].dtype == "float32" and not graph.tensors[t].is_constant
            for t in (*op.inputs, *op.outputs))
        return self.kernel_sources + (self.float32_sources if computes_in_float else ())

    def overlap(self, op: Operator, graph: Graph, k: int,
                variant: KernelVariant | None = None) -> "Overlap | None":
        """How far below input ``k`` the output may start and still overlap it when that input
        dies at this op (microbuild/compiler/overlap.py), for the reference kernel (``variant``
        None) or the given variant; None when the output must not overlap it. Only kernels that
        walk their output pixels in order and never read an input pixel again once past it may
        say anything but None."""
        return None

    def kernel_op(self, op: Operator) -> Operator:
        """The operator the kernel variants see (a fused op's main part; usually ``op``)."""
        return op

    def kernel_call(self, op: Operator, graph: Graph, ctx: EmitContext, function: str,
                    args: list[str], weights: int | None = None) -> str:
        """``function(args);`` for the reference kernel, or the call to the variant chosen for
        this op (``ctx.variant``): its function with the same arguments plus the scratch
        pointer, and ``args[weights]`` (the op's input 1) replaced by the weights pre-arranged
        the variant's way."""
        variant = getattr(ctx, "variant", None)
        if variant is None:
            return f"{function}({', '.join(args)});"
        args = list(args)
        if variant.arrange is not None:
            if weights is None:
                raise RuntimeError(f"{variant.name} arranges weights {op.opcode} does not pass")
            tensor = graph.tensors[op.inputs[1]]
            arranged = np.ascontiguousarray(variant.arrange(tensor.data, op, graph))
            ctype = _CTYPE_OF_DTYPE[arranged.dtype.name]
            symbol = ctx.const_array(ctx.symbol(f"weights_{variant.name}"), arranged, ctype)
            native = _CTYPE_OF_DTYPE.get(tensor.dtype, "int8_t")
            args[weights] = (symbol if ctype == native
                             else f"(const {native} *)(const void *){symbol}")
        args.append(ctx.scratch_ptr() if variant.scratch_bytes(op, graph) > 0 else "(void *)0")
        return f"{variant.function}({', '.join(args)});"


# Every dtype a tensor can have: what a compile-time-only operator lets through the generic check
# (its own ``check`` then says why it could not be evaluated).
ANY_DTYPE = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                       "float16", "float32", "float64", "bool", "string", "int4", "complex64"})


class CompileTimeLowering(OpLowering):
    """An operator microbuild evaluates only at compile time (SHAPE, CAST of constants, integer
    shape arithmetic): there is no kernel, so when its inputs are not all known it is refused."""

    runs_on_device = False
    dtypes = ANY_DTYPE

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return ["microbuild evaluates this operator only at compile time, and here its inputs "
                "are not all known before the model runs (they depend on the model's inputs)"]


REGISTRY: dict[str, OpLowering] = {}


def register(cls: type[OpLowering]) -> type[OpLowering]:
    """Class decorator: make ``cls`` the lowering for its ``opcode``."""
    if cls.opcode in REGISTRY:
        raise RuntimeError(f"two lowerings registered for {cls.opcode}")
    REGISTRY[cls.opcode] = cls()
    return cls
