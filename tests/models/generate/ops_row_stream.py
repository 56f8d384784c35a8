"""A chain whose first layers stream row by row with awkward row geometry
(microbuild/compiler/row_stream.py): a 1x1 stride-2 convolution that never reads the odd rows of
its input (they are still written, and need a slot in the row buffer), an even 4x4 stride-2
filter (one padding row above, two below) and a stride-2 depthwise convolution on an odd height.
The quantization is the overlap chain's trained-like one.

A second chain ends in a FULLY_CONNECTED that reads its convolution's output whole, as
micro_speech's does (microbuild/compiler/row_stream_fc.py): its sums grow band by band. Its
rows are 65 bytes (bands start at unaligned columns, the 16-lane and 4-byte loops have tails)
and its 6 units are a group of 4 and 2 left over; per-channel weights, RELU.

    .venv/bin/python tests/models/generate/ops_row_stream.py   (numpy and the tflite-micro wheel)
"""

from __future__ import annotations

import numpy as np
from common import save
from ops_overlap_chain import _Chain, _calibrate


def row_stream_model() -> bytes:
    c = _Chain(4402, (21, 20, 3), 0.02, -9)
    c.conv(3, 16, activation=1)          # 21x20x3 -> 21x20x16
    c.conv(1, 16, stride=2)              # rows 0, 2, ..., 20 only -> 11x10x16
    c.conv(4, 16, stride=2, activation=3)  # 11x10 -> 6x5, SAME: 1 row of padding above, 2 below
    c.depthwise(stride=2)                # 6x5 -> 3x3
    c.pool("AVERAGE_POOL_2D", 3, 3)      # -> 1x1x16
    return c.build()


def _fully_connected(c: _Chain, units: int, activation: int) -> None:
    """The chain's 4-D output, flattened by the FULLY_CONNECTED itself (no RESHAPE)."""
    depth = int(np.prod(c.shape))
    q, scales, bias = c._weights((units, depth), units, {}, 0)
    real = c.real.reshape(len(c.real), depth) @ (q.astype(np.float64) * scales[:, None]).T
    real = real + bias * c.scale * scales
    if activation == 1:
        real = np.maximum(real, 0.0)
    scale, zp = _calibrate(real)
    w = c.b.constant("fc_weights", q, scale=scales, axis=0)
    b = c.b.constant("fc_bias", bias, scale=c.scale * scales, axis=0)
    y = c.b.tensor("fc_out", (1, units), "int8", scale, zp)
    c.b.operator("FULLY_CONNECTED", [c.x, w, b], [y], "FullyConnectedOptions",
                 fusedActivationFunction=activation)
    c.x = y


def conv_fc_model() -> bytes:
    c = _Chain(4403, (40, 10, 3), 0.02, -9)
    c.conv(3, 6, activation=1)            # 40x10x3 -> 40x10x6
    c.conv(3, 13, stride=2)               # -> 20x5x13: rows of 65 bytes, 1,300 in all
    _fully_connected(c, 6, activation=1)  # 1,300 -> 6
    return c.build()


def conv_fc_tall_model() -> bytes:
    """conv_fc_model's chain on a 4x taller input: the region saves enough workspace for its
    band calls that the planner's cost rule (row_stream.region_cost) keeps it at its default, as
    micro_speech's; the table executor's test carries the band kernel with it."""
    c = _Chain(4404, (160, 10, 3), 0.02, -9)
    c.conv(3, 6, activation=1)            # 160x10x3 -> 160x10x6
    c.conv(3, 13, stride=2)               # -> 80x5x13: rows of 65 bytes, 5,200 in all
    _fully_connected(c, 6, activation=1)  # 5,200 -> 6
    return c.build()


if __name__ == "__main__":
    save("ops/row_stream_odd_rows_pc.tflite", row_stream_model())
    save("ops/row_stream_conv_fc_pc.tflite", conv_fc_model())
    save("ops/row_stream_conv_fc_tall_pc.tflite", conv_fc_tall_model())
