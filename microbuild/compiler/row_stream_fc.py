"""A FULLY_CONNECTED consuming a row-streamed producer: the last op of a row-streamed region.

micro_speech's CONV_2D writes a 25x20x8 tensor that its FULLY_CONNECTED reads whole as one
4,000-deep row: op by op that tensor is alive next to the conv's input at the model's peak. Yet
each output of the FULLY_CONNECTED is an int32 sum over the input's columns, and the producer's
output rows ``[y0, y1)`` are the columns ``[y0 * row_bytes, y1 * row_bytes)``: the sums can grow
band by band as the rows come, and be requantized once after the last band. The sums are exact
integers, so the result is the op-by-op one bit for bit, while the producer's output only ever
exists a few rows at a time in a row buffer (row_stream.py).

To row_stream.py such an op is one more row mapping: output "row" ``y`` reads the input's band
``y``, rows ``[y * band, (y + 1) * band)`` (filter height and stride ``band``, no padding;
band_rows() sets the height), its output tensor is written whole by the band ending
at the last row, and the region keeps ``4 * output_depth`` bytes of partial sums alive across
its calls (``RowGeometry.sums_bytes``; the planner gives them a place). It ends a region: its
output has no rows for another op to stream on.

Every int8 variant the op may have chosen (reference, rows4, dsp, dsp_wide, mve) is replaced in
the region by one band kernel, ``mb_fully_connected_s8_band`` (runtime/kernels/
fully_connected_band.c), whose inner product is Helium's, the Arm DSP's or portable C, as the
target compiles; it reads the weights in the model's layout, so a band may start at any column.
"""

from __future__ import annotations

from microbuild.compiler.ops.fully_connected import emit_params_s8
from microbuild.compiler.row_stream import Call, RowGeometry, RowRegion
from microbuild.model.ir import Graph, Operator

OPCODE = "FULLY_CONNECTED"
# The op's variants the band kernel stands in for (None: the reference kernel): every int8 one.
_REPLACED_VARIANTS = (None, "rows4", "dsp", "dsp_wide", "mve")
# Bands of fewer input bytes cost more in per-call work than they save: every band is a call of
# the producer's kernel (its setup: requantization tables, border bookkeeping) and of the band
# kernel. micro_speech (25 rows of 160 bytes) with 1-row bands needs 2,704 bytes on mps2-an500
# but 4 % more instructions than op by op; 5-row bands need 3,344 bytes (0.49x TFLM's arena).
BAND_MIN_BYTES = 640


def geometry(op: Operator, graph: Graph, variant_name: str | None) -> RowGeometry | None:
    """The op's row mapping onto its 4-D int8 input of one image, or None when the band kernel
    cannot run it (int16 or float32, several batches, weights computed at run time...)."""
    if op.opcode != OPCODE or variant_name not in _REPLACED_VARIANTS:
        return None
    if len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0 or len(op.outputs) != 1:
        return None
    x, w, y = graph.tensor(op.inputs[0]), graph.tensor(op.inputs[1]), graph.tensor(op.outputs[0])
    if x.dtype != "int8" or y.dtype != "int8" or len(x.shape) != 4 or x.shape[0] != 1:
        return None
    if w.data is None or len(w.shape) != 2 or int(w.shape[1]) != x.num_elements:
        return None  # one batch: the whole input is the one row of depth input_depth
    rows = int(x.shape[1])
    band = band_rows(rows, x.nbytes // rows)
    return RowGeometry(op=op.index, x=op.inputs[0], residual=None, out=op.outputs[0],
                       in_h=rows, out_h=-(-rows // band), stride=band, pad_top=0,
                       filter_h=band, sums_bytes=4 * int(w.shape[0]))


def band_rows(rows: int, row_bytes: int) -> int:
    """Input rows per band call: the input cut into equal bands of at least BAND_MIN_BYTES
    (the last band may be shorter)."""
    bands = max(1, rows * row_bytes // BAND_MIN_BYTES)
    return -(-rows // min(bands, rows))


def band_call(ctx, region: RowRegion, step: Call, offsets: dict[int, int], sums_offset: int,
              constants: dict[int, tuple[str, str]]) -> str:
    """The C call of one band of the op: ``offsets`` the workspace offset of each operand's
    first row in the call (input band, output), ``sums_offset`` where the partial sums are,
    ``constants`` the op's (params, bias) symbols once emitted (filled on first use)."""
    graph = ctx.graph
    op = graph.operators[step.op]
    g = region.geometry[step.op]
    if step.op not in constants:
        constants[step.op] = emit_params_s8(op, graph, ctx, dsp_table=False)
    params, bias = constants[step.op]
    row = region.row_bytes[g.x]
    weights = ctx.ptr(op.inputs[1])
    return (f"mb_fully_connected_s8_band(&{params}, (const int8_t *)(ws + {offsets[g.x]}), "
            f"{weights}, {step.v0 * row}, {(step.v1 - step.v0) * row}, "
            f"(int32_t *)(ws + {sums_offset}), {bias}, (int8_t *)(ws + {offsets[g.out]})); "
            f"/* op {step.op}: input rows {step.v0}..{step.v1 - 1} */")
