"""How far below its input an operator's output may start and still overlap it.

A kernel that walks its output pixels in order (batch, row, column), reading for each only input
pixels at or after some point, never reads an input byte again once the walk has passed it. Its
output may then lie over the input, shifted down: writing output pixel ``p`` (at ``out + p *
out_pixel``) is safe when every byte it covers lies below the lowest input byte the kernel still
reads from then on. With the input at ``in`` and the output at ``in - D``, that is

    (p + 1) * out_pixel - D  <=  need(p)          for every output pixel p,

where ``need(p)`` is the offset (from the input's start) of the lowest input byte read while or
after pixel ``p`` is written. The smallest safe ``D`` is ``max_p ((p + 1) * out_pixel -
need(p))``: a pointwise convolution from 8 to 16 channels needs ``D`` = (output - input) bytes
plus one input pixel, a 3x3 "same" depthwise convolution one input row and two pixels. The
planner then lets the two buffers share all but ``D`` bytes (``microbuild/compiler/planner.py``).

Kernels that handle ``G`` output pixels at once (im2col + GEMM on 2 pixels) may write pixel ``p``
while still reading the first pixel of its group: ``need`` is taken at the group's first pixel.
A kernel whose outermost loop runs over blocks of channels (the DSP depthwise kernel) reads every
pixel again for each block, but only that block's channels: its writes are safe only where they
land on the same channels of an input pixel it has finished, so ``D`` must also be a whole number
of pixels (``Overlap.pixel_bytes``).

The lowerings of streaming operators (CONV_2D, DEPTHWISE_CONV_2D, pooling) report an
:class:`Overlap` for their input 0 through ``OpLowering.overlap``; whether the chosen kernel
variant streams is the variant's ``overlap_group``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from microbuild.compiler.spatial import window_2d


@dataclass(frozen=True)
class Overlap:
    """The output may overlap the input when it starts at least ``distance`` bytes below the
    input's start (and, when ``pixel_bytes`` is set, a whole number of those bytes below)."""

    distance: int
    pixel_bytes: int = 0

    def allows(self, gap: int) -> bool:
        """Whether an output starting ``gap`` bytes below the input (input offset minus output
        offset) may overlap it."""
        return gap >= self.distance and (self.pixel_bytes == 0 or gap % self.pixel_bytes == 0)


@dataclass(frozen=True)
class Window:
    """A sliding window over an NHWC tensor, as a streaming kernel walks it."""

    batches: int
    in_h: int
    in_w: int
    in_pixel: int  # bytes of one input pixel (channels x element size)
    out_h: int
    out_w: int
    out_pixel: int  # bytes of one output pixel
    stride_h: int = 1
    stride_w: int = 1
    pad_top: int = 0
    pad_left: int = 0


def need(window: Window) -> np.ndarray:
    """For every output pixel (flattened batch, row, column), the offset of the lowest input byte
    the kernel reads for it or for any later pixel: the window's top-left tap clipped into the
    image (a lower bound, so distances derived from it are safe)."""
    w = window
    oy = np.arange(w.out_h, dtype=np.int64)
    ox = np.arange(w.out_w, dtype=np.int64)
    rows = np.maximum(oy * w.stride_h - w.pad_top, 0)
    cols = np.maximum(ox * w.stride_w - w.pad_left, 0)
    image = (rows[:, None] * w.in_w + cols[None, :]).reshape(-1)
    batch = np.arange(w.batches, dtype=np.int64)[:, None] * (w.in_h * w.in_w)
    first = ((batch + image[None, :]).reshape(-1)) * w.in_pixel
    # Later pixels can start lower (rows clipped to 0 under top padding): take the suffix minimum.
    return np.minimum.accumulate(first[::-1])[::-1]


def window_distance(window: Window, group: int = 1) -> int:
    """The smallest D (bytes) for a kernel writing ``group`` output pixels per step."""
    lowest = need(window)
    pixels = lowest.size
    if pixels == 0:
        return 0
    index = np.arange(pixels, dtype=np.int64)
    at_write = lowest[(index // group) * group]
    return int(max(((index + 1) * window.out_pixel - at_write).max(), 0))


def sliding_window(op, graph, filter_h: int, filter_w: int) -> Window | None:
    """The Window a CONV_2D, DEPTHWISE_CONV_2D or pooling op's kernel walks from input 0 to its
    output; None when the shapes are not the NHWC pair the window geometry gives."""
    if not op.inputs or op.inputs[0] < 0:
        return None
    x, out = graph.tensor(op.inputs[0]), graph.tensor(op.outputs[0])
    if len(x.shape) != 4 or len(out.shape) != 4 or x.shape[0] != out.shape[0]:
        return None
    batches, in_h, in_w, in_c = (int(d) for d in x.shape)
    win = window_2d(op.options, in_h, in_w, filter_h, filter_w)
    if (win.out_h, win.out_w) != tuple(int(d) for d in out.shape[1:3]):
        return None
    in_pixel = x.nbytes // max(batches * in_h * in_w, 1)
    out_pixel = out.nbytes // max(batches * win.out_h * win.out_w, 1)
    return Window(batches, in_h, in_w, in_pixel, win.out_h, win.out_w, out_pixel,
                  int(op.options.get("stride_h", 1)), int(op.options.get("stride_w", 1)),
                  win.pad_top, win.pad_left)


def sliding_window_overlap(op, graph, k: int, filter_h: int, filter_w: int,
                           variant=None) -> Overlap | None:
    """The Overlap of a CONV_2D, DEPTHWISE_CONV_2D or pooling op's output over its input 0, for
    the reference kernel (``variant`` None: every reference kernel of these ops, and the exact
    float32 ones, walks output pixels in order, one at a time) or the given variant (its
    ``overlap_group``)."""
    if k != 0:
        return None
    group = 1 if variant is None else variant.overlap_group
    if group <= 0:
        return None
    window = sliding_window(op, graph, filter_h, filter_w)
    if window is None:
        return None
    distance = window_distance(window, group)
    if variant is not None and variant.overlap_whole_pixels:
        if window.in_pixel != window.out_pixel:
            return None
        return Overlap(-(-distance // window.in_pixel) * window.in_pixel, window.in_pixel)
    return Overlap(distance)


def pad_distance(input_shape, paddings, itemsize: int) -> int:
    """The smallest D for PAD's kernel, which walks the output in order and copies each input
    element (read, then written) where it lands: writing output element ``o`` is safe when it
    lands on input bytes already read, ``(o + 1) - read(o) <= D / itemsize`` with ``read(o)`` the
    input elements copied up to and including ``o``, for every ``o`` before the last read."""
    inside = np.pad(np.ones(tuple(int(d) for d in input_shape), dtype=np.int8),
                    [(int(b), int(a)) for b, a in paddings]).reshape(-1)
    if inside.size == 0:
        return 0
    read = np.cumsum(inside, dtype=np.int64)
    ahead = np.arange(1, inside.size + 1, dtype=np.int64) - read
    # Once the last input element is read, later writes (the trailing padding) are harmless.
    ahead = ahead[read < read[-1]]
    return int(max(ahead.max(), 0)) * itemsize if ahead.size else 0
