"""Turn a checked graph and its memory plan into the C sources of one model.

Three files come out, every symbol carrying the user's prefix:

- ``<prefix>.h``: the public API: I/O shapes, types, quantization, the workspace size and
  ``int <prefix>_run(inputs..., outputs..., void *workspace)``;
- ``<prefix>.c``: one kernel call per operator in execution order, every parameter a literal
  constant (file-scope ``static const`` structs), every pointer resolved at compile time;
- ``<prefix>_weights.c``: the constant tensors and derived per-channel arrays, aligned and placed in
  the ``.mb_weights`` section through the ``MB_WEIGHTS_ATTR`` macro.

Graph inputs and outputs live in the caller's buffers; the workspace holds intermediates and op
scratch areas only, at offsets chosen by :mod:`microbuild.compiler.planner`. The emitter is
also the :class:`EmitContext` each operator's lowering writes its call through; codegen.py runs
the pipeline that leads here.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from microbuild.compiler.compiled_model import CompiledModel, TensorSpec, reset_fill
from microbuild.compiler.op_stats import macs as op_macs
from microbuild.compiler.planner import MemoryPlan
from microbuild.compiler import row_stream_fc
from microbuild.compiler.row_stream import RowBand, Shift
from microbuild.compiler.variants import BoundLowering, op_signature
from microbuild.compiler.workspace_split import part_symbol
from microbuild.errors import ModelError
from microbuild.model.ir import Graph, Operator
from microbuild.paths import runtime_dir

# numpy dtype name -> C type. bool is one byte in TFLite.
CTYPES = {
    "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t",
    "int32": "int32_t", "uint32": "uint32_t", "int64": "int64_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "bool": "uint8_t",
}
_NUMPY_OF_CTYPE = {
    "int8_t": np.int8, "uint8_t": np.uint8, "int16_t": np.int16, "uint16_t": np.uint16,
    "int32_t": np.int32, "uint32_t": np.uint32, "int64_t": np.int64, "uint64_t": np.uint64,
    "float": np.float32, "double": np.float64,
}



# Row streaming's "rows still needed" move, emitted into a model whose region has any: n bytes
# from src to dst, dst before src, the ranges possibly overlapping, so copying forward is safe in
# chunks of any size (a chunk's store ends before the next chunk's load starts). On Helium 16
# bytes per VLDRB/VSTRB, the last chunk tail-predicated: newlib's memmove moved resnet8's 94 KB
# of rows on the M55 in 73k instructions, 0.77 a byte. Elsewhere memmove (on the DSP cores it is
# under 1% of a streamed model). In the model's file, not a runtime header: project formats copy
# the headers the runtime's sources include, and no source includes this. A blob (table
# executor) runs each move as its memmove kernel (microbuild/blob/calls.py).
_MOVE_ROWS = """\
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif
static void mb_move_rows(uint8_t *dst, const uint8_t *src, int32_t n)
{
#if defined(__ARM_FEATURE_MVE)
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vstrbq_u8(dst + i, vldrbq_u8(src + i));
    }
    if (i < n) {
        const mve_pred16_t last = vctp8q((uint32_t)(n - i));
        vstrbq_p_u8(dst + i, vldrbq_z_u8(src + i, last), last);
    }
#else
    memmove(dst, src, (size_t)n);
