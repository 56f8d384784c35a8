"""CONV_2D+ADD: a CONV_2D whose output is read only by one same-shape ADD, fused by
:mod:`microbuild.compiler.fusion` (residual blocks).

The conv and the ADD keep their own lowerings' parameters: the call is Conv2D's, with ADD's
parameters (``add_params``, with the conv value as input 1) in a residual epilogue. The output may overwrite x, the last input: the kernel reads x[i] once, right before it
writes output i, and the conv reads only its own input.
"""

from __future__ import annotations

from microbuild.compiler.elementwise import c_designated, fused_activation
from microbuild.compiler.fusion import FUSED_CONV_ADD
from microbuild.compiler.ops.add import Add, add_params
from microbuild.compiler.ops.base import EmitContext, OpLowering, register
from microbuild.compiler.ops.conv2d import Conv2D
from microbuild.model.ir import Graph, Operator

_CONV = Conv2D()
_ADD = Add()


@register
class Conv2DAdd(OpLowering):
    opcode = FUSED_CONV_ADD
    kernel_sources = Conv2D.kernel_sources
    headers = Conv2D.headers
    variants = Conv2D.variants  # the conv kernel runs the fused ADD as its epilogue

    def kernel_op(self, op: Operator) -> Operator:
        return op.options["conv"]

    def check(self, op: Operator, graph: Graph) -> list[str]:
        conv, add = op.options["conv"], op.options["add"]
        return _CONV.check(conv, graph) + _ADD.check(add, graph)

    def emit(self, op: Operator, graph: Graph, ctx: EmitContext) -> str:
        conv, add = op.options["conv"], op.options["add"]
        z = graph.tensor(conv.outputs[0])
        x_index = op.inputs[-1]
        x = graph.tensor(x_index)
        out = graph.tensor(op.outputs[0])
        # z as input 1 whichever side of the ADD it was on: each input's multiplier depends only
        # on its own scale and the larger of the two, and the rescaled inputs are summed.
        p = add_params(z.scale, z.zero_point, x.scale, x.zero_point, out.scale, out.zero_point,
                       fused_activation(add))
        add_symbol = ctx.symbol("add")
        ctx.static(f"static const mb_add_s8_params {add_symbol} = {c_designated(p)};")
        call = _CONV.emit_call(conv, graph, ctx, "&residual", ctx.ptr(op.outputs[0]))
        return "\n".join([
            "{",
            f"    const mb_residual_add_s8 residual = {{&{add_symbol}, {ctx.ptr(x_index)}}};",
            f"    {call}",
            "}",
        ])

    def in_place_input(self, op: Operator, graph: Graph) -> int | None:
        x = op.inputs[-1]
        if x in op.inputs[:-1] or graph.tensor(x).nbytes != graph.tensor(op.outputs[0]).nbytes:
            return None
        return len(op.inputs) - 1
