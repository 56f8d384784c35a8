"""ADD_N on float32, bit-exact with TFLM's reference_ops::AddN: per element the sum from 0 of the
inputs in order (``mb_add_n_f32`` in runtime/kernels/arith_f32.c). TFLM also has an int8 ADD_N,
which microbuild does not compile yet."""

from __future__ import annotations

from microbuild.compiler.f32 import all_float32_reasons, arith as arith_f32
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.model.ir import Graph, Operator


@register
class AddN(OpLowering):
    opcode = "ADD_N"
    kernel_sources = arith_f32.KERNEL_SOURCES
    headers = (arith_f32.HEADER,)
    dtypes = frozenset({"float32"})
    dtype_notes = {"int8": "microbuild compiles TFLM's float32 ADD_N; its int8 kernel is not "
                           "done yet"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        if len(op.inputs) < 2 or min(op.inputs) < 0 or len(op.outputs) != 1:
            return [f"expects 2 or more inputs and 1 output (TFLM's ADD_N needs at least 2), "
                    f"has {op.inputs} and {op.outputs}"]
        found = all_float32_reasons(op, graph)
        out = graph.tensor(op.outputs[0])
        for k, t in enumerate(op.inputs):
            x = graph.tensor(t)
            if tuple(x.shape) != tuple(out.shape):
                found.append(f"input {k} '{x.name}' has shape {list(x.shape)}, the output "
                             f"{list(out.shape)}; TFLM's ADD_N needs them all equal")
        return found

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        inputs = ", ".join(ctx.ptr(t) for t in op.inputs)
        size = graph.tensor(op.outputs[0]).num_elements
        # A block: the input pointers may be workspace addresses known only at run time.
        return (f"{{ const float *const inputs[{len(op.inputs)}] = {{{inputs}}}; "
                f"mb_add_n_f32(inputs, {len(op.inputs)}, {ctx.ptr(op.outputs[0])}, {size}); }}")