#endif
}"""

class ModelEmitter:
    """Builds the three files; also the :class:`EmitContext` lowerings see, one op at a time."""

    def __init__(self, graph: Graph, lowerings: list[BoundLowering], plan: MemoryPlan,
                 prefix: str) -> None:
        self.graph = graph
        self.lowerings = lowerings
        self.plan = plan
        self.prefix = prefix
        self.PREFIX = prefix.upper()
        self.statics: list[str] = []
        self.arrays: list[tuple[str, str, np.ndarray, str]] = []  # symbol, ctype, values, comment
        self._array_by_content: dict[tuple[str, bytes, tuple], str] = {}
        self._symbols: set[str] = set()
        self._tensor_symbols: dict[int, str] = {}
        self._op: Operator | None = None
        self.variant = None  # set by BoundLowering.emit for the op being emitted
        # While emitting a band call of a row-streamed region (row_stream.py): the rows the call
        # covers (a RowBand, read by the conv lowerings), the operands' row addresses, and a
        # suffix keeping each band shape's parameter struct apart.
        self.band = None
        self.views: dict[int, str] = {}
        self.symbol_suffix = ""
        self._band_macro = False  # MB_BAND_FUNCTION defined yet

    # ---- EmitContext -----------------------------------------------------------------------
    def ptr(self, tensor_index: int) -> str:
        if tensor_index in self.views:  # a band call of a row-streamed region: a row's address
            return self.views[tensor_index]
        tensor = self.graph.tensors[tensor_index]
        if tensor.is_constant:
            return self._tensor_array(tensor_index)
        if tensor.is_variable:
            return f"({CTYPES[tensor.dtype]} *)(st + {self.plan.state_locations[tensor_index].offset})"
        loc = self.plan.locations.get(tensor_index)
        if loc is None:
            raise RuntimeError(f"tensor {tensor_index} has no place in the memory plan")
        return f"({CTYPES[tensor.dtype]} *)({self._base(loc.region)} + {loc.offset})"

    def _base(self, region: int) -> str:
        """The C name of a workspace part's first byte: ``ws`` (the caller's workspace) or, for
        a workspace split across memory regions, the model's own array in that region."""
        return "ws" if region == 0 else part_symbol(self.prefix, self.plan.regions[region][0])

    def const_array(self, name: str, values: np.ndarray, ctype: str) -> str:
        if self.symbol_suffix:  # a band's arrays are the op's own (one copy, by content)
            name = name.removesuffix(self.symbol_suffix)
        values = np.asarray(values)
        if ctype in _NUMPY_OF_CTYPE:
            values = values.astype(_NUMPY_OF_CTYPE[ctype])
        key = (ctype, values.tobytes(), values.shape)
        if key in self._array_by_content:  # identical arrays (e.g. shared multipliers) once
            return self._array_by_content[key]
        symbol = self._unique(f"{self.prefix}_{name}")
        where = f"op {self._op.index} {self._op.opcode}" if self._op is not None else ""
        self.arrays.append((symbol, ctype, values, f"{name} ({where})" if where else name))
        self._array_by_content[key] = symbol
        return symbol

    def static(self, declaration: str) -> None:
        self.statics.append(declaration.rstrip())

    def symbol(self, name: str) -> str:
        assert self._op is not None
        return f"op{self._op.index}_{name}{self.symbol_suffix}"

    def scratch_ptr(self) -> str:
        assert self._op is not None
        buffer = self.plan.scratch_buffer(self._op.index)
        if buffer is None:
            raise RuntimeError(f"{self._op.describe()} asked for scratch but reserved none")
        return f"(void *)({self._base(buffer.region)} + {buffer.offset})"

    # ---- generation ------------------------------------------------------------------------
    def _unique(self, symbol: str) -> str:
        base, n = symbol, 2
        while symbol in self._symbols:
            symbol = f"{base}_{n}"
            n += 1
        self._symbols.add(symbol)
        return symbol

    def _tensor_array(self, t: int) -> str:
        if t not in self._tensor_symbols:
            tensor = self.graph.tensors[t]
            if tensor.dtype not in CTYPES:
                raise ModelError(f"constant tensor {t} '{tensor.name}' has type {tensor.dtype}, "
                                 "which microbuild cannot store")
            symbol = self._unique(f"{self.prefix}_t{t}")
            values = tensor.data.astype(np.uint8) if tensor.dtype == "bool" else tensor.data
            self.arrays.append((symbol, CTYPES[tensor.dtype], values,
                                f"tensor {t} '{tensor.name}' {list(tensor.shape)}"))
            self._tensor_symbols[t] = symbol
        return self._tensor_symbols[t]

    def _specs(self, indices: list[int]) -> list[TensorSpec]:
        specs = []
        for t in indices:
            tensor = self.graph.tensors[t]
            quant = tensor.quant
            specs.append(TensorSpec(
                name=tensor.name, tensor=t, shape=tuple(tensor.shape), dtype=tensor.dtype,
                scale=float(quant.scale[0]) if quant is not None else 0.0,
                zero_point=int(quant.zero_point[0]) if quant is not None else 0,
                bytes=tensor.nbytes))
        return specs

    def run(self) -> CompiledModel:
        g = self.graph
        self.op_bodies: list[tuple[str, list[str]]] = []  # per operator: comment, C lines
        inputs, outputs = self._specs(g.inputs), self._specs(g.outputs)

        body: list[str] = []
        headers: list[str] = []
        kernels: list[str] = []
        ops = []
        region = self.plan.row_region
        for op, lowering in zip(g.operators, self.lowerings):
            if region is not None and op.index == region.first:
                # One function, called by both run and run_op (its calls are many).
                function = f"{self.prefix}_streamed_ops_{region.first}_{region.last}"
                region_body = [f"    {line}" for line in self._emit_region().splitlines()]
                self.static("\n".join([f"static void {function}(uint8_t *const ws)", "{",
                                        *region_body, "}"]))
                code = f"{function}(ws);"
            elif region is not None and op.index in region.ops:
                code = f"/* streamed with ops {region.first}-{region.last}, in op {region.first} */"
            else:
                self._op = op
                code = lowering.emit(op, g, self)
                self._op = None
            ins = ", ".join(f"t{t}" for t in op.inputs if t >= 0)
            outs = ", ".join(f"t{t}" for t in op.outputs)
            body.append(f"    /* op {op.index} {op.opcode}: {ins} -> {outs} */")
            op_lines = [f"    {line}" if line.strip() else "" for line in code.rstrip().splitlines()]
            body += op_lines
            self.op_bodies.append((f"op {op.index} {op.opcode}: {ins} -> {outs}", op_lines))
            for h in lowering.headers:
                if h not in headers:
                    headers.append(h)
            for k in lowering.sources_for(op, g):
                # Lowerings may name a kernel by file name alone ("add.c") or by its path under
                # runtime/ ("kernels/add.c"); both mean runtime/kernels/add.c.
                k = k if "/" in k else f"kernels/{k}"
                if k not in kernels:
                    kernels.append(k)
            entry = {"index": op.index, "model_index": op.model_index, "opcode": op.opcode,
                     "inputs": list(op.inputs),
                     "outputs": list(op.outputs), "scratch_bytes": lowering.scratch_bytes(op, g),
                     "kernel": lowering.variant_name, "kernel_choice": lowering.why,
                     "signature": op_signature(op, g),
                     "tensor_bytes": {str(t): g.tensors[t].nbytes
                                      for t in [*op.inputs, *op.outputs] if t >= 0},
                     # For the reports: shapes (None: an absent optional input) and MACs.
                     "input_shapes": [list(g.tensors[t].shape) if t >= 0 else None
                                      for t in op.inputs],
                     "output_shapes": [list(g.tensors[t].shape) for t in op.outputs],
                     "macs": op_macs(op, g)}
            refused = getattr(lowering, "refused", None)
            if refused:  # which check kept a variant off this op, and why
                entry["variants_refused"] = dict(refused)
            if "fused_from" in op.options:  # the original operator indices, as in the model
                entry["fused_from"] = list(op.options["fused_from"])
            ops.append(entry)
        # Inputs and outputs have planned slots in the workspace; a caller that passes its own
        # buffers instead pays one copy each way (memmove: the caller may pass the slot itself).
        copy_in = []
        for k, t in enumerate(g.inputs):
            slot = f"(ws + {self.plan.locations[t].offset})"
            copy_in.append(f"    if ((const void *)in{k} != (const void *){slot}) {{")
            copy_in.append(f"        memmove({slot}, in{k}, {g.tensors[t].nbytes});")
            copy_in.append("    }")
        body[:0] = copy_in
        for k, t in enumerate(g.outputs):
            slot = f"(ws + {self.plan.locations[t].offset})"
            if g.tensors[t].is_constant:
                # Known at compile time (every operator it depends on was folded): its slot is
                # filled from the constant, so the slot and out0 both hold it.
                body.append(f"    memcpy({slot}, {self._tensor_array(t)}, {g.tensors[t].nbytes});")
            body.append(f"    if ((void *)out{k} != (void *){slot}) {{")
            body.append(f"        memmove(out{k}, {slot}, {g.tensors[t].nbytes});")
            body.append("    }")

        signature = self._signature(inputs, outputs)
        # Only arrays the code names are stored: a kernel variant that takes its weights
        # pre-arranged leaves the model's own layout unreferenced, and it must cost no flash.
        # Variables with a starting value (resource variables): reset copies it from flash.
        self._initial_symbols = {
            t: self.const_array(f"t{t}_initial", g.tensors[t].initial, CTYPES[g.tensors[t].dtype])
            for t in sorted(self.plan.state_locations) if g.tensors[t].initial is not None}
        used_text = "\n".join(body + self.statics + list(self._initial_symbols.values()))
        self.arrays = [a for a in self.arrays
                       if re.search(rf"\b{re.escape(a[0])}\b", used_text)]
        weights_bytes = sum(int(v.nbytes) for _, _, v, _ in self.arrays)
        sources = {
            f"{self.prefix}.h": self._header(inputs, outputs, signature),
            f"{self.prefix}.c": self._model_c(headers, body, signature, inputs, outputs),
            f"{self.prefix}_weights.c": self._weights_c(),
        }
        return CompiledModel(graph=g, plan=self.plan, prefix=self.prefix, sources=sources,
                             kernel_sources=kernels, runtime_dir=runtime_dir(), inputs=inputs,
                             outputs=outputs, workspace_bytes=self.plan.workspace_bytes,
                             weights_bytes=weights_bytes, ops=ops,
                             state_bytes=self.plan.state_bytes,
                             op_code=["\n".join(lines) for _, lines in self.op_bodies])

    def _emit_region(self) -> str:
        """The row-streamed region's calls and row moves, in the order row_stream.py decided.
        Each band shape of an op becomes a small static function (its parameter struct, the
        kernel call on the operands' workspace offsets), so the many calls of the region are
        short: ``band(ws, input offset, output offset[, residual offset]);``."""
        region = self.plan.row_region
        g = self.graph
        lines = [f"/* ops {region.first}-{region.last} streamed row by row: "
                 f"{len(region.calls())} band calls, row buffers "
                 + ", ".join(f"t{t} {region.capacity[t]} rows"
                             for t in sorted(region.capacity)) + " */"]
        functions: dict[tuple[int, int, int, int], str] = {}
        bands_per_op: dict[int, int] = {}
        if any(isinstance(s, Shift) and s.rows > 0 and s.source > 0 for s in region.steps):
            self.static(_MOVE_ROWS)
        fc_constants: dict[int, tuple[str, str]] = {}
        for step in region.steps:
            if isinstance(step, Shift):
                row = region.row_bytes[step.tensor]
                base = self.plan.row_locations[step.tensor].offset
                if step.rows > 0 and step.source > 0:
                    lines.append(f"mb_move_rows(ws + {base}, ws + {base + step.source * row}, "
                                 f"{step.rows * row}); /* t{step.tensor}: rows still needed */")
                continue
            if step.op in region.partial_sums():  # a FULLY_CONNECTED summing band by band
                at = {t: (self.plan.row_locations[t] if t in region.capacity
                          else self.plan.locations[t]).offset + slot * region.row_bytes[t]
                      for t, slot in step.slots}
                self._op = g.operators[step.op]
                lines.append(row_stream_fc.band_call(
                    self, region, step, at, self.plan.sums_locations[step.op].offset,
                    fc_constants))
                self._op = None
                continue
            key = (step.op, step.v1 - step.v0, step.y1 - step.y0, step.pad_top)
            if key not in functions:
                functions[key] = self._band_function(step, key, bands_per_op)
            offsets = []
            for t, slot in step.slots:
                base = (self.plan.row_locations[t] if t in region.capacity
                        else self.plan.locations[t]).offset
                offsets.append(str(base + slot * region.row_bytes[t]))
            lines.append(f"{functions[key]}(ws, {', '.join(offsets)}); "
                         f"/* op {step.op}: rows {step.y0}..{step.y1 - 1} */")
        return "\n".join(lines)

    def _band_function(self, step, key: tuple[int, int, int, int],
                       bands_per_op: dict[int, int]) -> str:
        """A static function running one band shape of one op on operands at given offsets."""
        g = self.graph
        op = g.operators[step.op]
        k = bands_per_op.get(step.op, 0)
        bands_per_op[step.op] = k + 1
        self._op, self.symbol_suffix = op, f"_band{k}"
        self.band = RowBand(input_h=key[1], output_h=key[2], pad_top=key[3])
        self.views = {t: f"({CTYPES[g.tensors[t].dtype]} *)(ws + at{j})"
                      for j, (t, _) in enumerate(step.slots)}
        try:
            code = self.lowerings[step.op].emit(op, g, self).strip()
            name = self.symbol("rows")
        finally:
            self._op, self.symbol_suffix, self.band, self.views = None, "", None, {}
        function = f"{self.prefix}_{name}"
        params = ", ".join(f"uint32_t at{j}" for j in range(len(step.slots)))
        if not self._band_macro:
            # Kept out of line: inlined, the region's many calls would cost their full argument
            # lists each (kilobytes of code).
            self._band_macro = True
            self.static("\n".join([
                "#if defined(__GNUC__) || defined(__clang__)",
                "#define MB_BAND_FUNCTION static __attribute__((noinline)) void",
                "#else",
                "#define MB_BAND_FUNCTION static void",
                "#endif"]))
        self.static("\n".join(
            [f"/* op {step.op}: {key[2]} output row(s) from {key[1]} input row(s), "
             f"{key[3]} of padding above */",
             f"MB_BAND_FUNCTION {function}(uint8_t *const ws, {params})", "{"]
            + [f"    {line}" if line.strip() else "" for line in code.splitlines()] + ["}"]))
        return function

    def _signature(self, inputs: list[TensorSpec], outputs: list[TensorSpec]) -> str:
        params = [f"const {CTYPES[s.dtype]} *in{k}" for k, s in enumerate(inputs)]
        params += [f"{CTYPES[s.dtype]} *out{k}" for k, s in enumerate(outputs)]
        params.append("void *workspace")
        if self.plan.state_bytes:
            params.append("void *state")
        return f"int {self.prefix}_run({', '.join(params)})"

    def _run_op_signature(self) -> str:
        state = ", void *state" if self.plan.state_bytes else ""
        return f"int {self.prefix}_run_op(uint32_t index, void *workspace{state})"

    def _header(self, inputs: list[TensorSpec], outputs: list[TensorSpec], signature: str) -> str:
        P = self.PREFIX
        guard = f"MICROBUILD_MODEL_{P}_H"
        lines = [
            f"/* {self.prefix}: generated by microbuild from {self._source_name()}; do not edit. */",
            f"#ifndef {guard}",
            f"#define {guard}",
            "",
            "#include <stdint.h>",
            "",
            "#ifdef __cplusplus",
            'extern "C" {',
            "#endif",
            "",
            f"#define {P}_NUM_INPUTS {len(inputs)}",
            f"#define {P}_NUM_OUTPUTS {len(outputs)}",
            "/* Bytes of memory to pass as `workspace` (16-byte aligned). It holds every tensor,",
            " * the inputs and outputs included, at the offsets below: write an input straight to",
            " * its slot (see _input0()) and pass that pointer as in0, and read outputs from theirs,",
            " * to need no other buffers. Other pointers work too and cost one copy each. The run",
            " * overwrites the input slots. */",
            f"#define {P}_WORKSPACE_SIZE {self.plan.workspace_bytes}",
            f"#define {P}_WORKSPACE_ALIGN 16",
        ]
        if self.plan.regions:
            lines += [
                "/* The workspace is split across memory regions (the board lists several for it",
                f" * and it does not fit the first, {self.plan.regions[0][0]}): WORKSPACE_SIZE is the",
                " * part passed as `workspace`; the other parts are this model's own arrays, placed",
                " * in their regions by the linker script (defined in the model's .c file). */",
            ]
            for name, size in self.plan.regions[1:]:
                lines += [f"#define {P}_WORKSPACE_{name.upper()}_SIZE {size}",
                          f"extern uint8_t {part_symbol(self.prefix, name)}[];"]
        for kind, specs in (("INPUT", inputs), ("OUTPUT", outputs)):
            for k, s in enumerate(specs):
                m = f"{P}_{kind}{k}"
                quant = ("not quantized" if s.scale == 0.0 else
                         "real = SCALE * (q - ZERO_POINT)")
                lines += [
                    "",
                    f"/* {kind.lower()} {k}: tensor {s.tensor} '{_comment(s.name)}', {quant} */",
                    f"#define {m}_RANK {len(s.shape)}",
                    f"#define {m}_SHAPE {{{', '.join(str(d) for d in s.shape) or '1'}}}",
                    f"#define {m}_SIZE {int(np.prod(s.shape, dtype=np.int64))}",
                    f"#define {m}_BYTES {s.bytes}",
                    f"#define {m}_TYPE {CTYPES[s.dtype]}",
                    f'#define {m}_DTYPE "{s.dtype}"',
                    f"#define {m}_SCALE {_float_literal(s.scale)}",
                    f"#define {m}_ZERO_POINT {s.zero_point}",
                    f"#define {m}_OFFSET {self.plan.locations[s.tensor].offset}",
                ]
        lines += ["", "/* The slots of the inputs and outputs inside a workspace. */"]
        for kind, specs in (("input", inputs), ("output", outputs)):
            for k, s in enumerate(specs):
                ctype = CTYPES[s.dtype]
                lines.append(f"static inline {ctype} *{self.prefix}_{kind}{k}(void *workspace) "
                             f"{{ return ({ctype} *)((uint8_t *)workspace + {P}_{kind.upper()}{k}_OFFSET); }}")
        if self.plan.state_bytes:
            lines += [
                "",
                "/* State kept between invocations (the model's variable tensors: recurrent state,",
                " * streaming buffers): STATE_SIZE bytes the application keeps for as long as the",
                f" * stream lasts and passes to every run. {self.prefix}_reset() sets it to the model's",
                " * start (as TFLM's ResetVariableTensors); call it once before the first run and",
                " * whenever a new stream begins. */",
                f"#define {P}_STATE_SIZE {self.plan.state_bytes}",
                f"#define {P}_STATE_ALIGN 16",
                f"void {self.prefix}_reset(void *state);",
            ]
        lines += [
            "",
            "/* Run the model once. Returns 0 on success, -1 if the workspace is missing, -2 if an",
            " * index read at run time is out of range (GATHER; TFLM fails the invoke there too). */",
            f"{signature};",
            "",
            f"/* Operators, for a host that drives the model one operator at a time (the RPC",
            f" * executor): {P}_NUM_OPS of them; operator i reads and writes the same workspace slots",
            f" * as in {self.prefix}_run, so running 0..{P}_NUM_OPS-1 after writing the inputs to their",
            " * slots leaves the outputs in theirs. Returns as run() does, or -1 for an operator index",
            " * out of range. A",
            " * firmware that never calls it loses it to --gc-sections. */",
            f"#define {P}_NUM_OPS {len(self.op_bodies)}",
            f"{self._run_op_signature()};",
            "",
            "#ifdef __cplusplus",
            "}",
            "#endif",
            "",
            f"#endif /* {guard} */",
            "",
        ]
        return "\n".join(lines)

    def _model_c(self, headers: list[str], body: list[str], signature: str,
                 inputs: list[TensorSpec], outputs: list[TensorSpec]) -> str:
        lines = [
            f"/* {self.prefix}: generated by microbuild from {self._source_name()}; do not edit. */",
            "#include <stddef.h>",
            "#include <stdint.h>",
            "#include <string.h>",
            "",
            f'#include "{self.prefix}.h"',
        ]
        lines += [f'#include "{h}"' for h in headers]
        if self.arrays:
            lines += ["", f"/* Constant data, defined in {self.prefix}_weights.c. */"]
            lines += [f"extern const {ctype} {symbol}[{max(1, values.size)}];"
                      for symbol, ctype, values, _ in self.arrays]
        if self.plan.regions:
            lines += [
                "",
                "/* The parts of the workspace in other memory regions than the caller's (a",
                " * workspace split across regions): never cleared, in sections the generated",
                " * linker script places in each region. Define MB_WORKSPACE_PART_SECTION to place",
                " * them differently. */",
                "#ifndef MB_WORKSPACE_PART_SECTION",
                '#define MB_WORKSPACE_PART_SECTION(region) ".bss.mb_workspace_" region "."',
                "#endif",
            ]
            for name, size in self.plan.regions[1:]:
                lines += [f"uint8_t {part_symbol(self.prefix, name)}[{max(size, 1)}]",
                          f"    __attribute__((aligned(16), section(MB_WORKSPACE_PART_SECTION("
                          f'"{name}") "{self.prefix}")));']
        if self.statics:
            lines += ["", "/* Operator parameters, computed at compile time. */"]
            lines += self.statics
        lines += ["", signature, "{"]
        unused = [f"in{k}" for k in range(len(inputs))] + [f"out{k}" for k in range(len(outputs))]
        lines.append("    uint8_t *const ws = (uint8_t *)workspace;")
        if self.plan.state_bytes:
            lines.append("    uint8_t *const st = (uint8_t *)state;")
            unused.append("st")
        # Not every model touches every pointer (e.g. an input only copied); keep -Wextra quiet.
        lines.append("    " + " ".join(f"(void){name};" for name in unused + ["ws"]))
        if self.plan.workspace_bytes > 0:
            lines += ["    if (workspace == NULL) {", "        return -1;", "    }"]
        if self.plan.state_bytes:
            lines += ["    if (state == NULL) {", "        return -1;", "    }"]
        lines += body
        lines += ["    return 0;", "}", ""]
        lines += [self._run_op_signature(), "{",
                  "    uint8_t *const ws = (uint8_t *)workspace;",
                  "    (void)ws;"]
        if self.plan.state_bytes:
            lines += ["    uint8_t *const st = (uint8_t *)state;", "    (void)st;"]
        lines += ["    switch (index) {"]
        for k, (comment, op_lines) in enumerate(self.op_bodies):
            lines += [f"    case {k}u: {{ /* {comment} */"]
            lines += [f"    {line}" if line else "" for line in op_lines]
            lines += ["        return 0;", "    }"]
        lines += ["    default:", "        return -1;", "    }", "}", ""]
        if self.plan.state_bytes:
            lines += [f"void {self.prefix}_reset(void *state)", "{",
                      "    uint8_t *const st = (uint8_t *)state;"]
            for t, loc in sorted(self.plan.state_locations.items()):
                tensor = self.graph.tensors[t]
                if t in self._initial_symbols:
                    lines.append(f"    memcpy(st + {loc.offset}, {self._initial_symbols[t]}, "
                                 f"{tensor.nbytes}); /* tensor {t} '{_comment(tensor.name)}' */")
                    continue
                lines.append(f"    memset(st + {loc.offset}, {reset_fill(tensor)}, "
                             f"{tensor.nbytes}); /* tensor {t} '{_comment(tensor.name)}' */")
            lines += ["}", ""]
        return "\n".join(lines)

    def _weights_c(self) -> str:
        lines = [
            f"/* {self.prefix}: constant data generated by microbuild from {self._source_name()};",
            " * do not edit. Define MB_WEIGHTS_ATTR (e.g. empty) to place the arrays differently. */",
            "#include <stdint.h>",
            "",
            "#ifndef MB_WEIGHTS_ATTR",
            "#if defined(__GNUC__) || defined(__clang__)",
            '#define MB_WEIGHTS_ATTR __attribute__((aligned(16), section(".mb_weights")))',
            "#else",
            "#define MB_WEIGHTS_ATTR",
            "#endif",
            "#endif",
        ]
        if not self.arrays:
            # ISO C wants at least one declaration per translation unit.
            lines += ["", f"typedef int {self.prefix}_has_no_weights;"]
        for symbol, ctype, values, comment in self.arrays:
            flat = values.reshape(-1)
            lines += ["", f"/* {_comment(comment)} */",
                      f"extern const {ctype} {symbol}[{max(1, flat.size)}];",
                      f"const {ctype} {symbol}[{max(1, flat.size)}] MB_WEIGHTS_ATTR = {{"]
            lines += _array_body(flat, ctype)
            lines.append("};")
        lines.append("")
        return "\n".join(lines)

    def _source_name(self) -> str:
        return _comment(Path(self.graph.source).name if self.graph.source else "a graph")


