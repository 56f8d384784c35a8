"""VAR_HANDLE and CALL_ONCE: how a model declares its resource variables and initializes them
once. microbuild resolves both while reading the model (microbuild/model/reader.py): when the
CALL_ONCE subgraph assigns a constant to every variable, each variable becomes a variable tensor
with that constant as its initial value, READ_VARIABLE / ASSIGN_VARIABLE use it
(compiler/ops/variables.py) and these two operators are gone before compiling. They reach the
compiler only when that could not be done; then the refusal says why."""

from __future__ import annotations

from microbuild.compiler.ops.base import ANY_DTYPE, CompileTimeLowering, register
from microbuild.model.ir import Graph, Operator

_WHY = ("microbuild sets resource variables up while reading the model, when a CALL_ONCE "
        "initializer subgraph assigns a constant to every variable (what the converter makes of "
        "tf.Variable state); here an initializer computes its value, or a variable has none, "
        "which is not supported")


@register
class VarHandle(CompileTimeLowering):
    opcode = "VAR_HANDLE"
    dtypes = ANY_DTYPE | {"resource"}  # its output is the handle

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return [_WHY]


@register
class CallOnce(CompileTimeLowering):
    opcode = "CALL_ONCE"
    dtypes = ANY_DTYPE | {"resource"}

    def check(self, op: Operator, graph: Graph) -> list[str]:
        return [_WHY]
