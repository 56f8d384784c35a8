"""The Helium (MVE-F) float32 variants: FULLY_CONNECTED and CONV_2D with each sum split over four
float lanes (``runtime/kernels/*_f32_mve.c``, ``microbuild/kernels/f32_mve.h``).

They are the one kind of variant that does not keep TFLM's bits: adding the products in four
partial sums changes the rounding, by a few ULPs of the sum. So they declare
``reorders_float_sums`` and are candidates only with ``--allow-float-reorder``
(microbuild/compiler/variants.py); `compile` and `build` then measure and report how far the
model's outputs move from TFLM's (microbuild/tuning/float_reorder.py).
"""

from __future__ import annotations

from microbuild.compiler.variants import KernelVariant, Refusal
from microbuild.model.ir import Graph, Operator

HEADER = "microbuild/kernels/f32_mve.h"

FULLY_CONNECTED = KernelVariant(
    opcode="FULLY_CONNECTED", name="mve_f32", function="mb_fully_connected_f32_mve",
    sources=("fully_connected_f32_mve.c",), features=frozenset({"mve"}), rank=40,
    activation_dtype="float32", reorders_float_sums=True,
    description="Helium float: VFMA over 4 float lanes, 4 output rows per pass; the lanes' "
                "partial sums reorder each sum (not bit-exact with TFLM; only with "
                "--allow-float-reorder)")

def _four_channels_per_tap(op: Operator, graph: Graph) -> bool:
    """A filter with at least 4 input channels per tap (conv2d_f32_mve.c vectorises over them:
    with fewer, lanes sit idle and the exact kernel is faster, benchmarks/float_m55_reorder.py)."""
    filter_c = graph.tensors[op.inputs[1]].shape[3]
    if filter_c < 4:
        return Refusal(f"{filter_c} input channels per filter tap: its 4 float lanes would sit "
                       "partly idle, slower than the exact kernel")
    return True


CONV_2D = KernelVariant(
    opcode="CONV_2D", name="mve_f32", function="mb_conv2d_f32_mve",
    sources=("conv2d_f32_mve.c",), features=frozenset({"mve"}), rank=40,
    activation_dtype="float32", reorders_float_sums=True, accepts=_four_channels_per_tap,
    description="Helium float: VFMA over 4 input channels per tap in float lanes, 4 output "
                "channels at a time; the lanes' partial sums reorder each sum (not bit-exact "
                "with TFLM; only with --allow-float-reorder)")


def kernel_call(ctx, function: str, args: list[str]) -> str:
    """The call to the exact float kernel ``function``, or to the variant chosen for the op
    (``ctx.variant``): its function with the same arguments and a NULL scratch pointer."""
    variant = getattr(ctx, "variant", None)
    if variant is None:
        return f"{function}({', '.join(args)});"
    return f"{variant.function}({', '.join(args)}, (void *)0);"