def _comment(text: str) -> str:
    """Safe inside a C block comment."""
    return text.replace("*/", "* /").replace("/*", "/ *")


def _float_literal(v: float) -> str:
    # %.9e round-trips every float32 exactly and always has an exponent, so the f suffix is legal.
    if not np.isfinite(v):
        raise ModelError(f"a non-finite float constant ({v}) cannot be compiled")
    return f"{np.float32(v):.9e}f"


def _int_literal(v: int, ctype: str) -> str:
    if ctype == "int32_t" and v == -(1 << 31):
        return "(-2147483647 - 1)"  # 2147483648 alone is not an int32 literal
    if ctype in ("int64_t", "uint64_t"):
        return f"INT64_C({v})" if ctype == "int64_t" else f"UINT64_C({v})"
    return str(v)


def _array_body(values: np.ndarray, ctype: str) -> list[str]:
    if values.size == 0:
        return ["    0"]
    if ctype in ("float", "double"):
        items = [_float_literal(float(v)) if ctype == "float" else repr(float(v)) for v in values]
    else:
        items = [_int_literal(int(v), ctype) for v in values.tolist()]
    per_line = 16 if ctype in ("int8_t", "uint8_t") else 8
    return ["    " + ", ".join(items[i:i + per_line]) + ","
            for i in range(0, len(items), per_line)]


# What a generated <prefix>_weights.c declares (ModelEmitter._weights_c writes these lines): read
# back by the checks that count a model's arrays before or after the build.
_C_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
            "int64_t": 8, "uint64_t": 8, "float": 4, "double": 8}
_WEIGHTS_ARRAY = re.compile(r"^const (\w+) (\w+)\[(\d+)\] MB_WEIGHTS_ATTR", re.MULTILINE)


def weights_arrays(weights_c: str) -> dict[str, int]:
    """Symbol -> bytes of every weights array in a generated ``<prefix>_weights.c``."""
    return {name: int(count) * _C_SIZES.get(ctype, 4)
            for ctype, name, count in _WEIGHTS_ARRAY.findall(weights_c)}
