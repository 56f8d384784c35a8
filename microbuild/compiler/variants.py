"""Kernel variants: which implementation of an operator each op instance runs.

Every operator has its reference kernel (``runtime/kernels/<op>.c``, bit-exact with TFLM). The
operators that dominate real models also have *variants* beside it: the same arithmetic, so the
same bytes out, organised for speed (other loop orders, blocking, weights pre-arranged at compile
time, Arm DSP or Helium instructions). A variant is declared by its operator's lowering
(``OpLowering.variants``) as a :class:`KernelVariant`.

Choosing one per op instance happens here, before memory planning (a variant may need scratch):

1. the board's CPU decides which variants are *legal* (:func:`cpu_features`); a variant that
   needs an instruction set the CPU lacks is never a candidate;
2. the variant must *accept* the op instance (e.g. a 1x1-only kernel);
3. among the candidates, a forced choice (tests, the tuner's candidate builds) wins, then the
   tuning log's measured winner for this CPU and op signature, then the heuristic default (the
   candidate with the highest ``rank``: the most specialised kernel the CPU can run).

A float variant that adds a sum in another order (``reorders_float_sums``: Helium's four float
lanes) gives outputs that are not bit-exact with TFLM. It is a candidate only when the user asks
for it (``Selection.allow_float_reorder``, ``--allow-float-reorder``); otherwise neither the
default, nor a tuning log, nor ``--variant`` picks it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

import numpy as np

from microbuild.compiler.tuning_log import TuningLog
from microbuild.model.ir import Graph, Operator
from microbuild.errors import ModelError

if TYPE_CHECKING:
    from microbuild.compiler.ops.base import OpLowering

REFERENCE = "reference"


class Refusal(str):
    """Why a variant does not take an op instance, returned by an ``accepts`` function in place
    of False: it is falsy like False, and its text reaches ``compile --json`` and the compile
    table, so a layer left on the reference kernel says which check refused it."""

    def __bool__(self) -> bool:
        return False


@dataclass(frozen=True)
class KernelVariant:
    """One implementation of an operator's kernel besides the reference.

    The C ``function`` takes exactly the reference kernel's arguments, then ``void *scratch``
    (the op's scratch area in the workspace, NULL when ``scratch`` is None). When ``arrange`` is
    set, the weights argument (the op's input 1) points at ``arrange(weights, op, graph)`` instead
    of the tensor as the model stores it: pre-arranged once at compile time, so the device never
    reshuffles them, and the original layout is not stored at all.
    """

    opcode: str
    name: str
    function: str
    sources: tuple[str, ...]  # runtime/kernels/*.c files, besides the reference kernel's
    features: frozenset[str] = frozenset()  # CPU features it needs: "dsp", "mve"
    rank: int = 1  # the heuristic default prefers the highest rank among legal candidates
    accepts: Callable[[Operator, Graph], bool] | None = None
    arrange: Callable[[np.ndarray, Operator, Graph], np.ndarray] | None = None
    scratch: Callable[[Operator, Graph], int] | None = None
    description: str = ""
    # A variant whose arranged weights are wider than the model's names here the variant with the
    # same arithmetic on weights half its size (dsp16 -> dsp): the fit error's lever when a
    # firmware with it does not fit (microbuild/firmware/fit/).
    compact: str = ""
    # True when the kernel adds a float sum in another order than TFLM's reference kernel (vector
    # lanes' partial sums): outputs differ from TFLM's by rounding, so the variant is a candidate
    # only with Selection.allow_float_reorder.
    reorders_float_sums: bool = False

    # The element type of the activations the variant's kernel reads: an int16 (16x8) instance
    # of an operator never gets an int8 variant.
    activation_dtype: str = "int8"
    # Whether the output may lie over the input, shifted down (microbuild/compiler/overlap.py):
    # 0 when the kernel does not walk output pixels in order (then it may not), else how many
    # output pixels it handles per step (the reads it may still make while writing one).
    overlap_group: int = 0
    # True when the kernel walks all pixels once per block of channels: an overlapping output must
    # then start a whole number of pixels below the input (writes land on finished channels).
    overlap_whole_pixels: bool = False
    # True when the kernel reads a table the compiler emits as constants (about 1 KiB per op):
    # not a candidate where constants are copied to RAM (Target.constants_in_ram, the AVR's
    # 2 KiB), where the table would cost more RAM than the whole model's workspace.
    const_table: bool = False

    def accepts_op(self, op: Operator, graph: Graph) -> bool:
        return self.refusal(op, graph) is None

    def refusal(self, op: Operator, graph: Graph) -> str | None:
        """None when the variant takes this op instance, else why not: the ``accepts`` check's
        :class:`Refusal`, or the first paragraph of its docstring when it returned False."""
        if op.inputs and op.inputs[0] >= 0 and \
                graph.tensors[op.inputs[0]].dtype != self.activation_dtype:
            return (f"reads {self.activation_dtype} activations; this op's are "
                    f"{graph.tensors[op.inputs[0]].dtype}")
        if self.accepts is None:
            return None
        verdict = self.accepts(op, graph)
        if verdict:
            return None
        if isinstance(verdict, str) and len(verdict) > 0:  # a Refusal is falsy: test its length
            return str(verdict)
        doc = " ".join((self.accepts.__doc__ or "").strip().split("\n\n")[0].split())
        return f"does not take this instance (it takes: {doc})" if doc else \
            "does not take this instance"

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        return int(self.scratch(op, graph)) if self.scratch is not None else 0


# ---- the CPU ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """What the compiler needs to know about the CPU: its name (the tuning log's key) and the
    instruction-set features variants may require."""

    cpu: str = "generic"
    features: frozenset[str] = frozenset()
    # The board places read-only data in a writable region while its code is not (AVR: avr-gcc
    # copies .rodata to RAM at boot): a constant table costs RAM there.
    constants_in_ram: bool = False

    @classmethod
    def of_board(cls, board: Any) -> "Target":
        cpu = board.cpu if hasattr(board, "cpu") else dict(board)
        return cls(cpu=str(cpu.get("core", "generic")), features=cpu_features(cpu),
                   constants_in_ram=_constants_in_ram(board))

    def to_dict(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "features": sorted(self.features)}


def _constants_in_ram(board: Any) -> bool:
    """Whether ``board`` keeps .rodata in a writable region and its code in a read-only one."""
    try:
        regions, placement = board.regions, board.placement
    except AttributeError:  # a bare cpu mapping (tests, the tuner): no memory map
        return False
    rodata, text = regions.get(placement.get("rodata", "")), regions.get(placement.get("text", ""))
    return bool(rodata is not None and text is not None and rodata.writable
                and not text.writable)


# Architectures with the Arm DSP extension (SMLAD, SXTB16, ...) in every implementation.
_DSP_ARCHS = {"armv7e-m", "armv8.1-m.main"}
# Cores with Helium (M-profile Vector Extension, integer at least).
_MVE_CORES = {"cortex-m55", "cortex-m85"}


def cpu_features(cpu: Mapping[str, Any]) -> frozenset[str]:
    """The variant features a board's ``cpu`` block offers. ``cpu.features`` in the YAML can
    add to or (with a leading '-') remove from what the architecture implies, e.g. a
    Cortex-M33 built with its DSP extension: ``features: [dsp]``."""
    arch = str(cpu.get("arch", "")).lower()
    core = str(cpu.get("core", "")).lower()
    features: set[str] = set()
    if arch in _DSP_ARCHS:
        features.add("dsp")
    if core in _MVE_CORES:
        features.add("mve")
    if arch.startswith("rv32"):
        features.add("rv32")
    for extra in cpu.get("features", []) or []:
        extra = str(extra)
        if extra.startswith("-"):
            features.discard(extra[1:])
        else:
            features.add(extra)
    return frozenset(features)


# ---- op signatures ----------------------------------------------------------------------------------
_IGNORED_OPTIONS = {"fused_activation_function", "fused_from", "asymmetric_quantize_inputs",
                    "quantized_bias_type", "residual_add"}


def op_signature(op: Operator, graph: Graph) -> str:
    """What decides a kernel's speed, as one string: the opcode, every input's shape (constants
    marked), the output shapes and the options that shape the loops. Two ops with the same
    signature run the same loops, so one measurement serves both, across models."""
    parts = [op.opcode]
    for t in op.inputs:
        if t < 0:
            parts.append("-")
            continue
        tensor = graph.tensors[t]
        shape = "x".join(str(d) for d in tensor.shape) or "scalar"
        parts.append(("const:" if tensor.is_constant else "") + shape)
    outs = ",".join("x".join(str(d) for d in graph.tensors[t].shape) for t in op.outputs)
    # A fused op (CONV_2D+ADD) carries its parts as options: the loops are the conv's.
    source = op.options.get("conv") if isinstance(op.options.get("conv"), Operator) else op
    options = {k: v for k, v in sorted(source.options.items())
               if k not in _IGNORED_OPTIONS and not isinstance(v, Operator)}
    text = " ".join(parts) + f" -> {outs}"
    if options:
        text += " " + json.dumps(options, sort_keys=True, separators=(",", ":"), default=str)
    return text


# ---- choosing ----------------------------------------------------------------------------------------
def _allowed(variant: KernelVariant, target: Target, allow_float_reorder: bool) -> bool:
    """The CPU can run it, and it keeps TFLM's bits or the user accepted reordered float sums."""
    return variant.features <= target.features and (
        allow_float_reorder or not variant.reorders_float_sums) and not (
        variant.const_table and target.constants_in_ram)


def candidates(lowering: "OpLowering", op: Operator, graph: Graph,
               target: Target, allow_float_reorder: bool = False) -> list[str]:
    """The variant names ``op`` may run on ``target``: the reference first, then every legal
    variant that accepts this instance (one that reorders float sums only when allowed)."""
    names = [REFERENCE]
    kop = lowering.kernel_op(op)
    for variant in lowering.variants:
        if _allowed(variant, target, allow_float_reorder) and variant.accepts_op(kop, graph):
            names.append(variant.name)
    return names


def refusals(lowering: "OpLowering", op: Operator, graph: Graph, target: Target,
             allow_float_reorder: bool = False) -> dict[str, str]:
    """Every variant ``target``'s CPU could run that does not take ``op``, with the reason
    (variants for another activation type, int8 ones for an int16 op, are not candidates)."""
    kop = lowering.kernel_op(op)
    dtype = _activation_dtype(kop, graph)
    found = {}
    for variant in lowering.variants:
        if variant.features <= target.features and dtype in (None, variant.activation_dtype):
            reason = variant.refusal(kop, graph)
            if reason is None and variant.reorders_float_sums and not allow_float_reorder:
                reason = ("adds float sums in another order than TFLM (not bit-exact); "
                          "--allow-float-reorder allows it")
            if reason is None and variant.const_table and target.constants_in_ram:
                reason = ("reads a constant table, and this board copies constants to RAM")
            if reason is not None:
                found[variant.name] = reason
    return found


def _activation_dtype(kop: Operator, graph: Graph) -> str | None:
    return graph.tensors[kop.inputs[0]].dtype if kop.inputs and kop.inputs[0] >= 0 else None


def _variants_for_dtype(lowering: "OpLowering", op: Operator, graph: Graph) -> bool:
    """Whether the op has variants for its activation type (an int32 ADD has none)."""
    dtype = _activation_dtype(lowering.kernel_op(op), graph)
    return any(dtype in (None, v.activation_dtype) for v in lowering.variants)


def default_variant(lowering: "OpLowering", op: Operator, graph: Graph, target: Target,
                    allow_float_reorder: bool = False) -> str:
    """The heuristic: the highest-ranked legal candidate (ties: declaration order)."""
    best, best_rank = REFERENCE, 0
    kop = lowering.kernel_op(op)
    for variant in lowering.variants:
        if (_allowed(variant, target, allow_float_reorder) and variant.accepts_op(kop, graph)
                and variant.rank > best_rank):
            best, best_rank = variant.name, variant.rank
    return best


@dataclass
class Selection:
    """How to choose: the CPU, a tuning log (measured winners) and forced choices.

    ``force`` maps an opcode (every op of that type), an op index (as ``int``) or ``"*"`` (every
    op that has the variant; ``{"*": "reference"}`` is the reference kernels throughout) to a
    variant name; an op index beats an opcode beats ``"*"``. A forced variant the op cannot run is an error, not a
    silent fallback, except with ``force_where_possible`` (the tuner's candidate builds)."""

    target: Target = field(default_factory=Target)
    tuning: TuningLog | None = None
    force: Mapping[Any, str] = field(default_factory=dict)
    force_where_possible: bool = False
    # False: every op runs whole (no row-streamed region, microbuild/compiler/row_stream.py):
    # what the tuner's candidate builds need to read each op's tensors from the workspace.
    row_stream: bool = True
    # True: variants that reorder float sums (not bit-exact with TFLM) are candidates too.
    allow_float_reorder: bool = False

    def __post_init__(self) -> None:
        # An op index may come as text (the command line's "3=reference", JSON keys): it means
        # the op, not an opcode called "3".
        force = dict(self.force)
        # The permission travels inside the forced choices (FLOAT_REORDER_KEY), so every path
        # that carries --variant to a compile (the SCons tool, generated projects, ci jobs)
        # carries it too.
        if force.pop(FLOAT_REORDER_KEY, None) is not None:
            self.allow_float_reorder = True
        self.force = {int(k) if isinstance(k, str) and k.isdigit() else k: v
                      for k, v in force.items()}

    def choose(self, lowering: "OpLowering", op: Operator, graph: Graph) -> tuple[str, str]:
        """(variant name, why) for one op."""
        legal = candidates(lowering, op, graph, self.target, self.allow_float_reorder)
        # The kernel's own opcode too: forcing CONV_2D also forces the fused CONV_2D+ADD.
        kernel_opcode = lowering.kernel_op(op).opcode
        key = next((k for k in (op.index, op.opcode, kernel_opcode, "*") if k in self.force),
                   None)
        wanted = self.force[key] if key is not None else None
        if wanted is not None:
            if wanted in legal:
                return wanted, "forced"
            # "*" means every op that has such a variant; a named op must have it.
            if not self.force_where_possible and key != "*":
                known = [REFERENCE] + [v.name for v in lowering.variants]
                if wanted not in known:
                    raise ModelError(f"{op.describe()}: no kernel variant '{wanted}' for "
                                     f"{op.opcode}; known: {', '.join(known)}")
                if not self.allow_float_reorder and wanted in candidates(
                        lowering, op, graph, self.target, allow_float_reorder=True):
                    raise ModelError(f"{op.describe()}: variant '{wanted}' adds float sums in "
                                     "another order than TFLM (its outputs are not bit-exact "
                                     "with TFLM's); add --allow-float-reorder to use it")
                raise ModelError(f"{op.describe()}: variant '{wanted}' cannot run this op on "
                                 f"{self.target.cpu} (candidates: {', '.join(legal)})")
        if self.tuning is not None:
            tuned = self.tuning.best(self.target.cpu, op_signature(op, graph))
            if tuned is not None and tuned in legal:
                return tuned, "tuned"
        return (default_variant(lowering, op, graph, self.target, self.allow_float_reorder),
                "default")


def variant_named(lowering: "OpLowering", name: str) -> KernelVariant | None:
    """The KernelVariant called ``name`` (None for the reference)."""
    if name == REFERENCE:
        return None
    for variant in lowering.variants:
        if variant.name == name:
            return variant
    raise KeyError(f"{lowering.opcode} has no variant {name!r}")


class BoundLowering:
    """An operator's lowering with the variant chosen for one op instance: what the planner and
    the code generator see. Everything not variant-specific is the lowering's own."""

    def __init__(self, lowering: "OpLowering", variant: KernelVariant | None, why: str = "",
                 refused: Mapping[str, str] | None = None) -> None:
        self.lowering = lowering
        self.variant = variant
        self.why = why
        # The variants this CPU could run that did not take the op, with why (see Refusal).
        self.refused = dict(refused or {})

    @property
    def variant_name(self) -> str:
        return self.variant.name if self.variant is not None else REFERENCE

    def sources_for(self, op: Operator, graph: Graph) -> tuple[str, ...]:
        extra = self.variant.sources if self.variant is not None else ()
        return tuple(self.lowering.sources_for(op, graph)) + tuple(extra)

    def scratch_bytes(self, op: Operator, graph: Graph) -> int:
        own = self.lowering.scratch_bytes(op, graph)
        if self.variant is None:
            return own
        return max(own, self.variant.scratch_bytes(self.lowering.kernel_op(op), graph))

    def overlap(self, op: Operator, graph: Graph, k: int):
        """How the output may overlap input ``k`` with this op's kernel (see
        OpLowering.overlap), or None."""
        return self.lowering.overlap(op, graph, k, self.variant)

    def emit(self, op: Operator, graph: Graph, ctx: Any) -> str:
        ctx.variant = self.variant
        try:
            return self.lowering.emit(op, graph, ctx)
        finally:
            ctx.variant = None

    def __getattr__(self, name: str):
        return getattr(self.lowering, name)


def bind(graph: Graph, lowerings: list["OpLowering"], selection: Selection | None
         ) -> list[BoundLowering]:
    """One BoundLowering per op: the variant ``selection`` chooses (reference without one)."""
    bound = []
    for op, lowering in zip(graph.operators, lowerings):
        if selection is None:
            bound.append(BoundLowering(lowering, None, "reference"))
            continue
        name, why = selection.choose(lowering, op, graph)
        if why != "forced" and not _variants_for_dtype(lowering, op, graph):
            why = "only kernel"  # no variant at all, or none for this activation type
        bound.append(BoundLowering(lowering, variant_named(lowering, name), why,
                                   refusals(lowering, op, graph, selection.target,
                                            selection.allow_float_reorder)))
    return bound


# The forced-choices key that carries Selection.allow_float_reorder through the paths that only
# pass forced variants on (``{"float_reorder": "allow"}``); not an opcode, so no clash.
FLOAT_REORDER_KEY = "float_reorder"


def allowing_float_reorder(variants: Mapping[str, str] | None, allow: bool = True
                           ) -> dict[str, str]:
    """``variants`` (forced choices) with the permission to reorder float sums added."""
    forced = dict(variants or {})
    if allow:
        forced[FLOAT_REORDER_KEY] = "allow"
    return forced


# ---- a Selection as JSON (the SCons tool passes it to the model compile action) ----------------
def selection_spec(target: Target, tuning: str | None, force: Mapping[Any, str] | None,
                   row_stream: bool = True) -> dict[str, Any]:
    spec = {"cpu": target.cpu, "features": sorted(target.features), "tuning": tuning,
            "force": {str(k): v for k, v in (force or {}).items()}}
    if not row_stream:  # only when off: the usual spec (a build input) stays the same
        spec["row_stream"] = False
    if target.constants_in_ram:  # likewise only when set (AVR)
        spec["constants_in_ram"] = True
    return spec


def selection_from_spec(spec: Mapping[str, Any]) -> Selection:
    tuning = TuningLog.load(spec["tuning"]) if spec.get("tuning") else None
    return Selection(Target(spec.get("cpu", "generic"), frozenset(spec.get("features", ())),
                            bool(spec.get("constants_in_ram", False))),
                     tuning=tuning, force=dict(spec.get("force") or {}),
                     row_stream=bool(spec.get("row_stream", True)))
