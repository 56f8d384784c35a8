"""A chain whose first layers stream row by row with awkward row geometry
(microbuild/compiler/row_stream.py): a 1x1 stride-2 convolution that never reads the odd rows of
its input (they are still written, and need a slot in the row buffer), an even 4x4 stride-2
filter (one padding row above, two below) and a stride-2 depthwise convolution on an odd height.
The quantization is the overlap chain's trained-like one.

    .venv/bin/python tests/models/generate/ops_row_stream.py   (numpy and the tflite-micro wheel)
"""

from __future__ import annotations

from common import save
from ops_overlap_chain import _Chain


def row_stream_model() -> bytes:
    c = _Chain(4402, (21, 20, 3), 0.02, -9)
    c.conv(3, 16, activation=1)          # 21x20x3 -> 21x20x16
    c.conv(1, 16, stride=2)              # rows 0, 2, ..., 20 only -> 11x10x16
    c.conv(4, 16, stride=2, activation=3)  # 11x10 -> 6x5, SAME: 1 row of padding above, 2 below
    c.depthwise(stride=2)                # 6x5 -> 3x3
    c.pool("AVERAGE_POOL_2D", 3, 3)      # -> 1x1x16
    return c.build()


if __name__ == "__main__":
    save("ops/row_stream_odd_rows_pc.tflite", row_stream_model())
